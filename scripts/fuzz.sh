#!/usr/bin/env bash
# Fuzz one Go target for a duration and fail only on a real finding.
#
#   scripts/fuzz.sh PKG FUNC FUZZTIME
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" at the -fuzztime boundary although nothing was found (a race in
# internal/fuzz, golang/go#75804, fixed in Go 1.27; seen here under load).
# Such a run — non-zero exit, that message, no new file in the target's
# testdata/fuzz corpus — is retried once; if it races again, the corpus is
# replayed deterministically and the target passes with a warning when the
# replay passes. Any other failure, or a written crasher, fails.
#
# Each new interesting input is minimized for at most FUZZMINIMIZE (default
# 1s; Go's default is 60s): with Go's default a brief run spends most of
# its time minimizing the first input that widened coverage and hardly
# fuzzes. A crasher is still written, less minimized.
set -uo pipefail
pkg=$1 fn=$2 fuzztime=$3
go=${GO:-go}
minimize=${FUZZMINIMIZE:-1s}
corpus="$pkg/testdata/fuzz/$fn"

raced() { # output, corpus listing before
	[[ "$(ls "$corpus" 2>/dev/null)" == "$2" ]] &&
		tail -n 6 <<<"$1" | grep -q "context deadline exceeded" &&
		! grep -q "Failing input written" <<<"$1"
}

for attempt in 1 2; do
	before=$(ls "$corpus" 2>/dev/null)
	out=$("$go" test -run '^$' -fuzz "^$fn\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" -parallel 1 "./$pkg" 2>&1)
	rc=$?
	echo "$out"
	((rc == 0)) && exit 0
	raced "$out" "$before" || exit "$rc"
	echo "fuzz $pkg $fn: fuzz coordinator deadline race (golang/go#75804), nothing found (attempt $attempt)" >&2
done
echo "fuzz $pkg $fn: replaying the corpus after two coordinator races" >&2
"$go" test -run "^$fn\$" -count=1 "./$pkg" || exit 1
echo "warning: fuzz $pkg $fn passed its corpus replay; the fuzzing itself was cut short twice" >&2
