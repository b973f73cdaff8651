/*
 * model_args.c -- the options every command that loads a model shares
 * (--batch, --precision, --as-hardware, --allow-unknown-ops, --dim; with --arch and --model for
 * map and fuse), loading the model with them, and its warnings, one per
 * kind.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* The largest --batch a command takes. */
#define MAX_BATCH (INT64_C(1) << 20)

static const char *const precision_names[] = {"fp32", "fp16", "bf16", "int8", "mixed", NULL};

int cli_add_model_options(cli_option *options, cli_model_args *m, bool with_batch_precision)
{
    int n = 0;
    if (with_batch_precision) {
        options[n++] = cli_int("batch", "N", &m->batch, 1, MAX_BATCH,
                               "batch size (default: the model's, 1 for the zoo)");
        options[n] = cli_enum("precision", &m->precision, precision_names,
                              "storage precision (mixed: int8 weights, bf16 activations);\n"
                              "default: the model's types");
        options[n++].given = &m->precision_set;
        options[n++] = cli_flag("as-hardware", &m->as_hardware,
                                "with --precision: store tensors at it, but let the MACs take\n"
                                "them in their own format, unemulated (as search does)");
    }
    options[n++] = cli_flag("allow-unknown-ops", &m->allow_unknown_ops,
                            "accept op types accelsearch does not model (costed as zero)");
    if (with_batch_precision) /* search's workloads carry no such values */
        options[n++] = cli_string("dim", "NAME=N[,...]", &m->dims,
                                  "values of an ONNX file's symbolic input dimensions\n"
                                  "(sequence=128); others: --batch for dim 0, else 1");
    return n;
}

as_code cli_load_model(const char *model, const cli_model_args *m, wl_graph **out, as_status *st)
{
    wl_onnx_options onnx = {
        .allow_unknown_ops = m->allow_unknown_ops, .batch = m->batch, .dims = m->dims};
    wl_graph *g = NULL;
    as_code code = wl_model_load(model, &onnx, &g, st);
    if (code == AS_OK && m->batch > 0)
        code = wl_set_batch(g, m->batch, st);
    if (code != AS_OK) {
        wl_graph_free(g);
        return code;
    }
    *out = g;
    return AS_OK;
}

const char *cli_layer_name(const wl_graph *g, int32_t o)
{
    const wl_op *op = &g->ops[o];
    return op->name[0] ? op->name : g->tensors[op->outputs[0]].name;
}

void cli_design_batch_help(cli_option *options, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(options[i].name, "batch") == 0)
            options[i].help = "batch size (default: the architecture's native_batch when\n"
                              "above 1, else the model's, 1 for the zoo)";
}

int cli_add_design_options(cli_option *options, cli_design_args *d)
{
    options[0] = cli_arch_option(&d->arch);
    options[1] = cli_model_option(&d->model);
    return 2;
}

as_code cli_arch_load(const char *design, arch_spec *a, as_status *st)
{
    return map_design_load(design, a, NULL, NULL, 0, st);
}

as_code cli_load_design(const cli_design_args *d, arch_spec *a, wl_graph **g, as_status *st)
{
    wl_precision precision;
    as_code code = cli_arch_load(d->arch, a, st);
    cli_model_args load = d->load;
    if (code == AS_OK && load.batch <= 0 && a->native_batch > 1)
        load.batch = a->native_batch; /* the batch the design is built for */
    if (code == AS_OK)
        code = cli_load_model(d->model, &load, g, st);
    if (code != AS_OK)
        return code;
    cli_print_warnings(*g);
    if (cli_precision(&d->load, &precision)) {
        if (d->load.as_hardware)
            wl_set_storage_precision(*g, precision);
        else
            wl_set_precision(*g, precision);
    }
    return AS_OK;
}

bool cli_precision(const cli_model_args *m, wl_precision *p)
{
    return m->precision_set && wl_precision_parse(precision_names[m->precision], p);
}

/* Whether a library warning is the per-node one about an unknown op type,
 * which cli_each_warning replaces by one line per type. */
static bool is_unknown_op_warning(const char *w)
{
    return strstr(w, "': unknown op type '") != NULL;
}

void cli_each_warning(const wl_graph *g, void (*emit)(void *user, const char *warning), void *user)
{
    for (int32_t i = 0; i < g->n_warnings; i++)
        if (!is_unknown_op_warning(g->warnings[i]))
            emit(user, g->warnings[i]);
    /* One line per unknown op type, at its first node, with the count. */
    for (int32_t i = 0; i < g->n_ops; i++) {
        const wl_op *op = &g->ops[i];
        if (op->kind != WL_OP_UNKNOWN)
            continue;
        int32_t first = 0, count = 0;
        while (first < i && (g->ops[first].kind != WL_OP_UNKNOWN ||
                             strcmp(g->ops[first].op_type, op->op_type) != 0))
            first++;
        if (first < i)
            continue; /* told at the first node of this type */
        for (int32_t k = i; k < g->n_ops; k++)
            count += g->ops[k].kind == WL_OP_UNKNOWN && !strcmp(g->ops[k].op_type, op->op_type);
        char line[AS_MSG_BYTES];
        snprintf(line, sizeof line,
                 "%s: unknown op type '%s' costed as zero (%d node%s, first '%s')", g->source,
                 op->op_type, (int)count, count == 1 ? "" : "s", op->name);
        emit(user, line);
    }
}

static void print_warning(void *user, const char *warning)
{
    (void)user;
    cli_warn("%s", warning);
}

void cli_print_warnings(const wl_graph *g)
{
    cli_each_warning(g, print_warning, NULL);
}
