/*
 * bench_import.c -- time to turn each reference ONNX model into an
 * inferred graph with statistics: protobuf decoding, graph construction,
 * shape inference and constant folding (wl_onnx_load), then
 * wl_graph_stats.  Best of RUNS runs, to keep a busy machine's noise out.
 *
 * Usage: bench_import [models-dir]   (default: the reference models)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/workload.h"

#define RUNS 5
#define MAX_MODELS 64

/* Milliseconds on the monotonic clock (not the wall clock, which may jump). */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One load + inference + statistics of path; the elapsed milliseconds,
 * or a negative number with st set on failure.  *n_ops gets the size. */
static double time_one(const char *path, int32_t *n_ops, as_status *st)
{
    double start = now_ms();
    wl_graph *g = NULL;
    wl_stats stats;
    if (wl_onnx_load(path, NULL, &g, st) != AS_OK)
        return -1;
    as_code rc = wl_graph_stats(g, &stats, st);
    double elapsed = now_ms() - start;
    *n_ops = g->n_ops;
    wl_graph_free(g);
    return rc == AS_OK ? elapsed : -1;
}

/* qsort order of file names. */
static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .onnx files of dir, sorted, malloc'd into names; returns how many
 * (at most MAX_MODELS: further files are left out), or -1 when dir cannot
 * be read. */
static int list_models(const char *dir, char *names[MAX_MODELS])
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; n < MAX_MODELS && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".onnx") == 0 && (names[n] = malloc(len + 1)))
            memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    return n;
}

/* One line per model: its op count and best time; exits 1 when the
 * directory cannot be read or a model fails to load. */
int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : AS_TEST_DATA_DIR "/models";
    char *names[MAX_MODELS];
    int n = list_models(dir, names);
    if (n < 0) {
        fprintf(stderr, "bench_import: cannot read %s\n", dir);
        return 1;
    }
    int failures = 0;
    printf("%-32s %7s %10s\n", "model", "nodes", "ms");
    for (int m = 0; m < n; m++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[m]);
        double best = -1;
        int32_t n_ops = 0;
        as_status st;
        as_status_clear(&st);
        for (int run = 0; run < RUNS; run++) {
            double ms = time_one(path, &n_ops, &st);
            if (ms < 0)
                break;
            best = best < 0 || ms < best ? ms : best;
        }
        if (st.code != AS_OK) {
            printf("%-32s  error: %s\n", names[m], st.message);
            failures++;
        } else {
            printf("%-32s %7d %10.3f\n", names[m], (int)n_ops, best);
        }
        free(names[m]);
    }
    return failures ? 1 : 0;
}
