/*
 * workload.h -- the workload layer of accelsearch: model graphs, their
 * import from ONNX and the built-in zoo, shape inference, transforms,
 * statistics, and the loop-nest problem of every compute op.
 *
 * A wl_graph is a plain container in the spirit of ggml: tensors and ops
 * live in two arrays and refer to each other by index (int32_t, -1 for
 * "none").  Names, attribute lists and constant values live in the graph's
 * arena and are freed with the graph.  The op vocabulary is ONNX's, so that
 * import and export are one-to-one and a user recognises every layer.
 *
 * Life of a graph:
 *   wl_graph_new -> wl_add_tensor / wl_add_op (importer, zoo builder)
 *   -> wl_graph_infer (topological order, shapes, constant folding, checks)
 *   -> transforms (batch, precision, BN folding, pruning), each re-infers
 *   -> wl_graph_stats / wl_op_stats / wl_op_problem.
 *
 * Nothing here prints or exits: failures come back as an as_status naming
 * the file, node and key at fault.
 */
#ifndef AS_WORKLOAD_H
#define AS_WORKLOAD_H

#include "../core/core.h"

#define WL_MAX_RANK 8    /* dimensions of a tensor */
#define WL_MAX_SPATIAL 3 /* spatial dimensions of a conv or pool window */
/* Constant folding keeps the values of tensors up to this many elements
 * (shape computations, scalars, small index tensors); larger constants are
 * carried by shape only. */
#define WL_MAX_FOLD_ELEMS 65536

/* ------------------------------------------------------------ data types */

/* Element types.  The numbering is ONNX's TensorProto.DataType so that the
 * importer and exporter need no table. */
typedef enum wl_dtype {
    WL_DTYPE_UNDEFINED = 0,
    WL_DTYPE_F32 = 1,
    WL_DTYPE_U8 = 2,
    WL_DTYPE_I8 = 3,
    WL_DTYPE_U16 = 4,
    WL_DTYPE_I16 = 5,
    WL_DTYPE_I32 = 6,
    WL_DTYPE_I64 = 7,
    WL_DTYPE_STRING = 8,
    WL_DTYPE_BOOL = 9,
    WL_DTYPE_F16 = 10,
    WL_DTYPE_F64 = 11,
    WL_DTYPE_U32 = 12,
    WL_DTYPE_U64 = 13,
    WL_DTYPE_BF16 = 16,
} wl_dtype;

/* Bits per element (bool counts 8, string and undefined 0). */
int wl_dtype_bits(wl_dtype t);
/* "float32", "int64", ... ; "?" for an unknown code. */
const char *wl_dtype_name(wl_dtype t);
bool wl_dtype_is_float(wl_dtype t);
/* True for the types trained weights are stored in: floats, and int8 and
 * uint8 (quantized weights, as an int8 export writes them). */
bool wl_dtype_is_weight(wl_dtype t);
/* True for a code this library understands. */
bool wl_dtype_valid(int code);

/* --------------------------------------------------------------- tensors */

typedef enum wl_tensor_kind {
    WL_TENSOR_ACTIVATION = 0, /* computed by an op */
    WL_TENSOR_INPUT,          /* a graph input, fed at run time */
    WL_TENSOR_WEIGHT,         /* an initializer: trained weights, biases, BN statistics */
    WL_TENSOR_CONSTANT,       /* a Constant node's value or an integer initializer */
} wl_tensor_kind;

typedef struct wl_tensor {
    const char *name; /* unique in the graph; arena */
    wl_tensor_kind kind;
    wl_dtype dtype; /* element type of the values as the model defines them */
    int bits;       /* storage precision on the accelerator (transforms set it;
                       defaults to wl_dtype_bits(dtype)) */
    /* The element type of that storage when wl_set_precision chose it
     * (float16, bfloat16, int8); WL_DTYPE_UNDEFINED when the storage is the
     * model's own type or bits were set one by one.  An ONNX export gives
     * weights written without data this type. */
    wl_dtype storage_dtype;
    /* A precision was chosen for this tensor (wl_set_precision,
     * wl_set_tensor_bits): the MACs take its values in the format of that
     * precision (wl_number), emulating it when they lack it.  False for a
     * model as loaded: its values are taken as the MACs' own operands. */
    bool precision_chosen;
    double density;   /* fraction of non-zero elements: 1 dense, < 1 after pruning */
    bool shape_known; /* dims[] valid (false until inferred) */
    int rank;
    int64_t dims[WL_MAX_RANK];
    int32_t producer; /* op index, -1 for inputs, weights and constants */
    /* Known values (constants, folded shape computations), at most
     * WL_MAX_FOLD_ELEMS elements: ivalues for integer and bool tensors,
     * fvalues for floating ones; NULL when unknown.  Arena. */
    int64_t *ivalues;
    double *fvalues;
    /* A weight whose dims are known but whose data the file omitted
     * ("weight-stripped" exports); informational. */
    bool data_stripped;
    /* Computed at load time from known tensors alone, its values not kept
     * (more than WL_MAX_FOLD_ELEMS elements, or an input's were not):
     * Swin's shifted-window attention mask, a slice of GPT-2's causal mask
     * buffer.  Known like a folded tensor; reset by re-inference. */
    bool known_unvalued;
} wl_tensor;

/* ------------------------------------------------------------------- ops */

typedef enum wl_op_category {
    WL_CAT_COMPUTE,   /* MAC-bound: conv, transposed conv, gemm, matmul */
    WL_CAT_UNARY,     /* elementwise with one data input (activations, math) */
    WL_CAT_BINARY,    /* elementwise with broadcasting (Add, Mul, Where, ...) */
    WL_CAT_NORM,      /* normalisation and softmax */
    WL_CAT_REDUCE,    /* reductions over axes */
    WL_CAT_POOL,      /* windowed and global pooling */
    WL_CAT_MOVE,      /* copies data in a new arrangement (Concat, Transpose, Pad...) */
    WL_CAT_VIEW,      /* changes only the shape (Reshape, Flatten, Identity...) */
    WL_CAT_SHAPE,     /* computes shapes or constants (Shape, Constant, Range...) */
    WL_CAT_TRANSFORM, /* a lowered conv's data transform (Winograd's B^T d B, A^T m A):
                         vector work counted from the transform matrices */
    WL_CAT_UNKNOWN,   /* an op type accelsearch does not model (costed as zero) */
} wl_op_category;

/* X(ENUM_SUFFIX, "OnnxOpType", category).  One list drives the enum, the
 * name table and the category table. */
#define WL_OP_LIST(X)                                                                              \
    X(CONV, "Conv", WL_CAT_COMPUTE)                                                                \
    X(CONV_TRANSPOSE, "ConvTranspose", WL_CAT_COMPUTE)                                             \
    X(GEMM, "Gemm", WL_CAT_COMPUTE)                                                                \
    X(MATMUL, "MatMul", WL_CAT_COMPUTE)                                                            \
    X(BATCHNORM, "BatchNormalization", WL_CAT_NORM)                                                \
    X(LAYERNORM, "LayerNormalization", WL_CAT_NORM)                                                \
    X(SOFTMAX, "Softmax", WL_CAT_NORM)                                                             \
    X(RELU, "Relu", WL_CAT_UNARY)                                                                  \
    X(LEAKY_RELU, "LeakyRelu", WL_CAT_UNARY)                                                       \
    X(CLIP, "Clip", WL_CAT_UNARY)                                                                  \
    X(SIGMOID, "Sigmoid", WL_CAT_UNARY)                                                            \
    X(HARD_SIGMOID, "HardSigmoid", WL_CAT_UNARY)                                                   \
    X(HARD_SWISH, "HardSwish", WL_CAT_UNARY)                                                       \
    X(TANH, "Tanh", WL_CAT_UNARY)                                                                  \
    X(ERF, "Erf", WL_CAT_UNARY)                                                                    \
    X(SQRT, "Sqrt", WL_CAT_UNARY)                                                                  \
    X(RECIPROCAL, "Reciprocal", WL_CAT_UNARY)                                                      \
    X(EXP, "Exp", WL_CAT_UNARY)                                                                    \
    X(LOG, "Log", WL_CAT_UNARY)                                                                    \
    X(NEG, "Neg", WL_CAT_UNARY)                                                                    \
    X(ABS, "Abs", WL_CAT_UNARY)                                                                    \
    X(NOT, "Not", WL_CAT_UNARY)                                                                    \
    X(CAST, "Cast", WL_CAT_UNARY)                                                                  \
    X(ADD, "Add", WL_CAT_BINARY)                                                                   \
    X(SUB, "Sub", WL_CAT_BINARY)                                                                   \
    X(MUL, "Mul", WL_CAT_BINARY)                                                                   \
    X(DIV, "Div", WL_CAT_BINARY)                                                                   \
    X(POW, "Pow", WL_CAT_BINARY)                                                                   \
    X(EQUAL, "Equal", WL_CAT_BINARY)                                                               \
    X(LESS, "Less", WL_CAT_BINARY)                                                                 \
    X(GREATER, "Greater", WL_CAT_BINARY)                                                           \
    X(MIN, "Min", WL_CAT_BINARY)                                                                   \
    X(MAX, "Max", WL_CAT_BINARY)                                                                   \
    X(PRELU, "PRelu", WL_CAT_BINARY)                                                               \
    X(WHERE, "Where", WL_CAT_BINARY)                                                               \
    X(REDUCE_MEAN, "ReduceMean", WL_CAT_REDUCE)                                                    \
    X(REDUCE_SUM, "ReduceSum", WL_CAT_REDUCE)                                                      \
    X(MAX_POOL, "MaxPool", WL_CAT_POOL)                                                            \
    X(AVERAGE_POOL, "AveragePool", WL_CAT_POOL)                                                    \
    X(GLOBAL_AVERAGE_POOL, "GlobalAveragePool", WL_CAT_POOL)                                       \
    X(GLOBAL_MAX_POOL, "GlobalMaxPool", WL_CAT_POOL)                                               \
    X(CONCAT, "Concat", WL_CAT_MOVE)                                                               \
    X(SPLIT, "Split", WL_CAT_MOVE)                                                                 \
    X(SLICE, "Slice", WL_CAT_MOVE)                                                                 \
    X(GATHER, "Gather", WL_CAT_MOVE)                                                               \
    X(TRANSPOSE, "Transpose", WL_CAT_MOVE)                                                         \
    X(EXPAND, "Expand", WL_CAT_MOVE)                                                               \
    X(TILE, "Tile", WL_CAT_MOVE)                                                                   \
    X(PAD, "Pad", WL_CAT_MOVE)                                                                     \
    X(RESIZE, "Resize", WL_CAT_MOVE)                                                               \
    X(DEPTH_TO_SPACE, "DepthToSpace", WL_CAT_MOVE)                                                 \
    X(RESHAPE, "Reshape", WL_CAT_VIEW)                                                             \
    X(FLATTEN, "Flatten", WL_CAT_VIEW)                                                             \
    X(SQUEEZE, "Squeeze", WL_CAT_VIEW)                                                             \
    X(UNSQUEEZE, "Unsqueeze", WL_CAT_VIEW)                                                         \
    X(IDENTITY, "Identity", WL_CAT_VIEW)                                                           \
    X(DROPOUT, "Dropout", WL_CAT_VIEW)                                                             \
    X(SHAPE, "Shape", WL_CAT_SHAPE)                                                                \
    X(CONSTANT, "Constant", WL_CAT_SHAPE)                                                          \
    X(CONSTANT_OF_SHAPE, "ConstantOfShape", WL_CAT_SHAPE)                                          \
    X(RANGE, "Range", WL_CAT_SHAPE)                                                                \
    X(MOD, "Mod", WL_CAT_BINARY)                                                                   \
    X(SIN, "Sin", WL_CAT_UNARY)                                                                    \
    X(COS, "Cos", WL_CAT_UNARY)                                                                    \
    X(FLOOR, "Floor", WL_CAT_UNARY)                                                                \
    X(CEIL, "Ceil", WL_CAT_UNARY)                                                                  \
    X(ROUND, "Round", WL_CAT_UNARY)                                                                \
    X(SIGN, "Sign", WL_CAT_UNARY)                                                                  \
    X(SOFTPLUS, "Softplus", WL_CAT_UNARY)                                                          \
    X(ELU, "Elu", WL_CAT_UNARY)                                                                    \
    X(SELU, "Selu", WL_CAT_UNARY)                                                                  \
    X(AND, "And", WL_CAT_BINARY)                                                                   \
    X(OR, "Or", WL_CAT_BINARY)                                                                     \
    X(XOR, "Xor", WL_CAT_BINARY)                                                                   \
    X(GREATER_OR_EQUAL, "GreaterOrEqual", WL_CAT_BINARY)                                           \
    X(LESS_OR_EQUAL, "LessOrEqual", WL_CAT_BINARY)                                                 \
    X(SUM, "Sum", WL_CAT_BINARY)                                                                   \
    X(MEAN, "Mean", WL_CAT_BINARY)                                                                 \
    X(REDUCE_MAX, "ReduceMax", WL_CAT_REDUCE)                                                      \
    X(REDUCE_MIN, "ReduceMin", WL_CAT_REDUCE)                                                      \
    X(REDUCE_PROD, "ReduceProd", WL_CAT_REDUCE)                                                    \
    X(REDUCE_L1, "ReduceL1", WL_CAT_REDUCE)                                                        \
    X(REDUCE_L2, "ReduceL2", WL_CAT_REDUCE)                                                        \
    X(REDUCE_SUM_SQUARE, "ReduceSumSquare", WL_CAT_REDUCE)                                         \
    X(REDUCE_LOG_SUM, "ReduceLogSum", WL_CAT_REDUCE)                                               \
    X(REDUCE_LOG_SUM_EXP, "ReduceLogSumExp", WL_CAT_REDUCE)                                        \
    X(ARG_MAX, "ArgMax", WL_CAT_REDUCE)                                                            \
    X(ARG_MIN, "ArgMin", WL_CAT_REDUCE)                                                            \
    X(LOG_SOFTMAX, "LogSoftmax", WL_CAT_REDUCE)                                                    \
    X(INSTANCE_NORM, "InstanceNormalization", WL_CAT_REDUCE)                                       \
    X(GROUP_NORM, "GroupNormalization", WL_CAT_REDUCE)                                             \
    X(CUM_SUM, "CumSum", WL_CAT_REDUCE)                                                            \
    X(SPACE_TO_DEPTH, "SpaceToDepth", WL_CAT_MOVE)                                                 \
    X(GATHER_ELEMENTS, "GatherElements", WL_CAT_MOVE)                                              \
    X(SCATTER_ND, "ScatterND", WL_CAT_MOVE)                                                        \
    X(TRILU, "Trilu", WL_CAT_MOVE)                                                                 \
    X(TOP_K, "TopK", WL_CAT_MOVE)                                                                  \
    X(NON_ZERO, "NonZero", WL_CAT_MOVE)                                                            \
    X(GRID_SAMPLE, "GridSample", WL_CAT_MOVE)                                                      \
    X(EINSUM, "Einsum", WL_CAT_COMPUTE)                                                            \
    X(SIZE, "Size", WL_CAT_SHAPE)                                                                  \
    X(TAN, "Tan", WL_CAT_UNARY)                                                                    \
    X(ASIN, "Asin", WL_CAT_UNARY)                                                                  \
    X(ACOS, "Acos", WL_CAT_UNARY)                                                                  \
    X(ATAN, "Atan", WL_CAT_UNARY)                                                                  \
    X(SINH, "Sinh", WL_CAT_UNARY)                                                                  \
    X(COSH, "Cosh", WL_CAT_UNARY)                                                                  \
    X(ASINH, "Asinh", WL_CAT_UNARY)                                                                \
    X(ACOSH, "Acosh", WL_CAT_UNARY)                                                                \
    X(ATANH, "Atanh", WL_CAT_UNARY)                                                                \
    X(SOFTSIGN, "Softsign", WL_CAT_UNARY)                                                          \
    X(IS_NAN, "IsNaN", WL_CAT_UNARY)                                                               \
    X(IS_INF, "IsInf", WL_CAT_UNARY)                                                               \
    X(THRESHOLDED_RELU, "ThresholdedRelu", WL_CAT_UNARY)                                           \
    X(CELU, "Celu", WL_CAT_UNARY)                                                                  \
    X(MISH, "Mish", WL_CAT_UNARY)                                                                  \
    X(LRN, "LRN", WL_CAT_REDUCE)                                                                   \
    X(MEAN_VARIANCE_NORM, "MeanVarianceNormalization", WL_CAT_REDUCE)                              \
    X(LP_NORM, "LpNormalization", WL_CAT_REDUCE)                                                   \
    X(SCATTER_ELEMENTS, "ScatterElements", WL_CAT_MOVE)                                            \
    X(GATHER_ND, "GatherND", WL_CAT_MOVE)                                                          \
    X(UNKNOWN, "?", WL_CAT_UNKNOWN)                                                                \
    /* Not ONNX ops: made by accelsearch's convolution lowering (wl_lower_convs).  Listed after    \
     * UNKNOWN so that no ONNX name maps onto them (wl_op_kind_from_name), the importer never      \
     * creates them and docs/onnx-ops.md does not list them; wl_onnx_save refuses them. */         \
    X(IM2COL, "Im2Col", WL_CAT_MOVE)                                                               \
    X(WINOGRAD_INPUT, "WinogradInputTransform", WL_CAT_TRANSFORM)                                  \
    X(WINOGRAD_OUTPUT, "WinogradOutputTransform", WL_CAT_TRANSFORM)

typedef enum wl_op_kind {
#define WL_X_ENUM(e, s, c) WL_OP_##e,
    WL_OP_LIST(WL_X_ENUM)
#undef WL_X_ENUM
        WL_OP_COUNT
} wl_op_kind;

/* ONNX op type of a kind ("Conv"); the kind of an ONNX op type, or
 * WL_OP_UNKNOWN. */
const char *wl_op_kind_name(wl_op_kind k);
wl_op_kind wl_op_kind_from_name(const char *onnx_op_type);
wl_op_category wl_op_kind_category(wl_op_kind k);
struct wl_op;
/* The category op is costed as: WL_CAT_VIEW when inference found it an
 * identity (wl_op.identity), else its kind's. */
wl_op_category wl_op_category_of(const struct wl_op *op);
const char *wl_op_category_name(wl_op_category c);

typedef enum wl_auto_pad {
    WL_AUTO_PAD_NOTSET = 0, /* use pads[] */
    WL_AUTO_PAD_SAME_UPPER,
    WL_AUTO_PAD_SAME_LOWER,
    WL_AUTO_PAD_VALID,
} wl_auto_pad;

/*
 * Attributes of an op, as one flat struct: each op reads the fields it
 * needs and ignores the rest (the importer fills them from ONNX attributes
 * of the same names; wl_attrs_default gives ONNX's defaults).  Attributes
 * that ONNX later turned into inputs (Split sizes, Squeeze axes, Pad pads,
 * Clip bounds, ...) are read from the input's constant value when present.
 */
typedef struct wl_attrs {
    /* Conv, ConvTranspose, MaxPool, AveragePool.  n_spatial = 0 means "take
     * it from the input rank" (rank - 2). */
    int n_spatial;
    int64_t kernel_shape[WL_MAX_SPATIAL]; /* 0 = from the weight tensor */
    int64_t strides[WL_MAX_SPATIAL];
    int64_t dilations[WL_MAX_SPATIAL];
    int64_t pads[2 * WL_MAX_SPATIAL]; /* ONNX order: begins..., ends... */
    int64_t output_padding[WL_MAX_SPATIAL];
    int64_t output_shape[WL_MAX_SPATIAL]; /* ConvTranspose; 0 = unset */
    wl_auto_pad auto_pad;
    int64_t group;
    int ceil_mode;
    int count_include_pad;

    /* Axis-based ops: Concat, Split, Gather, Softmax, Flatten, LayerNorm. */
    int64_t axis;
    /* Reduce*, Squeeze, Unsqueeze (attribute form, opsets before 13/18). */
    int n_axes;
    int64_t axes[WL_MAX_RANK];
    int keepdims;
    int noop_with_empty_axes;
    /* Transpose; n_perm = 0 means reverse the dimensions. */
    int n_perm;
    int64_t perm[WL_MAX_RANK];
    /* Split sizes (attribute form, before opset 13); n_split = 0: equal parts. */
    int n_split;
    int64_t split[WL_MAX_RANK * 8];

    /* Gemm */
    int trans_a, trans_b;
    /* Gemm alpha/beta; LeakyRelu, HardSigmoid alpha/beta; Clip min/max
     * (attribute form before opset 11) in alpha/beta. */
    float alpha, beta;  /* float, like ONNX's attributes, so that they round-trip */
    float epsilon;      /* BatchNormalization, LayerNormalization */
    wl_dtype to;        /* Cast */
    double value;       /* ConstantOfShape fill value */
    int64_t blocksize;  /* DepthToSpace */
    int mode_crd;       /* DepthToSpace: 1 = CRD, 0 = DCR */
    char mode[16];      /* Pad ("constant", "reflect", "edge"), Resize ("nearest", "linear", ...) */
    char equation[64];  /* Einsum ("bhqd,bhkd->bhqk") */
    float ratio;        /* Dropout (inference: identity) */
    float gamma;        /* Selu */
    int fmod;           /* Mod: 1 = C's fmod (sign of the dividend), 0 = sign of the divisor */
    int upper;          /* Trilu: keep the upper triangle (default 1) */
    int64_t k;          /* TopK before opset 10 (later an input) */
    int64_t num_groups; /* GroupNormalization */
    int64_t batch_dims; /* GatherND */
    int64_t lrn_size;   /* LRN: channels in the window (attribute 'size') */
} wl_attrs;

/* ONNX's defaults: strides and dilations 1, group 1, keepdims 1, alpha 1,
 * beta 1 (Gemm; ops with other defaults set their own), epsilon 1e-5,
 * axis 0 ... */
void wl_attrs_default(wl_attrs *a, wl_op_kind kind);

typedef struct wl_op {
    wl_op_kind kind;
    const char *name;    /* node name (arena); unique names are not required by ONNX */
    const char *op_type; /* the source's op type: equals wl_op_kind_name(kind) except for
                            WL_OP_UNKNOWN, where it keeps the foreign type; arena */
    int n_inputs, n_outputs;
    int32_t *inputs; /* tensor indices; -1 for an omitted optional input; arena */
    int32_t *outputs;
    wl_attrs attrs;
    int32_t source_index; /* position of the node in the source file or build order */
    /* Set by inference: every output has known values, so the op does no
     * work at run time (shape arithmetic, constants). */
    bool folded;
    /* Set by inference: output 0 is input 0 element for element (Pad by
     * zeros, Slice of everything, Cast to its own type, Expand or Tile to
     * the same shape, Transpose by the identity): a view, see
     * wl_op_category_of.  Swin-T's exports pad by (7 - 56 % 7) % 7 = 0. */
    bool identity;
    /* Set by wl_mark_fusable: an elementwise op that runs in its producer's
     * output pipeline (no DRAM round trip of its own when fused). */
    bool fusable;
    /* Set by transforms that remove an op (BN folding); wl_graph_compact
     * drops dead ops. */
    bool dead;
    /* Set by wl_fold_batchnorm on the conv that took a BatchNormalization
     * in: the BN's node name (arena), NULL when none. */
    const char *folded_bn;
    /* Set by wl_fuse_epilogues (-1 otherwise, and again after
     * wl_graph_compact renumbers the ops): the op whose output pipeline
     * this op runs in (the root of its fused op); and, in a root and in
     * each of its epilogue ops, the next epilogue op in topological order
     * (-1: the last).  A root's epilogue is thus root.epilogue_next, ... */
    int32_t epilogue_of;
    int32_t epilogue_next;
} wl_op;

/* ----------------------------------------------------------------- graph */

typedef struct wl_graph {
    as_arena arena;
    const char *name;   /* model name (zoo name or the ONNX graph name) */
    const char *source; /* file path or "zoo:NAME", for messages; arena */
    int64_t opset;      /* default-domain opset of the source (zoo: 13) */

    wl_tensor *tensors;
    int32_t n_tensors;
    int64_t cap_tensors;
    wl_op *ops;
    int32_t n_ops;
    int64_t cap_ops;
    int32_t *inputs; /* graph inputs (tensor indices), in declaration order */
    int32_t n_inputs;
    int64_t cap_inputs;
    int32_t *outputs; /* graph outputs */
    int32_t n_outputs;
    int64_t cap_outputs;
    as_strmap tensor_by_name;

    /* Warnings for the caller to show (unknown ops allowed through, guesses
     * made); arena strings. */
    const char **warnings;
    int32_t n_warnings;
    int64_t cap_warnings;

    /* Derived by wl_graph_index (and so by wl_graph_infer); malloc'd. */
    int32_t *order; /* live ops in topological order (stable: source order wins ties) */
    int32_t n_order;
    int32_t *consumer_start; /* n_tensors + 1 entries */
    int32_t
        *consumers; /* op indices: consumers of t are [consumer_start[t], consumer_start[t+1]) */
} wl_graph;

wl_graph *wl_graph_new(const char *name, const char *source);
void wl_graph_free(wl_graph *g);

/* Add a tensor; returns its index, or -1 with st set (duplicate name, rank
 * over WL_MAX_RANK, negative dimension, out of memory).  dims may be NULL
 * when the shape is not known yet (rank is then ignored). */
int32_t wl_add_tensor(wl_graph *g, const char *name, wl_tensor_kind kind, wl_dtype dtype, int rank,
                      const int64_t *dims, as_status *st);
/* The index of the tensor called name, or -1. */
int32_t wl_find_tensor(const wl_graph *g, const char *name);
/* Add an op reading inputs and writing outputs (all existing tensors or -1
 * for omitted optional inputs).  Sets each output's producer; an output
 * that already has a producer is an error.  attrs NULL = defaults. */
int32_t wl_add_op(wl_graph *g, wl_op_kind kind, const char *name, const char *op_type, int n_inputs,
                  const int32_t *inputs, int n_outputs, const int32_t *outputs,
                  const wl_attrs *attrs, as_status *st);
bool wl_add_graph_input(wl_graph *g, int32_t tensor);
bool wl_add_graph_output(wl_graph *g, int32_t tensor);
/* Record a warning (printf-style); silently dropped when out of memory. */
void wl_warn(wl_graph *g, const char *fmt, ...) AS_PRINTF(2, 3);

/* Build the topological order and the consumer lists.  Fails (AS_EINVAL)
 * on a cycle, naming an op on it, and on an op input that no op produces
 * and that is not a graph input, weight or constant ("dangling"). */
as_code wl_graph_index(wl_graph *g, as_status *st);

/* Shapes and values of op's outputs from its inputs (which must be known):
 * the shape inference of ONNX plus constant folding of integer shape
 * arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains).
 * Checks operand agreement (channels, broadcast, ranks, attribute ranges)
 * and fails with a message naming the node, its type and index, and the
 * offending key.  Used by the zoo builder after each op and by
 * wl_graph_infer for every op. */
as_code wl_infer_op(wl_graph *g, int32_t op, as_status *st);

/* Index the graph, then infer every op in topological order.  Shapes of
 * activations are recomputed from the graph inputs and weights, so a
 * transform that changes an input or a weight calls this again. */
as_code wl_graph_infer(wl_graph *g, as_status *st);

/* Drop dead ops and tensors that nothing uses any more; indices change. */
as_code wl_graph_compact(wl_graph *g, as_status *st);

/* True when tensor t is one of the graph's outputs (it must be written out
 * whatever runs on chip). */
bool wl_is_graph_output(const wl_graph *g, int32_t t);
/* True when a tensor's values are fixed before run time: a constant, or
 * shape arithmetic that inference folded (with its values kept or not).
 * Such a tensor moves no data. */
bool wl_tensor_is_known(const wl_tensor *t);

/* Elements of a tensor (product of dims, 1 for a scalar); -1 when the shape
 * is unknown or the product overflows int64. */
int64_t wl_tensor_elements(const wl_tensor *t);
/* Bytes of a tensor at its storage precision (bits), rounded up. */
int64_t wl_tensor_bytes(const wl_tensor *t);
/* Short text of a shape, "[1,3,224,224]", into buf. */
const char *wl_shape_str(const wl_tensor *t, char *buf, size_t size);

/* Consumers of tensor t (after wl_graph_index). */
static inline int32_t wl_consumer_count(const wl_graph *g, int32_t t)
{
    return g->consumer_start[t + 1] - g->consumer_start[t];
}
static inline const int32_t *wl_consumer_list(const wl_graph *g, int32_t t)
{
    return g->consumers + g->consumer_start[t];
}

/* -------------------------------------------------------------- problems */

/*
 * The loop-nest problem of a compute op in Timeloop's CNN-layer form:
 *
 *   for n, g, m, c, p, q, r, s:
 *     Outputs[n][g][m][p][q] += Weights[g][m][c][r][s] *
 *                               Inputs[n][g][c][p*Hstride + r*Hdilation][q*Wstride + s*Wdilation]
 *
 * N batch, G groups, M output channels per group, C input channels per
 * group, P/Q output rows/columns, R/S filter rows/columns.  A matmul
 * A[rows x K] * B[K x cols] is N=batch, G=heads, P=rows, C=K, M=cols,
 * with Q=R=S=1 (operand B in the "weights" role even when it is an
 * activation, as in attention).  A transposed convolution iterates over
 * its *input* positions (P, Q = input rows, columns) and scatters into
 * outputs at p*stride + r*dilation, so the sliding window appears in the
 * output projection instead.  Every instance has MACs = product of bounds.
 */
typedef enum wl_dim {
    WL_DIM_N,
    WL_DIM_G,
    WL_DIM_C,
    WL_DIM_M,
    WL_DIM_P,
    WL_DIM_Q,
    WL_DIM_R,
    WL_DIM_S,
    WL_NDIMS
} wl_dim;
/* "N", "G", ... */
const char *wl_dim_name(wl_dim d);

typedef enum wl_dataspace_id {
    WL_DS_WEIGHTS,
    WL_DS_INPUTS,
    WL_DS_OUTPUTS,
    WL_NDATASPACES
} wl_dataspace_id;

typedef enum wl_problem_kind {
    WL_PROBLEM_CONV,      /* dense or grouped convolution (G >= 1) */
    WL_PROBLEM_DEPTHWISE, /* grouped with C = M = 1 per group */
    WL_PROBLEM_CONV_TRANSPOSE,
    WL_PROBLEM_MATMUL,         /* activations x weights (Gemm, Linear-style MatMul) */
    WL_PROBLEM_BATCHED_MATMUL, /* activations x activations (attention QK^T, AV) */
} wl_problem_kind;

/* One rank (axis) of a data space: the sum of coef * dim over its terms,
 * e.g. the input row index p*stride + r*dilation. */
typedef struct wl_proj_term {
    wl_dim dim;
    int64_t coef;
} wl_proj_term;
typedef struct wl_proj_rank {
    int n_terms;
    wl_proj_term terms[2];
} wl_proj_rank;
#define WL_MAX_DS_RANKS 5

/* Number format of a data space's elements, as the MACs must take them.
 * AS_HARDWARE (zero, the default) is a model whose precision nobody
 * chose: its operands are taken in the MACs' own format, as the design's
 * makers ran it.  The others come from a tensor whose precision was
 * chosen (wl_tensor.precision_chosen): integers, IEEE 754 binary floats
 * (fp8 E4M3, fp16, fp32, fp64 by bits) and bfloat16; the MACs emulate a
 * format they lack (map_mac_passes). */
typedef enum wl_number {
    WL_NUMBER_AS_HARDWARE,
    WL_NUMBER_INT,
    WL_NUMBER_FLOAT,
    WL_NUMBER_BF16,
} wl_number;
/* "as-hardware", "int", "float", "bf16". */
const char *wl_number_name(wl_number n);

typedef struct wl_dataspace {
    const char *name; /* "Weights", "Inputs", "Outputs" (static) */
    int n_ranks;
    wl_proj_rank ranks[WL_MAX_DS_RANKS];
    bool read_write; /* the result: read-modify-written by partial sums */
    int bits;        /* element precision */
    double density;  /* non-zero fraction */
    int32_t tensor;  /* the graph tensor behind it */
    /* Element number format the MACs take (AS_HARDWARE unless chosen). */
    wl_number number;
} wl_dataspace;

typedef struct wl_problem {
    wl_problem_kind kind;
    int64_t bound[WL_NDIMS];
    int64_t stride[2];   /* H, W */
    int64_t dilation[2]; /* H, W */
    int64_t pad[4];      /* top, left, bottom, right (informational: the window of a
                            padded conv reads zeros at the border) */
    wl_dataspace ds[WL_NDATASPACES];
    int32_t op; /* the graph op it came from */
} wl_problem;

/* The problem of compute op `op` (category WL_CAT_COMPUTE); AS_EINVAL for
 * any other op. */
as_code wl_op_problem(const wl_graph *g, int32_t op, wl_problem *out, as_status *st);
/* Product of the bounds (= MACs); -1 on overflow. */
int64_t wl_problem_macs(const wl_problem *p);
/* Elements of a data space: product over its ranks of the extent
 * sum(coef * (bound - 1)) + 1. */
int64_t wl_dataspace_elements(const wl_problem *p, wl_dataspace_id ds);

/* ------------------------------------------------------------ statistics */

typedef struct wl_op_stats {
    int64_t macs;         /* multiply-accumulates: Conv, ConvTranspose, Gemm, MatMul only */
    int64_t params;       /* trainable parameter elements read by this op */
    int64_t weight_bytes; /* bytes of every weight read (parameters and BN statistics) at
                             their precision; a Gather from a table reads its gathered rows */
    int64_t input_bytes;  /* unique activation (non-weight, non-constant) inputs */
    int64_t output_bytes; /* all outputs */
    int64_t output_elements;
} wl_op_stats;

typedef struct wl_stats {
    int64_t params;         /* trainable parameters: float weights, BN running stats excluded */
    int64_t nonzero_params; /* params weighted by density (after pruning) */
    int64_t macs;
    int64_t weight_bytes;          /* params at their precision */
    int64_t max_working_set_bytes; /* largest input+output activation bytes of one compute op */
    int32_t max_working_set_op;
    int64_t dram_bytes_unfused;  /* every live, unfolded op reads its inputs and weights
                                    from DRAM and writes its outputs there; views move nothing */
    double op_intensity_unfused; /* 2 * macs / dram_bytes_unfused */
    int32_t n_compute_ops;
    int32_t n_ops; /* live, unfolded ops */
} wl_stats;

/* Per-op figures; a folded, dead or view op has zero traffic. */
void wl_op_stats_get(const wl_graph *g, int32_t op, wl_op_stats *out);
/* Whole-graph figures (the graph must be inferred). */
as_code wl_graph_stats(const wl_graph *g, wl_stats *out, as_status *st);
/* True when a weight tensor counts as a trainable parameter: a float or
 * quantized (wl_dtype_is_weight) initializer that is not a
 * BatchNormalization running mean or variance. */
bool wl_tensor_is_param(const wl_graph *g, int32_t t);

/* ------------------------------------------- op costs for lower modules */

/*
 * What the mapping and fusion modules need to know about an op beyond
 * its problem, answered from the op table (ops_private.h) so that a new
 * op is described in one place.
 */

/* How much work a non-compute op gives the vector unit. */
typedef enum wl_vector_class {
    WL_VEC_NONE,       /* none: compute ops (the MAC array), data movement, views, shapes */
    WL_VEC_PER_OUTPUT, /* a fixed number of operations per output element (elementwise: 1,
                          BatchNormalization: 2, Softmax: 4, LayerNormalization: 5) */
    WL_VEC_PER_INPUT,  /* one per element of input 0 (reductions, global pooling) */
    WL_VEC_PER_WINDOW, /* one per output element and window position (MaxPool, AveragePool) */
    WL_VEC_TRANSFORM,  /* per tile, the additions and multiplications of a transform matrix's
                          non-zero pattern (Winograd's input and output transforms) */
} wl_vector_class;

wl_vector_class wl_op_vector_class(wl_op_kind k);
/* Element operations of op on the vector unit, from its statistics s
 * (wl_op_stats_get): 0 for WL_VEC_NONE. */
int64_t wl_op_vector_ops(const wl_graph *g, const wl_op *op, const wl_op_stats *s);

/* Which region of an input an op needs to produce a tile (a region along
 * one or two output axes) of its output 0. */
typedef enum wl_halo_rule {
    WL_HALO_WHOLE,       /* the whole input, whatever the tile */
    WL_HALO_WINDOW,      /* input 0 through the sliding window of the two spatial axes
                            (kernel, strides, dilations, pads): the tile plus a halo */
    WL_HALO_ROWS,        /* input 0: the tile's rows (tile axis 0), when input and output
                            agree on that axis (MatMul; Gemm without transA) */
    WL_HALO_BEFORE_AXIS, /* input 0: the tile, on axes before attribute 'axis' that input
                            and output share (LayerNormalization, Softmax) */
    WL_HALO_NOT_AXIS,    /* every input: the tile, on shared axes other than attribute
                            'axis' (Concat) */
    WL_HALO_POINTWISE,   /* every input of the output's dims: the tile itself (elementwise,
                            BatchNormalization) */
} wl_halo_rule;

/* The halo rule of input `input` of op (WL_HALO_WHOLE for an input the
 * op's rule does not cover). */
wl_halo_rule wl_op_halo(const wl_op *op, int input);

/* True when input `input` of op is a table of which the op reads only the
 * rows its output holds (Gather's data): a weight table costs the bytes of
 * the output, not of the table. */
bool wl_op_gathers_rows(const wl_op *op, int input);

/* True when a window op of kind k without attribute kernel_shape takes
 * its kernel from its weight's trailing dims (Conv, ConvTranspose; pools
 * must spell it out). */
bool wl_op_kernel_from_weight(wl_op_kind k);

/* What accelsearch does with an ONNX op type (docs/onnx-ops.md lists every
 * ai.onnx op with it), from most to least modelled. */
typedef enum wl_op_status {
    WL_STATUS_UNSUPPORTED, /* not in WL_OP_LIST: refused, or passed through with a guess
                              when the importer allows unknown ops */
    WL_STATUS_INFERRED,    /* shape inference (and folding) only: views and shape
                              arithmetic, no run-time cost */
    WL_STATUS_MOVED,       /* costed as data movement: a layer whose DRAM traffic is
                              charged, no arithmetic */
    WL_STATUS_VECTOR,      /* costed on the vector unit (wl_op_vector_ops) */
    WL_STATUS_COMPUTE,     /* costed as a loop nest on the MAC array, by the mapper */
} wl_op_status;

/* The status of ONNX op type onnx_op_type (default domain), from the op
 * table: a loop-nest problem means compute, a vector class the vector
 * unit, category move data movement, any other shape rule inference
 * only. */
wl_op_status wl_op_status_of(const char *onnx_op_type);
/* "costed (compute, on the mapper)", ...: the words docs/onnx-ops.md uses. */
const char *wl_op_status_name(wl_op_status s);

/* ------------------------------------------------------------ transforms */

typedef enum wl_precision {
    WL_PREC_FP32,
    WL_PREC_FP16,
    WL_PREC_BF16,
    WL_PREC_INT8,
    WL_PREC_MIXED, /* int8 weights, bf16 activations */
} wl_precision;
/* Parse "fp32", "fp16", "bf16", "int8", "mixed"; false when unknown. */
bool wl_precision_parse(const char *s, wl_precision *out);
const char *wl_precision_name(wl_precision p);

/* Storage precision of every float tensor (integer tensors keep theirs):
 * bits and storage_dtype, weights and activations each at the
 * precision's type (mixed: int8 weights, bfloat16 activations); each is
 * marked precision_chosen, so the MACs take it in that format. */
void wl_set_precision(wl_graph *g, wl_precision p);
/* The storage of wl_set_precision (bits and storage_dtype) without
 * marking it chosen: the widths in memory change, the MACs still take the
 * operands as their own (WL_NUMBER_AS_HARDWARE) -- how the search applies
 * its space's precision, the width its designs store (search/evaluate.c). */
void wl_set_storage_precision(wl_graph *g, wl_precision p);
/* Set the precision of one tensor, by name, and mark it chosen: a float
 * tensor at 16, 32 or 64 bits is an IEEE float of that width, at any
 * other width a quantised (integer) one; an integer tensor stays one. */
as_code wl_set_tensor_bits(wl_graph *g, const char *tensor, int bits, as_status *st);
/* Set the batch dimension (dim 0) of every graph input to batch and
 * re-infer; constant Reshape targets that spell out the old batch follow. */
as_code wl_set_batch(wl_graph *g, int64_t batch, as_status *st);
/* Fold each BatchNormalization whose input is produced by a Conv (or
 * ConvTranspose) used by nothing else into that conv: the conv gains a bias
 * of M elements when it had none; the BN and its four tensors go away. */
as_code wl_fold_batchnorm(wl_graph *g, int *n_folded, as_status *st);
/* Mark elementwise and activation ops whose data input comes from a single
 * producer that they alone consume as fusable into that producer. */
void wl_mark_fusable(wl_graph *g);
/* An op that does work at run time: live, unfolded, not a view, shape
 * arithmetic or an unknown op type (whether or not it runs in an epilogue). */
bool wl_op_does_work(const wl_op *op);
/* The tensor t reshapes: t itself unless a live view (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity, a node that copies its input) made it,
 * else the view's input, followed back through views.  A view moves no
 * data, so epilogue fusion and its costing see through it. */
int32_t wl_view_source(const wl_graph *g, int32_t t);

/* What wl_fuse_epilogues did. */
typedef struct wl_epilogue_stats {
    int n_folded_bn;   /* BatchNormalization ops folded into their conv */
    int n_epilogue;    /* ops attached to a producer's epilogue */
    int n_fused_roots; /* producers that received an epilogue */
} wl_epilogue_stats;

/* Inference lowering as accelerator compilers do it (XLA, TVM): fold
 * BatchNormalization into its conv (wl_fold_batchnorm), then attach to each
 * working op the elementwise ops (wl_op_def.fusable) that consume its
 * output alone, so that they run on the vector unit as that output streams
 * out (transform.c states the rule).  Sets epilogue_of/epilogue_next and
 * the fusable marks; stats may be NULL. */
as_code wl_fuse_epilogues(wl_graph *g, wl_epilogue_stats *stats, as_status *st);
/* The tensor fused op `root` leaves behind: output 0 of its last epilogue
 * op, or its own output 0. */
int32_t wl_fused_output(const wl_graph *g, int32_t root);
/* The root of op o's fused op: epilogue_of, or o itself. */
static inline int32_t wl_fused_root(const wl_graph *g, int32_t o)
{
    return g->ops[o].epilogue_of >= 0 ? g->ops[o].epilogue_of : o;
}
/* Unstructured pruning: weight density of compute op `op_name` (NULL: every
 * compute op with weights) to density in (0, 1]. */
as_code wl_prune_unstructured(wl_graph *g, const char *op_name, double density, as_status *st);
/* Channel pruning: keep ceil(keep * M) output channels of the named conv
 * (NULL: every conv whose output channels can shrink without touching a
 * residual Add or Concat) and propagate the shrunken channel count through
 * per-channel ops to consuming convs / depthwise convs / Gemm. */
as_code wl_prune_channels(wl_graph *g, const char *op_name, double keep, int *n_pruned,
                          as_status *st);

/* ------------------------------------------------- convolution lowering */

/*
 * How a convolution is computed (DLAS's "algorithms" layer).  Lowering
 * rewrites the graph: a lowered conv becomes the ops that an inference
 * library runs for it, so that every later stage (epilogues, network
 * costing, fusion, the mapper) sees their real tensors and traffic.
 * lower.c states each rewrite and its costs.
 */
typedef enum wl_conv_algorithm {
    WL_CONV_DIRECT,     /* the conv as it is: one loop nest (no rewrite) */
    WL_CONV_IM2COL,     /* im2col + GEMM: the input matrix (C*R*S x P*Q per image) is
                           materialised by a data-movement op, then one GEMM */
    WL_CONV_WINOGRAD_2, /* Winograd F(2x2, 3x3): input transform, 16 batched GEMMs over
                           2x2 output tiles, output transform */
    WL_CONV_WINOGRAD_4, /* Winograd F(4x4, 3x3): 36 batched GEMMs over 4x4 tiles */
} wl_conv_algorithm;

/* Parse "direct", "im2col", "winograd2", "winograd4"; false when unknown. */
bool wl_conv_algorithm_parse(const char *s, wl_conv_algorithm *out);
const char *wl_conv_algorithm_name(wl_conv_algorithm a);
/* Whether algorithm a can compute Conv op `op` (direct and im2col: any
 * conv; Winograd: 3x3 kernels, stride 1, dilation 1, one group).  When not,
 * why (when why_size > 0) says which condition fails. */
bool wl_conv_algorithm_applies(const wl_graph *g, int32_t op, wl_conv_algorithm a, char *why,
                               size_t why_size);
/* Lower Conv op `op_name` by algorithm a (NULL: every live Conv a applies
 * to; the others stay direct).  Naming a conv a does not apply to is an
 * error saying why.  Run after wl_fold_batchnorm (a BatchNormalization
 * after a lowered conv is no longer after a Conv) and before
 * wl_fuse_epilogues.  *n_lowered (may be NULL) receives the convs
 * rewritten. */
as_code wl_lower_convs(wl_graph *g, const char *op_name, wl_conv_algorithm a, int *n_lowered,
                       as_status *st);

/* -------------------------------------------------------------- ONNX I/O */

typedef struct wl_onnx_options {
    bool allow_unknown_ops; /* accept unknown op types: cost zero, warn */
    int64_t batch;          /* > 0: value for a symbolic (dim_param) batch dim; default 1 */
    /* Values of named symbolic dims, "NAME=N[,NAME=N...]" ("sequence=128":
     * Hugging Face exports declare input_ids [batch, sequence]); NULL: none.
     * A name no graph input declares, or a malformed entry, is an error. */
    const char *dims;
} wl_onnx_options;

/* Read an ONNX model (opsets 11..17 of the default domain), map its nodes
 * onto ops, infer shapes.  Weight-stripped initializers (dims but no data)
 * load.  Errors name the file, the node (name, op type, index) and the key. */
as_code wl_onnx_load(const char *path, const wl_onnx_options *opt, wl_graph **out, as_status *st);
as_code wl_onnx_load_buffer(const uint8_t *data, size_t size, const char *display_name,
                            const wl_onnx_options *opt, wl_graph **out, as_status *st);
/* Write g as an ONNX model (the source's opset; 17 when it uses
 * LayerNormalization) without weight data: initializers keep name, type
 * and dims, constants keep their values.  A weight written without data
 * has the element type of its storage (storage_dtype, set by
 * wl_set_precision: an int8 model exports INT8 weights), so that reading
 * the file back gives the same weight bytes. */
as_code wl_onnx_save(const wl_graph *g, const char *path, as_status *st);

/* ------------------------------------------------- SCALE-Sim topologies */

/*
 * SCALE-Sim topology CSVs (topology.c; docs/scalesim-import.md): the conv
 * form (Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter
 * Width, Channels, Num Filter, Strides[, stride along the width],) or the
 * GEMM form (Layer, M, N, K,), told apart by the header line.  SCALE-Sim's
 * conventions hold: every row ends with a comma, the IFMAP is already
 * padded and the output size rounds up (the extra row or column becomes
 * zero padding at the end), a name containing "DP" marks a depthwise
 * layer.  One op per row (Conv, or MatMul by a K x N weight), batch 1,
 * int8 storage; a row reads the previous row's output when that is exactly
 * the tensor it reads, else a graph input of its own.  Errors name the
 * file, line and column.
 */
as_code wl_topology_load(const char *path, wl_graph **out, as_status *st);
/* The same from text in memory; display_name stands for the file. */
as_code wl_topology_parse(const char *text, size_t size, const char *display_name, wl_graph **out,
                          as_status *st);
/* Whether path names a topology CSV (ends in ".csv", any letter case). */
bool wl_is_topology_path(const char *path);

/* ------------------------------------------------------------------- zoo */

typedef struct wl_zoo_entry {
    const char *name;        /* "resnet50" */
    const char *description; /* "ResNet-50 (torchvision), 224x224" */
    const char *family;      /* "cnn", "transformer", "gan", "segmentation" */
    /* Published reference figures, 0 when none: torchvision's num_params and
     * GFLOPS (which count MACs) as printed in its model table. */
    int64_t published_params;
    double published_gmacs;
    as_code (*build)(wl_graph *g, as_status *st);
} wl_zoo_entry;

const wl_zoo_entry *wl_zoo_entries(int *count);
const wl_zoo_entry *wl_zoo_find(const char *name);
/* Build the named model, inferred, at batch 1 and fp32. */
as_code wl_zoo_build(const char *name, wl_graph **out, as_status *st);

/* Load a model by zoo name, from a SCALE-Sim topology when it ends in
 * ".csv", or, when it ends in ".onnx" or names a file, from ONNX. */
as_code wl_model_load(const char *model, const wl_onnx_options *opt, wl_graph **out, as_status *st);

#endif
