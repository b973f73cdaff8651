/*
 * test_report.c -- HTML reports in a real browser (CTest label `browser`):
 * `map --report` of ResNet-18 on Eyeriss is rendered by Debian's chromium
 * headless, and the rendered page (its DOM) must show every layer in the
 * latency and energy charts, every compute layer on the roofline, one
 * table row per layer, no error, and a screenshot is written beside the
 * test.  The same page with its data spoilt must report the error: the
 * check can fail.
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

#include "browser.h"

static void test_map_report(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/report_map.html", AS_TEST_TMP_DIR);
    remove(path);
    run_result r;
    snprintf(args, sizeof args,
             "map --arch eyeriss --model resnet18 --threads 2 --json "
             "--report '%s'",
             path);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *out = json_loads(r.out, 0, &error);
    assert_non_null(out);
    const json_t *layers = json_object_get(out, "layers");
    int n_layers = (int)json_array_size(layers), n_compute = 0;
    for (int i = 0; i < n_layers; i++) {
        const json_t *l = json_array_get(layers, (size_t)i);
        n_compute += json_integer_value(json_object_get(l, "macs")) > 0 &&
                     json_integer_value(json_object_get(l, "dram_bytes")) > 0;
    }
    assert_true(n_layers > 20 && n_compute > 15);
    json_decref(out);
    free(r.out);

    char *page = slurp(path);
    assert_non_null(strstr(page, "id=\"report-data\""));
    /* Self-contained: nothing to fetch (the SVG namespace URI is a name). */
    assert_null(strstr(page, "src=\"http"));
    assert_null(strstr(page, "<link"));
    assert_null(strstr(page, "fetch("));
    free(page);

    char *dom = render(path);
    assert_non_null(strstr(dom, "data-render=\"ok\""));
    assert_non_null(strstr(dom, "data-errors=\"0\""));
    assert_int_equal(count_in(dom, "chart-latency", "</figure>", "class=\"bar "), n_layers);
    assert_true(count_in(dom, "chart-energy", "</figure>", "class=\"bar ") >= n_layers);
    assert_int_equal(count_in(dom, "chart-roofline", "</figure>", "class=\"point\""), n_compute);
    assert_int_equal(count_in(dom, "chart-roofline", "</figure>", "class=\"roof\""), 1);
    assert_true(count_in(dom, "chart-utilisation", "</figure>", "class=\"bar ") > 0);
    assert_int_equal(count_in(dom, "report", "</table>", "class=\"layer-row\""), n_layers);
    free(dom);

    screenshot(path, "report_map.png", 1100, 1700);
}

/* The check can fail: a page whose data the renderer does not know shows
 * the error and says it failed. */
static void test_error_is_seen(void **state)
{
    (void)state;
    char good[512], bad[512];
    snprintf(good, sizeof good, "%s/report_map.html", AS_TEST_TMP_DIR);
    snprintf(bad, sizeof bad, "%s/report_spoilt.html", AS_TEST_TMP_DIR);
    char *page = slurp(good);
    char *kind = strstr(page, "\"kind\":\"network\"");
    assert_non_null(kind);
    memcpy(kind, "\"kind\":\"nothing\"", strlen("\"kind\":\"nothing\""));
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs(page, f);
    fclose(f);
    free(page);
    char *dom = render(bad);
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_non_null(strstr(dom, "data-errors=\"1\""));
    assert_non_null(strstr(dom, "unknown report kind nothing"));
    free(dom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_report),
        cmocka_unit_test(test_error_is_seen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
