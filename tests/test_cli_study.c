/*
 * test_cli_study.c -- `accelsearch study` end to end: a study killed with
 * SIGKILL part-way and resumed ends with exactly the cells of an
 * uninterrupted run (stored rows bit for bit, and the same CSV); `study
 * show` prints a stored study's tables; bad study files and options fail
 * with the file, line and key, or a usage error.
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

#include "core/core.h"
#include "store/store.h"

#include "cli_run.h"
#include "stored_rows.h"

#define KILL_STUDY AS_TEST_DATA_DIR "/study/kill.yaml"

static void test_sigkill_and_resume(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    stored_rows_path(whole, sizeof whole, "study_whole.db");
    stored_rows_path(killed, sizeof killed, "study_killed.db");
    run_result expected;
    snprintf(args, sizeof args, "study '%s' --threads 2 --db '%s' --csv -", KILL_STUDY, whole);
    run(&expected, args);
    assert_int_equal(expected.status, 0);

    char *args_killed[] = {"study", KILL_STUDY, "--threads", "1", "--db", killed, NULL};
    pid_t child = stored_rows_spawn("/dev/null", args_killed);
    int wst = stored_rows_signal_after(child, killed, 4, SIGKILL);
    assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
    static stored_rows before;
    stored_rows_read(killed, &before);
    assert_true(before.n >= 4 && before.n < 24);

    snprintf(args, sizeof args, "study '%s' --threads 2 --resume --db '%s' --csv -", KILL_STUDY,
             killed);
    run_result resumed;
    run(&resumed, args);
    assert_int_equal(resumed.status, 0);
    assert_string_equal(resumed.out, expected.out);

    static stored_rows a;
    assert_int_equal(stored_rows_read(whole, &a), 24);
    stored_rows_assert_same(whole, killed);
    /* A finished study is not resumable. */
    run_result again;
    run(&again, args);
    assert_int_equal(again.status, 2);
    assert_non_null(strstr(again.err, "no unfinished run of study 'kill'"));

    /* study show: the stored study's tables and CSV. */
    snprintf(args, sizeof args, "study show 1 --db '%s' --csv -", whole);
    run_result shown;
    run(&shown, args);
    assert_int_equal(shown.status, 0);
    assert_string_equal(shown.out, expected.out);
    snprintf(args, sizeof args, "study show --db '%s'", whole);
    run_result tables;
    run(&tables, args);
    assert_int_equal(tables.status, 0);
    assert_non_null(strstr(tables.out, "resnet18_cifar"));
    free(tables.out);
    free(shown.out);
    free(again.out);
    free(resumed.out);
    free(expected.out);
    remove_store(whole);
    remove_store(killed);
}

static void expect_failure(const char *args, int status, const char *message)
{
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, status);
    if (!strstr(r.err, message))
        fail_msg("expected '%s' in: %s", message, r.err);
    free(r.out);
}

static void test_errors(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/bad_study.yaml", AS_TEST_TMP_DIR);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("models: [resnet18]\nhardware: [eyeriss]\nformats: [zip]\n", f);
    fclose(f);
    snprintf(args, sizeof args, "study '%s' --no-db", path);
    expect_failure(args, 2, "bad_study.yaml:3: formats[0]: unknown data format 'zip'");
    expect_failure("study --no-db", 2, "give a study file or --default");
    snprintf(args, sizeof args, "study '%s' --default --no-db", path);
    expect_failure(args, 2, "give a study file or --default");
    expect_failure("study --default --no-db --resume", 2, "--no-db conflicts with --resume");
    snprintf(args, sizeof args, "study show --db '%s/no_such.db'", AS_TEST_TMP_DIR);
    expect_failure(args, 2, "no run store there");
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_and_resume),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
