/*
 * test_zoo.c -- the zoo registry, the builder and the CNNs of zoo_cnn.c
 * against figures they did not compute: torchvision's published num_params
 * and GFLOPS (for every registry entry that has them, zoo_modern.c's
 * included), the MobileNetV1 paper and the pytorch-cifar parameter counts,
 * the loop-nest problems of problem.c, and torch.onnx.export's own graphs
 * (tests/data/models) op by op.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "truth.h"
#include "workload/zoo_builder.h"

static wl_stats stats_of(const wl_graph *g)
{
    wl_stats s;
    as_status st;
    if (wl_graph_stats(g, &s, &st) != AS_OK)
        fail_msg("%s: %s", g->name, st.message);
    return s;
}

/* ------------------------------------------------------------ registry */

/* Every entry builds, is named and sourced as the registry says, and the
 * finished graph infers again from scratch with every shape known. */
static void test_every_model_builds(void **state)
{
    (void)state;
    int n = 0;
    const wl_zoo_entry *e = wl_zoo_entries(&n);
    assert_int_equal(n, 30);
    for (int i = 0; i < n; i++) {
        assert_ptr_equal(wl_zoo_find(e[i].name), &e[i]);
        assert_true(e[i].description && e[i].description[0] && e[i].family && e[i].family[0]);
        wl_graph *g = truth_build_zoo(e[i].name);
        char source[64];
        snprintf(source, sizeof source, "zoo:%s", e[i].name);
        assert_string_equal(g->name, e[i].name);
        assert_string_equal(g->source, source);
        assert_int_equal(g->opset, 13);
        assert_true(g->n_inputs >= 1 && g->n_outputs >= 1);
        as_status st;
        if (wl_graph_infer(g, &st) != AS_OK)
            fail_msg("%s: re-inference: %s", e[i].name, st.message);
        for (int32_t t = 0; t < g->n_tensors; t++)
            if (!g->tensors[t].shape_known)
                fail_msg("%s: tensor '%s' has no shape", e[i].name, g->tensors[t].name);
        wl_graph_free(g);
    }
}

/* Decimals a published figure is printed with: the fewest that give it. */
static int decimals_of(double x)
{
    int d = 0;
    for (double scale = 1; d < 6 && fabs(x * scale - round(x * scale)) > 1e-6; scale *= 10)
        d++;
    return d;
}

/* torchvision's table: num_params exactly, MACs rounded as it prints
 * GFLOPS (0.714, 15.47, ...). */
static void test_published_figures(void **state)
{
    (void)state;
    int n = 0, checked = 0;
    const wl_zoo_entry *e = wl_zoo_entries(&n);
    for (int i = 0; i < n; i++) {
        if (e[i].published_params == 0)
            continue;
        wl_graph *g = truth_build_zoo(e[i].name);
        wl_stats s = stats_of(g);
        double scale = pow(10, decimals_of(e[i].published_gmacs));
        if (s.params != e[i].published_params ||
            llround((double)s.macs / 1e9 * scale) != llround(e[i].published_gmacs * scale))
            fail_msg("%s: %lld params, %lld MACs; torchvision: %lld, %g GFLOPS", e[i].name,
                     (long long)s.params, (long long)s.macs, (long long)e[i].published_params,
                     e[i].published_gmacs);
        checked++;
        wl_graph_free(g);
    }
    assert_int_equal(checked, 21); /* 12 classic torchvision CNNs, B0..B7, ViT-B/16 */
}

/* The graph's MACs are the sum over its compute ops of the product of the
 * loop-nest bounds. */
static void test_macs_are_problem_bounds(void **state)
{
    (void)state;
    int n = 0;
    const wl_zoo_entry *e = wl_zoo_entries(&n);
    for (int i = 0; i < n; i++) {
        wl_graph *g = truth_build_zoo(e[i].name);
        int64_t macs = 0;
        for (int32_t k = 0; k < g->n_order; k++) {
            int32_t o = g->order[k];
            if (wl_op_kind_category(g->ops[o].kind) != WL_CAT_COMPUTE)
                continue;
            wl_problem p;
            as_status st;
            if (wl_op_problem(g, o, &p, &st) != AS_OK)
                fail_msg("%s: %s", e[i].name, st.message);
            macs += wl_problem_macs(&p);
        }
        wl_stats s = stats_of(g);
        if (macs != s.macs || macs <= 0)
            fail_msg("%s: problems give %lld MACs, stats %lld", e[i].name, (long long)macs,
                     (long long)s.macs);
        wl_graph_free(g);
    }
}

/*
 * The VGG and ResNet depths DCO-Comp is evaluated on, exact: parameters as
 * torchvision's num_params (vgg11 132,863,336; vgg13 133,047,848; vgg19
 * 143,667,240; resnet34 21,797,672) and MACs counted by hand from the layer
 * shapes, which round to torchvision's GFLOPS (_ops 7.609, 11.308, 19.632,
 * 3.664).  A 3x3 conv is H*W*Cout*Cin*9 MACs (bias and ReLU do none):
 *
 *   VGG conv     at 224: 3->64 86,704,128        64->64 1,849,688,064
 *                at 112: 64->128 924,844,032     128->128 1,849,688,064
 *                at  56: 128->256 924,844,032    256->256 1,849,688,064
 *                at  28: 256->512 924,844,032    512->512 1,849,688,064
 *                at  14: 512->512 462,422,016
 *   classifier   25088*4096 + 4096*4096 + 4096*1000 = 123,633,664
 *   VGG-11 (A)   86,704,128 + 924,844,032 * 4 (64->128, 128->256,
 *                256->512, two 512->512 at 14) + 1,849,688,064 * 2 (256->256,
 *                512->512 at 28) + 123,633,664 = 7,609,090,048
 *   VGG-13 (B)   86,704,128 + 1,849,688,064 * 4 + 924,844,032 * 4
 *                + 123,633,664 = 11,308,466,176
 *   VGG-16 (D)   VGG-13 + 256->256, 512->512 at 28 and at 14
 *                (4,161,798,144) = 15,470,264,320
 *   VGG-19 (E)   VGG-16 + the same three again = 19,632,062,464
 *
 *   ResNet-34    conv1 7x7/2 3->64 to 112: 118,013,952
 *                layer1 6 x 64->64 at 56 (115,605,504): 693,633,024
 *                layer2..4 each: the strided first conv 57,802,752, the
 *                other 3x3 convs 115,605,504 each (7, 11, 5 of them), the
 *                1x1 downsample 6,422,528: 873,463,808 + 1,335,885,824
 *                + 642,252,800
 *                fc 512*1000 = 512,000          total 3,663,761,408
 *
 * Parameters count conv and Linear weights and biases and BatchNorm's
 * weight and bias (its running statistics are buffers).
 */
static void test_vgg_resnet_depths(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t params, macs;
    } cases[] = {
        {"vgg11", 132863336, 7609090048},   {"vgg13", 133047848, 11308466176},
        {"vgg16", 138357544, 15470264320},  {"vgg19", 143667240, 19632062464},
        {"resnet34", 21797672, 3663761408},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_graph *g = truth_build_zoo(cases[i].name);
        wl_stats s = stats_of(g);
        if (s.params != cases[i].params || s.macs != cases[i].macs)
            fail_msg("%s: %lld params, %lld MACs; expected %lld, %lld", cases[i].name,
                     (long long)s.params, (long long)s.macs, (long long)cases[i].params,
                     (long long)cases[i].macs);
        wl_graph_free(g);
    }
}

/*
 * Models torchvision does not publish.  MobileNetV1: Howard et al. 2017
 * give 4.2M parameters and 569M MACs; 4,231,976 and 568.7M are the exact
 * count of that table (convs without bias, BN gamma/beta, FC 1024x1000 +
 * bias).  CIFAR-10: the parameter counts of kuangliu/pytorch-cifar's
 * definitions as torch reports them.
 */
static void test_unpublished_params(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t params;
        double mmacs; /* 0: not checked */
    } cases[] = {
        {"mobilenet_v1", 4231976, 568.7},   {"resnet18_cifar", 11173962, 0},
        {"vgg16_cifar", 14728266, 0},       {"mobilenet_v1_cifar", 3217226, 0},
        {"mobilenet_v2_cifar", 2296922, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wl_graph *g = truth_build_zoo(cases[i].name);
        wl_stats s = stats_of(g);
        if (s.params != cases[i].params)
            fail_msg("%s: %lld params, expected %lld", cases[i].name, (long long)s.params,
                     (long long)cases[i].params);
        if (cases[i].mmacs > 0)
            assert_int_equal(llround((double)s.macs / 1e5), llround(cases[i].mmacs * 10));
        int64_t dims[4];
        memcpy(dims, g->tensors[g->inputs[0]].dims, sizeof dims);
        int64_t size = strstr(cases[i].name, "cifar") ? 32 : 224;
        assert_true(dims[0] == 1 && dims[1] == 3 && dims[2] == size && dims[3] == size);
        assert_int_equal(g->tensors[g->outputs[0]].dims[1], size == 32 ? 10 : 1000);
        wl_graph_free(g);
    }
}

/* The pytorch-cifar heads flatten with view(N, -1), a Reshape whose
 * constant target spells batch 1: at batch 4 the classifier must still see
 * 4 rows, so MACs scale by 4 and the logits are [4, 10]. */
static void test_cifar_heads_follow_batch(void **state)
{
    (void)state;
    static const char *const names[] = {"resnet18_cifar", "vgg16_cifar", "mobilenet_v1",
                                        "mobilenet_v1_cifar", "mobilenet_v2_cifar"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        wl_graph *g = truth_build_zoo(names[i]);
        wl_stats one = stats_of(g);
        as_status st;
        if (wl_set_batch(g, 4, &st) != AS_OK)
            fail_msg("%s: %s", names[i], st.message);
        wl_stats four = stats_of(g);
        assert_int_equal(four.macs, 4 * one.macs);
        assert_int_equal(four.params, one.params);
        assert_int_equal(g->tensors[g->outputs[0]].dims[0], 4);
        wl_graph_free(g);
    }
}

static void test_unknown_model(void **state)
{
    (void)state;
    as_status st;
    wl_graph *g = (wl_graph *)&st; /* must be overwritten */
    assert_int_equal(wl_zoo_build("resnet51", &g, &st), AS_EINVAL);
    assert_null(g);
    assert_non_null(strstr(st.message, "resnet51"));
    assert_int_equal(wl_zoo_build("resnet51", &g, NULL), AS_EINVAL);
    assert_null(wl_zoo_find("resnet51"));
    assert_null(wl_zoo_find(NULL));
}

/* ---------------------------------------------- against torch's exports */

/* The next op of g at or after order position *k that does work, or NULL:
 * Constant nodes and folded shape arithmetic are skipped, since the
 * exporter writes Clip bounds as Constant nodes and the builder as
 * constant tensors. */
static const wl_op *next_working_op(const wl_graph *g, int32_t *k)
{
    for (; *k < g->n_order; ++*k) {
        const wl_op *op = &g->ops[g->order[*k]];
        if (!op->folded && wl_op_kind_category(op->kind) != WL_CAT_SHAPE) {
            ++*k;
            return op;
        }
    }
    return NULL;
}

/* g and the export agree op by op: same type, same output shape, same
 * order. */
static void check_same_ops(const wl_graph *exported, const wl_graph *g)
{
    int32_t i = 0, j = 0;
    for (int n = 0;; n++) {
        const wl_op *a = next_working_op(exported, &i), *b = next_working_op(g, &j);
        if (!a || !b) {
            if (a || b)
                fail_msg("%s: op counts differ after %d ops", g->name, n);
            return;
        }
        char sa[96], sb[96];
        wl_shape_str(&exported->tensors[a->outputs[0]], sa, sizeof sa);
        wl_shape_str(&g->tensors[b->outputs[0]], sb, sizeof sb);
        if (a->kind != b->kind || strcmp(sa, sb) != 0)
            fail_msg("%s: op %d: export '%s' %s %s, zoo '%s' %s %s", g->name, n, a->name,
                     a->op_type, sa, b->name, b->op_type, sb);
    }
}

/* Every float initializer of the export is a weight of g with the same
 * name (torch's module path) and dims. */
static void check_same_weights(const wl_graph *exported, const wl_graph *g)
{
    for (int32_t t = 0; t < exported->n_tensors; t++) {
        const wl_tensor *w = &exported->tensors[t];
        if (w->kind != WL_TENSOR_WEIGHT || !wl_dtype_is_float(w->dtype))
            continue;
        int32_t u = wl_find_tensor(g, w->name);
        if (u < 0)
            fail_msg("%s: no weight '%s'", g->name, w->name);
        char sa[96], sb[96];
        wl_shape_str(w, sa, sizeof sa);
        wl_shape_str(&g->tensors[u], sb, sizeof sb);
        assert_string_equal(sa, sb);
        assert_int_equal(g->tensors[u].kind, WL_TENSOR_WEIGHT);
    }
}

/* The zoo model `state` against tests/data/models/<name><suffix>.onnx:
 * the default exports have BatchNorm folded into the convs, so the zoo
 * graph is folded the same way first; the .nofuse export keeps every node
 * and every weight name of torch. */
static void test_matches_export(void **state)
{
    const char *const *c = *state; /* {zoo name, file suffix} */
    char path[512];
    snprintf(path, sizeof path, "%s/models/%s%s.onnx", AS_TEST_DATA_DIR, c[0], c[1]);
    assert_int_equal(access(path, R_OK), 0); /* the export ships in tests/data/models */
    wl_graph *exported = truth_load_onnx(path);
    wl_graph *g = truth_build_zoo(c[0]);
    bool unfused = strstr(c[1], "nofuse") != NULL;
    as_status st;
    if (unfused) {
        check_same_weights(exported, g);
    } else {
        int folded = 0;
        assert_int_equal(wl_fold_batchnorm(g, &folded, &st), AS_OK);
        assert_int_equal(wl_graph_compact(g, &st), AS_OK);
    }
    check_same_ops(exported, g);
    wl_stats se = stats_of(exported), sg = stats_of(g);
    assert_int_equal(se.params, sg.params);
    assert_int_equal(se.macs, sg.macs);
    wl_graph_free(exported);
    wl_graph_free(g);
}

static const char *const alexnet_export[] = {"alexnet", ""};
static const char *const resnet18_export[] = {"resnet18", ""};
static const char *const resnet50_export[] = {"resnet50", ""};
static const char *const resnet50_nofuse_export[] = {"resnet50", ".nofuse"};
static const char *const mobilenet_v2_export[] = {"mobilenet_v2", ""};

/* ------------------------------------------------------------- builder */

typedef struct builder_fixture {
    wl_graph *g;
    as_status st;
    zb b;
} builder_fixture;

static int builder_setup(void **state)
{
    builder_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->g = wl_graph_new("test", "zoo:test");
    if (!f->g) {
        free(f);
        return -1;
    }
    as_status_clear(&f->st);
    zb_init(&f->b, f->g, &f->st);
    *state = f;
    return 0;
}

static int builder_teardown(void **state)
{
    builder_fixture *f = *state;
    wl_graph_free(f->g);
    free(f);
    return 0;
}

static const wl_op *producer_of(const zb *b, int32_t t)
{
    assert_true(t >= 0 && b->g->tensors[t].producer >= 0);
    return &b->g->ops[b->g->tensors[t].producer];
}

static void assert_dims(const zb *b, int32_t t, int rank, const int64_t *dims)
{
    assert_true(t >= 0);
    const wl_tensor *x = zb_t(b, t);
    assert_true(x->shape_known);
    assert_int_equal(x->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(x->dims[i], dims[i]);
}

/* Scopes, torch-style names and the exported shapes of conv, BN, linear. */
static void test_builder_modules(void **state)
{
    builder_fixture *f = *state;
    zb *b = &f->b;
    const int64_t in_dims[4] = {1, 8, 16, 16};
    int32_t x = zb_input(b, "input", 4, in_dims);
    zb_push(b, "layer%d", 1);
    zb_push(b, "0");
    assert_string_equal(b->scope, "layer1.0");
    int32_t y = zb_conv2d(b, "conv1", x, 16, 3, 2, 1, 2, true);
    assert_string_equal(producer_of(b, y)->name, "layer1.0.conv1");
    assert_dims(b, y, 4, (const int64_t[]){1, 16, 8, 8});
    assert_dims(b, wl_find_tensor(f->g, "layer1.0.conv1.weight"), 4,
                (const int64_t[]){16, 4, 3, 3});
    assert_dims(b, wl_find_tensor(f->g, "layer1.0.conv1.bias"), 1, (const int64_t[]){16});
    assert_int_equal(producer_of(b, y)->attrs.group, 2);

    y = zb_batchnorm(b, "bn1", y, ZB_NORM_EPS);
    assert_int_equal(producer_of(b, y)->n_inputs, 5);
    assert_true(wl_tensor_is_param(f->g, wl_find_tensor(f->g, "layer1.0.bn1.weight")));
    assert_false(wl_tensor_is_param(f->g, wl_find_tensor(f->g, "layer1.0.bn1.running_var")));
    zb_pop(b);
    assert_string_equal(b->scope, "layer1");
    zb_pop(b);
    assert_string_equal(b->scope, "");

    /* Linear: Gemm with W[out, in] on rank 2, MatMul with W[in, out] + Add
     * otherwise. */
    int32_t flat = zb_flatten(b, zb_global_avgpool(b, y), 1);
    int32_t fc = zb_linear(b, "fc", flat, 10, true);
    assert_int_equal(producer_of(b, fc)->kind, WL_OP_GEMM);
    assert_int_equal(producer_of(b, fc)->attrs.trans_b, 1);
    assert_dims(b, wl_find_tensor(f->g, "fc.weight"), 2, (const int64_t[]){10, 16});
    int32_t seq = zb_reshape(b, y, 3, (const int64_t[]){1, 16, 64});
    int32_t proj = zb_linear(b, "proj", seq, 32, true);
    assert_int_equal(producer_of(b, proj)->kind, WL_OP_ADD);
    assert_string_equal(producer_of(b, proj)->name, "proj.Add");
    assert_dims(b, proj, 3, (const int64_t[]){1, 16, 32});
    assert_dims(b, wl_find_tensor(f->g, "proj.weight"), 2, (const int64_t[]){64, 32});
    assert_int_equal(zb_dropout(b, proj), proj);
    zb_output(b, fc);
    assert_int_equal(f->st.code, AS_OK);
    assert_int_equal(wl_graph_infer(f->g, &f->st), AS_OK);
}

/* Activations as the exporter writes them: ReLU6 = Clip(x, 0, 6) with
 * Constant inputs, SiLU = x * Sigmoid(x), GELU = Div, Erf, Add, Mul, Mul
 * with a Constant before each use of one. */
static void test_builder_activations(void **state)
{
    builder_fixture *f = *state;
    zb *b = &f->b;
    const int64_t dims[2] = {1, 4};
    int32_t x = zb_input(b, "x", 2, dims);
    int32_t r6 = zb_relu6(b, x);
    const wl_op *clip = producer_of(b, r6);
    assert_int_equal(clip->kind, WL_OP_CLIP);
    assert_int_equal(clip->n_inputs, 3);
    assert_true(zb_t(b, clip->inputs[2])->fvalues && zb_t(b, clip->inputs[2])->fvalues[0] == 6.0);

    int32_t n_before = f->g->n_ops;
    int32_t s = zb_silu(b, x);
    assert_int_equal(f->g->n_ops, n_before + 2);
    assert_int_equal(f->g->ops[n_before].kind, WL_OP_SIGMOID);
    assert_int_equal(producer_of(b, s)->kind, WL_OP_MUL);

    n_before = f->g->n_ops;
    int32_t gelu = zb_gelu(b, x);
    static const wl_op_kind gelu_ops[] = {WL_OP_CONSTANT, WL_OP_DIV, WL_OP_ERF,      WL_OP_CONSTANT,
                                          WL_OP_ADD,      WL_OP_MUL, WL_OP_CONSTANT, WL_OP_MUL};
    assert_int_equal(f->g->n_ops, n_before + 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(f->g->ops[n_before + i].kind, gelu_ops[i]);
    assert_dims(b, gelu, 2, dims);
    assert_int_equal(f->st.code, AS_OK);
}

/* The first failure is kept and every later constructor returns -1. */
static void test_builder_errors_are_sticky(void **state)
{
    builder_fixture *f = *state;
    zb *b = &f->b;
    const int64_t dims[4] = {1, 6, 8, 8};
    int32_t x = zb_input(b, "input", 4, dims);
    zb_push(b, "stem");
    assert_int_equal(zb_conv2d(b, "conv", x, 8, 3, 1, 1, 4, false), -1);
    assert_true(zb_failed(b));
    char first[AS_MSG_BYTES];
    memcpy(first, f->st.message, sizeof first);
    assert_non_null(strstr(first, "stem.conv"));
    assert_non_null(strstr(first, "groups"));
    assert_int_equal(zb_relu(b, x), -1);
    assert_int_equal(zb_linear(b, "fc", x, 10, true), -1);
    assert_int_equal(zb_output(b, x), -1);
    assert_string_equal(f->st.message, first);
    assert_int_equal(f->g->n_ops, 0);
}

/* A module name with a dot would break zb_pop's bookkeeping; refused. */
static void test_builder_rejects_dotted_scope(void **state)
{
    builder_fixture *f = *state;
    zb_push(&f->b, "layer1.0");
    assert_true(zb_failed(&f->b));
    assert_non_null(strstr(f->st.message, "layer1.0"));
}

#define BUILDER_TEST(fn) cmocka_unit_test_setup_teardown(fn, builder_setup, builder_teardown)
#define EXPORT_CASE(c) cmocka_unit_test_prestate(test_matches_export, (void *)c)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_model_builds),
        cmocka_unit_test(test_published_figures),
        cmocka_unit_test(test_macs_are_problem_bounds),
        cmocka_unit_test(test_vgg_resnet_depths),
        cmocka_unit_test(test_unpublished_params),
        cmocka_unit_test(test_cifar_heads_follow_batch),
        cmocka_unit_test(test_unknown_model),
        EXPORT_CASE(alexnet_export),
        EXPORT_CASE(resnet18_export),
        EXPORT_CASE(resnet50_export),
        EXPORT_CASE(resnet50_nofuse_export),
        EXPORT_CASE(mobilenet_v2_export),
        BUILDER_TEST(test_builder_modules),
        BUILDER_TEST(test_builder_activations),
        BUILDER_TEST(test_builder_errors_are_sticky),
        BUILDER_TEST(test_builder_rejects_dotted_scope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
