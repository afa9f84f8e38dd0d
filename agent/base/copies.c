/* SPDX-License-Identifier: Apache-2.0 */
/* Other copies of libfxagent.so in this process: the same file loaded twice is one image (the
 * dynamic loader dedups by inode), but a copy at another path has globals of its own, so "one
 * agent per JVM" needs a process-wide look. A copy is found by the versioned entries it
 * exports (libfxagent.map): fxagent_loaded_v1 (control/lifecycle.c) and fxagent_forward_v1
 * (control/attach.c). A leaf: it calls nothing else of the agent. */
#include "base.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>

#include "fx_alloc.h"

#define MAX_OBJECTS 512

struct objects {
    char *names[MAX_OBJECTS];
    unsigned n;
    uintptr_t self;
};

/* Names only: dlopen while dl_iterate_phdr holds the loader's lock could deadlock. */
static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct objects *o = data;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0' && info->dlpi_addr != o->self &&
        o->n < MAX_OBJECTS)
        o->names[o->n++] = fx_strdup(info->dlpi_name);
    return 0;
}

bool fx_copies_find(const char *symbol, fx_copies_fn fn, void *arg)
{
    Dl_info me;
    struct objects objs = {.n = 0};
    bool done = false;
    if (dladdr((void *)fx_copies_find, &me) == 0)
        return false;
    objs.self = (uintptr_t)me.dli_fbase;
    dl_iterate_phdr(collect, &objs);
    for (unsigned i = 0; i < objs.n; i++) {
        void *h = done || objs.names[i] == NULL ? NULL
                                                : dlopen(objs.names[i], RTLD_LAZY | RTLD_NOLOAD);
        void *sym = h != NULL ? dlsym(h, symbol) : NULL;
        Dl_info where;
        /* dlsym also searches the object's dependencies: the symbol must be the object's own,
         * and not this image's. */
        if (sym != NULL && dladdr(sym, &where) != 0 && where.dli_fbase != me.dli_fbase)
            done = fn(sym, objs.names[i], arg);
        if (h != NULL)
            dlclose(h);
        fx_free(objs.names[i]);
    }
    return done;
}
