/*
 * cmd_fuse.c -- `accelsearch fuse`: a fusion plan for a model on an
 * architecture, beside the layer-by-layer baseline.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "fusion/fusion.h"

static const char fuse_usage[] =
    "usage: accelsearch fuse --arch PRESET|FILE --model MODEL [options]\n"
    "\n"
    "Group the model's layers so that intermediates stay on chip, tile by tile, and\n"
    "compare with running them layer by layer.\n"
    "\n"
    "options:\n"
    "  --algo A               none (layer by layer), ga (default), dp, ilp\n"
    "  --objective O          casco (default: (off-chip + on-chip energy) x cycles), edp,\n"
    "                         energy, latency\n"
    "  --budget N             plans to evaluate (ga); seconds for the ILP's solver (ilp)\n"
    "  --mapper-budget N      map each tile problem by random-pruned search of N mappings\n"
    "                         (default: the heuristic mapper, to its own end)\n"
    "  --seed S, --threads N  as for map: results do not depend on the thread count\n"
    "  --batch N, --precision P   as for 'model info'\n"
    "  --json                 print one JSON object\n";

typedef struct fuse_options {
    const char *arch, *model;
    fu_search_options search;
    int64_t mapper_budget;
    int64_t batch;
    bool precision_set;
    wl_precision precision;
    bool json;
} fuse_options;

static int fuse_usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "accelsearch: %s '%s'\n\n%s", what, arg ? arg : "", fuse_usage);
    return CLI_EXIT_USAGE;
}

static const char *const algo_names[] = {"none", "ga", "dp", "ilp", NULL};
static const fu_algorithm algos[] = {FU_ALGO_NONE, FU_ALGO_GA, FU_ALGO_DP, FU_ALGO_ILP};
static const char *const objective_names[] = {"casco", "edp", "energy", "latency", NULL};
static const fu_objective objectives[] = {FU_OBJ_CASCO, FU_OBJ_EDP, FU_OBJ_ENERGY, FU_OBJ_CYCLES};

/* Parse argv into o; -1 on success, else an exit status. */
static int parse_fuse_options(int argc, char **argv, fuse_options *o)
{
    fu_search_options_default(&o->search);
    o->search.algorithm = FU_ALGO_GA;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n;
        int k;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(fuse_usage, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        } else if (!v) {
            return fuse_usage_error(a[0] == '-' ? "option needs a value:" : "unexpected argument",
                                    a);
        }
        i++;
        if (!strcmp(a, "--arch")) {
            o->arch = v;
        } else if (!strcmp(a, "--model")) {
            o->model = v;
        } else if (!strcmp(a, "--algo")) {
            if ((k = cli_name_index(v, algo_names)) < 0)
                return fuse_usage_error("--algo wants none, ga, dp or ilp, got", v);
            o->search.algorithm = algos[k];
        } else if (!strcmp(a, "--objective")) {
            if ((k = cli_name_index(v, objective_names)) < 0)
                return fuse_usage_error("--objective wants casco, edp, energy or latency, got", v);
            o->search.objective = objectives[k];
        } else if (!strcmp(a, "--budget")) {
            if (!cli_parse_count(v, 1, &n))
                return fuse_usage_error("--budget wants a positive integer, got", v);
            o->search.budget = n;
            o->search.time_limit_seconds = (double)n;
        } else if (!strcmp(a, "--mapper-budget")) {
            if (!cli_parse_count(v, 1, &o->mapper_budget))
                return fuse_usage_error("--mapper-budget wants a positive integer, got", v);
        } else if (!strcmp(a, "--seed")) {
            if (!cli_parse_count(v, 0, &n))
                return fuse_usage_error("--seed wants a non-negative integer, got", v);
            o->search.seed = (uint64_t)n;
        } else if (!strcmp(a, "--threads")) {
            if (!cli_parse_count(v, 1, &n) || n > 1024)
                return fuse_usage_error("--threads wants a positive integer, got", v);
            o->search.threads = (int)n;
        } else if (!strcmp(a, "--batch")) {
            if (!cli_parse_count(v, 1, &o->batch) || o->batch > 1 << 20)
                return fuse_usage_error("--batch wants a positive integer, got", v);
        } else if (!strcmp(a, "--precision")) {
            if (!wl_precision_parse(v, &o->precision))
                return fuse_usage_error("--precision wants fp32, fp16, bf16, int8 or mixed, got",
                                        v);
            o->precision_set = true;
        } else {
            return fuse_usage_error("unknown option", a);
        }
    }
    if (!o->arch || !o->model)
        return fuse_usage_error("fuse needs --arch and --model", NULL);
    return -1;
}

static const char *const halo_names[] = {"recompute", "cache_rows", "cache_all"};

static const char *layer_label(const wl_graph *g, int32_t o)
{
    return g->ops[o].name[0] ? g->ops[o].name : g->tensors[g->ops[o].outputs[0]].name;
}

/* The ops of group k, in order, into ops[]; returns how many. */
static int32_t group_ops(const wl_graph *g, const fu_plan *p, int32_t k, int32_t *ops)
{
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_order; i++)
        if (p->group[g->order[i]] == k)
            ops[n++] = g->order[i];
    return n;
}

static void print_totals_row(const char *label, const fu_plan_cost *c)
{
    printf("%-14s %14lld %12.6g %14.6g %14.6g %12lld %10.2f\n", label, (long long)c->cycles,
           c->latency_s, c->energy_pJ, c->edp_J_cycle, (long long)c->dram_bytes, c->op_intensity);
}

static void print_fuse_table(const wl_graph *g, const fu_plan *p, const fu_plan_cost *c,
                             const fu_plan_cost *base, int32_t *ops)
{
    printf("%5s %-40s %7s %11s %10s %13s %13s %14s %16s\n", "group", "layers", "count", "tile",
           "halo", "on-chip B", "DRAM B", "cycles", "energy pJ");
    for (int32_t k = 0; k < p->n_groups; k++) {
        const fu_group_cost *gc = &c->groups[k];
        int32_t n = group_ops(g, p, k, ops);
        char layers[96], tile[32];
        snprintf(layers, sizeof layers, n > 1 ? "%.18s..%.18s" : "%.38s", layer_label(g, ops[0]),
                 layer_label(g, ops[n - 1]));
        snprintf(tile, sizeof tile, "%lldx%lld", (long long)gc->tile.rows,
                 (long long)gc->tile.cols);
        printf("%5d %-40s %7d %11s %10s %13lld %13lld %14lld %16.1f\n", (int)k, layers, (int)n,
               tile, halo_names[gc->halo], (long long)gc->onchip_bytes, (long long)gc->dram_bytes,
               (long long)gc->cycles, gc->energy_pJ);
    }
    printf("\n%-14s %14s %12s %14s %14s %12s %10s\n", "", "cycles", "latency s", "energy pJ",
           "EDP J*cycle", "DRAM bytes", "ops/byte");
    print_totals_row("fused", c);
    print_totals_row("layer by layer", base);
    printf("%-14s %14.3f %12.3f %14.3f %14.3f %12.3f %10.3f\n", "ratio",
           (double)c->cycles / (double)base->cycles, c->latency_s / base->latency_s,
           c->energy_pJ / base->energy_pJ, c->edp_J_cycle / base->edp_J_cycle,
           (double)c->dram_bytes / (double)base->dram_bytes, c->op_intensity / base->op_intensity);
    printf("%-14s %d groups for %d layers, %lld recomputed MACs\n", "plan", (int)p->n_groups,
           (int)base->n_groups, (long long)c->recomputed_macs);
}

static void json_totals(cli_json *j, const char *key, const fu_plan_cost *c)
{
    cli_json_key(j, key);
    cli_json_begin_object(j);
    cli_json_int_field(j, "cycles", c->cycles);
    cli_json_double_field(j, "latency_s", c->latency_s);
    cli_json_double_field(j, "energy_pJ", c->energy_pJ);
    cli_json_double_field(j, "onchip_energy_pJ", c->onchip_energy_pJ);
    cli_json_double_field(j, "dram_energy_pJ", c->dram_energy_pJ);
    cli_json_double_field(j, "edp_J_cycle", c->edp_J_cycle);
    cli_json_int_field(j, "dram_bytes", c->dram_bytes);
    cli_json_double_field(j, "op_intensity", c->op_intensity);
    cli_json_int_field(j, "recomputed_macs", c->recomputed_macs);
    cli_json_int_field(j, "groups", c->n_groups);
    cli_json_end_object(j);
}

static void print_fuse_json(const wl_graph *g, const arch_spec *a, const fuse_options *o,
                            const fu_plan *p, const fu_plan_cost *c, const fu_plan_cost *base,
                            int64_t evaluated, int32_t *ops)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "model", g->name);
    cli_json_string_field(&j, "arch", a->name);
    cli_json_string_field(&j, "algorithm", algo_names[o->search.algorithm]);
    cli_json_int_field(&j, "plans_evaluated", evaluated);
    json_totals(&j, "totals", c);
    json_totals(&j, "baseline", base);
    cli_json_key(&j, "groups");
    cli_json_begin_array(&j);
    for (int32_t k = 0; k < p->n_groups; k++) {
        const fu_group_cost *gc = &c->groups[k];
        cli_json_begin_object(&j);
        cli_json_key(&j, "layers");
        cli_json_begin_array(&j);
        int32_t n = group_ops(g, p, k, ops);
        for (int32_t i = 0; i < n; i++)
            cli_json_string(&j, layer_label(g, ops[i]));
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

int cli_fuse(int argc, char **argv)
{
    fuse_options o = {0};
    int rc = parse_fuse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    as_status st;
    as_status_clear(&st);
    arch_spec *a = malloc(sizeof *a);
    wl_graph *g = NULL;
    fu_evaluator *e = NULL;
    fu_search *s = NULL;
    fu_plan plan = {0}, baseline = {0};
    fu_plan_cost cost = {0}, base_cost = {0};
    int32_t *ops = NULL;
    wl_onnx_options onnx = {.batch = o.batch};
    fu_cost_options co;
    fu_cost_options_default(&co);
    if (o.mapper_budget >
        0) { /* a budget bounds random-pruned search; the heuristic has its own end */
        co.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
        co.budget_per_problem = o.mapper_budget;
    }
    co.search.seed = o.search.seed;
    co.search.threads = o.search.threads;
    rc = CLI_EXIT_OK;
    if (!a || arch_load(o.arch, a, &st) != AS_OK ||
        wl_model_load(o.model, &onnx, &g, &st) != AS_OK ||
        (o.batch > 0 && wl_set_batch(g, o.batch, &st) != AS_OK))
        goto failed;
    if (o.precision_set)
        wl_set_precision(g, o.precision);
    ops = malloc(((size_t)g->n_ops + 1) * sizeof *ops);
    if (!ops) {
        as_fail(&st, AS_ENOMEM, "out of memory");
        goto failed;
    }
    if (fu_evaluator_new(&e, g, a, &co, &st) != AS_OK || fu_plan_init(&baseline, g, &st) != AS_OK ||
        fu_plan_evaluate(e, &baseline, &base_cost, &st) != AS_OK ||
        fu_search_init(&s, e, &o.search, &st) != AS_OK)
        goto failed;
    cli_catch_interrupt(&interrupted);
    cli_progress progress;
    cli_progress_init(&progress, "fusing");
    int64_t expected = o.search.budget > 0 ? o.search.budget : 0;
    while (!interrupted && fu_search_step(s, 16))
        cli_progress_update(&progress, fu_search_evaluated(s),
                            expected > 0 ? expected : fu_search_evaluated(s) + 16);
    cli_progress_end(&progress);
    if (fu_search_best(s, &plan, &cost, &st) != AS_OK)
        goto failed;
    if (interrupted)
        fprintf(stderr, "accelsearch: interrupted; the best plan so far follows\n");
    if (o.json)
        print_fuse_json(g, a, &o, &plan, &cost, &base_cost, fu_search_evaluated(s), ops);
    else
        print_fuse_table(g, &plan, &cost, &base_cost, ops);
    goto done;
failed:
    fprintf(stderr, "accelsearch: %s\n", a ? st.message : "out of memory");
    rc = a ? cli_exit_for(st.code) : CLI_EXIT_FAILURE;
done:
    fu_plan_cost_free(&cost);
    fu_plan_cost_free(&base_cost);
    fu_plan_free(&plan);
    fu_plan_free(&baseline);
    fu_search_free(s);
    fu_evaluator_free(e);
    wl_graph_free(g);
    free(ops);
    free(a);
    return rc;
}
