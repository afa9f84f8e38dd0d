/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's symbols kept across JVM starts (include/fx_kallsyms.h, issue 31): the key of the
 * running kernel (boot id, modules, the first kallsyms line as this user reads it), the file (a
 * header with the key and the sizes, the symbols as address and name offsets, the names arena)
 * and the checks a file passes before its names reach a profile. Not signal-safe. */
#include "fx_kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fx_alloc.h"
#include "fx_cache_dir.h"
#include "fx_lines.h"

#define MAGIC      0x314d59534b5846ull /* "FXKSYM1" */
#define VERSION    1u
#define MAX_SYMS   (16u << 20) /* a kernel has ~10^5 text symbols; more is a corrupt file */
#define MAX_NAMES  (512u << 20)
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

struct header {
    uint64_t magic;
    uint32_t version, hdr_size;
    struct fx_kallsyms_key key;
    uint64_t count, names_bytes;
};

/* A symbol as kept: the table's own (struct fx_kallsyms_sym), so a mapped file is the table. */
struct entry {
    uint64_t addr;
    uint32_t name, module; /* offsets into the names arena */
};
_Static_assert(sizeof(struct entry) == sizeof(struct fx_kallsyms_sym) &&
                       offsetof(struct entry, name) == offsetof(struct fx_kallsyms_sym, name) &&
                       offsetof(struct entry, module) == offsetof(struct fx_kallsyms_sym, module),
               "a kept symbol is a table symbol");
_Static_assert(sizeof(struct header) % 8 == 0, "the symbols after the header stay aligned");

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

/* The first line of kallsyms: "ADDR TYPE NAME". */
static int first_line(const char *path, struct fx_kallsyms_key *key, struct fx_errbuf *eb)
{
    FILE *f = fopen(path, "re");
    char line[256];
    bool got = f != NULL && fgets(line, sizeof(line), f) != NULL;
    if (f != NULL)
        fclose(f);
    char *end, *name;
    if (!got) {
        fx_errbuf_set(eb, "%s: unreadable", path);
        return FX_ENOTFOUND;
    }
    key->first_addr = strtoull(line, &end, 16);
    if (end == line || end[0] != ' ' || end[1] == '\0' || end[2] != ' ') {
        fx_errbuf_set(eb, "%s: its first line is not a kallsyms line", path);
        return FX_ENOTFOUND;
    }
    if (key->first_addr == 0) {
        fx_errbuf_set(eb, "%s: addresses hidden from this user (kptr_restrict)", path);
        return FX_ENOTFOUND;
    }
    name = end + 3;
    name[strcspn(name, "\t\n")] = '\0';
    snprintf(key->first_name, sizeof(key->first_name), "%s", name);
    return FX_OK;
}

/* The hash of /proc/modules' lines "NAME SIZE REFS DEPS STATE ADDR[ TAINTS]" without REFS and
 * DEPS, which move while a module is used: a module loaded, unloaded or moved changes it. */
static int modules_hash(const char *path, uint64_t *out, struct fx_errbuf *eb)
{
    *out = FNV_OFFSET;
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return FX_OK; /* a kernel without modules */
    struct fx_lines in;
    if (fx_lines_open(&in, path, eb) != FX_OK)
        return FX_ENOTFOUND;
    char *line;
    size_t len;
    int rc;
    while ((rc = fx_lines_next(&in, &line, &len, eb)) == FX_OK) {
        char *field[6], *save = NULL;
        int n = 0;
        for (char *t = strtok_r(line, " ", &save); t != NULL && n < 6;
             t = strtok_r(NULL, " ", &save))
            field[n++] = t;
        for (int i = 0; i < n; i++) {
            if (i != 2 && i != 3)
                *out = fnv(*out, field[i], strlen(field[i]) + 1);
        }
        *out = fnv(*out, "\n", 1);
    }
    fx_lines_close(&in);
    return rc == FX_ENOTFOUND ? FX_OK : FX_ENOTFOUND;
}

int fx_kallsyms_key_read(const char *kallsyms, const char *boot_id, const char *modules,
                         struct fx_kallsyms_key *key, struct fx_errbuf *eb)
{
    memset(key, 0, sizeof(*key)); /* compared whole, padding and string tails included */
    FILE *f = fopen(boot_id, "re");
    bool got = f != NULL && fgets(key->boot, sizeof(key->boot), f) != NULL;
    if (f != NULL)
        fclose(f);
    key->boot[strcspn(key->boot, "\n")] = '\0';
    if (!got || key->boot[0] == '\0') {
        fx_errbuf_set(eb, "%s: unreadable", boot_id);
        return FX_ENOTFOUND;
    }
    int rc = first_line(kallsyms, key, eb);
    return rc == FX_OK ? modules_hash(modules, &key->modules, eb) : rc;
}

/* The checks of a file's body: names NUL-ended from the "" at 0, offsets inside, addresses
 * ascending (equal ones in the order kallsyms gave). NULL when sound, else why not. */
static const char *check(const struct entry *e, uint64_t count, const char *names, uint64_t nb)
{
    if (names[0] != '\0' || names[nb - 1] != '\0')
        return "malformed names";
    for (uint64_t i = 0; i < count; i++) {
        if (e[i].name >= nb || e[i].module >= nb || (i > 0 && e[i].addr < e[i - 1].addr))
            return "malformed symbols";
    }
    return NULL;
}

/* The file at fd (of `bytes`, its header h) mapped as a table: its symbols are in the table's
 * own layout, so nothing is copied; only the pages a check or a lookup reads come in (it was a
 * read of ~5 MB and an array of ~3 MB built from it, most of the drain's start-up on a short
 * run: issue 31). The mapping is private and read-only: a later store replaces the file by a
 * rename, never writes into it. NULL + why on failure. */
static struct fx_kallsyms *body(int fd, const struct header *h, size_t bytes, const char **why)
{
    struct fx_kallsyms *k = fx_calloc(1, sizeof(*k));
    void *map = k != NULL ? mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    *why = NULL;
    if (k == NULL || map == MAP_FAILED) {
        *why = k == NULL ? "no memory" : "it cannot be mapped";
        fx_free(k);
        return NULL;
    }
    const struct entry *e = (const struct entry *)((const char *)map + sizeof(*h));
    const char *names = (const char *)(e + h->count);
    *why = check(e, h->count, names, h->names_bytes);
    if (*why != NULL) {
        munmap(map, bytes);
        fx_free(k);
        return NULL;
    }
    *k = (struct fx_kallsyms){.count = h->count,
                              .syms = (const struct fx_kallsyms_sym *)e,
                              .names = names,
                              .names_bytes = h->names_bytes,
                              .map = map,
                              .map_bytes = bytes};
    return k;
}

int fx_kallsyms_cache_load(const char *file, const struct fx_kallsyms_key *key,
                           struct fx_kallsyms **out, struct fx_errbuf *eb)
{
    *out = NULL;
    struct stat fs;
    int fd, orc = fx_cache_open_or_say(file, &fs, &fd, eb);
    if (orc != FX_OK)
        return orc;
    const char *why = NULL;
    struct header h;
    int rc = FX_EIO;
    if (!fx_cache_io(fd, &h, sizeof(h), false) || h.magic != MAGIC || h.version != VERSION ||
        h.hdr_size != sizeof(h)) {
        why = "not a kernel symbols file of this version";
    } else if (memcmp(&h.key, key, sizeof(*key)) != 0) {
        why = "kept for another boot, module set or address layout";
        rc = FX_ENOTFOUND;
    } else if (h.count == 0 || h.count > MAX_SYMS || h.names_bytes == 0 ||
               h.names_bytes > MAX_NAMES ||
               (uint64_t)fs.st_size != sizeof(h) + h.count * sizeof(struct entry) + h.names_bytes) {
        why = "its size does not match its header";
    } else if ((*out = body(fd, &h, (size_t)fs.st_size, &why)) != NULL) {
        rc = FX_OK;
    }
    close(fd);
    if (rc != FX_OK)
        fx_errbuf_set(eb, "%s: %s", file, why);
    return rc;
}

int fx_kallsyms_cache_store(const char *file, const struct fx_kallsyms_key *key,
                            const struct fx_kallsyms *k, struct fx_errbuf *eb)
{
    if (k->count == 0 || k->reason[0] != '\0' || k->names_bytes == 0 ||
        k->names_bytes > UINT32_MAX) {
        fx_errbuf_set(eb, "%s: an unusable table is not kept", file);
        return FX_EINVAL;
    }
    struct header h = {.magic = MAGIC,
                       .version = VERSION,
                       .hdr_size = sizeof(h),
                       .key = *key,
                       .count = k->count,
                       .names_bytes = k->names_bytes};
    struct fx_cache_part parts[] = {
            {&h, sizeof(h)}, {k->syms, k->count * sizeof(*k->syms)}, {k->names, k->names_bytes}};
    return fx_cache_write(file, parts, 3, eb);
}
