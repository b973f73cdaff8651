/*
 * test_scalesim_import.c -- SCALE-Sim inputs (docs/scalesim-import.md):
 * topology CSVs as model graphs (src/workload/topology.c), configuration
 * files as designs (src/arch/scalesim_cfg.c), the CLI words `model
 * import-topology` and `arch from-scalesim`, and the check of issue 17:
 * the reference layers of tests/data/scalesim, imported from a topology
 * and a configuration written for them, run through `map` with the cycles
 * SCALE-Sim reported (tests/data/scalesim/runs.txt).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "cli_run.h"
#include "mapping/mapping.h"
#include "workload/workload.h"

#define DATA AS_TEST_DATA_DIR "/scalesim/"
#define RUNS_PATH DATA "runs.txt"

/* ------------------------------------------------------------- helpers */

/* Parse text as a topology named "t.csv"; the status into *st. */
static as_code parse_topology(const char *text, wl_graph **g, as_status *st)
{
    as_status_clear(st);
    return wl_topology_parse(text, strlen(text), "t.csv", g, st);
}

/* The graph of a topology that must parse. */
static wl_graph *topology(const char *text)
{
    wl_graph *g = NULL;
    as_status st;
    if (parse_topology(text, &g, &st) != AS_OK)
        fail_msg("%s", st.message);
    return g;
}

/* The topology must fail with a message containing want. */
static void topology_fails(const char *text, const char *want)
{
    wl_graph *g = NULL;
    as_status st;
    assert_int_equal(parse_topology(text, &g, &st), AS_EINVAL);
    assert_null(g);
    if (!strstr(st.message, want))
        fail_msg("want '%s' in: %s", want, st.message);
}

/* The op called name in g (-1 when none). */
static int32_t op_named(const wl_graph *g, const char *name)
{
    for (int32_t i = 0; i < g->n_ops; i++)
        if (!strcmp(g->ops[i].name, name))
            return i;
    return -1;
}

static wl_problem problem_of(const wl_graph *g, const char *name)
{
    int32_t o = op_named(g, name);
    assert_true(o >= 0);
    wl_problem p;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_op_problem(g, o, &p, &st), AS_OK);
    return p;
}

/* One SCALE-Sim run of runs.txt: the layer's name, dataflow, GEMM view
 * (m, n, k, repeats) and reported cycles. */
typedef struct ref_run {
    char name[32], dataflow[4];
    int64_t m, n, k, repeats, cycles;
} ref_run;

enum { MAX_RUNS = 32 };

/* The runs of runs.txt (all 21). */
static int read_runs(ref_run runs[MAX_RUNS])
{
    FILE *f = fopen(RUNS_PATH, "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        assert_true(n < MAX_RUNS);
        ref_run *r = &runs[n++];
        char kind[8], id[64];
        long long v[13];
        int used = 0, rows, cols;
        assert_int_equal(sscanf(line, "%7s %63s %31s %3s %d %d%n", kind, id, r->name, r->dataflow,
                                &rows, &cols, &used),
                         6);
        int skip = !strcmp(kind, "conv") ? 8 : 3; /* the layer's own fields */
        int got = sscanf(
            line + used, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
            &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12]);
        assert_int_equal(got, skip + 5);
        r->m = v[skip];
        r->n = v[skip + 1];
        r->k = v[skip + 2];
        r->repeats = v[skip + 3];
        r->cycles = v[skip + 4];
    }
    fclose(f);
    assert_int_equal(n, 21);
    return n;
}

/* The run of layer `name` on dataflow df. */
static const ref_run *find_run(const ref_run *runs, int n, const char *name, const char *df)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(runs[i].name, name) && !strcmp(runs[i].dataflow, df))
            return &runs[i];
    fail_msg("no run of %s on %s", name, df);
    return NULL;
}

/* -------------------------------------------------------- topologies */

/* The reference topology: every conv layer is the GEMM SCALE-Sim ran
 * (M = N*P*Q, N = M, K = C*R*S, repeated G times), with SCALE-Sim's
 * ceiling rule turned into end padding. */
static void test_conv_topology(void **state)
{
    (void)state;
    wl_graph *g = NULL;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_topology_load(DATA "reference_layers.csv", &g, &st), AS_OK);
    assert_string_equal(g->name, "reference_layers");
    assert_int_equal(g->n_ops, 6);
    ref_run runs[MAX_RUNS];
    int n = read_runs(runs);
    for (int32_t o = 0; o < g->n_ops; o++) {
        const ref_run *r = find_run(runs, n, g->ops[o].name, "ws");
        wl_problem p = problem_of(g, g->ops[o].name);
        assert_int_equal(p.bound[WL_DIM_N] * p.bound[WL_DIM_P] * p.bound[WL_DIM_Q], r->m);
        assert_int_equal(p.bound[WL_DIM_M], r->n);
        assert_int_equal(p.bound[WL_DIM_C] * p.bound[WL_DIM_R] * p.bound[WL_DIM_S], r->k);
        assert_int_equal(p.bound[WL_DIM_G], r->repeats);
        assert_int_equal(wl_problem_macs(&p), r->m * r->n * r->k * r->repeats);
    }
    /* 224 - 7 = 217 is not a multiple of 2: SCALE-Sim's 110th row is padding */
    const wl_op *conv1 = &g->ops[op_named(g, "Conv1")];
    assert_int_equal(conv1->attrs.pads[0], 0);
    assert_int_equal(conv1->attrs.pads[2], 1);
    assert_int_equal(conv1->attrs.pads[3], 1);
    assert_int_equal(g->tensors[conv1->outputs[0]].dims[2], 110);
    assert_int_equal(g->ops[op_named(g, "Conv1p")].attrs.pads[2], 0); /* 229 - 7 = 222 */
    /* one byte a word, as SCALE-Sim's */
    assert_int_equal(g->tensors[conv1->inputs[1]].bits, 8);
    /* no row reads what the one before wrote: six inputs, six outputs */
    assert_int_equal(g->n_inputs, 6);
    assert_int_equal(g->n_outputs, 6);
    wl_graph_free(g);
}

/* The GEMM form: M, N, K rows as MatMuls by a K x N weight; fields after
 * K are ignored (SCALE-Sim ignores them), CRLF line ends and blank lines
 * are as SCALE-Sim reads them. */
static void test_gemm_topology(void **state)
{
    (void)state;
    wl_graph *g = topology("Layer,M,N,K,\r\nQKT,1024,1024,64,\r\n\r\n"
                           "Linear1, 1024, 4800, 1600, 7, note,\r\n");
    assert_int_equal(g->n_ops, 2);
    wl_problem p = problem_of(g, "Linear1");
    assert_int_equal(g->ops[op_named(g, "Linear1")].kind, WL_OP_MATMUL);
    assert_int_equal(p.bound[WL_DIM_P], 1024);
    assert_int_equal(p.bound[WL_DIM_C], 1600);
    assert_int_equal(p.bound[WL_DIM_M], 4800);
    assert_int_equal(wl_problem_macs(&p), INT64_C(1024) * 4800 * 1600);
    wl_graph_free(g);

    g = topology(
        "\xEF\xBB\xBFLayer Name, M, N, K,\nTest 1, 128, 64, 256,"); /* a BOM, no last newline */
    assert_int_equal(g->n_ops, 1);
    assert_string_equal(g->ops[0].name, "Test 1");
    wl_graph_free(g);

    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_topology_load(DATA "reference_gemm.csv", &g, &st), AS_OK);
    p = problem_of(g, "GEMM512");
    assert_int_equal(wl_problem_macs(&p), INT64_C(512) * 512 * 512);
    wl_graph_free(g);
}

/* The trailing comma SCALE-Sim needs (it drops every row's last field),
 * blanks around fields (its alexnet.csv), an optional width stride. */
static void test_trailing_comma(void **state)
{
    (void)state;
    const char *header = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                         "Channels, Num Filter, Strides,\n";
    char text[512];
    snprintf(text, sizeof text,
             "%sConv1     ,224   ,224 ,11 ,11 ,3 ,96 ,4 ,\nWide,9,17,3,3,2,4,1,2,\n", header);
    wl_graph *g = topology(text);
    wl_problem p = problem_of(g, "Conv1");
    assert_int_equal(p.bound[WL_DIM_P], 55); /* ceil((224 - 11) / 4) + 1 */
    p = problem_of(g, "Wide");
    assert_int_equal(p.stride[0], 1);
    assert_int_equal(p.stride[1], 2);
    assert_int_equal(p.bound[WL_DIM_P], 7);
    assert_int_equal(p.bound[WL_DIM_Q], 8); /* ceil((17 - 3) / 2) + 1 */
    wl_graph_free(g);
    /* SCALE-Sim's MobileNet_4k_non_dw.csv has this row: its stride would be lost */
    snprintf(text, sizeof text, "%sConv11,270,512,1,1,256,256,1\n", header);
    topology_fails(text, "t.csv:2:28: the row does not end with a comma");
}

/* Depthwise rows: a name containing "DP" (letter case as written) runs
 * its Channels one at a time, Num Filter filters each. */
static void test_depthwise_marker(void **state)
{
    (void)state;
    wl_graph *g = topology("Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,"
                           "Channels,Num Filter,Strides,\n"
                           "blockDPconv,16,16,3,3,32,1,1,\n"
                           "DPx2,16,16,3,3,32,2,1,\n"
                           "dpconv,16,16,3,3,32,1,1,\n");
    wl_problem p = problem_of(g, "blockDPconv");
    assert_int_equal(g->ops[op_named(g, "blockDPconv")].attrs.group, 32);
    assert_int_equal(p.bound[WL_DIM_G], 32);
    assert_int_equal(p.bound[WL_DIM_C], 1);
    assert_int_equal(p.bound[WL_DIM_M], 1);
    p = problem_of(g, "DPx2"); /* 2 filters per channel: 64 outputs */
    assert_int_equal(p.bound[WL_DIM_G], 32);
    assert_int_equal(p.bound[WL_DIM_M], 2);
    assert_int_equal(g->tensors[g->ops[op_named(g, "DPx2")].outputs[0]].dims[1], 64);
    p = problem_of(g, "dpconv"); /* lower case: an ordinary conv, as in SCALE-Sim */
    assert_int_equal(p.bound[WL_DIM_G], 1);
    assert_int_equal(p.bound[WL_DIM_C], 32);
    wl_graph_free(g);
}

/* A row reads the row before's output when it is exactly that tensor;
 * otherwise its own graph input. */
static void test_chaining(void **state)
{
    (void)state;
    wl_graph *g = topology("Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,"
                           "Channels,Num Filter,Strides,\n"
                           "a,10,10,3,3,4,8,1,\n" /* writes 8 x 8 x 8 */
                           "b,8,8,1,1,8,16,1,\n"  /* reads it: chained */
                           "c,8,8,3,3,16,16,1,\n" /* reads 8 x 8: b wrote 8 x 8 x 16: chained */
                           "d,8,8,3,3,16,16,1,\n" /* c wrote 6 x 6: its own input */
    );
    assert_int_equal(g->n_inputs, 2);
    assert_int_equal(g->n_outputs, 2);
    assert_int_equal(g->ops[op_named(g, "b")].inputs[0], g->ops[op_named(g, "a")].outputs[0]);
    assert_int_equal(g->ops[op_named(g, "c")].inputs[0], g->ops[op_named(g, "b")].outputs[0]);
    assert_int_equal(g->tensors[g->ops[op_named(g, "d")].inputs[0]].kind, WL_TENSOR_INPUT);
    wl_graph_free(g);
    g = topology("Layer,M,N,K,\nQK,128,128,64,\nAV,128,64,128,\n"); /* [128,128] chains */
    assert_int_equal(g->n_inputs, 1);
    assert_int_equal(g->n_outputs, 1);
    wl_graph_free(g);
    /* two layers with one name: tensors told apart by the line */
    g = topology("Layer,M,N,K,\nfc,4,4,4,\nfc,4,4,4,\n");
    assert_int_equal(g->n_ops, 2);
    assert_true(wl_find_tensor(g, "fc@3.weight") >= 0);
    wl_graph_free(g);
}

/* Errors name the file, the line and the column. */
static void test_topology_errors(void **state)
{
    (void)state;
    const char *conv = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,"
                       "Channels,Num Filter,Strides,\n";
    char text[512];
    topology_fails("", "t.csv:1:1: empty topology");
    topology_fails("Layer,M,N,K,\n\n", "t.csv:2:1: no layers after the header");
    topology_fails("conv1,224,224,7,7,3,64,2,\n", "t.csv:1:1: bad header: the first field");
    topology_fails("Layer, H, W, R,\n", "t.csv:1:8: bad header: expected a conv topology");
    topology_fails("Layer,M,N,K,\nfc,12,x7,4,\n", "t.csv:2:7: N is 'x7', not a positive integer");
    topology_fails("Layer,M,N,K,\nfc,12,0,4,\n", "t.csv:2:7: N is '0'");
    topology_fails(
        "Layer,M,N,K,\nfc,12,7,\n",
        "t.csv:2:9: short row: 3 fields before the trailing comma, expected 4 (Layer, M, N, K)");
    snprintf(text, sizeof text, "%sc,8,8,3,3,-4,8,1,\n", conv);
    topology_fails(text, "t.csv:2:11: Channels is '-4'");
    snprintf(text, sizeof text, "%sc,8,8,3,3,4,8,\n", conv);
    topology_fails(text, "t.csv:2:15: short row: 7 fields before the trailing comma, expected 8");
    snprintf(text, sizeof text, "%sc,8,8,3,3,4,8,1,1,1,\n", conv);
    topology_fails(text, "t.csv:2:19: too many fields: 10");
    snprintf(text, sizeof text, "%sc,8,2,3,3,4,8,1,\n", conv);
    topology_fails(text, "t.csv:2:9: the filter (3 x 3) is larger than the IFMAP (8 x 2)");
    topology_fails("Layer,M,N,K,\nok,4,4,4,\nbig,2147483648,2147483648,2,\n",
                   "t.csv:3:1: layer 'big' is too large");
    snprintf(text, sizeof text, "%s ,8,8,3,3,4,8,1,\n", conv);
    topology_fails(text, "t.csv:2:2: the layer has no name");
    wl_graph *g = NULL;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_topology_load(DATA "no_such.csv", &g, &st), AS_EIO);
    assert_non_null(strstr(st.message, "no_such.csv"));
}

/* wl_model_load takes a topology wherever a model is taken. */
static void test_model_load(void **state)
{
    (void)state;
    wl_graph *g = NULL;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_model_load(DATA "reference_gemm.csv", NULL, &g, &st), AS_OK);
    assert_int_equal(g->n_ops, 1);
    wl_graph_free(g);
    assert_true(wl_is_topology_path("x/y.CSV"));
    assert_false(wl_is_topology_path("csv"));
}

/* ------------------------------------------------------ configurations */

static as_code parse_cfg(const char *text, arch_spec *a, as_status *st)
{
    as_status_clear(st);
    return arch_scalesim_parse(text, strlen(text), "c.cfg", a, st);
}

static void cfg_fails(const char *text, const char *want)
{
    arch_spec a;
    as_status st;
    assert_int_equal(parse_cfg(text, &a, &st), AS_EINVAL);
    if (!strstr(st.message, want))
        fail_msg("want '%s' in: %s", want, st.message);
}

/* SCALE-Sim's own scale.cfg (v2), a v3 one, and what they map to. */
static void test_config(void **state)
{
    (void)state;
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_scalesim_load(DATA "scalesim_32x32_is.cfg", &a, &st), AS_OK);
    assert_string_equal(a.name, "scalesim_32x32_is");
    assert_int_equal(a.compute.kind, ARCH_COMPUTE_SYSTOLIC);
    assert_int_equal(a.compute.instances, 1);
    assert_int_equal(a.compute.rows, 32);
    assert_int_equal(a.compute.cols, 32);
    assert_int_equal(a.compute.mac_bits, 8);
    assert_int_equal(a.compute.dataflow, ARCH_DATAFLOW_IS);
    assert_int_equal(a.n_levels, 2);
    const arch_level *sram = &a.level[0];
    assert_int_equal(sram->size_words_by_ds[WL_DS_INPUTS], 64 * 1024);
    assert_int_equal(sram->size_words_by_ds[WL_DS_WEIGHTS], 64 * 1024);
    assert_int_equal(sram->size_words_by_ds[WL_DS_OUTPUTS], 64 * 1024);
    assert_int_equal(sram->word_bits, 8);
    assert_true(sram->multiple_buffering == 2);
    assert_true(sram->read_bandwidth >= 3 * 32); /* each data space at the array's rate */
    assert_int_equal(a.level[1].cls, ARCH_CLASS_DRAM);
    assert_true(a.level[1].shared_bandwidth == 0); /* CALC: never stalls */
    assert_true(a.dram.bandwidth_GBps == 0);
    assert_true(a.cycle_seconds == 1e-9);

    /* v3's scale.cfg, sizes apart, USER bandwidth, keys in any case, comments */
    const char *v3 = "# SCALE-Sim v3\n[general]\nrun_name = tpu_like\n\n[architecture_presets]\n"
                     "ArrayHeight:    128\narraywidth:     64\nIfmapSramSzkB:   6144 \n"
                     "FilterSramSzkB:  1024\nOfmapSramSzkB:   2048\nIfmapOffset:    0\n"
                     "FilterOffset:   10000000\nOfmapOffset:    20000000\nBandwidth : 10, 20\n"
                     "Dataflow = WS\nMemoryBanks:   1\nReadRequestBuffer: 512\n"
                     "WriteRequestBuffer: 512\n; a comment\n[run_presets]\n"
                     "InterfaceBandwidth: USER\nUseRamulatorTrace: False\n"
                     "[layout]\nIfmapCustomLayout: False\n[sparsity]\nSparsitySupport : false\n";
    assert_int_equal(parse_cfg(v3, &a, &st), AS_OK);
    assert_int_equal(a.compute.rows, 128);
    assert_int_equal(a.compute.cols, 64);
    assert_int_equal(a.compute.dataflow, ARCH_DATAFLOW_WS);
    assert_int_equal(a.level[0].size_words_by_ds[WL_DS_INPUTS], 6144 * 1024);
    assert_int_equal(a.level[0].block_size, 128);
    /* USER: three interfaces of Bandwidth[0] = 10 one-byte words per cycle */
    assert_true(a.level[1].shared_bandwidth > 29.999 && a.level[1].shared_bandwidth < 30.001);
    assert_true(a.dram.bandwidth_GBps > 29.999 && a.dram.bandwidth_GBps < 30.001);
}

static void test_config_errors(void **state)
{
    (void)state;
    char text[1024];
    const char *top = "[general]\nrun_name = r\n[run_presets]\nInterfaceBandwidth: CALC\n"
                      "[architecture_presets]\nArrayHeight: 8\n";
    const char *rest = "ArrayWidth: 8\nIfmapSramSzkB: 1\nFilterSramSzkB: 1\nOfmapSramSzkB: 1\n";
    snprintf(text, sizeof text, "%s%sDataflow: os\n", top, rest);
    arch_spec a;
    as_status st;
    assert_int_equal(parse_cfg(text, &a, &st), AS_OK);
    snprintf(text, sizeof text, "%s%sDataflow: rs\n", top, rest);
    cfg_fails(text, "c.cfg:11:11: [architecture_presets] Dataflow is 'rs', not one of os, ws, is");
    snprintf(text, sizeof text, "%s%s", top, rest);
    cfg_fails(text, "c.cfg: [architecture_presets] Dataflow: missing");
    snprintf(text, sizeof text, "%sArrayWidth: eight\n", top);
    cfg_fails(text, "c.cfg:7:13: [architecture_presets] ArrayWidth is 'eight'");
    snprintf(text, sizeof text, "%sArrayDepth: 8\n", top);
    cfg_fails(text, "c.cfg:7:1: [architecture_presets] ArrayDepth: unknown key");
    snprintf(text, sizeof text, "%sarrayheight: 8\n", top);
    cfg_fails(text, "c.cfg:7:1: [architecture_presets] arrayheight given twice (first on line 6)");
    cfg_fails("run_name = r\n", "c.cfg:1:1: a key before any [section]");
    cfg_fails("[general]\nrun_name r\n", "c.cfg:2:1: expected 'key = value'");
    cfg_fails("[compute]\n", "c.cfg:1:1: unknown section [compute]");
    snprintf(text, sizeof text, "%s%sDataflow: os\n[run_presets]\n", top, rest);
    snprintf(text, sizeof text,
             "[general]\nrun_name = r\n[run_presets]\nInterfaceBandwidth: USER\n"
             "[architecture_presets]\nArrayHeight: 8\n%sDataflow: os\n",
             rest);
    cfg_fails(text, "c.cfg: [architecture_presets] Bandwidth: missing");
    snprintf(text, sizeof text, "%s%sDataflow: os\n[sparsity]\nSparsitySupport: true\n", top, rest);
    cfg_fails(text, "SparsitySupport = true");
    assert_int_equal(arch_scalesim_load(DATA "no_such.cfg", &a, &st), AS_EIO);
}

/* arch_load takes a .cfg, and the design it gives survives our YAML. */
static void test_config_yaml_round_trip(void **state)
{
    (void)state;
    arch_spec a, b;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_load(DATA "scalesim_32x32_os.cfg", &a, &st), AS_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/scalesim_import_%ld.yaml", AS_TEST_TMP_DIR, (long)getpid());
    assert_int_equal(arch_save(&a, path, &st), AS_OK);
    assert_int_equal(arch_load(path, &b, &st), AS_OK);
    remove(path);
    assert_string_equal(b.name, a.name);
    assert_int_equal(b.n_levels, a.n_levels);
    assert_int_equal(b.compute.rows, a.compute.rows);
    assert_int_equal(b.compute.dataflow, a.compute.dataflow);
    assert_true(b.level[0].multiple_buffering == a.level[0].multiple_buffering);
    assert_true(b.level[0].read_bandwidth == a.level[0].read_bandwidth);
    assert_memory_equal(b.level[0].size_words_by_ds, a.level[0].size_words_by_ds,
                        sizeof a.level[0].size_words_by_ds);
    assert_true(b.level[1].shared_bandwidth == 0);
    assert_true(arch_peak_power_W(&b) == arch_peak_power_W(&a));
}

/* ------------------------------------------------------------- the CLI */

/* `map --arch CFG --model CSV --json`'s layers: name -> cycles, pack. */
static json_t *map_layers(const char *cfg, const char *csv)
{
    char args[1024];
    snprintf(args, sizeof args, "map --arch '%s%s' --model '%s%s' --json", DATA, cfg, DATA, csv);
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fail_msg("accelsearch %s: exit %d: %s", args, r.status, r.err);
    json_error_t error;
    json_t *v = json_loads(r.out, 0, &error);
    free(r.out);
    assert_non_null(v);
    json_t *layers = json_incref(json_object_get(v, "layers"));
    json_decref(v);
    assert_true(json_is_array(layers));
    return layers;
}

/* The check: every reference layer, imported from the topology
 * and configuration written for SCALE-Sim's runs, costs under `map` the
 * cycles SCALE-Sim reported.  A depthwise layer may run several channels
 * side by side (group packing, which SCALE-Sim cannot): then its cycles
 * are the systolic model's for the pack the mapper chose, and never more
 * than SCALE-Sim's channel-by-channel figure. */
static void test_map_cycles_equal_scalesim(void **state)
{
    (void)state;
    ref_run runs[MAX_RUNS];
    int n = read_runs(runs);
    static const char *const dataflows[] = {"os", "ws", "is"};
    static const arch_dataflow flows[] = {ARCH_DATAFLOW_OS, ARCH_DATAFLOW_WS, ARCH_DATAFLOW_IS};
    int compared = 0;
    for (int d = 0; d < 3; d++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "scalesim_32x32_%s.cfg", dataflows[d]);
        for (int file = 0; file < 2; file++) {
            json_t *layers = map_layers(cfg, file ? "reference_gemm.csv" : "reference_layers.csv");
            size_t i;
            json_t *layer;
            json_array_foreach(layers, i, layer)
            {
                const char *name = json_string_value(json_object_get(layer, "name"));
                int64_t cycles = json_integer_value(json_object_get(layer, "cycles"));
                const ref_run *r = find_run(runs, n, name, dataflows[d]);
                if (r->repeats == 1) {
                    if (cycles != r->cycles)
                        fail_msg("%s on %s: map %lld, SCALE-Sim %lld", name, dataflows[d],
                                 (long long)cycles, (long long)r->cycles);
                } else {
                    json_t *pack = json_object_get(layer, "group_pack");
                    int64_t g = pack ? json_integer_value(pack) : 1;
                    int64_t passes = (r->repeats + g - 1) / g;
                    assert_int_equal(cycles, passes * map_systolic_cycles(r->m, g * r->n, g * r->k,
                                                                          32, 32, flows[d]));
                    assert_true(cycles <= r->cycles);
                    assert_int_equal(r->repeats *
                                         map_systolic_cycles(r->m, r->n, r->k, 32, 32, flows[d]),
                                     r->cycles);
                }
                compared++;
            }
            json_decref(layers);
        }
    }
    assert_int_equal(compared, 21);
}

/* `model import-topology` and `arch from-scalesim`: the summary, the
 * files they write, and errors with file, line and column. */
static void test_cli_commands(void **state)
{
    (void)state;
    char args[1024], onnx[512], yaml[512];
    snprintf(onnx, sizeof onnx, "%s/scalesim_import_%ld.onnx", AS_TEST_TMP_DIR, (long)getpid());
    snprintf(yaml, sizeof yaml, "%s/scalesim_import_%ld.yaml", AS_TEST_TMP_DIR, (long)getpid());
    run_result r;
    snprintf(args, sizeof args, "model import-topology '%sreference_layers.csv' -o '%s'", DATA,
             onnx);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "model reference_layers"));
    assert_non_null(strstr(r.out, "N1 G256 C1 M1 P28 Q28 R3 S3")); /* DPConv */
    assert_non_null(strstr(r.err, "wrote"));
    free(r.out);
    snprintf(args, sizeof args, "model info '%s' --json", onnx);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"Conv1p\""));
    free(r.out);
    remove(onnx);

    snprintf(args, sizeof args, "arch from-scalesim '%sscalesim_32x32_ws.cfg' -o '%s'", DATA, yaml);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "systolic arrays of 32 x 32, ws dataflow"));
    free(r.out);
    snprintf(args, sizeof args, "arch show '%s'", yaml);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "architecture scalesim_32x32_ws"));
    free(r.out);
    remove(yaml);

    /* rows that chain give fuse a group to form */
    snprintf(
        args, sizeof args,
        "fuse --arch '%sscalesim_32x32_ws.cfg' --model '%schained_layers.csv' --algo dp --json",
        DATA, DATA);
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_error_t error;
    json_t *fused = json_loads(r.out, 0, &error);
    assert_non_null(fused);
    assert_int_equal(json_array_size(json_object_get(fused, "groups")), 1);
    json_decref(fused);
    free(r.out);

    snprintf(args, sizeof args, "model import-topology '%sbad_short_row.csv'", DATA);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "bad_short_row.csv:3:23: short row"));
    free(r.out);
    snprintf(args, sizeof args, "map --arch '%sbad_dataflow.cfg' --model alexnet", DATA);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "bad_dataflow.cfg:14:12: [architecture_presets] Dataflow"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_topology),
        cmocka_unit_test(test_gemm_topology),
        cmocka_unit_test(test_trailing_comma),
        cmocka_unit_test(test_depthwise_marker),
        cmocka_unit_test(test_chaining),
        cmocka_unit_test(test_topology_errors),
        cmocka_unit_test(test_model_load),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_yaml_round_trip),
        cmocka_unit_test(test_map_cycles_equal_scalesim),
        cmocka_unit_test(test_cli_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
