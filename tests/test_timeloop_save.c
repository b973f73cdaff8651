/* test_timeloop_save.c -- map_timeloop_save and map_timeloop_save_tables:
 * every Timeloop reference case, loaded, saved (input, ERT, ART) and
 * loaded again, is the same case bit for bit and evaluates to the same
 * numbers; what the format cannot say is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/mapping.h"

#define CASES_DIR AS_TEST_DATA_DIR "/timeloop"
#define SAVED_INPUT AS_TEST_TMP_DIR "/tl_save_input.yaml"
#define SAVED_ERT AS_TEST_TMP_DIR "/tl_save_ERT.yaml"
#define SAVED_ART AS_TEST_TMP_DIR "/tl_save_ART.yaml"

/* Load case `name` with its tables, failing the test when it does not load. */
static void load_case(const char *name, map_timeloop_case *c)
{
    char input[512], ert[512], art[512];
    as_status st;
    snprintf(input, sizeof input, "%s/%s/model-input.yaml", CASES_DIR, name);
    snprintf(ert, sizeof ert, "%s/%s/ERT.yaml", CASES_DIR, name);
    snprintf(art, sizeof art, "%s/%s/ART.yaml", CASES_DIR, name);
    as_status_clear(&st);
    if (map_timeloop_load(input, ert, art, c, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
}

/* Save c (input and tables) and load it back into *back. */
static void save_and_reload(const map_timeloop_case *c, map_timeloop_case *back)
{
    as_status st;
    as_status_clear(&st);
    if (map_timeloop_save(c, SAVED_INPUT, &st) != AS_OK ||
        map_timeloop_save_tables(c, SAVED_ERT, SAVED_ART, &st) != AS_OK)
        fail_msg("save: %s", st.message);
    if (map_timeloop_load(SAVED_INPUT, SAVED_ERT, SAVED_ART, back, &st) != AS_OK)
        fail_msg("reload: %s", st.message);
}

/* Name the first level whose spec differs, for a readable failure. */
static void explain_arch_difference(const char *name, const arch_spec *a, const arch_spec *b)
{
    for (int i = 0; i < a->n_levels; i++)
        if (memcmp(&a->level[i], &b->level[i], sizeof a->level[i]) != 0)
            fail_msg("%s: level %s differs after the round trip", name, a->level[i].name);
    fail_msg("%s: architecture (not its levels) differs after the round trip", name);
}

/* Both loads run the same code from a zeroed struct, so even padding
 * bytes agree: memcmp is a fair test of identity. */
static void check_round_trip(const char *name)
{
    static map_timeloop_case c, back; /* large: keep them off the stack */
    load_case(name, &c);
    save_and_reload(&c, &back);
    if (memcmp(&c.arch, &back.arch, sizeof c.arch) != 0)
        explain_arch_difference(name, &c.arch, &back.arch);
    if (memcmp(&c.problem, &back.problem, sizeof c.problem) != 0)
        fail_msg("%s: problem differs after the round trip", name);
    for (int i = 0; i < c.mapping.n_levels; i++)
        if (memcmp(&c.mapping.level[i], &back.mapping.level[i], sizeof c.mapping.level[i]) != 0)
            fail_msg("%s: mapping of %s differs after the round trip", name, c.arch.level[i].name);
    assert_int_equal(memcmp(&c.mapping, &back.mapping, sizeof c.mapping), 0);
    assert_int_equal(memcmp(c.dim_names, back.dim_names, sizeof c.dim_names), 0);
    assert_string_equal(c.problem_name, back.problem_name);

    static map_eval e, e_back;
    map_evaluate(&c.arch, &c.problem, &c.mapping, &e);
    map_evaluate(&back.arch, &back.problem, &back.mapping, &e_back);
    assert_int_equal(e.validity, MAP_VALID);
    assert_int_equal(e_back.cycles, e.cycles);
    assert_true(e_back.energy_pJ == e.energy_pJ);
    assert_int_equal(memcmp(&e, &e_back, sizeof e), 0);
}

static void test_every_case_round_trips(void **state)
{
    (void)state;
    DIR *dir = opendir(CASES_DIR);
    assert_non_null(dir);
    int cases = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (entry->d_name[0] == '.')
            continue;
        check_round_trip(entry->d_name);
        cases++;
    }
    closedir(dir);
    assert_int_equal(cases, 17);
    remove(SAVED_INPUT);
    remove(SAVED_ERT);
    remove(SAVED_ART);
}

/* A changed mapping is what gets written: moving Q's DRAM loop into the
 * global buffer reads back as such, and evaluates like the original
 * struct. */
static void test_saves_a_changed_mapping(void **state)
{
    (void)state;
    static map_timeloop_case c, back;
    load_case("simba_like__resnet50_conv2x_3x3_c64m64_56", &c);
    int dram = c.arch.n_levels - 1, glb = -1;
    for (int i = 0; i < c.arch.n_levels; i++)
        if (strcmp(c.arch.level[i].name, "GlobalBuffer") == 0)
            glb = i;
    assert_true(glb >= 0);
    int64_t q = c.mapping.level[dram].temporal[WL_DIM_Q];
    assert_true(q > 1);
    c.mapping.level[dram].temporal[WL_DIM_Q] = 1;
    c.mapping.level[glb].temporal[WL_DIM_Q] *= q;
    save_and_reload(&c, &back);
    assert_int_equal(back.mapping.level[dram].temporal[WL_DIM_Q], 1);
    assert_int_equal(back.mapping.level[glb].temporal[WL_DIM_Q],
                     c.mapping.level[glb].temporal[WL_DIM_Q]);
    static map_eval e, e_back;
    map_evaluate(&c.arch, &c.problem, &c.mapping, &e);
    map_evaluate(&back.arch, &back.problem, &back.mapping, &e_back);
    assert_int_equal(e.validity, e_back.validity);
    assert_true(e.energy_pJ == e_back.energy_pJ);
    assert_int_equal(e.cycles, e_back.cycles);
    remove(SAVED_INPUT);
    remove(SAVED_ERT);
    remove(SAVED_ART);
}

/* Refused: systolic compute, per-data-space capacities, names that are
 * not single letters, a dummy container keeping data; an unwritable path
 * is an I/O error. */
static void test_refuses_what_timeloop_cannot_say(void **state)
{
    (void)state;
    static map_timeloop_case c, bad;
    load_case("eyeriss_like__stem_conv3x3s2_c3m32_112", &c);
    as_status st;

    bad = c;
    bad.arch.compute.kind = ARCH_COMPUTE_SYSTOLIC;
    as_status_clear(&st);
    assert_int_equal(map_timeloop_save(&bad, SAVED_INPUT, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "is not independent MACs"));

    bad = c; /* a split between two data spaces; one part alone is a plain size */
    bad.arch.level[0].size_words_by_ds[WL_DS_OUTPUTS] = 4;
    bad.arch.level[0].size_words_by_ds[WL_DS_WEIGHTS] = 4;
    as_status_clear(&st);
    assert_int_equal(map_timeloop_save_tables(&bad, SAVED_ERT, NULL, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "capacity split per data space"));

    bad = c;
    strcpy(bad.dim_names[WL_DIM_C], "Cin");
    as_status_clear(&st);
    assert_int_equal(map_timeloop_save(&bad, SAVED_INPUT, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "'Cin' is not a single letter"));

    bad = c;
    bad.mapping.level[3].keep[WL_DS_WEIGHTS] = true; /* inter_PE_spatial */
    as_status_clear(&st);
    assert_int_equal(map_timeloop_save(&bad, SAVED_INPUT, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "is a dummy container and keeps Weights"));

    as_status_clear(&st);
    assert_int_equal(map_timeloop_save(&c, AS_TEST_TMP_DIR "/no/such/dir/in.yaml", &st), AS_EIO);
    assert_non_null(strstr(st.message, "cannot open for writing"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_round_trips),
        cmocka_unit_test(test_saves_a_changed_mapping),
        cmocka_unit_test(test_refuses_what_timeloop_cannot_say),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
