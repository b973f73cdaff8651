/*
 * onnx.c -- reading and writing ONNX models (see workload.h).
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
 *                     checked and copied into wl_attrs (attr_rules)
 *   wl_graph_infer -> order, shapes, folding, operand checks
 *
 * Creating every node output before adding any op means that a file whose
 * nodes are out of order (or cyclic) still resolves; wl_graph_index then
 * sorts it or names the cycle.  The unpacked protobuf is freed before
 * returning: the graph keeps only arena copies.
 *
 * Export builds a ModelProto from the graph in a scratch arena and packs
 * it: the source's opset, weights without data ("weight-stripped"),
 * constants with their values, value_info for every tensor whose shape is
 * known.  Attributes go out through the same attr_rules table they came
 * in by.
 */
#include "workload.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ONNX_MIN_OPSET 11
#define ONNX_MAX_OPSET 17
/* Exports declare the opset of their source, whose attribute forms they
 * copy (Split sizes, Squeeze axes, ... moved to inputs at 13; Softmax's
 * axis changed meaning); LayerNormalization exists from 17 on, so a graph
 * using it says 17. */
#define LAYERNORM_OPSET 17
#define EXPORT_IR_VERSION 8

typedef Onnx__AttributeProto__AttributeType attr_type;
#define A_FLOAT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
#define A_INT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
#define A_STRING ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
#define A_TENSOR ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
#define A_FLOATS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
#define A_INTS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS

/* ======================================================= attribute table */

/* How an ONNX attribute is stored in wl_attrs. */
typedef enum attr_slot {
    SLOT_I64,      /* INT into an int64_t field */
    SLOT_FLAG,     /* INT into an int field (0/1 switches) */
    SLOT_F32,      /* FLOAT into a float field */
    SLOT_SPATIAL,  /* INTS, `per_dim` values per spatial dimension; sets n_spatial */
    SLOT_LIST,     /* INTS into an int64_t array with an int count field */
    SLOT_AUTO_PAD, /* STRING into wl_auto_pad */
    SLOT_DTYPE,    /* INT naming a TensorProto data type */
    SLOT_MODE,     /* STRING into char mode[] */
    SLOT_CRD,      /* STRING "CRD" / "DCR" into int mode_crd */
    SLOT_VALUE,    /* TENSOR of one element into double value (its type: the output's) */
} attr_slot;

/* Which op kinds a rule serves: all, only `op`, or all but `op`.  Two
 * rules may share an ONNX name (Clip's "min" is other ops' "alpha"). */
typedef enum attr_scope { FOR_ALL, FOR_ONLY, FOR_ALL_BUT } attr_scope;

typedef struct attr_rule {
    const char *name;
    attr_type type;
    attr_slot slot;
    size_t offset;       /* of the field in wl_attrs */
    size_t count_offset; /* SLOT_LIST: of its int count */
    int capacity;        /* SLOT_LIST: elements; SLOT_SPATIAL: values per dimension */
    attr_scope scope;
    wl_op_kind op;
} attr_rule;

#define AT(f) offsetof(wl_attrs, f)
#define LIST(f, n) AT(f), AT(n), (int)(sizeof((wl_attrs *)0)->f / sizeof(int64_t))

/* Every attribute the ops of WL_OP_LIST read.  Attributes ONNX later turned
 * into inputs (Split's split, Squeeze's axes, Clip's min/max) are listed
 * for the opsets that still have them; inference reads the inputs. */
static const attr_rule attr_rules[] = {
    {"kernel_shape", A_INTS, SLOT_SPATIAL, AT(kernel_shape), 0, 1, FOR_ALL, 0},
    {"strides", A_INTS, SLOT_SPATIAL, AT(strides), 0, 1, FOR_ALL, 0},
    {"dilations", A_INTS, SLOT_SPATIAL, AT(dilations), 0, 1, FOR_ALL, 0},
    {"pads", A_INTS, SLOT_SPATIAL, AT(pads), 0, 2, FOR_ALL, 0},
    {"output_padding", A_INTS, SLOT_SPATIAL, AT(output_padding), 0, 1, FOR_ALL, 0},
    {"output_shape", A_INTS, SLOT_SPATIAL, AT(output_shape), 0, 1, FOR_ALL, 0},
    {"auto_pad", A_STRING, SLOT_AUTO_PAD, AT(auto_pad), 0, 0, FOR_ALL, 0},
    {"group", A_INT, SLOT_I64, AT(group), 0, 0, FOR_ALL, 0},
    {"ceil_mode", A_INT, SLOT_FLAG, AT(ceil_mode), 0, 0, FOR_ALL, 0},
    {"count_include_pad", A_INT, SLOT_FLAG, AT(count_include_pad), 0, 0, FOR_ALL, 0},
    {"axis", A_INT, SLOT_I64, AT(axis), 0, 0, FOR_ALL, 0},
    {"axes", A_INTS, SLOT_LIST, LIST(axes, n_axes), FOR_ALL, 0},
    {"keepdims", A_INT, SLOT_FLAG, AT(keepdims), 0, 0, FOR_ALL, 0},
    {"noop_with_empty_axes", A_INT, SLOT_FLAG, AT(noop_with_empty_axes), 0, 0, FOR_ALL, 0},
    {"perm", A_INTS, SLOT_LIST, LIST(perm, n_perm), FOR_ALL, 0},
    {"split", A_INTS, SLOT_LIST, LIST(split, n_split), FOR_ALL, 0},
    {"transA", A_INT, SLOT_FLAG, AT(trans_a), 0, 0, FOR_ALL, 0},
    {"transB", A_INT, SLOT_FLAG, AT(trans_b), 0, 0, FOR_ALL, 0},
    {"alpha", A_FLOAT, SLOT_F32, AT(alpha), 0, 0, FOR_ALL_BUT, WL_OP_CLIP},
    {"beta", A_FLOAT, SLOT_F32, AT(beta), 0, 0, FOR_ALL_BUT, WL_OP_CLIP},
    {"min", A_FLOAT, SLOT_F32, AT(alpha), 0, 0, FOR_ONLY, WL_OP_CLIP},
    {"max", A_FLOAT, SLOT_F32, AT(beta), 0, 0, FOR_ONLY, WL_OP_CLIP},
    {"epsilon", A_FLOAT, SLOT_F32, AT(epsilon), 0, 0, FOR_ALL, 0},
    {"to", A_INT, SLOT_DTYPE, AT(to), 0, 0, FOR_ONLY, WL_OP_CAST},
    {"value", A_TENSOR, SLOT_VALUE, AT(value), 0, 0, FOR_ONLY, WL_OP_CONSTANT_OF_SHAPE},
    {"blocksize", A_INT, SLOT_I64, AT(blocksize), 0, 0, FOR_ALL, 0},
    {"mode", A_STRING, SLOT_CRD, AT(mode_crd), 0, 0, FOR_ONLY, WL_OP_DEPTH_TO_SPACE},
    {"mode", A_STRING, SLOT_MODE, AT(mode), 0, 0, FOR_ALL_BUT, WL_OP_DEPTH_TO_SPACE},
    {"ratio", A_FLOAT, SLOT_F32, AT(ratio), 0, 0, FOR_ALL, 0},
};
enum { N_ATTR_RULES = sizeof attr_rules / sizeof attr_rules[0] };

/* The field a rule stores into, as a pointer of the given type. */
#define FIELD(attrs, rule, type) ((type *)((char *)(attrs) + (rule)->offset))
#define CFIELD(attrs, rule, type) ((const type *)((const char *)(attrs) + (rule)->offset))

/* True when rule r applies to ops of `kind` (see attr_scope). */
static bool rule_serves(const attr_rule *r, wl_op_kind kind)
{
    switch (r->scope) {
    case FOR_ONLY:
        return kind == r->op;
    case FOR_ALL_BUT:
        return kind != r->op;
    case FOR_ALL:
        break;
    }
    return true;
}

/* The rule for attribute `name` of an op of `kind`, or NULL: unknown
 * attributes are ignored (exporters add hints accelsearch does not need). */
static const attr_rule *find_rule(const char *name, wl_op_kind kind)
{
    for (int i = 0; i < N_ATTR_RULES; i++)
        if (strcmp(attr_rules[i].name, name) == 0 && rule_serves(&attr_rules[i], kind))
            return &attr_rules[i];
    return NULL;
}

/* auto_pad's ONNX spellings, indexed by wl_auto_pad. */
static const char *const auto_pad_names[] = {
    [WL_AUTO_PAD_NOTSET] = "NOTSET",
    [WL_AUTO_PAD_SAME_UPPER] = "SAME_UPPER",
    [WL_AUTO_PAD_SAME_LOWER] = "SAME_LOWER",
    [WL_AUTO_PAD_VALID] = "VALID",
};

/* Number of values a list-valued rule holds in a. */
static int rule_count(const attr_rule *r, const wl_attrs *a)
{
    if (r->slot == SLOT_SPATIAL)
        return a->n_spatial * r->capacity;
    if (r->slot == SLOT_LIST)
        return *(const int *)((const char *)a + r->count_offset);
    return 0;
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

/* Bytes of one element in raw_data; 0 for UNDEFINED and STRING, which
 * have no raw form (the importer refuses them, the exporter skips them). */
static size_t raw_elem_bytes(wl_dtype t)
{
    return (size_t)(wl_dtype_bits(t) + 7) / 8;
}

/* IEEE half precision to double (exact). */
static double half_to_double(uint16_t h)
{
    int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v;
    if (exponent == 0)
        v = ldexp(mantissa, -24);
    else if (exponent == 0x1f)
        v = mantissa ? NAN : INFINITY;
    else
        v = ldexp(mantissa + 1024, exponent - 25);
    return (h & 0x8000) ? -v : v;
}

/* Double to IEEE half, rounding to nearest even; overflow gives infinity. */
static uint16_t half_from_double(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    v = fabs(v);
    if (isnan(v))
        return sign | 0x7e00;
    if (v >= 65520.0) /* rounds past the largest half, 65504 */
        return sign | 0x7c00;
    int e;
    frexp(v, &e); /* v = f * 2^e, f in [0.5, 1) */
    /* Subnormal: a multiple of 2^-24 (may round up to the smallest normal). */
    if (v == 0 || e < -13)
        return sign | (uint16_t)nearbyint(ldexp(v, 24));
    /* Normal: 11 significant bits; a mantissa that rounds up to 2048
     * carries into the exponent, which is the right encoding. */
    uint32_t m = (uint32_t)nearbyint(ldexp(v, 11 - e));
    return sign | (uint16_t)(((uint32_t)(e + 14) << 10) + m - 1024);
}

/* The float32 whose bit pattern is bits, and the reverse (memcpy: no
 * aliasing through pointer casts). */
static float float_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* bfloat16 is the upper half of a float32; rounding to nearest even. */
static uint16_t bf16_from_double(double v)
{
    uint32_t bits = float_bits((float)v);
    if (isnan(v))
        return (uint16_t)((bits >> 16) | 0x40);
    return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

/* The value of one element of type t from its little-endian bit pattern:
 * integers (and bool) into *iv, floats into *fv. */
static void element_from_bits(wl_dtype t, uint64_t bits, int64_t *iv, double *fv)
{
    switch (t) {
    case WL_DTYPE_F32:
        *fv = float_from_bits((uint32_t)bits);
        break;
    case WL_DTYPE_F64:
        memcpy(fv, &bits, sizeof *fv);
        break;
    case WL_DTYPE_F16:
        *fv = half_to_double((uint16_t)bits);
        break;
    case WL_DTYPE_BF16:
        *fv = float_from_bits((uint32_t)(uint16_t)bits << 16);
        break;
    case WL_DTYPE_I8:
        *iv = (int8_t)bits;
        break;
    case WL_DTYPE_I16:
        *iv = (int16_t)bits;
        break;
    case WL_DTYPE_I32:
        *iv = (int32_t)bits;
        break;
    case WL_DTYPE_U8:
        *iv = (uint8_t)bits;
        break;
    case WL_DTYPE_U16:
        *iv = (uint16_t)bits;
        break;
    case WL_DTYPE_U32:
        *iv = (uint32_t)bits;
        break;
    case WL_DTYPE_BOOL:
        *iv = bits != 0;
        break;
    default:
        *iv = (int64_t)bits;
        break; /* int64; uint64 above 2^63 wraps */
    }
}

/* The inverse of element_from_bits. */
static uint64_t element_to_bits(wl_dtype t, int64_t iv, double fv)
{
    uint64_t bits;
    switch (t) {
    case WL_DTYPE_F32:
        return float_bits((float)fv);
    case WL_DTYPE_F64:
        memcpy(&bits, &fv, sizeof bits);
        return bits;
    case WL_DTYPE_F16:
        return half_from_double(fv);
    case WL_DTYPE_BF16:
        return bf16_from_double(fv);
    case WL_DTYPE_BOOL:
        return iv != 0;
    default:
        return (uint64_t)iv; /* truncated to the element size by the writer */
    }
}

/* Bit pattern of element i of tp in the typed field f. */
static uint64_t typed_bits(const Onnx__TensorProto *tp, typed_field f, size_t i)
{
    switch (f) {
    case TF_FLOAT:
        return float_bits(tp->float_data[i]);
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
    size_t elem_bytes = raw_elem_bytes(t), have;
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
        element_from_bits(t, bits, iv ? &iv[i] : &ignore_i, fv ? &fv[i] : &ignore_f);
    }
    out->ivalues = iv;
    out->fvalues = fv;
    return AS_OK;
}

/*
 * Add the tensor an initializer or a Constant node's value defines, with
 * its type and dims, and its values when it carries them.  Float
 * initializers are weights; everything else is a constant.  A tensor with
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
        initializer && wl_dtype_is_float(t) ? WL_TENSOR_WEIGHT : WL_TENSOR_CONSTANT;
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
 * The element type and shape a ValueInfoProto declares.  A symbolic or
 * missing dimension becomes opt->batch (dim 0, when set) or 1, with a
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
        for (int p = 0; p < (int)(sizeof auto_pad_names / sizeof auto_pad_names[0]); p++) {
            if (attr_string_is(at, auto_pad_names[p])) {
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
    case SLOT_MODE:
        if (at->s.len == 0) { /* protobuf-c leaves data NULL */
            a->mode[0] = '\0';
            return AS_OK;
        }
        if (at->s.len < sizeof a->mode && !memchr(at->s.data, 0, at->s.len)) {
            memcpy(a->mode, at->s.data, at->s.len);
            a->mode[at->s.len] = '\0';
            return AS_OK;
        }
        break;
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
    /* Softmax took axis = 1 (on the input flattened to 2-D) before opset 13. */
    if (kind == WL_OP_SOFTMAX && im->g->opset < 13)
        a->axis = 1;
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
    as_code rc = add_initializers(im);
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

/* ============================================================= exporter */

/* Weights are written without data, except ones so small that they are
 * operands of shape arithmetic (Resize scales, Clip bounds) rather than
 * trained parameters: inference needs their values to reload the file. */
#define EXPORT_SMALL_WEIGHT_ELEMS 8

/* Attributes written even when they equal ONNX's defaults, so that a
 * reader sees every window op's geometry spelled out (as exporters do). */
static const struct {
    wl_op_kind kind;
    const char *names; /* space-separated */
} always_written[] = {
    {WL_OP_CONV, " kernel_shape strides pads dilations group "},
    {WL_OP_CONV_TRANSPOSE, " kernel_shape strides pads dilations group "},
    {WL_OP_MAX_POOL, " kernel_shape strides pads "},
    {WL_OP_AVERAGE_POOL, " kernel_shape strides pads "},
    {WL_OP_CONSTANT_OF_SHAPE, " value "}, /* carries the output's type */
};

/* True when attribute `name` of ops of `kind` is in always_written. */
static bool is_always_written(wl_op_kind kind, const char *name)
{
    char word[32];
    snprintf(word, sizeof word, " %s ", name);
    for (size_t i = 0; i < sizeof always_written / sizeof always_written[0]; i++)
        if (always_written[i].kind == kind && strstr(always_written[i].names, word))
            return true;
    return false;
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
    int n = rule_count(r, a);
    switch (r->slot) {
    case SLOT_SPATIAL:
        return memcmp(CFIELD(a, r, int64_t), CFIELD(d, r, int64_t), (size_t)n * sizeof(int64_t));
    case SLOT_LIST:
        return n > 0;
    case SLOT_MODE:
        return strcmp(a->mode, d->mode) != 0;
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
    size_t elem_bytes = raw_elem_bytes(t->dtype), n = (size_t)wl_tensor_elements(t);
    ProtobufCBinaryData raw = {n * elem_bytes, ex_array(ex, n * elem_bytes, 1)};
    bool is_float = wl_dtype_is_float(t->dtype);
    for (size_t i = 0; raw.data && i < n; i++) {
        uint64_t bits =
            element_to_bits(t->dtype, is_float ? 0 : t->ivalues[i], is_float ? t->fvalues[i] : 0.0);
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
    if (!known || n < 0 || raw_elem_bytes(t->dtype) == 0)
        return false;
    return t->kind != WL_TENSOR_WEIGHT || n <= EXPORT_SMALL_WEIGHT_ELEMS;
}

/* t as a TensorProto: name, type, dims, and data when export_values. */
static Onnx__TensorProto *tensor_proto(exporter *ex, const wl_tensor *t)
{
    Onnx__TensorProto *tp = EX_NEW(ex, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
    if (!tp)
        return NULL;
    tp->name = (char *)t->name;
    tp->has_data_type = true;
    tp->data_type = t->dtype;
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
        at->n_ints = (size_t)rule_count(r, a);
        at->ints = ex_copy(ex, CFIELD(a, r, int64_t), at->n_ints * sizeof(int64_t));
        break;
    case SLOT_AUTO_PAD:
        s = (unsigned)a->auto_pad <= WL_AUTO_PAD_VALID ? auto_pad_names[a->auto_pad] : "NOTSET";
        break;
    case SLOT_CRD:
        s = a->mode_crd ? "CRD" : "DCR";
        break;
    case SLOT_MODE:
        s = a->mode;
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
    bool conv = op->kind == WL_OP_CONV || op->kind == WL_OP_CONV_TRANSPOSE;
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
    np->attribute = ex_array(ex, N_ATTR_RULES, sizeof *np->attribute);
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
    for (int i = 0; i < N_ATTR_RULES; i++) {
        const attr_rule *r = &attr_rules[i];
        if (!rule_serves(r, op->kind))
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

/* The opset an export declares (see LAYERNORM_OPSET). */
static int64_t export_opset(const wl_graph *g)
{
    int64_t opset = g->opset < ONNX_MIN_OPSET   ? ONNX_MIN_OPSET
                    : g->opset > ONNX_MAX_OPSET ? ONNX_MAX_OPSET
                                                : g->opset;
    for (int32_t o = 0; o < g->n_ops && opset < LAYERNORM_OPSET; o++)
        if (!g->ops[o].dead && g->ops[o].kind == WL_OP_LAYERNORM)
            opset = LAYERNORM_OPSET;
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

/* Build the model in a scratch arena, pack it into one buffer, write it. */
as_code wl_onnx_save(const wl_graph *g, const char *path, as_status *st)
{
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

/* ------------------------------------------------------------- wl_model_load */

/* True when path names an existing regular file. */
static bool is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A file when the name says ".onnx" or names a file, else a zoo model. */
as_code wl_model_load(const char *model, const wl_onnx_options *opt, wl_graph **out, as_status *st)
{
    *out = NULL;
    size_t n = strlen(model);
    if (has_onnx_suffix(model, n) || is_regular_file(model))
        return wl_onnx_load(model, opt, out, st);
    if (wl_zoo_find(model))
        return wl_zoo_build(model, out, st);
    return as_fail(
        st, AS_EINVAL,
        "unknown model '%s': not a zoo name (see `accelsearch zoo list`) and no such file", model);
}
