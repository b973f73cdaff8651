/*
 * ops_index.c -- the op family of indexing and selection: ops whose
 * output elements are input elements picked by position or by value
 * (SpaceToDepth, GatherElements, ScatterND, Trilu, TopK, NonZero,
 * GridSample).  They do no arithmetic worth costing on the vector unit:
 * like the data movement ops, a network charges their traffic only.  One
 * table entry per op at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <string.h>

/* ------------------------------------------------------- SpaceToDepth */

/* SpaceToDepth [N, C, H, W] -> [N, C*b*b, H/b, W/b]; H and W must be
 * multiples of blocksize. */
static as_code infer_space_to_depth(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t b = c->op->attrs.blocksize, b2;
    as_code rc = wl_infer_block_op(c, &b2);
    if (rc != AS_OK)
        return rc;
    if (x->dims[2] % b != 0 || x->dims[3] % b != 0)
        return wl_infer_fail(c, "input '%s' has spatial dims %lldx%lld, not multiples of %lld",
                             x->name, (long long)x->dims[2], (long long)x->dims[3], (long long)b);
    int64_t dims[4] = {x->dims[0], 0, x->dims[2] / b, x->dims[3] / b};
    if (!as_mul_i64(x->dims[1], b2, &dims[1]))
        return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                             wl_infer_output(c, 0)->name);
    return wl_infer_set_output(c, 0, x->dtype, 4, dims);
}

/* Output channel (by*b + bx)*C + ch holds input (ch, h*b + by, w*b + bx),
 * as ONNX's reference (the DCR order of DepthToSpace, reversed). */
static int64_t source_space_to_depth(const wl_infer_ctx *c, int out_slot, const int64_t *idx,
                                     int *in_slot)
{
    (void)out_slot;
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t b = c->op->attrs.blocksize, channels = x->dims[1];
    int64_t block = idx[1] / channels;
    int64_t from[4] = {idx[0], idx[1] % channels, idx[2] * b + block / b, idx[3] * b + block % b};
    *in_slot = 0;
    return wl_fold_flat_index(x, from);
}

/* ----------------------------------------------------- GatherElements */

/* GatherElements: data and indices of the same rank; the output has the
 * indices' shape and the data's type. */
static as_code infer_gather_elements(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1);
    if (idx->rank != data->rank)
        return wl_infer_fail(c, "indices '%s' have rank %d but data '%s' rank %d", idx->name,
                             idx->rank, data->name, data->rank);
    as_code rc =
        wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, data->rank, false, &c->axis);
    int64_t len = data->dims[c->axis], n_idx = wl_tensor_elements(idx);
    for (int64_t k = 0; rc == AS_OK && idx->ivalues && k < n_idx; k++)
        if (idx->ivalues[k] < -len || idx->ivalues[k] >= len)
            return wl_infer_fail(c, "index %lld in '%s' out of range for axis %d of size %lld",
                                 (long long)idx->ivalues[k], idx->name, c->axis, (long long)len);
    return rc == AS_OK ? wl_infer_set_output_like(c, 0, idx, data->dtype) : rc;
}

/* Output element idx is data at idx with its axis coordinate replaced by
 * the index there. */
static int64_t source_gather_elements(const wl_infer_ctx *c, int out_slot, const int64_t *idx,
                                      int *in_slot)
{
    (void)out_slot;
    const wl_tensor *data = wl_infer_input(c, 0), *indices = wl_infer_input(c, 1);
    int64_t len = data->dims[c->axis];
    int64_t at = wl_fold_value_i(indices, wl_fold_flat_index(indices, idx));
    if (at < 0)
        at += len;
    if (at < 0 || at >= len)
        return -1; /* the shape rule rejects these */
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, (size_t)data->rank * sizeof *from);
    from[c->axis] = at;
    *in_slot = 0;
    return wl_fold_flat_index(data, from);
}

/* ---------------------------------------------------------- ScatterND */

/* ScatterND: data [r dims], indices [q dims] whose last dim k <= r
 * addresses data, updates = indices.dims[:-1] + data.dims[k:]; the
 * output is data's shape. */
static as_code infer_scatter_nd(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1), *upd = IN(c, 2);
    if (idx->rank < 1 || idx->dims[idx->rank - 1] > data->rank)
        return wl_infer_fail(c, "indices '%s' must end in a dim of at most %d (the data's rank)",
                             idx->name, data->rank);
    int k = (int)idx->dims[idx->rank - 1];
    int rank = idx->rank - 1 + data->rank - k;
    bool ok = upd->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = upd->dims[i] ==
             (i < idx->rank - 1 ? idx->dims[i] : data->dims[k + i - (idx->rank - 1)]);
    if (!ok)
        return wl_infer_fail(c, "updates '%s' do not have the shape indices[:-1] + data[%d:]",
                             upd->name, k);
    return wl_infer_set_output_like(c, 0, data, data->dtype);
}

/* ----------------------------------------------- ScatterElements, GatherND */

/* ScatterElements: data, indices and updates (indices' shape); the output
 * is data's shape. */
static as_code infer_scatter_elements(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1), *upd = IN(c, 2);
    if (idx->rank != data->rank || upd->rank != idx->rank ||
        memcmp(idx->dims, upd->dims, (size_t)idx->rank * sizeof *idx->dims) != 0)
        return wl_infer_fail(c, "indices '%s' and updates '%s' must have one shape of data's rank",
                             idx->name, upd->name);
    int axis = 0;
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, data->rank, false, &axis);
    return rc == AS_OK ? wl_infer_set_output_like(c, 0, data, data->dtype) : rc;
}

/* GatherND: data [r dims], indices [q dims] ending in k, b batch dims:
 * indices.dims[:-1] + data.dims[b + k:]. */
static as_code infer_gather_nd(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1);
    int64_t b = c->op->attrs.batch_dims;
    if (idx->rank < 1 || b < 0 || b >= idx->rank || b >= data->rank)
        return wl_infer_fail(c, "attribute 'batch_dims' = %lld does not fit '%s' and '%s'",
                             (long long)b, data->name, idx->name);
    int64_t k = idx->dims[idx->rank - 1];
    if (k < 1 || b + k > data->rank)
        return wl_infer_fail(c, "indices '%s' end in %lld; at most %lld (data's rank - batch_dims)",
                             idx->name, (long long)k, (long long)(data->rank - b));
    int rank = idx->rank - 1 + data->rank - (int)(b + k);
    if (rank > WL_MAX_RANK)
        return wl_infer_fail(c, "output '%s' would have rank %d; at most %d is supported",
                             wl_infer_output(c, 0)->name, rank, WL_MAX_RANK);
    int64_t dims[WL_MAX_RANK];
    memcpy(dims, idx->dims, (size_t)(idx->rank - 1) * sizeof *dims);
    memcpy(dims + idx->rank - 1, data->dims + b + k, (size_t)(data->rank - b - k) * sizeof *dims);
    return wl_infer_set_output(c, 0, data->dtype, rank, dims);
}

/* -------------------------------------------------------------- Trilu */

/* Trilu: the input's shape (rank >= 2); the optional diagonal offset k
 * (input 1) must be known to fold. */
static as_code infer_trilu(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 2)
        return wl_infer_fail(c, "input '%s' has rank %d; expected at least 2", x->name, x->rank);
    c->k = 0;
    if (IN(c, 1)) {
        const int64_t *k;
        int64_t n;
        as_code rc = wl_infer_ints(c, 1, "k", &k, &n);
        if (rc == AS_OK && n != 1)
            return wl_infer_fail(c, "input 'k' has %lld values; expected 1", (long long)n);
        if (rc == AS_OK)
            c->k = k[0];
        else
            as_status_clear(c->st); /* unknown k: the shape still holds */
    }
    c->fill = 0.0;
    return wl_infer_set_output_like(c, 0, x, x->dtype);
}

/* Kept elements (on or above diagonal k with upper, on or below without)
 * come from the input, the rest are 0. */
static int64_t source_trilu(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    (void)out_slot;
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t offset = idx[x->rank - 1] - idx[x->rank - 2];
    bool kept = c->op->attrs.upper ? offset >= c->k : offset <= c->k;
    *in_slot = 0;
    return kept ? wl_fold_flat_index(x, idx) : -1;
}

static void trilu_defaults(wl_attrs *a)
{
    a->upper = 1;
}

/* --------------------------------------------------------------- TopK */

/* TopK: values and indices (int64), the input's shape with K along
 * 'axis'.  K is input 1 from opset 10, the attribute 'k' before; it must
 * be known. */
static as_code infer_topk(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t k = c->op->attrs.k;
    if (IN(c, 1)) {
        const int64_t *values;
        int64_t n;
        as_code rc = wl_infer_required_ints(c, 1, "K", &values, &n);
        if (rc != AS_OK)
            return rc;
        if (n != 1)
            return wl_infer_fail(c, "input 'K' has %lld values; expected 1", (long long)n);
        k = values[0];
    }
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &c->axis);
    if (rc != AS_OK)
        return rc;
    if (k < 0 || k > x->dims[c->axis])
        return wl_infer_fail(c, "K = %lld is outside [0, %lld] (axis %d of '%s')", (long long)k,
                             (long long)x->dims[c->axis], c->axis, x->name);
    int64_t dims[WL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    dims[c->axis] = k;
    rc = wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
    return rc == AS_OK ? wl_infer_set_output(c, 1, WL_DTYPE_I64, x->rank, dims) : rc;
}

static void topk_defaults(wl_attrs *a)
{
    a->axis = -1;
}

/* ------------------------------------------------------------ NonZero */

/* NonZero: [rank, count of non-zero elements], int64.  The count depends
 * on the input's values: known only when the input is a constant (then
 * the op folds); otherwise the graph has no static shape, and the node is
 * named in the error. */
static as_code infer_nonzero(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (!wl_fold_has_values(x))
        return wl_infer_fail(c,
                             "output shape depends on the values of input '%s', which are not "
                             "known before run time; accelsearch needs static shapes",
                             x->name);
    int64_t n = wl_tensor_elements(x), count = 0;
    for (int64_t k = 0; k < n; k++)
        count += wl_fold_value_f(x, k) != 0;
    int64_t dims[2] = {x->rank, count};
    return wl_infer_set_output(c, 0, WL_DTYPE_I64, 2, dims);
}

/* Row d of the output lists coordinate d of each non-zero element, in
 * row-major order. */
static as_code fold_nonzero(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    const wl_tensor *x = wl_infer_input(c, 0);
    wl_tensor *y = wl_infer_output(c, 0);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    int64_t n = wl_tensor_elements(x), count = y->dims[1], at = 0, idx[WL_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        if (wl_fold_value_f(x, k) != 0) {
            for (int d = 0; d < x->rank; d++)
                wl_fold_store_i(y, d * count + at, idx[d]);
            at++;
        }
        wl_fold_next_index(x->rank, x->dims, idx);
    }
    return AS_OK;
}

/* --------------------------------------------------------- GridSample */

/* GridSample (2-D): X [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo]. */
static as_code infer_grid_sample(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *grid = IN(c, 1);
    if (x->rank != 4 || grid->rank != 4 || grid->dims[3] != 2 || grid->dims[0] != x->dims[0])
        return wl_infer_fail(c,
                             "expected X [N, C, H, W] and grid [N, Ho, Wo, 2]; got '%s' of rank "
                             "%d and '%s' of rank %d",
                             x->name, x->rank, grid->name, grid->rank);
    int64_t dims[4] = {x->dims[0], x->dims[1], grid->dims[1], grid->dims[2]};
    return wl_infer_set_output(c, 0, x->dtype, 4, dims);
}

/* --------------------------------------------------------------- table */

#define MOVED(n, r, s) .required_inputs = (n), .infer = (r), .fold = wl_fold_moved, .source = (s)

const wl_op_def wl_ops_index[WL_OP_COUNT] = {
    [WL_OP_SPACE_TO_DEPTH] = {MOVED(1, infer_space_to_depth, source_space_to_depth)},
    [WL_OP_GATHER_ELEMENTS] = {.min_opset = 11,
                               MOVED(2, infer_gather_elements, source_gather_elements)},
    [WL_OP_SCATTER_ND] = {.min_opset = 11, .required_inputs = 3, .infer = infer_scatter_nd},
    [WL_OP_SCATTER_ELEMENTS] = {.min_opset = 11,
                                .required_inputs = 3,
                                .infer = infer_scatter_elements},
    [WL_OP_GATHER_ND] = {.min_opset = 11, .required_inputs = 2, .infer = infer_gather_nd},
    [WL_OP_TRILU] = {.min_opset = 14,
                     .defaults = trilu_defaults,
                     MOVED(1, infer_trilu, source_trilu)},
    [WL_OP_TOP_K] = {.defaults = topk_defaults, .required_inputs = 1, .infer = infer_topk},
    [WL_OP_NON_ZERO] = {.min_opset = 9,
                        .required_inputs = 1,
                        .infer = infer_nonzero,
                        .fold = fold_nonzero},
    [WL_OP_GRID_SAMPLE] = {.min_opset = 16, .required_inputs = 2, .infer = infer_grid_sample},
};
