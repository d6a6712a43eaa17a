/* The /pingpong worker: one thread that takes requests from a queue (mutex + condition
 * variable), answers each with the payload, and hands the answer back to the connection's
 * I/O thread through that loop's queue and eventfd. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "server.h"

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct conn *q_head, *q_tail;

void pingpong_submit(struct conn *c)
{
    c->next = NULL;
    pthread_mutex_lock(&q_lock);
    if (q_tail)
        q_tail->next = c;
    else
        q_head = c;
    q_tail = c;
    pthread_cond_signal(&q_cond);
    pthread_mutex_unlock(&q_lock);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_lock);
        while (!q_head)
            pthread_cond_wait(&q_cond, &q_lock);
        struct conn *batch = q_head;
        q_head = q_tail = NULL;
        pthread_mutex_unlock(&q_lock);
        while (batch) {
            struct conn *c = batch;
            batch = c->next;
            c->ping_body = http_payload();
            c->ping_len = PAYLOAD_LEN;
            loop_complete(c);
        }
    }
    return NULL;
}

void pingpong_start(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) {
        fprintf(stderr, "c/epoll: cannot start the pingpong worker\n");
        exit(1);
    }
    pthread_detach(t);
}
