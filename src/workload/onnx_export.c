/*
 * onnx_export.c -- writing ONNX models (see workload.h).
 *
 * Export builds a ModelProto from the graph in a scratch arena and packs
 * it: the source's opset, weights without data ("weight-stripped"),
 * constants with their values, value_info for every tensor whose shape is
 * known.  Attributes go out through the same attribute table they came
 * in by (wl_onnx_attr_rules).
 */
#include "onnx_private.h"
#include "ops_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT_IR_VERSION 8

/* ============================================================= exporter */

/* Weights are written without data, except ones so small that they are
 * operands of shape arithmetic (Resize scales, Clip bounds) rather than
 * trained parameters: inference needs their values to reload the file. */
#define EXPORT_SMALL_WEIGHT_ELEMS 8

/* True when attribute `name` of ops of `kind` is written even when it
 * equals ONNX's default (the op table's export_always). */
static bool is_always_written(wl_op_kind kind, const char *name)
{
    const char *always = wl_op_def_of(kind)->export_always;
    char word[32];
    snprintf(word, sizeof word, " %s ", name);
    return always && strstr(always, word);
}

/* Bytes of the wl_attrs field behind a scalar slot. */
static size_t slot_bytes(attr_slot slot)
{
    switch (slot) {
    case SLOT_I64:
        return sizeof(int64_t);
    case SLOT_F32:
        return sizeof(float);
    case SLOT_FLAG:
    case SLOT_CRD:
        return sizeof(int);
    case SLOT_DTYPE:
        return sizeof(wl_dtype);
    case SLOT_AUTO_PAD:
        return sizeof(wl_auto_pad);
    default:
        return 0;
    }
}

/* True when rule r's field of a differs from the defaults d.  A spatial
 * list differs when one of its n_spatial values does; other lists when
 * they are present at all. */
static bool attr_differs(const attr_rule *r, const wl_attrs *a, const wl_attrs *d)
{
    int n = wl_onnx_rule_count(r, a);
    switch (r->slot) {
    case SLOT_SPATIAL:
        return memcmp(CFIELD(a, r, int64_t), CFIELD(d, r, int64_t), (size_t)n * sizeof(int64_t));
    case SLOT_LIST:
        return n > 0;
    case SLOT_MODE:
        return strcmp(CFIELD(a, r, char), CFIELD(d, r, char)) != 0;
    case SLOT_VALUE:
        return a->value != d->value;
    default:
        return memcmp(CFIELD(a, r, char), CFIELD(d, r, char), slot_bytes(r->slot)) != 0;
    }
}

typedef struct exporter {
    as_arena arena; /* every message of the model being built */
    const wl_graph *g;
    bool *used; /* per tensor: read by a live op or a graph output */
    bool oom;
} exporter;

/* A copy of size bytes of src in the export arena; records running out of
 * memory so that the builders can be chained and checked once. */
static void *ex_copy(exporter *ex, const void *src, size_t size)
{
    void *p = as_arena_memdup(&ex->arena, src, size ? size : 1);
    ex->oom |= p == NULL;
    return p;
}

/* A new protobuf message of type T, initialised. */
#define EX_NEW(ex, T, INIT) ((T *)ex_copy((ex), &(T)INIT, sizeof(T)))

/* An array of n pointers (the repeated message fields of protobuf-c). */
static void *ex_array(exporter *ex, size_t n, size_t elem_size)
{
    void *p = as_arena_alloc(&ex->arena, (n ? n : 1) * elem_size);
    ex->oom |= p == NULL;
    return p;
}

/* The little-endian raw_data of tensor t's values. */
static ProtobufCBinaryData encode_values(exporter *ex, const wl_tensor *t)
{
    size_t elem_bytes = wl_onnx_elem_bytes(t->dtype), n = (size_t)wl_tensor_elements(t);
    ProtobufCBinaryData raw = {n * elem_bytes, ex_array(ex, n * elem_bytes, 1)};
    bool is_float = wl_dtype_is_float(t->dtype);
    for (size_t i = 0; raw.data && i < n; i++) {
        uint64_t bits = wl_onnx_element_to_bits(t->dtype, is_float ? 0 : t->ivalues[i],
                                                is_float ? t->fvalues[i] : 0.0);
        for (size_t k = 0; k < elem_bytes; k++, bits >>= 8)
            raw.data[i * elem_bytes + k] = (uint8_t)bits;
    }
    return raw;
}

/* True when t's values are known and should travel with it. */
static bool export_values(const wl_tensor *t)
{
    bool known = wl_dtype_is_float(t->dtype) ? t->fvalues != NULL : t->ivalues != NULL;
    int64_t n = wl_tensor_elements(t);
    if (!known || n < 0 || wl_onnx_elem_bytes(t->dtype) == 0)
        return false;
    return t->kind != WL_TENSOR_WEIGHT || n <= EXPORT_SMALL_WEIGHT_ELEMS;
}

/*
 * The element type t is written with.  A weight written without data
 * declares its storage type when a precision transform chose one (an
 * int8 model's weights are INT8), so that the file says what the
 * accelerator stores and reading it back gives the same weight bytes.
 * Tensors written with values keep the model's type: their values must
 * survive (Resize scales, Clip bounds).
 */
static wl_dtype export_dtype(const wl_tensor *t)
{
    bool typed =
        t->storage_dtype != WL_DTYPE_UNDEFINED && t->bits == wl_dtype_bits(t->storage_dtype);
    if (t->kind == WL_TENSOR_WEIGHT && typed && !export_values(t))
        return t->storage_dtype;
    return t->dtype;
}

/* t as a TensorProto: name, type, dims, and data when export_values. */
static Onnx__TensorProto *tensor_proto(exporter *ex, const wl_tensor *t)
{
    Onnx__TensorProto *tp = EX_NEW(ex, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    if (!tp)
        return NULL;
    tp->name = (char *)t->name;
    tp->has_data_type = true;
    tp->data_type = export_dtype(t);
    tp->n_dims = (size_t)t->rank;
    tp->dims = ex_copy(ex, t->dims, (size_t)t->rank * sizeof *t->dims);
    if (export_values(t)) {
        tp->has_raw_data = true;
        tp->raw_data = encode_values(ex, t);
    }
    return tp;
}

/* t's type and shape as a ValueInfoProto. */
static Onnx__ValueInfoProto *value_info_proto(exporter *ex, const wl_tensor *t)
{
    Onnx__ValueInfoProto *vi = EX_NEW(ex, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
    Onnx__TypeProto *type = EX_NEW(ex, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
    Onnx__TypeProto__Tensor *tt =
        EX_NEW(ex, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
    if (!vi || !type || !tt)
        return NULL;
    vi->name = (char *)t->name;
    vi->type = type;
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tt;
    tt->has_elem_type = true;
    tt->elem_type = t->dtype;
    if (!t->shape_known)
        return vi;
    Onnx__TensorShapeProto *shape =
        EX_NEW(ex, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
    Onnx__TensorShapeProto__Dimension **dims = ex_array(ex, (size_t)t->rank, sizeof *dims);
    if (!shape || !dims)
        return NULL;
    for (int i = 0; i < t->rank; i++) {
        dims[i] = EX_NEW(ex, Onnx__TensorShapeProto__Dimension,
                         ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
        if (!dims[i])
            return NULL;
        dims[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[i]->dim_value = t->dims[i];
    }
    shape->n_dim = (size_t)t->rank;
    shape->dim = dims;
    tt->shape = shape;
    return vi;
}

/* ConstantOfShape's fill value as the one-element tensor ONNX wants, of
 * the type of the op's output. */
static Onnx__TensorProto *fill_value_proto(exporter *ex, const wl_op *op)
{
    wl_dtype dtype = ex->g->tensors[op->outputs[0]].dtype;
    if (dtype == WL_DTYPE_UNDEFINED || dtype == WL_DTYPE_STRING)
        dtype = WL_DTYPE_F32;
    double fvalue = op->attrs.value;
    bool fits = fvalue > -9.2e18 && fvalue < 9.2e18; /* converting a double outside int64 is UB */
    int64_t ivalue = wl_dtype_is_float(dtype) || !fits ? 0 : (int64_t)fvalue;
    wl_tensor t = {.name = "value",
                   .kind = WL_TENSOR_CONSTANT,
                   .dtype = dtype,
                   .shape_known = true,
                   .rank = 1,
                   .dims = {1}};
    t.ivalues = &ivalue;
    t.fvalues = &fvalue;
    return tensor_proto(ex, &t);
}

/* An AttributeProto named `name` of type `type`, for the caller to fill. */
static Onnx__AttributeProto *new_attr_proto(exporter *ex, const char *name, attr_type type)
{
    Onnx__AttributeProto *at = EX_NEW(ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
    if (at) {
        at->name = (char *)name;
        at->has_type = true;
        at->type = type;
    }
    return at;
}

/* Attribute r of op, whose attributes resolved are a, as an AttributeProto. */
static Onnx__AttributeProto *attr_proto(exporter *ex, const attr_rule *r, const wl_attrs *a,
                                        const wl_op *op)
{
    Onnx__AttributeProto *at = new_attr_proto(ex, r->name, r->type);
    if (!at)
        return NULL;
    const char *s = NULL;
    switch (r->slot) {
    case SLOT_I64:
        at->i = *CFIELD(a, r, int64_t);
        break;
    case SLOT_FLAG:
        at->i = *CFIELD(a, r, int);
        break;
    case SLOT_DTYPE:
        at->i = *CFIELD(a, r, wl_dtype);
        break;
    case SLOT_F32:
        at->f = *CFIELD(a, r, float);
        break;
    case SLOT_SPATIAL:
    case SLOT_LIST:
        at->n_ints = (size_t)wl_onnx_rule_count(r, a);
        at->ints = ex_copy(ex, CFIELD(a, r, int64_t), at->n_ints * sizeof(int64_t));
        break;
    case SLOT_AUTO_PAD:
        s = (unsigned)a->auto_pad <= WL_AUTO_PAD_VALID ? wl_onnx_auto_pad_names[a->auto_pad]
                                                       : "NOTSET";
        break;
    case SLOT_CRD:
        s = a->mode_crd ? "CRD" : "DCR";
        break;
    case SLOT_MODE: /* a is the caller's copy: the proto keeps its own */
        s = ex_copy(ex, CFIELD(a, r, char), strlen(CFIELD(a, r, char)) + 1);
        break;
    case SLOT_VALUE:
        at->t = fill_value_proto(ex, op);
        break;
    }
    at->has_i = r->type == A_INT;
    at->has_f = r->type == A_FLOAT;
    if (s) {
        at->has_s = true;
        at->s.len = strlen(s);
        at->s.data = (uint8_t *)s;
    }
    return at;
}

/*
 * A copy of op's attributes with the window spelled out: graphs built in
 * C leave n_spatial = 0 ("from the input rank") and kernel_shape 0 ("from
 * the weight"), which an ONNX reader needs as numbers.
 */
static wl_attrs resolved_attrs(const wl_graph *g, const wl_op *op)
{
    wl_attrs a = op->attrs;
    const wl_tensor *x = op->n_inputs > 0 && op->inputs[0] >= 0 ? &g->tensors[op->inputs[0]] : NULL;
    const wl_tensor *w = op->n_inputs > 1 && op->inputs[1] >= 0 ? &g->tensors[op->inputs[1]] : NULL;
    bool conv = wl_op_kernel_from_weight(op->kind);
    if (a.n_spatial == 0 && x && x->shape_known && x->rank > 2)
        a.n_spatial = x->rank - 2 <= WL_MAX_SPATIAL ? x->rank - 2 : 0;
    for (int i = 0; conv && w && w->shape_known && i < a.n_spatial && 2 + i < w->rank; i++)
        if (a.kernel_shape[i] == 0)
            a.kernel_shape[i] = w->dims[2 + i];
    return a;
}

/* A Constant node's `value`: the tensor t with its values. */
static Onnx__AttributeProto *constant_value_attr(exporter *ex, const wl_tensor *t)
{
    Onnx__AttributeProto *at = new_attr_proto(ex, "value", A_TENSOR);
    if (at)
        at->t = tensor_proto(ex, t);
    return at;
}

/* The attributes written for op: those that differ from ONNX's defaults,
 * and the window of conv and pool ops always.  A Constant carries its
 * output tensor as `value`. */
static void node_attributes(exporter *ex, const wl_op *op, Onnx__NodeProto *np)
{
    const wl_graph *g = ex->g;
    np->attribute = ex_array(ex, WL_ONNX_N_ATTR_RULES, sizeof *np->attribute);
    if (!np->attribute)
        return;
    if (op->kind == WL_OP_CONSTANT) {
        np->attribute[np->n_attribute++] = constant_value_attr(ex, &g->tensors[op->outputs[0]]);
        return;
    }
    if (op->kind == WL_OP_UNKNOWN)
        return;
    wl_attrs a = resolved_attrs(g, op), d;
    wl_attrs_default(&d, op->kind);
    for (int i = 0; i < WL_ONNX_N_ATTR_RULES; i++) {
        const attr_rule *r = &wl_onnx_attr_rules[i];
        if (!wl_onnx_rule_serves(r, op->kind))
            continue;
        bool pads_implied = r->slot == SLOT_SPATIAL && r->capacity == 2 &&
                            a.auto_pad != WL_AUTO_PAD_NOTSET; /* ONNX: never both */
        bool write = is_always_written(op->kind, r->name) || attr_differs(r, &a, &d);
        if (write && !pads_implied && (r->slot != SLOT_SPATIAL || a.n_spatial > 0))
            np->attribute[np->n_attribute++] = attr_proto(ex, r, &a, op);
    }
}

/* Names of op's input tensors ("" for omitted optional inputs) or of its
 * outputs, as protobuf-c's string array. */
static char **tensor_names(exporter *ex, const int32_t *tensors, int n)
{
    char **names = ex_array(ex, (size_t)n, sizeof *names);
    for (int i = 0; names && i < n; i++)
        names[i] = tensors[i] >= 0 ? (char *)ex->g->tensors[tensors[i]].name : "";
    return names;
}

/* op as a NodeProto: name, type, tensor names, attributes. */
static Onnx__NodeProto *node_proto(exporter *ex, const wl_op *op)
{
    Onnx__NodeProto *np = EX_NEW(ex, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
    if (!np)
        return NULL;
    np->name = (char *)op->name;
    np->op_type = (char *)op->op_type;
    np->n_input = (size_t)op->n_inputs;
    np->input = tensor_names(ex, op->inputs, op->n_inputs);
    np->n_output = (size_t)op->n_outputs;
    np->output = tensor_names(ex, op->outputs, op->n_outputs);
    node_attributes(ex, op, np);
    return np;
}

/* True when the tensor is produced by a live op. */
static bool is_computed(const wl_graph *g, const wl_tensor *t)
{
    return t->producer >= 0 && !g->ops[t->producer].dead;
}

/*
 * How a stored tensor that no live op produces travels: weights and
 * integer constants as initializers (read back as the same), float
 * constants as Constant nodes, since a float initializer reads back as a
 * weight (graphs built in C have such scalars: Clip bounds, GELU's 0.5).
 */
static bool is_loose_float_constant(const wl_graph *g, const wl_tensor *t)
{
    return t->kind == WL_TENSOR_CONSTANT && wl_dtype_is_float(t->dtype) && !is_computed(g, t);
}

/* True when t travels as an initializer (see is_loose_float_constant). */
static bool is_initializer(const wl_graph *g, const wl_tensor *t)
{
    bool stored = t->kind == WL_TENSOR_WEIGHT || t->kind == WL_TENSOR_CONSTANT;
    return stored && !is_computed(g, t) && !is_loose_float_constant(g, t);
}

/* A Constant node defining tensor t, named after it. */
static Onnx__NodeProto *constant_node(exporter *ex, const wl_tensor *t)
{
    Onnx__NodeProto *np = EX_NEW(ex, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
    char **output = ex_array(ex, 1, sizeof *output);
    Onnx__AttributeProto **attribute = ex_array(ex, 1, sizeof *attribute);
    if (!np || !output || !attribute)
        return NULL;
    np->name = (char *)t->name;
    np->op_type = "Constant";
    output[0] = (char *)t->name;
    np->n_output = 1;
    np->output = output;
    attribute[0] = constant_value_attr(ex, t);
    np->n_attribute = 1;
    np->attribute = attribute;
    return np;
}

/* Constant nodes for the loose float constants, then the live ops in
 * topological order when the graph is indexed, else in source order. */
static void add_nodes(exporter *ex, Onnx__GraphProto *gp)
{
    const wl_graph *g = ex->g;
    gp->node = ex_array(ex, (size_t)g->n_ops + (size_t)g->n_tensors, sizeof *gp->node);
    for (int32_t i = 0; gp->node && i < g->n_tensors; i++)
        if (ex->used[i] && is_loose_float_constant(g, &g->tensors[i]))
            gp->node[gp->n_node++] = constant_node(ex, &g->tensors[i]);
    bool indexed = g->order != NULL;
    int32_t n = indexed ? g->n_order : g->n_ops;
    for (int32_t k = 0; gp->node && k < n; k++) {
        const wl_op *op = &g->ops[indexed ? g->order[k] : k];
        if (!op->dead)
            gp->node[gp->n_node++] = node_proto(ex, op);
    }
}

/* Mark the tensors the model needs: those live ops read, and the graph
 * outputs; is_output gets the latter. */
static void mark_used(exporter *ex, bool *is_output)
{
    const wl_graph *g = ex->g;
    for (int32_t o = 0; o < g->n_ops; o++)
        for (int i = 0; !g->ops[o].dead && i < g->ops[o].n_inputs; i++)
            if (g->ops[o].inputs[i] >= 0)
                ex->used[g->ops[o].inputs[i]] = true;
    for (int32_t i = 0; i < g->n_outputs; i++)
        ex->used[g->outputs[i]] = is_output[g->outputs[i]] = true;
}

/*
 * Initializers: the stored tensors is_initializer picks, when used.
 * value_info: every other computed tensor whose shape is known (graph
 * outputs have theirs in the output list).
 */
static void add_tensors(exporter *ex, Onnx__GraphProto *gp, const bool *is_output)
{
    const wl_graph *g = ex->g;
    gp->initializer = ex_array(ex, (size_t)g->n_tensors, sizeof *gp->initializer);
    gp->value_info = ex_array(ex, (size_t)g->n_tensors, sizeof *gp->value_info);
    if (!gp->initializer || !gp->value_info)
        return;
    for (int32_t i = 0; i < g->n_tensors; i++) {
        const wl_tensor *t = &g->tensors[i];
        if (ex->used[i] && is_initializer(g, t))
            gp->initializer[gp->n_initializer++] = tensor_proto(ex, t);
        else if (is_computed(g, t) && t->shape_known && t->dtype != WL_DTYPE_UNDEFINED &&
                 !is_output[i])
            gp->value_info[gp->n_value_info++] = value_info_proto(ex, t);
    }
}

/* The graph's input or output list as ValueInfoProtos. */
static Onnx__ValueInfoProto **value_infos(exporter *ex, const int32_t *tensors, int32_t n)
{
    Onnx__ValueInfoProto **list = ex_array(ex, (size_t)n, sizeof *list);
    for (int32_t i = 0; list && i < n; i++)
        list[i] = value_info_proto(ex, &ex->g->tensors[tensors[i]]);
    return list;
}

/* The opset an export declares: the source's, whose attribute forms it
 * copies (Split sizes, Squeeze axes, ... moved to inputs at 13; Softmax's
 * axis changed meaning), raised to the first opset of every op it uses
 * (the op table's min_opset: LayerNormalization exists from 17 on). */
static int64_t export_opset(const wl_graph *g)
{
    int64_t opset = g->opset < ONNX_MIN_OPSET   ? ONNX_MIN_OPSET
                    : g->opset > ONNX_MAX_OPSET ? ONNX_MAX_OPSET
                                                : g->opset;
    for (int32_t o = 0; o < g->n_ops; o++) {
        int64_t needed = wl_op_def_of(g->ops[o].kind)->min_opset;
        if (!g->ops[o].dead && needed > opset)
            opset = needed;
    }
    return opset;
}

/* The whole model for ex->g, in ex's arena; NULL (or ex->oom set) when
 * memory runs out. */
static Onnx__ModelProto *model_proto(exporter *ex)
{
    const wl_graph *g = ex->g;
    Onnx__ModelProto *m = EX_NEW(ex, Onnx__ModelProto, ONNX__MODEL_PROTO__INIT);
    Onnx__GraphProto *gp = EX_NEW(ex, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
    Onnx__OperatorSetIdProto *opset =
        EX_NEW(ex, Onnx__OperatorSetIdProto, ONNX__OPERATOR_SET_ID_PROTO__INIT);
    Onnx__OperatorSetIdProto **opsets = ex_array(ex, 1, sizeof *opsets);
    if (!m || !gp || !opset || !opsets)
        return NULL;
    m->has_ir_version = true;
    m->ir_version = EXPORT_IR_VERSION;
    m->producer_name = "accelsearch";
    opset->domain = "";
    opset->has_version = true;
    opset->version = export_opset(g);
    opsets[0] = opset;
    m->n_opset_import = 1;
    m->opset_import = opsets;
    m->graph = gp;
    gp->name = (char *)g->name;
    ex->used = ex_array(ex, (size_t)g->n_tensors, sizeof *ex->used);
    bool *is_output = ex_array(ex, (size_t)g->n_tensors, sizeof *is_output);
    if (!ex->used || !is_output)
        return NULL;
    mark_used(ex, is_output);
    add_nodes(ex, gp);
    add_tensors(ex, gp, is_output);
    gp->n_input = (size_t)g->n_inputs;
    gp->input = value_infos(ex, g->inputs, g->n_inputs);
    gp->n_output = (size_t)g->n_outputs;
    gp->output = value_infos(ex, g->outputs, g->n_outputs);
    return m;
}

/* Write n bytes to path, replacing it. */
static as_code write_file(const char *path, const uint8_t *data, size_t n, as_status *st)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return as_fail(st, AS_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    bool ok = fwrite(data, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? AS_OK : as_fail(st, AS_EIO, "%s: write error: %s", path, strerror(errno));
}

/* Build the model in a scratch arena, pack it into one buffer, write it.
 * A graph with an internal op (a lowered conv's Im2Col or Winograd
 * transform) has no ONNX form: refused, naming the op. */
as_code wl_onnx_save(const wl_graph *g, const char *path, as_status *st)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (!op->dead && wl_op_def_of(op->kind)->internal)
            return as_fail(st, AS_EINVAL,
                           "%s: node %d '%s' (%s) is not an ONNX op: it comes from convolution "
                           "lowering (wl_lower_convs); export the model before lowering",
                           path, op->source_index, op->name, op->op_type);
    }
    exporter ex = {.g = g};
    as_arena_init(&ex.arena);
    Onnx__ModelProto *m = model_proto(&ex);
    as_code rc = AS_OK;
    if (!m || ex.oom) {
        rc = as_fail(st, AS_ENOMEM, "%s: out of memory building the model", path);
    } else {
        size_t n = onnx__model_proto__get_packed_size(m);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
            rc = as_fail(st, AS_ENOMEM, "%s: out of memory packing the model", path);
        else
            rc = write_file(path, buf, onnx__model_proto__pack(m, buf), st);
        free(buf);
    }
    as_arena_free(&ex.arena);
    return rc;
}
