/*
 * test_search.c -- the mapper: heuristic and random-pruned against the
 * exhaustive optimum on spaces small enough to enumerate, determinism for
 * a seed across thread counts, constraints honoured by every best mapping
 * (checked here independently of mapspace.c), padding where it pays and
 * its MACs counted, anytime stepping, and the clear refusals (space too
 * large for exhaustive search, no legal mapping at all).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "mapping/mapping.h"
#include "mapper_check.h"

/* ------------------------------------------------------------- fixtures */

/* A convolution in Timeloop's form (stride 1): Weights[G,M,C,R,S],
 * Inputs[N,G,C,P+R,Q+S], Outputs[N,G,M,P,Q]. */
static void conv_problem(wl_problem *p, const int64_t bound[WL_NDIMS])
{
    static const wl_dim wdims[] = {WL_DIM_G, WL_DIM_M, WL_DIM_C, WL_DIM_R, WL_DIM_S};
    static const wl_dim odims[] = {WL_DIM_N, WL_DIM_G, WL_DIM_M, WL_DIM_P, WL_DIM_Q};
    memset(p, 0, sizeof *p);
    memcpy(p->bound, bound, sizeof p->bound);
    wl_dataspace *w = &p->ds[WL_DS_WEIGHTS], *in = &p->ds[WL_DS_INPUTS],
                 *out = &p->ds[WL_DS_OUTPUTS];
    w->name = "Weights", in->name = "Inputs", out->name = "Outputs";
    w->n_ranks = in->n_ranks = out->n_ranks = 5;
    for (int r = 0; r < 5; r++) {
        w->ranks[r] = (wl_proj_rank){1, {{wdims[r], 1}}};
        out->ranks[r] = (wl_proj_rank){1, {{odims[r], 1}}};
    }
    in->ranks[0] = (wl_proj_rank){1, {{WL_DIM_N, 1}}};
    in->ranks[1] = (wl_proj_rank){1, {{WL_DIM_G, 1}}};
    in->ranks[2] = (wl_proj_rank){1, {{WL_DIM_C, 1}}};
    in->ranks[3] = (wl_proj_rank){2, {{WL_DIM_P, 1}, {WL_DIM_R, 1}}};
    in->ranks[4] = (wl_proj_rank){2, {{WL_DIM_Q, 1}, {WL_DIM_S, 1}}};
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        p->ds[ds].bits = 8, p->ds[ds].density = 1.0;
    out->read_write = true;
}

/* One storage level of a test architecture. */
typedef struct level_spec {
    const char *name;
    arch_class cls;
    int64_t size_words;
    int mesh_x, mesh_y;
    double read_pJ, leak_pJ;
} level_spec;

/* An architecture from level specs (innermost first) over a mesh of MACs;
 * fill and update energies follow the read energy. */
static void build_arch(arch_spec *a, const level_spec *spec, int n, int macs_x, int macs_y)
{
    memset(a, 0, sizeof *a);
    strcpy(a->name, "test");
    a->n_levels = n;
    a->cycle_seconds = 1e-9;
    for (int l = 0; l < n; l++) {
        arch_level *al = &a->level[l];
        strcpy(al->name, spec[l].name);
        al->cls = spec[l].cls;
        al->size_words = spec[l].size_words;
        al->word_bits = 8;
        al->block_size = 1;
        al->cluster_size = 1;
        al->mesh_x = spec[l].mesh_x, al->mesh_y = spec[l].mesh_y;
        al->instances = (int64_t)spec[l].mesh_x * spec[l].mesh_y;
        al->multiple_buffering = 1;
        al->energy = (arch_energy){spec[l].read_pJ, 1.1 * spec[l].read_pJ, 1.2 * spec[l].read_pJ,
                                   spec[l].leak_pJ};
        if (spec[l].cls == ARCH_CLASS_DUMMY)
            for (int ds = 0; ds < WL_NDATASPACES; ds++)
                al->constraints.keep[ds] = ARCH_KEEP_NEVER;
    }
    a->compute = (arch_compute){.kind = ARCH_COMPUTE_MAC,
                                .instances = (int64_t)macs_x * macs_y,
                                .mesh_x = macs_x,
                                .mesh_y = macs_y,
                                .rows = 1,
                                .cols = 1,
                                .mac_bits = 8,
                                .mac_pJ = 0.2};
}

/* Two storage levels over 4 PEs: each a 16-word register file, DRAM. */
static void tiny_arch(arch_spec *a)
{
    static const level_spec spec[] = {
        {"rf", ARCH_CLASS_REGFILE, 16, 4, 1, 0.3, 0.0},
        {"dram", ARCH_CLASS_DRAM, 0, 1, 1, 100.0, 0.0},
    };
    build_arch(a, spec, 2, 4, 1);
}

/*
 * An Eyeriss-like design, shrunk: DRAM, a 256-word global buffer, a 2 x 2
 * PE array, each PE a 24-word scratchpad.  Eyeriss-style constraints keep
 * the space small: the buffer bypasses Weights, the scratchpad keeps all,
 * N and G never unroll.
 */
static void small_eyeriss(arch_spec *a)
{
    static const level_spec spec[] = {
        {"spad", ARCH_CLASS_REGFILE, 24, 2, 2, 0.5, 0.0},
        {"glb", ARCH_CLASS_SRAM, 256, 1, 1, 6.0, 0.001},
        {"dram", ARCH_CLASS_DRAM, 0, 1, 1, 200.0, 0.0},
    };
    build_arch(a, spec, 3, 2, 2);
    a->level[1].constraints.keep[WL_DS_WEIGHTS] = ARCH_KEEP_NEVER;
    a->level[1].constraints.keep[WL_DS_INPUTS] = ARCH_KEEP_ALWAYS;
    a->level[1].constraints.keep[WL_DS_OUTPUTS] = ARCH_KEEP_ALWAYS;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        a->level[0].constraints.keep[ds] = ARCH_KEEP_ALWAYS;
    a->level[1].constraints.spatial_factor[WL_DIM_N] = 1;
    a->level[1].constraints.spatial_factor[WL_DIM_G] = 1;
}

static map_search_options options(map_algorithm algo, uint64_t seed, int threads, bool pad)
{
    map_search_options o;
    map_search_options_default(&o);
    o.algorithm = algo;
    o.seed = seed;
    o.threads = threads;
    o.allow_padding = o.allow_imperfect = pad;
    return o;
}

/* Run a search to its end (or `budget` evaluations) and return its best. */
static double search_best(const arch_spec *a, const wl_problem *p, const map_search_options *o,
                          int64_t budget, map_mapping *m, map_eval *e, wl_problem *mapped,
                          int64_t *evaluated)
{
    map_search *s;
    as_status st = {0};
    if (map_search_init(&s, a, p, o, &st) != AS_OK)
        fail_msg("map_search_init: %s", st.message);
    for (int64_t done = 0; done < budget && map_search_step(s, 20000);)
        done = map_search_evaluated(s);
    static map_eval own;
    static map_mapping own_m;
    static wl_problem own_p;
    assert_true(map_search_best(s, m ? m : &own_m, e ? e : &own, mapped ? mapped : &own_p));
    if (evaluated)
        *evaluated = map_search_evaluated(s);
    double edp = (e ? e : &own)->edp_J_cycle;
    map_search_free(s);
    return edp;
}

/* -------------------------------------------------------- exhaustive 1% */

/* Heuristic and random-pruned land within 1% of the exhaustive optimum. */
static void check_against_exhaustive(const arch_spec *a, const wl_problem *p)
{
    map_search_options ex = options(MAP_ALGO_EXHAUSTIVE, 1, 2, false);
    map_search_options heur = options(MAP_ALGO_HEURISTIC, 7, 1, false);
    map_search_options rnd = options(MAP_ALGO_RANDOM_PRUNED, 7, 1, false);
    rnd.victory_condition = 20000;
    int64_t points;
    double optimum = search_best(a, p, &ex, INT64_MAX, NULL, NULL, NULL, &points);
    double h = search_best(a, p, &heur, INT64_MAX, NULL, NULL, NULL, NULL);
    double r = search_best(a, p, &rnd, INT64_MAX, NULL, NULL, NULL, NULL);
    print_message("exhaustive %lld points: optimum EDP %.6g; heuristic %.6g; random-pruned %.6g\n",
                  (long long)points, optimum, h, r);
    assert_true(optimum > 0);
    assert_true(h >= optimum * (1 - 1e-12)); /* nothing beats the optimum */
    assert_true(r >= optimum * (1 - 1e-12));
    assert_true(h <= optimum * 1.01);
    assert_true(r <= optimum * 1.01);
}

static void test_conv1d_tiny_arch(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    tiny_arch(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){[WL_DIM_N] = 1,
                                               [WL_DIM_G] = 1,
                                               [WL_DIM_C] = 2,
                                               [WL_DIM_M] = 4,
                                               [WL_DIM_P] = 8,
                                               [WL_DIM_Q] = 1,
                                               [WL_DIM_R] = 3,
                                               [WL_DIM_S] = 1});
    check_against_exhaustive(&a, &p);
}

static void test_conv2d_small_eyeriss(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    small_eyeriss(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){[WL_DIM_N] = 1,
                                               [WL_DIM_G] = 1,
                                               [WL_DIM_C] = 2,
                                               [WL_DIM_M] = 2,
                                               [WL_DIM_P] = 4,
                                               [WL_DIM_Q] = 2,
                                               [WL_DIM_R] = 3,
                                               [WL_DIM_S] = 1});
    check_against_exhaustive(&a, &p);
}

/* A space far beyond enumeration is refused with a message, not run. */
static void test_exhaustive_limit(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    small_eyeriss(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 64, 64, 56, 56, 3, 3});
    map_search_options o = options(MAP_ALGO_EXHAUSTIVE, 1, 1, false);
    map_search *s = (map_search *)&a;
    as_status st = {0};
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_EINVAL);
    assert_null(s);
    assert_non_null(strstr(st.message, "exhaustive"));
}

/* ---------------------------------------------------------- determinism */

static void test_same_seed_any_threads(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    small_eyeriss(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 16, 16, 14, 14, 3, 3});
    static const map_algorithm algos[] = {MAP_ALGO_HEURISTIC, MAP_ALGO_RANDOM_PRUNED};
    for (int i = 0; i < 2; i++) {
        map_mapping m1, m2;
        int64_t n1, n2;
        map_search_options o = options(algos[i], 42, 1, true);
        o.victory_condition = 5000;
        double e1 = search_best(&a, &p, &o, 60000, &m1, NULL, NULL, &n1);
        o.threads = 2;
        double e2 = search_best(&a, &p, &o, 60000, &m2, NULL, NULL, &n2);
        assert_true(e1 == e2);
        assert_int_equal(n1, n2);
        assert_memory_equal(&m1, &m2, sizeof m1);
        o.seed = 43; /* and another seed explores differently */
        int64_t n3;
        search_best(&a, &p, &o, 60000, NULL, NULL, NULL, &n3);
        print_message("%s: EDP %.6g after %lld evaluations (seed 43: %lld)\n",
                      i ? "random-pruned" : "heuristic", e1, (long long)n1, (long long)n3);
    }
}

/* ---------------------------------------------------------- constraints */

static void test_constraints_honoured(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    static const level_spec spec[] = {
        {"spad", ARCH_CLASS_REGFILE, 64, 4, 4, 0.5, 0.0},
        {"glb", ARCH_CLASS_SRAM, 8192, 1, 1, 6.0, 0.001},
        {"dram", ARCH_CLASS_DRAM, 0, 1, 1, 200.0, 0.0},
    };
    build_arch(&a, spec, 3, 4, 4);
    conv_problem(&p, (const int64_t[WL_NDIMS]){2, 1, 32, 32, 28, 28, 3, 3});
    arch_constraints *spad = &a.level[0].constraints, *glb = &a.level[1].constraints,
                     *dram = &a.level[2].constraints;
    spad->temporal_factor[WL_DIM_R] = 3; /* row stationary: a filter row in the PE */
    spad->temporal_factor[WL_DIM_P] = 1;
    spad->n_temporal_order = 2;
    spad->temporal_order[0] = WL_DIM_R, spad->temporal_order[1] = WL_DIM_C;
    spad->keep[WL_DS_OUTPUTS] = ARCH_KEEP_NEVER;
    glb->spatial_factor[WL_DIM_R] = glb->spatial_factor[WL_DIM_S] = glb->spatial_factor[WL_DIM_N] =
        1;
    glb->n_spatial_order = 2;
    glb->spatial_order[0] = WL_DIM_Q, glb->spatial_order[1] = WL_DIM_M;
    glb->spatial_split_fixed = true;
    glb->spatial_split = 1; /* Q on X, M and the rest on Y */
    glb->min_spatial_utilization = 0.75;
    glb->temporal_max[WL_DIM_C] = 4;
    glb->keep[WL_DS_WEIGHTS] = ARCH_KEEP_NEVER;
    dram->n_temporal_order = 1;
    dram->temporal_order[0] = WL_DIM_N;
    static const map_algorithm algos[] = {MAP_ALGO_HEURISTIC, MAP_ALGO_RANDOM_PRUNED};
    for (int i = 0; i < 2; i++) {
        map_search_options o = options(algos[i], 3, 2, true);
        o.victory_condition = 3000;
        map_mapping m;
        map_eval e;
        wl_problem mapped;
        search_best(&a, &p, &o, 100000, &m, &e, &mapped, NULL);
        assert_int_equal(e.validity, MAP_VALID);
        assert_honours(&a, &m);
        map_eval again;
        map_evaluate(&a, &mapped, &m, &again);
        assert_true(again.validity == MAP_VALID && again.edp_J_cycle == e.edp_J_cycle);
    }
}

/* Constraints nothing satisfies: init succeeds, the search ends empty. */
static void test_no_legal_mapping(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    small_eyeriss(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 8, 8, 8, 8, 3, 3});
    a.level[0].constraints.temporal_factor[WL_DIM_C] = 5; /* 5 does not divide C = 8 */
    map_search_options o = options(MAP_ALGO_HEURISTIC, 1, 1, false);
    map_search *s;
    as_status st = {0};
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_OK);
    assert_false(map_search_step(s, 1000));
    assert_false(map_search_best(s, NULL, NULL, NULL));
    map_search_free(s);
}

/* -------------------------------------------------------------- padding */

/* EDP with and without padding, and the chosen mapped bound of dim d. */
static void compare_padding(const arch_spec *a, const wl_problem *p, wl_dim d,
                            int64_t *padded_bound, double *edp_padded, double *edp_plain,
                            int64_t *padded_macs)
{
    map_search_options o = options(MAP_ALGO_HEURISTIC, 5, 1, true);
    map_eval e;
    wl_problem mapped;
    *edp_padded = search_best(a, p, &o, INT64_MAX, NULL, &e, &mapped, NULL);
    *padded_bound = mapped.bound[d];
    *padded_macs = e.macs;
    o.allow_padding = o.allow_imperfect = false;
    *edp_plain = search_best(a, p, &o, INT64_MAX, NULL, NULL, NULL, NULL);
}

/* C = 3 on a 16-PE array (8 x 2) whose Y axis only C may use: padding C
 * to 4 fills both rows; the wasted MACs are counted. */
static void test_padding_c3(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    static const level_spec spec[] = {
        {"spad", ARCH_CLASS_REGFILE, 64, 8, 2, 0.5, 0.0},
        {"glb", ARCH_CLASS_SRAM, 65536, 1, 1, 6.0, 0.0},
        {"dram", ARCH_CLASS_DRAM, 0, 1, 1, 200.0, 0.0},
    };
    build_arch(&a, spec, 3, 8, 2);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 3, 8, 28, 28, 3, 3});
    arch_constraints *glb = &a.level[1].constraints;
    for (int d = 0; d < WL_NDIMS; d++)
        glb->spatial_factor[d] = d == WL_DIM_C || d == WL_DIM_M ? 0 : 1;
    glb->n_spatial_order = 2;
    glb->spatial_order[0] = WL_DIM_M, glb->spatial_order[1] = WL_DIM_C;
    glb->spatial_split_fixed = true;
    glb->spatial_split = 1;
    int64_t bound, macs;
    double padded, plain;
    compare_padding(&a, &p, WL_DIM_C, &bound, &padded, &plain, &macs);
    print_message("C=3 on 8x2: padded C=%lld, EDP %.6g vs %.6g unpadded, MACs %lld (useful %lld)\n",
                  (long long)bound, padded, plain, (long long)macs, (long long)wl_problem_macs(&p));
    assert_int_equal(bound, 4);
    assert_true(padded < plain);
    assert_int_equal(macs, wl_problem_macs(&p) / 3 * 4);
}

/* 1000 classes against a 16-wide array: padded to a multiple of 16. */
static void test_padding_1000_classes(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    static const level_spec spec[] = {
        {"spad", ARCH_CLASS_REGFILE, 64, 16, 1, 0.5, 0.0},
        {"glb", ARCH_CLASS_SRAM, 1 << 20, 1, 1, 6.0, 0.0},
        {"dram", ARCH_CLASS_DRAM, 0, 1, 1, 200.0, 0.0},
    };
    build_arch(&a, spec, 3, 16, 1);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 256, 1000, 1, 1, 1, 1});
    for (int d = 0; d < WL_NDIMS; d++) /* only the classes unroll */
        a.level[1].constraints.spatial_factor[d] = d == WL_DIM_M ? 0 : 1;
    int64_t bound, macs;
    double padded, plain;
    compare_padding(&a, &p, WL_DIM_M, &bound, &padded, &plain, &macs);
    print_message("M=1000 on 16 wide: padded M=%lld, EDP %.6g vs %.6g, MACs %lld (useful %lld)\n",
                  (long long)bound, padded, plain, (long long)macs, (long long)wl_problem_macs(&p));
    assert_true(bound % 16 == 0 && bound >= 1008 && bound <= 1024);
    assert_true(padded < plain);
    assert_int_equal(macs, 256 * bound);
}

/* Padding not worth it is not taken: C = 3 with C alone on a 16-wide axis
 * (ceil(3 / 16) = 1 either way, padding only wastes energy). */
static void test_padding_not_taken(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    tiny_arch(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 3, 4, 8, 1, 3, 1});
    for (int d = 0; d < WL_NDIMS; d++)
        a.level[1].constraints.spatial_factor[d] = d == WL_DIM_C ? 0 : 1;
    int64_t bound, macs;
    double padded, plain;
    compare_padding(&a, &p, WL_DIM_C, &bound, &padded, &plain, &macs);
    assert_true(padded <= plain);
    assert_int_equal(macs, wl_problem_macs(&p) / 3 * bound);
}

/* -------------------------------------------------------------- anytime */

static void test_anytime_steps(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    small_eyeriss(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 16, 16, 14, 14, 3, 3});
    map_search_options o = options(MAP_ALGO_RANDOM_PRUNED, 9, 1, false);
    map_search *s;
    as_status st = {0};
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_OK);
    assert_false(map_search_best(s, NULL, NULL, NULL));
    int64_t before = 0;
    for (int i = 0; i < 5; i++) {
        assert_true(map_search_step(s, 500));
        assert_true(map_search_evaluated(s) >= before + 500);
        assert_true(map_search_valid(s) <= map_search_evaluated(s));
        before = map_search_evaluated(s);
    }
    int n;
    const double *curve = map_search_curve(s, &n);
    assert_int_equal(n, 5);
    for (int i = 1; i < n; i++)
        assert_true(curve[i] <= curve[i - 1]);
    map_eval e;
    assert_true(map_search_best(s, NULL, &e, NULL));
    assert_true(e.edp_J_cycle == curve[n - 1]);
    map_search_free(s);

    o.search_size = 300; /* Timeloop's rule: stop after 300 valid mappings */
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_OK);
    while (map_search_step(s, 100))
        ;
    assert_true(map_search_valid(s) >= 300 && map_search_valid(s) < 300 + 8 * 128);
    map_search_free(s);
}

static void test_bad_options(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    tiny_arch(&a);
    conv_problem(&p, (const int64_t[WL_NDIMS]){1, 1, 2, 2, 2, 1, 1, 1});
    map_search_options o = options(MAP_ALGO_HEURISTIC, 1, -1, false);
    map_search *s;
    as_status st = {0};
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_EINVAL);
    o = options((map_algorithm)7, 1, 1, false);
    st = (as_status){0};
    assert_int_equal(map_search_init(&s, &a, &p, &o, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "algorithm"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv1d_tiny_arch),     cmocka_unit_test(test_conv2d_small_eyeriss),
        cmocka_unit_test(test_exhaustive_limit),     cmocka_unit_test(test_same_seed_any_threads),
        cmocka_unit_test(test_constraints_honoured), cmocka_unit_test(test_no_legal_mapping),
        cmocka_unit_test(test_padding_c3),           cmocka_unit_test(test_padding_1000_classes),
        cmocka_unit_test(test_padding_not_taken),    cmocka_unit_test(test_anytime_steps),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
