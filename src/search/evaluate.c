/*
 * evaluate.c -- what one hardware candidate achieves: its design decoded,
 * checked against the budgets and the models' off-chip footprints, then
 * CASCO's software stack under it -- a fusion search (the GA, objective
 * (off-chip + on-chip energy) x cycles) over the mapper, one per workload.
 *
 * The metrics are per inference.  A design built for a native batch B
 * (FAST) runs each workload at batch B: latency per inference is the
 * batch's latency / B (the reciprocal of throughput), energy per
 * inference the batch's energy / B, perf/TDP = throughput / TDP.  Area
 * and TDP are the design's.  Several workloads combine by the geometric
 * mean (FAST's multi-workload score) or the sum.
 */
#include "search_private.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- models */

#define MAX_BATCHES 16 /* native batches one run meets (1 .. 2^15) */
#define BYTES_PER_MiB 1048576.0
/* Mixed into the run's seed for a candidate's software seed (splitmix64's
 * increment, so that seed 0 does not hash from 0). */
#define SOFTWARE_SEED_SALT 0x9e3779b97f4a7c15ull
/* The mapping budget grows 4x per successive-halving round (the plans
 * 2x): a survivor's layers are mapped to 16x the first round's budget
 * over three rounds -- where mapping quality still pays (the heuristic is
 * within 2-6 % of its own end only after ~16,000 evaluations per problem),
 * while the first round screens cheaply. */
#define MAP_BUDGET_SHIFT_PER_ROUND 2
/* Branch-and-bound nodes of a candidate's ILP fusion (FAST), then CBC's
 * best incumbent: the zoo's models at batch 1 solve in a few nodes, while
 * a large batch on a 32 MiB design (EfficientNet-B0 at 128 on the TPU-v3
 * baseline) would otherwise run for minutes. */
#define SEARCH_ILP_MAX_NODES 1000

typedef struct prepared {
    int64_t batch;
    wl_graph *graph;
    int64_t footprint_bytes;
} prepared;

struct se_models {
    int n;
    const se_workload *workload;
    wl_precision precision;
    bool epilogue_fusion;
    prepared ready[SE_MAX_WORKLOADS][MAX_BATCHES];
    int n_ready[SE_MAX_WORKLOADS];
    omp_lock_t lock;
};

as_code se_models_new(se_models **out, const se_workload *w, int n, wl_precision precision,
                      bool epilogue_fusion, as_status *st)
{
    *out = NULL;
    if (n < 1 || n > SE_MAX_WORKLOADS)
        return as_fail(st, AS_EINVAL, "a search takes 1 to %d models, not %d", SE_MAX_WORKLOADS, n);
    se_models *m = calloc(1, sizeof *m);
    if (!m)
        return as_fail(st, AS_ENOMEM, "out of memory for the models");
    m->n = n;
    m->workload = w;
    m->precision = precision;
    m->epilogue_fusion = epilogue_fusion;
    omp_init_lock(&m->lock);
    *out = m;
    return AS_OK;
}

void se_models_free(se_models *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++)
        for (int b = 0; b < m->n_ready[i]; b++)
            wl_graph_free(m->ready[i][b].graph);
    omp_destroy_lock(&m->lock);
    free(m);
}

/* Deployment as the search assumes it: batch, BN folded into the convs,
 * elementwise ops in their producers' epilogues (or, without epilogue
 * fusion, only marked fusable), the space's precision as storage widths. */
as_code se_models_load(const se_models *m, int i, int64_t batch, wl_graph **out, as_status *st)
{
    wl_onnx_options onnx = {.allow_unknown_ops = m->workload[i].allow_unknown_ops, .batch = batch};
    wl_graph *g = NULL;
    as_code code = wl_model_load(m->workload[i].model, &onnx, &g, st);
    if (code == AS_OK && batch != 1)
        code = wl_set_batch(g, batch, st);
    if (code == AS_OK)
        code = m->epilogue_fusion ? wl_fuse_epilogues(g, NULL, st) : wl_fold_batchnorm(g, NULL, st);
    if (code != AS_OK) {
        wl_graph_free(g);
        return code;
    }
    /* The space's precision is the width its designs store the tensors at
     * (the edge template's fp16 stands for Eyeriss's 16-bit integers, as
     * wl_precision has none): its designs take them as their MACs' own
     * operands, unemulated (docs/precision.md). */
    wl_set_storage_precision(g, m->precision);
    if (!m->epilogue_fusion)
        wl_mark_fusable(g);
    *out = g;
    return AS_OK;
}

as_code se_models_get(se_models *m, int i, int64_t batch, const wl_graph **g,
                      int64_t *footprint_bytes, as_status *st)
{
    as_code code = AS_OK;
    omp_set_lock(&m->lock);
    prepared *found = NULL;
    for (int b = 0; b < m->n_ready[i] && !found; b++)
        if (m->ready[i][b].batch == batch)
            found = &m->ready[i][b];
    if (!found && m->n_ready[i] == MAX_BATCHES)
        code = as_fail(st, AS_EINVAL, "%s: more than %d native batches in one run",
                       m->workload[i].model, MAX_BATCHES);
    if (!found && code == AS_OK) {
        prepared p = {.batch = batch};
        wl_stats stats;
        code = se_models_load(m, i, batch, &p.graph, st);
        if (code == AS_OK)
            code = wl_graph_stats(p.graph, &stats, st);
        if (code == AS_OK) {
            p.footprint_bytes = stats.weight_bytes + stats.max_working_set_bytes;
            found = &m->ready[i][m->n_ready[i]++];
            *found = p;
        } else {
            wl_graph_free(p.graph);
        }
    }
    if (found) {
        *g = found->graph;
        *footprint_bytes = found->footprint_bytes;
    }
    omp_unset_lock(&m->lock);
    return code;
}

/* ------------------------------------------------------------ candidates */

/* The off-chip capacity a design offers in bytes (its DRAM level's size;
 * 0 = unbounded), cleared in a so that the mapper sees an unbounded
 * backing store -- the capacity is checked here, against whole models,
 * which is where it binds. */
static int64_t take_offchip_capacity(arch_spec *a)
{
    arch_level *dram = &a->level[a->n_levels - 1];
    if (dram->cls != ARCH_CLASS_DRAM || dram->size_words == 0)
        return 0;
    int64_t bytes = dram->size_words * (dram->word_bits > 0 ? dram->word_bits : 8) / 8;
    dram->size_words = 0;
    memset(dram->size_words_by_ds, 0, sizeof dram->size_words_by_ds);
    return bytes;
}

/* Seed of a candidate's software search: the run's seed mixed with the
 * point, so equal designs get equal software whenever they are met. */
static uint64_t candidate_seed(const se_sw_options *o, const se_point *p)
{
    return as_hash_bytes(p, sizeof *p, o->seed ^ SOFTWARE_SEED_SALT);
}

/* Start workload k's fusion search on c's design. */
static as_code start_search(se_candidate_eval *c, int k, const se_sw_options *o, as_status *st)
{
    fu_cost_options cost;
    fu_cost_options_default(&cost);
    cost.search.algorithm = MAP_ALGO_HEURISTIC;
    cost.search.threads = 1;
    cost.search.seed = 1;
    cost.budget_per_problem = se_round_map_budget(o, 0);
    cost.shared_mappings = o->shared;
    cost.weights = o->weights;
    /* se_space_decode validated the design; take_offchip_capacity then only
     * made DRAM unbounded, which arch_validate accepts. */
    cost.arch_validated = true;
    as_code code = fu_evaluator_new(&c->evaluator[k], c->graph[k], &c->arch, &cost, st);
    if (code != AS_OK)
        return code;
    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = o->fusion;
    so.objective = FU_OBJ_CASCO;
    /* Same seed, same result: FAST's ILP bounded by CBC's nodes, not by
     * the clock. */
    so.time_limit_seconds = 0;
    so.max_nodes = SEARCH_ILP_MAX_NODES;
    so.seed = candidate_seed(o, &c->seed_point);
    so.threads = 1;
    return fu_search_init(&c->search[k], c->evaluator[k], &so, st);
}

/* Weights asked to stay resident that workload k's design cannot hold
 * make the candidate infeasible, with the reason (mapping.h's residency;
 * by default they are resident only where they fit). */
static void check_weights_fit(se_candidate_eval *c, int k, map_weights weights)
{
    map_residency r;
    as_status why;
    as_status_clear(&why);
    if (map_residency_decide(c->graph[k], &c->arch, weights, &r, &why) == AS_OK)
        return;
    c->outcome.feasible = false;
    snprintf(c->outcome.reason, sizeof c->outcome.reason, "%.250s", why.message);
}

/* Everything after c's design is set (c->arch, c->outcome.feasible and
 * its reason): the batch, area and TDP, the off-chip footprint and
 * weight checks, and one fusion search per workload -- what a candidate
 * decoded from a point and a fixed design share. */
static as_code candidate_start(se_candidate_eval *c, se_models *m, const int *workloads,
                               int n_workloads, const se_sw_options *o, as_status *st)
{
    c->n_workloads = n_workloads;
    memcpy(c->workload, workloads, (size_t)n_workloads * sizeof *workloads);
    c->batch = c->arch.native_batch > 0 ? c->arch.native_batch : 1;
    int64_t capacity = take_offchip_capacity(&c->arch);
    c->outcome.metrics.area_mm2 = arch_area_mm2(&c->arch);
    c->outcome.metrics.power_W = arch_peak_power_W(&c->arch);
    c->sw_value = c->sw_auc = INFINITY;
    for (int k = 0; c->outcome.feasible && k < n_workloads; k++) {
        int64_t footprint;
        as_code code = se_models_get(m, workloads[k], c->batch, &c->graph[k], &footprint, st);
        if (code != AS_OK)
            return code;
        if (capacity > 0 && footprint > capacity) {
            c->outcome.feasible = false;
            snprintf(
                c->outcome.reason, sizeof c->outcome.reason,
                "%s needs %.2f MiB off chip (weights + largest layer), the design has %.2f MiB",
                c->graph[k]->name, footprint / BYTES_PER_MiB, capacity / BYTES_PER_MiB);
        }
    }
    for (int k = 0; c->outcome.feasible && k < n_workloads; k++)
        check_weights_fit(c, k, o->weights);
    for (int k = 0; c->outcome.feasible && k < n_workloads; k++) {
        as_code code = start_search(c, k, o, st);
        if (code != AS_OK)
            return code;
    }
    return AS_OK;
}

as_code se_candidate_init(se_candidate_eval *c, const se_space *s, const se_point *p, se_models *m,
                          const int *workloads, int n_workloads, const se_sw_options *o,
                          as_status *st)
{
    memset(c, 0, sizeof *c);
    c->point = *p;
    c->seed_point = *p;
    /* Around a design, the software seed follows the offset from the
     * centre: the centre itself gets a fixed design's (point zero), so that
     * the space's baseline is the design's own numbers (search --arch). */
    for (int i = 0; s->template_kind == SE_TEMPLATE_AROUND && i < s->n_params; i++)
        c->seed_point.index[i] -= s->baseline[i];
    se_space_decode(s, p, &c->arch, &c->outcome.feasible, c->outcome.reason,
                    sizeof c->outcome.reason);
    return candidate_start(c, m, workloads, n_workloads, o, st);
}

as_code se_candidate_init_arch(se_candidate_eval *c, const arch_spec *a, se_models *m,
                               const int *workloads, int n_workloads, const se_sw_options *o,
                               as_status *st)
{
    memset(c, 0, sizeof *c);
    c->arch = *a;
    as_status why;
    as_status_clear(&why);
    c->outcome.feasible = arch_validate(a, &why) == AS_OK;
    if (!c->outcome.feasible)
        snprintf(c->outcome.reason, sizeof c->outcome.reason, "%.250s", why.message);
    return candidate_start(c, m, workloads, n_workloads, o, st);
}

void se_candidate_release(se_candidate_eval *c)
{
    for (int k = 0; k < c->n_workloads; k++) {
        fu_search_free(c->search[k]);
        fu_evaluator_free(c->evaluator[k]);
        fu_plan_free(&c->plan[k]);
        fu_plan_cost_free(&c->cost[k]);
        c->search[k] = NULL;
        c->evaluator[k] = NULL;
    }
}

/* Inferences per second per watt of TDP at latency_s per inference (0
 * when either is not positive). */
static double perf_per_tdp(double latency_s, double power_W)
{
    return latency_s > 0 && power_W > 0 ? 1.0 / (latency_s * power_W) : 0;
}

void se_metrics_of_plan(const se_candidate_eval *c, const fu_plan_cost *cost, se_metrics *out)
{
    double batch = (double)c->batch;
    out->area_mm2 = c->outcome.metrics.area_mm2;
    out->power_W = c->outcome.metrics.power_W;
    out->latency_s = cost->latency_s / batch;
    out->energy_pJ = cost->energy_pJ / batch;
    out->edp_Js = out->energy_pJ * 1e-12 * out->latency_s;
    out->perf_per_tdp = perf_per_tdp(out->latency_s, out->power_W);
}

/*
 * Area under a search's best-so-far curve, normalised: the mean of
 * value / first finite value over the finite points.  1 for a search that
 * never improved, smaller the faster it fell -- CASCO's second test of a
 * promising candidate.  +inf when no point is finite.
 */
static double normalised_auc(const double *curve, int n)
{
    double first = INFINITY, sum = 0;
    int finite = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(curve[i]))
            continue;
        if (!finite)
            first = curve[i];
        sum += curve[i] / first;
        finite++;
    }
    return finite ? sum / finite : INFINITY;
}

/* Combine per-workload values: the geometric mean or the sum (+inf
 * stays +inf). */
static double combine(const double *v, int n, se_aggregate agg)
{
    double acc = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            return INFINITY;
        acc += agg == SE_AGG_GEOMEAN ? log(v[i]) : v[i];
    }
    return agg == SE_AGG_GEOMEAN ? exp(acc / n) : acc;
}

int64_t se_round_plans(const se_sw_options *o, int r)
{
    return o->plans >> (o->rounds - 1 - r);
}

int64_t se_round_map_budget(const se_sw_options *o, int r)
{
    int shift = MAP_BUDGET_SHIFT_PER_ROUND * (o->rounds - 1 - r);
    int64_t budget = shift < 62 ? o->map_budget >> shift : 0;
    return budget > 0 ? budget : 1;
}

/* Step workload k's search in chunks up to budget plans in total; a
 * search that is not anytime (none, DP, ILP) runs to its end at once. */
static void step_to(se_candidate_eval *c, int k, int64_t budget, const se_sw_options *o)
{
    if (o->fusion != FU_ALGO_GA) {
        fu_search_step(c->search[k], INT64_MAX);
        return;
    }
    int64_t spent = c->spent;
    while (spent < budget) {
        int64_t chunk = budget - spent < o->chunk ? budget - spent : o->chunk;
        if (!fu_search_step(c->search[k], chunk))
            break;
        spent += chunk;
    }
}

/* Round r of the schedule for every workload: the mapping budget raised
 * (the searches' plans scored again on the better mappings), then the
 * fusion searches stepped on to the round's plans. */
static as_code run_round(se_candidate_eval *c, int r, const se_sw_options *o, as_status *st)
{
    for (int k = 0; k < c->n_workloads; k++) {
        int64_t before = se_round_map_budget(o, r > 0 ? r - 1 : 0);
        if (se_round_map_budget(o, r) != before) {
            as_code code =
                fu_evaluator_raise_budget(c->evaluator[k], se_round_map_budget(o, r), st);
            if (code == AS_OK)
                code = fu_search_rescore(c->search[k], st);
            if (code != AS_OK)
                return code;
        }
        step_to(c, k, se_round_plans(o, r), o);
    }
    c->spent = se_round_plans(o, r);
    c->rounds_done = r + 1;
    return AS_OK;
}

void se_candidate_workload_metrics(const se_candidate_eval *c, int k, se_aggregate agg,
                                   se_metrics *out)
{
    se_metrics m;
    se_metrics_of_plan(c, &c->cost[k], &m);
    out->area_mm2 = c->outcome.metrics.area_mm2;
    out->power_W = c->outcome.metrics.power_W;
    out->latency_s = combine(&m.latency_s, 1, agg);
    out->energy_pJ = combine(&m.energy_pJ, 1, agg);
    out->edp_Js = combine(&m.edp_Js, 1, agg);
    out->perf_per_tdp = perf_per_tdp(out->latency_s, out->power_W);
}

as_code se_candidate_advance(se_candidate_eval *c, int round, se_aggregate agg,
                             const se_sw_options *o, as_status *st)
{
    if (!c->outcome.feasible)
        return AS_OK;
    for (int r = c->rounds_done; r <= round; r++) {
        as_code code = run_round(c, r, o, st);
        if (code != AS_OK)
            return code;
    }
    double value[SE_MAX_WORKLOADS] = {0}, auc[SE_MAX_WORKLOADS] = {0};
    double latency[SE_MAX_WORKLOADS] = {0}, energy[SE_MAX_WORKLOADS] = {0};
    double edp[SE_MAX_WORKLOADS] = {0};
    for (int k = 0; k < c->n_workloads; k++) {
        int n_points;
        const double *curve = fu_search_curve(c->search[k], &n_points);
        value[k] = n_points ? curve[n_points - 1] : INFINITY;
        auc[k] = normalised_auc(curve, n_points);
        fu_plan_free(&c->plan[k]);
        fu_plan_cost_free(&c->cost[k]);
        as_status why;
        as_status_clear(&why);
        as_code code = fu_search_best(c->search[k], &c->plan[k], &c->cost[k], &why);
        if (code == AS_EINVAL) { /* the ILP's: a layer of this design has no valid mapping */
            c->outcome.feasible = false;
            snprintf(c->outcome.reason, sizeof c->outcome.reason, "%.250s", why.message);
            return AS_OK;
        }
        if (code != AS_OK)
            return as_fail(st, code, "%s", why.message);
        if (!c->cost[k].valid) {
            c->outcome.feasible = false;
            snprintf(c->outcome.reason, sizeof c->outcome.reason, "%s: no valid fusion plan: %s",
                     c->graph[k]->name, c->cost[k].reason);
        }
        se_metrics m;
        se_metrics_of_plan(c, &c->cost[k], &m);
        latency[k] = m.latency_s;
        energy[k] = m.energy_pJ;
        edp[k] = m.edp_Js;
    }
    c->sw_value = combine(value, c->n_workloads, agg);
    c->sw_auc = combine(auc, c->n_workloads, SE_AGG_GEOMEAN);
    c->outcome.metrics.latency_s = combine(latency, c->n_workloads, agg);
    c->outcome.metrics.energy_pJ = combine(energy, c->n_workloads, agg);
    c->outcome.metrics.edp_Js = combine(edp, c->n_workloads, agg);
    c->outcome.metrics.perf_per_tdp =
        perf_per_tdp(c->outcome.metrics.latency_s, c->outcome.metrics.power_W);
    return AS_OK;
}

/* ---------------------------------------------------------------- JSON */

json_t *se_candidate_workload_json(const se_candidate_eval *c, int k)
{
    const fu_plan_cost *cost = &c->cost[k];
    se_metrics m;
    se_metrics_of_plan(c, cost, &m);
    json_t *w = fu_plan_json(c->evaluator[k], &c->plan[k], cost, &(as_status){0});
    bool ok = w && as_json_put(w, "model", as_json_string(c->graph[k]->name)) &&
              as_json_put(w, "batch", json_integer(c->batch)) &&
              as_json_put(w, "valid", json_boolean(cost->valid)) &&
              as_json_put(w, "latency_s", as_json_number(m.latency_s)) &&
              as_json_put(w, "energy_pJ", as_json_number(m.energy_pJ)) &&
              as_json_put(w, "cycles", json_integer(cost->cycles)) &&
              as_json_put(w, "dram_bytes", json_integer(cost->dram_bytes));
    if (!ok) {
        json_decref(w);
        return NULL;
    }
    return w;
}

char *se_candidate_detail_json(const se_candidate_eval *c, as_status *st)
{
    json_t *detail = json_object(), *workloads = json_array();
    bool ok = detail && as_json_put(detail, "workloads", json_incref(workloads));
    for (int k = 0; ok && c->outcome.feasible && k < c->n_workloads; k++)
        ok = as_json_push(workloads, se_candidate_workload_json(c, k));
    char *text = ok ? as_json_text(detail, 0) : NULL;
    json_decref(workloads);
    json_decref(detail);
    if (!text)
        as_fail(st, AS_ENOMEM, "out of memory for a candidate's details");
    return text;
}
