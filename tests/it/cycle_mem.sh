# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The memory split of it.cycle (issue 23), sourced by cycle_test.sh: where a cycled JVM's RSS
# went, by measurement, so that the check fails on the agent's growth and not on the JVM's. The
# JVM's anonymous RSS moves by megabytes with its own work (JIT, metaspace, GC: JDK 17 +8.3 MiB
# over 990 cycles while the agent's own count rose 69 KiB), so each reading splits it:
#   * the JVM's own native memory: NMT's committed total (-XX:NativeMemoryTracking=summary), and
#     the part of it that is malloc'd (the total less the mapped categories);
#   * the agent's own count (status: heap and pages, core/util/alloc.c);
#   * malloc that neither counts: the process's malloc in use (status, glibc's mallinfo2 over
#     every arena) less the JVM's malloc (NMT) less the agent's heap: what libraries allocate
#     outside both, and a leak of the agent that bypasses fx_alloc (the check of this file);
#   * the rest of the anonymous RSS: the RSS less the JVM's and the agent's counts: untrimmed
#     free pages and fragmentation of glibc's arenas, thread stacks outside NMT, and any leak of
#     the agent in pages (the second check).
# With FXAGENT_CYCLE_CONTROL=1, a control JVM (the same workload on the same phases, no agent,
# `nice -n 10` so that it takes little of the cycled JVM's CPU) is read at the same moments: the
# JVM's own growth over the same time, without the agent.
# Needs from cycle_test.sh: IT_JDK, IT_NAME, PID, CTL (the control's pid or empty), cmd, REPLY.

declare -A MEM
MEM_KEYS="rss anon nmt nmt_malloc heap pages unwind malloc ctl_rss ctl_anon ctl_nmt"

mem_rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
mem_anon_kib() { sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
# glibc keeps the pages of freed memory until something trims: the agent trims at each stop,
# but a C2 compilation after it (its arena chunks are malloc'd, ~5 MiB, then freed) leaves them
# resident, and the RSS read 0.5 s later was 5 MiB higher or lower by chance (it.cycle.jdk25
# failed so in CI). The JVM's own trim (JDK 17.0.9+, 21+) before each reading makes both
# readings count memory in use, which is what the bounds are about. mem_trim_nmt PID FILE: the
# trim, then NMT's summary into FILE, by one jcmd (each jcmd is a JVM start: ~1 s here).
mem_trim_nmt() {
    printf 'System.trim_native_heap\nVM.native_memory summary\n' >"$2.cmds"
    "$IT_JDK/bin/jcmd" "$1" -f "$2.cmds" >"$2" 2>&1 || true
}
# The least of five readings 0.3 s apart, after mem_trim_nmt: the churn thread's short-lived
# threads (their stacks) and a GC's transient pages come and go; what stays is what the bounds
# are about.
mem_rss_settled_kib() {
    local m r
    m=$(mem_rss_kib "$1")
    ((${mem_wait:-1})) || { echo "$m" && return 0; }
    for _ in 1 2 3 4; do
        sleep 0.3
        r=$(mem_rss_kib "$1")
        ((r < m)) && m=$r
    done
    echo "$m"
}
# The process's malloc in use (status), the least of REPLY's (a status) and of twelve more
# read 0.5 s apart (run in $(...): REPLY stays the first status). HotSpot's chunk pool keeps the arena
# chunks of a finished compilation (or of jcmd's own work) malloc'd until its cleaner, every
# 5 s, frees them: a stopped agent's JVM read 10,002 KiB in use, then 8,120 KiB 1.5 s later
# with the agent's heap unmoved, and one CI reading 2.5 s after a stop counted 626 KiB more
# than the warm-up's (other runs: -325 to +66). Such chunks are in glibc's figure but not in
# the JVM's malloc as mem_nmt_kib reads it; a leak stays in every reading, a pool's transient
# not past its cleaner.
mem_malloc_settled_kib() {
    local m r i
    m=$(sed -n 's/.*process malloc \([0-9]*\) KiB in use.*/\1/p' <<<"$REPLY")
    [[ -n $m ]] || return 0
    for ((i = 0; i < (${mem_wait:-1} ? 12 : 0); i++)); do
        sleep 0.5
        cmd status
        r=$(sed -n 's/.*process malloc \([0-9]*\) KiB in use.*/\1/p' <<<"$REPLY")
        [[ -n $r ]] && ((r < m)) && m=$r
    done
    echo "$m"
}
# NMT summary FILE -> "COMMITTED MALLOC" in KiB: the total committed, and that less what the
# categories map (mmap, thread stacks) and less the Arena Chunk category's malloc: the JVM's
# malloc and NMT's own headers. The arena chunks are left out as NMT counts them, not as glibc
# does: their pool's 0.4-1.5 MiB freed between two readings left glibc's in-use unmoved (JDK 17
# and 25, 30 cycles), so they made 0.4-1.5 MiB of malloc "that neither counts".
mem_nmt_kib() {
    awk '/^Total: / && match($0, /committed=[0-9]+KB/) { total = substr($0, RSTART + 10, RLENGTH - 12) }
         /^-.*\(reserved=/ { chunk = ($0 ~ /Arena Chunk \(/) }
         /\((mmap|stack): reserved=[0-9]+KB, committed=[0-9]+KB/ {
             match($0, /committed=[0-9]+KB/); mapped += substr($0, RSTART + 10, RLENGTH - 12) }
         chunk && /\(malloc=[0-9]+KB/ { match($0, /malloc=[0-9]+KB/); chunks += substr($0, RSTART + 7, RLENGTH - 9) }
         END { if (total != "") print total, total - mapped - chunks }' "$1"
}
# NMT's categories whose committed memory moved by 64 KiB or more between two summaries.
mem_nmt_moves() {
    awk 'function cat(line,   c) {
             c = line; sub(/^-[[:space:]]*/, "", c); sub(/[[:space:]]*\(reserved=.*/, "", c); return c }
         function kib(line) { match(line, /committed=[0-9]+KB/); return substr(line, RSTART + 10, RLENGTH - 12) }
         /^-.*\(reserved=[0-9]+KB, committed=[0-9]+KB/ {
             if (FNR == NR) a[cat($0)] = kib($0); else { b[cat($0)] = kib($0); seen[cat($0)] = 1 } }
         END { for (c in a) seen[c] = 1
               for (c in seen) { d = b[c] - a[c]; if (d >= 64 || d <= -64) printf "%s%s %+d", (n++ ? ", " : ""), c, d }
               if (!n) printf "none" }' "$1" "$2"
}

# The mappings whose anonymous memory grew most between two copies of /proc/PID/smaps, by
# start address (a glibc arena's mapping grows at its end): where the rest is (glibc's thread
# arenas are 64 MiB-aligned mappings, [heap] is its main arena).
mem_smaps_moves() {
    awk '/^[0-9a-f]+-[0-9a-f]+ / { key = $1; sub(/-.*/, "", key); name[key] = ($6 == "" ? "anon" : $6) }
         /^Anonymous:/ { if (FNR == NR) a[key] = $2; else b[key] = $2 }
         END { for (k in b) if (b[k] - a[k] >= 256) print b[k] - a[k], k, name[k] }' "$1" "$2" |
        sort -rn | head -n 6 | awk '{ printf "%s%s %s +%d", (n++ ? ", " : ""), $2, $3, $1 } END { if (!n) printf "none" }'
}

# mem_point NAME: the figures of one moment as MEM[NAME_KEY], in KiB (MEM_KEYS): RSS and its
# anonymous part after the JVM's trim; the JVM's NMT committed and its malloc part; the agent's
# heap, pages and unwind tables (0 before the first start: the agent is not loaded yet); the
# process's malloc in use ("" where status cannot say); the control JVM's RSS, anon and NMT.
mem_point() {
    local n=$1 k v
    for k in $MEM_KEYS; do MEM[${n}_$k]=""; done
    mem_trim_nmt "$PID" "nmt-$n.txt"
    MEM[${n}_rss]=$(mem_rss_settled_kib "$PID")
    MEM[${n}_anon]=$(mem_anon_kib "$PID")
    cp "/proc/$PID/smaps" "smaps-$n.txt" 2>/dev/null || true
    read -r MEM["${n}_nmt"] MEM["${n}_nmt_malloc"] < <(mem_nmt_kib "nmt-$n.txt") || true
    if [[ $n == pre ]]; then
        MEM[${n}_heap]=0 MEM[${n}_pages]=0 MEM[${n}_unwind]=0
    else
        cmd status
        v=$(sed -n 's/.*agent heap \([0-9]*\) KiB in [0-9]* blocks and \([0-9]*\) KiB of pages (unwind tables \([0-9]*\) KiB).*/\1 \2 \3/p' <<<"$REPLY")
        read -r MEM["${n}_heap"] MEM["${n}_pages"] MEM["${n}_unwind"] <<<"$v" || true
        MEM[${n}_malloc]=$(mem_malloc_settled_kib)
    fi
    if [[ -n ${CTL:-} ]]; then
        mem_trim_nmt "$CTL" "nmt-ctl-$n.txt"
        MEM[${n}_ctl_rss]=$(mem_rss_settled_kib "$CTL") MEM[${n}_ctl_anon]=$(mem_anon_kib "$CTL")
        read -r MEM["${n}_ctl_nmt"] _ < <(mem_nmt_kib "nmt-ctl-$n.txt") || true
    fi
    [[ -n ${MEM[${n}_nmt]} ]] || it_fail "no NMT summary at $n: $(head -c 300 "nmt-$n.txt")"
    [[ -n ${MEM[${n}_heap]} ]] || it_fail "status gave no agent heap figure at $n: $REPLY"
    echo "$IT_NAME: memory at $n: $(for k in $MEM_KEYS; do printf '%s=%s ' "$k" "${MEM[${n}_$k]}"; done)"
}

# mem_split FROM TO: prints where the anonymous RSS went between two points and sets
# MEM_REST (KiB of it that neither NMT nor the agent's count holds) and MEM_NEITHER (malloc in
# use that neither holds; "" where status could not say).
mem_split() {
    local a=$1 b=$2 d_anon d_nmt d_agent d_malloc d_nmt_malloc d_heap ctl=""
    d_anon=$((MEM[${b}_anon] - MEM[${a}_anon]))
    d_nmt=$((MEM[${b}_nmt] - MEM[${a}_nmt]))
    d_agent=$((MEM[${b}_heap] + MEM[${b}_pages] - MEM[${a}_heap] - MEM[${a}_pages]))
    MEM_REST=$((d_anon - d_nmt - d_agent))
    MEM_NEITHER=""
    if [[ -n ${MEM[${a}_malloc]} && -n ${MEM[${b}_malloc]} ]]; then
        d_malloc=$((MEM[${b}_malloc] - MEM[${a}_malloc]))
        d_nmt_malloc=$((MEM[${b}_nmt_malloc] - MEM[${a}_nmt_malloc]))
        d_heap=$((MEM[${b}_heap] - MEM[${a}_heap]))
        MEM_NEITHER=$((d_malloc - d_nmt_malloc - d_heap))
    fi
    [[ -n ${MEM[${b}_ctl_anon]} ]] &&
        ctl="; control JVM (no agent): RSS $((MEM[${b}_ctl_rss] - MEM[${a}_ctl_rss])), anonymous $((MEM[${b}_ctl_anon] - MEM[${a}_ctl_anon])), NMT $((MEM[${b}_ctl_nmt] - MEM[${a}_ctl_nmt])) KiB"
    echo "$IT_NAME: memory $a -> $b (KiB): RSS $((MEM[${b}_rss] - MEM[${a}_rss])), anonymous $d_anon = the JVM's (NMT committed) $d_nmt + the agent's (heap and pages) $d_agent + the rest $MEM_REST; malloc in use ${d_malloc:-n/a} = the JVM's (NMT, arena chunks aside) ${d_nmt_malloc:-n/a} + the agent's heap ${d_heap:-n/a} + neither's ${MEM_NEITHER:-n/a}$ctl"
    echo "$IT_NAME: NMT committed moves $a -> $b (KiB): $(mem_nmt_moves "nmt-$a.txt" "nmt-$b.txt")"
    echo "$IT_NAME: mappings whose anonymous memory grew most $a -> $b (KiB): $(mem_smaps_moves "smaps-$a.txt" "smaps-$b.txt")"
}
