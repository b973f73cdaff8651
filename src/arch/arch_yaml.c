/*
 * arch_yaml.c -- arch_load: a built-in preset by name, or an architecture
 * written in accelsearch's own YAML format (docs/arch-format.md).
 *
 * The reader is strict.  Every mapping's keys are checked against what its
 * kind allows (a dummy level has no size, a MAC unit no rows), every value
 * is type- and range-checked where it is read, and every message names the
 * file, the line and the key path ("arch.yaml:12: levels[1].size: ...").
 * Numeric keys are read through tables (struct field) that put each key's
 * range and destination in one place.  Energies and areas left out are
 * then filled from the technology tables (arch_apply_tables) and the whole
 * design must pass arch_validate, whose checks are not repeated here.
 */
#include "arch.h"

#include <stdio.h>
#include <string.h>

enum { KEY_BYTES = 96, LIST_BYTES = 160 };

/* Where a mapping is being read: the document (for its path), the status,
 * and the key path of the mapping ("" at the top, "levels[2]") that
 * prefixes the keys named in messages. */
typedef struct reader {
    const as_yaml_doc *doc;
    as_status *st;
    char where[64];
} reader;

/* A reader for the mapping under `key` (or item `index` of the sequence
 * under key when index >= 0) of r's mapping. */
static reader inner_reader(const reader *r, const char *key, int index)
{
    reader in = *r;
    if (index >= 0)
        snprintf(in.where, sizeof in.where, "%.20s[%d]", key, index);
    else
        snprintf(in.where, sizeof in.where, "%.40s%s%.20s", r->where, r->where[0] ? "." : "", key);
    return in;
}

/* The full key path of key in r's mapping, into buf (KEY_BYTES). */
static const char *key_path(const reader *r, const char *key, char *buf)
{
    snprintf(buf, KEY_BYTES, "%.63s%s%.30s", r->where, r->where[0] && key[0] ? "." : "", key);
    return buf;
}

/* Fail with "path:line: where.key: <message>" (no key path at the top of
 * the document); line is node's, or 0 when there is no node. */
static as_code fail_at(const reader *r, const as_yaml_node *node, const char *key, const char *fmt,
                       ...) AS_PRINTF(4, 5);
static as_code fail_at(const reader *r, const as_yaml_node *node, const char *key, const char *fmt,
                       ...)
{
    char message[AS_MSG_BYTES], path[KEY_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    key_path(r, key, path);
    return as_fail(r->st, AS_EINVAL, "%s:%d: %s%s%s", r->doc->path, node ? node->line : 0, path,
                   path[0] ? ": " : "", message);
}

/* "a, b, c" from a NULL-terminated list, into buf (LIST_BYTES). */
static const char *join_names(const char *const *names, char *buf)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; names[i] && used < LIST_BYTES; i++)
        used += (size_t)snprintf(buf + used, LIST_BYTES - used, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

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
    char key[KEY_BYTES];
    char *dst = (char *)base + f->offset;
    int64_t whole = 0;
    double number = 0;
    key_path(r, f->key, key);
    if (f->type == FIELD_BOOL)
        return as_yaml_bool(r->doc, node, key, (bool *)dst, r->st);
    if (f->type == FIELD_DOUBLE ? as_yaml_double(r->doc, node, key, &number, r->st)
                                : as_yaml_int(r->doc, node, key, &whole, r->st))
        return r->st->code;
    if (f->type != FIELD_DOUBLE)
        number = (double)whole;
    if (!(number >= f->min && number <= f->max))
        return fail_at(r, node, f->key, "'%s' is out of range (%.15g to %.15g)", node->scalar,
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

/* Fail unless node is a mapping (key names it for the message). */
static as_code expect_mapping(const reader *r, const as_yaml_node *node, const char *key)
{
    if (node->kind == AS_YAML_MAPPING)
        return AS_OK;
    return fail_at(r, node, key, "expected a mapping, got a %s",
                   node->kind == AS_YAML_SEQUENCE ? "sequence" : "scalar");
}

/* Fail unless every key of map is in the NULL-terminated list keys. */
static as_code check_keys(const reader *r, const as_yaml_node *map, const char *const *keys)
{
    return as_yaml_check_keys(r->doc, map, r->where[0] ? r->where : "the architecture", keys,
                              r->st);
}

/* Fail unless map has every key of the NULL-terminated list required. */
static as_code require_keys(const reader *r, const as_yaml_node *map, const char *const *required)
{
    for (int i = 0; required[i]; i++)
        if (!as_yaml_get(map, required[i]))
            return fail_at(r, map, "", "missing key '%s'", required[i]);
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
    if (expect_mapping(r, sub, key))
        return r->st->code;
    for (const field *f = fields; f->key && n < 15; f++)
        keys[n++] = f->key;
    keys[n] = NULL;
    reader in = inner_reader(r, key, -1);
    if (check_keys(&in, sub, keys))
        return r->st->code;
    return read_fields(&in, sub, fields, base);
}

/* The text of the scalar under key, copied into dst (bytes, NUL
 * included); absent keys leave dst as it is. */
static as_code read_string(const reader *r, const as_yaml_node *map, const char *key, char *dst,
                           size_t bytes)
{
    const as_yaml_node *node = as_yaml_get(map, key);
    if (!node)
        return AS_OK;
    if (node->kind != AS_YAML_SCALAR || !node->scalar[0])
        return fail_at(r, node, key, "expected a name");
    if (strlen(node->scalar) >= bytes)
        return fail_at(r, node, key, "'%.40s...' is longer than %zu characters", node->scalar,
                       bytes - 1);
    memcpy(dst, node->scalar, strlen(node->scalar) + 1);
    return AS_OK;
}

/* The position of node's text in the NULL-terminated list names (the enum
 * value the list is indexed by). */
static as_code read_choice(const reader *r, const as_yaml_node *node, const char *key,
                           const char *const *names, int *index)
{
    char list[LIST_BYTES];
    if (node->kind == AS_YAML_SCALAR)
        for (int i = 0; names[i]; i++)
            if (strcmp(node->scalar, names[i]) == 0) {
                *index = i;
                return AS_OK;
            }
    return fail_at(r, node, key, "expected one of %s, got '%.40s'", join_names(names, list),
                   node->kind == AS_YAML_SCALAR ? node->scalar : "(not a scalar)");
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
            return fail_at(r, node, key, "'%s' is too large", text);
    for (size_t u = 0; digits && u < sizeof SIZE_UNITS / sizeof SIZE_UNITS[0]; u++) {
        if (strcmp(unit, SIZE_UNITS[u].name) != 0)
            continue;
        if (count == 0)
            return fail_at(r, node, key, "a capacity must be positive");
        if (!SIZE_UNITS[u].bytes) {
            *words = count;
            return AS_OK;
        }
        if (!as_mul_i64(count, SIZE_UNITS[u].bytes * 8, &bits))
            return fail_at(r, node, key, "'%s' is too large", text);
        if (bits % word_bits)
            return fail_at(r, node, key, "'%s' is not a whole number of %d-bit words", text,
                           word_bits);
        *words = bits / word_bits;
        return AS_OK;
    }
    return fail_at(r, node, key, "expected a capacity such as '2 KiB', '512 B' or '64 words', "
                   "got '%.40s'", node->kind == AS_YAML_SCALAR ? text : "(not a scalar)");
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
            return fail_at(r, count, "instances", "%lld is too many for a mesh row; give mesh",
                           (long long)*instances);
        *mesh_x = (int)*instances;
        *mesh_y = 1;
        return AS_OK;
    }
    if (mesh->kind != AS_YAML_SEQUENCE || mesh->n != 2)
        return fail_at(r, mesh, "mesh", "expected [x, y], two integers");
    for (int i = 0; i < 2; i++)
        if (read_field(r, mesh->items[i], &SIDE, &side[i]))
            return r->st->code;
    int64_t product = (int64_t)side[0] * side[1];
    if (count && product != *instances)
        return fail_at(r, mesh, "mesh", "%d x %d = %lld does not match instances: %lld", side[0],
                       side[1], (long long)product, (long long)*instances);
    *instances = product;
    *mesh_x = side[0];
    *mesh_y = side[1];
    return AS_OK;
}

/* -------------------------------------------------------------- levels */

/* Data-space names in the format, indexed by wl_dataspace_id. */
static const char *const DATASPACE_NAMES[] = {"weights", "inputs", "outputs", NULL};

/* keep: [weights, inputs, outputs] -- the data spaces the level may hold;
 * every other one is bypassed.  Absent: the level may keep any. */
static as_code read_keep(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *keep = as_yaml_get(map, "keep");
    if (!keep)
        return AS_OK;
    if (keep->kind != AS_YAML_SEQUENCE)
        return fail_at(r, keep, "keep", "expected a list of data spaces, e.g. [weights, outputs]");
    bool kept[WL_NDATASPACES] = {false};
    for (int i = 0; i < keep->n; i++) {
        int ds;
        if (read_choice(r, keep->items[i], "keep", DATASPACE_NAMES, &ds))
            return r->st->code;
        if (kept[ds])
            return fail_at(r, keep->items[i], "keep", "'%s' is listed twice", DATASPACE_NAMES[ds]);
        kept[ds] = true;
    }
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        lv->bypass[ds] = !kept[ds];
    return AS_OK;
}

/*
 * The capacity of a storage level: size (one capacity shared by every
 * data space) or split (a capacity per data space, as FAST's per-data-space
 * L1 sizes; a data space left out of the split cannot be held there and
 * must not be in keep).  Exactly one of the two.
 */
static as_code read_capacity(const reader *r, const as_yaml_node *map, arch_level *lv)
{
    const as_yaml_node *size = as_yaml_get(map, "size"), *split = as_yaml_get(map, "split");
    if (!size == !split)
        return fail_at(r, size ? size : map, size ? "size" : "",
                       size ? "give size or split, not both" : "missing key 'size' (or 'split')");
    if (size)
        return read_size_words(r, size, "size", lv->word_bits, &lv->size_words);
    if (expect_mapping(r, split, "split"))
        return r->st->code;
    reader in = inner_reader(r, "split", -1);
    if (check_keys(&in, split, DATASPACE_NAMES))
        return r->st->code;
    lv->size_words = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const as_yaml_node *part = as_yaml_get(split, DATASPACE_NAMES[ds]);
        if (!part) {
            if (!lv->bypass[ds] && as_yaml_get(map, "keep"))
                return fail_at(r, split, "split", "keeps %s but gives it no capacity",
                               DATASPACE_NAMES[ds]);
            lv->bypass[ds] = true;
            continue;
        }
        if (read_size_words(&in, part, DATASPACE_NAMES[ds], lv->word_bits,
                            &lv->size_words_by_ds[ds]) ||
            !as_add_i64(lv->size_words, lv->size_words_by_ds[ds], &lv->size_words))
            return as_fail(r->st, AS_EINVAL, "%s:%d: %s: capacities too large", r->doc->path,
                           split->line, in.where);
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
    {NULL, 0, 0, 0, 0},
};

/* Level kinds, indexed by arch_class, with the keys each allows and
 * needs.  A dummy only spreads data over its instances; the DRAM is one
 * unbounded instance keeping everything, with a bandwidth in GB/s. */
static const char *const LEVEL_KIND_NAMES[] = {"dram", "sram", "regfile", "dummy", NULL};
static const char *const STORAGE_KEYS[] = {
    "name", "kind", "size", "split", "word_bits", "block", "cluster", "instances", "mesh", "keep",
    "multiple_buffering", "bandwidth", "energy", "area_um2", "network", NULL};
static const char *const DRAM_KEYS[] = {"name", "kind", "type", "channels", "bandwidth_GBps",
                                        "energy_pJ_per_bit", "word_bits", "block", "energy",
                                        "network", NULL};
static const char *const DUMMY_KEYS[] = {"name", "kind", "instances", "mesh", "network", NULL};
static const char *const *const LEVEL_KEYS[] = {
    [ARCH_CLASS_DRAM] = DRAM_KEYS,
    [ARCH_CLASS_SRAM] = STORAGE_KEYS,
    [ARCH_CLASS_REGFILE] = STORAGE_KEYS,
    [ARCH_CLASS_DUMMY] = DUMMY_KEYS,
};
static const char *const NAME_REQUIRED[] = {"name", NULL};
static const char *const DRAM_REQUIRED[] = {"name", "type", NULL};
static const char *const *const LEVEL_REQUIRED[] = {
    [ARCH_CLASS_DRAM] = DRAM_REQUIRED,
    [ARCH_CLASS_SRAM] = NAME_REQUIRED,
    [ARCH_CLASS_REGFILE] = NAME_REQUIRED,
    [ARCH_CLASS_DUMMY] = NAME_REQUIRED,
};

/*
 * The DRAM's keys: its type and channels (default 1), its bandwidth -- total over the
 * channels, in GB/s, turned into the level's shared bandwidth in words per
 * cycle at the design's clock (0: unlimited) -- and its energy per bit
 * (absent: the table's for the type, which the table must know).
 */
static as_code read_dram(const reader *r, const as_yaml_node *map, double cycle_seconds,
                         arch_level *lv, arch_dram *dram)
{
    dram->channels = 1;
    if (read_string(r, map, "type", dram->type, sizeof dram->type) ||
        read_fields(r, map, DRAM_FIELDS, dram))
        return r->st->code;
    if (arch_dram_pJ_per_bit(dram->type) < 0)
        return fail_at(r, as_yaml_get(map, "type"), "type",
                       "'%s' is not in the DRAM energy table", dram->type);
    lv->shared_bandwidth = dram->bandwidth_GBps * 1e9 * 8 * cycle_seconds / lv->word_bits;
    return AS_OK;
}

/* Defaults of a level of class cls before its keys are read: one
 * instance, words as wide as the MACs' operands, unlimited bandwidth, a
 * network with multicast and spatial reduction (Timeloop's legacy
 * network), and a dummy keeping nothing. */
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
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        lv->bypass[ds] = cls == ARCH_CLASS_DUMMY;
}

/* One item of levels: its kind first (it decides the keys allowed), then
 * the keys in an order where each finds what it depends on (a capacity in
 * bytes needs word_bits). */
static as_code read_level(const reader *r, const as_yaml_node *map, arch_spec *a, arch_level *lv)
{
    const as_yaml_node *kind = as_yaml_get(map, "kind");
    int cls;
    if (expect_mapping(r, map, ""))
        return r->st->code;
    if (!kind)
        return fail_at(r, map, "", "missing key 'kind' (%s)", "dram, sram, regfile or dummy");
    if (read_choice(r, kind, "kind", LEVEL_KIND_NAMES, &cls))
        return r->st->code;
    level_defaults(lv, (arch_class)cls, a->compute.mac_bits);
    if (check_keys(r, map, LEVEL_KEYS[cls]) || require_keys(r, map, LEVEL_REQUIRED[cls]) ||
        read_string(r, map, "name", lv->name, sizeof lv->name) ||
        read_fields(r, map, LEVEL_FIELDS, lv) ||
        read_field_map(r, map, "bandwidth", BANDWIDTH_FIELDS, lv) ||
        read_field_map(r, map, "energy", ENERGY_FIELDS, lv) ||
        read_field_map(r, map, "network", NETWORK_FIELDS, lv) ||
        read_instances(r, map, &lv->instances, &lv->mesh_x, &lv->mesh_y))
        return r->st->code;
    if (lv->cls == ARCH_CLASS_DRAM)
        return read_dram(r, map, a->cycle_seconds, lv, &a->dram);
    if (lv->cls == ARCH_CLASS_DUMMY)
        return AS_OK;
    if (read_keep(r, map, lv))
        return r->st->code;
    return read_capacity(r, map, lv);
}

/*
 * levels: innermost first, 1 to ARCH_MAX_LEVELS of them, names unique,
 * and the DRAM (the backing store) last and only last.
 */
static as_code read_levels(const reader *r, const as_yaml_node *levels, arch_spec *a)
{
    if (levels->kind != AS_YAML_SEQUENCE || levels->n < 1 || levels->n > ARCH_MAX_LEVELS)
        return fail_at(r, levels, "levels", "expected a list of 1 to %d levels, innermost first",
                       ARCH_MAX_LEVELS);
    a->n_levels = levels->n;
    for (int i = 0; i < levels->n; i++) {
        reader in = inner_reader(r, "levels", i);
        const as_yaml_node *item = levels->items[i];
        arch_level *lv = &a->level[i];
        if (read_level(&in, item, a, lv))
            return r->st->code;
        for (int j = 0; j < i; j++)
            if (strcmp(a->level[j].name, lv->name) == 0)
                return fail_at(&in, as_yaml_get(item, "name"), "name",
                               "'%s' already names levels[%d]", lv->name, j);
        bool last = i == levels->n - 1;
        if ((lv->cls == ARCH_CLASS_DRAM) != last)
            return fail_at(&in, as_yaml_get(item, "kind"), "kind",
                           last ? "the last level (the backing store) must be the dram"
                                : "the dram must be the last level (levels are innermost first)");
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
                          "area_um2", NULL},
    [ARCH_COMPUTE_SYSTOLIC] = {"name", "kind", "instances", "mesh", "mac_bits", "mac_format",
                               "mac_pJ", "area_um2", "rows", "cols", "dataflow", NULL},
    [ARCH_COMPUTE_VECTOR] = {"name", "kind", "instances", "mesh", "mac_bits", "mac_format",
                             "mac_pJ", "area_um2", "lanes", NULL},
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

/* An enumerated key of map (absent: *value keeps its default). */
static as_code read_optional_choice(const reader *r, const as_yaml_node *map, const char *key,
                                    const char *const *names, int *value)
{
    const as_yaml_node *node = as_yaml_get(map, key);
    return node ? read_choice(r, node, key, names, value) : AS_OK;
}

/* compute: the kind first (it decides the keys), then the rest; the name
 * defaults to the kind's.  The MAC must be one the energy tables cover
 * (not fp12, nor a bf16 of other than 16 bits), as arch_validate wants. */
static as_code read_compute(const reader *top, const as_yaml_node *map, int node_nm,
                            arch_compute *c)
{
    reader r = inner_reader(top, "compute", -1);
    const as_yaml_node *kind = as_yaml_get(map, "kind");
    int k, dataflow = ARCH_DATAFLOW_OS, number = ARCH_NUMBER_INT;
    if (expect_mapping(top, map, "compute"))
        return top->st->code;
    if (!kind)
        return fail_at(&r, map, "", "missing key 'kind' (mac, systolic or vector)");
    if (read_choice(&r, kind, "kind", COMPUTE_KIND_NAMES, &k))
        return r.st->code;
    memset(c, 0, sizeof *c);
    c->kind = (arch_compute_kind)k;
    c->instances = c->mesh_x = c->mesh_y = 1;
    c->rows = c->cols = 1;
    snprintf(c->name, sizeof c->name, "%s", COMPUTE_KIND_NAMES[k]);
    if (check_keys(&r, map, COMPUTE_KEYS_BY_KIND[k]) ||
        require_keys(&r, map, COMPUTE_REQUIRED_BY_KIND[k]) ||
        read_string(&r, map, "name", c->name, sizeof c->name) ||
        read_fields(&r, map, COMPUTE_FIELDS, c) ||
        read_instances(&r, map, &c->instances, &c->mesh_x, &c->mesh_y) ||
        read_optional_choice(&r, map, "dataflow", DATAFLOW_NAMES, &dataflow) ||
        read_optional_choice(&r, map, "mac_format", MAC_FORMAT_NAMES, &number))
        return r.st->code;
    c->dataflow = (arch_dataflow)dataflow;
    c->mac_number = (arch_number)number;
    if (arch_mac_number_pJ(c->mac_bits, c->mac_number, node_nm) < 0)
        return fail_at(&r, as_yaml_get(map, "mac_bits"), "mac_bits",
                       "the energy tables have no %d-bit %s MAC", c->mac_bits,
                       MAC_FORMAT_NAMES[number]);
    return AS_OK;
}

/* ------------------------------------------------------------ document */

static const char *const TOP_KEYS[] = {"name",         "technology_nm", "clock_MHz", "native_batch",
                                       "compute",      "levels",        NULL};
static const char *const TOP_REQUIRED[] = {"name",    "technology_nm", "clock_MHz",
                                           "compute", "levels",        NULL};
static const field TOP_FIELDS[] = {
    {"technology_nm", FIELD_INT, offsetof(arch_spec, technology_nm), ARCH_NODE_MIN_NM,
     ARCH_NODE_MAX_NM},
    {"native_batch", FIELD_INT, offsetof(arch_spec, native_batch), 1, 1 << 20},
    {NULL, 0, 0, 0, 0},
};

/* The whole document into a: the top keys, then compute (whose mac_bits
 * the levels' word_bits default to), then the levels. */
static as_code read_arch(const reader *r, const as_yaml_node *root, arch_spec *a)
{
    static const field CLOCK = {"clock_MHz", FIELD_DOUBLE, 0, 1e-3, 1e6};
    double clock_MHz;
    if (!root)
        return as_fail(r->st, AS_EINVAL, "%s: empty document, expected an architecture",
                       r->doc->path);
    if (expect_mapping(r, root, "") || check_keys(r, root, TOP_KEYS) ||
        require_keys(r, root, TOP_REQUIRED) ||
        read_string(r, root, "name", a->name, sizeof a->name) ||
        read_fields(r, root, TOP_FIELDS, a) ||
        read_field(r, as_yaml_get(root, "clock_MHz"), &CLOCK, &clock_MHz))
        return r->st->code;
    a->cycle_seconds = 1e-6 / clock_MHz;
    if (read_compute(r, as_yaml_get(root, "compute"), a->technology_nm, &a->compute))
        return r->st->code;
    return read_levels(r, as_yaml_get(root, "levels"), a);
}

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
        arch_apply_tables(&a);
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
    as_status ignored;
    if (!st) {
        as_status_clear(&ignored);
        st = &ignored;
    }
    if (!preset_or_path || !preset_or_path[0])
        return as_fail(st, AS_EINVAL, "no architecture given (a preset name or a YAML file)");
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
