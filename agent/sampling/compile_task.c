/* SPDX-License-Identifier: Apache-2.0 */
/* The method a C1/C2 compiler thread compiles (issue 32, item 5), outside signal context: finds a
 * compiler thread's JavaThread* (a CompilerThread) for vm_threads.c, publishes the offsets its
 * handler reads (compile_task_sig.c says why those reads are safe; CompilerThread::_task's is
 * derived, thread_task_offset), and names the Method* a sample carries (model/compile_tasks.c).
 *
 * Every read of JVM memory here goes through process_vm_readv on this process: memory freed or
 * unmapped meanwhile (a thread list replaced, a class unloaded) makes the read fail, never the
 * JVM. The thread list (ThreadsSMRSupport::_java_thread_list) is read without the JVM's hazard
 * pointer: a list being replaced may be read stale, so a thread is taken only when its own
 * OSThread's tid is the one asked for. A Method is named only when what is read is consistent
 * (a constant pool index within its length, symbols of a sane length and printable bytes);
 * anything else is a failure the caller names, never a guess. */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct {
    bool ok;                             /* every offset below is known */
    const void *list;                    /* &ThreadsSMRSupport::_java_thread_list */
    long list_len, list_threads;         /* ThreadsList::_length (u4), _threads */
    long osthread, os_tid;               /* Thread::_osthread, OSThread::_thread_id */
    long const_method, constants;        /* Method::_constMethod, ConstMethod::_constants */
    long name_index, holder, klass_name; /* ConstMethod::_name_index, _pool_holder, Klass::_name */
    long cp_length, cp_size;             /* ConstantPool::_length, sizeof(ConstantPool) */
    long sym_length, sym_body;           /* Symbol::_length (u2), _body */
    long stack_base, stack_size;         /* Thread::_stack_base, _stack_size */
    pid_t pid; /* this process, read once: glibc's getpid is a system call (issue 31) */
} ct;

/* A checked read of n bytes at addr of this process: false if any of it is not readable. */
static bool peek(uintptr_t addr, void *out, size_t n)
{
    if (addr < 4096)
        return false;
    struct iovec local = {.iov_base = out, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)addr, .iov_len = n};
    return process_vm_readv(ct.pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static bool peek_word(uintptr_t addr, uintptr_t *out)
{
    return peek(addr, out, sizeof(*out)) && *out != 0;
}

/* CompilerThread::_task, the handler's proof of which task the thread compiles
 * (compile_task_sig.c): vmStructs does not export it (JDK 17, 25), so it is derived from the
 * class as HotSpot declares it from JDK 9 to 25: JavaThread's fields, then _counters, _env, _log,
 * _task (pointers, no padding). Taken only when _env sits where that layout puts it (right after
 * JavaThread and _counters) and _task within the CompilerThread; else 0: then no compile is
 * named (FX_TASK_NOT_PROVEN). A wrong guess names nothing either: the handler names a task only
 * when the ciEnv's _task is the same pointer. */
static long thread_task_offset(long env)
{
    long exported = fx_vmstructs_field("CompilerThread", "_task");
    if (exported > 0)
        return exported % 8 == 0 ? exported : 0;
    long java_thread = fx_vmstructs_size("JavaThread");
    long compiler_thread = fx_vmstructs_size("CompilerThread");
    long task = env + 2 * (long)sizeof(void *);
    if (java_thread <= 0 || env != java_thread + (long)sizeof(void *) ||
        task + (long)sizeof(void *) > compiler_thread)
        return 0;
    return task;
}

static void load(void)
{
    ct.pid = getpid(); /* every peek runs after this once (a fork's child has no drain) */
    long env = fx_vmstructs_field("CompilerThread", "_env");
    long task = fx_vmstructs_field("ciEnv", "_task");
    long method = fx_vmstructs_field("CompileTask", "_method");
    long id = fx_vmstructs_field("CompileTask", "_compile_id");
    ct.list = fx_vmstructs_static("ThreadsSMRSupport", "_java_thread_list");
    ct.list_len = fx_vmstructs_field("ThreadsList", "_length");
    ct.list_threads = fx_vmstructs_field("ThreadsList", "_threads");
    ct.osthread = fx_vmstructs_field("Thread", "_osthread");
    if (ct.osthread < 0)
        ct.osthread = fx_vmstructs_field("JavaThread", "_osthread");
    ct.os_tid = fx_vmstructs_field("OSThread", "_thread_id");
    ct.stack_base = fx_vmstructs_field("Thread", "_stack_base");
    ct.stack_size = fx_vmstructs_field("Thread", "_stack_size");
    if (ct.stack_base < 0 || ct.stack_size < 0) {
        ct.stack_base = fx_vmstructs_field("JavaThread", "_stack_base");
        ct.stack_size = fx_vmstructs_field("JavaThread", "_stack_size");
    }
    ct.const_method = fx_vmstructs_field("Method", "_constMethod");
    ct.constants = fx_vmstructs_field("ConstMethod", "_constants");
    ct.name_index = fx_vmstructs_field("ConstMethod", "_name_index");
    ct.holder = fx_vmstructs_field("ConstantPool", "_pool_holder");
    ct.klass_name = fx_vmstructs_field("Klass", "_name");
    ct.cp_length = fx_vmstructs_field("ConstantPool", "_length");
    ct.cp_size = fx_vmstructs_size("ConstantPool");
    ct.sym_length = fx_vmstructs_field("Symbol", "_length");
    ct.sym_body = fx_vmstructs_field("Symbol", "_body");
    ct.ok = ct.list != NULL && ct.list_len >= 0 && ct.list_threads >= 0 && ct.osthread >= 0 &&
            ct.os_tid >= 0 && ct.const_method >= 0 && ct.constants >= 0 && ct.name_index >= 0 &&
            ct.holder >= 0 && ct.klass_name >= 0 && ct.cp_length >= 0 && ct.cp_size > 0 &&
            ct.sym_length >= 0 && ct.sym_body >= 0 && ct.stack_base >= 0 && ct.stack_size >= 0;
    /* The handler's reads: word-aligned pointers and a 4-byte id, or none at all. */
    if (!ct.ok || env <= 0 || env % 8 || task < 0 || task % 8 || method < 0 || method % 8 ||
        id < 0 || id % 4)
        return;
    __atomic_store_n(&fx_sig.task_thread_off, thread_task_offset(env), __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.task_pid, (int)ct.pid, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.task_task_off, task, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.task_method_off, method, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.task_id_off, id, __ATOMIC_RELAXED);
    __atomic_store_n(&fx_sig.task_env_off, env, __ATOMIC_RELEASE);
}

uintptr_t fx_compile_task_thread_of(pid_t tid, uintptr_t *lo, uintptr_t *hi)
{
    pthread_once(&once, load);
    uintptr_t list, threads, jt = 0, os, base, size;
    uint32_t n = 0;
    if (__atomic_load_n(&fx_sig.task_env_off, __ATOMIC_ACQUIRE) <= 0 ||
        !peek_word((uintptr_t)ct.list, &list) || !peek(list + (uintptr_t)ct.list_len, &n, 4) ||
        !peek_word(list + (uintptr_t)ct.list_threads, &threads))
        return 0;
    for (uint32_t i = 0; i < n && i < 100000; i++) {
        pid_t id = -1;
        if (peek_word(threads + i * sizeof(uintptr_t), &jt) &&
            peek_word(jt + (uintptr_t)ct.osthread, &os) &&
            peek(os + (uintptr_t)ct.os_tid, &id, sizeof(id)) && id == tid)
            break;
        jt = 0;
    }
    /* Its stack, for the handler's check of _env: from the JavaThread, as HotSpot knows it. */
    if (jt == 0 || !peek_word(jt + (uintptr_t)ct.stack_base, &base) ||
        !peek_word(jt + (uintptr_t)ct.stack_size, &size) || size > base)
        return 0;
    *lo = base - size;
    *hi = base;
    return jt;
}

/* Checked reads of n independent places in one system call (a compile's name is read in every
 * sample of a new compile id: issue 31): false unless every byte of every one was read. */
static bool peek_n(const uintptr_t *addr, void *const *out, const size_t *len, int n)
{
    struct iovec local[4], remote[4];
    ssize_t want = 0;
    for (int i = 0; i < n; i++) {
        if (addr[i] < 4096)
            return false;
        local[i] = (struct iovec){.iov_base = out[i], .iov_len = len[i]};
        remote[i] = (struct iovec){.iov_base = (void *)addr[i], .iov_len = len[i]};
        want += (ssize_t)len[i];
    }
    return process_vm_readv(ct.pid, local, (unsigned long)n, remote, (unsigned long)n, 0) == want;
}

/* A Symbol's len bytes in buf as a C string, '/' written '.'; false unless all printable. */
static bool symbol_text(char *buf, uint16_t len)
{
    for (uint16_t i = 0; i < len; i++) {
        if (buf[i] < 0x21 || buf[i] > 0x7e)
            return false;
        buf[i] = buf[i] == '/' ? '.' : buf[i];
    }
    buf[len] = '\0';
    return true;
}

/* One Symbol's text (fx_compile_task_class_name). */
static bool symbol(uintptr_t sym, char *buf, size_t cap)
{
    uint16_t len = 0;
    return peek(sym + (uintptr_t)ct.sym_length, &len, sizeof(len)) && len > 0 && len < cap &&
           peek(sym + (uintptr_t)ct.sym_body, buf, len) && symbol_text(buf, len);
}

/* The class's and the method's Symbols, their lengths then their bytes read together. */
static bool two_symbols(uintptr_t ksym, char *cls, size_t ccap, uintptr_t msym, char *name,
                        size_t ncap)
{
    uint16_t kl = 0, ml = 0;
    uintptr_t at[2] = {ksym + (uintptr_t)ct.sym_length, msym + (uintptr_t)ct.sym_length};
    void *const lens[2] = {&kl, &ml};
    const size_t two[2] = {sizeof(kl), sizeof(ml)};
    if (!peek_n(at, lens, two, 2) || kl == 0 || kl >= ccap || ml == 0 || ml >= ncap)
        return false;
    uintptr_t body[2] = {ksym + (uintptr_t)ct.sym_body, msym + (uintptr_t)ct.sym_body};
    void *const bufs[2] = {cls, name};
    const size_t sizes[2] = {kl, ml};
    return peek_n(body, bufs, sizes, 2) && symbol_text(cls, kl) && symbol_text(name, ml);
}

bool fx_compile_task_method_name(uint64_t method, char *buf, size_t cap)
{
    pthread_once(&once, load);
    uintptr_t cm, cp = 0, holder = 0, kname, mname = 0;
    uint16_t index = 0;
    int32_t length = 0;
    char cls[400], name[200];
    if (!ct.ok || !peek_word((uintptr_t)method + (uintptr_t)ct.const_method, &cm))
        return false;
    /* Six reads in four calls, each of words the one before gave. The constant pool's entry is
     * read before its index is checked against the pool's length: a read past the pool fails or
     * is thrown away with the index, as a name is never made of it. */
    uintptr_t at1[2] = {cm + (uintptr_t)ct.constants, cm + (uintptr_t)ct.name_index};
    void *const out1[2] = {&cp, &index};
    const size_t len1[2] = {sizeof(cp), sizeof(index)};
    if (!peek_n(at1, out1, len1, 2) || cp == 0 || index == 0)
        return false;
    /* the constant pool's entries follow it: a Utf8 entry holds its Symbol* */
    uintptr_t at2[3] = {cp + (uintptr_t)ct.cp_length, cp + (uintptr_t)ct.holder,
                        cp + (uintptr_t)ct.cp_size + index * sizeof(uintptr_t)};
    void *const out2[3] = {&length, &holder, &mname};
    const size_t len2[3] = {sizeof(length), sizeof(holder), sizeof(mname)};
    if (!peek_n(at2, out2, len2, 3) || index >= length || holder == 0 || mname == 0 ||
        !peek_word(holder + (uintptr_t)ct.klass_name, &kname) ||
        !two_symbols(kname, cls, sizeof(cls), mname, name, sizeof(name)))
        return false;
    return (size_t)snprintf(buf, cap, "%s.%s", cls, name) < cap;
}

bool fx_compile_task_class_name(uint64_t klass, char *buf, size_t cap)
{
    pthread_once(&once, load);
    uintptr_t kname;
    return ct.ok && (klass & 7) == 0 &&
           peek_word((uintptr_t)klass + (uintptr_t)ct.klass_name, &kname) &&
           symbol(kname, buf, cap);
}
