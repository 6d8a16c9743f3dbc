/* Write payloads and read verification: each op buffer is a fixed 128-byte header (object,
 * offset, sequence, run id, crc32c of the body) followed by incompressible pseudo-random bytes
 * copied from a per-run pattern, so generation costs a memcpy and verification one crc32c pass.
 *
 * Header layout (all integers little-endian; CM_PAYLOAD_HEADER_SIZE bytes):
 *     0  u32  magic        "CMPL" (0x4C504D43)
 *     4  u16  version      CM_PAYLOAD_VERSION
 *     6  u16  header_len   CM_PAYLOAD_HEADER_SIZE
 *     8  u64  run_id
 *    16  u64  sequence     the writer's op sequence number
 *    24  u64  offset       object offset of the op, i.e. of this header
 *    32  u64  body_len     bytes following the header
 *    40  u32  body_crc     crc32c of the body
 *    44  u32  header_crc   crc32c of these 128 bytes with header_crc taken as zero
 *    48  u32  name_crc     crc32c of the full object name
 *    52  u16  name_len     full object name length (saturates at 65535)
 *    54  u16  reserved     zero
 *    56  u8[72] name       the name's first 72 bytes, zero-padded
 * Names longer than 72 bytes keep their prefix; together with name_len and name_crc the full
 * name is still checked, and decoding shows the prefix with "...".
 *
 * The body is a window of the pattern (a per-seed buffer of max_block + 1 MiB xoshiro256**
 * bytes) starting at an offset hashed from (object, offset, sequence), wrapping around the end.
 * The start is a multiple of 16 within the first 16 x max_block bytes (at least 64 KiB, at
 * most 1 MiB), so that small ops keep reading the same few cache-resident KiB of pattern and a
 * stage can look their crc32c up. Two ops share a body only when their windows collide
 * (about 1 in 4096 for blocks of 4 KiB or less, 1 in 65536 from 64 KiB blocks up); the
 * header still makes every op's bytes unique, and every body is random data that no
 * compressor can shrink.
 * The header must lead each op buffer, so the body cannot be a pointer into the pattern; it is
 * copied, and its crc32c computed on the copy while it is still in cache (bodies of 64 KiB
 * and more: derived from a table of the pattern's CRCs, without a pass). cm_payload_stage
 * avoids the copy for libraries that copy anyway.
 *
 * Ops shorter than the header (including 0 bytes) carry no header: they are a pattern window
 * chosen by (run id, object, offset), without the sequence, and verification regenerates and
 * compares it. Such data can only be verified by a reader using the writer's seed and run id,
 * and reading back exactly that op.
 *
 * A cm_payload is immutable after cm_payload_new, so one may be shared by all threads. */
#ifndef CEPHMARK_PAYLOAD_H
#define CEPHMARK_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define CM_PAYLOAD_MAGIC       0x4C504D43u
#define CM_PAYLOAD_VERSION     1
#define CM_PAYLOAD_HEADER_SIZE 128
#define CM_PAYLOAD_NAME_MAX    72

typedef struct cm_payload cm_payload;

/* seed selects the pattern, so two runs with different seeds write different data. max_block is
 * the largest op the caller expects; larger ops still work, but their bodies repeat after
 * max_block + 1 MiB bytes. Returns NULL if out of memory. */
cm_payload *cm_payload_new(uint64_t seed, size_t max_block);
void cm_payload_free(cm_payload *p);

/* Writes one op of len bytes to buf: header + body, or pattern bytes only when
 * len < CM_PAYLOAD_HEADER_SIZE. object is a NUL-terminated name (NULL means ""). */
void cm_payload_fill(const cm_payload *p, unsigned char *buf, size_t len, const char *object,
                     uint64_t offset, uint64_t sequence, uint64_t run_id);

/* A staging area for writers whose library copies an op's bytes before the write call
 * returns (the librados C API does): the op is assembled in place in a private copy of the
 * pattern, its header written over the bytes just before the body's window (saved, and put
 * back by cm_payload_stage_release), so the body is never copied by cephmark, and its
 * crc32c is derived from precomputed CRCs of the pattern (crc32c combine) instead of a
 * pass over it. The bytes are exactly those cm_payload_fill writes. A stage costs the
 * pattern's size plus max_block of memory, and belongs to one thread. */
typedef struct cm_payload_stage cm_payload_stage;

cm_payload_stage *cm_payload_stage_new(const cm_payload *p);
void cm_payload_stage_free(cm_payload_stage *s);

/* The len bytes of one op, valid until cm_payload_stage_release or the next op; NULL if out
 * of memory (ops longer than max_block + header, or shorter than a header, are filled into
 * a scratch buffer). */
const unsigned char *cm_payload_stage_op(cm_payload_stage *s, size_t len, const char *object,
                                         uint64_t offset, uint64_t sequence, uint64_t run_id);

/* Puts the pattern bytes under the last op's header back; call it as soon as the library
 * has taken its copy. Idempotent. */
void cm_payload_stage_release(cm_payload_stage *s);

/* The bytes a stage needs (cm_payload_stage_new_at), and a stage in storage the caller
 * provides and keeps: for writers that hand a library references into the stage which may
 * outlive the stage itself (see cm_payload_stage_split). */
size_t cm_payload_stage_size(const cm_payload *p);
cm_payload_stage *cm_payload_stage_new_at(const cm_payload *p, unsigned char *storage);

/* One op as two parts, for writers whose library sends a list of buffers without copying
 * them (librados's C++ API): the header, written to the caller's `header`, and the body,
 * the window of the stage's storage that starts at *body_offset and runs to the op's end.
 * Returns the header's length (CM_PAYLOAD_HEADER_SIZE, or 0 for ops shorter than a
 * header, which are a window only), or -1 when the op is longer than max_block + header.
 * The two parts together are exactly the bytes cm_payload_fill writes. Split ops never
 * change the stage, so any number of them may be in flight at once; a stage that has split
 * ops in flight must not be used for cm_payload_stage_op, which writes into it. */
int cm_payload_stage_split(cm_payload_stage *s, size_t len, const char *object, uint64_t offset,
                           uint64_t sequence, uint64_t run_id,
                           unsigned char header[CM_PAYLOAD_HEADER_SIZE], size_t *body_offset);

typedef enum cm_payload_error_kind {
    CM_PAYLOAD_OK = 0,
    CM_PAYLOAD_ERR_BAD_MAGIC,     /* not a payload header: garbage, zeros, misaligned read */
    CM_PAYLOAD_ERR_HEADER_CRC,    /* the header itself is corrupt */
    CM_PAYLOAD_ERR_BAD_VERSION,   /* intact header of another format version or size */
    CM_PAYLOAD_ERR_RUN_ID,        /* intact header from another run: stale data */
    CM_PAYLOAD_ERR_OBJECT,        /* intact header naming another object: misplaced data */
    CM_PAYLOAD_ERR_OFFSET,        /* intact header for another offset: misplaced data */
    CM_PAYLOAD_ERR_LENGTH,        /* the buffer ends before the body the header announces */
    CM_PAYLOAD_ERR_BODY_CRC,      /* body corrupt */
    CM_PAYLOAD_ERR_SHORT_CONTENT, /* a headerless short op differs from what was written */
} cm_payload_error_kind;

typedef struct cm_payload_error {
    cm_payload_error_kind kind;
    uint64_t offset;   /* object offset of the op that failed */
    uint64_t sequence; /* from its header, when has_sequence */
    int has_sequence;
    /* e.g. "object foo offset 4096 (seq 17): body crc32c 0x1234abcd != header 0x89abcdef" */
    char message[320];
} cm_payload_error;

/* Relaxations for cm_payload_verify; 0 checks everything. Not verifying at all is simply not
 * calling it. */
enum {
    /* Check headers only, skipping the crc32c pass over bodies. */
    CM_PAYLOAD_VERIFY_SKIP_BODY = 1U << 0,
    /* Accept data written by any run (e.g. objects prefilled earlier); headerless short ops
     * cannot be checked then, since their content depends on the run id. */
    CM_PAYLOAD_VERIFY_ANY_RUN = 1U << 1,
};

/* Checks that buf (len bytes read from object at offset) holds what cm_payload_fill wrote
 * there. The sequence is not needed: it is read from the header and reported. buf may hold
 * several consecutive ops (one large read over data written in smaller blocks): they are
 * walked using each header's body_len, and a trailing part shorter than a header is checked
 * as a short op. Returns CM_PAYLOAD_OK (0) or the kind of the first problem, also stored with
 * a message in *err when err is not NULL. Bodies are checked against their header's crc32c
 * only, so verifying does not depend on the seed except for short ops. */
cm_payload_error_kind cm_payload_verify(const cm_payload *p, const unsigned char *buf, size_t len,
                                        const char *object, uint64_t offset, uint64_t run_id,
                                        unsigned flags, cm_payload_error *err);

/* Short stable name of a kind ("ok", "bad_magic", "header_crc", "bad_version", "run_id",
 * "object", "offset", "length", "body_crc", "short_content") for reports. */
const char *cm_payload_error_kind_name(cm_payload_error_kind kind);

typedef struct cm_payload_header {
    uint16_t version;
    uint16_t header_len;
    uint64_t run_id;
    uint64_t sequence;
    uint64_t offset;
    uint64_t body_len;
    uint32_t body_crc;
    uint32_t header_crc;
    uint32_t name_crc;
    uint16_t name_len;                    /* full length, may exceed the stored prefix */
    char object[CM_PAYLOAD_NAME_MAX + 1]; /* stored prefix, NUL-terminated */
    int name_truncated;
} cm_payload_header;

/* Decodes the header at the start of buf, for debugging and tools: CM_PAYLOAD_OK, or
 * CM_PAYLOAD_ERR_LENGTH (len < header), CM_PAYLOAD_ERR_BAD_MAGIC, CM_PAYLOAD_ERR_BAD_VERSION or
 * CM_PAYLOAD_ERR_HEADER_CRC; h is filled in from the raw bytes in every case but the first. */
cm_payload_error_kind cm_payload_decode(const unsigned char *buf, size_t len, cm_payload_header *h);

/* One-line description of the header at the start of buf, e.g. "object foo offset 0 seq 3
 * run 0x2a body 4096 crc32c 0x12345678", or why there is none. Returns out. */
char *cm_payload_describe(const unsigned char *buf, size_t len, char *out, size_t out_size);

#endif
