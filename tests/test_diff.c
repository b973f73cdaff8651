/*
 * test_diff.c -- FADiff's differentiable cost model (src/diff): the tape's
 * gradients against central finite differences, and the relaxed model at
 * its discrete corners against map_evaluate on random valid mappings of
 * real layers on every preset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "diff/diff.h"
#include "mapping/eval_private.h"
#include "mapping/mapping.h"
#include "mapping/mapspace.h"
#include "workload/workload.h"

static const char *const PRESETS[] = {"gemmini", "eyeriss",    "simba",  "vta",
                                      "tpu_v3",  "shidiannao", "edgetpu"};
static const char *const MODELS[] = {"resnet18", "mobilenet_v2", "bert_base"};

/* ---------------------------------------------------------------- tape */

/* A program of every operation, as a function of x[0..3] (positive). */
static df_var program(df_tape *t, const df_var x[4])
{
    df_var a = df_mul(t, x[0], df_add(t, x[1], df_const(t, 0.5)));
    df_var b = df_div(t, df_exp(t, df_mul_c(t, x[2], 0.3)), df_sq(t, x[3]));
    df_var c = df_max(t, a, b);
    df_var d = df_min(t, df_add_c(t, x[1], 2), df_log(t, df_add_c(t, x[0], 3)));
    df_var e = df_relu(t, df_sub(t, x[2], x[3]), 1.0);
    df_var f = df_add(t, df_ceil(t, df_mul_c(t, x[0], 3.7)), df_floor(t, df_mul_c(t, x[3], 2.3)));
    df_var g = df_add(t, df_round(t, x[1]), df_abs(t, df_sub(t, x[0], x[2])));
    return df_add(t, df_add(t, df_mul(t, c, d), e), df_add(t, df_mul_c(t, f, 0.1), g));
}

static double program_value(df_tape *t, const double at[4])
{
    df_tape_reset(t);
    df_var x[4];
    for (int i = 0; i < 4; i++)
        x[i] = df_const(t, at[i]);
    return df_value(t, program(t, x));
}

static void test_tape_gradients(void **state)
{
    (void)state;
    df_tape t;
    assert_int_equal(df_tape_init(&t, 256, NULL), AS_OK);
    as_rng r = as_rng_stream(7, 0, AS_RNG_FROM_FIRST_OUTPUT);
    for (int trial = 0; trial < 200; trial++) {
        t.temperature = 0.05 + 0.5 * as_rng_unit(&r);
        double at[4];
        for (int i = 0; i < 4; i++)
            at[i] = 0.2 + 3 * as_rng_unit(&r);
        df_tape_reset(&t);
        df_var x[4];
        for (int i = 0; i < 4; i++)
            x[i] = df_const(&t, at[i]);
        df_var y = program(&t, x);
        df_backward(&t, y);
        double grad[4];
        for (int i = 0; i < 4; i++)
            grad[i] = t.adjoint[x[i]];
        for (int i = 0; i < 4; i++) {
            double h = 1e-6, up[4], down[4];
            memcpy(up, at, sizeof up);
            memcpy(down, at, sizeof down);
            up[i] += h;
            down[i] -= h;
            double fd = (program_value(&t, up) - program_value(&t, down)) / (2 * h);
            if (fabs(fd - grad[i]) > 1e-5 * fmax(1, fabs(fd)))
                fail_msg("trial %d x%d: tape %.9g, finite differences %.9g", trial, i, grad[i], fd);
        }
    }
    assert_false(t.full);
    df_tape_free(&t);
}

/* ---------------------------------------------------------- the model */

/* The distinct compute problems of a zoo model. */
static int model_problems(const char *name, wl_problem *out, int max)
{
    wl_graph *g;
    as_status st;
    assert_int_equal(wl_zoo_build(name, &g, &st), AS_OK);
    int n = 0;
    for (int32_t o = 0; o < g->n_ops && n < max; o++) {
        if (!map_op_is_layer(&g->ops[o]) || !map_op_is_compute(&g->ops[o]))
            continue;
        wl_problem p;
        if (wl_op_problem(g, o, &p, &st) != AS_OK)
            continue;
        bool seen = false;
        for (int i = 0; i < n && !seen; i++)
            seen = memcmp(out[i].bound, p.bound, sizeof p.bound) == 0 && out[i].kind == p.kind;
        if (!seen)
            out[n++] = p;
    }
    wl_graph_free(g);
    return n;
}

/* A random valid mapping of p on a (group packing as the mapper sets it);
 * false when none turned up. */
static bool random_valid(const ms_space *s, as_rng *r, const arch_spec *a, const wl_problem *p,
                         map_mapping *m, map_eval *e)
{
    for (int attempt = 0; attempt < 400; attempt++) {
        ms_point pt;
        if (!ms_random(s, r, 0, &pt))
            continue;
        pt.m.group_pack = map_best_group_pack(a, p, &pt.m);
        map_evaluate(a, p, &pt.m, e);
        if (e->validity == MAP_VALID) {
            *m = pt.m;
            return true;
        }
    }
    return false;
}

static void assert_rel(double got, double want, double tol, const char *what, const char *arch,
                       int trial)
{
    if (fabs(got - want) > tol * fmax(fabs(want), 1e-300))
        fail_msg("%s, trial %d: %s relaxed %.17g, exact %.17g", arch, trial, what, got, want);
}

static void test_corners_equal_exact(void **state)
{
    (void)state;
    static wl_problem problems[96];
    int n_problems = 0;
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++)
        n_problems += model_problems(MODELS[i], problems + n_problems, 32);
    df_tape t;
    assert_int_equal(df_tape_init(&t, 1 << 16, NULL), AS_OK);
    as_rng r = as_rng_stream(11, 0, AS_RNG_FROM_FIRST_OUTPUT);
    int checked = 0;
    for (size_t k = 0; k < sizeof PRESETS / sizeof *PRESETS; k++) {
        arch_spec a;
        as_status st;
        assert_int_equal(arch_load(PRESETS[k], &a, &st), AS_OK);
        int per_arch = 0;
        for (int i = 0; i < n_problems; i++) {
            static ms_space s;
            if (ms_init(&s, &a, &problems[i], false, &st) != AS_OK)
                continue;
            for (int trial = 0; trial < 6; trial++) {
                map_mapping m;
                map_eval e;
                if (!random_valid(&s, &r, &a, &problems[i], &m, &e))
                    break;
                df_tape_reset(&t);
                t.temperature = 0;
                df_factors f;
                df_factors_of_mapping(&t, &m, &f);
                df_cost c;
                df_relaxed_cost(&t, &a, &problems[i], &m, &f, &c);
                assert_false(t.full);
                if (!c.supported)
                    fail_msg("%s: unsupported: %s", PRESETS[k], c.why);
                assert_rel(df_value(&t, c.cycles), (double)e.cycles, 1e-9, "cycles", PRESETS[k],
                           trial);
                assert_rel(df_value(&t, c.energy_pJ), e.energy_pJ, 1e-9, "energy", PRESETS[k],
                           trial);
                assert_rel(df_value(&t, c.edp), e.edp_J_cycle, 1e-9, "EDP", PRESETS[k], trial);
                assert_rel(df_value(&t, c.compute_cycles), (double)e.compute_cycles, 1e-9,
                           "compute cycles", PRESETS[k], trial);
                for (int l = 0; l < a.n_levels; l++) {
                    assert_rel(df_value(&t, c.level_cycles[l]), (double)e.level[l].cycles, 1e-9,
                               "level cycles", PRESETS[k], trial);
                    assert_rel(df_value(&t, c.level_energy_pJ[l]) + 1, e.level[l].energy_pJ + 1,
                               1e-9, "level energy", PRESETS[k], trial);
                    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
                        const map_ds_stats *x = &e.level[l].ds[ds];
                        assert_rel(df_value(&t, c.reads[l][ds]) + 1, (double)x->reads + 1, 1e-12,
                                   "reads", PRESETS[k], trial);
                        assert_rel(df_value(&t, c.fills[l][ds]) + 1, (double)x->fills + 1, 1e-12,
                                   "fills", PRESETS[k], trial);
                        assert_rel(df_value(&t, c.updates[l][ds]) + 1, (double)x->updates + 1,
                                   1e-12, "updates", PRESETS[k], trial);
                        assert_rel(df_value(&t, c.ds_energy_pJ[l][ds]) + 1, x->energy_pJ + 1, 1e-9,
                                   "data-space energy", PRESETS[k], trial);
                    }
                }
                per_arch++;
            }
        }
        if (per_arch < 20)
            fail_msg("%s: only %d valid random mappings checked", PRESETS[k], per_arch);
        checked += per_arch;
    }
    printf("relaxed model equals map_evaluate on %d random valid mappings\n", checked);
    df_tape_free(&t);
}

/* log EDP of the relaxed model at log factors u (factors exp(u); entries
 * with free[i] false are constants). */
static double log_edp_at(df_tape *t, const arch_spec *a, const wl_problem *p, const map_mapping *m,
                         const double *u, const bool *free_var, df_var *leaves)
{
    df_tape_reset(t);
    df_factors f;
    int i = 0;
    for (int l = 0; l < ARCH_MAX_LEVELS; l++)
        for (int s = 0; s < 2; s++)
            for (int d = 0; d < WL_NDIMS; d++, i++) {
                df_var leaf = df_const(t, u[i]);
                if (leaves)
                    leaves[i] = leaf;
                df_var factor = free_var[i] ? df_exp(t, leaf) : df_const(t, exp(u[i]));
                if (s)
                    f.spatial[l][d] = factor;
                else
                    f.temporal[l][d] = factor;
            }
    df_cost c;
    df_relaxed_cost(t, a, p, m, &f, &c);
    assert_true(c.supported);
    df_var y = df_log(t, c.edp);
    if (leaves)
        df_backward(t, y);
    return df_value(t, y);
}

#define N_FACTORS (ARCH_MAX_LEVELS * 2 * WL_NDIMS)

static void test_model_gradients(void **state)
{
    (void)state;
    static wl_problem problems[64];
    int n_problems = model_problems("resnet18", problems, 32);
    n_problems += model_problems("bert_base", problems + n_problems, 32);
    df_tape t;
    assert_int_equal(df_tape_init(&t, 1 << 16, NULL), AS_OK);
    as_rng r = as_rng_stream(13, 0, AS_RNG_FROM_FIRST_OUTPUT);
    int checked = 0;
    for (size_t k = 0; k < sizeof PRESETS / sizeof *PRESETS; k++) {
        arch_spec a;
        as_status st;
        assert_int_equal(arch_load(PRESETS[k], &a, &st), AS_OK);
        for (int i = 0; i < n_problems; i += 3) {
            static ms_space s;
            map_mapping m;
            map_eval e;
            if (ms_init(&s, &a, &problems[i], false, &st) != AS_OK ||
                !random_valid(&s, &r, &a, &problems[i], &m, &e))
                continue;
            double u[N_FACTORS];
            bool free_var[N_FACTORS];
            int j = 0;
            for (int l = 0; l < ARCH_MAX_LEVELS; l++)
                for (int sp = 0; sp < 2; sp++)
                    for (int d = 0; d < WL_NDIMS; d++, j++) {
                        int64_t v = l >= m.n_levels ? 1
                                    : sp            ? m.level[l].spatial[d]
                                                    : m.level[l].temporal[d];
                        /* factors of 1 stay 1: a loop appearing is a
                         * discontinuity, not a derivative */
                        free_var[j] = v > 1;
                        u[j] = log((double)v) + (v > 1 ? 0.3 * (2 * as_rng_unit(&r) - 1) : 0);
                    }
            t.temperature = 0.05 + 0.3 * as_rng_unit(&r);
            df_var leaves[N_FACTORS];
            log_edp_at(&t, &a, &problems[i], &m, u, free_var, leaves);
            double grad[N_FACTORS];
            for (j = 0; j < N_FACTORS; j++)
                grad[j] = t.adjoint[leaves[j]];
            for (j = 0; j < N_FACTORS; j++) {
                if (!free_var[j])
                    continue;
                double h = 1e-6, keep = u[j];
                u[j] = keep + h;
                double up = log_edp_at(&t, &a, &problems[i], &m, u, free_var, NULL);
                u[j] = keep - h;
                double down = log_edp_at(&t, &a, &problems[i], &m, u, free_var, NULL);
                u[j] = keep;
                double fd = (up - down) / (2 * h);
                if (fabs(fd - grad[j]) > 1e-5 * fmax(fabs(fd), 1e-2))
                    fail_msg("%s problem %d factor %d: tape %.9g, finite differences %.9g",
                             PRESETS[k], i, j, grad[j], fd);
                checked++;
            }
        }
    }
    printf("gradients equal finite differences on %d factors\n", checked);
    assert_true(checked > 200);
    df_tape_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tape_gradients),
        cmocka_unit_test(test_corners_equal_exact),
        cmocka_unit_test(test_model_gradients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
