# SPDX-License-Identifier: Apache-2.0
# Issue 22, virtual threads: it.vthreads.jdk<major> (vthreads_test.sh, vthreads_check.py) on
# every JDK 21 or later found; earlier JDKs have no virtual threads, so no test is registered
# for them and configure says so in one line (the test still exits 77 with one line if run on
# one by hand). The workload is compiled once in the build by the javac of each JDK it runs on
# (--release 21; the build's javac may be 17) into java-test/fxagent-vthreads-jdk<major>.jar,
# which the four tests of that JDK share (each compiled it before: 4 javac runs per JDK).
# Labels: it, vthreads, jdk<major>.
set(_fx_vt_src ${CMAKE_SOURCE_DIR}/java-test/vthreads/fxagent/vthreads/VThreadWorkload.java)
foreach(_major IN LISTS FX_JDK_MAJORS)
  if(_major LESS 21)
    message(STATUS "it.vthreads: JDK ${_major} has no virtual threads: not registered")
    continue()
  endif()
  set(_vt_classes ${CMAKE_BINARY_DIR}/java-test/vthreads-classes-jdk${_major})
  set(_vt_jar ${CMAKE_BINARY_DIR}/java-test/fxagent-vthreads-jdk${_major}.jar)
  add_custom_command(
    OUTPUT ${_vt_jar}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${_vt_classes}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_vt_classes}
    COMMAND ${FX_JDK_HOME_${_major}}/bin/javac --release 21 -d ${_vt_classes} ${_fx_vt_src}
    COMMAND ${FX_JDK_HOME_${_major}}/bin/jar --create --file ${_vt_jar} -C ${_vt_classes} .
    DEPENDS ${_fx_vt_src}
    COMMENT "Building fxagent-vthreads-jdk${_major}.jar"
    VERBATIM)
  add_custom_target(fxagent_vthreads_jdk${_major} ALL DEPENDS ${_vt_jar})
  set(FX_VT_JAR_${_major} ${_vt_jar})
  fx_it_test(it.vthreads.jdk${_major} vthreads_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it vthreads jdk${_major} TIMEOUT 600
             ENV ${FX_IT_ENV}
                 FXAGENT_VTHREADS_JAR=${FX_VT_JAR_${_major}}
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
                   FXAGENT_VTHREADS_JAR=${FX_VT_JAR_${_major}}
                   FXPROF=${_fx_vt_prof}
               PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
