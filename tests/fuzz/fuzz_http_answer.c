/* libFuzzer target for the HTTP/1.1 response parser of the native transport
 * (modules/http/http_response.c): whatever a server sends, the parser must stay inside its buffers,
 * always offer room while it wants bytes, and reach the same outcome (state, status, body
 * length and kept body bytes, keep-alive) whether the answer arrives in one piece per read or
 * cut at arbitrary points; a growing body (answer.grow) keeps every byte of a complete
 * answer. Input: byte 0 picks a HEAD request (bit 0), the body buffer's capacity (bits 1-3)
 * and a growing body (bit 4), byte 1 seeds the cut points, the rest is what the server
 * sends; the end of the input is the server closing the connection. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct outcome {
    enum cm_http_answer_state state;
    long status;
    bool keep_alive;
    size_t received;
    size_t kept;
};

static struct cm_http_answer answer;

/* Feeds `bytes` in pieces of at most `cut` (0: as much as the parser has room for), then
 * the close. `cut_seed` varies the piece sizes. */
static struct outcome feed(const uint8_t *bytes, size_t length, bool head_request,
                           unsigned char **body, size_t capacity, bool grow, unsigned cut_seed,
                           bool cut)
{
    cm_http_answer_start(&answer, head_request, *body, capacity);
    answer.grow = grow;
    enum cm_http_answer_state state = CM_HTTP_ANSWER_MORE;
    size_t at = 0;
    uint32_t rng = cut_seed * 2654435761u + 1;
    while (state == CM_HTTP_ANSWER_MORE && at < length) {
        char *into;
        size_t room;
        cm_http_answer_space(&answer, &into, &room);
        if (room == 0)
            abort(); /* the parser wants bytes but offers no room */
        size_t n = length - at < room ? length - at : room;
        if (cut) {
            rng = rng * 1103515245u + 12345u;
            size_t piece = 1 + (rng >> 16) % 23;
            if (n > piece)
                n = piece;
        }
        memcpy(into, bytes + at, n);
        at += n;
        state = cm_http_answer_took(&answer, n);
    }
    if (state == CM_HTTP_ANSWER_MORE)
        state = cm_http_answer_closed(&answer);
    if (state == CM_HTTP_ANSWER_BAD && !answer.error)
        abort(); /* a malformed answer always says why */
    if (state == CM_HTTP_ANSWER_DONE && answer.status < 200)
        abort();
    *body = answer.body; /* grown or not, the caller's to free */
    capacity = answer.capacity;
    struct outcome out = {state, answer.status, answer.keep_alive, answer.received,
                          answer.received < capacity ? answer.received : capacity};
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536)
        return 0;
    bool head_request = data[0] & 1;
    static const size_t capacities[8] = {0, 1, 5, 16, 100, 4096, 5000, 70000};
    size_t capacity = capacities[(data[0] >> 1) & 7];
    bool grow = data[0] & 16;
    const uint8_t *bytes = data + 2;
    size_t length = size - 2;
    /* exact-size heap buffers, so ASan sees a write past the capacity */
    unsigned char *whole = malloc(capacity ? capacity : 1);
    unsigned char *pieces = malloc(capacity ? capacity : 1);
    if (!whole || !pieces)
        abort();
    if (!capacity) {
        free(whole);
        free(pieces);
        whole = pieces = NULL;
    }
    struct outcome a = feed(bytes, length, head_request, &whole, capacity, grow, 0, false);
    struct outcome b = feed(bytes, length, head_request, &pieces, capacity, grow, data[1], true);
    /* bytes after a complete answer end it the same way; a malformed answer may be noticed
     * at a different byte, but it is malformed either way */
    if (a.state != b.state)
        abort();
    if (a.state == CM_HTTP_ANSWER_DONE) {
        /* keep_alive may differ: bytes after the answer that come in its last read turn it
         * off, and in a later read they are the next read's business */
        if (a.status != b.status || a.received != b.received || a.kept != b.kept)
            abort();
        if (a.kept && memcmp(whole, pieces, a.kept) != 0)
            abort();
        if (grow && a.kept != a.received)
            abort(); /* a growing body keeps all of a complete answer */
    }
    free(whole);
    free(pieces);
    return 0;
}
