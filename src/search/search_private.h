/*
 * search_private.h -- what run.c and evaluate.c share: prepared models
 * and the software search under one hardware candidate; and the ranking
 * sort that pareto.c and engine.c share.
 */
#ifndef AS_SEARCH_PRIVATE_H
#define AS_SEARCH_PRIVATE_H

#include "search.h"

#define SE_MAX_WORKLOADS 16

/* ------------------------------------------------------------ ranking */

/* A value and the position it belongs to. */
typedef struct se_ranked {
    double value;
    int64_t index;
} se_ranked;

/* Sort v by value, lowest first, ties by index: a total order, so the
 * result does not depend on qsort (pareto.c). */
void se_ranked_sort(se_ranked *v, int64_t n);

/* ------------------------------------------------------------- models */

/* The run's workloads, each prepared once per native batch it is run at
 * (loaded, batch set, BN folded, precision set, fusable ops marked). */
as_code se_models_new(se_models **out, const se_workload *w, int n, wl_precision precision,
                      bool epilogue_fusion, as_status *st);
void se_models_free(se_models *m);
/* Workload i prepared at batch (loaded on first use; thread-safe), and
 * its off-chip footprint in bytes: weights plus the largest working set
 * of one layer. */
as_code se_models_get(se_models *m, int i, int64_t batch, const wl_graph **g,
                      int64_t *footprint_bytes, as_status *st);
/* Workload i prepared anew at batch, owned by the caller. */
as_code se_models_load(const se_models *m, int i, int64_t batch, wl_graph **out, as_status *st);

/* ------------------------------------------------ one candidate's software */

/* What the software search of a candidate is given. */
typedef struct se_sw_options {
    uint64_t seed;       /* the run's; mixed with the point */
    fu_algorithm fusion; /* se_run_fusion: the GA steps by chunks, the others run to the end */
    int64_t chunk;       /* fusion plans per search step (the step schedule) */
    int rounds;          /* successive-halving rounds (1: one round at full fidelity) */
    int64_t plans;       /* fusion plans per workload at full fidelity */
    int64_t map_budget;  /* mappings per distinct tile problem at full fidelity */
    map_weights weights; /* resident or streamed weights (mapping.h); AUTO: by capacity */
    map_cache *shared;   /* mapper results across candidates (may be NULL) */
} se_sw_options;

/* The software budgets of round r (0 .. o->rounds - 1), growing from
 * round to round up to full fidelity in the last: fusion plans per
 * workload in total (doubling), and mappings per tile problem
 * (quadrupling; searches continued, not restarted: mapping.h's resumable
 * searches). */
int64_t se_round_plans(const se_sw_options *o, int r);
int64_t se_round_map_budget(const se_sw_options *o, int r);
/*
 * A candidate under evaluation: its design, and one fusion search per
 * workload, kept alive between successive-halving rounds.  Searches step
 * in fixed chunks, so bringing a candidate to a cumulative budget gives
 * the same result whether it got there in one call or in several --
 * which is what lets a resumed run redo an unfinished round exactly.
 */
typedef struct se_candidate_eval {
    se_point point;
    se_point seed_point; /* what the software seed mixes: point, or its offset from an AROUND
                            space's centre (all zero for a fixed design) */
    arch_spec arch;
    se_outcome outcome; /* metrics: after the last advance */
    int64_t batch;
    int n_workloads;
    int workload[SE_MAX_WORKLOADS]; /* indices into the models */
    const wl_graph *graph[SE_MAX_WORKLOADS];
    fu_evaluator *evaluator[SE_MAX_WORKLOADS];
    fu_search *search[SE_MAX_WORKLOADS];
    int64_t spent;                       /* plans per workload so far */
    int rounds_done;                     /* rounds of the budget schedule completed */
    fu_plan plan[SE_MAX_WORKLOADS];      /* each workload's best plan after the last advance */
    fu_plan_cost cost[SE_MAX_WORKLOADS]; /*   and its cost (freed by se_candidate_release) */
    double sw_value, sw_auc;             /* after the last advance */
} se_candidate_eval;

/* Decode p and check it against the constraints and the workloads'
 * off-chip footprints; an infeasible design is data (c->feasible). */
as_code se_candidate_init(se_candidate_eval *c, const se_space *s, const se_point *p, se_models *m,
                          const int *workloads, int n_workloads, const se_sw_options *o,
                          as_status *st);
/* The same for a fixed design a (a --baseline): evaluated as a decoded
 * point is, at a's native batch; its point is all zero (the software
 * seed); a design arch_validate rejects is infeasible with its reason.
 * No budget of the space applies. */
as_code se_candidate_init_arch(se_candidate_eval *c, const arch_spec *a, se_models *m,
                               const int *workloads, int n_workloads, const se_sw_options *o,
                               as_status *st);
/* Bring every workload's search through the rounds of the budget
 * schedule up to `round` (se_round_plans, se_round_map_budget: rounds
 * not yet done are done in order, so that a candidate brought to a round
 * at once equals one brought there round by round), keep each one's best
 * plan and cost (c->plan, c->cost) and take their metrics (aggregated
 * over the workloads); a workload without any valid plan makes the
 * candidate infeasible. */
as_code se_candidate_advance(se_candidate_eval *c, int round, se_aggregate agg,
                             const se_sw_options *o, as_status *st);
void se_candidate_release(se_candidate_eval *c);
/* Workload k's metrics alone, exactly as a candidate evaluated on k only
 * would report them (the design's area and power, the per-inference
 * latency, energy and EDP of its plan combined as one workload). */
void se_candidate_workload_metrics(const se_candidate_eval *c, int k, se_aggregate agg,
                                   se_metrics *out);
/* The metrics of one workload's plan cost on c's design (per inference). */
void se_metrics_of_plan(const se_candidate_eval *c, const fu_plan_cost *cost, se_metrics *out);

/* Per-workload results of c's kept plans as JSON (names, metrics, fusion
 * groups by op name) into a malloc'd string; NULL when out of memory. */
char *se_candidate_detail_json(const se_candidate_eval *c, as_status *st);
/* Workload k's best plan as JSON: the plan as fusion.h's fu_plan_json
 * gives it (totals, groups with their costs, the layers' mappings), with
 * the workload's name, batch and metrics (se_workload_result.plan_json);
 * NULL when out of memory. */
json_t *se_candidate_workload_json(const se_candidate_eval *c, int k);
#endif
