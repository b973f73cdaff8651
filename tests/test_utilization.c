/*
 * test_utilization.c -- every compute resource of every preset is usable
 * by the mapper: vector lanes, systolic arrays and multi-core fanouts are
 * spatial levels the map space unrolls over (padded where factors do not
 * divide), so a large 1x1 convolution and a large GEMM (every dimension
 * >= 256) mapped by the default mapper keep at least half of the preset's
 * MACs busy.
 *
 * Utilisation is map_eval.utilization: MACs over peak MACs per cycle times
 * cycles, the cycles stretched by every level's bandwidth.  Each problem
 * is mapped twice per preset: with the preset's DRAM bandwidth unlimited
 * (every operand still comes from DRAM and the tiles must fit the
 * buffers), where it must reach 50 %; and on the preset as it is, where it
 * must reach 50 % of what the DRAM link allows -- the Edge TPU's host link
 * moves 1 byte per cycle against 4096 MACs, so no layer read from and
 * written back to host memory can use more than ~5 % of its array, whatever
 * the mapping.  Depthwise convolutions unroll their groups over vector
 * lanes (test_depthwise_on_lanes); group packing on systolic arrays is
 * tested in test_systolic.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "mapping/mapping.h"

#define MIN_UTILIZATION 0.5

/* The problem of a one-op graph: a 1x1 convolution (C in, M out channels,
 * H x W pixels) when k_h = 1, else a k_h x k_h convolution of `group`
 * groups; or a MatMul rows x inner times inner x cols (weights). */
static void conv_problem(int64_t c, int64_t m, int64_t hw, int64_t k_h, int64_t group,
                         wl_problem *p)
{
    wl_graph *g = wl_graph_new("layer", "test");
    int64_t in_hw = hw + k_h - 1;
    int32_t x = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_I8, 4,
                              (int64_t[]){1, c, in_hw, in_hw}, NULL);
    int32_t w = wl_add_tensor(g, "w", WL_TENSOR_WEIGHT, WL_DTYPE_I8, 4,
                              (int64_t[]){m, c / group, k_h, k_h}, NULL);
    int32_t y = wl_add_tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_I8, 4,
                              (int64_t[]){1, m, hw, hw}, NULL);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    a.group = group;
    int32_t op = wl_add_op(g, WL_OP_CONV, "conv", NULL, 2, (int32_t[]){x, w}, 1, &y, &a, NULL);
    assert_true(op >= 0);
    assert_int_equal(wl_op_problem(g, op, p, NULL), AS_OK);
    wl_graph_free(g);
}

static void gemm_problem(int64_t rows, int64_t inner, int64_t cols, wl_problem *p)
{
    wl_graph *g = wl_graph_new("layer", "test");
    int32_t x =
        wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_I8, 2, (int64_t[]){rows, inner}, NULL);
    int32_t w =
        wl_add_tensor(g, "w", WL_TENSOR_WEIGHT, WL_DTYPE_I8, 2, (int64_t[]){inner, cols}, NULL);
    int32_t y =
        wl_add_tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_I8, 2, (int64_t[]){rows, cols}, NULL);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_MATMUL);
    int32_t op = wl_add_op(g, WL_OP_MATMUL, "gemm", NULL, 2, (int32_t[]){x, w}, 1, &y, &a, NULL);
    assert_true(op >= 0);
    assert_int_equal(wl_op_problem(g, op, p, NULL), AS_OK);
    wl_graph_free(g);
}

/* Map p on a as `accelsearch map` does by default (the heuristic to its
 * own end, one thread); the best mapping and its eval. */
static void map_default(const arch_spec *a, const wl_problem *p, map_mapping *m, map_eval *e)
{
    map_search_options o;
    map_search_options_default(&o);
    static map_problem_outcome out;
    map_problem_search_run(a, p, &o, 1, map_effective_budget(&o, 0), NULL, &out);
    assert_int_equal(out.code, AS_OK);
    assert_true(out.found);
    *m = out.mapping;
    *e = out.eval;
}

/* The preset with its DRAM bandwidth unlimited (see the top). */
static void preset_without_dram_roofline(const arch_preset *preset, arch_spec *a)
{
    preset->build(a);
    arch_level *dram = &a->level[a->n_levels - 1];
    dram->read_bandwidth = dram->write_bandwidth = dram->shared_bandwidth = 0;
}

/* The utilisation the preset's DRAM link allows at best: ideal compute
 * cycles over the larger of them and the time to move every operand across
 * the link once (1 when the link is unlimited). */
static double roofline_utilization(const arch_spec *a, const wl_problem *p)
{
    const arch_level *dram = &a->level[a->n_levels - 1];
    double words = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        words += (double)wl_dataspace_elements(p, (wl_dataspace_id)ds);
    double ideal = (double)wl_problem_macs(p) / map_peak_macs_per_cycle(a);
    double link = dram->shared_bandwidth > 0 ? words / dram->shared_bandwidth : 0;
    return ideal >= link ? 1.0 : ideal / link;
}

/* Map p on a; its utilisation must reach `floor` of what the DRAM link
 * allows. */
static void check_utilization_at(const char *preset, const char *what, const wl_problem *p,
                                 const arch_spec *a, double floor)
{
    map_mapping m;
    map_eval e;
    map_default(a, p, &m, &e);
    assert_int_equal(e.validity, MAP_VALID);
    /* map_eval.utilization of a padded problem counts the padding's MACs;
     * what is asserted is the useful part: p's own MACs. */
    double useful = (double)wl_problem_macs(p) / map_peak_macs_per_cycle(a) / (double)e.cycles;
    assert_true(useful <= e.utilization * (1 + 1e-12));
    double bound = roofline_utilization(a, p);
    printf("  %-11s %-26s utilization %5.1f %% (useful %5.1f %%, link allows %5.1f %%)\n", preset,
           what, 100 * e.utilization, 100 * useful, 100 * bound);
    if (useful < floor * bound)
        fail_msg("%s, %s: useful utilization %.3f below %.2f x %.3f", preset, what, useful, floor,
                 bound);
}

static void check_utilization(const char *preset, const char *what, const wl_problem *p,
                              const arch_spec *a)
{
    check_utilization_at(preset, what, p, a, MIN_UTILIZATION);
}

/* Every preset: a 1x1 convolution 512 -> 512 channels over 28 x 28 pixels
 * and a GEMM 1024 x 512 x 512 reach half the peak MACs per cycle with the
 * DRAM link unlimited, and half of what the link allows with it. */
static void test_every_preset(void **state)
{
    (void)state;
    wl_problem conv, gemm;
    conv_problem(512, 512, 28, 1, 1, &conv);
    gemm_problem(1024, 512, 512, &gemm);
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        preset_without_dram_roofline(&presets[i], &a);
        assert_true(roofline_utilization(&a, &conv) == 1.0);
        check_utilization(presets[i].name, "conv 1x1 512x512 28x28", &conv, &a);
        check_utilization(presets[i].name, "gemm 1024x512x512", &gemm, &a);
        presets[i].build(&a);
        check_utilization(presets[i].name, "conv, preset's DRAM", &conv, &a);
        check_utilization(presets[i].name, "gemm, preset's DRAM", &gemm, &a);
    }
}

/* A GEMM 257 x 257 x 257 (a prime in every dimension: no factor but 1
 * fits any fanout, so unpadded at most 1 of each level's children works)
 * on every preset: the mapper pads the dimensions to friendlier bounds
 * (FAST), at the lanes' fanout too, and keeps a third of the MACs busy,
 * the padding's zeros counted as waste (257 -> 320 for 64 lanes alone
 * wastes half of a cube).  Systolic presets are left out: inside an array
 * the fold model already runs a partial fold as a full one, and a 257-cube
 * is too small to amortise a 128 x 128 array's fill and drain. */
static void test_awkward_dimensions_padded(void **state)
{
    (void)state;
    wl_problem gemm;
    gemm_problem(257, 257, 257, &gemm);
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        preset_without_dram_roofline(&presets[i], &a);
        if (a.compute.kind != ARCH_COMPUTE_SYSTOLIC)
            check_utilization_at(presets[i].name, "gemm 257x257x257", &gemm, &a, 1.0 / 3);
    }
}

/* Depthwise 3 x 3 over 256 channels of 28 x 28 on the vector presets: the
 * groups (channels) unroll over the lanes like any other dimension, so half
 * the lanes stay busy with the DRAM link unlimited. */
static void test_depthwise_on_lanes(void **state)
{
    (void)state;
    wl_problem dw;
    conv_problem(256, 256, 28, 3, 256, &dw);
    assert_int_equal(dw.bound[WL_DIM_G], 256);
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        arch_spec a;
        preset_without_dram_roofline(&presets[i], &a);
        if (a.compute.kind == ARCH_COMPUTE_VECTOR)
            check_utilization(presets[i].name, "depthwise 3x3 256 28x28", &dw, &a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_preset),
        cmocka_unit_test(test_depthwise_on_lanes),
        cmocka_unit_test(test_awkward_dimensions_padded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
