/* SPDX-License-Identifier: Apache-2.0 */
/* The JFR reader's file and chunk walk (issue 35). The file is mapped read-only; each chunk is
 * read in three passes over its bytes: the 68-byte header (big-endian: magic, version, size,
 * constant pool and metadata offsets, start time and ticks), the metadata event at its offset,
 * then the chain of constant pool (checkpoint) events from the header's offset backwards by
 * each one's delta, indexing every entry's (class, key) -> offset; events are then handed out
 * in file order. The previous chunk's pages are dropped (MADV_DONTNEED) when the next starts,
 * so the resident set follows the chunk, not the file. With fx_jfr_read_ahead a thread of the
 * reader's loads the next chunk (header, metadata, pools' index) while the caller reads this
 * one's events, one chunk ahead (fxprof convert: the other core was idle while it read).
 * Tests: unit.jfr. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_jfr_internal.h"

#define HEADER_SIZE 68

bool fx_jfr_is_jfr(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char magic[4];
    bool yes = read(fd, magic, 4) == 4 && !memcmp(magic, FX_JFR_MAGIC, 4);
    close(fd);
    return yes;
}

int fx_jfr_open(const char *path, struct fx_jfr **out, struct fx_errbuf *eb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fx_errbuf_set(eb, "%s: %s", path, strerror(errno));
        return FX_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fx_errbuf_set(eb, "%s: not a regular file", path);
        close(fd);
        return FX_EINVAL;
    }
    if (st.st_size < HEADER_SIZE) {
        fx_errbuf_set(eb, "%s: not a JFR recording (%lld bytes, shorter than a chunk header)", path,
                      (long long)st.st_size);
        close(fd);
        return FX_EINVAL;
    }
    const uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        fx_errbuf_set(eb, "%s: cannot map: %s", path, strerror(errno));
        close(fd);
        return FX_EIO;
    }
    if (memcmp(map, FX_JFR_MAGIC, 4)) {
        fx_errbuf_set(eb, "%s: not a JFR recording (no FLR magic)", path);
        munmap((void *)map, (size_t)st.st_size);
        close(fd);
        return FX_EINVAL;
    }
    struct fx_jfr *r = fx_calloc(1, sizeof *r);
    if (!r) {
        munmap((void *)map, (size_t)st.st_size);
        close(fd);
        return FX_ENOMEM;
    }
    r->fd = fd;
    r->map = map;
    r->size = (uint64_t)st.st_size;
    r->stats.file_size = r->size;
    r->meta.string_cls = UINT32_MAX;
    *out = r;
    return FX_OK;
}

/* Gives the mapped pages of the current chunk back (they are read again from the file if
 * touched). */
static void drop_chunk_pages(struct fx_jfr *r)
{
    if (!r->c0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)r->c0 & ~(uintptr_t)(page - 1);
    madvise((void *)a, (size_t)((uintptr_t)r->cend - a), MADV_DONTNEED);
}

static void ahead_free(struct fx_jfr_ahead *a);

void fx_jfr_close(struct fx_jfr *r)
{
    if (!r)
        return;
    if (r->ahead)
        ahead_free(r->ahead);
    jfr_meta_destroy(&r->meta);
    fx_jfr_map_destroy(&r->pool);
    munmap((void *)r->map, (size_t)r->size);
    close(r->fd);
    fx_free(r);
}

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* The event at chunk offset off: *c after its type id, bounded by its size. */
static int event_at(struct fx_jfr *r, uint64_t off, struct jfr_cur *c, uint64_t *type)
{
    uint64_t len = (uint64_t)(r->cend - r->c0);
    if (off < HEADER_SIZE || off >= len)
        return FX_EINVAL;
    struct jfr_cur h = {r->c0 + off, r->cend, false};
    uint64_t size = jfr_varint(&h);
    if (h.err || size == 0 || size > len - off)
        return FX_EINVAL;
    h.end = r->c0 + off + size;
    *type = jfr_varint(&h);
    *c = h;
    return h.err ? FX_EINVAL : FX_OK;
}

static int read_metadata(struct fx_jfr *r, uint64_t off, struct fx_errbuf *eb)
{
    struct jfr_cur c;
    uint64_t type;
    if (event_at(r, off, &c, &type) != FX_OK || type != 0) {
        fx_errbuf_set(eb, "chunk at offset %llu: no metadata event at its offset %llu",
                      (unsigned long long)r->chunk.offset, (unsigned long long)off);
        return FX_EINVAL;
    }
    jfr_varint(&c); /* start time */
    jfr_varint(&c); /* duration */
    jfr_varint(&c); /* metadata id */
    if (c.err) {
        fx_errbuf_set(eb, "chunk at offset %llu: the metadata event is cut short",
                      (unsigned long long)r->chunk.offset);
        return FX_EINVAL;
    }
    struct fx_errbuf sub = {{0}};
    int rc = jfr_meta_read(&r->meta, c.p, c.end, &sub);
    if (rc != FX_OK)
        fx_errbuf_set(eb, "chunk at offset %llu: %s", (unsigned long long)r->chunk.offset, sub.msg);
    return rc;
}

/* One checkpoint event: its pools' entries indexed; *delta to the previous one (0: last). */
static int read_pool(struct fx_jfr *r, uint64_t off, int64_t *delta)
{
    struct jfr_cur c;
    uint64_t type;
    if (event_at(r, off, &c, &type) != FX_OK || type != 1)
        return FX_EINVAL;
    jfr_varint(&c); /* start time */
    jfr_varint(&c); /* duration */
    *delta = (int64_t)jfr_varint(&c);
    jfr_u8(&c); /* checkpoint kind: flush, chunk header, statics, thread */
    uint64_t pools = jfr_varint(&c);
    for (uint64_t i = 0; i < pools && !c.err; i++) {
        uint32_t cls = jfr_meta_class_of(&r->meta, (int64_t)jfr_varint(&c));
        uint64_t n = jfr_varint(&c);
        if (cls == UINT32_MAX || n > (uint64_t)(c.end - c.p))
            return FX_EINVAL;
        for (uint64_t k = 0; k < n && !c.err; k++) {
            uint64_t key = jfr_varint(&c);
            uint64_t at = (uint64_t)(c.p - r->c0);
            jfr_skip(r, &c, cls, false, false, 0);
            uint64_t len = (uint64_t)(c.p - r->c0) - at; /* kept for fx_jfr_entry */
            if (at >> POOL_OFF_BITS)                     /* a chunk of a TiB: not a recording */
                return FX_EINVAL;
            if (!c.err && fx_jfr_map_put(&r->pool, cls, key,
                                         at | (len >> 24 ? 0 : len << POOL_OFF_BITS)) != FX_OK)
                return FX_ENOMEM;
        }
    }
    return c.err ? FX_EINVAL : FX_OK;
}

static int read_pools(struct fx_jfr *r, uint64_t off, struct fx_errbuf *eb)
{
    fx_jfr_map_clear(&r->pool);
    uint64_t len = (uint64_t)(r->cend - r->c0), seen = 0;
    int64_t delta = -1;
    while (off != 0 && delta != 0) {
        /* a delta chain that loops (hostile) ends once it has visited more events than fit */
        if (++seen > len / 4) {
            fx_errbuf_set(eb, "chunk at offset %llu: its constant pool chain loops",
                          (unsigned long long)r->chunk.offset);
            return FX_EINVAL;
        }
        int rc = read_pool(r, off, &delta);
        if (rc != FX_OK) {
            fx_errbuf_set(eb, "chunk at offset %llu: %s constant pool event at offset %llu",
                          (unsigned long long)r->chunk.offset,
                          rc == FX_ENOMEM ? "out of memory indexing the" : "a corrupt",
                          (unsigned long long)off);
            return rc;
        }
        off = (uint64_t)((int64_t)off + delta);
    }
    r->stats.pool_entries += r->pool.n;
    return FX_OK;
}

/* Reads the chunk at r->next: its header, metadata and constant pools' index (r's chunk state,
 * r->next moved past it; r->stats counts it). */
static int load_chunk(struct fx_jfr *r, struct fx_errbuf *eb)
{
    r->c0 = r->cend = r->pos = NULL;
    uint64_t at = r->next;
    if (at >= r->size)
        return 0;
    const uint8_t *h = r->map + at;
    uint64_t left = r->size - at;
    uint64_t size = left >= HEADER_SIZE ? be64(h + 8) : 0;
    uint64_t meta = left >= HEADER_SIZE ? be64(h + 24) : 0;
    /* h[64], the chunk's state: 0 finished, 255 its header being updated, else the generation
     * of a chunk JFR is still writing (a repository's last file), whose header covers only
     * what was flushed, more bytes of it following: incomplete, as one cut short */
    if (left < HEADER_SIZE || memcmp(h, FX_JFR_MAGIC, 4) || size < HEADER_SIZE || size > left ||
        meta == 0 || h[64] != 0) {
        if (left >= 4 && memcmp(h, FX_JFR_MAGIC, 4)) {
            fx_errbuf_set(eb, "offset %llu: no chunk starts there (no FLR magic)",
                          (unsigned long long)at);
            return FX_EINVAL;
        }
        /* cut short, or its header not yet written: the recording ends before it */
        r->stats.bytes_incomplete = left;
        r->next = r->size;
        return 0;
    }
    r->chunk = (struct fx_jfr_chunk_info){.major = (uint16_t)(h[4] << 8 | h[5]),
                                          .minor = (uint16_t)(h[6] << 8 | h[7]),
                                          .offset = at,
                                          .size = size,
                                          .start_ns = (int64_t)be64(h + 32),
                                          .duration_ns = (int64_t)be64(h + 40),
                                          .start_ticks = (int64_t)be64(h + 48),
                                          .ticks_per_second = (int64_t)be64(h + 56)};
    if (r->chunk.major != 2) {
        fx_errbuf_set(eb,
                      "chunk at offset %llu: JFR format %u.%u (this reader reads 2.x, "
                      "written by JDK 11 and later)",
                      (unsigned long long)at, r->chunk.major, r->chunk.minor);
        return FX_EUNSUPPORTED;
    }
    if (r->chunk.start_ns < 0 || r->chunk.duration_ns < 0 ||
        r->chunk.start_ns > INT64_MAX - r->chunk.duration_ns) {
        fx_errbuf_set(eb,
                      "chunk at offset %llu: start %lld ns and duration %lld ns are out of range",
                      (unsigned long long)at, (long long)r->chunk.start_ns,
                      (long long)r->chunk.duration_ns);
        return FX_EINVAL;
    }
    if (r->chunk.ticks_per_second <= 0) {
        fx_errbuf_set(eb, "chunk at offset %llu: %lld ticks per second", (unsigned long long)at,
                      (long long)r->chunk.ticks_per_second);
        return FX_EINVAL;
    }
    r->c0 = h;
    r->cend = h + size;
    r->next = at + size;
    int rc = read_metadata(r, meta, eb);
    if (rc == FX_OK)
        rc = read_pools(r, be64(h + 16), eb);
    if (rc != FX_OK)
        return rc;
    r->pos = h + HEADER_SIZE;
    r->stats.chunks++;
    return 1;
}

/* The read-ahead (fx_jfr_read_ahead): a thread that loads the chunk after the current one
 * (load_chunk into `shadow`, a reader of the same mapping with a metadata and pool index of its
 * own) while the caller reads the current one's events; fx_jfr_next_chunk waits for it and swaps
 * the two readers' chunk states. Only one chunk ahead: memory stays two chunks' indexes. */
struct fx_jfr_ahead {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fx_jfr shadow;
    struct fx_errbuf eb;
    int rc;
    uint64_t at; /* the chunk being loaded or loaded */
    bool busy, done, quit;
};

static void *ahead_main(void *arg)
{
    struct fx_jfr_ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->quit && !a->busy)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->quit)
            break;
        struct fx_jfr *s = &a->shadow;
        s->next = a->at;
        s->stats.chunks = s->stats.pool_entries = s->stats.bytes_incomplete = 0;
        a->eb.msg[0] = '\0';
        pthread_mutex_unlock(&a->mu);
        int rc = load_chunk(s, &a->eb);
        pthread_mutex_lock(&a->mu);
        a->rc = rc;
        a->busy = false;
        a->done = true;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int fx_jfr_read_ahead(struct fx_jfr *r)
{
    if (r->ahead)
        return FX_OK;
    struct fx_jfr_ahead *a = fx_calloc(1, sizeof *a);
    if (!a)
        return FX_ENOMEM;
    a->shadow = (struct fx_jfr){.fd = -1, .map = r->map, .size = r->size};
    a->shadow.meta.string_cls = UINT32_MAX;
    if (pthread_mutex_init(&a->mu, NULL)) {
        fx_free(a);
        return FX_EUNSUPPORTED;
    }
    if (pthread_cond_init(&a->cv, NULL)) {
        pthread_mutex_destroy(&a->mu);
        fx_free(a);
        return FX_EUNSUPPORTED;
    }
    if (pthread_create(&a->th, NULL, ahead_main, a)) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        fx_free(a);
        return FX_EUNSUPPORTED;
    }
    r->ahead = a;
    return FX_OK;
}

static void ahead_free(struct fx_jfr_ahead *a)
{
    pthread_mutex_lock(&a->mu);
    a->quit = true; /* a chunk being loaded is finished first */
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    jfr_meta_destroy(&a->shadow.meta);
    fx_jfr_map_destroy(&a->shadow.pool);
    fx_free(a);
}

/* The chunk the read-ahead loaded at r->next into r: 1 taken (*rc its result), 0 none there. */
static int ahead_take(struct fx_jfr *r, int *rc, struct fx_errbuf *eb)
{
    struct fx_jfr_ahead *a = r->ahead;
    pthread_mutex_lock(&a->mu);
    while (a->busy)
        pthread_cond_wait(&a->cv, &a->mu);
    bool ok = a->done && a->at == r->next;
    a->done = false;
    pthread_mutex_unlock(&a->mu);
    if (!ok)
        return 0;
    struct fx_jfr *s = &a->shadow, t = *r;
    /* the chunk state is swapped; the file, the stats and the read-ahead stay r's */
    r->chunk = s->chunk, r->c0 = s->c0, r->cend = s->cend, r->pos = s->pos, r->next = s->next;
    r->meta = s->meta, r->pool = s->pool;
    s->c0 = s->cend = s->pos = NULL;
    s->meta = t.meta, s->pool = t.pool;
    r->stats.chunks += s->stats.chunks;
    r->stats.pool_entries += s->stats.pool_entries;
    if (s->stats.bytes_incomplete)
        r->stats.bytes_incomplete = s->stats.bytes_incomplete;
    *rc = a->rc;
    if (a->rc < 0)
        fx_errbuf_set(eb, "%s", a->eb.msg);
    return 1;
}

int fx_jfr_next_chunk(struct fx_jfr *r, struct fx_errbuf *eb)
{
    drop_chunk_pages(r);
    int rc;
    if (!r->ahead || !ahead_take(r, &rc, eb))
        rc = load_chunk(r, eb);
    if (rc == 1 && r->ahead && r->next < r->size) { /* the next one, while this one is read */
        struct fx_jfr_ahead *a = r->ahead;
        pthread_mutex_lock(&a->mu);
        a->at = r->next;
        a->busy = true;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
    return rc;
}

const struct fx_jfr_chunk_info *fx_jfr_chunk(const struct fx_jfr *r)
{
    return &r->chunk;
}

int64_t fx_jfr_ticks_to_ns(const struct fx_jfr *r, int64_t ticks)
{
    /* in 128 bits and clamped: a damaged file's ticks must not overflow (fuzz.jfr_convert);
     * in 64 bits when nothing can (every event: the 128-bit division was 0.5 % of a conversion) */
    int64_t dt, d64, ns64;
    /* ticks of a nanosecond (the JDK's clock on Linux, rec1g's): no division (two a traced
     * call); the same value as below */
    if (r->chunk.ticks_per_second == 1000000000 &&
        !__builtin_sub_overflow(ticks, r->chunk.start_ticks, &dt) &&
        !__builtin_add_overflow(r->chunk.start_ns, dt, &ns64))
        return ns64;
    if (!__builtin_sub_overflow(ticks, r->chunk.start_ticks, &dt) && dt > -9000000000LL &&
        dt < 9000000000LL && r->chunk.ticks_per_second > 0 &&
        !__builtin_add_overflow(r->chunk.start_ns,
                                d64 = dt * 1000000000 / (int64_t)r->chunk.ticks_per_second, &ns64))
        return ns64;
    __int128 d = ((__int128)ticks - r->chunk.start_ticks) * 1000000000 / r->chunk.ticks_per_second;
    __int128 ns = (__int128)r->chunk.start_ns + d;
    return ns > INT64_MAX ? INT64_MAX : ns < INT64_MIN ? INT64_MIN : (int64_t)ns;
}

const struct fx_jfr_stats *fx_jfr_stats(const struct fx_jfr *r)
{
    return &r->stats;
}

int fx_jfr_next_event(struct fx_jfr *r, struct fx_jfr_obj *ev, struct fx_errbuf *eb)
{
    while (r->pos && r->pos < r->cend) {
        struct jfr_cur c = {r->pos, r->cend, false};
        uint64_t size = jfr_varint(&c);
        if (c.err || size == 0 || size > (uint64_t)(r->cend - r->pos)) {
            fx_errbuf_set(eb, "chunk at offset %llu: an event at offset %llu has size %llu",
                          (unsigned long long)r->chunk.offset, (unsigned long long)(r->pos - r->c0),
                          (unsigned long long)size);
            return FX_EINVAL;
        }
        const uint8_t *end = r->pos + size;
        c.end = end;
        uint64_t type = jfr_varint(&c);
        r->pos = end;
        if (c.err || type <= 1) { /* metadata and constant pools were read with the chunk */
            r->stats.metadata_events += !c.err && type == 0;
            r->stats.pool_events += !c.err && type == 1;
            continue;
        }
        uint32_t cls = jfr_meta_class_of(&r->meta, (int64_t)type);
        if (cls == UINT32_MAX)
            continue; /* as the JDK's reader: an event of an undeclared type is skipped */
        *ev = (struct fx_jfr_obj){cls, c.p, end};
        return 1;
    }
    return 0;
}

uint32_t fx_jfr_class_count(const struct fx_jfr *r)
{
    return r->meta.n_classes;
}

const char *fx_jfr_class_name(const struct fx_jfr *r, uint32_t cls)
{
    return cls < r->meta.n_classes ? r->meta.classes[cls].name : "";
}

bool fx_jfr_class_is_event(const struct fx_jfr *r, uint32_t cls)
{
    return cls < r->meta.n_classes && r->meta.classes[cls].is_event;
}

uint32_t fx_jfr_class_find(const struct fx_jfr *r, const char *name)
{
    for (uint32_t i = 0; i < r->meta.n_classes; i++)
        if (!strcmp(r->meta.classes[i].name, name))
            return i;
    return UINT32_MAX;
}

int fx_jfr_field(const struct fx_jfr *r, uint32_t cls, const char *name)
{
    if (cls >= r->meta.n_classes)
        return -1;
    const struct jfr_class *k = &r->meta.classes[cls];
    for (uint32_t f = 0; f < k->n_fields; f++)
        if (!strcmp(k->fields[f].name, name))
            return (int)f;
    return -1;
}

int64_t fx_jfr_class_id(const struct fx_jfr *r, uint32_t cls)
{
    return cls < r->meta.n_classes ? r->meta.classes[cls].id : -1;
}

uint32_t fx_jfr_field_count(const struct fx_jfr *r, uint32_t cls)
{
    return cls < r->meta.n_classes ? r->meta.classes[cls].n_fields : 0;
}
