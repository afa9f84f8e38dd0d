/* SPDX-License-Identifier: Apache-2.0 */
/* The unwind tables of cstack=dwarf (issue 16), outside signal context: one fx_cfi table per
 * library file (device and inode), built lazily on the drain thread the first time a
 * frame-pointer step fails in the library (the handler queues the mapping in fx_native.want), then
 * set on the text map's entries of that file before each publication (native_maps.c), which
 * is how the handler finds it. Lazy because the cost is the library's: ~0.3 ms for Debian's
 * libz, ~16 ms for libc, ~160-190 ms and 2-3 MB for libjvm (docs/BENCHMARKS.md), and most
 * programs never sample most of their libraries, nor need tables where frame pointers work. A table
 * is never freed: text maps retired by the slot protocol may still point to it, and a library is
 * rarely unloaded. A library whose table cannot be built gets an empty table (no rows), so walks
 * step it by frame pointer and stop asking. A table built is kept across JVM starts in a cache
 * directory (include/fx_cfi_cache.h; FXAGENT_CACHE=DIR|off): the next JVM that needs the same
 * library's table reads it in a millisecond instead of building it again (issue 31), and reads
 * it when the library's mapping is first seen, before any walk asks (preload, issue 32). Callers
 * hold native_maps.c's lock. Leaf module: calls fx_cfi, its cache, the text map, base's clock and
 * the profile's meta.extra only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fx_alloc.h"
#include "fx_cache_dir.h"
#include "fx_cfi_cache.h"
#include "native_walk.h"

struct lib {
    uint64_t inode;
    uint32_t dev_major, dev_minor;
    struct fx_cfi *table; /* &empty when the build failed; NULL: not built (preload found none) */
    struct fx_cfi_stats st;
    int64_t build_ns;
    bool cached;   /* read from the cache directory, not built */
    bool preload;  /* read from the cache when its mapping was first seen */
    char name[64]; /* the file name, for the report */
};

static struct fx_cfi empty; /* count 0, no segments: every lookup misses */

static uint64_t table_bytes; /* atomic: what the tables hold, for status (native_unwind.c) */

static struct {
    struct lib *libs;
    size_t n, cap;
    uint64_t failed, wants, cached, preloaded, cache_errors;
    int cache; /* 0: not looked at yet, 1: cache_dir is used, -1: no cache */
    char cache_dir[512];
    char error[200];       /* the last failed build's reason */
    char cache_error[300]; /* the last cache file that could not be read or written */
} nu;

static struct lib *find(const struct fx_textmap_entry *e)
{
    for (size_t i = 0; i < nu.n; i++) {
        struct lib *l = &nu.libs[i];
        if (l->inode == e->inode && l->dev_major == e->dev_major && l->dev_minor == e->dev_minor)
            return l;
    }
    return NULL;
}

/* The cache directory, chosen at the first build (the environment is read once). */
static const char *cache_dir(void)
{
    if (nu.cache == 0)
        nu.cache = fx_cache_dir(getenv("FXAGENT_CACHE"), getenv("XDG_CACHE_HOME"), getenv("HOME"),
                                "cfi", nu.cache_dir, sizeof(nu.cache_dir))
                           ? 1
                           : -1;
    return nu.cache == 1 ? nu.cache_dir : NULL;
}

static void cache_failed(const struct fx_errbuf *eb)
{
    nu.cache_errors++;
    snprintf(nu.cache_error, sizeof(nu.cache_error), "%s", eb->msg);
}

/* A new entry for e's library, its table not built yet (NULL), or NULL when out of memory. */
static struct lib *add(const struct fx_textmap_entry *e)
{
    if (fx_grow(&nu.libs, &nu.cap, nu.n, 1, sizeof(*nu.libs), 16) != 0)
        return NULL; /* no memory: the walk keeps stepping by frame pointer and asks again */
    struct lib *l = &nu.libs[nu.n++];
    *l = (struct lib){.inode = e->inode, .dev_major = e->dev_major, .dev_minor = e->dev_minor};
    const char *slash = strrchr(e->path, '/');
    snprintf(l->name, sizeof(l->name), "%s", slash != NULL ? slash + 1 : e->path);
    return l;
}

/* The library file at e->path into *st when it is still the mapping's file and there is a cache
 * directory: what keeping its table across starts needs. */
static bool cacheable(const struct fx_textmap_entry *e, struct stat *st)
{
    return cache_dir() != NULL && stat(e->path, st) == 0 && (uint64_t)st->st_ino == e->inode;
}

static void build(const struct fx_textmap_entry *e)
{
    struct lib *l = find(e);
    if (l == NULL && (l = add(e)) == NULL)
        return;
    struct fx_errbuf eb = {{0}};
    int64_t t0 = fx_now_ns();
    struct stat st;
    bool keep = cacheable(e, &st);
    int rc = keep ? fx_cfi_cache_load(nu.cache_dir, e->path, &st, &l->table, &l->st, &eb)
                  : FX_ENOTFOUND;
    l->cached = rc == FX_OK;
    nu.cached += l->cached;
    if (rc == FX_EIO)
        cache_failed(&eb);
    if (!l->cached && fx_cfi_build(e->path, &l->table, &l->st, &eb) != FX_OK) {
        l->table = &empty;
        nu.failed++;
        snprintf(nu.error, sizeof(nu.error), "%s", eb.msg);
    } else if (!l->cached && keep &&
               fx_cfi_cache_store(nu.cache_dir, e->path, &st, l->table, &l->st, &eb) != FX_OK) {
        cache_failed(&eb);
    }
    l->build_ns = fx_now_ns() - t0;
    __atomic_add_fetch(&table_bytes, l->table != &empty ? l->st.bytes : 0, __ATOMIC_RELAXED);
}

/* A table an earlier JVM kept in the cache directory was built because a walk there needed it:
 * it is read when the library's mapping is first seen (sampling's start, or the map's re-read
 * after a load), so walks have it from the first sample instead of one drain cycle after the
 * first frame-pointer step that fails there, a sample lost per library and JVM ("walk stopped:
 * unwind table not built yet": qsort's comparators on the compiler threads, libz under the
 * class loader at start-up, docs/BENCHMARKS.md). A file past PRELOAD_MAX waits for a walk to ask,
 * as does libjvm (frame pointers: its table is built only where a step fails). No cache file:
 * the library is remembered (table NULL) and built when a walk asks, as before. */
#define PRELOAD_MAX (1u << 20)

static void preload(const struct fx_textmap_entry *e)
{
    struct lib *l = add(e);
    struct stat st, fs;
    char name[1024];
    if (l == NULL || !cacheable(e, &st) ||
        !fx_cache_file_name(nu.cache_dir, e->path, &st, "cfi", name, sizeof(name)) ||
        stat(name, &fs) != 0 || fs.st_size > (off_t)PRELOAD_MAX)
        return;
    struct fx_errbuf eb = {{0}};
    int64_t t0 = fx_now_ns();
    int rc = fx_cfi_cache_load(nu.cache_dir, e->path, &st, &l->table, &l->st, &eb);
    if (rc != FX_OK) {
        l->table = NULL; /* a walk that asks builds it */
        if (rc == FX_EIO)
            cache_failed(&eb);
        return;
    }
    l->cached = l->preload = true;
    nu.cached++;
    nu.preloaded++;
    l->build_ns = fx_now_ns() - t0;
    __atomic_add_fetch(&table_bytes, l->st.bytes, __ATOMIC_RELAXED);
}

uint64_t fx_native_unwind_bytes(void)
{
    return __atomic_load_n(&table_bytes, __ATOMIC_RELAXED);
}

bool fx_native_unwind_take_wants(const struct fx_textmap *map)
{
    bool republish = false;
    for (int i = 0; i < FX_NATIVE_WANTS; i++) {
        uintptr_t start = __atomic_exchange_n(&fx_native.want[i], 0, __ATOMIC_ACQUIRE);
        if (start == 0)
            continue;
        nu.wants++;
        const struct fx_textmap_entry *e = fx_textmap_lookup_sigsafe(map, start);
        if (e == NULL || e->start != start || e->kind != FX_TEXTMAP_FILE)
            continue; /* unmapped since, or a newer map: a later walk asks again */
        const struct lib *l = find(e);
        if (l == NULL || l->table == NULL)
            build(e);
        republish = true; /* also when built before but not yet on a published map */
    }
    return republish;
}

void fx_native_unwind_attach(struct fx_textmap *map)
{
    for (size_t i = 0; i < map->count; i++) {
        struct fx_textmap_entry *e = &map->entries[i];
        /* HotSpot builds libjvm with frame pointers: its walks need no table unless a step
         * fails (~2.4 MB and up to a second to build); any other library stepped by frame
         * pointer gets its table, since frameless code there is skipped without a failure. */
        const char *slash = strrchr(e->path, '/');
        e->frame_pointers = strncmp(slash != NULL ? slash + 1 : e->path, "libjvm.so", 9) == 0;
        if (e->kind != FX_TEXTMAP_FILE)
            continue;
        const struct lib *l = find(e);
        if (l == NULL && !e->frame_pointers && __atomic_load_n(&fx_native.dwarf, __ATOMIC_RELAXED))
            preload(e);
        if ((l = find(e)) != NULL)
            e->cfi = l->table;
    }
}

void fx_native_unwind_report(struct fx_profile *p, const char *g)
{
    if (!__atomic_load_n(&fx_native.dwarf, __ATOMIC_RELAXED))
        return;
    uint64_t rows = 0, bytes = 0, ns = 0;
    uint64_t tables = 0;
    for (size_t i = 0; i < nu.n; i++) {
        const struct lib *l = &nu.libs[i];
        if (l->table == NULL)
            continue; /* looked at by the preload, not built */
        tables++;
        rows += l->st.rows, bytes += l->st.bytes, ns += (uint64_t)l->build_ns;
        char label[120], value[120];
        snprintf(label, sizeof(label), "unwind table %s", l->name);
        if (l->table == &empty)
            snprintf(value, sizeof(value), "none (%.1f ms)", (double)l->build_ns / 1e6);
        else
            snprintf(value, sizeof(value),
                     "%" PRIu64 " FDEs, %" PRIu64 " rows (%" PRIu64 " outside the subset), %" PRIu64
                     " KiB, %s in %.1f ms",
                     l->st.fdes, l->st.rows, l->st.unsupported, l->st.bytes / 1024,
                     l->preload  ? "read from the cache at its mapping"
                     : l->cached ? "read from the cache"
                                 : "built",
                     (double)l->build_ns / 1e6);
        fx_profile_extra_str(p, g, label, value);
    }
    fx_profile_extra_int(p, g, "unwind tables built (cstack=dwarf, this JVM)",
                         (int64_t)(tables - nu.failed));
    fx_profile_extra_loss(p, g, "unwind tables failed (this JVM)", (int64_t)nu.failed);
    if (nu.error[0] != '\0')
        fx_profile_extra_str(p, g, "unwind table last error (this JVM)", nu.error);
    fx_profile_extra_int(p, g, "unwind tables read from the cache (this JVM)", (int64_t)nu.cached);
    fx_profile_extra_int(p, g, "unwind tables read from the cache at their mapping (this JVM)",
                         (int64_t)nu.preloaded);
    fx_profile_extra_str(p, g, "unwind table cache", nu.cache == 1 ? nu.cache_dir : "none");
    fx_profile_extra_detail(p, g, "unwind table cache files not read or written (this JVM)",
                            (int64_t)nu.cache_errors);
    if (nu.cache_error[0] != '\0')
        fx_profile_extra_str(p, g, "unwind table cache last error (this JVM)", nu.cache_error);
    fx_profile_extra_int(p, g, "unwind table rows (this JVM)", (int64_t)rows);
    fx_profile_extra_int(p, g, "unwind table bytes (this JVM)", (int64_t)bytes);
    fx_profile_extra_int(p, g, "unwind table build time (us, this JVM)", (int64_t)(ns / 1000));
    fx_profile_extra_int(p, g, "unwind table requests", (int64_t)nu.wants);
    fx_profile_extra_loss(p, g, "unwind table requests not queued (queue full)",
                          (int64_t)__atomic_load_n(&fx_native.want_full, __ATOMIC_RELAXED));
}

/* The tables are the JVM's, built once and kept (their figures say "(this JVM)"); the requests
 * are the recording's. No handler is in flight: the atomic store only pairs with its adds. */
void fx_native_unwind_new_recording(void)
{
    nu.wants = 0;
    __atomic_store_n(&fx_native.want_full, 0, __ATOMIC_RELAXED);
}
