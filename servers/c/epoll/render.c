/* Renders the answers of the database requests: the rows as JSON, the fortunes as HTML with a
 * small escaping function (C has no template engine; the page is the contract's, written with
 * the escaped messages in place). */
#define _GNU_SOURCE
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

struct fortune {
    const char *id, *message;
};

static const char ADDITIONAL[] = "Additional fortune added at request time.";
static const char PAGE_HEAD[] = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body>"
                                "<table><tr><th>id</th><th>message</th></tr>";
static const char PAGE_TAIL[] = "</table></body></html>";

static int grow(struct loop *l, size_t need)
{
    if (need <= l->scratch_cap)
        return 0;
    size_t cap = l->scratch_cap * 2 > need ? l->scratch_cap * 2 : need;
    char *s = realloc(l->scratch, cap);
    if (!s)
        return -1;
    l->scratch = s;
    l->scratch_cap = cap;
    return 0;
}

static char *put(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

static char *put_int(char *o, int32_t v)
{
    char tmp[12];
    int i = sizeof tmp;
    uint32_t u = v < 0 ? (uint32_t)-(int64_t)v : (uint32_t)v;
    do
        tmp[--i] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        tmp[--i] = '-';
    return put(o, tmp + i, sizeof tmp - (size_t)i);
}

static char *put_world(char *o, const struct world *w)
{
    o = put(o, "{\"id\":", 6);
    o = put_int(o, w->id);
    o = put(o, ",\"randomNumber\":", 16);
    o = put_int(o, w->number);
    return put(o, "}", 1);
}

/* HTML-escapes s into o (&, <, >, " and ' as entities). */
static char *put_escaped(char *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': o = put(o, "&amp;", 5); break;
        case '<': o = put(o, "&lt;", 4); break;
        case '>': o = put(o, "&gt;", 4); break;
        case '"': o = put(o, "&quot;", 6); break;
        case '\'': o = put(o, "&#39;", 5); break;
        default: *o++ = *s;
        }
    }
    return o;
}

/* Byte order of the UTF-8 strings (strcmp compares as unsigned char): code point order. */
static int by_message(const void *a, const void *b)
{
    return strcmp(((const struct fortune *)a)->message, ((const struct fortune *)b)->message);
}

static size_t render_fortunes(struct loop *l, PGresult *r)
{
    int n = PQntuples(r);
    struct fortune *f = malloc((size_t)(n + 1) * sizeof *f);
    if (!f)
        return 0;
    size_t need = sizeof PAGE_HEAD + sizeof PAGE_TAIL + sizeof ADDITIONAL + 64;
    for (int i = 0; i < n; i++) {
        f[i] = (struct fortune){PQgetvalue(r, i, 0), PQgetvalue(r, i, 1)};
        need += 32 + strlen(f[i].id) + 6 * strlen(f[i].message);
    }
    f[n] = (struct fortune){"0", ADDITIONAL};
    qsort(f, (size_t)n + 1, sizeof *f, by_message);
    if (grow(l, need) < 0) {
        free(f);
        return 0;
    }
    char *o = put(l->scratch, PAGE_HEAD, sizeof PAGE_HEAD - 1);
    for (int i = 0; i <= n; i++) {
        o = put(o, "<tr><td>", 8);
        o = put_escaped(o, f[i].id);
        o = put(o, "</td><td>", 9);
        o = put_escaped(o, f[i].message);
        o = put(o, "</td></tr>", 10);
    }
    o = put(o, PAGE_TAIL, sizeof PAGE_TAIL - 1);
    free(f);
    return (size_t)(o - l->scratch);
}

static size_t render_rows(struct loop *l, const struct dbjob *j)
{
    if (grow(l, (size_t)j->n * 40 + 2) < 0)
        return 0;
    char *o = l->scratch;
    if (j->route == R_DB)
        return (size_t)(put_world(o, &j->rows[0]) - o);
    *o++ = '[';
    for (int i = 0; i < j->n; i++) {
        if (i)
            *o++ = ',';
        o = put_world(o, &j->rows[i]);
    }
    *o++ = ']';
    return (size_t)(o - l->scratch);
}

size_t db_render(struct conn *c, const char **body)
{
    struct dbjob *j = &c->job;
    PGresult *f = j->fortunes;
    j->fortunes = NULL;
    size_t n = 0;
    if (!j->failed && !c->dead)
        n = j->route == R_FORTUNES ? (f ? render_fortunes(c->loop, f) : 0)
                                   : render_rows(c->loop, j);
    PQclear(f);
    *body = c->loop->scratch;
    return n;
}
