#!/usr/bin/env bash
# Builds the smoothanon image from binaries built on this machine (`make
# image`; the container tests run it too): static linux builds of
# smoothanon and of Beam's boot loader (the Beam module go.mod pins), laid
# out by rootfs.sh and packaged by Dockerfile.prebuilt. Needs no registry.
#
#   deploy/container/build-image.sh IMAGE
#
# Environment: ENGINE (podman, buildah or docker; default: the first found),
# GOARCH (default: go env GOARCH), GO (default: go),
# CA_BUNDLE (default: /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 IMAGE" >&2
  exit 2
fi
image=$1
GO=${GO:-go}
arch=${GOARCH:-$($GO env GOARCH)}
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
engine=${ENGINE:-}
if [ -z "$engine" ]; then
  for e in podman buildah docker; do
    if command -v "$e" >/dev/null; then engine=$e; break; fi
  done
fi
if [ -z "$engine" ]; then
  echo "build-image.sh: no container engine: install podman, buildah or docker, or set ENGINE" >&2
  exit 2
fi
if [ ! -s "$ca" ]; then
  echo "build-image.sh: CA bundle $ca missing: install ca-certificates or set CA_BUNDLE" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/smoothanon-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
for b in smoothanon:./cmd/smoothanon boot:github.com/apache/beam/sdks/v2/go/container; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch $GO build -trimpath -ldflags='-s -w' -o "$work/${b%%:*}" "${b#*:}"
done
deploy/container/rootfs.sh "$work/rootfs" "$work/boot" "$work/smoothanon" "$ca"

file=deploy/container/Dockerfile.prebuilt
case $(basename "$engine") in
  buildah) "$engine" build --isolation chroot --platform "linux/$arch" -f "$file" -t "$image" "$work/rootfs" ;;
  *) "$engine" build --platform "linux/$arch" -f "$file" -t "$image" "$work/rootfs" ;;
esac
echo "built $image (linux/$arch) with $engine"
