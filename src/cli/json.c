/*
 * json.c -- the CLI's JSON writer (see cli.h): a jansson tree built value
 * by value, written by the core's dump when its outermost value closes.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* How the CLI lays its JSON out: indented (strings escaped as everywhere). */
#define CLI_JSON_LAYOUT AS_JSON_INDENT

void cli_json_init(cli_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Write a finished document v and release it. */
static void print_document(cli_json *j, json_t *v)
{
    as_json_dump(j->out, v, CLI_JSON_LAYOUT);
    fputc('\n', j->out);
    json_decref(v);
    if (j->lost)
        fputs("accelsearch: the JSON above is incomplete (out of memory)\n", stderr);
}

/* Put v (a new reference; NULL when building it failed) where the writer
 * is: under the waiting key of the open object, after the items of the
 * open array, or as the whole document.  False when it was lost. */
static bool attach(cli_json *j, json_t *v)
{
    char *key = j->key;
    j->key = NULL;
    json_t *parent = j->depth > 0 && j->depth <= CLI_JSON_MAX_DEPTH ? j->scope[j->depth - 1] : NULL;
    bool ok = false;
    if (v && j->depth == 0) {
        print_document(j, v);
        ok = true;
    } else if (v && parent && json_is_object(parent) && key) {
        ok = as_json_put(parent, key, v);
    } else if (v && parent && json_is_array(parent)) {
        ok = as_json_push(parent, v);
    } else {
        json_decref(v);
    }
    free(key);
    j->lost |= !ok;
    return ok;
}

/* Open container c (NULL when it could not be made) at the next depth. */
static void open_scope(cli_json *j, json_t *c)
{
    bool kept = false;
    if (j->depth == 0) {
        free(j->key);
        j->key = NULL;
        kept = c != NULL;
        j->lost |= !kept;
    } else if (c && j->depth < CLI_JSON_MAX_DEPTH) {
        json_incref(c); /* the scope keeps a reference of its own while open */
        kept = attach(j, c);
        if (!kept)
            json_decref(c);
    } else {
        json_decref(c);
        attach(j, NULL); /* too deep (or no memory): lost */
    }
    if (j->depth < CLI_JSON_MAX_DEPTH)
        j->scope[j->depth] = kept ? c : NULL;
    j->depth++;
}

static void close_scope(cli_json *j)
{
    if (j->depth == 0)
        return;
    j->depth--;
    json_t *c = j->depth < CLI_JSON_MAX_DEPTH ? j->scope[j->depth] : NULL;
    if (j->depth < CLI_JSON_MAX_DEPTH)
        j->scope[j->depth] = NULL;
    if (j->depth == 0 && c)
        print_document(j, c);
    else
        json_decref(c);
}

void cli_json_begin_object(cli_json *j)
{
    open_scope(j, json_object());
}
void cli_json_end_object(cli_json *j)
{
    close_scope(j);
}
void cli_json_begin_array(cli_json *j)
{
    open_scope(j, json_array());
}
void cli_json_end_array(cli_json *j)
{
    close_scope(j);
}

void cli_json_key(cli_json *j, const char *key)
{
    free(j->key);
    j->key = strdup(key);
    j->lost |= j->key == NULL;
}

void cli_json_string(cli_json *j, const char *s)
{
    attach(j, as_json_string(s));
}

void cli_json_int(cli_json *j, int64_t v)
{
    attach(j, json_integer(v));
}

void cli_json_double(cli_json *j, double v)
{
    attach(j, as_json_number(v));
}

void cli_json_value(cli_json *j, const json_t *v)
{
    attach(j, json_deep_copy(v));
}

void cli_json_bool(cli_json *j, bool v)
{
    attach(j, json_boolean(v));
}

void cli_json_null(cli_json *j)
{
    attach(j, json_null());
}

void cli_json_string_field(cli_json *j, const char *key, const char *s)
{
    cli_json_key(j, key);
    cli_json_string(j, s);
}

void cli_json_int_field(cli_json *j, const char *key, int64_t v)
{
    cli_json_key(j, key);
    cli_json_int(j, v);
}

void cli_json_double_field(cli_json *j, const char *key, double v)
{
    cli_json_key(j, key);
    cli_json_double(j, v);
}

void cli_json_bool_field(cli_json *j, const char *key, bool v)
{
    cli_json_key(j, key);
    cli_json_bool(j, v);
}

void cli_json_shape(cli_json *j, const wl_tensor *t)
{
    if (!t->shape_known) {
        cli_json_null(j);
        return;
    }
    json_t *shape = json_array();
    bool ok = shape != NULL;
    for (int i = 0; ok && i < t->rank; i++)
        ok = as_json_push(shape, json_integer(t->dims[i]));
    if (!ok) {
        json_decref(shape);
        shape = NULL;
    }
    attach(j, shape);
}
