#!/usr/bin/env bash
# FAST's Perf/TDP headline: a design searched for one EfficientNet on the datacenter space
# (FAST's datapath template) against TPU-v3 (FAST paper, Sec. 5.2.1 / Fig. 7, Table 4).
# One search per model: --space datacenter --algo lcs (Vizier's linear-combination swarm, as
# FAST ran it) maximising Perf/TDP, fusion by FAST's ILP (the datacenter default). The design
# is compared with TPU-v3 two ways:
#   vs seed     the space's own TPU-v3-like seed design (its cores and batch as the space sets them), always available
#   vs tpu_v3   search --baseline tpu_v3: the preset evaluated with the same software stack at
#               its native batch (needs a build with --baseline)
. "$(dirname "$0")/lib.sh"
ex_init "$@"

MODELS=$(ex_pick "efficientnet_b0" "efficientnet_b0 efficientnet_b7" \
	"efficientnet_b0 efficientnet_b1 efficientnet_b2 efficientnet_b3 efficientnet_b4 efficientnet_b5 efficientnet_b6 efficientnet_b7 resnet50")
# hardware candidates per model: --full is FAST's 5000 trials per experiment (Sec. 5.1)
HW_SMALL=$(ex_pick 8 256 5000)
HW_B7=$(ex_pick 8 64 5000)
BUDGET=$(ex_pick "--batch 4 --plan-budget 32" "--batch 8 --plan-budget 256" "--batch 8 --plan-budget 2000")
HAVE_BASELINE=no
ex_has_option search --baseline && HAVE_BASELINE=yes

# The paper's EfficientNet-B7 figures (Table 4, FAST-Large vs TPU-v3 on the same process):
# QPS 733 vs 210, normalised TDP 0.4x vs 0.5x, Perf/TDP 3.9x. Other models: Fig. 7 bars only.
declare -A P_PPT=([efficientnet_b7]=3.9)
declare -A P_SPEED=([efficientnet_b7]=$(ex_calc "733 / 210"))
declare -A P_TDP=([efficientnet_b7]=$(ex_calc "0.4 / 0.5"))

ex_title "FAST: Perf/TDP of a searched design against TPU-v3 (datacenter space, lcs)"
echo "models: $MODELS; budget: --hw-budget $HW_SMALL (B7: $HW_B7) $BUDGET --seed 1"
[ $HAVE_BASELINE = no ] && echo "this build has no search --baseline: the vs-tpu_v3 column needs --baseline (not in this build)"
echo
ex_header "model" "perf/TDP" "vs seed" "vs tpu_v3" "paper" "speedup" "paper" "TDP ratio" "paper"
ratios=()
for m in $MODELS; do
	hw=$HW_SMALL
	[ "$m" = efficientnet_b7 ] && hw=$HW_B7
	args=(search --db "$EX_TMP/$m.db" --space datacenter --algo lcs --scalar perf_per_tdp
		--objectives perf_per_tdp --model "$m" --hw-budget "$hw" --seed 1)
	[ $HAVE_BASELINE = yes ] && args+=(--baseline tpu_v3)
	# shellcheck disable=SC2086 # the budget options are a word list
	ex_run "$EX_TMP/$m.txt" "${args[@]}" $BUDGET
	out=$EX_TMP/$m.txt
	ppt=$(ex_chosen "$out" perf_tdp)
	tdp=$(ex_chosen "$out" tdp_W)
	seed_ppt=$(ex_seed_value "$EX_TMP/$m.db" perf_per_tdp)
	seed_tdp=$(ex_seed_value "$EX_TMP/$m.db" power_W)
	vs_seed=$(ex_calc "$ppt / $seed_ppt")
	if [ $HAVE_BASELINE = yes ]; then
		vs_tpu=$(ex_num "$(ex_against "$out" tpu_v3 perf/TDP)")
	else
		vs_tpu="needs-flag"
	fi
	ratios+=("$vs_seed")
	ex_row "$m" "$(ex_num "$ppt")" "$vs_seed" "$vs_tpu" "${P_PPT[$m]:--}" \
		"$(ex_calc "$ppt * $tdp / ($seed_ppt * $seed_tdp)")" "${P_SPEED[$m]:--}" \
		"$(ex_calc "$tdp / $seed_tdp")" "${P_TDP[$m]:--}"
done
ex_row "geomean (vs seed)" "" "$(ex_geomean "${ratios[@]}")" "" "4"
echo
ex_note "paper: Perf/TDP relative to a TPU-v3 on the same sub-10-nm process, at FAST's batch" \
	"(TPU-v3: 2 TensorCores x batch 64); 3.9x for EfficientNet-B7 (Table 4, both example designs)," \
	"4x on average over all its workloads and over 6x at best (Fig. 7, abstract); speedup and TDP ratio" \
	"from Table 4 (QPS 733 / 210, TDP 0.4x / 0.5x of the threshold)." \
	"ours: perf/TDP in inferences/s/W; 'vs seed' divides by the datacenter space's TPU-v3-like seed" \
	"(its cores and batch as the space sets them), 'vs tpu_v3' is search --baseline tpu_v3's ratio; speedup is" \
	"the ratio of throughputs (perf/TDP x TDP) design over seed; TDP ratio the design's TDP over the seed's;" \
	"one seed, LCS for --hw-budget candidates (FAST: 5000 trials)."
ex_done
