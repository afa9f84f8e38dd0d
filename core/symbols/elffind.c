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

static int find_in(Elf *e, const char *name, uint64_t *vaddr)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
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
