/*
 * test_tune.c -- the tuning driver and knob space (src/tune/tune.c,
 * space.c): a model's VTA conv layers, the space of one layer, and the
 * loop that runs each engine: budgets kept, nothing measured twice, best
 * configurations valid and better than TVM's fallback, the same seed the
 * same result at 1 and 2 threads, Ctrl-C keeping what was measured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

static wl_graph *zoo(const char *name)
{
    wl_graph *g;
    as_status st;
    if (wl_zoo_build(name, &g, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
    return g;
}

static void vta_hw(tn_hw *hw)
{
    arch_spec a;
    as_status st;
    assert_int_equal(arch_load("vta", &a, &st), AS_OK);
    if (tn_hw_from_arch(&a, hw, &st) != AS_OK)
        fail_msg("%s", st.message);
}

/* ResNet-18 has 20 convs: the stem (3 input channels) stays on the host,
 * the other 19 are 10 distinct problems (layer1's four 3x3 convs; in each
 * later stage the strided 3x3, the 1x1 downsample and three equal 3x3). */
static void test_model_layers(void **state)
{
    (void)state;
    wl_graph *g = zoo("resnet18");
    tn_conv *layers;
    int n, skipped;
    as_status st;
    assert_int_equal(tn_model_layers(g, &layers, &n, &skipped, &st), AS_OK);
    assert_int_equal(n, 10);
    assert_int_equal(skipped, 1);
    int total = 0;
    for (int i = 0; i < n; i++)
        total += layers[i].count;
    assert_int_equal(total, 19);
    const tn_conv *l = &layers[0]; /* layer1.0.conv1 */
    assert_int_equal(l->count, 4);
    assert_true(l->c == 64 && l->k == 64 && l->p == 56 && l->q == 56 && l->h == 56 && l->w == 56);
    assert_true(l->r == 3 && l->s == 3 && l->stride_h == 1 && l->pad_h == 1);
    assert_int_equal(l->macs, 64LL * 64 * 56 * 56 * 9);
    free(layers);
    wl_graph_free(g);

    g = zoo("alexnet"); /* five convs, the first on the host */
    assert_int_equal(tn_model_layers(g, &layers, &n, &skipped, &st), AS_OK);
    assert_int_equal(n, 4);
    assert_int_equal(skipped, 1);
    free(layers);
    wl_graph_free(g);
}

/* The first distinct VTA conv of a zoo model. */
static tn_conv first_layer(const char *model, int index)
{
    wl_graph *g = zoo(model);
    tn_conv *layers;
    int n, skipped;
    as_status st;
    assert_int_equal(tn_model_layers(g, &layers, &n, &skipped, &st), AS_OK);
    assert_true(index < n);
    tn_conv l = layers[index];
    free(layers);
    wl_graph_free(g);
    return l;
}

static void test_space(void **state)
{
    (void)state;
    tn_hw hw;
    vta_hw(&hw);
    tn_conv l = first_layer("resnet18", 0);
    tn_space sp;
    as_status st;
    assert_int_equal(tn_space_init(&sp, &l, &hw, tn_budget_find("pynq"), true, &st), AS_OK);
    static const int64_t tile_h[] = {1, 2, 4, 7, 8, 14, 28, 56};
    assert_int_equal(sp.n_choices[TN_KNOB_TILE_H], 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(sp.value[TN_KNOB_TILE_H][i], tile_h[i]);
    static const int64_t tile_ci[] = {8, 16, 32, 64};
    assert_int_equal(sp.n_choices[TN_KNOB_TILE_CI], 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(sp.value[TN_KNOB_TILE_CI][i], tile_ci[i]);
    assert_int_equal(sp.n_choices[TN_KNOB_H_THREADING], 2);
    assert_true(sp.n_choices[TN_KNOB_BLOCK_IN] > 1 && sp.n_choices[TN_KNOB_WGT_BUFFER] > 1);
    assert_true(tn_space_size(&sp) > 1000000);
    for (int k = 0; k < TN_KNOBS; k++)
        assert_string_not_equal(tn_knob_name((tn_knob)k), "?");
    assert_int_equal(tn_knob_agent(TN_KNOB_TILE_H), TN_AGENT_MAPPING);
    assert_int_equal(tn_knob_agent(TN_KNOB_OC_THREADING), TN_AGENT_SCHEDULING);
    assert_int_equal(tn_knob_agent(TN_KNOB_BLOCK_IN), TN_AGENT_HARDWARE);

    /* TVM's fallback: inner extents of one on the base hardware; it runs. */
    tn_point def;
    tn_space_default(&sp, &def);
    tn_knobs k;
    tn_hw dhw;
    tn_space_decode(&sp, &def, &k, &dhw);
    assert_true(k.tile_h == 1 && k.tile_w == 1 && k.tile_b == 1);
    assert_true(k.tile_ci == hw.block_in && k.tile_co == hw.block_out);
    assert_true(k.h_threading == 1 && k.oc_threading == 1);
    assert_memory_equal(&dhw, &hw, sizeof hw);
    tn_result r;
    tn_space_measure(&sp, &def, &r);
    assert_true(r.valid);
    assert_true(r.gflops > 0 && r.cycles > 0 && r.energy_pJ > 0);

    /* Hardware over the budget is invalid, with the budget named. */
    tn_point big = def;
    big.choice[TN_KNOB_BLOCK_IN] = (uint8_t)(sp.n_choices[TN_KNOB_BLOCK_IN] - 1);
    big.choice[TN_KNOB_BLOCK_OUT] = (uint8_t)(sp.n_choices[TN_KNOB_BLOCK_OUT] - 1);
    big.choice[TN_KNOB_BATCH] = (uint8_t)(sp.n_choices[TN_KNOB_BATCH] - 1);
    tn_space_measure(&sp, &big, &r);
    assert_false(r.valid);
    assert_non_null(strstr(r.reason, "pynq"));

    double f[TN_FEATURES];
    as_rng rng = as_rng_stream(7, 0, AS_RNG_FROM_FIRST_OUTPUT);
    for (int i = 0; i < 200; i++) {
        tn_point pt;
        tn_space_random(&sp, &rng, &pt);
        tn_space_features(&sp, &pt, f);
        for (int j = 0; j < TN_FEATURES; j++)
            assert_true(isfinite(f[j]));
    }
    char text[512];
    tn_point_format(&sp, &def, text, sizeof text);
    assert_non_null(strstr(text, "tile_h=1"));
    assert_non_null(strstr(text, "block_in=16"));

    /* Fixed hardware: one choice per hardware knob, the base's. */
    assert_int_equal(tn_space_init(&sp, &l, &hw, tn_budget_find("pynq"), false, &st), AS_OK);
    assert_int_equal(sp.n_choices[TN_KNOB_BLOCK_IN], 1);
    assert_int_equal(sp.value[TN_KNOB_WGT_BUFFER][0], hw.wgt_buffer_bytes);
}

/* Every engine keeps its budget, measures nothing twice, returns a valid
 * best at least as good as the fallback, and repeats itself for a seed. */
static void test_engines_on_a_layer(void **state)
{
    (void)state;
    tn_hw hw;
    vta_hw(&hw);
    tn_conv l = first_layer("resnet18", 1);
    tn_space sp;
    as_status st;
    assert_int_equal(tn_space_init(&sp, &l, &hw, tn_budget_find("pynq"), true, &st), AS_OK);
    tn_point def;
    tn_space_default(&sp, &def);
    tn_result fallback;
    tn_space_measure(&sp, &def, &fallback);
    for (int e = 0; e < TN_ENGINES; e++) {
        tn_options o;
        tn_options_default(&o);
        o.engine = (tn_engine)e;
        o.trials = 150;
        o.seed = 11;
        tn_layer_result a, b;
        if (tn_tune_layer(&sp, &o, &a, &st) != AS_OK)
            fail_msg("%s: %s", tn_engine_name(o.engine), st.message);
        assert_int_equal(a.n_trials, 150);
        for (int64_t i = 0; i < a.n_trials; i++)
            for (int64_t j = 0; j < i; j++)
                assert_false(tn_point_equal(&a.trials[i].point, &a.trials[j].point));
        assert_true(a.best >= 0);
        assert_true(a.trials[a.best].result.valid);
        assert_true(a.trials[a.best].result.gflops >= fallback.gflops);
        assert_true(a.trials_to_95 >= 1 && a.trials_to_95 <= a.n_trials);
        tn_result again;
        tn_space_measure(&sp, &a.trials[a.best].point, &again);
        assert_true(again.valid && again.cycles == a.trials[a.best].result.cycles);
        assert_int_equal(tn_tune_layer(&sp, &o, &b, &st), AS_OK);
        assert_int_equal(b.n_trials, a.n_trials);
        for (int64_t i = 0; i < a.n_trials; i++)
            assert_true(tn_point_equal(&a.trials[i].point, &b.trials[i].point));
        tn_layer_result_free(&a);
        tn_layer_result_free(&b);
    }
}

static void compare_models(const tn_model_result *a, const tn_model_result *b)
{
    assert_int_equal(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        assert_int_equal(a->layers[i].n_trials, b->layers[i].n_trials);
        for (int64_t t = 0; t < a->layers[i].n_trials; t++) {
            assert_true(
                tn_point_equal(&a->layers[i].trials[t].point, &b->layers[i].trials[t].point));
            assert_true(a->layers[i].trials[t].result.cycles ==
                        b->layers[i].trials[t].result.cycles);
        }
    }
    assert_true(a->seconds == b->seconds && a->gflops == b->gflops);
}

/* Same seed, same result at 1 and 2 threads, for every engine. */
static void test_model_threads(void **state)
{
    (void)state;
    tn_hw hw;
    vta_hw(&hw);
    wl_graph *g = zoo("resnet18");
    for (int e = 0; e < TN_ENGINES; e++) {
        tn_options o;
        tn_options_default(&o);
        o.engine = (tn_engine)e;
        o.trials = 40;
        tn_model_result one, two;
        as_status st;
        o.threads = 1;
        if (tn_tune_model(g, &hw, &o, &one, &st) != AS_OK)
            fail_msg("%s: %s", tn_engine_name(o.engine), st.message);
        o.threads = 2;
        assert_int_equal(tn_tune_model(g, &hw, &o, &two, &st), AS_OK);
        compare_models(&one, &two);
        assert_int_equal(one.n_layers, 10);
        assert_int_equal(one.skipped_layers, 1);
        assert_true(one.gflops > 0 && one.energy_pJ > 0);
        int64_t macs = 0;
        for (int i = 0; i < one.n_layers; i++)
            macs += one.layers[i].layer.macs * one.layers[i].layer.count;
        assert_int_equal(one.macs, macs);
        tn_model_result_free(&one);
        tn_model_result_free(&two);
    }
    wl_graph_free(g);
}

/* A stop flag set before the run: nothing is tuned past the first check,
 * the result says it was interrupted, and what exists is kept. */
static void test_stop(void **state)
{
    (void)state;
    tn_hw hw;
    vta_hw(&hw);
    tn_conv l = first_layer("resnet18", 0);
    tn_space sp;
    as_status st;
    assert_int_equal(tn_space_init(&sp, &l, &hw, tn_budget_find("pynq"), true, &st), AS_OK);
    volatile int stop = 1;
    tn_options o;
    tn_options_default(&o);
    o.engine = TN_ENGINE_AUTOTVM;
    o.stop_flag = &stop;
    tn_layer_result r;
    assert_int_equal(tn_tune_layer(&sp, &o, &r, &st), AS_OK);
    assert_true(r.interrupted);
    assert_int_equal(r.n_trials, 0);
    tn_layer_result_free(&r);
}

/* On fixed hardware the one design for the model is the base, and the
 * model's figures on it are its per-layer figures. */
static void test_shared_hardware(void **state)
{
    (void)state;
    tn_hw hw;
    vta_hw(&hw);
    wl_graph *g = zoo("alexnet");
    tn_options o;
    tn_options_default(&o);
    o.engine = TN_ENGINE_AUTOTVM;
    o.trials = 30;
    o.vary_hardware = false;
    tn_model_result r;
    as_status st;
    assert_int_equal(tn_tune_model(g, &hw, &o, &r, &st), AS_OK);
    assert_true(r.has_shared);
    assert_true(r.shared_seconds == r.seconds && r.shared_gflops == r.gflops);
    tn_model_result_free(&r);
    o.vary_hardware = true; /* each layer its own hardware: the shared one is no faster */
    assert_int_equal(tn_tune_model(g, &hw, &o, &r, &st), AS_OK);
    if (r.has_shared)
        assert_true(r.shared_seconds >= r.seconds);
    tn_model_result_free(&r);
    wl_graph_free(g);
}

static void test_budgets(void **state)
{
    (void)state;
    int n;
    const tn_budget *b = tn_budgets(&n);
    assert_true(n >= 3);
    for (int i = 0; i < n; i++)
        assert_ptr_equal(tn_budget_find(b[i].name), &b[i]);
    assert_null(tn_budget_find("virtex2"));
    tn_options o;
    tn_options_default(&o);
    assert_non_null(o.budget);
    assert_string_equal(o.budget->name, "pynq");
    assert_string_equal(tn_engine_name(TN_ENGINE_DCOCOMP), "dcocomp");
    assert_string_equal(tn_engine_name(TN_ENGINE_AUTOTVM), "autotvm");
    assert_string_equal(tn_engine_name(TN_ENGINE_CHAMELEON), "chameleon");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_layers),
        cmocka_unit_test(test_space),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_engines_on_a_layer),
        cmocka_unit_test(test_model_threads),
        cmocka_unit_test(test_shared_hardware),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
