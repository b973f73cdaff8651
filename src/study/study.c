/*
 * study.c -- a study's specification: the study file (strict YAML), the
 * built-in default study, the canonical text the run store keeps, and the
 * grid's cell numbering.
 *
 * The canonical text is itself a study file with every field spelled
 * out, so that `study show RUN` rebuilds the spec by parsing what the
 * store kept, and a resumed run is found by comparing texts byte for byte.
 */
#include "study.h"

#include "../search/search.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- names */

static const char *const AXIS_NAMES[STUDY_NAXES] = {"model",  "compression", "algorithm",
                                                    "format", "software",    "hardware"};

const char *study_axis_name(study_axis a)
{
    return a >= 0 && a < STUDY_NAXES ? AXIS_NAMES[a] : "?";
}

static const char *const KIND_NAMES[] = {"none", "weight_pruning", "channel_pruning",
                                         "int8", "fp16",           NULL};
static const char *const KIND_SHORT[] = {"Dense", "WP", "CP", "i8", "f16"};

const char *study_compression_kind_name(study_compression_kind k)
{
    return k >= STUDY_COMPRESS_NONE && k <= STUDY_COMPRESS_FP16 ? KIND_NAMES[k] : "?";
}

const char *study_compression_kind_short(study_compression_kind k)
{
    return k >= STUDY_COMPRESS_NONE && k <= STUDY_COMPRESS_FP16 ? KIND_SHORT[k] : "?";
}

double study_compression_level(const study_compression *c, int model)
{
    double level = c->kind == STUDY_COMPRESS_WEIGHT_PRUNING    ? c->density
                   : c->kind == STUDY_COMPRESS_CHANNEL_PRUNING ? c->keep
                                                               : 1.0;
    if (model >= 0 && model < STUDY_MAX_ITEMS && c->model_level[model] > 0)
        level = c->model_level[model];
    return level;
}

/* --------------------------------------------------------- the grid */

int64_t study_cell_count(const study_spec *s)
{
    int64_t n = 1;
    for (int a = 0; a < STUDY_NAXES; a++)
        n *= s->n[a];
    return n;
}

void study_cell_coords(const study_spec *s, int64_t index, int coords[STUDY_NAXES])
{
    for (int a = STUDY_NAXES - 1; a >= 0; a--) {
        coords[a] = (int)(index % s->n[a]);
        index /= s->n[a];
    }
}

int64_t study_cell_index(const study_spec *s, const int coords[STUDY_NAXES])
{
    int64_t index = 0;
    for (int a = 0; a < STUDY_NAXES; a++)
        index = index * s->n[a] + coords[a];
    return index;
}

/* ------------------------------------------------------ the study file */

/* Copy src into a fixed-size name field, failing at node when too long. */
static as_code copy_name(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                         char *dst, size_t bytes, const char *src)
{
    if (!src[0])
        return as_yaml_fail(r, node, key, "must not be empty");
    if (strlen(src) >= bytes)
        return as_yaml_fail(r, node, key, "'%s' is longer than %zu characters", src, bytes - 1);
    memset(dst, 0, bytes);
    memcpy(dst, src, strlen(src));
    return AS_OK;
}

/* The label of a source: a file's stem ("cnn/my_net.onnx" -> "my_net"),
 * or the name itself. */
static void stem_of(const char *source, char *dst, size_t bytes)
{
    const char *base = strrchr(source, '/');
    base = base ? base + 1 : source;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        n = (size_t)(dot - base);
    if (n >= bytes)
        n = bytes - 1;
    memset(dst, 0, bytes);
    memcpy(dst, base, n);
}

/* An axis entry is a scalar (its name) or a mapping; *map is the mapping
 * or NULL, *scalar the scalar's text or NULL. */
static as_code entry_form(const as_yaml_reader *r, const as_yaml_node *item, const char **scalar,
                          const as_yaml_node **map)
{
    *scalar = NULL;
    *map = NULL;
    if (item->kind == AS_YAML_SCALAR)
        *scalar = item->scalar;
    else if (item->kind == AS_YAML_MAPPING)
        *map = item;
    else
        return as_yaml_fail(r, item, "", "expected a name or a mapping, got a sequence");
    return AS_OK;
}

/* The optional `name:` label of an entry mapping, else fallback. */
static as_code read_label(const as_yaml_reader *r, const as_yaml_node *map, char *dst,
                          const char *fallback)
{
    memset(dst, 0, STUDY_NAME_BYTES);
    if (map && as_yaml_get(map, "name"))
        return as_yaml_read_name(r, map, "name", true, dst, STUDY_NAME_BYTES);
    return copy_name(r, map, "name", dst, STUDY_NAME_BYTES, fallback);
}

static bool is_model_file(const char *source)
{
    return as_path_has_extension(source, ".onnx");
}

static as_code read_model(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s, int i)
{
    study_model *m = &s->model[i];
    const char *scalar, *source = NULL;
    const as_yaml_node *map;
    static const char *const keys[] = {"model", "name", "dataset", NULL};
    as_code rc = entry_form(r, item, &scalar, &map);
    if (rc == AS_OK && map)
        rc = as_yaml_keys(r, map, NULL, keys);
    if (rc == AS_OK && map)
        rc = as_yaml_read_text(r, map, "model", true, &source);
    if (rc != AS_OK)
        return rc;
    if (scalar)
        source = scalar;
    if (!is_model_file(source) && !wl_zoo_find(source))
        return as_yaml_fail(r, item, map ? "model" : "",
                            "unknown model '%s': not a zoo name (accelsearch zoo list) and not "
                            "an .onnx file",
                            source);
    char stem[STUDY_NAME_BYTES];
    stem_of(source, stem, sizeof stem);
    if ((rc = copy_name(r, item, "model", m->source, sizeof m->source, source)) != AS_OK ||
        (rc = read_label(r, map, m->name, stem)) != AS_OK)
        return rc;
    if (map && as_yaml_get(map, "dataset"))
        return as_yaml_read_name(r, map, "dataset", true, m->dataset, sizeof m->dataset);
    return AS_OK;
}

/* Index of the model labelled name, or -1. */
static int find_model(const study_spec *s, const char *name)
{
    for (int i = 0; i < s->n[STUDY_AXIS_MODEL]; i++)
        if (strcmp(s->model[i].name, name) == 0 || strcmp(s->model[i].source, name) == 0)
            return i;
    return -1;
}

/* `per_model: {model: level, ...}` of a pruning entry. */
static as_code read_per_model(const as_yaml_reader *r, const as_yaml_node *map, const study_spec *s,
                              study_compression *c)
{
    const as_yaml_node *levels;
    as_code rc = as_yaml_find_section(r, map, "per_model", &levels);
    if (rc != AS_OK || !levels)
        return rc;
    as_yaml_reader at = as_yaml_enter(r, "per_model");
    for (int i = 0; i < levels->n; i++) {
        int m = find_model(s, levels->keys[i]);
        if (m < 0)
            return as_yaml_fail(&at, levels->items[i], levels->keys[i],
                                "not a model of this study (list it under models: first)");
        rc =
            as_yaml_read_double(&at, levels, levels->keys[i], true, 0, true, 1, &c->model_level[m]);
        if (rc != AS_OK)
            return rc;
    }
    return AS_OK;
}

static as_code read_compression(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                                int i)
{
    study_compression *c = &s->compression[i];
    const char *scalar;
    const as_yaml_node *map, *kind_node;
    static const char *const keys[] = {"kind", "name", "density", "keep", "per_model", NULL};
    int kind;
    as_code rc = entry_form(r, item, &scalar, &map);
    if (rc == AS_OK && map && (rc = as_yaml_keys(r, map, NULL, keys)) == AS_OK)
        rc = as_yaml_find(r, map, "kind", true, AS_YAML_SCALAR, &kind_node);
    if (rc == AS_OK)
        rc = as_yaml_choice(r, map ? kind_node : item, map ? "kind" : "", KIND_NAMES, &kind);
    if (rc != AS_OK)
        return rc;
    c->kind = (study_compression_kind)kind;
    c->density = c->keep = 1.0;
    bool pruning =
        c->kind == STUDY_COMPRESS_WEIGHT_PRUNING || c->kind == STUDY_COMPRESS_CHANNEL_PRUNING;
    if (scalar && pruning)
        return as_yaml_fail(r, item, "", "%s needs its level: write {kind: %s, %s: FRACTION}",
                            scalar, scalar,
                            c->kind == STUDY_COMPRESS_WEIGHT_PRUNING ? "density" : "keep");
    if (map) {
        const char *level = c->kind == STUDY_COMPRESS_WEIGHT_PRUNING    ? "density"
                            : c->kind == STUDY_COMPRESS_CHANNEL_PRUNING ? "keep"
                                                                        : NULL;
        for (const char *const *k = keys + 2; *k && strcmp(*k, "per_model") != 0; k++)
            if (as_yaml_get(map, *k) && (!level || strcmp(*k, level) != 0))
                return as_yaml_fail(r, as_yaml_get(map, *k), *k, "does not apply to kind %s",
                                    KIND_NAMES[kind]);
        if (!pruning && as_yaml_get(map, "per_model"))
            return as_yaml_fail(r, as_yaml_get(map, "per_model"), "per_model",
                                "does not apply to kind %s", KIND_NAMES[kind]);
        if (level &&
            (rc = as_yaml_read_double(
                 r, map, level, true, 0, true, 1,
                 c->kind == STUDY_COMPRESS_WEIGHT_PRUNING ? &c->density : &c->keep)) != AS_OK)
            return rc;
        if ((rc = read_per_model(r, map, s, c)) != AS_OK)
            return rc;
    }
    return read_label(r, map, c->name, KIND_NAMES[kind]);
}

static as_code read_conv_algorithm(const as_yaml_reader *r, const as_yaml_node *node,
                                   const char *key, wl_conv_algorithm *out)
{
    if (node->kind != AS_YAML_SCALAR || !wl_conv_algorithm_parse(node->scalar, out))
        return as_yaml_fail(r, node, key,
                            "expected one of direct, im2col, winograd2, winograd4, got '%s'",
                            node->kind == AS_YAML_SCALAR ? node->scalar : "a collection");
    return AS_OK;
}

static as_code read_algorithm(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                              int i)
{
    study_algorithm *a = &s->algorithm[i];
    const char *scalar;
    const as_yaml_node *map, *node = item, *layers = NULL;
    static const char *const keys[] = {"algorithm", "name", "layers", NULL};
    as_code rc = entry_form(r, item, &scalar, &map);
    if (rc == AS_OK && map && (rc = as_yaml_keys(r, map, NULL, keys)) == AS_OK)
        rc = as_yaml_find(r, map, "algorithm", true, AS_YAML_SCALAR, &node);
    if (rc == AS_OK)
        rc = read_conv_algorithm(r, node, map ? "algorithm" : "", &a->algorithm);
    if (rc == AS_OK && map)
        rc = as_yaml_find_section(r, map, "layers", &layers);
    if (rc != AS_OK)
        return rc;
    as_yaml_reader at = as_yaml_enter(r, "layers");
    for (int k = 0; layers && k < layers->n; k++) {
        if (a->n_layers == STUDY_MAX_LAYER_CHOICES)
            return as_yaml_fail(&at, layers->items[k], layers->keys[k],
                                "more than %d per-layer choices", STUDY_MAX_LAYER_CHOICES);
        rc = copy_name(&at, layers->items[k], layers->keys[k], a->layers[a->n_layers].layer,
                       STUDY_NAME_BYTES, layers->keys[k]);
        if (rc == AS_OK)
            rc = read_conv_algorithm(&at, layers->items[k], layers->keys[k],
                                     &a->layers[a->n_layers].algorithm);
        if (rc != AS_OK)
            return rc;
        a->n_layers++;
    }
    return read_label(r, map, a->name, wl_conv_algorithm_name(a->algorithm));
}

static as_code read_format(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                           int index)
{
    study_format *f = &s->format[index];
    if (item->kind != AS_YAML_SCALAR)
        return as_yaml_fail(r, item, "", "expected a data format name");
    /* The name is checked against arch_data_format_names when the
     * hardware is known (arch_apply_data_format): a design that cannot
     * take a format is an invalid cell, an unknown name an error here. */
    int count;
    const char *const *names = arch_data_format_names(&count);
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], item->scalar) == 0)
            return copy_name(r, item, "", f->name, sizeof f->name, item->scalar);
    char list[256] = "";
    for (int i = 0; i < count; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    return as_yaml_fail(r, item, "", "unknown data format '%s' (expected one of %s)", item->scalar,
                        list);
}

static as_code read_software(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                             int i)
{
    study_software *w = &s->software[i];
    const char *scalar;
    const as_yaml_node *map;
    static const char *const keys[] = {"name",   "tuned",         "map_budget",
                                       "fusion", "fusion_budget", NULL};
    static const char *const names[] = {"untuned", "tuned", "tuned+fusion", NULL};
    as_code rc = entry_form(r, item, &scalar, &map);
    if (rc != AS_OK)
        return rc;
    w->map_budget = 2000;
    w->fusion_budget = 200;
    if (scalar) {
        int which;
        if ((rc = as_yaml_choice(r, item, "", names, &which)) != AS_OK)
            return rc;
        w->tuned = which > 0;
        w->fusion = which == 2;
        return copy_name(r, item, "", w->name, sizeof w->name, scalar);
    }
    if ((rc = as_yaml_keys(r, map, NULL, keys)) != AS_OK ||
        (rc = as_yaml_read_name(r, map, "name", true, w->name, sizeof w->name)) != AS_OK ||
        (rc = as_yaml_read_bool(r, map, "tuned", true, &w->tuned)) != AS_OK ||
        (rc = as_yaml_read_int(r, map, "map_budget", false, 1, INT64_C(1) << 40, &w->map_budget)) !=
            AS_OK ||
        (rc = as_yaml_read_bool(r, map, "fusion", false, &w->fusion)) != AS_OK ||
        (rc = as_yaml_read_int(r, map, "fusion_budget", false, 1, INT64_C(1) << 40,
                               &w->fusion_budget)) != AS_OK)
        return rc;
    if (!w->tuned && as_yaml_get(map, "map_budget"))
        return as_yaml_fail(r, as_yaml_get(map, "map_budget"), "map_budget",
                            "an untuned entry maps each layer once (its default mapping)");
    return AS_OK;
}

/* `point: {param: value, ...}` of a space entry as "param=value,..." text,
 * each checked against the space. */
static as_code read_point(const as_yaml_reader *r, const as_yaml_node *map, const char *space,
                          study_hardware *h)
{
    const as_yaml_node *point;
    as_code rc = as_yaml_find_section(r, map, "point", &point);
    if (rc != AS_OK || !point)
        return rc;
    se_space *sp = malloc(sizeof *sp);
    if (!sp)
        return as_fail(r->st, AS_ENOMEM, "out of memory");
    if ((rc = se_space_load(space, sp, r->st)) != AS_OK) {
        free(sp);
        return rc;
    }
    as_yaml_reader at = as_yaml_enter(r, "point");
    size_t used = 0;
    for (int i = 0; i < point->n && rc == AS_OK; i++) {
        const as_yaml_node *v = point->items[i];
        int param = se_space_find(sp, point->keys[i]);
        if (param < 0)
            rc = as_yaml_fail(&at, v, point->keys[i], "not a parameter of space '%s'", space);
        else if (v->kind != AS_YAML_SCALAR || se_param_index_parse(sp, param, v->scalar) < 0)
            rc = as_yaml_fail(&at, v, point->keys[i], "'%s' is not a value of parameter %s of '%s'",
                              v->kind == AS_YAML_SCALAR ? v->scalar : "(not a scalar)",
                              point->keys[i], space);
        else {
            int n = snprintf(h->point + used, sizeof h->point - used, "%s%s=%s", i ? "," : "",
                             point->keys[i], v->scalar);
            if (n < 0 || (size_t)n >= sizeof h->point - used)
                rc = as_yaml_fail(&at, v, point->keys[i], "the point is too long");
            used += (size_t)(n > 0 ? n : 0);
        }
    }
    free(sp);
    return rc;
}

static as_code read_hardware(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                             int i)
{
    study_hardware *h = &s->hardware[i];
    const char *scalar, *source = NULL;
    const as_yaml_node *map;
    static const char *const keys[] = {"arch", "space", "point", "name", NULL};
    as_code rc = entry_form(r, item, &scalar, &map);
    if (rc != AS_OK)
        return rc;
    if (map) {
        if ((rc = as_yaml_keys(r, map, NULL, keys)) != AS_OK)
            return rc;
        h->is_space_point = as_yaml_get(map, "space") != NULL;
        if (h->is_space_point == (as_yaml_get(map, "arch") != NULL))
            return as_yaml_fail(r, item, "", "give either arch: (a preset or file) or space:");
        rc = as_yaml_read_text(r, map, h->is_space_point ? "space" : "arch", true, &source);
        if (rc == AS_OK && !h->is_space_point && as_yaml_get(map, "point"))
            rc = as_yaml_fail(r, as_yaml_get(map, "point"), "point", "needs space:");
        if (rc == AS_OK && h->is_space_point)
            rc = read_point(r, map, source, h);
        if (rc != AS_OK)
            return rc;
    } else
        source = scalar;
    if (!h->is_space_point && !arch_preset_find(source) &&
        !(strlen(source) > 5 && strcmp(source + strlen(source) - 5, ".yaml") == 0))
        return as_yaml_fail(r, item, map ? "arch" : "",
                            "unknown architecture '%s': not a preset (accelsearch arch list) and "
                            "not a .yaml file",
                            source);
    char stem[STUDY_NAME_BYTES];
    stem_of(source, stem, sizeof stem);
    if ((rc = copy_name(r, item, "", h->source, sizeof h->source, source)) != AS_OK)
        return rc;
    return read_label(r, map, h->name, stem);
}

static as_code read_accuracy(const as_yaml_reader *r, const as_yaml_node *item, const study_spec *s,
                             study_accuracy *a)
{
    static const char *const keys[] = {"model", "compression", "top1", NULL};
    const char *model, *compression;
    as_code rc = as_yaml_expect(r, item, "", AS_YAML_MAPPING);
    if (rc == AS_OK && (rc = as_yaml_keys(r, item, NULL, keys)) == AS_OK &&
        (rc = as_yaml_require(r, item, keys)) == AS_OK &&
        (rc = as_yaml_read_text(r, item, "model", true, &model)) == AS_OK &&
        (rc = as_yaml_read_text(r, item, "compression", true, &compression)) == AS_OK)
        rc = as_yaml_read_double(r, item, "top1", true, 0, false, 1, &a->top1);
    if (rc != AS_OK)
        return rc;
    if ((a->model = find_model(s, model)) < 0)
        return as_yaml_fail(r, as_yaml_get(item, "model"), "model",
                            "'%s' is not a model of this study", model);
    a->compression = -1;
    for (int i = 0; i < s->n[STUDY_AXIS_COMPRESSION]; i++)
        if (strcmp(s->compression[i].name, compression) == 0)
            a->compression = i;
    if (a->compression < 0)
        return as_yaml_fail(r, as_yaml_get(item, "compression"), "compression",
                            "'%s' is not a compression of this study", compression);
    return AS_OK;
}

/* The reader of one axis entry: item of the axis' sequence into slot i
 * of that axis in s (the entries before it already read). */
typedef as_code (*entry_reader)(const as_yaml_reader *r, const as_yaml_node *item, study_spec *s,
                                int i);

/* The label of entry i of axis a (for duplicate checks). */
static const char *entry_label(const study_spec *s, study_axis a, int i)
{
    switch (a) {
    case STUDY_AXIS_MODEL:
        return s->model[i].name;
    case STUDY_AXIS_COMPRESSION:
        return s->compression[i].name;
    case STUDY_AXIS_ALGORITHM:
        return s->algorithm[i].name;
    case STUDY_AXIS_FORMAT:
        return s->format[i].name;
    case STUDY_AXIS_SOFTWARE:
        return s->software[i].name;
    default:
        return s->hardware[i].name;
    }
}

static const char *const AXIS_KEYS[STUDY_NAXES] = {"models",  "compressions", "algorithms",
                                                   "formats", "software",     "hardware"};

/* One axis: a non-empty sequence of at most STUDY_MAX_ITEMS entries with
 * distinct labels (default_name: the single entry when the key is
 * absent, or NULL when the axis is required). */
static as_code read_axis(const as_yaml_reader *r, const as_yaml_node *root, study_axis a,
                         entry_reader read, const char *default_name, study_spec *s)
{
    const as_yaml_node *seq;
    as_code rc = as_yaml_find(r, root, AXIS_KEYS[a], !default_name, AS_YAML_SEQUENCE, &seq);
    if (rc != AS_OK)
        return rc;
    if (!seq) {
        as_yaml_node item = {.kind = AS_YAML_SCALAR, .scalar = default_name};
        s->n[a] = 1;
        return read(r, &item, s, 0);
    }
    if (seq->n < 1 || seq->n > STUDY_MAX_ITEMS)
        return as_yaml_fail(r, seq, AXIS_KEYS[a], "expected 1 to %d entries, got %d",
                            STUDY_MAX_ITEMS, seq->n);
    for (int i = 0; i < seq->n; i++) {
        as_yaml_reader at = as_yaml_enter_item(r, AXIS_KEYS[a], i);
        if ((rc = read(&at, seq->items[i], s, i)) != AS_OK)
            return rc;
        s->n[a] = i + 1;
        for (int j = 0; j < i; j++)
            if (strcmp(entry_label(s, a, i), entry_label(s, a, j)) == 0)
                return as_yaml_fail(&at, seq->items[i], "",
                                    "a second %s labelled '%s' (give it a name:)",
                                    study_axis_name(a), entry_label(s, a, i));
    }
    return AS_OK;
}

static as_code read_spec(const as_yaml_doc *doc, study_spec *s, as_status *st)
{
    static const char *const keys[] = {"name",         "seed",       "batch",   "models",
                                       "compressions", "algorithms", "formats", "software",
                                       "hardware",     "accuracy",   NULL};
    static const entry_reader readers[STUDY_NAXES] = {read_model,  read_compression, read_algorithm,
                                                      read_format, read_software,    read_hardware};
    static const char *const defaults[STUDY_NAXES] = {NULL,    "none",    "direct",
                                                      "dense", "untuned", NULL};
    as_yaml_reader r = as_yaml_reader_of(doc, st);
    const as_yaml_node *root = doc->root, *acc;
    memset(s, 0, sizeof *s);
    s->seed = 1;
    int64_t seed = 1, batch = 1;
    if (!root)
        return as_fail(st, AS_EINVAL, "%s: empty study file", doc->path);
    as_code rc = as_yaml_expect(&r, root, "", AS_YAML_MAPPING);
    if (rc == AS_OK && (rc = as_yaml_keys(&r, root, "the study", keys)) == AS_OK &&
        (rc = as_yaml_read_int(&r, root, "seed", false, 0, INT64_MAX, &seed)) == AS_OK)
        rc = as_yaml_read_int(&r, root, "batch", false, 1, 4096, &batch);
    if (rc == AS_OK && as_yaml_get(root, "name"))
        rc = as_yaml_read_name(&r, root, "name", true, s->name, sizeof s->name);
    else if (rc == AS_OK) {
        char stem[STUDY_NAME_BYTES];
        stem_of(doc->path, stem, sizeof stem);
        memcpy(s->name, stem, sizeof stem);
    }
    for (int a = 0; a < STUDY_NAXES && rc == AS_OK; a++)
        rc = read_axis(&r, root, (study_axis)a, readers[a], defaults[a], s);
    if (rc == AS_OK)
        rc = as_yaml_find(&r, root, "accuracy", false, AS_YAML_SEQUENCE, &acc);
    if (rc != AS_OK)
        return rc;
    s->seed = (uint64_t)seed;
    s->batch = (int)batch;
    for (int i = 0; acc && i < acc->n; i++) {
        as_yaml_reader at = as_yaml_enter_item(&r, "accuracy", i);
        if (i == (int)(sizeof s->accuracy / sizeof s->accuracy[0]))
            return as_yaml_fail(&at, acc->items[i], "", "too many accuracy entries");
        if ((rc = read_accuracy(&at, acc->items[i], s, &s->accuracy[i])) != AS_OK)
            return rc;
        s->n_accuracy = i + 1;
    }
    return AS_OK;
}

as_code study_parse(const char *text, size_t size, const char *display_name, study_spec *out,
                    as_status *st)
{
    as_yaml_doc doc;
    as_code rc = as_yaml_parse(text, size, display_name, &doc, st);
    if (rc != AS_OK)
        return rc;
    rc = read_spec(&doc, out, st);
    as_yaml_free(&doc);
    return rc;
}

as_code study_load(const char *path, study_spec *out, as_status *st)
{
    as_yaml_doc doc;
    as_code rc = as_yaml_load(path, &doc, st);
    if (rc != AS_OK)
        return rc;
    rc = read_spec(&doc, out, st);
    as_yaml_free(&doc);
    return rc;
}

/* ------------------------------------------------------ canonical text */

/* A growable text; on failure (out of memory) it stops growing and
 * text_take returns NULL. */
typedef struct text {
    char *data;
    size_t used, capacity;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) AS_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->data ? t->data + t->used : NULL, t->data ? t->capacity - t->used : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->data && t->used + (size_t)n < t->capacity) {
            t->used += (size_t)n;
            return;
        }
        size_t capacity = t->capacity ? t->capacity * 2 : 4096;
        while (capacity <= t->used + (size_t)n)
            capacity *= 2;
        char *grown = realloc(t->data, capacity);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->data = grown;
        t->capacity = capacity;
    }
}

/* s as a double-quoted YAML scalar. */
static void put_quoted(text *t, const char *s)
{
    put(t, "\"");
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            put(t, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            put(t, "\\x%02x", (unsigned char)*s);
        else
            put(t, "%c", *s);
    put(t, "\"");
}

/* A double that reads back to itself. */
static void put_number(text *t, double v)
{
    char buf[AS_DOUBLE_TEXT_BYTES];
    put(t, "%s", as_format_double(v, buf));
}

static void put_compression(text *t, const study_spec *s, const study_compression *c)
{
    put(t, "  - {name: ");
    put_quoted(t, c->name);
    put(t, ", kind: %s", KIND_NAMES[c->kind]);
    if (c->kind == STUDY_COMPRESS_WEIGHT_PRUNING || c->kind == STUDY_COMPRESS_CHANNEL_PRUNING) {
        put(t, c->kind == STUDY_COMPRESS_WEIGHT_PRUNING ? ", density: " : ", keep: ");
        put_number(t, c->kind == STUDY_COMPRESS_WEIGHT_PRUNING ? c->density : c->keep);
        bool any = false;
        for (int m = 0; m < s->n[STUDY_AXIS_MODEL]; m++)
            if (c->model_level[m] > 0) {
                put(t, any ? ", " : ", per_model: {");
                put_quoted(t, s->model[m].name);
                put(t, ": ");
                put_number(t, c->model_level[m]);
                any = true;
            }
        if (any)
            put(t, "}");
    }
    put(t, "}\n");
}

static void put_algorithm(text *t, const study_algorithm *a)
{
    put(t, "  - {name: ");
    put_quoted(t, a->name);
    put(t, ", algorithm: %s", wl_conv_algorithm_name(a->algorithm));
    for (int i = 0; i < a->n_layers; i++) {
        put(t, i ? ", " : ", layers: {");
        put_quoted(t, a->layers[i].layer);
        put(t, ": %s", wl_conv_algorithm_name(a->layers[i].algorithm));
    }
    put(t, a->n_layers ? "}}\n" : "}\n");
}

static void put_hardware(text *t, const study_hardware *h)
{
    put(t, "  - {name: ");
    put_quoted(t, h->name);
    put(t, h->is_space_point ? ", space: " : ", arch: ");
    put_quoted(t, h->source);
    if (h->is_space_point && h->point[0]) {
        put(t, ", point: {");
        for (const char *p = h->point; *p;) {
            const char *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            const char *eq = memchr(p, '=', n);
            put(t, "%s%.*s: ", p == h->point ? "" : ", ", (int)(eq - p), p);
            char value[STUDY_PATH_BYTES];
            snprintf(value, sizeof value, "%.*s", (int)(n - (size_t)(eq + 1 - p)), eq + 1);
            put_quoted(t, value);
            p = end ? end + 1 : p + n;
        }
        put(t, "}");
    }
    put(t, "}\n");
}

char *study_canonical(const study_spec *s)
{
    text t = {0};
    put(&t, "name: ");
    put_quoted(&t, s->name);
    put(&t, "\nseed: %llu\nbatch: %d\nmodels:\n", (unsigned long long)s->seed, s->batch);
    for (int i = 0; i < s->n[STUDY_AXIS_MODEL]; i++) {
        put(&t, "  - {name: ");
        put_quoted(&t, s->model[i].name);
        put(&t, ", model: ");
        put_quoted(&t, s->model[i].source);
        if (s->model[i].dataset[0]) {
            put(&t, ", dataset: ");
            put_quoted(&t, s->model[i].dataset);
        }
        put(&t, "}\n");
    }
    put(&t, "compressions:\n");
    for (int i = 0; i < s->n[STUDY_AXIS_COMPRESSION]; i++)
        put_compression(&t, s, &s->compression[i]);
    put(&t, "algorithms:\n");
    for (int i = 0; i < s->n[STUDY_AXIS_ALGORITHM]; i++)
        put_algorithm(&t, &s->algorithm[i]);
    put(&t, "formats:\n");
    for (int i = 0; i < s->n[STUDY_AXIS_FORMAT]; i++)
        put(&t, "  - %s\n", s->format[i].name);
    put(&t, "software:\n");
    for (int i = 0; i < s->n[STUDY_AXIS_SOFTWARE]; i++) {
        const study_software *w = &s->software[i];
        put(&t, "  - {name: ");
        put_quoted(&t, w->name);
        put(&t, ", tuned: %s", w->tuned ? "true" : "false");
        if (w->tuned)
            put(&t, ", map_budget: %lld", (long long)w->map_budget);
        put(&t, ", fusion: %s", w->fusion ? "true" : "false");
        if (w->fusion)
            put(&t, ", fusion_budget: %lld", (long long)w->fusion_budget);
        put(&t, "}\n");
    }
    put(&t, "hardware:\n");
    for (int i = 0; i < s->n[STUDY_AXIS_HARDWARE]; i++)
        put_hardware(&t, &s->hardware[i]);
    if (s->n_accuracy)
        put(&t, "accuracy:\n");
    for (int i = 0; i < s->n_accuracy; i++) {
        const study_accuracy *a = &s->accuracy[i];
        put(&t, "  - {model: ");
        put_quoted(&t, s->model[a->model].name);
        put(&t, ", compression: ");
        put_quoted(&t, s->compression[a->compression].name);
        put(&t, ", top1: ");
        put_number(&t, a->top1);
        put(&t, "}\n");
    }
    if (t.failed) {
        free(t.data);
        return NULL;
    }
    return t.data;
}

/* ------------------------------------------------------ default study */

/* docs/studies/dlas.yaml, compiled in by CMakeLists.txt. */
extern const char study_default_text[];

as_code study_default(study_spec *out, as_status *st)
{
    return study_parse(study_default_text, strlen(study_default_text),
                       "docs/studies/dlas.yaml (built in)", out, st);
}
