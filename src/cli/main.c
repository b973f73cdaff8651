/*
 * main.c -- the accelsearch program: parses the subcommand and hands the
 * rest of the command line to it.
 *
 * Exit status: 0 success, 2 bad input or usage, 1 anything else.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: accelsearch <command> [options]\n"
    "\n"
    "Full-stack co-design of deep-learning accelerators.\n"
    "\n"
    "commands:\n"
    "  search [options]                  co-design hardware, fusion and mapping for models\n"
    "                                    under a budget: the Pareto front and the pick\n"
    "  runs list|show|export             read the run store of past searches\n"
    "  zoo list [--json]                 list the built-in models\n"
    "  model info MODEL [options]        parameters, MACs, working sets and the loop-nest\n"
    "                                    problem of every layer; MODEL is a zoo name or an\n"
    "                                    .onnx file\n"
    "  model export NAME OUT.onnx        write a zoo model as ONNX (weights stripped)\n"
    "  arch list                         the built-in accelerator presets\n"
    "  arch show PRESET|FILE.yaml        a design's levels, area and peak power\n"
    "  eval INPUT.yaml [ERT [ART]]       evaluate a timeloop-model input's mapping\n"
    "  map INPUT.yaml [ERT [ART]]        the best mapping of a timeloop-mapper input\n"
    "  map --arch A --model M            map every layer of a model on an architecture\n"
    "  fuse --arch A --model M           fuse layers (ga, dp, ilp) against layer by layer\n"
    "\n"
    "run 'accelsearch <command> --help' for the options of a command.\n";

/* A file that cannot be read or written is the user's input too (a wrong
 * path); only exhausted memory and broken invariants are our failures. */
int cli_exit_for(as_code code)
{
    switch (code) {
    case AS_OK:
        return CLI_EXIT_OK;
    case AS_EINVAL:
    case AS_EIO:
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_FAILURE;
    }
}

int cli_name_index(const char *s, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (strcmp(s, names[k]) == 0)
            return k;
    return -1;
}

bool cli_parse_count(const char *s, int64_t min, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("accelsearch %s\n", AS_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(command, "zoo") == 0)
        return cli_zoo(argc - 2, argv + 2);
    if (strcmp(command, "model") == 0)
        return cli_model(argc - 2, argv + 2);
    if (strcmp(command, "arch") == 0)
        return cli_arch(argc - 2, argv + 2);
    if (strcmp(command, "eval") == 0)
        return cli_eval(argc - 2, argv + 2);
    if (strcmp(command, "map") == 0)
        return cli_map(argc - 2, argv + 2);
    if (strcmp(command, "fuse") == 0)
        return cli_fuse(argc - 2, argv + 2);
    if (strcmp(command, "search") == 0)
        return cli_search(argc - 2, argv + 2);
    if (strcmp(command, "runs") == 0)
        return cli_runs(argc - 2, argv + 2);
    fprintf(stderr, "accelsearch: unknown command '%s'\n\n%s", command, usage_text);
    return CLI_EXIT_USAGE;
}
