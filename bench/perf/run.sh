#!/usr/bin/env bash
# Instructions per decode of amqpsax's decoders beside a floor walker,
# counted by valgrind's callgrind: figures that repeat run after run on a
# machine too noisy for timings.
#
#   bench/perf/run.sh              # from anywhere in a clone
#   N=50 bench/perf/run.sh         # decodes counted per figure (default 20)
#   ONLY="message-decode small" bench/perf/run.sh   # one count (pairs: walker workload ...)
#
# Needs valgrind (Debian: apt-get install -y valgrind) and Go; takes a
# minute or two. Prints one Markdown table: per workload of the bench
# module (bench/workload.go), the instructions per decode of dispatch with
# a no-op Handler and with a BatchHandler, of a stream.Cursor walk reading
# every scalar, of message.Scan, and of the floor (floor.go), then
# dispatch's and the walk's ratios to the floor. The last line gives the
# worst ratio over the message-shaped workloads (small, medium, ints,
# strings: the large data body and the array are dominated by one value).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=${N:-20}
command -v valgrind >/dev/null 2>&1 ||
	{ echo "valgrind is not installed (Debian: apt-get install -y valgrind)" >&2; exit 2; }
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$here" && go test -c -o "$work/perf.test" .)
(cd "$here" && PERF_DIR=$work "$work/perf.test" -test.run '^TestWriteWorkloads$' >/dev/null)

workloads=(small medium data-64k ints-10k strings-10k longs-10k)
walkers=(dispatch-nop dispatch-batch stream-walk message-scan message-decode message-append floor)

pkg=github.com/amqpsax/amqpsax/bench/perf

# count WALKER WORKLOAD: instructions per decode, one valgrind run that
# counts only inside the cg* functions (GC off, no async preemption, one
# thread: nothing but the walk is counted).
count() {
	local out="$work/cg.$1.$2"
	(cd "$here" && PERF_DIR=$work PERF_WORKLOAD=$2 PERF_WALKER=$1 PERF_N=$N \
		GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 \
		valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=$pkg.cg*" \
		--callgrind-out-file="$out" "$work/perf.test" -test.run '^TestCallgrind$' -test.v \
		>"$out.log" 2>&1) || { cat "$out.log" >&2; exit 1; }
	grep -q "^counted $1 $2 $N" "$out.log" || { cat "$out.log" >&2; echo "no count for $1 $2" >&2; exit 1; }
	awk -v n="$N" '/^(totals|summary):/ { t = $2 } END { if (t == "") exit 1; printf "%d\n", t / n + 0.5 }' "$out"
}

# ONLY="walker workload ...": print those counts and stop (a quick check
# while working on one decoder).
if [ -n "${ONLY:-}" ]; then
	set -- $ONLY
	while [ $# -ge 2 ]; do
		printf '%s %s %s\n' "$2" "$1" "$(count "$1" "$2")"
		shift 2
	done
	exit 0
fi

{
	for wl in "${workloads[@]}"; do
		for wk in "${walkers[@]}"; do
			printf '%s %s %s\n' "$wl" "$wk" "$(count "$wk" "$wl")"
		done
	done
} >"$work/counts"

awk -v walkers="${walkers[*]}" -v workloads="${workloads[*]}" '
function fmt(n,   s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
{ c[$1, $2] = $3 }
END {
	nk = split(walkers, wk, " "); nw = split(workloads, wl, " ")
	print "instructions per decode (callgrind); ratio = decoder / floor"
	print ""
	head = "| workload |"; rule = "|---|"
	for (i = 1; i <= nk; i++) { head = head " " wk[i] " |"; rule = rule "--:|" }
	print head " dispatch ÷ floor | stream ÷ floor |"
	print rule "--:|--:|"
	for (j = 1; j <= nw; j++) {
		w = wl[j]; line = "| " w " |"
		for (i = 1; i <= nk; i++) line = line " " fmt(c[w, wk[i]]) " |"
		rd = c[w, "dispatch-nop"] / c[w, "floor"]; rs = c[w, "stream-walk"] / c[w, "floor"]
		printf "%s %.2fx | %.2fx |\n", line, rd, rs
		if (w != "data-64k" && w != "longs-10k") {
			if (rd > wd) wd = rd
			if (rs > ws) ws = rs
		}
	}
	print ""
	printf "worst over small, medium, ints-10k, strings-10k: dispatch %.2fx floor, stream %.2fx floor\n", wd, ws
}' "$work/counts"
