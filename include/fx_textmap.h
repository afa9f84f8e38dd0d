/* SPDX-License-Identifier: Apache-2.0 */
/* The text map: a process's executable mappings (from /proc/PID/maps or a file in that format)
 * as an immutable table sorted by start address, and the one-pointer slot that publishes it to
 * signal handlers (issue 16 groundwork). Owns parsing, the table and its publication; naming the
 * code inside a mapping is core/symbols/elfsym.c's job.
 *
 * Immutable table. fx_textmap_read builds the whole table (entries and path strings in one
 * block) off the signal path; nothing changes it afterwards, so any number of threads and
 * handlers may read it with no lock. fx_textmap_lookup_sigsafe is a binary search: no
 * allocation, no lock, no system call.
 *
 * Publication (struct fx_textmap_slot). One writer (the drain thread) builds a newer table when
 * the mappings change (a dlopen, a new JIT region) and publishes it: one seq_cst exchange of the
 * slot's `current` pointer, so a reader sees the old table or the new one, never a half-built
 * one. Readers are counted in two counters chosen by the parity of an epoch `gen`:
 *   reader: g = gen; readers[g&1]++; t = current; if (gen != g) { readers[g&1]--; retry once }
 *           ... lookups on t ...; readers[g&1]--
 *   writer publish: old = exchange(current, new); gen++ ; old becomes the one retired table
 *   writer reclaim: free the retired table once readers[(gen-1)&1] reads 0
 * Why that is safe (all seq_cst): a reader counted under epoch g loaded `current` after the
 * epoch-g table was published and before gen moved past g, so it holds the epoch-g table or the
 * next one. The epoch-g table is retired by the next publish, which moves gen to g+1; from then
 * on nobody can enter under g (the re-check fails), so readers[g&1] only falls and reaching 0
 * means every reader that could hold it has left. Unlike one shared counter, busy readers can
 * not starve the writer: new readers count in the other parity. A publish while the previous
 * retired table still waits fails with FX_EFULL (the caller keeps its table and tries again at
 * the next drain cycle), so at most one table is retired and the parities never mix. A reader
 * only increments and decrements: nobody ever waits, so a handler that interrupts the writer on
 * its own thread cannot deadlock.  */
#ifndef FX_TEXTMAP_H
#define FX_TEXTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

struct fx_cfi;

enum fx_textmap_kind {
    FX_TEXTMAP_FILE = 0,    /* a path: an ELF file normally (the symbolizer checks) */
    FX_TEXTMAP_DELETED = 1, /* the path was followed by " (deleted)", which is removed */
    FX_TEXTMAP_ANON = 2,    /* no path, or a name set with prctl: "[anon:NAME]" (e.g. JIT code) */
    FX_TEXTMAP_SPECIAL = 3  /* another bracketed kernel name: [vdso], [vsyscall] */
};

struct fx_textmap_entry {
    uintptr_t start; /* first byte */
    uintptr_t end;   /* one past the last byte */
    uint64_t offset; /* file offset of start */
    uint64_t inode;  /* 0 for ANON and SPECIAL */
    uint32_t dev_major;
    uint32_t dev_minor;
    enum fx_textmap_kind kind;
    const char *path;         /* "" or "[anon:NAME]" for ANON; points into the table's own block */
    const struct fx_cfi *cfi; /* NULL from fx_textmap_read; an owner may set it before the
                                 table is published (cstack=dwarf: the file's unwind table,
                                 which must outlive every table that points to it) */
    bool frame_pointers;      /* false from fx_textmap_read; an owner may set it: the file is
                                 known to be built with frame pointers (libjvm) */
};

/* One block: header, `count` entries sorted by start (no two overlap), then the paths. */
struct fx_textmap {
    size_t count;
    struct fx_textmap_entry entries[];
};

/* Reads a maps file (e.g. "/proc/self/maps") and keeps its executable mappings. On success
 * *out is a new table (free with fx_textmap_free); on failure *out is NULL, eb says which line
 * and why in one line, and the result is FX_EIO (unreadable), FX_EINVAL (a malformed line or two
 * executable mappings that overlap) or FX_ENOMEM. Not signal-safe. */
int fx_textmap_read(const char *maps_path, struct fx_textmap **out, struct fx_errbuf *eb);

/* The same for the private read-write mappings ("rw?p": thread stacks, heaps): the stack table
 * in which a thread's stack pointer finds its stack (agent/sampling/vm_threads.c). Only the
 * selection differs; the entries' cfi stay NULL. Not signal-safe. */
int fx_textmap_read_rw(const char *maps_path, struct fx_textmap **out, struct fx_errbuf *eb);

/* Frees a table; NULL is a no-op. Only once no reader can hold it (see the slot above). */
void fx_textmap_free(struct fx_textmap *t);

/* The mapping that contains addr, or NULL (also for a NULL table). Async-signal-safe. */
static inline const struct fx_textmap_entry *fx_textmap_lookup_sigsafe(const struct fx_textmap *t,
                                                                       uintptr_t addr)
{
    if (!t)
        return NULL;
    size_t lo = 0, hi = t->count; /* the answer is in [lo, hi) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct fx_textmap_entry *e = &t->entries[mid];
        if (addr < e->start)
            hi = mid;
        else if (addr >= e->end)
            lo = mid + 1;
        else
            return e;
    }
    return NULL;
}

/* The publication slot; zero-initialised it is valid and empty (no table). */
struct fx_textmap_slot {
    struct fx_textmap *current; /* atomic: loaded by readers, exchanged by the writer */
    uint32_t gen;               /* atomic: the epoch, bumped by each publish */
    uint32_t readers[2];        /* atomic: readers inside, by the parity of their epoch */
    struct fx_textmap *retired; /* writer only: replaced, not yet freed */
};

/* A reader's ticket: which counter it is in (FX_TEXTMAP_NO_TICKET: none). */
#define FX_TEXTMAP_NO_TICKET 2u

/* Reader side, async-signal-safe, lock-free, never waits. Returns the current table (NULL when
 * none is published, or when two publishes raced the entry: the caller counts that sample as
 * having no map) and sets *ticket; the table stays valid until fx_textmap_slot_leave_sigsafe
 * with that ticket, which every enter needs exactly once. */
static inline const struct fx_textmap *fx_textmap_slot_enter_sigsafe(struct fx_textmap_slot *s,
                                                                     uint32_t *ticket)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        uint32_t g = __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) & 1u;
        __atomic_add_fetch(&s->readers[g], 1, __ATOMIC_SEQ_CST);
        const struct fx_textmap *t = __atomic_load_n(&s->current, __ATOMIC_SEQ_CST);
        if ((__atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) & 1u) == g) {
            *ticket = g;
            return t;
        }
        __atomic_sub_fetch(&s->readers[g], 1, __ATOMIC_SEQ_CST);
    }
    *ticket = FX_TEXTMAP_NO_TICKET;
    return NULL;
}

static inline void fx_textmap_slot_leave_sigsafe(struct fx_textmap_slot *s, uint32_t ticket)
{
    if (ticket < 2)
        __atomic_sub_fetch(&s->readers[ticket], 1, __ATOMIC_SEQ_CST);
}

/* Writer side (one thread at a time). Publish takes ownership of t, makes it current and
 * retires the previous table. It first reclaims; if the previously retired table still has
 * readers it returns FX_EFULL and changes nothing (t is still the caller's). */
int fx_textmap_slot_publish(struct fx_textmap_slot *s, struct fx_textmap *t);

/* Frees the retired table once no reader can hold it; returns whether one is still retired. */
bool fx_textmap_slot_reclaim(struct fx_textmap_slot *s);

/* Frees the current and retired tables; only after every reader is gone for good (e.g. once
 * the signal handlers that read the slot can no longer run). Leaves the slot zeroed. */
void fx_textmap_slot_destroy(struct fx_textmap_slot *s);

#endif
