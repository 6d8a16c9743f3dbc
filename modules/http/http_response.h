/* The HTTP/1.1 response parser of the native HTTP transport (http_wire.c): a state machine
 * over the bytes of one answer, with no sockets and no allocation, so that it can be tested
 * and fuzzed on its own.
 *
 * The caller owns the reads: cm_http_answer_space says where the next bytes should land
 * (the header buffer while the headers arrive, the caller's body buffer while a body of
 * known length has room there, a scratch area otherwise), and cm_http_answer_took parses
 * the n bytes that landed. Bodies are kept up to the body buffer's capacity and counted in
 * full. It reads: the status line (HTTP/1.0 or 1.1), Content-Length, Transfer-Encoding:
 * chunked (with extensions and trailers), Connection: close/keep-alive; 1xx answers are
 * skipped; HEAD answers and 204/304 have no body; without a length the body ends at the
 * close. */
#ifndef CEPHMARK_HTTP_RESPONSE_H
#define CEPHMARK_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_HTTP_ANSWER_HEAD_MAX 16384 /* status line and headers must fit */

enum cm_http_answer_state { CM_HTTP_ANSWER_MORE, CM_HTTP_ANSWER_DONE, CM_HTTP_ANSWER_BAD };

struct cm_http_answer {
    int phase; /* private: where the parser is */
    bool head_request;
    bool chunk_line_seen, line_empty;
    char head[CM_HTTP_ANSWER_HEAD_MAX]; /* headers so far; also the scratch area */
    size_t head_len, scanned;
    uint64_t remaining;

    /* results */
    long status;     /* 0 until the final status line was read */
    bool keep_alive; /* the connection may carry another request */
    unsigned char *body;
    size_t capacity;
    size_t received;   /* body bytes that arrived (only `capacity` are kept in body) */
    const char *error; /* BAD: what was wrong, a phrase */
    /* Set after cm_http_answer_start for an answer of unknown size: `body` is then a
     * malloc'd buffer (or NULL) that the parser grows with realloc to keep the whole body,
     * up to CM_HTTP_ANSWER_GROW_MAX bytes (beyond that, or when memory runs out, bytes are
     * counted and not kept, as without it); the caller frees answer->body. */
    bool grow;
    /* from the final answer's headers */
    bool has_content_length;
    uint64_t content_length;
    char etag[80];
    char content_type[128];
};

#define CM_HTTP_ANSWER_GROW_MAX ((size_t)1 << 32)

/* Starts a new answer to a request (HEAD requests get no body), keeping at most `capacity`
 * bytes of the body in `body` (may be NULL with capacity 0). */
void cm_http_answer_start(struct cm_http_answer *answer, bool head_request, unsigned char *body,
                          size_t capacity);

/* Where the next received bytes should go: never NULL, room > 0 while the answer wants
 * bytes. */
void cm_http_answer_space(struct cm_http_answer *answer, char **into, size_t *room);

/* Parses the n > 0 bytes that were just received into the space given. DONE when the answer
 * is complete (bytes after it turn keep_alive off: nothing was asked for them), BAD with
 * `error` when it is malformed, else MORE. */
enum cm_http_answer_state cm_http_answer_took(struct cm_http_answer *answer, size_t n);

/* The server closed the connection: DONE for a body that runs to the close, else BAD. */
enum cm_http_answer_state cm_http_answer_closed(struct cm_http_answer *answer);

#endif
