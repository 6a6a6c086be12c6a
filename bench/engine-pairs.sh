#!/usr/bin/env bash
# The engine beside Qpid Proton-C's connection driver, both ways: receiving a client's recorded stream and sending to a
# server's, in memory. Runs engine-perf.sh (instructions per message,
# callgrind) and then engine-time.sh (time, interleaved passes through
# benchstat), and prints both tables.
#
#   bench/engine-pairs.sh                        # the tables, also kept in bench/results/
#   RESULTS= bench/engine-pairs.sh               # print only (CI)
#   COUNT=6 BENCHTIME=100ms bench/engine-pairs.sh  # fewer, shorter passes
#
# Needs valgrind and Qpid Proton-C (Debian: valgrind, libqpid-proton11-dev);
# about two minutes on two cores. Fails when either script fails: a run
# that is not checked, a count that does not grow linearly with the stream.
# Kept, with RESULTS (default bench/results): engine-perf.md (the counts
# and the instruction table), engine-time.txt (the raw passes) and
# engine-time.md (the table of medians).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RESULTS=${RESULTS-$here/results}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== instructions per message (engine-perf.sh)"
bash "$here/engine-perf.sh" | tee "$work/engine-perf.md"
echo
echo "== time per message (engine-time.sh)"
if [ -n "$RESULTS" ]; then
	mkdir -p "$RESULTS"
	cp "$work/engine-perf.md" "$RESULTS/engine-perf.md"
	RESULTS=$RESULTS bash "$here/engine-time.sh"
else
	RESULTS= bash "$here/engine-time.sh"
fi
