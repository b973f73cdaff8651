/*
 * test_report_study.c -- the HTML report of a study in a real browser
 * (CTest label `browser`): `study --report` of tests/data/study/report.yaml
 * (24 cells, 6 of them invalid) is rendered by Debian's chromium headless,
 * and the rendered page must draw one latency point per valid cell of the
 * study's --json output, the speedup charts, the summary, speedup,
 * observation and grid tables, the invalid cells, the correlation heat
 * maps, no error; a screenshot is written beside the test.  `study show
 * --report` draws the stored run alike; a report that cannot be written is
 * an error naming the file; a page whose data lacks a member fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_run.h"

#include "browser.h"

#define REPORT_STUDY AS_TEST_DATA_DIR "/study/report.yaml"

/* What the study's --json output counts, which the page must draw. */
typedef struct study_counts {
    int valid, invalid, rows, speedups, observations, hardware;
} study_counts;

static study_counts counts_of(const char *json_text)
{
    json_error_t error;
    json_t *out = json_loads(json_text, 0, &error);
    assert_non_null(out);
    study_counts n = {0};
    const json_t *cells = json_object_get(out, "cells"), *summary = json_object_get(out, "summary");
    for (size_t i = 0; i < json_array_size(cells); i++)
        if (json_is_true(json_object_get(json_array_get(cells, i), "valid")))
            n.valid++;
        else
            n.invalid++;
    n.rows = (int)json_array_size(json_object_get(summary, "rows"));
    n.speedups = (int)json_array_size(json_object_get(summary, "speedups"));
    n.observations = (int)json_array_size(json_object_get(summary, "observations"));
    n.hardware = (int)json_array_size(json_object_get(json_object_get(out, "axes"), "hardware"));
    json_decref(out);
    return n;
}

/* The rendered page at path draws everything n counts. */
static void check_page(const char *path, const study_counts *n)
{
    char *dom = render(path);
    assert_non_null(strstr(dom, "data-render=\"ok\""));
    assert_non_null(strstr(dom, "data-errors=\"0\""));
    assert_int_equal(count_in(dom, "chart-latency", "</figure>", "class=\"cell\""), n->valid);
    assert_true(count_in(dom, "chart-axis-compression", "</figure>", "class=\"speedup\"") > 0);
    assert_true(count_in(dom, "chart-axis-algorithm", "</figure>", "class=\"speedup\"") > 0);
    assert_true(count_in(dom, "chart-axis-hardware", "</figure>", "class=\"speedup\"") > 0);
    assert_int_equal(count_in(dom, "chart-expected", "</figure>", "class=\"expected\""),
                     n->speedups);
    assert_int_equal(count_in(dom, "study-grid", "</table>", "class=\"axis-row\""), 6);
    assert_int_equal(count_in(dom, "study-invalid", "</details>", "class=\"invalid-row\""), 1);
    assert_true(count_in(dom, "study-invalid", "</details>", "cannot skip a MAC") > 0);
    assert_int_equal(count_in(dom, "study-observations", "</table>", "class=\"observation\""),
                     n->observations);
    assert_int_equal(count_in(dom, "study-summary", "</div>", "class=\"summary-row\""), n->rows);
    assert_int_equal(count_in(dom, "study-speedups", "</table>", "class=\"speedup-row\""),
                     n->speedups);
    assert_true(count_in(dom, "chart-spearman", "</figure>", "class=\"corr\"") > 0);
    assert_true(count_in(dom, "chart-kendall", "</figure>", "class=\"corr\"") > 0);
    assert_int_equal(count_in(dom, "chart-hardware-agreement", "</figure>", "class=\"agreement\""),
                     n->hardware * (n->hardware - 1));
    free(dom);
}

static void test_study_report(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/report_study.html", AS_TEST_TMP_DIR);
    remove(path);
    run_result r;
    snprintf(args, sizeof args, "study '%s' --no-db --json --threads 2 --report '%s'", REPORT_STUDY,
             path);
    run(&r, args);
    assert_int_equal(r.status, 0);
    study_counts n = counts_of(r.out);
    free(r.out);
    assert_int_equal(n.valid + n.invalid, 24);
    assert_int_equal(n.invalid, 6);
    assert_true(n.rows > 0 && n.speedups > 0 && n.observations > 0);

    char *page = slurp(path);
    assert_non_null(strstr(page, "\"kind\":\"study\""));
    assert_null(strstr(page, "src=\"http")); /* self-contained */
    assert_null(strstr(page, "<link"));
    free(page);
    check_page(path, &n);
    screenshot(path, "report_study.png", 1200, 2400);
}

/* study show --report draws the stored run as the run drew it. */
static void test_show_report(void **state)
{
    (void)state;
    char db[512], path[512], args[1400];
    snprintf(db, sizeof db, "%s/report_study.db", AS_TEST_TMP_DIR);
    snprintf(path, sizeof path, "%s/report_study_show.html", AS_TEST_TMP_DIR);
    remove_store(db);
    remove(path);
    run_result r;
    snprintf(args, sizeof args, "study '%s' --db '%s' --json --threads 2", REPORT_STUDY, db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    study_counts n = counts_of(r.out);
    free(r.out);
    snprintf(args, sizeof args, "study show --db '%s' --report '%s'", db, path);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Fastest algorithm")); /* the tables still print */
    free(r.out);
    check_page(path, &n);
    /* accelsearch report RUN of the study run draws the same page. */
    char again[512];
    snprintf(again, sizeof again, "%s/report_study_run.html", AS_TEST_TMP_DIR);
    remove(again);
    snprintf(args, sizeof args, "report 1 --db '%s' -o '%s'", db, again);
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);
    json_t *shown = page_data(path), *reported = page_data(again);
    assert_true(json_equal(shown, reported));
    json_decref(shown);
    json_decref(reported);
    remove_store(db);
}

/* A report that cannot be written is an error naming the file. */
static void test_unwritable_report(void **state)
{
    (void)state;
    run_result r;
    run(&r, "study '" REPORT_STUDY "' --no-db --report /nonexistent-dir/study.html");
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "--report /nonexistent-dir/study.html: cannot write the file"));
    free(r.out);
}

/* The check can fail: a page whose data lacks a member the renderer
 * draws shows the error and says it failed. */
static void test_spoilt_report(void **state)
{
    (void)state;
    char good[512], bad[512];
    snprintf(good, sizeof good, "%s/report_study.html", AS_TEST_TMP_DIR);
    snprintf(bad, sizeof bad, "%s/report_study_spoilt.html", AS_TEST_TMP_DIR);
    char *dom = render_spoilt(good, bad, "\"observations\":", "\"observationz\":");
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_null(strstr(dom, "data-errors=\"0\""));
    assert_non_null(strstr(dom, "id=\"report-errors\""));
    free(dom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_study_report),
        cmocka_unit_test(test_show_report),
        cmocka_unit_test(test_unwritable_report),
        cmocka_unit_test(test_spoilt_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
