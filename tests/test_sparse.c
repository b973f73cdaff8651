/*
 * test_sparse.c -- Sparseloop-style sparse costing (src/mapping/sparse.c,
 * docs/sparse.md) and the architecture's sparse formats and zero handling
 * (arch.h; arch_yaml.c; arch_apply_data_format):
 *  - on every Timeloop reference case, a design that handles zeros sees
 *    density 1 exactly as the dense model does, and a dense design sees no
 *    change from any density (dense hardware gets no speedup);
 *  - a small GEMM on a two-level design, hand-worked from the formulas:
 *    bitmask and CSR metadata and footprints, the capacity check on the
 *    compressed tile, gated MAC energy, skipped cycles and accesses;
 *  - the YAML keys read back identical, and the strict reader refuses
 *    what it must;
 *  - every preset applies or refuses every named data format, with a
 *    reason;
 *  - ResNet-18 weight-pruned to density 0.1 on Eyeriss: "csr" is faster
 *    and moves fewer DRAM bytes than "dense", which costs exactly what the
 *    unpruned model costs.
 */
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

#include "test_check.h"

#define TIMELOOP_DIR AS_TEST_DATA_DIR "/timeloop/"

/* ------------------------------------------------- Timeloop references */

static void load_case(const char *id, map_timeloop_case *c)
{
    static const char *const file[3] = {"model-input.yaml", "ERT.yaml", "ART.yaml"};
    char path[3][512];
    as_status st = {0};
    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], TIMELOOP_DIR "%s/%s", id, file[i]);
    check(map_timeloop_load(path[0], path[1], path[2], c, &st), &st);
}

/* Every case of tests/data/timeloop, evaluated three ways: as given; on a
 * design whose MACs gate zero weights and inputs (the sparse path taken)
 * with every density 1; dense (no format, no zero handling) with weights
 * and inputs at density 0.3.  All three evaluations are the same bytes. */
static void test_references_unchanged(void **state)
{
    (void)state;
    DIR *dir = opendir(TIMELOOP_DIR);
    assert_non_null(dir);
    int cases = 0;
    map_timeloop_case *c = malloc(sizeof *c);
    map_eval *dense = malloc(sizeof *dense), *other = malloc(sizeof *other);
    assert_true(c && dense && other);
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (entry->d_name[0] == '.')
            continue;
        load_case(entry->d_name, c);
        map_evaluate(&c->arch, &c->problem, &c->mapping, dense);
        assert_int_equal(dense->validity, MAP_VALID);

        arch_spec gating = c->arch;
        gating.compute.zero_action = ARCH_ZERO_GATE;
        gating.compute.zero_operand[WL_DS_WEIGHTS] = gating.compute.zero_operand[WL_DS_INPUTS] =
            true;
        as_status st = {0};
        check(arch_validate(&gating, &st), &st);
        assert_true(arch_is_sparse(&gating));
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            c->problem.ds[ds].density = 1.0;
        map_evaluate(&gating, &c->problem, &c->mapping, other);
        if (memcmp(dense, other, sizeof *dense) != 0)
            fail_msg("%s: gating at density 1 differs from the dense evaluation", entry->d_name);

        assert_false(arch_is_sparse(&c->arch));
        c->problem.ds[WL_DS_WEIGHTS].density = c->problem.ds[WL_DS_INPUTS].density = 0.3;
        map_evaluate(&c->arch, &c->problem, &c->mapping, other);
        if (memcmp(dense, other, sizeof *dense) != 0)
            fail_msg("%s: a dense design changed with the density", entry->d_name);
        cases++;
    }
    closedir(dir);
    assert_true(cases >= 17);
    free(c);
    free(dense);
    free(other);
}

/* A Timeloop input cannot carry formats or zero handling: writing one of
 * a sparse design is refused, naming the design. */
static void test_timeloop_save_refuses_sparse(void **state)
{
    (void)state;
    map_timeloop_case *c = malloc(sizeof *c);
    assert_non_null(c);
    load_case("micro_conv1d_2level_ws", c);
    as_status st = {0};
    const char *path = AS_TEST_TMP_DIR "/sparse_timeloop.yaml";
    check(map_timeloop_save(c, path, &st), &st);
    c->arch.level[c->arch.n_levels - 1].format[WL_DS_WEIGHTS].format = ARCH_FORMAT_BITMASK;
    assert_int_equal(map_timeloop_save(c, path, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "compressed"));
    remove(path);
    free(c);
}

/* --------------------------------------------------- a hand-worked GEMM */

/*
 * The design: one MAC under a register file "Buffer" (8-bit words, one
 * word per access, `buffer_words` of them) under DRAM (8-bit words),
 * energies from the tables.  The problem: a GEMM Outputs[P][M] +=
 * Inputs[P][C] x Weights[C][M] with P = 2, C = 8, M = 4: 64 MACs, 32
 * weights, 16 inputs, 8 outputs.  The mapping runs every loop at the
 * Buffer, which keeps everything: the MAC reads a weight and an input
 * and updates an output per MAC (64 each), the Buffer is filled once
 * from DRAM.
 */
static void gemm_design(arch_spec *a, int64_t buffer_words)
{
    arch_begin(a, "gemm2", 45, 1e9);
    arch_add_level(a, (arch_level){.name = "Buffer",
                                   .cls = ARCH_CLASS_REGFILE,
                                   .word_bits = 8,
                                   .block_size = 1,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words = buffer_words});
    arch_add_dram(a, "LPDDR4", 1, 16, 64, 8);
    arch_finish(a, (arch_compute){.name = "MAC",
                                  .kind = ARCH_COMPUTE_MAC,
                                  .mesh_x = 1,
                                  .mesh_y = 1,
                                  .rows = 1,
                                  .cols = 1,
                                  .mac_bits = 8});
}

static void rank(wl_dataspace *ds, wl_dim d)
{
    wl_proj_rank *r = &ds->ranks[ds->n_ranks++];
    r->n_terms = 1;
    r->terms[0] = (wl_proj_term){d, 1};
}

static void gemm_problem(wl_problem *p, double weight_density)
{
    memset(p, 0, sizeof *p);
    p->kind = WL_PROBLEM_MATMUL;
    for (int d = 0; d < WL_NDIMS; d++)
        p->bound[d] = 1;
    p->bound[WL_DIM_P] = 2, p->bound[WL_DIM_C] = 8, p->bound[WL_DIM_M] = 4;
    p->stride[0] = p->stride[1] = p->dilation[0] = p->dilation[1] = 1;
    static const char *const names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        p->ds[ds].name = names[ds];
        p->ds[ds].bits = 8;
        p->ds[ds].density = 1.0;
        p->ds[ds].tensor = -1;
    }
    rank(&p->ds[WL_DS_WEIGHTS], WL_DIM_C), rank(&p->ds[WL_DS_WEIGHTS], WL_DIM_M);
    rank(&p->ds[WL_DS_INPUTS], WL_DIM_P), rank(&p->ds[WL_DS_INPUTS], WL_DIM_C);
    rank(&p->ds[WL_DS_OUTPUTS], WL_DIM_P), rank(&p->ds[WL_DS_OUTPUTS], WL_DIM_M);
    p->ds[WL_DS_OUTPUTS].read_write = true;
    p->ds[WL_DS_WEIGHTS].density = weight_density;
}

static void gemm_mapping(const wl_problem *p, map_mapping *m)
{
    memset(m, 0, sizeof *m);
    m->n_levels = 2;
    for (int l = 0; l < 2; l++)
        for (int d = 0; d < WL_NDIMS; d++) {
            m->level[l].temporal[d] = l == 0 ? p->bound[d] : 1;
            m->level[l].spatial[d] = 1;
            m->level[l].temporal_order[d] = m->level[l].spatial_order[d] = (uint8_t)d;
        }
    for (int l = 0; l < 2; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            m->level[l].keep[ds] = true;
}

/* Weights in `format` at both levels, the MACs doing `action` on zero
 * weights. */
static void make_sparse(arch_spec *a, arch_format format, arch_zero_action action)
{
    for (int l = 0; l < a->n_levels; l++)
        a->level[l].format[WL_DS_WEIGHTS] = (arch_ds_format){.format = format};
    a->compute.zero_action = action;
    a->compute.zero_operand[WL_DS_WEIGHTS] = true;
    as_status st = {0};
    check(arch_validate(a, &st), &st);
}

static void evaluate_gemm(const arch_spec *a, double weight_density, map_eval *e)
{
    wl_problem p;
    map_mapping m;
    gemm_problem(&p, weight_density);
    gemm_mapping(&p, &m);
    map_evaluate(a, &p, &m, e);
}

/* The dense counts the sparse cases scale (Timeloop's model). */
static void test_gemm_dense(void **state)
{
    (void)state;
    arch_spec a;
    map_eval e;
    gemm_design(&a, 64);
    evaluate_gemm(&a, 0.25, &e); /* a dense design ignores the density */
    assert_int_equal(e.validity, MAP_VALID);
    const map_ds_stats *w = &e.level[0].ds[WL_DS_WEIGHTS];
    assert_int_equal(w->reads, 64);
    assert_int_equal(w->fills, 32);
    assert_int_equal(w->tile_words, 32);
    assert_int_equal(e.level[0].ds[WL_DS_INPUTS].reads, 64);
    assert_int_equal(e.level[0].ds[WL_DS_OUTPUTS].updates, 64);
    assert_int_equal(e.level[0].ds[WL_DS_OUTPUTS].reads, 56); /* the first update reads nothing */
    assert_int_equal(e.level[1].ds[WL_DS_WEIGHTS].reads, 32);
    assert_int_equal(e.compute_cycles, 64);
    assert_close(e.mac_energy_pJ, 64 * a.compute.mac_pJ);
    /* 32 + 16 + 8 words do not fit a Buffer of 40. */
    gemm_design(&a, 40);
    evaluate_gemm(&a, 0.25, &e);
    assert_int_equal(e.validity, MAP_INVALID_CAPACITY);
}

/*
 * Bitmask weights (density d = 0.25) at both levels, MACs gating zero
 * weights.  A tile of T = 32 weights carries T = 32 metadata bits = 4
 * words of 8 bits, i.e. 4 / 32 = 0.125 metadata words per dense word:
 *   Buffer weight reads  64 x 0.25 + 64 x 0.125 = 16 + 8 = 24 (8 metadata)
 *   Buffer weight fills  32 x 0.25 + 32 x 0.125 =  8 + 4 = 12
 *   DRAM weight reads    32 x 0.25 + 32 x 0.125 = 12
 *   footprint            0.25 x 32 + 32 / 8      = 12 words,
 * so the tiles, 12 + 16 + 8 = 36 words, fit the Buffer of 40 that the
 * dense 56 did not.  Gating: the MAC is effectual with probability
 * d = 0.25 (only weights are checked): MAC energy 64 x 0.25 x mac_pJ
 * (gated MACs free), or with a gated fraction of 0.1,
 * 64 x (0.25 + 0.1 x 0.75) x mac_pJ; the cycles stay 64; the Buffer's
 * input reads and output reads and updates keep their counts but only
 * 0.25 of their energy.
 */
static void test_gemm_bitmask_gating(void **state)
{
    (void)state;
    arch_spec a;
    map_eval e;
    gemm_design(&a, 40);
    make_sparse(&a, ARCH_FORMAT_BITMASK, ARCH_ZERO_GATE);
    evaluate_gemm(&a, 0.25, &e);
    assert_int_equal(e.validity, MAP_VALID);
    const map_ds_stats *w = &e.level[0].ds[WL_DS_WEIGHTS];
    assert_int_equal(w->reads, 24);
    assert_int_equal(w->fills, 12);
    assert_int_equal(w->metadata_words, 8 + 4);
    assert_int_equal(w->tile_words, 12);
    assert_int_equal(e.level[1].ds[WL_DS_WEIGHTS].reads, 12);
    assert_int_equal(e.level[1].ds[WL_DS_WEIGHTS].metadata_words, 4);
    /* Uncompressed data spaces move every word. */
    assert_int_equal(e.level[0].ds[WL_DS_INPUTS].reads, 64);
    assert_int_equal(e.level[0].ds[WL_DS_OUTPUTS].updates, 64);
    assert_int_equal(e.compute_cycles, 64);
    assert_close(e.mac_energy_pJ, 64 * 0.25 * a.compute.mac_pJ);
    /* The Buffer's weight energy: 24 reads and 12 fills, one word each. */
    const arch_energy *E = &a.level[0].energy;
    assert_close(w->energy_pJ, 24 * E->read_pJ + 12 * E->fill_pJ);
    /* The gated MACs' input reads and output updates (and the reads
     * before them) cost nothing: 0.25 of 64 input reads, plus the 16
     * fills; 0.25 of 56 output reads and 64 updates. */
    assert_close(e.level[0].ds[WL_DS_INPUTS].energy_pJ, 64 * 0.25 * E->read_pJ + 16 * E->fill_pJ);
    assert_close(e.level[0].ds[WL_DS_OUTPUTS].energy_pJ,
                 (56 * E->read_pJ + 64 * E->update_pJ) * 0.25);

    a.compute.gated_mac_fraction = 0.1;
    evaluate_gemm(&a, 0.25, &e);
    assert_close(e.mac_energy_pJ, 64 * (0.25 + 0.1 * 0.75) * a.compute.mac_pJ);
}

/*
 * CSR weights (d = 0.25) at both levels, MACs skipping zero weights.  The
 * tile [C = 8][M = 4] is 8 rows of 4: offsets of ceil(log2(32 + 1)) = 6
 * bits, coordinates of ceil(log2 4) = 2 bits, 8 expected non-zeros:
 *   metadata   (8 + 1) x 6 + 8 x 2 = 70 bits = 8.75 words
 *   footprint  ceil(0.25 x 32 + 8.75) = 17 words
 *   Buffer weight reads  64 x 0.25 + round(64 x 70 / (32 x 8)) = 16 + 18 = 34
 *     (17.5 metadata words, rounded half away from zero)
 * Skipping issues 64 x 0.25 = 16 MACs: 16 cycles, 16 x mac_pJ, and only
 * their input reads (16) and output updates (16; reads 56 x 0.25 = 14).
 */
static void test_gemm_csr_skipping(void **state)
{
    (void)state;
    arch_spec a;
    map_eval e;
    gemm_design(&a, 64);
    make_sparse(&a, ARCH_FORMAT_CSR, ARCH_ZERO_SKIP);
    evaluate_gemm(&a, 0.25, &e);
    assert_int_equal(e.validity, MAP_VALID);
    const map_ds_stats *w = &e.level[0].ds[WL_DS_WEIGHTS];
    assert_int_equal(w->tile_words, 17);
    assert_int_equal(w->reads, 34);
    assert_int_equal(e.compute_cycles, 16);
    assert_int_equal(e.cycles >= 16, true);
    assert_close(e.mac_energy_pJ, 16 * a.compute.mac_pJ);
    assert_int_equal(e.level[0].ds[WL_DS_INPUTS].reads, 16);
    assert_int_equal(e.level[0].ds[WL_DS_OUTPUTS].updates, 16);
    assert_int_equal(e.level[0].ds[WL_DS_OUTPUTS].reads, 14);
    /* 17 + 16 + 8 = 41 words: one more than a Buffer of 40 holds. */
    gemm_design(&a, 40);
    make_sparse(&a, ARCH_FORMAT_CSR, ARCH_ZERO_SKIP);
    evaluate_gemm(&a, 0.25, &e);
    assert_int_equal(e.validity, MAP_INVALID_CAPACITY);
}

/* Skipping MACs fed their weights uncompressed (the Buffer keeps them
 * dense) are an invalid design; a mapping that bypasses the Buffer for
 * weights is fed them from DRAM and must find them compressed there. */
static void test_skipping_needs_compression(void **state)
{
    (void)state;
    arch_spec a;
    as_status st = {0};
    gemm_design(&a, 64);
    a.level[1].format[WL_DS_WEIGHTS].format = ARCH_FORMAT_CSR;
    a.compute.zero_action = ARCH_ZERO_SKIP;
    a.compute.zero_operand[WL_DS_WEIGHTS] = true;
    assert_int_equal(arch_validate(&a, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "Buffer"));

    a.level[0].format[WL_DS_WEIGHTS].format = ARCH_FORMAT_CSR;
    a.level[1].format[WL_DS_WEIGHTS].format = ARCH_FORMAT_UNCOMPRESSED;
    check(arch_validate(&a, &st), &st);
    wl_problem p;
    map_mapping m;
    map_eval e;
    gemm_problem(&p, 0.25);
    gemm_mapping(&p, &m);
    m.level[0].keep[WL_DS_WEIGHTS] = false;
    map_evaluate(&a, &p, &m, &e);
    assert_int_equal(e.validity, MAP_INVALID_KEEP);
    assert_non_null(strstr(e.reason, "uncompressed"));
}

/* Footprints of the other formats on the same tile (d = 0.25, 8-bit
 * words): rle 8 non-zeros x 5 bits = 40 bits = 5 words -> 8 + 5 = 13;
 * coo 8 x (ceil(log2 8) + ceil(log2 4)) = 8 x 5 = 40 bits -> 13; rle with
 * 4-bit runs: 32 bits -> 12; uncompressed: 32. */
static void test_format_footprints(void **state)
{
    (void)state;
    const int64_t span[2] = {8, 4};
    arch_ds_format f = {.format = ARCH_FORMAT_RLE};
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 13);
    f.metadata_bits = 4;
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 12);
    f = (arch_ds_format){.format = ARCH_FORMAT_COO};
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 13);
    f = (arch_ds_format){.format = ARCH_FORMAT_BITMASK};
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 12);
    f = (arch_ds_format){.format = ARCH_FORMAT_CSR, .metadata_bits = 4, .offset_bits = 8};
    /* (8 + 1) x 8 + 8 x 4 = 104 bits = 13 words -> 21 */
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 21);
    f = (arch_ds_format){.format = ARCH_FORMAT_UNCOMPRESSED};
    assert_int_equal(map_sparse_tile_words(&f, 8, span, 2, 0.25), 32);
}

/* A whole weight tensor [8][4] of 8-bit elements at density 0.25 as the
 * network and fusion layers count it: in a bitmask DRAM 8 non-zeros x 8
 * bits + 32 bitmask bits = 96 bits = 12 bytes (32 dense); at a bitmask
 * Buffer of 8-bit words 8 + 4 = 12 words (32 uncompressed). */
static void test_weight_tensor_sizes(void **state)
{
    (void)state;
    wl_tensor t;
    memset(&t, 0, sizeof t);
    t.kind = WL_TENSOR_WEIGHT;
    t.shape_known = true;
    t.rank = 2, t.dims[0] = 8, t.dims[1] = 4;
    t.bits = 8;
    t.density = 0.25;
    arch_spec a;
    gemm_design(&a, 64);
    assert_int_equal(map_sparse_weight_dram_bytes(&a, &t), 32);
    assert_int_equal(map_sparse_weight_words(&a.level[0], &t), 32);
    make_sparse(&a, ARCH_FORMAT_BITMASK, ARCH_ZERO_GATE);
    assert_int_equal(map_sparse_weight_dram_bytes(&a, &t), 12);
    assert_int_equal(map_sparse_weight_words(&a.level[0], &t), 12);
    assert_int_equal(map_sparse_weight_words(NULL, &t), 32);
}

/* ---------------------------------------------------------------- YAML */

static void same_sparse_fields(const arch_spec *w, const arch_spec *g)
{
    assert_int_equal(w->n_levels, g->n_levels);
    for (int l = 0; l < w->n_levels; l++)
        assert_memory_equal(w->level[l].format, g->level[l].format, sizeof w->level[l].format);
    assert_int_equal(w->compute.zero_action, g->compute.zero_action);
    assert_memory_equal(w->compute.zero_operand, g->compute.zero_operand,
                        sizeof w->compute.zero_operand);
    assert_memory_equal(&w->compute.gated_mac_fraction, &g->compute.gated_mac_fraction,
                        sizeof(double));
}

/* Every new key, written by arch_save, reads back to the same fields. */
static void test_yaml_round_trip(void **state)
{
    (void)state;
    arch_spec a, back;
    as_status st = {0};
    check(arch_load("eyeriss", &a, &st), &st);
    check(arch_apply_data_format(&a, "bitmask", &st), &st);
    a.compute.zero_operand[WL_DS_INPUTS] = true;
    a.compute.gated_mac_fraction = 0.125;
    int gb = a.n_levels - 2, dram = a.n_levels - 1;
    a.level[gb].format[WL_DS_INPUTS] = (arch_ds_format){ARCH_FORMAT_RLE, 4, 0};
    a.level[dram].format[WL_DS_WEIGHTS] = (arch_ds_format){ARCH_FORMAT_CSR, 6, 20};
    a.level[dram].format[WL_DS_INPUTS] = (arch_ds_format){ARCH_FORMAT_COO, 0, 0};
    check(arch_validate(&a, &st), &st);
    const char *path = AS_TEST_TMP_DIR "/sparse_round_trip.yaml";
    check(arch_save(&a, path, &st), &st);
    memset(&back, 0, sizeof back);
    check(arch_load(path, &back, &st), &st);
    same_sparse_fields(&a, &back);

    check(arch_load("simba", &a, &st), &st);
    check(arch_apply_data_format(&a, "csr", &st), &st);
    check(arch_save(&a, path, &st), &st);
    check(arch_load(path, &back, &st), &st);
    same_sparse_fields(&a, &back);
    remove(path);
}

/* Write text to a file and load it: the code, the message in st. */
static as_code load_text(const char *text, arch_spec *a, as_status *st)
{
    const char *path = AS_TEST_TMP_DIR "/sparse_bad.yaml";
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    fclose(out);
    as_code code = arch_load(path, a, st);
    remove(path);
    return code;
}

#define DESIGN_HEAD                                                                                \
    "name: t\ntechnology_nm: 45\nclock_MHz: 1000\n"                                                \
    "compute: {kind: mac, mac_bits: 8%s}\n"                                                        \
    "levels:\n"                                                                                    \
    "  - {name: Buf, kind: regfile, size: 64 words%s}\n"                                           \
    "  - {name: DRAM, kind: dram, type: LPDDR4%s}\n"

/* The reader's refusals name the key; the good spelling loads. */
static void test_yaml_errors(void **state)
{
    (void)state;
    static const struct {
        const char *compute, *buf, *dram, *needle;
    } cases[] = {
        {"", ", formats: {weights: zip}", "", "formats.weights"},
        {"", ", formats: {bias: csr}", "", "bias"},
        {"", ", formats: {weights: {format: csr, colour: 1}}", "", "colour"},
        {"", ", formats: {weights: {format: csr, metadata_bits: 99}}", "", "metadata_bits"},
        {"", ", formats: {weights: {format: bitmask, metadata_bits: 4}}", "", "metadata_bits"},
        {"", ", formats: {weights: {format: rle, offset_bits: 4}}", "", "offset_bits"},
        {", zero_handling: {action: skip, operands: [weights]}", "", "", "Buf"},
        {", zero_handling: {action: gate}", "", "", "operands"},
        {", zero_handling: {action: gate, operands: [outputs]}", "", "", "outputs"},
        {", zero_handling: {action: hop, operands: [weights]}", "", "", "action"},
        {", zero_handling: {action: skip, operands: [weights], gated_mac_fraction: 0.5}",
         ", formats: {weights: csr}", "", "gated_mac_fraction"},
        {", zero_handling: {action: gate, operands: [weights], gated_mac_fraction: 2}", "", "",
         "gated_mac_fraction"},
    };
    char text[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arch_spec a;
        as_status st = {0};
        snprintf(text, sizeof text, DESIGN_HEAD, cases[i].compute, cases[i].buf, cases[i].dram);
        if (load_text(text, &a, &st) == AS_OK)
            fail_msg("case %zu loaded:\n%s", i, text);
        if (!strstr(st.message, cases[i].needle))
            fail_msg("case %zu: '%s' does not name %s", i, st.message, cases[i].needle);
    }
    arch_spec a;
    as_status st = {0};
    snprintf(text, sizeof text, DESIGN_HEAD,
             ", zero_handling: {action: skip, operands: [weights, inputs]}",
             ", formats: {weights: csr, inputs: {format: rle, metadata_bits: 3}}",
             ", formats: {weights: bitmask}");
    check(load_text(text, &a, &st), &st);
    assert_int_equal(a.level[0].format[WL_DS_WEIGHTS].format, ARCH_FORMAT_CSR);
    assert_int_equal(a.level[0].format[WL_DS_INPUTS].metadata_bits, 3);
    assert_int_equal(a.level[1].format[WL_DS_WEIGHTS].format, ARCH_FORMAT_BITMASK);
    assert_int_equal(a.compute.zero_action, ARCH_ZERO_SKIP);
    assert_true(a.compute.zero_operand[WL_DS_INPUTS]);
}

/* --------------------------------------------------------- data formats */

/* Every preset applies or refuses every named format, with a reason; a
 * systolic array refuses csr (it cannot skip) and takes bitmask; an
 * unknown name lists the valid ones. */
static void test_data_formats_on_presets(void **state)
{
    (void)state;
    int n_presets, n_formats;
    const arch_preset *presets = arch_presets(&n_presets);
    const char *const *formats = arch_data_format_names(&n_formats);
    assert_int_equal(n_formats, 4);
    for (int i = 0; i < n_presets; i++)
        for (int f = 0; f < n_formats; f++) {
            arch_spec a, before;
            as_status st = {0};
            check(arch_load(presets[i].name, &a, &st), &st);
            before = a;
            bool systolic = a.compute.kind == ARCH_COMPUTE_SYSTOLIC;
            as_code code = arch_apply_data_format(&a, formats[f], &st);
            if (code != AS_OK) {
                assert_true(systolic && strcmp(formats[f], "csr") == 0);
                assert_non_null(strstr(st.message, "cannot skip"));
                assert_memory_equal(&a, &before, sizeof a); /* refused: untouched */
                continue;
            }
            check(arch_validate(&a, &st), &st);
            assert_int_equal(arch_is_sparse(&a), strcmp(formats[f], "dense") != 0);
            int dram = a.n_levels - 1;
            if (strcmp(formats[f], "dense") == 0)
                assert_memory_equal(&a, &before, sizeof a);
            else if (strcmp(formats[f], "rle") == 0) {
                assert_int_equal(a.level[dram].format[WL_DS_WEIGHTS].format, ARCH_FORMAT_RLE);
                for (int l = 0; l < dram; l++)
                    assert_int_equal(a.level[l].format[WL_DS_WEIGHTS].format,
                                     ARCH_FORMAT_UNCOMPRESSED);
                assert_int_equal(a.compute.zero_action, ARCH_ZERO_GATE);
            } else {
                bool csr = strcmp(formats[f], "csr") == 0;
                assert_false(systolic && csr);
                for (int l = 0; l < a.n_levels; l++)
                    assert_int_equal(a.level[l].format[WL_DS_WEIGHTS].format,
                                     !arch_level_can_hold(&a.level[l], WL_DS_WEIGHTS) ? 0
                                     : csr ? ARCH_FORMAT_CSR
                                           : ARCH_FORMAT_BITMASK);
                assert_int_equal(a.compute.zero_action, csr ? ARCH_ZERO_SKIP : ARCH_ZERO_GATE);
            }
        }
    arch_spec a;
    as_status st = {0};
    check(arch_load("eyeriss", &a, &st), &st);
    assert_int_equal(arch_apply_data_format(&a, "zip", &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "dense, bitmask, rle, csr"));
}

/* ------------------------------------------------------------- network */

static void network(const char *preset, const char *format, double density, map_network_result *r)
{
    as_status st = {0};
    wl_graph *g = NULL;
    arch_spec a;
    check(wl_zoo_build("resnet18", &g, &st), &st);
    check(arch_load(preset, &a, &st), &st);
    wl_set_precision(g, WL_PREC_INT8); /* Eyeriss's 16-bit integer MACs run it natively */
    if (density < 1)
        check(wl_prune_unstructured(g, NULL, density, &st), &st);
    check(arch_apply_data_format(&a, format, &st), &st);
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = 2;
    o.budget_per_problem = 2000;
    check(map_network_evaluate(g, &a, &o, r, &st), &st);
    wl_graph_free(g);
}

/* ResNet-18 at weight density 0.1 on Eyeriss: "dense" hardware costs
 * exactly the unpruned model; "csr" is faster and moves fewer DRAM
 * bytes (the weights compressed, zero-weight MACs skipped). */
static void test_resnet18_pruned(void **state)
{
    (void)state;
    map_network_result unpruned, dense, csr;
    network("eyeriss", "dense", 1.0, &unpruned);
    network("eyeriss", "dense", 0.1, &dense);
    network("eyeriss", "csr", 0.1, &csr);
    assert_int_equal(dense.cycles, unpruned.cycles);
    assert_int_equal(dense.dram_bytes, unpruned.dram_bytes);
    assert_memory_equal(&dense.energy_pJ, &unpruned.energy_pJ, sizeof(double));
    assert_true(csr.cycles < dense.cycles);
    assert_true(csr.latency_s < dense.latency_s);
    assert_true(csr.dram_bytes < dense.dram_bytes);
    assert_true(csr.energy_pJ < dense.energy_pJ);
    map_network_free(&unpruned);
    map_network_free(&dense);
    map_network_free(&csr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_references_unchanged),
        cmocka_unit_test(test_timeloop_save_refuses_sparse),
        cmocka_unit_test(test_gemm_dense),
        cmocka_unit_test(test_gemm_bitmask_gating),
        cmocka_unit_test(test_gemm_csr_skipping),
        cmocka_unit_test(test_skipping_needs_compression),
        cmocka_unit_test(test_format_footprints),
        cmocka_unit_test(test_weight_tensor_sizes),
        cmocka_unit_test(test_yaml_round_trip),
        cmocka_unit_test(test_yaml_errors),
        cmocka_unit_test(test_data_formats_on_presets),
        cmocka_unit_test(test_resnet18_pruned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
