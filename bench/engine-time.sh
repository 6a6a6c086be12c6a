#!/usr/bin/env bash
# Time per message of amqpsax's engine beside Qpid Proton-C's
# pn_connection_driver, receiving (BenchmarkReceive) and sending
# (BenchmarkSend), in interleaved passes through benchstat (the goal:
# receive at least 4x, send at least 3x).
#
#   bench/engine-time.sh                          # COUNT=10 passes of BENCHTIME=200ms
#   COUNT=20 BENCHTIME=500ms bench/engine-time.sh
#   RESULTS=bench/results bench/engine-time.sh    # keep the raw passes and the table there
#
# The benchmark binary is built once (-tags proton); each pass runs every
# stream of one implementation with -count 1, then the other's, the first
# alternating from pass to pass, all appended to one file, so a burst of
# load from elsewhere on the machine lands on both. Prints benchstat's
# tables (-col /impl) for Receive and Send, then one Markdown table: per
# direction and stream, the median ns per message of each and the ratio
# of the medians, Proton ÷ engine. A shared machine's timings are noisy:
# read benchstat's ± before a ratio, and engine-perf.sh's instruction
# counts beside it.
#
# Needs Qpid Proton-C (libqpid-proton11-dev); about 30 s at the defaults.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COUNT=${COUNT:-10}
BENCHTIME=${BENCHTIME:-200ms}
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work
if [ -n "${RESULTS:-}" ]; then
	mkdir -p "$RESULTS"
	out=$(cd "$RESULTS" && pwd)
fi

(cd "$here" && CGO_ENABLED=1 go test -c -tags proton -o "$work/bench.test" .)
raw=$out/engine-time.txt
: >"$raw"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
for i in $(seq "$COUNT"); do
	order=(engine proton)
	[ $((i % 2)) = 0 ] && order=(proton engine)
	echo "-- pass $i/$COUNT: ${order[*]}" >&2
	for impl in "${order[@]}"; do
		# Receive and Send in processes of their own: after the receive
		# benchmarks, the first send benchmark of the same process (small
		# unsettled) measured 245 ns a message against 88-128 ns alone —
		# a process's heap left by one task, not the engine.
		for task in Receive Send; do
			(cd "$work" && ./bench.test -test.run '^$' -test.bench "^Benchmark$task\$/.*/impl=$impl\$" \
				-test.benchmem -test.count 1 -test.benchtime "$BENCHTIME") >>"$raw"
		done
	done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
cd "$here"
for task in Receive Send; do
	go run golang.org/x/perf/cmd/benchstat -filter ".name:$task .unit:sec/op" -col /impl "$raw"
	echo
done

# The medians and their ratio, from the same passes.
awk '
/^Benchmark(Receive|Send)\// {
	split($1, f, "/"); task = substr(f[1], 10); st = substr(f[2], 8); im = substr(f[3], 6); sub(/-[0-9]+$/, "", im)
	ns[task, st, im] = ns[task, st, im] " " $3
	if (!((task, st) in seen)) { seen[task, st] = 1; order[++n] = task SUBSEP st }
}
function median(s,   a, k, i, j, x) {
	k = split(s, a, " ")
	for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	print "| direction | stream | passes | engine ns/msg | Proton ns/msg | Proton ÷ engine |"
	print "| --- | --- | ---: | ---: | ---: | ---: |"
	for (i = 1; i <= n; i++) {
		split(order[i], k, SUBSEP)
		e = ns[k[1], k[2], "engine"]; p = ns[k[1], k[2], "proton"]
		if (e == "" || p == "") continue
		printf "| %s | %s | %d | %.0f | %.0f | %.2fx |\n", tolower(k[1]), k[2], split(e, tmp, " "), median(e), median(p), median(p) / median(e)
	}
}' "$raw" >"$out/engine-time.md"
printf '\n%s, %s passes of -benchtime %s, load average %s before, %s after\n' \
	"$(date -u '+%Y-%m-%d %H:%M UTC')" "$COUNT" "$BENCHTIME" "$load_before" "$load_after" >>"$out/engine-time.md"
cat "$out/engine-time.md"
