#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a command the way a container would, for attach_namespace_test.sh. Call it inside
# `unshare --fork --pid --mount-proc` (a new pid and mount namespace):
#   in_namespace.sh tmp  FILE DIR CMD... same root file system, a private tmpfs on /tmp with
#                                      FILE copied to /tmp/app (the working directory), and an
#                                      empty tmpfs over DIR
#   in_namespace.sh root DIR FILE CMD... a tmpfs root at DIR with /usr, /etc, /opt, /dev and
#                                      /proc, FILE copied to /app, then chroot into it
# The checkout may itself be under /tmp, so nothing the command needs is left where the private
# /tmp hides it: FILE is read through a descriptor opened before the mount.
set -e
mode=$1
shift
if [ "$mode" = tmp ]; then
    file=$1 hide=$2
    shift 2
    exec 3<"$file"
    mount -t tmpfs fxprof-hide "$hide"
    mount -t tmpfs fxprof-tmp /tmp
    mkdir /tmp/app
    cat <&3 >"/tmp/app/$(basename "$file")"
    exec 3<&-
    cd /tmp/app
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
