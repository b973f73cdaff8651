/*
 * cmd_map.c -- `accelsearch map`: the best mapping of one Timeloop-style
 * mapper input, or of every layer of a model on an architecture.
 */
#include "cli.h"

#include "../diff/diff.h"
#include "../report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct map_cli_options {
    cli_design_args design; /* --arch, --model and the model's options */
    const char *layer;
    const char *emit_dir;
    const char *report_path; /* --report: the HTML report */
    bool json;
    bool algorithm_set, objective_set, threads_set, seed_set;
    int algorithm; /* index into algorithm_names */
    int objective; /* index into objective_names */
    int64_t threads;
    int64_t seed;
    int64_t budget;
    double time_s; /* --time: FADiff's seconds per problem */
    bool no_padding;
    int weights; /* --weights: cli_weights_mode */
    bool weights_set;
    cli_output *out; /* --csv, -o */
} map_cli_options;

/* The spellings of --algo and --objective, and what they select. */
static const char *const algorithm_names[] = {"heuristic", "random", "exhaustive", "fadiff", NULL};
static const map_algorithm algorithms[] = {MAP_ALGO_HEURISTIC, MAP_ALGO_RANDOM_PRUNED,
                                           MAP_ALGO_EXHAUSTIVE};
/* --algo fadiff: FADiff's gradient descent (src/diff), not the mapper. */
#define ALGO_FADIFF 3
static const char *const objective_names[] = {"edp", "energy", "latency", NULL};
static const map_metric objectives[] = {MAP_METRIC_EDP, MAP_METRIC_ENERGY, MAP_METRIC_CYCLES};

/* Old spellings, kept as aliases for one release (static: the tables
 * outlive the functions that build them). */
static const char *const old_algo[] = {"algorithm", NULL};
static const char *const old_map_budget[] = {"budget", NULL};

enum { MAP_MAX_OPTIONS = 28 };

/* The command `map`, its options writing into o. */
static cli_command map_command(cli_option *options, map_cli_options *o)
{
    int n = 0;
    n += cli_add_design_options(options + n, &o->design);
    options[n] = cli_enum("algo", &o->algorithm, algorithm_names,
                          "the mapper (default heuristic; fadiff: gradient descent on the "
                          "relaxed cost model)");
    options[n].given = &o->algorithm_set;
    options[n++].aliases = old_algo;
    options[n] = cli_enum("objective", &o->objective, objective_names,
                          "what the mapper minimises (default edp)");
    options[n++].given = &o->objective_set;
    options[n] = cli_int("map-budget", "N", &o->budget, 1, INT64_MAX,
                         "mappings to evaluate per problem (default: the search's own end)");
    options[n++].aliases = old_map_budget;
    options[n++] = cli_double("time", "SECONDS", &o->time_s, 0, 1e9,
                              "--algo fadiff: seconds per distinct problem (default: its budget)");
    options[n] = cli_seed_option(&o->seed);
    options[n++].given = &o->seed_set;
    options[n] = cli_threads_option(&o->threads);
    options[n++].given = &o->threads_set;
    options[n++] = cli_flag("no-padding", &o->no_padding, "do not pad awkward dimensions");
    options[n++] = cli_string("layer", "NAME", &o->layer, "map only this layer of the model");
    options[n++] = cli_weights_option(&o->weights, &o->weights_set);
    n += cli_add_model_options(options + n, &o->design.load, true);
    cli_design_batch_help(options, n);
    options[n++] = cli_epilogue_option(&o->design.no_epilogue_fusion);
    options[n++] = cli_string("emit-timeloop", "DIR", &o->emit_dir,
                              "write each chosen mapping as a timeloop-model input");
    options[n++] = cli_string("report", "FILE.html", &o->report_path,
                              "with --model: also write a self-contained HTML report (per-layer\n"
                              "time and energy, utilisation, roofline, mappings)");
    options[n++] = cli_json_option(&o->json);
    n += cli_add_output_options(options + n, o->out,
                                "write the table as CSV (\"-\": standard output, instead of\n"
                                "the text): with --model one row per layer, else one per\n"
                                "level and data space of the mapping");
    return (cli_command){
        .name = "map",
        .synopsis = "map INPUT.yaml [ERT.yaml [ART.yaml]] [options]\n"
                    "map --arch PRESET|FILE --model MODEL [options]",
        .about = "The first form maps the single problem of a timeloop-mapper input "
                 "(architecture,\nproblem, constraints, mapper settings: the file's search "
                 "size, victory condition\nand timeout apply to --algo random, Timeloop's "
                 "random-pruned search); the\nsecond maps every compute layer of a model (zoo "
                 "name or .onnx) layer by layer,\nidentical layers once.\n",
        .epilog = "Ctrl-C stops the search and prints the best found so far (exit status 130).\n",
        .options = options,
        .n_options = n,
        .max_positional = 3,
    };
}

/* Parse the command line; CLI_PARSED, or an exit status. */
static int parse_map_options(cli_command *cmd, int argc, char **argv, map_cli_options *o)
{
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    bool network = o->design.arch || o->design.model;
    if (network ? (!o->design.arch || !o->design.model || cmd->n_positional)
                : cmd->n_positional == 0)
        return cli_usage_error(cmd, "give either INPUT.yaml or both --arch and --model");
    if (!network && cli_is_onnx_path(cmd->positional[0]))
        return cli_usage_error(cmd, "'%s' is an ONNX model: give it as --model, with --arch",
                               cmd->positional[0]);
    if (o->time_s > 0 && (!o->algorithm_set || o->algorithm != ALGO_FADIFF))
        return cli_usage_error(cmd, "--time bounds --algo fadiff; the mapper takes --map-budget");
    if (!network && o->report_path)
        return cli_usage_error(cmd, "--report draws a model's layers: give --arch and --model");
    if (!network && o->weights_set)
        return cli_usage_error(cmd, "--weights is about a model's layers: give --arch and --model");
    if (o->emit_dir && cli_weights_mode(o->weights, o->weights_set) == MAP_WEIGHTS_RESIDENT)
        return cli_usage_error(cmd, "--emit-timeloop writes what Timeloop can evaluate, weights "
                                    "read from DRAM: use --weights streamed (its default)");
    return CLI_PARSED;
}

/* The command line's search choices over the defaults (or the file's). */
static void apply_search_options(const map_cli_options *o, map_search_options *s)
{
    if (o->algorithm_set && o->algorithm != ALGO_FADIFF)
        s->algorithm = algorithms[o->algorithm];
    if (o->objective_set)
        s->objective = (map_objective){1, {objectives[o->objective]}};
    if (o->seed_set)
        s->seed = (uint64_t)o->seed;
    s->threads = o->threads_set ? (int)o->threads : cli_default_threads();
    if (o->budget > 0)
        s->search_size = o->budget;
    if (o->no_padding)
        s->allow_padding = false;
}

/* The HTML report of a layer-by-layer costing at path (report.h). */
static as_code write_network_report(const char *path, const wl_graph *g, const arch_spec *a,
                                    const map_network_result *r, as_status *st)
{
    char title[256];
    snprintf(title, sizeof title, "accelsearch map: %s on %s", g->name, a->name);
    return cli_write_report(path, title, rp_network_data(g, a, r, cli_fused_layer_name, st), st);
}

static volatile int interrupted;

/* Write DIR/NAME.yaml (architecture, problem, mapping) with its energy and
 * area tables DIR/NAME.ERT.yaml and DIR/NAME.ART.yaml, so that
 * `timeloop-model` and `accelsearch eval` re-evaluate the mapping. */
static as_code emit_timeloop(const char *dir, const char *name, const map_timeloop_case *c,
                             as_status *st)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return as_fail(st, AS_EIO, "%s: cannot create: %s", dir, strerror(errno));
    char input[4096], ert[4096], art[4096];
    snprintf(input, sizeof input, "%s/%s.yaml", dir, name);
    snprintf(ert, sizeof ert, "%s/%s.ERT.yaml", dir, name);
    snprintf(art, sizeof art, "%s/%s.ART.yaml", dir, name);
    as_code rc = map_timeloop_save(c, input, st);
    return rc == AS_OK ? map_timeloop_save_tables(c, ert, art, st) : rc;
}

/* ------------------------------------------------------ single problem */

/* Run the search to its end in steps, showing progress and stopping on
 * Ctrl-C with the best found so far. */
static void run_search(map_search *s, int64_t expected)
{
    enum { STEP = 256 };
    cli_progress p;
    cli_progress_init(&p, "mapping");
    while (!interrupted && map_search_step(s, STEP))
        cli_progress_update(&p, map_search_evaluated(s),
                            expected > 0 ? expected : map_search_evaluated(s) + STEP);
    cli_progress_end(&p);
}

/* FADiff's options from the command line. */
static df_options fadiff_options(const map_cli_options *o)
{
    df_options d;
    df_options_default(&d);
    if (o->seed_set)
        d.seed = (uint64_t)o->seed;
    d.threads = o->threads_set ? (int)o->threads : cli_default_threads();
    d.time_limit_seconds = o->time_s;
    d.stop_flag = &interrupted;
    return d;
}

/* What one problem's search found, for the report. */
typedef struct single_result {
    int64_t evaluated, valid;
    const char *unit; /* what evaluated counts */
    double seconds;
    const double *curve; /* FADiff: (seconds, EDP) pairs */
    int n_curve;
} single_result;

/* Print (or emit) the mapping c->model.mapping evaluated to e. */
static int report_single(const cli_command *cmd, const map_cli_options *o, map_mapper_case *c,
                         const map_eval *e, const single_result *r)
{
    as_status st;
    as_status_clear(&st);
    int rc = CLI_EXIT_OK;
    if (interrupted) {
        fprintf(stderr, "accelsearch: interrupted; the best mapping so far follows\n");
        rc = CLI_EXIT_INTERRUPTED;
    }
    if (o->emit_dir && emit_timeloop(o->emit_dir, c->model.problem_name, &c->model, &st) != AS_OK)
        return cli_fail(cmd, &st);
    if (o->out->csv.out)
        cli_csv_eval(&o->out->csv, &c->model.arch, e);
    if (!cli_output_usual(o->out))
        return rc;
    if (o->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_eval_members(&j, &c->model.arch, e);
        cli_json_key(&j, "mapping");
        cli_json_mapping(&j, &c->model.arch, c->model.dim_names, &c->model.mapping);
        cli_json_int_field(&j, "mappings_evaluated", r->evaluated);
        cli_json_int_field(&j, "valid_mappings", r->valid);
        if (r->curve) {
            cli_json_key(&j, "curve");
            cli_json_begin_array(&j);
            for (int i = 0; i < r->n_curve; i++) {
                cli_json_begin_object(&j);
                cli_json_double_field(&j, "seconds", r->curve[2 * i]);
                cli_json_double_field(&j, "edp_J_cycle", r->curve[2 * i + 1]);
                cli_json_end_object(&j);
            }
            cli_json_end_array(&j);
        }
        cli_json_double_field(&j, "seconds", r->seconds);
        cli_json_bool_field(&j, "interrupted", interrupted);
        cli_json_end_object(&j);
    } else {
        cli_print_mapping(&c->model.arch, c->model.dim_names, &c->model.mapping);
        putchar('\n');
        cli_print_eval(&c->model.arch, e);
        printf("%-16s %lld (%lld valid) in %s\n", r->unit, (long long)r->evaluated,
               (long long)r->valid, CLI_ENG(r->seconds, "s"));
    }
    return rc;
}

/* FADiff on the case's problem: descents until the budget (--map-budget,
 * else FADiff's default) or --time, showing progress. */
static int fadiff_single(const cli_command *cmd, const map_cli_options *o, map_mapper_case *c,
                         map_eval *e)
{
    as_status st;
    as_status_clear(&st);
    df_options d = fadiff_options(o);
    df_map_search *s;
    double start = cli_seconds_now();
    if (df_map_search_init(&s, &c->model.arch, &c->model.problem, &d, &st) != AS_OK)
        return cli_fail(cmd, &st);
    int64_t total = o->budget > 0 ? o->budget : o->time_s > 0 ? INT64_MAX : d.descents_per_step;
    cli_progress p;
    cli_progress_init(&p, "descents");
    for (int64_t done = 0; done < total && !interrupted; done = df_map_search_descents(s)) {
        if (!df_map_search_step(s, d.threads > 0 ? d.threads : 1))
            break;
        cli_progress_update(&p, df_map_search_descents(s),
                            total == INT64_MAX ? df_map_search_descents(s) + 1 : total);
    }
    cli_progress_end(&p);
    int rc;
    if (!df_map_search_best(s, &c->model.mapping, e)) {
        rc = cli_failf(cmd, CLI_EXIT_FAILURE, "no_mapping",
                       "%s: FADiff found no valid mapping (%lld descents)", cmd->positional[0],
                       (long long)df_map_search_descents(s));
    } else {
        single_result r = {.evaluated = df_map_search_descents(s),
                           .valid = df_map_search_descents(s),
                           .unit = "descents",
                           .seconds = cli_seconds_now() - start};
        r.curve = df_map_search_curve(s, &r.n_curve);
        rc = report_single(cmd, o, c, e, &r);
    }
    df_map_search_free(s);
    return rc;
}

static int map_single(const cli_command *cmd, const map_cli_options *o)
{
    map_mapper_case *c = malloc(sizeof *c);
    map_eval *e = malloc(sizeof *e);
    map_search *s = NULL;
    as_status st;
    as_status_clear(&st);
    int rc = CLI_EXIT_OK;
    const char *const *files = cmd->positional;
    if (!c || !e) {
        rc = cli_failf(cmd, CLI_EXIT_FAILURE, "out_of_memory", "out of memory");
        goto done;
    }
    if (map_timeloop_load_mapper(files[0], cmd->n_positional > 1 ? files[1] : NULL,
                                 cmd->n_positional > 2 ? files[2] : NULL, c, &st) != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    if (o->algorithm_set && o->algorithm == ALGO_FADIFF) {
        rc = fadiff_single(cmd, o, c, e);
        goto done;
    }
    /* The file's settings describe Timeloop's random-pruned search; they
     * apply when that is asked for.  By default accelsearch's heuristic
     * runs, to its own end, on the file's objective and constraints. */
    if (!o->algorithm_set || algorithms[o->algorithm] != MAP_ALGO_RANDOM_PRUNED) {
        c->options.search_size = 0;
        c->options.victory_condition = 0;
        c->options.consecutive_invalid_limit = 0;
        c->options.algorithm = MAP_ALGO_HEURISTIC;
    }
    apply_search_options(o, &c->options);
    double start = cli_seconds_now();
    if (map_search_init(&s, &c->model.arch, &c->model.problem, &c->options, &st) != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    run_search(s, c->options.search_size);
    single_result r = {.evaluated = map_search_evaluated(s),
                       .valid = map_search_valid(s),
                       .unit = "mappings",
                       .seconds = cli_seconds_now() - start};
    if (!map_search_best(s, &c->model.mapping, e, &c->model.problem)) {
        rc = cli_failf(cmd, CLI_EXIT_FAILURE, "no_mapping",
                       "%s: no valid mapping found (%lld evaluated)", files[0],
                       (long long)map_search_evaluated(s));
        goto done;
    }
    rc = report_single(cmd, o, c, e, &r);
done:
    map_search_free(s);
    free(c);
    free(e);
    return rc;
}

/* ------------------------------------------------------------- network */

/* One timeloop-model input per distinct problem (the first layer of each
 * class names it), with the canonical dimension names. */
static as_code emit_network(const char *dir, const wl_graph *g, const arch_spec *a,
                            const map_network_result *r, as_status *st)
{
    map_timeloop_case *c = malloc(sizeof *c);
    if (!c)
        return as_fail(st, AS_ENOMEM, "out of memory");
    as_code rc = AS_OK;
    for (int32_t i = 0; i < r->n_layers && rc == AS_OK; i++) {
        const map_layer_result *l = &r->layers[i];
        bool first = l->problem_class >= 0 && l->mapped;
        for (int32_t k = 0; first && k < i; k++)
            first = r->layers[k].problem_class != l->problem_class;
        if (!first)
            continue;
        rc = map_timeloop_layer_case(g, a, r, i, c, st);
        if (rc == AS_OK)
            rc = emit_timeloop(dir, c->problem_name, c, st);
    }
    free(c);
    return rc;
}

static void network_progress(void *user, int32_t done, int32_t total)
{
    cli_progress_update(user, done, total);
}

/* MAC operations per MAC of layer l on a: 1 for an as-hardware or
 * native problem and for layers without one (map_mac_passes). */
static int64_t layer_mac_passes(const arch_spec *a, const map_layer_result *l)
{
    return l->problem_class >= 0 ? map_mac_passes(&a->compute, &l->problem) : 1;
}

/* One line when some layers' operands are in a format the MACs lack: how
 * many, and the most MAC operations one of their MACs takes. */
static void print_emulation(const arch_spec *a, const map_network_result *r)
{
    int32_t emulated = 0;
    int64_t most = 1;
    for (int32_t i = 0; i < r->n_layers; i++) {
        int64_t passes = layer_mac_passes(a, &r->layers[i]);
        emulated += passes > 1;
        most = passes > most ? passes : most;
    }
    static const char *const formats[] = {
        [ARCH_NUMBER_INT] = "int", [ARCH_NUMBER_FP] = "fp", [ARCH_NUMBER_BF16] = "bf"};
    if (emulated > 0)
        printf("%-24s %d layers at up to %lld MAC operations per MAC (%s%d MACs; "
               "docs/precision.md)\n",
               "MAC emulation", (int)emulated, (long long)most, formats[a->compute.mac_number],
               a->compute.mac_bits);
}

static void print_network_table(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                                bool no_epilogue, const wl_epilogue_stats *lowered)
{
    char fused[256];
    printf("%-44s %-18s %14s %12s %12s %7s %14s\n", "layer", "op", "cycles", "latency", "energy",
           "util", "DRAM bytes");
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        const wl_op *op = &g->ops[l->op];
        const char *name = cli_fused_layer_name(g, l->op, fused, sizeof fused);
        size_t len = strlen(name);
        printf(
            "%-44s %-18s %14lld %12s %12s %6.1f%% %14lld\n", len > 44 ? name + len - 44 : name,
            op->op_type, (long long)l->cycles, CLI_ENG((double)l->cycles * a->cycle_seconds, "s"),
            CLI_ENG(l->energy_pJ * 1e-12, "J"), 100.0 * l->utilization, (long long)l->dram_bytes);
    }
    printf("\n%-24s %lld\n", "cycles", (long long)r->cycles);
    printf("%-24s %s\n", "latency", CLI_ENG(r->latency_s, "s"));
    printf("%-24s %s\n", "energy", CLI_ENG(r->energy_pJ * 1e-12, "J"));
    printf("%-24s %s\n", "EDP", CLI_ENG(r->edp_J_cycle * a->cycle_seconds, "J*s"));
    printf("%-24s %lld\n", "DRAM bytes", (long long)r->dram_bytes);
    printf("%-24s %s\n", "op intensity", CLI_NUM(r->op_intensity, "ops/byte"));
    cli_print_weights(a, &r->weights, 24);
    printf("%-24s %d distinct of %d layers, %lld mappings evaluated\n", "problems mapped",
           r->n_distinct_problems, r->n_layers, (long long)r->mappings_evaluated);
    print_emulation(a, r);
    cli_print_epilogue_summary(no_epilogue, lowered, r->n_epilogue_ops);
    for (int c = 0; c < MAP_N_COMPONENTS; c++)
        printf("%-24s %-15s %s\n", c == 0 ? "energy by component" : "",
               map_component_name((map_component)c),
               CLI_ENG(r->energy_by_component_pJ[c] * 1e-12, "J"));
    map_op_type_total by_type[WL_OP_COUNT];
    int n = map_network_by_op_type(g, r, by_type);
    printf("\n%-20s %7s %16s %8s %12s %14s\n", "op type", "layers", "cycles", "share", "energy",
           "DRAM bytes");
    for (int i = 0; i < n; i++)
        printf("%-20s %7d %16lld %7.1f%% %12s %14lld\n", wl_op_kind_name(by_type[i].kind),
               by_type[i].n_layers, (long long)by_type[i].cycles,
               r->cycles ? 100.0 * (double)by_type[i].cycles / (double)r->cycles : 0.0,
               CLI_ENG(by_type[i].energy_pJ * 1e-12, "J"), (long long)by_type[i].dram_bytes);
}

/* The layers as CSV: one row per layer, the JSON's figures with their
 * units in the column names. */
static void print_network_csv(cli_csv *c, const wl_graph *g, const arch_spec *a,
                              const map_network_result *r)
{
    static const char *const head[] = {
        "layer",       "op",     "problem_class", "mapped",    "epilogue_ops", "macs",
        "padded_macs", "cycles", "latency_s",     "energy_pJ", "utilization",  "dram_bytes",
        NULL};
    for (int k = 0; head[k]; k++)
        cli_csv_string(c, head[k]);
    for (int k = 0; k < MAP_N_COMPONENTS; k++) {
        char name[64];
        snprintf(name, sizeof name, "energy_%s_pJ", map_component_name((map_component)k));
        cli_csv_string(c, name);
    }
    cli_csv_end_row(c);
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        cli_csv_string(c, cli_layer_name(g, l->op));
        cli_csv_string(c, g->ops[l->op].op_type);
        cli_csv_int(c, l->problem_class);
        cli_csv_bool(c, l->mapped);
        cli_csv_int(c, l->n_epilogue_ops);
        cli_csv_int(c, l->macs);
        cli_csv_int(c, l->padded_macs);
        cli_csv_int(c, l->cycles);
        cli_csv_double(c, (double)l->cycles * a->cycle_seconds);
        cli_csv_double(c, l->energy_pJ);
        cli_csv_double(c, l->utilization);
        cli_csv_int(c, l->dram_bytes);
        for (int k = 0; k < MAP_N_COMPONENTS; k++)
            cli_csv_double(c, l->energy_by_component_pJ[k]);
        cli_csv_end_row(c);
    }
}

static void print_network_json(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                               bool no_epilogue, const wl_epilogue_stats *lowered, double seconds)
{
    cli_json j;
    cli_json_begin_design(&j, g, a);
    cli_json_key(&j, "totals");
    cli_json_begin_object(&j);
    cli_json_totals_members(&j, &(cli_totals){.cycles = r->cycles,
                                              .latency_s = r->latency_s,
                                              .energy_pJ = r->energy_pJ,
                                              .edp_J_cycle = r->edp_J_cycle,
                                              .dram_bytes = r->dram_bytes,
                                              .op_intensity = r->op_intensity});
    cli_json_end_object(&j);
    cli_json_weights(&j, a, &r->weights);
    cli_json_components(&j, "energy_by_component_pJ", r->energy_by_component_pJ);
    map_op_type_total by_type[WL_OP_COUNT];
    int n = map_network_by_op_type(g, r, by_type);
    cli_json_key(&j, "by_op_type");
    cli_json_begin_array(&j);
    for (int i = 0; i < n; i++) {
        cli_json_begin_object(&j);
        cli_json_string_field(&j, "op", wl_op_kind_name(by_type[i].kind));
        cli_json_int_field(&j, "layers", by_type[i].n_layers);
        cli_json_int_field(&j, "macs", by_type[i].macs);
        cli_json_int_field(&j, "cycles", by_type[i].cycles);
        cli_json_double_field(&j, "energy_pJ", by_type[i].energy_pJ);
        cli_json_int_field(&j, "dram_bytes", by_type[i].dram_bytes);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_epilogue_summary(&j, no_epilogue, lowered, r->n_epilogue_ops);
    cli_json_int_field(&j, "distinct_problems", r->n_distinct_problems);
    cli_json_int_field(&j, "mappings_evaluated", r->mappings_evaluated);
    cli_json_double_field(&j, "seconds", seconds);
    cli_json_bool_field(&j, "interrupted", r->interrupted);
    cli_json_key(&j, "layers");
    cli_json_begin_array(&j);
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        cli_json_begin_object(&j);
        cli_json_string_field(&j, "name", cli_layer_name(g, l->op));
        cli_json_string_field(&j, "op", g->ops[l->op].op_type);
        cli_json_layer_epilogue(&j, g, l->op);
        cli_json_int_field(&j, "problem_class", l->problem_class);
        cli_json_bool_field(&j, "mapped", l->mapped);
        cli_json_int_field(&j, "macs", l->macs);
        cli_json_int_field(&j, "padded_macs", l->padded_macs);
        cli_json_int_field(&j, "cycles", l->cycles);
        cli_json_double_field(&j, "energy_pJ", l->energy_pJ);
        cli_json_components(&j, "energy_by_component_pJ", l->energy_by_component_pJ);
        cli_json_double_field(&j, "utilization", l->utilization);
        cli_json_int_field(&j, "dram_bytes", l->dram_bytes);
        if (l->problem_class >= 0) {
            cli_json_key(&j, "mapping");
            cli_json_mapping(&j, a, NULL, &l->mapping);
            if (l->mapping.group_pack > 1) /* absent: one group at a time */
                cli_json_int_field(&j, "group_pack", l->mapping.group_pack);
            if (layer_mac_passes(a, l) > 1) /* absent: native operands */
                cli_json_int_field(&j, "mac_passes", layer_mac_passes(a, l));
        }
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
}

static int map_network(const cli_command *cmd, const map_cli_options *o)
{
    as_status st;
    as_status_clear(&st);
    arch_spec *a = malloc(sizeof *a);
    wl_graph *g = NULL;
    map_network_result r = {0};
    int rc = CLI_EXIT_OK;
    if (!a)
        return cli_failf(cmd, CLI_EXIT_FAILURE, "out_of_memory", "out of memory");
    wl_epilogue_stats lowered;
    if (cli_load_design(&o->design, a, &g, &st) != AS_OK ||
        cli_lower_for_inference(o->design.no_epilogue_fusion, g, &lowered, &st) != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    if (o->emit_dir && a->compute.kind != ARCH_COMPUTE_MAC) {
        rc = cli_failf(
            cmd, CLI_EXIT_USAGE, "invalid_input",
            "--emit-timeloop: %s computes with %s, which Timeloop's format "
            "cannot describe; only designs of independent MAC units can be emitted",
            a->name, a->compute.kind == ARCH_COMPUTE_SYSTOLIC ? "systolic arrays" : "vector units");
        goto done;
    }
    map_network_options no;
    map_network_options_default(&no);
    apply_search_options(o, &no.search);
    no.budget_per_problem = o->budget;
    no.only_layer = o->layer;
    /* Timeloop's format cannot say that weights stay on chip: emitted
     * layers are costed with weights streamed (parse_map_options refuses
     * --weights resident there). */
    no.weights = o->emit_dir ? MAP_WEIGHTS_STREAMED : cli_weights_mode(o->weights, o->weights_set);
    no.stop_flag = &interrupted;
    df_options fadiff = fadiff_options(o);
    if (o->algorithm_set && o->algorithm == ALGO_FADIFF) {
        no.problem_search = df_problem_search;
        no.problem_search_user = &fadiff;
    }
    cli_progress progress;
    cli_progress_init(&progress, "mapping layers");
    no.progress = network_progress;
    no.progress_user = &progress;
    double start = cli_seconds_now();
    as_code code = map_network_evaluate(g, a, &no, &r, &st);
    cli_progress_end(&progress);
    if (code != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    if (r.interrupted) {
        fprintf(stderr, "accelsearch: interrupted; results so far follow\n");
        rc = CLI_EXIT_INTERRUPTED;
    }
    cli_warn_narrowing(&r);
    if (o->emit_dir && r.n_epilogue_ops > 0) /* a Timeloop input holds one loop nest */
        fprintf(stderr,
                "accelsearch: note: the Timeloop inputs hold each layer's loop nest only: `eval` "
                "of them costs a layer without its epilogue (%d ops here; --no-epilogue-fusion "
                "for layers that agree exactly)\n",
                (int)r.n_epilogue_ops);
    if (o->emit_dir && emit_network(o->emit_dir, g, a, &r, &st) != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    if (o->report_path && write_network_report(o->report_path, g, a, &r, &st) != AS_OK) {
        rc = cli_fail(cmd, &st);
        goto done;
    }
    if (o->out->csv.out)
        print_network_csv(&o->out->csv, g, a, &r);
    if (cli_output_usual(o->out) && o->json)
        print_network_json(g, a, &r, o->design.no_epilogue_fusion, &lowered,
                           cli_seconds_now() - start);
    else if (cli_output_usual(o->out))
        print_network_table(g, a, &r, o->design.no_epilogue_fusion, &lowered);
done:
    map_network_free(&r);
    wl_graph_free(g);
    free(a);
    return rc;
}

int cli_map(int argc, char **argv)
{
    cli_output out = {0};
    map_cli_options o = {.out = &out};
    cli_option options[MAP_MAX_OPTIONS];
    cli_command cmd = map_command(options, &o);
    int rc = parse_map_options(&cmd, argc, argv, &o);
    if (rc != CLI_PARSED)
        return rc;
    if ((rc = cli_output_begin(&cmd, &out, o.json)) != CLI_PARSED)
        return rc;
    cli_catch_interrupt(&interrupted);
    return cli_output_end(&cmd, &out,
                          o.design.model ? map_network(&cmd, &o) : map_single(&cmd, &o));
}
