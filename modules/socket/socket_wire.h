/* The wire of cephmark's TCP baselines, shared by the client target (socket_target.c) and
 * the server (socket_server.c): the protocol's constants and hello, its byte order, and
 * the blocking helpers with a deadline used for handshakes and results. Internal to
 * modules/socket; socket_net.h is the public side. */
#ifndef CEPHMARK_SOCKET_WIRE_H
#define CEPHMARK_SOCKET_WIRE_H

#include "socket_net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_MAGIC   0x544E4D43u /* "CMNT" */
#define NET_VERSION 1
#define HELLO_SIZE  64
#define ANSWER_SIZE 16
#define RECORD_SIZE 32

enum { KIND_SINK = 1, KIND_SOURCE = 2, KIND_ECHO = 3, KIND_RESULTS = 4 };

/* How long the server keeps a finished stream's figures, and the client waits for them. */
#define RESULTS_WAIT_NS (10ULL * 1000000000ULL)

struct hello {
    uint32_t kind;
    uint64_t test_id;
    uint32_t stream;
    uint32_t size;      /* SOURCE: bytes per send; ECHO: request size; RESULTS: streams */
    uint32_t response;  /* ECHO: response size */
    uint32_t token_len; /* bytes of token after the hello */
};

static inline void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Writes the message into `error` and returns `rc`. */
int cm_net_fail(char *error, size_t error_size, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The 64-byte hello of a connection. */
void cm_net_hello_encode(unsigned char *p, const struct hello *h);
/* Waits until fd is ready for `events` or the deadline passes; 0, -ETIMEDOUT, -EINTR. */
int cm_net_wait_ready(int fd, short events, uint64_t deadline_ns);
/* Reads or writes exactly `length` bytes on a non-blocking fd before the deadline. */
int cm_net_transfer_all(int fd, void *buffer, size_t length, bool writing, uint64_t deadline_ns);
void cm_net_set_nonblocking(int fd, bool on);
/* The socket's retransmits so far (TCP_INFO), 0 when unknown. */
uint32_t cm_net_total_retransmits(int fd);

#endif
