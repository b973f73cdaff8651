/*
 * ops_norm.c -- the op family of normalisation and reductions
 * (BatchNormalization, LayerNormalization, Softmax, ReduceMean,
 * ReduceSum).  One table entry per op at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* BatchNormalization (inference): X [N, C, ...]; scale, B, mean, var [C].
 * Training-mode outputs running_mean and running_var, if present, are [C]. */
static as_code infer_batchnorm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 2)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, ...]", x->name, x->rank);
    int64_t channels = x->dims[1];
    for (int s = 1; s <= 4; s++) {
        const wl_tensor *p = IN(c, s);
        if (p->rank != 1 || p->dims[0] != channels)
            return wl_infer_fail(c,
                                 "input '%s' has %lld elements but input '%s' has %lld "
                                 "channels",
                                 p->name, (long long)wl_tensor_elements(p), x->name,
                                 (long long)channels);
    }
    as_code rc = wl_infer_set_output_like(c, 0, x, x->dtype);
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = wl_infer_set_output(c, s, x->dtype, 1, &channels);
    return rc;
}

/* LayerNormalization: normalises over dims [axis, rank); scale and B
 * broadcast onto them.  Optional outputs Mean and InvStdDev keep the
 * leading dims and have 1 on the normalised ones, in float32 (the
 * default stash_type). */
static as_code infer_layernorm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int axis = 0;
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &axis);
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        if (IN(c, s))
            rc = wl_infer_broadcasts_to(c, IN(c, s), x->rank - axis, x->dims + axis);
    if (rc == AS_OK)
        rc = wl_infer_set_output_like(c, 0, x, x->dtype);
    int64_t stat_dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        stat_dims[i] = i < axis ? x->dims[i] : 1;
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = wl_infer_set_output(c, s, WL_DTYPE_F32, x->rank, stat_dims);
    return rc;
}

/* ReduceMean, ReduceSum: the reduced axes become 1 (keepdims) or go.
 * No axes means all of them, unless noop_with_empty_axes (ReduceSum 13+)
 * makes the op an identity. */
static as_code infer_reduce(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    bool is_axis[WL_MAX_RANK];
    int n_axes;
    as_code rc = wl_infer_axes(c, 1, x->rank, is_axis, &n_axes);
    if (rc != AS_OK)
        return rc;
    if (n_axes == 0 && c->op->attrs.noop_with_empty_axes)
        return wl_infer_set_output_like(c, 0, x, x->dtype);
    int rank = 0;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (n_axes > 0 && !is_axis[i])
            dims[rank++] = x->dims[i];
        else if (c->op->attrs.keepdims)
            dims[rank++] = 1;
    }
    return wl_infer_set_output(c, 0, x->dtype, rank, dims);
}

void wl_defaults_axis_last(wl_attrs *a)
{
    a->axis = -1; /* opset 13 default */
}

/* --------------------------------------------------------------- table */

/* BatchNormalization's inputs 3 and 4 (running mean and variance) are
 * statistics, not trained parameters. */
#define BN_RUNNING_STATS ((1u << 3) | (1u << 4))

/* Vector work: `ops` operations per output element. */
#define PER_OUTPUT(ops) .vector = WL_VEC_PER_OUTPUT, .vector_ops_per_element = (ops)
/* Normalisation over the axes from attribute 'axis' on (axis -1 default). */
#define OVER_LAST_AXES .defaults = wl_defaults_axis_last, .halo = WL_HALO_BEFORE_AXIS
#define REDUCE .required_inputs = 1, .infer = infer_reduce, .vector = WL_VEC_PER_INPUT

const wl_op_def wl_ops_norm[WL_OP_COUNT] = {
    /* Scale and shift per element, the statistics folded ahead of time;
     * runs in its producer's output pipeline. */
    [WL_OP_BATCHNORM] = {.required_inputs = 5,
                         .infer = infer_batchnorm,
                         PER_OUTPUT(2),
                         .non_param_inputs = BN_RUNNING_STATS,
                         .fusable = true,
                         .halo = WL_HALO_POINTWISE},
    /* Mean, centre, square and accumulate, normalise, affine. */
    [WL_OP_LAYERNORM] = {.min_opset = 17,
                         .required_inputs = 2,
                         .infer = infer_layernorm,
                         PER_OUTPUT(5),
                         OVER_LAST_AXES},
    /* Max, exp, sum, divide. */
    [WL_OP_SOFTMAX] = {.required_inputs = 1,
                       .infer = wl_infer_same,
                       PER_OUTPUT(4),
                       OVER_LAST_AXES,
                       .axis_changed_at = 13,
                       .axis_before = 1},
    [WL_OP_REDUCE_MEAN] = {REDUCE},
    [WL_OP_REDUCE_SUM] = {REDUCE},
};
