/*
 * test_search_fidelity.c -- the co-design search ranks designs on the
 * mappings the tool can really find: for the chosen design of a seeded
 * search, the search's EDP of each workload is at most 1.05x what
 * `accelsearch fuse` finds for that design and model with its defaults
 * (the heuristic mapper to its own end, the GA at its default budget).
 * (test_cli_search checks that `fuse --map-budget B` costs each layer as
 * the search did.)
 *
 * The search maps at 32,000 mappings per tile problem at full fidelity,
 * where the heuristic mapper is within 4 % of its own end on this model; the default search (4,000,
 * for a minute on two cores) ranks designs within about 12 % of it.
 *
 * And the mapper's searches, continued from a smaller budget as
 * successive halving raises it, are the searches to the larger budget.
 *
 * The model is a small CNN written here with the zoo builder and saved as
 * ONNX, so that fuse's unbounded mapper finishes in seconds; its layers
 * are real convolution shapes (3x3 and 1x1, strided, a classifier).
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

#include <jansson.h>

#include "arch/arch.h"
#include "core/core.h"
#include "mapping/mapping.h"
#include "workload/zoo_builder.h"

#include "cli_run.h"

#define FULL_MAP_BUDGET 32000

/* A small CIFAR-sized CNN: four conv-BN-ReLU blocks, pooling, classifier. */
static void write_small_cnn(const char *path)
{
    as_status st;
    as_status_clear(&st);
    wl_graph *g = wl_graph_new("small_cnn", "test:small_cnn");
    assert_non_null(g);
    zb b;
    zb_init(&b, g, &st);
    const int64_t in_dims[4] = {1, 3, 32, 32};
    int32_t x = zb_input(&b, "input", 4, in_dims);
    const struct {
        int64_t out_ch, kernel, stride, pad;
    } block[] = {{32, 3, 1, 1}, {32, 3, 1, 1}, {64, 3, 2, 1}, {64, 1, 1, 0}};
    for (int i = 0; i < 4; i++) {
        zb_push(&b, "block%d", i);
        x = zb_conv2d(&b, "conv", x, block[i].out_ch, block[i].kernel, block[i].stride,
                      block[i].pad, 1, false);
        x = zb_batchnorm(&b, "bn", x, 1e-5);
        x = zb_relu(&b, x);
        zb_pop(&b);
    }
    x = zb_linear(&b, "fc", zb_flatten(&b, zb_global_avgpool(&b, x), 1), 10, true);
    zb_output(&b, x);
    assert_false(zb_failed(&b));
    assert_int_equal(wl_graph_infer(g, &st), AS_OK);
    if (wl_onnx_save(g, path, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph_free(g);
}

static json_t *run_json(const char *args)
{
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fail_msg("'%s' exited %d: %s", args, r.status, r.err);
    json_error_t error;
    json_t *j = json_loads(r.out, 0, &error);
    if (!j)
        fail_msg("'%s': bad JSON: %s", args, error.text);
    free(r.out);
    return j;
}

static double number(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("no number '%s'", key);
    return json_number_value(v);
}

/* The EDP (J*s) of fuse's plan for the command args. */
static double fuse_edp_of(const char *args)
{
    json_t *fused = run_json(args);
    const json_t *totals = json_object_get(fused, "totals");
    double edp = number(totals, "energy_pJ") * 1e-12 * number(totals, "latency_s");
    json_decref(fused);
    return edp;
}

/* The index of the chosen design in the search's front (its file is
 * design-K.yaml), or a failure. */
static size_t chosen_index(const json_t *result)
{
    const json_t *chosen = json_object_get(result, "chosen"), *point;
    size_t k;
    json_array_foreach(json_object_get(result, "pareto"), k, point)
    {
        if (json_equal(json_object_get(point, "iteration"), json_object_get(chosen, "iteration")) &&
            json_equal(json_object_get(point, "slot"), json_object_get(chosen, "slot")))
            return k;
    }
    fail_msg("the chosen design is not on the front");
    return 0;
}

static void test_search_edp_within_fuse(void **state)
{
    (void)state;
    char model[512], dir[512], args[2048];
    snprintf(model, sizeof model, "%s/small_cnn.onnx", AS_TEST_TMP_DIR);
    snprintf(dir, sizeof dir, "%s/fidelity_designs", AS_TEST_TMP_DIR);
    write_small_cnn(model);
    snprintf(args, sizeof args,
             "search --model '%s' --hw-budget 8 --batch 4 --seed 11 --map-budget %d --threads 2 "
             "--no-db --json --emit-arch '%s'",
             model, FULL_MAP_BUDGET, dir);
    json_t *result = run_json(args);
    size_t k = chosen_index(result);
    const json_t *workload = json_array_get(json_object_get(result, "chosen_workloads"), 0);
    assert_non_null(workload);
    double search_edp = number(workload, "edp");

    /* fuse with its defaults, at the search's precision (the edge space's
     * fp16) and the design's own batch (1 on edge). */
    snprintf(args, sizeof args,
             "fuse --arch '%s/design-%zu.yaml' --model '%s' --precision fp16 --threads 2 --json",
             dir, k, model);
    double fuse_edp = fuse_edp_of(args);
    print_message("chosen design %zu: search EDP %.6e J*s, fuse %.6e J*s (ratio %.4f)\n", k,
                  search_edp, fuse_edp, search_edp / fuse_edp);
    if (!(search_edp <= 1.05 * fuse_edp))
        fail_msg("search EDP %.6e J*s is %.3fx what fuse finds (%.6e J*s)", search_edp,
                 search_edp / fuse_edp, fuse_edp);

    json_decref(result);
}

/* Two outcomes of the same search: the same best mapping and figures,
 * the same evaluations spent. */
static void assert_same_outcome(const map_problem_outcome *a, const map_problem_outcome *b)
{
    assert_int_equal(a->code, AS_OK);
    assert_int_equal(b->code, AS_OK);
    assert_true(a->found && b->found);
    assert_int_equal(a->evaluated, b->evaluated);
    assert_int_equal(a->eval.cycles, b->eval.cycles);
    assert_true(a->eval.energy_pJ == b->eval.energy_pJ);
    assert_memory_equal(&a->mapping, &b->mapping, sizeof a->mapping);
}

/* The mapper as successive halving uses it: a heuristic search to B/4,
 * continued to B, is the search to B (mapping, figures, evaluations), on
 * every compute layer of ResNet-18 on Eyeriss; continued from a budget
 * that is not on B's way (3,000 to 8,000), it is still the search to B. */
static void test_continued_search_is_the_search(void **state)
{
    (void)state;
    as_status st;
    as_status_clear(&st);
    arch_spec *a = malloc(sizeof *a);
    assert_non_null(a);
    assert_int_equal(arch_load("eyeriss", a, &st), AS_OK);
    wl_graph *g = NULL;
    wl_onnx_options onnx = {.batch = 1};
    assert_int_equal(wl_model_load("resnet18", &onnx, &g, &st), AS_OK);
    map_search_options o;
    map_search_options_default(&o);
    map_problem_outcome *fresh = malloc(sizeof *fresh), *part = malloc(sizeof *part),
                        *continued = malloc(sizeof *continued);
    assert_true(fresh && part && continued);
    const int64_t budget = 8000, starts[] = {2000, 3000};
    int layers = 0;
    for (int32_t op = 0; op < g->n_ops && layers < 6; op++) {
        wl_problem p;
        if (!map_op_is_compute(&g->ops[op]) || wl_op_problem(g, op, &p, &st) != AS_OK)
            continue;
        layers++;
        map_problem_search_run(a, &p, &o, 1, budget, NULL, fresh);
        for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
            map_problem_search_run(a, &p, &o, 1, starts[i], NULL, part);
            map_problem_search_continue(a, &p, &o, 2, budget, part, continued);
            assert_same_outcome(fresh, continued);
        }
    }
    assert_int_equal(layers, 6);
    free(fresh);
    free(part);
    free(continued);
    wl_graph_free(g);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_continued_search_is_the_search),
        cmocka_unit_test(test_search_edp_within_fuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
