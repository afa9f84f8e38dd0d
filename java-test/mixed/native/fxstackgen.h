/* SPDX-License-Identifier: Apache-2.0 */
/* fxstackgen.c's functions (what javac -h would declare for fxagent.mixed.StackGen, and the C
 * frames a profile must show under them). */
#ifndef FXSTACKGEN_H
#define FXSTACKGEN_H
#include <jni.h>
#include <stdint.h>

JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_leafFrame(JNIEnv *env, jclass cls, jint millis);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_largeFrame(JNIEnv *env, jclass cls,
                                                               jint millis);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_deepFrame(JNIEnv *env, jclass cls, jint millis);
JNIEXPORT jlong JNICALL Java_fxagent_mixed_StackGen_largeInnerFrame(JNIEnv *env, jclass cls,
                                                                    jint millis);
__attribute__((visibility("default"))) uint64_t fxmixed_burn_cpu(int millis); /* fxmixed.c */
__attribute__((visibility("default"))) uint64_t fxsg_deep(int count, int millis);
__attribute__((visibility("default"))) uint64_t fxsg_inner_final(uint64_t x);
__attribute__((visibility("default"))) uint64_t fxsg_inner_mid(uint64_t x);
#endif
