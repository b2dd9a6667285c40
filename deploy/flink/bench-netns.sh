#!/usr/bin/env bash
# ROWS generated user lists on hosts that share no disk (netns-cluster.sh:
# object store, JobManager, 2 TaskManagers with their Go workers, job server
# and launcher each in namespaces of their own), through prism on the
# launcher host (the launcher's peak RSS is prism's) and through the
# cluster, both reading and writing the GCS emulator; prints wall time,
# rows/s and the peak RSS of every process. Needs root.
#
#   deploy/flink/bench-netns.sh [ROWS]      (default 1,000,000; make bench-cluster NETNS=1)
#
# Environment: WORK (default /tmp/smoothanon-netns-bench; the binaries, the
# logs and, removed at the end, the hosts' disks, Flink's spill included),
# SHARDS (0), and netns-cluster.sh's.
set -euo pipefail

rows=${1:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${WORK:-/tmp/smoothanon-netns-bench}
[ "$(id -u)" = 0 ] || { echo "bench-netns.sh: needs root (the hosts are Linux namespaces)" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
dir=$work/hosts
export BIN=$work/bin HOSTS_OWNER=$$
netns() { bash "$here/netns-cluster.sh" "$1" "$dir" "${@:2}"; }

# As `make build`: static and stripped (the launcher and --worker_binary).
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN/smoothanon" ./cmd/smoothanon &&
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$BIN/boot" github.com/apache/beam/sdks/v2/go/container)

[ -e "$dir" ] && { netns down 2>/dev/null || true; rm -rf "$dir"; }
trap 'netns down >/dev/null 2>&1 || true' EXIT
start=$(date +%s.%N)
netns up
echo "hosts up in $(echo "$(date +%s.%N) - $start" | bc | xargs printf %.0f) s"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/launcher/srv/key"
input=gs://in/userlists-$rows.parquet
# The input bench-cluster.sh and bench-local.sh make.
netns smoothanon gen --model userlists --rows "$rows" --columns 1000000 --mean_degree 10 --zipf 1.1 --seed 1 \
	--output "$input" 2>&1 | tail -1
flags=(--input "$input" --k 8 --mode smooth --chunk_size 100000 --seed 1 --pseudonym_key_file /srv/key --shards "${SHARDS:-0}")

# sample FILE: every 2 s until FILE.stop exists, the peak RSS (VmHWM) of
# each process on the hosts by role, and the peak of all Go workers' RSS
# together; written to FILE as "ROLE KB" lines.
sample() {
	local out=$1 host pid cmd role hwm rss sum
	declare -A peak
	local sumpeak=0
	while [ ! -e "$out.stop" ]; do
		sum=0
		while read -r host pid; do
			cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || continue
			case $cmd in
			*--worker=true*) role=worker-max ;;
			*fake-gcs-server*) role=store ;;
			*StandaloneSessionClusterEntrypoint*) role=jobmanager ;;
			*TaskManagerRunner*) role=taskmanager-$host ;;
			*EmulatorJobServer* | *FlinkJobServerDriver*) role=jobserver ;;
			*"smoothanon run"*) role=launcher ;;
			*--provision_endpoint*) role=boot-max ;;
			*) continue ;;
			esac
			hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status" 2>/dev/null)
			hwm=${hwm:-0}
			if [ "$role" = worker-max ]; then
				rss=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null)
				sum=$((sum + ${rss:-0}))
			fi
			((hwm > ${peak[$role]:-0})) && peak[$role]=$hwm
		done < <(bash "$here/hosts.sh" ps "$dir")
		((sum > sumpeak)) && sumpeak=$sum
		{ for k in "${!peak[@]}"; do echo "$k ${peak[$k]}"; done; echo "workers-sum $sumpeak"; } >"$out.tmp" && mv "$out.tmp" "$out"
		sleep 2
	done
}

# leg NAME ROLES CMD ARGS...: one run on the launcher host with the sampler
# on; prints its figures, peak RSS of ROLES (a regular expression; the
# cluster idles during prism's run).
leg() {
	local name=$1 roles=$2 s wall
	shift 2
	rm -f "$work/$name.peaks" "$work/$name.peaks.stop"
	sample "$work/$name.peaks" &
	local sampler=$!
	s=$(date +%s.%N)
	netns "$@" --output "gs://out/$name" --metrics_out "gs://out/$name.json" >"$work/$name.log" 2>&1 ||
		{ touch "$work/$name.peaks.stop"; wait "$sampler"; tail -20 "$work/$name.log"; echo "bench-netns.sh: the $name run failed" >&2; exit 1; }
	wall=$(echo "$(date +%s.%N) - $s" | bc)
	sleep 2
	touch "$work/$name.peaks.stop"
	wait "$sampler"
	python3 - "$name" "$rows" "$wall" "$dir/store/srv/gcs/out/$name.json" "$work/$name.peaks" "$roles" <<'PY'
import json, re, sys
name, rows, wall, rep, peaks, roles = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
r = json.load(open(rep))
p = {k: v for k, v in (l.split() for l in open(peaks) if l.strip()) if re.fullmatch(roles, k)}
order = ["launcher", "store", "jobserver", "jobmanager"] + sorted(k for k in p if k.startswith("taskmanager-")) + ["boot-max", "worker-max", "workers-sum"]
rss = ", ".join(f"{k} {int(p[k])/1e6:.2f} GB" for k in order if k in p and int(p[k]) > 0)
print(f"{name}: {rows} rows, wall {wall:.0f} s, {rows/wall:.0f} rows/s, Jaccard {r.get('jaccard', 0):.4f}, "
      f"valid {r.get('valid')}, published {r.get('published')}; peak RSS: {rss}")
PY
}

leg prism 'launcher|store' smoothanon run "${flags[@]}"
leg cluster '.*' run "${flags[@]}"

# The releases, shard by shard in manifest order (names carry a run token).
python3 - "$dir/store/srv/gcs/out" <<'PY'
import json, os, sys
out = sys.argv[1]
def shards(rel):
    m = json.load(open(os.path.join(out, rel, "_SUCCESS")))
    return [open(os.path.join(out, rel, s["name"]), "rb").read() for s in m["shards"]]
a, b = shards("prism"), shards("cluster")
print("cluster release == prism release" if a == b else "cluster release DIFFERS from prism's",
      f"({len(a)} shards, {sum(map(len, a)) / 1e6:.1f} MB)")
PY
du -sh "$dir/store/srv/gcs" | awk '{print "store holds " $1}'
netns down
trap - EXIT
# The hosts' disks (input, releases, spill): made again by every run.
rm -rf "$dir"
echo "(figures taken on $(nproc) cores; load average at the end: $(cut -d" " -f1-3 /proc/loadavg); commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%F))"
