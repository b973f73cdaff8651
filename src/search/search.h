/*
 * search.h -- hardware/software co-design search: design spaces, the
 * objectives and their Pareto front, the surrogate models, the hardware
 * engines, and the run that ties them to the fusion and mapping searches.
 *
 * A run proposes hardware candidates (points of a design space) in
 * batches, decodes each into an arch_spec, checks it against the space's
 * constraints, and evaluates it on every training workload by a fusion
 * search over the mapper (CASCO's GA, Optimus's DP, FAST's ILP or none:
 * se_run_fusion), with a software budget the engine controls.  Engines see only points and
 * objective vectors; they never see an architecture.  Everything is seeded: a run is a function of
 * its configuration and seed, whatever the thread count, and a killed run resumes from its store to
 * the same result.
 */
#ifndef AS_SEARCH_H
#define AS_SEARCH_H

#include "../arch/arch.h"
#include "../core/core.h"
#include "../fusion/fusion.h"
#include "../store/store.h"
#include "../workload/workload.h"

/* ---------------------------------------------------------- design spaces */

#define SE_MAX_PARAMS 24
#define SE_MAX_CHOICES 4
/* Candidates an engine proposes at once (a run's --batch): the engines
 * and the run keep a batch in fixed arrays of this size. */
#define SE_MAX_BATCH 64
/* Successive-halving rounds of a CASCO run (the first round's budget is
 * the full budget over 2^(rounds - 1)). */
#define SE_MAX_SH_ROUNDS 8
#define SE_NAME_BYTES 40

/*
 * A parameter takes n_values values, addressed by index 0 .. n_values-1
 * in increasing order (engines search indices, or the unit interval
 * mapped onto them):
 *   INT:  min, min + stride, ... up to max;
 *   POW2: the powers of two from min to max, preceded by 0 when
 *         zero_allowed (min and max are powers of two);
 *   ENUM: choice[0 .. n_choices), value = the index.
 */
typedef enum se_param_kind { SE_PARAM_INT, SE_PARAM_POW2, SE_PARAM_ENUM } se_param_kind;

typedef struct se_param {
    char name[SE_NAME_BYTES];
    se_param_kind kind;
    int64_t min, max, stride;
    bool zero_allowed;
    int n_choices;
    char choice[SE_MAX_CHOICES][SE_NAME_BYTES];
    int64_t n_values; /* derived by se_space_finish */
} se_param;

/*
 * The template a space's parameters fill in.  Each names its parameters
 * (space.c documents them, with the hardware they describe):
 *   EDGE: CASCO's edge setting -- an Eyeriss-like array of MAC PEs with a
 *         per-PE register file and a shared global buffer, LPDDR4, 16-bit
 *         fixed point;
 *   DATAPATH: FAST's datapath -- a grid of PEs, each a systolic array
 *         (vector or scalar when a side is 1), L1 per PE, an optional L2,
 *         an optional global memory, GDDR6 channels, a native batch, bf16.
 * A space lists a subset of its template's parameters; the others keep the
 * template's fixed values (fixed[] below).
 */
typedef enum se_template { SE_TEMPLATE_EDGE, SE_TEMPLATE_DATAPATH, SE_TEMPLATE_AROUND } se_template;

/* How a space around a design is made (se_space_around, around.c;
 * docs/space-format.md "A space around a design"): the design as given
 * (a preset or a file arch_load reads), the parameters varied, each over
 * centre / range .. centre x range, and the budgets (0: none). */
typedef struct se_around {
    char source[256];
    char vary[256]; /* "pe_x,glb_bytes" */
    int range;      /* 2 .. SE_AROUND_MAX_RANGE */
    double max_area_mm2, max_power_W;
} se_around;
#define SE_AROUND_DEFAULT_RANGE 4
#define SE_AROUND_MAX_RANGE 64

/* Budgets a design must meet; 0 = no limit. */
typedef struct se_constraints {
    double max_area_mm2;
    double max_power_W;       /* TDP: arch_peak_power_W */
    int64_t max_pes;          /* MAC units (systolic cells counted) */
    int64_t max_onchip_bytes; /* all on-chip storage, all instances */
} se_constraints;

typedef struct se_space {
    char name[SE_NAME_BYTES];
    char source[256]; /* file it came from, or "built-in" */
    se_template template_kind;
    int technology_nm;
    double clock_hz;
    wl_precision precision; /* the workloads run at this precision */
    int n_params;
    se_param param[SE_MAX_PARAMS];
    /* The value of every template parameter the space does not list, by
     * the template's order (that of its built-in space's parameters): the
     * template's default, or the file's `fixed:`; ENUMs by choice index
     * into the template's choices.  Entries of listed parameters are
     * unused. */
    int64_t fixed[SE_MAX_PARAMS];
    se_constraints limits;
    /* The reference design: a point every run evaluates first (iteration
     * -1); the hypervolume's reference point is ten times its objectives. */
    int64_t baseline[SE_MAX_PARAMS];
    char baseline_name[SE_NAME_BYTES];
    /* AROUND only: the centre design (every point is a copy of it with
     * the varied fields set) and how the space was made from it. */
    arch_spec centre;
    se_around around;
} se_space;

/* A point: one index per parameter of its space. */
typedef struct se_point {
    int64_t index[SE_MAX_PARAMS];
} se_point;

/* The built-in spaces: "edge" and "datacenter" (names into *count). */
const char *const *se_space_builtin_names(int *count);
/* Load a built-in space by name, or a YAML file (docs/space-format.md):
 * strict, every error names file, line and key. */
as_code se_space_load(const char *name_or_path, se_space *out, as_status *st);
/* Write s as YAML that se_space_load reads back to the same space. */
as_code se_space_save(const se_space *s, const char *path, as_status *st);
/* Check a space built in code against its template and complete it:
 * parameters into the template's order (baseline with them), n_values
 * derived, fields a kind does not use cleared.  se_space_load does this. */
as_code se_space_finish(se_space *s, as_status *st);

/* The value of parameter p at index i (0 <= i < n_values). */
int64_t se_param_value(const se_param *p, int64_t index);
/* The index of the nearest value to v (ties to the lower index). */
int64_t se_param_index(const se_param *p, int64_t value);
/* The index of parameter i of s at the value text names -- an integer, a
 * byte count with its unit ("16 KiB", as space files write them), or an
 * ENUM's choice -- or -1 when the parameter does not take that value. */
int64_t se_param_index_parse(const se_space *s, int i, const char *text);
/* Index of the parameter called name, or -1. */
int se_space_find(const se_space *s, const char *name);

/* Map unit-interval coordinates x[0 .. n_params) onto a point (and back:
 * the centre of each index's cell), so that continuous engines and the GP
 * work in [0, 1]^d. */
void se_point_from_unit(const se_space *s, const double *x, se_point *out);
void se_point_to_unit(const se_space *s, const se_point *p, double *x);
bool se_point_equal(const se_space *s, const se_point *a, const se_point *b);
/* "3,17,0" form (store rows) and back. */
void se_point_format(const se_space *s, const se_point *p, char *buf, size_t size);
bool se_point_parse(const se_space *s, const char *text, se_point *out);
/* The parameters of point p by name, {"pe_x": 14, "l1_config": "shared",
 * ...} (names and choices made valid UTF-8); NULL when out of memory. */
json_t *se_point_params(const se_space *s, const se_point *p);
/* The same as JSON text into buf, as many whole members as fit and the
 * closing brace (the core's dump: escaped, valid UTF-8). */
void se_point_params_json(const se_space *s, const se_point *p, char *buf, size_t size);

/*
 * Build the architecture of point p.  A design that cannot be built or
 * breaks a constraint is data, not an error: *feasible false and reason
 * says which limit and by how much (area 3.1 mm^2 > 2.5 mm^2 budget).
 * The native batch (DATAPATH) is left in a->native_batch.
 */
void se_space_decode(const se_space *s, const se_point *p, arch_spec *a, bool *feasible,
                     char *reason, size_t reason_size);
/* Write the architecture of point p as YAML at path (arch_save's format,
 * which map, fuse and `arch show` read), named name (NULL: as decoded).
 * An infeasible point fails naming its reason: a front's designs are all
 * feasible, so only a wrong point or space gets here. */
as_code se_space_emit_arch(const se_space *s, const se_point *p, const char *name, const char *path,
                           as_status *st);
/* The name an emitted front design k carries: "<space>-design-k" (the
 * same from `search --emit-arch` and `runs show --emit-arch`). */
void se_emitted_arch_name(const se_space *s, int64_t k, char *buf, size_t size);
/* A digest of s's whole definition (parameters, limits, baseline): what a
 * stored run's configuration records of its space, so that the space can
 * be checked when a run's designs are rebuilt. */
uint64_t se_space_digest(const se_space *s);

/*
 * The space centred on design `centre` (template AROUND): each parameter
 * named in how->vary (pe_x, pe_y, sa_x, sa_y, rf_bytes, glb_bytes,
 * offchip_bytes, dram_mb_per_s: around.c says which field of the design
 * each sets) takes the values of its grid from centre / range to centre x
 * range; every other field is the centre's; the centre is the baseline.
 * The workloads run at se_design_precision(centre).  A name that is not a
 * parameter, or one that does not apply to the design (sa_x of MAC units,
 * offchip_bytes of an unbounded DRAM), fails naming it.
 */
as_code se_space_around(const arch_spec *centre, const se_around *how, se_space *out,
                        as_status *st);
/* The same with the centre loaded from how->source (arch_load). */
as_code se_space_around_load(const se_around *how, se_space *out, as_status *st);
/* The names se_space_around varies, "pe_x, pe_y, ..." into buf. */
void se_around_param_names(char *buf, size_t size);
/* The precision a design's workloads run at: its MACs' operand format
 * (bf16; fp32, fp16 by width; int8 and narrower as int8; wider integers
 * as fp16, the 16-bit tensors the edge template gives Eyeriss's words). */
wl_precision se_design_precision(const arch_spec *a);

/* ---------------------------------------------------------------- objectives */

/*
 * Every objective is minimised.  Per inference of one workload: latency
 * (s), energy (pJ), EDP (J s); of the design: area (mm^2); and FAST's
 * perf/TDP entered as its inverse, TDP x seconds per inference (J at
 * peak power).
 */
typedef enum se_objective {
    SE_OBJ_LATENCY,
    SE_OBJ_ENERGY,
    SE_OBJ_AREA,
    SE_OBJ_EDP,
    SE_OBJ_TDP_SECONDS,
    SE_N_OBJECTIVES
} se_objective;

const char *se_objective_name(se_objective o); /* "latency", ..., "perf_per_tdp" */
bool se_objective_parse(const char *s, se_objective *out);

/* What a candidate achieved (training workloads aggregated): core's
 * as_metrics, the one definition the run store can hold as well. */
typedef as_metrics se_metrics;

/* The minimised value of objective o for m. */
double se_metrics_objective(const se_metrics *m, se_objective o);

/* The metrics as their JSON members spell them (front points, `search
 * --json`), in this order: latency_s, energy_pJ, area_mm2, power_W, edp,
 * perf_per_tdp.  Metric i's name, and its value in m. */
enum { SE_N_METRICS = 6 };
const char *se_metric_name(int i);
double se_metric_value(const se_metrics *m, int i);
/* The metrics an object names by those members (a stored front point);
 * a member absent reads 0. */
void se_metrics_from_json(const json_t *o, se_metrics *m);

/* What evaluating a design (or one workload on it) came to: the part
 * every candidate record shares (se_candidate, se_workload_result and the
 * evaluation in flight), defined once. */
typedef struct se_outcome {
    bool feasible;
    char reason[256];   /* why not, when infeasible */
    se_metrics metrics; /* meaningful when feasible (area and power from decoding on) */
} se_outcome;

/* ------------------------------------------------------- Pareto front (pareto.c) */

#define SE_MAX_OBJECTIVES 4

/* a dominates b: no worse in all n objectives and better in one. */
bool se_dominates(const double *a, const double *b, int n);
/*
 * Indices of the non-dominated rows of y (n_points x n_obj, row major)
 * into front, in increasing index order; duplicates keep the first.
 * Returns how many.
 */
int64_t se_pareto_front(const double *y, int64_t n_points, int n_obj, int64_t *front);
/*
 * Hypervolume dominated by the points (n x n_obj) and bounded by ref
 * (minimisation): the measure of { z : some point <= z <= ref }.  Points
 * not strictly below ref in every objective add nothing.  Exact, for
 * n_obj <= SE_MAX_OBJECTIVES.
 */
double se_hypervolume(const double *y, int64_t n_points, int n_obj, const double *ref);
/*
 * CASCO's pick: the front point nearest the ideal point after each
 * objective is normalised to [0, 1] over the front (an objective constant
 * on the front counts 0).  Returns an index into y (ties: the lowest).
 */
int64_t se_pick_nearest_ideal(const double *y, const int64_t *front, int64_t n_front, int n_obj);
/*
 * ParEGO's scalarisation of normalised objectives f[0 .. n) under weights
 * w (on the simplex): max_i(w_i f_i) + rho * sum_i(w_i f_i).
 */
double se_parego_scalar(const double *f, const double *w, int n, double rho);
/* A weight vector drawn uniformly from ParEGO's simplex lattice of s
 * divisions (s = 10 for two objectives, 4 for three), by index. */
void se_parego_weights(int n_obj, uint64_t draw, double *w);

/* --------------------------------------------------------- surrogate (gp.c) */

/*
 * A Gaussian-process regression on GSL: zero-mean after standardising the
 * targets, Matérn-5/2 kernel with one length scale per input (ARD), a
 * signal variance and a noise variance.  Hyperparameters maximise the log
 * marginal likelihood (GSL's Nelder-Mead simplex on their logarithms,
 * from a fixed start: deterministic).
 */
typedef struct se_gp se_gp;

typedef struct se_gp_hyper {
    int dim;
    double length_scale[SE_MAX_PARAMS];
    double signal_var; /* of standardised targets */
    double noise_var;
} se_gp_hyper;

/* Fit a GP to n points x (n x dim, in [0, 1]) with targets y; when hyper
 * is NULL the hyperparameters are fitted, else used as given.  Fails on
 * n < 1, dim out of range or a factorisation that does not succeed even
 * with added jitter. */
as_code se_gp_fit(se_gp **out, const double *x, const double *y, int n, int dim,
                  const se_gp_hyper *hyper, as_status *st);
void se_gp_free(se_gp *gp);
/* Posterior mean and variance (of the latent function, in y's units) at x. */
void se_gp_predict(const se_gp *gp, const double *x, double *mean, double *var);
const se_gp_hyper *se_gp_hyperparameters(const se_gp *gp);
/* Log marginal likelihood of the standardised targets at the fitted
 * hyperparameters. */
double se_gp_log_likelihood(const se_gp *gp);
/* Expected improvement below best for a normal posterior (mean, var):
 * (best - mean) Phi(z) + sd phi(z), z = (best - mean) / sd; max(best -
 * mean, 0) when var is 0. */
double se_expected_improvement(double mean, double var, double best);

/* --------------------------------------------------------------- engines */

typedef enum se_algo {
    SE_ALGO_CASCO, /* MOBO + high-fidelity update + modified successive halving */
    SE_ALGO_MOBO,  /* ParEGO batches, every candidate updates the surrogate */
    SE_ALGO_BO,    /* single-objective BO on the run's scalar objective */
    SE_ALGO_LCS,   /* FAST: linear-combination swarm */
    SE_ALGO_GA,    /* genetic over the hardware parameters */
    SE_ALGO_RANDOM,
    SE_ALGO_HASCO, /* HASCO: MOBO's engine, whose run fuses nothing unless told (se_run_fusion) */
    SE_N_ALGOS
} se_algo;

const char *se_algo_name(se_algo a); /* "casco", "mobo", ... */
bool se_algo_parse(const char *s, se_algo *out);

/*
 * What an engine is told about one candidate: its point, whether it was
 * feasible, its objective vector (the run's objectives, minimised; unset
 * when infeasible) and its scalar objective (the run's single objective,
 * for single-objective engines).
 */
typedef struct se_observation {
    se_point point;
    bool feasible;
    double y[SE_MAX_OBJECTIVES];
    double scalar;
} se_observation;

typedef struct se_engine se_engine;

typedef struct se_engine_options {
    se_algo algo;
    uint64_t seed;
    int n_objectives;
    int initial_points;       /* Sobol points before the surrogate takes over (0: default) */
    int acquisition_samples;  /* candidates scored per proposal (0: default) */
    double update_percentile; /* CASCO's UUL percentile (0: 95) */
} se_engine_options;

as_code se_engine_new(se_engine **out, const se_space *s, const se_engine_options *o,
                      as_status *st);
void se_engine_free(se_engine *e);
/* Propose n points (not yet observed, distinct from each other where the
 * space allows) into out.  Deterministic in (seed, observations so far). */
as_code se_engine_propose(se_engine *e, int n, se_point *out, as_status *st);
/* Tell the engine what n proposed points achieved, in proposal order. */
as_code se_engine_observe(se_engine *e, const se_observation *obs, int n, as_status *st);
/* CASCO only: how many observations its high-fidelity rule let into the
 * surrogate, and the current upper update limit (0 when not CASCO). */
int64_t se_engine_surrogate_points(const se_engine *e);
double se_engine_update_limit(const se_engine *e);

/* ------------------------------------------------------------------- runs */

/* A model the run loads (zoo name or ONNX path) and prepares for
 * deployment: batch (the design's native batch), BN folded into convs,
 * elementwise ops in their producers' epilogues (wl_fuse_epilogues;
 * marked fusable only, with se_run_options.no_epilogue_fusion), the
 * space's precision. */
typedef struct se_workload {
    const char *model;
    bool validation;        /* evaluated on the chosen design only */
    bool allow_unknown_ops; /* accept op types outside the op list (costed as zero) */
} se_workload;

/* How several training workloads make one candidate's metrics. */
typedef enum se_aggregate { SE_AGG_GEOMEAN, SE_AGG_SUM } se_aggregate;

typedef struct se_progress {
    int64_t iteration, n_iterations;
    int64_t evaluations, budget;
    double best_scalar; /* of the run's scalar objective, +inf when none feasible */
    double hypervolume;
    double elapsed_seconds;
} se_progress;

/* A fixed design the run evaluates beside its search (`search
 * --baseline`): a preset or an architecture file, as the caller loaded it,
 * and the name the report gives it. */
#define SE_MAX_BASELINES 8
#define SE_BASELINE_NAME_BYTES 256
typedef struct se_baseline {
    char name[SE_BASELINE_NAME_BYTES];
    arch_spec arch;
} se_baseline;

typedef struct se_run_options {
    se_algo algo;
    uint64_t seed;
    int64_t budget; /* hardware candidates to evaluate (the baseline excluded) */
    int batch;      /* candidates per iteration */
    int threads;    /* candidates evaluated at once */
    int n_objectives;
    se_objective objectives[SE_MAX_OBJECTIVES]; /* Pareto front and hypervolume */
    se_objective scalar; /* single-objective engines, and the fusion search's report */
    se_aggregate aggregate;
    int64_t sw_budget;   /* fusion plans per candidate at full fidelity */
    int sh_rounds;       /* CASCO: successive-halving rounds (budgets double) */
    int64_t map_budget;  /* heuristic mappings per distinct tile problem at full fidelity */
    fu_algorithm fusion; /* each candidate's fusion search, when fusion_set */
    bool fusion_set;     /* else se_run_fusion's default */
    map_weights weights; /* per candidate: AUTO (by its capacity), resident or streamed */
    const char *db_path; /* NULL: no store */
    bool resume;         /* continue the matching unfinished run in db_path */
    /* Every op its own layer (BN still folded): the model before epilogue
     * fusion (wl_fuse_epilogues), for studies. */
    bool no_epilogue_fusion;
    /* Fixed designs evaluated after the search with the candidates'
     * software stack at full fidelity (fusion search, software and map
     * budgets, weights rule, precision, models), each at its own native
     * batch; not stored: a resumed run evaluates them again, and the same
     * seed gives the same numbers. */
    int n_baselines;
    const se_baseline *baselines;
    volatile int *stop_flag; /* set (SIGINT) to stop after the candidates in flight */
    void (*progress)(void *user, const se_progress *p); /* may be NULL */
    void *progress_user;
} se_run_options;

/* Defaults: CASCO, seed 1, budget 48, batch 8, 1 thread, objectives
 * latency, energy, area; scalar EDP; geomean; sw_budget 2000 plans in 3
 * rounds; map_budget 4000 (a quarter per earlier round); fusion by se_run_fusion; no store. */
void se_run_options_default(se_run_options *o);

/*
 * The fusion search a run gives every candidate -- the one rule: o->fusion
 * when o->fusion_set; else none for HASCO (CASCO's Table I baseline: MOBO
 * over the hardware without fusion; HASCO+Optimus is HASCO with DP); else
 * the template's paper: CASCO's GA on EDGE, FAST's ILP on DATAPATH (so a
 * YAML space follows its template).  Only the GA is anytime: none, DP and
 * ILP run to completion once, whatever the software budget, and CASCO's
 * successive halving then has nothing to raise (se_run gives every
 * candidate one round).
 */
fu_algorithm se_run_fusion(const se_space *s, const se_run_options *o);
/* "none", "ga", "dp", "ilp" (fu_algorithm order), and back. */
const char *se_fusion_name(fu_algorithm a);
bool se_fusion_parse(const char *s, fu_algorithm *out);

/* One evaluated candidate (its final round). */
typedef struct se_candidate {
    int64_t iteration; /* -1: the space's baseline design */
    int32_t slot;
    se_point point;
    se_outcome outcome;
    double y[SE_MAX_OBJECTIVES];
    double scalar;
    int32_t rounds;    /* software-search rounds it received */
    int64_t sw_budget; /* fusion plans spent */
    bool from_store;   /* read back from the store on resume */
} se_candidate;

/* What a workload achieved on one design: the fusion plan's totals and
 * its groups, for the per-layer report. */
typedef struct se_workload_result {
    const char *name;
    bool validation;
    se_outcome outcome;
    fu_plan plan;
    fu_plan_cost cost;
    const wl_graph *graph; /* the run's prepared copy (owned by the result) */
    /* The plan as fusion.h's fu_plan_json gives it, with the workload's
     * name, batch and metrics (the object the run store keeps per
     * workload of a candidate round, and reports draw); owned. */
    json_t *plan_json;
} se_workload_result;

typedef struct se_models se_models;

typedef struct se_result {
    int64_t run_id; /* in the store, 0 without one */
    bool interrupted;
    bool resumed;
    int64_t n_candidates;
    se_candidate *candidates; /* baseline first, then in (iteration, slot) order */
    int64_t n_front;
    int64_t *front; /* indices into candidates, feasible and non-dominated */
    int64_t chosen; /* index into candidates (-1: nothing feasible) */
    int64_t n_curve;
    int64_t *curve_evaluations; /* hypervolume after each iteration */
    double *curve_hypervolume;
    double reference[SE_MAX_OBJECTIVES]; /* the hypervolume's reference point */
    int64_t evaluations_computed;        /* candidate rounds computed in this process */
    int64_t evaluations_loaded;          /* read back from the store */
    int n_workloads;
    se_workload_result *chosen_results; /* per workload, in the order given */
    se_models *models;                  /* owns the workload graphs the results point to */
    /* The fixed designs of se_run_options.baselines, in order (none when
     * the run was interrupted): metrics over the training workloads,
     * aggregated as every candidate's. */
    int n_baselines;
    se_outcome baseline_outcomes[SE_MAX_BASELINES];
    double seconds;
} se_result;

/*
 * Run a co-design search of space s for the workloads (at least one for
 * training).  Errors (bad options, a store that cannot be written, out of
 * memory) return a code; infeasible designs are candidates with reasons.
 * Interruption through o->stop_flag keeps every completed candidate and
 * reports the front so far (result->interrupted).
 */
as_code se_run(const se_space *s, const se_workload *workloads, int n_workloads,
               const se_run_options *o, se_result *out, as_status *st);
void se_result_free(se_result *r);

/*
 * Evaluate one fixed design (`search --arch`) with a run's whole software
 * stack, exactly as a --baseline design is evaluated (se_candidate_init_arch:
 * fusion search, plan and map budgets at full fidelity, weights rule, the
 * models at se_design_precision(a), validation models) -- no hardware search,
 * no store.  out holds the design as its only candidate (iteration -1,
 * point all zero; chosen 0 when feasible), the per-workload results and
 * the o->baselines beside it.  The fusion search is o->fusion when set,
 * else none for HASCO and the GA otherwise (se_run_fusion without a space).
 */
as_code se_run_design(const arch_spec *a, const se_workload *workloads, int n_workloads,
                      const se_run_options *o, se_result *out, as_status *st);

/* The canonical configuration text of a run (what resume compares). */
void se_run_config_text(const se_space *s, const se_workload *workloads, int n_workloads,
                        const se_run_options *o, char *buf, size_t size);

/* ------------------------------------------------- stored runs (read.c) */

/* A run's configuration read back from its text (se_run_config_text):
 * what a stored run was asked, without the space's definition. */
#define SE_CONFIG_MAX_WORKLOADS 16
typedef struct se_run_config {
    char space[256]; /* the space's name */
    se_algo algo;
    int64_t budget;
    int batch;
    int64_t sw_budget;
    int sh_rounds;
    int64_t map_budget;
    map_weights weights;
    se_aggregate aggregate;
    se_objective scalar;
    fu_algorithm fusion;
    bool no_epilogue_fusion;
    int n_objectives;
    se_objective objectives[SE_MAX_OBJECTIVES];
    int n_workloads;
    char model[SE_CONFIG_MAX_WORKLOADS][256];
    bool validation[SE_CONFIG_MAX_WORKLOADS];
    /* A space around a design ("around" line; absent before issue 17). */
    bool around_set;
    se_around around;
} se_run_config;

/* Parse a run's configuration text; AS_EINVAL naming the line when it is
 * not one se_run_config_text wrote. */
as_code se_run_config_parse(const char *text, se_run_config *out, as_status *st);
/* A configuration as a JSON object (space, algo, budgets, objectives,
 * models: [{model, validation}], ...); NULL when out of memory. */
json_t *se_run_config_json(const se_run_config *c);

/* The Pareto front of r's feasible evaluated candidates (their y over
 * n_obj objectives, compared as logarithms) into r->front, and the
 * front's design nearest the ideal point into r->chosen (-1 when none):
 * how a run ends, and how a stored run is read back. */
as_code se_result_front(se_result *r, int n_obj, as_status *st);

/*
 * A stored search run read back into *out, as se_run left it as far as
 * the store keeps it: every candidate's last round (baseline first, in
 * (iteration, slot) order), the front and chosen design (se_result_front
 * over cfg's objectives), the hypervolume curve, and per training
 * workload the chosen design's plan JSON (chosen_results, without graph,
 * plan or cost; validation workloads and --baseline designs are not
 * stored).  s is the run's space (to read points).  Free with
 * se_result_free.
 */
as_code se_result_read(store *db, int64_t run_id, const se_space *s, const se_run_config *cfg,
                       se_result *out, as_status *st);

#endif
