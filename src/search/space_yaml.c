/*
 * space_yaml.c -- design spaces in files (docs/space-format.md):
 * se_space_load reads a built-in space by name or a YAML file,
 * se_space_save writes a space so that se_space_load reads back the very
 * same struct (docs/spaces/ holds the built-ins, written by it).
 *
 * The reader is strict: every mapping's keys are checked, every value is
 * typed and checked where it is read, and every message names the file,
 * the line and the key path ("space.yaml:7: parameters.pe_x.stride: ...").
 * What makes a range, a fixed value or a name valid is decided by the
 * checks of space.c (space_private.h) that se_space_finish applies too,
 * so a file and a space built in code obey the same rules.  Every key a
 * file leaves out takes its template's value.
 */
#include "space_private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TEXT_BYTES = 64, WHY_BYTES = 200 };

/* The document being read (core's strict reader, at the top) and the
 * template its space fills in. */
typedef struct reader {
    as_yaml_reader at;
    const se_template_def *t;
} reader;

/* -------------------------------------------------------------- amounts */

/* Units a byte count may be written in, largest first (the writer picks
 * the largest that divides). */
static const struct byte_unit {
    const char *name;
    int64_t bytes;
} BYTE_UNITS[] = {{"GiB", (int64_t)1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}};
#define N_BYTE_UNITS ((int)(sizeof BYTE_UNITS / sizeof BYTE_UNITS[0]))

/* A byte count "4096", "16 KiB" or "16KiB" into *out; false when text is
 * not one or overflows. */
static bool parse_bytes(const char *text, int64_t *out)
{
    size_t digits = strspn(text, "0123456789");
    const char *unit = text + digits + (text[digits] == ' ');
    int64_t count = 0;
    if (digits == 0)
        return false;
    for (size_t i = 0; i < digits; i++)
        if (!as_mul_i64(count, 10, &count) || !as_add_i64(count, text[i] - '0', &count))
            return false;
    if (!*unit && unit == text + digits) {
        *out = count;
        return true;
    }
    for (int u = 0; u < N_BYTE_UNITS; u++)
        if (strcmp(unit, BYTE_UNITS[u].name) == 0)
            return as_mul_i64(count, BYTE_UNITS[u].bytes, out);
    return false;
}

int64_t se_param_index_parse(const se_space *s, int i, const char *text)
{
    const se_param *p = &s->param[i];
    int64_t value;
    if (p->kind == SE_PARAM_ENUM) {
        for (int k = 0; k < p->n_choices; k++)
            if (strcmp(p->choice[k], text) == 0)
                return k;
        return -1;
    }
    if (!parse_bytes(text, &value))
        return -1;
    int64_t index = se_param_index(p, value);
    return se_param_value(p, index) == value ? index : -1;
}

/* The integer node (the value of key under r) into *out: a byte count
 * with an optional unit when bytes, else a YAML integer. */
static as_code read_amount(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                           bool bytes, int64_t *out)
{
    char where[AS_YAML_PATH_BYTES];
    if (!bytes)
        return as_yaml_int(r->doc, node, as_yaml_key_path(r, key, where), out, r->st);
    if (node->kind == AS_YAML_SCALAR && parse_bytes(node->scalar, out))
        return AS_OK;
    return as_yaml_fail(r, node, key, "expected a byte count such as 4096 or '16 KiB', got '%.40s'",
                        node->kind == AS_YAML_SCALAR ? node->scalar : "(not a scalar)");
}

/* The index of the choice named by node (the value of key under r) among
 * the n names, or a failure listing them. */
static as_code read_choice(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                           const char (*names)[SE_NAME_BYTES], int n, int64_t *out)
{
    const char *list[SE_MAX_CHOICES + 1];
    int index = 0;
    for (int c = 0; c < n && c < SE_MAX_CHOICES; c++)
        list[c] = names[c];
    list[n < SE_MAX_CHOICES ? n : SE_MAX_CHOICES] = NULL;
    as_code rc = as_yaml_choice(r, node, key, list, &index);
    if (rc == AS_OK)
        *out = index;
    return rc;
}

/* ------------------------------------------------------------ top keys */

/* The name under key (1 .. SE_NAME_BYTES-1 of letters, digits, _.+-)
 * into dst; an absent key fails when required, else leaves dst. */
static as_code read_name(const reader *r, const as_yaml_node *map, const char *key, bool required,
                         char dst[SE_NAME_BYTES])
{
    const char *text = NULL;
    char why[WHY_BYTES];
    as_code rc = as_yaml_read_text(&r->at, map, key, required, &text);
    if (rc != AS_OK || !text)
        return rc;
    if (strlen(text) >= SE_NAME_BYTES || !se_name_ok(text, why, sizeof why))
        return as_yaml_fail(&r->at, as_yaml_get(map, key), key, "%s",
                            strlen(text) >= SE_NAME_BYTES ? "longer than 39 characters" : why);
    memset(dst, 0, SE_NAME_BYTES);
    memcpy(dst, text, strlen(text));
    return AS_OK;
}

/* technology_nm, clock_MHz and precision, each optional. */
static as_code read_settings(const reader *r, const as_yaml_node *root, se_space *s)
{
    const as_yaml_reader *at = &r->at;
    int64_t nm = s->technology_nm;
    double MHz = s->clock_hz / 1e6;
    const as_yaml_node *node;
    as_code rc =
        as_yaml_read_int(at, root, "technology_nm", false, ARCH_NODE_MIN_NM, ARCH_NODE_MAX_NM, &nm);
    if (rc != AS_OK)
        return rc;
    s->technology_nm = (int)nm;
    if (as_yaml_get(root, "clock_MHz")) {
        if ((rc = as_yaml_read_double(at, root, "clock_MHz", true, 0, true, 1e6, &MHz)) != AS_OK)
            return rc;
        s->clock_hz = MHz * 1e6;
    }
    if ((node = as_yaml_get(root, "precision")) &&
        (node->kind != AS_YAML_SCALAR || !wl_precision_parse(node->scalar, &s->precision)))
        return as_yaml_fail(at, node, "precision", "expected fp32, fp16, bf16, int8 or mixed");
    return AS_OK;
}

/* ---------------------------------------------------------- parameters */

static const char *const INT_KEYS[] = {"min", "max", "stride", NULL};
static const char *const POW2_KEYS[] = {"min", "max", "zero", NULL};
static const char *const ENUM_KEYS[] = {"choices", NULL};
static const char *const *const SPEC_KEYS[] = {
    [SE_PARAM_INT] = INT_KEYS, [SE_PARAM_POW2] = POW2_KEYS, [SE_PARAM_ENUM] = ENUM_KEYS};

/* The choices of an ENUM's spec (a list of names, the value of key under
 * r) into p. */
static as_code read_choices(const as_yaml_reader *r, const as_yaml_node *list, const char *key,
                            se_param *p)
{
    if (list->kind != AS_YAML_SEQUENCE || list->n < 1 || list->n > SE_MAX_CHOICES)
        return as_yaml_fail(r, list, key,
                            "expected a list of 1 to %d choices, e.g. [private, shared]",
                            SE_MAX_CHOICES);
    memset(p->choice, 0, sizeof p->choice);
    p->n_choices = list->n;
    for (int c = 0; c < list->n; c++) {
        const as_yaml_node *item = list->items[c];
        if (item->kind != AS_YAML_SCALAR || strlen(item->scalar) >= SE_NAME_BYTES)
            return as_yaml_fail(r, item, key, "expected a choice name");
        memcpy(p->choice[c], item->scalar, strlen(item->scalar));
    }
    return AS_OK;
}

/* The keys of a parameter's spec mapping (r is its reader) into p (which
 * holds the template's range: what the spec leaves out stays). */
static as_code read_spec_keys(const as_yaml_reader *r, const se_template_param *tp,
                              const as_yaml_node *spec, se_param *p)
{
    const as_yaml_node *node;
    int64_t *const bounds[] = {&p->min, &p->max, &p->stride};
    static const char *const BOUND_KEYS[] = {"min", "max", "stride"};
    as_code rc = AS_OK;
    for (int b = 0; b < 3 && rc == AS_OK; b++) {
        if (p->kind == SE_PARAM_ENUM || (b == 2 && p->kind != SE_PARAM_INT))
            continue;
        if ((node = as_yaml_get(spec, BOUND_KEYS[b])))
            rc = read_amount(r, node, BOUND_KEYS[b], tp->bytes, bounds[b]);
    }
    if (rc == AS_OK && p->kind == SE_PARAM_POW2)
        rc = as_yaml_read_bool(r, spec, "zero", false, &p->zero_allowed);
    if (rc == AS_OK && p->kind == SE_PARAM_ENUM && (node = as_yaml_get(spec, "choices")))
        rc = read_choices(r, node, "choices", p);
    return rc;
}

/* Parameter tp of the template from its spec node: null (the template's
 * range) or a mapping of the keys its kind has; checked by space.c's
 * rules, the message at the key at fault. */
static as_code read_param(const reader *r, const se_template_param *tp, const as_yaml_node *spec,
                          se_param *p)
{
    char why[WHY_BYTES];
    as_yaml_reader params = as_yaml_enter(&r->at, "parameters");
    as_yaml_reader at = as_yaml_enter(&params, tp->range.name);
    as_code rc;
    *p = tp->range;
    if (as_yaml_is_null(spec))
        return AS_OK;
    if ((rc = as_yaml_expect(&params, spec, tp->range.name, AS_YAML_MAPPING)) != AS_OK ||
        (rc = as_yaml_keys(&at, spec, NULL, SPEC_KEYS[p->kind])) != AS_OK ||
        (rc = read_spec_keys(&at, tp, spec, p)) != AS_OK)
        return rc;
    const char *bad = se_param_problem(tp, p, why, sizeof why);
    if (!bad)
        return AS_OK;
    const as_yaml_node *node = as_yaml_get(spec, bad);
    return as_yaml_fail(&at, node ? node : spec, bad, "%s", why);
}

/* The `parameters:` mapping (required, at least one) into s, in file
 * order; listed[k] marks template parameter k as searched. */
static as_code read_parameters(const reader *r, const as_yaml_node *root, se_space *s,
                               bool listed[SE_MAX_PARAMS])
{
    const as_yaml_node *map = as_yaml_get(root, "parameters");
    char names[256];
    as_code rc;
    if (!map)
        return as_yaml_fail(&r->at, root, "parameters", "missing (list at least one parameter)");
    if ((rc = as_yaml_expect(&r->at, map, "parameters", AS_YAML_MAPPING)) != AS_OK)
        return rc;
    if (map->n == 0)
        return as_yaml_fail(&r->at, map, "parameters", "empty (list at least one parameter)");
    for (int i = 0; i < map->n; i++) {
        int k = se_template_param_find(r->t, map->keys[i]);
        if (k < 0) {
            se_template_param_names(r->t, names, sizeof names);
            return as_fail(r->at.st, AS_EINVAL,
                           "%s:%d: parameters.%.40s: not a parameter of the %s template (%s)",
                           r->at.doc->path, map->key_lines[i], map->keys[i], r->t->name, names);
        }
        if ((rc = read_param(r, &r->t->param[k], map->items[i], &s->param[s->n_params])) != AS_OK)
            return rc;
        s->param[s->n_params].n_values = se_param_count(&s->param[s->n_params]);
        s->n_params++;
        listed[k] = true;
    }
    return AS_OK;
}

/* A value of template parameter tp (node, the value of key under r): an
 * ENUM's choice name (as an index into the template's choices), else an
 * amount. */
static as_code read_template_value(const as_yaml_reader *r, const se_template_param *tp,
                                   const as_yaml_node *node, const char *key, int64_t *out)
{
    if (tp->range.kind == SE_PARAM_ENUM)
        return read_choice(r, node, key, tp->range.choice, tp->range.n_choices, out);
    return read_amount(r, node, key, tp->bytes, out);
}

/* The `fixed:` mapping: values of template parameters the space does not
 * search, into s->fixed. */
static as_code read_fixed(const reader *r, const as_yaml_node *root, se_space *s,
                          const bool listed[SE_MAX_PARAMS])
{
    const as_yaml_node *map;
    as_yaml_reader at = as_yaml_enter(&r->at, "fixed");
    char why[WHY_BYTES];
    as_code rc = as_yaml_find_section(&r->at, root, "fixed", &map);
    if (rc != AS_OK || !map)
        return rc;
    for (int i = 0; i < map->n; i++) {
        const as_yaml_node *node = map->items[i];
        const char *key = map->keys[i];
        int k = se_template_param_find(r->t, key);
        if (k < 0)
            return as_yaml_fail(&at, node, key, "not a parameter of the %s template", r->t->name);
        if (listed[k])
            return as_yaml_fail(&at, node, key,
                                "searched under parameters, so it cannot be fixed too");
        int64_t v;
        if ((rc = read_template_value(&at, &r->t->param[k], node, key, &v)) != AS_OK)
            return rc;
        if (!se_fixed_value_ok(&r->t->param[k], v, why, sizeof why))
            return as_yaml_fail(&at, node, key, "%s", why);
        s->fixed[k] = v;
    }
    return AS_OK;
}

/* --------------------------------------------------------- constraints */

/* The budgets, by offset into se_constraints, so that the reader and the
 * writer walk one table. */
static const struct limit_key {
    const char *key;
    bool real;  /* double, else int64_t */
    bool bytes; /* a byte count ("512 KiB") */
    size_t offset;
} LIMIT_KEYS[] = {
    {"max_area_mm2", true, false, offsetof(se_constraints, max_area_mm2)},
    {"max_power_W", true, false, offsetof(se_constraints, max_power_W)},
    {"max_pes", false, false, offsetof(se_constraints, max_pes)},
    {"max_onchip_bytes", false, true, offsetof(se_constraints, max_onchip_bytes)},
};
#define N_LIMIT_KEYS ((int)(sizeof LIMIT_KEYS / sizeof LIMIT_KEYS[0]))

/* The `constraints:` mapping into s->limits; each key optional, finite
 * and not negative (0: no limit). */
static as_code read_constraints(const reader *r, const as_yaml_node *root, se_space *s)
{
    static const char *const KEYS[] = {"max_area_mm2", "max_power_W", "max_pes", "max_onchip_bytes",
                                       NULL};
    const as_yaml_node *map;
    as_yaml_reader at = as_yaml_enter(&r->at, "constraints");
    as_code rc = as_yaml_find_section(&r->at, root, "constraints", &map);
    if (rc == AS_OK && map)
        rc = as_yaml_keys(&at, map, NULL, KEYS);
    if (rc != AS_OK || !map)
        return rc;
    for (int i = 0; i < N_LIMIT_KEYS; i++) {
        const struct limit_key *lk = &LIMIT_KEYS[i];
        const as_yaml_node *node = as_yaml_get(map, lk->key);
        char *field = (char *)&s->limits + lk->offset;
        double real = 0;
        int64_t whole = 0;
        if (!node)
            continue;
        rc = lk->real ? as_yaml_read_double(&at, map, lk->key, true, 0, false, INFINITY, &real)
                      : read_amount(&at, node, lk->key, lk->bytes, &whole);
        if (rc != AS_OK)
            return rc;
        if (whole < 0)
            return as_yaml_fail(&at, node, lk->key, "'%s' must be 0 (no limit) or positive",
                                node->scalar);
        if (lk->real)
            memcpy(field, &real, sizeof real);
        else
            memcpy(field, &whole, sizeof whole);
    }
    return AS_OK;
}

/* ------------------------------------------------------------ baseline */

/* "1 .. 32 step 1", "powers of two 1 .. 256 (or 0)", "private, shared":
 * p's values, for messages. */
static void describe_values(const se_param *p, char *buf, size_t size)
{
    if (p->kind == SE_PARAM_INT)
        snprintf(buf, size, "%lld .. %lld step %lld", (long long)p->min, (long long)p->max,
                 (long long)p->stride);
    else if (p->kind == SE_PARAM_POW2)
        snprintf(buf, size, "powers of two %lld .. %lld%s", (long long)p->min, (long long)p->max,
                 p->zero_allowed ? " (or 0)" : "");
    else
        snprintf(buf, size, "one of the %d choices listed", p->n_choices);
}

/* The index of the baseline value (node, the value of key under r) of
 * parameter p (template parameter tp): an ENUM's choice among p's, else
 * exactly one of p's values. */
static as_code read_baseline_index(const as_yaml_reader *r, const se_template_param *tp,
                                   const se_param *p, const as_yaml_node *node, const char *key,
                                   int64_t *index)
{
    char values[TEXT_BYTES * 2];
    int64_t v;
    as_code rc;
    if (p->kind == SE_PARAM_ENUM)
        return read_choice(r, node, key, p->choice, p->n_choices, index);
    if ((rc = read_amount(r, node, key, tp->bytes, &v)) != AS_OK)
        return rc;
    *index = se_param_index(p, v);
    if (se_param_value(p, *index) == v)
        return AS_OK;
    describe_values(p, values, sizeof values);
    return as_yaml_fail(r, node, key, "%lld is not a value of %s (%s)", (long long)v, p->name,
                        values);
}

/* The index nearest template parameter tp's default among p's values (an
 * ENUM's default choice, or its first when p leaves it out): the baseline
 * of a parameter the file's baseline does not give. */
static int64_t default_index(const se_template_param *tp, const se_param *p)
{
    if (p->kind != SE_PARAM_ENUM)
        return se_param_index(p, tp->deflt);
    for (int c = 0; c < p->n_choices; c++)
        if (strcmp(p->choice[c], tp->range.choice[tp->deflt]) == 0)
            return c;
    return 0;
}

/* The `baseline:` mapping (values of searched parameters) into
 * s->baseline; parameters it leaves out take default_index. */
static as_code read_baseline(const reader *r, const as_yaml_node *root, se_space *s)
{
    const as_yaml_node *map;
    as_yaml_reader at = as_yaml_enter(&r->at, "baseline");
    for (int i = 0; i < s->n_params; i++) {
        int k = se_template_param_find(r->t, s->param[i].name);
        s->baseline[i] = default_index(&r->t->param[k], &s->param[i]);
    }
    as_code rc = as_yaml_find_section(&r->at, root, "baseline", &map);
    if (rc != AS_OK || !map)
        return rc;
    for (int j = 0; j < map->n; j++) {
        const char *key = map->keys[j];
        int i = se_space_find(s, key);
        if (i < 0)
            return as_yaml_fail(&at, map->items[j], key, "%s",
                                se_template_param_find(r->t, key) >= 0
                                    ? "not searched by this space (list it under parameters)"
                                    : "not a parameter of this space");
        int k = se_template_param_find(r->t, s->param[i].name);
        if ((rc = read_baseline_index(&at, &r->t->param[k], &s->param[i], map->items[j], key,
                                      &s->baseline[i])) != AS_OK)
            return rc;
    }
    return AS_OK;
}

/* -------------------------------------------------------------- loading */

/* The whole document into *s. */
static as_code read_space(const as_yaml_doc *doc, se_space *s, as_status *st)
{
    static const char *const TOP_KEYS[] = {
        "name",  "template",    "technology_nm", "clock_MHz", "precision", "parameters",
        "fixed", "constraints", "baseline_name", "baseline",  NULL};
    reader r = {.at = as_yaml_reader_of(doc, st)};
    const as_yaml_node *root = doc->root, *node;
    char name[SE_NAME_BYTES];
    bool listed[SE_MAX_PARAMS] = {false};
    if (!root)
        return as_fail(st, AS_EINVAL, "%s: empty document, expected a design space", doc->path);
    if (as_yaml_expect(&r.at, root, "the design space", AS_YAML_MAPPING) ||
        as_yaml_keys(&r.at, root, "the design space", TOP_KEYS) ||
        read_name(&r, root, "name", true, name))
        return st->code;
    if (!(node = as_yaml_get(root, "template")))
        return as_yaml_fail(&r.at, root, "template", "missing (edge or datapath)");
    if (node->kind != AS_YAML_SCALAR || !(r.t = se_template_find(node->scalar)))
        return as_yaml_fail(&r.at, node, "template", "expected edge or datapath");
    se_space_init(s, r.t->kind);
    memcpy(s->name, name, sizeof name);
    if (read_settings(&r, root, s) || read_parameters(&r, root, s, listed) ||
        read_fixed(&r, root, s, listed) || read_constraints(&r, root, s) ||
        read_name(&r, root, "baseline_name", false, s->baseline_name) || read_baseline(&r, root, s))
        return st->code;
    as_status finish;
    as_status_clear(&finish);
    if (se_space_finish(s, &finish) != AS_OK)
        return as_fail(st, finish.code, "%s: %s", doc->path, finish.message);
    return AS_OK;
}

as_code se_space_load(const char *name_or_path, se_space *out, as_status *st)
{
    as_status ignored;
    if (!st) {
        as_status_clear(&ignored);
        st = &ignored;
    }
    if (!name_or_path || !name_or_path[0])
        return as_fail(st, AS_EINVAL, "se_space_load: no space named");
    if (se_space_builtin(name_or_path, out))
        return AS_OK;
    FILE *probe = fopen(name_or_path, "r");
    if (!probe)
        return as_fail(st, AS_EIO,
                       "%s: not a built-in space (edge, datacenter) nor a readable "
                       "file: %s",
                       name_or_path, strerror(errno));
    fclose(probe);
    as_yaml_doc doc;
    if (as_yaml_load(name_or_path, &doc, st))
        return st->code;
    as_code code = read_space(&doc, out, st);
    as_yaml_free(&doc);
    if (code == AS_OK)
        snprintf(out->source, sizeof out->source, "%s", name_or_path);
    return code;
}

/* -------------------------------------------------------------- writing */

/* clock_hz as the shortest MHz text that the reader (MHz * 1e6) turns
 * back into the same double, among the doubles next to hz / 1e6 (200 MHz
 * and 940 MHz are exact); hz / 1e6 itself when none does. */
static void format_clock_MHz(double hz, char text[TEXT_BYTES])
{
    double MHz = hz / 1e6;
    char candidate[TEXT_BYTES];
    bool found = false;
    as_format_double(MHz, text);
    for (int step = 0; step < 8; step++)
        MHz = nextafter(MHz, 0);
    for (int step = 0; step <= 16; step++, MHz = nextafter(MHz, INFINITY)) {
        as_format_double(MHz, candidate);
        if (strtod(candidate, NULL) * 1e6 != hz)
            continue;
        if (!found || strlen(candidate) < strlen(text))
            snprintf(text, TEXT_BYTES, "%s", candidate);
        found = true;
    }
}

/* v as the file writes it: bytes in the largest unit that divides it
 * ("16 KiB", "520 B", "0"), other amounts as integers. */
static void format_amount(int64_t v, bool bytes, char text[TEXT_BYTES])
{
    for (int u = 0; bytes && v > 0 && u < N_BYTE_UNITS; u++)
        if (v % BYTE_UNITS[u].bytes == 0) {
            snprintf(text, TEXT_BYTES, "%lld %s", (long long)(v / BYTE_UNITS[u].bytes),
                     BYTE_UNITS[u].name);
            return;
        }
    snprintf(text, TEXT_BYTES, "%lld", (long long)v);
}

/* One line "  <entry>" with "# comment" aligned after it. */
static void write_commented(FILE *out, const char *entry, const char *comment)
{
    fprintf(out, "  %-56s # %s\n", entry, comment);
}

/* A searched parameter's line: its range in the keys of its kind. */
static void write_param(FILE *out, const se_template_param *tp, const se_param *p)
{
    char entry[3 * TEXT_BYTES + 64], a[TEXT_BYTES], b[TEXT_BYTES], c[TEXT_BYTES];
    if (p->kind == SE_PARAM_ENUM) {
        size_t used = (size_t)snprintf(entry, sizeof entry, "%s: {choices: [", p->name);
        for (int i = 0; i < p->n_choices; i++)
            used += (size_t)snprintf(entry + used, sizeof entry - used, "%s%s", i ? ", " : "",
                                     p->choice[i]);
        snprintf(entry + used, sizeof entry - used, "]}");
    } else {
        format_amount(p->min, tp->bytes, a);
        format_amount(p->max, tp->bytes, b);
        if (p->kind == SE_PARAM_INT) {
            format_amount(p->stride, tp->bytes, c);
            snprintf(entry, sizeof entry, "%s: {min: %s, max: %s, stride: %s}", p->name, a, b, c);
        } else {
            snprintf(entry, sizeof entry, "%s: {min: %s, max: %s%s}", p->name, a, b,
                     !tp->range.zero_allowed ? ""
                     : p->zero_allowed       ? ", zero: true"
                                             : ", zero: false");
        }
    }
    write_commented(out, entry, tp->meaning);
}

/* A value of parameter tp as the file writes it; choice names an ENUM's
 * choices (the template's for fixed values, the space's for the
 * baseline). */
static void format_value(const se_template_param *tp, const char (*choice)[SE_NAME_BYTES],
                         int64_t v, char text[TEXT_BYTES])
{
    if (tp->range.kind == SE_PARAM_ENUM)
        snprintf(text, TEXT_BYTES, "%s", choice[v]);
    else
        format_amount(v, tp->bytes, text);
}

/* The document of a finished space s of template t. */
static void write_space(FILE *out, const se_space *s, const se_template_def *t)
{
    char text[TEXT_BYTES], entry[2 * TEXT_BYTES];
    bool listed[SE_MAX_PARAMS] = {false};
    int n_fixed = 0;
    fprintf(out,
            "# A design space in accelsearch's format (docs/space-format.md), written by "
            "se_space_save.\nname: %s\ntemplate: %s\ntechnology_nm: %d\n",
            s->name, t->name, s->technology_nm);
    format_clock_MHz(s->clock_hz, text);
    fprintf(out, "clock_MHz: %s\nprecision: %s\nparameters:\n", text,
            wl_precision_name(s->precision));
    for (int i = 0; i < s->n_params; i++) {
        int k = se_template_param_find(t, s->param[i].name);
        listed[k] = true;
        write_param(out, &t->param[k], &s->param[i]);
    }
    for (int k = 0; k < t->n_params; k++) {
        if (listed[k])
            continue;
        if (n_fixed++ == 0)
            fputs("fixed:\n", out);
        format_value(&t->param[k], t->param[k].range.choice, s->fixed[k], text);
        snprintf(entry, sizeof entry, "%s: %s", t->param[k].range.name, text);
        write_commented(out, entry, t->param[k].meaning);
    }
    fputs("constraints:  # 0: no limit\n", out);
    for (int i = 0; i < N_LIMIT_KEYS; i++) {
        const char *field = (const char *)&s->limits + LIMIT_KEYS[i].offset;
        double real;
        int64_t whole;
        if (LIMIT_KEYS[i].real) {
            memcpy(&real, field, sizeof real);
            as_format_double(real, text);
        } else {
            memcpy(&whole, field, sizeof whole);
            format_amount(whole, LIMIT_KEYS[i].bytes, text);
        }
        fprintf(out, "  %s: %s\n", LIMIT_KEYS[i].key, text);
    }
    fprintf(out, "baseline_name: %s\nbaseline:\n", s->baseline_name);
    for (int i = 0; i < s->n_params; i++) {
        const se_param *p = &s->param[i];
        int k = se_template_param_find(t, p->name);
        format_value(&t->param[k], p->choice, se_param_value(p, s->baseline[i]), text);
        fprintf(out, "  %s: %s\n", p->name, text);
    }
}

as_code se_space_save(const se_space *s, const char *path, as_status *st)
{
    as_status ignored;
    if (!st) {
        as_status_clear(&ignored);
        st = &ignored;
    }
    if (!s || !path || !path[0])
        return as_fail(st, AS_EINVAL, "se_space_save: no space or no path");
    if (s->template_kind == SE_TEMPLATE_AROUND)
        return as_fail(st, AS_EINVAL,
                       "%s: space '%s' is around a design, which a space file cannot hold (give "
                       "--around and --vary again)",
                       path, s->name);
    se_space copy = *s; /* finished again: checked, canonical, in template order */
    if (se_space_finish(&copy, st))
        return st->code;
    FILE *out = fopen(path, "w");
    if (!out)
        return as_fail(st, AS_EIO, "%s: cannot write: %s", path, strerror(errno));
    write_space(out, &copy, se_template_get(copy.template_kind));
    bool failed = ferror(out) != 0;
    failed = fclose(out) != 0 || failed;
    return failed ? as_fail(st, AS_EIO, "%s: write failed: %s", path, strerror(errno)) : AS_OK;
}
