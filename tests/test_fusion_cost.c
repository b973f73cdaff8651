/*
 * test_fusion_cost.c -- the fused-group cost model (group.c): a hand-built
 * chain of 3x3 convolutions on a hand-built two-level architecture,
 * counted by hand (below); singleton plans cost exactly what
 * map_network_evaluate charges; a footprint that does not fit is invalid
 * with a reason; fusing MobileNetV2's conv chains cuts DRAM traffic.
 *
 * The hand-computed chain.  x [1,2,16,16] -> conv1 -> y1 -> conv2 -> y2
 * -> conv3 -> y3 (graph output), each conv 3x3, stride 1, pads 1, 2 -> 2
 * channels, no bias (36 weights), every tensor int8 (DRAM bytes =
 * elements), on-chip words of 8 bits (bytes = words), multiple_buffering
 * 2.  Tiles of 4 rows x 8 cols of the last output: 4 x 2 = 8 tiles.  A
 * conv needs rows [lo - 1, hi + 1) of its input, clipped to [0, 16).
 *
 * Rows per tile (the four row bands), cols per tile (the two col tiles):
 *   y3: [0,4) [4,8) [8,12) [12,16)     cols [0,8) [8,16)
 *   y2: [0,5) [3,9) [7,13) [11,16)     cols [0,9) [7,16)
 *   y1: [0,6) [2,10) [6,14) [10,16)    cols [0,10) [6,16)
 *   x:  [0,7) [1,11) [5,15) [9,16)     cols [0,11) [5,16)
 * Per tensor: sum of lengths / union / largest / overlap with the previous
 *   rows  y3 16/16/4/0   y2 22/16/6/2   y1 28/16/8/4   x 34/16/10/6
 *   cols  y3 16/16/8/0   y2 18/16/9/2   y1 20/16/10/4  x 22/16/11/6
 * Each output position of a conv costs 2 x 2 x 9 = 36 MACs (9216 per
 * layer).  Positions computed: recompute sum_r x sum_c, cache rows
 * union_r x sum_c, cache all union_r x union_c; x is read from DRAM over
 * the same positions (2 channels each).
 *
 * Three layers {conv1, conv2, conv3}:
 *   recompute:  conv2 22*18 = 396, conv1 28*20 = 560 positions
 *               (+140, +304 over 256): recomputed (444) * 36 = 15984 MACs;
 *               DRAM x 34*22*2 = 1496 + y3 512 + weights 108 = 2116;
 *               tiles x 10*11*2 = 220, y1 8*10*2 = 160, y2 6*9*2 = 108,
 *               y3 4*8*2 = 64: 552 words; (108 + 552) * 2 = 1320 bytes.
 *   cache rows: conv2 16*18 = 288, conv1 16*20 = 320 (+32, +64):
 *               96 * 36 = 3456; DRAM 16*22*2 = 704 + 512 + 108 = 1324;
 *               halos (overlap_r x 16 cols x 2 ch) x 192, y1 128, y2 64;
 *               (108 + 552 + 384) * 2 = 2088.
 *   cache all:  nothing recomputed; DRAM 512 + 512 + 108 = 1132; halos
 *               also overlap_c x largest rows x 2: x 6*10*2 = 120,
 *               y1 4*8*2 = 64, y2 2*6*2 = 24: 592 in all;
 *               (108 + 552 + 592) * 2 = 2504.
 * Two layers {conv1, conv2} (y2 leaves the group: conv3 reads it):
 *   tile y2 [0,4).. as y3 above, y1 as y2 above, x as y1 above.
 *   recompute:  conv1 22*18 = 396 (+140): 5040; DRAM x 28*20*2 = 1120
 *               + y2 512 + 72 = 1704; tiles x 8*10*2 = 160, y1 6*9*2 =
 *               108, y2 64: 332; (72 + 332) * 2 = 808.
 *   cache rows: conv1 16*18 = 288 (+32): 1152; DRAM 16*20*2 = 640 + 512
 *               + 72 = 1224; halos x 4*16*2 = 128, y1 2*16*2 = 64;
 *               (72 + 332 + 192) * 2 = 1192.
 *   cache all:  0; DRAM 512 + 512 + 72 = 1096; halos + x 4*8*2 = 64,
 *               y1 2*6*2 = 24: 280; (72 + 332 + 280) * 2 = 1368.
 * Weights streamed: with the buffer at 1200 words the three-layer
 * recompute tile needs 1320 with weights, 552 * 2 = 1104 without; the
 * weights are then read once per tile: DRAM 2116 - 108 + 8 * 108 = 2872.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fusion/fusion_private.h"
#include "test_check.h"

#define TEST_BUDGET 500

/* A two-level design: an 8-bit buffer of `words` (double buffered) over
 * 4 MAC units, and an LPDDR4 DRAM moving one byte per cycle. */
static void tiny_arch(arch_spec *a, int64_t words)
{
    memset(a, 0, sizeof *a);
    strcpy(a->name, "tiny");
    a->technology_nm = 45;
    a->cycle_seconds = 1e-9;
    a->native_batch = 1;
    a->n_levels = 2;
    a->level[0] = (arch_level){.name = "Buffer",
                               .cls = ARCH_CLASS_SRAM,
                               .size_words = words,
                               .word_bits = 8,
                               .block_size = 1,
                               .cluster_size = 1,
                               .instances = 1,
                               .mesh_x = 1,
                               .mesh_y = 1,
                               .multiple_buffering = 2,
                               .multicast = true};
    a->level[1] = (arch_level){.name = "DRAM",
                               .cls = ARCH_CLASS_DRAM,
                               .word_bits = 8,
                               .block_size = 1,
                               .cluster_size = 1,
                               .instances = 1,
                               .mesh_x = 1,
                               .mesh_y = 1,
                               .multiple_buffering = 1,
                               .shared_bandwidth = 1};
    strcpy(a->dram.type, "LPDDR4");
    a->dram.channels = 1;
    a->dram.bandwidth_GBps = 1.0;
    a->compute = (arch_compute){.name = "MAC",
                                .kind = ARCH_COMPUTE_MAC,
                                .instances = 4,
                                .mesh_x = 2,
                                .mesh_y = 2,
                                .rows = 1,
                                .cols = 1,
                                .mac_bits = 8};
    arch_apply_tables(a);
    as_status st = {0};
    check(arch_validate(a, &st), &st);
}

/* x [1,2,16,16] -> three 3x3 convs (pads 1, 2 -> 2 channels), int8. */
static wl_graph *conv_chain(void)
{
    static const int64_t act[4] = {1, 2, 16, 16}, wdims[4] = {2, 2, 3, 3};
    as_status st = {0};
    wl_graph *g = wl_graph_new("chain", "test:chain");
    int32_t t = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_F32, 4, act, &st);
    wl_add_graph_input(g, t);
    wl_attrs attrs;
    wl_attrs_default(&attrs, WL_OP_CONV);
    for (int i = 0; i < 4; i++)
        attrs.pads[i] = 1;
    for (int k = 1; k <= 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", k);
        int32_t w = wl_add_tensor(g, name, WL_TENSOR_WEIGHT, WL_DTYPE_F32, 4, wdims, &st);
        snprintf(name, sizeof name, "y%d", k);
        int32_t y = wl_add_tensor(g, name, WL_TENSOR_ACTIVATION, WL_DTYPE_F32, 4, act, &st);
        snprintf(name, sizeof name, "conv%d", k);
        if (w < 0 || y < 0 ||
            wl_add_op(g, WL_OP_CONV, name, "Conv", 2, (int32_t[]){t, w}, 1, &y, &attrs, &st) < 0)
            fail_msg("%s", st.message);
        t = y;
    }
    wl_add_graph_output(g, t);
    check(wl_graph_infer(g, &st), &st);
    wl_set_precision(g, WL_PREC_INT8);
    return g;
}

static fu_evaluator *evaluator(const wl_graph *g, const arch_spec *a)
{
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.budget_per_problem = TEST_BUDGET;
    o.search.threads = 1;
    /* The hand-computed figures are for weights read from DRAM; resident
     * weights are test_resident.c's. */
    o.weights = MAP_WEIGHTS_STREAMED;
    fu_evaluator *e = NULL;
    as_status st = {0};
    check(fu_evaluator_new(&e, g, a, &o, &st), &st);
    return e;
}

typedef struct expected {
    int64_t recomputed_macs, dram_bytes, onchip_bytes;
} expected;

/* An energy split adds up: its parts to total, its levels to the on-chip
 * part (mapping.h, map_layer_result; fusion.h, fu_group_cost). */
static void check_split(const double *by_component, const double *by_level, double total)
{
    double parts = 0, levels = 0;
    for (int k = 0; k < MAP_N_COMPONENTS; k++) {
        assert_true(by_component[k] >= 0);
        parts += by_component[k];
    }
    for (int l = 0; l < ARCH_MAX_LEVELS; l++)
        levels += by_level[l];
    assert_close(parts, total);
    assert_close(levels, by_component[MAP_COMP_ONCHIP]);
}

/* The group ops[0 .. n) at tile 4 x 8 in each halo mode against want[]. */
static void check_modes(fu_evaluator *e, const arch_spec *a, const int32_t *ops, int32_t n,
                        const expected want[3])
{
    for (int h = 0; h < 3; h++) {
        fu_group_cost c;
        as_status st = {0};
        check(fu_group_evaluate_tile(e, ops, n, (fu_tile){4, 8}, (fu_halo_mode)h, &c, &st), &st);
        if (!c.valid)
            fail_msg("mode %d: %s", h, c.reason);
        assert_int_equal(c.n_tiles, 8);
        assert_int_equal(c.macs, 9216 * n);
        assert_int_equal(c.recomputed_macs, want[h].recomputed_macs);
        assert_int_equal(c.dram_bytes, want[h].dram_bytes);
        assert_int_equal(c.onchip_bytes, want[h].onchip_bytes);
        /* Energy and cycles are composed as stated. */
        assert_close(c.dram_energy_pJ, (double)c.dram_bytes * 8 * a->dram.energy_pJ_per_bit);
        assert_close(c.energy_pJ, c.onchip_energy_pJ + c.dram_energy_pJ);
        check_split(c.energy_by_component_pJ, c.onchip_level_pJ, c.energy_pJ);
        assert_true(c.onchip_energy_pJ > 0);
        assert_true(c.cycles >= c.dram_bytes); /* one byte per cycle */
        assert_true(c.cycles >= (9216 * n + c.recomputed_macs) / 4);
    }
}

static void test_hand_computed_chain(void **state)
{
    (void)state;
    wl_graph *g = conv_chain();
    arch_spec a;
    tiny_arch(&a, 65536);
    fu_evaluator *e = evaluator(g, &a);
    static const expected three[3] = {{15984, 2116, 1320}, {3456, 1324, 2088}, {0, 1132, 2504}};
    static const expected two[3] = {{5040, 1704, 808}, {1152, 1224, 1192}, {0, 1096, 1368}};
    check_modes(e, &a, (int32_t[]){0, 1, 2}, 3, three);
    check_modes(e, &a, (int32_t[]){1, 0}, 2, two); /* any order */

    /* The searched group is one of the candidates, no worse in EDP. */
    fu_group_cost best, c;
    as_status st = {0};
    check(fu_group_evaluate(e, (int32_t[]){0, 1, 2}, 3, &best, &st), &st);
    check(fu_group_evaluate_tile(e, (int32_t[]){0, 1, 2}, 3, (fu_tile){4, 8}, FU_HALO_CACHE_ALL, &c,
                                 &st),
          &st);
    assert_true(best.valid);
    assert_true(best.energy_pJ * (double)best.cycles <= c.energy_pJ * (double)c.cycles);
    assert_true(best.dram_bytes < 3 * (512 + 512 + 36)); /* below layer by layer's floor */
    fu_evaluator_free(e);
    wl_graph_free(g);
}

/* Weights that do not fit with the tiles are streamed once per tile; a
 * footprint that fits neither way is invalid, with a reason, and so is
 * a plan using it. */
static void test_footprint_limits(void **state)
{
    (void)state;
    wl_graph *g = conv_chain();
    arch_spec a;
    as_status st = {0};
    fu_group_cost c;
    int32_t all[3] = {0, 1, 2};

    tiny_arch(&a, 1200);
    fu_evaluator *e = evaluator(g, &a);
    check(fu_group_evaluate_tile(e, all, 3, (fu_tile){4, 8}, FU_HALO_RECOMPUTE, &c, &st), &st);
    assert_true(c.valid);
    assert_int_equal(c.onchip_bytes, 1104);
    assert_int_equal(c.dram_bytes, 2872);
    fu_evaluator_free(e);

    tiny_arch(&a, 64);
    e = evaluator(g, &a);
    check(fu_group_evaluate(e, all, 3, &c, &st), &st);
    assert_false(c.valid);
    assert_non_null(strstr(c.reason, "does not fit"));
    assert_non_null(strstr(c.reason, "Buffer"));
    fu_plan p;
    fu_plan_cost pc;
    check(fu_plan_init(&p, g, &st), &st);
    p.group[1] = p.group[2] = 0;
    p.n_groups = 1;
    assert_true(fu_plan_valid(g, &p, NULL, 0));
    check(fu_plan_evaluate(e, &p, &pc, &st), &st);
    assert_false(pc.valid);
    assert_non_null(strstr(pc.reason, "group 0"));
    fu_plan_cost_free(&pc);
    fu_plan_free(&p);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

static wl_graph *zoo(const char *name)
{
    as_status st = {0};
    wl_graph *g = NULL;
    check(wl_zoo_build(name, &g, &st), &st);
    return g;
}

static void load_arch(const char *preset, arch_spec *a)
{
    as_status st = {0};
    check(arch_load(preset, a, &st), &st);
}

/* The layer-by-layer plan costs what map_network_evaluate charges, in
 * total and layer by layer. */
static void test_singletons_equal_network(void **state)
{
    (void)state;
    wl_graph *g = zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    map_network_options no;
    map_network_options_default(&no);
    no.budget_per_problem = TEST_BUDGET;
    no.search.threads = 1;
    map_network_result r;
    as_status st = {0};
    check(map_network_evaluate(g, &a, &no, &r, &st), &st);

    fu_evaluator *e = evaluator(g, &a);
    fu_plan p;
    fu_plan_cost c;
    check(fu_plan_init(&p, g, &st), &st);
    check(fu_plan_evaluate(e, &p, &c, &st), &st);
    assert_true(c.valid);
    assert_int_equal(c.n_groups, r.n_layers);
    assert_int_equal(c.cycles, r.cycles);
    assert_int_equal(c.dram_bytes, r.dram_bytes);
    assert_int_equal(c.macs, r.macs);
    assert_int_equal(c.recomputed_macs, 0);
    assert_close(c.energy_pJ, r.energy_pJ);
    assert_close(c.dram_energy_pJ, r.energy_by_component_pJ[MAP_COMP_DRAM]);
    assert_close(c.latency_s, r.latency_s);
    assert_close(c.edp_J_cycle, r.edp_J_cycle);
    for (int32_t i = 0; i < r.n_layers; i++) { /* layers are in topological order, as groups */
        assert_int_equal(p.group[r.layers[i].op], i);
        assert_int_equal(c.groups[i].cycles, r.layers[i].cycles);
        assert_int_equal(c.groups[i].dram_bytes, r.layers[i].dram_bytes);
        assert_close(c.groups[i].energy_pJ, r.layers[i].energy_pJ);
        check_split(r.layers[i].energy_by_component_pJ, r.layers[i].onchip_level_pJ,
                    r.layers[i].energy_pJ);
        for (int k = 0; k < MAP_N_COMPONENTS; k++)
            assert_close(c.groups[i].energy_by_component_pJ[k],
                         r.layers[i].energy_by_component_pJ[k]);
        for (int l = 0; l < ARCH_MAX_LEVELS; l++)
            assert_close(c.groups[i].onchip_level_pJ[l], r.layers[i].onchip_level_pJ[l]);
    }
    check_split(r.energy_by_component_pJ, r.onchip_level_pJ, r.energy_pJ);
    check_split(c.energy_by_component_pJ, c.onchip_level_pJ, c.energy_pJ);
    fu_plan_cost_free(&c);
    fu_plan_free(&p);
    fu_evaluator_free(e);
    map_network_free(&r);
    wl_graph_free(g);
}

/* The chain from compute op o to the next compute op, through ops that
 * are their producer's only consumer; its length into ops (0 when the
 * chain breaks first). */
static int32_t conv_chain_from(const wl_graph *g, int32_t o, int32_t *ops)
{
    int32_t n = 0;
    ops[n++] = o;
    for (;;) {
        int32_t t = g->ops[o].outputs[0];
        if (wl_consumer_count(g, t) != 1 || n >= 8)
            return 0;
        o = wl_consumer_list(g, t)[0];
        if (!fu_op_in_plan(g, o))
            return 0;
        ops[n++] = o;
        if (wl_op_kind_category(g->ops[o].kind) == WL_CAT_COMPUTE)
            return n;
    }
}

/* Fusing consecutive convolutions of MobileNetV2 (with the ops between
 * them) moves fewer DRAM bytes than running them layer by layer, group by
 * group and for the whole plan. */
static void test_mobilenet_fusion_cuts_dram(void **state)
{
    (void)state;
    wl_graph *g = zoo("mobilenet_v2");
    arch_spec a;
    load_arch("eyeriss", &a);
    fu_evaluator *e = evaluator(g, &a);
    as_status st = {0};
    fu_plan p, base;
    check(fu_plan_init(&p, g, &st), &st);
    check(fu_plan_init(&base, g, &st), &st);
    int32_t fused = 0, ops[8];
    for (int32_t k = 0; k < g->n_order && fused < 8; k++) {
        int32_t o = g->order[k];
        if (p.group[o] != base.group[o] || wl_op_kind_category(g->ops[o].kind) != WL_CAT_COMPUTE)
            continue;
        int32_t n = conv_chain_from(g, o, ops);
        if (n < 2 || p.group[ops[n - 1]] != base.group[ops[n - 1]])
            continue;
        fu_group_cost group, one;
        check(fu_group_evaluate(e, ops, n, &group, &st), &st);
        if (!group.valid)
            fail_msg("%s: %s", g->ops[o].name, group.reason);
        check_split(group.energy_by_component_pJ, group.onchip_level_pJ, group.energy_pJ);
        int64_t apart = 0;
        for (int32_t i = 0; i < n; i++) {
            check(fu_group_evaluate(e, &ops[i], 1, &one, &st), &st);
            apart += one.dram_bytes;
        }
        assert_true(group.dram_bytes < apart);
        for (int32_t i = 1; i < n; i++)
            p.group[ops[i]] = p.group[ops[0]];
        fused++;
    }
    assert_int_equal(fused, 8);
    fu_plan_canonicalize(g, &p);
    char reason[160];
    assert_true(fu_plan_valid(g, &p, reason, sizeof reason));
    fu_plan_cost c, cb;
    check(fu_plan_evaluate(e, &p, &c, &st), &st);
    check(fu_plan_evaluate(e, &base, &cb, &st), &st);
    assert_true(c.valid && cb.valid);
    assert_true(c.dram_bytes < cb.dram_bytes);
    assert_true(c.op_intensity > cb.op_intensity);
    assert_int_equal(c.macs, cb.macs);
    check_split(c.energy_by_component_pJ, c.onchip_level_pJ, c.energy_pJ);
    fu_plan_cost_free(&c);
    fu_plan_cost_free(&cb);
    fu_plan_free(&p);
    fu_plan_free(&base);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

/* Groups evaluated from two threads at once (fresh caches, so both map
 * and store concurrently) cost what one thread finds. */
static void test_threads_agree(void **state)
{
    (void)state;
    wl_graph *g = zoo("mobilenet_v2");
    arch_spec a;
    load_arch("eyeriss", &a);
    int32_t work[512], n = 0;
    for (int32_t k = 0; k < g->n_order && n < 40; k++)
        if (fu_op_in_plan(g, g->order[k]))
            work[n++] = g->order[k];
    fu_group_cost serial[40], parallel[40];
    fu_evaluator *e = evaluator(g, &a);
    for (int32_t i = 0; i + 2 <= n; i++) {
        as_status st = {0};
        check(fu_group_evaluate(e, &work[i], 2, &serial[i], &st), &st);
    }
    fu_evaluator_free(e);
    e = evaluator(g, &a);
    int failures = 0;
#pragma omp parallel for num_threads(2) schedule(dynamic, 1) reduction(+ : failures)
    for (int32_t i = 0; i < 2 * (n - 1); i++) { /* every group twice */
        as_status st = {0};
        int32_t at = i % (n - 1);
        failures += fu_group_evaluate(e, &work[at], 2, &parallel[at], &st) != AS_OK;
    }
    assert_int_equal(failures, 0);
    for (int32_t i = 0; i + 2 <= n; i++) {
        assert_int_equal(parallel[i].valid, serial[i].valid);
        assert_int_equal(parallel[i].cycles, serial[i].cycles);
        assert_int_equal(parallel[i].dram_bytes, serial[i].dram_bytes);
        assert_true(parallel[i].energy_pJ == serial[i].energy_pJ);
    }
    fu_evaluator_free(e);
    wl_graph_free(g);
}

/* Bad groups are errors naming the op; bad options are refused. */
static void test_bad_input(void **state)
{
    (void)state;
    wl_graph *g = conv_chain();
    arch_spec a;
    tiny_arch(&a, 65536);
    fu_evaluator *e = evaluator(g, &a);
    fu_group_cost c;
    as_status st = {0};
    assert_int_equal(fu_group_evaluate(e, (int32_t[]){0, 0}, 2, &c, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "twice"));
    as_status_clear(&st);
    assert_int_equal(fu_group_evaluate(e, (int32_t[]){0, 9}, 2, &c, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "op 9"));
    as_status_clear(&st);
    assert_int_equal(fu_group_evaluate(e, NULL, 0, &c, &st), AS_EINVAL);
    fu_evaluator_free(e);

    fu_cost_options o;
    fu_cost_options_default(&o);
    assert_int_equal(o.onchip_level, -1);
    o.onchip_level = 1; /* the DRAM */
    as_status_clear(&st);
    assert_int_equal(fu_evaluator_new(&e, g, &a, &o, &st), AS_EINVAL);
    assert_null(e);
    assert_non_null(strstr(st.message, "onchip_level 1"));
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed_chain),
        cmocka_unit_test(test_footprint_limits),
        cmocka_unit_test(test_singletons_equal_network),
        cmocka_unit_test(test_mobilenet_fusion_cuts_dram),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
