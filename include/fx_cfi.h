/* SPDX-License-Identifier: Apache-2.0 */
/* Unwind tables from DWARF call-frame information (issue 16, cstack=dwarf): a library's
 * `.eh_frame` turned, off the signal path, into one immutable block of rows sorted by address,
 * and the header-inline lookup and unwind step a signal handler uses on it. Owns building,
 * the row format and the x86-64 step; finding the library of an address (the text map) and
 * publishing tables to the handler are the agent's (agent/sampling/native_unwind.c).
 *
 * The subset. Compiled C and C++ on x86-64 describe every frame as: the CFA (the caller's
 * stack pointer) is rsp+N or rbp+N, the return address is saved at CFA-8, and rbp is either
 * unchanged or saved at CFA+M. Rows say exactly that, in 12 bytes. A range whose rules fall
 * outside it (a CFA computed by a DWARF expression, as in signal trampolines, but GNU ld's
 * lazy PLT's one, FX_CFI_CFA_PLT; the return address or rbp anywhere else) becomes a row
 * marked FX_CFI_CFA_UNSUPPORTED, and a
 * gap between functions a row FX_CFI_CFA_NONE, so a walk stops or falls back there by name
 * instead of guessing.
 *
 * Addresses. Rows hold ELF virtual addresses minus the table's base (the lowest executable
 * address); a pc of a process is first turned into the file offset through its mapping (the
 * text map gives start and offset), then into a virtual address through the executable
 * PT_LOAD segment holding that offset (fx_cfi_vaddr_sigsafe), so shared objects, PIE
 * executables and prelinked files need no special case. */
#ifndef FX_CFI_H
#define FX_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fx_err.h"

enum fx_cfi_cfa {
    FX_CFI_CFA_RSP = 0,         /* CFA = rsp + cfa_off */
    FX_CFI_CFA_RBP = 1,         /* CFA = rbp + cfa_off */
    FX_CFI_CFA_NONE = 2,        /* no FDE covers these addresses */
    FX_CFI_CFA_UNSUPPORTED = 3, /* an FDE does, with rules outside the subset above */
    FX_CFI_CFA_END = 4,         /* the return address is undefined: the thread's first frame */
    /* GNU ld's lazy .plt (issue 32): CFA = rsp + 8, + 8 more where (pc & 15) >= cfa_off (after
     * the entry's `push $index`); stepped only in the interrupted frame, its pc exact */
    FX_CFI_CFA_PLT = 5,
};

enum fx_cfi_rbp {
    FX_CFI_RBP_SAME = 0,  /* the caller's rbp is the current rbp */
    FX_CFI_RBP_SAVED = 1, /* the caller's rbp is the word at CFA + rbp_off */
};

struct fx_cfi_row {
    uint32_t pc;     /* first address covered, minus the table's base */
    int32_t cfa_off; /* see cfa */
    int16_t rbp_off; /* see rbp */
    uint8_t cfa;     /* enum fx_cfi_cfa */
    uint8_t rbp;     /* enum fx_cfi_rbp */
};

#define FX_CFI_MAX_SEGS 4

struct fx_cfi_seg {
    uint64_t offset, vaddr, filesz; /* an executable PT_LOAD segment */
};

/* One block: header then `count` rows sorted by pc; row i covers [rows[i].pc, rows[i+1].pc),
 * the last one up to `end`; then `nfuncs` FDE starts (uint32, minus base, ascending), which
 * name the function of an address that no symbol covers (fx_cfi_func_start). */
struct fx_cfi {
    uint64_t base;  /* ELF virtual address of row pc 0 */
    uint32_t end;   /* one past the last covered address, minus base */
    uint32_t nsegs; /* executable segments in segs */
    struct fx_cfi_seg segs[FX_CFI_MAX_SEGS];
    size_t nfuncs;
    size_t count;
    struct fx_cfi_row rows[];
};

/* What fx_cfi_build found, for the profile's metadata and docs/BENCHMARKS.md. */
struct fx_cfi_stats {
    uint64_t fdes;        /* entries of .eh_frame_hdr's search table */
    uint64_t rows;        /* rows of the table (all kinds) */
    uint64_t unsupported; /* of which FX_CFI_CFA_UNSUPPORTED */
    uint64_t bytes;       /* the block's size */
};

/* Reads the ELF file at path (elfutils' libdw over its .eh_frame, the FDE list from
 * .eh_frame_hdr) into a new table. FX_OK and *out set (free with fx_cfi_free); otherwise *out
 * is NULL, eb says why in one line and the result is FX_EIO (unreadable, not ELF),
 * FX_ENOTFOUND (no .eh_frame_hdr search table or no executable segment), FX_EUNSUPPORTED (not
 * x86-64, a table encoding other than GNU ld's, text above 4 GiB) or FX_ENOMEM. stats may be
 * NULL. Not signal-safe. */
int fx_cfi_build(const char *path, struct fx_cfi **out, struct fx_cfi_stats *stats,
                 struct fx_errbuf *eb);

void fx_cfi_free(struct fx_cfi *c);

/* The ELF virtual address where the function (FDE) covering vaddr starts: true and *start set,
 * false where no FDE covers vaddr. Not for the signal path (a model owner's naming). */
bool fx_cfi_func_start(const struct fx_cfi *c, uint64_t vaddr, uint64_t *start);

/* The ELF virtual address at file offset off, if an executable segment holds it.
 * Async-signal-safe. */
static inline bool fx_cfi_vaddr_sigsafe(const struct fx_cfi *c, uint64_t off, uint64_t *vaddr)
{
    for (uint32_t i = 0; i < c->nsegs && i < FX_CFI_MAX_SEGS; i++) {
        const struct fx_cfi_seg *s = &c->segs[i];
        if (off >= s->offset && off - s->offset < s->filesz) {
            *vaddr = s->vaddr + (off - s->offset);
            return true;
        }
    }
    return false;
}

/* The row covering ELF virtual address vaddr, or NULL outside the table. Async-signal-safe. */
static inline const struct fx_cfi_row *fx_cfi_lookup_sigsafe(const struct fx_cfi *c, uint64_t vaddr)
{
    if (c == NULL || c->count == 0 || vaddr < c->base || vaddr - c->base >= c->end)
        return NULL;
    uint32_t pc = (uint32_t)(vaddr - c->base);
    size_t lo = 0, hi = c->count; /* the last row with rows[i].pc <= pc is in [lo, hi) */
    if (c->rows[0].pc > pc)
        return NULL;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->rows[mid].pc <= pc)
            lo = mid;
        else
            hi = mid;
    }
    return &c->rows[lo];
}

/* Registers a step reads and moves up one frame. */
struct fx_cfi_regs {
    uintptr_t pc, sp, fp;
};

enum fx_cfi_step {
    FX_CFI_STEP_OK = 0,
    FX_CFI_STEP_NONE,        /* the row says no FDE covers pc */
    FX_CFI_STEP_UNSUPPORTED, /* the row's rules are outside the subset */
    FX_CFI_STEP_BAD_CFA,     /* a word to read lies outside [sp, hi) or the CFA not above sp */
    FX_CFI_STEP_END,         /* the outermost frame (clone, _start): nothing above */
};

/* The x86-64 psABI's red zone: the 128 bytes below rsp, which signal and interrupt handlers
 * never write (the kernel builds a signal frame below them), so in the interrupted frame they
 * still hold what the function stored there. Read only in the page of sp (readable as sp's own
 * word is; the page below may be a guard page). */
#define FX_CFI_RED_ZONE 128
#define FX_CFI_PAGE     4096

/* The lowest address a step may read: sp, or in the interrupted frame its red zone's bottom,
 * not below sp's page. */
static inline uintptr_t fx_cfi_read_lo(uintptr_t sp, bool leaf)
{
    uintptr_t page = sp & ~(uintptr_t)(FX_CFI_PAGE - 1);
    if (!leaf)
        return sp;
    return sp - page >= FX_CFI_RED_ZONE ? sp - FX_CFI_RED_ZONE : page;
}

/* Async-signal-safe: one frame up by row r, reading only 8-byte words inside [lo, hi) of the
 * thread's stack whose top is hi, where lo is r->sp, or for the interrupted frame (leaf: the
 * signal's context, not a caller stopped at a call) fx_cfi_read_lo's red zone: the return address
 * at CFA-8 (never below sp), rbp at CFA+rbp_off when saved; the caller's sp is the CFA, which
 * must lie above sp. The red zone is read where a row says rbp is saved below sp: GCC's rows
 * after an epilogue's `leave` or `pop rbp` (no DW_CFA_restore there) still say "rbp at CFA-16",
 * the word `leave` read, now at sp-8, which nothing wrote since (os::javaTimeMillis' `leave;
 * imul; ...; ret`, docs/VALIDATION.md section 9); a caller's red zone is its callee's frame, so
 * not there. On failure *regs is unchanged. */
static inline enum fx_cfi_step
fx_cfi_step_sigsafe(const struct fx_cfi_row *r, struct fx_cfi_regs *regs, uintptr_t hi, bool leaf)
{
    uintptr_t cfa;
    if (r->cfa == FX_CFI_CFA_RSP)
        cfa = regs->sp + (uintptr_t)(intptr_t)r->cfa_off;
    else if (r->cfa == FX_CFI_CFA_RBP)
        cfa = regs->fp + (uintptr_t)(intptr_t)r->cfa_off;
    else if (r->cfa == FX_CFI_CFA_PLT && leaf)
        cfa = regs->sp + 8 + ((regs->pc & 15) >= (uintptr_t)(intptr_t)r->cfa_off ? 8 : 0);
    else if (r->cfa == FX_CFI_CFA_END)
        return FX_CFI_STEP_END;
    else /* a PLT row but in a caller's frame: a PLT entry calls nothing */
        return r->cfa == FX_CFI_CFA_NONE ? FX_CFI_STEP_NONE : FX_CFI_STEP_UNSUPPORTED;
    uintptr_t ra_at = cfa - 8;
    if (cfa <= regs->sp || ra_at < regs->sp || cfa > hi || (ra_at & 7) != 0)
        return FX_CFI_STEP_BAD_CFA;
    uintptr_t fp = regs->fp;
    if (r->rbp == FX_CFI_RBP_SAVED) {
        uintptr_t lo = fx_cfi_read_lo(regs->sp, leaf);
        uintptr_t fp_at = cfa + (uintptr_t)(intptr_t)r->rbp_off;
        if (fp_at < lo || fp_at > hi - 8 || (fp_at & 7) != 0)
            return FX_CFI_STEP_BAD_CFA;
        fp = *(const uintptr_t *)fp_at;
    }
    regs->pc = *(const uintptr_t *)ra_at;
    regs->sp = cfa;
    regs->fp = fp;
    return FX_CFI_STEP_OK;
}

#endif
