/*
 * tiling.c -- the cost of a fused group at each tile shape and halo mode,
 * and the choice among them (group.c gives the overview of the model,
 * region.c the tiles and regions counted here).
 *
 * Halos (DeFiNES).  Tiles run row band by row band, left to right.  Per
 * tensor and axis: `sum` = the lengths of its regions over the tiles (each
 * tile producing its own), `union` = the new part of each region (what is
 * left when what earlier tiles produced is kept).  Positions computed (of
 * a produced tensor) or read from DRAM (of an external input):
 *   recompute:  sum_rows   x sum_cols
 *   cache rows: union_rows x sum_cols   (the rows shared with the band
 *               above are kept in line buffers across the whole width;
 *               the columns shared with the left neighbour are recomputed)
 *   cache all:  union_rows x union_cols
 * Cached halo words per tensor read in the group: cache rows keeps
 * overlap_rows x union_cols positions, cache all also overlap_cols x
 * tile_rows; overlaps are the largest over the tiles.
 *
 * On-chip footprint (the on-chip level: fu_cost_options.onchip_level, by
 * default the outermost level that is not DRAM): words, at that level's
 * word_bits, of every member weight (resident), of one tile region of
 * every tensor the group touches (external inputs, intermediates, outputs
 * -- all live at once: a conservative bound), and of the cached halos;
 * times the level's multiple_buffering.  Capacity = size_words x
 * instances (size_words being the sum of a per-data-space split, if any).
 * When it does not fit with the weights resident, the weights
 * are streamed: they leave the footprint and are read from DRAM once per
 * tile.  When it does not fit either way the tile is invalid.
 *
 * Weights resident across inferences (the evaluator's residency,
 * resident.c): the model's weights already occupy the on-chip level --
 * the evaluator's architecture has that level's capacity less them -- so
 * they leave the footprint, cross DRAM never, and are read once from the
 * resident level (its read energy per vector access, its read bandwidth),
 * as a group that holds them reads them once from DRAM otherwise.
 *
 * DRAM (at each tensor's storage precision): external inputs as above,
 * outputs that leave the group once, weights once (resident) or once per
 * tile.  DRAM energy = bytes x 8 x pJ/bit.
 *
 * Members.  A compute member is mapped on its tile problem (the largest
 * tile's output region: P x Q of a conv, P (and M of a rank-4 output) of
 * a matmul) by the mapper, DRAM as backing store, mapped once per
 * distinct problem.  Its on-chip energy is the mapping's energy without
 * the DRAM level's share (that level's accesses, leakage and network
 * from it: the group's DRAM traffic replaces them), and its cycles the
 * mapping's compute and on-chip level cycles, both scaled by the MACs it
 * executes (recomputed halos included) over the tile problem's MACs.
 * Other members are the vector unit of network.c: its work scaled the
 * same way, at one MAC's energy, no DRAM round trip.
 *
 * Group cycles = max(sum over the fused ops of max(root's cycles, its
 * epilogue ops' cycles) -- an epilogue streams with its root, as in
 * network.c -- , DRAM bytes / DRAM bandwidth): with double buffering the next tile's transfers
 * overlap this tile's compute.  Energy = on-chip (recompute included) + DRAM. The tile and halo
 * mode with the least energy x cycles win.  Mapping is the expensive part, so only some shapes are
 * mapped: the largest tile that fits, and the MAPPED_TILE_SHAPES best by an estimate (DRAM energy
 * + one MAC's energy per MAC executed, times max(MACs at peak rate, DRAM
 * cycles)).
 *
 * A caller that maps the members itself (FADiff, src/diff: the evaluator's
 * member_mapping hook) runs a group at the fitting shape and mode whose
 * estimate, with the tiles' compute cycles on the array instead of the
 * peak rate, is the least (array_aware_pick, fu_group_pick_tile), and
 * prices it from fu_group_tile_terms:
 * the same member terms and DRAM and resident constants cost_tiling uses.
 */
#include "fusion_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tile shapes mapped per group besides the largest tile that fits: the
 * best by estimate.  The largest is always mapped too, because the
 * estimate does not see how small tiles use the array. */
#define MAPPED_TILE_SHAPES 4
/* Candidate tile sizes per axis: powers of two up to 2^30, and the whole. */
#define MAX_AXIS_SIZES 32
/* Halo modes, each costed for every tile shape (fu_halo_mode). */
#define N_HALO_MODES (FU_HALO_CACHE_ALL + 1)

/* ------------------------------------------------------------ tiling */

/* Counts of one tile shape and halo mode, before mapping. */
typedef struct tiling {
    fu_tile tile;
    int64_t n_tiles, tiles[2];
    fu_halo_mode halo;
    bool weights_resident;
    bool fits;
    int64_t resident_words; /* weight words read from the resident level (resident.c) */
    int64_t onchip_bytes;
    int64_t dram_bytes;
    int64_t weight_dram_bytes;
    double estimate; /* for choosing which shapes to map */
} tiling;

/* Positions of tensor t produced (or read from DRAM) under halo mode h. */
static int64_t positions(const fu_gtensor *t, fu_halo_mode h)
{
    int64_t rows = h == FU_HALO_RECOMPUTE ? t->sum[0] : t->uni[0];
    int64_t cols = h == FU_HALO_CACHE_ALL ? t->uni[1] : t->sum[1];
    return rows * cols;
}

/* The halo words of tensor t kept on chip under mode h (none unless a
 * member reads t). */
static int64_t halo_words(const fu_gtensor *t, fu_halo_mode h)
{
    if (h == FU_HALO_RECOMPUTE || !t->read_inside)
        return 0;
    int64_t words = t->overlap[0] * t->uni[1];
    if (h == FU_HALO_CACHE_ALL)
        words += t->overlap[1] * t->max_len[0];
    return words * t->per_position;
}

/* Bytes of `elements` of tensor t at its storage precision. */
static int64_t tensor_bytes_of(const wl_graph *g, int32_t t, int64_t elements)
{
    int bits = g->tensors[t].bits > 0 ? g->tensors[t].bits : 8;
    return (elements * bits + 7) / 8;
}

/* MACs (or vector work) member m executes under mode h: its useful work
 * scaled by the positions it computes over its output's positions. */
static double executed_work(const fu_group *gr, const fu_member *m, fu_halo_mode h)
{
    const fu_gtensor *out = &gr->t[m->out];
    double all = (double)out->extent[0] * (double)out->extent[1];
    return (double)m->macs * (double)positions(out, h) / all;
}

/*
 * Compute cycles of tiling tl with every member's tile run at the pace
 * the compute allows it (the axes walked for tl's shape): on systolic
 * arrays SCALE-Sim's fold cycles of the tile problem's GEMM, one group
 * after another, times the runs its executed work makes; elsewhere work
 * at the peak rate.  What the estimate (count_tiling) leaves out: a
 * 1 x 1 tile of a convolution is a GEMM of one row, which fills a 16 x 16
 * array to 1/16 and takes its fill and drain on every run.
 */
static double array_cycles_estimate(const fu_group *gr, const tiling *tl)
{
    const arch_spec *a = &gr->e->a;
    double peak = map_peak_macs_per_cycle(a), cycles = 0;
    for (int32_t i = 0; i < gr->n; i++) {
        const fu_member *m = &gr->m[i];
        double work = executed_work(gr, m, tl->halo);
        if (!m->compute || a->compute.kind != ARCH_COMPUTE_SYSTOLIC) {
            cycles += work / (m->compute ? (peak > 0 ? peak : 1) : map_vector_lanes(a));
            continue;
        }
        wl_problem p = fu_tile_problem(gr, m);
        const int64_t *b = p.bound;
        int64_t fold = map_systolic_cycles(b[WL_DIM_N] * b[WL_DIM_P] * b[WL_DIM_Q], b[WL_DIM_M],
                                           b[WL_DIM_C] * b[WL_DIM_R] * b[WL_DIM_S], a->compute.rows,
                                           a->compute.cols, a->compute.dataflow);
        double arrays = (double)(a->compute.instances > 0 ? a->compute.instances : 1);
        double runs = work / (double)wl_problem_macs(&p);
        cycles += runs * (double)b[WL_DIM_G] * (double)(fold > 0 ? fold : 0) / arrays;
    }
    return cycles;
}

/* The estimate of tiling tl (counted, axes walked for its shape): DRAM
 * energy plus one MAC's energy per MAC executed, times the longer of the
 * compute cycles -- MACs at the peak rate, or with `on_array` the tiles'
 * cycles on the array (array_cycles_estimate) -- and the DRAM cycles. */
static double tiling_estimate(const fu_group *gr, const tiling *tl, bool on_array)
{
    const arch_spec *a = &gr->e->a;
    double work = 0;
    for (int32_t i = 0; i < gr->n; i++)
        work += executed_work(gr, &gr->m[i], tl->halo);
    double energy = map_dram_pJ(a, tl->dram_bytes) + work * a->compute.mac_pJ;
    double peak = map_peak_macs_per_cycle(a);
    double compute = on_array ? array_cycles_estimate(gr, tl) : work / (peak > 0 ? peak : 1);
    return energy * fmax(compute, (double)map_dram_cycles(a, tl->dram_bytes));
}

/* Counts of mode h for the axes already walked: footprint against the
 * on-chip level, DRAM bytes, and the estimate used to pick shapes. */
static void count_tiling(const fu_group *gr, tiling *tl)
{
    const fu_evaluator *e = gr->e;
    const wl_graph *g = e->g;
    const arch_level *L = &e->a.level[e->onchip];
    int64_t tile_words = 0, halo = 0, dram = 0;
    for (int32_t i = 0; i < gr->n_t; i++) {
        const fu_gtensor *t = &gr->t[i];
        tile_words += t->max_len[0] * t->max_len[1] * t->per_position;
        halo += halo_words(t, tl->halo);
        if (t->producer < 0)
            dram += tensor_bytes_of(g, t->t, positions(t, tl->halo) * t->per_position);
        else if (t->leaves && wl_tensor_bytes(&g->tensors[t->t]) > 0)
            dram += wl_tensor_bytes(&g->tensors[t->t]);
    }
    double buffering = L->multiple_buffering >= 1 ? L->multiple_buffering : 1;
    double capacity = L->size_words > 0 ? (double)L->size_words * (double)L->instances : INFINITY;
    double with = buffering * (double)(gr->weight_words + tile_words + halo);
    double without = buffering * (double)(tile_words + halo);
    tl->fits = without <= capacity;
    if (e->weights.resident) { /* resident across inferences: see the top */
        tl->weights_resident = true;
        tl->onchip_bytes = fu_bytes_of_words(without, L->word_bits);
        tl->resident_words = gr->weight_words;
    } else {
        tl->weights_resident = with <= capacity;
        tl->onchip_bytes = fu_bytes_of_words(tl->weights_resident ? with : without, L->word_bits);
        tl->weight_dram_bytes = gr->weight_bytes * (tl->weights_resident ? 1 : tl->n_tiles);
    }
    tl->dram_bytes = dram + tl->weight_dram_bytes;

    tl->estimate = tiling_estimate(gr, tl, false);
}

/* Candidate tile sizes along an axis of `extent`: powers of two below it,
 * then the whole extent; returns how many. */
static int axis_sizes(int64_t extent, bool whole_only, int64_t *sizes)
{
    int n = 0;
    for (int64_t s = 1; !whole_only && s < extent && n < MAX_AXIS_SIZES - 1; s *= 2)
        sizes[n++] = s;
    sizes[n++] = extent > 0 ? extent : 1;
    return n;
}

/* ------------------------------------------------------- member costs */

wl_problem fu_tile_problem(const fu_group *gr, const fu_member *m)
{
    wl_problem p = m->problem;
    const fu_gtensor *out = &gr->t[m->out];
    const wl_tensor *y = &gr->e->g->tensors[out->t];
    if (p.kind == WL_PROBLEM_CONV || p.kind == WL_PROBLEM_DEPTHWISE) {
        if (y->rank == 4) {
            p.bound[WL_DIM_P] = out->max_len[0];
            p.bound[WL_DIM_Q] = out->max_len[1];
        }
    } else if (p.kind == WL_PROBLEM_MATMUL || p.kind == WL_PROBLEM_BATCHED_MATMUL) {
        if (out->max_len[0] < out->extent[0] && p.bound[WL_DIM_P] == out->extent[0])
            p.bound[WL_DIM_P] = out->max_len[0];
        if (y->rank == 4 && out->max_len[1] < out->extent[1] && p.bound[WL_DIM_M] == out->extent[1])
            p.bound[WL_DIM_M] = out->max_len[1];
    }
    return p;
}

/* On-chip energy and cycles of one run of a tile mapping: without the
 * DRAM level's accesses, leakage and network (see the top). */
static void onchip_share(const fu_evaluator *e, const map_eval *ev, double *energy_pJ,
                         double *cycles)
{
    *energy_pJ = ev->energy_pJ;
    *cycles = (double)ev->compute_cycles;
    for (int l = 0; l < e->a.n_levels; l++) {
        if (l == e->dram) {
            *energy_pJ -= ev->level[l].energy_pJ;
            for (int ds = 0; ds < WL_NDATASPACES; ds++)
                *energy_pJ -= ev->level[l].net[ds].energy_pJ;
        } else if ((double)ev->level[l].cycles > *cycles) {
            *cycles = (double)ev->level[l].cycles;
        }
    }
}

/* Add the parts of onchip_share's energy, times scale, to c's split:
 * the MACs, each storage level but DRAM, the networks below them. */
static void add_onchip_parts(const fu_evaluator *e, const map_eval *ev, double scale,
                             fu_group_cost *c)
{
    c->energy_by_component_pJ[MAP_COMP_MAC] += ev->mac_energy_pJ * scale;
    for (int l = 0; l < e->a.n_levels; l++) {
        if (l == e->dram)
            continue;
        c->energy_by_component_pJ[MAP_COMP_ONCHIP] += ev->level[l].energy_pJ * scale;
        c->onchip_level_pJ[l] += ev->level[l].energy_pJ * scale;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            c->energy_by_component_pJ[MAP_COMP_VECTOR] += ev->level[l].net[ds].energy_pJ * scale;
    }
}

/* Member i's terms under halo mode h, for the tile shape last walked:
 * its work, and its tile problem or its vector cost. */
static void member_terms(const fu_group *gr, int32_t i, fu_halo_mode h, fu_member_terms *t)
{
    const fu_evaluator *e = gr->e;
    const fu_member *m = &gr->m[i];
    memset(t, 0, sizeof *t);
    t->op = m->op;
    t->root = m->root;
    t->compute = m->compute;
    t->work = executed_work(gr, m, h);
    if (!m->compute) {
        t->vector_energy_pJ = t->work * e->a.compute.mac_pJ;
        t->vector_cycles = ceil(t->work / map_vector_lanes(&e->a));
        return;
    }
    t->problem = fu_tile_problem(gr, m);
    t->tile_macs = (double)wl_problem_macs(&t->problem);
}

/* The terms of tiling tl that no member's mapping changes: its DRAM
 * traffic and its reads of resident weights. */
static void group_constants(const fu_evaluator *e, const tiling *tl, fu_group_terms *t)
{
    t->fits = tl->fits;
    t->tile = tl->tile;
    t->halo = tl->halo;
    t->n_tiles = tl->n_tiles;
    t->dram_bytes = tl->dram_bytes;
    t->dram_energy_pJ = map_dram_pJ(&e->a, tl->dram_bytes);
    t->dram_cycles = map_dram_cycles(&e->a, tl->dram_bytes);
    map_resident_read(&e->a, &e->weights, tl->resident_words, &t->resident_energy_pJ,
                      &t->resident_cycles);
}

/* Full cost of tiling tl (counts done): map the members on their tile
 * problems and sum.  Invalid (with a reason in c) when a member has no
 * valid mapping.  scratch: room for a hook's answer (NULL without one). */
static as_code cost_tiling(fu_group *gr, const tiling *tl, map_problem_outcome *scratch,
                           fu_group_cost *c, as_status *st)
{
    fu_evaluator *e = gr->e;
    double onchip = 0, cycles = 0;
    int64_t recomputed = 0, useful = 0;
    memset(c, 0, sizeof *c);
    for (int32_t i = 0; i < gr->n; i++)
        gr->m[i].cycles = gr->m[i].epilogue_cycles = 0;
    for (int32_t i = 0; i < gr->n; i++) {
        fu_member *m = &gr->m[i];
        fu_member_terms mt;
        member_terms(gr, i, tl->halo, &mt);
        double work = mt.work;
        if (!m->compute) {
            onchip += mt.vector_energy_pJ;
            c->energy_by_component_pJ[MAP_COMP_VECTOR] += mt.vector_energy_pJ;
            m->cycles = mt.vector_cycles;
            continue;
        }
        const wl_problem *p = &mt.problem;
        const map_problem_outcome *me;
        as_code code = fu_member_outcome(e, m->op, p, scratch, &me, st);
        if (code != AS_OK)
            return code;
        if (!me->found) {
            snprintf(c->reason, sizeof c->reason,
                     "op %d '%s': no valid mapping of its %lldx%lld tile on %s", m->op,
                     e->g->ops[m->op].name, (long long)p->bound[WL_DIM_P],
                     (long long)p->bound[WL_DIM_Q], e->a.name);
            return AS_OK;
        }
        double tile_energy, tile_cycles, tile_macs = mt.tile_macs;
        onchip_share(e, &me->eval, &tile_energy, &tile_cycles);
        onchip += tile_energy * work / tile_macs;
        add_onchip_parts(e, &me->eval, work / tile_macs, c);
        m->cycles = ceil(tile_cycles * work / tile_macs);
        int64_t executed = llround(work);
        useful += m->macs;
        const fu_gtensor *out = &gr->t[m->out];
        double produced = (double)out->uni[0] * (double)out->uni[1] /
                          ((double)out->extent[0] * (double)out->extent[1]);
        int64_t needed = llround((double)m->macs * produced);
        recomputed += executed > needed ? executed - needed : 0;
    }
    /* An epilogue op streams with its root (network.c, "Epilogues"): a
     * fused op takes the longer of its root's and its epilogue's cycles. */
    for (int32_t i = 0; i < gr->n; i++)
        if (gr->m[i].root != i)
            gr->m[gr->m[i].root].epilogue_cycles += gr->m[i].cycles;
    for (int32_t i = 0; i < gr->n; i++)
        if (gr->m[i].root == i)
            cycles += fmax(gr->m[i].cycles, gr->m[i].epilogue_cycles);
    c->valid = true;
    c->tile = tl->tile;
    c->halo = tl->halo;
    c->n_tiles = tl->n_tiles;
    c->onchip_bytes = tl->onchip_bytes;
    c->dram_bytes = tl->dram_bytes;
    c->macs = useful;
    c->recomputed_macs = recomputed;
    fu_group_terms k;
    group_constants(e, tl, &k);
    c->onchip_energy_pJ = onchip + k.resident_energy_pJ;
    c->dram_energy_pJ = k.dram_energy_pJ;
    c->energy_by_component_pJ[MAP_COMP_ONCHIP] += k.resident_energy_pJ;
    if (e->weights.level >= 0)
        c->onchip_level_pJ[e->weights.level] += k.resident_energy_pJ;
    c->energy_by_component_pJ[MAP_COMP_DRAM] = k.dram_energy_pJ;
    c->energy_pJ = c->onchip_energy_pJ + c->dram_energy_pJ;
    /* Double buffering: DRAM transfers of one tile overlap the compute of
     * another, so the slower of the two sets the pace (resident weight
     * reads overlap the same way). */
    int64_t compute_cycles = (int64_t)cycles;
    c->cycles = compute_cycles > k.dram_cycles ? compute_cycles : k.dram_cycles;
    if (k.resident_cycles > c->cycles)
        c->cycles = k.resident_cycles;
    return AS_OK;
}

/* Whether cost x beats y: valid first, then energy x cycles, then energy. */
static bool better(const fu_group_cost *x, const fu_group_cost *y)
{
    if (x->valid != y->valid)
        return x->valid;
    double ex = x->energy_pJ * (double)x->cycles, ey = y->energy_pJ * (double)y->cycles;
    if (ex != ey)
        return ex < ey;
    return x->energy_pJ < y->energy_pJ;
}

/* qsort order of tilings: fitting ones first, then by estimate. */
static int by_estimate(const void *x, const void *y)
{
    const tiling *a = x, *b = y;
    if (a->fits != b->fits)
        return a->fits ? -1 : 1;
    return a->estimate < b->estimate ? -1 : a->estimate > b->estimate;
}

/* Walk both axes for one tile shape and count its halo modes into
 * out[0 .. N_HALO_MODES). */
static void count_shape(fu_group *gr, int64_t rows, int64_t cols, tiling *out)
{
    const fu_gtensor *anchor = &gr->t[gr->m[gr->n - 1].out];
    fu_walk_axis(gr, 0, rows);
    fu_walk_axis(gr, 1, cols);
    for (int h = 0; h < N_HALO_MODES; h++) {
        tiling *tl = &out[h];
        memset(tl, 0, sizeof *tl);
        tl->tile = (fu_tile){rows, cols};
        tl->tiles[0] = (anchor->extent[0] + rows - 1) / rows;
        tl->tiles[1] = (anchor->extent[1] + cols - 1) / cols;
        tl->n_tiles = tl->tiles[0] * tl->tiles[1];
        tl->halo = (fu_halo_mode)h;
        count_tiling(gr, tl);
    }
}

/* The fitting tile shape of largest area (fewest tiles); there is one. */
static fu_tile largest_fitting(const tiling *cand, int n_cand)
{
    fu_tile best = {0, 0};
    for (int i = 0; i < n_cand; i++)
        if (cand[i].fits && cand[i].tile.rows * cand[i].tile.cols > best.rows * best.cols)
            best = cand[i].tile;
    return best;
}

/* No candidate fits the on-chip level: record the smallest footprint
 * among cand[0 .. n_cand) in c, and say so. */
static void explain_no_fit(const fu_evaluator *e, const tiling *cand, int n_cand, fu_group_cost *c)
{
    const arch_level *L = &e->a.level[e->onchip];
    int64_t smallest = cand[0].onchip_bytes;
    for (int i = 1; i < n_cand; i++)
        if (cand[i].onchip_bytes < smallest)
            smallest = cand[i].onchip_bytes;
    c->onchip_bytes = smallest;
    snprintf(
        c->reason, sizeof c->reason,
        "footprint of %lld bytes at best does not fit %s (%lld bytes%s)", (long long)smallest,
        L->name,
        (long long)fu_bytes_of_words((double)L->size_words * (double)L->instances, L->word_bits),
        e->weights.resident && e->weights.level == e->onchip ? " beside the resident weights" : "");
}

/* The fitting tiling of cand[0 .. n) (fitting first, by estimate) whose
 * estimate with the array's cycles (array_cycles_estimate) is the least:
 * FADiff's tile, which is not searched by mapping (fu_group_pick_tile);
 * cand[0] when none fits. */
static int array_aware_pick(fu_group *gr, const tiling *cand, int n)
{
    int best = 0;
    double best_score = INFINITY;
    for (int i = 0; i < n && cand[i].fits; i++) {
        fu_walk_axis(gr, 0, cand[i].tile.rows);
        fu_walk_axis(gr, 1, cand[i].tile.cols);
        double score = tiling_estimate(gr, &cand[i], true);
        if (score < best_score) {
            best_score = score;
            best = i;
        }
    }
    return best;
}

/* The tilings of group gr (every tile shape and halo mode, or only tile
 * *only in mode only_halo) counted into *out (malloc'd), fitting ones
 * first, then by estimate; *n of them. */
static as_code count_candidates(fu_group *gr, const fu_tile *only, fu_halo_mode only_halo,
                                tiling **out, int *n, as_status *st)
{
    const fu_gtensor *anchor = &gr->t[gr->m[gr->n - 1].out];
    const fu_member *last = &gr->m[gr->n - 1];
    bool matmul_anchor = last->compute && last->problem.kind != WL_PROBLEM_CONV &&
                         last->problem.kind != WL_PROBLEM_DEPTHWISE;
    int64_t rows[MAX_AXIS_SIZES], cols[MAX_AXIS_SIZES];
    int n_rows = axis_sizes(anchor->extent[0], false, rows);
    int n_cols = axis_sizes(anchor->extent[1], matmul_anchor, cols);
    if (only) {
        n_rows = n_cols = 1;
        rows[0] = only->rows > 0 && only->rows < anchor->extent[0] ? only->rows : anchor->extent[0];
        cols[0] = only->cols > 0 && only->cols < anchor->extent[1] ? only->cols : anchor->extent[1];
    }
    *n = 0;
    tiling *cand = *out = malloc((size_t)(n_rows * n_cols * N_HALO_MODES) * sizeof *cand);
    if (!cand)
        return as_fail(st, AS_ENOMEM, "out of memory for tile candidates");
    int n_cand = 0;
    for (int r = 0; r < n_rows; r++)
        for (int k = 0; k < n_cols; k++, n_cand += N_HALO_MODES)
            count_shape(gr, rows[r], cols[k], &cand[n_cand]);
    if (only) {
        cand[0] = cand[only_halo];
        n_cand = 1;
    }
    qsort(cand, (size_t)n_cand, sizeof *cand, by_estimate);
    *n = n_cand;
    return AS_OK;
}

/* The fused cost of a group of two or more ops (see the top), over every
 * tile shape and halo mode, or only tile *only in mode only_halo. */
as_code fu_fused_cost(fu_evaluator *e, const int32_t *ops, int32_t n, const fu_tile *only,
                      fu_halo_mode only_halo, fu_group_cost *best, as_status *st)
{
    fu_group gr;
    as_code code = fu_group_init(&gr, e, ops, n, st);
    tiling *cand = NULL;
    memset(best, 0, sizeof *best);
    if (code == AS_OK && e->onchip < 0) {
        snprintf(best->reason, sizeof best->reason, "%s has no on-chip level to fuse in",
                 e->a.name);
        fu_group_free(&gr);
        return AS_OK;
    }
    int n_cand = 0;
    map_problem_outcome *scratch = NULL; /* the hook's answers */
    if (code == AS_OK)
        code = count_candidates(&gr, only, only_halo, &cand, &n_cand, st);
    if (code == AS_OK && n_cand > 0 && !cand[0].fits)
        explain_no_fit(e, cand, n_cand, best);
    if (code == AS_OK && e->o.member_mapping && !(scratch = malloc(sizeof *scratch)))
        code = as_fail(st, AS_ENOMEM, "out of memory for a member's mapping");
    /* Map the best-estimated shapes; every halo mode of a shape shares
     * its tile problems. */
    fu_tile mapped[MAPPED_TILE_SHAPES + 1], walked = {0, 0};
    int n_mapped = 0;
    if (code == AS_OK && n_cand > 0 && cand[0].fits)
        mapped[n_mapped++] = largest_fitting(cand, n_cand);
    for (int i = 0; code == AS_OK && i < n_cand && cand[i].fits; i++) {
        bool known = false;
        for (int j = 0; j < n_mapped && !known; j++)
            known = mapped[j].rows == cand[i].tile.rows && mapped[j].cols == cand[i].tile.cols;
        if (!known && n_mapped == MAPPED_TILE_SHAPES + 1)
            continue;
        if (!known)
            mapped[n_mapped++] = cand[i].tile;
        if (walked.rows != cand[i].tile.rows || walked.cols != cand[i].tile.cols) {
            walked = cand[i].tile; /* this shape's regions, for its tile problems */
            fu_walk_axis(&gr, 0, walked.rows);
            fu_walk_axis(&gr, 1, walked.cols);
        }
        fu_group_cost c;
        code = cost_tiling(&gr, &cand[i], scratch, &c, st);
        if (code == AS_OK && (better(&c, best) || (!best->valid && !c.valid)))
            *best = c;
    }
    free(scratch);
    free(cand);
    fu_group_free(&gr);
    return code;
}

/* The estimate's first tiling of a fused group, mapping nothing
 * (fusion.h's fu_group_pick_tile).  Without an on-chip level: the whole
 * output, not fitting. */
as_code fu_fused_pick_tile(fu_evaluator *e, const int32_t *ops, int32_t n, fu_tile *tile,
                           fu_halo_mode *halo, bool *fits, as_status *st)
{
    fu_group gr;
    tiling *cand = NULL;
    int n_cand = 0;
    *halo = FU_HALO_RECOMPUTE;
    *fits = false;
    fu_output_extents(e->g, ops[n - 1], tile);
    as_code code = fu_group_init(&gr, e, ops, n, st);
    if (code != AS_OK || e->onchip < 0) {
        fu_group_free(&gr);
        return code;
    }
    code = count_candidates(&gr, NULL, FU_HALO_RECOMPUTE, &cand, &n_cand, st);
    if (code == AS_OK && n_cand > 0) {
        int pick = array_aware_pick(&gr, cand, n_cand);
        *tile = cand[pick].tile;
        *halo = cand[pick].halo;
        *fits = cand[pick].fits;
    }
    free(cand);
    fu_group_free(&gr);
    return code;
}

/* The terms of a fused group at one tile and halo mode (fusion.h's
 * fu_group_tile_terms), from the same counts and member terms as
 * cost_tiling. */
as_code fu_fused_terms(fu_evaluator *e, const int32_t *ops, int32_t n, fu_tile tile,
                       fu_halo_mode halo, fu_group_terms *out, as_status *st)
{
    fu_group gr;
    tiling *cand = NULL;
    int n_cand = 0;
    memset(out, 0, sizeof *out);
    as_code code = fu_group_init(&gr, e, ops, n, st);
    if (code == AS_OK && e->onchip < 0)
        code = as_fail(st, AS_EINVAL, "%s has no on-chip level to fuse in", e->a.name);
    if (code == AS_OK)
        code = count_candidates(&gr, &tile, halo, &cand, &n_cand, st);
    if (code == AS_OK && !(out->m = calloc((size_t)gr.n, sizeof *out->m)))
        code = as_fail(st, AS_ENOMEM, "out of memory for the terms of a group of %d ops", gr.n);
    if (code == AS_OK) {
        fu_walk_axis(&gr, 0, cand[0].tile.rows);
        fu_walk_axis(&gr, 1, cand[0].tile.cols);
        group_constants(e, &cand[0], out);
        out->n = gr.n;
        for (int32_t i = 0; i < gr.n; i++)
            member_terms(&gr, i, halo, &out->m[i]);
    } else {
        free(out->m);
        out->m = NULL;
    }
    free(cand);
    fu_group_free(&gr);
    return code;
}
