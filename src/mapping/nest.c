/*
 * nest.c -- Timeloop's loop-nest analysis (docs/timeloop-semantics.md
 * §1-§2) in closed form: how many words one child instance pulls from its
 * parent, and which children can share one delivery.
 *
 * Timeloop walks the nest recursively, keeping per loop the point set of
 * the previous iteration and counting only what is new.  For speed it runs
 * just iterations #0 and #1 of every loop and weights #1 by (bound - 1)
 * ("temporal extrapolation"), and of a spatial fanout only child 0,
 * translating its deltas to the other children.  Every count it reports
 * is therefore a function of a short sequence of tile translations; this
 * file computes the same function without walking the sequence.  With
 * perfect factorisation (map_evaluate rejects the rest) every working set
 * of a loop is a translate of one box, so a delta's size depends only on
 * the translation between consecutive iterations.
 */
#include "eval_private.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- building */

/* Append the non-trivial loops of one level's spatial or temporal block,
 * in the mapping's order (innermost first), as Timeloop's parser does. */
static void append_block(nest *n, const map_level *ml, int level, bool spatial)
{
    const int64_t *factor = spatial ? ml->spatial : ml->temporal;
    const uint8_t *order = spatial ? ml->spatial_order : ml->temporal_order;
    for (int i = 0; i < WL_NDIMS; i++) {
        wl_dim d = (wl_dim)order[i];
        if (factor[d] > 1)
            n->loop[n->n_loops++] =
                (nest_loop){.dim = d, .level = level, .spatial = spatial, .bound = factor[d]};
    }
}

/*
 * Flatten the mapping into one nest, innermost first: per level its
 * spatial loops, then its temporal loops, then the boundary.  A level with
 * no temporal loop gets a trivial one so that its boundary sits outside
 * its spatial loops (mapping/parser.cpp).  Each loop's step is the product
 * of the bounds below it over the same dimension.
 */
void nest_build(const map_mapping *m, int n_levels, nest *n)
{
    int64_t extent[WL_NDIMS];
    n->n_loops = 0;
    n->temporal_iterations = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        extent[d] = 1;
    for (int l = 0; l < n_levels; l++) {
        const map_level *ml = &m->level[l];
        n->first[l] = n->n_loops;
        append_block(n, ml, l, true);
        n->n_spatial[l] = n->n_loops - n->first[l];
        int temporal_start = n->n_loops;
        append_block(n, ml, l, false);
        if (n->n_loops == temporal_start)
            n->loop[n->n_loops++] = (nest_loop){.dim = WL_DIM_N, .level = l, .bound = 1};
        n->boundary[l] = n->n_loops - 1;
        n->fanout[l] = 1;
        for (int i = n->first[l]; i < n->n_loops; i++) {
            nest_loop *lp = &n->loop[i];
            lp->step = extent[lp->dim];
            extent[lp->dim] *= lp->bound;
            if (lp->spatial)
                n->fanout[l] *= lp->bound;
            else
                n->temporal_iterations *= lp->bound;
            if (i == n->first[l] + n->n_spatial[l] - 1)
                memcpy(n->spread_extent[l], extent, sizeof extent);
        }
        memcpy(n->tile_extent[l], extent, sizeof extent);
        if (n->n_spatial[l] == 0) { /* nothing spread: the children hold the child tile */
            for (int d = 0; d < WL_NDIMS; d++)
                n->spread_extent[l][d] = l > 0 ? n->tile_extent[l - 1][d] : 1;
        }
    }
    int64_t above = 1;
    for (int l = n_levels - 1; l >= 0; l--) {
        n->replication[l] = above;
        above *= n->fanout[l];
    }
}

/* ----------------------------------------------------------- projection */

/* Extent of each rank of ds over the box of op-space extents ext: the
 * projection is affine, so a rank spans sum(|coef| * (ext - 1)) + 1. */
int nest_rank_extents(const wl_dataspace *ds, const int64_t ext[WL_NDIMS],
                      int64_t out[WL_MAX_DS_RANKS])
{
    for (int r = 0; r < ds->n_ranks; r++) {
        int64_t span = 1;
        for (int t = 0; t < ds->ranks[r].n_terms; t++) {
            const wl_proj_term *term = &ds->ranks[r].terms[t];
            int64_t coef = term->coef < 0 ? -term->coef : term->coef;
            span += coef * (ext[term->dim] - 1);
        }
        out[r] = span;
    }
    return ds->n_ranks;
}

/* Timeloop's working sets are boxes in data space (an Inputs rank
 * p*stride + r is one interval even when stride > window), so a tile
 * holds the product of its rank extents. */
int64_t nest_box_words(const wl_dataspace *ds, const int64_t ext[WL_NDIMS])
{
    int64_t span[WL_MAX_DS_RANKS];
    int64_t words = 1;
    int ranks = nest_rank_extents(ds, ext, span);
    for (int r = 0; r < ranks; r++)
        words *= span[r];
    return words;
}

/* Data-space translation caused by advancing loop lp by `times` steps. */
static void project_step(const wl_dataspace *ds, const nest_loop *lp, int64_t times,
                         int64_t out[WL_MAX_DS_RANKS])
{
    for (int r = 0; r < ds->n_ranks; r++) {
        out[r] = 0;
        for (int t = 0; t < ds->ranks[r].n_terms; t++)
            if (ds->ranks[r].terms[t].dim == lp->dim)
                out[r] += ds->ranks[r].terms[t].coef * lp->step * times;
    }
}

static bool is_zero(const int64_t *v, int ranks)
{
    for (int r = 0; r < ranks; r++)
        if (v[r] != 0)
            return false;
    return true;
}

/* -------------------------------------------------------- temporal reuse */

/*
 * The iterations Timeloop runs above a child's boundary form a binary
 * counter over the k non-trivial temporal loops there (index 0 or 1 each,
 * index 1 weighted by bound - 1).  Between consecutive invocations the
 * child's tile moves by step[j] when the counter carries into loop j:
 * loop j advances one step and every loop below it returns to 0.
 *
 * Per invocation Timeloop keeps the previous point set and the previous
 * translation ("pt", SaveAndSubtractIfSameStride, operation-space.cpp):
 *   - translation 0 (stationary): nothing new, pt unchanged;
 *   - pt null or equal to the translation: only the words the translated
 *     box does not overlap are new, pt := translation;
 *   - otherwise (the stride changed): the whole tile is new, pt := null.
 * The very first invocation pulls the whole tile.
 */
typedef struct reuse_walk {
    int ranks;
    int64_t extent[WL_MAX_DS_RANKS];
    int64_t volume;
    int n_steps; /* k */
    int64_t step[NEST_MAX_LOOPS][WL_MAX_DS_RANKS];
    int canon[NEST_MAX_LOOPS];      /* smallest j with the same translation */
    int64_t weight[NEST_MAX_LOOPS]; /* bound - 1 */
    int first_moving;               /* smallest j with a non-zero translation, or k */
    bool memo_done[NEST_MAX_LOOPS + 1][2];
    int64_t memo_words[NEST_MAX_LOOPS + 1][2];
    int memo_exit[NEST_MAX_LOOPS + 1][2];
} reuse_walk;

#define PT_NULL (-1)

/* New words when the tile moves by t relative to the previous one. */
static int64_t moved_words(const reuse_walk *w, const int64_t *t)
{
    int64_t overlap = 1;
    for (int r = 0; r < w->ranks; r++) {
        int64_t shift = t[r] < 0 ? -t[r] : t[r];
        overlap *= shift < w->extent[r] ? w->extent[r] - shift : 0;
    }
    return w->volume - overlap;
}

/* One invocation reached by a carry into loop j, from state pt: its new
 * words in *words, the next state returned. */
static int reuse_step(const reuse_walk *w, int pt, int j, int64_t *words)
{
    if (is_zero(w->step[j], w->ranks)) {
        *words = 0;
        return pt;
    }
    if (pt == PT_NULL || pt == w->canon[j]) {
        *words = moved_words(w, w->step[j]);
        return w->canon[j];
    }
    *words = w->volume;
    return PT_NULL;
}

/*
 * New words over all invocations of the lowest m counter loops after the
 * first one (the ruler sequence of carries into loops 0 .. m-1), entered
 * in state pt; the exit state in *exit.  The second half of a block runs
 * bound - 1 times in Timeloop's extrapolation, hence the weight.
 *
 * Only the first non-zero step in a block can see pt; after it the state
 * is fixed.  So for m > first_moving the result depends on pt only
 * through whether that step may reuse (pt null or equal to it): two memo
 * entries per m make the walk linear in k instead of 2^k.
 */
static int64_t reuse_block(reuse_walk *w, int m, int pt, int *exit)
{
    if (m <= w->first_moving) {
        *exit = pt;
        return 0;
    }
    int compatible = pt == PT_NULL || pt == w->canon[w->first_moving];
    if (w->memo_done[m][compatible]) {
        *exit = w->memo_exit[m][compatible];
        return w->memo_words[m][compatible];
    }
    int p1, p3;
    int64_t first_half = reuse_block(w, m - 1, pt, &p1);
    int64_t carry_words;
    int p2 = reuse_step(w, p1, m - 1, &carry_words);
    int64_t second_half = reuse_block(w, m - 1, p2, &p3);
    int64_t words = first_half + w->weight[m - 1] * (carry_words + second_half);
    w->memo_done[m][compatible] = true;
    w->memo_words[m][compatible] = words;
    w->memo_exit[m][compatible] = p3;
    *exit = p3;
    return words;
}

/*
 * Words one instance of `level` pulls from its parent (§1): the sum over
 * the invocations of its boundary loop of the new words of its tile.  The
 * MAC units below level 0 pull one word per operand per iteration, which
 * the caller handles; here level >= 0 is a storage level.
 */
int64_t nest_child_pulls(const nest *n, const wl_dataspace *ds, int level)
{
    reuse_walk w;
    int c = n->boundary[level];
    int64_t moved_so_far[WL_MAX_DS_RANKS] = {0};

    w.ranks = nest_rank_extents(ds, n->tile_extent[level], w.extent);
    w.volume = 1;
    for (int r = 0; r < w.ranks; r++)
        w.volume *= w.extent[r];
    w.n_steps = 0;
    w.first_moving = -1;
    for (int i = c + 1; i < n->n_loops; i++) {
        const nest_loop *lp = &n->loop[i];
        if (lp->spatial || lp->bound < 2)
            continue; /* only child 0 of a fanout is walked; trivial loops are transparent */
        int j = w.n_steps++;
        int64_t advance[WL_MAX_DS_RANKS];
        project_step(ds, lp, 1, advance);
        for (int r = 0; r < w.ranks; r++) {
            w.step[j][r] = advance[r] - moved_so_far[r];
            moved_so_far[r] += advance[r];
        }
        w.weight[j] = lp->bound - 1;
        w.canon[j] = j;
        for (int i2 = 0; i2 < j; i2++)
            if (memcmp(w.step[i2], w.step[j], sizeof(int64_t) * (size_t)w.ranks) == 0) {
                w.canon[j] = w.canon[i2];
                break;
            }
        if (w.first_moving < 0 && !is_zero(w.step[j], w.ranks))
            w.first_moving = j;
    }
    if (w.first_moving < 0)
        w.first_moving = w.n_steps;
    memset(w.memo_done, 0, sizeof w.memo_done);
    int exit;
    return w.volume + reuse_block(&w, w.n_steps, PT_NULL, &exit);
}

/* ------------------------------------------------------------ multicast */

/*
 * Children of a spatial level are indexed by their spatial loop indices;
 * Timeloop derives each child's delta from child 0's by translating it by
 * sum(index * step) in data space, and children whose deltas are equal
 * form one multicast group (§2).  Equal non-empty translated sets means
 * equal translations, so groups are the fibres of the map
 *     index -> sum over spatial loops of index_s * v_s.
 * Loops with v_s = 0 multiply every group; the others split into
 * components that share a rank (the diagonal reuse of Q and S on the
 * input rows in Eyeriss); each component's fibre sizes are counted by
 * convolution over the box of reachable translations.
 */
#define FIBRE_CELLS 4096

typedef struct group_hist {
    int n;
    nest_group g[NEST_MAX_GROUPS];
} group_hist;

/* Add `scatter` groups of size `multicast`, keeping entries sorted. */
static bool hist_add(group_hist *h, int64_t multicast, int64_t scatter)
{
    int i = 0;
    while (i < h->n && h->g[i].multicast < multicast)
        i++;
    if (i < h->n && h->g[i].multicast == multicast) {
        h->g[i].scatter += scatter;
        return true;
    }
    if (h->n == NEST_MAX_GROUPS)
        return false;
    memmove(&h->g[i + 1], &h->g[i], sizeof(nest_group) * (size_t)(h->n - i));
    h->g[i] = (nest_group){multicast, scatter};
    h->n++;
    return true;
}

/* h := h x c: every pair of groups is a group of the combined fanout. */
static bool hist_multiply(group_hist *h, const group_hist *c)
{
    group_hist out = {0};
    for (int i = 0; i < h->n; i++)
        for (int j = 0; j < c->n; j++)
            if (!hist_add(&out, h->g[i].multicast * c->g[j].multicast,
                          h->g[i].scatter * c->g[j].scatter))
                return false;
    *h = out;
    return true;
}

/*
 * Fibre sizes of index -> sum(index_s * v_s) over the loops in `member`
 * (one component).  Translations are packed into a mixed-radix cell index;
 * packing is linear, so adding i * v_s shifts a cell by i * lin(v_s).
 */
static bool component_fibres(const int64_t v[][WL_MAX_DS_RANKS], const int64_t *bound,
                             const int *member, int n_members, int ranks, group_hist *out)
{
    static const int64_t cap = FIBRE_CELLS;
    uint32_t count[2][FIBRE_CELLS];
    int64_t lo[WL_MAX_DS_RANKS], hi[WL_MAX_DS_RANKS], radix[WL_MAX_DS_RANKS];
    int64_t cells = 1, origin = 0;
    for (int r = 0; r < ranks; r++) {
        lo[r] = hi[r] = 0;
        for (int i = 0; i < n_members; i++) {
            int64_t reach = (bound[member[i]] - 1) * v[member[i]][r];
            if (reach < 0)
                lo[r] += reach;
            else
                hi[r] += reach;
        }
        radix[r] = cells;
        cells *= hi[r] - lo[r] + 1;
        if (cells > cap)
            return false;
        origin += -lo[r] * radix[r];
    }
    int cur = 0;
    memset(count[cur], 0, sizeof(uint32_t) * (size_t)cells);
    count[cur][origin] = 1;
    for (int i = 0; i < n_members; i++) {
        int64_t shift = 0;
        for (int r = 0; r < ranks; r++)
            shift += v[member[i]][r] * radix[r];
        memset(count[!cur], 0, sizeof(uint32_t) * (size_t)cells);
        for (int64_t cell = 0; cell < cells; cell++)
            if (count[cur][cell])
                for (int64_t k = 0; k < bound[member[i]]; k++)
                    count[!cur][cell + k * shift] += count[cur][cell];
        cur = !cur;
    }
    out->n = 0;
    for (int64_t cell = 0; cell < cells; cell++)
        if (count[cur][cell] && !hist_add(out, count[cur][cell], 1))
            return false;
    return true;
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

int nest_multicast_groups(const nest *n, const wl_dataspace *ds, int level,
                          nest_group out[NEST_MAX_GROUPS], char *why, size_t why_size)
{
    int64_t v[WL_NDIMS][WL_MAX_DS_RANKS];
    int64_t bound[WL_NDIMS];
    int parent[WL_NDIMS], moving = 0;
    int64_t shared = 1; /* children per group from loops that do not move ds */
    group_hist h = {0};

    for (int i = 0; i < n->n_spatial[level]; i++) {
        const nest_loop *lp = &n->loop[n->first[level] + i];
        project_step(ds, lp, 1, v[moving]);
        if (is_zero(v[moving], ds->n_ranks)) {
            shared *= lp->bound;
            continue;
        }
        bound[moving] = lp->bound;
        parent[moving] = moving;
        moving++;
    }
    /* Union loops that move ds along a common rank. */
    for (int a = 0; a < moving; a++)
        for (int b = a + 1; b < moving; b++)
            for (int r = 0; r < ds->n_ranks; r++)
                if (v[a][r] != 0 && v[b][r] != 0)
                    parent[find_root(parent, a)] = find_root(parent, b);
    hist_add(&h, shared, 1);
    for (int root = 0; root < moving; root++) {
        if (find_root(parent, root) != root)
            continue;
        int member[WL_NDIMS], n_members = 0;
        for (int i = 0; i < moving; i++)
            if (find_root(parent, i) == root)
                member[n_members++] = i;
        group_hist c = {0};
        if (n_members == 1)
            hist_add(&c, 1, bound[member[0]]);
        else if (!component_fibres((const int64_t(*)[WL_MAX_DS_RANKS])v, bound, member, n_members,
                                   ds->n_ranks, &c)) {
            snprintf(why, why_size,
                     "level %d %s: multicast pattern of %d coupled spatial loops "
                     "exceeds %d cells",
                     level, ds->name ? ds->name : "?", n_members, FIBRE_CELLS);
            return -1;
        }
        if (!hist_multiply(&h, &c)) {
            snprintf(why, why_size, "level %d %s: more than %d distinct multicast factors", level,
                     ds->name ? ds->name : "?", NEST_MAX_GROUPS);
            return -1;
        }
    }
    memcpy(out, h.g, sizeof(nest_group) * (size_t)h.n);
    return h.n;
}
