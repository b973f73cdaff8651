#!/usr/bin/env bash
# FAST, "scheduling and fusion alone on TPU-v3": the TPU-v3 datapath kept as it is, only
# the software changed (FAST paper, Sec. 5.2.1 / Fig. 6 bar "TPU-v3 + FAST scheduling", and
# Sec. 5.2.6 / Fig. 11: fusion without datapath changes). Three runs of 'accelsearch fuse' on
# the tpu_v3 preset (one or two TensorCores, as the build defines it) per model, bf16:
#   baseline schedule   layer by layer, Timeloop's random-pruned mapper at 128 mappings per layer
#   + FAST scheduling   layer by layer, the heuristic mapper (to its own end): the ILP run's
#                       "layer by layer" row
#   + FAST fusion       the heuristic mapper and FAST's ILP fusion (global-memory pinning)
. "$(dirname "$0")/lib.sh"
ex_init "$@"

MODELS=$(ex_pick "resnet18_cifar" "efficientnet_b0 resnet50" \
	"efficientnet_b0 efficientnet_b1 efficientnet_b2 efficientnet_b3 efficientnet_b4 efficientnet_b5 efficientnet_b6 efficientnet_b7 resnet50")
# FAST's Table 4 runs TPU-v3 at batch 2 x 64: 64 per TensorCore. The preset's TensorCores are
# its MAC units over one core's (2 MXUs of 128 x 128).
macs_per_cycle=$("$EX_BIN" arch show tpu_v3 | awk '$1 == "MAC" && $2 == "units" { print $3 }')
cores=$((${macs_per_cycle:-32768} / 32768))
[ "$cores" -ge 1 ] || cores=1
BATCH=$(ex_pick 1 $((64 * cores)) $((64 * cores)))
COMMON=(--arch tpu_v3 --precision bf16 --batch "$BATCH" --seed 1)

ex_title "FAST: scheduling and fusion alone on the TPU-v3 datapath (fuse --arch tpu_v3)"
echo "models: $MODELS; batch $BATCH ($cores TensorCore(s) in the tpu_v3 preset); bf16"
echo
ex_header "model / software" "latency ms" "speedup" "paper" "util %" "DRAM MB" "ops/byte"
for m in $MODELS; do
	macs=$("$EX_BIN" model info "$m" --batch "$BATCH" 2>/dev/null | awk '$1 == "MACs" { gsub(",", "", $2); print $2; exit }')
	ex_run "$EX_TMP/$m.base" fuse "${COMMON[@]}" --model "$m" --algo none --map-budget 128
	# one ILP run gives two rows: its "layer by layer" row is the heuristic mapper alone
	ex_run "$EX_TMP/$m.ilp" fuse "${COMMON[@]}" --model "$m" --algo ilp
	base=$(ex_fuse "$EX_TMP/$m.base" fused latency_s)
	for run in base sched fused; do
		case $run in
		base) label="baseline schedule" paper="1" f=$EX_TMP/$m.base row=fused ;;
		sched) label="+ FAST scheduling" paper="-" f=$EX_TMP/$m.ilp row=layer ;;
		fused) label="+ FAST fusion" paper="1.8-2" f=$EX_TMP/$m.ilp row=fused ;;
		esac
		lat=$(ex_fuse "$f" $row latency_s)
		cyc=$(ex_fuse "$f" $row cycles)
		ex_row "$m / $label" "$(ex_calc "$lat * 1e3")" "$(ex_calc "$base / $lat")" "$paper" \
			"$(ex_calc "100 * ${macs:--} / ($cyc * ${macs_per_cycle:--})")" \
			"$(ex_calc "$(ex_fuse "$f" $row dram_bytes) / 1e6")" "$(ex_num "$(ex_fuse "$f" $row ops_per_byte)")"
	done
	ex_row "$m / fusion alone" "" \
		"$(ex_calc "$(ex_fuse "$EX_TMP/$m.ilp" layer latency_s) / $(ex_fuse "$EX_TMP/$m.ilp" fused latency_s)")" "< 1.05"
done
echo
ex_note "paper: TPU-v3 with its production (XLA) schedule is 1; FAST's scheduling and fusion on the" \
	"TPU-v3 datapath give 'a substantial 2x speedup' (Sec. 5.2.1, Fig. 6; 1.8x in the abstract), and" \
	"FAST fusion without datapath changes 'less than 5% speedup' (Sec. 5.2.6). TPU-v3 runs EfficientNet-B7" \
	"at 14.8% of peak (Sec. 3.3.2; 0.14 in Table 4). Its figures are over EfficientNet-B0..B7," \
	"ResNet50v2 and OCR at batch 2 x 64." \
	"ours: the baseline schedule is Timeloop's random-pruned mapper (128 mappings per layer), not XLA's;" \
	"the tpu_v3 preset's TensorCores at 64 each (--smoke: batch 1); util is MACs / (cycles x MAC units); the 'paper' column of the" \
	"scheduling row is empty because the paper reports scheduling and fusion together."
ex_done
