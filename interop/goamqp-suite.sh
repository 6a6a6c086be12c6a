#!/usr/bin/env bash
# goamqp-suite.sh — Azure/go-amqp v1.7.0's own integration suite against a
# broker: integration_test.go (17 tests, gated by the AMQP_BROKER_ADDR
# environment variable, a URL; each test is skipped when it is empty) and
# example_test.go (compiled, not run: no example has an Output comment),
# copied unchanged from the module cache into a temporary module of their
# own (package amqp_test, so only go-amqp's exported API).
#
#   bash interop/goamqp-suite.sh [-known TARGET] [-replace DIR] [-run REGEXP] URL
#
#   URL           the broker, as AMQP_BROKER_ADDR: amqp://127.0.0.1:PORT
#                 (no SASL layer, as most tests dial), or with guest:guest@
#                 before the host where the broker requires SASL PLAIN
#                 (RabbitMQ 4); it starts nothing itself
#   -known TARGET  the failures goamqp-suite.known lists for TARGET
#                 (examples-broker, rabbitmq4) are reported and do not
#                 fail the run; any other failure does. Without -known,
#                 every failure does.
#   -replace DIR  test the module in DIR in go-amqp's place (a drop-in:
#                 this repository's goamqp, or one with module path
#                 github.com/Azure/go-amqp), through a replace directive:
#                 the same tests, the same files
#   -run REGEXP   only the top-level tests it matches
#
#   GOAMQP_SUITE_TIMEOUT  each test's time-out (2m)
#   GOAMQP_SUITE_LOG      where the full output goes (a new temporary file)
#
# Each top-level test runs in a process of its own (the test binary is
# built once), so one that panics (TestMultipleSendersSharedSession panics
# from its sender goroutines when a Send times out) cannot take the later
# ones with it. Prints a line per test (the test and its subtests passed,
# failed, skipped: 332 in all, 17 tests and 315 subtests) and the summary;
# the full output is kept in a log file it names.
set -euo pipefail

known_target= replace= run='.*'
# Per test: the longest passes in about 20 s (TestIntegrationClose);
# one that deadlocks costs this much.
timeout=${GOAMQP_SUITE_TIMEOUT:-2m}
while [ $# -gt 0 ]; do
	case $1 in
	-known) known_target=$2; shift 2 ;;
	-replace) replace=$(cd "$2" && pwd); shift 2 ;;
	-run) run=$2; shift 2 ;;
	-*) echo "goamqp-suite: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
broker=$1
here=$(cd "$(dirname "$0")" && pwd)
known_file=$here/goamqp-suite.known

# The files, from the module cache (downloaded through the interop
# module, whose go.sum pins v1.7.0).
src=$(cd "$here" && go mod download -json github.com/Azure/go-amqp@v1.7.0 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -f "$src/integration_test.go" ] || { echo "goamqp-suite: go-amqp v1.7.0 is not in the module cache ($src)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/mod"
cp "$src/integration_test.go" "$src/example_test.go" "$work/mod/"
chmod u+w "$work/mod"/*.go
# go-amqp's go.sum holds the sums of what its tests import.
cp "$src/go.sum" "$work/mod/go.sum"
chmod u+w "$work/mod/go.sum"
grep '^github.com/Azure/go-amqp v1.7.0' "$here/go.sum" >>"$work/mod/go.sum"
{
	echo 'module amqpsax.test/goamqpsuite'
	echo
	echo 'go 1.25'
	echo
	echo 'require github.com/Azure/go-amqp v1.7.0'
	if [ -n "$replace" ]; then
		echo
		echo "replace github.com/Azure/go-amqp => $replace"
		# goamqp requires this repository's module, unpublished
		echo "replace github.com/amqpsax/amqpsax => $(cd "$here/.." && pwd)"
	fi
} >"$work/mod/go.mod"
export GOWORK=off
(cd "$work/mod" && go mod tidy >/dev/null && go test -c -o "$work/suite.test" .) ||
	{ echo "goamqp-suite: the suite does not build${replace:+ against $replace}" >&2; exit 1; }

# known TEST: is TEST (or its parent) listed for the target? A parent
# whose only failing subtests are listed is known through them.
known_names=()
if [ -n "$known_target" ]; then
	[ -f "$known_file" ] || { echo "goamqp-suite: no $known_file" >&2; exit 1; }
	while read -r target name _; do
		case $target in '' | \#*) continue ;; esac
		[ "$target" = "$known_target" ] && known_names+=("$name")
	done <"$known_file"
fi
is_known() {
	local k
	for k in ${known_names[@]+"${known_names[@]}"}; do
		[ "$1" = "$k" ] && return 0
		case $1 in "$k"/*) return 0 ;; esac
	done
	return 1
}

log=${GOAMQP_SUITE_LOG:-$(mktemp -t goamqp-suite.XXXXXX.log)}
: >"$log"
echo "goamqp-suite: go-amqp v1.7.0's integration suite${replace:+ (module from $replace)} against ${broker//:*@/:***@}; full output in $log"
tests=$("$work/suite.test" -test.list "$run" | grep '^Test' || true)
[ -n "$tests" ] || { echo "goamqp-suite: no test matches $run" >&2; exit 1; }
total_pass=0 total_fail=0 total_skip=0 failed=() unexpected=() fixed=()
for test in $tests; do
	t0=$SECONDS
	out=$(cd "$work/mod" && AMQP_BROKER_ADDR=$broker "$work/suite.test" -test.run "^$test\$" -test.v -test.count=1 -test.timeout "$timeout" 2>&1) && rc=0 || rc=$?
	printf '%s\n' "$out" >>"$log"
	# Verdicts of the test and of each of its subtests.
	pass=$(grep -c -E -- "^[[:space:]]*--- PASS: $test( |/)" <<<"$out" || true)
	fail=$(grep -c -E -- "^[[:space:]]*--- FAIL: $test( |/)" <<<"$out" || true)
	skip=$(grep -c -E -- "^[[:space:]]*--- SKIP: $test( |/)" <<<"$out" || true)
	verdict=$(grep -o -- "^--- [A-Z]*: $test " <<<"$out" | awk '{print $2}' | tr -d : || true)
	if [ -z "$verdict" ]; then
		# No verdict line: the binary died (a panic off the test's
		# goroutine, or the time-out); the test counts as failed.
		verdict=DIED
		fail=$((fail + 1))
	elif [ "$verdict" = PASS ] && [ $rc -ne 0 ]; then
		verdict=FAIL
		fail=$((fail + 1))
	fi
	total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
	note=
	if [ "$verdict" = FAIL ] || [ "$verdict" = DIED ]; then
		failed+=("$test")
		# The failing names: subtests, or the test itself.
		names=$(grep -o -- "^[[:space:]]*--- FAIL: $test/[^(]*" <<<"$out" | sed 's/^[[:space:]]*--- FAIL: //; s/ *$//' || true)
		[ -n "$names" ] || names=$test
		all_known=1
		while IFS= read -r n; do
			if is_known "$n"; then :; else all_known=; unexpected+=("$n"); fi
		done <<<"$names"
		[ -n "$all_known" ] && note=" (known: goamqp-suite.known)"
	elif is_known "$test"; then
		fixed+=("$test")
		note=" (listed in goamqp-suite.known: remove it)"
	fi
	printf '  %-5s %-38s %3d passed, %d failed, %d skipped, %3ds%s\n' "$verdict" "$test" "$pass" "$fail" "$skip" $((SECONDS - t0)) "$note"
	if [ "$verdict" = FAIL ] || [ "$verdict" = DIED ]; then
		# Why, in a few lines: the first errors, a panic.
		grep -E -- 'Condition:|panic:|test timed out|[a-z_]+_test\.go:[0-9]+: [^[:space:]]' <<<"$out" |
			sed 's/^[[:space:]]*//' | awk '!seen[$0]++' | head -n 4 | cut -c1-200 | sed 's/^/        /' || true
	fi
done
echo "goamqp-suite: $(wc -w <<<"$tests") tests; tests and subtests: $total_pass passed, $total_fail failed, $total_skip skipped; failed: ${failed[*]:-none}"
for t in ${fixed[@]+"${fixed[@]}"}; do
	echo "goamqp-suite: $t passes: take it out of goamqp-suite.known for $known_target"
done
if [ ${#unexpected[@]} -gt 0 ]; then
	echo "goamqp-suite: failures not in goamqp-suite.known${known_target:+ for $known_target}: ${unexpected[*]}"
	exit 1
fi
