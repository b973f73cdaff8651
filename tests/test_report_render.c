/*
 * test_report_render.c -- the renderers of fusion and search reports in a
 * real browser (CTest label `browser`): each sample of tests/data/report
 * (the data of real fuse and search reports; its README says how they
 * were made) is written as a page by rp_write_html, rendered by Debian's
 * chromium headless, and its
 * DOM must draw every item of the data: one band per fusion group, one
 * grey mark per feasible candidate, the front, exactly one chosen and one
 * baseline mark, each fixed design, the hypervolume curve, the front's
 * table and one fusion panel per workload; a screenshot of each is written
 * beside the test.  A sample with a member the renderer needs removed
 * must render as failed: the checks can fail.
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

#include "report/report.h"

#include "browser.h"
#include "report_checks.h"

/* The sample tests/data/report/name.json. */
static json_t *sample(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/report/%s.json", AS_TEST_DATA_DIR, name);
    json_error_t error;
    json_t *d = json_load_file(path, 0, &error);
    if (!d)
        fail_msg("%s:%d: %s", path, error.line, error.text);
    return d;
}

/* d written as the page AS_TEST_TMP_DIR/report_render_name.html (path),
 * then rendered: the DOM, malloc'd. */
static char *page(const json_t *d, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/report_render_%s.html", AS_TEST_TMP_DIR, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    as_status st;
    as_code rc = rp_write_html(f, name, d, &st);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rc, AS_OK);
    return render(path);
}

static void test_fusion_report(void **state)
{
    (void)state;
    json_t *d = sample("fusion");
    char path[512];
    char *dom = page(d, "fusion", path, sizeof path);
    assert_rendered_ok(dom);
    assert_fusion_panel(dom, d, "");
    /* The ratio to the layer-by-layer plan is shown, and the loop nests. */
    assert_non_null(strstr(dom, "fused / layer by layer"));
    assert_non_null(strstr(dom, "parallel_for"));
    free(dom);
    json_decref(d);
    screenshot(path, "report_render_fusion.png", 1100, 2400);
}

/* The checks can fail: without its groups the page says it failed and
 * why. */
static void test_fusion_missing_fails(void **state)
{
    (void)state;
    char path[512];
    json_t *d = sample("fusion");
    assert_int_equal(json_object_del(d, "groups"), 0);
    char *dom = page(d, "no_groups", path, sizeof path);
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_non_null(strstr(dom, "data-errors=\"1\""));
    assert_non_null(strstr(dom, "fusion: no groups in the data"));
    free(dom);
    json_decref(d);
}

/* The search page of sample name: every mark of the Pareto chart, the
 * curve, the front's table and one panel per workload (report_checks.h). */
static void check_search(const char *name, int min_workloads, int min_fixed)
{
    json_t *d = sample(name);
    const json_t *candidates = json_object_get(d, "candidates");
    int n_feasible = count_if(candidates, "feasible"), n_front = count_if(candidates, "front");
    int n_curve = (int)json_array_size(json_object_get(d, "curve"));
    assert_true(n_feasible > 3 && n_front > 1 && n_curve > 1);
    assert_true((int)json_array_size(json_object_get(d, "workloads")) >= min_workloads &&
                count_if(json_object_get(d, "fixed_designs"), "feasible") >= min_fixed);
    char path[512], shot[128];
    char *dom = page(d, name, path, sizeof path);
    assert_search_page(dom, d);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"staircase\""), 1);
    free(dom);
    json_decref(d);
    snprintf(shot, sizeof shot, "report_render_%s.png", name);
    screenshot(path, shot, 1100, 1400);
}

static void test_search_report(void **state)
{
    (void)state;
    check_search("search", 2, 1);
}

/* A run with one workload and no fixed design draws no workload panel. */
static void test_search_report_small(void **state)
{
    (void)state;
    check_search("search_small", 0, 0);
}

/* The checks can fail: without the candidates, or with a workload that
 * lacks its groups, the page says it failed and why. */
static void test_search_missing_fails(void **state)
{
    (void)state;
    char path[512];
    json_t *d = sample("search");
    assert_int_equal(json_object_del(d, "candidates"), 0);
    char *dom = page(d, "no_candidates", path, sizeof path);
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_null(strstr(dom, "data-errors=\"0\""));
    assert_non_null(strstr(dom, "search: no candidates in the data"));
    free(dom);
    json_decref(d);

    d = sample("search");
    json_t *w = json_array_get(json_object_get(d, "workloads"), 1);
    assert_int_equal(json_object_del(w, "groups"), 0);
    dom = page(d, "no_groups", path, sizeof path);
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_non_null(strstr(dom, "data-errors=\"1\""));
    assert_non_null(strstr(dom, "workload 1: fusion: no groups in the data"));
    /* The other panel is still drawn. */
    assert_true(count_in(dom, "chart-w0-groups", "</figure>", "class=\"group\"") > 0);
    free(dom);
    json_decref(d);
}

/* The page of sample name with script added after the renderer's (clicks,
 * then a summary of what they did in <body data-check>), rendered: the
 * DOM, malloc'd. */
static char *page_clicked(const char *name, const char *script)
{
    json_t *d = sample(name);
    char path[512], clicked[560];
    free(page(d, name, path, sizeof path));
    json_decref(d);
    char *text = slurp(path);
    char *end = strstr(text, "</body>");
    assert_non_null(end);
    snprintf(clicked, sizeof clicked, "%s.clicked.html", path);
    FILE *f = fopen(clicked, "w");
    assert_non_null(f);
    fprintf(f, "%.*s<script>%s</script>%s", (int)(end - text), text, script, end);
    assert_int_equal(fclose(f), 0);
    free(text);
    return render(clicked);
}

/* Latency of front candidate a against b, for qsort: the slower first. */
static int slower_first(const void *a, const void *b)
{
    double la = json_number_value(
        json_object_get(json_object_get(*(json_t *const *)a, "metrics"), "latency_s"));
    double lb = json_number_value(
        json_object_get(json_object_get(*(json_t *const *)b, "metrics"), "latency_s"));
    return (la < lb) - (la > lb);
}

/* The clicks work: two on the front table's latency header sort it
 * slowest first; one on a band or a group row opens its mappings. */
static void test_search_clicks(void **state)
{
    (void)state;
    char *dom = page_clicked(
        "search", "const th = document.querySelectorAll('#front-table th');"
                  "th[1].click(); th[1].click();"
                  "document.querySelector('#chart-w0-groups rect.group')"
                  ".dispatchEvent(new MouseEvent('click'));"
                  "document.querySelector('#table-w1-groups tr.group-row').click();"
                  "document.body.dataset.check = [...document.querySelectorAll("
                  "'#front-table tr.front-row td:first-child')].map((e) => e.textContent)"
                  ".join('|') + ' w0=' + document.getElementById('w0-group-nest-0').hidden +"
                  "' w1=' + document.getElementById('w1-group-nest-0').hidden;");
    assert_non_null(strstr(dom, "data-render=\"ok\""));
    json_t *d = sample("search");
    const json_t *candidates = json_object_get(d, "candidates");
    const json_t *chosen =
        json_array_get(candidates, (size_t)json_integer_value(json_object_get(d, "chosen")));
    json_t *front[64];
    size_t n = 0, i;
    json_t *c;
    json_array_foreach(candidates, i, c) if (json_is_true(json_object_get(c, "front")) && n < 64)
        front[n++] = c;
    qsort(front, n, sizeof front[0], slower_first);
    char expected[2048] = "data-check=\"";
    for (i = 0; i < n; i++) {
        int iteration = (int)json_integer_value(json_object_get(front[i], "iteration"));
        int slot = (int)json_integer_value(json_object_get(front[i], "slot"));
        char label[64];
        if (iteration < 0)
            snprintf(label, sizeof label, "%s%sreference", i ? "|" : "",
                     front[i] == chosen ? "★ " : "");
        else
            snprintf(label, sizeof label, "%s%s%d.%d", i ? "|" : "", front[i] == chosen ? "★ " : "",
                     iteration, slot);
        strcat(expected, label);
    }
    strcat(expected, " w0=false w1=false\"");
    if (!strstr(dom, expected))
        fail_msg("expected %s", expected);
    json_decref(d);
    free(dom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fusion_report),        cmocka_unit_test(test_fusion_missing_fails),
        cmocka_unit_test(test_search_report),        cmocka_unit_test(test_search_report_small),
        cmocka_unit_test(test_search_missing_fails), cmocka_unit_test(test_search_clicks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
