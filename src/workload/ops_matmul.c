/*
 * ops_matmul.c -- the op family of Gemm and MatMul: matrix products,
 * lowered to the loop-nest problem N, G, P, C, M.  One table entry per op
 * at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* Gemm: A [M, K] (transA: [K, M]) times B [K, N] (transB: [N, K]), plus C
 * broadcast to [M, N]. */
static as_code infer_gemm(wl_infer_ctx *c)
{
    const wl_tensor *a = IN(c, 0), *b = IN(c, 1), *bias = IN(c, 2);
    const wl_attrs *at = &c->op->attrs;
    if (a->rank != 2 || b->rank != 2)
        return wl_infer_fail(c, "inputs '%s' and '%s' have ranks %d and %d; Gemm needs rank 2",
                             a->name, b->name, a->rank, b->rank);
    int64_t m = a->dims[at->trans_a ? 1 : 0], ka = a->dims[at->trans_a ? 0 : 1];
    int64_t kb = b->dims[at->trans_b ? 1 : 0], n = b->dims[at->trans_b ? 0 : 1];
    if (ka != kb) {
        char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s (transA %d) has K = %lld, "
                             "'%s' %s (transB %d) has K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), at->trans_a, (long long)ka,
                             b->name, wl_shape_str(b, sb, sizeof sb), at->trans_b, (long long)kb);
    }
    int64_t dims[2] = {m, n};
    if (bias) {
        as_code rc = wl_infer_broadcasts_to(c, bias, 2, dims);
        if (rc != AS_OK)
            return rc;
    }
    return wl_infer_set_output(c, 0, a->dtype, 2, dims);
}

/*
 * MatMul with numpy semantics: a 1-D first operand is a row [1, K], a
 * 1-D second operand a column [K, 1], and the promoted dim is dropped from
 * the result; the batch dims (all but the last two) broadcast.
 */
static as_code infer_matmul(wl_infer_ctx *c)
{
    const wl_tensor *a = IN(c, 0), *b = IN(c, 1);
    if (a->rank < 1 || b->rank < 1)
        return wl_infer_fail(c,
                             "inputs '%s' and '%s' have ranks %d and %d; MatMul needs rank "
                             ">= 1",
                             a->name, b->name, a->rank, b->rank);
    int64_t ka = a->dims[a->rank - 1];
    int64_t kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka != kb) {
        char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s has K = %lld, '%s' %s has "
                             "K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), (long long)ka, b->name,
                             wl_shape_str(b, sb, sizeof sb), (long long)kb);
    }
    int batch_a = a->rank > 2 ? a->rank - 2 : 0, batch_b = b->rank > 2 ? b->rank - 2 : 0;
    int rank;
    int64_t dims[WL_MAX_RANK + 2];
    as_code rc = wl_infer_broadcast(c, b, batch_a, a->dims, batch_b, b->dims, &rank, dims);
    if (rc != AS_OK)
        return rc;
    if (a->rank > 1)
        dims[rank++] = a->dims[a->rank - 2];
    if (b->rank > 1)
        dims[rank++] = b->dims[b->rank - 1];
    return wl_infer_set_output(c, 0, a->dtype, rank, dims);
}

/* ------------------------------------------------------------ problems */

static bool is_stored(const wl_tensor *t)
{
    return t->kind == WL_TENSOR_WEIGHT || t->kind == WL_TENSOR_CONSTANT;
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
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": Gemm operands must be 2-D",
                           WL_OP_ARGS(g, op));
        rows = a->dims[op->attrs.trans_a ? 1 : 0];
        inner = a->dims[op->attrs.trans_a ? 0 : 1];
        cols = b->dims[op->attrs.trans_b ? 0 : 1];
    } else {
        if (a->rank < 1 || b->rank < 1)
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": MatMul operands must have rank >= 1",
                           WL_OP_ARGS(g, op));
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
        wl_problem_add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_N});
    if (batch_in_g && batch_a > 1)
        wl_problem_add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_G});
    wl_problem_add_dims(ds_a, 2, (const wl_dim[]){WL_DIM_P, WL_DIM_C});
    if (batch_in_g)
        wl_problem_add_dims(ds_b, 1, (const wl_dim[]){WL_DIM_G});
    wl_problem_add_dims(ds_b, 2, (const wl_dim[]){WL_DIM_C, WL_DIM_M});
    wl_problem_add_dims(&p->ds[WL_DS_OUTPUTS], 4,
                        (const wl_dim[]){WL_DIM_N, WL_DIM_G, WL_DIM_P, WL_DIM_M});
    wl_problem_bind(g, p, swap ? WL_DS_WEIGHTS : WL_DS_INPUTS, op->inputs[0]);
    wl_problem_bind(g, p, swap ? WL_DS_INPUTS : WL_DS_WEIGHTS, op->inputs[1]);
    wl_problem_bind(g, p, WL_DS_OUTPUTS, op->outputs[0]);
    return AS_OK;
}

/* Gemm with transA reads its rows as columns: a row tile needs all of A. */
static wl_halo_rule gemm_halo(const wl_op *op)
{
    return op->attrs.trans_a ? WL_HALO_WHOLE : WL_HALO_ROWS;
}

/* --------------------------------------------------------------- table */

/* A matrix product with shape rule r: the matmul problem, rows passing
 * through a tile. */
#define MATMUL(r)                                                                                  \
    .required_inputs = 2, .infer = (r), .problem = matmul_problem, .halo = WL_HALO_ROWS

const wl_op_def wl_ops_matmul[WL_OP_COUNT] = {
    [WL_OP_GEMM] = {MATMUL(infer_gemm), .halo_of = gemm_halo},
    [WL_OP_MATMUL] = {MATMUL(infer_matmul)},
};
