# SPDX-License-Identifier: Apache-2.0
# Stacks of everyday (megamorphic) code, issue 20 (docs/VALIDATION.md section 7):
#   it.stack_shape.jdk<major>  java-test/stacks (fxagent.stacks.Mega) under the agent in cpu mode,
#                              checked by the shape oracle and the recovered-stack oracle
#                              (tests/it/stack_shape_test.sh, stack_shape_check.py)
#   it.stack_oracle_selftest   the oracle on synthetic profiles: it must reject a recovered stack
#                              seen at no ordinary call site, a recovered frame under an ordinary
#                              one, a counter that disagrees, and failure frames (no JVM needed)
# Labels: it, stacks, jdk<major>. The jar is built by java-test/CMakeLists.txt.
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_st_report RESULT_VARIABLE _fx_st_rc)
string(REGEX REPLACE "\n$" "" _fx_st_report "${_fx_st_report}")
string(REPLACE "\n" ";" _fx_st_lines "${_fx_st_report}")

set(_fx_st_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_st_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_st_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_st_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_st_env
    FXAGENT_LIB=${_fx_st_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_STACKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stacks.jar
    FXCHECK=${_fx_st_check})

add_test(NAME it.stack_oracle_selftest
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/stack_oracle_selftest.py)
set_tests_properties(it.stack_oracle_selftest PROPERTIES LABELS "it;stacks" TIMEOUT 60)

foreach(_line IN LISTS _fx_st_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  set(_t it.stack_shape.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/stack_shape_test.sh ${_home})
  set_tests_properties(${_t} PROPERTIES LABELS "it;stacks;jdk${_major}" TIMEOUT 240
    ENVIRONMENT "${_fx_st_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
endforeach()
