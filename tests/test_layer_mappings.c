/*
 * test_layer_mappings.c -- the mapping of every compute layer stored with
 * each candidate of a co-design run: the one-line text of a mapping reads
 * back to a mapping that evaluates identically (Timeloop reference cases);
 * a seeded search stores, for each front design, every compute layer of
 * the model, and each stored mapping, re-evaluated with map_evaluate on
 * the design's architecture (as the mapper saw it) and the stored
 * problem, gives the stored cycles and energy; fu_plan_mappings lists
 * exactly the plan's compute layers; `runs show --design K --layers`
 * prints them (text and JSON) and refuses rows stored without them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusion/fusion.h"
#include "mapping/mapping.h"
#include "search/search_private.h"
#include "store/store.h"

#include "cli_run.h"

#define CASES_DIR AS_TEST_DATA_DIR "/timeloop/"
#define MODEL "alexnet"
/* Tiny seeded searches: 4 candidates, few plans and mappings (well under
 * a second each): CASCO's GA on the edge space, and FAST's ILP on the
 * datacenter space, whose systolic arrays pack depthwise groups. */
#define SEARCH_ARGS                                                                                \
    "search --model " MODEL " --hw-budget 4 --batch 4 --plan-budget 32 --sh-rounds 2 "             \
    "--map-budget 16 --seed 7 --threads 1"
#define SYSTOLIC_MODEL "mobilenet_v2_cifar"
#define SYSTOLIC_SEARCH_ARGS                                                                       \
    "search --space datacenter --model " SYSTOLIC_MODEL " --hw-budget 4 --batch 4 "                \
    "--map-budget 16 --seed 7 --threads 1"

static void expect_in(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("expected '%s' in:\n%.2000s", what, text);
}

/* ------------------------------------------------------------ text form */

/* Format, read back, evaluate both: the same nest, the same numbers; and
 * the text of the text is the text. */
static void check_round_trip(const char *id)
{
    static map_timeloop_case c;
    static map_mapping back;
    static map_eval want, got;
    char path[3][512], text[4096], again[4096];
    static const char *const file[3] = {"model-input.yaml", "ERT.yaml", "ART.yaml"};
    as_status st;
    as_status_clear(&st);
    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], CASES_DIR "%s/%s", id, file[i]);
    if (map_timeloop_load(path[0], path[1], path[2], &c, &st) != AS_OK)
        fail_msg("%s: %s", id, st.message);
    assert_true(map_mapping_format(&c.arch, &c.mapping, text, sizeof text));
    if (map_mapping_parse(text, c.arch.n_levels, &back, &st) != AS_OK)
        fail_msg("%s: '%s': %s", id, text, st.message);
    map_evaluate(&c.arch, &c.problem, &c.mapping, &want);
    map_evaluate(&c.arch, &c.problem, &back, &got);
    assert_int_equal(want.validity, MAP_VALID);
    assert_int_equal(got.validity, MAP_VALID);
    assert_int_equal(got.cycles, want.cycles);
    assert_true(got.energy_pJ == want.energy_pJ);
    for (int l = 0; l < c.arch.n_levels; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            assert_int_equal(got.level[l].ds[ds].reads, want.level[l].ds[ds].reads);
            assert_int_equal(got.level[l].ds[ds].fills, want.level[l].ds[ds].fills);
            assert_int_equal(got.level[l].ds[ds].updates, want.level[l].ds[ds].updates);
        }
    assert_true(map_mapping_format(&c.arch, &back, again, sizeof again));
    assert_string_equal(again, text);
}

static void test_text_round_trip(void **state)
{
    (void)state;
    check_round_trip("simba_like__resnet50_conv2x_3x3_c64m64_56");
    check_round_trip("eyeriss_like__stem_conv3x3s2_c3m32_112");
    check_round_trip("micro_conv1d_oc_ic_3levelspatial_kp");
    check_round_trip("micro_conv1d_oc_3level_bypass");
}

/* A hand-made mapping reads as documented, loops outermost first. */
static void test_text_form(void **state)
{
    (void)state;
    map_mapping m;
    as_status st;
    as_status_clear(&st);
    const char *text = "DRAM[WIO] M2 P7 | Buffer[IO] C4 M16Y C16X | PE[W] R3 S3 pack=2";
    assert_int_equal(map_mapping_parse(text, 3, &m, &st), AS_OK);
    assert_int_equal(m.level[2].temporal[WL_DIM_M], 2);
    assert_int_equal(m.level[2].temporal_order[0], WL_DIM_P); /* innermost first */
    assert_int_equal(m.level[2].temporal_order[1], WL_DIM_M);
    assert_int_equal(m.level[1].spatial[WL_DIM_M], 16);
    assert_int_equal(m.level[1].spatial_split, 1);
    assert_int_equal(m.level[1].spatial_order[0], WL_DIM_C); /* X */
    assert_true(m.level[1].keep[WL_DS_INPUTS] && !m.level[1].keep[WL_DS_WEIGHTS]);
    assert_true(m.level[0].keep[WL_DS_WEIGHTS] && !m.level[0].keep[WL_DS_OUTPUTS]);
    assert_int_equal(m.group_pack, 2);
    char back[512];
    assert_true(map_mapping_format(NULL, &m, back, sizeof back));
    assert_string_equal(back, "L2[WIO] M2 P7 | L1[IO] C4 M16Y C16X | L0[W] R3 S3 pack=2");
    char small[10];
    assert_false(map_mapping_format(NULL, &m, small, sizeof small));
    assert_int_equal(strlen(small), sizeof small - 1);

    static const char *const bad[] = {
        "DRAM[WIO] M2 | PE[W]",                     /* 2 levels for 3 */
        "A[WIO] | B[] Z4 | C[]",                    /* no dimension Z */
        "A[WIO] C2 C4 | B[] | C[]",                 /* C twice */
        "A[WX] | B[] | C[]",                        /* no data space X */
        "A[WIO] C0 | B[] | C[]",                    /* factor 0 */
        "A[WIO] | B | C[]",                         /* no brackets */
        "A[WIO] | B[] M4Z | C[]",                   /* no axis Z */
        "A[WIO] | B[] | C[] | D[]",                 /* 4 levels */
        "A[WIO] | B[] | C[] pack=0",                /* packing 0 */
        "A[WIO] | B[] C99999999999999999999 | C[]", /* overflow */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        as_status_clear(&st);
        if (map_mapping_parse(bad[i], 3, &m, &st) != AS_EINVAL)
            fail_msg("'%s' was read", bad[i]);
        expect_in(st.message, "mapping '");
    }

    int64_t bound[WL_NDIMS] = {1, 1, 64, 64, 56, 56, 3, 3}, read[WL_NDIMS];
    char bounds[128];
    assert_true(map_bounds_format(bound, bounds, sizeof bounds));
    assert_string_equal(bounds, "C64 M64 P56 Q56 R3 S3");
    assert_int_equal(map_bounds_parse(bounds, read, &st), AS_OK);
    assert_memory_equal(read, bound, sizeof bound);
    assert_int_equal(map_bounds_parse("C64 C3", read, &st), AS_EINVAL);
    assert_int_equal(map_bounds_parse("K64", read, &st), AS_EINVAL);
    assert_int_equal(map_bounds_parse("C0", read, &st), AS_EINVAL);
}

/* ------------------------------------------------------- fu_plan_mappings */

/* The graph a search prepares for model at batch on space s. */
static wl_graph *search_graph(const se_space *s, const char *model, int64_t batch)
{
    se_workload w = {.model = model};
    se_models *m;
    wl_graph *g = NULL;
    as_status st;
    as_status_clear(&st);
    if (se_models_new(&m, &w, 1, s->precision, true, &st) != AS_OK ||
        se_models_load(m, 0, batch, &g, &st) != AS_OK)
        fail_msg("%s", st.message);
    se_models_free(m);
    return g;
}

/* The evaluator a search builds for design p of s on g (off-chip capacity
 * cleared as evaluate.c does: the mapper sees an unbounded DRAM), mapping
 * into cache (NULL: its own). */
static fu_evaluator *design_evaluator(const se_space *s, const se_point *p, const wl_graph *g,
                                      int64_t map_budget, map_cache *cache)
{
    arch_spec a;
    bool feasible;
    char reason[256];
    se_space_decode(s, p, &a, &feasible, reason, sizeof reason);
    if (!feasible)
        fail_msg("design not feasible: %s", reason);
    arch_level *dram = &a.level[a.n_levels - 1];
    if (dram->cls == ARCH_CLASS_DRAM) {
        dram->size_words = 0;
        memset(dram->size_words_by_ds, 0, sizeof dram->size_words_by_ds);
    }
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
    o.search.threads = 1;
    o.budget_per_problem = map_budget;
    o.shared_mappings = cache;
    fu_evaluator *e;
    as_status st;
    as_status_clear(&st);
    if (fu_evaluator_new(&e, g, &a, &o, &st) != AS_OK)
        fail_msg("%s", st.message);
    return e;
}

/* Compute layers of g that a plan covers. */
static int count_compute_layers(const wl_graph *g)
{
    int n = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        n += fu_op_in_plan(g, o) && map_op_is_compute(&g->ops[o]);
    return n;
}

/* A GA plan of MODEL on the edge space's baseline: every compute layer
 * once, in its own plan's group, each mapping evaluating to its figures,
 * each fused member's tile within its layer. */
static void test_plan_mappings(void **state)
{
    (void)state;
    se_space s;
    as_status st;
    as_status_clear(&st);
    if (se_space_load("edge", &s, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph *g = search_graph(&s, MODEL, 1);
    se_point baseline = {0};
    memcpy(baseline.index, s.baseline, sizeof baseline.index);
    map_cache *cache;
    assert_int_equal(map_cache_new(&cache, &st), AS_OK);
    fu_evaluator *e = design_evaluator(&s, &baseline, g, 16, cache);
    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = FU_ALGO_GA;
    so.seed = 3;
    so.threads = 1;
    fu_search *search;
    fu_plan plan;
    fu_plan_cost cost;
    if (fu_search_init(&search, e, &so, &st) != AS_OK)
        fail_msg("%s", st.message);
    fu_search_step(search, 64);
    if (fu_search_best(search, &plan, &cost, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_true(cost.valid);
    fu_layer_mapping *layers;
    int32_t n;
    int64_t hits, entries, hits_after, entries_after;
    map_cache_stats(cache, &hits, &entries);
    if (fu_plan_mappings(e, &plan, &cost, &layers, &n, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_int_equal(n, count_compute_layers(g));
    /* Every layer's problem is one the costing mapped: nothing new searched. */
    map_cache_stats(cache, &hits_after, &entries_after);
    assert_int_equal(entries_after, entries);
    assert_int_equal(hits_after, hits + n);
    bool fused = false;
    for (int32_t i = 0; i < n; i++) {
        const fu_layer_mapping *l = &layers[i];
        assert_true(l->found);
        assert_true(map_op_is_compute(&g->ops[l->op]));
        assert_int_equal(plan.group[l->op], l->group);
        for (int32_t k = 0; k < i; k++)
            assert_int_not_equal(layers[k].op, l->op);
        assert_int_equal(l->n_tiles, cost.groups[l->group].n_tiles);
        wl_problem whole;
        assert_int_equal(wl_op_problem(g, l->op, &whole, &st), AS_OK);
        for (int d = 0; d < WL_NDIMS; d++) {
            assert_true(l->problem.bound[d] <= whole.bound[d]);
            assert_true(l->mapped.bound[d] >= l->problem.bound[d]);
        }
        /* A group run in several tiles maps some member on less than its
         * whole layer. */
        if (l->n_tiles > 1 && wl_problem_macs(&l->problem) < wl_problem_macs(&whole))
            fused = true;
        map_eval ev;
        map_evaluate(fu_evaluator_arch(e), &l->mapped, &l->mapping, &ev);
        assert_int_equal(ev.validity, MAP_VALID);
        assert_int_equal(ev.cycles, l->cycles);
        assert_true(ev.energy_pJ == l->energy_pJ);
    }
    assert_true(fused); /* the plan tiles a fused group: tile problems were exercised */
    /* A cost that is not this plan's is refused. */
    fu_plan_cost other = cost;
    other.n_groups = cost.n_groups + 1;
    fu_layer_mapping *none;
    assert_int_equal(fu_plan_mappings(e, &plan, &other, &none, &n, &st), AS_EINVAL);
    free(layers);
    fu_plan_free(&plan);
    fu_plan_cost_free(&cost);
    fu_search_free(search);
    fu_evaluator_free(e);
    map_cache_free(cache);
    wl_graph_free(g);
}

/* ------------------------------------------------------- a seeded search */

static char db[512], systolic_db[512];

/* Run `accelsearch ARGS --db PATH` into a new store at path (named name
 * in the scratch directory). */
static void search_into(char *path, size_t size, const char *name, const char *args)
{
    snprintf(path, size, "%s/%s", AS_TEST_TMP_DIR, name);
    remove_store(path);
    run_result r;
    char line[1024];
    snprintf(line, sizeof line, "%s --db '%s'", args, path);
    run(&r, line);
    if (r.status != 0)
        fail_msg("%s: exit %d: %s", line, r.status, r.err);
    free(r.out);
}

static int setup_search(void **state)
{
    (void)state;
    search_into(db, sizeof db, "layer_mappings.db", SEARCH_ARGS);
    return 0;
}

static int setup_systolic_search(void **state)
{
    (void)state;
    search_into(systolic_db, sizeof systolic_db, "layer_mappings_systolic.db",
                SYSTOLIC_SEARCH_ARGS);
    return 0;
}

/* The last round of the candidate (iteration, slot): point and details. */
typedef struct last_round {
    int64_t iteration, slot;
    char point[256];
    char *detail_json;
} last_round;

static bool keep_last_round(void *user, const store_row *row)
{
    last_round *c = user;
    if (row->iteration == c->iteration && row->slot == c->slot) {
        free(c->detail_json);
        c->detail_json = strdup(row->detail_json);
        snprintf(c->point, sizeof c->point, "%s", row->point);
    }
    return true;
}

/* Every stored layer of one design: every compute layer of the model
 * once, each mapping re-evaluated on the design's mapper view and the
 * stored problem giving the stored figures.  Returns how many mappings
 * pack groups on a systolic array. */
static int check_design_layers(const se_space *s, const last_round *c)
{
    int packed = 0;
    as_status st;
    as_status_clear(&st);
    se_point p;
    assert_true(se_point_parse(s, c->point, &p));
    json_t *detail;
    if (as_json_parse(c->detail_json, "detail", &detail, &st) != AS_OK)
        fail_msg("%s", st.message);
    json_t *w = json_array_get(json_object_get(detail, "workloads"), 0);
    wl_graph *g = search_graph(s, json_string_value(json_object_get(w, "model")),
                               json_integer_value(json_object_get(w, "batch")));
    fu_evaluator *e = design_evaluator(s, &p, g, 16, NULL);
    const arch_spec *a = fu_evaluator_arch(e);
    json_t *layers = json_object_get(w, "layers");
    assert_true(json_is_array(layers));
    int n_groups = (int)json_array_size(json_object_get(w, "groups"));
    bool *seen = calloc((size_t)g->n_ops, sizeof *seen);
    assert_non_null(seen);
    size_t i;
    json_t *l;
    json_array_foreach(layers, i, l)
    {
        const char *name = json_string_value(json_object_get(l, "layer"));
        int32_t op = -1;
        for (int32_t o = 0; o < g->n_ops && op < 0; o++)
            if (g->ops[o].name && strcmp(g->ops[o].name, name) == 0)
                op = o;
        assert_true(op >= 0);
        assert_true(map_op_is_compute(&g->ops[op]) && fu_op_in_plan(g, op));
        assert_false(seen[op]);
        seen[op] = true;
        json_int_t group = json_integer_value(json_object_get(l, "group"));
        assert_true(group >= 0 && group < n_groups);
        assert_true(json_integer_value(json_object_get(l, "tiles")) >= 1);
        wl_problem mapped;
        assert_int_equal(wl_op_problem(g, op, &mapped, &st), AS_OK);
        const char *padded = json_string_value(json_object_get(l, "padded"));
        const char *problem = json_string_value(json_object_get(l, "problem"));
        assert_int_equal(map_bounds_parse(padded ? padded : problem, mapped.bound, &st), AS_OK);
        map_mapping m;
        if (map_mapping_parse(json_string_value(json_object_get(l, "mapping")), a->n_levels, &m,
                              &st) != AS_OK)
            fail_msg("%s: %s", name, st.message);
        packed += m.group_pack > 1;
        map_eval ev;
        map_evaluate(a, &mapped, &m, &ev);
        if (ev.validity != MAP_VALID)
            fail_msg("%s: %s", name, ev.reason);
        assert_int_equal(ev.cycles, json_integer_value(json_object_get(l, "cycles")));
        double energy = json_number_value(json_object_get(l, "energy_pJ"));
        if (ev.energy_pJ != energy)
            fail_msg("%s: %.17g pJ re-evaluated, %.17g stored", name, ev.energy_pJ, energy);
    }
    assert_int_equal((int)json_array_size(layers), count_compute_layers(g));
    free(seen);
    json_decref(detail);
    fu_evaluator_free(e);
    wl_graph_free(g);
    return packed;
}

/* Every design of the last front of run 1 in store path (space
 * space_name): its last round's layers; returns the mappings that pack. */
static int check_front_layers(const char *path, const char *space_name)
{
    store *s;
    se_space space;
    as_status st;
    as_status_clear(&st);
    int64_t iteration;
    double hv;
    char *front_json;
    json_t *front;
    if (store_open(&s, path, &st) != AS_OK || se_space_load(space_name, &space, &st) != AS_OK ||
        store_last_front(s, 1, &iteration, &hv, &front_json, &st) != AS_OK ||
        as_json_parse(front_json, "front", &front, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_true(json_array_size(front) >= 1);
    int packed = 0;
    size_t k;
    json_t *entry;
    json_array_foreach(front, k, entry)
    {
        last_round c = {.iteration = json_integer_value(json_object_get(entry, "iteration")),
                        .slot = json_integer_value(json_object_get(entry, "slot"))};
        if (store_each_row(s, 1, keep_last_round, &c, &st) != AS_OK)
            fail_msg("%s", st.message);
        assert_non_null(c.detail_json);
        packed += check_design_layers(&space, &c);
        free(c.detail_json);
    }
    json_decref(front);
    free(front_json);
    store_close(s);
    return packed;
}

static void test_search_stores_layers(void **state)
{
    (void)state;
    check_front_layers(db, "edge");
}

/* Systolic arrays (FAST's template): depthwise layers' mappings pack
 * groups side by side, and that too reads back. */
static void test_search_stores_systolic_layers(void **state)
{
    (void)state;
    assert_true(check_front_layers(systolic_db, "datacenter") > 0);
}

/* --------------------------------------------------------------- the CLI */

static void test_runs_show_layers(void **state)
{
    (void)state;
    run_result r;
    char args[1024];
    snprintf(args, sizeof args, "runs show --db '%s' --design 0 --layers", db);
    run(&r, args);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    expect_in(r.out, "design 0 of run 1");
    expect_in(r.out, MODEL " (batch 1): 8 compute layers in");
    expect_in(r.out, "features.0\n");
    expect_in(r.out, "classifier.6\n");
    expect_in(r.out, "  problem    C3 M64 ");
    expect_in(r.out, "DRAM  [keeps Weights Inputs Outputs]\n");
    expect_in(r.out, "    spatial-for ");
    free(r.out);

    snprintf(args, sizeof args, "runs show --db '%s' --design 0 --layers --json", db);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_t *v;
    as_status st;
    as_status_clear(&st);
    if (as_json_parse(r.out, "runs show --json", &v, &st) != AS_OK)
        fail_msg("%s", st.message);
    json_t *layers = json_object_get(json_array_get(json_object_get(v, "workloads"), 0), "layers");
    assert_int_equal(json_array_size(layers), 8);
    json_t *first = json_array_get(layers, 0);
    assert_string_equal(json_string_value(json_object_get(first, "layer")), "features.0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(first, "problem"), "C")),
                     3);
    json_t *nest = json_object_get(first, "mapping");
    assert_true(json_is_array(nest) && json_array_size(nest) >= 2);
    assert_non_null(json_object_get(json_array_get(nest, 0), "temporal"));
    assert_non_null(json_string_value(json_object_get(first, "mapping_text")));
    json_decref(v);
    free(r.out);

    static const char *const usage[][2] = {
        {"--layers", "--design and --layers: give both"},
        {"--design 0", "--design and --layers: give both"},
        {"--design 0 --layers --emit-arch x.yaml", "not both"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        snprintf(args, sizeof args, "runs show --db '%s' %s", db, usage[i][0]);
        run(&r, args);
        assert_int_equal(r.status, 2);
        expect_in(r.err, usage[i][1]);
        free(r.out);
    }
    snprintf(args, sizeof args, "runs show --db '%s' --design 99 --layers", db);
    run(&r, args);
    assert_int_not_equal(r.status, 0);
    expect_in(r.err, "--design wants 0 to");
    free(r.out);
}

/* A run whose rows were stored without layers (as before they were):
 * --layers says so rather than printing nothing. */
static void test_runs_show_layers_absent(void **state)
{
    (void)state;
    store *s;
    as_status st;
    as_status_clear(&st);
    char *config, *front_json;
    int64_t iteration, old;
    double hv;
    if (store_open(&s, db, &st) != AS_OK || store_run_config(s, 1, &config, &st) != AS_OK ||
        store_last_front(s, 1, &iteration, &hv, &front_json, &st) != AS_OK ||
        store_run_begin(s, config, 7, "0.0.1", "old run", &old, &st) != AS_OK)
        fail_msg("%s", st.message);
    json_t *front;
    assert_int_equal(as_json_parse(front_json, "front", &front, &st), AS_OK);
    json_t *entry = json_array_get(front, 0);
    store_row row = {.iteration = json_integer_value(json_object_get(entry, "iteration")),
                     .slot = (int32_t)json_integer_value(json_object_get(entry, "slot")),
                     .feasible = true,
                     .detail_json =
                         "{\"workloads\": [{\"model\": \"" MODEL "\", \"groups\": []}]}"};
    if (store_put_row(s, old, &row, &st) != AS_OK ||
        store_put_front(s, old, 0, 1, hv, front_json, &st) != AS_OK)
        fail_msg("%s", st.message);
    store_close(s);
    json_decref(front);
    free(front_json);
    free(config);
    run_result r;
    char args[1024];
    snprintf(args, sizeof args, "runs show %lld --db '%s' --design 0 --layers", (long long)old, db);
    run(&r, args);
    assert_int_not_equal(r.status, 0);
    expect_in(r.err, "no layer mappings stored for model '" MODEL "'");
    assert_string_equal(r.out, "");
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_round_trip),
        cmocka_unit_test(test_text_form),
        cmocka_unit_test(test_plan_mappings),
        cmocka_unit_test_setup(test_search_stores_layers, setup_search),
        cmocka_unit_test_setup(test_search_stores_systolic_layers, setup_systolic_search),
        cmocka_unit_test(test_runs_show_layers),
        cmocka_unit_test(test_runs_show_layers_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
