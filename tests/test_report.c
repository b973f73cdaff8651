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

#define CHROMIUM "chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars"

/* The whole of a file, malloc'd. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = 0;
    fclose(f);
    return text;
}

/* The DOM chromium renders from the page at path, malloc'd. */
static char *render(const char *path)
{
    char cmd[2048], dom[600];
    snprintf(dom, sizeof dom, "%s.dom", path);
    snprintf(cmd, sizeof cmd, CHROMIUM " --dump-dom 'file://%s' >'%s' 2>/dev/null", path, dom);
    if (system(cmd) != 0)
        fail_msg("chromium could not render %s (is Debian's chromium installed? "
                 "scripts/setup.sh installs it)",
                 path);
    return slurp(dom);
}

/* Occurrences of needle in the element of the DOM whose id is id (up to
 * its closing </figure> or </table>). */
static int count_in(const char *dom, const char *id, const char *end, const char *needle)
{
    char attr[64];
    snprintf(attr, sizeof attr, "id=\"%s\"", id);
    const char *from = strstr(dom, attr);
    if (!from)
        return -1;
    const char *to = strstr(from, end);
    int n = 0;
    for (const char *p = strstr(from, needle); p && (!to || p < to); p = strstr(p + 1, needle))
        n++;
    return n;
}

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

    char png[600], cmd[1400];
    snprintf(png, sizeof png, "%s/report_map.png", AS_TEST_TMP_DIR);
    remove(png);
    snprintf(cmd, sizeof cmd,
             CHROMIUM " --window-size=1100,1700 --screenshot='%s' 'file://%s' >/dev/null 2>&1", png,
             path);
    assert_int_equal(system(cmd), 0);
    struct stat s;
    assert_int_equal(stat(png, &s), 0);
    assert_true(s.st_size > 10000);
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
