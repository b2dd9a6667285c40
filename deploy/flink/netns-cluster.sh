#!/usr/bin/env bash
# A Flink cluster on hosts that share no disk: the object store, the
# JobManager, each TaskManager (with its Go workers), Beam's job server and
# the launcher each on a host of its own (hosts.sh: network, mount and PID
# namespaces, own /tmp and /srv), on a switch, 10.77.0.0/24. Input, release,
# report and the job's staged artifacts (the worker binary) live in a GCS
# emulator, the fake-gcs-server binary (go install
# github.com/fsouza/fake-gcs-server@v1.56.1), with buckets `in`, `out` and
# `staging`. See docs/flink-cluster.md.
#
#   netns-cluster.sh up DIR           the hosts, the store, JobManager, TaskManagers 1..TASKMANAGERS, job server
#   netns-cluster.sh taskmanager DIR N   another TaskManager on a new host tmN
#   netns-cluster.sh smoothanon DIR ARGS...  smoothanon ARGS on the launcher host
#   netns-cluster.sh run DIR ARGS...     smoothanon run ARGS on the launcher through the cluster
#   netns-cluster.sh stop DIR         stop every process gracefully (the hosts stay)
#   netns-cluster.sh down DIR         stop, then end the hosts
#
# Environment: BIN (a directory with smoothanon, static as `make build`
# makes it, and Beam's Go boot loader `boot`; the smoothanon binary is the
# launcher and --worker_binary), TASKMANAGERS (2), MARKER (VAR=VALUE given to
# every process started, e.g. for leak checks), IDLE_EXIT (the workers'
# SMOOTHANON_WORKER_IDLE_EXIT; process-boot.sh's 5m by default), STALL_EXIT
# (SMOOTHANON_WORKER_STALL_EXIT; process-boot.sh's 30m by default), FAKE_GCS
# (the fake-gcs-server binary: PATH, then $(go env GOPATH)/bin), HOSTS_OWNER
# (hosts.sh: the hosts end when this PID exits; default the caller), and
# cluster.sh's memory settings.
#
# Hosts (DIR/NAME/srv is NAME's /srv, DIR/NAME/tmp its /tmp):
#   store 10.77.0.5    fake-gcs-server, -backend filesystem in /srv/gcs, port 4443
#   jm 10.77.0.2       JobManager, REST 8081, RPC 6123 (/srv/flink)
#   tmN 10.77.0.1N     TaskManager N (/srv/flink), boot loader and process-boot.sh in /srv/bin
#   js 10.77.0.3       Beam's Flink job server on 8099 (artifacts 8098), artifacts in gs://staging/artifacts
#   launcher 10.77.0.10   smoothanon in /srv/bin
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
hosts=$here/hosts.sh
die() { echo "netns-cluster.sh: $*" >&2; exit 2; }
usage() { die "usage: netns-cluster.sh up DIR | taskmanager DIR N | smoothanon DIR ARGS... | run DIR ARGS... | stop DIR | down DIR"; }
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2

net=10.77.0
store=$net.5:4443
jm=$net.2
js=$net.3:8099
marker=(${MARKER:+"$MARKER"})
# on HOST [VAR=VALUE...] -- CMD...: CMD on HOST, with the marker.
on() {
	local h=$1
	shift
	bash "$hosts" exec "$dir" "$h" "${marker[@]}" "$@"
}
# flink HOST [VAR=VALUE...] -- cluster.sh ARGS: cluster.sh on HOST, run dir /srv/flink.
flink() {
	local h=$1
	shift
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	on "$h" JM_ADDRESS="$jm" BIND_ADDRESS=0.0.0.0 "${vars[@]}" \
		${TM_MEMORY:+TM_MEMORY=$TM_MEMORY} ${TM_MANAGED:+TM_MANAGED=$TM_MANAGED} ${JM_MEMORY:+JM_MEMORY=$JM_MEMORY} \
		${SLOTS:+SLOTS=$SLOTS} ${TASKMANAGERS:+TASKMANAGERS=$TASKMANAGERS} \
		-- bash "$here/cluster.sh" "$@"
}

# taskmanager N: host tmN with boot loader and process-boot.sh, then TaskManager N.
taskmanager() {
	local n=$1
	bash "$hosts" start "$dir" "tm$n" "$net.$((10 + n))/24"
	mkdir -p "$dir/tm$n/srv/bin"
	cp "$BIN/boot" "$here/process-boot.sh" "$dir/tm$n/srv/bin/"
	flink "tm$n" TM_ADDRESS="$net.$((10 + n))" -- taskmanager /srv/flink "$n" >/dev/null
}

fake_gcs() {
	local f=${FAKE_GCS:-}
	[ -n "$f" ] || f=$(command -v fake-gcs-server || true)
	[ -n "$f" ] || f=$(go env GOPATH 2>/dev/null)/bin/fake-gcs-server
	[ -x "$f" ] || die "no fake-gcs-server (go install github.com/fsouza/fake-gcs-server@v1.56.1)"
	echo "$f"
}

up() {
	[ -x "${BIN:-}/smoothanon" ] && [ -x "$BIN/boot" ] || die "BIN must hold smoothanon and boot"
	local f n
	f=$(fake_gcs)
	bash "$here/cluster.sh" classpath >/dev/null # resolved here: the hosts cannot write ~/.m2
	bash "$here/fetch-jobserver.sh" >/dev/null
	bash "$hosts" switch "$dir"
	bash "$hosts" start "$dir" store "$net.5/24"
	mkdir -p "$dir/store/srv/gcs/in" "$dir/store/srv/gcs/out" "$dir/store/srv/gcs/staging" "$dir/store/srv/bin"
	cp "$f" "$dir/store/srv/bin/fake-gcs-server"
	on store -- bash -c 'setsid /srv/bin/fake-gcs-server -scheme http -host "$1" -port 4443 \
		-backend filesystem -filesystem-root /srv/gcs -public-host "$1:4443" -external-url "http://$1:4443" \
		-log-level warn </dev/null >/srv/gcs.log 2>&1 & echo $! >/srv/gcs.pid' - "$net.5"
	bash "$hosts" start "$dir" jm "$jm/24"
	flink jm -- jobmanager /srv/flink >/dev/null
	for n in $(seq "${TASKMANAGERS:-2}"); do taskmanager "$n"; done
	bash "$hosts" start "$dir" js "${js%:*}/24"
	flink js JOB_HOST="${js%:*}" GCS_ENDPOINT="http://$store/storage/v1/" ARTIFACTS_DIR=gs://staging/artifacts \
		-- jobserver /srv/flink
	bash "$hosts" start "$dir" launcher "$net.10/24"
	mkdir -p "$dir/launcher/srv/bin"
	cp "$BIN/smoothanon" "$dir/launcher/srv/bin/"
	# The store answers from the launcher, over the switch.
	on launcher -- bash -c 'for i in $(seq 50); do (echo >"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && exit 0; sleep 0.2; done; exit 1' - "$store" ||
		die "the store at $store does not answer; see $dir/store/srv/gcs.log"
	echo "hosts in $dir: store $store, JobManager $jm:8081, TaskManagers ${TASKMANAGERS:-2}, job server $js, launcher $net.10"
}

# stop: every process on every host, gracefully; the hosts stay.
stop() {
	local h
	for h in launcher js jm $(cd "$dir" && ls -d tm* 2>/dev/null); do
		[ -e "$dir/$h.holder" ] || continue
		[ -d "$dir/$h/srv/flink" ] && on "$h" -- bash "$here/cluster.sh" stop /srv/flink
	done
	[ -e "$dir/store.holder" ] && on store -- bash -c '[ -s /srv/gcs.pid ] || exit 0; p=$(cat /srv/gcs.pid); kill -TERM "$p" 2>/dev/null
		for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -KILL "$p" 2>/dev/null; rm -f /srv/gcs.pid'
	true
}

launcher_env=(STORAGE_EMULATOR_HOST="$store")

case $cmd in
up) [ $# -eq 0 ] || usage; up ;;
taskmanager) [ $# -eq 1 ] || usage; taskmanager "$1" ;;
smoothanon) on launcher "${launcher_env[@]}" -- /srv/bin/smoothanon "$@" ;;
run)
	env_config="{\"command\":\"/srv/bin/process-boot.sh\",\"env\":{\"BEAM_GO_BOOT\":\"/srv/bin/boot\",\"STORAGE_EMULATOR_HOST\":\"$store\"${IDLE_EXIT:+,\"SMOOTHANON_WORKER_IDLE_EXIT\":\"$IDLE_EXIT\"}${STALL_EXIT:+,\"SMOOTHANON_WORKER_STALL_EXIT\":\"$STALL_EXIT\"}}}"
	# --worker_binary is a bare name, run from its directory: Beam's job
	# server (2.62) names the staged copy after the path as given and, with
	# a "/" in it, never removes it from ARTIFACTS_DIR.
	on launcher "${launcher_env[@]}" -- env -C /srv/bin /srv/bin/smoothanon run --runner flink --endpoint "$js" \
		--environment_type PROCESS --environment_config "$env_config" --worker_binary smoothanon "$@"
	;;
stop) [ $# -eq 0 ] || usage; stop ;;
down) [ $# -eq 0 ] || usage; stop; bash "$hosts" stop "$dir" ;;
*) usage ;;
esac
