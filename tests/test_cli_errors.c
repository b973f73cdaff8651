/*
 * test_cli_errors.c -- the command line's mistakes, one table: each
 * command is run and its exit status and a piece of its message checked.
 * Mistakes fail before any work, so the whole table runs in seconds.
 * Also: --opt=value on every subcommand, help on every subcommand, JSON
 * error objects, old spellings that give the same results as the new, and
 * --allow-unknown-ops on every command that loads a model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"

#define TL_INPUT AS_TEST_DATA_DIR "/timeloop/micro_conv1d_1level/model-input.yaml"
#define TL_ERT AS_TEST_DATA_DIR "/timeloop/micro_conv1d_1level/ERT.yaml"
#define AN_ARCH AS_TEST_DATA_DIR "/arch/bad_clock_both.yaml"
#define NO_DB AS_TEST_TMP_DIR "/cli_errors_nothing_here.db"
/* How every --threads is described. */
#define CLI_THREADS_TEXT                                                                           \
    "--threads N             threads (default: the number of cores); results do not depend on it"

/* Where the expected text is: standard error or standard output. */
typedef enum stream { ERR, OUT } stream;

typedef struct cli_case {
    const char *args; /* after "accelsearch" */
    int status;
    stream where;
    const char *text; /* a piece of the message */
} cli_case;

static const cli_case cases[] = {
    /* unknown commands and options, with "did you mean" */
    {"frobnicate", 2, ERR, "unknown command 'frobnicate'"},
    {"maps --arch eyeriss", 2, ERR, "unknown command 'maps'; did you mean map?"},
    {"help nosuch", 2, ERR, "unknown command 'nosuch'"},
    {"map --arch eyeriss --model alexnet --bugdet 3", 2, ERR,
     "unknown option '--bugdet'; did you mean --map-budget?"},
    {"fuse --arch eyeriss --model alexnet --objectiv edp", 2, ERR,
     "unknown option '--objectiv'; did you mean --objective?"},
    {"search --treads 2", 2, ERR, "unknown option '--treads'; did you mean --threads?"},
    {"eval " TL_INPUT " --jsno", 2, ERR, "unknown option '--jsno'; did you mean --json?"},
    {"map --thread 2 --arch eyeriss --model alexnet", 2, ERR,
     "unknown option '--thread'; did you mean --threads?"},
    {"map --arch eyeriss --model alexnet --frob", 2, ERR, "unknown option '--frob'"},
    {"runs list --format csv --db " NO_DB, 2, ERR, "unknown option '--format'"},
    {"zoo list --bogus", 2, ERR, "unknown option '--bogus'"},
    {"model info alexnet --xyzzy", 2, ERR, "run 'accelsearch help model' for its options"},
    {"arch show eyeriss --verbos", 2, ERR, "accelsearch arch show: unknown option '--verbos'"},
    {"runs lst", 2, ERR,
     "runs wants list, show, export, resume, delete or compare 'lst'; did you mean list?"},
    {"model", 2, ERR, "model wants info, export or import-topology"},
    {"zoo list --json=yes", 2, ERR, "option '--json' takes no value"},
    /* integers: overflow, range, zero, negative, not a number */
    {"map --arch eyeriss --model alexnet --seed 99999999999999999999999", 2, ERR,
     "--seed wants an integer from 0 to 9223372036854775807, got '99999999999999999999999'"},
    {"eval " TL_INPUT " --repeat 99999999999999999999", 2, ERR,
     "--repeat wants an integer from 1 to 100000000"},
    {"search --hw-budget 99999999999999999999", 2, ERR, "--hw-budget wants an integer from 1 to"},
    {"fuse --arch eyeriss --model alexnet --plan-budget 1e3", 2, ERR,
     "--plan-budget wants an integer from 1 to"},
    {"map --arch eyeriss --model alexnet --threads 0", 2, ERR,
     "--threads wants an integer from 1 to 1024, got '0'"},
    {"search --batch 100", 2, ERR, "--batch wants an integer from 1 to 64, got '100'"},
    {"model info alexnet --batch -1", 2, ERR, "--batch wants an integer from 1 to"},
    {"fuse --arch eyeriss --model alexnet --map-budget 0", 2, ERR,
     "--map-budget wants an integer from 1 to"},
    {"search --sh-rounds 0", 2, ERR, "--sh-rounds wants an integer from 1 to 8"},
    {"runs show 0 --db " NO_DB, 2, ERR, "RUN wants a run id (a positive integer), got '0'"},
    {"model info alexnet --prune-density 0", 2, ERR, "--prune-density wants a number in (0, 1]"},
    {"fuse --arch eyeriss --model alexnet --time-limit -1", 2, ERR,
     "--time-limit wants a number in (0,"},
    /* missing values */
    {"runs list --db", 2, ERR, "option needs a value: '--db'"},
    {"map --arch eyeriss --model", 2, ERR, "option needs a value: '--model'"},
    {"search --seed", 2, ERR, "option needs a value: '--seed'"},
    {"eval " TL_INPUT " --repeat", 2, ERR, "option needs a value: '--repeat'"},
    {"map --arch eyeriss --model alexnet --thread", 2, ERR,
     "unknown option '--thread'; did you mean --threads?"},
    {"model info", 2, ERR, "missing MODEL"},
    {"model export alexnet", 2, ERR, "missing MODEL or OUT.onnx"},
    {"eval", 2, ERR, "missing INPUT.yaml"},
    {"arch show", 2, ERR, "missing PRESET or FILE.yaml"},
    /* --opt=value on every subcommand that takes values */
    {"model info alexnet --batch=2 --precision=int8", 0, OUT, "int8"},
    {"eval " TL_INPUT " --repeat=2 --json", 0, OUT, "\"evaluations_per_second\": "},
    {"runs list --db=" NO_DB, 2, ERR, NO_DB},
    {"map --arch=eyeriss --model=alexnet --layer=features.0 --map-budget=20 --precision=fp16 "
     "--json",
     0, OUT, "\"totals\": {"},
    {"fuse --arch=eyeriss --model=alexnet --algo=none --map-budget=20 --precision=fp16 --json", 0,
     OUT, "\"baseline\": {"},
    {"search --hw-budget=0", 2, ERR, "--hw-budget wants an integer from 1 to 1000000, got '0'"},
    {"arch show --json eyeriss", 0, OUT, "\"peak_power_W\": "},
    {"zoo list --json", 0, OUT, "\"family\": "},
    /* the wrong kind of file */
    {"eval " AS_TEST_DATA_DIR "/models/resnet18.onnx", 2, ERR,
     "is an ONNX model; eval reads a timeloop-model input"},
    {"map " AS_TEST_DATA_DIR "/models/resnet18.onnx", 2, ERR,
     "is an ONNX model: give it as --model"},
    /* a Timeloop file is a design (issue 17): read, then too small for alexnet */
    {"map --arch " TL_INPUT " --model alexnet --layer features.0 --map-budget 50", 2, ERR,
     "no valid mapping on PE_top_level"},
    {"eval " AN_ARCH, 2, ERR, "in model input"},
    {"fuse --arch eyeriss --model " TL_INPUT, 2, ERR, "not an ONNX model"},
    {"search --space " TL_INPUT, 2, ERR, "in the design space"},
    {"map --arch no_such_arch --model alexnet", 2, ERR, "no_such_arch"},
    /* --dim: values of an ONNX file's symbolic dims; a name no input has,
     * or no NAME=N, is refused (a misspelt name would cost the wrong size) */
    {"model info --help", 0, OUT, "--dim NAME=N[,...]"},
    {"model info " AS_TEST_DATA_DIR "/models/gpt2_hf.dynamic.onnx --dim seq=128", 2, ERR,
     "no graph input has a symbolic dimension 'seq'"},
    {"model info " AS_TEST_DATA_DIR "/models/gpt2_hf.dynamic.onnx --dim sequence=0", 2, ERR,
     "'sequence=0' is not NAME=N"},
    {"model info " AS_TEST_DATA_DIR "/models/gpt2_hf.dynamic.onnx --dim batch=1,sequence=128", 0,
     OUT, "16,114,089,984"},
    {"model info no_such_model", 2, ERR, "no_such_model"},
    /* conflicting or incomplete combinations */
    {"search --no-db --db x.db", 2, ERR, "--no-db and --db 'x.db' conflict"},
    {"search --no-db --resume", 2, ERR, "--resume needs the store; drop '--no-db'"},
    {"map " TL_INPUT " --arch eyeriss --model alexnet", 2, ERR,
     "give either INPUT.yaml or both --arch and --model"},
    {"map --arch eyeriss", 2, ERR, "give either INPUT.yaml or both --arch and --model"},
    {"fuse --model alexnet", 2, ERR, "fuse needs --arch and --model"},
    {"runs export 1 --db " NO_DB, 2, ERR, "export needs --format"},
    /* duplicate objectives and bad choices */
    {"search --objectives latency,latency", 2, ERR, "--objectives names 'latency' twice"},
    {"search --objectives latency,speed", 2, ERR, "--objectives wants up to 4 of latency"},
    {"search --objectives latency,energy,area,edp,perf_per_tdp", 2, ERR,
     "--objectives wants at most 4 objectives"},
    {"map --arch eyeriss --model alexnet --algo magic", 2, ERR,
     "--algo wants heuristic, random, exhaustive or fadiff, got 'magic'"},
    {"fuse --arch eyeriss --model alexnet --objective speed", 2, ERR,
     "--objective wants casco, edp, energy or latency, got 'speed'"},
    {"search --aggregate mean", 2, ERR, "--aggregate wants geomean or sum, got 'mean'"},
    {"search --algo nope", 2, ERR, "--algo wants casco, mobo, bo, lcs, ga, random or hasco"},
    {"model info alexnet --precision fp7", 2, ERR,
     "--precision wants fp32, fp16, bf16, int8 or mixed, got 'fp7'"},
    /* extra positional arguments */
    {"arch show eyeriss gemmini", 2, ERR, "unexpected argument 'gemmini'"},
    {"zoo list extra", 2, ERR, "unexpected argument 'extra'"},
    {"model info alexnet vgg16", 2, ERR, "unexpected argument 'vgg16'"},
    {"search resnet18", 2, ERR, "unexpected argument 'resnet18'"},
    {"eval a.yaml b.yaml c.yaml d.yaml", 2, ERR, "unexpected argument 'd.yaml'"},
    {"arch list presets", 2, ERR, "unexpected argument 'presets'"},
    /* help on every subcommand: exit 0, usage on standard output */
    {"help", 0, OUT, "usage: accelsearch <command>"},
    {"--help", 0, OUT, "help COMMAND"},
    {"help map", 0, OUT, "usage: accelsearch map INPUT.yaml"},
    {"map --help", 0, OUT, "--map-budget N"},
    {"help fuse", 0, OUT, "(deprecated spelling: --mapper-budget)"},
    {"fuse -h", 0, OUT, "usage: accelsearch fuse --arch"},
    {"search --help", 0, OUT, "(deprecated spelling: --sw-budget)"},
    {"help search", 0, OUT, "--hw-budget N"},
    {"eval --help", 0, OUT, "usage: accelsearch eval INPUT.yaml"},
    {"help eval", 0, OUT, "--repeat N"},
    {"model --help", 0, OUT, "usage: accelsearch model export"},
    {"model info --help", 0, OUT, "--allow-unknown-ops"},
    {"model export -h", 0, OUT, "usage: accelsearch model export MODEL OUT.onnx"},
    {"help model", 0, OUT, "usage: accelsearch model info"},
    {"arch --help", 0, OUT, "usage: accelsearch arch show"},
    {"help arch", 0, OUT, "usage: accelsearch arch list"},
    {"arch show --help", 0, OUT, "--json"},
    {"zoo --help", 0, OUT, "usage: accelsearch zoo list"},
    {"help zoo", 0, OUT, "usage: accelsearch zoo list"},
    {"runs --help", 0, OUT, "usage: accelsearch runs export"},
    {"help runs", 0, OUT, "-o, --output FILE"},
    {"runs export --help", 0, OUT, "--format json|csv"},
    /* the same threads default in every help */
    {"help map", 0, OUT, CLI_THREADS_TEXT},
    {"help fuse", 0, OUT, CLI_THREADS_TEXT},
    {"help search", 0, OUT, CLI_THREADS_TEXT},
    /* --json: errors as a JSON object on standard output too */
    {"fuse --json --algo magic", 2, OUT, "\"code\": \"usage\""},
    {"fuse --algo magic --json", 2, ERR, "--algo wants none, ga, dp, ilp or fadiff"},
    {"map --arch gemmini --model resnet18 --time 5", 2, ERR, "--time bounds --algo fadiff"},
    {"fuse --arch gemmini --model resnet18 --algo fadiff --map-budget 5", 2, ERR,
     "--algo fadiff finds the mappings itself"},
    {"map --arch no_such_arch --model alexnet --json", 2, OUT, "\"code\": \"invalid_input\""},
    {"runs list --json --db " NO_DB, 2, OUT, "\"code\": \"io\""},
    {"arch show no_such_preset --json", 2, OUT, "\"error\": {"},
    {"search --json --objectives energy,energy", 2, OUT,
     "\"message\": \"--objectives names 'energy' twice in 'energy,energy'\""},
};

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Every case: its status, its text where it should be; a mistake is at
 * most two lines on standard error (the message and where to get help). */
static void test_table(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cli_case *c = &cases[i];
        run_result r;
        run(&r, c->args);
        const char *text = c->where == ERR ? r.err : r.out;
        bool ok = r.status == c->status && strstr(text, c->text) != NULL;
        if (c->status != 0)
            ok = ok && count_lines(r.err) >= 1 && count_lines(r.err) <= 2;
        if (c->status == 0 && c->where == OUT)
            ok = ok && r.err[0] == '\0';
        if (!ok) {
            print_error("'accelsearch %s': exit %d (want %d), want \"%s\" in %s\nstderr: %s\n",
                        c->args, r.status, c->status, c->text,
                        c->where == ERR ? "stderr" : "stdout", r.err);
            failures++;
        }
        free(r.out);
    }
    assert_int_equal(failures, 0);
    assert_true(sizeof cases / sizeof cases[0] >= 40);
}

/* The output without its "seconds" members (wall-clock time). */
static void drop_seconds(char *json)
{
    char *at;
    while ((at = strstr(json, "\"seconds\": "))) {
        char *end = at + strcspn(at, ",\n");
        memmove(at, end, strlen(end) + 1);
    }
}

/* Old spellings are aliases: the same command gives the same result. */
static void test_old_spellings(void **state)
{
    (void)state;
    const char *pairs[][2] = {
        {"map --arch eyeriss --model alexnet --layer features.0 --algorithm random --budget 300 "
         "--seed 2 --json",
         "map --arch eyeriss --model alexnet --layer features.0 --algo random --map-budget 300 "
         "--seed 2 --json"},
        {"fuse --arch eyeriss --model alexnet --algo ga --budget 40 --mapper-budget 16 --json",
         "fuse --arch eyeriss --model alexnet --algo ga --plan-budget 40 --time-limit 40 "
         "--map-budget 16 --json"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        run_result old, now;
        run(&old, pairs[i][0]);
        run(&now, pairs[i][1]);
        assert_int_equal(old.status, 0);
        assert_int_equal(now.status, 0);
        drop_seconds(old.out);
        drop_seconds(now.out);
        assert_string_equal(old.out, now.out);
        free(old.out);
        free(now.out);
    }
}

/* A model whose Relu nodes are renamed to an op type nobody knows. */
static void write_unknown_op_model(const char *path)
{
    char args[600];
    snprintf(args, sizeof args, "model export alexnet '%s'", path);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);
    static char bytes[1 << 20];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    for (size_t i = 0; i + 4 <= n; i++)
        if (memcmp(bytes + i, "Relu", 4) == 0)
            bytes[i + 3] = 'x'; /* same length: the protobuf stays valid */
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* --allow-unknown-ops: refused without it by model, map, fuse and search
 * alike, accepted with it by all four, warned once per op type. */
static void test_allow_unknown_ops(void **state)
{
    (void)state;
    char path[512], args[1200];
    snprintf(path, sizeof path, "%s/cli_errors_unknown_op.onnx", AS_TEST_TMP_DIR);
    write_unknown_op_model(path);
    /* Each command: what comes before the model's path, and after it. */
    const char *commands[][2] = {
        {"model info", ""},
        {"map --arch eyeriss --model", "--layer features.0 --map-budget 20 --precision fp16"},
        {"fuse --arch eyeriss --model", "--algo none --map-budget 20 --precision fp16"},
        {"search --model", "--hw-budget 1 --batch 1 --plan-budget 8 --sh-rounds 1 --map-budget 1 "
                           "--no-db"},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        run_result r;
        snprintf(args, sizeof args, "%s '%s' %s", commands[i][0], path, commands[i][1]);
        run(&r, args);
        if (r.status != 2 || !strstr(r.err, "unknown op type 'Relx'") ||
            !strstr(r.err, "--allow-unknown-ops"))
            fail_msg("'%s': exit %d, stderr %s", args, r.status, r.err);
        free(r.out);
        snprintf(args, sizeof args, "%s '%s' %s --allow-unknown-ops", commands[i][0], path,
                 commands[i][1]);
        run(&r, args);
        if (r.status != 0)
            fail_msg("'%s': exit %d, stderr %s", args, r.status, r.err);
        { /* the model's warning, once */
            const char *warning = "unknown op type 'Relx' costed as zero (7 nodes";
            char *first = strstr(r.err, warning);
            if (!first || strstr(first + 1, warning) || count_lines(r.err) != 1)
                fail_msg("'%s': want one warning, stderr %s", args, r.err);
        }
        free(r.out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_old_spellings),
        cmocka_unit_test(test_allow_unknown_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
