/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel symbol table (include/fx_kallsyms.h): lines "ffffffff81000000 T _stext" or
 * "ffffffffc0a01000 t name\t[module]" into one sorted array over one name arena, or a reason
 * why there is none. Zero addresses are what kptr_restrict shows an unprivileged reader: a file
 * whose text symbols all read 0 is unusable, never a table of symbols at address 0. */
#include "fx_kallsyms.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fx_alloc.h"
#include "fx_lines.h"
#include "fx_sort.h"

struct raw {
    uint64_t addr;
    size_t name_at, module_at; /* offsets into names; module_at 0 is the "" at offset 0 */
    uint32_t order;            /* line order, so equal keys sort stably */
    bool global;
};

struct builder {
    struct raw *raws;
    size_t nraws, cap_raws;
    char *names;
    size_t nnames, cap_names;
    size_t zero; /* text symbols whose address reads 0 */
};

static int push_name(struct builder *b, const char *s, size_t len, size_t *at)
{
    if (fx_grow(&b->names, &b->cap_names, b->nnames, len + 1, 1, 1 << 16) != 0)
        return FX_ENOMEM;
    memcpy(b->names + b->nnames, s, len);
    b->names[b->nnames + len] = '\0';
    *at = b->nnames;
    b->nnames += len + 1;
    return FX_OK;
}

/* "ADDR TYPE NAME[\t[MODULE]]": false when the line does not have that shape. */
static bool split(char *line, uint64_t *addr, char *type, char **name, char **module)
{
    char *end;
    *addr = strtoull(line, &end, 16);
    if (end == line || end[0] != ' ' || end[1] == '\0' || end[2] != ' ' || end[3] == '\0')
        return false;
    *type = end[1];
    *name = end + 3;
    *module = NULL;
    char *tab = strchr(*name, '\t');
    if (tab) {
        *tab = '\0';
        size_t n = strlen(tab + 1);
        if (n < 3 || tab[1] != '[' || tab[n] != ']')
            return false;
        tab[n] = '\0';
        *module = tab + 2;
    }
    return **name != '\0';
}

static int add_line(struct builder *b, char *line, bool *malformed)
{
    uint64_t addr;
    char type, *name, *module;
    if (!split(line, &addr, &type, &name, &module)) {
        *malformed = true;
        return FX_OK;
    }
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
        return FX_OK;
    if (addr == 0)
        b->zero++;
    struct raw r = {
            .addr = addr, .order = (uint32_t)b->nraws, .global = type == 'T' || type == 'W'};
    if (push_name(b, name, strlen(name), &r.name_at) != FX_OK ||
        (module && push_name(b, module, strlen(module), &r.module_at) != FX_OK))
        return FX_ENOMEM;
    if (fx_grow(&b->raws, &b->cap_raws, b->nraws, 1, sizeof(*b->raws), 4096) != 0)
        return FX_ENOMEM;
    b->raws[b->nraws++] = r;
    return FX_OK;
}

/* Reads every line; a reason (unreadable, malformed) goes to k->reason, memory failure up. */
static int read_all(const char *path, struct builder *b, struct fx_kallsyms *k)
{
    struct fx_lines in;
    struct fx_errbuf eb = {{0}};
    if (fx_lines_open(&in, path, &eb) != FX_OK) {
        snprintf(k->reason, sizeof(k->reason), "kernel symbols unavailable: %s", eb.msg);
        return FX_OK;
    }
    char *line;
    size_t len;
    int rc;
    bool malformed = false;
    while (!malformed && (rc = fx_lines_next(&in, &line, &len, &eb)) == FX_OK) {
        if ((rc = add_line(b, line, &malformed)) != FX_OK)
            break;
    }
    if (malformed)
        snprintf(
                k->reason, sizeof(k->reason),
                "kernel symbols unavailable: %s:%zu: not a kallsyms line (address type name [module])",
                path, in.lineno);
    else if (rc != FX_OK && rc != FX_ENOTFOUND && rc != FX_ENOMEM)
        snprintf(k->reason, sizeof(k->reason), "kernel symbols unavailable: %s", eb.msg);
    fx_lines_close(&in);
    return rc == FX_ENOMEM ? FX_ENOMEM : FX_OK;
}

static int by_addr(const void *a, const void *b)
{
    const struct raw *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->global != y->global)
        return x->global ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int freeze(struct builder *b, struct fx_kallsyms *k)
{
    /* /proc/kallsyms lists the kernel's text in address order: checking costs one pass, the
     * sort of 120,000 symbols ~15 ms of every recording that meets a kernel frame. */
    bool sorted = true;
    for (size_t i = 1; sorted && i < b->nraws; i++)
        sorted = by_addr(&b->raws[i - 1], &b->raws[i]) < 0;
    if (!sorted)
        fx_sort(b->raws, b->nraws, sizeof(*b->raws), by_addr);
    if (b->nnames > UINT32_MAX)
        return FX_ENOMEM; /* offsets are 32 bits: a few MB in any kernel */
    struct fx_kallsyms_sym *syms = fx_reallocarray(NULL, b->nraws ? b->nraws : 1, sizeof(*syms));
    if (!syms)
        return FX_ENOMEM;
    for (size_t i = 0; i < b->nraws; i++) {
        const struct raw *r = &b->raws[i];
        syms[i] = (struct fx_kallsyms_sym){
                .addr = r->addr, .name = (uint32_t)r->name_at, .module = (uint32_t)r->module_at};
    }
    k->syms = syms;
    k->count = b->nraws;
    k->names = b->names;
    k->names_bytes = b->nnames;
    b->names = NULL;
    return FX_OK;
}

static void judge(const char *path, const struct builder *b, struct fx_kallsyms *k)
{
    if (k->reason[0])
        return;
    if (b->nraws == 0)
        snprintf(k->reason, sizeof(k->reason), "kernel symbols unavailable: %s has no text symbol",
                 path);
    else if (b->zero == b->nraws)
        snprintf(
                k->reason, sizeof(k->reason),
                "kernel symbols unavailable: every address in %s reads 0 (kernel.kptr_restrict hides them: needs CAP_SYSLOG, or kptr_restrict=0)",
                path);
}

int fx_kallsyms_read(const char *path, struct fx_kallsyms **out)
{
    *out = NULL;
    struct fx_kallsyms *k = fx_calloc(1, sizeof(*k));
    struct builder b = {0};
    int rc = k ? push_name(&b, "", 0, &(size_t){0}) : FX_ENOMEM; /* offset 0: the "" module */
    if (rc == FX_OK)
        rc = read_all(path, &b, k);
    if (rc == FX_OK) {
        judge(path, &b, k);
        if (k->reason[0])
            b.nraws = 0; /* an unusable table is empty, not half-filled */
        rc = freeze(&b, k);
    }
    fx_free(b.raws);
    fx_free(b.names);
    if (rc != FX_OK) {
        fx_kallsyms_free(k);
        return rc;
    }
    *out = k;
    return FX_OK;
}

const struct fx_kallsyms_sym *fx_kallsyms_lookup(const struct fx_kallsyms *k, uint64_t addr)
{
    size_t lo = 0, hi = k->count; /* first symbol above addr, in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct fx_kallsyms_sym *s = &k->syms[lo - 1];
    while (s > k->syms && s[-1].addr == s->addr)
        s--; /* the first at that address: the global one */
    return addr - s->addr <= FX_KALLSYMS_MAX_SPAN ? s : NULL;
}

void fx_kallsyms_free(struct fx_kallsyms *k)
{
    if (!k)
        return;
    if (k->map != NULL) {
        munmap(k->map, k->map_bytes);
    } else {
        fx_free((void *)k->syms);
        fx_free((void *)k->names);
    }
    fx_free(k);
}
