/*
 * test_mapper_cases.c -- the mapper on Timeloop's four mapper cases
 * (tests/data/timeloop_mapper/<case>: mapper input with its architecture
 * constraints, ERT, ART; expected.txt holds Timeloop's best).  With the
 * same constraints and energy tables, the heuristic search must find a
 * mapping whose EDP is at most Timeloop's best within EVALUATIONS_MAX
 * mappings; the mapping must honour every constraint the loader read and
 * re-evaluate to the same numbers.  Time is a benchmark's business, not a
 * test's: bench_search prints the seconds (the limit is 2 s on one
 * core; EVALUATIONS_MAX is what one core evaluates in well under that, at
 * the ~240,000 evaluations per second bench_eval measures).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "mapping/mapping.h"
#include "mapper_check.h"

#define MAPPER_DIR AS_TEST_DATA_DIR "/timeloop_mapper/"
#define EVALUATIONS_MAX 400000

/* The number after `key` in the case's expected.txt. */
static double expected(const char *name, const char *key)
{
    char path[512], line[256], word[64];
    double value;
    snprintf(path, sizeof path, MAPPER_DIR "%s/expected.txt", name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %lf", word, &value) == 2 && !strcmp(word, key)) {
            fclose(f);
            return value;
        }
    fclose(f);
    fail_msg("%s: no %s", path, key);
    return 0;
}

static void check_case(const char *name)
{
    char input[512], ert[512], art[512];
    snprintf(input, sizeof input, MAPPER_DIR "%s/mapper-input.yaml", name);
    snprintf(ert, sizeof ert, MAPPER_DIR "%s/ERT.yaml", name);
    snprintf(art, sizeof art, MAPPER_DIR "%s/ART.yaml", name);
    static map_mapper_case c;
    as_status st = {0};
    if (map_timeloop_load_mapper(input, ert, art, &c, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);

    /* The case's settings, but our heuristic and its own stopping rule. */
    map_search_options o = c.options;
    o.algorithm = MAP_ALGO_HEURISTIC;
    o.threads = 1;
    o.search_size = o.victory_condition = 0;
    map_search *s;
    if (map_search_init(&s, &c.model.arch, &c.model.problem, &o, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
    while (map_search_step(s, 50000))
        ;
    static map_eval e, again;
    map_mapping m;
    wl_problem mapped;
    assert_true(map_search_best(s, &m, &e, &mapped));
    double timeloop = expected(name, "best_edp_J_cycle");
    int64_t evaluated = map_search_evaluated(s);
    print_message("%-26s EDP %9.2f vs Timeloop %9.2f (%.3f), %lld evaluated\n", name, e.edp_J_cycle,
                  timeloop, e.edp_J_cycle / timeloop, (long long)evaluated);
    map_search_free(s);

    assert_true(e.edp_J_cycle <= timeloop);
    assert_true(evaluated <= EVALUATIONS_MAX);
    assert_memory_equal(mapped.bound, c.model.problem.bound,
                        sizeof mapped.bound); /* no padding asked */
    assert_true(e.macs == (int64_t)expected(name, "macs"));
    assert_honours(&c.model.arch, &m);
    map_evaluate(&c.model.arch, &c.model.problem, &m, &again);
    assert_int_equal(again.validity, MAP_VALID);
    assert_true(again.edp_J_cycle == e.edp_J_cycle && again.cycles == e.cycles);
}

#define CASE(id)                                                                                   \
    static void test_##id(void **state)                                                            \
    {                                                                                              \
        (void)state;                                                                               \
        check_case(#id);                                                                           \
    }
CASE(eyeriss_like)
CASE(simba_like)
CASE(simple_output_stationary)
CASE(simple_weight_stationary)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eyeriss_like),
        cmocka_unit_test(test_simba_like),
        cmocka_unit_test(test_simple_output_stationary),
        cmocka_unit_test(test_simple_weight_stationary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
