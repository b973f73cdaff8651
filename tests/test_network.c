/*
 * test_network.c -- layer-by-layer network evaluation (map_network_*):
 * totals are the sums of the layers, identical layers share one problem
 * class (counted by hand for ResNet-18 and ResNet-50), bf16 halves DRAM
 * traffic, the stop flag interrupts, one and two threads agree, and a
 * non-compute layer costs what the stated vector/DRAM model gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "mapping/mapping.h"
#include "truth.h"
#include "test_check.h"

/* Small budgets keep each run well under a second (sanitizers included). */
#define TEST_BUDGET 1000

static void load_arch(const char *preset, arch_spec *a)
{
    as_status st = {0};
    if (arch_load(preset, a, &st) != AS_OK)
        fail_msg("%s", st.message);
}

static void options(map_network_options *o, int threads)
{
    map_network_options_default(o);
    o->search.threads = threads;
    o->budget_per_problem = TEST_BUDGET;
}

static void evaluate(const wl_graph *g, const arch_spec *a, const map_network_options *o,
                     map_network_result *r)
{
    as_status st = {0};
    if (map_network_evaluate(g, a, o, r, &st) != AS_OK)
        fail_msg("%s", st.message);
}

/* Relative closeness for sums of doubles taken in different orders. */
/* Totals are the layer sums; every compute op is a mapped layer; the
 * components add up; latency and EDP follow from cycles and energy. */
static void test_totals_are_layer_sums(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    map_network_options o;
    options(&o, 1);
    map_network_result r;
    evaluate(g, &a, &o, &r);

    int64_t cycles = 0, dram = 0, macs = 0;
    double energy = 0, components = 0;
    int32_t compute = 0;
    for (int32_t i = 0; i < r.n_layers; i++) {
        const map_layer_result *l = &r.layers[i];
        cycles += l->cycles;
        dram += l->dram_bytes;
        macs += l->macs;
        energy += l->energy_pJ;
        double sum = 0;
        for (int c = 0; c < MAP_N_COMPONENTS; c++)
            sum += l->energy_by_component_pJ[c];
        assert_close(sum, l->energy_pJ);
        components += sum;
        assert_true(l->mapped);
        assert_true(l->cycles > 0);
        if (l->problem_class >= 0) {
            compute++;
            assert_true(l->padded_macs >= l->macs);
            /* Every weight is read and every output written at least once
             * (not every input: a strided 1x1 conv skips pixels). */
            wl_op_stats s;
            wl_op_stats_get(g, l->op, &s);
            assert_true(l->dram_bytes >= s.weight_bytes + s.output_bytes);
            assert_true(l->utilization > 0 && l->utilization <= 1.0);
        }
    }
    assert_int_equal(cycles, r.cycles);
    assert_int_equal(dram, r.dram_bytes);
    assert_int_equal(macs, r.macs);
    assert_close(energy, r.energy_pJ);
    assert_close(components, r.energy_pJ);
    assert_false(r.interrupted);
    assert_int_equal(r.n_unmapped, 0);

    /* ResNet-18: 20 convolutions and the classifier; 1.814 GMACs (torchvision). */
    assert_int_equal(compute, 21);
    assert_int_equal(r.macs, 1814073344);
    assert_close(r.latency_s, (double)r.cycles * a.cycle_seconds);
    assert_close(r.edp_J_cycle, r.energy_pJ * 1e-12 * (double)r.cycles);
    assert_close(r.op_intensity, 2.0 * (double)r.macs / (double)r.dram_bytes);
    assert_true(r.mappings_evaluated >= r.n_distinct_problems);

    /* Per op type: the same totals, most cycles first. */
    map_op_type_total t[WL_OP_COUNT];
    int n = map_network_by_op_type(g, &r, t);
    int64_t type_cycles = 0;
    int32_t type_layers = 0;
    for (int i = 0; i < n; i++) {
        type_cycles += t[i].cycles;
        type_layers += t[i].n_layers;
        if (i > 0)
            assert_true(t[i - 1].cycles >= t[i].cycles);
        if (t[i].kind == WL_OP_CONV)
            assert_int_equal(t[i].n_layers, 20);
    }
    assert_int_equal(type_cycles, r.cycles);
    assert_int_equal(type_layers, r.n_layers);
    map_network_free(&r);
    wl_graph_free(g);
}

/*
 * Problem classes, counted by hand.  ResNet-18 (21 compute layers): conv1;
 * the four 3x3 64->64 convs of layer1; in each of layer2..4 the strided
 * 3x3, the strided 1x1 downsample and the three identical 3x3 convs; the
 * classifier: 1 + 1 + 3 * 3 + 1 = 12.  ResNet-50 v1.5 (54): conv1; layer1
 * 1x1 64->64, 3x3 64->64, 1x1 64->256 (= the downsample), 1x1 256->64;
 * layer2..4 each the first block's 1x1 reduce, strided 3x3, 1x1 expand and
 * strided downsample, then the other blocks' 1x1 reduce and 3x3; the
 * classifier: 1 + 4 + 3 * 6 + 1 = 24.  A stop flag raised beforehand
 * counts the classes without searching any.
 */
static void test_identical_layers_share_a_problem(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        int32_t compute_layers, classes;
    } cases[] = {{"resnet18", 21, 12}, {"resnet50", 54, 24}};
    arch_spec a;
    load_arch("gemmini", &a);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        wl_graph *g = truth_build_zoo(cases[k].model);
        volatile int stop = 1;
        map_network_options o;
        options(&o, 1);
        o.stop_flag = &stop;
        map_network_result r;
        evaluate(g, &a, &o, &r);
        assert_int_equal(r.n_distinct_problems, cases[k].classes);
        assert_true(r.interrupted);
        assert_int_equal(r.n_unmapped, cases[k].compute_layers);
        assert_int_equal(r.mappings_evaluated, 0);
        /* Layers of one class have the same problem bounds. */
        int32_t first_of[64];
        for (int c = 0; c < 64; c++)
            first_of[c] = -1;
        for (int32_t i = 0; i < r.n_layers; i++) {
            const map_layer_result *l = &r.layers[i];
            if (l->problem_class < 0)
                continue;
            assert_false(l->mapped);
            assert_int_equal(l->cycles, 0);
            assert_in_range(l->problem_class, 0, cases[k].classes - 1);
            if (first_of[l->problem_class] < 0)
                first_of[l->problem_class] = i;
            const wl_problem *p = &r.layers[first_of[l->problem_class]].problem;
            assert_memory_equal(l->problem.bound, p->bound, sizeof p->bound);
        }
        map_network_free(&r);
        wl_graph_free(g);
    }
}

/* bf16 tensors move exactly half the DRAM bytes of fp32 ones (every
 * tensor of ResNet-18 the layers touch is a float tensor). */
static void test_bf16_halves_dram_bytes(void **state)
{
    (void)state;
    arch_spec a;
    load_arch("eyeriss", &a);
    map_network_options o;
    options(&o, 1);
    map_network_result r[2];
    static const wl_precision precision[2] = {WL_PREC_FP32, WL_PREC_BF16};
    for (int i = 0; i < 2; i++) {
        wl_graph *g = truth_build_zoo("resnet18");
        wl_set_precision(g, precision[i]);
        evaluate(g, &a, &o, &r[i]);
        wl_graph_free(g);
    }
    assert_int_equal(r[0].dram_bytes, 2 * r[1].dram_bytes);
    assert_close(r[0].energy_by_component_pJ[MAP_COMP_DRAM],
                 2 * r[1].energy_by_component_pJ[MAP_COMP_DRAM]);
    assert_int_equal(r[0].n_distinct_problems, r[1].n_distinct_problems);
    for (int i = 0; i < 2; i++)
        map_network_free(&r[i]);
}

typedef struct progress_log {
    volatile int stop;
    int32_t calls, last_done, total;
} progress_log;

/* Raise the stop flag after the first distinct problem. */
static void stop_after_first(void *user, int32_t done, int32_t total)
{
    progress_log *log = user;
    log->calls++;
    log->last_done = done;
    log->total = total;
    log->stop = 1;
}

static void test_stop_flag_interrupts(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    progress_log log = {0};
    map_network_options o;
    options(&o, 1);
    o.stop_flag = &log.stop;
    o.progress = stop_after_first;
    o.progress_user = &log;
    map_network_result r;
    evaluate(g, &a, &o, &r);
    assert_true(r.interrupted);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.last_done, 1);
    assert_int_equal(log.total, 12);
    /* One class mapped: conv1, the only layer of its class. */
    int32_t mapped_compute = 0;
    for (int32_t i = 0; i < r.n_layers; i++)
        if (r.layers[i].problem_class >= 0 && r.layers[i].mapped)
            mapped_compute++;
    assert_int_equal(mapped_compute, 1);
    assert_int_equal(r.n_unmapped, 20);
    map_network_free(&r);

    /* Without the flag, progress reaches every class. */
    log = (progress_log){0};
    o.stop_flag = NULL;
    evaluate(g, &a, &o, &r);
    assert_false(r.interrupted);
    assert_int_equal(log.calls, 12);
    assert_int_equal(log.last_done, 12);
    map_network_free(&r);
    wl_graph_free(g);
}

/* Runs of g on a with seed 7 on one and on two threads agree exactly:
 * the whole network (two threads share out the problems) and one layer
 * (two threads inside its search). */
static void assert_threads_agree(const wl_graph *g, const arch_spec *a, const char *only_layer)
{
    map_network_result r[2];
    for (int i = 0; i < 2; i++) {
        map_network_options o;
        options(&o, i + 1);
        o.search.seed = 7;
        o.only_layer = only_layer;
        evaluate(g, a, &o, &r[i]);
    }
    assert_int_equal(r[0].cycles, r[1].cycles);
    assert_int_equal(r[0].dram_bytes, r[1].dram_bytes);
    assert_true(r[0].energy_pJ == r[1].energy_pJ);
    assert_int_equal(r[0].n_layers, r[1].n_layers);
    for (int32_t i = 0; i < r[0].n_layers; i++)
        assert_memory_equal(&r[0].layers[i].mapping, &r[1].layers[i].mapping, sizeof(map_mapping));
    for (int i = 0; i < 2; i++)
        map_network_free(&r[i]);
}

static void test_threads_agree(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("gemmini", &a);
    assert_threads_agree(g, &a, NULL);
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].kind == WL_OP_CONV) {
            assert_threads_agree(g, &a, g->ops[i].name);
            break;
        }
    wl_graph_free(g);
}

/*
 * The vector/DRAM model on ResNet-18's first Relu, from its shape alone:
 * 64 x 112 x 112 = 802,816 fp32 elements read and written (6,422,528
 * bytes); Eyeriss's 168 PEs do 168 element operations per cycle (4,779
 * cycles) while its DRAM moves 1.6 GB/s / 200 MHz = 8 bytes per cycle
 * (802,816 cycles): DRAM-bound.  Energy: one MAC per element plus 8 bits
 * per byte at the DRAM's pJ per bit.
 */
static void test_vector_layer_model(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    map_network_options o;
    options(&o, 1);
    map_network_result r;
    evaluate(g, &a, &o, &r);
    const map_layer_result *relu = NULL;
    for (int32_t i = 0; i < r.n_layers && !relu; i++)
        if (g->ops[r.layers[i].op].kind == WL_OP_RELU)
            relu = &r.layers[i];
    assert_non_null(relu);
    assert_int_equal(relu->problem_class, -1);
    assert_int_equal(relu->dram_bytes, 6422528);
    assert_int_equal(relu->cycles, 802816);
    assert_int_equal(relu->macs, 0);
    assert_close(relu->energy_by_component_pJ[MAP_COMP_DRAM],
                 6422528.0 * 8 * a.dram.energy_pJ_per_bit);
    assert_close(relu->energy_by_component_pJ[MAP_COMP_VECTOR], 802816.0 * a.compute.mac_pJ);
    assert_true(relu->energy_by_component_pJ[MAP_COMP_MAC] == 0);
    map_network_free(&r);
    wl_graph_free(g);
}

/* A design whose backing store is on chip (a Timeloop design without
 * DRAM): the layer's DRAM traffic is its unfused traffic, once. */
static void test_onchip_backing_store(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    arch_level *backing = &a.level[a.n_levels - 1];
    backing->cls = ARCH_CLASS_SRAM;
    backing->size_words = (int64_t)1 << 30;
    map_network_options o;
    options(&o, 1);
    o.only_layer = "layer1.0.conv1";
    o.weights = MAP_WEIGHTS_STREAMED; /* 2^30 words would hold them: test_resident.c */
    map_network_result r;
    evaluate(g, &a, &o, &r);
    assert_int_equal(r.n_layers, 1);
    wl_op_stats s;
    wl_op_stats_get(g, r.layers[0].op, &s);
    /* 64 x 56 x 56 fp32 in and out, 64 x 64 x 3 x 3 fp32 weights. */
    assert_int_equal(s.input_bytes + s.weight_bytes + s.output_bytes, 1753088);
    assert_int_equal(r.dram_bytes, 1753088);
    assert_close(r.energy_by_component_pJ[MAP_COMP_DRAM], 1753088.0 * 8 * a.dram.energy_pJ_per_bit);
    /* 1,753,088 bytes at 8 bytes per cycle bound the layer from below. */
    assert_true(r.cycles >= 219136);
    map_network_free(&r);
    wl_graph_free(g);
}

/* One layer by name; unknown names and graphs that were never inferred
 * are errors that say what is wrong. */
static void test_only_layer_and_errors(void **state)
{
    (void)state;
    wl_graph *g = truth_build_zoo("resnet18");
    arch_spec a;
    load_arch("eyeriss", &a);
    map_network_options o;
    options(&o, 1);
    map_network_result r;
    const char *conv_name = NULL;
    for (int32_t i = 0; i < g->n_ops && !conv_name; i++)
        if (g->ops[i].kind == WL_OP_CONV)
            conv_name = g->ops[i].name;
    o.only_layer = conv_name;
    evaluate(g, &a, &o, &r);
    assert_int_equal(r.n_layers, 1);
    assert_int_equal(r.n_distinct_problems, 1);
    assert_string_equal(g->ops[r.layers[0].op].name, conv_name);
    assert_int_equal(r.cycles, r.layers[0].cycles);
    map_network_free(&r);

    as_status st = {0};
    o.only_layer = "no_such_layer";
    assert_int_equal(map_network_evaluate(g, &a, &o, &r, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "no_such_layer"));
    assert_null(r.layers);
    wl_graph_free(g);

    wl_graph *raw = wl_graph_new("raw", "test");
    as_status_clear(&st);
    assert_int_equal(map_network_evaluate(raw, &a, NULL, &r, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "infer"));
    wl_graph_free(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_totals_are_layer_sums),
        cmocka_unit_test(test_identical_layers_share_a_problem),
        cmocka_unit_test(test_bf16_halves_dram_bytes),
        cmocka_unit_test(test_stop_flag_interrupts),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_vector_layer_model),
        cmocka_unit_test(test_onchip_backing_store),
        cmocka_unit_test(test_only_layer_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
