/*
 * test_fusion_ilp.c -- FAST's fusion ILP (fusion/ilp.c): on small
 * instances, hand-built and from a graph, CBC's optimum equals a brute-force
 * enumeration of every pinning under the same model; pinnings fit global
 * memory; zero capacity pins nothing (the plan is layer by layer); the time
 * limit returns a fitting incumbent; CBC prints nothing.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fusion/fusion_private.h"

/* ------------------------------------------------------------ helpers */

/* A small deterministic generator (the test's own, not the library's). */
static uint64_t rng_state;
static uint32_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}
static int64_t rng_range(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rng_next() % (uint32_t)(hi - lo + 1));
}

/* The model, restated independently of ilp.c: layer i takes
 * max(compute, dram - savings of pinned items). */
static double model_objective(const fu_ilp_instance *inst, const bool *pinned)
{
    double total = 0;
    for (int32_t i = 0; i < inst->n_layers; i++) {
        double dram = inst->dram_cycles[i];
        for (int32_t s = 0; s < inst->n_savings; s++)
            if (inst->savings[s].layer == i && pinned[inst->savings[s].item])
                dram -= inst->savings[s].dram_cycles;
        total += dram > inst->compute_cycles[i] ? dram : inst->compute_cycles[i];
    }
    return total;
}

/* Pinned items live at layer i fit what the layer leaves of capacity. */
static bool model_fits(const fu_ilp_instance *inst, const bool *pinned)
{
    for (int32_t i = 0; i < inst->n_layers; i++) {
        int64_t used = 0, room = inst->capacity_words - inst->reserved_words[i];
        for (int32_t k = 0; k < inst->n_items; k++)
            if (pinned[k] && inst->items[k].first <= i && i <= inst->items[k].last)
                used += inst->items[k].words;
        if (used > (room > 0 ? room : 0))
            return false;
    }
    return true;
}

/* The best objective over all 2^n_items pinnings that fit. */
static double brute_force(const fu_ilp_instance *inst)
{
    assert_true(inst->n_items <= 20);
    bool pinned[20];
    double best = INFINITY;
    for (uint32_t mask = 0; mask < (1u << inst->n_items); mask++) {
        for (int32_t k = 0; k < inst->n_items; k++)
            pinned[k] = (mask >> k) & 1;
        if (model_fits(inst, pinned))
            best = fmin(best, model_objective(inst, pinned));
    }
    return best;
}

/* Solve, check the answer fits and its reported objective is its own,
 * and return that objective. */
static double solve_checked(const fu_ilp_instance *inst, double limit_s, bool *pinned,
                            fu_ilp_report *rep)
{
    as_status st = {0};
    if (fu_ilp_instance_solve(inst, limit_s, 0, pinned, rep, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_true(model_fits(inst, pinned));
    double obj = model_objective(inst, pinned);
    assert_true(fabs(obj - rep->objective_cycles) <= 1e-9 * fmax(1, obj));
    assert_true(rep->objective_cycles <= rep->unpinned_cycles + 1e-9);
    return obj;
}

static int32_t add_item(fu_ilp_instance *inst, int32_t first, int32_t last, int64_t words,
                        bool is_weight)
{
    inst->items[inst->n_items] = (fu_ilp_item){
        .tensor = -1, .is_weight = is_weight, .words = words, .first = first, .last = last};
    return inst->n_items++;
}

/* A saving also adds its cycles to the layer's DRAM time. */
static void add_saving(fu_ilp_instance *inst, int32_t item, int32_t layer, double cycles)
{
    inst->savings[inst->n_savings++] =
        (fu_ilp_saving){.item = item, .layer = layer, .dram_cycles = cycles};
    inst->dram_cycles[layer] += cycles;
}

/* A random instance of FAST's shape on n layers: per layer mostly a
 * weight (resident for the whole run), an activation to the next layer
 * (saving its read there and, mostly, its write here); one weight shared
 * by the first and last layers and one activation living over three layers
 * (the live-range generalisation).  Integer data, so that objectives
 * compare exactly. */
static void random_instance(fu_ilp_instance *inst, int32_t n)
{
    as_status st = {0};
    if (fu_ilp_instance_init(inst, n, 2 * n + 2, 4 * n + 8, &st) != AS_OK)
        fail_msg("%s", st.message);
    for (int32_t i = 0; i < n; i++) {
        inst->compute_cycles[i] = (double)rng_range(10, 200);
        inst->reserved_words[i] = rng_range(0, 20);
        inst->dram_cycles[i] = (double)rng_range(0, 40); /* traffic nothing saves */
    }
    for (int32_t i = 0; i < n; i++) {
        if (rng_range(0, 3) > 0)
            add_saving(inst, add_item(inst, 0, n - 1, rng_range(1, 60), true), i,
                       (double)rng_range(5, 150));
        if (i + 1 < n) {
            int32_t k = add_item(inst, i, i + 1, rng_range(1, 80), false);
            double c = (double)rng_range(5, 150);
            add_saving(inst, k, i + 1, c);
            if (rng_range(0, 2) > 0)
                add_saving(inst, k, i, c);
        }
    }
    int32_t shared = add_item(inst, 0, n - 1, rng_range(1, 40), true);
    add_saving(inst, shared, 0, (double)rng_range(5, 100));
    add_saving(inst, shared, n - 1, (double)rng_range(5, 100));
    add_saving(inst, add_item(inst, 0, 2, rng_range(1, 50), false), 2, (double)rng_range(5, 150));
    int64_t total_words = 0;
    for (int32_t k = 0; k < inst->n_items; k++)
        total_words += inst->items[k].words;
    inst->capacity_words = rng_range(0, total_words + 40);
}

/* ---------------------------------------------------- instance tests */

/* CBC's optimum equals brute force on 60 random instances of 4-8 layers
 * (up to 18 items) with capacities from nothing to everything. */
static void test_random_instances_match_brute_force(void **state)
{
    (void)state;
    rng_state = 12345;
    int strictly_better = 0;
    for (int trial = 0; trial < 60; trial++) {
        fu_ilp_instance inst;
        random_instance(&inst, (int32_t)rng_range(4, 8));
        bool pinned[32];
        fu_ilp_report rep;
        double ilp = solve_checked(&inst, 0, pinned, &rep);
        double brute = brute_force(&inst);
        if (fabs(ilp - brute) > 1e-6)
            fail_msg("trial %d: ILP %.3f, brute force %.3f", trial, ilp, brute);
        assert_true(rep.optimal);
        assert_true(rep.bound_cycles <= brute + 1e-6);
        strictly_better += ilp < rep.unpinned_cycles - 0.5;
        fu_ilp_instance_free(&inst);
    }
    assert_true(strictly_better >= 30); /* the instances are not trivial */
}

/* With no global memory nothing is pinned, whatever it would save. */
static void test_zero_capacity_pins_nothing(void **state)
{
    (void)state;
    rng_state = 777;
    for (int trial = 0; trial < 10; trial++) {
        fu_ilp_instance inst;
        random_instance(&inst, 6);
        inst.capacity_words = 0;
        bool pinned[32];
        fu_ilp_report rep;
        double ilp = solve_checked(&inst, 0, pinned, &rep);
        for (int32_t k = 0; k < inst.n_items; k++)
            assert_false(pinned[k]);
        assert_true(fabs(ilp - rep.unpinned_cycles) < 1e-9);
        assert_int_equal(rep.n_pinned_weights + rep.n_pinned_activations, 0);
        fu_ilp_instance_free(&inst);
    }
}

/* A hand-made knapsack: capacity 10 words, three weights of 6, 5 and 5
 * words saving 9, 5 and 5 cycles on DRAM-bound layers; the best is the two
 * small ones (10 cycles saved), not the greedy big one (9). */
static void test_knapsack_by_hand(void **state)
{
    (void)state;
    fu_ilp_instance inst;
    as_status st = {0};
    assert_int_equal(fu_ilp_instance_init(&inst, 3, 3, 3, &st), AS_OK);
    int64_t words[3] = {6, 5, 5};
    double saves[3] = {9, 5, 5};
    for (int32_t i = 0; i < 3; i++) {
        inst.compute_cycles[i] = 1;
        inst.dram_cycles[i] = 100;
        inst.items[i] = (fu_ilp_item){
            .tensor = -1, .is_weight = true, .words = words[i], .first = 0, .last = 2};
        inst.savings[i] = (fu_ilp_saving){.item = i, .layer = i, .dram_cycles = saves[i]};
    }
    inst.n_items = inst.n_savings = 3;
    inst.capacity_words = 10;
    bool pinned[3];
    fu_ilp_report rep;
    double obj = solve_checked(&inst, 0, pinned, &rep);
    assert_false(pinned[0]);
    assert_true(pinned[1] && pinned[2]);
    assert_true(fabs(obj - 290) < 1e-9);
    assert_true(fabs(rep.unpinned_cycles - 300) < 1e-9);
    assert_int_equal(rep.pinned_words, 10);
    assert_int_equal(rep.n_pinned_weights, 2);
    /* A layer that streams 5 words through global memory leaves room for
     * one small weight only while it runs. */
    inst.reserved_words[1] = 5;
    obj = solve_checked(&inst, 0, pinned, &rep);
    assert_true(fabs(obj - 295) < 1e-9);
    assert_false(pinned[0]);
    assert_true(pinned[1] != pinned[2]);
    fu_ilp_instance_free(&inst);
}

/* One activation of 5 words between two layers, capacity 10: it fits
 * unless the consumer streams more than 5 words through global memory. */
static void test_reserved_words_block_pinning(void **state)
{
    (void)state;
    fu_ilp_instance inst;
    as_status st = {0};
    assert_int_equal(fu_ilp_instance_init(&inst, 2, 1, 2, &st), AS_OK);
    add_saving(&inst, add_item(&inst, 0, 1, 5, false), 1, 50);
    inst.capacity_words = 10;
    bool pinned[1];
    fu_ilp_report rep;
    assert_true(fabs(solve_checked(&inst, 0, pinned, &rep)) < 1e-9);
    assert_true(pinned[0]);
    inst.reserved_words[1] = 6;
    assert_true(fabs(solve_checked(&inst, 0, pinned, &rep) - 50) < 1e-9);
    assert_false(pinned[0]);
    fu_ilp_instance_free(&inst);
}

/* An instance that indexes outside itself fails cleanly. */
static void test_bad_instance(void **state)
{
    (void)state;
    fu_ilp_instance inst;
    as_status st = {0};
    assert_int_equal(fu_ilp_instance_init(&inst, 2, 1, 1, &st), AS_OK);
    inst.items[0] = (fu_ilp_item){.tensor = -1, .words = 1, .first = 1, .last = 2};
    inst.n_items = 1;
    bool pinned[1];
    assert_int_equal(fu_ilp_instance_solve(&inst, 0, 0, pinned, NULL, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "item 0"));
    fu_ilp_instance_free(&inst);
}

/* A limit far below what a 300-layer instance with a tight capacity
 * needs: CBC stops and the best incumbent, which fits and is no worse than
 * pinning nothing, is used; the call returns promptly. */
static void test_time_limit(void **state)
{
    (void)state;
    rng_state = 4242;
    fu_ilp_instance inst;
    random_instance(&inst, 300);
    inst.capacity_words /= 40;
    bool *pinned = calloc((size_t)inst.n_items, sizeof *pinned);
    fu_ilp_report rep;
    solve_checked(&inst, 0.05, pinned, &rep);
    assert_true(rep.optimal || rep.time_limit_reached);
    assert_true(rep.bound_cycles <= rep.objective_cycles + 1e-6);
    free(pinned);
    fu_ilp_instance_free(&inst);
}

/* Solves write nothing to stdout or stderr (the library never prints),
 * with and without a time limit. */
static void test_silent(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/fusion_ilp_output.txt", AS_TEST_TMP_DIR);
    fflush(stdout), fflush(stderr);
    FILE *sink = fopen(path, "w");
    assert_non_null(sink);
    int out = dup(1), err = dup(2);
    dup2(fileno(sink), 1);
    dup2(fileno(sink), 2);
    rng_state = 99;
    for (int trial = 0; trial < 4; trial++) {
        fu_ilp_instance inst;
        random_instance(&inst, trial < 2 ? 8 : 120);
        bool *pinned = calloc((size_t)inst.n_items, sizeof *pinned);
        fu_ilp_report rep;
        as_status st = {0};
        as_code rc = fu_ilp_instance_solve(&inst, trial % 2 ? 0.02 : 0, 0, pinned, &rep, &st);
        free(pinned);
        fu_ilp_instance_free(&inst);
        if (rc != AS_OK)
            break;
    }
    fflush(stdout), fflush(stderr);
    dup2(out, 1), dup2(err, 2);
    close(out), close(err);
    fclose(sink);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    remove(path);
}

/* ------------------------------------------------------- graph tests */

/* x -> conv0 -> relu0 (y1) -> conv1 -> add(., y1) -> flatten -> gemm:
 * five layers, a skip connection and a view. */
#define C 8
#define HW 14
static wl_graph *small_graph(void)
{
    as_status st = {0};
    wl_graph *g = wl_graph_new("ilp_test", "test:ilp");
    int64_t xdims[4] = {1, C, HW, HW}, wdims[4] = {C, C, 3, 3}, gdims[2] = {10, C * HW * HW};
    int32_t x = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_F32, 4, xdims, &st);
    int32_t w0 = wl_add_tensor(g, "w0", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 4, wdims, &st);
    int32_t w1 = wl_add_tensor(g, "w1", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 4, wdims, &st);
    int32_t wg = wl_add_tensor(g, "wg", WL_TENSOR_WEIGHT, WL_DTYPE_F32, 2, gdims, &st);
    const char *names[7] = {"y0", "y1", "y2", "y3", "flat", "out"};
    int32_t y[6];
    for (int i = 0; i < 6; i++)
        y[i] = wl_add_tensor(g, names[i], WL_TENSOR_ACTIVATION, WL_DTYPE_F32, 0, NULL, &st);
    wl_attrs conv;
    wl_attrs_default(&conv, WL_OP_CONV);
    for (int i = 0; i < 4; i++)
        conv.pads[i] = 1;
    wl_attrs gemm;
    wl_attrs_default(&gemm, WL_OP_GEMM);
    gemm.trans_b = 1;
    int32_t in0[2] = {x, w0}, in1[2] = {y[1], w1}, add_in[2] = {y[2], y[1]}, g_in[2] = {y[4], wg};
    wl_add_graph_input(g, x);
    wl_add_op(g, WL_OP_CONV, "conv0", NULL, 2, in0, 1, &y[0], &conv, &st);
    wl_add_op(g, WL_OP_RELU, "relu0", NULL, 1, &y[0], 1, &y[1], NULL, &st);
    wl_add_op(g, WL_OP_CONV, "conv1", NULL, 2, in1, 1, &y[2], &conv, &st);
    wl_add_op(g, WL_OP_ADD, "add", NULL, 2, add_in, 1, &y[3], NULL, &st);
    wl_add_op(g, WL_OP_FLATTEN, "flatten", NULL, 1, &y[3], 1, &y[4], NULL, &st);
    wl_add_op(g, WL_OP_GEMM, "gemm", NULL, 2, g_in, 1, &y[5], &gemm, &st);
    wl_add_graph_output(g, y[5]);
    if (st.code != AS_OK || wl_graph_infer(g, &st) != AS_OK)
        fail_msg("%s", st.message);
    return g;
}

static void graph_instance(const wl_graph *g, const arch_spec *a, fu_ilp_instance *inst)
{
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.search.threads = 1;
    o.budget_per_problem = 500;
    as_status st = {0};
    if (fu_ilp_instance_from_graph(inst, g, a, &o, &st) != AS_OK)
        fail_msg("%s", st.message);
}

/* The item of graph tensor `name`, -1 if none. */
static int32_t item_of(const wl_graph *g, const fu_ilp_instance *inst, const char *name)
{
    for (int32_t k = 0; k < inst->n_items; k++)
        if (inst->items[k].tensor == wl_find_tensor(g, name))
            return k;
    return -1;
}

/* Total DRAM cycles item k saves. */
static double saved_by(const fu_ilp_instance *inst, int32_t k)
{
    double c = 0;
    for (int32_t s = 0; s < inst->n_savings; s++)
        if (inst->savings[s].item == k)
            c += inst->savings[s].dram_cycles;
    return c;
}

/* The instance of the small graph, checked against hand counts: five
 * layers; weights w0, w1, wg and activations y0, y1, y2, y3 (behind the
 * view) are the items; y1 also feeds the add two layers later, so pinning
 * it saves the read only; every fp32 activation is 8*14*14*4 = 6272 bytes. */
static void test_graph_instance_by_hand(void **state)
{
    (void)state;
    wl_graph *g = small_graph();
    arch_spec a;
    as_status st = {0};
    assert_int_equal(arch_load("eyeriss", &a, &st), AS_OK);
    fu_ilp_instance inst;
    graph_instance(g, &a, &inst);
    double bpc = a.dram.bandwidth_GBps * 1e9 * a.cycle_seconds;
    double act = 6272 / bpc, wconv = 8 * 8 * 9 * 4 / bpc, wgemm = 10 * 1568 * 4 / bpc;
    assert_int_equal(inst.n_layers, 5);
    assert_int_equal(inst.n_items, 7);
    const char *acts[4] = {"y0", "y1", "y2", "y3"};
    double act_saves[4] = {2 * act, act, 2 * act, 2 * act};
    for (int i = 0; i < 4; i++) {
        int32_t k = item_of(g, &inst, acts[i]);
        assert_true(k >= 0);
        assert_false(inst.items[k].is_weight);
        assert_int_equal(inst.items[k].words, 1568);
        assert_int_equal(inst.items[k].first, i);
        assert_int_equal(inst.items[k].last, i + 1);
        assert_true(fabs(saved_by(&inst, k) - act_saves[i]) < 1e-9);
    }
    assert_true(fabs(saved_by(&inst, item_of(g, &inst, "w0")) - wconv) < 1e-9);
    assert_true(fabs(saved_by(&inst, item_of(g, &inst, "wg")) - wgemm) < 1e-9);
    assert_int_equal(inst.items[item_of(g, &inst, "wg")].words, 10 * 1568);
    /* DRAM time of each layer: conv x+w0+y0, relu y0+y1, conv y1+w1+y2,
     * add y2+y1+y3, gemm y3+wg+out (40 bytes). */
    double dram[5] = {2 * act + wconv, 2 * act, 2 * act + wconv, 3 * act, act + wgemm + 40 / bpc};
    for (int i = 0; i < 5; i++) {
        assert_true(fabs(inst.dram_cycles[i] - dram[i]) < 1e-9);
        assert_true(inst.compute_cycles[i] > 0);
    }
    /* Global memory: Eyeriss's shared global buffer. */
    assert_true(inst.capacity_words > 0);
    fu_ilp_instance_free(&inst);
    wl_graph_free(g);
}

/* On the graph's instance, for capacities from none to all, CBC matches
 * brute force; a DRAM so slow that every pin helps fuses the whole graph
 * when everything fits, and zero capacity gives the layer-by-layer plan. */
static void test_graph_plans(void **state)
{
    (void)state;
    wl_graph *g = small_graph();
    arch_spec a;
    as_status st = {0};
    assert_int_equal(arch_load("eyeriss", &a, &st), AS_OK);
    a.dram.bandwidth_GBps = 0.01;
    fu_ilp_instance inst;
    graph_instance(g, &a, &inst);
    int64_t caps[5] = {0, 1568, 4000, 20000, 1 << 30};
    bool pinned[16];
    for (int c = 0; c < 5; c++) {
        inst.capacity_words = caps[c];
        for (int32_t i = 0; i < inst.n_layers; i++)
            inst.reserved_words[i] = 0;
        fu_ilp_report rep;
        double ilp = solve_checked(&inst, 0, pinned, &rep);
        double brute = brute_force(&inst);
        assert_true(fabs(ilp - brute) <= 1e-9 * brute);
        fu_plan plan;
        assert_int_equal(fu_ilp_plan(&inst, g, pinned, &plan, &st), AS_OK);
        char reason[256];
        assert_true(fu_plan_valid(g, &plan, reason, sizeof reason));
        int32_t conv0 = inst.op[0], gemm = inst.op[4];
        if (c == 0) { /* layer by layer */
            assert_int_equal(plan.n_groups, 5);
            for (int32_t i = 1; i < 5; i++)
                assert_int_not_equal(plan.group[inst.op[i]], plan.group[inst.op[i - 1]]);
        }
        if (c == 4) { /* everything pinned: one group of five */
            assert_int_equal(rep.n_pinned_weights + rep.n_pinned_activations, inst.n_items);
            assert_int_equal(plan.n_groups, 1);
            assert_int_equal(plan.group[conv0], plan.group[gemm]);
        }
        assert_int_equal(plan.group[wl_find_tensor(g, "flat") >= 0
                                        ? g->tensors[wl_find_tensor(g, "flat")].producer
                                        : 0],
                         -1); /* the view does no work */
        fu_plan_free(&plan);
    }
    fu_ilp_instance_free(&inst);
    wl_graph_free(g);
}

/* Through the evaluator (what the search calls): the same instance, so
 * the same objective and plan as solving it directly; the plan is valid. */
static void test_evaluator_path(void **state)
{
    (void)state;
    wl_graph *g = small_graph();
    arch_spec a;
    as_status st = {0};
    assert_int_equal(arch_load("eyeriss", &a, &st), AS_OK);
    a.dram.bandwidth_GBps = 0.5;
    fu_cost_options co;
    fu_cost_options_default(&co);
    co.search.threads = 1;
    co.budget_per_problem = 500;
    fu_evaluator *e = NULL;
    if (fu_evaluator_new(&e, g, &a, &co, &st) != AS_OK)
        fail_msg("%s", st.message);
    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = FU_ALGO_ILP;
    so.time_limit_seconds = 10;
    fu_plan plan;
    fu_ilp_report rep;
    if (fu_ilp_solve_report(e, &so, &plan, &rep, &st) != AS_OK)
        fail_msg("%s", st.message);
    char reason[256];
    if (!fu_plan_valid(g, &plan, reason, sizeof reason))
        fail_msg("%s", reason);
    assert_true(rep.optimal);
    assert_true(rep.objective_cycles < rep.unpinned_cycles);

    fu_ilp_instance inst;
    graph_instance(g, &a, &inst);
    bool pinned[16];
    fu_ilp_report direct;
    double obj = solve_checked(&inst, 0, pinned, &direct);
    assert_true(fabs(obj - rep.objective_cycles) <= 1e-9 * obj);
    assert_true(fabs(brute_force(&inst) - obj) <= 1e-9 * obj);
    fu_plan same;
    assert_int_equal(fu_ilp_plan(&inst, g, pinned, &same, &st), AS_OK);
    assert_true(fu_plan_equal(&plan, &same));
    fu_plan_free(&same);
    fu_ilp_instance_free(&inst);
    fu_plan_free(&plan);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_instances_match_brute_force),
        cmocka_unit_test(test_zero_capacity_pins_nothing),
        cmocka_unit_test(test_knapsack_by_hand),
        cmocka_unit_test(test_reserved_words_block_pinning),
        cmocka_unit_test(test_bad_instance),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_silent),
        cmocka_unit_test(test_graph_instance_by_hand),
        cmocka_unit_test(test_graph_plans),
        cmocka_unit_test(test_evaluator_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
