/*
 * cmd_search.c -- `accelsearch search`: co-design hardware, fusion and
 * mapping for models under a budget, and report the Pareto front and the
 * design nearest its ideal point.
 */
#include "cli.h"

#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "search/search.h"

#define DEFAULT_MODEL "resnet18"
#define MAX_MODELS 16

/* The largest --batch (candidates per iteration) the search takes. */
#define MAX_SEARCH_BATCH 64

typedef struct search_cli {
    se_workload workload[MAX_MODELS];
    const char *models[MAX_MODELS];
    int model_tags[MAX_MODELS]; /* 1: from --validate-model */
    int n_models;
    const char *space;
    const char *objectives;
    se_run_options run;
    int algo, scalar, aggregate, fusion; /* indexes into the choices */
    int64_t hw_budget, batch, plan_budget, sh_rounds, map_budget, threads, seed;
    bool scalar_set, db_set, weights_set, fusion_set;
    int weights; /* --weights: cli_weights_mode */
    bool no_db;
    bool json;
    const char *emit_arch_dir;                   /* --emit-arch: NULL for none */
    const char *report_path;                     /* --report: NULL for none */
    const char *baseline_args[SE_MAX_BASELINES]; /* --baseline: presets or files */
    int n_baseline_args;
    se_baseline baselines[SE_MAX_BASELINES];
    cli_model_args load;
    const char *arch;   /* --arch: evaluate this design alone */
    const char *around; /* --around: the centre of the space */
    const char *vary;   /* --vary: its varied parameters */
    int64_t range;      /* --range */
    double max_area_mm2, max_power_W;
    bool space_set, range_set, max_area_set, max_power_set;
} search_cli;

static const char *const algo_names[] = {"casco", "mobo",   "bo",    "lcs",
                                         "ga",    "random", "hasco", NULL};
static const char *const fusion_names[] = {"none", "ga", "dp", "ilp", NULL}; /* fu_algorithm */
static const char *const objective_names[] = {"latency", "energy",       "area",
                                              "edp",     "perf_per_tdp", NULL};
static const char *const aggregate_names[] = {"geomean", "sum", NULL};

/* Old spellings, kept as aliases for one release (static: the tables
 * outlive the functions that build them). */
static const char *const old_hw_budget[] = {"budget", NULL};
static const char *const old_plan_budget[] = {"sw-budget", NULL};

enum { SEARCH_MAX_OPTIONS = 40 };

/* The command `search`, its options writing into c. */
static cli_command search_command(cli_option *options, search_cli *c)
{
    int n = 0;
    cli_option *models = &options[n];
    options[n++] =
        cli_string("model", "MODEL", NULL, "a model to design for (zoo name or .onnx; repeatable)");
    options[n++] = cli_string("validate-model", "MODEL", NULL,
                              "report the chosen design on it too (repeatable)");
    for (int k = 0; k < 2; k++) /* both fill one list, in command-line order */
        models[k] = (cli_option){.name = models[k].name,
                                 .kind = CLI_LIST,
                                 .metavar = "MODEL",
                                 .help = models[k].help,
                                 .target = c->models,
                                 .max = MAX_MODELS,
                                 .count = &c->n_models,
                                 .tags = c->model_tags,
                                 .tag = k};
    options[n] =
        cli_string("space", "S", &c->space, "edge (default), datacenter, or a space file (YAML)");
    options[n++].given = &c->space_set;
    options[n++] = cli_string("arch", "PRESET|FILE", &c->arch,
                              "evaluate this one design with the search's software stack\n"
                              "(fusion, budgets, weights, models) instead of searching");
    options[n++] = cli_string("around", "PRESET|FILE", &c->around,
                              "search the space centred on this design (with --vary)");
    options[n++] = cli_string("vary", "LIST", &c->vary,
                              "the parameters --around varies: some of pe_x, pe_y, sa_x,\n"
                              "sa_y, rf_bytes, glb_bytes, offchip_bytes, dram_mb_per_s");
    options[n] = cli_int("range", "F", &c->range, 2, SE_AROUND_MAX_RANGE,
                         "--around varies each parameter from its value / F to x F\n"
                         "(default 4)");
    options[n++].given = &c->range_set;
    options[n] = cli_double("max-area", "MM2", &c->max_area_mm2, 0, 1e9,
                            "--around: area budget of a design (default none)");
    options[n++].given = &c->max_area_set;
    options[n] = cli_double("max-power", "W", &c->max_power_W, 0, 1e9,
                            "--around: TDP budget of a design (default none)");
    options[n++].given = &c->max_power_set;
    options[n++] = cli_enum("algo", &c->algo, algo_names,
                            "the search engine (default casco; hasco: mobo without fusion)");
    options[n] = cli_enum("fusion", &c->fusion, fusion_names,
                          "each candidate's fusion search (default ga on edge, ilp on\n"
                          "datacenter, none with hasco)");
    options[n++].given = &c->fusion_set;
    options[n] = cli_int("hw-budget", "N", &c->hw_budget, 1, 1000000,
                         "hardware candidates to evaluate (default 48)");
    options[n++].aliases = old_hw_budget;
    options[n++] = cli_int("batch", "N", &c->batch, 1, MAX_SEARCH_BATCH,
                           "candidates per iteration (default 8)");
    options[n] = cli_int("plan-budget", "N", &c->plan_budget, 8, INT64_C(1) << 40,
                         "fusion plans per candidate at full fidelity (default 2000)");
    options[n++].aliases = old_plan_budget;
    options[n++] = cli_int("sh-rounds", "N", &c->sh_rounds, 1, 8,
                           "successive-halving rounds of casco (default 3)");
    options[n++] = cli_int("map-budget", "N", &c->map_budget, 1, INT64_C(1) << 40,
                           "heuristic mappings per distinct tile problem at full\n"
                           "fidelity; each earlier halving round a quarter (default 4000)");
    options[n] = cli_weights_option(&c->weights, &c->weights_set);
    options[n++].help = "resident: the weights stay on chip across inferences\n"
                        "(a design that cannot hold them is infeasible);\n"
                        "streamed: every inference reads them from DRAM\n"
                        "(default: per design, resident when they fit its outermost\n"
                        "on-chip level)";
    options[n++] = cli_string("objectives", "LIST", &c->objectives,
                              "up to 4 of latency, energy, area, edp, perf_per_tdp\n"
                              "(default latency,energy,area)");
    options[n] = cli_enum("scalar", &c->scalar, objective_names,
                          "single objective of bo, lcs, ga (default edp on edge,\n"
                          "perf_per_tdp on datacenter)");
    options[n++].given = &c->scalar_set;
    options[n++] = cli_enum("aggregate", &c->aggregate, aggregate_names,
                            "over several models (default geomean)");
    options[n++] = cli_threads_option(&c->threads);
    options[n++] = cli_seed_option(&c->seed);
    options[n] =
        cli_string("db", "FILE", &c->run.db_path, "the run store (default " CLI_DEFAULT_DB ")");
    options[n++].given = &c->db_set;
    options[n++] = cli_flag("no-db", &c->no_db, "keep nothing on disk");
    options[n++] = cli_flag("resume", &c->run.resume,
                            "continue the unfinished run of this configuration in --db");
    n += cli_add_model_options(options + n, &c->load, false);
    options[n++] = cli_epilogue_option(&c->run.no_epilogue_fusion);
    options[n++] = cli_json_option(&c->json);
    options[n++] = cli_string("report", "FILE.html", &c->report_path,
                              "also write a self-contained HTML report: the Pareto front among\n"
                              "every candidate, the hypervolume curve, the front's parameters\n"
                              "and the chosen design per workload (accelsearch report RUN\n"
                              "draws a stored run again)");
    options[n++] = cli_string("emit-arch", "DIR", &c->emit_arch_dir,
                              "write each Pareto-front design K as DIR/design-K.yaml\n"
                              "(architecture files that map, fuse and arch show read)");
    options[n++] = (cli_option){.name = "baseline",
                                .kind = CLI_LIST,
                                .metavar = "PRESET|FILE",
                                .help = "also evaluate this fixed design (a preset of `arch list`\n"
                                        "or an architecture file) with the candidates' software\n"
                                        "at its native batch, and report the chosen design's\n"
                                        "ratios to it (repeatable, up to 8)",
                                .target = c->baseline_args,
                                .max = SE_MAX_BASELINES,
                                .count = &c->n_baseline_args};
    return (cli_command){
        .name = "search",
        .synopsis = "search [options]",
        .about = "Search the hardware of a design space jointly with the fusion and mapping "
                 "of\nevery layer, and report the Pareto-optimal designs.  With no options: "
                 "CASCO on\nthe edge space for " DEFAULT_MODEL ", about a minute on two cores.\n",
        .epilog = "Ctrl-C stops after the candidates in flight, keeps everything found and\n"
                  "exits with status 130.\n",
        .options = options,
        .n_options = n,
    };
}

/* Parse "latency,energy,area" into o: known names, each once, at most
 * SE_MAX_OBJECTIVES; CLI_PARSED or an exit status. */
static int parse_objectives(const cli_command *cmd, const char *list, se_run_options *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    o->n_objectives = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        se_objective obj;
        if (!se_objective_parse(tok, &obj))
            return cli_usage_error(cmd,
                                   "--objectives wants up to %d of latency, energy, area, edp, "
                                   "perf_per_tdp, got '%s'",
                                   SE_MAX_OBJECTIVES, list);
        for (int k = 0; k < o->n_objectives; k++)
            if (o->objectives[k] == obj)
                return cli_usage_error(cmd, "--objectives names '%s' twice in '%s'", tok, list);
        if (o->n_objectives == SE_MAX_OBJECTIVES)
            return cli_usage_error(cmd, "--objectives wants at most %d objectives, got '%s'",
                                   SE_MAX_OBJECTIVES, list);
        o->objectives[o->n_objectives++] = obj;
    }
    if (o->n_objectives == 0)
        return cli_usage_error(cmd, "--objectives wants at least one objective, got '%s'", list);
    return CLI_PARSED;
}

/* Defaults of the run that the command line may change. */
static void search_defaults(search_cli *c)
{
    se_run_options_default(&c->run);
    c->run.db_path = CLI_DEFAULT_DB;
    c->space = "edge";
    c->hw_budget = c->run.budget;
    c->batch = c->run.batch;
    c->plan_budget = c->run.sw_budget;
    c->sh_rounds = c->run.sh_rounds;
    c->map_budget = c->run.map_budget;
    c->threads = cli_default_threads();
    c->seed = (int64_t)c->run.seed;
    c->range = SE_AROUND_DEFAULT_RANGE;
}

/* The options of --arch and --around that exclude or need each other;
 * CLI_PARSED or the usage error naming them. */
static int check_design_options(const cli_command *cmd, const search_cli *c)
{
    bool around_only = c->vary || c->range_set || c->max_area_set || c->max_power_set;
    const char *around_flag = c->vary           ? "--vary"
                              : c->range_set    ? "--range"
                              : c->max_area_set ? "--max-area"
                                                : "--max-power";
    if (c->arch && c->around)
        return cli_usage_error(cmd, "--arch and --around conflict: give one of them");
    if ((c->arch || c->around) && c->space_set)
        return cli_usage_error(cmd, "--space and %s conflict: give one of them",
                               c->arch ? "--arch" : "--around");
    if (!c->around && around_only)
        return cli_usage_error(cmd, "%s needs --around DESIGN (the space's centre)", around_flag);
    if (c->around && !c->vary)
        return cli_usage_error(cmd, "--around needs --vary LIST (the parameters to vary)");
    if (c->arch && (c->run.resume || c->emit_arch_dir || c->report_path))
        return cli_usage_error(cmd,
                               "--arch evaluates one design and stores no run: %s has nothing to "
                               "%s (fuse --arch %s --report draws one design)",
                               c->run.resume      ? "--resume"
                               : c->emit_arch_dir ? "--emit-arch"
                                                  : "--report",
                               c->run.resume ? "resume" : "write", c->arch);
    return CLI_PARSED;
}

/* Load every --baseline (arch_load: a preset name or a file) into
 * c->baselines, named as given. */
static as_code load_baselines(search_cli *c, as_status *st)
{
    for (int i = 0; i < c->n_baseline_args; i++) {
        se_baseline *b = &c->baselines[i];
        snprintf(b->name, sizeof b->name, "%s", c->baseline_args[i]);
        as_status why;
        as_status_clear(&why);
        if (cli_arch_load(c->baseline_args[i], &b->arch, &why) != AS_OK)
            return as_fail(st, why.code, "--baseline %s: %s", c->baseline_args[i], why.message);
    }
    c->run.n_baselines = c->n_baseline_args;
    c->run.baselines = c->baselines;
    return AS_OK;
}

/* Parse argv into c; CLI_PARSED, or an exit status. */
static int parse_search_options(cli_command *cmd, int argc, char **argv, search_cli *c)
{
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (c->objectives && (rc = parse_objectives(cmd, c->objectives, &c->run)) != CLI_PARSED)
        return rc;
    if ((rc = check_design_options(cmd, c)) != CLI_PARSED)
        return rc;
    if (c->no_db && c->run.resume)
        return cli_usage_error(cmd, "--resume needs the store; drop '--no-db'");
    if (c->no_db && c->db_set)
        return cli_usage_error(cmd, "--no-db and --db '%s' conflict: give one of them",
                               c->run.db_path);
    se_run_options *o = &c->run;
    se_algo_parse(algo_names[c->algo], &o->algo);
    if (c->scalar_set)
        se_objective_parse(objective_names[c->scalar], &o->scalar);
    o->aggregate = c->aggregate == 0 ? SE_AGG_GEOMEAN : SE_AGG_SUM;
    o->budget = c->hw_budget;
    o->batch = (int)c->batch;
    o->sw_budget = c->plan_budget;
    o->sh_rounds = (int)c->sh_rounds;
    o->map_budget = c->map_budget;
    o->fusion = (fu_algorithm)c->fusion;
    o->fusion_set = c->fusion_set;
    o->weights = cli_weights_mode(c->weights, c->weights_set);
    o->threads = (int)c->threads;
    o->seed = (uint64_t)c->seed;
    if (c->no_db)
        o->db_path = NULL;
    bool any_training = false;
    for (int i = 0; i < c->n_models; i++)
        any_training |= c->model_tags[i] == 0;
    if (!any_training && c->n_models == MAX_MODELS)
        return cli_usage_error(cmd, "too many models: at most %d", MAX_MODELS - 1);
    if (!any_training) {
        c->models[c->n_models] = DEFAULT_MODEL;
        c->model_tags[c->n_models++] = 0;
    }
    for (int i = 0; i < c->n_models; i++)
        c->workload[i] = (se_workload){.model = c->models[i],
                                       .validation = c->model_tags[i] == 1,
                                       .allow_unknown_ops = c->load.allow_unknown_ops};
    return CLI_PARSED;
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
    printf("  %4s %4s  %11s %11s %10s %10s %12s %14s  %s\n", "iter", "slot", "latency", "energy",
           "area", "TDP", "EDP", "perf/TDP", "parameters");
    for (int64_t k = 0; k < r->n_front; k++) {
        const se_candidate *c = &r->candidates[r->front[k]];
        const se_metrics *m = &c->outcome.metrics;
        char params[512];
        params_text(s, &c->point, params, sizeof params);
        printf("  %4lld %4d  %11s %11s %10s %10s %12s %14s  %s%s\n", (long long)c->iteration,
               c->slot, CLI_ENG(m->latency_s, "s"), CLI_ENG(m->energy_pJ * 1e-12, "J"),
               CLI_NUM(m->area_mm2, "mm2"), CLI_ENG(m->power_W, "W"), CLI_ENG(m->edp_Js, "J*s"),
               CLI_ENG(m->perf_per_tdp, "/s/W"), params,
               r->front[k] == r->chosen ? "  <- chosen" : "");
    }
}

/* One workload's result on the chosen design: totals and fusion groups. */
static void print_workload(const se_workload_result *w)
{
    char name[256];
    printf("\n%s (%s): ", w->name, w->validation ? "validation" : "training");
    if (!w->outcome.feasible) {
        printf("infeasible: %s\n", w->outcome.reason);
        return;
    }
    printf("latency %s, energy %s, EDP %s, %d fusion groups, weights %s\n",
           CLI_ENG(w->outcome.metrics.latency_s, "s"),
           CLI_ENG(w->outcome.metrics.energy_pJ * 1e-12, "J"),
           CLI_ENG(w->outcome.metrics.edp_Js, "J*s"), w->cost.n_groups,
           w->cost.weights.resident ? "resident" : "streamed");
    printf("  %5s %12s %12s %12s  %s\n", "group", "cycles", "energy", "DRAM bytes", "layers");
    for (int32_t gid = 0; gid < w->cost.n_groups; gid++) {
        const fu_group_cost *gc = &w->cost.groups[gid];
        printf("  %5d %12lld %12s %12lld  ", gid, (long long)gc->cycles,
               CLI_ENG(gc->energy_pJ * 1e-12, "J"), (long long)gc->dram_bytes);
        int shown = 0;
        for (int32_t op = 0; op < w->plan.n_ops; op++)
            if (w->plan.group[op] == gid)
                printf("%s%s", shown++ ? ", " : "",
                       cli_fused_layer_name(w->graph, op, name, sizeof name));
        printf("\n");
    }
}

/* The chosen design's metric over a fixed design's, for each ratio the
 * --baseline report gives (chosen / baseline). */
typedef struct baseline_ratios {
    double latency, energy, area, edp, perf_per_tdp;
} baseline_ratios;

static baseline_ratios ratios_of(const se_metrics *chosen, const se_metrics *base)
{
    return (baseline_ratios){
        .latency = chosen->latency_s / base->latency_s,
        .energy = chosen->energy_pJ / base->energy_pJ,
        .area = chosen->area_mm2 / base->area_mm2,
        .edp = chosen->edp_Js / base->edp_Js,
        .perf_per_tdp = chosen->perf_per_tdp / base->perf_per_tdp,
    };
}

/* One --baseline line: the chosen design's ratios to it, or why the
 * fixed design could not run. */
static void print_baseline(const char *name, const se_metrics *chosen, const se_outcome *base)
{
    printf("  against %s (fixed design): ", name);
    if (!base->feasible) {
        printf("infeasible: %s\n", base->reason);
        return;
    }
    baseline_ratios x = ratios_of(chosen, &base->metrics);
    printf("latency x%.3f, energy x%.3f, area x%.3f, EDP x%.3f, perf/TDP x%.3f\n", x.latency,
           x.energy, x.area, x.edp, x.perf_per_tdp);
}

static void print_text(const se_space *s, const search_cli *c, const se_result *r)
{
    printf("%s on the %s space, fusion %s, %lld candidates (%lld rounds computed, %lld from the "
           "store) in %s\n",
           se_algo_name(c->run.algo), s->name, se_fusion_name(se_run_fusion(s, &c->run)),
           (long long)(r->n_candidates - 1), (long long)r->evaluations_computed,
           (long long)r->evaluations_loaded, CLI_ENG(r->seconds, "s"));
    if (r->run_id)
        printf("store: %s, run %lld\n", c->run.db_path, (long long)r->run_id);
    if (r->n_curve)
        printf("hypervolume (log10 objectives, reference one decade above the %s baseline): "
               "%s\n",
               s->baseline_name, CLI_NUM(r->curve_hypervolume[r->n_curve - 1], NULL));
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
    const se_metrics *m = &chosen->outcome.metrics;
    printf("  area %s, TDP %s, latency %s, energy %s, EDP %s, perf/TDP %s\n",
           CLI_NUM(m->area_mm2, "mm2"), CLI_ENG(m->power_W, "W"), CLI_ENG(m->latency_s, "s"),
           CLI_ENG(m->energy_pJ * 1e-12, "J"), CLI_ENG(m->edp_Js, "J*s"),
           CLI_ENG(m->perf_per_tdp, "/s/W"));
    if (base->outcome.feasible && base->rounds > 0)
        printf("  against the %s baseline: latency x%.3f, energy x%.3f, area x%.3f, EDP x%.3f\n",
               s->baseline_name,
               chosen->outcome.metrics.latency_s / base->outcome.metrics.latency_s,
               chosen->outcome.metrics.energy_pJ / base->outcome.metrics.energy_pJ,
               chosen->outcome.metrics.area_mm2 / base->outcome.metrics.area_mm2,
               chosen->outcome.metrics.edp_Js / base->outcome.metrics.edp_Js);
    for (int i = 0; i < r->n_baselines; i++)
        print_baseline(c->run.baselines[i].name, &chosen->outcome.metrics,
                       &r->baseline_outcomes[i]);
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++)
        print_workload(&r->chosen_results[k]);
}

/* The metrics of a design as JSON members. */
static void json_metrics(cli_json *j, const se_metrics *m)
{
    for (int i = 0; i < SE_N_METRICS; i++)
        cli_json_double_field(j, se_metric_name(i), se_metric_value(m, i));
}

/* An outcome's members: "feasible", then "reason" or the metrics.
 * Returns whether it was feasible. */
static bool json_outcome(cli_json *j, const se_outcome *o)
{
    cli_json_bool_field(j, "feasible", o->feasible);
    if (!o->feasible)
        cli_json_string_field(j, "reason", o->reason);
    else
        json_metrics(j, &o->metrics);
    return o->feasible;
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
    json_outcome(j, &c->outcome);
    cli_json_int_field(j, "rounds", c->rounds);
    cli_json_int_field(j, "sw_budget", c->sw_budget);
    cli_json_end_object(j);
}

/* The chosen design's per-workload results, groups with their layers. */
static void json_workload(cli_json *j, const se_workload_result *w)
{
    char name[256];
    cli_json_begin_object(j);
    cli_json_string_field(j, "model", w->name);
    cli_json_bool_field(j, "validation", w->validation);
    if (!json_outcome(j, &w->outcome)) {
        cli_json_end_object(j);
        return;
    }
    cli_json_string_field(j, "weights", w->cost.weights.resident ? "resident" : "streamed");
    cli_json_key(j, "groups");
    cli_json_begin_array(j);
    for (int32_t gid = 0; gid < w->cost.n_groups; gid++) {
        const fu_group_cost *gc = &w->cost.groups[gid];
        cli_json_begin_object(j);
        cli_json_key(j, "layers");
        cli_json_begin_array(j);
        for (int32_t op = 0; op < w->plan.n_ops; op++)
            if (w->plan.group[op] == gid)
                cli_json_string(j, cli_fused_layer_name(w->graph, op, name, sizeof name));
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

/* The --baseline designs as JSON: name, feasible, reason, metrics, and
 * the chosen design's ratios to each (absent when it or nothing was
 * feasible).  No member without --baseline. */
static void json_baselines(cli_json *j, const search_cli *c, const se_result *r)
{
    if (c->run.n_baselines == 0)
        return;
    cli_json_key(j, "baselines");
    cli_json_begin_array(j);
    for (int i = 0; i < r->n_baselines; i++) {
        const se_outcome *base = &r->baseline_outcomes[i];
        cli_json_begin_object(j);
        cli_json_string_field(j, "name", c->run.baselines[i].name);
        cli_json_bool_field(j, "feasible", base->feasible);
        cli_json_string_field(j, "reason", base->feasible ? "" : base->reason);
        if (base->feasible) {
            cli_json_key(j, "metrics");
            cli_json_begin_object(j);
            json_metrics(j, &base->metrics);
            cli_json_end_object(j);
        }
        if (base->feasible && r->chosen >= 0) {
            baseline_ratios x =
                ratios_of(&r->candidates[r->chosen].outcome.metrics, &base->metrics);
            cli_json_key(j, "ratios");
            cli_json_begin_object(j);
            cli_json_double_field(j, "latency", x.latency);
            cli_json_double_field(j, "energy", x.energy);
            cli_json_double_field(j, "area", x.area);
            cli_json_double_field(j, "edp", x.edp);
            cli_json_double_field(j, "perf_per_tdp", x.perf_per_tdp);
            cli_json_end_object(j);
        }
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}

static void print_json(const se_space *s, const search_cli *c, const se_result *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "space", s->name);
    cli_json_string_field(&j, "algo", se_algo_name(c->run.algo));
    cli_json_string_field(&j, "fusion", se_fusion_name(se_run_fusion(s, &c->run)));
    cli_json_int_field(&j, "seed", (int64_t)c->run.seed);
    cli_json_string_field(&j, "weights", map_weights_name(c->run.weights));
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
    json_baselines(&j, c, r);
    cli_json_hypervolume_curve(&j, r->curve_evaluations, r->curve_hypervolume, r->n_curve);
    cli_json_key(&j, "evaluations");
    cli_json_begin_array(&j);
    for (int64_t k = 0; k < r->n_candidates; k++)
        if (r->candidates[k].rounds > 0)
            json_candidate(&j, s, &r->candidates[k]);
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    fputc('\n', stdout);
}

/* Make --emit-arch's directory (when missing) before the search, so that
 * an unwritable one fails at once instead of after the run. */
static as_code prepare_emit_dir(const char *dir, as_status *st)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return as_fail(st, AS_EIO, "--emit-arch %s: cannot create the directory: %s", dir,
                       strerror(errno));
    struct stat info;
    if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode))
        return as_fail(st, AS_EIO, "--emit-arch %s: not a directory", dir);
    if (access(dir, W_OK) != 0)
        return as_fail(st, AS_EIO, "--emit-arch %s: cannot write in the directory: %s", dir,
                       strerror(errno));
    return AS_OK;
}

/* Each front design k as dir/design-k.yaml, named "<space>-design-k" (as
 * `runs show --design k --emit-arch` names it, so both write the same
 * bytes), one line per file on out, the chosen one marked. */
static as_code emit_front(const se_space *s, const se_result *r, const char *dir, FILE *out,
                          as_status *st)
{
    if (r->n_front == 0)
        fprintf(out, "\nno front design to write in %s\n", dir);
    for (int64_t k = 0; k < r->n_front; k++) {
        char path[4096], name[ARCH_NAME_BYTES];
        snprintf(path, sizeof path, "%s/design-%lld.yaml", dir, (long long)k);
        se_emitted_arch_name(s, k, name, sizeof name);
        as_code code = se_space_emit_arch(s, &r->candidates[r->front[k]].point, name, path, st);
        if (code != AS_OK)
            return code;
        fprintf(out, "%s %s%s\n", k == 0 ? "\ndesigns written:" : "                ", path,
                r->front[k] == r->chosen ? "  <- chosen" : "");
    }
    return AS_OK;
}

/* The HTML report of result r (report.h) at c->report_path: the run's
 * configuration as the store keeps it, read back by the parser that
 * reads stored runs, so that a report of a run and of its stored copy
 * say the same. */
static as_code write_search_report(const se_space *s, const search_cli *c, const se_result *r,
                                   as_status *st)
{
    enum { CONFIG_BYTES = 8192 };
    char *text = malloc(CONFIG_BYTES);
    se_run_config *cfg = malloc(sizeof *cfg);
    as_code code = text && cfg ? AS_OK : as_fail(st, AS_ENOMEM, "out of memory");
    if (code == AS_OK) {
        se_run_config_text(s, c->workload, c->n_models, &c->run, text, CONFIG_BYTES);
        code = se_run_config_parse(text, cfg, st);
    }
    if (code == AS_OK) {
        char title[256];
        snprintf(title, sizeof title, "accelsearch search: %s", s->name);
        code = cli_write_report(c->report_path, title,
                                rp_search_data(s, cfg, c->run.seed, r, c->baselines, st), st);
    }
    free(text);
    free(cfg);
    return code;
}

/* The space around --around's design into *space: a design that does not
 * load fails as any input does; a --vary the design does not take is a
 * usage error naming --vary.  CLI_PARSED or an exit status. */
static int load_around(const cli_command *cmd, const search_cli *c, se_space *space)
{
    se_around how = {
        .range = (int)c->range, .max_area_mm2 = c->max_area_mm2, .max_power_W = c->max_power_W};
    snprintf(how.source, sizeof how.source, "%s", c->around);
    snprintf(how.vary, sizeof how.vary, "%s", c->vary);
    as_status st;
    as_status_clear(&st);
    arch_spec centre;
    if (cli_arch_load(c->around, &centre, &st) != AS_OK)
        return cli_fail(cmd, &st);
    if (se_space_around(&centre, &how, space, &st) != AS_OK)
        return cli_usage_error(cmd, "--vary %s: %s", c->vary, st.message);
    return CLI_PARSED;
}

/* One design's report (search --arch): its metrics, the --baseline
 * ratios, and per workload the plan's groups. */
static void print_design_text(const search_cli *c, const se_result *r)
{
    printf("design %s, fusion %s, seed %lld, weights %s, in %s\n", c->arch,
           se_fusion_name(se_run_fusion(NULL, &c->run)), (long long)c->run.seed,
           map_weights_name(c->run.weights), CLI_ENG(r->seconds, "s"));
    const se_outcome *o = &r->candidates[0].outcome;
    if (!o->feasible) {
        printf("  infeasible: %s\n", o->reason);
        return;
    }
    const se_metrics *m = &o->metrics;
    printf("  area %s, TDP %s, latency %s, energy %s, EDP %s, perf/TDP %s\n",
           CLI_NUM(m->area_mm2, "mm2"), CLI_ENG(m->power_W, "W"), CLI_ENG(m->latency_s, "s"),
           CLI_ENG(m->energy_pJ * 1e-12, "J"), CLI_ENG(m->edp_Js, "J*s"),
           CLI_ENG(m->perf_per_tdp, "/s/W"));
    for (int i = 0; i < r->n_baselines; i++)
        print_baseline(c->run.baselines[i].name, m, &r->baseline_outcomes[i]);
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++)
        print_workload(&r->chosen_results[k]);
}

/* The same as JSON: the search's members for a chosen design ("chosen"
 * with its metrics, "chosen_workloads", "baselines"), "design" naming it. */
static void print_design_json(const search_cli *c, const se_result *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "design", c->arch);
    cli_json_string_field(&j, "fusion", se_fusion_name(se_run_fusion(NULL, &c->run)));
    cli_json_int_field(&j, "seed", (int64_t)c->run.seed);
    cli_json_string_field(&j, "weights", map_weights_name(c->run.weights));
    cli_json_double_field(&j, "seconds", r->seconds);
    cli_json_key(&j, "chosen");
    cli_json_begin_object(&j);
    json_outcome(&j, &r->candidates[0].outcome);
    cli_json_int_field(&j, "rounds", r->candidates[0].rounds);
    cli_json_int_field(&j, "sw_budget", r->candidates[0].sw_budget);
    cli_json_end_object(&j);
    cli_json_key(&j, "chosen_workloads");
    cli_json_begin_array(&j);
    for (int k = 0; r->chosen_results && k < r->n_workloads; k++)
        json_workload(&j, &r->chosen_results[k]);
    cli_json_end_array(&j);
    json_baselines(&j, c, r);
    cli_json_end_object(&j);
    fputc('\n', stdout);
}

/* search --arch: the design evaluated as a --baseline is (se_run_design),
 * reported as a search's chosen design. */
static int search_design(const cli_command *cmd, search_cli *c)
{
    as_status st;
    as_status_clear(&st);
    arch_spec design;
    if (cli_arch_load(c->arch, &design, &st) != AS_OK || load_baselines(c, &st) != AS_OK)
        return cli_fail(cmd, &st);
    se_result result;
    as_code code = se_run_design(&design, c->workload, c->n_models, &c->run, &result, &st);
    if (code != AS_OK) {
        se_result_free(&result);
        return cli_fail(cmd, &st);
    }
    for (int k = 0; result.chosen_results && k < result.n_workloads; k++)
        if (result.chosen_results[k].graph)
            cli_print_warnings(result.chosen_results[k].graph);
    if (c->json)
        print_design_json(c, &result);
    else
        print_design_text(c, &result);
    se_result_free(&result);
    return CLI_EXIT_OK;
}

int cli_search(int argc, char **argv)
{
    search_cli c = {0};
    search_defaults(&c);
    cli_option options[SEARCH_MAX_OPTIONS];
    cli_command cmd = search_command(options, &c);
    int rc = parse_search_options(&cmd, argc, argv, &c);
    if (rc != CLI_PARSED)
        return rc;
    as_status st;
    as_status_clear(&st);
    if (c.arch)
        return search_design(&cmd, &c);
    se_space space;
    if (c.around && (rc = load_around(&cmd, &c, &space)) != CLI_PARSED)
        return rc;
    if (!c.around && se_space_load(c.space, &space, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    if (!c.scalar_set && space.template_kind == SE_TEMPLATE_DATAPATH)
        c.run.scalar = SE_OBJ_TDP_SECONDS;
    if (c.emit_arch_dir && prepare_emit_dir(c.emit_arch_dir, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    if (load_baselines(&c, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    volatile int stop = 0;
    search_progress progress = {.enabled = isatty(STDERR_FILENO) && cli_verbosity >= 0};
    c.run.stop_flag = &stop;
    c.run.progress = show_progress;
    c.run.progress_user = &progress;
    cli_catch_interrupt(&stop);
    se_result result;
    as_code code = se_run(&space, c.workload, c.n_models, &c.run, &result, &st);
    if (progress.enabled)
        fputs("\r\033[K", stderr);
    if (code != AS_OK) {
        se_result_free(&result);
        return cli_fail(&cmd, &st);
    }
    for (int k = 0; result.chosen_results && k < result.n_workloads; k++)
        if (result.chosen_results[k].graph) /* the models' warnings, as map and fuse tell them */
            cli_print_warnings(result.chosen_results[k].graph);
    if (result.interrupted)
        fprintf(stderr, "accelsearch: interrupted: %lld candidate rounds kept%s\n",
                (long long)(result.evaluations_computed + result.evaluations_loaded),
                result.run_id ? "; continue with --resume" : "");
    if (c.json)
        print_json(&space, &c, &result);
    else
        print_text(&space, &c, &result);
    rc = result.interrupted ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
    /* With --json the lines go to stderr: stdout stays one JSON object. */
    if (c.emit_arch_dir &&
        emit_front(&space, &result, c.emit_arch_dir, c.json ? stderr : stdout, &st) != AS_OK)
        rc = cli_fail(&cmd, &st);
    if (c.report_path && write_search_report(&space, &c, &result, &st) != AS_OK)
        rc = cli_fail(&cmd, &st);
    se_result_free(&result);
    return rc;
}
