/* The TCP baseline server, `cephmark netserver`; see socket_net.h. */
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

/* How many finished streams' figures the server keeps (RESULTS_WAIT_NS: for how long). */
#define RESULTS_KEPT    1024
#define MAX_CONNECTIONS 1024
/* a connection's thread needs little stack: its buffer is on the heap, within the caps */
#define CONNECTION_STACK (256u << 10)

/* ---- the server --------------------------------------------------------------------------- */

struct stream_result {
    uint64_t test_id;
    uint32_t stream;
    bool used, done;
    uint64_t bytes, elapsed_ns;
    uint32_t retransmits;
};

struct cm_net_server {
    struct cm_net_server_options options;
    int listen_fd;
    int port;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct stream_result results[RESULTS_KEPT];
    unsigned next_result;
    int connections[MAX_CONNECTIONS]; /* fds being served, -1 free */
    unsigned active;
    uint64_t tests_answered;
    uint64_t buffer_memory; /* held by the connections' buffers, within max_memory */
    uint64_t max_memory;
    char token[CM_NET_MAX_TOKEN];
    size_t token_len;
    bool stopping;
};

struct connection {
    struct cm_net_server *server;
    int fd;
    unsigned index;
    char peer[80]; /* the client's address, for the log */
};

static void server_log(struct cm_net_server *server, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void server_log(struct cm_net_server *server, const char *fmt, ...)
{
    if (!server->options.log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    server->options.log(server->options.log_arg, line);
}

/* Records a stream's figures (the slot is taken when the stream starts). */
static struct stream_result *result_slot(struct cm_net_server *server, uint64_t test_id,
                                         uint32_t stream)
{
    pthread_mutex_lock(&server->lock);
    struct stream_result *r = &server->results[server->next_result];
    server->next_result = (server->next_result + 1) % RESULTS_KEPT;
    *r = (struct stream_result){.test_id = test_id, .stream = stream, .used = true};
    pthread_mutex_unlock(&server->lock);
    return r;
}

static void result_done(struct cm_net_server *server, struct stream_result *r, uint64_t test_id,
                        uint64_t bytes, uint64_t elapsed_ns, uint32_t retransmits)
{
    pthread_mutex_lock(&server->lock);
    if (r->test_id == test_id) { /* not recycled meanwhile */
        r->bytes = bytes;
        r->elapsed_ns = elapsed_ns;
        r->retransmits = retransmits;
        r->done = true;
    }
    pthread_cond_broadcast(&server->changed);
    pthread_mutex_unlock(&server->lock);
}

/* The buffer a connection of this kind needs: never more than CM_NET_CONNECTION_BUFFER,
 * whatever the hello asked for. A stream's data passes through it in pieces: the client's
 * ops are sizes on the wire, not sizes in the server's memory. */
static size_t buffer_size_for(const struct hello *h)
{
    size_t want;
    switch (h->kind) {
    case KIND_SINK:
        want = CM_NET_CONNECTION_BUFFER;
        break;
    case KIND_SOURCE:
        want = h->size ? h->size : 131072;
        break;
    case KIND_ECHO:
        want = h->size > h->response ? h->size : h->response;
        want = want ? want : 1;
        break;
    default:
        return 0;
    }
    return want < CM_NET_CONNECTION_BUFFER ? want : CM_NET_CONNECTION_BUFFER;
}

static void serve_sink(struct cm_net_server *server, int fd, const struct hello *h,
                       unsigned char *buffer, size_t size)
{
    struct stream_result *r = result_slot(server, h->test_id, h->stream);
    uint64_t bytes = 0, first = 0, last = 0;
    for (;;) {
        ssize_t n = recv(fd, buffer, size, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        last = cm_now_ns();
        if (!bytes)
            first = last;
        bytes += (uint64_t)n;
    }
    result_done(server, r, h->test_id, bytes, last - first, cm_net_total_retransmits(fd));
}

static void serve_source(struct cm_net_server *server, int fd, const struct hello *h,
                         unsigned char *buffer, size_t size)
{
    struct stream_result *r = result_slot(server, h->test_id, h->stream);
    uint64_t bytes = 0, start = cm_now_ns(), seed = h->test_id;
    for (size_t i = 0; i < size; i++)
        buffer[i] = (unsigned char)cm_splitmix64(&seed);
    for (;;) {
        ssize_t n = send(fd, buffer, size, MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break; /* the client closed: EPIPE or ECONNRESET */
        }
        bytes += (uint64_t)n;
    }
    result_done(server, r, h->test_id, bytes, cm_now_ns() - start, cm_net_total_retransmits(fd));
}

/* Requests and responses of up to 64 MiB each go through the connection's buffer piece by
 * piece: the server reads a whole request, then writes a whole response. */
static void serve_echo(struct cm_net_server *server, int fd, const struct hello *h,
                       unsigned char *buffer, size_t size)
{
    struct stream_result *r = result_slot(server, h->test_id, h->stream);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    size_t request = h->size ? h->size : 1, response = h->response ? h->response : 1;
    memset(buffer, 0, size);
    uint64_t count = 0, start = cm_now_ns();
    for (;;) {
        size_t done = 0;
        while (done < request) {
            size_t want = request - done < size ? request - done : size;
            ssize_t n = recv(fd, buffer, want, 0);
            if (n <= 0)
                goto out;
            done += (size_t)n;
        }
        for (done = 0; done < response;) {
            size_t want = response - done < size ? response - done : size;
            ssize_t n = send(fd, buffer, want, MSG_NOSIGNAL);
            if (n <= 0)
                goto out;
            done += (size_t)n;
        }
        count++;
    }
out:
    result_done(server, r, h->test_id, count * (request + response), cm_now_ns() - start,
                cm_net_total_retransmits(fd));
}

/* Answers a RESULTS query: waits (bounded) until every stream of the test is done, then
 * sends one record per stream. */
static void serve_results(struct cm_net_server *server, int fd, const struct hello *h)
{
    uint32_t streams = h->size > CM_NET_MAX_STREAMS ? CM_NET_MAX_STREAMS : h->size;
    struct stream_result found[CM_NET_MAX_STREAMS];
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += RESULTS_WAIT_NS / 1000000000ULL;
    pthread_mutex_lock(&server->lock);
    for (;;) {
        unsigned done = 0;
        memset(found, 0, sizeof found);
        for (unsigned i = 0; i < RESULTS_KEPT; i++) {
            struct stream_result *r = &server->results[i];
            // cppcheck-suppress knownConditionTrueFalse ; streams comes from the peer's header
            if (r->used && r->test_id == h->test_id && r->stream < streams) {
                found[r->stream] = *r;
                done += r->done;
            }
        }
        // cppcheck-suppress knownConditionTrueFalse ; as above: cppcheck takes streams for 0
        if (done >= streams || server->stopping ||
            pthread_cond_timedwait(&server->changed, &server->lock, &deadline) == ETIMEDOUT)
            break;
    }
    server->tests_answered++;
    pthread_mutex_unlock(&server->lock);
    uint64_t bytes = 0, elapsed = 0;
    unsigned char record[RECORD_SIZE];
    for (uint32_t i = 0; i < streams; i++) {
        memset(record, 0, sizeof record);
        put64(record, found[i].bytes);
        put64(record + 8, found[i].elapsed_ns);
        put32(record + 16, found[i].retransmits);
        put32(record + 20, found[i].done);
        if (send(fd, record, sizeof record, MSG_NOSIGNAL) != (ssize_t)sizeof record)
            break;
        bytes += found[i].bytes;
        if (found[i].elapsed_ns > elapsed)
            elapsed = found[i].elapsed_ns;
    }
    server_log(server, "test %016" PRIx64 ": %u streams, %" PRIu64 " bytes in %.2f s (%.2f Gbit/s)",
               h->test_id, streams, bytes, (double)elapsed / 1e9,
               elapsed ? (double)bytes * 8 / ((double)elapsed / 1e9) / 1e9 : 0.0);
}

/* Compares the whole of both, so the time taken says nothing of where they differ. */
static bool token_matches(const struct cm_net_server *server, const char *token, size_t length)
{
    unsigned char difference = length != server->token_len;
    for (size_t i = 0; i < CM_NET_MAX_TOKEN; i++)
        difference |= (unsigned char)((i < length ? token[i] : 0) ^
                                      (i < server->token_len ? server->token[i] : 0));
    return difference == 0;
}

/* Reads and checks the hello (and its token) before anything is allocated for the
 * connection, then takes the connection's buffer within the server's memory cap. Returns
 * the status to answer: 0, EPROTO, EINVAL, EACCES (token), ENOBUFS (cap), ENOMEM. */
static uint32_t admit(struct cm_net_server *server, struct connection *c, int fd, uint64_t deadline,
                      struct hello *h, unsigned char **buffer, size_t *size)
{
    unsigned char message[HELLO_SIZE];
    char token[CM_NET_MAX_TOKEN];
    if (cm_net_transfer_all(fd, message, HELLO_SIZE, false, deadline) < 0)
        return EPROTO;
    if (get32(message) != NET_MAGIC || message[4] != NET_VERSION)
        return EPROTO;
    h->kind = get32(message + 8);
    h->test_id = get64(message + 16);
    h->stream = get32(message + 24);
    h->size = get32(message + 28);
    h->response = get32(message + 32);
    h->token_len = get32(message + 36);
    if (h->token_len > CM_NET_MAX_TOKEN)
        return EINVAL;
    if (h->token_len && cm_net_transfer_all(fd, token, h->token_len, false, deadline) < 0)
        return EPROTO;
    if (server->token_len && !token_matches(server, token, h->token_len)) {
        server_log(server, "refused %s: %s token", c->peer, h->token_len ? "a wrong" : "no");
        return EACCES;
    }
    if (h->kind < KIND_SINK || h->kind > KIND_RESULTS || h->size > (64U << 20) ||
        h->response > (64U << 20))
        return EINVAL;
    *size = buffer_size_for(h);
    if (*size == 0)
        return 0;
    pthread_mutex_lock(&server->lock);
    bool room = server->buffer_memory + *size <= server->max_memory;
    if (room)
        server->buffer_memory += *size;
    pthread_mutex_unlock(&server->lock);
    if (!room) {
        server_log(server, "refused %s: the connections hold the %" PRIu64 " MiB memory cap",
                   c->peer, server->max_memory >> 20);
        *size = 0;
        return ENOBUFS;
    }
    *buffer = malloc(*size);
    return *buffer ? 0 : ENOMEM;
}

static void *serve_connection(void *arg)
{
    struct connection *c = arg;
    struct cm_net_server *server = c->server;
    int fd = c->fd;
    uint64_t deadline = cm_now_ns() + 10ULL * 1000000000ULL;
    cm_net_set_nonblocking(fd, true);
    struct hello h = {0};
    unsigned char *buffer = NULL;
    size_t size = 0;
    uint32_t status = admit(server, c, fd, deadline, &h, &buffer, &size);
    unsigned char answer[ANSWER_SIZE] = {0};
    put32(answer, NET_MAGIC);
    put32(answer + 4, status);
    int rc = cm_net_transfer_all(fd, answer, ANSWER_SIZE, true, deadline);
    cm_net_set_nonblocking(fd, false);
    if (rc == 0 && status == 0) {
        switch (h.kind) {
        case KIND_SINK:
            serve_sink(server, fd, &h, buffer, size);
            break;
        case KIND_SOURCE:
            serve_source(server, fd, &h, buffer, size);
            break;
        case KIND_ECHO:
            serve_echo(server, fd, &h, buffer, size);
            break;
        default:
            serve_results(server, fd, &h);
            break;
        }
    }
    free(buffer);
    pthread_mutex_lock(&server->lock);
    server->buffer_memory -= size; /* 0 when none was taken */
    server->connections[c->index] = -1;
    server->active--;
    close(fd);
    pthread_cond_broadcast(&server->changed);
    pthread_mutex_unlock(&server->lock);
    free(c);
    return NULL;
}

/* The port a bound socket listens on (0 if the kernel cannot say, not expected). The address
 * is copied out of the storage by family rather than read through a cast pointer. */
static int bound_port(int fd)
{
    struct sockaddr_storage bound;
    memset(&bound, 0, sizeof bound);
    socklen_t length = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &length) < 0)
        return 0;
    if (bound.ss_family == AF_INET6) {
        struct sockaddr_in6 address;
        memcpy(&address, &bound, sizeof address);
        return ntohs(address.sin6_port);
    }
    struct sockaddr_in address;
    memcpy(&address, &bound, sizeof address);
    return ntohs(address.sin_port);
}

int cm_net_server_open(struct cm_net_server **out, const struct cm_net_server_options *options,
                       char *error, size_t error_size)
{
    *out = NULL;
    /* loopback unless told otherwise: serving the network is a choice (--bind) */
    const char *bind_to = options->bind && options->bind[0] ? options->bind : "127.0.0.1";
    char port[16], where[300];
    snprintf(port, sizeof port, "%d", options->port);
    snprintf(where, sizeof where, "%s:%d", bind_to, options->port);
    if (options->token_len > CM_NET_MAX_TOKEN)
        return cm_net_fail(error, error_size, -EINVAL, "the token is longer than %d bytes",
                           CM_NET_MAX_TOKEN);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *addresses = NULL;
    int gai = getaddrinfo(bind_to, port, &hints, &addresses);
    if (gai != 0)
        return cm_net_fail(error, error_size, -EINVAL, "cannot listen on %s: %s", where,
                           gai_strerror(gai));
    int fd = socket(addresses->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    int rc = 0;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, addresses->ai_addr, addresses->ai_addrlen) < 0 || listen(fd, 128) < 0)
        rc = -errno;
    freeaddrinfo(addresses);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        if (rc == -EADDRINUSE)
            return cm_net_fail(
                error, error_size, rc,
                "cannot listen on %s: the port is in use (another netserver or iperf3?); "
                "pick another with --port",
                where);
        return cm_net_fail(error, error_size, rc, "cannot listen on %s: %s", where, strerror(-rc));
    }
    struct cm_net_server *server = calloc(1, sizeof *server);
    if (!server) {
        close(fd);
        return cm_net_fail(error, error_size, -ENOMEM, "out of memory");
    }
    server->options = *options;
    server->options.token = NULL; /* kept in the server's own copy */
    server->token_len = options->token_len;
    if (options->token_len)
        memcpy(server->token, options->token, options->token_len);
    server->max_memory = options->max_memory ? options->max_memory : CM_NET_DEFAULT_MAX_MEMORY;
    server->listen_fd = fd;
    server->port = bound_port(fd);
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->changed, NULL);
    for (unsigned i = 0; i < MAX_CONNECTIONS; i++)
        server->connections[i] = -1;
    *out = server;
    return 0;
}

int cm_net_server_port(const struct cm_net_server *server)
{
    return server->port;
}

static void start_connection(struct cm_net_server *server, int fd, const char *peer)
{
    pthread_mutex_lock(&server->lock);
    unsigned index = 0;
    while (index < MAX_CONNECTIONS && server->connections[index] >= 0)
        index++;
    struct connection *c = index < MAX_CONNECTIONS ? malloc(sizeof *c) : NULL;
    if (!c) {
        pthread_mutex_unlock(&server->lock);
        server_log(server, "refusing a connection: %u connections are open", server->active);
        close(fd);
        return;
    }
    server->connections[index] = fd;
    server->active++;
    pthread_mutex_unlock(&server->lock);
    *c = (struct connection){.server = server, .fd = fd, .index = index};
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, CONNECTION_STACK);
    if (pthread_create(&thread, &attributes, serve_connection, c) != 0) {
        pthread_mutex_lock(&server->lock);
        server->connections[index] = -1;
        server->active--;
        pthread_mutex_unlock(&server->lock);
        close(fd);
        free(c);
    }
    pthread_attr_destroy(&attributes);
}

uint64_t cm_net_server_run(struct cm_net_server *server)
{
    while (!cm_interrupted()) {
        pthread_mutex_lock(&server->lock);
        bool finished = server->options.once && server->tests_answered > 0;
        pthread_mutex_unlock(&server->lock);
        if (finished)
            break;
        struct pollfd fds[2] = {{.fd = server->listen_fd, .events = POLLIN},
                                {.fd = cm_interrupt_fd(), .events = POLLIN}};
        int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, 200);
        if (n <= 0 || !(fds[0].revents & POLLIN))
            continue;
        struct sockaddr_storage from;
        socklen_t from_len = sizeof from;
        int fd = accept4(server->listen_fd, (struct sockaddr *)&from, &from_len, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char host[64] = "?", service[16] = "?", peer[80];
        getnameinfo((struct sockaddr *)&from, from_len, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        snprintf(peer, sizeof peer, "%s:%s", host, service);
        start_connection(server, fd, peer);
    }
    return server->tests_answered;
}

void cm_net_server_close(struct cm_net_server *server)
{
    if (!server)
        return;
    close(server->listen_fd);
    /* end the connections still served, and wait (bounded) for their threads */
    pthread_mutex_lock(&server->lock);
    server->stopping = true;
    for (unsigned i = 0; i < MAX_CONNECTIONS; i++)
        if (server->connections[i] >= 0)
            shutdown(server->connections[i], SHUT_RDWR);
    pthread_cond_broadcast(&server->changed);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    while (server->active > 0 &&
           pthread_cond_timedwait(&server->changed, &server->lock, &deadline) != ETIMEDOUT)
        ;
    bool idle = server->active == 0;
    pthread_mutex_unlock(&server->lock);
    if (idle) { /* else a thread still holds it: leak rather than free under it */
        pthread_mutex_destroy(&server->lock);
        pthread_cond_destroy(&server->changed);
        free(server);
    }
}
