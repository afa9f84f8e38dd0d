# SPDX-License-Identifier: Apache-2.0
# Issue 17, allocation and live-heap profiling (tests/it/alloc_test.sh, alloc_check.py), per JDK:
#   it.alloc.jdk<major>.split   the unbiased estimate: a known byte split and the thread's total
#   it.alloc.jdk<major>.live    retained memory after System.gc(), read through profiler-cli
#   it.alloc.jdk<major>.attach  fxprof start, stop, then start --options alloc=512k, dump, stop; loop=1s series
# Labels: it, alloc, jdk<major>.
set(_fx_al_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_al_prof $<TARGET_FILE:fxprof>)
endif()
foreach(_major IN LISTS FX_JDK_MAJORS)
  foreach(_mode split live attach)
    fx_it_test(it.alloc.jdk${_major}.${_mode} alloc_test.sh ARGS ${FX_JDK_HOME_${_major}} ${_mode}
               LABELS it alloc jdk${_major} TIMEOUT 240
               ENV ${FX_IT_ENV} FXAGENT_ALLOC_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-alloc.jar
                   FXPROF=${_fx_al_prof})
  endforeach()
endforeach()
# Issue 26: the not-in-Java recovery on AllocWorkload bench (tests/it/notjava_test.sh).
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.notjava.jdk${_major} notjava_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it alloc jdk${_major} TIMEOUT 240
             ENV ${FX_IT_ENV} FXAGENT_ALLOC_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-alloc.jar)
endforeach()
