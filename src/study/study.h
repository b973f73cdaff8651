/*
 * study.h -- across-stack perturbation studies (DLAS: P. Gibson, J. Cano
 * et al., "DLAS: An Exploration and Assessment of the Deep Learning
 * Acceleration Stack", 2023).
 *
 * A study perturbs every layer of the stack at once and costs the whole
 * grid: models x compression x algorithm x data format x software x
 * hardware.  One *cell* is one point of that grid: a model, compressed
 * (weight pruning, channel pruning, int8, float16), its convolutions
 * lowered by one algorithm (direct, im2col + GEMM, Winograd), its sparse
 * data in one storage format, mapped untuned or tuned (with or without
 * fusion), on one accelerator.  The study runs every cell (OpenMP), keeps
 * each in the run store the moment it is done (a killed study resumes),
 * and then answers the paper's questions: which algorithm and compression
 * is fastest per model and platform (DLAS Tables 3, 4 and 6), what
 * fraction of its expected speedup each compression achieves, and whether
 * MACs, parameters and latency are rank-correlated (Spearman, Kendall).
 *
 * Invalid combinations (Winograd on a model without 3x3 stride-1 convs is
 * not one: those convs stay direct; a model whose weights do not fit, a
 * precision the study cannot express) are cells with a reason, not
 * dropped.  Nothing here prints: text, JSON and CSV (report.c) are
 * written to the FILE * or json_t the caller asks for.
 * docs/study.md states the file format and every rule.
 */
#ifndef AS_STUDY_H
#define AS_STUDY_H

#include <stdio.h>

#include "../arch/arch.h"
#include "../core/core.h"
#include "../store/store.h"
#include "../workload/workload.h"

/* ------------------------------------------------------------- the axes */

/* The six axes of a study, in grid order (the last varies fastest). */
typedef enum study_axis {
    STUDY_AXIS_MODEL,
    STUDY_AXIS_COMPRESSION,
    STUDY_AXIS_ALGORITHM,
    STUDY_AXIS_FORMAT,
    STUDY_AXIS_SOFTWARE,
    STUDY_AXIS_HARDWARE,
    STUDY_NAXES
} study_axis;

const char *study_axis_name(study_axis a); /* "model", "compression", ... */

#define STUDY_NAME_BYTES 64
#define STUDY_PATH_BYTES 256
#define STUDY_MAX_ITEMS 32         /* entries on one axis */
#define STUDY_MAX_LAYER_CHOICES 16 /* per-layer algorithm overrides of one algorithm entry */

/* A model of the study: a zoo name or an ONNX path, with the dataset it
 * is trained for (a label: the tables group models by it). */
typedef struct study_model {
    char name[STUDY_NAME_BYTES];   /* label in tables: the zoo name or the file's stem */
    char source[STUDY_PATH_BYTES]; /* zoo name or .onnx path */
    char dataset[STUDY_NAME_BYTES];
} study_model;

/* What a compression entry does to the model (DLAS section 3.2). */
typedef enum study_compression_kind {
    STUDY_COMPRESS_NONE,            /* the dense fp32 baseline */
    STUDY_COMPRESS_WEIGHT_PRUNING,  /* unstructured: every compute op's weights at `density` */
    STUDY_COMPRESS_CHANNEL_PRUNING, /* structured: keep `keep` of each prunable conv's channels */
    STUDY_COMPRESS_INT8,            /* int8 weights and activations */
    STUDY_COMPRESS_FP16,            /* IEEE half weights and activations */
} study_compression_kind;

const char *study_compression_kind_name(study_compression_kind k); /* "weight_pruning", ... */
/* The paper's short name: "Dense", "WP", "CP", "i8", "f16". */
const char *study_compression_kind_short(study_compression_kind k);

typedef struct study_compression {
    char name[STUDY_NAME_BYTES]; /* label: "wp95", or the kind's short name */
    study_compression_kind kind;
    double density; /* weight pruning: non-zero fraction kept, (0, 1] */
    double keep;    /* channel pruning: fraction of output channels kept, (0, 1] */
    /* The level for model i instead of density / keep (0: the entry's):
     * DLAS picks each model's ratio at its accuracy elbow (Tables 2, 5). */
    double model_level[STUDY_MAX_ITEMS];
} study_compression;

/* An algorithm entry: one lowering for every convolution (a per-model
 * choice), with per-layer overrides (a per-layer choice). */
typedef struct study_algorithm {
    char name[STUDY_NAME_BYTES]; /* label: "direct", "im2col", "winograd2", ... */
    wl_conv_algorithm algorithm; /* for every conv it applies to */
    int n_layers;
    struct {
        char layer[STUDY_NAME_BYTES]; /* op name in the model */
        wl_conv_algorithm algorithm;
    } layers[STUDY_MAX_LAYER_CHOICES];
} study_algorithm;

/* A data format entry: how the hardware stores and computes on sparse
 * data (arch_apply_data_format names and states each). */
typedef struct study_format {
    char name[STUDY_NAME_BYTES]; /* "dense", "bitmask", "rle", "csr", ... */
} study_format;

/* Software: the mapping and fusion the compiler gives every layer. */
typedef struct study_software {
    char name[STUDY_NAME_BYTES]; /* label: "untuned", "tuned", "tuned+fusion" */
    bool tuned;                  /* false: one fixed default mapping per layer */
    int64_t map_budget;          /* tuned: mappings the mapper evaluates per problem */
    bool fusion;                 /* fuse layers (the GA) */
    int64_t fusion_budget;       /* plans the fusion search evaluates */
} study_software;

/* Hardware: a preset, an architecture YAML file, or a point of a design
 * space (the space's YAML or built-in name and one value per parameter). */
typedef struct study_hardware {
    char name[STUDY_NAME_BYTES];   /* label: the preset name or the file's stem */
    char source[STUDY_PATH_BYTES]; /* preset name or .yaml path, or the space */
    bool is_space_point;
    char point[STUDY_PATH_BYTES]; /* space points: "pe_x=14,glb_kib=108,..." */
} study_hardware;

/* Accuracy of one model variant, as data (the study cannot measure it):
 * DLAS Tables 2 and 5 give top-1 per model and compression. */
typedef struct study_accuracy {
    int model, compression; /* indices into the axes */
    double top1;            /* fraction, 0..1 */
} study_accuracy;

/* A whole study, as read from its YAML file (study_load) or built in
 * (study_default). */
typedef struct study_spec {
    char name[STUDY_NAME_BYTES];
    uint64_t seed;
    int batch; /* inference batch (DLAS: 1) */
    int n[STUDY_NAXES];
    study_model model[STUDY_MAX_ITEMS];
    study_compression compression[STUDY_MAX_ITEMS];
    study_algorithm algorithm[STUDY_MAX_ITEMS];
    study_format format[STUDY_MAX_ITEMS];
    study_software software[STUDY_MAX_ITEMS];
    study_hardware hardware[STUDY_MAX_ITEMS];
    int n_accuracy;
    study_accuracy accuracy[STUDY_MAX_ITEMS * STUDY_MAX_ITEMS];
} study_spec;

/* Read a study file (strict YAML: unknown keys, bad values and unknown
 * zoo names or presets fail naming file, line and key).  docs/study.md
 * has the format. */
as_code study_load(const char *path, study_spec *out, as_status *st);
/* The same from text in memory (display_name names it in messages). */
as_code study_parse(const char *text, size_t size, const char *display_name, study_spec *out,
                    as_status *st);
/* The level compression c applies to model m: its density (weight
 * pruning) or kept fraction (channel pruning), 1 for the others. */
double study_compression_level(const study_compression *c, int model);
/* The built-in default study, docs/studies/dlas.yaml (compiled in): the
 * shape of DLAS's CIFAR-10 and ImageNet grids on our presets. */
as_code study_default(study_spec *out, as_status *st);
/* The canonical text of a spec: a study file with every field spelled
 * out, which study_parse reads back to the same spec and the store
 * compares byte for byte on resume.  Malloc'd; NULL when out of memory. */
char *study_canonical(const study_spec *s);

/* Cells in the grid (the product of the axis lengths). */
int64_t study_cell_count(const study_spec *s);
/* The axis indices of cell `index` (row-major, hardware fastest), and
 * back. */
void study_cell_coords(const study_spec *s, int64_t index, int coords[STUDY_NAXES]);
int64_t study_cell_index(const study_spec *s, const int coords[STUDY_NAXES]);

/* ------------------------------------------------------------ one cell */

/* What one cell costs.  Model figures describe the model as compressed
 * and lowered for this cell (MACs of the lowered convolutions: Winograd
 * has fewer; effective MACs count only non-zero weights). */
typedef struct study_cell {
    int coords[STUDY_NAXES];
    bool valid;
    char reason[256]; /* why not, when invalid */
    as_metrics metrics;
    int64_t macs;           /* MACs of the lowered model (dense count) */
    int64_t effective_macs; /* MACs with a non-zero weight (weight density applied) */
    int64_t params;         /* the model's parameters after channel pruning (before BN
                               folding and lowering: the model's own count) */
    int64_t nonzero_params; /* of which non-zero, after weight pruning */
    int64_t weight_bytes;   /* weights as stored after lowering, at their precision */
    int64_t dram_bytes;     /* per inference */
    int n_lowered;          /* convs the algorithm lowered (others stay direct) */
    double accuracy;        /* top-1 from the study's data, NaN when not given */
} study_cell;

/* ------------------------------------------------------------- running */

typedef struct study_options {
    int threads;             /* 0: OpenMP's default */
    volatile int *stop_flag; /* polled between cells: stop, keep what is done */
    store *db;               /* NULL: keep nothing */
    bool resume;             /* continue the newest unfinished run of this study */
    void (*progress)(void *user, int64_t done, int64_t total);
    void *progress_user;
} study_options;

void study_options_default(study_options *o);

/* A study's cells, in grid order (cells[i] is cell i). */
typedef struct study_result {
    study_spec spec;
    int64_t run_id; /* in the store, 0 without one */
    int64_t n_cells;
    study_cell *cells; /* malloc'd */
    int64_t n_done;    /* cells evaluated (all, unless stopped) */
    bool interrupted;  /* the stop flag ended it early */
} study_result;

/* Cost one cell of s (deterministic: the seed and the cell's index give
 * every random stream).  An invalid combination is a cell with a reason;
 * the status is for failures (out of memory, unreadable model). */
as_code study_cell_run(const study_spec *s, int64_t index, int threads, study_cell *out,
                       as_status *st);
/* Run every cell of s (those already in the store when resuming are read
 * back, not run again), each stored as it completes. */
as_code study_run(const study_spec *s, const study_options *o, study_result *out, as_status *st);
/* A study's configuration in the run store is this prefix and the
 * study's canonical text: what tells a study's run from a search's. */
#define STUDY_CONFIG_PREFIX "study:"
/* Whether a run's stored configuration is a study's. */
bool study_is_config(const char *config);
/* Read a stored study run back: its spec and every stored cell (cells not
 * stored are invalid with reason "not run"). */
as_code study_read(store *db, int64_t run_id, study_result *out, as_status *st);
void study_result_free(study_result *r);

/* ------------------------------------------------------------ analysis */

/* Rank correlation of two samples (ties get their mean rank): Spearman's
 * rho and Kendall's tau-b; NaN when n < 2 or a sample is constant.
 * Both are O(n log n) (Kendall by Knight's merge-sort count). */
double study_spearman(const double *x, const double *y, int64_t n);
double study_kendall(const double *x, const double *y, int64_t n);

/*
 * The summary of a study, as DLAS Tables 3, 4 and 6 summarise its figures:
 * per (model, hardware, software) row, over the valid cells of that row
 * (the fastest data format taken for each combination):
 *   - per compression, the fastest algorithm ("Fastest algorithm" columns);
 *   - per algorithm, the fastest compression ("Fastest compression");
 *   - the overall fastest compression + algorithm.
 * Indices are into the spec's axes; -1 where no valid cell exists.
 */
typedef struct study_summary_row {
    int model, hardware, software;
    int best_algorithm[STUDY_MAX_ITEMS];   /* per compression */
    int best_compression[STUDY_MAX_ITEMS]; /* per algorithm */
    int best_format[STUDY_MAX_ITEMS];      /* per compression: the format of the fastest cell */
    int overall_compression, overall_algorithm, overall_format;
    double overall_latency_s;
} study_summary_row;

/* What fraction of its expected speedup a compression achieves
 * (DLAS 5.1.2: "we achieve 77.9% of the expected speedup"): speedup =
 * baseline latency / compressed latency at the same algorithm, format,
 * software and hardware; expected = the MAC reduction for pruning
 * (baseline effective MACs / compressed effective MACs: 1 / density for
 * weight pruning, the smaller problem's reduction for channel pruning),
 * the byte reduction for precision (baseline weight bytes / compressed
 * weight bytes: 32 / bits).
 * Averaged (geometric mean of the fractions) over models and algorithms,
 * per hardware and software.  Each side of a pair is taken at its fastest
 * data format (as the summary rows are), so that a dense baseline is not
 * charged a sparse format's metadata. */
typedef struct study_speedup {
    int compression, hardware, software;
    int n;                /* cells averaged */
    double mean_speedup;  /* geometric mean */
    double mean_expected; /* geometric mean */
    double mean_fraction; /* geometric mean of speedup / expected */
    int n_reached;        /* pairs at >= STUDY_REACHED_FRACTION of their expected speedup */
} study_speedup;

/* A compression "reaches" its expected speedup at this fraction of it. */
#define STUDY_REACHED_FRACTION 0.9
/* Two figures are "strongly correlated" when |Spearman's rho| is at least
 * this (the usual reading of 0.7 as a strong monotone relation). */
#define STUDY_STRONG_CORRELATION 0.7

/* Rank correlations across the valid cells (per hardware, and pooled
 * with hardware = -1). */
typedef struct study_correlation {
    int hardware;      /* -1: every cell */
    const char *x, *y; /* "macs", "params", "nonzero_params", "latency", "accuracy", ... */
    int64_t n;
    double spearman, kendall;
} study_correlation;

/* One of DLAS's observations, as our grid supports or contradicts it. */
typedef struct study_observation {
    const char *id;     /* "I", "IV", ... (DLAS section 6) */
    const char *claim;  /* the paper's words, shortened */
    int verdict;        /* 1 supported, 0 not, -1 the grid cannot say */
    char evidence[384]; /* the numbers behind the verdict, one line */
} study_observation;

typedef struct study_summary {
    int64_t n_rows;
    study_summary_row *rows; /* malloc'd */
    int64_t n_speedups;
    study_speedup *speedups; /* malloc'd */
    int64_t n_correlations;
    study_correlation *correlations; /* malloc'd */
    int n_observations;
    study_observation observations[16];
} study_summary;

/* Analyse a (possibly partial) result.  The baseline of a compression is
 * the study's first entry of kind STUDY_COMPRESS_NONE (speedups are left
 * out when there is none). */
as_code study_summarize(const study_result *r, study_summary *out, as_status *st);
void study_summary_free(study_summary *s);
/* "supported", "not supported", "cannot say" for a verdict 1, 0, -1. */
const char *study_verdict_name(int verdict);

/* -------------------------------------------------------------- output */

/*
 * The three forms of a study (report.c): the CLI writes them, tests read
 * them.  Each writes only to the FILE * it is given (nothing here prints
 * by itself), and fails with AS_EIO when writing fails.
 */

/* The paper's tables as text: per dataset and software one table of
 * fastest algorithms and compressions (DLAS Table 3's columns: Platform,
 * Model, "Fastest algorithm" per compression, "Fastest compression" per
 * algorithm, "Overall fastest" as "WP+im2col" with its latency), the
 * fractions of expected speedup, the rank correlations, the observations
 * with verdict and evidence, and the invalid cells counted per reason.
 * Every quantity carries its unit ("1.23 ms", "4.00x", "77.9 %").
 * s may be NULL: only the invalid cells are written then. */
as_code study_write_text(FILE *f, const study_result *r, const study_summary *s, as_status *st);

/* The study as a JSON object (a new reference; NULL when out of memory,
 * st says so): {"study": {name, seed, batch, run_id, cells, done,
 * interrupted}, "axes": {model: [...], compression: [...], ...}, "cells":
 * [one object per cell: coordinates as labels, valid, reason, metrics in
 * SI units, model figures, accuracy (null when not given)], "summary":
 * {rows, speedups, correlations, observations} (when s is given),
 * "invalid": [{reason, cells}, ...]}.  Numbers go through as_json_number (non-finite is
 * null). */
json_t *study_to_json(const study_result *r, const study_summary *s, as_status *st);

/* The data of a study's HTML report (src/report: rp_write_html draws an
 * object by its "kind"): study_to_json's object with "kind": "study"
 * added, its other members unchanged.  s is required (the report draws
 * the summary).  A new reference; NULL when out of memory, st says so. */
json_t *study_report_data(const study_result *r, const study_summary *s, as_status *st);

/* One CSV row per cell (RFC 4180: CRLF line ends, a field with a comma,
 * quote or line break quoted, its quotes doubled), after a header whose
 * names carry the units: index, model, dataset, compression, algorithm,
 * format, software, hardware, valid, reason, latency_s, energy_J,
 * area_mm2, power_W, edp_Js, perf_per_tdp, macs, effective_macs, params,
 * nonzero_params, weight_bytes, dram_bytes, n_lowered, accuracy (empty
 * when not given; metrics empty for invalid cells). */
as_code study_write_csv(FILE *f, const study_result *r, as_status *st);

#endif
