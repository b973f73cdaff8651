/*
 * test_study.c -- the study engine: the study file (strict, with file,
 * line and key in every error), the canonical text the store keeps (it
 * reads back to the same spec), the built-in default study, the grid's
 * numbering, one cell against the layer-by-layer costing it stands for,
 * and a small study run, stored, read back and resumed to the same cells.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapping/mapping.h"
#include "study/study.h"

#define SMALL AS_TEST_DATA_DIR "/study/small.yaml"

static study_spec *load_small(void)
{
    study_spec *s = malloc(sizeof *s);
    as_status st;
    as_status_clear(&st);
    assert_non_null(s);
    if (study_load(SMALL, s, &st) != AS_OK)
        fail_msg("%s", st.message);
    return s;
}

/* The small study as the file says it. */
static void test_load(void **state)
{
    (void)state;
    study_spec *s = load_small();
    assert_string_equal(s->name, "small");
    assert_int_equal(s->seed, 7);
    assert_int_equal(s->batch, 1);
    int expect[STUDY_NAXES] = {2, 3, 2, 2, 2, 2};
    for (int a = 0; a < STUDY_NAXES; a++)
        assert_int_equal(s->n[a], expect[a]);
    assert_int_equal(study_cell_count(s), 96);
    assert_string_equal(s->model[1].name, "MobileNetV1");
    assert_string_equal(s->model[1].source, "mobilenet_v1_cifar");
    assert_string_equal(s->model[1].dataset, "CIFAR-10");
    assert_int_equal(s->compression[1].kind, STUDY_COMPRESS_WEIGHT_PRUNING);
    assert_true(study_compression_level(&s->compression[1], 0) == 0.1);
    assert_true(study_compression_level(&s->compression[1], 1) == 0.3);
    assert_true(study_compression_level(&s->compression[2], 1) == 1.0);
    assert_string_equal(s->compression[2].name, "int8");
    assert_int_equal(s->algorithm[1].algorithm, WL_CONV_WINOGRAD_2);
    assert_int_equal(s->algorithm[1].n_layers, 1);
    assert_string_equal(s->algorithm[1].layers[0].layer, "conv1");
    assert_int_equal(s->algorithm[1].layers[0].algorithm, WL_CONV_IM2COL);
    assert_string_equal(s->format[1].name, "csr");
    assert_false(s->software[0].tuned);
    assert_true(s->software[1].tuned);
    assert_int_equal(s->software[1].map_budget, 200);
    assert_string_equal(s->hardware[1].name, "edgetpu");
    assert_int_equal(s->n_accuracy, 2);
    assert_int_equal(s->accuracy[1].compression, 1);
    free(s);
}

/* The canonical text parses back to the same spec, and is a fixed point. */
static void check_canonical(const study_spec *s)
{
    char *text = study_canonical(s);
    assert_non_null(text);
    study_spec *back = calloc(1, sizeof *back);
    as_status st;
    as_status_clear(&st);
    if (study_parse(text, strlen(text), "canonical", back, &st) != AS_OK)
        fail_msg("%s\n%s", st.message, text);
    char *again = study_canonical(back);
    assert_string_equal(text, again);
    assert_int_equal(study_cell_count(back), study_cell_count(s));
    for (int a = 0; a < STUDY_NAXES; a++)
        assert_int_equal(back->n[a], s->n[a]);
    assert_memory_equal(back->compression, s->compression, sizeof s->compression);
    assert_memory_equal(back->algorithm, s->algorithm, sizeof s->algorithm);
    assert_memory_equal(back->software, s->software, sizeof s->software);
    assert_memory_equal(back->hardware, s->hardware, sizeof s->hardware);
    assert_memory_equal(back->accuracy, s->accuracy, sizeof s->accuracy);
    free(again);
    free(back);
    free(text);
}

static void test_canonical(void **state)
{
    (void)state;
    study_spec *s = load_small();
    check_canonical(s);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(study_default(s, &st), AS_OK);
    check_canonical(s);
    free(s);
}

/* The default study is the shape of DLAS's grids: eight models over two
 * datasets, the paper's four compressions and a baseline, accuracies of
 * Tables 2 and 5 for every model and compression. */
static void test_default(void **state)
{
    (void)state;
    study_spec *s = malloc(sizeof *s);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(study_default(s, &st), AS_OK);
    assert_int_equal(s->n[STUDY_AXIS_MODEL], 8);
    assert_int_equal(s->n[STUDY_AXIS_COMPRESSION], 5);
    assert_int_equal(s->n_accuracy, 40);
    int kinds = 0;
    for (int i = 0; i < s->n[STUDY_AXIS_COMPRESSION]; i++)
        kinds |= 1 << s->compression[i].kind;
    assert_int_equal(kinds, 0x1f);
    /* The file users read is the study run. */
    study_spec *file = malloc(sizeof *file);
    assert_int_equal(study_load(AS_TEST_DATA_DIR "/../../docs/studies/dlas.yaml", file, &st),
                     AS_OK);
    char *a = study_canonical(s), *b = study_canonical(file);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(file);
    free(s);
}

/* Cell numbering: row-major, hardware fastest, and back. */
static void test_coords(void **state)
{
    (void)state;
    study_spec *s = load_small();
    int c[STUDY_NAXES];
    study_cell_coords(s, 0, c);
    for (int a = 0; a < STUDY_NAXES; a++)
        assert_int_equal(c[a], 0);
    study_cell_coords(s, 1, c);
    assert_int_equal(c[STUDY_AXIS_HARDWARE], 1);
    study_cell_coords(s, 95, c);
    int last[STUDY_NAXES] = {1, 2, 1, 1, 1, 1};
    assert_memory_equal(c, last, sizeof last);
    for (int64_t i = 0; i < study_cell_count(s); i++) {
        study_cell_coords(s, i, c);
        assert_int_equal(study_cell_index(s, c), i);
    }
    free(s);
}

/* A bad study file fails naming the line and the key. */
static void expect_error(const char *text, const char *message)
{
    study_spec *s = malloc(sizeof *s);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(study_parse(text, strlen(text), "bad.yaml", s, &st), AS_EINVAL);
    if (!strstr(st.message, message))
        fail_msg("expected '%s' in '%s'", message, st.message);
    free(s);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("models: [resnet18]\nhardware: [eyeriss]\nsurprise: 1\n",
                 "bad.yaml:3: unknown key 'surprise'");
    expect_error("hardware: [eyeriss]\n", "missing key 'models'");
    expect_error("models: [resnet81]\nhardware: [eyeriss]\n",
                 "bad.yaml:1: models[0]: unknown model 'resnet81'");
    expect_error("models: [resnet18]\nhardware: [eyerss]\n",
                 "bad.yaml:2: hardware[0]: unknown architecture 'eyerss'");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\ncompressions:\n"
                 "  - {kind: weight_pruning, density: 1.5}\n",
                 "bad.yaml:4: compressions[0].density: expected a number");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\ncompressions: [weight_pruning]\n",
                 "weight_pruning needs its level");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\ncompressions:\n"
                 "  - {kind: int8, keep: 0.5}\n",
                 "bad.yaml:4: compressions[0].keep: does not apply to kind int8");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\nalgorithms: [fft]\n",
                 "bad.yaml:3: algorithms[0]: expected one of direct, im2col");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\nformats: [zip]\n",
                 "bad.yaml:3: formats[0]: unknown data format 'zip'");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\nsoftware: [fast]\n",
                 "bad.yaml:3: software[0]: expected one of untuned, tuned");
    expect_error("models: [resnet18, resnet18]\nhardware: [eyeriss]\n",
                 "a second model labelled 'resnet18'");
    expect_error("models: [resnet18]\nhardware:\n  - {space: edge, point: {pe_z: 3}}\n",
                 "bad.yaml:3: hardware[0].point.pe_z: not a parameter of space 'edge'");
    expect_error("models: [resnet18]\nhardware:\n  - {space: edge, point: {pe_x: 33}}\n",
                 "bad.yaml:3: hardware[0].point.pe_x: '33' is not a value of parameter pe_x");
    expect_error("models: [resnet18]\nhardware: [eyeriss]\naccuracy:\n"
                 "  - {model: vgg16, compression: none, top1: 0.5}\n",
                 "bad.yaml:4: accuracy[0].model: 'vgg16' is not a model of this study");
}

/* One cell is the layer-by-layer costing it stands for: the dense fp32
 * model, direct, dense format, untuned (one mapping per problem), on
 * Eyeriss, costs what map_network_evaluate charges for that model. */
static void test_cell_is_network_costing(void **state)
{
    (void)state;
    study_spec *s = load_small();
    as_status st;
    as_status_clear(&st);
    study_cell cell;
    assert_int_equal(study_cell_run(s, 0, 2, &cell, &st), AS_OK);
    assert_true(cell.valid);

    wl_graph *g = NULL;
    assert_int_equal(wl_model_load("resnet18_cifar", NULL, &g, &st), AS_OK);
    wl_set_precision(g, WL_PREC_FP32);
    int n_folded;
    assert_int_equal(wl_fold_batchnorm(g, &n_folded, &st), AS_OK);
    assert_int_equal(wl_fuse_epilogues(g, NULL, &st), AS_OK);
    arch_spec a;
    assert_int_equal(arch_load("eyeriss", &a, &st), AS_OK);
    map_network_options o;
    map_network_options_default(&o);
    o.search.seed = s->seed;
    o.budget_per_problem = 1;
    map_network_result r = {0};
    assert_int_equal(map_network_evaluate(g, &a, &o, &r, &st), AS_OK);
    assert_true(cell.metrics.latency_s == r.latency_s);
    assert_true(cell.metrics.energy_pJ == r.energy_pJ);
    assert_int_equal(cell.dram_bytes, r.dram_bytes);
    assert_int_equal(cell.macs, r.macs);
    assert_int_equal(cell.effective_macs, cell.macs);
    assert_true(cell.metrics.area_mm2 == arch_area_mm2(&a));
    assert_true(cell.accuracy == 0.943);
    map_network_free(&r);
    wl_graph_free(g);
    free(s);
}

/* Cells agree with what they stand for: weight pruning cuts effective
 * MACs by the model's own density; Winograd cuts MACs; int8 halves the
 * weight bytes of... a quarter of fp32's. */
static void test_cell_figures(void **state)
{
    (void)state;
    study_spec *s = load_small();
    as_status st;
    as_status_clear(&st);
    int c[STUDY_NAXES] = {1, 0, 0, 0, 0, 0};
    study_cell dense, pruned, wino, int8;
    assert_int_equal(study_cell_run(s, study_cell_index(s, c), 2, &dense, &st), AS_OK);
    c[STUDY_AXIS_COMPRESSION] = 1;
    assert_int_equal(study_cell_run(s, study_cell_index(s, c), 2, &pruned, &st), AS_OK);
    c[STUDY_AXIS_COMPRESSION] = 2;
    assert_int_equal(study_cell_run(s, study_cell_index(s, c), 2, &int8, &st), AS_OK);
    c[STUDY_AXIS_COMPRESSION] = 0;
    c[STUDY_AXIS_MODEL] = 0;
    c[STUDY_AXIS_ALGORITHM] = 1;
    assert_int_equal(study_cell_run(s, study_cell_index(s, c), 2, &wino, &st), AS_OK);
    assert_true(dense.valid && pruned.valid && wino.valid && int8.valid);
    /* MobileNetV1 pruned to 0.3: the MACs the weights carry. */
    assert_int_equal(pruned.macs, dense.macs);
    assert_true(fabs((double)pruned.effective_macs / (double)dense.macs - 0.3) < 0.02);
    assert_true(pruned.nonzero_params < dense.params / 3 + dense.params / 50);
    assert_int_equal(int8.weight_bytes * 4, dense.weight_bytes);
    /* ResNet18 with Winograd F(2x2,3x3): fewer MACs, conv1 by im2col. */
    /* Its 13 3x3 stride-1 convs by Winograd, conv1 by im2col, the rest
     * (stride 2, 1x1) direct: every conv is visited. */
    assert_int_equal(wino.n_lowered, 14);
    study_cell direct;
    c[STUDY_AXIS_ALGORITHM] = 0;
    assert_int_equal(study_cell_run(s, study_cell_index(s, c), 2, &direct, &st), AS_OK);
    assert_true(wino.macs < direct.macs);
    assert_int_equal(direct.n_lowered, 0);
    free(s);
}

/* Sets the stop flag once `after` cells are done. */
typedef struct stop_after {
    volatile int *flag;
    int64_t after;
} stop_after;

static void stop_when_done(void *user, int64_t done, int64_t total)
{
    stop_after *s = user;
    (void)total;
    if (done >= s->after)
        *s->flag = 1;
}

/* Hardware from a design space: the space's baseline, and a point with
 * parameters set, each a valid cell whose design is the decoded point. */
static void test_space_points(void **state)
{
    (void)state;
    const char *text = "models: [mobilenet_v1_cifar]\n"
                       "hardware:\n"
                       "  - {space: edge, name: base}\n"
                       "  - {space: edge, point: {pe_x: 16, pe_y: 16}, name: big}\n"
                       "  - {space: edge, point: {glb_bytes: 64 KiB}, name: small}\n";
    study_spec *s = malloc(sizeof *s);
    as_status st;
    as_status_clear(&st);
    if (study_parse(text, strlen(text), "points.yaml", s, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_string_equal(s->hardware[1].point, "pe_x=16,pe_y=16");
    study_cell base, big, small;
    assert_int_equal(study_cell_run(s, 0, 1, &base, &st), AS_OK);
    assert_int_equal(study_cell_run(s, 1, 1, &big, &st), AS_OK);
    assert_int_equal(study_cell_run(s, 2, 1, &small, &st), AS_OK);
    assert_true(base.valid && big.valid && small.valid);
    assert_true(big.metrics.area_mm2 > base.metrics.area_mm2);   /* 256 PEs, not 168 */
    assert_true(small.metrics.area_mm2 < base.metrics.area_mm2); /* 64 KiB, not 108 */
    check_canonical(s);
    free(s);
}

/* A study run: every cell stored; read back equal; a resumed run of a
 * partly stored study ends with the same cells. */
static void test_run_store_resume(void **state)
{
    (void)state;
    study_spec *s = load_small();
    /* Keep the test small: the models' first two compressions, one format. */
    s->n[STUDY_AXIS_COMPRESSION] = 2;
    s->n[STUDY_AXIS_FORMAT] = 1;
    s->n[STUDY_AXIS_MODEL] = 1;
    const char *path = AS_TEST_TMP_DIR "/test_study.db";
    unlink(path);
    as_status st;
    as_status_clear(&st);
    store *db = NULL;
    assert_int_equal(store_open(&db, path, &st), AS_OK);
    study_options o;
    study_options_default(&o);
    o.threads = 2;
    o.db = db;
    study_result full = {0};
    if (study_run(s, &o, &full, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_int_equal(full.n_done, full.n_cells);
    assert_false(full.interrupted);

    study_result back = {0};
    assert_int_equal(study_read(db, full.run_id, &back, &st), AS_OK);
    assert_int_equal(back.n_cells, full.n_cells);
    for (int64_t i = 0; i < full.n_cells; i++) {
        const study_cell *x = &full.cells[i], *y = &back.cells[i];
        assert_int_equal(x->valid, y->valid);
        assert_memory_equal(&x->metrics, &y->metrics, sizeof x->metrics);
        assert_int_equal(x->macs, y->macs);
        assert_int_equal(x->effective_macs, y->effective_macs);
        assert_int_equal(x->dram_bytes, y->dram_bytes);
        assert_true(isnan(x->accuracy) ? isnan(y->accuracy) : x->accuracy == y->accuracy);
    }
    study_result_free(&back);

    /* A second run stopped after three cells, then resumed: the cells
     * stored before the stop are read back, the others run. */
    volatile int stop = 0;
    stop_after stopper = {.flag = &stop, .after = 3};
    o.stop_flag = &stop;
    o.progress = stop_when_done;
    o.progress_user = &stopper;
    o.threads = 1;
    study_result partial = {0};
    assert_int_equal(study_run(s, &o, &partial, &st), AS_OK);
    assert_true(partial.interrupted);
    assert_int_equal(partial.n_done, 3);
    assert_int_not_equal(partial.run_id, full.run_id);
    stop = 0;
    stopper.after = 1000;
    o.resume = true;
    o.threads = 2;
    study_result resumed = {0};
    assert_int_equal(study_run(s, &o, &resumed, &st), AS_OK);
    assert_int_equal(resumed.run_id, partial.run_id);
    assert_int_equal(resumed.n_done, resumed.n_cells);
    assert_false(resumed.interrupted);
    for (int64_t i = 0; i < full.n_cells; i++)
        assert_memory_equal(&full.cells[i].metrics, &resumed.cells[i].metrics,
                            sizeof full.cells[i].metrics);
    study_result_free(&partial);
    study_result_free(&resumed);
    study_result_free(&full);
    store_close(db);
    unlink(path);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_default),
        cmocka_unit_test(test_coords),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cell_is_network_costing),
        cmocka_unit_test(test_cell_figures),
        cmocka_unit_test(test_space_points),
        cmocka_unit_test(test_run_store_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
