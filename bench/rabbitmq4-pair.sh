#!/usr/bin/env bash
# Package broker beside RabbitMQ 4.0 (Debian 13's, run by .ci/rabbitmq4)
# with package client on every end: one producer to one consumer over
# one queue, and 8 producers to 8 consumers over 8 queues, 100-byte
# messages unsettled and accepted (BenchmarkBrokerRabbitMQ4,
# broker_rabbitmq4_test.go), on RabbitMQ's classic and quorum queues.
# COUNT interleaved passes of the compiled benchmark (each pass: every
# workload through every peer, N messages each), then benchstat's table
# and, per workload, the median msgs/s of each peer over the passes and
# the ratio of the medians (amqpsax ÷ RabbitMQ).
#
#   bash bench/rabbitmq4-pair.sh     # as root: starts RabbitMQ 4, runs, stops it
#   AMQPSAX_RABBITMQ4=127.0.0.1:5682 bash bench/rabbitmq4-pair.sh
#                                    # a node already answering (CI's): used and left running
#
# Knobs (environment):
#   COUNT                      passes (6)
#   N                          messages per run, across the run's pairs (100000)
#   OUT                        file the raw benchmark lines go to (a temporary one)
#   AMQPSAX_RABBITMQ4_PORT     the node's AMQP port when this starts it
#                              (5692; with its distribution and epmd ports
#                              25692 and 4389, beside CI's 5682)
#   AMQPSAX_RABBITMQ4_ROOT     the Debian 13 root this starts it in: one
#                              of its own (.ci/rabbitmq4's stop ends every
#                              process of its root, so two nodes never
#                              share one), copied from .ci/rabbitmq4's
#                              when that exists, else made by it
#   AMQPSAX_RABBITMQ4_DIR      the node's state directory
set -euo pipefail
cd "$(dirname "$0")"
COUNT=${COUNT:-6}
N=${N:-100000}
work=$(mktemp -d)
started=
cleanup() {
	if [ -n "$started" ]; then bash ../.ci/rabbitmq4 stop >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
say() { printf 'rabbitmq4-pair: %s\n' "$*" >&2; }

if [ -z "${AMQPSAX_RABBITMQ4:-}" ]; then
	export AMQPSAX_RABBITMQ4_PORT=${AMQPSAX_RABBITMQ4_PORT:-5692}
	export AMQPSAX_RABBITMQ4_DIR=${AMQPSAX_RABBITMQ4_DIR:-/tmp/amqpsax-rabbitmq4-pair}
	shared=/var/cache/amqpsax/rabbitmq4-trixie
	export AMQPSAX_RABBITMQ4_ROOT=${AMQPSAX_RABBITMQ4_ROOT:-$shared-pair}
	root=$AMQPSAX_RABBITMQ4_ROOT
	if [ ! -x "$root/usr/lib/rabbitmq/bin/rabbitmq-server" ] && [ -x "$shared/usr/lib/rabbitmq/bin/rabbitmq-server" ]; then
		# The shared root, without what a node running in it has
		# mounted (-x: proc, sys, dev) and its state directory (a bind
		# mount of the same file system: removed after).
		say "copying $shared to $root"
		rm -rf "$root.partial"
		cp -ax "$shared" "$root.partial"
		rm -rf "$root.partial/amqpsax"
		mv "$root.partial" "$root"
	fi
	started=1
	AMQPSAX_RABBITMQ4=$(bash ../.ci/rabbitmq4 start | sed -n 's/^AMQPSAX_RABBITMQ4=//p')
	[ -n "$AMQPSAX_RABBITMQ4" ] || { say "RabbitMQ 4 did not start"; exit 1; }
fi
export AMQPSAX_RABBITMQ4

go test -c -o "$work/bench.test" .
raw=${OUT:-$work/raw.txt}
: >"$raw"
for i in $(seq "$COUNT"); do
	say "pass $i of $COUNT ($N messages per run, against $AMQPSAX_RABBITMQ4)"
	(cd "$work" && ./bench.test -test.run '^$' -test.bench '^BenchmarkBrokerRabbitMQ4$' \
		-test.benchtime "${N}x" -test.count 1) >>"$raw"
done
go run golang.org/x/perf/cmd/benchstat -row /pairs -col /peer "$raw"

# The medians and their ratios, one row per workload.
awk -v count="$COUNT" '
/^BenchmarkBrokerRabbitMQ4\// {
	split($1, f, "/"); k = substr(f[2], 7); p = substr(f[3], 6); sub(/-[0-9]+$/, "", p)
	for (i = 3; i < NF; i++) if ($(i + 1) == "msgs/s") v[k, p] = v[k, p] " " $i
	pairs[k] = 1
}
function median(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	printf "\nmedian msgs/s of %d interleaved passes; ratio: amqpsax ÷ RabbitMQ 4\n\n", count
	print "| producers→consumers | amqpsax | rabbitmq4 (classic) | ratio | rabbitmq4 (quorum) | ratio |"
	print "| --- | --- | --- | --- | --- | --- |"
	for (k = 1; k <= 64; k++) {
		if (!(k in pairs)) continue
		a = median(v[k, "amqpsax"]); c = median(v[k, "rabbitmq4"]); q = median(v[k, "rabbitmq4-quorum"])
		printf "| %d→%d over %d queue%s | %.0f | %.0f | %.2fx | %.0f | %.2fx |\n", k, k, k, (k > 1 ? "s" : ""), a, c, (c ? a / c : 0), q, (q ? a / q : 0)
	}
}' "$raw"
