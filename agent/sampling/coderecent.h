/* SPDX-License-Identifier: Apache-2.0 */
/* The code table's two levels (issue 31) and the handler's lookup in them: the base table the
 * drain republishes (codemap.c) and a small "recent" table the JVMTI callbacks append to as code
 * arrives, so a new nmethod or stub is found by the next sample, not at the drain's next pass.
 * A recent table is append-only while any handler can read it: an entry is written whole, then
 * the count stored with release; the handler loads the count with acquire and reads only the
 * entries below it. It is reset and written again only after it has left every table a handler
 * can hold (codemap.c: the drain saw fx_sig.code_readers at 0 after the table that carried it was
 * replaced). Included by fx_recover.h; the lookup is pure (no calls, no globals) and signal-safe.
 * Writer side: coderecent.c. Tests: unit.coderecent. */
#ifndef FX_CODERECENT_H
#define FX_CODERECENT_H

/* Entries in one recent table: 32 KiB; past FX_RECENT_MERGE the callbacks hurry the drain, which
 * folds the table into the base and starts an empty one. Its lookup is a scan, newest first. */
#define FX_RECENT_CAP   512u
#define FX_RECENT_MERGE (FX_RECENT_CAP / 2)

struct fx_code_recent_entry {
    struct fx_code_range r; /* as the base table's ranges carry it (codemap.c) */
    bool removed;           /* CompiledMethodUnload of (r.begin, r.name): that range left */
};

struct fx_code_recent {
    uint32_t n; /* atomic: entries written (release after the entry; read with acquire) */
    struct fx_code_recent_entry e[FX_RECENT_CAP];
};

/* The base table's range holding pc, or NULL (sorted, no overlaps: a binary search). */
static inline const struct fx_code_range *fx_recover_find_base(const struct fx_code_table *t,
                                                               uintptr_t pc)
{
    if (t == NULL || t->n == 0)
        return NULL;
    size_t lo = 0, hi = t->n; /* first index with begin > pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].begin <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct fx_code_range *r = &t->r[lo - 1];
    return pc < r->end ? r : NULL;
}

/* Whether entries [from, n) of c, all newer than r, make r gone as the drain's fold would
 * (codemap.c): an added range overlapping it (its memory was reused), or its removal. */
static inline bool fx_recent_gone(const struct fx_code_recent *c, uint32_t from, uint32_t n,
                                  const struct fx_code_range *r)
{
    for (uint32_t i = from; i < n; i++) {
        const struct fx_code_recent_entry *e = &c->e[i];
        if (e->removed ? e->r.begin == r->begin && e->r.name == r->name
                       : e->r.begin < r->end && r->begin < e->r.end)
            return true;
    }
    return false;
}

/* Signal-safe: the range holding pc, or NULL: the newest recent entry that holds it unless a
 * newer one overlaps or removes it, else the base table's range unless any recent entry does.
 * Gives what the table the drain folds next would give (unit.coderecent). */
static inline const struct fx_code_range *fx_recover_find(const struct fx_code_table *t,
                                                          uintptr_t pc)
{
    const struct fx_code_range *r = fx_recover_find_base(t, pc);
    const struct fx_code_recent *c = t != NULL ? t->recent : NULL;
    if (c == NULL)
        return r;
    uint32_t n = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
    if (n > FX_RECENT_CAP)
        return r; /* never written so: not trusted */
    for (uint32_t i = n; i-- > 0;) {
        const struct fx_code_recent_entry *e = &c->e[i];
        if (!e->removed && pc >= e->r.begin && pc < e->r.end)
            return fx_recent_gone(c, i + 1, n, &e->r) ? NULL : &e->r;
    }
    return r != NULL && fx_recent_gone(c, 0, n, r) ? NULL : r;
}

/* Writer side (coderecent.c), never in a handler: codemap.c calls these under its lock or on
 * the drain. take: an empty table (the one kept, else a new one), NULL without memory; recycle:
 * a table no handler can read any more (or NULL), kept for the next take; idle: frees that. */
struct fx_code_recent *fx_coderecent_take(void);
void fx_coderecent_recycle(struct fx_code_recent *c);
void fx_coderecent_idle(void);
/* Appends r (removed: its unload) to c if there is room: its count after, or 0 when c is NULL or
 * full (counted: the caller's log alone has the change, for the next base table). */
uint32_t fx_coderecent_add(struct fx_code_recent *c, const struct fx_code_range *r, bool removed);
struct fx_profile;
void fx_coderecent_report(struct fx_profile *p, const char *group); /* its counts, meta.extra */

#endif
