/* The database workloads on libpq's asynchronous API in pipeline mode, on the I/O thread's own
 * epoll set: each thread owns DATABASE_POOL / WORKERS connections (at least one), each with its
 * socket in the thread's epoll set. A request's statements go to the connection with the fewest
 * in flight, each statement followed by its own Sync (so each is its own implicit transaction,
 * as the contract asks of pipelining); requests that find every pipeline full wait in a queue.
 * Statements are prepared once per connection at start; ids go out in binary, rows come back in
 * binary. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>

#include "db.h"

#define RING 1024 /* statements in flight per connection */
#define WORLD_ROWS 10000
#define MAX_QUERIES 500
#define OP_FORTUNES (-1)
#define OP_UPDATE (-2)
#define INT4OID 23
#define INT4ARRAYOID 1007

static const char SQL_WORLD[] = "SELECT id, randomnumber FROM world WHERE id = $1";
static const char SQL_FORTUNE[] = "SELECT id, message FROM fortune";
/* One batched UPDATE per request: the ids (sorted, distinct) and their numbers as two arrays. */
static const char SQL_UPDATE[] = "UPDATE world SET randomnumber = v.r FROM (SELECT "
                                 "unnest($1::integer[]) AS id, unnest($2::integer[]) AS r) AS v "
                                 "WHERE world.id = v.id";

/* A statement in flight: whose, and which row (or OP_FORTUNES, OP_UPDATE). */
struct op {
    struct conn *c;
    int idx;
};

struct pgc {
    struct handle h; /* first member */
    struct loop *loop;
    PGconn *pg;
    uint32_t events;
    int dead;
    struct op ring[RING];
    unsigned head, count, reserved; /* reserved: slots kept for the UPDATEs still to come */
    int phase; /* of the head op: 0 its result, 1 the NULL after it, 2 its Sync */
};

static int enabled;
static const char *db_url;
static __thread uint64_t rng;
static __thread int dead_count;  /* this thread's lost connections, reopened by revive() */
static __thread time_t last_revive;
static __thread int breaking; /* broken() is failing requests: no revive() meanwhile */

int db_enabled(void)
{
    return enabled;
}

/* splitmix64, seeded per thread from getrandom; uniform in 1..10,000 by multiply-shift. */
static int32_t random_id(void)
{
    if (!rng) {
        if (getrandom(&rng, sizeof rng, 0) != sizeof rng)
            rng = (uint64_t)(uintptr_t)&rng;
        rng |= 1;
    }
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (int32_t)(((z >> 32) * WORLD_ROWS) >> 32) + 1;
}

static int prepare(PGconn *pg, const char *name, const char *sql, int nparams, const Oid *types)
{
    PGresult *r = PQprepare(pg, name, sql, nparams, types);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "c/epoll: database: preparing %s: %s", name, PQerrorMessage(pg));
    PQclear(r);
    return ok;
}

static PGconn *connect_one(const char *url)
{
    PGconn *pg = PQconnectdb(url);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "c/epoll: DATABASE_URL: %s", PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    const Oid int4[] = {INT4OID}, arrays[] = {INT4ARRAYOID, INT4ARRAYOID};
    if (!prepare(pg, "w", SQL_WORLD, 1, int4) || !prepare(pg, "f", SQL_FORTUNE, 0, NULL) ||
        !prepare(pg, "u", SQL_UPDATE, 2, arrays) || PQsetnonblocking(pg, 1) != 0 ||
        !PQenterPipelineMode(pg)) {
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

int db_open(struct loop *l, const char *url, int count)
{
    enabled = 1;
    db_url = url;
    l->pgcs = calloc((size_t)count, sizeof *l->pgcs);
    l->scratch_cap = 64 * 1024;
    l->scratch = malloc(l->scratch_cap);
    if (!l->pgcs || !l->scratch)
        return 0;
    for (int i = 0; i < count; i++) {
        PGconn *pg = connect_one(url);
        struct pgc *p = pg ? calloc(1, sizeof *p) : NULL;
        if (!p) {
            PQfinish(pg);
            continue;
        }
        *p = (struct pgc){.h = {K_PG, PQsocket(pg)}, .loop = l, .pg = pg, .events = EPOLLIN};
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, p->h.fd, &ev) < 0) {
            PQfinish(pg);
            free(p);
            continue;
        }
        l->pgcs[l->npgc++] = p;
    }
    return l->npgc;
}

/* ---- sending ---- */

static void broken(struct pgc *p);

static void push(struct pgc *p, struct conn *c, int idx)
{
    p->ring[(p->head + p->count++) % RING] = (struct op){c, idx};
    c->job.pending++;
}

static int send_select(struct pgc *p, struct conn *c, int idx)
{
    uint32_t id = htonl((uint32_t)random_id());
    const char *vals[] = {(const char *)&id};
    const int lens[] = {sizeof id}, fmts[] = {1};
    if (!PQsendQueryPrepared(p->pg, "w", 1, vals, lens, fmts, 1) || !PQpipelineSync(p->pg))
        return 0;
    push(p, c, idx);
    return 1;
}

static int send_fortunes(struct pgc *p, struct conn *c)
{
    if (!PQsendQueryPrepared(p->pg, "f", 0, NULL, NULL, NULL, 0) || !PQpipelineSync(p->pg))
        return 0;
    push(p, c, OP_FORTUNES);
    return 1;
}

static int by_id(const void *a, const void *b)
{
    const struct world *x = *(struct world *const *)a, *y = *(struct world *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Gives every row read a new number and sends the batched UPDATE: ids sorted (concurrent
 * requests lock rows in the same order) and distinct (an id read twice gets one number, so the
 * rows returned match the table). */
static int send_update(struct pgc *p, struct conn *c)
{
    struct dbjob *j = &c->job;
    struct world *sorted[MAX_QUERIES];
    for (int i = 0; i < j->n; i++)
        sorted[i] = &j->rows[i];
    qsort(sorted, (size_t)j->n, sizeof *sorted, by_id);
    char ids[MAX_QUERIES * 7 + 3], nums[MAX_QUERIES * 7 + 3];
    size_t il = 0, nl = 0;
    for (int i = 0; i < j->n; i++) {
        if (i > 0 && sorted[i]->id == sorted[i - 1]->id) {
            sorted[i]->number = sorted[i - 1]->number;
            continue;
        }
        sorted[i]->number = random_id();
        il += (size_t)sprintf(ids + il, "%c%d", il ? ',' : '{', sorted[i]->id);
        nl += (size_t)sprintf(nums + nl, "%c%d", nl ? ',' : '{', sorted[i]->number);
    }
    memcpy(ids + il, "}", 2);
    memcpy(nums + nl, "}", 2);
    const char *vals[] = {ids, nums};
    if (!PQsendQueryPrepared(p->pg, "u", 2, vals, NULL, NULL, 0) || !PQpipelineSync(p->pg))
        return 0;
    p->reserved--;
    push(p, c, OP_UPDATE);
    return 1;
}

static void flush(struct pgc *p)
{
    int f = PQflush(p->pg);
    if (f < 0) {
        broken(p);
        return;
    }
    uint32_t want = EPOLLIN | (f ? EPOLLOUT : 0);
    if (want != p->events) {
        struct epoll_event ev = {.events = want, .data.ptr = p};
        if (epoll_ctl(p->loop->epfd, EPOLL_CTL_MOD, p->h.fd, &ev) == 0)
            p->events = want;
    }
}

static unsigned need(const struct conn *c)
{
    const struct dbjob *j = &c->job;
    return j->route == R_FORTUNES ? 1 : (unsigned)j->n + (j->route == R_UPDATES);
}

/* The live connection with the fewest statements in flight that has room for c's request. */
static struct pgc *pick(struct loop *l, unsigned want)
{
    struct pgc *best = NULL;
    for (int i = 0; i < l->npgc; i++) {
        struct pgc *p = l->pgcs[i];
        if (p->dead || RING - p->count - p->reserved < want)
            continue;
        if (!best || p->count < best->count)
            best = p;
    }
    return best;
}

/* Sends c's statements on p. Returns -1 when the request failed at once (the caller answers
 * 500), 0 when it is in flight. */
static int start(struct pgc *p, struct conn *c)
{
    struct dbjob *j = &c->job;
    j->pending = 1; /* a guard: nothing answers the request while it is being sent */
    j->failed = j->writing = 0;
    int ok = 1;
    if (j->route == R_FORTUNES) {
        ok = send_fortunes(p, c);
    } else {
        for (int i = 0; ok && i < j->n; i++)
            ok = send_select(p, c, i);
        if (j->route == R_UPDATES)
            p->reserved++;
    }
    if (ok)
        flush(p);
    else
        broken(p);
    if (--j->pending == 0) {
        j->failed = 1;
        return -1;
    }
    return 0;
}

/* Reopens one lost connection of this thread, at most once a second: a blocking connect (a few
 * milliseconds on a local database) that only a thread with a lost connection ever makes. */
static void revive(struct loop *l)
{
    time_t now = time(NULL);
    if (breaking || now == last_revive)
        return;
    last_revive = now;
    for (int i = 0; i < l->npgc; i++) {
        struct pgc *p = l->pgcs[i];
        if (!p->dead)
            continue;
        PGconn *pg = connect_one(db_url);
        if (!pg)
            return;
        *p = (struct pgc){.h = {K_PG, PQsocket(pg)}, .loop = l, .pg = pg, .events = EPOLLIN};
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, p->h.fd, &ev) < 0) {
            PQfinish(pg);
            p->pg = NULL;
            p->dead = 1;
            return;
        }
        dead_count--;
        fprintf(stderr, "c/epoll: database connection reopened\n");
        return;
    }
}

int db_submit(struct conn *c)
{
    struct loop *l = c->loop;
    if (dead_count)
        revive(l);
    if (!c->job.rows && !(c->job.rows = malloc(MAX_QUERIES * sizeof *c->job.rows)))
        return -1;
    if (!l->db_wait) {
        struct pgc *p = pick(l, need(c));
        if (p)
            return start(p, c);
    }
    int live = 0;
    for (int i = 0; i < l->npgc; i++)
        live |= !l->pgcs[i]->dead;
    if (!live)
        return -1;
    c->next = NULL;
    if (l->db_wait_tail)
        l->db_wait_tail->next = c;
    else
        l->db_wait = c;
    l->db_wait_tail = c;
    return 0;
}

static void drain_wait(struct loop *l)
{
    while (l->db_wait) {
        struct conn *c = l->db_wait;
        struct pgc *p = pick(l, need(c));
        if (!p)
            return;
        l->db_wait = c->next;
        if (!l->db_wait)
            l->db_wait_tail = NULL;
        if (start(p, c) < 0)
            http_db_done(c);
    }
}

/* ---- receiving ---- */

static void op_done(struct pgc *p, struct op op, PGresult *r)
{
    struct dbjob *j = &op.c->job;
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (op.idx >= 0) {
        if (st == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 4 &&
            PQgetlength(r, 0, 1) == 4) {
            uint32_t id, number;
            memcpy(&id, PQgetvalue(r, 0, 0), 4);
            memcpy(&number, PQgetvalue(r, 0, 1), 4);
            j->rows[op.idx] = (struct world){(int32_t)ntohl(id), (int32_t)ntohl(number)};
        } else {
            j->failed = 1;
        }
    } else if (op.idx == OP_FORTUNES && st == PGRES_TUPLES_OK) {
        j->fortunes = r;
        r = NULL;
    } else if (op.idx == OP_FORTUNES || st != PGRES_COMMAND_OK) {
        j->failed = 1;
    }
    PQclear(r);
    if (--j->pending > 0)
        return;
    if (j->route == R_UPDATES && !j->writing) {
        j->writing = 1;
        if (!j->failed && !p->dead) {
            if (send_update(p, op.c)) {
                flush(p);
                return;
            }
            j->failed = 1;
            broken(p);
        }
        p->reserved--;
    }
    http_db_done(op.c);
}

/* Takes every complete result: per statement its result, a NULL, then its Sync. */
static void read_results(struct pgc *p)
{
    while (p->count > 0 && !p->dead && !PQisBusy(p->pg)) {
        PGresult *r = PQgetResult(p->pg);
        struct op op = p->ring[p->head];
        if (r && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            if (p->phase == 0) /* no result came for it */
                op_done(p, op, NULL);
            p->head = (p->head + 1) % RING;
            p->count--;
            p->phase = 0;
        } else if (!r) {
            if (p->phase != 1)
                return; /* nothing more for now */
            p->phase = 2;
        } else if (p->phase == 0) {
            p->phase = 1;
            op_done(p, op, r);
        } else {
            PQclear(r);
        }
    }
}

/* The connection is lost: every request with a statement on it fails (500). The socket leaves
 * the epoll set and the connection is closed before those requests are answered, and no
 * connection is reopened while they are (answering one may submit the next request). */
static void broken(struct pgc *p)
{
    if (p->dead)
        return;
    fprintf(stderr, "c/epoll: database connection lost: %s", PQerrorMessage(p->pg));
    p->dead = 1;
    dead_count++;
    epoll_ctl(p->loop->epfd, EPOLL_CTL_DEL, p->h.fd, NULL);
    if (p->count && p->phase != 0) { /* the head's answer is already in */
        p->head = (p->head + 1) % RING;
        p->count--;
    }
    struct op failed[RING];
    unsigned n = 0;
    for (; p->count; p->count--, p->head = (p->head + 1) % RING)
        failed[n++] = p->ring[p->head];
    PQfinish(p->pg);
    p->pg = NULL;
    breaking++;
    for (unsigned i = 0; i < n; i++) {
        struct dbjob *j = &failed[i].c->job;
        j->failed = 1;
        if (--j->pending == 0)
            http_db_done(failed[i].c);
    }
    breaking--;
}

void db_event(struct pgc *p, uint32_t events)
{
    if (p->dead)
        return;
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (!PQconsumeInput(p->pg)) {
            broken(p);
            drain_wait(p->loop);
            return;
        }
        read_results(p);
    }
    if (!p->dead)
        flush(p);
    drain_wait(p->loop);
}
