/*
 * ops_window.c -- the op family of convolution and pooling: ops that
 * slide a window over the spatial axes (Conv, ConvTranspose, MaxPool,
 * AveragePool) and the global pools.  One table entry per op at the end
 * (see ops_private.h for how to add one).
 */
#include "ops_private.h"

#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* Sliding-window geometry of Conv, ConvTranspose, MaxPool, AveragePool,
 * per spatial axis; pads in ONNX order (all begins, then all ends). */
typedef struct slide_window {
    int n_spatial;
    int64_t kernel[WL_MAX_SPATIAL];
    int64_t extent[WL_MAX_SPATIAL]; /* dilated kernel: dilation * (kernel - 1) + 1 */
    int64_t stride[WL_MAX_SPATIAL];
    int64_t pad_begin[WL_MAX_SPATIAL], pad_end[WL_MAX_SPATIAL];
} slide_window;

/*
 * Resolve and check the window of an op over input x.  The kernel comes
 * from attribute kernel_shape, else from the weight's trailing dims
 * (weight_kernel, NULL for pools, which must have the attribute); when
 * both exist they must agree.  auto_pad VALID means no padding; SAME_*
 * is resolved per op by the caller, which knows its output size.
 */
static as_code read_window(const wl_infer_ctx *c, const wl_tensor *x, const int64_t *weight_kernel,
                           slide_window *w)
{
    const wl_attrs *a = &c->op->attrs;
    char sx[WL_SHAPE_STR_BYTES];
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
static as_code window_out_len(const wl_infer_ctx *c, const slide_window *w, int i, int64_t in_len,
                              bool ceil_mode, int64_t *out_len)
{
    if (pads_same(&c->op->attrs)) {
        *out_len = wl_ceil_div(in_len, w->stride[i]);
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
        if (last_start >= wl_ceil_div(in_len + w->pad_begin[i], w->stride[i]))
            last_start--;
    }
    *out_len = last_start + 1;
    return AS_OK;
}

/* Output [N, channels, spatial...] of a window op over x. */
static as_code set_window_output(wl_infer_ctx *c, const wl_tensor *x, const slide_window *w,
                                 int64_t channels, bool ceil_mode)
{
    int64_t dims[WL_MAX_RANK] = {x->dims[0], channels};
    for (int i = 0; i < w->n_spatial; i++) {
        as_code rc = window_out_len(c, w, i, x->dims[2 + i], ceil_mode, &dims[2 + i]);
        if (rc != AS_OK)
            return rc;
    }
    as_code rc = wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
    /* MaxPool's optional Indices output. */
    if (rc == AS_OK && c->op->kind == WL_OP_MAX_POOL)
        rc = wl_infer_set_output(c, 1, WL_DTYPE_I64, x->rank, dims);
    return rc;
}

/*
 * What Conv and ConvTranspose check alike: the weight w has the input x's
 * rank, attribute group (returned) is positive, and the window's kernel
 * is the weight's trailing dims.
 */
static as_code read_conv(const wl_infer_ctx *c, const wl_tensor *x, const wl_tensor *w,
                         int64_t *group, slide_window *win)
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
        char sb[WL_SHAPE_STR_BYTES];
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
    slide_window win;
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
    slide_window win;
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
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* MaxPool, AveragePool: kernel_shape from the attribute, channels kept. */
static as_code infer_pool(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    slide_window win;
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
    return wl_infer_set_output(c, 0, x->dtype, x->rank, dims);
}

/* ------------------------------------------------------------ problems */

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
                       WL_OP_FMT ": only 1-D and 2-D convolutions lower to a loop-nest problem "
                                 "(input rank %d)",
                       WL_OP_ARGS(g, op), x->rank);
    int n_spatial = x->rank - 2;
    int64_t group = op->attrs.group > 0 ? op->attrs.group : 1;
    int64_t c_in = x->dims[1], c_out = y->dims[1];
    if (c_in % group || c_out % group)
        return as_fail(st, AS_EINVAL,
                       WL_OP_FMT ": attribute 'group' = %lld does not divide channels",
                       WL_OP_ARGS(g, op), (long long)group);
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
    wl_problem_add_dims(&p->ds[WL_DS_WEIGHTS], 5, weight_dims);
    /* The sliding window: input rows of a conv, output rows of a transposed
     * conv, both p*stride + r*dilation. */
    wl_dataspace *direct = &p->ds[transposed ? WL_DS_INPUTS : WL_DS_OUTPUTS];
    wl_dataspace *window = &p->ds[transposed ? WL_DS_OUTPUTS : WL_DS_INPUTS];
    wl_dim channel_direct = transposed ? WL_DIM_C : WL_DIM_M;
    wl_dim channel_window = transposed ? WL_DIM_M : WL_DIM_C;
    const wl_dim direct_dims[] = {WL_DIM_N, WL_DIM_G, channel_direct, WL_DIM_P, WL_DIM_Q};
    wl_problem_add_dims(direct, 5, direct_dims);
    const wl_dim window_dims[] = {WL_DIM_N, WL_DIM_G, channel_window};
    wl_problem_add_dims(window, 3, window_dims);
    wl_problem_add_rank(window, WL_DIM_P, p->stride[0], WL_DIM_R, p->dilation[0]);
    wl_problem_add_rank(window, WL_DIM_Q, p->stride[1], WL_DIM_S, p->dilation[1]);
    wl_problem_bind(g, p, WL_DS_WEIGHTS, op->inputs[1]);
    wl_problem_bind(g, p, WL_DS_INPUTS, op->inputs[0]);
    wl_problem_bind(g, p, WL_DS_OUTPUTS, op->outputs[0]);
    return AS_OK;
}

/* --------------------------------------------------------------- table */

/* The window attributes an export spells out for conv and pool ops. */
#define CONV_ALWAYS " kernel_shape strides pads dilations group "
#define POOL_ALWAYS " kernel_shape strides pads "

/* A conv with shape rule r: the conv problem, the kernel from the
 * weight; a windowed pool; a global pool, one vector op per input element. */
#define CONV(r)                                                                                    \
    .required_inputs = 2, .infer = (r), .problem = conv_problem, .export_always = CONV_ALWAYS,     \
    .kernel_from_weight = true
#define POOL .required_inputs = 1, .infer = infer_pool, .export_always = POOL_ALWAYS
#define GLOBAL_POOL .required_inputs = 1, .infer = infer_global_pool, .vector = WL_VEC_PER_INPUT

const wl_op_def wl_ops_window[WL_OP_COUNT] = {
    [WL_OP_CONV] = {CONV(infer_conv), .halo = WL_HALO_WINDOW},
    /* The window is on the output side: a tile needs the whole input. */
    [WL_OP_CONV_TRANSPOSE] = {CONV(infer_conv_transpose)},
    [WL_OP_MAX_POOL] = {POOL, .vector = WL_VEC_PER_WINDOW, .halo = WL_HALO_WINDOW},
    [WL_OP_AVERAGE_POOL] = {POOL, .vector = WL_VEC_PER_WINDOW, .halo = WL_HALO_WINDOW},
    [WL_OP_GLOBAL_AVERAGE_POOL] = {GLOBAL_POOL},
    [WL_OP_GLOBAL_MAX_POOL] = {GLOBAL_POOL},
};
