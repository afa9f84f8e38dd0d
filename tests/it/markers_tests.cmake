# SPDX-License-Identifier: Apache-2.0
# Marker tests (label "markers"): on every JDK jdks.sh finds,
#   it.markers.jdkN      MarkersWorkload under the agent, checked by markers_check.py
#   it.markers_dump.jdkN with loop=1s each file shows the dump before it ("fxagent dump")
#   it.markers_off.jdkN  fxagent.Markers without the agent, and the agent with markers=off
# and once, JVM-free:
#   it.markers_100k      100,000 JIT markers written by the real writer load in profiler-cli
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_mk_report RESULT_VARIABLE _fx_mk_rc)
string(REGEX REPLACE "\n$" "" _fx_mk_report "${_fx_mk_report}")
string(REPLACE "\n" ";" _fx_mk_lines "${_fx_mk_report}")

set(_fx_mk_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_mk_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_mk_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_mk_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_mk_env
    FXAGENT_LIB=${_fx_mk_lib}
    FXAGENT_MARKERS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-markers.jar
    FXCHECK=${_fx_mk_check})

foreach(_line IN LISTS _fx_mk_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  set(_t it.markers.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/markers_test.sh ${_home} 5)
  set_tests_properties(${_t} PROPERTIES LABELS "it;markers;jdk${_major}" TIMEOUT 300
    ENVIRONMENT "${_fx_mk_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  set(_t it.markers_dump.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/markers_dump_test.sh ${_home})
  set_tests_properties(${_t} PROPERTIES LABELS "it;markers;jdk${_major}" TIMEOUT 240
    ENVIRONMENT "${_fx_mk_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  set(_t it.markers_off.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/markers_off_test.sh ${_home})
  set_tests_properties(${_t} PROPERTIES LABELS "it;markers;jdk${_major}" TIMEOUT 240
    ENVIRONMENT "${_fx_mk_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
endforeach()

add_executable(fxmarkers_synth ${CMAKE_CURRENT_SOURCE_DIR}/markers_synth.c)
target_compile_options(fxmarkers_synth PRIVATE ${FX_WARNINGS})
target_link_libraries(fxmarkers_synth PRIVATE fxcore)
add_test(NAME it.markers_100k COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/markers_100k_test.sh)
set_tests_properties(it.markers_100k PROPERTIES LABELS "it;markers" TIMEOUT 600 SKIP_RETURN_CODE 77
  ENVIRONMENT "FXMARKERS_SYNTH=$<TARGET_FILE:fxmarkers_synth>;FXCHECK=${_fx_mk_check};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/it.markers_100k")
