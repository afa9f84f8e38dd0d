# SPDX-License-Identifier: Apache-2.0
# Agent misuse (label "it;misuse"), on every JDK jdks.sh finds: it.misuse.<scenario>.jdkN runs
# tests/it/misuse_scenario.sh (a device, FIFO, /proc fd link, block device, socket, folder or a
# file that is not a profile as file=, and the agent loaded twice, 50 times).
# docs/RELIABILITY.md, "Misuse: the agent".
set(_fx_mis_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_STRESS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stress.jar)
set(FXAGENT_MISUSE_SCENARIOS chardev fifo stdout refused folder notours twice)

foreach(_major IN LISTS FX_JDK_MAJORS)
  set(_home ${FX_JDK_HOME_${_major}})
  # twice runs two JVMs at a time, each only starting and stopping (spin 0 s): ~1.2 cores on
  # average (46 CPU-s in 39 s, less the local pyenv shim's python), as much as a test with one
  # busy JVM; it ran alone (PROCESSORS 2), 75 s of the suite's wall time on two JDKs.
  foreach(_sc IN LISTS FXAGENT_MISUSE_SCENARIOS)
    fx_it_test(it.misuse.${_sc}.jdk${_major} misuse_scenario.sh ARGS ${_sc} ${_home}
               LABELS it misuse jdk${_major} TIMEOUT 600 ENV ${_fx_mis_env})
  endforeach()
endforeach()
