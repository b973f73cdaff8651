/*
 * infer.c -- shape inference and operand checks for the ONNX ops of
 * WL_OP_LIST, opsets 11..17 (see workload.h); constant folding is in
 * fold.c.
 *
 * Each op kind has one rule, in its family file (ops_*.c) and found
 * through the op table (ops_private.h): it reads the input shapes and
 * attributes, checks that they agree, and sets the shape and element type
 * of every output.  This file holds what the rules share and the
 * dispatch.  Rules never trust an attribute: strides, groups, axes, sizes
 * are range-checked before they divide or index anything, and every
 * product of dimensions goes through as_mul_i64.
 *
 * Where ONNX turned an attribute into an input (Split sizes, Squeeze and
 * Unsqueeze axes, ReduceSum axes at opset 13; Pad pads and Clip bounds at
 * 11; ReduceMean axes at 18), the input is used when the node has it and
 * the attribute otherwise: a well-formed node of any opset has exactly
 * one of the two forms, so whichever is present is the one its opset
 * defines.  Inputs that carry parameters (shapes, axes, sizes) must have
 * known values: they are constants or folded shape arithmetic.
 */
#include "ops_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

const char *wl_infer_node_str(const wl_infer_ctx *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s: node %d '%s' (%s)", c->g->source, (int)c->op->source_index,
             c->op->name ? c->op->name : "",
             c->op->op_type ? c->op->op_type : wl_op_kind_name(c->op->kind));
    return buf;
}

as_code wl_infer_fail(const wl_infer_ctx *c, const char *fmt, ...)
{
    char who[AS_MSG_BYTES], what[AS_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return as_fail(c->st, AS_EINVAL, "%s: %s", wl_infer_node_str(c, who, sizeof who), what);
}

const wl_tensor *wl_infer_input(const wl_infer_ctx *c, int slot)
{
    if (slot >= c->op->n_inputs || c->op->inputs[slot] < 0)
        return NULL;
    return &c->g->tensors[c->op->inputs[slot]];
}

wl_tensor *wl_infer_output(const wl_infer_ctx *c, int slot)
{
    return &c->g->tensors[c->op->outputs[slot]];
}

/* "[1,3,224,224]" for rank/dims that need not belong to a tensor (a
 * broadcast in progress, a target shape), so messages can show them. */
const char *wl_infer_dims_str(int rank, const int64_t *dims, char *buf, size_t size)
{
    wl_tensor t = {.shape_known = true, .rank = rank};
    if (rank > 0)
        memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    return wl_shape_str(&t, buf, size);
}

/*
 * Give output `slot` its shape and element type, and forget any values it
 * had (the folder recomputes them).  Fails on a rank over WL_MAX_RANK, a
 * negative dimension or an element count that overflows int64, so that
 * every later product of an output's dims is safe.  Slots past the op's
 * outputs are optional outputs the node omitted: nothing to do.
 *
 * The storage precision (bits) follows the element type unless a
 * transform chose another one: bits still at 0 or at the default of the
 * previous type are replaced, anything else is kept.
 */
as_code wl_infer_set_output(wl_infer_ctx *c, int slot, wl_dtype dtype, int rank,
                            const int64_t *dims)
{
    if (slot >= c->op->n_outputs)
        return AS_OK;
    wl_tensor *t = wl_infer_output(c, slot);
    if (rank > WL_MAX_RANK)
        return wl_infer_fail(c, "output '%s' would have rank %d; at most %d is supported", t->name,
                             rank, WL_MAX_RANK);
    int64_t elements = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return wl_infer_fail(c, "output '%s' would have negative dimension %d (%lld)", t->name,
                                 i, (long long)dims[i]);
        if (!as_mul_i64(elements, dims[i], &elements))
            return wl_infer_fail(c, "element count of output '%s' overflows 64 bits", t->name);
    }
    if (t->bits == 0 || t->bits == wl_dtype_bits(t->dtype))
        t->bits = wl_dtype_bits(dtype);
    t->dtype = dtype;
    t->rank = rank;
    if (rank > 0)
        memmove(t->dims, dims, (size_t)rank * sizeof *dims);
    t->shape_known = true;
    t->ivalues = NULL;
    t->fvalues = NULL;
    return AS_OK;
}

/* Output `slot` gets the shape of tensor `like` and element type dtype. */
as_code wl_infer_set_output_like(wl_infer_ctx *c, int slot, const wl_tensor *like, wl_dtype dtype)
{
    return wl_infer_set_output(c, slot, dtype, like->rank, like->dims);
}

/* Normalise an axis in [-rank, rank - 1] (or [-rank, rank] when
 * one_past is set: Flatten's axis may equal the rank).  `key` names the
 * attribute or input for the message. */
as_code wl_infer_axis(const wl_infer_ctx *c, const char *key, int64_t axis, int rank, bool one_past,
                      int *out)
{
    int64_t hi = one_past ? rank : rank - 1;
    if (axis < -(int64_t)rank || axis > hi)
        return wl_infer_fail(c, "%s = %lld out of range for rank %d", key, (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return AS_OK;
}

/*
 * Numpy (multidirectional) broadcasting of shape a with shape b: dims are
 * aligned at the right, a dim of 1 stretches to the other.  out may alias
 * a or b.  `operand` is the input whose shape the message names.
 */
as_code wl_infer_broadcast(const wl_infer_ctx *c, const wl_tensor *operand, int rank_a,
                           const int64_t *a, int rank_b, const int64_t *b, int *rank_out,
                           int64_t *out)
{
    int rank = rank_a > rank_b ? rank_a : rank_b;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        int64_t x = i < rank - rank_a ? 1 : a[i - (rank - rank_a)];
        int64_t y = i < rank - rank_b ? 1 : b[i - (rank - rank_b)];
        if (x != y && x != 1 && y != 1) {
            char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
            return wl_infer_fail(c, "cannot broadcast %s with %s (input '%s')",
                                 wl_infer_dims_str(rank_a, a, sa, sizeof sa),
                                 wl_infer_dims_str(rank_b, b, sb, sizeof sb), operand->name);
        }
        dims[i] = x == 1 ? y : x;
    }
    memcpy(out, dims, (size_t)rank * sizeof *dims);
    *rank_out = rank;
    return AS_OK;
}

/* Unidirectional broadcasting (Gemm's C, PRelu's slope, LayerNorm's
 * scale): t must stretch to rank/dims without changing them. */
as_code wl_infer_broadcasts_to(const wl_infer_ctx *c, const wl_tensor *t, int rank,
                               const int64_t *dims)
{
    int r;
    int64_t d[WL_MAX_RANK];
    as_code rc = wl_infer_broadcast(c, t, t->rank, t->dims, rank, dims, &r, d);
    if (rc != AS_OK)
        return rc;
    if (r != rank || memcmp(d, dims, (size_t)rank * sizeof *dims) != 0) {
        char st[WL_SHAPE_STR_BYTES], sd[WL_SHAPE_STR_BYTES];
        return wl_infer_fail(c, "input '%s' %s does not broadcast to %s", t->name,
                             wl_shape_str(t, st, sizeof st),
                             wl_infer_dims_str(rank, dims, sd, sizeof sd));
    }
    return AS_OK;
}

/* The known integer values of input `slot` (a shape, axes, sizes, pads),
 * which the caller has checked is present.  `role` names the input for
 * the message ("shape", "axes"). */
as_code wl_infer_ints(const wl_infer_ctx *c, int slot, const char *role, const int64_t **values,
                      int64_t *count)
{
    const wl_tensor *t = IN(c, slot);
    int64_t n = wl_tensor_elements(t);
    *values = NULL;
    *count = 0;
    if (n > 0 && !t->ivalues)
        return wl_infer_fail(c,
                             "%s input '%s' has no known integer values (it must be a "
                             "constant or computed from shapes)",
                             role, t->name);
    if (t->rank > 1)
        return wl_infer_fail(c, "%s input '%s' has rank %d; expected a list (rank 1)", role,
                             t->name, t->rank);
    *values = t->ivalues;
    *count = n;
    return AS_OK;
}

/* A target shape given as input `slot`: a known list of at most
 * WL_MAX_RANK entries, none negative unless Reshape's 0 / -1 conventions
 * (allow_special) apply. */
as_code wl_infer_shape_list(const wl_infer_ctx *c, int slot, bool allow_special,
                            const int64_t **shape, int64_t *n)
{
    as_code rc = wl_infer_ints(c, slot, "shape", shape, n);
    if (rc != AS_OK)
        return rc;
    if (*n > WL_MAX_RANK)
        return wl_infer_fail(c, "input 'shape' has %lld entries; at most %d is supported",
                             (long long)*n, WL_MAX_RANK);
    for (int64_t i = 0; i < *n && !allow_special; i++)
        if ((*shape)[i] < 0)
            return wl_infer_fail(c, "input 'shape' has negative entry %lld",
                                 (long long)(*shape)[i]);
    return AS_OK;
}

/* A required parameter input: present with a known list of values. */
as_code wl_infer_required_ints(const wl_infer_ctx *c, int slot, const char *role,
                               const int64_t **values, int64_t *count)
{
    if (!IN(c, slot))
        return wl_infer_fail(c, "missing required input %d (%s)", slot, role);
    return wl_infer_ints(c, slot, role, values, count);
}

/*
 * The axes an op works on: input `slot` when the node has it (the opset
 * 13+ form), else the attribute list.  Each axis is normalised against
 * `rank` (for Unsqueeze, the output rank) and may appear once; is_axis[]
 * flags them.  *n_axes is 0 when the node gives none.
 */
as_code wl_infer_axes(const wl_infer_ctx *c, int slot, int rank, bool is_axis[WL_MAX_RANK],
                      int *n_axes)
{
    const int64_t *axes = c->op->attrs.axes;
    int64_t n = c->op->attrs.n_axes;
    const char *key = "attribute 'axes'";
    if (IN(c, slot)) {
        as_code rc = wl_infer_ints(c, slot, "axes", &axes, &n);
        if (rc != AS_OK)
            return rc;
        key = "input 'axes'";
    }
    if (n < 0 || n > rank)
        return wl_infer_fail(c, "%s has %lld entries for rank %d", key, (long long)n, rank);
    memset(is_axis, 0, WL_MAX_RANK * sizeof *is_axis);
    for (int64_t i = 0; i < n; i++) {
        int axis = 0;
        as_code rc = wl_infer_axis(c, key, axes[i], rank, false, &axis);
        if (rc != AS_OK)
            return rc;
        if (is_axis[axis])
            return wl_infer_fail(c, "%s repeats axis %lld", key, (long long)axes[i]);
        is_axis[axis] = true;
    }
    *n_axes = (int)n;
    return AS_OK;
}

/* ceil(a / b) for a >= 0, b > 0, without overflow. */
int64_t wl_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* Ops whose output 0 is their input 0, shape and type: Softmax, LogSoftmax,
 * Identity, Dropout (inference: identity; its optional mask output has the
 * same shape in bool). */
as_code wl_infer_same(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (c->op->kind == WL_OP_SOFTMAX || c->op->kind == WL_OP_LOG_SOFTMAX) {
        int axis = 0;
        as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &axis);
        if (rc != AS_OK)
            return rc;
    }
    c->fill = 1.0; /* Dropout's mask: every element kept */
    as_code rc = wl_infer_set_output_like(c, 0, x, x->dtype);
    if (rc == AS_OK)
        rc = wl_infer_set_output_like(c, 1, x, WL_DTYPE_BOOL);
    return rc;
}

/* ---------------------------------------------------------- dispatching */

/*
 * An op type accelsearch does not model: outputs the importer already
 * shaped (from ONNX value_info) keep their shape; otherwise output 0 is
 * assumed to look like input 0, with a warning, since a guess lets the
 * rest of the graph be costed.  Never folded.
 */
static as_code infer_unknown(wl_infer_ctx *c)
{
    wl_tensor *y = wl_infer_output(c, 0);
    if (y->shape_known)
        return AS_OK;
    const wl_tensor *x = IN(c, 0);
    if (!x || !x->shape_known)
        return wl_infer_fail(c,
                             "unknown op type: cannot infer output '%s' (no input to take "
                             "its shape from)",
                             y->name);
    char who[AS_MSG_BYTES];
    wl_warn(c->g,
            "%s: unknown op type; assuming output '%s' has the shape and type of input "
            "'%s'",
            wl_infer_node_str(c, who, sizeof who), y->name, x->name);
    return wl_infer_set_output_like(c, 0, x, x->dtype);
}

/* Inputs a rule may rely on: the required ones present, every present one
 * shaped. */
static as_code check_inputs(const wl_infer_ctx *c, int required)
{
    for (int s = 0; s < required; s++)
        if (!IN(c, s))
            return wl_infer_fail(c, "missing required input %d", s);
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = IN(c, s);
        if (t && !t->shape_known)
            return wl_infer_fail(c, "input '%s' has unknown shape", t->name);
        if (t && t->rank > WL_MAX_RANK)
            return wl_infer_fail(c, "input '%s' has rank %d; at most %d is supported", t->name,
                                 t->rank, WL_MAX_RANK);
    }
    return AS_OK;
}

/*
 * True when the op's output 0 is its input 0 element for element, as its
 * shape rule left the geometry in c: same type and shape, and a Pad that
 * pads nothing before (so nothing after), a Slice from index 0 with step 1
 * on every axis, a Transpose by the identity; a Cast, Expand or Tile that
 * keeps type and shape.  Such a node moves no data (a view).
 */
static bool is_identity(const wl_infer_ctx *c)
{
    const wl_op *op = c->op;
    const wl_tensor *x = IN(c, 0);
    if (!x || op->n_outputs != 1 || x->dtype == WL_DTYPE_UNDEFINED)
        return false;
    const wl_tensor *y = wl_infer_output(c, 0);
    if (!y->shape_known || y->dtype != x->dtype || y->rank != x->rank)
        return false;
    for (int i = 0; i < x->rank; i++)
        if (y->dims[i] != x->dims[i])
            return false;
    bool same = true;
    switch (op->kind) {
    case WL_OP_PAD:
        for (int i = 0; i < x->rank; i++)
            same &= c->first[i] == 0;
        return same;
    case WL_OP_SLICE:
        for (int i = 0; i < x->rank; i++)
            same &= c->first[i] == 0 && c->step[i] == 1;
        return same;
    case WL_OP_TRANSPOSE:
        for (int i = 0; i < x->rank; i++)
            same &= c->perm[i] == i;
        return same;
    case WL_OP_CAST:
    case WL_OP_EXPAND:
    case WL_OP_TILE:
        return true;
    default:
        return false;
    }
}

/* Unknown kinds get the guessing rule; known ones have their inputs
 * checked, then their table entry's shape rule, then folding, then the
 * identity test. */
as_code wl_infer_op(wl_graph *g, int32_t op_index, as_status *st)
{
    if (op_index < 0 || op_index >= g->n_ops)
        return as_fail(st, AS_EINTERNAL, "%s: no node %d to infer", g->source, (int)op_index);
    wl_infer_ctx c = {.g = g, .op = &g->ops[op_index], .st = st};
    wl_op_kind kind = c.op->kind;
    c.op->folded = false;
    c.op->identity = false;
    if (kind == WL_OP_UNKNOWN || (unsigned)kind >= WL_OP_COUNT)
        return infer_unknown(&c);
    const wl_op_def *def = wl_op_def_of(kind);
    if (!def->infer) {
        char who[AS_MSG_BYTES];
        return as_fail(st, AS_EINTERNAL, "%s: no shape rule for this op type",
                       wl_infer_node_str(&c, who, sizeof who));
    }
    as_code rc = check_inputs(&c, def->required_inputs);
    if (rc == AS_OK)
        rc = def->infer(&c);
    if (rc == AS_OK)
        rc = wl_fold_op(&c);
    if (rc == AS_OK && !c.op->folded)
        c.op->identity = is_identity(&c);
    return rc;
}

/* Forget what inference derived, so that a re-run starts from the graph
 * inputs, weights and constants alone.  Outputs of unknown ops keep their
 * shape: it came from the importer (value_info) or from the first guess,
 * and nothing better can be computed. */
static void reset_derived(wl_graph *g)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        g->ops[o].folded = false;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        wl_tensor *tensor = &g->tensors[t];
        if (tensor->kind != WL_TENSOR_ACTIVATION)
            continue;
        int32_t producer = tensor->producer;
        if (producer >= 0 && g->ops[producer].kind == WL_OP_UNKNOWN)
            continue;
        tensor->shape_known = false;
        tensor->ivalues = NULL;
        tensor->fvalues = NULL;
        tensor->known_unvalued = false;
    }
}

as_code wl_graph_infer(wl_graph *g, as_status *st)
{
    as_code rc = wl_graph_index(g, st);
    if (rc != AS_OK)
        return rc;
    reset_derived(g);
    for (int32_t i = 0; rc == AS_OK && i < g->n_order; i++)
        rc = wl_infer_op(g, g->order[i], st);
    return rc;
}
