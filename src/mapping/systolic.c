/*
 * systolic.c -- cycles of a layer on one systolic array, as SCALE-Sim v2
 * computes them in its analytical mode (InterfaceBandwidth = CALC, where
 * reads always hit and no stall ever occurs).  The rules, with the
 * SCALE-Sim source files they come from, are in
 * docs/systolic-formulas.md; they reproduce every run of
 * tests/data/scalesim/runs.txt exactly (tests/test_systolic.c).
 *
 * Model assumptions, all SCALE-Sim's:
 *  - a layer is a GEMM  M x K  times  K x N  (M output pixels per filter,
 *    N filters, K = filter window x channels); batch 1, no padding;
 *  - the dataflow picks which GEMM dimensions lie on the array's rows and
 *    columns (spatial) and which one streams through in time;
 *  - when the spatial extents exceed the array, folds run strictly one
 *    after another and a partial fold costs as much as a full one;
 *  - each fold costs its temporal length plus the skew of filling and
 *    draining the array (and, for WS/IS, loading the stationary operand).
 */
#include "mapping.h"

/* ceil(a / b) for a >= 0, b > 0. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/*
 * Cycles of one fold with temporal length t on a rows x cols array (the
 * length of SCALE-Sim's per-fold demand matrices, create_*_demand_mat):
 *   OS:     t + rows + cols - 2   (operands skew in over rows-1 and cols-1)
 *   WS, IS: t + 2*rows + cols - 2 (rows cycles more to load the
 *           stationary operand before streaming starts)
 * -1 on overflow.
 */
static int64_t fold_cycles(int64_t t, int64_t rows, int64_t cols, arch_dataflow dataflow)
{
    int64_t skew = (dataflow == ARCH_DATAFLOW_OS ? rows : 2 * rows) + cols - 2;
    int64_t cycles;
    return as_add_i64(t, skew, &cycles) ? cycles : -1;
}

/*
 * SCALE-Sim's "Total Cycles" in CALC mode:
 *   folds x fold_cycles - 1
 * where, with (Sr, Sc, T) = (M, N, K) for OS, (K, N, M) for WS and
 * (K, M, N) for IS, folds = ceil(Sr / rows) * ceil(Sc / cols).
 *
 * The -1 is SCALE-Sim's: it reports the cycle *index* at which the last
 * demand line is served (lines are issued at cycles 0, 1, ...), not the
 * number of lines.  We return that reported figure unchanged, so that the
 * numbers can be compared with SCALE-Sim's directly; the true occupancy
 * of the array is one cycle more.  A caller running several GEMMs in turn
 * (a depthwise layer's channels) adds their figures, each with its own -1,
 * exactly as SCALE-Sim sums its sub-layers: see map_systolic_layer_cycles.
 */
int64_t map_systolic_cycles(int64_t gemm_m, int64_t gemm_n, int64_t gemm_k, int rows, int cols,
                            arch_dataflow dataflow)
{
    if (gemm_m < 1 || gemm_n < 1 || gemm_k < 1 || rows < 1 || cols < 1)
        return -1;
    int64_t on_rows, on_cols, in_time;
    switch (dataflow) {
    case ARCH_DATAFLOW_OS:
        on_rows = gemm_m, on_cols = gemm_n, in_time = gemm_k;
        break;
    case ARCH_DATAFLOW_WS:
        on_rows = gemm_k, on_cols = gemm_n, in_time = gemm_m;
        break;
    case ARCH_DATAFLOW_IS:
        on_rows = gemm_k, on_cols = gemm_m, in_time = gemm_n;
        break;
    default:
        return -1;
    }
    int64_t per_fold = fold_cycles(in_time, rows, cols, dataflow);
    int64_t folds, lines;
    if (per_fold < 0 || !as_mul_i64(ceil_div(on_rows, rows), ceil_div(on_cols, cols), &folds) ||
        !as_mul_i64(folds, per_fold, &lines))
        return -1;
    return lines - 1;
}

/*
 * SCALE-Sim's output size for one axis (topology_utils.py): no padding,
 * and a *ceiling* where frameworks take the floor,
 *   out = ceil((in - filter + stride) / stride) = ceil((in - filter) / stride) + 1,
 * so when (in - filter) % stride != 0 SCALE-Sim computes one extra output
 * whose window hangs past the edge (224 in, 7 wide, stride 2 gives 110,
 * where PyTorch gives 109).  -1 when the filter exceeds the input.
 */
static int64_t scalesim_out_size(int64_t in, int64_t filter, int64_t stride)
{
    return filter > in ? -1 : ceil_div(in - filter, stride) + 1;
}

/*
 * The GEMM view of a layer (topology_utils.py, load_arrays_conv):
 *   M = out_h * out_w, N = num_filters, K = filter_h * filter_w * channels,
 * except that a depthwise layer is `channels` layers of one channel each,
 * run in turn: K = filter_h * filter_w and repeats = channels (N stays as
 * given, normally 1).  A plain GEMM given to SCALE-Sim as M, N, K is the
 * layer {ifmap M x K, filter 1 x K, 1 channel, N filters, stride 1}, whose
 * view is M, N, K again.
 */
bool map_systolic_layer_gemm(const map_systolic_layer *layer, map_systolic_gemm *out)
{
    const map_systolic_layer *l = layer;
    if (l->ifmap_h < 1 || l->ifmap_w < 1 || l->filter_h < 1 || l->filter_w < 1 || l->channels < 1 ||
        l->num_filters < 1 || l->stride_h < 1 || l->stride_w < 1)
        return false;
    int64_t out_h = scalesim_out_size(l->ifmap_h, l->filter_h, l->stride_h);
    int64_t out_w = scalesim_out_size(l->ifmap_w, l->filter_w, l->stride_w);
    int64_t window_channels = l->depthwise ? 1 : l->channels;
    map_systolic_gemm g = {.n = l->num_filters, .repeats = l->depthwise ? l->channels : 1};
    if (out_h < 0 || out_w < 0 || !as_mul_i64(out_h, out_w, &g.m) ||
        !as_mul_i64(l->filter_h, l->filter_w, &g.k) || !as_mul_i64(g.k, window_channels, &g.k))
        return false;
    *out = g;
    return true;
}

/* Cycles of a whole layer: its GEMM's cycles once per repeat, each repeat
 * with SCALE-Sim's -1 (it sums the reports of a depthwise layer's
 * sub-layers).  -1 on a bad layer or overflow. */
int64_t map_systolic_layer_cycles(const map_systolic_layer *layer, int rows, int cols,
                                  arch_dataflow dataflow)
{
    map_systolic_gemm g;
    int64_t one, all;
    if (!map_systolic_layer_gemm(layer, &g))
        return -1;
    one = map_systolic_cycles(g.m, g.n, g.k, rows, cols, dataflow);
    return one >= 0 && as_mul_i64(one, g.repeats, &all) ? all : -1;
}
