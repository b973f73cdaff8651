/*
 * infer_private.h -- what shape inference (infer.c), constant folding
 * (fold.c), problem construction (problem.c) and the op families
 * (ops_*.c, see ops_private.h) share; private to the workload module.
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
    int64_t k;                  /* Trilu: the diagonal */
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

/* Shorthand in the rules: input `slot` of the op being inferred. */
#define IN(c, slot) wl_infer_input((c), (slot))

/* Room for a shape in a message, "[1,3,224,224]" (longer ones are cut). */
enum { WL_SHAPE_STR_BYTES = 96 };

/* --------------------------------------------- helpers of the shape rules */

/* "[1,3,224,224]" for rank/dims that need not belong to a tensor (a
 * broadcast in progress, a target shape), so messages can show them. */
const char *wl_infer_dims_str(int rank, const int64_t *dims, char *buf, size_t size);

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
                            const int64_t *dims);

/* Output `slot` gets the shape of tensor `like` and element type dtype. */
as_code wl_infer_set_output_like(wl_infer_ctx *c, int slot, const wl_tensor *like, wl_dtype dtype);

/* Normalise an axis in [-rank, rank - 1] (or [-rank, rank] when
 * one_past is set: Flatten's axis may equal the rank).  `key` names the
 * attribute or input for the message. */
as_code wl_infer_axis(const wl_infer_ctx *c, const char *key, int64_t axis, int rank, bool one_past,
                      int *out);

/*
 * Numpy (multidirectional) broadcasting of shape a with shape b: dims are
 * aligned at the right, a dim of 1 stretches to the other.  out may alias
 * a or b.  `operand` is the input whose shape the message names.
 */
as_code wl_infer_broadcast(const wl_infer_ctx *c, const wl_tensor *operand, int rank_a,
                           const int64_t *a, int rank_b, const int64_t *b, int *rank_out,
                           int64_t *out);

/* Unidirectional broadcasting (Gemm's C, PRelu's slope, LayerNorm's
 * scale): t must stretch to rank/dims without changing them. */
as_code wl_infer_broadcasts_to(const wl_infer_ctx *c, const wl_tensor *t, int rank,
                               const int64_t *dims);

/* The known integer values of input `slot` (a shape, axes, sizes, pads),
 * which the caller has checked is present.  `role` names the input for
 * the message ("shape", "axes"). */
as_code wl_infer_ints(const wl_infer_ctx *c, int slot, const char *role, const int64_t **values,
                      int64_t *count);

/* A target shape given as input `slot`: a known list of at most
 * WL_MAX_RANK entries, none negative unless Reshape's 0 / -1 conventions
 * (allow_special) apply. */
as_code wl_infer_shape_list(const wl_infer_ctx *c, int slot, bool allow_special,
                            const int64_t **shape, int64_t *n);

/* A required parameter input: present with a known list of values. */
as_code wl_infer_required_ints(const wl_infer_ctx *c, int slot, const char *role,
                               const int64_t **values, int64_t *count);

/*
 * The axes an op works on: input `slot` when the node has it (the opset
 * 13+ form), else the attribute list.  Each axis is normalised against
 * `rank` (for Unsqueeze, the output rank) and may appear once; is_axis[]
 * flags them.  *n_axes is 0 when the node gives none.
 */
as_code wl_infer_axes(const wl_infer_ctx *c, int slot, int rank, bool is_axis[WL_MAX_RANK],
                      int *n_axes);

/* ceil(a / b) for a >= 0, b > 0, without overflow. */
int64_t wl_ceil_div(int64_t a, int64_t b);

/* Ops whose output 0 is their input 0, shape and type: Softmax, LogSoftmax,
 * Identity, Dropout (inference: identity; its optional mask output has the
 * same shape in bool). */
as_code wl_infer_same(wl_infer_ctx *c);

/* ------------------------------------------------ helpers of the folders */

/*
 * Where element idx of output out_slot comes from: sets *in_slot and
 * returns the flat index in that input, or -1 for c->fill.
 */
typedef int64_t (*wl_fold_source)(const wl_infer_ctx *c, int out_slot, const int64_t *idx,
                                  int *in_slot);

/* True when t's values are known; an empty tensor trivially has them. */
bool wl_fold_has_values(const wl_tensor *t);

/* Element k of t as a double, whatever t stores. */
double wl_fold_value_f(const wl_tensor *t, int64_t k);

/* Element k of t as an int64 (floating values saturate toward the int64 range, NaN gives 0). */
int64_t wl_fold_value_i(const wl_tensor *t, int64_t k);

/* Store element k of t from a double, converting to t's representation;
 * bool tensors hold 0 or 1. */
void wl_fold_store_f(wl_tensor *t, int64_t k, double v);

/* Store element k of t from an int64, likewise. */
void wl_fold_store_i(wl_tensor *t, int64_t k, int64_t v);

/* Give t room for its values (one element at least, so that an empty
 * tensor still reads as known): fvalues for floating types, ivalues for
 * the rest.  False when out of memory. */
bool wl_fold_alloc(wl_infer_ctx *c, wl_tensor *t);

/* Fail with AS_ENOMEM: the graph arena has no room for folded values. */
as_code wl_fold_out_of_memory(const wl_infer_ctx *c);

/* Row-major flat index of multi-index idx in t. */
int64_t wl_fold_flat_index(const wl_tensor *t, const int64_t *idx);

/* Advance idx to the next multi-index of dims, last axis fastest. */
void wl_fold_next_index(int rank, const int64_t *dims, int64_t *idx);

/* Flat index in t of the element that numpy broadcasting pairs with
 * position idx of a result of rank out_rank (t's dims align right; a
 * dim of 1 repeats). */
int64_t wl_fold_broadcast_index(const wl_tensor *t, int out_rank, const int64_t *idx);

/* Fill every output element by element from its source. */
as_code wl_fold_moved(wl_infer_ctx *c, wl_fold_source source);

/* Compute the values of the op's outputs, whose shapes are set, when the
 * op can be folded: every input it reads has known values and every
 * output has at most WL_MAX_FOLD_ELEMS elements.  Sets op->folded when all
 * outputs got values.  Not folding is no error; fails only when out of
 * memory. */
as_code wl_fold_op(wl_infer_ctx *c);

/* ----------------------------------------------- helpers of the problems */

/* "<source>: node <i> '<name>' (<type>)": whom a message is about. */
#define WL_OP_FMT "%s: node %d '%s' (%s)"
#define WL_OP_ARGS(g, op) (g)->source, (op)->source_index, (op)->name, (op)->op_type
/* Append a rank to data space ds: coef_a * a (+ coef_b * b when coef_b). */
void wl_problem_add_rank(wl_dataspace *ds, wl_dim a, int64_t coef_a, wl_dim b, int64_t coef_b);

/* Append n ranks to data space ds, one dim each (coefficient 1). */
void wl_problem_add_dims(wl_dataspace *ds, int n, const wl_dim *dims);

/* Bind data space id to graph tensor t: name, precision, density. */
void wl_problem_bind(const wl_graph *g, wl_problem *p, wl_dataspace_id id, int32_t t);

#endif
