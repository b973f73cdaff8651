/*
 * problem.c -- lowering of compute ops to Timeloop-style loop-nest problems
 * (see the comment above wl_problem in workload.h).
 */
#include "workload.h"

#include <string.h>

/* Describe op for messages. */
#define OP_FMT "%s: node %d '%s' (%s)"
#define OP_ARGS(g, op) (g)->source, (op)->source_index, (op)->name, (op)->op_type

static const char *const dataspace_names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

/* Append a rank to data space ds: coef_a * a (+ coef_b * b when coef_b). */
static void add_rank(wl_dataspace *ds, wl_dim a, int64_t coef_a, wl_dim b, int64_t coef_b)
{
    wl_proj_rank *r = &ds->ranks[ds->n_ranks++];
    r->n_terms = coef_b ? 2 : 1;
    r->terms[0] = (wl_proj_term){a, coef_a};
    r->terms[1] = (wl_proj_term){b, coef_b};
}

static void add_dims(wl_dataspace *ds, int n, const wl_dim *dims)
{
    for (int i = 0; i < n; i++)
        add_rank(ds, dims[i], 1, dims[i], 0);
}

/* Bind data space id to graph tensor t: name, precision, density. */
static void bind(const wl_graph *g, wl_problem *p, wl_dataspace_id id, int32_t t)
{
    wl_dataspace *ds = &p->ds[id];
    ds->name = dataspace_names[id];
    ds->tensor = t;
    ds->bits = g->tensors[t].bits;
    ds->density = g->tensors[t].density;
    ds->read_write = id == WL_DS_OUTPUTS;
}

static bool is_stored(const wl_tensor *t)
{
    return t->kind == WL_TENSOR_WEIGHT || t->kind == WL_TENSOR_CONSTANT;
}

/* The spatial extents of a 1-D or 2-D window op, as (H, W) pairs: a 1-D
 * op has H = 1.  Returns false for 3-D and above. */
static bool spatial_hw(const wl_tensor *t, int64_t hw[2])
{
    if (t->rank == 4) {
        hw[0] = t->dims[2];
        hw[1] = t->dims[3];
    } else if (t->rank == 3) {
        hw[0] = 1;
        hw[1] = t->dims[2];
    } else {
        return false;
    }
    return true;
}

/* Copy the (H, W) view of a per-spatial-axis attribute of n_spatial axes. */
static void attr_hw(const int64_t *attr, int n_spatial, int64_t out[2], int64_t fill)
{
    out[0] = n_spatial == 2 ? attr[0] : fill;
    out[1] = n_spatial == 2 ? attr[1] : attr[0];
}

/* Conv and ConvTranspose share everything but which side the window is on. */
static as_code conv_problem(const wl_graph *g, const wl_op *op, wl_problem *p, as_status *st)
{
    const wl_tensor *x = &g->tensors[op->inputs[0]];
    const wl_tensor *w = &g->tensors[op->inputs[1]];
    const wl_tensor *y = &g->tensors[op->outputs[0]];
    bool transposed = op->kind == WL_OP_CONV_TRANSPOSE;
    int64_t in_hw[2], out_hw[2];
    if (!spatial_hw(x, in_hw) || !spatial_hw(y, out_hw) || w->rank != x->rank)
        return as_fail(st, AS_EINVAL,
                       OP_FMT ": only 1-D and 2-D convolutions lower to a loop-nest problem "
                              "(input rank %d)",
                       OP_ARGS(g, op), x->rank);
    int n_spatial = x->rank - 2;
    int64_t group = op->attrs.group > 0 ? op->attrs.group : 1;
    int64_t c_in = x->dims[1], c_out = y->dims[1];
    if (c_in % group || c_out % group)
        return as_fail(st, AS_EINVAL, OP_FMT ": attribute 'group' = %lld does not divide channels",
                       OP_ARGS(g, op), (long long)group);
    int64_t kernel[2] = {n_spatial == 2 ? w->dims[2] : 1, w->dims[n_spatial == 2 ? 3 : 2]};
    attr_hw(op->attrs.strides, n_spatial, p->stride, 1);
    attr_hw(op->attrs.dilations, n_spatial, p->dilation, 1);
    int64_t begin[2], end[2];
    attr_hw(op->attrs.pads, n_spatial, begin, 0);
    attr_hw(op->attrs.pads + n_spatial, n_spatial, end, 0);
    p->pad[0] = begin[0];
    p->pad[1] = begin[1];
    p->pad[2] = end[0];
    p->pad[3] = end[1];

    const int64_t *rows = transposed ? in_hw : out_hw; /* P, Q iterate these */
    p->bound[WL_DIM_N] = x->dims[0];
    p->bound[WL_DIM_G] = group;
    p->bound[WL_DIM_C] = c_in / group;
    p->bound[WL_DIM_M] = c_out / group;
    p->bound[WL_DIM_P] = rows[0];
    p->bound[WL_DIM_Q] = rows[1];
    p->bound[WL_DIM_R] = kernel[0];
    p->bound[WL_DIM_S] = kernel[1];
    p->kind = transposed ? WL_PROBLEM_CONV_TRANSPOSE
              : (group > 1 && p->bound[WL_DIM_C] == 1 && p->bound[WL_DIM_M] == 1)
                  ? WL_PROBLEM_DEPTHWISE
                  : WL_PROBLEM_CONV;

    static const wl_dim weight_dims[] = {WL_DIM_G, WL_DIM_M, WL_DIM_C, WL_DIM_R, WL_DIM_S};
    add_dims(&p->ds[WL_DS_WEIGHTS], 5, weight_dims);
    /* The sliding window: input rows of a conv, output rows of a transposed
     * conv, both p*stride + r*dilation. */
    wl_dataspace *direct = &p->ds[transposed ? WL_DS_INPUTS : WL_DS_OUTPUTS];
    wl_dataspace *window = &p->ds[transposed ? WL_DS_OUTPUTS : WL_DS_INPUTS];
    wl_dim channel_direct = transposed ? WL_DIM_C : WL_DIM_M;
    wl_dim channel_window = transposed ? WL_DIM_M : WL_DIM_C;
    const wl_dim direct_dims[] = {WL_DIM_N, WL_DIM_G, channel_direct, WL_DIM_P, WL_DIM_Q};
    add_dims(direct, 5, direct_dims);
    const wl_dim window_dims[] = {WL_DIM_N, WL_DIM_G, channel_window};
    add_dims(window, 3, window_dims);
    add_rank(window, WL_DIM_P, p->stride[0], WL_DIM_R, p->dilation[0]);
    add_rank(window, WL_DIM_Q, p->stride[1], WL_DIM_S, p->dilation[1]);
    bind(g, p, WL_DS_WEIGHTS, op->inputs[1]);
    bind(g, p, WL_DS_INPUTS, op->inputs[0]);
    bind(g, p, WL_DS_OUTPUTS, op->outputs[0]);
    return AS_OK;
}

/* Product of dims [0, n) of t. */
static int64_t prod_dims(const wl_tensor *t, int n)
{
    int64_t v = 1;
    for (int i = 0; i < n; i++)
        v *= t->dims[i];
    return v;
}

/*
 * Gemm and MatMul: Outputs[n][g][p][m] += A[n][g][p][c] * B[g][c][m].
 * The operand in the weights role is B, unless A is stored and B is not
 * (W x X).  Leading batch dims go to N when B has none (a Linear layer over
 * a batch of tokens) and to G when B has them (attention heads); a partly
 * broadcast batch (A [2,1,..] x B [1,3,..]) is described by the full G on
 * both operands, which overstates their footprint.
 */
static as_code matmul_problem(const wl_graph *g, const wl_op *op, wl_problem *p, as_status *st)
{
    const wl_tensor *a = &g->tensors[op->inputs[0]];
    const wl_tensor *b = &g->tensors[op->inputs[1]];
    const wl_tensor *y = &g->tensors[op->outputs[0]];
    int64_t rows, inner, cols, batch_a = 1, batch_b = 1, batch = 1;
    if (op->kind == WL_OP_GEMM) {
        if (a->rank != 2 || b->rank != 2)
            return as_fail(st, AS_EINVAL, OP_FMT ": Gemm operands must be 2-D", OP_ARGS(g, op));
        rows = a->dims[op->attrs.trans_a ? 1 : 0];
        inner = a->dims[op->attrs.trans_a ? 0 : 1];
        cols = b->dims[op->attrs.trans_b ? 0 : 1];
    } else {
        if (a->rank < 1 || b->rank < 1)
            return as_fail(st, AS_EINVAL, OP_FMT ": MatMul operands must have rank >= 1",
                           OP_ARGS(g, op));
        rows = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
        inner = a->dims[a->rank - 1];
        cols = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
        batch_a = a->rank > 2 ? prod_dims(a, a->rank - 2) : 1;
        batch_b = b->rank > 2 ? prod_dims(b, b->rank - 2) : 1;
        int64_t out_elems = wl_tensor_elements(y);
        batch = rows * cols > 0 ? out_elems / (rows * cols) : 0;
    }
    bool swap = is_stored(a) && !is_stored(b);
    p->kind = (is_stored(a) || is_stored(b)) ? WL_PROBLEM_MATMUL : WL_PROBLEM_BATCHED_MATMUL;
    bool batch_in_g = batch_b > 1;
    for (int d = 0; d < WL_NDIMS; d++)
        p->bound[d] = 1;
    p->bound[batch_in_g ? WL_DIM_G : WL_DIM_N] = batch;
    p->bound[WL_DIM_P] = rows;
    p->bound[WL_DIM_C] = inner;
    p->bound[WL_DIM_M] = cols;
    p->stride[0] = p->stride[1] = p->dilation[0] = p->dilation[1] = 1;

    wl_dataspace *ds_a = &p->ds[swap ? WL_DS_WEIGHTS : WL_DS_INPUTS];
    wl_dataspace *ds_b = &p->ds[swap ? WL_DS_INPUTS : WL_DS_WEIGHTS];
    if (!batch_in_g)
        add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_N});
    if (batch_in_g && batch_a > 1)
        add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_G});
    add_dims(ds_a, 2, (const wl_dim[]){WL_DIM_P, WL_DIM_C});
    if (batch_in_g)
        add_dims(ds_b, 1, (const wl_dim[]){WL_DIM_G});
    add_dims(ds_b, 2, (const wl_dim[]){WL_DIM_C, WL_DIM_M});
    add_dims(&p->ds[WL_DS_OUTPUTS], 4, (const wl_dim[]){WL_DIM_N, WL_DIM_G, WL_DIM_P, WL_DIM_M});
    bind(g, p, swap ? WL_DS_WEIGHTS : WL_DS_INPUTS, op->inputs[0]);
    bind(g, p, swap ? WL_DS_INPUTS : WL_DS_WEIGHTS, op->inputs[1]);
    bind(g, p, WL_DS_OUTPUTS, op->outputs[0]);
    return AS_OK;
}

as_code wl_op_problem(const wl_graph *g, int32_t o, wl_problem *out, as_status *st)
{
    const wl_op *op = &g->ops[o];
    memset(out, 0, sizeof *out);
    out->op = o;
    if (wl_op_kind_category(op->kind) != WL_CAT_COMPUTE)
        return as_fail(st, AS_EINVAL, OP_FMT ": not a compute op; it has no loop-nest problem",
                       OP_ARGS(g, op));
    for (int i = 0; i < 2; i++)
        if (op->n_inputs <= i || op->inputs[i] < 0 || !g->tensors[op->inputs[i]].shape_known)
            return as_fail(st, AS_EINVAL, OP_FMT ": operand %d has no known shape", OP_ARGS(g, op),
                           i);
    if (!g->tensors[op->outputs[0]].shape_known)
        return as_fail(st, AS_EINVAL, OP_FMT ": output shape unknown", OP_ARGS(g, op));
    if (op->kind == WL_OP_CONV || op->kind == WL_OP_CONV_TRANSPOSE)
        return conv_problem(g, op, out, st);
    return matmul_problem(g, op, out, st);
}

int64_t wl_problem_macs(const wl_problem *p)
{
    int64_t macs = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        if (!as_mul_i64(macs, p->bound[d], &macs))
            return -1;
    return macs;
}

int64_t wl_dataspace_elements(const wl_problem *p, wl_dataspace_id id)
{
    const wl_dataspace *ds = &p->ds[id];
    int64_t elements = 1;
    for (int r = 0; r < ds->n_ranks; r++) {
        int64_t extent = 1;
        for (int k = 0; k < ds->ranks[r].n_terms; k++) {
            const wl_proj_term *t = &ds->ranks[r].terms[k];
            extent += t->coef * (p->bound[t->dim] - 1);
        }
        if (!as_mul_i64(elements, extent, &elements))
            return -1;
    }
    return elements;
}
