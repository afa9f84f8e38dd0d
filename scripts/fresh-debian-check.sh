#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proves that the README's two commands set up a fresh machine: makes a minimal Debian 12 root
# (mmdebstrap --variant=apt bookworm: apt and the essential packages, no compiler, no JDK, no
# cmake, no node), clones this checkout's current commit into it and runs there, as root, under
# chroot in a private mount namespace (/proc, /dev, /sys, a tmpfs /tmp):
#   1. scripts/demo.sh as an unprivileged user: must print the install command and exit 1
#   2. scripts/demo.sh        installs the demo's packages, builds, profiles the demo
#   3. scripts/demo.sh again  must install nothing
#   4. scripts/test.sh        installs the tests' packages and profiler-cli, runs every test
#   5. scripts/test.sh -R '^unit\.'   must install nothing; the arguments reach ctest
# Step 4 must pass with no test skipped. Then it prints a summary (exit code and time of each
# step, packages installed, ctest's summary, tests skipped or failed). Not part of CI: it needs
# root, the Debian mirror and the npm registry, and takes 10 to 30 minutes on 2 cores. Its
# output is in docs/FRESH-DEBIAN.md.
#
#   sudo scripts/fresh-debian-check.sh [--dir DIR] [--keep|--delete] [--ca-file FILE]
#     --dir DIR        the root to create (must not exist or be empty)
#                      [/var/tmp/fxagent-fresh-YYYYmmdd-HHMMSS]; logs go to DIR.logs/
#     --keep           keep the root afterwards   [default: kept if a step failed, else deleted]
#     --delete         delete it even if a step failed
#     --ca-file FILE   extra CA certificates for npm inside the root (NODE_EXTRA_CA_CERTS), for a
#                      network that intercepts TLS [default: the host's $NODE_EXTRA_CA_CERTS]
# Exit 0 when every step did what it must, 1 otherwise, 2 on a usage error.
# Inside the root CI=true, so a test whose tool is missing fails instead of being skipped.
set -euo pipefail

usage() {
    sed -n '/^#   sudo/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# --- inner mode: runs inside `unshare --mount`, mounts what the tests need, runs one command.
inner() {
    dir=$1 user=$2
    shift 2
    # The root is a mount point, as / is on a real machine: `unshare --mount` in the tests makes
    # / private, which fails with EINVAL on a directory that is not one.
    mount --bind "$dir" "$dir"
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount --rbind /sys "$dir/sys"
    mount -t tmpfs -o mode=1777 tmpfs "$dir/tmp"
    env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb
        CI=true LANG=C.UTF-8)
    [[ -f $dir/etc/fxagent-check-ca.crt ]] && env+=(NODE_EXTRA_CA_CERTS=/etc/fxagent-check-ca.crt)
    if [[ $user == root ]]; then
        exec chroot "$dir" /usr/bin/env -i "${env[@]}" /bin/bash -c 'cd /srv/fxagent && "$@"' - "$@"
    fi
    env[0]=HOME=/tmp
    exec chroot --userspec="$user" "$dir" /usr/bin/env -i "${env[@]}" \
        /bin/bash -c 'cd /srv/fxagent && "$@"' - "$@"
}

# The whole script is read before any of it runs: editing it during a run cannot change that run.
main() {
    dir="" keep=auto ca=${NODE_EXTRA_CA_CERTS:-}
    while (($#)); do
        case $1 in
        --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
        --keep) keep=yes; shift ;;
        --delete) keep=no; shift ;;
        --ca-file) ca=${2:?--ca-file needs a file}; shift 2 ;;
        -h | --help) usage ;;
        *) echo "fresh-debian-check: unknown argument '$1'" >&2; usage ;;
        esac
    done
    ((EUID == 0)) || { echo "fresh-debian-check: must run as root (mmdebstrap, chroot, mounts)" >&2; exit 1; }
    for t in mmdebstrap unshare chroot git; do
        command -v "$t" >/dev/null || { echo "fresh-debian-check: $t is not installed" >&2; exit 1; }
    done
    [[ -z $ca || -r $ca ]] || { echo "fresh-debian-check: cannot read --ca-file $ca" >&2; exit 1; }
    repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
    commit=$(git -C "$repo" rev-parse HEAD)
    dirty=$(git -C "$repo" status --porcelain --untracked-files=no | wc -l)
    dir=${dir:-/var/tmp/fxagent-fresh-$(date +%Y%m%d-%H%M%S)}
    if [[ -e $dir && -n $(ls -A "$dir" 2>/dev/null) ]]; then
        echo "fresh-debian-check: $dir exists and is not empty" >&2
        exit 1
    fi
    dir=$(realpath -m "$dir")
    logs=$dir.logs
    mkdir -p "$logs"

    # Processes left behind in the root (a profiler-cli daemon, a JVM) are ours: stop them by pid.
    stop_leftovers() {
        local p r
        for p in /proc/[0-9]*; do
            r=$(readlink "$p/root" 2>/dev/null) || continue
            if [[ $r == "$dir" ]]; then kill -9 "${p#/proc/}" 2>/dev/null || true; fi
        done
    }
    # The mounts live in the step's private namespace and vanish with it; never delete the root
    # while anything is still mounted below it in this namespace.
    # shellcheck disable=SC2317 # called by the EXIT trap
    cleanup() {
        stop_leftovers
        if grep -q " $dir/" /proc/self/mounts; then
            echo "fresh-debian-check: something is still mounted under $dir; not deleting it" >&2
            return
        fi
        if [[ $keep == yes || ($keep == auto && $failed -ne 0) ]]; then
            echo "fresh-debian-check: root kept at $dir"
        elif [[ -d $dir ]]; then
            rm -rf --one-file-system "$dir"
            echo "fresh-debian-check: root $dir deleted"
        fi
    }
    failed=0
    trap cleanup EXIT

    summary=()
    note() {
        summary+=("$*")
    }
    # step NAME EXPECTED_RC USER CMD...: runs CMD in the root, its output to the terminal and to
    # $logs/NAME.log; records its exit code and time.
    step() {
        local name=$1 want=$2 user=$3 t0 rc secs
        shift 3
        echo
        echo "=== fresh-debian-check: $name: $*"
        t0=$(date +%s)
        set +e
        unshare --mount --propagation private -- "$0" --inner "$dir" "$user" "$@" </dev/null 2>&1 |
            tee "$logs/$name.log"
        rc=${PIPESTATUS[0]}
        set -e
        stop_leftovers
        secs=$(($(date +%s) - t0))
        local verdict=ok
        [[ $rc == "$want" ]] || { verdict=FAILED; failed=1; }
        note "$(printf '%-22s exit %-3s (want %s) %4dm%02ds  %s  [%s]' "$name" "$rc" "$want" \
            $((secs / 60)) $((secs % 60)) "$verdict" "$*")"
        return 0
    }
    # installed NAME: what the step installed, from its log.
    installed() {
        local log=$logs/$1.log line
        line=$(grep -E '^[0-9]+ upgraded, [0-9]+ newly installed' "$log" | tail -n 1 || true)
        grep -E '^deps: ' "$log" | sed "s/^/    $1: /" || true
        [[ -n $line ]] && echo "    $1: apt: $line"
        grep -E '^(added|changed) [0-9]+ packages? ' "$log" | sed "s/^/    $1: npm: /" || true
    }

    # count_packages: how many packages are installed in the root.
    count_packages() {
        # shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
        chroot "$dir" dpkg-query -W -f='${db:Status-Status}\n' | grep -c '^installed$'
    }

    t_start=$(date +%s)
    echo "fresh-debian-check: commit $commit of $repo into $dir (logs: $logs)"
    ((dirty == 0)) || echo "fresh-debian-check: note: $dirty uncommitted change(s) in $repo are not tested"

    echo "=== fresh-debian-check: mmdebstrap --variant=apt bookworm $dir"
    t0=$(date +%s)
    if ! mmdebstrap --variant=apt bookworm "$dir" >"$logs/mmdebstrap.log" 2>&1; then
        tail -n 20 "$logs/mmdebstrap.log" >&2
        echo "fresh-debian-check: mmdebstrap failed (log: $logs/mmdebstrap.log)" >&2
        failed=1
        exit 1
    fi
    note "$(printf '%-22s exit 0   (want 0) %4dm%02ds  ok  [%s]' mmdebstrap \
        $((($(date +%s) - t0) / 60)) $((($(date +%s) - t0) % 60)) "mmdebstrap --variant=apt bookworm")"
    pkgs_before=$(count_packages)
    for t in gcc cc cmake java javac node npm pkg-config clang python3; do
        if chroot "$dir" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin sh -c "command -v $t" >/dev/null; then
            note "NOTE: the fresh root already has $t"
        fi
    done
    cp /etc/resolv.conf "$dir/etc/resolv.conf"
    [[ -n $ca ]] && cp "$ca" "$dir/etc/fxagent-check-ca.crt"
    git clone --quiet --no-checkout "$repo" "$dir/srv/fxagent"
    git -C "$dir/srv/fxagent" checkout --quiet --detach "$commit"

    step demo-as-user 1 nobody:nogroup ./scripts/demo.sh
    step demo 0 root ./scripts/demo.sh
    pkgs_demo=$(count_packages)
    step demo-again 0 root ./scripts/demo.sh
    step test 0 root ./scripts/test.sh
    pkgs_test=$(count_packages)
    step test-again-unit 0 root ./scripts/test.sh -R '^unit\.'

    # A second run installs nothing: no apt or npm output, the one "everything is installed" line.
    for s in demo-again test-again-unit; do
        if grep -qE '^(Get:|Setting up|Unpacking|added [0-9]+ package)|^deps: installing' "$logs/$s.log" ||
            ! grep -q '^deps: everything .* is installed$' "$logs/$s.log"; then
            note "FAILED: $s installed something or did not say that everything is installed"
            failed=1
        fi
    done
    # Everything each test needs is installed, so none may skip itself.
    if grep -q '^The following tests did not run:$' "$logs/test.log"; then
        note "FAILED: tests were skipped (listed below): something they need was not installed"
        failed=1
    fi
    grep -q 'apt-get install -y --no-install-recommends' "$logs/demo-as-user.log" || {
        note "FAILED: demo-as-user did not print the apt-get command"
        failed=1
    }

    total=$(($(date +%s) - t_start))
    {
        echo
        echo "=== fresh-debian-check summary: commit ${commit:0:12}, root $dir, $(date -u +'%Y-%m-%d %H:%M UTC')"
        echo "host: $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
        printf '  %s\n' "${summary[@]}"
        echo "packages in the root: $pkgs_before after mmdebstrap, ${pkgs_demo:-?} after demo.sh, ${pkgs_test:-?} after test.sh"
        echo "installed:"
        for s in demo-as-user demo demo-again test test-again-unit; do installed "$s"; done
        grep -h '^demo: JDK' "$logs/demo.log" | sed 's/^/  /' || true
        for s in test test-again-unit; do
            echo "ctest ($s):"
            grep -hE 'tests passed|tests failed' "$logs/$s.log" | sed 's/^/  /' || true
            # ctest's list of the tests that did not pass, each with its reason (Failed, Skipped...)
            sed -n '/^The following tests did not run:$/,/^$/p;/^The following tests FAILED:$/,/^Errors while/p' \
                "$logs/$s.log" | sed 's/^/  /'
            grep -hE '^test: node|^test:   JDK' "$logs/$s.log" | awk '!seen[$0]++' | sed 's/^/  /' || true
        done
        echo "total $((total / 60))m$((total % 60))s; result: $( ((failed)) && echo FAILED || echo ok)"
    } | tee "$logs/summary.txt"
    exit "$failed"
}

if [[ ${1:-} == --inner ]]; then
    shift
    inner "$@"
fi
main "$@"
