/*
 * test_cli_config.c -- defaults that persist (src/cli/config.c): an
 * accelsearch.yaml in the working directory (or $ACCELSEARCH_CONFIG)
 * gives commands their --db, --threads and per-command options, the
 * command line overrides them, a bad file names its line and key; and
 * --quiet silences warnings while --verbose says which file was read.
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

#include <jansson.h>

#include "cli_run.h"

/* A fresh directory in the test folder holding accelsearch.yaml = text. */
static void project_dir(char *dir, size_t size, const char *name, const char *text)
{
    snprintf(dir, size, "%s/%s", AS_TEST_TMP_DIR, name);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
    char path[1100];
    snprintf(path, sizeof path, "%s/accelsearch.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The map_budget of run id's configuration (runs show --json in dir). */
static json_int_t stored_map_budget(const char *dir, int id)
{
    char args[64];
    snprintf(args, sizeof args, "runs show %d --json", id);
    run_result r;
    run_in(&r, dir, args);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *shown = json_loads(r.out, 0, &error);
    assert_non_null(shown);
    free(r.out);
    json_int_t budget =
        json_integer_value(json_object_get(json_object_get(shown, "config"), "map_budget"));
    json_decref(shown);
    return budget;
}

static void test_defaults_and_overrides(void **state)
{
    (void)state;
    char dir[1024];
    project_dir(dir, sizeof dir, "config_project",
                "db: project.db\n"
                "threads: 2\n"
                "commands:\n"
                "  search: {map-budget: 16, sh-rounds: 2}\n");
    run_result r;
    run_in(&r, dir, "search --model alexnet --budget 4 --batch 4 --sw-budget 64");
    assert_int_equal(r.status, 0);
    free(r.out);
    char db[1100];
    snprintf(db, sizeof db, "%s/project.db", dir);
    struct stat s;
    assert_int_equal(stat(db, &s), 0); /* the file's store, not accelsearch.db */
    assert_int_equal(stored_map_budget(dir, 1), 16);
    /* The command line wins. */
    run_in(&r, dir, "search --model alexnet --budget 4 --batch 4 --sw-budget 64 --map-budget 32");
    assert_int_equal(r.status, 0);
    free(r.out);
    assert_int_equal(stored_map_budget(dir, 2), 32);
}

/* A mistake in the file is named with its line and key. */
static void expect_config_error(const char *name, const char *text, const char *args,
                                const char *expected)
{
    char dir[1024];
    project_dir(dir, sizeof dir, name, text);
    run_result r;
    run_in(&r, dir, args);
    assert_int_not_equal(r.status, 0);
    if (!strstr(r.err, expected))
        fail_msg("expected '%s' in: %s", expected, r.err);
    free(r.out);
}

static void test_bad_files(void **state)
{
    (void)state;
    expect_config_error("config_unknown", "db: x.db\nthreds: 2\n", "zoo list",
                        "accelsearch.yaml:2: unknown key 'threds'");
    expect_config_error("config_option", "commands:\n  map: {nosuch: 1}\n",
                        "map --arch eyeriss --model alexnet",
                        "accelsearch.yaml:2: nosuch: 'map' has no option --nosuch");
    expect_config_error("config_list", "commands:\n  search: {model: resnet18}\n", "search",
                        "give it on the command line");
    expect_config_error("config_value", "threads: many\n", "map --arch eyeriss --model alexnet",
                        "many");
}

static void test_quiet_verbose_and_env(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    project_dir(dir, sizeof dir, "config_env", "threads: 2\n");
    snprintf(path, sizeof path, "%s/accelsearch.yaml", dir);
    /* map of resnet18 on eyeriss warns about narrowed words. */
    run_result r;
    run(&r, "map --arch eyeriss --model resnet18 --map-budget 50");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "warning:"));
    free(r.out);
    run(&r, "map --arch eyeriss --model resnet18 --map-budget 50 --quiet");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    free(r.out);
    setenv("ACCELSEARCH_CONFIG", path, 1);
    run(&r, "zoo list --verbose");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "defaults from"));
    assert_non_null(strstr(r.err, "config_env/accelsearch.yaml"));
    free(r.out);
    setenv("ACCELSEARCH_CONFIG", "none", 1);
    run(&r, "zoo list --verbose");
    assert_null(strstr(r.err, "defaults from"));
    free(r.out);
    unsetenv("ACCELSEARCH_CONFIG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_overrides),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_quiet_verbose_and_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
