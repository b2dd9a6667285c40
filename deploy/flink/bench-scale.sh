#!/usr/bin/env bash
# The scale bench: `make bench-flink` three times at BASE_ROWS (1e7) and
# once at SCALE_ROWS (1e8), one after the other on the same machine, then
# the per-row costs side by side: CPU seconds per row (Go and JVM, user +
# system) of the large run against the median of the small ones, and the
# peaks of each process. Goals (issue 40): CPU per row at SCALE_ROWS at most
# 1.15× that at BASE_ROWS; the Go process under its 2 GB cgroup; the JVM's
# peak no higher than at BASE_ROWS.
#
#   deploy/flink/bench-scale.sh            # 1e7 × 3, then 1e8
#   BASE_ROWS=1000000 SCALE_ROWS=10000000 deploy/flink/bench-scale.sh
#
# Needs about 2 GB of disk per 1e8 input rows (kept in WORK) and tens of GB
# for the blocking exchanges and spills of the large run; check df first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base=${BASE_ROWS:-10000000}
scale=${SCALE_ROWS:-100000000}
out=${WORK:-/tmp/smoothanon-flink-bench}/scale.txt
mkdir -p "$(dirname "$out")"
: >"$out"
for run in 1 2 3 "$scale"; do
	rows=$base
	[[ $run == "$scale" ]] && rows=$scale
	line=$(bash "$here/bench-local.sh" "$rows" | tail -1)
	echo "$line"
	echo "$line" >>"$out"
done
python3 - "$out" "$base" "$scale" <<'PY'
import re, statistics, sys
lines = open(sys.argv[1]).read().splitlines()
base, scale = int(sys.argv[2]), int(sys.argv[3])
def fig(line, pat):
    m = re.search(pat, line)
    return float(m.group(1)) if m else float("nan")
def row(line):
    return {"rows": fig(line, r"^flink local: (\d+) rows"), "cpu": fig(line, r"= ([\d.]+) CPU-us/row"),
            "solves": fig(line, r"solves \d+ s = ([\d.]+) us/row"),
            "go": fig(line, r"Go peak RSS ([\d.]+) GB"), "jvm": fig(line, r"JVM peak RSS ([\d.]+) GB")}
small = [row(l) for l in lines if row(l)["rows"] == base]
large = [row(l) for l in lines if row(l)["rows"] == scale]
if not small or not large:
    sys.exit("bench-scale: a run failed; see the lines above")
cpu = statistics.median(r["cpu"] for r in small)
big = large[0]
print(f"scale: {scale:.0e} rows {big['cpu']:.1f} CPU-us/row against {cpu:.1f} at {base:.0e} (median of {len(small)}): "
      f"{big['cpu']/cpu:.2f}x (goal <= 1.15); Go peak {big['go']:.2f} GB (goal <= 2), "
      f"JVM peak {big['jvm']:.2f} GB against {max(r['jvm'] for r in small):.2f} at {base:.0e}")
# The solves' share apart: what a chunk's solve costs depends on how alike
# its rows are, which changes with the rows over fixed columns.
sol = statistics.median(r["solves"] for r in small)
print(f"scale: solves {big['solves']:.1f} us/row against {sol:.1f} ({big['solves']/sol:.2f}x); "
      f"the rest {big['cpu']-big['solves']:.1f} against {cpu-sol:.1f} ({(big['cpu']-big['solves'])/(cpu-sol):.2f}x)")
PY
