# SPDX-License-Identifier: Apache-2.0
# Marker tests (label "markers"): on every JDK jdks.sh finds,
#   it.markers.jdkN      MarkersWorkload under the agent, checked by markers_check.py
#   it.markers_dump.jdkN with loop=1s each file shows the dump before it ("fxagent dump")
#   it.markers_off.jdkN  fxagent.Markers without the agent, and the agent with markers=off
#   it.trace.jdkN        fxagent.TraceContext (issue 33; below)
# and once, JVM-free:
#   it.markers_100k      100,000 JIT markers written by the real writer load in profiler-cli
set(_fx_mk_env ${FX_IT_ENV} FXAGENT_MARKERS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-markers.jar)

foreach(_major IN LISTS FX_JDK_MAJORS)
  set(_home ${FX_JDK_HOME_${_major}})
  fx_it_test(it.markers.jdk${_major} markers_test.sh ARGS ${_home} 5
             LABELS it markers jdk${_major} TIMEOUT 300 ENV ${_fx_mk_env})
  fx_it_test(it.markers_dump.jdk${_major} markers_dump_test.sh ARGS ${_home}
             LABELS it markers jdk${_major} TIMEOUT 240 ENV ${_fx_mk_env})
  fx_it_test(it.markers_off.jdk${_major} markers_off_test.sh ARGS ${_home}
             LABELS it markers jdk${_major} TIMEOUT 240 ENV ${_fx_mk_env})
endforeach()

add_executable(fxmarkers_synth ${CMAKE_CURRENT_SOURCE_DIR}/markers_synth.c)
target_compile_options(fxmarkers_synth PRIVATE ${FX_WARNINGS})
target_link_libraries(fxmarkers_synth PRIVATE fxcore)
fx_it_test(it.markers_100k markers_100k_test.sh LABELS it markers TIMEOUT 600
           ENV FXMARKERS_SYNTH=$<TARGET_FILE:fxmarkers_synth> FXCHECK=${FX_IT_CHECK}
           PROPERTIES SKIP_RETURN_CODE 77)

# Issue 33 item 4: fxagent.TraceContext (tests/it/trace_test.sh, trace_check.py):
#   it.trace.jdkN  TraceWorkload without the agent (no-ops, misuse throws), then under the agent
#                  with push=: its spans in the Firefox markers, pprof labels, OTLP links, and the
#                  pushed request equal to fxprof convert --to otlp
foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.trace.jdk${_major} trace_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it markers trace jdk${_major} TIMEOUT 180
             ENV ${_fx_mk_env} FXPROF=$<TARGET_FILE:fxprof>)
endforeach()
