/*
 * test_cli.c -- the accelsearch program end to end: commands, JSON fields,
 * exit statuses and one-line errors for bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_zoo_list(void **state)
{
    (void)state;
    run_result r;
    run(&r, "zoo list");
    assert_int_equal(r.status, 0);
    const char *names[] = {"alexnet",
                           "vgg16",
                           "resnet50",
                           "googlenet",
                           "squeezenet1_0",
                           "mobilenet_v1",
                           "efficientnet_b7",
                           "densenet161",
                           "unet",
                           "srgan",
                           "vit_b_16",
                           "bert_base",
                           "gpt2",
                           "mobilenet_v2_cifar"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_non_null(strstr(r.out, names[i]));
    free(r.out);
}

static void test_model_info_json(void **state)
{
    (void)state;
    run_result r;
    run(&r, "model info resnet50 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"params\": 25557032,"));
    assert_non_null(strstr(r.out, "\"macs\": 4089184256,"));
    assert_non_null(strstr(r.out, "\"op_intensity_unfused\": "));
    assert_non_null(strstr(r.out, "\"name\": \"layer1.0.conv2\""));
    assert_non_null(strstr(r.out, "\"problem\": {"));
    assert_non_null(strstr(r.out, "\"input_shapes\": ["));
    free(r.out);

    char args[600];
    snprintf(args, sizeof args, "model info '%s/models/resnet50.onnx' --precision bf16 --json",
             AS_TEST_DATA_DIR);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"max_working_set_bytes\": 2408448,"));
    assert_non_null(strstr(r.out, "\"params\": 25530472,"));
    free(r.out);
}

static void test_model_info_table(void **state)
{
    (void)state;
    run_result r;
    run(&r, "model info mobilenet_v2 --batch 2 --fold-bn --precision int8");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "parameters"));
    assert_non_null(strstr(r.out, "601,548,544")); /* 2 x 300,774,272 MACs */
    assert_null(strstr(r.out, "BatchNormalization"));
    free(r.out);
}

static void test_usage_errors(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "frobnicate",
                         "model",
                         "model info",
                         "model info resnet50 --batch 0",
                         "model info resnet50 --precision fp7",
                         "model info resnet50 --bogus",
                         "model info no_such_model",
                         "model export resnet50",
                         "model info resnet50 --prune-density 2"};
    /* What each says, in the same order. */
    const char *message[] = {"usage: accelsearch <command>",
                             "unknown command 'frobnicate'",
                             "model wants info, export or import-topology",
                             "missing MODEL",
                             "--batch wants an integer from 1 to 1048576, got '0'",
                             "--precision wants fp32, fp16, bf16, int8 or mixed, got 'fp7'",
                             "unknown option '--bogus'",
                             "unknown model 'no_such_model'",
                             "missing MODEL or OUT.onnx",
                             "--prune-density wants a number in (0, 1], got '2'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r;
        run(&r, bad[i]);
        if (r.status != 2)
            fail_msg("'accelsearch %s' exited %d, want 2", bad[i], r.status);
        assert_true(strlen(r.err) > 0);
        if (!strstr(r.err, message[i]))
            fail_msg("'accelsearch %s': want '%s' in %s", bad[i], message[i], r.err);
        free(r.out);
    }
}

/* Write n bytes of data to a file under the test directory. */
static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Garbage and truncated files: exit 2, one line naming the file. */
static void test_bad_files(void **state)
{
    (void)state;
    char path[512], src[512], args[600];
    snprintf(src, sizeof src, "%s/models/resnet18.onnx", AS_TEST_DATA_DIR);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static unsigned char model[1 << 16];
    size_t size = fread(model, 1, sizeof model, f);
    fclose(f);
    unsigned char noise[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (unsigned char)(x >> 16);
    }
    struct {
        const char *name;
        const void *data;
        size_t n;
    } cases[] = {
        {"empty.onnx", "", 0},
        {"noise.onnx", noise, sizeof noise},
        {"half.onnx", model, size / 2},
        {"cut.onnx", model, size - 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", AS_TEST_TMP_DIR, cases[i].name);
        write_file(path, cases[i].data, cases[i].n);
        snprintf(args, sizeof args, "model info '%s'", path);
        run_result r;
        run(&r, args);
        if (r.status != 2 || count_lines(r.err) != 1 || !strstr(r.err, cases[i].name))
            fail_msg("%s: exit %d, stderr: %s", cases[i].name, r.status, r.err);
        free(r.out);
    }
    run_result r;
    run(&r, "model info /nonexistent/dir/model.onnx");
    assert_int_equal(r.status, 2);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "/nonexistent/dir/model.onnx"));
    free(r.out);
}

/* A zoo model exported and read back has the same statistics. */
static void test_export_round_trip(void **state)
{
    (void)state;
    char args[600], path[512];
    snprintf(path, sizeof path, "%s/vit_b_16.onnx", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args, "model export vit_b_16 '%s'", path);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);
    snprintf(args, sizeof args, "model info '%s' --json", path);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"params\": 86567656,"));
    char *macs = strstr(r.out, "\"macs\": ");
    assert_non_null(macs);
    long long v = atoll(macs + 8);
    assert_true(v >= 17563500000LL && v < 17564500000LL);
    free(r.out);
}

/* The presets are listed and shown; a bad architecture file is one line
 * naming file, line and key, exit 2. */
static void test_arch_commands(void **state)
{
    (void)state;
    run_result r;
    run(&r, "arch list");
    assert_int_equal(r.status, 0);
    const char *presets[] = {"eyeriss", "shidiannao", "edgetpu", "tpu_v3",
                             "gemmini", "vta",        "simba"};
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        assert_non_null(strstr(r.out, presets[i]));
    free(r.out);
    run(&r, "arch show gemmini");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "peak power (TDP)"));
    assert_non_null(strstr(r.out, "systolic arrays of 16 x 16"));
    free(r.out);
    char args[600];
    snprintf(args, sizeof args, "arch show '%s/arch/bad_unknown_key.yaml'", AS_TEST_DATA_DIR);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "bad_unknown_key.yaml:10: unknown key 'colour'"));
    free(r.out);
    run(&r, "arch show no_such_preset");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "'no_such_preset' is neither a preset"));
    free(r.out);
}

/* Copy file src to dst, replacing the first `from` with `to` (NULL: none). */
static void copy_edited(const char *src, const char *dst, const char *from, const char *to)
{
    static char text[1 << 16];
    FILE *f = fopen(src, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = from ? strstr(text, from) : NULL;
    f = fopen(dst, "w");
    assert_non_null(f);
    if (at) {
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
    } else {
        fputs(text, f);
    }
    fclose(f);
}

/* eval: a Timeloop input gives Timeloop's figures; an invalid mapping and
 * a malformed file exit 2 with one line. */
static void test_eval(void **state)
{
    (void)state;
    char args[1200], dir[512], input[600], edited[600];
    snprintf(dir, sizeof dir, "%s/timeloop/micro_conv1d_1level", AS_TEST_DATA_DIR);
    snprintf(input, sizeof input, "%s/model-input.yaml", dir);
    snprintf(args, sizeof args, "eval '%s' '%s/ERT.yaml' --json --repeat 10", input, dir);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"status\": \"valid\""));
    assert_non_null(strstr(r.out, "\"cycles\": 48,"));
    assert_non_null(strstr(r.out, "\"evaluations_per_second\": "));
    assert_non_null(strstr(r.out, "\"levels\": ["));
    free(r.out);

    /* Factors that miss the bound: rejected at the line of the mapping. */
    snprintf(edited, sizeof edited, "%s/eval_bad_factors.yaml", AS_TEST_TMP_DIR);
    copy_edited(input, edited, "R=3,P=16", "R=3,P=8");
    snprintf(args, sizeof args, "eval '%s' '%s/ERT.yaml'", edited, dir);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "eval_bad_factors.yaml:82: mapping"));
    free(r.out);

    /* A buffer too small for its tiles: a result with a reason, exit 2. */
    snprintf(edited, sizeof edited, "%s/eval_small_buffer.yaml", AS_TEST_TMP_DIR);
    copy_edited(input, edited, "depth: 64", "depth: 8");
    snprintf(args, sizeof args, "eval '%s' '%s/ERT.yaml' --json", edited, dir);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.out, "\"status\": \"tile exceeds capacity\""));
    assert_non_null(strstr(r.err, "tiles 37 words exceed 8"));
    free(r.out);

    snprintf(edited, sizeof edited, "%s/eval_bad_key.yaml", AS_TEST_TMP_DIR);
    copy_edited(input, edited, "\nmapping:", "\nmappings:");
    snprintf(args, sizeof args, "eval '%s'", edited);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "eval_bad_key.yaml:"));
    free(r.out);
}

/* The value after "key": in r's JSON output, as text up to the comma. */
static void json_value(const char *json, const char *key, char *out, size_t size)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *at = strstr(json, pattern);
    assert_non_null(at);
    at += strlen(pattern);
    size_t n = strcspn(at, ",\n");
    assert_true(n < size);
    memcpy(out, at, n);
    out[n] = '\0';
}

/* map on a Timeloop mapper input beats Timeloop's best EDP there, and the
 * mapping it emits re-evaluates to the same numbers with eval. */
static void map_one_case(const char *name, double timeloop_edp)
{
    char dir[512], emit[512], args[4096];
    snprintf(dir, sizeof dir, "%s/timeloop_mapper/%s", AS_TEST_DATA_DIR, name);
    snprintf(emit, sizeof emit, "%s/emitted_%s", AS_TEST_TMP_DIR, name);
    snprintf(args, sizeof args,
             "map '%s/mapper-input.yaml' '%s/ERT.yaml' '%s/ART.yaml' --json --emit-timeloop '%s'",
             dir, dir, dir, emit);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    char cycles[64], energy[64], edp[64];
    json_value(r.out, "cycles", cycles, sizeof cycles);
    json_value(r.out, "energy_pJ", energy, sizeof energy);
    json_value(r.out, "edp_J_cycle", edp, sizeof edp);
    if (atof(edp) > timeloop_edp)
        fail_msg("%s: EDP %s, timeloop-mapper found %.8g", name, edp, timeloop_edp);
    assert_non_null(strstr(r.out, "\"mapping\": ["));
    assert_non_null(strstr(r.out, "\"mappings_evaluated\": "));
    free(r.out);

    snprintf(args, sizeof args,
             "eval '%s/conv2D.yaml' '%s/conv2D.ERT.yaml' '%s/conv2D.ART.yaml' --json", emit, emit,
             emit);
    run(&r, args);
    assert_int_equal(r.status, 0);
    char again[64];
    json_value(r.out, "cycles", again, sizeof again);
    assert_string_equal(again, cycles);
    json_value(r.out, "energy_pJ", again, sizeof again);
    assert_string_equal(again, energy);
    free(r.out);
}

/* Every timeloop-mapper reference case, with its own settings (search size,
 * random-pruned) and constraints. */
static void test_map_single_problem(void **state)
{
    (void)state;
    map_one_case("eyeriss_like", 305.92);
    map_one_case("simba_like", 1253.89);
    map_one_case("simple_output_stationary", 8702.50);
    map_one_case("simple_weight_stationary", 7000.60);
}

/* map on a whole model: totals and layers; bad combinations exit 2. */
static void test_map_network(void **state)
{
    (void)state;
    run_result r;
    run(&r, "map --arch gemmini --model resnet18 --budget 300 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"totals\": {"));
    assert_non_null(strstr(r.out, "\"latency_s\": "));
    assert_non_null(strstr(r.out, "\"dram_bytes\": "));
    assert_non_null(strstr(r.out, "\"name\": \"layer1.0.conv1\""));
    free(r.out);
    /* Each distinct problem emitted as a Timeloop input that eval accepts. */
    char args[2048], emit[512];
    snprintf(emit, sizeof emit, "%s/emitted_resnet18", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args,
             "map --arch eyeriss --model resnet18 --budget 300 --emit-timeloop '%s'", emit);
    run(&r, args);
    assert_int_equal(r.status, 0);
    free(r.out);
    snprintf(args, sizeof args,
             "eval '%s/layer1.0.conv1.yaml' '%s/layer1.0.conv1.ERT.yaml' "
             "'%s/layer1.0.conv1.ART.yaml' --json",
             emit, emit, emit);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"status\": \"valid\""));
    free(r.out);

    const char *bad[] = {"map",
                         "map --arch eyeriss",
                         "map --arch no_such_arch --model resnet18",
                         "map --arch gemmini --model resnet18 --emit-timeloop /tmp/x",
                         "map --arch eyeriss --model resnet18 --objective speed",
                         "map --arch eyeriss --model resnet18 --threads 0"};
    const char *message[] = {"give either INPUT.yaml or both --arch and --model",
                             "give either INPUT.yaml or both --arch and --model",
                             "'no_such_arch' is neither a preset",
                             "--emit-timeloop: gemmini computes with systolic arrays",
                             "--objective wants edp, energy or latency, got 'speed'",
                             "--threads wants an integer from 1 to 1024, got '0'"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, bad[i]);
        if (r.status != 2)
            fail_msg("'accelsearch %s' exited %d, want 2", bad[i], r.status);
        if (!strstr(r.err, message[i]))
            fail_msg("'accelsearch %s': want '%s' in %s", bad[i], message[i], r.err);
        free(r.out);
    }
}

/* Ctrl-C during a long network mapping: the program stops soon, exits 130
 * (128 + SIGINT) and prints what it found, marked as interrupted. */
static void test_map_interrupted(void **state)
{
    (void)state;
    char cmd[2048], out_path[512];
    snprintf(out_path, sizeof out_path, "%s/interrupted.json", AS_TEST_TMP_DIR);
    snprintf(cmd, sizeof cmd,
             "'%s' map --arch eyeriss --model efficientnet_b7 --json > '%s' 2>/dev/null & "
             "pid=$!; sleep 0.5; kill -INT $pid; wait $pid",
             AS_CLI_PATH, out_path);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    FILE *f = fopen(out_path, "r");
    assert_non_null(f);
    static char json[1 << 22];
    size_t n = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[n] = '\0';
    assert_non_null(strstr(json, "\"interrupted\": true"));
    assert_non_null(strstr(json, "\"totals\": {"));
    assert_non_null(strstr(json, "\"mapped\": false"));
}

/* fuse: every algorithm runs; the chosen plan is never worse than layer by
 * layer on its objective; bad options exit 2. */
static void test_fuse(void **state)
{
    (void)state;
    const char *runs[] = {
        "fuse --arch gemmini --model alexnet --algo dp --objective edp --mapper-budget 128 --json",
        "fuse --arch eyeriss --model resnet18 --algo ga --objective edp --budget 300 "
        "--mapper-budget 64 --json",
        "fuse --arch eyeriss --model alexnet --algo ilp --objective edp --mapper-budget 64 --json",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        run_result r;
        run(&r, runs[i]);
        if (r.status != 0)
            fail_msg("'accelsearch %s' exited %d: %s", runs[i], r.status, r.err);
        char *totals = strstr(r.out, "\"totals\": {"), *base = strstr(r.out, "\"baseline\": {");
        assert_non_null(totals);
        assert_non_null(base);
        char fused_edp[64], base_edp[64];
        json_value(totals, "edp_J_cycle", fused_edp, sizeof fused_edp);
        json_value(base, "edp_J_cycle", base_edp, sizeof base_edp);
        assert_true(atof(fused_edp) <= atof(base_edp));
        assert_non_null(strstr(r.out, "\"groups\": ["));
        assert_non_null(strstr(r.out, "\"onchip_bytes\": "));
        free(r.out);
    }
    const char *bad[] = {"fuse", "fuse --arch eyeriss",
                         "fuse --arch eyeriss --model alexnet --algo magic",
                         "fuse --arch eyeriss --model alexnet --budget 0"};
    const char *message[] = {"fuse needs --arch and --model", "fuse needs --arch and --model",
                             "--algo wants none, ga, dp, ilp or fadiff, got 'magic'",
                             "--budget wants an integer from 1 to"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r;
        run(&r, bad[i]);
        if (r.status != 2)
            fail_msg("'accelsearch %s' exited %d, want 2", bad[i], r.status);
        if (!strstr(r.err, message[i]))
            fail_msg("'accelsearch %s': want '%s' in %s", bad[i], message[i], r.err);
        free(r.out);
    }
}

/* fp32 tensors on Eyeriss's 16-bit words: map and fuse say the same one
 * line about the conversion (AlexNet: five convolutions, three Gemms), and
 * neither says it at fp16. */
static void test_narrowing_warning(void **state)
{
    (void)state;
    const char *want = "accelsearch: warning: 8 layers keep 32-bit tensors in 16-bit words on "
                       "chip: narrowed to the words there, 32 bits in DRAM";
    const char *runs[] = {"map --arch eyeriss --model alexnet --map-budget 64 --json",
                          "fuse --arch eyeriss --model alexnet --algo none --map-budget 64 --json"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[256];
        for (int fp16 = 0; fp16 < 2; fp16++) {
            snprintf(args, sizeof args, "%s%s", runs[i], fp16 ? " --precision fp16" : "");
            run_result r;
            run(&r, args);
            if (r.status != 0)
                fail_msg("'accelsearch %s' exited %d: %s", args, r.status, r.err);
            if (fp16 ? strstr(r.err, "warning") != NULL : strstr(r.err, want) == NULL)
                fail_msg("'accelsearch %s': stderr %s", args, r.err);
            free(r.out);
        }
    }
}

/* The "totals" object of map's or fuse's JSON, as text (caller frees). */
static char *totals_text(const char *json)
{
    const char *from = strstr(json, "\"totals\"");
    assert_non_null(from);
    const char *to = strchr(from, '}');
    assert_non_null(to);
    char *text = calloc((size_t)(to - from) + 2, 1);
    assert_non_null(text);
    memcpy(text, from, (size_t)(to - from) + 1);
    return text;
}

/* map and fuse run an architecture file at its native_batch when --batch
 * is not given (fast_template.yaml: 8), as `search --emit-arch` designs
 * need: the same totals as --batch 8, not those of batch 1. */
static void test_native_batch(void **state)
{
    (void)state;
    const char *commands[] = {"map --map-budget 8", "fuse --algo none --mapper-budget 8"};
    for (size_t i = 0; i < 2; i++) {
        char *totals[3];
        const char *batch[] = {"", "--batch 8", "--batch 1"};
        for (size_t b = 0; b < 3; b++) {
            char args[1024];
            snprintf(args, sizeof args,
                     "%s --arch '%s/arch/fast_template.yaml' --model alexnet --precision bf16 "
                     "--threads 1 --json %s",
                     commands[i], AS_TEST_DATA_DIR, batch[b]);
            run_result r;
            run(&r, args);
            if (r.status != 0)
                fail_msg("'%s' exited %d: %s", args, r.status, r.err);
            totals[b] = totals_text(r.out);
            free(r.out);
        }
        assert_string_equal(totals[0], totals[1]);
        assert_true(strcmp(totals[0], totals[2]) != 0);
        for (size_t b = 0; b < 3; b++)
            free(totals[b]);
    }
    run_result r;
    run(&r, "map --help");
    assert_non_null(strstr(r.out, "native_batch"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_list),           cmocka_unit_test(test_model_info_json),
        cmocka_unit_test(test_model_info_table),   cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_bad_files),          cmocka_unit_test(test_export_round_trip),
        cmocka_unit_test(test_arch_commands),      cmocka_unit_test(test_eval),
        cmocka_unit_test(test_map_single_problem), cmocka_unit_test(test_map_network),
        cmocka_unit_test(test_map_interrupted),    cmocka_unit_test(test_fuse),
        cmocka_unit_test(test_narrowing_warning),  cmocka_unit_test(test_native_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
