/* SPDX-License-Identifier: Apache-2.0 */
/* The native symbolizer (include/fx_elfsym.h): a cache of libraries, each read once with libelf
 * into sorted function symbols, PT_LOAD segments and a build-id, then binary searches. A library
 * that cannot be used keeps a one-line reason instead, so every later address in it is named
 * "lib+0xOFF" without touching the file again. */
#include "fx_elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_demangle.h"
#include "fx_elfsym_cache.h" /* struct fx_elfsym_row: a symbol, in memory as in the file */
#include "fx_sort.h"

#define OVERLAYFS_MAGIC 0x794c7630 /* linux/magic.h: maps shows the lower file's device */

struct seg {
    uint64_t off, filesz, vaddr;
};

struct lib {
    char *path;
    const char *base; /* into path, or a static name */
    uint64_t inode;
    uint32_t dev_major, dev_minor;
    enum fx_textmap_kind kind;
    bool usable; /* an ELF file whose segments were read */
    enum fx_elfsym_source source;
    char why[160];
    char build_id[41];
    const char *debug_dir; /* borrowed from the cache */
    struct seg *segs;
    size_t nsegs, cap_segs;
    struct fx_elfsym_row *syms;
    size_t nsyms, cap_syms;
    char *names;
    size_t nnames, cap_names;
    char **demangled;             /* per symbol, filled on first use; NULL until one is needed */
    const char *cache_dir;        /* borrowed from the cache; NULL: tables not kept */
    struct fx_elfsym_table table; /* syms and names mapped from the cache file, when map */
};

struct fx_elfsym {
    struct lib **libs;
    size_t nlibs, cap_libs;
    struct lib *last; /* consecutive addresses mostly share a library */
    char *debug_dir;  /* NULL: separate debug files are not looked for */
    char *cache_dir;  /* NULL: symbol tables are not kept across starts */
    struct fx_elfsym_cache_stats stats;
};

struct fx_elfsym *fx_elfsym_new(void)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
    struct fx_elfsym *s = fx_calloc(1, sizeof(struct fx_elfsym));
    if (s && fx_elfsym_set_debug_dir(s, FX_ELFSYM_DEBUG_DIR) != FX_OK) {
        fx_free(s);
        return NULL;
    }
    return s;
}

int fx_elfsym_set_debug_dir(struct fx_elfsym *s, const char *dir)
{
    char *copy = NULL;
    if (dir && !(copy = fx_strdup(dir)))
        return FX_ENOMEM;
    fx_free(s->debug_dir);
    s->debug_dir = copy;
    return FX_OK;
}

static void lib_free(struct lib *l)
{
    if (!l)
        return;
    for (size_t i = 0; l->demangled && i < l->nsyms; i++)
        fx_free(l->demangled[i]);
    fx_free(l->demangled);
    fx_free(l->segs);
    if (l->table.map != NULL) {
        fx_elfsym_cache_unmap(&l->table);
    } else {
        fx_free(l->syms);
        fx_free(l->names);
    }
    fx_free(l->path);
    fx_free(l);
}

int fx_elfsym_set_cache_dir(struct fx_elfsym *s, const char *dir)
{
    char *copy = NULL;
    if (dir && !(copy = fx_strdup(dir)))
        return FX_ENOMEM;
    fx_free(s->cache_dir);
    s->cache_dir = copy;
    return FX_OK;
}

const struct fx_elfsym_cache_stats *fx_elfsym_cache_stats(const struct fx_elfsym *s)
{
    return &s->stats;
}

void fx_elfsym_free(struct fx_elfsym *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nlibs; i++)
        lib_free(s->libs[i]);
    fx_free(s->libs);
    fx_free(s->debug_dir);
    fx_free(s->cache_dir);
    fx_free(s);
}

/* --- reading one ELF image ------------------------------------------------------------------ */

static int read_segments(Elf *elf, struct lib *l)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return FX_EINVAL;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (fx_grow(&l->segs, &l->cap_segs, l->nsegs, 1, sizeof(*l->segs), 4) != 0)
            return FX_ENOMEM;
        l->segs[l->nsegs++] = (struct seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
    }
    return l->nsegs ? FX_OK : FX_EINVAL;
}

static void read_build_id(Elf *elf, struct lib *l)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
            continue;
        GElf_Nhdr nh;
        size_t off = 0, name_at, desc_at, next;
        while ((next = gelf_getnote(d, off, &nh, &name_at, &desc_at)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + name_at, "GNU", 4) == 0) {
                const unsigned char *id = (const unsigned char *)d->d_buf + desc_at;
                for (size_t i = 0; i < nh.n_descsz && i < 20; i++)
                    snprintf(l->build_id + 2 * i, 3, "%02x", id[i]);
                return;
            }
            off = next;
        }
    }
}

static Elf_Scn *find_table(Elf *elf, GElf_Word type, GElf_Shdr *sh)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_entsize)
            return scn;
    }
    return NULL;
}

static int add_sym(struct lib *l, const GElf_Sym *st, const char *name)
{
    size_t len = strlen(name);
    if (fx_grow(&l->names, &l->cap_names, l->nnames, len + 1, 1, 1 << 14) != 0 ||
        fx_grow(&l->syms, &l->cap_syms, l->nsyms, 1, sizeof(*l->syms), 256) != 0)
        return FX_ENOMEM;
    memcpy(l->names + l->nnames, name, len + 1);
    l->syms[l->nsyms++] = (struct fx_elfsym_row){.addr = st->st_value,
                                                 .size = st->st_size,
                                                 .name_at = l->nnames,
                                                 .global = GELF_ST_BIND(st->st_info) != STB_LOCAL};
    l->nnames += len + 1;
    return FX_OK;
}

static bool is_function(const GElf_Sym *st)
{
    int type = GELF_ST_TYPE(st->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && st->st_shndx != SHN_UNDEF &&
           st->st_value != 0;
}

/* Function symbols of one table; FX_ENOTFOUND when it has none. */
static int read_table(Elf *elf, GElf_Word type, struct lib *l)
{
    GElf_Shdr sh;
    Elf_Scn *scn = find_table(elf, type, &sh);
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    if (!d)
        return FX_ENOTFOUND;
    size_t n = sh.sh_size / sh.sh_entsize;
    /* Room for all at once: growing by doubling copied libjvm's arrays (MiBs) ~8 times. */
    GElf_Shdr str;
    Elf_Scn *strs = elf_getscn(elf, sh.sh_link);
    if (fx_grow(&l->syms, &l->cap_syms, l->nsyms, n, sizeof(*l->syms), 256) != 0 ||
        (strs != NULL && gelf_getshdr(strs, &str) != NULL &&
         fx_grow(&l->names, &l->cap_names, l->nnames, str.sh_size + 1, 1, 1 << 14) != 0))
        return FX_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym st;
        const char *name;
        if (!gelf_getsym(d, (int)i, &st) || !is_function(&st) ||
            !(name = elf_strptr(elf, sh.sh_link, st.st_name)) || !*name)
            continue;
        if (add_sym(l, &st, name) != FX_OK)
            return FX_ENOMEM;
    }
    return l->nsyms ? FX_OK : FX_ENOTFOUND;
}

/* At one address the global symbol wins over a local alias, then the earlier one. */
static int by_addr(const void *a, const void *b)
{
    const struct fx_elfsym_row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->global != y->global)
        return x->global ? -1 : 1;
    return x->name_at < y->name_at ? -1 : x->name_at > y->name_at;
}

/* Sorted by address, one symbol per address: by_addr's first of each run of equal addresses.
 * A stable radix sort by address (libjvm's 50,000-60,000 symbols: introsort with by_addr was a
 * third of the ~15 ms of reading them, issue 31), the comparator sort when the radix sort's copy
 * cannot be had. */
static void sort_unique(struct lib *l)
{
    if (!fx_sort_by_u64(l->syms, l->nsyms, sizeof(*l->syms), offsetof(struct fx_elfsym_row, addr)))
        fx_sort(l->syms, l->nsyms, sizeof(*l->syms), by_addr);
    size_t kept = 0;
    for (size_t i = 0; i < l->nsyms; i++) {
        if (kept == 0 || l->syms[kept - 1].addr != l->syms[i].addr)
            l->syms[kept++] = l->syms[i];
        else if (by_addr(&l->syms[i], &l->syms[kept - 1]) < 0)
            l->syms[kept - 1] = l->syms[i];
    }
    l->nsyms = kept;
}

/* The kept table of the file at path (the library, or its debug file: same build-id), mapped. */
static int cached_symbols(struct lib *l, const char *path, const struct stat *st,
                          struct fx_elfsym_cache_stats *cs)
{
    struct fx_errbuf eb = {{0}};
    int rc = fx_elfsym_cache_load(l->cache_dir, path, st, l->build_id, &l->table, &eb);
    if (rc == FX_EIO) {
        cs->errors++;
        snprintf(cs->error, sizeof(cs->error), "%s", eb.msg);
    }
    if (rc != FX_OK)
        return rc;
    cs->loaded++;
    fx_free(l->syms); /* a .symtab without functions read before the debug file's turn */
    fx_free(l->names);
    l->syms = (struct fx_elfsym_row *)l->table.rows; /* read-only: nothing writes a mapped table */
    l->nsyms = l->table.n;
    l->names = (char *)l->table.names;
    l->nnames = l->table.names_len;
    return FX_OK;
}

static void keep_symbols(struct lib *l, const char *path, const struct stat *st,
                         struct fx_elfsym_cache_stats *cs)
{
    struct fx_errbuf eb = {{0}};
    if (fx_elfsym_cache_store(l->cache_dir, path, st, l->build_id, l->syms, l->nsyms, l->names,
                              l->nnames, &eb) == FX_OK) {
        cs->stored++;
    } else {
        cs->errors++;
        snprintf(cs->error, sizeof(cs->error), "%s", eb.msg);
    }
}

/* Debian's -dbgsym packages put the full .symtab of a stripped file at
 * DIR/.build-id/xx/yyyy.debug, named by its build-id: same virtual addresses, so the symbols
 * apply as they are. FX_ENOTFOUND when there is no such file or it has no function symbols.
 * Kept under the debug file's own identity: a package upgraded or removed misses. */
static int read_debug_file(struct lib *l, struct fx_elfsym_cache_stats *cs)
{
    if (!l->debug_dir || strlen(l->build_id) < 4)
        return FX_ENOTFOUND;
    char path[4096];
    snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", l->debug_dir, l->build_id,
             l->build_id + 2);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FX_ENOTFOUND;
    struct stat st;
    bool keep = cs != NULL && fstat(fd, &st) == 0; /* cs: read_elf keeps this library's */
    if (keep && cached_symbols(l, path, &st, cs) == FX_OK)
        return close(fd), FX_OK;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = elf && elf_kind(elf) == ELF_K_ELF ? read_table(elf, SHT_SYMTAB, l) : FX_ENOTFOUND;
    elf_end(elf);
    close(fd);
    if (rc == FX_OK)
        sort_unique(l);
    if (keep && rc == FX_OK) /* sorted: libc's 7,000 symbols each start otherwise */
        keep_symbols(l, path, &st, cs);
    return rc;
}

static int read_symbols(Elf *elf, struct lib *l, struct fx_elfsym_cache_stats *cs)
{
    l->source = FX_ELFSYM_SYMTAB;
    int rc = read_table(elf, SHT_SYMTAB, l);
    if (rc == FX_ENOTFOUND) {
        l->source = FX_ELFSYM_DEBUG_FILE;
        rc = read_debug_file(l, cs);
    }
    if (rc == FX_ENOTFOUND) {
        l->source = FX_ELFSYM_DYNSYM;
        rc = read_table(elf, SHT_DYNSYM, l);
    }
    if (rc == FX_ENOTFOUND) {
        l->source = FX_ELFSYM_NONE;
        snprintf(l->why, sizeof(l->why), "no function symbols (.symtab and .dynsym empty)");
    }
    return rc == FX_ENOMEM ? rc : FX_OK;
}

/* st: the file's, when the table may be kept across starts (NULL for the vDSO). */
static int read_elf(Elf *elf, struct lib *l, const struct stat *st,
                    struct fx_elfsym_cache_stats *cs)
{
    if (elf_kind(elf) != ELF_K_ELF) {
        snprintf(l->why, sizeof(l->why), "not an ELF file");
        return FX_OK;
    }
    int rc = read_segments(elf, l);
    if (rc != FX_OK) {
        if (rc == FX_EINVAL)
            snprintf(l->why, sizeof(l->why), "ELF file without loadable segments");
        return rc == FX_ENOMEM ? rc : FX_OK;
    }
    l->usable = true;
    read_build_id(elf, l);
    bool keep = st != NULL && l->cache_dir != NULL && l->build_id[0] != '\0';
    if (keep && cached_symbols(l, l->path, st, cs) == FX_OK)
        return l->source = FX_ELFSYM_SYMTAB, FX_OK;
    rc = read_symbols(elf, l, keep ? cs : NULL);
    if (l->source == FX_ELFSYM_DEBUG_FILE)
        return rc; /* sorted, or mapped read-only, by read_debug_file */
    sort_unique(l);
    if (keep && rc == FX_OK && l->source == FX_ELFSYM_SYMTAB)
        keep_symbols(l, l->path, st, cs); /* .dynsym: a debug file may come */
    return rc;
}

/* --- which file, and is it still the one mapped --------------------------------------------- */

static bool same_file(const struct lib *l, const struct stat *st, const char *path)
{
    if ((uint64_t)st->st_ino != l->inode)
        return false;
    if (major(st->st_dev) == l->dev_major && minor(st->st_dev) == l->dev_minor)
        return true;
    struct statfs fs;
    return statfs(path, &fs) == 0 && (unsigned long)fs.f_type == OVERLAYFS_MAGIC;
}

static int read_file(struct lib *l, struct fx_elfsym_cache_stats *cs)
{
    struct stat st;
    int fd = open(l->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(l->why, sizeof(l->why), "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return FX_OK;
    }
    int rc = FX_OK;
    if (!same_file(l, &st, l->path)) {
        snprintf(l->why, sizeof(l->why), "file replaced since mapped (inode %ju, mapped %ju)",
                 (uintmax_t)st.st_ino, (uintmax_t)l->inode);
    } else {
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (elf)
            rc = read_elf(elf, l, &st, cs);
        else
            snprintf(l->why, sizeof(l->why), "libelf: %s", elf_errmsg(-1));
        elf_end(elf);
    }
    close(fd);
    return rc;
}

/* The vDSO is an ELF image the kernel maps into every process: ours can be read from memory
 * (copied first: libelf must not touch the kernel's read-only pages). */
static int read_vdso(const struct fx_textmap_entry *m, struct lib *l)
{
    if (m->start != (uintptr_t)getauxval(AT_SYSINFO_EHDR)) {
        snprintf(l->why, sizeof(l->why), "the vDSO of another process");
        return FX_OK;
    }
    size_t size = m->end - m->start;
    char *copy = fx_malloc(size);
    if (!copy)
        return FX_ENOMEM;
    memcpy(copy, (const void *)m->start, size);
    Elf *elf = elf_memory(copy, size);
    int rc = elf ? read_elf(elf, l, NULL, NULL) : FX_OK;
    if (!elf)
        snprintf(l->why, sizeof(l->why), "libelf: %s", elf_errmsg(-1));
    elf_end(elf);
    fx_free(copy);
    return rc;
}

static int load(const struct fx_textmap_entry *m, struct lib *l, struct fx_elfsym_cache_stats *cs)
{
    switch (m->kind) {
    case FX_TEXTMAP_ANON:
        snprintf(l->why, sizeof(l->why), "anonymous executable memory (JIT or generated code)");
        return FX_OK;
    case FX_TEXTMAP_DELETED:
        snprintf(l->why, sizeof(l->why), "file deleted since mapped");
        return FX_OK;
    case FX_TEXTMAP_SPECIAL:
        if (strcmp(m->path, "[vdso]") == 0)
            return read_vdso(m, l);
        snprintf(l->why, sizeof(l->why), "kernel special mapping");
        return FX_OK;
    case FX_TEXTMAP_FILE:
        break;
    }
    return read_file(l, cs);
}

/* --- the cache ----------------------------------------------------------------------------- */

static bool is_lib_of(const struct lib *l, const struct fx_textmap_entry *m)
{
    return l->inode == m->inode && l->dev_major == m->dev_major && l->dev_minor == m->dev_minor &&
           l->kind == m->kind && strcmp(l->path, m->path) == 0;
}

static struct lib *new_lib(const struct fx_textmap_entry *m, const struct fx_elfsym *s)
{
    struct lib *l = fx_calloc(1, sizeof(*l));
    if (!l || !(l->path = fx_strdup(m->path))) {
        fx_free(l);
        return NULL;
    }
    const char *slash = strrchr(l->path, '/');
    if (m->kind == FX_TEXTMAP_ANON)
        l->base = l->path[0] ? l->path : "[anon]";
    else
        l->base = slash ? slash + 1 : l->path;
    l->inode = m->inode;
    l->dev_major = m->dev_major;
    l->dev_minor = m->dev_minor;
    l->kind = m->kind;
    l->debug_dir = s->debug_dir;
    l->cache_dir = s->cache_dir;
    return l;
}

static int get_lib(struct fx_elfsym *s, const struct fx_textmap_entry *m, struct lib **out)
{
    if (s->last && is_lib_of(s->last, m)) {
        *out = s->last;
        return FX_OK;
    }
    for (size_t i = 0; i < s->nlibs; i++) {
        if (is_lib_of(s->libs[i], m)) {
            *out = s->last = s->libs[i];
            return FX_OK;
        }
    }
    struct lib *l = new_lib(m, s);
    if (!l || fx_grow(&s->libs, &s->cap_libs, s->nlibs, 1, sizeof(*s->libs), 16) != 0 ||
        load(m, l, &s->stats) != FX_OK) {
        lib_free(l);
        return FX_ENOMEM;
    }
    s->libs[s->nlibs++] = l;
    *out = s->last = l;
    return FX_OK;
}

/* --- lookup -------------------------------------------------------------------------------- */

static bool to_vaddr(const struct lib *l, uint64_t file_off, uint64_t *vaddr)
{
    for (size_t i = 0; i < l->nsegs; i++) {
        const struct seg *g = &l->segs[i];
        if (file_off >= g->off && file_off - g->off < g->filesz) {
            *vaddr = file_off - g->off + g->vaddr;
            return true;
        }
    }
    return false;
}

static const struct fx_elfsym_row *covering(const struct lib *l, uint64_t vaddr)
{
    size_t lo = 0, hi = l->nsyms; /* first symbol above vaddr, in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct fx_elfsym_row *y = &l->syms[lo - 1];
    return vaddr - y->addr < y->size || vaddr == y->addr ? y : NULL;
}

/* The symbol's display name: demangled once, then from the cache; the mangled name when
 * demangling fails (including for want of memory: the name is still right, only rawer). */
static const char *display_name(struct lib *l, const struct fx_elfsym_row *y)
{
    const char *raw = l->names + y->name_at;
    if (strncmp(raw, "_Z", 2) != 0)
        return raw;
    if (!l->demangled && !(l->demangled = fx_calloc(l->nsyms, sizeof(char *))))
        return raw;
    char **slot = &l->demangled[y - l->syms];
    if (!*slot)
        *slot = fx_demangle(raw);
    return *slot ? *slot : raw;
}

static void name_in(struct lib *l, uint64_t file_off, struct fx_elfsym_frame *out)
{
    uint64_t vaddr;
    if (!to_vaddr(l, file_off, &vaddr)) {
        out->why = "address outside the file's loadable segments";
        return;
    }
    out->lib_off = vaddr;
    const struct fx_elfsym_row *y = l->source != FX_ELFSYM_NONE ? covering(l, vaddr) : NULL;
    if (!y) {
        out->why = l->why[0] ? l->why
                   : l->source == FX_ELFSYM_DYNSYM
                           ? "no symbol covers the address (stripped: .dynsym only)"
                           : "no symbol covers the address";
        return;
    }
    out->name = display_name(l, y);
    out->sym_off = vaddr - y->addr;
    out->source = l->source;
    out->why = "";
}

int fx_elfsym_resolve(struct fx_elfsym *s, const struct fx_textmap_entry *m, uintptr_t addr,
                      struct fx_elfsym_frame *out)
{
    if (addr < m->start || addr >= m->end)
        return FX_EINVAL;
    struct lib *l;
    int rc = get_lib(s, m, &l);
    if (rc != FX_OK)
        return rc;
    uint64_t file_off = addr - m->start + m->offset;
    *out = (struct fx_elfsym_frame){.lib = l->base,
                                    .path = l->path,
                                    .lib_off =
                                            m->kind == FX_TEXTMAP_ANON ? addr - m->start : file_off,
                                    .build_id = l->build_id,
                                    .source = FX_ELFSYM_NONE,
                                    .why = l->why};
    if (l->usable)
        name_in(l, file_off, out);
    return FX_OK;
}

size_t fx_elfsym_frame_name(const struct fx_elfsym_frame *f, char *buf, size_t n)
{
    int len = f->name ? snprintf(buf, n, "%s", f->name)
                      : snprintf(buf, n, "%s+0x%" PRIx64, f->lib, f->lib_off);
    return len < 0 ? 0 : (size_t)len;
}
