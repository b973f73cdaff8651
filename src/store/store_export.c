/*
 * store_export.c -- a run as JSON or CSV (store_export), and the stored
 * JSON as flat objects, which the CSV export and `accelsearch runs show`
 * share (store_json_items).  Every JSON value is read and written through
 * jansson and the core's JSON layer (core.h): numbers in the fewest
 * digits that read back as the same double, text as valid UTF-8.
 *
 * JSON: {"run": {...}, "config": "...", "rows": [...], "fronts": [...]},
 * one row or front per line, keys named as the store's columns.  The JSON
 * columns (params_json, detail_json, front_json) are read back with
 * jansson and written as JSON values (a row whose JSON does not parse
 * fails the export, naming it).  JSON has no infinities and no NaN: a
 * non-finite double is written null (the CSV keeps them, as inf, -inf
 * and nan).
 *
 * CSV (RFC 4180: CRLF line ends; a field holding a comma, a quote or a
 * line break is quoted, its quotes doubled): the row's columns other than
 * the JSON ones, then one column per parameter, named and ordered as in
 * the first row's params_json (the rows of a run share one design space).
 * A row lacking one of these parameters leaves the cell empty; a
 * parameter the first row lacks is not exported.  detail_json, nested per
 * workload, is left to the JSON export.
 *
 * Doubles are written in the fewest digits that read back as the same
 * value, so an export loses nothing of a finite double.
 */
#include "store_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- fields */

void store_csv_string(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Column c of row as a CSV field (the JSON columns are not written). */
static void csv_field(FILE *f, const store_row *row, const store_column *c)
{
    char number[AS_DOUBLE_TEXT_BYTES];
    switch (c->kind) {
    case STORE_KIND_I64:
    case STORE_KIND_I32:
        fprintf(f, "%lld", (long long)store_field_int(row, c));
        break;
    case STORE_KIND_BOOL:
        fputs(store_field_int(row, c) ? "true" : "false", f);
        break;
    case STORE_KIND_REAL:
        fputs(as_format_double(store_field_real(row, c), number), f);
        break;
    case STORE_KIND_TEXT:
        store_csv_string(f, store_field_text(row, c));
        break;
    case STORE_KIND_JSON:
        break;
    }
}

/* ------------------------------------------------------------------- JSON */

/* The JSON export's state across the rows and fronts of a run. */
typedef struct json_export {
    FILE *out;
    const char *store_path;
    int64_t run_id;
    int64_t n_items; /* written so far into the array being written */
    as_status *st;
    as_code code; /* the first failure, which stops the export */
} json_export;

/* Column c of row as a JSON value into *value (a new reference; NULL
 * when out of memory); the JSON columns parsed, failing with a message
 * that names the row. */
static as_code field_json(const json_export *x, const store_row *row, const store_column *c,
                          json_t **value)
{
    char what[192];
    *value = NULL;
    switch (c->kind) {
    case STORE_KIND_I64:
    case STORE_KIND_I32:
        *value = json_integer(store_field_int(row, c));
        break;
    case STORE_KIND_BOOL:
        *value = json_boolean(store_field_int(row, c));
        break;
    case STORE_KIND_REAL:
        *value = as_json_number(store_field_real(row, c));
        break;
    case STORE_KIND_TEXT:
        *value = as_json_string(store_field_text(row, c));
        break;
    case STORE_KIND_JSON:
        snprintf(what, sizeof what, "%s: %s of run %lld, iteration %lld, slot %d, round %d",
                 x->store_path, c->name, (long long)x->run_id, (long long)row->iteration,
                 (int)row->slot, (int)row->round);
        return as_json_parse(store_field_text(row, c), what, value, x->st);
    }
    return AS_OK;
}

/* Write item (released here; NULL: out of memory, unless x->code already
 * says why) as the next line of the array being written. */
static bool json_item(json_export *x, json_t *item)
{
    if (!item) {
        if (x->code == AS_OK)
            x->code = as_fail(x->st, AS_ENOMEM, "out of memory");
        return false;
    }
    fputs(x->n_items++ ? ",\n    " : "\n    ", x->out);
    as_json_dump(x->out, item, 0);
    json_decref(item);
    return !ferror(x->out);
}

/* Close the array of x's items, and start counting anew. */
static void json_end_array(json_export *x)
{
    fputs(x->n_items ? "\n  ]" : "]", x->out);
    x->n_items = 0;
}

static bool json_row(void *user, const store_row *row)
{
    json_export *x = user;
    json_t *item = json_object();
    for (int i = 0; item && i < store_n_row_columns; i++) {
        const store_column *c = &store_row_columns[i];
        json_t *value;
        x->code = field_json(x, row, c, &value);
        if (!as_json_put(item, c->name, value)) {
            json_decref(item);
            item = NULL;
        }
    }
    return json_item(x, item);
}

static bool json_front(void *user, int64_t iteration, int64_t evaluations, double hypervolume,
                       const char *front_json)
{
    json_export *x = user;
    char what[160];
    snprintf(what, sizeof what, "%s: front_json of run %lld, iteration %lld", x->store_path,
             (long long)x->run_id, (long long)iteration);
    json_t *front = NULL, *item = json_object();
    x->code = as_json_parse(front_json, what, &front, x->st);
    if (!item || !as_json_put(item, "iteration", json_integer(iteration)) ||
        !as_json_put(item, "evaluations", json_integer(evaluations)) ||
        !as_json_put(item, "hypervolume", as_json_number(hypervolume)) ||
        !as_json_put(item, "front_json", front)) {
        json_decref(item);
        item = NULL;
    }
    return json_item(x, item);
}

/* The "run" member: the run's header and counts.  Its seed is a uint64,
 * wider than jansson's integers (int64): it is written as digits between
 * the members before it and those after it. */
static as_code json_run(FILE *f, const store_run *r, as_status *st)
{
    json_t *head = json_object(), *tail = json_object();
    bool ok = head && tail && as_json_put(head, "id", json_integer(r->id)) &&
              as_json_put(head, "created", as_json_string(r->created)) &&
              as_json_put(head, "version", as_json_string(r->version)) &&
              as_json_put(tail, "state", as_json_string(store_state_name(r->state))) &&
              as_json_put(tail, "summary", as_json_string(r->summary)) &&
              as_json_put(tail, "n_rows", json_integer(r->n_rows)) &&
              as_json_put(tail, "n_candidates", json_integer(r->n_candidates)) &&
              as_json_put(tail, "n_iterations", json_integer(r->n_iterations)) &&
              as_json_put(tail, "hypervolume", as_json_number(r->hypervolume));
    char *head_text = ok ? as_json_text(head, 0) : NULL;
    char *tail_text = head_text ? as_json_text(tail, 0) : NULL;
    json_decref(head);
    json_decref(tail);
    if (tail_text) /* {"id": ..., "version": "..."} and {"state": ...}, joined */
        fprintf(f, "  \"run\": %.*s, \"seed\": %llu, %s,\n", (int)(strlen(head_text) - 1),
                head_text, (unsigned long long)r->seed, tail_text + 1);
    free(head_text);
    free(tail_text);
    return tail_text ? AS_OK : as_fail(st, AS_ENOMEM, "out of memory");
}

static as_code export_json(store *s, const store_run *run, FILE *f, as_status *st)
{
    char *config;
    as_code code = store_run_config(s, run->id, &config, st);
    if (code != AS_OK)
        return code;
    json_t *config_json = as_json_string(config);
    free(config);
    if (!config_json)
        return as_fail(st, AS_ENOMEM, "out of memory");
    fputs("{\n", f);
    code = json_run(f, run, st);
    fputs("  \"config\": ", f);
    as_json_dump(f, config_json, 0);
    json_decref(config_json);
    fputs(",\n  \"rows\": [", f);
    json_export x = {.out = f, .store_path = store_path(s), .run_id = run->id, .st = st};
    if (code == AS_OK && (code = store_each_row(s, run->id, json_row, &x, st)) == AS_OK)
        code = x.code;
    json_end_array(&x);
    fputs(",\n  \"fronts\": [", f);
    if (code == AS_OK && (code = store_each_front(s, run->id, json_front, &x, st)) == AS_OK)
        code = x.code;
    json_end_array(&x);
    fputs("\n}\n", f);
    return code;
}

/* -------------------------------------------------------------------- CSV */

/* The CSV export's state across the rows of a run. */
typedef struct csv_export {
    FILE *out;
    const char *store_path;
    int64_t run_id;
    json_t *columns; /* the first row's parameters (their keys name the columns); NULL before */
    as_status *st;
    as_code code; /* the first failure, which stops the export */
} csv_export;

/* The value of parameter key in items (the last item that has it), or
 * NULL. */
static json_t *item_value(json_t *items, const char *key)
{
    for (size_t i = json_array_size(items); i-- > 0;) {
        json_t *value = json_object_get(json_array_get(items, i), key);
        if (value)
            return value;
    }
    return NULL;
}

/* A parameter's value as one CSV field: a string as itself, null or a
 * missing value as an empty field, anything else as its JSON text.
 * False when out of memory. */
static bool csv_value(FILE *f, const json_t *value)
{
    if (!value || json_is_null(value))
        return true;
    if (json_is_string(value)) {
        store_csv_string(f, json_string_value(value));
        return true;
    }
    char *text = as_json_text(value, 0);
    if (text)
        store_csv_string(f, text);
    free(text);
    return text != NULL;
}

/* One line: row's columns other than the JSON ones, then its parameters
 * (items); or, without a row, the header that names them. */
static void csv_line(csv_export *x, const store_row *row, json_t *items)
{
    for (int i = 0; i < store_n_row_columns; i++)
        if (store_row_columns[i].kind != STORE_KIND_JSON) {
            fputs(i ? "," : "", x->out);
            if (row)
                csv_field(x->out, row, &store_row_columns[i]);
            else
                store_csv_string(x->out, store_row_columns[i].name);
        }
    const char *key;
    json_t *unused;
    json_object_foreach(x->columns, key, unused)
    {
        fputc(',', x->out);
        if (!row)
            store_csv_string(x->out, key);
        else if (!csv_value(x->out, item_value(items, key)) && x->code == AS_OK)
            x->code = as_fail(x->st, AS_ENOMEM, "out of memory");
    }
    fputs("\r\n", x->out);
}

/* The header line, its parameter columns named after the members of
 * items (the first row's parameters; none when the run has no row).
 * False when out of memory (x->code says so). */
static bool csv_header(csv_export *x, json_t *items)
{
    bool ok = (x->columns = json_object()) != NULL;
    for (size_t i = 0; ok && i < json_array_size(items); i++)
        ok = json_object_update(x->columns, json_array_get(items, i)) == 0;
    if (!ok) {
        x->code = as_fail(x->st, AS_ENOMEM, "out of memory");
        return false;
    }
    csv_line(x, NULL, NULL);
    return true;
}

static bool csv_row(void *user, const store_row *row)
{
    csv_export *x = user;
    char what[192];
    snprintf(what, sizeof what, "%s: params_json of run %lld, iteration %lld, slot %d, round %d",
             x->store_path, (long long)x->run_id, (long long)row->iteration, (int)row->slot,
             (int)row->round);
    json_t *items;
    x->code = store_json_items(row->params_json, what, &items, x->st);
    if (x->code == AS_OK && (x->columns || csv_header(x, items)))
        csv_line(x, row, items);
    json_decref(items);
    return x->code == AS_OK && !ferror(x->out);
}

static as_code export_csv(store *s, const store_run *run, FILE *f, as_status *st)
{
    csv_export x = {.out = f, .store_path = store_path(s), .run_id = run->id, .st = st};
    as_code code = store_each_row(s, run->id, csv_row, &x, st);
    if (code == AS_OK)
        code = x.code;
    if (code == AS_OK && !x.columns && !csv_header(&x, NULL))
        code = x.code;
    json_decref(x.columns);
    return code;
}

as_code store_export(store *s, int64_t run_id, store_format format, FILE *f, as_status *st)
{
    if (format != STORE_JSON && format != STORE_CSV)
        return as_fail(st, AS_EINVAL, "store_export: no export format %d", (int)format);
    store_run run;
    as_code code = store_run_get(s, run_id, &run, st);
    if (code == AS_OK)
        code = format == STORE_JSON ? export_json(s, &run, f, st) : export_csv(s, &run, f, st);
    if (code == AS_OK && (fflush(f) != 0 || ferror(f)))
        code = as_fail(st, AS_EIO, "%s: exporting run %lld: write failed: %s", store_path(s),
                       (long long)run_id, strerror(errno));
    return code;
}

/* ----------------------------------------------------------- JSON items */

/* object's members into flat; with lift_objects, an object-valued
 * member's members in its place.  False when out of memory. */
static bool flatten_into(json_t *flat, json_t *object, bool lift_objects)
{
    const char *key;
    json_t *value;
    json_object_foreach(object, key, value)
    {
        if (lift_objects && json_is_object(value) ? !flatten_into(flat, value, false)
                                                  : json_object_set(flat, key, value) != 0)
            return false;
    }
    return true;
}

as_code store_json_items(const char *json, const char *what, json_t **items, as_status *st)
{
    json_t *v;
    *items = NULL;
    as_code code = as_json_parse(json ? json : "{}", what, &v, st);
    if (code != AS_OK)
        return code;
    bool is_list = json_is_array(v);
    size_t n = is_list ? json_array_size(v) : 1;
    json_t *list = json_array();
    for (size_t i = 0; code == AS_OK && i < n; i++) {
        json_t *item = is_list ? json_array_get(v, i) : v, *flat = NULL;
        if (!json_is_object(item))
            code = is_list
                       ? as_fail(st, AS_EINVAL, "%s: item %zu is not an object", what, i)
                       : as_fail(st, AS_EINVAL, "%s: not an object or an array of objects", what);
        else if (!list || !(flat = json_object()) || !flatten_into(flat, item, true) ||
                 json_array_append(list, flat) != 0)
            code = as_fail(st, AS_ENOMEM, "out of memory");
        json_decref(flat);
    }
    json_decref(v);
    if (code != AS_OK)
        json_decref(list);
    else
        *items = list;
    return code;
}
