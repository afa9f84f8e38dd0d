# SPDX-License-Identifier: Apache-2.0
# Faults and stress (labels "it;faults" and "it;stress"), on every JDK jdks.sh finds:
#   it.fault.<scenario>.jdkN   missing target folder, /dev/full, SIGKILL during a dump,
#                              System.exit during dumps, Runtime.halt, SIGTERM (fault_scenario.sh)
#   it.stress.<scenario>.jdkN  short-lived threads, 200 threads, 10,000 frames, class unloading,
#                              allocation storm (stress_scenario.sh)
# tests/it/stress_repeat.sh N runs all of them N times and counts crashes and failures.
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_rel_report RESULT_VARIABLE _fx_rel_rc)
string(REGEX REPLACE "\n$" "" _fx_rel_report "${_fx_rel_report}")
string(REPLACE "\n" ";" _fx_rel_lines "${_fx_rel_report}")

set(_fx_rel_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_rel_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_rel_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_rel_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_rel_env
    FXAGENT_LIB=${_fx_rel_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_STRESS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stress.jar
    FXCHECK=${_fx_rel_check})
set(FXAGENT_FAULT_SCENARIOS missing_dir dev_full sigkill_dump exit_dump halt sigterm)
set(FXAGENT_STRESS_SCENARIOS short concurrent deep unload alloc)

foreach(_line IN LISTS _fx_rel_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  foreach(_kind fault stress)
    string(TOUPPER ${_kind} _up)
    set(_label faults)
    if(_kind STREQUAL "stress")
      set(_label stress)
    endif()
    foreach(_sc IN LISTS FXAGENT_${_up}_SCENARIOS)
      set(_t it.${_kind}.${_sc}.jdk${_major})
      add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${_kind}_scenario.sh ${_sc} ${_home})
      set_tests_properties(${_t} PROPERTIES LABELS "it;${_label};jdk${_major}" TIMEOUT 300
        ENVIRONMENT "${_fx_rel_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
      if(_kind STREQUAL "stress")
        # Stress scenarios saturate both cores (hundreds of busy threads): under ctest -j2 they
        # run alone, so they cannot starve a neighbour whose test expects its threads to run
        # (a loop period with no samples failed it.loop once beside it.stress.concurrent).
        set_tests_properties(${_t} PROPERTIES PROCESSORS 2)
      endif()
    endforeach()
  endforeach()
endforeach()
