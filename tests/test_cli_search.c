/*
 * test_cli_search.c -- `accelsearch search` end to end: a run killed with
 * SIGKILL in the middle of a batch and resumed reaches the result of an
 * uninterrupted run with the same seed, with every stored evaluation kept
 * and none computed or stored twice; Ctrl-C keeps what was found (exit
 * 130); bad options exit 2.  --emit-arch writes each front design as an
 * architecture file that `arch show` and `fuse` read with the search's
 * figures, and `runs show --design K --emit-arch` writes the same bytes;
 * every --fusion search runs and shows in the chosen design's groups, and
 * --algo hasco fuses nothing.  --baseline evaluates fixed designs (a
 * preset, a file) and reports the chosen design's ratios to each, in the
 * text and in the JSON, the same after a resume.
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

#include "core/core.h"
#include "store/store.h"

#include "cli_run.h"
#include "stored_rows.h"
#include "text_file.h"

static void test_sigkill_and_resume(void **state)
{
    (void)state;
    char whole[512], killed[512], args[2048];
    stored_rows_path(whole, sizeof whole, "search_whole.db");
    stored_rows_path(killed, sizeof killed, "search_killed.db");
    run_result expected;
    snprintf(args, sizeof args, STORED_ROWS_SMALL_RUN " --baseline eyeriss --json --db '%s'",
             whole);
    run(&expected, args);
    assert_int_equal(expected.status, 0);

    /* The same run, killed once a few candidate rounds are stored. */
    stored_rows_kill_small_run(killed, 5);
    static stored_rows before;
    stored_rows_read(killed, &before);
    assert_true(before.n >= 5);

    snprintf(args, sizeof args,
             STORED_ROWS_SMALL_RUN " --baseline eyeriss --json --resume --db '%s'", killed);
    run_result resumed;
    run(&resumed, args);
    assert_int_equal(resumed.status, 0);
    /* ... baselines included: evaluated again, the same. */
    assert_string_equal(stored_rows_result_part(resumed.out),
                        stored_rows_result_part(expected.out));
    assert_non_null(strstr(stored_rows_result_part(resumed.out), "\"name\": \"eyeriss\""));
    /* The resumed run took what the killed one stored. */
    assert_non_null(strstr(resumed.out, "\"rounds_loaded\": "));
    assert_null(strstr(resumed.out, "\"rounds_loaded\": 0,"));

    /* Nothing lost, nothing stored twice: the same rows as the whole run,
     * bit for bit, and the rows from before the kill unchanged. */
    stored_rows_assert_same(whole, killed);
    static stored_rows b;
    stored_rows_read(killed, &b);
    for (int64_t i = 0; i < before.n; i++) {
        bool found = false;
        for (int64_t k = 0; k < b.n && !found; k++)
            found = before.row[i].iteration == b.row[k].iteration &&
                    before.row[i].slot == b.row[k].slot && before.row[i].round == b.row[k].round;
        assert_true(found);
    }
    /* A finished run is not resumable. */
    run_result again;
    run(&again, args);
    assert_int_equal(again.status, 2);
    assert_non_null(strstr(again.err, "no unfinished run with this configuration"));
    free(again.out);
    free(expected.out);
    free(resumed.out);
}

/* SIGINT (Ctrl-C) stops the run, which prints what it found and exits 130. */
static void test_interrupt_keeps_results(void **state)
{
    (void)state;
    char path[512], out_path[600];
    stored_rows_path(path, sizeof path, "search_int.db");
    snprintf(out_path, sizeof out_path, "%s/search_int.json", AS_TEST_TMP_DIR);
    char *args_int[] = {"search", "--model",     "alexnet", "--budget",    "64",   "--batch",
                        "4",      "--sw-budget", "64",      "--sh-rounds", "2",    "--map-budget",
                        "16",     "--threads",   "2",       "--json",      "--db", path,
                        NULL};
    pid_t child = stored_rows_spawn(out_path, args_int);
    int wst = stored_rows_signal_after(child, path, 6, SIGINT);
    assert_true(WIFEXITED(wst));
    assert_int_equal(WEXITSTATUS(wst), 130);
    FILE *f = fopen(out_path, "r");
    assert_non_null(f);
    static char json[CLI_OUT_BYTES];
    size_t n = fread(json, 1, sizeof json - 1, f);
    json[n] = '\0';
    fclose(f);
    assert_non_null(strstr(json, "\"interrupted\": true"));
    assert_non_null(strstr(json, "\"pareto\": [\n    {"));
}

static void test_bad_options(void **state)
{
    (void)state;
    const char *bad[] = {
        "search --algo nope",        "search --budget 0",      "search --space nowhere.yaml",
        "search --objectives speed", "search --model nomodel", "search --no-db --resume",
        "search --batch 100",        "search --fusion fast",
    };
    /* What each says, in the same order. */
    const char *message[] = {
        "--algo wants casco, mobo, bo, lcs, ga, random or hasco, got 'nope'",
        "--budget wants an integer from 1 to 1000000, got '0'",
        "nowhere.yaml: not a built-in space",
        "--objectives wants up to 4 of latency, energy, area, edp, perf_per_tdp, got 'speed'",
        "unknown model 'nomodel'",
        "--resume needs the store; drop '--no-db'",
        "--batch wants an integer from 1 to 64, got '100'",
        "--fusion wants none, ga, dp or ilp, got 'fast'",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r;
        run(&r, bad[i]);
        free(r.out);
        if (r.status != 2)
            fail_msg("'%s' exited %d", bad[i], r.status);
        if (!strstr(r.err, message[i]))
            fail_msg("'%s': want '%s' in %s", bad[i], message[i], r.err);
    }
}

static json_t *parse_json(const char *text)
{
    json_error_t error;
    json_t *v = json_loads(text, 0, &error);
    if (!v)
        fail_msg("bad JSON: %s (line %d)", error.text, error.line);
    return v;
}

/* fuse's layer-by-layer group of one layer called layer, or NULL. */
static const json_t *group_of_layer(const json_t *groups, const char *layer)
{
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
    {
        const json_t *layers = json_object_get(g, "layers");
        if (json_array_size(layers) == 1 &&
            strcmp(json_string_value(json_array_get(layers, 0)), layer) == 0)
            return g;
    }
    return NULL;
}

/*
 * What fuse finds for the chosen design's file equals what the search
 * found, where the two compute the same thing: the search maps by the
 * heuristic mapper (seed 1, one thread, --map-budget at full fidelity,
 * its searches continued from the earlier rounds' smaller budgets, which
 * is the search to that budget) at the space's precision (fp16 on edge),
 * and its plan comes from a GA whose seed is
 * the candidate's; so every group of one layer in the search's plan must
 * cost in `fuse --algo none --map-budget B --precision fp16 --as-hardware`
 * (the search's precision sets widths, its MACs take the operands
 * unemulated) what the search reported, cycle for cycle.  (Whole-model figures differ with the
 * plan, which fuse cannot be given.)
 */
static void check_chosen_with_fuse(const char *file, const json_t *workload)
{
    char args[1024];
    snprintf(args, sizeof args,
             "fuse --arch '%s' --model alexnet --algo none --map-budget 16 --precision fp16 "
             "--as-hardware "
             "--seed 1 --threads 1 --json",
             file);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    json_t *fused = parse_json(r.out);
    free(r.out);
    const json_t *groups = json_object_get(fused, "groups");
    int compared = 0;
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(workload, "groups"), i, g)
    {
        const json_t *layers = json_object_get(g, "layers");
        if (json_array_size(layers) != 1)
            continue;
        const char *layer = json_string_value(json_array_get(layers, 0));
        const json_t *f = group_of_layer(groups, layer);
        if (!f)
            fail_msg("fuse has no group of '%s' alone", layer);
        assert_int_equal(json_integer_value(json_object_get(f, "cycles")),
                         json_integer_value(json_object_get(g, "cycles")));
        double want = json_number_value(json_object_get(g, "energy_pJ"));
        double got = json_number_value(json_object_get(f, "energy_pJ"));
        if (fabs(got - want) > 1e-9 * want)
            fail_msg("%s: fuse %.17g pJ, search %.17g pJ", layer, got, want);
        assert_int_equal(json_integer_value(json_object_get(f, "dram_bytes")),
                         json_integer_value(json_object_get(g, "dram_bytes")));
        compared++;
    }
    assert_true(compared > 0);
    json_decref(fused);
}

/* The figure the text line labelled `label` shows, in engineering notation
 * ("339.4 mW": 4 significant digits, an SI prefix, the unit), in the unit
 * itself; NAN when there is no such line or unit. */
static double shown_figure(const char *text, const char *label, const char *unit)
{
    const char *line = strstr(text, label);
    if (!line)
        return NAN;
    double v;
    char word[32];
    if (sscanf(line + strlen(label), "%lf %31s", &v, word) != 2)
        return NAN;
    static const char prefixes[] = "munpkMG";
    static const double scale[] = {1e-3, 1e-6, 1e-9, 1e-12, 1e3, 1e6, 1e9};
    if (strcmp(word, unit) == 0)
        return v;
    const char *p = strchr(prefixes, word[0]);
    return p && strcmp(word + 1, unit) == 0 ? v * scale[p - prefixes] : NAN;
}

/* `arch show` on the file prints the front point's area and TDP, to the
 * 4 significant digits of the text (docs/cli-output.md). */
static void check_arch_show(const char *file, const json_t *point)
{
    char args[1024];
    snprintf(args, sizeof args, "arch show '%s'", file);
    run_result r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    double area = json_number_value(json_object_get(point, "area_mm2"));
    double tdp = json_number_value(json_object_get(point, "power_W"));
    double shown_area = shown_figure(r.out, "\narea ", "mm2");
    double shown_tdp = shown_figure(r.out, "\npeak power (TDP) ", "W");
    if (!(fabs(shown_area - area) <= 5e-4 * area) || !(fabs(shown_tdp - tdp) <= 5e-4 * tdp))
        fail_msg("%s: want %.17g mm2 and %.17g W in\n%s", file, area, tdp, r.out);
    free(r.out);
}

static void test_emit_arch(void **state)
{
    (void)state;
    char db[512], dir[512], args[2048], file[700], again[700];
    stored_rows_path(db, sizeof db, "search_emit.db");
    snprintf(dir, sizeof dir, "%s/search_emit_designs", AS_TEST_TMP_DIR);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    assert_int_equal(system(args), 0);
    snprintf(args, sizeof args, STORED_ROWS_SMALL_RUN " --json --db '%s' --emit-arch '%s'", db,
             dir);
    run_result r;
    run(&r, args); /* the directory is made */
    assert_int_equal(r.status, 0);
    json_t *result = parse_json(r.out);
    free(r.out);
    const json_t *front = json_object_get(result, "pareto");
    const json_t *chosen = json_object_get(result, "chosen");
    assert_true(json_array_size(front) > 0);
    int n_chosen = 0;
    for (size_t k = 0; k < json_array_size(front); k++) {
        const json_t *point = json_array_get(front, k);
        snprintf(file, sizeof file, "%s/design-%zu.yaml", dir, k);
        check_arch_show(file, point);
        bool is_chosen =
            json_equal(json_object_get(point, "iteration"), json_object_get(chosen, "iteration")) &&
            json_equal(json_object_get(point, "slot"), json_object_get(chosen, "slot"));
        char line[800];
        snprintf(line, sizeof line, "%s%s\n", file, is_chosen ? "  <- chosen" : "");
        if (!strstr(r.err, line))
            fail_msg("want the line '%s' in %s", line, r.err);
        if (is_chosen) {
            n_chosen++;
            check_chosen_with_fuse(file,
                                   json_array_get(json_object_get(result, "chosen_workloads"), 0));
        }
        /* The stored run gives the same file. */
        snprintf(again, sizeof again, "%s/again-%zu.yaml", dir, k);
        snprintf(args, sizeof args, "runs show --db '%s' --design %zu --emit-arch '%s'", db, k,
                 again);
        run_result shown;
        run(&shown, args);
        assert_int_equal(shown.status, 0);
        free(shown.out);
        char *a = text_file(file), *b = text_file(again);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    assert_int_equal(n_chosen, 1);

    /* Past the front, and a file where the directory should be: errors. */
    snprintf(args, sizeof args, "runs show --db '%s' --design %zu --emit-arch '%s/x.yaml'", db,
             json_array_size(front), dir);
    run(&r, args);
    free(r.out);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "--design wants 0 to"));
    snprintf(args, sizeof args, "search --no-db --budget 2 --emit-arch '%s'", file);
    run(&r, args);
    free(r.out);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "not a directory"));
    json_decref(result);
}

#define FUSION_RUN                                                                                 \
    "search --model alexnet --budget 4 --batch 4 --sw-budget 64 --sh-rounds 2 --map-budget 16 "    \
    "--seed 5 --no-db --json "

/* Run `FUSION_RUN extra` (exit 0) and parse its JSON; the caller frees it. */
static json_t *fusion_run(const char *extra, int threads)
{
    char args[512];
    snprintf(args, sizeof args, "%s --threads %d %s", FUSION_RUN, threads, extra);
    run_result r;
    run(&r, args);
    if (r.status != 0)
        fail_msg("'%s' exited %d: %s", args, r.status, r.err);
    json_t *j = parse_json(r.out);
    free(r.out);
    return j;
}

/* The largest number of layers in one group of the chosen design's first
 * workload (0 when there is no chosen design). */
static size_t largest_group(const json_t *j)
{
    const json_t *groups =
        json_object_get(json_array_get(json_object_get(j, "chosen_workloads"), 0), "groups");
    size_t largest = 0, k;
    const json_t *g;
    json_array_foreach(groups, k, g)
    {
        size_t n = json_array_size(json_object_get(g, "layers"));
        largest = n > largest ? n : largest;
    }
    assert_true(json_array_size(groups) > 0);
    return largest;
}

/* The rounds every evaluated candidate got, or -1 when they differ. */
static json_int_t common_rounds(const json_t *j)
{
    json_int_t rounds = -2;
    size_t k;
    const json_t *c;
    json_array_foreach(json_object_get(j, "evaluations"), k, c)
    {
        json_int_t r = json_integer_value(json_object_get(c, "rounds"));
        rounds = rounds == -2 || rounds == r ? r : -1;
    }
    return rounds;
}

/* Each --fusion runs end to end under casco and says so; without fusion
 * every group is one layer, the DP and the GA fuse; only the GA is
 * anytime, so only it gets successive halving's rounds. */
static void test_fusion_choice(void **state)
{
    (void)state;
    const char *name[] = {"none", "ga", "dp", "ilp"};
    for (size_t i = 0; i < 4; i++) {
        char extra[64];
        snprintf(extra, sizeof extra, "--fusion %s", name[i]);
        json_t *j = fusion_run(extra, 2);
        assert_string_equal(json_string_value(json_object_get(j, "fusion")), name[i]);
        size_t largest = largest_group(j);
        if (strcmp(name[i], "none") == 0)
            assert_int_equal(largest, 1);
        if (strcmp(name[i], "ga") == 0 || strcmp(name[i], "dp") == 0)
            assert_true(largest > 1);
        if (strcmp(name[i], "ga") == 0)
            assert_int_equal(common_rounds(j), -1); /* halving dropped some after round 1 */
        else
            assert_int_equal(common_rounds(j), 1);
        json_decref(j);
    }
}

/* The defaults follow the space and the engine: GA on edge, ILP on
 * datacenter, none under hasco (HASCO), DP when asked (HASCO+Optimus). */
static void test_fusion_defaults(void **state)
{
    (void)state;
    const struct {
        const char *extra, *fusion;
    } cases[] = {
        {"", "ga"},
        {"--space datacenter --budget 2 --batch 2", "ilp"},
        {"--algo hasco", "none"},
        {"--algo hasco --fusion dp", "dp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = fusion_run(cases[i].extra, 2);
        const char *fusion = json_string_value(json_object_get(j, "fusion"));
        if (!fusion || strcmp(fusion, cases[i].fusion) != 0)
            fail_msg("'%s': fusion %s, want %s", cases[i].extra, fusion ? fusion : "(none)",
                     cases[i].fusion);
        if (strcmp(cases[i].fusion, "none") == 0)
            assert_int_equal(largest_group(j), 1);
        json_decref(j);
    }
}

/* A non-default fusion search gives the same result at 1 and 2 threads. */
static void test_fusion_threads(void **state)
{
    (void)state;
    json_t *one = fusion_run("--fusion dp", 1), *two = fusion_run("--fusion dp", 2);
    const char *keys[] = {"pareto", "chosen", "chosen_workloads", "evaluations"};
    for (size_t k = 0; k < 4; k++)
        if (!json_equal(json_object_get(one, keys[k]), json_object_get(two, keys[k])))
            fail_msg("--fusion dp: \"%s\" differs between 1 and 2 threads", keys[k]);
    json_decref(one);
    json_decref(two);
}

#define BASELINE_RUN                                                                               \
    "search --model alexnet --budget 4 --batch 4 --sw-budget 64 --sh-rounds 2 --map-budget 16 "    \
    "--seed 5 --no-db --threads 2 --baseline eyeriss --baseline " AS_TEST_DATA_DIR                 \
    "/arch/eyeriss_like.yaml --baseline shidiannao"

/* Metric `name` of a JSON object of metrics (or of a candidate). */
static double metric(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_number(v))
        fail_msg("no number '%s'", name);
    return json_number_value(v);
}

/* Whether a and b agree to the relative precision JSON numbers keep. */
static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

/* --baseline: each fixed design in the JSON with its metrics and the
 * chosen design's ratios to them (recomputed here from both), and the
 * same ratios on the text's "against NAME (fixed design)" lines. */
static void test_baselines(void **state)
{
    (void)state;
    run_result r;
    run(&r, BASELINE_RUN " --json");
    if (r.status != 0)
        fail_msg("exited %d: %s", r.status, r.err);
    json_t *j = parse_json(r.out);
    const json_t *chosen = json_object_get(j, "chosen");
    const json_t *baselines = json_object_get(j, "baselines");
    assert_true(json_is_object(chosen));
    assert_int_equal(json_array_size(baselines), 3);
    const char *names[] = {"eyeriss", AS_TEST_DATA_DIR "/arch/eyeriss_like.yaml", "shidiannao"};
    const char *pairs[][2] = {{"latency", "latency_s"},
                              {"energy", "energy_pJ"},
                              {"area", "area_mm2"},
                              {"edp", "edp"},
                              {"perf_per_tdp", "perf_per_tdp"}};
    double ratio[3][5];
    for (size_t i = 0; i < 3; i++) {
        const json_t *b = json_array_get(baselines, i);
        assert_string_equal(json_string_value(json_object_get(b, "name")), names[i]);
        assert_true(json_is_true(json_object_get(b, "feasible")));
        const json_t *m = json_object_get(b, "metrics"), *x = json_object_get(b, "ratios");
        assert_true(metric(m, "latency_s") > 0 && metric(m, "power_W") > 0);
        for (size_t k = 0; k < 5; k++) {
            ratio[i][k] = metric(x, pairs[k][0]);
            double want = metric(chosen, pairs[k][1]) / metric(m, pairs[k][1]);
            if (!close_to(ratio[i][k], want))
                fail_msg("%s: ratio %s %.17g, chosen / baseline %.17g", names[i], pairs[k][0],
                         ratio[i][k], want);
        }
    }
    /* Different designs: the preset and the Timeloop-like file differ. */
    assert_false(close_to(ratio[0][2], ratio[1][2]));
    json_decref(j);
    free(r.out);

    run(&r, BASELINE_RUN);
    assert_int_equal(r.status, 0);
    for (size_t i = 0; i < 3; i++) {
        char line[1024];
        snprintf(line, sizeof line,
                 "  against %s (fixed design): latency x%.3f, energy x%.3f, area x%.3f, EDP "
                 "x%.3f, perf/TDP x%.3f\n",
                 names[i], ratio[i][0], ratio[i][1], ratio[i][2], ratio[i][3], ratio[i][4]);
        if (!strstr(r.out, line))
            fail_msg("want '%s' in:\n%s", line, r.out);
    }
    free(r.out);

    /* A design that cannot run is reported, not an error; a bad name is. */
    run(&r, "search --model alexnet --budget 2 --batch 2 --sw-budget 64 --sh-rounds 2 "
            "--map-budget 8 --no-db --baseline no_such_preset");
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--baseline no_such_preset"));
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_sigkill_and_resume),
        cmocka_unit_test(test_interrupt_keeps_results),
        cmocka_unit_test(test_emit_arch),
        cmocka_unit_test(test_fusion_choice),
        cmocka_unit_test(test_fusion_defaults),
        cmocka_unit_test(test_fusion_threads),
        cmocka_unit_test(test_baselines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
