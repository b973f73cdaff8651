/*
 * cmd_arch.c -- `accelsearch arch list|show|from-scalesim|convert|ert`:
 * the built-in presets, a design with its area and peak power, a SCALE-Sim
 * configuration as a design, a design in either file format (accelsearch's
 * YAML or a Timeloop v0.4 architecture with its ERT / ART), and a design's
 * Accelergy-style tables.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"

static const char *const class_names[] = {"DRAM", "SRAM", "regfile", "dummy"};
static const char *const compute_names[] = {"mac", "systolic", "vector"};
static const char *const dataflow_names[] = {"os", "ws", "is"};

static void print_arch(const arch_spec *a)
{
    printf("architecture %s, %d nm, %s\n\n", a->name, a->technology_nm,
           CLI_ENG(1.0 / a->cycle_seconds, "Hz"));
    printf("%-22s %-8s %14s %5s %6s %10s %10s %10s %10s %12s\n", "level", "class", "words", "bits",
           "block", "instances", "read", "fill", "update", "area um2");
    for (int i = a->n_levels - 1; i >= 0; i--) {
        const arch_level *l = &a->level[i];
        char words[32];
        if (l->size_words)
            snprintf(words, sizeof words, "%lld", (long long)l->size_words);
        else
            snprintf(words, sizeof words, "-");
        printf("%-22s %-8s %14s %5d %6d %10lld %10s %10s %10s %12s\n", l->name, class_names[l->cls],
               words, l->word_bits, l->block_size, (long long)l->instances,
               CLI_ENG(l->energy.read_pJ * 1e-12, "J"), CLI_ENG(l->energy.fill_pJ * 1e-12, "J"),
               CLI_ENG(l->energy.update_pJ * 1e-12, "J"), CLI_NUM(l->area_um2, NULL));
    }
    const arch_compute *c = &a->compute;
    printf("%-22s %-8s %14s %5d %6s %10lld %10s %10s %10s %12s\n", c->name, compute_names[c->kind],
           "-", c->mac_bits, "-", (long long)c->instances, CLI_ENG(c->mac_pJ * 1e-12, "J"), "", "",
           CLI_NUM(c->area_um2, NULL));
    if (c->kind == ARCH_COMPUTE_SYSTOLIC)
        printf("\nsystolic arrays of %d x %d, %s dataflow\n", c->rows, c->cols,
               dataflow_names[c->dataflow]);
    int64_t macs = c->instances * c->rows * c->cols;
    printf("\n%-20s %lld\n", "MAC units", (long long)macs);
    printf("%-20s %s\n", "peak throughput", CLI_ENG(2.0 * (double)macs / a->cycle_seconds, "OPS"));
    printf("%-20s %s\n", "area", CLI_NUM(arch_area_mm2(a), "mm2"));
    printf("%-20s %s\n", "peak power (TDP)", CLI_ENG(arch_peak_power_W(a), "W"));
}

/* The design as one JSON object: the levels as print_arch lists them
 * (outermost first), the compute, and the totals. */
static void print_arch_json(const arch_spec *a)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "name", a->name);
    cli_json_int_field(&j, "technology_nm", a->technology_nm);
    cli_json_double_field(&j, "clock_MHz", arch_clock_MHz(a));
    cli_json_key(&j, "levels");
    cli_json_begin_array(&j);
    for (int i = a->n_levels - 1; i >= 0; i--) {
        const arch_level *l = &a->level[i];
        cli_json_begin_object(&j);
        cli_json_string_field(&j, "name", l->name);
        cli_json_string_field(&j, "class", class_names[l->cls]);
        cli_json_int_field(&j, "size_words", l->size_words);
        cli_json_int_field(&j, "word_bits", l->word_bits);
        cli_json_int_field(&j, "block_size", l->block_size);
        cli_json_int_field(&j, "instances", l->instances);
        cli_json_double_field(&j, "read_pJ", l->energy.read_pJ);
        cli_json_double_field(&j, "fill_pJ", l->energy.fill_pJ);
        cli_json_double_field(&j, "update_pJ", l->energy.update_pJ);
        cli_json_double_field(&j, "area_um2", l->area_um2);
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    const arch_compute *c = &a->compute;
    cli_json_key(&j, "compute");
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "name", c->name);
    cli_json_string_field(&j, "kind", compute_names[c->kind]);
    cli_json_int_field(&j, "mac_bits", c->mac_bits);
    cli_json_int_field(&j, "instances", c->instances);
    cli_json_double_field(&j, "mac_pJ", c->mac_pJ);
    cli_json_double_field(&j, "area_um2", c->area_um2);
    if (c->kind == ARCH_COMPUTE_SYSTOLIC) {
        cli_json_int_field(&j, "rows", c->rows);
        cli_json_int_field(&j, "cols", c->cols);
        cli_json_string_field(&j, "dataflow", dataflow_names[c->dataflow]);
    }
    cli_json_end_object(&j);
    int64_t macs = c->instances * c->rows * c->cols;
    cli_json_int_field(&j, "mac_units", macs);
    cli_json_double_field(&j, "peak_tops", 2.0 * (double)macs / a->cycle_seconds * 1e-12);
    cli_json_double_field(&j, "area_mm2", arch_area_mm2(a));
    cli_json_double_field(&j, "peak_power_W", arch_peak_power_W(a));
    cli_json_end_object(&j);
}

/* The help of both actions, for `arch --help` and `accelsearch help arch`. */
static cli_command arch_list_command = {
    .name = "arch list",
    .help_for = "arch",
    .synopsis = "arch list",
    .about = "The built-in accelerator presets.\n",
};

static int arch_list(int argc, char **argv)
{
    cli_command cmd = arch_list_command;
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    int n;
    const arch_preset *p = arch_presets(&n);
    printf("%-12s %s\n", "name", "description");
    for (int i = 0; i < n; i++)
        printf("%-12s %s\n", p[i].name, p[i].description);
    return CLI_EXIT_OK;
}

/* `arch show`'s command; json points where --json goes. */
static cli_command arch_show_command(cli_option *options, bool *json)
{
    options[0] = cli_json_option(json);
    return (cli_command){
        .name = "arch show",
        .help_for = "arch",
        .synopsis = "arch show PRESET|FILE.yaml|CONFIG.cfg [--json]",
        .about = "A design's levels, area and peak power (TDP).  FILE.yaml is accelsearch's\n"
                 "format or a Timeloop v0.4 architecture (its ERT/ART beside it).\n",
        .options = options,
        .n_options = 1,
        .max_positional = 1,
    };
}

static int arch_show(int argc, char **argv)
{
    bool json = false;
    cli_option options[1];
    cli_command cmd = arch_show_command(options, &json);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional == 0)
        return cli_usage_error(&cmd, "missing PRESET or FILE.yaml");
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    if (cli_arch_load(cmd.positional[0], &a, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    if (json)
        print_arch_json(&a);
    else
        print_arch(&a);
    return CLI_EXIT_OK;
}

/* `arch from-scalesim`'s command; json and out_path point where --json
 * and -o go. */
static cli_command from_scalesim_command(cli_option *options, bool *json, const char **out_path)
{
    options[0] = cli_string("output", "OUT.yaml", out_path,
                            "also write the design in accelsearch's YAML format");
    options[0].short_name = 'o';
    options[1] = cli_json_option(json);
    return (cli_command){
        .name = "arch from-scalesim",
        .help_for = "arch",
        .synopsis = "arch from-scalesim CONFIG.cfg [-o OUT.yaml] [--json]",
        .about = "Read a SCALE-Sim configuration as a design and print it as `arch show` does:\n"
                 "one systolic array, an SRAM split into its IFMAP, FILTER and OFMAP sizes, and\n"
                 "a DRAM (unlimited under InterfaceBandwidth CALC).  A .cfg is also taken\n"
                 "wherever --arch is (docs/scalesim-import.md).\n",
        .options = options,
        .n_options = 2,
        .max_positional = 1,
    };
}

static int arch_from_scalesim(int argc, char **argv)
{
    bool json = false;
    const char *out_path = NULL;
    cli_option options[2];
    cli_command cmd = from_scalesim_command(options, &json, &out_path);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional == 0)
        return cli_usage_error(&cmd, "missing CONFIG.cfg");
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    if (arch_scalesim_load(cmd.positional[0], &a, &st) != AS_OK ||
        (out_path && arch_save(&a, out_path, &st) != AS_OK))
        return cli_fail(&cmd, &st);
    if (json)
        print_arch_json(&a);
    else
        print_arch(&a);
    if (out_path)
        fprintf(stderr, "accelsearch: wrote %s\n", out_path);
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------------- convert */

static const char *const format_names[] = {"accelsearch", "timeloop", NULL};
enum { FORMAT_ACCELSEARCH, FORMAT_TIMELOOP };

/* `arch convert`'s command; format points where --to goes. */
static cli_command convert_command(cli_option *options, int *format)
{
    options[0] = cli_enum("to", format, format_names,
                          "the format of OUT: accelsearch's YAML, or a Timeloop v0.4\n"
                          "architecture with OUT's stem + .ERT.yaml / .ART.yaml beside it");
    return (cli_command){
        .name = "arch convert",
        .help_for = "arch",
        .synopsis = "arch convert IN OUT --to accelsearch|timeloop",
        .about = "Write a design (a preset, accelsearch's YAML, a Timeloop v0.4 architecture\n"
                 "or a SCALE-Sim .cfg) in either format.  To Timeloop: the architecture tree,\n"
                 "keep constraints as architecture_constraints, and Accelergy-style ERT and\n"
                 "ART tables from accelsearch's energy and area model, so that timeloop-model\n"
                 "evaluates the design; what Timeloop cannot say (systolic arrays, vector\n"
                 "units, sparse formats, split capacities, ...) is refused, naming it\n"
                 "(docs/timeloop-semantics.md, section 8.1).\n",
        .options = options,
        .n_options = 1,
        .max_positional = 2,
    };
}

/* OUT's stem (OUT without its last extension) + suffix, into buf. */
static void stem_path(const char *out, const char *suffix, char *buf, size_t size)
{
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(slash ? slash + 1 : out, '.');
    int stem_length = (int)(dot ? (size_t)(dot - out) : strlen(out));
    snprintf(buf, size, "%.*s%s", stem_length, out, suffix);
}

static int arch_convert(int argc, char **argv)
{
    int format = -1;
    cli_option options[1];
    cli_command cmd = convert_command(options, &format);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional < 2)
        return cli_usage_error(&cmd, "expected IN and OUT");
    if (format < 0)
        return cli_usage_error(&cmd, "missing --to accelsearch|timeloop");
    const char *out = cmd.positional[1];
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    char ert[4096], art[4096];
    stem_path(out, ".ERT.yaml", ert, sizeof ert);
    stem_path(out, ".ART.yaml", art, sizeof art);
    if (cli_arch_load(cmd.positional[0], &a, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    if (format == FORMAT_ACCELSEARCH
            ? arch_save(&a, out, &st) != AS_OK
            : map_timeloop_save_arch(&a, out, &st) != AS_OK ||
                  map_timeloop_save_arch_tables(&a, ert, art, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    if (format == FORMAT_ACCELSEARCH)
        cli_note("wrote %s", out);
    else
        cli_note("wrote %s, %s, %s", out, ert, art);
    return CLI_EXIT_OK;
}

/* `arch ert`'s command; out_path and art_path point where -o and --art go. */
static cli_command ert_command(cli_option *options, const char **out_path, const char **art_path)
{
    options[0] = cli_string("output", "ERT.yaml", out_path, "where the ERT goes (default: stdout)");
    options[0].short_name = 'o';
    options[1] = cli_string("art", "ART.yaml", art_path, "also write the ART (areas) there");
    return (cli_command){
        .name = "arch ert",
        .help_for = "arch",
        .synopsis = "arch ert DESIGN [-o ERT.yaml] [--art ART.yaml]",
        .about = "A design's energy per action (Accelergy's ERT: read, write, update and leak\n"
                 "per storage level, compute per MAC) and area per instance (ART) as accelsearch\n"
                 "costs them, named as `arch convert --to timeloop` names the components.\n",
        .options = options,
        .n_options = 2,
        .max_positional = 1,
    };
}

static int arch_ert(int argc, char **argv)
{
    const char *out_path = "-", *art_path = NULL;
    cli_option options[2];
    cli_command cmd = ert_command(options, &out_path, &art_path);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (cmd.n_positional == 0)
        return cli_usage_error(&cmd, "missing DESIGN");
    arch_spec a;
    as_status st;
    as_status_clear(&st);
    if (cli_arch_load(cmd.positional[0], &a, &st) != AS_OK ||
        map_timeloop_save_arch_tables(&a, out_path, art_path, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    return CLI_EXIT_OK;
}

static void print_arch_help(FILE *out)
{
    bool json;
    const char *out_path;
    cli_option options[2];
    cli_command show = arch_show_command(options, &json);
    cli_print_help(&arch_list_command, out);
    fputc('\n', out);
    cli_print_help(&show, out);
    fputc('\n', out);
    cli_command import = from_scalesim_command(options, &json, &out_path);
    cli_print_help(&import, out);
    int format;
    const char *art_path;
    fputc('\n', out);
    cli_command convert = convert_command(options, &format);
    cli_print_help(&convert, out);
    fputc('\n', out);
    cli_command ert = ert_command(options, &out_path, &art_path);
    cli_print_help(&ert, out);
}

int cli_arch(int argc, char **argv)
{
    static const cli_action actions[] = {
        {"list", arch_list},       {"show", arch_show}, {"from-scalesim", arch_from_scalesim},
        {"convert", arch_convert}, {"ert", arch_ert},   {NULL, NULL}};
    return cli_dispatch("arch", actions, print_arch_help, argc, argv);
}
