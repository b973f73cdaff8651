/*
 * ops_movement.c -- the op family of data movement: ops that copy
 * elements into a new arrangement (Concat, Split, Slice, Gather,
 * Transpose, Expand, Tile, Pad, Resize, DepthToSpace).  They fold through
 * a per-op source map (wl_fold_moved) and cost their DRAM traffic only.
 * One table entry per op at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* Concat: equal ranks, equal dims off the axis, the axis dims add up. */
static as_code infer_concat(wl_infer_ctx *c)
{
    const wl_tensor *first = IN(c, 0);
    as_code rc =
        wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, first->rank, false, &c->axis);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    memcpy(dims, first->dims, sizeof dims);
    for (int s = 1; s < c->op->n_inputs; s++) {
        const wl_tensor *t = IN(c, s);
        if (!t)
            return wl_infer_fail(c, "missing required input %d", s);
        bool agree = t->rank == first->rank;
        for (int i = 0; agree && i < t->rank; i++)
            agree = i == c->axis || t->dims[i] == first->dims[i];
        if (!agree) {
            char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
            return wl_infer_fail(c, "input '%s' %s does not match input '%s' %s outside axis %d",
                                 t->name, wl_shape_str(t, sa, sizeof sa), first->name,
                                 wl_shape_str(first, sb, sizeof sb), c->axis);
        }
        if (!as_add_i64(dims[c->axis], t->dims[c->axis], &dims[c->axis]))
            return wl_infer_fail(c, "concatenated axis %d overflows 64 bits", c->axis);
    }
    return wl_infer_set_output(c, 0, first->dtype, first->rank, dims);
}

/* Split: sizes from input 'split' (opset 13+) or the attribute, else equal
 * parts, one per output; they must add up to the axis. */
static as_code infer_split(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int n_out = c->op->n_outputs;
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &c->axis);
    if (rc != AS_OK)
        return rc;
    int64_t axis_len = x->dims[c->axis];
    const int64_t *sizes = c->op->attrs.split;
    int64_t n_sizes = c->op->attrs.n_split;
    const char *key = "attribute 'split'";
    if (IN(c, 1)) {
        rc = wl_infer_ints(c, 1, "split", &sizes, &n_sizes);
        if (rc != AS_OK)
            return rc;
        key = "input 'split'";
    } else if (n_sizes < 0 || n_sizes > (int64_t)(sizeof c->op->attrs.split / sizeof *sizes)) {
        return wl_infer_fail(c, "%s has %lld entries", key, (long long)n_sizes);
    }
    if (n_sizes == 0 && axis_len % n_out != 0)
        return wl_infer_fail(c, "axis %d of size %lld does not split into %d equal parts", c->axis,
                             (long long)axis_len, n_out);
    if (n_sizes != 0 && n_sizes != n_out)
        return wl_infer_fail(c, "%s has %lld sizes for %d outputs", key, (long long)n_sizes, n_out);
    int64_t total = 0, dims[WL_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (int o = 0; o < n_out; o++) {
        dims[c->axis] = n_sizes ? sizes[o] : axis_len / n_out;
        if (dims[c->axis] < 0 || !as_add_i64(total, dims[c->axis], &total))
            return wl_infer_fail(c, "%s has invalid size %lld", key, (long long)dims[c->axis]);
        rc = wl_infer_set_output(c, o, x->dtype, x->rank, dims);
        if (rc != AS_OK)
            return rc;
    }
    if (total != axis_len)
        return wl_infer_fail(c, "%s sums to %lld but axis %d has size %lld", key, (long long)total,
                             c->axis, (long long)axis_len);
    return AS_OK;
}

/* Clamp v into [lo, hi]. */
static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Slice one axis of length len: ONNX adds len to negative starts and
 * ends, then clamps them ([0, len] going forward, [0, len - 1] and
 * [-1, len - 1] going backward), so INT64_MAX "to the end" works.
 * Leaves the first index and returns the output length.
 */
static int64_t slice_axis(int64_t len, int64_t start, int64_t end, int64_t step, int64_t *first)
{
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    uint64_t distance, stride;
    if (step > 0) {
        start = clamp_i64(start, 0, len);
        end = clamp_i64(end, 0, len);
        distance = end > start ? (uint64_t)(end - start) : 0;
        stride = (uint64_t)step;
    } else {
        start = clamp_i64(start, 0, len - 1);
        end = clamp_i64(end, -1, len - 1);
        distance = start > end ? (uint64_t)(start - end) : 0;
        stride = 0 - (uint64_t)step;
    }
    *first = start;
    return distance ? (int64_t)((distance - 1) / stride + 1) : 0;
}

/* Slice: starts, ends, optional axes and steps as inputs (opset 10+). */
static as_code infer_slice(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int64_t n, n_ends, n_axes = -1, n_steps = -1;
    as_code rc = wl_infer_required_ints(c, 1, "starts", &starts, &n);
    if (rc == AS_OK)
        rc = wl_infer_required_ints(c, 2, "ends", &ends, &n_ends);
    if (rc == AS_OK && IN(c, 3))
        rc = wl_infer_ints(c, 3, "axes", &axes, &n_axes);
    if (rc == AS_OK && IN(c, 4))
        rc = wl_infer_ints(c, 4, "steps", &steps, &n_steps);
    if (rc != AS_OK)
        return rc;
    if (n_ends != n || (n_axes >= 0 && n_axes != n) || (n_steps >= 0 && n_steps != n) ||
        n > x->rank)
        return wl_infer_fail(c,
                             "inputs starts, ends, axes, steps have %lld, %lld, %lld, %lld "
                             "entries for rank %d",
                             (long long)n, (long long)n_ends, (long long)n_axes, (long long)n_steps,
                             x->rank);
    int64_t dims[WL_MAX_RANK];
    bool seen[WL_MAX_RANK] = {false};
    for (int d = 0; d < x->rank; d++) {
        dims[d] = x->dims[d];
        c->first[d] = 0;
        c->step[d] = 1;
    }
    for (int64_t i = 0; i < n; i++) {
        int axis = 0;
        rc = wl_infer_axis(c, "input 'axes'", axes ? axes[i] : i, x->rank, false, &axis);
        if (rc != AS_OK)
            return rc;
        if (seen[axis])
            return wl_infer_fail(c, "input 'axes' repeats axis %d", axis);
        seen[axis] = true;
        int64_t step = steps ? steps[i] : 1;
        if (step == 0)
            return wl_infer_fail(c, "input 'steps' has 0 for axis %d", axis);
        dims[axis] = slice_axis(x->dims[axis], starts[i], ends[i], step, &c->first[axis]);
        c->step[axis] = step;
    }
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; known indices are
 * checked against the axis (negative ones count from the end). */
static as_code infer_gather(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1);
    as_code rc =
        wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, data->rank, false, &c->axis);
    if (rc != AS_OK)
        return rc;
    int64_t len = data->dims[c->axis], n_idx = wl_tensor_elements(idx);
    for (int64_t k = 0; idx->ivalues && k < n_idx; k++)
        if (idx->ivalues[k] < -len || idx->ivalues[k] >= len)
            return wl_infer_fail(c, "index %lld in '%s' out of range for axis %d of size %lld",
                                 (long long)idx->ivalues[k], idx->name, c->axis, (long long)len);
    int rank = data->rank - 1 + idx->rank;
    if (rank > WL_MAX_RANK)
        return wl_infer_fail(c, "output '%s' would have rank %d; at most %d is supported",
                             wl_infer_output(c, 0)->name, rank, WL_MAX_RANK);
    int64_t dims[WL_MAX_RANK];
    memcpy(dims, data->dims, (size_t)c->axis * sizeof *dims);
    memcpy(dims + c->axis, idx->dims, (size_t)idx->rank * sizeof *dims);
    memcpy(dims + c->axis + idx->rank, data->dims + c->axis + 1,
           (size_t)(data->rank - c->axis - 1) * sizeof *dims);
    return wl_infer_set_output(c, 0, data->dtype, rank, dims);
}

/* Transpose: a permutation of the axes; none means reversed. */
static as_code infer_transpose(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const wl_attrs *a = &c->op->attrs;
    if (a->n_perm != 0 && a->n_perm != x->rank)
        return wl_infer_fail(c, "attribute 'perm' has %d entries for rank %d", a->n_perm, x->rank);
    bool used[WL_MAX_RANK] = {false};
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        int64_t p = a->n_perm ? a->perm[i] : x->rank - 1 - i;
        if (p < 0 || p >= x->rank || used[p])
            return wl_infer_fail(c,
                                 "attribute 'perm' is not a permutation of %d axes (entry %d "
                                 "= %lld)",
                                 x->rank, i, (long long)p);
        used[p] = true;
        c->perm[i] = (int)p;
        dims[i] = x->dims[p];
    }
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* Expand: broadcast the input with the shape given as input 1 (both ways,
 * as numpy: a 1 in the target keeps the input's dim). */
static as_code infer_expand(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *shape;
    int64_t n;
    as_code rc = wl_infer_shape_list(c, 1, false, &shape, &n);
    if (rc != AS_OK)
        return rc;
    int rank;
    int64_t dims[WL_MAX_RANK];
    rc = wl_infer_broadcast(c, IN(c, 1), x->rank, x->dims, (int)n, shape, &rank, dims);
    if (rc == AS_OK)
        rc = wl_infer_set_output(c, 0, x->dtype, rank, dims);
    return rc;
}

/* The known list of input `slot` (`role` names it), which must hold
 * per_axis values for each of the rank axes (Tile's repeats, Pad's pads,
 * Resize's sizes). */
static as_code ints_per_axis(const wl_infer_ctx *c, int slot, const char *role, int per_axis,
                             int rank, const int64_t **values)
{
    int64_t n;
    as_code rc = wl_infer_ints(c, slot, role, values, &n);
    if (rc == AS_OK && n != per_axis * (int64_t)rank)
        return wl_infer_fail(c, "input '%s' has %lld entries for rank %d", role, (long long)n,
                             rank);
    return rc;
}

/* Tile: each dim times its repeat count. */
static as_code infer_tile(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *repeats;
    as_code rc = ints_per_axis(c, 1, "repeats", 1, x->rank, &repeats);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        if (repeats[i] < 0 || !as_mul_i64(x->dims[i], repeats[i], &dims[i]))
            return wl_infer_fail(c, "input 'repeats' entry %d = %lld is negative or overflows", i,
                                 (long long)repeats[i]);
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* Pad (opset 11+): pads input [begins..., ends...] may be negative (crop);
 * optional constant_value input 2. */
static as_code infer_pad(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *value = IN(c, 2);
    const int64_t *pads;
    as_code rc = ints_per_axis(c, 1, "pads", 2, x->rank, &pads);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (__builtin_add_overflow(x->dims[i], pads[i], &dims[i]) ||
            __builtin_add_overflow(dims[i], pads[x->rank + i], &dims[i]) || dims[i] < 0)
            return wl_infer_fail(c, "input 'pads' (%lld, %lld) on axis %d leave an invalid size",
                                 (long long)pads[i], (long long)pads[x->rank + i], i);
        c->first[i] = pads[i];
    }
    c->fill = 0;
    if (value && value->ivalues)
        c->fill = (double)value->ivalues[0];
    else if (value && value->fvalues)
        c->fill = value->fvalues[0];
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* Resize (opset 11+: X, roi, scales, sizes): the output is 'sizes' when
 * given, else floor(dim * scale).  Empty tensors stand for absent ones. */
static as_code infer_resize(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int scales_slot = c->op->n_inputs == 2 ? 1 : 2; /* opset 10 layout: X, scales */
    const wl_tensor *scales = IN(c, scales_slot), *sizes = IN(c, 3);
    int64_t dims[WL_MAX_RANK];
    if (sizes && wl_tensor_elements(sizes) > 0) {
        const int64_t *v;
        as_code rc = ints_per_axis(c, 3, "sizes", 1, x->rank, &v);
        return rc != AS_OK ? rc : wl_infer_set_output(c, 0, x->dtype, x->rank, v);
    }
    if (!scales || wl_tensor_elements(scales) <= 0)
        return wl_infer_fail(c, "neither 'scales' nor 'sizes' is given");
    if (!scales->fvalues)
        return wl_infer_fail(c, "scales input '%s' has no known values (it must be a constant)",
                             scales->name);
    if (wl_tensor_elements(scales) != x->rank)
        return wl_infer_fail(c, "input 'scales' has %lld entries for rank %d",
                             (long long)wl_tensor_elements(scales), x->rank);
    for (int i = 0; i < x->rank; i++) {
        double len = floor((double)x->dims[i] * scales->fvalues[i]);
        if (!(scales->fvalues[i] > 0) || !(len < 9.0e18))
            return wl_infer_fail(c, "input 'scales' entry %d = %g is not a usable scale", i,
                                 scales->fvalues[i]);
        dims[i] = (int64_t)len;
    }
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* DepthToSpace and SpaceToDepth: input 0 is [N, C, H, W] and blocksize b
 * is valid; *b2 = b * b. */
as_code wl_infer_block_op(wl_infer_ctx *c, int64_t *b2)
{
    const wl_tensor *x = IN(c, 0);
    int64_t b = c->op->attrs.blocksize;
    if (x->rank != 4)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, H, W]", x->name, x->rank);
    if (b < 1 || !as_mul_i64(b, b, b2))
        return wl_infer_fail(c, "attribute 'blocksize' = %lld is invalid", (long long)b);
    return AS_OK;
}

/* DepthToSpace: [N, C, H, W] -> [N, C / b^2, H * b, W * b]. */
static as_code infer_depth_to_space(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t b = c->op->attrs.blocksize, b2;
    as_code rc = wl_infer_block_op(c, &b2);
    if (rc != AS_OK)
        return rc;
    if (x->dims[1] % b2 != 0)
        return wl_infer_fail(c,
                             "input '%s' has %lld channels, not a multiple of blocksize^2 = "
                             "%lld",
                             x->name, (long long)x->dims[1], (long long)b2);
    int64_t dims[4] = {x->dims[0], x->dims[1] / b2};
    if (!as_mul_i64(x->dims[2], b, &dims[2]) || !as_mul_i64(x->dims[3], b, &dims[3]))
        return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                             wl_infer_output(c, 0)->name);
    return wl_infer_set_output(c, 0, x->dtype, 4, dims);
}

/* ------------------------------------------------------------- folding */

/* Expand: the input element numpy broadcasting pairs with idx. */
static int64_t source_expand(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    *in_slot = 0;
    return wl_fold_broadcast_index(wl_infer_input(c, 0), wl_infer_output(c, out_slot)->rank, idx);
}

/* Tile: the output repeats the input whole along every axis. */
static int64_t source_tile(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[i] = idx[i] % x->dims[i];
    *in_slot = 0;
    return wl_fold_flat_index(x, from);
}

/* Transpose: output axis i is input axis perm[i]. */
static int64_t source_transpose(const wl_infer_ctx *c, int out_slot, const int64_t *idx,
                                int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[c->perm[i]] = idx[i];
    *in_slot = 0;
    return wl_fold_flat_index(x, from);
}

/* Slice: from the first index, step by step, per axis. */
static int64_t source_slice(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[i] = c->first[i] + idx[i] * c->step[i];
    *in_slot = 0;
    return wl_fold_flat_index(x, from);
}

/* Pad (constant mode): shifted by the padding before; the fill value
 * outside the input. */
static int64_t source_pad(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        from[i] = idx[i] - c->first[i];
        if (from[i] < 0 || from[i] >= x->dims[i])
            return -1;
    }
    *in_slot = 0;
    return wl_fold_flat_index(x, from);
}

/* Concat: walk the inputs along the axis to the one holding idx. */
static int64_t source_concat(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, sizeof from);
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = wl_infer_input(c, s);
        if (from[c->axis] < t->dims[c->axis]) {
            *in_slot = s;
            return wl_fold_flat_index(t, from);
        }
        from[c->axis] -= t->dims[c->axis];
    }
    return -1; /* unreachable: the output's axis is the sum of the inputs' */
}

/* Split: output out_slot starts after the earlier outputs on the axis. */
static int64_t source_split(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, sizeof from);
    for (int o = 0; o < out_slot; o++)
        from[c->axis] += wl_infer_output(c, o)->dims[c->axis];
    *in_slot = 0;
    return wl_fold_flat_index(wl_infer_input(c, 0), from);
}

/* Gather: output dims [axis, axis + indices rank) select an index, which
 * replaces the data's axis; negative indices count from the end. */
static int64_t source_gather(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *data = wl_infer_input(c, 0), *indices = wl_infer_input(c, 1);
    int64_t len = data->dims[c->axis];
    int64_t at = wl_fold_value_i(indices, wl_fold_flat_index(indices, idx + c->axis));
    if (at < 0)
        at += len;
    if (at < 0 || at >= len)
        return -1; /* the shape rule rejects these; be safe anyway */
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, (size_t)c->axis * sizeof *from);
    from[c->axis] = at;
    memcpy(from + c->axis + 1, idx + c->axis + indices->rank,
           (size_t)(data->rank - c->axis - 1) * sizeof *from);
    *in_slot = 0;
    return wl_fold_flat_index(data, from);
}

/* ------------------------------------------------------------ defaults */

static void pad_defaults(wl_attrs *a)
{
    strcpy(a->mode, "constant");
}

static void resize_defaults(wl_attrs *a)
{
    strcpy(a->mode, "nearest");
}

/* Pad folds only in constant mode: reflect and edge copy from inside. */
static bool pad_folds(const wl_op *op)
{
    return op->attrs.mode[0] == '\0' || strcmp(op->attrs.mode, "constant") == 0;
}

/* --------------------------------------------------------------- table */

/* A movement op: n required inputs, shape rule r, folding through
 * source map s. */
#define MOVED(n, r, s) .required_inputs = (n), .infer = (r), .fold = wl_fold_moved, .source = (s)

const wl_op_def wl_ops_movement[WL_OP_COUNT] = {
    /* A tile passes through on every axis but the joined one. */
    [WL_OP_CONCAT] = {MOVED(1, infer_concat, source_concat), .halo = WL_HALO_NOT_AXIS},
    [WL_OP_SPLIT] = {MOVED(1, infer_split, source_split)},
    [WL_OP_SLICE] = {MOVED(3, infer_slice, source_slice)},
    [WL_OP_GATHER] = {MOVED(2, infer_gather, source_gather), .gathers_rows = true},
    [WL_OP_TRANSPOSE] = {MOVED(1, infer_transpose, source_transpose)},
    [WL_OP_EXPAND] = {MOVED(2, infer_expand, source_expand)},
    [WL_OP_TILE] = {MOVED(2, infer_tile, source_tile)},
    [WL_OP_PAD] = {MOVED(2, infer_pad, source_pad), .defaults = pad_defaults,
                   .folds_node = pad_folds},
    [WL_OP_RESIZE] = {.defaults = resize_defaults, .required_inputs = 1, .infer = infer_resize},
    [WL_OP_DEPTH_TO_SPACE] = {.required_inputs = 1, .infer = infer_depth_to_space},
};
