# SPDX-License-Identifier: Apache-2.0
# Frame types (issue 32 item 1) and honest stack ends (issue 30 item 3), per JDK of
# tests/it/jdks.sh: it.frame_types.jdk<major> runs frame_types_test.sh (three short JVMs of
# java-test/frametypes: -Xint, -XX:TieredStopAtLevel=1, tiered with a dontinline method).
# Labels: it, types, jdk<major>.
file(GLOB _fx_ft_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/java-test/frametypes/fxagent/test/*.java)
fx_java_jar(fxagent_frametypes_jar JAR fxagent-frametypes.jar CLASSES frametypes-classes
            SOURCES ${_fx_ft_sources})
set(_fx_ft_prof "fxprof-not-built")
if(TARGET fxprof)
  set(_fx_ft_prof $<TARGET_FILE:fxprof>)
endif()
set(_fx_ft_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_FRAMETYPES_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-frametypes.jar
    FXPROF=${_fx_ft_prof})

foreach(_major IN LISTS FX_JDK_MAJORS)
  fx_it_test(it.frame_types.jdk${_major} frame_types_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it types jdk${_major} TIMEOUT 240 ENV ${_fx_ft_env})
endforeach()
