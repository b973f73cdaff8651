/*
 * cmd_eval.c -- `accelsearch eval`: one (architecture, problem, mapping)
 * through the cost model, as timeloop-model would report it.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "mapping/mapping.h"

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

/* The largest --repeat: a minute or so of evaluations. */
#define MAX_REPEAT INT64_C(100000000)

/* The evaluation of the loaded case c as the command line asks: JSON or
 * text (unless --csv - takes their place) and the CSV table; the exit
 * status. */
static int show_eval(const char *input, const map_timeloop_case *c, const map_eval *e,
                     const map_layer_result *layer, double per_second, bool json, cli_output *out)
{
    int rc = CLI_EXIT_OK;
    bool usual = cli_output_usual(out);
    if (json && usual)
        print_eval_json(&c->arch, e, layer, per_second);
    if (e->validity != MAP_VALID) {
        fprintf(stderr, "accelsearch: %s: the mapping is not valid: %s\n", input, e->reason);
        return CLI_EXIT_USAGE;
    }
    if (out->csv.out)
        cli_csv_eval(&out->csv, &c->arch, e);
    if (json || !usual)
        return rc;
    cli_print_mapping(&c->arch, c->dim_names, &c->mapping);
    putchar('\n');
    cli_print_eval(&c->arch, e);
    if (layer)
        printf("%-16s %lld cycles, %s, %lld DRAM bytes (as 'map' costs the layer)\n", "layer",
               (long long)layer->cycles, CLI_ENG(layer->energy_pJ * 1e-12, "J"),
               (long long)layer->dram_bytes);
    if (per_second > 0)
        printf("%-16s %s\n", "evaluation rate", CLI_ENG(per_second, "evaluations/s"));
    return rc;
}

/* Load and evaluate the files, repeat, show; the exit status. */
static int eval_files(const cli_command *cmd, int64_t repeat, bool json, cli_output *out)
{
    const char *const *files = cmd->positional;
    map_timeloop_case *c = malloc(sizeof *c);
    map_eval *e = malloc(sizeof *e);
    as_status st;
    as_status_clear(&st);
    if (!c || !e) {
        free(c);
        free(e);
        return cli_failf(cmd, CLI_EXIT_FAILURE, "out_of_memory", "out of memory");
    }
    if (map_timeloop_load(files[0], cmd->n_positional > 1 ? files[1] : NULL,
                          cmd->n_positional > 2 ? files[2] : NULL, c, &st) != AS_OK) {
        free(c);
        free(e);
        return cli_fail(cmd, &st);
    }
    map_layer_result *layer = malloc(sizeof *layer);
    if (layer && !map_timeloop_evaluate(c, e, layer)) {
        free(layer);
        layer = NULL;
    }
    double per_second = 0;
    if (repeat > 0) {
        double start = cli_seconds_now();
        for (int64_t r = 0; r < repeat; r++)
            map_evaluate(&c->arch, &c->problem, &c->mapping, e);
        double elapsed = cli_seconds_now() - start;
        per_second = elapsed > 0 ? (double)repeat / elapsed : 0;
    }
    int rc = show_eval(files[0], c, e, layer, per_second, json, out);
    free(layer);
    free(c);
    free(e);
    return rc;
}

int cli_eval(int argc, char **argv)
{
    bool json = false;
    int64_t repeat = 0;
    cli_output out = {0};
    cli_option options[4];
    int n = 0;
    options[n++] = cli_json_option(&json);
    options[n++] = cli_int("repeat", "N", &repeat, 1, MAX_REPEAT,
                           "evaluate N more times and report evaluations per second");
    n += cli_add_output_options(options + n, &out,
                                "write the table as CSV, one row per level and data space it\n"
                                "keeps (\"-\": standard output, instead of the text)");
    cli_command cmd = {
        .name = "eval",
        .synopsis = "eval INPUT.yaml [ERT.yaml [ART.yaml]] [options]",
        .about = "Evaluate the mapping of a timeloop-model input (architecture, problem, "
                 "mapping) with\naccelsearch's cost model; ERT/ART give the energy and area "
                 "tables (default: built-in).\n",
        .options = options,
        .n_options = n,
        .max_positional = 3,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    const char *const *files = cmd.positional;
    if (cmd.n_positional == 0)
        return cli_usage_error(&cmd, "missing INPUT.yaml");
    if (cli_is_onnx_path(files[0]))
        return cli_usage_error(&cmd,
                               "'%s' is an ONNX model; eval reads a timeloop-model input (YAML): "
                               "use 'map --model' for models",
                               files[0]);
    if ((rc = cli_output_begin(&cmd, &out, json)) != CLI_PARSED)
        return rc;
    return cli_output_end(&cmd, &out, eval_files(&cmd, repeat, json, &out));
}
