/*
 * bench_network.c -- whole networks mapped layer by layer
 * (map_network_evaluate): ResNet-50, MobileNetV2, EfficientNet-B0 and
 * BERT-base on the Eyeriss, EdgeTPU, Gemmini and TPU-v3 presets, each
 * model at the precision of the architecture's MACs.  Prints per run the
 * wall time, layers, compute layers, distinct problems, mappings
 * evaluated and the totals.  Goal: ResNet-50 under 10 s on two threads.
 *
 * Usage: bench_network [threads [budget_per_problem]]   (default 2, the search's own)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mapping/mapping.h"

static const char *const MODELS[] = {"resnet50", "mobilenet_v2", "efficientnet_b0", "bert_base"};
static const char *const ARCHS[] = {"eyeriss", "edgetpu", "gemmini", "tpu_v3"};

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Map one model on one architecture and print a row; false on error. */
static bool run(const char *model, const char *arch, int threads, int64_t budget)
{
    as_status st = {0};
    wl_graph *g = NULL;
    arch_spec a;
    if (wl_zoo_build(model, &g, &st) != AS_OK || arch_load(arch, &a, &st) != AS_OK) {
        fprintf(stderr, "bench_network: %s\n", st.message);
        wl_graph_free(g);
        return false;
    }
    /* The widths the design's MACs take, their format as-hardware: fp16
     * on a 16-bit integer design is its width, not an emulated format. */
    wl_set_storage_precision(g, arch_mac_precision(&a));
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = threads;
    o.budget_per_problem = budget;
    map_network_result r;
    double start = wall_seconds();
    as_code code = map_network_evaluate(g, &a, &o, &r, &st);
    double seconds = wall_seconds() - start;
    if (code != AS_OK) {
        fprintf(stderr, "bench_network: %s on %s: %s\n", model, arch, st.message);
        wl_graph_free(g);
        return false;
    }
    int32_t compute = 0;
    for (int32_t i = 0; i < r.n_layers; i++)
        compute += r.layers[i].problem_class >= 0;
    printf("%-16s %-8s %-5s %7.2f %6d %6d %6d %10lld %10.3f %10.3f %10.3g %9.1f %6.3f\n", model,
           arch, wl_precision_name(arch_mac_precision(&a)), seconds, r.n_layers, compute,
           r.n_distinct_problems, (long long)r.mappings_evaluated, r.latency_s * 1e3,
           r.energy_pJ * 1e-9, r.edp_J_cycle, (double)r.dram_bytes / 1e6, r.utilization);
    fflush(stdout);
    map_network_free(&r);
    wl_graph_free(g);
    return true;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int64_t budget = argc > 2 ? atoll(argv[2]) : 0;
    printf("%-16s %-8s %-5s %7s %6s %6s %6s %10s %10s %10s %10s %9s %6s\n", "model", "arch", "prec",
           "wall_s", "layers", "comp", "dist", "mappings", "lat_ms", "energy_mJ", "edp_J_cyc",
           "dram_MB", "util");
    bool ok = true;
    for (size_t m = 0; m < sizeof MODELS / sizeof MODELS[0]; m++)
        for (size_t a = 0; a < sizeof ARCHS / sizeof ARCHS[0]; a++)
            ok &= run(MODELS[m], ARCHS[a], threads, budget);
    return ok ? 0 : 1;
}
