/*
 * mapping.h -- mappings of a loop-nest problem onto an architecture, and
 * their evaluation: the same reads, fills, updates, cycles and energy that
 * Timeloop computes for the same (architecture, problem, mapping).
 *
 * A mapping says, per storage level, which loops run there in time (factor
 * and order), which are unrolled across the level's children in space (on
 * X or Y), and which data spaces the level keeps.  Dimensions are the
 * problem's slots (wl_dim), so a mapping of a Timeloop problem whose
 * dimensions are named C, K, R, P uses the slots the loader assigned them.
 *
 * Evaluation (map_evaluate) allocates nothing and never fails: a mapping
 * that cannot run is a result with validity != MAP_VALID and a reason.
 */
#ifndef AS_MAPPING_H
#define AS_MAPPING_H

#include "../arch/arch.h"
#include "../core/core.h"
#include "../workload/workload.h"

typedef struct map_level {
    int64_t temporal[WL_NDIMS];       /* factor per dimension (1 = no loop) */
    uint8_t temporal_order[WL_NDIMS]; /* a permutation of the dims, innermost first */
    int64_t spatial[WL_NDIMS];        /* factor per dimension, across this level's children */
    uint8_t spatial_order[WL_NDIMS];  /* innermost first */
    int spatial_split;                /* spatial_order[0 .. split) unroll on X, the rest on Y */
    bool keep[WL_NDATASPACES];        /* false: bypassed here */
} map_level;

typedef struct map_mapping {
    int n_levels;                     /* equals the architecture's */
    map_level level[ARCH_MAX_LEVELS]; /* innermost first, like arch_spec.level */
} map_mapping;

typedef enum map_validity {
    MAP_VALID = 0,
    MAP_INVALID_FACTORS,  /* per dimension the factors do not multiply to the bound */
    MAP_INVALID_CAPACITY, /* a tile does not fit its level */
    MAP_INVALID_FANOUT,   /* more spatial instances than the level has children */
    MAP_INVALID_KEEP,     /* the backing store must keep every data space */
    MAP_INVALID_SHAPE,    /* levels of mapping and architecture disagree, bad order, ... */
} map_validity;

const char *map_validity_name(map_validity v);

/* Per instance of a level, one data space (Timeloop's per-instance counts,
 * in words). */
typedef struct map_ds_stats {
    int64_t reads;
    int64_t fills;
    int64_t updates;
    int64_t temporal_reductions;
    int64_t tile_words;        /* utilized capacity */
    int64_t partition_words;   /* the part of the tensor one instance ever holds */
    int64_t utilized_instances;
    double energy_pJ;          /* all utilized instances */
} map_ds_stats;

/* The network from a level to its children, one data space. */
typedef struct map_net_stats {
    int64_t fanout;
    int64_t multicast_factor;  /* largest group of children sharing one delivery */
    int64_t spatial_reductions;
    double energy_pJ;
} map_net_stats;

typedef struct map_level_stats {
    bool keeps[WL_NDATASPACES];
    map_ds_stats ds[WL_NDATASPACES];
    map_net_stats net[WL_NDATASPACES];
    int64_t utilized_instances;
    int64_t cycles;            /* this level's bandwidth-limited cycles */
    double energy_pJ;          /* all data spaces, leakage included */
    double leak_pJ;
} map_level_stats;

typedef struct map_eval {
    map_validity validity;
    char reason[160];          /* why not valid: names the level, data space, numbers */
    int64_t macs;
    int64_t utilized_macs;     /* MAC units busy */
    int64_t compute_cycles;    /* temporal iterations (plus systolic fill/drain) */
    int64_t cycles;            /* compute cycles stretched by the slowest level */
    double utilization;        /* ideal compute cycles / cycles */
    double mac_energy_pJ;
    double energy_pJ;          /* MACs + levels + networks */
    double edp_J_cycle;        /* energy [J] * cycles */
    int n_levels;
    map_level_stats level[ARCH_MAX_LEVELS];
} map_eval;

/* Evaluate m for problem p on architecture a (see the top of this file).
 * Allocates nothing. */
void map_evaluate(const arch_spec *a, const wl_problem *p, const map_mapping *m, map_eval *out);

/*
 * Systolic arrays: cycles of a layer on one rows x cols array for a
 * dataflow, as SCALE-Sim's analytical (CALC) mode computes them: GEMM view
 * M = output pixels, N = filters, K = window x channels; folds run one
 * after another, each costing its temporal length plus fill and drain.
 * Returns SCALE-Sim's reported "Total Cycles" (demand lines - 1), or -1
 * when an argument is not positive or the count overflows.
 */
int64_t map_systolic_cycles(int64_t gemm_m, int64_t gemm_n, int64_t gemm_k, int rows, int cols,
                            arch_dataflow dataflow);

/* A layer as SCALE-Sim's topology file gives it (systolic.c states the
 * rules): IFMAP already padded, batch 1.  A depthwise layer (SCALE-Sim: a
 * name containing "DP") runs as `channels` one-channel layers in turn. */
typedef struct map_systolic_layer {
    int64_t ifmap_h, ifmap_w;
    int64_t filter_h, filter_w;
    int64_t channels, num_filters;
    int64_t stride_h, stride_w;
    bool depthwise;
} map_systolic_layer;

/* The GEMM a layer runs as, `repeats` times one after another. */
typedef struct map_systolic_gemm {
    int64_t m, n, k;
    int64_t repeats;
} map_systolic_gemm;

/* SCALE-Sim's GEMM view of a layer; false when a field is not positive,
 * the filter exceeds the IFMAP, or a product overflows. */
bool map_systolic_layer_gemm(const map_systolic_layer *layer, map_systolic_gemm *out);
/* Cycles of a whole layer: repeats x map_systolic_cycles; -1 as there. */
int64_t map_systolic_layer_cycles(const map_systolic_layer *layer, int rows, int cols,
                                  arch_dataflow dataflow);

/* ------------------------------------------------------- Timeloop input */

/* What a Timeloop model input holds, mapped onto ours; dim_names[d] is
 * the Timeloop name of slot d ("" for unused slots). */
typedef struct map_timeloop_case {
    arch_spec arch;
    wl_problem problem;
    map_mapping mapping;
    char dim_names[WL_NDIMS][16];
    char problem_name[ARCH_NAME_BYTES];
} map_timeloop_case;

/* Read a timeloop-model input (v0.4 flattened architecture tree, problem,
 * mapping) and optionally its ERT and ART tables (NULL: energies and
 * areas from accelsearch's tables).  Errors name file, line and key. */
as_code map_timeloop_load(const char *model_input_path, const char *ert_path,
                          const char *art_path, map_timeloop_case *out, as_status *st);

#endif
