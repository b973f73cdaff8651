/* test_timeloop_io.c -- map_timeloop_load on the 17 Timeloop reference
 * cases (checked against the numbers Timeloop itself printed, extracted
 * into tests/data/timeloop/<case>/expected.txt by
 * scripts/extract_timeloop.py) and on broken inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/mapping.h"

#include "text_file.h"

#define CASES_DIR AS_TEST_DATA_DIR "/timeloop"
#define TMP_INPUT AS_TEST_TMP_DIR "/tl_io_input.yaml"

/* Load case `name` (with its ERT and ART when with_tables) into *c. */
static as_code load_case(const char *name, bool with_tables, map_timeloop_case *c, as_status *st)
{
    char input[512], ert[512], art[512];
    snprintf(input, sizeof input, "%s/%s/model-input.yaml", CASES_DIR, name);
    snprintf(ert, sizeof ert, "%s/%s/ERT.yaml", CASES_DIR, name);
    snprintf(art, sizeof art, "%s/%s/ART.yaml", CASES_DIR, name);
    as_status_clear(st);
    return map_timeloop_load(input, with_tables ? ert : NULL, with_tables ? art : NULL, c, st);
}

/* Load a case that must load. */
static void must_load(const char *name, map_timeloop_case *c)
{
    as_status st;
    if (load_case(name, true, c, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
}

/* Index of the level called name, failing the test when absent. */
static int level_index(const map_timeloop_case *c, const char *name)
{
    for (int i = 0; i < c->arch.n_levels; i++)
        if (strcmp(c->arch.level[i].name, name) == 0)
            return i;
    fail_msg("no level %s", name);
    return -1;
}

/* The slot of the Timeloop dimension called name. */
static wl_dim slot_of(const map_timeloop_case *c, const char *name)
{
    for (int d = 0; d < WL_NDIMS; d++)
        if (strcmp(c->dim_names[d], name) == 0)
            return (wl_dim)d;
    fail_msg("no dimension %s", name);
    return WL_NDIMS;
}

static int dataspace_id(const char *name)
{
    static const char *const names[] = {"Weights", "Inputs", "Outputs"};
    for (int d = 0; d < WL_NDATASPACES; d++)
        if (strcmp(names[d], name) == 0)
            return d;
    fail_msg("no data space %s", name);
    return -1;
}

static void assert_close(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fmax(1.0, fabs(want)))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* Check the loaded case against the expected.txt Timeloop numbers: level
 * order and specs, ERT energies, which data spaces each level keeps, the
 * problem bounds, the MAC count and each network's fanout (= the spatial
 * factors mapped at its parent). */
static void check_against_expected(const char *name, const map_timeloop_case *c)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/%s/expected.txt", CASES_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    bool kept[ARCH_MAX_LEVELS][WL_NDATASPACES] = {{false}};
    int n_levels = 0;
    while (fgets(line, sizeof line, f)) {
        char a[128], b[128], ds[32];
        long long n1, n2, n3, n4, n5, n6, cycles, computes;
        double x1, x2, x3, x4;
        if (sscanf(line, "summary %lld %lld", &cycles, &computes) == 2) {
            assert_true(wl_problem_macs(&c->problem) == computes);
        } else if (sscanf(line, "mac %127s %lld %lld %lld %lf", a, &n1, &n2, &n3, &x1) == 5) {
            assert_string_equal(c->arch.compute.name, a);
            assert_int_equal(c->arch.compute.instances, n1);
            assert_int_equal(c->arch.compute.mac_bits, n3);
            assert_close(c->arch.compute.mac_pJ, x1);
        } else if (sscanf(line, "bound %127s %lld", a, &n1) == 2) {
            assert_int_equal(c->problem.bound[slot_of(c, a)], n1);
        } else if (sscanf(line, "level %127s %lld %lld %lld %lld %lld %lld %lf", a, &n1, &n2, &n3,
                          &n4, &n5, &n6, &x1) == 8) {
            const arch_level *level = &c->arch.level[n_levels];
            assert_string_equal(level->name, a);
            assert_int_equal(level->cls == ARCH_CLASS_DUMMY, n1);
            assert_int_equal(level->size_words, n2);
            assert_int_equal(level->word_bits, n3);
            assert_int_equal(level->block_size, n4);
            assert_int_equal(level->cluster_size, n5);
            assert_int_equal(level->instances, n6);
            assert_int_equal((int64_t)level->mesh_x * level->mesh_y, n6);
            assert_close(level->multiple_buffering, x1);
            n_levels++;
        } else if (sscanf(line, "ert %127s %lf %lf %lf %lf", a, &x1, &x2, &x3, &x4) == 5) {
            const arch_energy *e = &c->arch.level[level_index(c, a)].energy;
            assert_close(e->read_pJ, x1);
            assert_close(e->fill_pJ, x2);
            assert_close(e->update_pJ, x3);
            assert_close(e->leak_pJ, x4);
        } else if (sscanf(line, "ds %127s %31s", a, ds) == 2) {
            kept[level_index(c, a)][dataspace_id(ds)] = true;
        } else if (sscanf(line, "net %127s %127s %31s %lld", a, b, ds, &n1) == 4) {
            const map_level *parent = &c->mapping.level[level_index(c, a)];
            int64_t fanout = 1;
            for (int d = 0; d < WL_NDIMS; d++)
                fanout *= parent->spatial[d];
            assert_int_equal(fanout, n1);
        }
    }
    fclose(f);
    assert_int_equal(c->arch.n_levels, n_levels);
    assert_int_equal(c->mapping.n_levels, n_levels);
    for (int i = 0; i < n_levels; i++)
        for (int d = 0; d < WL_NDATASPACES; d++)
            if (c->mapping.level[i].keep[d] != kept[i][d])
                fail_msg("%s: level %s keeps %s: %d, Timeloop: %d", name, c->arch.level[i].name,
                         c->problem.ds[d].name, c->mapping.level[i].keep[d], kept[i][d]);
}

static void test_every_case_matches_timeloop(void **state)
{
    (void)state;
    DIR *dir = opendir(CASES_DIR);
    assert_non_null(dir);
    int cases = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        map_timeloop_case c;
        must_load(e->d_name, &c);
        check_against_expected(e->d_name, &c);
        cases++;
    }
    closedir(dir);
    assert_int_equal(cases, 17);
}

/* Eyeriss: names with ranges, meshes, a sliding-window problem with
 * strides, and a mapping with two spatial levels. */
static void test_eyeriss_spot_checks(void **state)
{
    (void)state;
    map_timeloop_case c;
    must_load("eyeriss_like__stem_conv3x3s2_c3m32_112", &c);
    const arch_spec *a = &c.arch;
    assert_string_equal(a->name, "system_top_level");
    assert_int_equal(a->technology_nm, 32);
    assert_close(a->cycle_seconds, 1e-9);
    assert_int_equal(a->n_levels, 7);
    static const char *const names[] = {
        "psum_spad",  "weights_spad", "ifmap_spad", "inter_PE_spatial", "inter_PE_column_spatial",
        "shared_glb", "DRAM"};
    for (int i = 0; i < 7; i++)
        assert_string_equal(a->level[i].name, names[i]);
    const arch_level *ifmap = &a->level[2], *pe = &a->level[3], *glb = &a->level[5];
    assert_int_equal(ifmap->cls, ARCH_CLASS_REGFILE);
    assert_int_equal(ifmap->instances, 168);
    assert_int_equal(ifmap->mesh_x, 14);
    assert_int_equal(ifmap->mesh_y, 12);
    assert_int_equal(ifmap->size_words, 12 * 2);
    assert_close(ifmap->read_bandwidth, 2);
    assert_int_equal(pe->cls, ARCH_CLASS_DUMMY);
    assert_int_equal(pe->instances, 14);
    assert_int_equal(glb->cls, ARCH_CLASS_SRAM);
    assert_int_equal(glb->size_words, 16384 * 8);
    assert_int_equal(glb->block_size, 8);
    assert_close(glb->write_bandwidth, 16);
    assert_close(glb->shared_bandwidth, 0);
    assert_int_equal(a->level[6].cls, ARCH_CLASS_DRAM);
    assert_int_equal(a->level[6].size_words, 0);
    assert_string_equal(a->dram.type, "LPDDR4");
    assert_int_equal(a->compute.instances, 168);
    assert_close(a->compute.mac_pJ, 0.207692);

    const wl_problem *p = &c.problem;
    assert_string_equal(c.problem_name, "conv2D");
    assert_int_equal(p->kind, WL_PROBLEM_CONV);
    assert_int_equal(p->bound[WL_DIM_C], 3);
    assert_int_equal(p->bound[WL_DIM_M], 32);
    assert_int_equal(p->bound[WL_DIM_P], 112);
    assert_int_equal(p->bound[WL_DIM_G], 1);
    assert_int_equal(p->stride[0], 2);
    assert_int_equal(p->stride[1], 2);
    assert_int_equal(p->dilation[1], 1);
    assert_int_equal(p->pad[1], 1);
    assert_string_equal(c.dim_names[WL_DIM_G], "");
    const wl_dataspace *in = &p->ds[WL_DS_INPUTS];
    assert_int_equal(in->n_ranks, 4);
    assert_int_equal(in->ranks[2].n_terms, 2);
    assert_int_equal(in->ranks[2].terms[0].dim, WL_DIM_R);
    assert_int_equal(in->ranks[2].terms[0].coef, 1);
    assert_int_equal(in->ranks[2].terms[1].dim, WL_DIM_P);
    assert_int_equal(in->ranks[2].terms[1].coef, 2);
    assert_true(p->ds[WL_DS_OUTPUTS].read_write);
    assert_false(p->ds[WL_DS_WEIGHTS].read_write);
    assert_int_equal(p->ds[WL_DS_WEIGHTS].bits, 8);
    assert_int_equal(p->ds[WL_DS_OUTPUTS].bits, 16); /* psum_spad's datawidth */
    assert_close(p->ds[WL_DS_INPUTS].density, 1.0);
    assert_int_equal(wl_dataspace_elements(p, WL_DS_INPUTS), 3 * 225 * 225);

    const map_mapping *m = &c.mapping;
    assert_int_equal(m->level[0].temporal[WL_DIM_M], 8);
    assert_int_equal(m->level[1].temporal[WL_DIM_R], 3);
    assert_int_equal(m->level[3].spatial[WL_DIM_C], 3);
    assert_int_equal(m->level[3].spatial[WL_DIM_S], 3);
    assert_int_equal(m->level[3].spatial_split, 0);
    assert_int_equal(m->level[3].spatial_order[0], WL_DIM_S);
    assert_int_equal(m->level[4].spatial[WL_DIM_Q], 14);
    assert_int_equal(m->level[4].spatial_split, 1);
    assert_int_equal(m->level[5].temporal[WL_DIM_P], 14);
    assert_int_equal(m->level[5].temporal[WL_DIM_Q], 4);
    /* DRAM permutation MQPCRSN, then the unused slot G. */
    static const wl_dim dram_order[] = {WL_DIM_M, WL_DIM_Q, WL_DIM_P, WL_DIM_C,
                                        WL_DIM_R, WL_DIM_S, WL_DIM_N, WL_DIM_G};
    for (int k = 0; k < WL_NDIMS; k++)
        assert_int_equal(m->level[6].temporal_order[k], dram_order[k]);
    assert_true(m->level[5].keep[WL_DS_INPUTS]);
    assert_false(m->level[5].keep[WL_DS_WEIGHTS]);
    for (int d = 0; d < WL_NDATASPACES; d++)
        assert_false(m->level[3].keep[d]);
}

/* Simba: "storage" with subclass, clusters, nine levels, ART areas. */
static void test_simba_spot_checks(void **state)
{
    (void)state;
    map_timeloop_case c;
    must_load("simba_like__stem_conv3x3s2_c3m32_112", &c);
    const arch_spec *a = &c.arch;
    assert_int_equal(a->n_levels, 9);
    assert_int_equal(a->technology_nm, 45);
    const arch_level *regs = &a->level[0];
    assert_string_equal(regs->name, "PEWeightRegs");
    assert_int_equal(regs->cls, ARCH_CLASS_REGFILE);
    assert_int_equal(regs->cluster_size, 64);
    assert_int_equal(regs->block_size, 1); /* width 512 / (8 bits x cluster of 64) */
    assert_close(regs->area_um2, 49.12418);
    const arch_level *glb = &a->level[level_index(&c, "GlobalBuffer")];
    assert_close(glb->area_um2, 199065.0625);
    assert_close(glb->energy.read_pJ, 51.870888);
    assert_close(glb->energy.fill_pJ, 66.310888);
    assert_close(a->level[level_index(&c, "inter_PE_spatial")].area_um2, 1.0);
    assert_close(a->compute.area_um2, 417.0);
    assert_int_equal(a->compute.mac_bits, 8);
    assert_int_equal(a->compute.mesh_x, 16);
    assert_close(a->dram.energy_pJ_per_bit, 512.0 / 64);
    const map_level *pe = &c.mapping.level[level_index(&c, "inter_PE_spatial")];
    assert_int_equal(pe->spatial[WL_DIM_C], 3);
    assert_int_equal(pe->spatial[WL_DIM_M], 4);
    assert_int_equal(pe->spatial_split, 2);
}

/* Micro cases: K as the M slot, "R=3,P=16" factors, levels without
 * directives, the `bypass` directive and defaults (keep, factor 1). */
static void test_micro_spot_checks(void **state)
{
    (void)state;
    map_timeloop_case c;
    must_load("micro_conv1d_1level", &c);
    assert_int_equal(c.arch.n_levels, 1);
    assert_int_equal(c.mapping.level[0].temporal[WL_DIM_R], 3);
    assert_int_equal(c.mapping.level[0].temporal[WL_DIM_P], 16);
    assert_int_equal(c.mapping.level[0].temporal_order[0], WL_DIM_R);
    assert_int_equal(c.mapping.level[0].temporal_order[1], WL_DIM_P);
    assert_int_equal(c.problem.bound[WL_DIM_C], 1);
    assert_int_equal(c.problem.stride[1], 1);
    assert_int_equal(c.problem.ds[WL_DS_INPUTS].ranks[0].n_terms, 2);

    must_load("micro_conv1d_oc_ic_3levelspatial_kp", &c);
    assert_string_equal(c.dim_names[WL_DIM_M], "K");
    assert_int_equal(c.problem.bound[WL_DIM_M], 32);
    int pe = level_index(&c, "inter_PE_spatial"), rf = level_index(&c, "RegisterFile");
    assert_int_equal(c.mapping.level[pe].spatial[WL_DIM_M], 16);
    assert_int_equal(c.mapping.level[pe].spatial_split, 4); /* no split: all on X */
    assert_int_equal(c.mapping.level[rf].temporal[WL_DIM_P], 16);
    assert_int_equal(c.arch.level[pe].instances, 1);
    assert_int_equal(c.arch.level[level_index(&c, "GlobalBuffer")].mesh_x, 16);

    must_load("micro_conv1d_oc_3level_bypass", &c);
    int glb = level_index(&c, "GlobalBuffer");
    rf = level_index(&c, "RegisterFile");
    assert_true(c.mapping.level[glb].keep[WL_DS_WEIGHTS]);
    assert_false(c.mapping.level[glb].keep[WL_DS_OUTPUTS]);
    assert_true(c.mapping.level[rf].keep[WL_DS_OUTPUTS]);
    assert_false(c.mapping.level[rf].keep[WL_DS_INPUTS]);
    assert_int_equal(c.mapping.level[rf].temporal[WL_DIM_M], 2);
}

/* Without ERT and ART, energies and areas come from accelsearch's
 * tables: positive for every real level, nothing for dummy containers
 * (which also refuse every data space). */
static void test_without_tables(void **state)
{
    (void)state;
    map_timeloop_case c;
    as_status st;
    assert_int_equal(load_case("simba_like__stem_conv3x3s2_c3m32_112", false, &c, &st), AS_OK);
    assert_int_equal(c.arch.n_levels, 9);
    for (int i = 0; i < c.arch.n_levels; i++) {
        const arch_level *level = &c.arch.level[i];
        bool dummy = level->cls == ARCH_CLASS_DUMMY;
        assert_int_equal(level->energy.read_pJ > 0, !dummy);
        assert_int_equal(level->area_um2 > 0, !dummy && level->cls != ARCH_CLASS_DRAM);
        for (int d = 0; d < WL_NDATASPACES; d++)
            assert_int_equal(level->constraints.keep[d] == ARCH_KEEP_NEVER, dummy);
    }
    assert_true(c.arch.compute.mac_pJ > 0);
    assert_true(c.arch.compute.area_um2 > 0);
    assert_true(c.arch.dram.energy_pJ_per_bit > 0);
}

/* ------------------------------------------------------------ bad input */

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

/* Copy the file at path to tmp_path (which may be the same file) with the
 * first occurrence of old replaced by new. */
static void write_variant(const char *path, const char *old, const char *new, const char *tmp_path)
{
    char *text = text_file(path);
    char *at = strstr(text, old);
    if (!at)
        fail_msg("'%s' not in %s", old, path);
    size_t head = (size_t)(at - text), old_n = strlen(old), new_n = strlen(new);
    char *out = malloc(strlen(text) - old_n + new_n + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, new, new_n);
    strcpy(out + head + new_n, at + old_n);
    write_text(tmp_path, out, strlen(out));
    free(out);
    free(text);
}

/* Check that st says "path:line: ...expect..." ("path: ..." when line is 0). */
static void check_message(const as_status *st, const char *path, int line, const char *expect)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, line ? "%s:%d:" : "%s:", path, line);
    if (strncmp(st->message, prefix, strlen(prefix)) != 0 || !strstr(st->message, expect))
        fail_msg("message '%s' lacks '%s' or '%s'", st->message, prefix, expect);
}

/* Load input (and ert) expecting failure code with the message
 * "path:line: ...expect..." ("path: ..." when line is 0). */
static void expect_failure(const char *input, const char *ert, as_code code, const char *path,
                           int line, const char *expect)
{
    map_timeloop_case c;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(map_timeloop_load(input, ert, NULL, &c, &st), code);
    check_message(&st, path, line, expect);
}

/* One broken model input: case, the text replaced, its replacement, and
 * the message after "path:": the line, then the words expected in it. */
typedef struct bad_input {
    const char *case_name, *old, *new;
    int line;
    const char *expect;
} bad_input;

#define MICRO "micro_conv1d_oc_3level_bypass"
#define EYERISS "eyeriss_like__stem_conv3x3s2_c3m32_112"

static const bad_input bad_inputs[] = {
    {MICRO, "problem:", "bogus: 1\nproblem:", 99, "unknown key 'bogus' in model input"},
    {MICRO, "depth: 32768", "depth: lots", 39, "depth: expected an integer, got 'lots'"},
    {MICRO, "depth: 32768", "depth: 0", 39, "depth: expected an integer from 1 to 2147483647"},
    {MICRO, "depth: 32768", "depth: 4294967296", 39, "depth: expected an integer from 1 to"},
    {MICRO, "depth: 32768", "depth: [1]", 39, "depth: expected an integer, got a sequence"},
    {MICRO, "n_banks: 2", "n_bank: 2", 19, "unknown key 'n_bank' in storage attributes"},
    {MICRO, "class: SRAM", "class: FRAM", 36, "unknown class 'FRAM'"},
    {MICRO, "GlobalBuffer[1..1]", "GlobalBuffer[1..", 36, "expected Name or Name[first..last]"},
    {MICRO, "target: RegisterFile", "target: Nowhere", 148, "target 'Nowhere' is not a storage"},
    {MICRO, "target: RegisterFile", "target: MACC", 148, "target 'MACC' is not a storage level"},
    {MICRO, "factors: R=3,P=1,K=2", "factors: R=3,P=1,X=2", 150, "'X' is not a dimension"},
    {MICRO, "factors: R=3,P=1,K=2", "factors: R=3,P=1,K=2.5", 150, "expected terms like 'C4'"},
    {MICRO, "factors: R=3,P=1,K=2", "factors: R=3,P=1,K=two", 150, "expected terms like 'C4'"},
    {MICRO, "factors: R=3,P=1,K=2", "factors: R=3,P=1,K=0", 150, "K must be at least 1"},
    {MICRO, "factors: R=3,P=1,K=2", "factors: R=3,P=1,K=4", 133,
     "the factors of K multiply to 64, the bound is 32"},
    {MICRO, "permutation: RPK", "permutation: RPX", 151, "'X' is not a dimension"},
    {MICRO, "permutation: RPK", "permutation: RPR", 151, "R is listed twice"},
    {MICRO, "type: temporal", "type: sideways", 134, "unknown directive type 'sideways'"},
    {MICRO, "type: temporal", "type: spatial", 133, "MainMemory has no spatial fanout"},
    {MICRO, "  - Outputs\n- target: RegisterFile", "  - Bias\n- target: RegisterFile", 147,
     "bypass: expected Weights, Inputs or Outputs"},
    {MICRO, "    K: 32", "    K: 0", 125, "K: expected an integer from 1 to"},
    {MICRO, "    K: 32", "    Z: 32", 125, "unknown key 'Z' in problem instance"},
    {MICRO, "    K: 32", "    K: 32\n    K: 32", 126, "duplicate key 'K'"},
    {MICRO, "    - - - P\n      read_write: true", "    - - - X\n      read_write: true", 121,
     "'X' is neither a dimension nor a coefficient"},
    {MICRO, "- name: Outputs", "- name: Psums", 118,
     "data space 'Psums': expected each of Weights, Inputs, Outputs once"},
    {MICRO, "meshX: 1", "meshX: 2", 25, "meshX 2 x meshY 1 is not the 1 instances"},
    {MICRO, "version: '0.4'", "version: '0.3'", 3, "version '0.3' is not supported"},
    {MICRO, "multiple_buffering: 1", "multiple_buffering: 0.5", 3,
     "architecture: level 'MainMemory': multiple_buffering = 0.5 must be at least 1"},
    {MICRO, "permutation: RPK", "permutation: [RPK", 152, "did not find expected"},
    {EYERISS, "  keep: []\n  bypass:\n  - Weights\n  - Inputs\n  - Outputs",
     "  keep: [Weights]\n  bypass:\n  - Inputs\n  - Outputs", 649,
     "inter_PE_spatial is a dummy container and cannot keep Weights"},
    {EYERISS, "split: 0", "split: many", 691, "split: expected an integer"},
    {EYERISS, "  - Inputs\n  - Outputs\n  bypass:\n  - Weights",
     "  - Inputs\n  - Outputs\n  bypass:\n  - Outputs", 667,
     "bypass: Outputs is listed twice for shared_glb"},
    {EYERISS, "datawidth: 8\n        read_bandwidth: 16",
     "datawidth: 24\n        read_bandwidth: 16", 39,
     "width 64 is not a multiple of datawidth 24 x cluster_size 1"},
    {EYERISS, "- target: DRAM\n  type: temporal", "- target: DRAM\n  type: temporal\n  split: 1",
     711, "unknown key 'split' in mapping directive"},
};

static void test_bad_model_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_inputs / sizeof bad_inputs[0]; i++) {
        const bad_input *b = &bad_inputs[i];
        char path[512];
        snprintf(path, sizeof path, "%s/%s/model-input.yaml", CASES_DIR, b->case_name);
        write_variant(path, b->old, b->new, TMP_INPUT);
        expect_failure(TMP_INPUT, NULL, AS_EINVAL, TMP_INPUT, b->line, b->expect);
    }
    /* 16 PEs cannot sit under 3 global buffers. */
    char kp[512];
    snprintf(kp, sizeof kp, "%s/micro_conv1d_oc_ic_3levelspatial_kp/model-input.yaml", CASES_DIR);
    write_variant(kp, "GlobalBuffer[1..16]", "GlobalBuffer[1..3]", TMP_INPUT);
    write_variant(TMP_INPUT, "meshX: 16", "meshX: 3", TMP_INPUT);
    expect_failure(TMP_INPUT, NULL, AS_EINVAL, TMP_INPUT, 3,
                   "level 'GlobalBuffer': instances = 3 must divide the 16");
    /* Missing and empty files. */
    expect_failure(AS_TEST_TMP_DIR "/no/input.yaml", NULL, AS_EIO, AS_TEST_TMP_DIR "/no/input.yaml",
                   0, "cannot open");
    write_text(TMP_INPUT, "", 0);
    expect_failure(TMP_INPUT, NULL, AS_EINVAL, TMP_INPUT, 0, "empty file");
}

/* The read action of the micro case's GlobalBuffer, and its update. */
#define GLB_READ                                                                                   \
    "          - name: read\n            arguments:\n                global_cycle_seconds: "       \
    "1e-09\n                action_latency_cycles: 1\n            energy: 43.353054\n"
#define GLB_UPDATE "          - name: update\n            arguments:\n"

/* Broken ERT files, derived from the micro case's; and one without an
 * update action, which then costs a write. */
static void test_bad_tables(void **state)
{
    (void)state;
    static const struct {
        const char *old, *new;
        int line;
        const char *expect;
    } cases[] = {
        {"System_top_level.GlobalBuffer[1..1]", "System_top_level.Nowhere[1..1]", 26,
         "table 'System_top_level.Nowhere[1..1]' names no component"},
        {"energy: 30.878292", "energy: -1", 32, "energy: expected a number >= 0, got '-1'"},
        {"energy: 30.878292", "energy: cheap", 32, "energy: expected a number, got 'cheap'"},
        {"- name: write", "- name: erase", 16, "ERT action 'erase' does not apply to a storage"},
        {"- name: compute", "- name: read", 72, "ERT action 'read' does not apply to an arith"},
        {"ERT:", "ETR:", 1, "unknown key 'ETR' in ERT file"},
        {"    tables:", "    tablets:", 3, "unknown key 'tablets' in ERT"},
        {GLB_READ, "", 26, "ERT table: a storage level needs read and write actions"},
    };
    const char *input = CASES_DIR "/" MICRO "/model-input.yaml";
    const char *source = CASES_DIR "/" MICRO "/ERT.yaml";
    const char *ert = AS_TEST_TMP_DIR "/tl_io_ERT.yaml";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_variant(source, cases[i].old, cases[i].new, ert);
        expect_failure(input, ert, AS_EINVAL, ert, cases[i].line, cases[i].expect);
    }
    const char *no_tables = "ERT:\n  version: '0.4'\n  tables: []\n";
    write_text(ert, no_tables, strlen(no_tables));
    expect_failure(input, ert, AS_EINVAL, ert, 3,
                   "no table for 'System_top_level.RegisterFile[1..1]'");
    expect_failure(input, AS_TEST_TMP_DIR "/no/ERT.yaml", AS_EIO, AS_TEST_TMP_DIR "/no/ERT.yaml", 0,
                   "cannot open");

    write_variant(source, "- name: update", "- name: leak_in_standby", ert);
    expect_failure(input, ert, AS_EINVAL, ert, 6, "ERT action 'leak_in_standby' does not apply");
    write_variant(source,
                  GLB_UPDATE "                global_cycle_seconds: 1e-09\n                "
                             "action_latency_cycles: 1\n            energy: 30.878292\n",
                  "", ert);
    map_timeloop_case c;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(map_timeloop_load(input, ert, NULL, &c, &st), AS_OK);
    const arch_energy *glb = &c.arch.level[level_index(&c, "GlobalBuffer")].energy;
    assert_close(glb->update_pJ, glb->fill_pJ);
    assert_close(glb->read_pJ, 43.353054);
    remove(ert);
}

/* Prefixes of a model input (every 7th) and single-byte corruptions of it
 * (every 3rd byte) load or fail cleanly naming the file; ASan watches for
 * crashes and leaks. */
static void test_truncated_and_corrupted(void **state)
{
    (void)state;
    char *text = text_file(CASES_DIR "/micro_conv1d_oc_ic_3levelspatial_cp/model-input.yaml");
    size_t n = strlen(text);
    map_timeloop_case c;
    as_status st;
    int failures = 0;
    for (size_t cut = 0; cut < n; cut += 7) {
        write_text(TMP_INPUT, text, cut);
        as_status_clear(&st);
        if (map_timeloop_load(TMP_INPUT, NULL, NULL, &c, &st) != AS_OK) {
            assert_int_equal(st.code, AS_EINVAL);
            assert_int_equal(strncmp(st.message, TMP_INPUT ":", strlen(TMP_INPUT) + 1), 0);
            failures++;
        }
    }
    assert_true(failures > (int)(n / 7) * 9 / 10);
    static const char noise[] = "x9-:[]{}'\"&* \n#";
    for (size_t pos = 0; pos < n; pos += 3) {
        char *copy = malloc(n);
        assert_non_null(copy);
        memcpy(copy, text, n);
        copy[pos] = noise[pos % (sizeof noise - 1)];
        write_text(TMP_INPUT, copy, n);
        as_status_clear(&st);
        if (map_timeloop_load(TMP_INPUT, NULL, NULL, &c, &st) != AS_OK) {
            assert_int_equal(st.code, AS_EINVAL);
            assert_int_equal(strncmp(st.message, TMP_INPUT ":", strlen(TMP_INPUT) + 1), 0);
        }
        free(copy);
    }
    free(text);
    remove(TMP_INPUT);
}

/* ---------------------------------------------------------- mapper input */

#define MAPPER_DIR AS_TEST_DATA_DIR "/timeloop_mapper"

static const char *const mapper_cases[] = {"eyeriss_like", "simba_like", "simple_output_stationary",
                                           "simple_weight_stationary"};

/* Load mapper case `name` with its ERT and ART. */
static as_code load_mapper_case(const char *name, map_mapper_case *c, as_status *st)
{
    char input[512], ert[512], art[512];
    snprintf(input, sizeof input, "%s/%s/mapper-input.yaml", MAPPER_DIR, name);
    snprintf(ert, sizeof ert, "%s/%s/ERT.yaml", MAPPER_DIR, name);
    snprintf(art, sizeof art, "%s/%s/ART.yaml", MAPPER_DIR, name);
    as_status_clear(st);
    return map_timeloop_load_mapper(input, ert, art, c, st);
}

/* The integer after `key` in the case's expected.txt. */
static int64_t expected_value(const char *name, const char *key)
{
    char path[512], line[256], word[64];
    long long value;
    snprintf(path, sizeof path, "%s/%s/expected.txt", MAPPER_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %lld", word, &value) == 2 && strcmp(word, key) == 0) {
            fclose(f);
            return value;
        }
    }
    fclose(f);
    fail_msg("%s: no %s", path, key);
    return -1;
}

/* All four load, with the settings their README states (random_pruned,
 * EDP, one thread, victory condition 0, their search sizes), Timeloop's
 * timeout of 100000 invalid mappings, and the layer's MAC count. */
static void test_mapper_inputs_load(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof mapper_cases / sizeof mapper_cases[0]; i++) {
        map_mapper_case c;
        as_status st;
        if (load_mapper_case(mapper_cases[i], &c, &st) != AS_OK)
            fail_msg("%s: %s", mapper_cases[i], st.message);
        const map_search_options *o = &c.options;
        assert_int_equal(o->algorithm, MAP_ALGO_RANDOM_PRUNED);
        assert_int_equal(o->objective.n_metrics, 1);
        assert_int_equal(o->objective.metric[0], MAP_METRIC_EDP);
        assert_int_equal(o->threads, 1);
        assert_int_equal(o->seed, 1);
        assert_int_equal(o->search_size, expected_value(mapper_cases[i], "search_size"));
        assert_int_equal(o->victory_condition, 0);
        assert_int_equal(o->consecutive_invalid_limit, 100000);
        assert_false(o->allow_padding);
        assert_int_equal(wl_problem_macs(&c.model.problem),
                         expected_value(mapper_cases[i], "macs"));
        assert_true(c.model.arch.level[0].energy.read_pJ > 0);
        /* The backing store is never constrained to bypass anything. */
        const arch_level *top = &c.model.arch.level[c.model.arch.n_levels - 1];
        for (int d = 0; d < WL_NDATASPACES; d++)
            assert_int_not_equal(top->constraints.keep[d], ARCH_KEEP_NEVER);
    }
}

/* Eyeriss: fixed spatial factors and split (999 = all on X), forced
 * keeps and bypasses, fixed unit temporal factors, free dimensions. */
static void test_mapper_eyeriss_constraints(void **state)
{
    (void)state;
    map_mapper_case c;
    as_status st;
    assert_int_equal(load_mapper_case("eyeriss_like", &c, &st), AS_OK);
    const map_timeloop_case *m = &c.model;
    const arch_constraints *dram = &m->arch.level[level_index(m, "DRAM")].constraints;
    assert_int_equal(dram->n_temporal_order, 1);
    assert_int_equal(dram->temporal_order[0], WL_DIM_N);
    for (int d = 0; d < WL_NDIMS; d++)
        assert_int_equal(dram->temporal_factor[d], 0);

    const arch_constraints *glb = &m->arch.level[level_index(m, "shared_glb")].constraints;
    assert_int_equal(glb->keep[WL_DS_WEIGHTS], ARCH_KEEP_NEVER);
    assert_int_equal(glb->keep[WL_DS_INPUTS], ARCH_KEEP_ALWAYS);
    assert_int_equal(glb->keep[WL_DS_OUTPUTS], ARCH_KEEP_ALWAYS);

    const arch_constraints *column =
        &m->arch.level[level_index(m, "inter_PE_column_spatial")].constraints;
    static const wl_dim column_order[] = {WL_DIM_N, WL_DIM_C, WL_DIM_P, WL_DIM_R,
                                          WL_DIM_S, WL_DIM_Q, WL_DIM_M, WL_DIM_G};
    assert_int_equal(column->n_spatial_order, 7);
    for (int k = 0; k < WL_NDIMS; k++)
        assert_int_equal(column->spatial_order[k], column_order[k]);
    assert_true(column->spatial_split_fixed);
    assert_int_equal(column->spatial_split, WL_NDIMS);
    assert_int_equal(column->spatial_factor[WL_DIM_C], 1);
    assert_int_equal(column->spatial_factor[WL_DIM_S], 1);
    assert_int_equal(column->spatial_factor[WL_DIM_Q], 0);
    assert_int_equal(column->spatial_factor[WL_DIM_M], 0);
    assert_int_equal(column->temporal_factor[WL_DIM_M], 1);
    for (int d = 0; d < WL_NDATASPACES; d++)
        assert_int_equal(column->keep[d], ARCH_KEEP_NEVER);

    const arch_constraints *pe = &m->arch.level[level_index(m, "inter_PE_spatial")].constraints;
    assert_true(pe->spatial_split_fixed);
    assert_int_equal(pe->spatial_split, 0);
    assert_int_equal(pe->spatial_factor[WL_DIM_C], 0);
    assert_int_equal(pe->spatial_factor[WL_DIM_Q], 1);

    const arch_constraints *weights = &m->arch.level[level_index(m, "weights_spad")].constraints;
    assert_int_equal(weights->temporal_factor[WL_DIM_M], 1);
    assert_int_equal(weights->temporal_factor[WL_DIM_C], 0);
    assert_int_equal(weights->temporal_factor[WL_DIM_R], 0);
    assert_int_equal(weights->keep[WL_DS_WEIGHTS], ARCH_KEEP_ALWAYS);
    assert_int_equal(weights->keep[WL_DS_INPUTS], ARCH_KEEP_NEVER);
    assert_false(weights->spatial_split_fixed);

    /* The unused mapping keeps what the constraints let each level keep;
     * precisions follow (psum_spad holds 16-bit outputs). */
    assert_false(m->mapping.level[level_index(m, "psum_spad")].keep[WL_DS_WEIGHTS]);
    assert_true(m->mapping.level[level_index(m, "psum_spad")].keep[WL_DS_OUTPUTS]);
    assert_int_equal(m->problem.ds[WL_DS_OUTPUTS].bits, 16);
    assert_int_equal(m->problem.ds[WL_DS_WEIGHTS].bits, 8);
}

/* A partial permutation fixes the innermost end only (simple OS pe_spad:
 * NRSPQ, then C and M free outside). */
static void test_mapper_partial_permutation(void **state)
{
    (void)state;
    map_mapper_case c;
    as_status st;
    assert_int_equal(load_mapper_case("simple_output_stationary", &c, &st), AS_OK);
    const map_timeloop_case *m = &c.model;
    const arch_constraints *spad = &m->arch.level[level_index(m, "pe_spad")].constraints;
    static const wl_dim fixed[] = {WL_DIM_N, WL_DIM_R, WL_DIM_S, WL_DIM_P, WL_DIM_Q};
    assert_int_equal(spad->n_temporal_order, 5);
    for (int k = 0; k < 5; k++)
        assert_int_equal(spad->temporal_order[k], fixed[k]);
    bool seen[WL_NDIMS] = {false};
    for (int k = 0; k < WL_NDIMS; k++)
        seen[spad->temporal_order[k]] = true;
    for (int d = 0; d < WL_NDIMS; d++)
        assert_true(seen[d]);
    const arch_constraints *pe = &m->arch.level[level_index(m, "inter_PE_spatial")].constraints;
    assert_int_equal(pe->spatial_split, 1);
    assert_int_equal(pe->spatial_order[0], WL_DIM_N);
}

/* Upper bounds ("C<=4"), the whole bound ("C=0"), factors above the bound
 * (cut to it), other algorithms and metrics, absent settings (Timeloop's
 * defaults). */
static void test_mapper_variants(void **state)
{
    (void)state;
    const char *input = MAPPER_DIR "/eyeriss_like/mapper-input.yaml";
    const char *tmp = AS_TEST_TMP_DIR "/tl_io_mapper.yaml";
    write_variant(input, "factors: N=1,M=1,P=1,Q=1,S=1", "factors: N=1,M<=4,P=0,Q=99,S=1", tmp);
    write_variant(tmp, "algorithm: random_pruned", "algorithm: linear_pruned", tmp);
    write_variant(tmp, "  - edp\n", "  - energy\n  - delay\n", tmp);
    write_variant(tmp, "  search_size: 3000\n  victory_condition: 0\n  timeout: 100000\n", "", tmp);
    map_mapper_case c;
    as_status st;
    as_status_clear(&st);
    if (map_timeloop_load_mapper(tmp, NULL, NULL, &c, &st) != AS_OK)
        fail_msg("%s", st.message);
    const arch_constraints *weights =
        &c.model.arch.level[level_index(&c.model, "weights_spad")].constraints;
    assert_int_equal(weights->temporal_factor[WL_DIM_M], 0);
    assert_int_equal(weights->temporal_max[WL_DIM_M], 4);
    assert_int_equal(weights->temporal_factor[WL_DIM_P], 56);
    assert_int_equal(weights->temporal_factor[WL_DIM_Q], 56);
    assert_int_equal(c.options.algorithm, MAP_ALGO_EXHAUSTIVE);
    assert_int_equal(c.options.objective.n_metrics, 2);
    assert_int_equal(c.options.objective.metric[0], MAP_METRIC_ENERGY);
    assert_int_equal(c.options.objective.metric[1], MAP_METRIC_CYCLES);
    assert_int_equal(c.options.search_size, 0);
    assert_int_equal(c.options.victory_condition, 500);
    assert_int_equal(c.options.consecutive_invalid_limit, 1000);
    remove(tmp);
}

#define EYERISS_MAPPER MAPPER_DIR "/eyeriss_like/mapper-input.yaml"

/* Broken mapper inputs (eyeriss_like's, with one edit): the message names
 * the file, the line and the key. */
static void test_bad_mapper_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *old, *new;
        int line;
        const char *expect;
    } cases[] = {
        {"    split: 999", "    splitt: 999", 203, "unknown key 'splitt' in constraint"},
        {"    split: 999", "    split: lots", 203, "split: expected an integer"},
        {"factors: N=1,C=1,P=1,R=1,S=1", "factors: N=1,C=1,P=1,R=1,S<=1", 201,
         "S<=1: upper bounds are for temporal constraints"},
        {"factors: N=1,C=1,P=1,R=1,S=1", "factors: N=1,C=1,P=1,R=1,X=1", 201,
         "'X' is not a dimension"},
        {"factors: N=1,C=1,P=1,R=1,S=1", "factors: N=1,C=1,P=1,R=1,R=2", 201, "R is given twice"},
        {"factors: N=1,M=1,P=1,Q=1,S=1", "factors: N=1,M<=0,P=1,Q=1,S=1", 249,
         "a bound must be at least 1"},
        {"permutation: NCPRSQM", "permutation: NCPRSQX", 202, "'X' is not a dimension"},
        {"permutation: NCPRSQM", "permutation: NCPRSQN", 202, "N is listed twice"},
        {"  - type: temporal\n    permutation: N\n    target: DRAM",
         "  - type: sometimes\n    permutation: N\n    target: DRAM", 187,
         "unknown directive type 'sometimes'"},
        {"    target: DRAM", "    target: SRAM", 189,
         "architecture_constraints: target 'SRAM' is not a storage level"},
        {"    target: DRAM", "    target: shared_glb", 197,
         "a second temporal directive for shared_glb"},
        {"  - keep:\n    - Inputs\n    - Outputs", "  - keep:\n    - Inputs\n    - Psums", 192,
         "keep: expected Weights, Inputs or Outputs"},
        {"    - Weights\n    - Inputs\n    - Outputs\n    type: bypass\n"
         "    target: inter_PE_column_spatial",
         "    - Weights\n    - Inputs\n    type: bypass\n    keep: [Outputs]\n"
         "    target: inter_PE_column_spatial",
         213, "inter_PE_column_spatial is a dummy container and cannot keep Outputs"},
        {"architecture_constraints:\n  targets:", "architecture_constraints:\n  target:", 186,
         "unknown key 'target' in architecture_constraints"},
        {"  algorithm: random_pruned", "  algorithm: annealing", 710,
         "algorithm: unknown 'annealing'"},
        {"  - edp\n", "  - area\n", 705, "optimization_metrics: unknown 'area'"},
        {"  - edp\n", "  - edp\n  - edp\n", 706, "'edp' is listed twice"},
        {"  search_size: 3000", "  search_size: -1", 707,
         "search_size: expected an integer from 0"},
        {"  num_threads: 1", "  num_threads: 0", 706, "num_threads: expected an integer from 1"},
        {"  out_prefix: timeloop-mapper", "  out_prefx: timeloop-mapper", 703,
         "unknown key 'out_prefx' in mapper"},
        {"  template: uber", "  template: ruby", 722, "template 'ruby' is not supported"},
        {"mapspace:", "mapspace_x:", 720, "unknown key 'mapspace_x' in mapper input"},
        {"mapper:\n  version", "mapperx:\n  version", 701, "unknown key 'mapperx' in mapper input"},
    };
    const char *tmp = AS_TEST_TMP_DIR "/tl_io_mapper.yaml";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        map_mapper_case c;
        as_status st;
        write_variant(EYERISS_MAPPER, cases[i].old, cases[i].new, tmp);
        as_status_clear(&st);
        assert_int_equal(map_timeloop_load_mapper(tmp, NULL, NULL, &c, &st), AS_EINVAL);
        check_message(&st, tmp, cases[i].line, cases[i].expect);
    }
    /* A model input is no mapper input, nor the reverse. */
    map_mapper_case c;
    as_status st;
    as_status_clear(&st);
    char model[512];
    snprintf(model, sizeof model, "%s/%s/model-input.yaml", CASES_DIR, EYERISS);
    assert_int_equal(map_timeloop_load_mapper(model, NULL, NULL, &c, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "unknown key 'mapping' in mapper input"));
    expect_failure(EYERISS_MAPPER, NULL, AS_EINVAL, EYERISS_MAPPER, 701,
                   "unknown key 'mapper' in model input");
    remove(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_matches_timeloop),
        cmocka_unit_test(test_eyeriss_spot_checks),
        cmocka_unit_test(test_simba_spot_checks),
        cmocka_unit_test(test_micro_spot_checks),
        cmocka_unit_test(test_without_tables),
        cmocka_unit_test(test_bad_model_inputs),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_truncated_and_corrupted),
        cmocka_unit_test(test_mapper_inputs_load),
        cmocka_unit_test(test_mapper_eyeriss_constraints),
        cmocka_unit_test(test_mapper_partial_permutation),
        cmocka_unit_test(test_mapper_variants),
        cmocka_unit_test(test_bad_mapper_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
