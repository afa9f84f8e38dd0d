#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a command the way a container would, for attach_namespace_test.sh. Call it inside
# `unshare --fork --pid --mount-proc` (a new pid and mount namespace):
#   in_namespace.sh tmp  CMD...        private tmpfs on /tmp, same root file system
#   in_namespace.sh root DIR FILE CMD... a tmpfs root at DIR with /usr, /etc, /opt, /dev and
#                                      /proc, FILE copied to /app, then chroot into it
set -e
mode=$1
shift
if [ "$mode" = tmp ]; then
    mount -t tmpfs fxprof-tmp /tmp
    exec "$@"
fi
r=$1 file=$2
shift 2
mount -t tmpfs fxprof-root "$r"
for d in usr etc opt dev; do
    if [ -d "/$d" ]; then
        mkdir "$r/$d"
        mount --rbind "/$d" "$r/$d"
    fi
done
for d in bin sbin lib lib64 lib32 libx32; do
    if [ -L "/$d" ]; then
        ln -s "$(readlink "/$d")" "$r/$d"
    elif [ -d "/$d" ]; then
        mkdir "$r/$d"
        mount --rbind "/$d" "$r/$d"
    fi
done
mkdir -p "$r/tmp" "$r/proc" "$r/app"
chmod 1777 "$r/tmp"
mount -t proc proc "$r/proc"
cp "$file" "$r/app/"
cd "$r"
exec chroot "$r" "$@"
