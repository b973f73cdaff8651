/*
 * infer_private.h -- what shape inference (infer.c) and constant folding
 * (fold.c) share; private to the workload module.
 *
 * Inference of one op runs in two steps over one context: the op's shape
 * rule checks its operands and sets the outputs' shapes and element types,
 * leaving in the context the few parameters it resolved (a normalised
 * axis, Slice's start and step per axis, ...); then the folder computes
 * the outputs' values when every input's values are known, reusing those
 * parameters instead of resolving the attributes a second time.
 */
#ifndef WL_INFER_PRIVATE_H
#define WL_INFER_PRIVATE_H

#include "workload.h"

typedef struct wl_infer_ctx {
    wl_graph *g;
    wl_op *op;
    as_status *st;
    /* Left by the shape rule for the folder. */
    int axis;                   /* Concat, Split, Gather: the axis, normalised to >= 0 */
    int perm[WL_MAX_RANK];      /* Transpose: output axis i is input axis perm[i] */
    int64_t first[WL_MAX_RANK]; /* Slice: first input index per axis; Pad: padding before */
    int64_t step[WL_MAX_RANK];  /* Slice: input index step per output index step */
    double fill;                /* Pad: the constant; Dropout: the mask's value (true) */
} wl_infer_ctx;

/* "<source>: node <i> '<name>' (<type>)" in buf: whom a message is about.
 * Returns buf. */
const char *wl_infer_node_str(const wl_infer_ctx *c, char *buf, size_t size);

/* Fail with AS_EINVAL and a message "<node>: <what>" (see
 * wl_infer_node_str), what given printf-style.  Returns AS_EINVAL. */
as_code wl_infer_fail(const wl_infer_ctx *c, const char *fmt, ...) AS_PRINTF(2, 3);

/* Input `slot` of the op, or NULL when the op has no such input or it was
 * omitted (index -1). */
const wl_tensor *wl_infer_input(const wl_infer_ctx *c, int slot);

/* Output `slot` of the op, which the caller knows it has. */
wl_tensor *wl_infer_output(const wl_infer_ctx *c, int slot);

/* Compute the values of the op's outputs, whose shapes are set, when the
 * op can be folded: every input it reads has known values and every
 * output has at most WL_MAX_FOLD_ELEMS elements.  Sets op->folded when all
 * outputs got values.  Not folding is no error; fails only when out of
 * memory. */
as_code wl_fold_op(wl_infer_ctx *c);

#endif
