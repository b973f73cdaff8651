/*
 * test_reference.c -- the workload layer against torch's ground truth:
 * every reference ONNX file gives exact MACs (in total and per compute
 * layer), parameters and bf16 working set; the zoo's ResNet-50,
 * MobileNetV2 and EfficientNet-B0 agree with the exports layer by layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "truth.h"

static wl_graph *load_model(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models/%s", AS_TEST_DATA_DIR, file);
    wl_onnx_options opt = {0};
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    as_code rc = wl_onnx_load(path, &opt, &g, &st);
    if (rc != AS_OK)
        print_error("%s: %s\n", path, st.message);
    assert_int_equal(rc, AS_OK);
    return g;
}

/* Every compute layer of g matches the truth's, in order: op type, MACs
 * (also as the product of the loop-nest bounds) and operand shapes. */
static void check_layers(const wl_graph *g, const truth_model *m)
{
    int32_t ops[TRUTH_MAX_LAYERS];
    int n = truth_compute_ops(g, ops, TRUTH_MAX_LAYERS);
    assert_int_equal(n, m->n_layers);
    for (int i = 0; i < n; i++) {
        const wl_op *op = &g->ops[ops[i]];
        const truth_layer *l = &m->layers[i];
        char in[64], w[64], out[64];
        wl_op_stats s;
        wl_op_stats_get(g, ops[i], &s);
        wl_problem p;
        assert_int_equal(wl_op_problem(g, ops[i], &p, NULL), AS_OK);
        truth_shape(&g->tensors[op->inputs[0]], in, sizeof in);
        truth_shape(&g->tensors[op->inputs[1]], w, sizeof w);
        truth_shape(&g->tensors[op->outputs[0]], out, sizeof out);
        if (strcmp(op->op_type, l->op) || s.macs != l->macs || strcmp(in, l->input) ||
            strcmp(w, l->weight) || strcmp(out, l->output))
            fail_msg("layer %d '%s': got %s %lld %s %s %s, truth %s %lld %s %s %s (%s)", i,
                     op->name, op->op_type, (long long)s.macs, in, w, out, l->op, l->macs,
                     l->input, l->weight, l->output, l->name);
        assert_int_equal(wl_problem_macs(&p), s.macs);
    }
}

static void test_onnx_model(void **state)
{
    const char *stem = *state;
    truth_model *m = malloc(sizeof *m);
    assert_non_null(m);
    assert_true(truth_load(stem, m));
    wl_graph *g = load_model(m->file);
    wl_set_precision(g, WL_PREC_BF16);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.macs, m->macs);
    assert_int_equal(s.params, m->params);
    assert_int_equal(s.max_working_set_bytes, m->max_ws_bf16);
    assert_int_equal(g->n_ops, m->nodes);
    char out[64];
    assert_true(g->n_outputs >= 1);
    assert_string_equal(truth_shape(&g->tensors[g->outputs[0]], out, sizeof out), m->output);
    check_layers(g, m);
    wl_graph_free(g);
    free(m);
}

/* The zoo model `state` = {zoo name, truth stem of the unfused export,
 * truth stem of the BN-fused export}: same compute layers; BN folding of
 * the zoo model gives the fused export's parameter count. */
static void test_zoo_against_onnx(void **state)
{
    const char *const *names = *state;
    truth_model *unfused = malloc(sizeof *unfused), *fused = malloc(sizeof *fused);
    assert_true(unfused && fused);
    assert_true(truth_load(names[1], unfused));
    assert_true(truth_load(names[2], fused));
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    assert_int_equal(wl_zoo_build(names[0], &g, &st), AS_OK);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.macs, unfused->macs);
    check_layers(g, unfused);
    int folded = 0;
    assert_int_equal(wl_fold_batchnorm(g, &folded, &st), AS_OK);
    assert_true(folded > 0);
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.params, fused->params);
    assert_int_equal(s.macs, fused->macs);
    check_layers(g, fused);
    wl_graph_free(g);
    free(unfused);
    free(fused);
}

static const char *const resnet50[] = {"resnet50", "resnet50.nofuse", "resnet50"};
static const char *const mobilenet_v2[] = {"mobilenet_v2", "mobilenet_v2", "mobilenet_v2"};
static const char *const efficientnet_b0[] = {"efficientnet_b0", "efficientnet_b0.nofuse",
                                              "efficientnet_b0"};

#define ONNX_CASE(stem) cmocka_unit_test_prestate(test_onnx_model, (void *)stem)
#define ZOO_CASE(names) cmocka_unit_test_prestate(test_zoo_against_onnx, (void *)names)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ONNX_CASE("alexnet"),         ONNX_CASE("resnet18"),
        ONNX_CASE("resnet50"),        ONNX_CASE("resnet50.nofuse"),
        ONNX_CASE("mobilenet_v2"),    ONNX_CASE("efficientnet_b0"),
        ONNX_CASE("efficientnet_b0.nofuse"), ONNX_CASE("unet"),
        ONNX_CASE("bert_base_like"),  ZOO_CASE(resnet50),
        ZOO_CASE(mobilenet_v2),       ZOO_CASE(efficientnet_b0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
