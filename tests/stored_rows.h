/*
 * stored_rows.h -- the rows a run stored, for the end-to-end tests that
 * kill a run and resume it (test_cli_search.c, test_cli_study.c): a fresh
 * store path, and run 1's rows read back while another process may still
 * be writing them.  Include after cmocka.h and cli_run.h.
 */
#ifndef AS_TESTS_STORED_ROWS_H
#define AS_TESTS_STORED_ROWS_H

#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

enum { STORED_ROWS_MAX = 256 };

typedef struct stored_rows {
    int64_t n;
    store_row row[STORED_ROWS_MAX]; /* without their JSON texts */
} stored_rows;

/* A fresh store path in the test directory (any old store removed). */
static inline void stored_rows_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", AS_TEST_TMP_DIR, name);
    remove_store(buf);
}

static inline bool stored_rows_take(void *user, const store_row *row)
{
    stored_rows *r = user;
    if (r->n < STORED_ROWS_MAX) {
        r->row[r->n] = *row;
        r->row[r->n].params_json = r->row[r->n].detail_json = NULL;
        r->n++;
    }
    return true;
}

/* The rows of run 1 of the store at path into *out; returns how many (0
 * while the store does not exist or cannot be read yet). */
static inline int64_t stored_rows_read(const char *path, stored_rows *out)
{
    store *s;
    as_status st;
    out->n = 0;
    if (access(path, F_OK) != 0 || store_open(&s, path, &st) != AS_OK)
        return 0;
    store_each_row(s, 1, stored_rows_take, out, &st);
    store_close(s);
    return out->n;
}

/* Run 1 of the stores at a_path and b_path holds the same rows, key,
 * point and metrics bit for bit (a resumed run against an uninterrupted
 * one). */
static inline void stored_rows_assert_same(const char *a_path, const char *b_path)
{
    static stored_rows a, b; /* large: not on the stack */
    stored_rows_read(a_path, &a);
    stored_rows_read(b_path, &b);
    assert_true(a.n > 0);
    assert_int_equal(a.n, b.n);
    for (int64_t i = 0; i < a.n; i++) {
        assert_int_equal(a.row[i].iteration, b.row[i].iteration);
        assert_int_equal(a.row[i].slot, b.row[i].slot);
        assert_int_equal(a.row[i].round, b.row[i].round);
        assert_string_equal(a.row[i].point, b.row[i].point);
        assert_memory_equal(&a.row[i].metrics, &b.row[i].metrics, sizeof a.row[i].metrics);
        assert_memory_equal(&a.row[i].sw_value, &b.row[i].sw_value, sizeof(double));
    }
}

/* Start `accelsearch args...` (args NULL-terminated) in the background,
 * its standard output to out_path, its standard error discarded. */
static inline pid_t stored_rows_spawn(const char *out_path, char *const args[])
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char *argv[32] = {AS_CLI_PATH};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        freopen(out_path, "w", stdout);
        freopen("/dev/null", "w", stderr);
        execv(AS_CLI_PATH, argv);
        _exit(127);
    }
    return child;
}

/* Wait until run 1 of the store at path holds at least n rows (polling
 * every 2 ms, 40 s at most), then send child the signal and reap it;
 * returns its wait status. */
static inline int stored_rows_signal_after(pid_t child, const char *path, int64_t n, int signal)
{
    static stored_rows seen; /* large: not on the stack */
    for (int polls = 0; polls < 20000 && stored_rows_read(path, &seen) < n; polls++) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    kill(child, signal);
    int wst;
    waitpid(child, &wst, 0);
    return wst;
}

/* The small search the kill-and-resume tests run (test_cli_search.c,
 * test_cli_runs_manage.c): CASCO on alexnet, 8 candidates in batches of
 * 4, two halving rounds, seed 3. */
#define STORED_ROWS_SMALL_RUN                                                                      \
    "search --model alexnet --budget 8 --batch 4 --sw-budget 64 --sh-rounds 2 --map-budget 16 "    \
    "--seed 3 --threads 2"

/* STORED_ROWS_SMALL_RUN kept in the store at path, killed with SIGKILL
 * once it has stored n candidate rounds. */
static inline void stored_rows_kill_small_run(char *path, int64_t n)
{
    char *args[] = {"search", "--model",     "alexnet", "--budget",    "8", "--batch",
                    "4",      "--sw-budget", "64",      "--sh-rounds", "2", "--map-budget",
                    "16",     "--seed",      "3",       "--threads",   "2", "--db",
                    path,     NULL};
    int wst = stored_rows_signal_after(stored_rows_spawn("/dev/null", args), path, n, SIGKILL);
    assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
}

/* The JSON of a search from "objectives" on: what must agree between two
 * runs (the run's time and counters come before it). */
static inline const char *stored_rows_result_part(const char *json)
{
    const char *p = strstr(json, "\"objectives\"");
    assert_non_null(p);
    return p;
}

#endif
