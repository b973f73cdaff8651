/*
 * onnx_import.c -- reading ONNX models (see workload.h), and wl_model_load.
 *
 * Import checks the nesting of the protobuf's messages (nesting_ok), decodes
 * it with protoc-c's generated code, then maps the GraphProto onto a
 * wl_graph (import_graph):
 *
 *   initializers   -> weight / constant tensors (values kept when small)
 *   graph inputs   -> input tensors with their declared shapes
 *   value_info     -> an index of declared shapes, for unknown ops
 *   pass 1         -> one tensor per node output (Constant nodes: with values)
 *   graph outputs  -> resolved by name
 *   pass 2         -> one op per node, inputs resolved by name, attributes
 *                     checked and copied into wl_attrs (wl_onnx_attr_rules)
 *   wl_graph_infer -> order, shapes, folding, operand checks
 *
 * Creating every node output before adding any op means that a file whose
 * nodes are out of order (or cyclic) still resolves; wl_graph_index then
 * sorts it or names the cycle.  The unpacked protobuf is freed before
 * returning: the graph keeps only arena copies.
 */
#include "onnx_private.h"
#include "ops_private.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The rule for attribute `name` of an op of `kind`, or NULL: unknown
 * attributes are ignored (exporters add hints accelsearch does not need). */
static const attr_rule *find_rule(const char *name, wl_op_kind kind)
{
    for (int i = 0; i < WL_ONNX_N_ATTR_RULES; i++)
        if (strcmp(wl_onnx_attr_rules[i].name, name) == 0 &&
            wl_onnx_rule_serves(&wl_onnx_attr_rules[i], kind))
            return &wl_onnx_attr_rules[i];
    return NULL;
}

/* ============================================================ elements */

/* Where a TensorProto keeps its values when it does not use raw_data. */
typedef enum typed_field {
    TF_NONE,
    TF_FLOAT,
    TF_DOUBLE,
    TF_INT32,
    TF_INT64,
    TF_UINT64,
} typed_field;

/* ONNX stores each type in one typed field; the narrow integer and 16-bit
 * float types travel in int32_data (float16 as its bit pattern). */
static typed_field typed_field_of(wl_dtype t)
{
    switch (t) {
    case WL_DTYPE_F32:
        return TF_FLOAT;
    case WL_DTYPE_F64:
        return TF_DOUBLE;
    case WL_DTYPE_I64:
        return TF_INT64;
    case WL_DTYPE_U32:
    case WL_DTYPE_U64:
        return TF_UINT64;
    case WL_DTYPE_STRING:
    case WL_DTYPE_UNDEFINED:
        return TF_NONE;
    default:
        return TF_INT32;
    }
}

/* Number of values tp holds in its typed field f. */
static size_t typed_count(const Onnx__TensorProto *tp, typed_field f)
{
    switch (f) {
    case TF_FLOAT:
        return tp->n_float_data;
    case TF_DOUBLE:
        return tp->n_double_data;
    case TF_INT32:
        return tp->n_int32_data;
    case TF_INT64:
        return tp->n_int64_data;
    case TF_UINT64:
        return tp->n_uint64_data;
    case TF_NONE:
        break;
    }
    return 0;
}

/* True when tp carries data in any field, whether or not it is the one its
 * type calls for (a value in the wrong field is a length mismatch). */
static bool has_any_data(const Onnx__TensorProto *tp)
{
    return (tp->has_raw_data && tp->raw_data.len > 0) || tp->n_float_data || tp->n_double_data ||
           tp->n_int32_data || tp->n_int64_data || tp->n_uint64_data || tp->n_string_data;
}

/* Bit pattern of element i of tp in the typed field f. */
static uint64_t typed_bits(const Onnx__TensorProto *tp, typed_field f, size_t i)
{
    switch (f) {
    case TF_FLOAT:
        return wl_onnx_float_bits(tp->float_data[i]);
    case TF_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &tp->double_data[i], sizeof bits);
        return bits;
    }
    case TF_INT32:
        return (uint32_t)tp->int32_data[i];
    case TF_INT64:
        return (uint64_t)tp->int64_data[i];
    case TF_UINT64:
        return tp->uint64_data[i];
    case TF_NONE:
        break;
    }
    return 0;
}

/* Bit pattern of element i of tp's raw_data (little endian). */
static uint64_t raw_bits(const Onnx__TensorProto *tp, size_t elem_bytes, size_t i)
{
    const uint8_t *p = tp->raw_data.data + i * elem_bytes;
    uint64_t bits = 0;
    for (size_t k = elem_bytes; k-- > 0;)
        bits = bits << 8 | p[k];
    return bits;
}

/* ============================================================= importer */

typedef struct importer {
    wl_graph *g;
    const Onnx__GraphProto *gp;
    const wl_onnx_options *opt;
    as_status *st;
    wl_op_kind *kinds; /* per node, decided in pass 1 */
    /* Names declared in value_info and graph outputs -> their index in
     * value_info (outputs follow at n_value_info + i); consulted only for
     * the output shapes of unknown ops, which inference cannot compute. */
    as_strmap declared;
} importer;

/* A protobuf string that may be absent. */
static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* Fail the import for want of memory. */
static as_code out_of_memory(importer *im)
{
    return as_fail(im->st, AS_ENOMEM, "%s: out of memory", im->g->source);
}

/* True for the default ONNX operator domain, which files spell "" or
 * "ai.onnx". */
static bool is_default_domain(const char *domain)
{
    return *domain == '\0' || strcmp(domain, "ai.onnx") == 0;
}

/* Name of node i for the graph and messages: its own, or "node<i>". */
static const char *node_name(const Onnx__NodeProto *n, size_t i, char *buf, size_t size)
{
    if (n->name && *n->name)
        return n->name;
    snprintf(buf, size, "node%zu", i);
    return buf;
}

/* Node i for messages: "node 3 'conv1' (Conv)". */
static const char *node_label(const importer *im, size_t i, char *buf, size_t size)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    char name[64];
    snprintf(buf, size, "node %zu '%s' (%s)", i, node_name(n, i, name, sizeof name),
             str_or_empty(n->op_type));
    return buf;
}

/* Prefix of messages about node i: "<file>: node 3 'conv1' (Conv)". */
static const char *node_where(const importer *im, size_t i, char *buf, size_t size)
{
    char label[AS_MSG_BYTES / 4];
    snprintf(buf, size, "%s: %s", im->g->source, node_label(im, i, label, sizeof label));
    return buf;
}

/* ONNX's own name of an attribute type ("FLOAT", "INTS", ...). */
static const char *attr_type_name(attr_type t)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&onnx__attribute_proto__attribute_type__descriptor, t);
    return v ? v->name : "UNDEFINED";
}

/* The type of an attribute.  Files from before IR version 2 leave `type`
 * unset; the populated field tells then. */
static attr_type attr_type_of(const Onnx__AttributeProto *at)
{
    if (at->has_type && at->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return at->type;
    if (at->has_f)
        return A_FLOAT;
    if (at->has_i)
        return A_INT;
    if (at->has_s)
        return A_STRING;
    if (at->t)
        return A_TENSOR;
    if (at->n_floats)
        return A_FLOATS;
    if (at->n_ints)
        return A_INTS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* True when the STRING attribute at spells s exactly. */
static bool attr_string_is(const Onnx__AttributeProto *at, const char *s)
{
    size_t n = strlen(s);
    return at->s.len == n && (n == 0 || memcmp(at->s.data, s, n) == 0);
}

/* ----------------------------------------------------- tensor values */

/*
 * Check that tp's data (raw_data or its typed field) holds exactly
 * `elements` values of type t, and decode them into the arena when there
 * are at most WL_MAX_FOLD_ELEMS.  `what` names the tensor for messages.
 */
static as_code decode_values(importer *im, const Onnx__TensorProto *tp, wl_dtype t,
                             int64_t elements, wl_tensor *out, const char *what)
{
    typed_field f = typed_field_of(t);
    size_t elem_bytes = wl_onnx_elem_bytes(t), have;
    bool raw = tp->has_raw_data && tp->raw_data.len > 0;
    if (raw &&
        (tp->raw_data.len % elem_bytes != 0 || tp->raw_data.len / elem_bytes != (uint64_t)elements))
        return as_fail(
            im->st, AS_EINVAL,
            "%s: %s: raw_data holds %zu bytes; its dims need %lld %s values of %zu bytes",
            im->g->source, what, tp->raw_data.len, (long long)elements, wl_dtype_name(t),
            elem_bytes);
    if (!raw && (have = typed_count(tp, f)) != (uint64_t)elements)
        return as_fail(im->st, AS_EINVAL, "%s: %s holds %zu %s values; its dims need %lld",
                       im->g->source, what, have, wl_dtype_name(t), (long long)elements);
    if (elements > WL_MAX_FOLD_ELEMS)
        return AS_OK; /* carried by shape only */
    bool is_float = wl_dtype_is_float(t);
    size_t n = (size_t)elements;
    int64_t *iv = is_float ? NULL : as_arena_alloc(&im->g->arena, (n ? n : 1) * sizeof *iv);
    double *fv = is_float ? as_arena_alloc(&im->g->arena, (n ? n : 1) * sizeof *fv) : NULL;
    if (!iv && !fv)
        return as_fail(im->st, AS_ENOMEM, "%s: %s: out of memory", im->g->source, what);
    int64_t ignore_i;
    double ignore_f;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = raw ? raw_bits(tp, elem_bytes, i) : typed_bits(tp, f, i);
        wl_onnx_element_from_bits(t, bits, iv ? &iv[i] : &ignore_i, fv ? &fv[i] : &ignore_f);
    }
    out->ivalues = iv;
    out->fvalues = fv;
    return AS_OK;
}

/*
 * Add the tensor an initializer or a Constant node's value defines, with
 * its type and dims, and its values when it carries them.  Float and
 * 8-bit integer (quantized) initializers are weights; everything else
 * (shapes, indices) is a constant.  A tensor with
 * dims but no data (a weight-stripped export) or with external data loads
 * by shape alone.  Returns the tensor index or -1.
 */
static int32_t add_stored_tensor(importer *im, const Onnx__TensorProto *tp, const char *name,
                                 bool initializer, const char *what)
{
    const char *src = im->g->source;
    int code = tp->has_data_type ? tp->data_type : 0;
    if (!wl_dtype_valid(code) || code == WL_DTYPE_UNDEFINED || code == WL_DTYPE_STRING) {
        as_fail(im->st, AS_EINVAL, "%s: %s has unsupported data type %d", src, what, code);
        return -1;
    }
    wl_dtype t = (wl_dtype)code;
    if (tp->n_dims > WL_MAX_RANK) {
        as_fail(im->st, AS_EINVAL, "%s: %s has rank %zu; at most %d is supported", src, what,
                tp->n_dims, WL_MAX_RANK);
        return -1;
    }
    int64_t elements = 1, dims[WL_MAX_RANK]; /* a local copy: a scalar has dims == NULL */
    for (size_t i = 0; i < tp->n_dims; i++) {
        dims[i] = tp->dims[i];
        if (tp->dims[i] < 0) {
            as_fail(im->st, AS_EINVAL, "%s: %s has negative dimension %zu (%lld)", src, what, i,
                    (long long)tp->dims[i]);
            return -1;
        }
        if (!as_mul_i64(elements, tp->dims[i], &elements)) {
            as_fail(im->st, AS_EINVAL, "%s: %s: the element count of its dims overflows 64 bits",
                    src, what);
            return -1;
        }
    }
    wl_tensor_kind kind =
        initializer && wl_dtype_is_weight(t) ? WL_TENSOR_WEIGHT : WL_TENSOR_CONSTANT;
    int32_t idx = wl_add_tensor(im->g, name, kind, t, (int)tp->n_dims, dims, im->st);
    if (idx < 0)
        return -1;
    wl_tensor *out = &im->g->tensors[idx];
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        wl_warn(im->g, "%s: %s: data stored outside the file; loaded by shape only", src, what);
        out->data_stripped = true;
    } else if (has_any_data(tp) || elements == 0) {
        if (decode_values(im, tp, t, elements, out, what) != AS_OK)
            return -1;
    } else {
        out->data_stripped = elements > 0;
    }
    return idx;
}

/* Every initializer as a weight or constant tensor (add_stored_tensor). */
static as_code add_initializers(importer *im)
{
    for (size_t i = 0; i < im->gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = im->gp->initializer[i];
        char what[AS_MSG_BYTES / 2];
        snprintf(what, sizeof what, "initializer %zu '%s'", i, str_or_empty(tp->name));
        if (add_stored_tensor(im, tp, str_or_empty(tp->name), true, what) < 0)
            return im->st->code;
    }
    return AS_OK;
}

/* ----------------------------------------------------- declared shapes */

/*
 * The value opt->dims gives symbolic dimension `param` ("NAME=N,..."),
 * in *value; false when it names none.  Scans the string (a handful of
 * entries, read once per symbolic dim); check_dim_bindings has checked
 * its syntax.
 */
static bool bound_dim(const importer *im, const char *param, int64_t *value)
{
    const char *p = im->opt->dims;
    size_t len = strlen(param);
    while (p && *p && len > 0) {
        size_t entry = strcspn(p, ",");
        const char *eq = memchr(p, '=', entry);
        if (eq && (size_t)(eq - p) == len && !strncmp(p, param, len)) {
            *value = strtoll(eq + 1, NULL, 10);
            return true;
        }
        p += entry + (p[entry] == ',');
    }
    return false;
}

/* True when some graph input declares symbolic dimension name[0..len). */
static bool input_declares_dim(const importer *im, const char *name, size_t len)
{
    for (size_t i = 0; i < im->gp->n_input; i++) {
        const Onnx__TypeProto *type = im->gp->input[i]->type;
        if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !type->tensor_type || !type->tensor_type->shape)
            continue;
        const Onnx__TensorShapeProto *shape = type->tensor_type->shape;
        for (size_t d = 0; d < shape->n_dim; d++) {
            const char *param =
                shape->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                    ? shape->dim[d]->dim_param
                    : NULL;
            if (param && strlen(param) == len && !strncmp(param, name, len))
                return true;
        }
    }
    return false;
}

/* opt->dims is a list of NAME=N, N >= 1, each NAME a symbolic dimension
 * of some graph input (a misspelt name would silently cost the model at
 * the wrong size). */
static as_code check_dim_bindings(importer *im)
{
    const char *src = im->g->source;
    for (const char *p = im->opt->dims; p && *p;) {
        size_t entry = strcspn(p, ",");
        const char *eq = memchr(p, '=', entry);
        char *end = NULL;
        long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
        if (!eq || eq == p || end != p + entry || eq + 1 == end || v < 1 || v > INT32_MAX)
            return as_fail(im->st, AS_EINVAL,
                           "%s: dims: '%.*s' is not NAME=N with N in 1..2147483647", src,
                           (int)entry, p);
        if (!input_declares_dim(im, p, (size_t)(eq - p)))
            return as_fail(im->st, AS_EINVAL,
                           "%s: dims: no graph input has a symbolic dimension '%.*s'", src,
                           (int)(eq - p), p);
        p += entry + (p[entry] == ',');
    }
    return AS_OK;
}

/*
 * The element type and shape a ValueInfoProto declares.  A symbolic
 * dimension that opt->dims names takes its value there; any other symbolic
 * or missing one becomes opt->batch (dim 0, when set) or 1, with a
 * warning: accelsearch costs one concrete shape.  *known is false when no
 * shape is declared at all.
 */
static as_code declared_shape(importer *im, const Onnx__ValueInfoProto *vi, wl_dtype *dtype,
                              int *rank, int64_t dims[WL_MAX_RANK], bool *known)
{
    const char *name = str_or_empty(vi->name), *src = im->g->source;
    const Onnx__TypeProto *type = vi->type;
    if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type)
        return as_fail(im->st, AS_EINVAL, "%s: value '%s' is not a tensor", src, name);
    const Onnx__TypeProto__Tensor *tt = type->tensor_type;
    int code = tt->has_elem_type ? tt->elem_type : 0;
    if (!wl_dtype_valid(code) || code == WL_DTYPE_STRING)
        return as_fail(im->st, AS_EINVAL, "%s: value '%s' has unsupported element type %d", src,
                       name, code);
    *dtype = (wl_dtype)code;
    *known = tt->shape != NULL;
    if (!*known)
        return AS_OK;
    if (tt->shape->n_dim > WL_MAX_RANK)
        return as_fail(im->st, AS_EINVAL, "%s: value '%s' has rank %zu; at most %d is supported",
                       src, name, tt->shape->n_dim, WL_MAX_RANK);
    *rank = (int)tt->shape->n_dim;
    for (int i = 0; i < *rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 0)
                return as_fail(im->st, AS_EINVAL, "%s: value '%s' has negative dimension %d", src,
                               name, i);
            dims[i] = d->dim_value;
            continue;
        }
        const char *param = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                ? str_or_empty(d->dim_param)
                                : "";
        if (bound_dim(im, param, &dims[i]))
            continue;
        dims[i] = i == 0 && im->opt->batch > 0 ? im->opt->batch : 1;
        wl_warn(im->g, "%s: value '%s': dimension %d is symbolic ('%s'); using %lld", src, name, i,
                param, (long long)dims[i]);
    }
    return AS_OK;
}

/* Graph inputs that are not initializers are fed at run time; they need a
 * declared shape, since every other shape is inferred from them. */
static as_code add_graph_inputs(importer *im)
{
    for (size_t i = 0; i < im->gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = im->gp->input[i];
        const char *name = str_or_empty(vi->name);
        int32_t existing = wl_find_tensor(im->g, name);
        if (existing >= 0 && im->g->tensors[existing].kind != WL_TENSOR_INPUT)
            continue; /* an initializer listed as input (IR version < 4 style) */
        wl_dtype dtype = WL_DTYPE_UNDEFINED;
        int rank = 0;
        int64_t dims[WL_MAX_RANK];
        bool known;
        if (declared_shape(im, vi, &dtype, &rank, dims, &known) != AS_OK)
            return im->st->code;
        if (!known)
            return as_fail(im->st, AS_EINVAL, "%s: graph input '%s' declares no shape",
                           im->g->source, name);
        int32_t t = wl_add_tensor(im->g, name, WL_TENSOR_INPUT, dtype, rank, dims, im->st);
        if (t < 0)
            return im->st->code;
        if (!wl_add_graph_input(im->g, t))
            return out_of_memory(im);
    }
    return AS_OK;
}

/* Fill im->declared (see importer).  Unnamed values are skipped; a name
 * declared twice keeps its last declaration. */
static as_code index_declared_shapes(importer *im)
{
    const Onnx__GraphProto *gp = im->gp;
    for (size_t i = 0; i < gp->n_value_info + gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi =
            i < gp->n_value_info ? gp->value_info[i] : gp->output[i - gp->n_value_info];
        if (vi->name && *vi->name && i < INT32_MAX &&
            !as_strmap_put(&im->declared, vi->name, (int32_t)i))
            return out_of_memory(im);
    }
    return AS_OK;
}

/* Give the output t of an unknown op the type and shape the file declares
 * for it, if any; inference has no rule to compute them. */
static as_code apply_declared_shape(importer *im, int32_t t)
{
    int32_t k = as_strmap_get(&im->declared, im->g->tensors[t].name);
    if (k < 0)
        return AS_OK;
    const Onnx__GraphProto *gp = im->gp;
    const Onnx__ValueInfoProto *vi =
        (size_t)k < gp->n_value_info ? gp->value_info[k] : gp->output[(size_t)k - gp->n_value_info];
    wl_tensor *tensor = &im->g->tensors[t];
    if (declared_shape(im, vi, &tensor->dtype, &tensor->rank, tensor->dims, &tensor->shape_known) !=
        AS_OK)
        return im->st->code;
    tensor->bits = wl_dtype_bits(tensor->dtype);
    return AS_OK;
}

/* ------------------------------------------------------ Constant nodes */

/* The attributes a Constant node may carry its value in (strings and
 * sparse tensors are not supported). */
static const struct {
    const char *name;
    attr_type type;
} constant_forms[] = {
    {"value", A_TENSOR},  {"value_float", A_FLOAT}, {"value_floats", A_FLOATS},
    {"value_int", A_INT}, {"value_ints", A_INTS},
};
enum { N_CONSTANT_FORMS = sizeof constant_forms / sizeof constant_forms[0] };

/*
 * The value of a Constant node as one TensorProto: the `value` attribute
 * itself, or the scalar / list forms (value_float(s), value_int(s))
 * rewritten into *scratch.  NULL with st set when there is none or the
 * form is unsupported (strings, sparse tensors).
 */
static const Onnx__TensorProto *constant_value(importer *im, size_t i, Onnx__TensorProto *scratch,
                                               int64_t *scratch_dim)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    char where[AS_MSG_BYTES / 2];
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *at = n->attribute[k];
        const char *name = str_or_empty(at->name);
        attr_type t = attr_type_of(at);
        int form = -1;
        for (int f = 0; f < N_CONSTANT_FORMS; f++)
            if (strcmp(name, constant_forms[f].name) == 0)
                form = f;
        if (form < 0) {
            if (strncmp(name, "value", 5) == 0 || strcmp(name, "sparse_value") == 0) {
                as_fail(im->st, AS_EINVAL, "%s: attribute '%s' is not supported",
                        node_where(im, i, where, sizeof where), name);
                return NULL;
            }
            continue;
        }
        if (t != constant_forms[form].type) {
            as_fail(im->st, AS_EINVAL, "%s: attribute '%s' has type %s, expected %s",
                    node_where(im, i, where, sizeof where), name, attr_type_name(t),
                    attr_type_name(constant_forms[form].type));
            return NULL;
        }
        if (t == A_TENSOR) {
            if (!at->t)
                break;
            return at->t;
        }
        Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
        *scratch = init;
        scratch->has_data_type = true;
        scratch->data_type = t == A_FLOAT || t == A_FLOATS ? WL_DTYPE_F32 : WL_DTYPE_I64;
        if (t == A_FLOATS || t == A_INTS) {
            *scratch_dim = (int64_t)(t == A_FLOATS ? at->n_floats : at->n_ints);
            scratch->n_dims = 1;
            scratch->dims = scratch_dim;
        }
        scratch->n_float_data = t == A_FLOAT ? 1 : t == A_FLOATS ? at->n_floats : 0;
        scratch->float_data = t == A_FLOAT ? (float *)&at->f : at->floats;
        scratch->n_int64_data = t == A_INT ? 1 : t == A_INTS ? at->n_ints : 0;
        scratch->int64_data = t == A_INT ? (int64_t *)&at->i : at->ints;
        return scratch;
    }
    as_fail(im->st, AS_EINVAL, "%s: no 'value' attribute", node_where(im, i, where, sizeof where));
    return NULL;
}

/* The output of Constant node i: a constant tensor with its values. */
static as_code add_constant_output(importer *im, size_t i)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    char where[AS_MSG_BYTES / 2], what[AS_MSG_BYTES / 2];
    node_where(im, i, where, sizeof where);
    if (n->n_output != 1 || !n->output[0] || !*n->output[0])
        return as_fail(im->st, AS_EINVAL, "%s: a Constant must have exactly one output", where);
    Onnx__TensorProto scratch;
    int64_t scratch_dim;
    const Onnx__TensorProto *tp = constant_value(im, i, &scratch, &scratch_dim);
    if (!tp)
        return im->st->code;
    /* `what` without the file name: add_stored_tensor prefixes it. */
    char label[AS_MSG_BYTES / 4];
    snprintf(what, sizeof what, "%s: value", node_label(im, i, label, sizeof label));
    return add_stored_tensor(im, tp, n->output[0], false, what) < 0 ? im->st->code : AS_OK;
}

/* --------------------------------------------------------------- pass 1 */

/*
 * The op kind of node i.  A node of another domain or of a type outside
 * WL_OP_LIST is an error unless the caller allows unknown ops, which are
 * then kept (costed as zero) with a warning.
 */
static as_code node_kind(importer *im, size_t i, wl_op_kind *kind)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    const char *domain = str_or_empty(n->domain), *type = str_or_empty(n->op_type);
    *kind = is_default_domain(domain) ? wl_op_kind_from_name(type) : WL_OP_UNKNOWN;
    if (*kind != WL_OP_UNKNOWN)
        return AS_OK;
    char name[64];
    const char *shown = node_name(n, i, name, sizeof name);
    if (!im->opt->allow_unknown_ops)
        return as_fail(im->st, AS_EINVAL,
                       "%s: node %zu '%s': unknown op type '%s' (domain '%s'); "
                       "--allow-unknown-ops costs it as zero",
                       im->g->source, i, shown, type, domain);
    wl_warn(im->g, "%s: node %zu '%s': unknown op type '%s' costed as zero", im->g->source, i,
            shown, type);
    return AS_OK;
}

/* Create every node's output tensors, so that pass 2 can resolve inputs
 * whatever the node order.  Empty output names are omitted outputs. */
static as_code add_node_outputs(importer *im)
{
    for (size_t i = 0; i < im->gp->n_node; i++) {
        const Onnx__NodeProto *n = im->gp->node[i];
        if (node_kind(im, i, &im->kinds[i]) != AS_OK)
            return im->st->code;
        if (im->kinds[i] == WL_OP_CONSTANT) {
            if (add_constant_output(im, i) != AS_OK)
                return im->st->code;
            continue;
        }
        for (size_t k = 0; k < n->n_output; k++) {
            if (!n->output[k] || !*n->output[k])
                continue;
            int32_t t = wl_add_tensor(im->g, n->output[k], WL_TENSOR_ACTIVATION, WL_DTYPE_UNDEFINED,
                                      0, NULL, im->st);
            if (t < 0)
                return im->st->code;
            if (im->kinds[i] == WL_OP_UNKNOWN && apply_declared_shape(im, t) != AS_OK)
                return im->st->code;
        }
    }
    return AS_OK;
}

/* Mark the graph outputs, which pass 1, the inputs or the initializers
 * must have defined. */
static as_code add_graph_outputs(importer *im)
{
    for (size_t i = 0; i < im->gp->n_output; i++) {
        const char *name = str_or_empty(im->gp->output[i]->name);
        int32_t t = wl_find_tensor(im->g, name);
        if (t < 0)
            return as_fail(im->st, AS_EINVAL,
                           "%s: graph output '%s' is not produced by any node, graph input or "
                           "initializer",
                           im->g->source, name);
        if (!wl_add_graph_output(im->g, t))
            return out_of_memory(im);
    }
    return AS_OK;
}

/* ----------------------------------------------------------- attributes */

/* A plain list (axes, perm, split): its values and their count, after
 * checking that they fit wl_attrs' fixed-size array. */
static as_code store_list(importer *im, const char *where, const Onnx__AttributeProto *at,
                          const attr_rule *r, wl_attrs *a)
{
    if (at->n_ints > (size_t)r->capacity)
        return as_fail(im->st, AS_EINVAL,
                       "%s: attribute '%s' has %zu values; at most %d are supported", where,
                       r->name, at->n_ints, r->capacity);
    if (at->n_ints)
        memcpy(FIELD(a, r, int64_t), at->ints, at->n_ints * sizeof(int64_t));
    *(int *)((char *)a + r->count_offset) = (int)at->n_ints;
    return AS_OK;
}

/* A spatial list (kernel_shape, strides, pads, ...) has `per_dim` values
 * per spatial dimension; all of a node's spatial lists must agree. */
static as_code store_spatial(importer *im, const char *where, const Onnx__AttributeProto *at,
                             const attr_rule *r, wl_attrs *a)
{
    int per_dim = r->capacity;
    size_t n = at->n_ints;
    if (n % (size_t)per_dim != 0 || n / (size_t)per_dim > WL_MAX_SPATIAL)
        return as_fail(im->st, AS_EINVAL,
                       "%s: attribute '%s' has %zu values; expected %d per spatial dimension, "
                       "at most %d dimensions",
                       where, r->name, n, per_dim, WL_MAX_SPATIAL);
    int dims = (int)(n / (size_t)per_dim);
    if (dims == 0)
        return AS_OK;
    if (a->n_spatial != 0 && a->n_spatial != dims)
        return as_fail(
            im->st, AS_EINVAL,
            "%s: attribute '%s' has %d spatial dimensions where another attribute has %d", where,
            r->name, dims, a->n_spatial);
    a->n_spatial = dims;
    memcpy(FIELD(a, r, int64_t), at->ints, n * sizeof(int64_t));
    return AS_OK;
}

/* ConstantOfShape's fill value: a one-element tensor.  Its type becomes
 * the declared type of the node's output, which inference keeps. */
static as_code store_value(importer *im, size_t node, const Onnx__AttributeProto *at, wl_attrs *a)
{
    char label[AS_MSG_BYTES / 4], what[AS_MSG_BYTES / 2];
    node_label(im, node, label, sizeof label);
    snprintf(what, sizeof what, "%s: attribute 'value'", label);
    const Onnx__TensorProto *tp = at->t;
    int code = tp && tp->has_data_type ? tp->data_type : 0;
    bool one_element = tp != NULL;
    for (size_t i = 0; one_element && i < tp->n_dims; i++)
        one_element = tp->dims[i] == 1;
    if (!one_element || !wl_dtype_valid(code) || code == WL_DTYPE_UNDEFINED ||
        code == WL_DTYPE_STRING)
        return as_fail(im->st, AS_EINVAL, "%s: %s must be a numeric tensor of one element",
                       im->g->source, what);
    wl_tensor value = {0};
    if (decode_values(im, tp, (wl_dtype)code, 1, &value, what) != AS_OK)
        return im->st->code;
    a->value = value.fvalues ? value.fvalues[0] : (double)value.ivalues[0];
    const Onnx__NodeProto *n = im->gp->node[node];
    int32_t y = n->n_output > 0 ? wl_find_tensor(im->g, str_or_empty(n->output[0])) : -1;
    if (y >= 0) {
        im->g->tensors[y].dtype = (wl_dtype)code;
        im->g->tensors[y].bits = wl_dtype_bits((wl_dtype)code);
    }
    return AS_OK;
}

/* Store attribute `at` of a node into a according to rule r (type already
 * checked). */
static as_code store_attr(importer *im, size_t node, const char *where,
                          const Onnx__AttributeProto *at, const attr_rule *r, wl_attrs *a)
{
    switch (r->slot) {
    case SLOT_I64:
        *FIELD(a, r, int64_t) = at->i;
        return AS_OK;
    case SLOT_F32:
        *FIELD(a, r, float) = at->f;
        return AS_OK;
    case SLOT_FLAG:
        if (at->i < INT_MIN || at->i > INT_MAX)
            return as_fail(im->st, AS_EINVAL, "%s: attribute '%s' value %lld is out of range",
                           where, r->name, (long long)at->i);
        *FIELD(a, r, int) = (int)at->i;
        return AS_OK;
    case SLOT_SPATIAL:
        return store_spatial(im, where, at, r, a);
    case SLOT_LIST:
        return store_list(im, where, at, r, a);
    case SLOT_DTYPE:
        if (at->i <= 0 || at->i > INT_MAX || !wl_dtype_valid((int)at->i) ||
            at->i == WL_DTYPE_STRING)
            return as_fail(im->st, AS_EINVAL, "%s: attribute '%s' names unsupported data type %lld",
                           where, r->name, (long long)at->i);
        *FIELD(a, r, wl_dtype) = (wl_dtype)at->i;
        return AS_OK;
    case SLOT_AUTO_PAD:
        for (int p = 0; p < (int)(sizeof wl_onnx_auto_pad_names / sizeof wl_onnx_auto_pad_names[0]);
             p++) {
            if (attr_string_is(at, wl_onnx_auto_pad_names[p])) {
                *FIELD(a, r, wl_auto_pad) = (wl_auto_pad)p;
                return AS_OK;
            }
        }
        break;
    case SLOT_CRD:
        if (attr_string_is(at, "CRD") || attr_string_is(at, "DCR")) {
            *FIELD(a, r, int) = attr_string_is(at, "CRD");
            return AS_OK;
        }
        break;
    case SLOT_MODE: {
        char *text = FIELD(a, r, char); /* mode or equation */
        size_t capacity = text == a->mode ? sizeof a->mode : sizeof a->equation;
        if (at->s.len == 0) { /* protobuf-c leaves data NULL */
            text[0] = '\0';
            return AS_OK;
        }
        if (at->s.len < capacity && !memchr(at->s.data, 0, at->s.len)) {
            memcpy(text, at->s.data, at->s.len);
            text[at->s.len] = '\0';
            return AS_OK;
        }
        break;
    }
    case SLOT_VALUE:
        return store_value(im, node, at, a);
    }
    return as_fail(im->st, AS_EINVAL, "%s: attribute '%s' has unsupported value '%.*s'", where,
                   r->name, (int)(at->s.len < 64 ? at->s.len : 64),
                   at->s.len ? (const char *)at->s.data : "");
}

/* The wl_attrs of node i: ONNX's defaults for the kind, then each known
 * attribute, type-checked. */
static as_code node_attrs(importer *im, size_t i, wl_op_kind kind, wl_attrs *a)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    wl_attrs_default(a, kind);
    /* An axis default that changed with the opset (Softmax's at 13). */
    const wl_op_def *def = wl_op_def_of(kind);
    if (im->g->opset < def->axis_changed_at)
        a->axis = def->axis_before;
    /* A Constant's value is its output tensor; an unknown op's attributes
     * mean nothing here. */
    if (kind == WL_OP_CONSTANT || kind == WL_OP_UNKNOWN)
        return AS_OK;
    char where[AS_MSG_BYTES / 2];
    node_where(im, i, where, sizeof where);
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *at = n->attribute[k];
        const attr_rule *r = find_rule(str_or_empty(at->name), kind);
        if (!r)
            continue;
        attr_type t = attr_type_of(at);
        if (t != r->type)
            return as_fail(im->st, AS_EINVAL, "%s: attribute '%s' has type %s, expected %s", where,
                           r->name, attr_type_name(t), attr_type_name(r->type));
        if (store_attr(im, i, where, at, r, a) != AS_OK)
            return im->st->code;
    }
    return AS_OK;
}

/* --------------------------------------------------------------- pass 2 */

/*
 * Resolve the input and output names of node i to tensor indices: "" is
 * an omitted optional input (-1) or output (dropped).  Every other name
 * must have been defined by pass 1, a graph input or an initializer.
 */
static as_code resolve_node_tensors(importer *im, size_t i, int32_t *in, int *n_in, int32_t *out,
                                    int *n_out)
{
    const Onnx__NodeProto *n = im->gp->node[i];
    char where[AS_MSG_BYTES / 2];
    *n_in = *n_out = 0;
    for (size_t k = 0; k < n->n_input; k++) {
        const char *name = str_or_empty(n->input[k]);
        int32_t t = *name ? wl_find_tensor(im->g, name) : -1;
        if (*name && t < 0)
            return as_fail(im->st, AS_EINVAL,
                           "%s: input '%s' is not produced by any node, graph input or initializer",
                           node_where(im, i, where, sizeof where), name);
        in[(*n_in)++] = t;
    }
    for (size_t k = 0; k < n->n_output; k++) {
        const char *name = str_or_empty(n->output[k]);
        if (*name)
            out[(*n_out)++] = wl_find_tensor(im->g, name);
    }
    if (*n_out == 0)
        return as_fail(im->st, AS_EINVAL, "%s: the node has no outputs",
                       node_where(im, i, where, sizeof where));
    return AS_OK;
}

/* Add one op per node, in file order. */
static as_code add_ops(importer *im)
{
    /* One scratch array sized for the widest node serves every node. */
    size_t widest = 1;
    for (size_t i = 0; i < im->gp->n_node; i++) {
        const Onnx__NodeProto *n = im->gp->node[i];
        if (n->n_input > INT_MAX / 2 || n->n_output > INT_MAX / 2)
            return as_fail(im->st, AS_EINVAL, "%s: node %zu has too many inputs or outputs",
                           im->g->source, i);
        widest = n->n_input > widest ? n->n_input : widest;
        widest = n->n_output > widest ? n->n_output : widest;
    }
    int32_t *in = malloc(widest * sizeof *in), *out = malloc(widest * sizeof *out);
    as_code rc = in && out ? AS_OK : out_of_memory(im);
    for (size_t i = 0; i < im->gp->n_node && rc == AS_OK; i++) {
        const Onnx__NodeProto *n = im->gp->node[i];
        wl_attrs a;
        int n_in, n_out;
        char name[64];
        rc = node_attrs(im, i, im->kinds[i], &a);
        if (rc == AS_OK)
            rc = resolve_node_tensors(im, i, in, &n_in, out, &n_out);
        if (rc == AS_OK &&
            wl_add_op(im->g, im->kinds[i], node_name(n, i, name, sizeof name),
                      str_or_empty(n->op_type), n_in, in, n_out, out, &a, im->st) < 0)
            rc = im->st->code;
    }
    free(in);
    free(out);
    return rc;
}

/* --------------------------------------------------------- model fields */

/* The default-domain opset the model imports, or -1 when it has none. */
static int64_t default_opset(const Onnx__ModelProto *m)
{
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (is_default_domain(str_or_empty(o->domain)))
            return o->has_version ? o->version : -1;
    }
    return -1;
}

/* True when the n characters of s end in ".onnx". */
static bool has_onnx_suffix(const char *s, size_t n)
{
    return n >= 5 && memcmp(s + n - 5, ".onnx", 5) == 0;
}

/* Graph names exporters write whatever the model ("torch_jit" for every
 * torch.onnx.export): they name no model, the file name does better. */
static bool is_generic_graph_name(const char *name)
{
    static const char *const generic[] = {"torch_jit", "torch-jit-export", "main_graph"};
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        if (strcmp(name, generic[i]) == 0)
            return true;
    return false;
}

/* The model's name: the graph's, else the file's base name without
 * ".onnx". */
static const char *model_name(wl_graph *g, const Onnx__GraphProto *gp, const char *display)
{
    if (gp->name && *gp->name && !is_generic_graph_name(gp->name))
        return as_arena_strdup(&g->arena, gp->name);
    const char *base = strrchr(display, '/');
    base = base ? base + 1 : display;
    size_t n = strlen(base);
    if (n > 5 && has_onnx_suffix(base, n)) /* a file named ".onnx" keeps its name */
        n -= 5;
    return as_arena_printf(&g->arena, "%.*s", (int)(n < 256 ? n : 256), base);
}

/* ---------------------------------------------------- nesting guard */

/*
 * protobuf-c decodes nested messages recursively, with no depth limit: a
 * small file of attributes nested in graphs nested in attributes ...
 * would exhaust the stack.  So the wire format is walked first, following
 * only the fields the schema declares as messages, and nesting deeper
 * than any real model needs is refused.  The walk costs O(size * depth).
 */
#define MAX_MESSAGE_DEPTH 64

/* Read a base-128 varint at *p; false when it runs past end or 64 bits. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t byte = *(*p)++;
        *v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return true;
    }
    return false;
}

/* False when the message of type desc in [p, end) nests more than
 * depth_left levels of messages.  Malformed bytes end the walk with true:
 * the decoder rejects them itself. */
static bool nesting_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *p, const uint8_t *end,
                       int depth_left)
{
    if (depth_left < 0)
        return false;
    while (p < end) {
        uint64_t key, n;
        if (!read_varint(&p, end, &key))
            return true;
        switch (key & 7) {
        case 0: /* varint */
            if (!read_varint(&p, end, &n))
                return true;
            break;
        case 1: /* 64-bit */
        case 5: /* 32-bit */
            n = (key & 7) == 1 ? 8 : 4;
            if ((uint64_t)(end - p) < n)
                return true;
            p += n;
            break;
        case 2: { /* length-delimited: bytes, strings, packed arrays, messages */
            if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
                return true;
            const ProtobufCFieldDescriptor *f =
                key >> 3 <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                !nesting_ok(f->descriptor, p, p + n, depth_left - 1))
                return false;
            p += n;
            break;
        }
        default: /* groups and invalid wire types */
            return true;
        }
    }
    return true;
}

/* ------------------------------------------------------------ top level */

/* Build g from the decoded model: the import steps in order. */
static as_code import_graph(importer *im)
{
    im->kinds = malloc((im->gp->n_node ? im->gp->n_node : 1) * sizeof *im->kinds);
    if (!im->kinds)
        return out_of_memory(im);
    as_code rc = check_dim_bindings(im);
    if (rc == AS_OK)
        rc = add_initializers(im);
    if (rc == AS_OK)
        rc = add_graph_inputs(im);
    if (rc == AS_OK)
        rc = index_declared_shapes(im);
    if (rc == AS_OK)
        rc = add_node_outputs(im);
    if (rc == AS_OK)
        rc = add_graph_outputs(im);
    if (rc == AS_OK)
        rc = add_ops(im);
    if (rc == AS_OK)
        rc = wl_graph_infer(im->g, im->st);
    return rc;
}

/* Check the model-level fields and set up the graph that import_graph
 * fills.  On failure returns NULL with st set. */
static wl_graph *new_model_graph(const Onnx__ModelProto *m, const char *display, as_status *st)
{
    if (!m->graph) {
        as_fail(st, AS_EINVAL, "%s: the model has no graph", display);
        return NULL;
    }
    int64_t opset = default_opset(m);
    if (opset < 0) {
        as_fail(st, AS_EINVAL, "%s: the model imports no opset of the default ONNX domain",
                display);
        return NULL;
    }
    if (opset < ONNX_MIN_OPSET) {
        as_fail(st, AS_EINVAL,
                "%s: opset %lld is not supported (opsets %d to %d are); "
                "convert the model with onnx.version_converter",
                display, (long long)opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
        return NULL;
    }
    wl_graph *g = wl_graph_new(NULL, display);
    const char *name = g ? model_name(g, m->graph, display) : NULL;
    if (!name) {
        wl_graph_free(g);
        as_fail(st, AS_ENOMEM, "%s: out of memory", display);
        return NULL;
    }
    g->name = name;
    g->opset = opset;
    if (opset > ONNX_MAX_OPSET)
        wl_warn(g, "%s: opset %lld is newer than the supported %d..%d; ops read as in opset %d",
                display, (long long)opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET, ONNX_MAX_OPSET);
    return g;
}

/* The nesting guard, protobuf-c's decoder, then the graph; the decoded
 * model is freed whatever the outcome. */
as_code wl_onnx_load_buffer(const uint8_t *data, size_t size, const char *display_name,
                            const wl_onnx_options *opt, wl_graph **out, as_status *st)
{
    static const wl_onnx_options defaults = {0};
    const char *display = display_name ? display_name : "<buffer>";
    *out = NULL;
    if (size > 0 &&
        !nesting_ok(&onnx__model_proto__descriptor, data, data + size, MAX_MESSAGE_DEPTH))
        return as_fail(st, AS_EINVAL, "%s: not an ONNX model: messages nested more than %d deep",
                       display, MAX_MESSAGE_DEPTH);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m)
        return as_fail(st, AS_EINVAL, "%s: not an ONNX model: protobuf decoding failed", display);
    wl_graph *g = new_model_graph(m, display, st);
    as_code rc = g ? AS_OK : st->code;
    if (rc == AS_OK) {
        importer im = {.g = g, .gp = m->graph, .opt = opt ? opt : &defaults, .st = st};
        as_strmap_init(&im.declared);
        rc = import_graph(&im);
        free(im.kinds);
        as_strmap_free(&im.declared);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    if (rc != AS_OK) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return AS_OK;
}

/* Read the whole file, then load it as a buffer named by its path. */
as_code wl_onnx_load(const char *path, const wl_onnx_options *opt, wl_graph **out, as_status *st)
{
    *out = NULL;
    size_t size;
    uint8_t *data = as_read_file(path, &size, st);
    if (!data)
        return st->code;
    as_code rc = wl_onnx_load_buffer(data, size, path, opt, out, st);
    free(data);
    return rc;
}

/* ------------------------------------------------------------- wl_model_load */

/* True when path names an existing regular file. */
static bool is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A SCALE-Sim topology when the name says ".csv", a file when it says
 * ".onnx" or names a file, else a zoo model. */
as_code wl_model_load(const char *model, const wl_onnx_options *opt, wl_graph **out, as_status *st)
{
    *out = NULL;
    size_t n = strlen(model);
    if (wl_is_topology_path(model))
        return wl_topology_load(model, out, st);
    if (has_onnx_suffix(model, n) || is_regular_file(model))
        return wl_onnx_load(model, opt, out, st);
    if (wl_zoo_find(model))
        return wl_zoo_build(model, out, st);
    return as_fail(
        st, AS_EINVAL,
        "unknown model '%s': not a zoo name (see `accelsearch zoo list`) and no such file", model);
}
