# SPDX-License-Identifier: Apache-2.0
# Per-JDK integration tests: the demo under the agent in each mode, threads that never ran
# (tracks_test.sh), a bad option, repeated runs.
# The JDKs are FX_JDK_MAJORS (tests/CMakeLists.txt runs jdks.sh once at configure time).
set(_fx_it_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR})
set(_fx_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_prof $<TARGET_FILE:fxprof>)
endif()

# it.jdks: fails when no JDK can run the tests, so a machine without one is not a silent pass.
add_test(NAME it.jdks COMMAND bash -c
         "r=$(bash '${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh') && echo \"$r\" && grep -q ': used$' <<<\"$r\"")
set_tests_properties(it.jdks PROPERTIES LABELS it TIMEOUT 60)

foreach(_major IN LISTS FX_JDK_MAJORS)
  set(_home ${FX_JDK_HOME_${_major}})
  foreach(_mode cpu itimer wall)
    fx_it_test(it.demo.jdk${_major}.${_mode} demo_test.sh ARGS ${_home} ${_mode}
               LABELS it jdk${_major} TIMEOUT 240 ENV ${_fx_it_env})
  endforeach()
  # Threads that never ran as empty tracks, and fxprof summary's count of them (issue 19).
  fx_it_test(it.tracks.jdk${_major} tracks_test.sh ARGS ${_home}
             LABELS it jdk${_major} TIMEOUT 240 ENV ${_fx_it_env} FXPROF=${_fx_prof})
  fx_it_test(it.bad_option.jdk${_major} bad_option_test.sh ARGS ${_home}
             LABELS it jdk${_major} TIMEOUT 60 ENV ${_fx_it_env})
  fx_it_test(it.repeat.jdk${_major} repeat_test.sh ARGS ${_home} 5
             LABELS it jdk${_major} TIMEOUT 300 ENV ${_fx_it_env})
  # The agent initializes no class itself (tests/it/class_init_test.sh).
  fx_it_test(it.class_init.jdk${_major} class_init_test.sh ARGS ${_home}
             LABELS it jdk${_major} TIMEOUT 120
             ENV ${_fx_it_env} FXAGENT_BENCH_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-bench.jar)
endforeach()
