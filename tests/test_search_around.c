/*
 * test_search_around.c -- `search --arch DESIGN` and `search --around
 * DESIGN --vary LIST`, end to end: a fixed design gives the numbers a
 * --baseline of the same design gives beside a search; a space around
 * Eyeriss proposes designs that differ from it only in the varied fields
 * (the emitted architectures, compared field by field with the preset's),
 * its baseline is Eyeriss's numbers, the same seed gives the same front
 * with 1 and 2 threads, a run killed with SIGKILL finishes under `runs
 * resume` to the rows of an uninterrupted run, and wrong options are
 * usage errors that name the option.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "core/core.h"
#include "search/search.h"
#include "store/store.h"

#include "cli_run.h"
#include "stored_rows.h"

#define SMALL                                                                                      \
    " --model squeezenet1_0 --hw-budget 6 --batch 2 --plan-budget 16 --sh-rounds 1 "               \
    "--map-budget 8 --seed 5"
#define AROUND "search --around eyeriss --vary pe_x,glb_bytes"

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *j = json_loads(text, 0, &error);
    if (!j)
        fprintf(stderr, "not JSON (%s): %.300s\n", error.text, text);
    assert_non_null(j);
    return j;
}

/* `accelsearch args` must exit 0 and print one JSON object. */
static json_t *run_json(const char *args)
{
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fprintf(stderr, "%s: %s\n", args, r.err);
    assert_int_equal(r.status, 0);
    json_t *j = parse(r.out);
    free(r.out);
    return j;
}

/* Metric `name` of object o (a number, exactly as printed). */
static double metric(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *const METRICS[] = {"latency_s", "energy_pJ", "area_mm2", "power_W", "edp"};

static void assert_same_metrics(const json_t *a, const json_t *b)
{
    for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++)
        assert_true(metric(a, METRICS[i]) == metric(b, METRICS[i]));
}

/* --arch eyeriss is evaluated exactly as --baseline eyeriss is beside a
 * search of the same settings; its report has the chosen design's
 * members and its groups. */
static void test_arch_is_the_baseline_evaluation(void **state)
{
    (void)state;
    json_t *fixed = run_json("search --arch eyeriss --no-db --json" SMALL);
    json_t *search = run_json("search --baseline eyeriss --no-db --json" SMALL);
    const json_t *base =
        json_object_get(json_array_get(json_object_get(search, "baselines"), 0), "metrics");
    const json_t *chosen = json_object_get(fixed, "chosen");
    assert_true(json_is_true(json_object_get(chosen, "feasible")));
    assert_same_metrics(chosen, base);
    const json_t *workloads = json_object_get(fixed, "chosen_workloads");
    assert_int_equal(json_array_size(workloads), 1);
    assert_true(json_array_size(json_object_get(json_array_get(workloads, 0), "groups")) > 0);
    json_decref(fixed);
    json_decref(search);

    /* With --baseline beside it: ratios of the design to each. */
    json_t *both = run_json("search --arch eyeriss --baseline eyeriss --no-db --json" SMALL);
    const json_t *ratios =
        json_object_get(json_array_get(json_object_get(both, "baselines"), 0), "ratios");
    assert_true(json_number_value(json_object_get(ratios, "edp")) == 1.0);
    json_decref(both);

    run_result text;
    run(&text, "search --arch eyeriss --no-db" SMALL);
    assert_int_equal(text.status, 0);
    assert_non_null(strstr(text.out, "design eyeriss"));
    assert_non_null(strstr(text.out, "fusion groups"));
    free(text.out);
}

/* The members of design JSON a and b (`arch show --json`) that differ,
 * as "path;" into diff. */
static void differences(const json_t *a, const json_t *b, const char *path, char *diff, size_t size)
{
    char sub[256];
    if (json_is_object(a) && json_is_object(b)) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)a, key, v)
        {
            snprintf(sub, sizeof sub, "%s.%s", path, key);
            differences(v, json_object_get(b, key), sub, diff, size);
        }
        return;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            differences(json_array_get(a, i), json_array_get(b, i), sub, diff, size);
        }
        return;
    }
    if (!json_equal((json_t *)a, (json_t *)b))
        snprintf(diff + strlen(diff), size - strlen(diff), "%s;", path);
}

/* Whether a differing member is one that varying pe_x and glb_bytes may
 * change: the PE count and what follows from it, the global buffer's
 * size and its energies and area from the tables, the name. */
static bool may_differ(const char *path, int glb)
{
    static const char *const derived[] = {".name",           ".area_mm2",  ".peak_power_W",
                                          ".peak_tops",      ".mac_units", ".compute.instances",
                                          ".compute.mesh_x", NULL};
    for (int i = 0; derived[i]; i++)
        if (!strcmp(path, derived[i]))
            return true;
    const char *key = strrchr(path, '.');
    if (strncmp(path, ".levels[", 8) == 0 &&
        (!strcmp(key, ".instances") || !strcmp(key, ".mesh_x")))
        return true;
    char prefix[32];
    snprintf(prefix, sizeof prefix, ".levels[%d].", glb);
    static const char *const glb_keys[] = {".size_words", ".read_pJ", ".fill_pJ",
                                           ".update_pJ",  ".leak_pJ", ".area_um2"};
    for (size_t i = 0; i < sizeof glb_keys / sizeof glb_keys[0]; i++)
        if (!strncmp(path, prefix, strlen(prefix)) && !strcmp(key, glb_keys[i]))
            return true;
    return false;
}

/* The index in arch show's "levels" of the level named name. */
static int level_named(const json_t *arch, const char *name)
{
    const json_t *levels = json_object_get(arch, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(levels, i), "name")), name))
            return (int)i;
    fail_msg("no level %s", name);
    return -1;
}

/* Every candidate of a space around Eyeriss is Eyeriss with pe_x and
 * glb_bytes set; the baseline is Eyeriss's numbers. */
static void test_around_varies_only_the_named_fields(void **state)
{
    (void)state;
    char db[512], args[2048];
    stored_rows_path(db, sizeof db, "around_fields.db");
    snprintf(args, sizeof args, AROUND " --json --db '%s'" SMALL, db);
    json_t *result = run_json(args);
    assert_string_equal(json_string_value(json_object_get(result, "space")), "around-eyeriss");
    const json_t *evaluations = json_object_get(result, "evaluations");
    assert_true(json_array_size(evaluations) >= 6);
    json_t *fixed = run_json("search --arch eyeriss --no-db --json" SMALL);
    for (size_t i = 0; i < json_array_size(evaluations); i++) {
        const json_t *c = json_array_get(evaluations, i);
        const json_t *params = json_object_get(c, "params");
        assert_int_equal(json_object_size(params), 2);
        assert_true(json_is_integer(json_object_get(params, "pe_x")));
        assert_true(json_is_integer(json_object_get(params, "glb_bytes")));
        if (json_integer_value(json_object_get(c, "iteration")) == -1) {
            assert_int_equal(json_integer_value(json_object_get(params, "pe_x")), 14);
            assert_int_equal(json_integer_value(json_object_get(params, "glb_bytes")), 108 * 1024);
            assert_same_metrics(c, json_object_get(fixed, "chosen"));
        }
    }
    json_decref(fixed);

    json_t *eyeriss = run_json("arch show eyeriss --json");
    int glb = level_named(eyeriss, "GlobalBuffer");
    size_t n_front = json_array_size(json_object_get(result, "pareto"));
    assert_true(n_front >= 1);
    for (size_t k = 0; k < n_front; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/around-design-%zu.yaml", AS_TEST_TMP_DIR, k);
        snprintf(args, sizeof args, "runs show 1 --db '%s' --design %zu --emit-arch '%s'", db, k,
                 path);
        run_result r;
        run(&r, args);
        assert_int_equal(r.status, 0);
        free(r.out);
        snprintf(args, sizeof args, "arch show '%s' --json", path);
        json_t *design = run_json(args);
        char diff[4096] = "";
        differences(eyeriss, design, "", diff, sizeof diff);
        for (char *save = NULL, *tok = strtok_r(diff, ";", &save); tok;
             tok = strtok_r(NULL, ";", &save))
            if (!may_differ(tok, glb))
                fail_msg("design %zu differs from eyeriss in %s", k, tok);
        json_decref(design);
    }
    json_decref(eyeriss);
    json_decref(result);
}

/* The JSON from "objectives" on: what two runs must agree on. */
static const char *result_part(const char *json)
{
    const char *p = strstr(json, "\"objectives\"");
    assert_non_null(p);
    return p;
}

/* The same seed, the same front and evaluations, with 1 or 2 threads. */
static void test_around_threads_agree(void **state)
{
    (void)state;
    run_result one, two;
    run(&one, AROUND " --no-db --json --threads 1" SMALL);
    run(&two, AROUND " --no-db --json --threads 2" SMALL);
    assert_int_equal(one.status, 0);
    assert_int_equal(two.status, 0);
    assert_string_equal(result_part(one.out), result_part(two.out));
    free(one.out);
    free(two.out);
}

/* Run 1 of stores a and b holds the same rows, bit for bit. */
static void assert_same_rows(const char *a_path, const char *b_path)
{
    static stored_rows a, b;
    stored_rows_read(a_path, &a);
    stored_rows_read(b_path, &b);
    assert_true(a.n > 0);
    assert_int_equal(a.n, b.n);
    for (int64_t i = 0; i < a.n; i++) {
        assert_string_equal(a.row[i].point, b.row[i].point);
        assert_memory_equal(&a.row[i].metrics, &b.row[i].metrics, sizeof a.row[i].metrics);
    }
}

#define KILL_ARGS                                                                                  \
    "search", "--around", "eyeriss", "--vary", "pe_x,glb_bytes", "--range", "8", "--max-area",     \
        "9.5", "--model", "resnet18", "--hw-budget", "32", "--batch", "4", "--plan-budget", "256", \
        "--sh-rounds", "2", "--map-budget", "64", "--seed", "3", "--threads", "2"

/* A run killed with SIGKILL, resumed by `runs resume ID` alone (the
 * stored configuration rebuilds the space around the design), ends with
 * the rows and result of a run never killed; --resume with the flags
 * finds nothing left to do once it is finished. */
static void test_around_killed_then_resumed(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    stored_rows_path(whole, sizeof whole, "around_whole.db");
    stored_rows_path(killed, sizeof killed, "around_killed.db");
    char *args_whole[] = {KILL_ARGS, "--json", "--db", whole, NULL};
    args[0] = 0;
    for (int i = 0; args_whole[i]; i++)
        snprintf(args + strlen(args), sizeof args - strlen(args), "%s'%s'", i ? " " : "",
                 args_whole[i]);
    run_result expected;
    run(&expected, args);
    assert_int_equal(expected.status, 0);

    char *args_killed[] = {KILL_ARGS, "--db", killed, NULL};
    pid_t child = stored_rows_spawn("/dev/null", args_killed);
    int wst = stored_rows_signal_after(child, killed, 5, SIGKILL);
    assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);

    run_result resumed;
    snprintf(args, sizeof args, "runs resume 1 --json --threads 1 --db '%s'", killed);
    run(&resumed, args);
    if (resumed.status != 0)
        fprintf(stderr, "%s\n", resumed.err);
    assert_int_equal(resumed.status, 0);
    assert_string_equal(result_part(resumed.out), result_part(expected.out));
    assert_same_rows(whole, killed);

    /* The configuration as JSON says what the space was made from. */
    snprintf(args, sizeof args, "runs show 1 --json --db '%s'", killed);
    json_t *shown = run_json(args);
    const json_t *around = json_object_get(json_object_get(shown, "config"), "around");
    assert_string_equal(json_string_value(json_object_get(around, "design")), "eyeriss");
    assert_string_equal(json_string_value(json_object_get(around, "vary")), "pe_x,glb_bytes");
    assert_int_equal(json_integer_value(json_object_get(around, "range")), 8);
    json_decref(shown);
    free(expected.out);
    free(resumed.out);
}

/* The space in memory: ranges through the design's values, the centre
 * decoded to the design itself, a point that changes only what it names,
 * and no space file for it. */
static void test_space_around_in_memory(void **state)
{
    (void)state;
    arch_spec eyeriss;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_load("eyeriss", &eyeriss, &st), AS_OK);
    se_around how = {.source = "eyeriss", .vary = "glb_bytes,pe_x", .range = 4};
    se_space s;
    assert_int_equal(se_space_around(&eyeriss, &how, &s, &st), AS_OK);
    assert_int_equal(s.n_params, 2);
    assert_string_equal(s.param[0].name, "pe_x"); /* the template's order */
    assert_int_equal(s.param[0].min, 4);
    assert_int_equal(s.param[0].max, 56);
    assert_int_equal(se_param_value(&s.param[0], s.baseline[0]), 14);
    assert_int_equal(se_param_value(&s.param[1], s.baseline[1]), 108 * 1024);
    assert_int_equal(s.param[1].min, 27 * 1024);
    assert_int_equal(s.param[1].max, 432 * 1024);
    assert_int_equal(s.precision, WL_PREC_FP16);

    se_point p;
    memcpy(p.index, s.baseline, sizeof p.index);
    arch_spec a;
    bool feasible;
    char reason[256];
    se_space_decode(&s, &p, &a, &feasible, reason, sizeof reason);
    assert_true(feasible);
    assert_memory_equal(&a, &eyeriss, sizeof a); /* the design itself */

    p.index[0] = se_param_index(&s.param[0], 20);
    se_space_decode(&s, &p, &a, &feasible, reason, sizeof reason);
    assert_true(feasible);
    assert_int_equal(a.compute.mesh_x, 20);
    assert_int_equal(a.compute.instances, 20 * eyeriss.compute.mesh_y);
    for (int i = 0; i < a.n_levels; i++) {
        bool per_pe = eyeriss.level[i].instances == eyeriss.compute.instances;
        assert_int_equal(a.level[i].instances, per_pe ? a.compute.instances : 1);
        assert_int_equal(a.level[i].size_words, eyeriss.level[i].size_words);
    }

    /* Budgets are the space's constraints. */
    how.max_area_mm2 = 1.0;
    assert_int_equal(se_space_around(&eyeriss, &how, &s, &st), AS_OK);
    se_space_decode(&s, &p, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_non_null(strstr(reason, "area"));

    char path[512];
    snprintf(path, sizeof path, "%s/around-space.yaml", AS_TEST_TMP_DIR);
    assert_int_not_equal(se_space_save(&s, path, &st), AS_OK);
    assert_non_null(strstr(st.message, "around a design"));
}

/* Wrong uses are usage errors (exit 2) naming the option. */
static void test_usage_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"search --around eyeriss --vary pe_z", "--vary pe_z"},
        {"search --around eyeriss --vary sa_x", "--vary sa_x"},
        {"search --vary pe_x", "--vary needs --around"},
        {"search --range 8", "--range needs --around"},
        {"search --around eyeriss", "--around needs --vary"},
        {"search --arch eyeriss --around eyeriss --vary pe_x", "--arch and --around"},
        {"search --arch eyeriss --space edge", "--space and --arch"},
        {"search --arch eyeriss --report r.html", "--report"},
        {"search --arch eyeriss --resume", "--resume"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r;
        run(&r, cases[i].args);
        if (r.status != 2 || !strstr(r.err, cases[i].needle))
            fail_msg("%s: status %d, stderr %s", cases[i].args, r.status, r.err);
        free(r.out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arch_is_the_baseline_evaluation),
        cmocka_unit_test(test_around_varies_only_the_named_fields),
        cmocka_unit_test(test_around_threads_agree),
        cmocka_unit_test(test_around_killed_then_resumed),
        cmocka_unit_test(test_space_around_in_memory),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
