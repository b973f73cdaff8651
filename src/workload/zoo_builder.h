/*
 * zoo_builder.h -- a small builder API for writing models in C (private to
 * the workload module).  It mirrors torch.nn: each constructor records one
 * op (or the few ops torch.onnx.export would write for that module), names
 * weights after the module path as torch does ("layer1.0.conv1.weight"),
 * and runs shape inference on the op at once so that the next constructor
 * knows its input's shape.
 *
 * Errors are sticky: after the first failure every constructor returns -1
 * and leaves the status alone, so a model function can be written as a
 * straight sequence of calls and check b->st once at the end.
 */
#ifndef AS_ZOO_BUILDER_H
#define AS_ZOO_BUILDER_H

#include "workload.h"

#define ZB_SCOPE_BYTES 256

typedef struct zb {
    wl_graph *g;
    as_status *st;
    char scope[ZB_SCOPE_BYTES]; /* current module path, "" or "layer1.0" */
    int32_t counter;            /* makes op and activation names unique */
} zb;

void zb_init(zb *b, wl_graph *g, as_status *st);
/* True once a constructor has failed. */
static inline bool zb_failed(const zb *b)
{
    return b->st->code != AS_OK;
}

/* Enter a submodule: appends ".name" (or "name" at top level) to the scope;
 * zb_pop leaves it.  printf-style. */
void zb_push(zb *b, const char *fmt, ...) AS_PRINTF(2, 3);
void zb_pop(zb *b);

/* A constructor of one input and no module of its own: the activations,
 * zb_global_avgpool, model-local helpers. */
typedef int32_t (*zb_fn)(zb *b, int32_t x);
/* Run fn on x as the parameterless module `module` of the current scope,
 * so that its ops are named "<path>.<OpType>" as torch names that module's;
 * module NULL is the functional form (F.relu), named after the scope. */
int32_t zb_as_module(zb *b, const char *module, zb_fn fn, int32_t x);

/* A float32 graph input of the given shape. */
int32_t zb_input(zb *b, const char *name, int rank, const int64_t *dims);
/* Mark x as a graph output.  Returns x. */
int32_t zb_output(zb *b, int32_t x);
/* A float32 weight "scope.name" of the given shape (no data). */
int32_t zb_weight(zb *b, const char *name, int rank, const int64_t *dims);
/* An int64 constant of n values (shape targets, axes). */
int32_t zb_const_i64(zb *b, int n, const int64_t *values);
/* A float32 scalar constant (rank 0). */
int32_t zb_const_f32(zb *b, double value);

/* The generic constructor: one op of `kind` named after the scope and
 * `name` (NULL: the kind), reading n_in inputs, writing one new activation,
 * inferred at once.  attrs NULL = defaults.  Returns the output tensor. */
int32_t zb_op(zb *b, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
              const wl_attrs *attrs);
/* Same with n_out outputs written to out[]; returns 0 or -1. */
int32_t zb_op_multi(zb *b, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
                    int n_out, int32_t *out, const wl_attrs *attrs);

/* Shape of tensor x (dims valid after inference). */
static inline const wl_tensor *zb_t(const zb *b, int32_t x)
{
    return &b->g->tensors[x];
}
static inline int64_t zb_dim(const zb *b, int32_t x, int i)
{
    const wl_tensor *t = &b->g->tensors[x];
    return t->dims[i < 0 ? t->rank + i : i];
}

/* ---- torch.nn equivalents (module `name` is appended to the scope) ---- */

/* nn.Conv2d(in = x's channels, out_ch, (kh, kw), stride, padding, dilation,
 * groups, bias): weight "name.weight" [out_ch, in/groups, kh, kw]. */
int32_t zb_conv2d(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                  int64_t stride, int64_t pad, int64_t groups, bool bias);
int32_t zb_conv2d_ex(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kh, int64_t kw,
                     int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dilation,
                     int64_t groups, bool bias);
/* nn.ConvTranspose2d: weight [in, out_ch/groups, k, k]. */
int32_t zb_conv_transpose2d(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                            int64_t stride, int64_t pad, int64_t output_padding, bool bias);
/* torch's default eps of nn.BatchNorm2d and nn.LayerNorm. */
#define ZB_NORM_EPS 1e-5
/* nn.BatchNorm2d(C, eps): weight, bias, running_mean, running_var. */
int32_t zb_batchnorm(zb *b, const char *name, int32_t x, double eps);
/* nn.LayerNorm(last dim, eps): weight, bias. */
int32_t zb_layernorm(zb *b, const char *name, int32_t x, double eps);
/* nn.Linear(in = x's last dim, out): Gemm for a rank-2 input (weight
 * [out, in], transB = 1), MatMul (weight [in, out]) + Add (bias) otherwise,
 * as torch.onnx.export writes them. */
int32_t zb_linear(zb *b, const char *name, int32_t x, int64_t out_features, bool bias);
/* nn.Embedding(num, dim) applied to integer ids: Gather on weight [num, dim]. */
int32_t zb_embedding(zb *b, const char *name, int32_t ids, int64_t num, int64_t dim);
/* nn.PReLU(num_parameters): slope weight [num, 1, 1]. */
int32_t zb_prelu(zb *b, const char *name, int32_t x, int64_t num_parameters);
/* torchvision's Conv2dNormActivation as module `name` (NULL: the current
 * scope): Conv2d "0" without bias, padding (kernel - 1) / 2; BatchNorm2d
 * "1" with bn_eps; the activation act as "2" (NULL: none). */
int32_t zb_conv_norm_act(zb *b, const char *name, int32_t x, int64_t out_ch, int64_t kernel,
                         int64_t stride, int64_t groups, double bn_eps, zb_fn act);

/* Activations and elementwise ops (no weights). */
int32_t zb_unary(zb *b, wl_op_kind kind, int32_t x);
int32_t zb_relu(zb *b, int32_t x);
int32_t zb_sigmoid(zb *b, int32_t x);
int32_t zb_tanh(zb *b, int32_t x);
int32_t zb_relu6(zb *b, int32_t x); /* Clip(0, 6) */
int32_t zb_silu(zb *b, int32_t x);  /* x * Sigmoid(x) */
int32_t zb_gelu(zb *b, int32_t x);  /* erf form: x * 0.5 * (1 + Erf(x / sqrt 2)) */
int32_t zb_binary(zb *b, wl_op_kind kind, int32_t x, int32_t y);
int32_t zb_add(zb *b, int32_t x, int32_t y);
int32_t zb_mul(zb *b, int32_t x, int32_t y);
int32_t zb_matmul(zb *b, int32_t x, int32_t y);
int32_t zb_softmax(zb *b, int32_t x, int64_t axis);

/* Pooling. */
int32_t zb_maxpool(zb *b, int32_t x, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode);
int32_t zb_avgpool(zb *b, int32_t x, int64_t kernel, int64_t stride, int64_t pad);
int32_t zb_global_avgpool(zb *b, int32_t x);

/* Shape and data movement. */
int32_t zb_flatten(zb *b, int32_t x, int64_t axis);
int32_t zb_reshape(zb *b, int32_t x, int rank, const int64_t *dims);
int32_t zb_transpose(zb *b, int32_t x, int rank, const int64_t *perm);
int32_t zb_concat(zb *b, int n, const int32_t *xs, int64_t axis);
int32_t zb_slice(zb *b, int32_t x, int64_t axis, int64_t start, int64_t end);
int32_t zb_pad(zb *b, int32_t x, int rank, const int64_t *pads);
int32_t zb_resize_nearest(zb *b, int32_t x, double scale);
int32_t zb_depth_to_space(zb *b, int32_t x, int64_t blocksize); /* PixelShuffle (CRD) */
int32_t zb_dropout(zb *b, int32_t x);

/* ---- the models (zoo_cnn.c, zoo_modern.c); each builds into an empty
 * graph and leaves it inferred ---- */
as_code zoo_alexnet(wl_graph *g, as_status *st);
as_code zoo_vgg11(wl_graph *g, as_status *st);
as_code zoo_vgg13(wl_graph *g, as_status *st);
as_code zoo_vgg16(wl_graph *g, as_status *st);
as_code zoo_vgg19(wl_graph *g, as_status *st);
as_code zoo_resnet18(wl_graph *g, as_status *st);
as_code zoo_resnet34(wl_graph *g, as_status *st);
as_code zoo_resnet50(wl_graph *g, as_status *st);
as_code zoo_googlenet(wl_graph *g, as_status *st);
as_code zoo_squeezenet1_0(wl_graph *g, as_status *st);
as_code zoo_mobilenet_v1(wl_graph *g, as_status *st);
as_code zoo_mobilenet_v2(wl_graph *g, as_status *st);
as_code zoo_densenet161(wl_graph *g, as_status *st);
as_code zoo_resnet18_cifar(wl_graph *g, as_status *st);
as_code zoo_vgg16_cifar(wl_graph *g, as_status *st);
as_code zoo_mobilenet_v1_cifar(wl_graph *g, as_status *st);
as_code zoo_mobilenet_v2_cifar(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b0(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b1(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b2(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b3(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b4(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b5(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b6(wl_graph *g, as_status *st);
as_code zoo_efficientnet_b7(wl_graph *g, as_status *st);
as_code zoo_unet(wl_graph *g, as_status *st);
as_code zoo_srgan_generator(wl_graph *g, as_status *st);
as_code zoo_vit_b16(wl_graph *g, as_status *st);
as_code zoo_bert_base(wl_graph *g, as_status *st);
as_code zoo_gpt2_small(wl_graph *g, as_status *st);

#endif
