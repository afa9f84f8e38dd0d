/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of core/symbols/elfsym.c on real mappings: the test loads libfxtest_symlib.so (C and
 * C++ functions, tests/unit/symlib/) and its stripped copy with dlopen, reads /proc/self/maps and
 * names addresses from dlsym; then files deleted or replaced since mapped, a non-ELF file,
 * anonymous memory, the vDSO, this PIE executable, 100k lookups, allocation failure, and the
 * tables kept across starts (include/fx_elfsym_cache.h). */
#include <check.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_elfsym.h"
#include "fx_textmap.h"
#include "unit_tmpfile.h"

static void *must_dlopen(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
    return h;
}

static uintptr_t must_dlsym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    ck_assert_msg(p != NULL, "dlsym %s: %s", name, dlerror());
    return (uintptr_t)p;
}

static struct fx_textmap *self_maps(void)
{
    struct fx_textmap *t = NULL;
    struct fx_errbuf eb = {{0}};
    ck_assert_msg(fx_textmap_read("/proc/self/maps", &t, &eb) == FX_OK, "%s", eb.msg);
    return t;
}

/* Resolves addr in this process; the frame's strings live as long as s. */
static struct fx_elfsym_frame resolve(struct fx_elfsym *s, const struct fx_textmap *t,
                                      uintptr_t addr)
{
    const struct fx_textmap_entry *m = fx_textmap_lookup_sigsafe(t, addr);
    ck_assert_msg(m != NULL, "no executable mapping holds %#" PRIxPTR, addr);
    struct fx_elfsym_frame f;
    ck_assert_int_eq(fx_elfsym_resolve(s, m, addr, &f), FX_OK);
    return f;
}

static void expect_name(struct fx_elfsym *s, const struct fx_textmap *t, uintptr_t addr,
                        const char *name, uint64_t off, enum fx_elfsym_source src)
{
    struct fx_elfsym_frame f = resolve(s, t, addr);
    ck_assert_msg(f.name && strcmp(f.name, name) == 0, "%#" PRIxPTR ": got %s (%s), want %s", addr,
                  f.name ? f.name : "NULL", f.why, name);
    ck_assert_uint_eq(f.sym_off, off);
    ck_assert_int_eq(f.source, src);
    ck_assert_str_eq(f.why, "");
}

START_TEST(test_elfsym_names_c_and_cxx_functions_of_a_shared_library)
{
    void *h = must_dlopen(FXTEST_SYMLIB);
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s = fx_elfsym_new();
    uintptr_t c = must_dlsym(h, "fxtest_c_work");
    expect_name(s, t, c, "fxtest_c_work", 0, FX_ELFSYM_SYMTAB);
    expect_name(s, t, c + 5, "fxtest_c_work", 5, FX_ELFSYM_SYMTAB);
    expect_name(s, t, must_dlsym(h, "_ZN6fxtest6Burner4spinEi") + 1, "fxtest::Burner::spin(int)", 1,
                FX_ELFSYM_SYMTAB);
    expect_name(s, t, must_dlsym(h, "_ZN6fxtest5twiceIlEET_S1_"), "long fxtest::twice<long>(long)",
                0, FX_ELFSYM_SYMTAB);
    uintptr_t local = ((uintptr_t(*)(void))must_dlsym(h, "fxtest_local_addr"))();
    expect_name(s, t, local + 2, "fxtest_local_helper", 2, FX_ELFSYM_SYMTAB);
    struct fx_elfsym_frame f = resolve(s, t, c);
    ck_assert_str_eq(f.lib, "libfxtest_symlib.so");
    ck_assert_str_eq(f.path, FXTEST_SYMLIB);
    ck_assert_uint_eq(strlen(f.build_id), 40);
    Dl_info info;
    ck_assert(dladdr((void *)c, &info));
    ck_assert_uint_eq(f.lib_off, c - (uintptr_t)info.dli_fbase); /* vaddr: base-relative */
    fx_elfsym_free(s);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_elfsym_stripped_library_uses_dynsym_and_names_the_rest_by_offset)
{
    void *full = must_dlopen(FXTEST_SYMLIB), *h = must_dlopen(FXTEST_SYMLIB_STRIPPED);
    ck_assert_ptr_ne(full, h);
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s = fx_elfsym_new();
    expect_name(s, t, must_dlsym(h, "fxtest_c_work") + 4, "fxtest_c_work", 4, FX_ELFSYM_DYNSYM);
    expect_name(s, t, must_dlsym(h, "_ZN6fxtest6Burner4spinEi"), "fxtest::Burner::spin(int)", 0,
                FX_ELFSYM_DYNSYM);
    uintptr_t local = ((uintptr_t(*)(void))must_dlsym(h, "fxtest_local_addr"))();
    struct fx_elfsym_frame f = resolve(s, t, local + 2);
    ck_assert_ptr_null(f.name); /* never guessed from the exported neighbour */
    ck_assert_int_eq(f.source, FX_ELFSYM_NONE);
    ck_assert_ptr_nonnull(strstr(f.why, "stripped"));
    uintptr_t full_local = ((uintptr_t(*)(void))must_dlsym(full, "fxtest_local_addr"))();
    struct fx_elfsym_frame g = resolve(s, t, full_local + 2);
    ck_assert_uint_eq(f.lib_off, g.lib_off);  /* the same code at the same virtual address */
    ck_assert_str_eq(f.build_id, g.build_id); /* strip keeps the build-id note */
    char name[128], want[128];
    fx_elfsym_frame_name(&f, name, sizeof(name));
    snprintf(want, sizeof(want), "libfxtest_symlib_stripped.so+0x%" PRIx64, g.lib_off);
    ck_assert_str_eq(name, want);
    fx_elfsym_frame_name(&g, name, sizeof(name));
    ck_assert_str_eq(name, "fxtest_local_helper");
    fx_elfsym_free(s);
    fx_textmap_free(t);
    dlclose(h);
    dlclose(full);
}
END_TEST

/* Loads a private copy of the library at dir/name and returns its handle. */
static void *load_copy(const char *dir, const char *name, char *path)
{
    snprintf(path, 256, "%s/%s", dir, name);
    copy_file(FXTEST_SYMLIB, path);
    return must_dlopen(path);
}

/* The stripped copy's separate debug file, installed as a -dbgsym package would (by build-id
 * under a debug folder), gives back the local function .dynsym lacks. */
START_TEST(test_elfsym_stripped_library_with_a_debug_file_names_everything)
{
    void *h = must_dlopen(FXTEST_SYMLIB_STRIPPED);
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s = fx_elfsym_new();
    uintptr_t c = must_dlsym(h, "fxtest_c_work");
    char dir[] = "/tmp/fxdebugXXXXXX", sub[300], file[400], cmd[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *id = resolve(s, t, c).build_id; /* read with no debug file there yet */
    ck_assert_uint_eq(strlen(id), 40);
    snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, id);
    snprintf(file, sizeof(file), "%s/%s.debug", sub, id + 2);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s'", sub, FXTEST_SYMLIB_DEBUG, file);
    ck_assert_int_eq(system(cmd), 0);
    struct fx_elfsym *d = fx_elfsym_new();
    ck_assert_int_eq(fx_elfsym_set_debug_dir(d, dir), FX_OK);
    uintptr_t local = ((uintptr_t(*)(void))must_dlsym(h, "fxtest_local_addr"))();
    expect_name(d, t, local + 1, "fxtest_local_helper", 1, FX_ELFSYM_DEBUG_FILE);
    expect_name(d, t, c, "fxtest_c_work", 0, FX_ELFSYM_DEBUG_FILE);
    ck_assert_ptr_null(resolve(s, t, local + 1).name); /* the other cache read it before */
    ck_assert_int_eq(fx_elfsym_set_debug_dir(s, NULL), FX_OK);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    fx_elfsym_free(d);
    fx_elfsym_free(s);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

/* Issue 31: a debug file's table is kept like a .symtab's, under the debug file's identity:
 * the next symbolizer maps it (same names); the debug file replaced (a -dbgsym upgrade) it is
 * read again; removed, the cached table is not used and .dynsym names what it can. */
START_TEST(test_elfsym_debug_file_table_kept_and_missed_when_the_debug_file_changes)
{
    void *h = must_dlopen(FXTEST_SYMLIB_STRIPPED);
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s0 = fx_elfsym_new();
    uintptr_t c = must_dlsym(h, "fxtest_c_work");
    uintptr_t local = ((uintptr_t(*)(void))must_dlsym(h, "fxtest_local_addr"))();
    char dir[] = "/tmp/fxdebugXXXXXX", cache[300], sub[300], file[400], cmd[1300];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *id = resolve(s0, t, c).build_id;
    snprintf(cache, sizeof(cache), "%s/cache", dir);
    snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, id);
    snprintf(file, sizeof(file), "%s/%s.debug", sub, id + 2);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s'", sub, FXTEST_SYMLIB_DEBUG, file);
    ck_assert_int_eq(system(cmd), 0);
    for (int round = 0; round < 4; round++) { /* written, mapped, replaced: written, removed */
        if (round == 2)
            snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", FXTEST_SYMLIB_DEBUG,
                     file, file, file);
        if (round == 3)
            snprintf(cmd, sizeof(cmd), "rm '%s'", file);
        ck_assert_int_eq(round >= 2 ? system(cmd) : 0, 0);
        struct fx_elfsym *s = fx_elfsym_new();
        ck_assert_int_eq(fx_elfsym_set_debug_dir(s, dir), FX_OK);
        ck_assert_int_eq(fx_elfsym_set_cache_dir(s, cache), FX_OK);
        if (round < 3) {
            expect_name(s, t, local + 1, "fxtest_local_helper", 1, FX_ELFSYM_DEBUG_FILE);
            expect_name(s, t, c, "fxtest_c_work", 0, FX_ELFSYM_DEBUG_FILE);
        } else {
            ck_assert_ptr_null(resolve(s, t, local + 1).name);
            expect_name(s, t, c, "fxtest_c_work", 0, FX_ELFSYM_DYNSYM);
        }
        const struct fx_elfsym_cache_stats *cs = fx_elfsym_cache_stats(s);
        ck_assert_uint_eq(cs->loaded, round == 1 ? 1 : 0);
        ck_assert_uint_eq(cs->stored, round == 0 || round == 2 ? 1 : 0);
        ck_assert_msg(cs->errors == 0, "%s", cs->error);
        fx_elfsym_free(s);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    fx_elfsym_free(s0);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

static void replace_file(const char *dir, const char *path)
{
    char other[256];
    snprintf(other, sizeof(other), "%s/new.so", dir);
    copy_file(FXTEST_SYMLIB_STRIPPED, other);
    ck_assert_int_eq(rename(other, path), 0); /* a new file under the mapped path */
}

/* Deleted or replaced before the maps are read: the kernel marks the old file "(deleted)".
 * Replaced after (a package upgrade between the sample and the dump): the inode differs. */
START_TEST(test_elfsym_deleted_and_replaced_files_say_so)
{
    char dir[] = "/tmp/fxelfsymXXXXXX", del[256], rep[256], late[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    void *hd = load_copy(dir, "libdel.so", del);
    void *hr = load_copy(dir, "librep.so", rep);
    void *hl = load_copy(dir, "liblate.so", late);
    ck_assert_int_eq(unlink(del), 0);
    replace_file(dir, rep);
    struct fx_textmap *t = self_maps();
    replace_file(dir, late);
    struct fx_elfsym *s = fx_elfsym_new();
    struct fx_elfsym_frame f = resolve(s, t, must_dlsym(hd, "fxtest_c_work"));
    ck_assert_ptr_null(f.name);
    ck_assert_str_eq(f.why, "file deleted since mapped");
    ck_assert_str_eq(f.lib, "libdel.so");
    f = resolve(s, t, must_dlsym(hr, "fxtest_c_work"));
    ck_assert_ptr_null(f.name);
    ck_assert_str_eq(f.why, "file deleted since mapped");
    f = resolve(s, t, must_dlsym(hl, "fxtest_c_work"));
    ck_assert_ptr_null(f.name);
    ck_assert_msg(strstr(f.why, "file replaced since mapped"), "why: %s", f.why);
    char name[300];
    fx_elfsym_frame_name(&f, name, sizeof(name));
    ck_assert_ptr_nonnull(strstr(name, "liblate.so+0x"));
    fx_elfsym_free(s);
    fx_textmap_free(t);
    dlclose(hd);
    dlclose(hr);
    dlclose(hl);
    unlink(rep);
    unlink(late);
    rmdir(dir);
}
END_TEST

START_TEST(test_elfsym_non_elf_file_and_anonymous_memory_named_by_offset)
{
    char path[64];
    unit_tmpfile_str(path, "#!/bin/sh\necho this is not an ELF file, just text\n");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    struct fx_textmap_entry text = {.start = 0x10000,
                                    .end = 0x11000,
                                    .offset = 0x2000,
                                    .inode = st.st_ino,
                                    .dev_major = major(st.st_dev),
                                    .dev_minor = minor(st.st_dev),
                                    .kind = FX_TEXTMAP_FILE,
                                    .path = path};
    struct fx_textmap_entry anon = {.start = 0x20000, .end = 0x30000, .path = ""};
    anon.kind = FX_TEXTMAP_ANON;
    struct fx_elfsym *s = fx_elfsym_new();
    struct fx_elfsym_frame f;
    ck_assert_int_eq(fx_elfsym_resolve(s, &text, 0x10010, &f), FX_OK);
    ck_assert_ptr_null(f.name);
    ck_assert_str_eq(f.why, "not an ELF file");
    ck_assert_uint_eq(f.lib_off, 0x2010); /* the file offset */
    ck_assert_int_eq(fx_elfsym_resolve(s, &anon, 0x20040, &f), FX_OK);
    char name[64];
    fx_elfsym_frame_name(&f, name, sizeof(name));
    ck_assert_str_eq(name, "[anon]+0x40");
    ck_assert_ptr_nonnull(strstr(f.why, "anonymous"));
    struct fx_textmap_entry named = anon;
    named.path = "[anon:jit]";
    ck_assert_int_eq(fx_elfsym_resolve(s, &named, 0x20008, &f), FX_OK);
    fx_elfsym_frame_name(&f, name, sizeof(name));
    ck_assert_str_eq(name, "[anon:jit]+0x8");
    ck_assert_int_eq(fx_elfsym_resolve(s, &anon, 0x30000, &f), FX_EINVAL); /* outside */
    ck_assert_uint_eq(fx_elfsym_frame_name(&f, name, 4),
                      strlen("[anon:jit]+0x8")); /* f: untouched by EINVAL */
    ck_assert_str_eq(name, "[an");               /* truncated, terminated */
    fx_elfsym_free(s);
    unlink(path);
}
END_TEST

START_TEST(test_elfsym_names_vdso_functions_from_memory)
{
    struct fx_textmap *t = self_maps();
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    const struct fx_textmap_entry *m = fx_textmap_lookup_sigsafe(t, vdso);
    if (!vdso || !m) {
        fprintf(stderr, "SKIP vdso test: no vDSO in this process\n");
        fx_textmap_free(t);
        return;
    }
    ck_assert_str_eq(m->path, "[vdso]");
    struct fx_elfsym *s = fx_elfsym_new();
    int found = 0;
    for (uintptr_t a = m->start; a < m->end; a += 4) {
        struct fx_elfsym_frame f;
        ck_assert_int_eq(fx_elfsym_resolve(s, m, a, &f), FX_OK);
        found += f.name && strstr(f.name, "clock_gettime") && f.sym_off == 0;
    }
    ck_assert_int_ge(found, 1);
    fx_elfsym_free(s);
    fx_textmap_free(t);
}
END_TEST

__attribute__((noinline)) static int pie_probe(int x)
{
    return x * 3 + 1;
}

START_TEST(test_elfsym_names_a_static_function_of_this_pie_executable)
{
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s = fx_elfsym_new();
    expect_name(s, t, (uintptr_t)&pie_probe, "pie_probe", 0, FX_ELFSYM_SYMTAB);
    ck_assert_int_eq(pie_probe(1), 4);
    fx_elfsym_free(s);
    fx_textmap_free(t);
}
END_TEST

/* core/symbols/elffind.c: a symbol's st_value by name, the address less the load base for a PIE
 * (how the agent finds a HotSpot local symbol); a name that is not there and a missing file say
 * so. */
START_TEST(test_elfsym_symbol_vaddr_by_name_in_this_executable)
{
    Dl_info di;
    ck_assert_int_ne(dladdr((void *)&pie_probe, &di), 0);
    uint64_t v = 0;
    ck_assert_int_eq(fx_elf_symbol_vaddr("/proc/self/exe", "pie_probe", &v), FX_OK);
    ck_assert_uint_eq(v, (uint64_t)((uintptr_t)&pie_probe - (uintptr_t)di.dli_fbase));
    v = 7;
    ck_assert_int_eq(fx_elf_symbol_vaddr("/proc/self/exe", "no_such_symbol_here", &v),
                     FX_ENOTFOUND);
    ck_assert_uint_eq(v, 7);
    /* names compared whole, in place (the raw 64-bit scan): a prefix or a longer name is not it */
    ck_assert_int_eq(fx_elf_symbol_vaddr("/proc/self/exe", "pie_prob", &v), FX_ENOTFOUND);
    ck_assert_int_eq(fx_elf_symbol_vaddr("/proc/self/exe", "pie_probe_", &v), FX_ENOTFOUND);
    ck_assert_uint_eq(v, 7);
    ck_assert_int_eq(fx_elf_symbol_vaddr("/nonexistent/fxagent", "main", &v), FX_EIO);
}
END_TEST

/* A dump-sized batch: 100k addresses over two libraries and this executable, each named
 * right; the library cache makes that one read per file (no timing is asserted). */
START_TEST(test_elfsym_hundred_thousand_lookups_all_right)
{
    void *h = must_dlopen(FXTEST_SYMLIB);
    struct fx_textmap *t = self_maps();
    struct fx_elfsym *s = fx_elfsym_new();
    uintptr_t c = must_dlsym(h, "fxtest_c_work");
    uintptr_t cxx = must_dlsym(h, "_ZN6fxtest6Burner4spinEi");
    uintptr_t mc = (uintptr_t)&qsort; /* libc: .dynsym only on Debian */
    struct fx_elfsym_frame ref = resolve(s, t, mc);
    ck_assert_ptr_nonnull(ref.name);
    for (int i = 0; i < 100000; i++) {
        struct fx_elfsym_frame f;
        switch (i % 3) {
        case 0:
            f = resolve(s, t, c + (uintptr_t)(i % 8));
            ck_assert_str_eq(f.name, "fxtest_c_work");
            break;
        case 1:
            f = resolve(s, t, cxx + (uintptr_t)(i % 4));
            ck_assert_str_eq(f.name, "fxtest::Burner::spin(int)");
            break;
        default:
            f = resolve(s, t, mc);
            ck_assert_str_eq(f.name, ref.name);
            ck_assert_ptr_eq(f.name, ref.name); /* the cached string, not a new one */
        }
    }
    fx_elfsym_free(s);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

START_TEST(test_elfsym_allocation_failure_then_retry_succeeds)
{
    void *h = must_dlopen(FXTEST_SYMLIB);
    struct fx_textmap *t = self_maps();
    uintptr_t cxx = must_dlsym(h, "_ZN6fxtest6Burner4spinEi");
    const struct fx_textmap_entry *m = fx_textmap_lookup_sigsafe(t, cxx);
    int failures = 0;
    for (long n = 1; n < 10000; n++) {
        struct fx_elfsym *s = fx_elfsym_new();
        ck_assert_ptr_nonnull(s);
        struct fx_elfsym_frame f;
        fx_alloc_fail_after(n);
        int rc = fx_elfsym_resolve(s, m, cxx, &f);
        fx_alloc_fail_after(0);
        if (rc == FX_OK && f.name && strcmp(f.name, "fxtest::Burner::spin(int)") == 0) {
            fx_elfsym_free(s);
            break;
        }
        failures++;
        if (rc == FX_ENOMEM) {
            ck_assert_int_eq(fx_elfsym_resolve(s, m, cxx, &f), FX_OK); /* retried */
            ck_assert_ptr_nonnull(f.name);
        } else { /* the demangler's copy failed: the mangled name, still right */
            ck_assert_int_eq(rc, FX_OK);
            ck_assert_str_eq(f.name, "_ZN6fxtest6Burner4spinEi");
        }
        fx_elfsym_free(s);
    }
    ck_assert_int_ge(failures, 5);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

/* Every address of the library's text named by a symbolizer that reads its .symtab. */
static size_t name_all(struct fx_elfsym *s, const struct fx_textmap_entry *m, char (*names)[128],
                       uint64_t *offs, size_t cap)
{
    size_t n = 0;
    for (uintptr_t a = m->start; a < m->end && n < cap; a += 4, n++) {
        struct fx_elfsym_frame f;
        ck_assert_int_eq(fx_elfsym_resolve(s, m, a, &f), FX_OK);
        fx_elfsym_frame_name(&f, names[n], sizeof(names[n]));
        offs[n] = f.name ? f.sym_off : f.lib_off;
        if (f.name)
            ck_assert_int_eq(f.source, FX_ELFSYM_SYMTAB);
    }
    return n;
}

static void expect_same(const char (*a)[128], const uint64_t *ao, const char (*b)[128],
                        const uint64_t *bo, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(a[i], b[i]);
        ck_assert_uint_eq(ao[i], bo[i]);
    }
}

/* Issue 31: the table kept in a cache folder by the first symbolizer is mapped by the next one
 * instead of read (its counters say which), and names every address of the text as the file
 * does; a damaged file is refused with its reason and the library read again, same names. */
START_TEST(test_elfsym_cache_across_starts_gives_the_same_names)
{
    enum {
        CAP = 1 << 16
    };
    void *h = must_dlopen(FXTEST_SYMLIB);
    struct fx_textmap *t = self_maps();
    const struct fx_textmap_entry *m =
            fx_textmap_lookup_sigsafe(t, must_dlsym(h, "_ZN6fxtest6Burner4spinEi"));
    char dir[] = "/tmp/fxtest-elfsym-cache.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char(*want)[128] = malloc(CAP * 128), (*got)[128] = malloc(CAP * 128);
    uint64_t *want_off = malloc(CAP * sizeof(uint64_t)), *got_off = malloc(CAP * sizeof(uint64_t));
    ck_assert(want && got && want_off && got_off);
    struct fx_elfsym *plain = fx_elfsym_new();
    size_t n = name_all(plain, m, want, want_off, CAP);
    ck_assert_uint_gt(n, 100);
    ck_assert_uint_eq(fx_elfsym_cache_stats(plain)->loaded + fx_elfsym_cache_stats(plain)->stored,
                      0);
    fx_elfsym_free(plain);
    for (int round = 0; round < 3; round++) {
        struct fx_elfsym *s = fx_elfsym_new();
        ck_assert_int_eq(fx_elfsym_set_cache_dir(s, dir), FX_OK);
        ck_assert_uint_eq(name_all(s, m, got, got_off, CAP), n);
        expect_same((const char(*)[128])want, want_off, (const char(*)[128])got, got_off, n);
        const struct fx_elfsym_cache_stats *cs = fx_elfsym_cache_stats(s);
        ck_assert_uint_eq(cs->loaded, round == 1 ? 1 : 0); /* 0: written, 1: mapped, 2: damaged */
        ck_assert_uint_eq(cs->stored, round == 1 ? 0 : 1);
        ck_assert_uint_eq(cs->errors, round == 2 ? 1 : 0);
        if (round == 2)
            ck_assert_msg(strstr(cs->error, "malformed rows") != NULL, "%s", cs->error);
        fx_elfsym_free(s);
        if (round == 1) { /* the first row's name_at (a 128-byte header, then addr, size) past the
                             names: refused */
            char cmd[512];
            snprintf(cmd, sizeof(cmd),
                     "f=$(ls '%s'/*.sym) && printf '\\377\\377\\377\\377' | "
                     "dd of=\"$f\" bs=1 seek=$((128 + 16)) conv=notrunc status=none",
                     dir);
            ck_assert_int_eq(system(cmd), 0);
        }
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(want), free(got), free(want_off), free(got_off);
    fx_textmap_free(t);
    dlclose(h);
}
END_TEST

static Suite *elfsym_suite(void)
{
    Suite *s = suite_create("elfsym");
    TCase *tc = tcase_create("names");
    tcase_set_timeout(tc, 120); /* generous: CI machines are shared and sanitized */
    tcase_add_test(tc, test_elfsym_names_c_and_cxx_functions_of_a_shared_library);
    tcase_add_test(tc, test_elfsym_stripped_library_uses_dynsym_and_names_the_rest_by_offset);
    tcase_add_test(tc, test_elfsym_stripped_library_with_a_debug_file_names_everything);
    tcase_add_test(tc, test_elfsym_debug_file_table_kept_and_missed_when_the_debug_file_changes);
    tcase_add_test(tc, test_elfsym_names_vdso_functions_from_memory);
    tcase_add_test(tc, test_elfsym_names_a_static_function_of_this_pie_executable);
    tcase_add_test(tc, test_elfsym_symbol_vaddr_by_name_in_this_executable);
    tcase_add_test(tc, test_elfsym_hundred_thousand_lookups_all_right);
    tcase_add_test(tc, test_elfsym_cache_across_starts_gives_the_same_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("unusable");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_elfsym_deleted_and_replaced_files_say_so);
    tcase_add_test(tc, test_elfsym_non_elf_file_and_anonymous_memory_named_by_offset);
    tcase_add_test(tc, test_elfsym_allocation_failure_then_retry_succeeds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(elfsym_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
