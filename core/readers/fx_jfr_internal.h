/* SPDX-License-Identifier: Apache-2.0 */
/* The JFR reader's insides, shared by core/readers/jfr_reader.c (file, chunks, pools, events),
 * core/readers/jfr_meta.c (the metadata event) and core/readers/jfr_value.c (compressed integers,
 * strings, decoding and skipping values by class). Not a public header. */
#ifndef FX_JFR_INTERNAL_H
#define FX_JFR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fx_jfr.h"

/* Nesting bound for metadata elements and for values (a class that contains itself would
 * otherwise recurse forever in a hostile file). */
#define JFR_MAX_DEPTH 48

enum jfr_prim {
    JFR_STRUCT = 0,
    JFR_BOOLEAN,
    JFR_BYTE,
    JFR_CHAR,
    JFR_SHORT,
    JFR_INT,
    JFR_LONG,
    JFR_FLOAT,
    JFR_DOUBLE,
    JFR_STRING,
};

struct jfr_field {
    const char *name; /* in the metadata's string table */
    int64_t type_id;
    uint32_t cls; /* resolved from type_id once every class is read */
    bool ref, array;
};

struct jfr_class {
    const char *name, *super;
    int64_t id;
    uint8_t prim;
    bool is_event;
    bool varints; /* a struct whose every field is one varint (a reference or an integer) */
    struct jfr_field *fields;
    uint32_t n_fields;
};

struct jfr_meta {
    char **strings;
    uint32_t n_strings;
    struct jfr_class *classes;
    uint32_t n_classes;
    struct fx_jfr_map by_id; /* type id -> class index */
    uint32_t string_cls;     /* java.lang.String, or UINT32_MAX */
};
/* Reads the metadata event's payload [p, end) (after its id); on failure m is empty. */
int jfr_meta_read(struct jfr_meta *m, const uint8_t *p, const uint8_t *end, struct fx_errbuf *eb);
void jfr_meta_destroy(struct jfr_meta *m);
uint32_t jfr_meta_class_of(const struct jfr_meta *m, int64_t id); /* UINT32_MAX: unknown */

/* A bounded cursor: err is set (and stays) once a read passes end. */
struct jfr_cur {
    const uint8_t *p, *end;
    bool err;
};
/* A compressed integer: 7 bits a byte, least significant first, the ninth byte whole. Inline,
 * and with 9 bytes left no bound checked byte by byte: the reader's most frequent call (a
 * stack's every frame is four of them). */
static inline uint64_t jfr_varint_bounded(struct jfr_cur *c) /* near the end: each byte checked */
{
    uint64_t v = 0;
    for (int i = 0; i < 9; i++) {
        if (c->p >= c->end) {
            c->err = true;
            return 0;
        }
        uint8_t b = *c->p++;
        if (i == 8)
            return v | (uint64_t)b << 56;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return v;
    }
    return v;
}
static inline uint64_t jfr_varint(struct jfr_cur *c)
{
    const uint8_t *p = c->p;
    if (c->end - p < 9)
        return jfr_varint_bounded(c);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            c->p = p + i + 1;
            return v;
        }
    }
    c->p = p + 9;
    return v | (uint64_t)p[8] << 56;
}
uint8_t jfr_u8(struct jfr_cur *c);
/* Skips a value of class cls (a whole field when ref/array say so). */
void jfr_skip(struct fx_jfr *r, struct jfr_cur *c, uint32_t cls, bool ref, bool array, int depth);
/* Skips or reads an encoded string (enc, len, bytes) into v. */
void jfr_string_value(struct jfr_cur *c, struct fx_jfr_value *v);
/* An inline string (encoding 3, 4 or 5) as UTF-8 in buf (cut at cap - 1 bytes). */
int jfr_utf8(const struct fx_jfr_value *s, const uint8_t *end, char *buf, size_t cap, size_t *len);

#define POOL_OFF_BITS 40
#define POOL_OFF(v)   ((v) & ((1ull << POOL_OFF_BITS) - 1))
#define POOL_LEN(v)   ((v) >> POOL_OFF_BITS)

struct fx_jfr {
    int fd;
    const uint8_t *map;
    uint64_t size;
    uint64_t next; /* offset of the next chunk */
    struct fx_jfr_chunk_info chunk;
    const uint8_t *c0, *cend; /* the current chunk's bytes */
    const uint8_t *pos;       /* the next event */
    struct jfr_meta meta;
    /* (class, key) -> the entry's value in the chunk: its offset (POOL_OFF bits) and its length
     * above them (0: 2^24 bytes or more, not kept) */
    struct fx_jfr_map pool;
    struct fx_jfr_stats stats;
    struct fx_jfr_ahead *ahead; /* fx_jfr_read_ahead's thread, or NULL */
};

#endif
