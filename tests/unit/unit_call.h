/* SPDX-License-Identifier: Apache-2.0 */
/* The recovery rules' unit tests (unit.recover_icstub, unit.recover_mhintr): a compiled
 * caller's call rel32 written into a test's code buffer. */
#ifndef UNIT_CALL_H
#define UNIT_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* call rel32 at code + at to code + target; returns the return address */
static inline uintptr_t unit_call_rel32(uint8_t *code, size_t at, size_t target)
{
    int32_t rel = (int32_t)target - (int32_t)(at + 5);
    code[at] = 0xE8;
    memcpy(code + at + 1, &rel, 4);
    return (uintptr_t)code + at + 5;
}

#endif
