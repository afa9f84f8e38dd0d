# SPDX-License-Identifier: Apache-2.0
# Production tests (label "production"), on every JDK jdks.sh finds, with jcmd of that JDK:
#   it.attach.jdkN            attach to a JVM without the agent: start, dumps, status, stop,
#                             restart, refusals, fallback (attach_test.sh)
#   it.attach_agentpath.jdkN  a JVM started with the agent, dumps by jcmd, a second copy of the
#                             library forwarding (attach_agentpath_test.sh)
#   it.loop.jdkN              loop= by attach and at -agentpath (loop_test.sh)
set(_fx_pr_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_SERVER_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-server.jar)

foreach(_major IN LISTS FX_JDK_MAJORS)
  foreach(_kind attach attach_agentpath loop)
    fx_it_test(it.${_kind}.jdk${_major} ${_kind}_test.sh ARGS ${FX_JDK_HOME_${_major}}
               LABELS it production jdk${_major} TIMEOUT 600 ENV ${_fx_pr_env})
  endforeach()
endforeach()

# it.cycle.jdkN: one JVM, FXAGENT_CYCLES (default 30) start/stop cycles by fxprof with other
# options each time, idle while stopped, resources bounded (cycle_test.sh).
set(_fx_cycle_fxprof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_cycle_fxprof $<TARGET_FILE:fxprof>)
endif()
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.cycle.jdk${_major} cycle_test.sh ARGS ${FX_JDK_HOME_${_major}} 30
             LABELS it production jdk${_major} TIMEOUT 900
             ENV ${_fx_pr_env} FXPROF=${_fx_cycle_fxprof})
endforeach()

# it.race.jdkN: commands that race (two clients at once, dumps at once, a stop racing a loop
# file, a start racing System.exit), each client under a timeout (race_test.sh).
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.race.jdk${_major} race_test.sh ARGS ${FX_JDK_HOME_${_major}} 5
             LABELS it production jdk${_major} TIMEOUT 600
             ENV ${_fx_pr_env} FXPROF=${_fx_cycle_fxprof})
endforeach()
