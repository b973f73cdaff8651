/*
 * test_precision.c -- operands in a number format the MACs lack are
 * emulated at a stated cost (src/mapping/emulate.c, docs/precision.md):
 * the problem's data spaces carry the format wl_set_precision chose
 * (as-hardware when nobody chose one); the passes per MAC for every
 * (operand precision, MAC format of each preset and of an fp32 and an
 * fp16 design); map_evaluate scales the compute cycles and the MAC energy
 * by them and leaves the traffic alone, on a MAC design and on a systolic
 * one; int8 on Eyeriss is as-hardware; over ResNet-18 on Eyeriss
 * (int16 MACs) fp16 runs slower than int8 and fp32 slower still; and `map`
 * says the passes (--as-hardware: none).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "mapping/mapping.h"

#include "cli_run.h"
#include "test_check.h"
#include "truth.h"

/* Mappings per distinct problem: enough for a valid mapping of every
 * layer, few enough to keep the test short. */
#define TEST_BUDGET 2000

static void load_arch(const char *name, arch_spec *a)
{
    as_status st = {0};
    check(arch_load(name, a, &st), &st);
}

/* The problem of the first compute op of zoo model `model`, after
 * `chosen` (wl_set_precision at p) or not (the model as loaded). */
static void first_problem(const char *model, bool chosen, wl_precision p, wl_problem *out)
{
    wl_graph *g = truth_build_zoo(model);
    if (chosen)
        wl_set_precision(g, p);
    int32_t o = 0;
    while (o < g->n_ops && !map_op_is_compute(&g->ops[o]))
        o++;
    assert_true(o < g->n_ops);
    as_status st = {0};
    check(wl_op_problem(g, o, out, &st), &st);
    wl_graph_free(g);
}

/* The format of the data spaces follows the choice: none on a loaded
 * model, the storage type after wl_set_precision (mixed: int8 weights,
 * bf16 activations), integers for a float tensor set to 4 bits, none
 * after wl_set_storage_precision; the mapper's problem key tells them
 * apart. */
static void test_problem_number(void **state)
{
    (void)state;
    wl_problem p;
    first_problem("resnet18", false, WL_PREC_FP32, &p);
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        assert_int_equal(p.ds[ds].number, WL_NUMBER_AS_HARDWARE);
    static const struct {
        wl_precision precision;
        wl_number weights, inputs;
        int weight_bits, input_bits;
    } cases[] = {
        {WL_PREC_FP32, WL_NUMBER_FLOAT, WL_NUMBER_FLOAT, 32, 32},
        {WL_PREC_FP16, WL_NUMBER_FLOAT, WL_NUMBER_FLOAT, 16, 16},
        {WL_PREC_BF16, WL_NUMBER_BF16, WL_NUMBER_BF16, 16, 16},
        {WL_PREC_INT8, WL_NUMBER_INT, WL_NUMBER_INT, 8, 8},
        {WL_PREC_MIXED, WL_NUMBER_INT, WL_NUMBER_BF16, 8, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        first_problem("resnet18", true, cases[i].precision, &p);
        assert_int_equal(p.ds[WL_DS_WEIGHTS].number, cases[i].weights);
        assert_int_equal(p.ds[WL_DS_INPUTS].number, cases[i].inputs);
        assert_int_equal(p.ds[WL_DS_WEIGHTS].bits, cases[i].weight_bits);
        assert_int_equal(p.ds[WL_DS_INPUTS].bits, cases[i].input_bits);
    }

    wl_graph *g = truth_build_zoo("resnet18");
    int32_t o = 0;
    while (!map_op_is_compute(&g->ops[o]))
        o++;
    as_status st = {0};
    wl_problem chosen, storage;
    wl_set_storage_precision(g, WL_PREC_FP16);
    check(wl_op_problem(g, o, &storage, &st), &st);
    assert_int_equal(storage.ds[WL_DS_WEIGHTS].number, WL_NUMBER_AS_HARDWARE);
    assert_int_equal(storage.ds[WL_DS_WEIGHTS].bits, 16);
    wl_set_precision(g, WL_PREC_FP16);
    check(wl_op_problem(g, o, &chosen, &st), &st);
    map_problem_key k_storage, k_chosen;
    map_problem_key_of(&storage, &k_storage);
    map_problem_key_of(&chosen, &k_chosen);
    assert_true(memcmp(&k_storage, &k_chosen, sizeof k_chosen) != 0);

    const char *weight = g->tensors[g->ops[o].inputs[1]].name;
    check(wl_set_tensor_bits(g, weight, 4, &st), &st);
    check(wl_op_problem(g, o, &chosen, &st), &st);
    assert_int_equal(chosen.ds[WL_DS_WEIGHTS].number, WL_NUMBER_INT);
    assert_int_equal(chosen.ds[WL_DS_WEIGHTS].bits, 4);
    wl_graph_free(g);
}

/* Convolutions lowered after the precision was chosen (im2col, Winograd)
 * keep it: every compute problem of the lowered ResNet-18 has int8
 * operands, none as-hardware. */
static void test_lowered_keeps_format(void **state)
{
    (void)state;
    const wl_conv_algorithm algorithms[] = {WL_CONV_IM2COL, WL_CONV_WINOGRAD_2};
    for (size_t k = 0; k < 2; k++) {
        wl_graph *g = truth_build_zoo("resnet18");
        wl_set_precision(g, WL_PREC_INT8);
        as_status st = {0};
        int n_lowered = 0;
        check(wl_fold_batchnorm(g, NULL, &st), &st);
        check(wl_lower_convs(g, NULL, algorithms[k], &n_lowered, &st), &st);
        assert_true(n_lowered > 0);
        int problems = 0;
        for (int32_t o = 0; o < g->n_ops; o++) {
            if (!map_op_is_layer(&g->ops[o]) || !map_op_is_compute(&g->ops[o]))
                continue;
            wl_problem p;
            check(wl_op_problem(g, o, &p, &st), &st);
            if (p.ds[WL_DS_WEIGHTS].number != WL_NUMBER_INT ||
                p.ds[WL_DS_INPUTS].number != WL_NUMBER_INT)
                fail_msg("%s: op %s has operands %s x %s", wl_conv_algorithm_name(algorithms[k]),
                         g->ops[o].name, wl_number_name(p.ds[WL_DS_WEIGHTS].number),
                         wl_number_name(p.ds[WL_DS_INPUTS].number));
            problems++;
        }
        assert_true(problems > 20);
        wl_graph_free(g);
    }
}

/* The MACs of a design: a preset's, or Eyeriss's PEs at `bits` of IEEE
 * float (an fp32 and an fp16 design). */
static arch_compute mac_of(const char *preset, int float_bits)
{
    arch_spec a;
    load_arch(preset, &a);
    if (float_bits) {
        a.compute.mac_number = ARCH_NUMBER_FP;
        a.compute.mac_bits = float_bits;
    }
    return a.compute;
}

/*
 * The passes table (docs/precision.md).  Limbs of the MAC's significand
 * (integers: magnitude bits, 15 for int16, 7 for int8; bf16 8, fp16 11,
 * fp32 24); float products keep k(k+1)/2 of them; a float exponent wider
 * than the MACs' adds one aligning pass:
 *   fp32 on int16: 2 limbs, 3 + 1;   on int8: 4 limbs, 10 + 1;
 *   on bf16: 3 limbs, 6 (bf16x6);    on fp16: 3 limbs, 6 + 1 (exponent);
 *   fp16 on int16: 1 + 1; on int8: 2 limbs, 3 + 1; on bf16: 2 limbs, 3;
 *   bf16 on int16: 1 + 1; on int8: 2 limbs, 3 + 1; on fp16: 1 + 1;
 *   int8 fits every MAC here; mixed (int8 x bf16): on int8 1 x 2 limbs,
 *   2 products + 1; on int16 and fp16 1 + 1.
 */
static void test_passes_table(void **state)
{
    (void)state;
    static const struct {
        const char *preset;
        int float_bits;    /* 0: the preset's own MACs */
        int64_t passes[5]; /* fp32, fp16, bf16, int8, mixed */
    } rows[] = {
        {"eyeriss", 0, {4, 2, 2, 1, 2}},    /* int16 */
        {"shidiannao", 0, {4, 2, 2, 1, 2}}, /* int16 */
        {"edgetpu", 0, {11, 4, 4, 1, 3}},   /* int8 */
        {"tpu_v3", 0, {6, 3, 1, 1, 1}},     /* bf16 */
        {"gemmini", 0, {11, 4, 4, 1, 3}},   /* int8 */
        {"vta", 0, {11, 4, 4, 1, 3}},       /* int8 */
        {"simba", 0, {11, 4, 4, 1, 3}},     /* int8 */
        {"eyeriss", 32, {1, 1, 1, 1, 1}},   /* fp32 */
        {"eyeriss", 16, {7, 1, 2, 1, 2}},   /* fp16 */
    };
    static const wl_precision precisions[] = {WL_PREC_FP32, WL_PREC_FP16, WL_PREC_BF16,
                                              WL_PREC_INT8, WL_PREC_MIXED};
    wl_problem problem[5], as_hardware;
    for (int k = 0; k < 5; k++)
        first_problem("resnet18", true, precisions[k], &problem[k]);
    first_problem("resnet18", false, WL_PREC_FP32, &as_hardware);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        arch_compute c = mac_of(rows[r].preset, rows[r].float_bits);
        assert_int_equal(map_mac_passes(&c, &as_hardware), 1);
        for (int k = 0; k < 5; k++) {
            int64_t got = map_mac_passes(&c, &problem[k]);
            if (got != rows[r].passes[k])
                fail_msg("%s (%s %d bits): %s operands take %lld passes, want %lld", rows[r].preset,
                         rows[r].float_bits ? "fp" : "own", c.mac_bits,
                         wl_precision_name(precisions[k]), (long long)got,
                         (long long)rows[r].passes[k]);
        }
    }
}

/* A mapping of problem p on a, by the mapper (fails the test if none). */
static void mapping_of(const arch_spec *a, const wl_problem *p, map_mapping *m, wl_problem *mapped)
{
    map_search_options o;
    map_search_options_default(&o);
    map_problem_outcome out;
    map_problem_search_run(a, p, &o, 1, TEST_BUDGET, NULL, &out);
    assert_int_equal(out.code, AS_OK);
    assert_true(out.found);
    *m = out.mapping;
    *mapped = out.mapped;
}

/* Every level's reads, fills and updates and the networks' energy (the
 * array registers and hops of a systolic array among them) are equal. */
static void assert_same_traffic(const map_eval *x, const map_eval *y)
{
    assert_int_equal(x->n_levels, y->n_levels);
    for (int l = 0; l < x->n_levels; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            assert_int_equal(x->level[l].ds[ds].reads, y->level[l].ds[ds].reads);
            assert_int_equal(x->level[l].ds[ds].fills, y->level[l].ds[ds].fills);
            assert_int_equal(x->level[l].ds[ds].updates, y->level[l].ds[ds].updates);
            assert_true(x->level[l].net[ds].energy_pJ == y->level[l].net[ds].energy_pJ);
        }
}

/* One mapping of ResNet-18's first convolution with fp32 operands on an
 * int8 design: compute cycles and MAC energy exactly `passes` (11) times
 * the as-hardware ones, the level traffic identical -- on the Edge TPU's
 * MAC grid and on Gemmini's systolic array (the fold model repeated). */
static void test_emulated_evaluation(void **state)
{
    (void)state;
    const char *designs[] = {"edgetpu", "gemmini"};
    for (size_t d = 0; d < 2; d++) {
        arch_spec a;
        load_arch(designs[d], &a);
        wl_problem as_hardware, fp32, mapped;
        first_problem("resnet18", false, WL_PREC_FP32, &as_hardware);
        first_problem("resnet18", true, WL_PREC_FP32, &fp32);
        map_mapping m;
        mapping_of(&a, &as_hardware, &m, &mapped);
        wl_problem emulated = mapped;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            emulated.ds[ds].number = fp32.ds[ds].number;
        map_eval native, slow;
        map_evaluate(&a, &mapped, &m, &native);
        map_evaluate(&a, &emulated, &m, &slow);
        assert_int_equal(native.validity, MAP_VALID);
        assert_int_equal(slow.validity, MAP_VALID);
        int64_t passes = map_mac_passes(&a.compute, &emulated);
        assert_int_equal(passes, 11);
        assert_int_equal(native.mac_passes, 1);
        assert_int_equal(slow.mac_passes, passes);
        assert_int_equal(slow.macs, native.macs);
        assert_int_equal(slow.compute_cycles, passes * native.compute_cycles);
        assert_true(slow.mac_energy_pJ == native.mac_energy_pJ * (double)passes);
        assert_same_traffic(&native, &slow);
        assert_true(slow.cycles >= slow.compute_cycles);
        assert_true(slow.energy_pJ > native.energy_pJ);
    }
}

/* int8 operands on Eyeriss's int16 MACs are native: map_evaluate gives
 * what it gives as-hardware (the width of the elements does not enter it:
 * on chip an element is one word). */
static void test_native_int8(void **state)
{
    (void)state;
    arch_spec a;
    load_arch("eyeriss", &a);
    wl_problem as_hardware, int8, mapped;
    first_problem("resnet18", false, WL_PREC_FP32, &as_hardware);
    first_problem("resnet18", true, WL_PREC_INT8, &int8);
    map_mapping m;
    mapping_of(&a, &as_hardware, &m, &mapped);
    wl_problem chosen = mapped;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        chosen.ds[ds].number = int8.ds[ds].number;
        chosen.ds[ds].bits = int8.ds[ds].bits;
    }
    assert_int_equal(map_mac_passes(&a.compute, &chosen), 1);
    map_eval x, y;
    map_evaluate(&a, &mapped, &m, &x);
    map_evaluate(&a, &chosen, &m, &y);
    assert_int_equal(x.validity, MAP_VALID);
    assert_int_equal(y.compute_cycles, x.compute_cycles);
    assert_int_equal(y.cycles, x.cycles);
    assert_true(y.mac_energy_pJ == x.mac_energy_pJ);
    assert_true(y.energy_pJ == x.energy_pJ);
    assert_same_traffic(&x, &y);
    for (int l = 0; l < x.n_levels; l++)
        assert_true(y.level[l].energy_pJ == x.level[l].energy_pJ);
}

/* ResNet-18 at `p` on Eyeriss, whole network. */
static void network_at(wl_precision p, map_network_result *r)
{
    arch_spec a;
    load_arch("eyeriss", &a);
    wl_graph *g = truth_build_zoo("resnet18");
    wl_set_precision(g, p);
    map_network_options o;
    map_network_options_default(&o);
    o.search.threads = 2;
    o.budget_per_problem = TEST_BUDGET;
    as_status st = {0};
    check(map_network_evaluate(g, &a, &o, r, &st), &st);
    wl_graph_free(g);
}

/* Over ResNet-18 on Eyeriss (int16 MACs): fp16 (one limb and an aligning
 * pass per MAC, twice the DRAM bytes) is slower than int8 (native), and
 * int8 faster than fp32 (two limbs, 3 products and an aligning pass). */
static void test_network_resnet18_eyeriss(void **state)
{
    (void)state;
    map_network_result fp32, fp16, int8;
    network_at(WL_PREC_FP32, &fp32);
    network_at(WL_PREC_FP16, &fp16);
    network_at(WL_PREC_INT8, &int8);
    assert_true(fp16.cycles > int8.cycles);
    assert_true(fp32.cycles > int8.cycles);
    assert_true(fp32.cycles > fp16.cycles);
    assert_true(fp16.energy_by_component_pJ[MAP_COMP_MAC] >
                1.5 * int8.energy_by_component_pJ[MAP_COMP_MAC]);
    assert_true(fp32.energy_pJ > int8.energy_pJ);
    map_network_free(&fp32);
    map_network_free(&fp16);
    map_network_free(&int8);
}

/* Layers of `map ARGS --json` whose "mac_passes" is `passes`, and those
 * without the member; the run must succeed. */
static void count_mac_passes(const char *args, int64_t passes, int *with, int *without)
{
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fail_msg("'accelsearch %s' exited %d: %s", args, r.status, r.err);
    json_error_t error;
    json_t *root = json_loads(r.out, 0, &error);
    if (!root)
        fail_msg("'accelsearch %s': not JSON: %s", args, error.text);
    free(r.out);
    *with = *without = 0;
    size_t i;
    const json_t *layer;
    json_array_foreach(json_object_get(root, "layers"), i, layer)
    {
        const json_t *member = json_object_get(layer, "mac_passes");
        if (!member)
            ++*without;
        else if (json_integer_value(member) == passes)
            ++*with;
        else
            fail_msg("'accelsearch %s': layer %zu takes %lld passes", args, i,
                     (long long)json_integer_value(member));
    }
    json_decref(root);
}

/* `map --precision fp32` on the Edge TPU: every compute layer of ResNet-18
 * (20 convolutions and the Gemm) takes 11 MAC operations per MAC, in the
 * JSON and in the text; as loaded, at int8 or with --as-hardware, none. */
static void test_map_reports_passes(void **state)
{
    (void)state;
    const char *base = "map --arch edgetpu --model resnet18 --map-budget 50 --threads 1";
    char args[256];
    int with, without;
    snprintf(args, sizeof args, "%s --precision fp32 --json", base);
    count_mac_passes(args, 11, &with, &without);
    assert_int_equal(with, 21);
    const char *natives[] = {"", "--precision int8", "--precision fp32 --as-hardware"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "%s %s --json", base, natives[k]);
        count_mac_passes(args, 11, &with, &without);
        assert_int_equal(with, 0);
        assert_true(without > 21);
    }
    run_result r;
    snprintf(args, sizeof args, "%s --precision fp32", base);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "MAC emulation            21 layers at up to 11 MAC operations "
                                  "per MAC (int8 MACs"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_problem_number),
        cmocka_unit_test(test_passes_table),
        cmocka_unit_test(test_lowered_keeps_format),
        cmocka_unit_test(test_emulated_evaluation),
        cmocka_unit_test(test_native_int8),
        cmocka_unit_test(test_network_resnet18_eyeriss),
        cmocka_unit_test(test_map_reports_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
