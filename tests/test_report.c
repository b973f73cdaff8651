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
#include <math.h>
#include <stdbool.h>

#include "cli_run.h"

#include "browser.h"
#include "report_checks.h"

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
    char *dom = render_spoilt(good, bad, "\"kind\":\"network\"", "\"kind\":\"nothing\"");
    assert_non_null(strstr(dom, "data-render=\"failed\""));
    assert_non_null(strstr(dom, "data-errors=\"1\""));
    assert_non_null(strstr(dom, "unknown report kind nothing"));
    free(dom);
}

/* JSON values equal, numbers by value (a stored real the core's dump
 * wrote as "5" reads back as an integer). */
static bool same_json(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_json(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        const char *key;
        const json_t *v;
        if (json_object_size(a) != json_object_size(b))
            return false;
        json_object_foreach((json_t *)a, key, v)
        {
            if (!same_json(v, json_object_get(b, key)))
                return false;
        }
        return true;
    }
    return json_equal(a, b);
}

/* Run `accelsearch args` (with --json and --report path in it): its
 * standard output parsed, and the report's data into *data. */
static json_t *run_with_report(const char *args, const char *path, json_t **data)
{
    remove(path);
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fail_msg("accelsearch %s: exit %d: %s", args, r.status, r.err);
    json_error_t error;
    json_t *out = json_loads(r.out, 0, &error);
    assert_non_null(out);
    free(r.out);
    *data = page_data(path);
    return out;
}

/* The candidate objects of a search report's data whose (iteration,
 * slot) is that of JSON candidate c (search --json's form). */
static const json_t *find_candidate(const json_t *data, const json_t *c)
{
    const json_t *all = json_object_get(data, "candidates");
    for (size_t i = 0; i < json_array_size(all); i++) {
        const json_t *d = json_array_get(all, i);
        if (json_equal(json_object_get(d, "iteration"), json_object_get(c, "iteration")) &&
            json_equal(json_object_get(d, "slot"), json_object_get(c, "slot")))
            return d;
    }
    return NULL;
}

/* A small CASCO search with a validation model and a fixed design, kept
 * in a store, with a report: the report holds every candidate the run
 * evaluated, its front and chosen design as search --json gives them, the
 * fixed design, the hypervolume curve and one fusion panel per workload;
 * `report RUN` of the stored run holds the same candidates, front, chosen
 * design and training workload's plan. */
static void test_search_report(void **state)
{
    (void)state;
    char db[512], path[512], again[512], args[2048];
    snprintf(db, sizeof db, "%s/report_search.db", AS_TEST_TMP_DIR);
    snprintf(path, sizeof path, "%s/report_search.html", AS_TEST_TMP_DIR);
    snprintf(again, sizeof again, "%s/report_run.html", AS_TEST_TMP_DIR);
    remove_store(db);
    remove(again);
    snprintf(args, sizeof args,
             "search --model resnet18 --validate-model mobilenet_v2 --baseline eyeriss "
             "--budget 6 --batch 3 --sw-budget 32 --map-budget 100 --threads 2 --json "
             "--db '%s' --report '%s'",
             db, path);
    json_t *data, *out = run_with_report(args, path, &data);
    assert_string_equal(json_string_value(json_object_get(data, "kind")), "search");

    /* Every evaluated candidate (the baseline design first), each where
     * search --json says, with its metrics; the front flagged as printed. */
    const json_t *evaluated = json_object_get(out, "evaluations");
    const json_t *candidates = json_object_get(data, "candidates");
    assert_int_equal(json_array_size(candidates), json_array_size(evaluated));
    assert_true(json_array_size(candidates) == 7);
    for (size_t i = 0; i < json_array_size(evaluated); i++) {
        const json_t *c = json_array_get(evaluated, i);
        const json_t *d = find_candidate(data, c);
        assert_non_null(d);
        assert_true(json_equal(json_object_get(d, "feasible"), json_object_get(c, "feasible")));
    }
    const json_t *front = json_object_get(out, "pareto");
    size_t n_front = 0;
    for (size_t i = 0; i < json_array_size(candidates); i++)
        n_front += json_is_true(json_object_get(json_array_get(candidates, i), "front"));
    assert_int_equal(n_front, json_array_size(front));
    for (size_t i = 0; i < json_array_size(front); i++)
        assert_true(
            json_is_true(json_object_get(find_candidate(data, json_array_get(front, i)), "front")));
    const json_t *chosen =
        json_array_get(candidates, (size_t)json_integer_value(json_object_get(data, "chosen")));
    assert_ptr_equal(chosen, find_candidate(data, json_object_get(out, "chosen")));
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(candidates, (size_t)json_integer_value(
                                                        json_object_get(data, "baseline"))),
                         "iteration")),
                     -1);
    assert_int_equal(json_array_size(json_object_get(data, "curve")),
                     json_array_size(json_object_get(out, "hypervolume_curve")));
    const json_t *fixed = json_object_get(data, "fixed_designs");
    assert_int_equal(json_array_size(fixed), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(fixed, 0), "name")),
                        "eyeriss");

    /* One fusion panel per workload, the validation one marked; each
     * group's energy split into the design's parts adds up. */
    const json_t *panels = json_object_get(data, "workloads");
    assert_int_equal(json_array_size(panels), 2);
    for (size_t k = 0; k < 2; k++) {
        const json_t *w = json_array_get(panels, k);
        assert_string_equal(json_string_value(json_object_get(w, "kind")), "fusion");
        assert_int_equal(json_is_true(json_object_get(w, "validation")), k == 1);
        const json_t *names = json_object_get(w, "components");
        assert_true(json_array_size(names) >= 4);
        const json_t *groups = json_object_get(w, "groups");
        assert_true(json_array_size(groups) > 5);
        for (size_t g = 0; g < json_array_size(groups); g++) {
            const json_t *group = json_array_get(groups, g);
            const json_t *parts = json_object_get(group, "energy_by_component_pJ");
            assert_int_equal(json_array_size(parts), json_array_size(names));
            double sum = 0;
            for (size_t i = 0; i < json_array_size(parts); i++)
                sum += json_number_value(json_array_get(parts, i));
            double energy = json_number_value(json_object_get(group, "energy_pJ"));
            assert_true(fabs(sum - energy) <= 1e-6 * energy);
        }
        assert_true(json_array_size(json_object_get(w, "layers")) > 5);
    }

    /* The stored run's report: the same run, as far as the store keeps it. */
    run_result r;
    snprintf(args, sizeof args, "report 1 --db '%s' -o '%s'", db, again);
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);
    json_t *stored = page_data(again);
    for (const char *const *key = (const char *const[]){"candidates", "chosen", "baseline", "curve",
                                                        "objectives", "parameters", NULL};
         *key; key++)
        if (!same_json(json_object_get(stored, *key), json_object_get(data, *key)))
            fail_msg("report RUN's %s differs from search --report's", *key);
    const json_t *stored_panels = json_object_get(stored, "workloads");
    assert_int_equal(json_array_size(stored_panels), 1);
    assert_true(same_json(json_array_get(stored_panels, 0), json_array_get(panels, 0)));
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(stored, "workloads_not_stored"), 0)),
        "mobilenet_v2");
    /* Both pages drawn in the browser: every candidate, the front, the
     * chosen, baseline and fixed designs, the curve, a panel per workload. */
    char *dom = render(path);
    assert_search_page(dom, data);
    free(dom);
    dom = render(again);
    assert_search_page(dom, stored);
    assert_non_null(strstr(dom, "mobilenet_v2")); /* named as not stored */
    free(dom);
    screenshot(path, "report_search.png", 1100, 2600);
    json_decref(stored);
    json_decref(data);
    json_decref(out);
}

/* A fusion's report: its groups as fuse --json prints them, the
 * layer-by-layer baseline, the design's roofs, every compute layer's
 * mapping. */
static void test_fuse_report(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/report_fuse.html", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args,
             "fuse --arch eyeriss --model mobilenet_v2 --plan-budget 64 --map-budget 200 "
             "--threads 2 --json --report '%s'",
             path);
    json_t *data, *out = run_with_report(args, path, &data);
    assert_string_equal(json_string_value(json_object_get(data, "kind")), "fusion");
    assert_string_equal(json_string_value(json_object_get(data, "algorithm")), "ga");
    const json_t *groups = json_object_get(data, "groups");
    assert_int_equal(json_array_size(groups), json_array_size(json_object_get(out, "groups")));
    for (size_t g = 0; g < json_array_size(groups); g++) {
        const json_t *mine = json_array_get(groups, g);
        const json_t *printed = json_array_get(json_object_get(out, "groups"), g);
        assert_true(
            same_json(json_object_get(mine, "dram_bytes"), json_object_get(printed, "dram_bytes")));
        assert_true(same_json(json_object_get(mine, "cycles"), json_object_get(printed, "cycles")));
    }
    assert_true(same_json(json_object_get(json_object_get(data, "baseline"), "cycles"),
                          json_object_get(json_object_get(out, "baseline"), "cycles")));
    assert_true(
        json_number_value(json_object_get(json_object_get(data, "roofs"), "peak_ops_per_s")) > 1e9);
    assert_true(json_array_size(json_object_get(data, "layers")) > 40);
    char *dom = render(path);
    assert_rendered_ok(dom);
    assert_fusion_panel(dom, data, "");
    free(dom);
    screenshot(path, "report_fuse.png", 1100, 2000);
    json_decref(data);
    json_decref(out);
}

/* Wrong uses of report say what is wrong: no store, a run that is not
 * there. */
static void test_report_errors(void **state)
{
    (void)state;
    run_result r;
    run(&r, "report --db /nonexistent/none.db");
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "no run store"));
    free(r.out);
    char db[512], args[1024];
    snprintf(db, sizeof db, "%s/report_search.db", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args, "report 99 --db '%s'", db);
    run(&r, args);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "99"));
    free(r.out);
    run(&r, "fuse --arch eyeriss --model resnet18 --algo fadiff --report x.html");
    assert_int_equal(r.status, 2);
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_report),    cmocka_unit_test(test_error_is_seen),
        cmocka_unit_test(test_search_report), cmocka_unit_test(test_fuse_report),
        cmocka_unit_test(test_report_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
