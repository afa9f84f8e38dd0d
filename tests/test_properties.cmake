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

# COST orders the tests under ctest -j2 where no CTestCostData.txt exists yet (CI's fresh build):
# longest first, so that the last tests beside the PROCESSORS 2 ones, which run when nothing
# else is left, are short. Seconds of each test of 20 s or more in session 23's full run
# (load ~8); a test missing here starts in registration order, possibly last.
function(fx_apply_test_costs)
foreach(_fx_cost "it.vthreads.jdk25=175" "san.asan_ubsan=161" "it.cycle.jdk17=118"
                "it.race.jdk25=109" "it.race.jdk17=108" "it.cycle.jdk25=105" "it.jfr.jdk25=82"
                "it.attach.jdk25=82" "san.asan_cycle=81" "it.wall_native.jdk17=77"
                "it.fxprof_sources=77" "it.wall_native.jdk25=75" "it.attach.jdk17=72"
                "it.mixed_stacks.jdk25=63" "it.alloc.jdk17.attach=62" "it.mixed_stacks.jdk17=60"
                "it.vm_threads.jdk17=60" "san.valgrind_unit.sort=58" "it.demo.jdk25.cpu=58"
                "it.vm_threads.jdk25=58" "it.push.jdk17=52" "san.valgrind_unit.textmap=50"
                "san.valgrind_unit.ff_writer=49" "jtreg.jdk25=48" "it.push.jdk25=48"
                "it.fxprof_list_record=48" "it.loop.jdk25=46" "san.valgrind_unit.gzip=46"
                "it.loop.jdk17=45" "it.alloc.jdk25.attach=45" "it.locks.jdk17=45"
                "style.shell_quoting=43" "it.fault.sigkill_dump.jdk17=42"
                "it.fault.sigkill_dump.jdk25=41" "it.jfr.jdk17=39" "jtreg.jdk17=39"
                "it.vthreads_frozen.jdk25=39" "it.misuse.twice.jdk17=39"
                "it.attach_agentpath.jdk25=39" "it.attach_agentpath.jdk17=38"
                "it.demo.jdk17.cpu=38" "it.writer_profiler_cli=38" "it.demo.jdk17.wall=37"
                "it.demo.jdk25.wall=37" "it.demo.jdk17.itimer=36" "it.misuse.twice.jdk25=36"
                "it.repeat.jdk17=35" "it.fxprof_real_agent=35" "it.demo.jdk25.itimer=34"
                "it.stub_stacks.jdk25=33" "fuzz.jfr=33" "fuzz.jfr_convert=32"
                "fuzz.profile_writer=32" "it.locks.jdk25=32" "fuzz.json_string=32"
                "fuzz.options=32" "it.stub_stacks.jdk17=30" "it.stack_shape.jdk25=29"
                "it.tracks.jdk17=28" "it.kernel_stacks.jdk25=27" "it.tracks.jdk25=26"
                "it.stack_shape.jdk17=26" "san.valgrind_unit.ring=25" "it.markers.jdk25=25"
                "san.valgrind_unit.elfsym=24" "it.vthreads_validate.jdk25=22"
                "san.valgrind_unit.profile_window=22" "it.alloc.jdk17.live=21"
                "it.markers.jdk17=21" "it.alloc.jdk25.live=21" "it.fxprof_attach_disabled=21"
                "it.kernel_stacks.jdk17=20" "it.repeat.jdk25=20")
  string(REPLACE "=" ";" _fx_pair ${_fx_cost})
  list(GET _fx_pair 0 _fx_name)
  list(GET _fx_pair 1 _fx_seconds)
  if(TEST ${_fx_name})
    set_tests_properties(${_fx_name} PROPERTIES COST ${_fx_seconds})
  endif()
endforeach()
endfunction()
