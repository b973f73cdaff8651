/*
 * ops_shape.c -- the op family of views and shape arithmetic: ops that
 * change only the shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 * Dropout) and ops that compute shapes or constants (Shape, Constant,
 * ConstantOfShape, Range).  They move no data of their own; with known
 * inputs they fold.  One table entry per op at the end (see
 * ops_private.h).
 */
#include "ops_private.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------- shape rules */

/*
 * Reshape: the target comes from input 1; 0 copies the input's dim at the
 * same position (allowzero = 0, the default), -1 takes what is left.
 */
static as_code infer_reshape(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *shape;
    int64_t n;
    as_code rc = wl_infer_shape_list(c, 1, true, &shape, &n);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK], known = 1, total = wl_tensor_elements(x);
    int infer_at = -1;
    for (int i = 0; i < n; i++) {
        dims[i] = shape[i];
        if (shape[i] == 0) {
            if (i >= x->rank)
                return wl_infer_fail(c,
                                     "input 'shape' entry %d is 0 but input '%s' has rank "
                                     "%d",
                                     i, x->name, x->rank);
            dims[i] = x->dims[i];
        } else if (shape[i] == -1) {
            if (infer_at >= 0)
                return wl_infer_fail(c, "input 'shape' has more than one -1");
            infer_at = i;
            continue;
        } else if (shape[i] < 0) {
            return wl_infer_fail(c, "input 'shape' entry %d = %lld is invalid", i,
                                 (long long)shape[i]);
        }
        if (!as_mul_i64(known, dims[i], &known))
            return wl_infer_fail(c, "Reshape target overflows 64 bits");
    }
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return wl_infer_fail(c,
                                 "Reshape cannot infer -1: input has %lld elements, the "
                                 "other dims give %lld",
                                 (long long)total, (long long)known);
        dims[infer_at] = total / known;
        known = total;
    }
    if (known != total)
        return wl_infer_fail(c, "Reshape target has %lld elements, input has %lld",
                             (long long)known, (long long)total);
    return wl_infer_set_output(c, 0, x->dtype, (int)n, dims);
}

/* Flatten: [prod(dims before axis), prod(dims from axis)]. */
static as_code infer_flatten(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int axis = 0;
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, true, &axis);
    if (rc != AS_OK)
        return rc;
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->rank; i++)
        if (!as_mul_i64(dims[i >= axis], x->dims[i], &dims[i >= axis]))
            return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                                 wl_infer_output(c, 0)->name);
    return wl_infer_set_output(c, 0, x->dtype, 2, dims);
}

/* Squeeze: drop the given axes, which must be 1, or every 1 when none. */
static as_code infer_squeeze(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    bool is_axis[WL_MAX_RANK];
    int n_axes, rank = 0;
    as_code rc = wl_infer_axes(c, 1, x->rank, is_axis, &n_axes);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        bool squeeze = n_axes ? is_axis[i] : x->dims[i] == 1;
        if (squeeze && x->dims[i] != 1)
            return wl_infer_fail(c, "cannot squeeze axis %d of size %lld", i,
                                 (long long)x->dims[i]);
        if (!squeeze)
            dims[rank++] = x->dims[i];
    }
    return wl_infer_set_output(c, 0, x->dtype, rank, dims);
}

/* Unsqueeze: insert 1s at the given axes of the output. */
static as_code infer_unsqueeze(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t n = IN(c, 1) ? wl_tensor_elements(IN(c, 1)) : c->op->attrs.n_axes;
    if (n < 1 || n > WL_MAX_RANK - x->rank)
        return wl_infer_fail(c, "%lld axes to insert into rank %d (at most %d in all)",
                             (long long)n, x->rank, WL_MAX_RANK);
    int rank = x->rank + (int)n, n_axes;
    bool is_axis[WL_MAX_RANK];
    as_code rc = wl_infer_axes(c, 1, rank, is_axis, &n_axes);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0, from = 0; i < rank; i++)
        dims[i] = is_axis[i] ? 1 : x->dims[from++];
    return wl_infer_set_output(c, 0, x->dtype, rank, dims);
}

/* Shape: the input's dims as an int64 list (its values are folded).  The
 * opset 15 start/end attributes are not modelled: exports use the whole
 * shape. */
static as_code infer_shape(wl_infer_ctx *c)
{
    int64_t rank = IN(c, 0)->rank;
    return wl_infer_set_output(c, 0, WL_DTYPE_I64, 1, &rank);
}

/* Constant: the importer created the output with its shape and values;
 * the op is folded by definition. */
static as_code infer_constant(wl_infer_ctx *c)
{
    wl_tensor *t = wl_infer_output(c, 0);
    if (!t->shape_known)
        return wl_infer_fail(c, "constant '%s' has no shape", t->name);
    if (t->bits == 0)
        t->bits = wl_dtype_bits(t->dtype);
    c->op->folded = true;
    return AS_OK;
}

/* ConstantOfShape: the shape is input 0's values.  The element type is the
 * one the output was declared with (the importer takes it from attribute
 * 'value'), float32 when undeclared. */
static as_code infer_constant_of_shape(wl_infer_ctx *c)
{
    const int64_t *shape;
    int64_t n;
    as_code rc = wl_infer_shape_list(c, 0, false, &shape, &n);
    if (rc != AS_OK)
        return rc;
    wl_dtype dtype = wl_infer_output(c, 0)->dtype;
    c->fill = c->op->attrs.value;
    return wl_infer_set_output(c, 0, dtype != WL_DTYPE_UNDEFINED ? dtype : WL_DTYPE_F32, (int)n,
                               shape);
}

/* Range: max(ceil((limit - start) / delta), 0) elements; the three scalars
 * must be known. */
static as_code infer_range(wl_infer_ctx *c)
{
    const wl_tensor *start = IN(c, 0), *limit = IN(c, 1), *delta = IN(c, 2);
    const wl_tensor *bounds[3] = {start, limit, delta};
    double v[3];
    for (int s = 0; s < 3; s++) {
        const wl_tensor *t = bounds[s];
        if (wl_tensor_elements(t) != 1 || (!t->ivalues && !t->fvalues))
            return wl_infer_fail(c, "input '%s' must be a scalar with a known value", t->name);
        v[s] = t->ivalues ? (double)t->ivalues[0] : t->fvalues[0];
    }
    int64_t len;
    if (start->ivalues && limit->ivalues && delta->ivalues) {
        /* Exact integer count; the unsigned difference cannot overflow. */
        int64_t s = start->ivalues[0], l = limit->ivalues[0], d = delta->ivalues[0];
        if (d == 0)
            return wl_infer_fail(c, "input 'delta' is 0");
        uint64_t distance = d > 0 ? (l > s ? (uint64_t)l - (uint64_t)s : 0)
                                  : (s > l ? (uint64_t)s - (uint64_t)l : 0);
        uint64_t stride = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
        uint64_t count = distance ? (distance - 1) / stride + 1 : 0;
        if (count > INT64_MAX)
            return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                                 wl_infer_output(c, 0)->name);
        len = (int64_t)count;
    } else {
        double count = ceil((v[1] - v[0]) / v[2]);
        if (!(v[2] != 0) || count != count || count >= 9.0e18)
            return wl_infer_fail(c, "inputs 'start', 'limit', 'delta' give no finite element "
                                    "count");
        len = count > 0 ? (int64_t)count : 0;
    }
    return wl_infer_set_output(c, 0, start->dtype, 1, &len);
}

/* ------------------------------------------------------------- folding */

/* Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) keep
 * the row-major order: same flat index.  Dropout's mask is all fill. */
static int64_t source_view(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    *in_slot = 0;
    return out_slot == 0 ? wl_fold_flat_index(wl_infer_output(c, 0), idx) : -1;
}

/* Size: an int64 scalar, the input's element count. */
static as_code infer_size(wl_infer_ctx *c)
{
    int64_t no_dims[1] = {0};
    return wl_infer_set_output(c, 0, WL_DTYPE_I64, 0, no_dims);
}

/* Size's value; like Shape's, needs no input values. */
static as_code fold_size(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    wl_tensor *y = wl_infer_output(c, 0);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    wl_fold_store_i(y, 0, wl_tensor_elements(wl_infer_input(c, 0)));
    return AS_OK;
}

/* Shape: the input's dims; needs no input values. */
static as_code fold_shape(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    const wl_tensor *x = wl_infer_input(c, 0);
    wl_tensor *y = wl_infer_output(c, 0);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    for (int i = 0; i < x->rank; i++)
        wl_fold_store_i(y, i, x->dims[i]);
    return AS_OK;
}

/* ConstantOfShape: every element is the shape rule's fill value. */
static as_code fold_constant_of_shape(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    wl_tensor *y = wl_infer_output(c, 0);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    int64_t n = wl_tensor_elements(y);
    for (int64_t k = 0; k < n; k++)
        wl_fold_store_f(y, k, c->fill);
    return AS_OK;
}

/* Range: start + k * delta, exactly in int64 for integer outputs. */
static as_code fold_range(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    const wl_tensor *start = wl_infer_input(c, 0), *delta = wl_infer_input(c, 2);
    wl_tensor *y = wl_infer_output(c, 0);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    int64_t n = wl_tensor_elements(y);
    for (int64_t k = 0; k < n; k++) {
        if (y->fvalues) {
            wl_fold_store_f(y, k,
                            wl_fold_value_f(start, 0) + (double)k * wl_fold_value_f(delta, 0));
            continue;
        }
        int64_t step, v;
        if (__builtin_mul_overflow(k, wl_fold_value_i(delta, 0), &step) ||
            __builtin_add_overflow(wl_fold_value_i(start, 0), step, &v)) {
            y->ivalues = NULL;
            return AS_OK;
        }
        wl_fold_store_i(y, k, v);
    }
    return AS_OK;
}

static void flatten_defaults(wl_attrs *a)
{
    a->axis = 1;
}

/* --------------------------------------------------------------- table */

/* A view with n required inputs and shape rule r: row-major order kept,
 * so it folds with the same flat index. */
#define VIEW(n, r)                                                                                 \
    .required_inputs = (n), .infer = (r), .fold = wl_fold_moved, .source = source_view

const wl_op_def wl_ops_shape[WL_OP_COUNT] = {
    [WL_OP_RESHAPE] = {VIEW(2, infer_reshape)},
    [WL_OP_FLATTEN] = {VIEW(1, infer_flatten), .defaults = flatten_defaults},
    [WL_OP_SQUEEZE] = {VIEW(1, infer_squeeze)},
    [WL_OP_UNSQUEEZE] = {VIEW(1, infer_unsqueeze)},
    [WL_OP_IDENTITY] = {VIEW(1, wl_infer_same)},
    [WL_OP_DROPOUT] = {VIEW(1, wl_infer_same)},
    [WL_OP_SHAPE] = {.required_inputs = 1,
                     .infer = infer_shape,
                     .fold = fold_shape,
                     .fold_reads_dims_only = true},
    /* Folded by its shape rule: the importer gave the output its values. */
    [WL_OP_CONSTANT] = {.required_inputs = 0, .infer = infer_constant},
    /* 'value' carries the output's element type. */
    [WL_OP_CONSTANT_OF_SHAPE] = {.required_inputs = 1,
                                 .infer = infer_constant_of_shape,
                                 .fold = fold_constant_of_shape,
                                 .export_always = " value "},
    [WL_OP_SIZE] = {.required_inputs = 1,
                    .infer = infer_size,
                    .fold = fold_size,
                    .fold_reads_dims_only = true},
    [WL_OP_RANGE] = {.required_inputs = 3, .infer = infer_range, .fold = fold_range},
};
