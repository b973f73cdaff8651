/*
 * cmd_runs_manage.c -- `accelsearch runs resume|delete|compare`: the runs
 * of a store by id.
 *
 *   resume ID     continues an unfinished search or study with the
 *                 configuration the store keeps (nothing else to repeat);
 *   delete ID...  removes runs with their rows and fronts;
 *   compare ID... sets search runs' last fronts side by side, with their
 *                 hypervolumes against one common reference point.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "study/study.h"

as_code cli_store_open_existing(const char *db, store **out, as_status *st)
{
    struct stat file; /* store_open would make an empty store of a missing file */
    *out = NULL;
    if (stat(db, &file) != 0 || file.st_size == 0)
        return as_fail(st, AS_EINVAL, "%s: no run store there (give --db FILE)", db);
    return store_open(out, db, st);
}

/* The run ids a command was given (its positionals) into ids[]; a usage
 * error when one is not an id. */
static int run_ids(cli_command *cmd, int64_t *ids)
{
    for (int k = 0; k < cmd->n_positional; k++) {
        cli_command one = *cmd;
        one.positional[0] = cmd->positional[k];
        one.n_positional = 1;
        int rc = cli_run_id_argument(&one, &ids[k]);
        if (rc != CLI_PARSED)
            return rc;
    }
    return CLI_PARSED;
}

/* ---------------------------------------------------------------- delete */

typedef struct manage_options {
    const char *db;
    const char *space;
    const char *report_path;
    int64_t threads;
    bool json;
} manage_options;

enum { MANAGE_MAX_OPTIONS = 6 };

static cli_option db_option(manage_options *o)
{
    return cli_string("db", "FILE", &o->db,
                      "the run store (default: " CLI_DEFAULT_DB " in this directory)");
}

static cli_command delete_command(cli_option *options, manage_options *o)
{
    options[0] = db_option(o);
    return (cli_command){
        .name = "runs delete",
        .help_for = "runs",
        .synopsis = "runs delete RUN... [--db FILE]",
        .about = "Delete runs from the store, with every candidate round and front they kept.\n"
                 "A run still running (its process alive) is refused.\n",
        .options = options,
        .n_options = 1,
        .max_positional = CLI_MAX_POSITIONAL,
    };
}

int cli_runs_delete(int argc, char **argv)
{
    manage_options o = {.db = CLI_DEFAULT_DB};
    cli_option options[MANAGE_MAX_OPTIONS];
    cli_command cmd = delete_command(options, &o);
    int64_t ids[CLI_MAX_POSITIONAL];
    int rc = cli_parse(&cmd, argc, argv);
    if (rc == CLI_PARSED && cmd.n_positional == 0)
        rc = cli_usage_error(&cmd, "give the ids of the runs to delete (accelsearch runs list)");
    if (rc == CLI_PARSED)
        rc = run_ids(&cmd, ids);
    if (rc != CLI_PARSED)
        return rc;
    as_status st;
    as_status_clear(&st);
    store *db;
    as_code code = cli_store_open_existing(o.db, &db, &st);
    for (int k = 0; code == AS_OK && k < cmd.n_positional; k++)
        if ((code = store_run_delete(db, ids[k], &st)) == AS_OK)
            printf("deleted run %lld\n", (long long)ids[k]);
    store_close(db);
    return code == AS_OK ? CLI_EXIT_OK : cli_fail(&cmd, &st);
}

/* ---------------------------------------------------------------- resume */

static cli_command resume_command(cli_option *options, manage_options *o)
{
    int n = 0;
    options[n++] = db_option(o);
    options[n++] = cli_threads_option(&o->threads);
    options[n++] = cli_json_option(&o->json);
    options[n++] = cli_string("space", "FILE", &o->space,
                              "the space file of a search run over a space of a file");
    options[n++] = cli_string("report", "FILE.html", &o->report_path,
                              "also write the run's HTML report, as search --report does");
    return (cli_command){
        .name = "runs resume",
        .help_for = "runs",
        .synopsis = "runs resume RUN [--db FILE] [--threads N] [--json] [--space FILE] "
                    "[--report FILE.html]",
        .about = "Continue an unfinished search or study run (interrupted, or killed) with the\n"
                 "configuration and seed the store keeps: the result is the one the run would\n"
                 "have reached uninterrupted.  Threads and output are this command's.\n",
        .options = options,
        .n_options = n,
        .max_positional = 1,
    };
}

/* argv for `search` continuing the run of configuration cfg: its
 * settings as flags, then --resume with the store (strings into buf). */
typedef struct argv_builder {
    char *argv[96];
    int argc;
    char buf[8192];
    size_t used;
} argv_builder;

static void push(argv_builder *b, const char *word)
{
    size_t n = strlen(word) + 1;
    if (b->argc >= (int)(sizeof b->argv / sizeof b->argv[0]) - 1 || b->used + n > sizeof b->buf)
        return; /* cannot happen: a configuration has at most 16 models */
    b->argv[b->argc++] = memcpy(b->buf + b->used, word, n);
    b->used += n;
    b->argv[b->argc] = NULL;
}

static void push_int(argv_builder *b, const char *flag, long long value)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    push(b, flag);
    push(b, text);
}

static void search_argv(const se_run_config *cfg, const store_run *run, const manage_options *o,
                        const char *space, argv_builder *b)
{
    char objectives[128] = "";
    for (int k = 0; k < cfg->n_objectives; k++)
        snprintf(objectives + strlen(objectives), sizeof objectives - strlen(objectives), "%s%s",
                 k ? "," : "", se_objective_name(cfg->objectives[k]));
    if (cfg->around_set) { /* a space around a design: rebuilt from it */
        push(b, "--around");
        push(b, cfg->around.source);
        push(b, "--vary");
        push(b, cfg->around.vary);
        push_int(b, "--range", cfg->around.range);
        char number[64];
        const char *flag[2] = {"--max-area", "--max-power"};
        double value[2] = {cfg->around.max_area_mm2, cfg->around.max_power_W};
        for (int k = 0; k < 2; k++)
            if (value[k] > 0) {
                snprintf(number, sizeof number, "%.17g", value[k]);
                push(b, flag[k]);
                push(b, number);
            }
    } else {
        push(b, "--space");
        push(b, space);
    }
    const char *pairs[][2] = {
        {"--algo", se_algo_name(cfg->algo)},
        {"--fusion", se_fusion_name(cfg->fusion)},
        {"--aggregate", cfg->aggregate == SE_AGG_SUM ? "sum" : "geomean"},
        {"--scalar", se_objective_name(cfg->scalar)},
        {"--objectives", objectives},
        {"--db", o->db},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        push(b, pairs[k][0]);
        push(b, pairs[k][1]);
    }
    push_int(b, "--hw-budget", cfg->budget);
    push_int(b, "--batch", cfg->batch);
    push_int(b, "--plan-budget", cfg->sw_budget);
    push_int(b, "--sh-rounds", cfg->sh_rounds);
    push_int(b, "--map-budget", cfg->map_budget);
    push_int(b, "--seed", (long long)run->seed);
    if (cfg->weights != MAP_WEIGHTS_AUTO) { /* search's --weights names only the forced modes */
        push(b, "--weights");
        push(b, map_weights_name(cfg->weights));
    }
    if (o->threads > 0)
        push_int(b, "--threads", o->threads);
    for (int k = 0; k < cfg->n_workloads; k++) {
        push(b, cfg->validation[k] ? "--validate-model" : "--model");
        push(b, cfg->model[k]);
    }
    if (cfg->no_epilogue_fusion)
        push(b, "--no-epilogue-fusion");
    if (o->json)
        push(b, "--json");
    if (o->report_path) {
        push(b, "--report");
        push(b, o->report_path);
    }
    push(b, "--resume");
}

/* Whether name is one of the built-in spaces. */
static bool builtin_space(const char *name)
{
    int n;
    const char *const *names = se_space_builtin_names(&n);
    for (int k = 0; k < n; k++)
        if (!strcmp(names[k], name))
            return true;
    return false;
}

/* Resume search run `run` of configuration text config. */
static int resume_search(cli_command *cmd, const store_run *run, const char *config,
                         const manage_options *o)
{
    se_run_config cfg;
    as_status st;
    as_status_clear(&st);
    if (se_run_config_parse(config, &cfg, &st) != AS_OK)
        return cli_fail(cmd, &st);
    if (!o->space && !cfg.around_set && !builtin_space(cfg.space))
        return cli_usage_error(cmd,
                               "run %lld searched the space '%s' of a file: give it with "
                               "--space FILE",
                               (long long)run->id, cfg.space);
    if (run->seed > INT64_MAX)
        return cli_usage_error(cmd, "run %lld's seed %llu is beyond what --seed takes",
                               (long long)run->id, (unsigned long long)run->seed);
    argv_builder b = {0};
    search_argv(&cfg, run, o, o->space ? o->space : cfg.space, &b);
    return cli_search(b.argc, b.argv);
}

/* Resume study run `run`: its stored study text as the study file. */
static int resume_study(cli_command *cmd, const char *config, const manage_options *o)
{
    char path[] = "/tmp/accelsearch-study-XXXXXX";
    int fd = mkstemp(path);
    const char *text = config + strlen(STUDY_CONFIG_PREFIX);
    bool written = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0)
        close(fd);
    if (!written) {
        remove(path);
        return cli_failf(cmd, CLI_EXIT_FAILURE, "io", "cannot write a temporary study file: %s",
                         strerror(errno));
    }
    argv_builder b = {0};
    push(&b, path);
    push(&b, "--resume");
    push(&b, "--db");
    push(&b, o->db);
    if (o->threads > 0)
        push_int(&b, "--threads", o->threads);
    if (o->json)
        push(&b, "--json");
    int rc = cli_study(b.argc, b.argv);
    remove(path);
    return rc;
}

int cli_runs_resume(int argc, char **argv)
{
    manage_options o = {.db = CLI_DEFAULT_DB};
    cli_option options[MANAGE_MAX_OPTIONS];
    cli_command cmd = resume_command(options, &o);
    int64_t id = 0;
    int rc = cli_parse(&cmd, argc, argv);
    if (rc == CLI_PARSED && cmd.n_positional == 0)
        rc = cli_usage_error(&cmd, "give the id of the run to resume (accelsearch runs list)");
    if (rc == CLI_PARSED)
        rc = cli_run_id_argument(&cmd, &id);
    if (rc != CLI_PARSED)
        return rc;
    as_status st;
    as_status_clear(&st);
    store *db;
    store_run run;
    char *config = NULL;
    as_code code = cli_store_open_existing(o.db, &db, &st);
    if (code == AS_OK)
        code = store_run_get(db, id, &run, &st);
    if (code == AS_OK)
        code = store_run_config(db, id, &config, &st);
    if (code == AS_OK && run.state == STORE_FINISHED)
        code = as_fail(&st, AS_EINVAL, "run %lld is finished: nothing to resume", (long long)id);
    if (code == AS_OK && run.state == STORE_RUNNING && run.owner[0])
        code =
            as_fail(&st, AS_EINVAL, "run %lld is running (process %s)", (long long)id, run.owner);
    store_close(db); /* the command resumed opens it again */
    if (code != AS_OK) {
        free(config);
        return cli_fail(&cmd, &st);
    }
    if (study_is_config(config))
        rc = resume_study(&cmd, config, &o);
    else if (strncmp(config, "accelsearch search ", 19) == 0)
        rc = resume_search(&cmd, &run, config, &o);
    else
        rc = cli_usage_error(&cmd, "run %lld is a tune run: tune has no resume; run it again",
                             (long long)id);
    free(config);
    return rc;
}

/* --------------------------------------------------------------- compare */

/* One run of a comparison: its configuration and last front. */
typedef struct compared_run {
    store_run run;
    se_run_config cfg;
    json_t *front; /* the stored points */
    int64_t n;
    double *y; /* n x n_obj, log10 of the objectives */
    double hypervolume;
    int64_t dominated; /* of its points, those another run's front dominates */
} compared_run;

/* Read run id into c: a search run with a stored front. */
static as_code read_compared(store *db, int64_t id, compared_run *c, as_status *st)
{
    char *config = NULL, *front = NULL;
    int64_t iteration;
    double hv;
    as_code code = store_run_get(db, id, &c->run, st);
    if (code == AS_OK)
        code = store_run_config(db, id, &config, st);
    if (code == AS_OK && strncmp(config, "accelsearch search ", 19) != 0)
        code =
            as_fail(st, AS_EINVAL, "run %lld is not a search run: it has no front", (long long)id);
    if (code == AS_OK)
        code = se_run_config_parse(config, &c->cfg, st);
    if (code == AS_OK)
        code = store_last_front(db, id, &iteration, &hv, &front, st);
    if (code == AS_OK && !front)
        code = as_fail(st, AS_EINVAL, "run %lld has no front stored yet", (long long)id);
    if (code == AS_OK)
        code = as_json_parse(front, "a stored front", &c->front, st);
    free(config);
    free(front);
    if (code != AS_OK)
        return code;
    c->n = (int64_t)json_array_size(c->front);
    c->y = malloc((size_t)(c->n * c->cfg.n_objectives + 1) * sizeof *c->y);
    if (!c->y)
        return as_fail(st, AS_ENOMEM, "out of memory");
    for (int64_t i = 0; i < c->n; i++) {
        se_metrics m;
        se_metrics_from_json(json_array_get(c->front, (size_t)i), &m);
        for (int k = 0; k < c->cfg.n_objectives; k++)
            c->y[i * c->cfg.n_objectives + k] =
                log10(se_metrics_objective(&m, c->cfg.objectives[k]));
    }
    return AS_OK;
}

/* The common reference point (log10 units): the worst value of each
 * objective over every compared front, plus one (a decade beyond, the
 * rule a run applies to its first feasible design); and each run's
 * hypervolume against it and its points another run dominates. */
static void compare_fronts(compared_run *c, int n, int n_obj, double *reference)
{
    for (int k = 0; k < n_obj; k++) {
        reference[k] = -INFINITY;
        for (int r = 0; r < n; r++)
            for (int64_t i = 0; i < c[r].n; i++)
                reference[k] = fmax(reference[k], c[r].y[i * n_obj + k]);
        reference[k] += 1.0;
    }
    for (int r = 0; r < n; r++) {
        c[r].hypervolume = se_hypervolume(c[r].y, c[r].n, n_obj, reference);
        c[r].dominated = 0;
        for (int64_t i = 0; i < c[r].n; i++) {
            bool beaten = false;
            for (int q = 0; q < n && !beaten; q++)
                for (int64_t j = 0; q != r && j < c[q].n && !beaten; j++)
                    beaten = se_dominates(c[q].y + j * n_obj, c[r].y + i * n_obj, n_obj);
            c[r].dominated += beaten;
        }
    }
}

/* An objective's value with its unit, by the output rule (cli_eng; an
 * area takes no prefix). */
static void objective_text(se_objective o, double v, char *buf, size_t size)
{
    char value[CLI_ENG_BYTES];
    if (o == SE_OBJ_AREA)
        cli_num(v, "mm2", value, sizeof value);
    else if (o == SE_OBJ_ENERGY)
        cli_eng(v * 1e-12, "J", value, sizeof value);
    else
        cli_eng(v, o == SE_OBJ_LATENCY ? "s" : o == SE_OBJ_EDP ? "J*s" : "J", value, sizeof value);
    snprintf(buf, size, "%s %s", se_objective_name(o), value);
}

static void print_compare_text(const compared_run *c, int n, const double *reference)
{
    int n_obj = c[0].cfg.n_objectives;
    printf("objectives");
    for (int k = 0; k < n_obj; k++)
        printf(" %s", se_objective_name(c[0].cfg.objectives[k]));
    printf("; common reference point (log10):");
    for (int k = 0; k < n_obj; k++)
        printf(" %s", CLI_NUM(reference[k], ""));
    printf("\n\n%4s  %-7s  %-10s  %-11s  %10s  %6s  %14s  %14s  %s\n", "run", "algo", "space",
           "state", "candidates", "front", "hypervolume", "hv (own ref)", "front points beaten");
    for (int r = 0; r < n; r++)
        printf("%4lld  %-7s  %-10s  %-11s  %10lld  %6lld  %14s  %14s  %lld of %lld\n",
               (long long)c[r].run.id, se_algo_name(c[r].cfg.algo), c[r].cfg.space,
               store_state_name(c[r].run.state), (long long)c[r].run.n_candidates,
               (long long)c[r].n, CLI_NUM(c[r].hypervolume, ""), CLI_NUM(c[r].run.hypervolume, ""),
               (long long)c[r].dominated, (long long)c[r].n);
    for (int r = 0; r < n; r++) {
        printf("\nrun %lld front:\n", (long long)c[r].run.id);
        for (int64_t i = 0; i < c[r].n; i++) {
            const json_t *p = json_array_get(c[r].front, (size_t)i);
            printf("  ");
            for (int k = 0; k < n_obj; k++) {
                char value[CLI_ENG_BYTES + 32];
                objective_text(c[0].cfg.objectives[k], pow(10, c[r].y[i * n_obj + k]), value,
                               sizeof value);
                printf("%s%s", k ? ", " : "", value);
            }
            char *params = json_dumps(json_object_get(p, "params"), JSON_COMPACT);
            printf("  %s\n", params ? params : "");
            free(params);
        }
    }
}

static void print_compare_json(const compared_run *c, int n, const double *reference)
{
    int n_obj = c[0].cfg.n_objectives;
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "objectives");
    cli_json_begin_array(&j);
    for (int k = 0; k < n_obj; k++)
        cli_json_string(&j, se_objective_name(c[0].cfg.objectives[k]));
    cli_json_end_array(&j);
    cli_json_key(&j, "reference_log10");
    cli_json_begin_array(&j);
    for (int k = 0; k < n_obj; k++)
        cli_json_double(&j, reference[k]);
    cli_json_end_array(&j);
    cli_json_key(&j, "runs");
    cli_json_begin_array(&j);
    for (int r = 0; r < n; r++) {
        cli_json_begin_object(&j);
        cli_json_int_field(&j, "id", c[r].run.id);
        cli_json_string_field(&j, "algo", se_algo_name(c[r].cfg.algo));
        cli_json_string_field(&j, "space", c[r].cfg.space);
        cli_json_string_field(&j, "state", store_state_name(c[r].run.state));
        cli_json_int_field(&j, "candidates", c[r].run.n_candidates);
        cli_json_double_field(&j, "hypervolume", c[r].hypervolume);
        cli_json_double_field(&j, "hypervolume_own_reference", c[r].run.hypervolume);
        cli_json_int_field(&j, "front_points_beaten", c[r].dominated);
        cli_json_key(&j, "front");
        cli_json_value(&j, c[r].front);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    fputc('\n', stdout);
}

static cli_command compare_command(cli_option *options, manage_options *o)
{
    int n = 0;
    options[n++] = db_option(o);
    options[n++] = cli_json_option(&o->json);
    return (cli_command){
        .name = "runs compare",
        .help_for = "runs",
        .synopsis = "runs compare RUN RUN... [--db FILE] [--json]",
        .about = "Set the last Pareto fronts of search runs side by side: each run's hypervolume\n"
                 "against one reference point common to all (a decade beyond the worst value of\n"
                 "each objective on any of the fronts, in log10 units, as a run's own reference\n"
                 "is a decade beyond its first design), the hypervolume against its own\n"
                 "reference as stored, how many of its front points another run's front\n"
                 "dominates, and the fronts themselves.  The runs must share their objectives.\n",
        .options = options,
        .n_options = n,
        .max_positional = CLI_MAX_POSITIONAL,
    };
}

int cli_runs_compare(int argc, char **argv)
{
    manage_options o = {.db = CLI_DEFAULT_DB};
    cli_option options[MANAGE_MAX_OPTIONS];
    cli_command cmd = compare_command(options, &o);
    int64_t ids[CLI_MAX_POSITIONAL];
    int rc = cli_parse(&cmd, argc, argv);
    if (rc == CLI_PARSED && cmd.n_positional < 2)
        rc = cli_usage_error(&cmd, "give two runs or more to compare (accelsearch runs list)");
    if (rc == CLI_PARSED)
        rc = run_ids(&cmd, ids);
    if (rc != CLI_PARSED)
        return rc;
    int n = cmd.n_positional;
    compared_run *c = calloc((size_t)n, sizeof *c);
    as_status st;
    as_status_clear(&st);
    store *db = NULL;
    as_code code =
        c ? cli_store_open_existing(o.db, &db, &st) : as_fail(&st, AS_ENOMEM, "out of memory");
    for (int r = 0; code == AS_OK && r < n; r++) {
        code = read_compared(db, ids[r], &c[r], &st);
        bool same = code == AS_OK && c[r].cfg.n_objectives == c[0].cfg.n_objectives &&
                    !memcmp(c[r].cfg.objectives, c[0].cfg.objectives,
                            sizeof c[0].cfg.objectives[0] * (size_t)c[0].cfg.n_objectives);
        if (code == AS_OK && !same)
            code = as_fail(&st, AS_EINVAL,
                           "runs %lld and %lld have different objectives: their fronts are not "
                           "comparable",
                           (long long)ids[0], (long long)ids[r]);
    }
    if (code == AS_OK) {
        double reference[SE_MAX_OBJECTIVES];
        compare_fronts(c, n, c[0].cfg.n_objectives, reference);
        if (o.json)
            print_compare_json(c, n, reference);
        else
            print_compare_text(c, n, reference);
    }
    for (int r = 0; c && r < n; r++) {
        json_decref(c[r].front);
        free(c[r].y);
    }
    free(c);
    store_close(db);
    return code == AS_OK ? CLI_EXIT_OK : cli_fail(&cmd, &st);
}

void cli_runs_manage_help(FILE *out)
{
    manage_options o;
    cli_option options[MANAGE_MAX_OPTIONS];
    cli_command r = resume_command(options, &o);
    cli_print_help(&r, out);
    fputc('\n', out);
    cli_command d = delete_command(options, &o);
    cli_print_help(&d, out);
    fputc('\n', out);
    cli_command c = compare_command(options, &o);
    cli_print_help(&c, out);
}
