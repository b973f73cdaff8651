/*
 * format.c -- sparse storage formats and zero handling of a design
 * (arch.h, "sparse data formats"; the cost model is mapping/sparse.c and
 * docs/sparse.md): their names, and the named configurations a study
 * applies to any design.
 */
#include "arch.h"

#include <stdio.h>
#include <string.h>

const char *arch_format_name(arch_format f)
{
    static const char *const names[ARCH_FORMAT_COUNT] = {
        [ARCH_FORMAT_UNCOMPRESSED] = "uncompressed",
        [ARCH_FORMAT_BITMASK] = "bitmask",
        [ARCH_FORMAT_RLE] = "rle",
        [ARCH_FORMAT_CSR] = "csr",
        [ARCH_FORMAT_COO] = "coo",
    };
    return (unsigned)f < ARCH_FORMAT_COUNT ? names[f] : "?";
}

const char *arch_zero_action_name(arch_zero_action z)
{
    static const char *const names[] = {
        [ARCH_ZERO_NONE] = "none", [ARCH_ZERO_GATE] = "gate", [ARCH_ZERO_SKIP] = "skip"};
    return (unsigned)z <= ARCH_ZERO_SKIP ? names[z] : "?";
}

bool arch_is_sparse(const arch_spec *a)
{
    if (a->compute.zero_action != ARCH_ZERO_NONE)
        return true;
    for (int l = 0; l < a->n_levels; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (a->level[l].format[ds].format != ARCH_FORMAT_UNCOMPRESSED)
                return true;
    return false;
}

/* A named configuration: the weights' format, where (every level that
 * may keep them, or the DRAM only), and what the MACs do with a zero
 * weight.  Named by DATA_FORMAT_NAMES, in the same order. */
typedef struct data_format {
    arch_format weights;
    bool dram_only;
    arch_zero_action macs;
} data_format;

static const char *const DATA_FORMAT_NAMES[] = {"dense", "bitmask", "rle", "csr", NULL};
static const data_format DATA_FORMATS[] = {
    {ARCH_FORMAT_UNCOMPRESSED, false, ARCH_ZERO_NONE},
    {ARCH_FORMAT_BITMASK, false, ARCH_ZERO_GATE},
    {ARCH_FORMAT_RLE, true, ARCH_ZERO_GATE},
    {ARCH_FORMAT_CSR, false, ARCH_ZERO_SKIP},
};
enum { N_DATA_FORMATS = sizeof DATA_FORMATS / sizeof DATA_FORMATS[0] };

const char *const *arch_data_format_names(int *count)
{
    *count = N_DATA_FORMATS;
    return DATA_FORMAT_NAMES;
}

/* Apply f to a copy, refusing what the design cannot do; *a changes only
 * when the result validates. */
static as_code apply(arch_spec *a, const char *name, const data_format *f, as_status *st)
{
    if (f->weights == ARCH_FORMAT_UNCOMPRESSED)
        return AS_OK;
    arch_spec b = *a;
    int backing = b.n_levels - 1; /* validated: 0 .. ARCH_MAX_LEVELS - 1 */
    if (f->dram_only && b.level[backing].cls != ARCH_CLASS_DRAM)
        return as_fail(st, AS_EINVAL,
                       "arch '%s': data format %s codes the weights in DRAM, and the design has "
                       "no DRAM level",
                       a->name, name);
    if (f->macs == ARCH_ZERO_SKIP && b.compute.kind == ARCH_COMPUTE_SYSTOLIC)
        return as_fail(st, AS_EINVAL,
                       "arch '%s': data format %s skips zero weights, and the systolic array '%s' "
                       "moves its PEs in lockstep and cannot skip a MAC (bitmask gates instead)",
                       a->name, name, b.compute.name);
    for (int l = 0; l < b.n_levels && l < ARCH_MAX_LEVELS; l++)
        if ((f->dram_only ? l == backing : arch_level_can_hold(&b.level[l], WL_DS_WEIGHTS)))
            b.level[l].format[WL_DS_WEIGHTS] = (arch_ds_format){.format = f->weights};
    b.compute.zero_action = f->macs;
    memset(b.compute.zero_operand, 0, sizeof b.compute.zero_operand);
    b.compute.zero_operand[WL_DS_WEIGHTS] = true;
    b.compute.gated_mac_fraction = 0;
    as_status why;
    as_status_clear(&why);
    if (arch_validate(&b, &why))
        return as_fail(st, AS_EINVAL, "arch '%s': data format %s: %s", a->name, name, why.message);
    *a = b;
    return AS_OK;
}

as_code arch_apply_data_format(arch_spec *a, const char *name, as_status *st)
{
    as_status spare;
    st = as_status_or(st, &spare);
    char valid[64] = "";
    size_t used = 0;
    for (int i = 0; i < N_DATA_FORMATS; i++) {
        if (name && strcmp(name, DATA_FORMAT_NAMES[i]) == 0)
            return apply(a, name, &DATA_FORMATS[i], st);
        used += (size_t)snprintf(valid + used, sizeof valid - used, "%s%s", i ? ", " : "",
                                 DATA_FORMAT_NAMES[i]);
    }
    return as_fail(st, AS_EINVAL, "unknown data format '%s' (valid: %s)", name ? name : "", valid);
}
