/* The HTTP/1.1 response parser of the native HTTP transport; see http_response.h. */
#include "http_response.h"
#include "hex.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum phase {
    HEAD,        /* the status line and headers */
    BODY,        /* Content-Length body: `remaining` bytes to go */
    CHUNK_SIZE,  /* chunked: the hex size line */
    CHUNK_DATA,  /* chunked: `remaining` bytes of chunk data */
    CHUNK_CRLF,  /* chunked: the line end after a chunk's data */
    TRAILER,     /* chunked: trailer lines up to the empty one */
    UNTIL_CLOSE, /* no length given: the body ends when the server closes */
    FINISHED,
};

void cm_http_answer_start(struct cm_http_answer *answer, bool head_request, unsigned char *body,
                          size_t capacity)
{
    answer->phase = HEAD;
    answer->head_request = head_request;
    answer->chunk_line_seen = answer->line_empty = false;
    answer->head_len = answer->scanned = 0;
    answer->remaining = 0;
    answer->status = 0;
    answer->keep_alive = true;
    answer->body = body;
    answer->capacity = body ? capacity : 0;
    answer->received = 0;
    answer->error = NULL;
    answer->grow = false;
    answer->has_content_length = false;
    answer->content_length = 0;
    answer->etag[0] = answer->content_type[0] = '\0';
}

static bool direct(const struct cm_http_answer *answer)
{
    return answer->phase == BODY && answer->received < answer->capacity;
}

void cm_http_answer_space(struct cm_http_answer *answer, char **into, size_t *room)
{
    if (answer->phase == HEAD) {
        *into = answer->head + answer->head_len;
        *room = sizeof answer->head - answer->head_len;
        return;
    }
    if (direct(answer)) {
        *into = (char *)answer->body + answer->received;
        *room = answer->capacity - answer->received;
    } else {
        *into = answer->head;
        *room = sizeof answer->head;
    }
    /* never read past the answer: the connection carries nothing else */
    if (answer->phase == BODY && *room > answer->remaining)
        *room = (size_t)answer->remaining;
}

static enum cm_http_answer_state bad(struct cm_http_answer *answer, const char *error)
{
    answer->error = error;
    answer->keep_alive = false;
    answer->phase = FINISHED;
    return CM_HTTP_ANSWER_BAD;
}

static enum cm_http_answer_state done(struct cm_http_answer *answer, size_t extra)
{
    if (extra)
        answer->keep_alive = false; /* bytes nobody asked for */
    answer->phase = FINISHED;
    return CM_HTTP_ANSWER_DONE;
}

/* A growing body gets room for `needed` bytes, doubling; false when it cannot. */
static bool grow_body(struct cm_http_answer *answer, size_t needed)
{
    if (needed > CM_HTTP_ANSWER_GROW_MAX)
        return false;
    size_t capacity = answer->capacity ? answer->capacity : 4096;
    while (capacity < needed)
        capacity *= 2;
    unsigned char *grown = realloc(answer->body, capacity);
    if (!grown)
        return false;
    answer->body = grown;
    answer->capacity = capacity;
    return true;
}

static void store(struct cm_http_answer *answer, const char *data, size_t n)
{
    /* only while every byte so far was kept: a body with a hole is no use */
    if (answer->grow && answer->received <= answer->capacity &&
        answer->received + n > answer->capacity)
        grow_body(answer, answer->received + n);
    if (answer->received < answer->capacity) {
        size_t room = answer->capacity - answer->received;
        memcpy(answer->body + answer->received, data, n < room ? n : room);
    }
    answer->received += n;
}

/* Body bytes (not in the body buffer already) through the body phases. */
static enum cm_http_answer_state take_body(struct cm_http_answer *answer, const char *data,
                                           size_t n)
{
    while (n > 0) {
        size_t take = 0;
        switch (answer->phase) {
        case BODY:
        case CHUNK_DATA:
            take = n < answer->remaining ? n : (size_t)answer->remaining;
            store(answer, data, take);
            answer->remaining -= take;
            if (answer->remaining == 0) {
                if (answer->phase == BODY)
                    return done(answer, n - take);
                answer->phase = CHUNK_CRLF;
            }
            break;
        case UNTIL_CLOSE:
            take = n;
            store(answer, data, n);
            break;
        case CHUNK_SIZE:
            while (take < n && data[take] != '\n') {
                int digit = cm_hex_value(data[take++]);
                if (answer->chunk_line_seen || digit < 0) {
                    answer->chunk_line_seen = true; /* an extension, or the CR */
                } else if (answer->remaining >> 59) {
                    return bad(answer, "a chunk size out of range");
                } else {
                    answer->remaining = answer->remaining * 16 + (uint64_t)digit;
                }
            }
            if (take < n) { /* the line ended */
                take++;
                answer->chunk_line_seen = false;
                answer->phase = answer->remaining ? CHUNK_DATA : TRAILER;
                answer->line_empty = true;
            }
            break;
        case CHUNK_CRLF:
            while (take < n && data[take] != '\n')
                take++;
            if (take < n) {
                take++;
                answer->phase = CHUNK_SIZE;
                answer->remaining = 0;
            }
            break;
        case TRAILER:
            while (take < n) {
                char c = data[take++];
                if (c == '\n') {
                    if (answer->line_empty)
                        return done(answer, n - take);
                    answer->line_empty = true;
                } else if (c != '\r') {
                    answer->line_empty = false;
                }
            }
            break;
        default:
            return done(answer, n);
        }
        data += take;
        n -= take;
    }
    return CM_HTTP_ANSWER_MORE;
}

static bool header_is(const char *line, size_t name_len, const char *name)
{
    return strlen(name) == name_len && strncasecmp(line, name, name_len) == 0;
}

static bool value_has(const char *value, size_t value_len, const char *token)
{
    size_t token_len = strlen(token);
    for (size_t i = 0; i + token_len <= value_len; i++)
        if (strncasecmp(value + i, token, token_len) == 0)
            return true;
    return false;
}

/* The headers are head[0 .. end). Returns MORE for a 1xx answer (its bytes are dropped and
 * the next header block is parsed), else what the body phases make of the bytes after. */
static enum cm_http_answer_state take_head(struct cm_http_answer *answer, size_t end)
{
    const char *head = answer->head;
    if (end < 12 || memcmp(head, "HTTP/1.", 7) != 0 || (head[7] != '0' && head[7] != '1') ||
        head[8] != ' ' || head[9] < '1' || head[9] > '5' || head[10] < '0' || head[10] > '9' ||
        head[11] < '0' || head[11] > '9')
        return bad(answer, "the answer is not HTTP/1.x");
    long status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    bool keep_alive = head[7] == '1';
    bool chunked = false, has_length = false;
    uint64_t length = 0;
    const char *line = (const char *)memchr(head, '\n', end) + 1;
    while (line < head + end) {
        const char *eol = memchr(line, '\n', (size_t)(head + end - line));
        size_t len = (size_t)(eol - line);
        if (len > 0 && line[len - 1] == '\r')
            len--;
        const char *colon = memchr(line, ':', len);
        if (colon) {
            size_t name_len = (size_t)(colon - line);
            const char *value = colon + 1;
            size_t value_len = len - name_len - 1;
            while (value_len > 0 && (*value == ' ' || *value == '\t')) {
                value++;
                value_len--;
            }
            while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
                value_len--;
            if (header_is(line, name_len, "content-length")) {
                size_t digits = 0;
                length = 0;
                while (digits < value_len && value[digits] >= '0' && value[digits] <= '9') {
                    if (digits == 18)
                        return bad(answer, "a Content-Length out of range");
                    length = length * 10 + (uint64_t)(value[digits++] - '0');
                }
                if (digits == 0)
                    return bad(answer, "a Content-Length that is not a number");
                has_length = true;
            } else if (header_is(line, name_len, "transfer-encoding")) {
                chunked = value_has(value, value_len, "chunked");
            } else if (header_is(line, name_len, "etag") && status >= 200) {
                size_t n = value_len < sizeof answer->etag ? value_len : sizeof answer->etag - 1;
                memcpy(answer->etag, value, n);
                answer->etag[n] = '\0';
            } else if (header_is(line, name_len, "content-type") && status >= 200) {
                size_t n = value_len < sizeof answer->content_type
                               ? value_len
                               : sizeof answer->content_type - 1;
                memcpy(answer->content_type, value, n);
                answer->content_type[n] = '\0';
            } else if (header_is(line, name_len, "connection")) {
                if (value_has(value, value_len, "close"))
                    keep_alive = false;
                else if (value_has(value, value_len, "keep-alive"))
                    keep_alive = true;
            }
        }
        line = eol + 1;
    }
    size_t extra = answer->head_len - end;
    if (status < 200) { /* 1xx: the real answer follows */
        memmove(answer->head, answer->head + end, extra);
        answer->head_len = extra;
        answer->scanned = 0;
        return CM_HTTP_ANSWER_MORE;
    }
    answer->status = status;
    answer->keep_alive = keep_alive;
    answer->has_content_length = has_length;
    answer->content_length = length;
    answer->head_len = answer->scanned = 0;
    if (answer->head_request || status == 204 || status == 304)
        return done(answer, extra);
    if (chunked) {
        answer->phase = CHUNK_SIZE;
        answer->remaining = 0;
    } else if (has_length) {
        answer->phase = BODY;
        answer->remaining = length;
        /* room for the announced body up front, within reason: beyond it, it grows as bytes
         * arrive, so a length the server does not send costs nothing */
        if (answer->grow && length > answer->capacity && length <= ((size_t)64 << 20))
            grow_body(answer, (size_t)length);
        if (length == 0)
            return done(answer, extra);
    } else {
        answer->phase = UNTIL_CLOSE;
        answer->keep_alive = false;
    }
    /* the body phases copy out of head[end ..), never into it */
    return take_body(answer, answer->head + end, extra);
}

enum cm_http_answer_state cm_http_answer_took(struct cm_http_answer *answer, size_t n)
{
    if (answer->phase == FINISHED)
        return done(answer, n);
    if (direct(answer)) {
        answer->received += n;
        answer->remaining -= n;
        return answer->remaining ? CM_HTTP_ANSWER_MORE : done(answer, 0);
    }
    if (answer->phase != HEAD)
        return take_body(answer, answer->head, n);
    answer->head_len += n;
    for (;;) {
        size_t from = answer->scanned > 3 ? answer->scanned - 3 : 0;
        const char *blank = NULL;
        for (size_t i = from; i + 4 <= answer->head_len; i++) {
            if (answer->head[i] == '\r' && memcmp(answer->head + i, "\r\n\r\n", 4) == 0) {
                blank = answer->head + i;
                break;
            }
        }
        if (!blank) {
            answer->scanned = answer->head_len;
            if (answer->head_len == sizeof answer->head)
                return bad(answer, "the answer's headers are larger than 16 KiB");
            return CM_HTTP_ANSWER_MORE;
        }
        enum cm_http_answer_state state = take_head(answer, (size_t)(blank - answer->head) + 4);
        if (state != CM_HTTP_ANSWER_MORE || answer->phase != HEAD)
            return state;
        if (answer->head_len == 0)
            return CM_HTTP_ANSWER_MORE; /* a 1xx answer, nothing after it yet */
    }
}

enum cm_http_answer_state cm_http_answer_closed(struct cm_http_answer *answer)
{
    if (answer->phase == UNTIL_CLOSE) {
        answer->keep_alive = false;
        return done(answer, 0);
    }
    return bad(answer, "the server closed the connection in the middle of the answer");
}
