/*
 * network_private.h -- the pieces of network.c's layer-by-layer model that
 * the fusion module reuses, so that a fused plan of singleton groups costs
 * exactly what map_network_evaluate charges (network.c states the model).
 * Not part of the public API.
 */
#ifndef AS_NETWORK_PRIVATE_H
#define AS_NETWORK_PRIVATE_H

#include "mapping.h"

/* An op that does work at run time: live, unfolded, not a view, shape
 * arithmetic or an unknown op type. */
bool map_op_is_layer(const wl_op *op);
/* A layer the mapper maps (Conv, ConvTranspose, Gemm, MatMul). */
bool map_op_is_compute(const wl_op *op);

/*
 * What makes two problems the same for the mapper, laid out without
 * padding bytes (every field 8 bytes wide) and built on a zeroed struct,
 * so that memcmp and a byte hash are exact.  Pads, the op and the tensors
 * behind the data spaces are left out: they do not change a mapping.
 */
typedef struct map_problem_key {
    int64_t kind;
    int64_t bound[WL_NDIMS];
    int64_t stride[2], dilation[2];
    struct {
        int64_t n_ranks, read_write, bits;
        double density;
        int64_t term[WL_MAX_DS_RANKS][2][2]; /* (dim, coef); zero when absent */
    } ds[WL_NDATASPACES];
} map_problem_key;

void map_problem_key_of(const wl_problem *p, map_problem_key *k);

/* What the search of one problem found. */
typedef struct map_problem_outcome {
    as_code code; /* the search could not start: status says why */
    as_status status;
    bool searched; /* ran to its end or budget (not interrupted) */
    bool found;    /* a valid mapping exists: mapping, eval, mapped */
    map_mapping mapping;
    map_eval eval;
    wl_problem mapped; /* the problem mapped, padded when padding was chosen */
    int64_t evaluated;
} map_problem_outcome;

/* Evaluations per problem for a caller's budget_per_problem (0: the
 * search's own termination, bounded for a random search without one). */
int64_t map_effective_budget(const map_search_options *s, int64_t budget_per_problem);

/* Search problem p as map_network_evaluate does (steps, budget extended
 * while nothing valid is found, stop flag polled; stop_flag may be NULL)
 * with `threads` threads. */
void map_problem_search_run(const arch_spec *a, const wl_problem *p, const map_search_options *o,
                            int threads, int64_t budget, volatile int *stop_flag,
                            map_problem_outcome *out);

/* Energies, cycles and DRAM traffic of compute layer r (r->op set,
 * r->problem its own problem on entry) from its search's outcome. */
void map_cost_compute_layer(const wl_graph *g, const arch_spec *a, const map_problem_outcome *c,
                            map_layer_result *r);
/* Bytes compute layer `op` (its own problem `own`) moves across the DRAM
 * interface besides its mapping's traffic: the inputs the loop nest does
 * not model when the backing store is DRAM, else all its inputs, weights
 * and outputs (see "Compute layers" in network.c). */
int64_t map_outside_dram_bytes(const wl_graph *g, const arch_spec *a, int32_t op,
                               const wl_problem *own);
/* The graph-free part of map_cost_compute_layer: energies by component,
 * cycles and DRAM bytes of a layer whose mapping evaluated to e, with the
 * data spaces at own's precisions in DRAM and outside_dram_bytes more (r's
 * cost fields zero on entry).  timeloop_io.c costs an emitted layer with it. */
void map_cost_mapped_layer(const arch_spec *a, const map_eval *e, const wl_problem *own,
                           int64_t outside_dram_bytes, map_layer_result *r);
/* The vector-unit and DRAM model of non-compute layer r (r->op set). */
void map_cost_vector_layer(const wl_graph *g, const arch_spec *a, map_layer_result *r);
/* Per-layer energy total and utilisation from the components. */
void map_finish_layer(const arch_spec *a, map_layer_result *l);

/* Element operations of a non-compute op (the vector unit's work). */
int64_t map_vector_ops(const wl_graph *g, const wl_op *op, const wl_op_stats *s);
/* MACs per cycle with every unit busy (as map_evaluate counts them). */
double map_peak_macs_per_cycle(const arch_spec *a);
/* Element operations per cycle of the vector unit. */
double map_vector_lanes(const arch_spec *a);
/* Cycles to move `bytes` across the DRAM interface (0: no bandwidth stated). */
int64_t map_dram_cycles(const arch_spec *a, int64_t bytes);
/* Energy of moving `bytes` across the DRAM interface. */
double map_dram_pJ(const arch_spec *a, int64_t bytes);

#endif
