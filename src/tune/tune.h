/*
 * tune.h -- per-layer schedule and hardware tuning on VTA-style
 * accelerators: DCO-Comp (multi-agent PPO with confidence sampling) and
 * the AutoTVM- and CHAMELEON-style tuners it is compared with.
 *
 * The cost function is a model of VTA's decoupled access-execute pipeline
 * (T. Moreau et al., "A hardware-software blueprint for flexible deep
 * learning specialization", IEEE Micro 39(5), 2019): a load module (DMA of
 * input and weight tiles), a compute module (GEMM core of BATCH x BLOCK_IN
 * x BLOCK_OUT MACs, ALU) and a store module, joined by dependency-token
 * queues, running the instruction stream that TVM's VTA conv2d template
 * builds from seven knobs (tile_b, tile_h, tile_w, tile_ci, tile_co,
 * h_threading, oc_threading).  The hardware itself is a knob too (VTA++:
 * GEMM shape and buffer sizes), under an FPGA-like LUT/BRAM/DSP budget.
 * docs/tune.md states the loop nest and the model's assumptions.
 *
 * Layers are tuned one at a time and independently; a model's layers run
 * in parallel (OpenMP), each from its own random stream, so that a seed
 * gives the same result at any thread count.  Nothing here prints.
 */
#ifndef AS_TUNE_H
#define AS_TUNE_H

#include "../arch/arch.h"
#include "../core/core.h"
#include "../workload/workload.h"

/* ------------------------------------------------------------- hardware */

/* One VTA configuration (vta_config.json's parameters, VTA++'s ranges). */
typedef struct tn_hw {
    int batch;     /* BATCH: input vectors per GEMM op */
    int block_in;  /* BLOCK_IN: reduction width of the GEMM core */
    int block_out; /* BLOCK_OUT: output channels per GEMM op */
    int64_t inp_buffer_bytes, wgt_buffer_bytes, acc_buffer_bytes, uop_buffer_bytes;
    int inp_bits, wgt_bits, acc_bits, out_bits; /* 8, 8, 32, 8 in VTA */
    double clock_hz;
    double dram_bytes_per_cycle; /* DMA bandwidth at the accelerator clock */
    int dram_latency_cycles;     /* fixed cost of one DMA instruction */
    int node_nm;                 /* technology node of the energy tables */
    char dram_type[16];          /* DRAM energy table ("DDR3") */
} tn_hw;

/* The VTA configuration of an architecture of the `vta` preset's shape
 * (one accumulator, one weight and one input buffer, each holding one data
 * space, a MAC mesh and DRAM).  Anything else fails, naming what is
 * missing: tuning needs a VTA-style design. */
as_code tn_hw_from_arch(const arch_spec *a, tn_hw *out, as_status *st);

/* FPGA resources a configuration uses, and the budget of a device. */
typedef struct tn_resources {
    int64_t luts, brams, dsps; /* BRAM counted as 36 Kb blocks */
} tn_resources;

typedef struct tn_budget {
    const char *name;   /* "pynq" */
    const char *device; /* "Zynq-7020 (PYNQ-Z1)" */
    tn_resources available;
} tn_budget;

/* The resources of hw: GEMM core, buffers (by capacity and port width),
 * and the fixed shell (fetch, load, store, ALU, DMA).  Derivation in
 * docs/tune.md. */
void tn_hw_resources(const tn_hw *hw, tn_resources *out);
/* Does hw fit the budget?  When not, reason names the first resource over
 * it ("DSP 512 > 220"). */
bool tn_hw_fits(const tn_hw *hw, const tn_budget *b, char *reason, size_t reason_size);
const tn_budget *tn_budgets(int *count);
const tn_budget *tn_budget_find(const char *name); /* NULL when unknown */

/* ---------------------------------------------------------------- layers */

/* A convolution in VTA's terms (NCHW, dense, groups 1). */
typedef struct tn_conv {
    char name[64];
    int64_t n, c, k; /* batch, input and output channels */
    int64_t h, w;    /* input height and width (unpadded; from a bare problem: the rows
                        and columns its window reads) */
    int64_t p, q;    /* output height and width */
    int64_t r, s;    /* kernel height and width */
    int64_t stride_h, stride_w;
    int64_t pad_h, pad_w; /* top/left padding (bottom/right follow from p, q) */
    int64_t macs;         /* n*k*p*q*c*r*s */
    int count;            /* identical layers in the model it came from */
} tn_conv;

/* The conv of a problem: AS_EINVAL (with the reason) for anything VTA's
 * conv2d template does not run: grouped or depthwise convs, dilation,
 * matrix products. */
as_code tn_conv_from_problem(const wl_problem *p, const char *name, tn_conv *out, as_status *st);

/* The distinct conv layers of a model that run on VTA, in graph order,
 * identical ones once (count says how many).  Like TVM's VTA flow, a
 * conv whose input channels are fewer than the smallest BLOCK_IN (the
 * stem) stays on the host and is left out; *skipped counts those.
 * *out is malloc'd (caller frees). */
as_code tn_model_layers(const wl_graph *g, tn_conv **out, int *n, int *skipped, as_status *st);

/* ----------------------------------------------------------------- knobs */

/* The seven schedule knobs of TVM's VTA conv2d template, as tile extents:
 * tile_b in batch elements (the space's tile_b knob counts BATCH blocks;
 * decoded, it is blocks x BATCH), tile_h and tile_w in output rows and columns,
 * tile_ci and tile_co in channels; threading in {1, 2}. */
typedef struct tn_knobs {
    int64_t tile_b, tile_h, tile_w, tile_ci, tile_co;
    int h_threading, oc_threading;
} tn_knobs;

/* ------------------------------------------------------------ the model */

typedef enum tn_module { TN_LOAD, TN_COMPUTE, TN_STORE, TN_MODULES } tn_module;

/* What one run of the layer costs. */
typedef struct tn_result {
    bool valid;
    char reason[160]; /* why not, when invalid */
    int64_t cycles;   /* makespan of the simulated pipeline */
    double seconds;   /* cycles / clock */
    double gflops;    /* 2 * true (unpadded) MACs / seconds / 1e9 */
    double energy_pJ; /* MACs, buffer accesses, DRAM */
    int64_t busy_cycles[TN_MODULES];
    int64_t instructions[TN_MODULES];
    int64_t dram_read_bytes, dram_write_bytes;
} tn_result;

/* Cycles, energy and status of `layer` run with knobs k on hw.  A knob
 * setting that the template cannot build or whose tiles overflow a buffer
 * is a result with valid = false and the reason, not an error.  Allocates
 * nothing. */
void tn_vta_evaluate(const tn_conv *layer, const tn_hw *hw, const tn_knobs *k, tn_result *out);

/* ----------------------------------------------------------- knob space */

/*
 * One layer's search space: the seven knobs plus the hardware parameters
 * (GEMM shape, buffer sizes).  A point is one choice index per knob.
 * Agents own knob groups: scheduling (h_threading, oc_threading), mapping
 * (tile_h, tile_w), hardware (tile_b, tile_ci, tile_co and the hardware
 * parameters).
 */
typedef enum tn_knob {
    TN_KNOB_H_THREADING,
    TN_KNOB_OC_THREADING,
    TN_KNOB_TILE_H,
    TN_KNOB_TILE_W,
    TN_KNOB_TILE_B,
    TN_KNOB_TILE_CI,
    TN_KNOB_TILE_CO,
    TN_KNOB_BATCH,
    TN_KNOB_BLOCK_IN,
    TN_KNOB_BLOCK_OUT,
    TN_KNOB_INP_BUFFER,
    TN_KNOB_WGT_BUFFER,
    TN_KNOB_ACC_BUFFER,
    TN_KNOBS
} tn_knob;

typedef enum tn_agent {
    TN_AGENT_SCHEDULING,
    TN_AGENT_MAPPING,
    TN_AGENT_HARDWARE,
    TN_AGENTS
} tn_agent;

#define TN_MAX_CHOICES 64

typedef struct tn_point {
    uint8_t choice[TN_KNOBS];
} tn_point;

typedef struct tn_space {
    tn_conv layer;
    tn_hw base;              /* the hardware the space varies around */
    const tn_budget *budget; /* resource budget of every hardware choice */
    bool vary_hardware;      /* false: the hardware knobs have one choice, base's */
    int n_choices[TN_KNOBS];
    int64_t value[TN_KNOBS][TN_MAX_CHOICES]; /* tile extents, threads, sizes in bytes */
} tn_space;

const char *tn_knob_name(tn_knob k); /* "tile_h", "block_in", "inp_buffer_bytes" */
tn_agent tn_knob_agent(tn_knob k);

/* The space of one layer around base hardware under budget. */
as_code tn_space_init(tn_space *sp, const tn_conv *layer, const tn_hw *base, const tn_budget *b,
                      bool vary_hardware, as_status *st);
/* Number of points (saturates at INT64_MAX). */
int64_t tn_space_size(const tn_space *sp);
/* The knobs and hardware of a point. */
void tn_space_decode(const tn_space *sp, const tn_point *pt, tn_knobs *k, tn_hw *hw);
/* Run the model on a point: hardware over budget is invalid with the
 * reason, like a tile that overflows a buffer. */
void tn_space_measure(const tn_space *sp, const tn_point *pt, tn_result *out);
/* The point of the base hardware with the template's default knobs
 * (smallest tiles that are valid, one thread): the untuned baseline. */
void tn_space_default(const tn_space *sp, tn_point *out);
/* A random point whose hardware fits the budget (when one is found). */
void tn_space_random(const tn_space *sp, as_rng *rng, tn_point *out);
/* Features of a point for learned cost models: TN_FEATURES numbers (log2
 * of each knob value, and the tiles' buffer occupancy and arithmetic
 * intensity). */
#define TN_FEATURES (TN_KNOBS + 6)
void tn_space_features(const tn_space *sp, const tn_point *pt, double *out);
/* "tile_h=7 tile_w=14 ... block_in=16 inp_buffer_bytes=32768" */
void tn_point_format(const tn_space *sp, const tn_point *pt, char *buf, size_t size);
uint64_t tn_point_hash(const tn_point *pt);
bool tn_point_equal(const tn_point *a, const tn_point *b);

/* ---------------------------------------------------------------- tuning */

typedef enum tn_engine {
    TN_ENGINE_DCOCOMP,
    TN_ENGINE_AUTOTVM,
    TN_ENGINE_CHAMELEON,
    TN_ENGINES
} tn_engine;

const char *tn_engine_name(tn_engine e); /* "dcocomp", "autotvm", "chameleon" */

typedef struct tn_progress {
    int layer, layers;      /* which layer of how many (0-based) */
    int64_t trials, budget; /* measurements of this layer so far, of how many */
    double best_gflops;
} tn_progress;

struct tn_layer_result; /* below: what a layer's tuning found */

typedef struct tn_options {
    tn_engine engine;
    int64_t trials; /* measurements per layer (default 1000) */
    uint64_t seed;
    bool confidence_sampling; /* DCO-Comp: rank proposals by the cost model (default on) */
    bool vary_hardware;       /* default on */
    const tn_budget *budget;  /* default "pynq" */
    int threads;              /* layers tuned at once; 0: OpenMP's default */
    volatile int *stop_flag;  /* set (SIGINT) to stop; what was measured is kept */
    void (*progress)(void *user, const tn_progress *p); /* may be NULL; called from one thread */
    void *progress_user;
    /* tn_tune_model: called with progress_user as each layer completes
     * (index in tn_model_layers' order, of how many), one call at a time,
     * so that a caller can keep each layer's result the moment it is
     * found (the CLI's run store).  May be NULL. */
    void (*layer_done)(void *user, int layer, int layers, const struct tn_layer_result *r);
} tn_options;

void tn_options_default(tn_options *o);

/* One measurement of a tuning run. */
typedef struct tn_trial {
    tn_point point;
    tn_result result;
} tn_trial;

typedef struct tn_layer_result {
    tn_conv layer;
    int64_t n_trials;     /* measurements made */
    tn_trial *trials;     /* in measurement order (malloc'd) */
    int64_t best;         /* index of the best valid trial, -1 when none */
    int64_t trials_to_95; /* first trial reaching 95 % of the best GFLOPS (1-based), 0 if none */
    double wall_seconds;  /* time spent tuning this layer */
    bool interrupted;
    /* TVM's fallback configuration (tn_space_default), measured beside the
     * budget: what runs when tuning found nothing valid, and the untuned
     * reference. */
    tn_result fallback;
} tn_layer_result;

/* What the layer runs at: its best trial, else the fallback (NULL when
 * neither is valid). */
const tn_result *tn_layer_outcome(const tn_layer_result *r);

/* Tune one layer's space with o->engine for o->trials measurements.
 * *out owns its trials (tn_layer_result_free). */
as_code tn_tune_layer(const tn_space *sp, const tn_options *o, tn_layer_result *out, as_status *st);
void tn_layer_result_free(tn_layer_result *r);

typedef struct tn_model_result {
    int n_layers;
    tn_layer_result *layers; /* malloc'd, one per distinct layer */
    int skipped_layers;      /* convs left on the host (see tn_model_layers) */
    int64_t macs;            /* true MACs of the tuned layers, counted with multiplicity */
    double seconds;          /* sum of count * latency at each layer's outcome (a layer
                                with no valid configuration, not even TVM's fallback, is
                                left out of macs, seconds and energy) */
    double gflops;           /* 2 * macs / seconds / 1e9 */
    double energy_pJ;
    /* Each layer above runs on the hardware its own tuning chose, as when
     * VTA++ is rebuilt per layer.  One design for the whole model: the
     * hardware (the hardware knobs of shared_hw; its schedule knobs mean
     * nothing) on which every layer has a valid measured trial and the
     * model, each layer at its best such trial, is fastest.  has_shared is
     * false when no hardware was measured for every layer. */
    bool has_shared;
    tn_point shared_hw;
    double shared_seconds, shared_gflops;
    double wall_seconds;
    bool interrupted;
} tn_model_result;

/* Tune every distinct VTA conv layer of g on base hardware.  Layer i uses
 * random stream (seed, i), whatever the thread count. */
as_code tn_tune_model(const wl_graph *g, const tn_hw *base, const tn_options *o,
                      tn_model_result *out, as_status *st);
void tn_model_result_free(tn_model_result *r);

#endif
