/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers of the model's unit tests (unit.profile_window, unit.profile_slots): a label
 * stack, a thread, and the profile written to memory, each asserting that the call succeeded. */
#ifndef UNIT_PROFILE_H
#define UNIT_PROFILE_H

#include <check.h>

#include "fx_err.h"
#include "fx_ff_writer.h"
#include "fx_profile.h"
#include "fx_sink.h"

static inline fx_stack_id label(struct fx_profile *p, const char *name)
{
    fx_stack_id s = FX_STACK_NONE;
    ck_assert_int_eq(fx_profile_label_stack(p, name, FX_CAT_JAVA, &s), FX_OK);
    return s;
}

static inline fx_thread_id thread(struct fx_profile *p, const char *name, int64_t tid)
{
    fx_thread_id t = {FX_NONE_ID};
    ck_assert_int_eq(fx_profile_thread_add(p, name, tid, 0, &t), FX_OK);
    return t;
}

/* The profile as fx_ff_write writes it; the caller frees the bytes. */
static inline char *json_of(const struct fx_profile *p, size_t *len)
{
    struct fx_membuf mb = {0};
    struct fx_errbuf eb = {{0}};
    ck_assert_int_eq(fx_ff_write(p, fx_membuf_sink(&mb), &eb), FX_OK);
    *len = mb.len;
    return mb.data;
}

#endif
