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
 * Not folding is never an error: values just stay unknown.
 */
#include "infer_private.h"

#include <math.h>
#include <string.h>

/* Most operands an elementwise fold reads (variadic Min/Max beyond this
 * are left unfolded). */
enum { MAX_FOLD_OPERANDS = 8 };

/* -------------------------------------------------------------- values */

/* True when t's values are known; an empty tensor trivially has them. */
static bool has_values(const wl_tensor *t)
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
static double value_f(const wl_tensor *t, int64_t k)
{
    return t->ivalues ? (double)t->ivalues[k] : t->fvalues[k];
}

/* Element k of t as an int64 (floating values saturate, see above). */
static int64_t value_i(const wl_tensor *t, int64_t k)
{
    return t->ivalues ? t->ivalues[k] : saturate_i64(t->fvalues[k]);
}

/* Store element k of t from a double, converting to t's representation;
 * bool tensors hold 0 or 1. */
static void store_f(wl_tensor *t, int64_t k, double v)
{
    if (t->fvalues)
        t->fvalues[k] = v;
    else
        t->ivalues[k] = t->dtype == WL_DTYPE_BOOL ? v != 0 : saturate_i64(v);
}

/* Store element k of t from an int64, likewise. */
static void store_i(wl_tensor *t, int64_t k, int64_t v)
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
        store_i(t, k, src->ivalues[j]);
    else
        store_f(t, k, src->fvalues[j]);
}

/* Give t room for its values (one element at least, so that an empty
 * tensor still reads as known): fvalues for floating types, ivalues for
 * the rest.  False when out of memory. */
static bool alloc_values(wl_infer_ctx *c, wl_tensor *t)
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
static as_code out_of_memory(const wl_infer_ctx *c)
{
    char who[AS_MSG_BYTES];
    return as_fail(c->st, AS_ENOMEM, "%s: out of memory folding its outputs",
                   wl_infer_node_str(c, who, sizeof who));
}

/* ------------------------------------------------------------- indexing */

/* Row-major flat index of multi-index idx in t. */
static int64_t flat_index(const wl_tensor *t, const int64_t *idx)
{
    int64_t k = 0;
    for (int i = 0; i < t->rank; i++)
        k = k * t->dims[i] + idx[i];
    return k;
}

/* Advance idx to the next multi-index of dims, last axis fastest. */
static void next_index(int rank, const int64_t *dims, int64_t *idx)
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
static int64_t broadcast_index(const wl_tensor *t, int out_rank, const int64_t *idx)
{
    int offset = out_rank - t->rank;
    int64_t k = 0;
    for (int i = 0; i < t->rank; i++)
        k = k * t->dims[i] + (t->dims[i] == 1 ? 0 : idx[offset + i]);
    return k;
}

/* ------------------------------------------------------ data movement */

/*
 * Where element idx of output out_slot comes from: sets *in_slot and
 * returns the flat index in that input, or -1 for c->fill.
 */
typedef int64_t (*source_fn)(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot);

/* Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) keep
 * the row-major order: same flat index.  Dropout's mask is all fill. */
static int64_t source_view(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    *in_slot = 0;
    return out_slot == 0 ? flat_index(wl_infer_output(c, 0), idx) : -1;
}

/* Expand: the input element numpy broadcasting pairs with idx. */
static int64_t source_expand(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    *in_slot = 0;
    return broadcast_index(wl_infer_input(c, 0), wl_infer_output(c, out_slot)->rank, idx);
}

/* Tile: the output repeats the input whole along every axis. */
static int64_t source_tile(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[i] = idx[i] % x->dims[i];
    *in_slot = 0;
    return flat_index(x, from);
}

/* Transpose: output axis i is input axis perm[i]. */
static int64_t source_transpose(const wl_infer_ctx *c, int out_slot, const int64_t *idx,
                                int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[c->perm[i]] = idx[i];
    *in_slot = 0;
    return flat_index(x, from);
}

/* Slice: from the first index, step by step, per axis. */
static int64_t source_slice(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        from[i] = c->first[i] + idx[i] * c->step[i];
    *in_slot = 0;
    return flat_index(x, from);
}

/* Pad (constant mode): shifted by the padding before; the fill value
 * outside the input. */
static int64_t source_pad(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *x = wl_infer_input(c, 0);
    int64_t from[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        from[i] = idx[i] - c->first[i];
        if (from[i] < 0 || from[i] >= x->dims[i])
            return -1;
    }
    *in_slot = 0;
    return flat_index(x, from);
}

/* Concat: walk the inputs along the axis to the one holding idx. */
static int64_t source_concat(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, sizeof from);
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = wl_infer_input(c, s);
        if (from[c->axis] < t->dims[c->axis]) {
            *in_slot = s;
            return flat_index(t, from);
        }
        from[c->axis] -= t->dims[c->axis];
    }
    return -1; /* unreachable: the output's axis is the sum of the inputs' */
}

/* Split: output out_slot starts after the earlier outputs on the axis. */
static int64_t source_split(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, sizeof from);
    for (int o = 0; o < out_slot; o++)
        from[c->axis] += wl_infer_output(c, o)->dims[c->axis];
    *in_slot = 0;
    return flat_index(wl_infer_input(c, 0), from);
}

/* Gather: output dims [axis, axis + indices rank) select an index, which
 * replaces the data's axis; negative indices count from the end. */
static int64_t source_gather(const wl_infer_ctx *c, int out_slot, const int64_t *idx, int *in_slot)
{
    const wl_tensor *data = wl_infer_input(c, 0), *indices = wl_infer_input(c, 1);
    int64_t len = data->dims[c->axis];
    int64_t at = value_i(indices, flat_index(indices, idx + c->axis));
    if (at < 0)
        at += len;
    if (at < 0 || at >= len)
        return -1; /* the shape rule rejects these; be safe anyway */
    int64_t from[WL_MAX_RANK];
    memcpy(from, idx, (size_t)c->axis * sizeof *from);
    from[c->axis] = at;
    memcpy(from + c->axis + 1, idx + c->axis + indices->rank,
           (size_t)(data->rank - c->axis - 1) * sizeof *from);
    *in_slot = 0;
    return flat_index(data, from);
}

/* Fill every output element by element from its source. */
static as_code fold_moved(wl_infer_ctx *c, source_fn source)
{
    for (int o = 0; o < c->op->n_outputs; o++) {
        wl_tensor *y = wl_infer_output(c, o);
        if (!alloc_values(c, y))
            return out_of_memory(c);
        int64_t n = wl_tensor_elements(y), idx[WL_MAX_RANK] = {0};
        for (int64_t k = 0; k < n; k++) {
            int in_slot = 0;
            int64_t from = source(c, o, idx, &in_slot);
            if (from < 0)
                store_f(y, k, c->fill);
            else
                copy_value(y, k, wl_infer_input(c, in_slot), from);
            next_index(y->rank, y->dims, idx);
        }
    }
    return AS_OK;
}

/* ----------------------------------------------------------- elementwise */

/*
 * The operands of one element of an elementwise op, read both ways: as
 * int64, exact for integer and bool tensors, and as double.  is_float
 * says which one the op computes on.  After the operands the row holds
 * the constants 0 and 1 and a slot for a computed result, so that every
 * result is an entry of the row.
 */
enum { ROW_ZERO = MAX_FOLD_OPERANDS, ROW_ONE, ROW_RESULT, ROW_SIZE };

typedef struct operand_row {
    int n; /* operands */
    bool is_float;
    int64_t i[ROW_SIZE];
    double f[ROW_SIZE];
} operand_row;

/* x[a] < x[b] in the representation the op computes on (IEEE for
 * doubles: false when either is NaN). */
static bool less(const operand_row *x, int a, int b)
{
    return x->is_float ? x->f[a] < x->f[b] : x->i[a] < x->i[b];
}

/* x[a] == x[b], likewise (NaN equals nothing). */
static bool equal(const operand_row *x, int a, int b)
{
    return x->is_float ? x->f[a] == x->f[b] : x->i[a] == x->i[b];
}

/*
 * Ops that only compare and choose: comparisons, Not, Relu, Where, Min,
 * Max, Cast.  Their result is one of the operands or the constant 0 or 1,
 * so one definition serves int64 and double rows and int64 stays exact.
 * Returns the result's index in the row; -1 for the other kinds.
 */
static int eval_choice(wl_op_kind kind, const operand_row *x)
{
    switch (kind) {
    case WL_OP_EQUAL:
        return equal(x, 0, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_LESS:
        return less(x, 0, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_GREATER:
        return less(x, 1, 0) ? ROW_ONE : ROW_ZERO;
    case WL_OP_NOT:
        return equal(x, 0, ROW_ZERO) ? ROW_ONE : ROW_ZERO;
    case WL_OP_RELU:
        return less(x, ROW_ZERO, 0) ? 0 : ROW_ZERO;
    case WL_OP_WHERE:
        return equal(x, 0, ROW_ZERO) ? 2 : 1;
    case WL_OP_CAST:
        return 0;
    case WL_OP_MIN:
    case WL_OP_MAX: {
        int pick = 0;
        for (int a = 1; a < x->n; a++)
            if (kind == WL_OP_MIN ? less(x, a, pick) : less(x, pick, a))
                pick = a;
        return pick;
    }
    default:
        return -1;
    }
}

/* Integer power by squaring; false on a negative exponent or overflow. */
static bool pow_i64(int64_t base, int64_t exponent, int64_t *r)
{
    if (exponent < 0)
        return false;
    int64_t result = 1;
    while (exponent > 0) {
        if ((exponent & 1) && __builtin_mul_overflow(result, base, &result))
            return false;
        exponent >>= 1;
        if (exponent > 0 && __builtin_mul_overflow(base, base, &base))
            return false;
    }
    *r = result;
    return true;
}

/*
 * Arithmetic on int64 operands x[]: exact, so false when the result is
 * not representable (overflow, division by zero) or the kind is not
 * computed on integers; the op then stays unfolded.  Div truncates
 * toward zero, as ONNX Runtime does.
 */
static bool arith_int(wl_op_kind kind, const int64_t *x, int64_t *r)
{
    switch (kind) {
    case WL_OP_ADD:
        return !__builtin_add_overflow(x[0], x[1], r);
    case WL_OP_SUB:
        return !__builtin_sub_overflow(x[0], x[1], r);
    case WL_OP_MUL:
        return !__builtin_mul_overflow(x[0], x[1], r);
    case WL_OP_DIV:
        if (x[1] == 0 || (x[0] == INT64_MIN && x[1] == -1))
            return false;
        *r = x[0] / x[1];
        return true;
    case WL_OP_POW:
        return pow_i64(x[0], x[1], r);
    case WL_OP_NEG:
        return !__builtin_sub_overflow((int64_t)0, x[0], r);
    case WL_OP_ABS:
        if (x[0] == INT64_MIN)
            return false;
        *r = x[0] < 0 ? -x[0] : x[0];
        return true;
    default:
        return false;
    }
}

/* Arithmetic on double operands x[], IEEE semantics (inf, NaN); false
 * only for kinds not computed here. */
static bool arith_float(wl_op_kind kind, const double *x, double *r)
{
    switch (kind) {
    case WL_OP_ADD:
        *r = x[0] + x[1];
        break;
    case WL_OP_SUB:
        *r = x[0] - x[1];
        break;
    case WL_OP_MUL:
        *r = x[0] * x[1];
        break;
    case WL_OP_DIV:
        *r = x[0] / x[1];
        break;
    case WL_OP_POW:
        *r = pow(x[0], x[1]);
        break;
    case WL_OP_NEG:
        *r = -x[0];
        break;
    case WL_OP_ABS:
        *r = fabs(x[0]);
        break;
    case WL_OP_SQRT:
        *r = sqrt(x[0]);
        break;
    case WL_OP_RECIPROCAL:
        *r = 1.0 / x[0];
        break;
    case WL_OP_EXP:
        *r = exp(x[0]);
        break;
    case WL_OP_LOG:
        *r = log(x[0]);
        break;
    case WL_OP_ERF:
        *r = erf(x[0]);
        break;
    case WL_OP_TANH:
        *r = tanh(x[0]);
        break;
    case WL_OP_SIGMOID:
        *r = 1.0 / (1.0 + exp(-x[0]));
        break;
    default:
        return false;
    }
    return true;
}

/* One element of the op on row x: the index in the row of its result
 * (an operand, a constant or the computed ROW_RESULT), or -1 when it
 * cannot be computed. */
static int eval_element(wl_op_kind kind, operand_row *x)
{
    int at = eval_choice(kind, x);
    if (at >= 0)
        return at;
    bool ok = x->is_float ? arith_float(kind, x->f, &x->f[ROW_RESULT])
                          : arith_int(kind, x->i, &x->i[ROW_RESULT]);
    return ok ? ROW_RESULT : -1;
}

/*
 * Elementwise ops with broadcasting.  Arithmetic is done on doubles when
 * any operand or the result is floating, exactly on int64 otherwise, and
 * the result converted to the output's type (bool: non-zero).  Any
 * element that cannot be computed leaves the whole output unknown.
 */
static as_code fold_elementwise(wl_infer_ctx *c, source_fn unused)
{
    (void)unused;
    operand_row x = {.n = c->op->n_inputs, .i[ROW_ONE] = 1, .f[ROW_ONE] = 1.0};
    if (x.n > MAX_FOLD_OPERANDS)
        return AS_OK;
    wl_tensor *y = wl_infer_output(c, 0);
    x.is_float = wl_dtype_is_float(y->dtype);
    for (int s = 0; s < x.n; s++)
        x.is_float |= wl_infer_input(c, s) && wl_dtype_is_float(wl_infer_input(c, s)->dtype);
    if (!alloc_values(c, y))
        return out_of_memory(c);
    int64_t n = wl_tensor_elements(y), idx[WL_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        for (int s = 0; s < x.n; s++) {
            const wl_tensor *t = wl_infer_input(c, s);
            if (!t)
                continue; /* an omitted optional input reads as 0 */
            int64_t from = broadcast_index(t, y->rank, idx);
            x.i[s] = value_i(t, from);
            x.f[s] = value_f(t, from);
        }
        int at = eval_element(c->op->kind, &x);
        if (at < 0) {
            y->ivalues = NULL;
            y->fvalues = NULL;
            return AS_OK;
        }
        if (x.is_float)
            store_f(y, k, x.f[at]);
        else
            store_i(y, k, x.i[at]);
        next_index(y->rank, y->dims, idx);
    }
    return AS_OK;
}

/* -------------------------------------------------- shape and constants */

/* Shape: the input's dims; needs no input values. */
static as_code fold_shape(wl_infer_ctx *c, source_fn unused)
{
    (void)unused;
    const wl_tensor *x = wl_infer_input(c, 0);
    wl_tensor *y = wl_infer_output(c, 0);
    if (!alloc_values(c, y))
        return out_of_memory(c);
    for (int i = 0; i < x->rank; i++)
        store_i(y, i, x->dims[i]);
    return AS_OK;
}

/* ConstantOfShape: every element is the shape rule's fill value. */
static as_code fold_constant_of_shape(wl_infer_ctx *c, source_fn unused)
{
    (void)unused;
    wl_tensor *y = wl_infer_output(c, 0);
    if (!alloc_values(c, y))
        return out_of_memory(c);
    int64_t n = wl_tensor_elements(y);
    for (int64_t k = 0; k < n; k++)
        store_f(y, k, c->fill);
    return AS_OK;
}

/* Range: start + k * delta, exactly in int64 for integer outputs. */
static as_code fold_range(wl_infer_ctx *c, source_fn unused)
{
    (void)unused;
    const wl_tensor *start = wl_infer_input(c, 0), *delta = wl_infer_input(c, 2);
    wl_tensor *y = wl_infer_output(c, 0);
    if (!alloc_values(c, y))
        return out_of_memory(c);
    int64_t n = wl_tensor_elements(y);
    for (int64_t k = 0; k < n; k++) {
        if (y->fvalues) {
            store_f(y, k, value_f(start, 0) + (double)k * value_f(delta, 0));
            continue;
        }
        int64_t step, v;
        if (__builtin_mul_overflow(k, value_i(delta, 0), &step) ||
            __builtin_add_overflow(value_i(start, 0), step, &v)) {
            y->ivalues = NULL;
            return AS_OK;
        }
        store_i(y, k, v);
    }
    return AS_OK;
}

/* ----------------------------------------------------------- dispatch */

/* A folder computes every output of the op; data movement folders get
 * the op's source map. */
typedef as_code (*fold_fn)(wl_infer_ctx *c, source_fn source);

/* Folder and source map per op kind; unary and binary kinds not listed
 * fold elementwise, the rest (compute, pooling, normalisation, ...) not
 * at all. */
static const struct {
    fold_fn fold;
    source_fn source;
} folders[WL_OP_COUNT] = {
    [WL_OP_SHAPE] = {fold_shape, NULL},
    [WL_OP_CONSTANT_OF_SHAPE] = {fold_constant_of_shape, NULL},
    [WL_OP_RANGE] = {fold_range, NULL},
    [WL_OP_RESHAPE] = {fold_moved, source_view},
    [WL_OP_FLATTEN] = {fold_moved, source_view},
    [WL_OP_SQUEEZE] = {fold_moved, source_view},
    [WL_OP_UNSQUEEZE] = {fold_moved, source_view},
    [WL_OP_IDENTITY] = {fold_moved, source_view},
    [WL_OP_DROPOUT] = {fold_moved, source_view},
    [WL_OP_EXPAND] = {fold_moved, source_expand},
    [WL_OP_TILE] = {fold_moved, source_tile},
    [WL_OP_TRANSPOSE] = {fold_moved, source_transpose},
    [WL_OP_SLICE] = {fold_moved, source_slice},
    [WL_OP_PAD] = {fold_moved, source_pad},
    [WL_OP_CONCAT] = {fold_moved, source_concat},
    [WL_OP_SPLIT] = {fold_moved, source_split},
    [WL_OP_GATHER] = {fold_moved, source_gather},
};

/* The folder of an op kind, or NULL when the kind is not folded. */
static fold_fn folder_of(wl_op_kind kind)
{
    if ((unsigned)kind >= WL_OP_COUNT)
        return NULL;
    if (folders[kind].fold)
        return folders[kind].fold;
    wl_op_category cat = wl_op_kind_category(kind);
    return cat == WL_CAT_UNARY || cat == WL_CAT_BINARY ? fold_elementwise : NULL;
}

/* Pad folds only in constant mode: reflect and edge copy from inside. */
static bool mode_folds(const wl_op *op)
{
    return op->kind != WL_OP_PAD || op->attrs.mode[0] == '\0' ||
           strcmp(op->attrs.mode, "constant") == 0;
}

as_code wl_fold_op(wl_infer_ctx *c)
{
    wl_op *op = c->op;
    fold_fn fold = folder_of(op->kind);
    if (!fold || !mode_folds(op))
        return AS_OK;
    /* Shape reads only its input's dims; everything else its values. */
    for (int s = 0; op->kind != WL_OP_SHAPE && s < op->n_inputs; s++) {
        const wl_tensor *t = wl_infer_input(c, s);
        if (t && !has_values(t))
            return AS_OK;
    }
    for (int o = 0; o < op->n_outputs; o++) {
        int64_t n = wl_tensor_elements(wl_infer_output(c, o));
        if (n < 0 || n > WL_MAX_FOLD_ELEMS)
            return AS_OK;
    }
    as_code rc = fold(c, folders[op->kind].source);
    if (rc != AS_OK)
        return rc;
    op->folded = true;
    for (int o = 0; o < op->n_outputs; o++)
        op->folded &= has_values(wl_infer_output(c, o));
    return AS_OK;
}
