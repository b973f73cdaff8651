/* json.c -- the CLI's streaming JSON writer (see cli.h). */
#include "cli.h"

#include <math.h>
#include <string.h>

void cli_json_init(cli_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Separate a value from the previous one at this depth and indent it. */
static void before_value(cli_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        fputs(j->need_comma[j->depth] ? ",\n" : "\n", j->out);
        j->need_comma[j->depth] = true;
        fprintf(j->out, "%*s", 2 * j->depth, "");
    }
}

static void open_scope(cli_json *j, char c)
{
    before_value(j);
    fputc(c, j->out);
    if (j->depth < (int)(sizeof j->need_comma / sizeof j->need_comma[0]) - 1)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void close_scope(cli_json *j, char c)
{
    bool had_items = j->need_comma[j->depth];
    j->depth--;
    if (had_items)
        fprintf(j->out, "\n%*s", 2 * j->depth, "");
    fputc(c, j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
}

void cli_json_begin_object(cli_json *j)
{
    open_scope(j, '{');
}
void cli_json_end_object(cli_json *j)
{
    close_scope(j, '}');
}
void cli_json_begin_array(cli_json *j)
{
    open_scope(j, '[');
}
void cli_json_end_array(cli_json *j)
{
    close_scope(j, ']');
}

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void cli_json_key(cli_json *j, const char *key)
{
    before_value(j);
    write_escaped(j->out, key);
    fputs(": ", j->out);
    j->after_key = true;
}

void cli_json_string(cli_json *j, const char *s)
{
    before_value(j);
    write_escaped(j->out, s ? s : "");
}

void cli_json_int(cli_json *j, int64_t v)
{
    before_value(j);
    fprintf(j->out, "%lld", (long long)v);
}

void cli_json_double(cli_json *j, double v)
{
    before_value(j);
    if (isfinite(v))
        fprintf(j->out, "%.17g", v);
    else
        fputs("null", j->out);
}

void cli_json_bool(cli_json *j, bool v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->out);
}

void cli_json_null(cli_json *j)
{
    before_value(j);
    fputs("null", j->out);
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
    before_value(j);
    fputc('[', j->out);
    for (int i = 0; i < t->rank; i++)
        fprintf(j->out, i ? ", %lld" : "%lld", (long long)t->dims[i]);
    fputc(']', j->out);
}
