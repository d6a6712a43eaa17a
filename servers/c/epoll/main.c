/* serverbench c/epoll: start-up. Reads the environment (spec/contract.md), opens one set of
 * SO_REUSEPORT listeners, an eventfd and, with DATABASE_URL, a share of the database pool per
 * I/O thread, then runs the loops of server.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "server.h"

static int listen_on(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "c/epoll: HOST=%s port %s: %s\n", host, port, gai_strerror(rc));
        exit(1);
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 4096) < 0) {
        fprintf(stderr, "c/epoll: cannot listen on %s port %s: %s\n", host, port,
                strerror(errno));
        exit(1);
    }
    freeaddrinfo(ai);
    return fd;
}

static void watch(struct loop *l, struct handle *h)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = h};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, h->fd, &ev) < 0)
        die("c/epoll: epoll_ctl");
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

int main(void)
{
    const char *host = env_or("HOST", "127.0.0.1");
    const char *port = env_or("PORT", "8080");
    const char *echo_port = env_or("ECHO_PORT", "9000");
    int workers = atoi(env_or("WORKERS", "1"));
    if (workers < 1 || workers > 1024)
        workers = 1;

    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    http_init();
    pingpong_start();

    struct loop *loops = calloc((size_t)workers, sizeof *loops);
    pthread_t *threads = calloc((size_t)workers, sizeof *threads);
    if (!loops || !threads)
        die("c/epoll: calloc");
    for (int i = 0; i < workers; i++) {
        struct loop *l = &loops[i];
        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0)
            die("c/epoll: epoll_create1");
        pthread_mutex_init(&l->lock, NULL);
        l->http_listen = (struct handle){K_HTTP_LISTEN, listen_on(host, port)};
        l->echo_listen = (struct handle){K_ECHO_LISTEN, listen_on(host, echo_port)};
        l->wake = (struct handle){K_WAKE, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
        if (l->wake.fd < 0)
            die("c/epoll: eventfd");
        watch(l, &l->http_listen);
        watch(l, &l->echo_listen);
        watch(l, &l->wake);
    }
    const char *db_url = getenv("DATABASE_URL");
    char db_note[96] = "no database (DATABASE_URL unset)";
    if (db_url && *db_url) {
        int pool = atoi(env_or("DATABASE_POOL", "16"));
        int per = pool / workers > 0 ? pool / workers : 1, opened = 0;
        for (int i = 0; i < workers; i++)
            opened += db_open(&loops[i], db_url, per);
        snprintf(db_note, sizeof db_note, "%d of %d database connection(s) open", opened,
                 per * workers);
    }
    for (int i = 0; i < workers; i++)
        if (pthread_create(&threads[i], NULL, io_thread, &loops[i]) != 0)
            die("c/epoll: pthread_create");
    printf("c/epoll: http on %s:%s, echo on %s:%s, %d I/O thread(s), %s\n", host, port, host,
           echo_port, workers, db_note);
    fflush(stdout);
    for (int i = 0; i < workers; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
