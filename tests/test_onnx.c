/*
 * test_onnx.c -- ONNX import and export.
 *
 * The reference models (torch.onnx.export, weight-stripped) must load with
 * the node counts and op histograms that onnx itself reported for them
 * (truth/index.json, copied below) and the output shapes torch computed.
 * Broken input -- truncated and random bytes, empty and missing files, and
 * small models built here with protobuf-c that are wrong in one way each
 * -- must fail cleanly with a message that names the culprit.  Exported
 * files must load back into the same graph.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "onnx.pb-c.h"
#include "workload/workload.h"

#define MODELS_DIR AS_TEST_DATA_DIR "/models"

/* ------------------------------------------------------------- truth */

typedef struct op_count {
    const char *op_type;
    int count;
} op_count;

typedef struct expected_model {
    const char *file;
    int nodes, initializers;
    int n_outputs;
    struct {
        int rank;
        int64_t dims[4];
    } outputs[2];
    op_count histogram[20]; /* ends at the first NULL op_type */
} expected_model;

/* From truth/index.json (onnx.default / onnx[".nofuse"]: num_nodes,
 * num_initializers, op_histogram) and truth/<model>.json (outputs). */
static const expected_model expected[] = {
    {"alexnet.onnx",
     20,
     16,
     1,
     {{2, {1, 1000}}},
     {{"AveragePool", 1}, {"Conv", 5}, {"Flatten", 1}, {"Gemm", 3}, {"MaxPool", 3}, {"Relu", 7}}},
    {"bert_base_like.onnx",
     752,
     199,
     2,
     {{3, {1, 128, 768}}, {2, {1, 768}}},
     {{"Add", 160},
      {"Constant", 147},
      {"Div", 37},
      {"Erf", 12},
      {"Gather", 4},
      {"Gemm", 1},
      {"MatMul", 96},
      {"Mul", 61},
      {"Pow", 25},
      {"ReduceMean", 50},
      {"Reshape", 48},
      {"Softmax", 12},
      {"Sqrt", 25},
      {"Sub", 25},
      {"Tanh", 1},
      {"Transpose", 48}}},
    {"efficientnet_b0.nofuse.onnx",
     288,
     311,
     1,
     {{2, {1, 1000}}},
     {{"Add", 9},
      {"BatchNormalization", 49},
      {"Conv", 81},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 17},
      {"Mul", 65},
      {"Sigmoid", 65}}},
    {"efficientnet_b0.onnx",
     239,
     164,
     1,
     {{2, {1, 1000}}},
     {{"Add", 9},
      {"Conv", 81},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 17},
      {"Mul", 65},
      {"Sigmoid", 65}}},
    {"mobilenet_v2.onnx",
     170,
     106,
     1,
     {{2, {1, 1000}}},
     {{"Add", 10},
      {"Clip", 35},
      {"Constant", 70},
      {"Conv", 52},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 1}}},
    {"resnet18.onnx",
     49,
     42,
     1,
     {{2, {1, 1000}}},
     {{"Add", 8},
      {"Conv", 20},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 1},
      {"MaxPool", 1},
      {"Relu", 17}}},
    {"resnet50.nofuse.onnx",
     175,
     267,
     1,
     {{2, {1, 1000}}},
     {{"Add", 16},
      {"BatchNormalization", 53},
      {"Conv", 53},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 1},
      {"MaxPool", 1},
      {"Relu", 49}}},
    {"resnet50.onnx",
     122,
     108,
     1,
     {{2, {1, 1000}}},
     {{"Add", 16},
      {"Conv", 53},
      {"Flatten", 1},
      {"Gemm", 1},
      {"GlobalAveragePool", 1},
      {"MaxPool", 1},
      {"Relu", 49}}},
    {"unet.onnx",
     49,
     46,
     1,
     {{4, {1, 2, 256, 256}}},
     {{"Concat", 4}, {"Conv", 19}, {"ConvTranspose", 4}, {"MaxPool", 4}, {"Relu", 18}}},
};
enum { N_EXPECTED = sizeof expected / sizeof expected[0] };

static wl_graph *load_reference(const char *file, as_status *st)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", MODELS_DIR, file);
    wl_graph *g = NULL;
    as_status_clear(st);
    as_code rc = wl_onnx_load(path, NULL, &g, st);
    if (rc != AS_OK)
        fail_msg("%s: %s", file, st->message);
    return g;
}

/* Ops of g whose op type is op_type. */
static int count_ops(const wl_graph *g, const char *op_type)
{
    int n = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        n += strcmp(g->ops[o].op_type, op_type) == 0;
    return n;
}

/* Tensors an ONNX file stores: weights and constants that no op produces
 * (Constant nodes' outputs are produced by the Constant op). */
static int count_stored(const wl_graph *g)
{
    int n = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        const wl_tensor *x = &g->tensors[t];
        n += (x->kind == WL_TENSOR_WEIGHT || x->kind == WL_TENSOR_CONSTANT) && x->producer < 0;
    }
    return n;
}

static void check_against_truth(const wl_graph *g, const expected_model *e)
{
    assert_int_equal(g->n_ops, e->nodes);
    assert_int_equal(count_stored(g), e->initializers);
    int histogram_total = 0;
    for (const op_count *c = e->histogram; c->op_type; c++) {
        if (count_ops(g, c->op_type) != c->count)
            fail_msg("%s: %d %s nodes, expected %d", e->file, count_ops(g, c->op_type), c->op_type,
                     c->count);
        histogram_total += c->count;
    }
    assert_int_equal(histogram_total, g->n_ops); /* no op type outside the histogram */
    for (int32_t t = 0; t < g->n_tensors; t++)
        if (!g->tensors[t].shape_known)
            fail_msg("%s: tensor '%s' has no shape", e->file, g->tensors[t].name);
    assert_int_equal(g->n_outputs, e->n_outputs);
    for (int i = 0; i < e->n_outputs; i++) {
        const wl_tensor *y = &g->tensors[g->outputs[i]];
        assert_int_equal(y->rank, e->outputs[i].rank);
        for (int d = 0; d < y->rank; d++)
            assert_int_equal(y->dims[d], e->outputs[i].dims[d]);
    }
    assert_int_equal(g->n_warnings, 0);
    assert_int_equal(g->opset, 13);
}

static void test_reference_models_match_truth(void **state)
{
    (void)state;
    for (int m = 0; m < N_EXPECTED; m++) {
        as_status st;
        wl_graph *g = load_reference(expected[m].file, &st);
        check_against_truth(g, &expected[m]);
        wl_graph_free(g);
    }
}

/* Details the histogram does not show: names, attributes, weights. */
static void test_reference_details(void **state)
{
    (void)state;
    as_status st;
    wl_graph *g = load_reference("alexnet.onnx", &st);
    assert_string_equal(g->name, "alexnet"); /* torch's "torch_jit" names no model */
    const wl_op *conv = &g->ops[0];
    assert_int_equal(conv->kind, WL_OP_CONV);
    assert_int_equal(conv->attrs.n_spatial, 2);
    assert_int_equal(conv->attrs.kernel_shape[0], 11);
    assert_int_equal(conv->attrs.strides[1], 4);
    assert_int_equal(conv->attrs.pads[3], 2);
    const wl_tensor *w = &g->tensors[conv->inputs[1]];
    assert_string_equal(w->name, "features.0.weight");
    assert_int_equal(w->kind, WL_TENSOR_WEIGHT);
    assert_true(w->data_stripped);
    assert_int_equal(w->bits, 32);
    assert_int_equal(g->tensors[conv->outputs[0]].dims[2], 55);
    wl_graph_free(g);

    /* BERT: int64 inputs, Constant nodes with values, Gemm transB. */
    g = load_reference("bert_base_like.onnx", &st);
    assert_int_equal(g->n_inputs, 3);
    assert_int_equal(g->tensors[g->inputs[0]].dtype, WL_DTYPE_I64);
    int constants_with_values = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        const wl_tensor *y = &g->tensors[op->outputs[0]];
        if (op->kind == WL_OP_CONSTANT) {
            assert_int_equal(y->kind, WL_TENSOR_CONSTANT);
            constants_with_values += y->ivalues != NULL || y->fvalues != NULL;
        }
        if (op->kind == WL_OP_GEMM)
            assert_int_equal(op->attrs.trans_b, 1);
    }
    assert_int_equal(constants_with_values, 147);
    wl_graph_free(g);
}

/* ------------------------------------------------------ broken bytes */

static uint8_t *read_reference(const char *file, size_t *size)
{
    as_status st;
    as_status_clear(&st);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", MODELS_DIR, file);
    uint8_t *data = as_read_file(path, size, &st);
    assert_non_null(data);
    return data;
}

/* Load size bytes of data, named `display`, with opt: the load must
 * fail with AS_EINVAL, leave no graph and name `display` in its message,
 * which *st keeps for further checks. */
static void load_invalid(const uint8_t *data, size_t size, const char *display,
                         const wl_onnx_options *opt, as_status *st)
{
    as_status_clear(st);
    wl_graph *g = (wl_graph *)st; /* must be reset to NULL */
    as_code rc = wl_onnx_load_buffer(data, size, display, opt, &g, st);
    if (rc != AS_EINVAL)
        fail_msg("%s: expected invalid input, got %s (%s)", display, as_code_name(rc), st->message);
    assert_null(g);
    if (!strstr(st->message, display))
        fail_msg("message '%s' does not name '%s'", st->message, display);
}

/* Load a buffer that must be rejected as invalid input. */
static void expect_invalid_buffer(const uint8_t *data, size_t size, const char *what)
{
    as_status st;
    load_invalid(data, size, what, NULL, &st);
}

static void test_truncated_file(void **state)
{
    (void)state;
    size_t size;
    uint8_t *data = read_reference("resnet18.onnx", &size);
    /* Every cut point inside the file: inside a length-delimited field the
     * decoder fails; at a field boundary the model lacks its graph, its
     * opset or a node output's producer. */
    size_t cuts[] = {1, 2, 16, 100, size / 3, size / 2, size - 40, size - 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_invalid_buffer(data, cuts[i], "truncated.onnx");
    for (size_t cut = 5; cut < size; cut += 211)
        expect_invalid_buffer(data, cut, "truncated.onnx");
    free(data);
}

/* xorshift64: a fixed, portable stream of pseudo-random numbers. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_random_bytes(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    uint8_t buf[4096];
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + next_random(&seed) % sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)next_random(&seed);
        expect_invalid_buffer(buf, n, "random.onnx");
    }
}

/* A real model with a few bytes changed at random: any outcome but a
 * crash, a hang or a leak (the sanitizer build checks those) is fine, and
 * a failure must come with a message. */
static void test_mutated_reference(void **state)
{
    (void)state;
    size_t size;
    uint8_t *data = read_reference("mobilenet_v2.onnx", &size);
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    uint64_t seed = 42;
    int loaded = 0;
    for (int round = 0; round < 150; round++) {
        memcpy(copy, data, size);
        for (int k = 0; k < 4; k++)
            copy[next_random(&seed) % size] = (uint8_t)next_random(&seed);
        as_status st;
        as_status_clear(&st);
        wl_graph *g = NULL;
        as_code rc = wl_onnx_load_buffer(copy, size, "mutated.onnx", NULL, &g, &st);
        assert_true(rc == AS_OK || rc == AS_EINVAL);
        assert_true(rc == AS_OK ? g != NULL : g == NULL && st.message[0] != '\0');
        loaded += rc == AS_OK;
        wl_graph_free(g);
    }
    assert_true(loaded > 0); /* changes inside names and dims often leave a valid model */
    free(copy);
    free(data);
}

/* Prepend to the bytes at buf[*start..] a length-delimited field number
 * `field` wrapping them (tag, length, payload). */
static void wrap_field(uint8_t *buf, size_t *start, size_t cap, int field)
{
    uint8_t head[16];
    size_t n = 0;
    head[n++] = (uint8_t)(field << 3 | 2);
    for (uint64_t len = cap - *start;; len >>= 7) {
        head[n++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
        if (len <= 0x7f)
            break;
    }
    assert_true(*start >= n);
    *start -= n;
    memcpy(buf + *start, head, n);
}

/* A well-formed protobuf of graphs nested in attributes of nodes of graphs
 * 30000 deep: protobuf-c's recursive decoder would overflow the stack. */
static void test_deep_nesting(void **state)
{
    (void)state;
    size_t cap = 1 << 20, start = cap;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    for (int level = 0; level < 30000; level++) {
        wrap_field(buf, &start, cap, 6); /* AttributeProto.g */
        wrap_field(buf, &start, cap, 5); /* NodeProto.attribute */
        wrap_field(buf, &start, cap, 1); /* GraphProto.node */
    }
    wrap_field(buf, &start, cap, 7); /* ModelProto.graph */
    expect_invalid_buffer(buf + start, cap - start, "nested.onnx");
    free(buf);
}

static void test_empty_and_missing_files(void **state)
{
    (void)state;
    const char *empty = AS_TEST_TMP_DIR "/onnx_empty.onnx";
    FILE *f = fopen(empty, "wb");
    assert_non_null(f);
    fclose(f);
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    assert_int_equal(wl_onnx_load(empty, NULL, &g, &st), AS_EINVAL);
    assert_null(g);
    assert_non_null(strstr(st.message, "onnx_empty.onnx"));
    assert_non_null(strstr(st.message, "no graph"));

    as_status_clear(&st);
    assert_int_equal(wl_onnx_load(AS_TEST_TMP_DIR "/no_such_model.onnx", NULL, &g, &st), AS_EIO);
    assert_null(g);
    assert_non_null(strstr(st.message, "no_such_model.onnx"));
}

/* ---------------------------------------------- models built in memory */

/*
 * A tiny builder for ONNX models made of protobuf-c structs: every piece
 * is malloc'd and remembered so that mb_free releases it; repeated fields
 * get room for MB_MAX entries.
 */
#define MB_MAX 16
#define MB_MAX_BLOCKS 1024

typedef struct mb {
    void *blocks[MB_MAX_BLOCKS];
    int n_blocks;
    Onnx__ModelProto *model;
    Onnx__GraphProto *graph;
    Onnx__OperatorSetIdProto *opset;
} mb;

static void *mb_copy(mb *b, const void *init, size_t size)
{
    assert_true(b->n_blocks < MB_MAX_BLOCKS);
    void *p = malloc(size);
    assert_non_null(p);
    memcpy(p, init, size);
    return b->blocks[b->n_blocks++] = p;
}

#define MB_NEW(b, T, INIT) ((T *)mb_copy((b), &(T)INIT, sizeof(T)))

/* Append item to a repeated field (array + count). */
static void mb_push(mb *b, void *array_field, size_t *count, void *item)
{
    void ***array = array_field;
    if (!*array) {
        void *none[MB_MAX] = {0};
        *array = mb_copy(b, none, sizeof none);
    }
    assert_true(*count < MB_MAX);
    (*array)[(*count)++] = item;
}

static void mb_init(mb *b, int64_t opset)
{
    memset(b, 0, sizeof *b);
    b->model = MB_NEW(b, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
    b->graph = MB_NEW(b, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
    b->opset = MB_NEW(b, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT);
    b->model->has_ir_version = true;
    b->model->ir_version = 8;
    b->model->graph = b->graph;
    b->graph->name = "tiny";
    b->opset->domain = "";
    b->opset->has_version = true;
    b->opset->version = opset;
    mb_push(b, &b->model->opset_import, &b->model->n_opset_import, b->opset);
}

static void mb_free(mb *b)
{
    for (int i = 0; i < b->n_blocks; i++)
        free(b->blocks[i]);
    b->n_blocks = 0;
}

/* A value of type dtype; rank < 0: no shape.  dim_param (may be NULL)
 * makes dimension 0 symbolic. */
static Onnx__ValueInfoProto *mb_value(mb *b, const char *name, int dtype, int rank,
                                      const int64_t *dims, const char *dim_param)
{
    Onnx__ValueInfoProto *vi = MB_NEW(b, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
    Onnx__TypeProto *type = MB_NEW(b, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
    Onnx__TypeProto__Tensor *tt =
        MB_NEW(b, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
    vi->name = (char *)name;
    vi->type = type;
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tt;
    tt->has_elem_type = true;
    tt->elem_type = dtype;
    if (rank < 0)
        return vi;
    tt->shape = MB_NEW(b, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d =
            MB_NEW(b, Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
        if (i == 0 && dim_param) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = (char *)dim_param;
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        mb_push(b, &tt->shape->dim, &tt->shape->n_dim, d);
    }
    return vi;
}

static void mb_input(mb *b, const char *name, int rank, const int64_t *dims)
{
    mb_push(b, &b->graph->input, &b->graph->n_input, mb_value(b, name, 1, rank, dims, NULL));
}

static void mb_output(mb *b, const char *name)
{
    mb_push(b, &b->graph->output, &b->graph->n_output, mb_value(b, name, 1, -1, NULL, NULL));
}

/* A float32 initializer with dims and no data (weight-stripped). */
static Onnx__TensorProto *mb_weight(mb *b, const char *name, int rank, const int64_t *dims)
{
    Onnx__TensorProto *tp = MB_NEW(b, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    tp->name = (char *)name;
    tp->has_data_type = true;
    tp->data_type = 1;
    tp->n_dims = (size_t)rank;
    tp->dims = mb_copy(b, dims, (size_t)(rank ? rank : 1) * sizeof *dims);
    mb_push(b, &b->graph->initializer, &b->graph->n_initializer, tp);
    return tp;
}

/* A 1-D int64 initializer holding n values (dims say `declared`). */
static void mb_int64s(mb *b, const char *name, int64_t declared, int n, const int64_t *values)
{
    Onnx__TensorProto *tp = mb_weight(b, name, 1, &declared);
    tp->data_type = 7;
    tp->n_int64_data = (size_t)n;
    tp->int64_data = mb_copy(b, values, (size_t)n * sizeof *values);
}

static Onnx__NodeProto *mb_node(mb *b, const char *op_type, const char *name, int n_in,
                                const char *const *in, const char *out)
{
    Onnx__NodeProto *n = MB_NEW(b, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
    n->op_type = (char *)op_type;
    n->name = (char *)name;
    for (int i = 0; i < n_in; i++)
        mb_push(b, &n->input, &n->n_input, (char *)in[i]);
    mb_push(b, &n->output, &n->n_output, (char *)out);
    mb_push(b, &b->graph->node, &b->graph->n_node, n);
    return n;
}

static Onnx__AttributeProto *mb_attr(mb *b, Onnx__NodeProto *n, const char *name,
                                     Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = MB_NEW(b, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
    a->name = (char *)name;
    a->has_type = true;
    a->type = type;
    mb_push(b, &n->attribute, &n->n_attribute, a);
    return a;
}

static void mb_attr_int(mb *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = true;
    a->i = v;
}

static void mb_attr_float(mb *b, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = true;
    a->f = v;
}

static void mb_attr_ints(mb *b, Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
    Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = mb_copy(b, v, (size_t)count * sizeof *v);
}

static void mb_attr_string(mb *b, Onnx__NodeProto *n, const char *name, const char *s)
{
    Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = true;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)s;
}

/* A one-element tensor attribute (ConstantOfShape's value) of an int32. */
static void mb_attr_int32_tensor(mb *b, Onnx__NodeProto *n, const char *name, int32_t v)
{
    Onnx__AttributeProto *a = mb_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    Onnx__TensorProto *tp = MB_NEW(b, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    int64_t one = 1;
    tp->has_data_type = true;
    tp->data_type = 6;
    tp->n_dims = 1;
    tp->dims = mb_copy(b, &one, sizeof one);
    tp->n_int32_data = 1;
    tp->int32_data = mb_copy(b, &v, sizeof v);
    a->t = tp;
}

/* The model packed into a malloc'd buffer of *size bytes. */
static uint8_t *mb_pack(mb *b, size_t *size)
{
    *size = onnx__model_proto__get_packed_size(b->model);
    uint8_t *buf = malloc(*size ? *size : 1);
    assert_non_null(buf);
    onnx__model_proto__pack(b->model, buf);
    return buf;
}

/* Pack the model and load it, as "tiny.onnx", with opt: it must load. */
static wl_graph *mb_load_ok(mb *b, const wl_onnx_options *opt)
{
    size_t size;
    uint8_t *buf = mb_pack(b, &size);
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    as_code rc = wl_onnx_load_buffer(buf, size, "tiny.onnx", opt, &g, &st);
    free(buf);
    if (rc != AS_OK)
        fail_msg("tiny.onnx: expected to load, got %s (%s)", as_code_name(rc), st.message);
    assert_non_null(g);
    return g;
}

/* Pack the model and load it with opt: it must be rejected (load_invalid). */
static void mb_load_invalid(mb *b, const wl_onnx_options *opt, as_status *st)
{
    size_t size;
    uint8_t *buf = mb_pack(b, &size);
    load_invalid(buf, size, "tiny.onnx", opt, st);
    free(buf);
}

#define I64S(...)                                                                                  \
    (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[])                         \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define NAMES(...)                                                                                 \
    (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)), (const char *[])                \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

/* x[1,3,8,8] -> Conv "conv0" (w[4,3,3,3], pads 1) -> Relu "relu0" -> y.
 * Returns the Conv node for tests to spoil. */
static Onnx__NodeProto *mb_conv_relu(mb *b, int64_t weight_channels)
{
    mb_init(b, 13);
    mb_input(b, "x", 4, (int64_t[]){1, 3, 8, 8});
    mb_weight(b, "w", 4, (int64_t[]){4, weight_channels, 3, 3});
    Onnx__NodeProto *conv = mb_node(b, "Conv", "conv0", NAMES("x", "w"), "c");
    mb_attr_ints(b, conv, "kernel_shape", I64S(3, 3));
    mb_attr_ints(b, conv, "pads", I64S(1, 1, 1, 1));
    mb_node(b, "Relu", "relu0", NAMES("c"), "y");
    mb_output(b, "y");
    return conv;
}

/* The accelsearch program, given the model as a file, exits with status 2
 * and prints exactly one line, the error. */
static void expect_cli_rejects(mb *b)
{
    char path[512], cmd[1200], err[4096];
    snprintf(path, sizeof path, "%s/rejected.onnx", AS_TEST_TMP_DIR);
    size_t size;
    uint8_t *buf = mb_pack(b, &size);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, size, f), size);
    fclose(f);
    free(buf);
    snprintf(cmd, sizeof cmd, "'%s' model info '%s' >/dev/null 2>'%s.err'", AS_CLI_PATH, path,
             path);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    snprintf(cmd, sizeof cmd, "%s.err", path);
    f = fopen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(err, 1, sizeof err - 1, f);
    fclose(f);
    err[n] = '\0';
    assert_non_null(strstr(err, "accelsearch: "));
    assert_non_null(strstr(err, "rejected.onnx"));
    assert_true(n > 0 && strchr(err, '\n') == err + n - 1);
}

/* Expect the model to be rejected with AS_EINVAL and a message holding
 * each of the NULL-terminated key words; with default options, the CLI
 * too. */
static void expect_rejected(mb *b, const wl_onnx_options *opt, ...)
{
    if (!opt)
        expect_cli_rejects(b);
    as_status st;
    mb_load_invalid(b, opt, &st);
    va_list ap;
    va_start(ap, opt);
    for (const char *word; (word = va_arg(ap, const char *)) != NULL;)
        if (!strstr(st.message, word))
            fail_msg("message '%s' lacks '%s'", st.message, word);
    va_end(ap);
    mb_free(b);
}

static void test_valid_tiny_model(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    wl_graph *g = mb_load_ok(&b, NULL);
    assert_string_equal(g->name, "tiny");
    assert_string_equal(g->source, "tiny.onnx");
    const wl_tensor *y = &g->tensors[g->outputs[0]];
    assert_true(y->shape_known);
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dims[1], 4);
    assert_int_equal(y->dims[3], 8);
    wl_graph_free(g);
    mb_free(&b);
}

static void test_nodes_out_of_order_load(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    Onnx__NodeProto *first = b.graph->node[0];
    b.graph->node[0] = b.graph->node[1];
    b.graph->node[1] = first;
    wl_graph *g = mb_load_ok(&b, NULL);
    assert_int_equal(g->ops[g->order[0]].kind, WL_OP_CONV);
    assert_int_equal(g->tensors[g->outputs[0]].dims[1], 4);
    wl_graph_free(g);
    mb_free(&b);
}

static void test_cyclic_graph(void **state)
{
    (void)state;
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", 2, (int64_t[]){1, 4});
    mb_node(&b, "Add", "add_a", NAMES("x", "b"), "a");
    mb_node(&b, "Relu", "relu_b", NAMES("a"), "b");
    mb_output(&b, "b");
    expect_rejected(&b, NULL, "tiny.onnx", "cycle", "add_a", NULL);
}

static void test_missing_initializer(void **state)
{
    (void)state;
    mb b;
    Onnx__NodeProto *conv = mb_conv_relu(&b, 3);
    conv->input[1] = "w_missing";
    expect_rejected(&b, NULL, "tiny.onnx", "conv0", "(Conv)", "'w_missing'",
                    "not produced by any node, graph input or initializer", NULL);
}

static void test_dims_overflow(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    mb_weight(&b, "huge", 3, (int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40});
    expect_rejected(&b, NULL, "'huge'", "overflows", NULL);
}

static void test_negative_dim_and_bad_data(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    mb_weight(&b, "negative", 2, (int64_t[]){4, -1});
    expect_rejected(&b, NULL, "'negative'", "negative", NULL);

    mb_conv_relu(&b, 3);
    mb_int64s(&b, "short", 3, 2, (int64_t[]){1, 2}); /* dims [3], two values */
    expect_rejected(&b, NULL, "'short'", "2", "3", NULL);

    mb_conv_relu(&b, 3);
    mb_weight(&b, "deep", 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    expect_rejected(&b, NULL, "'deep'", "rank 9", NULL);
}

static void test_conv_channel_mismatch(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 5); /* weight expects 5 input channels, x has 3 */
    expect_rejected(&b, NULL, "tiny.onnx", "conv0", "Conv", NULL);
}

static void test_attribute_of_wrong_type(void **state)
{
    (void)state;
    mb b;
    Onnx__NodeProto *conv = mb_conv_relu(&b, 3);
    mb_attr_float(&b, conv, "group", 1.0f);
    expect_rejected(&b, NULL,
                    "tiny.onnx: node 0 'conv0' (Conv): attribute 'group' has type FLOAT, "
                    "expected INT",
                    NULL);

    conv = mb_conv_relu(&b, 3);
    mb_attr_ints(&b, conv, "strides", I64S(1, 1, 1)); /* three values, kernel_shape has two */
    expect_rejected(&b, NULL, "conv0", "'strides'", NULL);

    conv = mb_conv_relu(&b, 3);
    mb_attr_ints(&b, conv, "dilations", I64S(1, 1, 1, 1, 1, 1, 1, 1, 1));
    expect_rejected(&b, NULL, "conv0", "'dilations'", "9 values", NULL);

    conv = mb_conv_relu(&b, 3);
    mb_attr_string(&b, conv, "auto_pad", "SOMETIMES");
    expect_rejected(&b, NULL, "conv0", "'auto_pad'", "SOMETIMES", NULL);

    mb_conv_relu(&b, 3);
    Onnx__NodeProto *t = mb_node(&b, "Transpose", "t9", NAMES("y"), "t");
    mb_attr_ints(&b, t, "perm", I64S(0, 1, 2, 3, 4, 5, 6, 7, 8)); /* rank is at most 8 */
    expect_rejected(&b, NULL, "t9", "'perm'", "9 values", NULL);

    conv = mb_conv_relu(&b, 3);
    mb_attr_int(&b, conv, "unheard_of", 7); /* unknown attributes are ignored */
    wl_graph_free(mb_load_ok(&b, NULL));
    mb_free(&b);
}

static void test_unknown_op(void **state)
{
    (void)state;
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", 2, (int64_t[]){2, 6});
    Onnx__NodeProto *n = mb_node(&b, "FancyOp", "fancy", NAMES("x"), "f");
    n->domain = "com.example";
    mb_node(&b, "Relu", "relu", NAMES("f"), "y");
    mb_output(&b, "y");
    /* The file declares the unknown op's output: [2, 3]. */
    mb_push(&b, &b.graph->value_info, &b.graph->n_value_info,
            mb_value(&b, "f", 1, 2, (int64_t[]){2, 3}, NULL));
    as_status st;
    mb_load_invalid(&b, NULL, &st);
    assert_non_null(strstr(st.message, "tiny.onnx: node 0 'fancy': unknown op type 'FancyOp' "
                                       "(domain 'com.example')"));
    assert_non_null(strstr(st.message, "--allow-unknown-ops"));

    wl_onnx_options allow = {.allow_unknown_ops = true};
    wl_graph *g = mb_load_ok(&b, &allow);
    assert_int_equal(g->ops[0].kind, WL_OP_UNKNOWN);
    assert_string_equal(g->ops[0].op_type, "FancyOp");
    assert_int_equal(g->n_warnings, 1);
    assert_non_null(strstr(g->warnings[0], "'FancyOp' costed as zero"));
    const wl_tensor *y = &g->tensors[g->outputs[0]];
    assert_int_equal(y->dims[0], 2);
    assert_int_equal(y->dims[1], 3);
    wl_graph_free(g);
    mb_free(&b);
}

static void test_opset_range(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    b.opset->version = 9;
    expect_rejected(&b, NULL, "tiny.onnx", "opset 9", NULL);

    mb_conv_relu(&b, 3);
    b.opset->domain = "com.microsoft"; /* no default-domain opset at all */
    expect_rejected(&b, NULL, "tiny.onnx", "opset", NULL);

    mb_conv_relu(&b, 3);
    b.opset->version = 19;
    wl_graph *g = mb_load_ok(&b, NULL);
    assert_int_equal(g->opset, 19);
    assert_int_equal(g->n_warnings, 1);
    assert_non_null(strstr(g->warnings[0], "opset 19"));
    wl_graph_free(g);
    mb_free(&b);

    mb_conv_relu(&b, 3);
    b.model->graph = NULL;
    expect_rejected(&b, NULL, "tiny.onnx", "no graph", NULL);
}

static void test_symbolic_batch(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    b.graph->input[0] = mb_value(&b, "x", 1, 4, (int64_t[]){0, 3, 8, 8}, "N");
    wl_onnx_options opt = {.batch = 4};
    wl_graph *g = mb_load_ok(&b, &opt);
    assert_int_equal(g->tensors[g->inputs[0]].dims[0], 4);
    assert_int_equal(g->tensors[g->outputs[0]].dims[0], 4);
    assert_int_equal(g->n_warnings, 1);
    assert_non_null(strstr(g->warnings[0], "'N'"));
    wl_graph_free(g);
    g = mb_load_ok(&b, NULL); /* default: batch 1 */
    assert_int_equal(g->tensors[g->inputs[0]].dims[0], 1);
    wl_graph_free(g);
    mb_free(&b);
}

/* Constant nodes in their scalar and list forms feed shape arithmetic. */
static void test_constant_forms(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    Onnx__NodeProto *k = mb_node(&b, "Constant", "target", 0, NULL, "shape");
    mb_attr_ints(&b, k, "value_ints", I64S(1, -1));
    k = mb_node(&b, "Constant", "two", 0, NULL, "two");
    mb_attr_float(&b, k, "value_float", 2.0f);
    mb_node(&b, "Reshape", "flat", NAMES("y", "shape"), "r");
    mb_node(&b, "Mul", "scale", NAMES("r", "two"), "z");
    b.graph->output[0]->name = "z";
    wl_graph *g = mb_load_ok(&b, NULL);
    const wl_tensor *shape = &g->tensors[wl_find_tensor(g, "shape")];
    assert_int_equal(shape->kind, WL_TENSOR_CONSTANT);
    assert_int_equal(shape->ivalues[1], -1);
    const wl_tensor *two = &g->tensors[wl_find_tensor(g, "two")];
    assert_int_equal(two->rank, 0);
    assert_true(two->fvalues[0] == 2.0);
    const wl_tensor *z = &g->tensors[g->outputs[0]];
    assert_int_equal(z->rank, 2);
    assert_int_equal(z->dims[1], 4 * 8 * 8);
    wl_graph_free(g);
    mb_free(&b);

    mb_conv_relu(&b, 3);
    k = mb_node(&b, "Constant", "empty", 0, NULL, "nothing");
    expect_rejected(&b, NULL, "'empty' (Constant)", "value", NULL);
}

/* ------------------------------------------------------------ round trip */

/* Attributes equal, except that the exporter spells out a window the
 * source left implicit (no kernel_shape: taken from the weight). */
static bool same_attrs(const wl_attrs *source, const wl_attrs *reloaded)
{
    wl_attrs r = *reloaded;
    if (source->n_spatial == 0) {
        r.n_spatial = 0;
        memset(r.kernel_shape, 0, sizeof r.kernel_shape);
    }
    return memcmp(source, &r, sizeof r) == 0;
}

/* Same ops in the same order with the same attributes and tensors, same
 * shapes and types everywhere, same graph outputs in the same order, same
 * statistics. */
static void assert_same_graph(const wl_graph *a, const wl_graph *b)
{
    assert_int_equal(a->n_ops, b->n_ops);
    for (int32_t o = 0; o < a->n_ops; o++) {
        const wl_op *x = &a->ops[a->order[o]], *y = &b->ops[b->order[o]];
        assert_int_equal(x->kind, y->kind);
        assert_string_equal(x->op_type, y->op_type);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->n_inputs, y->n_inputs);
        assert_int_equal(x->n_outputs, y->n_outputs);
        for (int i = 0; i < x->n_inputs; i++)
            if (x->inputs[i] >= 0)
                assert_string_equal(a->tensors[x->inputs[i]].name, b->tensors[y->inputs[i]].name);
        if (!same_attrs(&x->attrs, &y->attrs))
            fail_msg("node %d '%s': attributes differ after the round trip", o, x->name);
        assert_int_equal(x->folded, y->folded);
    }
    for (int32_t t = 0; t < a->n_tensors; t++) {
        const wl_tensor *x = &a->tensors[t];
        int32_t u = wl_find_tensor(b, x->name);
        if (u < 0)
            fail_msg("tensor '%s' is lost by the round trip", x->name);
        const wl_tensor *y = &b->tensors[u];
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->dtype, y->dtype);
        assert_int_equal(x->shape_known, y->shape_known);
        assert_int_equal(x->rank, y->rank);
        assert_memory_equal(x->dims, y->dims, (size_t)x->rank * sizeof x->dims[0]);
        assert_int_equal(x->ivalues != NULL, y->ivalues != NULL);
        if (x->ivalues)
            assert_memory_equal(x->ivalues, y->ivalues,
                                (size_t)wl_tensor_elements(x) * sizeof *x->ivalues);
    }
    assert_int_equal(a->n_outputs, b->n_outputs);
    for (int32_t k = 0; k < a->n_outputs; k++)
        assert_string_equal(a->tensors[a->outputs[k]].name, b->tensors[b->outputs[k]].name);
    wl_stats sa, sb;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_graph_stats(a, &sa, &st), AS_OK);
    assert_int_equal(wl_graph_stats(b, &sb, &st), AS_OK);
    assert_int_equal(sa.params, sb.params);
    assert_int_equal(sa.macs, sb.macs);
    assert_int_equal(sa.weight_bytes, sb.weight_bytes);
    assert_int_equal(sa.max_working_set_bytes, sb.max_working_set_bytes);
    assert_int_equal(sa.dram_bytes_unfused, sb.dram_bytes_unfused);
    assert_int_equal(sa.n_ops, sb.n_ops);
}

/* Save g, load the file back. */
static wl_graph *save_and_reload(const wl_graph *g, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/roundtrip_%s", AS_TEST_TMP_DIR, file);
    as_status st;
    as_status_clear(&st);
    if (wl_onnx_save(g, path, &st) != AS_OK)
        fail_msg("save %s: %s", path, st.message);
    wl_graph *back = NULL;
    if (wl_onnx_load(path, NULL, &back, &st) != AS_OK)
        fail_msg("reload %s: %s", path, st.message);
    return back;
}

/* Values in raw_data (little endian, float16 included), and data stored
 * outside the file (loaded by shape, with a warning). */
static void test_initializer_data_forms(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    static const uint8_t shape_bytes[16] = {
        1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}; /* int64 {1, -1} */
    Onnx__TensorProto *shape = mb_weight(&b, "shape", 1, (int64_t[]){2});
    shape->data_type = 7;
    shape->has_raw_data = true;
    shape->raw_data.len = sizeof shape_bytes;
    shape->raw_data.data = (uint8_t *)shape_bytes;
    static const uint8_t half_bytes[4] = {0x00, 0x3e, 0x00, 0xc0}; /* float16 {1.5, -2} */
    Onnx__TensorProto *half = mb_weight(&b, "half", 1, (int64_t[]){2});
    half->data_type = 10;
    half->has_raw_data = true;
    half->raw_data.len = sizeof half_bytes;
    half->raw_data.data = (uint8_t *)half_bytes;
    Onnx__TensorProto *far = mb_weight(&b, "far", 1, (int64_t[]){4});
    far->has_data_location = true;
    far->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    mb_node(&b, "Reshape", "flat", NAMES("y", "shape"), "r");
    mb_node(&b, "Add", "plus_far", NAMES("r", "far"), "s");
    mb_node(&b, "Mul", "times_half", NAMES("s", "half"), "z");
    b.graph->output[0]->name = "r";
    as_status st;
    mb_load_invalid(&b, NULL, &st); /* [1,256] + [4]: no broadcast */
    assert_non_null(strstr(st.message, "plus_far"));
    /* Rewire: plus_far and times_half read r; "far" stays unused (which is
     * fine) and "half" is read by an Identity. */
    b.graph->node[3]->input[1] = "r";
    b.graph->node[4]->input[1] = "r";
    mb_node(&b, "Identity", "keep", NAMES("half"), "h");
    wl_graph *g = mb_load_ok(&b, NULL);
    mb_free(&b);
    assert_int_equal(g->tensors[g->outputs[0]].dims[1], 256);
    const wl_tensor *h = &g->tensors[wl_find_tensor(g, "half")];
    assert_int_equal(h->kind, WL_TENSOR_WEIGHT);
    assert_true(h->fvalues[0] == 1.5 && h->fvalues[1] == -2.0);
    const wl_tensor *f = &g->tensors[wl_find_tensor(g, "far")];
    assert_true(f->data_stripped);
    assert_null(f->fvalues);
    assert_int_equal(g->n_warnings, 1);
    assert_non_null(strstr(g->warnings[0], "'far'"));
    wl_graph *back = save_and_reload(g, "data_forms.onnx");
    const wl_tensor *h2 = &back->tensors[wl_find_tensor(back, "half")];
    assert_int_equal(h2->dtype, WL_DTYPE_F16);
    assert_true(h2->fvalues[0] == 1.5 && h2->fvalues[1] == -2.0); /* small: kept */
    wl_graph_free(back);
    wl_graph_free(g);
}

static void test_round_trip_reference_models(void **state)
{
    (void)state;
    for (int m = 0; m < N_EXPECTED; m++) {
        as_status st;
        wl_graph *g = load_reference(expected[m].file, &st);
        wl_graph *back = save_and_reload(g, expected[m].file);
        assert_same_graph(g, back);
        check_against_truth(back, &expected[m]);
        wl_graph_free(back);
        wl_graph_free(g);
    }
}

/* Graphs built in C leave windows implicit and hold float constants that
 * no op produces; exported, they come back with the same statistics and
 * outputs, the constants as (folded) Constant nodes. */
static void test_round_trip_zoo_models(void **state)
{
    (void)state;
    int n;
    const wl_zoo_entry *zoo = wl_zoo_entries(&n);
    for (int i = 0; i < n; i++) {
        as_status st;
        as_status_clear(&st);
        wl_graph *g = NULL;
        if (wl_zoo_build(zoo[i].name, &g, &st) != AS_OK)
            fail_msg("zoo %s: %s", zoo[i].name, st.message);
        char file[128];
        snprintf(file, sizeof file, "zoo_%s.onnx", zoo[i].name);
        wl_graph *back = save_and_reload(g, file);
        assert_same_graph(g, back); /* outputs included */
        wl_graph_free(back);
        wl_graph_free(g);
    }
}

/* The element type each initializer of the file at path declares, by
 * tensor name of g: weights written without
 * data carry the storage type of the precision, everything else the
 * model's type.  Returns how many stripped weights were checked. */
static int check_initializer_types(const wl_graph *g, const char *path, wl_dtype weight_dtype)
{
    as_status st;
    as_status_clear(&st);
    size_t size = 0;
    uint8_t *data = as_read_file(path, &size, &st);
    assert_non_null(data);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    assert_non_null(m);
    int stripped = 0;
    for (size_t i = 0; i < m->graph->n_initializer; i++) {
        const Onnx__TensorProto *tp = m->graph->initializer[i];
        int32_t t = wl_find_tensor(g, tp->name);
        assert_true(t >= 0);
        const wl_tensor *tensor = &g->tensors[t];
        bool is_stripped_weight = tensor->kind == WL_TENSOR_WEIGHT && !tp->has_raw_data;
        wl_dtype want = is_stripped_weight ? weight_dtype : tensor->dtype;
        if (tp->data_type != (int32_t)want)
            fail_msg("%s: initializer '%s' has type %d, expected %s", path, tp->name,
                     (int)tp->data_type, wl_dtype_name(want));
        stripped += is_stripped_weight;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    free(data);
    return stripped;
}

/* An export after a precision transform declares its weights in the
 * precision's type (int8 -> INT8, fp16 -> FLOAT16, bf16 -> BFLOAT16,
 * mixed -> INT8 weights), and reading the file back gives the same
 * parameters and weight bytes; the CLI's `model export --precision int8`
 * writes INT8 weights. */
static void test_export_precision_types(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        wl_dtype weight_dtype;
    } cases[] = {{"fp32", WL_DTYPE_F32},
                 {"fp16", WL_DTYPE_F16},
                 {"bf16", WL_DTYPE_BF16},
                 {"int8", WL_DTYPE_I8},
                 {"mixed", WL_DTYPE_I8}};
    const char *models[] = {"resnet18", "bert_base"};
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            as_status st;
            as_status_clear(&st);
            wl_graph *g = NULL;
            assert_int_equal(wl_zoo_build(models[mi], &g, &st), AS_OK);
            wl_precision p;
            assert_true(wl_precision_parse(cases[c].name, &p));
            wl_set_precision(g, p);
            char file[128], path[512];
            snprintf(file, sizeof file, "precision_%s_%s.onnx", models[mi], cases[c].name);
            snprintf(path, sizeof path, "%s/roundtrip_%s", AS_TEST_TMP_DIR, file);
            wl_graph *back = save_and_reload(g, file);
            assert_true(check_initializer_types(g, path, cases[c].weight_dtype) > 10);
            wl_stats sa, sb;
            assert_int_equal(wl_graph_stats(g, &sa, &st), AS_OK);
            assert_int_equal(wl_graph_stats(back, &sb, &st), AS_OK);
            assert_int_equal(sa.params, sb.params);
            assert_int_equal(sa.weight_bytes, sb.weight_bytes);
            assert_int_equal(sa.macs, sb.macs);
            wl_graph_free(back);
            wl_graph_free(g);
        }
    }

    /* The user's command. */
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/cli_export_int8.onnx", AS_TEST_TMP_DIR);
    snprintf(cmd, sizeof cmd, "'%s' model export resnet18 '%s' --precision int8 2>/dev/null",
             AS_CLI_PATH, path);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    assert_int_equal(wl_zoo_build("resnet18", &g, &st), AS_OK);
    assert_true(check_initializer_types(g, path, WL_DTYPE_I8) > 10);
    wl_graph_free(g);
}

/* Weights of the model's own types (float, and int8 as quantized models
 * store them) stay weights with their type on import: an int8 weight
 * counts as a parameter of one byte. */
static void test_int8_initializer_is_weight(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    b.graph->initializer[0]->data_type = WL_DTYPE_I8; /* w[4,3,3,3] */
    wl_graph *g = mb_load_ok(&b, NULL);
    as_status st;
    as_status_clear(&st);
    int32_t t = wl_find_tensor(g, "w");
    assert_true(t >= 0);
    assert_int_equal(g->tensors[t].kind, WL_TENSOR_WEIGHT);
    assert_int_equal(g->tensors[t].dtype, WL_DTYPE_I8);
    wl_stats s;
    assert_int_equal(wl_graph_stats(g, &s, &st), AS_OK);
    assert_int_equal(s.params, 4 * 3 * 3 * 3);
    assert_int_equal(s.weight_bytes, 4 * 3 * 3 * 3);
    wl_graph_free(g);
    mb_free(&b);
}

/* Attributes the reference models do not use: auto_pad, group, alpha,
 * mode, ceil_mode, perm, axis, to, and ConstantOfShape's typed value. */
static void test_round_trip_attributes(void **state)
{
    (void)state;
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", 4, (int64_t[]){1, 8, 6, 6});
    mb_weight(&b, "w", 4, (int64_t[]){8, 4, 3, 3});
    Onnx__NodeProto *n = mb_node(&b, "Conv", "grouped", NAMES("x", "w"), "c");
    mb_attr_int(&b, n, "group", 2);
    mb_attr_string(&b, n, "auto_pad", "SAME_UPPER");
    n = mb_node(&b, "LeakyRelu", "leaky", NAMES("c"), "l");
    mb_attr_float(&b, n, "alpha", 0.25f);
    n = mb_node(&b, "DepthToSpace", "d2s", NAMES("l"), "d");
    mb_attr_int(&b, n, "blocksize", 2);
    mb_attr_string(&b, n, "mode", "CRD");
    n = mb_node(&b, "MaxPool", "pool", NAMES("d"), "p");
    mb_attr_ints(&b, n, "kernel_shape", I64S(3, 3));
    mb_attr_ints(&b, n, "strides", I64S(2, 2));
    mb_attr_int(&b, n, "ceil_mode", 1);
    n = mb_node(&b, "Transpose", "nhwc", NAMES("p"), "t");
    mb_attr_ints(&b, n, "perm", I64S(0, 2, 3, 1));
    n = mb_node(&b, "Softmax", "soft", NAMES("t"), "s");
    mb_attr_int(&b, n, "axis", 1);
    mb_node(&b, "Shape", "shape", NAMES("s"), "sh");
    n = mb_node(&b, "ConstantOfShape", "sevens", NAMES("sh"), "f");
    mb_attr_int32_tensor(&b, n, "value", 7);
    n = mb_node(&b, "Cast", "to_float", NAMES("f"), "cf");
    mb_attr_int(&b, n, "to", 1);
    mb_node(&b, "Add", "sum", NAMES("s", "cf"), "y");
    mb_output(&b, "y");
    wl_graph *g = mb_load_ok(&b, NULL);
    mb_free(&b);
    const wl_tensor *y = &g->tensors[g->outputs[0]];
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dims[1], 6); /* ceil((12 - 3) / 2) + 1 */
    assert_int_equal(y->dims[3], 2);
    assert_int_equal(g->tensors[wl_find_tensor(g, "f")].dtype, WL_DTYPE_I32);
    wl_graph *back = save_and_reload(g, "attributes.onnx");
    assert_same_graph(g, back);
    const wl_op *conv = &back->ops[0];
    assert_int_equal(conv->attrs.auto_pad, WL_AUTO_PAD_SAME_UPPER);
    assert_int_equal(conv->attrs.group, 2);
    assert_int_equal(conv->attrs.n_spatial, 2); /* spelled out from the weight */
    assert_int_equal(conv->attrs.kernel_shape[1], 3);
    assert_int_equal(back->ops[2].attrs.mode_crd, 1);
    assert_string_equal(back->ops[0].name, "grouped");
    wl_graph_free(back);
    wl_graph_free(g);
}

/* The ops added for exporters' coverage import, infer and export back
 * with the attributes accelsearch reads (opset 18: ReduceMax's axes as an
 * input, GroupNormalization). */
static void test_round_trip_added_ops(void **state)
{
    (void)state;
    mb b;
    mb_init(&b, 18);
    mb_input(&b, "x", 4, (int64_t[]){1, 6, 4, 4});
    mb_weight(&b, "g3", 1, (int64_t[]){3});
    mb_weight(&b, "c6", 1, (int64_t[]){6});
    mb_int64s(&b, "axes", 2, 2, (int64_t[]){2, 3});
    mb_int64s(&b, "k", 1, 1, (int64_t[]){2});
    mb_int64s(&b, "one", 1, 1, (int64_t[]){1});
    Onnx__NodeProto *n = mb_node(&b, "Mod", "mod", NAMES("x", "x"), "a");
    mb_attr_int(&b, n, "fmod", 1);
    mb_node(&b, "Sin", "sin", NAMES("a"), "s0");
    n = mb_node(&b, "Selu", "selu", NAMES("s0"), "s1");
    mb_attr_float(&b, n, "gamma", 2.0f);
    n = mb_node(&b, "GroupNormalization", "gn", NAMES("s1", "g3", "g3"), "s2");
    mb_attr_int(&b, n, "num_groups", 3);
    mb_node(&b, "InstanceNormalization", "in", NAMES("s2", "c6", "c6"), "s3");
    n = mb_node(&b, "LogSoftmax", "lsm", NAMES("s3"), "s4");
    mb_attr_int(&b, n, "axis", 1);
    mb_node(&b, "ReduceMax", "rmax", NAMES("s4", "axes"), "r");
    n = mb_node(&b, "ArgMax", "amax", NAMES("s4"), "am");
    mb_attr_int(&b, n, "axis", 1);
    n = mb_node(&b, "SpaceToDepth", "s2d", NAMES("s4"), "d");
    mb_attr_int(&b, n, "blocksize", 2);
    n = mb_node(&b, "Trilu", "tril", NAMES("d"), "t");
    mb_attr_int(&b, n, "upper", 0);
    n = mb_node(&b, "TopK", "topk", NAMES("t", "k"), "tv");
    mb_push(&b, &n->output, &n->n_output, "ti");
    mb_node(&b, "CumSum", "cumsum", NAMES("tv", "one"), "cs");
    mb_node(&b, "Sum", "sum", NAMES("cs", "cs", "cs"), "y");
    mb_node(&b, "GreaterOrEqual", "ge", NAMES("y", "cs"), "ge");
    n = mb_node(&b, "Einsum", "einsum", NAMES("y", "y"), "ein");
    mb_attr_string(&b, n, "equation", "nchw,nchv->nwv");
    mb_output(&b, "y");
    mb_output(&b, "r");
    mb_output(&b, "am");
    mb_output(&b, "ge");
    mb_output(&b, "ein");
    wl_graph *g = mb_load_ok(&b, NULL);
    mb_free(&b);
    const wl_tensor *y = &g->tensors[g->outputs[0]];
    assert_int_equal(y->rank, 4);
    assert_int_equal(y->dims[1], 24);
    assert_int_equal(y->dims[3], 2);
    assert_int_equal(g->tensors[g->outputs[1]].dims[1], 6);
    assert_int_equal(g->tensors[g->outputs[2]].dtype, WL_DTYPE_I64);
    assert_int_equal(g->tensors[g->outputs[3]].dtype, WL_DTYPE_BOOL);
    wl_graph *back = save_and_reload(g, "added_ops.onnx");
    assert_same_graph(g, back);
    assert_int_equal(back->opset, 18);
    assert_int_equal(back->ops[back->order[0]].attrs.fmod, 1);
    assert_true(back->ops[back->order[2]].attrs.gamma == 2.0f);
    assert_int_equal(back->ops[back->order[3]].attrs.num_groups, 3);
    assert_int_equal(back->ops[back->order[9]].attrs.upper, 0);
    const wl_tensor *ein = &g->tensors[g->outputs[4]];
    assert_int_equal(ein->rank, 3);
    assert_int_equal(ein->dims[1], 2);
    assert_int_equal(ein->dims[2], 2);
    assert_string_equal(back->ops[back->order[14]].attrs.equation, "nchw,nchv->nwv");
    wl_graph_free(back);
    wl_graph_free(g);
}

static void test_save_to_bad_path(void **state)
{
    (void)state;
    mb b;
    mb_conv_relu(&b, 3);
    wl_graph *g = mb_load_ok(&b, NULL);
    mb_free(&b);
    as_status st;
    as_status_clear(&st);
    assert_int_equal(wl_onnx_save(g, AS_TEST_TMP_DIR "/no/such/dir/x.onnx", &st), AS_EIO);
    assert_non_null(strstr(st.message, "x.onnx"));
    wl_graph_free(g);
}

/* ---------------------------------------------------------- wl_model_load */

static void test_model_load_dispatch(void **state)
{
    (void)state;
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    assert_int_equal(wl_model_load("no_such_model", NULL, &g, &st), AS_EINVAL);
    assert_null(g);
    assert_non_null(strstr(st.message, "unknown model 'no_such_model'"));
    assert_non_null(strstr(st.message, "zoo list"));

    as_status_clear(&st);
    assert_int_equal(wl_model_load("missing.onnx", NULL, &g, &st), AS_EIO);

    as_status_clear(&st);
    assert_int_equal(wl_model_load(MODELS_DIR "/resnet18.onnx", NULL, &g, &st), AS_OK);
    assert_int_equal(g->n_ops, 49);
    wl_graph_free(g);
    if (wl_zoo_find("resnet18")) {
        as_status_clear(&st);
        assert_int_equal(wl_model_load("resnet18", NULL, &g, &st), AS_OK);
        assert_string_equal(g->source, "zoo:resnet18");
        wl_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_models_match_truth),
        cmocka_unit_test(test_reference_details),
        cmocka_unit_test(test_truncated_file),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_mutated_reference),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_empty_and_missing_files),
        cmocka_unit_test(test_valid_tiny_model),
        cmocka_unit_test(test_nodes_out_of_order_load),
        cmocka_unit_test(test_cyclic_graph),
        cmocka_unit_test(test_missing_initializer),
        cmocka_unit_test(test_dims_overflow),
        cmocka_unit_test(test_negative_dim_and_bad_data),
        cmocka_unit_test(test_conv_channel_mismatch),
        cmocka_unit_test(test_attribute_of_wrong_type),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_opset_range),
        cmocka_unit_test(test_symbolic_batch),
        cmocka_unit_test(test_constant_forms),
        cmocka_unit_test(test_initializer_data_forms),
        cmocka_unit_test(test_round_trip_reference_models),
        cmocka_unit_test(test_round_trip_zoo_models),
        cmocka_unit_test(test_export_precision_types),
        cmocka_unit_test(test_int8_initializer_is_weight),
        cmocka_unit_test(test_round_trip_attributes),
        cmocka_unit_test(test_round_trip_added_ops),
        cmocka_unit_test(test_save_to_bad_path),
        cmocka_unit_test(test_model_load_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
