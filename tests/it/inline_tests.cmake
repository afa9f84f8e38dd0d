# SPDX-License-Identifier: Apache-2.0
# Inlined-method attribution (docs/VALIDATION.md section 4.5), per JDK of tests/it/jdks.sh:
#   it.inline_split.jdk<major>.default  the shipped default (the agent enables CompiledMethodLoad,
#                                       so HotSpot records non-safepoint debug info): the
#                                       reproducer still shows HotSpot's misattribution
#   it.inline_split.jdk<major>.nodns    the same with -XX:-DebugNonSafepoints (the documented
#                                       remedy): the profile's split matches the CPU clock's
# Both run inline_split_test.sh. Labels: it, inline, jdk<major>. java-test/inline is built here
# into build/java-test/fxagent-inline.jar (--release 11, like the other Java workloads).

set(_fx_in_src_dir ${CMAKE_SOURCE_DIR}/java-test/inline)
file(GLOB _fx_in_sources CONFIGURE_DEPENDS ${_fx_in_src_dir}/fxagent/test/*.java)
set(_fx_in_classes ${CMAKE_BINARY_DIR}/java-test/inline-classes)
set(FX_INLINE_JAR ${CMAKE_BINARY_DIR}/java-test/fxagent-inline.jar)
add_custom_command(
  OUTPUT ${FX_INLINE_JAR}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${_fx_in_classes}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_fx_in_classes}
  COMMAND ${FXAGENT_JDK}/bin/javac --release 11 -g -Xlint:all -Werror -d ${_fx_in_classes}
          ${_fx_in_sources}
  COMMAND ${FXAGENT_JDK}/bin/jar --create --file ${FX_INLINE_JAR} -C ${_fx_in_classes} .
  DEPENDS ${_fx_in_sources}
  COMMENT "Building fxagent-inline.jar"
  VERBATIM)
add_custom_target(fxagent_inline_jar ALL DEPENDS ${FX_INLINE_JAR})

execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_in_report RESULT_VARIABLE _fx_in_rc)
string(REGEX REPLACE "\n$" "" _fx_in_report "${_fx_in_report}")
string(REPLACE "\n" ";" _fx_in_lines "${_fx_in_report}")

set(_fx_in_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_in_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_in_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_in_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_in_env
    FXAGENT_LIB=${_fx_in_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_INLINE_JAR=${FX_INLINE_JAR}
    FXCHECK=${_fx_in_check})

foreach(_line IN LISTS _fx_in_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  foreach(_config default nodns)
    set(_t it.inline_split.jdk${_major}.${_config})
    add_test(NAME ${_t}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/inline_split_test.sh ${_home} ${_config})
    set_tests_properties(${_t} PROPERTIES LABELS "it;inline;jdk${_major}" TIMEOUT 240
      ENVIRONMENT "${_fx_in_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  endforeach()
endforeach()
