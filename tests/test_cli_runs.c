/*
 * test_cli_runs.c -- `accelsearch runs list|show|export` on a store that
 * the test writes through the library: tables, JSON, exports, exit
 * statuses, and that runs never creates a store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "search/search.h"
#include "store/store.h"

#include "cli_run.h"

/* Run `accelsearch ARGS` (ARGS from fmt) in directory cwd (NULL: this
 * one). */
static void runf(run_result *r, const char *cwd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void runf(run_result *r, const char *cwd, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    run_in(r, cwd, args);
}

static void expect_in(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("expected '%s' in:\n%s", what, text);
}

static const char front_json[] =
    "[{\"params\": {\"pe_x\": 14, \"glb\": \"shared\"}, \"latency_s\": 0.0015, "
    "\"energy_pJ\": 2500000, \"area_mm2\": 1.25, \"edp\": 3.75e-09},\n"
    " {\"params\": {\"pe_x\": 8, \"glb\": \"private\"}, \"latency_s\": 0.003, "
    "\"energy_pJ\": 1200000, \"area_mm2\": 0.5, \"edp\": 3.6e-09}]";

static void put_row(store *s, int64_t run, int64_t iteration, int slot, int round,
                    const char *params)
{
    store_row r = {.iteration = iteration,
                   .slot = slot,
                   .round = round,
                   .feasible = true,
                   .sw_budget = 10 * (round + 1),
                   .metrics.latency_s = 1e-3 * (slot + 1),
                   .params_json = params};
    snprintf(r.point, sizeof r.point, "%d,%d", (int)iteration, slot);
    as_status st;
    as_status_clear(&st);
    if (store_put_row(s, run, &r, &st) != AS_OK)
        fail_msg("%s", st.message);
}

/* The store the tests read: run 1 finished with two fronts, run 2 (the
 * newest) running with one row and no front. */
static void make_store(const char *path)
{
    remove_store(path);
    store *s;
    as_status st;
    as_status_clear(&st);
    int64_t one, two;
    if (store_open(&s, path, &st) != AS_OK ||
        store_run_begin(s, "algo: casco\nspace: tiny\n", 3, "0.1.0",
                        "casco, tiny space, resnet50, budget 4", &one, &st) != AS_OK)
        fail_msg("%s", st.message);
    put_row(s, one, 0, 0, 0, "{\"pe_x\": 14, \"glb\": \"shared\"}");
    put_row(s, one, 0, 0, 1, "{\"pe_x\": 14, \"glb\": \"shared\"}");
    put_row(s, one, 0, 1, 0, "{\"pe_x\": 8, \"glb\": \"private\"}");
    if (store_put_front(s, one, 0, 2, 0.5, "[]", &st) != AS_OK ||
        store_put_front(s, one, 1, 3, 0.75, front_json, &st) != AS_OK ||
        store_run_set_state(s, one, STORE_FINISHED, &st) != AS_OK ||
        store_run_begin(s, "algo: random\n", 4, "0.1.0", "random, tiny space, vgg16, budget 2",
                        &two, &st) != AS_OK)
        fail_msg("%s", st.message);
    put_row(s, two, 0, 0, 0, "{\"pe_x\": 4, \"glb\": \"shared\"}");
    assert_int_equal(one, 1);
    assert_int_equal(two, 2);
    store_close(s);
}

static char db[512];

static int setup(void **state)
{
    snprintf(db, sizeof db, "%s/cli_runs.db", AS_TEST_TMP_DIR);
    make_store(db);
    return 0;
}

/* The line of text that starts with prefix, copied into line. */
static void line_starting(const char *text, const char *prefix, char *line, size_t size)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            size_t n = strcspn(p, "\n");
            snprintf(line, size, "%.*s", (int)(n < size ? n : size - 1), p);
            return;
        }
    fail_msg("no line starting '%s' in:\n%s", prefix, text);
}

static void test_list(void **state)
{
    (void)state;
    run_result r;
    runf(&r, NULL, "runs list --db '%s'", db);
    assert_int_equal(r.status, 0);
    char line[512], created[64], run_state[32];
    long long id, rows, candidates, iterations;
    double hypervolume;
    line_starting(r.out, "   1  ", line, sizeof line);
    assert_int_equal(sscanf(line, "%lld %63s %31s %lld %lld %lld %lf", &id, created, run_state,
                            &rows, &candidates, &iterations, &hypervolume),
                     7);
    assert_int_equal(id, 1);
    assert_string_equal(run_state, "finished");
    assert_int_equal(rows, 3);
    assert_int_equal(candidates, 2);
    assert_int_equal(iterations, 2);
    assert_true(hypervolume == 0.75);
    expect_in(line, "casco, tiny space, resnet50, budget 4");
    line_starting(r.out, "   2  ", line, sizeof line);
    expect_in(line, " running ");
    expect_in(line, "random, tiny space, vgg16, budget 2");
    free(r.out);

    runf(&r, NULL, "runs list --json --db '%s'", db);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "\"id\": 1,");
    expect_in(r.out, "\"state\": \"finished\",");
    expect_in(r.out, "\"candidates\": 2,");
    expect_in(r.out, "\"seed\": 4,");
    free(r.out);
}

static void test_show(void **state)
{
    (void)state;
    run_result r;
    runf(&r, NULL, "runs show --db '%s'", db); /* the newest */
    assert_int_equal(r.status, 0);
    expect_in(r.out, "run 2, running, created ");
    expect_in(r.out, "configuration:\n  algo: random\n");
    expect_in(r.out, "no front stored yet");
    free(r.out);

    runf(&r, NULL, "runs show 1 --db '%s'", db);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "run 1, finished, created ");
    expect_in(r.out, "by accelsearch 0.1.0\n");
    expect_in(r.out, "configuration:\n  algo: casco\n  space: tiny\n");
    expect_in(r.out, "front after iteration 1: 2 designs\n");
    char line[512];
    line_starting(r.out, "  pe_x", line, sizeof line);
    const char *header[] = {"pe_x", "glb", "latency_s", "energy_pJ", "area_mm2", "edp"};
    const char *p = line;
    for (int i = 0; i < 6; i++) { /* in this order */
        assert_non_null(p = strstr(p, header[i]));
        p += strlen(header[i]);
    }
    line_starting(r.out, "  14", line, sizeof line);
    char pe_x[16], glb[16];
    double latency, energy, area, edp;
    assert_int_equal(
        sscanf(line, "%15s %15s %lf %lf %lf %lf", pe_x, glb, &latency, &energy, &area, &edp), 6);
    assert_string_equal(glb, "shared");
    assert_true(latency == 0.0015 && energy == 2.5e6 && area == 1.25 && edp == 3.75e-9);
    line_starting(r.out, "  8 ", line, sizeof line);
    expect_in(line, "private");
    /* The curve: evaluations and hypervolume after each iteration. */
    line_starting(r.out, "            2        0.5000", line, sizeof line);
    line_starting(r.out, "            3        0.7500", line, sizeof line);
    free(r.out);

    runf(&r, NULL, "runs show 1 --json --db '%s'", db);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "\"summary\": \"casco, tiny space, resnet50, budget 4\"");
    expect_in(r.out, "\"config_text\": \"algo: casco\\nspace: tiny\\n\"");
    expect_in(r.out, "\"hypervolume_curve\": [");
    expect_in(r.out, "\"front_iteration\": 1,");
    expect_in(r.out, "\"pe_x\": 14,");
    expect_in(r.out, "\"glb\": \"private\",");
    expect_in(r.out, "\"edp\": 3.6e-09");
    free(r.out);
}

static void test_export(void **state)
{
    (void)state;
    run_result r;
    runf(&r, NULL, "runs export 1 --format csv --db '%s'", db);
    assert_int_equal(r.status, 0);
    const char *header = "iteration,slot,round,point,feasible,reason,sw_budget,sw_value,sw_auc,"
                         "latency_s,energy_pJ,area_mm2,power_W,edp_Js,perf_per_tdp,pe_x,glb\r\n";
    assert_true(strncmp(r.out, header, strlen(header)) == 0);
    expect_in(r.out, "\r\n0,0,1,\"0,0\",true,,20,0,0,0.001,0,0,0,0,0,14,shared\r\n");
    expect_in(r.out, "\r\n0,1,0,\"0,1\",true,,10,0,0,0.002,0,0,0,0,0,8,private\r\n");
    free(r.out);

    char out[600];
    snprintf(out, sizeof out, "%s/cli_runs_export.json", AS_TEST_TMP_DIR);
    remove(out);
    runf(&r, NULL, "runs export --format json -o '%s' --db '%s'", out, db);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    free(r.out);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    expect_in(text, "\"run\": {\"id\": 2, "); /* the newest */
    expect_in(text, "\"params_json\": {\"pe_x\": 4, \"glb\": \"shared\"}");
    expect_in(text, "\"fronts\": []\n}\n");
}

/* Exit status 2 and a message naming what was wrong. */
static void expect_usage_error(const char *args, const char *message)
{
    run_result r;
    runf(&r, NULL, "%s", args);
    if (r.status != 2)
        fail_msg("'%s' exited %d (stderr: %s)", args, r.status, r.err);
    expect_in(r.err, message);
    free(r.out);
}

static void test_errors(void **state)
{
    (void)state;
    char args[2048], missing[600], text[600], out[600];
    snprintf(missing, sizeof missing, "%s/cli_runs_missing.db", AS_TEST_TMP_DIR);
    remove(missing);
    snprintf(args, sizeof args, "runs list --db '%s'", missing);
    expect_usage_error(args, missing);
    snprintf(args, sizeof args, "runs show 1 --db '%s'", missing);
    expect_usage_error(args, missing);
    assert_int_not_equal(access(missing, F_OK), 0); /* runs created nothing */

    snprintf(args, sizeof args, "runs show 42 --db '%s'", db);
    expect_usage_error(args, "no run 42");
    snprintf(out, sizeof out, "%s/cli_runs_nothing.csv", AS_TEST_TMP_DIR);
    remove(out);
    snprintf(args, sizeof args, "runs export 42 --format csv -o '%s' --db '%s'", out, db);
    expect_usage_error(args, "no run 42");
    assert_int_not_equal(access(out, F_OK), 0);
    snprintf(args, sizeof args, "runs export 1 --format xml --db '%s'", db);
    expect_usage_error(args, "--format wants json or csv, got 'xml'");
    snprintf(args, sizeof args, "runs export 1 --db '%s'", db);
    expect_usage_error(args, "export needs --format");
    snprintf(args, sizeof args, "runs show abc --db '%s'", db);
    expect_usage_error(args, "RUN wants a run id");
    snprintf(args, sizeof args, "runs list --format csv --db '%s'", db);
    expect_usage_error(args, "unknown option '--format'");
    snprintf(args, sizeof args, "runs show 1 2 --db '%s'", db);
    expect_usage_error(args, "unexpected argument '2'");
    expect_usage_error("runs list --db", "option needs a value: '--db'");
    expect_usage_error("runs frobnicate",
                       "runs wants list, show, export, resume, delete or compare 'frobnicate'");
    expect_usage_error("runs", "runs wants list, show, export, resume, delete or compare");

    snprintf(text, sizeof text, "%s/cli_runs_text.db", AS_TEST_TMP_DIR);
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    for (int i = 0; i < 10; i++)
        fputs("not a database, only text\n", f);
    fclose(f);
    snprintf(args, sizeof args, "runs list --db '%s'", text);
    expect_usage_error(args, "not a database");

    run_result r;
    runf(&r, NULL, "runs --help");
    assert_int_equal(r.status, 0);
    expect_in(r.out, "usage: accelsearch runs list");
    expect_in(r.out, "--format");
    free(r.out);
}

/* Without --db, runs reads accelsearch.db in the working directory, and
 * does not make one where there is none. */
static void test_default_db(void **state)
{
    (void)state;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/cli_runs_cwd", AS_TEST_TMP_DIR);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/accelsearch.db", dir);
    remove_store(path);
    run_result r;
    runf(&r, dir, "runs list");
    assert_int_equal(r.status, 2);
    expect_in(r.err, "accelsearch.db");
    assert_int_not_equal(access(path, F_OK), 0);
    free(r.out);

    make_store(path);
    runf(&r, dir, "runs list");
    assert_int_equal(r.status, 0);
    expect_in(r.out, "random, tiny space, vgg16, budget 2");
    free(r.out);
}

/* The edge space renamed (and with limits scaled by limit_scale), saved
 * as a space file at path. */
static void save_space_file(const char *path, const char *name, double limit_scale)
{
    se_space space;
    as_status st;
    as_status_clear(&st);
    if (se_space_load("edge", &space, &st) != AS_OK)
        fail_msg("%s", st.message);
    snprintf(space.name, sizeof space.name, "%s", name);
    space.limits.max_area_mm2 *= limit_scale;
    if (se_space_save(&space, path, &st) != AS_OK)
        fail_msg("%s", st.message);
}

static void expect_same_file(const char *a_path, const char *b_path)
{
    char a[1 << 14], b[1 << 14];
    FILE *fa = fopen(a_path, "r"), *fb = fopen(b_path, "r");
    assert_non_null(fa);
    assert_non_null(fb);
    size_t na = fread(a, 1, sizeof a - 1, fa), nb = fread(b, 1, sizeof b - 1, fb);
    a[na] = b[nb] = '\0';
    fclose(fa);
    fclose(fb);
    assert_true(na > 0);
    assert_string_equal(a, b);
}

/*
 * show --design K --emit-arch FILE rebuilds the run's space from its
 * configuration: a run of a space file needs --space FILE, and a space
 * other than the run's (another name, or the same name with another
 * definition) is refused; a run whose configuration names no space (the
 * synthetic run 1) fails clearly.
 */
static void test_emit_arch(void **state)
{
    (void)state;
    char space[600], changed[600], store_path[600], dir[600], out[700], emitted[700];
    snprintf(space, sizeof space, "%s/cli_runs_space.yaml", AS_TEST_TMP_DIR);
    snprintf(changed, sizeof changed, "%s/cli_runs_space_changed.yaml", AS_TEST_TMP_DIR);
    snprintf(store_path, sizeof store_path, "%s/cli_runs_emit.db", AS_TEST_TMP_DIR);
    snprintf(dir, sizeof dir, "%s/cli_runs_emit", AS_TEST_TMP_DIR);
    snprintf(out, sizeof out, "%s/again.yaml", dir);
    snprintf(emitted, sizeof emitted, "%s/design-0.yaml", dir);
    remove_store(store_path);
    remove(out);
    save_space_file(space, "my_edge", 1.0);
    save_space_file(changed, "my_edge", 0.5);
    run_result r;
    runf(&r, NULL,
         "search --space '%s' --model alexnet --hw-budget 4 --batch 4 --plan-budget 16 "
         "--sh-rounds 1 --map-budget 8 --seed 2 --threads 1 --db '%s' --emit-arch '%s'",
         space, store_path, dir);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "designs written: ");
    free(r.out);

    runf(&r, NULL, "runs show --db '%s' --design 0 --emit-arch '%s'", store_path, out);
    assert_int_not_equal(r.status, 0);
    expect_in(r.err, "run 1 searched the space 'my_edge' of a file: give that file with --space");
    free(r.out);
    runf(&r, NULL, "runs show --db '%s' --design 0 --emit-arch '%s' --space edge", store_path, out);
    assert_int_not_equal(r.status, 0);
    expect_in(r.err, "edge: not the space run 1 searched ('my_edge'");
    free(r.out);
    runf(&r, NULL, "runs show --db '%s' --design 0 --emit-arch '%s' --space '%s'", store_path, out,
         changed);
    assert_int_not_equal(r.status, 0);
    expect_in(r.err, "not the space run 1 searched");
    free(r.out);
    assert_int_not_equal(access(out, F_OK), 0); /* nothing written on a refusal */

    runf(&r, NULL, "runs show --db '%s' --design 0 --emit-arch '%s' --space '%s'", store_path, out,
         space);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "design 0 of run 1 (iteration ");
    free(r.out);
    expect_same_file(emitted, out);

    char args[2048];
    snprintf(args, sizeof args, "runs show 1 --db '%s' --design 0 --emit-arch '%s'", db, out);
    expect_usage_error(args, "run 1: its configuration names no space");
    snprintf(args, sizeof args, "runs show 1 --db '%s' --design 0", db);
    expect_usage_error(args, "--design and --emit-arch go together");
    snprintf(args, sizeof args, "runs show 1 --db '%s' --space edge", db);
    expect_usage_error(args, "--space is for --emit-arch");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),       cmocka_unit_test(test_show),
        cmocka_unit_test(test_export),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_default_db), cmocka_unit_test(test_emit_arch),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
