/*
 * store_export.c -- a run as JSON or CSV (store_export), and the reader of
 * stored JSON that the CSV export and `accelsearch runs show` share
 * (store_json_members).  Every JSON value is read and written through
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

/* s as one CSV field: quoted when it holds a comma, a quote or a line
 * break, with its quotes doubled. */
static void csv_string(FILE *f, const char *s)
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
        csv_string(f, store_field_text(row, c));
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
    bool header_written;
    as_arena keys_arena; /* parameter names (from the first row) and the cells array */
    const char **keys;
    int64_t n_keys;
    as_arena cells_arena; /* the current row's parameter values */
    const char **cells;   /* per key, NULL when the row lacks it */
    as_status *st;
    as_code code; /* the first failure, which stops the export */
} csv_export;

static bool count_member(void *user, int64_t item, const char *key, const char *value, bool quoted)
{
    (*(int64_t *)user)++;
    return true;
}

static bool add_key(void *user, int64_t item, const char *key, const char *value, bool quoted)
{
    csv_export *x = user;
    if (!(x->keys[x->n_keys] = as_arena_strdup(&x->keys_arena, key))) {
        x->code = as_fail(x->st, AS_ENOMEM, "out of memory");
        return false;
    }
    x->n_keys++;
    return true;
}

/* A parameter of the current row into its cell; JSON null is an empty
 * cell, a parameter without a column is dropped. */
static bool set_cell(void *user, int64_t item, const char *key, const char *value, bool quoted)
{
    csv_export *x = user;
    for (int64_t k = 0; k < x->n_keys; k++) {
        if (strcmp(x->keys[k], key) != 0)
            continue;
        const char *text = !quoted && strcmp(value, "null") == 0 ? "" : value;
        if (!(x->cells[k] = as_arena_strdup(&x->cells_arena, text))) {
            x->code = as_fail(x->st, AS_ENOMEM, "out of memory");
            return false;
        }
        break;
    }
    return true;
}

/* One line: row's columns other than the JSON ones, then its parameter
 * cells; or, without a row, the header that names them. */
static void csv_line(csv_export *x, const store_row *row)
{
    for (int i = 0; i < store_n_row_columns; i++)
        if (store_row_columns[i].kind != STORE_KIND_JSON) {
            fputs(i ? "," : "", x->out);
            if (row)
                csv_field(x->out, row, &store_row_columns[i]);
            else
                csv_string(x->out, store_row_columns[i].name);
        }
    for (int64_t k = 0; k < x->n_keys; k++) {
        fputc(',', x->out);
        csv_string(x->out, !row ? x->keys[k] : x->cells[k] ? x->cells[k] : "");
    }
    fputs("\r\n", x->out);
}

/* The header line, its parameter columns named after the members of
 * params_json (the first row's; "{}" when the run has no row).  what names
 * params_json for messages.  False when it fails (x->code says why). */
static bool csv_header(csv_export *x, const char *params_json, const char *what)
{
    int64_t n = 0;
    as_code code = store_json_members(params_json, what, count_member, &n, x->st);
    if (code == AS_OK &&
        (!(x->keys = as_arena_alloc(&x->keys_arena, (size_t)n * sizeof *x->keys)) ||
         !(x->cells = as_arena_alloc(&x->keys_arena, (size_t)n * sizeof *x->cells))))
        code = as_fail(x->st, AS_ENOMEM, "out of memory");
    if (code == AS_OK)
        code = store_json_members(params_json, what, add_key, x, x->st);
    if (code != AS_OK || x->code != AS_OK) {
        x->code = code != AS_OK ? code : x->code;
        return false;
    }
    csv_line(x, NULL);
    x->header_written = true;
    return true;
}

static bool csv_row(void *user, const store_row *row)
{
    csv_export *x = user;
    char what[192];
    snprintf(what, sizeof what, "%s: params_json of run %lld, iteration %lld, slot %d, round %d",
             x->store_path, (long long)x->run_id, (long long)row->iteration, (int)row->slot,
             (int)row->round);
    if (!x->header_written && !csv_header(x, row->params_json, what))
        return false;
    memset(x->cells, 0, (size_t)x->n_keys * sizeof *x->cells);
    as_code code = store_json_members(row->params_json, what, set_cell, x, x->st);
    if (code != AS_OK || x->code != AS_OK) {
        x->code = code != AS_OK ? code : x->code;
        return false;
    }
    csv_line(x, row);
    as_arena_free(&x->cells_arena);
    return !ferror(x->out);
}

static as_code export_csv(store *s, const store_run *run, FILE *f, as_status *st)
{
    csv_export x = {.out = f, .store_path = store_path(s), .run_id = run->id, .st = st};
    as_arena_init(&x.keys_arena);
    as_arena_init(&x.cells_arena);
    as_code code = store_each_row(s, run->id, csv_row, &x, st);
    if (code == AS_OK)
        code = x.code;
    if (code == AS_OK && !x.header_written && !csv_header(&x, "{}", "no params_json"))
        code = x.code;
    as_arena_free(&x.keys_arena);
    as_arena_free(&x.cells_arena);
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

/* ----------------------------------------------------------- JSON reader */

enum { JSON_MAX_DEPTH = 64 }; /* deeper values are refused */

/*
 * A pass over JSON text for store_json_members.  The walk over the
 * top-level array and objects is here, so that a value can be given as
 * its own text; every key and value is read by jansson.
 */
typedef struct json_walk {
    const char *text, *at, *end; /* the whole text, where the walk is, its end */
    char *slice;                 /* the current value's text */
    int64_t item;
    store_json_visitor visit;
    void *user;
    bool stopped; /* the visitor asked to stop */
    const char *what;
    as_status *st;
} json_walk;

static as_code walk_error(json_walk *w, const char *expected)
{
    return as_fail(w->st, AS_EINVAL, "%s: offset %lld: expected %s", w->what,
                   (long long)(w->at - w->text), expected);
}

static void skip_space(json_walk *w)
{
    while (*w->at == ' ' || *w->at == '\t' || *w->at == '\n' || *w->at == '\r')
        w->at++;
}

/* Past c (after white space) when it is next. */
static bool accept(json_walk *w, char c)
{
    skip_space(w);
    if (*w->at != c)
        return false;
    w->at++;
    return true;
}

/* How deeply v nests (a scalar is 0). */
static int json_depth(const json_t *v)
{
    int deepest = 0;
    size_t i;
    const char *key;
    json_t *item;
    if (json_is_array(v))
        json_array_foreach(v, i, item)
        {
            int d = json_depth(item);
            deepest = d > deepest ? d : deepest;
        }
    else if (json_is_object(v))
        json_object_foreach((json_t *)v, key, item)
        {
            int d = json_depth(item);
            deepest = d > deepest ? d : deepest;
        }
    return json_is_array(v) || json_is_object(v) ? deepest + 1 : 0;
}

/* The one JSON value at w->at, read by jansson into *value (caller
 * releases) and stepped over.  Integers are read as doubles: only the
 * text of a number is kept, and it may be wider than an int64 (a seed). */
static as_code read_json(json_walk *w, json_t **value)
{
    json_error_t error;
    *value = json_loadb(w->at, (size_t)(w->end - w->at),
                        JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL, &error);
    if (!*value)
        return as_fail(w->st, AS_EINVAL, "%s: offset %lld: %s", w->what,
                       (long long)(w->at - w->text) + error.position, error.text);
    if (json_depth(*value) > JSON_MAX_DEPTH) {
        json_decref(*value);
        *value = NULL;
        return walk_error(w, "nesting no deeper than 64");
    }
    w->at += error.position;
    return AS_OK;
}

static as_code read_container(json_walk *w, char open, bool flatten);

/* The member at w->at (past white space), visited: a string value
 * unescaped, any other value as its text; with flatten, an object's
 * members in its place. */

static as_code read_member(json_walk *w, bool flatten)
{
    json_t *key, *value;
    skip_space(w);
    if (*w->at != '"')
        return walk_error(w, "a key");
    as_code code = read_json(w, &key);
    if (code != AS_OK)
        return code;
    if (!accept(w, ':')) {
        json_decref(key);
        return walk_error(w, "':'");
    }
    skip_space(w);
    const char *start = w->at;
    if (flatten && *w->at == '{') {
        code = read_container(w, '{', false);
    } else if ((code = read_json(w, &value)) == AS_OK) {
        bool quoted = json_is_string(value);
        size_t n = (size_t)(w->at - start);
        memcpy(w->slice, start, n);
        w->slice[n] = '\0';
        w->stopped = !w->visit(w->user, w->item, json_string_value(key),
                               quoted ? json_string_value(value) : w->slice, quoted);
        json_decref(value);
    }
    json_decref(key);
    return code;
}

/* The object (open '{') or the array of objects (open '[', one item
 * each) at w->at, its members visited.  With flatten, a member whose
 * value is an object has its members visited in its place. */
static as_code read_container(json_walk *w, char open, bool flatten)
{
    bool object = open == '{';
    if (!accept(w, open))
        return walk_error(w, object ? "'{'" : "'['");
    if (accept(w, object ? '}' : ']'))
        return AS_OK;
    do {
        as_code code = object ? read_member(w, flatten) : read_container(w, '{', true);
        if (code != AS_OK || w->stopped)
            return code;
        w->item += !object;
    } while (accept(w, ','));
    if (!accept(w, object ? '}' : ']'))
        return walk_error(w, object ? "',' or '}'" : "',' or ']'");
    return AS_OK;
}

as_code store_json_members(const char *json, const char *what, store_json_visitor visit, void *user,
                           as_status *st)
{
    char *text = as_utf8_copy(json ? json : "{}");
    size_t n = text ? strlen(text) : 0;
    json_walk w = {.text = text,
                   .at = text,
                   .end = text + n,
                   .slice = malloc(n + 1),
                   .visit = visit,
                   .user = user,
                   .what = what,
                   .st = st};
    as_code code = text && w.slice ? AS_OK : as_fail(st, AS_ENOMEM, "out of memory");
    if (code == AS_OK) {
        skip_space(&w);
        code = read_container(&w, *w.at == '[' ? '[' : '{', true);
    }
    if (code == AS_OK && !w.stopped) {
        skip_space(&w);
        if (*w.at)
            code = walk_error(&w, "the end of the text");
    }
    free(w.slice);
    free(text);
    return code;
}
