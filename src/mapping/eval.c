/*
 * eval.c -- map_evaluate: reads, fills, updates, energy and cycles of a
 * mapping, computed the way timeloop-model computes them (NVlabs/timeloop
 * @4cf6d4c, default switches).  Section numbers (§n) refer to
 * docs/timeloop-semantics.md; nest.c holds the loop-nest
 * analysis (§1-§2), this file the collapse onto storage levels (§4), the
 * buffer model (§5) and the totals (§6).
 *
 * Model assumptions (Timeloop's, for the dense legacy path):
 *  - factors are perfect (they multiply to the bounds), so every working
 *    set of a loop is a translate of one box;
 *  - no link transfers between neighbouring children, no distributed
 *    multicast, no network energy (the wire energy of the reference
 *    designs is zero), no adder or address-generation energy -- except
 *    inside systolic arrays, which Timeloop does not model: there the
 *    level above sees only the words crossing the array's edge, and the
 *    registers and hops inside are the network below level 0 (array.c);
 *  - every level supports in-place reduction of partial sums;
 *  - leakage is charged per utilized instance over the final cycle count;
 *  - densities count only on a design that declares compressed formats or
 *    zero handling (sparse.c, docs/sparse.md); elsewhere every zero is
 *    stored, moved and multiplied.
 */
#include "eval_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const DS_NAME[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

const char *map_validity_name(map_validity v)
{
    static const char *const names[] = {
        [MAP_VALID] = "valid",
        [MAP_INVALID_FACTORS] = "invalid factors",
        [MAP_INVALID_CAPACITY] = "tile exceeds capacity",
        [MAP_INVALID_FANOUT] = "spatial factors exceed fanout",
        [MAP_INVALID_KEEP] = "backing store does not keep every data space",
        [MAP_INVALID_SHAPE] = "malformed mapping",
    };
    if ((unsigned)v < sizeof names / sizeof names[0])
        return names[v];
    return "unknown";
}

/* Record why the mapping cannot run; always returns false so that checks
 * can `return invalid(...)`. */
AS_PRINTF(3, 4)
static bool invalid(map_eval *out, map_validity v, const char *fmt, ...)
{
    va_list ap;
    out->validity = v;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    return false;
}

/* ---------------------------------------------------------------- checks */

static bool is_permutation(const uint8_t order[WL_NDIMS])
{
    unsigned seen = 0;
    for (int i = 0; i < WL_NDIMS; i++) {
        if (order[i] >= WL_NDIMS || (seen & (1u << order[i])))
            return false;
        seen |= 1u << order[i];
    }
    return true;
}

/* Levels agree with the architecture, orders are permutations, splits and
 * factors are in range. */
static bool check_shape(const arch_spec *a, const map_mapping *m, map_eval *out)
{
    if (a->n_levels < 1 || a->n_levels > ARCH_MAX_LEVELS)
        return invalid(out, MAP_INVALID_SHAPE, "architecture has %d levels (1..%d)", a->n_levels,
                       ARCH_MAX_LEVELS);
    if (m->n_levels != a->n_levels)
        return invalid(out, MAP_INVALID_SHAPE, "mapping has %d levels, architecture %d",
                       m->n_levels, a->n_levels);
    for (int l = 0; l < m->n_levels; l++) {
        const map_level *ml = &m->level[l];
        if (!is_permutation(ml->temporal_order) || !is_permutation(ml->spatial_order))
            return invalid(out, MAP_INVALID_SHAPE, "level %d (%s): loop order is not a permutation",
                           l, a->level[l].name);
        if (ml->spatial_split < 0 || ml->spatial_split > WL_NDIMS)
            return invalid(out, MAP_INVALID_SHAPE, "level %d (%s): spatial split %d out of 0..%d",
                           l, a->level[l].name, ml->spatial_split, WL_NDIMS);
        for (int d = 0; d < WL_NDIMS; d++)
            if (ml->temporal[d] < 1 || ml->spatial[d] < 1)
                return invalid(out, MAP_INVALID_FACTORS, "level %d (%s) dim %s: factor %lld < 1", l,
                               a->level[l].name, wl_dim_name((wl_dim)d),
                               (long long)(ml->temporal[d] < 1 ? ml->temporal[d] : ml->spatial[d]));
    }
    return true;
}

/* Per dimension, the temporal and spatial factors of all levels multiply
 * to the problem's bound (perfect factorisation). */
static bool check_factors(const wl_problem *p, const map_mapping *m, map_eval *out)
{
    for (int d = 0; d < WL_NDIMS; d++) {
        int64_t product = 1, bound = p->bound[d] < 1 ? 1 : p->bound[d];
        for (int l = 0; l < m->n_levels && product <= bound; l++) {
            product *= m->level[l].temporal[d];
            if (product <= bound)
                product *= m->level[l].spatial[d];
        }
        if (product != bound)
            return invalid(out, MAP_INVALID_FACTORS,
                           "dim %s: factors multiply to %s%lld, bound is %lld",
                           wl_dim_name((wl_dim)d), product > bound ? "more than " : "",
                           (long long)(product > bound ? bound : product), (long long)bound);
    }
    return true;
}

/* The outermost level (DRAM) is the backing store of every data space. */
static bool check_keep(const arch_spec *a, const map_mapping *m, map_eval *out)
{
    int top = m->n_levels - 1;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (!m->level[top].keep[ds])
            return invalid(out, MAP_INVALID_KEEP,
                           "level %d (%s) %s: the backing store must keep it", top,
                           a->level[top].name, DS_NAME[ds]);
    return true;
}

/* Spatial factors on X (spatial_order[0 .. split)) and on Y must fit the
 * mesh fanout from the level to its children (or to the compute positions:
 * MAC units, systolic arrays, or the lanes of vector units, on X). */
static bool check_fanout(const arch_spec *a, const map_mapping *m, map_eval *out)
{
    for (int l = 0; l < m->n_levels; l++) {
        const map_level *ml = &m->level[l];
        int64_t used[2] = {1, 1};
        for (int i = 0; i < WL_NDIMS; i++)
            used[i >= ml->spatial_split] *= ml->spatial[ml->spatial_order[i]];
        int64_t fanout[2];
        arch_fanout_xy(a, l, &fanout[0], &fanout[1]);
        for (int axis = 0; axis < 2; axis++)
            if (used[axis] > fanout[axis])
                return invalid(out, MAP_INVALID_FANOUT,
                               "level %d (%s): spatial %c factors %lld exceed fanout %lld", l,
                               a->level[l].name, axis ? 'Y' : 'X', (long long)used[axis],
                               (long long)fanout[axis]);
    }
    return true;
}

/* Kept tiles must fit floor(size / multiple_buffering) words, in total or
 * per data space when the level splits its capacity (buffer.cpp). */
static bool check_capacity(const arch_spec *a, const map_mapping *m, map_eval *out)
{
    for (int l = 0; l < m->n_levels; l++) {
        const arch_level *al = &a->level[l];
        double buffering = al->multiple_buffering > 0 ? al->multiple_buffering : 1.0;
        bool split = false;
        int64_t total = 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            split |= al->size_words_by_ds[ds] != 0;
            if (m->level[l].keep[ds])
                total += out->level[l].ds[ds].tile_words;
        }
        for (int ds = 0; split && ds < WL_NDATASPACES; ds++) {
            int64_t tile = m->level[l].keep[ds] ? out->level[l].ds[ds].tile_words : 0;
            int64_t room = (int64_t)floor((double)al->size_words_by_ds[ds] / buffering);
            if (tile > room)
                return invalid(
                    out, MAP_INVALID_CAPACITY,
                    "level %d (%s) %s: tile %lld words exceeds %lld (size %lld / buffering %g)", l,
                    al->name, DS_NAME[ds], (long long)tile, (long long)room,
                    (long long)al->size_words_by_ds[ds], buffering);
        }
        int64_t room = (int64_t)floor((double)al->size_words / buffering);
        if (!split && al->size_words > 0 && total > room)
            return invalid(out, MAP_INVALID_CAPACITY,
                           "level %d (%s): tiles %lld words exceed %lld (size %lld / buffering %g)",
                           l, al->name, (long long)total, (long long)room,
                           (long long)al->size_words, buffering);
    }
    return true;
}

/* ------------------------------------------------- collapse to levels (§4) */

/* One storage level, one data space, as tiling.cpp carries it. */
typedef struct level_traffic {
    int64_t size;        /* tile words (0 once bypassed) */
    int64_t partition;   /* words one instance ever holds */
    double content;      /* accesses by its children: sum of group accesses */
    double parent_share; /* what one instance receives from its parent */
    int n_groups;
    nest_group group[NEST_MAX_GROUPS];
    double accesses[NEST_MAX_GROUPS]; /* parent reads per multicast group class */
} level_traffic;

static double total_accesses(const level_traffic *t)
{
    double sum = 0;
    for (int g = 0; g < t->n_groups; g++)
        sum += t->accesses[g];
    return sum;
}

static void bypass(level_traffic *t)
{
    t->size = t->partition = 0;
    t->content = t->parent_share = 0;
}

/*
 * Raw per-level stats of ds before bypass: tile size, the groups among the
 * level's children and the words each group pulls per run (scatter times
 * one child's pulls, nest.c; a compute instance pulls compute_words,
 * array.c), partition sizes (ComputePartitionSizes) and
 * each level's share of its parent's reads (ComputeParentAccessShare, in
 * the same floating-point order as Timeloop).
 */
static bool raw_traffic(const nest *n, const wl_dataspace *ds, int64_t compute_words, int n_levels,
                        level_traffic t[ARCH_MAX_LEVELS], map_eval *out)
{
    for (int l = 0; l < n_levels; l++) {
        level_traffic *tl = &t[l];
        int64_t pulls = l == 0 ? compute_words : nest_child_pulls(n, ds, l - 1);
        tl->size = nest_box_words(ds, n->tile_extent[l]);
        if (n->n_spatial[l] == 0) {
            tl->n_groups = 1;
            tl->group[0] = (nest_group){1, 1};
        } else {
            tl->n_groups =
                nest_multicast_groups(n, ds, l, tl->group, out->reason, sizeof out->reason);
            if (tl->n_groups < 0) {
                out->validity = MAP_INVALID_SHAPE;
                return false;
            }
        }
        for (int g = 0; g < tl->n_groups; g++)
            tl->accesses[g] = (double)(tl->group[g].scatter * pulls);
        tl->content = total_accesses(tl);
    }
    int top = n_levels - 1;
    t[top].partition = t[top].size;
    t[top].parent_share = 0;
    for (int l = top - 1; l >= 0; l--) {
        const level_traffic *parent = &t[l + 1];
        int64_t denominator =
            n->n_spatial[l + 1] ? nest_box_words(ds, n->spread_extent[l + 1]) : t[l].size;
        t[l].partition = parent->partition * t[l].size / denominator;
        t[l].parent_share = 0;
        for (int g = 0; g < parent->n_groups; g++)
            t[l].parent_share +=
                parent->accesses[g] * (double)parent->group[g].multicast / (double)n->fanout[l + 1];
    }
    return true;
}

/*
 * Bypass (MaskTiles, tiling.cpp:139): a level that does not keep ds hands
 * its children's traffic to the next outer level still holding a tile,
 * whose group accesses are rescaled so that they total the bypassed
 * level's content times the outer fanout, keeping their multicast shape.
 * The backing store's parent share is 0 (ProcessOuterMaskedLevels).
 */
static void apply_bypass(const nest *n, const map_mapping *m, int ds, int n_levels,
                         level_traffic t[ARCH_MAX_LEVELS])
{
    for (int cur = 0; cur < n_levels; cur++) {
        if (t[cur].size == 0 || m->level[cur].keep[ds])
            continue;
        int outer = cur + 1;
        while (outer < n_levels && t[outer].size == 0)
            outer++;
        if (outer == n_levels) {
            bypass(&t[cur]);
            break;
        }
        level_traffic *o = &t[outer];
        double weighted = 0;
        for (int g = 0; g < o->n_groups; g++)
            weighted += o->accesses[g] * (double)o->group[g].multicast;
        double factor = t[cur].content * (double)n->fanout[outer] / weighted;
        for (int g = 0; g < o->n_groups; g++)
            o->accesses[g] *= factor;
        o->content = total_accesses(o);
        bypass(&t[cur]);
    }
    t[n_levels - 1].parent_share = 0;
}

/*
 * Reads, fills, updates of each level (ComputeReadUpdateReductionAccesses
 * _Legacy, tiling.cpp:637).  Read-only: reads = content, fills = parent
 * share (truncated, as Timeloop stores it in an integer).  Read-write,
 * with first-read elision: updates = content, reads = content - partition
 * (the first update of a word needs no read), fills = share - partition
 * except at the backing store.  Also the network stats (§2, §3).
 */
static void store_counts(const nest *n, int ds, bool read_write, int n_levels,
                         const level_traffic t[ARCH_MAX_LEVELS], map_eval *out)
{
    for (int l = 0; l < n_levels; l++) {
        map_ds_stats *s = &out->level[l].ds[ds];
        map_net_stats *net = &out->level[l].net[ds];
        const level_traffic *tl = &t[l];
        bool outermost = true;
        for (int o = l + 1; o < n_levels; o++)
            outermost &= t[o].size == 0;
        memset(s, 0, sizeof *s);
        if (tl->size > 0) {
            s->tile_words = tl->size;
            s->partition_words = tl->partition;
            s->utilized_instances = n->replication[l];
            if (read_write) {
                s->updates = (int64_t)round(tl->content);
                s->reads = s->temporal_reductions =
                    (int64_t)round(tl->content - (double)tl->partition);
                s->fills = (int64_t)round(outermost ? tl->parent_share
                                                    : tl->parent_share - (double)tl->partition);
            } else {
                s->reads = (int64_t)round(tl->content);
                s->fills = (int64_t)tl->parent_share;
            }
        }
        net->fanout = n->fanout[l];
        net->multicast_factor = 0;
        double reductions = 0;
        for (int g = 0; g < tl->n_groups; g++) {
            if (tl->group[g].multicast > net->multicast_factor)
                net->multicast_factor = tl->group[g].multicast;
            reductions += (double)(tl->group[g].multicast - 1) * tl->accesses[g];
        }
        net->spatial_reductions = read_write ? (int64_t)llround(reductions) : 0;
        net->energy_pJ = 0;
    }
}

/* ------------------------------------------------------- cycles (§6) */

/* Cycles of the compute units: one temporal iteration per cycle for MAC
 * units and vector lanes; for systolic arrays SCALE-Sim's fold model over
 * the GEMM each array runs, its groups packed m->group_pack at a time
 * (array_cycles).  Operands the MACs emulate (map_mac_passes) repeat it
 * `passes` times: the iterations, or the whole GEMM.  -1 on overflow. */
static int64_t compute_cycles(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                              const nest *n, int64_t passes)
{
    int64_t once = n->temporal_iterations, cycles;
    array_gemm g;
    if (a->compute.kind == ARCH_COMPUTE_SYSTOLIC)
        once = array_gemm_of(p, m, m->group_pack, &g) ? array_cycles(&a->compute, &g) : -1;
    if (passes == 1 || once < 0)
        return once;
    return as_mul_i64(once, passes, &cycles) ? cycles : -1;
}

/* The group packing is one the compute can run: at most the groups one
 * array runs on a systolic array, none elsewhere. */
static bool check_group_pack(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                             map_eval *out)
{
    if (m->group_pack <= 1)
        return m->group_pack >= 0 || invalid(out, MAP_INVALID_SHAPE, "group pack %lld is negative",
                                             (long long)m->group_pack);
    if (a->compute.kind != ARCH_COMPUTE_SYSTOLIC)
        return invalid(out, MAP_INVALID_SHAPE,
                       "group pack %lld: only systolic arrays pack groups (compute '%s')",
                       (long long)m->group_pack, a->compute.name);
    array_gemm g;
    array_gemm_of(p, m, 1, &g);
    if (m->group_pack > g.groups)
        return invalid(out, MAP_INVALID_SHAPE, "group pack %lld exceeds the %lld groups per array",
                       (long long)m->group_pack, (long long)g.groups);
    return true;
}

/* Cycles a level needs at its bandwidths (BufferLevel::ComputePerformance):
 * the compute cycles stretched by the worst of read, write and shared
 * demand over supply, per instance, in Timeloop's floating-point order. */
static int64_t level_cycles(const arch_level *al, const map_level_stats *ls, int64_t cycles)
{
    double reads = 0, writes = 0, slowdown = 1.0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        reads += (double)ls->ds[ds].reads / (double)cycles;
        writes += (double)(ls->ds[ds].fills + ls->ds[ds].updates) / (double)cycles;
    }
    if (al->read_bandwidth > 0 && al->read_bandwidth < reads)
        slowdown = fmin(slowdown, al->read_bandwidth / reads);
    if (al->write_bandwidth > 0 && al->write_bandwidth < writes)
        slowdown = fmin(slowdown, al->write_bandwidth / writes);
    if (al->shared_bandwidth > 0 && al->shared_bandwidth < reads + writes)
        slowdown = fmin(slowdown, al->shared_bandwidth / (reads + writes));
    return (int64_t)ceil((double)cycles / slowdown);
}

/* ------------------------------------------------------- energy (§5) */

static double vector_actions(int64_t words, int block)
{
    return (double)((words + block - 1) / block);
}

/*
 * Energy of one level: per kept data space, vector actions (ceil of words
 * over the block size) times the ERT energies, spread over the utilized
 * instances of a cluster that shares one port, times the utilized
 * instances; plus leakage per utilized instance and cycle.
 */
static void level_energy(const arch_level *al, map_level_stats *ls, int64_t total_cycles)
{
    int64_t used = ls->utilized_instances;
    int cluster = al->cluster_size > 0 ? al->cluster_size : 1;
    int block = al->block_size > 0 ? al->block_size : 1;
    int64_t clusters = al->instances / cluster;
    if (clusters > used || clusters < 1)
        clusters = used;
    double cluster_utilization = (double)used / (double)clusters;
    ls->energy_pJ = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        map_ds_stats *s = &ls->ds[ds];
        double cluster_pJ = vector_actions(s->reads, block) * al->energy.read_pJ +
                            vector_actions(s->fills, block) * al->energy.fill_pJ +
                            vector_actions(s->updates, block) * al->energy.update_pJ;
        s->energy_pJ = ls->keeps[ds] ? cluster_pJ / cluster_utilization * (double)used : 0;
        ls->energy_pJ += s->energy_pJ;
    }
    ls->leak_pJ = al->energy.leak_pJ * (double)total_cycles * (double)(used > 1 ? used : 1);
    ls->energy_pJ += ls->leak_pJ;
}

/* ---------------------------------------------------------------- main */

void map_evaluate(const arch_spec *a, const wl_problem *p, const map_mapping *m, map_eval *out)
{
    nest n;
    level_traffic traffic[ARCH_MAX_LEVELS];
    array_flow flow;

    memset(out, 0, sizeof *out);
    out->validity = MAP_VALID;
    if (!check_shape(a, m, out) || !check_factors(p, m, out) || !check_keep(a, m, out) ||
        !check_fanout(a, m, out) || !check_group_pack(a, p, m, out))
        return;
    int levels = out->n_levels = m->n_levels;
    nest_build(m, levels, &n);
    if (!array_flow_of(a, p, m, &n, &flow)) {
        invalid(out, MAP_INVALID_SHAPE, "the traffic of the %s arrays overflows", a->compute.name);
        return;
    }

    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        if (!raw_traffic(&n, &p->ds[ds], flow.compute_words[ds], levels, traffic, out))
            return;
        apply_bypass(&n, m, ds, levels, traffic);
        store_counts(&n, ds, p->ds[ds].read_write, levels, traffic, out);
    }
    for (int l = 0; l < levels; l++) {
        out->level[l].utilized_instances = n.replication[l];
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            out->level[l].keeps[ds] = m->level[l].keep[ds];
    }
    /* Sparse costing (sparse.c) only on a design that declares formats or
     * zero handling: every other design is costed dense, bit for bit. */
    bool sparse = arch_is_sparse(a);
    if (sparse && !sparse_scale_storage(a, p, m, &n, out))
        return;
    if (!check_capacity(a, m, out))
        return;

    out->macs = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        out->macs *= p->bound[d] < 1 ? 1 : p->bound[d];
    out->utilized_macs = n.replication[0] * n.fanout[0];
    out->mac_passes = map_mac_passes(&a->compute, p);
    out->compute_cycles = compute_cycles(a, p, m, &n, out->mac_passes);
    if (sparse)
        out->compute_cycles = sparse_compute_cycles(a, p, out->compute_cycles);
    out->cycles = out->compute_cycles;
    for (int l = 0; l < levels; l++) {
        out->level[l].cycles = level_cycles(&a->level[l], &out->level[l], out->compute_cycles);
        if (out->level[l].cycles > out->cycles)
            out->cycles = out->level[l].cycles;
    }

    out->mac_energy_pJ = (double)out->macs * a->compute.mac_pJ * (double)out->mac_passes;
    if (sparse)
        out->mac_energy_pJ = sparse_mac_energy_pJ(a, p, out->mac_energy_pJ);
    array_energy(a, &flow, out->utilized_macs, out);
    out->energy_pJ = out->mac_energy_pJ;
    for (int l = 0; l < levels; l++)
        level_energy(&a->level[l], &out->level[l], out->cycles);
    if (sparse) /* gated MACs' operand accesses (sparse.c) */
        sparse_gate_access_energy(a, p, m, out);
    for (int l = 0; l < levels; l++) {
        out->energy_pJ += out->level[l].energy_pJ;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            out->energy_pJ += out->level[l].net[ds].energy_pJ;
    }
    int64_t lanes = a->compute.kind == ARCH_COMPUTE_MAC
                        ? 1
                        : (int64_t)a->compute.rows *
                              (a->compute.kind == ARCH_COMPUTE_SYSTOLIC ? a->compute.cols : 1);
    double peak_macs =
        (double)(a->compute.instances > 0 ? a->compute.instances : 1) * (double)lanes;
    out->utilization = (double)out->macs / peak_macs / (double)out->cycles;
    if (sparse) /* skipped MACs are not issued: count the ones that run */
        out->utilization *= sparse_issued_fraction(a, p);
    out->edp_J_cycle = out->energy_pJ * 1e-12 * (double)out->cycles;
}
