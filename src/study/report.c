/*
 * report.c -- a study as text, JSON and CSV (study.h "output").
 *
 * The text is the paper's: one table per dataset and software in the
 * columns of DLAS Table 3 (Platform, Model, the fastest algorithm per
 * compression, the fastest compression per algorithm, the overall
 * fastest combination as "WP+im2col"), then the fractions of expected
 * speedup, the rank correlations, the observations and the invalid cells
 * grouped by reason.  Quantities carry their unit (as_format_si).
 *
 * A compression is named by its kind's short name ("WP", "i8") when it is
 * the only entry of that kind, else by its own name ("wp90", "wp95"); an
 * algorithm by its entry's name.  The writers only write to the FILE *
 * they are given.
 */
#include "study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- labels */

/* The column label of compression c (see the header comment). */
static const char *compression_label(const study_spec *s, int c)
{
    const study_compression *k = &s->compression[c];
    int same_kind = 0;
    for (int i = 0; i < s->n[STUDY_AXIS_COMPRESSION]; i++)
        same_kind += s->compression[i].kind == k->kind;
    if (same_kind == 1 || !k->name[0])
        return study_compression_kind_short(k->kind);
    return k->name;
}

static const char *algorithm_label(const study_spec *s, int a)
{
    return a < 0 ? "-" : s->algorithm[a].name;
}

/* Distinct dataset labels, in the order of the models: the dataset of
 * model m is the first model of index <= m with the same label.  True
 * when m starts its dataset. */
static bool starts_dataset(const study_spec *s, int m)
{
    for (int i = 0; i < m; i++)
        if (!strcmp(s->model[i].dataset, s->model[m].dataset))
            return false;
    return true;
}

static const study_summary_row *find_row(const study_summary *sum, int m, int h, int sw)
{
    for (int64_t i = 0; i < sum->n_rows; i++) {
        const study_summary_row *row = &sum->rows[i];
        if (row->model == m && row->hardware == h && row->software == sw)
            return row;
    }
    return NULL;
}

/* ------------------------------------------------------------ text tables */

/* The widest table: Platform, Model, a column per compression and per
 * algorithm, Overall fastest, Latency, Format. */
enum { CELL_BYTES = 64, MAX_GROUPS = 4, MAX_COLUMNS = 2 * STUDY_MAX_ITEMS + 5 };

/* A table of text cells, row 0 the header, written with its columns
 * aligned; a group label may stand above a run of columns. */
typedef struct table {
    int cols, rows;
    int64_t capacity; /* cells */
    char (*cell)[CELL_BYTES];
    int n_groups;
    int group_col[MAX_GROUPS];
    const char *group_label[MAX_GROUPS];
    bool failed; /* out of memory */
} table;

/* A table of cols columns (at most MAX_COLUMNS, which the callers'
 * axes bound). */
static void table_init(table *t, int cols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols < MAX_COLUMNS ? cols : MAX_COLUMNS;
}

/* Add a row of empty cells; its index, or -1 when out of memory. */
static int table_add_row(table *t)
{
    if (!as_vec_reserve(&t->cell, &t->capacity, (int64_t)(t->rows + 1) * t->cols, CELL_BYTES)) {
        t->failed = true;
        return -1;
    }
    memset(t->cell[(int64_t)t->rows * t->cols], 0, (size_t)t->cols * CELL_BYTES);
    return t->rows++;
}

static void table_put(table *t, int row, int col, const char *fmt, ...) AS_PRINTF(4, 5);
static void table_put(table *t, int row, int col, const char *fmt, ...)
{
    if (row < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cell[(int64_t)row * t->cols + col], CELL_BYTES, fmt, ap);
    va_end(ap);
}

static void table_group(table *t, int col, const char *label)
{
    if (t->n_groups < MAX_GROUPS) {
        t->group_col[t->n_groups] = col;
        t->group_label[t->n_groups++] = label;
    }
}

/* The text of the cell, padded to width, two spaces between columns. */
static void table_write(FILE *f, const table *t)
{
    int width[MAX_COLUMNS] = {0};
    for (int r = 0; r < t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            int w = (int)strlen(t->cell[(int64_t)r * t->cols + c]);
            width[c] = w > width[c] ? w : width[c];
        }
    if (t->n_groups) {
        /* Each label starts above its first column (one space after the
         * previous label at least). */
        int cursor = 0;
        for (int g = 0; g < t->n_groups; g++) {
            int at = 0;
            for (int c = 0; c < t->group_col[g]; c++)
                at += width[c] + 2;
            int pad = at > cursor ? at - cursor : (g ? 1 : 0);
            cursor += fprintf(f, "%*s%s", pad, "", t->group_label[g]);
        }
        fputc('\n', f);
    }
    for (int r = 0; r < t->rows; r++) {
        int line = 0;
        for (int c = 0; c < t->cols; c++)
            line += fprintf(f, "%s%-*s", c ? "  " : "", c + 1 < t->cols ? width[c] : 0,
                            t->cell[(int64_t)r * t->cols + c]);
        fputc('\n', f);
        if (r == 0) {
            for (int i = 0; i < line; i++)
                fputc('-', f);
            fputc('\n', f);
        }
    }
}

static void table_free(table *t)
{
    free(t->cell);
    t->cell = NULL;
}

/* ------------------------------------------------------------- text parts */

/* The table of fastest combinations of software sw and the dataset of
 * model first (DLAS Table 3). */
static bool write_fastest_table(FILE *f, const study_result *r, const study_summary *sum, int sw,
                                int first)
{
    const study_spec *s = &r->spec;
    int nc = s->n[STUDY_AXIS_COMPRESSION], na = s->n[STUDY_AXIS_ALGORITHM];
    bool formats = s->n[STUDY_AXIS_FORMAT] > 1;
    table t;
    table_init(&t, 2 + nc + na + 2 + formats);
    int head = table_add_row(&t);
    table_put(&t, head, 0, "Platform");
    table_put(&t, head, 1, "Model");
    for (int c = 0; c < nc; c++)
        table_put(&t, head, 2 + c, "%s", compression_label(s, c));
    for (int a = 0; a < na; a++)
        table_put(&t, head, 2 + nc + a, "%s", algorithm_label(s, a));
    table_put(&t, head, 2 + nc + na, "Overall fastest");
    table_put(&t, head, 3 + nc + na, "Latency");
    if (formats)
        table_put(&t, head, 4 + nc + na, "Format");
    table_group(&t, 2, "Fastest algorithm");
    table_group(&t, 2 + nc, "Fastest compression");
    for (int h = 0; h < s->n[STUDY_AXIS_HARDWARE]; h++)
        for (int m = first; m < s->n[STUDY_AXIS_MODEL]; m++) {
            const study_summary_row *row = find_row(sum, m, h, sw);
            if (!row || strcmp(s->model[m].dataset, s->model[first].dataset))
                continue;
            int k = table_add_row(&t);
            table_put(&t, k, 0, "%s", s->hardware[h].name);
            table_put(&t, k, 1, "%s", s->model[m].name);
            for (int c = 0; c < nc; c++)
                table_put(&t, k, 2 + c, "%s", algorithm_label(s, row->best_algorithm[c]));
            for (int a = 0; a < na; a++)
                table_put(&t, k, 2 + nc + a, "%s",
                          row->best_compression[a] < 0
                              ? "-"
                              : compression_label(s, row->best_compression[a]));
            char latency[AS_SI_TEXT_BYTES];
            if (row->overall_compression < 0) {
                table_put(&t, k, 2 + nc + na, "-");
                table_put(&t, k, 3 + nc + na, "-");
            } else {
                table_put(&t, k, 2 + nc + na, "%s+%s",
                          compression_label(s, row->overall_compression),
                          algorithm_label(s, row->overall_algorithm));
                table_put(&t, k, 3 + nc + na, "%s",
                          as_format_si(row->overall_latency_s, "s", latency));
                if (formats)
                    table_put(&t, k, 4 + nc + na, "%s", s->format[row->overall_format].name);
            }
        }
    fprintf(f, "\nFastest combinations -- dataset %s, software %s (DLAS Tables 3, 4, 6)\n",
            s->model[first].dataset[0] ? s->model[first].dataset : "-", s->software[sw].name);
    if (!t.failed)
        table_write(f, &t);
    table_free(&t);
    return !t.failed;
}

static bool write_speedups(FILE *f, const study_result *r, const study_summary *sum)
{
    const study_spec *s = &r->spec;
    fprintf(f,
            "\nFraction of expected speedup (expected: effective-MAC reduction for pruning, "
            "weight-byte reduction for int8/float16;\ngeometric means over models and "
            "algorithms, each side at its fastest format; reached: >= %.0f %% of expected)\n",
            100 * STUDY_REACHED_FRACTION);
    if (!sum->n_speedups) {
        fputs("(none: the study has no baseline or no compression)\n", f);
        return true;
    }
    table t;
    table_init(&t, 8);
    int head = table_add_row(&t);
    const char *names[] = {"Software", "Platform", "Compression", "Pairs",
                           "Speedup",  "Expected", "Fraction",    "Reached"};
    for (int i = 0; i < 8; i++)
        table_put(&t, head, i, "%s", names[i]);
    for (int64_t i = 0; i < sum->n_speedups; i++) {
        const study_speedup *sp = &sum->speedups[i];
        int k = table_add_row(&t);
        table_put(&t, k, 0, "%s", s->software[sp->software].name);
        table_put(&t, k, 1, "%s", s->hardware[sp->hardware].name);
        table_put(&t, k, 2, "%s", compression_label(s, sp->compression));
        table_put(&t, k, 3, "%d", sp->n);
        if (!sp->n) {
            for (int c = 4; c < 8; c++)
                table_put(&t, k, c, "-");
            continue;
        }
        table_put(&t, k, 4, "%.2fx", sp->mean_speedup);
        table_put(&t, k, 5, "%.2fx", sp->mean_expected);
        table_put(&t, k, 6, "%.1f %%", 100 * sp->mean_fraction);
        table_put(&t, k, 7, "%d of %d", sp->n_reached, sp->n);
    }
    if (!t.failed)
        table_write(f, &t);
    table_free(&t);
    return !t.failed;
}

static bool write_correlations(FILE *f, const study_result *r, const study_summary *sum)
{
    fprintf(f,
            "\nRank correlations (Spearman rho, Kendall tau-b, over valid cells; strong: |rho| "
            ">= %.1f)\n",
            STUDY_STRONG_CORRELATION);
    table t;
    table_init(&t, 7);
    int head = table_add_row(&t);
    const char *names[] = {"Platform", "X", "Y", "Cells", "rho", "tau", "Strong"};
    for (int i = 0; i < 7; i++)
        table_put(&t, head, i, "%s", names[i]);
    for (int64_t i = 0; i < sum->n_correlations; i++) {
        const study_correlation *c = &sum->correlations[i];
        int k = table_add_row(&t);
        table_put(&t, k, 0, "%s", c->hardware < 0 ? "all" : r->spec.hardware[c->hardware].name);
        table_put(&t, k, 1, "%s", c->x);
        table_put(&t, k, 2, "%s", c->y);
        table_put(&t, k, 3, "%lld", (long long)c->n);
        if (isnan(c->spearman)) {
            table_put(&t, k, 4, "-");
            table_put(&t, k, 5, "-");
            table_put(&t, k, 6, "-");
            continue;
        }
        table_put(&t, k, 4, "%+.3f", c->spearman);
        table_put(&t, k, 5, "%+.3f", c->kendall);
        table_put(&t, k, 6, "%s", fabs(c->spearman) >= STUDY_STRONG_CORRELATION ? "yes" : "no");
    }
    if (!t.failed)
        table_write(f, &t);
    table_free(&t);
    return !t.failed;
}

static void write_observations(FILE *f, const study_summary *sum)
{
    fputs("\nDLAS observations (section 6) on this grid\n", f);
    for (int i = 0; i < sum->n_observations; i++) {
        const study_observation *o = &sum->observations[i];
        fprintf(f, "%-8s [%s] %s\n         %s\n", o->id, study_verdict_name(o->verdict), o->claim,
                o->evidence);
    }
}

/* ----------------------------------------------------------- invalid cells */

/* The distinct reasons of the invalid cells and how many cells give each,
 * most frequent first (first seen first on a tie). */
typedef struct reason_count {
    const char *reason;
    int64_t cells;
} reason_count;

static int reason_cmp(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    return (x->cells < y->cells) - (x->cells > y->cells);
}

/* *out malloc'd (caller frees), *n distinct reasons; false when out of
 * memory. */
static bool group_reasons(const study_result *r, reason_count **out, int64_t *n)
{
    *n = 0;
    *out = malloc((size_t)(r->n_cells ? r->n_cells : 1) * sizeof **out);
    if (!*out)
        return false;
    for (int64_t i = 0; i < r->n_cells; i++) {
        if (r->cells[i].valid)
            continue;
        int64_t k = 0;
        while (k < *n && strcmp((*out)[k].reason, r->cells[i].reason))
            k++;
        if (k == *n)
            (*out)[(*n)++] = (reason_count){r->cells[i].reason, 0};
        (*out)[k].cells++;
    }
    /* qsort is not stable: the first-seen order of a tie is kept by
     * sorting on (count, then position), which merge order gives. */
    for (int64_t i = 1; i < *n; i++)
        for (int64_t j = i; j > 0 && reason_cmp(&(*out)[j - 1], &(*out)[j]) > 0; j--) {
            reason_count t = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = t;
        }
    return true;
}

static bool write_invalid(FILE *f, const study_result *r)
{
    reason_count *reasons;
    int64_t n, invalid = 0;
    if (!group_reasons(r, &reasons, &n))
        return false;
    for (int64_t i = 0; i < n; i++)
        invalid += reasons[i].cells;
    fprintf(f, "\nInvalid cells: %lld of %lld\n", (long long)invalid, (long long)r->n_cells);
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "  %6lld cells  %s\n", (long long)reasons[i].cells,
                reasons[i].reason[0] ? reasons[i].reason : "(no reason given)");
    free(reasons);
    return true;
}

as_code study_write_text(FILE *f, const study_result *r, const study_summary *s, as_status *st)
{
    const study_spec *spec = &r->spec;
    fprintf(f, "Study %s: %lld cells, %lld done%s", spec->name, (long long)r->n_cells,
            (long long)r->n_done, r->interrupted ? " (interrupted)" : "");
    if (r->run_id)
        fprintf(f, ", run %lld", (long long)r->run_id);
    fputc('\n', f);
    bool ok = true;
    if (s) {
        for (int sw = 0; sw < spec->n[STUDY_AXIS_SOFTWARE]; sw++)
            for (int m = 0; m < spec->n[STUDY_AXIS_MODEL]; m++)
                if (starts_dataset(spec, m))
                    ok = ok && write_fastest_table(f, r, s, sw, m);
        ok = ok && write_speedups(f, r, s) && write_correlations(f, r, s);
        if (ok)
            write_observations(f, s);
    }
    ok = ok && write_invalid(f, r);
    if (!ok)
        return as_fail(st, AS_ENOMEM, "study report: out of memory");
    if (ferror(f))
        return as_fail(st, AS_EIO, "study report: write failed");
    return AS_OK;
}

/* ------------------------------------------------------------------- JSON */

/* JSON building: every put goes through the core's helpers; the first
 * failure (out of memory) sticks in *ok. */
typedef struct jb {
    bool ok;
} jb;

static void put(jb *b, json_t *o, const char *key, json_t *v)
{
    b->ok = as_json_put(o, key, v) && b->ok;
}

static void push(jb *b, json_t *a, json_t *v)
{
    b->ok = as_json_push(a, v) && b->ok;
}

static void put_str(jb *b, json_t *o, const char *key, const char *s)
{
    put(b, o, key, as_json_string(s));
}

static void put_num(jb *b, json_t *o, const char *key, double v)
{
    put(b, o, key, as_json_number(v));
}

static void put_int(jb *b, json_t *o, const char *key, int64_t v)
{
    put(b, o, key, json_integer(v));
}

static void put_bool(jb *b, json_t *o, const char *key, bool v)
{
    put(b, o, key, json_boolean(v));
}

/* An axis entry's label, or null for -1. */
static json_t *label_or_null(const char *label, int index)
{
    return index < 0 ? json_null() : as_json_string(label);
}

static json_t *json_axes(jb *b, const study_spec *s)
{
    json_t *axes = json_object(), *a;
    put(b, axes, "model", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_MODEL]; i++) {
        json_t *o = json_object();
        put_str(b, o, "name", s->model[i].name);
        put_str(b, o, "source", s->model[i].source);
        put_str(b, o, "dataset", s->model[i].dataset);
        push(b, a, o);
    }
    put(b, axes, "compression", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_COMPRESSION]; i++) {
        const study_compression *c = &s->compression[i];
        json_t *o = json_object();
        put_str(b, o, "name", c->name);
        put_str(b, o, "label", compression_label(s, i));
        put_str(b, o, "kind", study_compression_kind_name(c->kind));
        if (c->kind == STUDY_COMPRESS_WEIGHT_PRUNING)
            put_num(b, o, "density", c->density);
        if (c->kind == STUDY_COMPRESS_CHANNEL_PRUNING)
            put_num(b, o, "keep", c->keep);
        push(b, a, o);
    }
    put(b, axes, "algorithm", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_ALGORITHM]; i++) {
        json_t *o = json_object(), *layers = json_array();
        put_str(b, o, "name", s->algorithm[i].name);
        for (int l = 0; layers && l < s->algorithm[i].n_layers; l++)
            push(b, layers, as_json_string(s->algorithm[i].layers[l].layer));
        put(b, o, "layer_overrides", layers);
        push(b, a, o);
    }
    put(b, axes, "format", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_FORMAT]; i++)
        push(b, a, as_json_string(s->format[i].name));
    put(b, axes, "software", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_SOFTWARE]; i++) {
        const study_software *w = &s->software[i];
        json_t *o = json_object();
        put_str(b, o, "name", w->name);
        put_bool(b, o, "tuned", w->tuned);
        put_int(b, o, "map_budget", w->map_budget);
        put_bool(b, o, "fusion", w->fusion);
        put_int(b, o, "fusion_budget", w->fusion_budget);
        push(b, a, o);
    }
    put(b, axes, "hardware", a = json_array());
    for (int i = 0; a && i < s->n[STUDY_AXIS_HARDWARE]; i++) {
        const study_hardware *h = &s->hardware[i];
        json_t *o = json_object();
        put_str(b, o, "name", h->name);
        put_str(b, o, "source", h->source);
        if (h->is_space_point)
            put_str(b, o, "point", h->point);
        push(b, a, o);
    }
    return axes;
}

static json_t *json_cell(jb *b, const study_spec *s, int64_t index, const study_cell *c)
{
    json_t *o = json_object();
    const int *k = c->coords;
    put_int(b, o, "index", index);
    put_str(b, o, "model", s->model[k[STUDY_AXIS_MODEL]].name);
    put_str(b, o, "compression", compression_label(s, k[STUDY_AXIS_COMPRESSION]));
    put_str(b, o, "algorithm", algorithm_label(s, k[STUDY_AXIS_ALGORITHM]));
    put_str(b, o, "format", s->format[k[STUDY_AXIS_FORMAT]].name);
    put_str(b, o, "software", s->software[k[STUDY_AXIS_SOFTWARE]].name);
    put_str(b, o, "hardware", s->hardware[k[STUDY_AXIS_HARDWARE]].name);
    put_bool(b, o, "valid", c->valid);
    put(b, o, "reason", c->valid ? json_null() : as_json_string(c->reason));
    if (!c->valid)
        return o;
    put_num(b, o, "latency_s", c->metrics.latency_s);
    put_num(b, o, "energy_J", c->metrics.energy_pJ * 1e-12);
    put_num(b, o, "area_mm2", c->metrics.area_mm2);
    put_num(b, o, "power_W", c->metrics.power_W);
    put_num(b, o, "edp_Js", c->metrics.edp_Js);
    put_num(b, o, "perf_per_tdp", c->metrics.perf_per_tdp);
    put_int(b, o, "macs", c->macs);
    put_int(b, o, "effective_macs", c->effective_macs);
    put_int(b, o, "params", c->params);
    put_int(b, o, "nonzero_params", c->nonzero_params);
    put_int(b, o, "weight_bytes", c->weight_bytes);
    put_int(b, o, "dram_bytes", c->dram_bytes);
    put_int(b, o, "n_lowered", c->n_lowered);
    put_num(b, o, "accuracy", c->accuracy);
    return o;
}

/* Cells whose coordinates are out of the spec's axes (never stored that
 * way; a corrupt store row) are left out rather than read past an axis. */
static bool cell_in_spec(const study_spec *s, const study_cell *c)
{
    for (int a = 0; a < STUDY_NAXES; a++)
        if (c->coords[a] < 0 || c->coords[a] >= s->n[a])
            return false;
    return true;
}

static json_t *json_row(jb *b, const study_spec *s, const study_summary_row *row)
{
    json_t *o = json_object(), *by_c = json_object(), *by_a = json_object(),
           *overall = json_object();
    put_str(b, o, "model", s->model[row->model].name);
    put_str(b, o, "dataset", s->model[row->model].dataset);
    put_str(b, o, "hardware", s->hardware[row->hardware].name);
    put_str(b, o, "software", s->software[row->software].name);
    for (int c = 0; by_c && c < s->n[STUDY_AXIS_COMPRESSION]; c++)
        put(b, by_c, compression_label(s, c),
            label_or_null(algorithm_label(s, row->best_algorithm[c]), row->best_algorithm[c]));
    put(b, o, "fastest_algorithm", by_c);
    for (int a = 0; by_a && a < s->n[STUDY_AXIS_ALGORITHM]; a++) {
        int c = row->best_compression[a];
        put(b, by_a, algorithm_label(s, a), label_or_null(c < 0 ? "" : compression_label(s, c), c));
    }
    put(b, o, "fastest_compression", by_a);
    if (row->overall_compression >= 0) {
        put_str(b, overall, "compression", compression_label(s, row->overall_compression));
        put_str(b, overall, "algorithm", algorithm_label(s, row->overall_algorithm));
        put_str(b, overall, "format", s->format[row->overall_format].name);
        put_num(b, overall, "latency_s", row->overall_latency_s);
        put(b, o, "overall_fastest", overall);
    } else {
        json_decref(overall);
        put(b, o, "overall_fastest", json_null());
    }
    return o;
}

static json_t *json_summary(jb *b, const study_spec *s, const study_summary *sum)
{
    json_t *o = json_object(), *a;
    put(b, o, "rows", a = json_array());
    for (int64_t i = 0; a && i < sum->n_rows; i++)
        push(b, a, json_row(b, s, &sum->rows[i]));
    put(b, o, "speedups", a = json_array());
    for (int64_t i = 0; a && i < sum->n_speedups; i++) {
        const study_speedup *sp = &sum->speedups[i];
        json_t *e = json_object();
        put_str(b, e, "compression", compression_label(s, sp->compression));
        put_str(b, e, "hardware", s->hardware[sp->hardware].name);
        put_str(b, e, "software", s->software[sp->software].name);
        put_int(b, e, "pairs", sp->n);
        put_num(b, e, "speedup", sp->mean_speedup);
        put_num(b, e, "expected", sp->mean_expected);
        put_num(b, e, "fraction", sp->mean_fraction);
        put_int(b, e, "reached", sp->n_reached);
        push(b, a, e);
    }
    put(b, o, "correlations", a = json_array());
    for (int64_t i = 0; a && i < sum->n_correlations; i++) {
        const study_correlation *c = &sum->correlations[i];
        json_t *e = json_object();
        put(b, e, "hardware",
            label_or_null(c->hardware < 0 ? "" : s->hardware[c->hardware].name, c->hardware));
        put_str(b, e, "x", c->x);
        put_str(b, e, "y", c->y);
        put_int(b, e, "n", c->n);
        put_num(b, e, "spearman", c->spearman);
        put_num(b, e, "kendall", c->kendall);
        push(b, a, e);
    }
    put(b, o, "observations", a = json_array());
    for (int i = 0; a && i < sum->n_observations; i++) {
        const study_observation *ob = &sum->observations[i];
        json_t *e = json_object();
        put_str(b, e, "id", ob->id);
        put_str(b, e, "claim", ob->claim);
        put_int(b, e, "verdict", ob->verdict);
        put_str(b, e, "verdict_name", study_verdict_name(ob->verdict));
        put_str(b, e, "evidence", ob->evidence);
        push(b, a, e);
    }
    put_num(b, o, "strong_correlation", STUDY_STRONG_CORRELATION);
    put_num(b, o, "reached_fraction", STUDY_REACHED_FRACTION);
    return o;
}

static json_t *json_invalid(jb *b, const study_result *r)
{
    reason_count *reasons;
    int64_t n;
    if (!group_reasons(r, &reasons, &n)) {
        b->ok = false;
        return NULL;
    }
    json_t *a = json_array();
    for (int64_t i = 0; a && i < n; i++) {
        json_t *e = json_object();
        put_str(b, e, "reason", reasons[i].reason);
        put_int(b, e, "cells", reasons[i].cells);
        push(b, a, e);
    }
    free(reasons);
    return a;
}

json_t *study_to_json(const study_result *r, const study_summary *s, as_status *st)
{
    jb b = {true};
    const study_spec *spec = &r->spec;
    json_t *root = json_object(), *study = json_object(), *cells = json_array();
    put_str(&b, study, "name", spec->name);
    /* jansson's integers are signed: a seed above INT64_MAX goes as text
     * (as `runs show --json` writes it). */
    if (spec->seed <= INT64_MAX)
        put_int(&b, study, "seed", (int64_t)spec->seed);
    else {
        char seed[24];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)spec->seed);
        put_str(&b, study, "seed", seed);
    }
    put_int(&b, study, "batch", spec->batch);
    put_int(&b, study, "run_id", r->run_id);
    put_int(&b, study, "cells", r->n_cells);
    put_int(&b, study, "done", r->n_done);
    put_bool(&b, study, "interrupted", r->interrupted);
    put(&b, root, "study", study);
    put(&b, root, "axes", json_axes(&b, spec));
    for (int64_t i = 0; cells && i < r->n_cells; i++)
        if (cell_in_spec(spec, &r->cells[i]))
            push(&b, cells, json_cell(&b, spec, i, &r->cells[i]));
    put(&b, root, "cells", cells);
    if (s)
        put(&b, root, "summary", json_summary(&b, spec, s));
    put(&b, root, "invalid", json_invalid(&b, r));
    if (!b.ok || !root) {
        json_decref(root);
        as_fail(st, AS_ENOMEM, "study JSON: out of memory");
        return NULL;
    }
    return root;
}

json_t *study_report_data(const study_result *r, const study_summary *s, as_status *st)
{
    json_t *data = study_to_json(r, s, st);
    if (data && !as_json_put(data, "kind", as_json_string("study"))) {
        json_decref(data);
        as_fail(st, AS_ENOMEM, "study report: out of memory");
        return NULL;
    }
    return data;
}

/* -------------------------------------------------------------------- CSV */

static const char *const CSV_COLUMNS[] = {
    "index",    "model",          "dataset",      "compression",  "algorithm", "format",
    "software", "hardware",       "valid",        "reason",       "latency_s", "energy_J",
    "area_mm2", "power_W",        "edp_Js",       "perf_per_tdp", "macs",      "effective_macs",
    "params",   "nonzero_params", "weight_bytes", "dram_bytes",   "n_lowered", "accuracy"};
enum { N_CSV_COLUMNS = sizeof CSV_COLUMNS / sizeof CSV_COLUMNS[0] };

static void csv_double(FILE *f, double v)
{
    char text[AS_DOUBLE_TEXT_BYTES];
    fputc(',', f);
    if (!isnan(v))
        fputs(as_format_double(v, text), f);
}

static void csv_label(FILE *f, const char *s)
{
    fputc(',', f);
    store_csv_string(f, s);
}

static void csv_cell(FILE *f, const study_spec *s, int64_t index, const study_cell *c)
{
    const int *k = c->coords;
    fprintf(f, "%lld", (long long)index);
    csv_label(f, s->model[k[STUDY_AXIS_MODEL]].name);
    csv_label(f, s->model[k[STUDY_AXIS_MODEL]].dataset);
    csv_label(f, compression_label(s, k[STUDY_AXIS_COMPRESSION]));
    csv_label(f, algorithm_label(s, k[STUDY_AXIS_ALGORITHM]));
    csv_label(f, s->format[k[STUDY_AXIS_FORMAT]].name);
    csv_label(f, s->software[k[STUDY_AXIS_SOFTWARE]].name);
    csv_label(f, s->hardware[k[STUDY_AXIS_HARDWARE]].name);
    fputs(c->valid ? ",true" : ",false", f);
    csv_label(f, c->valid ? "" : c->reason);
    if (!c->valid) {
        for (int i = 10; i < N_CSV_COLUMNS; i++)
            fputc(',', f);
        fputs("\r\n", f);
        return;
    }
    const as_metrics *m = &c->metrics;
    csv_double(f, m->latency_s);
    csv_double(f, m->energy_pJ * 1e-12);
    csv_double(f, m->area_mm2);
    csv_double(f, m->power_W);
    csv_double(f, m->edp_Js);
    csv_double(f, m->perf_per_tdp);
    fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%d", (long long)c->macs,
            (long long)c->effective_macs, (long long)c->params, (long long)c->nonzero_params,
            (long long)c->weight_bytes, (long long)c->dram_bytes, c->n_lowered);
    csv_double(f, c->accuracy);
    fputs("\r\n", f);
}

as_code study_write_csv(FILE *f, const study_result *r, as_status *st)
{
    for (int i = 0; i < N_CSV_COLUMNS; i++)
        fprintf(f, "%s%s", i ? "," : "", CSV_COLUMNS[i]);
    fputs("\r\n", f);
    for (int64_t i = 0; i < r->n_cells; i++)
        if (cell_in_spec(&r->spec, &r->cells[i]))
            csv_cell(f, &r->spec, i, &r->cells[i]);
    if (ferror(f))
        return as_fail(st, AS_EIO, "study CSV: write failed");
    return AS_OK;
}
