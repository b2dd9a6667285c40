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
# The Go worker exits after this long without an instruction on its control
# stream (internal/workerexit): after a failover Beam's Flink runner may
# never close an environment of the cancelled attempt on a surviving
# TaskManager (docs/flink-cluster.md). It also exits when a bundle stays
# outstanding for the second time with no Fn API message and no CPU use:
# one of the cancelled attempt the runner never feeds nor closes. Keep that
# longer than any stage waits for its input.
export SMOOTHANON_WORKER_IDLE_EXIT=${SMOOTHANON_WORKER_IDLE_EXIT:-5m}
export SMOOTHANON_WORKER_STALL_EXIT=${SMOOTHANON_WORKER_STALL_EXIT:-30m}

# ppid PID: the parent PID of PID, empty when PID is gone.
ppid() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f2; }
parent=$(ppid $$)
[ -n "$parent" ] && [ "$parent" != 1 ] || { echo "process-boot.sh: the runner that started us is gone" >&2; exit 1; }

# Boot copies the staged binary to /tmp/bin*/worker (a path of its own,
# not under $TMPDIR) and runs it; the worker unlinks that copy when it
# starts (internal/workerexit). A boot stopped or killed between the copy
# and the worker's start, as in a failover, leaves a ~200 MB copy nothing
# removes. sweep removes such copies of this boot's staged binary (whole
# or, killed mid-copy, a prefix of it) that no process holds open or runs,
# at two looks 2 s apart: another boot's copy is open while written and
# run within milliseconds after.
copies() {
	local c f s
	for c in /tmp/bin*/worker; do
		[ -f "$c" ] && [ "$(ls -A "${c%/worker}")" = worker ] || continue
		s=$(stat -c %s "$c" 2>/dev/null) || continue
		for f in "$dir"/staged/*; do
			[ -f "$f" ] && [ "$s" -le "$(stat -c %s "$f")" ] && cmp -s -n "$s" "$c" "$f" || continue
			in_use "$c" || echo "$c"
			break
		done
	done
}
in_use() { # FILE: is it open or running in a process we can see?
	[ -n "$(find /proc/[0-9]*/exe /proc/[0-9]*/fd -maxdepth 1 -lname "$1" -print -quit 2>/dev/null)" ]
}
sweep() {
	local first c
	# Without find a copy in use would look unused: sweep nothing.
	command -v find >/dev/null && command -v cmp >/dev/null || return 0
	first=$(copies)
	[ -n "$first" ] || return 0
	sleep 2
	for c in $(copies); do
		grep -qxF "$c" <<<"$first" && rm -f "$c" && rmdir "${c%/worker}" 2>/dev/null
	done
	return 0
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/beam-boot.XXXXXX") || exit 1
# Nothing ends this script when its TaskManager dies (SIGKILL): boot would
# wait up to 2 minutes for the dead provisioning endpoint, or a worker for
# its control stream. A watcher, started first, watches the parent; when it
# is gone (we were re-parented, or this script itself was killed) it kills
# boot (its PID in $dir/.boot-pid), and with it the worker. The runner
# stops an environment with SIGTERM and SIGKILLs this script 500 ms later
# if it still runs, possibly before it removed its directory, or even
# started boot (an environment stopped as soon as started, in a failover):
# the watcher, deaf to SIGTERM, removes the directory then, and ends once
# it is gone.
(
	trap '' TERM INT
	while [ -d "$dir" ]; do
		if [ "$(ppid $$)" != "$parent" ]; then
			b=$(cat "$dir/.boot-pid" 2>/dev/null)
			if [ -n "$b" ]; then
				kill -KILL "$b" 2>/dev/null
				for _ in $(seq 50); do kill -0 "$b" 2>/dev/null || break; sleep 0.1; done
			fi
			# Only once this script is gone: else it removes the
			# directory itself after boot, and may still be in it.
			if [ -z "$(ppid $$)" ]; then sweep; rm -rf "$dir"; exit 0; fi
		fi
		sleep 0.5
	done
) </dev/null &
cd "$dir" || exit 1
# The runner stops an environment with SIGTERM to this script: pass it on
# (set before boot starts, so an early SIGTERM does not orphan boot).
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; stop=1' TERM INT
stop=
# Boot dies with this script even when the runner SIGKILLs it (setpriv
# --pdeathsig); the Go worker dies with boot (internal/workerexit).
pdeath=()
command -v setpriv >/dev/null && pdeath=(setpriv --pdeathsig KILL --)
"${pdeath[@]}" "$boot" "$@" --semi_persist_dir="$dir" &
pid=$!
echo "$pid" >"$dir/.boot-pid"
[ -n "$stop" ] && kill -TERM "$pid" 2>/dev/null
wait "$pid"
code=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; code=$?; done
cd / && sweep && rm -rf "$dir"
exit "$code"
