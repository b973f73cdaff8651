/*
 * bench_search.c -- the mapper on Timeloop's four mapper cases
 * (tests/data/timeloop_mapper/<case>): per case and algorithm, our
 * best EDP against Timeloop's best (its README), the mappings evaluated
 * and the seconds taken on one thread.  The heuristic runs with its own
 * stopping rule; random-pruned with the case's Timeloop settings
 * (search_size valid mappings, victory condition), as Timeloop ran it.
 *
 * Usage: bench_search [threads]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "mapping/mapping.h"

#define MAPPER_DIR AS_TEST_DATA_DIR "/timeloop_mapper/"

static const struct {
    const char *name;
    double timeloop_edp; /* J * cycles, README.md */
} CASES[] = {
    {"eyeriss_like", 305.92},
    {"simba_like", 1253.89},
    {"simple_output_stationary", 8702.50},
    {"simple_weight_stationary", 7000.60},
};

/* Run one search to its end; prints one line. */
static int run(const map_mapper_case *c, map_algorithm algo, int threads, double timeloop_edp)
{
    map_search_options o = c->options;
    o.algorithm = algo;
    o.threads = threads;
    if (algo == MAP_ALGO_HEURISTIC)
        o.search_size = o.victory_condition = 0;
    o.timeout_seconds = 30;
    as_status st = {0};
    map_search *s;
    double t0 = omp_get_wtime();
    if (map_search_init(&s, &c->model.arch, &c->model.problem, &o, &st) != AS_OK) {
        fprintf(stderr, "%s\n", st.message);
        return 1;
    }
    while (map_search_step(s, 100000))
        ;
    double seconds = omp_get_wtime() - t0;
    map_eval e;
    wl_problem mapped;
    bool found = map_search_best(s, NULL, &e, &mapped);
    printf("  %-14s EDP %12.2f  (Timeloop %9.2f, ratio %.3f)  energy %.4g pJ  cycles %lld  "
           "evaluated %lld valid %lld  %.2f s\n",
           algo == MAP_ALGO_HEURISTIC ? "heuristic" : "random-pruned", found ? e.edp_J_cycle : NAN,
           timeloop_edp, found ? e.edp_J_cycle / timeloop_edp : NAN, found ? e.energy_pJ : NAN,
           found ? (long long)e.cycles : -1LL, (long long)map_search_evaluated(s),
           (long long)map_search_valid(s), seconds);
    map_search_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    static map_mapper_case c;
    int failures = 0;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char input[512], ert[512], art[512];
        snprintf(input, sizeof input, MAPPER_DIR "%s/mapper-input.yaml", CASES[i].name);
        snprintf(ert, sizeof ert, MAPPER_DIR "%s/ERT.yaml", CASES[i].name);
        snprintf(art, sizeof art, MAPPER_DIR "%s/ART.yaml", CASES[i].name);
        as_status st = {0};
        if (map_timeloop_load_mapper(input, ert, art, &c, &st) != AS_OK) {
            fprintf(stderr, "%s: %s\n", CASES[i].name, st.message);
            failures++;
            continue;
        }
        printf("%s (search_size %lld, victory %lld), %d thread(s)\n", CASES[i].name,
               (long long)c.options.search_size, (long long)c.options.victory_condition, threads);
        failures += run(&c, MAP_ALGO_HEURISTIC, threads, CASES[i].timeloop_edp);
        failures += run(&c, MAP_ALGO_RANDOM_PRUNED, threads, CASES[i].timeloop_edp);
    }
    return failures != 0;
}
