/*
 * cmd_report.c -- `accelsearch report [RUN]`: the HTML report of a search
 * or study run in the store (report.h, docs/report.md), drawn from what
 * the store keeps: for a search, every candidate, the fronts' hypervolume
 * curve, and the chosen design's fusion plan and mappings per training
 * workload; for a study, what `study show --report` draws.  Also the one
 * writer of report files that map, fuse, search and study share.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"
#include "study/study.h"

as_code cli_write_report(const char *path, const char *title, json_t *data, as_status *st)
{
    if (!data)
        return st->code;
    FILE *f = fopen(path, "w");
    as_code code = f ? rp_write_html(f, title, data, st)
                     : as_fail(st, AS_EIO, "--report %s: cannot write the file", path);
    if (f && fclose(f) != 0 && code == AS_OK)
        code = as_fail(st, AS_EIO, "--report %s: cannot write the file", path);
    json_decref(data);
    return code;
}

typedef struct report_options {
    const char *db;
    const char *out_path;
    const char *space;
    int64_t run_id; /* 0: the newest */
} report_options;

enum { REPORT_MAX_OPTIONS = 4 };

static cli_command report_command(cli_option *options, report_options *o)
{
    int n = 0;
    options[n++] = cli_string("db", "FILE", &o->db,
                              "the run store (default: " CLI_DEFAULT_DB " in this directory)");
    options[n] = cli_string("output", "FILE.html", &o->out_path,
                            "where to write the report (default: run-RUN.html)");
    options[n++].short_name = 'o';
    options[n++] = cli_string("space", "S", &o->space,
                              "the run's design space (default: the built-in space its\n"
                              "configuration names; a space file must be given)");
    return (cli_command){
        .name = "report",
        .synopsis = "report [RUN] [--db FILE] [-o FILE.html] [--space S]",
        .about = "Write a self-contained HTML report of a search or study run in the store\n"
                 "(default: the newest run).  A search's: its Pareto front among every\n"
                 "candidate, the hypervolume curve, the front's parameters, and the chosen\n"
                 "design's fusion groups, energy and mappings per training workload.  A\n"
                 "study's: as study show --report draws it.  It opens offline in any browser.\n",
        .epilog = "Validation workloads and --baseline designs are not stored: search --report\n"
                  "draws them too.\n",
        .options = options,
        .n_options = n,
        .max_positional = 1,
    };
}

/* The report of search run `run` of db into o->out_path. */
static as_code report_search_run(store *db, const store_run *run, const report_options *o,
                                 as_status *st)
{
    char *config = NULL;
    se_space *space = malloc(sizeof *space);
    se_run_config *cfg = malloc(sizeof *cfg);
    se_result result = {0};
    as_code code = space && cfg ? store_run_config(db, run->id, &config, st)
                                : as_fail(st, AS_ENOMEM, "out of memory");
    if (code == AS_OK)
        code = se_run_config_parse(config, cfg, st);
    if (code == AS_OK)
        code = cli_run_space(db, run, o->space, space, st);
    if (code == AS_OK)
        code = se_result_read(db, run->id, space, cfg, &result, st);
    if (code == AS_OK) {
        result.interrupted = run->state != STORE_FINISHED;
        char title[256];
        snprintf(title, sizeof title, "accelsearch search run %lld: %s", (long long)run->id,
                 space->name);
        code = cli_write_report(o->out_path, title,
                                rp_search_data(space, cfg, run->seed, &result, NULL, st), st);
    }
    se_result_free(&result);
    free(config);
    free(space);
    free(cfg);
    return code;
}

int cli_report(int argc, char **argv)
{
    report_options o = {.db = CLI_DEFAULT_DB};
    cli_option options[REPORT_MAX_OPTIONS];
    cli_command cmd = report_command(options, &o);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc == CLI_PARSED)
        rc = cli_run_id_argument(&cmd, &o.run_id);
    if (rc != CLI_PARSED)
        return rc;
    as_status st;
    as_status_clear(&st);
    struct stat info;
    store *db = NULL;
    store_run run;
    char path[64], *config = NULL;
    as_code code = stat(o.db, &info) != 0
                       ? as_fail(&st, AS_EINVAL, "%s: no run store here (give --db FILE)", o.db)
                       : store_open(&db, o.db, &st);
    if (code == AS_OK)
        code = cli_find_run(db, o.db, o.run_id, &run, &st);
    if (code == AS_OK)
        code = store_run_config(db, run.id, &config, &st);
    bool study = code == AS_OK && study_is_config(config);
    if (code == AS_OK && !study && strncmp(config, "accelsearch search ", 19) != 0)
        code = as_fail(&st, AS_EINVAL, "run %lld is a tune run: reports draw searches and studies",
                       (long long)run.id);
    if (code == AS_OK && !o.out_path) {
        snprintf(path, sizeof path, "run-%lld.html", (long long)run.id);
        o.out_path = path;
    }
    if (code == AS_OK)
        code = study ? cli_study_report_run(db, run.id, o.out_path, &st)
                     : report_search_run(db, &run, &o, &st);
    free(config);
    store_close(db);
    if (code != AS_OK)
        return cli_fail(&cmd, &st);
    cli_note("wrote %s", o.out_path);
    return CLI_EXIT_OK;
}
