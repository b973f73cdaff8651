#!/usr/bin/env bash
# tests/experiments_smoke.sh SCRIPT ACCELSEARCH: run one experiments/ script with --smoke and
# check that it exits 0, prints a table (a header and its rule) and at least one row with a
# number in its figure columns. CTest runs it once per script (tests/CMakeLists.txt).
set -u
script=$1
bin=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$script" --smoke --bin "$bin" >"$out" 2>&1; then
	echo "FAIL: $script --smoke exited non-zero:"
	cat "$out"
	exit 1
fi
# the rule under a header: 34 dashes, then 12-dash columns
if ! grep -q -E '^-{34}( -{12})+$' "$out"; then
	echo "FAIL: $script printed no table header"
	cat "$out"
	exit 1
fi
# a row: a line after a rule whose figure columns (past the 34-character label) hold a number
if ! awk '/^-+( -+)+$/ && length($1) == 34 { t = 1; next }
	t && NF == 0 { t = 0 }
	t { n = split(substr($0, 35), f, " ")
	    for (i = 1; i <= n; i++) if (f[i] ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/) ok = 1 }
	END { exit !ok }' "$out"; then
	echo "FAIL: $script printed no numeric row"
	cat "$out"
	exit 1
fi
cat "$out"
