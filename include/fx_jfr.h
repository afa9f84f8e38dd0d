/* SPDX-License-Identifier: Apache-2.0 */
/* A streaming reader of JDK Flight Recorder files (issue 35), JVM-free. A recording is a
 * sequence of self-contained chunks; each chunk carries its own metadata (the classes, their
 * fields) and its constant pools. The reader maps the file, visits one chunk at a time (its
 * pages are given back to the system when the next chunk starts) and hands out events as
 * undecoded bytes plus their class: a caller decodes only the events it wants, by field name,
 * and follows constant pool references on demand. Memory is the current chunk's metadata and
 * an index of its constant pool entries (key -> offset), never the decoded pool.
 * Nothing is hard-coded beyond the format: the classes, fields and their order come from the
 * file's metadata event. Every count and offset read from the file is checked against the
 * bytes left, and nesting is bounded, so a corrupt or hostile file gives an error, not a crash.
 * Class indexes and values are valid until the next fx_jfr_next_chunk. */
#ifndef FX_JFR_H
#define FX_JFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

struct fx_jfr;

/* The 4 bytes every chunk starts with. */
#define FX_JFR_MAGIC "FLR\0"

/* True when the file at path starts with the JFR magic (false: unreadable or not JFR). */
bool fx_jfr_is_jfr(const char *path);

/* Opens and maps the file; FX_EINVAL (not a JFR file, eb says) or FX_EIO; *out untouched. */
int fx_jfr_open(const char *path, struct fx_jfr **out, struct fx_errbuf *eb);
void fx_jfr_close(struct fx_jfr *r);

struct fx_jfr_chunk_info {
    uint16_t major, minor;
    uint64_t offset, size; /* in the file */
    int64_t start_ns;      /* epoch nanoseconds at the chunk's start */
    int64_t duration_ns;   /* as the header says */
    int64_t start_ticks, ticks_per_second;
};

/* Moves to the next chunk and reads its metadata and constant pools: 1 when a chunk is ready,
 * 0 at the end of the recording (a last chunk that is incomplete, e.g. still being written or
 * cut short, ends the recording: fx_jfr_stats says so), negative on a corrupt chunk (eb). */
int fx_jfr_next_chunk(struct fx_jfr *r, struct fx_errbuf *eb);
/* Loads each next chunk (its metadata and constant pools' index) on a thread of the reader's
 * own while the caller reads the current chunk's events, one chunk ahead; fx_jfr_next_chunk
 * then hands it over, with the same result and message as without. FX_OK, or FX_ENOMEM /
 * FX_EUNSUPPORTED (no thread: chunks are loaded in the caller's thread, as without it). */
int fx_jfr_read_ahead(struct fx_jfr *r);
const struct fx_jfr_chunk_info *fx_jfr_chunk(const struct fx_jfr *r);
/* A tick value of the current chunk as epoch nanoseconds. */
int64_t fx_jfr_ticks_to_ns(const struct fx_jfr *r, int64_t ticks);

struct fx_jfr_stats {
    uint64_t file_size;
    uint64_t chunks;           /* complete chunks read so far */
    uint64_t bytes_incomplete; /* bytes after the last complete chunk (0: none) */
    uint64_t pool_entries;     /* constant pool entries indexed, all chunks */
    uint64_t metadata_events;  /* seen by fx_jfr_next_event (jfr summary's jdk.Metadata) */
    uint64_t pool_events;      /* likewise, constant pools (jdk.CheckPoint) */
};
const struct fx_jfr_stats *fx_jfr_stats(const struct fx_jfr *r);

/* --- the current chunk's classes (from its metadata event) --- */
uint32_t fx_jfr_class_count(const struct fx_jfr *r);
const char *fx_jfr_class_name(const struct fx_jfr *r, uint32_t cls);
bool fx_jfr_class_is_event(const struct fx_jfr *r, uint32_t cls);
/* The class of that name, or UINT32_MAX. */
uint32_t fx_jfr_class_find(const struct fx_jfr *r, const char *name);
/* The index of a field of class cls, or -1 (the class has no such field in this chunk). */
int fx_jfr_field(const struct fx_jfr *r, uint32_t cls, const char *name);
uint32_t fx_jfr_field_count(const struct fx_jfr *r, uint32_t cls);
/* The type id the file gives class cls (what jdk.ActiveSetting's id refers to), or -1. */
int64_t fx_jfr_class_id(const struct fx_jfr *r, uint32_t cls);

/* An object's undecoded bytes: an event's fields, a constant pool entry, an inline struct. */
struct fx_jfr_obj {
    uint32_t cls;
    const uint8_t *p, *end;
};

/* Next event of the current chunk (metadata and constant pool events are skipped): 1 with
 * *ev set, 0 at the chunk's end, negative when an event's size leaves the chunk (eb). */
int fx_jfr_next_event(struct fx_jfr *r, struct fx_jfr_obj *ev, struct fx_errbuf *eb);

enum fx_jfr_kind {
    FX_JFR_NONE = 0,
    FX_JFR_INT,    /* boolean, byte, char, short, int, long: i */
    FX_JFR_FLOAT,  /* float, double: d */
    FX_JFR_STRING, /* read with fx_jfr_string */
    FX_JFR_REF,    /* a constant pool reference: cls and key i; fx_jfr_deref */
    FX_JFR_STRUCT, /* an inline object of class cls at p */
    FX_JFR_ARRAY,  /* i elements of class cls (refs when ref) from p; fx_jfr_array_next */
};

struct fx_jfr_value {
    uint8_t kind;
    uint8_t enc; /* STRING: 0 null, 1 empty, 2 pool ref (key i), 3 UTF-8, 4 chars, 5 Latin-1 */
    bool ref;    /* ARRAY: the elements are constant pool references */
    uint32_t cls;
    uint32_t len; /* STRING: bytes (3, 5) or chars (4) at p */
    int64_t i;
    double d;
    const uint8_t *p;
};

/* Decodes the first n fields of o (n at most its field count) into v; FX_EINVAL when the bytes
 * end early (eb). Fields of nested structs and arrays are skipped, not decoded; an array that is
 * the last field decoded is only counted (its count checked against the bytes left), its
 * elements read by fx_jfr_array_next/fx_jfr_array_fields. */
int fx_jfr_fields(struct fx_jfr *r, const struct fx_jfr_obj *o, struct fx_jfr_value *v, uint32_t n,
                  struct fx_errbuf *eb);
/* The object a REF or STRUCT value stands for: FX_ENOTFOUND for a key the chunk's pools do not
 * hold (a null reference is key 0, usually absent). */
int fx_jfr_deref(struct fx_jfr *r, const struct fx_jfr_value *v, struct fx_jfr_obj *out);
/* The bytes of the constant pool entry a REF value stands for (after its key): *p and *len, *len
 * 0 when not kept (an entry of 16 MiB or more); FX_ENOTFOUND as fx_jfr_deref. Two entries of
 * equal bytes are the same value but for the references in them. */
int fx_jfr_entry(struct fx_jfr *r, const struct fx_jfr_value *v, const uint8_t **p, size_t *len);
/* fn(ctx, key) for each key of class cls in the current chunk's pools, in no order, until fn
 * returns nonzero (returned). */
int fx_jfr_pool_each(struct fx_jfr *r, uint32_t cls, int (*fn)(void *ctx, int64_t key), void *ctx);
/* Iterates an ARRAY value: *cursor starts at NULL; 1 with *elem set, 0 after the last. */
int fx_jfr_array_next(struct fx_jfr *r, const struct fx_jfr_value *arr, const uint8_t **cursor,
                      uint32_t *index, struct fx_jfr_value *elem, struct fx_errbuf *eb);
/* Iterates an ARRAY of objects, decoding each element's first n fields into v (n at most its
 * class's field count; the element's nested values are skipped, as fx_jfr_fields does), in one
 * pass over its bytes: *cursor starts at NULL; 1 with v set, 0 after the last, FX_ENOTFOUND for
 * a reference element the pools lack (the iteration goes on past it), FX_EINVAL when corrupt. */
int fx_jfr_array_fields(struct fx_jfr *r, const struct fx_jfr_value *arr, const uint8_t **cursor,
                        uint32_t *index, struct fx_jfr_value *v, uint32_t n, struct fx_errbuf *eb);
/* A STRING value (pool references followed) as NUL-terminated UTF-8 in buf; longer strings are
 * cut at cap - 1 bytes. FX_ENOTFOUND for a null string (buf ""), FX_EINVAL when corrupt. */
int fx_jfr_string(struct fx_jfr *r, const struct fx_jfr_value *v, char *buf, size_t cap,
                  size_t *len);

/* A map of (cls, 64-bit key) -> 64-bit value, open addressing (the reader's constant pool
 * index; callers use it for per-chunk caches). A zeroed struct is an empty map. */
struct fx_jfr_map_ent {
    uint64_t key;
    uint64_t val;
    uint32_t cls; /* UINT32_MAX: empty slot */
};
struct fx_jfr_map {
    struct fx_jfr_map_ent *e;
    size_t cap, n;
};
/* FX_OK (a key already present keeps its first value) or FX_ENOMEM (map unchanged). */
int fx_jfr_map_put(struct fx_jfr_map *m, uint32_t cls, uint64_t key, uint64_t val);
bool fx_jfr_map_get(const struct fx_jfr_map *m, uint32_t cls, uint64_t key, uint64_t *val);
void fx_jfr_map_clear(struct fx_jfr_map *m);
void fx_jfr_map_destroy(struct fx_jfr_map *m);

#endif
