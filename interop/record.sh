#!/usr/bin/env bash
# interop/record.sh — regenerate the interop corpus of testdata/peers in one
# command (from anywhere in the repository):
#
#     bash interop/record.sh
#
# Brings RabbitMQ up with .ci/broker (or uses the one already answering on
# 127.0.0.1:5672, and then leaves it running), starts the Proton-engine
# broker stand-in of interop/proton/broker.py for uAMQP-C (which cannot
# exchange messages with RabbitMQ 3.10, see interop/uamqp/client.py), runs
# every client through the recording proxy (interop/cmd/record), writes each
# connection's two byte streams to testdata/peers/NAME-N-{client,server}.bin,
# and runs testdata/peers/gen.py for the frame and message lists.
#
# Needs: Go, node and npm (rhea is installed with `npm ci` from
# interop/rhea/package-lock.json), Debian's python3-qpid-proton and
# python3-uamqp (installed with apt-get when missing and running as root),
# and rabbitmq-server (installed by .ci/broker). Takes about a minute.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t0=$SECONDS
out=testdata/peers
py=/usr/bin/python3

say() { printf 'record: %s\n' "$*" >&2; }

need_deb() { # need_deb MODULE PACKAGE
	if ! $py -c "import $1" 2>/dev/null; then
		[ "$(id -u)" = 0 ] || { say "$py cannot import $1: install Debian's $2"; exit 1; }
		say "installing Debian's $2"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
	fi
}
need_deb proton python3-qpid-proton
need_deb uamqp python3-uamqp
command -v npm >/dev/null || { say "npm is not installed (the rhea client needs node and npm)"; exit 1; }

stop_rabbit=
if bash .ci/broker status; then
	say "using the RabbitMQ already answering on 127.0.0.1:5672"
else
	bash .ci/broker start >/dev/null
	stop_rabbit=1
fi
bin=$(mktemp -d)
pbroker=
cleanup() {
	[ -n "$pbroker" ] && kill "$pbroker" 2>/dev/null || true
	rm -rf "$bin"
	if [ -n "$stop_rabbit" ]; then bash .ci/broker stop || true; fi
}
trap cleanup EXIT

(cd interop && go build -o "$bin/record" ./cmd/record && go build -o "$bin/goamqp-client" ./cmd/goamqp-client)
(cd interop/rhea && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

pport=5673
$py interop/proton/broker.py $pport >"$bin/proton-broker.log" 2>&1 &
pbroker=$!
for _ in $(seq 1 50); do grep -q listening "$bin/proton-broker.log" && break; sleep 0.1; done
grep -q listening "$bin/proton-broker.log" || { cat "$bin/proton-broker.log"; say "the Proton broker did not start"; exit 1; }

rm -f "$out"/*.bin "$out"/*-frames.jsonl "$out"/*-messages.jsonl
export AMQPSAX_RUN=${AMQPSAX_RUN:-$(date +%s)}
rec() { "$bin/record" -out "$out" "$@"; }
rec -name goamqp -- "$bin/goamqp-client"
rec -name rhea -- node interop/rhea/client.js
rec -name proton -- $py interop/proton/client.py
rec -tls -broker 127.0.0.1:$pport -name uamqp-protonbroker -- $py interop/uamqp/client.py proton
rec -tls -name uamqp-rabbitmq -- $py interop/uamqp/client.py rabbitmq

$py "$out/gen.py"
say "done in $((SECONDS - t0))s"
