/*
 * zoo_builder.c -- the torch.nn-like builder behind the model zoo (see
 * zoo_builder.h).
 *
 * Every constructor follows one pattern: return -1 at once when an earlier
 * call failed (errors are sticky), create the weights the module owns under
 * its module path, then emit the ONNX nodes torch.onnx.export (opset 13,
 * eval mode) writes for the module, inferring each node's output shape
 * immediately so that the next constructor can read it.
 *
 * Names follow torch: a module op is called by its module path
 * ("layer1.0.conv1"), its weights "<path>.weight" and so on; the extra
 * nodes of a module and the ops of anonymous functions (F.relu, +) are
 * "<path or scope>.<OpType>".  A module that runs twice (ResNet's relu)
 * gives two ops of the same name, as in torch; activations stay unique
 * because they carry the builder's counter: "<op name>:<n>".
 */
#include "zoo_builder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Room for a scope plus a module name and a suffix. */
enum { NAME_BYTES = 2 * ZB_SCOPE_BYTES };

/* Record the first failure, prefixed with the graph's source and the
 * current scope, and return -1 so that callers can `return fail(...)`. */
static int32_t fail(zb *b, const char *fmt, ...) AS_PRINTF(2, 3);
static int32_t fail(zb *b, const char *fmt, ...)
{
    char msg[AS_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    as_fail(b->st, AS_EINVAL, "%s: building '%s': %s", b->g->source,
            b->scope[0] ? b->scope : "(top level)", msg);
    return -1;
}

void zb_init(zb *b, wl_graph *g, as_status *st)
{
    b->g = g;
    b->st = st;
    b->scope[0] = '\0';
    b->counter = 0;
}

/* ---------------------------------------------------------------- names */

/* out = "scope.name", or "name" at top level, or the scope itself when name
 * is NULL or empty.  Fails when the result does not fit. */
static bool qualify(zb *b, const char *name, char out[NAME_BYTES])
{
    const char *leaf = name ? name : "";
    const char *sep = b->scope[0] && leaf[0] ? "." : "";
    int n = snprintf(out, NAME_BYTES, "%s%s%s", b->scope, sep, leaf);
    if (n < 0 || n >= NAME_BYTES) {
        fail(b, "the name of '%s' is longer than %d bytes", leaf, NAME_BYTES - 1);
        return false;
    }
    return true;
}

/* out = "path.suffix" for the weights and extra nodes of a module. */
static bool suffixed(zb *b, const char *path, const char *suffix, char out[NAME_BYTES])
{
    int n = snprintf(out, NAME_BYTES, "%s%s%s", path, path[0] ? "." : "", suffix);
    if (n < 0 || n >= NAME_BYTES) {
        fail(b, "the name '%s.%s' is longer than %d bytes", path, suffix, NAME_BYTES - 1);
        return false;
    }
    return true;
}

/*
 * Module names never contain '.' in torch (it is the path separator), and
 * zb_pop relies on that: it drops everything after the last dot.  So a push
 * of "layer1.0" is refused; push "layer1" then "0".
 */
void zb_push(zb *b, const char *fmt, ...)
{
    if (zb_failed(b))
        return;
    char leaf[ZB_SCOPE_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(leaf, sizeof leaf, fmt, ap);
    va_end(ap);
    if (n <= 0 || n >= (int)sizeof leaf || strchr(leaf, '.')) {
        fail(b,
             "bad module name '%s': it must be non-empty, shorter than %d bytes and "
             "without '.' (push one level at a time)",
             n > 0 ? leaf : "", ZB_SCOPE_BYTES);
        return;
    }
    size_t used = strlen(b->scope);
    int m = snprintf(b->scope + used, sizeof b->scope - used, "%s%s", used ? "." : "", leaf);
    if (m < 0 || (size_t)m >= sizeof b->scope - used) {
        b->scope[used] = '\0';
        fail(b, "module path '%s.%s' is longer than %d bytes", b->scope, leaf, ZB_SCOPE_BYTES - 1);
    }
}

void zb_pop(zb *b)
{
    char *dot = strrchr(b->scope, '.');
    if (dot)
        *dot = '\0';
    else
        b->scope[0] = '\0';
}

int32_t zb_as_module(zb *b, const char *module, zb_fn fn, int32_t x)
{
    if (!module)
        return fn(b, x);
    zb_push(b, "%s", module);
    int32_t y = fn(b, x);
    zb_pop(b);
    return y;
}

/* -------------------------------------------------------------- tensors */

/* True when x is a tensor of this graph with a known shape of at least
 * min_rank dimensions; otherwise fails naming the module `who`. */
static bool check_operand(zb *b, const char *who, int32_t x, int min_rank)
{
    if (zb_failed(b))
        return false;
    if (x < 0 || x >= b->g->n_tensors) {
        fail(b, "'%s': operand %d is not a tensor of the graph", who, (int)x);
        return false;
    }
    const wl_tensor *t = zb_t(b, x);
    if (!t->shape_known) {
        fail(b, "'%s': operand '%s' has an unknown shape", who, t->name);
        return false;
    }
    if (t->rank < min_rank) {
        fail(b, "'%s': operand '%s' has rank %d; at least %d is needed", who, t->name, t->rank,
             min_rank);
        return false;
    }
    return true;
}

/* A float32 initializer called exactly `full_name`. */
static int32_t add_weight(zb *b, const char *full_name, int rank, const int64_t *dims)
{
    if (zb_failed(b))
        return -1;
    return wl_add_tensor(b->g, full_name, WL_TENSOR_WEIGHT, WL_DTYPE_F32, rank, dims, b->st);
}

/* The weight "<path>.<what>" of a module (what = "weight", "bias", ...). */
static int32_t module_weight(zb *b, const char *path, const char *what, int rank,
                             const int64_t *dims)
{
    char full[NAME_BYTES];
    if (zb_failed(b) || !suffixed(b, path, what, full))
        return -1;
    return add_weight(b, full, rank, dims);
}

/*
 * The weight "<path>.weight" of the given shape into in[1] and, when
 * bias_elems > 0, the 1-D "<path>.bias" into in[2]: the parameters of Conv,
 * Gemm, Linear and LayerNorm, created in torch's order (weight first).
 */
static void module_params(zb *b, const char *path, int32_t in[3], int rank,
                          const int64_t *weight_dims, int64_t bias_elems)
{
    in[1] = module_weight(b, path, "weight", rank, weight_dims);
    if (bias_elems > 0)
        in[2] = module_weight(b, path, "bias", 1, &bias_elems);
}

/*
 * A constant of `count` values, rank 0 when scalar (else rank 1), kept in
 * the tensor so that inference can read it (Clip bounds, Reshape targets,
 * Slice starts): `values` are int64_t for an integer dtype (ivalues) and
 * double for a floating one (fvalues).  Named "<scope>.const:<n>" and
 * written by a Constant op, as torch.onnx.export writes such values, so
 * that an exported zoo model reads back as the same graph.
 */
static int32_t add_constant(zb *b, wl_dtype dtype, bool scalar, int count, const void *values)
{
    if (zb_failed(b))
        return -1;
    if (count < 0 || count > WL_MAX_FOLD_ELEMS || (scalar && count != 1) || (count > 0 && !values))
        return fail(b, "a constant of %d values (%s) is not supported", count,
                    values ? "given" : "missing");
    char path[NAME_BYTES], name[NAME_BYTES + 16];
    if (!qualify(b, "const", path))
        return -1;
    snprintf(name, sizeof name, "%s:%d", path, (int)b->counter++);
    int64_t n = count;
    int32_t t = wl_add_tensor(b->g, name, WL_TENSOR_CONSTANT, dtype, scalar ? 0 : 1, &n, b->st);
    if (t < 0)
        return -1;
    /* One layout for both kinds of values; at least one element, so that
     * an empty constant still has known (no) values. */
    _Static_assert(sizeof(double) == sizeof(int64_t), "int64_t and double values share a size");
    void *copy = as_arena_alloc(&b->g->arena, (size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    if (!copy) {
        as_fail(b->st, AS_ENOMEM, "%s: out of memory for constant '%s'", b->g->source, name);
        return -1;
    }
    if (count > 0)
        memcpy(copy, values, (size_t)count * sizeof(int64_t));
    if (wl_dtype_is_float(dtype))
        b->g->tensors[t].fvalues = copy;
    else
        b->g->tensors[t].ivalues = copy;
    int32_t op = wl_add_op(b->g, WL_OP_CONSTANT, path, NULL, 0, NULL, 1, &t, NULL, b->st);
    if (op < 0 || wl_infer_op(b->g, op, b->st) != AS_OK)
        return -1;
    return t;
}

int32_t zb_input(zb *b, const char *name, int rank, const int64_t *dims)
{
    if (zb_failed(b))
        return -1;
    int32_t t = wl_add_tensor(b->g, name, WL_TENSOR_INPUT, WL_DTYPE_F32, rank, dims, b->st);
    if (t >= 0 && !wl_add_graph_input(b->g, t)) {
        as_fail(b->st, AS_ENOMEM, "%s: out of memory adding input '%s'", b->g->source, name);
        return -1;
    }
    return t;
}

int32_t zb_output(zb *b, int32_t x)
{
    if (!check_operand(b, "output", x, 0))
        return -1;
    if (!wl_add_graph_output(b->g, x)) {
        as_fail(b->st, AS_ENOMEM, "%s: out of memory adding output '%s'", b->g->source,
                zb_t(b, x)->name);
        return -1;
    }
    return x;
}

int32_t zb_weight(zb *b, const char *name, int rank, const int64_t *dims)
{
    char full[NAME_BYTES];
    if (zb_failed(b) || !qualify(b, name, full))
        return -1;
    return add_weight(b, full, rank, dims);
}

int32_t zb_const_i64(zb *b, int n, const int64_t *values)
{
    return add_constant(b, WL_DTYPE_I64, false, n, values);
}

int32_t zb_const_f32(zb *b, double value)
{
    return add_constant(b, WL_DTYPE_F32, true, 1, &value);
}

/* ------------------------------------------------------------------ ops */

/*
 * Emit one op called exactly `op_name` with n_out fresh activations
 * "<op_name>:<n>" (element type of the first input, which inference may
 * refine), then infer it.  The single place where ops enter the graph.
 */
static int32_t emit(zb *b, wl_op_kind kind, const char *op_name, int n_in, const int32_t *in,
                    int n_out, int32_t *out, const wl_attrs *attrs)
{
    if (zb_failed(b))
        return -1;
    if (n_out < 1 || n_in < 0)
        return fail(b, "'%s': %d inputs and %d outputs", op_name, n_in, n_out);
    wl_dtype dtype = WL_DTYPE_F32;
    if (n_in > 0 && in[0] >= 0 && in[0] < b->g->n_tensors)
        dtype = b->g->tensors[in[0]].dtype;
    for (int i = 0; i < n_out; i++) {
        char name[NAME_BYTES + 16];
        snprintf(name, sizeof name, "%s:%d", op_name, (int)b->counter++);
        out[i] = wl_add_tensor(b->g, name, WL_TENSOR_ACTIVATION, dtype, 0, NULL, b->st);
        if (out[i] < 0)
            return -1;
    }
    int32_t op = wl_add_op(b->g, kind, op_name, NULL, n_in, in, n_out, out, attrs, b->st);
    if (op < 0 || wl_infer_op(b->g, op, b->st) != AS_OK)
        return -1;
    return 0;
}

/* One-output emit; returns the activation. */
static int32_t emit1(zb *b, wl_op_kind kind, const char *op_name, int n_in, const int32_t *in,
                     const wl_attrs *attrs)
{
    int32_t out = -1;
    return emit(b, kind, op_name, n_in, in, 1, &out, attrs) < 0 ? -1 : out;
}

/* An extra node of module `path`, called "<path>.<OpType>". */
static int32_t emit_part(zb *b, wl_op_kind kind, const char *path, int n_in, const int32_t *in,
                         const wl_attrs *attrs)
{
    char name[NAME_BYTES];
    if (zb_failed(b) || !suffixed(b, path, wl_op_kind_name(kind), name))
        return -1;
    return emit1(b, kind, name, n_in, in, attrs);
}

int32_t zb_op_multi(zb *b, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
                    int n_out, int32_t *out, const wl_attrs *attrs)
{
    char op_name[NAME_BYTES];
    if (zb_failed(b) || !qualify(b, name ? name : wl_op_kind_name(kind), op_name))
        return -1;
    return emit(b, kind, op_name, n_in, in, n_out, out, attrs);
}

int32_t zb_op(zb *b, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
              const wl_attrs *attrs)
{
    int32_t out = -1;
    return zb_op_multi(b, kind, name, n_in, in, 1, &out, attrs) < 0 ? -1 : out;
}

/* ------------------------------------------------------ torch.nn modules */

/* Attributes of a 2-D sliding window (Conv, ConvTranspose, pooling):
 * kernel, strides and symmetric pads per axis, dilation on both axes. */
static wl_attrs window_attrs(wl_op_kind kind, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                             int64_t ph, int64_t pw, int64_t dilation)
{
    wl_attrs a;
    wl_attrs_default(&a, kind);
    a.n_spatial = 2;
    a.kernel_shape[0] = kh;
    a.kernel_shape[1] = kw;
    a.strides[0] = sh;
    a.strides[1] = sw;
    a.dilations[0] = a.dilations[1] = dilation;
    a.pads[0] = a.pads[2] = ph;
    a.pads[1] = a.pads[3] = pw;
    return a;
}

int32_t zb_conv2d_ex(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kh, int64_t kw,
                     int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dilation,
                     int64_t groups, bool bias)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 4))
        return -1;
    int64_t in_ch = zb_dim(b, x, 1);
    if (groups < 1 || out_ch < 1 || in_ch % groups || out_ch % groups)
        return fail(b, "'%s': %lld input and %lld output channels do not split into %lld groups",
                    path, (long long)in_ch, (long long)out_ch, (long long)groups);
    int64_t wdims[4] = {out_ch, in_ch / groups, kh, kw};
    int32_t in[3] = {x, -1, -1};
    module_params(b, path, in, 4, wdims, bias ? out_ch : 0);
    wl_attrs a = window_attrs(WL_OP_CONV, kh, kw, sh, sw, ph, pw, dilation);
    a.group = groups;
    return emit1(b, WL_OP_CONV, path, bias ? 3 : 2, in, &a);
}

int32_t zb_conv2d(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                  int64_t stride, int64_t pad, int64_t groups, bool bias)
{
    return zb_conv2d_ex(b, name, x, out_ch, kernel, kernel, stride, stride, pad, pad, 1, groups,
                        bias);
}

int32_t zb_conv_transpose2d(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                            int64_t stride, int64_t pad, int64_t output_padding, bool bias)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 4))
        return -1;
    int64_t wdims[4] = {zb_dim(b, x, 1), out_ch, kernel, kernel};
    int32_t in[3] = {x, -1, -1};
    module_params(b, path, in, 4, wdims, bias ? out_ch : 0);
    wl_attrs a = window_attrs(WL_OP_CONV_TRANSPOSE, kernel, kernel, stride, stride, pad, pad, 1);
    a.output_padding[0] = a.output_padding[1] = output_padding;
    return emit1(b, WL_OP_CONV_TRANSPOSE, path, bias ? 3 : 2, in, &a);
}

/* nn.BatchNorm2d in eval mode: BatchNormalization(x, gamma, beta, mean,
 * var).  gamma and beta are parameters, the running statistics are not
 * (wl_tensor_is_param tells them apart by position). */
int32_t zb_batchnorm(zb *b, const char *name, int32_t x, double eps)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 2))
        return -1;
    static const char *const names[4] = {"weight", "bias", "running_mean", "running_var"};
    int64_t channels = zb_dim(b, x, 1);
    int32_t in[5] = {x};
    for (int i = 0; i < 4; i++)
        in[i + 1] = module_weight(b, path, names[i], 1, &channels);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_BATCHNORM);
    a.epsilon = eps;
    return emit1(b, WL_OP_BATCHNORM, path, 5, in, &a);
}

/* nn.LayerNorm over the last dimension as one LayerNormalization node (the
 * opset-17 op; opset-13 exports spell it out as ReduceMean/Sub/Pow/...,
 * which costs the same elementwise traffic but hides the module). */
int32_t zb_layernorm(zb *b, const char *name, int32_t x, double eps)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 1))
        return -1;
    int64_t features = zb_dim(b, x, -1);
    int32_t in[3] = {x, -1, -1};
    module_params(b, path, in, 1, &features, features);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_LAYERNORM);
    a.axis = -1;
    a.epsilon = eps;
    return emit1(b, WL_OP_LAYERNORM, path, 3, in, &a);
}

int32_t zb_linear(zb *b, const char *name, int32_t x, int64_t out_features, bool bias)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 1))
        return -1;
    int64_t in_features = zb_dim(b, x, -1);
    if (zb_t(b, x)->rank == 2) {
        /* addmm: Gemm(x, W[out,in], b) with transB = 1. */
        int64_t wdims[2] = {out_features, in_features};
        int32_t in[3] = {x, -1, -1};
        module_params(b, path, in, 2, wdims, bias ? out_features : 0);
        wl_attrs a;
        wl_attrs_default(&a, WL_OP_GEMM);
        a.trans_b = 1;
        return emit1(b, WL_OP_GEMM, path, bias ? 3 : 2, in, &a);
    }
    /* matmul + add: the exporter stores the weight pre-transposed. */
    int64_t wdims[2] = {in_features, out_features};
    int32_t params[3] = {x, -1, -1};
    module_params(b, path, params, 2, wdims, bias ? out_features : 0);
    int32_t y = emit1(b, WL_OP_MATMUL, path, 2, params, NULL);
    if (!bias)
        return y;
    int32_t add_in[2] = {params[2], y};
    return emit_part(b, WL_OP_ADD, path, 2, add_in, NULL);
}

int32_t zb_embedding(zb *b, const char *name, int32_t ids, int64_t num, int64_t dim)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, ids, 0))
        return -1;
    int64_t wdims[2] = {num, dim};
    int32_t in[2] = {module_weight(b, path, "weight", 2, wdims), ids};
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_GATHER);
    a.axis = 0;
    return emit1(b, WL_OP_GATHER, path, 2, in, &a);
}

int32_t zb_prelu(zb *b, const char *name, int32_t x, int64_t num_parameters)
{
    char path[NAME_BYTES];
    if (!qualify(b, name, path) || !check_operand(b, path, x, 1))
        return -1;
    int64_t wdims[3] = {num_parameters, 1, 1};
    int32_t in[2] = {x, module_weight(b, path, "weight", 3, wdims)};
    return emit1(b, WL_OP_PRELU, path, 2, in, NULL);
}

/* A torchvision composite (MobileNetV2, EfficientNet); "same" padding for
 * the odd kernels it is used with. */
int32_t zb_conv_norm_act(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                         int64_t stride, int64_t groups, double bn_eps, zb_fn act)
{
    if (name)
        zb_push(b, "%s", name);
    int32_t y = zb_conv2d(b, "0", x, out_ch, kernel, stride, (kernel - 1) / 2, groups, false);
    y = zb_batchnorm(b, "1", y, bn_eps);
    if (act)
        y = zb_as_module(b, "2", act, y);
    if (name)
        zb_pop(b);
    return y;
}

/* ------------------------------------------------ activations, elementwise */

int32_t zb_unary(zb *b, wl_op_kind kind, int32_t x)
{
    return zb_op(b, kind, NULL, 1, &x, NULL);
}

int32_t zb_relu(zb *b, int32_t x)
{
    return zb_unary(b, WL_OP_RELU, x);
}

int32_t zb_sigmoid(zb *b, int32_t x)
{
    return zb_unary(b, WL_OP_SIGMOID, x);
}

int32_t zb_tanh(zb *b, int32_t x)
{
    return zb_unary(b, WL_OP_TANH, x);
}

/* ReLU6 exports as Clip with its bounds as scalar inputs (opset >= 11). */
int32_t zb_relu6(zb *b, int32_t x)
{
    int32_t in[3] = {x, -1, -1};
    in[1] = zb_const_f32(b, 0.0);
    in[2] = zb_const_f32(b, 6.0);
    return zb_op(b, WL_OP_CLIP, NULL, 3, in, NULL);
}

/* SiLU exports as x * Sigmoid(x). */
int32_t zb_silu(zb *b, int32_t x)
{
    return zb_mul(b, x, zb_sigmoid(b, x));
}

/* GELU (erf form) in the exporter's node order: Div, Erf, Add, Mul, Mul. */
int32_t zb_gelu(zb *b, int32_t x)
{
    int32_t sqrt2 = zb_const_f32(b, sqrt(2.0));
    int32_t erf = zb_unary(b, WL_OP_ERF, zb_binary(b, WL_OP_DIV, x, sqrt2));
    int32_t one = zb_const_f32(b, 1.0);
    int32_t x_times = zb_mul(b, x, zb_add(b, erf, one));
    int32_t half = zb_const_f32(b, 0.5);
    return zb_mul(b, x_times, half);
}

int32_t zb_binary(zb *b, wl_op_kind kind, int32_t x, int32_t y)
{
    int32_t in[2] = {x, y};
    return zb_op(b, kind, NULL, 2, in, NULL);
}

int32_t zb_add(zb *b, int32_t x, int32_t y)
{
    return zb_binary(b, WL_OP_ADD, x, y);
}

int32_t zb_mul(zb *b, int32_t x, int32_t y)
{
    return zb_binary(b, WL_OP_MUL, x, y);
}

int32_t zb_matmul(zb *b, int32_t x, int32_t y)
{
    return zb_binary(b, WL_OP_MATMUL, x, y);
}

/* An op of `kind` on x alone whose only attribute is an axis (Softmax,
 * Flatten). */
static int32_t axis_op(zb *b, wl_op_kind kind, int32_t x, int64_t axis)
{
    wl_attrs a;
    wl_attrs_default(&a, kind);
    a.axis = axis;
    return zb_op(b, kind, NULL, 1, &x, &a);
}

int32_t zb_softmax(zb *b, int32_t x, int64_t axis)
{
    return axis_op(b, WL_OP_SOFTMAX, x, axis);
}

/* -------------------------------------------------------------- pooling */

int32_t zb_maxpool(zb *b, int32_t x, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode)
{
    wl_attrs a = window_attrs(WL_OP_MAX_POOL, kernel, kernel, stride, stride, pad, pad, 1);
    a.ceil_mode = ceil_mode;
    return zb_op(b, WL_OP_MAX_POOL, NULL, 1, &x, &a);
}

/* nn.AvgPool2d counts padded zeros in the mean by default. */
int32_t zb_avgpool(zb *b, int32_t x, int64_t kernel, int64_t stride, int64_t pad)
{
    wl_attrs a = window_attrs(WL_OP_AVERAGE_POOL, kernel, kernel, stride, stride, pad, pad, 1);
    a.count_include_pad = 1;
    return zb_op(b, WL_OP_AVERAGE_POOL, NULL, 1, &x, &a);
}

int32_t zb_global_avgpool(zb *b, int32_t x)
{
    return zb_unary(b, WL_OP_GLOBAL_AVERAGE_POOL, x);
}

/* --------------------------------------------------- shape, data movement */

int32_t zb_flatten(zb *b, int32_t x, int64_t axis)
{
    return axis_op(b, WL_OP_FLATTEN, x, axis);
}

int32_t zb_reshape(zb *b, int32_t x, int rank, const int64_t *dims)
{
    int32_t in[2] = {x, zb_const_i64(b, rank, dims)};
    return zb_op(b, WL_OP_RESHAPE, NULL, 2, in, NULL);
}

int32_t zb_transpose(zb *b, int32_t x, int rank, const int64_t *perm)
{
    if (zb_failed(b))
        return -1;
    if (rank < 0 || rank > WL_MAX_RANK)
        return fail(b, "Transpose: a permutation of %d axes", rank);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_TRANSPOSE);
    a.n_perm = rank;
    for (int i = 0; i < rank; i++)
        a.perm[i] = perm[i];
    return zb_op(b, WL_OP_TRANSPOSE, NULL, 1, &x, &a);
}

int32_t zb_concat(zb *b, int n, const int32_t *xs, int64_t axis)
{
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONCAT);
    a.axis = axis;
    return zb_op(b, WL_OP_CONCAT, NULL, n, xs, &a);
}

/* Slice(x, starts, ends, axes) on one axis, step 1 (the steps input is
 * omitted, as the exporter does for unit steps). */
int32_t zb_slice(zb *b, int32_t x, int64_t axis, int64_t start, int64_t end)
{
    int32_t in[4] = {x, -1, -1, -1};
    in[1] = zb_const_i64(b, 1, &start);
    in[2] = zb_const_i64(b, 1, &end);
    in[3] = zb_const_i64(b, 1, &axis);
    return zb_op(b, WL_OP_SLICE, NULL, 4, in, NULL);
}

/* Constant (zero) padding of a rank-`rank` tensor; pads has 2 * rank
 * values in ONNX order (all begins, then all ends). */
int32_t zb_pad(zb *b, int32_t x, int rank, const int64_t *pads)
{
    if (zb_failed(b))
        return -1;
    if (rank < 1 || rank > WL_MAX_RANK)
        return fail(b, "Pad: pads for a tensor of rank %d", rank);
    int32_t in[2] = {x, zb_const_i64(b, 2 * rank, pads)};
    return zb_op(b, WL_OP_PAD, NULL, 2, in, NULL);
}

/* nn.Upsample(scale_factor, mode="nearest"): Resize(x, roi omitted,
 * scales = [1, 1, s, s]) for an NCHW tensor. */
int32_t zb_resize_nearest(zb *b, int32_t x, double scale)
{
    if (!check_operand(b, "Resize", x, 3))
        return -1;
    int rank = zb_t(b, x)->rank;
    double scales[WL_MAX_RANK];
    for (int i = 0; i < rank; i++)
        scales[i] = i < 2 ? 1.0 : scale;
    int32_t in[3] = {x, -1, -1};
    in[2] = add_constant(b, WL_DTYPE_F32, false, rank, scales);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_RESIZE);
    return zb_op(b, WL_OP_RESIZE, NULL, 3, in, &a);
}

/* nn.PixelShuffle exports as DepthToSpace in CRD mode. */
int32_t zb_depth_to_space(zb *b, int32_t x, int64_t blocksize)
{
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_DEPTH_TO_SPACE);
    a.blocksize = blocksize;
    a.mode_crd = 1;
    return zb_op(b, WL_OP_DEPTH_TO_SPACE, NULL, 1, &x, &a);
}

/* nn.Dropout: torch.onnx.export in eval mode writes no node for it, so
 * neither does the zoo; x passes through. */
int32_t zb_dropout(zb *b, int32_t x)
{
    return zb_failed(b) ? -1 : x;
}
