/*
 * timeloop_io.c -- Timeloop's inputs: read a timeloop-model input
 * (architecture, problem, mapping) or a timeloop-mapper input
 * (architecture, problem, architecture_constraints, mapper settings) with
 * their Accelergy ERT / ART tables into a map_timeloop_case /
 * map_mapper_case, and write a case back as a timeloop-model input (see
 * mapping.h).
 *
 * Supported is what Timeloop's v0.4 front end dumps (the files under
 * tests/data/timeloop): a flattened architecture tree whose nodes
 * carry `local` component lists, a CNN-style problem with named dimensions,
 * coefficients and projections, and lists of temporal / spatial / datatype
 * (bypass) directives, as a mapping or as constraints.  Sections that only
 * feed Accelergy (compound_components, globals) are accepted and ignored.
 * Everything else is strict: unknown keys, wrong types and impossible
 * values fail with the file, line and key.
 *
 * Timeloop's conventions, kept here:
 *  - components are listed outermost first; storage levels become
 *    arch_spec levels innermost first, and the one arithmetic component
 *    (the innermost) becomes arch_spec.compute;
 *  - "Name[1..16]" means 16 instances, laid out meshX x meshY;
 *  - a vector access moves block_size = width / (datawidth * cluster_size)
 *    words (an explicit block_size attribute wins); capacity is
 *    depth * block_size words, unbounded when depth is absent (DRAM);
 *  - in the mapping, permutations list dimensions innermost first; a
 *    dimension a directive leaves out gets factor 1 (and goes outermost
 *    in the permutation, in problem order); a spatial split defaults to
 *    "all on X"; a data space a level is not told to bypass is kept;
 *  - constraints: see "mapping and constraints" below for factors, partial
 *    permutations and splits, and "mapper settings" for the mapper keys;
 *  - energies come from the ERT per vector action (a fill costs a write,
 *    an update costs an update, or a write when the table has none);
 *    areas from the ART per instance.  Without an ERT / ART, accelsearch's
 *    own tables (arch_apply_tables) stand in.
 * A model input written for a network layer may carry an `accelsearch`
 * section (timeloop_save.c), read by read_layer_context.
 * Deliberate difference: a dummy_storage container keeps nothing, whatever
 * the mapping says; a directive to keep a data space there is an error
 * (Timeloop would model a one-word buffer).
 */
#include "mapping.h"
#include "timeloop_private.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest ERT / ART component name ("top.sub.GLB[1..16]"). */
enum { PATH_BYTES = 192, MAX_COEFFICIENTS = 16 };

/* What the reader knows besides the output: the document being read and
 * the tables that link the three files and the three sections. */
typedef struct reader {
    as_yaml_reader at; /* the file being read (core's strict reader), for messages */
    map_timeloop_case *out;
    /* Architecture: ERT / ART names, storage levels outermost first while
     * the tree is walked, innermost first afterwards (like out->arch). */
    char level_path[ARCH_MAX_LEVELS][PATH_BYTES];
    char compute_path[PATH_BYTES];
    bool have_compute;
    /* Problem: the slot of each dimension, in the order the shape lists them. */
    int n_dims;
    wl_dim dim_slot[WL_NDIMS];
    int n_coefficients;
    const char *coefficient_name[MAX_COEFFICIENTS];
    int64_t coefficient_value[MAX_COEFFICIENTS];
    /* The layer context's DRAM interface, set once the tables are read. */
    double dram_bandwidth_GBps, dram_pJ_per_bit;
    /* The accelsearch_arch section (read_arch_extras), applied after the
     * tables: what Timeloop's format cannot say about the design. */
    bool have_extras;
    arch_dram extras_dram;
    int extras_native_batch;
    bool hop_given[ARCH_MAX_LEVELS];
    double hop_pJ[ARCH_MAX_LEVELS];
    int split_ds[ARCH_MAX_LEVELS]; /* the one data space a level's capacity is for, or -1 */
    bool unicast[ARCH_MAX_LEVELS]; /* a level whose network does not multicast */
} reader;

/* --------------------------------------------------------------- helpers */

/* Fail with "file:line: key.path: <message>" at node (or without the
 * line); the message names the key itself. */
static as_code fail_at(const reader *r, const as_yaml_node *node, const char *fmt, ...)
    AS_PRINTF(3, 4);
static as_code fail_at(const reader *r, const as_yaml_node *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    as_code rc = as_yaml_vfail(&r->at, node, "", fmt, ap);
    va_end(ap);
    return rc;
}

/* The integer under key of map (at least min; absent: *value stays, an
 * error when required).  Every integer of these files (sizes, widths,
 * counts, bounds, factors) lies in min .. INT32_MAX, so products of two of
 * them cannot overflow int64 and each fits the int fields of arch_spec. */
static as_code read_int(const reader *r, const as_yaml_node *map, const char *key, bool required,
                        int64_t min, int64_t *value)
{
    return as_yaml_read_int(&r->at, map, key, required, min, INT32_MAX, value);
}

/* The text of scalar key in map (required unless *text is preset). */
static as_code read_text(const reader *r, const as_yaml_node *map, const char *key,
                         const char **text)
{
    return as_yaml_read_text(&r->at, map, key, !*text, text);
}

/* Read the text under key of map (*text holds the default when absent)
 * and fail unless it is the one value supported: "<what> 'x' is not
 * supported (expected <supported>)". */
static as_code read_supported(const reader *r, const as_yaml_node *map, const char *key,
                              const char *what, const char *supported, const char **text)
{
    as_code rc = read_text(r, map, key, text);
    if (rc == AS_OK && strcmp(*text, supported) != 0)
        rc = fail_at(r, as_yaml_get(map, key), "%s '%s' is not supported (expected %s)", what,
                     *text, supported);
    return rc;
}

/* Copy text into a fixed-size name field, failing when it does not fit. */
static as_code copy_name(const reader *r, const as_yaml_node *node, char *dst, size_t dst_bytes,
                         const char *text, size_t length)
{
    if (length >= dst_bytes)
        return fail_at(r, node, "name '%.*s' is longer than %zu characters", (int)length, text,
                       dst_bytes - 1);
    memcpy(dst, text, length);
    dst[length] = '\0';
    return AS_OK;
}

/* ---------------------------------------------------------- architecture */

/* Component classes: storage classes give the level class; the arithmetic
 * unit is CLASS_COMPUTE.  A "storage" node names its class in `subclass`. */
enum { CLASS_COMPUTE = -1, CLASS_BY_SUBCLASS = -2, CLASS_UNKNOWN = -3 };
static const struct {
    const char *name;
    int cls;
} component_classes[] = {
    {"DRAM", ARCH_CLASS_DRAM},
    {"SRAM", ARCH_CLASS_SRAM},
    {"smartbuffer_SRAM", ARCH_CLASS_SRAM},
    {"regfile", ARCH_CLASS_REGFILE},
    {"smartbuffer_RF", ARCH_CLASS_REGFILE},
    {"aladdin_register", ARCH_CLASS_REGFILE},
    {"dummy_storage", ARCH_CLASS_DUMMY},
    {"intmac", CLASS_COMPUTE},
    {"storage", CLASS_BY_SUBCLASS},
};

static int class_of(const char *name)
{
    for (size_t i = 0; i < sizeof component_classes / sizeof component_classes[0]; i++)
        if (strcmp(component_classes[i].name, name) == 0)
            return component_classes[i].cls;
    return CLASS_UNKNOWN;
}

/* Attributes a component may carry.  Those not read below (banks, ports,
 * power gating, overbooking, ...) only matter to Accelergy or the mapper. */
/* clang-format off */
static const char *const storage_attributes[] = {
    "depth", "width", "datawidth", "block_size", "cluster_size", "meshX", "meshY",
    "multiple_buffering", "read_bandwidth", "write_bandwidth", "shared_bandwidth",
    "reduction_supported", "technology", "global_cycle_seconds", "type", "n_banks", "nports",
    "num_ports", "update_fifo_depth", "min_utilization", "allow_overbooking", "has_power_gating",
    "power_gated_at", NULL};
static const char *const compute_attributes[] = {
    "datawidth", "width", "multiplier_width", "adder_width", "meshX", "meshY", "technology",
    "global_cycle_seconds", "has_power_gating", "power_gated_at", NULL};
static const char *const node_attributes[] = {
    "version", "technology", "global_cycle_seconds", "datawidth", "has_power_gating",
    "power_gated_at", NULL};
/* clang-format on */

/* Node size in nm from a technology attribute such as "45nm"; 0 when it
 * says something else ("SET ME", -1 for dummies). */
static int technology_nm(const as_yaml_node *attributes)
{
    const as_yaml_node *tech = as_yaml_get(attributes, "technology");
    if (!tech || tech->kind != AS_YAML_SCALAR)
        return 0;
    char *end;
    long nm = strtol(tech->scalar, &end, 10);
    return nm > 0 && nm < 100000 && strcmp(end, "nm") == 0 ? (int)nm : 0;
}

/* Read a count (up to 9 decimal digits, so that it fits an int) at *s
 * and step past it; false when there is none. */
static bool read_count(const char **s, int64_t *count)
{
    int digits = 0;
    for (*count = 0; **s >= '0' && **s <= '9' && digits < 10; (*s)++, digits++)
        *count = *count * 10 + (**s - '0');
    return digits > 0 && digits < 10;
}

/* Step past text at *s; false when *s does not start with it. */
static bool skip_text(const char **s, const char *text)
{
    size_t n = strlen(text);
    if (strncmp(*s, text, n) != 0)
        return false;
    *s += n;
    return true;
}

/* Split "GlobalBuffer[1..16]" into its base name and instance count (16);
 * a name without a range is one instance. */
static as_code parse_instance_range(const reader *r, const as_yaml_node *node, const char *name,
                                    size_t *base_length, int64_t *instances)
{
    const char *open = strchr(name, '['), *s = open;
    int64_t first, last;
    *base_length = open ? (size_t)(open - name) : strlen(name);
    *instances = 1;
    if (*base_length > 0 && !open)
        return AS_OK;
    if (*base_length == 0 || !skip_text(&s, "[") || !read_count(&s, &first) ||
        !skip_text(&s, "..") || !read_count(&s, &last) || !skip_text(&s, "]") || *s || last < first)
        return fail_at(r, node, "name '%s': expected Name or Name[first..last]", name);
    *instances = last - first + 1;
    return AS_OK;
}

/* The mesh of a component with `instances` copies: meshX x meshY, which
 * must multiply to the instance count (meshY defaults to 1, meshX to the
 * rest). */
static as_code read_mesh(const reader *r, const as_yaml_node *attributes, int64_t instances,
                         int *mesh_x, int *mesh_y)
{
    int64_t y = 1, x;
    as_code rc = read_int(r, attributes, "meshY", false, 1, &y);
    x = instances / y;
    if (rc == AS_OK)
        rc = read_int(r, attributes, "meshX", false, 1, &x);
    if (rc == AS_OK && x * y != instances) {
        const as_yaml_node *mesh_x_node = as_yaml_get(attributes, "meshX");
        rc = fail_at(r, mesh_x_node ? mesh_x_node : attributes,
                     "meshX %lld x meshY %lld is not the %lld instances of the name", (long long)x,
                     (long long)y, (long long)instances);
    }
    *mesh_x = (int)x;
    *mesh_y = (int)y;
    return rc;
}

/* Optional real attributes of a storage level, read over their defaults:
 * multiple buffering (> 0) and bandwidths in words per cycle (0 =
 * unlimited). */
static const struct {
    const char *key;
    size_t offset;
    bool positive;
} level_reals[] = {
    {"multiple_buffering", offsetof(arch_level, multiple_buffering), true},
    {"read_bandwidth", offsetof(arch_level, read_bandwidth), false},
    {"write_bandwidth", offsetof(arch_level, write_bandwidth), false},
    {"shared_bandwidth", offsetof(arch_level, shared_bandwidth), false},
};

/* Fill a storage level from a component's attributes (Timeloop's buffer
 * specs).  Block size and capacity follow the rules at the top. */
static as_code read_storage_attributes(const reader *r, const as_yaml_node *attributes,
                                       arch_level *level)
{
    int64_t depth = 0, width = 0, datawidth = 0, cluster = 1;
    as_code rc = as_yaml_keys(&r->at, attributes, "storage attributes", storage_attributes);
    if (rc == AS_OK)
        rc = read_int(r, attributes, "depth", level->cls != ARCH_CLASS_DRAM, 1, &depth);
    if (rc == AS_OK)
        rc = read_int(r, attributes, "width", true, 1, &width);
    if (rc == AS_OK)
        rc = read_int(r, attributes, "datawidth", true, 1, &datawidth);
    if (rc == AS_OK)
        rc = read_int(r, attributes, "cluster_size", false, 1, &cluster);
    if (rc != AS_OK)
        return rc;
    int64_t block = width / (datawidth * cluster);
    if (!as_yaml_get(attributes, "block_size") && block * datawidth * cluster != width)
        return fail_at(r, as_yaml_get(attributes, "width"),
                       "width %lld is not a multiple of datawidth %lld x cluster_size %lld",
                       (long long)width, (long long)datawidth, (long long)cluster);
    if ((rc = read_int(r, attributes, "block_size", false, 1, &block)) != AS_OK)
        return rc;
    level->size_words = depth * block;
    level->word_bits = (int)datawidth;
    level->block_size = (int)block;
    level->cluster_size = (int)cluster;
    level->multiple_buffering = 1.0;
    for (size_t i = 0; rc == AS_OK && i < sizeof level_reals / sizeof level_reals[0]; i++)
        rc = as_yaml_read_double(&r->at, attributes, level_reals[i].key, false, 0.0,
                                 level_reals[i].positive, INFINITY,
                                 (double *)((char *)level + level_reals[i].offset));
    level->spatial_reduction = true;
    if (rc == AS_OK)
        rc = as_yaml_read_bool(&r->at, attributes, "reduction_supported", false,
                               &level->spatial_reduction);
    level->multicast = true; /* Timeloop's legacy network multicasts */
    return rc;
}

/* A component of a `local` list, as far as read_component has parsed it. */
typedef struct component {
    const as_yaml_node *node, *attributes;
    const char *name;   /* "GlobalBuffer[1..16]" */
    size_t name_length; /* of the base name, "GlobalBuffer" */
    int64_t instances;  /* 16 */
} component;

/* The arithmetic unit: independent MACs, datawidth bits wide (Timeloop's
 * default word size, 16, when not given); read_component has named it. */
static as_code read_compute(reader *r, const component *c)
{
    arch_compute *mac = &r->out->arch.compute;
    int64_t bits = 16;
    r->have_compute = true;
    mac->kind = ARCH_COMPUTE_MAC;
    mac->instances = c->instances;
    mac->rows = mac->cols = 1;
    mac->dataflow = ARCH_DATAFLOW_OS; /* independent MACs have no dataflow of their own */
    as_code rc = as_yaml_keys(&r->at, c->attributes, "arithmetic attributes", compute_attributes);
    if (rc == AS_OK)
        rc = read_int(r, c->attributes, "datawidth", false, 1, &bits);
    mac->mac_bits = (int)bits;
    return rc == AS_OK ? read_mesh(r, c->attributes, c->instances, &mac->mesh_x, &mac->mesh_y) : rc;
}

/* A storage level of class cls, appended to the levels (outermost first);
 * read_component has named it. */
static as_code read_level(reader *r, const component *c, arch_class cls)
{
    arch_spec *arch = &r->out->arch;
    arch_level *level = &arch->level[arch->n_levels++];
    level->cls = cls;
    level->instances = c->instances;
    for (int d = 0; d < WL_NDATASPACES; d++)
        level->constraints.keep[d] = cls == ARCH_CLASS_DUMMY
                                         ? ARCH_KEEP_NEVER
                                         : ARCH_KEEP_FREE; /* a container holds no data */
    as_code rc = read_storage_attributes(r, c->attributes, level);
    if (rc == AS_OK)
        rc = read_mesh(r, c->attributes, c->instances, &level->mesh_x, &level->mesh_y);
    if (rc == AS_OK && cls == ARCH_CLASS_DRAM) {
        const char *type = "";
        rc = read_text(r, c->attributes, "type", &type);
        if (rc == AS_OK)
            rc = copy_name(r, c->attributes, arch->dram.type, sizeof arch->dram.type, type,
                           strlen(type));
    }
    return rc;
}

/* The class of a component: its `class`, or for class "storage" its
 * `subclass`. */
static as_code read_class(const reader *r, const as_yaml_node *node, const char *name, int *cls)
{
    const char *class_name = NULL;
    as_code rc = read_text(r, node, "class", &class_name);
    if (rc != AS_OK)
        return rc;
    *cls = class_of(class_name);
    if (*cls == CLASS_BY_SUBCLASS) {
        if ((rc = read_text(r, node, "subclass", &class_name)) != AS_OK)
            return rc;
        *cls = class_of(class_name);
        if (*cls < 0)
            return fail_at(r, node, "%s: unknown storage subclass '%s'", name, class_name);
    }
    return *cls == CLASS_UNKNOWN ? fail_at(r, node, "%s: unknown class '%s'", name, class_name)
                                 : AS_OK;
}

/* Read one component of a `local` list under path prefix: a storage level
 * or the arithmetic unit, which must come last. */
static as_code read_component(reader *r, const as_yaml_node *node, const char *prefix)
{
    static const char *const keys[] = {
        "name", "class", "subclass", "attributes", "required_actions", "enabled", NULL};
    arch_spec *arch = &r->out->arch;
    component c = {.node = node};
    const as_yaml_node *enabled = as_yaml_get(node, "enabled");
    bool is_enabled = true;
    int cls;
    as_code rc = as_yaml_keys(&r->at, node, "component", keys);
    if (rc == AS_OK)
        rc = read_text(r, node, "name", &c.name);
    if (rc == AS_OK)
        rc = read_class(r, node, c.name, &cls);
    if (rc == AS_OK && enabled)
        rc = as_yaml_read_bool(&r->at, node, "enabled", true, &is_enabled);
    if (rc == AS_OK && !is_enabled)
        rc = fail_at(r, enabled, "%s: disabled components are not supported", c.name);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, node, "attributes", true, AS_YAML_MAPPING, &c.attributes);
    if (rc == AS_OK)
        rc = parse_instance_range(r, node, c.name, &c.name_length, &c.instances);
    if (rc != AS_OK)
        return rc;
    if (r->have_compute)
        return fail_at(r, node, "%s: components after the arithmetic unit", c.name);
    if (cls != CLASS_COMPUTE && arch->n_levels == ARCH_MAX_LEVELS)
        return fail_at(r, node, "%s: more than %d storage levels", c.name, ARCH_MAX_LEVELS);
    char *path = cls == CLASS_COMPUTE ? r->compute_path : r->level_path[arch->n_levels];
    if (snprintf(path, PATH_BYTES, "%s.%s", prefix, c.name) >= PATH_BYTES)
        return fail_at(r, node, "%s: path too long", c.name);
    if (arch->technology_nm == 0)
        arch->technology_nm = technology_nm(c.attributes);
    char *name = cls == CLASS_COMPUTE ? arch->compute.name : arch->level[arch->n_levels].name;
    if ((rc = copy_name(r, node, name, ARCH_NAME_BYTES, c.name, c.name_length)) != AS_OK)
        return rc;
    as_yaml_reader component_at = r->at;
    r->at = as_yaml_enter(&component_at, "attributes");
    rc = cls == CLASS_COMPUTE ? read_compute(r, &c) : read_level(r, &c, (arch_class)cls);
    r->at = component_at;
    return rc;
}

/* Read a tree node: its attributes (technology and clock, inherited by
 * the flattened components anyway), its `local` components, then its
 * `subtree` children, which sit inside it.  prefix is the parent's path. */
static as_code read_tree_node(reader *r, const as_yaml_node *node, const char *prefix, int depth)
{
    static const char *const keys[] = {"name", "attributes", "local", "subtree", NULL};
    const char *name = NULL;
    const as_yaml_node *attributes, *local, *subtree;
    as_code rc = as_yaml_keys(&r->at, node, "architecture node", keys);
    if (rc == AS_OK)
        rc = read_text(r, node, "name", &name);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, node, "attributes", false, AS_YAML_MAPPING, &attributes);
    if (rc == AS_OK && attributes)
        rc = as_yaml_keys(&r->at, attributes, "architecture node attributes", node_attributes);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, node, "local", false, AS_YAML_SEQUENCE, &local);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, node, "subtree", false, AS_YAML_SEQUENCE, &subtree);
    if (rc != AS_OK)
        return rc;
    if (depth > ARCH_MAX_LEVELS)
        return fail_at(r, node, "architecture tree nested too deeply");
    if (subtree && subtree->n > 1)
        return fail_at(r, subtree,
                       "%s: more than one subtree (heterogeneous designs) is not supported", name);
    char path[PATH_BYTES];
    if (snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", name) >= PATH_BYTES)
        return fail_at(r, node, "%s: path too long", name);
    arch_spec *arch = &r->out->arch;
    if (!arch->name[0] &&
        (rc = copy_name(r, node, arch->name, sizeof arch->name, name, strlen(name))) != AS_OK)
        return rc;
    as_yaml_reader node_at = r->at, attributes_at = as_yaml_enter(&node_at, "attributes");
    if (attributes) {
        if (arch->technology_nm == 0)
            arch->technology_nm = technology_nm(attributes);
        rc = as_yaml_read_double(&attributes_at, attributes, "global_cycle_seconds", false, 0.0,
                                 true, INFINITY, &arch->cycle_seconds);
    }
    for (int i = 0; rc == AS_OK && local && i < local->n; i++) {
        r->at = as_yaml_enter_item(&node_at, "local", i);
        rc = read_component(r, local->items[i], path);
    }
    if (rc == AS_OK && subtree && subtree->n == 1) {
        r->at = as_yaml_enter_item(&node_at, "subtree", 0);
        rc = read_tree_node(r, subtree->items[0], path, depth + 1);
    }
    r->at = node_at;
    return rc;
}

/* Swap levels (and their paths) into innermost-first order. */
static void reverse_levels(reader *r)
{
    arch_spec *arch = &r->out->arch;
    for (int i = 0, j = arch->n_levels - 1; i < j; i++, j--) {
        arch_level level = arch->level[i];
        arch->level[i] = arch->level[j];
        arch->level[j] = level;
        char path[PATH_BYTES];
        memcpy(path, r->level_path[i], PATH_BYTES);
        memcpy(r->level_path[i], r->level_path[j], PATH_BYTES);
        memcpy(r->level_path[j], path, PATH_BYTES);
    }
}

/* The architecture section: one tree under `subtree`, with at least one
 * storage level over one arithmetic unit, physically meaningful in the
 * sense of arch_validate (whose message gets the file and line). */
static as_code read_architecture(reader *r, const as_yaml_node *architecture)
{
    static const char *const keys[] = {"version", "subtree", NULL};
    const as_yaml_node *subtree;
    const char *version = NULL;
    arch_spec *arch = &r->out->arch;
    arch->cycle_seconds = 1e-9; /* Timeloop's default clock */
    arch->native_batch = 1;
    as_code rc = as_yaml_keys(&r->at, architecture, "architecture", keys);
    if (rc == AS_OK)
        rc = read_supported(r, architecture, "version", "architecture version", "0.4", &version);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, architecture, "subtree", true, AS_YAML_SEQUENCE, &subtree);
    if (rc == AS_OK && subtree->n != 1)
        rc = fail_at(r, subtree, "subtree: expected one top-level node, got %d", subtree->n);
    if (rc == AS_OK) {
        as_yaml_reader top = r->at;
        r->at = as_yaml_enter_item(&top, "architecture.subtree", 0);
        rc = read_tree_node(r, subtree->items[0], "", 0);
        r->at = top;
    }
    if (rc != AS_OK)
        return rc;
    if (arch->n_levels == 0 || !r->have_compute)
        return fail_at(r, architecture,
                       "architecture: expected storage levels over one arithmetic unit (intmac)");
    reverse_levels(r);
    if (arch->technology_nm == 0)
        arch->technology_nm = 45; /* none given: the node of accelsearch's tables */
    arch->dram.channels = 1;      /* Timeloop models no channels */
    as_status invalid;
    as_status_clear(&invalid);
    if (arch_validate(arch, &invalid) != AS_OK)
        return fail_at(r, architecture, "architecture: %s", invalid.message);
    return AS_OK;
}

/* Index of the storage level called name (base name, no range), or -1. */
static int find_level(const arch_spec *arch, const char *name)
{
    for (int i = 0; i < arch->n_levels; i++)
        if (strcmp(arch->level[i].name, name) == 0)
            return i;
    return -1;
}

/* ------------------------------------------------------------- problem */

static const char *const dataspace_names_list[WL_NDATASPACES + 1] = {"Weights", "Inputs", "Outputs",
                                                                     NULL};
static const char *const *const dataspace_names = dataspace_names_list;

/* The data space called name, or -1. */
static int find_dataspace(const char *name)
{
    for (int d = 0; d < WL_NDATASPACES; d++)
        if (strcmp(dataspace_names[d], name) == 0)
            return d;
    return -1;
}

/* The problem dimension (index in shape order) called name, or -1. */
static int find_dim(const reader *r, const char *name)
{
    for (int i = 0; i < r->n_dims; i++)
        if (strcmp(r->out->dim_names[r->dim_slot[i]], name) == 0)
            return i;
    return -1;
}

/* The coefficient called name, or -1. */
static int find_coefficient(const reader *r, const char *name)
{
    for (int i = 0; i < r->n_coefficients; i++)
        if (strcmp(r->coefficient_name[i], name) == 0)
            return i;
    return -1;
}

/* The slot a Timeloop dimension name prefers: its own letter, with K as
 * another name for M (output channels); -1 for names we have no slot for. */
static int preferred_slot(const char *name)
{
    static const struct {
        const char *name;
        wl_dim slot;
    } slots[] = {{"N", WL_DIM_N}, {"G", WL_DIM_G}, {"C", WL_DIM_C},
                 {"M", WL_DIM_M}, {"K", WL_DIM_M}, {"P", WL_DIM_P},
                 {"Q", WL_DIM_Q}, {"R", WL_DIM_R}, {"S", WL_DIM_S}};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
        if (strcmp(slots[i].name, name) == 0)
            return (int)slots[i].slot;
    return -1;
}

void map_tl_assign_slots(const char *const names[], int n, wl_dim slots[])
{
    bool taken[WL_NDIMS] = {false};
    int slot[WL_NDIMS];
    for (int i = 0; i < n; i++) {
        slot[i] = preferred_slot(names[i]);
        if (slot[i] >= 0 && taken[slot[i]])
            slot[i] = -1;
        if (slot[i] >= 0)
            taken[slot[i]] = true;
    }
    for (int i = 0; i < n; i++) {
        for (int free_slot = 0; slot[i] < 0; free_slot++) {
            if (!taken[free_slot]) {
                slot[i] = free_slot;
                taken[free_slot] = true;
            }
        }
        slots[i] = (wl_dim)slot[i];
    }
}

/* shape.dimensions: distinct names, each given a slot by
 * map_tl_assign_slots, recorded in out->dim_names. */
static as_code read_dimensions(reader *r, const as_yaml_node *dims)
{
    const char *names[WL_NDIMS];
    if (dims->n < 1 || dims->n > WL_NDIMS)
        return fail_at(r, dims, "dimensions: expected 1 to %d names, got %d", WL_NDIMS, dims->n);
    for (int i = 0; i < dims->n; i++) {
        const as_yaml_node *item = dims->items[i];
        if (item->kind != AS_YAML_SCALAR || !item->scalar[0])
            return fail_at(r, item, "dimensions: expected a name");
        for (int j = 0; j < i; j++)
            if (strcmp(names[j], item->scalar) == 0)
                return fail_at(r, item, "dimensions: '%s' is listed twice", item->scalar);
        names[i] = item->scalar;
    }
    map_tl_assign_slots(names, dims->n, r->dim_slot);
    for (int i = 0; i < dims->n; i++) {
        const as_yaml_node *item = dims->items[i];
        as_code rc = copy_name(r, item, r->out->dim_names[r->dim_slot[i]],
                               sizeof r->out->dim_names[0], item->scalar, strlen(item->scalar));
        if (rc != AS_OK)
            return rc;
    }
    r->n_dims = dims->n;
    return AS_OK;
}

/* Add or redefine coefficient name with value. */
static as_code set_coefficient(reader *r, const as_yaml_node *node, const char *name, int64_t value)
{
    int i = find_coefficient(r, name);
    if (i < 0) {
        if (r->n_coefficients == MAX_COEFFICIENTS)
            return fail_at(r, node, "more than %d coefficients", MAX_COEFFICIENTS);
        if (find_dim(r, name) >= 0)
            return fail_at(r, node, "coefficient '%s' has the name of a dimension", name);
        i = r->n_coefficients++;
        r->coefficient_name[i] = name;
    }
    r->coefficient_value[i] = value;
    return AS_OK;
}

/* shape.coefficients: a list of {name, default}.  The convolution
 * coefficients Wstride, Hstride, Wdilation and Hdilation exist with
 * default 1 even when not declared. */
static as_code read_coefficients(reader *r, const as_yaml_node *shape)
{
    static const char *const keys[] = {"name", "default", NULL};
    static const char *const implicit[] = {"Wstride", "Hstride", "Wdilation", "Hdilation"};
    const as_yaml_node *coefficients;
    as_code rc =
        as_yaml_find(&r->at, shape, "coefficients", false, AS_YAML_SEQUENCE, &coefficients);
    for (size_t i = 0; rc == AS_OK && i < sizeof implicit / sizeof implicit[0]; i++)
        rc = set_coefficient(r, shape, implicit[i], 1);
    for (int i = 0; rc == AS_OK && coefficients && i < coefficients->n; i++) {
        const as_yaml_node *c = coefficients->items[i];
        const char *name = NULL;
        int64_t value = 1;
        rc = as_yaml_keys(&r->at, c, "coefficient", keys);
        if (rc == AS_OK)
            rc = read_text(r, c, "name", &name);
        if (rc == AS_OK)
            rc = read_int(r, c, "default", false, 1, &value);
        if (rc == AS_OK)
            rc = set_coefficient(r, c, name, value);
    }
    return rc;
}

/* One term of a projection: [dim] or [dim, coefficient], in either order. */
static as_code read_term(reader *r, const as_yaml_node *term, wl_proj_term *out)
{
    int dims = 0, coefficients = 0;
    out->coef = 1;
    if (term->kind != AS_YAML_SEQUENCE || term->n < 1 || term->n > 2)
        return fail_at(r, term,
                       "projection term: expected [dimension] or [dimension, coefficient]");
    for (int i = 0; i < term->n; i++) {
        const as_yaml_node *item = term->items[i];
        const char *name = item->kind == AS_YAML_SCALAR ? item->scalar : "";
        int dim = find_dim(r, name), coefficient = find_coefficient(r, name);
        if (dim >= 0) {
            out->dim = r->dim_slot[dim];
            dims++;
        } else if (coefficient >= 0) {
            out->coef = r->coefficient_value[coefficient];
            coefficients++;
        } else {
            return fail_at(r, item, "projection: '%s' is neither a dimension nor a coefficient",
                           name);
        }
    }
    return dims == 1 && coefficients <= 1
               ? AS_OK
               : fail_at(r, term,
                         "projection term: expected one dimension and at most one coefficient");
}

/* shape.data_spaces: Weights, Inputs and Outputs, each once, with their
 * projections (a list of ranks, each a sum of terms). */
static as_code read_dataspaces(reader *r, const as_yaml_node *list)
{
    static const char *const keys[] = {"name", "projection", "read_write", NULL};
    wl_problem *p = &r->out->problem;
    bool seen[WL_NDATASPACES] = {false};
    for (int i = 0; i < list->n; i++) {
        const as_yaml_node *node = list->items[i], *projection, *rw;
        const char *name = NULL;
        as_code rc = as_yaml_keys(&r->at, node, "data space", keys);
        if (rc == AS_OK)
            rc = read_text(r, node, "name", &name);
        if (rc == AS_OK)
            rc = as_yaml_find(&r->at, node, "projection", true, AS_YAML_SEQUENCE, &projection);
        if (rc != AS_OK)
            return rc;
        int d = find_dataspace(name);
        if (d < 0 || seen[d])
            return fail_at(r, node,
                           "data space '%s': expected each of Weights, Inputs, Outputs once", name);
        seen[d] = true;
        wl_dataspace *ds = &p->ds[d];
        if (projection->n < 1 || projection->n > WL_MAX_DS_RANKS)
            return fail_at(r, projection, "%s: expected 1 to %d ranks, got %d", name,
                           WL_MAX_DS_RANKS, projection->n);
        ds->n_ranks = projection->n;
        for (int k = 0; k < projection->n; k++) {
            const as_yaml_node *rank = projection->items[k];
            if (rank->kind != AS_YAML_SEQUENCE || rank->n < 1 || rank->n > 2)
                return fail_at(r, rank, "%s: a projection rank is a list of 1 or 2 terms", name);
            ds->ranks[k].n_terms = rank->n;
            for (int t = 0; t < rank->n; t++)
                if ((rc = read_term(r, rank->items[t], &ds->ranks[k].terms[t])) != AS_OK)
                    return rc;
        }
        if ((rw = as_yaml_get(node, "read_write")) &&
            (rc = as_yaml_read_bool(&r->at, node, "read_write", true, &ds->read_write)) != AS_OK)
            return rc;
    }
    for (int d = 0; d < WL_NDATASPACES; d++)
        if (!seen[d])
            return fail_at(r, list, "data_spaces: '%s' is missing", dataspace_names[d]);
    return AS_OK;
}

/* instance.densities: {DataSpace: fraction}; absent spaces are dense. */
static as_code read_densities(reader *r, const as_yaml_node *densities)
{
    if (densities->kind != AS_YAML_MAPPING)
        return fail_at(r, densities, "densities: expected a mapping");
    for (int i = 0; i < densities->n; i++) {
        int d = find_dataspace(densities->keys[i]);
        if (d < 0)
            return fail_at(r, densities->items[i], "densities: unknown data space '%s'",
                           densities->keys[i]);
        as_code rc = as_yaml_read_double(&r->at, densities, densities->keys[i], true, 0.0, true,
                                         INFINITY, &r->out->problem.ds[d].density);
        if (rc == AS_OK && r->out->problem.ds[d].density > 1.0)
            rc = fail_at(r, densities->items[i], "densities: %s above 1", densities->keys[i]);
        if (rc != AS_OK)
            return rc;
    }
    return AS_OK;
}

/* problem.instance: a bound for every dimension, values for coefficients,
 * densities, and the layer geometry H, W, Hpad, Wpad (of which only the
 * padding is kept: the projections already say how windows slide). */
static as_code read_instance(reader *r, const as_yaml_node *instance)
{
    static const char *const geometry[] = {"H", "W", "Hpad", "Wpad", NULL};
    wl_problem *p = &r->out->problem;
    int64_t bound[WL_NDIMS] = {0}, pad[2] = {0, 0};
    if (instance->kind != AS_YAML_MAPPING)
        return fail_at(r, instance, "instance: expected a mapping");
    for (int i = 0; i < instance->n; i++) {
        const char *key = instance->keys[i];
        int dim = find_dim(r, key), coefficient = find_coefficient(r, key), g = 0;
        while (geometry[g] && strcmp(geometry[g], key) != 0)
            g++;
        int64_t value = 0;
        as_code rc = AS_OK;
        if (dim >= 0 || coefficient >= 0 || geometry[g])
            rc = read_int(r, instance, key, true, dim >= 0 || coefficient >= 0 ? 1 : 0, &value);
        else if (strcmp(key, "densities") == 0)
            rc = read_densities(r, instance->items[i]);
        else
            rc = fail_at(r, instance->items[i],
                         "unknown key '%s' in problem instance (expected a dimension, a "
                         "coefficient, densities, H, W, Hpad or Wpad)",
                         key);
        if (rc != AS_OK)
            return rc;
        if (dim >= 0)
            bound[dim] = value;
        else if (coefficient >= 0)
            r->coefficient_value[coefficient] = value;
        else if (g >= 2 && geometry[g])
            pad[g - 2] = value;
    }
    for (int d = 0; d < WL_NDIMS; d++)
        p->bound[d] = 1;
    for (int i = 0; i < r->n_dims; i++) {
        if (bound[i] == 0)
            return fail_at(r, instance, "instance: no bound for dimension %s",
                           r->out->dim_names[r->dim_slot[i]]);
        p->bound[r->dim_slot[i]] = bound[i];
    }
    p->pad[0] = p->pad[2] = pad[0]; /* Hpad: top and bottom */
    p->pad[1] = p->pad[3] = pad[1]; /* Wpad: left and right */
    return AS_OK;
}

/* The problem section.  Instance values of coefficients are read before
 * the projections that use them. */
static as_code read_problem(reader *r, const as_yaml_node *problem)
{
    static const char *const keys[] = {"version", "shape", "instance", NULL};
    static const char *const shape_keys[] = {"name", "dimensions", "data_spaces", "coefficients",
                                             NULL};
    const as_yaml_node *shape = NULL, *dims = NULL, *dataspaces = NULL, *instance = NULL;
    const char *name = "";
    wl_problem *p = &r->out->problem;
    as_code rc = as_yaml_keys(&r->at, problem, "problem", keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, problem, "shape", true, AS_YAML_MAPPING, &shape);
    if (rc == AS_OK)
        rc = as_yaml_keys(&r->at, shape, "problem shape", shape_keys);
    if (rc == AS_OK)
        rc = read_text(r, shape, "name", &name);
    if (rc == AS_OK)
        rc = copy_name(r, shape, r->out->problem_name, sizeof r->out->problem_name, name,
                       strlen(name));
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, shape, "dimensions", true, AS_YAML_SEQUENCE, &dims);
    if (rc == AS_OK)
        rc = read_dimensions(r, dims);
    if (rc == AS_OK)
        rc = read_coefficients(r, shape);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, problem, "instance", true, AS_YAML_MAPPING, &instance);
    for (int d = 0; d < WL_NDATASPACES; d++) {
        p->ds[d].name = dataspace_names[d];
        p->ds[d].density = 1.0;
        p->ds[d].tensor = -1;
    }
    if (rc == AS_OK)
        rc = read_instance(r, instance);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, shape, "data_spaces", true, AS_YAML_SEQUENCE, &dataspaces);
    if (rc == AS_OK)
        rc = read_dataspaces(r, dataspaces);
    if (rc != AS_OK)
        return rc;
    p->kind = WL_PROBLEM_CONV;
    p->op = -1;
    p->stride[0] = r->coefficient_value[find_coefficient(r, "Hstride")];
    p->stride[1] = r->coefficient_value[find_coefficient(r, "Wstride")];
    p->dilation[0] = r->coefficient_value[find_coefficient(r, "Hdilation")];
    p->dilation[1] = r->coefficient_value[find_coefficient(r, "Wdilation")];
    return AS_OK;
}

/* ------------------------------------------------- mapping and constraints */

/*
 * A model input's `mapping` and a mapper input's `architecture_constraints`
 * are both lists of directives {target, type, factors, permutation, split,
 * keep, bypass}.  read_directive parses one into a `directive`, which is
 * then applied to the mapping (apply_to_mapping) or to the target level's
 * constraints (apply_to_constraints).  The two readings differ where
 * Timeloop's do (Constraints::ParseFactors, PermutationSpace::InitLevel,
 * Uber::InitSpatialSpace):
 *  - factors: in a mapping "C4" or "C=4" is the factor (at least 1).  In
 *    constraints "C=4" fixes it, "C=0" means the whole bound, a factor above
 *    the bound is cut to the bound (Timeloop warns and does the same), and
 *    "C<=4" bounds it from above (temporal loops only: arch_constraints has
 *    no spatial upper bound).
 *  - permutation: innermost first.  In a mapping, dimensions left out follow
 *    in the default order.  In constraints a partial permutation fixes the
 *    innermost end: the listed dimensions are the innermost loops in that
 *    order, the others are free outside them (n_*_order says how many are
 *    fixed).
 *  - split: in constraints the split is fixed; it counts positions of that
 *    whole permutation, and a value past the last dimension (eyeriss_like
 *    says 999) puts every spatial loop on X.
 *  - keep / bypass force a data space in or out of a level; unlisted ones
 *    are kept (mapping) or left to the mapper (constraints).  A dummy
 *    container keeps nothing in either.
 */
typedef enum directive_kind {
    DIRECTIVE_TEMPORAL,
    DIRECTIVE_SPATIAL,
    DIRECTIVE_DATATYPE
} directive_kind;
enum { N_DIRECTIVE_KINDS = 3 };

typedef enum directive_context { IN_MAPPING, IN_CONSTRAINTS } directive_context;

/* One directive, parsed; dimensions are problem slots. */
typedef struct directive {
    directive_kind kind;
    int level;
    int64_t factor[WL_NDIMS];       /* 0: not given */
    int64_t max_factor[WL_NDIMS];   /* 0: not given ("C<=4", constraints only) */
    int n_order;                    /* dimensions the permutation lists */
    uint8_t order[WL_NDIMS];        /* those, then the others in default order */
    int64_t split;                  /* -1: not given */
    arch_keep keep[WL_NDATASPACES]; /* FREE: not listed */
} directive;

static const char *const loop_keys[] = {"target", "type", "factors", "permutation", NULL};
static const char *const spatial_keys[] = {"target",      "type",  "factors",
                                           "permutation", "split", NULL};
static const char *const datatype_keys[] = {"target", "type", "keep", "bypass", NULL};
static const struct {
    const char *type;
    directive_kind kind;
    const char *const *keys;
} directive_types[] = {
    {"temporal", DIRECTIVE_TEMPORAL, loop_keys},
    {"spatial", DIRECTIVE_SPATIAL, spatial_keys},
    {"datatype", DIRECTIVE_DATATYPE, datatype_keys},
    {"bypass", DIRECTIVE_DATATYPE, datatype_keys}, /* Timeloop's other name for datatype */
};

/* The default loop order: the problem's dimensions in shape order, then the
 * slots the problem does not use. */
static void default_order(const reader *r, uint8_t order[WL_NDIMS])
{
    bool used[WL_NDIMS] = {false};
    int n = 0;
    for (int i = 0; i < r->n_dims; i++) {
        order[n++] = (uint8_t)r->dim_slot[i];
        used[r->dim_slot[i]] = true;
    }
    for (int d = 0; d < WL_NDIMS; d++)
        if (!used[d])
            order[n++] = (uint8_t)d;
}

/* Every level starts with no loops, the default order, all spatial loops
 * on X, and keeps every data space its constraints do not keep out (a
 * dummy container's, and in a mapper input the constrained bypasses). */
static void default_mapping(const reader *r, map_mapping *m)
{
    const arch_spec *arch = &r->out->arch;
    m->n_levels = arch->n_levels;
    for (int i = 0; i < arch->n_levels; i++) {
        map_level *level = &m->level[i];
        for (int d = 0; d < WL_NDIMS; d++)
            level->temporal[d] = level->spatial[d] = 1;
        default_order(r, level->temporal_order);
        default_order(r, level->spatial_order);
        level->spatial_split = r->n_dims;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            level->keep[ds] = arch->level[i].constraints.keep[ds] != ARCH_KEEP_NEVER;
    }
}

/* Letters a dimension name in a factors string is made of. */
#define DIM_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"

/* Parse a factors string, "C1 M8 R1", "R=3,P=16" or (constraints) "C<=4":
 * each term a dimension name, '=' (optional), or '<=', and an integer;
 * terms separated by blanks or commas.  The rules per context are at the
 * top of this section. */
static as_code read_factors(const reader *r, const as_yaml_node *node, directive_context context,
                            directive *dir)
{
    bool seen[WL_NDIMS] = {false};
    const char *s = node->scalar;
    for (;;) {
        s += strspn(s, " \t,");
        if (!*s)
            return AS_OK;
        char name[sizeof r->out->dim_names[0]];
        size_t name_length = strspn(s, DIM_NAME_CHARS);
        int64_t f;
        const char *value = s + name_length;
        value += strspn(value, " \t");
        bool at_most = skip_text(&value, "<=");
        if (!at_most)
            skip_text(&value, "=");
        value += strspn(value, " \t");
        if (name_length == 0 || name_length >= sizeof name || !read_count(&value, &f) ||
            (*value && !strchr(" \t,", *value)))
            return fail_at(r, node, "factors: expected terms like 'C4' or 'C=4'%s, got '%s'",
                           context == IN_CONSTRAINTS ? " or 'C<=4'" : "", node->scalar);
        memcpy(name, s, name_length);
        name[name_length] = '\0';
        int dim = find_dim(r, name);
        if (dim < 0)
            return fail_at(r, node, "factors: '%s' is not a dimension of the problem", name);
        if (seen[dim])
            return fail_at(r, node, "factors: %s is given twice", name);
        seen[dim] = true;
        wl_dim slot = r->dim_slot[dim];
        int64_t bound = r->out->problem.bound[slot];
        if (at_most && (context == IN_MAPPING || dir->kind == DIRECTIVE_SPATIAL))
            return fail_at(r, node, "factors: %s<=%lld: upper bounds are for temporal constraints",
                           name, (long long)f);
        if (at_most && f < 1)
            return fail_at(r, node, "factors: %s<=%lld: a bound must be at least 1", name,
                           (long long)f);
        if (context == IN_MAPPING && f < 1)
            return fail_at(r, node, "factors: %s must be at least 1", name);
        if (at_most)
            dir->max_factor[slot] = f;
        else
            dir->factor[slot] = context == IN_CONSTRAINTS && (f == 0 || f > bound) ? bound : f;
        s = value;
    }
}

/* Parse a permutation string such as "QPCMRSN": one-letter dimension
 * names, innermost first, then the others in the default order. */
static as_code read_permutation(const reader *r, const as_yaml_node *node, directive *dir)
{
    bool placed[WL_NDIMS] = {false};
    int n = 0;
    for (const char *s = node->scalar; *s; s++) {
        if (*s == ' ' || *s == '\t')
            continue;
        char name[2] = {*s, '\0'};
        int dim = find_dim(r, name);
        if (dim < 0)
            return fail_at(r, node, "permutation: '%s' is not a dimension of the problem", name);
        if (placed[r->dim_slot[dim]])
            return fail_at(r, node, "permutation: %s is listed twice", name);
        placed[r->dim_slot[dim]] = true;
        dir->order[n++] = (uint8_t)r->dim_slot[dim];
    }
    dir->n_order = n;
    uint8_t fallback[WL_NDIMS];
    default_order(r, fallback);
    for (int i = 0; i < WL_NDIMS; i++)
        if (!placed[fallback[i]])
            dir->order[n++] = fallback[i];
    return AS_OK;
}

/* keep / bypass list of a datatype directive: data space names, each at
 * most once over both lists. */
static as_code read_keep_list(const reader *r, const as_yaml_node *node, const char *key,
                              arch_keep keep, directive *dir)
{
    const arch_level *hw = &r->out->arch.level[dir->level];
    const as_yaml_node *list;
    as_code rc = as_yaml_find(&r->at, node, key, false, AS_YAML_SEQUENCE, &list);
    for (int i = 0; rc == AS_OK && list && i < list->n; i++) {
        const as_yaml_node *item = list->items[i];
        int ds = find_dataspace(item->kind == AS_YAML_SCALAR ? item->scalar : "");
        if (ds < 0)
            return fail_at(r, item, "%s: expected Weights, Inputs or Outputs", key);
        if (dir->keep[ds] != ARCH_KEEP_FREE)
            return fail_at(r, item, "%s: %s is listed twice for %s", key, dataspace_names[ds],
                           hw->name);
        if (keep == ARCH_KEEP_ALWAYS && hw->cls == ARCH_CLASS_DUMMY)
            return fail_at(r, item, "%s is a dummy container and cannot keep %s", hw->name,
                           dataspace_names[ds]);
        dir->keep[ds] = keep;
    }
    return rc;
}

/* The loop part of a temporal or spatial directive: factors, permutation
 * and (spatial) split. */
static as_code read_loops(const reader *r, const as_yaml_node *node, directive_context context,
                          directive *dir)
{
    const as_yaml_node *factors, *permutation, *split;
    default_order(r, dir->order);
    as_code rc = as_yaml_find(&r->at, node, "factors", false, AS_YAML_SCALAR, &factors);
    if (rc == AS_OK && factors)
        rc = read_factors(r, factors, context, dir);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, node, "permutation", false, AS_YAML_SCALAR, &permutation);
    if (rc == AS_OK && permutation)
        rc = read_permutation(r, permutation, dir);
    if (rc != AS_OK || dir->kind != DIRECTIVE_SPATIAL || !(split = as_yaml_get(node, "split")))
        return rc;
    rc = read_int(r, node, "split", true, 0, &dir->split);
    if (rc == AS_OK && context == IN_MAPPING && dir->split > WL_NDIMS)
        rc = fail_at(r, split, "split: expected at most %d", WL_NDIMS);
    if (dir->split > WL_NDIMS)
        dir->split = WL_NDIMS; /* constraints: past the last dimension, all on X */
    return rc;
}

/* Read one directive (of a mapping or of constraints, see the top of this
 * section): its type and target level, at most one of each kind per
 * level, then its contents. */
static as_code read_directive(const reader *r, const as_yaml_node *node, directive_context context,
                              bool seen[ARCH_MAX_LEVELS][N_DIRECTIVE_KINDS], directive *dir)
{
    const arch_spec *arch = &r->out->arch;
    const char *what = context == IN_MAPPING ? "mapping" : "architecture_constraints";
    const char *type = NULL, *target = NULL;
    memset(dir, 0, sizeof *dir);
    dir->split = -1;
    if (node->kind != AS_YAML_MAPPING)
        return fail_at(r, node, "%s: expected a mapping per directive", what);
    as_code rc = read_text(r, node, "type", &type);
    if (rc == AS_OK)
        rc = read_text(r, node, "target", &target);
    if (rc != AS_OK)
        return rc;
    size_t t = 0;
    while (t < sizeof directive_types / sizeof directive_types[0] &&
           strcmp(directive_types[t].type, type) != 0)
        t++;
    if (t == sizeof directive_types / sizeof directive_types[0])
        return fail_at(r, as_yaml_get(node, "type"),
                       "%s: unknown directive type '%s' (expected temporal, spatial, datatype or "
                       "bypass)",
                       what, type);
    dir->kind = directive_types[t].kind;
    if ((rc = as_yaml_keys(&r->at, node, context == IN_MAPPING ? "mapping directive" : "constraint",
                           directive_types[t].keys)) != AS_OK)
        return rc;
    dir->level = find_level(arch, target);
    if (dir->level < 0)
        return fail_at(r, as_yaml_get(node, "target"), "%s: target '%s' is not a storage level",
                       what, target);
    if (seen[dir->level][dir->kind])
        return fail_at(r, node, "%s: a second %s directive for %s", what, type, target);
    seen[dir->level][dir->kind] = true;
    if (dir->kind == DIRECTIVE_DATATYPE) {
        rc = read_keep_list(r, node, "keep", ARCH_KEEP_ALWAYS, dir);
        return rc == AS_OK ? read_keep_list(r, node, "bypass", ARCH_KEEP_NEVER, dir) : rc;
    }
    if (dir->kind == DIRECTIVE_SPATIAL && arch_fanout(arch, dir->level) == 1)
        return fail_at(r, node,
                       "%s: %s has no spatial fanout (as many instances below it as of it)", what,
                       target);
    return read_loops(r, node, context, dir);
}

/* Apply a directive to the mapping: its factors, order, split (all on X
 * when not given) and keep / bypass choices. */
static void apply_to_mapping(const reader *r, const directive *dir)
{
    map_level *level = &r->out->mapping.level[dir->level];
    if (dir->kind == DIRECTIVE_DATATYPE) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (dir->keep[ds] != ARCH_KEEP_FREE)
                level->keep[ds] = dir->keep[ds] == ARCH_KEEP_ALWAYS;
        return;
    }
    bool spatial = dir->kind == DIRECTIVE_SPATIAL;
    int64_t *factor = spatial ? level->spatial : level->temporal;
    for (int d = 0; d < WL_NDIMS; d++)
        if (dir->factor[d])
            factor[d] = dir->factor[d];
    memcpy(spatial ? level->spatial_order : level->temporal_order, dir->order, WL_NDIMS);
    if (spatial)
        level->spatial_split = dir->split >= 0 ? (int)dir->split : r->n_dims;
}

/* Apply a directive to its level's constraints (fixed and bounded factors,
 * the fixed innermost part of the order, a fixed split, forced keeps). */
static void apply_to_constraints(const reader *r, const directive *dir)
{
    arch_constraints *c = &r->out->arch.level[dir->level].constraints;
    if (dir->kind == DIRECTIVE_DATATYPE) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (dir->keep[ds] != ARCH_KEEP_FREE)
                c->keep[ds] = dir->keep[ds];
        return;
    }
    size_t dims_bytes = sizeof dir->factor;
    if (dir->kind == DIRECTIVE_TEMPORAL) {
        memcpy(c->temporal_factor, dir->factor, dims_bytes);
        memcpy(c->temporal_max, dir->max_factor, dims_bytes);
        c->n_temporal_order = dir->n_order;
        memcpy(c->temporal_order, dir->order, WL_NDIMS);
        return;
    }
    memcpy(c->spatial_factor, dir->factor, dims_bytes);
    c->n_spatial_order = dir->n_order;
    memcpy(c->spatial_order, dir->order, WL_NDIMS);
    c->spatial_split_fixed = dir->split >= 0;
    c->spatial_split = dir->split >= 0 ? (int)dir->split : 0;
}

/* Read a list of directives in context, applying each as it is read. */
static as_code read_directives(const reader *r, const as_yaml_node *list, directive_context context)
{
    bool seen[ARCH_MAX_LEVELS][N_DIRECTIVE_KINDS] = {{false}};
    for (int i = 0; i < list->n; i++) {
        directive dir;
        as_code rc = read_directive(r, list->items[i], context, seen, &dir);
        if (rc != AS_OK)
            return rc;
        if (context == IN_MAPPING)
            apply_to_mapping(r, &dir);
        else
            apply_to_constraints(r, &dir);
    }
    return AS_OK;
}

/* Check that per dimension the factors of all levels multiply to the
 * bound, as Timeloop requires of a mapping it is given. */
static as_code check_factors(const reader *r, const as_yaml_node *mapping)
{
    const map_mapping *m = &r->out->mapping;
    for (int i = 0; i < r->n_dims; i++) {
        wl_dim d = r->dim_slot[i];
        int64_t product = 1;
        bool overflow = false;
        for (int l = 0; l < m->n_levels; l++)
            overflow |= !as_mul_i64(product, m->level[l].temporal[d], &product) ||
                        !as_mul_i64(product, m->level[l].spatial[d], &product);
        if (overflow)
            return fail_at(r, mapping, "mapping: the factors of %s overflow", r->out->dim_names[d]);
        if (product != r->out->problem.bound[d])
            return fail_at(
                r, mapping, "mapping: the factors of %s multiply to %lld, the bound is %lld",
                r->out->dim_names[d], (long long)product, (long long)r->out->problem.bound[d]);
    }
    return AS_OK;
}

/* The mapping section: a list of directives over the default mapping. */
static as_code read_mapping(reader *r, const as_yaml_node *mapping)
{
    if (mapping->kind != AS_YAML_SEQUENCE)
        return fail_at(r, mapping, "mapping: expected a list of directives");
    default_mapping(r, &r->out->mapping);
    as_code rc = read_directives(r, mapping, IN_MAPPING);
    return rc == AS_OK ? check_factors(r, mapping) : rc;
}

/* architecture_constraints: {targets: [directive, ...]} into the levels'
 * constraints. */
static as_code read_constraints(reader *r, const as_yaml_node *constraints)
{
    static const char *const keys[] = {"targets", NULL};
    const as_yaml_node *targets;
    as_code rc = as_yaml_keys(&r->at, constraints, "architecture_constraints", keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, constraints, "targets", true, AS_YAML_SEQUENCE, &targets);
    return rc == AS_OK ? read_directives(r, targets, IN_CONSTRAINTS) : rc;
}

/* Element precision of each data space: the word size of the innermost
 * level that stores it (16 bits, Timeloop's default, if none does). */
static void set_dataspace_bits(map_timeloop_case *c)
{
    for (int d = 0; d < WL_NDATASPACES; d++) {
        c->problem.ds[d].bits = 16;
        for (int i = 0; i < c->arch.n_levels; i++) {
            if (c->mapping.level[i].keep[d]) {
                c->problem.ds[d].bits = c->arch.level[i].word_bits;
                break;
            }
        }
    }
}

/* ------------------------------------------------------- ERT and ART */

/* The component an ERT / ART table names ("top.GLB[1..16]"): a storage
 * level index, n_levels for the arithmetic unit; each at most once. */
static as_code find_component(const reader *r, const as_yaml_node *table, bool *seen, int *index)
{
    const char *name = NULL;
    as_code rc = read_text(r, table, "name", &name);
    if (rc != AS_OK)
        return rc;
    int n = r->out->arch.n_levels;
    *index = strcmp(name, r->compute_path) == 0 ? n : -1;
    for (int i = 0; i < n && *index < 0; i++)
        if (strcmp(name, r->level_path[i]) == 0)
            *index = i;
    if (*index < 0)
        return fail_at(r, table, "table '%s' names no component of the architecture", name);
    if (seen[*index])
        return fail_at(r, table, "a second table for '%s'", name);
    seen[*index] = true;
    return AS_OK;
}

/* ERT actions: a storage level's read, write (Timeloop's fill), update
 * and leak; an arithmetic unit's compute and leak. */
enum { ACTION_READ, ACTION_WRITE, ACTION_UPDATE, ACTION_LEAK, ACTION_COMPUTE, N_ACTIONS };
static const char *const action_names[N_ACTIONS] = {"read", "write", "update", "leak", "compute"};

/* Whether action a applies to a storage level / an arithmetic unit. */
static bool action_applies(int a, bool is_compute)
{
    return is_compute ? a == ACTION_COMPUTE || a == ACTION_LEAK : a < ACTION_COMPUTE;
}

/* One ERT table: energy per vector action of a component.  A level
 * without an update action updates at write energy; leak defaults to 0;
 * read and write (compute for the arithmetic unit) are required.  A MAC's
 * leak is accepted and not modelled (Timeloop does not count it either). */
static as_code read_ert_table(reader *r, const as_yaml_node *table, int index)
{
    static const char *const keys[] = {"name", "actions", NULL};
    static const char *const action_keys[] = {"name", "arguments", "energy", NULL};
    arch_spec *arch = &r->out->arch;
    bool is_compute = index == arch->n_levels;
    double energy[N_ACTIONS] = {0};
    bool given[N_ACTIONS] = {false};
    const as_yaml_node *actions;
    as_code rc = as_yaml_keys(&r->at, table, "ERT table", keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, table, "actions", true, AS_YAML_SEQUENCE, &actions);
    for (int i = 0; rc == AS_OK && i < actions->n; i++) {
        const as_yaml_node *action = actions->items[i];
        const char *name = NULL;
        rc = as_yaml_keys(&r->at, action, "ERT action", action_keys);
        if (rc == AS_OK)
            rc = read_text(r, action, "name", &name);
        if (rc != AS_OK)
            return rc;
        int a = 0;
        while (a < N_ACTIONS && strcmp(action_names[a], name) != 0)
            a++;
        if (!action_applies(a, is_compute))
            return fail_at(r, action, "ERT action '%s' does not apply to %s", name,
                           is_compute ? "an arithmetic unit" : "a storage level");
        if (given[a])
            return fail_at(r, action, "ERT action '%s' is given twice", name);
        given[a] = true;
        rc = as_yaml_read_double(&r->at, action, "energy", true, 0.0, false, INFINITY, &energy[a]);
    }
    if (rc != AS_OK)
        return rc;
    if (is_compute) {
        arch->compute.mac_pJ = energy[ACTION_COMPUTE];
        return given[ACTION_COMPUTE] ? AS_OK : fail_at(r, table, "ERT table: no compute action");
    }
    if (!given[ACTION_READ] || !given[ACTION_WRITE])
        return fail_at(r, table, "ERT table: a storage level needs read and write actions");
    arch->level[index].energy = (arch_energy){
        .read_pJ = energy[ACTION_READ],
        .fill_pJ = energy[ACTION_WRITE],
        .update_pJ = energy[given[ACTION_UPDATE] ? ACTION_UPDATE : ACTION_WRITE],
        .leak_pJ = energy[ACTION_LEAK],
    };
    return AS_OK;
}

/* One ART table: area of one instance of a component, um^2. */
static as_code read_art_table(reader *r, const as_yaml_node *table, int index)
{
    static const char *const keys[] = {"name", "area", NULL};
    arch_spec *arch = &r->out->arch;
    as_code rc = as_yaml_keys(&r->at, table, "ART table", keys);
    double *area = index == arch->n_levels ? &arch->compute.area_um2 : &arch->level[index].area_um2;
    return rc == AS_OK
               ? as_yaml_read_double(&r->at, table, "area", true, 0.0, false, INFINITY, area)
               : rc;
}

/* The two kinds of Accelergy table file. */
typedef struct table_file {
    const char *top_keys[2]; /* {"ERT", NULL} */
    const char *what;        /* "ERT file", for messages */
    as_code (*read_table)(reader *, const as_yaml_node *table, int component);
} table_file;
static const table_file ert_file = {{"ERT", NULL}, "ERT file", read_ert_table};
static const table_file art_file = {{"ART", NULL}, "ART file", read_art_table};

/* Read an ERT or ART file (top key "ERT" / "ART", then version and a list
 * of tables), one table per component; only dummy containers may lack one. */
static as_code read_table_file(reader *r, const char *path, const table_file *kind)
{
    static const char *const keys[] = {"version", "tables", NULL};
    const char *top_key = kind->top_keys[0];
    as_yaml_doc doc;
    as_code rc = as_yaml_load(path, &doc, r->at.st);
    if (rc != AS_OK)
        return rc;
    r->at = as_yaml_reader_of(&doc, r->at.st);
    const as_yaml_node *body = NULL, *tables = NULL;
    bool seen[ARCH_MAX_LEVELS + 1] = {false};
    int n = r->out->arch.n_levels;
    if (!doc.root)
        rc = fail_at(r, NULL, "empty file");
    if (rc == AS_OK)
        rc = as_yaml_keys(&r->at, doc.root, kind->what, kind->top_keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, doc.root, top_key, true, AS_YAML_MAPPING, &body);
    if (rc == AS_OK)
        rc = as_yaml_keys(&r->at, body, top_key, keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, body, "tables", true, AS_YAML_SEQUENCE, &tables);
    for (int i = 0; rc == AS_OK && i < tables->n; i++) {
        int index;
        rc = find_component(r, tables->items[i], seen, &index);
        if (rc == AS_OK)
            rc = kind->read_table(r, tables->items[i], index);
    }
    for (int i = 0; rc == AS_OK && i <= n; i++) {
        if (!seen[i] && (i == n || r->out->arch.level[i].cls != ARCH_CLASS_DUMMY))
            rc = fail_at(r, tables, "no table for '%s'",
                         i == n ? r->compute_path : r->level_path[i]);
    }
    as_yaml_free(&doc);
    return rc;
}

/* ------------------------------------------------------- mapper settings */

/*
 * The `mapper` section into map_search_options.  Keys absent take
 * Timeloop's defaults (mapper.cpp): algorithm hybrid, metric EDP, search
 * size 0 (unlimited), victory condition 500, timeout 1000, threads as many
 * as the machine has (OpenMP's default here).  Timeloop's `timeout` counts
 * consecutive invalid mappings, not seconds: it becomes
 * consecutive_invalid_limit.  Timeloop divides search_size among its
 * threads; here it is the total.  Padding and imperfect factorisation stay
 * off, so that the space is Timeloop's; the seed is 1.
 */

/* Timeloop's search algorithms (either spelling) and ours: a linear walk
 * over the pruned space is our exhaustive search; hybrid draws
 * factorisations at random like random_pruned. */
static const struct {
    const char *name;
    map_algorithm algorithm;
} algorithms[] = {
    {"random_pruned", MAP_ALGO_RANDOM_PRUNED}, {"random-pruned", MAP_ALGO_RANDOM_PRUNED},
    {"random", MAP_ALGO_RANDOM_PRUNED},        {"hybrid", MAP_ALGO_RANDOM_PRUNED},
    {"linear_pruned", MAP_ALGO_EXHAUSTIVE},    {"linear-pruned", MAP_ALGO_EXHAUSTIVE},
    {"exhaustive", MAP_ALGO_EXHAUSTIVE},
};

/* Timeloop's optimisation metrics; "delay" is cycles. */
static const struct {
    const char *name;
    map_metric metric;
} metrics[] = {
    {"edp", MAP_METRIC_EDP}, {"energy", MAP_METRIC_ENERGY}, {"delay", MAP_METRIC_CYCLES}};

/* Integer settings: key, field, smallest value, Timeloop's default. */
static const struct {
    const char *key;
    size_t offset;
    int64_t min, fallback;
} mapper_counts[] = {
    {"search_size", offsetof(map_search_options, search_size), 0, 0},
    {"victory_condition", offsetof(map_search_options, victory_condition), 0, 500},
    {"timeout", offsetof(map_search_options, consecutive_invalid_limit), 0, 1000},
};

/* algorithm: one of the names above. */
static as_code read_algorithm(const reader *r, const as_yaml_node *mapper, map_search_options *o)
{
    const char *name = "hybrid";
    as_code rc = read_text(r, mapper, "algorithm", &name);
    size_t i = 0;
    while (rc == AS_OK && i < sizeof algorithms / sizeof algorithms[0] &&
           strcmp(algorithms[i].name, name) != 0)
        i++;
    if (rc == AS_OK && i == sizeof algorithms / sizeof algorithms[0])
        return fail_at(r, as_yaml_get(mapper, "algorithm"),
                       "algorithm: unknown '%s' (expected random_pruned, linear_pruned, "
                       "exhaustive or hybrid)",
                       name);
    if (rc == AS_OK)
        o->algorithm = algorithms[i].algorithm;
    return rc;
}

/* optimization_metrics: a list of 1 to 3 distinct metrics, most important
 * first (compared lexicographically). */
static as_code read_metrics(const reader *r, const as_yaml_node *mapper, map_search_options *o)
{
    const int max_metrics = (int)(sizeof o->objective.metric / sizeof o->objective.metric[0]);
    const as_yaml_node *list;
    o->objective = (map_objective){.n_metrics = 1, .metric = {MAP_METRIC_EDP}};
    as_code rc =
        as_yaml_find(&r->at, mapper, "optimization_metrics", false, AS_YAML_SEQUENCE, &list);
    if (rc != AS_OK || !list)
        return rc;
    if (list->n < 1 || list->n > max_metrics)
        return fail_at(r, list, "optimization_metrics: expected 1 to %d metrics, got %d",
                       max_metrics, list->n);
    o->objective.n_metrics = list->n;
    for (int k = 0; k < list->n; k++) {
        const as_yaml_node *item = list->items[k];
        const char *name = item->kind == AS_YAML_SCALAR ? item->scalar : "";
        size_t i = 0;
        while (i < sizeof metrics / sizeof metrics[0] && strcmp(metrics[i].name, name) != 0)
            i++;
        if (i == sizeof metrics / sizeof metrics[0])
            return fail_at(r, item,
                           "optimization_metrics: unknown '%s' (expected edp, energy or "
                           "delay)",
                           name);
        for (int j = 0; j < k; j++)
            if (o->objective.metric[j] == metrics[i].metric)
                return fail_at(r, item, "optimization_metrics: '%s' is listed twice", name);
        o->objective.metric[k] = metrics[i].metric;
    }
    return AS_OK;
}

/* The mapper section (see the top of this section). */
static as_code read_mapper_settings(const reader *r, const as_yaml_node *mapper,
                                    map_search_options *o)
{
    /* clang-format off */
    static const char *const keys[] = {
        "version", "algorithm", "optimization_metrics", "num_threads", "search_size",
        "victory_condition", "timeout", "max_permutations_per_if_visit",
        /* accepted, without effect here */
        "max_temporal_loops_in_a_mapping", "out_prefix", "diagnostics", "emit_whoop_nest",
        "live_status", "log_interval", "log_stats", "log_suboptimal",
        "penalize_consecutive_bypass_fails", NULL};
    /* clang-format on */
    memset(o, 0, sizeof *o);
    o->seed = 1;
    int64_t threads = 0, permutations = 1;
    as_code rc = as_yaml_keys(&r->at, mapper, "mapper", keys);
    if (rc == AS_OK)
        rc = read_algorithm(r, mapper, o);
    if (rc == AS_OK)
        rc = read_metrics(r, mapper, o);
    if (rc == AS_OK)
        rc = read_int(r, mapper, "num_threads", false, 1, &threads);
    if (rc == AS_OK)
        rc = read_int(r, mapper, "max_permutations_per_if_visit", false, 1, &permutations);
    o->threads = (int)threads;
    for (size_t i = 0; rc == AS_OK && i < sizeof mapper_counts / sizeof mapper_counts[0]; i++) {
        int64_t *field = (int64_t *)((char *)o + mapper_counts[i].offset);
        *field = mapper_counts[i].fallback;
        rc = read_int(r, mapper, mapper_counts[i].key, false, mapper_counts[i].min, field);
    }
    return rc;
}

/* mapspace: Timeloop's template name, which must be uber (the only map
 * space there is here). */
static as_code read_mapspace(const reader *r, const as_yaml_node *mapspace)
{
    static const char *const keys[] = {"version", "template", NULL};
    const char *template_name = "uber";
    as_code rc = as_yaml_keys(&r->at, mapspace, "mapspace", keys);
    return rc == AS_OK ? read_supported(r, mapspace, "template", "mapspace: template", "uber",
                                        &template_name)
                       : rc;
}

/* ---------------------------------------------------- model and mapper input */

/* Top-level keys of the two inputs.  Sections that only feed Accelergy
 * (compound_components, globals) are accepted; so are a model input's
 * architecture_constraints, which only the mapper reads. */
/* clang-format off */
static const char *const model_keys[] = {
    "architecture", "problem", "mapping", "architecture_constraints", "compound_components",
    "globals", "dumped_by_timeloop_front_end", "accelsearch", "accelsearch_arch", NULL};
static const char *const mapper_keys[] = {
    "architecture", "problem", "architecture_constraints", "mapper", "mapspace",
    "compound_components", "globals", "dumped_by_timeloop_front_end", "accelsearch_arch", NULL};
/* A file read as a design only: any of the above (its mapping and mapper
 * settings are not read). */
static const char *const design_keys[] = {
    "architecture", "problem", "mapping", "architecture_constraints", "mapper", "mapspace",
    "compound_components", "globals", "dumped_by_timeloop_front_end", "accelsearch",
    "accelsearch_arch", NULL};
/* clang-format on */

/* The rest of a mapper input, after architecture and problem: the
 * constraints, a default mapping that honours their bypasses (so that data
 * space precisions come from the levels that may keep them), the mapper
 * settings and the map space. */
static as_code read_mapper_sections(reader *r, const as_yaml_node *root,
                                    map_search_options *options)
{
    const as_yaml_node *constraints, *mapper, *mapspace;
    as_code rc = as_yaml_find(&r->at, root, "architecture_constraints", false, AS_YAML_MAPPING,
                              &constraints);
    if (rc == AS_OK && constraints)
        rc = read_constraints(r, constraints);
    default_mapping(r, &r->out->mapping);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "mapper", true, AS_YAML_MAPPING, &mapper);
    if (rc == AS_OK)
        rc = read_mapper_settings(r, mapper, options);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "mapspace", false, AS_YAML_MAPPING, &mapspace);
    if (rc == AS_OK && mapspace)
        rc = read_mapspace(r, mapspace);
    return rc;
}

/* The accelsearch_arch section map_timeloop_save_arch writes (Timeloop
 * ignores it): the DRAM interface (type-independent: its bandwidth, energy
 * per bit, interface share and channels), the design's native batch and
 * per-level wire energy per hop, which Timeloop's legacy network does not
 * cost.  Read into the reader; apply_arch_extras applies it after the
 * tables, which would set the DRAM energy and the hops too. */
static as_code read_arch_extras(reader *r, const as_yaml_node *root)
{
    static const char *const keys[] = {"dram_bandwidth_GBps",
                                       "dram_pJ_per_bit",
                                       "dram_interface_pJ_per_bit",
                                       "dram_channels",
                                       "native_batch",
                                       "hop_pJ",
                                       "split",
                                       "unicast",
                                       NULL};
    const as_yaml_node *section, *hops;
    arch_dram *dram = &r->extras_dram;
    int64_t channels = 1, batch = 1;
    as_code rc = as_yaml_find(&r->at, root, "accelsearch_arch", false, AS_YAML_MAPPING, &section);
    if (rc != AS_OK || !section)
        return rc;
    as_yaml_reader top = r->at;
    r->at = as_yaml_enter(&top, "accelsearch_arch");
    rc = as_yaml_keys(&r->at, section, "accelsearch_arch", keys);
    if (rc == AS_OK)
        rc = as_yaml_read_double(&r->at, section, "dram_bandwidth_GBps", true, 0.0, false, INFINITY,
                                 &dram->bandwidth_GBps);
    if (rc == AS_OK)
        rc = as_yaml_read_double(&r->at, section, "dram_pJ_per_bit", true, 0.0, false, INFINITY,
                                 &dram->energy_pJ_per_bit);
    if (rc == AS_OK)
        rc = as_yaml_read_double(&r->at, section, "dram_interface_pJ_per_bit", true, 0.0, false,
                                 INFINITY, &dram->interface_pJ_per_bit);
    if (rc == AS_OK)
        rc = read_int(r, section, "dram_channels", false, 1, &channels);
    if (rc == AS_OK)
        rc = read_int(r, section, "native_batch", false, 1, &batch);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, section, "hop_pJ", false, AS_YAML_MAPPING, &hops);
    as_yaml_reader hops_at = as_yaml_enter(&r->at, "hop_pJ");
    for (int i = 0; rc == AS_OK && hops && i < hops->n; i++) {
        int level = find_level(&r->out->arch, hops->keys[i]);
        if (level < 0)
            rc = fail_at(r, hops->items[i], "hop_pJ: '%s' is not a storage level", hops->keys[i]);
        else
            rc = as_yaml_read_double(&hops_at, hops, hops->keys[i], true, 0.0, false, INFINITY,
                                     &r->hop_pJ[level]);
        if (rc == AS_OK)
            r->hop_given[level] = true;
    }
    const as_yaml_node *split = NULL;
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, section, "split", false, AS_YAML_MAPPING, &split);
    for (int i = 0; rc == AS_OK && split && i < split->n; i++) {
        int level = find_level(&r->out->arch, split->keys[i]);
        int ds =
            split->items[i]->kind == AS_YAML_SCALAR ? find_dataspace(split->items[i]->scalar) : -1;
        if (level < 0 || ds < 0)
            rc = fail_at(r, split->items[i],
                         "split: expected a storage level and a data space, got '%s'",
                         split->keys[i]);
        else
            r->split_ds[level] = ds;
    }
    const as_yaml_node *unicast = NULL;
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, section, "unicast", false, AS_YAML_SEQUENCE, &unicast);
    for (int i = 0; rc == AS_OK && unicast && i < unicast->n; i++) {
        const as_yaml_node *item = unicast->items[i];
        int level = item->kind == AS_YAML_SCALAR ? find_level(&r->out->arch, item->scalar) : -1;
        if (level < 0)
            rc = fail_at(r, item, "unicast: expected storage level names");
        else
            r->unicast[level] = true;
    }
    r->at = top;
    if (channels > INT32_MAX || batch > INT32_MAX)
        return fail_at(r, section, "accelsearch_arch: dram_channels or native_batch too large");
    dram->channels = (int)channels;
    r->extras_native_batch = (int)batch;
    r->have_extras = rc == AS_OK;
    return rc;
}

/* Apply what read_arch_extras read (nothing when there was no section). */
static void apply_arch_extras(const reader *r, arch_spec *arch)
{
    if (!r->have_extras)
        return;
    arch->dram.bandwidth_GBps = r->extras_dram.bandwidth_GBps;
    arch->dram.energy_pJ_per_bit = r->extras_dram.energy_pJ_per_bit;
    arch->dram.interface_pJ_per_bit = r->extras_dram.interface_pJ_per_bit;
    arch->dram.channels = r->extras_dram.channels;
    arch->native_batch = r->extras_native_batch;
    for (int i = 0; i < arch->n_levels; i++) {
        if (r->hop_given[i])
            arch->level[i].hop_pJ = r->hop_pJ[i];
        if (r->unicast[i])
            arch->level[i].multicast = false;
    }
}

/* The accelsearch_arch section's split, applied before the tables fill
 * energies and areas (which depend on it). */
static void apply_split(const reader *r, arch_spec *arch)
{
    for (int i = 0; i < arch->n_levels; i++) {
        arch_level *l = &arch->level[i];
        if (r->split_ds[i] < 0)
            continue;
        /* The capacity is that data space's; the others, which Timeloop
         * was told bypass the level, have no room by the split. */
        l->size_words_by_ds[r->split_ds[i]] = l->size_words;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (ds != r->split_ds[i] && l->constraints.keep[ds] == ARCH_KEEP_NEVER)
                l->constraints.keep[ds] = ARCH_KEEP_FREE;
    }
}

/* The `accelsearch` section of a model input written for a network layer
 * (timeloop_save.c): the tensors' precisions over the word sizes
 * set_dataspace_bits gave, the DRAM bytes outside the loop nest and the
 * DRAM interface (applied after the tables, which would set it too). */
static as_code read_layer_context(reader *r, const as_yaml_node *root)
{
    static const char *const keys[] = {"tensor_bits", "outside_dram_bytes", "dram_bandwidth_GBps",
                                       "dram_pJ_per_bit", NULL};
    const as_yaml_node *section, *bits;
    as_code rc = as_yaml_find(&r->at, root, "accelsearch", false, AS_YAML_MAPPING, &section);
    if (rc != AS_OK || !section)
        return rc;
    rc = as_yaml_keys(&r->at, section, "accelsearch", keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, section, "tensor_bits", true, AS_YAML_MAPPING, &bits);
    if (rc == AS_OK)
        rc = as_yaml_keys(&r->at, bits, "tensor_bits", dataspace_names_list);
    for (int d = 0; rc == AS_OK && d < WL_NDATASPACES; d++) {
        int64_t value = 0;
        rc = read_int(r, bits, dataspace_names[d], true, 1, &value);
        r->out->problem.ds[d].bits = (int)value;
    }
    if (rc == AS_OK)
        rc = read_int(r, section, "outside_dram_bytes", true, 0, &r->out->outside_dram_bytes);
    if (rc == AS_OK)
        rc = as_yaml_read_double(&r->at, section, "dram_bandwidth_GBps", true, 0.0, false, INFINITY,
                                 &r->dram_bandwidth_GBps);
    if (rc == AS_OK)
        rc = as_yaml_read_double(&r->at, section, "dram_pJ_per_bit", true, 0.0, false, INFINITY,
                                 &r->dram_pJ_per_bit);
    r->out->is_layer = rc == AS_OK;
    return rc;
}

/* A model input (options NULL: architecture, problem, mapping) or a mapper
 * input (architecture, problem, constraints, settings into *options); the
 * problem is read after the architecture and before what refers to both. */
static as_code read_input(reader *r, const as_yaml_node *root, map_search_options *options)
{
    const char *what = options ? "mapper input" : "model input";
    const as_yaml_node *architecture, *problem, *mapping = NULL;
    if (!root)
        return fail_at(r, NULL, "empty file");
    as_code rc = as_yaml_keys(&r->at, root, what, options ? mapper_keys : model_keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "architecture", true, AS_YAML_MAPPING, &architecture);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "problem", true, AS_YAML_MAPPING, &problem);
    if (rc == AS_OK && !options)
        rc = as_yaml_find(&r->at, root, "mapping", true, AS_YAML_SEQUENCE, &mapping);
    if (rc == AS_OK)
        rc = read_architecture(r, architecture);
    if (rc == AS_OK)
        rc = read_problem(r, problem);
    if (rc == AS_OK)
        rc = options ? read_mapper_sections(r, root, options) : read_mapping(r, mapping);
    if (rc == AS_OK)
        set_dataspace_bits(r->out);
    if (rc == AS_OK && !options)
        rc = read_layer_context(r, root);
    if (rc == AS_OK)
        rc = read_arch_extras(r, root);
    return rc;
}

/* DRAM energy per bit, from the backing store's ERT read energy. */
static void set_dram_energy(arch_spec *arch)
{
    const arch_level *dram = &arch->level[arch->n_levels - 1];
    if (dram->cls == ARCH_CLASS_DRAM)
        arch->dram.energy_pJ_per_bit =
            dram->energy.read_pJ / ((double)dram->block_size * dram->word_bits);
}

/* Energies (when there is no ERT) and areas (no ART) from accelsearch's
 * tables.  arch_apply_tables fills every field left at zero, and an ERT may
 * well say 0 (a DRAM's leak), so the tables fill a copy and only the
 * missing half is taken from it. */
static void fill_from_tables(arch_spec *arch, bool energies, bool areas)
{
    arch_spec filled = *arch;
    arch_apply_tables(&filled);
    for (int i = 0; i < arch->n_levels; i++) {
        if (energies) {
            arch->level[i].energy = filled.level[i].energy;
            arch->level[i].hop_pJ = filled.level[i].hop_pJ;
        }
        if (areas)
            arch->level[i].area_um2 = filled.level[i].area_um2;
    }
    if (energies) {
        arch->compute.mac_pJ = filled.compute.mac_pJ;
        arch->dram.energy_pJ_per_bit = filled.dram.energy_pJ_per_bit;
    }
    if (areas)
        arch->compute.area_um2 = filled.compute.area_um2;
}

/* A file read as a design (map_timeloop_load_arch): the architecture,
 * the problem when there is one (it names the constraints' dimensions),
 * the constraints and the accelsearch_arch section. */
static as_code read_design(reader *r, const as_yaml_node *root)
{
    const as_yaml_node *architecture, *problem = NULL, *constraints = NULL;
    if (!root)
        return fail_at(r, NULL, "empty file");
    as_code rc = as_yaml_keys(&r->at, root, "Timeloop architecture file", design_keys);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "architecture", true, AS_YAML_MAPPING, &architecture);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "problem", false, AS_YAML_MAPPING, &problem);
    if (rc == AS_OK)
        rc = as_yaml_find(&r->at, root, "architecture_constraints", false, AS_YAML_MAPPING,
                          &constraints);
    if (rc == AS_OK)
        rc = read_architecture(r, architecture);
    if (rc == AS_OK && problem)
        rc = read_problem(r, problem);
    if (rc == AS_OK && constraints)
        rc = read_constraints(r, constraints);
    if (rc == AS_OK)
        rc = read_arch_extras(r, root);
    return rc;
}

/* Read an input file (see read_input; a design when design is set) and
 * its tables into out. */
static as_code load_file(const char *path, const char *ert_path, const char *art_path,
                         map_timeloop_case *out, map_search_options *options, bool design,
                         as_status *st)
{
    memset(out, 0, sizeof *out);
    reader r = {.at = as_yaml_reader_of(NULL, st), .out = out};
    for (int i = 0; i < ARCH_MAX_LEVELS; i++)
        r.split_ds[i] = -1;
    as_yaml_doc doc;
    as_code rc = as_yaml_load(path, &doc, st);
    if (rc != AS_OK)
        return rc;
    r.at.doc = &doc;
    rc = design ? read_design(&r, doc.root) : read_input(&r, doc.root, options);
    as_yaml_free(&doc);
    if (rc == AS_OK)
        apply_split(&r, &out->arch);
    if (rc == AS_OK && ert_path)
        rc = read_table_file(&r, ert_path, &ert_file);
    if (rc == AS_OK && art_path)
        rc = read_table_file(&r, art_path, &art_file);
    if (rc == AS_OK && ert_path)
        set_dram_energy(&out->arch);
    if (rc == AS_OK && (!ert_path || !art_path))
        fill_from_tables(&out->arch, !ert_path, !art_path);
    if (rc == AS_OK)
        apply_arch_extras(&r, &out->arch);
    if (out->is_layer) {
        out->arch.dram.bandwidth_GBps = r.dram_bandwidth_GBps;
        out->arch.dram.energy_pJ_per_bit = r.dram_pJ_per_bit;
    }
    return rc;
}

/* An input file (see read_input) and its tables. */
static as_code load_input(const char *path, const char *ert_path, const char *art_path,
                          map_timeloop_case *out, map_search_options *options, as_status *st)
{
    return load_file(path, ert_path, art_path, out, options, false, st);
}

as_code map_timeloop_load_arch(const char *path, const char *ert_path, const char *art_path,
                               arch_spec *out, as_status *st)
{
    map_timeloop_case *c = malloc(sizeof *c);
    if (!c)
        return as_fail(st, AS_ENOMEM, "%s: out of memory", path);
    as_status invalid;
    as_status_clear(&invalid);
    as_code rc = load_file(path, ert_path, art_path, c, NULL, true, st);
    if (rc == AS_OK && arch_validate(&c->arch, &invalid) != AS_OK)
        rc = as_fail(st, invalid.code, "%s: architecture: %s", path, invalid.message);
    if (rc == AS_OK)
        *out = c->arch;
    free(c);
    return rc;
}

bool map_timeloop_is_arch_file(const char *path)
{
    as_status ignored;
    as_yaml_doc doc;
    as_status_clear(&ignored);
    if (!path || arch_is_scalesim_path(path) || as_yaml_load(path, &doc, &ignored) != AS_OK)
        return false;
    bool found = doc.root && doc.root->kind == AS_YAML_MAPPING &&
                 as_yaml_get(doc.root, "architecture") != NULL;
    as_yaml_free(&doc);
    return found;
}

as_code map_timeloop_load(const char *model_input_path, const char *ert_path, const char *art_path,
                          map_timeloop_case *out, as_status *st)
{
    return load_input(model_input_path, ert_path, art_path, out, NULL, st);
}

as_code map_timeloop_load_mapper(const char *mapper_input_path, const char *ert_path,
                                 const char *art_path, map_mapper_case *out, as_status *st)
{
    memset(&out->options, 0, sizeof out->options);
    return load_input(mapper_input_path, ert_path, art_path, &out->model, &out->options, st);
}

bool map_timeloop_evaluate(const map_timeloop_case *c, map_eval *e, map_layer_result *layer)
{
    map_evaluate(&c->arch, &c->problem, &c->mapping, e);
    if (!c->is_layer || e->validity != MAP_VALID)
        return false;
    memset(layer, 0, sizeof *layer);
    layer->op = -1;
    layer->mapped = true;
    layer->macs = layer->padded_macs = e->macs;
    layer->mapping = c->mapping;
    layer->problem = c->problem;
    map_cost_mapped_layer(&c->arch, e, &c->problem, c->outside_dram_bytes, layer);
    map_finish_layer(&c->arch, layer);
    return true;
}

/* ------------------------------------------------------- any design */

/* The table of kind ("ERT" or "ART") beside the Timeloop architecture at
 * path into out: STEM.KIND.yaml, else KIND.yaml in the same directory;
 * "" when neither exists. */
static void table_beside(const char *path, const char *kind, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t dir_length = slash ? (size_t)(slash - path + 1) : 0;
    const char *dot = strrchr(path + dir_length, '.');
    size_t stem_length = dot ? (size_t)(dot - path) : strlen(path);
    char candidate[2][4096];
    snprintf(candidate[0], sizeof candidate[0], "%.*s.%s.yaml", (int)stem_length, path, kind);
    snprintf(candidate[1], sizeof candidate[1], "%.*s%s.yaml", (int)dir_length, path, kind);
    out[0] = '\0';
    for (int i = 0; i < 2 && !out[0]; i++) {
        FILE *f = fopen(candidate[i], "r");
        size_t length = strlen(candidate[i]);
        if (f) {
            fclose(f);
            if (length < size)
                memcpy(out, candidate[i], length + 1);
        }
    }
}

as_code map_design_load(const char *design, arch_spec *a, char *ert_path, char *art_path,
                        size_t path_bytes, as_status *st)
{
    char ert[4096], art[4096];
    if (ert_path)
        ert_path[0] = '\0';
    if (art_path)
        art_path[0] = '\0';
    if (!design || !map_timeloop_is_arch_file(design))
        return arch_load(design, a, st);
    table_beside(design, "ERT", ert, sizeof ert);
    table_beside(design, "ART", art, sizeof art);
    if (ert_path)
        snprintf(ert_path, path_bytes, "%s", ert);
    if (art_path)
        snprintf(art_path, path_bytes, "%s", art);
    return map_timeloop_load_arch(design, ert[0] ? ert : NULL, art[0] ? art : NULL, a, st);
}
