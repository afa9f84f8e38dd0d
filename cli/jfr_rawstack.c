/* SPDX-License-Identifier: Apache-2.0 */
/* Stacks known by their bytes across chunks (issue 35). Each chunk sends its stack traces
 * again: a stack resolved in an earlier chunk comes back with another key but the same bytes
 * (the same method ids, lines, bytecode indexes, frame type ids), and resolving it frame by
 * frame again (a frame lookup per frame, a model stack node per frame past the prefix it shares
 * with the stack before) was most of a recording of traced calls' reading. Here a stack's
 * bytes (its pool entry's, fx_jfr_entry) are hashed to 96 bits with their length (a false
 * match: about 2^-60 for a million stacks) and map to the model stack they resolved to, with
 * whether they were truncated (counted again at each reuse, as a chunk's stacks always were).
 *
 * Bytes mean the same stack only while the ids in them mean the same things: method ids are
 * the JVM's for the recording's life, but two recordings concatenated (two JVMs) reuse ids for
 * other methods. So at each chunk's start every Method entry of its pools is named
 * ("pkg.Class.method", fx_jfr_profile_method: the func a frame of it is) and every FrameType
 * entry typed (fx_jfr_profile_frame_kind), against the names and types the known stacks were
 * resolved with; the stack layout (the fields' indexes) likewise. One id named otherwise, or
 * another layout: every known stack is forgotten and this chunk's names start the table again.
 * async-profiler's chunks (native frames named by their library) are not reused. A stack of a
 * corrupt chunk whose bytes equal a known one resolves as that one did, where resolving it
 * frame by frame could have failed on a method the chunk lacks. Tests: unit.jfr_rawstack,
 * it.jfr (a chunk twice: every stack against jfr print's). (The JDK's reader keeps the first
 * chunk's constants for ids it has seen; fxprof reads each chunk's own, as before.) */
#include "fxprof.h"

#include <string.h>

#include "fx_jfr.h"
#include "jfr_profile.h"

#define M_METHOD 0
#define M_FTYPE  1

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* Two 64-bit hashes of n bytes in one pass, 8 bytes a step (a multiply a lane a step, mixed
 * at the end); h[1] from another seed and another multiplier. */
static void hash_bytes(const uint8_t *p, size_t n, uint64_t seed, uint64_t h[2])
{
    uint64_t a = seed ^ n, b = ~seed + n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        a = (a ^ w) * 0x9E3779B97F4A7C15ull;
        a ^= a >> 29;
        b = (b + w) * 0xC2B2AE3D27D4EB4Full;
        b ^= b >> 31;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    h[0] = mix(a ^ w);
    h[1] = mix(b + w + 0x165667B19E3779F9ull);
}

static uint64_t hash64(const uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t h[2];
    hash_bytes(p, n, seed, h);
    return h[0] ^ h[1];
}

struct check {
    struct conv *c;
    const struct fx_jfr_names *names;
    uint32_t cls;
    bool differs;
    int rc;
};

/* A Method entry's name against the table's (a new one is added). */
static int check_method(void *ctx, int64_t key)
{
    struct check *k = ctx;
    struct fx_errbuf eb = {{0}};
    struct fx_jfr_value ref = {.kind = FX_JFR_REF, .cls = k->cls, .i = key};
    const char *name = k->names->method(k->c, &ref, &eb);
    uint64_t h = hash64((const uint8_t *)name, strlen(name), 1), old;
    if (fx_jfr_map_get(&k->c->rs.names, M_METHOD, (uint64_t)key, &old)) {
        k->differs = k->differs || old != h;
        return 0;
    }
    k->rc = fx_jfr_map_put(&k->c->rs.names, M_METHOD, (uint64_t)key, h);
    return k->rc;
}

static int check_ftype(void *ctx, int64_t key)
{
    struct check *k = ctx;
    struct fx_errbuf eb = {{0}};
    struct fx_jfr_value ref = {.kind = FX_JFR_REF, .cls = k->cls, .i = key};
    uint64_t h = k->names->frame_kind(k->c, &ref, &eb), old;
    if (fx_jfr_map_get(&k->c->rs.names, M_FTYPE, (uint64_t)key, &old)) {
        k->differs = k->differs || old != h;
        return 0;
    }
    k->rc = fx_jfr_map_put(&k->c->rs.names, M_FTYPE, (uint64_t)key, h);
    return k->rc;
}

/* Every Method and FrameType entry of the chunk against the table: whether one differs. */
static int check_names(struct conv *c, const struct fx_jfr_names *names, bool *differs)
{
    struct check k = {.c = c, .names = names, .cls = fx_jfr_class_find(c->r, "jdk.types.Method")};
    fx_jfr_pool_each(c->r, k.cls, check_method, &k);
    k.cls = fx_jfr_class_find(c->r, "jdk.types.FrameType");
    if (k.rc == FX_OK)
        fx_jfr_pool_each(c->r, k.cls, check_ftype, &k);
    *differs = k.differs;
    return k.rc;
}

void fx_jfr_rawstack_chunk(struct conv *c, const struct fx_jfr_names *names)
{
    struct rawstacks *s = &c->rs;
    const struct layout *l = &c->l;
    uint32_t st = fx_jfr_class_find(c->r, "jdk.types.StackTrace"),
             fr = fx_jfr_class_find(c->r, "jdk.types.StackFrame");
    int64_t shape[] = {l->st_truncated,
                       l->st_frames,
                       l->f_method,
                       l->f_line,
                       l->f_type,
                       fx_jfr_field_count(c->r, st),
                       fx_jfr_field_count(c->r, fr)};
    uint64_t layout = hash64((const uint8_t *)shape, sizeof shape, 2);
    s->ok = false;
    if (l->async_profiler || l->f_method < 0 || l->st_frames < 0)
        return;
    bool differs = s->layout != layout;
    if (!differs && check_names(c, names, &differs) != FX_OK)
        return; /* out of memory: resolved frame by frame */
    if (differs) {
        fx_jfr_map_clear(&s->known);
        fx_jfr_map_clear(&s->names);
        s->layout = layout;
        if (check_names(c, names, &differs) != FX_OK)
            return;
    }
    s->ok = true;
}

/* The pool entry's hashes: key and class of the map (the class never UINT32_MAX, its empty). */
static bool entry_hash(struct conv *c, const struct fx_jfr_value *ref, uint64_t *key, uint32_t *cls,
                       size_t *len)
{
    const uint8_t *p;
    if (!c->rs.ok || fx_jfr_entry(c->r, ref, &p, len) != FX_OK || *len == 0)
        return false;
    uint64_t h[2];
    hash_bytes(p, *len, 3, h);
    *key = h[0];
    *cls = (uint32_t)h[1] & 0x7fffffffu;
    return true;
}

bool fx_jfr_rawstack_get(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id *out,
                         bool *truncated)
{
    uint64_t key, v;
    uint32_t cls;
    size_t len;
    if (!entry_hash(c, ref, &key, &cls, &len) || !fx_jfr_map_get(&c->rs.known, cls, key, &v) ||
        v >> 33 != len)
        return false;
    *out = (fx_stack_id){(uint32_t)v};
    *truncated = v >> 32 & 1;
    return true;
}

int fx_jfr_rawstack_put(struct conv *c, const struct fx_jfr_value *ref, fx_stack_id st,
                        bool truncated)
{
    uint64_t key;
    uint32_t cls;
    size_t len;
    if (!entry_hash(c, ref, &key, &cls, &len))
        return FX_OK;
    return fx_jfr_map_put(&c->rs.known, cls, key,
                          st.i | (uint64_t)truncated << 32 | (uint64_t)len << 33);
}

void fx_jfr_rawstack_free(struct conv *c)
{
    fx_jfr_map_destroy(&c->rs.known);
    fx_jfr_map_destroy(&c->rs.names);
}
