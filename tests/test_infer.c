/*
 * test_infer.c -- shape inference and constant folding (infer.c, fold.c)
 * on small graphs whose expected shapes are worked out by hand from the
 * ONNX operator definitions (and torch's, for ceil_mode pooling).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

/* clang-format off */
/* A literal list of int64 and its length, as two arguments. */
#define DIMS(...) (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* A literal list of tensor indices and its length, as two arguments. */
#define INS(...) (int)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t)), (int32_t[]){__VA_ARGS__}
/* clang-format on */

/* ------------------------------------------------------------- helpers */

/* An empty graph whose messages name the file "test.onnx". */
static wl_graph *new_graph(void)
{
    wl_graph *g = wl_graph_new("t", "test.onnx");
    assert_non_null(g);
    return g;
}

/* A tensor of the given kind, type and shape (dims NULL: shape unknown). */
static int32_t tensor(wl_graph *g, const char *name, wl_tensor_kind kind, wl_dtype dtype,
                      const int64_t *dims, int rank)
{
    as_status st;
    as_status_clear(&st);
    int32_t t = wl_add_tensor(g, name, kind, dtype, rank, dims, &st);
    assert_true(t >= 0);
    if (kind == WL_TENSOR_INPUT)
        assert_true(wl_add_graph_input(g, t));
    return t;
}

/* A float32 graph input. */
static int32_t input(wl_graph *g, const char *name, const int64_t *dims, int rank)
{
    return tensor(g, name, WL_TENSOR_INPUT, WL_DTYPE_F32, dims, rank);
}

/* A float32 weight with no data (only its shape matters here). */
static int32_t weight(wl_graph *g, const char *name, const int64_t *dims, int rank)
{
    int32_t t = tensor(g, name, WL_TENSOR_WEIGHT, WL_DTYPE_F32, dims, rank);
    g->tensors[t].data_stripped = true;
    return t;
}

/* An int64 constant of shape dims holding values (as the importer makes
 * an integer initializer or a Constant's output). */
static int32_t const_i64(wl_graph *g, const char *name, const int64_t *dims, int rank,
                         const int64_t *values, int n)
{
    int32_t t = tensor(g, name, WL_TENSOR_CONSTANT, WL_DTYPE_I64, dims, rank);
    if (n > 0)
        g->tensors[t].ivalues = as_arena_memdup(&g->arena, values, (size_t)n * sizeof *values);
    return t;
}

/* An int64 scalar constant (rank 0). */
static int32_t scalar_i64(wl_graph *g, const char *name, int64_t value)
{
    return const_i64(g, name, (int64_t[]){0}, 0, &value, 1);
}

/* A 1-D int64 constant. */
static int32_t list_i64(wl_graph *g, const char *name, const int64_t *values, int n)
{
    return const_i64(g, name, (int64_t[]){n}, 1, values, n);
}

/* A 1-D float32 constant. */
static int32_t list_f32(wl_graph *g, const char *name, const double *values, int n)
{
    int32_t t = tensor(g, name, WL_TENSOR_CONSTANT, WL_DTYPE_F32, (int64_t[]){n}, 1);
    if (n > 0)
        g->tensors[t].fvalues = as_arena_memdup(&g->arena, values, (size_t)n * sizeof *values);
    return t;
}

/* Add an op reading in[] and writing n_out fresh activations (type not
 * declared, as the importer leaves it), then infer it.  Returns the
 * inference status; the outputs go to out[]. */
static as_code add_and_infer(wl_graph *g, wl_op_kind kind, const wl_attrs *attrs, int n_in,
                             const int32_t *in, int n_out, int32_t *out, as_status *st)
{
    for (int i = 0; i < n_out; i++) {
        char name[32];
        snprintf(name, sizeof name, "y%d", g->n_tensors);
        out[i] = tensor(g, name, WL_TENSOR_ACTIVATION, WL_DTYPE_UNDEFINED, NULL, 0);
    }
    char name[32];
    snprintf(name, sizeof name, "n%d", g->n_ops);
    as_status_clear(st);
    int32_t op = wl_add_op(g, kind, name, NULL, n_in, in, n_out, out, attrs, st);
    assert_true(op >= 0);
    return wl_infer_op(g, op, st);
}

/* One op with one output that must infer cleanly; returns the output. */
static int32_t apply(wl_graph *g, wl_op_kind kind, const wl_attrs *attrs, int n_in,
                     const int32_t *in)
{
    int32_t out;
    as_status st;
    as_code rc = add_and_infer(g, kind, attrs, n_in, in, 1, &out, &st);
    if (rc != AS_OK)
        fail_msg("unexpected failure: %s", st.message);
    return out;
}

/* One op with one output whose inference must fail with a message
 * containing `expected`. */
static void expect_error(wl_graph *g, wl_op_kind kind, const wl_attrs *attrs, int n_in,
                         const int32_t *in, const char *expected)
{
    int32_t out;
    as_status st;
    as_code rc = add_and_infer(g, kind, attrs, n_in, in, 1, &out, &st);
    assert_int_equal(rc, AS_EINVAL);
    if (!strstr(st.message, expected))
        fail_msg("message \"%s\" lacks \"%s\"", st.message, expected);
}

/* ONNX's default attributes of an op kind. */
static wl_attrs defaults(wl_op_kind kind)
{
    wl_attrs a;
    wl_attrs_default(&a, kind);
    return a;
}

/* Tensor t has a known shape equal to dims. */
static void assert_shape(const wl_graph *g, int32_t t, const int64_t *dims, int rank)
{
    const wl_tensor *x = &g->tensors[t];
    char got[128];
    assert_true(x->shape_known);
    if (x->rank != rank)
        fail_msg("'%s' is %s, expected rank %d", x->name, wl_shape_str(x, got, sizeof got), rank);
    for (int i = 0; i < rank; i++)
        if (x->dims[i] != dims[i])
            fail_msg("'%s' is %s; dim %d should be %lld", x->name, wl_shape_str(x, got, sizeof got),
                     i, (long long)dims[i]);
}

/* Tensor t has known integer values equal to values[0..n). */
static void assert_ivalues(const wl_graph *g, int32_t t, const int64_t *values, int n)
{
    const wl_tensor *x = &g->tensors[t];
    assert_non_null(x->ivalues);
    assert_int_equal(wl_tensor_elements(x), n);
    for (int i = 0; i < n; i++)
        assert_int_equal(x->ivalues[i], values[i]);
}

/* Whether the op that writes t was folded. */
static bool producer_folded(const wl_graph *g, int32_t t)
{
    return g->ops[g->tensors[t].producer].folded;
}

/* ------------------------------------------------------------ conv */

/* 2-D Conv attributes: the same stride, pad, dilation on both axes. */
static wl_attrs conv_attrs(int64_t stride, int64_t pad, int64_t dilation, int64_t group)
{
    wl_attrs a = defaults(WL_OP_CONV);
    for (int i = 0; i < 2; i++) {
        a.strides[i] = stride;
        a.dilations[i] = dilation;
        a.pads[i] = a.pads[2 + i] = pad;
    }
    a.group = group;
    return a;
}

/* Conv output sizes: padding, stride, dilation, groups, auto_pad, 1-D. */
static void test_conv_shapes(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    /* ResNet stem: 7x7 stride 2 pad 3 on 224 -> (224 + 6 - 7) / 2 + 1 = 112. */
    int32_t x = input(g, "x", DIMS(1, 3, 224, 224));
    int32_t w = weight(g, "w", DIMS(64, 3, 7, 7));
    int32_t b = weight(g, "b", DIMS(64));
    wl_attrs a = conv_attrs(2, 3, 1, 1);
    int32_t y = apply(g, WL_OP_CONV, &a, INS(x, w, b));
    assert_shape(g, y, DIMS(1, 64, 112, 112));
    assert_int_equal(g->tensors[y].dtype, WL_DTYPE_F32);
    assert_int_equal(g->tensors[y].bits, 32);
    assert_false(producer_folded(g, y));

    /* Dilation 2, 3x3, pad 2 keeps 32: 32 + 4 - 5 + 1. */
    int32_t x2 = input(g, "x2", DIMS(2, 8, 32, 30));
    int32_t w2 = weight(g, "w2", DIMS(16, 8, 3, 3));
    a = conv_attrs(1, 2, 2, 1);
    assert_shape(g, apply(g, WL_OP_CONV, &a, INS(x2, w2)), DIMS(2, 16, 32, 30));

    /* Depthwise stride 2 pad 1: (56 + 2 - 3) / 2 + 1 = 28. */
    int32_t x3 = input(g, "x3", DIMS(1, 32, 56, 56));
    int32_t w3 = weight(g, "w3", DIMS(32, 1, 3, 3));
    a = conv_attrs(2, 1, 1, 32);
    assert_shape(g, apply(g, WL_OP_CONV, &a, INS(x3, w3)), DIMS(1, 32, 28, 28));

    /* SAME_UPPER: ceil(225 / 2) = 113, whatever the kernel. */
    int32_t x4 = input(g, "x4", DIMS(1, 3, 225, 225));
    a = conv_attrs(2, 0, 1, 1);
    a.auto_pad = WL_AUTO_PAD_SAME_UPPER;
    assert_shape(g, apply(g, WL_OP_CONV, &a, INS(x4, w)), DIMS(1, 64, 113, 113));
    /* VALID ignores pads: (225 - 7) / 2 + 1 = 110. */
    a = conv_attrs(2, 5, 1, 1);
    a.auto_pad = WL_AUTO_PAD_VALID;
    assert_shape(g, apply(g, WL_OP_CONV, &a, INS(x4, w)), DIMS(1, 64, 110, 110));

    /* 1-D conv: 100 - 5 + 1 = 96. */
    int32_t x5 = input(g, "x5", DIMS(2, 4, 100));
    int32_t w5 = weight(g, "w5", DIMS(6, 4, 5));
    assert_shape(g, apply(g, WL_OP_CONV, NULL, INS(x5, w5)), DIMS(2, 6, 96));
    wl_graph_free(g);
}

/* Conv operands that disagree; the message names node, input and key. */
static void test_conv_errors(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 64, 8, 8));
    int32_t w = weight(g, "conv.weight", DIMS(16, 3, 3, 3));
    int32_t out;
    as_status st;
    assert_int_equal(add_and_infer(g, WL_OP_CONV, NULL, INS(x, w), 1, &out, &st), AS_EINVAL);
    assert_string_equal(st.message, "test.onnx: node 0 'n0' (Conv): input 'x' has 64 channels "
                                    "but weight 'conv.weight' expects 3 x group 1");

    int32_t x4 = input(g, "x4", DIMS(1, 4, 8, 8));
    int32_t w52 = weight(g, "w52", DIMS(5, 2, 3, 3));
    wl_attrs a = conv_attrs(1, 0, 1, 2);
    expect_error(g, WL_OP_CONV, &a, INS(x4, w52), "group 2 does not divide the 5 output");
    a = conv_attrs(0, 0, 1, 1);
    int32_t w4 = weight(g, "w4", DIMS(4, 4, 3, 3));
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "attribute 'strides'[0] = 0 must be positive");
    a = conv_attrs(1, 0, 1, 0);
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "attribute 'group' = 0 must be positive");
    a = conv_attrs(1, -1, 1, 1);
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "must not be negative");
    a = conv_attrs(1, INT64_MAX, 1, 1);
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "overflows 64 bits");
    a = conv_attrs(1, 0, INT64_MAX, 1);
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "dilated kernel on spatial axis 0 overflows");
    a = conv_attrs(1, 0, 4, 1); /* extent 9 > 8 */
    expect_error(g, WL_OP_CONV, &a, INS(x4, w4), "kernel extent 9 exceeds padded input size 8");
    int32_t bias = weight(g, "bias", DIMS(5));
    expect_error(g, WL_OP_CONV, NULL, INS(x4, w4, bias), "bias 'bias' has shape [5]; expected [4]");
    expect_error(g, WL_OP_CONV, NULL, INS(x4), "missing required input 1");
    int32_t unknown = tensor(g, "unknown", WL_TENSOR_INPUT, WL_DTYPE_F32, NULL, 0);
    expect_error(g, WL_OP_CONV, NULL, INS(unknown, w4), "input 'unknown' has unknown shape");
    wl_graph_free(g);
}

/* ConvTranspose: output_padding, group, output_shape, SAME_UPPER. */
static void test_conv_transpose(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    /* UNet-style 2x2 stride 2: (14 - 1) * 2 + 2 = 28. */
    int32_t x = input(g, "x", DIMS(1, 16, 14, 14));
    int32_t w = weight(g, "w", DIMS(16, 8, 2, 2));
    wl_attrs a = conv_attrs(2, 0, 1, 1);
    assert_shape(g, apply(g, WL_OP_CONV_TRANSPOSE, &a, INS(x, w)), DIMS(1, 8, 28, 28));
    /* output_padding: (7 - 1) * 2 + 1 + 3 - 2 = 14. */
    int32_t x2 = input(g, "x2", DIMS(1, 4, 7, 7));
    int32_t w2 = weight(g, "w2", DIMS(4, 2, 3, 3));
    a = conv_attrs(2, 1, 1, 1);
    a.output_padding[0] = a.output_padding[1] = 1;
    assert_shape(g, apply(g, WL_OP_CONV_TRANSPOSE, &a, INS(x2, w2)), DIMS(1, 2, 14, 14));
    /* group 2 doubles the output channels of the weight: M = 2 * 2. */
    a.group = 2;
    assert_shape(g, apply(g, WL_OP_CONV_TRANSPOSE, &a, INS(x2, w2)), DIMS(1, 4, 14, 14));
    /* output_shape wins; SAME_UPPER gives in * stride. */
    a = conv_attrs(2, 1, 1, 1);
    a.output_shape[0] = 15;
    a.output_shape[1] = 13;
    assert_shape(g, apply(g, WL_OP_CONV_TRANSPOSE, &a, INS(x2, w2)), DIMS(1, 2, 15, 13));
    a = conv_attrs(3, 0, 1, 1);
    a.auto_pad = WL_AUTO_PAD_SAME_UPPER;
    assert_shape(g, apply(g, WL_OP_CONV_TRANSPOSE, &a, INS(x2, w2)), DIMS(1, 2, 21, 21));
    a = conv_attrs(2, 1, 1, 1);
    a.output_padding[0] = 2;
    expect_error(g, WL_OP_CONV_TRANSPOSE, &a, INS(x2, w2), "'output_padding'[0] = 2");
    int32_t w3 = weight(g, "w3", DIMS(3, 2, 3, 3));
    expect_error(g, WL_OP_CONV_TRANSPOSE, NULL, INS(x2, w3),
                 "input 'x2' has 4 channels but weight 'w3' expects 3");
    wl_graph_free(g);
}

/* ------------------------------------------------------------- pools */

/* 2-D pool attributes: square kernel, stride, pad on both axes. */
static wl_attrs pool_attrs(wl_op_kind kind, int64_t k, int64_t stride, int64_t pad, int ceil)
{
    wl_attrs a = defaults(kind);
    for (int i = 0; i < 2; i++) {
        a.kernel_shape[i] = k;
        a.strides[i] = stride;
        a.pads[i] = a.pads[2 + i] = pad;
    }
    a.ceil_mode = ceil;
    return a;
}

/* MaxPool and AveragePool sizes, ceil_mode as torch has it; global pools. */
static void test_pools(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 64, 112, 112));
    /* ResNet: (112 + 2 - 3) / 2 + 1 = 56. */
    wl_attrs a = pool_attrs(WL_OP_MAX_POOL, 3, 2, 1, 0);
    assert_shape(g, apply(g, WL_OP_MAX_POOL, &a, INS(x)), DIMS(1, 64, 56, 56));
    /* GoogLeNet: (112 - 3) / 2 = 54.5 -> floor 54 + 1, ceil 55 + 1. */
    a = pool_attrs(WL_OP_MAX_POOL, 3, 2, 0, 0);
    assert_shape(g, apply(g, WL_OP_MAX_POOL, &a, INS(x)), DIMS(1, 64, 55, 55));
    a.ceil_mode = 1;
    assert_shape(g, apply(g, WL_OP_MAX_POOL, &a, INS(x)), DIMS(1, 64, 56, 56));
    /* ceil_mode drops a last window that starts in the end padding:
     * in 2, k 2, s 3, pad 1: ceil((2 + 2 - 2) / 3) + 1 = 2 windows, but the
     * second starts at 3 >= 2 + 1, so torch gives 1. */
    int32_t x2 = input(g, "x2", DIMS(1, 1, 2, 2));
    a = pool_attrs(WL_OP_AVERAGE_POOL, 2, 3, 1, 1);
    assert_shape(g, apply(g, WL_OP_AVERAGE_POOL, &a, INS(x2)), DIMS(1, 1, 1, 1));
    /* Pool kernels come from the attribute only. */
    a = pool_attrs(WL_OP_MAX_POOL, 0, 1, 0, 0);
    expect_error(g, WL_OP_MAX_POOL, &a, INS(x), "attribute 'kernel_shape'[0] = 0");
    int32_t y = apply(g, WL_OP_GLOBAL_AVERAGE_POOL, NULL, INS(x));
    assert_shape(g, y, DIMS(1, 64, 1, 1));
    assert_shape(g, apply(g, WL_OP_GLOBAL_MAX_POOL, NULL, INS(x2)), DIMS(1, 1, 1, 1));
    wl_graph_free(g);
}

/* --------------------------------------------------------- gemm, matmul */

/* Gemm with transB and bias; MatMul's batch broadcasting and 1-D promotion. */
static void test_gemm_matmul(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 512));
    int32_t w = weight(g, "fc.weight", DIMS(1000, 512));
    int32_t b = weight(g, "fc.bias", DIMS(1000));
    wl_attrs a = defaults(WL_OP_GEMM);
    a.trans_b = 1;
    assert_shape(g, apply(g, WL_OP_GEMM, &a, INS(x, w, b)), DIMS(2, 1000));
    a.trans_b = 0;
    expect_error(g, WL_OP_GEMM, &a, INS(x, w, b), "inner dimensions disagree");
    int32_t wt = weight(g, "wt", DIMS(512, 10));
    int32_t bad_bias = weight(g, "bad_bias", DIMS(3, 10));
    expect_error(g, WL_OP_GEMM, &a, INS(x, wt, bad_bias), "cannot broadcast [3,10] with [2,10]");

    /* Batched with broadcasting: [2,1,4,8] x [3,8,5] -> [2,3,4,5]. */
    int32_t p = input(g, "p", DIMS(2, 1, 4, 8));
    int32_t q = input(g, "q", DIMS(3, 8, 5));
    assert_shape(g, apply(g, WL_OP_MATMUL, NULL, INS(p, q)), DIMS(2, 3, 4, 5));
    /* 1-D promotion on either side, and both. */
    int32_t v = input(g, "v", DIMS(8));
    int32_t m = input(g, "m", DIMS(8, 5));
    int32_t r = input(g, "r", DIMS(4, 8));
    assert_shape(g, apply(g, WL_OP_MATMUL, NULL, INS(v, m)), DIMS(5));
    assert_shape(g, apply(g, WL_OP_MATMUL, NULL, INS(r, v)), DIMS(4));
    int32_t dot = apply(g, WL_OP_MATMUL, NULL, INS(v, v));
    assert_int_equal(g->tensors[dot].rank, 0);
    int32_t s = input(g, "s", DIMS(2, 4, 8));
    expect_error(g, WL_OP_MATMUL, NULL, INS(s, q), "cannot broadcast [2] with [3]");
    expect_error(g, WL_OP_MATMUL, NULL, INS(p, r), "inner dimensions disagree");
    wl_graph_free(g);
}

/* ------------------------------------------------- norms, elementwise */

/* BatchNorm, LayerNorm, Softmax; broadcasting, output types and bits of
 * elementwise ops. */
static void test_norms_and_elementwise(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 64, 8, 8));
    int32_t bn[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "bn%d", i);
        bn[i] = weight(g, name, DIMS(64));
    }
    assert_shape(g, apply(g, WL_OP_BATCHNORM, NULL, INS(x, bn[0], bn[1], bn[2], bn[3])),
                 DIMS(1, 64, 8, 8));
    int32_t bn_bad = weight(g, "bn_bad", DIMS(32));
    expect_error(g, WL_OP_BATCHNORM, NULL, INS(x, bn[0], bn_bad, bn[2], bn[3]),
                 "input 'bn_bad' has 32 elements but input 'x' has 64 channels");

    int32_t h = input(g, "h", DIMS(1, 7, 768));
    int32_t gamma = weight(g, "ln.weight", DIMS(768));
    assert_shape(g, apply(g, WL_OP_LAYERNORM, NULL, INS(h, gamma, gamma)), DIMS(1, 7, 768));
    int32_t short_gamma = weight(g, "short_gamma", DIMS(7));
    expect_error(g, WL_OP_LAYERNORM, NULL, INS(h, short_gamma), "cannot broadcast [7] with [768]");
    wl_attrs a = defaults(WL_OP_LAYERNORM);
    a.axis = 1;
    assert_shape(g, apply(g, WL_OP_LAYERNORM, &a, INS(h, gamma)), DIMS(1, 7, 768));

    a = defaults(WL_OP_SOFTMAX);
    a.axis = 5;
    expect_error(g, WL_OP_SOFTMAX, &a, INS(x), "attribute 'axis' = 5 out of range for rank 4");
    a.axis = -4;
    assert_shape(g, apply(g, WL_OP_SOFTMAX, &a, INS(x)), DIMS(1, 64, 8, 8));

    /* Numpy broadcasting: [8,1,6,1] + [7,1,5] -> [8,7,6,5]. */
    int32_t p = input(g, "p", DIMS(8, 1, 6, 1));
    int32_t q = input(g, "q", DIMS(7, 1, 5));
    assert_shape(g, apply(g, WL_OP_ADD, NULL, INS(p, q)), DIMS(8, 7, 6, 5));
    int32_t u = input(g, "u", DIMS(1, 3, 4));
    int32_t v = input(g, "v", DIMS(1, 5, 4));
    expect_error(g, WL_OP_MUL, NULL, INS(u, v), "cannot broadcast [1,3,4] with [1,5,4]");
    int32_t cmp = apply(g, WL_OP_LESS, NULL, INS(p, q));
    assert_int_equal(g->tensors[cmp].dtype, WL_DTYPE_BOOL);
    assert_int_equal(g->tensors[cmp].bits, 8);
    int32_t sel = apply(g, WL_OP_WHERE, NULL, INS(cmp, p, q));
    assert_shape(g, sel, DIMS(8, 7, 6, 5));
    assert_int_equal(g->tensors[sel].dtype, WL_DTYPE_F32);

    /* PRelu's slope [C,1,1] broadcasts onto the input, not the reverse. */
    int32_t slope = weight(g, "slope", DIMS(64, 1, 1));
    assert_shape(g, apply(g, WL_OP_PRELU, NULL, INS(x, slope)), DIMS(1, 64, 8, 8));
    int32_t big = weight(g, "big", DIMS(2, 64, 8, 8));
    expect_error(g, WL_OP_PRELU, NULL, INS(x, big), "does not broadcast to [1,64,8,8]");

    /* Clip with scalar bounds (opset 11 inputs), Cast, Erf. */
    int32_t lo = list_f32(g, "lo", (double[]){0.0}, 1);
    int32_t hi = list_f32(g, "hi", (double[]){6.0}, 1);
    assert_shape(g, apply(g, WL_OP_CLIP, NULL, INS(x, lo, hi)), DIMS(1, 64, 8, 8));
    expect_error(g, WL_OP_CLIP, NULL, INS(x, gamma), "bound 'ln.weight' must be a scalar");
    a = defaults(WL_OP_CAST);
    a.to = WL_DTYPE_F16;
    int32_t half = apply(g, WL_OP_CAST, &a, INS(x));
    assert_int_equal(g->tensors[half].dtype, WL_DTYPE_F16);
    assert_int_equal(g->tensors[half].bits, 16);
    a.to = (wl_dtype)99;
    expect_error(g, WL_OP_CAST, &a, INS(x), "attribute 'to' = 99");
    assert_shape(g, apply(g, WL_OP_ERF, NULL, INS(x)), DIMS(1, 64, 8, 8));

    /* A precision chosen by a transform survives re-inference. */
    int32_t r = apply(g, WL_OP_RELU, NULL, INS(x));
    g->tensors[r].bits = 16;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_infer_op(g, g->tensors[r].producer, &st), AS_OK);
    assert_int_equal(g->tensors[r].bits, 16);
    wl_graph_free(g);
}

/* --------------------------------------------------------------- views */

/* Reshape's 0 and -1 and its errors; Flatten on every axis. */
static void test_reshape_flatten(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 3, 4));
    int32_t shape = list_i64(g, "s", DIMS(0, -1));
    assert_shape(g, apply(g, WL_OP_RESHAPE, NULL, INS(x, shape)), DIMS(2, 12));
    int32_t bad = list_i64(g, "bad", DIMS(0, 5));
    expect_error(g, WL_OP_RESHAPE, NULL, INS(x, bad),
                 "Reshape target has 10 elements, input has 24");
    int32_t two = list_i64(g, "two", DIMS(-1, -1));
    expect_error(g, WL_OP_RESHAPE, NULL, INS(x, two), "more than one -1");
    int32_t odd = list_i64(g, "odd", DIMS(5, -1));
    expect_error(g, WL_OP_RESHAPE, NULL, INS(x, odd), "cannot infer -1");
    int32_t dynamic = input(g, "dynamic", DIMS(2));
    g->tensors[dynamic].dtype = WL_DTYPE_I64;
    expect_error(g, WL_OP_RESHAPE, NULL, INS(x, dynamic), "has no known integer values");

    int32_t f = input(g, "f", DIMS(1, 512, 7, 7));
    assert_shape(g, apply(g, WL_OP_FLATTEN, NULL, INS(f)), DIMS(1, 25088));
    wl_attrs a = defaults(WL_OP_FLATTEN);
    a.axis = 0;
    assert_shape(g, apply(g, WL_OP_FLATTEN, &a, INS(f)), DIMS(1, 25088));
    a.axis = 4;
    assert_shape(g, apply(g, WL_OP_FLATTEN, &a, INS(f)), DIMS(25088, 1));
    a.axis = -2;
    assert_shape(g, apply(g, WL_OP_FLATTEN, &a, INS(f)), DIMS(512, 49));
    a.axis = 5;
    expect_error(g, WL_OP_FLATTEN, &a, INS(f), "attribute 'axis' = 5 out of range for rank 4");
    wl_graph_free(g);
}

/* Squeeze and Unsqueeze with axes as an input (opset 13) and as an
 * attribute (opset 11). */
static void test_squeeze_unsqueeze_both_forms(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 3, 1, 5));
    /* Opset 13: axes as an input. */
    int32_t axes = list_i64(g, "axes", DIMS(-2));
    assert_shape(g, apply(g, WL_OP_SQUEEZE, NULL, INS(x, axes)), DIMS(1, 3, 5));
    assert_shape(g, apply(g, WL_OP_SQUEEZE, NULL, INS(x)), DIMS(3, 5));
    int32_t uaxes = list_i64(g, "uaxes", DIMS(0, 5));
    assert_shape(g, apply(g, WL_OP_UNSQUEEZE, NULL, INS(x, uaxes)), DIMS(1, 1, 3, 1, 5, 1));
    /* Opset 11: axes as an attribute. */
    g->opset = 11;
    wl_attrs a = defaults(WL_OP_SQUEEZE);
    a.n_axes = 1;
    a.axes[0] = 0;
    assert_shape(g, apply(g, WL_OP_SQUEEZE, &a, INS(x)), DIMS(3, 1, 5));
    a.axes[0] = 1;
    expect_error(g, WL_OP_SQUEEZE, &a, INS(x), "cannot squeeze axis 1 of size 3");
    a.n_axes = 2;
    a.axes[0] = 1;
    a.axes[1] = -1;
    assert_shape(g, apply(g, WL_OP_UNSQUEEZE, &a, INS(x)), DIMS(1, 1, 3, 1, 5, 1));
    a.axes[1] = 1;
    expect_error(g, WL_OP_UNSQUEEZE, &a, INS(x), "repeats axis");
    a.axes[1] = 6;
    expect_error(g, WL_OP_UNSQUEEZE, &a, INS(x), "attribute 'axes' = 6 out of range for rank 6");
    wl_graph_free(g);
}

/* ----------------------------------------------------------- movement */

/* Slice: negative and clamped bounds, reversal, steps, folding. */
static void test_slice(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(10, 20));
    /* [1:] and [-5:-1] -> [9, 4]; INT64_MAX means "to the end". */
    int32_t starts = list_i64(g, "starts", DIMS(1, -5));
    int32_t ends = list_i64(g, "ends", DIMS(INT64_MAX, -1));
    int32_t axes = list_i64(g, "axes", DIMS(0, 1));
    assert_shape(g, apply(g, WL_OP_SLICE, NULL, INS(x, starts, ends, axes)), DIMS(9, 4));
    /* Reversal [::-1] on axis 1 with INT64_MIN as the end: all 20. */
    int32_t rs = list_i64(g, "rs", DIMS(-1));
    int32_t re = list_i64(g, "re", DIMS(INT64_MIN));
    int32_t ra = list_i64(g, "ra", DIMS(1));
    int32_t rstep = list_i64(g, "rstep", DIMS(-1));
    assert_shape(g, apply(g, WL_OP_SLICE, NULL, INS(x, rs, re, ra, rstep)), DIMS(10, 20));
    /* Every 3rd of [2, 8) of a constant: 2, 5; folded. */
    int32_t c = list_i64(g, "c", DIMS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
    int32_t s2 = list_i64(g, "s2", DIMS(2));
    int32_t e8 = list_i64(g, "e8", DIMS(8));
    int32_t a0 = list_i64(g, "a0", DIMS(0));
    int32_t st3 = list_i64(g, "st3", DIMS(3));
    int32_t y = apply(g, WL_OP_SLICE, NULL, INS(c, s2, e8, a0, st3));
    assert_ivalues(g, y, DIMS(2, 5));
    assert_true(producer_folded(g, y));
    /* Backwards from 8 to 2 step -2: 8, 6, 4. */
    int32_t m2 = list_i64(g, "m2", DIMS(-2));
    y = apply(g, WL_OP_SLICE, NULL, INS(c, e8, s2, a0, m2));
    assert_ivalues(g, y, DIMS(8, 6, 4));
    /* Start past the end: empty. */
    int32_t big = list_i64(g, "big", DIMS(INT64_MAX));
    assert_shape(g, apply(g, WL_OP_SLICE, NULL, INS(x, big, big, a0)), DIMS(0, 20));
    int32_t zero = list_i64(g, "zero", DIMS(0));
    expect_error(g, WL_OP_SLICE, NULL, INS(x, s2, e8, a0, zero), "'steps' has 0");
    int32_t a5 = list_i64(g, "a5", DIMS(5));
    expect_error(g, WL_OP_SLICE, NULL, INS(x, s2, e8, a5), "input 'axes' = 5 out of range");
    wl_graph_free(g);
}

/* Split sizes as input, as attribute, or equal parts; folding. */
static void test_split(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 10));
    int32_t sizes = list_i64(g, "sizes", DIMS(3, 7));
    wl_attrs a = defaults(WL_OP_SPLIT);
    a.axis = -1;
    int32_t out[3];
    as_status st;
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(x, sizes), 2, out, &st), AS_OK);
    assert_shape(g, out[0], DIMS(2, 3));
    assert_shape(g, out[1], DIMS(2, 7));
    /* Opset 11 attribute form. */
    a.n_split = 3;
    a.split[0] = 2;
    a.split[1] = 2;
    a.split[2] = 6;
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(x), 3, out, &st), AS_OK);
    assert_shape(g, out[2], DIMS(2, 6));
    a.split[2] = 5;
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(x), 3, out, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "attribute 'split' sums to 9 but axis 1 has size 10"));
    /* Equal parts must divide. */
    a.n_split = 0;
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(x), 3, out, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "does not split into 3 equal parts"));
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(x), 2, out, &st), AS_OK);
    assert_shape(g, out[1], DIMS(2, 5));
    /* Folded split of a constant. */
    int32_t c = list_i64(g, "c", DIMS(4, 5, 6, 7, 8));
    int32_t cs = list_i64(g, "cs", DIMS(2, 3));
    a.axis = 0;
    assert_int_equal(add_and_infer(g, WL_OP_SPLIT, &a, INS(c, cs), 2, out, &st), AS_OK);
    assert_ivalues(g, out[0], DIMS(4, 5));
    assert_ivalues(g, out[1], DIMS(6, 7, 8));
    wl_graph_free(g);
}

/* Concat, Transpose and Gather: shapes, errors, folded values. */
static void test_concat_transpose_gather(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t p = input(g, "p", DIMS(1, 64, 28, 28));
    int32_t q = input(g, "q", DIMS(1, 32, 28, 28));
    wl_attrs a = defaults(WL_OP_CONCAT);
    a.axis = 1;
    assert_shape(g, apply(g, WL_OP_CONCAT, &a, INS(p, q, p)), DIMS(1, 160, 28, 28));
    int32_t r = input(g, "r", DIMS(1, 32, 14, 14));
    expect_error(g, WL_OP_CONCAT, &a, INS(p, r), "does not match input 'p' [1,64,28,28] outside");

    a = defaults(WL_OP_TRANSPOSE);
    a.n_perm = 4;
    int64_t perm[4] = {0, 2, 3, 1};
    memcpy(a.perm, perm, sizeof perm);
    assert_shape(g, apply(g, WL_OP_TRANSPOSE, &a, INS(q)), DIMS(1, 28, 28, 32));
    a.perm[3] = 2;
    expect_error(g, WL_OP_TRANSPOSE, &a, INS(q), "not a permutation");
    assert_shape(g, apply(g, WL_OP_TRANSPOSE, NULL, INS(r)), DIMS(14, 14, 32, 1));
    /* Folded transpose of a 2x3 constant. */
    int32_t m = const_i64(g, "m", (int64_t[]){2, 3}, 2, (int64_t[]){1, 2, 3, 4, 5, 6}, 6);
    int32_t mt = apply(g, WL_OP_TRANSPOSE, NULL, INS(m));
    assert_shape(g, mt, DIMS(3, 2));
    assert_ivalues(g, mt, DIMS(1, 4, 2, 5, 3, 6));

    /* Embedding lookup: [50257, 768] by ids [1, 7] -> [1, 7, 768]. */
    int32_t wte = weight(g, "wte", DIMS(50257, 768));
    int32_t ids = tensor(g, "ids", WL_TENSOR_INPUT, WL_DTYPE_I64, DIMS(1, 7));
    int32_t e = apply(g, WL_OP_GATHER, NULL, INS(wte, ids));
    assert_shape(g, e, DIMS(1, 7, 768));
    assert_false(producer_folded(g, e));
    /* Negative index on axis 1 of a constant, scalar index drops the axis. */
    int32_t minus1 = scalar_i64(g, "minus1", -1);
    a = defaults(WL_OP_GATHER);
    a.axis = 1;
    int32_t col = apply(g, WL_OP_GATHER, &a, INS(m, minus1));
    assert_ivalues(g, col, DIMS(3, 6));
    int32_t far = scalar_i64(g, "far", 3);
    expect_error(g, WL_OP_GATHER, &a, INS(m, far), "index 3 in 'far' out of range for axis 1");
    a.axis = -3;
    expect_error(g, WL_OP_GATHER, &a, INS(m, minus1), "'axis' = -3 out of range for rank 2");
    wl_graph_free(g);
}

/* Resize by scales or sizes, DepthToSpace, Pad (negative pads crop). */
static void test_resize_depth_to_space_pad(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 16, 5, 7));
    int32_t roi = list_f32(g, "roi", NULL, 0);
    int32_t scales = list_f32(g, "scales", (double[]){1, 1, 2, 2.5}, 4);
    /* floor(5 * 2) = 10, floor(7 * 2.5) = 17. */
    assert_shape(g, apply(g, WL_OP_RESIZE, NULL, INS(x, roi, scales)), DIMS(1, 16, 10, 17));
    int32_t no_scales = list_f32(g, "no_scales", NULL, 0);
    int32_t sizes = list_i64(g, "sizes", DIMS(1, 16, 9, 9));
    assert_shape(g, apply(g, WL_OP_RESIZE, NULL, INS(x, roi, no_scales, sizes)), DIMS(1, 16, 9, 9));
    expect_error(g, WL_OP_RESIZE, NULL, INS(x, roi, no_scales), "neither 'scales' nor 'sizes'");

    wl_attrs a = defaults(WL_OP_DEPTH_TO_SPACE);
    a.blocksize = 2;
    assert_shape(g, apply(g, WL_OP_DEPTH_TO_SPACE, &a, INS(x)), DIMS(1, 4, 10, 14));
    a.blocksize = 3;
    expect_error(g, WL_OP_DEPTH_TO_SPACE, &a, INS(x), "not a multiple of blocksize^2 = 9");
    a.blocksize = 0;
    expect_error(g, WL_OP_DEPTH_TO_SPACE, &a, INS(x), "'blocksize' = 0 is invalid");

    int32_t pads = list_i64(g, "pads", DIMS(0, 0, 1, 2, 0, 0, 3, -1));
    assert_shape(g, apply(g, WL_OP_PAD, NULL, INS(x, pads)), DIMS(1, 16, 9, 8));
    /* Folded constant pad: [1, 2] padded 2 before, 1 after with 9. */
    int32_t v = list_i64(g, "v", DIMS(1, 2));
    int32_t p21 = list_i64(g, "p21", DIMS(2, 1));
    int32_t nine = scalar_i64(g, "nine", 9);
    assert_ivalues(g, apply(g, WL_OP_PAD, NULL, INS(v, p21, nine)), DIMS(9, 9, 1, 2, 9));
    wl_graph_free(g);
}

/* -------------------------------------------------------------- folding */

/*
 * torch's dynamic flatten: Shape -> Gather(0) -> Unsqueeze -> Concat with
 * [-1] -> Reshape.  Everything up to the Reshape folds; the Reshape
 * learns its target.
 */
static void test_shape_chain_folds(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 3, 4, 5));
    int32_t shape = apply(g, WL_OP_SHAPE, NULL, INS(x));
    assert_ivalues(g, shape, DIMS(2, 3, 4, 5));
    assert_int_equal(g->tensors[shape].dtype, WL_DTYPE_I64);
    assert_true(producer_folded(g, shape));
    int32_t zero = scalar_i64(g, "zero", 0);
    int32_t batch = apply(g, WL_OP_GATHER, NULL, INS(shape, zero));
    assert_int_equal(g->tensors[batch].rank, 0);
    assert_ivalues(g, batch, DIMS(2));
    int32_t axes = list_i64(g, "axes", DIMS(0));
    int32_t batch1 = apply(g, WL_OP_UNSQUEEZE, NULL, INS(batch, axes));
    assert_ivalues(g, batch1, DIMS(2));
    int32_t minus1 = list_i64(g, "minus1", DIMS(-1));
    int32_t target = apply(g, WL_OP_CONCAT, NULL, INS(batch1, minus1));
    assert_ivalues(g, target, DIMS(2, -1));
    assert_true(producer_folded(g, target));
    int32_t y = apply(g, WL_OP_RESHAPE, NULL, INS(x, target));
    assert_shape(g, y, DIMS(2, 60));
    assert_false(producer_folded(g, y));

    /* Integer arithmetic on the shape: 60 / 4 = 15, 60 - 4 = 56. */
    int32_t four = scalar_i64(g, "four", 4);
    int32_t sixty = scalar_i64(g, "sixty", 60);
    assert_ivalues(g, apply(g, WL_OP_DIV, NULL, INS(sixty, four)), DIMS(15));
    assert_ivalues(g, apply(g, WL_OP_SUB, NULL, INS(sixty, four)), DIMS(56));
    assert_ivalues(g, apply(g, WL_OP_MUL, NULL, INS(shape, four)), DIMS(8, 12, 16, 20));
    int32_t z = scalar_i64(g, "z", 0);
    int32_t by_zero = apply(g, WL_OP_DIV, NULL, INS(sixty, z));
    assert_null(g->tensors[by_zero].ivalues); /* not folded, not an error */
    assert_false(producer_folded(g, by_zero));

    /* Cast to float, then Sqrt: values move to fvalues. */
    wl_attrs a = defaults(WL_OP_CAST);
    a.to = WL_DTYPE_F32;
    int32_t f = apply(g, WL_OP_CAST, &a, INS(sixty));
    int32_t quarter = apply(g, WL_OP_DIV, NULL, INS(f, four));
    assert_non_null(g->tensors[quarter].fvalues);
    assert_true(g->tensors[quarter].fvalues[0] == 15.0);
    int32_t root = apply(g, WL_OP_SQRT, NULL, INS(f));
    assert_true(g->tensors[root].fvalues[0] > 7.745 && g->tensors[root].fvalues[0] < 7.746);

    /* Equal / Where on ints: where(shape == 3, 1, shape). */
    int32_t three = scalar_i64(g, "three", 3);
    int32_t one = scalar_i64(g, "one", 1);
    int32_t eq = apply(g, WL_OP_EQUAL, NULL, INS(shape, three));
    assert_ivalues(g, eq, DIMS(0, 1, 0, 0));
    assert_ivalues(g, apply(g, WL_OP_WHERE, NULL, INS(eq, one, shape)), DIMS(2, 1, 4, 5));
    wl_graph_free(g);
}

/*
 * Elementwise folding: int64 stays exact (2^53 + 1 survives Max and
 * Where, which a detour through double would round), results that do not
 * fit or divide leave the op unfolded, and floating operands follow IEEE.
 */
static void test_elementwise_folding(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    const int64_t big = 9007199254740993; /* 2^53 + 1: no double holds it */
    int32_t p = list_i64(g, "p", DIMS(big, -7, 0));
    int32_t q = list_i64(g, "q", DIMS(big - 1, 2, 5));
    int32_t r = list_i64(g, "r", DIMS(3, -9, 1));
    assert_ivalues(g, apply(g, WL_OP_MAX, NULL, INS(p, q, r)), DIMS(big, 2, 5));
    assert_ivalues(g, apply(g, WL_OP_MIN, NULL, INS(p, q, r)), DIMS(3, -9, 0));
    assert_ivalues(g, apply(g, WL_OP_MIN, NULL, INS(q)), DIMS(big - 1, 2, 5));
    assert_ivalues(g, apply(g, WL_OP_LESS, NULL, INS(q, p)), DIMS(1, 0, 0));
    assert_ivalues(g, apply(g, WL_OP_GREATER, NULL, INS(q, p)), DIMS(0, 1, 1));
    assert_ivalues(g, apply(g, WL_OP_RELU, NULL, INS(p)), DIMS(big, 0, 0));
    assert_ivalues(g, apply(g, WL_OP_ABS, NULL, INS(p)), DIMS(big, 7, 0));
    assert_ivalues(g, apply(g, WL_OP_NEG, NULL, INS(p)), DIMS(-big, 7, 0));
    int32_t two = scalar_i64(g, "two", 2);
    assert_ivalues(g, apply(g, WL_OP_DIV, NULL, INS(p, two)), DIMS(big / 2, -3, 0));
    assert_ivalues(g, apply(g, WL_OP_POW, NULL, INS(r, two)), DIMS(9, 81, 1));
    int32_t flags = tensor(g, "flags", WL_TENSOR_CONSTANT, WL_DTYPE_BOOL, DIMS(3));
    static const int64_t flag_values[] = {1, 0, 1};
    g->tensors[flags].ivalues = as_arena_memdup(&g->arena, flag_values, sizeof flag_values);
    int32_t negated = apply(g, WL_OP_NOT, NULL, INS(flags));
    assert_int_equal(g->tensors[negated].dtype, WL_DTYPE_BOOL);
    assert_ivalues(g, negated, DIMS(0, 1, 0));
    assert_ivalues(g, apply(g, WL_OP_WHERE, NULL, INS(flags, p, q)), DIMS(big, 2, 0));

    /* Out of int64, or no integer result: unfolded, not an error. */
    int32_t max = scalar_i64(g, "max", INT64_MAX);
    int32_t min = scalar_i64(g, "min", INT64_MIN);
    int32_t minus1 = scalar_i64(g, "minus1", -1);
    int32_t sixty_four = scalar_i64(g, "sixty_four", 64);
    int32_t unfolded[] = {
        apply(g, WL_OP_ADD, NULL, INS(max, max)),
        apply(g, WL_OP_SUB, NULL, INS(min, two)),
        apply(g, WL_OP_MUL, NULL, INS(max, two)),
        apply(g, WL_OP_DIV, NULL, INS(min, minus1)),
        apply(g, WL_OP_POW, NULL, INS(two, sixty_four)),
        apply(g, WL_OP_POW, NULL, INS(two, minus1)),
        apply(g, WL_OP_NEG, NULL, INS(min)),
        apply(g, WL_OP_ABS, NULL, INS(min)),
        apply(g, WL_OP_SQRT, NULL, INS(two)), /* computed on doubles only */
    };
    for (size_t i = 0; i < sizeof unfolded / sizeof *unfolded; i++) {
        assert_null(g->tensors[unfolded[i]].ivalues);
        assert_false(producer_folded(g, unfolded[i]));
    }

    /* Floating operands: IEEE comparisons (NaN equals nothing), float math,
     * an int operand promoted. */
    int32_t f = list_f32(g, "f", (double[]){-1.5, 0.25, NAN}, 3);
    int32_t h = list_f32(g, "h", (double[]){2.0, 0.25, NAN}, 3);
    assert_ivalues(g, apply(g, WL_OP_EQUAL, NULL, INS(f, h)), DIMS(0, 1, 0));
    const double *v = g->tensors[apply(g, WL_OP_RELU, NULL, INS(f))].fvalues;
    assert_true(v[0] == 0.0 && v[1] == 0.25);
    v = g->tensors[apply(g, WL_OP_MAX, NULL, INS(h, f))].fvalues;
    assert_true(v[0] == 2.0 && v[1] == 0.25);
    v = g->tensors[apply(g, WL_OP_MUL, NULL, INS(f, two))].fvalues;
    assert_true(v[0] == -3.0 && v[1] == 0.5);
    v = g->tensors[apply(g, WL_OP_RECIPROCAL, NULL, INS(h))].fvalues;
    assert_true(v[0] == 0.5 && v[1] == 4.0);
    int32_t zeros = apply(g, WL_OP_SUB, NULL, INS(h, h));
    v = g->tensors[apply(g, WL_OP_SIGMOID, NULL, INS(zeros))].fvalues;
    assert_true(v[0] == 0.5 && v[1] == 0.5);
    wl_graph_free(g);
}

/* The float values of tensor t (after apply(), which may move
 * g->tensors, has returned t). */
static const double *fvalues_of(const wl_graph *g, int32_t t)
{
    return g->tensors[t].fvalues;
}

/* The rank of tensor t, likewise. */
static int rank_of(const wl_graph *g, int32_t t)
{
    return g->tensors[t].rank;
}

/* Mod (both signs conventions), Sign, Sum/Mean, logic and the
 * or-equal comparisons fold exactly on int64; float math on doubles;
 * broadcasting shapes as for every elementwise op. */
static void test_more_elementwise(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t p = list_i64(g, "p", DIMS(7, -7, 7, -7));
    int32_t q = list_i64(g, "q", DIMS(3, 3, -3, -3));
    assert_ivalues(g, apply(g, WL_OP_MOD, NULL, INS(p, q)), DIMS(1, 2, -2, -1));
    wl_attrs a = defaults(WL_OP_MOD);
    a.fmod = 1;
    assert_ivalues(g, apply(g, WL_OP_MOD, &a, INS(p, q)), DIMS(1, -1, 1, -1));
    int32_t zero = scalar_i64(g, "zero", 0);
    int32_t by_zero = apply(g, WL_OP_MOD, NULL, INS(p, zero));
    assert_shape(g, by_zero, DIMS(4));
    assert_false(producer_folded(g, by_zero));
    assert_ivalues(g, apply(g, WL_OP_SIGN, NULL, INS(q)), DIMS(1, 1, -1, -1));
    assert_ivalues(g, apply(g, WL_OP_SUM, NULL, INS(p, q, q)), DIMS(13, -1, 1, -13));
    assert_ivalues(g, apply(g, WL_OP_GREATER_OR_EQUAL, NULL, INS(p, q)), DIMS(1, 0, 1, 0));
    assert_ivalues(g, apply(g, WL_OP_LESS_OR_EQUAL, NULL, INS(q, q)), DIMS(1, 1, 1, 1));
    int32_t gt = apply(g, WL_OP_GREATER, NULL, INS(p, zero));
    int32_t lt = apply(g, WL_OP_LESS, NULL, INS(q, zero));
    int32_t both = apply(g, WL_OP_AND, NULL, INS(gt, lt));
    assert_int_equal(g->tensors[both].dtype, WL_DTYPE_BOOL);
    assert_ivalues(g, both, DIMS(0, 0, 1, 0));
    assert_ivalues(g, apply(g, WL_OP_OR, NULL, INS(gt, lt)), DIMS(1, 0, 1, 1));
    assert_ivalues(g, apply(g, WL_OP_XOR, NULL, INS(gt, lt)), DIMS(1, 0, 0, 1));

    int32_t f = list_f32(g, "f", (double[]){-2.5, 0.5, 1.5, 5.5}, 4);
    int32_t m = list_f32(g, "m", (double[]){2, 2, -2, 2}, 4);
    a.fmod = 1;
    const double *v = fvalues_of(g, apply(g, WL_OP_MOD, &a, INS(f, m)));
    assert_true(v[0] == -0.5 && v[1] == 0.5 && v[2] == 1.5 && v[3] == 1.5);
    v = fvalues_of(g, apply(g, WL_OP_ROUND, NULL, INS(f)));
    assert_true(v[0] == -2.0 && v[1] == 0.0 && v[2] == 2.0 && v[3] == 6.0);
    v = fvalues_of(g, apply(g, WL_OP_FLOOR, NULL, INS(f)));
    assert_true(v[0] == -3.0 && v[3] == 5.0);
    v = fvalues_of(g, apply(g, WL_OP_CEIL, NULL, INS(f)));
    assert_true(v[0] == -2.0 && v[3] == 6.0);
    v = fvalues_of(g, apply(g, WL_OP_MEAN, NULL, INS(f, m)));
    assert_true(v[0] == -0.25 && v[2] == -0.25);
    int32_t zf = apply(g, WL_OP_SUB, NULL, INS(f, f));
    v = fvalues_of(g, apply(g, WL_OP_SIN, NULL, INS(zf)));
    assert_true(v[0] == 0.0);
    v = fvalues_of(g, apply(g, WL_OP_COS, NULL, INS(zf)));
    assert_true(v[0] == 1.0);
    v = fvalues_of(g, apply(g, WL_OP_SOFTPLUS, NULL, INS(zf)));
    assert_true(fabs(v[0] - log(2.0)) < 1e-15);
    static const wl_op_kind zero_at_zero[] = {
        WL_OP_TAN, WL_OP_ASIN, WL_OP_ATAN, WL_OP_SINH, WL_OP_ASINH, WL_OP_ATANH, WL_OP_SOFTSIGN,
    };
    for (size_t i = 0; i < sizeof zero_at_zero / sizeof *zero_at_zero; i++) {
        int32_t y = apply(g, zero_at_zero[i], NULL, INS(zf)); /* may move g->tensors */
        assert_true(g->tensors[y].fvalues[0] == 0.0);
    }
    int32_t ones = apply(g, WL_OP_COSH, NULL, INS(zf));
    assert_true(g->tensors[ones].fvalues[0] == 1.0);
    int32_t acosh = apply(g, WL_OP_ACOSH, NULL, INS(ones));
    int32_t acos_ = apply(g, WL_OP_ACOS, NULL, INS(ones));
    assert_true(g->tensors[acosh].fvalues[0] == 0.0 && g->tensors[acos_].fvalues[0] == 0.0);
    int32_t odd = list_f32(g, "odd", (double[]){NAN, INFINITY, -INFINITY, 1.0}, 4);
    int32_t nan = apply(g, WL_OP_IS_NAN, NULL, INS(odd));
    assert_int_equal(g->tensors[nan].dtype, WL_DTYPE_BOOL);
    assert_ivalues(g, nan, DIMS(1, 0, 0, 0));
    assert_ivalues(g, apply(g, WL_OP_IS_INF, NULL, INS(odd)), DIMS(0, 1, 1, 0));

    /* Shapes broadcast; activations with attributes are not folded. */
    int32_t x = input(g, "x", DIMS(2, 1, 5));
    int32_t y = input(g, "y", DIMS(3, 1));
    assert_shape(g, apply(g, WL_OP_SUM, NULL, INS(x, y, x)), DIMS(2, 3, 5));
    assert_shape(g, apply(g, WL_OP_MOD, NULL, INS(x, y)), DIMS(2, 3, 5));
    assert_shape(g, apply(g, WL_OP_ELU, NULL, INS(x)), DIMS(2, 1, 5));
    wl_attrs selu = defaults(WL_OP_SELU);
    assert_true(selu.alpha > 1.6732f && selu.alpha < 1.6733f);
    assert_true(selu.gamma > 1.0507f && selu.gamma < 1.0508f);
    assert_false(producer_folded(g, apply(g, WL_OP_SELU, &selu, INS(f))));
    expect_error(g, WL_OP_AND, NULL, INS(x, f), "cannot broadcast");
    wl_graph_free(g);
}

/* The other reductions share ReduceSum's rule (axes as input from opset
 * 18, as attribute before); ArgMax/ArgMin give int64 indices;
 * LogSoftmax, Instance- and GroupNormalization keep the shape; CumSum
 * too; Size folds from the shape alone. */
static void test_more_reductions_and_norms(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 6, 4, 4));
    int32_t axes = list_i64(g, "axes", DIMS(2, 3));
    static const wl_op_kind reductions[] = {
        WL_OP_REDUCE_MAX, WL_OP_REDUCE_MIN,        WL_OP_REDUCE_PROD,    WL_OP_REDUCE_L1,
        WL_OP_REDUCE_L2,  WL_OP_REDUCE_SUM_SQUARE, WL_OP_REDUCE_LOG_SUM, WL_OP_REDUCE_LOG_SUM_EXP,
    };
    for (size_t i = 0; i < sizeof reductions / sizeof *reductions; i++) {
        assert_shape(g, apply(g, reductions[i], NULL, INS(x, axes)), DIMS(2, 6, 1, 1));
        wl_attrs a = defaults(reductions[i]);
        a.n_axes = 1;
        a.axes[0] = 1;
        a.keepdims = 0;
        assert_shape(g, apply(g, reductions[i], &a, INS(x)), DIMS(2, 4, 4));
        assert_int_equal(wl_op_vector_class(reductions[i]), WL_VEC_PER_INPUT);
    }
    wl_attrs a = defaults(WL_OP_ARG_MAX);
    a.axis = 1;
    int32_t arg = apply(g, WL_OP_ARG_MAX, &a, INS(x));
    assert_shape(g, arg, DIMS(2, 1, 4, 4));
    assert_int_equal(g->tensors[arg].dtype, WL_DTYPE_I64);
    a.keepdims = 0;
    a.axis = -1;
    assert_shape(g, apply(g, WL_OP_ARG_MIN, &a, INS(x)), DIMS(2, 6, 4));
    a.axis = 4;
    expect_error(g, WL_OP_ARG_MIN, &a, INS(x), "attribute 'axis'");

    assert_int_equal(defaults(WL_OP_LOG_SOFTMAX).axis, -1);
    wl_attrs lrn = defaults(WL_OP_LRN);
    assert_true(lrn.alpha == 0.0001f && lrn.beta == 0.75f);
    expect_error(g, WL_OP_LRN, &lrn, INS(x), "attribute 'size' = 0 is invalid");
    lrn.lrn_size = 5;
    assert_shape(g, apply(g, WL_OP_LRN, &lrn, INS(x)), DIMS(2, 6, 4, 4));
    assert_shape(g, apply(g, WL_OP_MEAN_VARIANCE_NORM, NULL, INS(x)), DIMS(2, 6, 4, 4));
    assert_shape(g, apply(g, WL_OP_LP_NORM, NULL, INS(x)), DIMS(2, 6, 4, 4));
    assert_shape(g, apply(g, WL_OP_MISH, NULL, INS(x)), DIMS(2, 6, 4, 4));
    assert_shape(g, apply(g, WL_OP_LOG_SOFTMAX, NULL, INS(x)), DIMS(2, 6, 4, 4));

    int32_t c6 = weight(g, "c6", DIMS(6));
    int32_t c3 = weight(g, "c3", DIMS(3));
    int32_t c4 = weight(g, "c4", DIMS(4));
    assert_shape(g, apply(g, WL_OP_INSTANCE_NORM, NULL, INS(x, c6, c6)), DIMS(2, 6, 4, 4));
    expect_error(g, WL_OP_INSTANCE_NORM, NULL, INS(x, c3, c6), "expected [6]");
    wl_attrs gn = defaults(WL_OP_GROUP_NORM);
    gn.num_groups = 3;
    assert_shape(g, apply(g, WL_OP_GROUP_NORM, &gn, INS(x, c3, c3)), DIMS(2, 6, 4, 4));
    assert_shape(g, apply(g, WL_OP_GROUP_NORM, &gn, INS(x, c6, c6)), DIMS(2, 6, 4, 4));
    expect_error(g, WL_OP_GROUP_NORM, &gn, INS(x, c4, c3), "expected [3]");
    gn.num_groups = 4;
    expect_error(g, WL_OP_GROUP_NORM, &gn, INS(x, c4, c4), "'num_groups' = 4 does not divide");

    int32_t one = scalar_i64(g, "one", 1);
    assert_shape(g, apply(g, WL_OP_CUM_SUM, NULL, INS(x, one)), DIMS(2, 6, 4, 4));
    int32_t five = scalar_i64(g, "five", 5);
    expect_error(g, WL_OP_CUM_SUM, NULL, INS(x, five), "input 'axis'");

    int32_t size = apply(g, WL_OP_SIZE, NULL, INS(x));
    assert_int_equal(g->tensors[size].rank, 0);
    assert_ivalues(g, size, DIMS(192));
    assert_true(producer_folded(g, size));
    wl_graph_free(g);
}

/* SpaceToDepth, GatherElements, Trilu fold as data movement; TopK takes
 * K from the input (opset 10+) or the attribute; NonZero folds a
 * constant input and names the node otherwise; ScatterND and GridSample
 * shapes. */
static void test_selection_ops(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    /* [1, 1, 2, 2] -> [1, 4, 1, 1]: the block's elements become channels. */
    int32_t img = const_i64(g, "img", (int64_t[]){1, 1, 2, 2}, 4, (int64_t[]){1, 2, 3, 4}, 4);
    wl_attrs a = defaults(WL_OP_SPACE_TO_DEPTH);
    a.blocksize = 2;
    int32_t s2d = apply(g, WL_OP_SPACE_TO_DEPTH, &a, INS(img));
    assert_shape(g, s2d, DIMS(1, 4, 1, 1));
    assert_ivalues(g, s2d, DIMS(1, 2, 3, 4));
    int32_t x = input(g, "x", DIMS(1, 3, 8, 6));
    assert_shape(g, apply(g, WL_OP_SPACE_TO_DEPTH, &a, INS(x)), DIMS(1, 12, 4, 3));
    a.blocksize = 4;
    expect_error(g, WL_OP_SPACE_TO_DEPTH, &a, INS(x), "not multiples of 4");

    /* GatherElements along axis 1 of [[1,2],[3,4]] with [[0,0],[1,0]]. */
    int32_t m = const_i64(g, "m", (int64_t[]){2, 2}, 2, (int64_t[]){1, 2, 3, 4}, 4);
    int32_t at = const_i64(g, "at", (int64_t[]){2, 2}, 2, (int64_t[]){0, 0, 1, 0}, 4);
    a = defaults(WL_OP_GATHER_ELEMENTS);
    a.axis = 1;
    assert_ivalues(g, apply(g, WL_OP_GATHER_ELEMENTS, &a, INS(m, at)), DIMS(1, 1, 4, 3));
    int32_t far = const_i64(g, "far", (int64_t[]){2, 1}, 2, (int64_t[]){0, 2}, 2);
    expect_error(g, WL_OP_GATHER_ELEMENTS, &a, INS(m, far), "index 2 in 'far' out of range");

    /* Trilu: upper keeps j >= i + k, lower j <= i + k. */
    assert_ivalues(g, apply(g, WL_OP_TRILU, NULL, INS(m)), DIMS(1, 2, 0, 4));
    a = defaults(WL_OP_TRILU);
    assert_int_equal(a.upper, 1);
    a.upper = 0;
    int32_t minus1 = scalar_i64(g, "minus1", -1);
    assert_ivalues(g, apply(g, WL_OP_TRILU, &a, INS(m, minus1)), DIMS(0, 0, 3, 0));
    assert_shape(g, apply(g, WL_OP_TRILU, &a, INS(x)), DIMS(1, 3, 8, 6));

    /* TopK: values and int64 indices with K along the last axis. */
    int32_t k = list_i64(g, "k", DIMS(2));
    int32_t out[2];
    as_status st;
    assert_int_equal(add_and_infer(g, WL_OP_TOP_K, NULL, INS(x, k), 2, out, &st), AS_OK);
    assert_shape(g, out[0], DIMS(1, 3, 8, 2));
    assert_shape(g, out[1], DIMS(1, 3, 8, 2));
    assert_int_equal(g->tensors[out[1]].dtype, WL_DTYPE_I64);
    a = defaults(WL_OP_TOP_K);
    a.k = 5;
    a.axis = 2;
    assert_shape(g, apply(g, WL_OP_TOP_K, &a, INS(x)), DIMS(1, 3, 5, 6));
    a.k = 9;
    expect_error(g, WL_OP_TOP_K, &a, INS(x), "K = 9 is outside [0, 8]");
    int32_t unknown_k = input(g, "unknown_k", DIMS(1));
    expect_error(g, WL_OP_TOP_K, NULL, INS(x, unknown_k), "K input 'unknown_k' has no known");

    /* NonZero of a constant folds to [rank, count]; of an activation it
     * cannot be shaped. */
    int32_t nz = apply(g, WL_OP_NON_ZERO, NULL, INS(at));
    assert_shape(g, nz, DIMS(2, 1));
    assert_ivalues(g, nz, DIMS(1, 0));
    as_code rc = add_and_infer(g, WL_OP_NON_ZERO, NULL, INS(x), 1, out, &st);
    assert_int_equal(rc, AS_EINVAL);
    assert_non_null(strstr(st.message, "test.onnx"));
    assert_non_null(strstr(st.message, "(NonZero)"));
    assert_non_null(strstr(st.message, "depends on the values of input 'x'"));

    /* ScatterND: data's shape; updates = indices[:-1] + data[k:]. */
    int32_t data = input(g, "data", DIMS(4, 5, 6));
    int32_t idx = tensor(g, "idx", WL_TENSOR_INPUT, WL_DTYPE_I64, DIMS(3, 2));
    int32_t upd = input(g, "upd", DIMS(3, 6));
    assert_shape(g, apply(g, WL_OP_SCATTER_ND, NULL, INS(data, idx, upd)), DIMS(4, 5, 6));
    expect_error(g, WL_OP_SCATTER_ND, NULL, INS(data, idx, x), "updates 'x' do not have");

    /* ScatterElements: data's shape; GatherND: indices[:-1] + data[b+k:]. */
    int32_t pos = tensor(g, "pos", WL_TENSOR_INPUT, WL_DTYPE_I64, DIMS(2, 5, 6));
    int32_t vals = input(g, "vals", DIMS(2, 5, 6));
    assert_shape(g, apply(g, WL_OP_SCATTER_ELEMENTS, NULL, INS(data, pos, vals)), DIMS(4, 5, 6));
    expect_error(g, WL_OP_SCATTER_ELEMENTS, NULL, INS(data, pos, upd), "must have one shape");
    assert_shape(g, apply(g, WL_OP_GATHER_ND, NULL, INS(data, idx)), DIMS(3, 6));
    int32_t idx1 = tensor(g, "idx1", WL_TENSOR_INPUT, WL_DTYPE_I64, DIMS(4, 1));
    a = defaults(WL_OP_GATHER_ND);
    a.batch_dims = 1;
    assert_shape(g, apply(g, WL_OP_GATHER_ND, &a, INS(data, idx1)), DIMS(4, 6));
    int32_t idx4 = tensor(g, "idx4", WL_TENSOR_INPUT, WL_DTYPE_I64, DIMS(2, 4));
    expect_error(g, WL_OP_GATHER_ND, NULL, INS(data, idx4), "end in 4; at most 3");

    /* GridSample: [N, C, Ho, Wo] from the grid. */
    int32_t grid = input(g, "grid", DIMS(1, 5, 7, 2));
    assert_shape(g, apply(g, WL_OP_GRID_SAMPLE, NULL, INS(x, grid)), DIMS(1, 3, 5, 7));
    expect_error(g, WL_OP_GRID_SAMPLE, NULL, INS(x, data), "expected X [N, C, H, W]");
    wl_graph_free(g);
}

/* Einsum with an ellipsis string set on attribute 'equation'. */
static wl_attrs einsum_attrs(const char *equation)
{
    wl_attrs a = defaults(WL_OP_EINSUM);
    snprintf(a.equation, sizeof a.equation, "%s", equation);
    return a;
}

/* The MACs of the problem of the op that writes t (-1: no problem). */
static int64_t producer_macs(const wl_graph *g, int32_t t)
{
    wl_problem p;
    as_status st;
    as_status_clear(&st);
    if (wl_op_problem(g, g->tensors[t].producer, &p, &st) != AS_OK)
        return -1;
    return wl_problem_macs(&p);
}

/* Einsum: explicit and implicit outputs, ellipsis broadcasting; a
 * two-operand contraction is a matmul problem with exact MACs, other
 * equations have none. */
static void test_einsum(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t q = input(g, "q", DIMS(2, 4, 16, 8));
    int32_t k = input(g, "k", DIMS(2, 4, 32, 8));
    wl_attrs a = einsum_attrs("bhqd,bhkd->bhqk");
    int32_t s = apply(g, WL_OP_EINSUM, &a, INS(q, k));
    assert_shape(g, s, DIMS(2, 4, 16, 32));
    assert_int_equal(producer_macs(g, s), 2 * 4 * 16 * 32 * 8);
    /* Implicit output: letters used once, alphabetically ("ik"). */
    int32_t m = input(g, "m", DIMS(3, 5));
    int32_t w = weight(g, "w", DIMS(5, 7));
    a = einsum_attrs("ij,jk");
    int32_t mk = apply(g, WL_OP_EINSUM, &a, INS(m, w));
    assert_shape(g, mk, DIMS(3, 7));
    assert_int_equal(producer_macs(g, mk), 3 * 5 * 7);
    a = einsum_attrs("ji,jk");
    assert_shape(g, apply(g, WL_OP_EINSUM, &a, INS(m, m)), DIMS(5, 5));
    /* Ellipsis dims broadcast and lead the output. */
    int32_t e = input(g, "e", DIMS(6, 1, 3, 5));
    int32_t f = input(g, "f", DIMS(4, 5, 2));
    a = einsum_attrs("...ij,...jk->...ik");
    int32_t ef = apply(g, WL_OP_EINSUM, &a, INS(e, f));
    assert_shape(g, ef, DIMS(6, 4, 3, 2));
    assert_int_equal(producer_macs(g, ef), 6 * 4 * 3 * 5 * 2);
    a = einsum_attrs("...ij,...jk");
    assert_shape(g, apply(g, WL_OP_EINSUM, &a, INS(e, f)), DIMS(6, 4, 3, 2));
    /* One operand: a transpose and a trace infer, but are no contraction. */
    a = einsum_attrs("ij->ji");
    int32_t t = apply(g, WL_OP_EINSUM, &a, INS(m));
    assert_shape(g, t, DIMS(5, 3));
    assert_int_equal(producer_macs(g, t), -1);
    int32_t sq = input(g, "sq", DIMS(4, 4));
    a = einsum_attrs("ii");
    assert_int_equal(rank_of(g, apply(g, WL_OP_EINSUM, &a, INS(sq))), 0);
    a = einsum_attrs("ij,jk->i");
    assert_shape(g, apply(g, WL_OP_EINSUM, &a, INS(m, w)), DIMS(3));
    /* Errors name the equation. */
    a = einsum_attrs("ij,kj->ik");
    expect_error(g, WL_OP_EINSUM, &a, INS(m, w), "dim 1 of input 'w' has size 7, elsewhere 5");
    a = einsum_attrs("ijk,jk");
    expect_error(g, WL_OP_EINSUM, &a, INS(m, w), "term 0 of equation 'ijk,jk' does not fit");
    a = einsum_attrs("ij->iz");
    expect_error(g, WL_OP_EINSUM, &a, INS(m), "is in no input");
    a = einsum_attrs("ij");
    expect_error(g, WL_OP_EINSUM, &a, INS(m, w), "one term per input");
    wl_graph_free(g);
}

/* ConstantOfShape, Range and Expand/Tile make and fold values. */
static void test_constant_of_shape_range_expand(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t shape = list_i64(g, "shape", DIMS(2, 3));
    wl_attrs a = defaults(WL_OP_CONSTANT_OF_SHAPE);
    a.value = 1;
    int32_t ones = apply(g, WL_OP_CONSTANT_OF_SHAPE, &a, INS(shape));
    assert_shape(g, ones, DIMS(2, 3));
    assert_int_equal(g->tensors[ones].dtype, WL_DTYPE_F32);
    assert_non_null(g->tensors[ones].fvalues);
    assert_true(g->tensors[ones].fvalues[5] == 1.0);

    int32_t start = scalar_i64(g, "start", 1);
    int32_t limit = scalar_i64(g, "limit", 10);
    int32_t delta = scalar_i64(g, "delta", 4);
    int32_t r = apply(g, WL_OP_RANGE, NULL, INS(start, limit, delta));
    assert_ivalues(g, r, DIMS(1, 5, 9));
    int32_t down = scalar_i64(g, "down", -4);
    assert_shape(g, apply(g, WL_OP_RANGE, NULL, INS(start, limit, down)), DIMS(0));
    int32_t zero = scalar_i64(g, "zero", 0);
    expect_error(g, WL_OP_RANGE, NULL, INS(start, limit, zero), "'delta' is 0");

    /* Expand [3,1] to [2,1,4]: [2,3,4]; values repeat along the new dims. */
    int32_t col = const_i64(g, "col", (int64_t[]){3, 1}, 2, (int64_t[]){7, 8, 9}, 3);
    int32_t to = list_i64(g, "to", DIMS(2, 1, 2));
    int32_t e = apply(g, WL_OP_EXPAND, NULL, INS(col, to));
    assert_shape(g, e, DIMS(2, 3, 2));
    assert_ivalues(g, e, DIMS(7, 7, 8, 8, 9, 9, 7, 7, 8, 8, 9, 9));
    int32_t tiles = list_i64(g, "tiles", DIMS(1, 2));
    assert_ivalues(g, apply(g, WL_OP_TILE, NULL, INS(col, tiles)), DIMS(7, 7, 8, 8, 9, 9));
    wl_graph_free(g);
}

/*
 * Constant subgraphs too large to keep values for (Swin's shifted-window
 * mask: ConstantOfShape, ScatterND, Sub, Equal, Where over 64x49x49) fold
 * without values: known, zero cost, no values; an op also reading a run
 * time tensor does not fold; an undefined value (division by zero) is
 * still left to run time; re-inference forgets it all.
 */
static void test_constant_subgraph_folds_without_values(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t shape = list_i64(g, "shape", DIMS(64, 49, 49)); /* 153,664 > WL_MAX_FOLD_ELEMS */
    wl_attrs a = defaults(WL_OP_CONSTANT_OF_SHAPE);
    int32_t mask = apply(g, WL_OP_CONSTANT_OF_SHAPE, &a, INS(shape));
    assert_shape(g, mask, DIMS(64, 49, 49));
    int32_t zero = list_f32(g, "zero", (double[]){0.0}, 1);
    int32_t is_zero = apply(g, WL_OP_EQUAL, NULL, INS(mask, zero));
    int32_t minus100 = list_f32(g, "minus100", (double[]){-100.0}, 1);
    int32_t bias = apply(g, WL_OP_WHERE, NULL, INS(is_zero, zero, minus100));
    int32_t known[] = {mask, is_zero, bias};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        const wl_tensor *t = &g->tensors[known[i]];
        assert_true(producer_folded(g, known[i]));
        assert_true(wl_tensor_is_known(t) && t->known_unvalued);
        assert_true(t->ivalues == NULL && t->fvalues == NULL);
    }
    /* Reshape to [1,64,1,49,49] and add to the attention scores. */
    int32_t to = list_i64(g, "to", DIMS(1, 64, 1, 49, 49));
    int32_t bias5 = apply(g, WL_OP_RESHAPE, NULL, INS(bias, to));
    assert_true(producer_folded(g, bias5));
    int32_t x = input(g, "x", DIMS(1, 64, 3, 49, 49));
    int32_t y = apply(g, WL_OP_ADD, NULL, INS(x, bias5));
    assert_false(producer_folded(g, y));
    assert_false(wl_tensor_is_known(&g->tensors[y]));
    /* Small and defined: values as before; undefined: not folded. */
    int32_t sixty = scalar_i64(g, "sixty", 60), z = scalar_i64(g, "z", 0);
    assert_false(producer_folded(g, apply(g, WL_OP_DIV, NULL, INS(sixty, z))));
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.n_ops, 2); /* the Add and the division by zero */
    /* A re-run of inference starts from the constants again. */
    g->tensors[bias].known_unvalued = false;
    g->tensors[y].known_unvalued = true;
    as_status st;
    assert_int_equal(wl_graph_infer(g, &st), AS_OK);
    assert_true(g->tensors[bias].known_unvalued);
    assert_false(g->tensors[y].known_unvalued);
    wl_graph_free(g);
}

/* The op that writes tensor t. */
static const wl_op *producer_of(const wl_graph *g, int32_t t)
{
    return &g->ops[g->tensors[t].producer];
}

/*
 * Nodes that copy their input unchanged are views (wl_op.identity): a Pad
 * by zeros (Swin pads by (7 - 56 % 7) % 7), a Slice of everything, a Cast
 * to the same type (GPT-2's attn_weights.type(value.dtype)), Expand and
 * Tile to the same shape, the identity Transpose.  Near misses are not:
 * a reversal, a swap of two equal axes, a real Cast, a real Pad.  A view
 * moves no DRAM bytes in the statistics.
 */
static void test_identity_nodes_are_views(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 8, 8, 4));
    int32_t zeros = list_i64(g, "zeros", DIMS(0, 0, 0, 0, 0, 0, 0, 0));
    int32_t pad0 = apply(g, WL_OP_PAD, NULL, INS(x, zeros));
    int32_t ones = list_i64(g, "ones", DIMS(0, 0, 0, 0, 0, 1, 1, 0));
    int32_t pad1 = apply(g, WL_OP_PAD, NULL, INS(x, ones));
    assert_true(producer_of(g, pad0)->identity);
    assert_int_equal(wl_op_category_of(producer_of(g, pad0)), WL_CAT_VIEW);
    assert_false(producer_of(g, pad1)->identity);
    assert_int_equal(wl_op_category_of(producer_of(g, pad1)), WL_CAT_MOVE);

    int32_t s0 = list_i64(g, "s0", DIMS(0)), big = list_i64(g, "big", DIMS(INT64_MAX));
    int32_t ax1 = list_i64(g, "ax1", DIMS(1));
    assert_true(producer_of(g, apply(g, WL_OP_SLICE, NULL, INS(x, s0, big, ax1)))->identity);
    int32_t rs = list_i64(g, "rs", DIMS(-1)), re = list_i64(g, "re", DIMS(INT64_MIN));
    int32_t back = list_i64(g, "back", DIMS(-1));
    int32_t rev = apply(g, WL_OP_SLICE, NULL, INS(x, rs, re, ax1, back));
    assert_shape(g, rev, DIMS(1, 8, 8, 4));
    assert_false(producer_of(g, rev)->identity);

    wl_attrs a = defaults(WL_OP_CAST);
    a.to = WL_DTYPE_F32;
    assert_true(producer_of(g, apply(g, WL_OP_CAST, &a, INS(x)))->identity);
    a.to = WL_DTYPE_F16;
    assert_false(producer_of(g, apply(g, WL_OP_CAST, &a, INS(x)))->identity);

    int32_t same = list_i64(g, "same", DIMS(1, 8, 8, 4));
    assert_true(producer_of(g, apply(g, WL_OP_EXPAND, NULL, INS(x, same)))->identity);
    int32_t reps = list_i64(g, "reps", DIMS(1, 1, 1, 1));
    assert_true(producer_of(g, apply(g, WL_OP_TILE, NULL, INS(x, reps)))->identity);

    wl_attrs t = defaults(WL_OP_TRANSPOSE);
    t.n_perm = 4;
    for (int i = 0; i < 4; i++)
        t.perm[i] = i;
    assert_true(producer_of(g, apply(g, WL_OP_TRANSPOSE, &t, INS(x)))->identity);
    t.perm[1] = 2;
    t.perm[2] = 1; /* 8 and 8 swapped: same shape, not the same tensor */
    assert_false(producer_of(g, apply(g, WL_OP_TRANSPOSE, &t, INS(x)))->identity);

    /* Statistics: the DRAM bytes are those of the four ops that move data;
     * the six identities, which read and write as much, add none. */
    int64_t moving = 0, identities = 0;
    int n_identities = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        wl_op_stats os;
        wl_op_stats_get(g, o, &os);
        int64_t bytes = os.input_bytes + os.weight_bytes + os.output_bytes;
        if (g->ops[o].identity) {
            identities += bytes;
            n_identities++;
        } else {
            moving += bytes;
        }
    }
    assert_int_equal(n_identities, 6);
    assert_true(identities > 0);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_true(s.dram_bytes_unfused == moving);
    wl_graph_free(g);
}

/* ReduceSum takes axes as an input from opset 13, ReduceMean keeps the
 * attribute until 18; keepdims and noop_with_empty_axes. */
static void test_reduce_both_forms(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(2, 3, 4));
    int32_t axes = list_i64(g, "axes", DIMS(-1, 0));
    assert_shape(g, apply(g, WL_OP_REDUCE_SUM, NULL, INS(x, axes)), DIMS(1, 3, 1));
    wl_attrs a = defaults(WL_OP_REDUCE_MEAN);
    a.n_axes = 1;
    a.axes[0] = 1;
    a.keepdims = 0;
    assert_shape(g, apply(g, WL_OP_REDUCE_MEAN, &a, INS(x)), DIMS(2, 4));
    a.n_axes = 0; /* all axes */
    int32_t all = apply(g, WL_OP_REDUCE_MEAN, &a, INS(x));
    assert_int_equal(g->tensors[all].rank, 0);
    a = defaults(WL_OP_REDUCE_SUM);
    a.noop_with_empty_axes = 1;
    int32_t none = list_i64(g, "none", NULL, 0);
    assert_shape(g, apply(g, WL_OP_REDUCE_SUM, &a, INS(x, none)), DIMS(2, 3, 4));
    int32_t twice = list_i64(g, "twice", DIMS(1, -2));
    expect_error(g, WL_OP_REDUCE_SUM, NULL, INS(x, twice), "input 'axes' repeats axis -2");
    wl_graph_free(g);
}

/* Optional extra outputs: MaxPool's indices, Dropout's mask, LayerNorm's
 * statistics; a Constant op is folded by definition. */
static void test_extra_outputs_and_constant(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 4, 6, 6));
    int32_t out[3];
    as_status st;
    wl_attrs a = pool_attrs(WL_OP_MAX_POOL, 2, 2, 0, 0);
    assert_int_equal(add_and_infer(g, WL_OP_MAX_POOL, &a, INS(x), 2, out, &st), AS_OK);
    assert_shape(g, out[1], DIMS(1, 4, 3, 3));
    assert_int_equal(g->tensors[out[1]].dtype, WL_DTYPE_I64);
    assert_int_equal(add_and_infer(g, WL_OP_DROPOUT, NULL, INS(x), 2, out, &st), AS_OK);
    assert_shape(g, out[1], DIMS(1, 4, 6, 6));
    assert_int_equal(g->tensors[out[1]].dtype, WL_DTYPE_BOOL);
    int32_t gamma = weight(g, "gamma", DIMS(6, 6));
    a = defaults(WL_OP_LAYERNORM);
    a.axis = 2;
    assert_int_equal(add_and_infer(g, WL_OP_LAYERNORM, &a, INS(x, gamma), 3, out, &st), AS_OK);
    assert_shape(g, out[0], DIMS(1, 4, 6, 6));
    assert_shape(g, out[2], DIMS(1, 4, 1, 1));

    int32_t k = list_i64(g, "k", DIMS(5, 6));
    int32_t op = wl_add_op(g, WL_OP_CONSTANT, "const", NULL, 0, NULL, 1, &k, NULL, &st);
    assert_true(op >= 0);
    assert_int_equal(wl_infer_op(g, op, &st), AS_OK);
    assert_true(g->ops[op].folded);
    assert_ivalues(g, k, DIMS(5, 6));
    wl_graph_free(g);
}

/* ---------------------------------------------------------- robustness */

/* Sizes that overflow int64 and ranks past WL_MAX_RANK fail cleanly. */
static void test_overflow_and_rank_limits(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(4294967296, 1));
    int32_t to = list_i64(g, "to", DIMS(4294967296, 4294967296));
    int32_t out;
    as_status st;
    assert_int_equal(add_and_infer(g, WL_OP_EXPAND, NULL, INS(x, to), 1, &out, &st), AS_EINVAL);
    char expected[128];
    snprintf(expected, sizeof expected, "element count of output '%s' overflows 64 bits",
             g->tensors[out].name);
    assert_non_null(strstr(st.message, expected));
    int32_t huge = list_i64(g, "huge", DIMS(INT64_MAX, INT64_MAX));
    expect_error(g, WL_OP_TILE, NULL, INS(x, huge), "is negative or overflows");
    /* Unsqueeze beyond WL_MAX_RANK. */
    int32_t r8 = input(g, "r8", DIMS(1, 1, 1, 1, 1, 1, 1, 1));
    int32_t ax = list_i64(g, "ax", DIMS(0));
    expect_error(g, WL_OP_UNSQUEEZE, NULL, INS(r8, ax), "at most 8");
    wl_graph_free(g);
}

/* An unknown op passes its input's shape on, with a warning, unless the
 * importer already knows its output's shape. */
static void test_unknown_op(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    int32_t x = input(g, "x", DIMS(1, 8));
    int32_t y = tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_UNDEFINED, NULL, 0);
    int32_t z = tensor(g, "z", WL_TENSOR_ACTIVATION, WL_DTYPE_F32, DIMS(3, 3));
    as_status st;
    as_status_clear(&st);
    int32_t o1 = wl_add_op(g, WL_OP_UNKNOWN, "mystery", "FancyOp", 1, &x, 1, &y, NULL, &st);
    int32_t o2 = wl_add_op(g, WL_OP_UNKNOWN, "known", "FancyOp", 1, &y, 1, &z, NULL, &st);
    assert_int_equal(wl_graph_infer(g, &st), AS_OK);
    assert_shape(g, y, DIMS(1, 8));
    assert_shape(g, z, DIMS(3, 3));
    assert_int_equal(g->n_warnings, 1);
    assert_non_null(strstr(g->warnings[0], "'mystery' (FancyOp)"));
    assert_false(g->ops[o1].folded || g->ops[o2].folded);
    wl_graph_free(g);
}

/* ------------------------------------------------------ whole graphs */

/*
 * x -> Conv -> Relu -> Shape/Gather/Unsqueeze/Concat -> Reshape -> Gemm.
 * After a batch change on x, wl_graph_infer recomputes every activation
 * and every folded value.
 */
static void test_graph_reinfer_after_batch_change(void **state)
{
    (void)state;
    wl_graph *g = new_graph();
    as_status st;
    as_status_clear(&st);
    int32_t x = input(g, "x", DIMS(1, 3, 8, 8));
    int32_t w = weight(g, "w", DIMS(4, 3, 3, 3));
    int32_t fc = weight(g, "fc", DIMS(10, 256));
    int32_t zero = scalar_i64(g, "zero", 0);
    int32_t axes = list_i64(g, "axes", DIMS(0));
    int32_t minus1 = list_i64(g, "minus1", DIMS(-1));
    int32_t t[8];
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        t[i] = tensor(g, name, WL_TENSOR_ACTIVATION, WL_DTYPE_UNDEFINED, NULL, 0);
    }
    wl_attrs conv = conv_attrs(1, 1, 1, 1), gemm = defaults(WL_OP_GEMM);
    gemm.trans_b = 1;
    /* Added out of order on purpose: the Gemm first. */
    assert_true(wl_add_op(g, WL_OP_GEMM, "fc", NULL, INS(t[6], fc), 1, &t[7], &gemm, &st) >= 0);
    assert_true(wl_add_op(g, WL_OP_CONV, "conv", NULL, INS(x, w), 1, &t[0], &conv, &st) >= 0);
    assert_true(wl_add_op(g, WL_OP_RELU, "relu", NULL, INS(t[0]), 1, &t[1], NULL, &st) >= 0);
    assert_true(wl_add_op(g, WL_OP_SHAPE, "shape", NULL, INS(t[1]), 1, &t[2], NULL, &st) >= 0);
    assert_true(wl_add_op(g, WL_OP_GATHER, "gather", NULL, INS(t[2], zero), 1, &t[3], NULL, &st) >=
                0);
    assert_true(wl_add_op(g, WL_OP_UNSQUEEZE, "unsq", NULL, INS(t[3], axes), 1, &t[4], NULL, &st) >=
                0);
    assert_true(wl_add_op(g, WL_OP_CONCAT, "cat", NULL, INS(t[4], minus1), 1, &t[5], NULL, &st) >=
                0);
    assert_true(wl_add_op(g, WL_OP_RESHAPE, "flat", NULL, INS(t[1], t[5]), 1, &t[6], NULL, &st) >=
                0);
    assert_true(wl_add_graph_output(g, t[7]));
    assert_int_equal(wl_graph_infer(g, &st), AS_OK);
    assert_shape(g, t[6], DIMS(1, 256));
    assert_shape(g, t[7], DIMS(1, 10));
    assert_true(g->ops[g->tensors[t[5]].producer].folded);

    g->tensors[x].dims[0] = 4;
    assert_int_equal(wl_graph_infer(g, &st), AS_OK);
    assert_shape(g, t[0], DIMS(4, 4, 8, 8));
    assert_ivalues(g, t[5], DIMS(4, -1));
    assert_shape(g, t[6], DIMS(4, 256));
    assert_shape(g, t[7], DIMS(4, 10));

    /* A shrunken weight is caught downstream. */
    g->tensors[w].dims[0] = 2;
    assert_int_equal(wl_graph_infer(g, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "node 0 'fc' (Gemm): inner dimensions disagree"));
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_shapes),
        cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_conv_transpose),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_gemm_matmul),
        cmocka_unit_test(test_norms_and_elementwise),
        cmocka_unit_test(test_reshape_flatten),
        cmocka_unit_test(test_squeeze_unsqueeze_both_forms),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_concat_transpose_gather),
        cmocka_unit_test(test_resize_depth_to_space_pad),
        cmocka_unit_test(test_shape_chain_folds),
        cmocka_unit_test(test_elementwise_folding),
        cmocka_unit_test(test_more_elementwise),
        cmocka_unit_test(test_more_reductions_and_norms),
        cmocka_unit_test(test_selection_ops),
        cmocka_unit_test(test_einsum),
        cmocka_unit_test(test_constant_of_shape_range_expand),
        cmocka_unit_test(test_reduce_both_forms),
        cmocka_unit_test(test_extra_outputs_and_constant),
        cmocka_unit_test(test_overflow_and_rank_limits),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_graph_reinfer_after_batch_change),
        cmocka_unit_test(test_constant_subgraph_folds_without_values),
        cmocka_unit_test(test_identity_nodes_are_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
