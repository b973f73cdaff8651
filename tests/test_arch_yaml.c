/*
 * test_arch_yaml.c -- arch_load on accelsearch's own YAML format: the
 * examples of docs/arch-format.md (tests/data/arch) load to the
 * numbers worked out by hand below, the presets load by name, and every
 * bad file fails with its file, line and key in the message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

#define ARCH_DIR AS_TEST_DATA_DIR "/arch/"

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
        if (!lv->bypass[ds])
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
        int line;           /* 0: no line expected */
        const char *key;    /* must appear in the message */
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
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eyeriss_like),  cmocka_unit_test(test_tpu_v3_like),
        cmocka_unit_test(test_gemmini_like),  cmocka_unit_test(test_simba_like),
        cmocka_unit_test(test_fast_template), cmocka_unit_test(test_out_untouched),
        cmocka_unit_test(test_bad_files),     cmocka_unit_test(test_unknown_preset),
        cmocka_unit_test(test_presets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
