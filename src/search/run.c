/*
 * run.c -- a co-design run: the engine proposes a batch of hardware
 * candidates, each gets its software search (evaluate.c), the engine
 * observes the results, and the Pareto front grows; every completed
 * round of every candidate goes to the store at once.
 *
 * Successive halving (CASCO's engine only): the batch's candidates get
 * their software budget in rounds that raise it, budget_r = B / 2^(R-1-r)
 * plans in total after round r and M / 4^(R-1-r) mappings per tile
 * problem (evaluate.c; the mapper's searches go on where they stopped).  After each round but the
 * last, the candidates kept are the best half by terminal value (the fusion objective reached)
 * together with the best quarter by the normalised area under their best-so-far curves -- CASCO's
 * modified rule, which gives fast-falling searches a second chance.  A dropped candidate keeps the
 * value its shorter search reached: a real design with real, if less tuned, software.  Other
 * engines give every candidate B in one round, and so does CASCO when the fusion search is not
 * anytime (none, DP, ILP run to their end whatever B: se_run_fusion).
 *
 * Resumption: the run is a deterministic function of its configuration
 * and seed, so a resumed run replays it, taking every (iteration, slot,
 * round) found in the store instead of computing it.  A candidate whose
 * later round is missing starts its searches again and steps them to the
 * new budget; the fixed step schedule (search_private.h) makes that equal
 * to having continued.  Work in flight at the kill is redone; nothing
 * stored is computed or written twice.
 *
 * Hypervolume: objectives are compared in log10 space (they span decades)
 * against a reference point one decade above the baseline design's
 * objectives (or the first feasible candidate's when the baseline is
 * infeasible), so that engines on the same space and models share it.
 */
#include "search_private.h"

#include "../store/store.h"

#include <math.h>
#include <stddef.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS_PER_ROUND0 8 /* search steps in the first round's budget */

/* ---------------------------------------------------------- objectives */

static const char *const OBJECTIVE_NAMES[SE_N_OBJECTIVES] = {
    "latency", "energy", "area", "edp", "perf_per_tdp",
};

const char *se_objective_name(se_objective o)
{
    return o >= 0 && o < SE_N_OBJECTIVES ? OBJECTIVE_NAMES[o] : "?";
}

bool se_objective_parse(const char *s, se_objective *out)
{
    for (int o = 0; o < SE_N_OBJECTIVES; o++)
        if (strcmp(s, OBJECTIVE_NAMES[o]) == 0) {
            *out = (se_objective)o;
            return true;
        }
    return false;
}

static const struct {
    const char *name;
    size_t offset; /* of the double in se_metrics */
} METRIC_FIELDS[SE_N_METRICS] = {
    {"latency_s", offsetof(se_metrics, latency_s)},
    {"energy_pJ", offsetof(se_metrics, energy_pJ)},
    {"area_mm2", offsetof(se_metrics, area_mm2)},
    {"power_W", offsetof(se_metrics, power_W)},
    {"edp", offsetof(se_metrics, edp_Js)},
    {"perf_per_tdp", offsetof(se_metrics, perf_per_tdp)},
};

const char *se_metric_name(int i)
{
    return METRIC_FIELDS[i].name;
}

double se_metric_value(const se_metrics *m, int i)
{
    return *(const double *)((const char *)m + METRIC_FIELDS[i].offset);
}

void se_metrics_from_json(const json_t *o, se_metrics *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < SE_N_METRICS; i++)
        *(double *)((char *)m + METRIC_FIELDS[i].offset) =
            json_number_value(json_object_get(o, METRIC_FIELDS[i].name));
}

double se_metrics_objective(const se_metrics *m, se_objective o)
{
    switch (o) {
    case SE_OBJ_LATENCY:
        return m->latency_s;
    case SE_OBJ_ENERGY:
        return m->energy_pJ;
    case SE_OBJ_AREA:
        return m->area_mm2;
    case SE_OBJ_EDP:
        return m->edp_Js;
    case SE_OBJ_TDP_SECONDS:
        return m->latency_s * m->power_W;
    default:
        return NAN;
    }
}

void se_run_options_default(se_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->algo = SE_ALGO_CASCO;
    o->seed = 1;
    o->budget = 48;
    o->batch = 8;
    o->threads = 1;
    o->n_objectives = 3;
    o->objectives[0] = SE_OBJ_LATENCY;
    o->objectives[1] = SE_OBJ_ENERGY;
    o->objectives[2] = SE_OBJ_AREA;
    o->scalar = SE_OBJ_EDP;
    o->aggregate = SE_AGG_GEOMEAN;
    o->sw_budget = 2000;
    o->sh_rounds = 3;
    o->map_budget = 4000;
}

static const char *const FUSION_NAMES[] = {
    [FU_ALGO_NONE] = "none", [FU_ALGO_GA] = "ga", [FU_ALGO_DP] = "dp", [FU_ALGO_ILP] = "ilp"};
enum { N_FUSION = (int)(sizeof FUSION_NAMES / sizeof FUSION_NAMES[0]) };

const char *se_fusion_name(fu_algorithm a)
{
    return (unsigned)a < N_FUSION ? FUSION_NAMES[a] : "?";
}

bool se_fusion_parse(const char *s, fu_algorithm *out)
{
    for (int a = 0; a < N_FUSION; a++)
        if (strcmp(s, FUSION_NAMES[a]) == 0) {
            *out = (fu_algorithm)a;
            return true;
        }
    return false;
}

fu_algorithm se_run_fusion(const se_space *s, const se_run_options *o)
{
    if (o->fusion_set)
        return o->fusion;
    if (o->algo == SE_ALGO_HASCO)
        return FU_ALGO_NONE;
    return s && s->template_kind == SE_TEMPLATE_DATAPATH ? FU_ALGO_ILP : FU_ALGO_GA;
}

void se_run_config_text(const se_space *s, const se_workload *workloads, int n_workloads,
                        const se_run_options *o, char *buf, size_t size)
{
    /* Everything that changes the result, and nothing else (not the
     * thread count, the store or the progress display).  The space enters
     * by name and by a digest of its whole definition. */
    uint64_t space_digest = se_space_digest(s);
    int n = snprintf(
        buf, size,
        "accelsearch search 1\nspace %s %016llx\nalgo %s\nbudget %lld\nbatch %d\n"
        "sw_budget %lld\nsh_rounds %d\nmap_budget %lld\nweights %s\naggregate %s\nscalar %s\n"
        "epilogue_fusion %s\nfusion %s\nobjectives",
        s->name, (unsigned long long)space_digest, se_algo_name(o->algo), (long long)o->budget,
        o->batch, (long long)o->sw_budget, o->sh_rounds, (long long)o->map_budget,
        map_weights_name(o->weights), o->aggregate == SE_AGG_GEOMEAN ? "geomean" : "sum",
        se_objective_name(o->scalar), o->no_epilogue_fusion ? "off" : "on",
        se_fusion_name(se_run_fusion(s, o)));
    for (int k = 0; k < o->n_objectives && n >= 0 && (size_t)n < size; k++)
        n += snprintf(buf + n, size - (size_t)n, " %s", se_objective_name(o->objectives[k]));
    for (int i = 0; i < n_workloads && n >= 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, "\n%s %s",
                      workloads[i].validation ? "validate" : "model", workloads[i].model);
    /* A space around a design: what rebuilds it (the design as given last,
     * since a path may hold spaces); the digest above checks its content. */
    const se_around *a = &s->around;
    if (s->template_kind == SE_TEMPLATE_AROUND && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "\naround %d %.17g %.17g %s %s", a->range,
                 a->max_area_mm2, a->max_power_W, a->vary, a->source);
}

/* ------------------------------------------------------------ the store */

/* The rows of a run being resumed: the store's own records, kept without
 * their JSON (which the replay does not read). */
typedef struct stored_rows {
    store_row *v;
    int64_t n, cap;
    bool failed;
} stored_rows;

/* store_each_row visitor: append (rows arrive in key order). */
static bool collect_row(void *user, const store_row *row)
{
    stored_rows *rows = user;
    if (!as_vec_reserve(&rows->v, &rows->cap, rows->n + 1, sizeof *rows->v)) {
        rows->failed = true;
        return false;
    }
    store_row *r = &rows->v[rows->n++];
    *r = *row;
    r->params_json = r->detail_json = NULL; /* valid during the visit only */
    return true;
}

/* The stored row for (iteration, slot, round), or NULL (binary search:
 * the store returns rows in key order). */
static const store_row *find_row(const stored_rows *rows, int64_t iteration, int32_t slot,
                                 int32_t round)
{
    int64_t lo = 0, hi = rows->n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        const store_row *r = &rows->v[mid];
        int cmp = r->iteration != iteration ? (r->iteration < iteration ? -1 : 1)
                  : r->slot != slot         ? (r->slot < slot ? -1 : 1)
                  : r->round != round       ? (r->round < round ? -1 : 1)
                                            : 0;
        if (cmp == 0)
            return r;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ------------------------------------------------------------------ run */

/* A candidate's per-workload results at full budget (training workloads,
 * in r->train order), kept while it is on the front -- so that the chosen
 * design's results come from the search instead of searching again. */
typedef struct kept_result {
    const wl_graph *graph[SE_MAX_WORKLOADS];
    fu_plan plan[SE_MAX_WORKLOADS];
    fu_plan_cost cost[SE_MAX_WORKLOADS];
    se_metrics metrics[SE_MAX_WORKLOADS]; /* each workload alone */
    json_t *plan_json[SE_MAX_WORKLOADS];  /* se_candidate_workload_json's */
} kept_result;

typedef struct run {
    const se_space *space;   /* NULL when evaluating one fixed design (se_run_design) */
    const arch_spec *design; /*   that design, else NULL */
    const se_run_options *o;
    se_models *models;
    int n_train;
    int train[SE_MAX_WORKLOADS];
    se_sw_options sw;
    int rounds;           /* successive-halving rounds of this engine */
    int64_t final_budget; /* plans per workload at full fidelity */
    store *db;
    int64_t run_id;
    stored_rows stored;
    int64_t last_front_iteration;
    se_result *out;
    int64_t cap_candidates, cap_curve;
    kept_result **kept; /* per candidate, NULL when nothing is kept */
    int64_t cap_kept;
    bool have_reference;
    double start_seconds;
} run;

/* Append a candidate slot to the result; NULL when out of memory. */
static se_candidate *new_candidate(run *r)
{
    se_result *out = r->out;
    if (!as_vec_reserve(&out->candidates, &r->cap_candidates, out->n_candidates + 1,
                        sizeof *out->candidates))
        return NULL;
    se_candidate *c = &out->candidates[out->n_candidates++];
    memset(c, 0, sizeof *c);
    return c;
}

/* Fill c's objective vector and scalar from its metrics. */
static void score(const se_run_options *o, se_candidate *c)
{
    for (int k = 0; k < o->n_objectives; k++)
        c->y[k] = se_metrics_objective(&c->outcome.metrics, o->objectives[k]);
    c->scalar = se_metrics_objective(&c->outcome.metrics, o->scalar);
}

/* Take a stored row as candidate c's latest round (after checking it is
 * the point this run proposes there). */
static as_code take_stored(run *r, const store_row *sr, se_candidate *c, as_status *st)
{
    char proposed[256];
    se_point_format(r->space, &c->point, proposed, sizeof proposed);
    if (strcmp(proposed, sr->point) != 0)
        return as_fail(st, AS_EINVAL,
                       "%s: run %lld holds point %s at iteration %lld slot %d, but this run "
                       "proposes %s there: the store comes from another configuration or version",
                       r->o->db_path, (long long)r->run_id, sr->point, (long long)sr->iteration,
                       sr->slot, proposed);
    c->outcome.feasible = sr->feasible;
    snprintf(c->outcome.reason, sizeof c->outcome.reason, "%s", sr->reason);
    c->outcome.metrics = sr->metrics;
    c->rounds = sr->round + 1;
    c->sw_budget = sr->sw_budget;
    c->from_store = true;
    score(r->o, c);
    return AS_OK;
}

/* Record candidate evaluation e (round `round` of c) in c and the store. */
static as_code record(run *r, se_candidate_eval *e, se_candidate *c, int round, as_status *st)
{
    c->outcome = e->outcome;
    c->rounds = round + 1;
    c->sw_budget = e->spent;
    c->from_store = false;
    score(r->o, c);
    if (!r->db)
        return AS_OK;
    char params[1024];
    se_point_params_json(r->space, &c->point, params, sizeof params);
    char *detail = se_candidate_detail_json(e, st);
    if (!detail)
        return st->code;
    store_row row = {
        .iteration = c->iteration,
        .slot = c->slot,
        .round = round,
        .feasible = c->outcome.feasible,
        .sw_budget = e->spent,
        .sw_value = e->sw_value,
        .sw_auc = e->sw_auc,
        .metrics = c->outcome.metrics,
        .params_json = params,
        .detail_json = detail,
    };
    se_point_format(r->space, &c->point, row.point, sizeof row.point);
    snprintf(row.reason, sizeof row.reason, "%s", c->outcome.reason);
    as_code code;
#pragma omp critical(se_store)
    code = store_put_row(r->db, r->run_id, &row, st);
    free(detail);
    return code;
}

static void kept_free(kept_result *k)
{
    for (int i = 0; k && i < SE_MAX_WORKLOADS; i++) {
        fu_plan_free(&k->plan[i]);
        fu_plan_cost_free(&k->cost[i]);
        json_decref(k->plan_json[i]);
    }
    free(k);
}

/* Room in r->kept for every candidate so far (new slots empty); false
 * when out of memory (then nothing more is kept: the chosen design is
 * searched again instead). */
static bool reserve_kept(run *r)
{
    int64_t old = r->cap_kept;
    if (!as_vec_reserve(&r->kept, &r->cap_kept, r->out->n_candidates, sizeof *r->kept))
        return false;
    for (int64_t i = old; i < r->cap_kept; i++)
        r->kept[i] = NULL;
    return true;
}

/* Keep candidate c's results from e when e brought every training
 * workload to the full budget feasibly (then each workload's plan is what
 * searching it alone would give); e's plans and costs are taken over. */
static void keep_results(run *r, const se_candidate *c, se_candidate_eval *e)
{
    int64_t index = c - r->out->candidates;
    if (index >= r->cap_kept || !e->outcome.feasible || e->spent != r->final_budget)
        return;
    kept_result *k = calloc(1, sizeof *k);
    if (!k)
        return; /* only costs a search of the chosen design later */
    for (int i = 0; i < e->n_workloads; i++) {
        k->graph[i] = e->graph[i];
        se_candidate_workload_metrics(e, i, r->o->aggregate, &k->metrics[i]);
        k->plan_json[i] = se_candidate_workload_json(e, i);
        k->plan[i] = e->plan[i];
        k->cost[i] = e->cost[i];
        memset(&e->plan[i], 0, sizeof e->plan[i]);
        memset(&e->cost[i], 0, sizeof e->cost[i]);
    }
    kept_free(r->kept[index]);
    r->kept[index] = k;
}

/* Drop what candidates off the front keep: they can no longer be chosen. */
static void prune_kept(run *r)
{
    const se_result *out = r->out;
    for (int64_t i = 0; i < r->cap_kept && i < out->n_candidates; i++) {
        bool on_front = false;
        for (int64_t f = 0; f < out->n_front && !on_front; f++)
            on_front = out->front[f] == i;
        if (!on_front) {
            kept_free(r->kept[i]);
            r->kept[i] = NULL;
        }
    }
}

/* One batch under evaluation: candidates and their live searches. */
typedef struct batch {
    int n;
    se_candidate *cand[SE_MAX_BATCH];
    se_candidate_eval eval[SE_MAX_BATCH];
    bool started[SE_MAX_BATCH]; /* eval initialised */
    bool alive[SE_MAX_BATCH];   /* gets the next round */
    bool done[SE_MAX_BATCH];    /* completed the current round */
    as_status status[SE_MAX_BATCH];
    as_code code[SE_MAX_BATCH];
} batch;

/* Round `round` of n_rounds of slot i: from the store, or computed and
 * stored.  The last round is the budget schedule's last: an evaluation in
 * one round goes through the whole schedule at once. */
static void run_slot(run *r, batch *b, int i, int round, int n_rounds)
{
    se_candidate *c = b->cand[i];
    as_status *st = &b->status[i];
    const store_row *sr = find_row(&r->stored, c->iteration, c->slot, round);
    if (sr) {
        b->code[i] = take_stored(r, sr, c, st);
        b->done[i] = b->code[i] == AS_OK;
        return;
    }
    se_candidate_eval *e = &b->eval[i];
    if (!b->started[i]) {
        b->code[i] =
            se_candidate_init(e, r->space, &c->point, r->models, r->train, r->n_train, &r->sw, st);
        b->started[i] = true;
        if (b->code[i] != AS_OK)
            return;
    }
    b->code[i] = se_candidate_advance(e, round + r->rounds - n_rounds, r->o->aggregate, &r->sw, st);
    if (b->code[i] == AS_OK)
        b->code[i] = record(r, e, c, round, st);
    if (b->code[i] == AS_OK && round == n_rounds - 1)
        keep_results(r, c, e);
    b->done[i] = b->code[i] == AS_OK;
}

/* Whether the caller asked to stop. */
static bool stopping(const run *r)
{
    return r->o->stop_flag && *r->o->stop_flag;
}

/* The sw value or AUC of slot i's latest round, for the halving rule. */
static double slot_value(const run *r, const batch *b, int i, bool auc)
{
    const se_candidate *c = b->cand[i];
    if (b->started[i])
        return auc ? b->eval[i].sw_auc : b->eval[i].sw_value;
    const store_row *sr = find_row(&r->stored, c->iteration, c->slot, c->rounds - 1);
    return sr ? (auc ? sr->sw_auc : sr->sw_value) : INFINITY;
}

/* Keep the best `keep` alive, feasible slots by value (or AUC) in keep_out. */
static void mark_best(const run *r, const batch *b, bool auc, int keep, bool *keep_out)
{
    for (int k = 0; k < keep; k++) {
        int best = -1;
        double best_value = INFINITY;
        for (int i = 0; i < b->n; i++) {
            if (!b->alive[i] || !b->cand[i]->outcome.feasible || keep_out[i])
                continue;
            double v = slot_value(r, b, i, auc);
            if (best < 0 || v < best_value) {
                best = i;
                best_value = v;
            }
        }
        if (best < 0)
            return;
        keep_out[best] = true;
    }
}

/* CASCO's modified halving: the best half by terminal value and the best
 * quarter by AUC stay alive. */
static void halve(const run *r, batch *b)
{
    int m = 0;
    for (int i = 0; i < b->n; i++)
        m += b->alive[i] && b->cand[i]->outcome.feasible;
    bool by_value[SE_MAX_BATCH] = {0}, by_auc[SE_MAX_BATCH] = {0};
    mark_best(r, b, false, (m + 1) / 2, by_value);
    mark_best(r, b, true, (m + 3) / 4, by_auc);
    for (int i = 0; i < b->n; i++)
        b->alive[i] = by_value[i] || by_auc[i];
}

/* Evaluate the candidates of b over n_rounds rounds (threads across the
 * batch); false in *interrupted when the stop flag cut a round short. */
static as_code evaluate_batch(run *r, batch *b, int n_rounds, bool *interrupted, as_status *st)
{
    *interrupted = false;
    for (int i = 0; i < b->n; i++)
        b->alive[i] = true;
    reserve_kept(r); /* before the threads: they write r->kept[their candidate] */
    as_code code = AS_OK;
    for (int round = 0; round < n_rounds && code == AS_OK && !*interrupted; round++) {
        memset(b->done, 0, sizeof b->done);
#pragma omp parallel for schedule(dynamic, 1) num_threads(r->o->threads)
        for (int i = 0; i < b->n; i++) {
            b->code[i] = AS_OK;
            if (b->alive[i] && !stopping(r))
                run_slot(r, b, i, round, n_rounds);
        }
        for (int i = 0; i < b->n && code == AS_OK; i++) {
            if (b->code[i] != AS_OK)
                code = as_fail(st, b->code[i], "%s", b->status[i].message);
            else if (b->alive[i] && !b->done[i])
                *interrupted = true;
            else if (b->done[i] && b->cand[i]->from_store)
                r->out->evaluations_loaded++;
            else if (b->done[i])
                r->out->evaluations_computed++;
        }
        for (int i = 0; i < b->n; i++)
            b->alive[i] = b->alive[i] && b->done[i] && b->cand[i]->outcome.feasible;
        if (round + 1 < n_rounds)
            halve(r, b);
    }
    for (int i = 0; i < b->n; i++)
        if (b->started[i])
            se_candidate_release(&b->eval[i]);
    return code;
}

/* ------------------------------------------------------------ the front */

/* log10 of candidate c's objectives into v. */
static void log_objectives(const run *r, const se_candidate *c, double *v)
{
    for (int k = 0; k < r->o->n_objectives; k++)
        v[k] = log10(c->y[k]);
}

/* Set the reference point from c when it is the first feasible one seen. */
static void maybe_set_reference(run *r, const se_candidate *c)
{
    if (r->have_reference || !c->outcome.feasible || c->rounds == 0)
        return;
    log_objectives(r, c, r->out->reference);
    for (int k = 0; k < r->o->n_objectives; k++)
        r->out->reference[k] += 1.0;
    r->have_reference = true;
}

/* The front of the feasible candidates so far into out->front, and its
 * hypervolume. */
static as_code update_front(run *r, double *hypervolume, as_status *st)
{
    se_result *out = r->out;
    int n_obj = r->o->n_objectives;
    int64_t n = out->n_candidates;
    double *y = malloc((size_t)(n * n_obj + 1) * sizeof *y);
    int64_t *index = malloc((size_t)(n + 1) * sizeof *index);
    int64_t *front = realloc(out->front, (size_t)(n + 1) * sizeof *front);
    if (front)
        out->front = front;
    if (!y || !index || !front) {
        free(y);
        free(index);
        return as_fail(st, AS_ENOMEM, "out of memory for the Pareto front");
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const se_candidate *c = &out->candidates[i];
        if (!c->outcome.feasible || c->rounds == 0)
            continue;
        log_objectives(r, c, y + m * n_obj);
        index[m++] = i;
    }
    int64_t n_front = se_pareto_front(y, m, n_obj, front);
    *hypervolume = r->have_reference ? se_hypervolume(y, m, n_obj, out->reference) : 0;
    for (int64_t k = 0; k < n_front; k++)
        front[k] = index[front[k]];
    out->n_front = n_front;
    free(y);
    free(index);
    prune_kept(r);
    return AS_OK;
}

/* Front point c as JSON: where it was found, its parameters and metrics;
 * NULL when out of memory. */
static json_t *front_point_json(const run *r, const se_candidate *c)
{
    json_t *point = json_object();
    bool ok = point && as_json_put(point, "iteration", json_integer(c->iteration)) &&
              as_json_put(point, "slot", json_integer(c->slot)) &&
              as_json_put(point, "params", se_point_params(r->space, &c->point));
    for (int i = 0; ok && i < SE_N_METRICS; i++)
        ok = as_json_put(point, se_metric_name(i),
                         as_json_number(se_metric_value(&c->outcome.metrics, i)));
    if (!ok) {
        json_decref(point);
        return NULL;
    }
    return point;
}

/* The front as JSON (an array of points) into a malloc'd string; NULL
 * when out of memory. */
static char *front_json(const run *r)
{
    const se_result *out = r->out;
    json_t *front = json_array();
    bool ok = front != NULL;
    for (int64_t k = 0; ok && k < out->n_front; k++)
        ok = as_json_push(front, front_point_json(r, &out->candidates[out->front[k]]));
    char *text = ok ? as_json_text(front, 0) : NULL;
    json_decref(front);
    return text;
}

/* After iteration it: the front, its hypervolume on the curve, the store. */
static as_code close_iteration(run *r, int64_t iteration, int64_t evaluations, as_status *st)
{
    double hv;
    as_code code = update_front(r, &hv, st);
    if (code != AS_OK)
        return code;
    se_result *out = r->out;
    int64_t cap_ev = r->cap_curve, cap_hv = r->cap_curve;
    if (!as_vec_reserve(&out->curve_evaluations, &cap_ev, out->n_curve + 1,
                        sizeof *out->curve_evaluations) ||
        !as_vec_reserve(&out->curve_hypervolume, &cap_hv, out->n_curve + 1,
                        sizeof *out->curve_hypervolume))
        return as_fail(st, AS_ENOMEM, "out of memory for the hypervolume curve");
    r->cap_curve = cap_ev; /* both arrays hold at least this many now */
    out->curve_evaluations[out->n_curve] = evaluations;
    out->curve_hypervolume[out->n_curve++] = hv;
    if (!r->db || iteration <= r->last_front_iteration)
        return AS_OK;
    char *json = front_json(r);
    if (!json)
        return as_fail(st, AS_ENOMEM, "out of memory for the front's JSON");
    code = store_put_front(r->db, r->run_id, iteration, evaluations, hv, json, st);
    free(json);
    return code;
}

/* ------------------------------------------------------------- progress */

static void report_progress(const run *r, int64_t iteration, int64_t evaluations)
{
    if (!r->o->progress)
        return;
    const se_result *out = r->out;
    se_progress p = {
        .iteration = iteration,
        .n_iterations = (r->o->budget + r->o->batch - 1) / r->o->batch,
        .evaluations = evaluations,
        .budget = r->o->budget,
        .best_scalar = INFINITY,
        .hypervolume = out->n_curve ? out->curve_hypervolume[out->n_curve - 1] : 0,
        .elapsed_seconds = omp_get_wtime() - r->start_seconds,
    };
    for (int64_t i = 0; i < out->n_candidates; i++) {
        const se_candidate *c = &out->candidates[i];
        if (c->outcome.feasible && c->rounds > 0 && c->scalar < p.best_scalar)
            p.best_scalar = c->scalar;
    }
    r->o->progress(r->o->progress_user, &p);
}

/* ---------------------------------------------------------------- phases */

/* The baseline design at full budget (iteration -1). */
static as_code run_baseline(run *r, bool *interrupted, as_status *st)
{
    batch *b = calloc(1, sizeof *b);
    se_candidate *c = new_candidate(r);
    if (!b || !c) {
        free(b);
        return as_fail(st, AS_ENOMEM, "out of memory for the baseline");
    }
    c->iteration = -1;
    memcpy(c->point.index, r->space->baseline, sizeof c->point.index);
    b->n = 1;
    b->cand[0] = c;
    as_code code = evaluate_batch(r, b, 1, interrupted, st);
    free(b);
    if (code == AS_OK && !*interrupted)
        maybe_set_reference(r, c);
    return code;
}

/* One iteration: propose, evaluate, observe. */
static as_code run_iteration(run *r, se_engine *engine, int64_t iteration, int n, bool *interrupted,
                             as_status *st)
{
    se_point points[SE_MAX_BATCH];
    as_code code = se_engine_propose(engine, n, points, st);
    if (code != AS_OK)
        return code;
    batch *b = calloc(1, sizeof *b);
    if (!b)
        return as_fail(st, AS_ENOMEM, "out of memory for a batch");
    int64_t first = r->out->n_candidates;
    for (int i = 0; i < n && code == AS_OK; i++) {
        se_candidate *c = new_candidate(r);
        if (!c) {
            code = as_fail(st, AS_ENOMEM, "out of memory for candidates");
            break;
        }
        c->iteration = iteration;
        c->slot = i;
        c->point = points[i];
    }
    /* new_candidate may move the array: take the pointers afterwards. */
    b->n = n;
    for (int i = 0; i < n && code == AS_OK; i++)
        b->cand[i] = &r->out->candidates[first + i];
    int n_rounds = r->o->algo == SE_ALGO_CASCO ? r->rounds : 1;
    if (code == AS_OK)
        code = evaluate_batch(r, b, n_rounds, interrupted, st);
    se_observation obs[SE_MAX_BATCH];
    for (int i = 0; i < n && code == AS_OK && !*interrupted; i++) {
        se_candidate *c = b->cand[i];
        maybe_set_reference(r, c);
        obs[i] = (se_observation){
            .point = c->point, .feasible = c->outcome.feasible, .scalar = c->scalar};
        memcpy(obs[i].y, c->y, sizeof obs[i].y);
    }
    free(b);
    if (code == AS_OK && !*interrupted)
        code = se_engine_observe(engine, obs, n, st);
    return code;
}

/* The chosen design on every workload, training and validation: the
 * training workloads' results as the search kept them when it brought
 * the design to the full budget in this process, otherwise (validation
 * workloads, a design read back from the store or halved out early) from
 * a search of that workload alone, which gives the same numbers. */
static as_code evaluate_chosen(run *r, const se_workload *workloads, int n_workloads, as_status *st)
{
    se_result *out = r->out;
    out->chosen_results = calloc((size_t)n_workloads, sizeof *out->chosen_results);
    if (!out->chosen_results)
        return as_fail(st, AS_ENOMEM, "out of memory for the chosen design's results");
    out->n_workloads = n_workloads;
    const se_candidate *chosen = &out->candidates[out->chosen];
    kept_result *kept = out->chosen < r->cap_kept ? r->kept[out->chosen] : NULL;
    as_code code = AS_OK;
    for (int k = 0, train = 0; k < n_workloads && code == AS_OK; k++) {
        se_workload_result *w = &out->chosen_results[k];
        w->name = workloads[k].model;
        w->validation = workloads[k].validation;
        if (kept && !w->validation) { /* searched to the full budget already */
            int t = train++;
            w->outcome.feasible = true;
            w->outcome.metrics = kept->metrics[t];
            w->graph = kept->graph[t];
            w->plan = kept->plan[t];
            w->cost = kept->cost[t];
            w->plan_json = kept->plan_json[t];
            kept->plan_json[t] = NULL;
            memset(&kept->plan[t], 0, sizeof kept->plan[t]);
            memset(&kept->cost[t], 0, sizeof kept->cost[t]);
            continue;
        }
        se_candidate_eval e;
        code = r->design
                   ? se_candidate_init_arch(&e, r->design, r->models, &k, 1, &r->sw, st)
                   : se_candidate_init(&e, r->space, &chosen->point, r->models, &k, 1, &r->sw, st);
        if (code == AS_OK)
            code = se_candidate_advance(&e, r->rounds - 1, r->o->aggregate, &r->sw, st);
        if (code == AS_OK) {
            w->outcome = e.outcome;
            w->graph = e.graph[0];
            w->plan_json = se_candidate_workload_json(&e, 0);
            /* The result takes the plan and its cost over from e. */
            w->plan = e.plan[0];
            w->cost = e.cost[0];
            memset(&e.plan[0], 0, sizeof e.plan[0]);
            memset(&e.cost[0], 0, sizeof e.cost[0]);
        }
        se_candidate_release(&e);
    }
    return code;
}

/* The fixed designs of o->baselines, each evaluated as a candidate at
 * the full budget on the training workloads (se_candidate_init_arch). */
static as_code evaluate_baselines(run *r, as_status *st)
{
    se_result *out = r->out;
    as_code code = AS_OK;
    for (int i = 0; i < r->o->n_baselines && code == AS_OK; i++) {
        se_candidate_eval e;
        code = se_candidate_init_arch(&e, &r->o->baselines[i].arch, r->models, r->train, r->n_train,
                                      &r->sw, st);
        if (code == AS_OK)
            code = se_candidate_advance(&e, r->rounds - 1, r->o->aggregate, &r->sw, st);
        if (code == AS_OK)
            out->baseline_outcomes[out->n_baselines++] = e.outcome;
        se_candidate_release(&e);
    }
    return code;
}

/* Check the options; names what is wrong. */
static as_code check_options(const se_run_options *o, const se_workload *w, int n, as_status *st)
{
    int n_train = 0;
    for (int i = 0; i < n; i++)
        n_train += !w[i].validation;
    if (n_train < 1)
        return as_fail(st, AS_EINVAL, "a search needs at least one model to train on");
    if (n > SE_MAX_WORKLOADS)
        return as_fail(st, AS_EINVAL, "at most %d models", SE_MAX_WORKLOADS);
    if (o->budget < 1)
        return as_fail(st, AS_EINVAL, "--budget must be at least 1, not %lld",
                       (long long)o->budget);
    if (o->batch < 1 || o->batch > SE_MAX_BATCH)
        return as_fail(st, AS_EINVAL, "--batch must be 1..%d, not %d", SE_MAX_BATCH, o->batch);
    if (o->threads < 1)
        return as_fail(st, AS_EINVAL, "--threads must be at least 1, not %d", o->threads);
    if (o->n_objectives < 1 || o->n_objectives > SE_MAX_OBJECTIVES)
        return as_fail(st, AS_EINVAL, "1 to %d objectives, not %d", SE_MAX_OBJECTIVES,
                       o->n_objectives);
    if (o->sh_rounds < 1 || o->sh_rounds > SE_MAX_SH_ROUNDS)
        return as_fail(st, AS_EINVAL, "successive-halving rounds must be 1..%d, not %d",
                       SE_MAX_SH_ROUNDS, o->sh_rounds);
    int64_t unit = (int64_t)STEPS_PER_ROUND0 << (o->sh_rounds - 1);
    if (o->sw_budget < unit)
        return as_fail(st, AS_EINVAL,
                       "software budget %lld is below %lld plans (%d steps in the first of %d "
                       "rounds)",
                       (long long)o->sw_budget, (long long)unit, STEPS_PER_ROUND0, o->sh_rounds);
    if (o->map_budget < 1)
        return as_fail(st, AS_EINVAL, "mapping budget must be at least 1");
    if (o->fusion_set && (unsigned)o->fusion >= N_FUSION)
        return as_fail(st, AS_EINVAL, "unknown fusion search %d (none, ga, dp, ilp)",
                       (int)o->fusion);
    if (o->n_baselines < 0 || o->n_baselines > SE_MAX_BASELINES ||
        (o->n_baselines > 0 && !o->baselines))
        return as_fail(st, AS_EINVAL, "0 to %d baselines, not %d", SE_MAX_BASELINES,
                       o->n_baselines);
    if (o->resume && !o->db_path)
        return as_fail(st, AS_EINVAL, "--resume needs a store (--db)");
    return AS_OK;
}

/* Open the store and begin (or find, on resume) this run's record;
 * stored rows are loaded for replay. */
static as_code open_store(run *r, const se_workload *w, int n, as_status *st)
{
    r->last_front_iteration = -2;
    if (!r->o->db_path)
        return AS_OK;
    as_code code = store_open(&r->db, r->o->db_path, st);
    if (code != AS_OK)
        return code;
    char config[4096];
    se_run_config_text(r->space, w, n, r->o, config, sizeof config);
    if (r->o->resume) {
        code = store_run_find_resumable(r->db, config, r->o->seed, &r->run_id, st);
        if (code == AS_OK && r->run_id == 0)
            return as_fail(st, AS_EINVAL,
                           "%s: no unfinished run with this configuration and seed %llu to "
                           "resume",
                           r->o->db_path, (unsigned long long)r->o->seed);
        if (code == AS_OK)
            code = store_each_row(r->db, r->run_id, collect_row, &r->stored, st);
        if (code == AS_OK && r->stored.failed)
            code = as_fail(st, AS_ENOMEM, "out of memory reading the store");
        char *json = NULL;
        double hv;
        if (code == AS_OK)
            code = store_last_front(r->db, r->run_id, &r->last_front_iteration, &hv, &json, st);
        free(json);
        if (code == AS_OK)
            code = store_run_set_state(r->db, r->run_id, STORE_RUNNING, st);
        r->out->resumed = true;
    } else {
        char summary[160];
        snprintf(summary, sizeof summary, "%s on %s, %s%s, budget %lld", se_algo_name(r->o->algo),
                 r->space->name, w[0].model, n > 1 ? " ..." : "", (long long)r->o->budget);
        code = store_run_begin(r->db, config, r->o->seed, AS_VERSION, summary, &r->run_id, st);
    }
    r->out->run_id = r->run_id;
    return code;
}

/* The search proper: baseline, then iterations until the budget is spent
 * or the caller stops it. */
static as_code search_loop(run *r, as_status *st)
{
    bool interrupted = false;
    as_code code = run_baseline(r, &interrupted, st);
    if (code == AS_OK && !interrupted)
        code = close_iteration(r, -1, 0, st);
    se_engine *engine = NULL;
    se_engine_options eo = {
        .algo = r->o->algo, .seed = r->o->seed, .n_objectives = r->o->n_objectives};
    if (code == AS_OK)
        code = se_engine_new(&engine, r->space, &eo, st);
    int64_t evaluated = 0;
    for (int64_t it = 0; code == AS_OK && !interrupted && evaluated < r->o->budget; it++) {
        int64_t left = r->o->budget - evaluated;
        int n = left < r->o->batch ? (int)left : r->o->batch;
        code = run_iteration(r, engine, it, n, &interrupted, st);
        if (code == AS_OK && !interrupted) {
            evaluated += n;
            code = close_iteration(r, it, evaluated, st);
            report_progress(r, it, evaluated);
        }
    }
    se_engine_free(engine);
    r->out->interrupted = interrupted;
    /* An interrupted batch's completed candidates join the front too. */
    double hv;
    if (code == AS_OK && interrupted)
        code = update_front(r, &hv, st);
    return code;
}

/* What se_run and se_run_design share before their hardware: r's
 * software settings from o (fusion search, halving rounds, budgets,
 * weights), the training workloads, the models at precision (every one
 * loaded now, so that a bad path fails before anything is stored) and
 * the mapper's shared cache. */
static as_code run_setup(run *r, const se_workload *workloads, int n_workloads,
                         wl_precision precision, as_status *st)
{
    const se_run_options *o = r->o;
    r->sw.fusion = se_run_fusion(r->space, o);
    /* Halving raises the fusion budget, and only the GA is anytime: with
     * none, DP or ILP every round would repeat the first (the mapping
     * budget is fixed), so CASCO gives one round, like the other engines. */
    r->rounds = r->sw.fusion == FU_ALGO_GA ? o->sh_rounds : 1;
    r->start_seconds = omp_get_wtime();
    for (int i = 0; i < n_workloads; i++)
        if (!workloads[i].validation)
            r->train[r->n_train++] = i;
    r->sw.seed = o->seed;
    r->sw.chunk = o->sw_budget / ((int64_t)STEPS_PER_ROUND0 << (o->sh_rounds - 1));
    r->final_budget = r->sw.chunk * ((int64_t)STEPS_PER_ROUND0 << (o->sh_rounds - 1));
    r->sw.map_budget = o->map_budget;
    r->sw.rounds = r->rounds;
    r->sw.plans = r->final_budget;
    r->sw.weights = o->weights;
    as_code code =
        se_models_new(&r->models, workloads, n_workloads, precision, !o->no_epilogue_fusion, st);
    for (int i = 0; i < n_workloads && code == AS_OK; i++) {
        const wl_graph *g;
        int64_t footprint;
        code = se_models_get(r->models, i, 1, &g, &footprint, st);
    }
    if (code == AS_OK)
        code = map_cache_new(&r->sw.shared, st);
    return code;
}

/* What se_run and se_run_design leave behind: the run's buffers freed,
 * the models handed to the result. */
static void run_teardown(run *r)
{
    free(r->stored.v);
    for (int64_t i = 0; i < r->cap_kept; i++)
        kept_free(r->kept[i]);
    free(r->kept);
    map_cache_free(r->sw.shared);
    r->out->models = r->models;
    r->out->seconds = omp_get_wtime() - r->start_seconds;
}

as_code se_run(const se_space *s, const se_workload *workloads, int n_workloads,
               const se_run_options *o, se_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    as_code code = check_options(o, workloads, n_workloads, st);
    if (code != AS_OK)
        return code;
    run r = {.space = s, .o = o, .out = out};
    code = run_setup(&r, workloads, n_workloads, s->precision, st);
    if (code == AS_OK)
        code = open_store(&r, workloads, n_workloads, st);
    if (code == AS_OK)
        code = search_loop(&r, st);
    if (code == AS_OK)
        code = se_result_front(out, o->n_objectives, st);
    if (code == AS_OK && out->chosen >= 0 && !out->interrupted)
        code = evaluate_chosen(&r, workloads, n_workloads, st);
    if (code == AS_OK && !out->interrupted)
        code = evaluate_baselines(&r, st);
    if (r.db) {
        as_status ignored;
        if (code == AS_OK)
            code = store_run_set_state(r.db, r.run_id,
                                       out->interrupted ? STORE_INTERRUPTED : STORE_FINISHED, st);
        else
            store_run_set_state(r.db, r.run_id, STORE_INTERRUPTED, &ignored);
        store_close(r.db);
    }
    run_teardown(&r);
    return code;
}

as_code se_run_design(const arch_spec *a, const se_workload *workloads, int n_workloads,
                      const se_run_options *o, se_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    as_code code = check_options(o, workloads, n_workloads, st);
    if (code != AS_OK)
        return code;
    run r = {.design = a, .o = o, .out = out};
    code = run_setup(&r, workloads, n_workloads, se_design_precision(a), st);
    se_candidate *c = code == AS_OK ? new_candidate(&r) : NULL;
    if (code == AS_OK && !c)
        code = as_fail(st, AS_ENOMEM, "out of memory for the design");
    se_candidate_eval e;
    bool started = false;
    if (code == AS_OK) {
        c->iteration = -1;
        code = se_candidate_init_arch(&e, a, r.models, r.train, r.n_train, &r.sw, st);
        started = true;
    }
    if (code == AS_OK)
        code = se_candidate_advance(&e, r.rounds - 1, o->aggregate, &r.sw, st);
    if (code == AS_OK)
        code = record(&r, &e, c, r.rounds - 1, st);
    if (started)
        se_candidate_release(&e);
    if (code == AS_OK)
        code = se_result_front(out, o->n_objectives, st);
    if (code == AS_OK && out->chosen >= 0)
        code = evaluate_chosen(&r, workloads, n_workloads, st);
    if (code == AS_OK)
        code = evaluate_baselines(&r, st);
    run_teardown(&r);
    return code;
}

void se_result_free(se_result *r)
{
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++) {
        fu_plan_free(&r->chosen_results[k].plan);
        fu_plan_cost_free(&r->chosen_results[k].cost);
        json_decref(r->chosen_results[k].plan_json);
    }
    free(r->chosen_results);
    free(r->candidates);
    free(r->front);
    free(r->curve_evaluations);
    free(r->curve_hypervolume);
    se_models_free(r->models);
    memset(r, 0, sizeof *r);
}
