/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_err.h"
#include "fx_profile.h"

/* core/ keeps the model's layout private; its own tests read the tables. */
#include "../../core/model/fx_profile_internal.h"
#include "../../core/model/fx_profile_model.h"

static fx_str_id str(struct fx_profile *p, const char *s)
{
    fx_str_id id = FX_STR_NONE;
    ck_assert_int_eq(fx_profile_cstring(p, s, &id), FX_OK);
    return id;
}

static fx_func_id func(struct fx_profile *p, const char *name, const char *res, int32_t line)
{
    struct fx_func_key k = {str(p, name), res ? str(p, res) : FX_STR_NONE,
                            str(p, "com/example/App.java"), line, true};
    fx_func_id id = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_func(p, &k, &id), FX_OK);
    return id;
}

static fx_frame_id frame(struct fx_profile *p, fx_func_id f, int32_t line, uint8_t sub)
{
    struct fx_frame_key k = {f, line, FX_CAT_JAVA, sub, 0};
    fx_frame_id id = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_frame(p, &k, &id), FX_OK);
    return id;
}

static fx_stack_id stack(struct fx_profile *p, fx_stack_id prefix, fx_frame_id fr)
{
    fx_stack_id id = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_stack(p, prefix, fr, &id), FX_OK);
    return id;
}

static fx_thread_id thread(struct fx_profile *p, const char *name)
{
    fx_thread_id t = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_thread_add(p, name, 100, 0, &t), FX_OK);
    return t;
}

START_TEST(test_profile_same_func_key_same_id)
{
    struct fx_profile *p = fx_profile_new();
    ck_assert_ptr_nonnull(p);
    fx_func_id a = func(p, "A.run", "app.jar", 10);
    ck_assert_uint_eq(func(p, "A.run", "app.jar", 10).i, a.i);
    /* Every key field matters: name, resource, source, line, is_java. */
    ck_assert_uint_ne(func(p, "A.walk", "app.jar", 10).i, a.i);
    ck_assert_uint_ne(func(p, "A.run", "lib.jar", 10).i, a.i);
    ck_assert_uint_ne(func(p, "A.run", NULL, 10).i, a.i);
    ck_assert_uint_ne(func(p, "A.run", "app.jar", 11).i, a.i);
    struct fx_func_key k = {str(p, "A.run"), str(p, "app.jar"), FX_STR_NONE, 10, true};
    fx_func_id b, c;
    ck_assert_int_eq(fx_profile_func(p, &k, &b), FX_OK);
    k.is_java = false;
    ck_assert_int_eq(fx_profile_func(p, &k, &c), FX_OK);
    ck_assert_uint_ne(b.i, a.i);
    ck_assert_uint_ne(c.i, b.i);
    ck_assert_uint_eq(p->funcs.count, 7);
    /* Resources and sources are derived tables: one row per distinct name. */
    ck_assert_uint_eq(p->resources.count, 2);
    ck_assert_uint_eq(p->sources.count, 1);
    ck_assert_uint_eq(p->funcs.resource_row[a.i], 0);
    ck_assert_uint_eq(p->funcs.source_row[b.i], FX_NONE_ID);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_same_frame_key_same_id)
{
    struct fx_profile *p = fx_profile_new();
    fx_func_id f = func(p, "A.run", "app.jar", 10);
    fx_func_id g = func(p, "A.walk", "app.jar", 20);
    fx_frame_id a = frame(p, f, 12, FX_JAVA_OTHER);
    ck_assert_uint_eq(frame(p, f, 12, FX_JAVA_OTHER).i, a.i);
    ck_assert_uint_ne(frame(p, g, 12, FX_JAVA_OTHER).i, a.i);
    ck_assert_uint_ne(frame(p, f, 13, FX_JAVA_OTHER).i, a.i);
    ck_assert_uint_ne(frame(p, f, 12, FX_JAVA_C2).i, a.i);
    fx_frame_id d, n;
    struct fx_frame_key k = {f, 12, FX_CAT_JAVA, FX_JAVA_INLINED, 1};
    ck_assert_int_eq(fx_profile_frame(p, &k, &d), FX_OK);
    k.inline_depth = 2;
    ck_assert_int_eq(fx_profile_frame(p, &k, &n), FX_OK);
    ck_assert_uint_ne(d.i, n.i);
    k = (struct fx_frame_key){f, 12, FX_CAT_NATIVE, 0, 0};
    ck_assert_int_eq(fx_profile_frame(p, &k, &n), FX_OK);
    ck_assert_uint_ne(n.i, a.i);
    ck_assert_uint_eq(p->frames.count, 7);
    fx_profile_free(p);
}
END_TEST

/* fx_profile_stack_at reads a row back (the depth cap of agent/model/stack_depth.c walks a
 * stack to its root with it). */
START_TEST(test_profile_stack_at_reads_the_row)
{
    struct fx_profile *p = fx_profile_new();
    fx_frame_id a = frame(p, func(p, "A.run", NULL, 1), 1, 0);
    fx_frame_id b = frame(p, func(p, "B.run", NULL, 2), 2, 0);
    fx_stack_id root = stack(p, FX_STACK_NONE, a), leaf = stack(p, root, b), pre = {77};
    fx_frame_id f = {77};
    ck_assert_int_eq(fx_profile_stack_at(p, leaf, &pre, &f), FX_OK);
    ck_assert_uint_eq(pre.i, root.i);
    ck_assert_uint_eq(f.i, b.i);
    ck_assert_int_eq(fx_profile_stack_at(p, root, &pre, &f), FX_OK);
    ck_assert_uint_eq(pre.i, FX_NONE_ID);
    ck_assert_uint_eq(f.i, a.i);
    ck_assert_int_eq(fx_profile_stack_at(p, (fx_stack_id){9}, &pre, &f), FX_EINVAL);
    ck_assert_int_eq(fx_profile_stack_at(p, FX_STACK_NONE, &pre, &f), FX_EINVAL);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_invalid_ids_are_rejected)
{
    struct fx_profile *p = fx_profile_new();
    fx_func_id f = func(p, "A.run", NULL, 1);
    fx_frame_id fr = frame(p, f, 1, 0);
    fx_stack_id s = stack(p, FX_STACK_NONE, fr), out = {77};
    ck_assert_int_eq(fx_profile_stack(p, (fx_stack_id){5}, fr, &out), FX_EINVAL);
    ck_assert_int_eq(fx_profile_stack(p, s, (fx_frame_id){9}, &out), FX_EINVAL);
    ck_assert_uint_eq(out.i, 77);
    fx_frame_id fo;
    struct fx_frame_key bad_sub = {f, 1, FX_CAT_JIT, 3, 0}; /* JIT has Other, C1, C2 */
    ck_assert_int_eq(fx_profile_frame(p, &bad_sub, &fo), FX_EINVAL);
    struct fx_frame_key bad_cat = {f, 1, FX_CAT_COUNT, 0, 0};
    ck_assert_int_eq(fx_profile_frame(p, &bad_cat, &fo), FX_EINVAL);
    struct fx_func_key bad_name = {{999}, FX_STR_NONE, FX_STR_NONE, -1, false};
    fx_func_id fu;
    ck_assert_int_eq(fx_profile_func(p, &bad_name, &fu), FX_EINVAL);
    ck_assert_int_eq(fx_profile_sample(p, (fx_thread_id){0}, 0, s, 0, 1),
                     FX_EINVAL); /* no thread yet */
    fx_thread_id t = thread(p, "main");
    ck_assert_int_eq(fx_profile_sample(p, t, 0, (fx_stack_id){3}, 0, 1), FX_EINVAL);
    ck_assert_int_eq(fx_profile_set_meta(p, "nonsense", "x"), FX_EINVAL);
    ck_assert_int_eq(fx_profile_set_meta_int(p, "nonsense", 1), FX_EINVAL);
    ck_assert_int_eq(fx_profile_marker(p, t, (fx_str_id){999}, 0, 0, 0, 0, FX_SCHEMA_NONE, NULL),
                     FX_EINVAL);
    ck_assert_int_eq(fx_profile_marker(p, t, str(p, "m"), 4, 0, 0, 0, FX_SCHEMA_NONE, NULL),
                     FX_EINVAL);
    ck_assert_uint_eq(p->threads[t.i]->samples.count, 0);
    ck_assert_uint_eq(p->threads[t.i]->markers.count, 0);
    fx_profile_free(p);
}
END_TEST

/* A random forest of stacks: interning returns existing rows, and every prefix row precedes
 * its child. */
START_TEST(test_profile_stack_prefixes_precede_children)
{
    struct fx_profile *p = fx_profile_new();
    fx_frame_id frames[16];
    for (int i = 0; i < 16; i++) {
        char name[16];
        snprintf(name, sizeof(name), "F.f%d", i);
        frames[i] = frame(p, func(p, name, NULL, i), i, 0);
    }
    srand(7);
    for (int path = 0; path < 2000; path++) {
        fx_stack_id s = FX_STACK_NONE;
        int depth = 1 + rand() % 12;
        for (int d = 0; d < depth; d++) {
            fx_frame_id fr = frames[rand() % 4 + (d % 3) * 4];
            fx_stack_id child = stack(p, s, fr);
            ck_assert_uint_eq(stack(p, s, fr).i, child.i);
            ck_assert_uint_eq(p->stacks.prefix[child.i], s.i);
            ck_assert_uint_eq(p->stacks.frame[child.i], fr.i);
            s = child;
        }
    }
    for (uint32_t i = 0; i < p->stacks.count; i++)
        ck_assert(p->stacks.prefix[i] == FX_NONE_ID || p->stacks.prefix[i] < i);
    fx_profile_free(p);
}
END_TEST

/* With all hashes equal, funcs, frames and stacks are told apart by their full keys alone. */
START_TEST(test_profile_hash_collisions_never_merge_rows)
{
    fx_rowidx_test_hash_mask(0);
    struct fx_profile *p = fx_profile_new();
    fx_stack_id s = FX_STACK_NONE;
    for (int i = 0; i < 200; i++) {
        fx_func_id f = func(p, "Same.name", NULL, i);
        ck_assert_uint_eq(f.i, (uint32_t)i);
        fx_frame_id fr = frame(p, f, i % 3, 0);
        ck_assert_uint_eq(fr.i, (uint32_t)i);
        s = stack(p, s, fr);
        ck_assert_uint_eq(s.i, (uint32_t)i);
    }
    fx_stack_id again = FX_STACK_NONE;
    for (int i = 0; i < 200; i++)
        again = stack(p, again, (fx_frame_id){(uint32_t)i});
    ck_assert_uint_eq(again.i, s.i);
    ck_assert_uint_eq(p->stacks.count, 200);
    ck_assert_uint_eq(p->strings.count, 2);
    fx_rowidx_test_hash_mask(UINT32_MAX);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_label_stack_is_a_root_in_its_category)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id a, b, c;
    ck_assert_int_eq(fx_profile_label_stack(p, "[AGCT: GC active]", FX_CAT_GC, &a), FX_OK);
    ck_assert_int_eq(fx_profile_label_stack(p, "[AGCT: GC active]", FX_CAT_GC, &b), FX_OK);
    ck_assert_int_eq(fx_profile_label_stack(p, "[truncated]", FX_CAT_OTHER, &c), FX_OK);
    ck_assert_uint_eq(a.i, b.i);
    ck_assert_uint_ne(a.i, c.i);
    ck_assert_uint_eq(p->stacks.prefix[a.i], FX_NONE_ID);
    uint32_t fr = p->stacks.frame[a.i];
    ck_assert_uint_eq(p->frames.category[fr], FX_CAT_GC);
    ck_assert_uint_eq(p->frames.subcategory[fr], 0);
    uint32_t fu = p->frames.func[fr];
    ck_assert(!p->funcs.is_java[fu]);
    ck_assert_uint_eq(p->funcs.resource_row[fu], FX_NONE_ID);
    ck_assert_str_eq(fx_profile_string_at(p, (fx_str_id){p->funcs.name[fu]}, NULL),
                     "[AGCT: GC active]");
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_samples_clamped_to_non_decreasing)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "main");
    int64_t times[] = {100, 200, 150, 300, 50, 400};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(fx_profile_sample(p, t, times[i], FX_STACK_NONE, 10, 1), FX_OK);
    int64_t want[] = {100, 200, 200, 300, 300, 400};
    const struct fx_samples *s = &p->threads[t.i]->samples;
    ck_assert_uint_eq(s->count, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(s->time_ns[i], want[i]);
    ck_assert_uint_eq(fx_profile_sample_count(p), 6);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_cpu_delta_saturates_and_keeps_unknown)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "main");
    int64_t in[] = {0, 5, -1, (int64_t)UINT32_MAX, INT64_MAX, (int64_t)UINT32_MAX - 2};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(fx_profile_sample(p, t, i, FX_STACK_NONE, in[i], 1), FX_OK);
    const uint32_t *c = p->threads[t.i]->samples.cpu_ns;
    ck_assert_uint_eq(c[0], 0);
    ck_assert_uint_eq(c[1], 5);
    ck_assert_uint_eq(c[2], FX_CPU_UNKNOWN);
    ck_assert_uint_eq(c[3], FX_CPU_UNKNOWN - 1);
    ck_assert_uint_eq(c[4], FX_CPU_UNKNOWN - 1);
    ck_assert_uint_eq(c[5], UINT32_MAX - 2);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_weight_column_only_when_needed)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id a = thread(p, "a"), b = thread(p, "b");
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(fx_profile_sample(p, a, i, FX_STACK_NONE, 0, 1), FX_OK);
        ck_assert_int_eq(fx_profile_sample(p, b, i, FX_STACK_NONE, 0, 1), FX_OK);
    }
    ck_assert_ptr_null(p->threads[a.i]->samples.weight);
    ck_assert_ptr_null(p->threads[b.i]->samples.weight);
    size_t before = fx_profile_memory(p);
    ck_assert_int_eq(fx_profile_sample(p, b, 100, FX_STACK_NONE, 0, 3), FX_OK);
    ck_assert_int_eq(fx_profile_sample(p, b, 101, FX_STACK_NONE, 0, 1), FX_OK);
    ck_assert_ptr_null(p->threads[a.i]->samples.weight);
    const uint32_t *w = p->threads[b.i]->samples.weight;
    ck_assert_ptr_nonnull(w);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(w[i], 1);
    ck_assert_uint_eq(w[100], 3);
    ck_assert_uint_eq(w[101], 1);
    ck_assert_uint_gt(fx_profile_memory(p), before);
    fx_profile_free(p);
}
END_TEST

/* The libraries' share of fx_profile_memory is kept as rows are added (the drain reads it at
 * every pass, issue 31): it must be what a count of every row's strings gives, in the model and
 * in its snapshot (whose rows are copied). */
static size_t libs_recount(const struct fx_libs *l)
{
    size_t n = (size_t)l->cap * sizeof(*l->rows);
    for (uint32_t i = 0; i < l->count; i++) {
        const struct fx_lib *b = &l->rows[i];
        n += strlen(b->name) + strlen(b->path) + strlen(b->breakpad_id) + 3 +
             (b->code_id ? strlen(b->code_id) + 1 : 0);
    }
    return n;
}

START_TEST(test_profile_memory_counts_library_strings)
{
    struct fx_profile *p = fx_profile_new();
    char name[32], path[64];
    for (int i = 0; i < 40; i++) { /* past the first capacity (16) */
        snprintf(name, sizeof(name), "lib%d.so", i);
        snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/lib%d.so", i);
        struct fx_lib_desc d = {.name = name,
                                .path = i % 3 ? path : NULL,
                                .build_id =
                                        i % 2 ? "0123456789abcdef0123456789abcdef01234567" : NULL};
        size_t before = fx_profile_memory(p);
        ck_assert_int_eq(fx_profile_lib(p, &d), FX_OK);
        ck_assert_int_eq(fx_profile_lib(p, &d), FX_OK); /* the same name: no new row */
        ck_assert_uint_eq(fx_profile_libs_memory(&p->libs), libs_recount(&p->libs));
        ck_assert_uint_gt(fx_profile_memory(p), before);
    }
    struct fx_profile *s = fx_profile_snapshot(p);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->libs.count, 40);
    ck_assert_uint_eq(fx_profile_libs_memory(&s->libs), libs_recount(&s->libs));
    fx_profile_free(s);
    fx_profile_free(p);
}
END_TEST

/* Counts every row of every table: what "unchanged" means after a failed call. */
struct shape {
    uint32_t strings, funcs, frames, stacks, resources, sources, threads, schemas, counters;
    uint32_t samples, markers, values, counter_samples, extra_groups, extra_entries;
    bool weight;
};

static struct shape shape_of(const struct fx_profile *p)
{
    struct shape s;
    memset(&s, 0, sizeof(s)); /* padding too: shapes are compared with memcmp */
    s.strings = p->strings.count;
    s.funcs = p->funcs.count;
    s.frames = p->frames.count;
    s.stacks = p->stacks.count;
    s.resources = p->resources.count;
    s.sources = p->sources.count;
    s.threads = p->nthreads;
    s.schemas = p->nschemas;
    s.counters = p->ncounters;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        s.samples += p->threads[t]->samples.count;
        s.markers += p->threads[t]->markers.count;
        s.values += p->threads[t]->markers.nvalues;
        s.weight |= p->threads[t]->samples.weight != NULL;
    }
    for (uint32_t c = 0; c < p->ncounters; c++)
        s.counter_samples += p->counters[c].count;
    s.extra_groups = p->nextra;
    for (uint32_t g = 0; g < p->nextra; g++)
        s.extra_entries += p->extra[g].count;
    return s;
}

static const struct fx_marker_field one_field[] = {{"text", "Text", FX_FMT_STRING}};
static const struct fx_marker_schema user_schema = {"JvmUserMarker",
                                                    NULL,
                                                    "{marker.name}: {marker.data.text}",
                                                    NULL,
                                                    NULL,
                                                    FX_DISPLAY_CHART | FX_DISPLAY_TABLE,
                                                    one_field,
                                                    1};

/* One call of each mutating kind, keyed by step; each adds something new. */
static int mutate(struct fx_profile *p, int kind, int step)
{
    char name[48];
    snprintf(name, sizeof(name), "k%d.s%d", kind, step);
    fx_str_id s;
    fx_func_id f;
    fx_frame_id fr;
    fx_stack_id st;
    fx_thread_id idx;
    fx_counter_id ctr;
    switch (kind) {
    case 0:
        return fx_profile_cstring(p, name, &s);
    case 1: {
        struct fx_func_key k = {{0}, {1}, {2}, step, true};
        return fx_profile_func(p, &k, &f);
    }
    case 2: {
        struct fx_frame_key k = {{0}, step, FX_CAT_JAVA, 0, 0};
        return fx_profile_frame(p, &k, &fr);
    }
    case 3:
        return fx_profile_stack(p, (fx_stack_id){p->stacks.count - 1}, (fx_frame_id){0}, &st);
    case 4:
        return fx_profile_sample(p, (fx_thread_id){0}, step, (fx_stack_id){0}, 1000,
                                 step % 5 ? 1 : 2);
    case 5: {
        union fx_marker_value v = {.s = {0}};
        return fx_profile_marker(p, (fx_thread_id){0}, (fx_str_id){0}, FX_PHASE_INTERVAL, FX_CAT_GC,
                                 step, step + 1, (fx_schema_id){0}, &v);
    }
    case 6:
        return fx_profile_thread_add(p, name, step, step, &idx);
    case 7:
        return fx_profile_counter_sample(p, (fx_counter_id){0}, step, step * 10);
    case 8:
        return fx_profile_extra_int(p, step % 2 ? "g1" : name, name, step);
    case 9: {
        struct fx_counter_desc d = {name, "Memory", "d", "bytes", "orange"};
        return fx_profile_counter(p, &d, &ctr);
    }
    case 10:
        return fx_profile_label_stack(p, name, FX_CAT_OTHER, &st);
    }
    return FX_EINVAL;
}

static bool same_shape(struct shape a, struct shape b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Injects a failure into each allocation of each kind of call, over enough calls to cross
 * several growth steps: a failed call returns FX_ENOMEM and leaves every table as it was, and
 * the same call then succeeds. */
START_TEST(test_profile_allocation_failure_leaves_model_unchanged)
{
    struct fx_profile *p = fx_profile_new();
    fx_stack_id st;
    fx_thread_id t;
    fx_schema_id sch;
    fx_counter_id ctr;
    ck_assert_int_eq(fx_profile_label_stack(p, "root", FX_CAT_JAVA, &st), FX_OK);
    ck_assert_int_eq(fx_profile_thread_add(p, "main", 1, 0, &t), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &user_schema, &sch), FX_OK);
    struct fx_counter_desc d = {"heap", "Memory", "d", "bytes", "orange"};
    ck_assert_int_eq(fx_profile_counter(p, &d, &ctr), FX_OK);
    int failures = 0;
    for (int kind = 0; kind <= 10; kind++) {
        for (int step = 0; step < 300; step++) {
            int rc;
            for (long n = 1;; n++) {
                struct shape before = shape_of(p);
                fx_alloc_fail_after(n);
                rc = mutate(p, kind, step);
                fx_alloc_fail_after(0);
                if (rc != FX_ENOMEM)
                    break;
                failures++;
                ck_assert_msg(kind == 10 || same_shape(before, shape_of(p)),
                              "kind %d step %d n %ld changed the model", kind, step, n);
                ck_assert_int_lt(n, 20);
            }
            ck_assert_int_eq(rc, FX_OK);
        }
    }
    ck_assert_int_gt(failures, 60);
    struct shape s = shape_of(p);
    ck_assert_uint_eq(s.samples, 300);
    ck_assert(s.weight);
    ck_assert_uint_eq(s.markers, 300);
    ck_assert_uint_eq(s.threads, 301);
    ck_assert_uint_eq(s.counter_samples, 300);
    ck_assert_uint_eq(s.counters, 301);
    fx_profile_free(p);
}
END_TEST

/* 10 distinct stacks sampled 10^6 times: memory is per sample (16 bytes plus doubling slack),
 * and re-interning the same stacks adds nothing. */
START_TEST(test_profile_memory_grows_with_unique_stacks_not_samples)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "main");
    fx_stack_id stacks[10];
    fx_stack_id s = FX_STACK_NONE;
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "S.m%d", i);
        s = stack(p, s, frame(p, func(p, name, "app.jar", i), i, 0));
        stacks[i] = s;
    }
    size_t base = fx_profile_memory(p);
    for (int i = 0; i < 100000; i++)
        stack(p, (fx_stack_id){stacks[i % 9].i}, (fx_frame_id){(uint32_t)(i % 9) + 1});
    ck_assert_uint_eq(fx_profile_memory(p), base);
    enum {
        N = 1000000
    };
    int rc = FX_OK;
    for (int i = 0; i < N && rc == FX_OK; i++)
        rc = fx_profile_sample(p, t, i * 1000LL, stacks[i % 10], 900, 1);
    ck_assert_int_eq(rc, FX_OK);
    double per_sample = (double)(fx_profile_memory(p) - base) / N;
    ck_assert_msg(per_sample < 20.0, "%.2f bytes per sample", per_sample);
    ck_assert_msg(per_sample >= 16.0, "%.2f bytes per sample", per_sample);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_markers_keep_values_and_phase_times)
{
    struct fx_profile *p = fx_profile_new();
    fx_thread_id t = thread(p, "main");
    fx_schema_id sch, again;
    ck_assert_int_eq(fx_profile_schema(p, &user_schema, &sch), FX_OK);
    ck_assert_int_eq(fx_profile_schema(p, &user_schema, &again), FX_OK);
    ck_assert_uint_eq(sch.i, again.i);
    ck_assert_uint_eq(p->nschemas, 1);
    fx_str_id name = str(p, "mark"), text = str(p, "hello");
    union fx_marker_value v = {.s = text};
    ck_assert_int_eq(fx_profile_marker(p, t, name, FX_PHASE_END, FX_CAT_OTHER, 5, 9, sch, &v),
                     FX_OK);
    ck_assert_int_eq(
            fx_profile_marker(p, t, name, FX_PHASE_INSTANT, FX_CAT_VM, 7, 8, FX_SCHEMA_NONE, NULL),
            FX_OK);
    union fx_marker_value bad = {.s = {4242}};
    ck_assert_int_eq(fx_profile_marker(p, t, name, 0, 0, 1, 1, sch, &bad), FX_EINVAL);
    ck_assert_int_eq(fx_profile_marker(p, t, name, 0, 0, 1, 1, sch, NULL), FX_EINVAL);
    static const struct fx_marker_field bad_keys[] = {{"cause", "Cause", FX_FMT_STRING},
                                                      {"type", "Type", FX_FMT_STRING}};
    struct fx_marker_schema bad_schema = user_schema;
    for (int k = 0; k < 2; k++) {
        bad_schema.fields = &bad_keys[k];
        ck_assert_int_eq(fx_profile_schema(p, &bad_schema, &again), FX_EINVAL);
    }
    ck_assert_uint_eq(p->nschemas, 1);
    const struct fx_markers *m = &p->threads[t.i]->markers;
    ck_assert_uint_eq(m->count, 2);
    ck_assert_int_eq(m->end_ns[0], 9);
    ck_assert_int_eq(m->start_ns[1], 7);
    ck_assert_int_eq(m->end_ns[1], 0); /* an instant has no end */
    ck_assert_uint_eq(m->values[m->values_at[0]].s.i, text.i);
    ck_assert_uint_eq(m->schema[1], FX_NONE_ID);
    fx_profile_free(p);
}
END_TEST

START_TEST(test_profile_meta_and_extra_setters_replace_values)
{
    struct fx_profile *p = fx_profile_new();
    ck_assert_int_eq(fx_profile_set_meta(p, "product", "a"), FX_OK);
    ck_assert_int_eq(fx_profile_set_meta(p, "product", "b"), FX_OK);
    ck_assert_str_eq(p->meta[FX_META_PRODUCT], "b");
    ck_assert_int_eq(fx_profile_set_meta_int(p, "logicalCPUs", 8), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "Samples", "ok", 1), FX_OK);
    ck_assert_int_eq(fx_profile_extra_int(p, "Samples", "ok", 2), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "Samples", "gc", "G1"), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "JVM", "version", "17"), FX_OK);
    ck_assert_int_eq(fx_profile_extra_str(p, "Samples", "ok", "many"), FX_OK);
    ck_assert_uint_eq(p->nextra, 2);
    ck_assert_uint_eq(p->extra[0].count, 2);
    ck_assert(!p->extra[0].entries[0].is_int);
    ck_assert_str_eq(p->extra[0].entries[0].s, "many");
    /* A new recording (issue 23): no figure of the previous one is carried over. */
    fx_profile_extra_clear(p);
    ck_assert_uint_eq(p->nextra, 0);
    ck_assert_int_eq(fx_profile_extra_int(p, "Samples", "ok", 3), FX_OK);
    ck_assert_uint_eq(p->nextra, 1);
    ck_assert_uint_eq(p->extra[0].count, 1);
    ck_assert_int_eq(p->extra[0].entries[0].i, 3);
    fx_profile_set_main_thread(p, (fx_thread_id){5}); /* no such thread: ignored */
    ck_assert_uint_eq(p->main_thread, 0);
    fx_thread_id a = thread(p, "a"), b = thread(p, "b");
    fx_profile_set_main_thread(p, b);
    ck_assert_uint_eq(p->main_thread, b.i);
    ck_assert_int_eq(fx_profile_thread_set_name(p, a, "renamed"), FX_OK);
    ck_assert_str_eq(p->threads[a.i]->name, "renamed");
    fx_profile_thread_unregister(p, a, 77);
    ck_assert(p->threads[a.i]->unregistered);
    ck_assert_uint_eq(fx_profile_thread_count(p), 2);
    fx_profile_free(p);
    fx_profile_free(NULL);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("interning");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_profile_same_func_key_same_id);
    tcase_add_test(tc, test_profile_same_frame_key_same_id);
    tcase_add_test(tc, test_profile_invalid_ids_are_rejected);
    tcase_add_test(tc, test_profile_stack_at_reads_the_row);
    tcase_add_test(tc, test_profile_stack_prefixes_precede_children);
    tcase_add_test(tc, test_profile_hash_collisions_never_merge_rows);
    tcase_add_test(tc, test_profile_label_stack_is_a_root_in_its_category);
    suite_add_tcase(s, tc);
    tc = tcase_create("samples");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_profile_samples_clamped_to_non_decreasing);
    tcase_add_test(tc, test_profile_cpu_delta_saturates_and_keeps_unknown);
    tcase_add_test(tc, test_profile_weight_column_only_when_needed);
    tcase_add_test(tc, test_profile_memory_grows_with_unique_stacks_not_samples);
    tcase_add_test(tc, test_profile_memory_counts_library_strings);
    suite_add_tcase(s, tc);
    tc = tcase_create("model");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_profile_allocation_failure_leaves_model_unchanged);
    tcase_add_test(tc, test_profile_markers_keep_values_and_phase_times);
    tcase_add_test(tc, test_profile_meta_and_extra_setters_replace_values);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(profile_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
