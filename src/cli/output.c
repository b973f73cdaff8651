/*
 * output.c -- the one output rule of the commands (docs/cli-output.md):
 * numbers in the text with their unit in engineering notation (cli_eng),
 * tables as RFC 4180 CSV (cli_csv_*, quoting by the store's
 * store_csv_string, the quoter the run export and the study's CSV use),
 * and where the output goes: -o FILE for the command's usual output,
 * --csv FILE|- for its table (cli_output_*).
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ units */

/* The core's one rule (as_format_si, as_format_digits) into buf. */
const char *cli_eng(double value, const char *unit, char *buf, size_t size)
{
    char text[AS_SI_TEXT_BYTES];
    snprintf(buf, size, "%s", as_format_si(value, unit, text));
    return buf;
}

const char *cli_num(double value, const char *unit, char *buf, size_t size)
{
    char digits[AS_SI_TEXT_BYTES];
    snprintf(buf, size, "%s%s%s", as_format_digits(value, digits), unit && *unit ? " " : "",
             unit ? unit : "");
    return buf;
}

/* -------------------------------------------------------------------- CSV */

/* Before each field but a row's first: the separator. */
static void csv_separate(cli_csv *c)
{
    if (c->n_fields++ > 0)
        fputc(',', c->out);
}

void cli_csv_string(cli_csv *c, const char *s)
{
    csv_separate(c);
    store_csv_string(c->out, s ? s : "");
}

void cli_csv_int(cli_csv *c, int64_t v)
{
    csv_separate(c);
    fprintf(c->out, "%lld", (long long)v);
}

void cli_csv_double(cli_csv *c, double v)
{
    char text[AS_DOUBLE_TEXT_BYTES];
    csv_separate(c);
    if (isfinite(v)) /* nan and inf: an empty field, as the study's CSV */
        fputs(as_format_double(v, text), c->out);
}

void cli_csv_bool(cli_csv *c, bool v)
{
    csv_separate(c);
    fputs(v ? "true" : "false", c->out);
}

void cli_csv_empty(cli_csv *c)
{
    csv_separate(c);
}

void cli_csv_end_row(cli_csv *c)
{
    fputs("\r\n", c->out);
    c->n_fields = 0;
}

void cli_csv_header(cli_csv *c, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        cli_csv_string(c, names[i]);
    cli_csv_end_row(c);
}

/* ----------------------------------------------------------- destinations */

int cli_add_output_options(cli_option *options, cli_output *o, const char *csv_help)
{
    o->saved_stdout = -1;
    options[0] = cli_string("csv", "FILE", &o->csv_path, csv_help);
    options[1] = cli_string("output", "FILE", &o->out_path,
                            "write the usual output (text, or JSON with --json) to FILE\n"
                            "instead of standard output");
    options[1].short_name = 'o';
    return 2;
}

/* Whether path is "-": standard output. */
static bool is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

bool cli_output_usual(const cli_output *o)
{
    return !(is_stdout(o->csv_path) || is_stdout(o->csv2_path)) || o->out_path;
}

/* Point standard output at o->out_path, keeping the real one for
 * --csv -; the error names the file. */
static int redirect_stdout(const cli_command *cmd, cli_output *o)
{
    int fd = open(o->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return cli_failf(cmd, CLI_EXIT_USAGE, "io", "-o %s: cannot write the file: %s", o->out_path,
                         strerror(errno));
    fflush(stdout);
    o->saved_stdout = dup(STDOUT_FILENO);
    bool ok = o->saved_stdout >= 0 && dup2(fd, STDOUT_FILENO) >= 0;
    int err = errno;
    close(fd);
    if (!ok)
        return cli_failf(cmd, CLI_EXIT_FAILURE, "io", "-o %s: %s", o->out_path, strerror(err));
    return CLI_PARSED;
}

/* Open the CSV destination path (option: its name in messages) into *c:
 * "-" the real standard output (a copy of it while -o redirects it). */
static int open_csv(const cli_command *cmd, const cli_output *o, const char *option,
                    const char *path, cli_csv *c)
{
    c->n_fields = 0;
    if (is_stdout(path)) {
        int fd = o->saved_stdout >= 0 ? dup(o->saved_stdout) : -1;
        c->out = fd >= 0 ? fdopen(fd, "w") : stdout;
        return c->out ? CLI_PARSED
                      : cli_failf(cmd, CLI_EXIT_FAILURE, "io", "%s -: %s", option, strerror(errno));
    }
    c->out = fopen(path, "w");
    if (!c->out)
        return cli_failf(cmd, CLI_EXIT_USAGE, "io", "%s %s: cannot write the file: %s", option,
                         path, strerror(errno));
    return CLI_PARSED;
}

int cli_output_begin(const cli_command *cmd, cli_output *o, bool json)
{
    o->csv.out = o->csv2.out = NULL;
    bool csv_stdout = is_stdout(o->csv_path) || is_stdout(o->csv2_path);
    if (is_stdout(o->csv_path) && is_stdout(o->csv2_path))
        return cli_usage_error(cmd,
                               "--csv - and --%s - would both write standard output: "
                               "give one of them a FILE",
                               o->csv2_option);
    if (csv_stdout && json && !o->out_path)
        return cli_usage_error(cmd, "--csv - writes the table to standard output instead of "
                                    "the JSON: drop --json, or give -o FILE for it");
    if (is_stdout(o->out_path))
        o->out_path = NULL; /* -o -: standard output, as without it */
    int rc = o->out_path ? redirect_stdout(cmd, o) : CLI_PARSED;
    if (rc == CLI_PARSED && o->csv_path)
        rc = open_csv(cmd, o, "--csv", o->csv_path, &o->csv);
    if (rc == CLI_PARSED && o->csv2_path) {
        char option[64];
        snprintf(option, sizeof option, "--%s", o->csv2_option);
        rc = open_csv(cmd, o, option, o->csv2_path, &o->csv2);
    }
    return rc;
}

/* Close c (unless it is stdout itself); false when a write failed. */
static bool close_csv(cli_csv *c, int *err)
{
    bool ok = true;
    if (c->out && c->out != stdout) {
        ok = ferror(c->out) == 0;
        *err = errno;
        if (fclose(c->out) != 0 && ok) {
            ok = false;
            *err = errno;
        }
    }
    c->out = NULL;
    return ok;
}

int cli_output_end(const cli_command *cmd, cli_output *o, int rc)
{
    char failed[96] = "";
    int err = 0;
    if (!close_csv(&o->csv, &err))
        snprintf(failed, sizeof failed, "--csv %s", o->csv_path);
    if (!close_csv(&o->csv2, &err))
        snprintf(failed, sizeof failed, "--%s %s", o->csv2_option, o->csv2_path);
    if ((fflush(stdout) != 0 || ferror(stdout)) && o->out_path) {
        err = errno;
        snprintf(failed, sizeof failed, "-o %s", o->out_path);
    }
    if (o->saved_stdout >= 0) {
        dup2(o->saved_stdout, STDOUT_FILENO);
        close(o->saved_stdout);
        o->saved_stdout = -1;
    }
    if (!failed[0] || rc != CLI_EXIT_OK)
        return rc;
    return cli_failf(cmd, CLI_EXIT_USAGE, "io", "%s: write failed: %s", failed, strerror(err));
}
