#!/usr/bin/env bash
# Run `smoothanon run` on a local embedded Flink (Beam's Flink job server
# with a Flink MiniCluster in its JVM, LOOPBACK workers) over generated
# power-law user lists, and print wall time, CPU seconds per row, peak memory
# of both processes, peak spill and work-directory size, the JVM's disk
# writes, the bytes written to Flink's exchanges (shuffle) and the report;
# $WORK/timeline has the resident sets every 10 s.
#
#   deploy/flink/bench-local.sh [ROWS] [extra smoothanon run flags...]
#
# ROWS defaults to 10,000,000. Environment:
#   WORK      work directory (default /tmp/smoothanon-flink-bench); the input
#             is generated once per ROWS and kept there
#   FORM      the input's form: ids (default; list<uint32>) or long-str
#             (long form, one row per user and interest, the interest a
#             string: about 10·ROWS pairs; bench-names' long-str on Flink)
#   JVM_HEAP  job server heap (default 2g)
#   PORT      job server port (default 8099)
#   GO_MEM_GB the memory cgroup limit the Go process (launcher and LOOPBACK
#             worker) runs under, in the unit the peak is printed in (1e6 KiB;
#             default 2, the goal; 0 = none). smoothanon sets its soft
#             memory limit to 3/4 of it (internal/memlimit), as it does in a
#             worker container; exceeding it kills the run. Needs root and a
#             writable cgroup file system; otherwise the run has no limit and
#             the line says so.
#   SLOTS     the MiniCluster's task slots (default 16): how many partitions
#             of a stage run at once. The job's partitions are sized from the
#             input by smoothanon (pipeline.FlinkPartitions: 16 at 1e7 lists) and
#             run in waves over the slots (docs/decisions/022, 025).
# The Flink configuration written to $WORK/conf/flink-conf.yaml is the one
# deploy/README.md recommends for large inputs: sort/spill buffers from
# managed memory, spills under $WORK/flink-tmp.
set -euo pipefail

rows=${1:-10000000}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${WORK:-/tmp/smoothanon-flink-bench}
port=${PORT:-8099}
heap=${JVM_HEAP:-2g}
rm -rf "$work/flink-tmp" "$work/peaks" "$work/report.json" "$work/out" # spill files, peaks, report and release of an earlier run
mkdir -p "$work/conf" "$work/flink-tmp"
work=$(cd "$work" && pwd)

(cd "$root" && go build -o "$work/smoothanon" ./cmd/smoothanon)
bin=$work/smoothanon
case ${FORM:-ids} in
ids) input=$work/userlists-$rows.parquet form=() ;;
long-str) input=$work/userlists-$rows-long-str.parquet form=(--feature_names --shape long) ;;
*)
	echo "FORM=$FORM: want ids or long-str" >&2
	exit 2
	;;
esac
if [[ ! -f $input ]]; then
	echo "generating $rows rows into $input" >&2
	"$bin" gen --model userlists --rows "$rows" --columns 1000000 --mean_degree 10 --zipf 1.1 --seed 1 "${form[@]}" --output "$input"
fi

cat >"$work/conf/flink-conf.yaml" <<EOF
taskmanager.numberOfTaskSlots: ${SLOTS:-16}
taskmanager.memory.managed.fraction: 0.4
taskmanager.memory.network.min: 512mb
taskmanager.memory.network.max: 512mb
io.tmp.dirs: $work/flink-tmp
EOF

args=$(bash "$here/fetch-jobserver.sh")
cp=$(sed -n 's/^-cp //p' "$args")
cd "$work" # PROCESS workers (boot loader) write pipeline_options.json into the job server's directory
FLINK_CONF_DIR=$work/conf java --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
	--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED \
	--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
	"-Xmx$heap" -cp "$cp" "$here/MiniClusterJobServer.java" --job-host=127.0.0.1 --job-port="$port" --artifact-port=0 --expansion-port=0 \
	--flink-conf-dir="$work/conf" --artifacts-dir="$work/artifacts" \
	--clean-artifacts-per-job=true >"$work/jobserver.log" 2>&1 &
jvm=$!
trap 'kill $jvm 2>/dev/null || true' EXIT
for _ in $(seq 120); do
	if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	if ! kill -0 $jvm 2>/dev/null; then
		echo "job server exited; see $work/jobserver.log" >&2
		exit 1
	fi
	sleep 1
done
if ! (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	echo "job server not listening on port $port after 120 s; see $work/jobserver.log" >&2
	exit 1
fi

# Sample the JVM's resident set, CPU time and disk writes, the spill
# directory and the file system's use while the job runs (a process's
# figures are only readable while it lives).
used() {
	local k
	k=$(du -sk --exclude='userlists-*.parquet' "$work" 2>/dev/null | cut -f1) || true # a file may vanish mid-walk
	echo "${k:-0}"
}
(
	peak_jvm=0 peak_tmp=0 cpu=0 wrote=0 disk0=$(used) peak_disk=0
	while kill -0 $jvm 2>/dev/null; do
		r=$(awk '/^VmHWM:/{print $2}' /proc/$jvm/status 2>/dev/null || echo 0)
		# du fails when a spill file vanishes mid-walk; keep sampling.
		t=$(du -sk "$work/flink-tmp" 2>/dev/null | cut -f1) || t=0
		c=$(awk '{print $14 + $15}' /proc/$jvm/stat 2>/dev/null) || c=0
		w=$(awk '/^write_bytes:/{print $2}' /proc/$jvm/io 2>/dev/null) || w=0
		d=$(($(used) - disk0))
		((r > peak_jvm)) && peak_jvm=$r
		((t > peak_tmp)) && peak_tmp=$t
		((${c:-0} > cpu)) && cpu=$c
		((${w:-0} > wrote)) && wrote=$w
		((d > peak_disk)) && peak_disk=$d
		echo "$peak_jvm $peak_tmp $cpu $wrote $peak_disk" >"$work/peaks"
		sleep 5
	done
) &

# The memory cgroup of the Go process: v1's memory controller, else v2.
go_mem_kb=$(awk -v g="${GO_MEM_GB:-2}" 'BEGIN{printf "%d", g*1e6}')
cg=""
if ((go_mem_kb > 0)); then
	for parent in /sys/fs/cgroup/memory /sys/fs/cgroup; do
		file=memory.limit_in_bytes
		[[ $parent == /sys/fs/cgroup ]] && file=memory.max
		[[ -f $parent/cgroup.procs ]] || continue
		if mkdir "$parent/smoothanon-bench-$$" 2>/dev/null; then
			if echo $((go_mem_kb * 1024)) >"$parent/smoothanon-bench-$$/$file" 2>/dev/null; then
				cg=$parent/smoothanon-bench-$$
				break
			fi
			rmdir "$parent/smoothanon-bench-$$"
		fi
	done
	[[ -n $cg ]] || echo "no writable memory cgroup: the Go process runs without a limit" >&2
fi
trap 'kill $jvm 2>/dev/null || true; [[ -z $cg ]] || rmdir "$cg" 2>/dev/null || true' EXIT

start=$(date +%s)
# A timeline every 10 s, to tell which stage a peak falls in: seconds since
# the launch, the JVM's resident set and threads, and the resident set of
# the Go processes (the cgroup's; without one, none).
(
	echo "# seconds jvm_rss_kb jvm_threads go_rss_kb"
	while kill -0 $jvm 2>/dev/null; do
		r=$(awk '/^VmRSS:/{r=$2} /^Threads:/{t=$2} END{print r+0, t+0}' /proc/$jvm/status 2>/dev/null) || r="0 0"
		g=0
		if [[ -n $cg ]]; then
			for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
				# An exiting process is listed with no VmRSS line.
				v=$(awk '/^VmRSS:/{r=$2} END{print r+0}' /proc/$p/status 2>/dev/null) || v=0
				g=$((g + ${v:-0}))
			done
		fi
		echo "$(($(date +%s) - start)) $r $g"
		sleep 10
	done
) >"$work/timeline" &
rc=0
(
	[[ -z $cg ]] || echo $BASHPID >"$cg/cgroup.procs"
	exec /usr/bin/time -v -o "$work/go.time" "$bin" run --runner flink --endpoint "127.0.0.1:$port" \
		--environment_type LOOPBACK --input "$input" --output "$work/out" --k 8 --mode smooth \
		--chunk_size 100000 --seed 1 --metrics_out "$work/report.json" "$@" 2>"$work/run.log"
) || rc=$?
end=$(date +%s)
if ((rc != 0)); then
	why="see $work/run.log and $work/go.time"
	if grep -q 'OutOfMemoryError' "$work/run.log" "$work/jobserver.log" 2>/dev/null; then
		why="the job server ran out of heap (JVM_HEAP=$heap): $why"
	elif grep -q 'Command terminated by signal 9' "$work/go.time" 2>/dev/null; then
		why="the Go process was killed (signal 9; under a memory cgroup, its limit was hit): $why"
	fi
	echo "smoothanon run failed (exit $rc): $why" >&2
	exit 1
fi
# The bytes every job vertex wrote to its exchanges (Flink's write-bytes),
# from the MiniCluster's REST API while the job server still runs.
rest=$(sed -n 's#^MiniClusterJobServer: REST at \(http://[^ ]*\).*#\1#p' "$work/jobserver.log" | head -1)
shuffle=$(curl -s -m 10 "$rest/jobs/overview" | python3 -c '
import json, sys, urllib.request
rest = sys.argv[1]
jid = json.load(sys.stdin)["jobs"][0]["jid"]
job = json.load(urllib.request.urlopen(rest + "/jobs/" + jid, timeout=30))
print(sum(v["metrics"].get("write-bytes", 0) for v in job["vertices"]))' "$rest" 2>/dev/null) || shuffle=0
limit=none
[[ -z $cg ]] || limit=$(awk -v k="$go_mem_kb" 'BEGIN{printf "%.2f GB", k/1e6}')
sleep 6
read -r peak_jvm peak_tmp cpu_jvm wrote_jvm peak_disk <"$work/peaks"
go_rss=$(awk -F': ' '/Maximum resident/{print $2}' "$work/go.time")
go_cpu=$(awk -F': ' '/User time|System time/{s += $2} END{print s}' "$work/go.time")
python3 - "$work/report.json" "$rows" "$((end - start))" "$go_rss" "$peak_jvm" "$peak_tmp" "$limit" \
	"$go_cpu" "$cpu_jvm" "$(getconf CLK_TCK)" "$wrote_jvm" "$peak_disk" "${SLOTS:-16}" "${shuffle:-0}" <<'PY'
import json, sys
rep, rows, wall, go_kb, jvm_kb, tmp_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
limit = sys.argv[7]
go_cpu, jvm_cpu = float(sys.argv[8]), int(sys.argv[9]) / int(sys.argv[10])
wrote, disk_kb, slots, shuffle = int(sys.argv[11]), int(sys.argv[12]), sys.argv[13], int(sys.argv[14])
r = json.load(open(rep))
p = r.get("pipeline", {})
cpu = go_cpu + jvm_cpu
# The solver's own seconds, from the report: the chunks' first solves and
# the pools' (single-core, summed), a part of the Go process's CPU.
solves = r.get("solve", {}).get("seconds", 0) + p.get("pool", {}).get("seconds", 0)
print(f"flink local: {rows} rows, {p.get('chunks')} chunks, {p.get('flink_partitions')} partitions on {slots} slots, "
      f"wall {wall} s, {rows/wall:.0f} rows/s, CPU {cpu:.0f} s (Go {go_cpu:.0f}, JVM {jvm_cpu:.0f}) = {cpu/rows*1e6:.1f} CPU-us/row, solves {solves:.0f} s = {solves/rows*1e6:.1f} us/row, "
      f"Go peak RSS {go_kb/1e6:.2f} GB (cgroup limit {limit}), JVM peak RSS {jvm_kb/1e6:.2f} GB, spill peak {tmp_kb/1e6:.2f} GB, "
      f"work directory peak {disk_kb/1e6:.2f} GB (without the input), JVM disk writes {wrote/rows:.0f} B/row, shuffle {shuffle/rows:.0f} B/row, "
      f"Jaccard {r.get('jaccard', 0):.4f}, valid {r.get('valid')}, published {r.get('published')}")
PY
