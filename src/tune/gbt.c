/*
 * gbt.c -- an ensemble of gradient-boosted regression trees on XGBoost's
 * C API: the cost model of the AutoTVM-style baseline and of DCO-Comp's
 * confidence sampling.
 *
 * Each member is one XGBoost booster trained on a bootstrap resample of
 * the data (rows drawn with replacement, as many as there are, from
 * stream (seed, member)); a lone member trains on the data as given,
 * since a single resample would only throw rows away.  The ensemble's
 * mean ranks configurations and the members' standard deviation is its
 * spread: wide where the resamples disagree, i.e. away from the data.
 *
 * Booster parameters are those of AutoTVM's XGBoostCostModel with its
 * regression loss (tvm/python/tvm/autotvm/tuner/xgboost_cost_model.py):
 * max_depth 3, gamma 1e-4, min_child_weight 1, subsample 1, eta 0.3,
 * lambda 1, alpha 0, squared error.  AutoTVM stops boosting on a recall
 * metric; here the caller gives the number of rounds.  Determinism: one
 * thread per booster, the exact tree method, a fixed XGBoost seed, and
 * features passed as float (XGBoost's own type) in one fixed row order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "tune_private.h"

struct tn_gbt {
    int n_members;
    int d;
    BoosterHandle member[];
};

/* The booster parameters (see the header comment). */
static const char *const gbt_params[][2] = {
    {"booster", "gbtree"},
    {"objective", "reg:squarederror"},
    {"tree_method", "exact"},
    {"nthread", "1"},
    {"verbosity", "0"},
    {"max_depth", "3"},
    {"eta", "0.3"},
    {"gamma", "0.0001"},
    {"min_child_weight", "1"},
    {"subsample", "1"},
    {"lambda", "1"},
    {"alpha", "0"},
};

/* Record XGBoost's last error in st, naming the call that failed: its
 * first line (the rest is a stack trace; a status is one line). */
static as_code gbt_fail(as_status *st, const char *call)
{
    const char *text = XGBGetLastError();
    int first_line = (int)strcspn(text, "\r\n");
    return as_fail(st, AS_EINTERNAL, "tune/gbt: XGBoost %s failed: %.*s", call, first_line, text);
}

/* A DMatrix of the n rows rows[0..n) of x (all rows in order when rows is
 * NULL), with labels from y when y is not NULL. */
static as_code gbt_dmatrix(const double *x, const double *y, const int64_t *rows, int64_t n, int d,
                           DMatrixHandle *out, as_status *st)
{
    *out = NULL;
    float *data = malloc((size_t)n * (size_t)d * sizeof *data);
    float *label = y ? malloc((size_t)n * sizeof *label) : NULL;
    if (!data || (y && !label)) {
        free(data);
        free(label);
        return as_fail(st, AS_ENOMEM, "tune/gbt: out of memory for %lld rows", (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t src = rows ? rows[i] : i;
        for (int j = 0; j < d; j++)
            data[i * d + j] = (float)x[src * d + j];
        if (y)
            label[i] = (float)y[src];
    }
    as_code rc = AS_OK;
    if (XGDMatrixCreateFromMat_omp(data, (bst_ulong)n, (bst_ulong)d, NAN, out, 1) != 0)
        rc = gbt_fail(st, "XGDMatrixCreateFromMat_omp");
    else if (y && XGDMatrixSetFloatInfo(*out, "label", label, (bst_ulong)n) != 0)
        rc = gbt_fail(st, "XGDMatrixSetFloatInfo(label)");
    free(data);
    free(label);
    if (rc != AS_OK && *out) {
        XGDMatrixFree(*out);
        *out = NULL;
    }
    return rc;
}

/* Train one booster on dtrain for `rounds` rounds. */
static as_code gbt_train(DMatrixHandle dtrain, int rounds, uint64_t seed, BoosterHandle *out,
                         as_status *st)
{
    if (XGBoosterCreate(&dtrain, 1, out) != 0)
        return gbt_fail(st, "XGBoosterCreate");
    char seed_text[24];
    snprintf(seed_text, sizeof seed_text, "%u", (unsigned)(seed & 0x7fffffffu));
    for (size_t i = 0; i < sizeof gbt_params / sizeof gbt_params[0]; i++)
        if (XGBoosterSetParam(*out, gbt_params[i][0], gbt_params[i][1]) != 0)
            return gbt_fail(st, "XGBoosterSetParam");
    if (XGBoosterSetParam(*out, "seed", seed_text) != 0)
        return gbt_fail(st, "XGBoosterSetParam(seed)");
    for (int r = 0; r < rounds; r++)
        if (XGBoosterUpdateOneIter(*out, r, dtrain) != 0)
            return gbt_fail(st, "XGBoosterUpdateOneIter");
    return AS_OK;
}

/* Bootstrap row indices of member `member`: n draws with replacement. */
static void gbt_bootstrap(int64_t *rows, int64_t n, uint64_t seed, int member)
{
    as_rng rng = as_rng_stream(seed, (uint64_t)member, AS_RNG_ADVANCED_ONCE);
    for (int64_t i = 0; i < n; i++)
        rows[i] = as_rng_below(&rng, n);
}

/* Fit n_members boosters (see tune_private.h and the header comment).
 * XGBoost's logging is silenced for the calling thread (its global
 * configuration is per thread). */
as_code tn_gbt_fit(tn_gbt **out, const double *x, const double *y, int64_t n, int d, int n_members,
                   int rounds, uint64_t seed, as_status *st)
{
    *out = NULL;
    if (n < 1 || d < 1 || n_members < 1 || rounds < 1)
        return as_fail(st, AS_EINVAL, "tune/gbt: %lld rows, %d features, %d members, %d rounds",
                       (long long)n, d, n_members, rounds);
    if (XGBSetGlobalConfig("{\"verbosity\": 0}") != 0)
        return gbt_fail(st, "XGBSetGlobalConfig");
    tn_gbt *g = calloc(1, sizeof *g + (size_t)n_members * sizeof g->member[0]);
    int64_t *rows = n_members > 1 ? malloc((size_t)n * sizeof *rows) : NULL;
    if (!g || (n_members > 1 && !rows)) {
        free(g);
        free(rows);
        return as_fail(st, AS_ENOMEM, "tune/gbt: out of memory for %d members", n_members);
    }
    g->n_members = n_members;
    g->d = d;
    as_code rc = AS_OK;
    for (int m = 0; m < n_members && rc == AS_OK; m++) {
        if (rows)
            gbt_bootstrap(rows, n, seed, m);
        DMatrixHandle dtrain;
        rc = gbt_dmatrix(x, y, rows, n, d, &dtrain, st);
        if (rc == AS_OK) {
            rc = gbt_train(dtrain, rounds, seed + (uint64_t)m, &g->member[m], st);
            XGDMatrixFree(dtrain);
        }
    }
    free(rows);
    if (rc != AS_OK) {
        tn_gbt_free(g);
        return rc;
    }
    *out = g;
    return AS_OK;
}

/* Mean and (population) standard deviation over members of the
 * predictions for n rows of x. */
as_code tn_gbt_predict(const tn_gbt *g, const double *x, int64_t n, double *mean, double *spread,
                       as_status *st)
{
    if (n < 1)
        return AS_OK;
    DMatrixHandle dm;
    as_code rc = gbt_dmatrix(x, NULL, NULL, n, g->d, &dm, st);
    if (rc != AS_OK)
        return rc;
    for (int64_t i = 0; i < n; i++) {
        mean[i] = 0.0;
        if (spread)
            spread[i] = 0.0;
    }
    for (int m = 0; m < g->n_members && rc == AS_OK; m++) {
        bst_ulong len = 0;
        const float *pred = NULL;
        if (XGBoosterPredict(g->member[m], dm, 0, 0, 0, &len, &pred) != 0) {
            rc = gbt_fail(st, "XGBoosterPredict");
        } else if ((int64_t)len != n) {
            rc = as_fail(st, AS_EINTERNAL, "tune/gbt: %llu predictions for %lld rows",
                         (unsigned long long)len, (long long)n);
        } else {
            for (int64_t i = 0; i < n; i++) {
                mean[i] += pred[i];
                if (spread)
                    spread[i] += (double)pred[i] * pred[i];
            }
        }
    }
    XGDMatrixFree(dm);
    for (int64_t i = 0; i < n && rc == AS_OK; i++) {
        mean[i] /= g->n_members;
        if (spread) {
            double var = spread[i] / g->n_members - mean[i] * mean[i];
            spread[i] = var > 0.0 ? sqrt(var) : 0.0;
        }
    }
    return rc;
}

/* Free every booster of g (g may be NULL or partly built). */
void tn_gbt_free(tn_gbt *g)
{
    if (!g)
        return;
    for (int m = 0; m < g->n_members; m++)
        if (g->member[m])
            XGBoosterFree(g->member[m]);
    free(g);
}
