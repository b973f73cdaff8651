/*
 * test_cli_json.c -- the JSON the program prints and exports, end to end:
 * a model whose names hold a byte that is not UTF-8 (0xFF) still gives
 * JSON that jansson reads (the byte becomes U+FFFD), and `search --json`
 * and `runs export --format json` of the same run spell every metric of
 * the Pareto front the same way (the core's shortest round-trip text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "store/store.h"
#include "workload/workload.h"

#include "cli_run.h"

#define REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

static char model_path[512], db_path[512];

/* resnet18_cifar saved as ONNX with 0xFF in its name and a layer's. */
static int setup(void **state)
{
    (void)state;
    snprintf(model_path, sizeof model_path, "%s/cli_json_model.onnx", AS_TEST_TMP_DIR);
    snprintf(db_path, sizeof db_path, "%s/cli_json.db", AS_TEST_TMP_DIR);
    wl_graph *g;
    as_status st;
    as_status_clear(&st);
    if (wl_zoo_build("resnet18_cifar", &g, &st) != AS_OK)
        fail_msg("%s", st.message);
    g->name = "net\xFF";
    g->ops[0].name = "conv\xFF";
    if (wl_onnx_save(g, model_path, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph_free(g);
    remove_store(db_path);
    return 0;
}

/* text parsed by jansson (which refuses invalid UTF-8); fails otherwise. */
static json_t *parse(const char *text, const char *what)
{
    json_error_t error;
    json_t *v = json_loads(text, 0, &error);
    if (!v)
        fail_msg("%s is not JSON: line %d: %s\n%.2000s", what, error.line, error.text, text);
    return v;
}

static void test_model_info_invalid_utf8(void **state)
{
    (void)state;
    run_result r;
    char args[1024];
    snprintf(args, sizeof args, "model info '%s' --json", model_path);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_t *v = parse(r.out, "model info --json");
    assert_string_equal(json_string_value(json_object_get(v, "model")), "net" REPLACEMENT);
    assert_non_null(strstr(r.out, "\"conv" REPLACEMENT "\""));
    json_decref(v);
    free(r.out);
}

/* `"key": text` where text is v as the core spells it, in out. */
static void expect_spelled(const char *out, const char *what, const char *key, double v)
{
    char text[AS_DOUBLE_TEXT_BYTES], member[128];
    snprintf(member, sizeof member, "\"%s\": %s", key, as_format_double(v, text));
    if (!strstr(out, member))
        fail_msg("%s lacks %s", what, member);
}

static void test_search_and_export_agree(void **state)
{
    (void)state;
    static const char *const metrics[] = {"latency_s", "energy_pJ", "area_mm2",
                                          "power_W",   "edp",       "perf_per_tdp"};
    run_result search, export, show;
    char args[2048];
    snprintf(args, sizeof args,
             "search --model '%s' --budget 4 --batch 4 --sw-budget 50 --map-budget 16 --seed 1 "
             "--threads 2 --json --db '%s'",
             model_path, db_path);
    run(&search, args);
    if (search.status != 0)
        fail_msg("search exited %d: %s", search.status, search.err);
    snprintf(args, sizeof args, "runs export --format json --db '%s'", db_path);
    run(&export, args);
    assert_int_equal(export.status, 0);
    snprintf(args, sizeof args, "runs show --json --db '%s'", db_path);
    run(&show, args);
    assert_int_equal(show.status, 0);

    json_t *s = parse(search.out, "search --json");
    json_t *e = parse(export.out, "runs export --format json");
    json_decref(parse(show.out, "runs show --json"));
    /* The model's name went into every row's details, made valid. */
    assert_non_null(strstr(export.out, "\"model\": \"net" REPLACEMENT "\""));

    json_t *pareto = json_object_get(s, "pareto");
    assert_true(json_array_size(pareto) > 0);
    size_t i;
    json_t *point;
    int shorter_than_17_digits = 0;
    json_array_foreach(pareto, i, point)
    {
        for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
            json_t *value = json_object_get(point, metrics[m]);
            assert_true(json_is_number(value));
            double v = json_number_value(value);
            expect_spelled(search.out, "search --json", metrics[m], v);
            expect_spelled(export.out, "runs export", metrics[m], v);
            expect_spelled(show.out, "runs show --json", metrics[m], v);
            char text[AS_DOUBLE_TEXT_BYTES], full[64];
            snprintf(full, sizeof full, "%.17g", v);
            shorter_than_17_digits += strlen(as_format_double(v, text)) < strlen(full);
        }
    }
    /* Some metric needs fewer than 17 digits, so a %.17g writer on either
     * side would have failed above. */
    assert_true(shorter_than_17_digits > 0);
    json_decref(s);
    json_decref(e);
    free(search.out);
    free(export.out);
    free(show.out);
}

/* Names, reasons and stored JSON holding 0xFF, exported by the library. */
static void test_store_export_invalid_utf8(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/cli_json_bytes.db", AS_TEST_TMP_DIR);
    remove_store(path);
    store *db;
    int64_t run_id;
    as_status st;
    as_status_clear(&st);
    store_row row = {.feasible = false,
                     .metrics.latency_s = 0.1,
                     .params_json = "{\"pe\xFF\": \"glb\xFF\"}",
                     .detail_json = "{\"workloads\": [{\"model\": \"net\xFF\"}]}"};
    snprintf(row.reason, sizeof row.reason, "layer \xFF too large");
    if (store_open(&db, path, &st) != AS_OK ||
        store_run_begin(db, "model: net\xFF\n", 1, "0.1.0", "summary \xFF", &run_id, &st) !=
            AS_OK ||
        store_put_row(db, run_id, &row, &st) != AS_OK ||
        store_put_front(db, run_id, 0, 1, 0.5, "[{\"name\": \"\xFF\"}]", &st) != AS_OK)
        fail_msg("%s", st.message);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    assert_int_equal(store_export(db, run_id, STORE_JSON, f, &st), AS_OK);
    fclose(f);
    store_close(db);
    json_t *v = parse(text, "the export");
    json_t *exported = json_array_get(json_object_get(v, "rows"), 0);
    assert_string_equal(json_string_value(json_object_get(exported, "reason")),
                        "layer " REPLACEMENT " too large");
    assert_string_equal(json_string_value(json_object_get(json_object_get(exported, "params_json"),
                                                          "pe" REPLACEMENT)),
                        "glb" REPLACEMENT);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "run"), "summary")),
                        "summary " REPLACEMENT);
    assert_string_equal(json_string_value(json_object_get(v, "config")),
                        "model: net" REPLACEMENT "\n");
    json_decref(v);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_info_invalid_utf8),
        cmocka_unit_test(test_search_and_export_agree),
        cmocka_unit_test(test_store_export_invalid_utf8),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
