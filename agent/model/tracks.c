/* SPDX-License-Identifier: Apache-2.0 */
/* Registered threads as the model's threads (tracks): in cpu and itimer modes every registered
 * thread is a track from the drain pass after its registration, in wall mode a thread enters
 * the model with its first sample or marker; a track takes the Java thread's name as it is when
 * asked (thread pools rename their threads after they start). Model owner only. */
#include "internal.h"

#include <string.h>

/* A CPU-time signal needs CPU time: a thread that did not run has no sample, and an empty,
 * named track says so (rather than the thread missing from the profile, as if not registered).
 * The wall sampler signals every registered thread each tick, so there a thread without a
 * sample lived less than one interval (or lost its samples, which Losses counts): its track
 * would say nothing more, and a thread-per-task pool would fill the track list with them. */
bool fx_tracks_of_every_thread(void)
{
    return fx_opt()->mode != FX_MODE_WALL;
}

int fx_tracks_index(struct fx_profile *p, struct fx_thread *t, fx_thread_id *out)
{
    if (!t->in_profile) {
        if (fx_profile_thread_add(p, t->name, t->tid, t->start_ns, &t->profile_index) != FX_OK)
            return FX_ENOMEM;
        if (strcmp(t->name, "main") == 0)
            fx_profile_set_main_thread(p, t->profile_index);
        t->in_profile = true;
    }
    *out = t->profile_index;
    return FX_OK;
}

void fx_tracks_release(struct fx_profile *p, struct fx_thread *t)
{
    if (t->in_profile && p != NULL)
        fx_profile_thread_release(p, t->profile_index);
    t->in_profile = false;
}

void fx_tracks_refresh_name(JNIEnv *jni, struct fx_profile *p, struct fx_thread *t)
{
    jvmtiEnv *jvmti = fx_jvmti();
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof(info));
    if (!t->in_profile || t->ref == NULL ||
        (*jvmti)->GetThreadInfo(jvmti, t->ref, &info) != JVMTI_ERROR_NONE)
        return;
    if (info.name != NULL && strcmp(info.name, t->name) != 0)
        fx_profile_thread_set_name(p, t->profile_index, info.name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    if (info.thread_group != NULL)
        (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader != NULL)
        (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

struct fx_thread *fx_tracks_thread_of_tid(pid_t tid)
{
    struct fx_thread *ended = NULL;
    for (struct fx_thread *t = fx_threads_head(); t != NULL; t = t->next) {
        if (t->tid != tid || t->native_only)
            continue;
        if (!t->finished)
            return t;
        if (ended == NULL)
            ended = t;
    }
    return ended;
}

int fx_tracks_of_tid(struct fx_profile *p, pid_t tid, fx_thread_id *out)
{
    struct fx_thread *t = fx_tracks_thread_of_tid(tid);
    return t != NULL ? fx_tracks_index(p, t, out) : FX_ENOTFOUND;
}
