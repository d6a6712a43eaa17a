/* Minimal HTTP/1.x request parsing and the prebuilt responses of the serverbench contract. */
#ifndef C_EPOLL_HTTP_H
#define C_EPOLL_HTTP_H

#include <stddef.h>

#define PAYLOAD_LEN ((size_t)1 << 20)
#define MAX_HEAD ((size_t)64 * 1024)
#define MAX_BODY ((size_t)1 << 20)

enum route {
    R_HELLO,
    R_HEY,
    R_HELL,
    R_ABOUT,
    R_JSON,
    R_PAYLOAD,
    R_PINGPONG,
    R_DB,
    R_QUERIES,
    R_FORTUNES,
    R_UPDATES,
    R_NOT_FOUND,
    R_SERVER_ERROR,
    R_BAD_REQUEST,
    R_TOO_LARGE,
    R_HEADERS_TOO_LARGE,
    R_NOT_IMPLEMENTED,
    R_COUNT
};

/* How the connection continues after a response. */
enum conn_mode {
    KEEP_11, /* HTTP/1.1 keep-alive: no Connection header */
    KEEP_10, /* HTTP/1.0 that asked for keep-alive: "Connection: keep-alive" */
    CLOSE,   /* "Connection: close", then the server closes */
    MODE_COUNT
};

enum parse_result { PARSE_OK, PARSE_INCOMPLETE, PARSE_ERROR };

struct request {
    enum route route;
    enum conn_mode mode;
    int head_only; /* HEAD request: headers without the body */
    int queries;   /* R_QUERIES, R_UPDATES: the queries parameter, clamped to 1..500 */
    /* PARSE_OK/PARSE_ERROR: bytes used by this request (headers + body).
     * PARSE_INCOMPLETE: bytes needed in total if known, else 0. */
    size_t consumed;
};

struct response {
    const char *head;
    size_t head_len;
    const char *body;
    size_t body_len;
};

/* Builds the payload and every prebuilt response; call once before anything else. */
void http_init(void);

/* Parses the request at the start of buf[0..len). */
enum parse_result http_parse(const char *buf, size_t len, struct request *req);

/* The prebuilt response of a route (R_JSON excepted: see http_json). */
const struct response *http_response(enum route r, enum conn_mode m);

/* Formats the head of a response of route r with a body of body_len bytes; returns its length,
 * or 0 when cap is too small. */
size_t http_head(char *out, size_t cap, enum route r, size_t body_len, enum conn_mode m);

/* Serializes the /json response for this request into out; returns its length, or 0 when
 * cap is too small. */
size_t http_json(char *out, size_t cap, enum conn_mode m, int head_only);

/* The contract's 1 MiB body: byte i is 'a' + i mod 26. */
const char *http_payload(void);

/* A sealed memfd holding the same 1 MiB, for sendfile; -1 when it could not be made (the
 * body is then written from memory). */
int http_payload_fd(void);

#endif
