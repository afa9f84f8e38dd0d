# SPDX-License-Identifier: Apache-2.0
# Properties every test directory gives its tests at its end (CMake 3.25 sees a test only in
# the directory that adds it): included by the top-level CMakeLists.txt before any test exists.

# A newcomer finds a part's tests by name (issue 36 item 5): `ctest -L agent.sampling` runs the
# tests agent/sampling/sampling.h names ("Tests: ..."), `ctest -L core.writer` the unit.<module>
# of core/writer/ and the tests its modules name. The labels come from those lines, so the map
# of tests stays in the files it describes; style.tests_by_name checks that every part has some.
function(fx_apply_part_labels)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  set(_pairs)
  foreach(_p base sampling model output validate control)
    list(APPEND _pairs "agent.${_p}|${CMAKE_SOURCE_DIR}/agent/${_p}/${_p}.h|")
  endforeach()
  file(GLOB _core_sources ${CMAKE_SOURCE_DIR}/core/*/*.c)
  foreach(_f ${_core_sources})
    get_filename_component(_dir ${_f} DIRECTORY)
    get_filename_component(_part ${_dir} NAME)
    get_filename_component(_m ${_f} NAME_WE)
    list(APPEND _pairs "core.${_part}|${_f}|unit.${_m}")
  endforeach()
  foreach(_pair ${_pairs})
    string(REPLACE "|" ";" _pair "${_pair}")
    list(GET _pair 0 _label)
    list(GET _pair 1 _file)
    list(GET _pair 2 _names)
    file(READ ${_file} _head LIMIT 2000)
    if(_head MATCHES "Tests: *([^*]*)")
      string(REPLACE "," ";" _more "${CMAKE_MATCH_1}")
      list(APPEND _names ${_more})
    endif()
    foreach(_n ${_names})
      string(STRIP "${_n}" _n)
      string(REGEX REPLACE "[. \n]+$" "" _n "${_n}")
      if(_n STREQUAL "")
        continue()
      endif()
      string(REPLACE "." "\\." _re "${_n}")
      foreach(_t ${_tests})
        if(_t STREQUAL _n OR _t MATCHES "^${_re}\\.")
          set_property(TEST ${_t} APPEND PROPERTY LABELS ${_label})
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()

function(fx_apply_test_costs)
foreach(_fx_cost "san.valgrind_unit.gzip=74" "san.valgrind_unit.ff_writer=33"
                 "san.valgrind_unit.sort=60" "san.valgrind_unit.textmap=30" "jtreg.jdk25=60"
                 "it.vthreads.jdk25=100" "san.asan_cycle=100" "it.race.jdk25=110" "it.race.jdk17=85"
                 "it.cycle.jdk25=95" "it.cycle.jdk17=90" "san.asan_ubsan=61" "fuzz.profile_writer=31"
                 "fuzz.jfr=31" "fuzz.jfr_convert=31" "fuzz.json_string=31" "jtreg.jdk17=60"
                 "it.vm_threads.jdk25=50" "it.vm_threads.jdk17=48" "it.push.jdk25=70"
                 "it.attach.jdk17=65" "it.attach.jdk25=64" "it.fxprof_sources=62"
                 "it.fxprof_list_record=60" "it.mixed_stacks.jdk17=62" "it.mixed_stacks.jdk25=59"
                 "it.wall_native.jdk25=55" "it.wall_native.jdk17=55" "it.loop.jdk17=52"
                 "it.loop.jdk25=51" "it.fault.sigkill_dump.jdk17=50")
  string(REPLACE "=" ";" _fx_pair ${_fx_cost})
  list(GET _fx_pair 0 _fx_name)
  list(GET _fx_pair 1 _fx_seconds)
  if(TEST ${_fx_name})
    set_tests_properties(${_fx_name} PROPERTIES COST ${_fx_seconds})
  endif()
endforeach()
endfunction()
