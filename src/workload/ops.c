/*
 * ops.c -- the op table's lookup and the queries other modules ask of it
 * (see ops_private.h for the table, workload.h for the queries).
 */
#include "ops_private.h"

/* The families, each a table indexed by kind; an entry with a shape rule
 * is the kind's.  A new family adds its table here. */
static const wl_op_def *const families[] = {
    wl_ops_window,   wl_ops_matmul, wl_ops_norm,  wl_ops_elementwise,
    wl_ops_movement, wl_ops_index,  wl_ops_shape, wl_ops_lowering,
};

/* The entry of kinds no family describes: no rule, no cost. */
static const wl_op_def no_def;

/* A kind's entry is in the first family whose table gives it a shape
 * rule (test_ops checks there is exactly one). */
const wl_op_def *wl_op_def_of(wl_op_kind kind)
{
    if ((unsigned)kind >= WL_OP_COUNT)
        return &no_def;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        if (families[f][kind].infer)
            return &families[f][kind];
    return &no_def;
}

/* The table entry's vector class (see workload.h). */
wl_vector_class wl_op_vector_class(wl_op_kind k)
{
    return wl_op_def_of(k)->vector;
}

/* Elements of tensor t, 0 for an omitted or unshaped one. */
static int64_t elements_or_zero(const wl_graph *g, int32_t t)
{
    int64_t n = t >= 0 ? wl_tensor_elements(&g->tensors[t]) : 0;
    return n > 0 ? n : 0;
}

/* Positions of a pooling window (product of kernel_shape). */
static int64_t window_positions(const wl_op *op)
{
    int64_t n = 1;
    for (int i = 0; i < op->attrs.n_spatial && i < WL_MAX_SPATIAL; i++)
        n *= op->attrs.kernel_shape[i] > 0 ? op->attrs.kernel_shape[i] : 1;
    return n;
}

/* Work by the entry's class: per output element times its operations,
 * per element of input 0, or per output element and window position. */
int64_t wl_op_vector_ops(const wl_graph *g, const wl_op *op, const wl_op_stats *s)
{
    const wl_op_def *def = wl_op_def_of(op->kind);
    switch (def->vector) {
    case WL_VEC_PER_OUTPUT:
        return def->vector_ops_per_element * s->output_elements;
    case WL_VEC_PER_INPUT:
        return op->n_inputs > 0 ? elements_or_zero(g, op->inputs[0]) : 0;
    case WL_VEC_PER_WINDOW:
        return window_positions(op) * s->output_elements;
    case WL_VEC_TRANSFORM:
        return def->transform_ops ? def->transform_ops(g, op) : 0;
    case WL_VEC_NONE:
        break;
    }
    return 0;
}

/* The entry's rule (or its per-node hook); rules about input 0 leave the
 * other inputs whole. */
wl_halo_rule wl_op_halo(const wl_op *op, int input)
{
    const wl_op_def *def = wl_op_def_of(op->kind);
    wl_halo_rule rule = def->halo_of ? def->halo_of(op) : def->halo;
    bool every_input = rule == WL_HALO_NOT_AXIS || rule == WL_HALO_POINTWISE;
    return input == 0 || every_input ? rule : WL_HALO_WHOLE;
}

/* The table entry's kernel_from_weight. */
bool wl_op_kernel_from_weight(wl_op_kind k)
{
    return wl_op_def_of(k)->kernel_from_weight;
}

/* See workload.h: the entry's fields, most modelled first. */
wl_op_status wl_op_status_of(const char *onnx_op_type)
{
    wl_op_kind kind = wl_op_kind_from_name(onnx_op_type);
    const wl_op_def *def = wl_op_def_of(kind);
    if (!def->infer)
        return WL_STATUS_UNSUPPORTED;
    if (def->problem)
        return WL_STATUS_COMPUTE;
    if (def->vector != WL_VEC_NONE)
        return WL_STATUS_VECTOR;
    if (wl_op_kind_category(kind) == WL_CAT_MOVE)
        return WL_STATUS_MOVED;
    return WL_STATUS_INFERRED;
}

const char *wl_op_status_name(wl_op_status s)
{
    static const char *const names[] = {
        [WL_STATUS_UNSUPPORTED] = "unsupported",
        [WL_STATUS_INFERRED] = "inferred only (shape / view, no cost)",
        [WL_STATUS_MOVED] = "costed (data movement, DRAM traffic only)",
        [WL_STATUS_VECTOR] = "costed (vector unit)",
        [WL_STATUS_COMPUTE] = "costed (compute, on the mapper)",
    };
    return (unsigned)s <= WL_STATUS_COMPUTE ? names[s] : "?";
}

/* Input 0 of an entry marked gathers_rows. */
bool wl_op_gathers_rows(const wl_op *op, int input)
{
    return input == 0 && wl_op_def_of(op->kind)->gathers_rows;
}
