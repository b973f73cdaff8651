/*
 * fold.c -- constant folding after shape inference (see infer_private.h).
 *
 * Exporters compute shapes at run time: torch writes Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape for a dynamic view, Range and Equal and
 * Where for attention masks.  With the input shapes known, all of that is
 * arithmetic on a few integers that can be done now, so that Reshape
 * targets are known and the ops cost nothing at run time.
 *
 * Values live in the graph arena: int64 for integer and bool tensors,
 * double for floating ones (wl_tensor.ivalues / fvalues).  Three kinds of
 * folding cover the op vocabulary:
 *   - data movement and views: each output element is a copy of one
 *     input element (or a fill value), found by a per-op "source" map;
 *   - elementwise ops: numpy broadcasting plus one scalar function;
 *   - Shape, ConstantOfShape, Range: values made from the shape rule's
 *     results.
 * Not folding is never an error: values just stay unknown.  The folders
 * themselves live with their ops in the family files (ops_*.c); this file
 * holds the value and index helpers, the data movement folder and the
 * dispatch through the op table.
 */
#include "ops_private.h"

#include <math.h>
#include <string.h>

/* -------------------------------------------------------------- values */

/* True when t's values are known; an empty tensor trivially has them. */
bool wl_fold_has_values(const wl_tensor *t)
{
    return t->ivalues || t->fvalues || wl_tensor_elements(t) == 0;
}

/* A double as int64, truncated toward zero; saturates, NaN gives 0
 * (float -> int Cast of out-of-range values is undefined in ONNX). */
static int64_t saturate_i64(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775808.0)
        return INT64_MAX;
    if (x <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

/* Element k of t as a double, whatever t stores. */
double wl_fold_value_f(const wl_tensor *t, int64_t k)
{
    return t->ivalues ? (double)t->ivalues[k] : t->fvalues[k];
}

/* Element k of t as an int64 (floating values saturate, see above). */
int64_t wl_fold_value_i(const wl_tensor *t, int64_t k)
{
    return t->ivalues ? t->ivalues[k] : saturate_i64(t->fvalues[k]);
}

/* Store element k of t from a double, converting to t's representation;
 * bool tensors hold 0 or 1. */
void wl_fold_store_f(wl_tensor *t, int64_t k, double v)
{
    if (t->fvalues)
        t->fvalues[k] = v;
    else
        t->ivalues[k] = t->dtype == WL_DTYPE_BOOL ? v != 0 : saturate_i64(v);
}

/* Store element k of t from an int64, likewise. */
void wl_fold_store_i(wl_tensor *t, int64_t k, int64_t v)
{
    if (t->fvalues)
        t->fvalues[k] = (double)v;
    else
        t->ivalues[k] = t->dtype == WL_DTYPE_BOOL ? v != 0 : v;
}

/* Element k of t := element j of src. */
static void copy_value(wl_tensor *t, int64_t k, const wl_tensor *src, int64_t j)
{
    if (src->ivalues)
        wl_fold_store_i(t, k, src->ivalues[j]);
    else
        wl_fold_store_f(t, k, src->fvalues[j]);
}

/* Give t room for its values (one element at least, so that an empty
 * tensor still reads as known): fvalues for floating types, ivalues for
 * the rest.  False when out of memory. */
bool wl_fold_alloc(wl_infer_ctx *c, wl_tensor *t)
{
    int64_t n = wl_tensor_elements(t);
    size_t count = n > 0 ? (size_t)n : 1;
    if (wl_dtype_is_float(t->dtype))
        t->fvalues = as_arena_alloc(&c->g->arena, count * sizeof *t->fvalues);
    else
        t->ivalues = as_arena_alloc(&c->g->arena, count * sizeof *t->ivalues);
    return t->fvalues || t->ivalues;
}

/* Fail with AS_ENOMEM: the graph arena has no room for folded values. */
as_code wl_fold_out_of_memory(const wl_infer_ctx *c)
{
    char who[AS_MSG_BYTES];
    return as_fail(c->st, AS_ENOMEM, "%s: out of memory folding its outputs",
                   wl_infer_node_str(c, who, sizeof who));
}

/* ------------------------------------------------------------- indexing */

/* Row-major flat index of multi-index idx in t. */
int64_t wl_fold_flat_index(const wl_tensor *t, const int64_t *idx)
{
    int64_t k = 0;
    for (int i = 0; i < t->rank; i++)
        k = k * t->dims[i] + idx[i];
    return k;
}

/* Advance idx to the next multi-index of dims, last axis fastest. */
void wl_fold_next_index(int rank, const int64_t *dims, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return;
        idx[i] = 0;
    }
}

/* Flat index in t of the element that numpy broadcasting pairs with
 * position idx of a result of rank out_rank (t's dims align right; a
 * dim of 1 repeats). */
int64_t wl_fold_broadcast_index(const wl_tensor *t, int out_rank, const int64_t *idx)
{
    int offset = out_rank - t->rank;
    int64_t k = 0;
    for (int i = 0; i < t->rank; i++)
        k = k * t->dims[i] + (t->dims[i] == 1 ? 0 : idx[offset + i]);
    return k;
}

/* Fill every output element by element from its source. */
as_code wl_fold_moved(wl_infer_ctx *c, wl_fold_source source)
{
    for (int o = 0; o < c->op->n_outputs; o++) {
        wl_tensor *y = wl_infer_output(c, o);
        if (!wl_fold_alloc(c, y))
            return wl_fold_out_of_memory(c);
        int64_t n = wl_tensor_elements(y), idx[WL_MAX_RANK] = {0};
        for (int64_t k = 0; k < n; k++) {
            int in_slot = 0;
            int64_t from = source(c, o, idx, &in_slot);
            if (from < 0)
                wl_fold_store_f(y, k, c->fill);
            else
                copy_value(y, k, wl_infer_input(c, in_slot), from);
            wl_fold_next_index(y->rank, y->dims, idx);
        }
    }
    return AS_OK;
}

/* ----------------------------------------------------------- dispatch */

/*
 * An op none of whose inputs varies at run time -- every present input is
 * a constant or folded -- computes a constant, whether or not its values
 * can be kept: a compiler evaluates it once, when the model is loaded, as
 * XLA and TVM fold every constant subgraph.  Mark it folded and its
 * outputs known without values.  Ops with no inputs are left alone
 * (Constant folds itself; random generators must not fold), and so are
 * outputs of unknown shape.
 */
static void fold_unvalued(wl_infer_ctx *c)
{
    wl_op *op = c->op;
    int present = 0;
    for (int s = 0; s < op->n_inputs; s++) {
        const wl_tensor *t = wl_infer_input(c, s);
        if (!t)
            continue;
        if (!wl_tensor_is_known(t))
            return;
        present++;
    }
    for (int o = 0; o < op->n_outputs; o++)
        if (!wl_infer_output(c, o)->shape_known)
            return;
    if (present == 0)
        return;
    for (int o = 0; o < op->n_outputs; o++) {
        wl_tensor *t = wl_infer_output(c, o);
        if (!wl_fold_has_values(t))
            t->known_unvalued = true;
    }
    op->folded = true;
}

/* Fold through the op's table entry when it has a folder, this node
 * folds, its inputs have values (or only dims are read) and every output
 * is small enough.  Otherwise, when its inputs are all known, fold it
 * without values (fold_unvalued) -- but not when the folder ran and gave
 * no values (integer division by zero, overflow: undefined, so left to
 * run time). */
as_code wl_fold_op(wl_infer_ctx *c)
{
    wl_op *op = c->op;
    const wl_op_def *def = wl_op_def_of(op->kind);
    if (!def->fold || (def->folds_node && !def->folds_node(op))) {
        fold_unvalued(c);
        return AS_OK;
    }
    /* Shape reads only its input's dims; everything else its values. */
    for (int s = 0; !def->fold_reads_dims_only && s < op->n_inputs; s++) {
        const wl_tensor *t = wl_infer_input(c, s);
        if (t && !wl_fold_has_values(t)) {
            fold_unvalued(c);
            return AS_OK;
        }
    }
    for (int o = 0; o < op->n_outputs; o++) {
        int64_t n = wl_tensor_elements(wl_infer_output(c, o));
        if (n < 0 || n > WL_MAX_FOLD_ELEMS) {
            fold_unvalued(c);
            return AS_OK;
        }
    }
    as_code rc = def->fold(c, def->source);
    if (rc != AS_OK)
        return rc;
    op->folded = true;
    for (int o = 0; o < op->n_outputs; o++)
        op->folded &= wl_fold_has_values(wl_infer_output(c, o));
    return AS_OK;
}
