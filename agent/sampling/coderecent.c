/* SPDX-License-Identifier: Apache-2.0 */
/* The writer side of the recent code table (coderecent.h, issue 31): the append the JVMTI
 * callbacks make under the code map's lock, the table kept for reuse, and their counts (codemap.c
 * owns which table is written, published and retired, and calls all of these under its lock or
 * on the drain). Not in the signal path: the handler only reads. */
#include "internal.h"

#include "fx_alloc.h"

static struct {
    struct fx_code_recent *spare; /* no handler reads it: the next publish's */
    uint64_t adds, full, halves;
} rc;

struct fx_code_recent *fx_coderecent_take(void)
{
    struct fx_code_recent *c = rc.spare != NULL ? rc.spare : fx_malloc(sizeof(*c));
    rc.spare = NULL;
    if (c != NULL)
        c->n = 0;
    return c;
}

void fx_coderecent_recycle(struct fx_code_recent *c)
{
    if (rc.spare == NULL)
        rc.spare = c;
    else
        fx_free(c);
}

void fx_coderecent_idle(void)
{
    fx_free(rc.spare);
    rc.spare = NULL;
}

uint32_t fx_coderecent_add(struct fx_code_recent *c, const struct fx_code_range *r, bool removed)
{
    if (c == NULL)
        return 0; /* before the first table: the log only, as it always was */
    uint32_t n = __atomic_load_n(&c->n, __ATOMIC_RELAXED); /* only writers, under one lock */
    if (n >= FX_RECENT_CAP) {
        rc.full++;
        return 0;
    }
    c->e[n] = (struct fx_code_recent_entry){.r = *r, .removed = removed};
    __atomic_store_n(&c->n, n + 1, __ATOMIC_RELEASE); /* the entry before the count */
    rc.adds++;
    rc.halves += n + 1 == FX_RECENT_MERGE;
    return n + 1;
}

void fx_coderecent_report(struct fx_profile *p, const char *g)
{
    fx_profile_extra_detail(p, g, "code changes the handler saw at once (recent table)",
                            (int64_t)rc.adds);
    fx_profile_extra_detail(p, g, "code changes past a full recent table (at the next table)",
                            (int64_t)rc.full);
    fx_profile_extra_detail(p, g, "recent tables half full (the drain hurried to fold them)",
                            (int64_t)rc.halves);
}
