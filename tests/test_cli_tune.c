/*
 * test_cli_tune.c -- `accelsearch tune` end to end: a small run of each
 * engine succeeds and prints every distinct VTA conv layer of the model
 * (as tn_model_layers lists them) with its configuration; --json parses
 * and says what the text says; the same seed gives the same JSON at one
 * and two threads; the run store holds the run and one row per layer,
 * which `runs list` and `runs show` show; Ctrl-C keeps what was found
 * (exit 130); bad inputs exit 2 with a message that says what is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "store/store.h"
#include "tune/tune.h"

#include "cli_run.h"
#include "stored_rows.h"
#include "truth.h"

#define SMALL "tune --arch vta --model resnet18 --trials 40 --seed 5"

static const char *const engines[] = {"dcocomp", "autotvm", "chameleon"};

/* Run `accelsearch ARGS` (ARGS from fmt). */
static void runf(run_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void runf(run_result *r, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    run(r, args);
}

static void expect_in(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("expected '%s' in:\n%s", what, text);
}

/* A fresh store path in the test directory (any old store removed). */
static void db_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", AS_TEST_TMP_DIR, name);
    remove_store(buf);
}

/* The distinct VTA conv layers of resnet18, as the library lists them. */
static tn_conv *resnet18_layers(int *n, int *skipped)
{
    wl_graph *g = truth_build_zoo("resnet18");
    tn_conv *layers;
    as_status st;
    if (tn_model_layers(g, &layers, n, skipped, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph_free(g);
    assert_true(*n > 0);
    return layers;
}

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *v = json_loads(text, 0, &error);
    if (!v)
        fail_msg("not JSON (line %d: %s):\n%s", error.line, error.text, text);
    return v;
}

/* v without its wall-clock members ("wall_seconds", at any depth): what
 * two runs of one seed must agree on. */
static void drop_wall_times(json_t *v)
{
    if (json_is_object(v)) {
        json_object_del(v, "wall_seconds");
        const char *key;
        json_t *member;
        json_object_foreach(v, key, member)
        {
            drop_wall_times(member);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
            drop_wall_times(item);
        }
    }
}

/* The line of text that names layer `name` in the per-layer table. */
static const char *layer_line(const char *text, const char *name)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, "  %s ", name);
    const char *p = strstr(text, pattern);
    if (!p)
        fail_msg("no row for layer '%s' in:\n%s", name, text);
    return p;
}

/* Each engine: exit 0, a row per distinct layer with its count, and the
 * JSON of the same run lists the same layers with the figures the text
 * prints (GFLOPS and latency per layer, the model's GFLOPS). */
static void test_each_engine_text_and_json(void **state)
{
    (void)state;
    int n, skipped;
    tn_conv *layers = resnet18_layers(&n, &skipped);
    for (size_t e = 0; e < sizeof engines / sizeof engines[0]; e++) {
        run_result text, js;
        runf(&text, SMALL " --engine %s --threads 2 --no-db", engines[e]);
        if (text.status != 0)
            fail_msg("%s: exit %d: %s", engines[e], text.status, text.err);
        runf(&js, SMALL " --engine %s --threads 2 --no-db --json", engines[e]);
        assert_int_equal(js.status, 0);
        expect_in(text.out, engines[e]);
        json_t *root = parse(js.out);
        assert_string_equal(json_string_value(json_object_get(root, "engine")), engines[e]);
        const json_t *jl = json_object_get(root, "layers");
        assert_int_equal(json_array_size(jl), (size_t)n);
        int valid = 0;
        for (int i = 0; i < n; i++) {
            const json_t *l = json_array_get(jl, (size_t)i);
            assert_string_equal(json_string_value(json_object_get(l, "name")), layers[i].name);
            assert_int_equal(json_integer_value(json_object_get(l, "count")), layers[i].count);
            assert_int_equal(json_integer_value(json_object_get(l, "trials")), 40);
            const json_t *best = json_object_get(l, "best");
            const json_t *fallback = json_object_get(l, "fallback");
            const char *runs_at = json_string_value(json_object_get(l, "runs_at"));
            const char *line = layer_line(text.out, layers[i].name);
            const char *eol = strchr(line, '\n');
            /* It runs at its best, else at TVM's fallback, as the text says. */
            const json_t *at = !json_is_null(best) ? best : fallback;
            assert_string_equal(runs_at, !json_is_null(best)       ? "best"
                                         : !json_is_null(fallback) ? "fallback"
                                                                   : "none");
            const char *none = strstr(line, "no valid configuration in 40 trials");
            assert_true(json_is_null(best) == (none && none < eol));
            if (json_is_null(at))
                continue;
            valid++;
            if (!json_is_null(best)) {
                json_int_t to_95 = json_integer_value(json_object_get(l, "trials_to_95"));
                assert_true(to_95 >= 1 && to_95 <= 40);
            }
            const json_t *knobs = json_object_get(at, "knobs");
            assert_int_equal(json_object_size(knobs), 7);
            assert_int_equal(json_object_size(json_object_get(at, "hardware")), 6);
            if (!json_is_null(fallback)) { /* the speedup over TVM's fallback */
                char ratio[32];
                snprintf(ratio, sizeof ratio, " %.2f ",
                         json_number_value(json_object_get(at, "gflops")) /
                             json_number_value(json_object_get(fallback, "gflops")));
                const char *found = strstr(line, ratio);
                if (!found || found > eol)
                    fail_msg("%s: row of %s lacks the speedup%s", engines[e], layers[i].name,
                             ratio);
            }
            /* The text's row: the figures to the digits it prints. */
            char expect[64];
            snprintf(expect, sizeof expect, " %.2f ",
                     json_number_value(json_object_get(at, "gflops")));
            const char *found = strstr(line, expect);
            if (!found || found > eol)
                fail_msg("%s: row of %s lacks%s:\n%.*s", engines[e], layers[i].name, expect,
                         (int)(eol - line), line);
            snprintf(expect, sizeof expect, " %.2f ",
                     json_number_value(json_object_get(at, "latency_s")) * 1e6);
            found = strstr(line, expect);
            if (!found || found > eol)
                fail_msg("%s: row of %s lacks latency%s", engines[e], layers[i].name, expect);
            snprintf(expect, sizeof expect, "h%lld w%lld",
                     (long long)json_integer_value(json_object_get(knobs, "tile_h")),
                     (long long)json_integer_value(json_object_get(knobs, "tile_w")));
            found = strstr(line, expect);
            if (!found || found > eol)
                fail_msg("%s: row of %s lacks knobs '%s'", engines[e], layers[i].name, expect);
        }
        assert_true(valid > 0);
        const json_t *m = json_object_get(root, "model_result");
        assert_int_equal(json_integer_value(json_object_get(m, "distinct_layers")), valid);
        char expect[96];
        snprintf(expect, sizeof expect, "model: %.2f GFLOPS",
                 json_number_value(json_object_get(m, "gflops")));
        expect_in(text.out, expect);
        snprintf(expect, sizeof expect, "%d conv left on the host", skipped);
        expect_in(text.out, expect);
        assert_int_equal(json_integer_value(json_object_get(m, "host_layers")), skipped);
        assert_true(json_number_value(json_object_get(m, "gflops")) > 0);
        assert_true(json_number_value(json_object_get(m, "energy_pJ")) > 0);
        expect_in(text.out, "wall time: ");
        json_decref(root);
        free(text.out);
        free(js.out);
    }
    free(layers);
}

/* One seed, one result, whatever the thread count. */
static void test_same_seed_any_threads(void **state)
{
    (void)state;
    for (size_t e = 0; e < sizeof engines / sizeof engines[0]; e++) {
        run_result one, two;
        runf(&one, SMALL " --engine %s --threads 1 --no-db --json", engines[e]);
        runf(&two, SMALL " --engine %s --threads 2 --no-db --json", engines[e]);
        assert_int_equal(one.status, 0);
        assert_int_equal(two.status, 0);
        json_t *a = parse(one.out), *b = parse(two.out);
        drop_wall_times(a);
        drop_wall_times(b);
        if (!json_equal(a, b))
            fail_msg("%s: --threads 1 and 2 differ", engines[e]);
        json_decref(a);
        json_decref(b);
        free(one.out);
        free(two.out);
    }
}

typedef struct rows {
    int64_t n;
    int64_t iteration[64];
    bool ok;
} rows;

/* Each row: a layer's index, its best point, its knobs and hardware by
 * name (or why there is none), and a best-so-far curve of one value per
 * trial. */
static bool check_row(void *user, const store_row *row)
{
    rows *r = user;
    json_t *params = parse(row->params_json), *detail = parse(row->detail_json);
    const json_t *knobs = json_object_get(params, "knobs");
    const json_t *curve = json_object_get(detail, "best_gflops_curve");
    bool ok = row->slot == 0 && row->round == 0 && json_array_size(curve) == 40 &&
              json_integer_value(json_object_get(detail, "trials")) == 40;
    if (row->feasible) /* the best point, its knobs and hardware, its cost */
        ok = ok && row->point[0] && json_integer_value(json_object_get(knobs, "tile_ci")) > 0 &&
             json_integer_value(json_object_get(json_object_get(params, "hardware"), "block_in")) >
                 0 &&
             row->metrics.latency_s > 0 && row->metrics.energy_pJ > 0;
    else
        ok = ok && strstr(row->reason, "no valid configuration in 40 trials");
    /* The curve never falls and ends at the layer's best. */
    for (size_t i = 1; ok && i < json_array_size(curve); i++)
        ok = json_number_value(json_array_get(curve, i)) >=
             json_number_value(json_array_get(curve, i - 1));
    ok = ok && fabs(json_number_value(json_array_get(curve, 39)) -
                    json_number_value(json_object_get(detail, "gflops"))) < 1e-9;
    r->ok &= ok;
    if (r->n < 64)
        r->iteration[r->n++] = row->iteration;
    json_decref(params);
    json_decref(detail);
    return true;
}

/* The store holds one finished run with a row per distinct layer, which
 * runs list and runs show present as a tune run. */
static void test_store_rows(void **state)
{
    (void)state;
    char path[512];
    db_path(path, sizeof path, "tune_store.db");
    run_result r;
    runf(&r, SMALL " --engine autotvm --threads 2 --db '%s'", path);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "store: ");
    free(r.out);
    int n, skipped;
    free(resnet18_layers(&n, &skipped));

    store *s;
    as_status st;
    assert_int_equal(store_open(&s, path, &st), AS_OK);
    store_run *runs;
    int64_t n_runs;
    assert_int_equal(store_run_list(s, &runs, &n_runs, &st), AS_OK);
    assert_int_equal(n_runs, 1);
    assert_int_equal(runs[0].state, STORE_FINISHED);
    assert_int_equal(runs[0].seed, 5);
    assert_int_equal(runs[0].n_rows, n);
    assert_non_null(strstr(runs[0].summary, "tune autotvm on vta"));
    char *config;
    assert_int_equal(store_run_config(s, runs[0].id, &config, &st), AS_OK);
    assert_non_null(strstr(config, "accelsearch tune 1\n"));
    assert_non_null(strstr(config, "\nengine autotvm\n"));
    assert_non_null(strstr(config, "\ntrials 40\n"));
    assert_null(strstr(config, "threads")); /* not part of the result */
    free(config);
    rows rw = {.ok = true};
    assert_int_equal(store_each_row(s, runs[0].id, check_row, &rw, &st), AS_OK);
    assert_true(rw.ok);
    assert_int_equal(rw.n, n);
    for (int64_t i = 0; i < rw.n; i++)
        assert_int_equal(rw.iteration[i], i);
    free(runs);
    store_close(s);

    runf(&r, "runs list --db '%s'", path);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "tune autotvm on vta");
    free(r.out);
    runf(&r, "runs show --db '%s'", path);
    assert_int_equal(r.status, 0);
    expect_in(r.out, "tuned layers");
    expect_in(r.out, "layer4.0.conv2");
    expect_in(r.out, "tile_co=");
    free(r.out);
    runf(&r, "runs show --db '%s' --json", path);
    assert_int_equal(r.status, 0);
    json_t *shown = parse(r.out);
    assert_string_equal(json_string_value(json_object_get(json_object_get(shown, "run"), "kind")),
                        "tune");
    assert_int_equal(json_array_size(json_object_get(shown, "layers")), (size_t)n);
    json_decref(shown);
    free(r.out);
    runf(&r, "runs show --db '%s' --design 0 --layers", path);
    assert_int_equal(r.status, 2);
    expect_in(r.err, "is a tune run");
    free(r.out);
}

/* Ctrl-C: what was found is printed as JSON, the run is kept as
 * interrupted, and the exit status is 130. */
static void test_interrupt(void **state)
{
    (void)state;
    char path[512], out_path[600];
    db_path(path, sizeof path, "tune_int.db");
    snprintf(out_path, sizeof out_path, "%s/tune_int.json", AS_TEST_TMP_DIR);
    char *args[] = {"tune",      "--model", "vgg19",  "--engine", "autotvm", "--trials", "1000000",
                    "--threads", "2",       "--json", "--db",     path,      NULL};
    pid_t child = stored_rows_spawn(out_path, args);
    /* Once the run is in the store, the handler is in place. */
    bool begun = false;
    for (int polls = 0; polls < 5000 && !begun; polls++) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
        store *s;
        store_run *runs;
        int64_t n = 0;
        as_status st;
        if (access(path, F_OK) == 0 && store_open(&s, path, &st) == AS_OK) {
            begun = store_run_list(s, &runs, &n, &st) == AS_OK && n > 0;
            if (begun)
                free(runs);
            store_close(s);
        }
    }
    assert_true(begun);
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    kill(child, SIGINT);
    int wst;
    waitpid(child, &wst, 0);
    assert_true(WIFEXITED(wst));
    assert_int_equal(WEXITSTATUS(wst), 130);
    FILE *f = fopen(out_path, "r");
    assert_non_null(f);
    static char text[CLI_OUT_BYTES];
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    json_t *root = parse(text);
    assert_true(json_is_true(json_object_get(root, "interrupted")));
    assert_true(json_array_size(json_object_get(root, "layers")) > 0);
    json_decref(root);
    store *s;
    store_run *runs;
    int64_t n;
    as_status st;
    assert_int_equal(store_open(&s, path, &st), AS_OK);
    assert_int_equal(store_run_list(s, &runs, &n, &st), AS_OK);
    assert_int_equal(runs[0].state, STORE_INTERRUPTED);
    free(runs);
    store_close(s);
}

/* --fixed-hardware tunes the schedule only: every layer's best
 * configuration runs on the vta preset's hardware (BATCH 1, BLOCK 16,
 * 32/256/128 KiB buffers, Moreau et al. 2019). */
static void test_fixed_hardware(void **state)
{
    (void)state;
    run_result r;
    run(&r, SMALL " --engine chameleon --fixed-hardware --no-db --json");
    assert_int_equal(r.status, 0);
    json_t *root = parse(r.out);
    assert_true(json_is_false(json_object_get(root, "vary_hardware")));
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(root, "layers"), i, l)
    {
        const json_t *hw = json_object_get(json_object_get(l, "best"), "hardware");
        assert_int_equal(json_integer_value(json_object_get(hw, "batch")), 1);
        assert_int_equal(json_integer_value(json_object_get(hw, "block_in")), 16);
        assert_int_equal(json_integer_value(json_object_get(hw, "block_out")), 16);
        assert_int_equal(json_integer_value(json_object_get(hw, "inp_buffer_bytes")), 32768);
        assert_int_equal(json_integer_value(json_object_get(hw, "wgt_buffer_bytes")), 262144);
        assert_int_equal(json_integer_value(json_object_get(hw, "acc_buffer_bytes")), 131072);
    }
    json_decref(root);
    free(r.out);
}

/* Bad inputs: exit 2 and one line that says what is wrong. */
static void test_bad_inputs(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"tune --arch eyeriss --trials 4 --no-db", "--arch eyeriss: architecture 'eyeriss' is not "
                                                   "VTA-shaped"},
        {"tune --budget nope --no-db", "--budget wants pynq, ultra96 or zcu102, got 'nope'"},
        {"tune --engine nope --no-db", "--engine wants dcocomp, autotvm or chameleon, got 'nope'"},
        {"tune --engine autotvm --no-cs --no-db", "--no-cs switches off DCO-Comp's confidence"},
        {"tune --no-db --db x.db", "--no-db and --db 'x.db' conflict"},
        {"tune --trials 0 --no-db", "--trials wants an integer from 1"},
        {"tune --model nomodel --no-db", "nomodel"},
        {"tune --model vit_b_16 --trials 4 --no-db", "no conv layer that VTA runs"},
        {"tune --arch nowhere.yaml --no-db", "nowhere.yaml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r;
        run(&r, cases[i].args);
        free(r.out);
        if (r.status != 2)
            fail_msg("'%s' exited %d: %s", cases[i].args, r.status, r.err);
        if (!strstr(r.err, cases[i].message))
            fail_msg("'%s': expected '%s' in: %s", cases[i].args, cases[i].message, r.err);
    }
    /* A model with nothing to tune leaves no run behind. */
    char path[512];
    db_path(path, sizeof path, "tune_vit.db");
    run_result r;
    runf(&r, "tune --model vit_b_16 --db '%s'", path);
    assert_int_equal(r.status, 2);
    assert_int_equal(access(path, F_OK), -1);
    free(r.out);
    run(&r, "help tune");
    assert_int_equal(r.status, 0);
    expect_in(r.out, "usage: accelsearch tune");
    expect_in(r.out, "--fixed-hardware");
    free(r.out);
    run(&r, "--help");
    expect_in(r.out, "  tune ");
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_engine_text_and_json),
        cmocka_unit_test(test_same_seed_any_threads),
        cmocka_unit_test(test_store_rows),
        cmocka_unit_test(test_fixed_hardware),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
