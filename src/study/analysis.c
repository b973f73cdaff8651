/*
 * analysis.c -- what a study's grid says (study.h, docs/study.md
 * "Analysis"): rank correlations, DLAS's summary tables (fastest
 * algorithm per compression, fastest compression per algorithm, overall
 * fastest), the fraction of expected speedup each compression achieves,
 * and a verdict on each of DLAS's observations the grid can speak to.
 *
 * Every comparison is between valid cells; a combination of model,
 * compression, algorithm, software and hardware is represented by its
 * fastest data format (a format is a storage choice, as the paper's
 * "best variant" is).  Ties go to the lower axis index, so the summary is
 * a function of the grid alone.
 */
#include "study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ rank correlation */

typedef struct ranked {
    double value;
    int64_t index;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The ranks (1-based) of v's n values into rank, ties given the mean of
 * the ranks they span.  False when out of memory. */
static bool mean_ranks(const double *v, int64_t n, double *rank)
{
    ranked *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return false;
    for (int64_t i = 0; i < n; i++)
        order[i] = (ranked){v[i], i};
    qsort(order, (size_t)n, sizeof *order, ranked_cmp);
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && order[j + 1].value == order[i].value)
            j++;
        double mean = (double)(i + j) / 2 + 1;
        for (int64_t k = i; k <= j; k++)
            rank[order[k].index] = mean;
        i = j + 1;
    }
    free(order);
    return true;
}

/* Pearson's correlation of x and y; NaN when either is constant. */
static double pearson(const double *x, const double *y, int64_t n)
{
    double mx = 0, my = 0;
    for (int64_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    if (sxx == 0 || syy == 0)
        return NAN;
    return sxy / sqrt(sxx * syy);
}

/* Spearman's rho is Pearson's correlation of the mean ranks (which is
 * what makes it right with ties, where 1 - 6 sum d^2 / (n^3 - n) is not). */
double study_spearman(const double *x, const double *y, int64_t n)
{
    if (n < 2)
        return NAN;
    double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
    double rho = NAN;
    if (rx && ry && mean_ranks(x, n, rx) && mean_ranks(y, n, ry))
        rho = pearson(rx, ry, n);
    free(rx);
    free(ry);
    return rho;
}

/* A sample point for Kendall's tau. */
typedef struct point {
    double x, y;
} point;

static int point_cmp(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* Pairs tied in the key over runs of equal keys: sum t(t-1)/2. */
static double tied_pairs(const point *v, int64_t n, bool both)
{
    double pairs = 0;
    for (int64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j].y == v[i].y && (!both || v[j].x == v[i].x); j++)
            ;
        pairs += (double)(j - i) * (double)(j - i - 1) / 2;
    }
    return pairs;
}

/* Sort v[0..n) by y (stable, through tmp), returning the pairs it had
 * out of order (i < j, y_i > y_j strictly: equal ys are not swapped). */
static double sort_y_counting_swaps(point *v, point *tmp, int64_t n)
{
    if (n < 2)
        return 0;
    int64_t half = n / 2;
    double swaps =
        sort_y_counting_swaps(v, tmp, half) + sort_y_counting_swaps(v + half, tmp, n - half);
    int64_t i = 0, j = half, k = 0;
    while (i < half && j < n) {
        if (v[j].y < v[i].y) {
            swaps += (double)(half - i); /* v[j] passes every left point still waiting */
            tmp[k++] = v[j++];
        } else
            tmp[k++] = v[i++];
    }
    while (i < half)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
    return swaps;
}

/* Kendall's tau-b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)),
 * n0 = n(n-1)/2 pairs, n1 and n2 the pairs tied in x and in y.  Knight's
 * O(n log n) count (1966): sorted by (x, y), the pairs a merge sort on y
 * must swap are the discordant ones, and concordant - discordant = n0 -
 * n1 - n2 + n3 - 2 swaps, n3 the pairs tied in both. */
double study_kendall(const double *x, const double *y, int64_t n)
{
    if (n < 2)
        return NAN;
    point *v = malloc((size_t)n * sizeof *v), *tmp = malloc((size_t)n * sizeof *tmp);
    double tau = NAN;
    if (v && tmp) {
        for (int64_t i = 0; i < n; i++)
            v[i] = (point){x[i], y[i]};
        qsort(v, (size_t)n, sizeof *v, point_cmp);
        /* Runs of equal x: tied_pairs reads y, so count them on swapped
         * copies of the coordinates. */
        for (int64_t i = 0; i < n; i++)
            tmp[i] = (point){v[i].y, v[i].x};
        double n1 = tied_pairs(tmp, n, false), n3 = tied_pairs(v, n, true);
        double swaps = sort_y_counting_swaps(v, tmp, n);
        double n2 = tied_pairs(v, n, false);
        double n0 = (double)n * (double)(n - 1) / 2;
        double denominator = sqrt((n0 - n1) * (n0 - n2));
        if (denominator > 0)
            tau = (n0 - n1 - n2 + n3 - 2 * swaps) / denominator;
    }
    free(v);
    free(tmp);
    return tau;
}

/* ------------------------------------------------------------ the grid */

/* One combination of the axes other than the data format. */
typedef struct combo {
    int model, compression, algorithm, software, hardware;
} combo;

/* Cell (combo k, format f) when it is valid with a positive latency. */
static const study_cell *valid_cell(const study_result *r, combo k, int f)
{
    int coords[STUDY_NAXES];
    coords[STUDY_AXIS_MODEL] = k.model;
    coords[STUDY_AXIS_COMPRESSION] = k.compression;
    coords[STUDY_AXIS_ALGORITHM] = k.algorithm;
    coords[STUDY_AXIS_FORMAT] = f;
    coords[STUDY_AXIS_SOFTWARE] = k.software;
    coords[STUDY_AXIS_HARDWARE] = k.hardware;
    int64_t i = study_cell_index(&r->spec, coords);
    if (i < 0 || i >= r->n_cells)
        return NULL;
    const study_cell *c = &r->cells[i];
    return c->valid && c->metrics.latency_s > 0 && isfinite(c->metrics.latency_s) ? c : NULL;
}

/* The fastest valid cell of combo k over the data formats (the first
 * format on a tie), its format in *format; NULL when none is valid. */
static const study_cell *fastest_format(const study_result *r, combo k, int *format)
{
    const study_cell *best = NULL;
    for (int f = 0; f < r->spec.n[STUDY_AXIS_FORMAT]; f++) {
        const study_cell *c = valid_cell(r, k, f);
        if (c && (!best || c->metrics.latency_s < best->metrics.latency_s)) {
            best = c;
            if (format)
                *format = f;
        }
    }
    return best;
}

/* The first compression entry of kind NONE (the baseline), or -1. */
static int baseline_compression(const study_spec *s)
{
    for (int c = 0; c < s->n[STUDY_AXIS_COMPRESSION]; c++)
        if (s->compression[c].kind == STUDY_COMPRESS_NONE)
            return c;
    return -1;
}

static bool is_pruning(study_compression_kind k)
{
    return k == STUDY_COMPRESS_WEIGHT_PRUNING || k == STUDY_COMPRESS_CHANNEL_PRUNING;
}

static bool is_precision(study_compression_kind k)
{
    return k == STUDY_COMPRESS_INT8 || k == STUDY_COMPRESS_FP16;
}

/* ---------------------------------------------------------- summary rows */

/* Row (model, hardware, software): the fastest cell per compression x
 * algorithm, then the argmins along each axis and overall. */
static void summarize_row(const study_result *r, study_summary_row *row)
{
    const study_spec *s = &r->spec;
    int nc = s->n[STUDY_AXIS_COMPRESSION], na = s->n[STUDY_AXIS_ALGORITHM];
    double best_by_compression[STUDY_MAX_ITEMS], best_by_algorithm[STUDY_MAX_ITEMS];
    for (int i = 0; i < STUDY_MAX_ITEMS; i++) {
        row->best_algorithm[i] = row->best_compression[i] = row->best_format[i] = -1;
        best_by_compression[i] = best_by_algorithm[i] = INFINITY;
    }
    row->overall_compression = row->overall_algorithm = row->overall_format = -1;
    row->overall_latency_s = NAN;
    for (int c = 0; c < nc; c++)
        for (int a = 0; a < na; a++) {
            combo k = {row->model, c, a, row->software, row->hardware};
            int f = -1;
            const study_cell *cell = fastest_format(r, k, &f);
            if (!cell)
                continue;
            double t = cell->metrics.latency_s;
            if (t < best_by_compression[c]) {
                best_by_compression[c] = t;
                row->best_algorithm[c] = a;
                row->best_format[c] = f;
            }
            if (t < best_by_algorithm[a]) {
                best_by_algorithm[a] = t;
                row->best_compression[a] = c;
            }
            if (row->overall_compression < 0 || t < row->overall_latency_s) {
                row->overall_compression = c;
                row->overall_algorithm = a;
                row->overall_format = f;
                row->overall_latency_s = t;
            }
        }
}

/* Rows in table order: software, then hardware, then model. */
static as_code summarize_rows(const study_result *r, study_summary *out, as_status *st)
{
    const study_spec *s = &r->spec;
    int64_t n =
        (int64_t)s->n[STUDY_AXIS_MODEL] * s->n[STUDY_AXIS_HARDWARE] * s->n[STUDY_AXIS_SOFTWARE];
    out->rows = calloc((size_t)(n ? n : 1), sizeof *out->rows);
    if (!out->rows)
        return as_fail(st, AS_ENOMEM, "study summary: out of memory");
    for (int sw = 0; sw < s->n[STUDY_AXIS_SOFTWARE]; sw++)
        for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE]; h++)
            for (int m = 0; m < s->n[STUDY_AXIS_MODEL]; m++) {
                study_summary_row *row = &out->rows[out->n_rows++];
                row->model = m;
                row->hardware = h;
                row->software = sw;
                summarize_row(r, row);
            }
    return AS_OK;
}

/* -------------------------------------------------------------- speedups */

/* The speedup of compression c over the baseline for combo k (whose
 * compression is ignored) and the speedup expected from the compression:
 * the effective-MAC reduction for pruning, the weight-byte reduction for
 * a precision.  False when either side has no valid cell. */
static bool pair_speedup(const study_result *r, combo k, int baseline, double *speedup,
                         double *expected)
{
    combo kb = k;
    kb.compression = baseline;
    const study_cell *base = fastest_format(r, kb, NULL);
    const study_cell *cell = fastest_format(r, k, NULL);
    if (!base || !cell)
        return false;
    study_compression_kind kind = r->spec.compression[k.compression].kind;
    double num = 1, den = 1;
    if (is_pruning(kind)) {
        num = (double)base->effective_macs;
        den = (double)cell->effective_macs;
    } else if (is_precision(kind)) {
        num = (double)base->weight_bytes;
        den = (double)cell->weight_bytes;
    }
    if (!(num > 0 && den > 0))
        return false;
    *speedup = base->metrics.latency_s / cell->metrics.latency_s;
    *expected = num / den;
    return true;
}

/* A geometric mean kept as a sum of logarithms. */
typedef struct geomean {
    double log_sum;
    int n;
} geomean;

static void geomean_add(geomean *g, double v)
{
    g->log_sum += log(v);
    g->n++;
}

static double geomean_value(const geomean *g)
{
    return g->n ? exp(g->log_sum / g->n) : NAN;
}

/* The speedup record of compression c on (hardware, software), over every
 * model and algorithm with both sides valid. */
static study_speedup speedup_of(const study_result *r, int baseline, int c, int h, int sw)
{
    study_speedup sp = {.compression = c, .hardware = h, .software = sw};
    geomean speedup = {0, 0}, expected = {0, 0}, fraction = {0, 0};
    for (int m = 0; m < r->spec.n[STUDY_AXIS_MODEL]; m++)
        for (int a = 0; a < r->spec.n[STUDY_AXIS_ALGORITHM]; a++) {
            double s, e;
            if (!pair_speedup(r, (combo){m, c, a, sw, h}, baseline, &s, &e))
                continue;
            geomean_add(&speedup, s);
            geomean_add(&expected, e);
            geomean_add(&fraction, s / e);
            sp.n_reached += s >= STUDY_REACHED_FRACTION * e;
        }
    sp.n = speedup.n;
    sp.mean_speedup = geomean_value(&speedup);
    sp.mean_expected = geomean_value(&expected);
    sp.mean_fraction = geomean_value(&fraction);
    return sp;
}

/* One record per non-baseline compression x hardware x software (software
 * outermost, as the tables are). */
static as_code summarize_speedups(const study_result *r, study_summary *out, as_status *st)
{
    const study_spec *s = &r->spec;
    int baseline = baseline_compression(s);
    int64_t n = (int64_t)s->n[STUDY_AXIS_COMPRESSION] * s->n[STUDY_AXIS_HARDWARE] *
                s->n[STUDY_AXIS_SOFTWARE];
    out->speedups = calloc((size_t)(n ? n : 1), sizeof *out->speedups);
    if (!out->speedups)
        return as_fail(st, AS_ENOMEM, "study summary: out of memory");
    if (baseline < 0)
        return AS_OK;
    for (int sw = 0; sw < s->n[STUDY_AXIS_SOFTWARE]; sw++)
        for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE]; h++)
            for (int c = 0; c < s->n[STUDY_AXIS_COMPRESSION]; c++)
                if (s->compression[c].kind != STUDY_COMPRESS_NONE)
                    out->speedups[out->n_speedups++] = speedup_of(r, baseline, c, h, sw);
    return AS_OK;
}

/* ---------------------------------------------------------- correlations */

/* A figure of a cell, by name. */
typedef struct figure {
    const char *name;
    double (*of)(const study_cell *c);
} figure;

static double fig_macs(const study_cell *c)
{
    return (double)c->macs;
}
static double fig_effective_macs(const study_cell *c)
{
    return (double)c->effective_macs;
}
static double fig_params(const study_cell *c)
{
    return (double)c->params;
}
static double fig_nonzero_params(const study_cell *c)
{
    return (double)c->nonzero_params;
}
static double fig_weight_bytes(const study_cell *c)
{
    return (double)c->weight_bytes;
}
static double fig_latency(const study_cell *c)
{
    return c->metrics.latency_s;
}
static double fig_energy(const study_cell *c)
{
    return c->metrics.energy_pJ;
}
static double fig_accuracy(const study_cell *c)
{
    return c->accuracy;
}

static const figure MODEL_FIGURES[] = {{"macs", fig_macs},
                                       {"effective_macs", fig_effective_macs},
                                       {"params", fig_params},
                                       {"nonzero_params", fig_nonzero_params},
                                       {"weight_bytes", fig_weight_bytes}};
static const figure COST_FIGURES[] = {{"latency", fig_latency}, {"energy", fig_energy}};
static const figure ACCURACY = {"accuracy", fig_accuracy};
enum { N_MODEL_FIGURES = 5, N_COST_FIGURES = 2 };

/* Scratch for one correlation: the paired samples. */
typedef struct sample {
    double *x, *y;
    int64_t n;
} sample;

/* Whether cell c (valid) joins a sample: on hardware h (-1: any), with
 * both figures finite. */
static bool sample_takes(const study_cell *c, int h, figure x, figure y)
{
    return c->valid && (h < 0 || c->coords[STUDY_AXIS_HARDWARE] == h) && isfinite(x.of(c)) &&
           isfinite(y.of(c));
}

/* The correlation of figures x and y over the valid cells on hardware h
 * (-1: pooled), into out->correlations. */
static void correlate(const study_result *r, sample *buf, int h, figure x, figure y,
                      study_summary *out)
{
    buf->n = 0;
    for (int64_t i = 0; i < r->n_cells; i++) {
        const study_cell *c = &r->cells[i];
        if (!sample_takes(c, h, x, y))
            continue;
        buf->x[buf->n] = x.of(c);
        buf->y[buf->n] = y.of(c);
        buf->n++;
    }
    study_correlation *k = &out->correlations[out->n_correlations++];
    *k = (study_correlation){.hardware = h, .x = x.name, .y = y.name, .n = buf->n};
    k->spearman = study_spearman(buf->x, buf->y, buf->n);
    k->kendall = study_kendall(buf->x, buf->y, buf->n);
}

/* accuracy ~ params over the model variants (one cell per model x
 * compression: the first valid one), pooled (hardware -1): the figures
 * do not depend on the other axes, and repeating a variant would weigh
 * it by the grid's size. */
static void correlate_variants(const study_result *r, sample *buf, study_summary *out)
{
    const study_spec *s = &r->spec;
    buf->n = 0;
    for (int m = 0; m < s->n[STUDY_AXIS_MODEL]; m++)
        for (int c = 0; c < s->n[STUDY_AXIS_COMPRESSION]; c++)
            for (int64_t i = 0; i < r->n_cells; i++) {
                const study_cell *cell = &r->cells[i];
                if (cell->coords[STUDY_AXIS_MODEL] != m ||
                    cell->coords[STUDY_AXIS_COMPRESSION] != c ||
                    !sample_takes(cell, -1, MODEL_FIGURES[2], ACCURACY))
                    continue;
                buf->x[buf->n] = (double)cell->params;
                buf->y[buf->n] = cell->accuracy;
                buf->n++;
                break;
            }
    study_correlation *k = &out->correlations[out->n_correlations++];
    *k = (study_correlation){.hardware = -1, .x = "params", .y = "accuracy", .n = buf->n};
    k->spearman = study_spearman(buf->x, buf->y, buf->n);
    k->kendall = study_kendall(buf->x, buf->y, buf->n);
}

/* Per hardware and pooled: every model figure against latency and
 * energy, and accuracy against latency; then accuracy ~ params. */
static as_code summarize_correlations(const study_result *r, study_summary *out, as_status *st)
{
    int nh = r->spec.n[STUDY_AXIS_HARDWARE];
    int64_t per_hardware = N_MODEL_FIGURES * N_COST_FIGURES + 1;
    out->correlations = calloc((size_t)((nh + 1) * per_hardware + 1), sizeof *out->correlations);
    size_t cells = (size_t)(r->n_cells ? r->n_cells : 1);
    sample buf = {malloc(cells * sizeof(double)), malloc(cells * sizeof(double)), 0};
    if (!out->correlations || !buf.x || !buf.y) {
        free(buf.x);
        free(buf.y);
        return as_fail(st, AS_ENOMEM, "study summary: out of memory");
    }
    for (int h = -1; h < nh; h++) {
        for (int i = 0; i < N_MODEL_FIGURES; i++)
            for (int j = 0; j < N_COST_FIGURES; j++)
                correlate(r, &buf, h, MODEL_FIGURES[i], COST_FIGURES[j], out);
        correlate(r, &buf, h, ACCURACY, COST_FIGURES[0], out);
    }
    correlate_variants(r, &buf, out);
    free(buf.x);
    free(buf.y);
    return AS_OK;
}

/* ---------------------------------------------------------- observations */

const char *study_verdict_name(int verdict)
{
    return verdict > 0 ? "supported" : verdict == 0 ? "not supported" : "cannot say";
}

/* Append printf text to an observation's evidence (truncated at its
 * size). */
static void evidence(study_observation *o, const char *fmt, ...) AS_PRINTF(2, 3);
static void evidence(study_observation *o, const char *fmt, ...)
{
    size_t used = strlen(o->evidence);
    if (used + 1 >= sizeof o->evidence)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->evidence + used, sizeof o->evidence - used, fmt, ap);
    va_end(ap);
}

static study_observation *observation(study_summary *out, const char *id, const char *claim)
{
    study_observation *o = &out->observations[out->n_observations++];
    memset(o, 0, sizeof *o);
    o->id = id;
    o->claim = claim;
    o->verdict = -1;
    return o;
}

static const study_correlation *find_correlation(const study_summary *s, int h, const char *x,
                                                 const char *y)
{
    for (int64_t i = 0; i < s->n_correlations; i++) {
        const study_correlation *c = &s->correlations[i];
        if (c->hardware == h && !strcmp(c->x, x) && !strcmp(c->y, y))
            return c;
    }
    return NULL;
}

static bool strong(double rho)
{
    return fabs(rho) >= STUDY_STRONG_CORRELATION;
}

/* I: MACs, accuracy and latency are not strongly correlated.  Per
 * hardware, rho(macs, latency); supported when the mean |rho| over the
 * hardware is below the threshold and, where accuracy is given, so is
 * |rho(accuracy, latency)| pooled. */
static void observe_I(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "I", "MACs, accuracy and inference time are not strongly correlated");
    double sum_rho = 0, sum_tau = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (int h = 0; h < r->spec.n[STUDY_AXIS_HARDWARE]; h++) {
        const study_correlation *c = find_correlation(out, h, "macs", "latency");
        if (!c || isnan(c->spearman))
            continue;
        sum_rho += fabs(c->spearman);
        sum_tau += fabs(c->kendall);
        lo = fmin(lo, c->spearman);
        hi = fmax(hi, c->spearman);
        n++;
    }
    if (!n) {
        evidence(o, "fewer than 2 valid cells with varying MACs and latency on any hardware");
        return;
    }
    double mean_rho = sum_rho / n;
    evidence(
        o,
        "macs~latency per hardware: rho %.2f..%.2f, mean |rho| %.2f, mean |tau| %.2f (%d hardware)",
        lo, hi, mean_rho, sum_tau / n, n);
    const study_correlation *pooled_macs = find_correlation(out, -1, "macs", "latency");
    if (pooled_macs && !isnan(pooled_macs->spearman))
        evidence(o, "; pooled over hardware rho %.2f tau %.2f", pooled_macs->spearman,
                 pooled_macs->kendall);
    bool accuracy_strong = false;
    const study_correlation *a = find_correlation(out, -1, "accuracy", "latency");
    if (a && !isnan(a->spearman)) {
        evidence(o, "; accuracy~latency rho %.2f tau %.2f (n %lld)", a->spearman, a->kendall,
                 (long long)a->n);
        accuracy_strong = strong(a->spearman);
    }
    evidence(o, "; strong = |rho| >= %.1f", STUDY_STRONG_CORRELATION);
    o->verdict = !strong(mean_rho) && !accuracy_strong;
}

/* The fastest latency of row (m, h, sw) over compressions of which `take`
 * holds, every algorithm and format; INFINITY when none. */
static double fastest_where(const study_result *r, int m, int h, int sw,
                            bool (*take)(const study_compression *c, int index, int baseline))
{
    double best = INFINITY;
    int baseline = baseline_compression(&r->spec);
    for (int c = 0; c < r->spec.n[STUDY_AXIS_COMPRESSION]; c++) {
        if (!take(&r->spec.compression[c], c, baseline))
            continue;
        for (int a = 0; a < r->spec.n[STUDY_AXIS_ALGORITHM]; a++) {
            const study_cell *cell = fastest_format(r, (combo){m, c, a, sw, h}, NULL);
            if (cell)
                best = fmin(best, cell->metrics.latency_s);
        }
    }
    return best;
}

static bool take_baseline(const study_compression *c, int index, int baseline)
{
    return index == baseline;
}
static bool take_pruning(const study_compression *c, int index, int baseline)
{
    return is_pruning(c->kind);
}
static bool take_weight_pruning(const study_compression *c, int index, int baseline)
{
    return c->kind == STUDY_COMPRESS_WEIGHT_PRUNING;
}
static bool take_channel_pruning(const study_compression *c, int index, int baseline)
{
    return c->kind == STUDY_COMPRESS_CHANNEL_PRUNING;
}

/* The dataset of model m's position in the list of distinct datasets. */
static int dataset_index(const study_spec *s, int m)
{
    for (int i = 0; i <= m; i++)
        if (!strcmp(s->model[i].dataset, s->model[m].dataset))
            return i;
    return m;
}

/* II: tuned pruned models beat the dense baseline on the small dataset
 * (CIFAR-10) but not on the large one (ImageNet).  Per dataset (the
 * first model of each names it), over tuned rows: how often the fastest
 * pruned variant beats the fastest baseline; datasets ordered by the
 * geometric mean of their baseline MACs.  Supported when the smallest
 * dataset's pruned models win in more than half of its rows and the
 * largest's in at most half. */
static void observe_II(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "II", "tuned sparse models beat dense on CIFAR-10 but not on ImageNet");
    const study_spec *s = &r->spec;
    int baseline = baseline_compression(s);
    int wins[STUDY_MAX_ITEMS] = {0}, rows[STUDY_MAX_ITEMS] = {0};
    geomean macs[STUDY_MAX_ITEMS] = {{0}};
    for (int m = 0; m < s->n[STUDY_AXIS_MODEL]; m++)
        for (int sw = 0; sw < s->n[STUDY_AXIS_SOFTWARE]; sw++)
            for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE] && s->software[sw].tuned; h++) {
                double dense = fastest_where(r, m, h, sw, take_baseline);
                double pruned = fastest_where(r, m, h, sw, take_pruning);
                if (!isfinite(dense) || !isfinite(pruned))
                    continue;
                int d = dataset_index(s, m);
                rows[d]++;
                wins[d] += pruned < dense;
                const study_cell *b = fastest_format(r, (combo){m, baseline, 0, sw, h}, NULL);
                if (b && b->macs > 0)
                    geomean_add(&macs[d], (double)b->macs);
            }
    int small = -1, large = -1, n_datasets = 0;
    for (int d = 0; d < s->n[STUDY_AXIS_MODEL]; d++) {
        if (!rows[d] || !macs[d].n)
            continue;
        n_datasets++;
        evidence(o, "%s%s: pruned faster in %d of %d tuned rows", n_datasets > 1 ? "; " : "",
                 s->model[d].dataset, wins[d], rows[d]);
        if (small < 0 || geomean_value(&macs[d]) < geomean_value(&macs[small]))
            small = d;
        if (large < 0 || geomean_value(&macs[d]) > geomean_value(&macs[large]))
            large = d;
    }
    if (n_datasets < 2) {
        evidence(o, "%sneeds tuned software, a baseline, pruning and 2 datasets",
                 n_datasets ? "; " : "");
        return;
    }
    o->verdict = 2 * wins[small] > rows[small] && 2 * wins[large] <= rows[large];
}

/* III: model size is not strongly correlated with accuracy: rho(params,
 * accuracy) over the baseline variants that carry an accuracy. */
static void observe_III(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "III", "model size is not strongly correlated with accuracy");
    const study_spec *s = &r->spec;
    int baseline = baseline_compression(s);
    double params[STUDY_MAX_ITEMS], accuracy[STUDY_MAX_ITEMS];
    int n = 0;
    for (int m = 0; m < s->n[STUDY_AXIS_MODEL] && baseline >= 0; m++)
        for (int64_t i = 0; i < r->n_cells; i++) {
            const study_cell *c = &r->cells[i];
            if (c->valid && c->coords[STUDY_AXIS_MODEL] == m &&
                c->coords[STUDY_AXIS_COMPRESSION] == baseline && isfinite(c->accuracy)) {
                params[n] = (double)c->params;
                accuracy[n++] = c->accuracy;
                break;
            }
        }
    double rho = study_spearman(params, accuracy, n);
    if (isnan(rho)) {
        evidence(o, "needs the baseline accuracy of 2 models or more (%d given)", n);
        return;
    }
    evidence(o, "params~accuracy over %d dense models: rho %.2f tau %.2f; strong = |rho| >= %.1f",
             n, rho, study_kendall(params, accuracy, n), STUDY_STRONG_CORRELATION);
    o->verdict = !strong(rho);
}

/* The pooled fraction and speedup of the pairs of compressions of kind
 * (any hardware; software of tuned `tuned`, or any when tuned < 0). */
typedef struct pooled {
    geomean speedup, fraction;
    int pairs, reached;
} pooled;

static pooled pool_kind(const study_result *r, const study_summary *s,
                        bool (*kind_ok)(study_compression_kind), int h, int tuned)
{
    pooled p = {{0, 0}, {0, 0}, 0, 0};
    for (int64_t i = 0; i < s->n_speedups; i++) {
        const study_speedup *sp = &s->speedups[i];
        if (!sp->n || !kind_ok(r->spec.compression[sp->compression].kind) ||
            (h >= 0 && sp->hardware != h) ||
            (tuned >= 0 && r->spec.software[sp->software].tuned != (tuned > 0)))
            continue;
        /* A record's geometric means over its n pairs re-enter with weight n. */
        p.speedup.log_sum += sp->n * log(sp->mean_speedup);
        p.speedup.n += sp->n;
        p.fraction.log_sum += sp->n * log(sp->mean_fraction);
        p.fraction.n += sp->n;
        p.pairs += sp->n;
        p.reached += sp->n_reached;
    }
    return p;
}

static bool kind_wp(study_compression_kind k)
{
    return k == STUDY_COMPRESS_WEIGHT_PRUNING;
}
static bool kind_cp(study_compression_kind k)
{
    return k == STUDY_COMPRESS_CHANNEL_PRUNING;
}
static bool kind_i8(study_compression_kind k)
{
    return k == STUDY_COMPRESS_INT8;
}
static bool kind_f16(study_compression_kind k)
{
    return k == STUDY_COMPRESS_FP16;
}

/* IV: weight pruning is faster than channel pruning, yet reaches less of
 * its expected speedup.  Per row, the fastest WP variant against the
 * fastest CP one; and the pooled fractions. */
static void observe_IV(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "IV",
                    "weight pruning is faster than channel pruning but reaches less of its "
                    "expected speedup");
    int rows = 0, wp_faster = 0;
    for (int64_t i = 0; i < out->n_rows; i++) {
        const study_summary_row *row = &out->rows[i];
        double wp = fastest_where(r, row->model, row->hardware, row->software, take_weight_pruning);
        double cp =
            fastest_where(r, row->model, row->hardware, row->software, take_channel_pruning);
        if (isfinite(wp) && isfinite(cp)) {
            rows++;
            wp_faster += wp < cp;
        }
    }
    pooled wp = pool_kind(r, out, kind_wp, -1, -1), cp = pool_kind(r, out, kind_cp, -1, -1);
    if (!rows || !wp.pairs || !cp.pairs) {
        evidence(o, "needs weight and channel pruning with a baseline");
        return;
    }
    double fwp = geomean_value(&wp.fraction), fcp = geomean_value(&cp.fraction);
    evidence(o,
             "WP faster than CP in %d of %d rows; fraction of expected speedup WP %.1f %%, "
             "CP %.1f %%",
             wp_faster, rows, 100 * fwp, 100 * fcp);
    o->verdict = 2 * wp_faster > rows && fwp < fcp;
}

/* V: quantisation's speedup varies by hardware and data type (float16 is
 * slower than float32 where the hardware emulates it).  Per hardware,
 * the pooled speedup of f16 and of i8; supported when f16 is slower
 * somewhere and some quantised speedup on some hardware is above 1; the
 * grid cannot say without float16. */
static void observe_V(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "V",
                    "quantisation's speedup varies by hardware and data type (float16 slower "
                    "where emulated)");
    bool f16_slower = false, some_faster = false, any = false, any_f16 = false;
    for (int h = 0; h < r->spec.n[STUDY_AXIS_HARDWARE]; h++) {
        pooled f16 = pool_kind(r, out, kind_f16, h, -1), i8 = pool_kind(r, out, kind_i8, h, -1);
        if (!f16.pairs && !i8.pairs)
            continue;
        double sf = geomean_value(&f16.speedup), si = geomean_value(&i8.speedup);
        evidence(o, "%s%s:", any ? "; " : "", r->spec.hardware[h].name);
        if (f16.pairs)
            evidence(o, " f16 x%.2f", sf);
        if (i8.pairs)
            evidence(o, "%s i8 x%.2f", f16.pairs ? "," : "", si);
        any = true;
        any_f16 |= f16.pairs > 0;
        f16_slower |= f16.pairs && sf < 1;
        some_faster |= (f16.pairs && sf > 1) || (i8.pairs && si > 1);
    }
    if (!any_f16) {
        evidence(o, "%sneeds float16 with a baseline", any ? "; " : "");
        return;
    }
    o->verdict = f16_slower && some_faster;
}

/* The most frequent algorithm among counts (the first on a tie), -1 when
 * all are zero. */
static int mode_of(const int *counts, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (counts[i] && (best < 0 || counts[i] > counts[best]))
            best = i;
    return best;
}

/* Per hardware, the most frequent fastest algorithm over the rows whose
 * software passes `tuned` (-1: any) and compressions of which kind_ok
 * holds; supported when the mode differs between two hardware. */
static void best_algorithm_by_hardware(const study_result *r, study_summary *out,
                                       study_observation *o, int tuned,
                                       bool (*kind_ok)(study_compression_kind))
{
    const study_spec *s = &r->spec;
    int first_mode = -1, n_hardware = 0;
    bool differ = false;
    for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE]; h++) {
        int counts[STUDY_MAX_ITEMS] = {0}, total = 0;
        for (int64_t i = 0; i < out->n_rows; i++) {
            const study_summary_row *row = &out->rows[i];
            if (row->hardware != h || (tuned >= 0 && s->software[row->software].tuned != tuned))
                continue;
            for (int c = 0; c < s->n[STUDY_AXIS_COMPRESSION]; c++)
                if (kind_ok(s->compression[c].kind) && row->best_algorithm[c] >= 0) {
                    counts[row->best_algorithm[c]]++;
                    total++;
                }
        }
        int mode = mode_of(counts, s->n[STUDY_AXIS_ALGORITHM]);
        if (mode < 0)
            continue;
        evidence(o, "%s%s: %s in %d of %d", n_hardware ? "; " : "", s->hardware[h].name,
                 s->algorithm[mode].name, counts[mode], total);
        differ |= n_hardware && mode != first_mode;
        if (!n_hardware++)
            first_mode = mode;
    }
    if (n_hardware < 2 || s->n[STUDY_AXIS_ALGORITHM] < 2) {
        evidence(o, "%sneeds 2 hardware and 2 algorithms with valid cells", n_hardware ? "; " : "");
        return;
    }
    o->verdict = differ;
}

static bool kind_none(study_compression_kind k)
{
    return k == STUDY_COMPRESS_NONE;
}

/* VII/VIII: when tuned, the best dense algorithm depends on the hardware
 * (spatial pack on CPUs, direct on GPUs in DLAS). */
static void observe_VII_VIII(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "VII/VIII", "the best tuned dense algorithm depends on the hardware");
    best_algorithm_by_hardware(r, out, o, 1, kind_none);
}

/* IX: for sparse models the best algorithm depends on the hardware too
 * (GEMM on CPUs, direct on GPUs in DLAS). */
static void observe_IX(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "IX", "the best algorithm for sparse models depends on the hardware");
    best_algorithm_by_hardware(r, out, o, -1, kind_wp);
}

static bool kind_pruning(study_compression_kind k)
{
    return is_pruning(k);
}

/* X: pruning rarely reaches its expected speedup: supported when fewer
 * than a quarter of the pruning pairs reach STUDY_REACHED_FRACTION of it. */
static void observe_X(const study_result *r, study_summary *out)
{
    study_observation *o = observation(out, "X", "pruning rarely reaches its expected speedup");
    pooled p = pool_kind(r, out, kind_pruning, -1, -1);
    if (!p.pairs) {
        evidence(o, "needs pruning with a baseline");
        return;
    }
    evidence(o,
             "pruning reached >= %.0f %% of its expected speedup in %d of %d pairs; mean "
             "fraction %.1f %%; rarely = under 25 %% of pairs",
             100 * STUDY_REACHED_FRACTION, p.reached, p.pairs, 100 * geomean_value(&p.fraction));
    o->verdict = 4 * p.reached < p.pairs;
}

/* XI: tuning changes the best algorithm or compression.  For each
 * (model, hardware), the first untuned software against each tuned one:
 * whether the overall fastest combination or the baseline's fastest
 * algorithm moved, and how much faster the tuned fastest is. */
static void observe_XI(const study_result *r, study_summary *out)
{
    study_observation *o = observation(
        out, "XI", "tuning accelerates inference and can change the best algorithm or compression");
    const study_spec *s = &r->spec;
    int untuned = -1, baseline = baseline_compression(s);
    for (int sw = 0; sw < s->n[STUDY_AXIS_SOFTWARE] && untuned < 0; sw++)
        if (!s->software[sw].tuned)
            untuned = sw;
    int pairs = 0, overall_moved = 0, dense_moved = 0;
    geomean gain = {0, 0};
    for (int64_t i = 0; i < out->n_rows && untuned >= 0; i++) {
        const study_summary_row *t = &out->rows[i];
        if (!s->software[t->software].tuned || t->overall_compression < 0)
            continue;
        const study_summary_row *u = NULL;
        for (int64_t j = 0; j < out->n_rows; j++)
            if (out->rows[j].software == untuned && out->rows[j].model == t->model &&
                out->rows[j].hardware == t->hardware)
                u = &out->rows[j];
        if (!u || u->overall_compression < 0)
            continue;
        pairs++;
        overall_moved += u->overall_compression != t->overall_compression ||
                         u->overall_algorithm != t->overall_algorithm;
        dense_moved += baseline >= 0 && u->best_algorithm[baseline] != t->best_algorithm[baseline];
        geomean_add(&gain, u->overall_latency_s / t->overall_latency_s);
    }
    if (!pairs) {
        evidence(o, "needs untuned and tuned software with valid cells");
        return;
    }
    evidence(o,
             "tuning moved the overall fastest in %d of %d (model, hardware, tuned) rows, the "
             "dense fastest algorithm in %d; fastest latency x%.2f faster tuned",
             overall_moved, pairs, dense_moved, geomean_value(&gain));
    o->verdict = overall_moved + dense_moved > 0;
}

/* XII: pruned models see a lower relative speedup when tuned: the pooled
 * speedup over the baseline of the pruning pairs, untuned against tuned. */
static void observe_XII(const study_result *r, study_summary *out)
{
    study_observation *o =
        observation(out, "XII", "pruned models see a lower relative speedup when tuned");
    pooled u = pool_kind(r, out, kind_pruning, -1, 0), t = pool_kind(r, out, kind_pruning, -1, 1);
    if (!u.pairs || !t.pairs) {
        evidence(o, "needs pruning, a baseline, and untuned and tuned software");
        return;
    }
    double su = geomean_value(&u.speedup), stuned = geomean_value(&t.speedup);
    evidence(o, "speedup of pruned over dense: untuned x%.2f (%d pairs), tuned x%.2f (%d pairs)",
             su, u.pairs, stuned, t.pairs);
    o->verdict = stuned < su;
}

/* XIII: one platform is generally the fastest: per (model, software), the
 * hardware of the fastest overall latency; supported when one hardware
 * wins at least three quarters of them. */
static void observe_XIII(const study_result *r, study_summary *out)
{
    study_observation *o = observation(out, "XIII", "one platform is generally the fastest");
    const study_spec *s = &r->spec;
    int wins[STUDY_MAX_ITEMS] = {0}, contests = 0;
    geomean best[STUDY_MAX_ITEMS] = {{0}};
    for (int sw = 0; sw < s->n[STUDY_AXIS_SOFTWARE]; sw++)
        for (int m = 0; m < s->n[STUDY_AXIS_MODEL]; m++) {
            int winner = -1;
            double t_win = INFINITY;
            for (int64_t i = 0; i < out->n_rows; i++) {
                const study_summary_row *row = &out->rows[i];
                if (row->software != sw || row->model != m || row->overall_compression < 0)
                    continue;
                geomean_add(&best[row->hardware], row->overall_latency_s);
                if (row->overall_latency_s < t_win) {
                    t_win = row->overall_latency_s;
                    winner = row->hardware;
                }
            }
            if (winner >= 0) {
                wins[winner]++;
                contests++;
            }
        }
    int top = mode_of(wins, s->n[STUDY_AXIS_HARDWARE]);
    if (s->n[STUDY_AXIS_HARDWARE] < 2 || top < 0) {
        evidence(o, "needs 2 hardware with valid cells");
        return;
    }
    evidence(o, "%s fastest in %d of %d (model, software) rows; mean fastest latency:",
             s->hardware[top].name, wins[top], contests);
    for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE]; h++)
        if (best[h].n) {
            char t[AS_SI_TEXT_BYTES];
            evidence(o, " %s %s", s->hardware[h].name,
                     as_format_si(geomean_value(&best[h]), "s", t));
        }
    o->verdict = 4 * wins[top] >= 3 * contests;
}

static void summarize_observations(const study_result *r, study_summary *out)
{
    observe_I(r, out);
    observe_II(r, out);
    observe_III(r, out);
    observe_IV(r, out);
    observe_V(r, out);
    observe_VII_VIII(r, out);
    observe_IX(r, out);
    observe_X(r, out);
    observe_XI(r, out);
    observe_XII(r, out);
    observe_XIII(r, out);
}

/* ----------------------------------------------------------------- entry */

as_code study_summarize(const study_result *r, study_summary *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    as_code code = summarize_rows(r, out, st);
    if (code == AS_OK)
        code = summarize_speedups(r, out, st);
    if (code == AS_OK)
        code = summarize_correlations(r, out, st);
    if (code != AS_OK) {
        study_summary_free(out);
        return code;
    }
    summarize_observations(r, out);
    return AS_OK;
}

void study_summary_free(study_summary *s)
{
    free(s->rows);
    free(s->speedups);
    free(s->correlations);
    memset(s, 0, sizeof *s);
}
