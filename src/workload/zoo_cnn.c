/*
 * zoo_cnn.c -- the convolutional networks of the zoo, written with the
 * builder (zoo_builder.h) as their PyTorch definitions read.
 *
 * Sources: torchvision 0.14 for AlexNet, VGG-11/13/16/19, ResNet-18/34/50,
 * GoogLeNet, SqueezeNet 1.0, MobileNetV2 and DenseNet-161 (parameter counts equal
 * torchvision's num_params and MACs its published GFLOPS); Howard et al.
 * 2017 for MobileNetV1 (1.0, 224); kuangliu/pytorch-cifar for the CIFAR-10
 * variants (3x32x32 input, 10 classes).  Every model is the eval-mode,
 * unfused network at batch 1: BatchNorm stays a node, Dropout writes no
 * node, and ops come in the order torch.onnx.export writes them.
 *
 * Naming: a module with parameters is an op named by its module path
 * ("layer1.0.conv1"); a parameterless module is "<path>.<OpType>"
 * ("layer1.0.relu.Relu", the exporter's "/layer1/layer1.0/relu/Relu"); a
 * functional call (F.relu, +, torch.cat) is "<scope>.<OpType>".
 */
#include "zoo_builder.h"

#include <stdio.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------------------------------------------------- shared parts */

/* Channels of an NCHW activation; 0 once the build has failed (the next
 * constructor then returns at once), so callers need no check. */
static int64_t channels(const zb *b, int32_t x)
{
    return zb_failed(b) ? 0 : zb_dim(b, x, 1);
}

/* Rows (= columns) of a square NCHW activation; 0 once the build failed. */
static int64_t spatial(const zb *b, int32_t x)
{
    return zb_failed(b) ? 0 : zb_dim(b, x, 2);
}

/* Start a model: the builder and its image input "input" [1, 3, size,
 * size], named as in the reference exports. */
static int32_t begin(zb *b, wl_graph *g, as_status *st, int64_t size)
{
    zb_init(b, g, st);
    const int64_t dims[4] = {1, 3, size, size};
    return zb_input(b, "input", 4, dims);
}

/* Finish a model: mark the logits as the output, report the outcome. */
static as_code finish(zb *b, int32_t logits)
{
    zb_output(b, logits);
    return b->st->code;
}

/* A pooling module (MaxPool2d, AvgPool2d) or, when module is NULL, the
 * functional form (F.avg_pool2d). */
static int32_t pool(zb *b, const char *module, wl_op_kind kind, int32_t x, int64_t kernel,
                    int64_t stride, int64_t pad, bool ceil_mode)
{
    if (module)
        zb_push(b, "%s", module);
    int32_t y = kind == WL_OP_MAX_POOL ? zb_maxpool(b, x, kernel, stride, pad, ceil_mode)
                                       : zb_avgpool(b, x, kernel, stride, pad);
    if (module)
        zb_pop(b);
    return y;
}

/*
 * AdaptiveAvgPool2d(out_size) as the exporter writes it: GlobalAveragePool
 * for 1x1, otherwise an AveragePool whose window and stride are size /
 * out_size -- possible only when the size divides, which holds for the
 * resolutions of the zoo (AlexNet 6x6 -> 6x6, VGG 7x7 -> 7x7).
 */
static int32_t adaptive_avgpool(zb *b, const char *module, int32_t x, int64_t out_size)
{
    int64_t size = spatial(b, x);
    if (zb_failed(b))
        return -1;
    if (out_size == 1)
        return zb_as_module(b, module, zb_global_avgpool, x);
    if (out_size < 1 || size % out_size != 0) {
        as_fail(b->st, AS_EINVAL,
                "%s: adaptive average pool '%s' from %lld to %lld is not a plain pooling window",
                b->g->source, module ? module : "", (long long)size, (long long)out_size);
        return -1;
    }
    return pool(b, module, WL_OP_AVERAGE_POOL, x, size / out_size, size / out_size, 0, false);
}

/* A bias-free Conv2d with "same" padding ((kernel - 1) / 2), then its
 * BatchNorm2d with epsilon bn_eps: the conv-bn pair of every modern CNN
 * here. */
static int32_t conv_bn_eps(zb *b, const char *conv, const char *bn, int32_t x, int64_t out_ch,
                           int64_t kernel, int64_t stride, int64_t groups, double bn_eps)
{
    int32_t y = zb_conv2d(b, conv, x, out_ch, kernel, stride, (kernel - 1) / 2, groups, false);
    return zb_batchnorm(b, bn, y, bn_eps);
}

/* The same with torch's default eps, as all but GoogLeNet use it. */
static int32_t conv_bn(zb *b, const char *conv, const char *bn, int32_t x, int64_t out_ch,
                       int64_t kernel, int64_t stride, int64_t groups)
{
    return conv_bn_eps(b, conv, bn, x, out_ch, kernel, stride, groups, ZB_NORM_EPS);
}

/* BatchNorm2d `norm`, then ReLU `relu` (DenseNet's pre-activation order). */
static int32_t bn_relu(zb *b, const char *norm, const char *relu, int32_t x)
{
    return zb_as_module(b, relu, zb_relu, zb_batchnorm(b, norm, x, ZB_NORM_EPS));
}

/* The start of the torchvision heads: adaptive average pool to 1x1 (the
 * module `pool_module`, or functional when NULL), then torch.flatten(x, 1);
 * the caller adds its classifier. */
static int32_t pool_flatten(zb *b, const char *pool_module, int32_t x)
{
    return zb_flatten(b, adaptive_avgpool(b, pool_module, x, 1), 1);
}

/* The pytorch-cifar head: F.avg_pool2d over the whole (square) map,
 * out.view(out.size(0), -1) -- a Reshape to [1, -1] once the exporter has
 * folded the batch -- and the Linear `fc`. */
static int32_t avgpool_view_linear(zb *b, int32_t x, const char *fc, int64_t classes)
{
    const int64_t flat[2] = {1, -1};
    int64_t size = spatial(b, x);
    x = pool(b, NULL, WL_OP_AVERAGE_POOL, x, size, size, 0, false);
    return zb_linear(b, fc, zb_reshape(b, x, 2, flat), classes, true);
}

/* ------------------------------------------------------ nn.Sequential */

/* The layers that appear inside the plain nn.Sequential stacks of AlexNet,
 * VGG and SqueezeNet. */
typedef enum seq_kind {
    SEQ_CONV,     /* Conv2d(out, kernel, stride, pad) with bias */
    SEQ_BN,       /* BatchNorm2d */
    SEQ_RELU,     /* ReLU */
    SEQ_MAXPOOL,  /* MaxPool2d(kernel, stride, pad, ceil_mode) */
    SEQ_AVGPOOL,  /* AvgPool2d(kernel, stride, pad) */
    SEQ_ADAPTIVE, /* AdaptiveAvgPool2d(out) */
    SEQ_DROPOUT,  /* Dropout: no node */
    SEQ_LINEAR,   /* Linear(out) with bias */
    SEQ_FIRE,     /* SqueezeNet Fire(squeeze, out, out): both expand branches have out */
} seq_kind;

typedef struct seq_layer {
    seq_kind kind;
    int64_t out; /* output channels or features; AdaptiveAvgPool2d's size */
    int64_t kernel, stride, pad;
    bool ceil_mode;
    int64_t squeeze; /* Fire's squeeze channels */
} seq_layer;

#define L_CONV(o, k, s, p)                                                                         \
    {                                                                                              \
        .kind = SEQ_CONV, .out = (o), .kernel = (k), .stride = (s), .pad = (p)                     \
    }
#define L_BN                                                                                       \
    {                                                                                              \
        .kind = SEQ_BN                                                                             \
    }
#define L_RELU                                                                                     \
    {                                                                                              \
        .kind = SEQ_RELU                                                                           \
    }
#define L_MAXPOOL(k, s, ceil)                                                                      \
    {                                                                                              \
        .kind = SEQ_MAXPOOL, .kernel = (k), .stride = (s), .ceil_mode = (ceil)                     \
    }
#define L_AVGPOOL(k, s)                                                                            \
    {                                                                                              \
        .kind = SEQ_AVGPOOL, .kernel = (k), .stride = (s)                                          \
    }
#define L_ADAPTIVE(o)                                                                              \
    {                                                                                              \
        .kind = SEQ_ADAPTIVE, .out = (o)                                                           \
    }
#define L_DROPOUT                                                                                  \
    {                                                                                              \
        .kind = SEQ_DROPOUT                                                                        \
    }
#define L_LINEAR(o)                                                                                \
    {                                                                                              \
        .kind = SEQ_LINEAR, .out = (o)                                                             \
    }
#define L_FIRE(sq, e)                                                                              \
    {                                                                                              \
        .kind = SEQ_FIRE, .out = (e), .squeeze = (sq)                                              \
    }

/* SqueezeNet's Fire `module`: squeeze 1x1, then the 1x1 and 3x3 expand
 * branches, concatenated along channels. */
static int32_t fire(zb *b, const char *module, int32_t x, int64_t squeeze, int64_t expand)
{
    zb_push(b, "%s", module);
    int32_t s = zb_conv2d(b, "squeeze", x, squeeze, 1, 1, 0, 1, true);
    s = zb_as_module(b, "squeeze_activation", zb_relu, s);
    int32_t e[2];
    e[0] = zb_conv2d(b, "expand1x1", s, expand, 1, 1, 0, 1, true);
    e[0] = zb_as_module(b, "expand1x1_activation", zb_relu, e[0]);
    e[1] = zb_conv2d(b, "expand3x3", s, expand, 3, 1, 1, 1, true);
    e[1] = zb_as_module(b, "expand3x3_activation", zb_relu, e[1]);
    int32_t y = zb_concat(b, 2, e, 1);
    zb_pop(b);
    return y;
}

/* One layer of a Sequential, as the child `module` ("0", "1", ...). */
static int32_t seq_apply(zb *b, const char *module, const seq_layer *l, int32_t x)
{
    switch (l->kind) {
    case SEQ_CONV:
        return zb_conv2d(b, module, x, l->out, l->kernel, l->stride, l->pad, 1, true);
    case SEQ_BN:
        return zb_batchnorm(b, module, x, ZB_NORM_EPS);
    case SEQ_RELU:
        return zb_as_module(b, module, zb_relu, x);
    case SEQ_MAXPOOL:
        return pool(b, module, WL_OP_MAX_POOL, x, l->kernel, l->stride, l->pad, l->ceil_mode);
    case SEQ_AVGPOOL:
        return pool(b, module, WL_OP_AVERAGE_POOL, x, l->kernel, l->stride, l->pad, false);
    case SEQ_ADAPTIVE:
        return adaptive_avgpool(b, module, x, l->out);
    case SEQ_DROPOUT:
        return zb_dropout(b, x);
    case SEQ_LINEAR:
        return zb_linear(b, module, x, l->out, true);
    case SEQ_FIRE:
        return fire(b, module, x, l->squeeze, l->out);
    }
    return -1;
}

/* nn.Sequential `name` of n layers; children are named by index. */
static int32_t sequential(zb *b, const char *name, int32_t x, const seq_layer *layers, int n)
{
    zb_push(b, "%s", name);
    for (int i = 0; i < n; i++) {
        char index[16];
        snprintf(index, sizeof index, "%d", i);
        x = seq_apply(b, index, &layers[i], x);
    }
    zb_pop(b);
    return x;
}

/* ------------------------------------------------------------- AlexNet */

static const seq_layer alexnet_features[] = {
    L_CONV(64, 11, 4, 2),
    L_RELU,
    L_MAXPOOL(3, 2, false),
    L_CONV(192, 5, 1, 2),
    L_RELU,
    L_MAXPOOL(3, 2, false),
    L_CONV(384, 3, 1, 1),
    L_RELU,
    L_CONV(256, 3, 1, 1),
    L_RELU,
    L_CONV(256, 3, 1, 1),
    L_RELU,
    L_MAXPOOL(3, 2, false),
};
static const seq_layer alexnet_classifier[] = {
    L_DROPOUT, L_LINEAR(4096), L_RELU, L_DROPOUT, L_LINEAR(4096), L_RELU, L_LINEAR(1000),
};
/* VGG's classifier; AlexNet's puts the dropouts before the Linears. */
static const seq_layer vgg_classifier[] = {
    L_LINEAR(4096), L_RELU, L_DROPOUT, L_LINEAR(4096), L_RELU, L_DROPOUT, L_LINEAR(1000),
};

/* The torchvision layout shared by AlexNet and VGG: features, an adaptive
 * average pool to pool_size ("avgpool"), flatten, classifier. */
static as_code features_classifier(wl_graph *g, as_status *st, const seq_layer *features,
                                   int n_features, int64_t pool_size, const seq_layer *classifier,
                                   int n_classifier)
{
    zb b;
    int32_t x = begin(&b, g, st, 224);
    x = sequential(&b, "features", x, features, n_features);
    x = zb_flatten(&b, adaptive_avgpool(&b, "avgpool", x, pool_size), 1);
    return finish(&b, sequential(&b, "classifier", x, classifier, n_classifier));
}

as_code zoo_alexnet(wl_graph *g, as_status *st)
{
    return features_classifier(g, st, alexnet_features, COUNT(alexnet_features), 6,
                               alexnet_classifier, COUNT(alexnet_classifier));
}

/* ---------------------------------------------------------------- VGG */

/*
 * torchvision's VGG configurations (cfgs in torchvision/models/vgg.py):
 * the output channels of the 3x3 convs in order, 0 for a 2x2 max pool.
 * "A" is VGG-11, "B" VGG-13, "D" VGG-16, "E" VGG-19.
 */
enum { VGG_MAX_CONFIG = 21 };
typedef struct vgg_config {
    int n;
    int64_t channels[VGG_MAX_CONFIG];
} vgg_config;

static const vgg_config vgg11_config = {13, {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}};
static const vgg_config vgg13_config = {
    15, {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}};
static const vgg_config vgg16_config = {
    18, {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}};
static const vgg_config vgg19_config = {21, {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                                             512, 512, 512, 512, 0,   512, 512, 512, 512, 0}};
/* Conv (+ BN) + ReLU per conv, one pool per 0, and a trailing pool. */
enum { VGG_MAX_LAYERS = 3 * VGG_MAX_CONFIG + 1 };

/* The `features` Sequential of configuration c into layers[] (returns the
 * count): torchvision's make_layers, with BatchNorm after each conv when
 * batch_norm, and pytorch-cifar's trailing AvgPool2d(1, 1) when
 * cifar_avgpool. */
static int vgg_layers(const vgg_config *c, bool batch_norm, bool cifar_avgpool,
                      seq_layer layers[VGG_MAX_LAYERS])
{
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->channels[i] == 0) {
            layers[n++] = (seq_layer)L_MAXPOOL(2, 2, false);
            continue;
        }
        layers[n++] = (seq_layer)L_CONV(c->channels[i], 3, 1, 1);
        if (batch_norm)
            layers[n++] = (seq_layer)L_BN;
        layers[n++] = (seq_layer)L_RELU;
    }
    if (cifar_avgpool)
        layers[n++] = (seq_layer)L_AVGPOOL(1, 1);
    return n;
}

/* torchvision's VGG without batch norm at 224x224: features of
 * configuration c, avgpool to 7x7, flatten, the three-Linear classifier. */
static as_code vgg(wl_graph *g, as_status *st, const vgg_config *c)
{
    seq_layer features[VGG_MAX_LAYERS];
    int n = vgg_layers(c, false, false, features);
    return features_classifier(g, st, features, n, 7, vgg_classifier, COUNT(vgg_classifier));
}

as_code zoo_vgg11(wl_graph *g, as_status *st)
{
    return vgg(g, st, &vgg11_config);
}

as_code zoo_vgg13(wl_graph *g, as_status *st)
{
    return vgg(g, st, &vgg13_config);
}

as_code zoo_vgg16(wl_graph *g, as_status *st)
{
    return vgg(g, st, &vgg16_config);
}

as_code zoo_vgg19(wl_graph *g, as_status *st)
{
    return vgg(g, st, &vgg19_config);
}

/* pytorch-cifar VGG('VGG16'): BN after each conv, a trailing 1x1 average
 * pool, view, and one Linear(512, 10) "classifier". */
as_code zoo_vgg16_cifar(wl_graph *g, as_status *st)
{
    seq_layer features[VGG_MAX_LAYERS];
    int n = vgg_layers(&vgg16_config, true, true, features);
    const int64_t flat[2] = {1, -1};
    zb b;
    int32_t x = begin(&b, g, st, 32);
    x = zb_reshape(&b, sequential(&b, "features", x, features, n), 2, flat);
    return finish(&b, zb_linear(&b, "classifier", x, 10, true));
}

/* --------------------------------------------------------------- ResNet */

typedef struct resnet_spec {
    bool bottleneck; /* Bottleneck blocks (1x1, 3x3, 1x1, expansion 4), else BasicBlock */
    int blocks[4];   /* blocks per stage, layer1..layer4 */
    /* pytorch-cifar's variant: 3x3 stride-1 stem without max pool at
     * 32x32, functional ReLUs, "shortcut"/"linear" names, avg_pool2d + view
     * head, 10 classes. */
    bool cifar;
} resnet_spec;

/*
 * One residual block in the current scope, torchvision's forward order:
 * conv1, bn1, relu, conv2, bn2 [, relu, conv3, bn3], then the projection
 * shortcut when the shape changes, Add, relu.  Bottlenecks stride their
 * 3x3 conv (torchvision's "ResNet v1.5").
 */
static int32_t resnet_block(zb *b, const resnet_spec *s, int32_t x, int64_t planes, int64_t stride)
{
    static const int64_t basic_kernels[] = {3, 3}, bottleneck_kernels[] = {1, 3, 1};
    const int64_t *kernels = s->bottleneck ? bottleneck_kernels : basic_kernels;
    int n_convs = s->bottleneck ? 3 : 2, strided = s->bottleneck ? 1 : 0;
    int64_t out_ch = s->bottleneck ? 4 * planes : planes;
    const char *relu = s->cifar ? NULL : "relu";

    int32_t y = x;
    for (int i = 0; i < n_convs; i++) {
        char conv[16], bn[16];
        snprintf(conv, sizeof conv, "conv%d", i + 1);
        snprintf(bn, sizeof bn, "bn%d", i + 1);
        y = conv_bn(b, conv, bn, y, i == n_convs - 1 ? out_ch : planes, kernels[i],
                    i == strided ? stride : 1, 1);
        if (i < n_convs - 1)
            y = zb_as_module(b, relu, zb_relu, y);
    }
    int32_t identity = x;
    if (stride != 1 || channels(b, x) != out_ch) {
        zb_push(b, "%s", s->cifar ? "shortcut" : "downsample");
        identity = conv_bn(b, "0", "1", x, out_ch, 1, stride, 1);
        zb_pop(b);
    }
    return zb_as_module(b, relu, zb_relu, zb_add(b, y, identity));
}

static as_code resnet(wl_graph *g, as_status *st, const resnet_spec *s)
{
    zb b;
    int32_t x = begin(&b, g, st, s->cifar ? 32 : 224);
    if (s->cifar) {
        x = zb_relu(&b, conv_bn(&b, "conv1", "bn1", x, 64, 3, 1, 1));
    } else {
        x = zb_as_module(&b, "relu", zb_relu, conv_bn(&b, "conv1", "bn1", x, 64, 7, 2, 1));
        x = pool(&b, "maxpool", WL_OP_MAX_POOL, x, 3, 2, 1, false);
    }
    for (int stage = 0; stage < 4; stage++) {
        zb_push(&b, "layer%d", stage + 1);
        for (int i = 0; i < s->blocks[stage]; i++) {
            zb_push(&b, "%d", i);
            x = resnet_block(&b, s, x, (int64_t)64 << stage, i == 0 && stage > 0 ? 2 : 1);
            zb_pop(&b);
        }
        zb_pop(&b);
    }
    if (s->cifar)
        return finish(&b, avgpool_view_linear(&b, x, "linear", 10));
    return finish(&b, zb_linear(&b, "fc", pool_flatten(&b, "avgpool", x), 1000, true));
}

as_code zoo_resnet18(wl_graph *g, as_status *st)
{
    static const resnet_spec spec = {.bottleneck = false, .blocks = {2, 2, 2, 2}};
    return resnet(g, st, &spec);
}

as_code zoo_resnet34(wl_graph *g, as_status *st)
{
    static const resnet_spec spec = {.bottleneck = false, .blocks = {3, 4, 6, 3}};
    return resnet(g, st, &spec);
}

as_code zoo_resnet50(wl_graph *g, as_status *st)
{
    static const resnet_spec spec = {.bottleneck = true, .blocks = {3, 4, 6, 3}};
    return resnet(g, st, &spec);
}

as_code zoo_resnet18_cifar(wl_graph *g, as_status *st)
{
    static const resnet_spec spec = {.bottleneck = false, .blocks = {2, 2, 2, 2}, .cifar = true};
    return resnet(g, st, &spec);
}

/* ------------------------------------------------------------ GoogLeNet */

/*
 * torchvision's BasicConv2d `module`: bias-free conv with "same" padding,
 * BatchNorm2d with eps 0.001, functional ReLU.
 */
static int32_t basic_conv(zb *b, const char *module, int32_t x, int64_t out_ch, int64_t kernel,
                          int64_t stride)
{
    zb_push(b, "%s", module);
    int32_t y = zb_relu(b, conv_bn_eps(b, "conv", "bn", x, out_ch, kernel, stride, 1, 1e-3));
    zb_pop(b);
    return y;
}

/* One row of GoogLeNet after its stem: an Inception module, or (when
 * pool_kernel > 0) the stride-2 max pool `name` between two stages. */
typedef struct inception_spec {
    const char *name;
    int64_t pool_kernel;
    int64_t ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj;
} inception_spec;

/*
 * An Inception module: four branches run in order and concatenated.  As in
 * torchvision (and its pretrained weights), the "5x5" branch uses a 3x3
 * kernel.
 */
static int32_t inception(zb *b, const inception_spec *s, int32_t x)
{
    int32_t branch[4];
    zb_push(b, "%s", s->name);
    branch[0] = basic_conv(b, "branch1", x, s->ch1x1, 1, 1);
    zb_push(b, "branch2");
    branch[1] = basic_conv(b, "1", basic_conv(b, "0", x, s->ch3x3red, 1, 1), s->ch3x3, 3, 1);
    zb_pop(b);
    zb_push(b, "branch3");
    branch[2] = basic_conv(b, "1", basic_conv(b, "0", x, s->ch5x5red, 1, 1), s->ch5x5, 3, 1);
    zb_pop(b);
    zb_push(b, "branch4");
    branch[3] = pool(b, "0", WL_OP_MAX_POOL, x, 3, 1, 1, true);
    branch[3] = basic_conv(b, "1", branch[3], s->pool_proj, 1, 1);
    zb_pop(b);
    int32_t y = zb_concat(b, 4, branch, 1);
    zb_pop(b);
    return y;
}

static const inception_spec googlenet_stages[] = {
    {"inception3a", 0, 64, 96, 128, 16, 32, 32},
    {"inception3b", 0, 128, 128, 192, 32, 96, 64},
    {"maxpool3", .pool_kernel = 3},
    {"inception4a", 0, 192, 96, 208, 16, 48, 64},
    {"inception4b", 0, 160, 112, 224, 24, 64, 64},
    {"inception4c", 0, 128, 128, 256, 24, 64, 64},
    {"inception4d", 0, 112, 144, 288, 32, 64, 64},
    {"inception4e", 0, 256, 160, 320, 32, 128, 128},
    {"maxpool4", .pool_kernel = 2},
    {"inception5a", 0, 256, 160, 320, 32, 128, 128},
    {"inception5b", 0, 384, 192, 384, 48, 128, 128},
};

/*
 * GoogLeNet as torchvision's pretrained model evaluates it: no auxiliary
 * classifiers (dropped in eval), and without transform_input -- the
 * per-channel re-normalisation the pretrained weights switch on is input
 * preprocessing (Gather, Unsqueeze, Mul, Add, Concat on the 3-channel image: no
 * parameters, no MACs), not part of the network being accelerated.
 */
as_code zoo_googlenet(wl_graph *g, as_status *st)
{
    zb b;
    int32_t x = begin(&b, g, st, 224);
    x = basic_conv(&b, "conv1", x, 64, 7, 2);
    x = pool(&b, "maxpool1", WL_OP_MAX_POOL, x, 3, 2, 0, true);
    x = basic_conv(&b, "conv2", x, 64, 1, 1);
    x = basic_conv(&b, "conv3", x, 192, 3, 1);
    x = pool(&b, "maxpool2", WL_OP_MAX_POOL, x, 3, 2, 0, true);
    for (int i = 0; i < COUNT(googlenet_stages); i++) {
        const inception_spec *s = &googlenet_stages[i];
        if (s->pool_kernel > 0)
            x = pool(&b, s->name, WL_OP_MAX_POOL, x, s->pool_kernel, 2, 0, true);
        else
            x = inception(&b, s, x);
    }
    x = zb_dropout(&b, pool_flatten(&b, "avgpool", x));
    return finish(&b, zb_linear(&b, "fc", x, 1000, true));
}

/* ----------------------------------------------------------- SqueezeNet */

static const seq_layer squeezenet1_0_features[] = {
    L_CONV(96, 7, 2, 0), L_RELU,          L_MAXPOOL(3, 2, true), L_FIRE(16, 64),
    L_FIRE(16, 64),      L_FIRE(32, 128), L_MAXPOOL(3, 2, true), L_FIRE(32, 128),
    L_FIRE(48, 192),     L_FIRE(48, 192), L_FIRE(64, 256),       L_MAXPOOL(3, 2, true),
    L_FIRE(64, 256),
};
static const seq_layer squeezenet_classifier[] = {
    L_DROPOUT,
    L_CONV(1000, 1, 1, 0),
    L_RELU,
    L_ADAPTIVE(1),
};

as_code zoo_squeezenet1_0(wl_graph *g, as_status *st)
{
    zb b;
    int32_t x = begin(&b, g, st, 224);
    x = sequential(&b, "features", x, squeezenet1_0_features, COUNT(squeezenet1_0_features));
    x = sequential(&b, "classifier", x, squeezenet_classifier, COUNT(squeezenet_classifier));
    return finish(&b, zb_flatten(&b, x, 1));
}

/* ---------------------------------------------------------- MobileNetV1 */

/* Depthwise-separable blocks of MobileNetV1: output channels and stride.
 * The paper's table gives the last block stride 2 on a 7x7 map, a typo
 * that every implementation (and its 569M MACs) reads as stride 1. */
static const struct {
    int64_t out_ch, stride;
} mobilenet_v1_blocks[] = {
    {64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2},  {512, 1},
    {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1},
};

/*
 * MobileNetV1 (width 1.0), named as pytorch-cifar's MobileNet: conv1/bn1
 * stem (32 channels, 3x3), layers.i = {conv1 depthwise 3x3, bn1, relu,
 * conv2 pointwise, bn2, relu}, average pool over the final map, "linear".
 * ImageNet: 224x224, stem stride 2, 1000 classes (Howard et al. 2017);
 * CIFAR: 32x32, stem stride 1, 10 classes.
 */
static as_code mobilenet_v1(wl_graph *g, as_status *st, int64_t size, int64_t stem_stride,
                            int64_t classes)
{
    zb b;
    int32_t x = begin(&b, g, st, size);
    x = zb_relu(&b, conv_bn(&b, "conv1", "bn1", x, 32, 3, stem_stride, 1));
    zb_push(&b, "layers");
    for (int i = 0; i < COUNT(mobilenet_v1_blocks); i++) {
        zb_push(&b, "%d", i);
        int64_t in_ch = channels(&b, x);
        x = zb_relu(&b,
                    conv_bn(&b, "conv1", "bn1", x, in_ch, 3, mobilenet_v1_blocks[i].stride, in_ch));
        x = zb_relu(&b, conv_bn(&b, "conv2", "bn2", x, mobilenet_v1_blocks[i].out_ch, 1, 1, 1));
        zb_pop(&b);
    }
    zb_pop(&b);
    return finish(&b, avgpool_view_linear(&b, x, "linear", classes));
}

as_code zoo_mobilenet_v1(wl_graph *g, as_status *st)
{
    return mobilenet_v1(g, st, 224, 2, 1000);
}

as_code zoo_mobilenet_v1_cifar(wl_graph *g, as_status *st)
{
    return mobilenet_v1(g, st, 32, 1, 10);
}

/* ---------------------------------------------------------- MobileNetV2 */

/* Inverted-residual stages (Sandler et al. 2018, table 2): expansion t,
 * output channels c, repeats n, stride s of the first block. */
static const struct {
    int64_t expand, out_ch, repeats, stride;
} mobilenet_v2_stages[] = {
    {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2},  {6, 64, 4, 2},
    {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
};

/*
 * torchvision's InvertedResidual in the current scope: under "conv", an
 * optional 1x1 expansion (Conv2dNormActivation, skipped when expand is 1),
 * the 3x3 depthwise Conv2dNormActivation, the 1x1 linear projection and
 * its BatchNorm; `x + conv(x)` when the shape is kept.
 */
static int32_t inverted_residual(zb *b, int32_t x, int64_t expand, int64_t out_ch, int64_t stride)
{
    int64_t in_ch = channels(b, x), hidden = in_ch * expand;
    int child = 0;
    char conv[16], bn[16];
    int32_t y = x;
    zb_push(b, "conv");
    if (expand != 1) {
        zb_push(b, "%d", child++);
        y = zb_conv_norm_act(b, NULL, y, hidden, 1, 1, 1, ZB_NORM_EPS, zb_relu6);
        zb_pop(b);
    }
    zb_push(b, "%d", child++);
    y = zb_conv_norm_act(b, NULL, y, hidden, 3, stride, hidden, ZB_NORM_EPS, zb_relu6);
    zb_pop(b);
    snprintf(conv, sizeof conv, "%d", child++);
    snprintf(bn, sizeof bn, "%d", child++);
    y = conv_bn(b, conv, bn, y, out_ch, 1, 1, 1);
    zb_pop(b);
    return stride == 1 && in_ch == out_ch ? zb_add(b, x, y) : y;
}

/* torchvision mobilenet_v2 (width 1.0) at 224x224: features.0 stem,
 * features.1-17 inverted residuals, features.18 1x1 to 1280, functional
 * pool, flatten, classifier (Dropout, Linear). */
as_code zoo_mobilenet_v2(wl_graph *g, as_status *st)
{
    zb b;
    int32_t x = begin(&b, g, st, 224);
    int feature = 0;
    zb_push(&b, "features");
    zb_push(&b, "%d", feature++);
    x = zb_conv_norm_act(&b, NULL, x, 32, 3, 2, 1, ZB_NORM_EPS, zb_relu6);
    zb_pop(&b);
    for (int i = 0; i < COUNT(mobilenet_v2_stages); i++) {
        for (int r = 0; r < mobilenet_v2_stages[i].repeats; r++) {
            zb_push(&b, "%d", feature++);
            x = inverted_residual(&b, x, mobilenet_v2_stages[i].expand,
                                  mobilenet_v2_stages[i].out_ch,
                                  r == 0 ? mobilenet_v2_stages[i].stride : 1);
            zb_pop(&b);
        }
    }
    zb_push(&b, "%d", feature++);
    x = zb_conv_norm_act(&b, NULL, x, 1280, 1, 1, 1, ZB_NORM_EPS, zb_relu6);
    zb_pop(&b);
    zb_pop(&b);
    x = zb_dropout(&b, pool_flatten(&b, NULL, x));
    zb_push(&b, "classifier");
    x = zb_linear(&b, "1", x, 1000, true);
    zb_pop(&b);
    return finish(&b, x);
}

/*
 * pytorch-cifar's Block in the current scope: always a 1x1 expansion
 * (conv1/bn1, ReLU), the depthwise conv2/bn2 (ReLU), the projection
 * conv3/bn3; at stride 1 the input is added back, through a 1x1
 * conv-bn "shortcut" when the channels change.
 */
static int32_t cifar_inverted_residual(zb *b, int32_t x, int64_t expand, int64_t out_ch,
                                       int64_t stride)
{
    int64_t in_ch = channels(b, x), planes = in_ch * expand;
    int32_t y = zb_relu(b, conv_bn(b, "conv1", "bn1", x, planes, 1, 1, 1));
    y = zb_relu(b, conv_bn(b, "conv2", "bn2", y, planes, 3, stride, planes));
    y = conv_bn(b, "conv3", "bn3", y, out_ch, 1, 1, 1);
    if (stride != 1)
        return y;
    int32_t shortcut = x;
    if (in_ch != out_ch) {
        zb_push(b, "shortcut");
        shortcut = conv_bn(b, "0", "1", x, out_ch, 1, 1, 1);
        zb_pop(b);
    }
    return zb_add(b, y, shortcut);
}

/* pytorch-cifar MobileNetV2: stride-1 3x3 stem (conv1/bn1), the stages of
 * the paper with the second one at stride 1 (so the 32x32 input ends at
 * 4x4), conv2/bn2 1x1 to 1280, 4x4 average pool, "linear". */
as_code zoo_mobilenet_v2_cifar(wl_graph *g, as_status *st)
{
    zb b;
    int32_t x = begin(&b, g, st, 32);
    x = zb_relu(&b, conv_bn(&b, "conv1", "bn1", x, 32, 3, 1, 1));
    int block = 0;
    zb_push(&b, "layers");
    for (int i = 0; i < COUNT(mobilenet_v2_stages); i++) {
        int64_t stride = i == 1 ? 1 : mobilenet_v2_stages[i].stride;
        for (int r = 0; r < mobilenet_v2_stages[i].repeats; r++) {
            zb_push(&b, "%d", block++);
            x = cifar_inverted_residual(&b, x, mobilenet_v2_stages[i].expand,
                                        mobilenet_v2_stages[i].out_ch, r == 0 ? stride : 1);
            zb_pop(&b);
        }
    }
    zb_pop(&b);
    x = zb_relu(&b, conv_bn(&b, "conv2", "bn2", x, 1280, 1, 1, 1));
    return finish(&b, avgpool_view_linear(&b, x, "linear", 10));
}

/* ------------------------------------------------------------- DenseNet */

enum {
    DENSENET161_GROWTH = 48,    /* channels each dense layer adds */
    DENSENET161_BOTTLENECK = 4, /* bn_size: the 1x1 conv widens to 4 * growth */
    DENSENET161_INIT = 96,      /* stem channels */
    DENSENET_MAX_LAYERS = 36,   /* the longest block */
};
static const int densenet161_blocks[] = {6, 12, 36, 24};

/*
 * A dense layer in the current scope: torch.cat of every earlier feature
 * map (no Concat for the first layer, whose single input needs no copy),
 * then BN-ReLU-conv1x1-BN-ReLU-conv3x3 producing `growth` channels.
 */
static int32_t dense_layer(zb *b, const int32_t *features, int n_features)
{
    int32_t x = n_features > 1 ? zb_concat(b, n_features, features, 1) : features[0];
    x = bn_relu(b, "norm1", "relu1", x);
    x = zb_conv2d(b, "conv1", x, DENSENET161_BOTTLENECK * DENSENET161_GROWTH, 1, 1, 0, 1, false);
    x = bn_relu(b, "norm2", "relu2", x);
    return zb_conv2d(b, "conv2", x, DENSENET161_GROWTH, 3, 1, 1, 1, false);
}

/* A transition in the current scope: BN, ReLU, 1x1 conv halving the
 * channels, 2x2 average pool. */
static int32_t transition(zb *b, int32_t x)
{
    x = bn_relu(b, "norm", "relu", x);
    x = zb_conv2d(b, "conv", x, channels(b, x) / 2, 1, 1, 0, 1, false);
    return pool(b, "pool", WL_OP_AVERAGE_POOL, x, 2, 2, 0, false);
}

/* torchvision densenet161: stem conv0/norm0/relu0/pool0, four dense
 * blocks with transitions between them, norm5, functional ReLU and pool,
 * flatten, "classifier". */
as_code zoo_densenet161(wl_graph *g, as_status *st)
{
    zb b;
    int32_t x = begin(&b, g, st, 224);
    zb_push(&b, "features");
    x = zb_conv2d(&b, "conv0", x, DENSENET161_INIT, 7, 2, 3, 1, false);
    x = bn_relu(&b, "norm0", "relu0", x);
    x = pool(&b, "pool0", WL_OP_MAX_POOL, x, 3, 2, 1, false);
    for (int i = 0; i < COUNT(densenet161_blocks); i++) {
        int32_t features[DENSENET_MAX_LAYERS + 1] = {x};
        zb_push(&b, "denseblock%d", i + 1);
        for (int j = 0; j < densenet161_blocks[i]; j++) {
            zb_push(&b, "denselayer%d", j + 1);
            features[j + 1] = dense_layer(&b, features, j + 1);
            zb_pop(&b);
        }
        x = zb_concat(&b, densenet161_blocks[i] + 1, features, 1);
        zb_pop(&b);
        if (i + 1 < COUNT(densenet161_blocks)) {
            zb_push(&b, "transition%d", i + 1);
            x = transition(&b, x);
            zb_pop(&b);
        }
    }
    x = zb_batchnorm(&b, "norm5", x, ZB_NORM_EPS);
    zb_pop(&b);
    x = pool_flatten(&b, NULL, zb_relu(&b, x));
    return finish(&b, zb_linear(&b, "classifier", x, 1000, true));
}
