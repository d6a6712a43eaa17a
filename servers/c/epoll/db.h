/* The database workloads on libpq's asynchronous API, in pipeline mode, on the event loop. */
#ifndef C_EPOLL_DB_H
#define C_EPOLL_DB_H

#include "server.h"

/* Opens this loop's share of DATABASE_POOL (connects, prepares the statements, enters pipeline
 * mode, adds the sockets to the loop's epoll set). Returns 0 when DATABASE_URL is unset. */
int db_open(struct loop *l, const char *url, int count);

/* Whether DATABASE_URL was set (the database routes exist). */
int db_enabled(void);

/* Starts c's database request (c->job filled in, c->waiting set): returns 0 when it is in
 * flight or queued (http_db_done is called when it is answered or failed), -1 when it failed at
 * once (answer 500). */
int db_submit(struct conn *c);

/* A readable or writable event on a database connection. */
void db_event(struct pgc *p, uint32_t events);

/* Renders c's answered request into the loop's scratch buffer; returns the body length, or 0
 * on failure (then answer 500). Frees what the job held. */
size_t db_render(struct conn *c, const char **body);

#endif
