/*
 * test_cli_runs_manage.c -- runs by id, end to end: a search and a study
 * killed with SIGKILL read as interrupted (their owner is gone) and `runs
 * resume ID` finishes each with the configuration the store keeps, to
 * the rows of an uninterrupted run; `runs compare` sets fronts side by
 * side with hypervolumes on a common reference, in text and JSON; `runs
 * delete` removes runs; wrong uses say what is wrong.
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
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/core.h"
#include "store/store.h"

#include "cli_run.h"
#include "stored_rows.h"

#define KILL_STUDY AS_TEST_DATA_DIR "/study/kill.yaml"

/* The state runs list --json gives run id of the store at db. */
static char *run_state(const char *db, int64_t id)
{
    char args[1024];
    snprintf(args, sizeof args, "runs list --json --db '%s'", db);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *list = json_loads(r.out, 0, &error);
    assert_non_null(list);
    free(r.out);
    const json_t *runs = json_object_get(list, "runs");
    char *state = NULL;
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *one = json_array_get(runs, i);
        if (json_integer_value(json_object_get(one, "id")) == id)
            state = strdup(json_string_value(json_object_get(one, "state")));
    }
    json_decref(list);
    assert_non_null(state);
    return state;
}

static void test_search_killed_then_resumed_by_id(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    stored_rows_path(whole, sizeof whole, "manage_whole.db");
    stored_rows_path(killed, sizeof killed, "manage_killed.db");
    run_result expected;
    snprintf(args, sizeof args, STORED_ROWS_SMALL_RUN " --json --db '%s'", whole);
    run(&expected, args);
    assert_int_equal(expected.status, 0);

    stored_rows_kill_small_run(killed, 5);
    char *st = run_state(killed, 1);
    assert_string_equal(st, "interrupted"); /* not left "running" */
    free(st);

    /* Nothing but the id: the store's configuration is the configuration. */
    run_result resumed;
    snprintf(args, sizeof args, "runs resume 1 --json --threads 1 --db '%s'", killed);
    run(&resumed, args);
    assert_int_equal(resumed.status, 0);
    assert_string_equal(stored_rows_result_part(resumed.out),
                        stored_rows_result_part(expected.out));
    stored_rows_assert_same(whole, killed);
    st = run_state(killed, 1);
    assert_string_equal(st, "finished");
    free(st);

    run_result again;
    run(&again, args);
    assert_int_not_equal(again.status, 0);
    assert_non_null(strstr(again.err, "is finished"));
    free(again.out);
    free(expected.out);
    free(resumed.out);
}

static void test_study_killed_then_resumed_by_id(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    stored_rows_path(whole, sizeof whole, "manage_study_whole.db");
    stored_rows_path(killed, sizeof killed, "manage_study_killed.db");
    run_result expected;
    snprintf(args, sizeof args, "study '%s' --threads 2 --db '%s'", KILL_STUDY, whole);
    run(&expected, args);
    assert_int_equal(expected.status, 0);
    free(expected.out);

    char *args_killed[] = {"study", KILL_STUDY, "--threads", "1", "--db", killed, NULL};
    pid_t child = stored_rows_spawn("/dev/null", args_killed);
    int wst = stored_rows_signal_after(child, killed, 3, SIGKILL);
    assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
    char *st = run_state(killed, 1);
    assert_string_equal(st, "interrupted");
    free(st);
    run_result resumed;
    snprintf(args, sizeof args, "runs resume 1 --threads 2 --db '%s'", killed);
    run(&resumed, args);
    assert_int_equal(resumed.status, 0);
    free(resumed.out);
    stored_rows_assert_same(whole, killed);
}

static void test_compare_and_delete(void **state)
{
    (void)state;
    char db[512], args[2048];
    stored_rows_path(db, sizeof db, "manage_compare.db");
    const char *algos[] = {"casco", "random"};
    for (int k = 0; k < 2; k++) {
        run_result r;
        snprintf(args, sizeof args,
                 "search --model resnet18 --algo %s --budget 6 --batch 3 --sw-budget 32 "
                 "--map-budget 100 --threads 2 --db '%s'",
                 algos[k], db);
        run(&r, args);
        assert_int_equal(r.status, 0);
        free(r.out);
    }
    /* A third run with other objectives cannot be compared with them. */
    run_result r;
    snprintf(args, sizeof args,
             "search --model resnet18 --objectives latency,energy --budget 3 --batch 3 "
             "--sw-budget 32 --map-budget 100 --threads 2 --db '%s'",
             db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);

    snprintf(args, sizeof args, "runs compare 1 2 --json --db '%s'", db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *cmp = json_loads(r.out, 0, &error);
    assert_non_null(cmp);
    free(r.out);
    const json_t *runs = json_object_get(cmp, "runs");
    assert_int_equal(json_array_size(runs), 2);
    assert_int_equal(json_array_size(json_object_get(cmp, "reference_log10")), 3);
    for (size_t i = 0; i < 2; i++) {
        const json_t *one = json_array_get(runs, i);
        assert_string_equal(json_string_value(json_object_get(one, "algo")), algos[i]);
        assert_true(json_number_value(json_object_get(one, "hypervolume")) > 0);
        assert_true(json_array_size(json_object_get(one, "front")) >= 1);
    }
    json_decref(cmp);
    /* runs show: the configuration as an object, the chosen front point. */
    snprintf(args, sizeof args, "runs show 2 --json --db '%s'", db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_t *shown = json_loads(r.out, 0, &error);
    assert_non_null(shown);
    free(r.out);
    const json_t *config = json_object_get(shown, "config");
    assert_string_equal(json_string_value(json_object_get(config, "algo")), "random");
    assert_int_equal(json_array_size(json_object_get(config, "objectives")), 3);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(config, "models"), 0), "model")),
                        "resnet18");
    json_int_t chosen = json_integer_value(json_object_get(shown, "chosen"));
    assert_true(chosen >= 0 && (size_t)chosen < json_array_size(json_object_get(shown, "front")));
    json_decref(shown);
    snprintf(args, sizeof args, "runs show 2 --db '%s'", db);
    run(&r, args);
    assert_non_null(strstr(r.out, "chosen design (nearest the ideal point)"));
    free(r.out);

    snprintf(args, sizeof args, "runs compare 1 2 --db '%s'", db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "common reference point"));
    assert_non_null(strstr(r.out, "run 2 front:"));
    free(r.out);
    snprintf(args, sizeof args, "runs compare 1 3 --db '%s'", db);
    run(&r, args);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "different objectives"));
    free(r.out);
    snprintf(args, sizeof args, "runs compare 1 --db '%s'", db);
    run(&r, args);
    assert_int_equal(r.status, 2);
    free(r.out);

    snprintf(args, sizeof args, "runs delete 2 3 --db '%s'", db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "deleted run 3"));
    free(r.out);
    snprintf(args, sizeof args, "runs list --json --db '%s'", db);
    run(&r, args);
    json_t *list = json_loads(r.out, 0, &error);
    assert_non_null(list);
    assert_int_equal(json_array_size(json_object_get(list, "runs")), 1);
    json_decref(list);
    free(r.out);
    snprintf(args, sizeof args, "runs delete 9 --db '%s'", db);
    run(&r, args);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "9"));
    free(r.out);
    run(&r, "runs resume 1 --db /nonexistent/x.db");
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "no run store"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_killed_then_resumed_by_id),
        cmocka_unit_test(test_study_killed_then_resumed_by_id),
        cmocka_unit_test(test_compare_and_delete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
