/*
 * test_layer_cost.c -- mapping.h's one mapping cache: a network evaluated
 * through a cache gives, layer by layer, exactly what it gives without
 * one, searches nothing the second time, and the cache keys designs (an
 * architecture that differs only in its name shares entries, one with
 * another buffer does not).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "mapping/mapping.h"

#define TEST_BUDGET 500

static void evaluate(const wl_graph *g, const arch_spec *a, map_cache *cache, map_network_result *r)
{
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = 1;
    o.budget_per_problem = TEST_BUDGET;
    o.cache = cache;
    as_status st = {0};
    if (map_network_evaluate(g, a, &o, r, &st) != AS_OK)
        fail_msg("%s", st.message);
}

static void assert_same_layers(const map_network_result *x, const map_network_result *y)
{
    assert_int_equal(x->n_layers, y->n_layers);
    for (int32_t i = 0; i < x->n_layers; i++) {
        assert_int_equal(x->layers[i].cycles, y->layers[i].cycles);
        assert_true(x->layers[i].energy_pJ == y->layers[i].energy_pJ);
        assert_int_equal(x->layers[i].dram_bytes, y->layers[i].dram_bytes);
        assert_memory_equal(&x->layers[i].mapping, &y->layers[i].mapping,
                            sizeof x->layers[i].mapping);
    }
    assert_int_equal(x->cycles, y->cycles);
    assert_true(x->energy_pJ == y->energy_pJ);
}

static void test_cache_changes_no_result(void **state)
{
    (void)state;
    as_status st = {0};
    wl_graph *g = NULL;
    arch_spec a;
    if (wl_zoo_build("resnet18", &g, &st) != AS_OK || arch_load("eyeriss", &a, &st) != AS_OK)
        fail_msg("%s", st.message);
    map_cache *cache;
    assert_int_equal(map_cache_new(&cache, &st), AS_OK);

    map_network_result plain, first, again, renamed;
    evaluate(g, &a, NULL, &plain);
    evaluate(g, &a, cache, &first);
    int64_t hits, entries;
    map_cache_stats(cache, &hits, &entries);
    assert_int_equal(hits, 0);
    assert_int_equal(entries, first.n_distinct_problems);
    assert_same_layers(&plain, &first);

    evaluate(g, &a, cache, &again);
    map_cache_stats(cache, &hits, &entries);
    assert_int_equal(hits, first.n_distinct_problems);
    assert_same_layers(&plain, &again);

    arch_spec b = a;
    strcpy(b.name, "another name");
    evaluate(g, &b, cache, &renamed);
    map_cache_stats(cache, &hits, &entries);
    assert_int_equal(hits, 2 * first.n_distinct_problems);
    assert_same_layers(&plain, &renamed);

    /* Another design: its own entries. */
    map_layer_key k1, k2;
    memset(&k1, 0, sizeof k1);
    memset(&k2, 0, sizeof k2);
    map_search_options so;
    map_search_options_default(&so);
    map_layer_key_design(&a, &so, TEST_BUDGET, &k1);
    b = a;
    b.level[0].size_words++;
    map_layer_key_design(&b, &so, TEST_BUDGET, &k2);
    assert_true(memcmp(k1.design, k2.design, sizeof k1.design) != 0);
    assert_null(map_cache_find(cache, &k2));

    map_network_free(&plain);
    map_network_free(&first);
    map_network_free(&again);
    map_network_free(&renamed);
    map_cache_free(cache);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_changes_no_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
