/* The event loop's connection and loop types, shared with the pingpong worker. */
#ifndef C_EPOLL_SERVER_H
#define C_EPOLL_SERVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

#define MAX_SEGS 64

/* What an epoll event's data.ptr points to: every such struct starts with a handle. */
enum kind { K_HTTP_LISTEN, K_ECHO_LISTEN, K_WAKE, K_HTTP, K_ECHO, K_PG };

struct handle {
    enum kind kind;
    int fd;
};

/* One piece of pending output: static memory (base != NULL), a slice of the wbuf, or (file)
 * a range of the payload's memfd, sent with sendfile. */
struct seg {
    const char *base;
    size_t off, len;
    int file;
};

struct loop;
struct pgc;

/* A database request of a connection (at most one at a time: the connection stops parsing
 * while it waits, as for /pingpong). */
struct world {
    int32_t id, number;
};

struct dbjob {
    enum route route;
    enum conn_mode mode;
    int head_only;
    int n;            /* rows to read */
    int pending;      /* statements sent whose answers are not in yet */
    int failed;       /* a statement failed: answer 500 */
    int writing;      /* updates: the UPDATE is in flight */
    struct world *rows; /* n rows, allocated on the connection's first database request */
    void *fortunes;   /* the PGresult of the fortune SELECT */
};

struct conn {
    struct handle h; /* first member */
    struct loop *loop;
    uint32_t events; /* current epoll interest */
    char *rbuf;
    size_t rcap, rpos, rlen;
    char *wbuf;
    size_t wcap, wlen;
    struct seg segs[MAX_SEGS];
    int nseg, seg_head;
    size_t pending;
    int waiting, close_after, eof, closed, dead;
    /* The /pingpong request in flight and the worker's answer. */
    enum conn_mode ping_mode;
    int ping_head_only;
    const char *ping_body;
    size_t ping_len;
    struct dbjob job;
    struct conn *next; /* link in the worker queue, then in the loop's done list */
};

/* One I/O thread: its epoll set, its own SO_REUSEPORT listeners and its wake-up eventfd. */
struct loop {
    int epfd;
    struct handle http_listen, echo_listen, wake;
    pthread_mutex_t lock; /* guards done */
    struct conn *done;    /* /pingpong answers from the worker */
    struct conn *grave;   /* closed connections, freed after the current batch */
    struct pgc **pgcs;    /* this thread's database connections (DATABASE_POOL / WORKERS) */
    int npgc;
    struct conn *db_wait, *db_wait_tail; /* requests waiting for room in a pipeline */
    char *scratch;        /* where database responses are rendered */
    size_t scratch_cap;
};

/* Prints what failed with errno's message and exits 1. */
void die(const char *what);

/* One I/O thread: runs loop `arg` (a struct loop *) forever. */
void *io_thread(void *arg);

/* Called by the worker thread: queues c's answer on its loop and wakes the loop. */
void loop_complete(struct conn *c);

/* Starts the /pingpong worker thread; pingpong_submit hands it a request. */
void pingpong_start(void);
void pingpong_submit(struct conn *c);

/* A database request is answered (or failed): write it, then go on with the buffer. */
void http_db_done(struct conn *c);

#endif
