/* Minimal HTTP/1.x request parsing and the prebuilt responses of the serverbench contract. */
#define _GNU_SOURCE
#include "http.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char payload[PAYLOAD_LEN];
static int payload_fd = -1;
static struct response table[R_COUNT][MODE_COUNT];

struct route_def {
    int status;
    const char *reason;
    const char *type;
    const char *body; /* NULL: the payload */
};

static const struct route_def defs[R_COUNT] = {
    [R_HELLO] = {200, "OK", "text/plain", "Hello World!"},
    [R_HEY] = {200, "OK", "text/plain", "Hey!"},
    [R_HELL] = {200, "OK", "text/plain", "Hell!"},
    [R_ABOUT] = {200, "OK", "text/html", "<html><body>About page</body></html>"},
    [R_JSON] = {200, "OK", "application/json", ""},
    [R_PAYLOAD] = {200, "OK", "application/octet-stream", NULL},
    [R_PINGPONG] = {200, "OK", "application/octet-stream", NULL},
    [R_DB] = {200, "OK", "application/json", ""},
    [R_QUERIES] = {200, "OK", "application/json", ""},
    [R_FORTUNES] = {200, "OK", "text/html; charset=utf-8", ""},
    [R_UPDATES] = {200, "OK", "application/json", ""},
    [R_NOT_FOUND] = {404, "Not Found", "text/plain", "Not Found"},
    [R_SERVER_ERROR] = {500, "Internal Server Error", "text/plain", "Internal Server Error"},
    [R_BAD_REQUEST] = {400, "Bad Request", "text/plain", "Bad Request"},
    [R_TOO_LARGE] = {413, "Content Too Large", "text/plain", "Content Too Large"},
    [R_HEADERS_TOO_LARGE] = {431, "Request Header Fields Too Large", "text/plain",
                             "Request Header Fields Too Large"},
    [R_NOT_IMPLEMENTED] = {501, "Not Implemented", "text/plain", "Not Implemented"},
};

static const char *const mode_header[MODE_COUNT] = {
    [KEEP_11] = "",
    [KEEP_10] = "Connection: keep-alive\r\n",
    [CLOSE] = "Connection: close\r\n",
};

static size_t format_head(char *out, size_t cap, const struct route_def *d, size_t body_len,
                          enum conn_mode m)
{
    int n = snprintf(out, cap,
                     "HTTP/1.1 %d %s\r\nServer: c-epoll\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     d->status, d->reason, d->type, body_len, mode_header[m]);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/* The payload in a memfd, sealed against any change: sendfile then hands its page-cache pages
 * to the socket instead of copying 1 MiB from user memory per response. */
static int make_payload_fd(void)
{
    int fd = memfd_create("c-epoll-payload", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < PAYLOAD_LEN) {
        ssize_t n = write(fd, payload + done, PAYLOAD_LEN - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void http_init(void)
{
    for (size_t i = 0; i < PAYLOAD_LEN; i++)
        payload[i] = (char)('a' + i % 26);
    payload_fd = make_payload_fd();
    if (payload_fd < 0)
        perror("c/epoll: memfd for the payload (writing it from memory instead)");
    for (int r = 0; r < R_COUNT; r++) {
        const struct route_def *d = &defs[r];
        const char *body = d->body ? d->body : payload;
        size_t body_len = d->body ? strlen(d->body) : PAYLOAD_LEN;
        for (int m = 0; m < MODE_COUNT; m++) {
            char tmp[512];
            size_t n = format_head(tmp, sizeof tmp, d, body_len, (enum conn_mode)m);
            char *head = malloc(n + 1);
            if (!n || !head) {
                fprintf(stderr, "c/epoll: cannot build response %d\n", r);
                exit(1);
            }
            memcpy(head, tmp, n + 1);
            table[r][m] = (struct response){head, n, body, body_len};
        }
    }
}

const struct response *http_response(enum route r, enum conn_mode m)
{
    return &table[r][m];
}

const char *http_payload(void)
{
    return payload;
}

int http_payload_fd(void)
{
    return payload_fd;
}

size_t http_head(char *out, size_t cap, enum route r, size_t body_len, enum conn_mode m)
{
    return format_head(out, cap, &defs[r], body_len, m);
}

size_t http_json(char *out, size_t cap, enum conn_mode m, int head_only)
{
    char body[64];
    int blen = snprintf(body, sizeof body, "{\"message\":\"%s\"}", "Hello, World!");
    size_t hlen = format_head(out, cap, &defs[R_JSON], (size_t)blen, m);
    if (!hlen || blen < 0 || (size_t)blen >= sizeof body)
        return 0;
    if (head_only)
        return hlen;
    if (hlen + (size_t)blen > cap)
        return 0;
    memcpy(out + hlen, body, (size_t)blen);
    return hlen + (size_t)blen;
}

/* Case-insensitive comparison of buf[0..n) with a lowercase literal. */
static int name_is(const char *buf, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    if (n != l)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)buf[i]) != lit[i])
            return 0;
    return 1;
}

/* Whether a comma-separated header value contains the (lowercase) token. */
static int has_token(const char *v, size_t n, const char *tok)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t start = i;
        while (i < n && v[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
            end--;
        if (name_is(v + start, end - start, tok))
            return 1;
    }
    return 0;
}

static enum route route_of(const char *path, size_t n)
{
    const char *q = memchr(path, '?', n);
    if (q)
        n = (size_t)(q - path);
#define ROUTE(lit, r) \
    if (n == sizeof(lit) - 1 && memcmp(path, lit, n) == 0) \
        return r;
    ROUTE("/hello", R_HELLO)
    ROUTE("/hey", R_HEY)
    ROUTE("/hell", R_HELL)
    ROUTE("/about", R_ABOUT)
    ROUTE("/json", R_JSON)
    ROUTE("/payload", R_PAYLOAD)
    ROUTE("/pingpong", R_PINGPONG)
    ROUTE("/db", R_DB)
    ROUTE("/queries", R_QUERIES)
    ROUTE("/fortunes", R_FORTUNES)
    ROUTE("/updates", R_UPDATES)
#undef ROUTE
    return R_NOT_FOUND;
}

/* The queries parameter of a target: missing, empty or not a number means 1; clamped to
 * 1..500. */
static int queries_of(const char *target, size_t n)
{
    const char *end = target + n, *p = memchr(target, '?', n);
    while (p && p < end) {
        p++;
        if ((size_t)(end - p) >= 8 && memcmp(p, "queries=", 8) == 0) {
            int v = 0, digits = 0;
            for (p += 8; p < end && *p != '&'; p++, digits++) {
                if (!isdigit((unsigned char)*p))
                    return 1;
                if (v <= 500)
                    v = v * 10 + (*p - '0');
            }
            return !digits || v < 1 ? 1 : v > 500 ? 500 : v;
        }
        p = memchr(p, '&', (size_t)(end - p));
    }
    return 1;
}

static enum parse_result fail(struct request *req, enum route r, size_t len)
{
    req->route = r;
    req->mode = CLOSE;
    req->head_only = 0;
    req->consumed = len;
    return PARSE_ERROR;
}

struct headers {
    int close, keep_alive, chunked, bad;
    size_t content_length;
};

/* Reads the header lines in [p, stop): stop is just past the last line's CRLF. */
static void read_headers(const char *p, const char *stop, struct headers *h)
{
    while (p < stop) {
        const char *eol = memchr(p, '\r', (size_t)(stop - p));
        const char *colon = eol ? memchr(p, ':', (size_t)(eol - p)) : NULL;
        if (!colon) {
            h->bad = 1;
            return;
        }
        const char *v = colon + 1;
        while (v < eol && (*v == ' ' || *v == '\t'))
            v++;
        size_t name_len = (size_t)(colon - p), vlen = (size_t)(eol - v);
        if (name_is(p, name_len, "connection")) {
            h->close |= has_token(v, vlen, "close");
            h->keep_alive |= has_token(v, vlen, "keep-alive");
        } else if (name_is(p, name_len, "content-length")) {
            size_t cl = 0, i = 0;
            for (; i < vlen && isdigit((unsigned char)v[i]); i++) {
                if (cl > MAX_BODY)
                    break;
                cl = cl * 10 + (size_t)(v[i] - '0');
            }
            if (i == 0)
                h->bad = 1;
            h->content_length = cl;
        } else if (name_is(p, name_len, "transfer-encoding")) {
            h->chunked = 1;
        }
        p = eol + 2;
    }
}

enum parse_result http_parse(const char *buf, size_t len, struct request *req)
{
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end) {
        req->consumed = 0;
        return len > MAX_HEAD ? fail(req, R_HEADERS_TOO_LARGE, len) : PARSE_INCOMPLETE;
    }
    size_t head_len = (size_t)(end - buf) + 4;
    const char *line_end = memchr(buf, '\r', head_len);
    const char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
    const char *target = sp1 ? sp1 + 1 : NULL;
    const char *sp2 = target ? memchr(target, ' ', (size_t)(line_end - target)) : NULL;
    if (!sp2 || line_end - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        !isdigit((unsigned char)sp2[8]))
        return fail(req, R_BAD_REQUEST, len);
    int minor = sp2[8] - '0';

    struct headers h = {0};
    read_headers(line_end + 2, end + 2, &h);
    if (h.bad)
        return fail(req, R_BAD_REQUEST, len);
    if (h.chunked)
        return fail(req, R_NOT_IMPLEMENTED, len);
    if (h.content_length > MAX_BODY)
        return fail(req, R_TOO_LARGE, len);
    size_t total = head_len + h.content_length;
    if (len < total) {
        req->consumed = total;
        return PARSE_INCOMPLETE;
    }
    req->route = route_of(target, (size_t)(sp2 - target));
    if (req->route == R_QUERIES || req->route == R_UPDATES)
        req->queries = queries_of(target, (size_t)(sp2 - target));
    req->head_only = sp1 - buf == 4 && memcmp(buf, "HEAD", 4) == 0;
    if (minor >= 1)
        req->mode = h.close ? CLOSE : KEEP_11;
    else
        req->mode = h.keep_alive && !h.close ? KEEP_10 : CLOSE;
    req->consumed = total;
    return PARSE_OK;
}
