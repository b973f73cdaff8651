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

/* A file `map --emit-timeloop` wrote for a layer: also the layer's cost as
 * `map` charged it (tensor precisions in DRAM, traffic outside the loop nest). */
static void print_eval_json(const arch_spec *a, const map_eval *e, const map_layer_result *layer,
                            double per_second)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_eval_members(&j, a, e);
    if (layer) {
        cli_json_key(&j, "layer");
        cli_json_begin_object(&j);
        cli_json_int_field(&j, "cycles", layer->cycles);
        cli_json_double_field(&j, "energy_pJ", layer->energy_pJ);
        cli_json_int_field(&j, "dram_bytes", layer->dram_bytes);
        cli_json_end_object(&j);
    }
    if (per_second > 0)
        cli_json_double_field(&j, "evaluations_per_second", per_second);
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
    map_layer_result *layer = malloc(sizeof *layer);
    if (layer && !map_timeloop_evaluate(c, e, layer)) {
        free(layer);
        layer = NULL;
    }
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
        print_eval_json(&c->arch, e, layer, per_second);
    if (e->validity != MAP_VALID) {
        fprintf(stderr, "accelsearch: %s: the mapping is not valid: %s\n", files[0], e->reason);
        rc = CLI_EXIT_USAGE;
    } else if (!json) {
        cli_print_mapping(&c->arch, c->dim_names, &c->mapping);
        putchar('\n');
        cli_print_eval(&c->arch, e);
        if (layer)
            printf("%-16s %lld cycles, %f pJ, %lld DRAM bytes (as 'map' costs the layer)\n",
                   "layer", (long long)layer->cycles, layer->energy_pJ,
                   (long long)layer->dram_bytes);
        if (per_second > 0)
            printf("%-16s %.0f\n", "evaluations/s", per_second);
    }
    free(layer);
    free(c);
    free(e);
    return rc;
}
