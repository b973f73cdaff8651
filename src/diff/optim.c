/*
 * optim.c -- FADiff's search of one problem's mappings (diff.h, layer 3):
 * descents of Adam on the relaxed loss of one problem (param.c's space),
 * from random starts, each rounded and scored by map_evaluate; anytime
 * and seeded.
 */
#include "diff_private.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define TAPE_NODES (1 << 17)
/* Rounded and scored this many times per descent (the last at its end). */
#define ROUNDINGS 3

struct df_map_search {
    arch_spec arch;
    wl_problem problem;
    df_options o;
    df_layer layer;
    int threads;
    df_tape *tapes; /* one per thread */
    double started;
    int64_t descents;
    bool ended, found;
    map_mapping best;
    map_eval best_eval;
    as_curve curve; /* (seconds, EDP) pairs */
};

void df_options_default(df_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->threads = 1;
    o->descents_per_step = 8;
    o->adam_steps = 150;
    o->learning_rate = 0.15;
    o->max_group_ops = 4;
}

/*
 * The loss at x (values of the variables) with Gumbel noise g, model
 * temperature tau, Gumbel temperature tau_g and penalty weight lambda,
 * recorded on t; its gradient with respect to x into grad.  Returns
 * false when the relaxation does not support the sample (or the tape
 * overflowed).
 */
static bool loss_and_gradient(df_tape *t, const df_layer *L, const wl_problem *p, const double *x,
                              const double *g, double tau, double tau_g, double lambda,
                              double *grad)
{
    df_tape_reset(t);
    t->temperature = tau;
    df_var xv[MAX_VARS];
    for (int i = 0; i < L->n_vars; i++)
        xv[i] = df_const(t, x[i]);
    df_factors f;
    if (!df_layer_factors(t, L, xv, p, &f))
        return false;
    int pick[MAX_CHOICES];
    df_layer_sample(L, x, g, pick);
    map_mapping sk;
    df_layer_skeleton(L, x, pick, &sk);
    df_cost c;
    df_relaxed_cost(t, &L->space.arch, p, &sk, &f, &c);
    if (!c.supported || t->full || !(df_value(t, c.edp) > 0))
        return false;
    df_var base = df_log(t, c.edp);
    df_var loss = df_add(t, base, df_layer_mixture(t, L, p, x, xv, g, tau_g, pick, &sk, &f, base));
    loss = df_add(t, loss, df_mul_c(t, df_layer_penalty(t, L, xv, p, &f, &c), lambda));
    if (t->full || !isfinite(df_value(t, loss)))
        return false;
    df_backward(t, loss);
    for (int i = 0; i < L->n_vars; i++)
        grad[i] = t->adjoint[xv[i]];
    return true;
}

/* ------------------------------------------------------------- descent */

bool df_layer_descend(df_tape *t, const df_layer *L, const wl_problem *p, const df_options *o,
                      as_rng *r, map_mapping *best, map_eval *best_eval)
{
    double x[MAX_VARS], g[MAX_VARS], grad[MAX_VARS], m1[MAX_VARS] = {0}, m2[MAX_VARS] = {0};
    bool found = false;
    df_layer_random_start(L, r, x);
    int steps = o->adam_steps > 0 ? o->adam_steps : 1;
    for (int step = 1; step <= steps; step++) {
        double tau, tau_g, lambda;
        df_schedule((double)(step - 1) / (double)(steps > 1 ? steps - 1 : 1), &tau, &tau_g,
                    &lambda);
        df_gumbel(r, g, L->n_vars);
        if (loss_and_gradient(t, L, p, x, g, tau, tau_g, lambda, grad))
            df_adam(x, grad, m1, m2, L->n_vars, step, o->learning_rate);
        if (step % ((steps + ROUNDINGS - 1) / ROUNDINGS) == 0 || step == steps) {
            map_mapping m;
            map_eval e;
            if (df_layer_round(L, p, x, &m, &e) &&
                (!found || e.edp_J_cycle < best_eval->edp_J_cycle)) {
                *best = m;
                *best_eval = e;
                found = true;
            }
        }
    }
    return found;
}

/* --------------------------------------------------------------- search */

as_code df_map_search_init(df_map_search **out, const arch_spec *a, const wl_problem *p,
                           const df_options *o, as_status *st)
{
    *out = NULL;
    df_map_search *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory for a FADiff search");
    s->arch = *a;
    s->problem = *p;
    if (o)
        s->o = *o;
    else
        df_options_default(&s->o);
    s->threads = s->o.threads > 0 ? s->o.threads : omp_get_max_threads();
    as_code code = df_layer_init(&s->layer, a, p, st);
    if (code == AS_OK && s->layer.n_vars > MAX_VARS)
        code = as_fail(st, AS_EINVAL, "%s: %d FADiff variables exceed %d", a->name, s->layer.n_vars,
                       MAX_VARS);
    if (code == AS_OK && !(s->tapes = calloc((size_t)s->threads, sizeof *s->tapes)))
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's tapes");
    for (int i = 0; code == AS_OK && i < s->threads; i++)
        code = df_tape_init(&s->tapes[i], TAPE_NODES, st);
    if (code != AS_OK) {
        df_map_search_free(s);
        return code;
    }
    s->started = omp_get_wtime();
    *out = s;
    return AS_OK;
}

static void note_best(df_map_search *s, const map_mapping *m, const map_eval *e)
{
    s->found = true;
    s->best = *m;
    s->best_eval = *e;
    df_curve_note(&s->curve, s->started, e->edp_J_cycle);
}

bool df_map_search_step(df_map_search *s, int64_t descents)
{
    enum { CHUNK = 64 };
    while (!s->ended && descents > 0) {
        if ((s->o.stop_flag && *s->o.stop_flag) ||
            (s->o.time_limit_seconds > 0 &&
             omp_get_wtime() - s->started >= s->o.time_limit_seconds)) {
            s->ended = true;
            break;
        }
        int n = descents < s->threads ? (int)descents : s->threads;
        if (n > CHUNK)
            n = CHUNK;
        map_mapping m[CHUNK];
        map_eval e[CHUNK];
        bool found[CHUNK];
#pragma omp parallel for num_threads(s->threads) schedule(static, 1)
        for (int i = 0; i < n; i++) {
            as_rng r = as_rng_stream(s->o.seed, (uint64_t)(s->descents + i), AS_RNG_ADVANCED_ONCE);
            found[i] = df_layer_descend(&s->tapes[omp_get_thread_num()], &s->layer, &s->problem,
                                        &s->o, &r, &m[i], &e[i]);
        }
        for (int i = 0; i < n; i++)
            if (found[i] && (!s->found || e[i].edp_J_cycle < s->best_eval.edp_J_cycle))
                note_best(s, &m[i], &e[i]);
        s->descents += n;
        descents -= n;
    }
    return !s->ended;
}

bool df_map_search_best(const df_map_search *s, map_mapping *mapping, map_eval *eval)
{
    if (!s->found)
        return false;
    if (mapping)
        *mapping = s->best;
    if (eval)
        *eval = s->best_eval;
    return true;
}

int64_t df_map_search_descents(const df_map_search *s)
{
    return s->descents;
}

const double *df_map_search_curve(const df_map_search *s, int *n_points)
{
    *n_points = s->curve.n / 2;
    return s->curve.points;
}

void df_map_search_free(df_map_search *s)
{
    if (!s)
        return;
    for (int i = 0; s->tapes && i < s->threads; i++)
        df_tape_free(&s->tapes[i]);
    free(s->tapes);
    as_curve_free(&s->curve);
    free(s);
}

void df_problem_search(void *user, const arch_spec *a, const wl_problem *p, int threads,
                       int64_t budget, volatile int *stop_flag, map_problem_outcome *out)
{
    df_options o = *(const df_options *)user;
    df_map_search *s;
    memset(out, 0, sizeof *out);
    o.threads = threads;
    o.stop_flag = stop_flag;
    out->mapped = *p;
    out->budget = budget;
    out->code = df_map_search_init(&s, a, p, &o, &out->status);
    if (out->code != AS_OK)
        return;
    int64_t descents = budget > 0                 ? budget
                       : o.time_limit_seconds > 0 ? INT64_MAX
                                                  : o.descents_per_step;
    df_map_search_step(s, descents);
    out->searched = !(stop_flag && *stop_flag);
    out->found = df_map_search_best(s, &out->mapping, &out->eval);
    out->evaluated = df_map_search_descents(s);
    df_map_search_free(s);
}
