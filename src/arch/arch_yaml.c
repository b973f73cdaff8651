/*
 * arch_yaml.c -- accelsearch's own YAML format (docs/arch-format.md):
 * arch_load reads a built-in preset by name or a file, arch_save writes a
 * spec so that arch_load reads back the very same struct.
 *
 * The reader is strict.  Every mapping's keys are checked against what its
 * kind allows (a dummy level has no split, a MAC unit no rows), every value
 * is type- and range-checked where it is read, and every message names the
 * file, the line and the key path ("arch.yaml:12: levels[1].size: ...").
 * Numeric keys are read through tables (struct field) that put each key's
 * range and destination in one place; the writer walks the same tables.
 * Energies and areas the file leaves out are then filled from the
 * technology tables; the whole design must pass arch_validate, whose
 * checks are not repeated here.
 *
 * Round trip.  The writer gives every key whose value differs from what
 * the reader assumes when the key is absent -- the same defaults, from the
 * same functions -- and leaves out the energies and areas that the tables
 * would fill in with the identical double (so that a preset written out
 * and then edited keeps following the tables).  Reals are written with
 * the fewest digits that read back to the same double.
 */
#include "arch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a mapping is being read (core's strict reader: the document, the
 * status and the key path that prefixes the keys named in messages). */
typedef as_yaml_reader reader;

/* ------------------------------------------------------- typed values */

typedef enum field_type { FIELD_INT, FIELD_I64, FIELD_DOUBLE, FIELD_BOOL } field_type;

/* A key whose value is a number (in [min, max]) or a boolean, stored at
 * `offset` in the struct being filled.  Tables end with a NULL key. */
typedef struct field {
    const char *key;
    field_type type;
    size_t offset;
    double min, max;
} field;

/* Read node into the field f of the struct at base: typed, range-checked
 * (which also refuses NaN and infinities: every range is finite). */
static as_code read_field(const reader *r, const as_yaml_node *node, const field *f, void *base)
{
    char key[AS_YAML_PATH_BYTES];
    char *dst = (char *)base + f->offset;
    int64_t whole = 0;
    double number = 0;
    as_yaml_key_path(r, f->key, key);
    if (f->type == FIELD_BOOL)
        return as_yaml_bool(r->doc, node, key, (bool *)dst, r->st);
    if (f->type == FIELD_DOUBLE ? as_yaml_double(r->doc, node, key, &number, r->st)
                                : as_yaml_int(r->doc, node, key, &whole, r->st))
        return r->st->code;
    if (f->type != FIELD_DOUBLE)
        number = (double)whole;
    if (!(number >= f->min && number <= f->max))
        return as_yaml_fail(r, node, f->key, "'%s' is out of range (%.15g to %.15g)", node->scalar,
                            f->min, f->max);
    if (f->type == FIELD_INT)
        *(int *)dst = (int)whole;
    else if (f->type == FIELD_I64)
        *(int64_t *)dst = whole;
    else
        *(double *)dst = number;
    return AS_OK;
}

/* Read every field of the table that map has; absent keys keep the value
 * already in the struct (its default). */
static as_code read_fields(const reader *r, const as_yaml_node *map, const field *fields,
                           void *base)
{
    for (const field *f = fields; f->key; f++) {
        const as_yaml_node *node = as_yaml_get(map, f->key);
        if (node && read_field(r, node, f, base))
            return r->st->code;
    }
    return AS_OK;
}

/* A sub-mapping of map under key made only of the fields of the table
 * (bandwidth, energy, network): keys checked, values read into base. */
static as_code read_field_map(const reader *r, const as_yaml_node *map, const char *key,
                              const field *fields, void *base)
{
    const as_yaml_node *sub = as_yaml_get(map, key);
    const char *keys[16];
    int n = 0;
    if (!sub)
        return AS_OK;
    if (as_yaml_expect(r, sub, key, AS_YAML_MAPPING))
        return r->st->code;
    for (const field *f = fields; f->key && n < 15; f++)
        keys[n++] = f->key;
    keys[n] = NULL;
    reader in = as_yaml_enter(r, key);
    if (as_yaml_keys(&in, sub, NULL, keys))
        return r->st->code;
    return read_fields(&in, sub, fields, base);
}

/* ------------------------------------------------------- sizes, meshes */

/* Units a capacity may be written in, with their size in bytes; "words"
 * counts words of the level's word_bits. */
static const struct size_unit {
    const char *name;
    int64_t bytes;
} SIZE_UNITS[] = {{"B", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"words", 0}};

/*
 * A capacity such as "2 KiB", "512 B" or "192 words" in words of
 * word_bits.  A bare number is refused: bytes or words, a reader cannot
 * tell.  A byte count must be a whole number of words, and zero is not a
 * capacity (leave the level or the data space out instead).
 */
static as_code read_size_words(const reader *r, const as_yaml_node *node, const char *key,
                               int word_bits, int64_t *words)
{
    const char *text = node->kind == AS_YAML_SCALAR ? node->scalar : "";
    size_t digits = strspn(text, "0123456789");
    const char *unit = text + digits + strspn(text + digits, " ");
    int64_t count = 0, bits;
    for (size_t i = 0; i < digits; i++)
        if (!as_mul_i64(count, 10, &count) || !as_add_i64(count, text[i] - '0', &count))
            return as_yaml_fail(r, node, key, "'%s' is too large", text);
    for (size_t u = 0; digits && u < sizeof SIZE_UNITS / sizeof SIZE_UNITS[0]; u++) {
        if (strcmp(unit, SIZE_UNITS[u].name) != 0)
            continue;
        if (count == 0)
            return as_yaml_fail(r, node, key, "a capacity must be positive");
        if (!SIZE_UNITS[u].bytes) {
            *words = count;
            return AS_OK;
        }
        if (!as_mul_i64(count, SIZE_UNITS[u].bytes * 8, &bits))
            return as_yaml_fail(r, node, key, "'%s' is too large", text);
        if (bits % word_bits)
            return as_yaml_fail(r, node, key, "'%s' is not a whole number of %d-bit words", text,
                                word_bits);
        *words = bits / word_bits;
        return AS_OK;
    }
    return as_yaml_fail(r, node, key,
                        "expected a capacity such as '2 KiB', '512 B' or '64 words', "
                        "got '%.40s'",
                        node->kind == AS_YAML_SCALAR ? text : "(not a scalar)");
}

/*
 * instances and mesh: [x, y] of a level or of the compute unit.  Either
 * one alone fixes the other (a mesh defaults to one row, [instances, 1]);
 * given both, x * y must equal instances.  Absent both, *instances and the
 * mesh keep their defaults.
 */
static as_code read_instances(const reader *r, const as_yaml_node *map, int64_t *instances,
                              int *mesh_x, int *mesh_y)
{
    static const field INSTANCES = {"instances", FIELD_I64, 0, 1, 1e12};
    static const field SIDE = {"mesh", FIELD_INT, 0, 1, 1 << 24};
    const as_yaml_node *count = as_yaml_get(map, "instances"), *mesh = as_yaml_get(map, "mesh");
    int side[2];
    if (count && read_field(r, count, &INSTANCES, instances))
        return r->st->code;
    if (!mesh) {
        if (count && *instances > INT32_MAX)
            return as_yaml_fail(r, count, "instances", "%lld is too many for a mesh row; give mesh",
                                (long long)*instances);
        *mesh_x = (int)*instances;
        *mesh_y = 1;
        return AS_OK;
    }
    if (mesh->kind != AS_YAML_SEQUENCE || mesh->n != 2)
        return as_yaml_fail(r, mesh, "mesh", "expected [x, y], two integers");
    for (int i = 0; i < 2; i++)
        if (read_field(r, mesh->items[i], &SIDE, &side[i]))
            return r->st->code;
    int64_t product = (int64_t)side[0] * side[1];
    if (count && product != *instances)
        return as_yaml_fail(r, mesh, "mesh", "%d x %d = %lld does not match instances: %lld",
                            side[0], side[1], (long long)product, (long long)*instances);
    *instances = product;
    *mesh_x = side[0];
    *mesh_y = side[1];
    return AS_OK;
}

/* -------------------------------------------------------------- levels */

/* Data-space names in the format, indexed by wl_dataspace_id. */
static const char *const DATASPACE_NAMES[] = {"weights", "inputs", "outputs", NULL};

/* The list of data spaces under key in map, e.g. [weights, outputs], into
 * listed (indexed by wl_dataspace_id); each at most once.  *given says
 * whether map has the key (listed is untouched when not). */
static as_code read_dataspaces(const reader *r, const as_yaml_node *map, const char *key,
                               bool listed[WL_NDATASPACES], bool *given)
{
    const as_yaml_node *list = as_yaml_get(map, key);
    *given = list != NULL;
    if (!list)
        return AS_OK;
    if (list->kind != AS_YAML_SEQUENCE)
        return as_yaml_fail(r, list, key,
                            "expected a list of data spaces, e.g. [weights, outputs]");
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        listed[ds] = false;
    for (int i = 0; i < list->n; i++) {
        int ds;
        if (as_yaml_choice(r, list->items[i], key, DATASPACE_NAMES, &ds))
            return r->st->code;
        if (listed[ds])
            return as_yaml_fail(r, list->items[i], key, "'%s' is listed twice",
                                DATASPACE_NAMES[ds]);
        listed[ds] = true;
    }
    return AS_OK;
}

/* keep: [weights, inputs, outputs] -- the data spaces the level may hold;
 * every other one is bypassed (ARCH_KEEP_NEVER; this list is the only way
 * to say so).  Absent: the level may keep any. */
static as_code read_keep(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    bool kept[WL_NDATASPACES], given;
    if (read_dataspaces(r, map, "keep", kept, &given))
        return r->st->code;
    if (!given)
        return AS_OK;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        lv->constraints.keep[ds] = kept[ds] ? ARCH_KEEP_FREE : ARCH_KEEP_NEVER;
    return AS_OK;
}

/* Whether lv's capacity is split per data space. */
static bool is_split(const arch_level *lv)
{
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (lv->size_words_by_ds[ds])
            return true;
    return false;
}

/*
 * The capacity of a level: size (one capacity shared by every data space)
 * or split (a capacity per data space, as FAST's per-data-space L1 sizes).
 * A data space left out of a split has no room at the level, so a mapping
 * cannot keep it there; the split leaves its keep alone (the presets' way)
 * but refuses a keep list that names it.  Storage levels need exactly one
 * of the two; the dram and dummies (whose keys exclude split) may give a
 * size or be unbounded.
 */
static as_code read_capacity(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *size = as_yaml_get(map, "size"), *split = as_yaml_get(map, "split");
    bool storage = lv->cls == ARCH_CLASS_SRAM || lv->cls == ARCH_CLASS_REGFILE;
    if (size && split)
        return as_yaml_fail(r, size, "size", "give size or split, not both");
    if (!size && !split)
        return storage ? as_yaml_fail(r, map, "", "missing key 'size' (or 'split')") : AS_OK;
    if (size)
        return read_size_words(r, size, "size", lv->word_bits, &lv->size_words);
    if (as_yaml_expect(r, split, "split", AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, "split");
    if (as_yaml_keys(&in, split, NULL, DATASPACE_NAMES))
        return r->st->code;
    lv->size_words = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const as_yaml_node *part = as_yaml_get(split, DATASPACE_NAMES[ds]);
        if (!part) {
            if (lv->constraints.keep[ds] != ARCH_KEEP_NEVER && as_yaml_get(map, "keep"))
                return as_yaml_fail(r, split, "split", "keeps %s but gives it no capacity",
                                    DATASPACE_NAMES[ds]);
            continue;
        }
        if (read_size_words(&in, part, DATASPACE_NAMES[ds], lv->word_bits,
                            &lv->size_words_by_ds[ds]) ||
            !as_add_i64(lv->size_words, lv->size_words_by_ds[ds], &lv->size_words))
            return as_yaml_fail(&in, split, "", "capacities too large");
    }
    return AS_OK;
}

/* Numeric keys of a level, and of its bandwidth, energy and network maps. */
static const field LEVEL_FIELDS[] = {
    {"word_bits", FIELD_INT, offsetof(arch_level, word_bits), 1, 1024},
    {"block", FIELD_INT, offsetof(arch_level, block_size), 1, 1 << 20},
    {"cluster", FIELD_INT, offsetof(arch_level, cluster_size), 1, 1 << 20},
    {"multiple_buffering", FIELD_DOUBLE, offsetof(arch_level, multiple_buffering), 1, 64},
    {"area_um2", FIELD_DOUBLE, offsetof(arch_level, area_um2), 0, 1e15},
    {NULL, 0, 0, 0, 0},
};
static const field BANDWIDTH_FIELDS[] = {
    {"read", FIELD_DOUBLE, offsetof(arch_level, read_bandwidth), 0, 1e12},
    {"write", FIELD_DOUBLE, offsetof(arch_level, write_bandwidth), 0, 1e12},
    {"shared", FIELD_DOUBLE, offsetof(arch_level, shared_bandwidth), 0, 1e12},
    {NULL, 0, 0, 0, 0},
};
static const field ENERGY_FIELDS[] = {
    {"read_pJ", FIELD_DOUBLE, offsetof(arch_level, energy.read_pJ), 0, 1e9},
    {"fill_pJ", FIELD_DOUBLE, offsetof(arch_level, energy.fill_pJ), 0, 1e9},
    {"update_pJ", FIELD_DOUBLE, offsetof(arch_level, energy.update_pJ), 0, 1e9},
    {"leak_pJ", FIELD_DOUBLE, offsetof(arch_level, energy.leak_pJ), 0, 1e9},
    {NULL, 0, 0, 0, 0},
};
static const field NETWORK_FIELDS[] = {
    {"multicast", FIELD_BOOL, offsetof(arch_level, multicast), 0, 0},
    {"spatial_reduction", FIELD_BOOL, offsetof(arch_level, spatial_reduction), 0, 0},
    {"hop_pJ", FIELD_DOUBLE, offsetof(arch_level, hop_pJ), 0, 1e9},
    {NULL, 0, 0, 0, 0},
};
/* Keys of the DRAM level stored in arch_dram (type is read apart). */
static const field DRAM_FIELDS[] = {
    {"channels", FIELD_INT, offsetof(arch_dram, channels), 1, 1024},
    {"bandwidth_GBps", FIELD_DOUBLE, offsetof(arch_dram, bandwidth_GBps), 0, 1e9},
    {"energy_pJ_per_bit", FIELD_DOUBLE, offsetof(arch_dram, energy_pJ_per_bit), 0, 1e6},
    {"interface_pJ_per_bit", FIELD_DOUBLE, offsetof(arch_dram, interface_pJ_per_bit), 0, 1e6},
    {NULL, 0, 0, 0, 0},
};

/* Level kinds, indexed by arch_class, with the keys each allows and
 * needs.  Every kind takes the physical keys of a level (Timeloop's DRAM
 * and dummy containers have word widths, blocks and bandwidths too); only
 * on-chip storage takes split and keep, only the DRAM its type and
 * bandwidth in GB/s. */
static const char *const LEVEL_KIND_NAMES[] = {"dram", "sram", "regfile", "dummy", NULL};
#define COMMON_LEVEL_KEYS                                                                          \
    "name", "kind", "size", "word_bits", "block", "cluster", "instances", "mesh",                  \
        "multiple_buffering", "bandwidth", "energy", "area_um2", "network", "constraints"
static const char *const STORAGE_KEYS[] = {COMMON_LEVEL_KEYS, "split", "keep", "formats", NULL};
static const char *const DRAM_KEYS[] = {
    COMMON_LEVEL_KEYS,      "type",    "channels", "bandwidth_GBps", "energy_pJ_per_bit",
    "interface_pJ_per_bit", "formats", NULL};
static const char *const DUMMY_KEYS[] = {COMMON_LEVEL_KEYS, NULL};
static const char *const *const LEVEL_KEYS[] = {
    [ARCH_CLASS_DRAM] = DRAM_KEYS,
    [ARCH_CLASS_SRAM] = STORAGE_KEYS,
    [ARCH_CLASS_REGFILE] = STORAGE_KEYS,
    [ARCH_CLASS_DUMMY] = DUMMY_KEYS,
};
static const char *const NAME_REQUIRED[] = {"name", NULL};
static const char *const *const LEVEL_REQUIRED[] = {
    [ARCH_CLASS_DRAM] = NAME_REQUIRED,
    [ARCH_CLASS_SRAM] = NAME_REQUIRED,
    [ARCH_CLASS_REGFILE] = NAME_REQUIRED,
    [ARCH_CLASS_DUMMY] = NAME_REQUIRED,
};

/* Words per cycle a DRAM of GBps (all channels) moves at the design's
 * clock.  The expression, operation for operation, is presets.c's
 * (add_dram), so that a preset written out reads back to the same double. */
static double dram_words_per_cycle(double GBps, int word_bits, double cycle_seconds)
{
    return GBps * 1e9 * 8 / word_bits * cycle_seconds;
}

/* Defaults of the DRAM's own keys: one channel, unlimited bandwidth, the
 * energies per bit not given (NaN: the tables' for the type). */
static void dram_defaults(arch_dram *dram)
{
    memset(dram, 0, sizeof *dram);
    dram->channels = 1;
    dram->energy_pJ_per_bit = NAN;
    dram->interface_pJ_per_bit = NAN;
}

/*
 * The DRAM's keys: its type (which the energy table must know; without
 * one, the file must give the DRAM's energy itself), channels, energy per
 * bit, and bandwidth -- total over the channels, in GB/s,
 * turned into the level's shared bandwidth in words per cycle at the
 * design's clock (0: unlimited), unless bandwidth.shared gives that
 * directly (it wins: Timeloop's DRAMs state words per cycle).
 */
static as_code read_dram(const reader *r, const as_yaml_node *map, double cycle_seconds,
                         arch_level *lv, arch_dram *dram)
{
    const as_yaml_node *type = as_yaml_get(map, "type");
    if (as_yaml_read_name(r, map, "type", false, dram->type, sizeof dram->type) ||
        read_fields(r, map, DRAM_FIELDS, dram))
        return r->st->code;
    if (type && arch_dram_pJ_per_bit(dram->type) < 0)
        return as_yaml_fail(r, type, "type", "'%s' is not in the DRAM energy table", dram->type);
    if (!type && !as_yaml_get(map, "energy_pJ_per_bit") && !as_yaml_get(map, "energy"))
        return as_yaml_fail(r, map, "",
                            "missing key 'type' (or, for a DRAM the energy table does not "
                            "know, 'energy_pJ_per_bit' or 'energy')");
    if (!as_yaml_get(as_yaml_get(map, "bandwidth"), "shared"))
        lv->shared_bandwidth =
            dram_words_per_cycle(dram->bandwidth_GBps, lv->word_bits, cycle_seconds);
    return AS_OK;
}

/* Defaults of a level of class cls before its keys are read: one
 * instance, words as wide as the MACs' operands, unlimited bandwidth, a
 * network with multicast and spatial reduction (Timeloop's legacy
 * network), no constraints, a dummy keeping nothing, and energies, area
 * and hop energy not given (NaN: filled from the tables after reading). */
static void level_defaults(arch_level *lv, arch_class cls, int mac_bits)
{
    memset(lv, 0, sizeof *lv);
    lv->cls = cls;
    lv->word_bits = mac_bits;
    lv->block_size = 1;
    lv->cluster_size = 1;
    lv->instances = lv->mesh_x = lv->mesh_y = 1;
    lv->multiple_buffering = 1;
    lv->multicast = lv->spatial_reduction = true;
    lv->energy.read_pJ = lv->energy.fill_pJ = lv->energy.update_pJ = lv->energy.leak_pJ = NAN;
    lv->area_um2 = lv->hop_pJ = NAN;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        lv->constraints.keep[ds] = cls == ARCH_CLASS_DUMMY ? ARCH_KEEP_NEVER : ARCH_KEEP_FREE;
}

/* --------------------------------------------------------- constraints */

/* Keys of a level's constraints: block (arch_constraints). */
static const char *const CONSTRAINT_KEYS[] = {
    "temporal_factors",        "temporal_max",  "temporal_order",
    "spatial_factors",         "spatial_order", "spatial_split",
    "min_spatial_utilization", "keep",          NULL};
static const field CONSTRAINT_FIELDS[] = {
    {"spatial_split", FIELD_INT, offsetof(arch_constraints, spatial_split), 0, WL_NDIMS},
    {"min_spatial_utilization", FIELD_DOUBLE, offsetof(arch_constraints, min_spatial_utilization),
     0, 1},
    {NULL, 0, 0, 0, 0},
};

/* The problem slot a dimension name stands for: N, G, C, M, P, Q, R, S as
 * wl_dim_name spells them, and Timeloop's K for M (output channels). */
static bool dim_of(const char *name, int *dim)
{
    for (int d = 0; d < WL_NDIMS; d++)
        if (strcmp(name, wl_dim_name((wl_dim)d)) == 0) {
            *dim = d;
            return true;
        }
    *dim = WL_DIM_M;
    return strcmp(name, "K") == 0;
}

/* The dimension named by a scalar node (key names the list or map). */
static as_code read_dim(const reader *r, const as_yaml_node *node, const char *name,
                        const char *key, int *dim)
{
    if (node->kind == AS_YAML_SCALAR && dim_of(name, dim))
        return AS_OK;
    return as_yaml_fail(r, node, key,
                        "unknown dimension '%.20s' (expected N, G, C, M, P, Q, R, S; K "
                        "for M)",
                        node->kind == AS_YAML_SCALAR ? name : "(not a scalar)");
}

/* A map from dimensions to factors under key, e.g. {R: 3, S: 3}, into
 * factor[] (dims left out keep 0: free); each dimension once. */
static as_code read_dim_factors(const reader *r, const as_yaml_node *map, const char *key,
                                int64_t factor[WL_NDIMS])
{
    const as_yaml_node *sub = as_yaml_get(map, key);
    if (!sub)
        return AS_OK;
    if (as_yaml_expect(r, sub, key, AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, key);
    for (int i = 0; i < sub->n; i++) {
        field f = {sub->keys[i], FIELD_I64, 0, 1, 1e12};
        int d;
        if (read_dim(&in, sub->items[i], sub->keys[i], sub->keys[i], &d))
            return r->st->code;
        if (factor[d])
            return as_yaml_fail(&in, sub->items[i], sub->keys[i], "%s is given twice (K is M)",
                                wl_dim_name((wl_dim)d));
        if (read_field(&in, sub->items[i], &f, &factor[d]))
            return r->st->code;
    }
    return AS_OK;
}

/* A list of distinct dimensions under key, e.g. [R, S, C], into order[]
 * and *n. */
static as_code read_dim_order(const reader *r, const as_yaml_node *map, const char *key,
                              uint8_t order[WL_NDIMS], int *n)
{
    const as_yaml_node *list = as_yaml_get(map, key);
    bool seen[WL_NDIMS] = {false};
    if (!list)
        return AS_OK;
    if (list->kind != AS_YAML_SEQUENCE)
        return as_yaml_fail(r, list, key, "expected a list of dimensions, e.g. [R, S, C]");
    for (int i = 0; i < list->n; i++) {
        const as_yaml_node *item = list->items[i];
        int d;
        if (read_dim(r, item, item->scalar, key, &d))
            return r->st->code;
        if (seen[d])
            return as_yaml_fail(r, item, key, "%s is listed twice (K is M)",
                                wl_dim_name((wl_dim)d));
        seen[d] = true;
        order[(*n)++] = (uint8_t)d;
    }
    return AS_OK;
}

/* constraints.keep: the data spaces a mapping must keep at the level
 * (ARCH_KEEP_ALWAYS; this list is the only way to say so).  Each must be
 * one the level may hold: not left out of its keep list or its split, and
 * never at a dummy. */
static as_code read_keep_always(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *keep = as_yaml_get(map, "keep");
    bool always[WL_NDATASPACES], given;
    if (read_dataspaces(r, map, "keep", always, &given))
        return r->st->code;
    if (!given)
        return AS_OK;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        if (!always[ds])
            continue;
        if (lv->constraints.keep[ds] == ARCH_KEEP_NEVER ||
            (is_split(lv) && !lv->size_words_by_ds[ds]))
            return as_yaml_fail(r, keep, "keep", "%s cannot be kept at this level (%s)",
                                DATASPACE_NAMES[ds],
                                lv->cls == ARCH_CLASS_DUMMY ? "a dummy keeps nothing"
                                                            : "see the level's keep and split");
        lv->constraints.keep[ds] = ARCH_KEEP_ALWAYS;
    }
    return AS_OK;
}

/*
 * A level's constraints: what a mapper may choose there.  Fixed and
 * bounded temporal factors, a fixed prefix of the temporal order
 * (innermost first), fixed spatial factors, a spatial order and the split
 * of it between X and Y, a spatial utilisation floor, and data spaces that
 * must be kept.  A fixed factor above its bound cannot be met; a split
 * beyond the spatial order it cuts names no dimension.
 */
static as_code read_constraints(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *node = as_yaml_get(map, "constraints");
    arch_constraints *c = &lv->constraints;
    if (!node)
        return AS_OK;
    if (as_yaml_expect(r, node, "constraints", AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, "constraints");
    if (as_yaml_keys(&in, node, NULL, CONSTRAINT_KEYS) ||
        read_dim_factors(&in, node, "temporal_factors", c->temporal_factor) ||
        read_dim_factors(&in, node, "temporal_max", c->temporal_max) ||
        read_dim_order(&in, node, "temporal_order", c->temporal_order, &c->n_temporal_order) ||
        read_dim_factors(&in, node, "spatial_factors", c->spatial_factor) ||
        read_dim_order(&in, node, "spatial_order", c->spatial_order, &c->n_spatial_order) ||
        read_fields(&in, node, CONSTRAINT_FIELDS, c) || read_keep_always(&in, node, lv))
        return r->st->code;
    for (int d = 0; d < WL_NDIMS; d++)
        if (c->temporal_max[d] && c->temporal_factor[d] > c->temporal_max[d])
            return as_yaml_fail(&in, as_yaml_get(node, "temporal_factors"), "temporal_factors",
                                "%s = %lld exceeds its temporal_max %lld", wl_dim_name((wl_dim)d),
                                (long long)c->temporal_factor[d], (long long)c->temporal_max[d]);
    const as_yaml_node *split = as_yaml_get(node, "spatial_split");
    c->spatial_split_fixed = split != NULL;
    if (split && c->n_spatial_order && c->spatial_split > c->n_spatial_order)
        return as_yaml_fail(&in, split, "spatial_split",
                            "%d exceeds the %d dimensions of spatial_order", c->spatial_split,
                            c->n_spatial_order);
    return AS_OK;
}

/* Storage formats (arch.h, arch_format), indexed by arch_format, and the
 * keys of a format given as a mapping. */
static const char *const FORMAT_NAMES[] = {"uncompressed", "bitmask", "rle", "csr", "coo", NULL};
static const char *const FORMAT_KEYS[] = {"format", "metadata_bits", "offset_bits", NULL};
static const field FORMAT_FIELDS[] = {
    {"metadata_bits", FIELD_INT, offsetof(arch_ds_format, metadata_bits), 0, 64},
    {"offset_bits", FIELD_INT, offsetof(arch_ds_format, offset_bits), 0, 64},
    {NULL, 0, 0, 0, 0},
};

/* One data space's format: a name (the widths their defaults) or a
 * mapping {format: NAME, metadata_bits: B, offset_bits: B}. */
static as_code read_format(const reader *r, const as_yaml_node *node, const char *key,
                           arch_ds_format *f)
{
    int format;
    memset(f, 0, sizeof *f);
    if (node->kind == AS_YAML_SCALAR) {
        if (as_yaml_choice(r, node, key, FORMAT_NAMES, &format))
            return r->st->code;
        f->format = (arch_format)format;
        return AS_OK;
    }
    if (as_yaml_expect(r, node, key, AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, key);
    const as_yaml_node *name = as_yaml_get(node, "format");
    if (as_yaml_keys(&in, node, NULL, FORMAT_KEYS) ||
        as_yaml_require(&in, node, (const char *const[]){"format", NULL}) ||
        as_yaml_choice(&in, name, "format", FORMAT_NAMES, &format))
        return r->st->code;
    f->format = (arch_format)format;
    return read_fields(&in, node, FORMAT_FIELDS, f);
}

/* formats: {weights: csr, inputs: {format: rle, metadata_bits: 4}} -- the
 * data spaces stored compressed here; the others stay uncompressed. */
static as_code read_formats(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *formats = as_yaml_get(map, "formats");
    if (!formats)
        return AS_OK;
    if (as_yaml_expect(r, formats, "formats", AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, "formats");
    if (as_yaml_keys(&in, formats, NULL, DATASPACE_NAMES))
        return r->st->code;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const as_yaml_node *node = as_yaml_get(formats, DATASPACE_NAMES[ds]);
        if (node && read_format(&in, node, DATASPACE_NAMES[ds], &lv->format[ds]))
            return r->st->code;
    }
    return AS_OK;
}

/* One item of levels: its kind first (it decides the keys allowed), then
 * the keys in an order where each finds what it depends on (a capacity in
 * bytes needs word_bits, a split or keep list the constraints' keep). */
static as_code read_level(const reader *r, const as_yaml_node *map, arch_spec *a, arch_level *lv)
{
    const as_yaml_node *kind = as_yaml_get(map, "kind");
    int cls;
    if (as_yaml_expect(r, map, "", AS_YAML_MAPPING))
        return r->st->code;
    if (!kind)
        return as_yaml_fail(r, map, "", "missing key 'kind' (%s)", "dram, sram, regfile or dummy");
    if (as_yaml_choice(r, kind, "kind", LEVEL_KIND_NAMES, &cls))
        return r->st->code;
    level_defaults(lv, (arch_class)cls, a->compute.mac_bits);
    if (as_yaml_keys(r, map, NULL, LEVEL_KEYS[cls]) ||
        as_yaml_require(r, map, LEVEL_REQUIRED[cls]) ||
        as_yaml_read_name(r, map, "name", false, lv->name, sizeof lv->name) ||
        read_fields(r, map, LEVEL_FIELDS, lv) ||
        read_field_map(r, map, "bandwidth", BANDWIDTH_FIELDS, lv) ||
        read_field_map(r, map, "energy", ENERGY_FIELDS, lv) ||
        read_field_map(r, map, "network", NETWORK_FIELDS, lv) ||
        read_instances(r, map, &lv->instances, &lv->mesh_x, &lv->mesh_y) ||
        (lv->cls == ARCH_CLASS_DRAM && read_dram(r, map, a->cycle_seconds, lv, &a->dram)) ||
        read_keep(r, map, lv) || read_capacity(r, map, lv) || read_constraints(r, map, lv) ||
        read_formats(r, map, lv))
        return r->st->code;
    return AS_OK;
}

/*
 * levels: innermost first, 1 to ARCH_MAX_LEVELS of them, names unique.
 * The last is the backing store: the dram, if any, is there and nowhere
 * else (an on-chip backing store is Timeloop's outermost SRAM).
 */
static as_code read_levels(const reader *r, const as_yaml_node *levels, arch_spec *a)
{
    if (levels->kind != AS_YAML_SEQUENCE || levels->n < 1 || levels->n > ARCH_MAX_LEVELS)
        return as_yaml_fail(r, levels, "levels",
                            "expected a list of 1 to %d levels, innermost first", ARCH_MAX_LEVELS);
    a->n_levels = levels->n;
    for (int i = 0; i < levels->n; i++) {
        reader in = as_yaml_enter_item(r, "levels", i);
        const as_yaml_node *item = levels->items[i];
        arch_level *lv = &a->level[i];
        if (read_level(&in, item, a, lv))
            return r->st->code;
        for (int j = 0; j < i; j++)
            if (strcmp(a->level[j].name, lv->name) == 0)
                return as_yaml_fail(&in, as_yaml_get(item, "name"), "name",
                                    "'%s' already names levels[%d]", lv->name, j);
        if (lv->cls == ARCH_CLASS_DRAM && i != levels->n - 1)
            return as_yaml_fail(&in, as_yaml_get(item, "kind"), "kind",
                                "the dram must be the last level (levels are innermost first)");
    }
    return AS_OK;
}

/* ------------------------------------------------------------- compute */

/* Compute kinds, indexed by arch_compute_kind, with their keys: a MAC
 * unit is 1 x 1, a systolic array rows x cols with a dataflow, a vector
 * unit `lanes` wide (kept in rows). */
static const char *const COMPUTE_KIND_NAMES[] = {"mac", "systolic", "vector", NULL};
static const char *const DATAFLOW_NAMES[] = {"os", "ws", "is", NULL};
static const char *const MAC_FORMAT_NAMES[] = {"int", "fp", "bf16", NULL}; /* by arch_number */
static const char *const COMPUTE_KEYS_BY_KIND[][13] = {
    [ARCH_COMPUTE_MAC] = {"name", "kind", "instances", "mesh", "mac_bits", "mac_format", "mac_pJ",
                          "area_um2", "zero_handling", NULL},
    [ARCH_COMPUTE_SYSTOLIC] = {"name", "kind", "instances", "mesh", "mac_bits", "mac_format",
                               "mac_pJ", "area_um2", "rows", "cols", "dataflow", "zero_handling",
                               NULL},
    [ARCH_COMPUTE_VECTOR] = {"name", "kind", "instances", "mesh", "mac_bits", "mac_format",
                             "mac_pJ", "area_um2", "lanes", "zero_handling", NULL},
};
static const char *const COMPUTE_REQUIRED_BY_KIND[][5] = {
    [ARCH_COMPUTE_MAC] = {"mac_bits", NULL},
    [ARCH_COMPUTE_SYSTOLIC] = {"mac_bits", "rows", "cols", "dataflow", NULL},
    [ARCH_COMPUTE_VECTOR] = {"mac_bits", "lanes", NULL},
};
static const field COMPUTE_FIELDS[] = {
    {"mac_bits", FIELD_INT, offsetof(arch_compute, mac_bits), 1, 64},
    {"mac_pJ", FIELD_DOUBLE, offsetof(arch_compute, mac_pJ), 0, 1e9},
    {"area_um2", FIELD_DOUBLE, offsetof(arch_compute, area_um2), 0, 1e15},
    {"rows", FIELD_INT, offsetof(arch_compute, rows), 1, 1 << 16},
    {"cols", FIELD_INT, offsetof(arch_compute, cols), 1, 1 << 16},
    {"lanes", FIELD_INT, offsetof(arch_compute, rows), 1, 1 << 16},
    {NULL, 0, 0, 0, 0},
};

/* Defaults of a compute unit of kind k: one 1 x 1 instance named after
 * its kind, integer operands, output stationary, energy and area not
 * given (NaN: from the tables). */
static void compute_defaults(arch_compute *c, arch_compute_kind k)
{
    memset(c, 0, sizeof *c);
    c->kind = k;
    c->instances = c->mesh_x = c->mesh_y = 1;
    c->rows = c->cols = 1;
    c->dataflow = ARCH_DATAFLOW_OS;
    c->mac_number = ARCH_NUMBER_INT;
    c->mac_pJ = c->area_um2 = NAN;
    snprintf(c->name, sizeof c->name, "%s", COMPUTE_KIND_NAMES[k]);
}

/* An enumerated key of map (absent: *value keeps its default). */
static as_code read_optional_choice(const reader *r, const as_yaml_node *map, const char *key,
                                    const char *const *names, int *value)
{
    const as_yaml_node *node = as_yaml_get(map, key);
    return node ? as_yaml_choice(r, node, key, names, value) : AS_OK;
}

/* Zero handling of the MACs (arch.h, arch_zero_action), indexed by it. */
static const char *const ZERO_ACTION_NAMES[] = {"none", "gate", "skip", NULL};
static const char *const ZERO_KEYS[] = {"action", "operands", "gated_mac_fraction", NULL};
static const field ZERO_FIELDS[] = {
    {"gated_mac_fraction", FIELD_DOUBLE, offsetof(arch_compute, gated_mac_fraction), 0, 1},
    {NULL, 0, 0, 0, 0},
};

/* zero_handling: {action: gate, operands: [weights], gated_mac_fraction: F}
 * -- action and operands required; arch_validate checks the combination. */
static as_code read_zero_handling(const reader *r, const as_yaml_node *map, arch_compute *c)
{
    const as_yaml_node *node = as_yaml_get(map, "zero_handling");
    bool given;
    int action;
    if (!node)
        return AS_OK;
    if (as_yaml_expect(r, node, "zero_handling", AS_YAML_MAPPING))
        return r->st->code;
    reader in = as_yaml_enter(r, "zero_handling");
    if (as_yaml_keys(&in, node, NULL, ZERO_KEYS) ||
        as_yaml_require(&in, node, (const char *const[]){"action", "operands", NULL}) ||
        as_yaml_choice(&in, as_yaml_get(node, "action"), "action", ZERO_ACTION_NAMES, &action) ||
        read_dataspaces(&in, node, "operands", c->zero_operand, &given) ||
        read_fields(&in, node, ZERO_FIELDS, c))
        return r->st->code;
    c->zero_action = (arch_zero_action)action;
    return AS_OK;
}

/* compute: the kind first (it decides the keys), then the rest.  The MAC
 * must be one the energy tables cover (not fp12, nor a bf16 of other than
 * 16 bits), as arch_validate wants. */
static as_code read_compute(const reader *top, const as_yaml_node *map, int node_nm,
                            arch_compute *c)
{
    reader r = as_yaml_enter(top, "compute");
    const as_yaml_node *kind = as_yaml_get(map, "kind");
    int k, dataflow = ARCH_DATAFLOW_OS, number = ARCH_NUMBER_INT;
    if (as_yaml_expect(top, map, "compute", AS_YAML_MAPPING))
        return top->st->code;
    if (!kind)
        return as_yaml_fail(&r, map, "", "missing key 'kind' (mac, systolic or vector)");
    if (as_yaml_choice(&r, kind, "kind", COMPUTE_KIND_NAMES, &k))
        return r.st->code;
    compute_defaults(c, (arch_compute_kind)k);
    if (as_yaml_keys(&r, map, NULL, COMPUTE_KEYS_BY_KIND[k]) ||
        as_yaml_require(&r, map, COMPUTE_REQUIRED_BY_KIND[k]) ||
        as_yaml_read_name(&r, map, "name", false, c->name, sizeof c->name) ||
        read_fields(&r, map, COMPUTE_FIELDS, c) ||
        read_instances(&r, map, &c->instances, &c->mesh_x, &c->mesh_y) ||
        read_optional_choice(&r, map, "dataflow", DATAFLOW_NAMES, &dataflow) ||
        read_optional_choice(&r, map, "mac_format", MAC_FORMAT_NAMES, &number) ||
        read_zero_handling(&r, map, c))
        return r.st->code;
    c->dataflow = (arch_dataflow)dataflow;
    c->mac_number = (arch_number)number;
    if (arch_mac_number_pJ(c->mac_bits, c->mac_number, node_nm) < 0)
        return as_yaml_fail(&r, as_yaml_get(map, "mac_bits"), "mac_bits",
                            "the energy tables have no %d-bit %s MAC", c->mac_bits,
                            MAC_FORMAT_NAMES[number]);
    return AS_OK;
}

/* ------------------------------------------------------------ document */

static const char *const TOP_KEYS[] = {
    "name",         "technology_nm", "clock_MHz", "cycle_seconds",
    "native_batch", "compute",       "levels",    NULL};
static const char *const TOP_REQUIRED[] = {"name", "technology_nm", "compute", "levels", NULL};
static const field TOP_FIELDS[] = {
    {"technology_nm", FIELD_INT, offsetof(arch_spec, technology_nm), ARCH_NODE_MIN_NM,
     ARCH_NODE_MAX_NM},
    {"native_batch", FIELD_INT, offsetof(arch_spec, native_batch), 1, 1 << 20},
    {NULL, 0, 0, 0, 0},
};
/* The clock, given either way (exactly one): clock_MHz, or the period
 * itself, which arch_save writes when no decimal clock_MHz gives back the
 * period to the last bit. */
static const field CLOCK_MHZ = {"clock_MHz", FIELD_DOUBLE, 0, 1e-3, 1e6};
static const field CYCLE_SECONDS = {"cycle_seconds", FIELD_DOUBLE,
                                    offsetof(arch_spec, cycle_seconds), 1e-12, 1e3};

/* The clock period of a clock in MHz: 1 / Hz, as the presets compute it
 * from their clock in Hz, so that a whole-Hz clock reads back exactly. */
static double cycle_of_MHz(double clock_MHz)
{
    return 1.0 / (clock_MHz * 1e6);
}

/* The clock: clock_MHz or cycle_seconds, one of the two. */
static as_code read_clock(const reader *r, const as_yaml_node *root, arch_spec *a)
{
    const as_yaml_node *MHz = as_yaml_get(root, "clock_MHz");
    const as_yaml_node *period = as_yaml_get(root, "cycle_seconds");
    double clock_MHz;
    if (!MHz == !period)
        return as_yaml_fail(r, MHz ? MHz : root, MHz ? "clock_MHz" : "",
                            MHz ? "give clock_MHz or cycle_seconds, not both"
                                : "missing key 'clock_MHz' (or 'cycle_seconds')");
    if (period)
        return read_field(r, period, &CYCLE_SECONDS, a);
    if (read_field(r, MHz, &CLOCK_MHZ, &clock_MHz))
        return r->st->code;
    a->cycle_seconds = cycle_of_MHz(clock_MHz);
    return AS_OK;
}

/* The whole document into a: the top keys, then compute (whose mac_bits
 * the levels' word_bits default to), then the levels.  The DRAM's own
 * keys take their defaults even when no level is the dram. */
static as_code read_arch(const reader *r, const as_yaml_node *root, arch_spec *a)
{
    if (!root)
        return as_fail(r->st, AS_EINVAL, "%s: empty document, expected an architecture",
                       r->doc->path);
    if (as_yaml_expect(r, root, "", AS_YAML_MAPPING) ||
        as_yaml_keys(r, root, "the architecture", TOP_KEYS) ||
        as_yaml_require(r, root, TOP_REQUIRED) ||
        as_yaml_read_name(r, root, "name", false, a->name, sizeof a->name) ||
        read_fields(r, root, TOP_FIELDS, a) || read_clock(r, root, a))
        return r->st->code;
    if (read_compute(r, as_yaml_get(root, "compute"), a->technology_nm, &a->compute))
        return r->st->code;
    dram_defaults(&a->dram);
    return read_levels(r, as_yaml_get(root, "levels"), a);
}

/* ---------------------------------------------------- technology tables */

/* Most energy and area values a spec can hold: the compute unit's two,
 * the DRAM's two energies per bit, six per level. */
enum {
    TABLE_FIELDS_PER_LEVEL = 6,
    TABLE_FIELDS_MAX = 4 + TABLE_FIELDS_PER_LEVEL * ARCH_MAX_LEVELS
};

/* The values of a that arch_apply_tables fills when zero, as pointers in
 * a fixed order; returns how many.  Reader and writer both go through
 * this list, so a value is left out of a file exactly when reading fills
 * it back. */
static int table_fields(arch_spec *a, double *out[TABLE_FIELDS_MAX])
{
    int n = 0;
    out[n++] = &a->compute.mac_pJ;
    out[n++] = &a->compute.area_um2;
    out[n++] = &a->dram.energy_pJ_per_bit;
    out[n++] = &a->dram.interface_pJ_per_bit;
    for (int i = 0; i < a->n_levels; i++) {
        arch_level *l = &a->level[i];
        out[n++] = &l->energy.read_pJ;
        out[n++] = &l->energy.fill_pJ;
        out[n++] = &l->energy.update_pJ;
        out[n++] = &l->energy.leak_pJ;
        out[n++] = &l->area_um2;
        out[n++] = &l->hop_pJ;
    }
    return n;
}

/*
 * Fill the table values of a that are NaN (not given) from the technology
 * tables; values given stay as given, 0 included (a file may say that a
 * level leaks nothing or that its wires are not costed -- which a plain
 * arch_apply_tables, filling every zero, would overrule).  The tables see
 * the given non-zero values (a hop's length follows the areas below it).
 */
static void fill_from_tables(arch_spec *a)
{
    arch_spec filled = *a;
    double *mine[TABLE_FIELDS_MAX], *theirs[TABLE_FIELDS_MAX];
    int n = table_fields(a, mine);
    table_fields(&filled, theirs);
    for (int k = 0; k < n; k++)
        if (isnan(*theirs[k]))
            *theirs[k] = 0;
    arch_apply_tables(&filled);
    for (int k = 0; k < n; k++)
        if (isnan(*mine[k]))
            *mine[k] = *theirs[k];
    /* The registers and hops inside a systolic array are no keys of the
     * format: always the tables' (energy.c, fill_pe), as for a preset. */
    a->compute.pe_reg_pJ = filled.compute.pe_reg_pJ;
    a->compute.pe_acc_reg_pJ = filled.compute.pe_acc_reg_pJ;
    a->compute.pe_hop_pJ = filled.compute.pe_hop_pJ;
    a->compute.pe_acc_hop_pJ = filled.compute.pe_acc_hop_pJ;
}

/* ---------------------------------------------------------------- load */

/* A name without a directory or an extension was most likely meant as a
 * preset: say so, and list the presets, rather than "cannot open". */
static as_code fail_unknown_preset(const char *name, as_status *st)
{
    char list[256] = "";
    size_t used = 0;
    int n;
    const arch_preset *presets = arch_presets(&n);
    for (int i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 presets[i].name);
    return as_fail(st, AS_EINVAL, "'%s' is neither a preset (%s) nor a file", name, list);
}

/*
 * The line of the part of the document an arch_validate message is about,
 * so that its checks too point into the file: arch.c names a level as
 * "level 'NAME'", the compute unit as "compute ..." and the DRAM as
 * "dram: ...".  Anything else is about the design as a whole: line 1 of it.
 */
static int validate_line(const as_yaml_node *root, const arch_spec *a, const char *message)
{
    const as_yaml_node *levels = as_yaml_get(root, "levels");
    char quoted[ARCH_NAME_BYTES + 16];
    for (int i = 0; i < a->n_levels; i++) {
        snprintf(quoted, sizeof quoted, "level '%s'", a->level[i].name);
        if (strstr(message, quoted))
            return levels->items[i]->line;
    }
    if (strncmp(message, "compute", 7) == 0)
        return as_yaml_get(root, "compute")->line;
    if (strncmp(message, "dram", 4) == 0)
        return levels->items[a->n_levels - 1]->line;
    return root->line;
}

/* Read the file at path into *out; out is written only on success. */
static as_code load_file(const char *path, arch_spec *out, as_status *st)
{
    as_yaml_doc doc;
    as_status local;
    as_status_clear(&local);
    if (as_yaml_load(path, &doc, &local)) {
        if (local.code == AS_EIO && !strchr(path, '/') && !strchr(path, '.'))
            return fail_unknown_preset(path, st);
        return as_fail(st, local.code, "%s", local.message);
    }
    arch_spec a;
    memset(&a, 0, sizeof a);
    a.native_batch = 1;
    reader r = {.doc = &doc, .st = st};
    as_code code = read_arch(&r, doc.root, &a);
    if (code == AS_OK) {
        fill_from_tables(&a);
        if (arch_validate(&a, &local))
            code = as_fail(st, local.code, "%s:%d: %s", path,
                           validate_line(doc.root, &a, local.message), local.message);
    }
    as_yaml_free(&doc);
    if (code == AS_OK)
        *out = a;
    return code;
}

/* A preset by name, else a file; st may be NULL (the readers above use a
 * status of their own then). */
as_code arch_load(const char *preset_or_path, arch_spec *out, as_status *st)
{
    as_status spare;
    st = as_status_or(st, &spare);
    if (!preset_or_path || !preset_or_path[0])
        return as_fail(st, AS_EINVAL, "no architecture given (a preset name or a YAML file)");
    if (arch_is_scalesim_path(preset_or_path))
        return arch_scalesim_load(preset_or_path, out, st);
    const arch_preset *preset = arch_preset_find(preset_or_path);
    if (!preset)
        return load_file(preset_or_path, out, st);
    arch_spec a;
    memset(&a, 0, sizeof a);
    preset->build(&a);
    arch_apply_tables(&a);
    if (arch_validate(&a, st))
        return st->code;
    *out = a;
    return AS_OK;
}

/* ---------------------------------------------------------------- save */

enum { TEXT_BYTES = 256 };

/* Whether two doubles are the same bits (0.0 and -0.0 differ; a NaN
 * default differs from every value a valid spec holds). */
static bool same_double(double x, double y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Whether text can be written as a plain YAML scalar that reads back as
 * itself: a letter, digit or underscore, then those and . + -. */
static bool is_plain(const char *text)
{
    if (!text[0] ||
        !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", text[0]))
        return false;
    return strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-") ==
           strlen(text);
}

/* A name or DRAM type: plain when it can be, else double-quoted with
 * escapes for quotes, backslashes and control characters. */
static void write_text(FILE *out, const char *text)
{
    if (is_plain(text)) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(out, "\\x%02x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

/* Whether the field f differs between the structs at value and deflt
 * (bit for bit), and if so its value as text. */
static bool field_text(const field *f, const void *value, const void *deflt, char text[TEXT_BYTES])
{
    static const size_t BYTES[] = {[FIELD_INT] = sizeof(int),
                                   [FIELD_I64] = sizeof(int64_t),
                                   [FIELD_DOUBLE] = sizeof(double),
                                   [FIELD_BOOL] = sizeof(bool)};
    const char *v = (const char *)value + f->offset;
    if (memcmp(v, (const char *)deflt + f->offset, BYTES[f->type]) == 0)
        return false;
    if (f->type == FIELD_INT)
        snprintf(text, TEXT_BYTES, "%d", *(const int *)v);
    else if (f->type == FIELD_I64)
        snprintf(text, TEXT_BYTES, "%lld", (long long)*(const int64_t *)v);
    else if (f->type == FIELD_BOOL)
        snprintf(text, TEXT_BYTES, "%s", *(const bool *)v ? "true" : "false");
    else
        as_format_double(*(const double *)v, text);
    return true;
}

/* Whether key is in the NULL-terminated list keys (NULL: any key). */
static bool listed(const char *const *keys, const char *key)
{
    for (int i = 0; keys && keys[i]; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return !keys;
}

/*
 * The fields of the table, among allowed (NULL: all), that the struct at
 * value sets apart from deflt: one "key: value" line each at indent, or,
 * given a flow_key, all on one line "flow_key: {k: v, ...}" (nothing when
 * none differs).
 */
static void write_fields(FILE *out, const char *indent, const char *flow_key, const field *fields,
                         const void *value, const void *deflt, const char *const *allowed)
{
    char text[TEXT_BYTES];
    int n = 0;
    for (const field *f = fields; f->key; f++) {
        if (!listed(allowed, f->key) || !field_text(f, value, deflt, text))
            continue;
        if (!flow_key)
            fprintf(out, "%s%s: %s\n", indent, f->key, text);
        else if (n == 0)
            fprintf(out, "%s%s: {%s: %s", indent, flow_key, f->key, text);
        else
            fprintf(out, ", %s: %s", f->key, text);
        n++;
    }
    if (flow_key && n)
        fputs("}\n", out);
}

/* instances and mesh: nothing for one instance, instances alone for a
 * row (the reader's default mesh), both otherwise. */
static void write_instances(FILE *out, const char *indent, int64_t instances, int mesh_x,
                            int mesh_y)
{
    if (instances != 1)
        fprintf(out, "%sinstances: %lld\n", indent, (long long)instances);
    if (mesh_y != 1)
        fprintf(out, "%smesh: [%d, %d]\n", indent, mesh_x, mesh_y);
}

/* A capacity of words of word_bits in the largest unit that holds it
 * exactly ("2 KiB", "48 B"), else in words. */
static void format_size(int64_t words, int word_bits, char text[TEXT_BYTES])
{
    int64_t bits;
    for (int u = 3; u >= 0 && as_mul_i64(words, word_bits, &bits); u--) {
        int64_t unit_bits = SIZE_UNITS[u].bytes * 8;
        if (bits % unit_bits == 0) {
            snprintf(text, TEXT_BYTES, "%lld %s", (long long)(bits / unit_bits),
                     SIZE_UNITS[u].name);
            return;
        }
    }
    snprintf(text, TEXT_BYTES, "%lld words", (long long)words);
}

/* size, or split with the data spaces that have room; nothing for an
 * unbounded level. */
static void write_capacity(FILE *out, const arch_level *l)
{
    char text[TEXT_BYTES];
    if (!is_split(l)) {
        if (l->size_words) {
            format_size(l->size_words, l->word_bits, text);
            fprintf(out, "    size: %s\n", text);
        }
        return;
    }
    fputs("    split: {", out);
    for (int ds = 0, n = 0; ds < WL_NDATASPACES; ds++) {
        if (!l->size_words_by_ds[ds])
            continue;
        format_size(l->size_words_by_ds[ds], l->word_bits, text);
        fprintf(out, "%s%s: %s", n++ ? ", " : "", DATASPACE_NAMES[ds], text);
    }
    fputs("}\n", out);
}

/* "[weights, outputs]": the data spaces whose keep is (or, when equal is
 * false, is not) state; returns how many. */
static int format_dataspaces(const arch_keep keep[WL_NDATASPACES], arch_keep state, bool equal,
                             char text[TEXT_BYTES])
{
    int n = 0;
    size_t used = (size_t)snprintf(text, TEXT_BYTES, "[");
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if ((keep[ds] == state) == equal)
            used += (size_t)snprintf(text + used, TEXT_BYTES - used, "%s%s", n++ ? ", " : "",
                                     DATASPACE_NAMES[ds]);
    snprintf(text + used, TEXT_BYTES - used, "]");
    return n;
}

/* "{R: 3, S: 3}": the dimensions with a non-zero factor; returns how
 * many. */
static int format_dim_factors(const int64_t factor[WL_NDIMS], char text[TEXT_BYTES])
{
    int n = 0;
    size_t used = (size_t)snprintf(text, TEXT_BYTES, "{");
    for (int d = 0; d < WL_NDIMS; d++)
        if (factor[d])
            used += (size_t)snprintf(text + used, TEXT_BYTES - used, "%s%s: %lld", n++ ? ", " : "",
                                     wl_dim_name((wl_dim)d), (long long)factor[d]);
    snprintf(text + used, TEXT_BYTES - used, "}");
    return n;
}

/* "[R, S, C]": the first n dimensions of order. */
static void format_dim_order(const uint8_t order[WL_NDIMS], int n, char text[TEXT_BYTES])
{
    size_t used = (size_t)snprintf(text, TEXT_BYTES, "[");
    for (int i = 0; i < n && i < WL_NDIMS; i++)
        used += (size_t)snprintf(text + used, TEXT_BYTES - used, "%s%s", i ? ", " : "",
                                 wl_dim_name((wl_dim)order[i]));
    snprintf(text + used, TEXT_BYTES - used, "]");
}

/* A level's constraints block: every part that constrains anything, in
 * the order of CONSTRAINT_KEYS; nothing for an unconstrained level. */
static void write_constraints(FILE *out, const arch_constraints *c)
{
    char lines[8][TEXT_BYTES + 32], text[TEXT_BYTES];
    int n = 0;
    if (format_dim_factors(c->temporal_factor, text))
        snprintf(lines[n++], sizeof lines[0], "temporal_factors: %s", text);
    if (format_dim_factors(c->temporal_max, text))
        snprintf(lines[n++], sizeof lines[0], "temporal_max: %s", text);
    if (c->n_temporal_order) {
        format_dim_order(c->temporal_order, c->n_temporal_order, text);
        snprintf(lines[n++], sizeof lines[0], "temporal_order: %s", text);
    }
    if (format_dim_factors(c->spatial_factor, text))
        snprintf(lines[n++], sizeof lines[0], "spatial_factors: %s", text);
    if (c->n_spatial_order) {
        format_dim_order(c->spatial_order, c->n_spatial_order, text);
        snprintf(lines[n++], sizeof lines[0], "spatial_order: %s", text);
    }
    if (c->spatial_split_fixed)
        snprintf(lines[n++], sizeof lines[0], "spatial_split: %d", c->spatial_split);
    if (c->min_spatial_utilization != 0) {
        as_format_double(c->min_spatial_utilization, text);
        snprintf(lines[n++], sizeof lines[0], "min_spatial_utilization: %s", text);
    }
    if (format_dataspaces(c->keep, ARCH_KEEP_ALWAYS, true, text))
        snprintf(lines[n++], sizeof lines[0], "keep: %s", text);
    if (n)
        fputs("    constraints:\n", out);
    for (int i = 0; i < n; i++)
        fprintf(out, "      %s\n", lines[i]);
}

/* formats: the data spaces stored compressed, each as its name or, with
 * a width given, as a mapping; nothing when all are uncompressed. */
static void write_formats(FILE *out, const arch_level *l)
{
    int n = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const arch_ds_format *f = &l->format[ds];
        if (f->format == ARCH_FORMAT_UNCOMPRESSED)
            continue;
        fprintf(out, "%s%s: ", n++ ? ", " : "    formats: {", DATASPACE_NAMES[ds]);
        if (!f->metadata_bits && !f->offset_bits) {
            fputs(FORMAT_NAMES[f->format], out);
            continue;
        }
        fprintf(out, "{format: %s", FORMAT_NAMES[f->format]);
        if (f->metadata_bits)
            fprintf(out, ", metadata_bits: %d", f->metadata_bits);
        if (f->offset_bits)
            fprintf(out, ", offset_bits: %d", f->offset_bits);
        fputc('}', out);
    }
    if (n)
        fputs("}\n", out);
}

/* Level i of a, against the defaults d: identity, the DRAM's own keys,
 * capacity, the numeric keys, instances, keep, the maps, constraints. */
static void write_level(FILE *out, const arch_spec *a, const arch_spec *d, int i)
{
    const arch_level *l = &a->level[i], *dl = &d->level[i];
    char text[TEXT_BYTES];
    fputs("  - name: ", out);
    write_text(out, l->name);
    fprintf(out, "\n    kind: %s\n", LEVEL_KIND_NAMES[l->cls]);
    if (l->cls == ARCH_CLASS_DRAM) {
        if (a->dram.type[0]) {
            fputs("    type: ", out);
            write_text(out, a->dram.type);
            fputc('\n', out);
        }
        write_fields(out, "    ", NULL, DRAM_FIELDS, &a->dram, &d->dram, NULL);
    }
    write_capacity(out, l);
    write_fields(out, "    ", NULL, LEVEL_FIELDS, l, dl, NULL);
    write_instances(out, "    ", l->instances, l->mesh_x, l->mesh_y);
    if ((l->cls == ARCH_CLASS_SRAM || l->cls == ARCH_CLASS_REGFILE) &&
        format_dataspaces(l->constraints.keep, ARCH_KEEP_NEVER, true, text) > 0) {
        format_dataspaces(l->constraints.keep, ARCH_KEEP_NEVER, false, text);
        fprintf(out, "    keep: %s\n", text);
    }
    write_fields(out, "    ", "bandwidth", BANDWIDTH_FIELDS, l, dl, NULL);
    write_fields(out, "    ", "energy", ENERGY_FIELDS, l, dl, NULL);
    write_fields(out, "    ", "network", NETWORK_FIELDS, l, dl, NULL);
    write_constraints(out, &l->constraints);
    write_formats(out, l);
}

/* The compute unit, against the defaults dc (whose required keys are
 * zeroed so that they are always written). */
static void write_compute(FILE *out, const arch_compute *c, const arch_compute *dc)
{
    fputs("compute:\n  name: ", out);
    write_text(out, c->name);
    fprintf(out, "\n  kind: %s\n", COMPUTE_KIND_NAMES[c->kind]);
    write_instances(out, "  ", c->instances, c->mesh_x, c->mesh_y);
    write_fields(out, "  ", NULL, COMPUTE_FIELDS, c, dc, COMPUTE_KEYS_BY_KIND[c->kind]);
    if (c->kind == ARCH_COMPUTE_SYSTOLIC)
        fprintf(out, "  dataflow: %s\n", DATAFLOW_NAMES[c->dataflow]);
    if (c->mac_number != ARCH_NUMBER_INT)
        fprintf(out, "  mac_format: %s\n", MAC_FORMAT_NAMES[c->mac_number]);
    if (c->zero_action == ARCH_ZERO_NONE)
        return;
    fprintf(out, "  zero_handling: {action: %s, operands: [", ZERO_ACTION_NAMES[c->zero_action]);
    for (int ds = 0, n = 0; ds < WL_NDATASPACES; ds++)
        if (c->zero_operand[ds])
            fprintf(out, "%s%s", n++ ? ", " : "", DATASPACE_NAMES[ds]);
    fputc(']', out);
    if (c->gated_mac_fraction != 0) {
        char text[TEXT_BYTES];
        as_format_double(c->gated_mac_fraction, text);
        fprintf(out, ", gated_mac_fraction: %s", text);
    }
    fputs("}\n", out);
}

/* The shortest clock_MHz text that cycle_of_MHz turns back into
 * cycle_seconds to the last bit, among the doubles next to 1 / period
 * (several may do: 500 and 499.99999999999994 both give 2 ns); false
 * when none does. */
static bool format_clock_MHz(double cycle_seconds, char text[TEXT_BYTES])
{
    double MHz = 1.0 / cycle_seconds / 1e6;
    char candidate[TEXT_BYTES];
    bool found = false;
    for (int step = 0; step < 8; step++)
        MHz = nextafter(MHz, 0);
    for (int step = 0; step <= 16; step++, MHz = nextafter(MHz, INFINITY)) {
        if (!same_double(cycle_of_MHz(MHz), cycle_seconds))
            continue;
        as_format_double(MHz, candidate);
        if (!found || strlen(candidate) < strlen(text))
            snprintf(text, TEXT_BYTES, "%s", candidate);
        found = true;
    }
    return found;
}

double arch_clock_MHz(const arch_spec *a)
{
    char text[TEXT_BYTES];
    if (format_clock_MHz(a->cycle_seconds, text))
        return strtod(text, NULL);
    return 1.0 / a->cycle_seconds / 1e6;
}

/*
 * The values the reader assumes for each key of a left out, into d: the
 * same defaults functions, the DRAM's shared bandwidth as derived from its
 * GB/s, required keys zeroed (never equal to a valid value, so always
 * written), and for each energy and area either a's own value -- when
 * leaving it out makes the tables give back exactly that, checked by
 * reading it back so -- or NaN (which no value equals: written).
 */
static void defaults_of(const arch_spec *a, arch_spec *d)
{
    *d = *a;
    compute_defaults(&d->compute, a->compute.kind);
    for (const field *f = COMPUTE_FIELDS; f->key; f++)
        if (listed(COMPUTE_REQUIRED_BY_KIND[a->compute.kind], f->key))
            memset((char *)&d->compute + f->offset, 0, sizeof(int));
    d->technology_nm = 0;
    d->native_batch = 1;
    dram_defaults(&d->dram);
    for (int i = 0; i < a->n_levels; i++)
        level_defaults(&d->level[i], a->level[i].cls, a->compute.mac_bits);
    arch_level *last = &d->level[a->n_levels - 1];
    if (last->cls == ARCH_CLASS_DRAM)
        last->shared_bandwidth = dram_words_per_cycle(
            a->dram.bandwidth_GBps, a->level[a->n_levels - 1].word_bits, a->cycle_seconds);

    /* Which table values the tables give back when all are left out ... */
    arch_spec want = *a, probe = *a;
    double *wanted[TABLE_FIELDS_MAX], *probed[TABLE_FIELDS_MAX], *deflt[TABLE_FIELDS_MAX];
    bool omit[TABLE_FIELDS_MAX];
    int n = table_fields(&want, wanted);
    table_fields(&probe, probed);
    table_fields(d, deflt);
    for (int k = 0; k < n; k++)
        *probed[k] = NAN;
    fill_from_tables(&probe);
    for (int k = 0; k < n; k++)
        omit[k] = same_double(*probed[k], *wanted[k]);
    /* ... and whether leaving out just those (the others given) still
     * does; if not, every value is written. */
    probe = *a;
    for (int k = 0; k < n; k++)
        if (omit[k])
            *probed[k] = NAN;
    fill_from_tables(&probe);
    bool faithful = true;
    for (int k = 0; k < n; k++)
        faithful = faithful && same_double(*probed[k], *wanted[k]);
    for (int k = 0; k < n; k++)
        *deflt[k] = faithful && omit[k] ? *wanted[k] : NAN;
}

/* The document: top keys, compute, then the levels innermost first. */
static void write_arch(FILE *out, const arch_spec *a, const arch_spec *d)
{
    char text[TEXT_BYTES];
    fputs("# An architecture in accelsearch's format (docs/arch-format.md), written by arch_save.\n"
          "name: ",
          out);
    write_text(out, a->name);
    fputc('\n', out);
    write_fields(out, "", NULL, TOP_FIELDS, a, d, NULL);
    if (format_clock_MHz(a->cycle_seconds, text))
        fprintf(out, "clock_MHz: %s\n", text);
    else {
        as_format_double(a->cycle_seconds, text);
        fprintf(out, "cycle_seconds: %s\n", text);
    }
    write_compute(out, &a->compute, &d->compute);
    fputs("levels:                         # innermost first\n", out);
    for (int i = 0; i < a->n_levels; i++)
        write_level(out, a, d, i);
}

/*
 * What arch_validate accepts but the format cannot say: a dram level
 * other than the last, or DRAM parameters without one; duplicate level names; a DRAM type the
 * energy table does not know; a dataflow on other than a systolic array;
 * a dummy that may keep data, or a dram that may not.
 */
static as_code check_writable(const arch_spec *a, as_status *st)
{
    if (arch_validate(a, st))
        return st->code;
    const char *n = a->name;
    if (a->dram.type[0] && arch_dram_pJ_per_bit(a->dram.type) < 0)
        return as_fail(st, AS_EINVAL, "arch '%s': dram type '%s' is not in the energy table", n,
                       a->dram.type);
    if (a->level[a->n_levels - 1].cls != ARCH_CLASS_DRAM &&
        (a->dram.type[0] || a->dram.channels != 1 || a->dram.bandwidth_GBps ||
         a->dram.energy_pJ_per_bit || a->dram.interface_pJ_per_bit))
        return as_fail(st, AS_EINVAL, "arch '%s': DRAM parameters but no dram level", n);
    if (a->compute.kind != ARCH_COMPUTE_SYSTOLIC && a->compute.dataflow != ARCH_DATAFLOW_OS)
        return as_fail(st, AS_EINVAL, "arch '%s': only a systolic compute unit has a dataflow", n);
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM && i != a->n_levels - 1)
            return as_fail(st, AS_EINVAL, "arch '%s': level '%s': a dram must be the last level", n,
                           l->name);
        for (int j = 0; j < i; j++)
            if (strcmp(a->level[j].name, l->name) == 0)
                return as_fail(st, AS_EINVAL, "arch '%s': two levels are named '%s'", n, l->name);
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if ((l->cls == ARCH_CLASS_DUMMY) != (l->constraints.keep[ds] == ARCH_KEEP_NEVER) &&
                (l->cls == ARCH_CLASS_DUMMY || l->cls == ARCH_CLASS_DRAM))
                return as_fail(st, AS_EINVAL, "arch '%s': level '%s': a %s %s %s", n, l->name,
                               LEVEL_KIND_NAMES[l->cls],
                               l->cls == ARCH_CLASS_DUMMY ? "cannot keep" : "must keep",
                               DATASPACE_NAMES[ds]);
    }
    return AS_OK;
}

as_code arch_save(const arch_spec *a, const char *path, as_status *st)
{
    as_status spare;
    st = as_status_or(st, &spare);
    if (!a || !path || !path[0])
        return as_fail(st, AS_EINVAL, "arch_save: no architecture or no path");
    if (check_writable(a, st))
        return st->code;
    arch_spec d;
    defaults_of(a, &d);
    FILE *out = fopen(path, "w");
    if (!out)
        return as_fail(st, AS_EIO, "%s: cannot write: %s", path, strerror(errno));
    write_arch(out, a, &d);
    bool failed = ferror(out) != 0;
    failed = fclose(out) != 0 || failed;
    return failed ? as_fail(st, AS_EIO, "%s: write failed: %s", path, strerror(errno)) : AS_OK;
}
