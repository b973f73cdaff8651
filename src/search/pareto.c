/*
 * pareto.c -- Pareto dominance, the non-dominated front, the hypervolume
 * indicator, CASCO's pick of the design nearest the ideal point, and
 * ParEGO's scalarisation (see search.h).  Every objective is minimised.
 *
 * Hypervolume.  The measure of the union of the boxes [p, ref] over the
 * points p, computed exactly by slicing (HSO, While, Hingston, Barone and
 * Huband, "A faster algorithm for calculating hypervolume", IEEE TEVC
 * 10(1), 2006): the points are sorted by their last objective; between
 * consecutive values of it the dominated region is a slab whose cross
 * section is the (d-1)-dimensional hypervolume of the points below it,
 * projected.  The projected points are kept as a non-dominated set,
 * updated point by point, and the cross section is recomputed only when
 * the set changes.  Two objectives are the base case: a sweep along the
 * first objective adds one rectangle per step of the staircase.  Cost
 * O(n^(d-1) log n) in the worst case; a few hundred points in three
 * objectives take milliseconds.
 *
 * ParEGO.  Knowles, "ParEGO: a hybrid algorithm with on-line landscape
 * approximation for expensive multiobjective optimization problems",
 * IEEE TEVC 10(1), 2006: the augmented Tchebycheff scalarisation, and
 * weight vectors drawn from the simplex lattice { w : w_i = l_i / s,
 * sum l_i = s } with s = 10 for two objectives and 4 for three (3 for
 * four, keeping the lattice about as large: 20 vectors).
 */
#include "search_private.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- dominance */

/* a weakly dominates b in the first n objectives: no worse in any. */
static bool weakly_dominates(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] > b[i])
            return false;
    return true;
}

bool se_dominates(const double *a, const double *b, int n)
{
    bool better = false;
    for (int i = 0; i < n; i++) {
        if (a[i] > b[i])
            return false;
        better |= a[i] < b[i];
    }
    return better;
}

int64_t se_pareto_front(const double *y, int64_t n_points, int n_obj, int64_t *front)
{
    int64_t n_front = 0;
    for (int64_t i = 0; i < n_points; i++) {
        const double *yi = y + i * n_obj;
        bool kept = true;
        /* An earlier equal point also knocks i out: duplicates keep the
         * first. */
        for (int64_t j = 0; j < n_points && kept; j++) {
            const double *yj = y + j * n_obj;
            kept =
                j == i || !(j < i ? weakly_dominates(yj, yi, n_obj) : se_dominates(yj, yi, n_obj));
        }
        if (kept)
            front[n_front++] = i;
    }
    return n_front;
}

/* ------------------------------------------------------------- hypervolume */

/* A point with a fixed row size, so that projecting onto the first k
 * objectives is just reading fewer of them. */
typedef struct hv_point {
    double v[SE_MAX_OBJECTIVES];
} hv_point;

/*
 * Scratch for one hypervolume: the input's front (input), and for each
 * dimension d of the recursion a sorted copy of its points (sorted[d]) and
 * the non-dominated set of the projections of its slices (set[d]); keys
 * serve every sort.  Each holds as many points as the input, so nothing
 * is allocated while slicing.
 */
typedef struct hv_work {
    hv_point *input;
    se_ranked *keys;
    hv_point *sorted[SE_MAX_OBJECTIVES + 1];
    hv_point *set[SE_MAX_OBJECTIVES + 1];
} hv_work;

static int compare_ranked(const void *pa, const void *pb)
{
    const se_ranked *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

void se_ranked_sort(se_ranked *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, compare_ranked);
}

/* Copy points[0 .. n) into out in increasing order of coordinate c. */
static void sort_points(const hv_point *points, int64_t n, int c, se_ranked *keys, hv_point *out)
{
    for (int64_t i = 0; i < n; i++)
        keys[i] = (se_ranked){points[i].v[c], i};
    se_ranked_sort(keys, n);
    for (int64_t i = 0; i < n; i++)
        out[i] = points[keys[i].index];
}

/*
 * Add p to the non-dominated set set[0 .. *n) of points compared on their
 * first d coordinates: unless a member weakly dominates p, the members p
 * weakly dominates leave and p joins.  Returns whether the set changed
 * (if not, its hypervolume did not either).
 */
static bool add_nondominated(hv_point *set, int64_t *n, const hv_point *p, int d)
{
    for (int64_t i = 0; i < *n; i++)
        if (weakly_dominates(set[i].v, p->v, d))
            return false;
    int64_t kept = 0;
    for (int64_t i = 0; i < *n; i++)
        if (!weakly_dominates(p->v, set[i].v, d))
            set[kept++] = set[i];
    set[kept++] = *p;
    *n = kept;
    return true;
}

/* Area dominated by points[0 .. n) in the first two coordinates, bounded
 * by ref.  Sorted by the first, the non-dominated points descend in the
 * second: each adds the strip between its predecessor's second coordinate
 * and its own, from its first to ref. */
static double hv_sweep_2d(const hv_point *points, int64_t n, const double *ref, hv_work *w)
{
    hv_point *sorted = w->sorted[2];
    sort_points(points, n, 0, w->keys, sorted);
    double area = 0, above = ref[1];
    for (int64_t i = 0; i < n; i++) {
        area += (ref[0] - sorted[i].v[0]) * (above - sorted[i].v[1]);
        above = sorted[i].v[1];
    }
    return area;
}

/*
 * Hypervolume of points[0 .. n) in their first d coordinates (HSO; see
 * the top of the file).  The points are strictly below ref and none
 * weakly dominates another there (so in one dimension there is at most
 * one).  points is not changed: each level sorts into its own scratch.
 */
static double hv_slice(const hv_point *points, int64_t n, int d, const double *ref, hv_work *w)
{
    if (n == 0)
        return 0;
    if (d == 1)
        return ref[0] - points[0].v[0];
    if (d == 2)
        return hv_sweep_2d(points, n, ref, w);
    hv_point *sorted = w->sorted[d], *set = w->set[d];
    sort_points(points, n, d - 1, w->keys, sorted);
    int64_t n_set = 0;
    double volume = 0, section = 0;
    for (int64_t i = 0; i < n; i++) {
        if (add_nondominated(set, &n_set, &sorted[i], d - 1))
            section = hv_slice(set, n_set, d - 1, ref, w);
        double top = i + 1 < n ? sorted[i + 1].v[d - 1] : ref[d - 1];
        volume += section * (top - sorted[i].v[d - 1]);
    }
    return volume;
}

static void hv_work_free(hv_work *w)
{
    free(w->input);
    free(w->keys);
    for (int d = 0; d <= SE_MAX_OBJECTIVES; d++) {
        free(w->sorted[d]);
        free(w->set[d]);
    }
}

/* Scratch for up to n points in n_obj objectives; false when out of
 * memory (w is then freed). */
static bool hv_work_alloc(hv_work *w, int64_t n, int n_obj)
{
    *w = (hv_work){0};
    size_t count = (size_t)(n > 0 ? n : 1);
    bool ok = (w->input = malloc(count * sizeof *w->input)) != NULL &&
              (w->keys = malloc(count * sizeof *w->keys)) != NULL;
    for (int d = 2; d <= n_obj && ok; d++) {
        ok = (w->sorted[d] = malloc(count * sizeof *w->sorted[d])) != NULL &&
             (w->set[d] = malloc(count * sizeof *w->set[d])) != NULL;
    }
    if (!ok)
        hv_work_free(w);
    return ok;
}

/* Whether y is strictly below ref in every objective (NaN is not). */
static bool inside_reference(const double *y, int n_obj, const double *ref)
{
    for (int i = 0; i < n_obj; i++)
        if (!(y[i] < ref[i]))
            return false;
    return true;
}

/*
 * Only the points strictly below ref and not weakly dominated by another
 * of them reach the slicing.  NaN when n_obj is out of range or memory
 * runs out: the hypervolume is then unknown, not zero.
 */
double se_hypervolume(const double *y, int64_t n_points, int n_obj, const double *ref)
{
    if (n_obj < 1 || n_obj > SE_MAX_OBJECTIVES)
        return NAN;
    hv_work w;
    if (!hv_work_alloc(&w, n_points, n_obj))
        return NAN;
    int64_t n_front = 0;
    for (int64_t i = 0; i < n_points; i++) {
        const double *yi = y + i * n_obj;
        if (!inside_reference(yi, n_obj, ref))
            continue;
        hv_point p = {{0}};
        for (int k = 0; k < n_obj; k++)
            p.v[k] = yi[k];
        add_nondominated(w.input, &n_front, &p, n_obj);
    }
    double volume = hv_slice(w.input, n_front, n_obj, ref, &w);
    hv_work_free(&w);
    return volume;
}

/* ------------------------------------------------------- the chosen design */

/*
 * Each objective is normalised over the front, (y - min) / (max - min),
 * so that no unit dominates the distance; an objective constant on the
 * front contributes 0.  The ideal point is then the origin.  -1 for an
 * empty front or n_obj out of range.
 */
int64_t se_pick_nearest_ideal(const double *y, const int64_t *front, int64_t n_front, int n_obj)
{
    if (n_obj < 1 || n_obj > SE_MAX_OBJECTIVES)
        return -1;
    double low[SE_MAX_OBJECTIVES], high[SE_MAX_OBJECTIVES];
    for (int k = 0; k < n_obj && n_front > 0; k++) {
        low[k] = high[k] = y[front[0] * n_obj + k];
        for (int64_t i = 1; i < n_front; i++) {
            low[k] = fmin(low[k], y[front[i] * n_obj + k]);
            high[k] = fmax(high[k], y[front[i] * n_obj + k]);
        }
    }
    int64_t best = -1;
    double best_distance2 = INFINITY;
    for (int64_t i = 0; i < n_front; i++) {
        const double *yi = y + front[i] * n_obj;
        double distance2 = 0;
        for (int k = 0; k < n_obj; k++) {
            double span = high[k] - low[k];
            double f = span > 0 ? (yi[k] - low[k]) / span : 0;
            distance2 += f * f;
        }
        if (distance2 < best_distance2 || (distance2 == best_distance2 && front[i] < best)) {
            best_distance2 = distance2;
            best = front[i];
        }
    }
    return best;
}

/* ------------------------------------------------------------------ ParEGO */

double se_parego_scalar(const double *f, const double *w, int n, double rho)
{
    double largest = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++) {
        largest = fmax(largest, w[i] * f[i]);
        sum += w[i] * f[i];
    }
    return largest + rho * sum;
}

/* Lattice divisions s for n objectives (Knowles: 10 for two, 4 for
 * three; 3 for four and beyond). */
static int lattice_divisions(int n_obj)
{
    static const int divisions[] = {0, 0, 10, 4, 3};
    return n_obj <= SE_MAX_OBJECTIVES ? divisions[n_obj] : 3;
}

/* Number of ways to write total as an ordered sum of parts non-negative
 * integers: C(total + parts - 1, parts - 1). */
static uint64_t compositions(int total, int parts)
{
    uint64_t c = 1;
    for (int i = 1; i < parts; i++)
        c = c * (uint64_t)(total + i) / (uint64_t)i; /* exact: C(total + i, i) */
    return c;
}

/*
 * The lattice is enumerated in lexicographic order of (l_0, l_1, ...),
 * l_0 = 0 first: for two objectives index 0 is (0, 1) and index 10 is
 * (1, 0).  draw picks index draw % count; each position takes the
 * smallest level whose block of completions still contains the index.
 */
void se_parego_weights(int n_obj, uint64_t draw, double *w)
{
    if (n_obj < 1)
        return;
    int s = lattice_divisions(n_obj);
    if (n_obj == 1) {
        w[0] = 1;
        return;
    }
    uint64_t index = draw % compositions(s, n_obj);
    int left = s;
    for (int i = 0; i < n_obj - 1; i++) {
        int level = 0;
        for (;; level++) {
            uint64_t block = compositions(left - level, n_obj - 1 - i);
            if (index < block)
                break;
            index -= block;
        }
        w[i] = (double)level / s;
        left -= level;
    }
    w[n_obj - 1] = (double)left / s;
}
