/*
 * cmd_eval.c -- `accelsearch eval`: one (architecture, problem, mapping)
 * through the cost model, as timeloop-model would report it.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mapping/mapping.h"

static const char eval_usage[] =
    "usage: accelsearch eval INPUT.yaml [ERT.yaml [ART.yaml]] [--json] [--repeat N]\n"
    "\n"
    "Evaluate the mapping of a timeloop-model input (architecture, problem, mapping) with\n"
    "accelsearch's cost model; ERT/ART give the energy and area tables (default: built-in).\n";

static const char *const ds_names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

/* ------------------------------------------------------------------ eval */

static void print_eval_table(const map_timeloop_case *c, const map_eval *e)
{
    printf("%-22s %-8s %10s %14s %14s %14s %12s %16s\n", "level", "space", "instances", "reads",
           "fills", "updates", "tile", "energy pJ");
    for (int i = 0; i < e->n_levels; i++) {
        const map_level_stats *l = &e->level[i];
        for (int d = 0; d < WL_NDATASPACES; d++) {
            if (!l->keeps[d])
                continue;
            const map_ds_stats *s = &l->ds[d];
            printf("%-22s %-8s %10lld %14lld %14lld %14lld %12lld %16.6f\n", c->arch.level[i].name,
                   ds_names[d], (long long)s->utilized_instances, (long long)s->reads,
                   (long long)s->fills, (long long)s->updates, (long long)s->tile_words,
                   s->energy_pJ);
        }
    }
    printf("\n%-16s %lld\n", "MACs", (long long)e->macs);
    printf("%-16s %lld\n", "cycles", (long long)e->cycles);
    printf("%-16s %.6f pJ (%.4f pJ/MAC)\n", "energy", e->energy_pJ,
           e->macs ? e->energy_pJ / (double)e->macs : 0.0);
    printf("%-16s %.2f %%\n", "utilization", 100.0 * e->utilization);
    printf("%-16s %.6g J*cycle\n", "EDP", e->edp_J_cycle);
}

static void print_eval_json(const map_timeloop_case *c, const map_eval *e, double per_second)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "status", map_validity_name(e->validity));
    if (e->validity != MAP_VALID) {
        cli_json_string_field(&j, "reason", e->reason);
    }
    cli_json_int_field(&j, "macs", e->macs);
    cli_json_int_field(&j, "cycles", e->cycles);
    cli_json_double_field(&j, "energy_pJ", e->energy_pJ);
    cli_json_double_field(&j, "utilization", e->utilization);
    cli_json_double_field(&j, "edp_J_cycle", e->edp_J_cycle);
    if (per_second > 0) {
        cli_json_double_field(&j, "evaluations_per_second", per_second);
    }
    cli_json_key(&j, "levels");
    cli_json_begin_array(&j);
    for (int i = 0; i < e->n_levels; i++) {
        const map_level_stats *l = &e->level[i];
        cli_json_begin_object(&j);
        cli_json_string_field(&j, "name", c->arch.level[i].name);
        cli_json_int_field(&j, "instances_utilized", l->utilized_instances);
        cli_json_double_field(&j, "energy_pJ", l->energy_pJ);
        for (int d = 0; d < WL_NDATASPACES; d++) {
            if (!l->keeps[d])
                continue;
            const map_ds_stats *s = &l->ds[d];
            cli_json_key(&j, ds_names[d]);
            cli_json_begin_object(&j);
            cli_json_int_field(&j, "reads", s->reads);
            cli_json_int_field(&j, "fills", s->fills);
            cli_json_int_field(&j, "updates", s->updates);
            cli_json_int_field(&j, "tile_words", s->tile_words);
            cli_json_double_field(&j, "energy_pJ", s->energy_pJ);
            cli_json_end_object(&j);
        }
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_eval(int argc, char **argv)
{
    const char *files[3] = {NULL, NULL, NULL};
    int n_files = 0;
    bool json = false;
    long long repeat = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            char *end;
            repeat = strtoll(argv[++i], &end, 10);
            if (*end || repeat < 1) {
                fprintf(stderr, "accelsearch: --repeat wants a positive integer\n\n%s", eval_usage);
                return CLI_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(eval_usage, stdout);
            return CLI_EXIT_OK;
        } else if (argv[i][0] != '-' && n_files < 3) {
            files[n_files++] = argv[i];
        } else {
            fprintf(stderr, "accelsearch: unexpected argument '%s'\n\n%s", argv[i], eval_usage);
            return CLI_EXIT_USAGE;
        }
    }
    if (n_files == 0) {
        fputs(eval_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    map_timeloop_case *c = malloc(sizeof *c);
    map_eval *e = malloc(sizeof *e);
    as_status st;
    as_status_clear(&st);
    if (!c || !e || map_timeloop_load(files[0], files[1], files[2], c, &st) != AS_OK) {
        fprintf(stderr, "accelsearch: %s\n", c && e ? st.message : "out of memory");
        free(c);
        free(e);
        return c && e ? cli_exit_for(st.code) : CLI_EXIT_FAILURE;
    }
    map_evaluate(&c->arch, &c->problem, &c->mapping, e);
    double per_second = 0;
    if (repeat > 0) {
        double start = seconds_now();
        for (long long r = 0; r < repeat; r++)
            map_evaluate(&c->arch, &c->problem, &c->mapping, e);
        double elapsed = seconds_now() - start;
        per_second = elapsed > 0 ? (double)repeat / elapsed : 0;
    }
    int rc = CLI_EXIT_OK;
    if (json)
        print_eval_json(c, e, per_second);
    if (e->validity != MAP_VALID) {
        fprintf(stderr, "accelsearch: %s: the mapping is not valid: %s\n", files[0], e->reason);
        rc = CLI_EXIT_USAGE;
    } else if (!json) {
        print_eval_table(c, e);
        if (per_second > 0)
            printf("%-16s %.0f\n", "evaluations/s", per_second);
    }
    free(c);
    free(e);
    return rc;
}
