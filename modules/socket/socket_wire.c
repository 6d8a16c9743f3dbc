/* The wire shared by the TCP baseline client and server; see socket_wire.h. */
#include "socket_wire.h"
#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cm_net_fail(char *error, size_t error_size, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_size, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- encoding ----------------------------------------------------------------------------- */

void cm_net_hello_encode(unsigned char *p, const struct hello *h)
{
    memset(p, 0, HELLO_SIZE);
    put32(p, NET_MAGIC);
    p[4] = NET_VERSION;
    put32(p + 8, h->kind);
    put64(p + 16, h->test_id);
    put32(p + 24, h->stream);
    put32(p + 28, h->size);
    put32(p + 32, h->response);
    put32(p + 36, h->token_len);
}

/* ---- blocking helpers with a deadline (handshakes, results) ------------------------------- */

/* Waits until fd is ready for `events` or the deadline passes; 0, -ETIMEDOUT, -EINTR. */
int cm_net_wait_ready(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = cm_now_ns();
        if (now >= deadline_ns)
            return -ETIMEDOUT;
        uint64_t left_ms = (deadline_ns - now) / 1000000 + 1;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left_ms > 1000 ? 1000 : (int)left_ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
        if (cm_interrupted())
            return -EINTR;
    }
}

/* Reads or writes exactly `length` bytes on a non-blocking fd before the deadline. */
int cm_net_transfer_all(int fd, void *buffer, size_t length, bool writing, uint64_t deadline_ns)
{
    size_t done = 0;
    while (done < length) {
        ssize_t n = writing ? send(fd, (char *)buffer + done, length - done, MSG_NOSIGNAL)
                            : recv(fd, (char *)buffer + done, length - done, 0);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n == 0)
            return -ECONNRESET;
        if (errno != EAGAIN && errno != EINTR)
            return -errno;
        int rc = cm_net_wait_ready(fd, writing ? POLLOUT : POLLIN, deadline_ns);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void cm_net_set_nonblocking(int fd, bool on)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

uint32_t cm_net_total_retransmits(int fd)
{
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) < 0)
        return 0;
    return info.tcpi_total_retrans;
}
