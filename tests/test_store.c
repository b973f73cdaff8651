/*
 * test_store.c -- the SQLite run store: rows read back bit for bit and in
 * key order, duplicates refused, resumable runs, fronts, files that are not
 * stores, the JSON and CSV exports, the JSON reader, two connections at
 * once, and rows that survive a SIGKILL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"

static const uint64_t top_bit_seed = 0xFEDCBA9876543210ULL; /* above INT64_MAX */

/* A path in the test directory for name, with no store (nor its -wal and
 * -shm files) left from an earlier run. */
static void fresh_path(const char *name, char *path, size_t size)
{
    char side[600];
    snprintf(path, size, "%s/store_%s.db", AS_TEST_TMP_DIR, name);
    remove(path);
    snprintf(side, sizeof side, "%s-wal", path);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", path);
    remove(side);
}

static store *open_store(const char *path)
{
    store *s = NULL;
    as_status st;
    as_status_clear(&st);
    if (store_open(&s, path, &st) != AS_OK)
        fail_msg("store_open(%s): %s", path, st.message);
    return s;
}

static int64_t begin_run(store *s, const char *config, uint64_t seed)
{
    int64_t id = 0;
    as_status st;
    as_status_clear(&st);
    if (store_run_begin(s, config, seed, "0.1.0", "casco, tiny space, resnet50, budget 8", &id,
                        &st) != AS_OK)
        fail_msg("store_run_begin: %s", st.message);
    assert_true(id > 0);
    return id;
}

/* Doubles SQLite could get wrong: non-finite, extreme, signed zero, and
 * values that need all 17 digits. */
static const double odd_values[] = {
    INFINITY, -INFINITY, NAN,       DBL_MAX, -DBL_MAX,     DBL_MIN, 4.9406564584124654e-324,
    -0.0,     0.1,       1.0 / 3.0, 1e-300,  6.02214076e23};
enum { N_ODD = sizeof odd_values / sizeof odd_values[0] };

/* The text a filled row's params_json points at. */
static char row_params[64];

/* The row of key (iteration, slot, round), every field a function of the
 * key so that a reader can tell what it should have read. */
static void fill_row(store_row *r, int64_t iteration, int slot, int round)
{
    memset(r, 0, sizeof *r);
    r->iteration = iteration;
    r->slot = slot;
    r->round = round;
    int k = (int)((iteration + 1) * 7 + slot * 3 + round);
    snprintf(r->point, sizeof r->point, "%d,%d,%d", k, slot, round);
    r->feasible = k % 3 != 0;
    snprintf(r->reason, sizeof r->reason, r->feasible ? "" : "area %d mm^2 > 2 mm^2", k);
    r->sw_budget = 100 * (int64_t)k + round;
    double *d[] = {
        &r->sw_value,         &r->sw_auc,          &r->metrics.latency_s, &r->metrics.energy_pJ,
        &r->metrics.area_mm2, &r->metrics.power_W, &r->metrics.edp_Js,    &r->metrics.perf_per_tdp};
    for (int j = 0; j < 8; j++)
        *d[j] = odd_values[(k + j) % N_ODD];
    snprintf(row_params, sizeof row_params, "{\"pe_x\": %d, \"glb\": \"l%d\"}", k, slot);
    r->params_json = row_params;
    r->detail_json = k % 2 ? "{\"workloads\": []}" : NULL;
}

/* Bit for bit, NaN equal to any NaN (SQLite keeps NaN as NULL). */
static bool same_double(double a, double b)
{
    return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0;
}

static void assert_row_is(const store_row *got, int64_t iteration, int slot, int round)
{
    store_row want;
    fill_row(&want, iteration, slot, round);
    assert_int_equal(got->iteration, iteration);
    assert_int_equal(got->slot, slot);
    assert_int_equal(got->round, round);
    assert_string_equal(got->point, want.point);
    assert_int_equal(got->feasible, want.feasible);
    assert_string_equal(got->reason, want.reason);
    assert_int_equal(got->sw_budget, want.sw_budget);
    assert_true(same_double(got->sw_value, want.sw_value));
    assert_true(same_double(got->sw_auc, want.sw_auc));
    assert_true(same_double(got->metrics.latency_s, want.metrics.latency_s));
    assert_true(same_double(got->metrics.energy_pJ, want.metrics.energy_pJ));
    assert_true(same_double(got->metrics.area_mm2, want.metrics.area_mm2));
    assert_true(same_double(got->metrics.power_W, want.metrics.power_W));
    assert_true(same_double(got->metrics.edp_Js, want.metrics.edp_Js));
    assert_true(same_double(got->metrics.perf_per_tdp, want.metrics.perf_per_tdp));
    assert_string_equal(got->params_json, want.params_json);
    assert_string_equal(got->detail_json, want.detail_json ? want.detail_json : "{}");
}

/* Rows as store_each_row visits them (keys only; checks as it goes). */
typedef struct visited {
    int64_t key[64][3];
    int n, stop_after;
} visited;

static bool check_and_collect(void *user, const store_row *row)
{
    visited *v = user;
    assert_row_is(row, row->iteration, row->slot, row->round);
    assert_true(v->n < 64);
    v->key[v->n][0] = row->iteration;
    v->key[v->n][1] = row->slot;
    v->key[v->n][2] = row->round;
    return ++v->n != v->stop_after;
}

static void put_row(store *s, int64_t run, int64_t iteration, int slot, int round)
{
    store_row r;
    as_status st;
    as_status_clear(&st);
    fill_row(&r, iteration, slot, round);
    if (store_put_row(s, run, &r, &st) != AS_OK)
        fail_msg("store_put_row: %s", st.message);
}

/* Inserted out of order; read back in (iteration, slot, round) order. */
static const int64_t shuffled_keys[][3] = {{2, 1, 0}, {0, 0, 1}, {-1, 0, 0}, {1, 2, 0},
                                           {0, 0, 0}, {2, 0, 0}, {1, 0, 3},  {0, 1, 0}};
static const int64_t sorted_keys[][3] = {{-1, 0, 0}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0},
                                         {1, 0, 3},  {1, 2, 0}, {2, 0, 0}, {2, 1, 0}};
enum { N_KEYS = sizeof shuffled_keys / sizeof shuffled_keys[0] };

static void test_rows_round_trip(void **state)
{
    (void)state;
    char path[512];
    fresh_path("rows", path, sizeof path);
    store *s = open_store(path);
    int64_t run = begin_run(s, "algo: casco\n", top_bit_seed);
    for (int i = 0; i < N_KEYS; i++)
        put_row(s, run, shuffled_keys[i][0], (int)shuffled_keys[i][1], (int)shuffled_keys[i][2]);

    visited v = {0};
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_each_row(s, run, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, N_KEYS);
    assert_memory_equal(v.key, sorted_keys, sizeof sorted_keys);

    store_run r;
    assert_int_equal(store_run_get(s, run, &r, &st), AS_OK);
    assert_int_equal(r.id, run);
    assert_true(r.seed == top_bit_seed);
    assert_int_equal(r.state, STORE_RUNNING);
    assert_string_equal(store_state_name(r.state), "running");
    assert_string_equal(r.version, "0.1.0");
    assert_string_equal(r.summary, "casco, tiny space, resnet50, budget 8");
    assert_int_equal(r.n_rows, N_KEYS);
    assert_int_equal(r.n_candidates, 7); /* (0, 0) has two rounds */
    assert_int_equal(r.n_iterations, 0);
    assert_true(r.hypervolume == 0.0);
    /* "2024-05-01T10:00:00Z" */
    assert_int_equal(strlen(r.created), 20);
    assert_true(r.created[4] == '-' && r.created[10] == 'T' && r.created[19] == 'Z');

    /* A visitor that stops; the query is then free for the next visit. */
    v = (visited){.stop_after = 3};
    assert_int_equal(store_each_row(s, run, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, 3);
    v = (visited){0};
    assert_int_equal(store_each_row(s, run, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, N_KEYS);
    /* Another run's rows are not this one's. */
    int64_t other = begin_run(s, "algo: casco\n", 2);
    v = (visited){0};
    assert_int_equal(store_each_row(s, other, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, 0);
    store_close(s);
}

static void test_duplicates_refused(void **state)
{
    (void)state;
    char path[512];
    fresh_path("duplicates", path, sizeof path);
    store *s = open_store(path);
    int64_t run = begin_run(s, "c", 1);
    put_row(s, run, 2, 1, 0);
    store_row r;
    fill_row(&r, 2, 1, 0);
    r.sw_value = 42.0; /* a different value under the same key */
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_put_row(s, run, &r, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, path));
    assert_non_null(strstr(st.message, "iteration 2, slot 1, round 0"));
    /* Nothing was written twice, the first value stands. */
    visited v = {0};
    as_status_clear(&st);
    assert_int_equal(store_each_row(s, run, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, 1);
    /* The next round of that candidate is a new row. */
    put_row(s, run, 2, 1, 1);

    as_status_clear(&st);
    assert_int_equal(store_put_row(s, 999, &r, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no run 999"));
    as_status_clear(&st);
    assert_int_equal(store_put_front(s, run, 0, 8, 0.5, "[]", &st), AS_OK);
    assert_int_equal(store_put_front(s, run, 0, 9, 0.6, "[]", &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "a front for iteration 0"));
    as_status_clear(&st);
    assert_int_equal(store_run_set_state(s, 999, STORE_FINISHED, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no run 999"));
    store_run got;
    as_status_clear(&st);
    assert_int_equal(store_run_get(s, 999, &got, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no run 999"));
    store_close(s);
}

static int64_t resumable(store *s, const char *config, uint64_t seed)
{
    int64_t id = -1;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_run_find_resumable(s, config, seed, &id, &st), AS_OK);
    return id;
}

static void test_resumable_runs(void **state)
{
    (void)state;
    char path[512];
    fresh_path("resume", path, sizeof path);
    store *s = open_store(path);
    const char *config = "algo: casco\nspace: small\n";
    assert_int_equal(resumable(s, config, top_bit_seed), 0);
    int64_t first = begin_run(s, config, top_bit_seed);
    assert_int_equal(resumable(s, config, top_bit_seed), first);
    assert_int_equal(resumable(s, "algo: casco\nspace: big\n", top_bit_seed), 0);
    assert_int_equal(resumable(s, "algo: casco\nspace: small", top_bit_seed), 0); /* bytes */
    assert_int_equal(resumable(s, config, top_bit_seed - 1), 0);
    assert_int_equal(resumable(s, config, top_bit_seed & INT64_MAX), 0); /* the top bit counts */

    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_run_set_state(s, first, STORE_FINISHED, &st), AS_OK);
    assert_int_equal(resumable(s, config, top_bit_seed), 0);
    int64_t second = begin_run(s, config, top_bit_seed);
    int64_t third = begin_run(s, config, top_bit_seed);
    assert_int_equal(resumable(s, config, top_bit_seed), third); /* the newest */
    assert_int_equal(store_run_set_state(s, third, STORE_FINISHED, &st), AS_OK);
    assert_int_equal(store_run_set_state(s, second, STORE_INTERRUPTED, &st), AS_OK);
    assert_int_equal(resumable(s, config, top_bit_seed), second);
    store_run r;
    assert_int_equal(store_run_get(s, second, &r, &st), AS_OK);
    assert_int_equal(r.state, STORE_INTERRUPTED);
    assert_int_equal(store_run_set_state(s, second, (store_state)7, &st), AS_EINVAL);
    store_close(s);
}

static void test_fronts_and_curve(void **state)
{
    (void)state;
    char path[512];
    fresh_path("fronts", path, sizeof path);
    store *s = open_store(path);
    int64_t run = begin_run(s, "c", 1), empty = begin_run(s, "c", 2);
    as_status st;
    as_status_clear(&st);
    const char *fronts[] = {"[{\"edp\": 3}]", "[{\"edp\": 2}]", "[{\"edp\": 1}, {\"edp\": 0.5}]"};
    const double hv[] = {0.25, 0.5, 1.0 / 3.0};
    for (int i = 2; i >= 0; i--) /* out of order */
        assert_int_equal(store_put_front(s, run, i, 8 * (i + 1), hv[i], fronts[i], &st), AS_OK);

    int64_t iteration;
    double volume;
    char *json;
    assert_int_equal(store_last_front(s, run, &iteration, &volume, &json, &st), AS_OK);
    assert_int_equal(iteration, 2);
    assert_true(same_double(volume, hv[2]));
    assert_string_equal(json, fronts[2]);
    free(json);
    assert_int_equal(store_last_front(s, empty, &iteration, &volume, &json, &st), AS_OK);
    assert_int_equal(iteration, -1);
    assert_null(json);

    int64_t *evaluations, n;
    double *curve;
    assert_int_equal(store_hypervolume_curve(s, run, &evaluations, &curve, &n, &st), AS_OK);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(evaluations[i], 8 * (i + 1));
        assert_true(same_double(curve[i], hv[i]));
    }
    free(evaluations);
    free(curve);
    assert_int_equal(store_hypervolume_curve(s, empty, &evaluations, &curve, &n, &st), AS_OK);
    assert_int_equal(n, 0);
    free(evaluations);
    free(curve);

    store_run r;
    assert_int_equal(store_run_get(s, run, &r, &st), AS_OK);
    assert_int_equal(r.n_iterations, 3);
    assert_true(same_double(r.hypervolume, hv[2]));
    store_close(s);
}

static void test_reopen_sees_the_same(void **state)
{
    (void)state;
    char path[512];
    fresh_path("reopen", path, sizeof path);
    store *s = open_store(path);
    int64_t a = begin_run(s, "config a", top_bit_seed), b = begin_run(s, "config b", 7);
    for (int i = 0; i < N_KEYS; i++)
        put_row(s, a, shuffled_keys[i][0], (int)shuffled_keys[i][1], (int)shuffled_keys[i][2]);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_put_front(s, a, 0, 4, 0.125, "[]", &st), AS_OK);
    assert_int_equal(store_run_set_state(s, a, STORE_FINISHED, &st), AS_OK);
    store_run before[2];
    assert_int_equal(store_run_get(s, a, &before[0], &st), AS_OK);
    assert_int_equal(store_run_get(s, b, &before[1], &st), AS_OK);
    store_close(s);

    s = open_store(path);
    store_run *runs;
    int64_t n;
    assert_int_equal(store_run_list(s, &runs, &n, &st), AS_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(runs, before, sizeof before); /* oldest first */
    free(runs);
    visited v = {0};
    assert_int_equal(store_each_row(s, a, check_and_collect, &v, &st), AS_OK);
    assert_memory_equal(v.key, sorted_keys, sizeof sorted_keys);
    char *config;
    assert_int_equal(store_run_config(s, b, &config, &st), AS_OK);
    assert_string_equal(config, "config b");
    free(config);
    assert_int_equal(store_run_config(s, 42, &config, &st), AS_EINVAL);
    assert_null(config);
    store_close(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Run sql on the SQLite file at path, without the store. */
static void sqlite_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *error = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK)
        fail_msg("%s: %s", sql, error);
    sqlite3_close(db);
}

static as_code open_fails(const char *path, const char *expected)
{
    store *s = (store *)1;
    as_status st;
    as_status_clear(&st);
    as_code code = store_open(&s, path, &st);
    assert_int_not_equal(code, AS_OK);
    assert_null(s);
    assert_non_null(strstr(st.message, path));
    if (!strstr(st.message, expected))
        fail_msg("expected '%s' in: %s", expected, st.message);
    return code;
}

static void test_foreign_files_refused(void **state)
{
    (void)state;
    char path[512];
    fresh_path("foreign", path, sizeof path);
    sqlite_exec(path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');");
    assert_int_equal(open_fails(path, "table 'people'"), AS_EINVAL);
    /* Refused untouched: still in its own journal mode, not WAL. */
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "delete");
    sqlite3_finalize(q);
    sqlite3_close(db);

    fresh_path("text", path, sizeof path);
    write_file(path, "this is a text file and not a database, though it is long enough for "
                     "SQLite to read its header and refuse it: 100 bytes at least.\n");
    assert_int_equal(open_fails(path, "not a database"), AS_EIO);

    fresh_path("ours_and_more", path, sizeof path);
    store_close(open_store(path));
    sqlite_exec(path, "CREATE TABLE notes (text TEXT)");
    open_fails(path, "table 'notes'");

    fresh_path("newer", path, sizeof path);
    store_close(open_store(path));
    sqlite_exec(path, "UPDATE meta SET value = 3 WHERE key = 'schema_version'");
    assert_int_equal(open_fails(path, "newer accelsearch (store schema 3"), AS_EINVAL);

    fresh_path("no_meta", path, sizeof path);
    sqlite_exec(path, "CREATE TABLE runs (id INTEGER)");
    open_fails(path, "not an accelsearch run store");

    open_fails(AS_TEST_TMP_DIR "/no/such/dir/x.db", "unable to open");
}

/* ---------------------------------------------------------------- exports */

/* The run the export tests export: three rows with awkward values, two
 * fronts.  Its id in *run. */
static store *export_fixture(const char *name, char *path, size_t size, int64_t *run)
{
    fresh_path(name, path, size);
    store *s = open_store(path);
    *run = begin_run(s, "algo: casco\nspace: \"small\"\n", top_bit_seed);
    as_status st;
    as_status_clear(&st);
    store_row r = {.iteration = 0,
                   .point = "3,17,0",
                   .feasible = true,
                   .sw_budget = 100,
                   .sw_value = 0.1,
                   .sw_auc = 1.0 / 3.0,
                   .metrics.latency_s = 1.5e-3,
                   .metrics.energy_pJ = 2.5e6,
                   .metrics.area_mm2 = -0.0,
                   .metrics.power_W = 1.25,
                   .metrics.edp_Js = INFINITY,
                   .metrics.perf_per_tdp = NAN,
                   .params_json = "{\"pe_x\": 14, \"glb\": \"shared\"}",
                   .detail_json = "{\"workloads\": [{\"name\": \"resnet50\"}]}"};
    assert_int_equal(store_put_row(s, *run, &r, &st), AS_OK);
    r = (store_row){.iteration = 0,
                    .slot = 1,
                    .point = "1,2,3",
                    .reason = "area 3.1 mm^2 > 2.5 mm^2 \"budget\"",
                    .sw_value = INFINITY,
                    .params_json = "{\"pe_x\": 8}"};
    assert_int_equal(store_put_row(s, *run, &r, &st), AS_OK);
    r = (store_row){.iteration = 1,
                    .point = "4,5,6",
                    .feasible = true,
                    .params_json = "{\"pe_x\": 16, \"glb\": \"private\", \"extra\": null}"};
    assert_int_equal(store_put_row(s, *run, &r, &st), AS_OK);
    assert_int_equal(store_put_front(s, *run, 0, 2, 0.5, "[{\"edp\": 1.5}]", &st), AS_OK);
    assert_int_equal(store_put_front(s, *run, 1, 3, 0.75, "[{\"edp\": 1.25}]", &st), AS_OK);
    return s;
}

/* run exported as format, as a malloc'd string. */
static char *export_text(store *s, int64_t run, store_format format)
{
    char path[512];
    snprintf(path, sizeof path, "%s/store_export.out", AS_TEST_TMP_DIR);
    FILE *f = fopen(path, "w+");
    assert_non_null(f);
    as_status st;
    as_status_clear(&st);
    if (store_export(s, run, format, f, &st) != AS_OK)
        fail_msg("store_export: %s", st.message);
    long size = ftell(f);
    char *text = calloc((size_t)size + 1, 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    return text;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Braces and brackets outside strings pair up, and strings end. */
static bool balanced(const char *json)
{
    int depth = 0;
    bool in_string = false;
    for (const char *p = json; *p; p++) {
        if (in_string) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth < 0)
                return false;
        }
    }
    return depth == 0 && !in_string;
}

static void test_export_json(void **state)
{
    (void)state;
    char path[512];
    int64_t run;
    store *s = export_fixture("export_json", path, sizeof path, &run);
    char *json = export_text(s, run, STORE_JSON);
    char expect[256];
    snprintf(expect, sizeof expect, "{\n  \"run\": {\"id\": %lld, \"created\": \"", (long long)run);
    assert_true(strncmp(json, expect, strlen(expect)) == 0);
    assert_non_null(strstr(json, "\"seed\": 18364758544493064720,")); /* 0xFEDCBA9876543210 */
    assert_non_null(strstr(json, "\"state\": \"running\""));
    assert_non_null(strstr(json, "\"n_rows\": 3, \"n_candidates\": 3, \"n_iterations\": 2, "
                                 "\"hypervolume\": 0.75},"));
    assert_non_null(strstr(json, "\"config\": \"algo: casco\\nspace: \\\"small\\\"\\n\",\n"));
    assert_int_equal(count(json, "{\"iteration\": "), 5); /* 3 rows, 2 fronts */
    assert_non_null(strstr(json, "\"point\": \"3,17,0\", \"feasible\": true, \"reason\": \"\", "
                                 "\"sw_budget\": 100, \"sw_value\": 0.1, "
                                 "\"sw_auc\": 0.3333333333333333, \"latency_s\": 0.0015, "
                                 "\"energy_pJ\": 2500000, \"area_mm2\": -0, \"power_W\": 1.25, "
                                 "\"edp_Js\": null, \"perf_per_tdp\": null, "
                                 "\"params_json\": {\"pe_x\": 14, \"glb\": \"shared\"}, "
                                 "\"detail_json\": {\"workloads\": [{\"name\": \"resnet50\"}]}}"));
    assert_non_null(strstr(json, "\"reason\": \"area 3.1 mm^2 > 2.5 mm^2 \\\"budget\\\"\""));
    assert_non_null(strstr(json, "\"detail_json\": {}}")); /* NULL detail */
    assert_non_null(strstr(json, "{\"iteration\": 1, \"evaluations\": 3, \"hypervolume\": 0.75, "
                                 "\"front_json\": [{\"edp\": 1.25}]}"));
    assert_true(balanced(json));
    size_t n = strlen(json);
    assert_true(n > 2 && strcmp(json + n - 2, "}\n") == 0);
    /* Well-formed for the reader too, and the configuration comes back. */
    as_status st;
    as_status_clear(&st);
    json_error_t error; /* the seed is wider than an int64 */
    json_t *back = json_loads(json, JSON_DECODE_INT_AS_REAL, &error);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_object_get(back, "config")),
                        "algo: casco\nspace: \"small\"\n");
    json_decref(back);
    free(json);

    /* A run without rows or fronts. */
    int64_t bare = begin_run(s, "bare", 1);
    json = export_text(s, bare, STORE_JSON);
    assert_non_null(strstr(json, "\"rows\": [],\n  \"fronts\": []\n}\n"));
    free(json);
    assert_int_equal(store_export(s, 12345, STORE_JSON, stdout, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no run 12345"));
    store_close(s);
}

static void test_export_csv(void **state)
{
    (void)state;
    char path[512];
    int64_t run;
    store *s = export_fixture("export_csv", path, sizeof path, &run);
    char *csv = export_text(s, run, STORE_CSV);
    const char *header = "iteration,slot,round,point,feasible,reason,sw_budget,sw_value,sw_auc,"
                         "latency_s,energy_pJ,area_mm2,power_W,edp_Js,perf_per_tdp,pe_x,glb\r\n";
    assert_true(strncmp(csv, header, strlen(header)) == 0);
    const char *first = "0,0,0,\"3,17,0\",true,,100,0.1,0.3333333333333333,0.0015,2500000,-0,"
                        "1.25,inf,nan,14,shared\r\n";
    assert_true(strncmp(csv + strlen(header), first, strlen(first)) == 0);
    assert_non_null(strstr(csv, "\r\n0,1,0,\"1,2,3\",false,"
                                "\"area 3.1 mm^2 > 2.5 mm^2 \"\"budget\"\"\",0,inf,0,"));
    assert_non_null(strstr(csv, ",8,\r\n"));                   /* no glb: an empty cell */
    assert_non_null(strstr(csv, "\r\n1,0,0,\"4,5,6\",true,")); /* extra: not a column */
    assert_non_null(strstr(csv, ",16,private\r\n"));
    assert_int_equal(count(csv, "\r\n"), 4);
    assert_int_equal(count(csv, "\n"), 4);
    free(csv);

    int64_t bare = begin_run(s, "bare", 1);
    csv = export_text(s, bare, STORE_CSV);
    assert_string_equal(csv, "iteration,slot,round,point,feasible,reason,sw_budget,sw_value,"
                             "sw_auc,latency_s,energy_pJ,area_mm2,power_W,edp_Js,perf_per_tdp\r\n");
    free(csv);

    /* Parameters that are not JSON fail naming the row. */
    int64_t broken = begin_run(s, "broken", 1);
    store_row r = {.iteration = 3, .slot = 2, .round = 1, .params_json = "{\"pe_x\" 14}"};
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_put_row(s, broken, &r, &st), AS_OK);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    assert_int_equal(store_export(s, broken, STORE_CSV, sink, &st), AS_EINVAL);
    fclose(sink);
    assert_non_null(strstr(st.message, path));
    assert_non_null(strstr(st.message, "params_json of run 3, iteration 3, slot 2, round 1: "
                                       "line 1, column 10: ':' expected near '14'"));
    store_close(s);
}

/* ------------------------------------------------------------ JSON reader */

typedef struct members {
    char text[16][96]; /* "item key=value" with value quoted when it was a string */
    int n;
} members;

/* Every member of the flat objects json reads into, as text: a string
 * quoted, any other value as its JSON text. */
static as_code collect_members(const char *json, const char *what, members *m, as_status *st)
{
    json_t *items, *item, *value;
    as_code code = store_json_items(json, what, &items, st);
    if (code != AS_OK)
        return code;
    size_t i;
    const char *key;
    json_array_foreach(items, i, item)
    {
        json_object_foreach(item, key, value)
        {
            assert_true(m->n < 16);
            char *text = json_is_string(value) ? NULL : as_json_text(value, 0);
            snprintf(m->text[m->n++], sizeof m->text[0], text ? "%zu %s=%s" : "%zu %s=\"%s\"", i,
                     key, text ? text : json_string_value(value));
            free(text);
        }
    }
    json_decref(items);
    return AS_OK;
}

static void test_json_reader(void **state)
{
    (void)state;
    const char *front = " [ {\"params\": {\"pe_x\": 14, \"glb\": \"sh\\\"ared\"}, "
                        "\"latency_s\": 1e-3, \"ok\": true, \"tags\": [1, {\"a\": 2}], "
                        "\"deep\": {\"b\": {\"c\": -0.5}}, \"n\": null},\n"
                        "{\"params\": {}, \"edp\": -2.5E+3} ] ";
    /* Numbers keep their value, spelled in the fewest digits. */
    const char *want[] = {"0 pe_x=14",
                          "0 glb=\"sh\"ared\"",
                          "0 latency_s=0.001",
                          "0 ok=true",
                          "0 tags=[1, {\"a\": 2}]",
                          "0 b={\"c\": -0.5}",
                          "0 n=null",
                          "1 edp=-2500"};
    members m = {0};
    as_status st;
    as_status_clear(&st);
    assert_int_equal(collect_members(front, "front", &m, &st), AS_OK);
    assert_int_equal(m.n, 8);
    for (int i = 0; i < 8; i++)
        assert_string_equal(m.text[i], want[i]);

    m = (members){0};
    assert_int_equal(
        collect_members("{\"k\\u00e9\": \"a\\nb\\u00e9\\ud83d\\ude00\\/\\t\"}", "escapes", &m, &st),
        AS_OK);
    assert_int_equal(m.n, 1);
    assert_string_equal(m.text[0], "0 k\xc3\xa9=\"a\nb\xc3\xa9\xf0\x9f\x98\x80/\t\"");

    const char *empty[] = {"{}", " { } ", "[]", "[ ]", "[{}, {}]", NULL};
    for (int i = 0; i < 6; i++) {
        m = (members){0};
        assert_int_equal(collect_members(empty[i], "empty", &m, &st), AS_OK);
        assert_int_equal(m.n, 0);
    }

    const char *bad[] = {"",
                         "\"text\"",
                         "[1]",
                         "{\"a\": 1,}",
                         "{\"a\": 01}",
                         "{\"a\": \"x",
                         "{\"a\": tru}",
                         "{\"a\": 1} x",
                         "{a: 1}",
                         "{\"a\": \"\\u0000\"}",
                         "{\"a\": \"\\ud800\"}",
                         "{\"a\": \"\\q\"}",
                         "{\"a\": \"tab\there\"}",
                         "{\"a\": 1.}",
                         "{\"a\": [1, 2}",
                         "[{}, ]",
                         "{\"a\": -}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        as_status_clear(&st);
        if (collect_members(bad[i], "bad json", &m, &st) != AS_EINVAL)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(st.message, "bad json: "));
    }
    as_status_clear(&st);
    assert_int_equal(collect_members("{\"a\" 1}", "test json", &m, &st), AS_EINVAL);
    assert_string_equal(st.message, "test json: line 1, column 6: ':' expected near '1'");
    as_status_clear(&st);
    assert_int_equal(collect_members("[{}, 2]", "test json", &m, &st), AS_EINVAL);
    assert_string_equal(st.message, "test json: item 1 is not an object");

    /* Nesting deeper than the parser goes is refused, not recursed into. */
    enum { DEEP = 3000 };
    char deep[2 * DEEP + 16] = "{\"a\": ";
    size_t n = strlen(deep);
    memset(deep + n, '[', DEEP);
    memset(deep + n + DEEP, ']', DEEP);
    strcpy(deep + n + 2 * DEEP, "}");
    as_status_clear(&st);
    assert_int_equal(collect_members(deep, "deep", &m, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "depth"));
}

/* ------------------------------------------------------------- processes */

/* A visitor that calls back into the store through the query visiting it. */
static bool reenter(void *user, const store_row *row)
{
    store *s = user;
    visited v = {0};
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_each_row(s, 1, check_and_collect, &v, &st), AS_EINTERNAL);
    assert_non_null(strstr(st.message, "re-entered"));
    return true;
}

static void test_two_connections(void **state)
{
    (void)state;
    char path[512];
    fresh_path("two", path, sizeof path);
    store *a = open_store(path), *b = open_store(path);
    int64_t run = begin_run(a, "shared", 5);
    assert_int_equal(run, 1);
    put_row(b, run, 0, 0, 0);
    put_row(a, run, 0, 1, 0);
    put_row(b, run, 1, 0, 0);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_run_set_state(b, run, STORE_INTERRUPTED, &st), AS_OK);
    store_run r;
    assert_int_equal(store_run_get(a, run, &r, &st), AS_OK);
    assert_int_equal(r.n_rows, 3);
    assert_int_equal(r.state, STORE_INTERRUPTED);
    assert_int_equal(resumable(a, "shared", 5), run);
    /* One reading while the other writes. */
    visited v = {0};
    assert_int_equal(store_each_row(a, run, check_and_collect, &v, &st), AS_OK);
    put_row(b, run, 1, 1, 0);
    assert_int_equal(store_each_row(a, run, reenter, a, &st), AS_OK);
    v = (visited){0};
    assert_int_equal(store_each_row(a, run, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, 4);
    store_close(a);
    store_close(b);
}

/* A store of schema 1 (no owners) is upgraded when opened: its runs keep
 * their state, with no owner; new runs get one. */
static void test_schema_1_upgraded(void **state)
{
    (void)state;
    char path[512];
    fresh_path("schema1", path, sizeof path);
    store *s = open_store(path);
    int64_t old = begin_run(s, "old", top_bit_seed);
    store_close(s);
    sqlite_exec(path, "ALTER TABLE runs DROP COLUMN owner");
    sqlite_exec(path, "UPDATE meta SET value = 1 WHERE key = 'schema_version'");
    s = open_store(path);
    as_status st;
    as_status_clear(&st);
    store_run r;
    assert_int_equal(store_run_get(s, old, &r, &st), AS_OK);
    assert_int_equal(r.state, STORE_RUNNING);
    assert_string_equal(r.owner, "");
    assert_false(r.killed);
    int64_t fresh = begin_run(s, "new", top_bit_seed);
    assert_int_equal(store_run_get(s, fresh, &r, &st), AS_OK);
    assert_true(strlen(r.owner) > 4);
    /* Deleting a run takes its rows and fronts; a live run is refused. */
    store_row row;
    fill_row(&row, 0, 0, 0);
    assert_int_equal(store_put_row(s, old, &row, &st), AS_OK);
    assert_int_equal(store_run_delete(s, old, &st), AS_OK);
    assert_int_equal(store_run_get(s, old, &r, &st), AS_EINVAL);
    as_status_clear(&st);
    assert_int_equal(store_run_delete(s, fresh, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "is running"));
    as_status_clear(&st);
    assert_int_equal(store_run_set_state(s, fresh, STORE_FINISHED, &st), AS_OK);
    assert_int_equal(store_run_delete(s, fresh, &st), AS_OK);
    store_run *runs;
    int64_t n;
    assert_int_equal(store_run_list(s, &runs, &n, &st), AS_OK);
    assert_int_equal(n, 0);
    free(runs);
    store_close(s);
}

static void test_sigkill_keeps_committed_rows(void **state)
{
    (void)state;
    enum { COMMITTED = 37, PLANNED = 100 };
    char path[512], wal[600];
    fresh_path("sigkill", path, sizeof path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* no cmocka here: a failure is an exit status */
        store *s;
        int64_t run;
        if (store_open(&s, path, NULL) != AS_OK ||
            store_run_begin(s, "killed", top_bit_seed, "0.1.0", "killed", &run, NULL) != AS_OK)
            _exit(3);
        for (int i = 0; i < PLANNED; i++) {
            if (i == COMMITTED)
                raise(SIGKILL); /* mid-run, the store open */
            store_row r;
            fill_row(&r, i / 4, i % 4, 0);
            if (store_put_row(s, run, &r, NULL) != AS_OK)
                _exit(4);
        }
        _exit(5);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    /* The rows are in the write-ahead log, which nobody checkpointed. */
    assert_int_equal(access(wal, F_OK), 0);

    store *s = open_store(path);
    store_run *runs;
    int64_t n;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(store_run_list(s, &runs, &n, &st), AS_OK);
    assert_int_equal(n, 1);
    assert_int_equal(runs[0].n_rows, COMMITTED);
    /* Left running by a process that is gone: killed, so interrupted. */
    assert_int_equal(runs[0].state, STORE_INTERRUPTED);
    assert_true(runs[0].killed);
    assert_non_null(strstr(runs[0].owner, " "));
    assert_int_equal(resumable(s, "killed", top_bit_seed), runs[0].id);
    visited v = {0};
    assert_int_equal(store_each_row(s, runs[0].id, check_and_collect, &v, &st), AS_OK);
    assert_int_equal(v.n, COMMITTED);
    for (int i = 0; i < COMMITTED; i++) {
        assert_int_equal(v.key[i][0], i / 4);
        assert_int_equal(v.key[i][1], i % 4);
    }
    free(runs);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_round_trip),
        cmocka_unit_test(test_duplicates_refused),
        cmocka_unit_test(test_resumable_runs),
        cmocka_unit_test(test_fronts_and_curve),
        cmocka_unit_test(test_reopen_sees_the_same),
        cmocka_unit_test(test_foreign_files_refused),
        cmocka_unit_test(test_export_json),
        cmocka_unit_test(test_export_csv),
        cmocka_unit_test(test_json_reader),
        cmocka_unit_test(test_two_connections),
        cmocka_unit_test(test_schema_1_upgraded),
        cmocka_unit_test(test_sigkill_keeps_committed_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
