/*
 * search.c -- the data of a co-design search's report (kind "search") and
 * of a fusion plan's (kind "fusion"), which a search report holds once
 * per workload of its chosen design.
 */
#include "report.h"

#include <string.h>

/* The design's roofs: peak compute (2 ops per MAC) and DRAM bandwidth. */
json_t *rp_roofs(const arch_spec *a)
{
    double clock_hz = a->cycle_seconds > 0 ? 1.0 / a->cycle_seconds : 0;
    json_t *o = json_object();
    if (o &&
        as_json_put(o, "peak_ops_per_s",
                    as_json_number(2 * map_peak_macs_per_cycle(a) * clock_hz)) &&
        as_json_put(o, "dram_bytes_per_s", as_json_number(a->dram.bandwidth_GBps * 1e9)))
        return o;
    json_decref(o);
    return NULL;
}

json_t *rp_fusion_data(const arch_spec *a, const json_t *plan, const char *algorithm,
                       const fu_plan_cost *baseline, as_status *st)
{
    json_t *o = json_deep_copy(plan);
    bool ok = o && as_json_put(o, "kind", as_json_string("fusion")) &&
              as_json_put(o, "arch", as_json_string(a->name)) &&
              as_json_put(o, "roofs", rp_roofs(a)) &&
              (!algorithm || as_json_put(o, "algorithm", as_json_string(algorithm))) &&
              (!baseline || as_json_put(o, "baseline", fu_plan_totals_json(a, baseline)));
    if (!ok) {
        json_decref(o);
        as_fail(st, AS_ENOMEM, "out of memory for a fusion report");
        return NULL;
    }
    return o;
}

/* A design's metrics as an object of se_metric_name's members. */
static json_t *metrics_json(const se_metrics *m)
{
    json_t *o = json_object();
    for (int i = 0; o && i < SE_N_METRICS; i++)
        if (!as_json_put(o, se_metric_name(i), as_json_number(se_metric_value(m, i)))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* What evaluating a design came to: feasible, reason, and metrics when
 * feasible, into o. */
static bool put_outcome(json_t *o, const se_outcome *out)
{
    return as_json_put(o, "feasible", json_boolean(out->feasible)) &&
           as_json_put(o, "reason", as_json_string(out->reason)) &&
           (!out->feasible || as_json_put(o, "metrics", metrics_json(&out->metrics)));
}

/* Candidate i of r. */
static json_t *candidate_json(const se_space *s, const se_result *r, int64_t i)
{
    const se_candidate *c = &r->candidates[i];
    bool on_front = false;
    for (int64_t k = 0; k < r->n_front && !on_front; k++)
        on_front = r->front[k] == i;
    json_t *o = json_object();
    if (o && as_json_put(o, "iteration", json_integer(c->iteration)) &&
        as_json_put(o, "slot", json_integer(c->slot)) &&
        as_json_put(o, "rounds", json_integer(c->rounds)) &&
        as_json_put(o, "sw_budget", json_integer(c->sw_budget)) && put_outcome(o, &c->outcome) &&
        as_json_put(o, "params", se_point_params(s, &c->point)) &&
        as_json_put(o, "front", json_boolean(on_front)))
        return o;
    json_decref(o);
    return NULL;
}

/* The run's settings: space, engine, budgets, objectives, parameters. */
static bool put_settings(json_t *o, const se_space *s, const se_run_config *cfg, uint64_t seed,
                         const se_result *r)
{
    json_t *objectives = json_array(), *params = json_array();
    bool ok = objectives && params;
    for (int k = 0; ok && k < cfg->n_objectives; k++)
        ok = as_json_push(objectives, as_json_string(se_objective_name(cfg->objectives[k])));
    for (int k = 0; ok && k < s->n_params; k++)
        ok = as_json_push(params, as_json_string(s->param[k].name));
    ok = ok && as_json_put(o, "kind", as_json_string("search")) &&
         as_json_put(o, "run_id", json_integer(r->run_id)) &&
         as_json_put(o, "space", as_json_string(s->name)) &&
         as_json_put(o, "algo", as_json_string(se_algo_name(cfg->algo))) &&
         as_json_put(o, "seed", json_integer((json_int_t)seed)) &&
         as_json_put(o, "fusion", as_json_string(se_fusion_name(cfg->fusion))) &&
         as_json_put(o, "budget", json_integer(cfg->budget)) &&
         as_json_put(o, "sh_rounds", json_integer(cfg->sh_rounds)) &&
         as_json_put(o, "aggregate",
                     as_json_string(cfg->aggregate == SE_AGG_SUM ? "sum" : "geomean")) &&
         as_json_put(o, "interrupted", json_boolean(r->interrupted)) &&
         as_json_put(o, "objectives", json_incref(objectives)) &&
         as_json_put(o, "parameters", json_incref(params));
    json_decref(objectives);
    json_decref(params);
    return ok;
}

/* Every candidate, the chosen one and the space's baseline. */
static bool put_candidates(json_t *o, const se_space *s, const se_result *r)
{
    json_t *all = json_array();
    int64_t baseline = -1;
    bool ok = all != NULL;
    for (int64_t i = 0; ok && i < r->n_candidates; i++) {
        ok = as_json_push(all, candidate_json(s, r, i));
        if (r->candidates[i].iteration < 0 && baseline < 0)
            baseline = i;
    }
    ok = ok && as_json_put(o, "candidates", json_incref(all)) &&
         as_json_put(o, "chosen", json_integer(r->chosen)) &&
         as_json_put(o, "baseline", json_integer(baseline));
    json_decref(all);
    return ok;
}

/* The fixed designs (search --baseline) and the hypervolume curve. */
static bool put_fixed_and_curve(json_t *o, const se_result *r, const se_baseline *fixed)
{
    json_t *designs = json_array(), *curve = json_array();
    bool ok = designs && curve;
    for (int i = 0; ok && i < r->n_baselines; i++) {
        json_t *d = json_object(); /* the array owns it once pushed */
        ok = as_json_push(designs, d) && as_json_put(d, "name", as_json_string(fixed[i].name)) &&
             put_outcome(d, &r->baseline_outcomes[i]);
    }
    for (int64_t k = 0; ok && k < r->n_curve; k++) {
        json_t *p = json_object();
        ok = as_json_push(curve, p) && as_json_put(p, "iteration", json_integer(k)) &&
             as_json_put(p, "evaluations", json_integer(r->curve_evaluations[k])) &&
             as_json_put(p, "hypervolume", as_json_number(r->curve_hypervolume[k]));
    }
    ok = ok && as_json_put(o, "fixed_designs", json_incref(designs)) &&
         as_json_put(o, "curve", json_incref(curve));
    json_decref(designs);
    json_decref(curve);
    return ok;
}

/* The chosen design's plan per workload (kind "fusion" each), and the
 * names of workloads whose plan the result does not hold. */
static bool put_workloads(json_t *o, const se_space *s, const se_result *r, const char *fusion,
                          as_status *st)
{
    json_t *panels = json_array(), *missing = json_array();
    bool ok = panels && missing;
    arch_spec a;
    bool feasible = false;
    char reason[256];
    if (r->chosen >= 0)
        se_space_decode(s, &r->candidates[r->chosen].point, &a, &feasible, reason, sizeof reason);
    for (int k = 0; ok && k < r->n_workloads; k++) {
        const se_workload_result *w = &r->chosen_results[k];
        if (!feasible || !w->plan_json) {
            ok = as_json_push(missing, as_json_string(w->name));
            continue;
        }
        json_t *panel = rp_fusion_data(&a, w->plan_json, fusion, NULL, st);
        ok = as_json_push(panels, panel) &&
             as_json_put(panel, "validation", json_boolean(w->validation));
    }
    ok = ok && as_json_put(o, "workloads", json_incref(panels)) &&
         as_json_put(o, "workloads_not_stored", json_incref(missing));
    json_decref(panels);
    json_decref(missing);
    return ok;
}

json_t *rp_search_data(const se_space *s, const se_run_config *cfg, uint64_t seed,
                       const se_result *r, const se_baseline *fixed, as_status *st)
{
    json_t *o = json_object();
    bool ok = o && put_settings(o, s, cfg, seed, r) && put_candidates(o, s, r) &&
              put_fixed_and_curve(o, r, fixed) &&
              put_workloads(o, s, r, se_fusion_name(cfg->fusion), st);
    if (!ok) {
        json_decref(o);
        as_fail(st, AS_ENOMEM, "out of memory for a search report");
        return NULL;
    }
    return o;
}
