/*
 * test_reference.c -- the workload layer against torch's ground truth:
 * every reference ONNX file gives exact MACs (in total and per compute
 * layer), parameters and bf16 working set: the classic CNNs, and raw
 * exports of Swin-T, ConvNeXt-Tiny, BERT-base and GPT-2 at opset 14 (and
 * 17 but for Swin-T; BERT and GPT-2 also with symbolic batch and sequence,
 * given values as the reference says) made by scripts/export_modern.py;
 * the zoo's
 * ResNet-50, MobileNetV2 and EfficientNet-B0 agree with the exports layer
 * by layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "truth.h"

/* tests/data/models/<file>, its symbolic dims (if any) given `dims`, or
 * the test fails. */
static wl_graph *load_model_dims(const char *file, const char *dims)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models/%s", AS_TEST_DATA_DIR, file);
    return truth_load_onnx_dims(path, dims);
}

static wl_graph *load_model(const char *file)
{
    return load_model_dims(file, NULL);
}

static void test_onnx_model(void **state)
{
    const char *stem = *state;
    truth_model *m = malloc(sizeof *m);
    assert_non_null(m);
    assert_true(truth_load(stem, m));
    wl_graph *g = load_model_dims(m->file, m->dims[0] ? m->dims : NULL);
    assert_int_equal(g->n_warnings, 0); /* no symbolic dim left to guess */
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
    truth_check_layers(g, m, false);
    wl_graph_free(g);
    free(m);
}

/* Swin-T's shifted-window attention masks are computed from shapes alone
 * (ConstantOfShape, ScatterND, Sub, Equal, Not, Cast, Where over up to
 * 64x49x49 elements): folded at load time, none costs at run time.  Its
 * padding to a multiple of the window pads by zero: views. */
static void test_swin_masks_fold(void **state)
{
    (void)state;
    static const char *const mask_ops[] = {
        "ConstantOfShape", "ScatterND", "Equal", "Not", "Cast", "Where"};
    wl_graph *g = load_model("swin_t.onnx");
    int folded = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        for (size_t i = 0; i < sizeof mask_ops / sizeof *mask_ops; i++) {
            if (strcmp(op->op_type, mask_ops[i]))
                continue;
            if (!op->folded)
                fail_msg("%s (%s) runs at run time", op->name, op->op_type);
            folded++;
        }
    }
    assert_true(folded >= 5 * 6); /* 5 shifted-window blocks at 224x224 */
    /* Its 15 Pads pad 56, 28, 14 and 7 up to a multiple of 7: by nothing,
     * views that move no data. */
    int pads = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!strcmp(g->ops[o].op_type, "Pad")) {
            assert_int_equal(wl_op_category_of(&g->ops[o]), WL_CAT_VIEW);
            pads++;
        }
    assert_int_equal(pads, 15);
    wl_graph_free(g);
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
    wl_graph *g = truth_build_zoo(names[0]);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.macs, unfused->macs);
    truth_check_layers(g, unfused, false);
    as_status st;
    int folded = 0;
    assert_int_equal(wl_fold_batchnorm(g, &folded, &st), AS_OK);
    assert_true(folded > 0);
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    assert_int_equal(s.params, fused->params);
    assert_int_equal(s.macs, fused->macs);
    truth_check_layers(g, fused, false);
    wl_graph_free(g);
    free(unfused);
    free(fused);
}

static const char *const resnet50[] = {"resnet50", "resnet50.nofuse", "resnet50"};
static const char *const mobilenet_v2[] = {"mobilenet_v2", "mobilenet_v2", "mobilenet_v2"};
static const char *const efficientnet_b0[] = {"efficientnet_b0", "efficientnet_b0.nofuse",
                                              "efficientnet_b0"};

/* Named by the file's stem, so that a failure says which model. */
#define ONNX_CASE(stem)                                                                            \
    {                                                                                              \
        stem, test_onnx_model, NULL, NULL, (void *)stem                                            \
    }
#define ZOO_CASE(names) cmocka_unit_test_prestate(test_zoo_against_onnx, (void *)names)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ONNX_CASE("alexnet"),
        ONNX_CASE("resnet18"),
        ONNX_CASE("resnet50"),
        ONNX_CASE("resnet50.nofuse"),
        ONNX_CASE("mobilenet_v2"),
        ONNX_CASE("efficientnet_b0"),
        ONNX_CASE("efficientnet_b0.nofuse"),
        ONNX_CASE("unet"),
        ONNX_CASE("bert_base_like"),
        ONNX_CASE("swin_t"),
        ONNX_CASE("convnext_tiny"),
        ONNX_CASE("convnext_tiny.opset17"),
        ONNX_CASE("bert_base_hf"),
        ONNX_CASE("bert_base_hf.opset17"),
        ONNX_CASE("gpt2_hf"),
        ONNX_CASE("gpt2_hf.opset17"),
        ONNX_CASE("bert_base_hf.dynamic"),
        ONNX_CASE("gpt2_hf.dynamic"),
        cmocka_unit_test(test_swin_masks_fold),
        ZOO_CASE(resnet50),
        ZOO_CASE(mobilenet_v2),
        ZOO_CASE(efficientnet_b0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
