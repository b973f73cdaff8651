/*
 * cmd_fuse.c -- `accelsearch fuse`: a fusion plan for a model on an
 * architecture, beside the layer-by-layer baseline.
 */
#include "cli.h"

#include "report/report.h"

#include <stdlib.h>
#include <string.h>

#include "diff/diff.h"
#include "fusion/fusion.h"

typedef struct fuse_options {
    cli_design_args design; /* --arch, --model and the model's options */
    fu_search_options search;
    int algo, objective; /* indexes into algo_names, objective_names */
    int64_t plan_budget, old_budget, mapper_budget, seed, threads;
    double time_limit_s;
    bool json;
    int weights; /* --weights: cli_weights_mode */
    bool weights_set;
    const char *report_path; /* --report: NULL for none */
    cli_output out;          /* --csv (groups), --csv-layers, -o */
} fuse_options;

static const char *const algo_names[] = {"none", "ga", "dp", "ilp", "fadiff", NULL};
static const fu_algorithm algos[] = {FU_ALGO_NONE, FU_ALGO_GA, FU_ALGO_DP, FU_ALGO_ILP};
/* --algo fadiff: FADiff's joint search of mappings and fusion (src/diff),
 * not a fusion search with the mapper inside. */
#define ALGO_FADIFF 4
static const char *const objective_names[] = {"casco", "edp", "energy", "latency", NULL};
static const fu_objective objectives[] = {FU_OBJ_CASCO, FU_OBJ_EDP, FU_OBJ_ENERGY, FU_OBJ_CYCLES};

/* Old spellings, kept as aliases for one release (static: the tables
 * outlive the functions that build them). */
static const char *const old_map_budget[] = {"mapper-budget", NULL};
static const char *const time_aliases[] = {"time", NULL};

enum { FUSE_MAX_OPTIONS = 30 };

/* The command `fuse`, its options writing into o. */
static cli_command fuse_command(cli_option *options, fuse_options *o)
{
    int n = 0;
    n += cli_add_design_options(options + n, &o->design);
    options[n++] = cli_enum("algo", &o->algo, algo_names,
                            "none (layer by layer), ga (default), dp, ilp; fadiff: mappings\n"
                            "and fusion jointly by gradient descent (FADiff)");
    options[n++] = cli_enum("objective", &o->objective, objective_names,
                            "casco (default: (off-chip + on-chip energy) x cycles),\n"
                            "edp, energy, latency");
    options[n++] = cli_int("plan-budget", "N", &o->plan_budget, 1, INT64_MAX,
                           "fusion plans to evaluate (ga), descents (fadiff, default 4)");
    options[n] = cli_double("time-limit", "SECONDS", &o->time_limit_s, 0, 1e9,
                            "seconds for the ILP's solver (ilp) or the whole search (fadiff)");
    options[n++].aliases = time_aliases;
    options[n] = cli_int("map-budget", "N", &o->mapper_budget, 1, INT64_MAX,
                         "map each tile problem with the heuristic mapper, N mappings\n"
                         "(as search does at full fidelity; default: to its own end)");
    options[n++].aliases = old_map_budget;
    options[n++] = cli_seed_option(&o->seed);
    options[n++] = cli_threads_option(&o->threads);
    options[n++] = cli_weights_option(&o->weights, &o->weights_set);
    n += cli_add_model_options(options + n, &o->design.load, true);
    cli_design_batch_help(options, n);
    options[n++] = cli_epilogue_option(&o->design.no_epilogue_fusion);
    options[n++] = cli_json_option(&o->json);
    options[n++] = cli_string("report", "FILE.html", &o->report_path,
                              "also write a self-contained HTML report: the fusion groups\n"
                              "over the layers with their DRAM bytes, time and energy per\n"
                              "group, a roofline, and each layer's mapping");
    n += cli_add_output_options(options + n, &o->out,
                                "write the groups as CSV, one row per fusion group (\"-\":\n"
                                "standard output, instead of the text)");
    o->out.csv2_option = "csv-layers";
    options[n++] = cli_string("csv-layers", "FILE", &o->out.csv2_path,
                              "write the compute layers as CSV, one row per layer with its\n"
                              "group, tile problem and mapping's cycles and energy");
    options[n] = cli_int("budget", "N", &o->old_budget, 1, INT64_MAX,
                         "plans (ga) or seconds (ilp): use --plan-budget or --time-limit");
    options[n++].deprecated = true;
    return (cli_command){
        .name = "fuse",
        .synopsis = "fuse --arch PRESET|FILE --model MODEL [options]",
        .about = "Group the model's layers so that intermediates stay on chip, tile by tile, "
                 "and\ncompare with running them layer by layer.\n",
        .epilog = "Ctrl-C stops the search and prints the best plan so far (exit status 130).\n",
        .options = options,
        .n_options = n,
    };
}

/* Parse argv into o; CLI_PARSED, or an exit status. */
static int parse_fuse_options(cli_command *cmd, int argc, char **argv, fuse_options *o)
{
    fu_search_options_default(&o->search);
    o->algo = 1; /* ga */
    o->seed = (int64_t)o->search.seed;
    o->threads = cli_default_threads();
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (!o->design.arch || !o->design.model)
        return cli_usage_error(cmd, "fuse needs --arch and --model");
    if (o->algo == ALGO_FADIFF && o->mapper_budget > 0)
        return cli_usage_error(cmd, "--algo fadiff finds the mappings itself: drop --map-budget");
    if (o->algo == ALGO_FADIFF && o->out.csv2_path)
        return cli_usage_error(cmd, "--csv-layers lists each layer's mapping as the fusion "
                                    "evaluator maps it, and fadiff keeps its own: use --algo "
                                    "ga, dp, ilp or none");
    if (o->algo == ALGO_FADIFF && o->report_path)
        return cli_usage_error(cmd, "--report draws each layer's mapping as the fusion evaluator "
                                    "maps it, and fadiff keeps its own: use --algo ga, dp, ilp "
                                    "or none");
    o->search.algorithm = o->algo == ALGO_FADIFF ? FU_ALGO_NONE : algos[o->algo];
    o->search.objective = objectives[o->objective];
    if (o->old_budget > 0) { /* plans for ga, seconds for ilp, as it always meant */
        o->search.budget = o->old_budget;
        o->search.time_limit_seconds = (double)o->old_budget;
    }
    if (o->plan_budget > 0)
        o->search.budget = o->plan_budget;
    if (o->time_limit_s > 0)
        o->search.time_limit_seconds = o->time_limit_s;
    o->search.seed = (uint64_t)o->seed;
    o->search.threads = (int)o->threads;
    return CLI_PARSED;
}

static const char *const halo_names[] = {"recompute", "cache_rows", "cache_all"};

/* The ops of group k, in order, into ops[]; returns how many. */
static int32_t group_ops(const wl_graph *g, const fu_plan *p, int32_t k, int32_t *ops)
{
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_order; i++)
        if (p->group[g->order[i]] == k)
            ops[n++] = g->order[i];
    return n;
}

static void print_totals_row(const char *label, const arch_spec *a, const fu_plan_cost *c)
{
    printf("%-14s %14lld %12s %12s %12s %12lld %14s\n", label, (long long)c->cycles,
           CLI_ENG(c->latency_s, "s"), CLI_ENG(c->energy_pJ * 1e-12, "J"),
           CLI_ENG(c->edp_J_cycle * a->cycle_seconds, "J*s"), (long long)c->dram_bytes,
           CLI_NUM(c->op_intensity, "ops/byte"));
}

static void print_fuse_table(const wl_graph *g, const arch_spec *a, const fuse_options *o,
                             const wl_epilogue_stats *lowered, const fu_plan *p,
                             const fu_plan_cost *c, const fu_plan_cost *base, int32_t *ops)
{
    char first[256], last[256];
    printf("%5s %-40s %7s %11s %10s %13s %13s %14s %12s\n", "group", "layers", "count", "tile",
           "halo", "on-chip B", "DRAM B", "cycles", "energy");
    for (int32_t k = 0; k < p->n_groups; k++) {
        const fu_group_cost *gc = &c->groups[k];
        int32_t n = group_ops(g, p, k, ops);
        char layers[96], tile[32];
        snprintf(layers, sizeof layers, n > 1 ? "%.18s..%.18s" : "%.38s",
                 cli_fused_layer_name(g, ops[0], first, sizeof first),
                 cli_fused_layer_name(g, ops[n - 1], last, sizeof last));
        snprintf(tile, sizeof tile, "%lldx%lld", (long long)gc->tile.rows,
                 (long long)gc->tile.cols);
        printf("%5d %-40s %7d %11s %10s %13lld %13lld %14lld %12s\n", (int)k, layers, (int)n, tile,
               halo_names[gc->halo], (long long)gc->onchip_bytes, (long long)gc->dram_bytes,
               (long long)gc->cycles, CLI_ENG(gc->energy_pJ * 1e-12, "J"));
    }
    printf("\n%-14s %14s %12s %12s %12s %12s %14s\n", "", "cycles", "latency", "energy", "EDP",
           "DRAM bytes", "op intensity");
    print_totals_row("fused", a, c);
    print_totals_row("layer by layer", a, base);
    printf("%-14s %13.3fx %11.3fx %11.3fx %11.3fx %11.3fx %13.3fx\n", "ratio",
           (double)c->cycles / (double)base->cycles, c->latency_s / base->latency_s,
           c->energy_pJ / base->energy_pJ, c->edp_J_cycle / base->edp_J_cycle,
           (double)c->dram_bytes / (double)base->dram_bytes, c->op_intensity / base->op_intensity);
    printf("%-14s %d groups for %d layers, %lld recomputed MACs\n", "plan", (int)p->n_groups,
           (int)base->n_groups, (long long)c->recomputed_macs);
    cli_print_weights(a, &c->weights, 14);
    cli_print_epilogue_summary(o->design.no_epilogue_fusion, lowered, lowered->n_epilogue);
}

/* The groups as CSV: one row per group, with its first and last layer
 * (--csv-layers lists them all). */
static void print_groups_csv(cli_csv *csv, const wl_graph *g, const arch_spec *a, const fu_plan *p,
                             const fu_plan_cost *c, int32_t *ops)
{
    static const char *const head[] = {
        "group",          "layers",     "first_layer", "last_layer",
        "tile_rows",      "tile_cols",  "halo",        "tiles",
        "onchip_bytes",   "dram_bytes", "macs",        "recomputed_macs",
        "cycles",         "latency_s",  "energy_pJ",   "onchip_energy_pJ",
        "dram_energy_pJ", "valid",      NULL};
    cli_csv_header(csv, head);
    for (int32_t k = 0; k < p->n_groups; k++) {
        const fu_group_cost *gc = &c->groups[k];
        int32_t n = group_ops(g, p, k, ops);
        cli_csv_int(csv, k);
        cli_csv_int(csv, n);
        cli_csv_string(csv, cli_layer_name(g, ops[0]));
        cli_csv_string(csv, cli_layer_name(g, ops[n - 1]));
        cli_csv_int(csv, gc->tile.rows);
        cli_csv_int(csv, gc->tile.cols);
        cli_csv_string(csv, halo_names[gc->halo]);
        cli_csv_int(csv, gc->n_tiles);
        cli_csv_int(csv, gc->onchip_bytes);
        cli_csv_int(csv, gc->dram_bytes);
        cli_csv_int(csv, gc->macs);
        cli_csv_int(csv, gc->recomputed_macs);
        cli_csv_int(csv, gc->cycles);
        cli_csv_double(csv, (double)gc->cycles * a->cycle_seconds);
        cli_csv_double(csv, gc->energy_pJ);
        cli_csv_double(csv, gc->onchip_energy_pJ);
        cli_csv_double(csv, gc->dram_energy_pJ);
        cli_csv_bool(csv, gc->valid);
        cli_csv_end_row(csv);
    }
}

/* The compute layers as CSV: one row per layer (fu_plan_mappings' order:
 * group by group), its group, the problem it was mapped on (a fused
 * layer's tile) and the mapping's cycles and energy per run and in all. */
static as_code print_layers_csv(cli_csv *csv, fu_evaluator *e, const wl_graph *g, const fu_plan *p,
                                const fu_plan_cost *c, as_status *st)
{
    static const char *const head[] = {"group",
                                       "layer",
                                       "op",
                                       "macs",
                                       "problem",
                                       "tiles",
                                       "mapped",
                                       "cycles_per_tile",
                                       "energy_per_tile_pJ",
                                       "cycles_all_tiles",
                                       "energy_all_tiles_pJ",
                                       NULL};
    fu_layer_mapping *layers;
    int32_t n;
    if (fu_plan_mappings(e, p, c, &layers, &n, st) != AS_OK)
        return st->code;
    cli_csv_header(csv, head);
    for (int32_t i = 0; i < n; i++) {
        const fu_layer_mapping *l = &layers[i];
        wl_op_stats os;
        wl_op_stats_get(g, l->op, &os);
        char bounds[WL_NDIMS * 24];
        cli_csv_int(csv, l->group);
        cli_csv_string(csv, cli_layer_name(g, l->op));
        cli_csv_string(csv, g->ops[l->op].op_type);
        cli_csv_int(csv, os.macs);
        cli_csv_string(csv,
                       map_bounds_format(l->problem.bound, bounds, sizeof bounds) ? bounds : "");
        cli_csv_int(csv, l->n_tiles);
        cli_csv_bool(csv, l->found);
        cli_csv_int(csv, l->cycles);
        cli_csv_double(csv, l->energy_pJ);
        cli_csv_int(csv, l->cycles * l->n_tiles);
        cli_csv_double(csv, l->energy_pJ * (double)l->n_tiles);
        cli_csv_end_row(csv);
    }
    free(layers);
    return AS_OK;
}

static void json_totals(cli_json *j, const char *key, const fu_plan_cost *c)
{
    cli_json_key(j, key);
    cli_json_begin_object(j);
    cli_json_totals_members(j, &(cli_totals){.cycles = c->cycles,
                                             .latency_s = c->latency_s,
                                             .energy_pJ = c->energy_pJ,
                                             .has_energy_split = true,
                                             .onchip_energy_pJ = c->onchip_energy_pJ,
                                             .dram_energy_pJ = c->dram_energy_pJ,
                                             .edp_J_cycle = c->edp_J_cycle,
                                             .dram_bytes = c->dram_bytes,
                                             .op_intensity = c->op_intensity});
    cli_json_int_field(j, "recomputed_macs", c->recomputed_macs);
    cli_json_int_field(j, "groups", c->n_groups);
    cli_json_end_object(j);
}

/* What a search did, for the JSON. */
typedef struct fuse_run {
    int64_t evaluated;   /* plans (fusion searches) or descents (fadiff) */
    const double *curve; /* fadiff: (seconds, EDP) pairs */
    int n_curve;
} fuse_run;

static void print_fuse_json(const wl_graph *g, const arch_spec *a, const fuse_options *o,
                            const wl_epilogue_stats *lowered, const fu_plan *p,
                            const fu_plan_cost *c, const fu_plan_cost *base, const fuse_run *run,
                            int32_t *ops)
{
    char name[256];
    cli_json j;
    cli_json_begin_design(&j, g, a);
    cli_json_string_field(&j, "algorithm", algo_names[o->algo]);
    cli_json_int_field(&j, o->algo == ALGO_FADIFF ? "descents" : "plans_evaluated", run->evaluated);
    if (run->curve) {
        cli_json_key(&j, "curve");
        cli_json_begin_array(&j);
        for (int i = 0; i < run->n_curve; i++) {
            cli_json_begin_object(&j);
            cli_json_double_field(&j, "seconds", run->curve[2 * i]);
            cli_json_double_field(&j, "edp_J_cycle", run->curve[2 * i + 1]);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
    }
    cli_json_weights(&j, a, &c->weights);
    json_totals(&j, "totals", c);
    json_totals(&j, "baseline", base);
    cli_json_epilogue_summary(&j, o->design.no_epilogue_fusion, lowered, lowered->n_epilogue);
    cli_json_key(&j, "groups");
    cli_json_begin_array(&j);
    for (int32_t k = 0; k < p->n_groups; k++) {
        const fu_group_cost *gc = &c->groups[k];
        cli_json_begin_object(&j);
        cli_json_key(&j, "layers");
        cli_json_begin_array(&j);
        int32_t n = group_ops(g, p, k, ops);
        for (int32_t i = 0; i < n; i++)
            cli_json_string(&j, cli_fused_layer_name(g, ops[i], name, sizeof name));
        cli_json_end_array(&j);
        cli_json_key(&j, "tile");
        cli_json_begin_array(&j);
        cli_json_int(&j, gc->tile.rows);
        cli_json_int(&j, gc->tile.cols);
        cli_json_end_array(&j);
        cli_json_string_field(&j, "halo", halo_names[gc->halo]);
        cli_json_int_field(&j, "onchip_bytes", gc->onchip_bytes);
        cli_json_int_field(&j, "dram_bytes", gc->dram_bytes);
        cli_json_int_field(&j, "recomputed_macs", gc->recomputed_macs);
        cli_json_int_field(&j, "cycles", gc->cycles);
        cli_json_double_field(&j, "energy_pJ", gc->energy_pJ);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
}

static volatile int interrupted;

/* The HTML report of plan p (cost c, layer by layer base) of g on a at
 * path (report.h, kind "fusion"). */
static as_code write_fuse_report(const char *path, fu_evaluator *e, const wl_graph *g,
                                 const arch_spec *a, const fuse_options *o, const fu_plan *p,
                                 const fu_plan_cost *c, const fu_plan_cost *base, as_status *st)
{
    json_t *plan = fu_plan_json(e, p, c, st);
    if (!plan)
        return st->code;
    json_t *data = NULL;
    if (as_json_put(plan, "model", as_json_string(g->name)))
        data = rp_fusion_data(a, plan, algo_names[o->algo], base, st);
    else
        as_fail(st, AS_ENOMEM, "out of memory");
    json_decref(plan);
    char title[256];
    snprintf(title, sizeof title, "accelsearch fuse: %s on %s", g->name, a->name);
    return cli_write_report(path, title, data, st);
}

/* The precision conversion of the layer-by-layer baseline, warned about
 * with map's warning: the fusion library does not report it, so the
 * layers are costed once more by map_network_evaluate, the costing the
 * baseline's singleton groups share, which finds every mapping in the
 * cache the baseline filled (co->shared_mappings): no search runs again.
 * A failure here only loses the warning; the plans' costs say the rest. */
static void warn_baseline_narrowing(const wl_graph *g, const arch_spec *a,
                                    const fu_cost_options *co)
{
    map_network_options no;
    map_network_options_default(&no);
    memcpy(&no.search, &co->search, sizeof no.search); /* the cache key hashes its bytes */
    no.budget_per_problem = co->budget_per_problem;
    no.cache = co->shared_mappings;
    no.weights = co->weights; /* the same mapper's view of the design: cache hits */
    map_network_result r;
    as_status st;
    as_status_clear(&st);
    if (map_network_evaluate(g, a, &no, &r, &st) == AS_OK)
        cli_warn_narrowing(&r);
    map_network_free(&r);
}

/* FADiff's joint search of g on a (co: the cost options, its mappings
 * aside) for the descents of --plan-budget (default 4) or until
 * --time-limit, showing progress; *out is the search (the caller frees
 * it). */
static as_code run_fadiff(const wl_graph *g, const arch_spec *a, const fu_cost_options *co,
                          const fuse_options *o, df_fuse_search **out, as_status *st)
{
    df_options d;
    df_options_default(&d);
    d.seed = o->search.seed;
    d.threads = o->search.threads;
    d.time_limit_seconds = o->time_limit_s;
    d.stop_flag = &interrupted;
    fu_cost_options joint = *co;
    joint.shared_mappings = NULL; /* FADiff's mappings are its own */
    as_code code = df_fuse_search_init(out, g, a, &joint, &d, st);
    if (code != AS_OK)
        return code;
    int64_t total = o->plan_budget > 0 ? o->plan_budget : o->time_limit_s > 0 ? INT64_MAX : 4;
    int64_t chunk = 4; /* descents between progress updates */
    cli_progress progress;
    cli_progress_init(&progress, "descents");
    while (!interrupted && df_fuse_search_descents(*out) < total &&
           df_fuse_search_step(*out, total - df_fuse_search_descents(*out) < chunk
                                         ? total - df_fuse_search_descents(*out)
                                         : chunk))
        cli_progress_update(&progress, df_fuse_search_descents(*out),
                            total == INT64_MAX ? df_fuse_search_descents(*out) + 1 : total);
    cli_progress_end(&progress);
    return AS_OK;
}

int cli_fuse(int argc, char **argv)
{
    fuse_options o = {0};
    cli_option options[FUSE_MAX_OPTIONS];
    cli_command cmd = fuse_command(options, &o);
    int rc = parse_fuse_options(&cmd, argc, argv, &o);
    if (rc != CLI_PARSED || (rc = cli_output_begin(&cmd, &o.out, o.json)) != CLI_PARSED)
        return rc;
    as_status st;
    as_status_clear(&st);
    arch_spec *a = malloc(sizeof *a);
    wl_graph *g = NULL;
    fu_evaluator *e = NULL;
    fu_search *s = NULL;
    df_fuse_search *d = NULL;
    fu_plan plan = {0}, baseline = {0};
    fu_plan_cost cost = {0}, base_cost = {0};
    int32_t *ops = NULL;
    fu_cost_options co;
    fu_cost_options_default(&co);
    /* The heuristic mapper, bounded by the budget when one is given. */
    co.budget_per_problem = o.mapper_budget;
    co.search.seed = o.search.seed;
    co.search.threads = o.search.threads;
    co.weights = cli_weights_mode(o.weights, o.weights_set);
    rc = CLI_EXIT_OK;
    if (!a) {
        as_fail(&st, AS_ENOMEM, "out of memory");
        goto failed;
    }
    if (map_cache_new(&co.shared_mappings, &st) != AS_OK)
        goto failed;
    wl_epilogue_stats lowered;
    if (cli_load_design(&o.design, a, &g, &st) != AS_OK ||
        cli_lower_for_inference(o.design.no_epilogue_fusion, g, &lowered, &st) != AS_OK)
        goto failed;
    ops = malloc(((size_t)g->n_ops + 1) * sizeof *ops);
    if (!ops) {
        as_fail(&st, AS_ENOMEM, "out of memory");
        goto failed;
    }
    if (fu_evaluator_new(&e, g, a, &co, &st) != AS_OK || fu_plan_init(&baseline, g, &st) != AS_OK ||
        fu_plan_evaluate(e, &baseline, &base_cost, &st) != AS_OK)
        goto failed;
    warn_baseline_narrowing(g, a, &co);
    cli_catch_interrupt(&interrupted);
    fuse_run run = {0};
    if (o.algo == ALGO_FADIFF) {
        if (run_fadiff(g, a, &co, &o, &d, &st) != AS_OK ||
            df_fuse_search_best(d, &plan, &cost, &st) != AS_OK)
            goto failed;
        run.evaluated = df_fuse_search_descents(d);
        run.curve = df_fuse_search_curve(d, &run.n_curve);
    } else {
        if (fu_search_init(&s, e, &o.search, &st) != AS_OK)
            goto failed;
        cli_progress progress;
        cli_progress_init(&progress, "fusing");
        int64_t expected = o.search.budget > 0 ? o.search.budget : 0;
        while (!interrupted && fu_search_step(s, 16))
            cli_progress_update(&progress, fu_search_evaluated(s),
                                expected > 0 ? expected : fu_search_evaluated(s) + 16);
        cli_progress_end(&progress);
        if (fu_search_best(s, &plan, &cost, &st) != AS_OK)
            goto failed;
        run.evaluated = fu_search_evaluated(s);
    }
    if (interrupted) {
        fprintf(stderr, "accelsearch: interrupted; the best plan so far follows\n");
        rc = CLI_EXIT_INTERRUPTED;
    }
    if (o.out.csv.out)
        print_groups_csv(&o.out.csv, g, a, &plan, &cost, ops);
    if (o.out.csv2.out && print_layers_csv(&o.out.csv2, e, g, &plan, &cost, &st) != AS_OK)
        goto failed;
    if (cli_output_usual(&o.out) && o.json)
        print_fuse_json(g, a, &o, &lowered, &plan, &cost, &base_cost, &run, ops);
    else if (cli_output_usual(&o.out))
        print_fuse_table(g, a, &o, &lowered, &plan, &cost, &base_cost, ops);
    if (o.report_path &&
        write_fuse_report(o.report_path, e, g, a, &o, &plan, &cost, &base_cost, &st) != AS_OK)
        goto failed;
    goto done;
failed:
    rc = cli_fail(&cmd, &st);
done:
    fu_plan_cost_free(&cost);
    fu_plan_cost_free(&base_cost);
    fu_plan_free(&plan);
    fu_plan_free(&baseline);
    fu_search_free(s);
    df_fuse_search_free(d);
    fu_evaluator_free(e);
    map_cache_free(co.shared_mappings);
    wl_graph_free(g);
    free(ops);
    free(a);
    return cli_output_end(&cmd, &o.out, rc);
}
