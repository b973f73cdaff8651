/*
 * test_golden.c -- the seeded results of a fixed set of commands (`map`,
 * `fuse`, `search`, `eval`, `model info`) stay what they were: each
 * command's JSON is compared with tests/data/golden/NAME.json, every
 * number exactly (as a double, so that 1 and 1.0 are the same number but
 * 0.1 and 0.10000000000000002 are not), every string, key and array
 * length.  Wall-clock members ("seconds") are not compared.
 *
 * The golden files were written by the build before a refactoring: a
 * refactoring that changes any seeded result fails here.  Set
 * AS_GOLDEN_UPDATE=1 to rewrite them when a result is meant to change,
 * and say why in the commit.
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

#include "cli_run.h"

typedef struct golden_case {
    const char *name; /* tests/data/golden/NAME.json */
    const char *args; /* the command, after "accelsearch" */
} golden_case;

#define TL_DIR AS_TEST_DATA_DIR "/timeloop/eyeriss_like__resnet50_conv2x_3x3_c64m64_56"

static const golden_case golden_cases[] = {
    {"map_eyeriss_resnet18", "map --arch eyeriss --model resnet18 --threads 2 --json"},
    /* The layer-by-layer model of before epilogue fusion, kept for studies:
     * its figures are map_eyeriss_resnet18's of before issue 11, item 5. */
    {"map_eyeriss_resnet18_unfused",
     "map --arch eyeriss --model resnet18 --threads 2 --json --no-epilogue-fusion"},
    {"map_gemmini_mobilenet_v2_random",
     "map --arch gemmini --model mobilenet_v2 --algorithm random --budget 200 --seed 3 --json"},
    {"map_timeloop_mapper_eyeriss",
     "map " AS_TEST_DATA_DIR "/timeloop_mapper/eyeriss_like/mapper-input.yaml --json"},
    {"eval_timeloop_eyeriss", "eval " TL_DIR "/model-input.yaml --json"},
    {"fuse_gemmini_mobilenet_v2_ga", "fuse --arch gemmini --model mobilenet_v2 --algo ga "
                                     "--budget 300 --mapper-budget 64 --seed 1 --json"},
    {"fuse_eyeriss_resnet18_dp",
     "fuse --arch eyeriss --model resnet18 --algo dp --mapper-budget 64 --json"},
    {"fuse_simba_squeezenet_ilp",
     "fuse --arch simba --model squeezenet1_0 --algo ilp --mapper-budget 64 --json"},
    {"fuse_eyeriss_resnet18_none", "fuse --arch eyeriss --model resnet18 --algo none --json"},
    {"search_edge_casco", "search --budget 8 --seed 1 --threads 2 --json --no-db"},
    {"search_datacenter_lcs", "search --space datacenter --algo lcs --model mobilenet_v2 "
                              "--budget 8 --seed 2 --threads 2 --json --no-db"},
    {"search_datacenter_casco", "search --space datacenter --algo casco --model mobilenet_v2 "
                                "--budget 8 --seed 2 --json --no-db"},
    {"model_info_efficientnet_b0", "model info efficientnet_b0 --json"},
};

/* Members whose value is wall-clock time, not a result. */
static bool is_timing_key(const char *key)
{
    return strcmp(key, "seconds") == 0;
}

/* Compare two JSON values; on the first difference, write its path and
 * the two values to why and return false. */
static bool json_same(const json_t *want, const json_t *got, const char *path, char *why,
                      size_t why_size)
{
    if (json_is_number(want) && json_is_number(got)) {
        if (json_number_value(want) == json_number_value(got))
            return true;
        snprintf(why, why_size, "%s: want %.17g, got %.17g", path, json_number_value(want),
                 json_number_value(got));
        return false;
    }
    if (json_typeof(want) != json_typeof(got)) {
        snprintf(why, why_size, "%s: the types differ", path);
        return false;
    }
    char sub[1024];
    if (json_is_object(want)) {
        if (json_object_size(want) != json_object_size(got)) {
            snprintf(why, why_size, "%s: %zu members, want %zu", path, json_object_size(got),
                     json_object_size(want));
            return false;
        }
        const char *key;
        const json_t *value;
        json_object_foreach((json_t *)want, key, value)
        {
            const json_t *other = json_object_get(got, key);
            snprintf(sub, sizeof sub, "%s.%s", path, key);
            if (!other) {
                snprintf(why, why_size, "%s: missing", sub);
                return false;
            }
            if (!is_timing_key(key) && !json_same(value, other, sub, why, why_size))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (json_array_size(want) != json_array_size(got)) {
            snprintf(why, why_size, "%s: %zu elements, want %zu", path, json_array_size(got),
                     json_array_size(want));
            return false;
        }
        for (size_t i = 0; i < json_array_size(want); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (!json_same(json_array_get(want, i), json_array_get(got, i), sub, why, why_size))
                return false;
        }
        return true;
    }
    if (json_is_string(want) && strcmp(json_string_value(want), json_string_value(got)) != 0) {
        snprintf(why, why_size, "%s: want \"%s\", got \"%s\"", path, json_string_value(want),
                 json_string_value(got));
        return false;
    }
    return true; /* true, false, null: the types matched */
}

static void check_case(const golden_case *c)
{
    char path[512];
    snprintf(path, sizeof path, "%s/golden/%s.json", AS_TEST_DATA_DIR, c->name);
    run_result r;
    run(&r, c->args);
    if (r.status != 0)
        fail_msg("%s: exit %d: %s", c->name, r.status, r.err);
    json_error_t error;
    json_t *got = json_loads(r.out, 0, &error);
    if (!got)
        fail_msg("%s: output is not JSON: %s (line %d)", c->name, error.text, error.line);
    const char *update = getenv("AS_GOLDEN_UPDATE");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(r.out, f);
        fclose(f);
    }
    json_t *want = json_load_file(path, 0, &error);
    if (!want)
        fail_msg("%s: %s: %s", c->name, path, error.text);
    char why[2048] = "";
    bool same = json_same(want, got, "$", why, sizeof why);
    json_decref(want);
    json_decref(got);
    free(r.out);
    if (!same)
        fail_msg("%s (accelsearch %s): %s", c->name, c->args, why);
}

static void test_golden_results(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof golden_cases / sizeof golden_cases[0]; i++)
        check_case(&golden_cases[i]);
}

/* The comparison itself: equal numbers in other spellings pass, a change
 * in the last bit, a missing member or a changed string fails. */
static void test_comparison(void **state)
{
    (void)state;
    char why[256];
    json_t *a = json_loads("{\"x\": 1, \"y\": [0.5, \"s\"], \"seconds\": 3}", 0, NULL);
    json_t *same = json_loads("{\"x\": 1.0, \"y\": [5e-1, \"s\"], \"seconds\": 9}", 0, NULL);
    json_t *last_bit = json_loads("{\"x\": 1.0000000000000002, \"y\": [0.5, \"s\"], "
                                  "\"seconds\": 3}",
                                  0, NULL);
    json_t *other_string = json_loads("{\"x\": 1, \"y\": [0.5, \"t\"], \"seconds\": 3}", 0, NULL);
    json_t *missing = json_loads("{\"x\": 1, \"seconds\": 3}", 0, NULL);
    assert_true(json_same(a, same, "$", why, sizeof why));
    assert_false(json_same(a, last_bit, "$", why, sizeof why));
    assert_string_equal(why, "$.x: want 1, got 1.0000000000000002");
    assert_false(json_same(a, other_string, "$", why, sizeof why));
    assert_false(json_same(a, missing, "$", why, sizeof why));
    json_decref(a);
    json_decref(same);
    json_decref(last_bit);
    json_decref(other_string);
    json_decref(missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comparison),
        cmocka_unit_test(test_golden_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
