/*
 * mapspace.c -- the map space: which mappings of a problem an architecture
 * allows, and the ways to draw, change, build and enumerate them
 * (mapspace.h gives the contracts).
 *
 * Conventions shared by every builder:
 *  - a dimension's factors live in slots (a level's temporal or spatial
 *    factor); fixed factors are set once by ms_blank and never move, the
 *    free slots of a dimension share its `rest` (bound / fixed product);
 *  - orders are full permutations: the constraint's fixed prefix first
 *    (innermost), the free dimensions after it;
 *  - a dimension is on X at a level when its position in the level's
 *    spatial order is below the split, as map_evaluate reads it.
 * Padding (FAST) is how this space offers imperfect factorisation:
 * map_evaluate models perfect factors only, so a remainder tile is
 * searched as the problem padded to the next multiple of a friendly width,
 * its wasted MACs counted by evaluating the padded problem.
 */
#include "mapspace.h"

#include "eval_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Padding may add at most a third of a bound (C = 3 -> 4, 1000 -> 1024). */
#define PAD_MAX_WASTE_DIVISOR 3
#define PAD_CANDIDATES_PER_DIM 3
/* Factorisations per dimension, tuples of them, and points counted exactly
 * before the exhaustive search declines. */
#define ENUM_MAX_LIST 200000
#define ENUM_MAX_TUPLES 200000

/* ------------------------------------------------------------- helpers */

/* Children per instance of level l on X and Y (vector lanes included), as
 * map_evaluate counts them. */
static void level_fanout(const arch_spec *a, int l, int64_t *x, int64_t *y)
{
    arch_fanout_xy(a, l, x, y);
    *x = *x > 0 ? *x : 1;
    *y = *y > 0 ? *y : 1;
}

static int position_of(const uint8_t order[WL_NDIMS], int d)
{
    for (int i = 0; i < WL_NDIMS; i++)
        if (order[i] == d)
            return i;
    return WL_NDIMS;
}

/* Whether dimension d unrolls on Y at level ml (else on X). */
static bool on_y(const map_level *ml, int d)
{
    return position_of(ml->spatial_order, d) >= ml->spatial_split;
}

static int64_t *slot_factor(ms_point *pt, ms_slot sl, int d)
{
    map_level *ml = &pt->m.level[sl.level];
    return sl.spatial ? &ml->spatial[d] : &ml->temporal[d];
}

/* A full order: the constraint prefix, then the other dims ascending. */
static void prefixed_order(const uint8_t *prefix, int n_prefix, uint8_t order[WL_NDIMS])
{
    unsigned used = 0;
    int n = 0;
    for (int i = 0; i < n_prefix && i < WL_NDIMS; i++)
        if (prefix[i] < WL_NDIMS && !(used & (1u << prefix[i]))) {
            order[n++] = prefix[i];
            used |= 1u << prefix[i];
        }
    for (int d = 0; d < WL_NDIMS; d++)
        if (!(used & (1u << d)))
            order[n++] = (uint8_t)d;
}

/* Effective length of a constraint prefix (clamped to the dims). */
static int prefix_length(int n)
{
    return n < 0 ? 0 : n > WL_NDIMS ? WL_NDIMS : n;
}

static void shuffle(as_rng *r, uint8_t *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)as_rng_below(r, i + 1);
        uint8_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* ------------------------------------------------------------ legality */

/* Kept tiles fit floor(size / multiple_buffering), in total or per data
 * space when the capacity is split -- map_evaluate's check_capacity. */
static bool level_fits(const arch_level *al, const int64_t words[WL_NDATASPACES],
                       const bool keep[WL_NDATASPACES])
{
    double buffering = al->multiple_buffering > 0 ? al->multiple_buffering : 1.0;
    bool split = false;
    int64_t total = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        split |= al->size_words_by_ds[ds] != 0;
        total += keep[ds] ? words[ds] : 0;
    }
    if (split) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (keep[ds] &&
                words[ds] > (int64_t)floor((double)al->size_words_by_ds[ds] / buffering))
                return false;
        return true;
    }
    return al->size_words == 0 || total <= (int64_t)floor((double)al->size_words / buffering);
}

/* Kept tiles of levels from..top fit (tiles grow outward, so a point
 * that fits keeps fitting when a factor moves outward). */
static bool tiles_fit_from(const ms_space *s, const ms_point *pt, int from)
{
    const wl_problem *p = &s->variant[pt->variant].problem;
    int64_t ext[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        ext[d] = 1;
    for (int l = 0; l < s->n_levels; l++) {
        const map_level *ml = &pt->m.level[l];
        for (int d = 0; d < WL_NDIMS; d++)
            ext[d] *= ml->temporal[d] * ml->spatial[d];
        if (l < from)
            continue;
        int64_t words[WL_NDATASPACES];
        for (int ds = 0; ds < WL_NDATASPACES; ds++) /* compressed where stored so */
            words[ds] = ml->keep[ds] ? sparse_tile_words(&s->arch.level[l], p, ds, ext) : 0;
        if (!level_fits(&s->arch.level[l], words, ml->keep))
            return false;
    }
    return true;
}

/* Spatial factors used on X and Y at level l. */
static void spatial_use(const map_level *ml, int64_t *x, int64_t *y)
{
    *x = *y = 1;
    for (int i = 0; i < WL_NDIMS; i++)
        *(i < ml->spatial_split ? x : y) *= ml->spatial[ml->spatial_order[i]];
}

bool ms_prune(const ms_space *s, const ms_point *pt)
{
    for (int l = 0; l < s->n_levels; l++) {
        const map_level *ml = &pt->m.level[l];
        const arch_constraints *c = &s->arch.level[l].constraints;
        int64_t x, y;
        spatial_use(ml, &x, &y);
        if (x > s->fanout_x[l] || y > s->fanout_y[l])
            return false;
        if (c->min_spatial_utilization > 0 &&
            (double)(x * y) <
                c->min_spatial_utilization * (double)(s->fanout_x[l] * s->fanout_y[l]) - 1e-9)
            return false;
        for (int d = 0; d < WL_NDIMS; d++)
            if (c->temporal_max[d] > 0 && ml->temporal[d] > c->temporal_max[d])
                return false;
    }
    return tiles_fit_from(s, pt, 0);
}

/* Whether one more factor q of dimension d fits in slot sl: temporal
 * maximum, room on the dimension's axis, and capacity of the levels the
 * bigger tile reaches. */
static bool factor_fits(const ms_space *s, ms_point *pt, ms_slot sl, int d, int64_t q)
{
    map_level *ml = &pt->m.level[sl.level];
    if (sl.spatial) {
        int64_t x, y;
        spatial_use(ml, &x, &y);
        if (on_y(ml, d) ? y * q > s->fanout_y[sl.level] : x * q > s->fanout_x[sl.level])
            return false;
    } else {
        int64_t max = s->arch.level[sl.level].constraints.temporal_max[d];
        if (max > 0 && ml->temporal[d] * q > max)
            return false;
    }
    int64_t *f = slot_factor(pt, sl, d);
    *f *= q;
    bool fits = tiles_fit_from(s, pt, sl.level);
    *f /= q;
    return fits;
}

/* ------------------------------------------------------------ building */

/* Prime factors of n ascending, at most MS_MAX_PRIMES. */
static int prime_factors(int64_t n, int64_t out[MS_MAX_PRIMES])
{
    int k = 0;
    for (int64_t q = 2; q * q <= n && k < MS_MAX_PRIMES; q++)
        while (n % q == 0 && k < MS_MAX_PRIMES) {
            out[k++] = q;
            n /= q;
        }
    if (n > 1 && k < MS_MAX_PRIMES)
        out[k++] = n;
    return k;
}

/* Add the variant with these bounds: its fixed-factor products must
 * divide them (else it is kept but marked infeasible). */
static void add_variant(ms_space *s, const int64_t bound[WL_NDIMS])
{
    ms_variant *v = &s->variant[s->n_variants++];
    v->problem = s->original;
    v->feasible = true;
    for (int d = 0; d < WL_NDIMS; d++) {
        int64_t fixed = 1;
        v->problem.bound[d] = bound[d];
        for (int l = 0; l < s->n_levels; l++) {
            const arch_constraints *c = &s->arch.level[l].constraints;
            fixed *= c->temporal_factor[d] > 0 ? c->temporal_factor[d] : 1;
            fixed *= c->spatial_factor[d] > 0 ? c->spatial_factor[d] : 1;
        }
        v->feasible &= bound[d] % fixed == 0;
        v->rest[d] = bound[d] % fixed == 0 ? bound[d] / fixed : 1;
        v->n_primes[d] = prime_factors(v->rest[d], v->prime[d]);
        v->feasible &= v->rest[d] == 1 || s->n_slots[d] > 0;
    }
}

/* Friendlier bounds for b: the next multiple of a power of two or of a
 * level's fanout, wasting at most a third (C = 3 -> 4, 1000 -> 1008, 1024). */
static int pad_candidates(const ms_space *s, int64_t b, int64_t out[PAD_CANDIDATES_PER_DIM])
{
    int64_t width[2 * ARCH_MAX_LEVELS + 16];
    int n_width = 0, n = 0;
    for (int64_t w = 2; w <= 1024; w *= 2)
        width[n_width++] = w;
    for (int l = 0; l < s->n_levels; l++) {
        width[n_width++] = s->fanout_x[l];
        width[n_width++] = s->fanout_y[l];
    }
    for (int i = 0; i < n_width; i++) {
        int64_t w = width[i], padded = w > 1 ? (b + w - 1) / w * w : b;
        if (padded <= b || (padded - b) * PAD_MAX_WASTE_DIVISOR > b)
            continue;
        int at = 0; /* keep the smallest candidates, ascending, unique */
        while (at < n && out[at] < padded)
            at++;
        if ((at < n && out[at] == padded) || at >= PAD_CANDIDATES_PER_DIM)
            continue;
        if (n < PAD_CANDIDATES_PER_DIM)
            n++;
        memmove(&out[at + 1], &out[at], (size_t)(n - 1 - at) * sizeof out[0]);
        out[at] = padded;
    }
    return n;
}

/* Whether some variant already has these bounds. */
static bool has_variant(const ms_space *s, const int64_t bound[WL_NDIMS])
{
    for (int v = 0; v < s->n_variants; v++)
        if (!memcmp(s->variant[v].problem.bound, bound, sizeof s->variant[v].problem.bound))
            return true;
    return false;
}

/* Add the variant with these bounds unless it is known or there is no room. */
static void add_new_variant(ms_space *s, const int64_t bound[WL_NDIMS])
{
    if (s->n_variants < MS_MAX_VARIANTS && !has_variant(s, bound))
        add_variant(s, bound);
}

/*
 * The padded variants: each dimension padded alone to each candidate;
 * every dimension at its first candidate; then every dimension at the next
 * multiple of one fanout width, for each width of the levels' X and Y
 * fanouts (vector lanes included), where that wastes at most a third --
 * the variants that fill two axes of a mesh at once.
 */
static void add_padding_variants(ms_space *s)
{
    int64_t cand[WL_NDIMS][PAD_CANDIDATES_PER_DIM], n_cand[WL_NDIMS], bound[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++) {
        n_cand[d] = pad_candidates(s, s->original.bound[d], cand[d]);
        for (int i = 0; i < n_cand[d]; i++) {
            memcpy(bound, s->original.bound, sizeof bound);
            bound[d] = cand[d][i];
            add_new_variant(s, bound);
        }
    }
    memcpy(bound, s->original.bound, sizeof bound);
    for (int d = 0; d < WL_NDIMS; d++)
        if (n_cand[d] > 0)
            bound[d] = cand[d][0];
    add_new_variant(s, bound);
    for (int l = 0; l < s->n_levels; l++)
        for (int axis = 0; axis < 2; axis++) {
            int64_t w = axis ? s->fanout_y[l] : s->fanout_x[l];
            if (w <= 1)
                continue;
            for (int d = 0; d < WL_NDIMS; d++) {
                int64_t b = s->original.bound[d], padded = (b + w - 1) / w * w;
                bound[d] = (padded - b) * PAD_MAX_WASTE_DIVISOR > b ? b : padded;
            }
            add_new_variant(s, bound);
        }
}

as_code ms_init(ms_space *s, const arch_spec *a, const wl_problem *p, bool pad, as_status *st)
{
    memset(s, 0, sizeof *s);
    if (a->n_levels < 1 || a->n_levels > ARCH_MAX_LEVELS)
        return as_fail(st, AS_EINVAL, "mapper: architecture %s has %d levels (1..%d)", a->name,
                       a->n_levels, ARCH_MAX_LEVELS);
    s->arch = *a;
    s->original = *p;
    s->n_levels = a->n_levels;
    for (int d = 0; d < WL_NDIMS; d++) {
        if (p->bound[d] > (int64_t)1 << 40)
            return as_fail(st, AS_EINVAL, "mapper: dimension %s bound %lld too large",
                           wl_dim_name((wl_dim)d), (long long)p->bound[d]);
        if (s->original.bound[d] < 1)
            s->original.bound[d] = 1;
    }
    int top = s->n_levels - 1;
    for (int l = 0; l < s->n_levels; l++) {
        const arch_level *al = &a->level[l];
        level_fanout(a, l, &s->fanout_x[l], &s->fanout_y[l]);
        bool split = false;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            split |= al->size_words_by_ds[ds] != 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            arch_keep k = al->constraints.keep[ds];
            /* A capacity split that gives ds no room can never keep it. */
            bool no_room = split && al->size_words_by_ds[ds] == 0 && k == ARCH_KEEP_FREE;
            s->keep[l][ds] = l == top                                 ? ARCH_KEEP_ALWAYS
                             : al->cls == ARCH_CLASS_DUMMY || no_room ? ARCH_KEEP_NEVER
                                                                      : k;
        }
        bool spreads = s->fanout_x[l] * s->fanout_y[l] > 1;
        for (int d = 0; d < WL_NDIMS; d++) {
            if (al->constraints.temporal_factor[d] == 0)
                s->slot[d][s->n_slots[d]++] = (ms_slot){(int8_t)l, false};
            if (spreads && al->constraints.spatial_factor[d] == 0)
                s->slot[d][s->n_slots[d]++] = (ms_slot){(int8_t)l, true};
        }
    }
    add_variant(s, s->original.bound);
    if (a->level[top].constraints.keep[0] == ARCH_KEEP_NEVER ||
        a->level[top].constraints.keep[1] == ARCH_KEEP_NEVER ||
        a->level[top].constraints.keep[2] == ARCH_KEEP_NEVER)
        s->variant[0].feasible = false; /* the backing store must keep everything */
    else if (pad)
        add_padding_variants(s);
    return AS_OK;
}

bool ms_any_feasible(const ms_space *s)
{
    for (int v = 0; v < s->n_variants; v++)
        if (s->variant[v].feasible)
            return true;
    return false;
}

void ms_blank(const ms_space *s, int variant, ms_point *pt)
{
    memset(pt, 0, sizeof *pt);
    pt->variant = variant;
    pt->m.n_levels = s->n_levels;
    for (int l = 0; l < s->n_levels; l++) {
        const arch_constraints *c = &s->arch.level[l].constraints;
        map_level *ml = &pt->m.level[l];
        for (int d = 0; d < WL_NDIMS; d++) {
            ml->temporal[d] = c->temporal_factor[d] > 0 ? c->temporal_factor[d] : 1;
            ml->spatial[d] = c->spatial_factor[d] > 0 ? c->spatial_factor[d] : 1;
        }
        prefixed_order(c->temporal_order, prefix_length(c->n_temporal_order), ml->temporal_order);
        prefixed_order(c->spatial_order, prefix_length(c->n_spatial_order), ml->spatial_order);
        if (c->spatial_split_fixed)
            ml->spatial_split = c->spatial_split < 0          ? 0
                                : c->spatial_split > WL_NDIMS ? WL_NDIMS
                                                              : c->spatial_split;
        else
            ml->spatial_split = s->fanout_x[l] == 1 && s->fanout_y[l] > 1 ? 0 : WL_NDIMS;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            ml->keep[ds] = s->keep[l][ds] != ARCH_KEEP_NEVER;
    }
}

/* Whether the level's split may move (both axes exist, not fixed). */
static bool split_free(const ms_space *s, int l)
{
    return !s->arch.level[l].constraints.spatial_split_fixed && s->fanout_x[l] > 1 &&
           s->fanout_y[l] > 1;
}

/* ---------------------------------------------------------------- random */

/* Random free orders, splits and keeps (factors untouched). */
static void randomize_shape(const ms_space *s, as_rng *r, ms_point *pt)
{
    for (int l = 0; l < s->n_levels; l++) {
        const arch_constraints *c = &s->arch.level[l].constraints;
        map_level *ml = &pt->m.level[l];
        int nt = prefix_length(c->n_temporal_order), ns = prefix_length(c->n_spatial_order);
        shuffle(r, ml->temporal_order + nt, WL_NDIMS - nt);
        shuffle(r, ml->spatial_order + ns, WL_NDIMS - ns);
        if (split_free(s, l))
            ml->spatial_split = (int)as_rng_below(r, WL_NDIMS + 1);
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (s->keep[l][ds] == ARCH_KEEP_FREE)
                ml->keep[ds] = as_rng_below(r, 2) != 0;
    }
}

bool ms_random(const ms_space *s, as_rng *r, int variant, ms_point *pt)
{
    const ms_variant *v = &s->variant[variant];
    uint8_t owner[WL_NDIMS * MS_MAX_PRIMES];
    uint8_t index[WL_NDIMS * MS_MAX_PRIMES];
    int n = 0;
    ms_blank(s, variant, pt);
    randomize_shape(s, r, pt);
    for (int d = 0; d < WL_NDIMS; d++)
        for (int i = 0; i < v->n_primes[d]; i++) {
            owner[n] = (uint8_t)d;
            index[n++] = (uint8_t)i;
        }
    /* Place the primes in a random order: shuffle positions jointly. */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)as_rng_below(r, i + 1);
        uint8_t t = owner[i];
        owner[i] = owner[j], owner[j] = t;
        t = index[i];
        index[i] = index[j], index[j] = t;
    }
    for (int i = 0; i < n; i++) {
        int d = owner[i];
        int64_t q = v->prime[d][index[i]];
        ms_slot fit[MS_MAX_SLOTS];
        int n_fit = 0;
        for (int k = 0; k < s->n_slots[d]; k++)
            if (factor_fits(s, pt, s->slot[d][k], d, q))
                fit[n_fit++] = s->slot[d][k];
        if (n_fit == 0)
            return false;
        *slot_factor(pt, fit[as_rng_below(r, n_fit)], d) *= q;
    }
    return true;
}

/* ---------------------------------------------------------------- moves */

/* Move one prime factor (or, one time in four, a whole factor) of a
 * random dimension from one of its slots to another. */
static bool move_factor(const ms_space *s, as_rng *r, ms_point *pt)
{
    int d = (int)as_rng_below(r, WL_NDIMS);
    const ms_variant *v = &s->variant[pt->variant];
    if (s->n_slots[d] < 2 || v->rest[d] == 1)
        return false;
    ms_slot from[MS_MAX_SLOTS];
    int n_from = 0;
    for (int k = 0; k < s->n_slots[d]; k++)
        if (*slot_factor(pt, s->slot[d][k], d) > 1)
            from[n_from++] = s->slot[d][k];
    if (n_from == 0)
        return false;
    ms_slot src = from[as_rng_below(r, n_from)], dst = s->slot[d][as_rng_below(r, s->n_slots[d])];
    if (src.level == dst.level && src.spatial == dst.spatial)
        return false;
    int64_t *f = slot_factor(pt, src, d), q = *f;
    if (as_rng_below(r, 4) != 0) {
        int64_t divisors[MS_MAX_PRIMES];
        int n_div = 0;
        for (int i = 0; i < v->n_primes[d]; i++)
            if (*f % v->prime[d][i] == 0 && (n_div == 0 || divisors[n_div - 1] != v->prime[d][i]))
                divisors[n_div++] = v->prime[d][i];
        q = divisors[as_rng_below(r, n_div)];
    }
    *f /= q;
    *slot_factor(pt, dst, d) *= q;
    return true;
}

/* Swap two loops of factor > 1 in the free part of a level's order. */
static bool swap_loops(const ms_space *s, as_rng *r, ms_point *pt)
{
    int l = (int)as_rng_below(r, s->n_levels);
    map_level *ml = &pt->m.level[l];
    int fixed = prefix_length(s->arch.level[l].constraints.n_temporal_order);
    int pos[WL_NDIMS], n = 0;
    for (int i = fixed; i < WL_NDIMS; i++)
        if (ml->temporal[ml->temporal_order[i]] > 1)
            pos[n++] = i;
    if (n < 2)
        return false;
    int a = pos[as_rng_below(r, n)], b = pos[as_rng_below(r, n)];
    if (a == b)
        return false;
    uint8_t t = ml->temporal_order[a];
    ml->temporal_order[a] = ml->temporal_order[b];
    ml->temporal_order[b] = t;
    return true;
}

/* Move a spatial loop to the other axis (or, with a fixed spatial order,
 * the split by one). */
static bool move_axis(const ms_space *s, as_rng *r, ms_point *pt)
{
    int l = (int)as_rng_below(r, s->n_levels);
    if (!split_free(s, l))
        return false;
    map_level *ml = &pt->m.level[l];
    if (s->arch.level[l].constraints.n_spatial_order > 0) {
        int split = ml->spatial_split + (as_rng_below(r, 2) ? 1 : -1);
        if (split < 0 || split > WL_NDIMS)
            return false;
        ml->spatial_split = split;
        return true;
    }
    int d = (int)as_rng_below(r, WL_NDIMS);
    if (ml->spatial[d] == 1)
        return false;
    int p = position_of(ml->spatial_order, d);
    if (p < ml->spatial_split) { /* X -> first of Y */
        memmove(&ml->spatial_order[p], &ml->spatial_order[p + 1],
                (size_t)(ml->spatial_split - 1 - p));
        ml->spatial_order[--ml->spatial_split] = (uint8_t)d;
    } else { /* Y -> last of X */
        memmove(&ml->spatial_order[ml->spatial_split + 1], &ml->spatial_order[ml->spatial_split],
                (size_t)(p - ml->spatial_split));
        ml->spatial_order[ml->spatial_split++] = (uint8_t)d;
    }
    return true;
}

/* Flip a free keep/bypass choice. */
static bool flip_keep(const ms_space *s, as_rng *r, ms_point *pt)
{
    int l = (int)as_rng_below(r, s->n_levels), ds = (int)as_rng_below(r, WL_NDATASPACES);
    if (s->keep[l][ds] != ARCH_KEEP_FREE)
        return false;
    pt->m.level[l].keep[ds] = !pt->m.level[l].keep[ds];
    return true;
}

bool ms_mutate(const ms_space *s, as_rng *r, ms_point *pt)
{
    /* Factor moves matter most, then orders; weights out of 16. */
    for (int attempt = 0; attempt < 16; attempt++) {
        int64_t pick = as_rng_below(r, 16);
        bool changed = pick < 8    ? move_factor(s, r, pt)
                       : pick < 13 ? swap_loops(s, r, pt)
                       : pick < 14 ? move_axis(s, r, pt)
                                   : flip_keep(s, r, pt);
        if (changed)
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- greedy */

/*
 * Styles of the greedy construction: a preference of dimensions, used as
 * the loop order of every level (innermost first) and as the order in
 * which temporal factors fill the inner buffers.  They are the classic
 * dataflows: reductions innermost (output stationary), output pixels
 * innermost (weight stationary), output channels innermost (input
 * stationary), and channels first (row-stationary-like).
 */
static const uint8_t STYLE[MS_GREEDY_STYLES][WL_NDIMS] = {
    {WL_DIM_R, WL_DIM_S, WL_DIM_C, WL_DIM_M, WL_DIM_P, WL_DIM_Q, WL_DIM_N, WL_DIM_G},
    {WL_DIM_Q, WL_DIM_P, WL_DIM_N, WL_DIM_S, WL_DIM_R, WL_DIM_C, WL_DIM_M, WL_DIM_G},
    {WL_DIM_M, WL_DIM_R, WL_DIM_S, WL_DIM_Q, WL_DIM_P, WL_DIM_C, WL_DIM_N, WL_DIM_G},
    {WL_DIM_C, WL_DIM_M, WL_DIM_S, WL_DIM_R, WL_DIM_Q, WL_DIM_P, WL_DIM_N, WL_DIM_G},
};

/* Free positions of each order follow the style. */
static void style_orders(const ms_space *s, int style, ms_point *pt)
{
    for (int l = 0; l < s->n_levels; l++) {
        const arch_constraints *c = &s->arch.level[l].constraints;
        map_level *ml = &pt->m.level[l];
        int fixed = prefix_length(c->n_temporal_order), n = fixed;
        for (int i = 0; i < WL_NDIMS; i++)
            if (position_of(ml->temporal_order, STYLE[style][i]) >= fixed)
                ml->temporal_order[n++] = STYLE[style][i];
    }
}

/* Best product <= cap of divisors of left[dims[i]] (i >= at): a small
 * depth-first search; out receives the chosen factor per dim. */
static void best_product(const int64_t *left, const uint8_t *dims, int n, int at, int64_t cap,
                         int64_t product, int64_t *cur, int64_t *best_product_out, int64_t *best)
{
    if (product > *best_product_out) {
        *best_product_out = product;
        for (int i = 0; i < n; i++)
            best[i] = cur[i];
    }
    for (int i = at; i < n; i++) {
        int64_t l = left[dims[i]];
        for (int64_t f = 2; f <= l && product * f <= cap; f++) {
            if (l % f != 0)
                continue;
            cur[i] = f;
            best_product(left, dims, n, i + 1, cap, product * f, cur, best_product_out, best);
            cur[i] = 1;
        }
    }
}

/* Fill one axis of level l with the best-utilising factors of the dims in
 * `dims` that still have free factors left; updates left[] and marks the
 * dims that received a factor in used[]. */
static void fill_axis(ms_point *pt, int l, const uint8_t *dims, int n, int64_t cap, int64_t *left,
                      bool used[WL_NDIMS])
{
    int64_t cur[WL_NDIMS], best[WL_NDIMS], best_prod = 0;
    for (int i = 0; i < WL_NDIMS; i++)
        cur[i] = best[i] = 1;
    best_product(left, dims, n, 0, cap, 1, cur, &best_prod, best);
    for (int i = 0; i < n; i++) {
        pt->m.level[l].spatial[dims[i]] *= best[i];
        left[dims[i]] /= best[i];
        used[dims[i]] |= best[i] > 1;
    }
}

/* Whether d has a free spatial slot at level l. */
static bool spatial_slot_free(const ms_space *s, int l, int d)
{
    return s->fanout_x[l] * s->fanout_y[l] > 1 &&
           s->arch.level[l].constraints.spatial_factor[d] == 0;
}

/* Spatial factors of level l: X first, then Y, each as full as the free
 * factors allow.  With a free split any dim may take either axis (one
 * axis per dim): X's dims then go first in the spatial order. */
static void greedy_spatial(const ms_space *s, int l, int style, ms_point *pt, int64_t *left)
{
    map_level *ml = &pt->m.level[l];
    uint8_t dims[2][WL_NDIMS];
    int n[2] = {0, 0};
    bool used[2][WL_NDIMS] = {{false}};
    int64_t x, y;
    spatial_use(ml, &x, &y);
    bool free_axis = split_free(s, l) && s->arch.level[l].constraints.n_spatial_order == 0;
    for (int i = WL_NDIMS - 1; i >= 0; i--) { /* outer dims of the style spread first */
        int d = STYLE[style][i];
        if (!spatial_slot_free(s, l, d) || left[d] == 1)
            continue;
        int axis = free_axis ? 0 : on_y(ml, d);
        dims[axis][n[axis]++] = (uint8_t)d;
    }
    fill_axis(pt, l, dims[0], n[0], s->fanout_x[l] / x, left, used[0]);
    if (!free_axis) {
        fill_axis(pt, l, dims[1], n[1], s->fanout_y[l] / y, left, used[1]);
        return;
    }
    for (int i = 0; i < n[0]; i++) /* Y: the dims X did not take */
        if (!used[0][dims[0][i]])
            dims[1][n[1]++] = dims[0][i];
    fill_axis(pt, l, dims[1], n[1], s->fanout_y[l] / y, left, used[1]);
    uint8_t order[WL_NDIMS];
    int k = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int d = 0; d < WL_NDIMS; d++)
            if ((pass == 0 && used[0][d]) || (pass == 1 && used[1][d]) ||
                (pass == 2 && !used[0][d] && !used[1][d]))
                order[k++] = (uint8_t)d;
    memcpy(ml->spatial_order, order, sizeof order);
    ml->spatial_split = 0;
    for (int d = 0; d < WL_NDIMS; d++)
        ml->spatial_split += used[0][d];
}

/* Put the prime q of d in the outermost temporal slot that takes it. */
static bool place_outermost(const ms_space *s, ms_point *pt, int d, int64_t q)
{
    for (int k = s->n_slots[d] - 1; k >= 0; k--) {
        ms_slot sl = s->slot[d][k];
        int64_t max = s->arch.level[sl.level].constraints.temporal_max[d];
        if (sl.spatial || (max > 0 && pt->m.level[sl.level].temporal[d] * q > max))
            continue;
        pt->m.level[sl.level].temporal[d] *= q;
        return true;
    }
    return false;
}

bool ms_greedy(const ms_space *s, int variant, int style, ms_point *pt)
{
    const ms_variant *v = &s->variant[variant];
    int64_t left[WL_NDIMS];
    ms_blank(s, variant, pt);
    style_orders(s, style, pt);
    memcpy(left, v->rest, sizeof left);
    for (int l = 0; l < s->n_levels; l++)
        if (s->fanout_x[l] * s->fanout_y[l] > 1)
            greedy_spatial(s, l, style, pt, left);
    /* Temporal: inner levels take the style's dims first while tiles fit. */
    int top = s->n_levels - 1;
    for (int l = 0; l < top; l++)
        for (int i = 0; i < WL_NDIMS; i++) {
            int d = STYLE[style][i];
            if (s->arch.level[l].constraints.temporal_factor[d] != 0)
                continue;
            for (int k = 0; k < v->n_primes[d]; k++) {
                int64_t q = v->prime[d][k];
                if (left[d] % q != 0 || !factor_fits(s, pt, (ms_slot){(int8_t)l, false}, d, q))
                    continue;
                pt->m.level[l].temporal[d] *= q;
                left[d] /= q;
            }
        }
    /* The rest goes outermost. */
    for (int d = 0; d < WL_NDIMS; d++)
        for (int k = 0; k < v->n_primes[d]; k++) {
            int64_t q = v->prime[d][k];
            if (left[d] % q != 0)
                continue;
            if (!place_outermost(s, pt, d, q))
                return false;
            left[d] /= q;
        }
    return ms_prune(s, pt);
}

/* ----------------------------------------------------------- exhaustive */

/* Ordered factorisations of n into k slots, appended to out (NULL: count
 * only); returns the count. */
static int64_t factorisations(int64_t n, int k, int64_t *prefix, int depth, int64_t *out,
                              int64_t at)
{
    if (depth == k - 1) {
        if (out) {
            memcpy(&out[at * k], prefix, (size_t)(k - 1) * sizeof *prefix);
            out[at * k + k - 1] = n;
        }
        return 1;
    }
    int64_t count = 0;
    for (int64_t f = 1; f <= n; f++) {
        if (n % f)
            continue;
        prefix[depth] = f;
        count += factorisations(n / f, k, prefix, depth + 1, out, at + count);
    }
    return count;
}

/* Ordered factorisations of a variant's rest of d into k slots, from its
 * prime exponents: prod over primes of C(e + k - 1, k - 1), saturated. */
static int64_t count_factorisations(const ms_variant *v, int d, int k)
{
    int64_t count = 1;
    for (int i = 0; i < v->n_primes[d];) {
        int e = 0;
        int64_t q = v->prime[d][i];
        while (i < v->n_primes[d] && v->prime[d][i] == q)
            i++, e++;
        int64_t c = 1; /* C(e + k - 1, e), exact step by step */
        for (int j = 1; j <= e && c <= ENUM_MAX_LIST; j++)
            c = c * (k - 1 + j) / j;
        count = count > ENUM_MAX_LIST || c > ENUM_MAX_LIST ? ENUM_MAX_LIST + 1 : count * c;
    }
    return count;
}

static int64_t factorial(int n)
{
    int64_t f = 1;
    for (int i = 2; i <= n; i++)
        f *= i;
    return f;
}

/* The shape of the inner odometer of one level for a factorisation. */
typedef struct inner_radix {
    int n_loops; /* free temporal loops of factor > 1 */
    uint8_t loop[WL_NDIMS];
    int64_t orders; /* n_loops! */
    int n_spread;   /* spatial loops of factor > 1 */
    uint8_t spread[WL_NDIMS];
    int64_t axes; /* 2^n_spread, 9 splits, or 1 */
    int n_keeps;
    uint8_t keep_ds[WL_NDATASPACES];
} inner_radix;

static void level_radix(const ms_space *s, const ms_point *pt, int l, inner_radix *ir)
{
    const arch_constraints *c = &s->arch.level[l].constraints;
    const map_level *ml = &pt->m.level[l];
    int fixed = prefix_length(c->n_temporal_order);
    memset(ir, 0, sizeof *ir);
    for (int d = 0; d < WL_NDIMS; d++) {
        if (ml->temporal[d] > 1 && position_of(ml->temporal_order, d) >= fixed)
            ir->loop[ir->n_loops++] = (uint8_t)d;
        if (ml->spatial[d] > 1)
            ir->spread[ir->n_spread++] = (uint8_t)d;
    }
    ir->orders = factorial(ir->n_loops);
    ir->axes = !split_free(s, l) || ir->n_spread == 0 ? 1
               : c->n_spatial_order > 0               ? WL_NDIMS + 1
                                                      : (int64_t)1 << ir->n_spread;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (s->keep[l][ds] == ARCH_KEEP_FREE)
            ir->keep_ds[ir->n_keeps++] = (uint8_t)ds;
}

bool ms_factorisation_possible(const ms_space *s, const ms_point *factors)
{
    ms_point minimal = *factors;
    for (int l = 0; l < s->n_levels; l++) {
        map_level *ml = &minimal.m.level[l];
        const arch_constraints *c = &s->arch.level[l].constraints;
        int64_t spread = 1;
        for (int d = 0; d < WL_NDIMS; d++) {
            spread *= ml->spatial[d];
            if (c->temporal_max[d] > 0 && ml->temporal[d] > c->temporal_max[d])
                return false;
        }
        if (spread > s->fanout_x[l] * s->fanout_y[l])
            return false;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            ml->keep[ds] = s->keep[l][ds] == ARCH_KEEP_ALWAYS;
    }
    return tiles_fit_from(s, &minimal, 0);
}

int64_t ms_enum_inner_count(const ms_space *s, const ms_point *factors)
{
    int64_t count = 1;
    for (int l = 0; l < s->n_levels; l++) {
        inner_radix ir;
        level_radix(s, factors, l, &ir);
        count *= ir.orders * ir.axes * ((int64_t)1 << ir.n_keeps);
    }
    return count;
}

void ms_enum_inner_point(const ms_space *s, const ms_point *factors, int64_t i, ms_point *pt)
{
    *pt = *factors;
    for (int l = 0; l < s->n_levels; l++) {
        map_level *ml = &pt->m.level[l];
        inner_radix ir;
        level_radix(s, factors, l, &ir);
        int64_t order_digit = i % ir.orders;
        i /= ir.orders;
        int64_t axis_digit = i % ir.axes;
        i /= ir.axes;
        int64_t keep_digit = i % ((int64_t)1 << ir.n_keeps);
        i >>= ir.n_keeps;
        /* Lehmer code -> the free loops' order, after the prefix; then the
         * unit loops, ascending. */
        int fixed = prefix_length(s->arch.level[l].constraints.n_temporal_order);
        uint8_t order[WL_NDIMS], pool[WL_NDIMS];
        unsigned placed = 0;
        int at = 0;
        for (; at < fixed; at++) {
            order[at] = factors->m.level[l].temporal_order[at];
            placed |= 1u << order[at];
        }
        memcpy(pool, ir.loop, sizeof pool);
        for (int k = ir.n_loops; k > 0; k--) {
            int64_t f = factorial(k - 1), pick = order_digit / f;
            order_digit %= f;
            order[at++] = pool[pick];
            placed |= 1u << pool[pick];
            memmove(&pool[pick], &pool[pick + 1], (size_t)(k - 1 - pick));
        }
        for (int d = 0; d < WL_NDIMS; d++)
            if (!(placed & (1u << d)))
                order[at++] = (uint8_t)d;
        memcpy(ml->temporal_order, order, sizeof order);
        /* Axes: a split, or a subset of the spread loops on Y. */
        if (ir.axes == WL_NDIMS + 1) {
            ml->spatial_split = (int)axis_digit;
        } else if (ir.axes > 1) {
            int k = 0;
            for (int pass = 0; pass < 2; pass++)
                for (int j = 0; j < ir.n_spread; j++)
                    if ((int)((axis_digit >> j) & 1) == pass)
                        ml->spatial_order[k++] = ir.spread[j];
            int x_count = 0;
            for (int j = 0; j < ir.n_spread; j++)
                x_count += !((axis_digit >> j) & 1);
            for (int d = 0; d < WL_NDIMS; d++)
                if (ml->spatial[d] == 1)
                    ml->spatial_order[k++] = (uint8_t)d;
            ml->spatial_split = x_count;
        }
        for (int k = 0; k < ir.n_keeps; k++)
            ml->keep[ir.keep_ds[k]] = (keep_digit >> k) & 1;
    }
}

void ms_enum_free(ms_enum *e)
{
    for (int v = 0; v < MS_MAX_VARIANTS; v++)
        for (int d = 0; d < WL_NDIMS; d++)
            free(e->list[v][d].value);
    memset(e, 0, sizeof *e);
}

/* Skip to the next feasible variant from e->variant; false when none. */
static bool seek_variant(ms_enum *e, const ms_space *s)
{
    while (e->variant < s->n_variants && !s->variant[e->variant].feasible)
        e->variant++;
    memset(e->index, 0, sizeof e->index);
    return e->variant < s->n_variants;
}

/* The factorisation at the odometer as a point (no advance). */
static void factorisation_point(const ms_enum *e, const ms_space *s, ms_point *pt)
{
    ms_blank(s, e->variant, pt);
    for (int d = 0; d < WL_NDIMS; d++) {
        const ms_factor_list *fl = &e->list[e->variant][d];
        for (int k = 0; k < s->n_slots[d]; k++)
            *slot_factor(pt, s->slot[d][k], d) *=
                fl->value[(int64_t)e->index[d] * s->n_slots[d] + k];
    }
}

/* Advance the odometer; false once every factorisation was produced. */
static bool advance(ms_enum *e, const ms_space *s)
{
    for (int d = 0; d < WL_NDIMS; d++) {
        if (++e->index[d] < e->list[e->variant][d].n)
            return true;
        e->index[d] = 0;
    }
    e->variant++;
    return seek_variant(e, s);
}

as_code ms_enum_init(ms_enum *e, const ms_space *s, int64_t max_points, as_status *st)
{
    memset(e, 0, sizeof *e);
    int64_t tuples = 0;
    for (int v = 0; v < s->n_variants; v++) {
        if (!s->variant[v].feasible)
            continue;
        int64_t product = 1;
        for (int d = 0; d < WL_NDIMS; d++) {
            int k = s->n_slots[d];
            int64_t prefix[MS_MAX_SLOTS];
            int64_t rest = s->variant[v].rest[d];
            int64_t n = k == 0 ? 1 : count_factorisations(&s->variant[v], d, k);
            if (n > ENUM_MAX_LIST || product * n > ENUM_MAX_TUPLES) {
                ms_enum_free(e);
                return as_fail(st, AS_EINVAL,
                               "mapper: map space too large for exhaustive search (more than %d "
                               "factorisations); use the heuristic or random-pruned search",
                               ENUM_MAX_TUPLES);
            }
            product *= n;
            ms_factor_list *fl = &e->list[v][d];
            fl->n = (int)n;
            fl->value = malloc((size_t)(n * (k > 0 ? k : 1)) * sizeof *fl->value);
            if (!fl->value) {
                ms_enum_free(e);
                return as_fail(st, AS_ENOMEM, "mapper: out of memory for the exhaustive lists");
            }
            if (k > 0)
                factorisations(rest, k, prefix, 0, fl->value, 0);
        }
        tuples += product;
    }
    /* Count every inner point exactly (tuples is bounded above). */
    e->points = 0;
    e->done = !seek_variant(e, s);
    while (!e->done) {
        ms_point pt;
        factorisation_point(e, s, &pt);
        e->points += ms_enum_inner_count(s, &pt);
        e->done = !advance(e, s);
        if (e->points > max_points) {
            int64_t seen = e->points;
            ms_enum_free(e);
            return as_fail(
                st, AS_EINVAL,
                "mapper: map space has more than %lld points (%lld factorisations), over the "
                "exhaustive limit %lld; use the heuristic or random-pruned search",
                (long long)seen, (long long)tuples, (long long)max_points);
        }
    }
    e->variant = 0;
    e->done = !seek_variant(e, s);
    return AS_OK;
}

bool ms_enum_next_factorisation(ms_enum *e, const ms_space *s, ms_point *pt)
{
    if (e->done)
        return false;
    factorisation_point(e, s, pt);
    e->done = !advance(e, s);
    return true;
}
