/* SPDX-License-Identifier: Apache-2.0 */
/* loop=: a profile every period, written by the "fxagent loop" thread from a snapshot that
 * starts a new period. Deadlines are start + k * loop (base/periodic.c): a slow dump does not
 * shift the periods that follow it. */
#include "control.h"

static void loop_dump(JNIEnv *jni, void *arg)
{
    (void)jni, (void)arg;
    struct fx_dump_result res;
    struct fx_errbuf eb = {{0}};
    if (fx_output_snapshot(fx_opt()->file, true, true, &res, &eb) != FX_OK) {
        fx_log("loop: no profile written for this period: %s", eb.msg);
        return;
    }
    char line[1200];
    fx_output_describe(&res, line, sizeof(line));
    if (res.file.fell_back || !fx_opt()->quiet)
        fx_log("loop: %s", line);
}

static struct fx_periodic loop = {.name = "fxagent loop", .tick = loop_dump};

void fx_loop_start(JNIEnv *jni)
{
    if (fx_opt()->loop_ns == 0)
        return;
    loop.period_ns = fx_opt()->loop_ns;
    if (fx_periodic_start(jni, &loop) != FX_OK)
        fx_log("loop: the loop thread could not start: no periodic profiles");
}

void fx_loop_stop(void)
{
    fx_periodic_stop(&loop);
}
