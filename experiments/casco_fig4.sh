#!/usr/bin/env bash
# CASCO Fig. 4: convergence of the three co-design methods: the front's hypervolume
# (and its difference to the best any method reached) and the best EDP found, against the
# number of hardware candidates evaluated (CASCO paper, Sec. III-C, Fig. 4).
# Methods as in Table I: --algo hasco, --algo hasco --fusion dp, --algo casco; each run is
# kept in a temporary run store and read back with runs show / runs export.
. "$(dirname "$0")/lib.sh"
ex_init "$@"

MODEL=resnet18
HW=$(ex_pick 8 64 1000)
BUDGET=$(ex_pick "--batch 4 --sh-rounds 1 --plan-budget 8" \
	"--batch 8 --sh-rounds 3 --plan-budget 256" \
	"--batch 8 --sh-rounds 3 --plan-budget 2000")
[ "$EX_MODE" = smoke ] && MODEL=resnet18_cifar

ex_title "CASCO Fig. 4: hypervolume and best EDP against evaluations ($MODEL, edge space)"
echo "budget: --hw-budget $HW $BUDGET (per method)"
echo
for k in "${CASCO_METHODS[@]}"; do
	db=$EX_TMP/$k.db
	# shellcheck disable=SC2086 # the budget and method options are word lists
	ex_run "$EX_TMP/$k.txt" search --db "$db" --model "$MODEL" ${CASCO_ARGS[$k]} --hw-budget "$HW" $BUDGET --seed 1
	ex_hv_curve "$db" >"$EX_TMP/$k.hv"
	ex_best_curve "$db" edp_Js min >"$EX_TMP/$k.edp"
done
best_hv=$(cat "$EX_TMP"/*.hv | awk '$2 > b { b = $2 } END { print b + 0 }')

POINTS=$(awk -v n="$HW" 'BEGIN { printf "%d %d %d %d", n / 8, n / 4, n / 2, n }')
cols=()
for p in $POINTS; do cols+=("@$p"); done
ex_header "hypervolume difference" "${cols[@]}"
for k in "${CASCO_METHODS[@]}"; do
	row=()
	for p in $POINTS; do
		hv=$(ex_at "$EX_TMP/$k.hv" "$p")
		row+=("$(ex_calc "$best_hv - $hv")")
	done
	ex_row "${CASCO_LABEL[$k]}" "${row[@]}"
done
echo
ex_header "best EDP found, mJ*ms" "${cols[@]}"
for k in "${CASCO_METHODS[@]}"; do
	row=()
	for p in $POINTS; do
		e=$(ex_at "$EX_TMP/$k.edp" "$p")
		row+=("$(ex_calc "$e * 1e6")")
	done
	ex_row "${CASCO_LABEL[$k]}" "${row[@]}"
done
echo
ex_header "paper (Fig. 4, read from the text)" "HV diff" "EDP"
ex_row "HASCO" "worst" "worst"
ex_row "HASCO+Optimus" "middle" "middle"
ex_row "CASCO" "lowest" "lowest"
echo
ex_note "paper: Fig. 4 plots hypervolume difference and EDP against evaluations (log scale, about" \
	"1e2 to 1e5) and gives no figures; its text: 'CASCO achieves not only better PPAs but also yields" \
	"faster convergence'. ours: hypervolume of the front in log10 (latency, energy, area) with the" \
	"reference one decade above the edge space's Eyeriss-like design, its difference to the best" \
	"hypervolume any of the three runs reached (0 is the best), after N hardware candidates; EDP of" \
	"the best feasible design seen (any fidelity) in mJ*ms; the paper's network is not stated, ours" \
	"is $MODEL; one seed."
ex_done
