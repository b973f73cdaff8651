/*
 * truth.h -- shared by the tests that compare models against torch: the
 * reader of the expectation files in tests/data/reference (written by
 * scripts/extract_truth.py from the torch ground truth), the layer-by-layer
 * comparison with them, and loading the models under test (zoo, ONNX) so
 * that a failure shows the library's message.  Uses cmocka.
 */
#ifndef AS_TEST_TRUTH_H
#define AS_TEST_TRUTH_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/workload.h"

#define TRUTH_MAX_LAYERS 256

typedef struct truth_layer {
    char op[32];
    long long macs;
    char input[64], weight[64], output[64]; /* "1x3x224x224", "-" when absent */
    char name[160];
} truth_layer;

typedef struct truth_model {
    char file[64];
    long long params, macs, max_ws_bf16, nodes;
    char output[64];
    char dims[64]; /* values of the file's symbolic dims (wl_onnx_options.dims), "" none */
    int n_layers;
    truth_layer layers[TRUTH_MAX_LAYERS];
} truth_model;

/* Read tests/data/reference/<stem>.txt into *m; false when unreadable. */
static inline bool truth_load(const char *stem, truth_model *m)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/reference/%s.txt", AS_TEST_DATA_DIR, stem);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    memset(m, 0, sizeof *m);
    while (fgets(line, sizeof line, f)) {
        truth_layer *l = &m->layers[m->n_layers];
        if (sscanf(line, "file %63s", m->file) == 1 ||
            sscanf(line, "params %lld", &m->params) == 1 ||
            sscanf(line, "macs %lld", &m->macs) == 1 ||
            sscanf(line, "max_ws_bf16 %lld", &m->max_ws_bf16) == 1 ||
            sscanf(line, "nodes %lld", &m->nodes) == 1 ||
            sscanf(line, "output %63s", m->output) == 1 || sscanf(line, "dims %63s", m->dims) == 1)
            continue;
        if (m->n_layers < TRUTH_MAX_LAYERS &&
            sscanf(line, "layer %31s %lld %63s %63s %63s %159s", l->op, &l->macs, l->input,
                   l->weight, l->output, l->name) == 6)
            m->n_layers++;
    }
    fclose(f);
    return m->file[0] != '\0';
}

/* A tensor's shape in the files' notation ("1x64x56x56"). */
static inline const char *truth_shape(const wl_tensor *t, char *buf, size_t size)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->rank && w < size; i++)
        w += (size_t)snprintf(buf + w, size - w, i ? "x%lld" : "%lld", (long long)t->dims[i]);
    return buf;
}

/* The compute ops of g in execution order, unfolded; returns the count. */
static inline int truth_compute_ops(const wl_graph *g, int32_t *ops, int max)
{
    int n = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        const wl_op *op = &g->ops[g->order[k]];
        if (!op->folded && wl_op_kind_category(op->kind) == WL_CAT_COMPUTE && n < max)
            ops[n++] = g->order[k];
    }
    return n;
}

/*
 * The module path of an exported node: "/features/features.1/block/block.1/
 * fc1/Conv" is features.1 . block.1 . fc1 -> "features.1.block.1.fc1" when
 * a scope extends the previous one ("features" -> "features.1", a
 * Sequential's child), else it nests below it ("layer.0" -> "attention").
 */
static inline void truth_module_path(const char *node, char *out, size_t size)
{
    const char *end = strrchr(node, '/'); /* the op type follows */
    const char *prev = NULL;              /* the previous scope, prev_len bytes */
    size_t prev_len = 0, base = 0, used = 0;
    out[0] = '\0';
    for (const char *p = node; end && p < end && used < size;) {
        p++; /* skip '/' */
        size_t n = strcspn(p, "/");
        bool extends = prev && n > prev_len && !strncmp(p, prev, prev_len) && p[prev_len] == '.';
        if (!extends)
            base = used;
        int w = snprintf(out + base, size - base, "%s%.*s", base ? "." : "", (int)n, p);
        used = base + (size_t)(w > 0 ? w : 0);
        prev = p;
        prev_len = n;
        p += n;
    }
}

/*
 * Every compute layer of g matches the truth's, in order: op type, MACs
 * (also as the product of the loop-nest bounds), operand shapes and, when
 * by_name, the module path (zoo models name their ops as torch names the
 * modules; imported files keep the exporter's node names).
 */
static inline void truth_check_layers(const wl_graph *g, const truth_model *m, bool by_name)
{
    int32_t ops[TRUTH_MAX_LAYERS];
    int n = truth_compute_ops(g, ops, TRUTH_MAX_LAYERS);
    assert_int_equal(n, m->n_layers);
    for (int i = 0; i < n; i++) {
        const wl_op *op = &g->ops[ops[i]];
        const truth_layer *l = &m->layers[i];
        char path[160], in[64], w[64], out[64];
        truth_module_path(l->name, path, sizeof path);
        wl_op_stats s;
        wl_op_stats_get(g, ops[i], &s);
        truth_shape(&g->tensors[op->inputs[0]], in, sizeof in);
        truth_shape(&g->tensors[op->inputs[1]], w, sizeof w);
        truth_shape(&g->tensors[op->outputs[0]], out, sizeof out);
        if ((by_name && strcmp(op->name, path)) || strcmp(op->op_type, l->op) ||
            s.macs != l->macs || strcmp(in, l->input) || strcmp(w, l->weight) ||
            strcmp(out, l->output))
            fail_msg("%s layer %d: got %s %s %lld %s %s %s; truth %s %s %lld %s %s %s (%s)",
                     m->file, i, op->name, op->op_type, (long long)s.macs, in, w, out, path, l->op,
                     l->macs, l->input, l->weight, l->output, l->name);
        wl_problem p;
        assert_int_equal(wl_op_problem(g, ops[i], &p, NULL), AS_OK);
        assert_int_equal(wl_problem_macs(&p), s.macs);
    }
}

/* The zoo model `name`; the test fails with the builder's message if it
 * does not build. */
static inline wl_graph *truth_build_zoo(const char *name)
{
    as_status st;
    wl_graph *g = NULL;
    if (wl_zoo_build(name, &g, &st) != AS_OK)
        fail_msg("%s: %s", name, st.message);
    assert_non_null(g);
    return g;
}

/* The ONNX file at `path`, loaded with default options but for the
 * symbolic dims' values `dims` (NULL: none); the test fails with the
 * importer's message if it does not load. */
static inline wl_graph *truth_load_onnx_dims(const char *path, const char *dims)
{
    as_status st;
    wl_graph *g = NULL;
    wl_onnx_options opt = {.dims = dims};
    if (wl_onnx_load(path, &opt, &g, &st) != AS_OK)
        fail_msg("%s: %s", path, st.message);
    assert_non_null(g);
    return g;
}

/* The ONNX file at `path`, loaded with default options; the test fails
 * with the importer's message if it does not load. */
static inline wl_graph *truth_load_onnx(const char *path)
{
    as_status st;
    wl_graph *g = NULL;
    if (wl_onnx_load(path, NULL, &g, &st) != AS_OK)
        fail_msg("%s: %s", path, st.message);
    assert_non_null(g);
    return g;
}

#endif
