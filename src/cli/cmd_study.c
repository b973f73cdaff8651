/*
 * cmd_study.c -- `accelsearch study`: run a DLAS-style across-stack
 * perturbation study (a study file, or the built-in default) and print
 * its summary tables; `accelsearch study show RUN` prints a stored one.
 *
 * Every cell is kept in the run store the moment it is costed, so a study
 * killed at any point continues with --resume; Ctrl-C stops it, keeps what
 * is done and prints the tables of the cells so far (exit status 130).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"
#include "store/store.h"
#include "study/study.h"

typedef struct study_cli {
    const char *db_path, *csv_path, *report_path;
    int64_t threads, run_id;
    bool use_default, resume, json, no_db, db_set;
} study_cli;

enum { STUDY_MAX_OPTIONS = 10 };

/* The options both forms share: where the store is and how to print. */
static int common_options(cli_option *options, study_cli *c)
{
    int n = 0;
    options[n] =
        cli_string("db", "FILE", &c->db_path, "the run store (default " CLI_DEFAULT_DB ")");
    options[n++].given = &c->db_set;
    options[n++] = cli_string("csv", "FILE", &c->csv_path,
                              "also write every cell as CSV (one row per cell, units in\n"
                              "the header; '-' for standard output instead of the tables)");
    options[n++] = cli_json_option(&c->json);
    options[n++] = cli_string("report", "FILE.html", &c->report_path,
                              "also write a self-contained HTML report of the study\n"
                              "(docs/report.md): its tables, charts and observations");
    return n;
}

static cli_command run_command(cli_option *options, study_cli *c)
{
    int n = common_options(options, c);
    options[n++] = cli_flag("default", &c->use_default,
                            "run the built-in study (docs/studies/dlas.yaml): DLAS's\n"
                            "CIFAR-10 and ImageNet grids on four presets");
    options[n++] = cli_flag("resume", &c->resume,
                            "continue the newest unfinished run of this study in the\n"
                            "store: its cells are read back, the rest are run");
    options[n++] = cli_threads_option(&c->threads);
    options[n++] = cli_flag("no-db", &c->no_db, "keep nothing on disk");
    return (cli_command){
        .name = "study",
        .synopsis = "study FILE.yaml|--default [--resume] [--threads N] [--json] [--csv FILE]\n"
                    "      [--report FILE.html]\n"
                    "study show [RUN] [--db FILE] [--json] [--csv FILE] [--report FILE.html]",
        .about = "Run an across-stack perturbation study (DLAS): every model x compression x\n"
                 "algorithm x data format x software x hardware cell of the study file,\n"
                 "then the summary tables -- the fastest algorithm and compression per model\n"
                 "and platform, the share of the expected speedup each compression reaches,\n"
                 "rank correlations of MACs, parameters and latency -- and which of DLAS's\n"
                 "observations the grid supports.  docs/study.md has the file format.\n",
        .epilog = "Cells run in parallel and each is stored as it completes: Ctrl-C stops the\n"
                  "study, prints the tables of the cells done and exits with status 130;\n"
                  "--resume continues it.\n",
        .options = options,
        .n_options = n,
        .max_positional = 1,
    };
}

static cli_command show_command(cli_option *options, study_cli *c)
{
    int n = common_options(options, c);
    return (cli_command){
        .name = "study show",
        .help_for = "study",
        .synopsis = "study show [RUN] [--db FILE] [--json] [--csv FILE] [--report FILE.html]",
        .about = "Print the summary tables of a stored study (default: the newest).\n",
        .options = options,
        .n_options = n,
        .max_positional = 1,
    };
}

/* ---------------------------------------------------------- progress */

static void on_progress(void *user, int64_t done, int64_t total)
{
    cli_progress_update(user, done, total);
}

/* ------------------------------------------------------------ output */

/* The HTML report of result r with its summary s at path (a failed write
 * names the file). */
static as_code write_report(const char *path, const study_result *r, const study_summary *s,
                            as_status *st)
{
    char title[256];
    snprintf(title, sizeof title, "accelsearch study: %s", r->spec.name);
    return cli_write_report(path, title, study_report_data(r, s, st), st);
}

as_code cli_study_report_run(store *db, int64_t run_id, const char *path, as_status *st)
{
    study_result result = {0};
    study_summary summary = {0};
    as_code code = study_read(db, run_id, &result, st);
    if (code == AS_OK)
        code = study_summarize(&result, &summary, st);
    if (code == AS_OK)
        code = write_report(path, &result, &summary, st);
    study_summary_free(&summary);
    study_result_free(&result);
    return code;
}

/* The tables (or JSON), every cell as CSV to csv_path when given ("-":
 * standard output, instead of the tables), and the HTML report to
 * report_path when given. */
static as_code print_result(const study_result *r, bool json, const char *csv_path,
                            const char *report_path, as_status *st)
{
    study_summary summary = {0};
    as_code code = study_summarize(r, &summary, st);
    bool csv_to_stdout = csv_path && strcmp(csv_path, "-") == 0;
    if (code == AS_OK && csv_path) {
        FILE *f = csv_to_stdout ? stdout : fopen(csv_path, "w");
        if (!f)
            code = as_fail(st, AS_EIO, "--csv %s: cannot write the file", csv_path);
        else {
            code = study_write_csv(f, r, st);
            if (!csv_to_stdout && fclose(f) != 0 && code == AS_OK)
                code = as_fail(st, AS_EIO, "--csv %s: cannot write the file", csv_path);
        }
    }
    if (code == AS_OK && json) {
        json_t *doc = study_to_json(r, &summary, st);
        if (!doc)
            code = st->code != AS_OK ? st->code : as_fail(st, AS_ENOMEM, "out of memory");
        else if (!as_json_dump(stdout, doc, AS_JSON_INDENT) || fputc('\n', stdout) == EOF)
            code = as_fail(st, AS_EIO, "cannot write the JSON to standard output");
        json_decref(doc);
    } else if (code == AS_OK && !csv_to_stdout)
        code = study_write_text(stdout, r, &summary, st);
    if (code == AS_OK && report_path)
        code = write_report(report_path, r, &summary, st);
    study_summary_free(&summary);
    return code;
}

/* A stored study's tables, CSV and report (print_result's). */
static as_code print_run(store *db, int64_t run_id, bool json, const char *csv_path,
                         const char *report_path, as_status *st)
{
    study_result result = {0};
    as_code code = study_read(db, run_id, &result, st);
    if (code == AS_OK)
        code = print_result(&result, json, csv_path, report_path, st);
    study_result_free(&result);
    return code;
}

as_code cli_study_print_run(store *db, int64_t run_id, bool json, const char *csv_path,
                            as_status *st)
{
    return print_run(db, run_id, json, csv_path, NULL, st);
}

/* ------------------------------------------------------------- run */

static int run_study(int argc, char **argv)
{
    study_cli c = {.db_path = CLI_DEFAULT_DB, .threads = cli_default_threads()};
    cli_option options[STUDY_MAX_OPTIONS];
    cli_command cmd = run_command(options, &c);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (c.use_default == (cmd.n_positional == 1))
        return cli_usage_error(&cmd, "give a study file or --default (one of them)");
    if (c.no_db && (c.db_set || c.resume))
        return cli_usage_error(&cmd, "--no-db conflicts with %s", c.resume ? "--resume" : "--db");
    as_status st;
    as_status_clear(&st);
    study_spec *spec = malloc(sizeof *spec);
    if (!spec) {
        as_fail(&st, AS_ENOMEM, "out of memory");
        return cli_fail(&cmd, &st);
    }
    as_code code =
        c.use_default ? study_default(spec, &st) : study_load(cmd.positional[0], spec, &st);
    store *db = NULL;
    if (code == AS_OK && !c.no_db)
        code = store_open(&db, c.db_path, &st);
    volatile int stop = 0;
    cli_progress bar;
    study_options o;
    study_options_default(&o);
    o.threads = (int)c.threads;
    o.stop_flag = &stop;
    o.db = db;
    o.resume = c.resume;
    o.progress = on_progress;
    o.progress_user = &bar;
    study_result result = {0};
    if (code == AS_OK) {
        cli_catch_interrupt(&stop);
        cli_progress_init(&bar, "study");
        code = study_run(spec, &o, &result, &st);
        cli_progress_end(&bar);
    }
    store_close(db);
    free(spec);
    if (code != AS_OK) {
        study_result_free(&result);
        return cli_fail(&cmd, &st);
    }
    if (stop)
        fprintf(stderr,
                "accelsearch: interrupted: %lld of %lld cells done%s; their tables follow\n",
                (long long)result.n_done, (long long)result.n_cells,
                result.run_id ? "; continue with --resume" : "");
    code = print_result(&result, c.json, c.csv_path, c.report_path, &st);
    study_result_free(&result);
    if (code != AS_OK)
        return cli_fail(&cmd, &st);
    return stop ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
}

/* ------------------------------------------------------------ show */

/* The newest study run of the store (its configuration says so), or 0. */
static as_code newest_study(store *db, int64_t *run_id, as_status *st)
{
    store_run *runs = NULL;
    int64_t n = 0;
    *run_id = 0;
    as_code code = store_run_list(db, &runs, &n, st);
    for (int64_t i = n - 1; code == AS_OK && i >= 0 && !*run_id; i--) {
        char *config = NULL;
        code = store_run_config(db, runs[i].id, &config, st);
        if (code == AS_OK && study_is_config(config))
            *run_id = runs[i].id;
        free(config);
    }
    free(runs);
    return code;
}

static int show_study(int argc, char **argv)
{
    study_cli c = {.db_path = CLI_DEFAULT_DB};
    cli_option options[STUDY_MAX_OPTIONS];
    cli_command cmd = show_command(options, &c);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional == 1) {
        char *end;
        c.run_id = strtoll(cmd.positional[0], &end, 10);
        if (*end || c.run_id < 1)
            return cli_usage_error(&cmd, "RUN is a run id (accelsearch runs list), got '%s'",
                                   cmd.positional[0]);
    }
    struct stat file; /* store_open would make an empty store of a missing file */
    if (stat(c.db_path, &file) != 0 || file.st_size == 0)
        return cli_failf(&cmd, CLI_EXIT_USAGE, "io",
                         "%s: no run store there (study show reads an existing one: give --db)",
                         c.db_path);
    as_status st;
    as_status_clear(&st);
    store *db = NULL;
    as_code code = store_open(&db, c.db_path, &st);
    if (code == AS_OK && !c.run_id && (code = newest_study(db, &c.run_id, &st)) == AS_OK &&
        !c.run_id)
        code = as_fail(&st, AS_EINVAL, "%s holds no study", c.db_path);
    if (code == AS_OK)
        code = print_run(db, c.run_id, c.json, c.csv_path, c.report_path, &st);
    store_close(db);
    return code == AS_OK ? CLI_EXIT_OK : cli_fail(&cmd, &st);
}

int cli_study(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "show") == 0)
        return show_study(argc - 1, argv + 1);
    return run_study(argc, argv);
}
