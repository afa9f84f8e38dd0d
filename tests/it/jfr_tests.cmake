# SPDX-License-Identifier: Apache-2.0
# Issue 35, JFR recordings into Firefox profiles, per JDK:
#   it.jfr.jdk<major>  a JFR recording of java-test/mixed's MixedWorkload converted by
#                      fxprof convert: counts per event type, per thread, and every sample's
#                      stack equal the JDK's own `jfr summary` / `jfr print --json`; two
#                      chunks, a recording cut short, bad and corrupted files; the demo's
#                      allocation samples (count, bytes, stacks with the class as leaf)
#                      (tests/it/jfr_test.sh, jfr_check.py)
# Labels: it, jfr, jdk<major>.
set(_fx_jfr_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_jfr_prof $<TARGET_FILE:fxprof>)
endif()
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.jfr.jdk${_major} jfr_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it jfr jdk${_major} TIMEOUT 240
             ENV ${FX_IT_ENV} FXAGENT_MIXED_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-mixed.jar
                 FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
                 FXAGENT_LOCKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-locks.jar
                 FXPROF=${_fx_jfr_prof})
endforeach()
