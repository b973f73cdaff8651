/*
 * zoo.c -- the registry of built-in models (see workload.h): one table of
 * names, descriptions and published figures, pointing at the build
 * functions of zoo_cnn.c and zoo_modern.c.
 *
 * Published figures are torchvision's model-table values (num_params, and
 * GFLOPS, which count multiply-accumulates); 0 where torchvision publishes
 * none.  tests/test_zoo.c checks every model against them.
 */
#include "zoo_builder.h"

#include <stdio.h>
#include <string.h>

/* The row of EfficientNet-B<n> at its input resolution `size`. */
#define EFFICIENTNET(n, size, params, gflops)                                                      \
    {                                                                                              \
        "efficientnet_b" #n, "EfficientNet-B" #n " (torchvision), " #size "x" #size, "cnn",        \
            params, gflops, zoo_efficientnet_b##n                                                  \
    }

static const wl_zoo_entry zoo_entries[] = {
    {"alexnet", "AlexNet (torchvision), 224x224", "cnn", 61100840, 0.714, zoo_alexnet},
    {"vgg11", "VGG-11, no batch norm (torchvision), 224x224", "cnn", 132863336, 7.609, zoo_vgg11},
    {"vgg13", "VGG-13, no batch norm (torchvision), 224x224", "cnn", 133047848, 11.308, zoo_vgg13},
    {"vgg16", "VGG-16, no batch norm (torchvision), 224x224", "cnn", 138357544, 15.47, zoo_vgg16},
    {"vgg19", "VGG-19, no batch norm (torchvision), 224x224", "cnn", 143667240, 19.632, zoo_vgg19},
    {"resnet18", "ResNet-18 (torchvision), 224x224", "cnn", 11689512, 1.814, zoo_resnet18},
    {"resnet34", "ResNet-34 (torchvision), 224x224", "cnn", 21797672, 3.664, zoo_resnet34},
    {"resnet50", "ResNet-50 v1.5 (torchvision), 224x224", "cnn", 25557032, 4.089, zoo_resnet50},
    {"googlenet", "GoogLeNet, eval without aux classifiers (torchvision), 224x224", "cnn", 6624904,
     1.498, zoo_googlenet},
    {"squeezenet1_0", "SqueezeNet 1.0 (torchvision), 224x224", "cnn", 1248424, 0.819,
     zoo_squeezenet1_0},
    {"mobilenet_v1", "MobileNetV1 1.0 (Howard et al. 2017), 224x224", "cnn", 0, 0,
     zoo_mobilenet_v1},
    {"mobilenet_v2", "MobileNetV2 1.0 (torchvision), 224x224", "cnn", 3504872, 0.301,
     zoo_mobilenet_v2},
    EFFICIENTNET(0, 224, 5288548, 0.386),
    EFFICIENTNET(1, 240, 7794184, 0.687),
    EFFICIENTNET(2, 288, 9109994, 1.088),
    EFFICIENTNET(3, 300, 12233232, 1.827),
    EFFICIENTNET(4, 380, 19341616, 4.394),
    EFFICIENTNET(5, 456, 30389784, 10.266),
    EFFICIENTNET(6, 528, 43040704, 19.068),
    EFFICIENTNET(7, 600, 66347960, 37.746),
    {"densenet161", "DenseNet-161 (torchvision), 224x224", "cnn", 28681000, 7.728, zoo_densenet161},
    {"unet", "UNet (Ronneberger et al. 2015, plain torch.nn), 256x256, 2 classes", "segmentation",
     0, 0, zoo_unet},
    {"srgan", "SRGAN generator / SRResNet (Ledig et al. 2017), 4x upscaling of 96x96", "gan", 0, 0,
     zoo_srgan_generator},
    {"vit_b_16", "ViT-B/16 (torchvision), 224x224", "transformer", 86567656, 17.564, zoo_vit_b16},
    {"bert_base", "BERT-base encoder (plain torch.nn), sequence 128", "transformer", 0, 0,
     zoo_bert_base},
    {"gpt2", "GPT-2 small with LM head (Hugging Face), sequence 128", "transformer", 0, 0,
     zoo_gpt2_small},
    {"resnet18_cifar", "ResNet-18 for CIFAR-10 (kuangliu/pytorch-cifar), 32x32", "cnn", 0, 0,
     zoo_resnet18_cifar},
    {"vgg16_cifar", "VGG-16 with batch norm for CIFAR-10 (kuangliu/pytorch-cifar), 32x32", "cnn", 0,
     0, zoo_vgg16_cifar},
    {"mobilenet_v1_cifar", "MobileNetV1 for CIFAR-10 (kuangliu/pytorch-cifar), 32x32", "cnn", 0, 0,
     zoo_mobilenet_v1_cifar},
    {"mobilenet_v2_cifar", "MobileNetV2 for CIFAR-10 (kuangliu/pytorch-cifar), 32x32", "cnn", 0, 0,
     zoo_mobilenet_v2_cifar},
};

const wl_zoo_entry *wl_zoo_entries(int *count)
{
    if (count)
        *count = (int)(sizeof zoo_entries / sizeof zoo_entries[0]);
    return zoo_entries;
}

const wl_zoo_entry *wl_zoo_find(const char *name)
{
    int n;
    const wl_zoo_entry *entries = wl_zoo_entries(&n);
    for (int i = 0; name && i < n; i++)
        if (strcmp(entries[i].name, name) == 0)
            return &entries[i];
    return NULL;
}

/*
 * Build, then infer the whole graph once more: the builder inferred each
 * op as it was added, and this pass adds the topological order and the
 * consumer lists and checks the finished graph.  st may be NULL; a stale
 * failure in it is cleared first, since the builder stops at any failure.
 */
as_code wl_zoo_build(const char *name, wl_graph **out, as_status *st)
{
    as_status local;
    st = as_status_or(st, &local);
    as_status_clear(st);
    *out = NULL;
    const wl_zoo_entry *e = wl_zoo_find(name);
    if (!e)
        return as_fail(st, AS_EINVAL, "no model '%s' in the zoo (see `accelsearch zoo`)",
                       name ? name : "(null)");
    char source[128];
    snprintf(source, sizeof source, "zoo:%s", e->name);
    wl_graph *g = wl_graph_new(e->name, source);
    if (!g)
        return as_fail(st, AS_ENOMEM, "%s: out of memory creating the graph", source);
    g->opset = 13;
    as_code rc = e->build(g, st);
    if (rc == AS_OK)
        rc = wl_graph_infer(g, st);
    if (rc != AS_OK) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return AS_OK;
}
