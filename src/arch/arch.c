/*
 * arch.c -- validation of an arch_spec, and the fanout between levels.
 *
 * Every message names what is wrong the way a user wrote it: the level (or
 * the compute unit, the DRAM, the arch) by name, the key, and the value,
 * e.g. "level 'GlobalBuffer': block_size = 0 must be positive".
 */
#include "arch.h"

#include <math.h>
#include <stddef.h>

static const char *const DATASPACE_NAMES[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

/* ------------------------------------------------------ value checks */

/* Fail unless an integer value is positive.  what/name say whose key it
 * is ("level", "GlobalBuffer"). */
static as_code check_positive(const char *what, const char *name, const char *key, int64_t value,
                              as_status *st)
{
    if (value > 0)
        return AS_OK;
    return as_fail(st, AS_EINVAL, "%s '%s': %s = %lld must be positive", what, name, key,
                   (long long)value);
}

/* Fail unless a real value is finite and not negative (energies, areas,
 * bandwidths: 0 means "not given" or "unlimited", never "free of cost by
 * mistake" -- a negative one would silently reward a design). */
static as_code check_nonnegative(const char *what, const char *name, const char *key, double value,
                                 as_status *st)
{
    if (isfinite(value) && value >= 0)
        return AS_OK;
    return as_fail(st, AS_EINVAL, "%s '%s': %s = %g must be a non-negative number", what, name, key,
                   value);
}

/* Fail unless mesh_x * mesh_y equals instances (each already positive). */
static as_code check_mesh(const char *what, const char *name, int mesh_x, int mesh_y,
                          int64_t instances, as_status *st)
{
    if ((int64_t)mesh_x * mesh_y == instances)
        return AS_OK;
    return as_fail(st, AS_EINVAL,
                   "%s '%s': mesh_x * mesh_y = %d * %d differs from instances = %lld", what, name,
                   mesh_x, mesh_y, (long long)instances);
}

/* ------------------------------------------------------------ sparse */

/* The storage formats of level i (arch.h, arch_ds_format): known formats,
 * widths in 0..64 where the format has them (0 = the default), none for a
 * data space the level cannot hold (a dummy holds nothing). */
static as_code check_formats(const arch_level *l, as_status *st)
{
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const arch_ds_format *f = &l->format[ds];
        const char *dn = DATASPACE_NAMES[ds];
        if (f->format < ARCH_FORMAT_UNCOMPRESSED || f->format > ARCH_FORMAT_COO)
            return as_fail(st, AS_EINVAL, "level '%s': %s format = %d is not a format", l->name, dn,
                           (int)f->format);
        if (f->format != ARCH_FORMAT_UNCOMPRESSED && !arch_level_can_hold(l, (wl_dataspace_id)ds))
            return as_fail(st, AS_EINVAL, "level '%s': %s format %s, but the level cannot hold %s",
                           l->name, dn, arch_format_name(f->format), dn);
        bool has_bits = f->format == ARCH_FORMAT_RLE || f->format == ARCH_FORMAT_CSR ||
                        f->format == ARCH_FORMAT_COO;
        if (f->metadata_bits < 0 || f->metadata_bits > 64 || (!has_bits && f->metadata_bits))
            return as_fail(st, AS_EINVAL, "level '%s': %s %s metadata_bits = %d %s", l->name, dn,
                           arch_format_name(f->format), f->metadata_bits,
                           has_bits ? "must be 0 (default) to 64" : "must be 0 (no such width)");
        bool has_offsets = f->format == ARCH_FORMAT_CSR;
        if (f->offset_bits < 0 || f->offset_bits > 64 || (!has_offsets && f->offset_bits))
            return as_fail(st, AS_EINVAL, "level '%s': %s %s offset_bits = %d %s", l->name, dn,
                           arch_format_name(f->format), f->offset_bits,
                           has_offsets ? "must be 0 (default) to 64" : "must be 0 (only csr)");
    }
    return AS_OK;
}

/* Compute-side zero handling (arch.h, arch_zero_action): with an action,
 * at least one operand checked and never the outputs, a gated fraction in
 * [0, 1] (only when gating); skipping not on a systolic array, and each
 * checked operand compressed at the innermost level that may keep it. */
static as_code check_zero_handling(const arch_spec *a, as_status *st)
{
    const arch_compute *c = &a->compute;
    const char *n = c->name;
    if (c->zero_action < ARCH_ZERO_NONE || c->zero_action > ARCH_ZERO_SKIP)
        return as_fail(st, AS_EINVAL, "compute '%s': zero_action = %d is not an action", n,
                       (int)c->zero_action);
    bool any = c->zero_operand[WL_DS_WEIGHTS] || c->zero_operand[WL_DS_INPUTS];
    if (c->zero_operand[WL_DS_OUTPUTS])
        return as_fail(st, AS_EINVAL, "compute '%s': zero operands: outputs are not an operand", n);
    if (c->zero_action == ARCH_ZERO_NONE && (any || c->gated_mac_fraction != 0))
        return as_fail(st, AS_EINVAL,
                       "compute '%s': zero operands or a gated fraction without a zero action", n);
    if (c->zero_action != ARCH_ZERO_NONE && !any)
        return as_fail(st, AS_EINVAL, "compute '%s': zero action %s checks no operand", n,
                       arch_zero_action_name(c->zero_action));
    if (!(c->gated_mac_fraction >= 0 && c->gated_mac_fraction <= 1) ||
        (c->gated_mac_fraction != 0 && c->zero_action != ARCH_ZERO_GATE))
        return as_fail(st, AS_EINVAL,
                       "compute '%s': gated_mac_fraction = %g must be in [0, 1], and only gating "
                       "has one",
                       n, c->gated_mac_fraction);
    if (c->zero_action != ARCH_ZERO_SKIP)
        return AS_OK;
    if (c->kind == ARCH_COMPUTE_SYSTOLIC)
        return as_fail(st, AS_EINVAL,
                       "compute '%s': a systolic array moves its PEs in lockstep and cannot skip a "
                       "MAC (gate instead)",
                       n);
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        if (!c->zero_operand[ds])
            continue;
        int l = 0;
        while (l < a->n_levels - 1 && !arch_level_can_hold(&a->level[l], (wl_dataspace_id)ds))
            l++;
        if (a->level[l].format[ds].format == ARCH_FORMAT_UNCOMPRESSED)
            return as_fail(st, AS_EINVAL,
                           "compute '%s': skipping zero %s needs them compressed at level '%s', "
                           "the innermost that feeds the MACs",
                           n, DATASPACE_NAMES[ds], a->level[l].name);
    }
    return AS_OK;
}

/* ----------------------------------------------------------- levels */

/* The real-valued keys of a level that must be non-negative, by offset,
 * so that one loop checks them all. */
static const struct {
    const char *key;
    size_t offset;
} LEVEL_REAL_KEYS[] = {
    {"read_bandwidth", offsetof(arch_level, read_bandwidth)},
    {"write_bandwidth", offsetof(arch_level, write_bandwidth)},
    {"shared_bandwidth", offsetof(arch_level, shared_bandwidth)},
    {"read_pJ", offsetof(arch_level, energy.read_pJ)},
    {"fill_pJ", offsetof(arch_level, energy.fill_pJ)},
    {"update_pJ", offsetof(arch_level, energy.update_pJ)},
    {"leak_pJ", offsetof(arch_level, energy.leak_pJ)},
    {"area_um2", offsetof(arch_level, area_um2)},
    {"hop_pJ", offsetof(arch_level, hop_pJ)},
};

/* Capacity of level i: non-negative per data space, summing to size_words
 * when split; positive unless the level is the backing store (which may
 * be unbounded) or a dummy (which keeps nothing). */
static as_code check_capacity(const arch_spec *a, int i, as_status *st)
{
    const arch_level *l = &a->level[i];
    int64_t split_words = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        int64_t words = l->size_words_by_ds[ds];
        if (words < 0 || !as_add_i64(split_words, words, &split_words))
            return as_fail(st, AS_EINVAL, "level '%s': size_words_by_ds[%s] = %lld is out of range",
                           l->name, DATASPACE_NAMES[ds], (long long)words);
    }
    if (split_words > 0 && split_words != l->size_words)
        return as_fail(
            st, AS_EINVAL,
            "level '%s': size_words = %lld differs from the sum of size_words_by_ds = %lld",
            l->name, (long long)l->size_words, (long long)split_words);
    if (l->size_words < 0)
        return as_fail(st, AS_EINVAL, "level '%s': size_words = %lld must not be negative", l->name,
                       (long long)l->size_words);
    bool may_be_unbounded = i == a->n_levels - 1 || l->cls == ARCH_CLASS_DUMMY;
    if (l->size_words == 0 && !may_be_unbounded)
        return as_fail(st, AS_EINVAL,
                       "level '%s': size_words = 0 must be positive (only the backing store, the "
                       "last level, may be unbounded)",
                       l->name);
    return AS_OK;
}

/* Instances and mesh of level i must split evenly over the instances
 * below it (the next inner level, or the compute units under level 0). */
static as_code check_fanout(const arch_spec *a, int i, as_status *st)
{
    const arch_level *l = &a->level[i];
    const char *below_name = i == 0 ? a->compute.name : a->level[i - 1].name;
    int64_t below = i == 0 ? a->compute.instances : a->level[i - 1].instances;
    int64_t below_x = i == 0 ? arch_compute_mesh_x(a) : a->level[i - 1].mesh_x;
    int64_t below_y = i == 0 ? arch_compute_mesh_y(a) : a->level[i - 1].mesh_y;
    if (below % l->instances != 0)
        return as_fail(
            st, AS_EINVAL,
            "level '%s': instances = %lld must divide the %lld instances of '%s' below it", l->name,
            (long long)l->instances, (long long)below, below_name);
    if (below_x % l->mesh_x != 0 || below_y % l->mesh_y != 0)
        return as_fail(st, AS_EINVAL,
                       "level '%s': mesh %d x %d must divide the mesh %lld x %lld of '%s' below it",
                       l->name, l->mesh_x, l->mesh_y, (long long)below_x, (long long)below_y,
                       below_name);
    return AS_OK;
}

/* Everything about level i alone, then its fanout (which needs the level
 * below already checked, hence the caller validates compute first). */
static as_code check_level(const arch_spec *a, int i, as_status *st)
{
    const arch_level *l = &a->level[i];
    const char *n = l->name;
    if (n[0] == '\0')
        return as_fail(st, AS_EINVAL, "level %d: name is empty", i);
    if (l->cls < ARCH_CLASS_DRAM || l->cls > ARCH_CLASS_DUMMY)
        return as_fail(st, AS_EINVAL, "level '%s': class = %d is not a storage class", n,
                       (int)l->cls);
    if (i == a->n_levels - 1 && l->cls == ARCH_CLASS_DUMMY)
        return as_fail(st, AS_EINVAL,
                       "level '%s': the backing store (last level) cannot be a dummy", n);
    as_code rc;
    if ((rc = check_positive("level", n, "word_bits", l->word_bits, st)) ||
        (rc = check_positive("level", n, "block_size", l->block_size, st)) ||
        (rc = check_positive("level", n, "cluster_size", l->cluster_size, st)) ||
        (rc = check_positive("level", n, "instances", l->instances, st)) ||
        (rc = check_positive("level", n, "mesh_x", l->mesh_x, st)) ||
        (rc = check_positive("level", n, "mesh_y", l->mesh_y, st)) ||
        (rc = check_mesh("level", n, l->mesh_x, l->mesh_y, l->instances, st)) ||
        (rc = check_capacity(a, i, st)) || (rc = check_formats(l, st)))
        return rc;
    if (!(l->multiple_buffering >= 1) || !isfinite(l->multiple_buffering))
        return as_fail(st, AS_EINVAL, "level '%s': multiple_buffering = %g must be at least 1", n,
                       l->multiple_buffering);
    for (size_t k = 0; k < sizeof LEVEL_REAL_KEYS / sizeof LEVEL_REAL_KEYS[0]; k++) {
        double value = *(const double *)((const char *)l + LEVEL_REAL_KEYS[k].offset);
        if ((rc = check_nonnegative("level", n, LEVEL_REAL_KEYS[k].key, value, st)))
            return rc;
    }
    return check_fanout(a, i, st);
}

/* ---------------------------------------------------- compute, DRAM */

/* The compute unit: a known kind and dataflow, a positive mesh of
 * instances, a shape that fits its kind, a precision the MAC tables
 * cover, and non-negative energy and area. */
static as_code check_compute(const arch_compute *c, as_status *st)
{
    const char *n = c->name;
    if (n[0] == '\0')
        return as_fail(st, AS_EINVAL, "compute: name is empty");
    if (c->kind < ARCH_COMPUTE_MAC || c->kind > ARCH_COMPUTE_VECTOR)
        return as_fail(st, AS_EINVAL, "compute '%s': kind = %d is not a compute kind", n,
                       (int)c->kind);
    if (c->dataflow < ARCH_DATAFLOW_OS || c->dataflow > ARCH_DATAFLOW_IS)
        return as_fail(st, AS_EINVAL, "compute '%s': dataflow = %d is not a dataflow", n,
                       (int)c->dataflow);
    as_code rc;
    if ((rc = check_positive("compute", n, "instances", c->instances, st)) ||
        (rc = check_positive("compute", n, "mesh_x", c->mesh_x, st)) ||
        (rc = check_positive("compute", n, "mesh_y", c->mesh_y, st)) ||
        (rc = check_mesh("compute", n, c->mesh_x, c->mesh_y, c->instances, st)) ||
        (rc = check_positive("compute", n, "rows", c->rows, st)) ||
        (rc = check_positive("compute", n, "cols", c->cols, st)) ||
        (rc = check_positive("compute", n, "mac_bits", c->mac_bits, st)) ||
        (rc = check_nonnegative("compute", n, "mac_pJ", c->mac_pJ, st)) ||
        (rc = check_nonnegative("compute", n, "area_um2", c->area_um2, st)))
        return rc;
    if (c->kind == ARCH_COMPUTE_MAC && (c->rows != 1 || c->cols != 1))
        return as_fail(st, AS_EINVAL,
                       "compute '%s': rows x cols = %d x %d must be 1 x 1 for a MAC unit", n,
                       c->rows, c->cols);
    if (c->kind == ARCH_COMPUTE_VECTOR && c->cols != 1)
        return as_fail(st, AS_EINVAL,
                       "compute '%s': cols = %d must be 1 for a vector unit (rows are its lanes)",
                       n, c->cols);
    if (c->mac_number < ARCH_NUMBER_INT || c->mac_number > ARCH_NUMBER_BF16 ||
        arch_mac_number_pJ(c->mac_bits, c->mac_number, 45) < 0)
        return as_fail(st, AS_EINVAL,
                       "compute '%s': mac_bits = %d with number format %d is not in the MAC tables",
                       n, c->mac_bits, (int)c->mac_number);
    return AS_OK;
}

/* The DRAM: a type the energy table knows (or none), non-negative
 * channels, bandwidth and energy. */
static as_code check_dram(const arch_dram *d, as_status *st)
{
    if (d->type[0] != '\0' && arch_dram_pJ_per_bit(d->type) < 0)
        return as_fail(st, AS_EINVAL, "dram: type = '%s' is not in the DRAM energy table", d->type);
    as_code rc;
    if (d->channels < 0)
        return as_fail(st, AS_EINVAL, "dram: channels = %d must not be negative", d->channels);
    if ((rc = check_nonnegative("dram", d->type, "bandwidth_GBps", d->bandwidth_GBps, st)) ||
        (rc = check_nonnegative("dram", d->type, "energy_pJ_per_bit", d->energy_pJ_per_bit, st)) ||
        (rc = check_nonnegative("dram", d->type, "interface_pJ_per_bit", d->interface_pJ_per_bit,
                                st)))
        return rc;
    return AS_OK;
}

/* ---------------------------------------------------------- public */

as_code arch_validate(const arch_spec *a, as_status *st)
{
    const char *n = a->name;
    if (n[0] == '\0')
        return as_fail(st, AS_EINVAL, "arch: name is empty");
    if (a->n_levels < 1 || a->n_levels > ARCH_MAX_LEVELS)
        return as_fail(st, AS_EINVAL, "arch '%s': n_levels = %d must be between 1 and %d", n,
                       a->n_levels, ARCH_MAX_LEVELS);
    if (a->technology_nm < ARCH_NODE_MIN_NM || a->technology_nm > ARCH_NODE_MAX_NM)
        return as_fail(
            st, AS_EINVAL,
            "arch '%s': technology_nm = %d is outside the %d..%d nm the energy tables cover", n,
            a->technology_nm, ARCH_NODE_MIN_NM, ARCH_NODE_MAX_NM);
    if (!(a->cycle_seconds > 0) || !isfinite(a->cycle_seconds))
        return as_fail(st, AS_EINVAL, "arch '%s': cycle_seconds = %g must be positive", n,
                       a->cycle_seconds);
    as_code rc;
    if ((rc = check_positive("arch", n, "native_batch", a->native_batch, st)) ||
        (rc = check_compute(&a->compute, st)) || (rc = check_dram(&a->dram, st)))
        return rc;
    for (int i = 0; i < a->n_levels; i++)
        if ((rc = check_level(a, i, st)))
            return rc;
    return check_zero_handling(a, st);
}

bool arch_level_can_hold(const arch_level *l, wl_dataspace_id ds)
{
    bool split = false;
    for (int i = 0; i < WL_NDATASPACES; i++)
        split |= l->size_words_by_ds[i] > 0;
    return l->cls != ARCH_CLASS_DUMMY && l->constraints.keep[ds] != ARCH_KEEP_NEVER &&
           (!split || l->size_words_by_ds[ds] > 0);
}

/* Lanes of one compute instance that a mapping can unroll over (see
 * arch_compute_mesh_x): a vector unit's rows, else 1. */
static int64_t compute_lanes(const arch_compute *c)
{
    return c->kind == ARCH_COMPUTE_VECTOR && c->rows > 0 ? c->rows : 1;
}

int64_t arch_compute_mesh_x(const arch_spec *a)
{
    return (int64_t)a->compute.mesh_x * compute_lanes(&a->compute);
}

int64_t arch_compute_mesh_y(const arch_spec *a)
{
    return a->compute.mesh_y;
}

int64_t arch_fanout(const arch_spec *a, int i)
{
    if (i < 0 || i >= a->n_levels || i >= ARCH_MAX_LEVELS || a->level[i].instances <= 0)
        return 0;
    int64_t below =
        i == 0 ? a->compute.instances * compute_lanes(&a->compute) : a->level[i - 1].instances;
    return below / a->level[i].instances;
}

void arch_fanout_xy(const arch_spec *a, int i, int64_t *x, int64_t *y)
{
    *x = *y = 0;
    if (i < 0 || i >= a->n_levels || i >= ARCH_MAX_LEVELS)
        return;
    int64_t below_x = i == 0 ? arch_compute_mesh_x(a) : a->level[i - 1].mesh_x;
    int64_t below_y = i == 0 ? arch_compute_mesh_y(a) : a->level[i - 1].mesh_y;
    *x = below_x / (a->level[i].mesh_x > 0 ? a->level[i].mesh_x : 1);
    *y = below_y / (a->level[i].mesh_y > 0 ? a->level[i].mesh_y : 1);
}

wl_precision arch_mac_precision(const arch_spec *a)
{
    if (a->compute.mac_bits <= 8)
        return WL_PREC_INT8;
    if (a->compute.mac_bits <= 16)
        return a->compute.mac_number == ARCH_NUMBER_BF16 ? WL_PREC_BF16 : WL_PREC_FP16;
    return WL_PREC_FP32;
}
