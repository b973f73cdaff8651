/*
 * kmeans.c -- k-means clustering for CHAMELEON's adaptive sampling.
 *
 * Seeding is k-means++ (Arthur and Vassilvitskii 2007): the first centre
 * is a uniform draw, each next one a draw weighted by the squared distance
 * to the nearest centre so far.  Then Lloyd's iterations: assign each
 * point to its nearest centroid, move each centroid to its points' mean,
 * until no assignment changes or `iterations` run out.  Ties go to the
 * lowest centroid index and an empty cluster keeps its centroid, so the
 * result depends only on the data and the rng's state.
 */
#include <stdlib.h>
#include <string.h>

#include "tune_private.h"

/* Squared Euclidean distance of two d-vectors. */
static double squared_distance(const double *a, const double *b, int d)
{
    double sum = 0.0;
    for (int j = 0; j < d; j++)
        sum += (a[j] - b[j]) * (a[j] - b[j]);
    return sum;
}

/* Index of the centroid nearest to p (lowest index on ties). */
static int nearest_centroid(const double *p, const double *centroids, int k, int d)
{
    int best = 0;
    double best_distance = squared_distance(p, centroids, d);
    for (int c = 1; c < k; c++) {
        double dist = squared_distance(p, centroids + (size_t)c * (size_t)d, d);
        if (dist < best_distance) {
            best_distance = dist;
            best = c;
        }
    }
    return best;
}

/* Index drawn with probability weight[i] / sum of weights; uniform when
 * every weight is zero (all points sit on centres already). */
static int64_t weighted_draw(const double *weight, int64_t n, as_rng *rng)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; i++)
        total += weight[i];
    if (!(total > 0.0))
        return as_rng_below(rng, n);
    double target = as_rng_unit(rng) * total, cumulative = 0.0;
    for (int64_t i = 0; i < n; i++) {
        cumulative += weight[i];
        if (weight[i] > 0.0 && target < cumulative)
            return i;
    }
    for (int64_t i = n - 1; i > 0; i--) /* rounding left target at the end */
        if (weight[i] > 0.0)
            return i;
    return 0;
}

/* k-means++ seeding into centroids.  nearest_sq (n doubles) is scratch;
 * when NULL (no memory) every centre is a uniform draw instead. */
static void seed_centroids(const double *x, int64_t n, int d, int k, as_rng *rng,
                           double *nearest_sq, double *centroids)
{
    size_t row_bytes = (size_t)d * sizeof *x;
    memcpy(centroids, x + (size_t)as_rng_below(rng, n) * (size_t)d, row_bytes);
    if (nearest_sq)
        for (int64_t i = 0; i < n; i++)
            nearest_sq[i] = squared_distance(x + (size_t)i * (size_t)d, centroids, d);
    for (int c = 1; c < k; c++) {
        int64_t pick = nearest_sq ? weighted_draw(nearest_sq, n, rng) : as_rng_below(rng, n);
        double *centre = centroids + (size_t)c * (size_t)d;
        memcpy(centre, x + (size_t)pick * (size_t)d, row_bytes);
        if (!nearest_sq)
            continue;
        for (int64_t i = 0; i < n; i++) {
            double dist = squared_distance(x + (size_t)i * (size_t)d, centre, d);
            if (dist < nearest_sq[i])
                nearest_sq[i] = dist;
        }
    }
}

/* Move centroid c to the mean of its points (unchanged when it has none). */
static void update_centroid(const double *x, int64_t n, int d, const int *assignment, int c,
                            double *centroid)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        count += assignment[i] == c;
    if (count == 0)
        return;
    memset(centroid, 0, (size_t)d * sizeof *centroid);
    for (int64_t i = 0; i < n; i++)
        if (assignment[i] == c)
            for (int j = 0; j < d; j++)
                centroid[j] += x[(size_t)i * (size_t)d + (size_t)j];
    for (int j = 0; j < d; j++)
        centroid[j] /= (double)count;
}

/* Cluster n points of dimension d into k groups (see tune_private.h and
 * the header comment).  n >= 1, 1 <= k; with k > n some centres repeat a
 * point and stay empty. */
void tn_kmeans(const double *x, int64_t n, int d, int k, as_rng *rng, int iterations,
               int *assignment, double *centroids)
{
    double *nearest_sq = malloc((size_t)n * sizeof *nearest_sq);
    seed_centroids(x, n, d, k, rng, nearest_sq, centroids);
    free(nearest_sq);
    for (int64_t i = 0; i < n; i++)
        assignment[i] = nearest_centroid(x + (size_t)i * (size_t)d, centroids, k, d);
    for (int it = 0; it < iterations; it++) {
        for (int c = 0; c < k; c++)
            update_centroid(x, n, d, assignment, c, centroids + (size_t)c * (size_t)d);
        bool changed = false;
        for (int64_t i = 0; i < n; i++) {
            int c = nearest_centroid(x + (size_t)i * (size_t)d, centroids, k, d);
            changed = changed || c != assignment[i];
            assignment[i] = c;
        }
        if (!changed)
            break;
    }
}
