/*
 * test_systolic.c -- systolic-array cycles against SCALE-Sim v2's own runs
 * (tests/data/scalesim/runs.txt, extracted from the reference JSON by
 * scripts/extract_scalesim.py) and against hand-worked cases of
 * docs/systolic-formulas.md on non-square arrays, which the 32x32 runs cannot tell apart.
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

#define RUNS_PATH AS_TEST_DATA_DIR "/scalesim/runs.txt"

/* One line of runs.txt: the layer as SCALE-Sim took it and what it reported. */
typedef struct run {
    char id[64], name[32], dataflow[4];
    int rows, cols;
    map_systolic_layer layer;
    map_systolic_gemm expect_gemm;
    int64_t expect_cycles;
} run;

/* SCALE-Sim's dataflow names. */
static arch_dataflow parse_dataflow(const char *name)
{
    if (!strcmp(name, "os"))
        return ARCH_DATAFLOW_OS;
    if (!strcmp(name, "ws"))
        return ARCH_DATAFLOW_WS;
    assert_string_equal(name, "is");
    return ARCH_DATAFLOW_IS;
}

/*
 * Parse one non-comment line into r; fails the test on a malformed line.
 * A gemm line becomes the layer SCALE-Sim makes of an M, N, K row
 * (topology_utils.py, load_arrays_gemm): ifmap M x K, filter 1 x K, one
 * channel, N filters, stride 1.  A layer is depthwise, as in SCALE-Sim,
 * when its name contains "DP".
 */
static void parse_run(const char *line, run *r)
{
    char kind[8];
    long long v[13];
    int used = 0;
    memset(r, 0, sizeof *r);
    assert_int_equal(sscanf(line, "%7s %63s %31s %3s %d %d%n", kind, r->id, r->name, r->dataflow,
                            &r->rows, &r->cols, &used),
                     6);
    line += used;
    if (!strcmp(kind, "conv")) {
        assert_int_equal(sscanf(line,
                                "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
                                &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
                                &v[9], &v[10], &v[11], &v[12]),
                         13);
        r->layer = (map_systolic_layer){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], false};
        memmove(v, v + 8, 5 * sizeof v[0]);
    } else {
        assert_string_equal(kind, "gemm");
        assert_int_equal(sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
                                &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]),
                         8);
        r->layer = (map_systolic_layer){.ifmap_h = v[0],
                                        .ifmap_w = v[2],
                                        .filter_h = 1,
                                        .filter_w = v[2],
                                        .channels = 1,
                                        .num_filters = v[1],
                                        .stride_h = 1,
                                        .stride_w = 1};
        memmove(v, v + 3, 5 * sizeof v[0]);
    }
    r->layer.depthwise = strstr(r->name, "DP") != NULL;
    r->expect_gemm = (map_systolic_gemm){v[0], v[1], v[2], v[3]};
    r->expect_cycles = v[4];
}

#define MAX_RUNS 32

/* Every run of RUNS_PATH into runs[], in file order; the file holds the 21
 * runs (checked here, so that no test passes on an empty file). */
static int read_runs(run runs[MAX_RUNS])
{
    FILE *f = fopen(RUNS_PATH, "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        assert_true(n < MAX_RUNS);
        parse_run(line, &runs[n++]);
    }
    fclose(f);
    assert_int_equal(n, 21);
    return n;
}

/* Every SCALE-Sim run: the GEMM view and the reported Total Cycles, exact. */
static void test_scalesim_runs(void **state)
{
    (void)state;
    run runs[MAX_RUNS];
    int n_runs = read_runs(runs), n_depthwise = 0, n_by_dataflow[3] = {0};
    for (int i = 0; i < n_runs; i++) {
        const run r = runs[i];
        arch_dataflow df = parse_dataflow(r.dataflow);
        map_systolic_gemm g;
        assert_true(map_systolic_layer_gemm(&r.layer, &g));
        if (g.m != r.expect_gemm.m || g.n != r.expect_gemm.n || g.k != r.expect_gemm.k ||
            g.repeats != r.expect_gemm.repeats)
            fail_msg("%s: GEMM view %lld %lld %lld x%lld, SCALE-Sim's %lld %lld %lld x%lld", r.id,
                     (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.repeats,
                     (long long)r.expect_gemm.m, (long long)r.expect_gemm.n,
                     (long long)r.expect_gemm.k, (long long)r.expect_gemm.repeats);
        int64_t cycles = map_systolic_layer_cycles(&r.layer, r.rows, r.cols, df);
        if (cycles != r.expect_cycles)
            fail_msg("%s: %lld cycles, SCALE-Sim reported %lld", r.id, (long long)cycles,
                     (long long)r.expect_cycles);
        if (g.repeats == 1) /* the GEMM entry point gives the same figure */
            assert_int_equal(map_systolic_cycles(g.m, g.n, g.k, r.rows, r.cols, df), cycles);
        n_depthwise += r.layer.depthwise;
        n_by_dataflow[df]++;
    }
    /* The file really holds the 21 runs: 7 layers x 3 dataflows, one depthwise. */
    assert_int_equal(n_runs, 21);
    assert_int_equal(n_depthwise, 3);
    for (int df = 0; df < 3; df++)
        assert_int_equal(n_by_dataflow[df], 7);
}

/* The run's layer as a one-op graph (no padding, SCALE-Sim's output size)
 * lowered to its loop-nest problem. */
static void layer_problem(const run *r, wl_problem *p)
{
    const map_systolic_layer *l = &r->layer;
    /* ceil((H - R + S) / S), SCALE-Sim's output size */
    int64_t e = (l->ifmap_h - l->filter_h + 2 * l->stride_h - 1) / l->stride_h;
    int64_t f = (l->ifmap_w - l->filter_w + 2 * l->stride_w - 1) / l->stride_w;
    int64_t out_channels = l->depthwise ? l->channels * l->num_filters : l->num_filters;
    int64_t group = l->depthwise ? l->channels : 1;
    wl_graph *g = wl_graph_new("layer", "scalesim");
    int32_t x = wl_add_tensor(g, "x", WL_TENSOR_INPUT, WL_DTYPE_I8, 4,
                              (int64_t[]){1, l->channels, l->ifmap_h, l->ifmap_w}, NULL);
    int32_t w = wl_add_tensor(
        g, "w", WL_TENSOR_WEIGHT, WL_DTYPE_I8, 4,
        (int64_t[]){out_channels, l->channels / group, l->filter_h, l->filter_w}, NULL);
    int32_t y = wl_add_tensor(g, "y", WL_TENSOR_ACTIVATION, WL_DTYPE_I8, 4,
                              (int64_t[]){1, out_channels, e, f}, NULL);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    a.strides[0] = l->stride_h;
    a.strides[1] = l->stride_w;
    a.group = group;
    int32_t op = wl_add_op(g, WL_OP_CONV, "conv", NULL, 2, (int32_t[]){x, w}, 1, &y, &a, NULL);
    assert_true(op >= 0);
    assert_int_equal(wl_op_problem(g, op, p, NULL), AS_OK);
    wl_graph_free(g);
}

/* One rows x cols array under an unbounded DRAM that holds everything. */
static void one_array_arch(int rows, int cols, arch_dataflow dataflow, arch_spec *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "array%dx%d", rows, cols);
    a->technology_nm = 45;
    a->cycle_seconds = 1e-9;
    a->n_levels = 1;
    arch_level *dram = &a->level[0];
    snprintf(dram->name, sizeof dram->name, "DRAM");
    dram->cls = ARCH_CLASS_DRAM;
    dram->word_bits = 8;
    dram->block_size = dram->cluster_size = 1;
    dram->instances = dram->mesh_x = dram->mesh_y = 1;
    dram->multiple_buffering = 1;
    snprintf(a->compute.name, sizeof a->compute.name, "array");
    a->compute.kind = ARCH_COMPUTE_SYSTOLIC;
    a->compute.instances = a->compute.mesh_x = a->compute.mesh_y = 1;
    a->compute.rows = rows;
    a->compute.cols = cols;
    a->compute.dataflow = dataflow;
    a->compute.mac_bits = 8;
}

/* Every loop of p temporal at the one level, everything kept there; the
 * group packing left at its default (one group at a time). */
static void all_temporal_mapping(const wl_problem *p, map_mapping *m)
{
    memset(m, 0, sizeof *m);
    m->n_levels = 1;
    for (int d = 0; d < WL_NDIMS; d++) {
        m->level[0].temporal[d] = p->bound[d];
        m->level[0].temporal_order[d] = (uint8_t)d;
        m->level[0].spatial[d] = 1;
        m->level[0].spatial_order[d] = (uint8_t)d;
    }
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        m->level[0].keep[ds] = true;
}

/* One array under an unbounded DRAM holding everything, every loop
 * temporal (one_array_arch, all_temporal_mapping), with hand-set PE
 * energies (they change energies only, never cycles). */
static void one_array_design(const run *r, const wl_problem *p, arch_spec *a, map_mapping *m)
{
    one_array_arch(r->rows, r->cols, parse_dataflow(r->dataflow), a);
    a->compute.pe_reg_pJ = 1;
    a->compute.pe_acc_reg_pJ = 2;
    a->compute.pe_hop_pJ = 10;
    a->compute.pe_acc_hop_pJ = 20;
    all_temporal_mapping(p, m);
}

/* map_evaluate of run r's layer on one_array_design; fails the test with
 * the reason when the mapping is not valid. */
static void evaluate_run(const run *r, map_eval *e)
{
    wl_problem p;
    layer_problem(r, &p);
    arch_spec a;
    map_mapping m;
    one_array_design(r, &p, &a, &m);
    map_evaluate(&a, &p, &m, e);
    if (e->validity != MAP_VALID)
        fail_msg("%s: %s", r->id, e->reason);
}

/*
 * The cost model on a systolic architecture gives SCALE-Sim's cycles: one
 * rows x cols array under an unbounded DRAM that holds everything, all
 * loops temporal, so the array runs the whole layer fold by fold.
 */
static void test_evaluate_matches_scalesim(void **state)
{
    (void)state;
    run runs[MAX_RUNS];
    int n_runs = read_runs(runs);
    for (int i = 0; i < n_runs; i++) {
        const run r = runs[i];
        map_eval e;
        evaluate_run(&r, &e);
        if (e.cycles != r.expect_cycles)
            fail_msg("%s: map_evaluate gives %lld cycles, SCALE-Sim reported %lld", r.id,
                     (long long)e.cycles, (long long)r.expect_cycles);
    }
}

/*
 * Non-square arrays, worked by hand from docs/systolic-formulas.md section 5, so that
 * swapping rows and columns, or OS's fill for WS's, shows.  GEMM
 * M = 100, N = 70, K = 30 on 8 rows x 16 cols:
 *   OS: ceil(100/8)=13 * ceil(70/16)=5 folds * (30+8+16-2 = 52) - 1 = 3379
 *   WS: ceil(30/8)=4 * ceil(70/16)=5 folds * (100+16+16-2 = 130) - 1 = 2599
 *   IS: ceil(30/8)=4 * ceil(100/16)=7 folds * (70+16+16-2 = 100) - 1 = 2799
 * and on 16 rows x 8 cols:
 *   OS: 7 * 9 * (30+16+8-2 = 52) - 1 = 3275
 *   WS: 2 * 9 * (100+32+8-2 = 138) - 1 = 2483
 *   IS: 2 * 13 * (70+32+8-2 = 108) - 1 = 2807
 */
static void test_non_square(void **state)
{
    (void)state;
    static const struct {
        int rows, cols;
        arch_dataflow df;
        int64_t cycles;
    } cases[] = {
        {8, 16, ARCH_DATAFLOW_OS, 3379}, {8, 16, ARCH_DATAFLOW_WS, 2599},
        {8, 16, ARCH_DATAFLOW_IS, 2799}, {16, 8, ARCH_DATAFLOW_OS, 3275},
        {16, 8, ARCH_DATAFLOW_WS, 2483}, {16, 8, ARCH_DATAFLOW_IS, 2807},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(
            map_systolic_cycles(100, 70, 30, cases[i].rows, cases[i].cols, cases[i].df),
            cases[i].cycles);
    /* One MAC on a 1x1 array: one fold of 1 (OS) or 2 (WS/IS) lines. */
    assert_int_equal(map_systolic_cycles(1, 1, 1, 1, 1, ARCH_DATAFLOW_OS), 0);
    assert_int_equal(map_systolic_cycles(1, 1, 1, 1, 1, ARCH_DATAFLOW_WS), 1);
}

/*
 * The output-size rule: ceil, not the framework floor.  7x7 stride 2 over
 * 224 gives 110 (PyTorch, no padding: 109); over 229 it gives 112, and 230
 * gives 113.  A strided 1-wide window over 5 with stride 2: 3 outputs.
 */
static void test_output_size(void **state)
{
    (void)state;
    static const struct {
        int64_t in, filter, stride, out;
    } cases[] = {{224, 7, 2, 110}, {229, 7, 2, 112}, {230, 7, 2, 113}, {5, 1, 2, 3}, {7, 7, 3, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        map_systolic_layer l = {cases[i].in, 1,    cases[i].filter, 1, 1, 1, cases[i].stride,
                                1,           false};
        map_systolic_gemm g;
        assert_true(map_systolic_layer_gemm(&l, &g));
        assert_int_equal(g.m, cases[i].out);
    }
}

/* Bad arguments give -1 / false, never a crash or a wrapped count. */
static void test_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(map_systolic_cycles(0, 1, 1, 8, 8, ARCH_DATAFLOW_OS), -1);
    assert_int_equal(map_systolic_cycles(1, -1, 1, 8, 8, ARCH_DATAFLOW_WS), -1);
    assert_int_equal(map_systolic_cycles(1, 1, 1, 0, 8, ARCH_DATAFLOW_IS), -1);
    assert_int_equal(map_systolic_cycles(1, 1, 1, 8, -3, ARCH_DATAFLOW_OS), -1);
    assert_int_equal(map_systolic_cycles(1, 1, 1, 8, 8, (arch_dataflow)7), -1);
    assert_int_equal(map_systolic_cycles(INT64_MAX, INT64_MAX, 1, 1, 1, ARCH_DATAFLOW_OS), -1);
    assert_int_equal(map_systolic_cycles(1, 1, INT64_MAX, 8, 8, ARCH_DATAFLOW_OS), -1);

    map_systolic_gemm g = {0};
    map_systolic_layer filter_too_big = {3, 3, 5, 1, 1, 1, 1, 1, false};
    assert_false(map_systolic_layer_gemm(&filter_too_big, &g));
    map_systolic_layer zero_stride = {8, 8, 3, 3, 1, 1, 0, 1, false};
    assert_false(map_systolic_layer_gemm(&zero_stride, &g));
    map_systolic_layer huge = {INT64_MAX, INT64_MAX, 1, 1, 1, 1, 1, 1, false};
    assert_false(map_systolic_layer_gemm(&huge, &g));
    assert_int_equal(map_systolic_layer_cycles(&huge, 8, 8, ARCH_DATAFLOW_OS), -1);
    /* Depthwise: channels become repeats; K is the window of one channel. */
    map_systolic_layer dw = {30, 30, 3, 3, 256, 1, 1, 1, true};
    assert_true(map_systolic_layer_gemm(&dw, &g));
    assert_int_equal(g.k, 9);
    assert_int_equal(g.repeats, 256);
}

/* ------------------------------------------- data movement (section 9) */

#define SRAM_PATH AS_TEST_DATA_DIR "/scalesim/sram.txt"

/* SCALE-Sim's SRAM counters of run `id` (sram.txt): IFMAP reads, FILTER
 * reads, OFMAP writes; fails the test when the run is missing. */
static void scalesim_sram(const char *id, int64_t counts[3])
{
    FILE *f = fopen(SRAM_PATH, "r");
    assert_non_null(f);
    char line[256], name[64];
    long long v[3];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = line[0] != '#' &&
                sscanf(line, "%63s %lld %lld %lld", name, &v[0], &v[1], &v[2]) == 4 &&
                !strcmp(name, id);
    fclose(f);
    if (!found)
        fail_msg("%s: not in %s", id, SRAM_PATH);
    for (int i = 0; i < 3; i++)
        counts[i] = v[i];
}

/* The edge words SCALE-Sim counts for run r, with its OS artifact removed:
 * SCALE-Sim adds rows + cols OFMAP writes per fold in OS (FORMULAS.md
 * section 6), words no PE ever produces; we do not reproduce them. */
static void expected_edge_words(const run *r, const map_systolic_gemm *g, int64_t edge[3])
{
    int64_t counts[3];
    scalesim_sram(r->id, counts);
    edge[WL_DS_INPUTS] = counts[0];
    edge[WL_DS_WEIGHTS] = counts[1];
    edge[WL_DS_OUTPUTS] = counts[2];
    if (parse_dataflow(r->dataflow) == ARCH_DATAFLOW_OS) {
        int64_t folds = ((g->m + r->rows - 1) / r->rows) * ((g->n + r->cols - 1) / r->cols);
        edge[WL_DS_OUTPUTS] -= g->repeats * folds * (r->rows + r->cols);
    }
}

/* Every SCALE-Sim run: the words crossing the array's edge are SCALE-Sim's
 * IFMAP and FILTER SRAM reads and OFMAP SRAM writes (less the OS artifact),
 * summed over a depthwise layer's sub-layers. */
static void test_edge_words_match_scalesim(void **state)
{
    (void)state;
    run runs[MAX_RUNS];
    int n_runs = read_runs(runs);
    for (int i = 0; i < n_runs; i++) {
        const run r = runs[i];
        map_systolic_gemm g;
        map_systolic_traffic t;
        assert_true(map_systolic_layer_gemm(&r.layer, &g));
        assert_true(
            map_systolic_traffic_of(g.m, g.n, g.k, r.rows, r.cols, parse_dataflow(r.dataflow), &t));
        int64_t expect[3];
        expected_edge_words(&r, &g, expect);
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (t.edge_words[ds] * g.repeats != expect[ds])
                fail_msg("%s: data space %d: %lld edge words, SCALE-Sim %lld", r.id, ds,
                         (long long)(t.edge_words[ds] * g.repeats), (long long)expect[ds]);
    }
}

/*
 * map_evaluate charges the level above the array with the edge words, not
 * with one access per MAC: on every SCALE-Sim run, the DRAM's reads of
 * Weights and Inputs and its updates of Outputs are SCALE-Sim's counts
 * (less the OS artifact); partial sums drained more than once are read
 * back to be accumulated (reads = updates - outputs).  The movement
 * inside is charged at the PE energies, as the network below level 0, and
 * is in the total.
 */
static void test_evaluate_charges_edge_words(void **state)
{
    (void)state;
    run runs[MAX_RUNS];
    int n_runs = read_runs(runs);
    for (int i = 0; i < n_runs; i++) {
        const run r = runs[i];
        map_eval e;
        evaluate_run(&r, &e);
        map_systolic_gemm g;
        assert_true(map_systolic_layer_gemm(&r.layer, &g));
        int64_t expect[3];
        expected_edge_words(&r, &g, expect);
        const map_ds_stats *ds = e.level[0].ds;
        assert_int_equal(ds[WL_DS_WEIGHTS].reads, expect[WL_DS_WEIGHTS]);
        assert_int_equal(ds[WL_DS_INPUTS].reads, expect[WL_DS_INPUTS]);
        assert_int_equal(ds[WL_DS_OUTPUTS].updates, expect[WL_DS_OUTPUTS]);
        assert_int_equal(ds[WL_DS_OUTPUTS].reads, expect[WL_DS_OUTPUTS] - g.m * g.n * g.repeats);

        map_systolic_traffic t;
        assert_true(
            map_systolic_traffic_of(g.m, g.n, g.k, r.rows, r.cols, parse_dataflow(r.dataflow), &t));
        double reg_pJ = 0, hop_pJ = 0, net_pJ = 0;
        for (int d = 0; d < WL_NDATASPACES; d++) {
            bool psum = d == WL_DS_OUTPUTS;
            reg_pJ += (double)(t.reg_reads[d] + t.reg_writes[d]) * (psum ? 2 : 1);
            hop_pJ += (double)t.hops[d] * (psum ? 20 : 10);
            net_pJ += e.level[0].net[d].energy_pJ;
        }
        assert_true(fabs(e.array_register_pJ - reg_pJ * (double)g.repeats) <= 1e-9 * reg_pJ);
        assert_true(fabs(e.array_hop_pJ - hop_pJ * (double)g.repeats) <= 1e-9 * hop_pJ);
        assert_true(fabs(net_pJ - e.array_register_pJ - e.array_hop_pJ) <= 1e-9 * net_pJ);
        assert_true(fabs(e.energy_pJ - e.mac_energy_pJ - e.level[0].energy_pJ - net_pJ) <=
                    1e-9 * e.energy_pJ);
    }
}

/*
 * The movement inside, by hand, on 8 rows x 16 cols for GEMM M = 100,
 * N = 70, K = 30 (MACs 210,000):
 *   WS: Sr = K = 30 in row folds of 8, 8, 8, 6; Sc = N = 70, 5 column
 *       folds; T = M = 100.  Edge: Inputs 5 * 30 * 100 = 15,000; Outputs
 *       4 * 70 * 100 = 28,000; Weights 30 * 70 = 2,100.  Weights are
 *       shifted down to their row: 70 * (3 * 8*9/2 + 6*7/2) = 9,030 hops.
 *   OS: Sr = M = 100 in 12 folds of 8 and one of 4; Sc = N = 70; T = K.
 *       Outputs drain 70 * (12 * 36 + 10) = 30,940 hops, and the
 *       accumulator is written once per MAC: 240,940 register writes.
 */
static void test_traffic_by_hand(void **state)
{
    (void)state;
    map_systolic_traffic t;
    assert_true(map_systolic_traffic_of(100, 70, 30, 8, 16, ARCH_DATAFLOW_WS, &t));
    assert_int_equal(t.edge_words[WL_DS_INPUTS], 15000);
    assert_int_equal(t.edge_words[WL_DS_OUTPUTS], 28000);
    assert_int_equal(t.edge_words[WL_DS_WEIGHTS], 2100);
    assert_int_equal(t.hops[WL_DS_WEIGHTS], 9030);
    assert_int_equal(t.hops[WL_DS_INPUTS], 210000);
    assert_int_equal(t.hops[WL_DS_OUTPUTS], 210000);
    assert_int_equal(t.reg_writes[WL_DS_WEIGHTS], 9030);
    assert_int_equal(t.reg_writes[WL_DS_OUTPUTS], 210000);
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        assert_int_equal(t.reg_reads[ds], 210000);

    assert_true(map_systolic_traffic_of(100, 70, 30, 8, 16, ARCH_DATAFLOW_OS, &t));
    assert_int_equal(t.edge_words[WL_DS_INPUTS], 5 * 100 * 30);
    assert_int_equal(t.edge_words[WL_DS_WEIGHTS], 13 * 70 * 30);
    assert_int_equal(t.edge_words[WL_DS_OUTPUTS], 100 * 70);
    assert_int_equal(t.hops[WL_DS_OUTPUTS], 30940);
    assert_int_equal(t.reg_writes[WL_DS_OUTPUTS], 240940);

    /* IS: Inputs held (K x M = 30 x 100 loaded once), Weights along rows
     * (ceil(100/16) = 7 column folds), Outputs drained once per row fold. */
    assert_true(map_systolic_traffic_of(100, 70, 30, 8, 16, ARCH_DATAFLOW_IS, &t));
    assert_int_equal(t.edge_words[WL_DS_INPUTS], 3000);
    assert_int_equal(t.edge_words[WL_DS_WEIGHTS], 7 * 30 * 70);
    assert_int_equal(t.edge_words[WL_DS_OUTPUTS], 4 * 100 * 70);

    assert_false(map_systolic_traffic_of(0, 1, 1, 8, 8, ARCH_DATAFLOW_WS, &t));
    assert_false(map_systolic_traffic_of(1, 1, 1, 8, 8, (arch_dataflow)7, &t));
    assert_false(map_systolic_traffic_of(INT64_MAX, INT64_MAX, 1, 1, 1, ARCH_DATAFLOW_OS, &t));
}

/* SCALE-Sim's depthwise reference: 3 x 3 over 30 x 30 x 256, 784 outputs
 * per channel, on a 32 x 32 array. */
static void depthwise_reference(wl_problem *p)
{
    run r;
    memset(&r, 0, sizeof r);
    r.layer = (map_systolic_layer){30, 30, 3, 3, 256, 1, 1, 1, true};
    layer_problem(&r, p);
}

/* map_evaluate of the all-temporal mapping with `pack` groups per array. */
static void evaluate_packed(const arch_spec *a, const wl_problem *p, int64_t pack, map_eval *e)
{
    map_mapping m;
    all_temporal_mapping(p, &m);
    m.group_pack = pack;
    map_evaluate(a, p, &m, e);
}

/*
 * Groups side by side (docs/systolic-formulas.md, "Group packing"): g
 * channels of the depthwise reference form a block-diagonal GEMM of
 * M = 784, N = g, K = 9g, run ceil(256 / g) times.  WS on 32 x 32, per fold
 * 784 + 2*32 + 32 - 2 = 878:
 *   g = 1:  256 * (1 * 878 - 1)                       = 224,512 (SCALE-Sim)
 *   g = 3:  ceil(256/3) = 86 * (1 * 1 * 878 - 1)      =  75,422
 *   g = 32: 8 * (ceil(288/32) = 9 * 1 * 878 - 1)      =  63,208
 * The MACs stay the real ones (784 * 9 * 256), so the utilisation is MACs
 * over 1024 x cycles: the zeros off the diagonal are wasted MACs.
 */
static void test_group_packing(void **state)
{
    (void)state;
    wl_problem p;
    depthwise_reference(&p);
    assert_int_equal(p.bound[WL_DIM_G], 256);
    arch_spec a;
    one_array_arch(32, 32, ARCH_DATAFLOW_WS, &a);
    static const struct {
        int64_t pack, cycles;
    } cases[] = {{0, 224512}, {1, 224512}, {3, 75422}, {32, 63208}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        map_eval e;
        evaluate_packed(&a, &p, cases[i].pack, &e);
        assert_int_equal(e.validity, MAP_VALID);
        assert_int_equal(e.cycles, cases[i].cycles);
        assert_int_equal(e.macs, 784 * 9 * 256);
        assert_true(fabs(e.utilization - (double)e.macs / (1024.0 * (double)e.cycles)) < 1e-12);
    }
    /* More groups than the array runs, a negative pack, or packing on
     * compute that is not a systolic array: not a mapping. */
    map_eval e;
    evaluate_packed(&a, &p, 257, &e);
    assert_int_equal(e.validity, MAP_INVALID_SHAPE);
    evaluate_packed(&a, &p, -1, &e);
    assert_int_equal(e.validity, MAP_INVALID_SHAPE);
    a.compute.kind = ARCH_COMPUTE_MAC;
    a.compute.rows = a.compute.cols = 1;
    evaluate_packed(&a, &p, 2, &e);
    assert_int_equal(e.validity, MAP_INVALID_SHAPE);
}

/* The mapper picks the packing: on the depthwise reference it packs
 * groups, and no packing of its mapping (1 .. 256 tried one by one) runs
 * in fewer cycles; a dense layer keeps one group. */
static void test_mapper_packs_groups(void **state)
{
    (void)state;
    wl_problem p;
    depthwise_reference(&p);
    arch_spec a;
    one_array_arch(32, 32, ARCH_DATAFLOW_WS, &a);
    map_search_options o;
    map_search_options_default(&o);
    static map_problem_outcome out;
    map_problem_search_run(&a, &p, &o, 1, map_effective_budget(&o, 0), NULL, &out);
    assert_true(out.found);
    assert_true(out.mapping.group_pack > 1);
    assert_int_equal(out.eval.cycles, 63208);
    for (int64_t pack = 1; pack <= 256; pack++) {
        map_mapping m = out.mapping;
        m.group_pack = pack;
        map_eval e;
        map_evaluate(&a, &out.mapped, &m, &e);
        assert_int_equal(e.validity, MAP_VALID);
        assert_true(e.cycles >= out.eval.cycles);
    }
    run dense;
    memset(&dense, 0, sizeof dense);
    dense.layer = (map_systolic_layer){30, 30, 3, 3, 16, 16, 1, 1, false};
    layer_problem(&dense, &p);
    map_problem_search_run(&a, &p, &o, 1, map_effective_budget(&o, 0), NULL, &out);
    assert_true(out.found);
    assert_true(out.mapping.group_pack <= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalesim_runs),
        cmocka_unit_test(test_evaluate_matches_scalesim),
        cmocka_unit_test(test_non_square),
        cmocka_unit_test(test_output_size),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_edge_words_match_scalesim),
        cmocka_unit_test(test_evaluate_charges_edge_words),
        cmocka_unit_test(test_traffic_by_hand),
        cmocka_unit_test(test_group_packing),
        cmocka_unit_test(test_mapper_packs_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
