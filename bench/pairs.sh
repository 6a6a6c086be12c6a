#!/usr/bin/env bash
# Measures the whole-message pairs (package message's Message
# against Qpid Proton-C's pn_message_t and go-amqp's Message, and the
# memmove floor) two ways, and prints them as one Markdown table:
#
#   - cmd/ratio: the median (quartiles) of peer ÷ ours over 301 adjacent
#     ~200 µs windows, which load from elsewhere hits alike;
#   - benchstat: the ratio of the medians of COUNT interleaved passes of
#     the compiled benchmark binary.
#
#   bench/pairs.sh                 # COUNT=10 passes of BENCHTIME=100ms
#   TABLE=1 bench/pairs.sh         # only the table, from the last results
#
# Needs Qpid Proton's headers and library (Debian: libqpid-proton11-dev)
# (benchstat is the bench module's own dependency).
# Output: results/message-pairs.txt (raw benchmarks),
# results/message-benchstat.txt, results/message-ratio.txt, and the table
# (results/message-table.md, and standard output), which
# results/message-section.md quotes with what the numbers mean: run.sh
# appends that section to RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")"
COUNT=${COUNT:-10}
BENCHTIME=${BENCHTIME:-100ms}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pairs=(
	"Decode proton-message message-owned"
	"Decode proton-message message-nocopy"
	"Decode goamqp message-owned"
	"Decode memmove message-owned"
	"Decode memmove proton-message"
	"Encode proton-message message-build"
	"Encode goamqp message-build"
	"Encode goamqp message-build-map"
	"Encode memmove message-build"
	"Encode memmove proton-message"
)

if [ -z "${TABLE:-}" ]; then
	go test -c -tags proton -o "$work/bench.test" .
	go build -tags proton -o "$work/ratio" ./cmd/ratio


	: >results/message-ratio.txt
	for p in "${pairs[@]}"; do
		echo "== ratio $p" >&2
		# shellcheck disable=SC2086
		(cd "$work" && ./ratio $p) >>results/message-ratio.txt
	done

	impls='message-owned|message-nocopy|message-build|message-build-map|memmove|proton-message|goamqp'
	: >results/message-pairs.txt
	for i in $(seq "$COUNT"); do
		echo "== pass $i of $COUNT" >&2
		(cd "$work" && ./bench.test -test.run '^$' -test.bench "^Benchmark(Decode|Encode)/.*/impl=($impls)\$" \
			-test.benchmem -test.benchtime "$BENCHTIME" -test.count 1) >>results/message-pairs.txt
	done
	go run golang.org/x/perf/cmd/benchstat -row /workload -col /impl results/message-pairs.txt >results/message-benchstat.txt
fi

# The table: one row per pair and measure, one column per workload.
awk -v pairs="$(printf '%s\n' "${pairs[@]}")" '
BEGIN {
	np = split(pairs, P, "\n")
	nw = split("small medium data-64k data-1m ints-10k strings-10k longs-10k mobile-strings-50k mobile-map-30k", W, " ")
}
FILENAME ~ /ratio/ {
	if ($3 == "÷") { task = $1; peer = $2; ours = $4; sub(/:$/, "", task); sub(/,$/, "", ours); next }
	r[task, peer, ours, $1] = $2 " " $3
	next
}
/^Benchmark/ {
	split($1, f, "/"); t = substr(f[1], 10); wl = substr(f[2], 10); im = substr(f[3], 6); sub(/-[0-9]+$/, "", im)
	ns[t, wl, im] = ns[t, wl, im] " " $3
}
function median(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	head = "| task | peer | ours | measure |"; rule = "| --- | --- | --- | --- |"
	for (j = 1; j <= nw; j++) { head = head " " W[j] " |"; rule = rule " ---: |" }
	print head; print rule
	for (i = 1; i <= np; i++) {
		split(P[i], q, " ")
		for (m = 1; m <= 2; m++) {
			line = "| " q[1] " | " q[2] " | " q[3] " | " (m == 1 ? "cmd/ratio" : "benchstat") " |"
			for (j = 1; j <= nw; j++) {
				v = ""
				if (m == 1) v = r[q[1], q[2], q[3], W[j]]
				else if (ns[q[1], W[j], q[2]] != "" && ns[q[1], W[j], q[3]] != "")
					v = sprintf("%.2fx", median(ns[q[1], W[j], q[2]]) / median(ns[q[1], W[j], q[3]]))
				line = line " " v " |"
			}
			print line
		}
	}
}' results/message-ratio.txt results/message-pairs.txt | tee results/message-table.md
