/*
 * around.c -- a design space centred on a design (template AROUND): the
 * design as given (a preset, our YAML, a Timeloop architecture: anything
 * map_design_load reads), some of its fields varied over a range around
 * their values, the others kept.
 *
 * The parameters, each mapped onto fields of an arch_spec (named as the
 * built-in templates name the same hardware):
 *   pe_x, pe_y      the compute units' mesh (spatial fanout of the array,
 *                   compute.mesh_x / mesh_y); every storage level with one
 *                   instance per compute unit (a per-PE buffer) follows;
 *   sa_x, sa_y      columns and rows of each systolic array (systolic
 *                   designs only);
 *   rf_bytes        bytes per instance of the innermost on-chip storage
 *                   level (a split per data space scaled in proportion);
 *   glb_bytes       the same of the outermost on-chip level;
 *   offchip_bytes   the DRAM's capacity (designs whose DRAM has one);
 *   dram_mb_per_s   the DRAM's bandwidth in MB/s (1e6 bytes per second;
 *                   every bandwidth of the DRAM level scaled in proportion).
 * Each varied parameter takes the values of a grid through the centre's
 * value, from centre / range to centre x range (range 4 by default):
 * steps of one PE, of one access of the level (block x word bytes), of
 * one DRAM word, of 1 MB/s.  A level whose capacity or a compute unit
 * whose shape changes gets its energies and area from the tables again
 * (arch_apply_tables): the centre's own figures (a Timeloop ERT, say) hold
 * for its own sizes only.  Bandwidths per instance, words per access (a
 * systolic array's buffers keep their width when sa_x grows) and the
 * wires' energy per hop are kept.
 */
#include "space_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum {
    AR_PE_X,
    AR_PE_Y,
    AR_SA_X,
    AR_SA_Y,
    AR_RF_BYTES,
    AR_GLB_BYTES,
    AR_OFFCHIP_BYTES,
    AR_DRAM_MB_PER_S,
    AR_N_PARAMS
};

#define AR_HIGHEST ((int64_t)1 << 50)

/* The grid of every parameter is set per space (se_space_around): the
 * template only bounds it (granule 1; 0 allowed as the fixed value of a
 * parameter that does not apply). */
#define AR_PARAM(n, m)                                                                             \
    {                                                                                              \
        .range = {.name = n, .kind = SE_PARAM_INT, .min = 1, .max = 1, .stride = 1}, .lowest = 0,  \
        .highest = AR_HIGHEST, .granule = 1, .deflt = 0, .meaning = m                              \
    }

static const se_template_param AROUND_PARAMS[AR_N_PARAMS] = {
    [AR_PE_X] = AR_PARAM("pe_x", "compute units along X (and per-PE levels with them)"),
    [AR_PE_Y] = AR_PARAM("pe_y", "compute units along Y"),
    [AR_SA_X] = AR_PARAM("sa_x", "columns of each systolic array"),
    [AR_SA_Y] = AR_PARAM("sa_y", "rows of each systolic array"),
    [AR_RF_BYTES] = AR_PARAM("rf_bytes", "bytes per instance of the innermost on-chip level"),
    [AR_GLB_BYTES] = AR_PARAM("glb_bytes", "bytes per instance of the outermost on-chip level"),
    [AR_OFFCHIP_BYTES] = AR_PARAM("offchip_bytes", "bytes of DRAM"),
    [AR_DRAM_MB_PER_S] = AR_PARAM("dram_mb_per_s", "DRAM bandwidth, MB/s"),
};

/* The innermost (outermost when !inner) on-chip level of a that stores
 * data, or -1. */
static int onchip_level(const arch_spec *a, bool inner)
{
    int found = -1;
    for (int i = 0; i < a->n_levels; i++) {
        arch_class c = a->level[i].cls;
        if (c == ARCH_CLASS_DRAM || c == ARCH_CLASS_DUMMY)
            continue;
        found = i;
        if (inner)
            break;
    }
    return found;
}

/* The DRAM level of a (the last level when it is DRAM), or -1. */
static int dram_level(const arch_spec *a)
{
    int last = a->n_levels - 1;
    return last >= 0 && a->level[last].cls == ARCH_CLASS_DRAM ? last : -1;
}

static int64_t level_bytes(const arch_level *l)
{
    return l->size_words * l->word_bits / 8;
}

static double dram_words_per_cycle(const arch_level *l)
{
    return l->shared_bandwidth > 0 ? l->shared_bandwidth : l->read_bandwidth;
}

/* Parameter k's value on design a, and its grid step; 0 when it does not
 * apply to a. */
static int64_t design_value(const arch_spec *a, int k, int64_t *step)
{
    int inner = onchip_level(a, true), outer = onchip_level(a, false), dram = dram_level(a);
    *step = 1;
    switch (k) {
    case AR_PE_X:
        return a->compute.mesh_x;
    case AR_PE_Y:
        return a->compute.mesh_y;
    case AR_SA_X:
        return a->compute.kind == ARCH_COMPUTE_SYSTOLIC ? a->compute.cols : 0;
    case AR_SA_Y:
        return a->compute.kind == ARCH_COMPUTE_SYSTOLIC ? a->compute.rows : 0;
    case AR_RF_BYTES:
    case AR_GLB_BYTES: {
        int i = k == AR_RF_BYTES ? inner : outer;
        if (i < 0)
            return 0;
        const arch_level *l = &a->level[i];
        int64_t access = (int64_t)l->block_size * l->word_bits / 8;
        *step = access > 0 ? access : 1;
        return level_bytes(l);
    }
    case AR_OFFCHIP_BYTES:
        if (dram < 0)
            return 0;
        *step = a->level[dram].word_bits / 8 > 0 ? a->level[dram].word_bits / 8 : 1;
        return level_bytes(&a->level[dram]);
    case AR_DRAM_MB_PER_S:
        if (dram < 0)
            return 0;
        return llround(dram_words_per_cycle(&a->level[dram]) * a->level[dram].word_bits / 8 /
                       a->cycle_seconds / 1e6);
    }
    return 0;
}

/* Level l holding `bytes` per instance (a split per data space scaled in
 * proportion), its energies and area to be taken from the tables again. */
static void set_level_bytes(arch_level *l, int64_t bytes)
{
    int64_t old_words = l->size_words, words = bytes * 8 / l->word_bits, sum = 0;
    bool split = false;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (l->size_words_by_ds[ds] > 0) {
            split = true;
            l->size_words_by_ds[ds] = l->size_words_by_ds[ds] * words / old_words;
            if (l->size_words_by_ds[ds] < 1)
                l->size_words_by_ds[ds] = 1;
            sum += l->size_words_by_ds[ds];
        }
    l->size_words = split ? sum : words;
    l->energy = (arch_energy){0};
    l->area_um2 = 0;
}

/* The compute units' mesh along one side set to n; the levels with one
 * instance per compute unit follow. */
static void set_mesh(arch_spec *a, bool x, int n)
{
    arch_compute *c = &a->compute;
    for (int i = 0; i < a->n_levels; i++) {
        arch_level *l = &a->level[i];
        if (l->instances != c->instances || l->mesh_x != c->mesh_x || l->mesh_y != c->mesh_y)
            continue;
        *(x ? &l->mesh_x : &l->mesh_y) = n;
        l->instances = (int64_t)l->mesh_x * l->mesh_y;
    }
    *(x ? &c->mesh_x : &c->mesh_y) = n;
    c->instances = (int64_t)c->mesh_x * c->mesh_y;
}

/* Parameter k of a set to v (a value design_value says applies). */
static void set_value(arch_spec *a, int k, int64_t v)
{
    int dram = dram_level(a);
    switch (k) {
    case AR_PE_X:
    case AR_PE_Y:
        set_mesh(a, k == AR_PE_X, (int)v);
        break;
    case AR_SA_X:
    case AR_SA_Y:
        *(k == AR_SA_X ? &a->compute.cols : &a->compute.rows) = (int)v;
        a->compute.area_um2 = 0;
        a->compute.pe_reg_pJ = a->compute.pe_acc_reg_pJ = 0;
        a->compute.pe_hop_pJ = a->compute.pe_acc_hop_pJ = 0;
        break;
    case AR_RF_BYTES:
        set_level_bytes(&a->level[onchip_level(a, true)], v);
        break;
    case AR_GLB_BYTES:
        set_level_bytes(&a->level[onchip_level(a, false)], v);
        break;
    case AR_OFFCHIP_BYTES:
        a->level[dram].size_words = v * 8 / a->level[dram].word_bits;
        break;
    case AR_DRAM_MB_PER_S: {
        int64_t step, old = design_value(a, k, &step);
        double f = (double)v / (double)old;
        a->level[dram].shared_bandwidth *= f;
        a->level[dram].read_bandwidth *= f;
        a->level[dram].write_bandwidth *= f;
        a->dram.bandwidth_GBps *= f;
        break;
    }
    }
}

/* The design of a point: the centre with the varied parameters set. */
static void build_around(const se_space *s, const int64_t *value, arch_spec *a)
{
    *a = s->centre;
    bool changed = false;
    for (int i = 0; i < s->n_params; i++) {
        int k = se_template_param_find(&se_around_template, s->param[i].name);
        int64_t step;
        if (k >= 0 && value[k] != design_value(&s->centre, k, &step)) {
            set_value(a, k, value[k]);
            changed = true;
        }
    }
    /* Only what changed is filled again: the centre stays the very design
     * (a field it leaves at zero on purpose stays zero). */
    if (changed)
        arch_apply_tables(a);
}

/* No budget of its own: se_space_around sets them from se_around. */
static void around_limits(se_constraints *c)
{
    *c = (se_constraints){0};
}

#define HASH(x) (d = as_hash_bytes(&(x), sizeof(x), d))

/* The content of level l hashed into d, field by field (the struct has
 * padding, whose bytes a compound literal leaves unspecified). */
static uint64_t level_digest(const arch_level *l, uint64_t d)
{
    d = as_hash_bytes(l->name, strnlen(l->name, sizeof l->name), d);
    HASH(l->cls), HASH(l->size_words), HASH(l->size_words_by_ds), HASH(l->word_bits);
    HASH(l->block_size), HASH(l->cluster_size), HASH(l->instances), HASH(l->mesh_x);
    HASH(l->mesh_y), HASH(l->multiple_buffering), HASH(l->read_bandwidth);
    HASH(l->write_bandwidth), HASH(l->shared_bandwidth), HASH(l->energy.read_pJ);
    HASH(l->energy.fill_pJ), HASH(l->energy.update_pJ), HASH(l->energy.leak_pJ);
    HASH(l->area_um2), HASH(l->multicast), HASH(l->spatial_reduction), HASH(l->hop_pJ);
    const arch_constraints *c = &l->constraints;
    HASH(c->temporal_factor), HASH(c->temporal_max), HASH(c->n_temporal_order);
    HASH(c->temporal_order), HASH(c->spatial_factor), HASH(c->n_spatial_order);
    HASH(c->spatial_order), HASH(c->spatial_split_fixed), HASH(c->spatial_split);
    HASH(c->min_spatial_utilization), HASH(c->keep);
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        HASH(l->format[ds].format), HASH(l->format[ds].metadata_bits),
            HASH(l->format[ds].offset_bits);
    return d;
}

uint64_t se_around_digest(const arch_spec *a, uint64_t d)
{
    d = as_hash_bytes(a->name, strnlen(a->name, sizeof a->name), d);
    HASH(a->technology_nm), HASH(a->cycle_seconds), HASH(a->n_levels), HASH(a->native_batch);
    for (int i = 0; i < a->n_levels; i++)
        d = level_digest(&a->level[i], d);
    const arch_compute *c = &a->compute;
    HASH(c->kind), HASH(c->instances), HASH(c->mesh_x), HASH(c->mesh_y), HASH(c->rows);
    HASH(c->cols), HASH(c->dataflow), HASH(c->mac_bits), HASH(c->mac_number), HASH(c->mac_pJ);
    HASH(c->area_um2), HASH(c->pe_reg_pJ), HASH(c->pe_acc_reg_pJ), HASH(c->pe_hop_pJ);
    HASH(c->pe_acc_hop_pJ), HASH(c->zero_action), HASH(c->zero_operand);
    HASH(c->gated_mac_fraction);
    HASH(a->dram.channels), HASH(a->dram.bandwidth_GBps), HASH(a->dram.energy_pJ_per_bit);
    HASH(a->dram.interface_pJ_per_bit);
    return d;
}

const se_template_def se_around_template = {
    SE_TEMPLATE_AROUND, "around",     0, 0, WL_PREC_FP16, "centre", AR_N_PARAMS, AROUND_PARAMS,
    build_around,       around_limits};

void se_around_param_names(char *buf, size_t size)
{
    se_template_param_names(&se_around_template, buf, size);
}

wl_precision se_design_precision(const arch_spec *a)
{
    const arch_compute *c = &a->compute;
    if (c->mac_number == ARCH_NUMBER_BF16)
        return WL_PREC_BF16;
    if (c->mac_number == ARCH_NUMBER_FP)
        return c->mac_bits > 16 ? WL_PREC_FP32 : WL_PREC_FP16;
    if (c->mac_bits <= 8)
        return WL_PREC_INT8;
    return c->mac_bits > 16 ? WL_PREC_FP32 : WL_PREC_FP16;
}

/* name made a usable space name: letters, digits and "_.+-" kept, any
 * other character as '-', prefixed and cut to fit. */
static void usable_name(const char *prefix, const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (const char *from = prefix; *from && n + 1 < size; from++)
        out[n++] = *from;
    for (const char *from = name; *from && n + 1 < size; from++) {
        char c = *from;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("_.+-", c);
        out[n++] = ok ? c : '-';
    }
    out[n] = '\0';
}

/* Parameter p as the grid of step through centre value v from v / range
 * to v x range, the baseline at v. */
static void around_param(se_param *p, int64_t v, int64_t step, int range, int64_t *baseline)
{
    int64_t lo = (v + range - 1) / range, hi = v * range;
    if (lo < 1)
        lo = 1;
    p->kind = SE_PARAM_INT;
    p->stride = step;
    p->min = v - step * ((v - lo) / step);
    p->max = v + step * ((hi - v) / step);
    p->n_values = (p->max - p->min) / step + 1;
    *baseline = (v - p->min) / step;
}

as_code se_space_around(const arch_spec *centre, const se_around *how, se_space *out, as_status *st)
{
    as_status why;
    as_status_clear(&why);
    if (arch_validate(centre, &why) != AS_OK)
        return as_fail(st, AS_EINVAL, "the design %s: %s", centre->name, why.message);
    if (how->range < 2 || how->range > SE_AROUND_MAX_RANGE)
        return as_fail(st, AS_EINVAL, "range %d: give 2 .. %d", how->range, SE_AROUND_MAX_RANGE);
    se_space_init(out, SE_TEMPLATE_AROUND);
    out->centre = *centre;
    out->around = *how;
    usable_name("around-", centre->name, out->name, sizeof out->name);
    usable_name("", centre->name[0] ? centre->name : "centre", out->baseline_name,
                sizeof out->baseline_name);
    snprintf(out->source, sizeof out->source, "%s", how->source);
    out->technology_nm = centre->technology_nm;
    out->clock_hz = 1.0 / centre->cycle_seconds;
    out->precision = se_design_precision(centre);
    out->limits.max_area_mm2 = how->max_area_mm2;
    out->limits.max_power_W = how->max_power_W;
    for (int k = 0; k < AR_N_PARAMS; k++) {
        int64_t step;
        out->fixed[k] = design_value(centre, k, &step);
    }
    char list[256], names[256];
    snprintf(list, sizeof list, "%s", how->vary);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int k = se_template_param_find(&se_around_template, tok);
        if (k < 0) {
            se_around_param_names(names, sizeof names);
            return as_fail(st, AS_EINVAL, "'%s' is not a parameter of a space around a design (%s)",
                           tok, names);
        }
        int64_t step, v = design_value(centre, k, &step);
        if (v <= 0)
            return as_fail(st, AS_EINVAL, "'%s' does not apply to the design %s (%s)", tok,
                           centre->name,
                           k == AR_SA_X || k == AR_SA_Y ? "its compute units are not systolic"
                           : k == AR_OFFCHIP_BYTES      ? "its DRAM has no capacity"
                                                        : "it has no such level");
        if ((k == AR_RF_BYTES || k == AR_GLB_BYTES) &&
            se_space_find(out, k == AR_RF_BYTES ? "glb_bytes" : "rf_bytes") >= 0 &&
            onchip_level(centre, true) == onchip_level(centre, false))
            return as_fail(st, AS_EINVAL,
                           "rf_bytes and glb_bytes are the same level of the design %s: vary one",
                           centre->name);
        if (out->n_params == SE_MAX_PARAMS)
            return as_fail(st, AS_EINVAL, "too many parameters in '%s'", how->vary);
        se_param *p = &out->param[out->n_params];
        *p = AROUND_PARAMS[k].range;
        around_param(p, v, step, how->range, &out->baseline[out->n_params]);
        out->n_params++;
    }
    if (out->n_params == 0)
        return as_fail(st, AS_EINVAL, "no parameter to vary (give some of them)");
    return se_space_finish(out, st);
}

as_code se_space_around_load(const se_around *how, se_space *out, as_status *st)
{
    arch_spec centre;
    as_status why;
    as_status_clear(&why);
    if (map_design_load(how->source, &centre, NULL, NULL, 0, &why) != AS_OK)
        return as_fail(st, why.code, "the design %s: %s", how->source, why.message);
    return se_space_around(&centre, how, out, st);
}
