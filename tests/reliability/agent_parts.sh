#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# style.agent_parts: the rules of agent/'s parts and of core/'s (at the end) (docs/DESIGN-NOTES.md, "The agent's parts"):
#  1. a part includes only its own headers and the public header of a part below it:
#       base <- sampling <- model, validate <- output <- control   (model and validate are peers);
#  2. a part's private headers (internal.h, any header but its public one) stay in its folder;
#  3. no C file over 600 lines, no header over 250;
#  4. no function-local static buffer (`static char x[...]` inside a function): two agent threads
#     calling the function at once would write it together (the engine-name race of issue 15).
#   agent_parts.sh ROOT
set -uo pipefail
root=$(cd "$1" && pwd) || exit 1
cd "$root/agent" || exit 1
declare -A public=([base.h]=base [sample.h]=sampling [sampling.h]=sampling [fx_recover.h]=sampling [compile_task.h]=sampling [receiver.h]=sampling [alloc_walk.h]=sampling
                   [model.h]=model [output.h]=output [validate.h]=validate [control.h]=control)
declare -A below=([base]="" [sampling]="base" [model]="sampling base" [validate]="sampling base"
                  [output]="model sampling base" [control]="output validate model sampling base")
fail=0
say() { echo "style: FAIL: $*"; fail=1; }
for part in "${!below[@]}"; do
    [ -d "$part" ] || { say "agent/$part/ is missing"; continue; }
    for f in "$part"/*.c "$part"/*.h; do
        [ -e "$f" ] || continue
        while IFS= read -r inc; do
            if [ -e "$part/$inc" ]; then
                continue # its own header
            fi
            owner=${public[$inc]:-}
            if [ -z "$owner" ]; then
                for other in "${!below[@]}"; do
                    [ -e "$other/$inc" ] && say "$f includes $inc, private to agent/$other/"
                done
                continue # include/ or a system header
            fi
            case " ${below[$part]} " in
            *" $owner "*) ;;
            *) say "$f ($part) includes $inc of $owner, which is not below it" ;;
            esac
        done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
        n=$(wc -l < "$f")
        case $f in
        *.c) [ "$n" -le 600 ] || say "$f has $n lines (C files: at most 600)" ;;
        *.h) [ "$n" -le 250 ] || say "$f has $n lines (headers: at most 250)" ;;
        esac
        if awk '/^[a-zA-Z].*\)$|^[a-zA-Z].*\) *\{$/ {fn=1} /^\}/ {fn=0}
                fn && /^[ \t]+static[ \t]+(const[ \t]+)?char[ \t]+[a-z_0-9]+[ \t]*\[/ {
                    print FILENAME ":" FNR ": " $0; bad=1 }
                END {exit !bad}' "$f"; then
            say "$f has a function-local static buffer (above)"
        fi
    done
done
for f in *.c *.h; do
    [ -e "$f" ] && say "agent/$f is outside every part"
done
[ "$fail" -eq 0 ] && echo "style: agent/ parts keep their rules"

# core/: the JVM-free core in parts: util <- symbols <- model <- writer <- convert. Their contract is
# include/; a part's own headers are private to it, but for the model's layout
# (core/model/fx_profile_internal.h), which the Firefox writer walks (ARCHITECTURE.md).
cd "$root/core" || exit 1
declare -A core_below=([util]="" [symbols]="util" [model]="util" [writer]="model util" [readers]="util"
                       [convert]="writer util")
declare -A core_friend=([fx_profile_internal.h]=model)
for part in "${!core_below[@]}"; do
    [ -d "$part" ] || { say "core/$part/ is missing"; continue; }
    for f in "$part"/*.c "$part"/*.h; do
        [ -e "$f" ] || continue
        while IFS= read -r inc; do
            [ -e "$part/$inc" ] && continue
            for other in "${!core_below[@]}"; do
                [ -e "$other/$inc" ] || continue
                if [ "${core_friend[$inc]:-}" = "$other" ] && [[ " ${core_below[$part]} " == *" $other "* ]]; then
                    continue
                fi
                say "core/$f includes $inc, private to core/$other/"
            done
        done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
        n=$(wc -l < "$f")
        cap=600
        case $f in *.h) cap=250 ;; esac
        [ "$n" -le "$cap" ] || say "core/$f has $n lines (at most $cap)"
    done
done
for f in *.c *.h; do
    [ -e "$f" ] && say "core/$f is outside every part"
done
[ "$fail" -eq 0 ] && echo "style: core/ parts keep their rules"
exit "$fail"
