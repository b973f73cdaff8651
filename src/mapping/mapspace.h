/*
 * mapspace.h -- the map space of one problem on one architecture, shared
 * by mapspace.c (what a point is, which points are legal, how to draw,
 * change, build and enumerate them) and search.c (the algorithms that
 * walk it).  Private to src/mapping.
 *
 * A point is a map_mapping plus the padding variant of the problem it maps.
 * Every point the functions below produce already honours the
 * architecture's constraints (fixed and bounded factors, fixed order
 * prefixes, fixed spatial splits, forced keep/bypass) and multiplies to
 * its variant's bounds; ms_prune then rejects, without evaluating, what is
 * provably invalid: fanout exceeded, utilisation floor missed, a kept tile
 * over capacity.
 */
#ifndef AS_MAPPING_MAPSPACE_H
#define AS_MAPPING_MAPSPACE_H

#include "mapping.h"

/* Padded problems searched besides the original (variant 0). */
#define MS_MAX_VARIANTS 24
/* Prime factors of one bound (2^62 has 62). */
#define MS_MAX_PRIMES 64
/* Places a dimension's factors can go: a temporal and a spatial slot per level. */
#define MS_MAX_SLOTS (2 * ARCH_MAX_LEVELS)

/* A place for a dimension's factors: level `level`, in time or in space. */
typedef struct ms_slot {
    int8_t level;
    bool spatial;
} ms_slot;

/* One problem the search may map: the original or a padded copy. */
typedef struct ms_variant {
    wl_problem problem;
    bool feasible;          /* fixed factors divide every bound */
    int64_t rest[WL_NDIMS]; /* bound / product of fixed factors */
    int n_primes[WL_NDIMS]; /* prime factors of rest, ascending */
    int64_t prime[WL_NDIMS][MS_MAX_PRIMES];
} ms_variant;

typedef struct ms_space {
    arch_spec arch;
    wl_problem original;
    int n_levels;
    int n_variants;
    ms_variant variant[MS_MAX_VARIANTS];
    /* Per level: children per instance on X and Y (1 x 1: no spatial loops). */
    int64_t fanout_x[ARCH_MAX_LEVELS], fanout_y[ARCH_MAX_LEVELS];
    /* Per dimension, the slots whose factor is free (not fixed). */
    int n_slots[WL_NDIMS];
    ms_slot slot[WL_NDIMS][MS_MAX_SLOTS];
    /* Forced keep per level and data space: constraints, class and a
     * capacity split without room for the data space merged. */
    arch_keep keep[ARCH_MAX_LEVELS][WL_NDATASPACES];
} ms_space;

typedef struct ms_point {
    int variant;
    map_mapping m;
} ms_point;

/* Build the space: constraints read, fanouts computed, padding variants
 * chosen (only when pad is set).  Fails on an architecture or problem it
 * cannot describe (levels out of range, non-positive bounds). */
as_code ms_init(ms_space *s, const arch_spec *a, const wl_problem *p, bool pad, as_status *st);

/* True when some variant has fixed factors that divide its bounds. */
bool ms_any_feasible(const ms_space *s);

/* The point with every free factor 1 (everything at the outermost level
 * is then added by the builders), constraint orders and forced keeps. */
void ms_blank(const ms_space *s, int variant, ms_point *pt);

/* Cheap legality before evaluation: fanout, utilisation floor, temporal
 * maxima and capacity of kept tiles.  False means map_evaluate would
 * reject it (or the constraints forbid it). */
bool ms_prune(const ms_space *s, const ms_point *pt);

/* Timeloop-style pruned random point: random orders, splits and keeps,
 * then every prime factor to a random slot where it still fits.  False
 * when a factor fits nowhere (the draw counts as an invalid mapping). */
bool ms_random(const ms_space *s, as_rng *r, int variant, ms_point *pt);

/* One random local move (a prime factor to another slot, two loops
 * swapped, a split moved, a keep flipped); false when it changed nothing
 * that map_evaluate can see. */
bool ms_mutate(const ms_space *s, as_rng *r, ms_point *pt);

/* Structured construction for the heuristic (mapspace.c explains the
 * styles); false when the result is not legal. */
#define MS_GREEDY_STYLES 4
bool ms_greedy(const ms_space *s, int variant, int style, ms_point *pt);

/* ---------------------------------------------------------- exhaustive */

/* The exhaustive enumeration: an outer odometer over (variant, one
 * factorisation per dimension) and, per factorisation, an inner odometer
 * over the orders of its non-unit loops, the X/Y assignment of its spatial
 * loops and its free keeps.  Permutations that differ only in loops of
 * factor 1 are one point; so are spatial orders that put the same loops
 * on the same axes. */
typedef struct ms_factor_list {
    int n;          /* factorisations of the dimension's rest over its slots */
    int64_t *value; /* n x n_slots factors */
} ms_factor_list;

typedef struct ms_enum {
    ms_factor_list list[MS_MAX_VARIANTS][WL_NDIMS];
    int variant;
    int index[WL_NDIMS]; /* current factorisation per dimension */
    bool done;
    int64_t points; /* size of the whole space (inner points summed) */
} ms_enum;

/* Count the space and prepare the lists; AS_EINVAL naming the size when it
 * exceeds max_points. */
as_code ms_enum_init(ms_enum *e, const ms_space *s, int64_t max_points, as_status *st);
void ms_enum_free(ms_enum *e);
/* The next factorisation as a point (orders and keeps canonical, factors
 * set); false once every one has been produced. */
bool ms_enum_next_factorisation(ms_enum *e, const ms_space *s, ms_point *pt);
/* Whether any inner point of a factorisation could be legal: spatial
 * products within the fanout, temporal maxima, and the tiles that must be
 * kept (forced keeps only) within capacity. */
bool ms_factorisation_possible(const ms_space *s, const ms_point *factors);
/* Inner points of a factorisation: count, and the i-th of them. */
int64_t ms_enum_inner_count(const ms_space *s, const ms_point *factors);
void ms_enum_inner_point(const ms_space *s, const ms_point *factors, int64_t i, ms_point *pt);

#endif
