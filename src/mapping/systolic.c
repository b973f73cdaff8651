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
 * What a dataflow puts where (SCALE-Sim's set_params): the GEMM extents on
 * the array's rows (Sr) and columns (Sc) and in time (T), and the roles of
 * the data spaces -- the one held in the PEs for a fold, the one entering
 * at the left edge and moving along the rows, and the one moving down the
 * columns (entering at the top, or produced as partial sums and drained at
 * the bottom):
 *   OS: Sr, Sc, T = M, N, K; Outputs held, Inputs along rows, Weights down
 *   WS: Sr, Sc, T = K, N, M; Weights held, Inputs along rows, Outputs down
 *   IS: Sr, Sc, T = K, M, N; Inputs held, Weights along rows, Outputs down
 */
typedef struct dataflow_layout {
    int64_t on_rows, on_cols, in_time;
    wl_dataspace_id held, along_rows, down_cols;
} dataflow_layout;

static bool layout_of(int64_t gemm_m, int64_t gemm_n, int64_t gemm_k, arch_dataflow dataflow,
                      dataflow_layout *out)
{
    switch (dataflow) {
    case ARCH_DATAFLOW_OS:
        *out =
            (dataflow_layout){gemm_m, gemm_n, gemm_k, WL_DS_OUTPUTS, WL_DS_INPUTS, WL_DS_WEIGHTS};
        return true;
    case ARCH_DATAFLOW_WS:
        *out =
            (dataflow_layout){gemm_k, gemm_n, gemm_m, WL_DS_WEIGHTS, WL_DS_INPUTS, WL_DS_OUTPUTS};
        return true;
    case ARCH_DATAFLOW_IS:
        *out =
            (dataflow_layout){gemm_k, gemm_m, gemm_n, WL_DS_INPUTS, WL_DS_WEIGHTS, WL_DS_OUTPUTS};
        return true;
    default:
        return false;
    }
}

/*
 * SCALE-Sim's "Total Cycles" in CALC mode:
 *   folds x fold_cycles - 1
 * where, with (Sr, Sc, T) of the dataflow (layout_of),
 * folds = ceil(Sr / rows) * ceil(Sc / cols).
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
    dataflow_layout d;
    if (gemm_m < 1 || gemm_n < 1 || gemm_k < 1 || rows < 1 || cols < 1 ||
        !layout_of(gemm_m, gemm_n, gemm_k, dataflow, &d))
        return -1;
    int64_t per_fold = fold_cycles(d.in_time, rows, cols, dataflow);
    int64_t folds, lines;
    if (per_fold < 0 || !as_mul_i64(ceil_div(d.on_rows, rows), ceil_div(d.on_cols, cols), &folds) ||
        !as_mul_i64(folds, per_fold, &lines))
        return -1;
    return lines - 1;
}

/* a * b * c, false on overflow. */
static bool mul3(int64_t a, int64_t b, int64_t c, int64_t *out)
{
    return as_mul_i64(a, b, out) && as_mul_i64(*out, c, out);
}

/*
 * Hops of the held data space: it is shifted down the columns from the top
 * edge (loaded, WS/IS) or to the bottom edge (drained, OS), so the word of
 * row i (0 at the top) crosses i + 1 pitches to load, and the one of row i
 * crosses rows - i to drain: r (r + 1) / 2 per column of a fold using r
 * rows.  Over the folds: on_cols x the sum over row folds, every row fold
 * but the last using all the rows.
 */
static bool held_hops(const dataflow_layout *d, int rows, int64_t *out)
{
    int64_t row_folds = ceil_div(d->on_rows, rows);
    int64_t last = d->on_rows - (row_folds - 1) * rows;
    int64_t full, per_column;
    return mul3(row_folds - 1, rows, rows + 1, &full) &&
           as_add_i64(full / 2, last * (last + 1) / 2, &per_column) &&
           as_mul_i64(per_column, d->on_cols, out);
}

/*
 * The data movement of map_systolic_traffic (mapping.h) fold by fold.  A
 * fold using r rows and c columns for T cycles of streaming does r c T
 * MACs; the word moving along the rows enters r per streaming cycle at the
 * left edge, the one moving down the columns c per cycle at the top (or
 * drains c partial sums per cycle at the bottom); the held one crosses the
 * edge once, r c words, loaded or drained.  Summed over the folds (the r
 * of the row folds add up to Sr, the c of the column folds to Sc):
 *   edge[along rows] = col_folds * Sr * T
 *   edge[down cols]  = row_folds * Sc * T
 *   edge[held]       = Sr * Sc
 * Inside, each MAC moves the two moving words one pitch each (a hop
 * latched in the PE's register), reads its three operands from registers,
 * and (OS) writes its accumulator; the held word's hops are held_hops.
 */
bool map_systolic_traffic_of(int64_t gemm_m, int64_t gemm_n, int64_t gemm_k, int rows, int cols,
                             arch_dataflow dataflow, map_systolic_traffic *out)
{
    dataflow_layout d;
    if (gemm_m < 1 || gemm_n < 1 || gemm_k < 1 || rows < 1 || cols < 1 ||
        !layout_of(gemm_m, gemm_n, gemm_k, dataflow, &d))
        return false;
    int64_t macs, held;
    map_systolic_traffic t;
    if (!mul3(d.on_rows, d.on_cols, d.in_time, &macs) || !held_hops(&d, rows, &held) ||
        !mul3(ceil_div(d.on_cols, cols), d.on_rows, d.in_time, &t.edge_words[d.along_rows]) ||
        !mul3(ceil_div(d.on_rows, rows), d.on_cols, d.in_time, &t.edge_words[d.down_cols]) ||
        !as_mul_i64(d.on_rows, d.on_cols, &t.edge_words[d.held]))
        return false;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        t.hops[ds] = ds == (int)d.held ? held : macs;
        t.reg_reads[ds] = macs;
        t.reg_writes[ds] = t.hops[ds];
    }
    if (d.held == WL_DS_OUTPUTS && !as_add_i64(t.reg_writes[d.held], macs, &t.reg_writes[d.held]))
        return false;
    *out = t;
    return true;
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
