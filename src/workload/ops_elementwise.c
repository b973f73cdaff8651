/*
 * ops_elementwise.c -- the op family of elementwise ops: activations and
 * math with one data input, and the broadcasting binary ops (arithmetic,
 * comparisons, Min/Max, PRelu, Where).  Each output element is one scalar
 * function of its operands, which is also how they fold.  One table entry
 * per op at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* Element type of the output of an elementwise or view op: comparisons
 * and Not give bool, Cast its 'to', Where its value inputs' type, the
 * rest their first input's. */
static wl_dtype elementwise_dtype(const wl_infer_ctx *c)
{
    switch (c->op->kind) {
    case WL_OP_EQUAL:
    case WL_OP_LESS:
    case WL_OP_GREATER:
    case WL_OP_GREATER_OR_EQUAL:
    case WL_OP_LESS_OR_EQUAL:
    case WL_OP_NOT:
    case WL_OP_IS_NAN:
    case WL_OP_IS_INF:
    case WL_OP_AND:
    case WL_OP_OR:
    case WL_OP_XOR:
        return WL_DTYPE_BOOL;
    case WL_OP_CAST:
        return c->op->attrs.to;
    case WL_OP_WHERE:
        return IN(c, 1)->dtype;
    default:
        return IN(c, 0)->dtype;
    }
}

/*
 * Unary and binary elementwise ops (Relu ... Where): the output has the
 * broadcast shape of all data inputs.  Clip's bounds are scalars and take
 * no part; PRelu's slope broadcasts one way, onto the input's shape.
 */
static as_code infer_elementwise(wl_infer_ctx *c)
{
    wl_op_kind kind = c->op->kind;
    if (kind == WL_OP_CAST && !wl_dtype_valid((int)c->op->attrs.to))
        return wl_infer_fail(c, "attribute 'to' = %d is not a known element type",
                             (int)c->op->attrs.to);
    int rank = 0;
    int64_t dims[WL_MAX_RANK];
    for (int s = 0; s < c->op->n_inputs; s++) {
        const wl_tensor *t = IN(c, s);
        if (!t)
            continue;
        as_code rc;
        if (kind == WL_OP_CLIP && s > 0) {
            if (wl_tensor_elements(t) != 1)
                return wl_infer_fail(c, "bound '%s' must be a scalar", t->name);
            continue;
        }
        if (kind == WL_OP_PRELU && s > 0)
            rc = wl_infer_broadcasts_to(c, t, rank, dims);
        else
            rc = wl_infer_broadcast(c, t, rank, dims, t->rank, t->dims, &rank, dims);
        if (rc != AS_OK)
            return rc;
    }
    return wl_infer_set_output(c, 0, elementwise_dtype(c), rank, dims);
}

/* ------------------------------------------------------------- folding */

/* Most operands an elementwise fold reads (variadic Min/Max beyond this
 * are left unfolded). */
enum { MAX_FOLD_OPERANDS = 8 };

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

/* x[a] is true (non-zero). */
static bool truth(const operand_row *x, int a)
{
    return !equal(x, a, ROW_ZERO);
}

/*
 * Ops that only compare and choose: comparisons, logic, Relu, Where, Min,
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
    case WL_OP_GREATER_OR_EQUAL:
        return less(x, 1, 0) || equal(x, 0, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_LESS_OR_EQUAL:
        return less(x, 0, 1) || equal(x, 0, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_AND:
        return truth(x, 0) && truth(x, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_OR:
        return truth(x, 0) || truth(x, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_XOR:
        return truth(x, 0) != truth(x, 1) ? ROW_ONE : ROW_ZERO;
    case WL_OP_NOT:
        return equal(x, 0, ROW_ZERO) ? ROW_ONE : ROW_ZERO;
    case WL_OP_IS_NAN: /* NaN equals nothing, itself included */
        return equal(x, 0, 0) ? ROW_ZERO : ROW_ONE;
    case WL_OP_IS_INF: /* both infinities (detect_negative and _positive default to 1) */
        return x->is_float && isinf(x->f[0]) ? ROW_ONE : ROW_ZERO;
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
    case WL_OP_SIGN:
        *r = (x[0] > 0) - (x[0] < 0);
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
    case WL_OP_SIN:
        *r = sin(x[0]);
        break;
    case WL_OP_COS:
        *r = cos(x[0]);
        break;
    case WL_OP_FLOOR:
        *r = floor(x[0]);
        break;
    case WL_OP_CEIL:
        *r = ceil(x[0]);
        break;
    case WL_OP_ROUND: /* halves to even, as ONNX says */
        *r = nearbyint(x[0]);
        break;
    case WL_OP_SIGN:
        *r = x[0] > 0 ? 1.0 : x[0] < 0 ? -1.0 : x[0];
        break;
    case WL_OP_SOFTPLUS:
        *r = log1p(exp(x[0]));
        break;
    case WL_OP_SOFTSIGN:
        *r = x[0] / (1.0 + fabs(x[0]));
        break;
    case WL_OP_TAN:
        *r = tan(x[0]);
        break;
    case WL_OP_ASIN:
        *r = asin(x[0]);
        break;
    case WL_OP_ACOS:
        *r = acos(x[0]);
        break;
    case WL_OP_ATAN:
        *r = atan(x[0]);
        break;
    case WL_OP_SINH:
        *r = sinh(x[0]);
        break;
    case WL_OP_COSH:
        *r = cosh(x[0]);
        break;
    case WL_OP_ASINH:
        *r = asinh(x[0]);
        break;
    case WL_OP_ACOSH:
        *r = acosh(x[0]);
        break;
    case WL_OP_ATANH:
        *r = atanh(x[0]);
        break;
    default:
        return false;
    }
    return true;
}

/*
 * Mod: the remainder has the sign of the divisor (Python's %), or of the
 * dividend with fmod = 1 (C's fmod; ONNX requires it for floats).  False
 * for an integer division by zero.
 */
static bool eval_mod(operand_row *x, bool c_fmod)
{
    if (x->is_float) {
        double r = fmod(x->f[0], x->f[1]);
        if (!c_fmod && r != 0 && (r < 0) != (x->f[1] < 0))
            r += x->f[1];
        x->f[ROW_RESULT] = r;
        return true;
    }
    if (x->i[1] == 0 || (x->i[0] == INT64_MIN && x->i[1] == -1))
        return false;
    int64_t r = x->i[0] % x->i[1];
    if (!c_fmod && r != 0 && (r < 0) != (x->i[1] < 0))
        r += x->i[1];
    x->i[ROW_RESULT] = r;
    return true;
}

/* Variadic Sum and Mean of the row's operands; Mean is computed on
 * doubles (ONNX defines it for floating types only).  False on int64
 * overflow. */
static bool eval_sum(wl_op_kind kind, operand_row *x)
{
    if (x->is_float || kind == WL_OP_MEAN) {
        double sum = 0;
        for (int a = 0; a < x->n; a++)
            sum += x->f[a];
        x->f[ROW_RESULT] = kind == WL_OP_MEAN ? sum / x->n : sum;
        return true;
    }
    int64_t sum = 0;
    for (int a = 0; a < x->n; a++)
        if (__builtin_add_overflow(sum, x->i[a], &sum))
            return false;
    x->i[ROW_RESULT] = sum;
    return true;
}

/* One element of op on row x: the index in the row of its result (an
 * operand, a constant or the computed ROW_RESULT), or -1 when it cannot
 * be computed. */
static int eval_element(const wl_op *op, operand_row *x)
{
    int at = eval_choice(op->kind, x);
    if (at >= 0)
        return at;
    bool ok;
    if (op->kind == WL_OP_MOD)
        ok = eval_mod(x, op->attrs.fmod != 0);
    else if (op->kind == WL_OP_SUM || op->kind == WL_OP_MEAN)
        ok = eval_sum(op->kind, x);
    else
        ok = x->is_float ? arith_float(op->kind, x->f, &x->f[ROW_RESULT])
                         : arith_int(op->kind, x->i, &x->i[ROW_RESULT]);
    return ok ? ROW_RESULT : -1;
}

/*
 * Elementwise ops with broadcasting.  Arithmetic is done on doubles when
 * any operand or the result is floating, exactly on int64 otherwise, and
 * the result converted to the output's type (bool: non-zero).  Any
 * element that cannot be computed leaves the whole output unknown.
 */
static as_code fold_elementwise(wl_infer_ctx *c, wl_fold_source unused)
{
    (void)unused;
    operand_row x = {.n = c->op->n_inputs, .i[ROW_ONE] = 1, .f[ROW_ONE] = 1.0};
    if (x.n > MAX_FOLD_OPERANDS)
        return AS_OK;
    wl_tensor *y = wl_infer_output(c, 0);
    x.is_float = wl_dtype_is_float(y->dtype);
    for (int s = 0; s < x.n; s++)
        x.is_float |= wl_infer_input(c, s) && wl_dtype_is_float(wl_infer_input(c, s)->dtype);
    if (!wl_fold_alloc(c, y))
        return wl_fold_out_of_memory(c);
    int64_t n = wl_tensor_elements(y), idx[WL_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        for (int s = 0; s < x.n; s++) {
            const wl_tensor *t = wl_infer_input(c, s);
            if (!t)
                continue; /* an omitted optional input reads as 0 */
            int64_t from = wl_fold_broadcast_index(t, y->rank, idx);
            x.i[s] = wl_fold_value_i(t, from);
            x.f[s] = wl_fold_value_f(t, from);
        }
        int at = eval_element(c->op, &x);
        if (at < 0) {
            y->ivalues = NULL;
            y->fvalues = NULL;
            return AS_OK;
        }
        if (x.is_float)
            wl_fold_store_f(y, k, x.f[at]);
        else
            wl_fold_store_i(y, k, x.i[at]);
        wl_fold_next_index(y->rank, y->dims, idx);
    }
    return AS_OK;
}

/* ------------------------------------------------------------ defaults */

static void leaky_relu_defaults(wl_attrs *a)
{
    a->alpha = 0.01;
}

static void hard_sigmoid_defaults(wl_attrs *a)
{
    a->alpha = 0.2;
    a->beta = 0.5;
}

/* Selu's constants, as ONNX gives them in float. */
static void selu_defaults(wl_attrs *a)
{
    a->alpha = 1.67326319217681884765625f;
    a->gamma = 1.05070102214813232421875f;
}

static void cast_defaults(wl_attrs *a)
{
    a->to = WL_DTYPE_F32;
}

/* --------------------------------------------------------------- table */

/* Every elementwise op: its shape rule and folder, fusable into its
 * producer, one vector operation per output element, and a tile that
 * passes straight through.  n is the
 * number of inputs that must be present (Min and Max are variadic). */
#define ELEMENTWISE(n)                                                                             \
    .required_inputs = (n), .infer = infer_elementwise, .fold = fold_elementwise, .fusable = true, \
    .vector = WL_VEC_PER_OUTPUT, .vector_ops_per_element = 1, .halo = WL_HALO_POINTWISE

const wl_op_def wl_ops_elementwise[WL_OP_COUNT] = {
    /* Activations. */
    [WL_OP_RELU] = {ELEMENTWISE(1)},
    [WL_OP_LEAKY_RELU] = {.defaults = leaky_relu_defaults, ELEMENTWISE(1)},
    [WL_OP_CLIP] = {ELEMENTWISE(1)},
    [WL_OP_SIGMOID] = {ELEMENTWISE(1)},
    [WL_OP_HARD_SIGMOID] = {.defaults = hard_sigmoid_defaults, ELEMENTWISE(1)},
    [WL_OP_HARD_SWISH] = {ELEMENTWISE(1)},
    [WL_OP_TANH] = {ELEMENTWISE(1)},
    [WL_OP_ERF] = {ELEMENTWISE(1)},
    [WL_OP_SOFTPLUS] = {ELEMENTWISE(1)},
    [WL_OP_THRESHOLDED_RELU] = {ELEMENTWISE(1)},
    [WL_OP_CELU] = {ELEMENTWISE(1)},
    [WL_OP_MISH] = {.min_opset = 18, ELEMENTWISE(1)},
    /* Elu and Selu are not folded (activations never carry shapes). */
    [WL_OP_ELU] = {ELEMENTWISE(1)},
    [WL_OP_SELU] = {.defaults = selu_defaults, ELEMENTWISE(1)},
    /* Math. */
    [WL_OP_SQRT] = {ELEMENTWISE(1)},
    [WL_OP_RECIPROCAL] = {ELEMENTWISE(1)},
    [WL_OP_EXP] = {ELEMENTWISE(1)},
    [WL_OP_LOG] = {ELEMENTWISE(1)},
    [WL_OP_NEG] = {ELEMENTWISE(1)},
    [WL_OP_ABS] = {ELEMENTWISE(1)},
    [WL_OP_SIN] = {ELEMENTWISE(1)},
    [WL_OP_COS] = {ELEMENTWISE(1)},
    [WL_OP_FLOOR] = {ELEMENTWISE(1)},
    [WL_OP_CEIL] = {ELEMENTWISE(1)},
    [WL_OP_ROUND] = {ELEMENTWISE(1)},
    [WL_OP_SIGN] = {ELEMENTWISE(1)},
    [WL_OP_SOFTSIGN] = {ELEMENTWISE(1)},
    /* IsInf's detect_negative / detect_positive are not read: both
     * infinities count. */
    [WL_OP_IS_NAN] = {ELEMENTWISE(1)},
    [WL_OP_IS_INF] = {ELEMENTWISE(1)},
    [WL_OP_TAN] = {ELEMENTWISE(1)},
    [WL_OP_ASIN] = {ELEMENTWISE(1)},
    [WL_OP_ACOS] = {ELEMENTWISE(1)},
    [WL_OP_ATAN] = {ELEMENTWISE(1)},
    [WL_OP_SINH] = {ELEMENTWISE(1)},
    [WL_OP_COSH] = {ELEMENTWISE(1)},
    [WL_OP_ASINH] = {ELEMENTWISE(1)},
    [WL_OP_ACOSH] = {ELEMENTWISE(1)},
    [WL_OP_ATANH] = {ELEMENTWISE(1)},
    /* Arithmetic with broadcasting. */
    [WL_OP_ADD] = {ELEMENTWISE(2)},
    [WL_OP_SUB] = {ELEMENTWISE(2)},
    [WL_OP_MUL] = {ELEMENTWISE(2)},
    [WL_OP_DIV] = {ELEMENTWISE(2)},
    [WL_OP_POW] = {ELEMENTWISE(2)},
    [WL_OP_MOD] = {.min_opset = 10, ELEMENTWISE(2)},
    /* Variadic (one input or more). */
    [WL_OP_SUM] = {ELEMENTWISE(1)},
    [WL_OP_MEAN] = {ELEMENTWISE(1)},
    /* Comparisons and logic. */
    [WL_OP_EQUAL] = {ELEMENTWISE(2)},
    [WL_OP_LESS] = {ELEMENTWISE(2)},
    [WL_OP_GREATER] = {ELEMENTWISE(2)},
    [WL_OP_GREATER_OR_EQUAL] = {.min_opset = 12, ELEMENTWISE(2)},
    [WL_OP_LESS_OR_EQUAL] = {.min_opset = 12, ELEMENTWISE(2)},
    [WL_OP_NOT] = {ELEMENTWISE(1)},
    [WL_OP_AND] = {ELEMENTWISE(2)},
    [WL_OP_OR] = {ELEMENTWISE(2)},
    [WL_OP_XOR] = {ELEMENTWISE(2)},
    /* Selection: Min and Max are variadic (one input or more). */
    [WL_OP_MIN] = {ELEMENTWISE(1)},
    [WL_OP_MAX] = {ELEMENTWISE(1)},
    [WL_OP_PRELU] = {ELEMENTWISE(2)},
    [WL_OP_WHERE] = {ELEMENTWISE(3)},
    /* Conversion. */
    [WL_OP_CAST] = {.defaults = cast_defaults, ELEMENTWISE(1)},
};
