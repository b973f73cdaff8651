/*
 * problem.c -- lowering of compute ops to Timeloop-style loop-nest problems
 * (see the comment above wl_problem in workload.h): the data-space
 * builders the op families use and the dispatch through the op table; the
 * Conv and matmul lowerings live in ops_window.c and ops_matmul.c.
 */
#include "ops_private.h"

#include <string.h>

static const char *const dataspace_names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

/* Append a rank to data space ds: coef_a * a (+ coef_b * b when coef_b). */
void wl_problem_add_rank(wl_dataspace *ds, wl_dim a, int64_t coef_a, wl_dim b, int64_t coef_b)
{
    wl_proj_rank *r = &ds->ranks[ds->n_ranks++];
    r->n_terms = coef_b ? 2 : 1;
    r->terms[0] = (wl_proj_term){a, coef_a};
    r->terms[1] = (wl_proj_term){b, coef_b};
}

/* Append n ranks to data space ds, one dim each (coefficient 1). */
void wl_problem_add_dims(wl_dataspace *ds, int n, const wl_dim *dims)
{
    for (int i = 0; i < n; i++)
        wl_problem_add_rank(ds, dims[i], 1, dims[i], 0);
}

const char *wl_number_name(wl_number n)
{
    static const char *const names[] = {
        [WL_NUMBER_AS_HARDWARE] = "as-hardware",
        [WL_NUMBER_INT] = "int",
        [WL_NUMBER_FLOAT] = "float",
        [WL_NUMBER_BF16] = "bf16",
    };
    return (unsigned)n < sizeof names / sizeof names[0] ? names[n] : "?";
}

/* The number format the MACs must take tensor t's elements in: its
 * storage type when wl_set_precision chose one, else its own type's
 * family at its bits (a float at a width with no IEEE format is a
 * quantised one); AS_HARDWARE when nobody chose its precision. */
static wl_number tensor_number(const wl_tensor *t)
{
    if (!t->precision_chosen)
        return WL_NUMBER_AS_HARDWARE;
    wl_dtype type = t->storage_dtype != WL_DTYPE_UNDEFINED ? t->storage_dtype : t->dtype;
    if (type == WL_DTYPE_BF16 && t->bits == 16)
        return WL_NUMBER_BF16;
    bool ieee_width = t->bits == 16 || t->bits == 32 || t->bits == 64;
    return wl_dtype_is_float(type) && type != WL_DTYPE_BF16 && ieee_width ? WL_NUMBER_FLOAT
                                                                          : WL_NUMBER_INT;
}

/* Bind data space id to graph tensor t: name, precision, number format,
 * density. */
void wl_problem_bind(const wl_graph *g, wl_problem *p, wl_dataspace_id id, int32_t t)
{
    wl_dataspace *ds = &p->ds[id];
    ds->name = dataspace_names[id];
    ds->tensor = t;
    ds->bits = g->tensors[t].bits;
    ds->number = tensor_number(&g->tensors[t]);
    ds->density = g->tensors[t].density;
    ds->read_write = id == WL_DS_OUTPUTS;
}

/* Check that op `o` is a compute op with shaped operands, then let its
 * table entry build the problem. */
as_code wl_op_problem(const wl_graph *g, int32_t o, wl_problem *out, as_status *st)
{
    const wl_op *op = &g->ops[o];
    memset(out, 0, sizeof *out);
    out->op = o;
    if (!wl_op_def_of(op->kind)->problem)
        return as_fail(st, AS_EINVAL, WL_OP_FMT ": not a compute op; it has no loop-nest problem",
                       WL_OP_ARGS(g, op));
    for (int i = 0; i < 2; i++)
        if (op->n_inputs <= i || op->inputs[i] < 0 || !g->tensors[op->inputs[i]].shape_known)
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": operand %d has no known shape",
                           WL_OP_ARGS(g, op), i);
    if (!g->tensors[op->outputs[0]].shape_known)
        return as_fail(st, AS_EINVAL, WL_OP_FMT ": output shape unknown", WL_OP_ARGS(g, op));
    return wl_op_def_of(op->kind)->problem(g, op, out, st);
}

int64_t wl_problem_macs(const wl_problem *p)
{
    int64_t macs = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        if (!as_mul_i64(macs, p->bound[d], &macs))
            return -1;
    return macs;
}

int64_t wl_dataspace_elements(const wl_problem *p, wl_dataspace_id id)
{
    const wl_dataspace *ds = &p->ds[id];
    int64_t elements = 1;
    for (int r = 0; r < ds->n_ranks; r++) {
        int64_t extent = 1;
        for (int k = 0; k < ds->ranks[r].n_terms; k++) {
            const wl_proj_term *t = &ds->ranks[r].terms[k];
            extent += t->coef * (p->bound[t->dim] - 1);
        }
        if (!as_mul_i64(elements, extent, &elements))
            return -1;
    }
    return elements;
}
