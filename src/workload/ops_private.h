/*
 * ops_private.h -- the op table: everything the workload module knows
 * about one ONNX operator, in one entry; private to the workload module
 * (lower modules ask through the wl_op_* queries of workload.h).
 *
 * How to add an op (say ONNX "Mod"):
 *
 *   1. workload.h, WL_OP_LIST: one line X(MOD, "Mod", WL_CAT_BINARY).  It
 *      gives the public enum its kind, the ONNX op type and the category;
 *      C needs the enum in the public header, so that line stays there.
 *   2. The op's family file -- ops_window.c (Conv, pools), ops_matmul.c,
 *      ops_norm.c (normalisation, reductions), ops_elementwise.c,
 *      ops_movement.c, ops_index.c (selection by position or value),
 *      ops_shape.c (views, shape arithmetic) -- gets one
 *      entry [WL_OP_MOD] = {...} in its table and the functions the entry
 *      names.  A new family is a new ops_FAMILY.c plus one line in the
 *      family list of ops.c.  The fields of wl_op_def below say what an
 *      entry describes: shape rule, folding, attribute defaults, export,
 *      loop-nest problem, statistics, fusability, vector-unit work and
 *      halo.  Nothing
 *      else dispatches on the op kind: infer.c, fold.c, problem.c,
 *      stats.c, graph.c, wl_mark_fusable and the ONNX export go through
 *      the table, and the mapping and fusion modules through
 *      wl_op_vector_ops, wl_op_halo, wl_op_gathers_rows and
 *      wl_op_kernel_from_weight.
 *   3. An attribute no op read before: one row in onnx_common.c's
 *      attribute table and a field in wl_attrs.
 *   4. Tests: the shape rule and folding in tests/test_infer.c; the
 *      table's own checks (tests/test_graph.c) fail until every kind has
 *      exactly one entry.
 */
#ifndef WL_OPS_PRIVATE_H
#define WL_OPS_PRIVATE_H

#include "infer_private.h"

/* The shape rule of an op (see wl_infer_op): checks the operands, sets
 * every output's shape and type, leaves parameters in the context for the
 * folder. */
typedef as_code (*wl_infer_fn)(wl_infer_ctx *c);
/* A folder computes every output of the op; data movement folders get the
 * op's source map (wl_fold_moved). */
typedef as_code (*wl_fold_fn)(wl_infer_ctx *c, wl_fold_source source);
/* The loop-nest problem of a compute op (see wl_op_problem). */
typedef as_code (*wl_problem_fn)(const wl_graph *g, const wl_op *op, wl_problem *p, as_status *st);

typedef struct wl_op_def {
    /* ONNX: the first default-domain opset that defines the op (0: every
     * opset the importer reads); an export declares at least this. */
    int min_opset;
    /* ONNX's attribute defaults where they differ from the common ones of
     * wl_attrs_default (which calls this after setting those); NULL: none. */
    void (*defaults)(wl_attrs *a);
    /* Before opset axis_changed_at, the default of attribute 'axis' was
     * axis_before (Softmax: 1, on the input flattened to 2-D, until 13);
     * 0: it never changed. */
    int axis_changed_at;
    int64_t axis_before;
    /* Attributes an export writes even when they equal the defaults
     * (space-separated, " a b "), so that a reader sees the geometry. */
    const char *export_always;
    /* The window's kernel may come from the weight (input 1) when
     * kernel_shape is absent (Conv, ConvTranspose; wl_op_kernel_from_weight). */
    bool kernel_from_weight;

    /* Shape inference: the leading inputs that must be present, and the
     * rule. */
    int required_inputs;
    wl_infer_fn infer;
    /* Constant folding (NULL: never folded); `source` for wl_fold_moved.
     * folds_node, when set, says whether this node folds (Pad: constant
     * mode only); fold_reads_dims_only: the folder needs its inputs'
     * shapes, not their values (Shape). */
    wl_fold_fn fold;
    wl_fold_source source;
    bool (*folds_node)(const wl_op *op);
    bool fold_reads_dims_only;

    /* The loop-nest problem; set exactly for the compute ops (MACs). */
    wl_problem_fn problem;
    /* Statistics: bit i set when weight input i is not a trained parameter
     * (BatchNormalization's running mean and variance); gathers_rows: input
     * 0 is a table of which the op reads only the rows its output holds. */
    unsigned non_param_inputs;
    bool gathers_rows;

    /* wl_mark_fusable: an elementwise op that can run in its producer's
     * output pipeline. */
    bool fusable;

    /* Vector-unit work (wl_op_vector_ops): its class and, for
     * WL_VEC_PER_OUTPUT, the operations per output element. */
    wl_vector_class vector;
    int vector_ops_per_element;
    /* How a tile of the output maps onto the inputs (wl_op_halo); halo_of,
     * when set, decides per node (Gemm: not with transA). */
    wl_halo_rule halo;
    wl_halo_rule (*halo_of)(const wl_op *op);
    /* WL_VEC_TRANSFORM: the op's vector operations (0 for a malformed op). */
    int64_t (*transform_ops)(const wl_graph *g, const wl_op *op);

    /* Not an ONNX op: made by accelsearch's own transforms (conv lowering);
     * wl_onnx_save refuses a graph with one. */
    bool internal;
} wl_op_def;

/* The entry of an op kind; an empty entry (no rule, no cost) for
 * WL_OP_UNKNOWN and out-of-range kinds.  Never NULL. */
const wl_op_def *wl_op_def_of(wl_op_kind kind);

/* The family tables, indexed by kind; a kind has an entry (infer set) in
 * exactly one of them. */
extern const wl_op_def wl_ops_window[WL_OP_COUNT];
extern const wl_op_def wl_ops_matmul[WL_OP_COUNT];
extern const wl_op_def wl_ops_norm[WL_OP_COUNT];
extern const wl_op_def wl_ops_elementwise[WL_OP_COUNT];
extern const wl_op_def wl_ops_movement[WL_OP_COUNT];
extern const wl_op_def wl_ops_shape[WL_OP_COUNT];
extern const wl_op_def wl_ops_index[WL_OP_COUNT];
extern const wl_op_def wl_ops_lowering[WL_OP_COUNT];

/* Attribute defaults shared by several families: axis = -1 (Softmax and
 * LayerNormalization at opset 13). */
void wl_defaults_axis_last(wl_attrs *a);

/* DepthToSpace and SpaceToDepth (ops_movement.c): input 0 is
 * [N, C, H, W] and attribute blocksize b valid; *b2 = b * b. */
as_code wl_infer_block_op(wl_infer_ctx *c, int64_t *b2);

/* --------------------------------------------- Winograd (ops_lowering.c) */

/*
 * Winograd F(m x m, 3 x 3) (Lavin & Gray, CVPR 2016): tiles of alpha =
 * m + 2 input elements give m x m outputs, Y = A^T [(G g G^T) .* (B^T d B)] A.
 * Matrices row-major: bt alpha x alpha, g alpha x 3, at m x alpha.
 */
typedef struct wl_winograd {
    int m, alpha;
    const double *bt, *g, *at;
} wl_winograd;

/* The transform of F(m x m, 3 x 3) for m = 2 or 4; NULL otherwise. */
const wl_winograd *wl_winograd_of(int m);

/* Operations of one 2-D transform L X L^T, L rows x cols, X cols x cols,
 * computed as (L X) L^T from L's non-zero pattern: a row of k non-zeros
 * costs k - 1 additions and one multiplication per coefficient other than
 * 0 and +-1, per column of X and again per row of L X. */
void wl_transform_ops(const double *l, int rows, int cols, int64_t *adds, int64_t *muls);

/* Expected density of L X L^T for X of density d, L rows x cols:
 * element (i, j) is zero only when all n_i * n_j elements of X it
 * combines are (n_i = non-zeros of row i; cancellation ignored), so the
 * mean over (i, j) of 1 - (1 - d)^(n_i n_j). */
double wl_transform_density(const double *l, int rows, int cols, double d);

#endif
