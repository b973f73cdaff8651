/*
 * ops_lowering.c -- the op family of convolution lowering (lower.c): the
 * internal ops an inference library runs for a lowered Conv, which are
 * not ONNX ops (see WL_OP_LIST), and the Winograd transform matrices they
 * are costed from.  One table entry per op at the end (see ops_private.h).
 *
 *   Im2Col                   X [N, C, spatial...] -> columns [N, G, C/G * kernel, out spatial]:
 *                            data movement, padding zeros written out.
 *   WinogradInputTransform   X [N, C, H, W] -> V [alpha^2, C, N * tiles]: B^T d B per tile
 *                            and channel.
 *   WinogradOutputTransform  M [alpha^2, M, N * tiles] (+ bias [M]) -> Y [N, M, P, Q]:
 *                            A^T m A per tile and output channel.
 */
#include "ops_private.h"

#include <math.h>

/* ------------------------------------------------------------ Winograd */

/* Lavin & Gray (2016), section 4.1 (F(2x2, 3x3)) and 4.2 (F(4x4, 3x3));
 * one row per line.  tests/test_lowering.c checks that they compute a
 * 3x3 correlation. */
/* clang-format off */
static const double bt_2[16] = {
    1,  0, -1,  0,
    0,  1,  1,  0,
    0, -1,  1,  0,
    0,  1,  0, -1,
};
static const double g_2[12] = {
    1,    0,   0,
    0.5,  0.5, 0.5,
    0.5, -0.5, 0.5,
    0,    0,   1,
};
static const double at_2[8] = {
    1, 1,  1,  0,
    0, 1, -1, -1,
};
static const double bt_4[36] = {
    4,  0, -5,  0, 1, 0,
    0, -4, -4,  1, 1, 0,
    0,  4, -4, -1, 1, 0,
    0, -2, -1,  2, 1, 0,
    0,  2, -1, -2, 1, 0,
    0,  4,  0, -5, 0, 1,
};
static const double g_4[18] = {
     1.0 / 4,   0,         0,
    -1.0 / 6,  -1.0 / 6,  -1.0 / 6,
    -1.0 / 6,   1.0 / 6,  -1.0 / 6,
     1.0 / 24,  1.0 / 12,  1.0 / 6,
     1.0 / 24, -1.0 / 12,  1.0 / 6,
     0,         0,         1,
};
static const double at_4[24] = {
    1, 1,  1, 1,  1, 0,
    0, 1, -1, 2, -2, 0,
    0, 1,  1, 4,  4, 0,
    0, 1, -1, 8, -8, 1,
};
/* clang-format on */

static const wl_winograd winograd_2 = {2, 4, bt_2, g_2, at_2};
static const wl_winograd winograd_4 = {4, 6, bt_4, g_4, at_4};

const wl_winograd *wl_winograd_of(int m)
{
    return m == 2 ? &winograd_2 : m == 4 ? &winograd_4 : NULL;
}

/* Non-zeros of row i of L (rows x cols). */
static int row_nonzeros(const double *l, int cols, int i)
{
    int n = 0;
    for (int j = 0; j < cols; j++)
        n += l[i * cols + j] != 0;
    return n;
}

/* L X is cols columns of rows dot products; (L X) L^T is rows rows of
 * rows dot products: each row of L is used cols + rows times. */
void wl_transform_ops(const double *l, int rows, int cols, int64_t *adds, int64_t *muls)
{
    int64_t row_adds = 0, row_muls = 0;
    for (int i = 0; i < rows; i++) {
        int k = row_nonzeros(l, cols, i);
        row_adds += k > 0 ? k - 1 : 0;
        for (int j = 0; j < cols; j++)
            row_muls += l[i * cols + j] != 0 && fabs(l[i * cols + j]) != 1;
    }
    *adds = (int64_t)(cols + rows) * row_adds;
    *muls = (int64_t)(cols + rows) * row_muls;
}

double wl_transform_density(const double *l, int rows, int cols, double d)
{
    if (d >= 1)
        return 1;
    double sum = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < rows; j++)
            sum += 1 - pow(1 - d, row_nonzeros(l, cols, i) * row_nonzeros(l, cols, j));
    return sum / ((double)rows * rows);
}

/* ---------------------------------------------------------- shape rules */

/* Output length of a window of `kernel` taps at `stride` and `dilation`
 * over in_len elements padded by pads (begin, end); <= 0 when none fits. */
static int64_t window_len(int64_t in_len, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                          int64_t stride, int64_t dilation)
{
    int64_t span = in_len + pad_begin + pad_end - (dilation * (kernel - 1) + 1);
    return span < 0 ? 0 : span / stride + 1;
}

/*
 * Im2Col: X [N, C, spatial...] with the conv's window (kernel_shape,
 * strides, dilations, explicit pads, group) -> [N, G, C/G * prod(kernel),
 * prod(output spatial)]: per image and group the column matrix of the
 * GEMM, one column per output position.
 */
static as_code infer_im2col(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const wl_attrs *a = &c->op->attrs;
    int n = x->rank - 2;
    if (n < 1 || n > WL_MAX_SPATIAL || a->n_spatial != n)
        return wl_infer_fail(c, "input '%s' has rank %d; the window has %d spatial axes", x->name,
                             x->rank, a->n_spatial);
    if (a->group < 1 || x->dims[1] % a->group)
        return wl_infer_fail(c, "attribute 'group' = %lld does not divide the %lld channels",
                             (long long)a->group, (long long)x->dims[1]);
    int64_t rows = x->dims[1] / a->group, cols = 1;
    for (int i = 0; i < n; i++) {
        int64_t len = window_len(x->dims[2 + i], a->pads[i], a->pads[n + i], a->kernel_shape[i],
                                 a->strides[i], a->dilations[i]);
        if (a->kernel_shape[i] < 1 || a->strides[i] < 1 || a->dilations[i] < 1 || len < 1)
            return wl_infer_fail(c, "the window does not fit spatial axis %d", i);
        rows *= a->kernel_shape[i];
        cols *= len;
    }
    int64_t dims[4] = {x->dims[0], a->group, rows, cols};
    return wl_infer_set_output(c, 0, x->dtype, 4, dims);
}

/* Output rows and columns (P, Q) of Winograd op op, whose input is x
 * (input transform: the padded input less the 3x3 window's reach;
 * output transform: attribute output_shape). */
static void winograd_out_hw(const wl_op *op, const wl_tensor *x, int64_t pq[2])
{
    const wl_attrs *a = &op->attrs;
    for (int i = 0; i < 2; i++)
        pq[i] = op->kind == WL_OP_WINOGRAD_INPUT
                    ? window_len(x->dims[2 + i], a->pads[i], a->pads[2 + i], 3, 1, 1)
                    : a->output_shape[i];
}

/* Tiles of m x m outputs covering P x Q (boundary tiles padded). */
static int64_t winograd_tiles(int m, const int64_t pq[2])
{
    return wl_ceil_div(pq[0], m) * wl_ceil_div(pq[1], m);
}

/* WinogradInputTransform: X [N, C, H, W], attributes blocksize (m = 2 or
 * 4) and pads -> V [alpha^2, C, N * tiles]. */
static as_code infer_winograd_input(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    const wl_winograd *w = wl_winograd_of((int)c->op->attrs.blocksize);
    if (!w || x->rank != 4)
        return wl_infer_fail(c, "needs blocksize 2 or 4 (got %lld) and a rank-4 input (got %d)",
                             (long long)c->op->attrs.blocksize, x->rank);
    int64_t pq[2];
    winograd_out_hw(c->op, x, pq);
    if (pq[0] < 1 || pq[1] < 1)
        return wl_infer_fail(c, "input '%s' is smaller than the 3x3 window", x->name);
    int64_t dims[3] = {(int64_t)w->alpha * w->alpha, x->dims[1],
                       x->dims[0] * winograd_tiles(w->m, pq)};
    return wl_infer_set_output(c, 0, x->dtype, 3, dims);
}

/* WinogradOutputTransform: M [alpha^2, M, N * tiles] and an optional bias
 * [M], attributes blocksize and output_shape (P, Q) -> Y [N, M, P, Q]. */
static as_code infer_winograd_output(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *bias = IN(c, 1);
    const wl_winograd *w = wl_winograd_of((int)c->op->attrs.blocksize);
    int64_t pq[2];
    winograd_out_hw(c->op, x, pq);
    if (!w || x->rank != 3 || x->dims[0] != (int64_t)w->alpha * w->alpha || pq[0] < 1 || pq[1] < 1)
        return wl_infer_fail(c, "input '%s' is not [alpha^2, M, tiles] of blocksize %lld", x->name,
                             (long long)c->op->attrs.blocksize);
    int64_t tiles = winograd_tiles(w->m, pq);
    if (x->dims[2] % tiles)
        return wl_infer_fail(c, "input '%s' has %lld tile columns, not a multiple of %lld", x->name,
                             (long long)x->dims[2], (long long)tiles);
    if (bias && (bias->rank != 1 || bias->dims[0] != x->dims[1]))
        return wl_infer_fail(c, "bias '%s' is not [%lld]", bias->name, (long long)x->dims[1]);
    int64_t dims[4] = {x->dims[2] / tiles, x->dims[1], pq[0], pq[1]};
    return wl_infer_set_output(c, 0, x->dtype, 4, dims);
}

/* --------------------------------------------------------- vector work */

/*
 * A Winograd transform's operations: input, one B^T d B per tile and
 * input channel (N * tiles * C = elements of V / alpha^2); output, one
 * A^T m A per tile and output channel (elements of M / alpha^2), each at
 * wl_transform_ops of its matrix.  Adding a bias there is not counted
 * (as the direct conv's is not).  0 for a malformed op.
 */
static int64_t winograd_ops(const wl_graph *g, const wl_op *op)
{
    const wl_winograd *w = wl_winograd_of((int)op->attrs.blocksize);
    if (!w || op->n_inputs < 1 || op->inputs[0] < 0)
        return 0;
    const wl_tensor *x = &g->tensors[op->inputs[0]];
    bool input = op->kind == WL_OP_WINOGRAD_INPUT;
    if (!x->shape_known || x->rank != (input ? 4 : 3))
        return 0;
    int64_t pq[2];
    winograd_out_hw(op, x, pq);
    if (pq[0] < 1 || pq[1] < 1)
        return 0;
    int64_t transforms =
        input ? x->dims[0] * x->dims[1] * winograd_tiles(w->m, pq) : x->dims[1] * x->dims[2];
    int64_t adds, muls;
    if (input)
        wl_transform_ops(w->bt, w->alpha, w->alpha, &adds, &muls);
    else
        wl_transform_ops(w->at, w->m, w->alpha, &adds, &muls);
    return transforms * (adds + muls);
}

/* --------------------------------------------------------------- table */

/* Every entry: internal, and a tile of its output needs its whole input
 * (the tile index is flattened into one axis), the default halo. */
const wl_op_def wl_ops_lowering[WL_OP_COUNT] = {
    [WL_OP_IM2COL] = {.required_inputs = 1, .infer = infer_im2col, .internal = true},
    [WL_OP_WINOGRAD_INPUT] = {.required_inputs = 1,
                              .infer = infer_winograd_input,
                              .vector = WL_VEC_TRANSFORM,
                              .transform_ops = winograd_ops,
                              .internal = true},
    [WL_OP_WINOGRAD_OUTPUT] = {.required_inputs = 1,
                               .infer = infer_winograd_output,
                               .vector = WL_VEC_TRANSFORM,
                               .transform_ops = winograd_ops,
                               .internal = true},
};
