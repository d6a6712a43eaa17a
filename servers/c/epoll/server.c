/* serverbench c/epoll: HTTP/1.1 and TCP echo on epoll, one I/O thread per WORKERS, each with
 * its own SO_REUSEPORT listeners. Level-triggered; every readable event parses all complete
 * requests in the buffer and answers them with one gathered write (sendmsg), the 1 MiB bodies
 * with sendfile from a memfd. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "db.h"
#include "server.h"

#define RBUF_INIT ((size_t)16 * 1024)
#define RBUF_MAX (MAX_HEAD + MAX_BODY + 4096)
#define ECHO_BUF ((size_t)64 * 1024)
#define ECHO_ROUNDS 8 /* buffers echoed per event before yielding to other connections */
#define WBUF_INIT ((size_t)16 * 1024)
#define MAX_PENDING ((size_t)8 << 20) /* stop parsing above this much queued output */
#define BIG_BODY ((size_t)16 * 1024)  /* bodies at least this big are written from place */

void die(const char *what)
{
    perror(what);
    exit(1);
}

static void set_interest(struct conn *c, uint32_t want)
{
    if (c->events == want)
        return;
    struct epoll_event ev = {.events = want, .data.ptr = c};
    if (epoll_ctl(c->loop->epfd, EPOLL_CTL_MOD, c->h.fd, &ev) == 0)
        c->events = want;
}

static void conn_close(struct conn *c)
{
    if (c->closed)
        return;
    c->closed = 1;
    close(c->h.fd); /* also removes it from the epoll set */
    if (c->waiting) {
        c->dead = 1; /* the worker still holds it: freed when its answer comes back */
    } else {
        c->next = c->loop->grave;
        c->loop->grave = c;
    }
}

static void conn_free(struct conn *c)
{
    free(c->job.rows);
    free(c->rbuf);
    free(c->wbuf);
    free(c);
}

/* ---- output: a list of segments, flushed with sendmsg (memory) and sendfile (payload) ---- */

static int append_copy(struct conn *c, const char *p, size_t n)
{
    if (c->wlen + n > c->wcap) {
        size_t cap = c->wcap ? c->wcap : WBUF_INIT;
        while (cap < c->wlen + n)
            cap *= 2;
        char *w = realloc(c->wbuf, cap);
        if (!w)
            return -1;
        c->wbuf = w;
        c->wcap = cap;
    }
    memcpy(c->wbuf + c->wlen, p, n);
    struct seg *last = c->nseg > c->seg_head ? &c->segs[c->nseg - 1] : NULL;
    if (last && !last->base && last->off + last->len == c->wlen)
        last->len += n;
    else
        c->segs[c->nseg++] = (struct seg){NULL, c->wlen, n, 0};
    c->wlen += n;
    c->pending += n;
    return 0;
}

static void append_static(struct conn *c, const char *p, size_t n)
{
    c->segs[c->nseg++] = (struct seg){p, 0, n, 0};
    c->pending += n;
}

/* A range of the payload's memfd, written with sendfile (no copy from user memory). */
static void append_file(struct conn *c, size_t off, size_t n)
{
    c->segs[c->nseg++] = (struct seg){NULL, off, n, 1};
    c->pending += n;
}

static int emit(struct conn *c, const struct response *r, const char *body, size_t body_len,
                int head_only)
{
    if (append_copy(c, r->head, r->head_len) < 0)
        return -1;
    if (head_only)
        return 0;
    if (body == http_payload() && http_payload_fd() >= 0) {
        append_file(c, 0, body_len);
        return 0;
    }
    if (body_len >= BIG_BODY) {
        append_static(c, body, body_len);
        return 0;
    }
    return append_copy(c, body, body_len);
}

/* Marks n bytes as written from the head of the segment list. */
static void consume(struct conn *c, size_t n)
{
    c->pending -= n;
    while (n > 0) {
        struct seg *s = &c->segs[c->seg_head];
        if (n >= s->len) {
            n -= s->len;
            c->seg_head++;
        } else {
            s->off += n;
            s->len -= n;
            n = 0;
        }
    }
}

/* Writes the memory segments from the head up to the next file range in one sendmsg; with
 * MSG_MORE when a file range follows, so a head leaves in the same segment as its body. */
static ssize_t send_memory(struct conn *c)
{
    struct iovec iov[MAX_SEGS];
    int cnt = 0;
    for (int i = c->seg_head; i < c->nseg && !c->segs[i].file; i++, cnt++) {
        const struct seg *s = &c->segs[i];
        iov[cnt].iov_base = (char *)(s->base ? s->base : c->wbuf) + s->off;
        iov[cnt].iov_len = s->len;
    }
    int more = c->seg_head + cnt < c->nseg ? MSG_MORE : 0;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
    return sendmsg(c->h.fd, &m, MSG_NOSIGNAL | more);
}

/* 1: everything written; 0: the socket is full (wait for EPOLLOUT); -1: error. */
static int conn_flush(struct conn *c)
{
    while (c->seg_head < c->nseg) {
        const struct seg *s = &c->segs[c->seg_head];
        ssize_t n;
        if (s->file) {
            off_t off = (off_t)s->off;
            n = sendfile(c->h.fd, http_payload_fd(), &off, s->len);
        } else {
            n = send_memory(c);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? 0 : -1;
        }
        if (n == 0)
            return -1; /* nothing taken and no error: never expected, do not spin */
        consume(c, (size_t)n);
    }
    c->nseg = c->seg_head = 0;
    c->wlen = 0;
    return 1;
}

/* ---- HTTP ---- */

static int ensure_rbuf(struct conn *c, size_t need)
{
    if (c->rpos > 0 && c->rpos == c->rlen) {
        c->rpos = c->rlen = 0;
    } else if (c->rpos > 0 && (c->rlen == c->rcap || need > c->rcap - c->rpos)) {
        memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
        c->rlen -= c->rpos;
        c->rpos = 0;
    }
    if (need <= c->rcap || c->rcap >= RBUF_MAX)
        return 0;
    size_t cap = c->rcap;
    while (cap < need && cap < RBUF_MAX)
        cap *= 2;
    char *r = realloc(c->rbuf, cap);
    if (!r)
        return -1;
    c->rbuf = r;
    c->rcap = cap;
    return 0;
}

/* Hands a database request to db.c (the connection then waits, as for /pingpong); answers at
 * once (404 without DATABASE_URL, 500 when no database connection can take it) and returns 0
 * when it cannot be sent. */
static int db_start(struct conn *c, const struct request *req)
{
    enum route answer = R_NOT_FOUND;
    if (db_enabled()) {
        c->job.route = req->route;
        c->job.mode = req->mode;
        c->job.head_only = req->head_only;
        c->job.n = req->route == R_QUERIES || req->route == R_UPDATES ? req->queries : 1;
        c->waiting = 1;
        if (db_submit(c) == 0)
            return 1;
        c->waiting = 0;
        answer = R_SERVER_ERROR;
    }
    const struct response *r = http_response(answer, req->mode);
    if (emit(c, r, r->body, r->body_len, req->head_only) < 0)
        c->close_after = 1;
    return 0;
}

/* Answers every complete request in the buffer. Returns 1 when it stopped because enough
 * output is queued (call again after a flush), 0 otherwise, -1 on allocation failure. */
static int http_process(struct conn *c)
{
    while (!c->waiting && !c->close_after && c->rpos < c->rlen) {
        if (c->nseg >= MAX_SEGS - 2 || c->pending >= MAX_PENDING)
            return 1;
        struct request req;
        enum parse_result pr = http_parse(c->rbuf + c->rpos, c->rlen - c->rpos, &req);
        if (pr == PARSE_INCOMPLETE)
            return ensure_rbuf(c, req.consumed ? req.consumed : c->rlen - c->rpos + 1);
        c->rpos += req.consumed;
        if (req.mode == CLOSE)
            c->close_after = 1;
        if (req.route == R_PINGPONG && pr == PARSE_OK) {
            c->waiting = 1;
            c->ping_mode = req.mode;
            c->ping_head_only = req.head_only;
            pingpong_submit(c);
            break;
        }
        if (req.route >= R_DB && req.route <= R_UPDATES && pr == PARSE_OK) {
            if (db_start(c, &req))
                break;
            continue;
        }
        if (req.route == R_JSON) {
            char out[512];
            size_t n = http_json(out, sizeof out, req.mode, req.head_only);
            if (!n || append_copy(c, out, n) < 0)
                return -1;
            continue;
        }
        const struct response *r = http_response(req.route, req.mode);
        if (emit(c, r, r->body, r->body_len, req.head_only) < 0)
            return -1;
    }
    if (c->rpos == c->rlen)
        c->rpos = c->rlen = 0;
    return 0;
}

static void http_drive(struct conn *c)
{
    for (;;) {
        int more = http_process(c);
        int r = more < 0 ? -1 : conn_flush(c);
        if (r < 0) {
            conn_close(c);
            return;
        }
        if (r == 0 || c->waiting)
            break;
        if (more)
            continue;
        if (c->close_after || c->eof) {
            conn_close(c);
            return;
        }
        break;
    }
    set_interest(c, c->waiting ? 0 : c->pending ? EPOLLOUT : EPOLLIN);
}

static void http_event(struct conn *c, uint32_t events)
{
    if (c->closed)
        return;
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }
    if ((events & (EPOLLIN | EPOLLHUP)) && !c->waiting && !c->pending) {
        if (c->rlen == c->rcap && (ensure_rbuf(c, c->rcap + 1) < 0 || c->rlen == c->rcap)) {
            conn_close(c);
            return;
        }
        ssize_t n = read(c->h.fd, c->rbuf + c->rlen, c->rcap - c->rlen);
        if (n > 0)
            c->rlen += (size_t)n;
        else if (n == 0)
            c->eof = 1;
        else if (errno != EAGAIN && errno != EINTR) {
            conn_close(c);
            return;
        }
    } else if ((events & EPOLLHUP) && c->waiting) {
        conn_close(c);
        return;
    }
    http_drive(c);
}

/* A /pingpong answer came back from the worker: write it, then go on with the buffer. */
static void http_pingpong_done(struct conn *c)
{
    c->waiting = 0;
    if (c->dead) {
        c->next = c->loop->grave;
        c->loop->grave = c;
        return;
    }
    const struct response *r = http_response(R_PINGPONG, c->ping_mode);
    if (emit(c, r, c->ping_body, c->ping_len, c->ping_head_only) < 0) {
        conn_close(c);
        return;
    }
    http_drive(c);
}

void http_db_done(struct conn *c)
{
    c->waiting = 0;
    const char *body;
    size_t n = db_render(c, &body);
    if (c->dead) {
        c->next = c->loop->grave;
        c->loop->grave = c;
        return;
    }
    const struct dbjob *j = &c->job;
    char head[256];
    size_t h = n ? http_head(head, sizeof head, j->route, n, j->mode) : 0;
    int bad;
    if (h) {
        bad = append_copy(c, head, h) < 0 || (!j->head_only && append_copy(c, body, n) < 0);
    } else {
        const struct response *r = http_response(R_SERVER_ERROR, j->mode);
        bad = emit(c, r, r->body, r->body_len, j->head_only) < 0;
    }
    if (bad) {
        conn_close(c);
        return;
    }
    http_drive(c);
}

void loop_complete(struct conn *c)
{
    struct loop *l = c->loop;
    pthread_mutex_lock(&l->lock);
    c->next = l->done;
    l->done = c;
    pthread_mutex_unlock(&l->lock);
    uint64_t one = 1;
    if (write(l->wake.fd, &one, sizeof one) < 0 && errno != EAGAIN)
        perror("c/epoll: eventfd write");
}

static void drain_done(struct loop *l)
{
    uint64_t count;
    if (read(l->wake.fd, &count, sizeof count) < 0 && errno != EAGAIN)
        perror("c/epoll: eventfd read");
    pthread_mutex_lock(&l->lock);
    struct conn *c = l->done;
    l->done = NULL;
    pthread_mutex_unlock(&l->lock);
    while (c) {
        struct conn *next = c->next;
        http_pingpong_done(c);
        c = next;
    }
}

/* ---- echo ---- */

static void echo_event(struct conn *c, uint32_t events)
{
    if (c->closed)
        return;
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }
    /* Echo until the socket has nothing more to read or takes nothing more, at most
     * ECHO_ROUNDS buffers per event so that one busy connection cannot starve the others
     * (level-triggered: what is left raises the event again). */
    for (int round = 0; round < ECHO_ROUNDS; round++) {
        if (c->rpos == c->rlen) {
            ssize_t n = read(c->h.fd, c->rbuf, c->rcap);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                conn_close(c);
                return;
            }
            if (n < 0)
                break;
            c->rpos = 0;
            c->rlen = (size_t)n;
        }
        ssize_t n = write(c->h.fd, c->rbuf + c->rpos, c->rlen - c->rpos);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) {
                conn_close(c);
                return;
            }
            break;
        }
        c->rpos += (size_t)n;
        if (c->rpos < c->rlen)
            break; /* the socket is full: wait for EPOLLOUT */
    }
    set_interest(c, c->rpos < c->rlen ? EPOLLOUT : EPOLLIN);
}

/* ---- the loop ---- */

static void accept_all(struct loop *l, int lfd, enum kind kind)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN)
                perror("c/epoll: accept");
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        size_t cap = kind == K_ECHO ? ECHO_BUF : RBUF_INIT;
        if (c)
            c->rbuf = malloc(cap);
        if (!c || !c->rbuf) {
            free(c);
            close(fd);
            continue;
        }
        c->h = (struct handle){kind, fd};
        c->loop = l;
        c->rcap = cap;
        c->events = EPOLLIN;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            conn_free(c);
        }
    }
}

void *io_thread(void *arg)
{
    struct loop *l = arg;
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(l->epfd, evs, 256, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("c/epoll: epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            struct handle *h = evs[i].data.ptr;
            switch (h->kind) {
            case K_HTTP_LISTEN:
                accept_all(l, h->fd, K_HTTP);
                break;
            case K_ECHO_LISTEN:
                accept_all(l, h->fd, K_ECHO);
                break;
            case K_WAKE:
                drain_done(l);
                break;
            case K_HTTP:
                http_event((struct conn *)h, evs[i].events);
                break;
            case K_ECHO:
                echo_event((struct conn *)h, evs[i].events);
                break;
            case K_PG:
                db_event((struct pgc *)h, evs[i].events);
                break;
            }
        }
        while (l->grave) {
            struct conn *c = l->grave;
            l->grave = c->next;
            conn_free(c);
        }
    }
    return NULL;
}
