/*
 * test_fadiff.c -- FADiff's optimiser (src/diff/optim.c): every mapping it
 * returns is valid under the exact model, on every zoo model on Gemmini;
 * the same seed gives the same result at 1 and 2 threads; and on
 * ResNet-18 on Gemmini its network EDP is close to the heuristic mapper's.
 * The joint search of mappings and fusion (src/diff/joint.c) returns valid
 * plans on every zoo model on Gemmini, the same at 1 and 2 threads.
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
#include "diff/diff.h"
#include "mapping/mapping.h"
#include "workload/workload.h"

#include "cli_run.h"

/* Map g on a layer by layer with FADiff (o) or, when o is NULL, the
 * heuristic mapper at its defaults. */
static void map_network(const wl_graph *g, const arch_spec *a, const df_options *o, int64_t budget,
                        map_network_result *r)
{
    map_network_options no;
    map_network_options_default(&no);
    no.search.threads = 2;
    if (o) {
        no.problem_search = df_problem_search;
        no.problem_search_user = (void *)o;
        no.budget_per_problem = budget;
    }
    as_status st;
    if (map_network_evaluate(g, a, &no, r, &st) != AS_OK)
        fail_msg("%s on %s: %s", g->name, a->name, st.message);
}

static void test_every_zoo_model_valid_on_gemmini(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    df_options o;
    df_options_default(&o);
    o.adam_steps = 24; /* validity, not quality: short descents */
    int n_models, layers = 0;
    const wl_zoo_entry *zoo = wl_zoo_entries(&n_models);
    for (int i = 0; i < n_models; i++) {
        wl_graph *g;
        assert_int_equal(wl_zoo_build(zoo[i].name, &g, &st), AS_OK);
        map_network_result r;
        map_network(g, &a, &o, 1, &r);
        assert_int_equal(r.n_unmapped, 0);
        arch_spec seen;
        map_residency_arch(&a, &r.weights, &seen);
        for (int32_t k = 0; k < r.n_layers; k++) {
            const map_layer_result *l = &r.layers[k];
            if (l->problem_class < 0)
                continue;
            assert_true(l->mapped);
            map_eval e;
            map_evaluate(&seen, &l->problem, &l->mapping, &e);
            if (e.validity != MAP_VALID)
                fail_msg("%s layer %d: %s", zoo[i].name, k, e.reason);
            layers++;
        }
        map_network_free(&r);
        wl_graph_free(g);
    }
    printf("%d compute layers of %d zoo models mapped validly by FADiff\n", layers, n_models);
}

static void test_same_seed_same_result_any_threads(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    wl_graph *g;
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    assert_int_equal(wl_zoo_build("mobilenet_v2", &g, &st), AS_OK);
    int checked = 0;
    for (int32_t op = 0; op < g->n_ops && checked < 4; op++) {
        wl_problem p;
        if (!map_op_is_layer(&g->ops[op]) || !map_op_is_compute(&g->ops[op]) ||
            wl_op_problem(g, op, &p, &st) != AS_OK)
            continue;
        map_mapping m[2];
        map_eval e[2];
        for (int threads = 1; threads <= 2; threads++) {
            df_options o;
            df_options_default(&o);
            o.seed = 5;
            o.threads = threads;
            o.adam_steps = 40;
            df_map_search *s;
            assert_int_equal(df_map_search_init(&s, &a, &p, &o, &st), AS_OK);
            df_map_search_step(s, 5);
            assert_true(df_map_search_best(s, &m[threads - 1], &e[threads - 1]));
            df_map_search_free(s);
        }
        assert_memory_equal(&m[0], &m[1], sizeof m[0]);
        assert_true(e[0].edp_J_cycle == e[1].edp_J_cycle);
        checked++;
    }
    assert_int_equal(checked, 4);
    wl_graph_free(g);
}

static void test_close_to_the_mapper_on_resnet18(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    wl_graph *g;
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    assert_int_equal(wl_zoo_build("resnet18", &g, &st), AS_OK);
    df_options o;
    df_options_default(&o);
    map_network_result fadiff, mapper;
    map_network(g, &a, &o, 0, &fadiff);
    map_network(g, &a, NULL, 0, &mapper);
    double ratio = fadiff.edp_J_cycle / mapper.edp_J_cycle;
    printf("ResNet-18 on Gemmini: FADiff EDP / heuristic mapper EDP = %.4f\n", ratio);
    assert_true(ratio < 1.10);
    map_network_free(&fadiff);
    map_network_free(&mapper);
    wl_graph_free(g);
}

/* FADiff's joint search of g on a: its best plan and cost after
 * `descents` descents of `steps` steps. */
static void joint(const wl_graph *g, const arch_spec *a, int threads, int descents, int steps,
                  fu_plan *plan, fu_plan_cost *cost)
{
    df_options o;
    df_options_default(&o);
    o.threads = threads;
    o.adam_steps = steps;
    o.seed = 3;
    df_fuse_search *s;
    as_status st;
    if (df_fuse_search_init(&s, g, a, NULL, &o, &st) != AS_OK)
        fail_msg("%s: %s", g->name, st.message);
    df_fuse_search_step(s, descents);
    if (df_fuse_search_best(s, plan, cost, &st) != AS_OK)
        fail_msg("%s: %s", g->name, st.message);
    int n_curve;
    const double *curve = df_fuse_search_curve(s, &n_curve);
    assert_true(n_curve >= 1);
    assert_true(curve[2 * n_curve - 1] == cost->edp_J_cycle);
    df_fuse_search_free(s);
}

static void test_joint_plans_valid_on_every_zoo_model(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    int n_models, groups = 0, fused = 0;
    const wl_zoo_entry *zoo = wl_zoo_entries(&n_models);
    for (int i = 0; i < n_models; i++) {
        wl_graph *g;
        wl_epilogue_stats es;
        assert_int_equal(wl_zoo_build(zoo[i].name, &g, &st), AS_OK);
        assert_int_equal(wl_fuse_epilogues(g, &es, &st), AS_OK);
        fu_plan plan;
        fu_plan_cost cost;
        joint(g, &a, 2, 1, 4, &plan, &cost);
        char why[160];
        if (!fu_plan_valid(g, &plan, why, sizeof why))
            fail_msg("%s: %s", zoo[i].name, why);
        if (!cost.valid)
            fail_msg("%s: %s", zoo[i].name, cost.reason);
        assert_int_equal(cost.n_groups, plan.n_groups);
        for (int32_t k = 0; k < cost.n_groups; k++) {
            assert_true(cost.groups[k].valid);
            fused += cost.groups[k].n_tiles > 1 || cost.groups[k].recomputed_macs > 0;
        }
        groups += cost.n_groups;
        fu_plan_cost_free(&cost);
        fu_plan_free(&plan);
        wl_graph_free(g);
    }
    printf("%d valid groups (%d tiled) in FADiff's plans of %d zoo models\n", groups, fused,
           n_models);
}

static void test_joint_same_seed_same_result_any_threads(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    wl_graph *g;
    wl_epilogue_stats es;
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    assert_int_equal(wl_zoo_build("resnet18_cifar", &g, &st), AS_OK);
    assert_int_equal(wl_fuse_epilogues(g, &es, &st), AS_OK);
    fu_plan plan[2];
    fu_plan_cost cost[2];
    for (int threads = 1; threads <= 2; threads++)
        joint(g, &a, threads, 6, 12, &plan[threads - 1], &cost[threads - 1]);
    assert_true(fu_plan_equal(&plan[0], &plan[1]));
    assert_true(cost[0].edp_J_cycle == cost[1].edp_J_cycle);
    assert_int_equal(cost[0].cycles, cost[1].cycles);
    for (int i = 0; i < 2; i++) {
        fu_plan_cost_free(&cost[i]);
        fu_plan_free(&plan[i]);
    }
    wl_graph_free(g);
}

/* `map --algo fadiff` and `fuse --algo fadiff` end to end: JSON with the
 * totals and, for fuse, a best-so-far curve ending at the plan's EDP. */
static void test_cli(void **state)
{
    (void)state;
    run_result r;
    run(&r, "map --arch gemmini --model resnet18_cifar --algo fadiff --map-budget 2 --json");
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *v = json_loads(r.out, 0, &error);
    assert_non_null(v);
    double map_edp =
        json_number_value(json_object_get(json_object_get(v, "totals"), "edp_J_cycle"));
    assert_true(map_edp > 0);
    json_decref(v);
    free(r.out);

    run(&r, "fuse --arch gemmini --model resnet18_cifar --algo fadiff --plan-budget 1 --json");
    assert_int_equal(r.status, 0);
    v = json_loads(r.out, 0, &error);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "algorithm")), "fadiff");
    assert_int_equal(json_integer_value(json_object_get(v, "descents")), 1);
    double edp = json_number_value(json_object_get(json_object_get(v, "totals"), "edp_J_cycle"));
    json_t *curve = json_object_get(v, "curve");
    size_t n = json_array_size(curve);
    assert_true(n >= 1);
    double last = json_number_value(json_object_get(json_array_get(curve, n - 1), "edp_J_cycle"));
    assert_true(fabs(last - edp) <= 1e-9 * edp);
    json_decref(v);
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_zoo_model_valid_on_gemmini),
        cmocka_unit_test(test_same_seed_same_result_any_threads),
        cmocka_unit_test(test_close_to_the_mapper_on_resnet18),
        cmocka_unit_test(test_joint_plans_valid_on_every_zoo_model),
        cmocka_unit_test(test_joint_same_seed_same_result_any_threads),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
