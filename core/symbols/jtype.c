/* SPDX-License-Identifier: Apache-2.0 */
/* JVM field signatures to Java type names (include/fx_jtype.h).
 * Tests: unit.profile_allocs. */
#include "fx_jtype.h"

#include <string.h>

#include "fx_err.h"

static const char *primitive(char c)
{
    switch (c) {
    case 'Z':
        return "boolean";
    case 'B':
        return "byte";
    case 'C':
        return "char";
    case 'S':
        return "short";
    case 'I':
        return "int";
    case 'J':
        return "long";
    case 'F':
        return "float";
    case 'D':
        return "double";
    default:
        return NULL;
    }
}

int fx_jtype_name(const char *sig, size_t len, char *out, size_t cap)
{
    size_t dims = 0;
    while (dims < len && sig[dims] == '[')
        dims++;
    const char *base = sig + dims;
    size_t blen = len - dims, n;
    const char *prim = blen == 1 ? primitive(base[0]) : NULL;
    if (prim) {
        n = strlen(prim);
    } else if (blen >= 3 && base[0] == 'L' && base[blen - 1] == ';') {
        base++;
        n = blen - 2;
    } else {
        return FX_EINVAL;
    }
    if (n + 2 * dims + 1 > cap)
        return FX_ERANGE;
    for (size_t i = 0; i < n; i++) {
        char c = prim ? prim[i] : base[i];
        out[i] = c == '/' ? '.' : c;
    }
    for (size_t d = 0; d < dims; d++)
        memcpy(out + n + 2 * d, "[]", 2);
    out[n + 2 * dims] = '\0';
    return (int)(n + 2 * dims);
}
