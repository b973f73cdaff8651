#!/usr/bin/env bash
# CASCO Table II: generalisation. Each method co-optimises one design for two training
# networks (ResNet18 + SRGAN) and the design is then evaluated on four unseen networks
# (MobileNet, ResNet50, UNet, ViT) (CASCO paper, Sec. III-D, Table II).
# Methods as in Table I: --algo hasco, --algo hasco --fusion dp, --algo casco.
. "$(dirname "$0")/lib.sh"
ex_init "$@"

TRAIN=(resnet18 srgan)
VALID=(mobilenet_v2 resnet50 unet vit_b_16)
COLS=("ResNet18+SRGAN" MobileNet ResNet50 UNet ViT)
# The paper's Table II: area (um^2 x 10^5, one per method), then per column (training pair,
# then the four validation networks) energy mJ, latency ms, EDP mJ*ms.
declare -A P_AREA=([hasco]=5.5 [optimus]=3.2 [casco]=3.2)
declare -A P_E P_L P_EDP
P_E[hasco]="292.7 218.0 795.6 300.2 98.8"
P_L[hasco]="105.4 3.6 23.8 430.1 2.6"
P_EDP[hasco]="30850.6 784.8 18935.3 129116.0 256.9"
P_E[optimus]="25.9 1.7 10.7 26.9 33.2"
P_L[optimus]="260.5 14.7 90.9 209.6 2.8"
P_EDP[optimus]="6747.0 25.0 972.6 5638.2 93.0"
P_E[casco]="26.8 1.7 11.0 31.9 33.2"
P_L[casco]="91.7 4.5 33.0 123.1 1.6"
P_EDP[casco]="2457.6 7.7 363.0 3926.9 53.1"

if [ "$EX_MODE" = smoke ]; then
	TRAIN=(resnet18_cifar mobilenet_v2_cifar)
	VALID=(vgg16_cifar)
	COLS=("(smoke) train pair" "(smoke) valid")
fi
BUDGET=$(ex_pick "--hw-budget 4 --batch 4 --sh-rounds 1 --plan-budget 8" \
	"--hw-budget 24 --batch 8 --sh-rounds 3 --plan-budget 256" \
	"--hw-budget 500 --batch 8 --sh-rounds 3 --plan-budget 2000")

ex_title "CASCO Table II: one design for ResNet18+SRGAN, validated on four unseen networks"
echo "budget: $BUDGET --aggregate sum (per method)"
[ "$EX_MODE" = smoke ] && echo "smoke: CIFAR-size stand-ins, the paper column shows the first networks' figures"
echo
ex_header "method / networks" "energy mJ" "paper" "latency ms" "paper" "EDP mJ*ms" "paper" "area mm2" "paper"
declare -A EDP
for k in "${CASCO_METHODS[@]}"; do
	out=$EX_TMP/$k.txt
	args=()
	for m in "${TRAIN[@]}"; do args+=(--model "$m"); done
	for m in "${VALID[@]}"; do args+=(--validate-model "$m"); done
	# shellcheck disable=SC2086 # the budget and method options are word lists
	ex_run "$out" search --no-db "${args[@]}" ${CASCO_ARGS[$k]} $BUDGET --aggregate sum --seed 1
	a=$(ex_chosen "$out" area_mm2)
	# column 1: the training pair, summed as the paper's single figure is
	e=0 l=0
	for m in "${TRAIN[@]}"; do
		e=$(ex_calc "$e + $(ex_num "$(ex_workload "$out" "$m" energy_mJ)")")
		l=$(ex_calc "$l + $(ex_num "$(ex_workload "$out" "$m" latency_ms)")")
	done
	es=("$e") ls=("$l")
	for m in "${VALID[@]}"; do
		es+=("$(ex_num "$(ex_workload "$out" "$m" energy_mJ)")")
		ls+=("$(ex_num "$(ex_workload "$out" "$m" latency_ms)")")
	done
	for c in "${!COLS[@]}"; do
		pe=$(echo ${P_E[$k]} | cut -d' ' -f$((c + 1)))
		pl=$(echo ${P_L[$k]} | cut -d' ' -f$((c + 1)))
		pd=$(echo ${P_EDP[$k]} | cut -d' ' -f$((c + 1)))
		edp=$(ex_calc "${es[$c]} * ${ls[$c]}")
		EDP[$k.$c]=$edp
		if [ "$c" = 0 ]; then area=$(ex_num "$a") parea=$(ex_calc "${P_AREA[$k]} * 0.1"); else area="" parea=""; fi
		ex_row "${CASCO_LABEL[$k]} / ${COLS[$c]}" "${es[$c]}" "$pe" "${ls[$c]}" "$pl" "$edp" "$pd" "$area" "$parea"
	done
done
echo
ex_header "EDP: HASCO+Optimus / CASCO" "ours" "paper"
for c in "${!COLS[@]}"; do
	po=$(echo ${P_EDP[optimus]} | cut -d' ' -f$((c + 1)))
	pc=$(echo ${P_EDP[casco]} | cut -d' ' -f$((c + 1)))
	ex_row "${COLS[$c]}" "$(ex_calc "${EDP[optimus.$c]} / ${EDP[casco.$c]}")" "$(ex_calc "$po / $pc")"
done
echo
ex_note "paper: the training column is one figure for the pair (its energy matches the sum of" \
	"ResNet18's and SRGAN's), so ours sums the two and the search aggregates by sum; EDP is" \
	"energy (mJ) x latency (ms); area printed as um^2 x 10^5 (shown in mm2 = x 0.1); the paper's" \
	"reductions w.r.t. HASCO+Optimus are 2.74x, 3.24x, 2.67x, 1.43x, 1.75x." \
	"ours: the edge space, MobileNet taken as mobilenet_v2, ViT as vit_b_16."
ex_done
