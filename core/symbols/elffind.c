/* SPDX-License-Identifier: Apache-2.0 */
/* One function or data symbol's address by name in an ELF file's .symtab (issue 18: the original
 * Unsafe.park of a JVM the agent attached to late, HotSpot's local symbol Unsafe_Park; issue 22:
 * the flag DoJVMTIVirtualThreadTransitions). A single read of the file's symbol table, off every
 * hot path.
 * Tests: unit.elfsym. */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "fx_elfsym.h"

/* The 64-bit table as it lies in memory (libelf's in-memory Elf64_Sym), names compared in
 * place: the first byte before the rest, so libjvm's ~3 MB of names are barely touched (the
 * GElf copy of each of its 70,000 symbols and elf_strptr's checks took ~2 ms at VMInit, in the
 * application's main thread; issue 31). FX_EUNSUPPORTED when the table is not such. */
static int find_raw(Elf *e, Elf_Data *d, const GElf_Shdr *sh, const char *name, uint64_t *vaddr)
{
    Elf_Scn *ss = elf_getscn(e, sh->sh_link);
    Elf_Data *sd = ss != NULL ? elf_getdata(ss, NULL) : NULL;
    if (sd == NULL || sd->d_buf == NULL || d->d_buf == NULL || gelf_getclass(e) != ELFCLASS64 ||
        d->d_type != ELF_T_SYM || sh->sh_entsize != sizeof(Elf64_Sym))
        return FX_EUNSUPPORTED;
    const Elf64_Sym *y = d->d_buf;
    const char *str = sd->d_buf;
    size_t n = d->d_size / sizeof(*y), room = sd->d_size, len = strlen(name);
    for (size_t i = 0; i < n; i++) {
        int type = ELF64_ST_TYPE(y[i].st_info);
        size_t at = y[i].st_name;
        if ((type != STT_FUNC && type != STT_OBJECT) || y[i].st_value == 0 || at >= room ||
            room - at <= len || str[at] != name[0] || memcmp(str + at, name, len + 1) != 0)
            continue;
        *vaddr = y[i].st_value;
        return FX_OK;
    }
    return FX_ENOTFOUND;
}

static int find_in(Elf *e, const char *name, uint64_t *vaddr)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        int rc = d != NULL ? find_raw(e, d, &sh, name, vaddr) : FX_ENOTFOUND;
        if (rc != FX_EUNSUPPORTED)
            return rc;
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (gelf_getsym(d, (int)i, &s) == NULL ||
                (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_OBJECT) ||
                s.st_value == 0)
                continue;
            const char *sn = elf_strptr(e, sh.sh_link, s.st_name);
            if (sn != NULL && strcmp(sn, name) == 0) {
                *vaddr = s.st_value;
                return FX_OK;
            }
        }
    }
    return FX_ENOTFOUND;
}

int fx_elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return FX_EUNSUPPORTED;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FX_EIO;
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL); /* no copy of the file in the heap */
    int rc = e != NULL ? find_in(e, name, vaddr) : FX_EINVAL;
    if (e != NULL)
        elf_end(e);
    close(fd);
    return rc;
}
