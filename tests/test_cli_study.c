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

#define KILL_STUDY AS_TEST_DATA_DIR "/study/kill.yaml"

static void db_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", AS_TEST_TMP_DIR, name);
    remove_store(buf);
}

typedef struct rows {
    int64_t n;
    store_row row[64];
} rows;

static bool take_row(void *user, const store_row *row)
{
    rows *r = user;
    if (r->n < 64) {
        r->row[r->n] = *row;
        r->row[r->n].params_json = r->row[r->n].detail_json = NULL;
        r->n++;
    }
    return true;
}

/* The rows of run 1 of the store at path (0 rows while it does not exist). */
static void read_rows(const char *path, rows *out)
{
    store *s;
    as_status st;
    out->n = 0;
    if (access(path, F_OK) != 0 || store_open(&s, path, &st) != AS_OK)
        return;
    store_each_row(s, 1, take_row, out, &st);
    store_close(s);
}

static void test_sigkill_and_resume(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    db_path(whole, sizeof whole, "study_whole.db");
    db_path(killed, sizeof killed, "study_killed.db");
    run_result expected;
    snprintf(args, sizeof args, "study '%s' --threads 2 --db '%s' --csv -", KILL_STUDY, whole);
    run(&expected, args);
    assert_int_equal(expected.status, 0);

    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(AS_CLI_PATH, AS_CLI_PATH, "study", KILL_STUDY, "--threads", "1", "--db", killed,
              (char *)NULL);
        _exit(127);
    }
    rows before = {0};
    for (int polls = 0; polls < 20000 && before.n < 4; polls++) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
        read_rows(killed, &before);
    }
    kill(child, SIGKILL);
    int wst;
    waitpid(child, &wst, 0);
    assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
    read_rows(killed, &before);
    assert_true(before.n >= 4 && before.n < 24);

    snprintf(args, sizeof args, "study '%s' --threads 2 --resume --db '%s' --csv -", KILL_STUDY,
             killed);
    run_result resumed;
    run(&resumed, args);
    assert_int_equal(resumed.status, 0);
    assert_string_equal(resumed.out, expected.out);

    rows a = {0}, b = {0};
    read_rows(whole, &a);
    read_rows(killed, &b);
    assert_int_equal(a.n, 24);
    assert_int_equal(b.n, 24);
    for (int64_t i = 0; i < a.n; i++) {
        assert_int_equal(a.row[i].iteration, b.row[i].iteration);
        assert_string_equal(a.row[i].point, b.row[i].point);
        assert_memory_equal(&a.row[i].metrics, &b.row[i].metrics, sizeof a.row[i].metrics);
    }
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
