/*
 * test_zoo_modern.c -- the models of zoo_modern.c against figures they did
 * not compute: torch's ground truth (tests/data/reference, via truth.h) for
 * UNet, BERT and EfficientNet-B0 layer by layer, torchvision's and HF's
 * published parameter counts and MACs, and hand counts for the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "truth.h"

/* ------------------------------------------------------------- totals */

/*
 * The figures each model must reproduce exactly.  EfficientNet: params are
 * torchvision's num_params; MACs are torchvision's definitions counted
 * exactly (offline, in Python), which round to its published GFLOPS.
 * ViT-B/16: torchvision's 86,567,656 and 17.564 GFLOPS.  UNet and BERT:
 * the totals of truth/<model>.json.  GPT-2: HF's GPT2LMHeadModel count
 * and the MACs below.  SRGAN: the hand count in zoo_modern.c.
 */
typedef struct model_totals {
    const char *name; /* in the zoo */
    int64_t params, macs;
    double published_gmacs; /* 0: none published */
} model_totals;

/* GPT-2 small at 128 tokens: per block c_attn, QK^T + AV, c_proj, MLP;
 * then the tied LM head. */
#define GPT2_MACS                                                                                  \
    (12 * (128LL * 768 * 2304 + 2LL * 12 * 128 * 128 * 64 + 128LL * 768 * 768 +                    \
           2LL * 128 * 768 * 3072) +                                                               \
     128LL * 768 * 50257)

static const model_totals totals[] = {
    {"efficientnet_b0", 5288548, 385814752, 0.386},
    {"efficientnet_b1", 7794184, 686802832, 0.687},
    {"efficientnet_b2", 9109994, 1087529456, 1.088},
    {"efficientnet_b3", 12233232, 1827141392, 1.827},
    {"efficientnet_b4", 19341616, 4393771024, 4.394},
    {"efficientnet_b5", 30389784, 10266384752, 10.266},
    {"efficientnet_b6", 43040704, 19067593536, 19.068},
    {"efficientnet_b7", 66347960, 37745884192, 37.746},
    {"vit_b_16", 86567656, 17563828224, 17.564},
    {"unet", 31037698, 48171581440, 0},
    {"bert_base", 109482240, 11174215680, 0},
    {"gpt2", 124439808, GPT2_MACS, 0},
    {"srgan", 1549462, 20442710016, 0},
};

static void test_totals(void **state)
{
    const model_totals *m = *state;
    wl_graph *g = truth_build_zoo(m->name);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
    if (s.params != m->params || s.macs != m->macs)
        fail_msg("%s: %lld params, %lld MACs; expected %lld, %lld", m->name, (long long)s.params,
                 (long long)s.macs, (long long)m->params, (long long)m->macs);
    if (m->published_gmacs > 0)
        assert_int_equal(llround((double)s.macs / 1e6), llround(m->published_gmacs * 1000));
    wl_graph_free(g);
}

/* ------------------------------------------------- layers against torch */

/* The zoo model and the truth stem it reproduces layer by layer. */
typedef struct layer_case {
    const char *model, *stem;
} layer_case;

static const layer_case layer_cases[] = {
    {"unet", "unet"},
    {"bert_base", "bert_base_like"},
    {"efficientnet_b0", "efficientnet_b0.nofuse"},
};

/* Every compute op, in order, has the truth's module name, op type, MACs
 * and operand shapes. */
static void test_layers(void **state)
{
    const layer_case *c = *state;
    truth_model *m = malloc(sizeof *m);
    assert_non_null(m);
    assert_true(truth_load(c->stem, m));
    wl_graph *g = truth_build_zoo(c->model);
    truth_check_layers(g, m, true);
    wl_graph_free(g);
    free(m);
}

/* ------------------------------------------------------ op histograms */

typedef struct op_count {
    wl_op_kind kind;
    int count;
} op_count;

/* g has exactly these ops (live and unfolded), and no others. */
static void check_histogram(const wl_graph *g, const op_count *expected, int n)
{
    int counts[WL_OP_COUNT] = {0}, total = 0, expected_total = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!g->ops[o].dead && !g->ops[o].folded) {
            counts[g->ops[o].kind]++;
            total++;
        }
    for (int i = 0; i < n; i++) {
        if (counts[expected[i].kind] != expected[i].count)
            fail_msg("%s: %d %s ops, expected %d", g->name, counts[expected[i].kind],
                     wl_op_kind_name(expected[i].kind), expected[i].count);
        expected_total += expected[i].count;
    }
    assert_int_equal(total, expected_total);
}

/* The node histograms of the exports in truth/index.json (EfficientNet-B0
 * and UNet: the .nofuse variants, which keep BatchNormalization). */
static void test_histogram_effnet_unet(void **state)
{
    (void)state;
    static const op_count effnet_b0[] = {
        {WL_OP_CONV, 81}, {WL_OP_BATCHNORM, 49},           {WL_OP_SIGMOID, 65}, {WL_OP_MUL, 65},
        {WL_OP_ADD, 9},   {WL_OP_GLOBAL_AVERAGE_POOL, 17}, {WL_OP_FLATTEN, 1},  {WL_OP_GEMM, 1},
    };
    static const op_count unet[] = {
        {WL_OP_CONV, 19}, {WL_OP_CONV_TRANSPOSE, 4}, {WL_OP_BATCHNORM, 18},
        {WL_OP_RELU, 18}, {WL_OP_MAX_POOL, 4},       {WL_OP_CONCAT, 4},
    };
    wl_graph *g = truth_build_zoo("efficientnet_b0");
    check_histogram(g, effnet_b0, (int)(sizeof effnet_b0 / sizeof effnet_b0[0]));
    wl_graph_free(g);
    g = truth_build_zoo("unet");
    check_histogram(g, unet, (int)(sizeof unet / sizeof unet[0]));
    wl_graph_free(g);
}

/*
 * BERT: the export's histogram (752 nodes) with its 25 LayerNorms spelled
 * out (ReduceMean x2, Sub, Pow, Add, Sqrt, Div, Mul, Add each) and its 147
 * Constant nodes; the zoo keeps one LayerNormalization per LayerNorm and
 * constants as tensors: Add 160 - 50, Mul 61 - 25, Div 37 - 25.
 */
static void test_histogram_bert(void **state)
{
    (void)state;
    static const op_count bert[] = {
        {WL_OP_GATHER, 4}, {WL_OP_MATMUL, 96},  {WL_OP_GEMM, 1},       {WL_OP_ADD, 110},
        {WL_OP_MUL, 36},   {WL_OP_DIV, 12},     {WL_OP_ERF, 12},       {WL_OP_SOFTMAX, 12},
        {WL_OP_TANH, 1},   {WL_OP_RESHAPE, 48}, {WL_OP_TRANSPOSE, 48}, {WL_OP_LAYERNORM, 25},
    };
    wl_graph *g = truth_build_zoo("bert_base");
    check_histogram(g, bert, (int)(sizeof bert / sizeof bert[0]));
    assert_int_equal(g->n_inputs, 3);
    assert_int_equal(g->tensors[g->inputs[0]].dtype, WL_DTYPE_I64);
    assert_int_equal(g->n_outputs, 2);
    wl_graph_free(g);
}

/* ------------------------------------------------- structure by model */

/* The shape of output i of g, as "1x1000". */
static const char *output_shape(const wl_graph *g, int i, char *buf, size_t size)
{
    return truth_shape(&g->tensors[g->outputs[i]], buf, size);
}

/* GPT-2: one token-embedding tensor read by both the Gather and the LM
 * head's Gemm; 12 causal masks applied with Where; logits per token. */
static void test_gpt2_structure(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("gpt2");
    int32_t wte = wl_find_tensor(g, "transformer.wte.weight");
    assert_true(wte >= 0);
    int readers = 0, wheres = 0, tanhs = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        for (int i = 0; i < op->n_inputs; i++)
            readers += op->inputs[i] == wte;
        wheres += op->kind == WL_OP_WHERE;
        tanhs += op->kind == WL_OP_TANH;
    }
    assert_int_equal(readers, 2);
    assert_int_equal(wheres, 12);
    assert_int_equal(tanhs, 12); /* gelu_new */
    assert_false(wl_tensor_is_param(g, wl_find_tensor(g, "causal_mask")));
    char buf[64];
    assert_string_equal(output_shape(g, 0, buf, sizeof buf), "1x128x50257");
    wl_graph_free(g);
}

/* Output shapes: SRGAN upscales 96 -> 384, ViT classifies the class token. */
static void test_output_shapes(void **state)
{
    (void)state;
    static const struct {
        const char *name, *shape;
    } cases[] = {
        {"srgan", "1x3x384x384"},
        {"vit_b_16", "1x1000"},
        {"efficientnet_b7", "1x1000"},
        {"unet", "1x2x256x256"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_graph *g = truth_build_zoo(cases[i].name);
        char buf[64];
        assert_int_equal(g->n_outputs, 1);
        assert_string_equal(output_shape(g, 0, buf, sizeof buf), cases[i].shape);
        wl_graph_free(g);
    }
}

/* At batch 4 every model does 4x the MACs with the same parameters: the
 * Reshape targets, the class token's Expand and the LM head follow the
 * batch. */
static void test_batch_follows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++) {
        wl_graph *g = truth_build_zoo(totals[i].name);
        as_status st;
        as_status_clear(&st);
        if (wl_set_batch(g, 4, &st) != AS_OK)
            fail_msg("%s: %s", totals[i].name, st.message);
        wl_stats s;
        assert_int_equal(wl_graph_stats(g, &s, NULL), AS_OK);
        assert_int_equal(s.params, totals[i].params);
        assert_int_equal(s.macs, 4 * totals[i].macs);
        wl_graph_free(g);
    }
}

/* A model built a second time into the same graph collides with its own
 * names at the first tensor: every builder stops cleanly (sticky error,
 * no use of a failed result) and reports it. */
static void test_failure_is_reported(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++) {
        wl_graph *g = truth_build_zoo(totals[i].name);
        as_status st;
        as_status_clear(&st);
        assert_int_not_equal(wl_zoo_find(totals[i].name)->build(g, &st), AS_OK);
        assert_true(st.message[0] != '\0');
        wl_graph_free(g);
    }
}

#define TOTALS_CASE(i) cmocka_unit_test_prestate(test_totals, (void *)&totals[i])
#define LAYERS_CASE(i) cmocka_unit_test_prestate(test_layers, (void *)&layer_cases[i])

int main(void)
{
    const struct CMUnitTest tests[] = {
        TOTALS_CASE(0),
        TOTALS_CASE(1),
        TOTALS_CASE(2),
        TOTALS_CASE(3),
        TOTALS_CASE(4),
        TOTALS_CASE(5),
        TOTALS_CASE(6),
        TOTALS_CASE(7),
        TOTALS_CASE(8),
        TOTALS_CASE(9),
        TOTALS_CASE(10),
        TOTALS_CASE(11),
        TOTALS_CASE(12),
        LAYERS_CASE(0),
        LAYERS_CASE(1),
        LAYERS_CASE(2),
        cmocka_unit_test(test_histogram_effnet_unet),
        cmocka_unit_test(test_histogram_bert),
        cmocka_unit_test(test_gpt2_structure),
        cmocka_unit_test(test_output_shapes),
        cmocka_unit_test(test_batch_follows),
        cmocka_unit_test(test_failure_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
