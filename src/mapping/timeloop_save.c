/*
 * timeloop_save.c -- write a map_timeloop_case as a timeloop-model input
 * (map_timeloop_save) and its energies and areas as Accelergy ERT / ART
 * tables (map_timeloop_save_tables), in the v0.4 flattened format that
 * timeloop_io.c reads: map_timeloop_load(input, ERT, ART) of what these
 * write gives back the same architecture, problem and mapping, and so the
 * same map_evaluate numbers, and `timeloop-model input.yaml ERT.yaml
 * ART.yaml` evaluates the same design.
 *
 * The architecture becomes one tree node (the arch name) whose `local`
 * list holds the storage levels outermost first and then the MACs, each
 * named "level[1..instances]"; table entries are "arch.level[1..n]".  The
 * problem keeps its Timeloop dimension names (dim_names), which must be
 * single letters (Timeloop's permutation strings spell one letter per
 * dimension), listed in an order that reads back to the same slots (see
 * dimension_order).  Projection coefficients other than 1 are written as the
 * stride / dilation coefficient of the same value, or as an extra
 * coefficient "coef<value>".  Every level gets a temporal directive listing
 * all dimensions (so that its permutation is complete), a spatial one when
 * it has fanout, and a datatype one with its keep and bypass lists.
 *
 * A case made from a network layer (map_timeloop_layer_case) also gets an
 * `accelsearch` section, which Timeloop ignores: the tensors' precisions
 * per data space, the DRAM bytes the layer moves outside its loop nest (a
 * conv's bias) and the DRAM interface (bandwidth, energy per bit, written
 * exactly).  With it map_timeloop_evaluate charges the layer what
 * map_network_evaluate charged, to the bit: Timeloop's format alone holds
 * only the hardware's word widths, so fp32 tensors on 16-bit words would
 * read back at 16 bits in DRAM and the bias would be lost.
 *
 * Not expressible, and refused: compute that is not independent MACs
 * (systolic arrays, vectors) and so a mapping's group packing, capacities split between data spaces
 * (a split that gives room to one data space only is written as the level's size), a bounded level
 * whose capacity is not a whole number of blocks, an unbounded level other than DRAM, an unnamed
 * dimension with a bound above 1, sparse formats or MAC zero handling (docs/sparse.md; Sparseloop
 * takes them in a file of its own).  Not written (Timeloop has no place for them): per-hop wire
 * energies, DRAM channels and bandwidth, the problem kind (a Timeloop problem reads back as a
 * convolution), bottom / right padding (Timeloop ignores padding; Hpad and
 * Wpad carry the top / left amounts), a network without multicast.
 *
 * A design alone (map_timeloop_save_arch, `arch convert --to timeloop`) is
 * the same tree with the same ERT / ART writer (write_tables), plus what a
 * design needs and a case does not: architecture_constraints for the keep
 * constraints and single-data-space capacities, and an accelsearch_arch
 * section (Timeloop ignores it) with the DRAM interface, native batch,
 * hop energies, single-data-space levels (`split`) and unicast levels.
 * A design also refuses floating-point MACs, capacities split among data
 * spaces, loop constraints and a network without multicast below a level
 * with fanout (docs/timeloop-semantics.md, section 8.1).
 */
#include "mapping.h"
#include "timeloop_private.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Letters a dimension name may be (one of them). */
#define DIM_LETTERS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/* Where output goes, and the case being written. */
typedef struct writer {
    FILE *f;
    const map_timeloop_case *c; /* NULL when writing a design alone */
    const arch_spec *a;         /* the architecture: c's, or the design */
} writer;

static void put(writer *w, const char *fmt, ...) AS_PRINTF(2, 3);
static void put(writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(w->f, fmt, ap);
    va_end(ap);
}

/* A YAML single-quoted scalar for any name (quotes doubled). */
static void put_quoted(writer *w, const char *text)
{
    fputc('\'', w->f);
    for (const char *s = text; *s; s++) {
        if (*s == '\'')
            fputc('\'', w->f);
        fputc(*s, w->f);
    }
    fputc('\'', w->f);
}

/* key: value, a real. */
static void put_real(writer *w, const char *indent, const char *key, double value)
{
    char buf[AS_DOUBLE_TEXT_BYTES];
    put(w, "%s%s: %s\n", indent, key, as_format_double(value, buf));
}

/* ------------------------------------------------------------ checking */

/* Timeloop class names, one per level class. */
static const char *const class_names[] = {
    [ARCH_CLASS_DRAM] = "DRAM",
    [ARCH_CLASS_SRAM] = "SRAM",
    [ARCH_CLASS_REGFILE] = "regfile",
    [ARCH_CLASS_DUMMY] = "dummy_storage",
};

/* Whether the dimension in slot d is one of the problem's. */
static bool dim_used(const map_timeloop_case *c, int d)
{
    return c->dim_names[d][0] != '\0';
}

/* Refuse what the format cannot say of the architecture itself, with or
 * without a mapping: compute other than independent MACs, sparse formats
 * and zero handling. */
static as_code check_arch_expressible(const arch_spec *a, const char *path, as_status *st)
{
    if (a->n_levels < 1 || a->n_levels > ARCH_MAX_LEVELS)
        return as_fail(st, AS_EINVAL, "%s: %d storage levels", path, a->n_levels);
    if (a->compute.kind != ARCH_COMPUTE_MAC)
        return as_fail(st, AS_EINVAL,
                       "%s: compute '%s' is not independent MACs, which Timeloop cannot describe",
                       path, a->compute.name);
    if (arch_is_sparse(a)) /* Sparseloop's separate sparse_optimizations are not written */
        return as_fail(st, AS_EINVAL,
                       "%s: '%s' stores data compressed or handles zeros on its MACs, which "
                       "timeloop-model's input cannot describe",
                       path, a->name);
    return AS_OK;
}

/* Refuse what the format cannot say (see the top of the file). */
static as_code check_expressible(const map_timeloop_case *c, const char *path, as_status *st)
{
    const arch_spec *a = &c->arch;
    as_code rc = check_arch_expressible(a, path, st);
    if (rc != AS_OK)
        return rc;
    if (c->mapping.n_levels != a->n_levels)
        return as_fail(st, AS_EINVAL, "%s: the mapping's levels do not match the architecture's",
                       path);
    if (c->mapping.group_pack > 1) /* a systolic choice: only reachable from a bad mapping */
        return as_fail(st, AS_EINVAL,
                       "%s: groups packed %lld per array, which Timeloop cannot describe", path,
                       (long long)c->mapping.group_pack);
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *level = &a->level[i];
        /* A split that gives room to one data space only (Eyeriss's spads)
         * is that capacity for that data space: written as the level's
         * size, it evaluates the same. */
        int split_parts = 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            split_parts += level->size_words_by_ds[ds] > 0;
        if (split_parts > 1)
            return as_fail(st, AS_EINVAL, "%s: level '%s': capacity split per data space", path,
                           level->name);
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            if (split_parts && !level->size_words_by_ds[ds] && c->mapping.level[i].keep[ds])
                return as_fail(st, AS_EINVAL, "%s: level '%s' keeps %s, which has no room there",
                               path, level->name, c->problem.ds[ds].name);
            if (level->cls == ARCH_CLASS_DUMMY && c->mapping.level[i].keep[ds])
                return as_fail(st, AS_EINVAL, "%s: level '%s' is a dummy container and keeps %s",
                               path, level->name, c->problem.ds[ds].name);
        }
        if ((unsigned)level->cls >= sizeof class_names / sizeof class_names[0] ||
            level->block_size < 1 || level->size_words % level->block_size != 0 ||
            (level->size_words == 0 && level->cls != ARCH_CLASS_DRAM))
            return as_fail(st, AS_EINVAL,
                           "%s: level '%s': capacity %lld words is not a whole number of %d-word "
                           "blocks (or is unbounded below DRAM)",
                           path, level->name, (long long)level->size_words, level->block_size);
        for (int d = 0; d < WL_NDIMS && arch_fanout(a, i) == 1; d++)
            if (c->mapping.level[i].spatial[d] != 1)
                return as_fail(st, AS_EINVAL, "%s: level '%s' has no fanout for spatial loops",
                               path, level->name);
    }
    for (int d = 0; d < WL_NDIMS; d++) {
        const char *name = c->dim_names[d];
        if (dim_used(c, d) && (name[1] || !strchr(DIM_LETTERS, name[0])))
            return as_fail(st, AS_EINVAL, "%s: dimension name '%s' is not a single letter", path,
                           name);
        if (!dim_used(c, d) && c->problem.bound[d] != 1)
            return as_fail(st, AS_EINVAL, "%s: dimension slot %d has bound %lld and no name", path,
                           d, (long long)c->problem.bound[d]);
    }
    return AS_OK;
}

/* -------------------------------------------------------- architecture */

/* A bandwidth key, left out when the level states none (0: unlimited). */
static void put_bandwidth(writer *w, const char *indent, const char *key, double words_per_cycle)
{
    if (words_per_cycle > 0)
        put_real(w, indent, key, words_per_cycle);
}

/* "name[1..instances]" */
static void instance_name(char *buf, size_t size, const char *name, int64_t instances)
{
    snprintf(buf, size, "%s[1..%lld]", name, (long long)instances);
}

/* One storage level as a component of the local list. */
static void put_level(writer *w, const arch_level *level)
{
    const char *ind = "          ";
    char name[ARCH_NAME_BYTES + 32];
    instance_name(name, sizeof name, level->name, level->instances);
    put(w, "      - name: ");
    put_quoted(w, name);
    put(w, "\n        class: %s\n        attributes:\n", class_names[level->cls]);
    if (level->size_words)
        put(w, "%sdepth: %lld\n", ind, (long long)(level->size_words / level->block_size));
    put(w, "%swidth: %lld\n", ind,
        (long long)level->block_size * level->word_bits * level->cluster_size);
    put(w, "%sdatawidth: %d\n%sblock_size: %d\n%scluster_size: %d\n", ind, level->word_bits, ind,
        level->block_size, ind, level->cluster_size);
    put(w, "%smeshX: %d\n%smeshY: %d\n", ind, level->mesh_x, ind, level->mesh_y);
    put_real(w, ind, "multiple_buffering", level->multiple_buffering);
    put_bandwidth(w, ind, "read_bandwidth", level->read_bandwidth);
    put_bandwidth(w, ind, "write_bandwidth", level->write_bandwidth);
    put_bandwidth(w, ind, "shared_bandwidth", level->shared_bandwidth);
    put(w, "%sreduction_supported: %s\n", ind, level->spatial_reduction ? "true" : "false");
    if (level->cls == ARCH_CLASS_DRAM) {
        put(w, "%stype: ", ind);
        put_quoted(w, w->a->dram.type);
        put(w, "\n");
    }
}

/* The architecture: one node with every component in its local list. */
static void put_architecture(writer *w)
{
    const arch_spec *a = w->a;
    char buf[AS_DOUBLE_TEXT_BYTES], name[ARCH_NAME_BYTES + 32];
    put(w, "architecture:\n  version: '0.4'\n  subtree:\n  - name: ");
    put_quoted(w, a->name[0] ? a->name : "system");
    put(w, "\n    attributes:\n      version: '0.4'\n      technology: %dnm\n", a->technology_nm);
    put(w, "      global_cycle_seconds: %s\n    local:\n", as_format_double(a->cycle_seconds, buf));
    for (int i = a->n_levels - 1; i >= 0; i--)
        put_level(w, &a->level[i]);
    instance_name(name, sizeof name, a->compute.name[0] ? a->compute.name : "mac",
                  a->compute.instances);
    put(w, "      - name: ");
    put_quoted(w, name);
    put(w, "\n        class: intmac\n        attributes:\n          datawidth: %d\n",
        a->compute.mac_bits);
    put(w, "          meshX: %d\n          meshY: %d\n", a->compute.mesh_x, a->compute.mesh_y);
}

/* ------------------------------------------------------------- problem */

/* The named coefficients: Timeloop's four, valued as the problem's
 * strides and dilations, then one per other projection coefficient. */
enum { MAX_NAMED = 4 + WL_NDATASPACES * WL_MAX_DS_RANKS * 2 };
typedef struct coefficients {
    int n;
    char name[MAX_NAMED][24];
    int64_t value[MAX_NAMED];
} coefficients;

/* The name of the coefficient of value v, added when new. */
static const char *coefficient_for(coefficients *k, int64_t v)
{
    for (int i = 0; i < k->n; i++)
        if (k->value[i] == v)
            return k->name[i];
    snprintf(k->name[k->n], sizeof k->name[0], "coef%lld", (long long)v);
    k->value[k->n] = v;
    return k->name[k->n++];
}

static void collect_coefficients(const wl_problem *p, coefficients *k)
{
    static const char *const fixed[] = {"Hstride", "Wstride", "Hdilation", "Wdilation"};
    const int64_t values[] = {p->stride[0], p->stride[1], p->dilation[0], p->dilation[1]};
    k->n = 4;
    for (int i = 0; i < 4; i++) {
        snprintf(k->name[i], sizeof k->name[0], "%s", fixed[i]);
        k->value[i] = values[i];
    }
    for (int d = 0; d < WL_NDATASPACES; d++)
        for (int r = 0; r < p->ds[d].n_ranks; r++)
            for (int t = 0; t < p->ds[d].ranks[r].n_terms; t++)
                if (p->ds[d].ranks[r].terms[t].coef != 1)
                    coefficient_for(k, p->ds[d].ranks[r].terms[t].coef);
}

/* Whether listing the slots in order[0 .. n) gives every name its slot
 * back when read (map_tl_assign_slots). */
static bool order_keeps_slots(const map_timeloop_case *c, const uint8_t *order, int n)
{
    const char *names[WL_NDIMS] = {NULL};
    wl_dim slots[WL_NDIMS];
    for (int i = 0; i < n; i++)
        names[i] = c->dim_names[order[i]];
    map_tl_assign_slots(names, n, slots);
    for (int i = 0; i < n; i++)
        if (slots[i] != order[i])
            return false;
    return true;
}

/* The order to list the problem's dimensions in (their slots into order,
 * their count into *n; false when no order gives every name its slot back).
 * Reading sets the default loop order from it, which the spatial order of
 * a level without fanout keeps (no directive is written for it); for a
 * case read by map_timeloop_load that order is the shape's.  So: that
 * order when it keeps the slots, else the slots in ascending order, those
 * named after themselves first. */
static bool dimension_order(const map_timeloop_case *c, int *n, uint8_t order[WL_NDIMS])
{
    const arch_spec *a = &c->arch;
    int level = 0;
    while (level < a->n_levels && arch_fanout(a, level) > 1)
        level++;
    *n = 0;
    if (level < a->n_levels) {
        for (int k = 0; k < WL_NDIMS; k++)
            if (dim_used(c, c->mapping.level[level].spatial_order[k]))
                order[(*n)++] = c->mapping.level[level].spatial_order[k];
        if (order_keeps_slots(c, order, *n))
            return true;
    }
    *n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int d = 0; d < WL_NDIMS; d++) {
            const char *names[1] = {c->dim_names[d]};
            wl_dim own;
            map_tl_assign_slots(names, 1, &own);
            if (dim_used(c, d) && (own == (wl_dim)d) == (pass == 0))
                order[(*n)++] = (uint8_t)d;
        }
    }
    return order_keeps_slots(c, order, *n);
}

/* The problem: shape (dimensions in dimension_order, coefficients, data
 * spaces with their projections) and instance (bounds, padding,
 * densities; coefficients take their defaults). */
static void put_problem(writer *w, const uint8_t *dims, int n_dims)
{
    const map_timeloop_case *c = w->c;
    const wl_problem *p = &c->problem;
    coefficients k;
    collect_coefficients(p, &k);
    put(w, "problem:\n  version: '0.4'\n  shape:\n    name: ");
    put_quoted(w, c->problem_name[0] ? c->problem_name : "problem");
    put(w, "\n    dimensions: [");
    for (int i = 0; i < n_dims; i++)
        put(w, "%s%s", i ? ", " : "", c->dim_names[dims[i]]);
    put(w, "]\n    coefficients:\n");
    for (int i = 0; i < k.n; i++)
        put(w, "    - name: %s\n      default: %lld\n", k.name[i], (long long)k.value[i]);
    put(w, "    data_spaces:\n");
    for (int d = 0; d < WL_NDATASPACES; d++) {
        const wl_dataspace *ds = &p->ds[d];
        put(w, "    - name: %s\n      projection: [", ds->name);
        for (int r = 0; r < ds->n_ranks; r++) {
            put(w, "%s[", r ? ", " : "");
            for (int t = 0; t < ds->ranks[r].n_terms; t++) {
                const wl_proj_term *term = &ds->ranks[r].terms[t];
                put(w, "%s[%s", t ? ", " : "", c->dim_names[term->dim]);
                if (term->coef != 1)
                    put(w, ", %s", coefficient_for(&k, term->coef));
                put(w, "]");
            }
            put(w, "]");
        }
        put(w, "]\n      read_write: %s\n", ds->read_write ? "true" : "false");
    }
    put(w, "  instance:\n");
    for (int d = 0; d < WL_NDIMS; d++)
        if (dim_used(c, d))
            put(w, "    %s: %lld\n", c->dim_names[d], (long long)p->bound[d]);
    put(w, "    Hpad: %lld\n    Wpad: %lld\n    densities: {", (long long)p->pad[0],
        (long long)p->pad[1]);
    const char *sep = "";
    for (int d = 0; d < WL_NDATASPACES; d++) {
        char buf[AS_DOUBLE_TEXT_BYTES];
        if (p->ds[d].density != 1.0) {
            put(w, "%s%s: %s", sep, p->ds[d].name, as_format_double(p->ds[d].density, buf));
            sep = ", ";
        }
    }
    put(w, "}\n");
}

/* The layer context of a case made from a network layer (see
 * map_timeloop_case): what map_network_evaluate charges beyond the loop
 * nest.  Timeloop ignores the section; timeloop_io.c reads it back. */
static void put_layer_context(writer *w)
{
    const map_timeloop_case *c = w->c;
    char buf[AS_DOUBLE_TEXT_BYTES];
    if (!c->is_layer)
        return;
    put(w, "accelsearch:\n  tensor_bits: {");
    for (int d = 0; d < WL_NDATASPACES; d++)
        put(w, "%s%s: %d", d ? ", " : "", c->problem.ds[d].name, c->problem.ds[d].bits);
    put(w, "}\n  outside_dram_bytes: %lld\n", (long long)c->outside_dram_bytes);
    put(w, "  dram_bandwidth_GBps: %s\n", as_format_double(c->arch.dram.bandwidth_GBps, buf));
    put(w, "  dram_pJ_per_bit: %s\n", as_format_double(c->arch.dram.energy_pJ_per_bit, buf));
}

/* ------------------------------------------------------------- mapping */

/* The loop part of a directive: factors and permutation in the given
 * order (innermost first), problem dimensions only; returns how many of
 * the first `split` entries of the order are problem dimensions (the
 * split as the written permutation counts it). */
static int put_loops(writer *w, const int64_t factor[WL_NDIMS], const uint8_t order[WL_NDIMS],
                     int split)
{
    const map_timeloop_case *c = w->c;
    int written_split = 0;
    put(w, "  factors: ");
    for (int k = 0, sep = 0; k < WL_NDIMS; k++)
        if (dim_used(c, order[k]))
            put(w, "%s%s=%lld", sep++ ? " " : "", c->dim_names[order[k]],
                (long long)factor[order[k]]);
    put(w, "\n  permutation: ");
    for (int k = 0; k < WL_NDIMS; k++) {
        if (dim_used(c, order[k])) {
            put(w, "%s", c->dim_names[order[k]]);
            written_split += k < split;
        }
    }
    put(w, "\n");
    return written_split;
}

/* Directives for level i: temporal, spatial (when it has fanout) and
 * datatype. */
static void put_level_mapping(writer *w, int i)
{
    const arch_spec *a = w->a;
    const map_level *m = &w->c->mapping.level[i];
    put(w, "- target: ");
    put_quoted(w, a->level[i].name);
    put(w, "\n  type: temporal\n");
    put_loops(w, m->temporal, m->temporal_order, 0);
    if (arch_fanout(a, i) > 1) {
        put(w, "- target: ");
        put_quoted(w, a->level[i].name);
        put(w, "\n  type: spatial\n");
        int split = put_loops(w, m->spatial, m->spatial_order, m->spatial_split);
        put(w, "  split: %d\n", split);
    }
    put(w, "- target: ");
    put_quoted(w, a->level[i].name);
    put(w, "\n  type: datatype\n");
    for (int keep = 1; keep >= 0; keep--) {
        put(w, "  %s: [", keep ? "keep" : "bypass");
        for (int d = 0, sep = 0; d < WL_NDATASPACES; d++)
            if (m->keep[d] == keep)
                put(w, "%s%s", sep++ ? ", " : "", w->c->problem.ds[d].name);
        put(w, "]\n");
    }
}

/* -------------------------------------------------------------- files */

/* Open path for writing ("-": standard output). */
static as_code open_output(const char *path, FILE **f, as_status *st)
{
    *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    return *f ? AS_OK : as_fail(st, AS_EIO, "%s: cannot open for writing", path);
}

/* Close f (flush standard output), reporting any write error. */
static as_code close_output(FILE *f, const char *path, as_status *st)
{
    bool failed = ferror(f) != 0;
    failed |= (f == stdout ? fflush(f) : fclose(f)) != 0;
    return failed ? as_fail(st, AS_EIO, "%s: write error", path) : AS_OK;
}

as_code map_timeloop_save(const map_timeloop_case *c, const char *path, as_status *st)
{
    uint8_t dims[WL_NDIMS];
    int n_dims;
    as_code rc = check_expressible(c, path, st);
    if (rc == AS_OK && !dimension_order(c, &n_dims, dims))
        rc = as_fail(st, AS_EINVAL, "%s: no order of the dimension names reads back as their slots",
                     path);
    writer w = {.c = c, .a = &c->arch};
    if (rc == AS_OK)
        rc = open_output(path, &w.f, st);
    if (rc != AS_OK)
        return rc;
    put(&w, "# timeloop-model input written by accelsearch\n");
    put_architecture(&w);
    put_problem(&w, dims, n_dims);
    put(&w, "mapping:\n");
    for (int i = 0; i < c->arch.n_levels; i++)
        put_level_mapping(&w, i);
    put_layer_context(&w);
    return close_output(w.f, path, st);
}

/* A file name from a layer name: [A-Za-z0-9_.-] kept, the rest '_'. */
static void layer_file_name(const char *name, int32_t layer, char *out, size_t size)
{
    size_t n = 0;
    for (; name[n] && n + 1 < size; n++) {
        char ch = name[n];
        bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
        out[n] = plain ? ch : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "layer%d", (int)layer);
}

as_code map_timeloop_layer_case(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                                int32_t layer, map_timeloop_case *out, as_status *st)
{
    if (layer < 0 || layer >= r->n_layers || r->layers[layer].problem_class < 0 ||
        !r->layers[layer].mapped)
        return as_fail(st, AS_EINVAL, "layer %d is not a mapped compute layer", (int)layer);
    const map_layer_result *l = &r->layers[layer];
    memset(out, 0, sizeof *out);
    out->arch = *a;
    out->problem = l->problem;
    out->mapping = l->mapping;
    for (int d = 0; d < WL_NDIMS; d++)
        snprintf(out->dim_names[d], sizeof out->dim_names[d], "%s", wl_dim_name((wl_dim)d));
    layer_file_name(g->ops[l->op].name, layer, out->problem_name, sizeof out->problem_name);
    out->is_layer = true;
    out->outside_dram_bytes = map_outside_dram_bytes(g, a, l->op, &l->problem);
    return AS_OK;
}

/* The ERT / ART name of level i (n_levels: the MACs). */
static void table_name(const arch_spec *a, int i, char *buf, size_t size)
{
    char name[ARCH_NAME_BYTES + 32];
    if (i == a->n_levels)
        instance_name(name, sizeof name, a->compute.name[0] ? a->compute.name : "mac",
                      a->compute.instances);
    else
        instance_name(name, sizeof name, a->level[i].name, a->level[i].instances);
    snprintf(buf, size, "%s.%s", a->name[0] ? a->name : "system", name);
}

/* One table entry's name line. */
static void put_table_name(writer *w, int i)
{
    char name[3 * ARCH_NAME_BYTES];
    table_name(w->a, i, name, sizeof name);
    put(w, "  - name: ");
    put_quoted(w, name);
    put(w, "\n");
}

/* The ERT: per level read, write (a fill), update and leak; the MACs'
 * compute.  Dummy containers without energies get no table (like
 * Accelergy's). */
static void put_ert(writer *w)
{
    const arch_spec *a = w->a;
    put(w, "ERT:\n  version: '0.4'\n  tables:\n");
    for (int i = 0; i < a->n_levels; i++) {
        const arch_energy *e = &a->level[i].energy;
        if (a->level[i].cls == ARCH_CLASS_DUMMY && !e->read_pJ && !e->fill_pJ && !e->update_pJ &&
            !e->leak_pJ)
            continue;
        put_table_name(w, i);
        put(w, "    actions:\n");
        const struct {
            const char *action;
            double pJ;
        } actions[] = {{"read", e->read_pJ},
                       {"write", e->fill_pJ},
                       {"update", e->update_pJ},
                       {"leak", e->leak_pJ}};
        for (size_t k = 0; k < sizeof actions / sizeof actions[0]; k++) {
            put(w, "    - name: %s\n", actions[k].action);
            put_real(w, "      ", "energy", actions[k].pJ);
        }
    }
    put_table_name(w, a->n_levels);
    put(w, "    actions:\n    - name: compute\n");
    put_real(w, "      ", "energy", a->compute.mac_pJ);
}

/* The ART: area of one instance of every component. */
static void put_art(writer *w)
{
    const arch_spec *a = w->a;
    put(w, "ART:\n  version: '0.4'\n  tables:\n");
    for (int i = 0; i <= a->n_levels; i++) {
        put_table_name(w, i);
        put_real(w, "    ", "area", i == a->n_levels ? a->compute.area_um2 : a->level[i].area_um2);
    }
}

/* Write a's ERT and ART (either path may be NULL): the one writer of
 * tables, for a case and for a design alone. */
static as_code write_tables(const arch_spec *a, const char *ert_path, const char *art_path,
                            as_status *st)
{
    const char *paths[2] = {ert_path, art_path};
    void (*const writers[2])(writer *) = {put_ert, put_art};
    as_code rc = AS_OK;
    for (int i = 0; rc == AS_OK && i < 2; i++) {
        writer w = {.a = a};
        if (!paths[i])
            continue;
        rc = open_output(paths[i], &w.f, st);
        if (rc != AS_OK)
            break;
        writers[i](&w);
        rc = close_output(w.f, paths[i], st);
    }
    return rc;
}

as_code map_timeloop_save_tables(const map_timeloop_case *c, const char *ert_path,
                                 const char *art_path, as_status *st)
{
    for (int i = 0; i < 2; i++) {
        const char *path = i ? art_path : ert_path;
        if (path && check_expressible(c, path, st) != AS_OK)
            return st->code;
    }
    return write_tables(&c->arch, ert_path, art_path, st);
}

/* ------------------------------------------------------ a design alone */

/* Timeloop's data space names, by wl_dataspace_id. */
static const char *const ds_names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

/* Whether level l's constraints say anything besides keep / bypass
 * (factors, orders, splits, utilisation), which the design writer does
 * not write. */
static bool has_loop_constraints(const arch_constraints *k)
{
    arch_constraints keep_only = {0};
    memcpy(keep_only.keep, k->keep, sizeof keep_only.keep);
    return memcmp(&keep_only, k, sizeof keep_only) != 0;
}

/* Refuse what a design file cannot say (see the top of the file): besides
 * check_arch_expressible, floating-point MACs (Timeloop's intmac), a
 * network without multicast, capacities split among several data spaces,
 * loop constraints, and capacities that are not whole blocks. */
static as_code check_design_expressible(const arch_spec *a, const char *path, as_status *st)
{
    as_code rc = check_arch_expressible(a, path, st);
    if (rc != AS_OK)
        return rc;
    if (a->compute.mac_number != ARCH_NUMBER_INT)
        return as_fail(st, AS_EINVAL,
                       "%s: compute '%s' has floating-point MACs; Timeloop's intmac is integer",
                       path, a->compute.name);
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        int split_parts = 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            split_parts += l->size_words_by_ds[ds] > 0;
        const char *why = split_parts > 1 ? "its capacity is split among data spaces"
                          : has_loop_constraints(&l->constraints)
                              ? "it has loop constraints (factors, orders or splits)"
                          : !l->multicast && arch_fanout(a, i) > 1
                              ? "its network does not multicast (Timeloop's does)"
                          : l->block_size < 1 || l->size_words % l->block_size != 0
                              ? "its capacity is not a whole number of blocks"
                          : l->size_words == 0 && l->cls != ARCH_CLASS_DRAM
                              ? "it is unbounded and not DRAM"
                              : NULL;
        if (why)
            return as_fail(st, AS_EINVAL, "%s: level '%s': %s, which Timeloop cannot describe",
                           path, l->name, why);
    }
    return AS_OK;
}

/* The keep constraints of the levels (and, for a level whose capacity is
 * all one data space's, the bypass of the others) as Timeloop's
 * architecture_constraints datatype directives. */
static void put_design_constraints(writer *w)
{
    const arch_spec *a = w->a;
    bool any = false;
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        bool split = false, keep[WL_NDATASPACES], bypass[WL_NDATASPACES], listed = false;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            split |= l->size_words_by_ds[ds] > 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            keep[ds] = l->constraints.keep[ds] == ARCH_KEEP_ALWAYS;
            bypass[ds] =
                l->cls != ARCH_CLASS_DUMMY && (l->constraints.keep[ds] == ARCH_KEEP_NEVER ||
                                               (split && l->size_words_by_ds[ds] == 0));
            listed |= keep[ds] || bypass[ds];
        }
        if (!listed)
            continue;
        if (!any)
            put(w, "architecture_constraints:\n  targets:\n");
        any = true;
        put(w, "  - target: ");
        put_quoted(w, l->name);
        put(w, "\n    type: datatype\n");
        for (int k = 0; k < 2; k++) {
            const bool *list = k ? bypass : keep;
            put(w, "    %s: [", k ? "bypass" : "keep");
            for (int ds = 0, sep = 0; ds < WL_NDATASPACES; ds++)
                if (list[ds])
                    put(w, "%s%s", sep++ ? ", " : "", ds_names[ds]);
            put(w, "]\n");
        }
    }
}

/* What Timeloop's format has no place for (timeloop_io.c reads it back):
 * the DRAM interface, the native batch, the wire energy per hop and the
 * levels whose capacity is one data space's (`split`: Timeloop sees the
 * others bypass them, put_design_constraints) and the levels without
 * multicast (`unicast`: all have fanout 1, where it makes no difference). */
static void put_design_extras(writer *w)
{
    const arch_spec *a = w->a;
    put(w, "accelsearch_arch:\n");
    put_real(w, "  ", "dram_bandwidth_GBps", a->dram.bandwidth_GBps);
    put_real(w, "  ", "dram_pJ_per_bit", a->dram.energy_pJ_per_bit);
    put_real(w, "  ", "dram_interface_pJ_per_bit", a->dram.interface_pJ_per_bit);
    put(w, "  dram_channels: %d\n  native_batch: %d\n  hop_pJ:\n",
        a->dram.channels > 0 ? a->dram.channels : 1, a->native_batch > 0 ? a->native_batch : 1);
    for (int i = 0; i < a->n_levels; i++) {
        char buf[AS_DOUBLE_TEXT_BYTES];
        put(w, "    ");
        put_quoted(w, a->level[i].name);
        put(w, ": %s\n", as_format_double(a->level[i].hop_pJ, buf));
    }
    put(w, "  split: {");
    for (int i = 0, sep = 0; i < a->n_levels; i++) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            if (a->level[i].size_words_by_ds[ds] > 0) {
                put(w, "%s", sep++ ? ", " : "");
                put_quoted(w, a->level[i].name);
                put(w, ": %s", ds_names[ds]);
            }
        }
    }
    put(w, "}\n  unicast: [");
    for (int i = 0, sep = 0; i < a->n_levels; i++) {
        if (!a->level[i].multicast) {
            put(w, "%s", sep++ ? ", " : "");
            put_quoted(w, a->level[i].name);
        }
    }
    put(w, "]\n");
}

/* The design alone: its tree (a split that gives room to one data space
 * only written as that data space's capacity), its constraints and what
 * Timeloop cannot say (put_design_extras). */
as_code map_timeloop_save_arch(const arch_spec *a, const char *path, as_status *st)
{
    as_code rc = check_design_expressible(a, path, st);
    writer w = {.a = a};
    if (rc == AS_OK)
        rc = open_output(path, &w.f, st);
    if (rc != AS_OK)
        return rc;
    put(&w, "# Timeloop v0.4 architecture written by accelsearch (arch convert); energies\n"
            "# and areas in the ERT / ART beside it, what Timeloop ignores in accelsearch_arch\n");
    put_architecture(&w);
    put_design_constraints(&w);
    put_design_extras(&w);
    return close_output(w.f, path, st);
}

as_code map_timeloop_save_arch_tables(const arch_spec *a, const char *ert_path,
                                      const char *art_path, as_status *st)
{
    for (int i = 0; i < 2; i++) {
        const char *path = i ? art_path : ert_path;
        if (path && check_design_expressible(a, path, st) != AS_OK)
            return st->code;
    }
    return write_tables(a, ert_path, art_path, st);
}
