/*
 * bench_cosearch.c -- the hardware engines on the same budget and seeds:
 * hypervolume reached (log10 latency, energy, area; reference one decade
 * above the edge space's Eyeriss-like baseline, so every engine is scored
 * against the same point), the best EDP found, the chosen design's EDP,
 * software rounds computed and wall seconds (two threads).
 *
 * usage: bench_cosearch [budget [sw_budget [model ...]]]
 *        defaults: 48 candidates in batches of 8, 1000 fusion plans per
 *        candidate, ResNet-18 and MobileNetV2, seeds 1, 2, 3.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search/search.h"

enum { THREADS = 2, SEEDS = 3, BATCH = 8 };

/* One run; prints a row and adds its hypervolume to *hv_sum. */
static bool bench_one(const se_space *s, const char *model, se_algo algo, uint64_t seed,
                      int64_t budget, int64_t sw_budget, double *hv_sum)
{
    se_workload w = {.model = model};
    se_run_options o;
    se_run_options_default(&o);
    o.algo = algo;
    o.seed = seed;
    o.budget = budget;
    o.batch = BATCH;
    o.threads = THREADS;
    o.sw_budget = sw_budget;
    se_result r;
    as_status st;
    if (se_run(s, &w, 1, &o, &r, &st) != AS_OK) {
        fprintf(stderr, "bench_cosearch: %s\n", st.message);
        se_result_free(&r);
        return false;
    }
    double hv = r.n_curve ? r.curve_hypervolume[r.n_curve - 1] : 0;
    double best_edp = INFINITY;
    for (int64_t i = 1; i < r.n_candidates; i++)
        if (r.candidates[i].outcome.feasible && r.candidates[i].outcome.metrics.edp_Js < best_edp)
            best_edp = r.candidates[i].outcome.metrics.edp_Js;
    double chosen_edp = r.chosen >= 0 ? r.candidates[r.chosen].outcome.metrics.edp_Js : NAN;
    printf("%-14s %-7s %4llu %10.4f %12.4e %12.4e %8lld %8.1f\n", model, se_algo_name(algo),
           (unsigned long long)seed, hv, best_edp, chosen_edp, (long long)r.evaluations_computed,
           r.seconds);
    fflush(stdout);
    *hv_sum += hv;
    se_result_free(&r);
    return true;
}

int main(int argc, char **argv)
{
    int64_t budget = argc > 1 ? atoll(argv[1]) : 48;
    int64_t sw_budget = argc > 2 ? atoll(argv[2]) : 1000;
    const char *default_models[] = {"resnet18", "mobilenet_v2"};
    const char **models = argc > 3 ? (const char **)argv + 3 : default_models;
    int n_models = argc > 3 ? argc - 3 : 2;
    se_space s;
    as_status st;
    if (se_space_load("edge", &s, &st) != AS_OK) {
        fprintf(stderr, "bench_cosearch: %s\n", st.message);
        return 1;
    }
    printf("edge space, %lld candidates in batches of %d, %lld plans per candidate, %d threads\n",
           (long long)budget, BATCH, (long long)sw_budget, THREADS);
    printf("%-14s %-7s %4s %10s %12s %12s %8s %8s\n", "model", "engine", "seed", "HV", "best EDP",
           "chosen EDP", "rounds", "seconds");
    for (int m = 0; m < n_models; m++) {
        double mean[SE_N_ALGOS] = {0};
        for (int a = 0; a < SE_N_ALGOS; a++)
            for (uint64_t seed = 1; seed <= SEEDS; seed++)
                if (!bench_one(&s, models[m], (se_algo)a, seed, budget, sw_budget, &mean[a]))
                    return 1;
        printf("%s mean hypervolume:", models[m]);
        for (int a = 0; a < SE_N_ALGOS; a++)
            printf("  %s %.4f", se_algo_name((se_algo)a), mean[a] / SEEDS);
        printf("\n\n");
    }
    return 0;
}
