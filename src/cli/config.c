/*
 * config.c -- defaults that persist: an optional accelsearch.yaml whose
 * values every command takes as if they were given first on its command
 * line (so that the command line overrides them), and how much the
 * program says on standard error (--quiet, --verbose).
 *
 * The file is the first of: $ACCELSEARCH_CONFIG ("none": no file), an
 * accelsearch.yaml in the working directory, then
 * $XDG_CONFIG_HOME/accelsearch/accelsearch.yaml (~/.config when unset).
 *
 *   db: runs/accelsearch.db   # any command with --db
 *   threads: 2                # any command with --threads
 *   json: true                # any command with --json
 *   quiet: false              # or verbose: true
 *   commands:                 # per command: any of its options by name
 *     search: {map-budget: 2000, algo: mobo}
 *     map: {map-budget: 500}
 *
 * Top-level keys apply to the commands that have the option and are
 * ignored by the others; a key under commands must be an option of that
 * command.  Lists (--model, ...) cannot be set: they are a run's subject,
 * not a preference.  Errors name the file, line and key.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_verbosity;

/* ------------------------------------------------------------ messages */

/* fmt on standard error, after "accelsearch: " and prefix. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
    fprintf(stderr, "accelsearch: %s", prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...)
{
    if (cli_verbosity < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    say("warning: ", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    if (cli_verbosity < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
}

void cli_verbose(const char *fmt, ...)
{
    if (cli_verbosity < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
}

/* --------------------------------------------------------------- the file */

/* The configuration file to read into path (false: none). */
static bool config_path(char *path, size_t size)
{
    const char *env = getenv("ACCELSEARCH_CONFIG");
    if (env && *env) {
        snprintf(path, size, "%s", env);
        return strcmp(env, "none") != 0;
    }
    FILE *f = fopen("accelsearch.yaml", "r");
    if (f) {
        fclose(f);
        snprintf(path, size, "accelsearch.yaml");
        return true;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path, size, "%s/accelsearch/accelsearch.yaml", xdg);
    else if (home && *home)
        snprintf(path, size, "%s/.config/accelsearch/accelsearch.yaml", home);
    else
        return false;
    f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

/* The option of c named name, or NULL. */
static const cli_option *find_option(const cli_command *c, const char *name)
{
    for (int i = 0; i < c->n_options; i++)
        if (!strcmp(c->options[i].name, name))
            return &c->options[i];
    return NULL;
}

/* The document, kept for the life of the program: string options point
 * into it. */
static as_yaml_doc config_doc;
static bool config_loaded;

/* Set option `key` of c to the scalar node v of the file, as the command
 * line would; required: a key the command must have. */
static int apply_value(cli_command *c, const char *key, const as_yaml_node *v, int line,
                       bool required)
{
    char spelt[320];
    snprintf(spelt, sizeof spelt, "%s:%d: %s", config_doc.path, line, key);
    if (!strcmp(key, "quiet") || !strcmp(key, "verbose")) {
        bool on;
        as_status st = {0};
        if (as_yaml_bool(&config_doc, v, key, &on, &st) != AS_OK)
            return cli_fail(c, &st);
        if (on)
            cli_verbosity = key[0] == 'q' ? -1 : 1;
        return CLI_PARSED;
    }
    const cli_option *o = find_option(c, key);
    if (!o)
        return required ? cli_usage_error(c, "%s: '%s' has no option --%s", spelt, c->name, key)
                        : CLI_PARSED;
    if (!v || v->kind != AS_YAML_SCALAR)
        return cli_usage_error(c, "%s: expected a single value", spelt);
    if (o->kind == CLI_LIST)
        return cli_usage_error(c, "%s: --%s lists what a run is about; give it on the command line",
                               spelt, key);
    if (o->kind == CLI_FLAG) {
        bool on;
        as_status st = {0};
        if (as_yaml_bool(&config_doc, v, key, &on, &st) != AS_OK)
            return cli_fail(c, &st);
        if (!on)
            return CLI_PARSED;
    }
    return cli_store_option_value(c, o, spelt, v->scalar);
}

/* The keys of one mapping of the file applied to c. */
static int apply_map(cli_command *c, const as_yaml_node *map, bool required)
{
    int rc = CLI_PARSED;
    for (int i = 0; rc == CLI_PARSED && i < map->n; i++)
        if (strcmp(map->keys[i], "commands") != 0)
            rc = apply_value(c, map->keys[i], map->items[i], map->key_lines[i], required);
    return rc;
}

int cli_config_apply(cli_command *c)
{
    char path[1024];
    if (!config_loaded) {
        if (!config_path(path, sizeof path))
            return CLI_PARSED;
        as_status st = {0};
        if (as_yaml_load(path, &config_doc, &st) != AS_OK)
            return cli_fail(c, &st);
        config_loaded = true;
    }
    const as_yaml_node *root = config_doc.root;
    if (!root)
        return CLI_PARSED;
    if (root->kind != AS_YAML_MAPPING)
        return cli_usage_error(c, "%s:%d: expected a mapping of settings", config_doc.path,
                               root->line);
    static const char *const top_keys[] = {"db",      "threads",  "json", "quiet",
                                           "verbose", "commands", NULL};
    as_status st = {0};
    if (as_yaml_check_keys(&config_doc, root, "accelsearch.yaml", top_keys, &st) != AS_OK)
        return cli_fail(c, &st);
    int rc = apply_map(c, root, false);
    const as_yaml_node *commands = as_yaml_get(root, "commands");
    const as_yaml_node *mine = commands ? as_yaml_get(commands, c->name) : NULL;
    if (rc == CLI_PARSED && mine && mine->kind != AS_YAML_MAPPING)
        return cli_usage_error(c, "%s:%d: commands: %s: expected a mapping of options",
                               config_doc.path, mine->line, c->name);
    if (rc == CLI_PARSED && mine)
        rc = apply_map(c, mine, true);
    return rc;
}

const char *cli_config_file(void)
{
    return config_loaded ? config_doc.path : NULL;
}
