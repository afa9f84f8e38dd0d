/* SPDX-License-Identifier: Apache-2.0 */
/* C++ names of native frames: a mangled Itanium-ABI name ("_ZN3fx4burnEi") to its readable
 * form ("fx::burn(int)") through libstdc++'s __cxa_demangle (docs/DESIGN-NOTES.md "Native
 * symbols" says why that one). Not signal-safe: the demangler allocates. */
#ifndef FX_DEMANGLE_H
#define FX_DEMANGLE_H

/* A new string from fx_malloc (fx_free it) with the demangled name, or NULL when name is not a
 * mangled C++ name, the demangler rejects it, or memory runs out: the caller keeps the name as
 * it is, which is what a C symbol or an unknown scheme should show. */
char *fx_demangle(const char *name);

#endif
