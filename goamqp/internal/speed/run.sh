#!/usr/bin/env bash
# run.sh — the same go-amqp program (speed_test.go, go-amqp's API only)
# built twice, against go-amqp v1.7.0 (go.mod) and with goamqp in its place
# (goamqp.mod: the replace line), run interleaved against examples/broker
# and compared with benchstat.
#
#   bash goamqp/internal/speed/run.sh
#   COUNT=10 BENCHTIME=2s bash goamqp/internal/speed/run.sh
#
# Knobs (environment):
#   COUNT      passes of each binary, alternating (6)
#   BENCHTIME  -benchtime of each pass (1s)
#   BENCH      -bench regexp (.)
#   PORT       examples/broker's port (0: one the system picks)
#   PROFILE    a directory: after the timed passes, more of each binary
#              (not in the table) write there the CPU profile of each
#              benchmark's timed part (cpu-IMPL-BENCH-MSG.out) and a
#              memory profile of all (mem-IMPL.out, -memprofilerate=1,
#              the queues' filling included), with the test binaries
#              beside them for go tool pprof
#   TRACE      a directory: after the timed passes, more of each binary
#              (not in the table) write there the runtime trace of each
#              benchmark's timed part (trace-IMPL-BENCH-MSG.out; where
#              goroutines wait and who wakes them: go tool trace, or
#              go tool trace -pprof=sync for where they block)
#   RESULTS    a file to keep the raw passes in (both binaries, labelled)
#
# The program's own broker: examples/broker from this checkout, started
# here on 127.0.0.1:PORT and stopped at the end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
count=${COUNT:-6}
benchtime=${BENCHTIME:-1s}
bench=${BENCH:-.}
port=${PORT:-0}
# The module is not one of the repository's workspace modules.
export GOWORK=off

work=$(mktemp -d)
broker_pid=
cleanup() {
	if [ -n "$broker_pid" ]; then kill "$broker_pid" 2>/dev/null || true; wait "$broker_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "== build: examples/broker, the program against go-amqp and against goamqp"
(cd "$root" && go build -o "$work/broker" ./examples/broker)
(cd "$here" && go test -c -o "$work/go-amqp.test" .)
(cd "$here" && go test -c -modfile=goamqp.mod -o "$work/goamqp.test" .)

# No bound on a queue's messages or the broker's memory: ReceiveAccept
# puts b.N messages on a queue before it times their receiving.
"$work/broker" -listen "127.0.0.1:$port" -max-queue -1 -max-memory -1 >"$work/broker.log" 2>&1 &
broker_pid=$!
addr=
for _ in $(seq 1 100); do
	addr=$(sed -n 's/.*broker listening on //p' "$work/broker.log")
	[ -n "$addr" ] && break
	kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log" >&2; echo "run.sh: examples/broker exited" >&2; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { echo "run.sh: examples/broker did not listen within 10 s" >&2; exit 1; }
export SPEED_BROKER=amqp://$addr
# The benchmarks report the broker's CPU time per message too.
export SPEED_BROKER_PID=$broker_pid

echo "== $count passes of each, alternating, -benchtime $benchtime, against examples/broker on $addr"
for i in $(seq 1 "$count"); do
	for impl in go-amqp goamqp; do
		(cd "$here" && "$work/$impl.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" \
			-test.count 1) >>"$work/$impl.txt"
	done
	printf '.'
done
echo
# each_case ENV DIR KIND: each binary (copied to DIR) runs each benchmark
# once more with ENV=DIR/KIND-IMPL-BENCH-MSG.out, which speed_test.go
# writes the timed part's profile or trace to.
each_case() {
	mkdir -p "$2"
	for impl in go-amqp goamqp; do
		cp "$work/$impl.test" "$2/"
		for b in Send64 ReceiveAccept; do
			for m in data full; do
				(cd "$here" && env "$1=$2/$3-$impl-$b-$m.out" "$work/$impl.test" -test.run '^$' \
					-test.bench "^Benchmark$b\$/^msg=$m\$" -test.benchtime "$benchtime") >/dev/null
			done
		done
	done
}
if [ -n "${PROFILE:-}" ]; then
	each_case SPEED_CPUPROFILE "$PROFILE" cpu
	for impl in go-amqp goamqp; do
		(cd "$here" && "$work/$impl.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" \
			-test.memprofile "$PROFILE/mem-$impl.out" -test.memprofilerate 1) >/dev/null
	done
	echo "profiles in $PROFILE"
fi
if [ -n "${TRACE:-}" ]; then
	each_case SPEED_TRACE "$TRACE" trace
	echo "traces in $TRACE"
fi
if [ -n "${RESULTS:-}" ]; then
	for impl in go-amqp goamqp; do sed "s/^Benchmark/$impl: Benchmark/" "$work/$impl.txt"; done >"$RESULTS"
fi
(cd "$root/bench" && GOWORK= go run golang.org/x/perf/cmd/benchstat "go-amqp=$work/go-amqp.txt" "goamqp=$work/goamqp.txt")
