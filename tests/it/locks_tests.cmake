# SPDX-License-Identifier: Apache-2.0
# Issue 18's lock waits (lock=) and wall-mode thread states:
#   it.locks.jdk<major>  known monitor and ReentrantLock waits as markers with stacks, lock waits
#                        tracks, states, at -agentpath and by attach with a dump
#                        (locks_test.sh, locks_check.py)
# Labels: it, locks, jdk<major>. The jar comes from java-test/locks.
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.locks.jdk${_major} locks_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it locks jdk${_major} TIMEOUT 240
             ENV ${FX_IT_ENV} FXAGENT_LOCKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-locks.jar)
endforeach()
