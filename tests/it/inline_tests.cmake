# SPDX-License-Identifier: Apache-2.0
# Inlined-method attribution (docs/VALIDATION.md section 4.5), per JDK of tests/it/jdks.sh:
#   it.inline_split.jdk<major>.default  the shipped default (the agent enables CompiledMethodLoad,
#                                       so HotSpot records non-safepoint debug info): the
#                                       reproducer still shows HotSpot's misattribution
#   it.inline_split.jdk<major>.nodns    the same with -XX:-DebugNonSafepoints (the documented
#                                       remedy): the profile's split matches the CPU clock's
# Both run inline_split_test.sh. Labels: it, inline, jdk<major>. java-test/inline is built here
# into build/java-test/fxagent-inline.jar by fx_java_jar, like the other Java workloads.
file(GLOB _fx_in_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/java-test/inline/fxagent/test/*.java)
fx_java_jar(fxagent_inline_jar JAR fxagent-inline.jar CLASSES inline-classes
            SOURCES ${_fx_in_sources})
set(_fx_in_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_INLINE_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-inline.jar)

foreach(_major IN LISTS FX_JDK_MAJORS)
  foreach(_config default nodns)
    fx_it_test(it.inline_split.jdk${_major}.${_config} inline_split_test.sh
               ARGS ${FX_JDK_HOME_${_major}} ${_config}
               LABELS it inline jdk${_major} TIMEOUT 240 ENV ${_fx_in_env})
  endforeach()
endforeach()
