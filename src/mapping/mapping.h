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
    /* Systolic arrays: groups of a grouped (depthwise) convolution run side
     * by side on one array as a block-diagonal GEMM (eval.c, compute
     * cycles).  0 or 1: one group at a time, SCALE-Sim's rule; at most the
     * groups one array runs.  Other compute runs groups on its spatial
     * positions instead, so it must be 0 or 1 there. */
    int64_t group_pack;
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
    int64_t tile_words;      /* utilized capacity */
    int64_t partition_words; /* the part of the tensor one instance ever holds */
    int64_t utilized_instances;
    /* A level storing the data space compressed (docs/sparse.md): how many
     * of reads + fills + updates are metadata words (the rest are
     * non-zeros); 0 when uncompressed. */
    int64_t metadata_words;
    double energy_pJ; /* all utilized instances */
} map_ds_stats;

/* The network from a level to its children, one data space. */
typedef struct map_net_stats {
    int64_t fanout;
    int64_t multicast_factor; /* largest group of children sharing one delivery */
    int64_t spatial_reductions;
    double energy_pJ;
} map_net_stats;

typedef struct map_level_stats {
    bool keeps[WL_NDATASPACES];
    map_ds_stats ds[WL_NDATASPACES];
    map_net_stats net[WL_NDATASPACES];
    int64_t utilized_instances;
    int64_t cycles;   /* this level's bandwidth-limited cycles */
    double energy_pJ; /* all data spaces, leakage included */
    double leak_pJ;
} map_level_stats;

typedef struct map_eval {
    map_validity validity;
    char reason[160]; /* why not valid: names the level, data space, numbers */
    int64_t macs;
    int64_t utilized_macs;  /* MAC units busy */
    int64_t compute_cycles; /* temporal iterations (plus systolic fill/drain), times
                               mac_passes */
    int64_t mac_passes;     /* MAC operations per MAC: 1, more when emulated */
    int64_t cycles;         /* compute cycles stretched by the slowest level */
    double utilization;     /* ideal compute cycles / cycles */
    double mac_energy_pJ;   /* macs x mac_passes x the MAC's energy */
    /* Systolic arrays: the energy of the data movement inside them (PE
     * registers, PE-to-PE hops), all arrays.  It is the energy of the
     * network below level 0 (level[0].net[ds].energy_pJ, per data space),
     * so it is already in energy_pJ; this is its split. */
    double array_register_pJ, array_hop_pJ;
    double energy_pJ;   /* MACs + levels + networks */
    double edp_J_cycle; /* energy [J] * cycles */
    int n_levels;
    map_level_stats level[ARCH_MAX_LEVELS];
} map_eval;

/* Evaluate m for problem p on architecture a (see the top of this file).
 * Allocates nothing.  A design that declares sparse formats or zero
 * handling (arch_is_sparse) is costed with the data spaces' densities
 * (sparse.c, docs/sparse.md); any other is costed dense, densities
 * ignored: dense hardware gets no speedup from unstructured sparsity. */
void map_evaluate(const arch_spec *a, const wl_problem *p, const map_mapping *m, map_eval *out);

/* MAC operations one MAC of p takes on compute c (emulate.c states the
 * model; docs/precision.md the table): 1 when the operands' (weights',
 * inputs') number format is as-hardware or one the MACs take exactly;
 * when they lack it, the significant products of the operands' limbs of
 * the MACs' significand width, plus one pass aligning products whose
 * exponent is wider than the MACs'. */
int64_t map_mac_passes(const arch_compute *c, const wl_problem *p);

/* Words a tile occupies when stored in format f at a level of word_bits
 * words (docs/sparse.md): for a compressed format the expected non-zeros
 * (density x elements) plus the metadata bits / word_bits, rounded up;
 * the elements when uncompressed.  span[] are the tile's rank extents,
 * outermost first. */
int64_t map_sparse_tile_words(const arch_ds_format *f, int word_bits, const int64_t *span,
                              int ranks, double density);
/* A whole weight tensor (its dims as the ranks, its density) as one tile:
 * the words it takes at level L (NULL: one per element) by L's weight
 * format, and the bytes it moves across the DRAM interface when the
 * backing store of a is a DRAM storing weights compressed (the non-zeros
 * at the tensor's precision, the metadata bits) -- wl_tensor_bytes
 * otherwise. */
int64_t map_sparse_weight_words(const arch_level *L, const wl_tensor *t);
int64_t map_sparse_weight_dram_bytes(const arch_spec *a, const wl_tensor *t);

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

/*
 * Data movement of one GEMM on one rows x cols array, fold by fold as
 * map_systolic_cycles runs it (docs/systolic-formulas.md, section 9), per
 * data space (wl_dataspace_id):
 *   edge_words  words crossing the array's edge: Weights and Inputs read
 *               from the buffer above, Outputs (partial sums) drained into
 *               it -- SCALE-Sim's SRAM FILTER reads, IFMAP reads and OFMAP
 *               writes, without its OS artifact of rows + cols per fold;
 *   hops        words moved one PE pitch (from the edge or a neighbour);
 *   reg_reads   PE register reads: each MAC reads its three operands;
 *   reg_writes  PE register writes: each hop ends in one, and an OS PE
 *               also writes its accumulator once per MAC.
 * false when an argument is not positive, the dataflow unknown or a count
 * overflows.
 */
typedef struct map_systolic_traffic {
    int64_t edge_words[WL_NDATASPACES];
    int64_t hops[WL_NDATASPACES];
    int64_t reg_reads[WL_NDATASPACES];
    int64_t reg_writes[WL_NDATASPACES];
} map_systolic_traffic;

bool map_systolic_traffic_of(int64_t gemm_m, int64_t gemm_n, int64_t gemm_k, int rows, int cols,
                             arch_dataflow dataflow, map_systolic_traffic *out);

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
 * the Timeloop name of slot d ("" for unused slots).  A case made from a
 * layer of a network (map_timeloop_layer_case) also holds what Timeloop's
 * format has no place for and map_network_evaluate charges: the tensors'
 * precisions (problem.ds[].bits), the DRAM bytes outside the loop nest
 * and the DRAM interface (arch.dram); the writer puts them in an
 * `accelsearch` section, which Timeloop ignores. */
typedef struct map_timeloop_case {
    arch_spec arch;
    wl_problem problem;
    map_mapping mapping;
    char dim_names[WL_NDIMS][16];
    char problem_name[ARCH_NAME_BYTES];
    bool is_layer;              /* made from (or read with) a network layer's context */
    int64_t outside_dram_bytes; /* is_layer: bytes the mapping does not move (a bias) */
} map_timeloop_case;

/* Read a timeloop-model input (v0.4 flattened architecture tree, problem,
 * mapping) and optionally its ERT and ART tables (NULL: energies and
 * areas from accelsearch's tables).  Errors name file, line and key. */
as_code map_timeloop_load(const char *model_input_path, const char *ert_path, const char *art_path,
                          map_timeloop_case *out, as_status *st);

/* -------------------------------------------------------------- mapper */

/*
 * The mapper searches the map space of one problem on one architecture:
 * factorisations of every dimension across levels (temporal, spatial X/Y),
 * loop orders and keep/bypass choices, within the architecture's
 * constraints (arch_level.constraints).  Searches are anytime: init, then
 * step with a budget as often as wanted, then read the best so far; the
 * same seed gives the same result whatever the thread count.
 */
typedef enum map_metric { MAP_METRIC_EDP, MAP_METRIC_ENERGY, MAP_METRIC_CYCLES } map_metric;

/* Lexicographic objective: compare by metric[0], ties by metric[1], ... */
typedef struct map_objective {
    int n_metrics;
    map_metric metric[3];
} map_objective;

typedef enum map_algorithm {
    MAP_ALGO_RANDOM_PRUNED, /* Timeloop's: random points, pruned, with its termination rules */
    MAP_ALGO_HEURISTIC,     /* structure-driven search (see search.c) */
    MAP_ALGO_EXHAUSTIVE,    /* every point of a small space */
} map_algorithm;

typedef struct map_search_options {
    map_algorithm algorithm;
    map_objective objective;
    uint64_t seed;
    int threads;         /* 0 = OpenMP's default */
    int64_t search_size; /* stop after this many valid mappings (0 = no limit) */
    int64_t
        victory_condition; /* stop after this many valid mappings without improvement (0 = off) */
    int64_t consecutive_invalid_limit; /* stop after this many invalid mappings in a row (0 = off;
                                        * Timeloop's mapper `timeout`) */
    double timeout_seconds;            /* 0 = none */
    bool allow_padding;                /* FAST: pad awkward dimensions to friendlier bounds */
    bool allow_imperfect;              /* remainder tiles where they help */
    /* Heuristic: a step of fewer evaluations than one local search (1,000)
     * runs one local search that long, not a whole one -- for a caller
     * whose budgets are small (map_problem_search_run sets it when
     * bounded); off, a step runs whole local searches. */
    bool exact_steps;
} map_search_options;

/* Defaults: heuristic, EDP, seed 1, one thread, no limits, padding and
 * imperfect factorisation allowed. */
void map_search_options_default(map_search_options *o);

typedef struct map_search map_search;

/* Prepare a search; a (arch, problem, constraints) without any valid
 * mapping is not an error here: the search finds none and says so. */
as_code map_search_init(map_search **out, const arch_spec *a, const wl_problem *p,
                        const map_search_options *o, as_status *st);
/* Evaluate up to `budget` more mappings; false once the search has ended
 * (space exhausted, search size, victory condition or timeout reached). */
bool map_search_step(map_search *s, int64_t budget);
/* The best mapping so far and its evaluation, and the problem it maps
 * (padded when padding was chosen); false when none is valid yet. */
bool map_search_best(const map_search *s, map_mapping *mapping, map_eval *eval,
                     wl_problem *mapped_problem);
/* Mappings evaluated so far (valid or not), and valid ones. */
int64_t map_search_evaluated(const map_search *s);
int64_t map_search_valid(const map_search *s);
/* Best objective value (metric[0]) after each step, for the anytime curve. */
const double *map_search_curve(const map_search *s, int *n_points);
void map_search_free(map_search *s);

/*
 * What a heuristic or random search needs to go on later where it
 * stopped, without its scratch (a few hundred bytes against the ~200 KB a
 * live search holds): the next chunk's number, the counters of the
 * termination rules and which variant the best mapping maps (the mapping
 * itself is the caller's, from map_search_best).  A search restored from
 * it and stepped on is the search that was saved, stepped on: same
 * chunks, same random streams, same best.  The anytime curve is not kept.
 */
typedef struct map_search_resume {
    uint64_t next_chunk;
    int32_t best_variant;
    bool found, ended, invalid_limit_hit;
    double best_key[3];
    int64_t evaluated, valid, since_improvement, invalid_run;
} map_search_resume;

void map_search_save(const map_search *s, map_search_resume *out);
/* Continue saved search r (best: its best mapping, when r->found) in s,
 * freshly initialised with the same architecture, problem and options. */
as_code map_search_restore(map_search *s, const map_search_resume *r, const map_mapping *best,
                           as_status *st);

/* Timeloop mapper input: the model input plus architecture constraints
 * (into arch.level[].constraints) and mapper settings (into options). */
typedef struct map_mapper_case {
    map_timeloop_case model; /* arch (with constraints), problem; mapping unused */
    map_search_options options;
} map_mapper_case;

as_code map_timeloop_load_mapper(const char *mapper_input_path, const char *ert_path,
                                 const char *art_path, map_mapper_case *out, as_status *st);
/* Write a mapping as a timeloop-model input (architecture tree, problem,
 * mapping) that timeloop-model evaluates to the same numbers. */
as_code map_timeloop_save(const map_timeloop_case *c, const char *path, as_status *st);
/* Write c's energies and areas as Accelergy ERT and ART files (either path
 * may be NULL) naming the components as map_timeloop_save does, so that
 * `timeloop-model input.yaml ERT.yaml ART.yaml` and map_timeloop_load(input,
 * ERT, ART) both see c's numbers.  Refuses (AS_EINVAL) what the format
 * cannot say, as map_timeloop_save does (timeloop_save.c lists it). */
as_code map_timeloop_save_tables(const map_timeloop_case *c, const char *ert_path,
                                 const char *art_path, as_status *st);

/*
 * A Timeloop v0.4 architecture as a design (docs/timeloop-semantics.md,
 * section 8.1): the `architecture` tree of a file that has one, alone or
 * inside a model or mapper input (its problem, if any, names the
 * dimensions of its architecture_constraints; a mapping is ignored), with
 * the ERT and ART tables when given (NULL: accelsearch's tables) and the
 * `accelsearch_arch` section map_timeloop_save_arch writes for what
 * Timeloop cannot say (DRAM interface, wire energies, native batch).
 * Errors name file, line and key.
 */
as_code map_timeloop_load_arch(const char *path, const char *ert_path, const char *art_path,
                               arch_spec *out, as_status *st);
/* Any design by name or file: a preset, accelsearch's YAML, a SCALE-Sim
 * .cfg (arch_load), or a Timeloop v0.4 architecture (told by content,
 * map_timeloop_is_arch_file) with its ERT and ART read from beside it:
 * for DIR/STEM.yaml, DIR/STEM.ERT.yaml (what `arch convert` writes) else
 * DIR/ERT.yaml (as Timeloop's examples name them), the same for ART;
 * without them accelsearch's tables stand in.  The table paths used go
 * into ert_path / art_path (each may be NULL; "" when none).  What every
 * command that takes a design, and a search around one, load. */
as_code map_design_load(const char *design, arch_spec *a, char *ert_path, char *art_path,
                        size_t path_bytes, as_status *st);
/* Whether path is a YAML file whose top-level mapping has an
 * `architecture` key (how a Timeloop design is told from ours, by content);
 * false for anything unreadable. */
bool map_timeloop_is_arch_file(const char *path);
/* Write a as a Timeloop v0.4 architecture file (the tree, an
 * architecture_constraints section for the levels' keep constraints and
 * single-data-space capacities, and the accelsearch_arch section) that
 * map_timeloop_load_arch reads back to the same costs with the tables of
 * map_timeloop_save_arch_tables.  Refuses (AS_EINVAL, naming the level or
 * unit) what the format cannot say: timeloop_save.c lists it. */
as_code map_timeloop_save_arch(const arch_spec *a, const char *path, as_status *st);
/* a's energies and areas as Accelergy ERT and ART files (either path may be
 * NULL; "-" is standard output) naming the components as
 * map_timeloop_save_arch does. */
as_code map_timeloop_save_arch_tables(const arch_spec *a, const char *ert_path,
                                      const char *art_path, as_status *st);

/* ---------------------------------------------------- network evaluation */

/* Indices of energy_by_component_pJ. */
typedef enum map_component {
    MAP_COMP_MAC,
    MAP_COMP_ONCHIP, /* on-chip storage levels */
    MAP_COMP_DRAM,
    MAP_COMP_VECTOR, /* on-chip network (compute ops), vector unit (the others) */
    MAP_N_COMPONENTS
} map_component;
/* "mac", "onchip", "dram", "network_vector". */
const char *map_component_name(map_component c);

/* The energy parts a report draws: the MACs, each on-chip storage level
 * (innermost first, by its name), DRAM, then the network and vector unit
 * -- map_component with its on-chip part split by level (by_level: a
 * result's onchip_level_pJ).  Fills names[k] and pJ[k]; returns the count
 * (at most MAP_MAX_ENERGY_PARTS). */
#define MAP_MAX_ENERGY_PARTS (ARCH_MAX_LEVELS + 3)
int map_energy_parts(const arch_spec *a, const double *by_component, const double *by_level,
                     const char **names, double *pJ);
/* The same parts as a JSON array of their values (pJ), or of their names
 * when names_only (by_component and by_level are then not read); NULL
 * when out of memory. */
json_t *map_energy_parts_json(const arch_spec *a, const double *by_component,
                              const double *by_level, bool names_only);

/* ------------------------------------------------------ resident weights */

/*
 * Weights resident across inferences (resident.c states the model): when
 * a model's weights fit the outermost on-chip level, the steady-state cost
 * of an inference does not read them from DRAM; they are read from that
 * level instead, and they occupy it, so the mapper sees its capacity less
 * the weights.  Network costing, fusion and the co-design search share it.
 */
typedef enum map_weights {
    MAP_WEIGHTS_AUTO,     /* resident when they fit, streamed otherwise */
    MAP_WEIGHTS_STREAMED, /* read from DRAM by every layer at every inference */
    MAP_WEIGHTS_RESIDENT, /* held on chip; an error when they do not fit */
} map_weights;

/* "auto", "streamed", "resident". */
const char *map_weights_name(map_weights w);

/* Where a network's weights live, decided once per (model, design). */
typedef struct map_residency {
    bool resident;              /* the mode decided: resident (true) or streamed */
    int level;                  /* the level that holds them, or would: -1 when none is on chip */
    int64_t words;              /* footprint: one word of that level per weight element */
    int64_t bytes;              /* the same in bytes (words x the level's word_bits / 8) */
    int64_t capacity_words;     /* of that level, all instances (its weight share when split) */
    int64_t capacity_bytes;     /* the same in bytes */
    int64_t words_per_instance; /* what each instance gives up when resident */
} map_residency;

/* The outermost level that stores data and is not DRAM; -1 when none. */
int map_outermost_onchip_level(const arch_spec *a);
/* Decide where g's weights live on a for mode: AUTO resident when they
 * fit, streamed otherwise; RESIDENT fails (AS_EINVAL, naming the model,
 * the bytes needed and the capacity) when they do not fit. */
as_code map_residency_decide(const wl_graph *g, const arch_spec *a, map_weights mode,
                             map_residency *out, as_status *st);
/* The architecture the mapper sees under r: a, with the resident level's
 * capacity per instance reduced by the weights' share when r is resident
 * (a copy of a otherwise).  Its bytes differ from a's, so mapper results
 * for the two never share a cache key. */
void map_residency_arch(const arch_spec *a, const map_residency *r, arch_spec *out);
/* Energy (pJ) and cycles of reading `words` resident weight words from
 * r's level: one read per vector access (block_size words), at the
 * level's read bandwidth over all instances (0 cycles when unlimited). */
void map_resident_read(const arch_spec *a, const map_residency *r, int64_t words, double *energy_pJ,
                       int64_t *cycles);
/* Whether tensor t of g is a resident weight under r (a weight read from
 * the resident level rather than from DRAM). */
bool map_tensor_is_resident(const wl_graph *g, const map_residency *r, int32_t t);
/* Weight elements op o reads (each weight tensor once; a Gather from a
 * table only the rows it gathers), as wl_op_stats counts their bytes. */
int64_t map_op_weight_words(const wl_graph *g, int32_t o);

/* Per layer (graph op) results of mapping a whole network, no fusion:
 * every layer reads its inputs and weights from DRAM and writes its
 * outputs back. */
typedef struct map_layer_result {
    int32_t op;            /* graph op */
    int32_t problem_class; /* index of the distinct problem it shares (-1: non-compute) */
    bool mapped;           /* false: a compute op an interruption left unmapped (costs 0) */
    int64_t macs;          /* useful MACs (padding excluded) */
    int64_t padded_macs;   /* MACs executed, padding included */
    int64_t cycles;
    double energy_pJ;
    double energy_by_component_pJ[MAP_N_COMPONENTS]; /* map_component */
    /* The on-chip component by architecture level: each storage level's
     * accesses, resident weight reads included (DRAM's entry stays 0).
     * Sums to energy_by_component_pJ[MAP_COMP_ONCHIP]. */
    double onchip_level_pJ[ARCH_MAX_LEVELS];
    double utilization;
    int64_t dram_bytes;
    map_mapping mapping;    /* compute ops */
    wl_problem problem;     /* compute ops: the problem mapped (padded when padding was chosen) */
    int32_t n_epilogue_ops; /* ops run in the layer's epilogue (wl_fuse_epilogues) */
} map_layer_result;

typedef struct map_network_result {
    int32_t n_layers;
    map_layer_result *layers; /* malloc'd; map_network_free */
    int32_t n_distinct_problems;
    int64_t mappings_evaluated;
    int64_t cycles;
    double latency_s;
    double energy_pJ;
    double edp_J_cycle;
    int64_t dram_bytes;
    double op_intensity; /* 2 * MACs / DRAM bytes */
    bool interrupted;    /* stopped early by the caller's flag: results are best so far */
    int64_t macs;        /* useful MACs of all layers */
    double utilization;  /* macs / (peak MACs per cycle * cycles) */
    double energy_by_component_pJ[MAP_N_COMPONENTS];
    double onchip_level_pJ[ARCH_MAX_LEVELS]; /* the layers' sums */
    int32_t n_unmapped;     /* compute layers left unmapped (interrupted runs only) */
    int32_t n_epilogue_ops; /* ops run in layers' epilogues (not layers of their own) */
    /* The precision conversion (network.c, "Precision"): compute layers
     * that keep a data space in on-chip words narrower than its tensor
     * (narrowed to the words there, at the tensor's precision in DRAM);
     * the widest such tensor and the narrowest such word, in bits. */
    int32_t n_narrowed_layers;
    int narrowed_tensor_bits, narrowed_word_bits;
    map_residency weights; /* where the weights lived (resident.c) */
} map_network_result;

/* ------------------------------------------------------------ layer cost */

/*
 * The cost of one layer, shared by network costing (network.c), fusion
 * and the co-design search, so that a fused plan of singleton groups costs
 * exactly what map_network_evaluate charges (network.c states the model).
 */

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
        int64_t n_ranks, read_write, bits, number;
        double density;
        int64_t term[WL_MAX_DS_RANKS][2][2]; /* (dim, coef); zero when absent */
    } ds[WL_NDATASPACES];
} map_problem_key;

void map_problem_key_of(const wl_problem *p, map_problem_key *k);

/*
 * What names a mapper result across designs: the design (every byte of
 * the architecture but its name, the mapper's options, the budget) as a
 * 128-bit digest -- two independent 64-bit hashes, so a false match is not
 * a practical concern -- and the problem.  Bytes the architecture does not
 * define (padding) may differ between equal designs: that costs a cache
 * miss, never a wrong answer.
 */
typedef struct map_layer_key {
    uint64_t design[2];
    map_problem_key problem;
} map_layer_key;

/* The design half of a key. */
void map_layer_key_design(const arch_spec *a, const map_search_options *o, int64_t budget,
                          map_layer_key *k);

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
    int64_t budget;           /* evaluations it was given (0: its own end) */
    map_search_resume resume; /* where the search stopped, to go on later */
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
/* map_problem_search_run at `budget`, exactly, continued from `from` (an
 * outcome of the same problem, architecture and options, complete:
 * from->searched) when that search stopped on the way: a bounded search
 * steps through doubling targets (..., budget / 4, budget / 2, budget),
 * so when from's budget was one of them only the difference is searched.
 * Anytime mapping for a caller that raises its budget (successive halving
 * in a co-design search). */
void map_problem_search_continue(const arch_spec *a, const wl_problem *p,
                                 const map_search_options *o, int threads, int64_t budget,
                                 const map_problem_outcome *from, map_problem_outcome *out);

/*
 * The one mapping cache (cache.c): searched outcomes by layer key, shared
 * by every user that maps problems -- a network's layers, a fusion
 * evaluator's tiles, the candidates of a co-design search -- so that a
 * problem is searched once per design.  Thread-safe (one lock); entries
 * are immutable once stored and stay at their address until the cache is
 * freed.  Only complete searches that could start are stored, so a cached
 * outcome is exactly what searching again would give.
 */
typedef struct map_cache map_cache;

as_code map_cache_new(map_cache **out, as_status *st);
void map_cache_free(map_cache *c);
/* Lookups answered from the cache, and outcomes held. */
void map_cache_stats(map_cache *c, int64_t *hits, int64_t *entries);
/* The outcome held for k, or NULL. */
const map_problem_outcome *map_cache_find(map_cache *c, const map_layer_key *k);
/* Hold a copy of outcome for k unless one is held already; the held one
 * (the first stored wins), or NULL when out of memory. */
const map_problem_outcome *map_cache_add(map_cache *c, const map_layer_key *k,
                                         const map_problem_outcome *outcome);

/* Energies, cycles and DRAM traffic of compute layer r (r->op set,
 * r->problem its own problem on entry) from its search's outcome, with
 * the weights where res says (NULL: streamed). */
void map_cost_compute_layer(const wl_graph *g, const arch_spec *a, const map_residency *res,
                            const map_problem_outcome *c, map_layer_result *r);
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
/* The vector-unit and DRAM model of non-compute layer r (r->op set),
 * with the weights where res says (NULL: streamed). */
void map_cost_vector_layer(const wl_graph *g, const arch_spec *a, const map_residency *res,
                           map_layer_result *r);

/* What the epilogue of fused op `root` (wl_fuse_epilogues) adds to it. */
typedef struct map_epilogue {
    int32_t n_ops;
    int64_t vector_ops;          /* element operations on the vector unit */
    int64_t extra_input_bytes;   /* activations from outside the fused op, each once */
    int64_t weight_bytes;        /* the epilogue ops' weights (biases, scales), each once */
    int64_t weight_words;        /* the same in elements (one word each on chip) */
    int64_t output_bytes_change; /* final output's bytes minus the root's output's */
} map_epilogue;
void map_epilogue_work(const wl_graph *g, int32_t root, map_epilogue *out);
/* Add the epilogue of layer r's op to r's costs (network.c, "Epilogues"):
 * vector work overlapped with the layer, extra inputs read, its weights
 * read from DRAM or, when res says resident (NULL: streamed), from the
 * resident level, the final output written instead of the root's;
 * nothing when it has none. */
void map_cost_epilogue(const wl_graph *g, const arch_spec *a, const map_residency *res,
                       map_layer_result *r);
/* Per-layer energy total and utilisation from the components. */
void map_finish_layer(const arch_spec *a, map_layer_result *l);

/* The parts of compute layer op's cost (own: its own problem) that its
 * mapping does not change, under residency res (NULL: streamed), for a
 * caller that prices the mapping itself (FADiff, src/diff): the bytes it
 * moves across the DRAM interface besides the mapping's, the resident
 * weight words it reads besides the mapping's, which data spaces' backing
 * store words are resident reads instead of DRAM traffic, and its
 * epilogue alone (map_cost_epilogue on a layer of no other cost): bytes,
 * energy, and cycles -- its vector work, its own DRAM time and resident
 * reads; with the layer, the DRAM time is that of the layer's bytes plus
 * the epilogue's. */
typedef struct map_layer_fixed {
    int64_t outside_dram_bytes;
    int64_t outside_resident_words;
    bool resident_ds[WL_NDATASPACES];
    int64_t epilogue_dram_bytes;
    double epilogue_energy_pJ;
    int64_t epilogue_cycles;
} map_layer_fixed;
void map_layer_fixed_costs(const wl_graph *g, const arch_spec *a, const map_residency *res,
                           int32_t op, const wl_problem *own, map_layer_fixed *out);

/* MACs per cycle with every unit busy (as map_evaluate counts them). */
double map_peak_macs_per_cycle(const arch_spec *a);
/* Element operations per cycle of the vector unit. */
double map_vector_lanes(const arch_spec *a);
/* Cycles to move `bytes` across the DRAM interface (0: no bandwidth stated). */
int64_t map_dram_cycles(const arch_spec *a, int64_t bytes);
/* Energy of moving `bytes` across the DRAM interface. */
double map_dram_pJ(const arch_spec *a, int64_t bytes);

typedef struct map_network_options {
    map_search_options search;
    int64_t budget_per_problem; /* mappings evaluated per distinct problem (0 = search default) */
    const char *only_layer;     /* map this layer only (NULL = all) */
    /* Polled between problems and search steps: set (e.g. by SIGINT) to stop
     * early and keep what was found. */
    volatile int *stop_flag;
    /* Called after each distinct problem (progress display), from the thread
     * that mapped it, never two calls at once; may be NULL. */
    void (*progress)(void *user, int32_t done, int32_t total);
    void *progress_user;
    /* Outcomes of earlier searches on this design, consulted before a
     * problem is searched and given what is searched; NULL: none. */
    map_cache *cache;
    map_weights weights; /* resident or streamed weights (default AUTO: by capacity) */
    /* Who searches one problem: NULL, the mapper of `search`
     * (map_problem_search_run); else this function, with its contract and
     * the budget above, asked with problem_search_user -- an engine of a
     * module above this one plugs in here (FADiff: diff.h,
     * df_problem_search).  The cache is then not consulted: its keys name
     * the mapper's options. */
    void (*problem_search)(void *user, const arch_spec *a, const wl_problem *p, int threads,
                           int64_t budget, volatile int *stop_flag, map_problem_outcome *out);
    void *problem_search_user;
} map_network_options;

/* Defaults: the search defaults, the search's own budget, all layers, no
 * stop flag, no progress callback, no cache, weights AUTO (resident when
 * they fit). */
void map_network_options_default(map_network_options *o);

/* Map every compute op of g on a (identical problems once), cost every
 * non-compute op with the vector unit and DRAM model, and sum (network.c
 * states the model: precision, DRAM traffic, cycles, interruption). */
as_code map_network_evaluate(const wl_graph *g, const arch_spec *a, const map_network_options *o,
                             map_network_result *out, as_status *st);
void map_network_free(map_network_result *r);

/* Where time goes: the layers of one op kind summed. */
typedef struct map_op_type_total {
    wl_op_kind kind;
    int32_t n_layers;
    int64_t macs;
    int64_t cycles;
    double energy_pJ;
    int64_t dram_bytes;
} map_op_type_total;

/* Sum r (computed on g) per op kind into out: the kinds that occur, most
 * cycles first (ties in kind order).  Returns how many. */
int map_network_by_op_type(const wl_graph *g, const map_network_result *r,
                           map_op_type_total out[WL_OP_COUNT]);

/* ------------------------------------------- a network layer as Timeloop input */

/* The case of compute layer `layer` of r (map_network_evaluate of g on a,
 * mapped): its architecture, mapped problem and mapping, the canonical
 * dimension names, the layer's name as problem name (characters other
 * than [A-Za-z0-9_.-] become '_') and its layer context (is_layer). */
as_code map_timeloop_layer_case(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                                int32_t layer, map_timeloop_case *out, as_status *st);
/* Evaluate c's mapping (map_evaluate into e) and, when c is a layer's
 * case, cost it as map_network_evaluate costs that layer (into layer:
 * cycles, energy_pJ and its components, dram_bytes), so that `map
 * --emit-timeloop` and `eval` of the files agree exactly.  Returns
 * whether layer was filled: c is a layer's case and its mapping valid. */
bool map_timeloop_evaluate(const map_timeloop_case *c, map_eval *e, map_layer_result *layer);

/* ---------------------------------------------------- mappings as text */

/*
 * A mapping as one short line (mapping_text.c states the format: levels
 * outermost first, "Name[WIO] C8 M16X | ..."), for stores that keep one
 * per layer.  a names the levels (NULL: L0, L1, ...).  Returns false when
 * buf (size bytes) was too small; the text is then cut but terminated.
 */
bool map_mapping_format(const arch_spec *a, const map_mapping *m, char *buf, size_t size);
/* Read a line map_mapping_format wrote for an architecture of n_levels
 * levels into *out: it evaluates exactly as the mapping written.  Text
 * that is not such a line fails (AS_EINVAL) quoting it. */
as_code map_mapping_parse(const char *text, int n_levels, map_mapping *out, as_status *st);
/* A problem's bounds as "C64 M64 P56 Q56 R3 S3" (the dimensions of bound
 * other than 1, slot order); false when buf was too small. */
bool map_bounds_format(const int64_t bound[WL_NDIMS], char *buf, size_t size);
/* Bounds map_bounds_format wrote (absent dimensions 1); AS_EINVAL else. */
as_code map_bounds_parse(const char *text, int64_t bound[WL_NDIMS], as_status *st);

#endif
