/*
 * fusion_private.h -- what the fusion module's files share and tests may
 * reach, but the public API does not promise.
 */
#ifndef AS_FUSION_PRIVATE_H
#define AS_FUSION_PRIVATE_H

#include "fusion.h"

#include <omp.h>

/* ------------------------------------ searches (search.c, ga.c, dp.c) */

/*
 * Every objective is a function of two coordinates that add up over the
 * groups of a plan: x (energy in J: on-chip + off-chip for CASCO, the
 * whole energy otherwise; 0 for FU_OBJ_CYCLES) and y (cycles; 0 for
 * FU_OBJ_ENERGY).  The value is x * y for the products (CASCO, EDP) and
 * x + y for the others.  Plan and group costs carry the same four totals,
 * hence the loose arguments.
 */
typedef struct fu_coords {
    double x, y;
} fu_coords;

fu_coords fu_objective_coords(fu_objective obj, double energy_pJ, double onchip_energy_pJ,
                              double dram_energy_pJ, int64_t cycles);
double fu_objective_of(fu_objective obj, fu_coords c);

/* The value of plan p (+inf when its cost is not valid) and its cost
 * into *cost (the caller owns it; zeroed first); thread-safe when the
 * evaluator is. */
as_code fu_plan_value(fu_evaluator *e, fu_objective obj, const fu_plan *p, double *value,
                      fu_plan_cost *cost, as_status *st);

/* The best plan an algorithm has shown the search so far, with the cost
 * it was scored by (so that nobody evaluates it again). */
typedef struct fu_incumbent {
    int64_t evaluated; /* plans scored (GA, ILP); candidate groups scored (DP) */
    bool found;
    double value;
    fu_plan plan;
    fu_plan_cost cost;
} fu_incumbent;

/* Keep a copy of p, and *cost (p's, from fu_plan_value), when its value
 * beats the incumbent's (ties keep the earlier plan, so results follow
 * the order of offers).  *cost is taken over either way: kept, or freed. */
as_code fu_incumbent_offer(fu_incumbent *inc, const fu_plan *p, double value, fu_plan_cost *cost,
                           as_status *st);

/*
 * An algorithm is a state behind three functions; search.c dispatches on
 * fu_search_options.algorithm.  step spends up to `budget` evaluations,
 * counting them in inc->evaluated and offering the plans it finds, and
 * returns false once the algorithm has ended (with st set when an error
 * ended it).
 */
as_code fu_ga_new(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st);
bool fu_ga_step(void *state, fu_incumbent *inc, int64_t budget, as_status *st);
void fu_ga_free(void *state);
as_code fu_ga_rescore(void *state, fu_incumbent *inc, as_status *st);

/* The GA's operators on g alone (no evaluator), for tests, drawing from
 * seed: a random valid plan; a child of plans a and b (crossover, repair,
 * one mutation); one mutation of p, kept when valid (*changed says). */
typedef enum fu_mutation {
    FU_MUTATE_MERGE,
    FU_MUTATE_SPLIT,
    FU_MUTATE_STEAL,
    FU_N_MUTATIONS
} fu_mutation;
as_code fu_ga_random_plan(const wl_graph *g, uint64_t seed, fu_plan *out, as_status *st);
as_code fu_ga_child(const wl_graph *g, const fu_plan *a, const fu_plan *b, uint64_t seed,
                    fu_plan *out, as_status *st);
as_code fu_ga_mutate(const wl_graph *g, fu_plan *p, fu_mutation kind, uint64_t seed, bool *changed,
                     as_status *st);

as_code fu_dp_new(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st);
bool fu_dp_step(void *state, fu_incumbent *inc, int64_t budget, as_status *st);
void fu_dp_free(void *state);

/* The plan of FAST's tensor pinning for e's graph (ilp.c, below); the
 * search scores it like any other. */
as_code fu_ilp_solve(fu_evaluator *e, const fu_search_options *o, fu_plan *out, as_status *st);

/* ------------------------------------------- plans and group costs */

/* The tensor a chain of views (live, unfolded Reshape, Identity, ...)
 * starting at tensor t shows: their data inputs followed back (plan.c).
 * Data edges between working ops are taken through views. */
int32_t fu_through_views(const wl_graph *g, int32_t t);

/* The members of every group of p (group ids in range), group by group,
 * each in topological order: group gid's are members[start[gid] ..
 * start[gid + 1]).  start has n_groups + 1 entries, members g->n_ops. */
void fu_plan_members(const wl_graph *g, const fu_plan *p, int32_t *start, int32_t *members);

/* ---------------------------- group costing (group.c, region.c, tiling.c) */

/* The evaluator: a graph and a design, with the mapping cache and the
 * group costs already known.  Searches share it across threads. */
struct fu_evaluator {
    const wl_graph *g;
    arch_spec a;
    fu_cost_options o;
    int onchip;            /* level holding fused data, -1: none */
    int dram;              /* the DRAM backing level, -1: none */
    map_residency weights; /* where the weights live (mapping.h); a is the mapper's view */
    /* The mapping budgets the evaluator has been raised through (first
     * at creation, current last): a problem's outcome at level l is its
     * search stepped to budget[0], then on to budget[1], ... budget[l]
     * (mapping.h's resumable searches), cached under key[l]. */
    int n_levels;
    int64_t budget[FU_MAX_MAP_LEVELS];           /* mappings per problem */
    map_layer_key design_key[FU_MAX_MAP_LEVELS]; /* design halves of the cache keys */
    map_cache *mappings;                         /* o.shared_mappings, or the evaluator's own */
    bool owns_mappings;
    as_table groups; /* group_entry */
    omp_lock_t lock; /* guards the groups */
    bool lock_ready;
};

/* The mapper's outcome for problem p on e's design, from the mapping
 * cache or searched (and cached); the pointer stays valid for e's life. */
as_code fu_mapped_problem(fu_evaluator *e, const wl_problem *p, const map_problem_outcome **out,
                          as_status *st);
/* The mapping member op runs with on problem p: the hook's
 * (fu_cost_options.member_mapping, answered into *scratch) when set, else
 * fu_mapped_problem's. */
as_code fu_member_outcome(fu_evaluator *e, int32_t op, const wl_problem *p,
                          map_problem_outcome *scratch, const map_problem_outcome **out,
                          as_status *st);
/* Bytes that `words` words of word_bits bits take (8 bits when the level
 * gives none), rounded up. */
int64_t fu_bytes_of_words(double words, int word_bits);

/* A half-open interval of positions along one axis. */
typedef struct fu_span {
    int64_t lo, hi; /* [lo, hi); empty when hi <= lo */
} fu_span;

/* A tensor the group touches (views seen through). */
typedef struct fu_gtensor {
    int32_t t;
    int32_t producer;     /* member index, -1: read from outside */
    bool leaves;          /* read outside the group or a graph output */
    bool read_inside;     /* read by a member */
    int64_t extent[2];    /* rows, cols */
    int64_t per_position; /* elements per (row, col) position */
    fu_span cur[2];       /* the current tile's region, per axis */
    /* Per axis over the tiles: */
    int64_t sum[2], uni[2], max_len[2], overlap[2], reach[2];
} fu_gtensor;

/* One member. */
typedef struct fu_member {
    int32_t op;
    int32_t out;       /* index in t[] of output 0 */
    int32_t *in;       /* index in t[] per input, -1: none or a weight */
    bool *in_reshaped; /* read through a view that changes the shape */
    bool compute;
    wl_problem problem;             /* compute: the whole layer's */
    int64_t macs;                   /* compute: useful MACs; others: vector work */
    int32_t root;                   /* member index of its fused op's root (itself when not an
                                       epilogue op: wl_fuse_epilogues) */
    double cycles, epilogue_cycles; /* scratch of tiling.c's cost_tiling */
} fu_member;

/* A group being costed: its members in topological order (the last is
 * the anchor) and the tensors they touch. */
typedef struct fu_group {
    fu_evaluator *e;
    int32_t n;
    fu_member *m;
    int32_t n_t;
    fu_gtensor *t;
    int32_t *in_pool;    /* storage of the members' in[] */
    bool *reshaped_pool; /* and in_reshaped[] */
    int32_t n_w;         /* weight tensors (each once) */
    int32_t *w;
    int64_t weight_words, weight_bytes;
} fu_group;

/* The group of ops[0 .. n) (topological order) on e: members, tensors,
 * weights (region.c); fu_group_free releases it. */
as_code fu_group_init(fu_group *gr, fu_evaluator *e, const int32_t *ops, int32_t n, as_status *st);
void fu_group_free(fu_group *gr);
/* Walk the tiles of `size` along axis `which` (0 rows, 1 cols) of the
 * anchor's output, accumulating every tensor's per-axis sums, unions,
 * largest regions and overlaps (region.c). */
void fu_walk_axis(fu_group *gr, int which, int64_t size);
/* The anchor extents of op o's output as one tile (rows, cols). */
void fu_output_extents(const wl_graph *g, int32_t o, fu_tile *tile);

/* The tile problem compute member m is mapped on, for the tile shape last
 * walked (fu_walk_axis on both axes): its output's largest region
 * (tiling.c). */
wl_problem fu_tile_problem(const fu_group *gr, const fu_member *m);

/* The fused cost of ops[0 .. n) (topological order, two or more) over
 * every tile shape and halo mode, or only tile *only in mode only_halo
 * (tiling.c). */
as_code fu_fused_cost(fu_evaluator *e, const int32_t *ops, int32_t n, const fu_tile *only,
                      fu_halo_mode only_halo, fu_group_cost *best, as_status *st);
/* fu_group_pick_tile and fu_group_tile_terms for the ops of a fused group
 * (topological order, epilogue ops included, two or more) (tiling.c). */
as_code fu_fused_pick_tile(fu_evaluator *e, const int32_t *ops, int32_t n, fu_tile *tile,
                           fu_halo_mode *halo, bool *fits, as_status *st);
as_code fu_fused_terms(fu_evaluator *e, const int32_t *ops, int32_t n, fu_tile tile,
                       fu_halo_mode halo, fu_group_terms *out, as_status *st);

/* ------------------------------------------------ FAST's ILP (ilp.c) */

/* The evaluator's cost options (group.c; its architecture: fusion.h): the
 * ILP maps layers with the same mapper settings and pins into the same
 * level. */
const fu_cost_options *fu_evaluator_cost_options(const fu_evaluator *e);

/*
 * FAST's tensor-pinning problem in its own terms, so that tests can build
 * instances by hand.  Layers run one after another in a fixed order
 * (positions 0 .. n_layers-1).  An item is a tensor that may be pinned in
 * global memory: while pinned it occupies `words` from layer `first` to
 * layer `last` (inclusive), and it saves DRAM time at the layers its
 * savings name.  Layer i takes max(compute_cycles[i], dram_cycles[i] -
 * savings of its pinned items); a pinning fits when at every layer the
 * pinned items live there need at most max(0, capacity_words -
 * reserved_words[i]).  The ILP minimises the sum of layer times.
 */
typedef struct fu_ilp_item {
    int32_t tensor;      /* graph tensor (-1 in hand-built instances) */
    bool is_weight;      /* weights stay for the whole run; activations join layers */
    int64_t words;       /* footprint in global memory */
    int32_t first, last; /* layer positions it occupies when pinned */
} fu_ilp_item;

typedef struct fu_ilp_saving {
    int32_t item, layer;
    double dram_cycles; /* DRAM time layer no longer spends when item is pinned */
} fu_ilp_saving;

typedef struct fu_ilp_instance {
    int32_t n_layers;
    int32_t *op;             /* graph op of each layer (-1 by hand) */
    double *compute_cycles;  /* FAST's T_min: every operand on chip */
    double *dram_cycles;     /* DRAM time with nothing pinned */
    int64_t *reserved_words; /* FAST's B_i: global memory the layer streams through */
    int64_t capacity_words;  /* of global memory */
    int32_t n_items, max_items;
    fu_ilp_item *items;
    int32_t n_savings, max_savings;
    fu_ilp_saving *savings;
    as_arena arena; /* owns every array */
} fu_ilp_instance;

/* n_layers zeroed layers, room for max_items items and max_savings
 * savings (none yet), capacity 0. */
as_code fu_ilp_instance_init(fu_ilp_instance *inst, int32_t n_layers, int32_t max_items,
                             int32_t max_savings, as_status *st);
void fu_ilp_instance_free(fu_ilp_instance *inst);
/* FAST's instance of g on a: layers and on-chip times from the mapper
 * (o->search, o->budget_per_problem), tensors at their precision over
 * the DRAM bandwidth, global memory = level o->onchip_level (ilp.c
 * states the model). */
as_code fu_ilp_instance_from_graph(fu_ilp_instance *inst, const wl_graph *g, const arch_spec *a,
                                   const fu_cost_options *o, as_status *st);

/* What a solve found, for reports. */
typedef struct fu_ilp_report {
    double objective_cycles; /* FAST's objective: sum of layer times of the pinning chosen */
    double unpinned_cycles;  /* the same with nothing pinned */
    double bound_cycles;     /* CBC's lower bound on the optimum */
    bool optimal;            /* proven optimal */
    bool time_limit_reached; /* stopped by the limit: the best incumbent was used */
    int32_t n_pinned_weights, n_pinned_activations;
    int64_t pinned_words; /* sum over pinned items */
} fu_ilp_report;

/* Solve inst with CBC (silent; time_limit_seconds <= 0: no time limit,
 * max_nodes <= 0: no node limit) into pinned[n_items]. */
as_code fu_ilp_instance_solve(const fu_ilp_instance *inst, double time_limit_seconds,
                              int64_t max_nodes, bool *pinned, fu_ilp_report *report,
                              as_status *st);
/* The objective of any pinning (fitting or not). */
double fu_ilp_objective(const fu_ilp_instance *inst, const bool *pinned);
/* The plan of a pinning of an instance built from g: layers joined by a
 * pinned activation form one group. */
as_code fu_ilp_plan(const fu_ilp_instance *inst, const wl_graph *g, const bool *pinned,
                    fu_plan *out, as_status *st);
/* fu_ilp_solve, also filling report (may be NULL). */
as_code fu_ilp_solve_report(fu_evaluator *e, const fu_search_options *o, fu_plan *out,
                            fu_ilp_report *report, as_status *st);

#endif
