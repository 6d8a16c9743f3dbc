/* TCP baselines, the network half of the seed's method: an iperf-like bandwidth test and a
 * request/response latency test between a client (an op engine target) and a server
 * (`cephmark netserver`). Pure C, no Lua.
 *
 * The wire protocol is cephmark's own and small. Every connection opens with a 64-byte
 * hello from the client (magic, version, kind, test id, stream index, sizes, the length of
 * the token that follows it, up to CM_NET_MAX_TOKEN bytes) and a 16-byte answer from the
 * server (magic, status: 0, or an errno such as EACCES for a wrong token). Kinds:
 *   SINK    the client sends, the server counts what arrives until EOF (direction "send");
 *   SOURCE  the server sends buffers until the client closes (direction "recv");
 *   ECHO    the server reads requests of a fixed size and answers each with a response
 *           (mode "rr", netperf's TCP_RR);
 *   RESULTS the client asks, after its streams ended, what the server saw of each stream
 *           of its test (bytes, seconds, retransmits): the receiver's count for "send", the
 *           sender's retransmits for "recv".
 *
 * Client target: one op slot per stream, so `threads` is the number of streams. An op moves
 * one buffer (or, in rr mode, one request and its response) through a non-blocking socket.
 * submit() writes or reads at once and completes the op inline when the socket takes it
 * all; otherwise the stream waits for epoll, whose fd is the loop's wait_fd, and poll()
 * resumes the streams epoll reports. Nothing is allocated per op. */
#ifndef CEPHMARK_SOCKET_NET_H
#define CEPHMARK_SOCKET_NET_H

#include "engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_NET_DEFAULT_PORT 5301
#define CM_NET_MAX_STREAMS  256
/* A shared token is at most this long (bytes); it travels in clear after the hello. */
#define CM_NET_MAX_TOKEN 256
/* The server's buffer memory: at most this much per connection, whatever sizes a hello
 * asks for, and by default at most CM_NET_DEFAULT_MAX_MEMORY for all connections. */
#define CM_NET_CONNECTION_BUFFER  (256u << 10)
#define CM_NET_DEFAULT_MAX_MEMORY (64u << 20)

enum cm_net_mode { CM_NET_SEND, CM_NET_RECV, CM_NET_RR };

struct cm_net_options {
    const char *host;
    int port;
    enum cm_net_mode mode;
    unsigned streams;
    uint32_t buffer_size;   /* bytes per op in send/recv; the request size in rr */
    uint32_t response_size; /* rr only */
    double connect_timeout; /* seconds */
    const char *token;      /* sent after each hello (NULL: none); the server's, if it has one */
    size_t token_len;
};

/* What the far end saw of one stream (from the RESULTS exchange). */
struct cm_net_remote {
    uint64_t bytes;
    uint64_t elapsed_ns;
    uint32_t retransmits;
    bool done;
};

struct cm_net_stream;

struct cm_net_client {
    struct cm_net_options options;
    uint64_t test_id;
    int epoll_fd;
    struct cm_net_stream *streams;
    unsigned n_streams;
    unsigned waiting; /* streams with an op blocked on the socket */
    unsigned char *buffers;
    char peer[300]; /* "host:port" as connected */
    /* per-second retransmits, filled by cm_net_client_second */
    uint32_t *retransmits_series;
    size_t series_len, series_cap;
    uint32_t retransmits_seen;
    struct cm_net_remote remote[CM_NET_MAX_STREAMS];
    bool have_remote;
    /* a request chosen by the caller (submit_request) on stream 0, one at a time: `send`
     * goes out, then `receive` bytes come in */
    struct cm_op *request_op;
    const unsigned char *request_send;
    size_t request_send_length;
    unsigned char *request_receive;
    size_t request_receive_length;
    size_t request_done;
    bool serves_requests;   /* polled by a caller's loop: take every epoll event, see poll */
    double request_timeout; /* seconds a request may take; 0: no limit */
    uint64_t request_deadline_ns;
};

extern const struct cm_target_ops cm_net_client_ops;

/* Connects every stream and completes the handshake. Returns 0 or -errno with a sentence
 * (refused, unreachable, timed out, not a cephmark netserver, bad options). */
int cm_net_client_open(struct cm_net_client *client, const struct cm_net_options *options,
                       char *error, size_t error_size);
/* Retransmits of the local senders (TCP_INFO total_retrans, summed); call once a second to
 * build the series. Returns the total so far. */
uint32_t cm_net_client_second(struct cm_net_client *client);
/* Ends the streams (send: shutdown and let the server count to EOF; recv/rr: close) and
 * asks the server for its view of them. Returns 0, or -errno with a sentence when the
 * results could not be had (the run's own figures stand). */
int cm_net_client_finish(struct cm_net_client *client, char *error, size_t error_size);
void cm_net_client_close(struct cm_net_client *client);

/* A connection's own calls (cephmark.socket's socket.connect, one stream): blocking, sends
 * or receives exactly `length` bytes on stream 0 within `timeout` seconds. 0, or -errno
 * (-ETIMEDOUT, -ECONNRESET when the server closed the stream). Inside scripted workers the
 * same stream takes requests through cm_net_client_ops' submit_request (SEND, RECEIVE,
 * EXCHANGE; one at a time: a second fails with -EBUSY), each failing with -ETIMEDOUT when
 * not done within client->request_timeout seconds (0: no limit). */
int cm_net_client_transfer(struct cm_net_client *client, bool sending, void *buffer, size_t length,
                           double timeout);

/* ---- the server -------------------------------------------------------------------------- */

struct cm_net_server_options {
    const char *bind; /* address to listen on; NULL or "" for 127.0.0.1 (loopback only) */
    int port;
    /* When set, a connection whose hello does not carry this token is refused (EACCES)
     * before the server allocates anything for it. */
    const char *token;
    size_t token_len;
    uint64_t max_memory; /* buffer memory for all connections; 0: CM_NET_DEFAULT_MAX_MEMORY */
    bool once;           /* return after the first test's results were asked for */
    void (*log)(void *arg, const char *line); /* one line per event; called from any thread */
    void *log_arg;
};

struct cm_net_server;

/* Binds and listens. Returns 0 or -errno with a sentence (port in use, bad address). */
int cm_net_server_open(struct cm_net_server **out, const struct cm_net_server_options *options,
                       char *error, size_t error_size);
/* The port it listens on (useful with port 0). */
int cm_net_server_port(const struct cm_net_server *server);
/* Serves until SIGINT (or one test with `once`). Connections are served on threads of their
 * own. Returns the number of tests whose results were asked for. */
uint64_t cm_net_server_run(struct cm_net_server *server);
void cm_net_server_close(struct cm_net_server *server);

#endif
