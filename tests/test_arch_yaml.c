/*
 * test_arch_yaml.c -- accelsearch's own YAML format: the examples of
 * docs/arch-format.md (tests/data/arch) load to the numbers worked out by
 * hand below, the presets load by name, every bad file fails with its
 * file, line and key in the message, and arch_save writes every preset,
 * example and Timeloop reference design so that arch_load reads back the
 * identical struct.  docs/presets/ holds the presets as written by
 * arch_save; a test keeps it current, and
 *
 *     test_arch_yaml --write-presets docs/presets
 *
 * regenerates it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "mapping/mapping.h"

#include "text_file.h"

#define ARCH_DIR AS_TEST_DATA_DIR "/arch/"
#define PRESET_DOCS_DIR AS_TEST_DATA_DIR "/../../docs/presets"

/* Load an example that must succeed; fails the test with the message. */
static void load_ok(const char *file, arch_spec *a)
{
    as_status st;
    as_status_clear(&st);
    if (arch_load(file, a, &st) != AS_OK)
        fail_msg("%s: %s", file, st.message);
}

/* |got - want| within a relative 1e-12 (for figures derived in double). */
static void assert_near(double got, double want)
{
    if (fabs(got - want) > 1e-12 * fabs(want))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* The bypass flags of a level as "WIO" letters of the data spaces kept. */
static const char *kept(const arch_level *lv, char buf[4])
{
    int n = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (lv->constraints.keep[ds] != ARCH_KEEP_NEVER)
            buf[n++] = "WIO"[ds];
    buf[n] = '\0';
    return buf;
}

/*
 * Eyeriss-like: spads of 448 B / 24 B / 48 B in 16-bit words are 224, 12
 * and 24 words (260 in all); the 108 KiB buffer is 55,296 words; LPDDR4 at
 * 12.8 GB/s and 200 MHz moves 12.8e9 * 8 / 200e6 / 16 = 32 words a cycle.
 */
static void test_eyeriss_like(void **state)
{
    (void)state;
    arch_spec a;
    char k[4];
    load_ok(ARCH_DIR "eyeriss_like.yaml", &a);
    assert_string_equal(a.name, "eyeriss_like");
    assert_int_equal(a.technology_nm, 65);
    assert_near(a.cycle_seconds, 5e-9);
    assert_int_equal(a.native_batch, 1);
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_MAC);
    assert_int_equal(a.compute.instances, 168);
    assert_int_equal(a.compute.mesh_x, 14);
    assert_int_equal(a.compute.mesh_y, 12);
    assert_int_equal(a.compute.rows * a.compute.cols, 1);
    assert_int_equal(a.compute.mac_bits, 16);
    assert_int_equal(a.n_levels, 3);

    const arch_level *spad = &a.level[0], *glb = &a.level[1], *dram = &a.level[2];
    assert_string_equal(spad->name, "spad");
    assert_int_equal(spad->cls, ARCH_CLASS_REGFILE);
    assert_int_equal(spad->size_words_by_ds[WL_DS_WEIGHTS], 224);
    assert_int_equal(spad->size_words_by_ds[WL_DS_INPUTS], 12);
    assert_int_equal(spad->size_words_by_ds[WL_DS_OUTPUTS], 24);
    assert_int_equal(spad->size_words, 260);
    assert_string_equal(kept(spad, k), "WIO");
    assert_int_equal(spad->instances, 168);
    assert_int_equal(spad->word_bits, 16);
    assert_near(spad->read_bandwidth, 2);
    assert_near(spad->write_bandwidth, 2);
    assert_true(spad->multicast && spad->spatial_reduction); /* the defaults */

    assert_int_equal(glb->cls, ARCH_CLASS_SRAM);
    assert_int_equal(glb->size_words, 55296);
    assert_int_equal(glb->size_words_by_ds[WL_DS_WEIGHTS], 0);
    assert_string_equal(kept(glb, k), "IO");
    assert_int_equal(glb->block_size, 4);
    assert_int_equal(glb->instances, 1);
    assert_true(glb->multicast);
    assert_false(glb->spatial_reduction);

    assert_int_equal(dram->cls, ARCH_CLASS_DRAM);
    assert_int_equal(dram->size_words, 0);
    assert_string_equal(kept(dram, k), "WIO");
    assert_string_equal(a.dram.type, "LPDDR4");
    assert_int_equal(a.dram.channels, 1);
    assert_near(a.dram.bandwidth_GBps, 12.8);
    assert_near(dram->shared_bandwidth, 32);

    /* Energies and areas not given come from the tables. */
    assert_true(a.compute.mac_pJ > 0);
    assert_true(spad->energy.read_pJ > 0 && spad->area_um2 > 0);
    assert_true(glb->energy.read_pJ > spad->energy.read_pJ);
    assert_near(a.dram.energy_pJ_per_bit, arch_dram_pJ_per_bit("LPDDR4"));
    assert_true(dram->energy.read_pJ > 0);
}

/* TPU-v3-like: 16 MiB of 16-bit words is 8,388,608 words; HBM at 450 GB/s
 * and 940 MHz is 450e9 * 8 / 940e6 / 16 words a cycle. */
static void test_tpu_v3_like(void **state)
{
    (void)state;
    arch_spec a;
    load_ok(ARCH_DIR "tpu_v3_like.yaml", &a);
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_SYSTOLIC);
    assert_int_equal(a.compute.rows, 128);
    assert_int_equal(a.compute.cols, 128);
    assert_int_equal(a.compute.dataflow, ARCH_DATAFLOW_WS);
    assert_int_equal(a.compute.instances, 1);
    assert_int_equal(a.compute.mac_number, ARCH_NUMBER_BF16);
    assert_int_equal(a.n_levels, 2);
    assert_int_equal(a.level[0].size_words, 8388608);
    assert_int_equal(a.level[0].block_size, 128);
    assert_near(a.level[0].multiple_buffering, 2);
    assert_string_equal(a.dram.type, "HBM2");
    assert_int_equal(a.dram.channels, 4);
    assert_near(a.level[1].shared_bandwidth, 450e9 * 8 / 940e6 / 16);
    assert_near(a.cycle_seconds, 1 / 940e6);
}

/* Gemmini-like: a 64 KiB accumulator of 32-bit words is 16,384 words and
 * keeps only outputs; the 256 KiB scratchpad of 8-bit words, 262,144 words,
 * keeps weights and inputs. */
static void test_gemmini_like(void **state)
{
    (void)state;
    arch_spec a;
    char k[4];
    load_ok(ARCH_DIR "gemmini_like.yaml", &a);
    assert_int_equal(a.compute.dataflow, ARCH_DATAFLOW_OS);
    assert_int_equal(a.compute.rows, 16);
    assert_int_equal(a.compute.mac_bits, 8);
    assert_int_equal(a.level[0].word_bits, 32);
    assert_int_equal(a.level[0].size_words, 16384);
    assert_string_equal(kept(&a.level[0], k), "O");
    assert_int_equal(a.level[1].word_bits, 8);
    assert_int_equal(a.level[1].size_words, 262144);
    assert_string_equal(kept(&a.level[1], k), "WI");
    assert_int_equal(a.level[2].word_bits, 8);
    assert_int_equal(a.dram.channels, 1); /* the default */
}

/* Simba-like: 128 vector units of 8 lanes on an 8 x 16 mesh; a 3 KiB
 * buffer of 24-bit sums is 1,024 words; energies given stay as given. */
static void test_simba_like(void **state)
{
    (void)state;
    arch_spec a;
    char k[4];
    load_ok(ARCH_DIR "simba_like.yaml", &a);
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_VECTOR);
    assert_int_equal(a.compute.rows, 8);
    assert_int_equal(a.compute.cols, 1);
    assert_int_equal(a.compute.instances, 128);
    assert_int_equal(a.compute.mesh_x, 8);
    assert_int_equal(a.compute.mesh_y, 16);
    assert_int_equal(a.n_levels, 5);
    assert_int_equal(a.level[0].size_words, 1024);
    assert_string_equal(kept(&a.level[0], k), "O");
    assert_int_equal(a.level[1].mesh_x, 1);
    assert_int_equal(a.level[1].mesh_y, 16);
    assert_false(a.level[1].multicast);
    assert_string_equal(kept(&a.level[2], k), "I");
    assert_near(a.level[3].energy.read_pJ, 12.5);
    assert_near(a.level[3].energy.fill_pJ, 13);
    assert_near(a.level[3].hop_pJ, 0.5);
    assert_string_equal(kept(&a.level[3], k), "IO");
}

/* FAST's template: private split L1 (32, 8, 16 KiB of 16-bit words), a
 * shared L2 with the per-data-space multipliers written out, native batch. */
static void test_fast_template(void **state)
{
    (void)state;
    arch_spec a;
    load_ok(ARCH_DIR "fast_template.yaml", &a);
    assert_int_equal(a.native_batch, 8);
    assert_int_equal(a.technology_nm, 7);
    assert_int_equal(a.compute.instances, 16);
    assert_int_equal(a.level[0].instances, 16);
    assert_int_equal(a.level[0].size_words_by_ds[WL_DS_WEIGHTS], 16384);
    assert_int_equal(a.level[0].size_words_by_ds[WL_DS_INPUTS], 4096);
    assert_int_equal(a.level[0].size_words_by_ds[WL_DS_OUTPUTS], 8192);
    assert_int_equal(a.level[1].size_words_by_ds[WL_DS_WEIGHTS], 16 * 16384 * 4);
    assert_int_equal(a.level[1].size_words_by_ds[WL_DS_INPUTS], 16 * 4096 * 2);
    assert_int_equal(a.level[1].size_words_by_ds[WL_DS_OUTPUTS], 16 * 8192 * 2);
    assert_int_equal(a.level[1].instances, 1);
    assert_int_equal(a.level[2].size_words, 8388608);
    assert_int_equal(a.dram.channels, 8);
}

/* A failed load leaves *out untouched. */
static void test_out_untouched(void **state)
{
    (void)state;
    arch_spec a;
    memset(&a, 0x5a, sizeof a);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_load(ARCH_DIR "bad_mesh.yaml", &a, &st), AS_EINVAL);
    assert_int_equal(((unsigned char *)&a)[0], 0x5a);
    assert_int_equal(((unsigned char *)&a)[sizeof a - 1], 0x5a);
    /* and a NULL status is allowed */
    assert_int_equal(arch_load(ARCH_DIR "bad_mesh.yaml", &a, NULL), AS_EINVAL);
}

/*
 * Bad files: each fails with its path, line and key (or the phrase that
 * says what is wrong) in the message, and never crashes.
 */
static void test_bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int line;        /* 0: no line expected */
        const char *key; /* must appear in the message */
        as_code code;
    } cases[] = {
        {"bad_unknown_key.yaml", 10, "unknown key 'colour' in levels[0]", AS_EINVAL},
        {"bad_wrong_type.yaml", 10, "levels[0].word_bits: expected an integer", AS_EINVAL},
        {"bad_negative_size.yaml", 8, "levels[0].size", AS_EINVAL},
        {"bad_mesh.yaml", 10, "levels[0].mesh: 3 x 2 = 6 does not match instances: 4", AS_EINVAL},
        {"bad_dataflow.yaml", 8, "compute.dataflow: expected one of os, ws, is", AS_EINVAL},
        {"bad_malformed.yaml", 5, "flow mapping", AS_EINVAL},
        {"bad_negative_clock.yaml", 3, "clock_MHz", AS_EINVAL},
        {"bad_size_and_split.yaml", 8, "levels[0].size: give size or split", AS_EINVAL},
        {"bad_dram_not_last.yaml", 6, "levels[0].kind", AS_EINVAL},
        {"bad_duplicate_name.yaml", 7, "levels[1].name: 'buf' already names levels[0]", AS_EINVAL},
        {"bad_partial_word.yaml", 6, "not a whole number of 24-bit words", AS_EINVAL},
        {"bad_rows_on_mac.yaml", 4, "unknown key 'rows' in compute", AS_EINVAL},
        {"bad_keep_unsplit.yaml", 8, "levels[0].split: keeps outputs", AS_EINVAL},
        {"bad_no_unit.yaml", 6, "levels[0].size: expected a capacity", AS_EINVAL},
        {"bad_missing_levels.yaml", 1, "missing key 'levels'", AS_EINVAL},
        {"bad_empty.yaml", 0, "empty document", AS_EINVAL},
        {"bad_not_mapping.yaml", 1, "expected a mapping", AS_EINVAL},
        {"bad_dram_type.yaml", 8, "levels[0].type: 'RAMBUS9' is not in the DRAM energy table",
         AS_EINVAL},
        {"bad_mac_format.yaml", 7, "compute.mac_bits: the energy tables have no 8-bit bf16 MAC",
         AS_EINVAL},
        {"bad_fanout.yaml", 7, "level 'L2': instances = 3 must divide", AS_EINVAL},
        {"bad_constraint_key.yaml", 10, "unknown key 'temporal_factor' in levels[0].constraints",
         AS_EINVAL},
        {"bad_constraint_dim.yaml", 10,
         "levels[0].constraints.temporal_factors.X: unknown dimension 'X'", AS_EINVAL},
        {"bad_constraint_twice.yaml", 10,
         "levels[0].constraints.spatial_order: M is listed twice (K is M)", AS_EINVAL},
        {"bad_constraint_type.yaml", 10,
         "levels[0].constraints.temporal_factors.R: expected an integer", AS_EINVAL},
        {"bad_constraint_max.yaml", 10,
         "levels[0].constraints.temporal_factors: R = 32 exceeds its temporal_max 16", AS_EINVAL},
        {"bad_constraint_split.yaml", 10,
         "levels[0].constraints.spatial_split: 3 exceeds the 2 dimensions", AS_EINVAL},
        {"bad_constraint_keep.yaml", 11,
         "levels[0].constraints.keep: inputs cannot be kept at this level", AS_EINVAL},
        {"bad_constraint_dummy_keep.yaml", 9, "outputs cannot be kept at this level (a dummy",
         AS_EINVAL},
        {"bad_constraint_utilization.yaml", 10,
         "levels[0].constraints.min_spatial_utilization: '1.5' is out of range", AS_EINVAL},
        {"bad_clock_both.yaml", 4, "clock_MHz: give clock_MHz or cycle_seconds, not both",
         AS_EINVAL},
        {"no_such_file.yaml", 0, "no_such_file.yaml", AS_EIO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512], where[600];
        arch_spec a;
        as_status st;
        as_status_clear(&st);
        snprintf(path, sizeof path, "%s%s", ARCH_DIR, cases[i].file);
        as_code code = arch_load(path, &a, &st);
        if (code != cases[i].code)
            fail_msg("%s: code %d (%s), want %d", cases[i].file, code, st.message, cases[i].code);
        if (cases[i].line)
            snprintf(where, sizeof where, "%s:%d:", path, cases[i].line);
        else
            snprintf(where, sizeof where, "%s", path);
        if (!strstr(st.message, where) || !strstr(st.message, cases[i].key))
            fail_msg("%s: message '%s' lacks '%s' or '%s'", cases[i].file, st.message, where,
                     cases[i].key);
    }
}

/* A name that is neither a preset nor a file says so and lists the presets. */
static void test_unknown_preset(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    int n;
    const arch_preset *presets = arch_presets(&n);
    assert_true(n > 0);
    assert_int_equal(arch_load("eyerisss", &a, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "'eyerisss' is neither a preset"));
    assert_non_null(strstr(st.message, presets[0].name));
    as_status_clear(&st);
    assert_int_equal(arch_load("", &a, &st), AS_EINVAL);
}

/* Every preset loads by name, as its builder made it with the tables
 * applied. */
static void test_presets(void **state)
{
    (void)state;
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec loaded, built;
        memset(&built, 0, sizeof built);
        presets[i].build(&built);
        arch_apply_tables(&built);
        load_ok(presets[i].name, &loaded);
        assert_string_equal(loaded.name, built.name);
        assert_int_equal(loaded.n_levels, built.n_levels);
        assert_memory_equal(&loaded.compute, &built.compute, sizeof built.compute);
        /* The clock as its datasheet states it, whole MHz, not 1 / period. */
        double MHz = arch_clock_MHz(&loaded);
        assert_true(MHz == floor(MHz));
        assert_true(1.0 / (MHz * 1e6) == loaded.cycle_seconds);
    }
}

/*
 * Constraints (tests/data/arch/constraints.yaml): K is M, orders are kept
 * innermost first as written, a split is fixed when given, constraints'
 * keep forces a data space (ALWAYS) and the keep list bypasses the others
 * (NEVER), a dummy keeps nothing.
 */
static void test_constraints(void **state)
{
    (void)state;
    arch_spec a;
    load_ok(ARCH_DIR "constraints.yaml", &a);
    assert_int_equal(a.n_levels, 4);
    const arch_constraints *spad = &a.level[0].constraints, *array = &a.level[1].constraints;
    const arch_constraints *glb = &a.level[2].constraints, *dram = &a.level[3].constraints;
    static const int64_t spad_factor[WL_NDIMS] = {[WL_DIM_N] = 1, [WL_DIM_P] = 1, [WL_DIM_Q] = 1};
    static const int64_t spad_max[WL_NDIMS] = {[WL_DIM_C] = 4, [WL_DIM_M] = 16};
    assert_memory_equal(spad->temporal_factor, spad_factor, sizeof spad_factor);
    assert_memory_equal(spad->temporal_max, spad_max, sizeof spad_max);
    assert_int_equal(spad->n_temporal_order, 3);
    assert_int_equal(spad->temporal_order[0], WL_DIM_R);
    assert_int_equal(spad->temporal_order[1], WL_DIM_C);
    assert_int_equal(spad->temporal_order[2], WL_DIM_M);
    assert_int_equal(spad->keep[WL_DS_WEIGHTS], ARCH_KEEP_ALWAYS);
    assert_int_equal(spad->keep[WL_DS_INPUTS], ARCH_KEEP_FREE);
    assert_int_equal(spad->keep[WL_DS_OUTPUTS], ARCH_KEEP_FREE);
    assert_false(spad->spatial_split_fixed);

    assert_int_equal(a.level[1].cls, ARCH_CLASS_DUMMY);
    assert_int_equal(arch_fanout(&a, 1), 168);
    assert_int_equal(array->spatial_factor[WL_DIM_N], 1);
    assert_int_equal(array->spatial_factor[WL_DIM_R], 1);
    assert_int_equal(array->spatial_factor[WL_DIM_M], 0);
    assert_int_equal(array->n_spatial_order, 4);
    static const uint8_t array_order[4] = {WL_DIM_Q, WL_DIM_S, WL_DIM_C, WL_DIM_M};
    assert_memory_equal(array->spatial_order, array_order, 4);
    assert_true(array->spatial_split_fixed);
    assert_int_equal(array->spatial_split, 1);
    assert_true(array->min_spatial_utilization == 0.5);
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        assert_int_equal(array->keep[ds], ARCH_KEEP_NEVER);

    assert_int_equal(glb->keep[WL_DS_WEIGHTS], ARCH_KEEP_NEVER);
    assert_int_equal(glb->keep[WL_DS_INPUTS], ARCH_KEEP_ALWAYS);
    assert_int_equal(glb->keep[WL_DS_OUTPUTS], ARCH_KEEP_FREE);
    assert_int_equal(glb->n_temporal_order, 2);
    assert_int_equal(dram->temporal_factor[WL_DIM_N], 1);
    assert_int_equal(dram->keep[WL_DS_WEIGHTS], ARCH_KEEP_FREE);
}

/* ------------------------------------------------------------ round trip */

/* Fail naming the spec, the field and where, unless the size bytes at x
 * and y are the same (doubles compare bit for bit). */
static void same_bytes(const char *what, const char *field, int level, const void *x, const void *y,
                       size_t size)
{
    if (memcmp(x, y, size) != 0)
        fail_msg("%s: %s differs%s%.0d", what, field, level >= 0 ? " at level " : "",
                 level >= 0 ? level : 0);
}
#define SAME(w, g, field, level)                                                                   \
    same_bytes(what, #field, level, &(w)->field, &(g)->field, sizeof(w)->field)

/* Every field of two levels (padding bytes aside, hence one by one). */
static void same_level(const char *what, int i, const arch_level *w, const arch_level *g)
{
    SAME(w, g, name, i), SAME(w, g, cls, i), SAME(w, g, size_words, i);
    SAME(w, g, size_words_by_ds, i), SAME(w, g, word_bits, i), SAME(w, g, block_size, i);
    SAME(w, g, cluster_size, i), SAME(w, g, instances, i), SAME(w, g, mesh_x, i);
    SAME(w, g, mesh_y, i), SAME(w, g, multiple_buffering, i), SAME(w, g, read_bandwidth, i);
    SAME(w, g, write_bandwidth, i), SAME(w, g, shared_bandwidth, i);
    SAME(w, g, energy.read_pJ, i), SAME(w, g, energy.fill_pJ, i);
    SAME(w, g, energy.update_pJ, i), SAME(w, g, energy.leak_pJ, i), SAME(w, g, area_um2, i);
    SAME(w, g, multicast, i), SAME(w, g, spatial_reduction, i), SAME(w, g, hop_pJ, i);
    SAME(w, g, constraints.temporal_factor, i), SAME(w, g, constraints.temporal_max, i);
    SAME(w, g, constraints.n_temporal_order, i), SAME(w, g, constraints.temporal_order, i);
    SAME(w, g, constraints.spatial_factor, i), SAME(w, g, constraints.n_spatial_order, i);
    SAME(w, g, constraints.spatial_order, i), SAME(w, g, constraints.spatial_split_fixed, i);
    SAME(w, g, constraints.spatial_split, i);
    SAME(w, g, constraints.min_spatial_utilization, i), SAME(w, g, constraints.keep, i);
    SAME(w, g, format, i);
}

/* Every field of two specs. */
static void same_spec(const char *what, const arch_spec *w, const arch_spec *g)
{
    SAME(w, g, name, -1), SAME(w, g, technology_nm, -1), SAME(w, g, cycle_seconds, -1);
    SAME(w, g, n_levels, -1), SAME(w, g, native_batch, -1);
    SAME(w, g, compute.name, -1), SAME(w, g, compute.kind, -1), SAME(w, g, compute.instances, -1);
    SAME(w, g, compute.mesh_x, -1), SAME(w, g, compute.mesh_y, -1), SAME(w, g, compute.rows, -1);
    SAME(w, g, compute.cols, -1), SAME(w, g, compute.dataflow, -1);
    SAME(w, g, compute.mac_bits, -1), SAME(w, g, compute.mac_number, -1);
    SAME(w, g, compute.mac_pJ, -1), SAME(w, g, compute.area_um2, -1);
    SAME(w, g, compute.zero_action, -1), SAME(w, g, compute.zero_operand, -1);
    SAME(w, g, compute.gated_mac_fraction, -1);
    SAME(w, g, dram.type, -1), SAME(w, g, dram.channels, -1), SAME(w, g, dram.bandwidth_GBps, -1);
    SAME(w, g, dram.energy_pJ_per_bit, -1);
    for (int i = 0; i < w->n_levels; i++)
        same_level(what, i, &w->level[i], &g->level[i]);
}

/* Save a, load it back: the very same struct; saving that again gives
 * the same text. */
static void round_trip(const char *what, const arch_spec *a)
{
    char path[512], again[512];
    arch_spec loaded;
    as_status st;
    as_status_clear(&st);
    snprintf(path, sizeof path, "%s/round_trip.yaml", AS_TEST_TMP_DIR);
    snprintf(again, sizeof again, "%s/round_trip_again.yaml", AS_TEST_TMP_DIR);
    if (arch_save(a, path, &st) != AS_OK)
        fail_msg("%s: arch_save: %s", what, st.message);
    memset(&loaded, 0, sizeof loaded);
    if (arch_load(path, &loaded, &st) != AS_OK)
        fail_msg("%s: arch_load of what arch_save wrote: %s", what, st.message);
    same_spec(what, a, &loaded);
    assert_int_equal(arch_save(&loaded, again, &st), AS_OK);
    char *first = text_file(path), *second = text_file(again);
    assert_string_equal(first, second);
    free(first);
    free(second);
    remove(path);
    remove(again);
}

/* Every preset, as arch_load gives it, survives arch_save. */
static void test_round_trip_presets(void **state)
{
    (void)state;
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        load_ok(presets[i].name, &a);
        round_trip(presets[i].name, &a);
    }
}

/* Every example file of tests/data/arch survives arch_save. */
static void test_round_trip_examples(void **state)
{
    (void)state;
    static const char *const examples[] = {"eyeriss_like.yaml",  "tpu_v3_like.yaml",
                                           "gemmini_like.yaml",  "simba_like.yaml",
                                           "fast_template.yaml", "constraints.yaml"};
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        char path[512];
        arch_spec a;
        snprintf(path, sizeof path, "%s%s", ARCH_DIR, examples[i]);
        load_ok(path, &a);
        round_trip(examples[i], &a);
    }
}

/* Every Timeloop reference design (tests/data/timeloop, with its ERT and
 * ART energies, dummy containers and DRAM words per cycle) survives
 * arch_save. */
static void test_round_trip_timeloop(void **state)
{
    (void)state;
    DIR *dir = opendir(AS_TEST_DATA_DIR "/timeloop");
    struct dirent *entry;
    int cases = 0;
    map_timeloop_case *c = malloc(sizeof *c);
    assert_non_null(dir);
    while ((entry = readdir(dir)) != NULL) {
        char input[512], ert[512], art[512];
        as_status st;
        as_status_clear(&st);
        if (entry->d_name[0] == '.')
            continue;
        snprintf(input, sizeof input, "%s/timeloop/%s/model-input.yaml", AS_TEST_DATA_DIR,
                 entry->d_name);
        snprintf(ert, sizeof ert, "%s/timeloop/%s/ERT.yaml", AS_TEST_DATA_DIR, entry->d_name);
        snprintf(art, sizeof art, "%s/timeloop/%s/ART.yaml", AS_TEST_DATA_DIR, entry->d_name);
        if (map_timeloop_load(input, ert, art, c, &st) != AS_OK)
            fail_msg("%s: %s", entry->d_name, st.message);
        round_trip(entry->d_name, &c->arch);
        cases++;
    }
    closedir(dir);
    free(c);
    assert_int_equal(cases, 17);
}

/*
 * What the examples do not reach: a clock no decimal MHz gives back
 * (written as cycle_seconds), energies given as 0 (kept, not refilled),
 * names that need quoting, a DRAM bandwidth in words per cycle, and every
 * kind of constraint.
 */
static void test_round_trip_corners(void **state)
{
    (void)state;
    arch_spec a;
    load_ok("simba", &a);
    a.cycle_seconds = 1.0 / 3e8 * (1 + 0x1p-50);
    memset(a.name, 0, sizeof a.name); /* names are compared as whole arrays */
    strcpy(a.name, "a \"quoted\": name # with\tsigns");
    memset(a.level[1].name, 0, sizeof a.level[1].name);
    strcpy(a.level[1].name, "- [x]");
    a.level[0].energy.leak_pJ = 0;
    a.level[3].hop_pJ = 0;
    a.compute.area_um2 = 1e-3;
    arch_level *dram = &a.level[a.n_levels - 1];
    dram->shared_bandwidth = 12.375;
    dram->read_bandwidth = 3;
    arch_constraints *c = &a.level[2].constraints;
    c->temporal_factor[WL_DIM_R] = 3;
    c->temporal_max[WL_DIM_C] = 64;
    c->n_temporal_order = 2;
    c->temporal_order[0] = WL_DIM_S;
    c->temporal_order[1] = WL_DIM_N;
    c->spatial_factor[WL_DIM_G] = 1;
    c->n_spatial_order = 1;
    c->spatial_order[0] = WL_DIM_P;
    c->spatial_split_fixed = true;
    c->spatial_split = 0;
    c->min_spatial_utilization = 1.0 / 3;
    c->keep[WL_DS_INPUTS] = ARCH_KEEP_ALWAYS;
    a.level[3].constraints.keep[WL_DS_WEIGHTS] = ARCH_KEEP_NEVER;
    dram->constraints.keep[WL_DS_OUTPUTS] = ARCH_KEEP_ALWAYS;
    round_trip("corners", &a);
}

/* What the format cannot say is refused, not written wrong. */
static void test_save_refuses(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    char path[512];
    snprintf(path, sizeof path, "%s/refused.yaml", AS_TEST_TMP_DIR);
    load_ok("eyeriss", &a);
    a.compute.dataflow = ARCH_DATAFLOW_WS; /* a dataflow on scalar MACs */
    as_status_clear(&st);
    assert_int_equal(arch_save(&a, path, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "only a systolic compute unit has a dataflow"));
    load_ok("eyeriss", &a);
    a.level[a.n_levels - 1].constraints.keep[WL_DS_INPUTS] = ARCH_KEEP_NEVER;
    as_status_clear(&st);
    assert_int_equal(arch_save(&a, path, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "a dram must keep inputs"));
    load_ok("eyeriss", &a);
    a.level[0].word_bits = 0; /* arch_validate's checks come first */
    as_status_clear(&st);
    assert_int_equal(arch_save(&a, path, &st), AS_EINVAL);
    load_ok("eyeriss", &a);
    as_status_clear(&st);
    assert_int_equal(arch_save(&a, AS_TEST_TMP_DIR "/no/such/dir/x.yaml", &st), AS_EIO);
}

/* ------------------------------------------------------- docs/presets */

/* docs/presets/<preset>.yaml: a comment naming the preset and its source,
 * then what arch_save writes for it. */
static as_code write_preset_file(const arch_preset *p, const char *path, as_status *st)
{
    char body_path[512];
    arch_spec a;
    snprintf(body_path, sizeof body_path, "%s.body", path);
    if (arch_load(p->name, &a, st) || arch_save(&a, body_path, st))
        return st->code;
    char *body = text_file(body_path);
    remove(body_path);
    FILE *out = fopen(path, "w");
    if (!out) {
        free(body);
        return as_fail(st, AS_EIO, "%s: cannot write", path);
    }
    fprintf(out,
            "# Preset '%s': %s.\n# Source: %s.\n"
            "# Regenerate with: test_arch_yaml --write-presets docs/presets\n%s",
            p->name, p->description, p->source, body);
    free(body);
    return fclose(out) == 0 ? AS_OK : as_fail(st, AS_EIO, "%s: cannot write", path);
}

/* docs/presets holds each preset as write_preset_file writes it today
 * (so it is never stale), and each loads to the preset itself. */
static void test_preset_docs(void **state)
{
    (void)state;
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        char doc[512], fresh[512];
        arch_spec from_doc, preset;
        as_status st;
        as_status_clear(&st);
        snprintf(doc, sizeof doc, "%s/%s.yaml", PRESET_DOCS_DIR, presets[i].name);
        snprintf(fresh, sizeof fresh, "%s/preset_%s.yaml", AS_TEST_TMP_DIR, presets[i].name);
        if (write_preset_file(&presets[i], fresh, &st))
            fail_msg("%s: %s", presets[i].name, st.message);
        char *want = text_file(fresh), *have = text_file(doc);
        if (strcmp(want, have) != 0)
            fail_msg("%s is stale: run test_arch_yaml --write-presets docs/presets", doc);
        free(want);
        free(have);
        remove(fresh);
        load_ok(doc, &from_doc);
        load_ok(presets[i].name, &preset);
        same_spec(doc, &preset, &from_doc);
    }
}

/* --write-presets DIR: write every preset's file into DIR. */
static int write_presets(const char *dir)
{
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        char path[512];
        as_status st;
        as_status_clear(&st);
        snprintf(path, sizeof path, "%s/%s.yaml", dir, presets[i].name);
        if (write_preset_file(&presets[i], path, &st)) {
            fprintf(stderr, "test_arch_yaml: %s\n", st.message);
            return 1;
        }
        printf("wrote %s\n", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-presets") == 0)
        return write_presets(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eyeriss_like),
        cmocka_unit_test(test_tpu_v3_like),
        cmocka_unit_test(test_gemmini_like),
        cmocka_unit_test(test_simba_like),
        cmocka_unit_test(test_fast_template),
        cmocka_unit_test(test_out_untouched),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_unknown_preset),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_constraints),
        cmocka_unit_test(test_round_trip_presets),
        cmocka_unit_test(test_round_trip_examples),
        cmocka_unit_test(test_round_trip_timeloop),
        cmocka_unit_test(test_round_trip_corners),
        cmocka_unit_test(test_save_refuses),
        cmocka_unit_test(test_preset_docs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
