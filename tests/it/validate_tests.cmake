# SPDX-License-Identifier: Apache-2.0
# Validate mode (docs/VALIDATION.md section 5), per JDK of tests/it/jdks.sh:
#   it.validate.jdk<major>         the demo with validate=REPORT.json (validate_demo_test.sh)
#   it.validate_stress.jdk<major>  AllocStress, 8 threads, 12 s (validate_stress_test.sh)
#   it.validate_recovered.jdk<major>  BigAlloc, 2 threads, 6 s: recovered stacks and the anchor
#                                  walk compared too (validate_recovered_test.sh)
# Labels: it, validate, jdk<major>. The workloads of java-test/validate are built here into
# build/java-test/fxagent-validate.jar by fx_java_jar, like the other Java workloads.
file(GLOB _fx_va_sources CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/java-test/validate/fxagent/test/*.java)
fx_java_jar(fxagent_validate_jar JAR fxagent-validate.jar CLASSES validate-classes
            SOURCES ${_fx_va_sources})
set(_fx_va_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_VALIDATE_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-validate.jar)

foreach(_major IN LISTS FX_JDK_MAJORS)
  set(_home ${FX_JDK_HOME_${_major}})
  fx_it_test(it.validate.jdk${_major} validate_demo_test.sh ARGS ${_home} 5
             LABELS it validate jdk${_major} TIMEOUT 300 ENV ${_fx_va_env})
  fx_it_test(it.validate_stress.jdk${_major} validate_stress_test.sh ARGS ${_home} 12
             LABELS it validate jdk${_major} TIMEOUT 300 ENV ${_fx_va_env})
  fx_it_test(it.validate_recovered.jdk${_major} validate_recovered_test.sh ARGS ${_home} 6
             LABELS it validate jdk${_major} TIMEOUT 300 ENV ${_fx_va_env})
endforeach()
