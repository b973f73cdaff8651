# experiments/lib.sh: what every experiment script shares (sourced, not run).
#
# A script calls ex_init "$@" first; it then has:
#   EX_MODE   smoke | default | full   (--smoke, nothing, --full)
#   EX_BIN    the accelsearch program  (--bin PATH, else $AS_BIN, else build/accelsearch)
#   EX_TMP    a scratch directory, removed on exit (run stores live there: never the user's db)
# and the parsers below, which read the stable text lines of accelsearch's output
# ("chosen design", "MODEL (training): ...", "against NAME (fixed design): ...",
# "runs show"'s hypervolume table, "runs export --format csv", fuse's summary table).
# Only bash, awk (POSIX: mawk is enough), sed and coreutils are used.

set -u

EX_MODE=default
EX_BIN=${AS_BIN:-}
EX_TMP=
EX_T0=$(date +%s)

# ex_usage NAME: the options every script takes.
ex_usage() {
	cat <<EOF
usage: $1 [--smoke | --full] [--bin PATH]

  (no option)  the default budgets: at most ~15 minutes on two cores
  --smoke      tiny budgets, a few seconds: checks the script runs end to end
  --full       the paper-size run (hours)
  --bin PATH   the accelsearch program (default: \$AS_BIN, else build/accelsearch)
EOF
}

# ex_init "$@": parse the common options, find the program, make the scratch directory.
ex_init() {
	while [ $# -gt 0 ]; do
		case $1 in
		--smoke) EX_MODE=smoke ;;
		--full) EX_MODE=full ;;
		--bin)
			shift
			EX_BIN=${1:?--bin wants a path}
			;;
		-h | --help)
			ex_usage "$(basename "$0")"
			exit 0
			;;
		*)
			echo "$(basename "$0"): unknown option '$1'" >&2
			ex_usage "$(basename "$0")" >&2
			exit 2
			;;
		esac
		shift
	done
	if [ -z "$EX_BIN" ]; then
		EX_BIN=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/accelsearch
	fi
	if [ ! -x "$EX_BIN" ]; then
		echo "$(basename "$0"): no accelsearch program at $EX_BIN (build first, or give --bin)" >&2
		exit 2
	fi
	EX_TMP=$(mktemp -d "${TMPDIR:-/tmp}/accelsearch-exp.XXXXXX")
	trap 'rm -rf "$EX_TMP"' EXIT
	trap 'exit 130' INT TERM
}

# CASCO's three methods (its Table I, Table II, Fig. 4): keys, printed names, search options.
CASCO_METHODS=(hasco optimus casco)
declare -A CASCO_LABEL=([hasco]="HASCO" [optimus]="HASCO+Optimus" [casco]="CASCO")
declare -A CASCO_ARGS=([hasco]="--algo hasco" [optimus]="--algo hasco --fusion dp" [casco]="--algo casco")

# ex_pick SMOKE DEFAULT FULL: the value for the current mode.
ex_pick() {
	case $EX_MODE in
	smoke) echo "$1" ;;
	default) echo "$2" ;;
	full) echo "$3" ;;
	esac
}

# ex_run OUT ARGS...: run accelsearch ARGS, its stdout and stderr into OUT; on failure print
# the command and the end of its output and exit 1 (an experiment with a failed run is wrong).
ex_run() {
	local out=$1
	shift
	if ! "$EX_BIN" "$@" >"$out" 2>&1; then
		echo "accelsearch $* failed:" >&2
		tail -5 "$out" >&2
		exit 1
	fi
}

# ex_has_option COMMAND OPTION: true when 'accelsearch help COMMAND' names OPTION
# (how scripts find out whether this build has e.g. search --baseline).
ex_has_option() {
	"$EX_BIN" help "$1" 2>&1 | grep -q -e "$2[ =]"
}

# EX_SI_AWK: the awk function si(v, u, base): a figure the text shows with its unit in
# engineering notation (v "83.42", u "ms," -- a trailing comma is dropped; docs/cli-output.md)
# in the unit base ("s"); empty when u is not base with an SI prefix.
EX_SI_AWK='function si(v, u, base,   p, f) {
	sub(/,$/, "", u)
	if (substr(u, length(u) - length(base) + 1) != base) return ""
	p = substr(u, 1, length(u) - length(base))
	f = p == "" ? 1 : p == "k" ? 1e3 : p == "M" ? 1e6 : p == "G" ? 1e9 : p == "T" ? 1e12 : \
	    p == "m" ? 1e-3 : p == "u" ? 1e-6 : p == "n" ? 1e-9 : p == "p" ? 1e-12 : \
	    p == "f" ? 1e-15 : p == "a" ? 1e-18 : 0
	return f == 0 ? "" : v * f
}
function scaled(x, k) { return x == "" ? "" : x * k }'

# ex_chosen FILE FIELD: a figure of the chosen design from a search's text output.
# FIELD: area_mm2 tdp_W latency_ms energy_mJ edp_Js perf_tdp. Empty when nothing was chosen.
ex_chosen() {
	awk -v want="$2" "$EX_SI_AWK"'
		/^chosen design/ { inside = 1; next }
		inside && /^  area / {
			for (i = 1; i + 2 <= NF; i++) {
				if ($i == "area") { v = $(i + 1); f["area_mm2"] = v }
				if ($i == "TDP") f["tdp_W"] = si($(i + 1), $(i + 2), "W")
				if ($i == "latency") f["latency_ms"] = scaled(si($(i + 1), $(i + 2), "s"), 1e3)
				if ($i == "energy") f["energy_mJ"] = scaled(si($(i + 1), $(i + 2), "J"), 1e3)
				if ($i == "EDP") f["edp_Js"] = si($(i + 1), $(i + 2), "J*s")
				if ($i == "perf/TDP") f["perf_tdp"] = si($(i + 1), $(i + 2), "/s/W")
			}
			print f[want]; exit
		}' "$1"
}

# ex_workload FILE MODEL FIELD: the chosen design's figure on one model, from the line
# "MODEL (training|validation): latency X ms, energy Y mJ, EDP Z J*s, ..." (each figure in
# engineering notation). FIELD: latency_ms energy_mJ edp_Js.
ex_workload() {
	awk -v model="$2" -v want="$3" "$EX_SI_AWK"'
		$1 == model && $2 ~ /^\((training|validation)\):$/ {
			for (i = 3; i + 2 <= NF; i++) {
				if ($i == "latency") f["latency_ms"] = scaled(si($(i + 1), $(i + 2), "s"), 1e3)
				if ($i == "energy") f["energy_mJ"] = scaled(si($(i + 1), $(i + 2), "J"), 1e3)
				if ($i == "EDP") f["edp_Js"] = si($(i + 1), $(i + 2), "J*s")
			}
			print f[want]; exit
		}' "$1"
}

# ex_against FILE NAME FIELD: the chosen design's ratio (chosen / fixed design) against a
# baseline, from "  against NAME (fixed design): latency xA, energy xB, area xC, EDP xD,
# perf/TDP xE" (search --baseline) or the built-in "  against the NAME baseline: ..." line.
# FIELD: latency energy area EDP perf/TDP. Prints "infeasible" for an infeasible baseline,
# nothing when the line or the field is absent.
ex_against() {
	awk -v name="$2" -v want="$3" '
		$1 == "against" && ($2 == name || ($2 == "the" && $3 == name)) {
			if ($0 ~ /infeasible/) { print "infeasible"; exit }
			for (i = 1; i < NF; i++)
				if ($i == want) { v = $(i + 1); sub(/^x/, "", v); sub(/,$/, "", v); print v; exit }
			exit
		}' "$1"
}

# ex_hv_curve DB: "evaluations hypervolume" lines of the newest run in the store DB.
ex_hv_curve() {
	"$EX_BIN" runs show --db "$1" | awk '
		/^hypervolume after each iteration/ { inside = 1; next }
		inside && $1 ~ /^[0-9]+$/ && NF == 2 { print $1, $2; next }
		inside && NF == 0 { exit }'
}

# ex_best_curve DB COLUMN min|max: "evaluations best" lines, the best feasible COLUMN
# (a runs export csv column: edp_Js, perf_per_tdp, ...) so far after each hardware
# candidate, in the order the run evaluated them (a candidate's several
# successive-halving rounds count once, at its first round). The fixed seed design
# (iteration -1) is not counted.
ex_best_curve() {
	"$EX_BIN" runs export --db "$1" --format csv | sed 's/"[^"]*"/P/g' | awk -F, -v col="$2" -v dir="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["iteration"] < 0 { next }
		{
			key = $c["iteration"] "/" $c["slot"]
			if (!(key in seen)) { seen[key] = 1; n++ }
			if ($c["feasible"] == "true") {
				v = $c[col] + 0
				if (!have || (dir == "min" && v < best) || (dir == "max" && v > best)) { best = v; have = 1 }
			}
			if (have) b[n] = best; else b[n] = "-"
		}
		END { for (i = 1; i <= n; i++) print i, b[i] }'
}

# ex_seed_value DB COLUMN: COLUMN of the fixed seed design (iteration -1) of the run in DB.
ex_seed_value() {
	"$EX_BIN" runs export --db "$1" --format csv | sed 's/"[^"]*"/P/g' | awk -F, -v col="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["iteration"] < 0 && $c["round"] == 0 { print $c[col]; exit }'
}

# ex_at CURVEFILE N: the value of an "x value" curve at x = N (the last point at or before N).
ex_at() {
	awk -v n="$2" '$1 <= n { v = $2 } END { print (v == "" ? "-" : v) }' "$1"
}

# ex_fuse FILE ROW FIELD: a figure of fuse's summary table. ROW: fused | layer (layer by layer).
# FIELD: cycles latency_s energy_pJ edp (J*s) dram_bytes ops_per_byte. The row reads
# "fused CYCLES 71.42 ms 10.27 mJ 733.2 uJ*s DRAM_BYTES 50.34 ops/byte".
ex_fuse() {
	awk -v row="$2" -v want="$3" "$EX_SI_AWK"'
		{
			if (row == "fused" && $1 == "fused") k = 2
			else if (row == "layer" && $1 == "layer" && $2 == "by" && $3 == "layer") k = 4
			else next
			if (want == "cycles") print $k
			if (want == "latency_s") print si($(k + 1), $(k + 2), "s")
			if (want == "energy_pJ") print scaled(si($(k + 3), $(k + 4), "J"), 1e12)
			if (want == "edp") print si($(k + 5), $(k + 6), "J*s")
			if (want == "dram_bytes") print $(k + 7)
			if (want == "ops_per_byte") print $(k + 8)
			exit
		}' "$1"
}

# ex_num X: X as a short number (4 significant digits), "-" when empty or not a number.
ex_num() {
	awk -v x="${1:-}" 'BEGIN {
		if (x == "" || x !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) print "-"
		else printf "%.4g\n", x }'
}

# ex_calc EXPR: an awk arithmetic expression, printed with 4 significant digits; "-" when an
# operand is "-" (a figure that is missing), or the result is not finite (a division by zero).
ex_calc() {
	if printf '%s\n' "$1" | grep -q -E '(^|[ (*/+-])-[ ]*($|[)*/+-])'; then
		echo "-"
		return
	fi
	awk "BEGIN { x = ($1); if (x != x || x == x + 1 && x != 0) print \"-\"; else printf \"%.4g\n\", x }" 2>/dev/null || echo "-"
}

# ex_geomean X...: the geometric mean of the positive numbers among the arguments ("-" if none).
ex_geomean() {
	printf '%s\n' "$@" | awk '$1 + 0 > 0 { s += log($1); n++ } END { if (n) printf "%.4g\n", exp(s / n); else print "-" }'
}

# ex_title TEXT: the experiment's heading.
ex_title() {
	printf '== %s ==\n' "$1"
	printf 'mode %s, program %s\n\n' "$EX_MODE" "$EX_BIN"
}

# ex_header COL...: a table's header line (first column 34 wide, others 12), and a rule.
# ex_row COL...: one row in the same layout.
ex_row() {
	printf '%-34s' "$1"
	shift
	local c
	for c in "$@"; do printf ' %12s' "$c"; done
	printf '\n'
}
ex_header() {
	ex_row "$@"
	local n=$(($# - 1))
	printf '%s' "----------------------------------"
	while [ $n -gt 0 ]; do
		printf ' %s' "------------"
		n=$((n - 1))
	done
	printf '\n'
}

# ex_note TEXT...: a wrapped note under a table.
ex_note() {
	printf '%s\n' "$*" | fold -s -w 100 | sed 's/^/  note: /'
}

# ex_done: the closing line with the wall time (the scripts' durations in README come from it).
ex_done() {
	printf '\n%s finished in %d s (mode %s)\n' "$(basename "$0")" $(($(date +%s) - EX_T0)) "$EX_MODE"
}
