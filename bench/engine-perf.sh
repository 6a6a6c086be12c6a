#!/usr/bin/env bash
# Instructions per message of amqpsax's engine beside Qpid Proton-C's
# pn_connection_driver, receiving and sending, counted by valgrind's
# callgrind (the goal: receive at least 5x, send at least 3x).
#
#   bench/engine-perf.sh                         # from anywhere in a clone
#   LENGTHS=4000,8000,16000 bench/engine-perf.sh # messages per connection
#   PROFILE=1 bench/engine-perf.sh               # and, per count, the top functions per message
#
# Each count is one connection of N messages, in memory, with only that
# connection's run counted (cmd/enginecg): the receivers of driver.go fed
# a client's recorded stream, and the senders of send.go fed a server's.
# Instructions per message = (I(N2) - I(N1)) / (N2 - N1) over the two
# longest lengths, so the set-up cancels; the shorter pair checks it: the
# script fails when the two pairs disagree by more than 2% (or 20
# instructions, where that is more: the set-up varies by up to ~20,000
# instructions from count to count, which at lengths 1000,2000 moved the
# shorter pair by up to 22 a message and failed CI once; from 2000 on it
# moves it by half that), when a run
# delivers or sends other than every message, or when a count is missing.
#
# Needs valgrind (Debian: apt-get install valgrind, which also has
# callgrind.h) and Qpid Proton-C (libqpid-proton11-dev); takes about a
# minute. Prints the counts per connection, then one Markdown table:
# direction, workload (bench's small, 435 B, and medium, 1,627 B),
# mode, engine and Proton instructions per message, and their ratio.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LENGTHS=${LENGTHS:-2000,4000,8000}
PROFILE=${PROFILE:-}
command -v valgrind >/dev/null 2>&1 ||
	{ echo "valgrind is not installed (Debian: apt-get install -y valgrind)" >&2; exit 2; }
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$here" && CGO_ENABLED=1 go build -tags proton -o "$work/enginecg" ./cmd/enginecg)
# Natively: the streams recorded, and every run once, checked.
"$work/enginecg" -write "$work/streams.gob" -lengths "$LENGTHS" >&2
mkdir "$work/cg"
names=()
[ -n "$PROFILE" ] && names=(--compress-strings=no) # function names in every dump
for impl in engine proton; do
	# GC off (none counted), one P, no async preemption; valgrind 3.19
	# cannot run RDTSCP, which Go's runtime uses where the CPU has it.
	if ! GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		valgrind --tool=callgrind --collect-atstart=no ${names[@]+"${names[@]}"} "--callgrind-out-file=$work/cg/cg.$impl" \
		"$work/enginecg" -read "$work/streams.gob" -impl "$impl" >"$work/$impl.log" 2>&1; then
		cat "$work/$impl.log" >&2
		echo "engine-perf: the counting run of $impl failed" >&2
		exit 1
	fi
done
"$work/enginecg" -report "$work/cg"
if [ -n "$PROFILE" ]; then
	echo
	"$work/enginecg" -profile "$work/cg" -top "${TOP:-15}"
fi
echo
echo "$(valgrind --version), $(go env GOVERSION), Qpid Proton-C $(pkg-config --modversion libqpid-proton 2>/dev/null || echo '?'), lengths $LENGTHS"
