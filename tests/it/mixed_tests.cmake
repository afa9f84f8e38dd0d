# SPDX-License-Identifier: Apache-2.0
# Issue 16's mixed-mode workloads (java-test/mixed), for now a smoke test per JDK:
#   it.mixed_workloads.jdk<major>  JNI burn, Deflater level 9 and one-byte /dev/null writes each
#                                  run for a second and prove they worked (mixed_workloads_test.sh)
#   it.mixed_stacks.jdk<major>     native frames in cpu mode (cstack=fp): the JNI burn function
#                                  under JniBurn.burn, zlib under Deflater.deflate*, none with
#                                  cstack=no (mixed_stacks_test.sh, mixed_stacks_check.py)
#   it.vm_threads.jdk<major>       threads that are not Java threads in cpu mode: GC and compiler
#                                  threads as tracks in their categories with named libjvm
#                                  frames, an unattached JNI pthread with its C frames
#                                  (vm_threads_test.sh, vm_threads_check.py)
#   it.kernel_stacks.jdk<major>    kernel frames in cpu mode (kstack=yes): the write path of
#                                  `devnull` under FileOutputStream.write*, none with kstack=no;
#                                  skipped (77) where the profile says kernel frames cannot be
#                                  had (kernel_stacks_test.sh, kernel_stacks_check.py)
#   it.wall_native.jdk<major>      native frames in wall mode: waiters blocked in read(2), sleeping
#                                  and parked show their libc and libjvm/JNI frames under their
#                                  Java frames with the state frame as leaf, in Idle; the JNI burn
#                                  function; none with cstack=no (wall_native_test.sh,
#                                  wall_native_check.py)
# Labels: it, mixed, jdk<major>. The jar and libfxmixed.so come from java-test/mixed; the JDKs
# are FX_JDK_MAJORS (tests/CMakeLists.txt).
set(_fx_mx_lib "${CMAKE_BINARY_DIR}/java-test/libfxmixed.so (target fxmixed not defined)")
if(TARGET fxmixed)
  set(_fx_mx_lib $<TARGET_FILE:fxmixed>)
endif()
set(_fx_mx_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_mx_prof $<TARGET_FILE:fxprof>)
endif()
set(_fx_mx_env
    FXAGENT_MIXED_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-mixed.jar
    FXAGENT_MIXED_LIB=${_fx_mx_lib})

foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.mixed_workloads.jdk${_major} mixed_workloads_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it mixed jdk${_major} TIMEOUT 120 ENV ${_fx_mx_env})
  # 12 JVMs, each looping until its thread has had half its seconds of CPU (at most 5x them,
  # MixedWorkload.more): 73 s at load 10, 157-197 s at load 14-30 (session 18, JDK 17),
  # once over 240 s at load 14 with 3 busy loops more; the time a passing run takes is unchanged
  fx_it_test(it.mixed_stacks.jdk${_major} mixed_stacks_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it mixed jdk${_major} TIMEOUT 360
             ENV ${FX_IT_ENV} ${_fx_mx_env} FXPROF=${_fx_mx_prof})
  fx_it_test(it.vm_threads.jdk${_major} vm_threads_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it mixed jdk${_major} TIMEOUT 300 ENV ${FX_IT_ENV} ${_fx_mx_env})
  fx_it_test(it.kernel_stacks.jdk${_major} kernel_stacks_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it mixed jdk${_major} TIMEOUT 240 ENV ${FX_IT_ENV} ${_fx_mx_env})
  set_tests_properties(it.kernel_stacks.jdk${_major} PROPERTIES SKIP_RETURN_CODE 77)
  fx_it_test(it.wall_native.jdk${_major} wall_native_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it mixed jdk${_major} TIMEOUT 300 ENV ${FX_IT_ENV} ${_fx_mx_env})
endforeach()
