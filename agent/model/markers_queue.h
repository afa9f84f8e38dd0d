/* SPDX-License-Identifier: Apache-2.0 */
/* Private to agent/model: the marker queues between their producers (markers_queue.c: JVMTI
 * callbacks, compiler threads, the fxagent.Markers natives) and their consumer, the model's
 * owner (markers.c). Each is an fx_evq (fx_evq.h): made at a start with markers, freed when
 * the agent is stopped and idle. */
#ifndef FX_MARKERS_QUEUE_H
#define FX_MARKERS_QUEUE_H

#include "fx_evq.h"
#include "internal.h"

#define GC_QUEUE_BYTES   (16u * 1024)
#define JIT_QUEUE_BYTES  (256u * 1024)
#define USER_QUEUE_BYTES (512u * 1024)
#define USER_NAME_MAX    255  /* bytes of a marker name kept; longer ones are cut */
#define USER_TEXT_MAX    1023 /* bytes of a marker text kept */
#define OPEN_MAX         4096 /* user intervals begun and not yet ended */
#define GC_PENDING_MAX   64   /* pauses waiting for the MXBean counts */
#define GC_WAIT_CYCLES   3    /* drain cycles a pause waits for them */

enum gc_kind {
    GC_START = 1,
    GC_FINISH = 2
};

struct gc_rec {
    int64_t t;
    uint32_t kind;
    uint32_t pad;
};

struct jit_rec {
    int64_t t;
    jmethodID method;
    int32_t code_size;
    int32_t inlined;
    int32_t tid; /* the compiler thread; HotSpot hides those from JVMTI, so usually unknown */
    int32_t pad;
};

enum user_kind {
    USER_MARK = 1,
    USER_BEGIN = 2,
    USER_END = 3
};

struct user_rec {
    int64_t t;
    int64_t handle;
    int32_t tid;
    uint16_t name_len, text_len;
    uint8_t kind;
    uint8_t pad[7];
    char bytes[]; /* name, then text */
};

/* Producer side: shared by every thread, atomics and the queues' locks. */
struct fx_marker_queues {
    struct fx_evq gc, jit, user;
    int64_t next_handle; /* atomic */
};
extern struct fx_marker_queues fx_mq;

bool fx_markers_on(void);
/* A start with markers: the queues and the GC events; a stop: the GC events off; stopped and
 * idle: the queues freed. */
int fx_markers_setup(void);
void fx_markers_stop_events(void);
void fx_markers_free_queues(void);

#endif
