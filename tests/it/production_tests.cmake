# SPDX-License-Identifier: Apache-2.0
# Production tests (label "production"), on every JDK jdks.sh finds, with jcmd of that JDK:
#   it.attach.jdkN            attach to a JVM without the agent: start, dumps, status, stop,
#                             restart, refusals, fallback (attach_test.sh)
#   it.attach_agentpath.jdkN  a JVM started with the agent, dumps by jcmd, a second copy of the
#                             library forwarding (attach_agentpath_test.sh)
#   it.loop.jdkN              loop= by attach and at -agentpath (loop_test.sh)
execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_pr_report RESULT_VARIABLE _fx_pr_rc)
string(REGEX REPLACE "\n$" "" _fx_pr_report "${_fx_pr_report}")
string(REPLACE "\n" ";" _fx_pr_lines "${_fx_pr_report}")

set(_fx_pr_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_pr_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_pr_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_pr_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_pr_env
    FXAGENT_LIB=${_fx_pr_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_SERVER_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-server.jar
    FXCHECK=${_fx_pr_check})

foreach(_line IN LISTS _fx_pr_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  foreach(_kind attach attach_agentpath loop)
    set(_t it.${_kind}.jdk${_major})
    add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${_kind}_test.sh ${_home})
    set_tests_properties(${_t} PROPERTIES LABELS "it;production;jdk${_major}" TIMEOUT 600
      ENVIRONMENT "${_fx_pr_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  endforeach()
endforeach()
