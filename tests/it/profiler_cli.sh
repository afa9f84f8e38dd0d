# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for driving @firefox-devtools/profiler-cli (0.10.x) from integration tests. Source it.
#
#   pcli_available           true if profiler-cli is on PATH
#   pcli_setup               per-run session dir (PROFILER_CLI_SESSION_DIR) + EXIT trap that stops
#                            every session; callers with their own EXIT trap call pcli_teardown
#   pcli_load FILE           load with retries (see below) into a new named session, which
#                            becomes the current one (its id in PCLI_SESSION); on final failure
#                            prints the output and the session logs and returns 1
#                            (PCLI_LOAD_TRIES, default 4)
#   pcli_wait_ready ID       wait for a daemon that missed its start-up window (see below)
#   pcli_json OUT ARGS...    profiler-cli ARGS [--session $PCLI_SESSION] --json > OUT, failing
#                            unless OUT is valid JSON
#   pcli_thread_handle NAME  prints the handle ("t-3") of the thread named NAME (the session's
#                            thread list asked once per pcli_load session)
#   pcli_thread_json NAME FILE VIEW...
#                            for the one thread named NAME, writes each VIEW (functions,
#                            samples, top-down) with idle samples included to FILE with "%s"
#                            replaced by VIEW (what the share checks read through
#                            tests/it/profile_lib.py); on failure says which and returns 1
#
# Why the retries: `load` waits a fixed 500 ms for the daemon's socket; on a busy 2-core machine
# that window is missed now and then although the daemon goes on to load the file
# (PROFILE-FORMAT.md §17.1). At load average 12 on 2 cores four fresh starts in a row all missed
# it, so after a miss pcli_load first waits for that daemon (`status`), and only if it never
# answers stops it and starts again. A refused file fails at once, with the front-end's reason.
#
# JSON shapes relied upon (checked against profiler-cli 0.10.0; every reply also has "type" and
# a "context" object):
#   thread list --json         {"type":"thread-list","threads":[{"threadHandle":"t-0",
#                               "threadIndex":0,"name":"main","processName":..,"pid":"12345",
#                               "tid":12346,"cpuMs":2.05,"markerCount":1,"selected":true}],
#                               "totalThreadCount":2,...}
#                              cpuMs = sum of threadCPUDelta[1..] in ms (element 0 is ignored)
#   thread info --json         {"threadHandle","name","tid","sampleCount","markerCount",...}
#   thread samples-top-down --json [--include-idle] [--max-lines N]
#                              {"regularCallTree":{"name":"<root>","totalSamples":4,
#                               "totalPercentage":100,"children":[{"name":"com.example.App.main",
#                               "functionIndex":0,"totalSamples":4,"totalPercentage":100,
#                               "selfSamples":2,"selfPercentage":50,"children":[...]}]},
#                               "activeOnly":true,...}   (idle-category samples are left out
#                               unless --include-idle)
#   thread functions --json --include-idle --limit 0
#                              {"functions":[{"name":..,"nameWithLibrary":"app.jar!..",
#                               "library":"app.jar","selfSamples":2,"totalSamples":4,
#                               "selfPercentage":50,"totalPercentage":100}],...}
#   thread samples --json      {"categoryBreakdown":{"totalSamples":200,"categories":[{"name":
#                               "Idle","samples":100,"subcategories":[...]}]},
#                               "topFunctionsByTotal":[...],...}
#   thread markers --list --json
#                              {"totalMarkerCount":1,"flatMarkers":[{"handle":"m-1","name":
#                               "GC pause","label":"<tableLabel rendered>","start":2.6,
#                               "duration":0.8 (absent for instants),"hasStack":false,
#                               "category":"GC","markerType":"JvmGcPause" (absent without data),
#                               "fields":[{"key","label","value","formattedValue"}]}],
#                               "byType":[...]}   (a phase 2/3 pair is one marker)
#   counter list --json        {"counters":[{"counterHandle":"c-0","name":"Java heap used",
#                               "label":..,"category":"Memory","unit":"bytes","graphType":
#                               "line-accumulated","color":"orange","pid":"12345",
#                               "rangeSampleCount":3,"graph":[...]}]}
#   profile info --json        {"threadCount":2,"processes":[{"pid","name","cpuMs","threads":
#                               [{"threadIndex","threadHandle","name","tid","cpuMs"}]}],...}
#   profile meta --json        {"interval":1,"product":..,"startTime":..,"importedFrom":..,
#                               "preprocessedProfileVersion":75 (after upgrading our 66),
#                               "sampleUnits":{..},"extra":[{"label":..,"entries":[{"label",
#                               "value","formatted"}]}]}
#   profile meta (text)        "Recording:", "Application:", "Platform:", then one block per
#                              meta.extra group
# Quirks seen: marker handles (m-N) exist only after a `thread markers` listing; a marker data
# key named "cause" holding text breaks `marker info` (data.cause is the marker's stack).

pcli_available() {
    command -v profiler-cli >/dev/null 2>&1
}

pcli_teardown() {
    [[ -n "${PROFILER_CLI_SESSION_DIR:-}" ]] || return 0
    profiler-cli stop --all >/dev/null 2>&1 || true
    case "$PROFILER_CLI_SESSION_DIR" in
    /tmp/pcli.*) rm -rf "$PROFILER_CLI_SESSION_DIR" ;;
    esac
}

pcli_setup() {
    # Short and per run: the daemon's socket lives here and must fit the 107-byte Unix limit.
    PROFILER_CLI_SESSION_DIR=$(mktemp -d /tmp/pcli.XXXX)
    export PROFILER_CLI_SESSION_DIR
    trap pcli_teardown EXIT
}

# After a missed start-up window the daemon goes on loading; `status --session ID` then answers
# once the profile is loaded, or says "Profile load failed: ..." if it was refused (verified with
# 0.10.0). The session is named explicitly: until the new daemon listens, the current session
# is still the previous one, which would answer instead.
# Returns 0 when the session became ready, 1 when the file was refused, 2 when the daemon died or
# never answered within PCLI_READY_TIMEOUT seconds (default 60).
pcli_wait_ready() {
    local id=$1 deadline=$((SECONDS + ${PCLI_READY_TIMEOUT:-60})) out
    while ((SECONDS < deadline)); do
        if out=$(profiler-cli status --session "$id" 2>&1); then
            return 0
        fi
        if grep -q "Profile load failed" <<<"$out"; then
            echo "$out" >&2
            return 1
        fi
        if grep -q -e "failed to start" -e "Unknown session" <<<"$out"; then
            break
        fi
        sleep 1
    done
    echo "pcli_wait_ready: session $id did not answer: $out" >&2
    return 2
}

pcli_load() {
    local file=$1 try out tries=${PCLI_LOAD_TRIES:-4} ready id
    [[ -n "${PROFILER_CLI_SESSION_DIR:-}" ]] || pcli_setup
    for ((try = 1; try <= tries; try++)); do
        id=fx$$-$RANDOM-$try
        rm -f "$PROFILER_CLI_SESSION_DIR/$id.threads" # pcli_thread_handle's, of a reused id
        if out=$(profiler-cli load "$file" --session "$id" 2>&1); then
            export PCLI_SESSION=$id
            return 0
        fi
        echo "pcli_load: attempt $try: $(head -n 2 <<<"$out" | tail -n 1)" >&2
        if grep -q "did not become ready" <<<"$out"; then
            ready=0
            pcli_wait_ready "$id" || ready=$?
            if [[ $ready -eq 0 ]]; then
                # The daemon made itself current when it started listening; say so explicitly
                # in case a dying earlier daemon took the current marker with it.
                profiler-cli session use "$id" >/dev/null
                export PCLI_SESSION=$id
                echo "pcli_load: session $id became ready after all" >&2
                return 0
            fi
            [[ $ready -eq 1 ]] && break # refused: retrying cannot help
        fi
        profiler-cli stop --all >/dev/null 2>&1 || true
        ((try < tries)) && sleep 1
    done
    echo "pcli_load: profiler-cli could not load $file; last output:" >&2
    echo "$out" >&2
    local log
    for log in "$PROFILER_CLI_SESSION_DIR"/*.log; do
        [[ -f "$log" ]] || continue
        echo "--- $log" >&2
        tail -n 40 "$log" >&2
    done
    return 1
}

pcli_json() {
    local out=$1
    shift
    local session=()
    [[ -n "${PCLI_SESSION:-}" ]] && session=(--session "$PCLI_SESSION")
    # profiler-cli's daemon, starved on a loaded machine, can fail a session's check and ask
    # for the command again ("... is responding again. Please retry the command."): once more
    if ! profiler-cli "$@" "${session[@]}" --json >"$out" 2>"$out.err" &&
        ! { grep -q 'Please retry the command' "$out.err" &&
            echo "pcli_json: retrying: $(head -c 200 "$out.err")" >&2 &&
            profiler-cli "$@" "${session[@]}" --json >"$out" 2>"$out.err"; }; then
        echo "pcli_json: 'profiler-cli $* --json' failed: $(cat "$out.err")" >&2
        return 1
    fi
    if ! python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$out"; then
        echo "pcli_json: 'profiler-cli $* --json' did not print JSON: $(head -c 300 "$out")" >&2
        return 1
    fi
    rm -f "$out.err"
}

pcli_thread_handle() {
    # A loaded profile's threads do not change: with a named session (pcli_load's) the list is
    # asked once and kept beside the session (each profiler-cli call starts node, 0.5-1.5 s on a
    # loaded 2-core machine: it.wall_native asked for it once per thread, 9 times).
    local list keep=
    if [[ -n ${PCLI_SESSION:-} && -n ${PROFILER_CLI_SESSION_DIR:-} ]]; then
        # not *.json: profiler-cli takes every NAME.json there for a session's metadata
        list=$PROFILER_CLI_SESSION_DIR/$PCLI_SESSION.threads
        keep=1
    else
        list=$(mktemp -t pcli-threads.XXXXXX)
    fi
    if [[ -z $keep || ! -s $list ]]; then
        pcli_json "$list" thread list || { rm -f "$list"; return 1; }
    fi
    python3 - "$list" "$1" <<'PY'
import json, sys
threads = json.load(open(sys.argv[1], encoding="utf-8"))["threads"]
found = [t["threadHandle"] for t in threads if t["name"] == sys.argv[2]]
if len(found) != 1:
    sys.exit(f"pcli_thread_handle: {len(found)} threads named {sys.argv[2]!r}: "
             f"{[t['name'] for t in threads]}")
print(found[0])
PY
    local rc=$?
    [[ -n $keep ]] || rm -f "$list"
    return $rc
}

pcli_thread_json() {
    local name=$1 file=$2 handle view args
    shift 2
    handle=$(pcli_thread_handle "$name") || return 1
    for view in "$@"; do
        case $view in
        functions) args=(thread functions --thread "$handle" --include-idle --limit 0) ;;
        samples) args=(thread samples --thread "$handle" --include-idle) ;;
        top-down) args=(thread samples-top-down --thread "$handle" --include-idle) ;;
        *) echo "pcli_thread_json: unknown view '$view'" >&2; return 1 ;;
        esac
        pcli_json "${file/\%s/$view}" "${args[@]}" || {
            echo "pcli_thread_json: profiler-cli ${args[*]:0:2} failed for thread '$name'" >&2
            return 1
        }
    done
}
