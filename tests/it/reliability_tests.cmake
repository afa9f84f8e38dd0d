# SPDX-License-Identifier: Apache-2.0
# Faults and stress (labels "it;faults" and "it;stress"), on every JDK jdks.sh finds:
#   it.fault.<scenario>.jdkN   missing target folder, /dev/full, SIGKILL during a dump,
#                              System.exit during dumps, Runtime.halt, SIGTERM (fault_scenario.sh)
#   it.stress.<scenario>.jdkN  short-lived threads, 200 threads, 10,000 frames, class unloading,
#                              allocation storm (stress_scenario.sh)
# tests/it/stress_repeat.sh N runs all of them N times and counts crashes and failures.
set(_fx_rel_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_STRESS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stress.jar)
set(FXAGENT_FAULT_SCENARIOS missing_dir dev_full sigkill_dump exit_dump halt sigterm)
set(FXAGENT_STRESS_SCENARIOS short concurrent deep unload alloc)

foreach(_major IN LISTS FX_JDK_MAJORS)
  set(_home ${FX_JDK_HOME_${_major}})
  foreach(_sc IN LISTS FXAGENT_FAULT_SCENARIOS)
    fx_it_test(it.fault.${_sc}.jdk${_major} fault_scenario.sh ARGS ${_sc} ${_home}
               LABELS it faults jdk${_major} TIMEOUT 300 ENV ${_fx_rel_env})
  endforeach()
  # short (20 busy threads at a time), concurrent (200) and alloc (4) saturate both cores:
  # under ctest -j2 they run alone, so they cannot starve a neighbour whose test expects its
  # threads to run (a loop period with no samples failed it.loop once beside
  # it.stress.concurrent). deep and unload run one busy thread each (2.3 and 5.3 CPU-s in
  # 30 s and 70 s at load 28, session 24): they run beside another test, as any one-JVM test.
  foreach(_sc IN LISTS FXAGENT_STRESS_SCENARIOS)
    set(_props "")
    if(_sc MATCHES "^(short|concurrent|alloc)$")
      set(_props PROCESSORS 2)
    endif()
    fx_it_test(it.stress.${_sc}.jdk${_major} stress_scenario.sh ARGS ${_sc} ${_home}
               LABELS it stress jdk${_major} TIMEOUT 300 ENV ${_fx_rel_env}
               PROPERTIES ${_props})
  endforeach()
endforeach()
