/*
 * tape.c -- reverse-mode automatic differentiation of scalar programs
 * (diff.h states the contract).  A node holds its value and its local
 * partial derivatives, recorded when the operation runs; df_backward
 * sweeps the nodes once, newest first, accumulating adjoints.
 */
#include "diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

as_code df_tape_init(df_tape *t, int32_t capacity, as_status *st)
{
    memset(t, 0, sizeof *t);
    return df_tape_reserve(t, capacity, st);
}

void df_tape_free(df_tape *t)
{
    free(t->node);
    free(t->adjoint);
    memset(t, 0, sizeof *t);
}

void df_tape_reset(df_tape *t)
{
    t->n = 0;
    t->full = false;
}

as_code df_tape_reserve(df_tape *t, int32_t capacity, as_status *st)
{
    df_tape_reset(t);
    if (capacity <= t->capacity)
        return AS_OK;
    df_node *node = realloc(t->node, (size_t)capacity * sizeof *node);
    if (node)
        t->node = node;
    double *adjoint = realloc(t->adjoint, (size_t)capacity * sizeof *adjoint);
    if (adjoint)
        t->adjoint = adjoint;
    if (!node || !adjoint)
        return as_fail(st, AS_ENOMEM, "out of memory for a tape of %d nodes", capacity);
    t->capacity = capacity;
    return AS_OK;
}

/* Record a node; on a full tape the last node is overwritten and the
 * tape marked full (the caller's values are then garbage, never out of
 * bounds). */
static df_var record(df_tape *t, double value, df_var a, double da, df_var b, double db)
{
    if (t->n == t->capacity) {
        t->full = true;
        t->n--;
    }
    df_var v = t->n++;
    t->node[v] = (df_node){value, a, b, da, db};
    return v;
}

df_var df_const(df_tape *t, double value)
{
    return record(t, value, -1, 0, -1, 0);
}

#define VAL(v) (t->node[v].value)

df_var df_add(df_tape *t, df_var a, df_var b)
{
    return record(t, VAL(a) + VAL(b), a, 1, b, 1);
}

df_var df_sub(df_tape *t, df_var a, df_var b)
{
    return record(t, VAL(a) - VAL(b), a, 1, b, -1);
}

df_var df_mul(df_tape *t, df_var a, df_var b)
{
    return record(t, VAL(a) * VAL(b), a, VAL(b), b, VAL(a));
}

df_var df_div(df_tape *t, df_var a, df_var b)
{
    double q = VAL(a) / VAL(b);
    return record(t, q, a, 1 / VAL(b), b, -q / VAL(b));
}

df_var df_add_c(df_tape *t, df_var a, double c)
{
    return record(t, VAL(a) + c, a, 1, -1, 0);
}

df_var df_mul_c(df_tape *t, df_var a, double c)
{
    return record(t, VAL(a) * c, a, c, -1, 0);
}

df_var df_neg(df_tape *t, df_var a)
{
    return df_mul_c(t, a, -1);
}

df_var df_exp(df_tape *t, df_var a)
{
    double e = exp(VAL(a));
    return record(t, e, a, e, -1, 0);
}

df_var df_log(df_tape *t, df_var a)
{
    return record(t, log(VAL(a)), a, 1 / VAL(a), -1, 0);
}

df_var df_sq(df_tape *t, df_var a)
{
    return record(t, VAL(a) * VAL(a), a, 2 * VAL(a), -1, 0);
}

df_var df_abs(df_tape *t, df_var a)
{
    double x = VAL(a);
    return record(t, fabs(x), a, x > 0 ? 1 : x < 0 ? -1 : 0, -1, 0);
}

/*
 * The p-norm of two positive values, p = +-1/temperature: for p > 0 a
 * smooth maximum (a log-sum-exp of the logarithms at that temperature),
 * for p < 0 a smooth minimum.  Computed relative to the larger (smaller)
 * value so that large p neither overflows nor underflows:
 *   m = big * (1 + r^p)^(1/p),  r = small / big  (r^p <= 1),
 *   dm/da = (a / m)^(p - 1).
 */
static df_var soft_extreme(df_tape *t, df_var a, df_var b, double p)
{
    double x = VAL(a), y = VAL(b);
    bool a_leads = p > 0 ? x >= y : x <= y;
    double lead = a_leads ? x : y, other = a_leads ? y : x;
    double m = lead * pow(1 + pow(other / lead, p), 1 / p);
    return record(t, m, a, pow(x / m, p - 1), b, pow(y / m, p - 1));
}

df_var df_max(df_tape *t, df_var a, df_var b)
{
    if (t->temperature > 0 && VAL(a) > 0 && VAL(b) > 0)
        return soft_extreme(t, a, b, 1 / t->temperature);
    return VAL(a) >= VAL(b) ? record(t, VAL(a), a, 1, -1, 0) : record(t, VAL(b), b, 1, -1, 0);
}

df_var df_min(df_tape *t, df_var a, df_var b)
{
    if (t->temperature > 0 && VAL(a) > 0 && VAL(b) > 0)
        return soft_extreme(t, a, b, -1 / t->temperature);
    return VAL(a) <= VAL(b) ? record(t, VAL(a), a, 1, -1, 0) : record(t, VAL(b), b, 1, -1, 0);
}

/* softplus with knee width w: w log(1 + e^(x/w)), slope the logistic. */
df_var df_relu(df_tape *t, df_var a, double scale)
{
    double x = VAL(a);
    if (!(t->temperature > 0) || !(scale > 0))
        return record(t, x > 0 ? x : 0, a, x > 0 ? 1 : 0, -1, 0);
    double w = scale * t->temperature, z = x / w;
    double value = z > 30 ? x : w * log1p(exp(z));
    double slope = z > 30 ? 1 : 1 / (1 + exp(-z));
    return record(t, value, a, slope, -1, 0);
}

/*
 * Smooth ceil: the argument plus a bounded correction, max_T(x, 1) - x,
 * T the temperature (the p-norm of df_max): what matters of a ceiling in
 * this model is that a count of folds or vector accesses is at least one
 * (a partial array costs a whole one); above a few units ceil(x) / x is
 * 1 within 1 / x.  A correction tracking every integer step instead
 * (x + sin^2(pi x)) would swing the slope by +-pi at any magnitude and
 * drown the gradient.  Smooth floor and round are the identity (their
 * arguments here are large counts).
 */
df_var df_ceil(df_tape *t, df_var a)
{
    double x = VAL(a);
    if (!(t->temperature > 0))
        return record(t, ceil(x), a, 1, -1, 0);
    if (!(x > 0))
        return record(t, x, a, 1, -1, 0);
    double m = x >= 1 ? x * pow(1 + pow(1 / x, 1 / t->temperature), t->temperature)
                      : pow(1 + pow(x, 1 / t->temperature), t->temperature);
    return record(t, m, a, pow(x / m, 1 / t->temperature - 1), -1, 0);
}

df_var df_floor(df_tape *t, df_var a)
{
    double x = VAL(a);
    return record(t, t->temperature > 0 ? x : floor(x), a, 1, -1, 0);
}

df_var df_round(df_tape *t, df_var a)
{
    double x = VAL(a);
    return record(t, t->temperature > 0 ? x : round(x), a, 1, -1, 0);
}

void df_backward(df_tape *t, df_var output)
{
    memset(t->adjoint, 0, (size_t)(output + 1) * sizeof *t->adjoint);
    t->adjoint[output] = 1;
    for (df_var v = output; v >= 0; v--) {
        double adj = t->adjoint[v];
        if (adj == 0)
            continue;
        const df_node *nd = &t->node[v];
        if (nd->a >= 0)
            t->adjoint[nd->a] += adj * nd->da;
        if (nd->b >= 0)
            t->adjoint[nd->b] += adj * nd->db;
    }
}
