/*
 * test_arch_convert.c -- Timeloop v0.4 architectures as designs
 * (map_timeloop_load_arch, map_timeloop_save_arch and its tables; `--arch`
 * of a Timeloop file, `arch convert`, `arch ert`; docs/timeloop-semantics.md
 * section 8.3), and the checks of issue 17:
 *  - every Timeloop reference case's architecture (tests/data/timeloop),
 *    converted to accelsearch's format and back to Timeloop's, evaluates
 *    (eval --json, every number) exactly as the original case;
 *  - every preset Timeloop can describe, exported with generated ERT/ART,
 *    re-imports to the same design (arch_save text) and the same `map` and
 *    `fuse` numbers; the others are refused, naming why;
 *  - errors name the file, the line and the key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "cli_run.h"
#include "mapping/mapping.h"

#define TL_DIR AS_TEST_DATA_DIR "/timeloop"
#define TMP AS_TEST_TMP_DIR "/arch_convert_"

/* ------------------------------------------------------------- helpers */

/* Run `accelsearch ARGS` (printf-style); the exit status must be want.
 * The result is the caller's to free (r->out). */
static void run_expect(run_result *r, int want, const char *fmt, ...) AS_PRINTF(3, 4);
static void run_expect(run_result *r, int want, const char *fmt, ...)
{
    char args[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    run(r, args);
    if (r->status != want)
        fail_msg("'%s': exit %d (want %d)\nstderr: %s", args, r->status, want, r->err);
}

/* The whole of a file, malloc'd (NULL when it cannot be read). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Drop the lines of text that hold "seconds" (wall-clock times), in place. */
static void drop_timings(char *text)
{
    char *in = text, *out = text;
    while (*in) {
        char *end = strchr(in, '\n');
        size_t n = end ? (size_t)(end - in + 1) : strlen(in);
        bool timing = false;
        for (char *p = in; p < in + n && !timing; p++)
            timing = strncmp(p, "seconds\"", 8) == 0;
        if (!timing) {
            memmove(out, in, n);
            out += n;
        }
        in += n;
    }
    *out = '\0';
}

/* stdout of `accelsearch ARGS` (which must succeed), without timings. */
static char *output_of(const char *args)
{
    run_result r;
    run_expect(&r, 0, "%s", args);
    drop_timings(r.out);
    return r.out;
}

/* The sections `problem` and `mapping` of a model input (top-level keys
 * and the lines under them) appended to out. */
static void append_problem_and_mapping(FILE *out, const char *model_input)
{
    char *text = slurp(model_input);
    assert_non_null(text);
    bool keep = false;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        bool top = line[0] && line[0] != ' ' && line[0] != '#' && line[0] != '-';
        if (top)
            keep = strncmp(line, "problem:", 8) == 0 || strncmp(line, "mapping:", 8) == 0;
        if (keep)
            fprintf(out, "%s\n", line);
    }
    free(text);
}

/* ------------------------------------------------- the reference cases */

/* One reference case: its architecture to our YAML, that back to a
 * Timeloop architecture with generated tables, and the case's problem and
 * mapping on it evaluate exactly as the original files do. */
static void check_reference_case(const char *name)
{
    char dir[512], ours[600], theirs[600], ert[600], art[600], combined[600], args[2400];
    snprintf(dir, sizeof dir, "%s/%s", TL_DIR, name);
    snprintf(ours, sizeof ours, "%s%s.yaml", TMP, name);
    snprintf(theirs, sizeof theirs, "%s%s_tl.yaml", TMP, name);
    snprintf(ert, sizeof ert, "%s%s_tl.ERT.yaml", TMP, name);
    snprintf(art, sizeof art, "%s%s_tl.ART.yaml", TMP, name);
    snprintf(combined, sizeof combined, "%s%s_case.yaml", TMP, name);
    run_result r;
    /* the model input as --arch: its ERT.yaml / ART.yaml are beside it */
    run_expect(&r, 0, "arch convert '%s/model-input.yaml' '%s' --to accelsearch", dir, ours);
    free(r.out);
    run_expect(&r, 0, "arch convert '%s' '%s' --to timeloop", ours, theirs);
    free(r.out);
    char *arch_text = slurp(theirs);
    assert_non_null(arch_text);
    FILE *f = fopen(combined, "w");
    assert_non_null(f);
    fputs(arch_text, f);
    free(arch_text);
    char model_input[600];
    snprintf(model_input, sizeof model_input, "%s/model-input.yaml", dir);
    append_problem_and_mapping(f, model_input);
    fclose(f);
    snprintf(args, sizeof args, "eval '%s' '%s/ERT.yaml' '%s/ART.yaml' --json", model_input, dir,
             dir);
    char *want = output_of(args);
    snprintf(args, sizeof args, "eval '%s' '%s' '%s' --json", combined, ert, art);
    char *got = output_of(args);
    assert_non_null(strstr(want, "\"energy_pJ\""));
    if (strcmp(want, got) != 0)
        fail_msg("%s: eval of the converted architecture differs:\n%s\n--- vs ---\n%s", name, want,
                 got);
    free(want);
    free(got);
}

static void test_reference_cases_both_ways(void **state)
{
    (void)state;
    DIR *d = opendir(TL_DIR);
    assert_non_null(d);
    int cases = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        check_reference_case(e->d_name);
        cases++;
    }
    closedir(d);
    assert_true(cases >= 17);
}

/* ---------------------------------------------------------- the presets */

/* Presets whose compute or storage Timeloop's format cannot say, and why. */
static const struct {
    const char *preset, *why;
} refused[] = {
    {"shidiannao", "level 'PE_regs': its capacity is split among data spaces"},
    {"edgetpu", "is not independent MACs"},
    {"tpu_v3", "is not independent MACs"},
    {"gemmini", "compute 'mesh' is not independent MACs"},
    {"simba", "compute 'vector_MAC' is not independent MACs"},
};

/* Why the preset is refused, or NULL when it is not. */
static const char *refusal_of(const char *preset)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strcmp(refused[i].preset, preset) == 0)
            return refused[i].why;
    return NULL;
}

/* One exportable preset: the Timeloop files re-import to the same design
 * (arch_save text, arch show), with the tables and without them (then
 * from accelsearch's tables, which the export came from), and run map and
 * fuse to the same numbers. */
static void check_preset_round_trip(const char *preset)
{
    char tl[600], plain_dir[600], plain[700], ours_direct[600], ours_back[600], args[2400];
    snprintf(tl, sizeof tl, "%s%s.tl.yaml", TMP, preset);
    snprintf(ours_direct, sizeof ours_direct, "%s%s.direct.yaml", TMP, preset);
    snprintf(ours_back, sizeof ours_back, "%s%s.back.yaml", TMP, preset);
    run_result r;
    run_expect(&r, 0, "arch convert %s '%s' --to timeloop", preset, tl);
    free(r.out);
    run_expect(&r, 0, "arch convert %s '%s' --to accelsearch", preset, ours_direct);
    free(r.out);
    run_expect(&r, 0, "arch convert '%s' '%s' --to accelsearch", tl, ours_back);
    free(r.out);
    char *direct = slurp(ours_direct), *back = slurp(ours_back);
    assert_non_null(direct);
    assert_non_null(back);
    assert_string_equal(direct, back);
    free(direct);
    free(back);

    /* without ERT / ART: the energies and areas from accelsearch's tables */
    snprintf(plain_dir, sizeof plain_dir, "%s%s_plain", TMP, preset);
    snprintf(args, sizeof args, "mkdir -p '%s' && cp '%s' '%s/arch.yaml'", plain_dir, tl,
             plain_dir);
    assert_int_equal(system(args), 0);
    snprintf(plain, sizeof plain, "%s/arch.yaml", plain_dir);
    snprintf(args, sizeof args, "arch show %s --json", preset);
    char *want = output_of(args);
    snprintf(args, sizeof args, "arch show '%s' --json", plain);
    char *got = output_of(args);
    assert_string_equal(want, got);
    free(want);
    free(got);

    /* map of a layer and fuse of a model, every number */
    const char *commands[] = {"map --model alexnet --layer features.3 --map-budget 200 --threads 2 "
                              "--json --arch",
                              "fuse --model alexnet --algo dp --map-budget 32 --threads 2 --json "
                              "--arch"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        snprintf(args, sizeof args, "%s %s", commands[i], preset);
        want = output_of(args);
        snprintf(args, sizeof args, "%s '%s'", commands[i], tl);
        got = output_of(args);
        assert_non_null(strstr(want, "\"energy_pJ\""));
        if (strcmp(want, got) != 0)
            fail_msg("%s: '%s' differs on the Timeloop export", preset, commands[i]);
        free(want);
        free(got);
    }
}

static void test_presets_export_and_reimport(void **state)
{
    (void)state;
    int n, exported = 0;
    const arch_preset *p = arch_presets(&n);
    for (int i = 0; i < n; i++) {
        const char *why = refusal_of(p[i].name);
        if (!why) {
            check_preset_round_trip(p[i].name);
            exported++;
            continue;
        }
        run_result r;
        run_expect(&r, 2, "arch convert %s '%sx.yaml' --to timeloop", p[i].name, TMP);
        free(r.out);
        if (!strstr(r.err, why) || !strstr(r.err, "which Timeloop cannot describe"))
            fail_msg("%s: want '%s' in: %s", p[i].name, why, r.err);
    }
    assert_true(exported >= 2); /* eyeriss, vta */
}

/* The library: what map_timeloop_save_arch and its tables write reads
 * back with map_timeloop_load_arch to the same costs (every field that
 * arch_save writes). */
static void test_library_round_trip(void **state)
{
    (void)state;
    arch_spec a, b;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(arch_load("vta", &a, &st), AS_OK);
    const char *path = TMP "lib.yaml", *ert = TMP "lib.ERT.yaml", *art = TMP "lib.ART.yaml";
    if (map_timeloop_save_arch(&a, path, &st) != AS_OK ||
        map_timeloop_save_arch_tables(&a, ert, art, &st) != AS_OK ||
        map_timeloop_load_arch(path, ert, art, &b, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_true(map_timeloop_is_arch_file(path));
    assert_false(map_timeloop_is_arch_file(ert));
    assert_false(map_timeloop_is_arch_file(AS_TEST_DATA_DIR "/arch/bad_clock_both.yaml"));
    assert_int_equal(a.n_levels, b.n_levels);
    for (int i = 0; i < a.n_levels; i++) {
        assert_string_equal(a.level[i].name, b.level[i].name);
        assert_memory_equal(&a.level[i].energy, &b.level[i].energy, sizeof a.level[i].energy);
        assert_true(a.level[i].area_um2 == b.level[i].area_um2);
        assert_true(a.level[i].hop_pJ == b.level[i].hop_pJ);
        assert_memory_equal(a.level[i].size_words_by_ds, b.level[i].size_words_by_ds,
                            sizeof a.level[i].size_words_by_ds);
    }
    assert_true(a.compute.mac_pJ == b.compute.mac_pJ);
    assert_true(a.dram.energy_pJ_per_bit == b.dram.energy_pJ_per_bit);
    assert_true(a.dram.bandwidth_GBps == b.dram.bandwidth_GBps);
    assert_true(arch_peak_power_W(&a) == arch_peak_power_W(&b));
}

/* ------------------------------------------------ commands and errors */

/* A Timeloop reference architecture (its ERT / ART beside it, Timeloop's
 * names) runs map; `arch ert` prints the tables `arch convert` writes. */
static void test_timeloop_arch_runs_map_and_ert(void **state)
{
    (void)state;
    run_result r;
    run_expect(&r, 0,
               "map --arch '%s/eyeriss_like__resnet50_conv2x_3x3_c64m64_56/model-input.yaml' "
               "--model alexnet --layer features.3 --map-budget 100 --threads 2 --json",
               TL_DIR);
    assert_non_null(strstr(r.out, "\"arch\": \"system_top_level\""));
    free(r.out);

    run_expect(&r, 0, "arch convert eyeriss '%sey.yaml' --to timeloop", TMP);
    free(r.out);
    run_expect(&r, 0, "arch ert eyeriss --art '%sey_art.yaml'", TMP);
    char *ert = slurp(TMP "ey.ERT.yaml"), *art = slurp(TMP "ey.ART.yaml"),
         *art2 = slurp(TMP "ey_art.yaml");
    assert_non_null(ert);
    assert_string_equal(r.out, ert);
    assert_non_null(strstr(ert, "'eyeriss.MAC[1..168]'"));
    assert_string_equal(art, art2);
    free(ert);
    free(art);
    free(art2);
    free(r.out);
}

/* The text of the n-th (0-based) "metrics" object of a JSON text, up to
 * its closing brace, malloc'd. */
static char *nth_metrics(const char *json, int n)
{
    const char *at = json;
    for (int i = 0; i <= n; i++) {
        at = strstr(at, "\"metrics\"");
        assert_non_null(at);
        at++;
    }
    const char *end = strchr(at, '}');
    assert_non_null(end);
    char *copy = malloc((size_t)(end - at) + 1);
    assert_non_null(copy);
    memcpy(copy, at, (size_t)(end - at));
    copy[end - at] = '\0';
    return copy;
}

/* search --baseline takes a Timeloop design: the exported eyeriss scores
 * as the preset does. */
static void test_search_baseline(void **state)
{
    (void)state;
    run_result r;
    run_expect(&r, 0, "arch convert eyeriss '%sbase.yaml' --to timeloop", TMP);
    free(r.out);
    run_expect(&r, 0,
               "search --model alexnet --hw-budget 2 --plan-budget 32 --map-budget 16 --no-db "
               "--threads 2 --baseline '%sbase.yaml' --baseline eyeriss --json",
               TMP);
    const char *baselines = strstr(r.out, "\"baselines\"");
    assert_non_null(baselines);
    char *exported = nth_metrics(baselines, 0), *preset = nth_metrics(baselines, 1);
    assert_non_null(strstr(exported, "energy_pJ"));
    assert_string_equal(exported, preset);
    free(exported);
    free(preset);
    free(r.out);
}

/* The file and the message an error must name, for a Timeloop design. */
static void design_fails(const char *name, const char *text, const char *want)
{
    char path[600];
    snprintf(path, sizeof path, "%s%s", TMP, name);
    write_text(path, text);
    run_result r;
    run_expect(&r, 2, "arch show '%s'", path);
    free(r.out);
    if (!strstr(r.err, path) || !strstr(r.err, want))
        fail_msg("want '%s: ... %s' in: %s", path, want, r.err);
}

static void test_errors_name_file_line_key(void **state)
{
    (void)state;
    const char *head = "architecture:\n"
                       "  version: '0.4'\n"
                       "  subtree:\n"
                       "  - name: sys\n"
                       "    local:\n"
                       "    - name: DRAM\n"
                       "      class: DRAM\n"
                       "      attributes: {width: 64, datawidth: 8}\n"
                       "    - name: Buf\n"
                       "      class: SRAM\n";
    char text[2000];
    snprintf(text, sizeof text,
             "%s      attributes: {depth: 64, width: 64, datawidth: 8, widht: 3}\n"
             "    - name: mac\n      class: intmac\n      attributes: {datawidth: 8}\n",
             head);
    design_fails("bad_key.yaml", text, ":11: unknown key 'widht' in storage attributes");
    snprintf(text, sizeof text,
             "%s      attributes: {depth: 64, width: 64, datawidth: 8}\n"
             "    - name: mac\n      class: intmac\n      attributes: {datawidth: 8}\n"
             "accelsearch_arch:\n  dram_bandwidth_GBps: 1\n  dram_pJ_per_bit: 1\n"
             "  dram_interface_pJ_per_bit: 1\n  hop_pJ: {Nope: 1}\n",
             head);
    design_fails("bad_hop.yaml", text,
                 ":19: accelsearch_arch: hop_pJ: 'Nope' is not a storage level");
    snprintf(text, sizeof text,
             "%s      attributes: {depth: 64, width: 64, datawidth: 8}\n"
             "    - name: mac\n      class: intmac\n      attributes: {datawidth: 8}\n"
             "architecture_constraints:\n  targets:\n"
             "  - {target: Buf, type: datatype, bypass: [Wieghts]}\n",
             head);
    design_fails("bad_constraint.yaml", text, ":17: bypass: expected Weights, Inputs or Outputs");

    run_result r;
    run_expect(&r, 2, "arch convert eyeriss '%sx.yaml'", TMP);
    assert_non_null(strstr(r.err, "missing --to accelsearch|timeloop"));
    free(r.out);
    run_expect(&r, 2, "arch convert eyeriss '%sx.yaml' --to zigzag", TMP);
    free(r.out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_cases_both_ways),
        cmocka_unit_test(test_presets_export_and_reimport),
        cmocka_unit_test(test_library_round_trip),
        cmocka_unit_test(test_timeloop_arch_runs_map_and_ert),
        cmocka_unit_test(test_search_baseline),
        cmocka_unit_test(test_errors_name_file_line_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
