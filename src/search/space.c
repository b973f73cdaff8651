/*
 * space.c -- design spaces: their checks, the built-in spaces, points
 * (indices, unit-cube coordinates, text, JSON), and the decoding of a
 * point into an arch_spec checked against the space's budgets.  The two
 * templates are templates.c's; the file format is space_yaml.c's
 * (docs/space-format.md).
 *
 * A template is a parameter table plus a builder.  A space lists a subset
 * of its template's parameters, each with a range inside the table's hard
 * limits; the template parameters it leaves out hold the space's fixed
 * values.  A point is one index per listed parameter.  Decoding turns the
 * indices into values, lays the values of *all* template parameters side
 * by side in the template's order (fixed ones filled in) and hands them to
 * the template's builder, which knows nothing of spaces.  A finished
 * space keeps its parameters in template order (se_space_finish sorts
 * them), so matching them to the template is one merge walk -- decode is
 * called some 100k times by engines and tests and allocates nothing.
 *
 * The two templates are documented where their tables are (templates.c),
 * with the sources of every number; "assumed" marks what no source gives.
 */
#include "space_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- parameter checks */

static bool is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* log2 of a power of two. */
static int log2_of(int64_t v)
{
    int n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

/* Whether text is a NUL-terminated string of at most SE_NAME_BYTES - 1
 * characters (a struct filled in code may hold anything). */
static bool terminated(const char text[SE_NAME_BYTES])
{
    return memchr(text, '\0', SE_NAME_BYTES) != NULL;
}

/* The index of the choice called name in t's choices, or -1. */
static int template_choice(const se_template_param *t, const char *name)
{
    for (int c = 0; c < t->range.n_choices; c++)
        if (strcmp(t->range.choice[c], name) == 0)
            return c;
    return -1;
}

/* The range checks every bounded kind shares: min and max within the
 * hard limits and in order.  NULL when fine. */
static const char *bounds_problem(const se_template_param *t, const se_param *p, char *why,
                                  size_t size)
{
    if (p->min < t->lowest) {
        snprintf(why, size, "min %lld is below %lld, the least this parameter can be",
                 (long long)p->min, (long long)t->lowest);
        return "min";
    }
    if (p->max > t->highest) {
        snprintf(why, size, "max %lld is above %lld, the most this parameter can be",
                 (long long)p->max, (long long)t->highest);
        return "max";
    }
    if (p->max < p->min) {
        snprintf(why, size, "max %lld is below min %lld: the range is empty", (long long)p->max,
                 (long long)p->min);
        return "max";
    }
    return NULL;
}

/* INT: a positive stride, min and stride on the template's granule, max
 * reached exactly from min. */
static const char *int_problem(const se_template_param *t, const se_param *p, char *why,
                               size_t size)
{
    if (p->stride < 1) {
        snprintf(why, size, "stride %lld must be positive", (long long)p->stride);
        return "stride";
    }
    const char *key = bounds_problem(t, p, why, size);
    if (key)
        return key;
    if (p->min % t->granule || p->stride % t->granule) {
        bool min_off = p->min % t->granule != 0;
        snprintf(why, size, "%s %lld is not a multiple of %lld%s", min_off ? "min" : "stride",
                 (long long)(min_off ? p->min : p->stride), (long long)t->granule,
                 t->bytes ? " bytes (whole words or rows)" : "");
        return min_off ? "min" : "stride";
    }
    if ((p->max - p->min) % p->stride) {
        snprintf(why, size, "max - min = %lld is not a multiple of stride %lld",
                 (long long)(p->max - p->min), (long long)p->stride);
        return "stride";
    }
    return NULL;
}

/* POW2: min and max powers of two within the limits; 0 only where the
 * template has a meaning for it. */
static const char *pow2_problem(const se_template_param *t, const se_param *p, char *why,
                                size_t size)
{
    if (!is_pow2(p->min) || !is_pow2(p->max)) {
        bool min_off = !is_pow2(p->min);
        snprintf(why, size, "%s %lld is not a power of two", min_off ? "min" : "max",
                 (long long)(min_off ? p->min : p->max));
        return min_off ? "min" : "max";
    }
    const char *key = bounds_problem(t, p, why, size);
    if (key)
        return key;
    if (p->zero_allowed && !t->range.zero_allowed) {
        snprintf(why, size, "0 is not a value of this parameter");
        return "zero";
    }
    return NULL;
}

/* ENUM: 1 .. the template's choices, each one of them, none twice. */
static const char *enum_problem(const se_template_param *t, const se_param *p, char *why,
                                size_t size)
{
    if (p->n_choices < 1 || p->n_choices > t->range.n_choices) {
        snprintf(why, size, "%d choices: give 1 to %d of the template's", p->n_choices,
                 t->range.n_choices);
        return "choices";
    }
    for (int c = 0; c < p->n_choices; c++) {
        const char *name = p->choice[c];
        if (!terminated(name) || template_choice(t, name) < 0) {
            snprintf(why, size, "'%.*s' is not a choice (expected %s%s%s%s%s)", SE_NAME_BYTES - 1,
                     name, t->range.choice[0], t->range.n_choices > 1 ? ", " : "",
                     t->range.n_choices > 1 ? t->range.choice[1] : "",
                     t->range.n_choices > 2 ? ", " : "",
                     t->range.n_choices > 2 ? t->range.choice[2] : "");
            return "choices";
        }
        for (int d = 0; d < c; d++)
            if (strcmp(p->choice[d], name) == 0) {
                snprintf(why, size, "'%s' is listed twice", name);
                return "choices";
            }
    }
    return NULL;
}

const char *se_param_problem(const se_template_param *t, const se_param *p, char *why, size_t size)
{
    static const char *const KIND_NAMES[] = {"int", "pow2", "enum"};
    if (p->kind != t->range.kind) {
        bool known = (unsigned)p->kind <= SE_PARAM_ENUM;
        snprintf(why, size, "kind %s does not match the template's %s",
                 known ? KIND_NAMES[p->kind] : "?", KIND_NAMES[t->range.kind]);
        return "kind";
    }
    switch (p->kind) {
    case SE_PARAM_INT:
        return int_problem(t, p, why, size);
    case SE_PARAM_POW2:
        return pow2_problem(t, p, why, size);
    case SE_PARAM_ENUM:
        return enum_problem(t, p, why, size);
    }
    return NULL;
}

bool se_fixed_value_ok(const se_template_param *t, int64_t v, char *why, size_t size)
{
    bool ok;
    switch (t->range.kind) {
    case SE_PARAM_INT:
        ok = v >= t->lowest && v <= t->highest && v % t->granule == 0;
        snprintf(why, size, "%lld is not a multiple of %lld from %lld to %lld", (long long)v,
                 (long long)t->granule, (long long)t->lowest, (long long)t->highest);
        return ok;
    case SE_PARAM_POW2:
        ok = (v == 0 && t->range.zero_allowed) || (is_pow2(v) && v >= t->lowest && v <= t->highest);
        snprintf(why, size, "%lld is not a power of two from %lld to %lld%s", (long long)v,
                 (long long)t->lowest, (long long)t->highest, t->range.zero_allowed ? " or 0" : "");
        return ok;
    case SE_PARAM_ENUM:
        snprintf(why, size, "choice %lld is not one of the template's %d", (long long)v,
                 t->range.n_choices);
        return v >= 0 && v < t->range.n_choices;
    }
    return false;
}

bool se_name_ok(const char *name, char *why, size_t size)
{
    static const char ALLOWED[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789_.+-";
    size_t n = strnlen(name, SE_NAME_BYTES);
    if (n == 0 || n >= SE_NAME_BYTES) {
        snprintf(why, size, "a name has 1 to %d characters", SE_NAME_BYTES - 1);
        return false;
    }
    if (strspn(name, ALLOWED) != n) {
        snprintf(why, size, "'%s' has a character other than letters, digits and _.+-", name);
        return false;
    }
    return true;
}

int64_t se_param_count(const se_param *p)
{
    switch (p->kind) {
    case SE_PARAM_INT:
        return (p->max - p->min) / p->stride + 1;
    case SE_PARAM_POW2:
        return log2_of(p->max) - log2_of(p->min) + 1 + (p->zero_allowed ? 1 : 0);
    case SE_PARAM_ENUM:
        return p->n_choices;
    }
    return 0;
}

/* ------------------------------------------------------------ finishing */

/* A copy of a name with every byte after its NUL cleared, so that equal
 * names are equal arrays (dst and src may be the same). */
static void canonical_name(char dst[SE_NAME_BYTES], const char *src)
{
    char clean[SE_NAME_BYTES] = {0};
    memcpy(clean, src, strnlen(src, SE_NAME_BYTES - 1));
    memcpy(dst, clean, SE_NAME_BYTES);
}

/* Clear what p's kind does not use, so that two spaces that mean the same
 * compare equal field by field (and save writes nothing stray). */
static void canonical_param(se_param *p)
{
    canonical_name(p->name, p->name);
    if (p->kind != SE_PARAM_INT)
        p->stride = 0;
    if (p->kind != SE_PARAM_POW2)
        p->zero_allowed = false;
    if (p->kind == SE_PARAM_ENUM)
        p->min = p->max = 0;
    else
        p->n_choices = 0;
    for (int c = 0; c < SE_MAX_CHOICES; c++) {
        if (c < p->n_choices)
            canonical_name(p->choice[c], p->choice[c]);
        else
            memset(p->choice[c], 0, SE_NAME_BYTES);
    }
    p->n_values = se_param_count(p);
}

/* Everything about s but its parameters: template, names, node, clock,
 * precision, budgets. */
static as_code check_settings(const se_space *s, as_status *st)
{
    char why[160];
    const char *name = terminated(s->name) ? s->name : "?";
    if (!se_template_get(s->template_kind))
        return as_fail(st, AS_EINVAL, "space '%s': template %d is not edge, datapath or around",
                       name, (int)s->template_kind);
    if (!se_name_ok(s->name, why, sizeof why))
        return as_fail(st, AS_EINVAL, "space '%s': name: %s", name, why);
    if (!terminated(s->baseline_name) || !se_name_ok(s->baseline_name, why, sizeof why))
        return as_fail(st, AS_EINVAL, "space '%s': baseline_name: %s", name, why);
    if (s->technology_nm < ARCH_NODE_MIN_NM || s->technology_nm > ARCH_NODE_MAX_NM)
        return as_fail(st, AS_EINVAL, "space '%s': technology_nm %d is outside %d .. %d", name,
                       s->technology_nm, ARCH_NODE_MIN_NM, ARCH_NODE_MAX_NM);
    if (!(s->clock_hz > 0) || !isfinite(s->clock_hz))
        return as_fail(st, AS_EINVAL, "space '%s': clock %g Hz must be positive", name,
                       s->clock_hz);
    if ((unsigned)s->precision > WL_PREC_MIXED)
        return as_fail(st, AS_EINVAL, "space '%s': precision %d is not a precision", name,
                       (int)s->precision);
    const se_constraints *c = &s->limits;
    if (!(c->max_area_mm2 >= 0 && isfinite(c->max_area_mm2)) ||
        !(c->max_power_W >= 0 && isfinite(c->max_power_W)) || c->max_pes < 0 ||
        c->max_onchip_bytes < 0)
        return as_fail(st, AS_EINVAL, "space '%s': constraints must be finite and not negative",
                       name);
    return AS_OK;
}

/* Sort s's parameters (and the baseline with them) into the order of
 * template t, failing on a name t does not have or one given twice.
 * Insertion sort: at most SE_MAX_PARAMS entries. */
static as_code sort_params(se_space *s, const se_template_def *t, as_status *st)
{
    int position[SE_MAX_PARAMS];
    char names[256];
    for (int i = 0; i < s->n_params; i++) {
        const char *pname = terminated(s->param[i].name) ? s->param[i].name : "?";
        position[i] = se_template_param_find(t, pname);
        if (position[i] < 0) {
            se_template_param_names(t, names, sizeof names);
            return as_fail(st, AS_EINVAL,
                           "space '%s': '%s' is not a parameter of the %s template (%s)", s->name,
                           pname, t->name, names);
        }
    }
    for (int i = 1; i < s->n_params; i++) {
        se_param p = s->param[i];
        int64_t b = s->baseline[i];
        int pos = position[i], j = i;
        for (; j > 0 && position[j - 1] > pos; j--) {
            s->param[j] = s->param[j - 1];
            s->baseline[j] = s->baseline[j - 1];
            position[j] = position[j - 1];
        }
        s->param[j] = p;
        s->baseline[j] = b;
        position[j] = pos;
    }
    for (int i = 1; i < s->n_params; i++)
        if (position[i] == position[i - 1])
            return as_fail(st, AS_EINVAL, "space '%s': parameter '%s' is given twice", s->name,
                           s->param[i].name);
    return AS_OK;
}

as_code se_space_finish(se_space *s, as_status *st)
{
    as_code rc = check_settings(s, st);
    if (rc != AS_OK)
        return rc;
    canonical_name(s->name, s->name);
    canonical_name(s->baseline_name, s->baseline_name);
    const se_template_def *t = se_template_get(s->template_kind);
    if (s->n_params < 1 || s->n_params > t->n_params)
        return as_fail(st, AS_EINVAL, "space '%s': %d parameters: give 1 to %d", s->name,
                       s->n_params, t->n_params);
    if ((rc = sort_params(s, t, st)) != AS_OK)
        return rc;
    char why[200];
    bool listed[SE_MAX_PARAMS] = {false};
    for (int i = 0; i < s->n_params; i++) {
        se_param *p = &s->param[i];
        int k = se_template_param_find(t, p->name);
        const char *key = se_param_problem(&t->param[k], p, why, sizeof why);
        if (key)
            return as_fail(st, AS_EINVAL, "space '%s': parameter '%s': %s: %s", s->name, p->name,
                           key, why);
        canonical_param(p);
        if (s->baseline[i] < 0 || s->baseline[i] >= p->n_values)
            return as_fail(st, AS_EINVAL,
                           "space '%s': baseline index %lld of '%s' is outside 0 .. %lld", s->name,
                           (long long)s->baseline[i], p->name, (long long)p->n_values - 1);
        listed[k] = true;
    }
    for (int k = 0; k < SE_MAX_PARAMS; k++) {
        if (k >= t->n_params || listed[k]) {
            s->fixed[k] = k < t->n_params ? t->param[k].deflt : 0;
            continue;
        }
        if (!se_fixed_value_ok(&t->param[k], s->fixed[k], why, sizeof why))
            return as_fail(st, AS_EINVAL, "space '%s': fixed '%s': %s", s->name,
                           t->param[k].range.name, why);
    }
    for (int i = s->n_params; i < SE_MAX_PARAMS; i++) {
        memset(&s->param[i], 0, sizeof s->param[i]);
        s->baseline[i] = 0;
    }
    return AS_OK;
}

/* ------------------------------------------------------------ built-ins */

bool se_space_builtin(const char *name, se_space *out)
{
    int n_builtin;
    const char *const *builtin = se_space_builtin_names(&n_builtin);
    for (int k = 0; name && k < n_builtin; k++) {
        if (strcmp(builtin[k], name) != 0)
            continue;
        const se_template_def *t = se_template_get((se_template)k);
        se_space_init(out, (se_template)k);
        snprintf(out->name, sizeof out->name, "%s", name);
        snprintf(out->source, sizeof out->source, "built-in");
        out->n_params = t->n_params;
        for (int i = 0; i < t->n_params; i++) {
            out->param[i] = t->param[i].range;
            out->param[i].n_values = se_param_count(&out->param[i]);
            out->baseline[i] = se_param_index(&out->param[i], t->param[i].deflt);
        }
        return se_space_finish(out, NULL) == AS_OK;
    }
    return false;
}

/* ---------------------------------------------------------------- values */

int64_t se_param_value(const se_param *p, int64_t index)
{
    if (index >= p->n_values)
        index = p->n_values - 1;
    if (index < 0)
        index = 0;
    switch (p->kind) {
    case SE_PARAM_INT:
        return p->min + index * p->stride;
    case SE_PARAM_POW2:
        if (p->zero_allowed) {
            if (index == 0)
                return 0;
            index--; /* index 0 is the zero in front of min */
        }
        return p->min << index;
    case SE_PARAM_ENUM:
        return index;
    }
    return 0;
}

/* The index of the value of a POW2 parameter nearest v, ties to the
 * lower: a walk over at most 63 values. */
static int64_t pow2_index(const se_param *p, int64_t value)
{
    int64_t best = 0;
    for (int64_t i = 1; i < p->n_values; i++) {
        int64_t here = se_param_value(p, i), below = se_param_value(p, i - 1);
        if (value <= below)
            break;
        /* value > below: compare its distances to below and here */
        if (value >= here || value - below > here - value)
            best = i;
        else
            break;
    }
    return best;
}

int64_t se_param_index(const se_param *p, int64_t value)
{
    int64_t last = p->n_values - 1;
    if (last <= 0)
        return 0;
    switch (p->kind) {
    case SE_PARAM_INT: {
        if (value <= p->min)
            return 0;
        if (value >= p->min + last * p->stride)
            return last;
        int64_t offset = value - p->min;
        int64_t below = offset / p->stride, rest = offset % p->stride;
        return below + (rest > p->stride - rest ? 1 : 0);
    }
    case SE_PARAM_POW2:
        return pow2_index(p, value);
    case SE_PARAM_ENUM:
        return value < 0 ? 0 : value > last ? last : value;
    }
    return 0;
}

int se_space_find(const se_space *s, const char *name)
{
    for (int i = 0; name && i < s->n_params; i++)
        if (strcmp(s->param[i].name, name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- points */

void se_point_from_unit(const se_space *s, const double *x, se_point *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < s->n_params; i++) {
        int64_t n = s->param[i].n_values;
        double cell = x[i] * (double)n; /* NaN and negatives fall to 0 */
        int64_t index = cell > 0 ? (cell < (double)n ? (int64_t)cell : n - 1) : 0;
        out->index[i] = index < n ? index : n - 1;
    }
}

void se_point_to_unit(const se_space *s, const se_point *p, double *x)
{
    for (int i = 0; i < s->n_params; i++)
        x[i] = ((double)p->index[i] + 0.5) / (double)s->param[i].n_values;
}

bool se_point_equal(const se_space *s, const se_point *a, const se_point *b)
{
    for (int i = 0; i < s->n_params; i++)
        if (a->index[i] != b->index[i])
            return false;
    return true;
}

/* Append the printf-formatted piece to buf at *used when all of it fits
 * (with room for `reserve` more bytes); otherwise leave buf as it was.
 * Returns whether it fitted.  Text is cut at piece boundaries only, so a
 * truncated point or JSON object never ends in half a number. */
static bool append(char *buf, size_t size, size_t *used, size_t reserve, const char *fmt, ...)
    AS_PRINTF(5, 6);
static bool append(char *buf, size_t size, size_t *used, size_t reserve, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + reserve >= size - *used) {
        buf[*used] = '\0';
        return false;
    }
    *used += (size_t)n;
    return true;
}

/* Make buf (of size bytes; may be NULL or 0) empty when it can hold
 * anything at all, and say whether it has room for at least `need`
 * bytes -- the start shared by the text writers below. */
static bool start_text(char *buf, size_t size, size_t need)
{
    if (!buf || size == 0)
        return false;
    buf[0] = '\0';
    return size >= need;
}

void se_point_format(const se_space *s, const se_point *p, char *buf, size_t size)
{
    size_t used = 0;
    if (!start_text(buf, size, 1))
        return;
    for (int i = 0; i < s->n_params; i++)
        if (!append(buf, size, &used, 0, "%s%lld", i ? "," : "", (long long)p->index[i]))
            return;
}

bool se_point_parse(const se_space *s, const char *text, se_point *out)
{
    se_point p = {{0}};
    const char *c = text;
    if (!text)
        return false;
    for (int i = 0; i < s->n_params; i++) {
        if (i > 0 && *c++ != ',')
            return false;
        if (*c < '0' || *c > '9')
            return false;
        int64_t index = 0;
        for (; *c >= '0' && *c <= '9'; c++)
            if (!as_mul_i64(index, 10, &index) || !as_add_i64(index, *c - '0', &index))
                return false;
        if (index >= s->param[i].n_values)
            return false;
        p.index[i] = index;
    }
    if (*c != '\0')
        return false;
    *out = p;
    return true;
}

json_t *se_point_params(const se_space *s, const se_point *p)
{
    json_t *params = json_object();
    for (int i = 0; params && i < s->n_params; i++) {
        const se_param *q = &s->param[i];
        int64_t v = se_param_value(q, p->index[i]);
        json_t *value = q->kind == SE_PARAM_ENUM ? as_json_string(q->choice[v]) : json_integer(v);
        if (!as_json_put(params, q->name, value)) {
            json_decref(params);
            params = NULL;
        }
    }
    return params;
}

/* The text of member key of params, "\"key\": value", into a malloc'd
 * string; NULL when out of memory. */
static char *member_text(const char *key, json_t *value)
{
    json_t *one = json_pack("{sO}", key, value);
    char *text = one ? as_json_text(one, 0) : NULL;
    json_decref(one);
    if (text) { /* {"key": value} without its braces */
        size_t n = strlen(text);
        memmove(text, text + 1, n - 2);
        text[n - 2] = '\0';
    }
    return text;
}

void se_point_params_json(const se_space *s, const se_point *p, char *buf, size_t size)
{
    size_t used = 0;
    if (!start_text(buf, size, 3)) /* not even "{}" */
        return;
    append(buf, size, &used, 1, "{");
    json_t *params = se_point_params(s, p);
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        char *member = member_text(key, value);
        bool fitted = member && append(buf, size, &used, 1, "%s%s", used > 1 ? ", " : "", member);
        free(member);
        if (!fitted)
            break;
    }
    json_decref(params);
    append(buf, size, &used, 0, "}");
}

/* ---------------------------------------------------------------- decode */

/*
 * The value of every parameter of template t at point p, in t's order:
 * s's parameters (which a finished space keeps in t's order) from p's
 * indices, ENUMs as indices into t's choices; the others from s->fixed.
 * False, with why, when an index is out of its range.
 */
static bool template_values(const se_space *s, const se_template_def *t, const se_point *p,
                            int64_t *value, char *why, size_t size)
{
    int i = 0;
    for (int k = 0; k < t->n_params; k++) {
        const se_param *q = i < s->n_params ? &s->param[i] : NULL;
        if (!q || strcmp(q->name, t->param[k].range.name) != 0) {
            value[k] = s->fixed[k];
            continue;
        }
        int64_t index = p->index[i++];
        if (index < 0 || index >= q->n_values) {
            snprintf(why, size, "index %lld of %s is outside 0 .. %lld", (long long)index, q->name,
                     (long long)q->n_values - 1);
            return false;
        }
        value[k] = se_param_value(q, index);
        if (q->kind == SE_PARAM_ENUM)
            value[k] = template_choice(&t->param[k], q->choice[value[k]]);
    }
    return true;
}

/* Whether every on-chip buffer of a holds at least one access (block_size
 * words) in each of its parts: a buffer narrower than its own access
 * cannot be built.  why says which one does not. */
static bool buffers_buildable(const arch_spec *a, char *why, size_t size)
{
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM || l->cls == ARCH_CLASS_DUMMY)
            continue;
        int64_t smallest = l->size_words;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (l->size_words_by_ds[ds] > 0 && l->size_words_by_ds[ds] < smallest)
                smallest = l->size_words_by_ds[ds];
        if (smallest < l->block_size) {
            snprintf(why, size, "%s holds %lld words, less than one access of %d words", l->name,
                     (long long)smallest, l->block_size);
            return false;
        }
    }
    return true;
}

/* Bytes of on-chip storage in a: every instance of every level but the
 * DRAM. */
static int64_t onchip_bytes(const arch_spec *a)
{
    int64_t bytes = 0;
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls != ARCH_CLASS_DRAM)
            bytes += l->instances * l->size_words * l->word_bits / 8;
    }
    return bytes;
}

/* Whether a meets the budgets of c (0 = no limit), checked in the order
 * area, peak power, PEs, on-chip bytes; why names the first one broken
 * with both numbers. */
static bool within_limits(const se_constraints *c, const arch_spec *a, char *why, size_t size)
{
    double area = arch_area_mm2(a);
    if (c->max_area_mm2 > 0 && area > c->max_area_mm2) {
        snprintf(why, size, "area %.2f mm^2 exceeds the %.2f mm^2 budget", area, c->max_area_mm2);
        return false;
    }
    double power = arch_peak_power_W(a);
    if (c->max_power_W > 0 && power > c->max_power_W) {
        snprintf(why, size, "peak power %.3f W exceeds the %.3f W budget", power, c->max_power_W);
        return false;
    }
    int64_t pes = a->compute.instances * a->compute.rows * a->compute.cols;
    if (c->max_pes > 0 && pes > c->max_pes) {
        snprintf(why, size, "%lld PEs (MACs) exceed the limit of %lld", (long long)pes,
                 (long long)c->max_pes);
        return false;
    }
    int64_t bytes = onchip_bytes(a);
    if (c->max_onchip_bytes > 0 && bytes > c->max_onchip_bytes) {
        snprintf(why, size, "on-chip storage %lld B exceeds the limit of %lld B", (long long)bytes,
                 (long long)c->max_onchip_bytes);
        return false;
    }
    return true;
}

void se_space_decode(const se_space *s, const se_point *p, arch_spec *a, bool *feasible,
                     char *reason, size_t reason_size)
{
    char why[256] = "";
    int64_t value[SE_MAX_PARAMS];
    const se_template_def *t = se_template_get(s->template_kind);
    bool ok = false;
    if (!t) {
        const se_template_def *edge = se_template_get(SE_TEMPLATE_EDGE);
        arch_begin(a, "?", edge->technology_nm, edge->clock_hz);
        snprintf(why, sizeof why, "space '%s' has no template", s->name);
    } else if (!template_values(s, t, p, value, why, sizeof why)) {
        arch_begin(a, s->name, s->technology_nm, s->clock_hz);
    } else {
        as_status st;
        as_status_clear(&st);
        t->build(s, value, a);
        ok = buffers_buildable(a, why, sizeof why);
        if (ok && arch_validate(a, &st) != AS_OK) {
            snprintf(why, sizeof why, "%.250s", st.message);
            ok = false;
        }
        ok = ok && within_limits(&s->limits, a, why, sizeof why);
    }
    *feasible = ok;
    if (reason && reason_size)
        snprintf(reason, reason_size, "%s", ok ? "" : why);
}

as_code se_space_emit_arch(const se_space *s, const se_point *p, const char *name, const char *path,
                           as_status *st)
{
    arch_spec a;
    bool feasible;
    char reason[256];
    se_space_decode(s, p, &a, &feasible, reason, sizeof reason);
    if (!feasible)
        return as_fail(st, AS_EINVAL, "%s: the design is not feasible in space '%s': %s", path,
                       s->name, reason);
    if (name)
        snprintf(a.name, sizeof a.name, "%s", name);
    return arch_save(&a, path, st);
}

void se_emitted_arch_name(const se_space *s, int64_t k, char *buf, size_t size)
{
    snprintf(buf, size, "%s-design-%lld", s->name, (long long)k);
}

uint64_t se_space_digest(const se_space *s)
{
    uint64_t digest = as_hash_bytes(s->param, sizeof s->param, AS_HASH_SEED);
    digest = as_hash_bytes(&s->limits, sizeof s->limits, digest);
    digest = as_hash_bytes(s->baseline, sizeof s->baseline, digest);
    /* Around a design: the design itself, and the settings it was made with. */
    if (s->template_kind == SE_TEMPLATE_AROUND)
        digest = se_around_digest(&s->centre, digest);
    return digest;
}
