/*
 * test_cli_csv.c -- the tables the commands write as CSV (--csv FILE|-)
 * and their usual output to a file (-o FILE), end to end
 * (docs/cli-output.md): each table parsed back by an RFC 4180 reader of
 * its own, with its columns and one row per layer, group, level and data
 * space, or design, its figures equal to the JSON's; a layer named with a
 * comma and quotes quoted and read back whole; -o FILE holding what
 * standard output would; unwritable paths refused naming the file.
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

#include <jansson.h>

#include "core/core.h"
#include "workload/workload.h"

#include "cli_run.h"

/* A layer name with a comma and quotes: quoted, its quotes doubled. */
#define ODD_NAME "conv1, \"first\""
#define ODD_NAME_CSV "\"conv1, \"\"first\"\"\""

static char model_path[512], db_path[512], eval_input[600], eval_ert[600];

/* resnet18_cifar saved as ONNX with its first layer named ODD_NAME. */
static int setup(void **state)
{
    (void)state;
    snprintf(model_path, sizeof model_path, "%s/cli_csv_model.onnx", AS_TEST_TMP_DIR);
    snprintf(db_path, sizeof db_path, "%s/cli_csv.db", AS_TEST_TMP_DIR);
    snprintf(eval_input, sizeof eval_input, "%s/timeloop/micro_conv1d_2level_os/model-input.yaml",
             AS_TEST_DATA_DIR);
    snprintf(eval_ert, sizeof eval_ert, "%s/timeloop/micro_conv1d_2level_os/ERT.yaml",
             AS_TEST_DATA_DIR);
    wl_graph *g;
    as_status st;
    as_status_clear(&st);
    if (wl_zoo_build("resnet18_cifar", &g, &st) != AS_OK)
        fail_msg("%s", st.message);
    g->ops[0].name = ODD_NAME;
    if (wl_onnx_save(g, model_path, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph_free(g);
    remove_store(db_path);
    return 0;
}

/* ------------------------------------------------------------ the reader */

enum { MAX_ROWS = 512, MAX_FIELDS = 48 };

/* A CSV table read back: rows of fields (malloc'd). */
typedef struct table {
    int n_rows;
    int n_fields[MAX_ROWS];
    char *field[MAX_ROWS][MAX_FIELDS];
} table;

/*
 * RFC 4180: records end in CRLF (every one, the last too), fields are
 * separated by commas, a field that starts with a quote runs to the
 * closing quote with "" for a quote inside and may hold commas, CR and
 * LF; any other field holds none of them nor a quote.  Fails the test
 * on anything else.
 */
static table *read_csv(const char *text)
{
    table *t = calloc(1, sizeof *t);
    assert_non_null(t);
    const char *p = text;
    while (*p) {
        assert_true(t->n_rows < MAX_ROWS);
        int row = t->n_rows++;
        for (;;) {
            assert_true(t->n_fields[row] < MAX_FIELDS);
            size_t cap = strlen(p) + 1, n = 0;
            char *f = malloc(cap);
            assert_non_null(f);
            if (*p == '"') {
                for (p++;; p++) {
                    if (!*p)
                        fail_msg("unterminated quoted field");
                    if (*p == '"' && p[1] != '"')
                        break;
                    if (*p == '"')
                        p++;
                    f[n++] = *p;
                }
                p++; /* the closing quote */
            } else {
                for (; *p && *p != ',' && *p != '\r' && *p != '\n'; p++) {
                    if (*p == '"')
                        fail_msg("a quote in an unquoted field: %.40s", p);
                    f[n++] = *p;
                }
            }
            f[n] = '\0';
            t->field[row][t->n_fields[row]++] = f;
            if (*p == ',') {
                p++;
                continue;
            }
            if (p[0] != '\r' || p[1] != '\n')
                fail_msg("row %d does not end in CRLF: %.40s", row, p);
            p += 2;
            break;
        }
    }
    return t;
}

static void free_table(table *t)
{
    for (int r = 0; r < t->n_rows; r++)
        for (int f = 0; f < t->n_fields[r]; f++)
            free(t->field[r][f]);
    free(t);
}

/* Index of column name in the header, failing when absent. */
static int column(const table *t, const char *name)
{
    for (int f = 0; f < t->n_fields[0]; f++)
        if (strcmp(t->field[0][f], name) == 0)
            return f;
    fail_msg("no column '%s'", name);
    return -1;
}

/* The header is exactly names (NULL-terminated), and every row has as
 * many fields. */
static void expect_columns(const table *t, const char *const *names)
{
    int n = 0;
    while (names[n])
        n++;
    assert_true(t->n_rows >= 1);
    assert_int_equal(t->n_fields[0], n);
    for (int f = 0; f < n; f++)
        if (strcmp(t->field[0][f], names[f]) != 0)
            fail_msg("column %d is '%s', want '%s'", f, t->field[0][f], names[f]);
    for (int r = 1; r < t->n_rows; r++)
        assert_int_equal(t->n_fields[r], n);
}

static double number(const table *t, int row, const char *name)
{
    char *end;
    const char *s = t->field[row][column(t, name)];
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0')
        fail_msg("row %d, %s: '%s' is not a number", row, name, s);
    return v;
}

static const char *text(const table *t, int row, const char *name)
{
    return t->field[row][column(t, name)];
}

/* ------------------------------------------------------------- running */

static void runf(run_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void runf(run_result *r, const char *fmt, ...)
{
    char args[3072];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof args);
    run(r, args);
    if (r->status != 0)
        fail_msg("accelsearch %s: exit %d: %s", args, r->status, r->err);
}

static json_t *parse_json(const char *s)
{
    json_error_t error;
    json_t *v = json_loads(s, 0, &error);
    if (!v)
        fail_msg("not JSON: line %d: %s", error.line, error.text);
    return v;
}

/* The whole file at path (malloc'd). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: not written", path);
    char *s = calloc(CLI_OUT_BYTES, 1);
    assert_non_null(s);
    size_t n = fread(s, 1, CLI_OUT_BYTES - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* `accelsearch ARGS --csv -` and `ARGS --csv FILE -o FILE2`: the CSV on
 * standard output (returned, malloc'd) equals FILE, and FILE2 equals
 * plain `ARGS`'s standard output. */
static char *csv_of(const char *args)
{
    char csv_file[512], out_file[512];
    snprintf(csv_file, sizeof csv_file, "%s/cli_csv_table.csv", AS_TEST_TMP_DIR);
    snprintf(out_file, sizeof out_file, "%s/cli_csv_out.txt", AS_TEST_TMP_DIR);
    remove(csv_file);
    remove(out_file);
    run_result to_stdout, to_files, usual;
    runf(&to_stdout, "%s --csv -", args);
    runf(&to_files, "%s --csv '%s' -o '%s'", args, csv_file, out_file);
    assert_string_equal(to_files.out, ""); /* everything went to the files */
    runf(&usual, "%s", args);
    char *csv = slurp(csv_file), *out = slurp(out_file);
    assert_string_equal(csv, to_stdout.out);
    assert_string_equal(out, usual.out);
    free(csv);
    free(out);
    free(to_files.out);
    free(usual.out);
    return to_stdout.out;
}

/* ---------------------------------------------------------------- tests */

static void test_model_info(void **state)
{
    (void)state;
    static const char *const columns[] = {"index",
                                          "layer",
                                          "op",
                                          "category",
                                          "output_shape",
                                          "macs",
                                          "params",
                                          "bytes_read",
                                          "bytes_written",
                                          "output_elements",
                                          "fusable",
                                          "problem_kind",
                                          "problem",
                                          NULL};
    char args[700];
    snprintf(args, sizeof args, "model info '%s'", model_path);
    char *csv = csv_of(args);
    assert_non_null(strstr(csv, "\r\n0," ODD_NAME_CSV ",Conv,")); /* quoted as RFC 4180 says */
    table *t = read_csv(csv);
    expect_columns(t, columns);
    run_result r;
    runf(&r, "%s --json", args);
    json_t *j = parse_json(r.out);
    json_t *layers = json_object_get(j, "layers");
    assert_int_equal(t->n_rows - 1, (int)json_array_size(layers)); /* one row per layer */
    for (int i = 0; i < t->n_rows - 1; i++) {
        const json_t *l = json_array_get(layers, (size_t)i);
        assert_string_equal(text(t, i + 1, "layer"), json_string_value(json_object_get(l, "name")));
        assert_true(number(t, i + 1, "macs") ==
                    (double)json_integer_value(json_object_get(l, "macs")));
        assert_true(number(t, i + 1, "bytes_read") ==
                    (double)json_integer_value(json_object_get(l, "bytes_read")));
    }
    assert_string_equal(text(t, 1, "layer"), ODD_NAME); /* read back whole */
    assert_string_equal(text(t, 1, "output_shape"), "[1,64,32,32]");
    json_decref(j);
    free(r.out);
    free_table(t);
    free(csv);
}

/* map --model: one row per layer, the JSON's figures. */
static void test_map_model(void **state)
{
    (void)state;
    char args[700];
    snprintf(args, sizeof args,
             "map --arch eyeriss --model '%s' --map-budget 64 --threads 2 --seed 3", model_path);
    char *csv = csv_of(args);
    table *t = read_csv(csv);
    static const char *const columns[] = {"layer",
                                          "op",
                                          "problem_class",
                                          "mapped",
                                          "epilogue_ops",
                                          "macs",
                                          "padded_macs",
                                          "cycles",
                                          "latency_s",
                                          "energy_pJ",
                                          "utilization",
                                          "dram_bytes",
                                          "energy_mac_pJ",
                                          "energy_onchip_pJ",
                                          "energy_dram_pJ",
                                          "energy_network_vector_pJ",
                                          NULL};
    expect_columns(t, columns);
    run_result r;
    runf(&r, "%s --json", args);
    json_t *j = parse_json(r.out);
    json_t *layers = json_object_get(j, "layers");
    assert_int_equal(t->n_rows - 1, (int)json_array_size(layers));
    double cycle_s =
        json_number_value(json_object_get(json_object_get(j, "totals"), "latency_s")) /
        (double)json_integer_value(json_object_get(json_object_get(j, "totals"), "cycles"));
    for (int i = 0; i < t->n_rows - 1; i++) {
        const json_t *l = json_array_get(layers, (size_t)i);
        assert_string_equal(text(t, i + 1, "layer"), json_string_value(json_object_get(l, "name")));
        assert_true(number(t, i + 1, "cycles") ==
                    (double)json_integer_value(json_object_get(l, "cycles")));
        assert_true(number(t, i + 1, "energy_pJ") ==
                    json_number_value(json_object_get(l, "energy_pJ")));
        assert_true(number(t, i + 1, "dram_bytes") ==
                    (double)json_integer_value(json_object_get(l, "dram_bytes")));
        double latency = number(t, i + 1, "latency_s");
        assert_true(fabs(latency - number(t, i + 1, "cycles") * cycle_s) <= 1e-9 * latency);
        double parts = 0;
        for (int c = column(t, "energy_mac_pJ"); c < t->n_fields[0]; c++)
            parts += strtod(t->field[i + 1][c], NULL);
        assert_true(fabs(parts - number(t, i + 1, "energy_pJ")) <= 1e-9 * parts + 1e-9);
    }
    assert_string_equal(text(t, 1, "layer"), ODD_NAME);
    json_decref(j);
    free(r.out);
    free_table(t);
    free(csv);
}

/* fuse: one row per group (--csv) and per compute layer (--csv-layers),
 * each layer in a group that exists. */
static void test_fuse(void **state)
{
    (void)state;
    char args[700], layers_file[512];
    snprintf(layers_file, sizeof layers_file, "%s/cli_csv_layers.csv", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args,
             "fuse --arch eyeriss --model '%s' --algo dp --map-budget 32 --threads 2", model_path);
    char *csv = csv_of(args);
    table *groups = read_csv(csv);
    static const char *const group_columns[] = {
        "group",          "layers",     "first_layer", "last_layer",
        "tile_rows",      "tile_cols",  "halo",        "tiles",
        "onchip_bytes",   "dram_bytes", "macs",        "recomputed_macs",
        "cycles",         "latency_s",  "energy_pJ",   "onchip_energy_pJ",
        "dram_energy_pJ", "valid",      NULL};
    expect_columns(groups, group_columns);
    run_result r;
    runf(&r, "%s --json", args);
    json_t *j = parse_json(r.out);
    json_t *jg = json_object_get(j, "groups");
    assert_int_equal(groups->n_rows - 1, (int)json_array_size(jg));
    double energy = 0;
    for (int i = 0; i < groups->n_rows - 1; i++) {
        const json_t *g = json_array_get(jg, (size_t)i);
        assert_true(number(groups, i + 1, "group") == i);
        assert_true(number(groups, i + 1, "layers") ==
                    (double)json_array_size(json_object_get(g, "layers")));
        assert_true(number(groups, i + 1, "cycles") ==
                    (double)json_integer_value(json_object_get(g, "cycles")));
        assert_true(number(groups, i + 1, "energy_pJ") ==
                    json_number_value(json_object_get(g, "energy_pJ")));
        energy += number(groups, i + 1, "energy_pJ");
    }
    double total = json_number_value(json_object_get(json_object_get(j, "totals"), "energy_pJ"));
    assert_true(fabs(energy - total) <= 1e-9 * total);
    assert_string_equal(text(groups, 1, "first_layer"), ODD_NAME);

    run_result l;
    remove(layers_file);
    runf(&l, "%s --csv-layers '%s'", args, layers_file);
    char *layers_csv = slurp(layers_file);
    table *layers = read_csv(layers_csv);
    static const char *const layer_columns[] = {"group",
                                                "layer",
                                                "op",
                                                "macs",
                                                "problem",
                                                "tiles",
                                                "mapped",
                                                "cycles_per_tile",
                                                "energy_per_tile_pJ",
                                                "cycles_all_tiles",
                                                "energy_all_tiles_pJ",
                                                NULL};
    expect_columns(layers, layer_columns);
    /* One row per compute layer: the layers map costs with a problem. */
    run_result m;
    runf(&m, "map --arch eyeriss --model '%s' --map-budget 32 --threads 2 --csv -", model_path);
    table *mapped = read_csv(m.out);
    int compute = 0;
    for (int i = 1; i < mapped->n_rows; i++)
        compute += number(mapped, i, "problem_class") >= 0;
    assert_int_equal(layers->n_rows - 1, compute);
    for (int i = 1; i < layers->n_rows; i++) {
        double g = number(layers, i, "group");
        assert_true(g >= 0 && g < groups->n_rows - 1);
        assert_string_equal(text(layers, i, "mapped"), "true");
        assert_true(number(layers, i, "cycles_all_tiles") ==
                    number(layers, i, "cycles_per_tile") * number(layers, i, "tiles"));
    }
    assert_string_equal(text(layers, 1, "layer"), ODD_NAME);
    /* fadiff keeps its own mappings: refused, as for --report. */
    free(r.out);
    run(&r, "fuse --arch eyeriss --model resnet18_cifar --algo fadiff --csv-layers -");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--csv-layers"));
    free(r.out);
    json_decref(j);
    free_table(mapped);
    free_table(layers);
    free_table(groups);
    free(m.out);
    free(l.out);
    free(layers_csv);
    free(csv);
}

/* eval (and map of a single problem): one row per level and data space. */
static void test_eval_levels(void **state)
{
    (void)state;
    static const char *const columns[] = {"level",   "data_space", "instances", "reads", "fills",
                                          "updates", "tile_words", "energy_pJ", NULL};
    char args[1400];
    snprintf(args, sizeof args, "eval '%s' '%s'", eval_input, eval_ert);
    char *csv = csv_of(args);
    table *t = read_csv(csv);
    expect_columns(t, columns);
    run_result r;
    runf(&r, "%s --json", args);
    json_t *j = parse_json(r.out);
    json_t *levels = json_object_get(j, "levels");
    int row = 1;
    double energy = 0;
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *l = json_array_get(levels, i);
        static const char *const spaces[] = {"Weights", "Inputs", "Outputs"};
        for (int d = 0; d < 3; d++) {
            const json_t *s = json_object_get(l, spaces[d]);
            if (!s)
                continue;
            assert_true(row < t->n_rows);
            assert_string_equal(text(t, row, "level"),
                                json_string_value(json_object_get(l, "name")));
            assert_string_equal(text(t, row, "data_space"), spaces[d]);
            assert_true(number(t, row, "reads") ==
                        (double)json_integer_value(json_object_get(s, "reads")));
            assert_true(number(t, row, "energy_pJ") ==
                        json_number_value(json_object_get(s, "energy_pJ")));
            energy += number(t, row, "energy_pJ");
            row++;
        }
    }
    assert_int_equal(row, t->n_rows); /* one row per level and data space kept */
    assert_true(energy > 0);
    json_decref(j);
    free(r.out);
    free_table(t);
    free(csv);

    char mapper[700];
    snprintf(mapper, sizeof mapper,
             "map '%s/timeloop_mapper/simple_output_stationary/mapper-input.yaml' --map-budget 64 "
             "--threads 1 --csv -",
             AS_TEST_DATA_DIR);
    runf(&r, "%s", mapper);
    t = read_csv(r.out);
    expect_columns(t, columns);
    assert_true(t->n_rows > 1);
    free_table(t);
    free(r.out);
}

/* runs show: the front, one row per design; with --design 0 --layers,
 * one row per stored layer. */
static void test_runs_show(void **state)
{
    (void)state;
    run_result r;
    runf(&r,
         "search --model '%s' --budget 2 --batch 2 --sw-budget 32 --map-budget 16 --seed 1 "
         "--threads 2 --db '%s'",
         model_path, db_path);
    free(r.out);
    char args[700];
    snprintf(args, sizeof args, "runs show --db '%s'", db_path);
    char *csv = csv_of(args);
    table *t = read_csv(csv);
    runf(&r, "%s --json", args);
    json_t *j = parse_json(r.out);
    json_t *front = json_object_get(j, "front");
    assert_true(json_array_size(front) > 0);
    assert_int_equal(t->n_rows - 1, (int)json_array_size(front));
    for (int i = 0; i < t->n_rows - 1; i++) {
        const json_t *p = json_array_get(front, (size_t)i);
        assert_true(number(t, i + 1, "latency_s") ==
                    json_number_value(json_object_get(p, "latency_s")));
        assert_true(number(t, i + 1, "energy_pJ") ==
                    json_number_value(json_object_get(p, "energy_pJ")));
    }
    json_decref(j);
    free(r.out);
    free_table(t);
    free(csv);

    snprintf(args, sizeof args, "runs show --db '%s' --design 0 --layers", db_path);
    csv = csv_of(args);
    t = read_csv(csv);
    static const char *const columns[] = {"model",
                                          "batch",
                                          "group",
                                          "layer",
                                          "problem",
                                          "padded",
                                          "tiles",
                                          "cycles_per_tile",
                                          "energy_per_tile_pJ",
                                          "mapping",
                                          NULL};
    expect_columns(t, columns);
    runf(&r, "%s --json", args);
    j = parse_json(r.out);
    json_t *workloads = json_object_get(j, "workloads");
    size_t n_layers = 0;
    for (size_t k = 0; k < json_array_size(workloads); k++)
        n_layers += json_array_size(json_object_get(json_array_get(workloads, k), "layers"));
    assert_true(n_layers > 0);
    assert_int_equal(t->n_rows - 1, (int)n_layers);
    assert_string_equal(text(t, 1, "layer"), ODD_NAME);
    const json_t *first =
        json_array_get(json_object_get(json_array_get(workloads, 0), "layers"), 0);
    assert_string_equal(text(t, 1, "mapping"),
                        json_string_value(json_object_get(first, "mapping_text")));
    json_decref(j);
    free(r.out);
    free_table(t);
    free(csv);
}

/* A figure of the text in engineering notation after label ("latency
 * 73.67 ms"): 4 significant digits, mantissa in [1, 1000), an SI prefix
 * and unit; its value in unit. */
static double eng_figure(const char *out, const char *label, const char *unit)
{
    const char *line = strstr(out, label);
    if (!line)
        fail_msg("no '%s' in:\n%s", label, out);
    char digits[32], word[32];
    if (sscanf(line + strlen(label), " %31s %31s", digits, word) != 2)
        fail_msg("'%s': no figure", label);
    word[strcspn(word, ",)")] = '\0'; /* "mJ," in a list, "pJ/MAC)" in parentheses */
    size_t n_digits = strspn(digits, "0123456789.");
    if (n_digits != strlen(digits) || strlen(digits) != 5 || !strchr(digits, '.'))
        fail_msg("'%s %s %s': want 4 significant digits", label, digits, word);
    double v = strtod(digits, NULL);
    if (!(v >= 1 && v < 1000))
        fail_msg("'%s %s %s': mantissa out of [1, 1000)", label, digits, word);
    static const char prefixes[] = "afpnumkMGT";
    static const double scale[] = {1e-18, 1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 1e3, 1e6, 1e9, 1e12};
    if (strcmp(word, unit) == 0)
        return v;
    const char *p = word[0] ? strchr(prefixes, word[0]) : NULL;
    if (!p || strcmp(word + 1, unit) != 0)
        fail_msg("'%s %s %s': want a prefix and %s", label, digits, word, unit);
    return v * scale[p - prefixes];
}

static void expect_close(double shown, double want, const char *what)
{
    if (!(fabs(shown - want) <= 5e-4 * fabs(want)))
        fail_msg("%s: the text shows %.6g, the JSON %.17g", what, shown, want);
}

/* The text's figures are the JSON's in engineering notation, with their
 * units; no number in exponent notation (no bare %g). */
static void test_text_units(void **state)
{
    (void)state;
    char args[1400];
    snprintf(args, sizeof args,
             "map --arch eyeriss --model '%s' --map-budget 64 --threads 2 --seed 3", model_path);
    run_result text, js;
    runf(&text, "%s", args);
    runf(&js, "%s --json", args);
    json_t *j = parse_json(js.out);
    const json_t *totals = json_object_get(j, "totals");
    double latency_s = json_number_value(json_object_get(totals, "latency_s"));
    double cycle_s = latency_s / (double)json_integer_value(json_object_get(totals, "cycles"));
    expect_close(eng_figure(text.out, "\nlatency ", "s"), latency_s, "latency");
    expect_close(eng_figure(text.out, "\nenergy ", "J"),
                 json_number_value(json_object_get(totals, "energy_pJ")) * 1e-12, "energy");
    expect_close(eng_figure(text.out, "\nEDP ", "J*s"),
                 json_number_value(json_object_get(totals, "edp_J_cycle")) * cycle_s, "EDP");
    const char *onchip = strstr(text.out, "onchip ");
    assert_non_null(onchip);
    expect_close(
        eng_figure(onchip, "onchip ", "J"),
        json_number_value(json_object_get(json_object_get(j, "energy_by_component_pJ"), "onchip")) *
            1e-12,
        "on-chip energy");
    assert_null(strstr(text.out, "e+"));
    assert_null(strstr(text.out, "e-0"));
    json_decref(j);
    free(text.out);
    free(js.out);

    snprintf(args, sizeof args, "eval '%s' '%s'", eval_input, eval_ert);
    runf(&text, "%s", args);
    runf(&js, "%s --json", args);
    j = parse_json(js.out);
    double energy_J = json_number_value(json_object_get(j, "energy_pJ")) * 1e-12;
    expect_close(eng_figure(text.out, "\nenergy ", "J"), energy_J, "eval energy");
    const char *per_mac = strchr(strstr(text.out, "\nenergy "), '(');
    assert_non_null(per_mac);
    expect_close(eng_figure(per_mac, "(", "J/MAC"),
                 energy_J / (double)json_integer_value(json_object_get(j, "macs")),
                 "energy per MAC");
    json_decref(j);
    free(text.out);
    free(js.out);
}

/* Unwritable paths fail before any work, naming the file; --csv - and
 * --json would both want standard output. */
static void test_errors(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"model info resnet18_cifar --csv /nonexistent/dir/t.csv", "/nonexistent/dir/t.csv"},
        {"model info resnet18_cifar -o /nonexistent/dir/o.txt", "/nonexistent/dir/o.txt"},
        {"map --arch eyeriss --model resnet18_cifar --csv /nonexistent/dir/m.csv",
         "/nonexistent/dir/m.csv"},
        {"fuse --arch eyeriss --model resnet18_cifar --csv-layers /nonexistent/dir/f.csv",
         "/nonexistent/dir/f.csv"},
        {"eval x.yaml --output /nonexistent/dir/e.txt", "/nonexistent/dir/e.txt"},
        {"model info resnet18_cifar --json --csv -", "--csv -"},
        {"fuse --arch eyeriss --model resnet18_cifar --csv - --csv-layers -", "--csv-layers -"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r;
        run(&r, cases[i][0]);
        if (r.status != 2 || !strstr(r.err, cases[i][1]))
            fail_msg("accelsearch %s: exit %d, want 2 and '%s' in: %s", cases[i][0], r.status,
                     cases[i][1], r.err);
        free(r.out);
    }
    /* runs show of a store that does not exist: nothing to write. */
    run_result r;
    run(&r, "runs show --db /nonexistent/dir/x.db --csv /nonexistent/dir/y.csv");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "/nonexistent/dir/y.csv"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_info), cmocka_unit_test(test_map_model),
        cmocka_unit_test(test_fuse),       cmocka_unit_test(test_eval_levels),
        cmocka_unit_test(test_runs_show),  cmocka_unit_test(test_text_units),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
