#!/usr/bin/env bash
# apidiff.sh: compares the exported API of package amqp (the goamqp
# module) with Azure/go-amqp v1.7.0's, with golang.org/x/exp/cmd/apidiff.
#
# Both are built under the import path github.com/Azure/go-amqp: go-amqp
# itself, and ours through the replace line a program would use. It
# prints apidiff's report, then fails on any incompatible change that is
# not one of the kind the package documentation explains: a type go-amqp
# declares in its internal packages (internal/encoding, internal/buffer)
# and exposes through an alias, declared in package amqp itself. No
# program can name go-amqp's internal packages, so for programs those
# are the same API; apidiff, which compares type identity, lists each.
#
# They cannot be given go-amqp's identities by declaring them in
# goamqp/internal/encoding and internal/buffer: package amqp would have
# to import those as github.com/Azure/go-amqp/internal/..., a path that
# resolves to this module only under the replace line. Built as itself
# (go test here, goamqp/internal/compat, which holds go-amqp and this
# package in one program) that import is go-amqp's own internal package,
# which Go refuses to a package outside go-amqp; and under its own module
# path, goamqp/internal/encoding would not resolve under the replace line.
#
# Run from anywhere: bash goamqp/internal/compat/apidiff.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goamqp=$(cd "$here/../.." && pwd)
root=$(cd "$goamqp/.." && pwd)
apidiff=(go run golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOWORK=off GOFLAGS=-mod=mod

module() { # dir name [replace lines...]
	local dir=$1 name=$2
	shift 2
	mkdir -p "$dir"
	{
		printf 'module example.com/%s\n\ngo 1.26\n\nrequire github.com/Azure/go-amqp v1.7.0\n' "$name"
		for r in "$@"; do printf '%s\n' "$r"; done
	} >"$dir/go.mod"
	cp "$here/go.sum" "$dir/go.sum"
	printf 'package main\n\nimport _ "github.com/Azure/go-amqp"\n\nfunc main() {}\n' >"$dir/main.go"
	(cd "$dir" && go mod tidy >/dev/null)
}
module "$tmp/old" old
module "$tmp/new" new \
	"replace github.com/Azure/go-amqp => $goamqp" \
	"replace github.com/amqpsax/amqpsax => $root"
(cd "$tmp/old" && "${apidiff[@]}" -w "$tmp/old.export" github.com/Azure/go-amqp)
(cd "$tmp/new" && "${apidiff[@]}" -w "$tmp/new.export" github.com/Azure/go-amqp)
(cd "$tmp/new" && "${apidiff[@]}" "$tmp/old.export" "$tmp/new.export") | tee "$tmp/report"

# What is left once the type moves are taken out: each line of the form
# "- NAME: changed from A to B" where B is A with go-amqp's internal
# package paths taken off (and buffer.Buffer, encoding.Filter unexported).
awk '/^Incompatible changes:/{on=1; next} /^Compatible changes:/{on=0} on' "$tmp/report" >"$tmp/incompatible"
left=$(grep '^- ' "$tmp/incompatible" | while IFS= read -r line; do
	change=${line#*: changed from }
	if [ "$change" = "$line" ]; then printf '%s\n' "$line"; continue; fi
	from=${change% to *} to=${change##* to }
	norm=$(printf '%s' "$from" | sed -e 's|github.com/Azure/go-amqp/internal/encoding\.Filter|filter|g' \
		-e 's|github.com/Azure/go-amqp/internal/buffer\.Buffer|buffer|g' \
		-e 's|github.com/Azure/go-amqp/internal/encoding\.||g')
	[ "$norm" = "$to" ] || printf '%s\n' "$line"
done)
total=$(grep -c '^- ' "$tmp/incompatible" || true)
if [ -n "$left" ]; then
	printf '\napidiff: changes other than internal types declared in package amqp:\n%s\n' "$left"
	exit 1
fi
printf '\napidiff: %s lines, each an internal type of go-amqp declared in package amqp itself; nothing else\n' "$total"
