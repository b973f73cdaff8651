/*
 * test_transform.c -- batch size, precision, BatchNorm folding, fusability
 * marks and pruning, on zoo models and reference exports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

static wl_graph *model(const char *name)
{
    char path[512];
    if (strstr(name, ".onnx"))
        snprintf(path, sizeof path, "%s/models/%s", AS_TEST_DATA_DIR, name);
    else
        snprintf(path, sizeof path, "%s", name);
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    wl_onnx_options opt = {0};
    if (wl_model_load(path, &opt, &g, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
    return g;
}

static wl_stats stats(const wl_graph *g)
{
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    return s;
}

/* MACs and activations scale with the batch; parameters do not.  BERT's
 * export spells batch 1 in its Reshape targets, which must follow. */
static void test_batch(void **state)
{
    (void)state;
    const char *models[] = {"resnet50", "bert_base_like.onnx", "mobilenet_v2.onnx", "gpt2"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        wl_graph *g = model(models[i]);
        wl_stats one = stats(g);
        as_status st;
        as_status_clear(&st);
        if (wl_set_batch(g, 4, &st) != AS_OK)
            fail_msg("%s: %s", models[i], st.message);
        wl_stats four = stats(g);
        assert_int_equal(four.macs, 4 * one.macs);
        assert_int_equal(four.params, one.params);
        assert_int_equal(four.max_working_set_bytes, 4 * one.max_working_set_bytes);
        assert_int_equal(g->tensors[g->outputs[0]].dims[0], 4);
        wl_graph_free(g);
    }
}

static void test_batch_rejects_nonsense(void **state)
{
    (void)state;
    wl_graph *g = model("alexnet");
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_set_batch(g, 0, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "batch"));
    wl_graph_free(g);
}

static void test_precision(void **state)
{
    (void)state;
    wl_graph *g = model("bert_base_like.onnx");
    wl_stats fp32 = stats(g);
    wl_set_precision(g, WL_PREC_INT8);
    wl_stats int8 = stats(g);
    assert_int_equal(int8.weight_bytes * 4, fp32.weight_bytes);
    assert_int_equal(int8.max_working_set_bytes * 4, fp32.max_working_set_bytes);
    /* Token ids stay int64 whatever the precision of the float data. */
    assert_int_equal(g->tensors[g->inputs[0]].bits, 64);
    wl_set_precision(g, WL_PREC_MIXED);
    wl_stats mixed = stats(g);
    assert_int_equal(mixed.weight_bytes, int8.weight_bytes);
    assert_int_equal(mixed.max_working_set_bytes * 2, fp32.max_working_set_bytes);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_set_tensor_bits(g, "no_such_tensor", 4, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no_such_tensor"));
    wl_graph_free(g);
}

/* Folding the unfused ResNet-50 export gives the fused export's
 * parameters, layers and MACs. */
static void test_fold_batchnorm(void **state)
{
    (void)state;
    wl_graph *unfused = model("resnet50.nofuse.onnx");
    wl_graph *fused = model("resnet50.onnx");
    int folded = 0;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_fold_batchnorm(unfused, &folded, &st), AS_OK);
    assert_int_equal(folded, 53);
    wl_stats a = stats(unfused), b = stats(fused);
    assert_int_equal(a.params, b.params);
    assert_int_equal(a.macs, b.macs);
    assert_int_equal(unfused->n_ops, fused->n_ops);
    for (int32_t o = 0; o < unfused->n_ops; o++)
        assert_int_equal(unfused->ops[o].kind, fused->ops[o].kind);
    /* Nothing left to fold the second time. */
    assert_int_equal(wl_fold_batchnorm(unfused, &folded, &st), AS_OK);
    assert_int_equal(folded, 0);
    wl_graph_free(unfused);
    wl_graph_free(fused);
}

static void test_mark_fusable(void **state)
{
    (void)state;
    wl_graph *g = model("resnet18.onnx");
    wl_mark_fusable(g);
    int relu = 0, relu_fusable = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->kind == WL_OP_RELU) {
            relu++;
            relu_fusable += op->fusable;
        }
        if (wl_op_kind_category(op->kind) == WL_CAT_COMPUTE)
            assert_false(op->fusable);
    }
    /* Every ReLU reads a conv or an Add that nothing else reads. */
    assert_int_equal(relu, 17);
    assert_int_equal(relu_fusable, 17);
    wl_graph_free(g);
}

static void test_prune_unstructured(void **state)
{
    (void)state;
    wl_graph *g = model("resnet18");
    wl_stats dense = stats(g);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_prune_unstructured(g, NULL, 0.25, &st), AS_OK);
    wl_stats sparse = stats(g);
    assert_int_equal(sparse.params, dense.params);
    assert_true(sparse.nonzero_params < dense.params / 3);
    assert_int_equal(wl_prune_unstructured(g, "no.such.layer", 0.5, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no.such.layer"));
    as_status_clear(&st);
    assert_int_equal(wl_prune_unstructured(g, NULL, 1.5, &st), AS_EINVAL);
    wl_graph_free(g);
}

/* Halving the channels of every prunable conv in ResNet-50 shrinks the
 * inner convs of each bottleneck (conv1 and conv2 outputs) and leaves the
 * residual channels alone; MobileNetV2's expansions drag their depthwise
 * convs along. */
static void test_prune_channels(void **state)
{
    (void)state;
    wl_graph *g = model("resnet50");
    wl_stats before = stats(g);
    int pruned = 0;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_prune_channels(g, NULL, 0.5, &pruned, &st), AS_OK);
    assert_int_equal(pruned, 32); /* conv1 and conv2 of 16 bottlenecks */
    wl_stats after = stats(g);
    assert_true(after.macs < before.macs);
    assert_true(after.params < before.params);
    assert_int_equal(g->tensors[g->outputs[0]].dims[1], 1000);
    wl_graph_free(g);

    g = model("mobilenet_v2.onnx");
    as_status_clear(&st);
    assert_int_equal(wl_prune_channels(g, NULL, 0.5, &pruned, &st), AS_OK);
    assert_true(pruned >= 16);
    int depthwise_halved = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        depthwise_halved += g->ops[o].kind == WL_OP_CONV && g->ops[o].attrs.group > 1 &&
                            g->ops[o].attrs.group == g->tensors[g->ops[o].inputs[0]].dims[1];
    assert_int_equal(depthwise_halved, 17);
    wl_graph_free(g);

    g = model("resnet50");
    as_status_clear(&st);
    /* layer1.0.conv3 feeds the residual Add: it cannot shrink. */
    int32_t conv3 = -1;
    for (int32_t o = 0; o < g->n_ops; o++)
        if (strstr(g->ops[o].name, "layer1.0.conv3"))
            conv3 = o;
    assert_true(conv3 >= 0);
    assert_int_equal(wl_prune_channels(g, g->ops[conv3].name, 0.5, NULL, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "cannot shrink"));
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch),          cmocka_unit_test(test_batch_rejects_nonsense),
        cmocka_unit_test(test_precision),      cmocka_unit_test(test_fold_batchnorm),
        cmocka_unit_test(test_mark_fusable),   cmocka_unit_test(test_prune_unstructured),
        cmocka_unit_test(test_prune_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
