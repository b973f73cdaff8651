/*
 * test_study_analysis.c -- the analysis of a study (study/analysis.c,
 * study/report.c): Spearman and Kendall against hand-computed values, the
 * summary of a small synthetic grid whose latencies are chosen so that
 * every pick, speedup and verdict checked below is worked out by hand,
 * and its text, JSON and CSV forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/study.h"

/* ------------------------------------------------------- rank correlation */

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g", got, want);
}

static void test_rank_monotone_and_reversed(void **state)
{
    (void)state;
    double x[] = {1, 2, 3, 4, 5}, up[] = {2, 4, 6, 8, 100}, down[] = {9, 7, 5, 3, -40};
    assert_near(study_spearman(x, up, 5), 1, 1e-12);
    assert_near(study_kendall(x, up, 5), 1, 1e-12);
    assert_near(study_spearman(x, down, 5), -1, 1e-12);
    assert_near(study_kendall(x, down, 5), -1, 1e-12);
}

/* y = 2 1 4 3 5: sum d^2 = 4, rho = 1 - 6*4/(5*24) = 0.8; two discordant
 * pairs of ten, tau = (8 - 2)/10 = 0.6. */
static void test_rank_hand_computed(void **state)
{
    (void)state;
    double x[] = {1, 2, 3, 4, 5}, y[] = {2, 1, 4, 3, 5};
    assert_near(study_spearman(x, y, 5), 0.8, 1e-12);
    assert_near(study_kendall(x, y, 5), 0.6, 1e-12);
}

/* x = 1 2 2 3 (mean ranks 1 2.5 2.5 4), y = 1 3 2 4: Pearson of the ranks
 * is 4.5 / sqrt(4.5 * 5) = 3/sqrt(10); five concordant pairs, one tied in
 * x: tau-b = 5 / sqrt((6 - 1) * 6) = 5/sqrt(30).  Ties in both samples:
 * x = y = 1 1 2 2 gives 1 for both. */
static void test_rank_ties(void **state)
{
    (void)state;
    double x[] = {1, 2, 2, 3}, y[] = {1, 3, 2, 4};
    assert_near(study_spearman(x, y, 4), 3 / sqrt(10), 1e-12);
    assert_near(study_kendall(x, y, 4), 5 / sqrt(30), 1e-12);
    double a[] = {1, 1, 2, 2};
    assert_near(study_spearman(a, a, 4), 1, 1e-12);
    assert_near(study_kendall(a, a, 4), 1, 1e-12);
}

/* Kendall's tau-b by its definition, pair by pair. */
static double kendall_by_pairs(const double *x, const double *y, int n)
{
    double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double dx = x[j] - x[i], dy = y[j] - y[i];
            tied_x += dx == 0;
            tied_y += dy == 0;
            if (dx != 0 && dy != 0)
                (dx > 0) == (dy > 0) ? concordant++ : discordant++;
        }
    double pairs = (double)n * (n - 1) / 2;
    return (concordant - discordant) / sqrt((pairs - tied_x) * (pairs - tied_y));
}

/* The merge-sort count equals the pair count on samples with many ties
 * in x, in y and in both. */
static void test_kendall_matches_pairs(void **state)
{
    (void)state;
    as_rng rng = as_rng_stream(15, 0, AS_RNG_FROM_FIRST_OUTPUT);
    for (int trial = 0; trial < 20; trial++) {
        int n = 2 + (int)as_rng_below(&rng, 300);
        double x[302], y[302];
        for (int i = 0; i < n; i++) {
            x[i] = (double)as_rng_below(&rng, 1 + trial);
            y[i] = trial % 2 ? x[i] + (double)as_rng_below(&rng, 5) : (double)as_rng_below(&rng, 7);
        }
        double want = kendall_by_pairs(x, y, n), got = study_kendall(x, y, n);
        if (isnan(want))
            assert_true(isnan(got));
        else
            assert_near(got, want, 1e-12);
    }
}

static void test_rank_undefined(void **state)
{
    (void)state;
    double x[] = {1, 2, 3}, flat[] = {7, 7, 7};
    assert_true(isnan(study_spearman(x, flat, 3)));
    assert_true(isnan(study_kendall(x, flat, 3)));
    assert_true(isnan(study_spearman(flat, x, 3)));
    assert_true(isnan(study_kendall(flat, x, 3)));
    assert_true(isnan(study_spearman(x, x, 1)));
    assert_true(isnan(study_kendall(x, x, 1)));
    assert_true(isnan(study_spearman(x, x, 0)));
}

/* --------------------------------------------------------- synthetic grid */

/*
 * 2 models x 3 compressions x 2 algorithms x 1 format x 2 software x 2
 * hardware = 48 cells.  latency = model (1 ms, 4 ms) x hardware (hwA 1,
 * hwB 2) x software (untuned 1, tuned 0.5) x algorithm (untuned: direct
 * 1, im2col 0.8; tuned: direct 0.7, im2col 0.9) x compression (below),
 * and WP + direct + untuned on hwB another 0.5.
 *   compression factor  untuned  tuned resnet18  tuned resnet50
 *   dense               1        1               1
 *   WP (density 0.25)   0.5      0.8             1.2
 *   CP (keep 0.5)       0.6      0.6             1.1
 * One cell is invalid: resnet50 CP im2col tuned hwB.
 */
enum { M = 2, C = 3, A = 2, F = 1, S = 2, H = 2 };
static const char *const INVALID_REASON = "weights do not fit: 2 MiB > 1 MiB, \"glb\"";

static double compression_factor(int c, int s, int m)
{
    static const double untuned[C] = {1, 0.5, 0.6};
    static const double tuned[C][M] = {{1, 1}, {0.8, 1.2}, {0.6, 1.1}};
    return s ? tuned[c][m] : untuned[c];
}

static double latency_of(const int *k)
{
    int m = k[STUDY_AXIS_MODEL], c = k[STUDY_AXIS_COMPRESSION], a = k[STUDY_AXIS_ALGORITHM];
    int s = k[STUDY_AXIS_SOFTWARE], h = k[STUDY_AXIS_HARDWARE];
    static const double algorithm[S][A] = {{1, 0.8}, {0.7, 0.9}};
    double t = (m ? 4e-3 : 1e-3) * (h ? 2 : 1) * (s ? 0.5 : 1) * algorithm[s][a] *
               compression_factor(c, s, m);
    if (c == 1 && a == 0 && s == 0 && h == 1)
        t *= 0.5;
    return t;
}

static void name(char *dst, const char *s)
{
    snprintf(dst, STUDY_NAME_BYTES, "%s", s);
}

static study_result *synthetic(void)
{
    study_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    study_spec *s = &r->spec;
    name(s->name, "synthetic");
    s->batch = 1;
    s->n[STUDY_AXIS_MODEL] = M;
    s->n[STUDY_AXIS_COMPRESSION] = C;
    s->n[STUDY_AXIS_ALGORITHM] = A;
    s->n[STUDY_AXIS_FORMAT] = F;
    s->n[STUDY_AXIS_SOFTWARE] = S;
    s->n[STUDY_AXIS_HARDWARE] = H;
    name(s->model[0].name, "resnet18");
    name(s->model[0].dataset, "cifar10");
    name(s->model[1].name, "resnet50");
    name(s->model[1].dataset, "imagenet");
    name(s->compression[0].name, "dense");
    s->compression[0].kind = STUDY_COMPRESS_NONE;
    name(s->compression[1].name, "wp75");
    s->compression[1].kind = STUDY_COMPRESS_WEIGHT_PRUNING;
    s->compression[1].density = 0.25;
    name(s->compression[2].name, "cp50");
    s->compression[2].kind = STUDY_COMPRESS_CHANNEL_PRUNING;
    s->compression[2].keep = 0.5;
    name(s->algorithm[0].name, "direct");
    name(s->algorithm[1].name, "im2col");
    name(s->format[0].name, "dense");
    name(s->software[0].name, "untuned");
    name(s->software[1].name, "tuned");
    s->software[1].tuned = true;
    name(s->hardware[0].name, "hwA");
    name(s->hardware[1].name, "hwB");

    static const double accuracy[M][C] = {{0.93, 0.92, 0.90}, {0.76, 0.67, 0.47}};
    r->n_cells = study_cell_count(s);
    assert_int_equal(r->n_cells, 48);
    r->n_done = r->n_cells;
    r->cells = calloc((size_t)r->n_cells, sizeof *r->cells);
    assert_non_null(r->cells);
    for (int64_t i = 0; i < r->n_cells; i++) {
        study_cell *c = &r->cells[i];
        study_cell_coords(s, i, c->coords);
        const int *k = c->coords;
        int m = k[STUDY_AXIS_MODEL], comp = k[STUDY_AXIS_COMPRESSION];
        c->valid = true;
        c->metrics.latency_s = latency_of(k);
        c->metrics.energy_pJ = c->metrics.latency_s * 1e12; /* 1 W */
        c->macs = m ? 4000000000 : 1000000000;
        c->params = m ? 25000000 : 10000000;
        if (comp == 2) {
            c->macs /= 2;
            c->params /= 2;
        }
        c->effective_macs = comp == 1 ? c->macs / 4 : c->macs;
        c->nonzero_params = comp == 1 ? c->params / 4 : c->params;
        c->weight_bytes = 4 * c->params;
        c->accuracy = accuracy[m][comp];
        if (m == 1 && comp == 2 && k[STUDY_AXIS_ALGORITHM] == 1 && k[STUDY_AXIS_SOFTWARE] == 1 &&
            k[STUDY_AXIS_HARDWARE] == 1) {
            c->valid = false;
            snprintf(c->reason, sizeof c->reason, "%s", INVALID_REASON);
            memset(&c->metrics, 0, sizeof c->metrics);
        }
    }
    return r;
}

static void free_synthetic(study_result *r)
{
    free(r->cells);
    free(r);
}

static const study_summary_row *row_of(const study_summary *s, int m, int h, int sw)
{
    for (int64_t i = 0; i < s->n_rows; i++)
        if (s->rows[i].model == m && s->rows[i].hardware == h && s->rows[i].software == sw)
            return &s->rows[i];
    fail_msg("no row (%d, %d, %d)", m, h, sw);
    return NULL;
}

static const study_speedup *speedup_of(const study_summary *s, int c, int h, int sw)
{
    for (int64_t i = 0; i < s->n_speedups; i++)
        if (s->speedups[i].compression == c && s->speedups[i].hardware == h &&
            s->speedups[i].software == sw)
            return &s->speedups[i];
    fail_msg("no speedup (%d, %d, %d)", c, h, sw);
    return NULL;
}

static const study_observation *observation_of(const study_summary *s, const char *id)
{
    for (int i = 0; i < s->n_observations; i++)
        if (!strcmp(s->observations[i].id, id))
            return &s->observations[i];
    fail_msg("no observation %s", id);
    return NULL;
}

static void summarize(const study_result *r, study_summary *s)
{
    as_status st;
    as_status_clear(&st);
    if (study_summarize(r, s, &st) != AS_OK)
        fail_msg("study_summarize: %s", st.message);
}

static void test_summary_rows(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    assert_int_equal(s.n_rows, M * H * S);
    /* resnet18 hwA untuned: im2col wins every compression; WP+im2col
     * overall at 1 ms * 0.8 * 0.5 = 0.4 ms. */
    const study_summary_row *row = row_of(&s, 0, 0, 0);
    for (int c = 0; c < C; c++)
        assert_int_equal(row->best_algorithm[c], 1);
    assert_int_equal(row->best_compression[0], 1);
    assert_int_equal(row->best_compression[1], 1);
    assert_int_equal(row->overall_compression, 1);
    assert_int_equal(row->overall_algorithm, 1);
    assert_int_equal(row->overall_format, 0);
    assert_near(row->overall_latency_s, 0.4e-3, 1e-15);
    /* hwB untuned: WP's direct is halved (0.5 ms < im2col's 0.8 ms). */
    row = row_of(&s, 0, 1, 0);
    assert_int_equal(row->best_algorithm[0], 1);
    assert_int_equal(row->best_algorithm[1], 0);
    assert_int_equal(row->best_algorithm[2], 1);
    assert_int_equal(row->best_compression[0], 1);
    assert_int_equal(row->overall_compression, 1);
    assert_int_equal(row->overall_algorithm, 0);
    assert_near(row->overall_latency_s, 0.5e-3, 1e-15);
    /* resnet18 hwA tuned: direct everywhere; CP+direct 0.5*0.7*0.6 ms. */
    row = row_of(&s, 0, 0, 1);
    assert_int_equal(row->best_algorithm[0], 0);
    assert_int_equal(row->overall_compression, 2);
    assert_int_equal(row->overall_algorithm, 0);
    assert_near(row->overall_latency_s, 0.21e-3, 1e-15);
    /* resnet50 hwA tuned: pruning slows it, dense+direct 1.4 ms wins and
     * dense is the fastest compression of both algorithms. */
    row = row_of(&s, 1, 0, 1);
    assert_int_equal(row->overall_compression, 0);
    assert_int_equal(row->best_compression[0], 0);
    assert_int_equal(row->best_compression[1], 0);
    assert_near(row->overall_latency_s, 1.4e-3, 1e-15);
    study_summary_free(&s);
    free_synthetic(r);
}

static void test_summary_speedups(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    assert_int_equal(s.n_speedups, (C - 1) * H * S);
    /* WP hwA untuned: four pairs at speedup 2, expected 4 (MACs / 4). */
    const study_speedup *sp = speedup_of(&s, 1, 0, 0);
    assert_int_equal(sp->n, 4);
    assert_near(sp->mean_speedup, 2, 1e-12);
    assert_near(sp->mean_expected, 4, 1e-12);
    assert_near(sp->mean_fraction, 0.5, 1e-12);
    assert_int_equal(sp->n_reached, 0);
    /* WP hwB untuned: direct pairs at 4 (fraction 1, reached), im2col at 2. */
    sp = speedup_of(&s, 1, 1, 0);
    assert_near(sp->mean_speedup, sqrt(8), 1e-12);
    assert_near(sp->mean_fraction, sqrt(0.5), 1e-12);
    assert_int_equal(sp->n_reached, 2);
    /* CP hwA tuned: 1/0.6 and 1/1.1 per model, expected 2. */
    sp = speedup_of(&s, 2, 0, 1);
    assert_near(sp->mean_speedup, sqrt(1 / 0.66), 1e-12);
    assert_near(sp->mean_fraction, sqrt(1 / 0.66) / 2, 1e-12);
    /* CP hwB tuned: the invalid cell leaves three pairs. */
    assert_int_equal(speedup_of(&s, 2, 1, 1)->n, 3);
    study_summary_free(&s);
    free_synthetic(r);
}

static void test_summary_correlations(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    bool found_pooled = false, found_variants = false;
    for (int64_t i = 0; i < s.n_correlations; i++) {
        const study_correlation *c = &s.correlations[i];
        if (c->hardware == -1 && !strcmp(c->x, "macs") && !strcmp(c->y, "latency")) {
            found_pooled = true;
            assert_int_equal(c->n, 47); /* the invalid cell is left out */
        }
        if (c->hardware == 0 && !strcmp(c->x, "macs") && !strcmp(c->y, "energy"))
            assert_int_equal(c->n, 24);
        if (!strcmp(c->x, "params") && !strcmp(c->y, "accuracy")) {
            /* six variants: params 1e7 5e6 2.5e7 1.25e7 (WP keeps params). */
            found_variants = true;
            assert_int_equal(c->n, 6);
            double p[] = {1e7, 1e7, 5e6, 2.5e7, 2.5e7, 1.25e7};
            double a[] = {0.93, 0.92, 0.90, 0.76, 0.67, 0.47};
            assert_near(c->spearman, study_spearman(p, a, 6), 1e-12);
        }
    }
    assert_true(found_pooled);
    assert_true(found_variants);
    study_summary_free(&s);
    free_synthetic(r);
}

static void test_summary_observations(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    /* II: tuned pruned beat dense on cifar10 (2 of 2), not on imagenet. */
    assert_int_equal(observation_of(&s, "II")->verdict, 1);
    assert_non_null(strstr(observation_of(&s, "II")->evidence, "cifar10: pruned faster in 2 of 2"));
    assert_non_null(
        strstr(observation_of(&s, "II")->evidence, "imagenet: pruned faster in 0 of 2"));
    /* III: two dense models, params up and accuracy down: rho -1, strong. */
    assert_int_equal(observation_of(&s, "III")->verdict, 0);
    /* IV: WP beats CP untuned (4 rows) but not tuned (4 rows): not most. */
    assert_int_equal(observation_of(&s, "IV")->verdict, 0);
    /* V: no quantisation in the grid. */
    assert_int_equal(observation_of(&s, "V")->verdict, -1);
    /* VII/VIII: direct is the tuned dense best on both hardware. */
    assert_int_equal(observation_of(&s, "VII/VIII")->verdict, 0);
    /* X: 2 of 32 pruning pairs reach 90 % of their expected speedup. */
    assert_int_equal(observation_of(&s, "X")->verdict, 1);
    assert_non_null(strstr(observation_of(&s, "X")->evidence, "in 2 of 31 pairs"));
    /* XI: tuning moves the dense best from im2col to direct. */
    assert_int_equal(observation_of(&s, "XI")->verdict, 1);
    /* XII: pruning's speedup falls when tuned. */
    assert_int_equal(observation_of(&s, "XII")->verdict, 1);
    /* XIII: hwA is fastest in every (model, software) row. */
    assert_int_equal(observation_of(&s, "XIII")->verdict, 1);
    assert_non_null(strstr(observation_of(&s, "XIII")->evidence, "hwA fastest in 4 of 4"));
    for (int i = 0; i < s.n_observations; i++)
        assert_true(s.observations[i].evidence[0]);
    study_summary_free(&s);
    free_synthetic(r);
}

/* V: the third compression made float16 (half the weight bytes, expected
 * 2x), 1.25x slower than dense on hwA (emulated) and 1.25x faster on hwB:
 * its speedup varies by hardware. */
static void test_observation_precision(void **state)
{
    (void)state;
    study_result *r = synthetic();
    r->spec.compression[2].kind = STUDY_COMPRESS_FP16;
    snprintf(r->spec.compression[2].name, STUDY_NAME_BYTES, "fp16");
    for (int64_t i = 0; i < r->n_cells; i++) {
        study_cell *c = &r->cells[i];
        if (c->coords[STUDY_AXIS_COMPRESSION] != 2)
            continue;
        int dense[STUDY_NAXES];
        memcpy(dense, c->coords, sizeof dense);
        dense[STUDY_AXIS_COMPRESSION] = 0;
        const study_cell *d = &r->cells[study_cell_index(&r->spec, dense)];
        *c = *d;
        c->coords[STUDY_AXIS_COMPRESSION] = 2;
        c->weight_bytes = d->weight_bytes / 2;
        c->metrics.latency_s = d->metrics.latency_s * (c->coords[STUDY_AXIS_HARDWARE] ? 0.8 : 1.25);
    }
    study_summary s;
    summarize(r, &s);
    const study_speedup *sp = speedup_of(&s, 2, 0, 0);
    assert_near(sp->mean_expected, 2, 1e-12);
    assert_near(sp->mean_speedup, 0.8, 1e-12);
    assert_near(speedup_of(&s, 2, 1, 1)->mean_speedup, 1.25, 1e-12);
    const study_observation *v = observation_of(&s, "V");
    assert_int_equal(v->verdict, 1);
    assert_non_null(strstr(v->evidence, "hwA: f16 x0.80"));
    assert_non_null(strstr(v->evidence, "hwB: f16 x1.25"));
    study_summary_free(&s);
    free_synthetic(r);
}

/* ----------------------------------------------------------------- output */

/* The text of writing r (and s) with writer into memory (caller frees). */
static char *text_of(const study_result *r, const study_summary *s, bool csv)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    as_status st;
    as_status_clear(&st);
    as_code code = csv ? study_write_csv(f, r, &st) : study_write_text(f, r, s, &st);
    fclose(f);
    if (code != AS_OK)
        fail_msg("write: %s", st.message);
    return text;
}

/* The whitespace-separated words of the first line after `after` that
 * starts with `start` (after spaces), joined by single spaces, into buf. */
static bool line_words(const char *text, const char *after, const char *start, char *buf,
                       size_t size)
{
    const char *p = strstr(text, after);
    for (; p && (p = strstr(p, start)); p++) {
        const char *b = p;
        while (b > text && b[-1] == ' ')
            b--;
        if (b != text && b[-1] != '\n')
            continue;
        size_t n = 0;
        bool space = false;
        for (; *p && *p != '\n' && n + 2 < size; p++) {
            if (*p == ' ') {
                space = n > 0;
                continue;
            }
            if (space)
                buf[n++] = ' ';
            space = false;
            buf[n++] = *p;
        }
        buf[n] = 0;
        return true;
    }
    return false;
}

static void test_text(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    char *text = text_of(r, &s, false);
    if (getenv("AS_TEST_SHOW"))
        fputs(text, stderr);
    char words[512];
    const char *table = "dataset cifar10, software untuned";
    assert_non_null(strstr(text, table));
    assert_non_null(strstr(text, "dataset imagenet, software tuned"));
    assert_true(line_words(text, table, "Fastest algorithm", words, sizeof words));
    assert_string_equal(words, "Fastest algorithm Fastest compression");
    assert_true(line_words(text, table, "Platform", words, sizeof words));
    assert_string_equal(words, "Platform Model Dense WP CP direct im2col Overall fastest Latency");
    assert_true(line_words(text, table, "hwA", words, sizeof words));
    assert_string_equal(words, "hwA resnet18 im2col im2col im2col WP WP WP+im2col 400.0 us");
    assert_true(line_words(text, table, "hwB", words, sizeof words));
    assert_string_equal(words, "hwB resnet18 im2col direct im2col WP WP WP+direct 500.0 us");
    assert_true(line_words(text, "dataset cifar10, software tuned", "hwA", words, sizeof words));
    assert_string_equal(words, "hwA resnet18 direct direct direct CP CP CP+direct 210.0 us");
    /* the speedup table: WP hwA untuned */
    assert_true(line_words(text, "Fraction of expected speedup", "untuned", words, sizeof words));
    assert_string_equal(words, "untuned hwA WP 4 2.00x 4.00x 50.0 % 0 of 4");
    assert_non_null(strstr(text, "strong: |rho| >= 0.7"));
    assert_non_null(strstr(text, "XIII     [supported] one platform is generally the fastest"));
    assert_non_null(strstr(text, "V        [cannot say]"));
    assert_non_null(strstr(text, "Invalid cells: 1 of 48"));
    char line[512];
    snprintf(line, sizeof line, "       1 cells  %s\n", INVALID_REASON);
    assert_non_null(strstr(text, line));
    free(text);
    study_summary_free(&s);
    free_synthetic(r);
}

/* RFC 4180 fields of one record starting at *p (advanced past its CRLF):
 * their count, the field `want` copied into out. */
static int csv_record(const char **p, int want, char *out, size_t size)
{
    int field = 0;
    size_t n = 0;
    const char *s = *p;
    for (;;) {
        bool quoted = *s == '"';
        s += quoted;
        for (;;) {
            if (quoted && s[0] == '"' && s[1] == '"')
                s++;
            else if (quoted ? *s == '"' : (*s == ',' || *s == '\r' || !*s))
                break;
            if (field == want && n + 1 < size)
                out[n++] = *s;
            s++;
        }
        s += quoted;
        field++;
        if (*s != ',')
            break;
        s++;
    }
    if (field > want)
        out[n] = 0;
    assert_true(s[0] == '\r' && s[1] == '\n');
    *p = s + 2;
    return field;
}

static void test_csv(void **state)
{
    (void)state;
    study_result *r = synthetic();
    char *text = text_of(r, NULL, true);
    const char *p = text;
    char field[256];
    assert_int_equal(csv_record(&p, 10, field, sizeof field), 24);
    assert_string_equal(field, "latency_s");
    int rows = 0, invalid = 0;
    while (*p) {
        char reason[256], latency[64];
        const char *q = p;
        assert_int_equal(csv_record(&p, 9, reason, sizeof reason), 24);
        csv_record(&q, 10, latency, sizeof latency);
        if (reason[0]) {
            invalid++;
            assert_string_equal(reason, INVALID_REASON);
            assert_string_equal(latency, "");
        } else
            assert_true(strtod(latency, NULL) > 0);
        rows++;
    }
    assert_int_equal(rows, 48);
    assert_int_equal(invalid, 1);
    free(text);
    free_synthetic(r);
}

static void test_json(void **state)
{
    (void)state;
    study_result *r = synthetic();
    study_summary s;
    summarize(r, &s);
    as_status st;
    as_status_clear(&st);
    json_t *j = study_to_json(r, &s, &st);
    assert_non_null(j);
    /* through text and back: what a reader of --json sees */
    char *text = as_json_text(j, AS_JSON_INDENT);
    json_decref(j);
    assert_int_equal(as_json_parse(text, "study JSON", &j, &st), AS_OK);
    free(text);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "study"), "name")),
                        "synthetic");
    json_t *axes = json_object_get(j, "axes");
    assert_int_equal(json_array_size(json_object_get(axes, "model")), 2);
    assert_int_equal(json_array_size(json_object_get(axes, "hardware")), 2);
    json_t *cells = json_object_get(j, "cells");
    assert_int_equal(json_array_size(cells), 48);
    json_t *c0 = json_array_get(cells, 0);
    assert_string_equal(json_string_value(json_object_get(c0, "model")), "resnet18");
    assert_string_equal(json_string_value(json_object_get(c0, "compression")), "Dense");
    assert_true(json_is_true(json_object_get(c0, "valid")));
    assert_near(json_real_value(json_object_get(c0, "latency_s")), 1e-3, 1e-18);
    assert_near(json_real_value(json_object_get(c0, "accuracy")), 0.93, 1e-15);
    json_t *summary = json_object_get(j, "summary");
    assert_int_equal(json_array_size(json_object_get(summary, "rows")), 8);
    json_t *row0 = json_array_get(json_object_get(summary, "rows"), 0);
    json_t *overall = json_object_get(row0, "overall_fastest");
    assert_string_equal(json_string_value(json_object_get(overall, "compression")), "WP");
    assert_string_equal(json_string_value(json_object_get(overall, "algorithm")), "im2col");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(row0, "fastest_algorithm"), "CP")),
        "im2col");
    assert_int_equal(json_array_size(json_object_get(summary, "speedups")), 8);
    assert_true(json_array_size(json_object_get(summary, "correlations")) > 0);
    assert_int_equal(json_array_size(json_object_get(summary, "observations")),
                     (size_t)s.n_observations);
    json_t *invalid = json_object_get(j, "invalid");
    assert_int_equal(json_array_size(invalid), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(invalid, 0), "reason")),
                        INVALID_REASON);
    json_decref(j);
    study_summary_free(&s);
    free_synthetic(r);
}

/* A study without a baseline or valid cells summarises to empty speedups
 * and "cannot say", without failing. */
static void test_empty(void **state)
{
    (void)state;
    study_result *r = synthetic();
    for (int64_t i = 0; i < r->n_cells; i++) {
        r->cells[i].valid = false;
        snprintf(r->cells[i].reason, sizeof r->cells[i].reason, "not run");
    }
    study_summary s;
    summarize(r, &s);
    assert_int_equal(s.rows[0].overall_compression, -1);
    for (int i = 0; i < s.n_observations; i++)
        assert_int_equal(s.observations[i].verdict, -1);
    char *text = text_of(r, &s, false);
    assert_non_null(strstr(text, "Invalid cells: 48 of 48"));
    assert_non_null(strstr(text, "      48 cells  not run"));
    free(text);
    study_summary_free(&s);
    free_synthetic(r);
}

static void test_format_si(void **state)
{
    (void)state;
    char t[AS_SI_TEXT_BYTES];
    assert_string_equal(as_format_si(1.234e-3, "s", t), "1.234 ms");
    assert_string_equal(as_format_si(0.0004, "s", t), "400.0 us");
    assert_string_equal(as_format_si(9.996e-3, "s", t), "9.996 ms");
    assert_string_equal(as_format_si(999.6e-3, "s", t), "999.6 ms");
    assert_string_equal(as_format_si(45.6e-6, "J", t), "45.60 uJ");
    assert_string_equal(as_format_si(1.82e9, "MAC", t), "1.820 GMAC");
    assert_string_equal(as_format_si(-2.5e3, "B", t), "-2.500 kB");
    assert_string_equal(as_format_si(0, "s", t), "0 s");
    assert_string_equal(as_format_si(NAN, "s", t), "-");
    /* Rounding carries into the next power of ten, and of 1000. */
    assert_string_equal(as_format_si(9.9996e-3, "s", t), "10.00 ms");
    assert_string_equal(as_format_si(999.96e-3, "s", t), "1.000 s");
    assert_string_equal(as_format_si(2e27, "B", t), "2.000e+27 B");
    assert_string_equal(as_format_digits(5.7906, t), "5.791");
    assert_string_equal(as_format_digits(0.99996, t), "1.000");
    assert_string_equal(as_format_digits(2.5e7, t), "2.500e+07");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_monotone_and_reversed),
        cmocka_unit_test(test_rank_hand_computed),
        cmocka_unit_test(test_rank_ties),
        cmocka_unit_test(test_rank_undefined),
        cmocka_unit_test(test_kendall_matches_pairs),
        cmocka_unit_test(test_summary_rows),
        cmocka_unit_test(test_summary_speedups),
        cmocka_unit_test(test_summary_correlations),
        cmocka_unit_test(test_summary_observations),
        cmocka_unit_test(test_observation_precision),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_format_si),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
