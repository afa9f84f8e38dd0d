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

# Issue 30's known answers through every output:
#   it.views.jdk<major>  LockWorkload views (CPU, 6 known lock waits, 32 MiB allocated in one
#                        method) at -agentpath with lock= and alloc=: the Firefox profile,
#                        fxprof summary (text, --json), collapsed --view and pprof read by go
#                        tool pprof give the same figures per view, and the known ones
#                        (views_test.sh, views_check.py)
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.views.jdk${_major} views_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it locks jdk${_major} TIMEOUT 180
             ENV ${FX_IT_ENV} FXAGENT_LOCKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-locks.jar
                 FXPROF=$<TARGET_FILE:fxprof>)
endforeach()
