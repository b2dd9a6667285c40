#!/usr/bin/env bash
# bench-names: ROWS generated user lists (mean 10 interests, so about
# 10·ROWS pairs) through the pipeline on prism in three forms: list<uint32>
# ids, list<string> names, and long-form string pairs. Each runs RUNS times
# (median quoted); prints wall time and peak RSS of each form and their
# ratios to the uint32 lists, and checks that the string lists and the
# string pairs give the same Jaccard and classes (the ids may differ a
# little: names are numbered by rank among those held, the ids as drawn). Usage: scripts/bench-names.sh [ROWS] [RUNS]
set -euo pipefail
rows=${1:-1000000}
runs=${2:-3}
work=${BENCH_DIR:-out/bench-names}
mkdir -p "$work"
sa="$work/smoothanon"
go build -o "$sa" ./cmd/smoothanon
"$sa" gen --model userlists --rows "$rows" --output "$work/ids.parquet" 2>/dev/null
"$sa" gen --model userlists --rows "$rows" --feature_names --output "$work/list-str.parquet" 2>/dev/null
"$sa" gen --model userlists --rows "$rows" --feature_names --shape long --output "$work/long-str.parquet" 2>/dev/null
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A wall rss result
for form in ids list-str long-str; do
	walls=() rsss=()
	for _ in $(seq "$runs"); do
		rm -rf "$work/out-$form"
		/usr/bin/time -f "%e %M" -o "$work/time" "$sa" run --input "$work/$form.parquet" --output "$work/out-$form" \
			--k 10 --user_ids keep --chunk_key hub --start mondrian 2> "$work/stderr"
		read -r w r < "$work/time"
		walls+=("$w") rsss+=("$r")
		result[$form]=$(grep -o 'J=[0-9.]* classes=[0-9]*' "$work/stderr")
	done
	wall[$form]=$(printf '%s\n' "${walls[@]}" | median)
	rss[$form]=$(printf '%s\n' "${rsss[@]}" | median)
done
echo "bench-names: $rows generated user lists, k=10, prism, hub/mondrian, median of $runs"
for form in ids list-str long-str; do
	awk -v f="$form" -v w="${wall[$form]}" -v r="${rss[$form]}" -v w0="${wall[ids]}" -v r0="${rss[ids]}" -v res="${result[$form]}" \
		'BEGIN { printf "  %-9s wall %7.2f s (%.2fx)  peak RSS %6.0f MB (%.2fx)  %s\n", f, w, w/w0, r/1024, r/r0, res }'
done
if [[ "${result[list-str]}" != "${result[long-str]}" ]]; then
	echo "bench-names: the string lists and the string pairs released differently" >&2
	exit 1
fi
