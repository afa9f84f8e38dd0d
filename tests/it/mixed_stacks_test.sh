#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Native frames in cpu mode (issue 16, cstack=fp) on one JDK, with the mixed workloads:
#   jni      the JNI burn function (fxmixed_burn_cpu, or Java_fxagent_mixed_JniBurn_burn) is a
#            Native frame under its Java caller JniBurn.burn in most burning samples;
#   deflate  zlib frames (a zlib function name, or libz.so.1...+0x...) under Deflater.deflate*;
#   cstack=no  the same JNI run has no Native frame and no "Native stacks" metadata;
#   cstack=dwarf / cstack=fp  the deflate run again: by CFI, the zlib frames hang under
#            Java_java_util_zip_Deflater_deflateBytesBytes under Deflater.deflateBytesBytes with
#            no "[native: walk stopped" gap; by frame pointers, with Debian's frameless libz
#            (JDK 17), the gap is there (with a bundled zlib built with frame pointers, n/a);
#            the deflate run's walks stop in libz until its table is built (unless the jni run
#            kept it: then read at the mapping, as here); the cstack=dwarf
#            run reads that table from the shared cache when libz is mapped: no stop there;
#   deepjni depth=50  the JNI burn under a 200-deep recursion: no sample has over 50 frames,
#            and the burning ones keep their native frames under a root "[truncated]";
#   jni, upcall (issue 32): the main thread's native frames below MixedWorkload.main down to
#            start_thread (JavaMain, jni_CallStaticVoidMethod, JavaCalls::call_helper); a JNI
#            call-back's C frames between JniBurn.upcall and JniBurn.javaBurn;
#   debugframe (issue 32): libfxdebugframe.so's fxdf_level1;fxdf_level2;fxdf_level3, unwound by
#            their .debug_frame CFI (in libfxdebugframe.so.debug, named by the stripped
#            library's .gnu_debuglink), under Java_fxagent_mixed_JniBurn_debugFrame;
#   stackgen (issue 32, async-profiler's StackwalkerTests and CstackTests cases, -Xss5m): C frames
#            of a 320 KiB JNI frame, 7 levels of 128 KiB, a 64 KiB leaf called in a loop, each
#            whole under its interpreted Java caller (StackGen.leafFrame, ...) down to JavaMain;
#            a static initializer's FileInputStream.readBytes with InstanceKlass::initialize
#            between it and main; no CompileBroker frame rootward of start_thread, no JNI
#            frame twice (collapsed_ratio.py on its --annotate collapsed output);
#   jnialloc, alloc-startup, jnialloc-off (issue 32 item 6): allocation samples' native frames:
#            C code's NewByteArray and NewObject under their JNI method, the thread's start below,
#            the VM's own allocations and its calls into ClassLoader.loadClass at start-up (every
#            allocation sampled), none with cstack=no (alloc_native_check.py);
# each JVM exits 0 without hs_err, fxcheck accepts each profile, profiler-cli loads one, and the
# checks read mixed_stacks_check.py. Fails on a build without native frames (no such frame).
# usage: mixed_stacks_test.sh JDK_HOME   (env: FXAGENT_MIXED_JAR, FXAGENT_MIXED_LIB, FXPROF and
#        it_lib's)
set -euo pipefail
source "$(dirname "$0")/it_lib.sh"
it_init "it.mixed_stacks.jdk$(fx_jdk_major "$1")" "$1" FXAGENT_MIXED_JAR
[[ -f ${FXAGENT_MIXED_LIB:-} ]] || it_fail "not built: FXAGENT_MIXED_LIB=${FXAGENT_MIXED_LIB:-}"
# shellcheck source=tests/it/profiler_cli.sh
source "$IT_DIR/profiler_cli.sh"

# mixed NAME WORKLOAD AGENT_OPTIONS [SECONDS [JVM_OPTION]]: runs the workload for SECONDS (3)
# under the agent into NAME.json.gz.
mixed() {
    local profile=$FXAGENT_RUN_DIR/$1.json.gz
    it_run "$1" "$IT_JDK/bin/java" --enable-native-access=ALL-UNNAMED ${5:+"$5"} \
        "-agentpath:$FXAGENT_LIB=mode=cpu,interval=10ms,quiet,file=$profile${3:+,$3}" \
        -Dfxagent.mixed.lib="$FXAGENT_MIXED_LIB" -jar "$FXAGENT_MIXED_JAR" "$2" "${4:-3}"
    [[ $IT_RC -eq 0 ]] || it_fail "$1: java exited $IT_RC"
    it_no_hs_err
    [[ -s $profile ]] || it_fail "$1: no profile at $profile"
    "$FXCHECK" "$profile" || it_fail "fxcheck rejected $profile"
}

mixed jni jni
mixed upcall upcall # issue 32: Java -> C -> Java, the C frames between
mixed debugframe debugframe # issue 32: C code with .debug_frame CFI only
mixed deflate deflate
mixed jni-off jni cstack=no
mixed deflate-dwarf deflate cstack=dwarf
mixed deflate-fp deflate cstack=fp
mixed deep-depth deepjni depth=50 # issue 32: depth= counts the native frames too
mixed stackgen stackgen "" 2 -Xss5m # issue 32: async-profiler's StackwalkerTests/CstackTests cases
# issue 32 item 6: native frames in allocation samples; every allocation at start-up
mixed jnialloc jnialloc alloc=32k 2
mixed alloc-startup jnialloc alloc=1 0.05 -XX:-UseTLAB
mixed jnialloc-off jnialloc alloc=32k,cstack=no 1

pcli_setup
pcli_load "$FXAGENT_RUN_DIR/deflate.json.gz" || it_fail "profiler-cli could not load deflate.json.gz"
pcli_json pcli-threads.json thread list || it_fail "profiler-cli thread list failed"

python3 "$IT_DIR/mixed_stacks_check.py" --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "native frames missing or misplaced (see above)"
# issue 32: async-profiler's StackwalkerTests (normalStackVM/VMX, largeFrame, deepStack,
# largeInnerFrame) and CstackTests (vmStructs/vmx, saneNativeStack) cases on StackGen's profile.
# Each case runs a fifth of the time (about 20 % of the samples each): 10 % is the bound. As
# async-profiler expects: the native method leafFrame typed by the code its frame runs in (the
# interpreter's native entry: _[0]) and HotSpot's call stub (`call_stub`, a VM stub, no suffix)
# a frame of its own between JavaCalls::call_helper and the Java frame it called.
sg=$FXAGENT_RUN_DIR/stackgen.collapsed
"$FXPROF" convert "$FXAGENT_RUN_DIR/stackgen.json.gz" --to collapsed --annotate -o "$sg" ||
    it_fail "fxprof convert --annotate failed on stackgen.json.gz"
java_main='JavaMain;([^;]+;)?jni_CallStaticVoidMethod;jni_invoke_static[^;]*;JavaCalls::call_helper[^;]*;call_stub;'
java_main+='fxagent\.mixed\.MixedWorkload\.main_\[0\];fxagent\.mixed\.StackGen\.run_\[0\];'
python3 "$IT_DIR/collapsed_ratio.py" --label "$IT_NAME: stackgen" "$sg" \
    --min "^([^;]+;){1,3}${java_main}fxagent\.mixed\.StackGen\.leafFrame_\[0\];Java_fxagent_mixed_StackGen_leafFrame;fxmixed_burn_cpu" 0.1 \
    --min 'StackGen\.largeFrame_\[0\];Java_fxagent_mixed_StackGen_largeFrame;fxmixed_burn_cpu' 0.1 \
    --min 'StackGen\.deepFrame_\[0\];Java_fxagent_mixed_StackGen_deepFrame;(fxsg_deep;){7}fxmixed_burn_cpu' 0.1 \
    --min 'StackGen\.largeInnerFrame_\[0\];Java_fxagent_mixed_StackGen_largeInnerFrame;fxsg_inner_mid;fxsg_inner_final' 0.1 \
    --max 'Java_fxagent_mixed_StackGen_[A-Za-z]+;(\[|fxsg_inner_final)' 1e-9 \
    --min "${java_main}.*InstanceKlass::initialize[^;]*;.*JavaCalls::call_helper[^;]*;call_stub;fxagent\.mixed\.StackGen\\\$LongInit\.<clinit>[^;]*;.*;readBytes[; ]" 0.02 \
    --max 'CompileBroker::.*;start_thread' 1e-9 --max 'Java_java_io_.*;Java_java_io_' 1e-9 ||
    it_fail "stackgen: async-profiler's StackwalkerTests/CstackTests cases not met (see above)"
# issue 32 item 6: fxprof summary's allocating method is the Java frame under the native ones
"${FXPROF:?FXPROF is not set}" summary --json "$FXAGENT_RUN_DIR/jnialloc.json.gz" \
    >"$FXAGENT_RUN_DIR/jnialloc-summary.json" || it_fail "fxprof summary failed on jnialloc"
python3 "$IT_DIR/alloc_native_check.py" --label "$IT_NAME" "$FXAGENT_RUN_DIR" ||
    it_fail "allocation samples' native frames missing or misplaced (see above)"
echo "$IT_NAME: OK"
