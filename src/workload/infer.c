/*
 * infer.c -- shape inference and operand checks for the ONNX ops of
 * WL_OP_LIST, opsets 11..17 (see workload.h); constant folding is in
 * fold.c.
 *
 * Each op kind has one rule: it reads the input shapes and attributes,
 * checks that they agree, and sets the shape and element type of every
 * output.  Rules never trust an attribute: strides, groups, axes, sizes
 * are range-checked before they divide or index anything, and every
 * product of dimensions goes through as_mul_i64.
 *
 * Where ONNX turned an attribute into an input (Split sizes, Squeeze and
 * Unsqueeze axes, ReduceSum axes at opset 13; Pad pads and Clip bounds at
 * 11; ReduceMean axes at 18), the input is used when the node has it and
 * the attribute otherwise: a well-formed node of any opset has exactly
 * one of the two forms, so whichever is present is the one its opset
 * defines.  Inputs that carry parameters (shapes, axes, sizes) must have
 * known values: they are constants or folded shape arithmetic.
 */
#include "infer_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

const char *wl_infer_node_str(const wl_infer_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s: node %d '%s' (%s)", c->g->source, (int)c->op->source_index,
             c->op->name ? c->op->name : "",
             c->op->op_type ? c->op->op_type : wl_op_kind_name(c->op->kind));
    return buf;
}

as_code wl_infer_fail(const wl_infer_ctx *c, const char *fmt, ...)
{
    char who[AS_MSG_BYTES], what[AS_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return as_fail(c->st, AS_EINVAL, "%s: %s", wl_infer_node_str(c, who, sizeof who), what);
}

const wl_tensor *wl_infer_input(const wl_infer_ctx *c, int slot)
{
    if (slot >= c->op->n_inputs || c->op->inputs[slot] < 0)
        return NULL;
    return &c->g->tensors[c->op->inputs[slot]];
}

wl_tensor *wl_infer_output(const wl_infer_ctx *c, int slot)
{
    return &c->g->tensors[c->op->outputs[slot]];
}

/* Shorthand inside this file: rules index inputs all the time. */
#define IN(c, slot) wl_infer_input((c), (slot))

/* "[1,3,224,224]" for rank/dims that need not belong to a tensor (a
 * broadcast in progress, a target shape), so messages can show them. */
static const char *dims_str(int rank, const int64_t *dims, char *buf, size_t size)
{
    wl_tensor t = {.shape_known = true, .rank = rank};
    if (rank > 0)
        memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    return wl_shape_str(&t, buf, size);
}

/* Room for a shape in a message, "[1,3,224,224]" (longer ones are cut). */
enum { SHAPE_STR_BYTES = 96 };

/*
 * Give output `slot` its shape and element type, and forget any values it
 * had (the folder recomputes them).  Fails on a rank over WL_MAX_RANK, a
 * negative dimension or an element count that overflows int64, so that
 * every later product of an output's dims is safe.  Slots past the op's
 * outputs are optional outputs the node omitted: nothing to do.
 *
 * The storage precision (bits) follows the element type unless a
 * transform chose another one: bits still at 0 or at the default of the
 * previous type are replaced, anything else is kept.
 */
static as_code set_output(wl_infer_ctx *c, int slot, wl_dtype dtype, int rank, const int64_t *dims)
{
    if (slot >= c->op->n_outputs)
        return AS_OK;
    wl_tensor *t = wl_infer_output(c, slot);
    if (rank > WL_MAX_RANK)
        return wl_infer_fail(c, "output '%s' would have rank %d; at most %d is supported", t->name,
                             rank, WL_MAX_RANK);
    int64_t elements = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return wl_infer_fail(c, "output '%s' would have negative dimension %d (%lld)", t->name,
                                 i, (long long)dims[i]);
        if (!as_mul_i64(elements, dims[i], &elements))
            return wl_infer_fail(c, "element count of output '%s' overflows 64 bits", t->name);
    }
    if (t->bits == 0 || t->bits == wl_dtype_bits(t->dtype))
        t->bits = wl_dtype_bits(dtype);
    t->dtype = dtype;
    t->rank = rank;
    if (rank > 0)
        memmove(t->dims, dims, (size_t)rank * sizeof *dims);
    t->shape_known = true;
    t->ivalues = NULL;
    t->fvalues = NULL;
    return AS_OK;
}

/* Output `slot` gets the shape of tensor `like` and element type dtype. */
static as_code set_output_like(wl_infer_ctx *c, int slot, const wl_tensor *like, wl_dtype dtype)
{
    return set_output(c, slot, dtype, like->rank, like->dims);
}

/* Normalise an axis in [-rank, rank - 1] (or [-rank, rank] when
 * one_past is set: Flatten's axis may equal the rank).  `key` names the
 * attribute or input for the message. */
static as_code normalize_axis(const wl_infer_ctx *c, const char *key, int64_t axis, int rank,
                              bool one_past, int *out)
{
    int64_t hi = one_past ? rank : rank - 1;
    if (axis < -(int64_t)rank || axis > hi)
        return wl_infer_fail(c, "%s = %lld out of range for rank %d", key, (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return AS_OK;
}

/*
 * Numpy (multidirectional) broadcasting of shape a with shape b: dims are
 * aligned at the right, a dim of 1 stretches to the other.  out may alias
 * a or b.  `operand` is the input whose shape the message names.
 */
static as_code broadcast(const wl_infer_ctx *c, const wl_tensor *operand, int rank_a,
                         const int64_t *a, int rank_b, const int64_t *b, int *rank_out,
                         int64_t *out)
{
    int rank = rank_a > rank_b ? rank_a : rank_b;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        int64_t x = i < rank - rank_a ? 1 : a[i - (rank - rank_a)];
        int64_t y = i < rank - rank_b ? 1 : b[i - (rank - rank_b)];
        if (x != y && x != 1 && y != 1) {
            char sa[SHAPE_STR_BYTES], sb[SHAPE_STR_BYTES];
            return wl_infer_fail(c, "cannot broadcast %s with %s (input '%s')",
                                 dims_str(rank_a, a, sa, sizeof sa),
                                 dims_str(rank_b, b, sb, sizeof sb), operand->name);
        }
        dims[i] = x == 1 ? y : x;
    }
    memcpy(out, dims, (size_t)rank * sizeof *dims);
    *rank_out = rank;
    return AS_OK;
}

/* Unidirectional broadcasting (Gemm's C, PRelu's slope, LayerNorm's
 * scale): t must stretch to rank/dims without changing them. */
static as_code check_broadcasts_to(const wl_infer_ctx *c, const wl_tensor *t, int rank,
                                   const int64_t *dims)
{
    int r;
    int64_t d[WL_MAX_RANK];
    as_code rc = broadcast(c, t, t->rank, t->dims, rank, dims, &r, d);
    if (rc != AS_OK)
        return rc;
    if (r != rank || memcmp(d, dims, (size_t)rank * sizeof *dims) != 0) {
        char st[SHAPE_STR_BYTES], sd[SHAPE_STR_BYTES];
        return wl_infer_fail(c, "input '%s' %s does not broadcast to %s", t->name,
                             wl_shape_str(t, st, sizeof st), dims_str(rank, dims, sd, sizeof sd));
    }
    return AS_OK;
}

/* The known integer values of input `slot` (a shape, axes, sizes, pads),
 * which the caller has checked is present.  `role` names the input for
 * the message ("shape", "axes"). */
static as_code int_values(const wl_infer_ctx *c, int slot, const char *role, const int64_t **values,
                          int64_t *count)
{
    const wl_tensor *t = IN(c, slot);
    int64_t n = wl_tensor_elements(t);
    *values = NULL;
    *count = 0;
    if (n > 0 && !t->ivalues)
        return wl_infer_fail(c,
                             "%s input '%s' has no known integer values (it must be a "
                             "constant or computed from shapes)",
                             role, t->name);
    if (t->rank > 1)
        return wl_infer_fail(c, "%s input '%s' has rank %d; expected a list (rank 1)", role,
                             t->name, t->rank);
    *values = t->ivalues;
    *count = n;
    return AS_OK;
}

/* A target shape given as input `slot`: a known list of at most
 * WL_MAX_RANK entries, none negative unless Reshape's 0 / -1 conventions
 * (allow_special) apply. */
static as_code shape_values(const wl_infer_ctx *c, int slot, bool allow_special,
                            const int64_t **shape, int64_t *n)
{
    as_code rc = int_values(c, slot, "shape", shape, n);
    if (rc != AS_OK)
        return rc;
    if (*n > WL_MAX_RANK)
        return wl_infer_fail(c, "input 'shape' has %lld entries; at most %d is supported",
                             (long long)*n, WL_MAX_RANK);
    for (int64_t i = 0; i < *n && !allow_special; i++)
        if ((*shape)[i] < 0)
            return wl_infer_fail(c, "input 'shape' has negative entry %lld",
                                 (long long)(*shape)[i]);
    return AS_OK;
}

/* A required parameter input: present with a known list of values. */
static as_code required_ints(const wl_infer_ctx *c, int slot, const char *role,
                             const int64_t **values, int64_t *count)
{
    if (!IN(c, slot))
        return wl_infer_fail(c, "missing required input %d (%s)", slot, role);
    return int_values(c, slot, role, values, count);
}

/*
 * The axes an op works on: input `slot` when the node has it (the opset
 * 13+ form), else the attribute list.  Each axis is normalised against
 * `rank` (for Unsqueeze, the output rank) and may appear once; is_axis[]
 * flags them.  *n_axes is 0 when the node gives none.
 */
static as_code read_axes(const wl_infer_ctx *c, int slot, int rank, bool is_axis[WL_MAX_RANK],
                         int *n_axes)
{
    const int64_t *axes = c->op->attrs.axes;
    int64_t n = c->op->attrs.n_axes;
    const char *key = "attribute 'axes'";
    if (IN(c, slot)) {
        as_code rc = int_values(c, slot, "axes", &axes, &n);
        if (rc != AS_OK)
            return rc;
        key = "input 'axes'";
    }
    if (n < 0 || n > rank)
        return wl_infer_fail(c, "%s has %lld entries for rank %d", key, (long long)n, rank);
    memset(is_axis, 0, WL_MAX_RANK * sizeof *is_axis);
    for (int64_t i = 0; i < n; i++) {
        int axis = 0;
        as_code rc = normalize_axis(c, key, axes[i], rank, false, &axis);
        if (rc != AS_OK)
            return rc;
        if (is_axis[axis])
            return wl_infer_fail(c, "%s repeats axis %lld", key, (long long)axes[i]);
        is_axis[axis] = true;
    }
    *n_axes = (int)n;
    return AS_OK;
}

/* ceil(a / b) for a >= 0, b > 0, without overflow. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* ------------------------------------------------- elementwise and views */

/* Element type of the output of an elementwise or view op: comparisons
 * and Not give bool, Cast its 'to', Where its value inputs' type, the
 * rest their first input's. */
static wl_dtype elementwise_dtype(const wl_infer_ctx *c)
{
    switch (c->op->kind) {
    case WL_OP_EQUAL:
    case WL_OP_LESS:
    case WL_OP_GREATER:
    case WL_OP_NOT:
        return WL_DTYPE_BOOL;
    case WL_OP_CAST:
        return c->op->attrs.to;
    case WL_OP_WHERE:
        return IN(c, 1)->dtype;
    default:
        return IN(c, 0)->dtype;
    }
}

/*
 * Unary and binary elementwise ops (Relu ... Where): the output has the
 * broadcast shape of all data inputs.  Clip's bounds are scalars and take
 * no part; PRelu's slope broadcasts one way, onto the input's shape.
 */
static as_code infer_elementwise(wl_infer_ctx *c)
{
    wl_op_kind kind = c->op->kind;
    if (kind == WL_OP_CAST && !wl_dtype_valid((int)c->op->attrs.to))
        return wl_infer_fail(c, "attribute 'to' = %d is not a known element type",
                             (int)c->op->attrs.to);
    int rank = 0;
    int64_t dims[WL_MAX_RANK];
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = IN(c, s);
        if (!t)
            continue;
        as_code rc;
        if (kind == WL_OP_CLIP && s > 0) {
            if (wl_tensor_elements(t) != 1)
                return wl_infer_fail(c, "bound '%s' must be a scalar", t->name);
            continue;
        }
        if (kind == WL_OP_PRELU && s > 0)
            rc = check_broadcasts_to(c, t, rank, dims);
        else
            rc = broadcast(c, t, rank, dims, t->rank, t->dims, &rank, dims);
        if (rc != AS_OK)
            return rc;
    }
    return set_output(c, 0, elementwise_dtype(c), rank, dims);
}

/* Ops whose output 0 is their input 0, shape and type: Softmax,
 * Identity, Dropout (inference: identity; its optional mask output has the
 * same shape in bool). */
static as_code infer_same(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (c->op->kind == WL_OP_SOFTMAX) {
        int axis = 0;
        as_code rc =
            normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &axis);
        if (rc != AS_OK)
            return rc;
    }
    c->fill = 1.0; /* Dropout's mask: every element kept */
    as_code rc = set_output_like(c, 0, x, x->dtype);
    if (rc == AS_OK)
        rc = set_output_like(c, 1, x, WL_DTYPE_BOOL);
    return rc;
}

/* -------------------------------------------------- windows: conv, pool */

/* Sliding-window geometry of Conv, ConvTranspose, MaxPool, AveragePool,
 * per spatial axis; pads in ONNX order (all begins, then all ends). */
typedef struct window {
    int n_spatial;
    int64_t kernel[WL_MAX_SPATIAL];
    int64_t extent[WL_MAX_SPATIAL]; /* dilated kernel: dilation * (kernel - 1) + 1 */
    int64_t stride[WL_MAX_SPATIAL];
    int64_t pad_begin[WL_MAX_SPATIAL], pad_end[WL_MAX_SPATIAL];
} window;

/*
 * Resolve and check the window of an op over input x.  The kernel comes
 * from attribute kernel_shape, else from the weight's trailing dims
 * (weight_kernel, NULL for pools, which must have the attribute); when
 * both exist they must agree.  auto_pad VALID means no padding; SAME_*
 * is resolved per op by the caller, which knows its output size.
 */
static as_code read_window(const wl_infer_ctx *c, const wl_tensor *x, const int64_t *weight_kernel,
                           window *w)
{
    const wl_attrs *a = &c->op->attrs;
    char sx[SHAPE_STR_BYTES];
    int n = x->rank - 2;
    if (n < 1 || n > WL_MAX_SPATIAL)
        return wl_infer_fail(c, "input '%s' %s has %d spatial dimensions; 1 to %d are supported",
                             x->name, wl_shape_str(x, sx, sizeof sx), n < 0 ? 0 : n,
                             WL_MAX_SPATIAL);
    if (a->n_spatial != 0 && a->n_spatial != n)
        return wl_infer_fail(c, "attributes give %d spatial dimensions but input '%s' has %d",
                             a->n_spatial, x->name, n);
    w->n_spatial = n;
    for (int i = 0; i < n; i++) {
        int64_t k = a->kernel_shape[i] ? a->kernel_shape[i] : weight_kernel ? weight_kernel[i] : 0;
        if (k < 1)
            return wl_infer_fail(c, "attribute 'kernel_shape'[%d] = %lld must be positive", i,
                                 (long long)k);
        if (weight_kernel && weight_kernel[i] != k)
            return wl_infer_fail(c,
                                 "attribute 'kernel_shape'[%d] = %lld but the weight's "
                                 "kernel is %lld",
                                 i, (long long)k, (long long)weight_kernel[i]);
        if (a->strides[i] < 1)
            return wl_infer_fail(c, "attribute 'strides'[%d] = %lld must be positive", i,
                                 (long long)a->strides[i]);
        if (a->dilations[i] < 1)
            return wl_infer_fail(c, "attribute 'dilations'[%d] = %lld must be positive", i,
                                 (long long)a->dilations[i]);
        bool valid = a->auto_pad == WL_AUTO_PAD_VALID;
        w->pad_begin[i] = valid ? 0 : a->pads[i];
        w->pad_end[i] = valid ? 0 : a->pads[n + i];
        if (w->pad_begin[i] < 0 || w->pad_end[i] < 0)
            return wl_infer_fail(c,
                                 "attribute 'pads' on spatial axis %d (%lld, %lld) must not "
                                 "be negative",
                                 i, (long long)w->pad_begin[i], (long long)w->pad_end[i]);
        w->kernel[i] = k;
        w->stride[i] = a->strides[i];
        if (!as_mul_i64(a->dilations[i], k - 1, &w->extent[i]) ||
            !as_add_i64(w->extent[i], 1, &w->extent[i]))
            return wl_infer_fail(c, "dilated kernel on spatial axis %d overflows 64 bits", i);
    }
    return AS_OK;
}

/* auto_pad SAME_UPPER or SAME_LOWER: the output size follows the stride
 * alone, the padding adapts. */
static bool pads_same(const wl_attrs *a)
{
    return a->auto_pad == WL_AUTO_PAD_SAME_UPPER || a->auto_pad == WL_AUTO_PAD_SAME_LOWER;
}

/*
 * Output length on spatial axis i of a window sliding over in_len
 * elements (Conv and the pools).  SAME_* pads so that the output is
 * ceil(in / stride).  Otherwise (padded - extent) / stride + 1, rounded
 * down, or up with ceil_mode -- where, as in torch and ONNX's reference,
 * a last window that would start inside the end padding is dropped.
 */
static as_code window_out_len(const wl_infer_ctx *c, const window *w, int i, int64_t in_len,
                              bool ceil_mode, int64_t *out_len)
{
    if (pads_same(&c->op->attrs)) {
        *out_len = ceil_div(in_len, w->stride[i]);
        return AS_OK;
    }
    int64_t padded;
    if (!as_add_i64(in_len, w->pad_begin[i], &padded) ||
        !as_add_i64(padded, w->pad_end[i], &padded))
        return wl_infer_fail(c, "padded input on spatial axis %d overflows 64 bits", i);
    if (padded < w->extent[i])
        return wl_infer_fail(c,
                             "kernel extent %lld exceeds padded input size %lld on spatial "
                             "axis %d",
                             (long long)w->extent[i], (long long)padded, i);
    int64_t span = padded - w->extent[i];
    int64_t last_start = span / w->stride[i]; /* in strides */
    if (ceil_mode && span % w->stride[i] != 0) {
        last_start++;
        if (last_start >= ceil_div(in_len + w->pad_begin[i], w->stride[i]))
            last_start--;
    }
    *out_len = last_start + 1;
    return AS_OK;
}

/* Output [N, channels, spatial...] of a window op over x. */
static as_code set_window_output(wl_infer_ctx *c, const wl_tensor *x, const window *w,
                                 int64_t channels, bool ceil_mode)
{
    int64_t dims[WL_MAX_RANK] = {x->dims[0], channels};
    for (int i = 0; i < w->n_spatial; i++) {
        as_code rc = window_out_len(c, w, i, x->dims[2 + i], ceil_mode, &dims[2 + i]);
        if (rc != AS_OK)
            return rc;
    }
    as_code rc = set_output(c, 0, x->dtype, x->rank, dims);
    /* MaxPool's optional Indices output. */
    if (rc == AS_OK && c->op->kind == WL_OP_MAX_POOL)
        rc = set_output(c, 1, WL_DTYPE_I64, x->rank, dims);
    return rc;
}

/*
 * What Conv and ConvTranspose check alike: the weight w has the input x's
 * rank, attribute group (returned) is positive, and the window's kernel
 * is the weight's trailing dims.
 */
static as_code read_conv(const wl_infer_ctx *c, const wl_tensor *x, const wl_tensor *w,
                         int64_t *group, window *win)
{
    *group = c->op->attrs.group;
    if (w->rank != x->rank)
        return wl_infer_fail(c, "weight '%s' has rank %d but input '%s' has rank %d", w->name,
                             w->rank, x->name, x->rank);
    if (*group < 1)
        return wl_infer_fail(c, "attribute 'group' = %lld must be positive", (long long)*group);
    return read_window(c, x, w->dims + 2, win);
}

/* An optional bias (input 2) must be a list of `channels` values. */
static as_code check_bias(const wl_infer_ctx *c, int64_t channels)
{
    const wl_tensor *b = IN(c, 2);
    if (b && (b->rank != 1 || b->dims[0] != channels)) {
        char sb[SHAPE_STR_BYTES];
        return wl_infer_fail(c, "bias '%s' has shape %s; expected [%lld]", b->name,
                             wl_shape_str(b, sb, sizeof sb), (long long)channels);
    }
    return AS_OK;
}

/* Conv: X [N, C, spatial...], W [M, C / group, kernel...], B [M]. */
static as_code infer_conv(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *w = IN(c, 1);
    int64_t group, expected;
    window win;
    as_code rc = read_conv(c, x, w, &group, &win);
    if (rc != AS_OK)
        return rc;
    if (!as_mul_i64(w->dims[1], group, &expected) || expected != x->dims[1])
        return wl_infer_fail(c,
                             "input '%s' has %lld channels but weight '%s' expects %lld x "
                             "group %lld",
                             x->name, (long long)x->dims[1], w->name, (long long)w->dims[1],
                             (long long)group);
    if (w->dims[0] % group != 0)
        return wl_infer_fail(c,
                             "group %lld does not divide the %lld output channels of weight "
                             "'%s'",
                             (long long)group, (long long)w->dims[0], w->name);
    rc = check_bias(c, w->dims[0]);
    if (rc == AS_OK)
        rc = set_window_output(c, x, &win, w->dims[0], false);
    return rc;
}

/*
 * ConvTranspose: X [N, C, spatial...], W [C, M / group, kernel...], B [M].
 * Output length per axis: attribute output_shape when given, else
 * stride * (in - 1) + output_padding + extent - pads, with SAME_* giving
 * in * stride as ONNX specifies.
 */
static as_code infer_conv_transpose(wl_infer_ctx *c)
{
    const wl_attrs *a = &c->op->attrs;
    const wl_tensor *x = IN(c, 0), *w = IN(c, 1);
    int64_t group, m;
    window win;
    as_code rc = read_conv(c, x, w, &group, &win);
    if (rc != AS_OK)
        return rc;
    if (w->dims[0] != x->dims[1])
        return wl_infer_fail(c, "input '%s' has %lld channels but weight '%s' expects %lld",
                             x->name, (long long)x->dims[1], w->name, (long long)w->dims[0]);
    if (x->dims[1] % group != 0)
        return wl_infer_fail(c, "group %lld does not divide the %lld input channels of '%s'",
                             (long long)group, (long long)x->dims[1], x->name);
    if (!as_mul_i64(w->dims[1], group, &m))
        return wl_infer_fail(c, "output channels of weight '%s' overflow 64 bits", w->name);
    rc = check_bias(c, m);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK] = {x->dims[0], m};
    for (int i = 0; i < win.n_spatial; i++) {
        int64_t in_len = x->dims[2 + i], op_pad = a->output_padding[i], len;
        if (op_pad < 0 || (op_pad >= win.stride[i] && op_pad >= a->dilations[i]))
            return wl_infer_fail(c,
                                 "attribute 'output_padding'[%d] = %lld must be in [0, "
                                 "max(stride, dilation))",
                                 i, (long long)op_pad);
        if (a->output_shape[i] > 0) {
            len = a->output_shape[i];
        } else if (pads_same(a)) {
            if (!as_mul_i64(in_len, win.stride[i], &len))
                return wl_infer_fail(c, "output size on spatial axis %d overflows 64 bits", i);
        } else {
            int64_t grown;
            if (in_len < 1)
                return wl_infer_fail(c, "input '%s' is empty on spatial axis %d", x->name, i);
            if (!as_mul_i64(win.stride[i], in_len - 1, &grown) ||
                !as_add_i64(grown, op_pad, &grown) || !as_add_i64(grown, win.extent[i], &grown))
                return wl_infer_fail(c, "output size on spatial axis %d overflows 64 bits", i);
            len = grown - win.pad_begin[i] - win.pad_end[i];
            if (len < 1)
                return wl_infer_fail(c, "pads (%lld, %lld) leave no output on spatial axis %d",
                                     (long long)win.pad_begin[i], (long long)win.pad_end[i], i);
        }
        dims[2 + i] = len;
    }
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* MaxPool, AveragePool: kernel_shape from the attribute, channels kept. */
static as_code infer_pool(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    window win;
    as_code rc = read_window(c, x, NULL, &win);
    if (rc == AS_OK)
        rc = set_window_output(c, x, &win, x->dims[1], c->op->attrs.ceil_mode != 0);
    return rc;
}

/* GlobalAveragePool, GlobalMaxPool: [N, C, 1, ...]. */
static as_code infer_global_pool(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 2)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, ...]", x->name, x->rank);
    int64_t dims[WL_MAX_RANK] = {x->dims[0], x->dims[1], 1, 1, 1, 1, 1, 1};
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* ------------------------------------------------------ gemm and matmul */

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
        char sa[SHAPE_STR_BYTES], sb[SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s (transA %d) has K = %lld, "
                             "'%s' %s (transB %d) has K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), at->trans_a, (long long)ka,
                             b->name, wl_shape_str(b, sb, sizeof sb), at->trans_b, (long long)kb);
    }
    int64_t dims[2] = {m, n};
    if (bias) {
        as_code rc = check_broadcasts_to(c, bias, 2, dims);
        if (rc != AS_OK)
            return rc;
    }
    return set_output(c, 0, a->dtype, 2, dims);
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
        char sa[SHAPE_STR_BYTES], sb[SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s has K = %lld, '%s' %s has "
                             "K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), (long long)ka, b->name,
                             wl_shape_str(b, sb, sizeof sb), (long long)kb);
    }
    int batch_a = a->rank > 2 ? a->rank - 2 : 0, batch_b = b->rank > 2 ? b->rank - 2 : 0;
    int rank;
    int64_t dims[WL_MAX_RANK + 2];
    as_code rc = broadcast(c, b, batch_a, a->dims, batch_b, b->dims, &rank, dims);
    if (rc != AS_OK)
        return rc;
    if (a->rank > 1)
        dims[rank++] = a->dims[a->rank - 2];
    if (b->rank > 1)
        dims[rank++] = b->dims[b->rank - 1];
    return set_output(c, 0, a->dtype, rank, dims);
}

/* -------------------------------------------------------- normalisation */

/* BatchNormalization (inference): X [N, C, ...]; scale, B, mean, var [C].
 * Training-mode outputs running_mean and running_var, if present, are [C]. */
static as_code infer_batchnorm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 2)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, ...]", x->name, x->rank);
    int64_t channels = x->dims[1];
    for (int s = 1; s <= 4; s++) {
        const wl_tensor *p = IN(c, s);
        if (p->rank != 1 || p->dims[0] != channels)
            return wl_infer_fail(c,
                                 "input '%s' has %lld elements but input '%s' has %lld "
                                 "channels",
                                 p->name, (long long)wl_tensor_elements(p), x->name,
                                 (long long)channels);
    }
    as_code rc = set_output_like(c, 0, x, x->dtype);
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = set_output(c, s, x->dtype, 1, &channels);
    return rc;
}

/* LayerNormalization: normalises over dims [axis, rank); scale and B
 * broadcast onto them.  Optional outputs Mean and InvStdDev keep the
 * leading dims and have 1 on the normalised ones, in float32 (the
 * default stash_type). */
static as_code infer_layernorm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int axis = 0;
    as_code rc = normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &axis);
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        if (IN(c, s))
            rc = check_broadcasts_to(c, IN(c, s), x->rank - axis, x->dims + axis);
    if (rc == AS_OK)
        rc = set_output_like(c, 0, x, x->dtype);
    int64_t stat_dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        stat_dims[i] = i < axis ? x->dims[i] : 1;
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = set_output(c, s, WL_DTYPE_F32, x->rank, stat_dims);
    return rc;
}

/* ReduceMean, ReduceSum: the reduced axes become 1 (keepdims) or go.
 * No axes means all of them, unless noop_with_empty_axes (ReduceSum 13+)
 * makes the op an identity. */
static as_code infer_reduce(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    bool is_axis[WL_MAX_RANK];
    int n_axes;
    as_code rc = read_axes(c, 1, x->rank, is_axis, &n_axes);
    if (rc != AS_OK)
        return rc;
    if (n_axes == 0 && c->op->attrs.noop_with_empty_axes)
        return set_output_like(c, 0, x, x->dtype);
    int rank = 0;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (n_axes > 0 && !is_axis[i])
            dims[rank++] = x->dims[i];
        else if (c->op->attrs.keepdims)
            dims[rank++] = 1;
    }
    return set_output(c, 0, x->dtype, rank, dims);
}

/* ------------------------------------------------------------- movement */

/* Concat: equal ranks, equal dims off the axis, the axis dims add up. */
static as_code infer_concat(wl_infer_ctx *c)
{
    const wl_tensor *first = IN(c, 0);
    as_code rc =
        normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, first->rank, false, &c->axis);
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
            char sa[SHAPE_STR_BYTES], sb[SHAPE_STR_BYTES];
            return wl_infer_fail(c, "input '%s' %s does not match input '%s' %s outside axis %d",
                                 t->name, wl_shape_str(t, sa, sizeof sa), first->name,
                                 wl_shape_str(first, sb, sizeof sb), c->axis);
        }
        if (!as_add_i64(dims[c->axis], t->dims[c->axis], &dims[c->axis]))
            return wl_infer_fail(c, "concatenated axis %d overflows 64 bits", c->axis);
    }
    return set_output(c, 0, first->dtype, first->rank, dims);
}

/* Split: sizes from input 'split' (opset 13+) or the attribute, else equal
 * parts, one per output; they must add up to the axis. */
static as_code infer_split(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int n_out = c->op->n_outputs;
    as_code rc = normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &c->axis);
    if (rc != AS_OK)
        return rc;
    int64_t axis_len = x->dims[c->axis];
    const int64_t *sizes = c->op->attrs.split;
    int64_t n_sizes = c->op->attrs.n_split;
    const char *key = "attribute 'split'";
    if (IN(c, 1)) {
        rc = int_values(c, 1, "split", &sizes, &n_sizes);
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
        rc = set_output(c, o, x->dtype, x->rank, dims);
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
    as_code rc = required_ints(c, 1, "starts", &starts, &n);
    if (rc == AS_OK)
        rc = required_ints(c, 2, "ends", &ends, &n_ends);
    if (rc == AS_OK && IN(c, 3))
        rc = int_values(c, 3, "axes", &axes, &n_axes);
    if (rc == AS_OK && IN(c, 4))
        rc = int_values(c, 4, "steps", &steps, &n_steps);
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
        rc = normalize_axis(c, "input 'axes'", axes ? axes[i] : i, x->rank, false, &axis);
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
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* Gather: data[:axis] + indices.shape + data[axis+1:]; known indices are
 * checked against the axis (negative ones count from the end). */
static as_code infer_gather(wl_infer_ctx *c)
{
    const wl_tensor *data = IN(c, 0), *idx = IN(c, 1);
    as_code rc =
        normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, data->rank, false, &c->axis);
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
    return set_output(c, 0, data->dtype, rank, dims);
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
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* Expand: broadcast the input with the shape given as input 1 (both ways,
 * as numpy: a 1 in the target keeps the input's dim). */
static as_code infer_expand(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *shape;
    int64_t n;
    as_code rc = shape_values(c, 1, false, &shape, &n);
    if (rc != AS_OK)
        return rc;
    int rank;
    int64_t dims[WL_MAX_RANK];
    rc = broadcast(c, IN(c, 1), x->rank, x->dims, (int)n, shape, &rank, dims);
    if (rc == AS_OK)
        rc = set_output(c, 0, x->dtype, rank, dims);
    return rc;
}

/* Tile: each dim times its repeat count. */
static as_code infer_tile(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *repeats;
    int64_t n;
    as_code rc = int_values(c, 1, "repeats", &repeats, &n);
    if (rc != AS_OK)
        return rc;
    if (n != x->rank)
        return wl_infer_fail(c, "input 'repeats' has %lld entries for rank %d", (long long)n,
                             x->rank);
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        if (repeats[i] < 0 || !as_mul_i64(x->dims[i], repeats[i], &dims[i]))
            return wl_infer_fail(c, "input 'repeats' entry %d = %lld is negative or overflows", i,
                                 (long long)repeats[i]);
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* Pad (opset 11+): pads input [begins..., ends...] may be negative (crop);
 * optional constant_value input 2. */
static as_code infer_pad(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *value = IN(c, 2);
    const int64_t *pads;
    int64_t n;
    as_code rc = int_values(c, 1, "pads", &pads, &n);
    if (rc != AS_OK)
        return rc;
    if (n != 2 * (int64_t)x->rank)
        return wl_infer_fail(c, "input 'pads' has %lld entries for rank %d", (long long)n, x->rank);
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
    return set_output(c, 0, x->dtype, x->rank, dims);
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
        int64_t n;
        as_code rc = int_values(c, 3, "sizes", &v, &n);
        if (rc != AS_OK)
            return rc;
        if (n != x->rank)
            return wl_infer_fail(c, "input 'sizes' has %lld entries for rank %d", (long long)n,
                                 x->rank);
        return set_output(c, 0, x->dtype, x->rank, v);
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
    return set_output(c, 0, x->dtype, x->rank, dims);
}

/* DepthToSpace: [N, C, H, W] -> [N, C / b^2, H * b, W * b]. */
static as_code infer_depth_to_space(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t b = c->op->attrs.blocksize, b2;
    if (x->rank != 4)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, H, W]", x->name, x->rank);
    if (b < 1 || !as_mul_i64(b, b, &b2))
        return wl_infer_fail(c, "attribute 'blocksize' = %lld is invalid", (long long)b);
    if (x->dims[1] % b2 != 0)
        return wl_infer_fail(c,
                             "input '%s' has %lld channels, not a multiple of blocksize^2 = "
                             "%lld",
                             x->name, (long long)x->dims[1], (long long)b2);
    int64_t dims[4] = {x->dims[0], x->dims[1] / b2};
    if (!as_mul_i64(x->dims[2], b, &dims[2]) || !as_mul_i64(x->dims[3], b, &dims[3]))
        return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                             wl_infer_output(c, 0)->name);
    return set_output(c, 0, x->dtype, 4, dims);
}

/* ---------------------------------------------------------------- views */

/*
 * Reshape: the target comes from input 1; 0 copies the input's dim at the
 * same position (allowzero = 0, the default), -1 takes what is left.
 */
static as_code infer_reshape(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const int64_t *shape;
    int64_t n;
    as_code rc = shape_values(c, 1, true, &shape, &n);
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
    return set_output(c, 0, x->dtype, (int)n, dims);
}

/* Flatten: [prod(dims before axis), prod(dims from axis)]. */
static as_code infer_flatten(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int axis = 0;
    as_code rc = normalize_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, true, &axis);
    if (rc != AS_OK)
        return rc;
    int64_t dims[2] = {1, 1};
    for (int i = 0; i < x->rank; i++)
        if (!as_mul_i64(dims[i >= axis], x->dims[i], &dims[i >= axis]))
            return wl_infer_fail(c, "element count of output '%s' overflows 64 bits",
                                 wl_infer_output(c, 0)->name);
    return set_output(c, 0, x->dtype, 2, dims);
}

/* Squeeze: drop the given axes, which must be 1, or every 1 when none. */
static as_code infer_squeeze(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    bool is_axis[WL_MAX_RANK];
    int n_axes, rank = 0;
    as_code rc = read_axes(c, 1, x->rank, is_axis, &n_axes);
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
    return set_output(c, 0, x->dtype, rank, dims);
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
    as_code rc = read_axes(c, 1, rank, is_axis, &n_axes);
    if (rc != AS_OK)
        return rc;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0, from = 0; i < rank; i++)
        dims[i] = is_axis[i] ? 1 : x->dims[from++];
    return set_output(c, 0, x->dtype, rank, dims);
}

/* --------------------------------------------------------- shape, const */

/* Shape: the input's dims as an int64 list (its values are folded).  The
 * opset 15 start/end attributes are not modelled: exports use the whole
 * shape. */
static as_code infer_shape(wl_infer_ctx *c)
{
    int64_t rank = IN(c, 0)->rank;
    return set_output(c, 0, WL_DTYPE_I64, 1, &rank);
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
    as_code rc = shape_values(c, 0, false, &shape, &n);
    if (rc != AS_OK)
        return rc;
    wl_dtype dtype = wl_infer_output(c, 0)->dtype;
    c->fill = c->op->attrs.value;
    return set_output(c, 0, dtype != WL_DTYPE_UNDEFINED ? dtype : WL_DTYPE_F32, (int)n, shape);
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
    return set_output(c, 0, start->dtype, 1, &len);
}

/* ---------------------------------------------------------- dispatching */

typedef as_code (*infer_rule)(wl_infer_ctx *c);

/* Rule and number of leading inputs that must be present, per op kind.
 * Min and Max are variadic (one input or more). */
static const struct {
    infer_rule rule;
    int required_inputs;
} rules[WL_OP_COUNT] = {
    [WL_OP_CONV] = {infer_conv, 2},
    [WL_OP_CONV_TRANSPOSE] = {infer_conv_transpose, 2},
    [WL_OP_GEMM] = {infer_gemm, 2},
    [WL_OP_MATMUL] = {infer_matmul, 2},
    [WL_OP_BATCHNORM] = {infer_batchnorm, 5},
    [WL_OP_LAYERNORM] = {infer_layernorm, 2},
    [WL_OP_SOFTMAX] = {infer_same, 1},
    [WL_OP_RELU] = {infer_elementwise, 1},
    [WL_OP_LEAKY_RELU] = {infer_elementwise, 1},
    [WL_OP_CLIP] = {infer_elementwise, 1},
    [WL_OP_SIGMOID] = {infer_elementwise, 1},
    [WL_OP_HARD_SIGMOID] = {infer_elementwise, 1},
    [WL_OP_HARD_SWISH] = {infer_elementwise, 1},
    [WL_OP_TANH] = {infer_elementwise, 1},
    [WL_OP_ERF] = {infer_elementwise, 1},
    [WL_OP_SQRT] = {infer_elementwise, 1},
    [WL_OP_RECIPROCAL] = {infer_elementwise, 1},
    [WL_OP_EXP] = {infer_elementwise, 1},
    [WL_OP_LOG] = {infer_elementwise, 1},
    [WL_OP_NEG] = {infer_elementwise, 1},
    [WL_OP_ABS] = {infer_elementwise, 1},
    [WL_OP_NOT] = {infer_elementwise, 1},
    [WL_OP_CAST] = {infer_elementwise, 1},
    [WL_OP_ADD] = {infer_elementwise, 2},
    [WL_OP_SUB] = {infer_elementwise, 2},
    [WL_OP_MUL] = {infer_elementwise, 2},
    [WL_OP_DIV] = {infer_elementwise, 2},
    [WL_OP_POW] = {infer_elementwise, 2},
    [WL_OP_EQUAL] = {infer_elementwise, 2},
    [WL_OP_LESS] = {infer_elementwise, 2},
    [WL_OP_GREATER] = {infer_elementwise, 2},
    [WL_OP_MIN] = {infer_elementwise, 1},
    [WL_OP_MAX] = {infer_elementwise, 1},
    [WL_OP_PRELU] = {infer_elementwise, 2},
    [WL_OP_WHERE] = {infer_elementwise, 3},
    [WL_OP_REDUCE_MEAN] = {infer_reduce, 1},
    [WL_OP_REDUCE_SUM] = {infer_reduce, 1},
    [WL_OP_MAX_POOL] = {infer_pool, 1},
    [WL_OP_AVERAGE_POOL] = {infer_pool, 1},
    [WL_OP_GLOBAL_AVERAGE_POOL] = {infer_global_pool, 1},
    [WL_OP_GLOBAL_MAX_POOL] = {infer_global_pool, 1},
    [WL_OP_CONCAT] = {infer_concat, 1},
    [WL_OP_SPLIT] = {infer_split, 1},
    [WL_OP_SLICE] = {infer_slice, 3},
    [WL_OP_GATHER] = {infer_gather, 2},
    [WL_OP_TRANSPOSE] = {infer_transpose, 1},
    [WL_OP_EXPAND] = {infer_expand, 2},
    [WL_OP_TILE] = {infer_tile, 2},
    [WL_OP_PAD] = {infer_pad, 2},
    [WL_OP_RESIZE] = {infer_resize, 1},
    [WL_OP_DEPTH_TO_SPACE] = {infer_depth_to_space, 1},
    [WL_OP_RESHAPE] = {infer_reshape, 2},
    [WL_OP_FLATTEN] = {infer_flatten, 1},
    [WL_OP_SQUEEZE] = {infer_squeeze, 1},
    [WL_OP_UNSQUEEZE] = {infer_unsqueeze, 1},
    [WL_OP_IDENTITY] = {infer_same, 1},
    [WL_OP_DROPOUT] = {infer_same, 1},
    [WL_OP_SHAPE] = {infer_shape, 1},
    [WL_OP_CONSTANT] = {infer_constant, 0},
    [WL_OP_CONSTANT_OF_SHAPE] = {infer_constant_of_shape, 1},
    [WL_OP_RANGE] = {infer_range, 3},
};

/*
 * An op type accelsearch does not model: outputs the importer already
 * shaped (from ONNX value_info) keep their shape; otherwise output 0 is
 * assumed to look like input 0, with a warning, since a guess lets the
 * rest of the graph be costed.  Never folded.
 */
static as_code infer_unknown(wl_infer_ctx *c)
{
    wl_tensor *y = wl_infer_output(c, 0);
    if (y->shape_known)
        return AS_OK;
    const wl_tensor *x = IN(c, 0);
    if (!x || !x->shape_known)
        return wl_infer_fail(c,
                             "unknown op type: cannot infer output '%s' (no input to take "
                             "its shape from)",
                             y->name);
    char who[AS_MSG_BYTES];
    wl_warn(c->g,
            "%s: unknown op type; assuming output '%s' has the shape and type of input "
            "'%s'",
            wl_infer_node_str(c, who, sizeof who), y->name, x->name);
    return set_output_like(c, 0, x, x->dtype);
}

/* Inputs a rule may rely on: the required ones present, every present one
 * shaped. */
static as_code check_inputs(const wl_infer_ctx *c, int required)
{
    for (int s = 0; s < required; s++)
        if (!IN(c, s))
            return wl_infer_fail(c, "missing required input %d", s);
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = IN(c, s);
        if (t && !t->shape_known)
            return wl_infer_fail(c, "input '%s' has unknown shape", t->name);
        if (t && t->rank > WL_MAX_RANK)
            return wl_infer_fail(c, "input '%s' has rank %d; at most %d is supported", t->name,
                                 t->rank, WL_MAX_RANK);
    }
    return AS_OK;
}

as_code wl_infer_op(wl_graph *g, int32_t op_index, as_status *st)
{
    if (op_index < 0 || op_index >= g->n_ops)
        return as_fail(st, AS_EINTERNAL, "%s: no node %d to infer", g->source, (int)op_index);
    wl_infer_ctx c = {.g = g, .op = &g->ops[op_index], .st = st};
    wl_op_kind kind = c.op->kind;
    c.op->folded = false;
    if (kind == WL_OP_UNKNOWN || (unsigned)kind >= WL_OP_COUNT)
        return infer_unknown(&c);
    if (!rules[kind].rule) {
        char who[AS_MSG_BYTES];
        return as_fail(st, AS_EINTERNAL, "%s: no shape rule for this op type",
                       wl_infer_node_str(&c, who, sizeof who));
    }
    as_code rc = check_inputs(&c, rules[kind].required_inputs);
    if (rc == AS_OK)
        rc = rules[kind].rule(&c);
    if (rc == AS_OK && kind != WL_OP_CONSTANT)
        rc = wl_fold_op(&c);
    return rc;
}

/* Forget what inference derived, so that a re-run starts from the graph
 * inputs, weights and constants alone.  Outputs of unknown ops keep their
 * shape: it came from the importer (value_info) or from the first guess,
 * and nothing better can be computed. */
static void reset_derived(wl_graph *g)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        g->ops[o].folded = false;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        wl_tensor *tensor = &g->tensors[t];
        if (tensor->kind != WL_TENSOR_ACTIVATION)
            continue;
        int32_t producer = tensor->producer;
        if (producer >= 0 && g->ops[producer].kind == WL_OP_UNKNOWN)
            continue;
        tensor->shape_known = false;
        tensor->ivalues = NULL;
        tensor->fvalues = NULL;
    }
}

as_code wl_graph_infer(wl_graph *g, as_status *st)
{
    as_code rc = wl_graph_index(g, st);
    if (rc != AS_OK)
        return rc;
    reset_derived(g);
    for (int32_t i = 0; rc == AS_OK && i < g->n_order; i++)
        rc = wl_infer_op(g, g->order[i], st);
    return rc;
}
