/*
 * test_ops.c -- the op table (src/workload/ops_private.h): every kind has
 * exactly one entry, and the queries lower modules ask of it (vector-unit
 * work, halo rule, gathered rows, attribute defaults) give what the
 * per-module switches they replace gave.  The expected values are those
 * switches, written out here once as the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "workload/ops_private.h"

/* Every kind of WL_OP_LIST but UNKNOWN has a shape rule in exactly one
 * family table; UNKNOWN has none. */
static void test_every_kind_has_one_entry(void **state)
{
    (void)state;
    const wl_op_def *families[] = {wl_ops_window,   wl_ops_matmul, wl_ops_norm,  wl_ops_elementwise,
                                   wl_ops_movement, wl_ops_index,  wl_ops_shape, wl_ops_lowering};
    for (int k = 0; k < WL_OP_COUNT; k++) {
        int entries = 0;
        for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
            entries += families[f][k].infer != NULL;
        if (entries != (k == WL_OP_UNKNOWN ? 0 : 1))
            fail_msg("op %s has %d table entries", wl_op_kind_name((wl_op_kind)k), entries);
        assert_true(wl_op_def_of((wl_op_kind)k)->infer == NULL || k != WL_OP_UNKNOWN);
    }
    assert_null(wl_op_def_of(WL_OP_COUNT)->infer);
    assert_null(wl_op_def_of((wl_op_kind)-1)->infer);
}

/* Compute ops, and only they, have a loop-nest problem. */
static void test_problem_exactly_for_compute_ops(void **state)
{
    (void)state;
    for (int k = 0; k < WL_OP_COUNT; k++)
        assert_int_equal(wl_op_def_of((wl_op_kind)k)->problem != NULL,
                         wl_op_kind_category((wl_op_kind)k) == WL_CAT_COMPUTE);
}

/* The reference: the vector-op switch of mapping/network.c before the op
 * table. */
static int64_t reference_vector_ops(const wl_graph *g, const wl_op *op, const wl_op_stats *s)
{
    int64_t in = 0;
    if (op->n_inputs > 0 && op->inputs[0] >= 0) {
        int64_t n = wl_tensor_elements(&g->tensors[op->inputs[0]]);
        in = n > 0 ? n : 0;
    }
    int64_t window = 1;
    for (int i = 0; i < op->attrs.n_spatial && i < WL_MAX_SPATIAL; i++)
        window *= op->attrs.kernel_shape[i] > 0 ? op->attrs.kernel_shape[i] : 1;
    switch (op->kind) {
    case WL_OP_BATCHNORM:
        return 2 * s->output_elements;
    case WL_OP_LAYERNORM:
        return 5 * s->output_elements;
    case WL_OP_SOFTMAX:
        return 4 * s->output_elements;
    case WL_OP_MAX_POOL:
    case WL_OP_AVERAGE_POOL:
        return window * s->output_elements;
    default:
        break;
    }
    switch (wl_op_kind_category(op->kind)) {
    case WL_CAT_UNARY:
    case WL_CAT_BINARY:
    case WL_CAT_NORM:
        return s->output_elements;
    case WL_CAT_REDUCE:
    case WL_CAT_POOL:
        return in;
    default:
        return 0;
    }
}

/* The reference: the halo switch of fusion/group.c's need_span before the
 * op table, as the rule it applies to input i. */
static wl_halo_rule reference_halo(const wl_op *op, int i)
{
    switch (op->kind) {
    case WL_OP_CONV:
    case WL_OP_MAX_POOL:
    case WL_OP_AVERAGE_POOL:
        return i == 0 ? WL_HALO_WINDOW : WL_HALO_WHOLE;
    case WL_OP_MATMUL:
        return i == 0 ? WL_HALO_ROWS : WL_HALO_WHOLE;
    case WL_OP_GEMM:
        return i == 0 && !op->attrs.trans_a ? WL_HALO_ROWS : WL_HALO_WHOLE;
    case WL_OP_LAYERNORM:
    case WL_OP_SOFTMAX:
        return i == 0 ? WL_HALO_BEFORE_AXIS : WL_HALO_WHOLE;
    case WL_OP_CONCAT:
        return WL_HALO_NOT_AXIS;
    default:
        break;
    }
    switch (wl_op_kind_category(op->kind)) {
    case WL_CAT_UNARY:
    case WL_CAT_BINARY:
    case WL_CAT_NORM:
        return WL_HALO_POINTWISE;
    default:
        return WL_HALO_WHOLE;
    }
}

/* Vector work, halo rule and gathered rows of every op of every zoo model
 * (each kind the zoo uses, with its real shapes and attributes) equal the
 * references. */
static void test_queries_match_references_on_zoo(void **state)
{
    (void)state;
    int n_entries = 0;
    const wl_zoo_entry *entries = wl_zoo_entries(&n_entries);
    bool seen[WL_OP_COUNT] = {false};
    for (int z = 0; z < n_entries; z++) {
        wl_graph *g = NULL;
        as_status st = {0};
        assert_int_equal(wl_zoo_build(entries[z].name, &g, &st), AS_OK);
        for (int32_t o = 0; o < g->n_ops; o++) {
            const wl_op *op = &g->ops[o];
            wl_op_stats s;
            wl_op_stats_get(g, o, &s);
            seen[op->kind] = true;
            if (wl_op_vector_ops(g, op, &s) != reference_vector_ops(g, op, &s))
                fail_msg("%s: op %s (%s): vector ops differ", entries[z].name, op->name,
                         op->op_type);
            for (int i = 0; i < op->n_inputs; i++) {
                assert_int_equal(wl_op_halo(op, i), reference_halo(op, i));
                assert_int_equal(wl_op_gathers_rows(op, i), op->kind == WL_OP_GATHER && i == 0);
            }
        }
        wl_graph_free(g);
    }
    assert_true(seen[WL_OP_CONV] && seen[WL_OP_GEMM] && seen[WL_OP_SOFTMAX] &&
                seen[WL_OP_MAX_POOL] && seen[WL_OP_LAYERNORM] && seen[WL_OP_CONCAT]);
}

/* Every kind with default attributes and a made-up op of each: the
 * queries still match (kinds the zoo does not use, Gemm with transA). */
static void test_queries_match_references_per_kind(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("kinds", "test");
    as_status st = {0};
    int64_t dims[4] = {1, 4, 6, 6};
    int32_t x = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_F32, 4, dims, &st);
    assert_true(x >= 0);
    wl_op_stats s = {.output_elements = 144};
    for (int k = 0; k < WL_OP_COUNT; k++) {
        wl_op op = {.kind = (wl_op_kind)k, .n_inputs = 1, .inputs = &x};
        wl_attrs_default(&op.attrs, op.kind);
        op.attrs.n_spatial = 2;
        op.attrs.kernel_shape[0] = op.attrs.kernel_shape[1] = 3;
        for (int trans = 0; trans < 2; trans++) {
            op.attrs.trans_a = trans;
            assert_int_equal(wl_op_vector_ops(g, &op, &s), reference_vector_ops(g, &op, &s));
            for (int i = 0; i < 3; i++)
                assert_int_equal(wl_op_halo(&op, i), reference_halo(&op, i));
        }
    }
    wl_graph_free(g);
}

/* The reference: wl_attrs_default's switch before the op table. */
static void reference_defaults(wl_attrs *a, wl_op_kind kind)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < WL_MAX_SPATIAL; i++)
        a->strides[i] = a->dilations[i] = 1;
    a->group = 1;
    a->keepdims = 1;
    a->alpha = 1.0;
    a->beta = 1.0;
    a->epsilon = 1e-5;
    a->ratio = 0.5;
    switch (kind) {
    case WL_OP_SOFTMAX:
    case WL_OP_LAYERNORM:
        a->axis = -1;
        break;
    case WL_OP_FLATTEN:
        a->axis = 1;
        break;
    case WL_OP_LEAKY_RELU:
        a->alpha = 0.01;
        break;
    case WL_OP_HARD_SIGMOID:
        a->alpha = 0.2;
        a->beta = 0.5;
        break;
    case WL_OP_PAD:
        strcpy(a->mode, "constant");
        break;
    case WL_OP_RESIZE:
        strcpy(a->mode, "nearest");
        break;
    case WL_OP_CAST:
        a->to = WL_DTYPE_F32;
        break;
    case WL_OP_LRN: /* added with the op */
        a->alpha = 0.0001f;
        a->beta = 0.75f;
        break;
    case WL_OP_LP_NORM:
        a->axis = -1;
        break;
    case WL_OP_TRILU: /* added with the ops */
        a->upper = 1;
        break;
    case WL_OP_TOP_K:
    case WL_OP_LOG_SOFTMAX:
        a->axis = -1;
        break;
    case WL_OP_SELU: /* added with the op (ONNX's constants) */
        a->alpha = 1.67326319217681884765625f;
        a->gamma = 1.05070102214813232421875f;
        break;
    default:
        break;
    }
}

static void test_attribute_defaults(void **state)
{
    (void)state;
    for (int k = 0; k < WL_OP_COUNT; k++) {
        wl_attrs got, want;
        wl_attrs_default(&got, (wl_op_kind)k);
        reference_defaults(&want, (wl_op_kind)k);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("defaults of %s differ", wl_op_kind_name((wl_op_kind)k));
    }
}

/* Fusability and the kernel source, against the switches they replace
 * (transform.c's is_elementwise, fusion/group.c's and the exporter's
 * Conv checks). */
static void test_fusable_and_kernel_source(void **state)
{
    (void)state;
    for (int k = 0; k < WL_OP_COUNT; k++) {
        wl_op_category c = wl_op_kind_category((wl_op_kind)k);
        bool fusable = c == WL_CAT_UNARY || c == WL_CAT_BINARY || k == WL_OP_BATCHNORM;
        assert_int_equal(wl_op_def_of((wl_op_kind)k)->fusable, fusable);
        assert_int_equal(wl_op_kernel_from_weight((wl_op_kind)k),
                         k == WL_OP_CONV || k == WL_OP_CONV_TRANSPOSE);
    }
}

/* Only Softmax's and LogSoftmax's axis default changed with the opset (1
 * before 13). */
static void test_axis_default_by_opset(void **state)
{
    (void)state;
    for (int k = 0; k < WL_OP_COUNT; k++) {
        const wl_op_def *def = wl_op_def_of((wl_op_kind)k);
        bool softmax = k == WL_OP_SOFTMAX || k == WL_OP_LOG_SOFTMAX; /* LogSoftmax: added */
        assert_int_equal(def->axis_changed_at, softmax ? 13 : 0);
        assert_int_equal(def->axis_before, softmax ? 1 : 0);
    }
}

/* Vector classes as workload.h documents them. */
static void test_vector_classes(void **state)
{
    (void)state;
    assert_int_equal(wl_op_vector_class(WL_OP_CONV), WL_VEC_NONE);
    assert_int_equal(wl_op_vector_class(WL_OP_RELU), WL_VEC_PER_OUTPUT);
    assert_int_equal(wl_op_vector_class(WL_OP_WHERE), WL_VEC_PER_OUTPUT);
    assert_int_equal(wl_op_vector_class(WL_OP_REDUCE_MEAN), WL_VEC_PER_INPUT);
    assert_int_equal(wl_op_vector_class(WL_OP_GLOBAL_AVERAGE_POOL), WL_VEC_PER_INPUT);
    assert_int_equal(wl_op_vector_class(WL_OP_MAX_POOL), WL_VEC_PER_WINDOW);
    assert_int_equal(wl_op_vector_class(WL_OP_TRANSPOSE), WL_VEC_NONE);
    assert_int_equal(wl_op_vector_class(WL_OP_UNKNOWN), WL_VEC_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_has_one_entry),
        cmocka_unit_test(test_problem_exactly_for_compute_ops),
        cmocka_unit_test(test_queries_match_references_on_zoo),
        cmocka_unit_test(test_queries_match_references_per_kind),
        cmocka_unit_test(test_attribute_defaults),
        cmocka_unit_test(test_fusable_and_kernel_source),
        cmocka_unit_test(test_axis_default_by_opset),
        cmocka_unit_test(test_vector_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
