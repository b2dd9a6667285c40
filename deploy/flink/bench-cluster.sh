#!/usr/bin/env bash
# ROWS generated user lists through the pipeline on the standalone Flink
# cluster (cluster.sh: JobManager + 2 TaskManagers, PROCESS Go workers), on
# prism, and on the embedded Flink (bench-local.sh); prints wall time, rows/s
# and peak memory per process.
#
#   deploy/flink/bench-cluster.sh [ROWS]      (default 1,000,000)
#
# Environment: WORK (default /tmp/smoothanon-cluster-bench), REST_PORT
# (18081), JOB_PORT (18099), SHARDS (0), SKIP_LOCAL=1 skips the embedded Flink.
set -euo pipefail

rows=${1:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${WORK:-/tmp/smoothanon-cluster-bench}
export REST_PORT=${REST_PORT:-18081} RPC_PORT=${RPC_PORT:-16123}
job_port=${JOB_PORT:-18099}
mkdir -p "$work"
work=$(cd "$work" && pwd)
run=$work/cluster
marker=SMOOTHANON_BENCH_RUN=$$

(cd "$root" && go build -o "$work/smoothanon" ./cmd/smoothanon && go build -o "$work/boot" github.com/apache/beam/sdks/v2/go/container)
bin=$work/smoothanon
input=$work/userlists-$rows.parquet
# The same input as bench-local.sh makes.
[ -f "$input" ] || "$bin" gen --model userlists --rows "$rows" --columns 1000000 --mean_degree 10 --zipf 1.1 --seed 1 --output "$input"
# One pseudonym key for every run, so the releases can be compared.
key=$work/pseudonym.key
[ -s "$key" ] || od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$key"
# SHARDS (default 0, automatic: one 1e6-row shard) sets --shards.
flags=(--input "$input" --k 8 --mode smooth --chunk_size 100000 --seed 1 --pseudonym_key_file "$key" --shards "${SHARDS:-0}")

report() { # NAME WALL_S EXTRA
	python3 - "$@" <<'PY'
import json, sys
name, rows, wall, rep, extra = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
r = json.load(open(rep))
print(f"{name}: {rows} rows, wall {wall:.0f} s, {rows/wall:.0f} rows/s, Jaccard {r.get('jaccard', 0):.4f}, valid {r.get('valid')}; {extra}")
PY
}

# prism: one process.
rm -rf "$work/out-prism"
start=$(date +%s.%N)
/usr/bin/time -v -o "$work/prism.time" "$bin" run "${flags[@]}" --output "$work/out-prism" --metrics_out "$work/prism.json" 2>"$work/prism.log"
wall=$(echo "$(date +%s.%N) - $start" | bc)
report prism "$rows" "$wall" "$work/prism.json" "peak RSS $(awk -F': ' '/Maximum resident/{printf "%.2f GB", $2/1e6}' "$work/prism.time")"

# The cluster, the job server pointed at it, PROCESS workers.
bash "$here/cluster.sh" stop "$run" 2>/dev/null || true
rm -rf "$run"
env "$marker" bash "$here/cluster.sh" start "$run"
args=$(bash "$here/fetch-jobserver.sh")
(cd "$work" && exec env "$marker" setsid java --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
	--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED \
	--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
	-Xmx1g @"$args" --job-host=127.0.0.1 --job-port="$job_port" --artifact-port=0 --expansion-port=0 \
	--flink-master="localhost:$REST_PORT" --flink-conf-dir="$run/conf" --artifacts-dir="$work/artifacts" \
	>"$work/jobserver.log" 2>&1) &
js=$!
trap 'kill -TERM -- -$js 2>/dev/null || true; bash "$here/cluster.sh" stop "$run"' EXIT
for _ in $(seq 120); do (echo >"/dev/tcp/127.0.0.1/$job_port") 2>/dev/null && break; sleep 1; done

# Peak RSS (VmHWM) of each java process and of each Go worker, and the peak
# of all workers' RSS together, sampled every 2 s.
(
	declare -A peak pidname
	sumpeak=0
	while kill -0 $js 2>/dev/null; do
		for f in "$run"/*.pid; do [ -e "$f" ] && pidname[$(cat "$f")]=$(basename "$f" .pid); done
		pidname[$js]=jobserver
		sum=0
		for p in /proc/[0-9]*; do
			grep -qz "^$marker\$" "$p/environ" 2>/dev/null || continue
			cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
			name=${pidname[${p#/proc/}]:-}
			case $cmd in *--worker=true*) name=worker ;; esac
			[ -n "$name" ] || continue
			# A zombie's status has no VmHWM/VmRSS lines: count it as 0.
			hwm=$(awk '/^VmHWM:/{print $2}' "$p/status" 2>/dev/null)
			hwm=${hwm:-0}
			if [ "$name" = worker ]; then
				rss=$(awk '/^VmRSS:/{print $2}' "$p/status" 2>/dev/null)
				sum=$((sum + ${rss:-0}))
				name=worker-max
			fi
			((hwm > ${peak[$name]:-0})) && peak[$name]=$hwm
		done
		((sum > sumpeak)) && sumpeak=$sum
		{ for k in "${!peak[@]}"; do echo "$k ${peak[$k]}"; done; echo "workers-sum $sumpeak"; } >"$work/peaks.tmp" && mv "$work/peaks.tmp" "$work/peaks"
		sleep 2
	done
) &

rm -rf "$work/out-cluster"
start=$(date +%s.%N)
"$bin" run --runner flink --endpoint "127.0.0.1:$job_port" --environment_type PROCESS \
	--environment_config "{\"command\":\"$here/process-boot.sh\",\"env\":{\"BEAM_GO_BOOT\":\"$work/boot\"}}" \
	--worker_binary "$bin" "${flags[@]}" --output "$work/out-cluster" --metrics_out "$work/cluster.json" 2>"$work/cluster.log"
wall=$(echo "$(date +%s.%N) - $start" | bc)
sleep 4
peaks=$(sort "$work/peaks" | awk '{printf "%s%s %.2f GB", sep, $1, $2/1e6; sep=", "}')
report "flink cluster (JM + 2 TM x 2 slots, PROCESS)" "$rows" "$wall" "$work/cluster.json" "peak RSS: $peaks (worker-max: the largest single Go worker; workers-sum: all Go workers at once)"
# The shards, not _SUCCESS: its run id and report hash differ per run.
cmp -s <(cat "$work"/out-prism/part-*) <(cat "$work"/out-cluster/part-*) && echo "cluster release == prism release" || echo "cluster release DIFFERS from prism's"
trap - EXIT
kill -TERM -- -$js 2>/dev/null || true
bash "$here/cluster.sh" stop "$run"

[ "${SKIP_LOCAL:-}" = 1 ] || WORK=$work/local SLOTS=4 bash "$here/bench-local.sh" "$rows" --pseudonym_key_file "$key"
echo "(figures taken on $(nproc) cores; load average at the end: $(cut -d" " -f1-3 /proc/loadavg))"
