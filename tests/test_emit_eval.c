/*
 * test_emit_eval.c -- `map --emit-timeloop` then `eval` agree exactly
 * (issue 10, item 8): for three zoo models on two presets every compute
 * layer is mapped, written as a timeloop-model input with its ERT and
 * ART (map_timeloop_layer_case, map_timeloop_save, _save_tables), read
 * back (map_timeloop_load) and costed (map_timeloop_evaluate); cycles,
 * energy, its components and DRAM bytes must be the layer's, bit for bit.
 * Also: the precision conversion of fp32 tensors on 16-bit words is
 * reported, and a precision that fits the words is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping/mapping.h"

#include "text_file.h"
#include "truth.h"

/* A budget that keeps the test short; any mapping will do. */
#define TEST_BUDGET 2000

static void map_network(const wl_graph *g, const arch_spec *a, map_network_result *r)
{
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = 2;
    o.budget_per_problem = TEST_BUDGET;
    as_status st = {0};
    if (map_network_evaluate(g, a, &o, r, &st) != AS_OK)
        fail_msg("%s", st.message);
}

/* Exact equality of doubles, with both printed when they differ. */
static void assert_same(const char *what, const char *layer, double mapped, double evaluated)
{
    if (mapped != evaluated)
        fail_msg("%s: %s: map %.17g, eval %.17g", layer, what, mapped, evaluated);
}

/* Emit layer i of r, read it back and compare its cost with the layer's. */
static void check_layer(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                        int32_t i, map_timeloop_case *c, map_timeloop_case *back)
{
    char input[512], ert[512], art[512];
    int pid = (int)getpid();
    snprintf(input, sizeof input, "%s/emit_eval_%d.yaml", AS_TEST_TMP_DIR, pid);
    snprintf(ert, sizeof ert, "%s/emit_eval_%d.ERT.yaml", AS_TEST_TMP_DIR, pid);
    snprintf(art, sizeof art, "%s/emit_eval_%d.ART.yaml", AS_TEST_TMP_DIR, pid);
    as_status st = {0};
    if (map_timeloop_layer_case(g, a, r, i, c, &st) != AS_OK ||
        map_timeloop_save(c, input, &st) != AS_OK ||
        map_timeloop_save_tables(c, ert, art, &st) != AS_OK ||
        map_timeloop_load(input, ert, art, back, &st) != AS_OK)
        fail_msg("%s layer %d: %s", a->name, (int)i, st.message);
    remove(input);
    remove(ert);
    remove(art);
    static map_eval e;
    static map_layer_result cost;
    assert_true(map_timeloop_evaluate(back, &e, &cost));
    const map_layer_result *l = &r->layers[i];
    const char *name = g->ops[l->op].name;
    if (l->cycles != cost.cycles || l->dram_bytes != cost.dram_bytes)
        fail_msg("%s: cycles %lld vs %lld, DRAM bytes %lld vs %lld", name, (long long)l->cycles,
                 (long long)cost.cycles, (long long)l->dram_bytes, (long long)cost.dram_bytes);
    assert_same("energy", name, l->energy_pJ, cost.energy_pJ);
    for (int k = 0; k < MAP_N_COMPONENTS; k++)
        assert_same(map_component_name((map_component)k), name, l->energy_by_component_pJ[k],
                    cost.energy_by_component_pJ[k]);
}

/* Every mapped compute layer of model on preset round-trips exactly. */
static void check_model(const char *model, const char *preset)
{
    wl_graph *g = truth_build_zoo(model);
    arch_spec *a = malloc(sizeof *a);
    map_timeloop_case *c = malloc(2 * sizeof *c);
    assert_non_null(a);
    assert_non_null(c);
    as_status st = {0};
    if (arch_load(preset, a, &st) != AS_OK)
        fail_msg("%s", st.message);
    map_network_result r;
    map_network(g, a, &r);
    int checked = 0;
    for (int32_t i = 0; i < r.n_layers; i++) {
        if (r.layers[i].problem_class < 0)
            continue;
        assert_true(r.layers[i].mapped);
        check_layer(g, a, &r, i, &c[0], &c[1]);
        checked++;
    }
    assert_true(checked > 0);
    map_network_free(&r);
    free(c);
    free(a);
    wl_graph_free(g);
}

static void alexnet_eyeriss(void **state)
{
    (void)state;
    check_model("alexnet", "eyeriss");
}

static void resnet18_eyeriss(void **state)
{
    (void)state;
    check_model("resnet18", "eyeriss");
}

static void mobilenet_v2_eyeriss(void **state)
{
    (void)state;
    check_model("mobilenet_v2", "eyeriss");
}

static void alexnet_vta(void **state)
{
    (void)state;
    check_model("alexnet", "vta");
}

static void resnet18_vta(void **state)
{
    (void)state;
    check_model("resnet18", "vta");
}

static void mobilenet_v2_vta(void **state)
{
    (void)state;
    check_model("mobilenet_v2", "vta");
}

/* AlexNet's fp32 tensors on Eyeriss's 16-bit words are narrowed on chip,
 * and the result says so; at fp16 nothing is narrowed. */
static void narrowing_is_reported(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("alexnet");
    arch_spec *a = malloc(sizeof *a);
    assert_non_null(a);
    as_status st = {0};
    assert_int_equal(arch_load("eyeriss", a, &st), AS_OK);
    map_network_result r;
    map_network(g, a, &r);
    assert_int_equal(r.n_narrowed_layers, 8); /* five convolutions, three Gemms */
    assert_int_equal(r.narrowed_tensor_bits, 32);
    assert_int_equal(r.narrowed_word_bits, 16);
    map_network_free(&r);
    wl_set_precision(g, WL_PREC_FP16);
    map_network(g, a, &r);
    assert_int_equal(r.n_narrowed_layers, 0);
    assert_int_equal(r.narrowed_tensor_bits, 0);
    map_network_free(&r);
    free(a);
    wl_graph_free(g);
}

/* A timeloop-model input without the layer context is no layer. */
static void plain_input_is_no_layer(void **state)
{
    (void)state;
    static map_timeloop_case c;
    static map_eval e;
    static map_layer_result cost;
    as_status st = {0};
    const char *dir = AS_TEST_DATA_DIR "/timeloop/eyeriss_like__resnet50_conv2x_3x3_c64m64_56";
    char input[512];
    snprintf(input, sizeof input, "%s/model-input.yaml", dir);
    if (map_timeloop_load(input, NULL, NULL, &c, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_false(c.is_layer);
    assert_false(map_timeloop_evaluate(&c, &e, &cost));
    assert_int_equal(e.validity, MAP_VALID);
}

/* The layer context is read strictly: a bad value or key fails with the
 * file, line and key. */
static void bad_layer_context(void **state)
{
    (void)state;
    static const struct {
        const char *old, *new, *expect;
    } cases[] = {
        {"Weights: 32", "Weights: 0", "Weights: expected an integer from 1 to"},
        {"outside_dram_bytes:", "outside_bytes:", "unknown key 'outside_bytes' in accelsearch"},
        {"dram_pJ_per_bit: 8", "dram_pJ_per_bit: -8", "dram_pJ_per_bit: expected a number >= 0"},
        {"tensor_bits: {", "tensor_bits: {Psums: 8, ", "unknown key 'Psums' in tensor_bits"},
    };
    wl_graph *g = truth_build_zoo("alexnet");
    arch_spec *a = malloc(sizeof *a);
    map_timeloop_case *c = malloc(sizeof *c);
    assert_non_null(a);
    assert_non_null(c);
    as_status st = {0};
    assert_int_equal(arch_load("eyeriss", a, &st), AS_OK);
    map_network_result r;
    map_network(g, a, &r);
    char path[512];
    snprintf(path, sizeof path, "%s/emit_eval_bad_%d.yaml", AS_TEST_TMP_DIR, (int)getpid());
    int32_t first = 0;
    while (r.layers[first].problem_class < 0)
        first++;
    assert_int_equal(map_timeloop_layer_case(g, a, &r, first, c, &st), AS_OK);
    assert_int_equal(map_timeloop_save(c, path, &st), AS_OK);
    char *text = text_file(path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *at = strstr(text, cases[i].old);
        assert_non_null(at);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fprintf(f, "%.*s%s%s", (int)(at - text), text, cases[i].new, at + strlen(cases[i].old));
        fclose(f);
        as_status_clear(&st);
        assert_int_equal(map_timeloop_load(path, NULL, NULL, c, &st), AS_EINVAL);
        if (strncmp(st.message, path, strlen(path)) != 0 || !strstr(st.message, cases[i].expect))
            fail_msg("message '%s' lacks '%s'", st.message, cases[i].expect);
    }
    as_status_clear(&st);
    assert_int_equal(map_timeloop_layer_case(g, a, &r, -1, c, &st), AS_EINVAL);
    remove(path);
    free(text);
    map_network_free(&r);
    free(c);
    free(a);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alexnet_eyeriss),       cmocka_unit_test(resnet18_eyeriss),
        cmocka_unit_test(mobilenet_v2_eyeriss),  cmocka_unit_test(alexnet_vta),
        cmocka_unit_test(resnet18_vta),          cmocka_unit_test(mobilenet_v2_vta),
        cmocka_unit_test(narrowing_is_reported), cmocka_unit_test(plain_input_is_no_layer),
        cmocka_unit_test(bad_layer_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
