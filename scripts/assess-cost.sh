#!/usr/bin/env bash
# make assess-cost: what `smoothanon assess` costs as the input grows.
# For each of ROWS (default 1e6 and 1e7 generated user lists, 1e6
# columns, as assess-accuracy's), one assess at k = 8 (smooth): wall
# seconds, peak RSS, the input's bytes and the rows it read and priced.
# The cost should not grow with the input: it reads the footers and a
# bounded sample (--sample_rows). With EXACT=1, assess --exact instead
# (its job on prism counts every row): the job's seconds too.
set -euo pipefail
BIN=${BIN:-out/smoothanon}
ROWS=${ROWS:-1000000 10000000}
EXACT=${EXACT:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/smoothanon-assess-cost-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
exact=()
[ -n "$EXACT" ] && exact=(--exact --scratch "$WORK")
printf '%10s %10s %9s %9s %10s %10s %10s %8s\n' rows "input MB" "assess s" "peak MB" "read rows" "priced" predicted "exact s"
for rows in $ROWS; do
	in="$WORK/lists-$rows.parquet"
	"$BIN" gen --model userlists --rows "$rows" --columns 1000000 --mean_degree 10 --output "$in" 2>/dev/null
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$WORK/rss" "$BIN" assess --input "$in" --k 8 --mode smooth --seed 1 --report "$WORK/a.json" "${exact[@]}" > /dev/null 2>"$WORK/log" || { cat "$WORK/log" >&2; exit 1; }
	t1=$(date +%s.%N)
	python3 - "$rows" "$in" "$WORK/a.json" "$WORK/rss" "$t0" "$t1" <<'PY'
import json, os, sys
rows, path, a, rss, t0, t1 = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), open(sys.argv[4]).read().split()[-1], float(sys.argv[5]), float(sys.argv[6])
print("%10s %10.0f %9.1f %9.0f %10d %10d %9.2f%% %8s" % (rows, os.path.getsize(path) / 1e6, t1 - t0, int(rss) / 1024,
      int(a["read_rows"]), int(a["sample_rows"]), 100 * a["price"][0]["predicted"]["jaccard"],
      "%.1f" % a["risk_seconds"] if a.get("risk_exact") else "-"))
PY
	rm -f "$in"
done
