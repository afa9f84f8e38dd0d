/* SPDX-License-Identifier: Apache-2.0 */
/* The registered event sources and dump steps (struct fx_source), in registration order. The
 * table is filled at setup, before any agent thread or callback that reads it exists, and never
 * changes after: readers need no lock. */
#include "base.h"

#define SOURCES_MAX 16

static const struct fx_source *sources[SOURCES_MAX];
static unsigned n_sources;

int fx_sources_add(const struct fx_source *s)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i] == s)
            return FX_OK; /* a second setup (a failed one, then attach) */
    }
    if (n_sources == SOURCES_MAX)
        return FX_EFULL;
    sources[n_sources++] = s;
    return FX_OK;
}

void fx_sources_start(JNIEnv *jni)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->start != NULL)
            sources[i]->start(jni);
    }
}

void fx_sources_stop(void)
{
    for (unsigned i = n_sources; i-- > 0;) {
        if (sources[i]->stop != NULL)
            sources[i]->stop();
    }
}

void fx_sources_drain(JNIEnv *jni, struct fx_profile *p)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->drain != NULL)
            sources[i]->drain(jni, p);
    }
}

void fx_sources_before_dump(JNIEnv *jni, struct fx_profile *p, const struct fx_span *span)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->before_dump != NULL)
            sources[i]->before_dump(jni, p, span);
    }
}

void fx_sources_after_dump(struct fx_profile *p, const char *path, unsigned long long bytes)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->after_dump != NULL)
            sources[i]->after_dump(p, path, bytes);
    }
}

void fx_sources_reset(struct fx_profile *p)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->reset != NULL)
            sources[i]->reset(p);
    }
}

void fx_sources_thread_reaped(struct fx_profile *p, struct fx_thread *t)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->thread_reaped != NULL)
            sources[i]->thread_reaped(p, t);
    }
}

void fx_sources_sample(struct fx_profile *p, struct fx_thread *t, const struct fx_sample_rec *r,
                       uint32_t len, uint32_t track)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->sample != NULL)
            sources[i]->sample(p, t, r, len, track);
    }
}

void fx_sources_thread_ended(struct fx_profile *p, struct fx_thread *t)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->thread_ended != NULL)
            sources[i]->thread_ended(p, t);
    }
}

void fx_sources_idle(void)
{
    for (unsigned i = 0; i < n_sources; i++) {
        if (sources[i]->idle != NULL)
            sources[i]->idle();
    }
}
