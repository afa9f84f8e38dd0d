# SPDX-License-Identifier: Apache-2.0
# Issue 16's mixed-mode workloads (java-test/mixed), for now a smoke test per JDK:
#   it.mixed_workloads.jdk<major>  JNI burn, Deflater level 9 and one-byte /dev/null writes each
#                                  run for a second and prove they worked (mixed_workloads_test.sh)
# Labels: it, mixed, jdk<major>. The jar and libfxmixed.so come from java-test/mixed; the JDKs
# are jdk_tests.cmake's (_fx_jdk_lines, included first by tests/it/CMakeLists.txt).
set(_fx_mx_lib "${CMAKE_BINARY_DIR}/java-test/libfxmixed.so (target fxmixed not defined)")
if(TARGET fxmixed)
  set(_fx_mx_lib $<TARGET_FILE:fxmixed>)
endif()
set(_fx_mx_env
    FXAGENT_MIXED_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-mixed.jar
    FXAGENT_MIXED_LIB=${_fx_mx_lib})

foreach(_line IN LISTS _fx_jdk_lines)
  if(NOT _line MATCHES "^JDK ([0-9]+) at (.*): used$")
    continue()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(_t it.mixed_workloads.jdk${_major})
  add_test(NAME ${_t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mixed_workloads_test.sh
           ${CMAKE_MATCH_2})
  set_tests_properties(${_t} PROPERTIES LABELS "it;mixed;jdk${_major}" TIMEOUT 120
    ENVIRONMENT "${_fx_mx_env};FXAGENT_RUN_DIR=${CMAKE_CURRENT_BINARY_DIR}/run/${_t}")
endforeach()
