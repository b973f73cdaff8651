/*
 * cmd_search.c -- `accelsearch search`: co-design hardware, fusion and
 * mapping for models under a budget, and report the Pareto front and the
 * design nearest its ideal point.
 */
#include "cli.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search/search.h"

#define DEFAULT_MODEL "resnet18"
#define MAX_MODELS 16

static const char search_usage[] =
    "usage: accelsearch search [options]\n"
    "\n"
    "Search the hardware of a design space jointly with the fusion and mapping of\n"
    "every layer, and report the Pareto-optimal designs.  With no options: CASCO on\n"
    "the edge space for " DEFAULT_MODEL ", about a minute on two cores.\n"
    "\n"
    "options:\n"
    "  --model MODEL          a model to design for (zoo name or .onnx; repeatable)\n"
    "  --validate-model MODEL report the chosen design on it too (repeatable)\n"
    "  --space S              edge (default), datacenter, or a space file (YAML)\n"
    "  --algo A               casco (default), mobo, bo, lcs, ga, random\n"
    "  --budget N             hardware candidates to evaluate (default 48)\n"
    "  --batch N              candidates per iteration (default 8)\n"
    "  --sw-budget N          fusion plans per candidate at full fidelity (default 2000)\n"
    "  --sh-rounds N          successive-halving rounds of casco (default 3)\n"
    "  --map-budget N         mappings per distinct tile problem (default 128)\n"
    "  --objectives LIST      of latency, energy, area, edp, perf_per_tdp (default\n"
    "                         latency,energy,area)\n"
    "  --scalar O             single objective of bo, lcs, ga (default edp on edge,\n"
    "                         perf_per_tdp on datacenter)\n"
    "  --aggregate A          geomean (default) or sum over several models\n"
    "  --threads N            candidates evaluated at once (default: the cores);\n"
    "                         results do not depend on it\n"
    "  --seed S               the run's seed (default 1)\n"
    "  --db FILE              the run store (default " CLI_DEFAULT_DB ")\n"
    "  --no-db                keep nothing on disk\n"
    "  --resume               continue the unfinished run of this configuration in --db\n"
    "  --json                 print one JSON object\n"
    "\n"
    "Ctrl-C stops after the candidates in flight and keeps everything found.\n";

typedef struct search_cli {
    se_workload workload[MAX_MODELS];
    int n_workloads;
    const char *space;
    se_run_options run;
    bool scalar_set;
    bool no_db;
    bool json;
} search_cli;

static int search_usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "accelsearch: %s '%s'\n\n%s", what, arg ? arg : "", search_usage);
    return CLI_EXIT_USAGE;
}

/* Parse "latency,energy,area" into o; false on an unknown name or too many. */
static bool parse_objectives(const char *list, se_run_options *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    o->n_objectives = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (o->n_objectives == SE_MAX_OBJECTIVES ||
            !se_objective_parse(tok, &o->objectives[o->n_objectives]))
            return false;
        o->n_objectives++;
    }
    return o->n_objectives > 0;
}

/* Add a model to design for (or to validate on). */
static int add_model(search_cli *c, const char *model, bool validation)
{
    if (c->n_workloads == MAX_MODELS)
        return search_usage_error("too many models; the last was", model);
    c->workload[c->n_workloads++] = (se_workload){.model = model, .validation = validation};
    return -1;
}

/* A count option's value into *out (at least min, at most max). */
static int count_option(const char *name, const char *v, int64_t min, int64_t max, int64_t *out)
{
    if (!cli_parse_count(v, min, out) || *out > max) {
        char what[96];
        snprintf(what, sizeof what, "%s wants an integer from %lld to %lld, got", name,
                 (long long)min, (long long)max);
        return search_usage_error(what, v);
    }
    return -1;
}

/* Options that take a value; -1 when a is one of them and v was good. */
static int parse_valued(search_cli *c, const char *a, const char *v)
{
    se_run_options *o = &c->run;
    int64_t n = 0;
    int rc = -1;
    if (!strcmp(a, "--model"))
        return add_model(c, v, false);
    if (!strcmp(a, "--validate-model"))
        return add_model(c, v, true);
    if (!strcmp(a, "--space")) {
        c->space = v;
    } else if (!strcmp(a, "--algo")) {
        if (!se_algo_parse(v, &o->algo))
            return search_usage_error("--algo wants casco, mobo, bo, lcs, ga or random, got", v);
    } else if (!strcmp(a, "--objectives")) {
        if (!parse_objectives(v, o))
            return search_usage_error("--objectives wants up to 4 of latency, energy, area, "
                                      "edp, perf_per_tdp, got",
                                      v);
    } else if (!strcmp(a, "--scalar")) {
        if (!se_objective_parse(v, &o->scalar))
            return search_usage_error("--scalar wants latency, energy, area, edp or "
                                      "perf_per_tdp, got",
                                      v);
        c->scalar_set = true;
    } else if (!strcmp(a, "--aggregate")) {
        int k = cli_name_index(v, (const char *const[]){"geomean", "sum", NULL});
        if (k < 0)
            return search_usage_error("--aggregate wants geomean or sum, got", v);
        o->aggregate = k == 0 ? SE_AGG_GEOMEAN : SE_AGG_SUM;
    } else if (!strcmp(a, "--db")) {
        o->db_path = v;
    } else if (!strcmp(a, "--budget")) {
        rc = count_option(a, v, 1, 1000000, &o->budget);
    } else if (!strcmp(a, "--batch")) {
        if ((rc = count_option(a, v, 1, 64, &n)) < 0)
            o->batch = (int)n;
    } else if (!strcmp(a, "--sw-budget")) {
        rc = count_option(a, v, 8, INT64_C(1) << 40, &o->sw_budget);
    } else if (!strcmp(a, "--sh-rounds")) {
        if ((rc = count_option(a, v, 1, 8, &n)) < 0)
            o->sh_rounds = (int)n;
    } else if (!strcmp(a, "--map-budget")) {
        rc = count_option(a, v, 1, INT64_C(1) << 40, &o->map_budget);
    } else if (!strcmp(a, "--threads")) {
        if ((rc = count_option(a, v, 1, 1024, &n)) < 0)
            o->threads = (int)n;
    } else if (!strcmp(a, "--seed")) {
        if ((rc = count_option(a, v, 0, INT64_MAX, &n)) < 0)
            o->seed = (uint64_t)n;
    } else {
        return search_usage_error("unknown option", a);
    }
    return rc;
}

/* Parse argv into c; -1 on success, else an exit status. */
static int parse_search_options(int argc, char **argv, search_cli *c)
{
    se_run_options_default(&c->run);
    c->run.threads = omp_get_num_procs();
    c->run.db_path = CLI_DEFAULT_DB;
    c->space = "edge";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(search_usage, stdout);
            return CLI_EXIT_OK;
        }
        bool *flag = !strcmp(a, "--json")     ? &c->json
                     : !strcmp(a, "--resume") ? &c->run.resume
                     : !strcmp(a, "--no-db")  ? &c->no_db
                                              : NULL;
        if (flag) {
            *flag = true;
            continue;
        }
        if (i + 1 >= argc)
            return search_usage_error(a[0] == '-' ? "option needs a value:" : "unexpected argument",
                                      a);
        int rc = parse_valued(c, a, argv[++i]);
        if (rc >= 0)
            return rc;
    }
    if (c->no_db && c->run.resume)
        return search_usage_error("--resume needs the store; drop", "--no-db");
    if (c->no_db)
        c->run.db_path = NULL;
    bool any_training = false;
    for (int i = 0; i < c->n_workloads; i++)
        any_training |= !c->workload[i].validation;
    if (!any_training && add_model(c, DEFAULT_MODEL, false) >= 0)
        return CLI_EXIT_USAGE;
    return -1;
}

/* ------------------------------------------------------------ progress */

typedef struct search_progress {
    bool enabled;
} search_progress;

/* The progress line on a terminal: iteration, evaluations, best scalar,
 * hypervolume, elapsed. */
static void show_progress(void *user, const se_progress *p)
{
    const search_progress *sp = user;
    if (!sp->enabled)
        return;
    fprintf(stderr, "\r\033[Kiteration %lld/%lld  candidates %lld/%lld  best %.4g  HV %.4f  %.0f s",
            (long long)p->iteration + 1, (long long)p->n_iterations, (long long)p->evaluations,
            (long long)p->budget, p->best_scalar, p->hypervolume, p->elapsed_seconds);
    fflush(stderr);
}

/* ------------------------------------------------------------- reports */

/* "pe_x=14 pe_y=12 ..." of point p. */
static void params_text(const se_space *s, const se_point *p, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < s->n_params && len < size; k++) {
        const se_param *par = &s->param[k];
        int64_t v = se_param_value(par, p->index[k]);
        if (par->kind == SE_PARAM_ENUM)
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k ? " " : "", par->name,
                                    par->choice[v]);
        else
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%lld", k ? " " : "", par->name,
                                    (long long)v);
    }
}

static void print_front(const se_space *s, const se_result *r)
{
    printf("Pareto front: %lld designs\n", (long long)r->n_front);
    printf("  %4s %4s  %11s %11s %9s %8s %12s %12s  %s\n", "iter", "slot", "latency ms",
           "energy mJ", "area mm2", "TDP W", "EDP J*s", "perf/TDP", "parameters");
    for (int64_t k = 0; k < r->n_front; k++) {
        const se_candidate *c = &r->candidates[r->front[k]];
        char params[512];
        params_text(s, &c->point, params, sizeof params);
        printf("  %4lld %4d  %11.4f %11.4f %9.4f %8.4f %12.4e %12.4g  %s%s\n",
               (long long)c->iteration, c->slot, c->metrics.latency_s * 1e3,
               c->metrics.energy_pJ * 1e-9, c->metrics.area_mm2, c->metrics.power_W,
               c->metrics.edp_Js, c->metrics.perf_per_tdp, params,
               r->front[k] == r->chosen ? "  <- chosen" : "");
    }
}

/* One workload's result on the chosen design: totals and fusion groups. */
static void print_workload(const se_workload_result *w)
{
    printf("\n%s (%s): ", w->name, w->validation ? "validation" : "training");
    if (!w->feasible) {
        printf("infeasible: %s\n", w->reason);
        return;
    }
    printf("latency %.4f ms, energy %.4f mJ, EDP %.4e J*s, %d fusion groups\n",
           w->metrics.latency_s * 1e3, w->metrics.energy_pJ * 1e-9, w->metrics.edp_Js,
           w->cost.n_groups);
    printf("  %5s %12s %12s %12s  %s\n", "group", "cycles", "energy uJ", "DRAM KiB", "layers");
    for (int32_t gid = 0; gid < w->cost.n_groups; gid++) {
        const fu_group_cost *gc = &w->cost.groups[gid];
        printf("  %5d %12lld %12.3f %12.1f  ", gid, (long long)gc->cycles, gc->energy_pJ * 1e-6,
               gc->dram_bytes / 1024.0);
        int shown = 0;
        for (int32_t op = 0; op < w->plan.n_ops; op++)
            if (w->plan.group[op] == gid)
                printf("%s%s", shown++ ? ", " : "", w->graph->ops[op].name);
        printf("\n");
    }
}

static void print_text(const se_space *s, const search_cli *c, const se_result *r)
{
    printf("%s on the %s space, %lld candidates (%lld rounds computed, %lld from the store) in "
           "%.1f s\n",
           se_algo_name(c->run.algo), s->name, (long long)(r->n_candidates - 1),
           (long long)r->evaluations_computed, (long long)r->evaluations_loaded, r->seconds);
    if (r->run_id)
        printf("store: %s, run %lld\n", c->run.db_path, (long long)r->run_id);
    if (r->n_curve)
        printf("hypervolume (log10 objectives, reference one decade above the %s baseline): "
               "%.4f\n",
               s->baseline_name, r->curve_hypervolume[r->n_curve - 1]);
    print_front(s, r);
    if (r->chosen < 0) {
        printf("\nno feasible design found\n");
        return;
    }
    const se_candidate *chosen = &r->candidates[r->chosen];
    const se_candidate *base = &r->candidates[0];
    char params[512];
    params_text(s, &chosen->point, params, sizeof params);
    printf("\nchosen design (nearest the ideal point): iteration %lld, slot %d\n  %s\n",
           (long long)chosen->iteration, chosen->slot, params);
    printf("  area %.4f mm2, TDP %.4f W, latency %.4f ms, energy %.4f mJ, EDP %.4e J*s, "
           "perf/TDP %.4g /s/W\n",
           chosen->metrics.area_mm2, chosen->metrics.power_W, chosen->metrics.latency_s * 1e3,
           chosen->metrics.energy_pJ * 1e-9, chosen->metrics.edp_Js, chosen->metrics.perf_per_tdp);
    if (base->feasible && base->rounds > 0)
        printf("  against the %s baseline: latency x%.3f, energy x%.3f, area x%.3f, EDP x%.3f\n",
               s->baseline_name, chosen->metrics.latency_s / base->metrics.latency_s,
               chosen->metrics.energy_pJ / base->metrics.energy_pJ,
               chosen->metrics.area_mm2 / base->metrics.area_mm2,
               chosen->metrics.edp_Js / base->metrics.edp_Js);
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++)
        print_workload(&r->chosen_results[k]);
}

/* The metrics of a design as JSON members. */
static void json_metrics(cli_json *j, const se_metrics *m)
{
    cli_json_double_field(j, "latency_s", m->latency_s);
    cli_json_double_field(j, "energy_pJ", m->energy_pJ);
    cli_json_double_field(j, "area_mm2", m->area_mm2);
    cli_json_double_field(j, "power_W", m->power_W);
    cli_json_double_field(j, "edp", m->edp_Js);
    cli_json_double_field(j, "perf_per_tdp", m->perf_per_tdp);
}

/* A candidate as a JSON object: where it came from, params, metrics. */
static void json_candidate(cli_json *j, const se_space *s, const se_candidate *c)
{
    cli_json_begin_object(j);
    cli_json_int_field(j, "iteration", c->iteration);
    cli_json_int_field(j, "slot", c->slot);
    cli_json_key(j, "params");
    cli_json_begin_object(j);
    for (int k = 0; k < s->n_params; k++) {
        const se_param *par = &s->param[k];
        int64_t v = se_param_value(par, c->point.index[k]);
        if (par->kind == SE_PARAM_ENUM)
            cli_json_string_field(j, par->name, par->choice[v]);
        else
            cli_json_int_field(j, par->name, v);
    }
    cli_json_end_object(j);
    cli_json_bool_field(j, "feasible", c->feasible);
    if (!c->feasible)
        cli_json_string_field(j, "reason", c->reason);
    else
        json_metrics(j, &c->metrics);
    cli_json_int_field(j, "rounds", c->rounds);
    cli_json_int_field(j, "sw_budget", c->sw_budget);
    cli_json_end_object(j);
}

/* The chosen design's per-workload results, groups with their layers. */
static void json_workload(cli_json *j, const se_workload_result *w)
{
    cli_json_begin_object(j);
    cli_json_string_field(j, "model", w->name);
    cli_json_bool_field(j, "validation", w->validation);
    cli_json_bool_field(j, "feasible", w->feasible);
    if (!w->feasible) {
        cli_json_string_field(j, "reason", w->reason);
        cli_json_end_object(j);
        return;
    }
    json_metrics(j, &w->metrics);
    cli_json_key(j, "groups");
    cli_json_begin_array(j);
    for (int32_t gid = 0; gid < w->cost.n_groups; gid++) {
        const fu_group_cost *gc = &w->cost.groups[gid];
        cli_json_begin_object(j);
        cli_json_key(j, "layers");
        cli_json_begin_array(j);
        for (int32_t op = 0; op < w->plan.n_ops; op++)
            if (w->plan.group[op] == gid)
                cli_json_string(j, w->graph->ops[op].name);
        cli_json_end_array(j);
        cli_json_int_field(j, "cycles", gc->cycles);
        cli_json_double_field(j, "energy_pJ", gc->energy_pJ);
        cli_json_int_field(j, "dram_bytes", gc->dram_bytes);
        cli_json_int_field(j, "onchip_bytes", gc->onchip_bytes);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_end_object(j);
}

static void print_json(const se_space *s, const search_cli *c, const se_result *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "space", s->name);
    cli_json_string_field(&j, "algo", se_algo_name(c->run.algo));
    cli_json_int_field(&j, "seed", (int64_t)c->run.seed);
    cli_json_int_field(&j, "run_id", r->run_id);
    cli_json_bool_field(&j, "interrupted", r->interrupted);
    cli_json_double_field(&j, "seconds", r->seconds);
    cli_json_int_field(&j, "rounds_computed", r->evaluations_computed);
    cli_json_int_field(&j, "rounds_loaded", r->evaluations_loaded);
    cli_json_key(&j, "objectives");
    cli_json_begin_array(&j);
    for (int k = 0; k < c->run.n_objectives; k++)
        cli_json_string(&j, se_objective_name(c->run.objectives[k]));
    cli_json_end_array(&j);
    cli_json_key(&j, "pareto");
    cli_json_begin_array(&j);
    for (int64_t k = 0; k < r->n_front; k++)
        json_candidate(&j, s, &r->candidates[r->front[k]]);
    cli_json_end_array(&j);
    cli_json_key(&j, "chosen");
    if (r->chosen < 0) {
        cli_json_null(&j);
    } else {
        json_candidate(&j, s, &r->candidates[r->chosen]);
    }
    cli_json_key(&j, "chosen_workloads");
    cli_json_begin_array(&j);
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++)
        json_workload(&j, &r->chosen_results[k]);
    cli_json_end_array(&j);
    cli_json_key(&j, "hypervolume_curve");
    cli_json_begin_array(&j);
    for (int64_t k = 0; k < r->n_curve; k++) {
        cli_json_begin_object(&j);
        cli_json_int_field(&j, "evaluations", r->curve_evaluations[k]);
        cli_json_double_field(&j, "hypervolume", r->curve_hypervolume[k]);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "evaluations");
    cli_json_begin_array(&j);
    for (int64_t k = 0; k < r->n_candidates; k++)
        if (r->candidates[k].rounds > 0)
            json_candidate(&j, s, &r->candidates[k]);
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    fputc('\n', stdout);
}

int cli_search(int argc, char **argv)
{
    search_cli c = {0};
    int rc = parse_search_options(argc, argv, &c);
    if (rc >= 0)
        return rc;
    as_status st;
    as_status_clear(&st);
    se_space space;
    if (se_space_load(c.space, &space, &st) != AS_OK) {
        fprintf(stderr, "accelsearch: %s\n", st.message);
        return cli_exit_for(st.code);
    }
    if (!c.scalar_set && space.template_kind == SE_TEMPLATE_DATAPATH)
        c.run.scalar = SE_OBJ_TDP_SECONDS;
    volatile int stop = 0;
    search_progress progress = {.enabled = isatty(STDERR_FILENO)};
    c.run.stop_flag = &stop;
    c.run.progress = show_progress;
    c.run.progress_user = &progress;
    cli_catch_interrupt(&stop);
    se_result result;
    as_code code = se_run(&space, c.workload, c.n_workloads, &c.run, &result, &st);
    if (progress.enabled)
        fputs("\r\033[K", stderr);
    if (code != AS_OK) {
        fprintf(stderr, "accelsearch: %s\n", st.message);
        se_result_free(&result);
        return cli_exit_for(code);
    }
    if (result.interrupted)
        fprintf(stderr, "accelsearch: interrupted: %lld candidate rounds kept%s\n",
                (long long)(result.evaluations_computed + result.evaluations_loaded),
                result.run_id ? "; continue with --resume" : "");
    if (c.json)
        print_json(&space, &c, &result);
    else
        print_text(&space, &c, &result);
    se_result_free(&result);
    return CLI_EXIT_OK;
}
