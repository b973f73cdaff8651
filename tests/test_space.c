/*
 * test_space.c -- design spaces: the built-ins load and their baselines
 * decode to designs close to the Eyeriss and TPU-v3 presets, within
 * budget; parameter values and indices (INT stride, POW2 with zero, ENUM)
 * and unit-cube coordinates round-trip; every corner of both spaces
 * decodes to a valid arch or a reason; budgets name the limit and the
 * numbers; points as text and JSON; spaces built in code are finished
 * (sorted, checked); YAML files round-trip, docs/spaces/ equals the
 * built-ins, and bad files fail naming file, line and key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/search.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)

/* ------------------------------------------------------------- helpers */

static void load(const char *name, se_space *s)
{
    as_status st;
    as_status_clear(&st);
    as_code code = se_space_load(name, s, &st);
    if (code != AS_OK)
        fail_msg("loading %s: %s", name, st.message);
}

static se_point baseline_point(const se_space *s)
{
    se_point p = {{0}};
    memcpy(p.index, s->baseline, sizeof p.index);
    return p;
}

/* The point of s with every parameter at its baseline but `name` at the
 * index of value. */
static se_point with_value(const se_space *s, se_point p, const char *name, int64_t value)
{
    int i = se_space_find(s, name);
    assert_true(i >= 0);
    p.index[i] = se_param_index(&s->param[i], value);
    assert_int_equal(se_param_value(&s->param[i], p.index[i]), value);
    return p;
}

static int64_t value_of(const se_space *s, const se_point *p, const char *name)
{
    int i = se_space_find(s, name);
    assert_true(i >= 0);
    return se_param_value(&s->param[i], p->index[i]);
}

/* Field by field (source aside: where a space came from is not what it
 * is). */
static void assert_space_equal(const se_space *a, const se_space *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->template_kind, b->template_kind);
    assert_int_equal(a->technology_nm, b->technology_nm);
    assert_true(a->clock_hz == b->clock_hz);
    assert_int_equal(a->precision, b->precision);
    assert_int_equal(a->n_params, b->n_params);
    for (int i = 0; i < a->n_params; i++) {
        const se_param *p = &a->param[i], *q = &b->param[i];
        assert_string_equal(p->name, q->name);
        assert_int_equal(p->kind, q->kind);
        assert_int_equal(p->min, q->min);
        assert_int_equal(p->max, q->max);
        assert_int_equal(p->stride, q->stride);
        assert_int_equal(p->zero_allowed, q->zero_allowed);
        assert_int_equal(p->n_choices, q->n_choices);
        for (int c = 0; c < p->n_choices; c++)
            assert_string_equal(p->choice[c], q->choice[c]);
        assert_int_equal(p->n_values, q->n_values);
        assert_int_equal(a->baseline[i], b->baseline[i]);
    }
    for (int k = 0; k < SE_MAX_PARAMS; k++)
        assert_int_equal(a->fixed[k], b->fixed[k]);
    assert_true(a->limits.max_area_mm2 == b->limits.max_area_mm2);
    assert_true(a->limits.max_power_W == b->limits.max_power_W);
    assert_int_equal(a->limits.max_pes, b->limits.max_pes);
    assert_int_equal(a->limits.max_onchip_bytes, b->limits.max_onchip_bytes);
    assert_string_equal(a->baseline_name, b->baseline_name);
}

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/space_%s.yaml", AS_TEST_TMP_DIR, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* A deterministic stream of doubles in [0, 1). */
static double next_unit(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / 9007199254740992.0;
}

/* Bytes of a's storage that is not DRAM, over all instances. */
static int64_t onchip_bytes(const arch_spec *a)
{
    int64_t bytes = 0;
    for (int i = 0; i < a->n_levels; i++)
        if (a->level[i].cls != ARCH_CLASS_DRAM)
            bytes += a->level[i].instances * a->level[i].size_words * a->level[i].word_bits / 8;
    return bytes;
}

static const arch_level *level_named(const arch_spec *a, const char *name)
{
    for (int i = 0; i < a->n_levels; i++)
        if (strcmp(a->level[i].name, name) == 0)
            return &a->level[i];
    return NULL;
}

/* ------------------------------------------------------------ built-ins */

static void test_builtins_load(void **state)
{
    (void)state;
    int n = 0;
    const char *const *names = se_space_builtin_names(&n);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "edge");
    assert_string_equal(names[1], "datacenter");
    for (int i = 0; i < n; i++) {
        se_space s;
        load(names[i], &s);
        assert_string_equal(s.name, names[i]);
        assert_string_equal(s.source, "built-in");
        for (int j = 0; j < s.n_params; j++)
            assert_true(s.param[j].n_values >= 1);
    }
    se_space e, d;
    load("edge", &e);
    load("datacenter", &d);
    assert_int_equal(e.template_kind, SE_TEMPLATE_EDGE);
    assert_int_equal(e.n_params, 5);
    /* Value counts from the ranges the brief and the papers give. */
    assert_int_equal(e.param[se_space_find(&e, "pe_x")].n_values, 32);
    assert_int_equal(e.param[se_space_find(&e, "rf_bytes")].n_values, (2048 - 16) / 8 + 1);
    assert_int_equal(e.param[se_space_find(&e, "glb_bytes")].n_values, (MiB - KiB) / 8 + 1);
    assert_int_equal(e.param[se_space_find(&e, "offchip_bytes")].n_values, GiB / (16 * KiB));
    assert_int_equal(d.template_kind, SE_TEMPLATE_DATAPATH);
    assert_int_equal(d.n_params, 17);
    assert_int_equal(d.param[se_space_find(&d, "pe_x")].n_values, 9);          /* 1 .. 256 */
    assert_int_equal(d.param[se_space_find(&d, "global_bytes")].n_values, 10); /* 0, 1..256 MiB */
    assert_int_equal(d.param[se_space_find(&d, "l2_config")].n_values, 3);
    assert_int_equal(d.param[se_space_find(&d, "l1_total_bytes")].n_values, 11);
    assert_int_equal(se_space_find(&d, "nonsense"), -1);
    assert_string_equal(e.baseline_name, "eyeriss-like");
    assert_string_equal(d.baseline_name, "tpu-v3-like");
    assert_int_equal(e.precision, WL_PREC_FP16);
    assert_int_equal(d.precision, WL_PREC_BF16);

    as_status st;
    as_status_clear(&st);
    assert_int_not_equal(se_space_load("no_such_space", &e, &st), AS_OK);
    assert_non_null(strstr(st.message, "no_such_space"));
    assert_non_null(strstr(st.message, "edge, datacenter"));
}

/* ------------------------------------------------------- values, indices */

static void test_int_values(void **state)
{
    (void)state;
    se_space s;
    load("edge", &s);
    const se_param *rf = &s.param[se_space_find(&s, "rf_bytes")];
    assert_int_equal(rf->kind, SE_PARAM_INT);
    assert_int_equal(se_param_value(rf, 0), 16);
    assert_int_equal(se_param_value(rf, 63), 520);
    assert_int_equal(se_param_value(rf, rf->n_values - 1), 2048);
    assert_int_equal(se_param_index(rf, 520), 63);
    assert_int_equal(se_param_index(rf, 523), 63); /* nearer 520 */
    assert_int_equal(se_param_index(rf, 524), 63); /* halfway: the lower */
    assert_int_equal(se_param_index(rf, 525), 64); /* nearer 528 */
    assert_int_equal(se_param_index(rf, -100), 0);
    assert_int_equal(se_param_index(rf, 1 << 30), rf->n_values - 1);
    for (int i = 0; i < s.n_params; i++) {
        const se_param *p = &s.param[i];
        for (int64_t k = 0; k < p->n_values; k += 1 + p->n_values / 97) {
            int64_t v = se_param_value(p, k);
            assert_int_equal(v, p->min + k * p->stride);
            assert_int_equal(se_param_index(p, v), k);
        }
    }
}

static void test_pow2_and_enum_values(void **state)
{
    (void)state;
    se_space s;
    load("datacenter", &s);
    const se_param *g = &s.param[se_space_find(&s, "global_bytes")];
    assert_int_equal(g->kind, SE_PARAM_POW2);
    assert_true(g->zero_allowed);
    assert_int_equal(se_param_value(g, 0), 0);
    assert_int_equal(se_param_value(g, 1), MiB);
    assert_int_equal(se_param_value(g, 5), 16 * MiB);
    assert_int_equal(se_param_value(g, 9), 256 * MiB);
    assert_int_equal(se_param_index(g, 0), 0);
    assert_int_equal(se_param_index(g, 1), 0);       /* nearer 0 than 1 MiB */
    assert_int_equal(se_param_index(g, MiB / 2), 0); /* halfway: the lower */
    assert_int_equal(se_param_index(g, MiB / 2 + 1), 1);
    assert_int_equal(se_param_index(g, 3 * MiB), 2); /* between 2 and 4 MiB: lower */
    assert_int_equal(se_param_index(g, 3 * MiB + 1), 3);
    assert_int_equal(se_param_index(g, 16 * MiB), 5);
    assert_int_equal(se_param_index(g, INT64_MAX), 9);
    assert_int_equal(se_param_index(g, -1), 0);
    const se_param *b = &s.param[se_space_find(&s, "native_batch")];
    assert_false(b->zero_allowed);
    for (int64_t k = 0; k < b->n_values; k++) {
        assert_int_equal(se_param_value(b, k), (int64_t)1 << k);
        assert_int_equal(se_param_index(b, (int64_t)1 << k), k);
    }
    assert_int_equal(se_param_index(b, 0), 0);
    assert_int_equal(se_param_index(b, 6), 2); /* 4 and 8: halfway, the lower */
    assert_int_equal(se_param_index(b, 7), 3);
    const se_param *l2 = &s.param[se_space_find(&s, "l2_config")];
    assert_int_equal(l2->kind, SE_PARAM_ENUM);
    assert_string_equal(l2->choice[se_param_value(l2, 2)], "shared");
    assert_int_equal(se_param_index(l2, 1), 1);
    assert_int_equal(se_param_index(l2, 7), 2);
    assert_int_equal(se_param_index(l2, -7), 0);
}

static void test_unit_round_trip(void **state)
{
    (void)state;
    uint64_t rng = 42;
    const char *names[] = {"edge", "datacenter"};
    for (int n = 0; n < 2; n++) {
        se_space s;
        load(names[n], &s);
        for (int trial = 0; trial < 2000; trial++) {
            double x[SE_MAX_PARAMS], y[SE_MAX_PARAMS];
            se_point p, q;
            for (int i = 0; i < s.n_params; i++)
                x[i] = next_unit(&rng);
            se_point_from_unit(&s, x, &p);
            for (int i = 0; i < s.n_params; i++) {
                assert_true(p.index[i] >= 0 && p.index[i] < s.param[i].n_values);
                /* x lies in its index's cell */
                assert_true(floor(x[i] * (double)s.param[i].n_values) == (double)p.index[i]);
            }
            se_point_to_unit(&s, &p, y);
            for (int i = 0; i < s.n_params; i++) /* the centre of the cell */
                assert_true(fabs(y[i] * (double)s.param[i].n_values - (double)p.index[i] - 0.5) <
                            1e-6);
            se_point_from_unit(&s, y, &q);
            assert_true(se_point_equal(&s, &p, &q));
        }
        /* The edges of the cube, and what is outside it. */
        double lo[SE_MAX_PARAMS], hi[SE_MAX_PARAMS], odd[SE_MAX_PARAMS];
        for (int i = 0; i < s.n_params; i++) {
            lo[i] = 0;
            hi[i] = 1;
            odd[i] = i % 2 ? -3 : NAN;
        }
        se_point p;
        se_point_from_unit(&s, lo, &p);
        for (int i = 0; i < s.n_params; i++)
            assert_int_equal(p.index[i], 0);
        se_point_from_unit(&s, hi, &p);
        for (int i = 0; i < s.n_params; i++)
            assert_int_equal(p.index[i], s.param[i].n_values - 1);
        se_point_from_unit(&s, odd, &p);
        for (int i = 0; i < s.n_params; i++)
            assert_int_equal(p.index[i], 0);
    }
}

/* ------------------------------------------------------------ decoding */

static void test_edge_baseline_is_eyeriss(void **state)
{
    (void)state;
    se_space s;
    load("edge", &s);
    se_point b = baseline_point(&s);
    arch_spec a, eyeriss;
    bool feasible;
    char reason[256];
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    assert_true(feasible);
    assert_string_equal(reason, "");
    arch_preset_find("eyeriss")->build(&eyeriss);
    assert_int_equal(a.technology_nm, eyeriss.technology_nm);
    assert_true(fabs(a.cycle_seconds - eyeriss.cycle_seconds) < 1e-18);
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_MAC);
    assert_int_equal(a.compute.instances, eyeriss.compute.instances);
    assert_int_equal(a.compute.mesh_x, eyeriss.compute.mesh_x);
    assert_int_equal(a.compute.mesh_y, eyeriss.compute.mesh_y);
    assert_int_equal(a.compute.mac_bits, eyeriss.compute.mac_bits);
    assert_true(a.compute.mac_pJ == eyeriss.compute.mac_pJ);
    /* The register file holds what Eyeriss's three spads hold together. */
    int64_t spad_bytes = 0;
    for (int i = 0; i < eyeriss.n_levels; i++)
        if (eyeriss.level[i].instances == eyeriss.compute.instances)
            spad_bytes += eyeriss.level[i].size_words * eyeriss.level[i].word_bits / 8;
    assert_int_equal(spad_bytes, 520);
    const arch_level *rf = level_named(&a, "RegFile");
    assert_non_null(rf);
    assert_int_equal(rf->instances, 168);
    assert_int_equal(rf->size_words * rf->word_bits / 8, spad_bytes);
    const arch_level *glb = level_named(&a, "GlobalBuffer");
    const arch_level *eglb = level_named(&eyeriss, "GlobalBuffer");
    assert_int_equal(glb->size_words, eglb->size_words);
    assert_int_equal(glb->block_size, eglb->block_size);
    assert_true(glb->multicast && glb->spatial_reduction);
    assert_int_equal(onchip_bytes(&a), onchip_bytes(&eyeriss));
    assert_true(a.dram.bandwidth_GBps == eyeriss.dram.bandwidth_GBps);
    assert_string_equal(a.dram.type, eyeriss.dram.type);
    /* The DRAM level carries the off-chip capacity: 1 GiB of 16-bit words. */
    assert_int_equal(a.level[a.n_levels - 1].cls, ARCH_CLASS_DRAM);
    assert_int_equal(a.level[a.n_levels - 1].size_words, GiB / 2);
    /* Budgets: CASCO's, and an area that leaves room above the baseline. */
    assert_true(s.limits.max_power_W == 2.0);
    assert_int_equal(s.limits.max_pes, 384);
    assert_true(s.limits.max_area_mm2 == 12.25);
    assert_int_equal(s.limits.max_onchip_bytes, 512 * KiB);
    assert_true(arch_area_mm2(&a) < 0.6 * s.limits.max_area_mm2);
    assert_true(arch_peak_power_W(&a) < s.limits.max_power_W);
}

static void test_datapath_baseline_is_tpu_v3(void **state)
{
    (void)state;
    se_space s;
    load("datacenter", &s);
    se_point b = baseline_point(&s);
    arch_spec a, tpu;
    bool feasible;
    char reason[256];
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    assert_true(feasible);
    arch_preset_find("tpu_v3")->build(&tpu);
    assert_int_equal(a.technology_nm, tpu.technology_nm);
    assert_true(fabs(a.cycle_seconds - tpu.cycle_seconds) < 1e-18);
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_SYSTOLIC);
    assert_int_equal(a.compute.instances, tpu.compute.instances);
    assert_int_equal(a.compute.rows, tpu.compute.rows);
    assert_int_equal(a.compute.cols, tpu.compute.cols);
    assert_int_equal(a.compute.mac_number, ARCH_NUMBER_BF16);
    assert_int_equal(a.compute.dataflow, tpu.compute.dataflow);
    /* FAST's TPU-v3: both cores at batch 2 x 64, 2 x 16 MiB. */
    assert_int_equal(a.native_batch, 128);
    assert_int_equal(a.native_batch, tpu.native_batch);
    const arch_level *global = level_named(&a, "GlobalMemory");
    assert_non_null(global);
    assert_int_equal(global->size_words, tpu.level[0].size_words * tpu.level[0].instances);
    assert_int_equal(global->block_size, tpu.level[0].block_size);
    assert_null(level_named(&a, "L2"));
    const arch_level *l1 = level_named(&a, "L1");
    assert_int_equal(l1->instances, 4);
    assert_int_equal(l1->size_words * 2, 64 * KiB);
    /* 2 x 16 MiB as the preset, plus the template's L1s: within 1 %. */
    assert_int_equal(onchip_bytes(&a), onchip_bytes(&tpu) + 4 * 64 * KiB);
    assert_true(fabs(arch_area_mm2(&a) / arch_area_mm2(&tpu) - 1) < 0.01);
    /* 8 GDDR6 channels, the space's most: 448 GB/s for the chip's 900 of
     * HBM2. */
    assert_string_equal(a.dram.type, "GDDR6");
    assert_int_equal(a.dram.channels, 8);
    assert_true(fabs(a.dram.bandwidth_GBps / (tpu.dram.bandwidth_GBps / 2) - 1) < 0.01);
    assert_true(a.dram.energy_pJ_per_bit == arch_dram_pJ_per_bit("GDDR6"));
    /* FAST's budgets: TPU-v3 (the chip, two cores) at 0.6x area and 0.5x
     * TDP. */
    assert_true(fabs(s.limits.max_area_mm2 - arch_area_mm2(&tpu) / 0.6) < 1e-9);
    assert_true(fabs(s.limits.max_power_W - arch_peak_power_W(&tpu) / 0.5) < 1e-9);
    assert_int_equal(s.limits.max_pes, 0);
    assert_int_equal(s.limits.max_onchip_bytes, 0);
    assert_true(arch_area_mm2(&a) < s.limits.max_area_mm2);
    assert_true(arch_peak_power_W(&a) < s.limits.max_power_W);
}

/* The datapath's structure, checked from the point's values alone. */
static void check_datapath_structure(const se_space *s, const se_point *p, const arch_spec *a)
{
    int64_t sa_x = value_of(s, p, "sa_x"), sa_y = value_of(s, p, "sa_y");
    int64_t pes = value_of(s, p, "pe_x") * value_of(s, p, "pe_y");
    bool l2 = value_of(s, p, "l2_config") != 0, global = value_of(s, p, "global_bytes") > 0;
    assert_int_equal(a->n_levels, 2 + l2 + global);
    assert_int_equal(a->compute.instances, pes);
    assert_int_equal((int64_t)a->compute.rows * a->compute.cols, sa_x * sa_y);
    arch_compute_kind kind = sa_x > 1 && sa_y > 1   ? ARCH_COMPUTE_SYSTOLIC
                             : sa_x > 1 || sa_y > 1 ? ARCH_COMPUTE_VECTOR
                                                    : ARCH_COMPUTE_MAC;
    assert_int_equal(a->compute.kind, kind);
    assert_int_equal(a->native_batch, value_of(s, p, "native_batch"));
    assert_int_equal(a->dram.channels, value_of(s, p, "dram_channels"));
    const arch_level *l1 = level_named(a, "L1");
    if (value_of(s, p, "l1_config") == 0) { /* private */
        assert_int_equal(l1->size_words_by_ds[WL_DS_INPUTS] * 2, value_of(s, p, "l1_input_bytes"));
        assert_int_equal(l1->size_words_by_ds[WL_DS_WEIGHTS] * 2,
                         value_of(s, p, "l1_weight_bytes"));
    } else {
        assert_int_equal(l1->size_words * 2, value_of(s, p, "l1_total_bytes"));
    }
    if (value_of(s, p, "l2_config") == 2)
        assert_int_equal(level_named(a, "L2")->size_words * 2,
                         value_of(s, p, "l2_total_mult") * value_of(s, p, "l1_total_bytes"));
    if (value_of(s, p, "l2_config") == 1)
        assert_int_equal(level_named(a, "L2")->size_words_by_ds[WL_DS_OUTPUTS] * 2,
                         value_of(s, p, "l2_output_mult") * value_of(s, p, "l1_output_bytes"));
}

/* Every corner of s (each parameter at its first or last index; an ENUM
 * at each of its choices) decodes to a valid design within budget, or to
 * an infeasible one with a reason.  Returns the feasible count. */
static int64_t decode_corners(const se_space *s, int64_t *n_corners)
{
    int64_t feasible_count = 0, n = 0;
    int64_t digits[SE_MAX_PARAMS] = {0};
    for (;;) {
        se_point p = {{0}};
        for (int i = 0; i < s->n_params; i++) {
            const se_param *q = &s->param[i];
            p.index[i] = q->kind == SE_PARAM_ENUM ? digits[i] : digits[i] ? q->n_values - 1 : 0;
        }
        arch_spec a;
        bool feasible;
        char reason[256] = "unset";
        se_space_decode(s, &p, &a, &feasible, reason, sizeof reason);
        n++;
        if (feasible) {
            as_status st;
            as_status_clear(&st);
            assert_int_equal(arch_validate(&a, &st), AS_OK);
            assert_string_equal(reason, "");
            assert_true(s->limits.max_area_mm2 == 0 || arch_area_mm2(&a) <= s->limits.max_area_mm2);
            assert_true(s->limits.max_power_W == 0 ||
                        arch_peak_power_W(&a) <= s->limits.max_power_W);
            assert_true(s->limits.max_onchip_bytes == 0 ||
                        onchip_bytes(&a) <= s->limits.max_onchip_bytes);
            if (s->template_kind == SE_TEMPLATE_DATAPATH)
                check_datapath_structure(s, &p, &a);
            feasible_count++;
        } else {
            assert_true(strlen(reason) > 10);
        }
        int i = 0;
        for (; i < s->n_params; i++) {
            int64_t base = s->param[i].kind == SE_PARAM_ENUM ? s->param[i].n_values : 2;
            if (++digits[i] < base)
                break;
            digits[i] = 0;
        }
        if (i == s->n_params)
            break;
    }
    *n_corners = n;
    return feasible_count;
}

static void test_corners(void **state)
{
    (void)state;
    se_space e, d;
    int64_t n;
    load("edge", &e);
    int64_t feasible = decode_corners(&e, &n);
    assert_int_equal(n, 32);
    assert_true(feasible > 0 && feasible < n);
    load("datacenter", &d);
    feasible = decode_corners(&d, &n);
    assert_int_equal(n, ((int64_t)1 << 15) * 2 * 3); /* 15 bounded, 2 enums */
    assert_true(feasible > 0 && feasible < n);
}

static void test_budgets_name_the_limit(void **state)
{
    (void)state;
    se_space s;
    load("edge", &s);
    arch_spec a;
    bool feasible;
    char reason[256];
    se_point top;
    for (int i = 0; i < s.n_params; i++)
        top.index[i] = s.param[i].n_values - 1;
    se_space_decode(&s, &top, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    char expect[128];
    snprintf(expect, sizeof expect, "area %.2f mm^2 exceeds the 12.25 mm^2 budget",
             arch_area_mm2(&a));
    assert_string_equal(reason, expect);

    /* 384 PEs with Eyeriss's memories reach the area budget; without an
     * area budget the PE limit is next, then on-chip storage. */
    se_point big = with_value(&s, baseline_point(&s), "pe_x", 32);
    big = with_value(&s, big, "pe_y", 13);
    se_space_decode(&s, &big, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_non_null(strstr(reason, "area"));
    s.limits.max_area_mm2 = 0;
    se_space_decode(&s, &big, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_string_equal(reason, "416 PEs (MACs) exceed the limit of 384");

    se_point b = baseline_point(&s);
    s.limits.max_onchip_bytes = 100000;
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    /* 168 x 520 B of register files and 108 KiB of global buffer */
    assert_string_equal(reason, "on-chip storage 197952 B exceeds the limit of 100000 B");

    s.limits.max_power_W = 0.1;
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    snprintf(expect, sizeof expect, "peak power %.3f W exceeds the 0.100 W budget",
             arch_peak_power_W(&a));
    assert_string_equal(reason, expect);

    /* An index out of range is a reason too, and reason may be NULL. */
    b.index[0] = s.param[0].n_values;
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_non_null(strstr(reason, "outside"));
    se_space_decode(&s, &b, &a, &feasible, NULL, 0);
    assert_false(feasible);

    /* A buffer narrower than its own access cannot be built: an L1 of
     * one word under 128 x 128 arrays that read 128 words at a time. */
    char path[512];
    tmp_path(path, sizeof path, "tiny_l1");
    write_text(path, "name: tiny-l1\ntemplate: datapath\nparameters: {sa_x: {}}\n"
                     "fixed: {l1_total_bytes: 2 B}\n");
    se_space tiny;
    load(path, &tiny);
    b = baseline_point(&tiny);
    se_space_decode(&tiny, &b, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_string_equal(reason, "L1 holds 1 words, less than one access of 128 words");

    se_space d;
    load("datacenter", &d);
    se_point huge = with_value(&d, baseline_point(&d), "pe_x", 256);
    se_space_decode(&d, &huge, &a, &feasible, reason, sizeof reason);
    assert_false(feasible);
    assert_non_null(strstr(reason, "mm^2 budget"));
}

/* --------------------------------------------------------------- points */

static void test_point_text(void **state)
{
    (void)state;
    se_space s;
    load("edge", &s);
    se_point b = baseline_point(&s), q;
    char text[128];
    se_point_format(&s, &b, text, sizeof text);
    assert_string_equal(text, "13,11,63,13696,65535");
    assert_true(se_point_parse(&s, text, &q));
    assert_true(se_point_equal(&s, &b, &q));
    static const char *const bad[] = {"",
                                      "13,11,63,13696",
                                      "13,11,63,13696,65535,0",
                                      "32,11,63,13696,65535",
                                      "13,11,63,13696,65536",
                                      "-1,11,63,13696,65535",
                                      " 13,11,63,13696,65535",
                                      "13,11,63,13696,65535,",
                                      "13,,63,13696,65535",
                                      "13;11;63;13696;65535",
                                      "13,11,63,13696,99999999999999999999",
                                      "0x1,11,63,13696,65535",
                                      NULL};
    for (int i = 0; bad[i]; i++)
        assert_false(se_point_parse(&s, bad[i], &q));
    assert_false(se_point_parse(&s, NULL, &q));
    /* Truncation stops at a comma, never inside a number. */
    se_point_format(&s, &b, text, 12);
    assert_string_equal(text, "13,11,63");
    assert_false(se_point_parse(&s, text, &q));
    se_point_format(&s, &b, text, 1);
    assert_string_equal(text, "");
}

static void test_params_json(void **state)
{
    (void)state;
    se_space e, d;
    load("edge", &e);
    load("datacenter", &d);
    se_point b = baseline_point(&e);
    char json[1024];
    se_point_params_json(&e, &b, json, sizeof json);
    const char *full = "{\"pe_x\": 14, \"pe_y\": 12, \"rf_bytes\": 520, \"glb_bytes\": 110592, "
                       "\"offchip_bytes\": 1073741824}";
    assert_string_equal(json, full);
    /* Every smaller buffer gets whole members and a closing brace. */
    for (size_t size = 0; size < strlen(full) + 1; size++) {
        char small[256];
        memset(small, 'x', sizeof small);
        se_point_params_json(&e, &b, small, size);
        if (size == 0) {
            assert_int_equal(small[0], 'x');
            continue;
        }
        size_t n = strlen(small);
        assert_true(n < size);
        assert_int_equal(small[size], 'x');
        if (size >= 3) {
            assert_int_equal(small[0], '{');
            assert_int_equal(small[n - 1], '}');
            assert_true(strncmp(small, full, n - 1) == 0);
        }
    }
    b = baseline_point(&d);
    se_point_params_json(&d, &b, json, sizeof json);
    assert_non_null(strstr(json, "\"l1_config\": \"shared\""));
    assert_non_null(strstr(json, "\"l2_config\": \"disabled\""));
    assert_non_null(strstr(json, "\"global_bytes\": 33554432"));
}

/* ------------------------------------------------- spaces built in code */

static void test_finish(void **state)
{
    (void)state;
    se_space s;
    as_status st;
    load("edge", &s);
    /* Reverse the parameters (baseline with them): finish restores the
     * template's order. */
    se_space r = s;
    for (int i = 0; i < s.n_params; i++) {
        r.param[i] = s.param[s.n_params - 1 - i];
        r.baseline[i] = s.baseline[s.n_params - 1 - i];
        r.param[i].n_values = 0;
    }
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&r, &st), AS_OK);
    assert_space_equal(&r, &s);

    se_space bad = s;
    bad.param[1] = bad.param[0];
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&bad, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "given twice"));

    bad = s;
    snprintf(bad.param[2].name, sizeof bad.param[2].name, "pe_z");
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&bad, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "'pe_z' is not a parameter"));

    bad = s;
    bad.param[0].stride = 3; /* 1 .. 32 is not reached by 3s */
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&bad, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "stride"));

    bad = s;
    bad.baseline[0] = 32;
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&bad, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "baseline"));

    bad = s;
    bad.n_params = 0;
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&bad, &st), AS_EINVAL);

    /* Dropping a parameter fixes it at its fixed[] value. */
    se_space sub = s;
    sub.n_params = 4; /* offchip_bytes no longer searched */
    sub.fixed[4] = 64 * MiB;
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&sub, &st), AS_OK);
    se_point b = baseline_point(&sub);
    arch_spec a;
    bool feasible;
    se_space_decode(&sub, &b, &a, &feasible, NULL, 0);
    assert_true(feasible);
    assert_int_equal(a.level[a.n_levels - 1].size_words, 32 * MiB);
    sub.fixed[4] = 3; /* not whole 16-bit words */
    as_status_clear(&st);
    assert_int_equal(se_space_finish(&sub, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "offchip_bytes"));
}

/* ----------------------------------------------------------------- files */

static void save_and_load(const se_space *s, const char *name, se_space *back)
{
    char path[512];
    as_status st;
    tmp_path(path, sizeof path, name);
    as_status_clear(&st);
    if (se_space_save(s, path, &st) != AS_OK)
        fail_msg("saving %s: %s", path, st.message);
    load(path, back);
    assert_string_equal(back->source, path);
}

static void test_yaml_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"edge", "datacenter"};
    for (int n = 0; n < 2; n++) {
        se_space s, back;
        load(names[n], &s);
        save_and_load(&s, names[n], &back);
        assert_space_equal(&back, &s);
    }

    /* A space of its own: a subset, narrowed ranges, an ENUM subset in
     * its own order, fixed values, other settings and budgets. */
    char path[512];
    tmp_path(path, sizeof path, "custom");
    write_text(path, "name: small-dp\n"
                     "template: datapath\n"
                     "technology_nm: 7\n"
                     "clock_MHz: 1234.5\n"
                     "precision: int8\n"
                     "parameters:\n"
                     "  sa_y: {min: 8, max: 64}\n"
                     "  pe_x: {max: 16}\n"
                     "  l2_config: {choices: [shared, disabled]}\n"
                     "  global_bytes: {min: 2 MiB, max: 8 MiB, zero: false}\n"
                     "  sa_x:\n"
                     "fixed:\n"
                     "  l1_total_bytes: 256 KiB\n"
                     "  l2_total_mult: 4\n"
                     "  native_batch: 8\n"
                     "constraints: {max_area_mm2: 50.5, max_pes: 100000}\n"
                     "baseline_name: mine\n"
                     "baseline: {sa_y: 32, l2_config: shared}\n");
    se_space s, back;
    load(path, &s);
    assert_int_equal(s.n_params, 5);
    assert_string_equal(s.param[0].name, "pe_x"); /* template order */
    assert_string_equal(s.param[1].name, "sa_x");
    assert_string_equal(s.param[2].name, "sa_y");
    assert_string_equal(s.param[3].name, "l2_config");
    assert_string_equal(s.param[4].name, "global_bytes");
    assert_int_equal(s.param[2].n_values, 4);
    assert_int_equal(s.param[4].n_values, 3);
    assert_string_equal(s.param[3].choice[0], "shared");
    assert_true(s.clock_hz == 1234.5e6);
    assert_int_equal(s.technology_nm, 7);
    assert_int_equal(s.precision, WL_PREC_INT8);
    assert_true(s.limits.max_area_mm2 == 50.5);
    assert_int_equal(s.limits.max_pes, 100000);
    se_space dc;
    load("datacenter", &dc);
    assert_true(s.limits.max_power_W == dc.limits.max_power_W); /* left out: the template's */
    se_point b = baseline_point(&s);
    assert_int_equal(value_of(&s, &b, "pe_x"), 2); /* template default */
    assert_int_equal(value_of(&s, &b, "sa_y"), 32);
    assert_int_equal(value_of(&s, &b, "global_bytes"), 8 * MiB); /* nearest 16 MiB */
    arch_spec a;
    bool feasible;
    char reason[256];
    se_space_decode(&s, &b, &a, &feasible, reason, sizeof reason);
    const arch_level *l2 = level_named(&a, "L2");
    assert_non_null(l2);
    assert_int_equal(l2->size_words * 2, 4 * 256 * KiB);
    assert_int_equal(level_named(&a, "L1")->size_words * 2, 256 * KiB);
    assert_int_equal(a.native_batch, 8);
    assert_int_equal(a.technology_nm, 7);
    save_and_load(&s, "custom_again", &back);
    assert_space_equal(&back, &s);
    arch_spec again;
    bool feasible_again;
    char reason_again[256];
    se_space_decode(&back, &b, &again, &feasible_again, reason_again, sizeof reason_again);
    assert_int_equal(feasible_again, feasible);
    assert_string_equal(reason_again, reason);
    assert_true(arch_area_mm2(&again) == arch_area_mm2(&a));
}

static void test_docs_equal_builtins(void **state)
{
    (void)state;
    const char *names[] = {"edge", "datacenter"};
    for (int n = 0; n < 2; n++) {
        char path[512];
        snprintf(path, sizeof path, "%s/../../docs/spaces/%s.yaml", AS_TEST_DATA_DIR, names[n]);
        se_space builtin, doc;
        load(names[n], &builtin);
        load(path, &doc);
        assert_space_equal(&doc, &builtin);
    }
}

/* A bad file and what its error must name. */
typedef struct bad_case {
    const char *text;
    int line;
    const char *key; /* appears in the message */
} bad_case;

static const bad_case BAD[] = {
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\ncolour: red\n", 4, "colour"},
    {"name: x\ntemplate: edge\nparameters:\n  pe_x: {min: 1, max: 8, step: 2}\n", 4, "step"},
    {"name: x\ntemplate: edge\nparameters:\n  pe_x: {min: 8,\n         max: 4}\n", 5,
     "parameters.pe_x.max"},
    {"name: x\ntemplate: edge\nparameters:\n  rf_bytes: {min: 16, max: 100, stride: 8}\n", 4,
     "parameters.rf_bytes.stride"},
    {"name: x\ntemplate: edge\nparameters:\n  rf_bytes: {min: 15, max: 31, stride: 8}\n", 4,
     "parameters.rf_bytes.min"},
    {"name: x\ntemplate: edge\nparameters:\n  pe_x: {}\n  pe_z: {max: 4}\n", 5, "parameters.pe_z"},
    {"name: x\ntemplate: edge\nparameters:\n  pe_x: {min: one}\n", 4, "parameters.pe_x.min"},
    {"name: x\ntemplate: edge\nparameters:\n  pe_x: [1, 8]\n", 4, "parameters.pe_x"},
    {"name: x\ntemplate: edge\nparameters:\n  glb_bytes: {max: 1 MB}\n", 4,
     "parameters.glb_bytes.max"},
    {"name: x\ntemplate: datapath\nparameters:\n  sa_x: {min: 3, max: 8}\n", 4,
     "parameters.sa_x.min"},
    {"name: x\ntemplate: datapath\nparameters:\n  pe_x: {zero: true}\n", 4, "parameters.pe_x.zero"},
    {"name: x\ntemplate: datapath\nparameters:\n  pe_x: {max: 2048}\n", 4, "parameters.pe_x.max"},
    {"name: x\ntemplate: datapath\nparameters:\n  l1_config: {choices: [private, banana]}\n", 4,
     "parameters.l1_config.choices"},
    {"name: x\ntemplate: datapath\nparameters:\n  l1_config: {choices: private}\n", 4,
     "parameters.l1_config.choices"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nbaseline:\n  pe_x: 40\n", 5,
     "baseline.pe_x"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {min: 2, max: 8, stride: 2}}\nbaseline:\n"
     "  pe_x: 3\n",
     5, "baseline.pe_x"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nbaseline:\n  pe_y: 3\n", 5, "baseline.pe_y"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nfixed:\n  pe_x: 4\n", 5, "fixed.pe_x"},
    {"name: x\ntemplate: datapath\nparameters: {pe_x: {}}\nfixed:\n  global_bytes: 3\n", 5,
     "fixed.global_bytes"},
    {"name: x\ntemplate: datapath\nparameters: {pe_x: {}}\nfixed:\n  l2_config: maybe\n", 5,
     "fixed.l2_config"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nconstraints:\n  max_power_W: -1\n", 5,
     "constraints.max_power_W"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nconstraints:\n  max_watts: 1\n", 5,
     "max_watts"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\ntechnology_nm: 3\n", 4, "technology_nm"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nclock_MHz: fast\n", 4, "clock_MHz"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nprecision: int4\n", 4, "precision"},
    {"name: x\ntemplate: cloud\nparameters: {pe_x: {}}\n", 2, "template"},
    {"name: bad name\ntemplate: edge\nparameters: {pe_x: {}}\n", 1, "name"},
    {"name: x\ntemplate: edge\nparameters: {}\n", 3, "parameters"},
    {"name: x\ntemplate: edge\nparameters: {pe_x: {}}\nbaseline_name: a:b\n", 4, "baseline_name"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char path[512], where[600];
        char name[32];
        snprintf(name, sizeof name, "bad%zu", i);
        tmp_path(path, sizeof path, name);
        write_text(path, BAD[i].text);
        se_space s;
        as_status st;
        as_status_clear(&st);
        as_code code = se_space_load(path, &s, &st);
        snprintf(where, sizeof where, "%s:%d:", path, BAD[i].line);
        if (code != AS_EINVAL || !strstr(st.message, where) || !strstr(st.message, BAD[i].key))
            fail_msg("case %zu: code %d, message '%s', expected '%s' and '%s'", i, (int)code,
                     st.message, where, BAD[i].key);
    }
    /* Missing keys and empty documents name the file. */
    char path[512];
    tmp_path(path, sizeof path, "empty");
    write_text(path, "");
    se_space s;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(se_space_load(path, &s, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, path));
    write_text(path, "name: x\nparameters: {pe_x: {}}\n");
    as_status_clear(&st);
    assert_int_equal(se_space_load(path, &s, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "template"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_load),
        cmocka_unit_test(test_int_values),
        cmocka_unit_test(test_pow2_and_enum_values),
        cmocka_unit_test(test_unit_round_trip),
        cmocka_unit_test(test_edge_baseline_is_eyeriss),
        cmocka_unit_test(test_datapath_baseline_is_tpu_v3),
        cmocka_unit_test(test_corners),
        cmocka_unit_test(test_budgets_name_the_limit),
        cmocka_unit_test(test_point_text),
        cmocka_unit_test(test_params_json),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_yaml_round_trip),
        cmocka_unit_test(test_docs_equal_builtins),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
