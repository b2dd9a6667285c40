#!/usr/bin/env bash
# make assess-accuracy: for each data set, `smoothanon assess` at k = 8
# (smooth) beside the Jaccard `smoothanon run` then gets on prism, with
# the same seed and flags: predicted, interval, actual, the difference in
# points and whether the interval covers it. The real data sets are read
# from ../shared/data/raw (skipped when absent); LISTS (default 1e6)
# generated user lists (1e6 columns, as bench-pipeline's) are made here.
set -euo pipefail
BIN=${BIN:-out/smoothanon}
RAW=${RAW:-../shared/data/raw}
LISTS=${LISTS:-1000000}
SETS=${SETS:-adult dblp lists playstore}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/smoothanon-assess-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
prep() {
	case $1 in
	adult) [ -f "$RAW/adult.data.gz" ] && "$BIN" import --format adult --input "$RAW/adult.data.gz" --output "$WORK/$1.parquet" 2>/dev/null ;;
	playstore) [ -f "$RAW/googleplaystore.csv.gz" ] && "$BIN" import --format playstore --input "$RAW/googleplaystore.csv.gz" --output "$WORK/$1.parquet" 2>/dev/null ;;
	dblp) [ -f "$RAW/com-dblp.ungraph.noheader.txt.gz" ] && "$BIN" import --format edges --undirected --input "$RAW/com-dblp.ungraph.noheader.txt.gz" --output "$WORK/$1.parquet" 2>/dev/null ;;
	lists) "$BIN" gen --model userlists --rows "$LISTS" --columns 1000000 --mean_degree 10 --output "$WORK/$1.parquet" 2>/dev/null ;;
	esac
}
printf '%-10s %9s %8s %17s %8s %7s %7s %8s %8s\n' set rows assess predicted actual points covers "assess s" "run s"
for set in $SETS; do
	if ! prep "$set"; then
		echo "$set: skipped (no data under $RAW)"
		continue
	fi
	t0=$(date +%s.%N)
	"$BIN" assess --input "$WORK/$set.parquet" --k 8 --mode smooth --seed 1 --report "$WORK/$set-assess.json" > /dev/null
	t1=$(date +%s.%N)
	"$BIN" run --input "$WORK/$set.parquet" --output "$WORK/$set-out" --k 8 --seed 1 --metrics_out "$WORK/$set-run.json" > /dev/null 2>"$WORK/$set-run.err" || { tail -5 "$WORK/$set-run.err"; exit 1; }
	t2=$(date +%s.%N)
	python3 - "$set" "$WORK/$set-assess.json" "$WORK/$set-run.json" "$t0" "$t1" "$t2" <<'PY'
import json, sys
name, a, r, t0, t1, t2 = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), *map(float, sys.argv[4:])
p = a["price"][0]
pred, lo, hi, act = p["predicted"]["jaccard"], p["low"]["jaccard"], p["high"]["jaccard"], r["jaccard"]
print("%-10s %9d %8s %6.2f [%.2f, %.2f] %7.2f %+7.2f %7s %8.1f %8.1f" % (name, int(a["users"]), "whole" if a["whole_input"] else "sample",
      100*pred, 100*lo, 100*hi, 100*act, 100*(pred-act), "yes" if lo <= act <= hi else "NO", t1-t0, t2-t1))
PY
done
