/*
 * eval_private.h -- the loop-nest analysis behind map_evaluate, shared by
 * nest.c (what one child pulls, how children share a delivery) and eval.c
 * (collapse to storage levels, energy, cycles).  Section numbers (§n)
 * refer to docs/timeloop-semantics.md.
 */
#ifndef AS_MAPPING_EVAL_PRIVATE_H
#define AS_MAPPING_EVAL_PRIVATE_H

#include "mapping.h"

/* Each level contributes at most one loop per dimension in space and one
 * per dimension in time (or a single trivial loop when it has none). */
#define NEST_MAX_LOOPS (ARCH_MAX_LEVELS * 2 * WL_NDIMS)
/* Distinct multicast factors one spatial level may produce. */
#define NEST_MAX_GROUPS 16

/* One loop of the flat nest, innermost first (Timeloop's loop::Nest with
 * the trivial factors dropped). */
typedef struct nest_loop {
    wl_dim dim;
    int level; /* the storage level whose block holds it */
    bool spatial;
    int64_t bound;
    int64_t step; /* op-space stride of one iteration: product of the
                     bounds of the inner loops over the same dim */
} nest_loop;

typedef struct nest {
    int n_loops;
    nest_loop loop[NEST_MAX_LOOPS];
    int first[ARCH_MAX_LEVELS];     /* a level's innermost loop ... */
    int boundary[ARCH_MAX_LEVELS];  /* ... and its outermost (the tiling boundary) */
    int n_spatial[ARCH_MAX_LEVELS]; /* its spatial loops: first .. first + n_spatial - 1 */
    /* Op-space extent per dimension of a level's tile (the subnest up to its
     * boundary) and of the region spread over its children (up to its
     * outermost spatial loop; equals the child tile when it has none). */
    int64_t tile_extent[ARCH_MAX_LEVELS][WL_NDIMS];
    int64_t spread_extent[ARCH_MAX_LEVELS][WL_NDIMS];
    int64_t fanout[ARCH_MAX_LEVELS];      /* product of the level's spatial bounds */
    int64_t replication[ARCH_MAX_LEVELS]; /* product of the spatial bounds above it */
    int64_t temporal_iterations;          /* product of every temporal bound */
} nest;

/* `scatter` groups of `multicast` children each receive identical data. */
typedef struct nest_group {
    int64_t multicast;
    int64_t scatter;
} nest_group;

/* Build the nest of a mapping already checked for shape and factors. */
void nest_build(const map_mapping *m, int n_levels, nest *n);

/* Words of data space ds in the box spanned by op-space extents ext. */
int64_t nest_box_words(const wl_dataspace *ds, const int64_t ext[WL_NDIMS]);

/* Extent of each rank of ds over the box of op-space extents ext (a rank
 * spans sum(|coef| * (ext - 1)) + 1); returns the number of ranks. */
int nest_rank_extents(const wl_dataspace *ds, const int64_t ext[WL_NDIMS],
                      int64_t out[WL_MAX_DS_RANKS]);

/* Words one instance of `level` pulls from its parent over the whole run
 * (Timeloop's delta accumulation at the level's boundary, §1). */
int64_t nest_child_pulls(const nest *n, const wl_dataspace *ds, int level);

/* The multicast groups among the children of `level` for ds (§2), sorted
 * by multicast factor; the count, or -1 when the pattern is beyond the
 * fixed-size analysis (reason written to why). */
int nest_multicast_groups(const nest *n, const wl_dataspace *ds, int level,
                          nest_group out[NEST_MAX_GROUPS], char *why, size_t why_size);

/* ------------------------------------------------ compute units (array.c) */

/* The GEMM one systolic array runs for a mapping: the problem divided by
 * every spatial factor, M = N * P * Q, N = M, K = C * R * S for one group
 * (docs/systolic-formulas.md, section 6), widened to `pack` groups side by
 * side (a block-diagonal GEMM of pack x N columns and pack x K
 * reductions, its off-diagonal blocks zeros), run in ceil(groups / pack)
 * passes one after another.  pack = 1 is SCALE-Sim's rule: one group at
 * a time. */
typedef struct array_gemm {
    int64_t m, n, k; /* one pass, packed */
    int64_t groups;  /* the groups one array runs */
    int64_t pack;    /* groups side by side (1 .. groups) */
    int64_t passes;  /* ceil(groups / pack) */
} array_gemm;

/* The GEMM of p under m with `pack` groups side by side (0 or 1: one at a
 * time; above the groups: all of them); false when a count overflows. */
bool array_gemm_of(const wl_problem *p, const map_mapping *m, int64_t pack, array_gemm *g);
/* Cycles of one array running g: passes x SCALE-Sim's fold cycles of one
 * packed GEMM (map_systolic_cycles); -1 on overflow. */
int64_t array_cycles(const arch_compute *c, const array_gemm *g);

/* What one compute instance moves over the whole mapping. */
typedef struct array_flow {
    bool systolic;
    /* Words per data space it takes from the level above (Outputs: gives
     * to it): one per MAC, or a systolic array's edge words. */
    int64_t compute_words[WL_NDATASPACES];
    map_systolic_traffic inside; /* systolic: one array, all its groups */
} array_flow;

/* The flow of a mapping already checked for shape and factors; false when
 * a count overflows. */
bool array_flow_of(const arch_spec *a, const wl_problem *p, const map_mapping *m, const nest *n,
                   array_flow *f);
/* The energy of the movement inside `arrays` systolic arrays into
 * out->level[0].net[] and out->array_register_pJ / array_hop_pJ. */
void array_energy(const arch_spec *a, const array_flow *f, int64_t arrays, map_eval *out);
/* The group packing (map_mapping.group_pack) with the fewest compute
 * cycles for m's spatial factors, fewest groups at a tie; 1 unless the
 * compute is systolic and an array runs several groups.  The mapper sets
 * it on every point it evaluates (search.c). */
int64_t map_best_group_pack(const arch_spec *a, const wl_problem *p, const map_mapping *m);

/* ------------------------------------------------ sparse costing (sparse.c) */

/* Compressed storage at every level that keeps a data space in a
 * compressed format (docs/sparse.md): its reads, fills and updates become
 * the expected non-zero words plus the metadata words, its tile the
 * expected compressed size; uncompressed levels are left as they are.
 * Also checks that a skipping MAC is fed its checked operands from a
 * level that keeps them compressed: false with out invalid otherwise.
 * Only for a design where arch_is_sparse holds. */
bool sparse_scale_storage(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                          const nest *n, map_eval *out);
/* Words the tile of data space ds over op-space extents ext takes at
 * level al: its compressed size when al stores ds compressed
 * (map_sparse_tile_words), else its elements (nest_box_words).  The
 * capacity check and the map space's pruning both size tiles so. */
int64_t sparse_tile_words(const arch_level *al, const wl_problem *p, int ds,
                          const int64_t ext[WL_NDIMS]);
/* Gating MACs gate their operand reads and partial-sum updates too: at
 * the level serving the MACs each data space's read and update energy
 * (not its fills, not its counts or cycles) scales by the effectual
 * fraction (for a checked operand stored compressed there, by that over
 * its own density).  Called after the levels' energies are set. */
void sparse_gate_access_energy(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                               map_eval *out);
/* Compute cycles after skipping: the dense count times the fraction of
 * MACs issued (all of them unless the MACs skip). */
int64_t sparse_compute_cycles(const arch_spec *a, const wl_problem *p, int64_t dense_cycles);
/* The MAC energy after gating or skipping, and the fraction of MACs
 * issued (for the utilization). */
double sparse_mac_energy_pJ(const arch_spec *a, const wl_problem *p, double dense_pJ);
double sparse_issued_fraction(const arch_spec *a, const wl_problem *p);

#endif
