/*
 * main.c -- the accelsearch program: parses the subcommand and hands the
 * rest of the command line to it.
 *
 * Exit status: 0 success, 2 bad input or usage, 1 anything else, 130
 * after Ctrl-C (cli.h).
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
    "  tune --arch vta --model M         tune every conv layer's schedule and VTA++ hardware\n"
    "                                    (dcocomp, autotvm, chameleon)\n"
    "  study FILE.yaml|--default         an across-stack perturbation study (DLAS): models x\n"
    "                                    compression x algorithm x format x software x\n"
    "                                    hardware, with its summary tables; study show RUN\n"
    "  runs list|show|export             read the run store of past searches and tunings\n"
    "  report [RUN] [-o FILE.html]       a search run's self-contained HTML report\n"
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
    "  help COMMAND                      the options of a command\n"
    "\n"
    "run 'accelsearch help <command>' (or <command> --help) for the options of a command.\n";

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

/* The subcommands by their word. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"search", cli_search}, {"tune", cli_tune},   {"study", cli_study},   {"runs", cli_runs},
    {"zoo", cli_zoo},       {"model", cli_model}, {"arch", cli_arch},     {"eval", cli_eval},
    {"map", cli_map},       {"fuse", cli_fuse},   {"report", cli_report},
};
enum { N_COMMANDS = (int)(sizeof commands / sizeof commands[0]) };

/* The command named `word`, or -1. */
static int command_index(const char *word)
{
    for (int k = 0; k < N_COMMANDS; k++)
        if (strcmp(word, commands[k].name) == 0)
            return k;
    return -1;
}

/* "unknown command 'x'", with the nearest command when there is one. */
static int unknown_command(const char *word)
{
    const char *names[N_COMMANDS + 1];
    for (int k = 0; k < N_COMMANDS; k++)
        names[k] = commands[k].name;
    names[N_COMMANDS] = NULL;
    const char *near = cli_nearest_name(word, names);
    fprintf(stderr,
            "accelsearch: unknown command '%s'%s%s%s\nrun 'accelsearch help' for the commands\n",
            word, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
    return CLI_EXIT_USAGE;
}

/* `accelsearch help [COMMAND]`: the program's help, or the command's. */
static int help(int argc, char **argv)
{
    if (argc == 0) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    int k = command_index(argv[0]);
    if (k < 0)
        return unknown_command(argv[0]);
    char *help_arg[] = {"--help", NULL};
    return commands[k].run(1, help_arg);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
        strcmp(command, "help") == 0)
        return help(argc - 2, argv + 2);
    if (strcmp(command, "--version") == 0) {
        printf("accelsearch %s\n", AS_VERSION);
        return CLI_EXIT_OK;
    }
    int k = command_index(command);
    if (k < 0)
        return unknown_command(command);
    return commands[k].run(argc - 2, argv + 2);
}
