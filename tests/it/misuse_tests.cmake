# SPDX-License-Identifier: Apache-2.0
# Agent misuse (label "it;misuse"), on every JDK jdks.sh finds: it.misuse.<scenario>.jdkN runs
# tests/it/misuse_scenario.sh (a device, FIFO, /proc fd link, block device, socket, folder or a
# file that is not a profile as file=, and the agent loaded twice, 50 times).
# docs/RELIABILITY.md, "Misuse: the agent".
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_mis_report RESULT_VARIABLE _fx_mis_rc)
string(REGEX REPLACE "\n$" "" _fx_mis_report "${_fx_mis_report}")
string(REPLACE "\n" ";" _fx_mis_lines "${_fx_mis_report}")

set(_fx_mis_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_mis_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_mis_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_mis_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_mis_env
    FXAGENT_LIB=${_fx_mis_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_STRESS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stress.jar
    FXCHECK=${_fx_mis_check})
set(FXAGENT_MISUSE_SCENARIOS chardev fifo stdout refused folder notours twice)

foreach(_line IN LISTS _fx_mis_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  foreach(_sc IN LISTS FXAGENT_MISUSE_SCENARIOS)
    set(_t it.misuse.${_sc}.jdk${_major})
    add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/misuse_scenario.sh ${_sc} ${_home})
    set_tests_properties(${_t} PROPERTIES LABELS "it;misuse;jdk${_major}" TIMEOUT 600
      ENVIRONMENT "${_fx_mis_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
    if(_sc STREQUAL "twice")
      set_tests_properties(${_t} PROPERTIES PROCESSORS 2) # two JVMs at a time
    endif()
  endforeach()
endforeach()
