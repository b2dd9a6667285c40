#!/usr/bin/env bash
# The command of a PROCESS environment for Go workers:
#   --environment_type PROCESS --environment_config '{"command":"/path/to/process-boot.sh"}'
# It runs Beam's Go boot loader ($BEAM_GO_BOOT, default: `boot` beside this
# script; go build -o boot github.com/apache/beam/sdks/v2/go/container) with
# a semi-persistent directory of its own, and removes it afterwards.
#
# Why: boot materializes the staged worker binary (~200 MB) into
# <semi_persist_dir>/staged, default /tmp/staged, shared by every boot on
# the host. Two TaskManagers (or two slots) starting workers at once rewrite
# the same file while the other copies it, and a worker dies of SIGSEGV
# running a half-written binary. pipeline_options.json, which boot writes
# into its working directory, moves into the same directory.
set -u
boot=${BEAM_GO_BOOT:-$(dirname "$0")/boot}
[ -x "$boot" ] || { echo "process-boot.sh: no Beam Go boot loader at $boot (set BEAM_GO_BOOT)" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/beam-boot.XXXXXX") || exit 1
cd "$dir" || exit 1
# Boot dies with this script even when the runner SIGKILLs it (setpriv
# --pdeathsig); the Go worker dies with boot (internal/workerexit).
pdeath=()
command -v setpriv >/dev/null && pdeath=(setpriv --pdeathsig KILL --)
"${pdeath[@]}" "$boot" "$@" --semi_persist_dir="$dir" &
pid=$!
# The runner stops an environment with SIGTERM to this script: pass it on.
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
wait "$pid"
code=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; code=$?; done
cd / && rm -rf "$dir"
exit "$code"
