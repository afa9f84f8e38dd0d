/* SPDX-License-Identifier: Apache-2.0 */
/* A dispatch stub's receiver (issue 32, item 3): the class of the object a vtable or itable stub
 * was dispatching on when the sample was taken, as a frame leafward of the stub's frame
 * (`Numbers.avg;vtable stub;java.lang.Integer`, as async-profiler shows it), in the VM
 * category's "Receiver class" subcategory. The handler read the Klass* (receiver.h); it is named
 * here by checked reads (compile_task.c), once per Klass* in the model's generation. A read the
 * handler could not make, or a Klass that does not read back, gives no frame: counted by reason
 * in meta.extra "Receivers under dispatch stubs", never guessed. A class unloaded and its Klass*
 * reused by another class within one generation would keep the first name: unloading is rare in
 * hot dispatch code, and the generation ends with each dump. Model owner only. */
#include "internal.h"

#include <string.h>

#include "compile_task.h"
#include "fx_profile.h"
#include "receiver.h"

#define CACHE 256 /* classes named per generation (direct-mapped, by Klass*) */

static const char *const read_labels[FX_RECV_COUNT] = {
        NULL,
        "not read: heap or object header layout unknown",
        "not read: no registers",
        "not read: receiver register NULL",
        "not read: receiver outside the Java heap",
        "not read: klass word unreadable",
        "not read: klass word NULL or misaligned",
        "not read: mark word holds a monitor or forwarding pointer (compact headers)",
};

static struct {
    uint32_t gen;
    struct {
        uint64_t klass;
        uint32_t gen; /* 0: empty (generations start at 1) */
        fx_frame_id frame;
    } cache[CACHE];
    uint64_t samples, reads[FX_RECV_COUNT], named, unnamed, bad_records;
} rv;

/* The frame of a Klass*: named once per generation. */
static int class_frame(struct fx_profile *p, uint64_t klass, fx_frame_id *out, bool *named)
{
    size_t i = (size_t)((klass >> 3) * 2654435761u) % CACHE;
    if (rv.cache[i].gen == rv.gen && rv.cache[i].klass == klass) {
        *out = rv.cache[i].frame;
        return FX_OK;
    }
    char name[400];
    *named = fx_compile_task_class_name(klass, name, sizeof(name));
    if (!*named)
        return FX_OK;
    int rc = fx_profile_label_frame(p, name, FX_CAT_VM, FX_VM_RECEIVER, out);
    if (rc == FX_OK) {
        rv.cache[i].klass = klass;
        rv.cache[i].gen = rv.gen;
        rv.cache[i].frame = *out;
    }
    return rc;
}

int fx_receivers_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                      fx_stack_id *stack)
{
    if (!r->receiver)
        return FX_OK;
    rv.samples++;
    size_t at = fx_rec_receiver_at(r, len);
    uint64_t w = 0;
    if (at != 0)
        memcpy(&w, (const uint8_t *)r + at, sizeof(w));
    if (at == 0 || w == 0 || (w < FX_RECV_KLASS_MIN && w >= FX_RECV_COUNT)) {
        rv.bad_records++;
        return FX_OK;
    }
    if (w < FX_RECV_KLASS_MIN) {
        rv.reads[w]++;
        return FX_OK;
    }
    uint32_t g = fx_profile_generation(p) + 1;
    rv.gen = g;
    fx_frame_id f;
    bool named = true;
    int rc = class_frame(p, w, &f, &named);
    if (rc != FX_OK || !named) {
        rv.unnamed += !named;
        return rc;
    }
    rv.named++;
    return fx_profile_stack(p, *stack, f, stack);
}

void fx_receivers_report(struct fx_profile *p)
{
    const char *g = "Receivers under dispatch stubs";
    if (rv.samples == 0)
        return;
    fx_profile_extra_int(p, g, "samples in a vtable/itable stub", (int64_t)rv.samples);
    fx_profile_extra_int(p, g, "receivers named (a frame under the stub)", (int64_t)rv.named);
    for (int i = 1; i < FX_RECV_COUNT; i++)
        fx_profile_extra_loss(p, g, read_labels[i], (int64_t)rv.reads[i]);
    fx_profile_extra_loss(p, g, "not named: the Klass did not read back", (int64_t)rv.unnamed);
    fx_profile_extra_loss(p, g, "malformed records", (int64_t)rv.bad_records);
}

void fx_receivers_reset(void)
{
    memset(rv.reads, 0, sizeof(rv.reads));
    rv.samples = rv.named = rv.unnamed = rv.bad_records = 0;
}
