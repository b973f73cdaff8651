/*
 * truth.h -- reader of the expectation files in tests/data/reference
 * (written by scripts/extract_truth.py from the torch ground truth), shared
 * by the tests that compare against them.
 */
#ifndef AS_TEST_TRUTH_H
#define AS_TEST_TRUTH_H

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
        if (sscanf(line, "file %63s", m->file) == 1 || sscanf(line, "params %lld", &m->params) == 1 ||
            sscanf(line, "macs %lld", &m->macs) == 1 ||
            sscanf(line, "max_ws_bf16 %lld", &m->max_ws_bf16) == 1 ||
            sscanf(line, "nodes %lld", &m->nodes) == 1 || sscanf(line, "output %63s", m->output) == 1)
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

#endif
