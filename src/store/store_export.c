/*
 * store_export.c -- a run as JSON or CSV (store_export), and the small
 * JSON reader that the CSV export and `accelsearch runs show` share
 * (store_json_members).
 *
 * JSON: {"run": {...}, "config": "...", "rows": [...], "fronts": [...]},
 * one row or front per line, keys named as the store's columns.  The JSON
 * columns (params_json, detail_json, front_json) are JSON already and go
 * in verbatim.  JSON has no infinities and no NaN: a non-finite double is
 * written null (the CSV keeps them, as inf, -inf and nan).
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
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writers */

void store_json_number(FILE *f, double v)
{
    char number[AS_DOUBLE_TEXT_BYTES];
    fputs(isfinite(v) ? as_format_double(v, number) : "null", f);
}

void store_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

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

/* Column c of row as a JSON value or as a CSV field (the JSON columns are
 * written for the JSON export only). */
static void write_field(FILE *f, const store_row *row, const store_column *c, store_format format)
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
        if (format == STORE_JSON)
            store_json_number(f, store_field_real(row, c));
        else
            fputs(as_format_double(store_field_real(row, c), number), f);
        break;
    case STORE_KIND_TEXT:
        (format == STORE_JSON ? store_json_string : csv_string)(f, store_field_text(row, c));
        break;
    case STORE_KIND_JSON:
        fputs(store_field_text(row, c), f);
        break;
    }
}

/* ------------------------------------------------------------------- JSON */

/* Items written so far into the array being written. */
typedef struct json_export {
    FILE *out;
    int64_t n_items;
} json_export;

/* Start the next item of an array: one per line. */
static void json_next_item(json_export *x)
{
    fputs(x->n_items++ ? ",\n    " : "\n    ", x->out);
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
    json_next_item(x);
    for (int i = 0; i < store_n_row_columns; i++) {
        const store_column *c = &store_row_columns[i];
        fprintf(x->out, "%s\"%s\": ", i ? ", " : "{", c->name);
        write_field(x->out, row, c, STORE_JSON);
    }
    fputc('}', x->out);
    return !ferror(x->out);
}

static bool json_front(void *user, int64_t iteration, int64_t evaluations, double hypervolume,
                       const char *front_json)
{
    json_export *x = user;
    json_next_item(x);
    fprintf(x->out,
            "{\"iteration\": %lld, \"evaluations\": %lld, \"hypervolume\": ", (long long)iteration,
            (long long)evaluations);
    store_json_number(x->out, hypervolume);
    fprintf(x->out, ", \"front_json\": %s}", front_json);
    return !ferror(x->out);
}

/* The "run" member: the run's header and counts. */
static void json_run(FILE *f, const store_run *r)
{
    fprintf(f, "  \"run\": {\"id\": %lld, \"created\": ", (long long)r->id);
    store_json_string(f, r->created);
    fputs(", \"version\": ", f);
    store_json_string(f, r->version);
    fprintf(f, ", \"seed\": %llu, \"state\": ", (unsigned long long)r->seed);
    store_json_string(f, store_state_name(r->state));
    fputs(", \"summary\": ", f);
    store_json_string(f, r->summary);
    fprintf(f, ", \"n_rows\": %lld, \"n_candidates\": %lld, \"n_iterations\": %lld",
            (long long)r->n_rows, (long long)r->n_candidates, (long long)r->n_iterations);
    fputs(", \"hypervolume\": ", f);
    store_json_number(f, r->hypervolume);
    fputs("},\n", f);
}

static as_code export_json(store *s, const store_run *run, FILE *f, as_status *st)
{
    char *config;
    as_code code = store_run_config(s, run->id, &config, st);
    if (code != AS_OK)
        return code;
    fputs("{\n", f);
    json_run(f, run);
    fputs("  \"config\": ", f);
    store_json_string(f, config);
    free(config);
    fputs(",\n  \"rows\": [", f);
    json_export x = {.out = f};
    if ((code = store_each_row(s, run->id, json_row, &x, st)) != AS_OK)
        return code;
    json_end_array(&x);
    fputs(",\n  \"fronts\": [", f);
    if ((code = store_each_front(s, run->id, json_front, &x, st)) != AS_OK)
        return code;
    json_end_array(&x);
    fputs("\n}\n", f);
    return AS_OK;
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
    for (int i = 0; i < store_n_row_columns; i++)
        if (store_row_columns[i].kind != STORE_KIND_JSON) {
            fputs(i ? "," : "", x->out);
            csv_string(x->out, store_row_columns[i].name);
        }
    for (int64_t k = 0; k < x->n_keys; k++) {
        fputc(',', x->out);
        csv_string(x->out, x->keys[k]);
    }
    fputs("\r\n", x->out);
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
    for (int i = 0; i < store_n_row_columns; i++)
        if (store_row_columns[i].kind != STORE_KIND_JSON) {
            fputs(i ? "," : "", x->out);
            write_field(x->out, row, &store_row_columns[i], STORE_CSV);
        }
    for (int64_t k = 0; k < x->n_keys; k++) {
        fputc(',', x->out);
        csv_string(x->out, x->cells[k] ? x->cells[k] : "");
    }
    fputs("\r\n", x->out);
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

enum { JSON_MAX_DEPTH = 64 }; /* nesting skipped over; deeper text is refused, not recursed */

/* A pass over JSON text for store_json_members. */
typedef struct json_reader {
    const char *text, *at; /* the whole text, and where the reader is */
    char *out;             /* decoded key and value of the current member */
    size_t out_used;
    int64_t item;
    store_json_visitor visit;
    void *user;
    bool stopped; /* the visitor asked to stop */
    const char *what;
    as_status *st;
} json_reader;

static as_code syntax_error(json_reader *r, const char *expected)
{
    return as_fail(r->st, AS_EINVAL, "%s: offset %lld: expected %s", r->what,
                   (long long)(r->at - r->text), expected);
}

static void skip_space(json_reader *r)
{
    while (*r->at == ' ' || *r->at == '\t' || *r->at == '\n' || *r->at == '\r')
        r->at++;
}

/* Past c (after white space) when it is next. */
static bool accept(json_reader *r, char c)
{
    skip_space(r);
    if (*r->at != c)
        return false;
    r->at++;
    return true;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The value of the four hex digits at p, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = is_digit(c)            ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = 16 * v + d;
    }
    return v;
}

/* Code point cp as UTF-8 at out; the number of bytes. */
static int put_utf8(char *out, long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The character that the one-letter escape \c stands for, or NUL. */
static char unescape(char c)
{
    switch (c) {
    case '"':
    case '\\':
    case '/':
        return c;
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    default:
        return '\0';
    }
}

/* The \u escape at r->at (past the backslash and 'u'), a surrogate pair
 * read as one code point, into *cp; false when malformed.  \u0000 is
 * refused: the visitor's strings end at NUL. */
static bool read_unicode_escape(json_reader *r, long *cp)
{
    long high = hex4(r->at);
    if (high <= 0 || (high >= 0xDC00 && high <= 0xDFFF))
        return false;
    r->at += 4;
    *cp = high;
    if (high < 0xD800 || high > 0xDBFF)
        return true;
    long low = r->at[0] == '\\' && r->at[1] == 'u' ? hex4(r->at + 2) : -1;
    if (low < 0xDC00 || low > 0xDFFF)
        return false;
    r->at += 6;
    *cp = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
    return true;
}

/* The string at r->at (on its opening quote), unescaped into the reader's
 * buffer with *out pointing at it, or only checked when out is NULL.  The
 * decoded text is never longer than the quoted one. */
static as_code read_string(json_reader *r, const char **out)
{
    static const char bad_escape[] = "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; "
                                     "not \\u0000 nor a lone surrogate)";
    char *dst = out ? r->out + r->out_used : NULL;
    size_t n = 0;
    r->at++;
    while (*r->at != '"') {
        char c = *r->at++;
        char utf8[4];
        int len = 1;
        utf8[0] = c;
        if ((unsigned char)c < 0x20) {
            r->at--;
            return syntax_error(r, c ? "a character or '\"' (control characters are escaped)"
                                     : "'\"' before the end of the text");
        }
        if (c == '\\' && *r->at == 'u') {
            long cp;
            r->at++;
            if (!read_unicode_escape(r, &cp))
                return syntax_error(r, bad_escape);
            len = put_utf8(utf8, cp);
        } else if (c == '\\') {
            if ((utf8[0] = unescape(*r->at)) == '\0')
                return syntax_error(r, bad_escape);
            r->at++;
        }
        if (dst)
            memcpy(dst + n, utf8, (size_t)len);
        n += (size_t)len;
    }
    r->at++;
    if (dst) {
        dst[n] = '\0';
        r->out_used += n + 1;
        *out = dst;
    }
    return AS_OK;
}

/* Past the number at r->at (JSON's grammar: no leading zeros, no '+', no
 * bare '.'); false when there is none. */
static bool skip_number(json_reader *r)
{
    const char *p = r->at;
    p += *p == '-';
    if (*p == '0')
        p++;
    else if (is_digit(*p))
        while (is_digit(*p))
            p++;
    else
        return false;
    if (*p == '.') {
        if (!is_digit(*++p))
            return false;
        while (is_digit(*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        if (!is_digit(*p))
            return false;
        while (is_digit(*p))
            p++;
    }
    r->at = p;
    return true;
}

/* Past the value at r->at (after white space), checking it; objects and
 * arrays to depth JSON_MAX_DEPTH. */
static as_code skip_value(json_reader *r, int depth)
{
    static const char *const literals[] = {"true", "false", "null"};
    skip_space(r);
    char open = *r->at, close = open == '{' ? '}' : ']';
    if (open == '"')
        return read_string(r, NULL);
    if (open != '{' && open != '[') {
        for (int i = 0; i < 3; i++)
            if (strncmp(r->at, literals[i], strlen(literals[i])) == 0) {
                r->at += strlen(literals[i]);
                return AS_OK;
            }
        return skip_number(r) ? AS_OK : syntax_error(r, "a value");
    }
    if (depth >= JSON_MAX_DEPTH)
        return syntax_error(r, "nesting no deeper than 64");
    r->at++;
    if (accept(r, close))
        return AS_OK;
    do {
        as_code code;
        if (open == '{') {
            skip_space(r);
            if (*r->at != '"')
                return syntax_error(r, "a key");
            if ((code = read_string(r, NULL)) != AS_OK)
                return code;
            if (!accept(r, ':'))
                return syntax_error(r, "':'");
        }
        if ((code = skip_value(r, depth + 1)) != AS_OK)
            return code;
    } while (accept(r, ','));
    return accept(r, close) ? AS_OK : syntax_error(r, open == '{' ? "',' or '}'" : "',' or ']'");
}

/* The value at r->at (white space skipped) into the reader's buffer: a
 * string unescaped (*quoted), anything else as its JSON text. */
static as_code read_value(json_reader *r, const char **value, bool *quoted)
{
    if ((*quoted = *r->at == '"'))
        return read_string(r, value);
    const char *start = r->at;
    as_code code = skip_value(r, 0);
    if (code == AS_OK) {
        size_t n = (size_t)(r->at - start);
        char *copy = r->out + r->out_used;
        memcpy(copy, start, n);
        copy[n] = '\0';
        r->out_used += n + 1;
        *value = copy;
    }
    return code;
}

/* The members of the object at r->at, visited.  With flatten, a member
 * whose value is an object has its members visited in its place. */
static as_code read_object(json_reader *r, bool flatten)
{
    if (!accept(r, '{'))
        return syntax_error(r, "'{'");
    if (accept(r, '}'))
        return AS_OK;
    do {
        const char *key, *value;
        bool quoted;
        as_code code;
        r->out_used = 0; /* the previous member's text is done with */
        skip_space(r);
        if (*r->at != '"')
            return syntax_error(r, "a key");
        if ((code = read_string(r, &key)) != AS_OK)
            return code;
        if (!accept(r, ':'))
            return syntax_error(r, "':'");
        skip_space(r);
        if (flatten && *r->at == '{')
            code = read_object(r, false);
        else if ((code = read_value(r, &value, &quoted)) == AS_OK)
            r->stopped = !r->visit(r->user, r->item, key, value, quoted);
        if (code != AS_OK || r->stopped)
            return code;
    } while (accept(r, ','));
    return accept(r, '}') ? AS_OK : syntax_error(r, "',' or '}'");
}

/* The objects of the array at r->at, one item each. */
static as_code read_array(json_reader *r)
{
    if (!accept(r, '['))
        return syntax_error(r, "'['");
    if (accept(r, ']'))
        return AS_OK;
    do {
        as_code code = read_object(r, true);
        if (code != AS_OK || r->stopped)
            return code;
        r->item++;
    } while (accept(r, ','));
    return accept(r, ']') ? AS_OK : syntax_error(r, "',' or ']'");
}

as_code store_json_members(const char *json, const char *what, store_json_visitor visit, void *user,
                           as_status *st)
{
    if (!json)
        json = "{}";
    json_reader r = {
        .text = json, .at = json, .visit = visit, .user = user, .what = what, .st = st};
    /* A member's decoded key and value fit in the text they come from. */
    if (!(r.out = malloc(strlen(json) + 2)))
        return as_fail(st, AS_ENOMEM, "out of memory");
    skip_space(&r);
    as_code code = *r.at == '[' ? read_array(&r) : read_object(&r, true);
    if (code == AS_OK && !r.stopped) {
        skip_space(&r);
        if (*r.at)
            code = syntax_error(&r, "the end of the text");
    }
    free(r.out);
    return code;
}
