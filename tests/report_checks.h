/*
 * report_checks.h -- what a rendered report page must draw, given the
 * data it embeds (tests/test_report.c on the pages the CLI writes,
 * tests/test_report_render.c on the samples of tests/data/report): a
 * fusion panel draws every group, a search page every candidate, its
 * front, the chosen, baseline and fixed designs, the curve, the front's
 * table and one panel per workload.  Include after browser.h.
 */
#ifndef AS_TESTS_REPORT_CHECKS_H
#define AS_TESTS_REPORT_CHECKS_H

static inline void assert_rendered_ok(const char *dom)
{
    assert_non_null(strstr(dom, "data-render=\"ok\""));
    assert_non_null(strstr(dom, "data-errors=\"0\""));
    assert_null(strstr(dom, "id=\"report-errors\""));
}

static inline int count_if(const json_t *array, const char *member)
{
    int n = 0;
    size_t i;
    const json_t *item;
    json_array_foreach(array, i, item) n += json_is_true(json_object_get(item, member));
    return n;
}

/* The charts of the fusion panel of data d with id prefix p in dom: a band
 * per group, a latency bar per group, energy and utilisation bars, a
 * roofline point per group with MACs, the roof, a table row per group. */
static inline void assert_fusion_panel(const char *dom, const json_t *d, const char *p)
{
    const json_t *groups = json_object_get(d, "groups");
    int n_groups = (int)json_array_size(groups), n_roofline = 0;
    assert_true(n_groups > 0);
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g) n_roofline +=
        json_integer_value(json_object_get(g, "macs")) > 0 &&
        json_integer_value(json_object_get(g, "dram_bytes")) > 0;
    char id[96];
    snprintf(id, sizeof id, "chart-%sgroups", p);
    assert_int_equal(count_in(dom, id, "</figure>", "class=\"group\""), n_groups);
    assert_true(count_in(dom, id, "</figure>", "class=\"op\"") >= n_groups);
    snprintf(id, sizeof id, "chart-%slatency", p);
    assert_int_equal(count_in(dom, id, "</figure>", "class=\"bar "), n_groups);
    snprintf(id, sizeof id, "chart-%senergy", p);
    assert_true(count_in(dom, id, "</figure>", "class=\"bar ") >= n_groups);
    snprintf(id, sizeof id, "chart-%sutilisation", p);
    assert_true(count_in(dom, id, "</figure>", "class=\"bar ") > 0);
    snprintf(id, sizeof id, "chart-%sroofline", p);
    assert_int_equal(count_in(dom, id, "</figure>", "class=\"point\""), n_roofline);
    assert_int_equal(count_in(dom, id, "</figure>", "class=\"roof\""), 1);
    snprintf(id, sizeof id, "table-%sgroups", p);
    assert_int_equal(count_in(dom, id, "</table>", "class=\"group-row\""), n_groups);
}

/* The search page's DOM against its data d: every mark of the Pareto
 * chart, the curve, the front's table, the infeasible list, the aggregate
 * and one fusion panel per workload. */
static inline void assert_search_page(const char *dom, const json_t *d)
{
    const json_t *candidates = json_object_get(d, "candidates");
    const json_t *workloads = json_object_get(d, "workloads");
    const json_t *fixed = json_object_get(d, "fixed_designs");
    int n_feasible = count_if(candidates, "feasible"), n_front = 0;
    int n_infeasible = (int)json_array_size(candidates) - n_feasible;
    size_t i;
    const json_t *c;
    json_array_foreach(candidates, i, c) n_front +=
        json_is_true(json_object_get(c, "feasible")) && json_is_true(json_object_get(c, "front"));
    int n_fixed = count_if(fixed, "feasible"), n_workloads = (int)json_array_size(workloads);
    n_infeasible += (int)json_array_size(fixed) - n_fixed; /* listed with the candidates */
    int n_curve = (int)json_array_size(json_object_get(d, "curve"));
    assert_rendered_ok(dom);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"candidate\""), n_feasible);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"front-point\""), n_front);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"chosen\""), 1);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"baseline\""), 1);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"fixed-design\""), n_fixed);
    /* The staircase joins the front's points no other beats in latency and
     * energy alone: drawn when two or more are. */
    int stairs = count_in(dom, "chart-pareto", "</figure>", "class=\"staircase\"");
    assert_true(stairs == 0 || stairs == 1);
    assert_true(n_front > 1 || stairs == 0);
    assert_int_equal(count_in(dom, "chart-pareto", "</figure>", "class=\"colour-scale\""), 1);
    assert_int_equal(count_in(dom, "chart-hypervolume", "</figure>", "class=\"hv-point\""),
                     n_curve);
    assert_int_equal(count_in(dom, "front-table", "</table>", "class=\"front-row\""), n_front);
    /* Every metric of the data is drawn ("-" is a value the page lacks). */
    assert_int_equal(count_in(dom, "front-table", "</table>", ">-<"), 0);
    assert_int_equal(count_in(dom, "infeasible", "</details>", "class=\"infeasible-row\""),
                     n_infeasible);
    assert_int_equal(count_in(dom, "aggregate", "</section>", "<table"), 1);
    /* One section per workload, each with its fusion panel. */
    assert_int_equal(count_in(dom, "report", "</body>", "class=\"workload\""), n_workloads);
    const json_t *w;
    json_array_foreach(workloads, i, w)
    {
        char id[48], prefix[32];
        snprintf(id, sizeof id, "workload-%zu", i);
        snprintf(prefix, sizeof prefix, "w%zu-", i);
        assert_true(count_in(dom, id, "</h2>", json_string_value(json_object_get(w, "model"))) ==
                    1);
        assert_int_equal(count_in(dom, id, "</h2>", "(validation)"),
                         json_is_true(json_object_get(w, "validation")));
        assert_fusion_panel(dom, w, prefix);
    }
}

#endif
