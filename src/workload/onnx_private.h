/*
 * onnx_private.h -- what the ONNX importer (onnx_import.c) and exporter
 * (onnx_export.c) share; private to the workload module.
 *
 * One attribute table says how every ONNX attribute of WL_OP_LIST maps
 * onto a field of wl_attrs: the importer reads attributes through it and
 * the exporter writes them through it, so the two cannot drift apart.
 * The element codecs turn one tensor element into its little-endian bit
 * pattern and back, for every element type the library understands.
 */
#ifndef WL_ONNX_PRIVATE_H
#define WL_ONNX_PRIVATE_H

#include "workload.h"

#include "onnx.pb-c.h"

#include <stddef.h>

/* The default-domain opsets the importer reads and the exporter writes. */
#define ONNX_MIN_OPSET 11
#define ONNX_MAX_OPSET 17

typedef Onnx__AttributeProto__AttributeType attr_type;
#define A_FLOAT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
#define A_INT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
#define A_STRING ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
#define A_TENSOR ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
#define A_FLOATS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
#define A_INTS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS

/* ------------------------------------------------------ attribute table */

/* How an ONNX attribute is stored in wl_attrs. */
typedef enum attr_slot {
    SLOT_I64,      /* INT into an int64_t field */
    SLOT_FLAG,     /* INT into an int field (0/1 switches) */
    SLOT_F32,      /* FLOAT into a float field */
    SLOT_SPATIAL,  /* INTS, `per_dim` values per spatial dimension; sets n_spatial */
    SLOT_LIST,     /* INTS into an int64_t array with an int count field */
    SLOT_AUTO_PAD, /* STRING into wl_auto_pad */
    SLOT_DTYPE,    /* INT naming a TensorProto data type */
    SLOT_MODE,     /* STRING into char mode[] or equation[] */
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

/* Every attribute the ops of WL_OP_LIST read (onnx_common.c). */
extern const attr_rule wl_onnx_attr_rules[];
extern const int WL_ONNX_N_ATTR_RULES;

/* The field a rule stores into, as a pointer of the given type. */
#define FIELD(attrs, rule, type) ((type *)((char *)(attrs) + (rule)->offset))
#define CFIELD(attrs, rule, type) ((const type *)((const char *)(attrs) + (rule)->offset))

/* True when rule r applies to ops of `kind` (see attr_scope). */
bool wl_onnx_rule_serves(const attr_rule *r, wl_op_kind kind);

/* auto_pad's ONNX spellings, indexed by wl_auto_pad. */
extern const char *const wl_onnx_auto_pad_names[WL_AUTO_PAD_VALID + 1];

/* Number of values a list-valued rule holds in a. */
int wl_onnx_rule_count(const attr_rule *r, const wl_attrs *a);

/* --------------------------------------------------------------- elements */

/* Bytes of one element in raw_data; 0 for UNDEFINED and STRING, which
 * have no raw form (the importer refuses them, the exporter skips them). */
size_t wl_onnx_elem_bytes(wl_dtype t);

/* The bit pattern of a float32 (memcpy: no aliasing through casts). */
uint32_t wl_onnx_float_bits(float f);

/* The value of one element of type t from its little-endian bit pattern:
 * integers (and bool) into *iv, floats into *fv. */
void wl_onnx_element_from_bits(wl_dtype t, uint64_t bits, int64_t *iv, double *fv);

/* The inverse of wl_onnx_element_from_bits. */
uint64_t wl_onnx_element_to_bits(wl_dtype t, int64_t iv, double fv);

#endif
