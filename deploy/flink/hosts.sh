#!/usr/bin/env bash
# Test hosts on one machine: each host is a set of Linux namespaces (network,
# mount, PID, UTS, IPC) with its own /tmp and working directory, on a switch
# (a bridge in a namespace of its own) that carries only the hosts' traffic.
# Nothing is added to the machine's own network namespace. Needs root,
# unshare, nsenter and ip (util-linux, iproute2). See docs/flink-cluster.md.
#
#   hosts.sh switch DIR              the switch (call first)
#   hosts.sh start DIR NAME ADDR     host NAME at ADDR (e.g. 10.77.0.2/24) on the switch
#   hosts.sh exec DIR NAME [VAR=VALUE...] -- CMD...
#                                    run CMD in host NAME: working directory /srv,
#                                    environment PATH, HOME, TMPDIR=/tmp, LANG and the VARs only
#   hosts.sh ps DIR [NAME...]        "NAME PID" for every process on the hosts (all by default),
#                                    PIDs as the machine sees them, the hosts' own PID 1 left out
#   hosts.sh unplug DIR NAME         cut NAME's cable at the switch (NAME stops answering)
#   hosts.sh stop DIR [NAME...]      end the hosts (all by default): SIGKILL to everything in them
#
# Host NAME keeps its files in DIR/NAME/tmp (its /tmp) and DIR/NAME/srv (its
# /srv, the working directory); every other path is the machine's, read-only
# in the host, and DIR itself is hidden. Every process of a host lives in its
# PID namespace and ends with it. A host also ends within a second when the
# process that started it (HOSTS_OWNER, default: the caller of `start`)
# exits, so a killed test or benchmark leaves no host behind.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "hosts.sh: $*" >&2; exit 2; }
usage() { die "usage: hosts.sh switch DIR | start DIR NAME ADDR | exec DIR NAME [VAR=VALUE...] -- CMD... | ps DIR [NAME...] | unplug DIR NAME | stop DIR [NAME...]"; }
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
[ "$cmd" = init ] || { [ "$(id -u)" = 0 ] || die "needs root"; }

# holder NAME: PID of the unshare process that holds host NAME's namespaces
# (network, mount, UTS, IPC; its child is PID 1 of the host's PID namespace).
holder() { cat "$dir/$1.holder" 2>/dev/null; }
# init NAME: root-namespace PID of the host's PID 1.
# hosts lists the hosts started in $dir (not the switch), one a line.
hosts() {
	local f n
	for f in "$dir"/*.holder; do
		[ -e "$f" ] || continue
		n=$(basename "$f" .holder)
		[ "$n" = switch ] || echo "$n"
	done
}

hostinit() {
	local h
	h=$(holder "$1") || return 1
	c=$(cat "/proc/$h/task/$h/children" 2>/dev/null) || return 1
	c=${c%% *}
	[ -n "$c" ] && echo "$c"
}
# alive PID: the process exists and is not a zombie.
alive() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'; }

# spawn NAME KIND [ADDR]: start the namespaces of NAME in the background; a
# watcher in this (root) namespace ends them when the owner exits.
spawn() {
	local name=$1 kind=$2 addr=${3:-127.0.1.1/8} owner=${HOSTS_OWNER:-$PPID}
	mkdir -p "$dir/$name/tmp" "$dir/$name/srv"
	chmod 1777 "$dir/$name/tmp"
	# The host knows its own name (Flink resolves it), nobody else's.
	printf '127.0.0.1\tlocalhost\n%s\t%s\n' "${addr%/*}" "$name" >"$dir/$name/hosts"
	if alive "$(holder "$name")"; then die "host $name already runs in $dir"; fi
	(
		# --kill-child: the host's PID 1 gets SIGKILL when unshare dies,
		# and with it every process in the host.
		unshare --net --mount --uts --ipc --pid --fork --kill-child --mount-proc --propagation private \
			bash "$here/hosts.sh" init "$dir" "$name" "$kind" </dev/null >>"$dir/$name.log" 2>&1 &
		u=$!
		echo "$u" >"$dir/$name.holder"
		while kill -0 "$owner" 2>/dev/null && kill -0 "$u" 2>/dev/null; do sleep 1; done
		kill -KILL "$u" 2>/dev/null || true
	) </dev/null >/dev/null 2>&1 &
	local i
	for i in $(seq 100); do
		if [ -s "$dir/$name.holder" ] && c=$(hostinit "$name") && grep -q "^ready$" "$dir/$name.log" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	die "host $name did not come up: $(tail -3 "$dir/$name.log" 2>/dev/null)"
}

case $cmd in
init) # inside the new namespaces, as PID 1 (internal)
	name=$1 kind=$2
	hostname "$name"
	ip link set lo up
	if [ "$kind" = host ]; then
		mount --bind "$dir/$name/hosts" /etc/hosts
		mount --bind "$dir/$name/srv" /srv
		mount --bind "$dir/$name/tmp" /tmp
		mount -t tmpfs -o size=64m,mode=1777 shm /dev/shm
		# Other hosts' files are not this host's: hide DIR (unless the
		# new /tmp already hid it), and keep the machine's files read-only.
		if [ -d "$dir" ]; then mount -t tmpfs -o ro,size=4k hidden "$dir"; fi
		mount -o remount,bind,ro /
	else
		ip link add br0 type bridge
		ip link set br0 up
	fi
	echo ready
	# PID 1 of the host: reap orphans (bash reaps every child it is sent
	# SIGCHLD for) until the host is stopped.
	trap '' TERM INT HUP
	while :; do (exec -a hosts.sh-idle sleep 3600) & wait $! || true; done
	;;
switch)
	[ $# -eq 0 ] || usage
	mkdir -p "$dir"
	spawn switch switch
	;;
start)
	[ $# -eq 2 ] || usage
	name=$1 addr=$2
	[[ $name =~ ^[a-z0-9]{1,12}$ ]] || die "host name $name: 1-12 of a-z 0-9"
	[ -d /srv ] || die "no /srv on this machine: the hosts' working directory is mounted there"
	sw=$(holder switch) && alive "$sw" || die "no switch in $dir (hosts.sh switch $dir first)"
	spawn "$name" host "$addr"
	h=$(holder "$name")
	ip link add "h-$name" netns "$sw" type veth peer name eth0 netns "$h"
	nsenter -t "$sw" -n ip link set "h-$name" master br0 up
	nsenter -t "$h" -n ip addr add "$addr" dev eth0
	nsenter -t "$h" -n ip link set eth0 up
	;;
exec)
	[ $# -ge 2 ] || usage
	name=$1
	shift
	c=$(hostinit "$name") || die "no host $name in $dir"
	vars=(PATH="$PATH" HOME="${HOME:-/root}" TMPDIR=/tmp LANG=C.UTF-8)
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	[ $# -ge 2 ] || usage
	shift
	exec nsenter -t "$c" -n -m -u -i -p --wd=/srv env -i "${vars[@]}" "$@"
	;;
ps)
	names=("$@")
	[ ${#names[@]} -gt 0 ] || mapfile -t names < <(hosts)
	declare -A host_of=() init=()
	for n in "${names[@]}"; do
		c=$(hostinit "$n") || continue
		ns=$(readlink "/proc/$c/ns/pid" 2>/dev/null) || continue
		host_of[$ns]=$n
		init[$c]=1
	done
	[ ${#host_of[@]} -gt 0 ] || exit 0
	# Processes end while this runs: one whose files are gone is skipped.
	for p in /proc/[0-9]*; do
		n=${host_of[$(readlink "$p/ns/pid" 2>/dev/null || echo -)]:-}
		[ -n "$n" ] && [ -z "${init[${p#/proc/}]:-}" ] || continue
		cmd=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
		[ "$cmd" = "hosts.sh-idle 3600 " ] && continue
		echo "$n ${p#/proc/}"
	done
	true
	;;
unplug)
	[ $# -eq 1 ] || usage
	sw=$(holder switch) || die "no switch in $dir"
	nsenter -t "$sw" -n ip link set "h-$1" down
	;;
stop)
	names=("$@")
	if [ ${#names[@]} -eq 0 ]; then
		mapfile -t names < <(hosts)
		[ -e "$dir/switch.holder" ] && names+=(switch)
	fi
	for n in "${names[@]}"; do
		h=$(holder "$n") || continue
		c=$(hostinit "$n") || c=
		kill -KILL "$h" 2>/dev/null || true
		# The host's PID 1 ends last, when every process in it is gone.
		for _ in $(seq 100); do alive "$h" || alive "$c" || break; sleep 0.1; done
		rm -f "$dir/$n.holder"
	done
	;;
*) usage ;;
esac
