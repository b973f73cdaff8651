/*
 * test_readme.c -- every `accelsearch ...` line of a ```sh block of
 * README.md runs, in the README's order, in a scratch directory that
 * stands for the repository root (it holds a link `tests` to the tests
 * folder, so that the README's tests/data paths resolve, and it receives
 * what the commands write: accelsearch.db, vit.onnx, out/, run3.csv).
 *
 * What is checked, honestly and cheaply:
 * - Fast lines (model, zoo, arch, eval, runs, help, the single-problem
 *   map, map --layer) run exactly as written.
 * - Slow lines (search, fuse, tune, map of a whole model) run with smaller
 *   budgets appended (see shrink_for): the parser keeps the last value of
 *   an option, so every other choice on the line -- models, spaces,
 *   engines, output format, files -- runs for real, only shorter.
 * - Each must exit 0, except `search --resume`: the README's searches all
 *   finish, so there is no run to resume, and the line must end with that
 *   message (exit 2), not with a usage error.
 * - A line with --json must print one whole JSON value.
 * - The README must hold at least MIN_COMMANDS such lines, so that a
 *   reformatted README cannot make this test pass by running nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_run.h"

#define README_PATH AS_TEST_DATA_DIR "/../../README.md"
#define SCRATCH_DIR AS_TEST_TMP_DIR "/readme_root"

enum { MAX_COMMANDS = 64, LINE_BYTES = 512, MIN_COMMANDS = 15 };

/* Options appended to the slow commands, by the command's first words. */
static const struct {
    const char *prefix;
    const char *shrink;
} shrink_rules[] = {
    {"search", " --hw-budget 2 --batch 2 --plan-budget 8 --sh-rounds 1 --map-budget 4 --threads 2"},
    {"fuse ", " --plan-budget 16 --map-budget 4 --threads 2"},
    {"tune ", " --trials 16 --threads 2"},
    {"map --arch eyeriss --model resnet50", " --map-budget 16"},
};

/* The options to append to args (after "accelsearch "), or "". */
static const char *shrink_for(const char *args)
{
    for (size_t i = 0; i < sizeof shrink_rules / sizeof shrink_rules[0]; i++)
        if (strncmp(args, shrink_rules[i].prefix, strlen(shrink_rules[i].prefix)) == 0)
            return shrink_rules[i].shrink;
    return "";
}

/* The lines "accelsearch ARGS   # comment" of README's ```sh blocks, as
 * ARGS without the comment, into args[]; returns how many. */
static int readme_commands(char args[][LINE_BYTES])
{
    FILE *f = fopen(README_PATH, "r");
    assert_non_null(f);
    char line[LINE_BYTES];
    bool in_sh = false;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "```", 3) == 0) {
            in_sh = !in_sh && strncmp(line, "```sh", 5) == 0;
            continue;
        }
        if (!in_sh || strncmp(line, "accelsearch ", 12) != 0)
            continue;
        assert_true(n < MAX_COMMANDS);
        char *comment = strstr(line, " #");
        if (comment)
            *comment = '\0';
        size_t len = strcspn(line, "\n");
        while (len > 12 && line[len - 1] == ' ')
            len--;
        snprintf(args[n++], LINE_BYTES, "%.*s", (int)(len - 12), line + 12);
    }
    fclose(f);
    return n;
}

/* A fresh scratch root: no run store, no outputs of an earlier run. */
static void make_scratch_root(void)
{
    assert_int_equal(system("rm -rf '" SCRATCH_DIR "'"), 0);
    assert_int_equal(mkdir(SCRATCH_DIR, 0777), 0);
    assert_int_equal(symlink(AS_TEST_DATA_DIR "/..", SCRATCH_DIR "/tests"), 0);
}

static void run_readme_command(const char *args)
{
    char line[2 * LINE_BYTES];
    snprintf(line, sizeof line, "%s%s", args, shrink_for(args));
    run_result r;
    run_in(&r, SCRATCH_DIR, line);
    if (strcmp(args, "search --resume") == 0) {
        if (r.status != 0 && !strstr(r.err, "no unfinished run"))
            fail_msg("accelsearch %s: exit %d: %s", line, r.status, r.err);
    } else if (r.status != 0) {
        fail_msg("accelsearch %s: exit %d: %s", line, r.status, r.err);
    }
    if (r.status == 0 && strstr(args, "--json")) {
        json_error_t error;
        json_t *v = json_loads(r.out, 0, &error);
        if (!v)
            fail_msg("accelsearch %s: not JSON: %s (line %d)", line, error.text, error.line);
        json_decref(v);
    }
    free(r.out);
}

static void test_readme_commands_run(void **state)
{
    (void)state;
    static char args[MAX_COMMANDS][LINE_BYTES];
    int n = readme_commands(args);
    assert_true(n >= MIN_COMMANDS);
    make_scratch_root();
    for (int i = 0; i < n; i++)
        run_readme_command(args[i]);
    /* What the README says the commands leave behind. */
    struct stat sb;
    assert_int_equal(stat(SCRATCH_DIR "/vit.onnx", &sb), 0);
    assert_int_equal(stat(SCRATCH_DIR "/run3.csv", &sb), 0);
    assert_int_equal(stat(SCRATCH_DIR "/out/features.0.yaml", &sb), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_commands_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
