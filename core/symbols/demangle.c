/* SPDX-License-Identifier: Apache-2.0 */
/* C++ demangling (include/fx_demangle.h) by libstdc++'s __cxa_demangle, the demangler of g++
 * and c++filt. Only "_Z" names are tried: a C name that happens to parse as a mangled type
 * ("i", "f") must stay as it is. The result moves into fx_malloc memory, so callers free every
 * string of ours the same way. */
#include "fx_demangle.h"

#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"

/* Declared here because cxxabi.h is C++ only; the function has C linkage in libstdc++ (the
 * core links -lstdc++, CMakeLists.txt). */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *fx_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    int status = -1;
    char *plain = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0 || !plain) {
        free(plain);
        return NULL;
    }
    char *ours = fx_strdup(plain);
    free(plain); /* __cxa_demangle's memory is malloc's, not ours */
    return ours;
}
