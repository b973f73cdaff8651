/*
 * group.c -- the cost of a fused group (Optimus, DeFiNES) and of a plan.
 *
 * Singleton groups are layers: they cost exactly what map_network_evaluate
 * charges (network.c's model, reused through mapping.h's layer cost): the
 * mapper maps the whole layer with DRAM as backing store and its DRAM
 * traffic, refetches included, is the layer's.
 *
 * A group of two or more ops runs tile by tile over the output of its
 * last member in topological order (the anchor).  Any set of ops is
 * costed as given: whether it may be a group (convex, connected) is
 * fu_plan_valid's question, which fu_plan_evaluate asks first.
 *
 * Tiles.  The anchor's output is cut into tiles of rows x cols along its
 * rows axis (rank - 2) and, for rank-4 tensors, its cols axis (rank - 1):
 * spatial tiles of a conv's [N, C, H, W], token blocks of a matmul's
 * [..., tokens, features] (cols stay whole for a matmul anchor).  Tile
 * sizes are searched among the powers of two below the extent and the
 * whole extent.
 *
 * Regions.  For each tile, members are visited in reverse topological
 * order; each needs of each input the region its output region reads
 * (need_span): convolution and pooling windows map rows [lo, hi) to
 * [lo*stride - pad, (hi-1)*stride + (k-1)*dilation + 1 - pad), clipped to
 * the input (pads read zeros); elementwise ops and normalisations over
 * later axes read the same region of a same-shaped input; a matmul reads
 * the same rows of A and all of B; a Concat along another axis (channels)
 * reads the same region of each input; anything else (reductions, global
 * pooling, data movement, transposed convs, broadcast operands, views
 * that change shape) reads its whole input.  A member's output region is
 * the hull of what its in-group consumers need; when its output also
 * leaves the group, the hull includes its share of the anchor's tile
 * (the same fraction of its own extent), so that it is written whole.
 * Rows and cols are independent, so each axis is walked once per tile
 * index.
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
 * Group cycles = max(sum of the members' cycles, DRAM bytes / DRAM
 * bandwidth): with double buffering the next tile's transfers overlap
 * this tile's compute.  Energy = on-chip (recompute included) + DRAM.
 * The tile and halo mode with the least energy x cycles win.  Mapping is
 * the expensive part, so only some shapes are mapped: the largest tile
 * that fits, and the MAPPED_TILE_SHAPES best by an estimate (DRAM energy
 * + one MAC's energy per MAC executed, times max(MACs at peak rate, DRAM
 * cycles)).
 */
#include "fusion_private.h"

#include <math.h>
#include <omp.h>
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

void fu_cost_options_default(fu_cost_options *o)
{
    memset(o, 0, sizeof *o);
    map_search_options_default(&o->search);
    o->onchip_level = -1;
}

/* ------------------------------------------------------------- caches */

/* A group's cost by its sorted member list (items of the groups table). */
typedef struct group_entry {
    int32_t n;
    int32_t *ops;
    fu_group_cost cost;
} group_entry;

/* What a group entry is looked up by: its sorted members. */
typedef struct member_list {
    const int32_t *ops;
    int32_t n;
} member_list;

struct fu_evaluator {
    const wl_graph *g;
    arch_spec a;
    fu_cost_options o;
    int onchip;               /* level holding fused data, -1: none */
    int dram;                 /* the DRAM backing level, -1: none */
    int64_t budget;           /* mappings per problem */
    map_layer_key design_key; /* its design half, for the mapping cache */
    map_cache *mappings;      /* o.shared_mappings, or the evaluator's own */
    bool owns_mappings;
    as_table groups; /* group_entry */
    omp_lock_t lock; /* guards the groups */
    bool lock_ready;
};

/* Whether group entry item has the members key (a member_list). */
static bool group_has_members(const void *item, const void *key, const void *context)
{
    (void)context;
    const group_entry *ge = item;
    const member_list *m = key;
    return ge->n == m->n && memcmp(ge->ops, m->ops, (size_t)m->n * sizeof *m->ops) == 0;
}

/* ------------------------------------------------------------ evaluator */

/* The default on-chip level: the outermost level that stores data and is
 * not DRAM; -1 when there is none. */
static int outermost_onchip(const arch_spec *a)
{
    for (int l = a->n_levels - 1; l >= 0; l--)
        if (a->level[l].cls != ARCH_CLASS_DRAM && a->level[l].cls != ARCH_CLASS_DUMMY)
            return l;
    return -1;
}

as_code fu_evaluator_new(fu_evaluator **out, const wl_graph *g, const arch_spec *a,
                         const fu_cost_options *o, as_status *st)
{
    *out = NULL;
    if (!g->order)
        return as_fail(st, AS_EINVAL, "%s: graph not inferred (call wl_graph_infer first)",
                       g->source);
    as_code code = arch_validate(a, st);
    if (code != AS_OK)
        return code;
    fu_cost_options defaults;
    if (!o) {
        fu_cost_options_default(&defaults);
        o = &defaults;
    }
    int onchip = o->onchip_level >= 0 ? o->onchip_level : outermost_onchip(a);
    if (o->onchip_level >= a->n_levels ||
        (o->onchip_level >= 0 &&
         (a->level[onchip].cls == ARCH_CLASS_DRAM || a->level[onchip].cls == ARCH_CLASS_DUMMY)))
        return as_fail(st, AS_EINVAL,
                       "%s: onchip_level %d is not an on-chip storage level (0..%d, not DRAM, "
                       "not a fanout-only level)",
                       a->name, o->onchip_level, a->n_levels - 1);
    fu_evaluator *e = calloc(1, sizeof *e);
    if (!e)
        return as_fail(st, AS_ENOMEM, "out of memory for a fusion evaluator");
    as_table_init(&e->groups, sizeof(group_entry));
    e->mappings = o->shared_mappings;
    if (!e->mappings) {
        code = map_cache_new(&e->mappings, st);
        e->owns_mappings = true;
        if (code != AS_OK) {
            fu_evaluator_free(e);
            return code;
        }
    }
    e->g = g;
    e->a = *a;
    e->o = *o;
    e->onchip = onchip;
    e->dram = a->level[a->n_levels - 1].cls == ARCH_CLASS_DRAM ? a->n_levels - 1 : -1;
    e->budget = map_effective_budget(&o->search, o->budget_per_problem);
    map_layer_key_design(a, &o->search, e->budget, &e->design_key);
    omp_init_lock(&e->lock);
    e->lock_ready = true;
    *out = e;
    return AS_OK;
}

void fu_evaluator_free(fu_evaluator *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->groups.capacity; i++) {
        group_entry *ge = as_table_slot(&e->groups, i);
        if (ge)
            free(ge->ops);
    }
    if (e->owns_mappings)
        map_cache_free(e->mappings);
    as_table_free(&e->groups);
    if (e->lock_ready)
        omp_destroy_lock(&e->lock);
    free(e);
}

const wl_graph *fu_evaluator_graph(const fu_evaluator *e)
{
    return e->g;
}

const arch_spec *fu_evaluator_arch(const fu_evaluator *e)
{
    return &e->a;
}

const fu_cost_options *fu_evaluator_cost_options(const fu_evaluator *e)
{
    return &e->o;
}

/*
 * The mapper's best for problem p on e's design, searched once per
 * distinct problem (and design, when the cache is shared).  The search
 * runs outside the cache's lock, so two threads may map the same new
 * problem at once; both get the same result (same seed) and the first
 * stored wins.  Fails when the search cannot start or memory runs out.
 */
static as_code mapped_problem(fu_evaluator *e, const wl_problem *p, const map_problem_outcome **out,
                              as_status *st)
{
    map_layer_key key = e->design_key;
    map_problem_key_of(p, &key.problem);
    *out = map_cache_find(e->mappings, &key);
    if (*out)
        return AS_OK;
    map_problem_outcome *searched = malloc(sizeof *searched);
    if (!searched)
        return as_fail(st, AS_ENOMEM, "out of memory for a mapped problem");
    map_problem_search_run(&e->a, p, &e->o.search, e->o.search.threads, e->budget, NULL, searched);
    as_code code = AS_OK;
    if (searched->code != AS_OK)
        code = as_fail(st, searched->code, "%s", searched->status.message);
    else if (!(*out = map_cache_add(e->mappings, &key, searched)))
        code = as_fail(st, AS_ENOMEM, "out of memory for the mapping cache");
    free(searched);
    return code;
}

/* ------------------------------------------------------------ singletons */

/* Words of one instance of level l that a mapping's tiles occupy. */
static int64_t level_tile_words(const map_eval *ev, int l)
{
    int64_t words = 0;
    for (int ds = 0; l >= 0 && ds < WL_NDATASPACES; ds++)
        words += ev->level[l].ds[ds].tile_words;
    return words;
}

/* Bytes that `words` words of word_bits bits take (8 bits when the level
 * gives none), rounded up. */
static int64_t bytes_of_words(double words, int word_bits)
{
    return (int64_t)ceil(words * (word_bits > 0 ? word_bits : 8) / 8.0);
}

static void output_extents(const wl_graph *g, int32_t o, fu_tile *tile);

/* A layer alone: network.c's cost of it, whole output as one tile. */
static as_code singleton_cost(fu_evaluator *e, int32_t o, fu_group_cost *c, as_status *st)
{
    const wl_graph *g = e->g;
    map_layer_result r;
    memset(&r, 0, sizeof r);
    r.op = o;
    r.problem_class = -1;
    if (map_op_is_compute(&g->ops[o])) {
        as_code code = wl_op_problem(g, o, &r.problem, st);
        if (code != AS_OK)
            return code;
        const map_problem_outcome *m;
        code = mapped_problem(e, &r.problem, &m, st);
        if (code != AS_OK)
            return code;
        if (!m->found) {
            snprintf(c->reason, sizeof c->reason,
                     "op %d '%s': no valid mapping on %s after %lld evaluations", o, g->ops[o].name,
                     e->a.name, (long long)m->evaluated);
            return AS_OK;
        }
        map_cost_compute_layer(g, &e->a, m, &r);
        c->onchip_bytes = bytes_of_words((double)level_tile_words(&m->eval, e->onchip),
                                         e->onchip >= 0 ? e->a.level[e->onchip].word_bits : 8);
    } else {
        map_cost_vector_layer(g, &e->a, &r);
    }
    map_finish_layer(&e->a, &r);
    c->valid = true;
    c->halo = FU_HALO_RECOMPUTE;
    c->n_tiles = 1;
    output_extents(g, o, &c->tile);
    c->dram_bytes = r.dram_bytes;
    c->macs = r.macs;
    c->cycles = r.cycles;
    c->energy_pJ = r.energy_pJ;
    c->dram_energy_pJ = r.energy_by_component_pJ[MAP_COMP_DRAM];
    c->onchip_energy_pJ = r.energy_pJ - c->dram_energy_pJ;
    return AS_OK;
}

/* -------------------------------------------------------------- layout */

/* The rows axis of a tensor (rank - 2), -1 when it has none. */
static int rows_axis(const wl_tensor *t)
{
    return t->rank >= 2 ? t->rank - 2 : -1;
}

/* The cols axis: the last axis of a rank-4 tensor, -1 otherwise. */
static int cols_axis(const wl_tensor *t)
{
    return t->rank == 4 ? 3 : -1;
}

/* Tile axis `which` (0 rows, 1 cols) of t, -1 when it has none. */
static int axis_of(const wl_tensor *t, int which)
{
    return which == 0 ? rows_axis(t) : cols_axis(t);
}

/* Extent of tensor t along tile axis `which` (0 rows, 1 cols); 1 without
 * one (or for an empty axis, so that extents can divide). */
static int64_t extent_of(const wl_tensor *t, int which)
{
    int axis = axis_of(t, which);
    return axis >= 0 && t->dims[axis] > 0 ? t->dims[axis] : 1;
}

/* The whole output 0 of op o as one tile. */
static void output_extents(const wl_graph *g, int32_t o, fu_tile *tile)
{
    const wl_tensor *t = &g->tensors[g->ops[o].outputs[0]];
    tile->rows = extent_of(t, 0);
    tile->cols = extent_of(t, 1);
}

/* --------------------------------------------------------------- regions */

typedef struct span {
    int64_t lo, hi; /* [lo, hi); empty when hi <= lo */
} span;

/* The smallest span holding x and y (an empty one adds nothing). */
static span span_hull(span x, span y)
{
    if (x.hi <= x.lo)
        return y;
    if (y.hi <= y.lo)
        return x;
    return (span){x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi};
}

/* s cut to [0, extent). */
static span span_clip(span s, int64_t extent)
{
    if (s.lo < 0)
        s.lo = 0;
    if (s.hi > extent)
        s.hi = extent;
    return s;
}

/* Same shape on every axis. */
static bool same_dims(const wl_tensor *x, const wl_tensor *y)
{
    if (x->rank != y->rank)
        return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i])
            return false;
    return true;
}

/* Begin padding of a window op on spatial axis i, whose window spans
 * `reach` input positions (the dilated kernel) and moves by `stride`
 * (auto_pad resolved as inference does: SAME pads so that out = ceil(in /
 * stride)). */
static int64_t pad_begin(const wl_op *op, int i, int64_t in_len, int64_t out_len, int64_t stride,
                         int64_t reach)
{
    const wl_attrs *a = &op->attrs;
    if (a->auto_pad == WL_AUTO_PAD_VALID)
        return 0;
    if (a->auto_pad == WL_AUTO_PAD_SAME_UPPER || a->auto_pad == WL_AUTO_PAD_SAME_LOWER) {
        int64_t total = (out_len - 1) * stride + reach - in_len;
        if (total < 0)
            total = 0;
        return a->auto_pad == WL_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    }
    return a->pads[i];
}

/* The span of input x a window op (Conv, MaxPool, AveragePool over 2
 * spatial axes) reads to produce span `out` of y along axis `which`. */
static span window_span(const wl_graph *g, const wl_op *op, int which, span out, const wl_tensor *x,
                        const wl_tensor *y)
{
    int64_t kernel = op->attrs.kernel_shape[which];
    if (kernel <= 0 && op->kind == WL_OP_CONV && op->n_inputs > 1 && op->inputs[1] >= 0)
        kernel = g->tensors[op->inputs[1]].dims[2 + which];
    if (kernel <= 0)
        kernel = 1;
    int64_t stride = op->attrs.strides[which] > 0 ? op->attrs.strides[which] : 1;
    int64_t dil = op->attrs.dilations[which] > 0 ? op->attrs.dilations[which] : 1;
    int64_t reach = (kernel - 1) * dil + 1;
    int64_t pad = pad_begin(op, which, x->dims[2 + which], y->dims[2 + which], stride, reach);
    span s = {out.lo * stride - pad, (out.hi - 1) * stride + reach - pad};
    return span_clip(s, x->dims[2 + which]);
}

/* The op's axis attribute as an axis of its output y (a negative one
 * counts from the end). */
static int64_t axis_attr(const wl_op *op, const wl_tensor *y)
{
    return op->attrs.axis < 0 ? op->attrs.axis + y->rank : op->attrs.axis;
}

/* A normalisation over axes from `axis` on (LayerNormalization; Softmax
 * as its older opsets flatten) leaves tile axis `which` alone when that
 * axis comes before. */
static bool normalises_after(const wl_op *op, const wl_tensor *y, int which)
{
    return axis_of(y, which) < axis_attr(op, y);
}

/*
 * The span of input `i` of member `op` needed to produce span `out` of its
 * output y along tile axis `which` (see "Regions" at the top).
 */
static span need_span(const wl_graph *g, const wl_op *op, int i, int which, span out)
{
    const wl_tensor *x = &g->tensors[op->inputs[i]];
    const wl_tensor *y = &g->tensors[op->outputs[0]];
    span whole = {0, extent_of(x, which)};
    int ax = axis_of(x, which), ay = axis_of(y, which);
    bool same_axis = ax >= 0 && ay >= 0 && x->rank == y->rank && x->dims[ax] == y->dims[ay];
    switch (op->kind) {
    case WL_OP_CONV:
    case WL_OP_MAX_POOL:
    case WL_OP_AVERAGE_POOL:
        return i == 0 && x->rank == 4 && y->rank == 4 ? window_span(g, op, which, out, x, y)
                                                      : whole;
    case WL_OP_MATMUL:
        return i == 0 && which == 0 && same_axis ? out : whole;
    case WL_OP_GEMM:
        return i == 0 && which == 0 && !op->attrs.trans_a && same_axis ? out : whole;
    case WL_OP_LAYERNORM:
    case WL_OP_SOFTMAX:
        return i == 0 && same_axis && normalises_after(op, y, which) ? out : whole;
    case WL_OP_CONCAT:
        return same_axis && axis_attr(op, y) != ay ? out : whole; /* not the joined axis */
    default:
        break;
    }
    switch (wl_op_kind_category(op->kind)) {
    case WL_CAT_UNARY:
    case WL_CAT_BINARY:
    case WL_CAT_NORM:
        return same_dims(x, y) ? out : whole;
    default:
        return whole;
    }
}

/* ---------------------------------------------------------------- groups */

/* A tensor the group touches (views seen through). */
typedef struct gtensor {
    int32_t t;
    int32_t producer;     /* member index, -1: read from outside */
    bool leaves;          /* read outside the group or a graph output */
    bool read_inside;     /* read by a member */
    int64_t extent[2];    /* rows, cols */
    int64_t per_position; /* elements per (row, col) position */
    span cur[2];          /* the current tile's region, per axis */
    /* Per axis over the tiles: */
    int64_t sum[2], uni[2], max_len[2], overlap[2], reach[2];
} gtensor;

/* One member. */
typedef struct gmember {
    int32_t op;
    int32_t out;       /* gtensor index of output 0 */
    int32_t *in;       /* gtensor index per input, -1: none or a weight */
    bool *in_reshaped; /* read through a view that changes the shape */
    bool compute;
    wl_problem problem; /* compute: the whole layer's */
    int64_t macs;       /* compute: useful MACs; others: vector work */
} gmember;

typedef struct group {
    fu_evaluator *e;
    int32_t n;
    gmember *m;
    int32_t n_t;
    gtensor *t;
    int32_t *in_pool;    /* storage of the members' in[] */
    bool *reshaped_pool; /* and in_reshaped[] */
    int32_t n_w;         /* weight tensors (each once) */
    int32_t *w;
    int64_t weight_words, weight_bytes;
} group;

/* The index of op among the members, -1 when it is not one. */
static int32_t member_index(const group *gr, int32_t op)
{
    for (int32_t i = 0; i < gr->n; i++)
        if (gr->m[i].op == op)
            return i;
    return -1;
}

/* Whether tensor t is read outside the group (through views) or is a
 * graph output. */
static bool read_outside(const group *gr, int32_t t, int depth)
{
    const wl_graph *g = gr->e->g;
    if (wl_is_graph_output(g, t))
        return true;
    int32_t n = wl_consumer_count(g, t);
    const int32_t *c = wl_consumer_list(g, t);
    for (int32_t k = 0; k < n; k++) {
        const wl_op *op = &g->ops[c[k]];
        if (op->dead || op->folded)
            continue;
        if (wl_op_kind_category(op->kind) == WL_CAT_VIEW) {
            if (op->inputs[0] == t && depth < 64 && read_outside(gr, op->outputs[0], depth + 1))
                return true;
        } else if (fu_op_in_plan(g, c[k]) && member_index(gr, c[k]) < 0) {
            return true;
        }
    }
    return false;
}

/* The gtensor of graph tensor t, added when new (group_init sized the
 * array for every input and output of every member). */
static int32_t gtensor_of(group *gr, int32_t t)
{
    for (int32_t i = 0; i < gr->n_t; i++)
        if (gr->t[i].t == t)
            return i;
    const wl_tensor *x = &gr->e->g->tensors[t];
    gtensor *gt = &gr->t[gr->n_t];
    memset(gt, 0, sizeof *gt);
    gt->t = t;
    gt->producer = x->producer >= 0 ? member_index(gr, x->producer) : -1;
    gt->extent[0] = extent_of(x, 0);
    gt->extent[1] = extent_of(x, 1);
    int64_t elements = wl_tensor_elements(x);
    gt->per_position = elements > 0 ? elements / (gt->extent[0] * gt->extent[1]) : 0;
    return gr->n_t++;
}

/* Free what group_init allocated, also after it failed half way. */
static void group_free(group *gr)
{
    free(gr->m);
    free(gr->t);
    free(gr->w);
    free(gr->in_pool);
    free(gr->reshaped_pool);
}

/* Count weight tensor x, read by op, once per group.  A Gather from a
 * table reads only the rows it gathers (its output), as wl_op_stats
 * counts it. */
static void add_weight(group *gr, int32_t op, int32_t x)
{
    const wl_graph *g = gr->e->g;
    const wl_tensor *w = &g->tensors[x];
    for (int32_t j = 0; j < gr->n_w; j++)
        if (gr->w[j] == x)
            return;
    if (g->ops[op].kind == WL_OP_GATHER && g->ops[op].inputs[0] == x)
        w = &g->tensors[g->ops[op].outputs[0]];
    int64_t bytes = wl_tensor_bytes(w), words = wl_tensor_elements(w);
    if (bytes <= 0 || words <= 0)
        return;
    gr->w[gr->n_w++] = x;
    gr->weight_bytes += bytes;
    gr->weight_words += words;
}

/* Members (ops in topological order), their tensors and weights. */
static as_code group_init(group *gr, fu_evaluator *e, const int32_t *ops, int32_t n, as_status *st)
{
    const wl_graph *g = e->g;
    int32_t max_t = 0, n_inputs = 0;
    memset(gr, 0, sizeof *gr);
    gr->e = e;
    for (int32_t i = 0; i < n; i++) {
        max_t += g->ops[ops[i]].n_inputs + g->ops[ops[i]].n_outputs;
        n_inputs += g->ops[ops[i]].n_inputs;
    }
    gr->m = calloc((size_t)n, sizeof *gr->m);
    gr->t = calloc((size_t)max_t + 1, sizeof *gr->t);
    gr->w = calloc((size_t)max_t + 1, sizeof *gr->w);
    gr->in_pool = calloc((size_t)n_inputs + 1, sizeof *gr->in_pool);
    gr->reshaped_pool = calloc((size_t)n_inputs + 1, sizeof *gr->reshaped_pool);
    if (!gr->m || !gr->t || !gr->w || !gr->in_pool || !gr->reshaped_pool)
        return as_fail(st, AS_ENOMEM, "out of memory for a group of %d ops", n);
    gr->n = n;
    for (int32_t i = 0, used = 0; i < n; i++) {
        gr->m[i].op = ops[i];
        gr->m[i].in = gr->in_pool + used;
        gr->m[i].in_reshaped = gr->reshaped_pool + used;
        used += g->ops[ops[i]].n_inputs;
    }
    for (int32_t i = 0; i < n; i++) {
        gmember *m = &gr->m[i];
        const wl_op *op = &g->ops[m->op];
        m->out = gtensor_of(gr, op->outputs[0]);
        for (int k = 1; k < op->n_outputs; k++)
            gtensor_of(gr, op->outputs[k]);
        m->compute = map_op_is_compute(op);
        if (m->compute) {
            as_code code = wl_op_problem(g, m->op, &m->problem, st);
            if (code != AS_OK)
                return code;
            m->macs = wl_problem_macs(&m->problem);
        } else {
            wl_op_stats s;
            wl_op_stats_get(g, m->op, &s);
            m->macs = map_vector_ops(g, op, &s);
        }
        for (int k = 0; k < op->n_inputs; k++) {
            int32_t x = op->inputs[k];
            m->in[k] = -1;
            if (x < 0)
                continue;
            if (g->tensors[x].kind == WL_TENSOR_WEIGHT) {
                add_weight(gr, m->op, x);
                continue;
            }
            const wl_tensor *tx = &g->tensors[x];
            if (wl_tensor_is_known(tx))
                continue;
            int32_t base = fu_through_views(g, x);
            m->in[k] = gtensor_of(gr, base);
            m->in_reshaped[k] = !same_dims(tx, &g->tensors[base]);
            gr->t[m->in[k]].read_inside = true;
        }
    }
    for (int32_t i = 0; i < gr->n_t; i++)
        gr->t[i].leaves = gr->t[i].producer >= 0 && read_outside(gr, gr->t[i].t, 0);
    return AS_OK;
}

/* ------------------------------------------------------------ tiling */

/* Counts of one tile shape and halo mode, before mapping. */
typedef struct tiling {
    fu_tile tile;
    int64_t n_tiles, tiles[2];
    fu_halo_mode halo;
    bool weights_resident;
    bool fits;
    int64_t onchip_bytes;
    int64_t dram_bytes;
    int64_t weight_dram_bytes;
    double estimate; /* for choosing which shapes to map */
} tiling;

/* The anchor's span of tile k along axis `which` with tiles of `size`. */
static span tile_span(int64_t k, int64_t size, int64_t extent)
{
    span s = {k * size, (k + 1) * size};
    return span_clip(s, extent);
}

/* A member's output span without in-group consumers (or besides them when
 * it leaves the group): the anchor tile's fraction of its own extent. */
static span share_of(span anchor, int64_t anchor_extent, int64_t extent)
{
    span s = {anchor.lo * extent / anchor_extent,
              (anchor.hi * extent + anchor_extent - 1) / anchor_extent};
    return s;
}

/* Walk the tiles along one axis, accumulating every tensor's sum, union,
 * largest region and largest overlap with what earlier tiles produced. */
static void walk_axis(group *gr, int which, int64_t size)
{
    const wl_graph *g = gr->e->g;
    gtensor *anchor = &gr->t[gr->m[gr->n - 1].out];
    int64_t extent = anchor->extent[which];
    int64_t n_tiles = (extent + size - 1) / size;
    for (int32_t i = 0; i < gr->n_t; i++) {
        gtensor *t = &gr->t[i];
        t->sum[which] = t->uni[which] = t->max_len[which] = t->overlap[which] = 0;
        t->reach[which] = 0;
    }
    for (int64_t k = 0; k < n_tiles; k++) {
        span tile = tile_span(k, size, extent);
        for (int32_t i = 0; i < gr->n_t; i++)
            gr->t[i].cur[which] = (span){0, 0};
        for (int32_t i = gr->n - 1; i >= 0; i--) {
            const gmember *m = &gr->m[i];
            const wl_op *op = &g->ops[m->op];
            gtensor *out = &gr->t[m->out];
            if (i == gr->n - 1)
                out->cur[which] = tile;
            else if (out->leaves || out->cur[which].hi <= out->cur[which].lo)
                out->cur[which] =
                    span_hull(out->cur[which], share_of(tile, extent, out->extent[which]));
            span produce = op->n_outputs == 1 ? out->cur[which] : (span){0, out->extent[which]};
            for (int j = 0; j < op->n_inputs; j++) {
                if (m->in[j] < 0)
                    continue;
                gtensor *in = &gr->t[m->in[j]];
                span need = m->in_reshaped[j] ? (span){0, in->extent[which]}
                                              : need_span(g, op, j, which, produce);
                in->cur[which] = span_hull(in->cur[which], need);
            }
        }
        for (int32_t i = 0; i < gr->n_t; i++) {
            gtensor *t = &gr->t[i];
            span s = t->cur[which];
            int64_t len = s.hi > s.lo ? s.hi - s.lo : 0;
            int64_t kept = k > 0 && t->reach[which] > s.lo ? t->reach[which] - s.lo : 0;
            if (kept > len)
                kept = len;
            t->sum[which] += len;
            t->uni[which] += len - kept;
            if (len > t->max_len[which])
                t->max_len[which] = len;
            if (kept > t->overlap[which])
                t->overlap[which] = kept;
            if (s.hi > t->reach[which])
                t->reach[which] = s.hi;
        }
    }
}

/* Positions of tensor t produced (or read from DRAM) under halo mode h. */
static int64_t positions(const gtensor *t, fu_halo_mode h)
{
    int64_t rows = h == FU_HALO_RECOMPUTE ? t->sum[0] : t->uni[0];
    int64_t cols = h == FU_HALO_CACHE_ALL ? t->uni[1] : t->sum[1];
    return rows * cols;
}

/* The halo words of tensor t kept on chip under mode h (none unless a
 * member reads t). */
static int64_t halo_words(const gtensor *t, fu_halo_mode h)
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
static double executed_work(const group *gr, const gmember *m, fu_halo_mode h)
{
    const gtensor *out = &gr->t[m->out];
    double all = (double)out->extent[0] * (double)out->extent[1];
    return (double)m->macs * (double)positions(out, h) / all;
}

/* Counts of mode h for the axes already walked: footprint against the
 * on-chip level, DRAM bytes, and the estimate used to pick shapes. */
static void count_tiling(const group *gr, tiling *tl)
{
    const fu_evaluator *e = gr->e;
    const wl_graph *g = e->g;
    const arch_level *L = &e->a.level[e->onchip];
    int64_t tile_words = 0, halo = 0, dram = 0;
    for (int32_t i = 0; i < gr->n_t; i++) {
        const gtensor *t = &gr->t[i];
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
    tl->weights_resident = with <= capacity;
    tl->fits = without <= capacity;
    tl->onchip_bytes = bytes_of_words(tl->weights_resident ? with : without, L->word_bits);
    tl->weight_dram_bytes = gr->weight_bytes * (tl->weights_resident ? 1 : tl->n_tiles);
    tl->dram_bytes = dram + tl->weight_dram_bytes;

    double work = 0;
    for (int32_t i = 0; i < gr->n; i++)
        work += executed_work(gr, &gr->m[i], tl->halo);
    double energy = map_dram_pJ(&e->a, tl->dram_bytes) + work * e->a.compute.mac_pJ;
    double peak = map_peak_macs_per_cycle(&e->a);
    double cycles =
        fmax(work / (peak > 0 ? peak : 1), (double)map_dram_cycles(&e->a, tl->dram_bytes));
    tl->estimate = energy * cycles;
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

/* The tile problem of compute member m: its output's largest region. */
static wl_problem tile_problem(const group *gr, const gmember *m)
{
    wl_problem p = m->problem;
    const gtensor *out = &gr->t[m->out];
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

/* Full cost of tiling tl (counts done): map the members on their tile
 * problems and sum.  Invalid (with a reason in c) when a member has no
 * valid mapping. */
static as_code cost_tiling(group *gr, const tiling *tl, fu_group_cost *c, as_status *st)
{
    fu_evaluator *e = gr->e;
    double onchip = 0, cycles = 0;
    int64_t recomputed = 0, useful = 0;
    memset(c, 0, sizeof *c);
    for (int32_t i = 0; i < gr->n; i++) {
        const gmember *m = &gr->m[i];
        double work = executed_work(gr, m, tl->halo);
        if (!m->compute) {
            onchip += work * e->a.compute.mac_pJ;
            cycles += ceil(work / map_vector_lanes(&e->a));
            continue;
        }
        wl_problem p = tile_problem(gr, m);
        const map_problem_outcome *me;
        as_code code = mapped_problem(e, &p, &me, st);
        if (code != AS_OK)
            return code;
        if (!me->found) {
            snprintf(c->reason, sizeof c->reason,
                     "op %d '%s': no valid mapping of its %lldx%lld tile on %s", m->op,
                     e->g->ops[m->op].name, (long long)p.bound[WL_DIM_P],
                     (long long)p.bound[WL_DIM_Q], e->a.name);
            return AS_OK;
        }
        double tile_energy, tile_cycles, tile_macs = (double)wl_problem_macs(&p);
        onchip_share(e, &me->eval, &tile_energy, &tile_cycles);
        onchip += tile_energy * work / tile_macs;
        cycles += ceil(tile_cycles * work / tile_macs);
        int64_t executed = llround(work);
        useful += m->macs;
        const gtensor *out = &gr->t[m->out];
        double produced = (double)out->uni[0] * (double)out->uni[1] /
                          ((double)out->extent[0] * (double)out->extent[1]);
        int64_t needed = llround((double)m->macs * produced);
        recomputed += executed > needed ? executed - needed : 0;
    }
    c->valid = true;
    c->tile = tl->tile;
    c->halo = tl->halo;
    c->n_tiles = tl->n_tiles;
    c->onchip_bytes = tl->onchip_bytes;
    c->dram_bytes = tl->dram_bytes;
    c->macs = useful;
    c->recomputed_macs = recomputed;
    c->onchip_energy_pJ = onchip;
    c->dram_energy_pJ = map_dram_pJ(&e->a, tl->dram_bytes);
    c->energy_pJ = c->onchip_energy_pJ + c->dram_energy_pJ;
    /* Double buffering: DRAM transfers of one tile overlap the compute of
     * another, so the slower of the two sets the pace. */
    int64_t compute_cycles = (int64_t)cycles;
    int64_t dram_cycles = map_dram_cycles(&e->a, tl->dram_bytes);
    c->cycles = compute_cycles > dram_cycles ? compute_cycles : dram_cycles;
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
static void count_shape(group *gr, int64_t rows, int64_t cols, tiling *out)
{
    const gtensor *anchor = &gr->t[gr->m[gr->n - 1].out];
    walk_axis(gr, 0, rows);
    walk_axis(gr, 1, cols);
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
    snprintf(c->reason, sizeof c->reason,
             "footprint of %lld bytes at best does not fit %s (%lld bytes)", (long long)smallest,
             L->name,
             (long long)bytes_of_words((double)L->size_words * (double)L->instances, L->word_bits));
}

/* The fused cost of a group of two or more ops (see the top), over every
 * tile shape and halo mode, or only tile *only in mode only_halo. */
static as_code fused_cost(fu_evaluator *e, const int32_t *ops, int32_t n, const fu_tile *only,
                          fu_halo_mode only_halo, fu_group_cost *best, as_status *st)
{
    group gr;
    as_code code = group_init(&gr, e, ops, n, st);
    tiling *cand = NULL;
    memset(best, 0, sizeof *best);
    if (code == AS_OK && e->onchip < 0) {
        snprintf(best->reason, sizeof best->reason, "%s has no on-chip level to fuse in",
                 e->a.name);
        group_free(&gr);
        return AS_OK;
    }
    int64_t rows[MAX_AXIS_SIZES], cols[MAX_AXIS_SIZES];
    int n_rows = 0, n_cols = 0, n_cand = 0;
    if (code == AS_OK) {
        const gtensor *anchor = &gr.t[gr.m[n - 1].out];
        bool matmul_anchor = gr.m[n - 1].compute && gr.m[n - 1].problem.kind != WL_PROBLEM_CONV &&
                             gr.m[n - 1].problem.kind != WL_PROBLEM_DEPTHWISE;
        n_rows = axis_sizes(anchor->extent[0], false, rows);
        n_cols = axis_sizes(anchor->extent[1], matmul_anchor, cols);
        if (only) {
            n_rows = n_cols = 1;
            rows[0] =
                only->rows > 0 && only->rows < anchor->extent[0] ? only->rows : anchor->extent[0];
            cols[0] =
                only->cols > 0 && only->cols < anchor->extent[1] ? only->cols : anchor->extent[1];
        }
        cand = malloc((size_t)(n_rows * n_cols * N_HALO_MODES) * sizeof *cand);
        if (!cand)
            code = as_fail(st, AS_ENOMEM, "out of memory for tile candidates");
    }
    for (int r = 0; code == AS_OK && r < n_rows; r++)
        for (int k = 0; k < n_cols; k++, n_cand += N_HALO_MODES)
            count_shape(&gr, rows[r], cols[k], &cand[n_cand]);
    if (code == AS_OK && only) {
        cand[0] = cand[only_halo];
        n_cand = 1;
    }
    if (code == AS_OK) {
        qsort(cand, (size_t)n_cand, sizeof *cand, by_estimate);
        if (n_cand > 0 && !cand[0].fits)
            explain_no_fit(e, cand, n_cand, best);
    }
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
            walk_axis(&gr, 0, walked.rows);
            walk_axis(&gr, 1, walked.cols);
        }
        fu_group_cost c;
        code = cost_tiling(&gr, &cand[i], &c, st);
        if (code == AS_OK && (better(&c, best) || (!best->valid && !c.valid)))
            *best = c;
    }
    free(cand);
    group_free(&gr);
    return code;
}

/* --------------------------------------------------------- entry points */

/* qsort and bsearch order of op indices. */
static int by_op(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The cached cost of the sorted member list ops[0 .. n) (hash h), or
 * NULL; the caller holds the lock. */
static const group_entry *cached_group(fu_evaluator *e, const int32_t *ops, int32_t n, uint64_t h)
{
    member_list key = {ops, n};
    return as_table_find(&e->groups, h, &key, group_has_members, NULL);
}

/* Remember cost c of ops[0 .. n) (a failure to remember only costs time). */
static void remember_group(fu_evaluator *e, const int32_t *ops, int32_t n, uint64_t h,
                           const fu_group_cost *c)
{
    int32_t *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, ops, (size_t)n * sizeof *copy);
    member_list key = {ops, n};
    bool added = false;
    omp_set_lock(&e->lock);
    group_entry *ge = as_table_insert(&e->groups, h, &key, group_has_members, NULL, &added);
    if (added)
        *ge = (group_entry){.n = n, .ops = copy, .cost = *c};
    omp_unset_lock(&e->lock);
    if (!added)
        free(copy);
}

/* ops[0 .. n) sorted by op index into *sorted (malloc'd), after checking
 * that they are distinct working ops. */
static as_code sorted_members(const wl_graph *g, const int32_t *ops, int32_t n, int32_t **sorted,
                              as_status *st)
{
    *sorted = NULL;
    if (n < 1)
        return as_fail(st, AS_EINVAL, "%s: a group needs at least one op", g->source);
    int32_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory for a group of %d ops", n);
    memcpy(s, ops, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_op);
    for (int32_t i = 0; i < n; i++) {
        as_code code = AS_OK;
        if (!fu_op_in_plan(g, s[i]))
            code = as_fail(st, AS_EINVAL, "%s: op %d is not a working op of the graph", g->source,
                           s[i]);
        else if (i > 0 && s[i - 1] == s[i])
            code = as_fail(st, AS_EINVAL, "%s: op %d '%s' listed twice in a group", g->source, s[i],
                           g->ops[s[i]].name);
        if (code != AS_OK) {
            free(s);
            return code;
        }
    }
    *sorted = s;
    return AS_OK;
}

/* The cost of the sorted members: a layer alone, or fused (members put in
 * topological order, the last being the anchor). */
static as_code group_cost(fu_evaluator *e, const int32_t *sorted, int32_t n, const fu_tile *only,
                          fu_halo_mode only_halo, fu_group_cost *out, as_status *st)
{
    const wl_graph *g = e->g;
    memset(out, 0, sizeof *out);
    if (n == 1)
        return singleton_cost(e, sorted[0], out, st);
    int32_t *topo = malloc((size_t)n * sizeof *topo), k = 0;
    if (!topo)
        return as_fail(st, AS_ENOMEM, "out of memory for a group of %d ops", n);
    for (int32_t i = 0; i < g->n_order; i++)
        if (bsearch(&g->order[i], sorted, (size_t)n, sizeof *sorted, by_op))
            topo[k++] = g->order[i];
    as_code code = fused_cost(e, topo, k, only, only_halo, out, st);
    free(topo);
    return code;
}

as_code fu_group_evaluate(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_group_cost *out,
                          as_status *st)
{
    int32_t *sorted;
    memset(out, 0, sizeof *out);
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code != AS_OK)
        return code;
    uint64_t h = as_hash_bytes(sorted, (size_t)n_ops * sizeof *sorted, AS_HASH_SEED);
    omp_set_lock(&e->lock);
    const group_entry *hit = cached_group(e, sorted, n_ops, h);
    if (hit)
        *out = hit->cost;
    omp_unset_lock(&e->lock);
    if (!hit) {
        code = group_cost(e, sorted, n_ops, NULL, FU_HALO_RECOMPUTE, out, st);
        if (code == AS_OK)
            remember_group(e, sorted, n_ops, h, out);
    }
    free(sorted);
    return code;
}

as_code fu_group_evaluate_tile(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile tile,
                               fu_halo_mode halo, fu_group_cost *out, as_status *st)
{
    int32_t *sorted;
    memset(out, 0, sizeof *out);
    if ((unsigned)halo > FU_HALO_CACHE_ALL)
        return as_fail(st, AS_EINVAL, "halo mode %d is not one of fu_halo_mode", (int)halo);
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code == AS_OK)
        code = group_cost(e, sorted, n_ops, &tile, halo, out, st);
    free(sorted);
    return code;
}

void fu_plan_cost_free(fu_plan_cost *c)
{
    if (!c)
        return;
    free(c->groups);
    memset(c, 0, sizeof *c);
}

as_code fu_plan_evaluate(fu_evaluator *e, const fu_plan *p, fu_plan_cost *out, as_status *st)
{
    const wl_graph *g = e->g;
    memset(out, 0, sizeof *out);
    if (!fu_plan_valid(g, p, out->reason, sizeof out->reason))
        return AS_OK;
    out->groups = calloc((size_t)(p->n_groups > 0 ? p->n_groups : 1), sizeof *out->groups);
    int32_t *start = malloc((size_t)(p->n_groups + 1) * sizeof *start);
    int32_t *members = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *members);
    as_code code = AS_OK;
    if (!out->groups || !start || !members)
        code = as_fail(st, AS_ENOMEM, "out of memory evaluating a plan of %d groups", p->n_groups);
    else
        fu_plan_members(g, p, start, members);
    out->n_groups = p->n_groups;
    out->valid = true;
    for (int32_t gid = 0; code == AS_OK && gid < p->n_groups; gid++) {
        fu_group_cost *c = &out->groups[gid];
        code = fu_group_evaluate(e, members + start[gid], start[gid + 1] - start[gid], c, st);
        if (code != AS_OK)
            break;
        if (!c->valid && out->valid)
            snprintf(out->reason, sizeof out->reason, "group %d: %.140s", gid, c->reason);
        out->valid &= c->valid;
        out->cycles += c->cycles;
        out->energy_pJ += c->energy_pJ;
        out->onchip_energy_pJ += c->onchip_energy_pJ;
        out->dram_energy_pJ += c->dram_energy_pJ;
        out->dram_bytes += c->dram_bytes;
        out->macs += c->macs;
        out->recomputed_macs += c->recomputed_macs;
    }
    free(start);
    free(members);
    if (code != AS_OK) {
        fu_plan_cost_free(out);
        return code;
    }
    out->latency_s = (double)out->cycles * e->a.cycle_seconds;
    out->edp_J_cycle = out->energy_pJ * 1e-12 * (double)out->cycles;
    out->op_intensity = out->dram_bytes > 0 ? 2.0 * (double)out->macs / (double)out->dram_bytes : 0;
    return AS_OK;
}
