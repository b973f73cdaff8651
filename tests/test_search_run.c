/*
 * test_search_run.c -- the hardware engines and the co-design run:
 * distinct, in-range, seeded proposals; CASCO's high-fidelity rule; the
 * surrogate engines beating random on a smooth function; and a whole run
 * giving the same result at 1 and 2 threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "search/search.h"

static se_space edge_space(void)
{
    se_space s;
    as_status st;
    assert_int_equal(se_space_load("edge", &s, &st), AS_OK);
    return s;
}

/* A smooth synthetic objective over the unit cube: a bowl centred at
 * 0.3 in every coordinate, plus a second objective pulling to 0.7. */
static void synthetic(const se_space *s, const se_point *p, se_observation *ob)
{
    double x[SE_MAX_PARAMS];
    se_point_to_unit(s, p, x);
    double a = 0, b = 0;
    for (int d = 0; d < s->n_params; d++) {
        a += (x[d] - 0.3) * (x[d] - 0.3);
        b += (x[d] - 0.7) * (x[d] - 0.7);
    }
    memset(ob, 0, sizeof *ob);
    ob->point = *p;
    ob->feasible = true;
    ob->y[0] = 1 + a;
    ob->y[1] = 1 + b;
    ob->scalar = 1 + a;
}

/* Drive engine algo for n_iter batches of `batch` on the synthetic
 * function; every point proposed into props (may be NULL).  Returns the
 * best scalar seen, and the hypervolume of both objectives (reference 4,
 * 4) in *hypervolume. */
static double drive_hv(se_algo algo, uint64_t seed, int n_iter, int batch, se_point *props,
                       double *hypervolume)
{
    se_space s = edge_space();
    se_engine *e;
    as_status st;
    se_engine_options o = {.algo = algo, .seed = seed, .n_objectives = 2};
    assert_int_equal(se_engine_new(&e, &s, &o, &st), AS_OK);
    double best = INFINITY, y[2 * 128];
    for (int it = 0; it < n_iter; it++) {
        se_point pts[16];
        se_observation obs[16];
        assert_int_equal(se_engine_propose(e, batch, pts, &st), AS_OK);
        for (int i = 0; i < batch; i++) {
            for (int d = 0; d < s.n_params; d++) {
                assert_true(pts[i].index[d] >= 0);
                assert_true(pts[i].index[d] < s.param[d].n_values);
            }
            synthetic(&s, &pts[i], &obs[i]);
            best = obs[i].scalar < best ? obs[i].scalar : best;
            y[2 * (it * batch + i)] = obs[i].y[0];
            y[2 * (it * batch + i) + 1] = obs[i].y[1];
            if (props)
                props[it * batch + i] = pts[i];
        }
        assert_int_equal(se_engine_observe(e, obs, batch, &st), AS_OK);
    }
    const double ref[2] = {4, 4};
    if (hypervolume)
        *hypervolume = se_hypervolume(y, n_iter * batch, 2, ref);
    se_engine_free(e);
    return best;
}

static double drive(se_algo algo, uint64_t seed, int n_iter, int batch, se_point *props)
{
    return drive_hv(algo, seed, n_iter, batch, props, NULL);
}

/* Every engine: distinct points, the same ones again for the same seed,
 * others for another seed. */
static void test_engines_seeded_and_distinct(void **state)
{
    (void)state;
    se_space s = edge_space();
    for (int a = 0; a < SE_N_ALGOS; a++) {
        se_point p1[40], p2[40], p3[40];
        drive((se_algo)a, 7, 5, 8, p1);
        drive((se_algo)a, 7, 5, 8, p2);
        drive((se_algo)a, 8, 5, 8, p3);
        bool differs = false;
        for (int i = 0; i < 40; i++) {
            assert_true(se_point_equal(&s, &p1[i], &p2[i]));
            differs |= !se_point_equal(&s, &p1[i], &p3[i]);
            for (int j = 0; j < i; j++)
                assert_false(se_point_equal(&s, &p1[i], &p1[j]));
        }
        assert_true(differs);
    }
}

/* On two smooth bowls, averaged over three seeds with the same
 * evaluations, the single-objective engines find a better scalar than
 * random search and the multi-objective ones a larger hypervolume. */
static void test_guided_engines_beat_random(void **state)
{
    (void)state;
    double best[SE_N_ALGOS] = {0}, hv[SE_N_ALGOS] = {0};
    for (int a = 0; a < SE_N_ALGOS; a++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            double h;
            best[a] += drive_hv((se_algo)a, seed, 8, 6, NULL, &h) / 3;
            hv[a] += h / 3;
        }
    const se_algo single[] = {SE_ALGO_BO, SE_ALGO_LCS, SE_ALGO_GA};
    for (size_t k = 0; k < 3; k++)
        if (!(best[single[k]] < best[SE_ALGO_RANDOM]))
            fail_msg("%s: mean best %g, random %g", se_algo_name(single[k]), best[single[k]],
                     best[SE_ALGO_RANDOM]);
    const se_algo multi[] = {SE_ALGO_MOBO, SE_ALGO_CASCO};
    for (size_t k = 0; k < 2; k++)
        if (!(hv[multi[k]] > hv[SE_ALGO_RANDOM]))
            fail_msg("%s: mean hypervolume %g, random %g", se_algo_name(multi[k]), hv[multi[k]],
                     hv[SE_ALGO_RANDOM]);
}

/* CASCO keeps points far from the best scalar out of its surrogate once
 * its update limit is set; MOBO keeps everything. */
static void test_casco_high_fidelity_rule(void **state)
{
    (void)state;
    se_space s = edge_space();
    as_status st;
    se_engine *casco, *mobo;
    se_engine_options o = {.algo = SE_ALGO_CASCO, .seed = 3, .n_objectives = 2};
    assert_int_equal(se_engine_new(&casco, &s, &o, &st), AS_OK);
    o.algo = SE_ALGO_MOBO;
    assert_int_equal(se_engine_new(&mobo, &s, &o, &st), AS_OK);
    int64_t observed = 0;
    for (int it = 0; it < 5; it++) {
        se_point pts[8];
        se_observation obs[8];
        assert_int_equal(se_engine_propose(casco, 8, pts, &st), AS_OK);
        for (int i = 0; i < 8; i++) {
            synthetic(&s, &pts[i], &obs[i]);
            /* Every fourth point looks as a truncated software search
             * leaves it: far worse than its design deserves. */
            if (i % 4 == 3) {
                obs[i].y[0] *= 50;
                obs[i].y[1] *= 50;
            }
        }
        assert_int_equal(se_engine_observe(casco, obs, 8, &st), AS_OK);
        assert_int_equal(se_engine_propose(mobo, 8, pts, &st), AS_OK);
        for (int i = 0; i < 8; i++)
            synthetic(&s, &pts[i], &obs[i]);
        assert_int_equal(se_engine_observe(mobo, obs, 8, &st), AS_OK);
        observed += 8;
    }
    assert_true(se_engine_update_limit(casco) > 0);
    assert_true(se_engine_surrogate_points(casco) < observed);
    assert_true(se_engine_surrogate_points(casco) >= 8);   /* the initial design */
    assert_int_equal(se_engine_surrogate_points(mobo), 0); /* not CASCO: no rule */
    se_engine_free(casco);
    se_engine_free(mobo);
}

/* A small run: alexnet on the edge space. */
static void small_run(se_algo algo, int threads, int64_t budget, int batch, se_result *r)
{
    se_space s = edge_space();
    se_workload w = {.model = "alexnet"};
    se_run_options o;
    se_run_options_default(&o);
    o.algo = algo;
    o.seed = 5;
    o.budget = budget;
    o.batch = batch;
    o.threads = threads;
    o.sw_budget = 64;
    o.sh_rounds = 2;
    o.map_budget = 16;
    as_status st;
    as_code code = se_run(&s, &w, 1, &o, r, &st);
    if (code != AS_OK)
        fail_msg("%s", st.message);
}

/* Same seed, same run, whatever the thread count: every candidate's
 * point, feasibility and metrics bit for bit, the front and the pick. */
static void test_run_same_at_1_and_2_threads(void **state)
{
    (void)state;
    se_result one, two;
    small_run(SE_ALGO_CASCO, 1, 8, 4, &one);
    small_run(SE_ALGO_CASCO, 2, 8, 4, &two);
    se_space s = edge_space();
    assert_int_equal(one.n_candidates, 9); /* the baseline and 8 */
    assert_int_equal(one.n_candidates, two.n_candidates);
    int feasible = 0;
    for (int64_t i = 0; i < one.n_candidates; i++) {
        const se_candidate *a = &one.candidates[i], *b = &two.candidates[i];
        assert_true(se_point_equal(&s, &a->point, &b->point));
        assert_int_equal(a->outcome.feasible, b->outcome.feasible);
        assert_int_equal(a->rounds, b->rounds);
        assert_memory_equal(&a->outcome.metrics, &b->outcome.metrics, sizeof a->outcome.metrics);
        feasible += a->outcome.feasible;
    }
    assert_true(feasible >= 2);
    assert_int_equal(one.n_front, two.n_front);
    assert_memory_equal(one.front, two.front, (size_t)one.n_front * sizeof *one.front);
    assert_int_equal(one.chosen, two.chosen);
    assert_true(one.chosen >= 0);
    assert_int_equal(one.n_curve, two.n_curve);
    assert_memory_equal(one.curve_hypervolume, two.curve_hypervolume,
                        (size_t)one.n_curve * sizeof *one.curve_hypervolume);
    /* The hypervolume never falls. */
    for (int64_t k = 1; k < one.n_curve; k++)
        assert_true(one.curve_hypervolume[k] >= one.curve_hypervolume[k - 1]);
    se_result_free(&one);
    se_result_free(&two);
}

/* Successive halving: in each CASCO batch of m feasible candidates, the
 * best ceil(m/2) by terminal value and the best ceil(m/4) by AUC get the
 * second round -- at least the first, at most their sum; a non-halving
 * engine gives each candidate one round. */
static void test_successive_halving_rounds(void **state)
{
    (void)state;
    se_result casco, random;
    small_run(SE_ALGO_CASCO, 2, 16, 8, &casco);
    small_run(SE_ALGO_RANDOM, 2, 16, 8, &random);
    int promoted_total = 0;
    for (int64_t it = 0; it < 2; it++) {
        int m = 0, promoted = 0;
        for (int64_t i = 1; i < casco.n_candidates; i++) {
            const se_candidate *c = &casco.candidates[i];
            if (c->iteration != it)
                continue;
            /* A design found infeasible only in round 2 counts as feasible in round 1. */
            m += c->outcome.feasible || c->rounds == 2;
            promoted += c->rounds == 2;
            assert_true(c->rounds == 1 || c->rounds == 2);
        }
        assert_true(promoted >= (m + 1) / 2);
        assert_true(promoted <= (m + 1) / 2 + (m + 3) / 4);
        promoted_total += promoted;
    }
    assert_true(promoted_total >= 1);
    for (int64_t i = 0; i < random.n_candidates; i++)
        assert_int_equal(random.candidates[i].rounds, 1);
    se_result_free(&casco);
    se_result_free(&random);
}

/* The fusion search a run uses follows one rule (se_run_fusion), and its
 * configuration text -- what --resume compares -- names it: a run with
 * another fusion search is another run; asking for the default is not. */
static void test_fusion_in_config(void **state)
{
    (void)state;
    se_space edge = edge_space(), datacenter;
    as_status st;
    assert_int_equal(se_space_load("datacenter", &datacenter, &st), AS_OK);
    se_workload w = {.model = "alexnet"};
    se_run_options o;
    se_run_options_default(&o);
    assert_int_equal(se_run_fusion(&edge, &o), FU_ALGO_GA);
    assert_int_equal(se_run_fusion(&datacenter, &o), FU_ALGO_ILP);
    char by_default[4096], ga[4096], dp[4096];
    se_run_config_text(&edge, &w, 1, &o, by_default, sizeof by_default);
    assert_non_null(strstr(by_default, "\nfusion ga\n"));
    o.fusion_set = true;
    o.fusion = FU_ALGO_GA;
    se_run_config_text(&edge, &w, 1, &o, ga, sizeof ga);
    assert_string_equal(ga, by_default);
    o.fusion = FU_ALGO_DP;
    se_run_config_text(&edge, &w, 1, &o, dp, sizeof dp);
    assert_string_not_equal(dp, ga);
    o.algo = SE_ALGO_HASCO; /* HASCO+Optimus */
    assert_int_equal(se_run_fusion(&edge, &o), FU_ALGO_DP);
    o.fusion_set = false; /* HASCO */
    assert_int_equal(se_run_fusion(&datacenter, &o), FU_ALGO_NONE);
    fu_algorithm parsed;
    assert_true(se_fusion_parse("ilp", &parsed) && parsed == FU_ALGO_ILP);
    assert_false(se_fusion_parse("fast", &parsed));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engines_seeded_and_distinct),
        cmocka_unit_test(test_guided_engines_beat_random),
        cmocka_unit_test(test_casco_high_fidelity_rule),
        cmocka_unit_test(test_run_same_at_1_and_2_threads),
        cmocka_unit_test(test_successive_halving_rounds),
        cmocka_unit_test(test_fusion_in_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
