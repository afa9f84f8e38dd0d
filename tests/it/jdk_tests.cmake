# SPDX-License-Identifier: Apache-2.0
# Per-JDK integration tests: the demo under the agent in each mode, threads that never ran
# (tracks_test.sh), a bad option, repeated runs.
# The JDKs are found at configure time by jdks.sh (FXAGENT_TEST_JDKS, else /usr/lib/jvm/*);
# re-run cmake after installing a JDK.
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_jdk_report RESULT_VARIABLE _fx_jdk_rc)
if(NOT _fx_jdk_rc EQUAL 0)
  message(WARNING "fxagent: tests/it/jdks.sh failed (${_fx_jdk_rc})")
endif()
string(REGEX REPLACE "\n$" "" _fx_jdk_report "${_fx_jdk_report}")
string(REPLACE "\n" ";" _fx_jdk_lines "${_fx_jdk_report}")

# A missing target still registers the tests: they then fail naming what was not built.
set(_fx_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_prof $<TARGET_FILE:fxprof>)
endif()
set(_fx_it_env
    FXAGENT_LIB=${_fx_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXCHECK=${_fx_check})

# it.jdks: fails when no JDK can run the tests, so a machine without one is not a silent pass.
add_test(NAME it.jdks COMMAND bash -c
         "r=$(bash '${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh') && echo \"$r\" && grep -q ': used$' <<<\"$r\"")
set_tests_properties(it.jdks PROPERTIES LABELS it TIMEOUT 60)

set(_fx_jdk_count 0)
foreach(_line IN LISTS _fx_jdk_lines)
  message(STATUS "fxagent tests: ${_line}")
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  math(EXPR _fx_jdk_count "${_fx_jdk_count} + 1")
  foreach(_mode cpu itimer wall)
    set(_t it.demo.jdk${_major}.${_mode})
    add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/demo_test.sh ${_home} ${_mode})
    set_tests_properties(${_t} PROPERTIES LABELS "it;jdk${_major}" TIMEOUT 240
      ENVIRONMENT "${_fx_it_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  endforeach()
  # Threads that never ran as empty tracks, and fxprof summary's count of them (issue 19).
  set(_t it.tracks.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tracks_test.sh ${_home})
  set_tests_properties(${_t} PROPERTIES LABELS "it;jdk${_major}" TIMEOUT 240
    ENVIRONMENT "${_fx_it_env};FXPROF=${_fx_prof};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  set(_t it.bad_option.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bad_option_test.sh ${_home})
  set_tests_properties(${_t} PROPERTIES LABELS "it;jdk${_major}" TIMEOUT 60
    ENVIRONMENT "${_fx_it_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  set(_t it.repeat.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/repeat_test.sh ${_home} 5)
  set_tests_properties(${_t} PROPERTIES LABELS "it;jdk${_major}" TIMEOUT 300
    ENVIRONMENT "${_fx_it_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
endforeach()
message(STATUS "fxagent tests: ${_fx_jdk_count} JDK(s) used for the integration tests")
