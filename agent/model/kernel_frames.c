/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel frames of a sample in the model (issue 16, kstack=yes): the kernel addresses the
 * signal handler copied from the perf callchain (after the native ones, see struct
 * fx_sample_rec) become Kernel frames on top of the stack (leaf side), named from
 * /proc/kallsyms (fx_kallsyms, read once when the first one is met, kept across JVM starts in
 * the cache folder). The subcategory is the
 * kernel entry the chain went through: a system call, a page fault, else Other. Where
 * kallsyms cannot name them (kptr_restrict, unreadable) one "[kernel]" frame stands for the
 * kernel part. Owns the "Kernel stacks" figures of meta.extra, including why a profile has no
 * kernel frames. Model owner only. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_cache_dir.h"
#include "fx_clock.h"
#include "fx_kallsyms.h"
#include "fx_profile.h"

static const char *const state_labels[FX_KREC_COUNT] = {
        "not asked (no perf ring)",
        "taken",
        "taken, cut at 48 frames",
        "no record for the signal in the perf ring",
        "perf ring ran full (the signal's record may be lost)",
        "malformed perf ring (nothing taken)",
};

static struct {
    struct fx_kallsyms *ks;
    bool ks_tried, ks_cached;
    int64_t ks_ns;            /* CPU time reading the table, from the cache or kallsyms */
    char ks_cache_error[256]; /* the last cache failure, "" none */
    uint32_t *funcs; /* per kallsyms symbol: its func id + 1, 0 unknown (for generation gen) */
    uint32_t gen;
    uint64_t states[FX_KREC_COUNT], with_frames, frames, unnamed, bad_records, sigreturn;
    uint64_t by_sub[3];
} kf;

/* The table from the cache folder when it was kept for this kernel (include/fx_kallsyms.h),
 * else from /proc/kallsyms (~50 ms of kernel formatting), then kept for the next JVM. */
static void read_symbols(void)
{
    int64_t t0 = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    char file[1024];
    struct fx_kallsyms_key key;
    struct fx_errbuf eb = {{0}};
    bool keep = fx_cache_dir(getenv("FXAGENT_CACHE"), getenv("XDG_CACHE_HOME"), getenv("HOME"),
                             "kallsyms", file, sizeof(file)) &&
                fx_kallsyms_key_read("/proc/kallsyms", "/proc/sys/kernel/random/boot_id",
                                     "/proc/modules", &key, &eb) == FX_OK;
    int rc = keep ? fx_kallsyms_cache_load(file, &key, &kf.ks, &eb) : FX_ENOTFOUND;
    kf.ks_cached = rc == FX_OK;
    if (rc == FX_EIO)
        snprintf(kf.ks_cache_error, sizeof(kf.ks_cache_error), "%s", eb.msg);
    if (!kf.ks_cached) {
        if (fx_kallsyms_read("/proc/kallsyms", &kf.ks) != FX_OK)
            kf.ks = NULL;
        else if (keep && kf.ks->count > 0 &&
                 fx_kallsyms_cache_store(file, &key, kf.ks, &eb) != FX_OK)
            snprintf(kf.ks_cache_error, sizeof(kf.ks_cache_error), "%s", eb.msg);
    }
    kf.ks_ns = fx_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static const struct fx_kallsyms *symbols(void)
{
    if (!kf.ks_tried) {
        kf.ks_tried = true;
        read_symbols();
    }
    return kf.ks != NULL && kf.ks->count > 0 ? kf.ks : NULL;
}

static int kernel_func(struct fx_profile *p, const char *name, const char *module, fx_func_id *out)
{
    fx_str_id n, res;
    char resource[80];
    snprintf(resource, sizeof(resource), "[%s]",
             module != NULL && module[0] != '\0' ? module : "kernel.kallsyms");
    int rc = fx_profile_cstring(p, name, &n);
    if (rc == FX_OK)
        rc = fx_profile_cstring(p, resource, &res);
    struct fx_func_key k = {
            .name = n, .resource = res, .source = FX_STR_NONE, .line = -1, .is_java = false};
    return rc == FX_OK ? fx_profile_func(p, &k, out) : rc;
}

/* The func of symbol s, cached per symbol for the model's generation. */
static int symbol_func(struct fx_profile *p, const struct fx_kallsyms *ks,
                       const struct fx_kallsyms_sym *s, fx_func_id *out)
{
    if (kf.funcs != NULL && kf.gen != fx_profile_generation(p))
        memset(kf.funcs, 0, ks->count * sizeof(*kf.funcs));
    kf.gen = fx_profile_generation(p);
    if (kf.funcs == NULL)
        kf.funcs = fx_calloc(ks->count, sizeof(*kf.funcs));
    size_t i = (size_t)(s - ks->syms);
    if (kf.funcs != NULL && kf.funcs[i] != 0) {
        out->i = kf.funcs[i] - 1;
        return FX_OK;
    }
    int rc = kernel_func(p, fx_kallsyms_name(ks, s), fx_kallsyms_module(ks, s), out);
    if (rc == FX_OK && kf.funcs != NULL)
        kf.funcs[i] = out->i + 1;
    return rc;
}

static bool is_syscall_entry(const char *n)
{
    return strncmp(n, "entry_SYSCALL", 13) == 0 || strcmp(n, "do_syscall_64") == 0 ||
           strncmp(n, "do_fast_syscall", 15) == 0 || strcmp(n, "do_int80_syscall_32") == 0;
}

static bool is_page_fault_entry(const char *n)
{
    return strcmp(n, "asm_exc_page_fault") == 0 || strcmp(n, "exc_page_fault") == 0 ||
           strcmp(n, "do_user_addr_fault") == 0;
}

/* The symbols of a chain (leaf first; return addresses looked up one byte back) into syms;
 * the subcategory is the entry nearest the leaf (a fault inside a system call is a fault). */
static uint8_t name_chain(const struct fx_kallsyms *ks, const uint64_t *ips, uint32_t n,
                          const struct fx_kallsyms_sym **syms, bool *sigreturn)
{
    uint8_t sub = FX_KERNEL_OTHER;
    *sigreturn = false;
    for (uint32_t i = 0; i < n; i++) {
        syms[i] = ks != NULL ? fx_kallsyms_lookup(ks, i == 0 ? ips[0] : ips[i] - 1) : NULL;
        const char *name = syms[i] != NULL ? fx_kallsyms_name(ks, syms[i]) : "";
        if (sub == FX_KERNEL_OTHER && is_page_fault_entry(name))
            sub = FX_KERNEL_PAGE_FAULT;
        else if (sub == FX_KERNEL_OTHER && is_syscall_entry(name))
            sub = FX_KERNEL_SYSCALL;
        /* An overflow in the return from our own handler (rt_sigreturn after its last clock
         * read): the user stack of that moment is the handler's, not the sample's. */
        *sigreturn = *sigreturn || strstr(name, "sys_rt_sigreturn") != NULL;
    }
    return sub;
}

static int push_frame(struct fx_profile *p, fx_func_id f, uint8_t cat, uint8_t sub,
                      fx_stack_id *stack)
{
    struct fx_frame_key fk = {.func = f, .line = -1, .category = cat, .subcategory = sub};
    fx_frame_id fr;
    int rc = fx_profile_frame(p, &fk, &fr);
    return rc == FX_OK ? fx_profile_stack(p, *stack, fr, stack) : rc;
}

int fx_kernel_frames_push(struct fx_profile *p, const struct fx_sample_rec *r, uint32_t len,
                          uint8_t cat, uint8_t cat_sub, fx_stack_id *stack)
{
    if (r->kernel == FX_KREC_OFF) {
        kf.states[FX_KREC_OFF]++;
        return FX_OK;
    }
    size_t at = fx_rec_kernel_at(r);
    uint64_t n = 0;
    if (r->kernel >= FX_KREC_COUNT || at + sizeof(n) > len) {
        kf.bad_records++;
        return FX_OK;
    }
    memcpy(&n, (const uint8_t *)r + at, sizeof(n));
    if (n > FX_KERNEL_MAX || at + (1 + n) * sizeof(uint64_t) > len) {
        kf.bad_records++;
        return FX_OK;
    }
    kf.states[r->kernel]++;
    if (n == 0)
        return FX_OK;
    uint64_t ips[FX_KERNEL_MAX];
    const struct fx_kallsyms_sym *syms[FX_KERNEL_MAX];
    memcpy(ips, (const uint8_t *)r + at + sizeof(n), n * sizeof(uint64_t));
    const struct fx_kallsyms *ks = symbols();
    bool sigreturn;
    uint8_t sub = name_chain(ks, ips, (uint32_t)n, syms, &sigreturn);
    if (sigreturn) {
        kf.sigreturn++;
        return FX_OK;
    }
    kf.with_frames++;
    kf.frames += n;
    kf.by_sub[sub]++;
    int rc = FX_OK;
    bool unnamed_on_top = false; /* one "[kernel]" frame for a run of unnamed addresses */
    for (uint32_t i = (uint32_t)n; i-- > 0 && rc == FX_OK;) {
        fx_func_id f;
        if (syms[i] == NULL) {
            kf.unnamed++;
            if (unnamed_on_top)
                continue;
            unnamed_on_top = true;
            rc = kernel_func(p, "[kernel]", NULL, &f);
        } else {
            unnamed_on_top = false;
            rc = symbol_func(p, ks, syms[i], &f);
        }
        if (rc == FX_OK)
            rc = cat != 0 ? push_frame(p, f, cat, cat_sub, stack)
                          : push_frame(p, f, FX_CAT_KERNEL, sub, stack);
    }
    return rc;
}

/* True, with one line in buf, when this recording's samples cannot carry kernel frames. */
static bool why_not(char *buf, size_t cap)
{
    const struct fx_options *o = fx_opt();
    struct fx_kstack_facts k;
    struct fx_threads_stats st;
    char engine[256];
    fx_kstack_facts(&k);
    fx_threads_stats(&st);
    if (o->kstack != FX_KSTACK_YES || o->cstack == FX_CSTACK_NO)
        snprintf(buf, cap, "turned off (%s)",
                 o->cstack == FX_CSTACK_NO ? "cstack=no" : "kstack=no");
    else if (o->mode == FX_MODE_WALL) /* docs/DESIGN-NOTES.md, "Kernel frames" */
        snprintf(buf, cap,
                 "mode=wall: its signals come from the sampler's tgkill, which carries no "
                 "callchain, and a thread blocked in a system call takes no perf sample; kernel "
                 "frames come with the perf engine of mode=cpu");
    else if (o->mode != FX_MODE_CPU)
        snprintf(buf, cap,
                 "mode=itimer: setitimer's signal carries no callchain; kernel frames "
                 "come with the perf engine of mode=cpu");
    else if (k.excluded)
        snprintf(buf, cap,
                 "perf_event_paranoid forced exclude_kernel: samples are taken in user "
                 "mode only, so there is no kernel callchain");
    else if (k.open_errno != 0)
        snprintf(buf, cap, "perf_event_open with a callchain failed: %s", strerror(k.open_errno));
    else if (st.perf == 0 && st.timer > 0 && o->engine == FX_ENGINE_AUTO)
        snprintf(buf, cap,
                 "no thread ran long enough for its perf event (two samples within a second; "
                 "threads start on timer_create, which has no callchain)");
    else if (st.perf == 0 && (st.timer > 0 || o->engine == FX_ENGINE_TIMER)) {
        fx_engine_name(engine, sizeof(engine));
        snprintf(buf, cap, "the timer engine is used, which has no callchain (%s)", engine);
    } else if (k.mapped == 0 && k.map_fail > 0)
        snprintf(buf, cap, "no perf ring could be mapped: %s", strerror(k.map_errno));
    else
        return false;
    return true;
}

/* Stopped: the symbol table (some MiB for a kernel's ~100k text symbols) and its func cache are
 * freed, so a stopped agent keeps no RSS for them; the next start reads kallsyms again when a
 * kernel frame first needs a name. */
void fx_kernel_frames_idle(void)
{
    fx_free(kf.funcs);
    kf.funcs = NULL;
    if (kf.ks != NULL)
        fx_kallsyms_free(kf.ks);
    kf.ks = NULL;
    kf.ks_tried = kf.ks_cached = false;
    kf.ks_cache_error[0] = '\0';
}

void fx_kernel_frames_report(struct fx_profile *p)
{
    const char *g = "Kernel stacks";
    char why[320];
    bool off = why_not(why, sizeof(why));
    if (!off && symbols() == NULL) /* kernel frames come, unnamed: "[kernel]" */
        snprintf(why, sizeof(why), "kernel frames not named: %s",
                 kf.ks != NULL ? kf.ks->reason : "/proc/kallsyms: out of memory");
    else if (!off)
        why[0] = '\0';
    if (why[0] != '\0')
        fx_profile_extra_str(p, g, "kernel frames unavailable", why);
    if (off && kf.frames == 0)
        return;
    fx_profile_extra_int(p, g, "samples with kernel frames", (int64_t)kf.with_frames);
    fx_profile_extra_int(p, g, "kernel frames", (int64_t)kf.frames);
    fx_profile_extra_detail(p, g, "samples in a system call",
                            (int64_t)kf.by_sub[FX_KERNEL_SYSCALL]);
    fx_profile_extra_detail(p, g, "samples in a page fault",
                            (int64_t)kf.by_sub[FX_KERNEL_PAGE_FAULT]);
    for (int i = 1; i < FX_KREC_COUNT; i++) {
        char label[120];
        snprintf(label, sizeof(label), "perf record: %s", state_labels[i]);
        fx_profile_extra_detail(p, g, label, (int64_t)kf.states[i]);
    }
    fx_profile_extra_loss(p, g, "kernel frames dropped: overflow in our handler's rt_sigreturn",
                          (int64_t)kf.sigreturn);
    fx_profile_extra_detail(p, g, "kernel addresses not named", (int64_t)kf.unnamed);
    fx_profile_extra_int(p, g, "kallsyms symbols (this JVM)",
                         kf.ks != NULL ? (int64_t)kf.ks->count : 0);
    if (kf.ks_tried) {
        char how[120];
        snprintf(how, sizeof(how), "%s in %.1f ms of CPU",
                 kf.ks_cached ? "from the cache (FXAGENT_CACHE)" : "from /proc/kallsyms",
                 (double)kf.ks_ns / 1e6);
        fx_profile_extra_str(p, g, "kallsyms read", how);
    }
    if (kf.ks_cache_error[0] != '\0')
        fx_profile_extra_str(p, g, "kallsyms cache not used", kf.ks_cache_error);
    fx_profile_extra_loss(p, g, "malformed records", (int64_t)kf.bad_records);
    struct fx_kstack_facts k;
    fx_kstack_facts(&k);
    fx_profile_extra_int(p, g, "perf rings mapped", (int64_t)k.mapped);
    fx_profile_extra_int(p, g, "threads given a ring once seen running (2 samples within 1 s)",
                         (int64_t)k.lazy_armed);
    fx_profile_extra_int(p, g, "samples taken before their thread had a ring (no kernel frames)",
                         (int64_t)kf.states[FX_KREC_OFF]);
    fx_profile_extra_loss(p, g, "perf rings not mapped (threads without kernel frames)",
                          (int64_t)k.map_fail);
    if (k.map_errno != 0)
        fx_profile_extra_str(p, g, "perf ring last mmap error", strerror(k.map_errno));
    fx_profile_extra_detail(p, g, "perf rings kept from a stop with a handler in flight",
                            (int64_t)k.kept_busy);
}

/* The kallsyms table and its func ids (renumbered by generation) stay. */
void fx_kernel_frames_new_recording(void)
{
    memset(kf.states, 0, sizeof(kf.states));
    memset(kf.by_sub, 0, sizeof(kf.by_sub));
    kf.with_frames = kf.frames = kf.unnamed = kf.bad_records = kf.sigreturn = 0;
}
