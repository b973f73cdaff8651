/*
 * cmd_arch.c -- `accelsearch arch list|show`: the built-in presets and a
 * design with its area and peak power.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"

static const char arch_usage[] = "usage: accelsearch arch list\n"
                                 "       accelsearch arch show PRESET|FILE.yaml [--json]\n";

static const char *const class_names[] = {"DRAM", "SRAM", "regfile", "dummy"};
static const char *const compute_names[] = {"mac", "systolic", "vector"};
static const char *const dataflow_names[] = {"os", "ws", "is"};

static void print_arch(const arch_spec *a)
{
    printf("architecture %s, %d nm, %.0f MHz\n\n", a->name, a->technology_nm,
           1e-6 / a->cycle_seconds);
    printf("%-22s %-8s %14s %5s %6s %10s %10s %10s %10s %12s\n", "level", "class", "words", "bits",
           "block", "instances", "read pJ", "fill pJ", "update pJ", "area um2");
    for (int i = a->n_levels - 1; i >= 0; i--) {
        const arch_level *l = &a->level[i];
        char words[32];
        if (l->size_words)
            snprintf(words, sizeof words, "%lld", (long long)l->size_words);
        else
            snprintf(words, sizeof words, "-");
        printf("%-22s %-8s %14s %5d %6d %10lld %10.4g %10.4g %10.4g %12.4g\n", l->name,
               class_names[l->cls], words, l->word_bits, l->block_size, (long long)l->instances,
               l->energy.read_pJ, l->energy.fill_pJ, l->energy.update_pJ, l->area_um2);
    }
    const arch_compute *c = &a->compute;
    printf("%-22s %-8s %14s %5d %6s %10lld %10.4g %10s %10s %12.4g\n", c->name,
           compute_names[c->kind], "-", c->mac_bits, "-", (long long)c->instances, c->mac_pJ, "",
           "", c->area_um2);
    if (c->kind == ARCH_COMPUTE_SYSTOLIC)
        printf("\nsystolic arrays of %d x %d, %s dataflow\n", c->rows, c->cols,
               dataflow_names[c->dataflow]);
    int64_t macs = c->instances * c->rows * c->cols;
    printf("\n%-20s %lld\n", "MAC units", (long long)macs);
    printf("%-20s %.3f TOPS\n", "peak throughput", 2.0 * (double)macs / a->cycle_seconds * 1e-12);
    printf("%-20s %.4f mm2\n", "area", arch_area_mm2(a));
    printf("%-20s %.4f W\n", "peak power (TDP)", arch_peak_power_W(a));
}

int cli_arch(int argc, char **argv)
{
    if (argc == 1 && strcmp(argv[0], "list") == 0) {
        int n;
        const arch_preset *p = arch_presets(&n);
        printf("%-12s %s\n", "name", "description");
        for (int i = 0; i < n; i++)
            printf("%-12s %s\n", p[i].name, p[i].description);
        return CLI_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[0], "show") == 0) {
        arch_spec a;
        as_status st;
        as_status_clear(&st);
        if (arch_load(argv[1], &a, &st) != AS_OK) {
            fprintf(stderr, "accelsearch: %s\n", st.message);
            return cli_exit_for(st.code);
        }
        print_arch(&a);
        return CLI_EXIT_OK;
    }
    fputs(arch_usage, stderr);
    return CLI_EXIT_USAGE;
}
