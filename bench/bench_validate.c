/*
 * bench_validate.c -- the presets against the silicon they name: for each
 * preset and the models its chip was measured on, our latency, energy and
 * average power per inference beside the published figure, its source and
 * the ratio ours / published, layer by layer (as `accelsearch map`) and
 * for a fused plan (as `accelsearch fuse --algo dp`: groups of layers run
 * tile by tile with their intermediates on chip, as the chips' compilers
 * run them); then, for EfficientNet-B7 on tpu_v3, the
 * share of runtime in depthwise convolutions and the overall MXU
 * utilisation beside FAST's Table 2 and Section 3.3.2, and Eyeriss's DRAM
 * accesses per MAC beside its JSSC abstract.  docs/validation.md keeps the
 * table and the diagnosis of every gap above 2x.
 *
 * What is compared (see SOURCES for each figure's conditions):
 *  - every model runs at the batch of its measurement (per inference =
 *    per batch / batch) and at the precision of the preset's MACs, mapped
 *    by the default (heuristic) mapper with seed 1, as `accelsearch map
 *    --arch A --model M --batch B --precision P --as-hardware` does (the
 *    widths of the MACs' precision, their own format: nothing emulated);
 *  - the fused figure is the plan Optimus's DP finds (fu_search, DP: exact
 *    over contiguous runs of the topological order, deterministic) with the
 *    same mapper options and seed, its default objective (CASCO's energy x
 *    cycles) and weights placement (resident when they fit);
 *  - where a figure covers the convolution layers only (Eyeriss), ours
 *    sums the Conv layers only (fused: the groups holding a Conv layer,
 *    pools fused into them included);
 *  - a published chip power (Eyeriss, Edge TPU) does not include the DRAM:
 *    it is compared with our on-chip power (all energy but DRAM's, over our
 *    latency); the "P_W" column is the whole system's, DRAM included;
 *  - published figures are converted only by physical rules stated in the
 *    note (frames/s to ms per frame, a chip's throughput split over its
 *    cores or chiplets), never scaled to fit.
 *
 * It runs by hand, not in CI: about ten minutes on two shared cores, the
 * fusion searches most of it (each row prints its search's seconds); with
 * a fused_map_budget of 256, half a minute.  Progress goes to stderr when
 * stderr is a terminal.
 *
 * usage: bench_validate [threads [preset|all [fused_map_budget]]]
 *   default 2 threads, every preset, the fused plans' members mapped by the
 *   heuristic mapper (as `accelsearch fuse`); fused_map_budget N > 0 maps
 *   them by random-pruned search of N mappings per tile problem instead (as
 *   `accelsearch fuse --map-budget N`), about a hundred times faster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusion/fusion.h"
#include "mapping/mapping.h"

/* ------------------------------------------------------ published figures */

typedef struct source {
    const char *tag;
    const char *citation;   /* paper, table or figure */
    const char *conditions; /* batch, clock, precision, scope; conversions made */
} source;

static const source SOURCES[] = {
    {"eyeriss-jssc17",
     "Y.-H. Chen, T. Krishna, J. S. Emer, V. Sze, \"Eyeriss: An Energy-Efficient Reconfigurable "
     "Accelerator for Deep Convolutional Neural Networks\", IEEE JSSC 52(1):127-138, 2017, "
     "abstract (measured chip)",
     "convolution layers only; AlexNet 35 frames/s at 278 mW, batch N = 4, 0.0029 DRAM "
     "accesses/MAC; VGG-16 0.7 frames/s at 236 mW, batch N = 3, 0.0035 DRAM accesses/MAC; 65 nm, "
     "16-bit fixed point, 200 MHz core clock (the preset's); chip power, no DRAM.  Converted: ms "
     "per frame = 1000 / (frames/s); energy per frame = power / (frames/s).  The chip ran the "
     "original (Caffe) AlexNet, 227x227 with grouped conv2/4/5; the zoo's is torchvision's "
     "(224x224, no groups)."},
    {"coral-bench",
     "Coral, \"Edge TPU performance benchmarks\", Table 1 (time per inference, ms), column "
     "\"Dev Board with Edge TPU\", https://coral.ai/docs/edgetpu/benchmarks/",
     "batch 1, int8 TensorFlow Lite models, whole model, time to execute the model only (C++ "
     "benchmark; input pre-processing excluded, host-device transfers included); ResNet-50 V1 at "
     "299x299 (the zoo's runs 224x224: 0.56x the MACs); SqueezeNet version not stated (the zoo "
     "has 1.0); Edge TPU clock not stated.  Power: \"4 TOPS using 0.5 W per TOPS (2 W)\" from the "
     "same page is the chip's peak, not a per-model measurement."},
    {"fast-fig9",
     "D. Zhang, S. Huda, E. Songhori, K. Prabhu, Q. Le, A. Goldie, A. Mirhoseini, \"A Full-Stack "
     "Search Technique for Domain Optimized Deep Learning Accelerators\" (FAST), ASPLOS 2022 "
     "(seed 001), table of Figure 9, column \"Modeled TPU-v3\"",
     "EfficientNet-B7: 210 queries/s per chip (2 TensorCores x 2 MXUs of 128x128, bf16), batch 2 "
     "x 64, compute utilisation 0.14; FAST's model of TPU-v3, not a measurement.  Converted: the "
     "preset is the chip of two TensorCores, so ms per inference = 1000 / 210; ours runs batch "
     "2 x 64."},
    {"fast-table2",
     "FAST (as fast-fig9), Table 2 \"EfficientNet-B7 per-op performance as a fraction of total "
     "execution time on TPU-v3\" and Section 3.3.2",
     "a profile of EfficientNet-B7 on TPU-v3 (measured; batch not stated in the text): "
     "DepthwiseConv2dNative 5.00 % of FLOPs and 65.30 % of runtime, Conv2D 94.67 % and 34.20 %, "
     "other 0.33 % and 0.50 %; overall utilisation 14.8 % of peak FLOPS.  Ours: shares of the "
     "summed layer cycles and of the MACs, at the batch of the fast-fig9 row."},
    {"simba-micro19",
     "Y. S. Shao et al., \"Simba: Scaling Deep-Learning Inference with Multi-Chip-Module-Based "
     "Architecture\", MICRO 2019, abstract (measured 36-chiplet package)",
     "ResNet-50, batch 1: 1988 images/s, 0.50 ms latency on 36 chiplets, int8; clock of the "
     "measurement not stated in the abstract.  Converted: the preset is one chiplet, so the "
     "figure compared is the package throughput per chiplet, 36 / 1988 s = 18.1 ms per image "
     "(equal work per chiplet assumed); the 36-chiplet latency itself is 0.50 ms."},
    {"none",
     "no published figure retrieved for this pair in this session (Gemmini: Genc et al., DAC "
     "2021; VTA: Moreau et al., IEEE Micro 39(5), 2019 -- see docs/validation.md)",
     "ours printed for the record; no ratio"},
};

typedef struct validation_case {
    const char *arch;
    const char *model;
    int64_t batch;
    bool conv_only; /* the figure covers the Conv layers only */
    /* Published, per inference; 0 = none.  pub_chip_power: the power is
     * the chip's (compare our on-chip power); pub_power_is_peak: a
     * datasheet peak, not a measurement on this model. */
    double pub_latency_ms;
    double pub_power_W;
    double pub_energy_mJ;
    bool pub_chip_power;
    bool pub_power_is_peak;
    const char *source;
} validation_case;

/* Published figures are converted as the sources above say: frames/s to ms
 * per frame, measured power / frame rate to energy per frame, a chip's
 * throughput split over the cores or chiplets the preset models. */
static const validation_case CASES[] = {
    {.arch = "eyeriss",
     .model = "alexnet",
     .batch = 4,
     .conv_only = true,
     .pub_latency_ms = 1000.0 / 35,
     .pub_power_W = 0.278,
     .pub_energy_mJ = 278.0 / 35,
     .pub_chip_power = true,
     .source = "eyeriss-jssc17"},
    {.arch = "eyeriss",
     .model = "vgg16",
     .batch = 3,
     .conv_only = true,
     .pub_latency_ms = 1000.0 / 0.7,
     .pub_power_W = 0.236,
     .pub_energy_mJ = 236.0 / 0.7,
     .pub_chip_power = true,
     .source = "eyeriss-jssc17"},
    {.arch = "edgetpu",
     .model = "mobilenet_v1",
     .batch = 1,
     .pub_latency_ms = 2.4,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "edgetpu",
     .model = "mobilenet_v2",
     .batch = 1,
     .pub_latency_ms = 2.6,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "edgetpu",
     .model = "googlenet",
     .batch = 1,
     .pub_latency_ms = 4.1,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "edgetpu",
     .model = "resnet50",
     .batch = 1,
     .pub_latency_ms = 56,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "edgetpu",
     .model = "squeezenet1_0",
     .batch = 1,
     .pub_latency_ms = 2.0,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "edgetpu",
     .model = "vgg16",
     .batch = 1,
     .pub_latency_ms = 343,
     .pub_power_W = 2.0,
     .pub_chip_power = true,
     .pub_power_is_peak = true,
     .source = "coral-bench"},
    {.arch = "tpu_v3",
     .model = "efficientnet_b7",
     .batch = 128,
     .pub_latency_ms = 1000.0 / 210.0,
     .source = "fast-fig9"},
    {.arch = "gemmini", .model = "resnet50", .batch = 1, .source = "none"},
    {.arch = "gemmini", .model = "mobilenet_v2", .batch = 1, .source = "none"},
    {.arch = "vta", .model = "resnet18", .batch = 1, .source = "none"},
    {.arch = "simba",
     .model = "resnet50",
     .batch = 1,
     .pub_latency_ms = 36.0 * 1000.0 / 1988,
     .source = "simba-micro19"},
};

/* FAST (seed 001) Table 2, EfficientNet-B7 on TPU-v3: share of FLOPs and
 * of runtime per op type; Section 3.3.2: overall utilisation 14.8 %. */
static const double FAST_DW_FLOP_SHARE = 0.0500, FAST_DW_TIME_SHARE = 0.6530;
static const double FAST_CONV_FLOP_SHARE = 0.9467, FAST_CONV_TIME_SHARE = 0.3420;
static const double FAST_OTHER_FLOP_SHARE = 0.0033, FAST_OTHER_TIME_SHARE = 0.0050;
static const double FAST_UTILIZATION = 0.148;

/* Eyeriss JSSC 2017 abstract: DRAM accesses per MAC, convolution layers. */
static const double EYERISS_DRAM_PER_MAC_ALEXNET = 0.0029, EYERISS_DRAM_PER_MAC_VGG = 0.0035;

/* ------------------------------------------------------------ our side */

/* Wall-clock seconds (for the fusion searches' time). */
static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What one run gives, summed over the layers compared, per batch. */
typedef struct totals {
    int64_t cycles;
    int64_t macs;
    double energy_pJ;
    double dram_pJ;
    int64_t dram_bytes;
} totals;

/* The fused plan of a case: what the fusion search found, over the same
 * layers as the layer-by-layer totals. */
typedef struct fused {
    bool have;
    totals t;
    int32_t n_groups; /* groups summed (the plan's, or those holding a Conv) */
    int32_t n_layers; /* working ops of the plan */
    double seconds;   /* wall time of the search */
    const char *algo; /* the search that found it */
} fused;

/* True when compute op `op` of g is a depthwise convolution: a Conv whose
 * groups each see one input channel (groups == input channels). */
static bool is_depthwise(const wl_graph *g, int32_t op)
{
    if (g->ops[op].kind != WL_OP_CONV)
        return false;
    wl_problem p;
    as_status st = {0};
    if (wl_op_problem(g, op, &p, &st) != AS_OK)
        return false;
    return p.kind == WL_PROBLEM_DEPTHWISE || (p.bound[WL_DIM_G] > 1 && p.bound[WL_DIM_C] == 1);
}

/* Add layer l to t. */
static void add_layer(totals *t, const map_layer_result *l)
{
    t->cycles += l->cycles;
    t->macs += l->macs;
    t->energy_pJ += l->energy_pJ;
    t->dram_pJ += l->energy_by_component_pJ[MAP_COMP_DRAM];
    t->dram_bytes += l->dram_bytes;
}

/* Sum the layers of r: all of them, or the Conv layers only. */
static totals sum_layers(const wl_graph *g, const map_network_result *r, bool conv_only)
{
    totals t = {0};
    for (int32_t i = 0; i < r->n_layers; i++)
        if (!conv_only || g->ops[r->layers[i].op].kind == WL_OP_CONV)
            add_layer(&t, &r->layers[i]);
    return t;
}

/* ------------------------------------------------------------- printing */

/* "%9.3g" of v, or a dash when v is 0 (no figure). */
static void print_figure(double v)
{
    if (v > 0)
        printf(" %9.3g", v);
    else
        printf(" %9s", "-");
}

static void print_header(void)
{
    printf("%-8s %-15s %3s %-5s %6s | %9s %9s %9s %9s %9s %6s | %9s %9s %9s | %7s %7s %7s | %9s "
           "%7s | %s\n",
           "arch", "model", "N", "scope", "GMAC", "lat_ms", "E_mJ", "P_W", "chipP_W", "TDP_W",
           "util", "pub_ms", "pub_W", "pub_mJ", "x_lat", "x_pow", "x_E", "fused_ms", "x_fused",
           "source");
}

/* Ours per inference from totals t of case c on a. */
typedef struct per_inference {
    double lat_ms, e_mJ, power_W, chip_W, util;
    double e_cmp_mJ, p_cmp_W; /* compared with the published: on-chip where it is a chip's */
} per_inference;

static per_inference per_inference_of(const validation_case *c, const arch_spec *a, const totals *t)
{
    per_inference r;
    double n = (double)c->batch;
    double latency_s = (double)t->cycles * a->cycle_seconds;
    double energy_J = t->energy_pJ * 1e-12;
    double chip_J = (t->energy_pJ - t->dram_pJ) * 1e-12;
    r.lat_ms = latency_s * 1e3 / n;
    r.e_mJ = energy_J * 1e3 / n;
    r.power_W = latency_s > 0 ? energy_J / latency_s : 0;
    r.chip_W = latency_s > 0 ? chip_J / latency_s : 0;
    r.util = t->cycles > 0 ? (double)t->macs / (map_peak_macs_per_cycle(a) * (double)t->cycles) : 0;
    r.e_cmp_mJ = (c->pub_chip_power ? chip_J : energy_J) * 1e3 / n;
    r.p_cmp_W = c->pub_chip_power ? r.chip_W : r.power_W;
    return r;
}

/* " %7.3g" of ours / published, or a dash when there is no published
 * figure; `peak` marks a comparison with a datasheet peak. */
static void print_ratio(double ours, double published, bool peak)
{
    if (published > 0 && peak)
        printf(" %6.3gp", ours / published);
    else if (published > 0)
        printf(" %7.3g", ours / published);
    else
        printf(" %7s", "-");
}

/* One row: ours per inference, layer by layer and fused, beside the case's
 * published figures. */
static void print_row(const validation_case *c, const arch_spec *a, const totals *t,
                      const fused *fu)
{
    per_inference r = per_inference_of(c, a, t);
    printf("%-8s %-15s %3lld %-5s %6.3g |", c->arch, c->model, (long long)c->batch,
           c->conv_only ? "conv" : "all", (double)t->macs / (double)c->batch * 1e-9);
    printf(" %9.3g %9.3g %9.3g %9.3g %9.3g %5.1f%% |", r.lat_ms, r.e_mJ, r.power_W, r.chip_W,
           arch_peak_power_W(a), r.util * 100);
    print_figure(c->pub_latency_ms);
    print_figure(c->pub_power_W);
    print_figure(c->pub_energy_mJ);
    printf(" |");
    print_ratio(r.lat_ms, c->pub_latency_ms, false);
    print_ratio(r.p_cmp_W, c->pub_power_W, c->pub_power_is_peak);
    print_ratio(r.e_cmp_mJ, c->pub_energy_mJ, false);
    printf(" |");
    per_inference f = per_inference_of(c, a, &fu->t);
    print_figure(f.lat_ms);
    print_ratio(f.lat_ms, c->pub_latency_ms, false);
    printf(" | %s\n", c->source);
    fflush(stdout);
}

/* One row of the fused-plan table: the plan found for case c on a, per
 * inference, beside the published figures and the layer-by-layer t. */
static void print_fused_row(const validation_case *c, const arch_spec *a, const totals *t,
                            const fused *fu)
{
    per_inference f = per_inference_of(c, a, &fu->t);
    printf("%-8s %-15s %3lld %-5s %4d/%-4d |", c->arch, c->model, (long long)c->batch,
           c->conv_only ? "conv" : "all", (int)fu->n_groups, (int)fu->n_layers);
    printf(" %9.3g %9.3g %9.3g %9.3g %5.1f%% %9.3g %9.3g |", f.lat_ms, f.e_mJ, f.power_W, f.chip_W,
           f.util * 100, (double)fu->t.dram_bytes / (double)c->batch * 1e-6,
           (double)fu->t.cycles / (double)t->cycles);
    print_ratio(f.lat_ms, c->pub_latency_ms, false);
    print_ratio(f.p_cmp_W, c->pub_power_W, c->pub_power_is_peak);
    print_ratio(f.e_cmp_mJ, c->pub_energy_mJ, false);
    printf(" | %-4s %7.1f\n", fu->algo, fu->seconds);
}

static void print_fused_header(int64_t map_budget)
{
    char budget[64] = "";
    if (map_budget > 0)
        snprintf(budget, sizeof budget, " --map-budget %lld", (long long)map_budget);
    printf("\nFused plans (`accelsearch fuse --algo dp --seed 1%s`: Optimus's DP over contiguous "
           "runs of at most 8 layers, exact there, objective CASCO; intermediates on chip, tile "
           "by tile; members mapped by %s), per inference:\n",
           budget, map_budget > 0 ? "random-pruned search" : "the heuristic mapper");
    printf("%-8s %-15s %3s %-5s %9s | %9s %9s %9s %9s %6s %9s %9s | %7s %7s %7s | %-4s %7s\n",
           "arch", "model", "N", "scope", "groups", "lat_ms", "E_mJ", "P_W", "chipP_W", "util",
           "DRAM_MB", "x_layers", "x_lat", "x_pow", "x_E", "algo", "search_s");
}

/* EfficientNet-B7 on tpu_v3 split as FAST's Table 2 splits it. */
typedef struct fast_breakdown {
    bool have;
    int64_t batch;
    double peak_macs_per_cycle;
    double utilization; /* the whole network's (map_network_result) */
    totals depthwise, conv, other, all;
} fast_breakdown;

/* Split r's layers into depthwise convolutions, other convolutions and
 * the rest. */
static void split_fast(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                       int64_t batch, fast_breakdown *out)
{
    memset(out, 0, sizeof *out);
    out->have = true;
    out->batch = batch;
    out->peak_macs_per_cycle = map_peak_macs_per_cycle(a);
    out->utilization = r->utilization;
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        if (is_depthwise(g, l->op))
            add_layer(&out->depthwise, l);
        else if (g->ops[l->op].kind == WL_OP_CONV)
            add_layer(&out->conv, l);
        else
            add_layer(&out->other, l);
        add_layer(&out->all, l);
    }
}

/* One line of the FAST comparison: our runtime and MAC shares of t. */
static void print_share(const char *what, const totals *t, const totals *all, double fast_time,
                        double fast_flops)
{
    printf("%-22s %9.1f%% %9.1f%% %9.2f%% %9.2f%%\n", what,
           100 * (double)t->cycles / (double)all->cycles, 100 * fast_time,
           100 * (double)t->macs / (double)all->macs, 100 * fast_flops);
}

/* EfficientNet-B7 on tpu_v3 against FAST's Table 2: runtime and MAC
 * shares of depthwise convolutions, other convolutions and the rest, and
 * the overall MXU utilisation. */
static void print_fast_breakdown(const fast_breakdown *f, const fused *fu)
{
    const totals *dw = &f->depthwise;
    double dw_util =
        dw->cycles > 0 ? (double)dw->macs / (f->peak_macs_per_cycle * (double)dw->cycles) : 0;
    printf("\nEfficientNet-B7 on tpu_v3, batch %lld, against FAST Table 2 and Sec. 3.3.2 "
           "[fast-table2] (FAST counts the FLOPs of all ops, ours the MACs of compute ops):\n",
           (long long)f->batch);
    printf("%-22s %10s %10s %10s %10s\n", "op type", "ours_time", "FAST_time", "ours_MACs",
           "FAST_FLOPs");
    print_share("depthwise Conv", dw, &f->all, FAST_DW_TIME_SHARE, FAST_DW_FLOP_SHARE);
    print_share("other Conv (Conv2D)", &f->conv, &f->all, FAST_CONV_TIME_SHARE,
                FAST_CONV_FLOP_SHARE);
    print_share("everything else", &f->other, &f->all, FAST_OTHER_TIME_SHARE,
                FAST_OTHER_FLOP_SHARE);
    printf("%-22s %9.2f%% %9.1f%%   (depthwise layers alone: %.3f%%)\n", "MXU utilisation",
           100 * f->utilization, 100 * FAST_UTILIZATION, 100 * dw_util);
    if (fu->have)
        printf("%-22s %9.2f%% %9.1f%%   (the fused plan of the table above: %d groups; its "
               "groups mix op types, so no split)\n",
               "  fused plan",
               100 * (double)fu->t.macs / (f->peak_macs_per_cycle * (double)fu->t.cycles),
               100 * FAST_UTILIZATION, (int)fu->n_groups);
}

/* DRAM accesses (words of the DRAM level) per MAC of t on a. */
static double dram_accesses_per_mac(const arch_spec *a, const totals *t)
{
    int word_bits = a->level[a->n_levels - 1].word_bits;
    return (double)t->dram_bytes * 8 / word_bits / (double)t->macs;
}

/* Eyeriss's DRAM accesses per MAC over the Conv layers of `model`, ours
 * (layer by layer and fused) beside the JSSC abstract's. */
static void print_eyeriss_dram(const char *model, double ours, double ours_fused)
{
    double pub =
        strcmp(model, "alexnet") == 0 ? EYERISS_DRAM_PER_MAC_ALEXNET : EYERISS_DRAM_PER_MAC_VGG;
    printf("  eyeriss %-8s conv layers: DRAM accesses per MAC %.4f (published %.4f, x%.3g); "
           "fused plan %.4f (x%.3g)\n",
           model, ours, pub, ours / pub, ours_fused, ours_fused / pub);
}

/* ----------------------------------------------------------------- runs */

/* Add group k of plan p (cost c, on g) to out when it is in scope: every
 * group, or with conv_only the groups holding a Conv layer (a fused group
 * is costed as a whole; its pools or other members come with it). */
static void add_group(const wl_graph *g, const fu_plan *p, const fu_plan_cost *c, int32_t k,
                      bool conv_only, fused *out)
{
    bool has_conv = false;
    for (int32_t op = 0; op < p->n_ops && !has_conv; op++)
        has_conv = p->group[op] == k && g->ops[op].kind == WL_OP_CONV;
    if (conv_only && !has_conv)
        return;
    const fu_group_cost *gc = &c->groups[k];
    out->t.cycles += gc->cycles;
    out->t.macs += gc->macs;
    out->t.energy_pJ += gc->energy_pJ;
    out->t.dram_pJ += gc->dram_energy_pJ;
    out->t.dram_bytes += gc->dram_bytes;
    out->n_groups++;
}

/* The fused plan of g on a that `accelsearch fuse --algo dp` finds with
 * the mapper options mo (seed, threads; its cache holds the layer-by-layer
 * mappings, which the plan's single-layer groups reuse; with map_budget > 0
 * the members are mapped by random-pruned search of that many mappings per
 * tile problem instead of the heuristic): Optimus's DP over
 * contiguous runs, exact, deterministic, the default objective (CASCO's
 * (off-chip + on-chip energy) x cycles).  Summed over the scope of c into
 * *out.  AS_OK or an error in st. */
static as_code run_fused(const validation_case *c, const wl_graph *g, const arch_spec *a,
                         const map_network_options *mo, int64_t map_budget, fused *out,
                         as_status *st)
{
    fu_cost_options co;
    fu_cost_options_default(&co);
    co.search = mo->search; /* the mapper cache's key: the same options */
    co.shared_mappings = mo->cache;
    co.weights = mo->weights;
    if (map_budget > 0) { /* as `accelsearch fuse --map-budget N` */
        co.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
        co.budget_per_problem = map_budget;
    }
    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = FU_ALGO_DP;
    so.seed = mo->search.seed;
    so.threads = mo->search.threads;
    fu_evaluator *e = NULL;
    fu_search *s = NULL;
    fu_plan plan = {0};
    fu_plan_cost cost = {0};
    double start = now_seconds();
    as_code rc = fu_evaluator_new(&e, g, a, &co, st);
    if (rc == AS_OK)
        rc = fu_search_init(&s, e, &so, st);
    if (rc == AS_OK) {
        while (fu_search_step(s, 64))
            ;
        rc = fu_search_best(s, &plan, &cost, st);
    }
    if (rc == AS_OK && !cost.valid)
        rc = as_fail(st, AS_EINVAL, "fusion DP: no valid plan: %s", cost.reason);
    if (rc == AS_OK) {
        memset(out, 0, sizeof *out);
        out->have = true;
        out->algo = "dp";
        for (int32_t op = 0; op < g->n_ops; op++)
            out->n_layers += fu_op_in_plan(g, op);
        for (int32_t k = 0; k < cost.n_groups; k++)
            add_group(g, &plan, &cost, k, c->conv_only, out);
        out->seconds = now_seconds() - start;
    }
    fu_plan_cost_free(&cost);
    fu_plan_free(&plan);
    fu_search_free(s);
    fu_evaluator_free(e);
    return rc;
}

/* Map case c with `threads` threads, layer by layer and as a fused plan;
 * print its row and keep its totals (per batch) in *out, the fused plan's
 * in *fu and the architecture in *a_out; fill *fast when c is
 * EfficientNet-B7 on tpu_v3.  False on error (printed on stderr). */
static bool run_case(const validation_case *c, int threads, int64_t fused_map_budget, totals *out,
                     fused *fu, arch_spec *a_out, fast_breakdown *fast)
{
    as_status st = {0};
    wl_graph *g = NULL;
    arch_spec a;
    map_network_options o;
    map_network_options_default(&o);
    o.search.seed = 1;
    o.search.threads = threads;
    map_network_result r = {0};
    bool mapped = false;
    /* As `accelsearch map` lowers a model for inference by default: BN
     * folded, elementwise ops in their producer's epilogue. */
    if (map_cache_new(&o.cache, &st) != AS_OK || arch_load(c->arch, &a, &st) != AS_OK ||
        wl_zoo_build(c->model, &g, &st) != AS_OK ||
        (c->batch > 1 && wl_set_batch(g, c->batch, &st) != AS_OK))
        goto failed;
    /* The widths the design's MACs take, their format as-hardware: fp16
     * on a 16-bit integer design is its width, not an emulated format. */
    wl_set_storage_precision(g, arch_mac_precision(&a));
    if (wl_fuse_epilogues(g, NULL, &st) != AS_OK ||
        map_network_evaluate(g, &a, &o, &r, &st) != AS_OK)
        goto failed;
    mapped = true;
    *out = sum_layers(g, &r, c->conv_only);
    *a_out = a;
    if (run_fused(c, g, &a, &o, fused_map_budget, fu, &st) != AS_OK)
        goto failed;
    print_row(c, &a, out, fu);
    if (strcmp(c->arch, "tpu_v3") == 0 && strcmp(c->model, "efficientnet_b7") == 0)
        split_fast(g, &a, &r, c->batch, fast);
    map_network_free(&r);
    wl_graph_free(g);
    map_cache_free(o.cache);
    return true;
failed:
    fprintf(stderr, "bench_validate: %s on %s: %s\n", c->model, c->arch, st.message);
    if (mapped)
        map_network_free(&r);
    wl_graph_free(g);
    map_cache_free(o.cache);
    return false;
}

static void print_sources(void)
{
    printf("\nSources and conditions:\n");
    for (size_t i = 0; i < sizeof SOURCES / sizeof SOURCES[0]; i++)
        printf("[%s] %s.\n    %s\n", SOURCES[i].tag, SOURCES[i].citation, SOURCES[i].conditions);
    printf(
        "\nColumns: N batch; scope the layers summed (conv: Conv layers only); GMAC useful MACs; "
        "ours per inference (per batch / N): lat_ms latency, E_mJ energy (DRAM "
        "included), P_W average power (E / latency), chipP_W the same without the DRAM's "
        "energy, TDP_W the preset's peak power (arch_peak_power_W), util MACs / (peak MACs "
        "per cycle x cycles); pub_* the published figures; x_lat, x_pow, x_E ours / "
        "published (x_pow and x_E use chipP_W and on-chip energy where the published power "
        "is a chip's; 'p': against a datasheet peak, not a measurement); fused_ms, x_fused "
        "the fused plan's latency and its ratio.  Fused table: groups the plan's groups "
        "summed / its working layers; DRAM_MB DRAM traffic per inference; x_layers the plan's "
        "cycles / the layer-by-layer cycles; search_s the search's wall-clock seconds.\n");
}

/* What one case gave: its totals layer by layer and fused. */
typedef struct case_result {
    bool ok;
    totals layers;
    fused fu;
    arch_spec a;
} case_result;

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    const char *only_arch = argc > 2 && strcmp(argv[2], "all") != 0 ? argv[2] : NULL;
    int64_t fused_map_budget = argc > 3 ? atoll(argv[3]) : 0;
    bool progress = isatty(STDERR_FILENO);
    size_t n_cases = sizeof CASES / sizeof CASES[0];
    case_result *res = calloc(n_cases, sizeof *res);
    if (!res) {
        fprintf(stderr, "bench_validate: out of memory\n");
        return 1;
    }
    fast_breakdown fast = {0};
    bool ok = true;
    print_header();
    for (size_t i = 0; i < n_cases; i++) {
        const validation_case *c = &CASES[i];
        if (only_arch && strcmp(c->arch, only_arch) != 0)
            continue;
        if (progress)
            fprintf(stderr, "[%zu/%zu] %s on %s, batch %lld\n", i + 1, n_cases, c->model, c->arch,
                    (long long)c->batch);
        res[i].ok =
            run_case(c, threads, fused_map_budget, &res[i].layers, &res[i].fu, &res[i].a, &fast);
        ok &= res[i].ok;
    }
    print_fused_header(fused_map_budget);
    for (size_t i = 0; i < n_cases; i++)
        if (res[i].ok)
            print_fused_row(&CASES[i], &res[i].a, &res[i].layers, &res[i].fu);
    for (size_t i = 0; fast.have && i < n_cases; i++)
        if (res[i].ok && strcmp(CASES[i].arch, "tpu_v3") == 0 &&
            strcmp(CASES[i].model, "efficientnet_b7") == 0)
            print_fast_breakdown(&fast, &res[i].fu);
    if (!only_arch || strcmp(only_arch, "shidiannao") == 0)
        printf("\nshidiannao: no zoo model matches its published benchmarks (Du et al., ISCA 2015, "
               "ten small vision CNNs); no row.\n");
    bool eyeriss_title = false;
    for (size_t i = 0; i < n_cases; i++) {
        if (!res[i].ok || strcmp(CASES[i].arch, "eyeriss") != 0)
            continue;
        if (!eyeriss_title)
            printf("\nEyeriss DRAM traffic (eyeriss-jssc17):\n");
        eyeriss_title = true;
        print_eyeriss_dram(CASES[i].model, dram_accesses_per_mac(&res[i].a, &res[i].layers),
                           dram_accesses_per_mac(&res[i].a, &res[i].fu.t));
    }
    print_sources();
    free(res);
    return ok ? 0 : 1;
}
