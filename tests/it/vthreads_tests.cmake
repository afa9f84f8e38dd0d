# SPDX-License-Identifier: Apache-2.0
# Issue 22, virtual threads: it.vthreads.jdk<major> (vthreads_test.sh, vthreads_check.py) on
# every JDK 21 or later found; earlier JDKs have no virtual threads, so no test is registered
# for them and configure says so in one line (the test still exits 77 with one line if run on
# one by hand). The workload's source is
# compiled by the test with the JDK under test (--release 21; the build's javac may be 17).
# Labels: it, vthreads, jdk<major>.
foreach(_major IN LISTS FX_JDK_MAJORS)
  if(_major LESS 21)
    message(STATUS "it.vthreads: JDK ${_major} has no virtual threads: not registered")
    continue()
  endif()
  fx_it_test(it.vthreads.jdk${_major} vthreads_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it vthreads jdk${_major} TIMEOUT 600
             ENV ${FX_IT_ENV}
                 FXAGENT_VTHREADS_SRC=${CMAKE_SOURCE_DIR}/java-test/vthreads/fxagent/vthreads/VThreadWorkload.java
             PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# it.vthreads_validate.jdk<major> (vthreads_validate_test.sh): validate mode on carriers carrying
# a virtual thread; it.vthreads_attach.jdk<major> (vthreads_attach_test.sh): fxprof start into a
# JVM whose virtual threads already run; it.vthreads_frozen.jdk<major> (vthreads_frozen_test.sh):
# the frame that marks a remounted virtual thread's callers still frozen (VALIDATION.md 4.1).
# Registered on every JDK 21 or later found, as it.vthreads is (a skipped test on a JDK that
# cannot run it read as a missing tool to scripts/fresh-debian-check.sh, whose root has only
# JDK 17); run by hand on an earlier JDK each exits 77 with one line. Labels: it, vthreads,
# jdk<major>.
set(_fx_vt_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_vt_prof $<TARGET_FILE:fxprof>)
endif()
foreach(_major IN LISTS FX_JDK_MAJORS)
  if(_major LESS 21)
    continue()
  endif()
  foreach(_what validate attach frozen)
    fx_it_test(it.vthreads_${_what}.jdk${_major} vthreads_${_what}_test.sh
               ARGS ${FX_JDK_HOME_${_major}}
               LABELS it vthreads jdk${_major} TIMEOUT 300
               ENV ${FX_IT_ENV}
                   FXAGENT_VTHREADS_SRC=${CMAKE_SOURCE_DIR}/java-test/vthreads/fxagent/vthreads/VThreadWorkload.java
                   FXPROF=${_fx_vt_prof}
               PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
