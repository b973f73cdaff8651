/*
 * cmd_arch.c -- `accelsearch arch list|show|from-scalesim`: the built-in
 * presets, a design with its area and peak power, and a SCALE-Sim
 * configuration as a design.
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
        .about = "A design's levels, area and peak power (TDP).\n",
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
    if (arch_load(cmd.positional[0], &a, &st) != AS_OK)
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
}

int cli_arch(int argc, char **argv)
{
    static const cli_action actions[] = {{"list", arch_list},
                                         {"show", arch_show},
                                         {"from-scalesim", arch_from_scalesim},
                                         {NULL, NULL}};
    return cli_dispatch("arch", actions, print_arch_help, argc, argv);
}
