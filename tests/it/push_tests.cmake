# SPDX-License-Identifier: Apache-2.0
# Issue 33's push= per JDK (tests/it/push_test.sh, push_receiver.py, push_check.py):
#   it.push.jdk<major>  OTLP with loop=1s and the first two pushes refused; OTLP until a stop,
#                       then a start with push= to Pyroscope's ingest (at exit); a refused
#                       connection
# Labels: it, push, jdk<major>.
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.push.jdk${_major} push_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it push jdk${_major} TIMEOUT 240
             ENV ${FX_IT_ENV} FXAGENT_LOCKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-locks.jar
                 FXPROF=$<TARGET_FILE:fxprof>)
endforeach()
