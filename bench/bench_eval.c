/*
 * bench_eval.c -- map_evaluate throughput on one core: evaluations per
 * second of the Eyeriss-like ResNet-50 conv2_x 3x3 reference case (the
 * mapping Timeloop's mapper found), the inner loop of a mapping search.
 * Best of RUNS timed runs of at least MIN_SECONDS each.  Goal: >= 100,000/s.
 *
 * Usage: bench_eval [case-dir]   (default: the reference case)
 */
#include <stdio.h>
#include <time.h>

#include "mapping/mapping.h"

#define DEFAULT_CASE AS_TEST_DATA_DIR "/timeloop/eyeriss_like__resnet50_conv2x_3x3_c64m64_56"
#define RUNS 5
#define MIN_SECONDS 0.5

/* Seconds of CPU time used by this process (one core, immune to other load's wall-clock share). */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : DEFAULT_CASE;
    char model[1024], ert[1024], art[1024];
    static map_timeloop_case c;
    static map_eval e;
    as_status st = {0};

    snprintf(model, sizeof model, "%s/model-input.yaml", dir);
    snprintf(ert, sizeof ert, "%s/ERT.yaml", dir);
    snprintf(art, sizeof art, "%s/ART.yaml", dir);
    if (map_timeloop_load(model, ert, art, &c, &st) != AS_OK) {
        fprintf(stderr, "bench_eval: %s\n", st.message);
        return 1;
    }
    map_evaluate(&c.arch, &c.problem, &c.mapping, &e);
    if (e.validity != MAP_VALID) {
        fprintf(stderr, "bench_eval: %s: %s\n", map_validity_name(e.validity), e.reason);
        return 1;
    }
    double best = 0;
    volatile int64_t sink = 0;
    for (int run = 0; run < RUNS; run++) {
        long evals = 0;
        double start = cpu_seconds(), elapsed;
        do {
            for (int i = 0; i < 1000; i++, evals++) {
                map_evaluate(&c.arch, &c.problem, &c.mapping, &e);
                sink += e.cycles;
            }
            elapsed = cpu_seconds() - start;
        } while (elapsed < MIN_SECONDS);
        if (evals / elapsed > best)
            best = evals / elapsed;
    }
    printf("map_evaluate %s: %.0f evaluations/s (%.2f us each; %lld cycles, %.6g pJ)\n", dir, best,
           1e6 / best, (long long)e.cycles, e.energy_pJ);
    return 0;
}
