/*
 * test_eval.c -- map_evaluate against timeloop-model on the 17 reference
 * cases (inputs read by map_timeloop_load, numbers from
 * tests/data/timeloop/<case>/expected.txt, extracted from reference.json
 * by scripts/extract_timeloop.py), plus properties over random valid
 * mappings and the reasons given for invalid ones.
 *
 * Tolerances: every count is exact.  Energies printed by Timeloop with 2
 * decimals (per data space, leakage, MAC) are checked to 0.005 pJ plus
 * 1e-9 relative; the summary energy (and EDP) is Timeloop's fJ/compute
 * total printed with 2 decimals times the computes, so it is exact only
 * to about 1e-6 relative and is checked at 1.5e-6.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mapping/mapping.h"

#define CASES_DIR AS_TEST_DATA_DIR "/timeloop/"

/* |got - want| within abs + rel * |want|, with both numbers on failure. */
static void assert_close(double got, double want, double abs_tol, double rel_tol, const char *what)
{
    if (fabs(got - want) > abs_tol + rel_tol * fabs(want))
        fail_msg("%s: got %.10g, expected %.10g", what, got, want);
}

/* Index of the architecture level called name; fails the test if none. */
static int level_named(const arch_spec *a, const char *name)
{
    for (int l = 0; l < a->n_levels; l++)
        if (!strcmp(a->level[l].name, name))
            return l;
    fail_msg("no level named %s", name);
    return -1;
}

static int dataspace_named(const char *name)
{
    static const char *const names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (!strcmp(names[ds], name))
            return ds;
    fail_msg("unknown data space %s", name);
    return -1;
}

/* Check one `ds` line: a kept data space and its per-instance counts. */
static void check_ds_line(const map_timeloop_case *c, const map_eval *e, const char *rest,
                          bool *listed)
{
    char lname[ARCH_NAME_BYTES], dsname[16], what[160];
    long long inst, reads, fills, updates, reductions, tile, partition;
    double energy;
    assert_int_equal(sscanf(rest, "%63s %15s %lld %lld %lld %lld %lld %lld %lld %lf", lname, dsname,
                            &inst, &reads, &fills, &updates, &reductions, &tile, &partition,
                            &energy),
                     10);
    int l = level_named(&c->arch, lname), ds = dataspace_named(dsname);
    const map_ds_stats *s = &e->level[l].ds[ds];
    listed[l * WL_NDATASPACES + ds] = true;
    snprintf(what, sizeof what, "%s %s", lname, dsname);
    if (!e->level[l].keeps[ds])
        fail_msg("%s: not kept", what);
    long long got[7] = {s->utilized_instances,  s->reads,      s->fills,          s->updates,
                        s->temporal_reductions, s->tile_words, s->partition_words};
    long long want[7] = {inst, reads, fills, updates, reductions, tile, partition};
    static const char *const field[7] = {
        "utilized instances",  "reads",      "fills",          "updates",
        "temporal reductions", "tile words", "partition words"};
    for (int i = 0; i < 7; i++)
        if (got[i] != want[i])
            fail_msg("%s %s: got %lld, expected %lld", what, field[i], got[i], want[i]);
    assert_close(s->energy_pJ, energy, 0.005, 1e-9, what);
}

/* Check one `net` line: fanout, multicast factor, spatial reductions. */
static void check_net_line(const map_timeloop_case *c, const map_eval *e, const char *rest)
{
    char parent[ARCH_NAME_BYTES], child[ARCH_NAME_BYTES], dsname[16];
    long long fanout, multicast, reductions;
    assert_int_equal(sscanf(rest, "%63s %63s %15s %lld %lld %lld", parent, child, dsname, &fanout,
                            &multicast, &reductions),
                     6);
    const map_net_stats *n = &e->level[level_named(&c->arch, parent)].net[dataspace_named(dsname)];
    if (n->fanout != fanout || n->multicast_factor != multicast ||
        n->spatial_reductions != reductions)
        fail_msg(
            "net %s->%s %s: fanout/multicast/reductions %lld/%lld/%lld, expected %lld/%lld/%lld",
            parent, child, dsname, (long long)n->fanout, (long long)n->multicast_factor,
            (long long)n->spatial_reductions, fanout, multicast, reductions);
}

/* Evaluate one reference case and check every number of expected.txt. */
static void check_case(const char *id)
{
    char path[3][512], line[512];
    static const char *const file[3] = {"model-input.yaml", "ERT.yaml", "ART.yaml"};
    static map_timeloop_case c;
    static map_eval e;
    bool listed[ARCH_MAX_LEVELS * WL_NDATASPACES] = {false};
    as_status st = {0};

    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], CASES_DIR "%s/%s", id, file[i]);
    if (map_timeloop_load(path[0], path[1], path[2], &c, &st) != AS_OK)
        fail_msg("%s: %s", id, st.message);
    map_evaluate(&c.arch, &c.problem, &c.mapping, &e);
    if (e.validity != MAP_VALID)
        fail_msg("%s: %s: %s", id, map_validity_name(e.validity), e.reason);

    snprintf(path[0], sizeof path[0], CASES_DIR "%s/expected.txt", id);
    FILE *f = fopen(path[0], "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        char kind[16], name[ARCH_NAME_BYTES];
        int used = 0;
        if (line[0] == '#' || sscanf(line, "%15s%n", kind, &used) != 1)
            continue;
        const char *rest = line + used;
        if (!strcmp(kind, "summary")) {
            long long cycles, computes;
            double util, energy, edp;
            assert_int_equal(
                sscanf(rest, "%lld %lld %lf %lf %lf", &cycles, &computes, &util, &energy, &edp), 5);
            assert_int_equal(e.cycles, cycles);
            assert_int_equal(e.macs, computes);
            assert_close(e.utilization * 100, util, 0.005, 0, "utilization %");
            assert_close(e.energy_pJ, energy, 0, 1.5e-6, "energy");
            assert_close(e.edp_J_cycle, edp, 0, 1.5e-6, "EDP");
        } else if (!strcmp(kind, "mac")) {
            long long instances, used_macs, bits;
            double pj, total;
            assert_int_equal(sscanf(rest, "%63s %lld %lld %lld %lf %lf", name, &instances,
                                    &used_macs, &bits, &pj, &total),
                             6);
            assert_int_equal(e.utilized_macs, used_macs);
            assert_close(e.mac_energy_pJ, total, 0.005, 1e-9, "MAC energy");
        } else if (!strcmp(kind, "level")) {
            int dummy;
            long long size, bits, block, cluster, instances;
            double buffering, leak;
            assert_int_equal(sscanf(rest, "%63s %d %lld %lld %lld %lld %lld %lf %lf", name, &dummy,
                                    &size, &bits, &block, &cluster, &instances, &buffering, &leak),
                             9);
            int l = level_named(&c.arch, name);
            assert_close(e.level[l].leak_pJ, leak, 0.005, 1e-9, name);
            assert_true(e.level[l].cycles <= e.cycles);
        } else if (!strcmp(kind, "ds")) {
            check_ds_line(&c, &e, rest, listed);
        } else if (!strcmp(kind, "net")) {
            check_net_line(&c, &e, rest);
        }
    }
    fclose(f);
    /* A data space without a ds line is bypassed there. */
    for (int l = 0; l < e.n_levels; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (e.level[l].keeps[ds] != listed[l * WL_NDATASPACES + ds])
                fail_msg("%s level %s ds %d: keeps %d, reference %d", id, c.arch.level[l].name, ds,
                         e.level[l].keeps[ds], listed[l * WL_NDATASPACES + ds]);
}

#define REFERENCE_CASES(X)                                                                         \
    X(eyeriss_like__resnet50_conv2x_3x3_c64m64_56)                                                 \
    X(eyeriss_like__stem_conv3x3s2_c3m32_112)                                                      \
    X(eyeriss_tutorial06__vgg16_conv3_1_c128m256_56)                                               \
    X(micro_conv1d_1level)                                                                         \
    X(micro_conv1d_2level_os)                                                                      \
    X(micro_conv1d_2level_ws)                                                                      \
    X(micro_conv1d_oc_2level_tiled)                                                                \
    X(micro_conv1d_oc_3level_bypass)                                                               \
    X(micro_conv1d_oc_3level_nobypass)                                                             \
    X(micro_conv1d_oc_ic_3levelspatial_cp)                                                         \
    X(micro_conv1d_oc_ic_3levelspatial_kp)                                                         \
    X(simba_like__resnet50_conv2x_3x3_c64m64_56)                                                   \
    X(simba_like__stem_conv3x3s2_c3m32_112)                                                        \
    X(simple_output_stationary__resnet50_conv2x_3x3_c64m64_56)                                     \
    X(simple_output_stationary__stem_conv3x3s2_c3m32_112)                                          \
    X(simple_weight_stationary__resnet50_conv2x_3x3_c64m64_56)                                     \
    X(simple_weight_stationary__stem_conv3x3s2_c3m32_112)

#define DEFINE_CASE_TEST(id)                                                                       \
    static void test_##id(void **state)                                                            \
    {                                                                                              \
        (void)state;                                                                               \
        check_case(#id);                                                                           \
    }
REFERENCE_CASES(DEFINE_CASE_TEST)

/* ------------------------------------------------- synthetic architecture */

/*
 * A small accelerator for the property and invalid-mapping tests: DRAM,
 * a global buffer feeding 4 x 4 PEs, each PE a register file over one
 * MAC.  Energies are distinct per action so that a mix-up shows.
 */
static void toy_arch(arch_spec *a)
{
    static const struct {
        const char *name;
        int64_t size;
        int block, mx, my;
        double r, f, u, leak;
    } spec[] = {
        {"rf", 64, 1, 4, 4, 0.5, 0.6, 0.7, 0.001},
        {"glb", 4096, 4, 1, 1, 8.0, 9.0, 10.0, 0.01},
        {"dram", 0, 8, 1, 1, 200.0, 210.0, 220.0, 0.0},
    };
    memset(a, 0, sizeof *a);
    strcpy(a->name, "toy");
    a->n_levels = 3;
    for (int l = 0; l < 3; l++) {
        arch_level *al = &a->level[l];
        strcpy(al->name, spec[l].name);
        al->cls = l == 2 ? ARCH_CLASS_DRAM : l == 1 ? ARCH_CLASS_SRAM : ARCH_CLASS_REGFILE;
        al->size_words = spec[l].size;
        al->word_bits = 8;
        al->block_size = spec[l].block;
        al->cluster_size = 1;
        al->mesh_x = spec[l].mx;
        al->mesh_y = spec[l].my;
        al->instances = spec[l].mx * spec[l].my;
        al->multiple_buffering = 1;
        al->energy = (arch_energy){spec[l].r, spec[l].f, spec[l].u, spec[l].leak};
    }
    a->compute = (arch_compute){.kind = ARCH_COMPUTE_MAC,
                                .instances = 16,
                                .mesh_x = 4,
                                .mesh_y = 4,
                                .rows = 1,
                                .cols = 1,
                                .mac_bits = 8,
                                .mac_pJ = 0.25};
}

/* A convolution problem in Timeloop's form (strides sw, sh). */
static void conv_problem(wl_problem *p, const int64_t bound[WL_NDIMS], int64_t sw, int64_t sh)
{
    memset(p, 0, sizeof *p);
    memcpy(p->bound, bound, sizeof p->bound);
    wl_dataspace *w = &p->ds[WL_DS_WEIGHTS], *in = &p->ds[WL_DS_INPUTS],
                 *out = &p->ds[WL_DS_OUTPUTS];
    static const wl_dim wdims[] = {WL_DIM_G, WL_DIM_M, WL_DIM_C, WL_DIM_R, WL_DIM_S};
    static const wl_dim odims[] = {WL_DIM_N, WL_DIM_G, WL_DIM_M, WL_DIM_P, WL_DIM_Q};
    w->name = "Weights", in->name = "Inputs", out->name = "Outputs";
    w->n_ranks = out->n_ranks = 5;
    for (int r = 0; r < 5; r++) {
        w->ranks[r] = (wl_proj_rank){1, {{wdims[r], 1}}};
        out->ranks[r] = (wl_proj_rank){1, {{odims[r], 1}}};
    }
    in->n_ranks = 5;
    in->ranks[0] = (wl_proj_rank){1, {{WL_DIM_N, 1}}};
    in->ranks[1] = (wl_proj_rank){1, {{WL_DIM_G, 1}}};
    in->ranks[2] = (wl_proj_rank){1, {{WL_DIM_C, 1}}};
    in->ranks[3] = (wl_proj_rank){2, {{WL_DIM_P, sw}, {WL_DIM_R, 1}}};
    in->ranks[4] = (wl_proj_rank){2, {{WL_DIM_Q, sh}, {WL_DIM_S, 1}}};
    out->read_write = true;
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static int64_t rng_below(uint64_t *s, int64_t n)
{
    return (int64_t)(rng_next(s) % (uint64_t)n);
}

/* A random permutation of the dims. */
static void random_order(uint64_t *s, uint8_t order[WL_NDIMS])
{
    for (int i = 0; i < WL_NDIMS; i++)
        order[i] = (uint8_t)i;
    for (int i = WL_NDIMS - 1; i > 0; i--) {
        int j = (int)rng_below(s, i + 1);
        uint8_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/*
 * A random mapping of p on the toy architecture: every prime factor of
 * every bound goes to a random level, in time, or in space where the
 * 4 x 4 fanout of the glb still has room; random orders and bypasses.
 */
static void random_mapping(uint64_t *s, const wl_problem *p, map_mapping *m)
{
    int64_t room[2] = {4, 4};
    memset(m, 0, sizeof *m);
    m->n_levels = 3;
    for (int l = 0; l < 3; l++) {
        map_level *ml = &m->level[l];
        for (int d = 0; d < WL_NDIMS; d++)
            ml->temporal[d] = ml->spatial[d] = 1;
        random_order(s, ml->temporal_order);
        random_order(s, ml->spatial_order);
        ml->spatial_split = (int)rng_below(s, WL_NDIMS + 1);
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            ml->keep[ds] = l == 2 || rng_below(s, 3) != 0;
    }
    map_level *glb = &m->level[1];
    for (int d = 0; d < WL_NDIMS; d++) {
        int64_t rest = p->bound[d];
        for (int64_t f = 2; rest > 1; f++)
            while (rest % f == 0) {
                rest /= f;
                int pos = 0;
                while (pos < WL_NDIMS && glb->spatial_order[pos] != d)
                    pos++;
                int axis = pos >= glb->spatial_split;
                if (rng_below(s, 4) == 0 && room[axis] % f == 0) {
                    glb->spatial[d] *= f;
                    room[axis] /= f;
                } else {
                    m->level[rng_below(s, 3)].temporal[d] *= f;
                }
            }
    }
}

/* Random small convolution bounds, strides 1 or 2. */
static void random_problem(uint64_t *s, wl_problem *p)
{
    static const int64_t choices[] = {1, 2, 3, 4, 6, 8};
    int64_t bound[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        bound[d] = choices[rng_below(s, 6)];
    bound[WL_DIM_N] = 1 + rng_below(s, 2);
    bound[WL_DIM_G] = 1;
    bound[WL_DIM_R] = bound[WL_DIM_S] = 1 + 2 * rng_below(s, 2);
    conv_problem(p, bound, 1 + rng_below(s, 2), 1 + rng_below(s, 2));
}

/*
 * Properties of every evaluated random mapping: MACs = product of bounds,
 * compute cycles * utilized MACs = MACs, kept tiles within capacity,
 * a read-only tile below the backing store is filled at least once, each
 * level's energy is the sum of its data spaces and leakage, and the total
 * is MACs plus levels.
 */
static void check_properties(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                             const map_eval *e)
{
    int64_t macs = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        macs *= p->bound[d];
    assert_int_equal(e->macs, macs);
    assert_int_equal(e->compute_cycles * e->utilized_macs, macs);
    assert_true(e->cycles >= e->compute_cycles);
    double total = e->mac_energy_pJ;
    for (int l = 0; l < e->n_levels; l++) {
        const map_level_stats *ls = &e->level[l];
        int64_t words = 0;
        double level = ls->leak_pJ;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            const map_ds_stats *s = &ls->ds[ds];
            level += s->energy_pJ;
            if (!m->level[l].keep[ds])
                continue;
            words += s->tile_words;
            assert_true(s->tile_words >= 1 && s->partition_words >= s->tile_words / 16);
            if (l < e->n_levels - 1 && !p->ds[ds].read_write)
                assert_true(s->fills >= s->tile_words);
            if (l < e->n_levels - 1 && p->ds[ds].read_write)
                assert_true(s->updates >= s->tile_words);
            assert_true(s->reads >= 0 && s->fills >= 0 && s->updates >= 0);
        }
        if (a->level[l].size_words > 0)
            assert_true(words <= a->level[l].size_words);
        assert_close(ls->energy_pJ, level, 1e-9, 1e-12, "level energy");
        total += ls->energy_pJ;
    }
    assert_close(e->energy_pJ, total, 1e-9, 1e-12, "total energy");
}

static void test_random_mappings(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    arch_spec a;
    wl_problem p;
    map_mapping m;
    map_eval e;
    int valid = 0, over_capacity = 0;
    toy_arch(&a);
    for (int i = 0; i < 3000; i++) {
        random_problem(&seed, &p);
        random_mapping(&seed, &p, &m);
        map_evaluate(&a, &p, &m, &e);
        if (e.validity == MAP_INVALID_CAPACITY) {
            over_capacity++;
            assert_non_null(strstr(e.reason, "exceed"));
            continue;
        }
        if (e.validity != MAP_VALID)
            fail_msg("mapping %d: %s: %s", i, map_validity_name(e.validity), e.reason);
        check_properties(&a, &p, &m, &e);
        valid++;
    }
    assert_true(valid > 1000);
    assert_true(over_capacity > 0);
}

/* ---------------------------------------------------------- invalid mappings */

/* A valid starting point: 4x4x8x8 problem, everything temporal at DRAM
 * except C and M spread over the PEs, all kept everywhere. */
static void toy_case(arch_spec *a, wl_problem *p, map_mapping *m)
{
    int64_t bound[WL_NDIMS] = {[WL_DIM_N] = 1, [WL_DIM_G] = 1, [WL_DIM_C] = 8, [WL_DIM_M] = 8,
                               [WL_DIM_P] = 4, [WL_DIM_Q] = 4, [WL_DIM_R] = 3, [WL_DIM_S] = 3};
    toy_arch(a);
    conv_problem(p, bound, 1, 1);
    memset(m, 0, sizeof *m);
    m->n_levels = 3;
    for (int l = 0; l < 3; l++) {
        for (int d = 0; d < WL_NDIMS; d++) {
            m->level[l].temporal[d] = m->level[l].spatial[d] = 1;
            m->level[l].temporal_order[d] = m->level[l].spatial_order[d] = (uint8_t)d;
        }
        m->level[l].spatial_split = WL_NDIMS;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            m->level[l].keep[ds] = true;
    }
    m->level[1].spatial_order[0] = WL_DIM_C, m->level[1].spatial_order[WL_DIM_C] = WL_DIM_N;
    m->level[1].spatial_split = 1; /* C on X, the rest on Y */
    m->level[1].spatial[WL_DIM_C] = 4;
    m->level[1].spatial[WL_DIM_M] = 4;
    m->level[0].temporal[WL_DIM_R] = 3;
    m->level[1].temporal[WL_DIM_S] = 3;
    m->level[2].temporal[WL_DIM_C] = 2;
    m->level[2].temporal[WL_DIM_M] = 2;
    m->level[2].temporal[WL_DIM_P] = 4;
    m->level[2].temporal[WL_DIM_Q] = 4;
}

/* Evaluate and expect validity v with every fragment in the reason. */
static void expect_invalid(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                           map_validity v, const char *frag1, const char *frag2)
{
    map_eval e;
    map_evaluate(a, p, m, &e);
    if (e.validity != v)
        fail_msg("validity %s (%s), expected %s", map_validity_name(e.validity), e.reason,
                 map_validity_name(v));
    if (!strstr(e.reason, frag1) || !strstr(e.reason, frag2))
        fail_msg("reason \"%s\" lacks \"%s\" or \"%s\"", e.reason, frag1, frag2);
}

static void test_invalid_mappings(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    map_mapping m;
    map_eval e;

    toy_case(&a, &p, &m);
    map_evaluate(&a, &p, &m, &e);
    assert_int_equal(e.validity, MAP_VALID);
    assert_string_equal(map_validity_name(MAP_VALID), "valid");

    m.level[2].temporal[WL_DIM_P] = 2; /* P: 2 != 4 */
    expect_invalid(&a, &p, &m, MAP_INVALID_FACTORS, "dim P", "bound is 4");

    toy_case(&a, &p, &m);
    m.level[1].spatial[WL_DIM_C] = 8, m.level[2].temporal[WL_DIM_C] = 1; /* 8 > 4 PEs on X */
    expect_invalid(&a, &p, &m, MAP_INVALID_FANOUT, "glb", "X factors 8 exceed fanout 4");

    toy_case(&a, &p, &m);
    m.level[2].keep[WL_DS_INPUTS] = false;
    expect_invalid(&a, &p, &m, MAP_INVALID_KEEP, "dram", "Inputs");

    toy_case(&a, &p, &m);
    m.level[0].temporal[WL_DIM_P] = 4, m.level[2].temporal[WL_DIM_P] = 1;
    m.level[0].temporal[WL_DIM_Q] = 4, m.level[2].temporal[WL_DIM_Q] = 1;
    m.level[0].temporal[WL_DIM_M] = 2, m.level[2].temporal[WL_DIM_M] = 1;
    m.level[0].temporal[WL_DIM_C] = 2,
    m.level[2].temporal[WL_DIM_C] = 1; /* rf: 12 + 48 + 32 > 64 words */
    expect_invalid(&a, &p, &m, MAP_INVALID_CAPACITY, "rf", "exceed 64");

    toy_case(&a, &p, &m);
    a.level[1].size_words_by_ds[WL_DS_WEIGHTS] = 2; /* split capacity: weights tile is 9*2 words */
    a.level[1].size_words_by_ds[WL_DS_INPUTS] = 4000;
    a.level[1].size_words_by_ds[WL_DS_OUTPUTS] = 94;
    expect_invalid(&a, &p, &m, MAP_INVALID_CAPACITY, "glb", "Weights");

    toy_case(&a, &p, &m);
    a.level[1].multiple_buffering = 2; /* 4096 / 2 still holds the glb tile */
    map_evaluate(&a, &p, &m, &e);
    assert_int_equal(e.validity, MAP_VALID);

    toy_case(&a, &p, &m);
    m.level[1].temporal_order[3] = m.level[1].temporal_order[2];
    expect_invalid(&a, &p, &m, MAP_INVALID_SHAPE, "glb", "permutation");

    toy_case(&a, &p, &m);
    m.n_levels = 2;
    expect_invalid(&a, &p, &m, MAP_INVALID_SHAPE, "2 levels", "architecture 3");

    toy_case(&a, &p, &m);
    m.level[0].temporal[WL_DIM_N] = 0;
    expect_invalid(&a, &p, &m, MAP_INVALID_FACTORS, "rf", "dim N");
}

/* Systolic compute units take their cycles from the SCALE-Sim fold model
 * over the GEMM each array runs: here one 4 x 4 array per PE, 16 PEs. */
static void test_systolic_compute_cycles(void **state)
{
    (void)state;
    arch_spec a;
    wl_problem p;
    map_mapping m;
    map_eval e;
    toy_case(&a, &p, &m);
    a.compute.kind = ARCH_COMPUTE_SYSTOLIC;
    a.compute.rows = a.compute.cols = 4;
    a.compute.dataflow = ARCH_DATAFLOW_WS;
    map_evaluate(&a, &p, &m, &e);
    assert_int_equal(e.validity, MAP_VALID);
    /* per array: C = 8/4, M = 8/4, P = Q = 4, R = S = 3 */
    assert_int_equal(e.compute_cycles,
                     map_systolic_cycles(4 * 4, 2, 2 * 3 * 3, 4, 4, ARCH_DATAFLOW_WS));
    assert_true(e.cycles >= e.compute_cycles);
    assert_true(e.utilization > 0 && e.utilization <= 1);
}

int main(void)
{
#define CASE_ENTRY(id) cmocka_unit_test(test_##id),
    const struct CMUnitTest tests[] = {
        REFERENCE_CASES(CASE_ENTRY) cmocka_unit_test(test_random_mappings),
        cmocka_unit_test(test_invalid_mappings),
        cmocka_unit_test(test_systolic_compute_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
