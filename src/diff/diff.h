/*
 * diff.h -- FADiff (seed 002): mapping optimised by gradient descent on a
 * differentiable relaxation of the cost model, rounded back to a valid
 * mapping that the exact model (map_evaluate) then scores.
 *
 * Three layers, bottom up:
 *
 *  1. A tape (tape.c): reverse-mode automatic differentiation of scalar
 *     programs.  Each operation records its value and the partial
 *     derivatives with respect to its (at most two) operands when it is
 *     recorded, so that the backward sweep is one pass of multiply-adds.
 *     Gradients are therefore those of the program as written -- no hand-
 *     derived formulas -- and are checked against central finite
 *     differences in tests/test_diff.c.
 *
 *  2. The relaxed cost of one mapping (relax.c): map_evaluate's
 *     computation (the nest analysis of nest.c, the collapse to levels,
 *     the buffer, energy and cycle models of eval.c, the systolic fold
 *     model of array.c and systolic.c) written on tape values, so that
 *     every tiling factor may be any real >= 1.  The tape's temperature
 *     chooses how its non-smooth operations behave:
 *       0   the discrete corners: ceil, floor, round and max are exact
 *           (their derivative taken as 1, or as the selected operand's),
 *           and at integer factors the relaxed cycles and energy equal
 *           map_evaluate's (tested to 1e-9 relative);
 *       > 0 smooth: max(a, b) of positive values is the p-norm with
 *           p = 1 / temperature (a log-sum-exp of the logarithms),
 *           max(x, 0) a softplus, ceil(x) = max(x, 1) in that p-norm
 *           (the argument plus a bounded correction: a count of folds or
 *           accesses is at least one; tape.c says why not more),
 *           floor(x) = round(x) = x.
 *     Discrete decisions inside the model (which loops exist: factor > 1;
 *     which tile translations coincide; which level is slower than its
 *     bandwidth) are taken from the values themselves, so the relaxation
 *     is smooth between coincidences and exact at the corners.
 *
 *  3. The optimiser (optim.c): log-space factors per level and dimension
 *     (the outermost temporal factor is the residual, so that factors
 *     always multiply to the bounds), loop orders per level as Gumbel-
 *     softmax distributions over candidate permutations, penalties for
 *     capacity, fanout and fractional factors that tighten with a
 *     schedule, Adam with restarts from random initialisations,
 *     temperature annealing, then rounding to the nearest valid mapping.
 *     Anytime (init / step / best / curve) and deterministic for a seed
 *     whatever the thread count.
 */
#ifndef AS_DIFF_H
#define AS_DIFF_H

#include "../arch/arch.h"
#include "../core/core.h"
#include "../fusion/fusion.h"
#include "../mapping/mapping.h"
#include "../workload/workload.h"

/* ------------------------------------------------------------------ tape */

/* A value on a tape: the index of the node that computed it. */
typedef int32_t df_var;

typedef struct df_node {
    double value;
    int32_t a, b;  /* operands (-1: none) */
    double da, db; /* d value / d operand, recorded with the value */
} df_node;

typedef struct df_tape {
    int32_t n, capacity;
    df_node *node;
    double *adjoint;    /* after df_backward: d output / d node */
    double temperature; /* 0: exact corners; > 0: smooth (see the top) */
    bool full;          /* an operation found no room: the program's values are
                           not to be trusted; grow (df_tape_reserve) and rerun */
} df_tape;

/* A tape with room for `capacity` nodes (grows only on request). */
as_code df_tape_init(df_tape *t, int32_t capacity, as_status *st);
void df_tape_free(df_tape *t);
/* Forget every node (keeps the room). */
void df_tape_reset(df_tape *t);
/* Room for at least `capacity` nodes; the tape is reset. */
as_code df_tape_reserve(df_tape *t, int32_t capacity, as_status *st);

/* A constant or an input (a leaf: its adjoint is the gradient). */
df_var df_const(df_tape *t, double value);
static inline double df_value(const df_tape *t, df_var v)
{
    return t->node[v].value;
}

df_var df_add(df_tape *t, df_var a, df_var b);
df_var df_sub(df_tape *t, df_var a, df_var b);
df_var df_mul(df_tape *t, df_var a, df_var b);
df_var df_div(df_tape *t, df_var a, df_var b);
df_var df_add_c(df_tape *t, df_var a, double c);
df_var df_mul_c(df_tape *t, df_var a, double c);
df_var df_neg(df_tape *t, df_var a);
df_var df_exp(df_tape *t, df_var a);
df_var df_log(df_tape *t, df_var a);
df_var df_sq(df_tape *t, df_var a);
/* |a| (derivative sign(a), 0 at 0). */
df_var df_abs(df_tape *t, df_var a);
/* max / min of two positive values: exact at temperature 0, the p-norm
 * (p = +-1 / temperature) above it. */
df_var df_max(df_tape *t, df_var a, df_var b);
df_var df_min(df_tape *t, df_var a, df_var b);
/* max(a, 0): exact at temperature 0, else softplus with its knee `scale`
 * x temperature wide (scale: the size of a's typical values). */
df_var df_relu(df_tape *t, df_var a, double scale);
/* ceil, floor and round: exact with unit slope at temperature 0, else the
 * smooth forms of the top of this file. */
df_var df_ceil(df_tape *t, df_var a);
df_var df_floor(df_tape *t, df_var a);
df_var df_round(df_tape *t, df_var a);

/* Adjoints of every node with respect to `output` into t->adjoint. */
void df_backward(df_tape *t, df_var output);

/* ----------------------------------------------------- relaxed mapping cost */

/* The tiling factors of one mapping as tape values (any reals >= 1). */
typedef struct df_factors {
    df_var temporal[ARCH_MAX_LEVELS][WL_NDIMS];
    df_var spatial[ARCH_MAX_LEVELS][WL_NDIMS];
} df_factors;

/* What the relaxed model gives for one mapping. */
typedef struct df_cost {
    bool supported; /* false: the mapping's shape is beyond the relaxation (why says) */
    char why[160];
    df_var cycles, energy_pJ, edp; /* edp in J x cycles, as map_eval.edp_J_cycle */
    /* Their parts, as map_eval names them: */
    df_var compute_cycles, mac_energy_pJ;
    df_var array_energy_pJ; /* systolic: the network below level 0, all data spaces */
    df_var level_cycles[ARCH_MAX_LEVELS];
    df_var level_energy_pJ[ARCH_MAX_LEVELS];              /* accesses and leakage */
    df_var ds_energy_pJ[ARCH_MAX_LEVELS][WL_NDATASPACES]; /* accesses, per data space */
    df_var reads[ARCH_MAX_LEVELS][WL_NDATASPACES], fills[ARCH_MAX_LEVELS][WL_NDATASPACES],
        updates[ARCH_MAX_LEVELS][WL_NDATASPACES], tile_words[ARCH_MAX_LEVELS][WL_NDATASPACES];
    /* Per level, the words kept tiles exceed the room by (<= 0: they fit),
     * per data space when the level splits its capacity; and the spatial
     * factors on X and Y over the fanout (<= 1: they fit). */
    df_var capacity_excess[ARCH_MAX_LEVELS][WL_NDATASPACES + 1];
    df_var fanout_ratio[ARCH_MAX_LEVELS][2];
    bool capacity_bounded[ARCH_MAX_LEVELS][WL_NDATASPACES + 1];
} df_cost;

/*
 * The relaxed cost of the mapping whose discrete parts (loop orders,
 * spatial splits, keeps, group packing) are skeleton's and whose factors
 * are f, for problem p on architecture a (relax.c; the top of this file
 * says how it relaxes map_evaluate).  skeleton must be well formed (levels
 * of a, permutations); its factors are not read.  Allocates nothing; on a
 * full tape the values are garbage and t->full says so.
 */
void df_relaxed_cost(df_tape *t, const arch_spec *a, const wl_problem *p,
                     const map_mapping *skeleton, const df_factors *f, df_cost *out);

/* f := the factors of m as constants (the corner at m). */
void df_factors_of_mapping(df_tape *t, const map_mapping *m, df_factors *f);

/* ------------------------------------------------------------ optimiser */

typedef struct df_options {
    uint64_t seed;
    int threads;               /* descents run in parallel; 0: OpenMP's default */
    int descents_per_step;     /* descents one step runs when its budget allows (default 8) */
    int adam_steps;            /* Adam steps per descent (default 150) */
    double learning_rate;      /* Adam's, in log-factor units (default 0.15) */
    double time_limit_seconds; /* 0: none (a budget bounds the search) */
    int max_group_ops;         /* joint search: working ops per fused group at most (default 4) */
    volatile int *stop_flag;   /* polled between descents; set: stop, keep the best */
} df_options;

void df_options_default(df_options *o);

/*
 * FADiff's search of one problem's mappings, anytime like the mapper's:
 * each descent starts from a random point, runs Adam on the relaxed loss
 * (log EDP plus penalties) while the temperature falls and the penalties
 * tighten, rounds to the nearest valid mapping and scores it with
 * map_evaluate; the best scored mapping is the result.  Descent k draws
 * from stream (seed, k), so the result for a seed and a number of
 * descents does not depend on the thread count.
 */
typedef struct df_map_search df_map_search;

as_code df_map_search_init(df_map_search **out, const arch_spec *a, const wl_problem *p,
                           const df_options *o, as_status *st);
/* Run up to `descents` more descents; false once the search has ended
 * (time limit or stop flag). */
bool df_map_search_step(df_map_search *s, int64_t descents);
/* The best valid mapping so far and its evaluation; false when none. */
bool df_map_search_best(const df_map_search *s, map_mapping *mapping, map_eval *eval);
int64_t df_map_search_descents(const df_map_search *s);
/* The best-so-far curve: n_points pairs (seconds since init, EDP in J x
 * cycles), one per improvement. */
const double *df_map_search_curve(const df_map_search *s, int *n_points);
void df_map_search_free(df_map_search *s);

/* FADiff as map_network_options.problem_search (mapping.h): user is a
 * const df_options *; budget is descents (0: df_options' descents per
 * step, or until its time limit when it has one); threads overrides the
 * options' (the network maps several problems at once).  The outcome's
 * evaluated counts descents. */
void df_problem_search(void *user, const arch_spec *a, const wl_problem *p, int threads,
                       int64_t budget, volatile int *stop_flag, map_problem_outcome *out);

/* ------------------------------- relaxed network cost with fusion (network.c) */

/*
 * FADiff's cost of a whole network: every layer's mapping and the fusion
 * of adjacent working ops together (network.c states the model).  A
 * fusion variable phi_v in [0, 1] per pair of consecutive working ops
 * that some candidate group holds (the probability that they run in one
 * group); expected energy and cycles over the plans the phi draw, each
 * group at the tile fu_group_pick_tile chooses, its members' mappings
 * priced by the caller's relaxed mapping costs; at phi in {0, 1} they
 * equal df_net_exact_cost's plan cost (the fusion evaluator's, with its
 * member_mapping hook giving the same mappings).
 */
typedef struct df_net df_net;

/* The network of e's graph, candidate groups of at most max_group_ops
 * working ops; everything that no mapping changes is computed here, once.
 * e (borrowed, outliving the network) is the evaluator df_net_exact_cost
 * costs plans with: give it a member_mapping hook (fusion.h) answering
 * with the caller's current mappings. */
as_code df_net_init(df_net **out, fu_evaluator *e, int max_group_ops, as_status *st);
void df_net_free(df_net *net);

/* The fusion variables: how many, and the graph ops of variable v's pair. */
int32_t df_net_n_vars(const df_net *net);
void df_net_var_ops(const df_net *net, int32_t v, int32_t *op_before, int32_t *op_after);

/* The distinct (op, problem) pairs whose mappings the network's costs
 * need: each compute working op's whole problem (alone) and its tile
 * problems (in fused candidates).  The caller keeps mapping variables per
 * pair; df_net_find_problem finds a pair's index (for the evaluator's
 * hook), -1 when none. */
typedef struct df_net_problem {
    int32_t op;
    wl_problem problem;
} df_net_problem;
int32_t df_net_n_problems(const df_net *net);
const df_net_problem *df_net_problem_at(const df_net *net, int32_t k);
int32_t df_net_find_problem(const df_net *net, int32_t op, const wl_problem *p);

/* The relaxed cost of pair k's current mapping on its problem p (usually
 * df_relaxed_cost on fu_evaluator_arch's architecture) into *out; false
 * when it cannot be priced. */
typedef bool (*df_net_mapping_cost)(void *user, df_tape *t, int32_t k, int32_t op,
                                    const wl_problem *p, df_cost *out);

typedef struct df_net_cost {
    bool supported; /* false: a mapping could not be priced (why says) */
    char why[160];
    df_var energy_pJ, cycles; /* expected over the plans phi draw */
    df_var infeasible;        /* expected number of working ops whose group is not a candidate
                                 (0 at corners of candidate groups only) */
} df_net_cost;

/* The relaxed network cost at fusion probabilities phi[df_net_n_vars]
 * (tape values in [0, 1]), asking cost once per problem pair (in index
 * order).  Allocates nothing (the network holds the room: one network per
 * thread evaluating at once). */
void df_net_relaxed_cost(df_net *net, df_tape *t, const df_var *phi, df_net_mapping_cost cost,
                         void *user, df_net_cost *out);
/* Pair k's relaxed mapping cost as the last df_net_relaxed_cost asked it
 * (its capacity and fanout terms, for penalties). */
const df_cost *df_net_pair_cost(const df_net *net, int32_t k);

/* The 0/1 assignment nearest phi whose groups are all candidates:
 * variables fused when phi >= 1/2, left to right, a pair left unfused
 * when fusing it would make a group that is not a candidate. */
void df_net_round(const df_net *net, const double *phi, bool *fused);
/* The plan of a 0/1 assignment (its maximal fused runs as groups). */
as_code df_net_plan(const df_net *net, const bool *fused, fu_plan *out, as_status *st);
/* The exact cost of that plan: each group on the network's evaluator at
 * its picked tile (fu_group_evaluate_tile; a single op
 * fu_group_evaluate), the mappings from the evaluator's member_mapping
 * hook.  Not valid (reason says) when a group is not a candidate or a
 * member has no mapping. */
as_code df_net_exact_cost(df_net *net, const bool *fused, fu_plan_cost *out, as_status *st);

/* ----------------------------- the joint search of mappings and fusion (joint.c) */

/*
 * FADiff's joint search of a network's mappings and fusion (joint.c
 * states the loss): every layer's mapping, alone and as a fused tile, and
 * the fusion of consecutive working ops, descended together on df_net's
 * relaxed cost, rounded, and priced exactly by a fusion evaluator of g on
 * a with cost options co (its member mappings are the search's).
 * Anytime and seeded like df_map_search: descent k draws from stream
 * (seed, k); with a time limit or stop flag a descent ends early and
 * keeps its rounding.  g and a outlive the search.
 */
typedef struct df_fuse_search df_fuse_search;

as_code df_fuse_search_init(df_fuse_search **out, const wl_graph *g, const arch_spec *a,
                            const fu_cost_options *co, const df_options *o, as_status *st);
/* Run up to `descents` more descents; false once the search has ended. */
bool df_fuse_search_step(df_fuse_search *s, int64_t descents);
/* The best valid plan so far and its exact cost (the caller frees both);
 * AS_EINVAL when none was found. */
as_code df_fuse_search_best(const df_fuse_search *s, fu_plan *plan, fu_plan_cost *cost,
                            as_status *st);
int64_t df_fuse_search_descents(const df_fuse_search *s);
/* The best-so-far curve: n_points pairs (seconds since init, EDP in J x
 * cycles). */
const double *df_fuse_search_curve(const df_fuse_search *s, int *n_points);
void df_fuse_search_free(df_fuse_search *s);

#endif
