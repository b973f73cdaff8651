/*
 * cli_run.h -- running the accelsearch program from the end-to-end tests
 * (test_cli.c, test_cli_runs.c, test_cli_search.c): its exit status, its
 * standard output and the start of its standard error.  Include after
 * cmocka.h.
 */
#ifndef AS_TESTS_CLI_RUN_H
#define AS_TESTS_CLI_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CLI_OUT_BYTES = 1 << 22 };

typedef struct run_result {
    int status;     /* exit status, -1 when the program did not exit */
    char *out;      /* stdout, malloc'd (free it) */
    char err[4096]; /* stderr */
} run_result;

/* Run `accelsearch ARGS` through the shell in directory cwd (NULL: this
 * one).  Standard error goes through a file named after this process, so
 * test programs running side by side do not share it. */
static inline void run_in(run_result *r, const char *cwd, const char *args)
{
    char cmd[4096], err_path[512];
    snprintf(err_path, sizeof err_path, "%s/cli_stderr.%ld.txt", AS_TEST_TMP_DIR, (long)getpid());
    int n_cmd = snprintf(cmd, sizeof cmd, "%s%s%s'%s' %s 2>'%s'", cwd ? "cd '" : "", cwd ? cwd : "",
                         cwd ? "' && " : "", AS_CLI_PATH, args, err_path);
    assert_true(n_cmd > 0 && (size_t)n_cmd < sizeof cmd); /* the whole command, not cut */
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    r->out = calloc(CLI_OUT_BYTES, 1);
    assert_non_null(r->out);
    size_t n = fread(r->out, 1, CLI_OUT_BYTES - 1, p);
    r->out[n] = '\0';
    int st = pclose(p);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    FILE *e = fopen(err_path, "r");
    assert_non_null(e);
    n = fread(r->err, 1, sizeof r->err - 1, e);
    r->err[n] = '\0';
    fclose(e);
    remove(err_path);
}

static inline void run(run_result *r, const char *args)
{
    run_in(r, NULL, args);
}

/* Remove a run store and the WAL files SQLite keeps beside it. */
static inline void remove_store(const char *path)
{
    char side[700];
    remove(path);
    snprintf(side, sizeof side, "%s-wal", path);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", path);
    remove(side);
}

#endif
