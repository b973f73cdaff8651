/*
 * cli.h -- pieces of the accelsearch program shared by its subcommands.
 * Only the CLI prints; the library reports through as_status.
 */
#ifndef AS_CLI_H
#define AS_CLI_H

#include <stdio.h>

#include "mapping/mapping.h"
#include "workload/workload.h"

/* Exit statuses of the program. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

/* The run store that search writes and runs reads, unless --db says
 * otherwise: in the working directory. */
#define CLI_DEFAULT_DB "accelsearch.db"

/* The exit status for a library status: bad input (including unreadable or
 * unwritable files) is 2, the rest 1. */
int cli_exit_for(as_code code);

/* Index of s in the NULL-terminated names, or -1. */
int cli_name_index(const char *s, const char *const *names);
/* A decimal integer >= min, the whole of s; false otherwise. */
bool cli_parse_count(const char *s, int64_t min, int64_t *out);

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
/* "key": value in one call, for the common case of a scalar member. */
void cli_json_string_field(cli_json *j, const char *key, const char *s);
void cli_json_int_field(cli_json *j, const char *key, int64_t v);
void cli_json_double_field(cli_json *j, const char *key, double v);
void cli_json_bool_field(cli_json *j, const char *key, bool v);
/* A shape as an array of integers. */
void cli_json_shape(cli_json *j, const wl_tensor *t);

/* Evaluations and mappings (report.c), shared by eval and map.  dim_names
 * may be NULL (the slots' own names N, G, C, M, P, Q, R, S). */
void cli_print_eval(const arch_spec *a, const map_eval *e);
void cli_json_eval_members(cli_json *j, const arch_spec *a, const map_eval *e);
void cli_print_mapping(const arch_spec *a, const char (*dim_names)[16], const map_mapping *m);
void cli_json_mapping(cli_json *j, const arch_spec *a, const char (*dim_names)[16],
                      const map_mapping *m);

/* Progress on a terminal (progress.c): silent when stderr is not one. */
typedef struct cli_progress {
    const char *label;
    bool enabled;
    int last_percent;
} cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
void cli_progress_update(cli_progress *p, int64_t done, int64_t total);
void cli_progress_end(cli_progress *p);
/* Ctrl-C sets *flag (once; a second Ctrl-C ends the program). */
void cli_catch_interrupt(volatile int *flag);

/* Subcommands: argc/argv start after the subcommand word. */
int cli_zoo(int argc, char **argv);
int cli_model(int argc, char **argv);
int cli_arch(int argc, char **argv);
int cli_eval(int argc, char **argv);
int cli_map(int argc, char **argv);
int cli_fuse(int argc, char **argv);
int cli_runs(int argc, char **argv);
int cli_search(int argc, char **argv);

#endif
