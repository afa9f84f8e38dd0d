/* SPDX-License-Identifier: Apache-2.0 */
/* A JVM type signature as Java source names it: "[B" -> "byte[]", "Ljava/lang/String;" ->
 * "java.lang.String", "[[Ljava/lang/Object;" -> "java.lang.Object[][]" (the leaf frame of an
 * allocation, issue 17). JVM-free, no allocation. */
#ifndef FX_JTYPE_H
#define FX_JTYPE_H

#include <stddef.h>

/* Writes the name of the len bytes at sig into out (cap bytes, NUL-terminated) and returns its
 * length; FX_EINVAL for what is not a field signature, FX_ERANGE when out is too small. */
int fx_jtype_name(const char *sig, size_t len, char *out, size_t cap);

#endif
