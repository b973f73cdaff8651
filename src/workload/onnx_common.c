/*
 * onnx_common.c -- the attribute table and element codecs the ONNX
 * importer and exporter share (see onnx_private.h).
 */
#include "onnx_private.h"

#include <math.h>
#include <string.h>

/* Every attribute the ops of WL_OP_LIST read.  Attributes ONNX later turned
 * into inputs (Split's split, Squeeze's axes, Clip's min/max) are listed
 * for the opsets that still have them; inference reads the inputs. */
const attr_rule wl_onnx_attr_rules[] = {
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
    {"equation", A_STRING, SLOT_MODE, AT(equation), 0, 0, FOR_ONLY, WL_OP_EINSUM},
    {"ratio", A_FLOAT, SLOT_F32, AT(ratio), 0, 0, FOR_ALL, 0},
    {"gamma", A_FLOAT, SLOT_F32, AT(gamma), 0, 0, FOR_ONLY, WL_OP_SELU},
    {"fmod", A_INT, SLOT_FLAG, AT(fmod), 0, 0, FOR_ONLY, WL_OP_MOD},
    {"upper", A_INT, SLOT_FLAG, AT(upper), 0, 0, FOR_ONLY, WL_OP_TRILU},
    {"k", A_INT, SLOT_I64, AT(k), 0, 0, FOR_ONLY, WL_OP_TOP_K},
    {"num_groups", A_INT, SLOT_I64, AT(num_groups), 0, 0, FOR_ONLY, WL_OP_GROUP_NORM},
    {"batch_dims", A_INT, SLOT_I64, AT(batch_dims), 0, 0, FOR_ONLY, WL_OP_GATHER_ND},
    {"size", A_INT, SLOT_I64, AT(lrn_size), 0, 0, FOR_ONLY, WL_OP_LRN},
};
const int WL_ONNX_N_ATTR_RULES = (int)(sizeof wl_onnx_attr_rules / sizeof wl_onnx_attr_rules[0]);

/* True when rule r applies to ops of `kind` (see attr_scope). */
bool wl_onnx_rule_serves(const attr_rule *r, wl_op_kind kind)
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

/* auto_pad's ONNX spellings, indexed by wl_auto_pad. */
const char *const wl_onnx_auto_pad_names[WL_AUTO_PAD_VALID + 1] = {
    [WL_AUTO_PAD_NOTSET] = "NOTSET",
    [WL_AUTO_PAD_SAME_UPPER] = "SAME_UPPER",
    [WL_AUTO_PAD_SAME_LOWER] = "SAME_LOWER",
    [WL_AUTO_PAD_VALID] = "VALID",
};

/* Number of values a list-valued rule holds in a. */
int wl_onnx_rule_count(const attr_rule *r, const wl_attrs *a)
{
    if (r->slot == SLOT_SPATIAL)
        return a->n_spatial * r->capacity;
    if (r->slot == SLOT_LIST)
        return *(const int *)((const char *)a + r->count_offset);
    return 0;
}

/* Bytes of one element in raw_data; 0 for UNDEFINED and STRING, which
 * have no raw form (the importer refuses them, the exporter skips them). */
size_t wl_onnx_elem_bytes(wl_dtype t)
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

uint32_t wl_onnx_float_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* bfloat16 is the upper half of a float32; rounding to nearest even. */
static uint16_t bf16_from_double(double v)
{
    uint32_t bits = wl_onnx_float_bits((float)v);
    if (isnan(v))
        return (uint16_t)((bits >> 16) | 0x40);
    return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

/* The value of one element of type t from its little-endian bit pattern:
 * integers (and bool) into *iv, floats into *fv. */
void wl_onnx_element_from_bits(wl_dtype t, uint64_t bits, int64_t *iv, double *fv)
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

/* The inverse of wl_onnx_element_from_bits. */
uint64_t wl_onnx_element_to_bits(wl_dtype t, int64_t iv, double fv)
{
    uint64_t bits;
    switch (t) {
    case WL_DTYPE_F32:
        return wl_onnx_float_bits((float)fv);
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
