#!/usr/bin/env bash
# sdks.sh: builds the Azure SDKs that stand on go-amqp (azservicebus,
# azeventhubs) against package amqp through the replace line a program
# would use, and runs their own unit tests (the ones that need a live
# namespace skip themselves). It fetches the SDKs from the module proxy.
#
# Run from anywhere: bash goamqp/internal/compat/sdks.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goamqp=$(cd "$here/../.." && pwd)
root=$(cd "$goamqp/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off GOFLAGS=-mod=mod

sb=github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus
eh=github.com/Azure/azure-sdk-for-go/sdk/messaging/azeventhubs/v2
cat >"$tmp/go.mod" <<MOD
module example.com/sdks

go 1.26

require (
	$sb v1.11.0
	$eh v2.0.2
)

replace github.com/Azure/go-amqp => $goamqp

replace github.com/amqpsax/amqpsax => $root
MOD
printf 'package main\n\nimport (\n\t_ "%s"\n\t_ "%s"\n)\n\nfunc main() {}\n' "$sb" "$eh" >"$tmp/main.go"
cd "$tmp"
go mod tidy
go build .
go test -count=1 -v "$sb/..." "$eh/..." >"$tmp/out" 2>&1 || { grep -E '^(--- FAIL|FAIL|panic)' "$tmp/out"; exit 1; }
printf 'azservicebus v1.11.0 and azeventhubs v2.0.2 on goamqp: %s tests passed, %s skipped, %s failed\n' \
	"$(grep -c -- '--- PASS' "$tmp/out")" "$(grep -c -- '--- SKIP' "$tmp/out")" "$(grep -c -- '--- FAIL' "$tmp/out" || true)"
