/*
 * test_power.c -- average power never exceeds peak power: for every preset
 * and every zoo model, the chip's share of map_network_evaluate's energy
 * / latency is at most arch_peak_power_W of the same architecture.  The
 * TDP is the chip's (energy.c): the DRAM devices' share of a DRAM bit is
 * not in it, so it is taken out of the average too -- the DRAM energy
 * counts at interface_pJ_per_bit of every energy_pJ_per_bit.
 *
 * Why a cheap mapper suffices.  arch_peak_power_W is built from the same
 * per-access and per-MAC energies as the cost model, each at the largest
 * rate the cost model can charge it (energy.c states the argument term by
 * term: MACs and array-internal traffic per cycle are bounded by the
 * units, every on-chip level by its port bandwidth, which map_evaluate
 * enforces by stretching cycles, DRAM by its bandwidth, which
 * map_network_evaluate enforces the same way).  The bound therefore holds
 * for every valid mapping, not only for good ones, and a mapper that finds
 * poor mappings quickly tests it as well as one that finds good ones --
 * better, since poor mappings move more data per cycle.  Both mappers run
 * here, with small budgets, so that the whole grid takes seconds.
 *
 * AS_POWER_VERBOSE=1 prints the table (average power, peak power, ratio).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/mapping.h"
#include "truth.h"

/* Mappings evaluated per distinct problem: enough to find valid ones. */
#define POWER_BUDGET 256

static bool verbose(void)
{
    const char *v = getenv("AS_POWER_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* The chip's share of energy_pJ whose DRAM part is dram_pJ: the DRAM
 * interface's fraction of each DRAM bit. */
static double chip_pJ(const arch_spec *a, double energy_pJ, double dram_pJ)
{
    double interface_share = a->dram.energy_pJ_per_bit > 0
                                 ? a->dram.interface_pJ_per_bit / a->dram.energy_pJ_per_bit
                                 : 0;
    return energy_pJ - dram_pJ * (1 - interface_share);
}

/* Average power of g on a with the given mapper; also checks every layer
 * on its own (energy <= peak power x its latency), which is what makes
 * the network bound hold whatever the mix of layers. */
static double average_power_W(const wl_graph *g, const arch_spec *a, map_algorithm algorithm,
                              double peak_W, const char *model, int *failures)
{
    map_network_options o;
    map_network_options_default(&o);
    o.search.algorithm = algorithm;
    o.search.threads = 1;
    o.budget_per_problem = POWER_BUDGET;
    map_network_result r;
    as_status st = {0};
    if (map_network_evaluate(g, a, &o, &r, &st) != AS_OK)
        fail_msg("%s on %s: %s", model, a->name, st.message);
    for (int32_t i = 0; i < r.n_layers; i++) {
        const map_layer_result *l = &r.layers[i];
        double pJ = chip_pJ(a, l->energy_pJ, l->energy_by_component_pJ[MAP_COMP_DRAM]);
        double layer_W = l->cycles > 0 ? pJ * 1e-12 / ((double)l->cycles * a->cycle_seconds) : 0;
        if (!(layer_W > peak_W * (1 + 1e-9)))
            continue;
        if (++*failures <= 20) /* the first ones say enough */
            print_message("%s on %s (%s): layer '%s' averages %.4g W over %lld cycles, "
                          "peak %.4g W\n",
                          model, a->name,
                          algorithm == MAP_ALGO_RANDOM_PRUNED ? "random" : "heuristic",
                          g->ops[l->op].name, layer_W, (long long)l->cycles, peak_W);
    }
    double W =
        chip_pJ(a, r.energy_pJ, r.energy_by_component_pJ[MAP_COMP_DRAM]) * 1e-12 / r.latency_s;
    map_network_free(&r);
    return W;
}

static void test_average_power_within_peak(void **state)
{
    (void)state;
    int n_presets = 0, n_models = 0;
    const arch_preset *presets = arch_presets(&n_presets);
    const wl_zoo_entry *models = wl_zoo_entries(&n_models);
    assert_true(n_presets >= 7);
    assert_true(n_models >= 26);
    int failures = 0;
    for (int m = 0; m < n_models; m++) {
        wl_graph *g = truth_build_zoo(models[m].name);
        for (int p = 0; p < n_presets; p++) {
            arch_spec a;
            presets[p].build(&a);
            double peak_W = arch_peak_power_W(&a);
            assert_true(peak_W > 0);
            double heuristic_W =
                average_power_W(g, &a, MAP_ALGO_HEURISTIC, peak_W, models[m].name, &failures);
            double random_W =
                average_power_W(g, &a, MAP_ALGO_RANDOM_PRUNED, peak_W, models[m].name, &failures);
            if (verbose())
                printf("%-20s %-11s heuristic %9.4g W  random %9.4g W  peak %9.4g W  %.3f\n",
                       models[m].name, a.name, heuristic_W, random_W, peak_W,
                       (heuristic_W > random_W ? heuristic_W : random_W) / peak_W);
            if (!(heuristic_W <= peak_W && random_W <= peak_W) && ++failures <= 20)
                print_message(
                    "%s on %s: average power %.4g W (heuristic) / %.4g W (random) exceeds "
                    "peak %.4g W\n",
                    models[m].name, a.name, heuristic_W, random_W, peak_W);
        }
        wl_graph_free(g);
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_average_power_within_peak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
