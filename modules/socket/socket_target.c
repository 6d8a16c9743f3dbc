/* The TCP baseline client: the op engine target of socket.bench; see socket_net.h. */
#include "socket_wire.h"
#include "interrupt.h"
#include "splitmix.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the client --------------------------------------------------------------------------- */

struct cm_net_stream {
    int fd;
    struct cm_op *op;
    unsigned char *buffer;
    uint32_t done;  /* bytes of the current op's phase moved */
    bool active;    /* an op is in flight */
    bool receiving; /* rr: the request went out, the response is being read */
    bool blocked;   /* waiting for epoll */
    bool broken;    /* failed or closed by the server: its slot retires */
    struct cm_net_client *client;
};

/* Connects one socket to the resolved address within the deadline. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline_ns, int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
        } else if ((rc = cm_net_wait_ready(fd, POLLOUT, deadline_ns)) == 0) {
            int so_error = 0;
            socklen_t length = sizeof so_error;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &length);
            rc = -so_error;
        }
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

static int handshake(int fd, const struct hello *h, const char *token, uint64_t deadline_ns)
{
    unsigned char message[HELLO_SIZE + CM_NET_MAX_TOKEN];
    cm_net_hello_encode(message, h);
    if (h->token_len)
        memcpy(message + HELLO_SIZE, token, h->token_len);
    int rc = cm_net_transfer_all(fd, message, HELLO_SIZE + h->token_len, true, deadline_ns);
    if (rc < 0)
        return rc;
    unsigned char answer[ANSWER_SIZE];
    rc = cm_net_transfer_all(fd, answer, ANSWER_SIZE, false, deadline_ns);
    if (rc < 0)
        return rc == -ECONNRESET ? -EPROTO : rc;
    if (get32(answer) != NET_MAGIC)
        return -EPROTO;
    uint32_t status = get32(answer + 4);
    return status ? -(int)status : 0;
}

static int resolve(const struct cm_net_options *o, struct addrinfo **result, char *error,
                   size_t error_size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    int rc = getaddrinfo(o->host, port, &hints, result);
    if (rc != 0)
        return cm_net_fail(error, error_size, -EHOSTUNREACH, "cannot resolve %s: %s", o->host,
                           gai_strerror(rc));
    return 0;
}

static int connect_error(const struct cm_net_client *client, int rc, char *error, size_t error_size)
{
    if (rc == -ECONNREFUSED)
        return cm_net_fail(
            error, error_size, rc,
            "cannot connect to %s: connection refused (is `cephmark netserver` running "
            "there?)",
            client->peer);
    if (rc == -ETIMEDOUT)
        return cm_net_fail(error, error_size, rc, "cannot connect to %s: no answer within %g s",
                           client->peer, client->options.connect_timeout);
    if (rc == -EPROTO)
        return cm_net_fail(
            error, error_size, rc,
            "%s did not answer as a cephmark netserver (another service on that port?)",
            client->peer);
    if (rc == -EINTR)
        return cm_net_fail(error, error_size, rc, "interrupted while connecting to %s",
                           client->peer);
    if (rc == -EACCES)
        return cm_net_fail(
            error, error_size, rc,
            "%s refused the token (%s): give the netserver's token with token_file = or "
            "$CEPHMARK_NET_TOKEN",
            client->peer, client->options.token_len ? "a different one" : "none was given");
    if (rc == -ENOBUFS)
        return cm_net_fail(
            error, error_size, rc,
            "%s is at its memory cap and refused the connection: fewer streams, or a "
            "netserver with a larger --max-memory",
            client->peer);
    return cm_net_fail(error, error_size, rc, "cannot connect to %s: %s", client->peer,
                       strerror(-rc));
}

int cm_net_client_open(struct cm_net_client *client, const struct cm_net_options *options,
                       char *error, size_t error_size)
{
    memset(client, 0, sizeof *client);
    client->options = *options;
    client->epoll_fd = -1;
    const struct cm_net_options *o = &client->options;
    snprintf(client->peer, sizeof client->peer, "%s%s%s:%d", strchr(o->host, ':') ? "[" : "",
             o->host, strchr(o->host, ':') ? "]" : "", o->port);
    if (o->streams == 0 || o->streams > CM_NET_MAX_STREAMS)
        return cm_net_fail(error, error_size, -EINVAL, "streams must be between 1 and %d, got %u",
                           CM_NET_MAX_STREAMS, o->streams);
    if (o->buffer_size == 0 || (o->mode == CM_NET_RR && o->response_size == 0))
        return cm_net_fail(error, error_size, -EINVAL, "buffer sizes must be positive");
    if (o->token_len > CM_NET_MAX_TOKEN)
        return cm_net_fail(error, error_size, -EINVAL, "the token is longer than %d bytes",
                           CM_NET_MAX_TOKEN);
    uint64_t seed = cm_now_ns() ^ ((uint64_t)getpid() << 40);
    client->test_id = cm_splitmix64(&seed);
    size_t per_stream = o->buffer_size > o->response_size ? o->buffer_size : o->response_size;
    client->streams = calloc(o->streams, sizeof *client->streams);
    client->buffers = malloc(per_stream * o->streams);
    client->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (!client->streams || !client->buffers || client->epoll_fd < 0) {
        cm_net_client_close(client);
        return cm_net_fail(error, error_size, -ENOMEM, "out of memory for %u streams", o->streams);
    }
    for (size_t i = 0; i < per_stream * o->streams; i++)
        client->buffers[i] = (unsigned char)cm_splitmix64(&seed);
    for (unsigned i = 0; i < o->streams; i++)
        client->streams[i].fd = -1;

    struct addrinfo *addresses = NULL;
    int rc = resolve(o, &addresses, error, error_size);
    if (rc < 0) {
        cm_net_client_close(client);
        return rc;
    }
    uint64_t deadline = cm_now_ns() + (uint64_t)(o->connect_timeout * 1e9);
    for (unsigned i = 0; i < o->streams && rc == 0; i++) {
        struct cm_net_stream *stream = &client->streams[i];
        stream->client = client;
        stream->buffer = client->buffers + per_stream * i;
        rc = -ECONNREFUSED;
        for (const struct addrinfo *ai = addresses; ai && rc < 0; ai = ai->ai_next)
            rc = connect_one(ai, deadline, &stream->fd);
        if (rc < 0)
            break;
        struct hello h = {
            .kind = o->mode == CM_NET_SEND   ? KIND_SINK
                    : o->mode == CM_NET_RECV ? KIND_SOURCE
                                             : KIND_ECHO,
            .test_id = client->test_id,
            .stream = i,
            .size = o->buffer_size,
            .response = o->response_size,
            .token_len = (uint32_t)o->token_len,
        };
        rc = handshake(stream->fd, &h, o->token, deadline);
        if (rc < 0)
            break;
        if (o->mode == CM_NET_RR) {
            int one = 1;
            setsockopt(stream->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = stream};
        if (epoll_ctl(client->epoll_fd, EPOLL_CTL_ADD, stream->fd, &event) < 0)
            rc = -errno;
        client->n_streams = i + 1;
    }
    freeaddrinfo(addresses);
    if (rc < 0) {
        connect_error(client, rc, error, error_size);
        cm_net_client_close(client);
        return rc;
    }
    return 0;
}

/* Moves the stream's current op forward until it completes or the socket would block. */
static void advance(struct cm_net_stream *stream)
{
    struct cm_net_client *client = stream->client;
    const struct cm_net_options *o = &client->options;
    for (;;) {
        bool writing = o->mode == CM_NET_SEND || (o->mode == CM_NET_RR && !stream->receiving);
        uint32_t want =
            o->mode == CM_NET_RR && stream->receiving ? o->response_size : o->buffer_size;
        ssize_t n = writing ? send(stream->fd, stream->buffer + stream->done, want - stream->done,
                                   MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(stream->fd, stream->buffer + stream->done, want - stream->done,
                                   MSG_DONTWAIT);
        int64_t result = 0;
        if (n > 0) {
            stream->done += (uint32_t)n;
            if (stream->done < want)
                continue;
            if (o->mode == CM_NET_RR && !stream->receiving) {
                stream->receiving = true;
                stream->done = 0;
                continue;
            }
            result = (int64_t)stream->op->length;
        } else if (n == 0) {
            result = -ECONNRESET; /* the server closed the stream */
        } else if (errno == EAGAIN || errno == EINTR) {
            if (!stream->blocked) {
                stream->blocked = true;
                client->waiting++;
            }
            return;
        } else {
            result = -errno;
        }
        if (stream->blocked) {
            stream->blocked = false;
            client->waiting--;
        }
        stream->broken = result < 0;
        stream->active = false;
        cm_engine_complete(stream->op, result);
        return;
    }
}

static int client_slot_init(void *self, struct cm_op *op)
{
    struct cm_net_client *client = self;
    if (op->slot >= client->n_streams)
        return -EINVAL;
    client->streams[op->slot].op = op;
    op->target_slot = &client->streams[op->slot];
    return 0;
}

static int client_submit(void *self, struct cm_op *op)
{
    struct cm_net_client *client = self;
    struct cm_net_stream *stream = op->target_slot;
    const struct cm_net_options *o = &client->options;
    if (stream->broken)
        return CM_TARGET_SLOT_DONE; /* one error per broken stream, not one per turn */
    op->kind = o->mode == CM_NET_SEND   ? CM_OP_WRITE
               : o->mode == CM_NET_RECV ? CM_OP_READ
                                        : CM_OP_OTHER;
    op->length =
        o->mode == CM_NET_RR ? (uint64_t)o->buffer_size + o->response_size : o->buffer_size;
    stream->done = 0;
    stream->receiving = false;
    stream->active = true;
    advance(stream);
    return 0;
}

/* Moves the caller's request forward until it completes or the socket would block (the
 * stream is edge-triggered in epoll: the next event comes once it is ready again). */
static void advance_request(struct cm_net_client *client)
{
    int fd = client->streams[0].fd;
    size_t total = client->request_send_length + client->request_receive_length;
    int64_t result = 0;
    while (client->request_done < total) {
        bool sending = client->request_done < client->request_send_length;
        ssize_t n =
            sending
                ? send(fd, client->request_send + client->request_done,
                       client->request_send_length - client->request_done,
                       MSG_NOSIGNAL | MSG_DONTWAIT)
                : recv(fd,
                       client->request_receive + client->request_done - client->request_send_length,
                       total - client->request_done, MSG_DONTWAIT);
        if (n > 0) {
            client->request_done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        result = n == 0 ? -ECONNRESET : -errno;
        break;
    }
    struct cm_op *op = client->request_op;
    client->request_op = NULL;
    cm_engine_complete(op, result < 0 ? result : (int64_t)total);
}

static int client_submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_net_client *client = self;
    if (client->n_streams == 0 || client->streams[0].fd < 0)
        return -EBADF;
    if (client->request_op) {
        snprintf(request->message, sizeof request->message,
                 "the connection to %s is busy with another worker's request (one connection "
                 "per worker)",
                 client->peer);
        return -EBUSY;
    }
    bool send_part = request->verb == CM_REQUEST_SEND || request->verb == CM_REQUEST_EXCHANGE;
    bool receive_part = request->verb == CM_REQUEST_RECEIVE || request->verb == CM_REQUEST_EXCHANGE;
    if (!send_part && !receive_part)
        return -EOPNOTSUPP;
    client->serves_requests = true;
    client->request_op = op;
    client->request_deadline_ns = client->request_timeout > 0
                                      ? cm_now_ns() + (uint64_t)(client->request_timeout * 1e9)
                                      : UINT64_MAX;
    client->request_send = send_part ? request->data : NULL;
    client->request_send_length = send_part ? request->data_length : 0;
    client->request_receive = receive_part ? request->buffer : NULL;
    client->request_receive_length = receive_part ? request->length : 0;
    client->request_done = 0;
    op->kind = !receive_part ? CM_OP_WRITE : !send_part ? CM_OP_READ : CM_OP_OTHER;
    op->length = client->request_send_length + client->request_receive_length;
    advance_request(client);
    return 0;
}

/* Resumes the streams epoll says are ready; nothing to ask while no stream waits. A client
 * serving requests takes its events even then: its epoll fd sits in its caller's wait set,
 * where an event left pending would keep waking the caller's loop. */
static void client_poll(void *self, uint64_t now_ns)
{
    (void)now_ns;
    struct cm_net_client *client = self;
    if (client->waiting == 0 && !client->request_op && !client->serves_requests)
        return;
    struct epoll_event events[64];
    int n = epoll_wait(client->epoll_fd, events, 64, 0);
    for (int i = 0; i < n; i++) {
        struct cm_net_stream *stream = events[i].data.ptr;
        if (stream->active)
            advance(stream);
        else if (client->request_op && stream == &client->streams[0])
            advance_request(client);
    }
    if (client->request_op && cm_now_ns() >= client->request_deadline_ns) {
        /* the stream is left mid-exchange: its next request would read stale bytes */
        struct cm_op *op = client->request_op;
        client->request_op = NULL;
        shutdown(client->streams[0].fd, SHUT_RDWR);
        cm_engine_complete(op, -ETIMEDOUT);
    }
}

static uint64_t client_next_deadline(void *self)
{
    struct cm_net_client *client = self;
    return client->request_op ? client->request_deadline_ns : UINT64_MAX;
}

int cm_net_client_transfer(struct cm_net_client *client, bool sending, void *buffer, size_t length,
                           double timeout)
{
    if (client->n_streams == 0 || client->streams[0].fd < 0)
        return -EBADF;
    if (client->request_op)
        return -EBUSY;
    int rc = cm_net_transfer_all(client->streams[0].fd, buffer, length, sending,
                                 cm_now_ns() + (uint64_t)(timeout * 1e9));
    if (rc == -ETIMEDOUT) /* cut mid-exchange, as a timed-out request is */
        shutdown(client->streams[0].fd, SHUT_RDWR);
    return rc;
}

static int client_wait_fd(void *self)
{
    struct cm_net_client *client = self;
    return client->epoll_fd;
}

const struct cm_target_ops cm_net_client_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "socket",
    .slot_init = client_slot_init,
    .submit = client_submit,
    .poll = client_poll,
    .wait_fd = client_wait_fd,
    .next_deadline = client_next_deadline,
    .submit_request = client_submit_request,
};

uint32_t cm_net_client_second(struct cm_net_client *client)
{
    uint32_t total = 0;
    for (unsigned i = 0; i < client->n_streams; i++)
        total += cm_net_total_retransmits(client->streams[i].fd);
    if (client->series_len == client->series_cap) {
        size_t cap = client->series_cap ? client->series_cap * 2 : 64;
        uint32_t *grown = realloc(client->retransmits_series, cap * sizeof *grown);
        if (!grown)
            return total;
        client->retransmits_series = grown;
        client->series_cap = cap;
    }
    client->retransmits_series[client->series_len++] = total - client->retransmits_seen;
    client->retransmits_seen = total;
    return total;
}

int cm_net_client_finish(struct cm_net_client *client, char *error, size_t error_size)
{
    const struct cm_net_options *o = &client->options;
    for (unsigned i = 0; i < client->n_streams; i++) {
        struct cm_net_stream *stream = &client->streams[i];
        if (o->mode == CM_NET_SEND) {
            shutdown(stream->fd, SHUT_WR); /* the server counts up to here */
        } else {
            close(stream->fd);
            stream->fd = -1;
        }
    }
    struct addrinfo *addresses = NULL;
    int rc = resolve(o, &addresses, error, error_size);
    if (rc < 0)
        return rc;
    uint64_t deadline = cm_now_ns() + (uint64_t)(o->connect_timeout * 1e9) + RESULTS_WAIT_NS;
    int fd = -1;
    rc = -ECONNREFUSED;
    for (const struct addrinfo *ai = addresses; ai && rc < 0; ai = ai->ai_next)
        rc = connect_one(ai, deadline, &fd);
    freeaddrinfo(addresses);
    if (rc == 0) {
        struct hello h = {.kind = KIND_RESULTS,
                          .test_id = client->test_id,
                          .size = client->n_streams,
                          .token_len = (uint32_t)o->token_len};
        rc = handshake(fd, &h, o->token, deadline);
    }
    unsigned char record[RECORD_SIZE];
    for (unsigned i = 0; rc == 0 && i < client->n_streams; i++) {
        rc = cm_net_transfer_all(fd, record, RECORD_SIZE, false, deadline);
        if (rc == 0) {
            client->remote[i] = (struct cm_net_remote){
                .bytes = get64(record),
                .elapsed_ns = get64(record + 8),
                .retransmits = get32(record + 16),
                .done = get32(record + 20) != 0,
            };
        }
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        return cm_net_fail(error, error_size, rc, "cannot get the server's figures from %s: %s",
                           client->peer, strerror(-rc));
    client->have_remote = true;
    return 0;
}

void cm_net_client_close(struct cm_net_client *client)
{
    for (unsigned i = 0; client->streams && i < client->options.streams; i++)
        if (client->streams[i].fd >= 0)
            close(client->streams[i].fd);
    free(client->streams);
    client->streams = NULL;
    free(client->buffers);
    client->buffers = NULL;
    free(client->retransmits_series);
    client->retransmits_series = NULL;
    client->series_len = client->series_cap = 0;
    if (client->epoll_fd >= 0)
        close(client->epoll_fd);
    client->epoll_fd = -1;
    client->n_streams = 0;
}
