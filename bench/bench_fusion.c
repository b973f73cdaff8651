/*
 * bench_fusion.c -- fusion searches against layer by layer: for each model
 * and preset, every algorithm's DRAM traffic, operational intensity, EDP
 * and search time (wall clock, two threads).
 *
 * Members are mapped by random-pruned search of MAPPER_BUDGET mappings per
 * tile problem so that the table stays minutes, not hours; the GA gets
 * GA_BUDGET plan evaluations and the ILP a 30 s limit.
 *
 * usage: bench_fusion [model ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fusion/fusion.h"

enum { MAPPER_BUDGET = 256, GA_BUDGET = 2000, THREADS = 2 };

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run one algorithm to its end; print a row.  Returns false on failure. */
static bool run(fu_evaluator *e, const char *model, const char *arch, fu_algorithm algo,
                const char *algo_name, const fu_plan_cost *base)
{
    fu_search_options o;
    fu_search_options_default(&o);
    o.algorithm = algo;
    o.objective = FU_OBJ_EDP;
    o.threads = THREADS;
    o.budget = GA_BUDGET;
    o.time_limit_seconds = 30;
    as_status st;
    as_status_clear(&st);
    fu_search *s = NULL;
    fu_plan plan = {0};
    fu_plan_cost cost = {0};
    double start = now_seconds();
    bool ok = fu_search_init(&s, e, &o, &st) == AS_OK;
    while (ok && fu_search_step(s, 64))
        ;
    ok = ok && fu_search_best(s, &plan, &cost, &st) == AS_OK;
    double seconds = now_seconds() - start;
    if (!ok)
        fprintf(stderr, "%s/%s/%s: %s\n", model, arch, algo_name, st.message);
    else
        printf("%-16s %-8s %-5s %7.2f %7d %12.1f %8.2f %12.4g %7.3f %7.3f\n", model, arch,
               algo_name, seconds, (int)cost.n_groups, (double)cost.dram_bytes / 1e6,
               cost.op_intensity, cost.edp_J_cycle,
               (double)cost.dram_bytes / (double)base->dram_bytes,
               cost.edp_J_cycle / base->edp_J_cycle);
    fu_plan_cost_free(&cost);
    fu_plan_free(&plan);
    fu_search_free(s);
    return ok;
}

int main(int argc, char **argv)
{
    static const char *const default_models[] = {"resnet18", "mobilenet_v2", "efficientnet_b0",
                                                 "bert_base"};
    static const char *const archs[] = {"eyeriss", "edgetpu", "gemmini"};
    const char *const *models = argc > 1 ? (const char *const *)argv + 1 : default_models;
    int n_models = argc > 1 ? argc - 1 : 4;
    printf("%-16s %-8s %-5s %7s %7s %12s %8s %12s %7s %7s\n", "model", "arch", "algo", "secs",
           "groups", "DRAM MB", "ops/B", "EDP J*cyc", "DRAMx", "EDPx");
    int failures = 0;
    for (int m = 0; m < n_models; m++) {
        for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
            as_status st;
            as_status_clear(&st);
            arch_spec *spec = malloc(sizeof *spec);
            wl_graph *g = NULL;
            fu_evaluator *e = NULL;
            fu_plan base_plan = {0};
            fu_plan_cost base = {0};
            fu_cost_options co;
            fu_cost_options_default(&co);
            co.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
            co.search.threads = THREADS;
            co.budget_per_problem = MAPPER_BUDGET;
            wl_onnx_options onnx = {0};
            if (!spec || arch_load(archs[a], spec, &st) != AS_OK ||
                wl_model_load(models[m], &onnx, &g, &st) != AS_OK ||
                fu_evaluator_new(&e, g, spec, &co, &st) != AS_OK ||
                fu_plan_init(&base_plan, g, &st) != AS_OK ||
                fu_plan_evaluate(e, &base_plan, &base, &st) != AS_OK) {
                fprintf(stderr, "%s/%s: %s\n", models[m], archs[a], st.message);
                failures++;
            } else {
                static const fu_algorithm algos[] = {FU_ALGO_NONE, FU_ALGO_DP, FU_ALGO_GA,
                                                     FU_ALGO_ILP};
                static const char *const names[] = {"none", "dp", "ga", "ilp"};
                for (int k = 0; k < 4; k++)
                    failures += !run(e, models[m], archs[a], algos[k], names[k], &base);
            }
            fu_plan_cost_free(&base);
            fu_plan_free(&base_plan);
            fu_evaluator_free(e);
            wl_graph_free(g);
            free(spec);
            fflush(stdout);
        }
    }
    return failures ? 1 : 0;
}
