/*
 * fusion.h -- layer fusion: which layers run together on chip, tile by
 * tile, so that their intermediates never cross DRAM.
 *
 * A plan partitions the working ops of a graph (live, unfolded, not views)
 * into groups.  A group runs tile by tile over its final outputs (Optimus,
 * DeFiNES): each member computes the region of its output the next member
 * needs, halos included; intermediates stay on chip; the group's external
 * inputs, outputs and weights cross DRAM.  The layer-by-layer plan (every
 * op its own group) is the baseline the searches improve on.
 *
 * Searches over plans (genetic, dynamic programming, FAST's ILP) are
 * anytime and seeded, like the mapper's.
 */
#ifndef AS_FUSION_H
#define AS_FUSION_H

#include "../arch/arch.h"
#include "../core/core.h"
#include "../mapping/mapping.h"
#include "../workload/workload.h"

/* ------------------------------------------------------------------ plans */

typedef struct fu_plan {
    int32_t n_ops;  /* the graph's op count (g->n_ops) */
    int32_t *group; /* per graph op: its group, -1 for ops that do no work (views,
                       folded shape arithmetic, dead ops); malloc'd */
    int32_t n_groups;
} fu_plan;

/* Allocate a plan for g with every working op in its own group (the
 * layer-by-layer plan), canonical. */
as_code fu_plan_init(fu_plan *p, const wl_graph *g, as_status *st);
void fu_plan_free(fu_plan *p);
as_code fu_plan_copy(fu_plan *dst, const fu_plan *src, as_status *st);
/* True when op o does work and so belongs to some group. */
bool fu_op_in_plan(const wl_graph *g, int32_t o);

/* A plan is valid when every working op has a group, every group is
 * convex (no path leaves the group and re-enters it) and connected by data
 * (each member consumes another member's output or shares an input with
 * one).  On failure reason names the group and ops. */
bool fu_plan_valid(const wl_graph *g, const fu_plan *p, char *reason, size_t reason_size);
/* Renumber groups in the topological order of their first op, so that
 * equal partitions have equal arrays. */
void fu_plan_canonicalize(const wl_graph *g, fu_plan *p);
bool fu_plan_equal(const fu_plan *a, const fu_plan *b);

/* ------------------------------------------------------------ group costs */

/* How a group treats the overlap (halo) of convolution windows between
 * neighbouring tiles (DeFiNES). */
typedef enum fu_halo_mode {
    FU_HALO_RECOMPUTE,  /* every tile recomputes its halo */
    FU_HALO_CACHE_ROWS, /* halos cached along one axis, recomputed along the other */
    FU_HALO_CACHE_ALL,  /* every halo cached on chip, nothing recomputed */
} fu_halo_mode;

typedef struct fu_tile {
    int64_t rows, cols; /* of the group's final output (spatial), or tokens x 1 */
} fu_tile;

typedef struct fu_group_cost {
    bool valid;
    char reason[160];  /* why not: the footprint that does not fit, ... */
    fu_tile tile;      /* the tile shape chosen */
    fu_halo_mode halo; /* the halo mode chosen */
    int64_t n_tiles;
    int64_t onchip_bytes;    /* peak footprint: resident weights + live tiles + cached halos,
                                with multiple buffering */
    int64_t dram_bytes;      /* external inputs, outputs, weights (once, or per tile) */
    int64_t macs;            /* useful */
    int64_t recomputed_macs; /* extra MACs of recomputed halos */
    int64_t cycles;
    double energy_pJ;
    double onchip_energy_pJ; /* from the members' mappings (recompute included) */
    double dram_energy_pJ;
    /* energy_pJ by part, as map_layer_result splits a layer's: the MACs,
     * the storage levels (onchip_level_pJ by level, resident weight reads
     * included), DRAM, the on-chip network and vector unit. */
    double energy_by_component_pJ[MAP_N_COMPONENTS];
    double onchip_level_pJ[ARCH_MAX_LEVELS];
} fu_group_cost;

typedef struct fu_plan_cost {
    bool valid;
    char reason[160];
    int64_t cycles;
    double latency_s;
    double energy_pJ;
    double onchip_energy_pJ;
    double dram_energy_pJ;
    double energy_by_component_pJ[MAP_N_COMPONENTS]; /* the groups' sums */
    double onchip_level_pJ[ARCH_MAX_LEVELS];
    double edp_J_cycle;
    int64_t dram_bytes;
    double op_intensity; /* 2 * MACs / DRAM bytes */
    int64_t macs, recomputed_macs;
    int32_t n_groups;
    fu_group_cost *groups; /* by canonical group index; malloc'd, fu_plan_cost_free */
    map_residency weights; /* where the weights lived: resident or streamed (mapping.h) */
} fu_plan_cost;

void fu_plan_cost_free(fu_plan_cost *c);
/* A deep copy of c into *out (which is overwritten, not freed). */
as_code fu_plan_cost_copy(fu_plan_cost *out, const fu_plan_cost *c, as_status *st);

typedef struct fu_cost_options {
    map_search_options search;  /* how members are mapped on their tile problems */
    int64_t budget_per_problem; /* mappings per distinct tile problem (0: search default) */
    int onchip_level; /* the level that holds fused data; -1: the outermost on-chip level */
    /* Mapper results shared by the evaluators of many designs (the
     * hardware candidates of a co-design search): a tile problem mapped on
     * one design is reused by every later design whose architecture is the
     * same in everything but its name, with the same mapper options and
     * budget.  Pure memoisation.  NULL: the evaluator keeps its own. */
    map_cache *shared_mappings;
    /* The caller has passed the architecture through arch_validate (a
     * co-design candidate, checked when decoded): not checked again. */
    bool arch_validated;
    /* Weights resident on chip across inferences or streamed from DRAM
     * (mapping.h); default AUTO: resident when they fit. */
    map_weights weights;
    /* The mappings of members, from the caller instead of the mapper
     * (FADiff, src/diff, which optimises them itself): asked for compute
     * op `op` mapped on problem p (the whole layer when alone, its tile
     * problem in a fused group), it fills out->found and, when found,
     * out->mapping, out->eval (map_evaluate of the mapping on out->mapped,
     * on fu_evaluator_arch) and out->mapped (p, or p padded); false when it
     * cannot answer (the evaluation then fails).  Group costs are then not
     * cached: the mappings may change between calls.  NULL: the mapper's,
     * through the mapping cache. */
    bool (*member_mapping)(void *user, int32_t op, const wl_problem *p, map_problem_outcome *out);
    void *member_mapping_user;
} fu_cost_options;

void fu_cost_options_default(fu_cost_options *o);

/* An evaluator holds the graph, the architecture and caches (tile problems
 * mapped once, group costs by member set), so that searches evaluating
 * many plans pay for each group once. */
typedef struct fu_evaluator fu_evaluator;

as_code fu_evaluator_new(fu_evaluator **out, const wl_graph *g, const arch_spec *a,
                         const fu_cost_options *o, as_status *st);
void fu_evaluator_free(fu_evaluator *e);
const wl_graph *fu_evaluator_graph(const fu_evaluator *e);

/*
 * Raise the mapping budget per tile problem to budget_per_problem
 * (fu_cost_options' meaning; larger than the current one, at most
 * FU_MAX_MAP_LEVELS budgets in an evaluator's life).  Problems already
 * mapped are not searched again from scratch: their searches go on where
 * they stopped, when next asked for; the group costs are forgotten.  Not
 * while another thread evaluates on e.  Successive halving's "more
 * software budget for promising hardware", on the mapping side.
 */
#define FU_MAX_MAP_LEVELS 8
as_code fu_evaluator_raise_budget(fu_evaluator *e, int64_t budget_per_problem, as_status *st);

/* The cost of one group of ops (any order; the best tile and halo mode are
 * searched).  An invalid group is a result with a reason, not an error. */
as_code fu_group_evaluate(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_group_cost *out,
                          as_status *st);
/* The cost of a whole plan: sums over its groups. */
as_code fu_plan_evaluate(fu_evaluator *e, const fu_plan *p, fu_plan_cost *out, as_status *st);
/* The sums fu_plan_evaluate makes, for a caller that costs the groups
 * itself: add group gid's cost c to p (valid and zero at the start), then
 * derive the totals' ratios on a. */
void fu_plan_cost_add(fu_plan_cost *p, int32_t gid, const fu_group_cost *c);
void fu_plan_cost_finish(fu_plan_cost *p, const arch_spec *a);

/* -------------------------------------------- a group at a given tile (FADiff) */

/* The ops of the graph that do work (fu_op_in_plan) in topological order
 * into ops (room for g->n_ops); returns how many. */
int32_t fu_working_ops(const wl_graph *g, int32_t *ops);

/* The cost of a group at one tile shape (clamped to the anchor's output)
 * and halo mode, without searching them or caching the result.  A single
 * op costs as in fu_group_evaluate. */
as_code fu_group_evaluate_tile(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile tile,
                               fu_halo_mode halo, fu_group_cost *out, as_status *st);

/* The tile shape and halo mode the group of ops[0 .. n_ops) (any order,
 * plan members) runs at when it is not searched by mapping its members
 * (FADiff, which maps them itself): among the fitting shapes and modes
 * tiling.c counts, the least by its estimate with the compute cycles of
 * the tiles on the array (SCALE-Sim's folds: a small tile fills a
 * systolic array poorly, which the plain estimate does not see); the
 * estimate's first when none fits; *fits says whether it fits the
 * on-chip level.  Maps nothing.  A single op:
 * its whole output, FU_HALO_RECOMPUTE, fitting. */
as_code fu_group_pick_tile(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile *tile,
                           fu_halo_mode *halo, bool *fits, as_status *st);

/* What one member's share of a fused group's cost needs besides its
 * mapping (tiling.c, "Members"). */
typedef struct fu_member_terms {
    int32_t op;
    int32_t root;       /* member index of its fused op's root (itself when not an epilogue op) */
    bool compute;       /* mapped; otherwise the vector unit */
    wl_problem problem; /* compute: the tile problem it is mapped on */
    double work;        /* MACs (compute) or vector operations executed over the whole
                           group, recomputed halos included */
    double tile_macs;   /* compute: MACs of one run of problem */
    double vector_cycles, vector_energy_pJ; /* others: their cycles and energy */
} fu_member_terms;

/* A fused group at one tile and halo mode, all but its members' mappings:
 * its cost is, with E_i and C_i the on-chip energy and cycles of compute
 * member i's mapping on its problem (map_evaluate's without the DRAM
 * level's energy; cycles the largest of compute and non-DRAM levels):
 *   energy = sum_i E_i x work_i / tile_macs_i + vector energies
 *            + resident_energy_pJ + dram_energy_pJ
 *   member cycles c_i = ceil(C_i x work_i / tile_macs_i) (vector_cycles
 *            for the others); per root r: max(c_r, sum of its epilogue
 *            members' c); compute = the sum over roots
 *   cycles = max(compute, dram_cycles, resident_cycles)
 * (tiling.c's cost_tiling, which computes it from the same terms). */
typedef struct fu_group_terms {
    bool fits; /* the footprint fits the on-chip level */
    fu_tile tile;
    fu_halo_mode halo;
    int64_t n_tiles;
    int32_t n;
    fu_member_terms *m; /* malloc'd: fu_group_terms_free */
    int64_t dram_bytes, dram_cycles;
    double dram_energy_pJ;
    int64_t resident_cycles;
    double resident_energy_pJ;
} fu_group_terms;

/* The terms of the group of ops[0 .. n_ops) (plan members, two or more,
 * any order) at tile (clamped to the anchor's output) and halo mode. */
as_code fu_group_tile_terms(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile tile,
                            fu_halo_mode halo, fu_group_terms *out, as_status *st);
void fu_group_terms_free(fu_group_terms *t);

/* ------------------------------------------------------ layers' mappings */

/* The mapping one compute layer of a plan runs with, as the evaluator
 * costed it (mappings.c). */
typedef struct fu_layer_mapping {
    int32_t group;      /* its group in the plan (canonical index) */
    int32_t op;         /* graph op, a compute layer */
    int64_t n_tiles;    /* runs of the mapping per inference: its group's tiles (1 alone) */
    bool found;         /* a valid mapping was found; otherwise mapped, mapping, cycles and
                           energy are zero (the plan is then not valid) */
    wl_problem problem; /* what it was mapped on: the whole layer alone, its largest tile
                           in a fused group */
    wl_problem mapped;  /* problem, padded when the mapper chose padding */
    map_mapping mapping;
    int64_t cycles;   /* map_evaluate of mapping on mapped, on the evaluator's
                         architecture (fu_evaluator_arch): one run */
    double energy_pJ; /*   and its energy (DRAM level included) */
} fu_layer_mapping;

/* The mapping of every compute layer of plan p -- the members of each
 * group in group order, topological within a group -- into *out
 * (malloc'd, caller frees; *n of them).  cost is p's cost on e (from
 * fu_plan_evaluate or a search's best), whose tile shapes name the tile
 * problems; layers of an invalid group are listed without a mapping.
 * Mappings come from e's mapping cache (searched when absent). */
as_code fu_plan_mappings(fu_evaluator *e, const fu_plan *p, const fu_plan_cost *cost,
                         fu_layer_mapping **out, int32_t *n, as_status *st);
/* A plan as the JSON object reports draw and the run store keeps
 * (plan_json.c shows its members): p costed c on e, as
 *   {"weights": "resident"|"streamed", "totals": {...}, "components":
 *    [energy part names], "groups": [...], "layers": [...]}
 * with each group's cost split into the components' parts and each
 * compute layer's mapping as text (fu_plan_mappings).  NULL on failure
 * (out of memory, a mapping search that failed), st says which. */
json_t *fu_plan_json(fu_evaluator *e, const fu_plan *p, const fu_plan_cost *c, as_status *st);
/* A plan's totals: cycles, latency_s, energy_pJ, edp_J_cycle, dram_bytes,
 * macs, recomputed_macs, utilization and energy_by_component_pJ (the
 * parts of map_energy_parts on a); NULL when out of memory. */
json_t *fu_plan_totals_json(const arch_spec *a, const fu_plan_cost *c);
/* "recompute", "cache_rows", "cache_all". */
const char *fu_halo_name(fu_halo_mode h);
/* The architecture e's mapper maps on (group.c): its design under the
 * weights' residency (mapping.h, map_residency_arch), where a layer's
 * mapping evaluates to its fu_layer_mapping's cycles and energy. */
const arch_spec *fu_evaluator_arch(const fu_evaluator *e);
/* Where e's weights live (decided at creation, mapping.h). */
const map_residency *fu_evaluator_residency(const fu_evaluator *e);

/* --------------------------------------------------------------- searches */

typedef enum fu_algorithm {
    FU_ALGO_NONE, /* layer by layer */
    FU_ALGO_GA,   /* CASCO's genetic search */
    FU_ALGO_DP,   /* Optimus's dynamic programming, exact where tractable */
    FU_ALGO_ILP,  /* FAST's tensor pinning in global memory, with CBC */
} fu_algorithm;

typedef enum fu_objective {
    FU_OBJ_CASCO, /* (off-chip energy + on-chip energy) x cycles */
    FU_OBJ_EDP,
    FU_OBJ_ENERGY,
    FU_OBJ_CYCLES,
} fu_objective;

typedef struct fu_search_options {
    fu_algorithm algorithm;
    fu_objective objective;
    uint64_t seed;
    int threads;
    int64_t budget;            /* plan evaluations (GA); 0 = the algorithm's default */
    int population;            /* GA */
    double time_limit_seconds; /* ILP: CBC's limit, then the best incumbent */
    /* ILP: CBC's branch-and-bound node limit (0: none), then the best
     * incumbent.  Unlike the time limit it does not depend on the
     * machine's load: a co-design search, which must give the same result
     * for a seed, bounds its solves by nodes only. */
    int64_t max_nodes;
} fu_search_options;

void fu_search_options_default(fu_search_options *o);

typedef struct fu_search fu_search;

as_code fu_search_init(fu_search **out, fu_evaluator *e, const fu_search_options *o, as_status *st);
/* Evaluate up to budget more plans; false once the search has ended. */
bool fu_search_step(fu_search *s, int64_t budget);
/* Score the search's plans again after its evaluator's budget was raised
 * (fu_evaluator_raise_budget): the incumbent, and the GA's population,
 * whose best becomes the incumbent when better.  Not counted as plan
 * evaluations. */
as_code fu_search_rescore(fu_search *s, as_status *st);
/* The best plan so far and its cost (both owned by the caller: free them). */
as_code fu_search_best(const fu_search *s, fu_plan *plan, fu_plan_cost *cost, as_status *st);
int64_t fu_search_evaluated(const fu_search *s);
const double *fu_search_curve(const fu_search *s, int *n_points);
void fu_search_free(fu_search *s);

#endif
