#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.core_is_jvm_free: the core (core/*/*.c, core/*/*.h, include/fx_*.h but the agent's own
# include/fx_agent*.h) includes neither jni.h nor jvmti.h (nor jvmticmlr.h, jni_md.h), directly
# or through an fx_agent*.h header, so it builds and is tested without a JDK (ARCHITECTURE.md).
#   core_is_jvm_free.sh ROOT
set -uo pipefail
root=$1
cd "$root" || exit 1
files=()
for f in core/*/*.c core/*/*.h include/fx_*.h; do
    [ -f "$f" ] || continue
    case "$f" in include/fx_agent*.h) continue ;; esac
    files+=("$f")
done
jvm='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]((jni|jvmti|jvmticmlr|jni_md)\.h|fx_agent[^">]*\.h)[">]'
hits=$(grep -nE "$jvm" "${files[@]}")
echo "style: ${#files[@]} core files checked for JVM headers"
if [ -n "$hits" ]; then
    echo "$hits"
    echo "style: FAIL: the JVM-free core includes JVM headers (move that code to agent/)"
    exit 1
fi
