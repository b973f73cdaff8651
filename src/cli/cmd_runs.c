/*
 * cmd_runs.c -- `accelsearch runs list|show|export`: the co-design runs of
 * a run store, one run's progress and last Pareto front, and a whole run
 * as JSON or CSV.
 *
 * runs only reads.  It never creates a store: a missing file is an error
 * (store_open would make an empty store of it).
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "search/search.h"
#include "store/store.h"
#include "study/study.h"

/* The first line of a tune run's configuration (cmd_tune.c). */
#define TUNE_CONFIG_PREFIX "accelsearch tune "

typedef enum runs_action { RUNS_LIST, RUNS_SHOW, RUNS_EXPORT } runs_action;
static const char *const format_names[] = {"json", "csv", NULL};
static const store_format formats[] = {STORE_JSON, STORE_CSV};

typedef struct runs_options {
    runs_action action;
    const char *db;
    int64_t run_id; /* 0: the newest */
    bool json;
    bool format_set;
    int format;            /* index into format_names */
    const char *out_path;  /* NULL: standard output */
    int64_t design;        /* show --design: index into the last front (-1: none) */
    const char *emit_arch; /* show --emit-arch FILE */
    bool layers;           /* show --layers: design K's layers and their mappings */
    const char *space;     /* show --space: the run's space file (default: by its name) */
    cli_output out;        /* show --csv, -o */
} runs_options;

enum { RUNS_MAX_OPTIONS = 10 };

/* The command of one action, its options writing into o.  Each action
 * takes only its own options: --json for list and show, RUN for show and
 * export, --format and -o for export. */
static cli_command runs_command(runs_action action, cli_option *options, runs_options *o)
{
    static const char *const synopsis[] = {
        "runs list [--db FILE] [--json]",
        "runs show [RUN] [--db FILE] [--json] [--csv FILE|-] [-o FILE]\n"
        "          [--design K (--emit-arch FILE | --layers) [--space S]]",
        "runs export [RUN] --format json|csv [--db FILE] [-o FILE]",
    };
    static const char *const names[] = {"runs list", "runs show", "runs export"};
    int n = 0;
    options[n++] = cli_string("db", "FILE", &o->db,
                              "the run store (default: " CLI_DEFAULT_DB " in this directory)");
    if (action != RUNS_EXPORT)
        options[n++] = cli_flag("json", &o->json, "print one JSON object instead of tables");
    if (action == RUNS_SHOW) {
        options[n++] = cli_int("design", "K", &o->design, 0, INT64_MAX,
                               "with --emit-arch or --layers: design K of the last front\n"
                               "(its row in the front table, from 0)");
        options[n++] = cli_string("emit-arch", "FILE", &o->emit_arch,
                                  "write design K as an architecture file (the bytes\n"
                                  "search --emit-arch wrote as design-K.yaml)");
        options[n++] = cli_flag("layers", &o->layers,
                                "print design K's compute layers per model: fusion group,\n"
                                "problem mapped (a fused layer's tile), its cycles and\n"
                                "energy per run, and its mapping as a loop nest, as the\n"
                                "search stored them (--json: the same as JSON)");
        options[n++] = cli_string("space", "S", &o->space,
                                  "the run's design space (default: the built-in space its\n"
                                  "configuration names; a space file must be given)");
        n += cli_add_output_options(options + n, &o->out,
                                    "write the front as CSV, one row per design (with --design K\n"
                                    "--layers: one row per layer; a study: its cells), \"-\":\n"
                                    "standard output, instead of the text");
    }
    if (action == RUNS_EXPORT) {
        options[n] = cli_enum("format", &o->format, format_names,
                              "json: the run, its configuration, every candidate round with its\n"
                              "parameters and details, every front; csv: one line per\n"
                              "candidate round, one column per parameter");
        options[n++].given = &o->format_set;
        options[n] = cli_string("output", "FILE", &o->out_path,
                                "write the export to FILE instead of standard output");
        options[n++].short_name = 'o';
    }
    return (cli_command){
        .name = names[action],
        .help_for = "runs",
        .synopsis = synopsis[action],
        .about = action != RUNS_LIST
                     ? NULL
                     : "The co-design and tuning runs kept in a run store.  RUN is an id "
                       "that 'runs list' shows;\nwithout it, show and export "
                       "take the newest run.\n",
        .options = options,
        .n_options = n,
        .max_positional = action == RUNS_LIST ? 0 : 1,
    };
}

int cli_run_id_argument(cli_command *cmd, int64_t *run_id)
{
    if (cmd->n_positional == 0)
        return CLI_PARSED;
    const char *run = cmd->positional[0];
    char *end;
    errno = 0;
    long long id = strtoll(run, &end, 10);
    if (*run == '\0' || *end != '\0' || errno == ERANGE || id < 1)
        return cli_usage_error(cmd, "RUN wants a run id (a positive integer), got '%s'", run);
    *run_id = id;
    return CLI_PARSED;
}

/* Parse argv (after the action) into o; CLI_PARSED, or an exit status. */
static int parse_runs_options(cli_command *cmd, int argc, char **argv, runs_options *o)
{
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if ((rc = cli_run_id_argument(cmd, &o->run_id)) != CLI_PARSED)
        return rc;
    if (o->emit_arch && o->layers)
        return cli_usage_error(cmd, "give --emit-arch or --layers, not both");
    if ((o->design >= 0) != (o->emit_arch != NULL || o->layers))
        return cli_usage_error(cmd, "--design and --emit-arch go together, as do --design and "
                                    "--layers: give both");
    if (o->space && o->design < 0)
        return cli_usage_error(cmd, "--space is for --emit-arch and --layers: give --design K "
                                    "with one of them");
    if (o->action == RUNS_EXPORT && !o->format_set)
        return cli_usage_error(cmd, "export needs --format json or --format csv");
    if (o->emit_arch && o->out.csv_path)
        return cli_usage_error(cmd, "--csv writes the front or, with --layers, design K's "
                                    "layers: not with --emit-arch");
    if (o->action == RUNS_SHOW)
        return cli_output_begin(cmd, &o->out, o->json);
    return CLI_PARSED;
}

/* ------------------------------------------------------------------- runs */

/* A run of `accelsearch tune` (its configuration says so): its rows are
 * tuned layers, not candidate rounds, and it has no fronts. */
static bool is_tune_config(const char *config)
{
    return config && strncmp(config, TUNE_CONFIG_PREFIX, strlen(TUNE_CONFIG_PREFIX)) == 0;
}

/* What made a run: "search", "tune" or "study". */
static const char *run_kind(store *s, int64_t run_id)
{
    char *config = NULL;
    as_status ignored;
    const char *kind = "search";
    if (store_run_config(s, run_id, &config, &ignored) == AS_OK)
        kind = is_tune_config(config) ? "tune" : study_is_config(config) ? "study" : "search";
    free(config);
    return kind;
}

static bool is_tune_run(store *s, int64_t run_id)
{
    return strcmp(run_kind(s, run_id), "tune") == 0;
}

static void json_run(cli_json *j, const store_run *r, const char *kind)
{
    cli_json_begin_object(j);
    cli_json_int_field(j, "id", r->id);
    cli_json_string_field(j, "kind", kind);
    cli_json_string_field(j, "created", r->created);
    cli_json_string_field(j, "version", r->version);
    /* The writer has signed integers only; a seed given on the command line
     * always fits, one above INT64_MAX (from the library) goes as text. */
    if (r->seed <= INT64_MAX) {
        cli_json_int_field(j, "seed", (int64_t)r->seed);
    } else {
        char seed[24];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
        cli_json_string_field(j, "seed", seed);
    }
    cli_json_string_field(j, "state", store_state_name(r->state));
    cli_json_bool_field(j, "killed", r->killed);
    cli_json_string_field(j, "owner", r->owner);
    cli_json_string_field(j, "summary", r->summary);
    cli_json_int_field(j, "rows", r->n_rows);
    cli_json_int_field(j, "candidates", r->n_candidates);
    cli_json_int_field(j, "iterations", r->n_iterations);
    cli_json_double_field(j, "hypervolume", r->hypervolume);
    cli_json_end_object(j);
}

static as_code list_runs(store *s, const char *db, bool json, as_status *st)
{
    store_run *runs;
    int64_t n;
    as_code code = store_run_list(s, &runs, &n, st);
    if (code != AS_OK)
        return code;
    if (json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_string_field(&j, "db", db);
        cli_json_key(&j, "runs");
        cli_json_begin_array(&j);
        for (int64_t i = 0; i < n; i++)
            json_run(&j, &runs[i], run_kind(s, runs[i].id));
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    } else if (n == 0) {
        printf("no runs in %s\n", db);
    } else {
        printf("%4s  %-20s  %-11s  %6s  %10s  %10s  %12s  %s\n", "id", "created", "state", "rows",
               "candidates", "iterations", "hypervolume", "summary");
        for (int64_t i = 0; i < n; i++) {
            const store_run *r = &runs[i];
            printf("%4lld  %-20s  %-11s  %6lld  %10lld  ", (long long)r->id, r->created,
                   store_state_name(r->state), (long long)r->n_rows, (long long)r->n_candidates);
            if (strcmp(run_kind(s, r->id), "search") != 0) /* layers or cells; no fronts */
                printf("%10s  %12s  %s\n", "-", "-", r->summary);
            else
                printf("%10lld  %12s  %s\n", (long long)r->n_iterations,
                       CLI_NUM(r->hypervolume, NULL), r->summary);
        }
    }
    free(runs);
    return AS_OK;
}

as_code cli_find_run(store *s, const char *db, int64_t id, store_run *out, as_status *st)
{
    if (id > 0)
        return store_run_get(s, id, out, st);
    store_run *runs;
    int64_t n;
    as_code code = store_run_list(s, &runs, &n, st);
    if (code == AS_OK && n == 0)
        code = as_fail(st, AS_EINVAL, "%s: no runs yet", db);
    if (code == AS_OK)
        *out = runs[n - 1];
    free(runs);
    return code;
}

/* ------------------------------------------------------------------ front */

/*
 * A front (an array of points, each an object whose "params" member holds
 * the design's parameters) as a table: one row per point (flat objects,
 * the parameters lifted in by store_json_items), one column per member in
 * the order they first appear.
 */
typedef struct front_table {
    json_t *points;  /* flat objects */
    json_t *columns; /* their keys, in order of first appearance */
} front_table;

/* Read front_json into t. */
static as_code front_table_read(front_table *t, const char *front_json, const char *what,
                                as_status *st)
{
    as_code code = store_json_items(front_json, what, &t->points, st);
    bool ok = code != AS_OK || (t->columns = json_object()) != NULL;
    for (size_t i = 0; ok && code == AS_OK && i < json_array_size(t->points); i++)
        ok = json_object_update_missing(t->columns, json_array_get(t->points, i)) == 0;
    return ok ? code : as_fail(st, AS_ENOMEM, "out of memory");
}

/* A cell as the table shows it (malloc'd; NULL when out of memory):
 * an integral number as an integer, any other to 4 significant digits
 * (cli_num; the column's name says its unit), a string as itself,
 * anything else as its JSON text; "-" where the point has no such
 * member. */
static char *cell_text(const json_t *v)
{
    char number[CLI_ENG_BYTES];
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (x == floor(x) && fabs(x) < 1e15)
            snprintf(number, sizeof number, "%.0f", x);
        else
            cli_num(x, NULL, number, sizeof number);
        return strdup(number);
    }
    if (!v || json_is_string(v))
        return strdup(v ? json_string_value(v) : "-");
    return as_json_text(v, 0);
}

/* A cell as a JSON value of its own type; a nested object or array (not
 * flattened) goes as its text. */
static void json_cell(cli_json *j, const json_t *v)
{
    char *text;
    if (json_is_string(v))
        cli_json_string(j, json_string_value(v));
    else if (json_is_boolean(v))
        cli_json_bool(j, json_is_true(v));
    else if (json_is_null(v))
        cli_json_null(j);
    else if (json_is_number(v))
        cli_json_double(j, json_number_value(v));
    else if ((text = as_json_text(v, 0))) {
        cli_json_string(j, text);
        free(text);
    }
}

/* Each point's cells as the table shows them: with print, a line padded
 * to width; without, width grows to the widest (header included before). */
static void each_cell_line(const front_table *t, int *width, bool print)
{
    size_t i;
    json_t *point;
    json_array_foreach(t->points, i, point)
    {
        int k = 0;
        const char *key;
        json_t *unused;
        json_object_foreach(t->columns, key, unused)
        {
            char *text = cell_text(json_object_get(point, key));
            int n = text ? (int)strlen(text) : 0;
            if (print)
                printf("  %-*s", width[k], text ? text : "");
            else
                width[k] = n > width[k] ? n : width[k];
            free(text);
            k++;
        }
        if (print)
            putchar('\n');
    }
}

static void print_front_table(const front_table *t, int *width)
{
    int k = 0;
    const char *key;
    json_t *unused;
    json_object_foreach(t->columns, key, unused)
    {
        width[k++] = (int)strlen(key);
    }
    each_cell_line(t, width, false);
    width[k - 1] = 0; /* no padding at the end of a line */
    k = 0;
    json_object_foreach(t->columns, key, unused)
    {
        printf("  %-*s", width[k++], key);
    }
    putchar('\n');
    each_cell_line(t, width, true);
}

/* ------------------------------------------------------------------- show */

/* What `runs show` prints of a run, read from the store. */
typedef struct run_view {
    store_run run;
    char *config;
    int64_t *evaluations, n_curve;
    double *hypervolume;
    int64_t front_iteration; /* -1: no front yet */
    front_table front;
    int *width; /* per front column */
    se_run_config cfg;
    bool cfg_read;  /* the configuration parsed (a search run's) */
    int64_t chosen; /* index into the front (-1: none) */
} run_view;

/* The front point a run chooses (nearest the ideal point, as se_run picks
 * it from the same front in the same order), or -1. */
static int64_t chosen_front_point(const run_view *v)
{
    int n_obj = v->cfg.n_objectives;
    int64_t n = (int64_t)json_array_size(v->front.points);
    if (!v->cfg_read || n == 0)
        return -1;
    double *y = malloc((size_t)(n * n_obj) * sizeof *y);
    int64_t *all = malloc((size_t)n * sizeof *all);
    int64_t chosen = -1;
    if (y && all) {
        for (int64_t i = 0; i < n; i++) {
            se_metrics m;
            se_metrics_from_json(json_array_get(v->front.points, (size_t)i), &m);
            for (int k = 0; k < n_obj; k++)
                y[i * n_obj + k] = log10(se_metrics_objective(&m, v->cfg.objectives[k]));
            all[i] = i;
        }
        chosen = se_pick_nearest_ideal(y, all, n, n_obj);
    }
    free(y);
    free(all);
    return chosen;
}

static as_code read_run_view(store *s, const char *db, run_view *v, as_status *st)
{
    double front_hypervolume;
    char *front_json = NULL, what[96];
    snprintf(what, sizeof what, "%s: the last front of run %lld", db, (long long)v->run.id);
    as_code code = store_run_config(s, v->run.id, &v->config, st);
    if (code == AS_OK)
        code = store_hypervolume_curve(s, v->run.id, &v->evaluations, &v->hypervolume, &v->n_curve,
                                       st);
    if (code == AS_OK)
        code = store_last_front(s, v->run.id, &v->front_iteration, &front_hypervolume, &front_json,
                                st);
    if (code == AS_OK && front_json)
        code = front_table_read(&v->front, front_json, what, st);
    free(front_json);
    size_t n_keys = json_object_size(v->front.columns) + 1;
    if (code == AS_OK && !(v->width = calloc(n_keys, sizeof *v->width)))
        code = as_fail(st, AS_ENOMEM, "out of memory");
    as_status ignored; /* a configuration from before the parser reads as text only */
    v->cfg_read = code == AS_OK && se_run_config_parse(v->config, &v->cfg, &ignored) == AS_OK;
    v->chosen = code == AS_OK && v->front_iteration >= 0 ? chosen_front_point(v) : -1;
    return code;
}

static void free_run_view(run_view *v)
{
    free(v->config);
    free(v->evaluations);
    free(v->hypervolume);
    json_decref(v->front.points);
    json_decref(v->front.columns);
    free(v->width);
}

/* s with every line indented, for the configuration. */
static void print_indented(const char *s)
{
    while (*s) {
        size_t n = strcspn(s, "\n");
        printf("  %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
}

static void print_run_view(const run_view *v)
{
    const store_run *r = &v->run;
    printf("run %lld, %s, created %s by accelsearch %s\n", (long long)r->id,
           store_state_name(r->state), r->created, r->version);
    printf("  %-14s %s\n", "summary", r->summary);
    printf("  %-14s %llu\n", "seed", (unsigned long long)r->seed);
    printf("  %-14s %lld (%lld software-search rounds)\n", "candidates", (long long)r->n_candidates,
           (long long)r->n_rows);
    printf("  %-14s %lld\n", "iterations", (long long)r->n_iterations);
    printf("  %-14s %s\n", "hypervolume", CLI_NUM(r->hypervolume, NULL));
    printf("\nconfiguration:\n");
    print_indented(v->config);
    if (v->n_curve > 0) {
        printf("\nhypervolume after each iteration:\n  %11s  %12s\n", "evaluations", "hypervolume");
        for (int64_t i = 0; i < v->n_curve; i++)
            printf("  %11lld  %12s\n", (long long)v->evaluations[i],
                   CLI_NUM(v->hypervolume[i], NULL));
    }
    if (v->front_iteration < 0) {
        printf("\nno front stored yet\n");
        return;
    }
    size_t n_points = json_array_size(v->front.points);
    printf("\nfront after iteration %lld: %zu design%s\n", (long long)v->front_iteration, n_points,
           n_points == 1 ? "" : "s");
    if (n_points > 0 && json_object_size(v->front.columns) > 0)
        print_front_table(&v->front, v->width);
    if (v->chosen >= 0) {
        const json_t *p = json_array_get(v->front.points, (size_t)v->chosen);
        printf("\nchosen design (nearest the ideal point): row %lld of the front\n",
               (long long)v->chosen);
        const char *key;
        json_t *unused, *value;
        json_object_foreach(v->front.columns, key, unused)
        {
            if ((value = json_object_get(p, key))) {
                char *text = cell_text(value);
                printf("  %-14s %s\n", key, text ? text : "");
                free(text);
            }
        }
    }
}

static void json_run_view(const run_view *v)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "run");
    json_run(&j, &v->run, "search");
    if (v->cfg_read) {
        json_t *config = se_run_config_json(&v->cfg);
        cli_json_key(&j, "config");
        if (config)
            cli_json_value(&j, config);
        else
            cli_json_null(&j);
        json_decref(config);
    }
    cli_json_string_field(&j, "config_text", v->config);
    cli_json_hypervolume_curve(&j, v->evaluations, v->hypervolume, v->n_curve);
    cli_json_int_field(&j, "front_iteration", v->front_iteration);
    cli_json_key(&j, "front");
    cli_json_begin_array(&j);
    size_t i;
    json_t *point;
    json_array_foreach(v->front.points, i, point)
    {
        const char *key;
        json_t *unused, *value;
        cli_json_begin_object(&j);
        json_object_foreach(v->front.columns, key, unused) /* in the table's order */
        {
            if ((value = json_object_get(point, key))) {
                cli_json_key(&j, key);
                json_cell(&j, value);
            }
        }
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_int_field(&j, "chosen", v->chosen);
    cli_json_end_object(&j);
}

/* The front as CSV: one row per design, the table's columns (their
 * names carry the units: latency_s, energy_pJ, area_mm2), numbers raw. */
static void csv_front(cli_csv *c, const front_table *t)
{
    const char *key;
    json_t *unused, *point;
    size_t i;
    json_object_foreach(t->columns, key, unused)
    {
        cli_csv_string(c, key);
    }
    cli_csv_end_row(c);
    json_array_foreach(t->points, i, point)
    {
        json_object_foreach(t->columns, key, unused)
        {
            const json_t *v = json_object_get(point, key);
            char *text = NULL;
            if (json_is_integer(v))
                cli_csv_int(c, json_integer_value(v));
            else if (json_is_number(v))
                cli_csv_double(c, json_number_value(v));
            else if (json_is_string(v))
                cli_csv_string(c, json_string_value(v));
            else if (json_is_boolean(v))
                cli_csv_bool(c, json_is_true(v));
            else if (v && !json_is_null(v) && (text = as_json_text(v, 0)))
                cli_csv_string(c, text);
            else
                cli_csv_empty(c);
            free(text);
        }
        cli_csv_end_row(c);
    }
}

/* ------------------------------------------------------------ tune runs */

/* A tune run's rows as `runs show` gives them: one per tuned layer. */
typedef struct tune_rows {
    bool json;
    cli_json *j;
    json_t *failed; /* NULL, or the first row's text that did not read */
    as_status st;
} tune_rows;

/* One tuned layer: its details (layer, count, trials, trials to 95 %,
 * GFLOPS), its latency and energy, and its knobs and hardware. */
static bool show_tune_row(void *user, const store_row *row)
{
    tune_rows *t = user;
    json_t *detail = NULL, *params = NULL;
    char what[64];
    snprintf(what, sizeof what, "tuned layer %lld", (long long)row->iteration);
    if (as_json_parse(row->detail_json ? row->detail_json : "{}", what, &detail, &t->st) != AS_OK ||
        store_json_items(row->params_json, what, &params, &t->st) != AS_OK) {
        json_decref(detail);
        return false;
    }
    const char *layer = json_string_value(json_object_get(detail, "layer"));
    json_int_t count = json_integer_value(json_object_get(detail, "count"));
    json_int_t trials = json_integer_value(json_object_get(detail, "trials"));
    json_int_t to_95 = json_integer_value(json_object_get(detail, "trials_to_95"));
    double gflops = json_number_value(json_object_get(detail, "gflops"));
    const json_t *knobs = json_array_get(params, 0);
    if (t->json) {
        cli_json_begin_object(t->j);
        cli_json_int_field(t->j, "index", row->iteration);
        cli_json_string_field(t->j, "layer", layer ? layer : "");
        cli_json_int_field(t->j, "count", count);
        cli_json_bool_field(t->j, "valid", row->feasible);
        cli_json_double_field(t->j, "gflops", gflops);
        cli_json_double_field(t->j, "latency_s", row->metrics.latency_s);
        cli_json_double_field(t->j, "energy_pJ", row->metrics.energy_pJ);
        cli_json_int_field(t->j, "trials", trials);
        cli_json_int_field(t->j, "trials_to_95", to_95);
        cli_json_key(t->j, "params");
        cli_json_begin_object(t->j);
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)knobs, key, value)
        {
            cli_json_key(t->j, key);
            json_cell(t->j, value);
        }
        cli_json_end_object(t->j);
        cli_json_end_object(t->j);
    } else {
        printf("  %3lld  %-24s %3lld  %9.2f %12.2f %11.3f %7lld %7lld ", (long long)row->iteration,
               layer ? layer : "", (long long)count, gflops, row->metrics.latency_s * 1e6,
               row->metrics.energy_pJ * 1e-6, (long long)trials, (long long)to_95);
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)knobs, key, value)
        {
            char *text = cell_text(value);
            printf(" %s=%s", key, text ? text : "");
            free(text);
        }
        printf("%s\n", row->feasible ? "" : row->reason);
    }
    json_decref(detail);
    json_decref(params);
    return true;
}

/* `runs show` of a tune run: the run, its configuration, its layers. */
static as_code show_tune_run(store *s, const store_run *run, const char *config, bool json,
                             as_status *st)
{
    cli_json j;
    tune_rows t = {.json = json, .j = &j};
    as_status_clear(&t.st);
    if (json) {
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_key(&j, "run");
        json_run(&j, run, "tune");
        cli_json_string_field(&j, "config", config);
        cli_json_key(&j, "layers");
        cli_json_begin_array(&j);
    } else {
        printf("run %lld, %s, created %s by accelsearch %s\n", (long long)run->id,
               store_state_name(run->state), run->created, run->version);
        printf("  %-14s %s\n", "summary", run->summary);
        printf("  %-14s %llu\n", "seed", (unsigned long long)run->seed);
        printf("  %-14s %lld\n", "layers tuned", (long long)run->n_rows);
        printf("\nconfiguration:\n");
        print_indented(config);
        printf("\ntuned layers (latency and energy of one instance; knobs and hardware of the "
               "best configuration):\n");
        printf("  %3s  %-24s %3s  %9s %12s %11s %7s %7s  %s\n", "#", "layer", "x", "GFLOPS",
               "latency us", "energy uJ", "trials", "to 95%", "configuration");
    }
    as_code code = store_each_row(s, run->id, show_tune_row, &t, st);
    if (code == AS_OK && t.st.code != AS_OK) {
        *st = t.st;
        code = st->code;
    }
    if (json) {
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    }
    return code;
}

static as_code show_run(store *s, const char *db, const store_run *run, bool json, cli_output *out,
                        as_status *st)
{
    char *config = NULL;
    as_code code = store_run_config(s, run->id, &config, st);
    if (code == AS_OK && is_tune_config(config) && out->csv_path)
        code = as_fail(st, AS_EINVAL,
                       "run %lld is a tune run: --csv writes a front of designs; 'runs export "
                       "--format csv' writes its tuned layers",
                       (long long)run->id);
    else if (code == AS_OK && is_tune_config(config))
        code = show_tune_run(s, run, config, json, st);
    else if (code == AS_OK && study_is_config(config) && out->out_path && out->csv_path &&
             strcmp(out->csv_path, "-") == 0) /* study's own CSV writer knows no -o */
        code = as_fail(st, AS_EINVAL,
                       "run %lld is a study: with -o FILE, give its cells' CSV a file too "
                       "(--csv FILE)",
                       (long long)run->id);
    else if (code == AS_OK && study_is_config(config))
        code = cli_study_print_run(s, run->id, json, out->csv_path, st);
    bool shown = code != AS_OK || is_tune_config(config) || study_is_config(config);
    free(config);
    if (shown)
        return code;
    run_view v = {.run = *run};
    code = read_run_view(s, db, &v, st);
    if (code == AS_OK && out->csv.out)
        csv_front(&out->csv, &v.front);
    if (code == AS_OK && cli_output_usual(out) && json)
        json_run_view(&v);
    else if (code == AS_OK && cli_output_usual(out))
        print_run_view(&v);
    free_run_view(&v);
    return code;
}

/* ------------------------------------------------------------- emit-arch */

/*
 * The space run was searched in, rebuilt: the store keeps no space, but
 * the run's configuration names it and a digest of its definition
 * ("space edge 0123abcd..."; se_run_config_text).  The space is loaded by
 * that name (a built-in) or from space_path, and must have that digest:
 * a space changed since the run would decode other designs.
 */
as_code cli_run_space(store *s, const store_run *run, const char *space_path, se_space *out,
                      as_status *st)
{
    char *config, name[SE_NAME_BYTES + 1] = "";
    unsigned long long digest = 0;
    as_code code = store_run_config(s, run->id, &config, st);
    if (code != AS_OK)
        return code;
    const char *line = strstr(config, "\nspace ");
    _Static_assert(SE_NAME_BYTES == 40, "the %40s below reads a space name");
    bool named = line && sscanf(line, "\nspace %40s %llx", name, &digest) == 2;
    /* A space around a design: rebuilt from the design its configuration
     * names (the digest below checks it is the same design still). */
    se_run_config *cfg = named && strstr(config, "\naround ") ? malloc(sizeof *cfg) : NULL;
    bool around = cfg && se_run_config_parse(config, cfg, st) == AS_OK && cfg->around_set;
    free(config);
    if (around && !space_path)
        code = se_space_around_load(&cfg->around, out, st);
    free(cfg);
    if (around && !space_path) {
        if (code == AS_OK && se_space_digest(out) != digest)
            code = as_fail(st, AS_EINVAL,
                           "run %lld: the design %s has changed since the run searched around it",
                           (long long)run->id, out->around.source);
        return code;
    }
    if (!named)
        return as_fail(st, AS_EINVAL, "run %lld: its configuration names no space",
                       (long long)run->id);
    int n_builtin;
    const char *const *builtin = se_space_builtin_names(&n_builtin);
    bool is_builtin = false;
    for (int k = 0; k < n_builtin; k++)
        is_builtin |= strcmp(builtin[k], name) == 0;
    if (!space_path && !is_builtin)
        return as_fail(st, AS_EINVAL,
                       "run %lld searched the space '%s' of a file: give that file with --space",
                       (long long)run->id, name);
    if ((code = se_space_load(space_path ? space_path : name, out, st)) != AS_OK)
        return code;
    if (strcmp(out->name, name) != 0 || se_space_digest(out) != digest)
        return as_fail(st, AS_EINVAL,
                       "%s: not the space run %lld searched ('%s', digest %016llx; this is "
                       "'%s', digest %016llx): give the run's space file with --space",
                       space_path ? space_path : name, (long long)run->id, name, digest, out->name,
                       (unsigned long long)se_space_digest(out));
    return AS_OK;
}

/* The point of space s whose parameters are params ({"pe_x": 14, ...},
 * as the stored front keeps them), into *p. */
static as_code point_of_params(const se_space *s, const json_t *params, const char *what,
                               se_point *p, as_status *st)
{
    for (int k = 0; k < s->n_params; k++) {
        const se_param *par = &s->param[k];
        const json_t *v = json_object_get(params, par->name);
        int64_t index = -1;
        if (par->kind == SE_PARAM_ENUM && json_is_string(v)) {
            for (int64_t i = 0; i < par->n_values && index < 0; i++)
                if (strcmp(par->choice[se_param_value(par, i)], json_string_value(v)) == 0)
                    index = i;
        } else if (par->kind != SE_PARAM_ENUM && json_is_integer(v)) {
            index = se_param_index(par, json_integer_value(v));
            if (se_param_value(par, index) != json_integer_value(v))
                index = -1;
        }
        if (index < 0)
            return as_fail(st, AS_EINVAL,
                           "%s: parameter '%s' is missing or not a value of space '%s'", what,
                           par->name, s->name);
        p->index[k] = index;
    }
    return AS_OK;
}

/* A design of a run's last front: the run's space, its point, and the
 * candidate it came from (iteration, slot). */
typedef struct front_design {
    se_space space;
    se_point point;
    int64_t iteration, slot;
} front_design;

/* Design o->design of run's last front into *d. */
static as_code find_front_design(store *s, const char *db, const store_run *run,
                                 const runs_options *o, front_design *d, as_status *st)
{
    int64_t iteration;
    double hypervolume;
    char *front_json = NULL, what[128];
    json_t *front = NULL;
    memset(d, 0, sizeof *d);
    as_code code = cli_run_space(s, run, o->space, &d->space, st);
    if (code == AS_OK)
        code = store_last_front(s, run->id, &iteration, &hypervolume, &front_json, st);
    snprintf(what, sizeof what, "%s: run %lld, design %lld", db, (long long)run->id,
             (long long)o->design);
    json_error_t error;
    if (code == AS_OK &&
        (!front_json || !(front = json_loads(front_json, 0, &error)) || !json_is_array(front)))
        code = as_fail(st, AS_EINVAL, "%s: run %lld has no front stored", db, (long long)run->id);
    size_t n_front = json_array_size(front);
    if (code == AS_OK && (size_t)o->design >= n_front)
        code = as_fail(st, AS_EINVAL,
                       "%s: the last front of run %lld has %zu designs: --design "
                       "wants 0 to %zu",
                       db, (long long)run->id, n_front, n_front ? n_front - 1 : 0);
    const json_t *entry = code == AS_OK ? json_array_get(front, (size_t)o->design) : NULL;
    if (code == AS_OK)
        code = point_of_params(&d->space, json_object_get(entry, "params"), what, &d->point, st);
    d->iteration = json_integer_value(json_object_get(entry, "iteration"));
    d->slot = json_integer_value(json_object_get(entry, "slot"));
    json_decref(front);
    free(front_json);
    return code;
}

/* Design o->design of run's last front, as the architecture file
 * o->emit_arch: the front's parameters decoded with the run's space. */
static as_code emit_design(store *s, const char *db, const store_run *run, const runs_options *o,
                           as_status *st)
{
    front_design d;
    as_code code = find_front_design(s, db, run, o, &d, st);
    char name[ARCH_NAME_BYTES];
    se_emitted_arch_name(&d.space, o->design, name, sizeof name);
    if (code == AS_OK &&
        (code = se_space_emit_arch(&d.space, &d.point, name, o->emit_arch, st)) == AS_OK)
        printf("design %lld of run %lld (iteration %lld, slot %lld) written to %s\n",
               (long long)o->design, (long long)run->id, (long long)d.iteration, (long long)d.slot,
               o->emit_arch);
    return code;
}

/* ---------------------------------------------------------------- layers */

/* The last round stored of one candidate: its details (malloc'd). */
typedef struct candidate_rows {
    int64_t iteration, slot;
    int32_t round;
    char *detail_json;
    bool out_of_memory;
} candidate_rows;

static bool keep_candidate_detail(void *user, const store_row *row)
{
    candidate_rows *c = user;
    if (row->iteration != c->iteration || row->slot != c->slot)
        return true;
    free(c->detail_json);
    c->detail_json = strdup(row->detail_json ? row->detail_json : "{}");
    c->round = row->round;
    c->out_of_memory = !c->detail_json;
    return !c->out_of_memory;
}

/* A stored layer's mapping (fusion/plan_json.c's text) read for architecture a;
 * what names it in messages. */
static as_code stored_mapping(const json_t *layer, const arch_spec *a, const char *what,
                              map_mapping *m, as_status *st)
{
    const char *text = json_string_value(json_object_get(layer, "mapping"));
    if (!text)
        return as_fail(st, AS_EINVAL, "%s: layer '%s' has no mapping stored", what,
                       json_string_value(json_object_get(layer, "layer")));
    return map_mapping_parse(text, a->n_levels, m, st);
}

/* A stored problem text ("C64 M64 P56") as {"C": 64, ...}. */
static void json_bounds(cli_json *j, const char *key, const char *text)
{
    int64_t bound[WL_NDIMS];
    as_status st;
    if (!text || map_bounds_parse(text, bound, &st) != AS_OK)
        return;
    cli_json_key(j, key);
    cli_json_begin_object(j);
    for (int d = 0; d < WL_NDIMS; d++)
        cli_json_int_field(j, wl_dim_name((wl_dim)d), bound[d]);
    cli_json_end_object(j);
}

static as_code print_layer(const json_t *layer, const arch_spec *a, const char *what, bool json,
                           cli_json *j, as_status *st)
{
    map_mapping m;
    as_code code = stored_mapping(layer, a, what, &m, st);
    if (code != AS_OK)
        return code;
    const char *name = json_string_value(json_object_get(layer, "layer"));
    const char *problem = json_string_value(json_object_get(layer, "problem"));
    const char *padded = json_string_value(json_object_get(layer, "padded"));
    json_int_t group = json_integer_value(json_object_get(layer, "group"));
    json_int_t tiles = json_integer_value(json_object_get(layer, "tiles"));
    json_int_t cycles = json_integer_value(json_object_get(layer, "cycles"));
    double energy_pJ = json_number_value(json_object_get(layer, "energy_pJ"));
    if (json) {
        cli_json_begin_object(j);
        cli_json_int_field(j, "group", group);
        cli_json_string_field(j, "layer", name ? name : "");
        json_bounds(j, "problem", problem);
        json_bounds(j, "padded", padded);
        cli_json_int_field(j, "tiles", tiles);
        cli_json_int_field(j, "cycles", cycles);
        cli_json_double_field(j, "energy_pJ", energy_pJ);
        cli_json_string_field(j, "mapping_text",
                              json_string_value(json_object_get(layer, "mapping")));
        cli_json_key(j, "mapping");
        cli_json_mapping(j, a, NULL, &m);
        if (m.group_pack > 1)
            cli_json_int_field(j, "group_pack", m.group_pack);
        cli_json_end_object(j);
        return AS_OK;
    }
    printf("\ngroup %lld  %s\n", (long long)group, name ? name : "");
    printf("  %-10s %s%s%s\n", "problem", problem ? problem : "", padded ? ", padded to " : "",
           padded ? padded : "");
    printf("  %-10s %lld cycles, %s per run, x %lld (its group's tiles)\n", "mapping",
           (long long)cycles, CLI_ENG(energy_pJ * 1e-12, "J"), (long long)tiles);
    cli_print_mapping(a, NULL, &m);
    return AS_OK;
}

/* One workload's stored layers (details member "workloads"[k]). */
static as_code print_workload_layers(const json_t *w, const arch_spec *a, const char *what,
                                     bool json, cli_json *j, as_status *st)
{
    const char *model = json_string_value(json_object_get(w, "model"));
    const json_t *layers = json_object_get(w, "layers");
    json_int_t batch = json_integer_value(json_object_get(w, "batch"));
    if (json) {
        cli_json_begin_object(j);
        cli_json_string_field(j, "model", model ? model : "");
        cli_json_int_field(j, "batch", batch);
        cli_json_key(j, "layers");
        cli_json_begin_array(j);
    } else {
        printf("\n%s (batch %lld): %zu compute layers in %zu fusion groups\n", model ? model : "",
               (long long)batch, json_array_size(layers),
               json_array_size(json_object_get(w, "groups")));
    }
    as_code code = AS_OK;
    for (size_t i = 0; code == AS_OK && i < json_array_size(layers); i++)
        code = print_layer(json_array_get(layers, i), a, what, json, j, st);
    if (json) {
        cli_json_end_array(j);
        cli_json_end_object(j);
    }
    return code;
}

/* Whether every workload of a candidate's details has its layers stored
 * (rows written before they were do not); fails naming the first without. */
static as_code check_layers_stored(const json_t *workloads, const char *what, as_status *st)
{
    if (!json_is_array(workloads))
        return as_fail(st, AS_EINVAL, "%s: the candidate's details hold no workloads", what);
    for (size_t k = 0; k < json_array_size(workloads); k++) {
        const json_t *w = json_array_get(workloads, k);
        if (!json_is_array(json_object_get(w, "layers")))
            return as_fail(st, AS_EINVAL,
                           "%s: no layer mappings stored for model '%s' (the run was made "
                           "before accelsearch stored them: run the search again)",
                           what, json_string_value(json_object_get(w, "model")));
    }
    return AS_OK;
}

/* The stored layers of every workload as CSV: one row per layer, the
 * model and batch it belongs to, its fusion group, the problem mapped
 * (a fused layer's tile), the runs of its mapping and one run's cycles
 * and energy, and the mapping as one line of text. */
static void csv_layers(cli_csv *c, const json_t *workloads)
{
    static const char *const head[] = {"model",
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
    cli_csv_header(c, head);
    for (size_t k = 0; k < json_array_size(workloads); k++) {
        const json_t *w = json_array_get(workloads, k);
        const json_t *layers = json_object_get(w, "layers");
        for (size_t i = 0; i < json_array_size(layers); i++) {
            const json_t *l = json_array_get(layers, i);
            cli_csv_string(c, json_string_value(json_object_get(w, "model")));
            cli_csv_int(c, json_integer_value(json_object_get(w, "batch")));
            cli_csv_int(c, json_integer_value(json_object_get(l, "group")));
            cli_csv_string(c, json_string_value(json_object_get(l, "layer")));
            cli_csv_string(c, json_string_value(json_object_get(l, "problem")));
            cli_csv_string(c, json_string_value(json_object_get(l, "padded")));
            cli_csv_int(c, json_integer_value(json_object_get(l, "tiles")));
            cli_csv_int(c, json_integer_value(json_object_get(l, "cycles")));
            cli_csv_double(c, json_number_value(json_object_get(l, "energy_pJ")));
            cli_csv_string(c, json_string_value(json_object_get(l, "mapping")));
            cli_csv_end_row(c);
        }
    }
}

/* Design o->design's layers and their mappings as the search stored them
 * with its candidate's last round; the nest is printed on the design
 * decoded from the run's space (its level names). */
static as_code show_layers(store *s, const char *db, const store_run *run, runs_options *o,
                           as_status *st)
{
    front_design d;
    candidate_rows c = {.round = -1};
    json_t *detail = NULL;
    arch_spec a;
    bool feasible;
    char reason[256], what[160];
    as_code code = find_front_design(s, db, run, o, &d, st);
    if (code == AS_OK) {
        c.iteration = d.iteration;
        c.slot = d.slot;
        code = store_each_row(s, run->id, keep_candidate_detail, &c, st);
    }
    snprintf(what, sizeof what, "%s: run %lld, design %lld (iteration %lld, slot %lld)", db,
             (long long)run->id, (long long)o->design, (long long)d.iteration, (long long)d.slot);
    if (code == AS_OK && c.out_of_memory)
        code = as_fail(st, AS_ENOMEM, "out of memory");
    else if (code == AS_OK && !c.detail_json)
        code = as_fail(st, AS_EINVAL, "%s: no candidate row stored", what);
    if (code == AS_OK)
        code = as_json_parse(c.detail_json, what, &detail, st);
    if (code == AS_OK)
        se_space_decode(&d.space, &d.point, &a, &feasible, reason, sizeof reason);
    const json_t *workloads = json_object_get(detail, "workloads");
    if (code == AS_OK)
        code = check_layers_stored(workloads, what, st);
    if (code == AS_OK && o->out.csv.out)
        csv_layers(&o->out.csv, workloads);
    bool usual = cli_output_usual(&o->out);
    cli_json j;
    if (code == AS_OK && usual && o->json) {
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_int_field(&j, "run", run->id);
        cli_json_int_field(&j, "design", o->design);
        cli_json_int_field(&j, "iteration", d.iteration);
        cli_json_int_field(&j, "slot", d.slot);
        cli_json_int_field(&j, "round", c.round);
        cli_json_key(&j, "workloads");
        cli_json_begin_array(&j);
    } else if (code == AS_OK && usual) {
        printf("design %lld of run %lld (iteration %lld, slot %lld, round %d): its compute "
               "layers and their mappings\n",
               (long long)o->design, (long long)run->id, (long long)d.iteration, (long long)d.slot,
               c.round);
    }
    for (size_t k = 0; code == AS_OK && usual && k < json_array_size(workloads); k++)
        code = print_workload_layers(json_array_get(workloads, k), &a, what, o->json, &j, st);
    if (code == AS_OK && usual && o->json) {
        cli_json_end_array(&j);
        cli_json_end_object(&j);
    }
    json_decref(detail);
    free(c.detail_json);
    return code;
}

/* ----------------------------------------------------------------- export */

/* The run to o->out_path, or to standard output; a failed export leaves
 * no partial file behind. */
static as_code export_run(store *s, const store_run *run, const runs_options *o, as_status *st)
{
    FILE *f = o->out_path ? fopen(o->out_path, "w") : stdout;
    if (!f)
        return as_fail(st, AS_EIO, "%s: %s", o->out_path, strerror(errno));
    as_code code = store_export(s, run->id, formats[o->format], f, st);
    if (f == stdout)
        return code;
    if (fclose(f) != 0 && code == AS_OK)
        code = as_fail(st, AS_EIO, "%s: %s", o->out_path, strerror(errno));
    if (code != AS_OK)
        remove(o->out_path);
    return code;
}

/* One action of `runs`: parse, open the store (never creating one), act. */
static int runs_action_run(runs_action action, int argc, char **argv)
{
    runs_options o = {.action = action, .db = CLI_DEFAULT_DB, .design = -1};
    cli_option options[RUNS_MAX_OPTIONS];
    cli_command cmd = runs_command(action, options, &o);
    int rc = parse_runs_options(&cmd, argc, argv, &o);
    if (rc != CLI_PARSED)
        return rc;
    struct stat file; /* an empty file would become an empty store too */
    const char *no_store = stat(o.db, &file) != 0 ? strerror(errno)
                           : file.st_size == 0    ? "an empty file"
                                                  : NULL;
    if (no_store)
        return cli_failf(&cmd, CLI_EXIT_USAGE, "io",
                         "%s: %s (runs reads an existing run store: give --db)", o.db, no_store);
    as_status st;
    as_status_clear(&st);
    store *s = NULL;
    store_run run;
    as_code code = store_open(&s, o.db, &st);
    if (code == AS_OK && o.action == RUNS_LIST)
        code = list_runs(s, o.db, o.json, &st);
    else if (code == AS_OK && (code = cli_find_run(s, o.db, o.run_id, &run, &st)) == AS_OK &&
             o.design >= 0 && strcmp(run_kind(s, run.id), "search") != 0)
        code = as_fail(&st, AS_EINVAL,
                       "run %lld is a %s run: it has %s, not a front of designs "
                       "(--design is for search runs)",
                       (long long)run.id, run_kind(s, run.id),
                       is_tune_run(s, run.id) ? "tuned layers" : "study cells");
    else if (code == AS_OK)
        code = o.action == RUNS_EXPORT ? export_run(s, &run, &o, &st)
               : o.emit_arch           ? emit_design(s, o.db, &run, &o, &st)
               : o.layers              ? show_layers(s, o.db, &run, &o, &st)
                                       : show_run(s, o.db, &run, o.json, &o.out, &st);
    store_close(s);
    rc = code != AS_OK ? cli_fail(&cmd, &st) : CLI_EXIT_OK;
    return action == RUNS_SHOW ? cli_output_end(&cmd, &o.out, rc) : rc;
}

static int runs_list(int argc, char **argv)
{
    return runs_action_run(RUNS_LIST, argc, argv);
}

static int runs_show(int argc, char **argv)
{
    return runs_action_run(RUNS_SHOW, argc, argv);
}

static int runs_export(int argc, char **argv)
{
    return runs_action_run(RUNS_EXPORT, argc, argv);
}

static void print_runs_help(FILE *out)
{
    for (int a = RUNS_LIST; a <= RUNS_EXPORT; a++) {
        runs_options o;
        cli_option options[RUNS_MAX_OPTIONS];
        cli_command cmd = runs_command((runs_action)a, options, &o);
        if (a > RUNS_LIST)
            fputc('\n', out);
        cli_print_help(&cmd, out);
    }
    fputc('\n', out);
    cli_runs_manage_help(out);
}

int cli_runs(int argc, char **argv)
{
    static const cli_action actions[] = {{"list", runs_list},
                                         {"show", runs_show},
                                         {"export", runs_export},
                                         {"resume", cli_runs_resume},
                                         {"delete", cli_runs_delete},
                                         {"compare", cli_runs_compare},
                                         {NULL, NULL}};
    return cli_dispatch("runs", actions, print_runs_help, argc, argv);
}
