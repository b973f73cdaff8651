/*
 * surrogate.c -- what the engines share: the learned cost model of a
 * layer's measurements (tn_surrogate) and the bookkeeping of proposals
 * (points already picked, random unmeasured points).
 */
#include <stdlib.h>
#include <string.h>

#include "tune_private.h"

as_code tn_surrogate_init(tn_surrogate *s, const tn_space *sp, int max_points, as_status *st)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->max_points = max_points;
    s->feat = malloc(sizeof(double) * (size_t)max_points * TN_FEATURES);
    if (!s->feat)
        return as_fail(st, AS_ENOMEM, "tune: cost model scratch of %d points", max_points);
    return AS_OK;
}

void tn_surrogate_free(tn_surrogate *s)
{
    if (s->model)
        tn_gbt_free(s->model);
    free(s->x);
    free(s->y);
    free(s->feat);
    memset(s, 0, sizeof *s);
}

bool tn_surrogate_fit(tn_surrogate *s, const tn_history *h, int n_members, int rounds,
                      uint64_t seed)
{
    if (s->model)
        tn_gbt_free(s->model);
    s->model = NULL;
    s->h = h;
    if (h->best < 0 || h->n < 2)
        return false;
    if (h->n > s->cap) {
        double *x = realloc(s->x, sizeof(double) * (size_t)h->n * TN_FEATURES);
        if (x)
            s->x = x;
        double *y = realloc(s->y, sizeof(double) * (size_t)h->n);
        if (y)
            s->y = y;
        if (!x || !y)
            return false;
        s->cap = h->n;
    }
    s->best_gflops = h->trials[h->best].result.gflops;
    for (int64_t i = 0; i < h->n; i++) {
        const tn_trial *t = &h->trials[i];
        tn_space_features(s->sp, &t->point, s->x + i * TN_FEATURES);
        s->y[i] = t->result.valid ? t->result.gflops / s->best_gflops : 0;
    }
    as_status st;
    as_status_clear(&st);
    if (tn_gbt_fit(&s->model, s->x, s->y, h->n, TN_FEATURES, n_members, rounds, seed, &st)) {
        s->model = NULL;
        return false;
    }
    return true;
}

bool tn_surrogate_predict(tn_surrogate *s, const tn_point *pts, int n, double *mean, double *spread)
{
    if (!s->model || n > s->max_points)
        return false;
    for (int i = 0; i < n; i++)
        tn_space_features(s->sp, &pts[i], s->feat + (size_t)i * TN_FEATURES);
    as_status st;
    as_status_clear(&st);
    return tn_gbt_predict(s->model, s->feat, n, mean, spread, &st) == AS_OK;
}

bool tn_points_contain(const tn_point *pts, int n, const tn_point *pt)
{
    for (int i = 0; i < n; i++)
        if (tn_point_equal(&pts[i], pt))
            return true;
    return false;
}

int tn_fill_random(const tn_space *sp, const tn_history *h, tn_point *out, int n, int max,
                   int draws, as_rng *rng)
{
    for (int tries = draws; n < max && tries > 0; tries--) {
        tn_point pt;
        tn_space_random(sp, rng, &pt);
        if (tn_history_find(h, &pt) < 0 && !tn_points_contain(out, n, &pt))
            out[n++] = pt;
    }
    return n;
}
