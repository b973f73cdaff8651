/*
 * stats.c -- parameter, MAC, working-set and traffic statistics of a graph
 * (see workload.h).
 *
 * The unfused traffic model: every op that does work reads each of its
 * activation inputs and weights from DRAM once and writes each output there
 * once.  Views (Reshape, Flatten, ...) and folded shape arithmetic move
 * nothing; unknown ops are costed as zero.  A Gather reads only the rows it
 * gathers, not its whole table (an embedding lookup touches 128 rows of
 * 30522).
 */
#include "ops_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* True when a live op reads t at an input its table entry marks as no
 * trained parameter (BatchNormalization's running mean and variance). */
static bool is_running_stat(const wl_graph *g, int32_t t)
{
    /* With the consumer lists built, look at t's readers only. */
    int32_t n = g->consumer_start ? wl_consumer_count(g, t) : g->n_ops;
    for (int32_t k = 0; k < n; k++) {
        const wl_op *op = &g->ops[g->consumer_start ? wl_consumer_list(g, t)[k] : k];
        unsigned marked = wl_op_def_of(op->kind)->non_param_inputs;
        if (op->dead || !marked)
            continue;
        for (int i = 0; i < op->n_inputs && i < 32; i++)
            if ((marked >> i & 1u) && op->inputs[i] == t)
                return true;
    }
    return false;
}

bool wl_tensor_is_param(const wl_graph *g, int32_t t)
{
    const wl_tensor *tensor = &g->tensors[t];
    return tensor->kind == WL_TENSOR_WEIGHT && wl_dtype_is_weight(tensor->dtype) &&
           !is_running_stat(g, t);
}

/* A tensor whose bytes come from activation memory at run time. */
static bool is_activation(const wl_tensor *t)
{
    return (t->kind == WL_TENSOR_ACTIVATION || t->kind == WL_TENSOR_INPUT) &&
           !wl_tensor_is_known(t);
}

static bool moves_data(const wl_op *op)
{
    wl_op_category c = wl_op_category_of(op);
    return !op->dead && !op->folded && c != WL_CAT_VIEW && c != WL_CAT_UNKNOWN && c != WL_CAT_SHAPE;
}

/* True when input i of op is the same tensor as an earlier input. */
static bool repeated_input(const wl_op *op, int i)
{
    for (int j = 0; j < i; j++)
        if (op->inputs[j] == op->inputs[i])
            return true;
    return false;
}

void wl_op_stats_get(const wl_graph *g, int32_t o, wl_op_stats *out)
{
    const wl_op *op = &g->ops[o];
    memset(out, 0, sizeof *out);
    if (op->dead || op->folded)
        return;
    if (wl_op_def_of(op->kind)->problem) {
        wl_problem p;
        if (wl_op_problem(g, o, &p, NULL) == AS_OK)
            out->macs = wl_problem_macs(&p);
    }
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        if (t < 0 || repeated_input(op, i))
            continue;
        const wl_tensor *tensor = &g->tensors[t];
        int64_t bytes = wl_tensor_bytes(tensor);
        if (bytes < 0)
            continue;
        if (tensor->kind == WL_TENSOR_WEIGHT) {
            if (wl_tensor_is_param(g, t))
                out->params += wl_tensor_elements(tensor);
            out->weight_bytes += bytes;
        } else if (is_activation(tensor)) {
            out->input_bytes += bytes;
        }
    }
    for (int i = 0; i < op->n_outputs; i++) {
        const wl_tensor *tensor = &g->tensors[op->outputs[i]];
        if (wl_tensor_bytes(tensor) < 0)
            continue;
        out->output_bytes += wl_tensor_bytes(tensor);
        out->output_elements += wl_tensor_elements(tensor);
    }
    if (wl_op_gathers_rows(op, 0) && op->n_inputs > 0 && op->inputs[0] >= 0 &&
        g->tensors[op->inputs[0]].kind == WL_TENSOR_WEIGHT)
        out->weight_bytes = out->output_bytes; /* only the gathered rows */
}

as_code wl_graph_stats(const wl_graph *g, wl_stats *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->max_working_set_op = -1;
    /* Parameters: each weight tensor once, however many ops read it (GPT-2
     * reads its token embedding twice). */
    bool *used = calloc((size_t)g->n_tensors + 1, sizeof *used);
    if (!used)
        return as_fail(st, AS_ENOMEM, "%s: out of memory computing statistics", g->source);
    for (int32_t o = 0; o < g->n_ops; o++)
        for (int i = 0; !g->ops[o].dead && i < g->ops[o].n_inputs; i++)
            if (g->ops[o].inputs[i] >= 0)
                used[g->ops[o].inputs[i]] = true;
    double nonzero = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        if (!used[t] || !wl_tensor_is_param(g, t))
            continue;
        const wl_tensor *tensor = &g->tensors[t];
        int64_t elements = wl_tensor_elements(tensor);
        if (elements < 0)
            continue;
        out->params += elements;
        out->weight_bytes += wl_tensor_bytes(tensor);
        nonzero += (double)elements * tensor->density;
    }
    free(used);
    out->nonzero_params = (int64_t)llround(nonzero);

    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead || op->folded)
            continue;
        wl_op_stats s;
        wl_op_stats_get(g, o, &s);
        out->n_ops++;
        out->macs += s.macs;
        if (wl_op_kind_category(op->kind) == WL_CAT_COMPUTE) {
            out->n_compute_ops++;
            int64_t ws = s.input_bytes + s.output_bytes;
            if (ws > out->max_working_set_bytes) {
                out->max_working_set_bytes = ws;
                out->max_working_set_op = o;
            }
        }
        if (moves_data(op))
            out->dram_bytes_unfused += s.input_bytes + s.weight_bytes + s.output_bytes;
    }
    out->op_intensity_unfused = out->dram_bytes_unfused > 0
                                    ? 2.0 * (double)out->macs / (double)out->dram_bytes_unfused
                                    : 0.0;
    return AS_OK;
}
