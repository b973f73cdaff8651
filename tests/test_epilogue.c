/*
 * test_epilogue.c -- epilogue fusion and inference folding (issue 11,
 * item 5): wl_fuse_epilogues attaches BatchNormalization, activations,
 * residual adds and squeeze-excite scales to their producer; network.c
 * costs a producer with its epilogue as one layer; fusion plans are over
 * these fused ops, so no activation ever forms a group alone -- in the
 * layer-by-layer plan, in GA plans and in the design a co-design search
 * chooses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fusion/fusion_private.h"
#include "search/search.h"
#include "test_check.h"
#include "truth.h"

#define TEST_BUDGET 500

/* Zoo model `name`, fused (wl_fuse_epilogues) when `fused`. */
static wl_graph *zoo(const char *name, bool fused, wl_epilogue_stats *stats)
{
    wl_graph *g = NULL;
    as_status st = {0};
    check(wl_zoo_build(name, &g, &st), &st);
    if (fused)
        check(wl_fuse_epilogues(g, stats, &st), &st);
    return g;
}

static bool elementwise(const wl_op *op)
{
    wl_op_category c = wl_op_kind_category(op->kind);
    return c == WL_CAT_UNARY || c == WL_CAT_BINARY || op->kind == WL_OP_BATCHNORM;
}

/* Working elementwise ops (BN included) that are not in an epilogue. */
static int lone_elementwise(const wl_graph *g)
{
    int n = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        n += wl_op_does_work(&g->ops[o]) && elementwise(&g->ops[o]) && g->ops[o].epilogue_of < 0;
    return n;
}

/* Every op reading t (through views: a view's readers read t) belongs to
 * fused op root. */
static void assert_read_inside(const wl_graph *g, int32_t root, int32_t t)
{
    for (int32_t c = 0; c < wl_consumer_count(g, t); c++) {
        const wl_op *op = &g->ops[wl_consumer_list(g, t)[c]];
        if (op->dead)
            continue;
        if (wl_op_category_of(op) == WL_CAT_VIEW) {
            assert_false(wl_is_graph_output(g, op->outputs[0]));
            assert_read_inside(g, root, op->outputs[0]);
        } else
            assert_int_equal(wl_fused_root(g, wl_consumer_list(g, t)[c]), root);
    }
}

/* Every fused op is closed: what its ops make is read inside it only,
 * but for its last op's output; its epilogue list is in topological
 * order and names it as root. */
static void assert_closed(const wl_graph *g)
{
    int32_t *position = calloc((size_t)g->n_ops, sizeof *position);
    for (int32_t k = 0; k < g->n_order; k++)
        position[g->order[k]] = k;
    for (int32_t root = 0; root < g->n_ops; root++) {
        if (g->ops[root].epilogue_of >= 0 || g->ops[root].epilogue_next < 0)
            continue;
        int32_t final = wl_fused_output(g, root);
        for (int32_t m = root; m >= 0; m = g->ops[m].epilogue_next) {
            int32_t next = g->ops[m].epilogue_next;
            if (next >= 0) {
                assert_int_equal(g->ops[next].epilogue_of, root);
                assert_true(position[next] > position[m]);
            }
            for (int i = 0; i < g->ops[m].n_outputs; i++) {
                int32_t t = g->ops[m].outputs[i];
                if (t < 0 || t == final)
                    continue;
                assert_false(wl_is_graph_output(g, t));
                assert_read_inside(g, root, t);
            }
        }
    }
    free(position);
}

/* ResNet-50: 53 BNs folded; every Relu and every residual Add runs in a
 * conv's epilogue; nothing elementwise is left alone. */
static void test_resnet50_fused_ops(void **state)
{
    (void)state;
    wl_epilogue_stats s;
    wl_graph *g = zoo("resnet50", true, &s);
    assert_int_equal(s.n_folded_bn, 53);
    int relus = 0, adds = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->kind == WL_OP_RELU || op->kind == WL_OP_ADD) {
            relus += op->kind == WL_OP_RELU;
            adds += op->kind == WL_OP_ADD;
            assert_true(op->epilogue_of >= 0);
            assert_int_equal(g->ops[op->epilogue_of].kind, WL_OP_CONV);
            assert_true(op->fusable);
        }
        assert_true(op->kind != WL_OP_BATCHNORM);
    }
    assert_int_equal(relus, 49);
    assert_int_equal(adds, 16);
    assert_int_equal(s.n_epilogue, relus + adds);
    assert_int_equal(lone_elementwise(g), 0);
    assert_closed(g);
    wl_graph_free(g);
}

/* EfficientNet, MobileNet and transformers: SiLU (x * Sigmoid(x), a
 * small DAG), squeeze-excite scales (a Mul whose big operand is read as
 * an extra input), Clip (ReLU6), GELU's Erf chain, biases and residual
 * adds all join a producer. */
static void test_silu_and_squeeze_excite(void **state)
{
    (void)state;
    const char *models[] = {"efficientnet_b0", "mobilenet_v2", "vit_b_16", "gpt2"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        wl_epilogue_stats s;
        wl_graph *g = zoo(models[i], true, &s);
        if (lone_elementwise(g) != 0)
            fail_msg("%s: %d elementwise ops left alone", models[i], lone_elementwise(g));
        assert_true(s.n_epilogue > 0);
        assert_closed(g);
        wl_graph_free(g);
    }
}

/* Raw exports put views between a layer and its activation (HF GPT-2's
 * Conv1D: Gemm, then Reshape, then GELU's tanh chain; BERT's and
 * ConvNeXt's reshapes and permutes): views move no data, so activations,
 * biases and residual adds still join their layer.  What stays alone in
 * these opset-14 exports is the decomposed LayerNorm's square (Pow of
 * x - mean, which the normalising Div reads again: a tensor read by two
 * fused ops must leave both) and the attention mask's Cast. */
static void test_views_between_layer_and_epilogue(void **state)
{
    (void)state;
    const char *models[] = {"bert_base_hf.onnx", "convnext_tiny.onnx", "gpt2_hf.onnx"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/models/%s", AS_TEST_DATA_DIR, models[i]);
        wl_graph *g = truth_load_onnx(path);
        wl_epilogue_stats s;
        as_status st = {0};
        check(wl_fuse_epilogues(g, &s, &st), &st);
        for (int32_t o = 0; o < g->n_ops; o++) {
            const wl_op *op = &g->ops[o];
            if (wl_op_does_work(op) && elementwise(op) && op->epilogue_of < 0 &&
                op->kind != WL_OP_POW && op->kind != WL_OP_CAST)
                fail_msg("%s: %s '%s' left alone", models[i], op->op_type, op->name);
        }
        assert_true(s.n_epilogue >= 300);
        assert_closed(g);
        wl_graph_free(g);
    }
}

/* A graph output cannot stay on chip: an op whose input is one joins
 * nothing, and compaction detaches every epilogue (op indices change). */
static void test_graph_output_and_compaction(void **state)
{
    (void)state;
    wl_graph *g = zoo("resnet18", true, NULL);
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t p = g->tensors[g->outputs[i]].producer;
        assert_true(p >= 0);
        assert_int_equal(wl_fused_output(g, wl_fused_root(g, p)), g->outputs[i]);
    }
    as_status st = {0};
    check(wl_graph_compact(g, &st), &st);
    for (int32_t o = 0; o < g->n_ops; o++) {
        assert_int_equal(g->ops[o].epilogue_of, -1);
        assert_int_equal(g->ops[o].epilogue_next, -1);
    }
    wl_graph_free(g);
}

/* DenseNet's first layer of a block normalises a tensor that later
 * concatenations read too: BN + Relu cannot be the pool's epilogue, so the
 * BN becomes a fused op of its own with the Relu in its epilogue. */
static void test_densenet_prologue_pairs(void **state)
{
    (void)state;
    wl_graph *g = zoo("densenet161", true, NULL);
    int bn_roots = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (!wl_op_does_work(op) || op->epilogue_of >= 0 || !elementwise(op))
            continue;
        assert_int_equal(op->kind, WL_OP_BATCHNORM);
        assert_true(op->epilogue_next >= 0);
        assert_int_equal(g->ops[op->epilogue_next].kind, WL_OP_RELU);
        bn_roots++;
    }
    assert_true(bn_roots > 0);
    assert_closed(g);
    wl_graph_free(g);
}

static void load_arch(const char *preset, arch_spec *a)
{
    as_status st = {0};
    check(arch_load(preset, a, &st), &st);
}

static void map_net(const wl_graph *g, const arch_spec *a, map_network_result *r)
{
    map_network_options no;
    map_network_options_default(&no);
    no.budget_per_problem = TEST_BUDGET;
    no.search.threads = 1;
    as_status st = {0};
    check(map_network_evaluate(g, a, &no, r, &st), &st);
}

/* The layer of r whose op is named name, or NULL. */
static const map_layer_result *layer_named(const wl_graph *g, const map_network_result *r,
                                           const char *name)
{
    for (int32_t i = 0; i < r->n_layers; i++)
        if (strcmp(g->ops[r->layers[i].op].name, name) == 0)
            return &r->layers[i];
    return NULL;
}

/*
 * A conv with BN and Relu fused, against the three layers of the
 * unfused model: the conv maps the same (same problem), and the fused
 * layer pays only the folded bias's read on top of the conv's DRAM
 * traffic; the Relu's vector work at one MAC's energy; cycles at least
 * the conv's and the vector unit's; far fewer layers, cycles and bytes.
 */
static void test_network_cost(void **state)
{
    (void)state;
    arch_spec a;
    load_arch("eyeriss", &a);
    wl_graph *plain = zoo("resnet18", false, NULL), *fused = zoo("resnet18", true, NULL);
    map_network_result rp, rf;
    map_net(plain, &a, &rp);
    map_net(fused, &a, &rf);
    assert_int_equal(rp.n_epilogue_ops, 0);
    assert_int_equal(rf.n_epilogue_ops, 8 + 17); /* residual adds and relus */
    assert_int_equal(rf.n_layers, rp.n_layers - 20 - 25);
    assert_int_equal(rf.macs, rp.macs);
    assert_true(rf.cycles < rp.cycles);
    assert_true(rf.dram_bytes < rp.dram_bytes);
    assert_true(rf.energy_pJ < rp.energy_pJ);

    const map_layer_result *conv = layer_named(plain, &rp, "layer1.0.conv1");
    const map_layer_result *relu = &rp.layers[conv - rp.layers + 2]; /* conv, bn, relu */
    const map_layer_result *f = layer_named(fused, &rf, "layer1.0.conv1");
    assert_non_null(conv);
    assert_non_null(f);
    assert_int_equal(plain->ops[relu->op].kind, WL_OP_RELU);
    assert_int_equal(f->n_epilogue_ops, 1);
    int64_t bias_bytes = 64 * 4;
    assert_int_equal(f->dram_bytes, conv->dram_bytes + bias_bytes);
    int64_t relu_ops = 64 * 56 * 56;
    assert_close(f->energy_by_component_pJ[MAP_COMP_VECTOR],
                 conv->energy_by_component_pJ[MAP_COMP_VECTOR] +
                     (double)relu_ops * a.compute.mac_pJ);
    int64_t vector_cycles = (int64_t)ceil((double)relu_ops / map_vector_lanes(&a));
    assert_true(f->cycles >= conv->cycles && f->cycles >= vector_cycles);
    assert_true(f->cycles < conv->cycles + relu->cycles);

    /* A residual add reads its second operand once more. */
    const map_layer_result *res = NULL;
    for (int32_t i = 0; i < rf.n_layers && !res; i++)
        for (int32_t m = fused->ops[rf.layers[i].op].epilogue_next; m >= 0;
             m = fused->ops[m].epilogue_next)
            if (fused->ops[m].kind == WL_OP_ADD)
                res = &rf.layers[i];
    assert_non_null(res);
    map_epilogue ep;
    map_epilogue_work(fused, res->op, &ep);
    assert_int_equal(ep.n_ops, 2); /* Add, Relu */
    assert_int_equal(ep.extra_input_bytes, 64 * 56 * 56 * 4);
    assert_int_equal(ep.weight_bytes, 0);
    assert_int_equal(ep.output_bytes_change, 0);
    map_network_free(&rp);
    map_network_free(&rf);
    wl_graph_free(plain);
    wl_graph_free(fused);
}

static fu_evaluator *evaluator(const wl_graph *g, const arch_spec *a)
{
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.budget_per_problem = TEST_BUDGET;
    o.search.threads = 1;
    fu_evaluator *e;
    as_status st = {0};
    check(fu_evaluator_new(&e, g, a, &o, &st), &st);
    return e;
}

/* No group of p holds elementwise ops only (a "lone activation"), and no
 * epilogue op has a group of its own: it runs in its root's. */
static void assert_no_lone_activation(const wl_graph *g, const fu_plan *p)
{
    for (int32_t gid = 0; gid < p->n_groups; gid++) {
        bool real = false;
        for (int32_t o = 0; o < g->n_ops; o++)
            real |= p->group[o] == gid && !elementwise(&g->ops[o]);
        if (!real)
            fail_msg("group %d holds elementwise ops only", gid);
    }
    for (int32_t o = 0; o < g->n_ops; o++)
        if (g->ops[o].epilogue_of >= 0)
            assert_int_equal(p->group[o], -1);
}

/* The layer-by-layer plan of fused ops costs what network.c charges for
 * the fused layers; GA plans and a DP search's plan are over fused ops. */
static void test_fusion_over_fused_ops(void **state)
{
    (void)state;
    arch_spec a;
    load_arch("eyeriss", &a);
    wl_graph *g = zoo("resnet18", true, NULL);
    map_network_result r;
    map_net(g, &a, &r);
    fu_evaluator *e = evaluator(g, &a);
    fu_plan p;
    fu_plan_cost c;
    as_status st = {0};
    check(fu_plan_init(&p, g, &st), &st);
    assert_no_lone_activation(g, &p);
    check(fu_plan_evaluate(e, &p, &c, &st), &st);
    assert_true(c.valid);
    assert_int_equal(c.n_groups, r.n_layers);
    assert_int_equal(c.cycles, r.cycles);
    assert_int_equal(c.dram_bytes, r.dram_bytes);
    assert_close(c.energy_pJ, r.energy_pJ);
    fu_plan_cost_free(&c);
    fu_plan_free(&p);

    for (uint64_t seed = 1; seed <= 8; seed++) {
        check(fu_ga_random_plan(g, seed, &p, &st), &st);
        char why[200];
        assert_true(fu_plan_valid(g, &p, why, sizeof why));
        assert_no_lone_activation(g, &p);
        fu_plan_free(&p);
    }

    /* Two fused ops in one group: tiled, their epilogues inside. */
    int32_t pair[2] = {-1, -1}, first = -1;
    for (int32_t i = 0; i + 1 < r.n_layers && first < 0; i++)
        if (strcmp(g->ops[r.layers[i].op].name, "layer1.0.conv1") == 0)
            first = i;
    assert_true(first >= 0);
    pair[0] = r.layers[first].op;
    pair[1] = r.layers[first + 1].op;
    fu_group_cost gc;
    check(fu_group_evaluate(e, pair, 2, &gc, &st), &st);
    assert_true(gc.valid);
    assert_int_equal(gc.macs, r.layers[first].macs + r.layers[first + 1].macs);

    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = FU_ALGO_DP;
    so.threads = 1;
    fu_search *s;
    check(fu_search_init(&s, e, &so, &st), &st);
    while (fu_search_step(s, 64))
        ;
    check(fu_search_best(s, &p, &c, &st), &st);
    assert_true(c.valid);
    assert_true(c.cycles <= r.cycles || c.energy_pJ <= r.energy_pJ);
    assert_no_lone_activation(g, &p);
    fu_plan_cost_free(&c);
    fu_plan_free(&p);
    fu_search_free(s);
    fu_evaluator_free(e);
    map_network_free(&r);
    wl_graph_free(g);
}

/* The default search (CASCO, edge space, ResNet-18; small budgets): the
 * chosen design's fusion groups hold no lone activation. */
static void test_search_has_no_lone_activation(void **state)
{
    (void)state;
    se_space s;
    as_status st = {0};
    check(se_space_load("edge", &s, &st), &st);
    se_workload w = {.model = "resnet18"};
    se_run_options o;
    se_run_options_default(&o);
    o.budget = 4;
    o.batch = 4;
    o.sw_budget = 64;
    o.sh_rounds = 2;
    o.map_budget = 16;
    se_result r;
    check(se_run(&s, &w, 1, &o, &r, &st), &st);
    assert_true(r.chosen >= 0);
    assert_int_equal(r.n_workloads, 1);
    const se_workload_result *wr = &r.chosen_results[0];
    assert_true(wr->outcome.feasible);
    assert_no_lone_activation(wr->graph, &wr->plan);
    int relus = 0;
    for (int32_t op = 0; op < wr->graph->n_ops; op++)
        relus += wr->graph->ops[op].kind == WL_OP_RELU;
    assert_int_equal(relus, 17);
    se_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet50_fused_ops),
        cmocka_unit_test(test_silu_and_squeeze_excite),
        cmocka_unit_test(test_views_between_layer_and_epilogue),
        cmocka_unit_test(test_graph_output_and_compaction),
        cmocka_unit_test(test_densenet_prologue_pairs),
        cmocka_unit_test(test_network_cost),
        cmocka_unit_test(test_fusion_over_fused_ops),
        cmocka_unit_test(test_search_has_no_lone_activation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
