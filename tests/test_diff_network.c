/*
 * test_diff_network.c -- FADiff's relaxed network cost with fusion
 * variables (src/diff/network.c): at 0/1 fusion assignments and integer
 * factors it equals the fusion evaluator's plan cost with the same
 * mappings (given through the evaluator's member_mapping hook), and its
 * gradients equal central finite differences at interior points.
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

#include "arch/arch.h"
#include "diff/diff.h"
#include "fusion/fusion.h"
#include "fusion/fusion_private.h"
#include "mapping/eval_private.h"
#include "mapping/mapping.h"
#include "mapping/mapspace.h"
#include "workload/workload.h"

/* The mappings of every problem pair of a network, and the factors the
 * relaxed cost reads them at (their own, or perturbed). */
typedef struct fixture {
    wl_graph *g;
    fu_evaluator *e;
    const arch_spec *a;
    df_net *net;
    int32_t n;
    bool *found;
    map_mapping *m;
    /* Leaves of the current tape, when `leaves` (gradients): per pair the
     * factors as inputs at scale[k] x the mapping's. */
    bool leaves;
    double (*scale)[2][ARCH_MAX_LEVELS][WL_NDIMS];
    df_factors *f;
    int64_t hook_calls;
} fixture;

/* The evaluator's hook: pair (op, p)'s mapping. */
static bool hook(void *user, int32_t op, const wl_problem *p, map_problem_outcome *out)
{
    fixture *fx = user;
    fx->hook_calls++;
    int32_t k = df_net_find_problem(fx->net, op, p);
    if (k < 0)
        return false;
    out->found = fx->found[k];
    if (!out->found)
        return true;
    out->mapping = fx->m[k];
    out->mapped = *p;
    map_evaluate(fx->a, p, &fx->m[k], &out->eval);
    return true;
}

/* The network's mapping costs: pair k's mapping at its factors. */
static bool relaxed(void *user, df_tape *t, int32_t k, int32_t op, const wl_problem *p,
                    df_cost *out)
{
    (void)op;
    fixture *fx = user;
    if (!fx->found[k])
        return false;
    df_factors f;
    if (fx->leaves) {
        for (int l = 0; l < ARCH_MAX_LEVELS; l++)
            for (int d = 0; d < WL_NDIMS; d++) {
                bool in = l < fx->m[k].n_levels;
                double tv = in ? (double)fx->m[k].level[l].temporal[d] : 1;
                double sv = in ? (double)fx->m[k].level[l].spatial[d] : 1;
                f.temporal[l][d] = df_const(t, tv * fx->scale[k][0][l][d]);
                f.spatial[l][d] = df_const(t, sv * fx->scale[k][1][l][d]);
            }
        fx->f[k] = f;
    } else {
        df_factors_of_mapping(t, &fx->m[k], &f);
    }
    df_relaxed_cost(t, fx->a, p, &fx->m[k], &f, out);
    return true;
}

/* A random valid mapping of p on a (group packing as the mapper sets
 * it); false when none turned up. */
static bool random_valid(const ms_space *s, as_rng *r, const arch_spec *a, const wl_problem *p,
                         map_mapping *m)
{
    for (int attempt = 0; attempt < 400; attempt++) {
        ms_point pt;
        map_eval e;
        if (!ms_random(s, r, 0, &pt))
            continue;
        pt.m.group_pack = map_best_group_pack(a, p, &pt.m);
        map_evaluate(a, p, &pt.m, &e);
        if (e.validity == MAP_VALID) {
            *m = pt.m;
            return true;
        }
    }
    return false;
}

static void setup(fixture *fx, const char *model, const char *preset, int max_group_ops,
                  uint64_t seed)
{
    as_status st = {0};
    memset(fx, 0, sizeof *fx);
    static arch_spec a;
    if (wl_zoo_build(model, &fx->g, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_epilogue_stats es;
    if (wl_fuse_epilogues(fx->g, &es, &st) != AS_OK)
        fail_msg("%s", st.message);
    if (arch_load(preset, &a, &st) != AS_OK)
        fail_msg("%s", st.message);
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.member_mapping = hook;
    o.member_mapping_user = fx;
    if (fu_evaluator_new(&fx->e, fx->g, &a, &o, &st) != AS_OK)
        fail_msg("%s", st.message);
    fx->a = fu_evaluator_arch(fx->e);
    if (df_net_init(&fx->net, fx->e, max_group_ops, &st) != AS_OK)
        fail_msg("%s on %s: %s", model, preset, st.message);
    fx->n = df_net_n_problems(fx->net);
    fx->found = calloc((size_t)fx->n, sizeof *fx->found);
    fx->m = calloc((size_t)fx->n, sizeof *fx->m);
    fx->scale = calloc((size_t)fx->n, sizeof *fx->scale);
    fx->f = calloc((size_t)fx->n, sizeof *fx->f);
    assert_non_null(fx->found);
    assert_non_null(fx->m);
    assert_non_null(fx->scale);
    assert_non_null(fx->f);
    as_rng r = as_rng_stream(seed, 0, AS_RNG_FROM_FIRST_OUTPUT);
    static ms_space s;
    for (int32_t k = 0; k < fx->n; k++) {
        const wl_problem *p = &df_net_problem_at(fx->net, k)->problem;
        if (ms_init(&s, fx->a, p, false, &st) == AS_OK)
            fx->found[k] = random_valid(&s, &r, fx->a, p, &fx->m[k]);
    }
}

static void teardown(fixture *fx)
{
    df_net_free(fx->net);
    fu_evaluator_free(fx->e);
    wl_graph_free(fx->g);
    free(fx->found);
    free(fx->m);
    free(fx->scale);
    free(fx->f);
}

/* The relaxed cost at fusion probabilities phi (constants) on t. */
static void relaxed_at(fixture *fx, df_tape *t, const double *phi, df_var *phi_vars,
                       df_net_cost *out)
{
    for (;;) {
        df_tape_reset(t);
        for (int32_t v = 0; v < df_net_n_vars(fx->net); v++)
            phi_vars[v] = df_const(t, phi[v]);
        df_net_relaxed_cost(fx->net, t, phi_vars, relaxed, fx, out);
        if (!t->full)
            return;
        as_status st;
        assert_int_equal(df_tape_reserve(t, 2 * t->capacity, &st), AS_OK);
    }
}

static void assert_rel(double got, double want, double tol, const char *what, const char *where,
                       int trial)
{
    if (!(fabs(got - want) <= tol * fmax(fabs(want), 1e-300)))
        fail_msg("%s, assignment %d: %s relaxed %.17g, exact %.17g", where, trial, what, got, want);
}

/* Random 0/1 assignments, repaired to candidate groups: relaxed = exact. */
static int check_corners(const char *model, const char *preset, int max_group_ops, int trials)
{
    fixture fx;
    setup(&fx, model, preset, max_group_ops, 17);
    int32_t n_vars = df_net_n_vars(fx.net);
    double *phi = calloc((size_t)n_vars + 1, sizeof *phi);
    bool *fused = calloc((size_t)n_vars + 1, sizeof *fused);
    df_var *vars = calloc((size_t)n_vars + 1, sizeof *vars);
    assert_true(phi && fused && vars);
    df_tape t;
    assert_int_equal(df_tape_init(&t, 1 << 18, NULL), AS_OK);
    t.temperature = 0;
    as_rng r = as_rng_stream(23, 0, AS_RNG_FROM_FIRST_OUTPUT);
    char where[96];
    snprintf(where, sizeof where, "%s on %s", model, preset);
    int checked = 0, fused_groups = 0, joined = 0;
    for (int trial = 0; trial < trials; trial++) {
        double density = trial == 0 ? 0 : trial == 1 ? 1 : as_rng_unit(&r);
        for (int32_t v = 0; v < n_vars; v++)
            phi[v] = as_rng_unit(&r) < density;
        df_net_round(fx.net, phi, fused);
        for (int32_t v = 0; v < n_vars; v++)
            phi[v] = fused[v];
        as_status st;
        fu_plan_cost exact;
        assert_int_equal(df_net_exact_cost(fx.net, fused, &exact, &st), AS_OK);
        if (!exact.valid) { /* a member without a random valid mapping */
            fu_plan_cost_free(&exact);
            continue;
        }
        df_net_cost c;
        relaxed_at(&fx, &t, phi, vars, &c);
        if (!c.supported)
            fail_msg("%s: %s", where, c.why);
        assert_rel(df_value(&t, c.energy_pJ), exact.energy_pJ, 1e-9, "energy", where, trial);
        assert_rel(df_value(&t, c.cycles), (double)exact.cycles, 1e-9, "cycles", where, trial);
        assert_true(df_value(&t, c.infeasible) == 0);
        /* The plan of the assignment is valid, with exact's groups. */
        fu_plan plan;
        assert_int_equal(df_net_plan(fx.net, fused, &plan, &st), AS_OK);
        char reason[160];
        if (!fu_plan_valid(fx.g, &plan, reason, sizeof reason))
            fail_msg("%s: %s", where, reason);
        assert_int_equal(plan.n_groups, exact.n_groups);
        for (int32_t gi = 0; gi < exact.n_groups; gi++) {
            int32_t members = 0;
            for (int32_t o = 0; o < fx.g->n_ops; o++)
                members += plan.group[o] == gi;
            fused_groups += members > 1;
        }
        joined += n_vars > 0 ? plan.n_groups : 0;
        fu_plan_free(&plan);
        fu_plan_cost_free(&exact);
        checked++;
    }
    if (fu_evaluator_residency(fx.e)->resident)
        print_message("%s: weights resident\n", where);
    print_message("%s: %d fusion variables, %d problems, %d assignments checked (%d groups, %d "
                  "of several ops)\n",
                  where, n_vars, fx.n, checked, joined, fused_groups);
    assert_true(checked > trials / 2);
    assert_true(n_vars > 0);
    assert_true(fused_groups > 0);
    df_tape_free(&t);
    free(phi);
    free(fused);
    free(vars);
    teardown(&fx);
    return checked;
}

static void test_corners_cnn(void **state)
{
    (void)state;
    check_corners("resnet18", "gemmini", 4, 12);
    check_corners("mobilenet_v2", "gemmini", 4, 12);
    check_corners("resnet18", "eyeriss", 4, 8);
    /* Weights resident on chip (the TPU's memory holds MobileNetV2's). */
    check_corners("mobilenet_v2", "tpu_v3", 4, 6);
}

static void test_corners_transformer(void **state)
{
    (void)state;
    check_corners("bert_base", "gemmini", 3, 6);
    check_corners("gpt2", "gemmini", 4, 4);
}

/* log(E x C) at phi and the fixture's factors. */
static double log_edp(fixture *fx, df_tape *t, const double *phi, df_var *vars, df_var *y)
{
    df_net_cost c;
    relaxed_at(fx, t, phi, vars, &c);
    assert_true(c.supported);
    *y = df_add(t, df_log(t, c.energy_pJ), df_log(t, c.cycles));
    return df_value(t, *y);
}

static void check_gradients(const char *model, const char *preset, double temperature)
{
    fixture fx;
    setup(&fx, model, preset, 3, 29);
    fx.leaves = true;
    as_rng r = as_rng_stream(31, 0, AS_RNG_FROM_FIRST_OUTPUT);
    for (int32_t k = 0; k < fx.n; k++)
        for (int s = 0; s < 2; s++)
            for (int l = 0; l < ARCH_MAX_LEVELS; l++)
                for (int d = 0; d < WL_NDIMS; d++)
                    fx.scale[k][s][l][d] = 1 + 0.4 * as_rng_unit(&r);
    int32_t n_vars = df_net_n_vars(fx.net);
    double *phi = calloc((size_t)n_vars + 1, sizeof *phi);
    df_var *vars = calloc((size_t)n_vars + 1, sizeof *vars);
    assert_true(phi && vars);
    for (int32_t v = 0; v < n_vars; v++)
        phi[v] = 0.1 + 0.8 * as_rng_unit(&r);
    df_tape t;
    assert_int_equal(df_tape_init(&t, 1 << 18, NULL), AS_OK);
    t.temperature = temperature;
    df_var y;
    log_edp(&fx, &t, phi, vars, &y);
    df_backward(&t, y);
    char where[96];
    snprintf(where, sizeof where, "%s on %s", model, preset);
    /* Every fusion variable. */
    double *grad = calloc((size_t)n_vars + 1, sizeof *grad);
    assert_non_null(grad);
    for (int32_t v = 0; v < n_vars; v++)
        grad[v] = t.adjoint[vars[v]];
    for (int32_t v = 0; v < n_vars; v++) {
        double h = 1e-6, keep = phi[v];
        phi[v] = keep + h;
        double up = log_edp(&fx, &t, phi, vars, &y);
        phi[v] = keep - h;
        double down = log_edp(&fx, &t, phi, vars, &y);
        phi[v] = keep;
        double fd = (up - down) / (2 * h);
        if (fabs(fd - grad[v]) > 1e-5 * fmax(fabs(fd), 1e-3))
            fail_msg("%s: phi %d: tape %.10g, finite differences %.10g", where, v, grad[v], fd);
    }
    /* A few factors (temporal and spatial, of pairs in use). */
    int checked = 0;
    for (int trial = 0; trial < 40 && checked < 12; trial++) {
        int32_t k = (int32_t)as_rng_below(&r, fx.n);
        if (!fx.found[k])
            continue;
        int s = (int)as_rng_below(&r, 2);
        int l = (int)as_rng_below(&r, fx.m[k].n_levels);
        int d = (int)as_rng_below(&r, WL_NDIMS);
        log_edp(&fx, &t, phi, vars, &y);
        df_backward(&t, y);
        df_var leaf = s ? fx.f[k].spatial[l][d] : fx.f[k].temporal[l][d];
        double g = t.adjoint[leaf], keep = fx.scale[k][s][l][d];
        double base = df_value(&t, leaf) / keep, h = 1e-6;
        fx.scale[k][s][l][d] = keep + h / base;
        double up = log_edp(&fx, &t, phi, vars, &y);
        fx.scale[k][s][l][d] = keep - h / base;
        double down = log_edp(&fx, &t, phi, vars, &y);
        fx.scale[k][s][l][d] = keep;
        double fd = (up - down) / (2 * h);
        if (fabs(fd - g) > 1e-5 * fmax(fabs(fd), 1e-3))
            fail_msg("%s: pair %d %s factor [%d][%d]: tape %.10g, finite differences %.10g", where,
                     k, s ? "spatial" : "temporal", l, d, g, fd);
        checked++;
    }
    assert_true(checked >= 6);
    df_tape_free(&t);
    free(grad);
    free(phi);
    free(vars);
    teardown(&fx);
}

static void test_gradients(void **state)
{
    (void)state;
    check_gradients("resnet18", "gemmini", 0.1);
    check_gradients("mobilenet_v2", "eyeriss", 0.2);
}

/* Without the hook the evaluator caches; with it, the same plan costs
 * what the hook's mappings say, every time it is asked. */
static void test_hook_not_cached(void **state)
{
    (void)state;
    fixture fx;
    setup(&fx, "resnet18", "gemmini", 2, 41);
    int32_t n_vars = df_net_n_vars(fx.net);
    bool *fused = calloc((size_t)n_vars + 1, sizeof *fused);
    assert_non_null(fused);
    as_status st;
    fu_plan_cost c1, c2;
    assert_int_equal(df_net_exact_cost(fx.net, fused, &c1, &st), AS_OK);
    int64_t calls = fx.hook_calls;
    assert_true(calls > 0);
    /* Another mapping for every pair: a different cost. */
    as_rng r = as_rng_stream(43, 0, AS_RNG_FROM_FIRST_OUTPUT);
    static ms_space s;
    for (int32_t k = 0; k < fx.n; k++) {
        const wl_problem *p = &df_net_problem_at(fx.net, k)->problem;
        if (ms_init(&s, fx.a, p, false, &st) == AS_OK)
            fx.found[k] = random_valid(&s, &r, fx.a, p, &fx.m[k]);
    }
    assert_int_equal(df_net_exact_cost(fx.net, fused, &c2, &st), AS_OK);
    assert_true(fx.hook_calls == 2 * calls);
    assert_true(c1.energy_pJ != c2.energy_pJ || c1.cycles != c2.cycles);
    fu_plan_cost_free(&c1);
    fu_plan_cost_free(&c2);
    free(fused);
    teardown(&fx);
}

/* Every pair fused, unrepaired: groups longer than the candidates, so the
 * plan's exact cost is not valid and the relaxed infeasibility counts the
 * ops left out; rounding repairs it. */
static void test_infeasible(void **state)
{
    (void)state;
    fixture fx;
    setup(&fx, "mobilenet_v2", "gemmini", 2, 47);
    int32_t n_vars = df_net_n_vars(fx.net);
    double *phi = calloc((size_t)n_vars + 1, sizeof *phi);
    bool *fused = calloc((size_t)n_vars + 1, sizeof *fused);
    df_var *vars = calloc((size_t)n_vars + 1, sizeof *vars);
    assert_true(phi && fused && vars);
    for (int32_t v = 0; v < n_vars; v++) {
        phi[v] = 1;
        fused[v] = true;
    }
    as_status st;
    fu_plan_cost exact;
    assert_int_equal(df_net_exact_cost(fx.net, fused, &exact, &st), AS_OK);
    assert_false(exact.valid);
    fu_plan_cost_free(&exact);
    df_tape t;
    assert_int_equal(df_tape_init(&t, 1 << 16, NULL), AS_OK);
    df_net_cost c;
    relaxed_at(&fx, &t, phi, vars, &c);
    assert_true(df_value(&t, c.infeasible) >= 3);
    df_net_round(fx.net, phi, fused);
    for (int32_t v = 0; v < n_vars; v++)
        phi[v] = fused[v];
    relaxed_at(&fx, &t, phi, vars, &c);
    assert_true(df_value(&t, c.infeasible) == 0);
    assert_int_equal(df_net_exact_cost(fx.net, fused, &exact, &st), AS_OK);
    assert_true(exact.valid);
    fu_plan_cost_free(&exact);
    df_tape_free(&t);
    free(phi);
    free(fused);
    free(vars);
    teardown(&fx);
}

/* A hook answering with the mapper's own outcomes (another evaluator's,
 * mapping the same problems) gives exactly the evaluator's costs; and the
 * tile fu_group_pick_tile picks is one fu_group_evaluate's search maps,
 * so the searched cost is at least as good. */
typedef struct mapper_hook {
    fu_evaluator *mapper;
    int64_t calls;
} mapper_hook;

static bool mapper_answer(void *user, int32_t op, const wl_problem *p, map_problem_outcome *out)
{
    (void)op;
    mapper_hook *h = user;
    const map_problem_outcome *m;
    as_status st;
    h->calls++;
    if (fu_mapped_problem(h->mapper, p, &m, &st) != AS_OK)
        return false;
    *out = *m;
    return true;
}

static void test_hook_as_mapper(void **state)
{
    (void)state;
    as_status st = {0};
    wl_graph *g;
    static arch_spec a;
    assert_int_equal(wl_zoo_build("mobilenet_v2", &g, &st), AS_OK);
    wl_epilogue_stats es;
    assert_int_equal(wl_fuse_epilogues(g, &es, &st), AS_OK);
    assert_int_equal(arch_load("gemmini", &a, &st), AS_OK);
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
    o.budget_per_problem = 200;
    mapper_hook h = {0};
    fu_evaluator *plain, *hooked;
    assert_int_equal(fu_evaluator_new(&plain, g, &a, &o, &st), AS_OK);
    assert_int_equal(fu_evaluator_new(&h.mapper, g, &a, &o, &st), AS_OK);
    o.member_mapping = mapper_answer;
    o.member_mapping_user = &h;
    assert_int_equal(fu_evaluator_new(&hooked, g, &a, &o, &st), AS_OK);
    int32_t *work = malloc((size_t)g->n_ops * sizeof *work);
    assert_non_null(work);
    int32_t n = fu_working_ops(g, work), tried = 0;
    for (int32_t i = 0; i + 3 <= n && tried < 12; i += 3) {
        for (int32_t len = 1; len <= 3; len++) {
            fu_group_cost x, y;
            assert_int_equal(fu_group_evaluate(plain, work + i, len, &x, &st), AS_OK);
            assert_int_equal(fu_group_evaluate(hooked, work + i, len, &y, &st), AS_OK);
            assert_int_equal(x.valid, y.valid);
            assert_true(x.energy_pJ == y.energy_pJ && x.cycles == y.cycles);
            assert_true(x.tile.rows == y.tile.rows && x.tile.cols == y.tile.cols);
            fu_tile tile;
            fu_halo_mode halo;
            bool fits;
            assert_int_equal(fu_group_pick_tile(plain, work + i, len, &tile, &halo, &fits, &st),
                             AS_OK);
            if (!x.valid || !fits)
                continue;
            fu_group_cost z;
            assert_int_equal(fu_group_evaluate_tile(plain, work + i, len, tile, halo, &z, &st),
                             AS_OK);
            /* The pick sees the array (tiling.c, array_aware_pick); the
             * search maps only the shapes its estimate ranks first, so
             * either may be better: the pick is valid and costed. */
            assert_true(z.valid && z.cycles > 0 && z.energy_pJ > 0);
            tried += len > 1;
        }
    }
    assert_true(tried > 0);
    assert_true(h.calls > 0);
    free(work);
    fu_evaluator_free(plain);
    fu_evaluator_free(hooked);
    fu_evaluator_free(h.mapper);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corners_cnn), cmocka_unit_test(test_corners_transformer),
        cmocka_unit_test(test_gradients),   cmocka_unit_test(test_hook_not_cached),
        cmocka_unit_test(test_infeasible),  cmocka_unit_test(test_hook_as_mapper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
