# SPDX-License-Identifier: Apache-2.0
# Validate mode (docs/VALIDATION.md section 5), per JDK of tests/it/jdks.sh:
#   it.validate.jdk<major>         the demo with validate=REPORT.json (validate_demo_test.sh)
#   it.validate_stress.jdk<major>  AllocStress, 8 threads, 12 s (validate_stress_test.sh)
# Labels: it, validate, jdk<major>. The workloads of java-test/validate are built here into
# build/java-test/fxagent-validate.jar (--release 11, like the other Java workloads).

set(_fx_va_src_dir ${CMAKE_SOURCE_DIR}/java-test/validate)
file(GLOB _fx_va_sources CONFIGURE_DEPENDS ${_fx_va_src_dir}/fxagent/test/*.java)
set(_fx_va_classes ${CMAKE_BINARY_DIR}/java-test/validate-classes)
set(FX_VALIDATE_JAR ${CMAKE_BINARY_DIR}/java-test/fxagent-validate.jar)
add_custom_command(
  OUTPUT ${FX_VALIDATE_JAR}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${_fx_va_classes}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_fx_va_classes}
  COMMAND ${FXAGENT_JDK}/bin/javac --release 11 -g -Xlint:all -Werror -d ${_fx_va_classes}
          ${_fx_va_sources}
  COMMAND ${FXAGENT_JDK}/bin/jar --create --file ${FX_VALIDATE_JAR} -C ${_fx_va_classes} .
  DEPENDS ${_fx_va_sources}
  COMMENT "Building fxagent-validate.jar"
  VERBATIM)
add_custom_target(fxagent_validate_jar ALL DEPENDS ${FX_VALIDATE_JAR})

execute_process(COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jdks.sh
                OUTPUT_VARIABLE _fx_va_report RESULT_VARIABLE _fx_va_rc)
string(REGEX REPLACE "\n$" "" _fx_va_report "${_fx_va_report}")
string(REPLACE "\n" ";" _fx_va_lines "${_fx_va_report}")

set(_fx_va_lib "${CMAKE_BINARY_DIR}/agent/libfxagent.so (target fxagent not defined)")
if(TARGET fxagent)
  set(_fx_va_lib $<TARGET_FILE:fxagent>)
endif()
set(_fx_va_check "fxcheck-not-built")
if(TARGET fxcheck)
  set(_fx_va_check $<TARGET_FILE:fxcheck>)
endif()
set(_fx_va_env
    FXAGENT_LIB=${_fx_va_lib}
    FXAGENT_DEMO_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-demo.jar
    FXAGENT_VALIDATE_JAR=${FX_VALIDATE_JAR}
    FXCHECK=${_fx_va_check})

foreach(_line IN LISTS _fx_va_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_home ${CMAKE_MATCH_2})
  set(_t it.validate.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/validate_demo_test.sh ${_home} 5)
  set_tests_properties(${_t} PROPERTIES LABELS "it;validate;jdk${_major}" TIMEOUT 300
    ENVIRONMENT "${_fx_va_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
  set(_t it.validate_stress.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/validate_stress_test.sh ${_home} 12)
  set_tests_properties(${_t} PROPERTIES LABELS "it;validate;jdk${_major}" TIMEOUT 300
    ENVIRONMENT "${_fx_va_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
endforeach()
