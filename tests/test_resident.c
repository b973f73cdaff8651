/*
 * test_resident.c -- weights resident across inferences (issue 11, item
 * 6; src/mapping/resident.c states the model): on the Edge TPU (8 MB of
 * parameter memory) MobileNetV2 at int8 (~3.5 MB of weights) defaults to
 * resident, reads no weight from DRAM and moves fewer DRAM bytes than
 * streamed; VGG-16 (~138 MB) defaults to streamed and asking for resident
 * fails naming the model, the bytes and the capacity; the mapper sees the
 * resident level less the weights (and a different cache key); the fused
 * plan of singletons costs what map charges in both modes; a fused group
 * reads no weight from DRAM when resident; map, fuse and search say the
 * mode in their JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusion/fusion.h"
#include "mapping/mapping.h"

#include "cli_run.h"
#include "truth.h"
#include "test_check.h"

/* Mappings per distinct problem: enough for a valid mapping of every
 * layer, few enough to keep the test short. */
#define TEST_BUDGET 2000

static void load_arch(const char *preset, arch_spec *a)
{
    as_status st = {0};
    check(arch_load(preset, a, &st), &st);
}

/* Zoo model `name` at int8, as `--precision int8` runs it. */
static wl_graph *int8_model(const char *name)
{
    wl_graph *g = truth_build_zoo(name);
    wl_set_precision(g, WL_PREC_INT8);
    return g;
}

static void options(map_network_options *o, map_weights weights)
{
    map_network_options_default(o);
    o->search.threads = 2;
    o->budget_per_problem = TEST_BUDGET;
    o->weights = weights;
}

static void evaluate(const wl_graph *g, const arch_spec *a, map_weights weights,
                     map_network_result *r)
{
    map_network_options o;
    options(&o, weights);
    as_status st = {0};
    check(map_network_evaluate(g, a, &o, r, &st), &st);
}

/* Bytes every weight tensor the layers read takes at its precision, each
 * once. */
static int64_t weight_tensor_bytes(const wl_graph *g)
{
    int64_t bytes = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        bool read = false;
        for (int32_t o = 0; o < g->n_ops && !read && g->tensors[t].kind == WL_TENSOR_WEIGHT; o++)
            for (int i = 0; i < g->ops[o].n_inputs && !read; i++)
                read = g->ops[o].inputs[i] == t && map_op_is_layer(&g->ops[o]);
        if (read && wl_tensor_bytes(&g->tensors[t]) > 0)
            bytes += wl_tensor_bytes(&g->tensors[t]);
    }
    return bytes;
}

/*
 * Compute layer l of a resident run, costed again with the same mapping
 * with weights streamed (map_cost_mapped_layer): the difference in DRAM
 * bytes is exactly the weights' DRAM traffic -- the mapping's weight
 * reads at the DRAM level at the weights' precision, plus the weights the
 * nest does not model (a bias) -- which is at least the weights' size.
 */
static void check_no_weight_dram(const wl_graph *g, const arch_spec *seen,
                                 const map_layer_result *l)
{
    wl_problem own;
    as_status st = {0};
    check(wl_op_problem(g, l->op, &own, &st), &st);
    map_eval ev;
    map_evaluate(seen, &l->problem, &l->mapping, &ev);
    assert_int_equal(ev.validity, MAP_VALID);
    map_layer_result streamed;
    memset(&streamed, 0, sizeof streamed);
    map_cost_mapped_layer(seen, &ev, &own, map_outside_dram_bytes(g, seen, l->op, &own), &streamed);
    const map_ds_stats *w = &ev.level[seen->n_levels - 1].ds[WL_DS_WEIGHTS];
    int64_t instances = w->utilized_instances > 0 ? w->utilized_instances : 1;
    int64_t weight_dram = (w->reads * instances * own.ds[WL_DS_WEIGHTS].bits + 7) / 8;
    wl_op_stats s;
    wl_op_stats_get(g, l->op, &s);
    int64_t bias = s.weight_bytes - wl_tensor_bytes(&g->tensors[own.ds[WL_DS_WEIGHTS].tensor]);
    assert_true(weight_dram >= s.weight_bytes - bias);
    assert_int_equal(streamed.dram_bytes - l->dram_bytes, weight_dram + bias);
}

/* MobileNetV2 int8 on the Edge TPU: resident by default, no weight read
 * from DRAM, fewer DRAM bytes than streamed; the mapper's view of the
 * parameter memory is less the weights. */
static void test_edgetpu_mobilenet_resident(void **state)
{
    (void)state;
    wl_graph *g = int8_model("mobilenet_v2");
    arch_spec a;
    load_arch("edgetpu", &a);
    map_network_result resident, streamed;
    evaluate(g, &a, MAP_WEIGHTS_AUTO, &resident);
    evaluate(g, &a, MAP_WEIGHTS_STREAMED, &streamed);

    const map_residency *w = &resident.weights;
    assert_true(w->resident);
    assert_string_equal(a.level[w->level].name, "PEMemory");
    assert_int_equal(w->bytes, weight_tensor_bytes(g)); /* int8 on 8-bit words */
    assert_true(w->bytes > 3000000 && w->bytes < 4000000);
    assert_int_equal(w->capacity_bytes, 16 * 512 * 1024);
    assert_false(streamed.weights.resident);
    assert_int_equal(streamed.weights.bytes, w->bytes);

    /* The mapper's view: each of the 16 PE memories gives up its share. */
    arch_spec seen;
    map_residency_arch(&a, w, &seen);
    assert_int_equal(seen.level[w->level].size_words,
                     a.level[w->level].size_words - (w->words + 15) / 16);
    map_search_options so;
    map_search_options_default(&so);
    map_layer_key ka, ks;
    map_layer_key_design(&a, &so, TEST_BUDGET, &ka);
    map_layer_key_design(&seen, &so, TEST_BUDGET, &ks);
    assert_true(memcmp(ka.design, ks.design, sizeof ka.design) != 0);

    /* No weight crosses DRAM: layer by layer, and in total. */
    int64_t vector_weight_bytes = 0;
    for (int32_t i = 0; i < resident.n_layers; i++) {
        const map_layer_result *l = &resident.layers[i];
        if (l->problem_class >= 0) {
            check_no_weight_dram(g, &seen, l);
        } else {
            wl_op_stats s;
            wl_op_stats_get(g, l->op, &s);
            assert_int_equal(l->dram_bytes, s.input_bytes + s.output_bytes);
            vector_weight_bytes += s.weight_bytes;
        }
    }
    assert_true(resident.dram_bytes < streamed.dram_bytes);
    assert_true(streamed.dram_bytes - resident.dram_bytes >= w->bytes - vector_weight_bytes);
    assert_true(resident.energy_by_component_pJ[MAP_COMP_DRAM] <
                streamed.energy_by_component_pJ[MAP_COMP_DRAM]);
    map_network_free(&resident);
    map_network_free(&streamed);
    wl_graph_free(g);
}

/* VGG-16 (138 M weights) does not fit 8 MB: streamed by default, and
 * resident on demand is an error naming the model, bytes and capacity. */
static void test_edgetpu_vgg16_streamed(void **state)
{
    (void)state;
    wl_graph *g = int8_model("vgg16");
    arch_spec a;
    load_arch("edgetpu", &a);
    map_residency r;
    as_status st = {0};
    check(map_residency_decide(g, &a, MAP_WEIGHTS_AUTO, &r, &st), &st);
    assert_false(r.resident);
    assert_true(r.bytes > 130000000);

    map_network_options o;
    options(&o, MAP_WEIGHTS_RESIDENT);
    map_network_result out;
    assert_int_equal(map_network_evaluate(g, &a, &o, &out, &st), AS_EINVAL);
    char bytes[32], capacity[32];
    snprintf(bytes, sizeof bytes, "%lld bytes", (long long)r.bytes);
    snprintf(capacity, sizeof capacity, "%lld bytes", (long long)(16 * 512 * 1024));
    assert_non_null(strstr(st.message, "vgg16"));
    assert_non_null(strstr(st.message, bytes));
    assert_non_null(strstr(st.message, capacity));
    assert_non_null(strstr(st.message, "PEMemory"));

    fu_cost_options co;
    fu_cost_options_default(&co);
    co.weights = MAP_WEIGHTS_RESIDENT;
    fu_evaluator *e = NULL;
    assert_int_equal(fu_evaluator_new(&e, g, &a, &co, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "vgg16"));
    assert_null(e);
    wl_graph_free(g);
}

/* The layer-by-layer plan costs what map charges, streamed and resident. */
static void test_singletons_equal_network(void **state)
{
    (void)state;
    wl_graph *g = int8_model("mobilenet_v2");
    arch_spec a;
    load_arch("edgetpu", &a);
    for (int m = MAP_WEIGHTS_STREAMED; m <= MAP_WEIGHTS_RESIDENT; m++) {
        map_network_result r;
        evaluate(g, &a, (map_weights)m, &r);
        fu_cost_options co;
        fu_cost_options_default(&co);
        co.budget_per_problem = TEST_BUDGET;
        co.search.threads = 2;
        co.weights = (map_weights)m;
        fu_evaluator *e = NULL;
        fu_plan p;
        fu_plan_cost c;
        as_status st = {0};
        check(fu_evaluator_new(&e, g, &a, &co, &st), &st);
        check(fu_plan_init(&p, g, &st), &st);
        check(fu_plan_evaluate(e, &p, &c, &st), &st);
        assert_true(c.valid);
        assert_int_equal(c.weights.resident, m == MAP_WEIGHTS_RESIDENT);
        assert_int_equal(c.n_groups, r.n_layers);
        assert_int_equal(c.cycles, r.cycles);
        assert_int_equal(c.dram_bytes, r.dram_bytes);
        assert_close(c.energy_pJ, r.energy_pJ);
        assert_close(c.dram_energy_pJ, r.energy_by_component_pJ[MAP_COMP_DRAM]);
        for (int32_t i = 0; i < r.n_layers; i++) {
            assert_int_equal(c.groups[i].cycles, r.layers[i].cycles);
            assert_int_equal(c.groups[i].dram_bytes, r.layers[i].dram_bytes);
        }
        /* Resident weights' reads are their level's energy (mapping.h,
         * onchip_level_pJ), and the split adds up. */
        double levels = 0;
        for (int l = 0; l < ARCH_MAX_LEVELS; l++) {
            assert_close(c.onchip_level_pJ[l], r.onchip_level_pJ[l]);
            levels += r.onchip_level_pJ[l];
        }
        assert_close(levels, r.energy_by_component_pJ[MAP_COMP_ONCHIP]);
        fu_plan_cost_free(&c);
        fu_plan_free(&p);
        fu_evaluator_free(e);
        map_network_free(&r);
    }
    wl_graph_free(g);
}

/* A fused group (the first conv and the ops up to the next conv) reads
 * its weights from DRAM when streamed and not at all when resident. */
static void test_fused_group_resident(void **state)
{
    (void)state;
    wl_graph *g = int8_model("mobilenet_v2");
    arch_spec a;
    load_arch("edgetpu", &a);
    int32_t ops[8], n = 0;
    int64_t weight_bytes = 0;
    for (int32_t k = 0; k < g->n_order && n < 8; k++) {
        int32_t o = g->order[k];
        if (!map_op_is_layer(&g->ops[o]))
            continue;
        if (n > 0 && map_op_is_compute(&g->ops[o]))
            break;
        wl_op_stats s;
        wl_op_stats_get(g, o, &s);
        weight_bytes += s.weight_bytes;
        ops[n++] = o;
    }
    assert_true(n >= 2 && weight_bytes > 0);
    fu_group_cost cost[2];
    for (int m = 0; m < 2; m++) {
        fu_cost_options co;
        fu_cost_options_default(&co);
        co.budget_per_problem = TEST_BUDGET;
        co.search.threads = 2;
        co.weights = m ? MAP_WEIGHTS_RESIDENT : MAP_WEIGHTS_STREAMED;
        fu_evaluator *e = NULL;
        as_status st = {0};
        check(fu_evaluator_new(&e, g, &a, &co, &st), &st);
        check(fu_group_evaluate(e, ops, n, &cost[m], &st), &st);
        assert_true(cost[m].valid);
        fu_evaluator_free(e);
    }
    int64_t tiles = cost[0].n_tiles;
    /* Streamed: weights once (they fit beside the tiles) or per tile. */
    int64_t streamed_weights = cost[0].dram_bytes - cost[1].dram_bytes;
    if (cost[0].n_tiles == cost[1].n_tiles && cost[0].halo == cost[1].halo &&
        cost[0].tile.rows == cost[1].tile.rows && cost[0].tile.cols == cost[1].tile.cols)
        assert_true(streamed_weights == weight_bytes || streamed_weights == weight_bytes * tiles);
    assert_true(cost[1].dram_bytes < cost[0].dram_bytes);
    wl_graph_free(g);
}

/* The member "weights" of a JSON object text, parsed; NULL when absent. */
static json_t *json_of(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fail_msg("not JSON: %s: %.200s", err.text, text);
    return j;
}

/* map, fuse and search report the mode; --weights resident on a model
 * that does not fit is a usage-level error with the message. */
static void test_cli_reports_mode(void **state)
{
    (void)state;
    run_result r;
    run(&r, "map --arch edgetpu --model mobilenet_v2 --precision int8 --map-budget 500 --json");
    assert_int_equal(r.status, 0);
    json_t *j = json_of(r.out);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "weights"), "mode")),
                        "resident");
    json_decref(j);
    free(r.out);

    run(&r, "map --arch edgetpu --model mobilenet_v2 --precision int8 --map-budget 500");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "weights                  resident: "));
    free(r.out);

    run(&r, "fuse --arch edgetpu --model mobilenet_v2 --precision int8 --algo none "
            "--map-budget 200 --weights streamed --json");
    assert_int_equal(r.status, 0);
    j = json_of(r.out);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "weights"), "mode")),
                        "streamed");
    json_decref(j);
    free(r.out);

    run(&r, "map --arch edgetpu --model vgg16 --precision int8 --weights resident");
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "vgg16"));
    assert_non_null(strstr(r.err, "8388608 bytes"));
    free(r.out);

    /* Timeloop's format cannot say that weights stay on chip. */
    run(&r, "map --arch edgetpu --model mobilenet_v2 --emit-timeloop " AS_TEST_TMP_DIR
            "/resident_emit --weights resident");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--weights streamed"));
    free(r.out);

    run(&r, "search --space datacenter --model mobilenet_v2 --budget 2 --batch 2 --plan-budget 8 "
            "--sh-rounds 1 --map-budget 8 --no-db --threads 2 --json");
    assert_int_equal(r.status, 0);
    j = json_of(r.out);
    assert_string_equal(json_string_value(json_object_get(j, "weights")), "auto");
    json_t *w = json_array_get(json_object_get(j, "chosen_workloads"), 0);
    assert_non_null(w);
    assert_string_equal(json_string_value(json_object_get(w, "weights")), "resident");
    json_decref(j);
    free(r.out);

    /* Resident on demand: the edge space's designs cannot hold
     * SqueezeNet's weights, so every candidate is infeasible, saying why. */
    run(&r, "search --model squeezenet1_0 --budget 2 --batch 2 --plan-budget 8 --sh-rounds 1 "
            "--map-budget 8 --no-db --threads 2 --weights resident --json");
    assert_int_equal(r.status, 0);
    j = json_of(r.out);
    assert_true(json_is_null(json_object_get(j, "chosen")));
    json_t *base = json_array_get(json_object_get(j, "evaluations"), 0);
    assert_non_null(strstr(json_string_value(json_object_get(base, "reason")), "weights resident"));
    json_decref(j);
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edgetpu_mobilenet_resident),
        cmocka_unit_test(test_edgetpu_vgg16_streamed),
        cmocka_unit_test(test_singletons_equal_network),
        cmocka_unit_test(test_fused_group_resident),
        cmocka_unit_test(test_cli_reports_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
