# SPDX-License-Identifier: Apache-2.0
# Stacks of everyday (megamorphic) code, issue 20 (docs/VALIDATION.md section 7):
#   it.stack_shape.jdk<major>  java-test/stacks (fxagent.stacks.Mega) under the agent in cpu mode,
#                              checked by the shape oracle and the recovered-stack oracle
#                              (tests/it/stack_shape_test.sh, stack_shape_check.py), the receiver
#                              classes under its dispatch stubs, and fxagent.stacks.Numbers:
#                              async-profiler's VtableTests case (issue 32 item 3), and
#                              fxagent.stacks.Suppliers (itable stub over lambdas); both with
#                              RecoveryTests' bounds (collapsed_ratio.py, docs/VALIDATION.md 9)
#   it.stub_stacks.jdk<major> java-test/stacks (fxagent.stacks.Stubs): samples in arraycopy and
#                              intrinsic stubs, and the System.currentTimeMillis loop (native code
#                              called as a leaf): failure pseudo-frames <= 0.5 % (issue 32;
#                              tests/it/stub_stacks_test.sh, stub_stacks_check.py); a static
#                              initializer the VM runs under a C1 stub's frame, walked below
#   it.interp_entry.jdk<major> java-test/stacks (fxagent.stacks.Interp) under -Xint: stacks
#                              recovered in the interpreter's method entries, each at an
#                              ordinary call site of its entered method (tests/it/
#                              interp_entry_test.sh, interp_entry_check.py)
#   it.stack_oracle_selftest   the oracle on synthetic profiles: it must reject a recovered stack
#                              seen at no ordinary call site, a recovered frame under an ordinary
#                              one, a counter that disagrees, failure frames, a native root
#                              not the thread's start chain, call-stub roots and a Java root with
#                              nothing below it (no JVM needed)
# Labels: it, stacks, jdk<major>. The jar is built by java-test/CMakeLists.txt.
set(_fx_st_env ${FX_IT_ENV} FXAGENT_DEMO_JAR=${FX_IT_DEMO_JAR}
    FXAGENT_STACKS_JAR=${CMAKE_BINARY_DIR}/java-test/fxagent-stacks.jar)

add_test(NAME it.stack_oracle_selftest
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/stack_oracle_selftest.py)
set_tests_properties(it.stack_oracle_selftest PROPERTIES LABELS "it;stacks" TIMEOUT 60)

foreach(_major IN LISTS FX_JDK_MAJORS)
  # 480 s: its JVMs run longer on a loaded machine (java-test/stacks' Budget.java), and so do
  # profiler-cli and the checkers: 205-224 s at load 13-19, two timeouts at 240 s at load ~20
  # (session 20: 75 s in profiler-cli, ~35 s before the first JVM's agent started)
  fx_it_test(it.stack_shape.jdk${_major} stack_shape_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it stacks jdk${_major} TIMEOUT 480 ENV ${_fx_st_env})
  # 480 s: its eight JVMs run longer on a loaded machine (Budget.java: 71 s at load 23, 10 s in
  # CI; session 20: 106-140 s at load 11-17)
  fx_it_test(it.stub_stacks.jdk${_major} stub_stacks_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it stacks jdk${_major} TIMEOUT 480 ENV ${_fx_st_env})
  fx_it_test(it.interp_entry.jdk${_major} interp_entry_test.sh ARGS ${FX_JDK_HOME_${_major}}
             LABELS it stacks jdk${_major} TIMEOUT 120 ENV ${_fx_st_env})
endforeach()
