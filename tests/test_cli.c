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

enum { OUT_BYTES = 1 << 22 };

typedef struct run_result {
    int status;
    char *out; /* stdout */
    char err[4096]; /* stderr */
} run_result;

/* Run `accelsearch ARGS` through the shell, capturing stdout and stderr. */
static void run(run_result *r, const char *args)
{
    char cmd[2048], err_path[512];
    snprintf(err_path, sizeof err_path, "%s/cli_stderr.txt", AS_TEST_TMP_DIR);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>'%s'", AS_CLI_PATH, args, err_path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    r->out = calloc(OUT_BYTES, 1);
    assert_non_null(r->out);
    size_t n = fread(r->out, 1, OUT_BYTES - 1, p);
    r->out[n] = '\0';
    int st = pclose(p);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    FILE *e = fopen(err_path, "r");
    assert_non_null(e);
    n = fread(r->err, 1, sizeof r->err - 1, e);
    r->err[n] = '\0';
    fclose(e);
}

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
    const char *names[] = {"alexnet", "vgg16", "resnet50", "googlenet", "squeezenet1_0",
                           "mobilenet_v1", "efficientnet_b7", "densenet161", "unet", "srgan",
                           "vit_b_16", "bert_base", "gpt2", "mobilenet_v2_cifar"};
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
    const char *bad[] = {"", "frobnicate", "model", "model info", "model info resnet50 --batch 0",
                         "model info resnet50 --precision fp7", "model info resnet50 --bogus",
                         "model info no_such_model", "model export resnet50",
                         "model info resnet50 --prune-density 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r;
        run(&r, bad[i]);
        if (r.status != 2)
            fail_msg("'accelsearch %s' exited %d, want 2", bad[i], r.status);
        assert_true(strlen(r.err) > 0);
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
    struct { const char *name; const void *data; size_t n; } cases[] = {
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_list),
        cmocka_unit_test(test_model_info_json),
        cmocka_unit_test(test_model_info_table),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_export_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
