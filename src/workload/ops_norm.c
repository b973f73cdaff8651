/*
 * ops_norm.c -- the op family of normalisation and reductions
 * (BatchNormalization, LayerNormalization, Instance- and
 * GroupNormalization, Softmax, LogSoftmax), the reductions (Reduce*,
 * ArgMax, ArgMin) and the scan CumSum.  One table entry per op at the end
 * (see ops_private.h).
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

/* ArgMax, ArgMin: the input's shape with 'axis' reduced to 1 (keepdims)
 * or gone; int64 indices. */
static as_code infer_arg_reduce(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int axis = 0;
    as_code rc = wl_infer_axis(c, "attribute 'axis'", c->op->attrs.axis, x->rank, false, &axis);
    if (rc != AS_OK)
        return rc;
    int rank = 0;
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        if (i != axis || c->op->attrs.keepdims)
            dims[rank++] = i == axis ? 1 : x->dims[i];
    return wl_infer_set_output(c, 0, WL_DTYPE_I64, rank, dims);
}

/* Per-channel parameter `slot` of a normalisation: a vector of `n`
 * elements. */
static as_code check_channel_vector(wl_infer_ctx *c, int slot, int64_t n, const char *what)
{
    const wl_tensor *p = IN(c, slot);
    if (p->rank != 1 || p->dims[0] != n)
        return wl_infer_fail(c, "input '%s' has shape %s; expected [%lld] (%s)", p->name,
                             wl_shape_str(p, (char[WL_SHAPE_STR_BYTES]){0}, WL_SHAPE_STR_BYTES),
                             (long long)n, what);
    return AS_OK;
}

/* InstanceNormalization: X [N, C, ...], scale and B [C]; output like X. */
static as_code infer_instance_norm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 3)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, D1, ...]", x->name,
                             x->rank);
    as_code rc = AS_OK;
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = check_channel_vector(c, s, x->dims[1], "one per channel");
    return rc == AS_OK ? wl_infer_set_output_like(c, 0, x, x->dtype) : rc;
}

/* GroupNormalization: X [N, C, ...] with C a multiple of num_groups;
 * scale and bias [num_groups] (opset 18) or [C] (opset 21). */
static as_code infer_group_norm(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    int64_t groups = c->op->attrs.num_groups;
    if (x->rank < 3)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, D1, ...]", x->name,
                             x->rank);
    if (groups < 1 || x->dims[1] % groups != 0)
        return wl_infer_fail(c, "attribute 'num_groups' = %lld does not divide the %lld channels",
                             (long long)groups, (long long)x->dims[1]);
    as_code rc = AS_OK;
    for (int s = 1; rc == AS_OK && s <= 2; s++)
        rc = check_channel_vector(
            c, s, IN(c, s)->rank == 1 && IN(c, s)->dims[0] == x->dims[1] ? x->dims[1] : groups,
            "one per group or per channel");
    return rc == AS_OK ? wl_infer_set_output_like(c, 0, x, x->dtype) : rc;
}

/* CumSum: the input's shape; the axis (input 1) is a scalar, which need
 * not be known for the shape. */
static as_code infer_cumsum(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0), *axis = IN(c, 1);
    if (wl_tensor_elements(axis) != 1)
        return wl_infer_fail(c, "input 'axis' ('%s') must hold one value", axis->name);
    if (axis->ivalues) {
        int unused = 0;
        as_code rc = wl_infer_axis(c, "input 'axis'", axis->ivalues[0], x->rank, false, &unused);
        if (rc != AS_OK)
            return rc;
    }
    return wl_infer_set_output_like(c, 0, x, x->dtype);
}

/* LRN: ONNX's alpha and beta. */
static void lrn_defaults(wl_attrs *a)
{
    a->alpha = 0.0001f;
    a->beta = 0.75f;
}

/* LRN: X [N, C, ...] with a window of 'size' channels; output like X. */
static as_code infer_lrn(wl_infer_ctx *c)
{
    const wl_tensor *x = IN(c, 0);
    if (x->rank < 3)
        return wl_infer_fail(c, "input '%s' has rank %d; expected [N, C, D1, ...]", x->name,
                             x->rank);
    if (c->op->attrs.lrn_size < 1)
        return wl_infer_fail(c, "attribute 'size' = %lld is invalid",
                             (long long)c->op->attrs.lrn_size);
    return wl_infer_set_output_like(c, 0, x, x->dtype);
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
    [WL_OP_REDUCE_MAX] = {REDUCE},
    [WL_OP_REDUCE_MIN] = {REDUCE},
    [WL_OP_REDUCE_PROD] = {REDUCE},
    [WL_OP_REDUCE_L1] = {REDUCE},
    [WL_OP_REDUCE_L2] = {REDUCE},
    [WL_OP_REDUCE_SUM_SQUARE] = {REDUCE},
    [WL_OP_REDUCE_LOG_SUM] = {REDUCE},
    [WL_OP_REDUCE_LOG_SUM_EXP] = {REDUCE},
    /* The ops below are costed as reductions, one vector operation per
     * input element (their category's class; a conservative count for the
     * normalisations, which make about five passes), and their tiles need
     * the whole input (WL_HALO_WHOLE, the conservative rule). */
    [WL_OP_ARG_MAX] = {.required_inputs = 1, .infer = infer_arg_reduce, .vector = WL_VEC_PER_INPUT},
    [WL_OP_ARG_MIN] = {.required_inputs = 1, .infer = infer_arg_reduce, .vector = WL_VEC_PER_INPUT},
    [WL_OP_LOG_SOFTMAX] = {.defaults = wl_defaults_axis_last,
                           .axis_changed_at = 13,
                           .axis_before = 1,
                           .required_inputs = 1,
                           .infer = wl_infer_same,
                           .vector = WL_VEC_PER_INPUT},
    [WL_OP_INSTANCE_NORM] = {.required_inputs = 3,
                             .infer = infer_instance_norm,
                             .vector = WL_VEC_PER_INPUT},
    [WL_OP_GROUP_NORM] = {.min_opset = 18,
                          .required_inputs = 3,
                          .infer = infer_group_norm,
                          .vector = WL_VEC_PER_INPUT},
    [WL_OP_LRN] = {.defaults = lrn_defaults,
                   .required_inputs = 1,
                   .infer = infer_lrn,
                   .vector = WL_VEC_PER_INPUT},
    /* Over the axes of attribute 'axes' ([0, 2, 3] by default) and 'axis'. */
    [WL_OP_MEAN_VARIANCE_NORM] = {.required_inputs = 1,
                                  .infer = wl_infer_same,
                                  .vector = WL_VEC_PER_INPUT},
    [WL_OP_LP_NORM] = {.defaults = wl_defaults_axis_last,
                       .required_inputs = 1,
                       .infer = wl_infer_same,
                       .vector = WL_VEC_PER_INPUT},
    [WL_OP_CUM_SUM] = {.min_opset = 11,
                       .required_inputs = 2,
                       .infer = infer_cumsum,
                       .vector = WL_VEC_PER_INPUT},
};
