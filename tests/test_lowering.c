/*
 * test_lowering.c -- convolution lowering (src/workload/lower.c,
 * docs/lowering.md): MAC and element counts of im2col + GEMM and of
 * Winograd F(2x2, 3x3) / F(4x4, 3x3) on small layers, hand-computed;
 * output shapes unchanged; Winograd's refusals; a per-layer choice;
 * direct lowering changes nothing; the transformed-weight density; the
 * transform matrices compute a convolution and cost Lavin's operation
 * counts; the study's transform order; network and fusion costing of
 * lowered zoo models on four presets; ONNX export refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fusion/fusion.h"
#include "mapping/mapping.h"
#include "test_check.h"
#include "workload/ops_private.h"

/* Small budgets keep the network runs short (sanitizers included). */
#define TEST_BUDGET 300

/* A conv layer: x [n, c, hw, hw] -> Conv (m outputs, k x k, stride,
 * pad, dilation, group, with a bias) -> y -> Relu -> z (the graph
 * output), inferred. */
typedef struct layer {
    int64_t n, c, m, hw, k, stride, pad, dilation, group;
} layer;

static wl_graph *build_layer(const layer *l)
{
    as_status st = {0};
    wl_graph *g = wl_graph_new("layer", "test:layer");
    int64_t x_dims[4] = {l->n, l->c, l->hw, l->hw};
    int64_t w_dims[4] = {l->m, l->c / l->group, l->k, l->k};
    int64_t b_dims[1] = {l->m};
    int32_t x = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_F32, 4, x_dims, &st);
    int32_t w = wl_add_tensor(g, "w", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 4, w_dims, &st);
    int32_t b = wl_add_tensor(g, "b", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 1, b_dims, &st);
    int32_t y = wl_add_tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_F32, 0, NULL, &st);
    int32_t z = wl_add_tensor(g, "z", WL_TENSOR_ACTIVATION, WL_DTYPE_F32, 0, NULL, &st);
    assert_true(x >= 0 && w >= 0 && b >= 0 && y >= 0 && z >= 0);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    a.n_spatial = 2;
    for (int i = 0; i < 2; i++) {
        a.kernel_shape[i] = l->k;
        a.strides[i] = l->stride;
        a.dilations[i] = l->dilation;
        a.pads[i] = a.pads[2 + i] = l->pad;
    }
    a.group = l->group;
    int32_t conv_in[3] = {x, w, b};
    assert_true(wl_add_op(g, WL_OP_CONV, "conv", NULL, 3, conv_in, 1, &y, &a, &st) >= 0);
    assert_true(wl_add_op(g, WL_OP_RELU, "relu", NULL, 1, &y, 1, &z, NULL, &st) >= 0);
    assert_true(wl_add_graph_input(g, x) && wl_add_graph_output(g, z));
    check(wl_graph_infer(g, &st), &st);
    return g;
}

static int lower(wl_graph *g, const char *name, wl_conv_algorithm a)
{
    as_status st = {0};
    int n = -1;
    check(wl_lower_convs(g, name, a, &n, &st), &st);
    return n;
}

/* The live op of kind k (the first), or -1. */
static int32_t find_kind(const wl_graph *g, wl_op_kind k)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!g->ops[o].dead && g->ops[o].kind == k)
            return o;
    return -1;
}

static int count_kind(const wl_graph *g, wl_op_kind k)
{
    int n = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        n += !g->ops[o].dead && g->ops[o].kind == k;
    return n;
}

static int64_t elements(const wl_graph *g, int32_t t)
{
    return wl_tensor_elements(&g->tensors[t]);
}

static int64_t graph_macs(const wl_graph *g)
{
    wl_stats s;
    as_status st = {0};
    check(wl_graph_stats(g, &s, &st), &st);
    return s.macs;
}

static int64_t op_macs(const wl_graph *g, int32_t o)
{
    wl_op_stats s;
    wl_op_stats_get(g, o, &s);
    return s.macs;
}

static int64_t op_vector_ops(const wl_graph *g, int32_t o)
{
    wl_op_stats s;
    wl_op_stats_get(g, o, &s);
    return wl_op_vector_ops(g, &g->ops[o], &s);
}

/* Conv output y keeps its name and shape, now written by the last new op,
 * and z still reads it. */
static void assert_output_kept(const wl_graph *g, const int64_t *dims, wl_op_kind last)
{
    int32_t y = wl_find_tensor(g, "y");
    assert_true(y >= 0);
    const wl_tensor *t = &g->tensors[y];
    assert_int_equal(t->rank, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(t->dims[i], dims[i]);
    assert_int_equal(g->ops[t->producer].kind, last);
    assert_int_equal(count_kind(g, WL_OP_CONV), 0);
    assert_int_equal(g->ops[find_kind(g, WL_OP_RELU)].inputs[0], y);
}

/* ------------------------------------------------------------- names */

static void test_algorithm_names(void **state)
{
    (void)state;
    static const char *const names[] = {"direct", "im2col", "winograd2", "winograd4"};
    for (int a = 0; a < 4; a++) {
        wl_conv_algorithm got;
        assert_true(wl_conv_algorithm_parse(names[a], &got));
        assert_int_equal(got, a);
        assert_string_equal(wl_conv_algorithm_name(got), names[a]);
    }
    wl_conv_algorithm got;
    assert_false(wl_conv_algorithm_parse("winograd", &got));
    assert_false(wl_conv_algorithm_parse("", &got));
    assert_string_equal(wl_conv_algorithm_name((wl_conv_algorithm)9), "?");
}

/* ------------------------------------------------------------ im2col */

/*
 * C=2, M=3, 6x6, 3x3 pad 1: the column matrix is C*R*S x P*Q = 18 x 36 =
 * 648 elements; the GEMM [3 x 18] x [18 x 36] has 3*18*36 = 1944 MACs,
 * the direct conv's N*M*C*R*S*P*Q; its weight is 3 x 18; the Reshape back
 * is a view.  Im2Col moves 2*36 elements in, 648 out (fp32: 288 and 2592
 * bytes).
 */
static void test_im2col_counts(void **state)
{
    (void)state;
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
    assert_int_equal(graph_macs(g), 1944);
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 3, 6, 6}, WL_OP_RESHAPE);
    int32_t im = find_kind(g, WL_OP_IM2COL), mm = find_kind(g, WL_OP_MATMUL);
    assert_true(im >= 0 && mm >= 0);
    assert_int_equal(elements(g, g->ops[im].outputs[0]), 648);
    assert_int_equal(op_macs(g, mm), 1944);
    assert_int_equal(graph_macs(g), 1944);
    assert_int_equal(elements(g, g->ops[mm].inputs[0]), 54);
    assert_int_equal(g->ops[mm].n_inputs, 3); /* the bias, read where the conv read it */
    assert_int_equal(g->ops[mm].inputs[2], wl_find_tensor(g, "b"));
    wl_op_stats s;
    wl_op_stats_get(g, im, &s);
    assert_int_equal(s.input_bytes, 288);
    assert_int_equal(s.output_bytes, 2592);
    assert_int_equal(op_vector_ops(g, im), 0); /* data movement */
    assert_int_equal(wl_op_kind_category(WL_OP_IM2COL), WL_CAT_MOVE);
    assert_int_equal(count_kind(g, WL_OP_RESHAPE), 1);
    wl_graph_free(g);
}

/* Strided: 7x7, 3x3 stride 2 pad 1 -> 4x4: columns 18 x 16 = 288, MACs
 * 3*18*16 = 864.  1x1: C=4, M=8, 5x5: the columns are the input (100),
 * MACs 8*4*25 = 800. */
static void test_im2col_strided_and_pointwise(void **state)
{
    (void)state;
    wl_graph *g = build_layer(&(layer){1, 2, 3, 7, 3, 2, 1, 1, 1});
    assert_int_equal(lower(g, "conv", WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 3, 4, 4}, WL_OP_RESHAPE);
    assert_int_equal(elements(g, g->ops[find_kind(g, WL_OP_IM2COL)].outputs[0]), 288);
    assert_int_equal(graph_macs(g), 864);
    wl_graph_free(g);

    g = build_layer(&(layer){1, 4, 8, 5, 1, 1, 0, 1, 1});
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 8, 5, 5}, WL_OP_RESHAPE);
    assert_int_equal(elements(g, g->ops[find_kind(g, WL_OP_IM2COL)].outputs[0]), 100);
    assert_int_equal(graph_macs(g), 800);
    wl_graph_free(g);
}

/* auto_pad SAME_UPPER, 6x6, 3x3 stride 2 -> 3x3: the padding resolves to
 * 0 before, 1 after; columns 18 x 9 = 162, MACs 3*18*9 = 486. */
static void test_im2col_auto_pad(void **state)
{
    (void)state;
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 2, 0, 1, 1});
    g->ops[find_kind(g, WL_OP_CONV)].attrs.auto_pad = WL_AUTO_PAD_SAME_UPPER;
    as_status st = {0};
    check(wl_graph_infer(g, &st), &st);
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 3, 3, 3}, WL_OP_RESHAPE);
    const wl_op *im = &g->ops[find_kind(g, WL_OP_IM2COL)];
    assert_int_equal(im->attrs.auto_pad, WL_AUTO_PAD_NOTSET);
    assert_int_equal(im->attrs.pads[0], 0);
    assert_int_equal(im->attrs.pads[1], 0);
    assert_int_equal(im->attrs.pads[2], 1);
    assert_int_equal(im->attrs.pads[3], 1);
    assert_int_equal(elements(g, im->outputs[0]), 162);
    assert_int_equal(graph_macs(g), 486);
    wl_graph_free(g);
}

/*
 * Grouped, per group: C=4, M=6, G=2, 4x4, 3x3 pad 1: columns [1, 2, 18,
 * 16] = 576, weight [2, 3, 18] = 108 (the conv's 6*2*9), MACs 2*3*18*16 =
 * 1728 = the direct conv's.  Depthwise (C=M=G=4): columns [1, 4, 9, 16],
 * MACs 4*9*16 = 576.  Batch 2: columns and MACs double, shape kept.
 */
static void test_im2col_grouped_depthwise_batch(void **state)
{
    (void)state;
    wl_graph *g = build_layer(&(layer){1, 4, 6, 4, 3, 1, 1, 1, 2});
    assert_int_equal(graph_macs(g), 1728);
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 6, 4, 4}, WL_OP_RESHAPE);
    int32_t mm = find_kind(g, WL_OP_MATMUL);
    assert_int_equal(elements(g, g->ops[find_kind(g, WL_OP_IM2COL)].outputs[0]), 576);
    assert_int_equal(elements(g, g->ops[mm].inputs[0]), 108);
    assert_int_equal(op_macs(g, mm), 1728);
    wl_graph_free(g);

    g = build_layer(&(layer){1, 4, 4, 4, 3, 1, 1, 1, 4});
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){1, 4, 4, 4}, WL_OP_RESHAPE);
    assert_int_equal(elements(g, g->ops[find_kind(g, WL_OP_IM2COL)].outputs[0]), 576);
    assert_int_equal(graph_macs(g), 576);
    wl_graph_free(g);

    g = build_layer(&(layer){2, 2, 3, 6, 3, 1, 1, 1, 1});
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_output_kept(g, (const int64_t[]){2, 3, 6, 6}, WL_OP_RESHAPE);
    assert_int_equal(elements(g, g->ops[find_kind(g, WL_OP_IM2COL)].outputs[0]), 2 * 648);
    assert_int_equal(graph_macs(g), 2 * 1944);
    /* A batch set after lowering follows (the Reshape target spells it). */
    as_status st = {0};
    check(wl_set_batch(g, 3, &st), &st);
    assert_output_kept(g, (const int64_t[]){3, 3, 6, 6}, WL_OP_RESHAPE);
    assert_int_equal(graph_macs(g), 3 * 1944);
    wl_graph_free(g);
}

/* ---------------------------------------------------------- Winograd */

/*
 * C=2, M=3, 6x6, 3x3 pad 1 (P = Q = 6).  F(2x2, 3x3): alpha 4, T = 3*3 =
 * 9 tiles; V = 16*2*9 = 288, U = 16*3*2 = 96, MACs 16*2*3*9 = 864 (direct
 * 1944); input transform 9*2 tiles x 32 additions = 576, output transform
 * 9*3 x 24 = 648.  F(4x4, 3x3): alpha 6, T = 2*2 = 4 (boundary tiles
 * padded to 8x8); V = 36*2*4 = 288, U = 36*6 = 216, MACs 36*2*3*4 = 864;
 * input 4*2 x (192 + 144) = 2688, output 4*3 x (140 + 60) = 2400.
 */
static void test_winograd_counts(void **state)
{
    (void)state;
    static const struct {
        wl_conv_algorithm a;
        int64_t v, u, macs, in_ops, out_ops;
    } cases[] = {
        {WL_CONV_WINOGRAD_2, 288, 96, 864, 576, 648},
        {WL_CONV_WINOGRAD_4, 288, 216, 864, 2688, 2400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
        assert_int_equal(lower(g, NULL, cases[i].a), 1);
        assert_output_kept(g, (const int64_t[]){1, 3, 6, 6}, WL_OP_WINOGRAD_OUTPUT);
        int32_t in = find_kind(g, WL_OP_WINOGRAD_INPUT), mm = find_kind(g, WL_OP_MATMUL);
        int32_t out = find_kind(g, WL_OP_WINOGRAD_OUTPUT);
        assert_int_equal(elements(g, g->ops[in].outputs[0]), cases[i].v);
        assert_int_equal(elements(g, g->ops[mm].inputs[0]), cases[i].u);
        assert_int_equal(g->tensors[g->ops[mm].inputs[0]].kind, WL_TENSOR_WEIGHT);
        assert_int_equal(op_macs(g, mm), cases[i].macs);
        assert_int_equal(graph_macs(g), cases[i].macs);
        assert_int_equal(op_vector_ops(g, in), cases[i].in_ops);
        assert_int_equal(op_vector_ops(g, out), cases[i].out_ops);
        assert_int_equal(op_macs(g, in) + op_macs(g, out), 0);
        assert_int_equal(g->ops[out].inputs[1], wl_find_tensor(g, "b"));
        /* A batch set after lowering follows: twice the tiles. */
        as_status st = {0};
        check(wl_set_batch(g, 2, &st), &st);
        assert_output_kept(g, (const int64_t[]){2, 3, 6, 6}, WL_OP_WINOGRAD_OUTPUT);
        assert_int_equal(graph_macs(g), 2 * cases[i].macs);
        wl_graph_free(g);
    }
    /* No padding: 6x6 -> 4x4, F(2x2) 4 tiles, 16*2*3*4 = 384 MACs; F(4x4)
     * one tile, 36*2*3 = 216 MACs. */
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 0, 1, 1});
    assert_int_equal(lower(g, NULL, WL_CONV_WINOGRAD_2), 1);
    assert_output_kept(g, (const int64_t[]){1, 3, 4, 4}, WL_OP_WINOGRAD_OUTPUT);
    assert_int_equal(graph_macs(g), 384);
    wl_graph_free(g);
    g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 0, 1, 1});
    assert_int_equal(lower(g, NULL, WL_CONV_WINOGRAD_4), 1);
    assert_int_equal(graph_macs(g), 216);
    wl_graph_free(g);
}

/* Only 3x3, stride 1, dilation 1, one group: each refusal says which
 * condition fails; naming the conv is an error, lowering all leaves it
 * direct. */
static void test_winograd_refusals(void **state)
{
    (void)state;
    static const struct {
        layer l;
        const char *reason;
    } cases[] = {
        {{1, 4, 8, 5, 1, 1, 0, 1, 1}, "3x3 kernel"},
        {{1, 2, 3, 7, 3, 2, 1, 1, 1}, "stride 1"},
        {{1, 2, 3, 7, 3, 1, 2, 2, 1}, "dilation 1"},
        {{1, 4, 4, 6, 3, 1, 1, 1, 4}, "one group"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_graph *g = build_layer(&cases[i].l);
        int32_t conv = find_kind(g, WL_OP_CONV);
        char why[160] = "";
        assert_true(wl_conv_algorithm_applies(g, conv, WL_CONV_IM2COL, why, sizeof why));
        assert_true(wl_conv_algorithm_applies(g, conv, WL_CONV_DIRECT, why, sizeof why));
        assert_false(wl_conv_algorithm_applies(g, conv, WL_CONV_WINOGRAD_4, why, sizeof why));
        if (!strstr(why, cases[i].reason))
            fail_msg("case %zu: '%s' does not say '%s'", i, why, cases[i].reason);
        as_status st = {0};
        int n = -1;
        assert_int_equal(wl_lower_convs(g, "conv", WL_CONV_WINOGRAD_2, &n, &st), AS_EINVAL);
        assert_non_null(strstr(st.message, cases[i].reason));
        assert_non_null(strstr(st.message, "'conv'"));
        assert_int_equal(lower(g, NULL, WL_CONV_WINOGRAD_2), 0);
        assert_int_equal(count_kind(g, WL_OP_CONV), 1);
        wl_graph_free(g);
    }
    /* Not a conv; no such conv. */
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
    assert_false(wl_conv_algorithm_applies(g, find_kind(g, WL_OP_RELU), WL_CONV_IM2COL, NULL, 0));
    as_status st = {0};
    assert_int_equal(wl_lower_convs(g, "relu", WL_CONV_IM2COL, NULL, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no Conv named 'relu'"));
    wl_graph_free(g);
}

/* ------------------------------------------------ Winograd's matrices */

/* y = A^T [(G g G^T) .* (B^T d B)] A on one tile equals the 3x3
 * correlation of d with g (the matrices are Lavin's), and the transforms
 * cost Lavin's 32 and 24 additions for F(2x2, 3x3). */
static void test_winograd_matrices(void **state)
{
    (void)state;
    for (int m = 2; m <= 4; m += 2) {
        const wl_winograd *w = wl_winograd_of(m);
        assert_non_null(w);
        int a = w->alpha;
        double d[6][6], g[3][3], u[6][6], v[6][6], t[6][6], y[4][6];
        for (int i = 0; i < a; i++)
            for (int j = 0; j < a; j++)
                d[i][j] = sin(1.0 + i * 7 + j * 3);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                g[i][j] = cos(2.0 + i * 5 + j);
        for (int i = 0; i < a; i++) /* U = G g G^T, V = B^T d B */
            for (int j = 0; j < a; j++) {
                u[i][j] = v[i][j] = 0;
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++)
                        u[i][j] += w->g[i * 3 + k] * g[k][l] * w->g[j * 3 + l];
                for (int k = 0; k < a; k++)
                    for (int l = 0; l < a; l++)
                        v[i][j] += w->bt[i * a + k] * d[k][l] * w->bt[j * a + l];
                t[i][j] = u[i][j] * v[i][j];
            }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                y[i][j] = 0;
                for (int k = 0; k < a; k++)
                    for (int l = 0; l < a; l++)
                        y[i][j] += w->at[i * a + k] * t[k][l] * w->at[j * a + l];
                double direct = 0;
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++)
                        direct += d[i + k][j + l] * g[k][l];
                assert_true(fabs(y[i][j] - direct) < 1e-9);
            }
    }
    assert_null(wl_winograd_of(3));
    int64_t adds, muls;
    const wl_winograd *f2 = wl_winograd_of(2), *f4 = wl_winograd_of(4);
    wl_transform_ops(f2->bt, 4, 4, &adds, &muls);
    assert_int_equal(adds, 32);
    assert_int_equal(muls, 0);
    wl_transform_ops(f2->at, 2, 4, &adds, &muls);
    assert_int_equal(adds, 24);
    assert_int_equal(muls, 0);
    wl_transform_ops(f4->bt, 6, 6, &adds, &muls); /* docs/lowering.md's figures */
    assert_int_equal(adds, 192);
    assert_int_equal(muls, 144);
    wl_transform_ops(f4->at, 4, 6, &adds, &muls);
    assert_int_equal(adds, 140);
    assert_int_equal(muls, 60);
}

/*
 * A pruned layer (density 0.3): im2col's weight keeps 0.3; Winograd's
 * transformed weight has the mean of 1 - 0.7^(n_i n_j) over G's row
 * non-zeros n = (1, 3, 3, 1) for F(2x2): 4 elements combine 1 tap, 8
 * combine 3, 4 combine 9.
 */
static void test_transformed_density(void **state)
{
    (void)state;
    as_status st = {0};
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
    check(wl_prune_unstructured(g, NULL, 0.3, &st), &st);
    wl_graph *h = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
    check(wl_prune_unstructured(h, NULL, 0.3, &st), &st);
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 1);
    assert_close(g->tensors[g->ops[find_kind(g, WL_OP_MATMUL)].inputs[0]].density, 0.3);
    assert_int_equal(lower(h, NULL, WL_CONV_WINOGRAD_2), 1);
    double want = (4 * (1 - 0.7) + 8 * (1 - pow(0.7, 3)) + 4 * (1 - pow(0.7, 9))) / 16;
    double got = h->tensors[h->ops[find_kind(h, WL_OP_MATMUL)].inputs[0]].density;
    assert_close(got, want);
    assert_true(got > 0.6); /* a 30%-dense filter becomes a 60%-dense one */
    /* F(4x4): G's rows have 1, 3, 3, 3, 3, 1 non-zeros. */
    const wl_winograd *f4 = wl_winograd_of(4);
    double n[6] = {1, 3, 3, 3, 3, 1}, sum = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            sum += 1 - pow(0.7, n[i] * n[j]);
    assert_close(wl_transform_density(f4->g, 6, 3, 0.3), sum / 36);
    assert_close(wl_transform_density(f4->g, 6, 3, 1.0), 1.0);
    wl_graph_free(g);
    wl_graph_free(h);
}

/* ------------------------------------------------------- on the zoo */

/* Same ops, tensors and figures. */
static void assert_same_graph(const wl_graph *g, const wl_graph *h)
{
    assert_int_equal(g->n_ops, h->n_ops);
    assert_int_equal(g->n_tensors, h->n_tensors);
    for (int32_t o = 0; o < g->n_ops; o++) {
        assert_int_equal(g->ops[o].kind, h->ops[o].kind);
        assert_string_equal(g->ops[o].name, h->ops[o].name);
        assert_int_equal(g->ops[o].n_inputs, h->ops[o].n_inputs);
        for (int i = 0; i < g->ops[o].n_inputs; i++)
            assert_int_equal(g->ops[o].inputs[i], h->ops[o].inputs[i]);
    }
    wl_stats s, t;
    as_status st = {0};
    check(wl_graph_stats(g, &s, &st), &st);
    check(wl_graph_stats(h, &t, &st), &st);
    assert_memory_equal(&s, &t, sizeof s);
}

static wl_graph *zoo(const char *name)
{
    wl_graph *g = NULL;
    as_status st = {0};
    check(wl_zoo_build(name, &g, &st), &st);
    return g;
}

/* Direct lowering leaves the graph as it was, whole or one conv named. */
static void test_direct_is_identity(void **state)
{
    (void)state;
    wl_graph *g = zoo("resnet18"), *h = zoo("resnet18");
    assert_int_equal(lower(g, NULL, WL_CONV_DIRECT), 0);
    assert_same_graph(g, h);
    const char *first = g->ops[find_kind(g, WL_OP_CONV)].name;
    assert_int_equal(lower(g, first, WL_CONV_DIRECT), 0);
    assert_same_graph(g, h);
    wl_graph_free(g);
    wl_graph_free(h);
}

/* One named conv lowered, the others direct; the new ops take its place
 * in the op order; lowering all: 20 convs by im2col, the 13 3x3 stride-1
 * ones by Winograd, MACs as the counts predict. */
static void test_per_layer_choice(void **state)
{
    (void)state;
    wl_graph *g = zoo("resnet18");
    int convs = count_kind(g, WL_OP_CONV);
    assert_int_equal(convs, 20);
    int64_t macs = graph_macs(g);
    int32_t second = -1;
    for (int32_t o = find_kind(g, WL_OP_CONV) + 1; second < 0; o++)
        if (g->ops[o].kind == WL_OP_CONV)
            second = o;
    const char *name = g->ops[second].name;
    int32_t y = g->ops[second].outputs[0];
    char y_name[128];
    snprintf(y_name, sizeof y_name, "%s", g->tensors[y].name);
    assert_int_equal(lower(g, name, WL_CONV_WINOGRAD_2), 1);
    assert_int_equal(count_kind(g, WL_OP_CONV), convs - 1);
    assert_int_equal(count_kind(g, WL_OP_WINOGRAD_INPUT), 1);
    assert_true(graph_macs(g) < macs);
    /* In place: input transform, GEMM, output transform, then the conv's
     * consumer. */
    int32_t in = find_kind(g, WL_OP_WINOGRAD_INPUT);
    for (int32_t k = 0; k < g->n_order; k++)
        if (g->order[k] == in) {
            assert_int_equal(g->ops[g->order[k + 1]].kind, WL_OP_MATMUL);
            assert_int_equal(g->ops[g->order[k + 2]].kind, WL_OP_WINOGRAD_OUTPUT);
            assert_string_equal(g->tensors[g->ops[g->order[k + 2]].outputs[0]].name, y_name);
        }
    /* Mixed per layer: the first conv (7x7 stride 2) by im2col too. */
    const char *stem = g->ops[find_kind(g, WL_OP_CONV)].name;
    assert_int_equal(lower(g, stem, WL_CONV_IM2COL), 1);
    assert_int_equal(count_kind(g, WL_OP_CONV), convs - 2);
    assert_int_equal(count_kind(g, WL_OP_IM2COL), 1);
    assert_int_equal(count_kind(g, WL_OP_WINOGRAD_OUTPUT), 1);
    wl_graph_free(g);

    g = zoo("resnet18");
    assert_int_equal(lower(g, NULL, WL_CONV_IM2COL), 20);
    assert_int_equal(graph_macs(g), macs);
    wl_graph_free(g);
    g = zoo("resnet18");
    assert_int_equal(lower(g, NULL, WL_CONV_WINOGRAD_4), 13);
    assert_int_equal(count_kind(g, WL_OP_CONV), 7);
    wl_graph_free(g);
}

/* The study's order -- precision, pruning, BN folding, lowering,
 * epilogues -- works; new tensors keep the precision; the Relu after a
 * lowered conv runs in the epilogue of the op that computes it (the GEMM
 * through the Reshape view; the output transform). */
static void test_transform_order(void **state)
{
    (void)state;
    for (int a = WL_CONV_IM2COL; a <= WL_CONV_WINOGRAD_4; a++) {
        wl_graph *g = zoo("resnet18");
        as_status st = {0};
        int n_pruned = 0;
        wl_set_precision(g, WL_PREC_INT8);
        check(wl_prune_unstructured(g, NULL, 0.5, &st), &st);
        check(wl_prune_channels(g, NULL, 0.75, &n_pruned, &st), &st);
        check(wl_fold_batchnorm(g, NULL, &st), &st);
        assert_true(lower(g, NULL, (wl_conv_algorithm)a) > 0);
        wl_epilogue_stats es;
        check(wl_fuse_epilogues(g, &es, &st), &st);
        assert_true(es.n_epilogue > 0);
        wl_op_kind producer = a == WL_CONV_IM2COL ? WL_OP_MATMUL : WL_OP_WINOGRAD_OUTPUT;
        int relus_on_lowered = 0, carry_bn = 0;
        wl_op_kind writer = a == WL_CONV_IM2COL ? WL_OP_RESHAPE : WL_OP_WINOGRAD_OUTPUT;
        for (int32_t o = 0; o < g->n_ops; o++) {
            const wl_op *op = &g->ops[o];
            carry_bn += op->kind == writer && op->folded_bn != NULL;
            if (op->kind == WL_OP_RELU && op->epilogue_of >= 0)
                relus_on_lowered += g->ops[op->epilogue_of].kind == producer;
            if (op->kind == WL_OP_IM2COL || op->kind == WL_OP_WINOGRAD_INPUT ||
                op->kind == WL_OP_WINOGRAD_OUTPUT || op->kind == WL_OP_MATMUL)
                for (int i = 0; i < op->n_inputs; i++)
                    if (op->inputs[i] >= 0 && !wl_tensor_is_known(&g->tensors[op->inputs[i]]))
                        assert_int_equal(g->tensors[op->inputs[i]].bits, 8);
        }
        assert_true(relus_on_lowered > 0);
        assert_true(carry_bn > 0); /* the folded BatchNorm's name follows the conv's output */
        wl_graph_free(g);
    }
}

/* A lowered graph has no ONNX form: the export names the op. */
static void test_onnx_export_refused(void **state)
{
    (void)state;
    wl_graph *g = build_layer(&(layer){1, 2, 3, 6, 3, 1, 1, 1, 1});
    char path[512];
    snprintf(path, sizeof path, "%s/lowered.onnx", AS_TEST_TMP_DIR);
    remove(path);
    as_status st = {0};
    check(wl_onnx_save(g, path, &st), &st); /* direct: fine */
    remove(path);
    assert_int_equal(lower(g, NULL, WL_CONV_WINOGRAD_2), 1);
    assert_int_equal(wl_onnx_save(g, path, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "WinogradInputTransform"));
    assert_non_null(strstr(st.message, "not an ONNX op"));
    assert_null(fopen(path, "rb"));
    /* Internal ops are not ONNX names: an ONNX node "Im2Col" is unknown. */
    assert_int_equal(wl_op_kind_from_name("Im2Col"), WL_OP_UNKNOWN);
    assert_int_equal(wl_op_status_of("WinogradInputTransform"), WL_STATUS_UNSUPPORTED);
    wl_graph_free(g);
}

/* ------------------------------------------------- network and fusion */

static void evaluate(const wl_graph *g, const arch_spec *a, map_network_result *r)
{
    map_network_options o;
    map_network_options_default(&o);
    o.budget_per_problem = TEST_BUDGET;
    as_status st = {0};
    check(map_network_evaluate(g, a, &o, r, &st), &st);
}

/* model lowered by a after BN folding, epilogues fused. */
static wl_graph *lowered_model(const char *model, wl_conv_algorithm a)
{
    wl_graph *g = zoo(model);
    as_status st = {0};
    check(wl_fold_batchnorm(g, NULL, &st), &st);
    lower(g, NULL, a);
    check(wl_fuse_epilogues(g, NULL, &st), &st);
    return g;
}

/* On eyeriss, gemmini, edgetpu and simba, for resnet18, mobilenet_v2 and
 * vgg16_cifar: every layer maps; im2col has the direct MACs and moves
 * more DRAM bytes (its columns cross DRAM); Winograd F(2x2) has fewer
 * MACs where it applies (mobilenet_v2 has no 3x3 stride-1 dense conv). */
static void test_network_on_presets(void **state)
{
    (void)state;
    static const char *const archs[] = {"eyeriss", "gemmini", "edgetpu", "simba"};
    static const char *const models[] = {"resnet18", "mobilenet_v2", "vgg16_cifar"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        wl_graph *g[3] = {lowered_model(models[m], WL_CONV_DIRECT),
                          lowered_model(models[m], WL_CONV_IM2COL),
                          lowered_model(models[m], WL_CONV_WINOGRAD_2)};
        bool winograd_applies = count_kind(g[2], WL_OP_WINOGRAD_INPUT) > 0;
        assert_int_equal(winograd_applies, strcmp(models[m], "mobilenet_v2") != 0);
        for (size_t k = 0; k < sizeof archs / sizeof archs[0]; k++) {
            arch_spec a;
            as_status st = {0};
            check(arch_load(archs[k], &a, &st), &st);
            map_network_result r[3];
            for (int i = 0; i < 3; i++) {
                evaluate(g[i], &a, &r[i]);
                assert_int_equal(r[i].n_unmapped, 0);
                assert_true(r[i].cycles > 0);
            }
            /* A W x cols GEMM reads all its weights (array.c's GEMM sides
             * on systolic arrays) unless they are resident. */
            for (int32_t i = 0; i < r[1].n_layers && !r[1].weights.resident; i++) {
                const wl_op *op = &g[1]->ops[r[1].layers[i].op];
                if (op->kind == WL_OP_MATMUL &&
                    r[1].layers[i].dram_bytes < wl_tensor_bytes(&g[1]->tensors[op->inputs[0]]))
                    fail_msg("%s on %s: GEMM %s moves %lld DRAM bytes, less than its weights",
                             models[m], archs[k], op->name, (long long)r[1].layers[i].dram_bytes);
            }
            if (r[1].dram_bytes <= r[0].dram_bytes || r[1].macs != r[0].macs)
                fail_msg("%s on %s: im2col moves %lld DRAM bytes, direct %lld", models[m], archs[k],
                         (long long)r[1].dram_bytes, (long long)r[0].dram_bytes);
            if (winograd_applies ? r[2].macs >= r[0].macs : r[2].macs != r[0].macs)
                fail_msg("%s on %s: Winograd %lld MACs, direct %lld", models[m], archs[k],
                         (long long)r[2].macs, (long long)r[0].macs);
            for (int i = 0; i < 3; i++)
                map_network_free(&r[i]);
        }
        for (int i = 0; i < 3; i++)
            wl_graph_free(g[i]);
    }
}

/* The fusion evaluator costs groups of the new ops (their halo rule: the
 * whole input) and the plan of singletons costs what the network
 * evaluation charges. */
static void test_fusion_on_lowered(void **state)
{
    (void)state;
    for (int alg = WL_CONV_IM2COL; alg <= WL_CONV_WINOGRAD_2; alg++) {
        wl_graph *g = build_layer(&(layer){1, 8, 16, 14, 3, 1, 1, 1, 1});
        as_status st = {0};
        lower(g, NULL, (wl_conv_algorithm)alg);
        check(wl_fuse_epilogues(g, NULL, &st), &st);
        arch_spec a;
        check(arch_load("eyeriss", &a, &st), &st);
        fu_cost_options o;
        fu_cost_options_default(&o);
        o.budget_per_problem = TEST_BUDGET;
        fu_evaluator *e = NULL;
        check(fu_evaluator_new(&e, g, &a, &o, &st), &st);
        int32_t ops[8];
        int32_t n = fu_working_ops(g, ops);
        /* Im2Col and the GEMM (the Reshape is a view); or the input
         * transform, the GEMM and the output transform. */
        assert_int_equal(n, alg == WL_CONV_IM2COL ? 2 : 3);
        for (int i = 0; i < n; i++)
            assert_int_equal(wl_op_halo(&g->ops[ops[i]], 0),
                             g->ops[ops[i]].kind == WL_OP_MATMUL ? WL_HALO_ROWS : WL_HALO_WHOLE);
        fu_group_cost c;
        check(fu_group_evaluate(e, ops, n, &c, &st), &st);
        if (!c.valid)
            fail_msg("%s: fused group invalid: %s", wl_conv_algorithm_name(alg), c.reason);
        assert_int_equal(c.macs, graph_macs(g));
        fu_plan p;
        check(fu_plan_init(&p, g, &st), &st);
        fu_plan_cost pc;
        check(fu_plan_evaluate(e, &p, &pc, &st), &st);
        map_network_result r;
        evaluate(g, &a, &r);
        assert_true(pc.valid);
        assert_int_equal(pc.dram_bytes, r.dram_bytes);
        assert_int_equal(pc.macs, r.macs);
        map_network_free(&r);
        fu_plan_cost_free(&pc);
        fu_plan_free(&p);
        fu_evaluator_free(e);
        wl_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_algorithm_names),
        cmocka_unit_test(test_im2col_counts),
        cmocka_unit_test(test_im2col_strided_and_pointwise),
        cmocka_unit_test(test_im2col_auto_pad),
        cmocka_unit_test(test_im2col_grouped_depthwise_batch),
        cmocka_unit_test(test_winograd_counts),
        cmocka_unit_test(test_winograd_refusals),
        cmocka_unit_test(test_winograd_matrices),
        cmocka_unit_test(test_transformed_density),
        cmocka_unit_test(test_direct_is_identity),
        cmocka_unit_test(test_per_layer_choice),
        cmocka_unit_test(test_transform_order),
        cmocka_unit_test(test_onnx_export_refused),
        cmocka_unit_test(test_network_on_presets),
        cmocka_unit_test(test_fusion_on_lowered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
