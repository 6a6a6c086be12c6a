#!/usr/bin/env bash
# Runs the bench module's vet, tests and benchmarks, and writes RESULTS.md.
#
#   bench/run.sh                      # everything, COUNT=8 passes of BENCHTIME=200ms
#   COUNT=10 BENCHTIME=1s bench/run.sh
#   BENCH='Route' bench/run.sh        # a -bench regexp
#   PROTON=0 bench/run.sh             # leave Proton-C out even where it is installed
#
# Tests run in the default build and, when Qpid Proton's headers and
# library are present (Debian: libqpid-proton11-dev), with -tags proton.
# The benchmarks run once: with -tags proton when Proton is present (that
# build has every pure-Go benchmark too), else without.
#
# The benchmark binary is run COUNT times with -count=1 rather than once
# with -count=COUNT, so the passes interleave: a burst of load from
# elsewhere on the machine spreads over every implementation instead of
# landing on the six runs of one.
#
# Output: results/bench.txt (raw), results/benchstat.txt (benchstat's tables,
# one per task, columns by implementation, deltas against the first),
# results/meta.txt (machine), and RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")"

COUNT=${COUNT:-8}
BENCHTIME=${BENCHTIME:-200ms}
BENCH=${BENCH:-.}
PROTON=${PROTON:-auto}

tags=()
if [ "$PROTON" != 0 ] && pkg-config --exists libqpid-proton 2>/dev/null &&
	echo '#include <proton/message.h>' | $(go env CC) $(pkg-config --cflags libqpid-proton) -E - >/dev/null 2>&1; then
	tags=(-tags proton)
fi

echo "== vet and test (default build)" >&2
test -z "$(gofmt -l .)" || { gofmt -l . >&2; echo "gofmt: files above need formatting" >&2; exit 1; }
go vet ./...
go test -count=1 ./...
if [ ${#tags[@]} -gt 0 ]; then
	echo "== vet and test (-tags proton)" >&2
	go vet "${tags[@]}" ./...
	go test -count=1 "${tags[@]}" ./...
fi

mkdir -p results
bin=$(mktemp -d)/bench.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c "${tags[@]}" -o "$bin" .

{
	echo "date:       $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu:        $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) logical CPUs"
	echo "go:         $(go version)"
	echo "kernel:     $(uname -sr)"
	if [ ${#tags[@]} -gt 0 ]; then
		echo "proton:     Qpid Proton-C $(pkg-config --modversion libqpid-proton) (cgo, -tags proton)"
	else
		echo "proton:     not measured"
	fi
	echo "go-amqp:    $(go list -m -f '{{.Version}}' github.com/Azure/go-amqp)"
	echo "msgp:       $(go list -m -f '{{.Version}}' github.com/tinylib/msgp)"
	echo "run:        $COUNT interleaved passes, -benchtime $BENCHTIME, -bench '$BENCH'"
	echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg) (before)"
} >results/meta.txt

echo "== benchmarks: $COUNT passes" >&2
start=$(date +%s)
: >results/bench.txt
for i in $(seq "$COUNT"); do
	echo "-- pass $i/$COUNT" >&2
	"$bin" -test.run '^$' -test.bench "$BENCH" -test.benchmem -test.count 1 \
		-test.benchtime "$BENCHTIME" -test.timeout 60m >>results/bench.txt
done
end=$(date +%s)
{
	echo "load avg:   $(cut -d' ' -f1-3 /proc/loadavg) (after)"
	echo "took:       $(((end - start) / 60))m$(((end - start) % 60))s"
} >>results/meta.txt

go run golang.org/x/perf/cmd/benchstat -table .name -row /workload -col /impl results/bench.txt >results/benchstat.txt
go run ./internal/report -in results/bench.txt -meta results/meta.txt >RESULTS.md
# The whole-message pairs, measured apart by pairs.sh (cmd/ratio and
# interleaved passes), with what their numbers mean: after the summary.
if [ -f results/message-section.md ]; then
	awk -v f=results/message-section.md '/^## Decode$/ && !done { while ((getline l < f) > 0) print l; print ""; done = 1 } { print }' \
		RESULTS.md >RESULTS.md.tmp && mv RESULTS.md.tmp RESULTS.md
fi
echo "wrote RESULTS.md, results/bench.txt, results/benchstat.txt" >&2
