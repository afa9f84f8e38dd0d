/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM's handles, written once by a setup before any callback or agent thread can read
 * them (the JVMTI calls that start those are the release), and the JVM services every part
 * uses: agent threads, system properties, pending JNI exceptions. */
#include "base.h"

#include <dlfcn.h>
#include <string.h>

#include "fx_alloc.h"
#include "fx_elfsym.h"

static JavaVM *the_vm;
static jvmtiEnv *the_jvmti;

void fx_jvm_set(JavaVM *v, jvmtiEnv *j)
{
    __atomic_store_n(&the_vm, v, __ATOMIC_RELEASE);
    __atomic_store_n(&the_jvmti, j, __ATOMIC_RELEASE);
}

JavaVM *fx_jvm(void)
{
    return __atomic_load_n(&the_vm, __ATOMIC_ACQUIRE);
}

jvmtiEnv *fx_jvmti(void)
{
    return __atomic_load_n(&the_jvmti, __ATOMIC_ACQUIRE);
}

bool fx_jvmti_failed(jvmtiError err, const char *what)
{
    if (err == JVMTI_ERROR_NONE)
        return false;
    jvmtiEnv *env = fx_jvmti();
    char *name = NULL;
    if (env != NULL && (*env)->GetErrorName(env, err, &name) == JVMTI_ERROR_NONE) {
        fx_log("JVMTI %s failed: %s", what, name);
        (*env)->Deallocate(env, (unsigned char *)name);
    } else {
        fx_log("JVMTI %s failed: error %d", what, (int)err);
    }
    return true;
}

int fx_run_thread(JNIEnv *jni, const char *name, jvmtiStartFunction fn, void *arg)
{
    jvmtiEnv *env = fx_jvmti();
    jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring jname = init ? (*jni)->NewStringUTF(jni, name) : NULL;
    jobject thread = jname ? (*jni)->NewObject(jni, cls, init, jname) : NULL;
    int rc = FX_EUNSUPPORTED;
    if (thread == NULL) {
        (*jni)->ExceptionClear(jni);
        fx_log("cannot create the thread '%s'", name);
    } else if (!fx_jvmti_failed(
                       (*env)->RunAgentThread(env, thread, fn, arg, JVMTI_THREAD_NORM_PRIORITY),
                       "RunAgentThread")) {
        rc = FX_OK;
    }
    (*jni)->DeleteLocalRef(jni, thread);
    (*jni)->DeleteLocalRef(jni, jname);
    (*jni)->DeleteLocalRef(jni, cls);
    return rc;
}

char *fx_property(const char *key)
{
    jvmtiEnv *env = fx_jvmti();
    char *v = NULL;
    if (env == NULL || (*env)->GetSystemProperty(env, key, &v) != JVMTI_ERROR_NONE || v == NULL)
        return NULL;
    char *copy = fx_strdup(v);
    (*env)->Deallocate(env, (unsigned char *)v);
    return copy;
}

bool fx_jni_failed(JNIEnv *jni)
{
    if (!(*jni)->ExceptionCheck(jni))
        return false;
    (*jni)->ExceptionClear(jni);
    return true;
}

jmethodID fx_jvm_method(JNIEnv *jni, const char *cls, const char *name, const char *sig)
{
    jvmtiEnv *env = fx_jvmti();
    jclass c = env != NULL ? (*jni)->FindClass(jni, cls) : NULL;
    if (fx_jni_failed(jni) || c == NULL)
        return NULL;
    jint n = 0;
    jmethodID *methods = NULL, found = NULL;
    if ((*env)->GetClassMethods(env, c, &n, &methods) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n && found == NULL; i++) {
            char *mname = NULL, *msig = NULL;
            if ((*env)->GetMethodName(env, methods[i], &mname, &msig, NULL) == JVMTI_ERROR_NONE &&
                strcmp(mname, name) == 0 && (sig == NULL || strcmp(msig, sig) == 0))
                found = methods[i];
            (*env)->Deallocate(env, (unsigned char *)mname);
            (*env)->Deallocate(env, (unsigned char *)msig);
        }
        (*env)->Deallocate(env, (unsigned char *)methods);
    }
    (*jni)->DeleteLocalRef(jni, c);
    return found;
}

/* libjvm is a shared object whose first segment is at 0: a .symtab value is an offset from its
 * load base. dladdr of an exported JNI function names the library and gives that base. */
void *fx_jvm_symbol(const char *name)
{
    Dl_info di;
    void *anchor = dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    uint64_t off = 0;
    if (anchor == NULL || dladdr(anchor, &di) == 0 || di.dli_fname == NULL ||
        fx_elf_symbol_vaddr(di.dli_fname, name, &off) != FX_OK)
        return NULL;
    return (char *)di.dli_fbase + off;
}
