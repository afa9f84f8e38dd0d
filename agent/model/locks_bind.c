/* SPDX-License-Identifier: Apache-2.0 */
/* RegisterNatives on a java.base class without the JDK's warning (issue 30): HotSpot's
 * jni_RegisterNatives logs "Re-registering of platform native method: ..." (log_warning(jni,
 * resolve), which goes to the application's STDOUT by default) when a native of a class of the
 * boot or platform loader in a named module is bound by code whose caller class, the Java frame
 * under the caller of RegisterNatives (JavaThread::security_get_caller_class(1)), is missing (our
 * agent and attach threads, VMInit) or comes from another loader. So the binding is made from
 * Java code of the boot loader: a class of ours, fxagent.agent.NativeBind, defined once in the
 * boot loader (JNI DefineClass, loader NULL) from the bytes below, whose static run() calls its
 * native bind(); bind() is ours (RegisterNatives on our own class: its module is the boot
 * loader's unnamed one, no warning) and calls RegisterNatives for the request. Its caller class
 * is then NativeBind, of the boot loader like Unsafe: no warning, and no flag or log setting of
 * the user's touched. The class stays defined for the JVM's life (150 bytes of metaspace).
 * Callers hold control's lock (start, stop): one request at a time. */
#include "locks_shared.h"

#include <stdbool.h>

/* javap: public final class fxagent.agent.NativeBind { private static native void bind();
 * static void run() { bind(); } }, class file version 52, no fields, no attributes. */
static const unsigned char class_bytes[] = {
        0xca, 0xfe, 0xba, 0xbe, 0x00, 0x00, 0x00, 0x34, 0x00, 0x0b, 0x01, 0x00, 0x18, 0x66, 0x78,
        0x61, 0x67, 0x65, 0x6e, 0x74, 0x2f, 0x61, 0x67, 0x65, 0x6e, 0x74, 0x2f, 0x4e, 0x61, 0x74,
        0x69, 0x76, 0x65, 0x42, 0x69, 0x6e, 0x64, 0x07, 0x00, 0x01, 0x01, 0x00, 0x10, 0x6a, 0x61,
        0x76, 0x61, 0x2f, 0x6c, 0x61, 0x6e, 0x67, 0x2f, 0x4f, 0x62, 0x6a, 0x65, 0x63, 0x74, 0x07,
        0x00, 0x03, 0x01, 0x00, 0x04, 0x62, 0x69, 0x6e, 0x64, 0x01, 0x00, 0x03, 0x28, 0x29, 0x56,
        0x0c, 0x00, 0x05, 0x00, 0x06, 0x0a, 0x00, 0x02, 0x00, 0x07, 0x01, 0x00, 0x03, 0x72, 0x75,
        0x6e, 0x01, 0x00, 0x04, 0x43, 0x6f, 0x64, 0x65, 0x00, 0x31, 0x00, 0x02, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x0a, 0x00, 0x05, 0x00, 0x06, 0x00, 0x00, 0x00, 0x08,
        0x00, 0x09, 0x00, 0x06, 0x00, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x04, 0xb8, 0x00, 0x08, 0xb1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
#define CLASS_NAME "fxagent/agent/NativeBind"

static struct {
    jclass cls; /* global reference to NativeBind, NULL until the first binding */
    jmethodID run;
    /* The request bind() carries out, set by fx_lock_bind_native under control's lock. */
    jclass target;
    JNINativeMethod method;
    bool done;
} nb;

static void JNICALL bind_request(JNIEnv *jni, jclass self)
{
    (void)self;
    nb.done = (*jni)->RegisterNatives(jni, nb.target, &nb.method, 1) == 0;
    if (!nb.done)
        (*jni)->ExceptionClear(jni);
}

/* NativeBind, defined in the boot loader (or found there: defined by an earlier copy of us). */
static bool binder(JNIEnv *jni)
{
    if (nb.cls != NULL)
        return true;
    jclass c = (*jni)->DefineClass(jni, CLASS_NAME, NULL, (const jbyte *)class_bytes,
                                   (jsize)sizeof(class_bytes));
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        c = (*jni)->FindClass(jni, CLASS_NAME);
    }
    if (c == NULL) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    JNINativeMethod own = {"bind", "()V", (void *)bind_request};
    jmethodID run = (*jni)->GetStaticMethodID(jni, c, "run", "()V");
    if (run == NULL || (*jni)->RegisterNatives(jni, c, &own, 1) != 0) {
        (*jni)->ExceptionClear(jni);
        (*jni)->DeleteLocalRef(jni, c);
        return false;
    }
    nb.cls = (*jni)->NewGlobalRef(jni, c);
    nb.run = run;
    (*jni)->DeleteLocalRef(jni, c);
    return nb.cls != NULL;
}

bool fx_lock_bind_native(JNIEnv *jni, jclass cls, const char *name, const char *sig, void *fn)
{
    if (!binder(jni))
        return false;
    nb.target = cls;
    nb.method = (JNINativeMethod){(char *)name, (char *)sig, fn};
    nb.done = false;
    (*jni)->CallStaticVoidMethod(jni, nb.cls, nb.run);
    if ((*jni)->ExceptionCheck(jni)) {
        (*jni)->ExceptionClear(jni);
        return false;
    }
    return nb.done;
}
