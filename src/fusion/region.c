/*
 * region.c -- the geometry of a fused group (group.c gives the overview of
 * the model, tiling.c its costs): its tensors and members, and the region
 * of every tensor each tile needs.
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
 * (need_span, by the halo rule the op table gives, wl_op_halo):
 * convolution and pooling windows map rows [lo, hi) to
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
 */
#include "fusion_private.h"

#include <stdlib.h>
#include <string.h>

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
void fu_output_extents(const wl_graph *g, int32_t o, fu_tile *tile)
{
    const wl_tensor *t = &g->tensors[g->ops[o].outputs[0]];
    tile->rows = extent_of(t, 0);
    tile->cols = extent_of(t, 1);
}

/* The smallest span holding x and y (an empty one adds nothing). */
static fu_span span_hull(fu_span x, fu_span y)
{
    if (x.hi <= x.lo)
        return y;
    if (y.hi <= y.lo)
        return x;
    return (fu_span){x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi};
}

/* s cut to [0, extent). */
static fu_span span_clip(fu_span s, int64_t extent)
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
static fu_span window_span(const wl_graph *g, const wl_op *op, int which, fu_span out,
                           const wl_tensor *x, const wl_tensor *y)
{
    int64_t kernel = op->attrs.kernel_shape[which];
    if (kernel <= 0 && wl_op_kernel_from_weight(op->kind) && op->n_inputs > 1 && op->inputs[1] >= 0)
        kernel = g->tensors[op->inputs[1]].dims[2 + which];
    if (kernel <= 0)
        kernel = 1;
    int64_t stride = op->attrs.strides[which] > 0 ? op->attrs.strides[which] : 1;
    int64_t dil = op->attrs.dilations[which] > 0 ? op->attrs.dilations[which] : 1;
    int64_t reach = (kernel - 1) * dil + 1;
    int64_t pad = pad_begin(op, which, x->dims[2 + which], y->dims[2 + which], stride, reach);
    fu_span s = {out.lo * stride - pad, (out.hi - 1) * stride + reach - pad};
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
static fu_span need_span(const wl_graph *g, const wl_op *op, int i, int which, fu_span out)
{
    const wl_tensor *x = &g->tensors[op->inputs[i]];
    const wl_tensor *y = &g->tensors[op->outputs[0]];
    fu_span whole = {0, extent_of(x, which)};
    int ax = axis_of(x, which), ay = axis_of(y, which);
    bool same_axis = ax >= 0 && ay >= 0 && x->rank == y->rank && x->dims[ax] == y->dims[ay];
    switch (wl_op_halo(op, i)) {
    case WL_HALO_WINDOW:
        return x->rank == 4 && y->rank == 4 ? window_span(g, op, which, out, x, y) : whole;
    case WL_HALO_ROWS:
        return which == 0 && same_axis ? out : whole;
    case WL_HALO_BEFORE_AXIS:
        return same_axis && normalises_after(op, y, which) ? out : whole;
    case WL_HALO_NOT_AXIS:
        return same_axis && axis_attr(op, y) != ay ? out : whole; /* not the joined axis */
    case WL_HALO_POINTWISE:
        return same_dims(x, y) ? out : whole;
    case WL_HALO_WHOLE:
        break;
    }
    return whole;
}

/* ---------------------------------------------------------------- groups */

/* The index of op among the members, -1 when it is not one. */
static int32_t member_index(const fu_group *gr, int32_t op)
{
    for (int32_t i = 0; i < gr->n; i++)
        if (gr->m[i].op == op)
            return i;
    return -1;
}

/* Whether tensor t is read outside the group (through views) or is a
 * graph output. */
static bool read_outside(const fu_group *gr, int32_t t, int depth)
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
        if (wl_op_category_of(op) == WL_CAT_VIEW) {
            if (op->inputs[0] == t && depth < 64 && read_outside(gr, op->outputs[0], depth + 1))
                return true;
        } else if (wl_op_does_work(op) && member_index(gr, c[k]) < 0) {
            return true;
        }
    }
    return false;
}

/* The group tensor of graph tensor t, added when new (group_init sized the
 * array for every input and output of every member). */
static int32_t gtensor_of(fu_group *gr, int32_t t)
{
    for (int32_t i = 0; i < gr->n_t; i++)
        if (gr->t[i].t == t)
            return i;
    const wl_tensor *x = &gr->e->g->tensors[t];
    fu_gtensor *gt = &gr->t[gr->n_t];
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
void fu_group_free(fu_group *gr)
{
    free(gr->m);
    free(gr->t);
    free(gr->w);
    free(gr->in_pool);
    free(gr->reshaped_pool);
}

/* Count weight tensor x, read by op, once per group.  A Gather from a
 * table reads only the rows it gathers (its output), as wl_op_stats
 * counts it.  A dense design's bytes and words are wl_tensor_bytes and
 * wl_tensor_elements. */
static void add_weight(fu_group *gr, int32_t op, int32_t x)
{
    const wl_graph *g = gr->e->g;
    const wl_tensor *w = &g->tensors[x];
    for (int32_t j = 0; j < gr->n_w; j++)
        if (gr->w[j] == x)
            return;
    if (wl_op_gathers_rows(&g->ops[op], 0) && g->ops[op].inputs[0] == x)
        w = &g->tensors[g->ops[op].outputs[0]];
    /* As the design stores weights: compressed in DRAM and on chip where
     * its formats say so (sparse.c), else every element. */
    const fu_evaluator *e = gr->e;
    int64_t bytes = map_sparse_weight_dram_bytes(&e->a, w);
    int64_t words = map_sparse_weight_words(e->onchip >= 0 ? &e->a.level[e->onchip] : NULL, w);
    if (bytes <= 0 || words <= 0)
        return;
    gr->w[gr->n_w++] = x;
    gr->weight_bytes += bytes;
    gr->weight_words += words;
}

/* Members (ops in topological order), their tensors and weights. */
as_code fu_group_init(fu_group *gr, fu_evaluator *e, const int32_t *ops, int32_t n, as_status *st)
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
        fu_member *m = &gr->m[i];
        const wl_op *op = &g->ops[m->op];
        m->out = gtensor_of(gr, op->outputs[0]);
        m->root = member_index(gr, wl_fused_root(g, m->op));
        if (m->root < 0)
            m->root = i;
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
            m->macs = wl_op_vector_ops(g, op, &s);
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

/* The anchor's span of tile k along axis `which` with tiles of `size`. */
static fu_span tile_span(int64_t k, int64_t size, int64_t extent)
{
    fu_span s = {k * size, (k + 1) * size};
    return span_clip(s, extent);
}

/* A member's output span without in-group consumers (or besides them when
 * it leaves the group): the anchor tile's fraction of its own extent. */
static fu_span share_of(fu_span anchor, int64_t anchor_extent, int64_t extent)
{
    fu_span s = {anchor.lo * extent / anchor_extent,
                 (anchor.hi * extent + anchor_extent - 1) / anchor_extent};
    return s;
}

/* Walk the tiles along one axis, accumulating every tensor's sum, union,
 * largest region and largest overlap with what earlier tiles produced. */
void fu_walk_axis(fu_group *gr, int which, int64_t size)
{
    const wl_graph *g = gr->e->g;
    fu_gtensor *anchor = &gr->t[gr->m[gr->n - 1].out];
    int64_t extent = anchor->extent[which];
    int64_t n_tiles = (extent + size - 1) / size;
    for (int32_t i = 0; i < gr->n_t; i++) {
        fu_gtensor *t = &gr->t[i];
        t->sum[which] = t->uni[which] = t->max_len[which] = t->overlap[which] = 0;
        t->reach[which] = 0;
    }
    for (int64_t k = 0; k < n_tiles; k++) {
        fu_span tile = tile_span(k, size, extent);
        for (int32_t i = 0; i < gr->n_t; i++)
            gr->t[i].cur[which] = (fu_span){0, 0};
        for (int32_t i = gr->n - 1; i >= 0; i--) {
            const fu_member *m = &gr->m[i];
            const wl_op *op = &g->ops[m->op];
            fu_gtensor *out = &gr->t[m->out];
            if (i == gr->n - 1)
                out->cur[which] = tile;
            else if (out->leaves || out->cur[which].hi <= out->cur[which].lo)
                out->cur[which] =
                    span_hull(out->cur[which], share_of(tile, extent, out->extent[which]));
            fu_span produce =
                op->n_outputs == 1 ? out->cur[which] : (fu_span){0, out->extent[which]};
            for (int j = 0; j < op->n_inputs; j++) {
                if (m->in[j] < 0)
                    continue;
                fu_gtensor *in = &gr->t[m->in[j]];
                fu_span need = m->in_reshaped[j] ? (fu_span){0, in->extent[which]}
                                                 : need_span(g, op, j, which, produce);
                in->cur[which] = span_hull(in->cur[which], need);
            }
        }
        for (int32_t i = 0; i < gr->n_t; i++) {
            fu_gtensor *t = &gr->t[i];
            fu_span s = t->cur[which];
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
