/* serverbench ocaml/effects: the few Linux calls the standard library does not offer.

   - epoll: create a set, add a descriptor (edge-triggered for connections, exclusive
     level-triggered for the shared listening sockets), wait for events. Only a wait that may
     sleep releases the domain's runtime lock, so the other domains can collect garbage (OCaml 5
     stops every domain for a minor collection).
   - eventfd: how a domain wakes another one that sleeps in epoll_wait.
   - accept4/recv/send/close on non-blocking sockets. Unix.read and Unix.write would also work,
     but each call releases and retakes the runtime lock and copies through a 64 KiB stack
     buffer (Unix.write also loops until everything is written, which a non-blocking socket
     cannot promise). A non-blocking call never sleeps, so these keep the lock ([@@noalloc] on
     the OCaml side) and read into / write from the OCaml string itself: the 1 MiB payload
     leaves with one send instead of sixteen copies of 64 KiB.

   Results are non-negative on success, -1 for EAGAIN (the fiber then waits for the event) and
   -2 for any other error (the connection is closed). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caml/bigarray.h>
#include <caml/fail.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>

#define MAX_EVENTS 256

/* The flags the OCaml side passes to sb_epoll_add, and the ones sb_epoll_wait reports. */
#define SB_READ 1
#define SB_WRITE 2
#define SB_EDGE 4
#define SB_EXCLUSIVE 8

static void fail_errno(const char *what)
{
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s", what, strerror(errno));
    caml_failwith(msg);
}

static long result(ssize_t n)
{
    if (n >= 0)
        return n;
    return (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : -2;
}

value sb_epoll_create(value unit)
{
    (void)unit;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        fail_errno("epoll_create1");
    return Val_int(ep);
}

value sb_epoll_add(value ep, value fd, value flags)
{
    int f = Int_val(flags);
    struct epoll_event ev = { .events = 0, .data.fd = Int_val(fd) };
    if (f & SB_READ)
        ev.events |= EPOLLIN;
    if ((f & SB_READ) && !(f & SB_EXCLUSIVE)) /* EPOLLEXCLUSIVE refuses EPOLLRDHUP */
        ev.events |= EPOLLRDHUP;
    if (f & SB_WRITE)
        ev.events |= EPOLLOUT;
    if (f & SB_EDGE)
        ev.events |= EPOLLET;
    if (f & SB_EXCLUSIVE)
        ev.events |= EPOLLEXCLUSIVE;
    /* A connection closed by the peer before we register it is still reported (EPOLLHUP). */
    return Val_bool(epoll_ctl(Int_val(ep), EPOLL_CTL_ADD, Int_val(fd), &ev) == 0);
}

/* Waits up to timeout_ms (-1: forever) and stores (fd, SB_READ|SB_WRITE) pairs in out, an int
   bigarray of 2 * MAX_EVENTS cells. Returns how many pairs. */
value sb_epoll_wait(value ep, value out, value timeout_ms)
{
    struct epoll_event evs[MAX_EVENTS];
    /* Everything read from the OCaml values is read before the runtime lock is released: a
       collection may move them meanwhile. The cells themselves are outside the heap. */
    int timeout = Int_val(timeout_ms), n;
    intnat *cells = (intnat *)Caml_ba_data_val(out);
    int max = (int)(Caml_ba_array_val(out)->dim[0] / 2);
    if (max > MAX_EVENTS)
        max = MAX_EVENTS;
    if (timeout == 0) {
        n = epoll_wait(Int_val(ep), evs, max, 0);
    } else {
        caml_enter_blocking_section();
        n = epoll_wait(Int_val(ep), evs, max, timeout);
        caml_leave_blocking_section();
    }
    if (n < 0) {
        if (errno == EINTR)
            return Val_int(0);
        fail_errno("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
        uint32_t e = evs[i].events;
        intnat ready = 0;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            ready |= SB_READ;
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            ready |= SB_WRITE;
        cells[2 * i] = evs[i].data.fd;
        cells[2 * i + 1] = ready;
    }
    return Val_int(n);
}

value sb_eventfd(value unit)
{
    (void)unit;
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        fail_errno("eventfd");
    return Val_int(fd);
}

value sb_eventfd_signal(value fd)
{
    uint64_t one = 1;
    ssize_t n = write(Int_val(fd), &one, sizeof one);
    (void)n; /* EAGAIN only if the counter is about to overflow: it is set already. */
    return Val_unit;
}

value sb_eventfd_drain(value fd)
{
    uint64_t count;
    ssize_t n = read(Int_val(fd), &count, sizeof count);
    (void)n;
    return Val_unit;
}

/* Accepts one connection, non-blocking, close-on-exec, with TCP_NODELAY. */
value sb_accept(value listen_fd)
{
    int fd;
    do
        fd = accept4(Int_val(listen_fd), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return Val_long(result(fd));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return Val_long(fd);
}

value sb_recv(value fd, value buf, value off, value len)
{
    ssize_t n;
    do
        n = recv(Int_val(fd), (char *)Bytes_val(buf) + Long_val(off), Long_val(len), 0);
    while (n < 0 && errno == EINTR);
    return Val_long(result(n));
}

/* Also used for strings: OCaml strings and bytes have the same representation. */
value sb_send(value fd, value buf, value off, value len)
{
    ssize_t n;
    do
        n = send(Int_val(fd), (const char *)Bytes_val(buf) + Long_val(off), Long_val(len),
                 MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return Val_long(result(n));
}

value sb_close(value fd)
{
    close(Int_val(fd));
    return Val_unit;
}
