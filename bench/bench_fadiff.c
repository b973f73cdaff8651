/*
 * bench_fadiff.c -- FADiff's comparison (seed 002): at equal wall time,
 * FADiff's joint search of mappings and fusion against the fusion GA with
 * the mapper inside and a Bayesian-optimisation baseline with the mapper
 * inside, all over the same joint space, and against layer-by-layer
 * mapping with no fusion, on Gemmini configurations.
 *
 * Per model and configuration it prints each method's best EDP at 1/8,
 * 1/4, 1/2 and all of the time budget (its best-so-far curve; nan: none
 * yet), its final EDP over the layer-by-layer EDP, its groups, and when
 * the final was found (a search overruns its budget by at most what its
 * last unit of work takes: a GA step, a BO proposal, a FADiff step and
 * rounding).
 *
 * The BO baseline: a Gaussian process (search/gp.c) on log EDP over a
 * plan's features -- the working ops in topological order cut into at
 * most 24 equal segments, per segment the fraction of consecutive pairs
 * fused -- proposing, by expected improvement, the best of 64 random
 * valid plans and 64 mutations of the incumbent (the GA's operators).
 * Members are mapped by the heuristic mapper, MAP_BUDGET mappings per
 * tile problem, for both the GA and BO (as `search` does per candidate).
 *
 * usage: bench_fadiff [--seconds S] [--threads T] [model ...]
 *   default: 20 s per method and case; resnet18 mobilenet_v2 vgg16
 *   bert_base gpt2 on gemmini, gemmini with a 32x32 mesh, gemmini with a
 *   64 KiB scratchpad.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff/diff.h"
#include "fusion/fusion_private.h"
#include "search/search.h"

enum { MAP_BUDGET = 1000, BO_INITIAL = 8, BO_CANDIDATES = 64, BO_FEATURES = 24, CHECKPOINTS = 4 };

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A best-so-far curve, sampled at the checkpoints of the budget. */
typedef struct curve {
    double seconds;         /* the budget */
    double at[CHECKPOINTS]; /* best EDP at budget / 8, / 4, / 2, all (NAN: none yet) */
    double best;            /* final (perhaps found after the budget: last_seconds) */
    double last_seconds;    /* when the final was found */
    int groups;
} curve;

static void curve_init(curve *c, double seconds)
{
    c->seconds = seconds;
    c->best = NAN;
    c->last_seconds = 0;
    c->groups = 0;
    for (int i = 0; i < CHECKPOINTS; i++)
        c->at[i] = NAN;
}

/* Record best EDP `edp` reached at `elapsed` seconds. */
static void curve_note(curve *c, double elapsed, double edp, int groups)
{
    if (!(edp < c->best || isnan(c->best)))
        return;
    c->best = edp;
    c->groups = groups;
    for (int i = 0; i < CHECKPOINTS; i++)
        if (elapsed <= c->seconds / (double)(1 << (CHECKPOINTS - 1 - i)) + 1e-9)
            c->at[i] = edp;
    c->last_seconds = elapsed;
}

/* Fill the checkpoints after the last improvement. */
static void curve_finish(curve *c)
{
    for (int i = 1; i < CHECKPOINTS; i++)
        if (isnan(c->at[i]))
            c->at[i] = c->at[i - 1];
}

static void print_curve(const char *model, const char *arch, const char *method, const curve *c,
                        double base)
{
    printf("%-12s %-14s %-9s", model, arch, method);
    for (int i = 0; i < CHECKPOINTS; i++)
        printf(" %11.4g", c->at[i]);
    printf(" %8.3f %6d %7.1f\n", c->best / base, c->groups, c->last_seconds);
}

/* ------------------------------------------------------------------ GA */

static void run_ga(fu_evaluator *e, double seconds, int threads, curve *c)
{
    fu_search_options o;
    fu_search_options_default(&o);
    o.algorithm = FU_ALGO_GA;
    o.objective = FU_OBJ_EDP;
    o.threads = threads;
    o.budget = INT64_MAX / 2;
    as_status st;
    fu_search *s;
    double start = now_seconds();
    if (fu_search_init(&s, e, &o, &st) != AS_OK) {
        fprintf(stderr, "ga: %s\n", st.message);
        return;
    }
    while (now_seconds() - start < seconds && fu_search_step(s, 8)) {
        fu_plan plan;
        fu_plan_cost cost;
        if (fu_search_best(s, &plan, &cost, &st) == AS_OK && cost.valid)
            curve_note(c, now_seconds() - start, cost.edp_J_cycle, cost.n_groups);
        fu_plan_cost_free(&cost);
        fu_plan_free(&plan);
    }
    fu_search_free(s);
}

/* ------------------------------------------------------------------ BO */

typedef struct bo_state {
    fu_evaluator *e;
    const wl_graph *g;
    int32_t n_work;
    int32_t *work; /* working ops, topological */
    int n_points, capacity;
    double *x, *y; /* features, log EDP */
    fu_plan best;
    double best_y;
    bool has_best;
} bo_state;

/* The plan's features (see the top) into f[BO_FEATURES]; returns how
 * many are used. */
static int features(const bo_state *b, const fu_plan *p, double *f)
{
    int32_t pairs = b->n_work - 1;
    int n = pairs < BO_FEATURES ? (pairs > 0 ? pairs : 1) : BO_FEATURES;
    int count[BO_FEATURES] = {0};
    for (int i = 0; i < n; i++)
        f[i] = 0;
    for (int32_t k = 0; k < pairs; k++) {
        int seg = (int)((int64_t)k * n / pairs);
        count[seg]++;
        f[seg] += p->group[b->work[k]] == p->group[b->work[k + 1]];
    }
    for (int i = 0; i < n; i++)
        f[i] = count[i] ? f[i] / count[i] : 0;
    return n;
}

/* Evaluate p and remember it. */
static void bo_observe(bo_state *b, const fu_plan *p, double start, curve *c)
{
    fu_plan_cost cost;
    as_status st;
    if (fu_plan_evaluate(b->e, p, &cost, &st) != AS_OK || !cost.valid) {
        fu_plan_cost_free(&cost);
        return;
    }
    if (b->n_points == b->capacity) {
        b->capacity = b->capacity ? 2 * b->capacity : 64;
        b->x = realloc(b->x, sizeof(double) * BO_FEATURES * (size_t)b->capacity);
        b->y = realloc(b->y, sizeof(double) * (size_t)b->capacity);
    }
    features(b, p, b->x + (size_t)b->n_points * BO_FEATURES);
    double y = log(cost.edp_J_cycle);
    b->y[b->n_points++] = y;
    if (!b->has_best || y < b->best_y) {
        fu_plan_free(&b->best);
        fu_plan_copy(&b->best, p, &st);
        b->best_y = y;
        b->has_best = true;
    }
    curve_note(c, now_seconds() - start, cost.edp_J_cycle, cost.n_groups);
    fu_plan_cost_free(&cost);
}

static void run_bo(fu_evaluator *e, double seconds, curve *c)
{
    const wl_graph *g = fu_evaluator_graph(e);
    bo_state b = {.e = e, .g = g};
    b.work = malloc(sizeof(int32_t) * (size_t)(g->n_ops + 1));
    b.n_work = fu_working_ops(g, b.work);
    as_status st;
    double start = now_seconds();
    uint64_t seed = 1;
    fu_plan p;
    fu_plan_init(&p, g, &st);
    bo_observe(&b, &p, start, c); /* layer by layer first */
    fu_plan_free(&p);
    for (int i = 0; i < BO_INITIAL && now_seconds() - start < seconds; i++) {
        if (fu_ga_random_plan(g, seed++, &p, &st) == AS_OK)
            bo_observe(&b, &p, start, c);
        fu_plan_free(&p);
    }
    int dim = b.n_work > 1 ? (b.n_work - 1 < BO_FEATURES ? b.n_work - 1 : BO_FEATURES) : 1;
    double *packed = malloc(sizeof(double) * BO_FEATURES * 4096);
    while (now_seconds() - start < seconds && b.has_best) {
        int n = b.n_points < 4096 ? b.n_points : 4096;
        for (int i = 0; i < n; i++)
            memcpy(packed + (size_t)i * dim, b.x + (size_t)i * BO_FEATURES, sizeof(double) * dim);
        se_gp *gp;
        if (se_gp_fit(&gp, packed, b.y, n, dim, NULL, &st) != AS_OK)
            break;
        fu_plan pick = {0};
        double pick_ei = -1;
        for (int k = 0; k < 2 * BO_CANDIDATES; k++) {
            fu_plan cand;
            bool changed = true;
            if (k < BO_CANDIDATES) {
                if (fu_ga_random_plan(g, seed++, &cand, &st) != AS_OK)
                    continue;
            } else {
                fu_plan_copy(&cand, &b.best, &st);
                fu_ga_mutate(g, &cand, (fu_mutation)(k % FU_N_MUTATIONS), seed++, &changed, &st);
            }
            double f[BO_FEATURES], mean, var;
            features(&b, &cand, f);
            se_gp_predict(gp, f, &mean, &var);
            double ei = se_expected_improvement(mean, var, b.best_y);
            if (changed && ei > pick_ei) {
                fu_plan_free(&pick);
                pick = cand;
                pick_ei = ei;
            } else {
                fu_plan_free(&cand);
            }
        }
        se_gp_free(gp);
        if (pick_ei >= 0)
            bo_observe(&b, &pick, start, c);
        fu_plan_free(&pick);
    }
    free(packed);
    free(b.x);
    free(b.y);
    free(b.work);
    fu_plan_free(&b.best);
}

/* -------------------------------------------------------------- FADiff */

static void run_fadiff(const wl_graph *g, const arch_spec *a, double seconds, int threads, curve *c)
{
    df_options o;
    df_options_default(&o);
    o.threads = threads;
    o.time_limit_seconds = seconds;
    df_fuse_search *s;
    as_status st;
    if (df_fuse_search_init(&s, g, a, NULL, &o, &st) != AS_OK) {
        fprintf(stderr, "fadiff: %s\n", st.message);
        return;
    }
    df_fuse_search_step(s, INT64_MAX);
    fu_plan plan;
    fu_plan_cost cost;
    int n;
    const double *points = df_fuse_search_curve(s, &n);
    if (df_fuse_search_best(s, &plan, &cost, &st) == AS_OK)
        for (int i = 0; i < n; i++)
            curve_note(c, points[2 * i], points[2 * i + 1], cost.n_groups);
    fu_plan_cost_free(&cost);
    fu_plan_free(&plan);
    df_fuse_search_free(s);
}

/* --------------------------------------------------------------- cases */

/* Gemmini and the two variants the comparison asks for. */
static bool configuration(int k, arch_spec *a, const char **name)
{
    as_status st;
    if (arch_load("gemmini", a, &st) != AS_OK)
        return false;
    switch (k) {
    case 0:
        *name = "gemmini";
        return true;
    case 1:
        *name = "gemmini-32x32";
        a->compute.rows = a->compute.cols = 32;
        break;
    case 2:
        *name = "gemmini-64KiB";
        for (int l = 0; l < a->n_levels; l++)
            if (strcmp(a->level[l].name, "Scratchpad") == 0)
                a->level[l].size_words = 64 * 1024;
        break;
    default:
        return false;
    }
    snprintf(a->name, sizeof a->name, "%s", *name);
    return arch_validate(a, &st) == AS_OK;
}

static void run_case(const char *model, int config, double seconds, int threads)
{
    arch_spec a;
    const char *arch_name;
    as_status st;
    wl_graph *g;
    wl_epilogue_stats es;
    if (!configuration(config, &a, &arch_name) || wl_zoo_build(model, &g, &st) != AS_OK ||
        wl_fuse_epilogues(g, &es, &st) != AS_OK) {
        fprintf(stderr, "%s: cannot set up\n", model);
        return;
    }
    fu_cost_options co;
    fu_cost_options_default(&co);
    co.budget_per_problem = MAP_BUDGET;
    co.search.threads = threads;
    fu_evaluator *e;
    fu_plan base_plan;
    fu_plan_cost base;
    if (fu_evaluator_new(&e, g, &a, &co, &st) != AS_OK ||
        fu_plan_init(&base_plan, g, &st) != AS_OK ||
        fu_plan_evaluate(e, &base_plan, &base, &st) != AS_OK || !base.valid) {
        fprintf(stderr, "%s on %s: %s\n", model, arch_name, st.message);
        return;
    }
    curve layerwise;
    curve_init(&layerwise, seconds);
    curve_note(&layerwise, 0, base.edp_J_cycle, base.n_groups);
    curve_finish(&layerwise);
    print_curve(model, arch_name, "layerwise", &layerwise, base.edp_J_cycle);
    curve c;
    /* Each method starts with a cold mapping cache: equal time, equal start. */
    fu_evaluator_free(e);
    fu_evaluator_new(&e, g, &a, &co, &st);
    curve_init(&c, seconds);
    run_ga(e, seconds, threads, &c);
    curve_finish(&c);
    print_curve(model, arch_name, "ga", &c, base.edp_J_cycle);
    fu_evaluator_free(e);
    fu_evaluator_new(&e, g, &a, &co, &st);
    curve_init(&c, seconds);
    run_bo(e, seconds, &c);
    curve_finish(&c);
    print_curve(model, arch_name, "bo", &c, base.edp_J_cycle);
    curve_init(&c, seconds);
    run_fadiff(g, &a, seconds, threads, &c);
    curve_finish(&c);
    print_curve(model, arch_name, "fadiff", &c, base.edp_J_cycle);
    fflush(stdout);
    fu_plan_cost_free(&base);
    fu_plan_free(&base_plan);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = {"resnet18", "mobilenet_v2", "vgg16", "bert_base",
                                           "gpt2"};
    double seconds = 20;
    int threads = 2, first = 1;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "--seconds") == 0)
            seconds = atof(argv[first + 1]);
        else if (strcmp(argv[first], "--threads") == 0)
            threads = atoi(argv[first + 1]);
        else
            break;
        first += 2;
    }
    int n_models = argc > first ? argc - first : (int)(sizeof defaults / sizeof *defaults);
    const char *const *models = argc > first ? (const char *const *)argv + first : defaults;
    printf("EDP (J x cycles) best so far at 1/8, 1/4, 1/2 and all of %.0f s per method, %d "
           "threads;\nratio = final EDP / layer-by-layer EDP (heuristic mapper, %d mappings per "
           "problem)\n\n",
           seconds, threads, MAP_BUDGET);
    printf("%-12s %-14s %-9s %11s %11s %11s %11s %8s %6s %7s\n", "model", "config", "method", "1/8",
           "1/4", "1/2", "all", "ratio", "groups", "found s");
    for (int i = 0; i < n_models; i++)
        for (int config = 0; config < 3; config++)
            run_case(models[i], config, seconds, threads);
    return 0;
}
