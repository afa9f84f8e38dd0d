/* SPDX-License-Identifier: Apache-2.0 */
/* Unwind tables (include/fx_cfi.h) built from a library's .eh_frame with elfutils' libdw: the
 * FDE start addresses come from .eh_frame_hdr's sorted search table (what the runtime unwinder
 * binary-searches too), and, for code that has its CFI only in .debug_frame (built with -g and
 * without unwind tables, issue 32), from that section's FDEs, .eh_frame's first where both
 * cover a function, and each FDE's rows from dwarf_cfi_addrframe, which runs the CIE's and
 * FDE's instructions up to an address and says over which range the result holds; walking an
 * FDE range by range gives every row once. A library with no .debug_frame of its own may name a
 * separate debug file (.gnu_debuglink) that has it: read from there. Rows are reduced to the subset
 * fx_cfi.h describes (GNU ld's lazy PLT expression recognised whole, issue 32), and equal
 * neighbours merged. Not signal-safe; the table it returns is
 * immutable. */
#include "fx_cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fx_alloc.h"

#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA  16

struct builder {
    struct fx_cfi_row *rows;
    size_t n, cap;
    uint64_t unsupported;
};

static int push_row(struct builder *b, const struct fx_cfi_row *r)
{
    if (b->n > 0) {
        const struct fx_cfi_row *p = &b->rows[b->n - 1];
        if (p->cfa == r->cfa && p->cfa_off == r->cfa_off && p->rbp == r->rbp &&
            p->rbp_off == r->rbp_off)
            return FX_OK; /* the same rules continue: one row covers both */
    }
    if (fx_grow(&b->rows, &b->cap, b->n, 1, sizeof(*b->rows), 1024) != 0)
        return FX_ENOMEM;
    b->rows[b->n++] = *r;
    b->unsupported += r->cfa == FX_CFI_CFA_UNSUPPORTED;
    return FX_OK;
}

/* A register's value as [CFA + *off]; false for any other rule. */
static bool saved_at_cfa(Dwarf_Op *ops, size_t nops, int64_t *off)
{
    if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
        *off = 0;
        return true;
    }
    if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
        *off = (int64_t)ops[1].number; /* libdw stores a negative offset as its two's complement */
        return true;
    }
    return false;
}

/* GNU ld's lazy .plt CFA expression: rsp + 8 + (((rip & 15) >= K) << 3), K the offset in a
 * 16-byte entry after its `push $index` (11: `jmp *GOT(%rip)` 6 bytes, `push imm32` 5); true
 * and *k set for exactly that expression. */
static bool plt_cfa(const Dwarf_Op *ops, size_t nops, int64_t *k)
{
    static const uint8_t want[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
                                   DW_OP_ge,    DW_OP_lit3,   DW_OP_shl,   DW_OP_plus};
    if (nops != sizeof(want) || ops[0].number != 8 || ops[1].number != 0)
        return false;
    for (size_t i = 0; i < nops; i++)
        if (i != 4 && ops[i].atom != want[i])
            return false;
    if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
        return false;
    *k = ops[4].atom - DW_OP_lit0;
    return true;
}

/* The subset's row for frame f, or an UNSUPPORTED row. */
static void classify(Dwarf_Frame *f, int ra_reg, bool signal, struct fx_cfi_row *r)
{
    r->cfa = FX_CFI_CFA_UNSUPPORTED;
    r->cfa_off = 0;
    r->rbp = FX_CFI_RBP_SAME;
    r->rbp_off = 0;
    Dwarf_Op *ops, mem[3];
    size_t nops;
    if (signal || ra_reg != DW_REG_RA || dwarf_frame_cfa(f, &ops, &nops) != 0)
        return;
    int64_t reg, off;
    if (plt_cfa(ops, nops, &off)) {
        reg = -1;
    } else if (nops != 1) {
        return;
    } else if (ops[0].atom == DW_OP_bregx) {
        reg = (int64_t)ops[0].number;
        off = (int64_t)ops[0].number2;
    } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
        reg = ops[0].atom - DW_OP_breg0;
        off = (int64_t)ops[0].number;
    } else {
        return;
    }
    if ((reg != DW_REG_RSP && reg != DW_REG_RBP && reg != -1) || off < INT32_MIN || off > INT32_MAX)
        return;
    int64_t ra_off, rbp_off;
    if (dwarf_frame_register(f, DW_REG_RA, mem, &ops, &nops) != 0)
        return;
    if (nops == 0 && ops != NULL) {
        r->cfa = FX_CFI_CFA_END; /* "undefined": glibc marks clone's child and _start so */
        return;
    }
    if (!saved_at_cfa(ops, nops, &ra_off) || ra_off != -8)
        return;
    if (dwarf_frame_register(f, DW_REG_RBP, mem, &ops, &nops) != 0)
        return;
    if (nops == 0 && ops == NULL) {
        r->rbp = FX_CFI_RBP_SAME;
    } else if (saved_at_cfa(ops, nops, &rbp_off) && rbp_off >= INT16_MIN && rbp_off <= INT16_MAX) {
        r->rbp = FX_CFI_RBP_SAVED;
        r->rbp_off = (int16_t)rbp_off;
    } else {
        return; /* undefined, in another register, or an expression */
    }
    r->cfa = reg == -1 ? FX_CFI_CFA_PLT : reg == DW_REG_RSP ? FX_CFI_CFA_RSP : FX_CFI_CFA_RBP;
    r->cfa_off = (int32_t)off;
}

/* Rows of the FDE starting at vaddr start, up to limit (the next FDE's start). */
static int fde_rows(Dwarf_CFI *cfi, uint64_t base, uint64_t start, uint64_t limit,
                    struct builder *b)
{
    uint64_t a = start;
    while (a < limit) {
        Dwarf_Frame *f = NULL;
        struct fx_cfi_row r = {.pc = (uint32_t)(a - base), .cfa = FX_CFI_CFA_NONE};
        if (dwarf_cfi_addrframe(cfi, a, &f) != 0)
            return push_row(b, &r); /* a gap up to the next FDE */
        Dwarf_Addr s, e;
        bool signal = false;
        int ra = dwarf_frame_info(f, &s, &e, &signal);
        classify(f, ra, signal, &r);
        free(f); /* libdw's, from malloc */
        if (e <= a) {
            r.cfa = FX_CFI_CFA_UNSUPPORTED; /* an empty range: never loop on it */
            e = a + 1;
        }
        int rc = push_row(b, &r);
        if (rc != FX_OK)
            return rc;
        a = e;
    }
    return FX_OK;
}

/* The sorted FDE start addresses of .eh_frame_hdr (GNU ld's encodings only). */
static int hdr_starts(Elf *elf, uint64_t **starts, size_t *n, struct fx_errbuf *eb)
{
    size_t phnum;
    if (elf_getphdrnum(elf, &phnum) != 0)
        phnum = 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_GNU_EH_FRAME)
            continue;
        Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
        const uint8_t *h = d != NULL ? d->d_buf : NULL;
        if (h == NULL || d->d_size < 12) {
            fx_errbuf_set(eb, ".eh_frame_hdr unreadable");
            return FX_EIO;
        }
        /* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
        if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b) {
            fx_errbuf_set(eb, ".eh_frame_hdr encodings %02x %02x %02x %02x not GNU ld's", h[0],
                          h[1], h[2], h[3]);
            return FX_EUNSUPPORTED;
        }
        uint32_t count;
        memcpy(&count, h + 8, 4);
        if ((uint64_t)count * 8 > d->d_size - 12) {
            fx_errbuf_set(eb, ".eh_frame_hdr table of %u entries overruns its segment", count);
            return FX_EIO;
        }
        if ((*starts = fx_calloc(count ? count : 1, sizeof(**starts))) == NULL)
            return FX_ENOMEM;
        for (uint32_t k = 0; k < count; k++) {
            int32_t rel;
            memcpy(&rel, h + 12 + (size_t)k * 8, 4);
            (*starts)[k] = ph.p_vaddr + (uint64_t)(int64_t)rel;
        }
        *n = count;
        return FX_OK;
    }
    fx_errbuf_set(eb, "no .eh_frame_hdr (PT_GNU_EH_FRAME)");
    return FX_ENOTFOUND;
}

/* One FDE's start and the CFI it is read from (.eh_frame's, or .debug_frame's: issue 32). */
struct start {
    uint64_t at;
    bool debug;
};

static int by_start(const void *a, const void *b)
{
    const struct start *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (int)x->debug - (int)y->debug; /* .eh_frame's first where both cover a start */
}

/* The FDE start addresses of the .debug_frame section, appended to *v (*n of *cap): code built
 * without unwind tables (-fno-asynchronous-unwind-tables) but with -g has its CFI there only,
 * and its FDEs' initial locations are absolute addresses (DWARF 4 section 6.4.1). A compressed
 * or missing section adds nothing. */
static int debug_frame_starts(Elf *elf, struct start **v, size_t *n, size_t *cap)
{
    GElf_Ehdr eh;
    size_t shstrndx;
    if (gelf_getehdr(elf, &eh) == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return FX_OK;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name =
                gelf_getshdr(scn, &sh) != NULL ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name == NULL || strcmp(name, ".debug_frame") != 0 || (sh.sh_flags & SHF_COMPRESSED))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        Dwarf_Off off = 0, next;
        Dwarf_CFI_Entry e;
        while (d != NULL && off < d->d_size &&
               dwarf_next_cfi(eh.e_ident, d, false, off, &next, &e) == 0) {
            if (!dwarf_cfi_cie_p(&e) && e.fde.end - e.fde.start >= 8) {
                if (fx_grow(v, cap, *n, 1, sizeof(**v), 256) != 0)
                    return FX_ENOMEM;
                memcpy(&(*v)[*n].at, e.fde.start, 8);
                (*v)[(*n)++].debug = true;
            }
            if (next <= off)
                break;
            off = next;
        }
    }
    return FX_OK;
}

/* The executable PT_LOAD segments into c; false when there are none or too many. */
static bool text_segments(Elf *elf, struct fx_cfi *c, uint64_t *lo, uint64_t *hi)
{
    size_t phnum;
    if (elf_getphdrnum(elf, &phnum) != 0)
        return false;
    *lo = UINT64_MAX, *hi = 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
        if (c->nsegs == FX_CFI_MAX_SEGS)
            return false;
        c->segs[c->nsegs++] = (struct fx_cfi_seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
        *lo = ph.p_vaddr < *lo ? ph.p_vaddr : *lo;
        *hi = ph.p_vaddr + ph.p_filesz > *hi ? ph.p_vaddr + ph.p_filesz : *hi;
    }
    return c->nsegs > 0;
}

/* Whether elf has a section of that name. */
static bool has_section(Elf *elf, const char *want)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name =
                gelf_getshdr(scn, &sh) != NULL ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name != NULL && strcmp(name, want) == 0)
            return true;
    }
    return false;
}

/* zlib's CRC-32 of the file open at fd (GNU's debuglink CRC is the same polynomial). */
static bool file_crc(int fd, uint32_t *crc)
{
    unsigned char buf[65536];
    uLong c = crc32(0L, Z_NULL, 0);
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        c = crc32(c, buf, (uInt)n);
    *crc = (uint32_t)c;
    return n == 0;
}

/* The separate debug file the library's .gnu_debuglink names (issue 32: async-profiler's
 * DebugFrameApp keeps a library's only CFI, .debug_frame, there), where GDB looks: next to the
 * library, in its .debug/ folder, under /usr/lib/debug and the library's folder; taken only if
 * its CRC-32 is the link's. An open descriptor, or -1. */
static int debuglink_open(Elf *elf, const char *path)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return -1;
    Elf_Data *d = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL && d == NULL;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name =
                gelf_getshdr(scn, &sh) != NULL ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name != NULL && strcmp(name, ".gnu_debuglink") == 0)
            d = elf_getdata(scn, NULL);
    }
    const char *link = d != NULL ? d->d_buf : NULL;
    size_t len = link != NULL ? strnlen(link, d->d_size) : 0;
    size_t at = (len + 4) & ~(size_t)3; /* the name, its NUL, padding to 4: then the CRC */
    /* the bound first: only then is the name NUL-terminated inside the section */
    if (len == 0 || at + 4 > d->d_size || memchr(link, '/', len) != NULL)
        return -1;
    uint32_t want;
    memcpy(&want, (const char *)d->d_buf + at, 4);
    const char *slash = strrchr(path, '/');
    int dir = slash != NULL ? (int)(slash - path) : 0;
    for (int i = 0; i < 3; i++) {
        char file[4096];
        int n = i == 0   ? snprintf(file, sizeof(file), "%.*s/%s", dir, path, link)
                : i == 1 ? snprintf(file, sizeof(file), "%.*s/.debug/%s", dir, path, link)
                         : snprintf(file, sizeof(file), "/usr/lib/debug%.*s/%s", dir, path, link);
        /* O_NONBLOCK and a regular file only: a FIFO of that name must not hold the drain */
        int fd = n > 0 && (size_t)n < sizeof(file) ? open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                                                   : -1;
        struct stat sb;
        uint32_t crc;
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && file_crc(fd, &crc) &&
            crc == want)
            return fd;
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

/* dbg: the ELF file whose .debug_frame is read (the library's own, or its debug file's). */
static int build(Elf *elf, Elf *dbg, struct fx_cfi **out, struct fx_cfi_stats *st,
                 struct fx_errbuf *eb)
{
    GElf_Ehdr eh;
    if (gelf_getehdr(elf, &eh) == NULL || eh.e_machine != EM_X86_64) {
        fx_errbuf_set(eb, "not an x86-64 ELF file");
        return FX_EUNSUPPORTED;
    }
    struct fx_cfi head = {0};
    uint64_t lo, hi;
    if (!text_segments(elf, &head, &lo, &hi)) {
        fx_errbuf_set(eb, "no executable segment (or more than %d)", FX_CFI_MAX_SEGS);
        return FX_ENOTFOUND;
    }
    if (hi - lo > UINT32_MAX) {
        fx_errbuf_set(eb, "text spans more than 4 GiB");
        return FX_EUNSUPPORTED;
    }
    uint64_t *ehs = NULL;
    size_t neh = 0, n = 0, cap = 0;
    struct start *starts = NULL;
    int rc = hdr_starts(elf, &ehs, &neh, eb);
    if (rc != FX_OK && rc != FX_ENOTFOUND)
        return rc;
    rc = fx_grow(&starts, &cap, 0, neh > 0 ? neh : 1, sizeof(*starts), 256);
    for (size_t i = 0; rc == FX_OK && i < neh; i++)
        starts[n++] = (struct start){ehs[i], false};
    fx_free(ehs);
    if (rc == FX_OK)
        rc = debug_frame_starts(dbg, &starts, &n, &cap);
    bool debug = false;
    for (size_t i = 0; i < n && !debug; i++)
        debug = starts[i].debug;
    Dwarf_CFI *cfi = neh > 0 ? dwarf_getcfi_elf(elf) : NULL;
    Dwarf *dw = debug ? dwarf_begin_elf(dbg, DWARF_C_READ, NULL) : NULL;
    Dwarf_CFI *dcfi = dw != NULL ? dwarf_getcfi(dw) : NULL;
    struct builder b = {0};
    if (rc == FX_OK && cfi == NULL && dcfi == NULL) {
        fx_errbuf_set(eb, "no .eh_frame (nor .debug_frame): %s", dwarf_errmsg(-1));
        rc = FX_ENOTFOUND;
    }
    if (rc == FX_OK)
        qsort(starts, n, sizeof(*starts), by_start);
    size_t nfuncs = 0;
    for (size_t i = 0; rc == FX_OK && i < n; i++) {
        Dwarf_CFI *from = starts[i].debug ? dcfi : cfi;
        if (starts[i].at < lo || starts[i].at >= hi || from == NULL ||
            (i > 0 && starts[i].at == starts[i - 1].at))
            continue; /* outside the text (nothing a walk can land in), or a second FDE */
        size_t j = i + 1;
        while (j < n && starts[j].at == starts[i].at)
            j++;
        uint64_t limit = j < n && starts[j].at < hi ? starts[j].at : hi;
        starts[nfuncs++].at = starts[i].at; /* in place: the functions' starts, sorted */
        rc = fde_rows(from, lo, starts[i].at, limit, &b);
    }
    if (cfi != NULL)
        dwarf_cfi_end(cfi);
    if (dw != NULL)
        dwarf_end(dw); /* dcfi is the Dwarf's own */
    size_t bytes =
            sizeof(struct fx_cfi) + b.n * sizeof(struct fx_cfi_row) + nfuncs * sizeof(uint32_t);
    struct fx_cfi *c = rc == FX_OK ? fx_malloc(bytes) : NULL;
    if (rc == FX_OK && c == NULL)
        rc = FX_ENOMEM;
    if (rc == FX_OK) {
        *c = head;
        c->base = lo;
        c->end = (uint32_t)(hi - lo);
        c->count = b.n;
        if (b.n > 0)
            memcpy(c->rows, b.rows, b.n * sizeof(*b.rows));
        uint32_t *funcs = (uint32_t *)(c->rows + b.n);
        c->nfuncs = 0;
        for (size_t i = 0; i < nfuncs; i++)
            funcs[c->nfuncs++] = (uint32_t)(starts[i].at - lo);
        *out = c;
        if (st != NULL)
            *st = (struct fx_cfi_stats){n, b.n, b.unsupported, bytes};
    }
    fx_free(b.rows);
    fx_free(starts);
    return rc;
}

bool fx_cfi_func_start(const struct fx_cfi *c, uint64_t vaddr, uint64_t *start)
{
    const struct fx_cfi_row *r = fx_cfi_lookup_sigsafe(c, vaddr);
    if (r == NULL || r->cfa == FX_CFI_CFA_NONE || c->nfuncs == 0)
        return false;
    const uint32_t *funcs = (const uint32_t *)(c->rows + c->count);
    uint32_t pc = (uint32_t)(vaddr - c->base);
    if (funcs[0] > pc)
        return false;
    size_t lo = 0, hi = c->nfuncs; /* the last start <= pc is in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (funcs[mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    *start = c->base + funcs[lo];
    return true;
}

int fx_cfi_build(const char *path, struct fx_cfi **out, struct fx_cfi_stats *stats,
                 struct fx_errbuf *eb)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fx_errbuf_set(eb, "%s: %s", path, strerror(errno));
        return FX_EIO;
    }
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc;
    if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
        fx_errbuf_set(eb, "%s: not an ELF file", path);
        rc = FX_EIO;
    } else {
        struct fx_errbuf inner = {{0}};
        /* no .debug_frame of its own: the separate debug file's, if it names one */
        int dfd = has_section(elf, ".debug_frame") ? -1 : debuglink_open(elf, path);
        Elf *dbg = dfd >= 0 ? elf_begin(dfd, ELF_C_READ_MMAP, NULL) : NULL;
        if (dbg != NULL && elf_kind(dbg) != ELF_K_ELF) {
            elf_end(dbg);
            dbg = NULL;
        }
        rc = build(elf, dbg != NULL ? dbg : elf, out, stats, &inner);
        if (dbg != NULL)
            elf_end(dbg);
        if (dfd >= 0)
            close(dfd);
        if (rc != FX_OK)
            fx_errbuf_set(eb, "%s: %s", path, inner.msg);
    }
    elf_end(elf);
    close(fd);
    return rc;
}

void fx_cfi_free(struct fx_cfi *c)
{
    fx_free(c);
}
