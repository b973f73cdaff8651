/*
 * cmd_model.c -- `accelsearch model info|export|import-topology` and
 * `accelsearch zoo list`.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What the user asked of `model info` / `model export`. */
typedef struct model_options {
    const char *model;
    const char *out_path; /* export only */
    cli_model_args load;
    bool fold_bn;
    double prune_density;  /* 0 = none */
    double prune_channels; /* 0 = none */
    bool json;
    cli_output out; /* info: --csv, -o */
} model_options;

enum { MODEL_MAX_OPTIONS = 14 };

/* The command `model info` (export false) or `model export`, its options
 * writing into o. */
static cli_command model_command(bool export, cli_option *options, model_options *o)
{
    int n = cli_add_model_options(options, &o->load, true);
    options[n++] =
        cli_flag("fold-bn", &o->fold_bn, "fold BatchNormalization into the preceding convolution");
    options[n++] = cli_double("prune-density", "D", &o->prune_density, 0, 1,
                              "unstructured pruning: weight density D of every layer");
    options[n++] = cli_double("prune-channels", "K", &o->prune_channels, 0, 1,
                              "channel pruning: keep fraction K of prunable channels");
    options[n++] = cli_flag("json", &o->json, "print one JSON object instead of a table");
    if (!export)
        n += cli_add_output_options(options + n, &o->out,
                                    "write the layers as CSV, one row per layer of the table\n"
                                    "(\"-\": standard output, instead of the text)");
    return (cli_command){
        .name = export ? "model export" : "model info",
        .help_for = "model",
        .synopsis = export ? "model export MODEL OUT.onnx [options]" : "model info MODEL [options]",
        .about = export ? "Write the model as ONNX (weights stripped) after the transforms the "
                          "options ask for.\nMODEL is a zoo name (see 'accelsearch zoo list') or "
                          "an .onnx file.\n"
                        : "Parameters, MACs, working sets and the loop-nest problem of every "
                          "layer.\nMODEL is a zoo name (see 'accelsearch zoo list') or an .onnx "
                          "file.\n",
        .options = options,
        .n_options = n,
        .max_positional = export ? 2 : 1,
    };
}

/* Parse argv into o; CLI_PARSED, or an exit status. */
static int parse_model_options(cli_command *cmd, int argc, char **argv, model_options *o)
{
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd->n_positional < cmd->max_positional)
        return cli_usage_error(
            cmd, "%s", cmd->max_positional == 1 ? "missing MODEL" : "missing MODEL or OUT.onnx");
    o->model = cmd->positional[0];
    o->out_path = cmd->n_positional > 1 ? cmd->positional[1] : NULL;
    return CLI_PARSED;
}

/* Load the model and apply the requested transforms in stack order:
 * batch, BN folding, pruning, precision, fusability marks. */
static as_code prepare_model(const model_options *o, wl_graph **out, as_status *st)
{
    wl_graph *g = NULL;
    wl_precision precision;
    as_code rc = cli_load_model(o->model, &o->load, &g, st);
    if (rc == AS_OK && o->fold_bn)
        rc = wl_fold_batchnorm(g, NULL, st);
    if (rc == AS_OK && o->prune_channels > 0)
        rc = wl_prune_channels(g, NULL, o->prune_channels, NULL, st);
    if (rc == AS_OK && o->prune_density > 0)
        rc = wl_prune_unstructured(g, NULL, o->prune_density, st);
    if (rc == AS_OK && cli_precision(&o->load, &precision))
        wl_set_precision(g, precision);
    if (rc == AS_OK)
        wl_mark_fusable(g);
    if (rc != AS_OK) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return AS_OK;
}

/* ------------------------------------------------------------ printing */

/* n with thousands separators into buf. */
static const char *grouped(int64_t n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%" PRId64, n < 0 ? -n : n);
    size_t w = 0;
    if (n < 0 && w + 1 < size)
        buf[w++] = '-';
    for (int i = 0; i < len && w + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[w++] = ',';
        buf[w++] = digits[i];
    }
    buf[w] = '\0';
    return buf;
}

/* "N1 G1 C64 M64 P56 Q56 R3 S3 /2" -- the bounds, then a stride if any. */
static const char *problem_str(const wl_problem *p, char *buf, size_t size)
{
    size_t w = 0;
    for (int d = 0; d < WL_NDIMS && w < size; d++)
        w += (size_t)snprintf(buf + w, size - w, "%s%s%lld", d ? " " : "", wl_dim_name((wl_dim)d),
                              (long long)p->bound[d]);
    if (w < size && (p->stride[0] > 1 || p->stride[1] > 1))
        snprintf(buf + w, size - w, " s%lldx%lld", (long long)p->stride[0],
                 (long long)p->stride[1]);
    return buf;
}

static const char *problem_kind_name(wl_problem_kind k)
{
    static const char *const names[] = {"conv", "depthwise", "conv_transpose", "matmul",
                                        "batched_matmul"};
    return names[k];
}

/* True for the ops worth a row: live ops that do work or move data. */
static bool shown_op(const wl_op *op)
{
    return !op->dead && !op->folded;
}

static void print_table(const wl_graph *g, const wl_stats *s, const char *precision)
{
    char a[64], b[64], shape[96], prob[160];
    printf("model %s (%s), %s\n\n", g->name, g->source, precision);
    printf("%4s  %-44s %-18s %-20s %15s %12s  %s\n", "#", "layer", "op", "output", "MACs", "params",
           "problem");
    int row = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t o = g->order[k];
        const wl_op *op = &g->ops[o];
        if (!shown_op(op))
            continue;
        wl_op_stats os;
        wl_op_stats_get(g, o, &os);
        wl_problem p;
        bool has_problem = wl_op_kind_category(op->kind) == WL_CAT_COMPUTE &&
                           wl_op_problem(g, o, &p, NULL) == AS_OK;
        const char *name = cli_layer_name(g, o);
        size_t len = strlen(name);
        printf("%4d  %-44s %-18s %-20s %15s %12s  %s\n", row++, len > 44 ? name + len - 44 : name,
               op->op_type, wl_shape_str(&g->tensors[op->outputs[0]], shape, sizeof shape),
               os.macs ? grouped(os.macs, a, sizeof a) : "-",
               os.params ? grouped(os.params, b, sizeof b) : "-",
               has_problem ? problem_str(&p, prob, sizeof prob) : "");
    }
    printf("\n%-24s %s\n", "parameters", grouped(s->params, a, sizeof a));
    if (s->nonzero_params != s->params)
        printf("%-24s %s\n", "non-zero parameters", grouped(s->nonzero_params, a, sizeof a));
    printf("%-24s %s\n", "MACs", grouped(s->macs, a, sizeof a));
    printf("%-24s %s\n", "weight bytes", grouped(s->weight_bytes, a, sizeof a));
    printf("%-24s %s  (%s)\n", "max working set bytes",
           grouped(s->max_working_set_bytes, a, sizeof a),
           s->max_working_set_op >= 0 ? cli_layer_name(g, s->max_working_set_op) : "-");
    printf("%-24s %s\n", "DRAM bytes, unfused", grouped(s->dram_bytes_unfused, a, sizeof a));
    printf("%-24s %s (2 x MACs per DRAM byte)\n", "op intensity, unfused",
           CLI_NUM(s->op_intensity_unfused, "ops/byte"));
    printf("%-24s %d compute of %d\n", "layers", s->n_compute_ops, s->n_ops);
}

/* The table's layers as CSV: one row per row of the text, with the
 * JSON's figures (bytes and elements as counts). */
static void print_csv(cli_csv *c, const wl_graph *g)
{
    static const char *const head[] = {"index",
                                       "layer",
                                       "op",
                                       "category",
                                       "output_shape",
                                       "macs",
                                       "params",
                                       "bytes_read",
                                       "bytes_written",
                                       "output_elements",
                                       "fusable",
                                       "problem_kind",
                                       "problem",
                                       NULL};
    char shape[96], prob[160];
    cli_csv_header(c, head);
    int row = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t o = g->order[k];
        const wl_op *op = &g->ops[o];
        if (!shown_op(op))
            continue;
        wl_op_stats os;
        wl_op_stats_get(g, o, &os);
        wl_problem p;
        bool has_problem = wl_op_kind_category(op->kind) == WL_CAT_COMPUTE &&
                           wl_op_problem(g, o, &p, NULL) == AS_OK;
        cli_csv_int(c, row++);
        cli_csv_string(c, cli_layer_name(g, o));
        cli_csv_string(c, op->op_type);
        cli_csv_string(c, wl_op_category_name(wl_op_kind_category(op->kind)));
        cli_csv_string(c, wl_shape_str(&g->tensors[op->outputs[0]], shape, sizeof shape));
        cli_csv_int(c, os.macs);
        cli_csv_int(c, os.params);
        cli_csv_int(c, os.input_bytes + os.weight_bytes);
        cli_csv_int(c, os.output_bytes);
        cli_csv_int(c, os.output_elements);
        cli_csv_bool(c, op->fusable);
        cli_csv_string(c, has_problem ? problem_kind_name(p.kind) : "");
        cli_csv_string(c, has_problem ? problem_str(&p, prob, sizeof prob) : "");
        cli_csv_end_row(c);
    }
}

static void json_problem(cli_json *j, const wl_problem *p)
{
    cli_json_begin_object(j);
    cli_json_string_field(j, "kind", problem_kind_name(p->kind));
    cli_json_key(j, "bounds");
    cli_json_begin_object(j);
    for (int d = 0; d < WL_NDIMS; d++) {
        cli_json_key(j, wl_dim_name((wl_dim)d));
        cli_json_int(j, p->bound[d]);
    }
    cli_json_end_object(j);
    const struct {
        const char *key;
        const int64_t *v;
        int n;
    } arrays[] = {{"stride", p->stride, 2}, {"dilation", p->dilation, 2}, {"pad", p->pad, 4}};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        cli_json_key(j, arrays[a].key);
        cli_json_begin_array(j);
        for (int i = 0; i < arrays[a].n; i++)
            cli_json_int(j, arrays[a].v[i]);
        cli_json_end_array(j);
    }
    cli_json_key(j, "dataspaces");
    cli_json_begin_object(j);
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const wl_dataspace *d = &p->ds[ds];
        cli_json_key(j, d->name);
        cli_json_begin_object(j);
        cli_json_int_field(j, "tensor", d->tensor);
        cli_json_key(j, "projection");
        cli_json_begin_array(j);
        for (int r = 0; r < d->n_ranks; r++) {
            char expr[64];
            size_t w = 0;
            for (int t = 0; t < d->ranks[r].n_terms && w < sizeof expr; t++) {
                const wl_proj_term *term = &d->ranks[r].terms[t];
                /* "P", "2*P+R": the index expression of this rank */
                if (term->coef != 1)
                    w += (size_t)snprintf(expr + w, sizeof expr - w, "%s%lld*%s", t ? "+" : "",
                                          (long long)term->coef, wl_dim_name(term->dim));
                else
                    w += (size_t)snprintf(expr + w, sizeof expr - w, "%s%s", t ? "+" : "",
                                          wl_dim_name(term->dim));
            }
            cli_json_string(j, expr);
        }
        cli_json_end_array(j);
        cli_json_int_field(j, "elements", wl_dataspace_elements(p, (wl_dataspace_id)ds));
        cli_json_int_field(j, "bits", d->bits);
        cli_json_double_field(j, "density", d->density);
        cli_json_end_object(j);
    }
    cli_json_end_object(j);
    cli_json_end_object(j);
}

static void json_layer(cli_json *j, const wl_graph *g, int32_t o)
{
    const wl_op *op = &g->ops[o];
    wl_op_stats os;
    wl_op_stats_get(g, o, &os);
    cli_json_begin_object(j);
    cli_json_string_field(j, "name", cli_layer_name(g, o));
    cli_json_string_field(j, "op", op->op_type);
    cli_json_string_field(j, "category", wl_op_category_name(wl_op_kind_category(op->kind)));
    cli_json_int_field(j, "macs", os.macs);
    cli_json_int_field(j, "params", os.params);
    cli_json_key(j, "input_shapes");
    cli_json_begin_array(j);
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        if (t >= 0 && g->tensors[t].kind != WL_TENSOR_WEIGHT &&
            g->tensors[t].kind != WL_TENSOR_CONSTANT)
            cli_json_shape(j, &g->tensors[t]);
    }
    cli_json_end_array(j);
    cli_json_key(j, "weight_shapes");
    cli_json_begin_array(j);
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        if (t >= 0 && g->tensors[t].kind == WL_TENSOR_WEIGHT)
            cli_json_shape(j, &g->tensors[t]);
    }
    cli_json_end_array(j);
    cli_json_key(j, "output_shape");
    cli_json_shape(j, &g->tensors[op->outputs[0]]);
    cli_json_int_field(j, "bytes_read", os.input_bytes + os.weight_bytes);
    cli_json_int_field(j, "bytes_written", os.output_bytes);
    cli_json_int_field(j, "output_elements", os.output_elements);
    cli_json_bool_field(j, "fusable", op->fusable);
    cli_json_key(j, "problem");
    wl_problem p;
    if (wl_op_kind_category(op->kind) == WL_CAT_COMPUTE && wl_op_problem(g, o, &p, NULL) == AS_OK)
        json_problem(j, &p);
    else
        cli_json_null(j);
    cli_json_end_object(j);
}

static void json_warning(void *user, const char *warning)
{
    cli_json_string(user, warning);
}

static void print_json(const wl_graph *g, const wl_stats *s, const char *precision)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "model", g->name);
    cli_json_string_field(&j, "source", g->source);
    cli_json_string_field(&j, "precision", precision);
    cli_json_int_field(&j, "params", s->params);
    cli_json_int_field(&j, "nonzero_params", s->nonzero_params);
    cli_json_int_field(&j, "macs", s->macs);
    cli_json_int_field(&j, "weight_bytes", s->weight_bytes);
    cli_json_int_field(&j, "max_working_set_bytes", s->max_working_set_bytes);
    cli_json_string_field(&j, "max_working_set_layer",
                          s->max_working_set_op >= 0 ? cli_layer_name(g, s->max_working_set_op)
                                                     : "");
    cli_json_int_field(&j, "dram_bytes_unfused", s->dram_bytes_unfused);
    cli_json_double_field(&j, "op_intensity_unfused", s->op_intensity_unfused);
    cli_json_int_field(&j, "compute_layers", s->n_compute_ops);
    cli_json_key(&j, "warnings");
    cli_json_begin_array(&j);
    cli_each_warning(g, json_warning, &j);
    cli_json_end_array(&j);
    cli_json_key(&j, "layers");
    cli_json_begin_array(&j);
    for (int32_t k = 0; k < g->n_order; k++)
        if (shown_op(&g->ops[g->order[k]]))
            json_layer(&j, g, g->order[k]);
    cli_json_end_array(&j);
    cli_json_end_object(&j);
}

/* ------------------------------------------------------------- commands */

/* The statistics of g, as a table or JSON. */
static as_code show_model(model_options *o, const wl_graph *g, as_status *st)
{
    wl_stats s;
    if (wl_graph_stats(g, &s, st) != AS_OK)
        return st->code;
    wl_precision p;
    const char *precision = cli_precision(&o->load, &p) ? wl_precision_name(p) : "native";
    if (o->out.csv.out)
        print_csv(&o->out.csv, g);
    if (cli_output_usual(&o->out) && o->json)
        print_json(g, &s, precision);
    else if (cli_output_usual(&o->out))
        print_table(g, &s, precision);
    return AS_OK;
}

/* `model info` (export false) or `model export`: parse, load and
 * transform the model, then show or write it. */
static int model_run(bool export, int argc, char **argv)
{
    model_options o = {0};
    cli_option options[MODEL_MAX_OPTIONS];
    cli_command cmd = model_command(export, options, &o);
    int rc = parse_model_options(&cmd, argc, argv, &o);
    if (rc != CLI_PARSED ||
        (!export && (rc = cli_output_begin(&cmd, &o.out, o.json)) != CLI_PARSED))
        return rc;
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    if (prepare_model(&o, &g, &st) != AS_OK)
        return export ? cli_fail(&cmd, &st) : cli_output_end(&cmd, &o.out, cli_fail(&cmd, &st));
    cli_print_warnings(g);
    as_code code = export ? wl_onnx_save(g, o.out_path, &st) : show_model(&o, g, &st);
    if (code == AS_OK && export)
        cli_note("wrote %s (%d nodes)", o.out_path, g->n_ops);
    wl_graph_free(g);
    rc = code == AS_OK ? CLI_EXIT_OK : cli_fail(&cmd, &st);
    return export ? rc : cli_output_end(&cmd, &o.out, rc);
}

static int model_info(int argc, char **argv)
{
    return model_run(false, argc, argv);
}

static int model_export(int argc, char **argv)
{
    return model_run(true, argc, argv);
}

/* `model import-topology`'s command, its options writing into o. */
static cli_command import_topology_command(cli_option *options, model_options *o)
{
    int n = 0;
    options[n] = cli_string("output", "OUT.onnx", &o->out_path,
                            "also write the model as ONNX (weights stripped)");
    options[n++].short_name = 'o';
    options[n++] = cli_flag("json", &o->json, "print one JSON object instead of a table");
    return (cli_command){
        .name = "model import-topology",
        .help_for = "model",
        .synopsis = "model import-topology FILE.csv [-o OUT.onnx] [--json]",
        .about =
            "Read a SCALE-Sim topology (its conv or GEMM CSV form) as a model and print it as\n"
            "`model info` does.  A topology .csv is also taken wherever --model is: rows\n"
            "end with a comma, IFMAP sizes include the padding, a name containing \"DP\"\n"
            "is a depthwise layer (docs/scalesim-import.md).\n",
        .options = options,
        .n_options = n,
        .max_positional = 1,
    };
}

/* `model import-topology FILE.csv [-o OUT.onnx]`: the topology as a
 * model, shown, and written as ONNX when asked. */
static int model_import_topology(int argc, char **argv)
{
    model_options o = {0};
    cli_option options[MODEL_MAX_OPTIONS];
    cli_command cmd = import_topology_command(options, &o);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional == 0)
        return cli_usage_error(&cmd, "missing FILE.csv");
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    if (wl_topology_load(cmd.positional[0], &g, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    as_code code = show_model(&o, g, &st);
    if (code == AS_OK && o.out_path)
        code = wl_onnx_save(g, o.out_path, &st);
    if (code == AS_OK && o.out_path)
        fprintf(stderr, "accelsearch: wrote %s (%d nodes)\n", o.out_path, g->n_ops);
    wl_graph_free(g);
    return code == AS_OK ? CLI_EXIT_OK : cli_fail(&cmd, &st);
}

static void print_model_help(FILE *out)
{
    model_options o;
    cli_option options[MODEL_MAX_OPTIONS];
    cli_command info = model_command(false, options, &o);
    cli_print_help(&info, out);
    fputc('\n', out);
    cli_command export = model_command(true, options, &o);
    cli_print_help(&export, out);
    fputc('\n', out);
    cli_command import = import_topology_command(options, &o);
    cli_print_help(&import, out);
}

int cli_model(int argc, char **argv)
{
    static const cli_action actions[] = {{"info", model_info},
                                         {"export", model_export},
                                         {"import-topology", model_import_topology},
                                         {NULL, NULL}};
    return cli_dispatch("model", actions, print_model_help, argc, argv);
}

/* `accelsearch zoo list [--json]` */
static int zoo_list(int argc, char **argv);

static cli_command zoo_command(cli_option *options, bool *json)
{
    options[0] = cli_flag("json", json, "print one JSON array");
    return (cli_command){.name = "zoo list",
                         .help_for = "zoo",
                         .synopsis = "zoo list [--json]",
                         .about = "The built-in models: name, family, description.\n",
                         .options = options,
                         .n_options = 1};
}

static void print_zoo_help(FILE *out)
{
    bool json;
    cli_option options[1];
    cli_command cmd = zoo_command(options, &json);
    cli_print_help(&cmd, out);
}

int cli_zoo(int argc, char **argv)
{
    static const cli_action actions[] = {{"list", zoo_list}, {NULL, NULL}};
    return cli_dispatch("zoo", actions, print_zoo_help, argc, argv);
}

static int zoo_list(int argc, char **argv)
{
    bool json = false;
    cli_option options[1];
    cli_command cmd = zoo_command(options, &json);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    int n;
    const wl_zoo_entry *e = wl_zoo_entries(&n);
    if (json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_array(&j);
        for (int i = 0; i < n; i++) {
            cli_json_begin_object(&j);
            cli_json_string_field(&j, "name", e[i].name);
            cli_json_string_field(&j, "family", e[i].family);
            cli_json_string_field(&j, "description", e[i].description);
            cli_json_end_object(&j);
        }
        cli_json_end_array(&j);
        return CLI_EXIT_OK;
    }
    printf("%-20s %-13s %s\n", "name", "family", "description");
    for (int i = 0; i < n; i++)
        printf("%-20s %-13s %s\n", e[i].name, e[i].family, e[i].description);
    return CLI_EXIT_OK;
}
