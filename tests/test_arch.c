/* test_arch.c -- presets, technology tables, node scaling, area, peak power
 * and validation of architectures.
 *
 * Expected numbers are restated from the publications (paper figures,
 * Horowitz's table, Stillmaker & Baas's coefficients), not read back from
 * the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "arch/arch.h"

#define KiB 1024
#define MiB (1024 * 1024)

/* The preset called name, built; fails the test when absent. */
static arch_spec build(const char *name)
{
    const arch_preset *p = arch_preset_find(name);
    assert_non_null(p);
    arch_spec a;
    p->build(&a);
    return a;
}

/* Index of the level called name in a; fails the test when absent. */
static int level_index(const arch_spec *a, const char *name)
{
    for (int i = 0; i < a->n_levels; i++)
        if (strcmp(a->level[i].name, name) == 0)
            return i;
    fail_msg("%s has no level '%s'", a->name, name);
    return -1;
}

static void assert_near(double got, double want, double rel_tol)
{
    if (!(fabs(got - want) <= rel_tol * fabs(want)))
        fail_msg("got %.9g, want %.9g (relative tolerance %g)", got, want, rel_tol);
}

/* ------------------------------------------------------------ presets */

static void test_every_preset_validates(void **state)
{
    (void)state;
    int n = 0;
    const arch_preset *presets = arch_presets(&n);
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++) {
        assert_true(presets[i].description[0] && presets[i].source[0]);
        assert_ptr_equal(arch_preset_find(presets[i].name), &presets[i]);
        arch_spec a;
        presets[i].build(&a);
        as_status st;
        as_status_clear(&st);
        if (arch_validate(&a, &st) != AS_OK)
            fail_msg("preset %s: %s", presets[i].name, st.message);
        assert_string_equal(a.name, presets[i].name);
        assert_true(a.level[a.n_levels - 1].cls == ARCH_CLASS_DRAM);
        /* Every on-chip energy and area came from the tables. */
        assert_true(a.compute.mac_pJ > 0 && a.compute.area_um2 > 0);
        for (int l = 0; l < a.n_levels - 1; l++)
            assert_true(a.level[l].energy.read_pJ > 0 && a.level[l].area_um2 > 0);
    }
    assert_null(arch_preset_find("tpu-v9"));
    assert_null(arch_preset_find(NULL));
}

/* Per preset: node, clock, MAC units, array shape; published figures. */
static const struct {
    const char *preset;
    int node_nm;
    double clock_hz;
    int64_t macs;   /* MAC units in the design */
    int rows, cols; /* of one compute instance */
    arch_compute_kind kind;
} PRESET_SHAPES[] = {
    {"eyeriss", 65, 200e6, 12 * 14, 1, 1, ARCH_COMPUTE_MAC},
    {"shidiannao", 65, 1e9, 8 * 8, 1, 1, ARCH_COMPUTE_MAC},
    {"edgetpu", 28, 500e6, 16 * 4 * 64, 64, 1, ARCH_COMPUTE_VECTOR},
    {"tpu_v3", 16, 940e6, 4 * 128 * 128, 128, 128, ARCH_COMPUTE_SYSTOLIC}, /* 2 cores */
    {"gemmini", 22, 1e9, 16 * 16, 16, 16, ARCH_COMPUTE_SYSTOLIC},
    {"vta", 28, 100e6, 16 * 16, 1, 1, ARCH_COMPUTE_MAC},
    {"simba", 16, 1.8e9, 16 * 8 * 8, 8, 1, ARCH_COMPUTE_VECTOR},
};

/* Per preset buffer: bytes of one instance (for one data space, or all
 * when ds is -1) and the number of instances. */
static const struct {
    const char *preset, *level;
    int ds;
    int64_t bytes;
    int64_t instances;
} PRESET_BUFFERS[] = {
    {"eyeriss", "psum_spad", WL_DS_OUTPUTS, 24 * 2, 168},
    {"eyeriss", "weights_spad", WL_DS_WEIGHTS, 224 * 2, 168},
    {"eyeriss", "ifmap_spad", WL_DS_INPUTS, 12 * 2, 168},
    {"eyeriss", "GlobalBuffer", -1, 108 * KiB, 1},
    {"shidiannao", "NB", WL_DS_WEIGHTS, 128 * KiB, 1},
    {"shidiannao", "NB", WL_DS_INPUTS, 64 * KiB, 1},
    {"shidiannao", "NB", WL_DS_OUTPUTS, 64 * KiB, 1},
    {"edgetpu", "CoreMemory", -1, 32 * KiB, 64},
    {"edgetpu", "PEMemory", -1, 512 * KiB, 16},
    {"tpu_v3", "VectorMemory", -1, 16 * MiB, 2}, /* one per core */
    {"gemmini", "Scratchpad", -1, 256 * KiB, 1},
    {"gemmini", "Accumulator", WL_DS_OUTPUTS, 64 * KiB, 1},
    {"vta", "InpBuffer", WL_DS_INPUTS, 32 * KiB, 1},
    {"vta", "WgtBuffer", WL_DS_WEIGHTS, 256 * KiB, 1},
    {"vta", "AccBuffer", WL_DS_OUTPUTS, 128 * KiB, 1},
    {"simba", "PEWeightBuffer", WL_DS_WEIGHTS, 32 * KiB, 16},
    {"simba", "PEInputBuffer", WL_DS_INPUTS, 8 * KiB, 16},
    {"simba", "PEAccuBuffer", WL_DS_OUTPUTS, 3 * KiB, 16},
    {"simba", "GlobalBuffer", -1, 64 * KiB, 1},
};

static void test_preset_key_numbers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof PRESET_SHAPES / sizeof PRESET_SHAPES[0]; i++) {
        arch_spec a = build(PRESET_SHAPES[i].preset);
        const arch_compute *c = &a.compute;
        assert_int_equal(a.technology_nm, PRESET_SHAPES[i].node_nm);
        assert_near(1 / a.cycle_seconds, PRESET_SHAPES[i].clock_hz, 1e-12);
        assert_int_equal(c->kind, PRESET_SHAPES[i].kind);
        assert_int_equal(c->rows, PRESET_SHAPES[i].rows);
        assert_int_equal(c->cols, PRESET_SHAPES[i].cols);
        assert_int_equal(c->instances * c->rows * c->cols, PRESET_SHAPES[i].macs);
    }
    for (size_t i = 0; i < sizeof PRESET_BUFFERS / sizeof PRESET_BUFFERS[0]; i++) {
        arch_spec a = build(PRESET_BUFFERS[i].preset);
        const arch_level *l = &a.level[level_index(&a, PRESET_BUFFERS[i].level)];
        int ds = PRESET_BUFFERS[i].ds;
        int64_t words = ds < 0 ? l->size_words : l->size_words_by_ds[ds];
        assert_int_equal(words * l->word_bits / 8, PRESET_BUFFERS[i].bytes);
        assert_int_equal(l->instances, PRESET_BUFFERS[i].instances);
    }
    /* Published peak throughputs, 2 ops per MAC: Coral 4 TOPS; TPU v3
     * 123 TFLOPS per chip of 2 cores; Simba 128 TOPS over 36 chiplets. */
    struct {
        const char *preset;
        double ops_per_s, copies;
    } peaks[] = {{"edgetpu", 4e12, 1}, {"tpu_v3", 123e12, 1}, {"simba", 128e12, 36}};
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
        arch_spec a = build(peaks[i].preset);
        double macs = (double)a.compute.instances * a.compute.rows * a.compute.cols;
        assert_near(2 * macs / a.cycle_seconds * peaks[i].copies, peaks[i].ops_per_s, 0.05);
    }
    arch_spec tpu = build("tpu_v3");
    assert_string_equal(tpu.dram.type, "HBM2");
    assert_int_equal(tpu.compute.mac_number, ARCH_NUMBER_BF16);
    assert_int_equal(tpu.compute.dataflow, ARCH_DATAFLOW_WS);
    assert_near(tpu.dram.bandwidth_GBps, 900, 1e-12); /* per chip */
    assert_int_equal(tpu.native_batch, 2 * 64);       /* FAST's batch, Table 4 */
}

/* The precision each preset's MACs take as they are: int8 for the int8
 * designs, bf16 for the TPU, fp16 for the 16-bit fixed-point ones (the
 * closest storage precision of that width), fp32 above 16 bits. */
static void test_mac_precision(void **state)
{
    (void)state;
    static const struct {
        const char *preset;
        wl_precision precision;
    } cases[] = {{"edgetpu", WL_PREC_INT8}, {"gemmini", WL_PREC_INT8}, {"simba", WL_PREC_INT8},
                 {"vta", WL_PREC_INT8},     {"tpu_v3", WL_PREC_BF16},  {"eyeriss", WL_PREC_FP16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arch_spec a = build(cases[i].preset);
        assert_int_equal(arch_mac_precision(&a), cases[i].precision);
    }
    arch_spec a = build("eyeriss");
    a.compute.mac_bits = 32;
    assert_int_equal(arch_mac_precision(&a), WL_PREC_FP32);
}

static void test_fanout(void **state)
{
    (void)state;
    arch_spec a = build("eyeriss");
    assert_int_equal(arch_fanout(&a, 0), 1); /* psum spad -> its MAC */
    assert_int_equal(arch_fanout(&a, level_index(&a, "GlobalBuffer")), 168);
    assert_int_equal(arch_fanout(&a, level_index(&a, "DRAM")), 1);
    assert_int_equal(arch_fanout(&a, -1), 0);
    assert_int_equal(arch_fanout(&a, a.n_levels), 0);
    arch_spec simba = build("simba");
    /* 8 vector MACs per PE x 8 lanes each, the lanes along X. */
    assert_int_equal(arch_fanout(&simba, 0), 64);
    int64_t x, y;
    arch_fanout_xy(&simba, 0, &x, &y);
    assert_int_equal(x, 64);
    assert_int_equal(y, 1);
    assert_int_equal(arch_compute_mesh_x(&simba), 32 * 8);
    arch_fanout_xy(&a, level_index(&a, "GlobalBuffer"), &x, &y);
    assert_int_equal(x * y, 168);
    assert_int_equal(arch_fanout(&simba, level_index(&simba, "GlobalBuffer")), 16);
    /* Hops are costed exactly where a level feeds several children. */
    for (int i = 0; i < a.n_levels; i++)
        assert_true((a.level[i].hop_pJ > 0) == (arch_fanout(&a, i) > 1));
}

/* ------------------------------------------------------------- tables */

/* The published 45 nm anchors come back exactly. */
static void test_published_anchors(void **state)
{
    (void)state;
    /* Horowitz ISSCC 2014: MAC = multiplier + accumulator adder. */
    assert_near(arch_mac_pJ(8, false, 45), 0.2 + 0.1, 1e-12); /* int8 x, int32 + */
    assert_near(arch_mac_pJ(32, true, 45), 3.7 + 0.9, 1e-12); /* fp32 x, fp32 + */
    assert_near(arch_mac_pJ(16, true, 45), 1.1 + 0.9, 1e-12); /* fp16 x, fp32 + */
    assert_near(arch_mac_area_um2(8, false, 45), 282 + 137, 1e-12);
    assert_near(arch_mac_area_um2(32, true, 45), 7700 + 4184, 1e-12);
    /* Horowitz: 64-bit SRAM accesses 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ;
     * a 32-bit read of 8 KB 5 pJ. */
    assert_near(arch_sram_access_pJ(8 * KiB, 64, 45), 10, 1e-12);
    assert_near(arch_sram_access_pJ(32 * KiB, 64, 45), 20, 1e-12);
    assert_near(arch_sram_access_pJ(1 * MiB, 64, 45), 100, 1e-12);
    assert_near(arch_sram_access_pJ(8 * KiB, 32, 45), 5, 1e-12);
    /* Eyeriss (ISCA 2016): a 0.5 KB register file access = one 16-bit MAC. */
    assert_near(arch_regfile_access_pJ(512, 16, 45), arch_mac_pJ(16, false, 45), 1e-12);
    assert_near(arch_dram_pJ_per_bit("LPDDR4"), 8.0, 0);
    assert_near(arch_dram_pJ_per_bit("hbm2"), 3.9, 0);
    assert_true(arch_dram_pJ_per_bit("SDRAM9") < 0);
    assert_true(arch_dram_pJ_per_bit(NULL) < 0);
    /* Formats the tables do not cover are negative, not invented. */
    assert_true(arch_mac_number_pJ(12, ARCH_NUMBER_FP, 45) < 0);
    assert_true(arch_mac_number_pJ(8, ARCH_NUMBER_BF16, 45) < 0);
    assert_true(arch_mac_number_area_um2(0, ARCH_NUMBER_INT, 45) < 0);
}

/* Against an independent tool: Accelergy's estimates for the 45 nm
 * reference designs (tests/data/timeloop, simple_weight_stationary
 * ERT/ART): an 8-bit MAC 0.315 pJ and 417 um^2, a 16384 x 64-bit SRAM
 * (CACTI) 32.38 pJ per read.  Tolerances: 5 % for the MAC (both rest on
 * Horowitz's figures), 25 % for the SRAM (a power-law fit through three
 * points against CACTI's full model). */
static void test_tables_agree_with_accelergy(void **state)
{
    (void)state;
    assert_near(arch_mac_pJ(8, false, 45), 0.315, 0.05);
    assert_near(arch_mac_area_um2(8, false, 45), 417, 0.05);
    assert_near(arch_sram_access_pJ(16384 * 8, 64, 45), 32.38, 0.25);
}

static void test_tables_are_monotonic(void **state)
{
    (void)state;
    /* Bigger storage costs more per access and more area; wider too. */
    for (int64_t bytes = 16; bytes < 64 * MiB; bytes *= 2) {
        assert_true(arch_sram_access_pJ(bytes * 2, 64, 28) > arch_sram_access_pJ(bytes, 64, 28));
        assert_true(arch_regfile_access_pJ(bytes * 2, 16, 28) >
                    arch_regfile_access_pJ(bytes, 16, 28));
        assert_true(arch_sram_area_um2(bytes * 2, 64, 28) > arch_sram_area_um2(bytes, 64, 28));
        assert_true(arch_regfile_area_um2(bytes * 2, 16, 28) >
                    arch_regfile_area_um2(bytes, 16, 28));
        assert_true(arch_sram_access_pJ(bytes, 128, 28) > arch_sram_access_pJ(bytes, 64, 28));
        assert_true(arch_regfile_access_pJ(bytes, 32, 28) > arch_regfile_access_pJ(bytes, 16, 28));
    }
    /* Wider MACs cost more: int4 < int8 < int16 < int32, and
     * fp8 < bf16 < fp16 < fp32 < fp64, int16 < fp16. */
    struct {
        int bits;
        arch_number number;
    } order[][5] = {
        {{4, ARCH_NUMBER_INT}, {8, ARCH_NUMBER_INT}, {16, ARCH_NUMBER_INT}, {32, ARCH_NUMBER_INT}},
        {{8, ARCH_NUMBER_FP},
         {16, ARCH_NUMBER_BF16},
         {16, ARCH_NUMBER_FP},
         {32, ARCH_NUMBER_FP},
         {64, ARCH_NUMBER_FP}},
        {{16, ARCH_NUMBER_INT}, {16, ARCH_NUMBER_FP}},
    };
    for (size_t r = 0; r < sizeof order / sizeof order[0]; r++)
        for (int k = 1; k < 5 && order[r][k].bits; k++) {
            assert_true(arch_mac_number_pJ(order[r][k].bits, order[r][k].number, 16) >
                        arch_mac_number_pJ(order[r][k - 1].bits, order[r][k - 1].number, 16));
            assert_true(arch_mac_number_area_um2(order[r][k].bits, order[r][k].number, 16) >
                        arch_mac_number_area_um2(order[r][k - 1].bits, order[r][k - 1].number, 16));
        }
    /* A smaller node costs less, in energy and in area. */
    const int nodes[] = {130, 90, 65, 45, 32, 28, 22, 20, 16, 14, 10, 7};
    for (size_t i = 1; i < sizeof nodes / sizeof nodes[0]; i++) {
        int big = nodes[i - 1], small = nodes[i];
        assert_true(arch_node_energy_scale(small) < arch_node_energy_scale(big));
        assert_true(arch_node_area_scale(small) < arch_node_area_scale(big));
        assert_true(arch_mac_pJ(8, false, small) < arch_mac_pJ(8, false, big));
        assert_true(arch_sram_access_pJ(64 * KiB, 64, small) <
                    arch_sram_access_pJ(64 * KiB, 64, big));
        assert_true(arch_wire_pJ_per_bit_mm(small) < arch_wire_pJ_per_bit_mm(big));
    }
    /* DRAM per bit: HBM2 < LPDDR4 < GDDR5 < DDR4 < DDR3. */
    const char *dram[] = {"HBM2", "LPDDR4", "GDDR5", "DDR4", "DDR3"};
    for (int i = 1; i < 5; i++)
        assert_true(arch_dram_pJ_per_bit(dram[i]) > arch_dram_pJ_per_bit(dram[i - 1]));
}

/* Stillmaker & Baas 2017, restated: energy polynomial of a node at V. */
static double stillmaker_energy(int nm, double v)
{
    static const struct {
        int nm;
        double a, b, c;
    } rows[] = {
        {7, 0.1776, -0.09097, 0.02447}, {16, 0.2958, -0.1241, 0.03024},
        {20, 0.373, -0.1582, 0.04104},  {32, 0.9559, -0.7823, 0.471},
        {45, 1.103, -0.362, 0.2767},    {65, 3.755, -4.398, 1.975},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].nm == nm)
            return rows[i].a * v * v + rows[i].b * v + rows[i].c;
    fail_msg("no row for %d nm", nm);
    return 0;
}

/* The node rule: the paper's numbers at 0.8 V, log-log interpolation in
 * between, and every table following the same factor. */
static void test_node_rule(void **state)
{
    (void)state;
    assert_near(arch_node_energy_scale(45), 1, 1e-12);
    assert_near(arch_node_area_scale(45), 1, 1e-12);
    const int tabulated[] = {7, 16, 32, 65};
    for (size_t i = 0; i < sizeof tabulated / sizeof tabulated[0]; i++)
        assert_near(arch_node_energy_scale(tabulated[i]),
                    stillmaker_energy(tabulated[i], 0.8) / stillmaker_energy(45, 0.8), 1e-9);
    assert_near(arch_node_area_scale(7), 0.059, 1e-12);
    assert_near(arch_node_area_scale(16), 0.19, 1e-12);
    assert_near(arch_node_area_scale(65), 1.5, 1e-12);
    /* 28 nm: a power law between 32 and 20 nm. */
    double e32 = stillmaker_energy(32, 0.8), e20 = stillmaker_energy(20, 0.8);
    double t = log(28.0 / 32) / log(20.0 / 32);
    double e28 = exp(log(e32) + t * (log(e20) - log(e32)));
    assert_near(arch_node_energy_scale(28), e28 / stillmaker_energy(45, 0.8), 1e-9);
    assert_near(arch_node_area_scale(28), exp(log(0.46) + t * (log(0.21) - log(0.46))), 1e-9);
    /* Every energy table by the energy factor, every area by the area one. */
    const int nodes[] = {7, 16, 28, 45, 65, 130};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        int n = nodes[i];
        double e = arch_node_energy_scale(n), a = arch_node_area_scale(n);
        assert_near(arch_sram_access_pJ(40 * KiB, 128, n),
                    e * arch_sram_access_pJ(40 * KiB, 128, 45), 1e-9);
        assert_near(arch_regfile_access_pJ(100, 16, n), e * arch_regfile_access_pJ(100, 16, 45),
                    1e-9);
        assert_near(arch_mac_number_pJ(16, ARCH_NUMBER_BF16, n),
                    e * arch_mac_number_pJ(16, ARCH_NUMBER_BF16, 45), 1e-9);
        assert_near(arch_mac_pJ(8, false, n), e * arch_mac_pJ(8, false, 45), 1e-9);
        assert_near(arch_wire_pJ_per_bit_mm(n), e * arch_wire_pJ_per_bit_mm(45), 1e-9);
        assert_near(arch_sram_area_um2(40 * KiB, 128, n), a * arch_sram_area_um2(40 * KiB, 128, 45),
                    1e-9);
        assert_near(arch_regfile_area_um2(100, 16, n), a * arch_regfile_area_um2(100, 16, 45),
                    1e-9);
        assert_near(arch_mac_area_um2(32, true, n), a * arch_mac_area_um2(32, true, 45), 1e-9);
    }
}

/* arch_apply_tables fills zeros from the tables and keeps what a user
 * (an ERT/ART) gave. */
static void test_apply_tables_keeps_given_values(void **state)
{
    (void)state;
    arch_spec a = build("eyeriss");
    int glb = level_index(&a, "GlobalBuffer");
    /* As the tables give it: 108 KB, 4 x 16-bit rows, at 65 nm. */
    double table_pJ = arch_sram_access_pJ(108 * KiB, 64, 65);
    assert_near(a.level[glb].energy.read_pJ, table_pJ, 1e-12);
    assert_near(a.level[glb].area_um2, arch_sram_area_um2(108 * KiB, 64, 65), 1e-12);
    assert_near(a.compute.mac_pJ, arch_mac_pJ(16, false, 65), 1e-12);
    /* The DRAM: 8 pJ/bit x 64-bit vector. */
    assert_near(a.level[a.n_levels - 1].energy.read_pJ, 8.0 * 64, 1e-12);

    a.level[glb].energy.read_pJ = 18.18;
    a.level[glb].energy.fill_pJ = 0;
    a.level[glb].area_um2 = 217363.4;
    a.compute.mac_pJ = 0.2077;
    a.compute.area_um2 = 0;
    arch_apply_tables(&a);
    assert_near(a.level[glb].energy.read_pJ, 18.18, 0);
    assert_near(a.level[glb].energy.fill_pJ, table_pJ, 1e-12);
    assert_near(a.level[glb].area_um2, 217363.4, 0);
    assert_near(a.compute.mac_pJ, 0.2077, 0);
    assert_near(a.compute.area_um2, arch_mac_area_um2(16, false, 65), 1e-12);
}

/* ----------------------------------------------------- area and power */

/* A two-level design small enough to total by hand. */
static arch_spec tiny_design(void)
{
    arch_spec a;
    memset(&a, 0, sizeof a);
    strcpy(a.name, "tiny");
    a.technology_nm = 45;
    a.cycle_seconds = 1e-9;
    a.native_batch = 1;
    a.n_levels = 2;
    a.level[0] = (arch_level){.name = "buf",
                              .cls = ARCH_CLASS_SRAM,
                              .size_words = 64,
                              .word_bits = 8,
                              .block_size = 2,
                              .cluster_size = 1,
                              .instances = 4,
                              .mesh_x = 2,
                              .mesh_y = 2,
                              .multiple_buffering = 1,
                              .read_bandwidth = 4,
                              .write_bandwidth = 2,
                              .energy = {3, 1, 1, 0.5},
                              .area_um2 = 1000};
    a.level[1] = (arch_level){.name = "mem",
                              .cls = ARCH_CLASS_DRAM,
                              .word_bits = 8,
                              .block_size = 8,
                              .cluster_size = 1,
                              .instances = 1,
                              .mesh_x = 1,
                              .mesh_y = 1,
                              .multiple_buffering = 1,
                              .shared_bandwidth = 16,
                              .energy = {64, 64, 64, 0}};
    a.compute = (arch_compute){.name = "pe",
                               .kind = ARCH_COMPUTE_SYSTOLIC,
                               .instances = 4,
                               .mesh_x = 2,
                               .mesh_y = 2,
                               .rows = 2,
                               .cols = 3,
                               .mac_bits = 8,
                               .mac_pJ = 0.25,
                               .area_um2 = 600};
    return a;
}

static void test_area_and_peak_power_by_hand(void **state)
{
    (void)state;
    arch_spec a = tiny_design();
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_validate(&a, &st), AS_OK);
    assert_near(arch_area_mm2(&a), (4 * 1000.0 + 4 * 600.0) * 1e-6, 1e-12);
    /* Per cycle: 24 MACs x 0.25; per buffer 4/2 reads x 3 + 2/2 writes x 1
     * + 0.5 leak; the DRAM interface (0.25 pJ/bit; the devices' energy,
     * 64 pJ a vector, is not the chip's) moves the 16 words of 8 bits the
     * DRAM shares. */
    a.dram.interface_pJ_per_bit = 0.25;
    double pJ = 24 * 0.25 + 4 * (2 * 3 + 1 * 1 + 0.5) + 16 * 8 * 0.25;
    assert_near(arch_peak_power_W(&a), pJ * 1e-12 / 1e-9, 1e-12);
    /* Unlimited bandwidth: one vector each way per cycle. */
    a.level[0].read_bandwidth = a.level[0].write_bandwidth = 0;
    pJ = 24 * 0.25 + 4 * (1 * 3 + 1 * 1 + 0.5) + 16 * 8 * 0.25;
    assert_near(arch_peak_power_W(&a), pJ * 1e-12 / 1e-9, 1e-12);
}

/* The parts of peak power: a systolic array's inside at full rate (per PE:
 * three register reads, a register write and a hop per data space, and an
 * OS accumulator write), and a shared port given first to the dearer
 * direction. */
static void test_peak_power_parts_by_hand(void **state)
{
    (void)state;
    arch_spec a = tiny_design();
    a.compute.pe_reg_pJ = 0.01;
    a.compute.pe_acc_reg_pJ = 0.02;
    a.compute.pe_hop_pJ = 0.1;
    a.compute.pe_acc_hop_pJ = 0.2;
    a.compute.dataflow = ARCH_DATAFLOW_OS;
    a.dram.interface_pJ_per_bit = 0.25;
    arch_power p;
    arch_peak_power_parts(&a, &p);
    /* 4 arrays x 6 PEs x (0.12 + 0.12 + 0.24 + 0.02) pJ per 1 ns cycle. */
    assert_near(p.array_W, 24 * 0.50 * 1e-3, 1e-12);
    assert_near(p.mac_W, 24 * 0.25 * 1e-3, 1e-12);
    assert_near(p.dram_W, 16 * 8 * 0.25 * 1e-3, 1e-12); /* the interface at 16 words a cycle */
    assert_near(p.onchip_W, 4 * (2 * 3 + 1 * 1 + 0.5) * 1e-3, 1e-12);
    assert_near(p.total_W, p.mac_W + p.array_W + p.onchip_W + p.dram_W, 1e-12);
    assert_near(arch_peak_power_W(&a), p.total_W, 1e-12);
    a.compute.dataflow = ARCH_DATAFLOW_WS; /* no accumulator write per MAC */
    arch_peak_power_parts(&a, &p);
    assert_near(p.array_W, 24 * 0.48 * 1e-3, 1e-12);
    /* A shared port of 16 words, reads capped at 4: writes take the
     * remaining 12, and the interface still moves 16 words a cycle --
     * whatever the devices spend on a read or a write. */
    a.level[1].read_bandwidth = 4;
    a.level[1].energy = (arch_energy){64, 16, 16, 0};
    arch_peak_power_parts(&a, &p);
    assert_near(p.dram_W, 16 * 8 * 0.25 * 1e-3, 1e-12);
}

/* TDP as vendors mean it (energy.c): the DRAM devices' energy per bit is
 * not the chip's, the chip's DRAM interface is.  On every preset, a DRAM
 * whose bits cost three times as much leaves the TDP as it was; twice
 * the interface's energy per bit adds the interface's power once more. */
static void test_tdp_counts_the_interface_not_the_devices(void **state)
{
    (void)state;
    int n = 0;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        presets[i].build(&a);
        arch_power before, after;
        arch_peak_power_parts(&a, &before);
        assert_true(before.dram_W > 0);
        assert_true(a.dram.interface_pJ_per_bit > 0 &&
                    a.dram.interface_pJ_per_bit < a.dram.energy_pJ_per_bit);
        arch_level *dram = &a.level[a.n_levels - 1];
        assert_int_equal(dram->cls, ARCH_CLASS_DRAM);
        /* Dearer devices: the level's energies follow the energy per bit. */
        a.dram.energy_pJ_per_bit *= 3;
        dram->energy = (arch_energy){0};
        arch_apply_tables(&a);
        assert_true(dram->energy.read_pJ > 0);
        arch_peak_power_parts(&a, &after);
        if (after.total_W != before.total_W)
            fail_msg("%s: TDP %.17g W became %.17g W with dearer DRAM devices", a.name,
                     before.total_W, after.total_W);
        a.dram.interface_pJ_per_bit *= 2;
        arch_peak_power_parts(&a, &after);
        assert_near(after.dram_W, 2 * before.dram_W, 1e-12 * before.dram_W);
        assert_near(after.total_W, before.total_W + before.dram_W, 1e-12 * before.total_W);
    }
}

/* Presets state every on-chip level's ports (presets.c, set_ports): one
 * vector per data space it can hold, widened for the innermost holder of a
 * data space to what the compute units take per cycle. */
static void test_preset_ports(void **state)
{
    (void)state;
    static const struct {
        const char *preset;
        int level;
        double words;
    } cases[] = {
        {"eyeriss", 0, 1},     /* psum spad: one psum per MAC and cycle */
        {"eyeriss", 3, 12},    /* GLB: 64-bit buses for ifmap, filter and psum */
        {"tpu_v3", 0, 768},    /* 2 MXUs x 128 words for each of 3 data spaces */
        {"gemmini", 0, 16},    /* accumulator: a row of 16 partial sums */
        {"gemmini", 1, 48},    /* scratchpad: 16-word rows, 3 data spaces */
        {"simba", 1, 64},      /* weight buffer feeds 8 vector MACs x 8 lanes */
        {"simba", 3, 96},      /* global buffer: 32-word rows, 3 data spaces */
        {"vta", 2, 256},       /* input buffer feeds 256 MACs */
        {"shidiannao", 1, 24}, /* NBin, NBout, SB: a row of 8 each */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        arch_spec a = build(cases[i].preset);
        const arch_level *l = &a.level[cases[i].level];
        if (l->read_bandwidth != cases[i].words || l->write_bandwidth != cases[i].words)
            fail_msg("%s %s: ports %g / %g words per cycle, want %g", cases[i].preset, l->name,
                     l->read_bandwidth, l->write_bandwidth, cases[i].words);
    }
    int n = 0;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        presets[i].build(&a);
        for (int l = 0; l < a.n_levels; l++)
            assert_true(a.level[l].read_bandwidth > 0 || a.level[l].shared_bandwidth > 0);
    }
}

/*
 * Plausibility against published chips.  The model counts MACs and
 * buffers only; dies also hold control, NoC routers, clock trees, I/O and
 * PHYs, so the model's area must lie between a tenth of the published
 * figure and the figure itself.  Peak power counts the same parts at full
 * rate: its on-chip part (without DRAM) must be within 4x of a chip's
 * measured power, which is the chip's own (Eyeriss: core power measured
 * on AlexNet's convolutions, JSSC 2017; ShiDianNao: the accelerator's
 * power, ISCA 2015, a design whose buffers hold everything), and the
 * whole (DRAM included: HBM sits in the TPU's package) between a
 * twentieth of a TDP and the TDP.
 */
static void test_area_and_power_are_plausible(void **state)
{
    (void)state;
    struct {
        const char *preset;
        double die_mm2;
    } dies[] = {
        {"eyeriss", 3.5 * 3.5}, /* JSSC 2017: 3.5 mm x 3.5 mm core */
        {"shidiannao", 4.86},   /* ISCA 2015 */
        {"tpu_v3", 700.0},      /* CACM 2020: < 700 mm^2 for the chip of 2 cores */
        {"simba", 6.0},         /* MICRO 2019: 6 mm^2 chiplet */
    };
    for (size_t i = 0; i < sizeof dies / sizeof dies[0]; i++) {
        arch_spec a = build(dies[i].preset);
        double mm2 = arch_area_mm2(&a);
        if (!(mm2 >= dies[i].die_mm2 / 10 && mm2 <= dies[i].die_mm2))
            fail_msg("%s: model area %.3g mm^2 vs published %.3g", dies[i].preset, mm2,
                     dies[i].die_mm2);
    }
    struct {
        const char *preset;
        double measured_W;
    } measured[] = {
        {"eyeriss", 0.278},    /* JSSC 2017: AlexNet convolutions at 200 MHz */
        {"shidiannao", 0.320}, /* ISCA 2015 */
    };
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        arch_spec a = build(measured[i].preset);
        arch_power p;
        arch_peak_power_parts(&a, &p);
        double w = p.total_W - p.dram_W;
        if (!(w >= measured[i].measured_W / 4 && w <= measured[i].measured_W * 4))
            fail_msg("%s: model peak %.3g W vs measured %.3g W", measured[i].preset, w,
                     measured[i].measured_W);
    }
    arch_spec tpu = build("tpu_v3");
    double tdp = 450.0; /* CACM 2020: 450 W per chip */
    double w = arch_peak_power_W(&tpu);
    if (!(w >= tdp / 20 && w <= tdp))
        fail_msg("tpu_v3: model peak %.3g W vs TDP %.3g W", w, tdp);
    int n = 0;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        presets[i].build(&a);
        assert_true(arch_area_mm2(&a) > 0 && arch_peak_power_W(&a) > 0);
    }
}

/* --------------------------------------------------------- validation */

typedef struct bad_case {
    const char *preset;
    void (*spoil)(arch_spec *a);
    const char *message;
} bad_case;

static arch_level *glb(arch_spec *a)
{
    return &a->level[level_index(a, "GlobalBuffer")];
}
static void zero_block(arch_spec *a)
{
    glb(a)->block_size = 0;
}
static void negative_bits(arch_spec *a)
{
    a->level[0].word_bits = -8;
}
static void bad_mesh(arch_spec *a)
{
    glb(a)->mesh_x = 2;
}
static void uneven_fanout(arch_spec *a)
{
    arch_level *l = &a->level[level_index(a, "ifmap_spad")];
    l->instances = 5, l->mesh_x = 5, l->mesh_y = 1;
}
static void bad_split(arch_spec *a)
{
    a->level[0].size_words = 30;
}
static void zero_capacity(arch_spec *a)
{
    glb(a)->size_words = 0;
}
static void negative_energy(arch_spec *a)
{
    glb(a)->energy.read_pJ = -1;
}
static void nan_bandwidth(arch_spec *a)
{
    glb(a)->read_bandwidth = NAN;
}
static void no_buffering(arch_spec *a)
{
    glb(a)->multiple_buffering = 0;
}
static void dummy_backing(arch_spec *a)
{
    a->level[a->n_levels - 1].cls = ARCH_CLASS_DUMMY;
}
static void unnamed_level(arch_spec *a)
{
    a->level[2].name[0] = '\0';
}
static void zero_rows(arch_spec *a)
{
    a->compute.rows = 0;
}
static void wide_mac_unit(arch_spec *a)
{
    a->compute.rows = 2;
}
static void odd_float(arch_spec *a)
{
    a->compute.mac_bits = 12;
    a->compute.mac_number = ARCH_NUMBER_FP;
}
static void tiny_node(arch_spec *a)
{
    a->technology_nm = 3;
}
static void no_clock(arch_spec *a)
{
    a->cycle_seconds = 0;
}
static void no_levels(arch_spec *a)
{
    a->n_levels = 0;
}
static void unknown_dram(arch_spec *a)
{
    strcpy(a->dram.type, "SDRAM9");
}
static void no_batch(arch_spec *a)
{
    a->native_batch = 0;
}

static const bad_case BAD_CASES[] = {
    {"eyeriss", zero_block, "level 'GlobalBuffer': block_size = 0 must be positive"},
    {"eyeriss", negative_bits, "level 'psum_spad': word_bits = -8 must be positive"},
    {"eyeriss", bad_mesh,
     "level 'GlobalBuffer': mesh_x * mesh_y = 2 * 1 differs from instances = 1"},
    {"eyeriss", uneven_fanout,
     "level 'ifmap_spad': instances = 5 must divide the 168 instances of 'weights_spad' below it"},
    {"eyeriss", bad_split,
     "level 'psum_spad': size_words = 30 differs from the sum of size_words_by_ds = 24"},
    {"eyeriss", zero_capacity, "level 'GlobalBuffer': size_words = 0 must be positive"},
    {"eyeriss", negative_energy,
     "level 'GlobalBuffer': read_pJ = -1 must be a non-negative number"},
    {"eyeriss", nan_bandwidth,
     "level 'GlobalBuffer': read_bandwidth = nan must be a non-negative number"},
    {"eyeriss", no_buffering, "level 'GlobalBuffer': multiple_buffering = 0 must be at least 1"},
    {"eyeriss", dummy_backing, "level 'DRAM': the backing store (last level) cannot be a dummy"},
    {"eyeriss", unnamed_level, "level 2: name is empty"},
    {"tpu_v3", zero_rows, "compute 'MXU': rows = 0 must be positive"},
    {"eyeriss", wide_mac_unit, "compute 'MAC': rows x cols = 2 x 1 must be 1 x 1 for a MAC unit"},
    {"gemmini", odd_float,
     "compute 'mesh': mac_bits = 12 with number format 1 is not in the MAC tables"},
    {"vta", tiny_node,
     "arch 'vta': technology_nm = 3 is outside the 7..130 nm the energy tables cover"},
    {"simba", no_clock, "arch 'simba': cycle_seconds = 0 must be positive"},
    {"simba", no_levels, "arch 'simba': n_levels = 0 must be between 1 and "},
    {"edgetpu", unknown_dram, "dram: type = 'SDRAM9' is not in the DRAM energy table"},
    {"shidiannao", no_batch, "arch 'shidiannao': native_batch = 0 must be positive"},
};

static void test_validate_names_level_and_key(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BAD_CASES / sizeof BAD_CASES[0]; i++) {
        arch_spec a = build(BAD_CASES[i].preset);
        BAD_CASES[i].spoil(&a);
        as_status st;
        as_status_clear(&st);
        assert_int_equal(arch_validate(&a, &st), AS_EINVAL);
        if (strstr(st.message, BAD_CASES[i].message) == NULL)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, st.message, BAD_CASES[i].message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_preset_validates),
        cmocka_unit_test(test_preset_key_numbers),
        cmocka_unit_test(test_mac_precision),
        cmocka_unit_test(test_fanout),
        cmocka_unit_test(test_published_anchors),
        cmocka_unit_test(test_tables_agree_with_accelergy),
        cmocka_unit_test(test_tables_are_monotonic),
        cmocka_unit_test(test_node_rule),
        cmocka_unit_test(test_apply_tables_keeps_given_values),
        cmocka_unit_test(test_area_and_peak_power_by_hand),
        cmocka_unit_test(test_peak_power_parts_by_hand),
        cmocka_unit_test(test_tdp_counts_the_interface_not_the_devices),
        cmocka_unit_test(test_preset_ports),
        cmocka_unit_test(test_area_and_power_are_plausible),
        cmocka_unit_test(test_validate_names_level_and_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
