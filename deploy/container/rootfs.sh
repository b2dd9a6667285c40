#!/usr/bin/env bash
# Lays out the image's whole filesystem in DEST: both Dockerfiles copy DEST
# into an empty (scratch) image, so the multi-stage build and `make image`
# (binaries built on the host) give the same layout.
#
#   deploy/container/rootfs.sh DEST BOOT SMOOTHANON CA_BUNDLE
#
# BOOT and SMOOTHANON must be static linux binaries: a scratch image has no
# dynamic loader (a dynamic worker fails with "fork/exec .../worker: no such
# file or directory").
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 DEST BOOT SMOOTHANON CA_BUNDLE" >&2
  exit 2
fi
dest=$1 boot=$2 bin=$3 ca=$4
for f in "$boot" "$bin" "$ca"; do
  [ -s "$f" ] || { echo "rootfs.sh: $f: missing or empty" >&2; exit 2; }
done
# Beam's harness calls user.Current() at init: without an /etc/passwd entry
# for the running uid it panics and the worker never connects.
install -d -m 0755 "$dest/etc" "$dest/etc/ssl/certs" "$dest/opt/apache/beam" "$dest/opt/smoothanon/bin"
printf 'root:x:0:0:root:/root:/sbin/nologin\nbeam:x:65532:65532:beam:/tmp:/sbin/nologin\n' >"$dest/etc/passwd"
printf 'root:x:0:\nbeam:x:65532:\n' >"$dest/etc/group"
install -m 0644 "$ca" "$dest/etc/ssl/certs/ca-certificates.crt"
# boot writes pipeline_options.json into its working directory and copies
# the staged worker binary under --semi_persist_dir (/tmp): the image's
# WORKDIR is /tmp, writable by the non-root user.
install -d -m 1777 "$dest/tmp"
install -m 0755 "$boot" "$dest/opt/apache/beam/boot"
install -m 0755 "$bin" "$dest/opt/smoothanon/bin/smoothanon"
