/*
 * bench_study.c -- how long a study takes: the built-in default study
 * (docs/studies/dlas.yaml, DLAS's CIFAR-10 and ImageNet grids on four
 * presets), or a study file, run by the engine (study_run) with no
 * store.  It prints the cells, the wall time and cells per second, then
 * the study's summary tables.
 *
 * The bar: the default study within 10 minutes on two cores.
 *
 * usage: bench_study [--threads T] [FILE.yaml]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/study.h"

int main(int argc, char **argv)
{
    int threads = 2;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (argv[i][0] != '-')
            path = argv[i];
        else {
            fprintf(stderr, "usage: bench_study [--threads T] [FILE.yaml]\n");
            return 2;
        }
    }
    as_status st;
    as_status_clear(&st);
    study_spec *s = malloc(sizeof *s);
    if (!s || (path ? study_load(path, s, &st) : study_default(s, &st)) != AS_OK) {
        fprintf(stderr, "bench_study: %s\n", s ? st.message : "out of memory");
        return 1;
    }
    int64_t n = study_cell_count(s);
    printf("study %s: %lld cells (", s->name, (long long)n);
    for (int a = 0; a < STUDY_NAXES; a++)
        printf("%s%d %s", a ? " x " : "", s->n[a], study_axis_name((study_axis)a));
    printf("), %d threads\n", threads);

    study_options o;
    study_options_default(&o);
    o.threads = threads;
    study_result r = {0};
    double start = omp_get_wtime();
    if (study_run(s, &o, &r, &st) != AS_OK) {
        fprintf(stderr, "bench_study: %s\n", st.message);
        return 1;
    }
    double wall = omp_get_wtime() - start;
    int64_t valid = 0;
    for (int64_t i = 0; i < r.n_cells; i++)
        valid += r.cells[i].valid;
    printf("wall %.1f s (%.2f min), %.1f cells/s, %lld valid, %lld invalid\n", wall, wall / 60,
           (double)n / wall, (long long)valid, (long long)(n - valid));
    study_summary summary = {0};
    if (study_summarize(&r, &summary, &st) == AS_OK) {
        printf("\n");
        study_write_text(stdout, &r, &summary, &st);
        study_summary_free(&summary);
    }
    study_result_free(&r);
    free(s);
    return 0;
}
