/*
 * relax.c -- map_evaluate's model on tape values (diff.h, layer 2): the
 * same nest analysis (nest.c), collapse to levels, buffer, energy and
 * cycle models (eval.c) and systolic fold model (array.c, systolic.c),
 * step for step and in the same floating-point order wherever a rounding
 * follows, so that at integer factors and temperature 0 every count is
 * map_evaluate's.  Comments name the function each part mirrors; the
 * model itself is explained there and in docs/timeloop-semantics.md.
 *
 * Decisions the exact model takes on integers are taken here on the
 * values: a loop exists when its factor exceeds 1; tile translations are
 * zero or equal within EPS elements.  One decision has no continuous
 * form: the multicast groups of spatial loops that move a data space
 * along a shared rank (Eyeriss's diagonal reuse) are counted on the
 * factors rounded to integers, as constants.
 */
#include "diff.h"

#include "../mapping/eval_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Element offsets closer than this are equal (integers at the corners). */
#define EPS 1e-7

typedef struct rloop {
    wl_dim dim;
    int level;
    bool spatial;
    df_var bound, step;
} rloop;

/* nest (eval_private.h) with tape values. */
typedef struct rnest {
    df_tape *t;
    df_var zero, one;
    int n_loops;
    rloop loop[NEST_MAX_LOOPS];
    int first[ARCH_MAX_LEVELS], boundary[ARCH_MAX_LEVELS], n_spatial[ARCH_MAX_LEVELS];
    df_var tile_extent[ARCH_MAX_LEVELS][WL_NDIMS];
    df_var spread_extent[ARCH_MAX_LEVELS][WL_NDIMS];
    df_var fanout[ARCH_MAX_LEVELS], replication[ARCH_MAX_LEVELS];
    df_var temporal_iterations;
} rnest;

#define V(x) df_value(n->t, (x))

/* append_block */
static void append_block(rnest *n, const map_level *ml, const df_var *factor, int level,
                         bool spatial)
{
    const uint8_t *order = spatial ? ml->spatial_order : ml->temporal_order;
    for (int i = 0; i < WL_NDIMS; i++) {
        wl_dim d = (wl_dim)order[i];
        if (V(factor[d]) > 1)
            n->loop[n->n_loops++] =
                (rloop){.dim = d, .level = level, .spatial = spatial, .bound = factor[d]};
    }
}

/* nest_build */
static void build(rnest *n, const map_mapping *m, const df_factors *f)
{
    df_tape *t = n->t;
    df_var extent[WL_NDIMS];
    n->n_loops = 0;
    n->temporal_iterations = n->one;
    for (int d = 0; d < WL_NDIMS; d++)
        extent[d] = n->one;
    for (int l = 0; l < m->n_levels; l++) {
        const map_level *ml = &m->level[l];
        n->first[l] = n->n_loops;
        append_block(n, ml, f->spatial[l], l, true);
        n->n_spatial[l] = n->n_loops - n->first[l];
        int temporal_start = n->n_loops;
        append_block(n, ml, f->temporal[l], l, false);
        if (n->n_loops == temporal_start)
            n->loop[n->n_loops++] = (rloop){.dim = WL_DIM_N, .level = l, .bound = n->one};
        n->boundary[l] = n->n_loops - 1;
        n->fanout[l] = n->one;
        for (int i = n->first[l]; i < n->n_loops; i++) {
            rloop *lp = &n->loop[i];
            lp->step = extent[lp->dim];
            extent[lp->dim] = df_mul(t, extent[lp->dim], lp->bound);
            if (lp->spatial)
                n->fanout[l] = df_mul(t, n->fanout[l], lp->bound);
            else
                n->temporal_iterations = df_mul(t, n->temporal_iterations, lp->bound);
            if (i == n->first[l] + n->n_spatial[l] - 1)
                memcpy(n->spread_extent[l], extent, sizeof extent);
        }
        memcpy(n->tile_extent[l], extent, sizeof extent);
        if (n->n_spatial[l] == 0)
            for (int d = 0; d < WL_NDIMS; d++)
                n->spread_extent[l][d] = l > 0 ? n->tile_extent[l - 1][d] : n->one;
    }
    df_var above = n->one;
    for (int l = m->n_levels - 1; l >= 0; l--) {
        n->replication[l] = above;
        above = df_mul(t, above, n->fanout[l]);
    }
}

/* rank_extents */
static void rank_extents(const rnest *n, const wl_dataspace *ds, const df_var ext[WL_NDIMS],
                         df_var out[WL_MAX_DS_RANKS])
{
    df_tape *t = n->t;
    for (int r = 0; r < ds->n_ranks; r++) {
        df_var span = n->one;
        for (int k = 0; k < ds->ranks[r].n_terms; k++) {
            const wl_proj_term *term = &ds->ranks[r].terms[k];
            double coef = (double)(term->coef < 0 ? -term->coef : term->coef);
            span = df_add(t, span, df_mul_c(t, df_add_c(t, ext[term->dim], -1), coef));
        }
        out[r] = span;
    }
}

/* nest_box_words */
static df_var box_words(const rnest *n, const wl_dataspace *ds, const df_var ext[WL_NDIMS])
{
    df_var span[WL_MAX_DS_RANKS];
    df_var words = n->one;
    rank_extents(n, ds, ext, span);
    for (int r = 0; r < ds->n_ranks; r++)
        words = df_mul(n->t, words, span[r]);
    return words;
}

/* project_step, one step */
static void project_step(const rnest *n, const wl_dataspace *ds, const rloop *lp,
                         df_var out[WL_MAX_DS_RANKS])
{
    for (int r = 0; r < ds->n_ranks; r++) {
        out[r] = n->zero;
        for (int k = 0; k < ds->ranks[r].n_terms; k++)
            if (ds->ranks[r].terms[k].dim == lp->dim)
                out[r] = df_add(n->t, out[r],
                                df_mul_c(n->t, lp->step, (double)ds->ranks[r].terms[k].coef));
    }
}

static bool is_zero(const rnest *n, const df_var *v, int ranks)
{
    for (int r = 0; r < ranks; r++)
        if (fabs(V(v[r])) > EPS)
            return false;
    return true;
}

static bool same(const rnest *n, const df_var *x, const df_var *y, int ranks)
{
    for (int r = 0; r < ranks; r++)
        if (fabs(V(x[r]) - V(y[r])) > EPS)
            return false;
    return true;
}

/* --------------------------------------------------------- temporal reuse */

/* reuse_walk */
typedef struct rwalk {
    const rnest *n;
    int ranks;
    df_var extent[WL_MAX_DS_RANKS], volume;
    int n_steps, first_moving;
    df_var step[NEST_MAX_LOOPS][WL_MAX_DS_RANKS];
    int canon[NEST_MAX_LOOPS];
    df_var weight[NEST_MAX_LOOPS];
    bool memo_done[NEST_MAX_LOOPS + 1][2];
    df_var memo_words[NEST_MAX_LOOPS + 1][2];
    int memo_exit[NEST_MAX_LOOPS + 1][2];
} rwalk;

#define PT_NULL (-1)

/* moved_words */
static df_var moved_words(const rwalk *w, const df_var *shift)
{
    df_tape *t = w->n->t;
    df_var overlap = w->n->one;
    for (int r = 0; r < w->ranks; r++) {
        df_var left = df_sub(t, w->extent[r], df_abs(t, shift[r]));
        overlap = df_mul(t, overlap, df_relu(t, left, 1.0));
    }
    return df_sub(t, w->volume, overlap);
}

/* reuse_step */
static int reuse_step(const rwalk *w, int pt, int j, df_var *words)
{
    if (is_zero(w->n, w->step[j], w->ranks)) {
        *words = w->n->zero;
        return pt;
    }
    if (pt == PT_NULL || pt == w->canon[j]) {
        *words = moved_words(w, w->step[j]);
        return w->canon[j];
    }
    *words = w->volume;
    return PT_NULL;
}

/* reuse_block */
static df_var reuse_block(rwalk *w, int m, int pt, int *exit)
{
    df_tape *t = w->n->t;
    if (m <= w->first_moving) {
        *exit = pt;
        return w->n->zero;
    }
    int compatible = pt == PT_NULL || pt == w->canon[w->first_moving];
    if (w->memo_done[m][compatible]) {
        *exit = w->memo_exit[m][compatible];
        return w->memo_words[m][compatible];
    }
    int p1, p3;
    df_var first_half = reuse_block(w, m - 1, pt, &p1);
    df_var carry_words;
    int p2 = reuse_step(w, p1, m - 1, &carry_words);
    df_var second_half = reuse_block(w, m - 1, p2, &p3);
    df_var words =
        df_add(t, first_half, df_mul(t, w->weight[m - 1], df_add(t, carry_words, second_half)));
    w->memo_done[m][compatible] = true;
    w->memo_words[m][compatible] = words;
    w->memo_exit[m][compatible] = p3;
    *exit = p3;
    return words;
}

/* nest_child_pulls */
static df_var child_pulls(const rnest *n, const wl_dataspace *ds, int level)
{
    df_tape *t = n->t;
    rwalk w;
    int c = n->boundary[level];
    df_var moved_so_far[WL_MAX_DS_RANKS];
    w.n = n;
    w.ranks = ds->n_ranks;
    rank_extents(n, ds, n->tile_extent[level], w.extent);
    w.volume = n->one;
    for (int r = 0; r < w.ranks; r++) {
        w.volume = df_mul(t, w.volume, w.extent[r]);
        moved_so_far[r] = n->zero;
    }
    w.n_steps = 0;
    w.first_moving = -1;
    for (int i = c + 1; i < n->n_loops; i++) {
        const rloop *lp = &n->loop[i];
        if (lp->spatial || !(V(lp->bound) > 1))
            continue;
        int j = w.n_steps++;
        df_var advance[WL_MAX_DS_RANKS];
        project_step(n, ds, lp, advance);
        for (int r = 0; r < w.ranks; r++) {
            w.step[j][r] = df_sub(t, advance[r], moved_so_far[r]);
            moved_so_far[r] = df_add(t, moved_so_far[r], advance[r]);
        }
        w.weight[j] = df_add_c(t, lp->bound, -1);
        w.canon[j] = j;
        for (int i2 = 0; i2 < j; i2++)
            if (same(n, w.step[i2], w.step[j], w.ranks)) {
                w.canon[j] = w.canon[i2];
                break;
            }
        if (w.first_moving < 0 && !is_zero(n, w.step[j], w.ranks))
            w.first_moving = j;
    }
    if (w.first_moving < 0)
        w.first_moving = w.n_steps;
    memset(w.memo_done, 0, sizeof w.memo_done);
    int exit;
    return df_add(t, w.volume, reuse_block(&w, w.n_steps, PT_NULL, &exit));
}

/* ------------------------------------------------------------ multicast */

typedef struct rgroup {
    df_var multicast, scatter;
} rgroup;

typedef struct rhist {
    int n;
    rgroup g[NEST_MAX_GROUPS];
} rhist;

/* hist_add: merge groups of equal multicast (by value). */
static bool rhist_add(const rnest *n, rhist *h, df_var multicast, df_var scatter)
{
    int i = 0;
    while (i < h->n && V(h->g[i].multicast) < V(multicast) - EPS)
        i++;
    if (i < h->n && fabs(V(h->g[i].multicast) - V(multicast)) <= EPS) {
        h->g[i].scatter = df_add(n->t, h->g[i].scatter, scatter);
        return true;
    }
    if (h->n == NEST_MAX_GROUPS)
        return false;
    memmove(&h->g[i + 1], &h->g[i], sizeof(rgroup) * (size_t)(h->n - i));
    h->g[i] = (rgroup){multicast, scatter};
    h->n++;
    return true;
}

/* The groups of a level whose coupled spatial loops have no continuous
 * form: nest.c's count on the factors rounded, as constants. */
static int rounded_groups(const rnest *n, const map_mapping *skeleton, const df_factors *f,
                          const wl_dataspace *ds, int level, rhist *h, char *why, size_t why_size)
{
    map_mapping m = *skeleton;
    nest nn;
    nest_group g[NEST_MAX_GROUPS];
    for (int l = 0; l < m.n_levels; l++)
        for (int d = 0; d < WL_NDIMS; d++) {
            double s = round(V(f->spatial[l][d])), tv = round(V(f->temporal[l][d]));
            m.level[l].spatial[d] = s < 1 ? 1 : (int64_t)s;
            m.level[l].temporal[d] = tv < 1 ? 1 : (int64_t)tv;
        }
    nest_build(&m, m.n_levels, &nn);
    int k = nest_multicast_groups(&nn, ds, level, g, why, why_size);
    h->n = 0;
    for (int i = 0; i < k; i++)
        h->g[h->n++] =
            (rgroup){df_const(n->t, (double)g[i].multicast), df_const(n->t, (double)g[i].scatter)};
    return k;
}

/* nest_multicast_groups: -1 (why written) when beyond the analysis. */
static int multicast_groups(const rnest *n, const map_mapping *skeleton, const df_factors *f,
                            const wl_dataspace *ds, int level, rgroup out[NEST_MAX_GROUPS],
                            char *why, size_t why_size)
{
    df_tape *t = n->t;
    bool moves[NEST_MAX_LOOPS] = {false};
    uint32_t ranks_of[NEST_MAX_LOOPS] = {0};
    df_var shared = n->one;
    rhist h = {0};
    int lo = n->first[level], hi = lo + n->n_spatial[level];
    for (int i = lo; i < hi; i++) {
        const rloop *lp = &n->loop[i];
        for (int r = 0; r < ds->n_ranks; r++)
            for (int k = 0; k < ds->ranks[r].n_terms; k++)
                if (ds->ranks[r].terms[k].dim == lp->dim && ds->ranks[r].terms[k].coef != 0)
                    ranks_of[i] |= 1u << r;
        moves[i] = ranks_of[i] != 0;
        if (!moves[i])
            shared = df_mul(t, shared, lp->bound);
    }
    /* Loops moving ds along a common rank are coupled: no continuous form. */
    for (int a = lo; a < hi; a++)
        for (int b = a + 1; b < hi; b++)
            if (moves[a] && moves[b] && (ranks_of[a] & ranks_of[b])) {
                int k = rounded_groups(n, skeleton, f, ds, level, &h, why, why_size);
                memcpy(out, h.g, sizeof(rgroup) * (size_t)(k > 0 ? k : 0));
                return k;
            }
    rhist_add(n, &h, shared, n->one);
    for (int i = lo; i < hi; i++) {
        if (!moves[i])
            continue;
        /* hist_multiply by {(1, bound)}: every group splits bound ways. */
        for (int g = 0; g < h.n; g++)
            h.g[g].scatter = df_mul(t, h.g[g].scatter, n->loop[i].bound);
    }
    memcpy(out, h.g, sizeof(rgroup) * (size_t)h.n);
    return h.n;
}

/* ------------------------------------------------- collapse to levels */

/* level_traffic */
typedef struct rtraffic {
    bool bypassed;
    df_var size, partition, content, parent_share;
    int n_groups;
    rgroup group[NEST_MAX_GROUPS];
    df_var accesses[NEST_MAX_GROUPS];
} rtraffic;

static df_var total_accesses(const rnest *n, const rtraffic *tr)
{
    df_var sum = n->zero;
    for (int g = 0; g < tr->n_groups; g++)
        sum = df_add(n->t, sum, tr->accesses[g]);
    return sum;
}

static void bypass(const rnest *n, rtraffic *tr)
{
    tr->bypassed = true;
    tr->size = tr->partition = tr->content = tr->parent_share = n->zero;
}

/* raw_traffic */
static bool raw_traffic(const rnest *n, const map_mapping *skeleton, const df_factors *f,
                        const wl_dataspace *ds, df_var compute_words, int levels,
                        rtraffic tr[ARCH_MAX_LEVELS], df_cost *out)
{
    df_tape *t = n->t;
    for (int l = 0; l < levels; l++) {
        rtraffic *tl = &tr[l];
        df_var pulls = l == 0 ? compute_words : child_pulls(n, ds, l - 1);
        tl->bypassed = false;
        tl->size = box_words(n, ds, n->tile_extent[l]);
        if (n->n_spatial[l] == 0) {
            tl->n_groups = 1;
            tl->group[0] = (rgroup){n->one, n->one};
        } else {
            tl->n_groups =
                multicast_groups(n, skeleton, f, ds, l, tl->group, out->why, sizeof out->why);
            if (tl->n_groups < 0)
                return false;
        }
        for (int g = 0; g < tl->n_groups; g++)
            tl->accesses[g] = df_mul(t, tl->group[g].scatter, pulls);
        tl->content = total_accesses(n, tl);
    }
    int top = levels - 1;
    tr[top].partition = tr[top].size;
    tr[top].parent_share = n->zero;
    for (int l = top - 1; l >= 0; l--) {
        const rtraffic *parent = &tr[l + 1];
        df_var denominator =
            n->n_spatial[l + 1] ? box_words(n, ds, n->spread_extent[l + 1]) : tr[l].size;
        tr[l].partition =
            df_floor(t, df_div(t, df_mul(t, parent->partition, tr[l].size), denominator));
        tr[l].parent_share = n->zero;
        for (int g = 0; g < parent->n_groups; g++)
            tr[l].parent_share =
                df_add(t, tr[l].parent_share,
                       df_div(t, df_mul(t, parent->accesses[g], parent->group[g].multicast),
                              n->fanout[l + 1]));
    }
    return true;
}

/* apply_bypass */
static void apply_bypass(const rnest *n, const map_mapping *m, int ds, int levels,
                         rtraffic tr[ARCH_MAX_LEVELS])
{
    df_tape *t = n->t;
    for (int cur = 0; cur < levels; cur++) {
        if (tr[cur].bypassed || m->level[cur].keep[ds])
            continue;
        int outer = cur + 1;
        while (outer < levels && tr[outer].bypassed)
            outer++;
        if (outer == levels) {
            bypass(n, &tr[cur]);
            break;
        }
        rtraffic *o = &tr[outer];
        df_var weighted = n->zero;
        for (int g = 0; g < o->n_groups; g++)
            weighted = df_add(t, weighted, df_mul(t, o->accesses[g], o->group[g].multicast));
        df_var factor = df_div(t, df_mul(t, tr[cur].content, n->fanout[outer]), weighted);
        for (int g = 0; g < o->n_groups; g++)
            o->accesses[g] = df_mul(t, o->accesses[g], factor);
        o->content = total_accesses(n, o);
        bypass(n, &tr[cur]);
    }
    tr[levels - 1].parent_share = n->zero;
}

/* Per level and data space what the buffer and energy models read. */
typedef struct rstats {
    df_var reads, fills, updates, tile_words;
} rstats;

/* store_counts (the counts the energy and bandwidth models use) */
static void store_counts(const rnest *n, bool read_write, int levels,
                         const rtraffic tr[ARCH_MAX_LEVELS], rstats s[ARCH_MAX_LEVELS])
{
    df_tape *t = n->t;
    for (int l = 0; l < levels; l++) {
        const rtraffic *tl = &tr[l];
        bool outermost = true;
        for (int o = l + 1; o < levels; o++)
            outermost &= tr[o].bypassed;
        s[l] = (rstats){n->zero, n->zero, n->zero, n->zero};
        if (tl->bypassed)
            continue;
        s[l].tile_words = tl->size;
        if (read_write) {
            s[l].updates = df_round(t, tl->content);
            s[l].reads = df_round(t, df_sub(t, tl->content, tl->partition));
            s[l].fills = df_round(t, outermost ? tl->parent_share
                                               : df_sub(t, tl->parent_share, tl->partition));
        } else {
            s[l].reads = df_round(t, tl->content);
            s[l].fills = df_floor(t, tl->parent_share);
        }
    }
}

/* ------------------------------------------------------- systolic arrays */

/* array_gemm_of on tape values. */
typedef struct rgemm {
    df_var m, n, k, passes;
} rgemm;

static void gemm_of(const rnest *n, const wl_problem *p, const map_mapping *skeleton,
                    const df_factors *f, rgemm *g)
{
    df_tape *t = n->t;
    df_var per_array[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++) {
        df_var spread = n->one;
        for (int l = 0; l < skeleton->n_levels; l++)
            spread = df_mul(t, spread, f->spatial[l][d]);
        per_array[d] = df_div(t, df_const(t, (double)(p->bound[d] < 1 ? 1 : p->bound[d])), spread);
    }
    df_var groups = per_array[WL_DIM_G];
    int64_t pack_wanted = skeleton->group_pack < 1 ? 1 : skeleton->group_pack;
    df_var pack = (double)pack_wanted > V(groups) ? groups : df_const(t, (double)pack_wanted);
    g->passes = df_ceil(t, df_div(t, groups, pack));
    g->m = df_mul(t, df_mul(t, per_array[WL_DIM_N], per_array[WL_DIM_P]), per_array[WL_DIM_Q]);
    g->n = df_mul(t, per_array[WL_DIM_M], pack);
    g->k = df_mul(
        t, df_mul(t, df_mul(t, per_array[WL_DIM_C], per_array[WL_DIM_R]), per_array[WL_DIM_S]),
        pack);
}

/* layout_of: Sr, Sc, T and the roles of the data spaces. */
static void layout_of(const rgemm *g, arch_dataflow dataflow, df_var *on_rows, df_var *on_cols,
                      df_var *in_time, int *held, int *along_rows, int *down_cols)
{
    switch (dataflow) {
    case ARCH_DATAFLOW_OS:
        *on_rows = g->m, *on_cols = g->n, *in_time = g->k;
        *held = WL_DS_OUTPUTS, *along_rows = WL_DS_INPUTS, *down_cols = WL_DS_WEIGHTS;
        return;
    case ARCH_DATAFLOW_WS:
        *on_rows = g->k, *on_cols = g->n, *in_time = g->m;
        *held = WL_DS_WEIGHTS, *along_rows = WL_DS_INPUTS, *down_cols = WL_DS_OUTPUTS;
        return;
    default:
        *on_rows = g->k, *on_cols = g->m, *in_time = g->n;
        *held = WL_DS_INPUTS, *along_rows = WL_DS_WEIGHTS, *down_cols = WL_DS_OUTPUTS;
        return;
    }
}

/* What one array does: its cycles (array_cycles) and the words and
 * moves of map_systolic_traffic_of, times its passes. */
typedef struct rarray {
    df_var cycles;
    df_var edge_words[WL_NDATASPACES], hops[WL_NDATASPACES];
    df_var reg_reads[WL_NDATASPACES], reg_writes[WL_NDATASPACES];
} rarray;

static void array_model(const rnest *n, const arch_compute *c, const rgemm *g, rarray *out)
{
    df_tape *t = n->t;
    df_var sr, sc, tm;
    int held, along_rows, down_cols;
    layout_of(g, c->dataflow, &sr, &sc, &tm, &held, &along_rows, &down_cols);
    double rows = (double)c->rows, cols = (double)c->cols;
    /* map_systolic_cycles */
    double skew = (c->dataflow == ARCH_DATAFLOW_OS ? rows : 2 * rows) + cols - 2;
    df_var row_folds = df_ceil(t, df_mul_c(t, sr, 1 / rows));
    df_var col_folds = df_ceil(t, df_mul_c(t, sc, 1 / cols));
    df_var lines = df_mul(t, df_mul(t, row_folds, col_folds), df_add_c(t, tm, skew));
    out->cycles = df_mul(t, g->passes, df_add_c(t, lines, -1));
    /* map_systolic_traffic_of, held_hops */
    df_var macs = df_mul(t, df_mul(t, sr, sc), tm);
    df_var last = df_sub(t, sr, df_mul_c(t, df_add_c(t, row_folds, -1), rows));
    df_var full = df_mul_c(t, df_add_c(t, row_folds, -1), rows * (rows + 1) / 2);
    df_var per_column = df_add(t, full, df_mul_c(t, df_mul(t, last, df_add_c(t, last, 1)), 0.5));
    df_var held_hops = df_mul(t, per_column, sc);
    out->edge_words[along_rows] = df_mul(t, df_mul(t, col_folds, sr), tm);
    out->edge_words[down_cols] = df_mul(t, df_mul(t, row_folds, sc), tm);
    out->edge_words[held] = df_mul(t, sr, sc);
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        df_var hops = ds == held ? held_hops : macs;
        df_var writes = ds == held && held == WL_DS_OUTPUTS ? df_add(t, hops, macs) : hops;
        out->edge_words[ds] = df_mul(t, out->edge_words[ds], g->passes);
        out->hops[ds] = df_mul(t, hops, g->passes);
        out->reg_reads[ds] = df_mul(t, macs, g->passes);
        out->reg_writes[ds] = df_mul(t, writes, g->passes);
    }
}

/* ------------------------------------------------------- cycles, energy */

/* level_cycles, in eval.c's floating-point order. */
static df_var level_cycles(const rnest *n, const arch_level *al, const rstats *s, df_var cycles)
{
    df_tape *t = n->t;
    df_var reads = n->zero, writes = n->zero;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        reads = df_add(t, reads, df_div(t, s[ds].reads, cycles));
        writes = df_add(t, writes, df_div(t, df_add(t, s[ds].fills, s[ds].updates), cycles));
    }
    df_var slowdown = n->one;
    struct {
        double bandwidth;
        df_var demand;
    } limit[3] = {{al->read_bandwidth, reads},
                  {al->write_bandwidth, writes},
                  {al->shared_bandwidth, df_add(t, reads, writes)}};
    for (int i = 0; i < 3; i++) {
        double bw = limit[i].bandwidth;
        if (!(bw > 0))
            continue;
        df_var ratio = df_div(t, df_const(t, bw), limit[i].demand);
        if (t->temperature > 0)
            slowdown = df_min(t, slowdown, ratio);
        else if (bw < V(limit[i].demand))
            slowdown = df_min(t, slowdown, ratio);
    }
    return df_ceil(t, df_div(t, cycles, slowdown));
}

/* level_energy: every data space's vector actions, spread over the
 * cluster (into ds_energy_pJ, zero where not kept), plus leakage. */
static df_var level_energy(const rnest *n, const arch_level *al, const map_level *ml,
                           const rstats *s, df_var used, df_var total_cycles,
                           df_var ds_energy_pJ[WL_NDATASPACES])
{
    df_tape *t = n->t;
    double block = al->block_size > 0 ? al->block_size : 1;
    int cluster = al->cluster_size > 0 ? al->cluster_size : 1;
    double clusters = (double)(al->instances / cluster);
    df_var cluster_utilization = n->one;
    if (!(clusters > V(used) || clusters < 1))
        cluster_utilization = df_mul_c(t, used, 1 / clusters);
    df_var energy = n->zero;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        ds_energy_pJ[ds] = n->zero;
        if (!ml->keep[ds])
            continue;
        df_var actions[3] = {s[ds].reads, s[ds].fills, s[ds].updates};
        double pJ[3] = {al->energy.read_pJ, al->energy.fill_pJ, al->energy.update_pJ};
        df_var cluster_pJ = n->zero;
        for (int k = 0; k < 3; k++)
            cluster_pJ = df_add(t, cluster_pJ,
                                df_mul_c(t, df_ceil(t, df_mul_c(t, actions[k], 1 / block)), pJ[k]));
        ds_energy_pJ[ds] = df_mul(t, df_div(t, cluster_pJ, cluster_utilization), used);
        energy = df_add(t, energy, ds_energy_pJ[ds]);
    }
    df_var instances = V(used) > 1 ? used : n->one;
    df_var leak = df_mul_c(t, df_mul(t, total_cycles, instances), al->energy.leak_pJ);
    return df_add(t, energy, leak);
}

/* ------------------------------------------------------ penalties' inputs */

static void capacity_terms(const rnest *n, const arch_spec *a, const map_mapping *m,
                           rstats s[ARCH_MAX_LEVELS][WL_NDATASPACES], df_cost *out)
{
    df_tape *t = n->t;
    for (int l = 0; l < m->n_levels; l++) {
        const arch_level *al = &a->level[l];
        double buffering = al->multiple_buffering > 0 ? al->multiple_buffering : 1.0;
        bool split = false;
        df_var total = n->zero;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            split |= al->size_words_by_ds[ds] != 0;
            out->capacity_bounded[l][ds] = false;
            out->capacity_excess[l][ds] = n->zero;
            if (m->level[l].keep[ds])
                total = df_add(t, total, s[l][ds].tile_words);
        }
        for (int ds = 0; split && ds < WL_NDATASPACES; ds++) {
            double room = floor((double)al->size_words_by_ds[ds] / buffering);
            df_var tile = m->level[l].keep[ds] ? s[l][ds].tile_words : n->zero;
            out->capacity_bounded[l][ds] = true;
            out->capacity_excess[l][ds] = df_add_c(t, tile, -room);
        }
        out->capacity_bounded[l][WL_NDATASPACES] = !split && al->size_words > 0;
        out->capacity_excess[l][WL_NDATASPACES] =
            df_add_c(t, total, -floor((double)al->size_words / buffering));
    }
}

static void fanout_terms(const rnest *n, const arch_spec *a, const map_mapping *m,
                         const df_factors *f, df_cost *out)
{
    df_tape *t = n->t;
    for (int l = 0; l < m->n_levels; l++) {
        const map_level *ml = &m->level[l];
        df_var used[2] = {n->one, n->one};
        for (int i = 0; i < WL_NDIMS; i++)
            used[i >= ml->spatial_split] =
                df_mul(t, used[i >= ml->spatial_split], f->spatial[l][ml->spatial_order[i]]);
        int64_t fanout[2];
        arch_fanout_xy(a, l, &fanout[0], &fanout[1]);
        for (int axis = 0; axis < 2; axis++)
            out->fanout_ratio[l][axis] = df_mul_c(t, used[axis], 1 / (double)fanout[axis]);
    }
}

/* ---------------------------------------------------------------- main */

void df_factors_of_mapping(df_tape *t, const map_mapping *m, df_factors *f)
{
    for (int l = 0; l < ARCH_MAX_LEVELS; l++)
        for (int d = 0; d < WL_NDIMS; d++) {
            bool in = l < m->n_levels;
            f->temporal[l][d] = df_const(t, in ? (double)m->level[l].temporal[d] : 1);
            f->spatial[l][d] = df_const(t, in ? (double)m->level[l].spatial[d] : 1);
        }
}

void df_relaxed_cost(df_tape *t, const arch_spec *a, const wl_problem *p,
                     const map_mapping *skeleton, const df_factors *f, df_cost *out)
{
    rnest n;
    rtraffic traffic[ARCH_MAX_LEVELS];
    rstats stats[ARCH_MAX_LEVELS][WL_NDATASPACES];
    memset(out, 0, sizeof *out);
    out->supported = true;
    n.t = t;
    n.zero = df_const(t, 0);
    n.one = df_const(t, 1);
    int levels = skeleton->n_levels;
    build(&n, skeleton, f);

    /* array_flow_of */
    const arch_compute *c = &a->compute;
    bool systolic = c->kind == ARCH_COMPUTE_SYSTOLIC;
    rarray arr;
    memset(&arr, 0, sizeof arr);
    df_var compute_words[WL_NDATASPACES];
    if (systolic) {
        rgemm g;
        gemm_of(&n, p, skeleton, f, &g);
        array_model(&n, c, &g, &arr);
    }
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        compute_words[ds] = systolic ? arr.edge_words[ds] : n.temporal_iterations;

    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        rstats per_level[ARCH_MAX_LEVELS];
        if (!raw_traffic(&n, skeleton, f, &p->ds[ds], compute_words[ds], levels, traffic, out)) {
            out->supported = false;
            return;
        }
        apply_bypass(&n, skeleton, ds, levels, traffic);
        store_counts(&n, p->ds[ds].read_write, levels, traffic, per_level);
        for (int l = 0; l < levels; l++)
            stats[l][ds] = per_level[l];
    }
    capacity_terms(&n, a, skeleton, stats, out);
    fanout_terms(&n, a, skeleton, f, out);

    for (int l = 0; l < levels; l++)
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            out->reads[l][ds] = stats[l][ds].reads;
            out->fills[l][ds] = stats[l][ds].fills;
            out->updates[l][ds] = stats[l][ds].updates;
            out->tile_words[l][ds] = stats[l][ds].tile_words;
        }

    double macs = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        macs *= (double)(p->bound[d] < 1 ? 1 : p->bound[d]);
    df_var utilized_macs = df_mul(t, n.replication[0], n.fanout[0]);
    df_var compute_cycles = systolic ? arr.cycles : n.temporal_iterations;
    df_var cycles = compute_cycles;
    for (int l = 0; l < levels; l++) {
        out->level_cycles[l] = level_cycles(&n, &a->level[l], stats[l], compute_cycles);
        cycles = df_max(t, cycles, out->level_cycles[l]);
    }

    out->mac_energy_pJ = df_const(t, macs * c->mac_pJ);
    out->array_energy_pJ = n.zero;
    if (systolic) /* array_energy: the network below level 0 */
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            bool psum = ds == WL_DS_OUTPUTS;
            df_var regs = df_mul_c(t, df_add(t, arr.reg_reads[ds], arr.reg_writes[ds]),
                                   psum ? c->pe_acc_reg_pJ : c->pe_reg_pJ);
            df_var hops = df_mul_c(t, arr.hops[ds], psum ? c->pe_acc_hop_pJ : c->pe_hop_pJ);
            out->array_energy_pJ =
                df_add(t, out->array_energy_pJ,
                       df_add(t, df_mul(t, regs, utilized_macs), df_mul(t, hops, utilized_macs)));
        }
    df_var energy = df_add(t, out->mac_energy_pJ, out->array_energy_pJ);
    for (int l = 0; l < levels; l++) {
        out->level_energy_pJ[l] = level_energy(&n, &a->level[l], &skeleton->level[l], stats[l],
                                               n.replication[l], cycles, out->ds_energy_pJ[l]);
        energy = df_add(t, energy, out->level_energy_pJ[l]);
    }
    out->compute_cycles = compute_cycles;
    out->cycles = cycles;
    out->energy_pJ = energy;
    out->edp = df_mul(t, df_mul_c(t, energy, 1e-12), cycles);
}
