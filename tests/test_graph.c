/*
 * test_graph.c -- graph construction and indexing (order, cycles, dangling
 * inputs), compaction, loop-nest problems and statistics, on small graphs
 * whose shapes are written out by hand (no inference involved).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "workload/workload.h"

#define DIMS(...)                                                                                  \
    (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* Shorthands: a tensor of given kind and shape, an op with one output. */
static int32_t tensor(wl_graph *g, const char *name, wl_tensor_kind kind, const int64_t *dims,
                      int rank)
{
    int32_t t = wl_add_tensor(g, name, kind, WL_DTYPE_F32, rank, dims, NULL);
    assert_true(t >= 0);
    return t;
}

static int32_t op1(wl_graph *g, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
                   int32_t out, const wl_attrs *attrs)
{
    int32_t o = wl_add_op(g, kind, name, NULL, n_in, in, 1, &out, attrs, NULL);
    assert_true(o >= 0);
    return o;
}

static void test_order_is_stable_and_fixes_misorder(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(1, 4));
    int32_t a = tensor(g, "a", WL_TENSOR_ACTIVATION, DIMS(1, 4));
    int32_t b = tensor(g, "b", WL_TENSOR_ACTIVATION, DIMS(1, 4));
    int32_t c = tensor(g, "c", WL_TENSOR_ACTIVATION, DIMS(1, 4));
    wl_add_graph_input(g, x);
    int32_t ob = op1(g, WL_OP_RELU, "second", 1, &a, b, NULL); /* consumer added first */
    int32_t oa = op1(g, WL_OP_RELU, "first", 1, &x, a, NULL);
    int32_t oc = op1(g, WL_OP_ADD, "third", 2, (int32_t[]){b, b}, c, NULL);
    wl_add_graph_output(g, c);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_graph_index(g, &st), AS_OK);
    assert_int_equal(g->n_order, 3);
    assert_int_equal(g->order[0], oa);
    assert_int_equal(g->order[1], ob);
    assert_int_equal(g->order[2], oc);
    assert_int_equal(wl_consumer_count(g, b), 1); /* read twice by one op: listed once */
    assert_int_equal(wl_consumer_list(g, a)[0], ob);
    wl_graph_free(g);
}

static void test_cycle_is_reported(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "cyclic.onnx");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(2));
    int32_t a = tensor(g, "a", WL_TENSOR_ACTIVATION, DIMS(2));
    int32_t b = tensor(g, "b", WL_TENSOR_ACTIVATION, DIMS(2));
    op1(g, WL_OP_ADD, "loop_a", 2, (int32_t[]){x, b}, a, NULL);
    op1(g, WL_OP_RELU, "loop_b", 1, &a, b, NULL);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_graph_index(g, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "cycle"));
    assert_non_null(strstr(st.message, "cyclic.onnx"));
    assert_non_null(strstr(st.message, "loop_a"));
    wl_graph_free(g);
}

static void test_dangling_and_duplicates(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "m.onnx");
    int32_t ghost = tensor(g, "ghost", WL_TENSOR_ACTIVATION, DIMS(2));
    int32_t y = tensor(g, "y", WL_TENSOR_ACTIVATION, DIMS(2));
    op1(g, WL_OP_RELU, "reads_ghost", 1, &ghost, y, NULL);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_graph_index(g, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "'ghost' is not produced"));
    assert_non_null(strstr(st.message, "reads_ghost"));

    as_status_clear(&st);
    assert_int_equal(
        wl_add_tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_F32, 1, (int64_t[]){2}, &st), -1);
    assert_non_null(strstr(st.message, "'y' is defined twice"));
    as_status_clear(&st);
    assert_int_equal(wl_add_op(g, WL_OP_RELU, "again", NULL, 1, &ghost, 1, &y, NULL, &st), -1);
    assert_non_null(strstr(st.message, "already defined"));
    as_status_clear(&st);
    assert_int_equal(
        wl_add_tensor(g, "neg", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 2, (int64_t[]){3, -1}, &st), -1);
    assert_non_null(strstr(st.message, "negative dimension"));
    wl_graph_free(g);
}

/* A 3x3 stride-2 conv with pads: bounds, projections, MACs. */
static void test_conv_problem(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(2, 8, 15, 15));
    int32_t w = tensor(g, "w", WL_TENSOR_WEIGHT, DIMS(16, 8, 3, 3));
    int32_t y = tensor(g, "y", WL_TENSOR_ACTIVATION, DIMS(2, 16, 8, 8));
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    a.strides[0] = a.strides[1] = 2;
    for (int i = 0; i < 4; i++)
        a.pads[i] = 1;
    int32_t o = op1(g, WL_OP_CONV, "conv", 2, (int32_t[]){x, w}, y, &a);
    wl_problem p;
    assert_int_equal(wl_op_problem(g, o, &p, NULL), AS_OK);
    assert_int_equal(p.kind, WL_PROBLEM_CONV);
    const int64_t want[WL_NDIMS] = {2, 1, 8, 16, 8, 8, 3, 3};
    assert_memory_equal(p.bound, want, sizeof want);
    assert_int_equal(wl_problem_macs(&p), 2LL * 16 * 8 * 8 * 8 * 9);
    assert_int_equal(p.stride[0], 2);
    assert_int_equal(p.pad[0], 1);
    /* Inputs are indexed by 2p + r: 2*7 + 2 + 1 = 17 rows with the pads. */
    assert_int_equal(p.ds[WL_DS_INPUTS].n_ranks, 5);
    assert_int_equal(p.ds[WL_DS_INPUTS].ranks[3].terms[0].coef, 2);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_INPUTS), 2LL * 8 * 17 * 17);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_WEIGHTS), 16LL * 8 * 9);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_OUTPUTS), 2LL * 16 * 64);
    assert_true(p.ds[WL_DS_OUTPUTS].read_write);
    assert_int_equal(p.ds[WL_DS_WEIGHTS].tensor, w);
    wl_graph_free(g);
}

static void test_depthwise_and_transposed_problems(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(1, 32, 10, 10));
    int32_t w = tensor(g, "w", WL_TENSOR_WEIGHT, DIMS(32, 1, 3, 3));
    int32_t y = tensor(g, "y", WL_TENSOR_ACTIVATION, DIMS(1, 32, 8, 8));
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    a.group = 32;
    int32_t dw = op1(g, WL_OP_CONV, "dw", 2, (int32_t[]){x, w}, y, &a);
    wl_problem p;
    assert_int_equal(wl_op_problem(g, dw, &p, NULL), AS_OK);
    assert_int_equal(p.kind, WL_PROBLEM_DEPTHWISE);
    assert_int_equal(p.bound[WL_DIM_G], 32);
    assert_int_equal(p.bound[WL_DIM_C], 1);
    assert_int_equal(wl_problem_macs(&p), 32LL * 64 * 9);

    /* ConvTranspose 2x2 stride 2: 8x8 -> 16x16, MACs = in elems * Cout * k^2. */
    int32_t wt = tensor(g, "wt", WL_TENSOR_WEIGHT, DIMS(32, 4, 2, 2));
    int32_t z = tensor(g, "z", WL_TENSOR_ACTIVATION, DIMS(1, 4, 16, 16));
    wl_attrs_default(&a, WL_OP_CONV_TRANSPOSE);
    a.strides[0] = a.strides[1] = 2;
    int32_t up = op1(g, WL_OP_CONV_TRANSPOSE, "up", 2, (int32_t[]){y, wt}, z, &a);
    assert_int_equal(wl_op_problem(g, up, &p, NULL), AS_OK);
    assert_int_equal(p.kind, WL_PROBLEM_CONV_TRANSPOSE);
    assert_int_equal(p.bound[WL_DIM_P], 8);
    assert_int_equal(p.bound[WL_DIM_C], 32);
    assert_int_equal(p.bound[WL_DIM_M], 4);
    assert_int_equal(wl_problem_macs(&p), 1LL * 32 * 64 * 4 * 4);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_OUTPUTS), 4LL * 16 * 16);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_INPUTS), 32LL * 64);
    wl_graph_free(g);
}

static void test_matmul_problems(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    /* A Linear over tokens: [2,128,768] x [768,3072]. */
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(2, 128, 768));
    int32_t w = tensor(g, "w", WL_TENSOR_WEIGHT, DIMS(768, 3072));
    int32_t h = tensor(g, "h", WL_TENSOR_ACTIVATION, DIMS(2, 128, 3072));
    int32_t lin = op1(g, WL_OP_MATMUL, "fc", 2, (int32_t[]){x, w}, h, NULL);
    wl_problem p;
    assert_int_equal(wl_op_problem(g, lin, &p, NULL), AS_OK);
    assert_int_equal(p.kind, WL_PROBLEM_MATMUL);
    const int64_t want[WL_NDIMS] = {2, 1, 768, 3072, 128, 1, 1, 1};
    assert_memory_equal(p.bound, want, sizeof want);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_WEIGHTS), 768LL * 3072);

    /* Attention scores: [1,12,128,64] x [1,12,64,128], both activations. */
    int32_t q = tensor(g, "q", WL_TENSOR_ACTIVATION, DIMS(1, 12, 128, 64));
    int32_t k = tensor(g, "k", WL_TENSOR_ACTIVATION, DIMS(1, 12, 64, 128));
    int32_t s = tensor(g, "s", WL_TENSOR_ACTIVATION, DIMS(1, 12, 128, 128));
    int32_t qk = op1(g, WL_OP_MATMUL, "qk", 2, (int32_t[]){q, k}, s, NULL);
    assert_int_equal(wl_op_problem(g, qk, &p, NULL), AS_OK);
    assert_int_equal(p.kind, WL_PROBLEM_BATCHED_MATMUL);
    assert_int_equal(p.bound[WL_DIM_G], 12);
    assert_int_equal(p.bound[WL_DIM_N], 1);
    assert_int_equal(wl_problem_macs(&p), 12LL * 128 * 128 * 64);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_INPUTS), 12LL * 128 * 64);
    assert_int_equal(wl_dataspace_elements(&p, WL_DS_WEIGHTS), 12LL * 64 * 128);

    /* Gemm with transB: [1,2048] x [1000,2048]^T. */
    int32_t f = tensor(g, "f", WL_TENSOR_ACTIVATION, DIMS(1, 2048));
    int32_t fw = tensor(g, "fw", WL_TENSOR_WEIGHT, DIMS(1000, 2048));
    int32_t fb = tensor(g, "fb", WL_TENSOR_WEIGHT, DIMS(1000));
    int32_t logits = tensor(g, "logits", WL_TENSOR_ACTIVATION, DIMS(1, 1000));
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_GEMM);
    a.trans_b = 1;
    int32_t gemm = op1(g, WL_OP_GEMM, "fc2", 3, (int32_t[]){f, fw, fb}, logits, &a);
    assert_int_equal(wl_op_problem(g, gemm, &p, NULL), AS_OK);
    assert_int_equal(wl_problem_macs(&p), 2048000);
    assert_int_equal(p.bound[WL_DIM_C], 2048);
    assert_int_equal(p.bound[WL_DIM_M], 1000);
    wl_graph_free(g);
}

/* Parameters skip BN running statistics and count a shared weight once;
 * the working set is the largest compute op's activations; views move no
 * bytes. */
static void test_stats(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(1, 3, 8, 8));
    int32_t w = tensor(g, "w", WL_TENSOR_WEIGHT, DIMS(4, 3, 3, 3));
    int32_t c = tensor(g, "c", WL_TENSOR_ACTIVATION, DIMS(1, 4, 6, 6));
    int32_t bn[4];
    const char *bn_names[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; i++)
        bn[i] = tensor(g, bn_names[i], WL_TENSOR_WEIGHT, DIMS(4));
    int32_t b = tensor(g, "b", WL_TENSOR_ACTIVATION, DIMS(1, 4, 6, 6));
    int32_t f = tensor(g, "f", WL_TENSOR_ACTIVATION, DIMS(1, 144));
    int32_t fw = tensor(g, "fw", WL_TENSOR_WEIGHT, DIMS(144, 10));
    int32_t y = tensor(g, "y", WL_TENSOR_ACTIVATION, DIMS(1, 10));
    int32_t y2 = tensor(g, "y2", WL_TENSOR_ACTIVATION, DIMS(1, 10));
    wl_add_graph_input(g, x);
    op1(g, WL_OP_CONV, "conv", 2, (int32_t[]){x, w}, c, NULL);
    op1(g, WL_OP_BATCHNORM, "bn", 5, (int32_t[]){c, bn[0], bn[1], bn[2], bn[3]}, b, NULL);
    op1(g, WL_OP_FLATTEN, "flat", 1, &b, f, NULL);
    op1(g, WL_OP_MATMUL, "fc", 2, (int32_t[]){f, fw}, y, NULL);
    op1(g, WL_OP_MATMUL, "fc_again", 2, (int32_t[]){f, fw}, y2, NULL); /* shares fw */
    wl_add_graph_output(g, y);
    wl_add_graph_output(g, y2);
    assert_int_equal(wl_graph_index(g, NULL), AS_OK);
    assert_false(wl_tensor_is_param(g, bn[2]));
    assert_true(wl_tensor_is_param(g, bn[0]));
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.params, 108 + 8 + 1440);
    assert_int_equal(s.macs, 4LL * 36 * 27 + 2 * 1440);
    assert_int_equal(s.weight_bytes, 4 * (108 + 8 + 1440));
    assert_int_equal(s.max_working_set_bytes, 4 * (192 + 144)); /* the conv */
    assert_string_equal(g->ops[s.max_working_set_op].name, "conv");
    assert_int_equal(s.n_compute_ops, 3);
    /* conv: 192+144 act + 108 w; bn: 144+144 + 16 w (all four);
     * flatten: nothing; each fc: 144 + 10 act + 1440 w. */
    int64_t bytes = 4 * ((192 + 144 + 108) + (144 + 144 + 16) + 2 * (144 + 10 + 1440));
    assert_int_equal(s.dram_bytes_unfused, bytes);
    assert_true(s.op_intensity_unfused > 0.0);
    assert_true(s.op_intensity_unfused == 2.0 * (double)s.macs / (double)bytes);
    wl_set_precision(g, WL_PREC_MIXED);
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.weight_bytes, 108 + 8 + 1440);
    assert_int_equal(s.max_working_set_bytes, 2 * (192 + 144));
    wl_graph_free(g);
}

static void test_compact_drops_dead_ops(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("t", "test");
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, DIMS(4));
    int32_t a = tensor(g, "a", WL_TENSOR_ACTIVATION, DIMS(4));
    int32_t b = tensor(g, "b", WL_TENSOR_ACTIVATION, DIMS(4));
    wl_add_graph_input(g, x);
    int32_t dead = op1(g, WL_OP_RELU, "unused", 1, &x, a, NULL);
    op1(g, WL_OP_SIGMOID, "kept", 1, &x, b, NULL);
    wl_add_graph_output(g, b);
    g->ops[dead].dead = true;
    assert_int_equal(wl_graph_compact(g, NULL), AS_OK);
    assert_int_equal(g->n_ops, 1);
    assert_string_equal(g->ops[0].name, "kept");
    assert_int_equal(g->n_tensors, 2);
    assert_int_equal(wl_find_tensor(g, "a"), -1);
    int32_t nb = wl_find_tensor(g, "b");
    assert_int_equal(g->tensors[nb].producer, 0);
    assert_int_equal(g->outputs[0], nb);
    wl_graph_free(g);
}

static void test_names_and_shapes(void **state)
{
    (void)state;
    assert_int_equal(wl_op_kind_from_name("Conv"), WL_OP_CONV);
    assert_int_equal(wl_op_kind_from_name("LayerNormalization"), WL_OP_LAYERNORM);
    assert_int_equal(wl_op_kind_from_name("FancyOp"), WL_OP_UNKNOWN);
    assert_string_equal(wl_op_kind_name(WL_OP_GLOBAL_AVERAGE_POOL), "GlobalAveragePool");
    assert_int_equal(wl_op_kind_category(WL_OP_MATMUL), WL_CAT_COMPUTE);
    assert_int_equal(wl_dtype_bits(WL_DTYPE_BF16), 16);
    assert_false(wl_dtype_valid(14)); /* complex128: not ours */
    wl_tensor t = {.shape_known = true, .rank = 3, .dims = {1, 3, 5}, .bits = 12};
    char buf[32];
    assert_string_equal(wl_shape_str(&t, buf, sizeof buf), "[1,3,5]");
    assert_int_equal(wl_tensor_elements(&t), 15);
    assert_int_equal(wl_tensor_bytes(&t), (15 * 12 + 7) / 8);
    wl_tensor huge = {.shape_known = true, .rank = 3, .dims = {1LL << 40, 1LL << 20, 1 << 10}};
    assert_int_equal(wl_tensor_elements(&huge), -1);
    wl_precision p;
    assert_true(wl_precision_parse("bf16", &p));
    assert_int_equal(p, WL_PREC_BF16);
    assert_false(wl_precision_parse("fp8", &p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_is_stable_and_fixes_misorder),
        cmocka_unit_test(test_cycle_is_reported),
        cmocka_unit_test(test_dangling_and_duplicates),
        cmocka_unit_test(test_conv_problem),
        cmocka_unit_test(test_depthwise_and_transposed_problems),
        cmocka_unit_test(test_matmul_problems),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_compact_drops_dead_ops),
        cmocka_unit_test(test_names_and_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
