/*
 * options.c -- the command-line layer shared by every subcommand: getopt_long
 * over a table of options (cli.h), values checked against the option's
 * kind and range, one-line errors with "did you mean", JSON error objects,
 * and the help printed from the same table.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Long spellings getopt_long is given at most: names, aliases, --help
 * (the largest table, search's, has 24 options and 2 aliases). */
enum { MAX_LONG_OPTIONS = 96, FIRST_OPTION_VAL = 256 };

int cli_default_threads(void)
{
    return omp_get_num_procs();
}

/* ---------------------------------------------------------- the tables */

cli_option cli_flag(const char *name, bool *target, const char *help)
{
    return (cli_option){.name = name, .kind = CLI_FLAG, .target = target, .help = help};
}

cli_option cli_int(const char *name, const char *metavar, int64_t *target, int64_t min, int64_t max,
                   const char *help)
{
    return (cli_option){.name = name,
                        .kind = CLI_INT,
                        .metavar = metavar,
                        .target = target,
                        .min = min,
                        .max = max,
                        .help = help};
}

cli_option cli_double(const char *name, const char *metavar, double *target, double lo, double hi,
                      const char *help)
{
    return (cli_option){.name = name,
                        .kind = CLI_DOUBLE,
                        .metavar = metavar,
                        .target = target,
                        .lo = lo,
                        .hi = hi,
                        .lo_open = true,
                        .help = help};
}

cli_option cli_string(const char *name, const char *metavar, const char **target, const char *help)
{
    return (cli_option){
        .name = name, .kind = CLI_STRING, .metavar = metavar, .target = target, .help = help};
}

cli_option cli_enum(const char *name, int *target, const char *const *choices, const char *help)
{
    return (cli_option){
        .name = name, .kind = CLI_ENUM, .target = target, .choices = choices, .help = help};
}

cli_option cli_json_option(bool *json)
{
    return cli_flag("json", json, "print one JSON object");
}

cli_option cli_seed_option(int64_t *seed)
{
    return cli_int("seed", "S", seed, 0, INT64_MAX, "random seed (default 1)");
}

cli_option cli_threads_option(int64_t *threads)
{
    return cli_int("threads", "N", threads, 1, CLI_MAX_THREADS, CLI_THREADS_HELP);
}

cli_option cli_arch_option(const char **arch)
{
    return cli_string("arch", "PRESET|FILE", arch,
                      "the architecture: a preset, a YAML file, a SCALE-Sim .cfg or a\n"
                      "Timeloop v0.4 architecture (its ERT/ART beside it)");
}

cli_option cli_model_option(const char **model)
{
    return cli_string("model", "MODEL", model,
                      "a zoo name, an .onnx file or a SCALE-Sim topology .csv");
}

/* --------------------------------------------------------------- errors */

/* The JSON error object {"error": {"code": ..., "message": ...}} on stdout,
 * so that a script reading --json output always gets JSON. */
static void json_error(const char *code, const char *message)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_key(&j, "error");
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "code", code);
    cli_json_string_field(&j, "message", message);
    cli_json_end_object(&j);
    cli_json_end_object(&j);
    fflush(stdout);
}

int cli_usage_error(const cli_command *c, const char *fmt, ...)
{
    char message[AS_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "accelsearch %s: %s\nrun 'accelsearch help %s' for its options\n", c->name,
            message, c->help_for ? c->help_for : c->name);
    if (c->json)
        json_error("usage", message);
    return CLI_EXIT_USAGE;
}

/* The JSON error code of a library status. */
static const char *status_code_name(as_code code)
{
    switch (code) {
    case AS_EINVAL:
        return "invalid_input";
    case AS_EIO:
        return "io";
    case AS_ENOMEM:
        return "out_of_memory";
    default:
        return "internal";
    }
}

int cli_fail(const cli_command *c, const as_status *st)
{
    fprintf(stderr, "accelsearch: %s\n", st->message);
    if (c && c->json)
        json_error(status_code_name(st->code), st->message);
    return cli_exit_for(st->code);
}

int cli_failf(const cli_command *c, int exit, const char *code, const char *fmt, ...)
{
    char message[AS_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "accelsearch: %s\n", message);
    if (c && c->json)
        json_error(code, message);
    return exit;
}

/* ------------------------------------------------------------ did you mean */

/* Levenshtein distance of a and b (each cut at 63 characters). */
static int edit_distance(const char *a, const char *b)
{
    enum { N = 64 };
    int row[N + 1];
    size_t na = strnlen(a, N - 1), nb = strnlen(b, N - 1);
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int above = row[j];
            int best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[nb];
}

/* How far a typed name is from a real one: an abbreviation counts as 1. */
static int name_distance(const char *typed, const char *name)
{
    return strncmp(name, typed, strlen(typed)) == 0 ? 1 : edit_distance(typed, name);
}

/* Whether distance d is near enough to suggest for a name typed. */
static bool near_enough(const char *typed, int d)
{
    return d <= (int)strlen(typed) / 3 + 1;
}

const char *cli_nearest_name(const char *typed, const char *const *names)
{
    const char *best = NULL;
    int best_distance = INT32_MAX;
    for (int k = 0; names[k]; k++) {
        int d = name_distance(typed, names[k]);
        if (d < best_distance) {
            best_distance = d;
            best = names[k];
        }
    }
    return best && near_enough(typed, best_distance) ? best : NULL;
}

/* The option of c nearest the misspelt name (its own name, or the name an
 * alias stands for), or NULL when none is near enough to suggest. */
static const char *nearest_option(const cli_command *c, const char *typed)
{
    const char *best = NULL;
    int best_distance = INT32_MAX;
    for (int i = 0; i < c->n_options; i++) {
        const cli_option *o = &c->options[i];
        int d = name_distance(typed, o->name);
        for (int k = 0; o->aliases && o->aliases[k]; k++) {
            int da = name_distance(typed, o->aliases[k]);
            d = da < d ? da : d;
        }
        if (d < best_distance) {
            best_distance = d;
            best = o->name;
        }
    }
    int dh = name_distance(typed, "help");
    if (dh < best_distance) {
        best_distance = dh;
        best = "help";
    }
    return best && near_enough(typed, best_distance) ? best : NULL;
}

/* "unknown option '--x'", with the nearest option when there is one. */
static int unknown_option(const cli_command *c, const char *token)
{
    char name[64];
    const char *bare = token + strspn(token, "-");
    snprintf(name, sizeof name, "%.*s", (int)strcspn(bare, "="), bare);
    int len = (int)strcspn(token, "=");
    const char *near = nearest_option(c, name);
    if (near)
        return cli_usage_error(c, "unknown option '%.*s'; did you mean --%s?", len, token, near);
    return cli_usage_error(c, "unknown option '%.*s'", len, token);
}

/* --------------------------------------------------------------- values */

/* "a, b or c" of the NULL-terminated choices into buf. */
static const char *choices_text(const char *const *choices, char *buf, size_t size)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int k = 0; choices[k] && w < size; k++)
        w += (size_t)snprintf(buf + w, size - w, "%s%s",
                              k == 0           ? ""
                              : choices[k + 1] ? ", "
                                               : " or ",
                              choices[k]);
    return buf;
}

static int store_int(const cli_command *c, const cli_option *o, const char *spelt, const char *v)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno == ERANGE || n < o->min || n > o->max)
        return cli_usage_error(c, "%s wants an integer from %lld to %lld, got '%s'", spelt,
                               (long long)o->min, (long long)o->max, v);
    *(int64_t *)o->target = n;
    return CLI_PARSED;
}

static int store_double(const cli_command *c, const cli_option *o, const char *spelt, const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    bool above_lo = o->lo_open ? x > o->lo : x >= o->lo;
    if (*v == '\0' || *end != '\0' || errno == ERANGE || !isfinite(x) || !above_lo || x > o->hi)
        return cli_usage_error(c, "%s wants a number in %c%g, %g], got '%s'", spelt,
                               o->lo_open ? '(' : '[', o->lo, o->hi, v);
    *(double *)o->target = x;
    return CLI_PARSED;
}

/* The value v of option o, spelt as the user did ("--budget"), into its
 * target; CLI_PARSED or an exit status. */
int cli_store_option_value(const cli_command *c, const cli_option *o, const char *spelt,
                           const char *v)
{
    char buf[256];
    int k;
    if (o->given)
        *o->given = true;
    switch (o->kind) {
    case CLI_FLAG:
        *(bool *)o->target = true;
        return CLI_PARSED;
    case CLI_INT:
        return store_int(c, o, spelt, v);
    case CLI_DOUBLE:
        return store_double(c, o, spelt, v);
    case CLI_ENUM:
        if ((k = cli_name_index(v, o->choices)) < 0)
            return cli_usage_error(c, "%s wants %s, got '%s'", spelt,
                                   choices_text(o->choices, buf, sizeof buf), v);
        *(int *)o->target = k;
        return CLI_PARSED;
    case CLI_STRING:
        *(const char **)o->target = v;
        return CLI_PARSED;
    case CLI_LIST:
        if (*o->count >= o->max)
            return cli_usage_error(c, "%s is given more than %lld times; the last was '%s'", spelt,
                                   (long long)o->max, v);
        if (o->tags)
            o->tags[*o->count] = o->tag;
        ((const char **)o->target)[(*o->count)++] = v;
        return CLI_PARSED;
    }
    return CLI_PARSED;
}

/* ---------------------------------------------------------------- parse */

/* getopt_long's table of c's spellings (names and aliases, then --help);
 * val says which option of c a spelling stands for.  The short options go
 * to optstring. */
static void build_getopt_tables(const cli_command *c, struct option *longopts, char *optstring)
{
    int n = 0;
    char *s = optstring;
    *s++ = '-'; /* positional arguments come back in order, as value 1 */
    *s++ = ':'; /* a missing value is ':', an unknown option '?' */
    *s++ = 'h';
    *s++ = 'q';
    *s++ = 'v';
    for (int i = 0; i < c->n_options; i++) {
        const cli_option *o = &c->options[i];
        int has_arg = o->kind == CLI_FLAG ? no_argument : required_argument;
        if (n < MAX_LONG_OPTIONS - 4)
            longopts[n++] = (struct option){o->name, has_arg, NULL, FIRST_OPTION_VAL + i};
        for (int k = 0; o->aliases && o->aliases[k] && n < MAX_LONG_OPTIONS - 4; k++)
            longopts[n++] = (struct option){o->aliases[k], has_arg, NULL, FIRST_OPTION_VAL + i};
        if (o->short_name) {
            *s++ = o->short_name;
            if (has_arg == required_argument)
                *s++ = ':';
        }
    }
    *s = '\0';
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n++] = (struct option){"quiet", no_argument, NULL, 'q'};
    longopts[n++] = (struct option){"verbose", no_argument, NULL, 'v'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};
}

/* The option of c that a getopt_long value stands for, or NULL. */
static const cli_option *option_of(const cli_command *c, int val)
{
    if (val >= FIRST_OPTION_VAL && val < FIRST_OPTION_VAL + c->n_options)
        return &c->options[val - FIRST_OPTION_VAL];
    for (int i = 0; i < c->n_options; i++)
        if (c->options[i].short_name && c->options[i].short_name == val)
            return &c->options[i];
    return NULL;
}

/* getopt_long accepts any unambiguous abbreviation; this layer does not
 * (a new option would break them).  token is the argument that held the
 * option; true when it spells one of c's names or aliases in full. */
static bool spelt_in_full(const char *token, const struct option *longopt)
{
    if (token[0] != '-' || token[1] != '-')
        return true; /* a short option */
    const char *name = token + 2;
    size_t n = strcspn(name, "=");
    return strlen(longopt->name) == n && strncmp(name, longopt->name, n) == 0;
}

/* Whether token names one of longopts in full: getopt_long also takes
 * abbreviations, which this layer refuses. */
static bool names_an_option(const char *token, const struct option *longopts)
{
    for (int i = 0; longopts[i].name; i++)
        if (spelt_in_full(token, &longopts[i]))
            return true;
    return false;
}

/* Whether --json (exactly) is among the arguments, before any "--". */
static bool asks_for_json_anywhere(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            return true;
    return false;
}

/* A positional argument: kept when c takes one more. */
static int add_positional(cli_command *c, const char *arg)
{
    if (c->n_positional >= c->max_positional || c->n_positional >= CLI_MAX_POSITIONAL)
        return cli_usage_error(c, "unexpected argument '%s'", arg);
    c->positional[c->n_positional++] = arg;
    return CLI_PARSED;
}

/* One result of getopt_long: an option with its value, a positional, or
 * a mistake.  argv[optind - 1] is the argument just read. */
static int take_one(cli_command *c, char **argv, const struct option *longopts, int val,
                    int longindex)
{
    const char *token = argv[optind - 1];
    const cli_option *o;
    switch (val) {
    case 1:
        return add_positional(c, optarg);
    case 'h':
        if (longindex >= 0 && !spelt_in_full(token, &longopts[longindex]))
            return unknown_option(c, token);
        cli_print_help(c, stdout);
        return CLI_EXIT_OK;
    case 'q':
    case 'v':
        if (longindex >= 0 && !spelt_in_full(token, &longopts[longindex]))
            return unknown_option(c, token);
        cli_verbosity = val == 'q' ? -1 : 1;
        return CLI_PARSED;
    case ':': /* an abbreviation without its value is still unknown */
        if (!names_an_option(token, longopts))
            return unknown_option(c, token);
        return cli_usage_error(c, "option needs a value: '%s'", token);
    case '?':
        if ((o = option_of(c, optopt)) && o->kind == CLI_FLAG)
            return cli_usage_error(c, "option '--%s' takes no value, got '%s'", o->name, token);
        return unknown_option(c, token);
    default:
        o = option_of(c, val);
        if (!o)
            return unknown_option(c, token);
        /* "--opt value" read two arguments: the option is the one before. */
        if (optarg && optarg == argv[optind - 1] && optind >= 2)
            token = argv[optind - 2];
        if (longindex >= 0 && !spelt_in_full(token, &longopts[longindex]))
            return unknown_option(c, token);
        char spelt[64];
        snprintf(spelt, sizeof spelt, "%.*s", (int)strcspn(token, "="), token);
        return cli_store_option_value(c, o, spelt, optarg);
    }
}

int cli_parse(cli_command *c, int argc, char **argv)
{
    struct option longopts[MAX_LONG_OPTIONS];
    char optstring[3 * MAX_LONG_OPTIONS];
    build_getopt_tables(c, longopts, optstring);
    bool has_json = false;
    for (int i = 0; i < c->n_options; i++)
        has_json |= strcmp(c->options[i].name, "json") == 0;
    c->json = has_json && asks_for_json_anywhere(argc, argv);
    c->n_positional = 0;
    /* Defaults from accelsearch.yaml first: the command line overrides them. */
    int from_file = cli_config_apply(c);
    if (from_file != CLI_PARSED)
        return from_file;
    for (int i = 0; i < c->n_options; i++)
        if (!strcmp(c->options[i].name, "json") && *(bool *)c->options[i].target)
            c->json = true;
    /* getopt_long reads argv from index 1: give it the command's name there. */
    char **args = malloc(((size_t)argc + 2) * sizeof *args);
    if (!args)
        return cli_failf(c, CLI_EXIT_FAILURE, "out_of_memory", "out of memory");
    args[0] = (char *)c->name;
    memcpy(args + 1, argv, (size_t)argc * sizeof *args);
    args[argc + 1] = NULL;
    int rc = CLI_PARSED;
    opterr = 0;
    optind = 0; /* start over: a fresh scan */
    int val, longindex = -1;
    while (rc == CLI_PARSED &&
           (val = getopt_long(argc + 1, args, optstring, longopts, &longindex)) != -1) {
        rc = take_one(c, args, longopts, val, longindex);
        longindex = -1;
    }
    for (int i = optind; rc == CLI_PARSED && i < argc + 1; i++) /* after "--" */
        rc = add_positional(c, args[i]);
    free(args);
    if (rc == CLI_PARSED && cli_config_file())
        cli_verbose("defaults from %s", cli_config_file());
    return rc;
}

/* ----------------------------------------------------------------- help */

/* The left column of an option's help: "  -o, --name VALUE". */
static void option_label(const cli_option *o, char *buf, size_t size)
{
    char choices[128];
    const char *metavar = o->metavar;
    if (!metavar && o->kind == CLI_ENUM) {
        size_t w = 0;
        for (int k = 0; o->choices[k] && w < sizeof choices; k++)
            w += (size_t)snprintf(choices + w, sizeof choices - w, "%s%s", k ? "|" : "",
                                  o->choices[k]);
        metavar = choices;
    }
    snprintf(buf, size, "  %s%c%s--%s%s%s", o->short_name ? "-" : "",
             o->short_name ? o->short_name : ' ', o->short_name ? ", " : "", o->name,
             o->kind == CLI_FLAG ? "" : " ", o->kind == CLI_FLAG ? "" : (metavar ? metavar : "X"));
    if (!o->short_name) /* no "-x, ": drop the blank the format left */
        memmove(buf + 2, buf + 3, strlen(buf + 3) + 1);
}

/* One option: its label, then its help, each line indented alike. */
static void print_option(const cli_option *o, FILE *out)
{
    enum { COLUMN = 26 };
    char label[192];
    option_label(o, label, sizeof label);
    fputs(label, out);
    int width = (int)strlen(label);
    const char *h = o->help ? o->help : "";
    bool first = true;
    while (first || *h) {
        size_t n = strcspn(h, "\n");
        if (!first || width >= COLUMN - 1)
            fprintf(out, "\n%*s", COLUMN, "");
        else
            fprintf(out, "%*s", COLUMN - width, "");
        fprintf(out, "%.*s", (int)n, h);
        h += n + (h[n] == '\n');
        first = false;
    }
    /* The range the parser checks, from the same fields. */
    if (o->kind == CLI_INT && o->max < INT64_MAX)
        fprintf(out, " [%lld..%lld]", (long long)o->min, (long long)o->max);
    else if (o->kind == CLI_DOUBLE)
        fprintf(out, " %c%g..%g]", o->lo_open ? '(' : '[', o->lo, o->hi);
    if (o->aliases && o->aliases[0]) {
        fprintf(out, "\n%*s(deprecated spelling%s:", COLUMN, "", o->aliases[1] ? "s" : "");
        for (int k = 0; o->aliases[k]; k++)
            fprintf(out, " --%s", o->aliases[k]);
        fputc(')', out);
    }
    fputc('\n', out);
}

void cli_print_help(const cli_command *c, FILE *out)
{
    const char *s = c->synopsis;
    for (bool first = true; *s; first = false) {
        size_t n = strcspn(s, "\n");
        fprintf(out, "%s accelsearch %.*s\n", first ? "usage:" : "      ", (int)n, s);
        s += n + (s[n] == '\n');
    }
    if (c->about)
        fprintf(out, "\n%s", c->about);
    fputs("\noptions:\n", out);
    int n_deprecated = 0;
    for (int i = 0; i < c->n_options; i++) {
        n_deprecated += c->options[i].deprecated;
        if (!c->options[i].deprecated)
            print_option(&c->options[i], out);
    }
    fputs("  -q, --quiet             no progress, notes or warnings on standard error\n"
          "  -v, --verbose           say more on standard error (the defaults file read, ...)\n"
          "  -h, --help              this help\n",
          out);
    if (n_deprecated)
        fputs("\ndeprecated options (kept for one release):\n", out);
    for (int i = 0; i < c->n_options; i++)
        if (c->options[i].deprecated)
            print_option(&c->options[i], out);
    if (c->epilog)
        fprintf(out, "\n%s", c->epilog);
}

/* -------------------------------------------------------------- actions */

int cli_dispatch(const char *group, const cli_action *actions, void (*help)(FILE *out), int argc,
                 char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        help(stdout);
        return CLI_EXIT_OK;
    }
    const char *names[8];
    char list[128];
    int n = 0;
    for (; actions[n].name && n < 7; n++) {
        names[n] = actions[n].name;
        if (argc > 0 && !strcmp(argv[0], actions[n].name))
            return actions[n].run(argc - 1, argv + 1);
    }
    names[n] = NULL;
    choices_text(names, list, sizeof list);
    cli_command c = {.name = group, .json = asks_for_json_anywhere(argc, argv)};
    if (argc == 0)
        return cli_usage_error(&c, "%s wants %s", group, list);
    const char *near = cli_nearest_name(argv[0], names);
    if (near)
        return cli_usage_error(&c, "%s wants %s '%s'; did you mean %s?", group, list, argv[0],
                               near);
    return cli_usage_error(&c, "%s wants %s '%s'", group, list, argv[0]);
}

bool cli_is_onnx_path(const char *path)
{
    return as_path_has_extension(path, ".onnx");
}
