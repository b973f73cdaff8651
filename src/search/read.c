/*
 * read.c -- a stored search run read back: its configuration text parsed
 * (se_run_config_parse), its candidates, front, chosen design, curve and
 * the chosen design's plans (se_result_read), for reports and for tools
 * that look at a run after it ended.  The front and the chosen design are
 * computed by the function the run ends with (se_result_front), so a run
 * read back chooses what the run chose.
 */
#include "search_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- configuration */

/* One "key value..." line of a configuration into c; false when the key
 * is unknown or its value does not parse. */
static bool config_line(const char *key, const char *value, se_run_config *c)
{
    char word[256];
    long long n;
    if (!strcmp(key, "space"))
        return sscanf(value, "%255s", c->space) == 1;
    if (!strcmp(key, "algo"))
        return sscanf(value, "%255s", word) == 1 && se_algo_parse(word, &c->algo);
    if (!strcmp(key, "budget") || !strcmp(key, "sw_budget") || !strcmp(key, "map_budget") ||
        !strcmp(key, "batch") || !strcmp(key, "sh_rounds")) {
        if (sscanf(value, "%lld", &n) != 1 || n < 0)
            return false;
        if (!strcmp(key, "budget"))
            c->budget = n;
        else if (!strcmp(key, "sw_budget"))
            c->sw_budget = n;
        else if (!strcmp(key, "map_budget"))
            c->map_budget = n;
        else if (!strcmp(key, "batch"))
            c->batch = (int)n;
        else
            c->sh_rounds = (int)n;
        return true;
    }
    if (!strcmp(key, "weights")) {
        for (int w = MAP_WEIGHTS_AUTO; w <= MAP_WEIGHTS_RESIDENT; w++)
            if (!strcmp(value, map_weights_name((map_weights)w))) {
                c->weights = (map_weights)w;
                return true;
            }
        return false;
    }
    if (!strcmp(key, "aggregate")) {
        c->aggregate = !strcmp(value, "sum") ? SE_AGG_SUM : SE_AGG_GEOMEAN;
        return !strcmp(value, "sum") || !strcmp(value, "geomean");
    }
    if (!strcmp(key, "scalar"))
        return se_objective_parse(value, &c->scalar);
    if (!strcmp(key, "epilogue_fusion")) {
        c->no_epilogue_fusion = !strcmp(value, "off");
        return !strcmp(value, "off") || !strcmp(value, "on");
    }
    if (!strcmp(key, "fusion"))
        return se_fusion_parse(value, &c->fusion);
    if (!strcmp(key, "objectives")) {
        int used;
        c->n_objectives = 0;
        while (sscanf(value, "%255s%n", word, &used) == 1) {
            if (c->n_objectives == SE_MAX_OBJECTIVES ||
                !se_objective_parse(word, &c->objectives[c->n_objectives++]))
                return false;
            value += used;
        }
        return c->n_objectives > 0;
    }
    if (!strcmp(key, "around")) { /* range, budgets, varied list, then the design as given */
        se_around *a = &c->around;
        int used = 0;
        c->around_set = sscanf(value, "%d %lf %lf %255s %n", &a->range, &a->max_area_mm2,
                               &a->max_power_W, a->vary, &used) == 4 &&
                        used > 0 && value[used];
        if (c->around_set)
            snprintf(a->source, sizeof a->source, "%s", value + used);
        return c->around_set;
    }
    if (!strcmp(key, "model") || !strcmp(key, "validate")) {
        if (c->n_workloads == SE_CONFIG_MAX_WORKLOADS)
            return false;
        snprintf(c->model[c->n_workloads], sizeof c->model[0], "%s", value);
        c->validation[c->n_workloads++] = !strcmp(key, "validate");
        return value[0] != 0;
    }
    return false;
}

as_code se_run_config_parse(const char *text, se_run_config *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    const char *line = text;
    for (int number = 1; *line; number++) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(length < sizeof buf ? length : sizeof buf - 1),
                 line);
        char *value = strchr(buf, ' ');
        if (value)
            *value++ = 0;
        bool ok = number == 1 ? !strcmp(buf, "accelsearch") && value && !strcmp(value, "search 1")
                              : value && config_line(buf, value, out);
        if (!ok)
            return as_fail(st, AS_EINVAL,
                           "a run's configuration, line %d: '%s' is not a search run's setting",
                           number, buf);
        line = end ? end + 1 : line + length;
    }
    if (out->n_objectives == 0 || out->n_workloads == 0 || !out->space[0])
        return as_fail(st, AS_EINVAL, "a run's configuration names no space, objectives or models");
    return AS_OK;
}

json_t *se_run_config_json(const se_run_config *c)
{
    json_t *o = json_object(), *objectives = json_array(), *models = json_array();
    bool ok = o && objectives && models;
    for (int k = 0; ok && k < c->n_objectives; k++)
        ok = as_json_push(objectives, as_json_string(se_objective_name(c->objectives[k])));
    for (int k = 0; ok && k < c->n_workloads; k++) {
        json_t *m = json_object();
        ok = as_json_push(models, m) && as_json_put(m, "model", as_json_string(c->model[k])) &&
             as_json_put(m, "validation", json_boolean(c->validation[k]));
    }
    ok = ok && as_json_put(o, "space", as_json_string(c->space)) &&
         as_json_put(o, "algo", as_json_string(se_algo_name(c->algo))) &&
         as_json_put(o, "budget", json_integer(c->budget)) &&
         as_json_put(o, "batch", json_integer(c->batch)) &&
         as_json_put(o, "sw_budget", json_integer(c->sw_budget)) &&
         as_json_put(o, "sh_rounds", json_integer(c->sh_rounds)) &&
         as_json_put(o, "map_budget", json_integer(c->map_budget)) &&
         as_json_put(o, "weights", as_json_string(map_weights_name(c->weights))) &&
         as_json_put(o, "aggregate",
                     as_json_string(c->aggregate == SE_AGG_SUM ? "sum" : "geomean")) &&
         as_json_put(o, "scalar", as_json_string(se_objective_name(c->scalar))) &&
         as_json_put(o, "epilogue_fusion", json_boolean(!c->no_epilogue_fusion)) &&
         as_json_put(o, "fusion", as_json_string(se_fusion_name(c->fusion))) &&
         as_json_put(o, "objectives", json_incref(objectives)) &&
         as_json_put(o, "models", json_incref(models));
    json_decref(objectives);
    json_decref(models);
    json_t *around = c->around_set ? json_object() : NULL;
    if (ok && c->around_set)
        ok = around && as_json_put(around, "design", as_json_string(c->around.source)) &&
             as_json_put(around, "vary", as_json_string(c->around.vary)) &&
             as_json_put(around, "range", json_integer(c->around.range)) &&
             as_json_put(around, "max_area_mm2", json_real(c->around.max_area_mm2)) &&
             as_json_put(around, "max_power_W", json_real(c->around.max_power_W)) &&
             as_json_put(o, "around", json_incref(around));
    json_decref(around);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------ front and choice */

as_code se_result_front(se_result *r, int n_obj, as_status *st)
{
    int64_t n = r->n_candidates;
    double *y = malloc((size_t)(n * n_obj + 1) * sizeof *y);
    int64_t *index = malloc((size_t)(n + 1) * sizeof *index);
    int64_t *all = malloc((size_t)(n + 1) * sizeof *all);
    int64_t *front = realloc(r->front, (size_t)(n + 1) * sizeof *front);
    if (front)
        r->front = front;
    if (!y || !index || !all || !front) {
        free(y);
        free(index);
        free(all);
        return as_fail(st, AS_ENOMEM, "out of memory for the Pareto front");
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const se_candidate *c = &r->candidates[i];
        if (!c->outcome.feasible || c->rounds == 0)
            continue;
        for (int k = 0; k < n_obj; k++)
            y[m * n_obj + k] = log10(c->y[k]);
        index[m++] = i;
    }
    r->n_front = se_pareto_front(y, m, n_obj, front);
    r->chosen = -1;
    if (r->n_front > 0) {
        /* The front's rows of y, in front order, for the nearest-ideal pick. */
        for (int64_t k = 0; k < r->n_front; k++) {
            memmove(y + k * n_obj, y + front[k] * n_obj, (size_t)n_obj * sizeof *y);
            all[k] = k;
        }
        r->chosen = index[front[se_pick_nearest_ideal(y, all, r->n_front, n_obj)]];
    }
    for (int64_t k = 0; k < r->n_front; k++)
        front[k] = index[front[k]];
    free(y);
    free(index);
    free(all);
    return AS_OK;
}

/* ---------------------------------------------------------- a stored run */

/* What reading a run's rows gathers. */
typedef struct reader {
    const se_space *space;
    const se_run_config *cfg;
    se_result *out;
    int64_t cap;
    as_status *st;
    as_code code;
} reader;

/* store_each_row visitor: a candidate's rounds arrive in order, so its
 * last round overwrites the earlier ones. */
static bool read_row(void *user, const store_row *row)
{
    reader *rd = user;
    se_result *out = rd->out;
    se_candidate *c = out->n_candidates ? &out->candidates[out->n_candidates - 1] : NULL;
    if (!c || c->iteration != row->iteration || c->slot != row->slot) {
        if (!as_vec_reserve(&out->candidates, &rd->cap, out->n_candidates + 1,
                            sizeof *out->candidates)) {
            rd->code = as_fail(rd->st, AS_ENOMEM, "out of memory reading a run's candidates");
            return false;
        }
        c = &out->candidates[out->n_candidates++];
        memset(c, 0, sizeof *c);
        c->iteration = row->iteration;
        c->slot = row->slot;
        c->from_store = true;
        if (!se_point_parse(rd->space, row->point, &c->point)) {
            rd->code = as_fail(rd->st, AS_EINVAL,
                               "iteration %lld slot %d: point %s is not one of space %s",
                               (long long)row->iteration, row->slot, row->point, rd->space->name);
            return false;
        }
    }
    c->rounds = row->round + 1;
    c->sw_budget = row->sw_budget;
    c->outcome.feasible = row->feasible;
    snprintf(c->outcome.reason, sizeof c->outcome.reason, "%s", row->reason);
    c->outcome.metrics = row->metrics;
    for (int k = 0; k < rd->cfg->n_objectives; k++)
        c->y[k] = se_metrics_objective(&row->metrics, rd->cfg->objectives[k]);
    c->scalar = se_metrics_objective(&row->metrics, rd->cfg->scalar);
    return true;
}

/* The chosen candidate's stored details: its last round's workloads. */
typedef struct chosen_detail {
    int64_t iteration;
    int32_t slot, round;
    json_t *workloads;
    as_status *st;
    as_code code;
} chosen_detail;

static bool find_chosen_detail(void *user, const store_row *row)
{
    chosen_detail *d = user;
    if (row->iteration != d->iteration || row->slot != d->slot || row->round != d->round)
        return true;
    json_t *detail;
    d->code = as_json_parse(row->detail_json ? row->detail_json : "{}", "a stored candidate",
                            &detail, d->st);
    if (d->code == AS_OK) {
        d->workloads = json_incref(json_object_get(detail, "workloads"));
        json_decref(detail);
    }
    return false;
}

/* out->chosen_results: the chosen design's plan JSON per training
 * workload, from its last round's details. */
static as_code read_chosen_plans(store *db, int64_t run_id, const se_run_config *cfg,
                                 se_result *out, as_status *st)
{
    const se_candidate *c = &out->candidates[out->chosen];
    chosen_detail d = {c->iteration, c->slot, c->rounds - 1, NULL, st, AS_OK};
    as_code code = store_each_row(db, run_id, find_chosen_detail, &d, st);
    if (code == AS_OK)
        code = d.code;
    out->chosen_results = calloc((size_t)cfg->n_workloads, sizeof *out->chosen_results);
    if (code == AS_OK && !out->chosen_results)
        code = as_fail(st, AS_ENOMEM, "out of memory reading the chosen design");
    for (int k = 0, train = 0; code == AS_OK && k < cfg->n_workloads; k++) {
        se_workload_result *w = &out->chosen_results[out->n_workloads++];
        w->name = cfg->model[k];
        w->validation = cfg->validation[k];
        w->outcome = c->outcome;
        if (!w->validation)
            w->plan_json = json_incref(json_array_get(d.workloads, (size_t)train++));
    }
    json_decref(d.workloads);
    return code;
}

as_code se_result_read(store *db, int64_t run_id, const se_space *s, const se_run_config *cfg,
                       se_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->run_id = run_id;
    out->chosen = -1;
    reader rd = {s, cfg, out, 0, st, AS_OK};
    as_code code = store_each_row(db, run_id, read_row, &rd, st);
    if (code == AS_OK)
        code = rd.code;
    if (code == AS_OK)
        code = se_result_front(out, cfg->n_objectives, st);
    if (code == AS_OK)
        code = store_hypervolume_curve(db, run_id, &out->curve_evaluations, &out->curve_hypervolume,
                                       &out->n_curve, st);
    if (code == AS_OK && out->chosen >= 0)
        code = read_chosen_plans(db, run_id, cfg, out, st);
    if (code != AS_OK)
        se_result_free(out);
    return code;
}
