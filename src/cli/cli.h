/*
 * cli.h -- pieces of the accelsearch program shared by its subcommands.
 * Only the CLI prints; the library reports through as_status.
 */
#ifndef AS_CLI_H
#define AS_CLI_H

#include <stdio.h>

#include "mapping/mapping.h"
#include "search/search.h"
#include "store/store.h"
#include "workload/workload.h"

/* Exit statuses of the program; 130 (128 + SIGINT) after Ctrl-C, once what
 * was found has been printed and kept. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERRUPTED = 130 };

/* The run store that search writes and runs reads, unless --db says
 * otherwise: in the working directory. */
#define CLI_DEFAULT_DB "accelsearch.db"

/* The exit status for a library status: bad input (including unreadable or
 * unwritable files) is 2, the rest 1. */
int cli_exit_for(as_code code);

/* Index of s in the NULL-terminated names, or -1. */
int cli_name_index(const char *s, const char *const *names);

/* ------------------------------------------------------------- options */

/*
 * One command-line layer for every subcommand (options.c): each declares a
 * table of its options, and cli_parse reads argv with getopt_long against
 * it, stores each value where the option points, and reports any mistake
 * in one line.  The help text is printed from the same table, so that the
 * parser and the help cannot drift apart.
 */
typedef enum cli_kind {
    CLI_FLAG,   /* no value: target is a bool */
    CLI_INT,    /* a decimal integer in [min, max]: target is an int64_t */
    CLI_DOUBLE, /* a number in [lo, hi] ((lo, hi] when lo_open): a double */
    CLI_ENUM,   /* one of choices: target is an int, the choice's index */
    CLI_STRING, /* any text: target is a const char * */
    CLI_LIST    /* repeatable text: target is a const char *[max], *count items */
} cli_kind;

typedef struct cli_option {
    const char *name; /* the long name, without "--" */
    cli_kind kind;
    const char *metavar; /* what the value is called in the help ("N", "FILE") */
    const char *help;    /* lines separated by '\n' */
    void *target;
    int64_t min, max;           /* CLI_INT range; CLI_LIST: max items */
    double lo, hi;              /* CLI_DOUBLE range */
    bool lo_open;               /* CLI_DOUBLE: lo itself excluded */
    const char *const *choices; /* CLI_ENUM, NULL-terminated */
    const char *const *aliases; /* old spellings kept for one release (static), or NULL */
    char short_name;            /* a one-letter spelling ('o' for -o), or 0 */
    int *count;                 /* CLI_LIST: items stored so far */
    int *tags, tag;             /* CLI_LIST: tags[i] = tag of the option that gave item i,
                                   so that several options can fill one list in order */
    bool *given;                /* set when the option appears, or NULL */
    bool deprecated;            /* an old option kept for one release */
} cli_option;

/* Positional arguments a command takes at most (eval's and map's three files). */
enum { CLI_MAX_POSITIONAL = 4 };

/* A subcommand as the layer sees it: its name, help text and options in;
 * its positional arguments and whether --json was asked for out. */
typedef struct cli_command {
    const char *name;     /* "map", "runs export": in messages and help */
    const char *help_for; /* the word of `accelsearch help WORD` ("runs") */
    const char *synopsis; /* lines after "usage: accelsearch " */
    const char *about;    /* what the command does, or NULL */
    const char *epilog;   /* printed after the options, or NULL */
    cli_option *options;
    int n_options;
    int max_positional;
    const char *positional[CLI_MAX_POSITIONAL];
    int n_positional;
    bool json; /* the command has --json and it is on the command line */
} cli_command;

/* Options of each kind, for the tables (fields such as aliases, given or
 * deprecated are set on the result when needed).  A double's range is
 * (lo, hi]. */
cli_option cli_flag(const char *name, bool *target, const char *help);
cli_option cli_int(const char *name, const char *metavar, int64_t *target, int64_t min, int64_t max,
                   const char *help);
cli_option cli_double(const char *name, const char *metavar, double *target, double lo, double hi,
                      const char *help);
cli_option cli_string(const char *name, const char *metavar, const char **target, const char *help);
cli_option cli_enum(const char *name, int *target, const char *const *choices, const char *help);
/* The options several commands share, described alike everywhere. */
cli_option cli_json_option(bool *json);
cli_option cli_seed_option(int64_t *seed);
cli_option cli_threads_option(int64_t *threads);
cli_option cli_arch_option(const char **arch);
cli_option cli_model_option(const char **model);

/* cli_parse's result when the command should go on. */
#define CLI_PARSED (-1)

/* Parse argv (after the subcommand words) into c's option targets and
 * positional arguments.  Returns CLI_PARSED, or the exit status when the
 * program should stop: 0 after -h/--help (the help on stdout), 2 after a
 * mistake (one line on stderr, and a JSON error object with --json). */
int cli_parse(cli_command *c, int argc, char **argv);
/* The help of c (usage, about, the options table) to out. */
void cli_print_help(const cli_command *c, FILE *out);
/* A mistake on the command line: "accelsearch NAME: message" and a pointer
 * to `accelsearch help`, on stderr (and as JSON on stdout with --json);
 * returns CLI_EXIT_USAGE. */
__attribute__((format(printf, 2, 3))) int cli_usage_error(const cli_command *c, const char *fmt,
                                                          ...);
/* A library failure: "accelsearch: message" on stderr (and as JSON on
 * stdout with --json); returns the exit status for st's code. */
int cli_fail(const cli_command *c, const as_status *st);
/* Any other failure with exit status `exit` and a JSON error code. */
__attribute__((format(printf, 4, 5))) int cli_failf(const cli_command *c, int exit,
                                                    const char *code, const char *fmt, ...);
/* One action of a command group (`runs list`): its word and its code,
 * which gets the arguments after the word. */
typedef struct cli_action {
    const char *name;
    int (*run)(int argc, char **argv);
} cli_action;
/* Run the action argv[0] names among the NULL-terminated actions of
 * `group`; -h/--help print help(stdout) and exit 0. */
int cli_dispatch(const char *group, const cli_action *actions, void (*help)(FILE *out), int argc,
                 char **argv);
/* Of the NULL-terminated names, the nearest to a misspelt one, or NULL. */
const char *cli_nearest_name(const char *typed, const char *const *names);
/* Whether path names an ONNX model (ends in .onnx), for commands that want
 * another kind of file. */
bool cli_is_onnx_path(const char *path);

/* The most threads a --threads takes, and the help every --threads shows. */
#define CLI_MAX_THREADS 1024
#define CLI_THREADS_HELP "threads (default: the number of cores); results do not depend on it"

/* The default of every --threads: the machine's cores (results never
 * depend on the thread count). */
int cli_default_threads(void);

/* The subcommands' JSON writer: callers only say what comes next (it
 * tracks nesting and keys).  The value is built as a jansson tree and
 * printed when the outermost object or array closes, indented, by the
 * core's dump (shortest numbers, null for non-finite, valid UTF-8). */
enum { CLI_JSON_MAX_DEPTH = 32 };
typedef struct cli_json {
    FILE *out;
    int depth;                         /* objects and arrays open */
    json_t *scope[CLI_JSON_MAX_DEPTH]; /* they, outermost first (NULL: lost) */
    char *key;                         /* the member name awaiting its value */
    bool lost;                         /* out of memory or too deep: a value is missing */
} cli_json;

void cli_json_init(cli_json *j, FILE *out);
void cli_json_begin_object(cli_json *j);
void cli_json_end_object(cli_json *j);
void cli_json_begin_array(cli_json *j);
void cli_json_end_array(cli_json *j);
void cli_json_key(cli_json *j, const char *key);
void cli_json_string(cli_json *j, const char *s);
void cli_json_int(cli_json *j, int64_t v);
void cli_json_double(cli_json *j, double v);
void cli_json_bool(cli_json *j, bool v);
void cli_json_null(cli_json *j);
/* A copy of a JSON value (a stored front, ...). */
void cli_json_value(cli_json *j, const json_t *v);
/* "key": value in one call, for the common case of a scalar member. */
void cli_json_string_field(cli_json *j, const char *key, const char *s);
void cli_json_int_field(cli_json *j, const char *key, int64_t v);
void cli_json_double_field(cli_json *j, const char *key, double v);
void cli_json_bool_field(cli_json *j, const char *key, bool v);
/* A shape as an array of integers. */
void cli_json_shape(cli_json *j, const wl_tensor *t);

/* The options of commands that load a model (model_args.c). */
typedef struct cli_model_args {
    int64_t batch; /* 0: the model's */
    int precision; /* index of the --precision choice, when precision_set */
    bool precision_set;
    bool as_hardware; /* --as-hardware: --precision sets widths, not the MACs' format */
    bool allow_unknown_ops;
    const char *dims; /* --dim: values of named symbolic input dims, NULL: none */
} cli_model_args;
/* --batch, --precision, --as-hardware and --dim (when with_batch_precision) and
 * --allow-unknown-ops, writing into m, at options[0...]; returns how many. */
int cli_add_model_options(cli_option *options, cli_model_args *m, bool with_batch_precision);
/* Load a model (zoo name or .onnx) with m's batch and unknown-op choice. */
as_code cli_load_model(const char *model, const cli_model_args *m, wl_graph **out, as_status *st);
/* The --precision asked for into *p; false when none was. */
bool cli_precision(const cli_model_args *m, wl_precision *p);
/* The name shown for op o of g: the node's, or its first output's when the
 * source left the node unnamed (ONNX allows it). */
const char *cli_layer_name(const wl_graph *g, int32_t o);

/* The options of commands that cost a model on an architecture (map and
 * fuse): --arch, --model and the model's loading options. */
typedef struct cli_design_args {
    const char *arch;
    const char *model;
    cli_model_args load;
    bool no_epilogue_fusion; /* --no-epilogue-fusion (cli_epilogue_option) */
} cli_design_args;
/* --arch and --model, writing into d, at options[0...]; returns how many
 * (the model's loading options are cli_add_model_options'). */
int cli_add_design_options(cli_option *options, cli_design_args *d);
/* Say in the --batch option among options[0 .. n) that map and fuse
 * default to the architecture's native batch (cli_load_design). */
void cli_design_batch_help(cli_option *options, int n);
/* A design by name or file, as every command takes it (map_design_load:
 * presets, our YAML, SCALE-Sim .cfg, Timeloop architectures with their
 * tables beside them). */
as_code cli_arch_load(const char *design, arch_spec *a, as_status *st);
/* Load d's architecture into *a and its model into *g (with --batch, or
 * else the architecture's native_batch when above 1 -- a design emitted by
 * `search --emit-arch` runs at the batch it was chosen for -- and
 * --allow-unknown-ops), print the model's warnings and apply --precision:
 * what map and fuse both start from. */
as_code cli_load_design(const cli_design_args *d, arch_spec *a, wl_graph **g, as_status *st);
/* The precision conversion of a layer-by-layer run (network.c's
 * "Precision"), as one warning on stderr when a layer was narrowed. */
void cli_warn_narrowing(const map_network_result *r);
/* The model's warnings, one line per unknown op type (with its count of
 * nodes) rather than one per node. */
void cli_each_warning(const wl_graph *g, void (*emit)(void *user, const char *warning), void *user);
/* Those warnings on stderr. */
void cli_print_warnings(const wl_graph *g);

/* The totals of a whole network's cost, layer by layer (map) or fused
 * (fuse), shown by one helper so that both say the same thing alike. */
typedef struct cli_totals {
    int64_t cycles;
    double latency_s;
    double energy_pJ;
    bool has_energy_split; /* onchip/dram_energy_pJ are shown (fuse) */
    double onchip_energy_pJ, dram_energy_pJ;
    double edp_J_cycle;
    int64_t dram_bytes;
    double op_intensity; /* 2 * MACs / DRAM bytes */
} cli_totals;
/* The JSON object of a result about model g on architecture a, begun,
 * with its "model" and "arch" members (the caller ends it). */
void cli_json_begin_design(cli_json *j, const wl_graph *g, const arch_spec *a);
/* t's members, in one order, into the JSON object open in j. */
void cli_json_totals_members(cli_json *j, const cli_totals *t);
/* "key": {component: pJ, ...} of an energy split by map_component. */
void cli_json_components(cli_json *j, const char *key, const double *energy_pJ);

/* --weights resident|streamed (map, fuse, search), writing the choice's
 * index into *choice and whether it was given into *given. */
cli_option cli_weights_option(int *choice, bool *given);
/* The mode chosen: AUTO (by capacity) unless --weights was given. */
map_weights cli_weights_mode(int choice, bool given);
/* The summary line saying where the weights live (a: the design), its
 * label left-aligned in label_width columns as the lines around it. */
void cli_print_weights(const arch_spec *a, const map_residency *r, int label_width);
/* "weights": {"mode", "level", "bytes", "capacity_bytes"} into the open
 * JSON object. */
void cli_json_weights(cli_json *j, const arch_spec *a, const map_residency *r);
/* Epilogue fusion (network_report.c), shared by map, fuse and search:
 * the option --no-epilogue-fusion into *off; the lowering for inference
 * (wl_fuse_epilogues) of g unless off, its figures into *stats (zero
 * when off); the name shown for layer o with what runs fused in it
 * ("layer1.0.conv3+bn3+Add+relu", each part after the dotted prefix it
 * shares with o's name) into buf; the summary line and JSON members. */
cli_option cli_epilogue_option(bool *off);
as_code cli_lower_for_inference(bool off, wl_graph *g, wl_epilogue_stats *stats, as_status *st);
const char *cli_fused_layer_name(const wl_graph *g, int32_t o, char *buf, size_t size);
void cli_print_epilogue_summary(bool off, const wl_epilogue_stats *stats, int32_t n_epilogue_ops);
void cli_json_epilogue_summary(cli_json *j, bool off, const wl_epilogue_stats *stats,
                               int32_t n_epilogue_ops);
/* "folded_bn" and "epilogue": [{"name", "op"}, ...] of layer o, when it has them. */
void cli_json_layer_epilogue(cli_json *j, const wl_graph *g, int32_t o);

/* Evaluations and mappings (report.c), shared by eval and map.  dim_names
 * may be NULL (the slots' own names N, G, C, M, P, Q, R, S). */
void cli_print_eval(const arch_spec *a, const map_eval *e);
void cli_json_eval_members(cli_json *j, const arch_spec *a, const map_eval *e);
void cli_print_mapping(const arch_spec *a, const char (*dim_names)[16], const map_mapping *m);
void cli_json_mapping(cli_json *j, const arch_spec *a, const char (*dim_names)[16],
                      const map_mapping *m);
/* A co-design run's hypervolume after each iteration, as the member
 * "hypervolume_curve": [{"evaluations": ..., "hypervolume": ...}, ...]
 * (report.c, shared by search and runs show). */
void cli_json_hypervolume_curve(cli_json *j, const int64_t *evaluations, const double *hypervolume,
                                int64_t n);

/* Wall-clock seconds from an arbitrary start (progress.c), for the
 * "seconds" a command reports and eval's evaluations per second. */
double cli_seconds_now(void);

/* Progress on a terminal (progress.c): silent when stderr is not one. */
typedef struct cli_progress {
    const char *label;
    bool enabled;
    int last_percent;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
void cli_progress_update(cli_progress *p, int64_t done, int64_t total);
void cli_progress_end(cli_progress *p);
/* Defaults that persist (config.c): accelsearch.yaml's values for c's
 * options, applied by cli_parse before the command line (which overrides
 * them); CLI_PARSED or an exit status (a bad file names its line and
 * key).  cli_config_file: the file read, or NULL. */
int cli_config_apply(cli_command *c);
const char *cli_config_file(void);
/* The value v of option o, spelt as the user did ("--budget", or the
 * file and key), into its target: CLI_PARSED or an exit status. */
int cli_store_option_value(const cli_command *c, const cli_option *o, const char *spelt,
                           const char *v);
/* How much goes to standard error: -1 with --quiet (no progress, notes or
 * warnings), 1 with --verbose, else 0; and the messages that obey it:
 * "accelsearch: warning: ...", "accelsearch: ...", and the verbose ones. */
extern int cli_verbosity;
void cli_warn(const char *fmt, ...) AS_PRINTF(1, 2);
void cli_note(const char *fmt, ...) AS_PRINTF(1, 2);
void cli_verbose(const char *fmt, ...) AS_PRINTF(1, 2);

/* Ctrl-C sets *flag (once; a second Ctrl-C ends the program). */
void cli_catch_interrupt(volatile int *flag);

/* ------------------------------------------------------------- output */

/*
 * The output rule of every command but study (output.c;
 * docs/cli-output.md).  Text: each number with its unit, a physical
 * quantity by cli_eng in engineering notation ("83.42 ms", "16.48 mJ",
 * "1.375 mJ*cycle": 4 significant digits, an SI prefix from y to Y, "u"
 * for micro), one whose unit takes no prefix (mm2, ops/byte, ratios)
 * by cli_num in 4 significant digits; counts (cycles, MACs, bytes) as
 * exact integers.  JSON and CSV: numbers raw, units in key and column
 * names (latency_s, energy_pJ).  CLI_ENG and CLI_NUM give the text in a
 * buffer of their own, for use as printf arguments.
 */
enum { CLI_ENG_BYTES = 64 };
const char *cli_eng(double value, const char *unit, char *buf, size_t size);
const char *cli_num(double value, const char *unit, char *buf, size_t size);
#define CLI_ENG(value, unit) cli_eng((value), (unit), (char[CLI_ENG_BYTES]){0}, CLI_ENG_BYTES)
#define CLI_NUM(value, unit) cli_num((value), (unit), (char[CLI_ENG_BYTES]){0}, CLI_ENG_BYTES)

/* A CSV table being written (RFC 4180: a field with a comma, quote, CR
 * or LF quoted, its quotes doubled -- store_csv_string; lines end in
 * CRLF; numbers in the fewest digits that read back the same, nan and
 * inf as empty fields).  Fields go left to right; cli_csv_end_row ends
 * the line. */
typedef struct cli_csv {
    FILE *out;
    int n_fields; /* written in the current row */
} cli_csv;
void cli_csv_header(cli_csv *c, const char *const *names); /* NULL-terminated; a whole row */
void cli_csv_string(cli_csv *c, const char *s);
void cli_csv_int(cli_csv *c, int64_t v);
void cli_csv_double(cli_csv *c, double v);
void cli_csv_bool(cli_csv *c, bool v);
void cli_csv_empty(cli_csv *c);
void cli_csv_end_row(cli_csv *c);

/* Where a command's output goes: -o FILE (--output) takes its usual
 * output (text, or JSON with --json; an error's JSON too), --csv FILE its
 * table as CSV; "-" is standard output, and --csv - replaces the usual
 * output there (which -o FILE then still writes). */
typedef struct cli_output {
    const char *csv_path;    /* --csv: NULL when not given */
    const char *out_path;    /* -o: NULL for standard output */
    const char *csv2_path;   /* a second table's option (fuse --csv-layers), or NULL */
    const char *csv2_option; /* its name, without "--" */
    int saved_stdout;        /* the real standard output while -o points it at FILE, or -1 */
    cli_csv csv, csv2;       /* .out: the open destinations, or NULL */
} cli_output;
/* --csv (help: what its rows are) and -o at options[0...]; returns how many. */
int cli_add_output_options(cli_option *options, cli_output *o, const char *csv_help);
/* After cli_parse: refuse --csv - with --json (and no -o), then open both
 * destinations, so that an unwritable path fails before any work, the
 * error naming the file.  CLI_PARSED, or the exit status. */
int cli_output_begin(const cli_command *cmd, cli_output *o, bool json);
/* Whether the usual output is wanted (not when a --csv - took its place). */
bool cli_output_usual(const cli_output *o);
/* Close both destinations (standard output back as it was); a write
 * that failed is an error naming the file when rc was a success.
 * Returns the exit status. */
int cli_output_end(const cli_command *cmd, cli_output *o, int rc);
/* An evaluation's table, one row per level and data space it keeps
 * (report.c, eval and map's single problem). */
void cli_csv_eval(cli_csv *c, const arch_spec *a, const map_eval *e);

/* Subcommands: argc/argv start after the subcommand word. */
int cli_zoo(int argc, char **argv);
int cli_model(int argc, char **argv);
int cli_arch(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_map(int argc, char **argv);
int cli_fuse(int argc, char **argv);
int cli_runs(int argc, char **argv);
int cli_search(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_study(int argc, char **argv);
int cli_report(int argc, char **argv);

/* Stored runs (cmd_runs.c), shared by runs and report: run id of the
 * store at db into *out, or its newest run when id is 0; and the space a
 * search run searched, loaded by the name its configuration gives (a
 * built-in) or from space_path, checked against the stored digest. */
as_code cli_find_run(store *s, const char *db, int64_t id, store_run *out, as_status *st);
/* The command's RUN argument (its first positional, when given) into
 * *run_id: CLI_PARSED, or a usage error when it is not a run id. */
int cli_run_id_argument(cli_command *cmd, int64_t *run_id);
as_code cli_run_space(store *s, const store_run *run, const char *space_path, se_space *out,
                      as_status *st);
/* runs resume, delete and compare (cmd_runs_manage.c), and the store at
 * db opened when it exists (never creating one). */
int cli_runs_resume(int argc, char **argv);
int cli_runs_delete(int argc, char **argv);
int cli_runs_compare(int argc, char **argv);
void cli_runs_manage_help(FILE *out);
as_code cli_store_open_existing(const char *db, store **out, as_status *st);
/* Write an HTML report of data (report.h; consumed) to path, titled
 * title; the error names the file (cmd_report.c). */
as_code cli_write_report(const char *path, const char *title, json_t *data, as_status *st);
/* A stored study's tables (or JSON) on standard output, and its cells as
 * CSV to csv_path when not NULL ("-": standard output, instead of the
 * tables): `study show` and `runs show` of a study. */
as_code cli_study_print_run(store *db, int64_t run_id, bool json, const char *csv_path,
                            as_status *st);
/* A stored study's HTML report at path (`report RUN` of a study run). */
as_code cli_study_report_run(store *db, int64_t run_id, const char *path, as_status *st);

#endif
