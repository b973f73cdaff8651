/*
 * bench_sparse.c -- sparse costing on whole networks (src/mapping/sparse.c,
 * docs/sparse.md): a zoo model weight-pruned to a density
 * (wl_prune_unstructured), at int8 on integer MACs (else the precision of
 * the architecture's MACs),
 * mapped layer by layer on a preset under each named data format
 * (arch_apply_data_format: dense, bitmask, rle, csr).  Prints per format
 * the latency, energy, DRAM bytes and cycles, or why the design refuses
 * the format.
 *
 * Usage: bench_sparse [model [preset [density [budget_per_problem]]]]
 *        (default resnet18 eyeriss 0.1 2000; two threads)
 */
#include <stdio.h>
#include <stdlib.h>

#include "mapping/mapping.h"

/* Map model on preset with data format `format`; false on error. */
static bool run(const char *model, const char *preset, double density, int64_t budget,
                const char *format)
{
    as_status st = {0};
    wl_graph *g = NULL;
    arch_spec a;
    bool built = wl_zoo_build(model, &g, &st) == AS_OK && arch_load(preset, &a, &st) == AS_OK;
    if (built) /* integer MACs run int8 natively (arch_mac_precision would say fp16 for
                  16-bit integer MACs, which they emulate) */
        wl_set_precision(g, a.compute.mac_number == ARCH_NUMBER_INT ? WL_PREC_INT8
                                                                    : arch_mac_precision(&a));
    if (!built || (density < 1 && wl_prune_unstructured(g, NULL, density, &st))) {
        fprintf(stderr, "bench_sparse: %s\n", st.message);
        wl_graph_free(g);
        return false;
    }
    if (arch_apply_data_format(&a, format, &st)) {
        printf("%-8s refused: %s\n", format, st.message);
        wl_graph_free(g);
        return true;
    }
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = 2;
    o.budget_per_problem = budget;
    map_network_result r;
    bool ok = map_network_evaluate(g, &a, &o, &r, &st) == AS_OK;
    if (ok) {
        printf(
            "%-8s latency %10.4f ms  energy %9.4f mJ  DRAM %11lld B  cycles %11lld  weights %s\n",
            format, r.latency_s * 1e3, r.energy_pJ * 1e-9, (long long)r.dram_bytes,
            (long long)r.cycles, r.weights.resident ? "resident" : "streamed");
        map_network_free(&r);
    } else
        fprintf(stderr, "bench_sparse: %s\n", st.message);
    wl_graph_free(g);
    return ok;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "resnet18";
    const char *preset = argc > 2 ? argv[2] : "eyeriss";
    double density = argc > 3 ? atof(argv[3]) : 0.1;
    int64_t budget = argc > 4 ? atoll(argv[4]) : 2000;
    int n;
    const char *const *formats = arch_data_format_names(&n);
    printf("%s on %s, weight density %g, %lld mappings per problem\n", model, preset, density,
           (long long)budget);
    for (int i = 0; i < n; i++)
        if (!run(model, preset, density, budget, formats[i]))
            return 1;
    return 0;
}
