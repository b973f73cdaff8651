/*
 * arch.h -- accelerator architectures: a storage hierarchy from registers
 * to DRAM over a compute unit, with the energy and area of every part.
 *
 * An arch_spec is a plain fixed-size struct (no pointers), so that a
 * search can copy, compare and hash candidates freely.  Levels are listed
 * innermost first: level 0 sits next to the MACs, the last level is the
 * backing store (DRAM).  Timeloop's v0.4 "dummy" containers that only
 * carry spatial fanout (inter_PE_spatial) are levels that keep nothing.
 *
 * Counting conventions (Timeloop's): a *word* is one element of a data
 * space (word_bits wide); a *vector access* moves block_size words (one
 * SRAM row); energies in the tables are per vector action, in pJ.
 */
#ifndef AS_ARCH_H
#define AS_ARCH_H

#include "../core/core.h"
#include "../workload/workload.h"

#define ARCH_MAX_LEVELS 12 /* Simba-like Timeloop designs have 9 storage levels */
#define ARCH_NAME_BYTES 64

typedef enum arch_class {
    ARCH_CLASS_DRAM,
    ARCH_CLASS_SRAM,
    ARCH_CLASS_REGFILE,
    ARCH_CLASS_DUMMY, /* keeps nothing; carries spatial fanout only */
} arch_class;

/* Energy of one vector action at a storage level, pJ.  A fill is a write
 * that brings data from the parent; an update is a write of a partial sum
 * from the child. */
typedef struct arch_energy {
    double read_pJ;
    double fill_pJ;
    double update_pJ;
    double leak_pJ; /* per cycle, per instance */
} arch_energy;

/* Whether a level holds a data space: the mapper's choice, or forced. */
typedef enum arch_keep {
    ARCH_KEEP_FREE = 0,
    ARCH_KEEP_ALWAYS,
    ARCH_KEEP_NEVER, /* bypassed: accelsearch's `keep:` list leaves it out */
} arch_keep;

/*
 * Mapping constraints of one level: what a mapper may choose there
 * (Timeloop's architecture_constraints, and the `constraints:` of
 * accelsearch's own format).  Dimensions are problem slots (wl_dim); a
 * Timeloop input's names are mapped to slots as its problem's are.  All
 * zero means unconstrained.
 */
typedef struct arch_constraints {
    int64_t temporal_factor[WL_NDIMS]; /* 0 = free, else the factor is fixed */
    int64_t temporal_max[WL_NDIMS];    /* 0 = unbounded, else an upper bound */
    int n_temporal_order;              /* the first n dims of temporal_order, innermost */
    uint8_t temporal_order[WL_NDIMS];  /*   first, are fixed; the others are free */
    int64_t spatial_factor[WL_NDIMS];  /* 0 = free, else fixed (1 forbids unrolling it) */
    int n_spatial_order;
    uint8_t spatial_order[WL_NDIMS];
    bool spatial_split_fixed;
    int spatial_split;              /* when fixed: spatial_order[0 .. split) unroll on X */
    double min_spatial_utilization; /* 0..1: used children / fanout must reach it */
    arch_keep keep[WL_NDATASPACES];
} arch_constraints;

/*
 * Sparse storage (docs/sparse.md; Sparseloop, Wu et al., MICRO 2022): how
 * a level stores a data space's tiles.  Uncompressed (zero) stores every
 * element, zeros included.  The compressed formats store the non-zeros
 * plus metadata, per tile of T dense elements of which d*T are non-zero
 * (d the data space's density, in expectation):
 *   bitmask  one bit per element of the dense tile: T bits;
 *   rle      a run-length field of r bits per non-zero: d*T*r bits;
 *   csr      the tile as a matrix (rows: its outermost rank of extent > 1,
 *            the rest along a row): rows + 1 offsets of o bits (UOP) and a
 *            coordinate of c bits per non-zero (CP);
 *   coo      per non-zero one coordinate per rank of extent > 1, c bits
 *            each (each rank's ceil(log2 extent) by default).
 * Widths of zero take the stated defaults (arch_format_bits).
 */
typedef enum arch_format {
    ARCH_FORMAT_UNCOMPRESSED = 0,
    ARCH_FORMAT_BITMASK,
    ARCH_FORMAT_RLE,
    ARCH_FORMAT_CSR,
    ARCH_FORMAT_COO,
} arch_format;
#define ARCH_FORMAT_COUNT 5
/* The default run-length field: 5 bits, Eyeriss v1's RLE (Chen et al.,
 * JSSC 2017: 5-bit runs, 16-bit values). */
#define ARCH_RLE_DEFAULT_BITS 5

typedef struct arch_ds_format {
    arch_format format;
    /* rle: run-length bits; csr, coo: coordinate bits; 0 = the default
     * (rle 5; csr ceil(log2 row length); coo ceil(log2 extent) per rank). */
    int metadata_bits;
    /* csr: row-offset bits; 0 = ceil(log2(T + 1)), enough to index any
     * non-zero of the tile. */
    int offset_bits;
} arch_ds_format;

/* "uncompressed", "bitmask", "rle", "csr", "coo"; "?" out of range. */
const char *arch_format_name(arch_format f);

typedef struct arch_level {
    char name[ARCH_NAME_BYTES];
    arch_class cls;
    /* Capacity in words of one instance: 0 = unbounded (DRAM).  When
     * size_words_by_ds has any non-zero entry the capacity is split per data
     * space (FAST's per-data-space L1 sizes) and size_words is their sum. */
    int64_t size_words;
    int64_t size_words_by_ds[WL_NDATASPACES];
    int word_bits;     /* datawidth */
    int block_size;    /* words per vector access: width / (datawidth * cluster_size) */
    int cluster_size;  /* instances sharing one access port (Timeloop's cluster) */
    int64_t instances; /* mesh_x * mesh_y */
    int mesh_x, mesh_y;
    double multiple_buffering;
    /* Bandwidth per instance in words per cycle; 0 = unlimited. */
    double read_bandwidth;
    double write_bandwidth;
    double shared_bandwidth;
    arch_energy energy;
    double area_um2; /* one instance */
    /* Network from this level to its children. */
    bool multicast; /* one parent read may feed several children */
    bool spatial_reduction;
    double hop_pJ; /* per word per hop; 0 = wires not costed */
    arch_constraints constraints;
    /* Per data space: its storage format here (all uncompressed: dense). */
    arch_ds_format format[WL_NDATASPACES];
} arch_level;

typedef enum arch_compute_kind {
    ARCH_COMPUTE_MAC,      /* independent MAC units */
    ARCH_COMPUTE_SYSTOLIC, /* each instance a systolic array of rows x cols MACs */
    ARCH_COMPUTE_VECTOR,   /* each instance a vector of `rows` lanes */
} arch_compute_kind;

typedef enum arch_dataflow {
    ARCH_DATAFLOW_OS, /* output stationary */
    ARCH_DATAFLOW_WS, /* weight stationary */
    ARCH_DATAFLOW_IS, /* input stationary */
} arch_dataflow;

/* Number format of the MAC operands: integers, IEEE binary floating point
 * (fp8 E4M3, fp16, fp32, fp64 by mac_bits) or bfloat16 (mac_bits 16).
 * INT is zero so that a zero-filled arch_compute is integer. */
typedef enum arch_number {
    ARCH_NUMBER_INT,
    ARCH_NUMBER_FP,
    ARCH_NUMBER_BF16,
} arch_number;

/*
 * Compute-side zero handling (Sparseloop's compute SAFs): what a MAC does
 * when an operand it checks (arch_compute.zero_operand) is zero.  Gating:
 * the MAC is idle -- it costs gated_mac_fraction of its energy -- but
 * still takes its cycle.  Skipping: the MAC is not issued, saving its
 * energy and its cycle; it needs each checked operand stored compressed
 * at the innermost level that can keep it (the metadata says where the
 * next non-zero is), and a systolic array, whose PEs move in lockstep,
 * cannot skip.
 */
typedef enum arch_zero_action {
    ARCH_ZERO_NONE = 0,
    ARCH_ZERO_GATE,
    ARCH_ZERO_SKIP,
} arch_zero_action;

/* "none", "gate", "skip"; "?" out of range. */
const char *arch_zero_action_name(arch_zero_action z);

typedef struct arch_compute {
    char name[ARCH_NAME_BYTES];
    arch_compute_kind kind;
    int64_t instances; /* mesh_x * mesh_y: MAC units, or arrays when systolic */
    int mesh_x, mesh_y;
    int rows, cols; /* systolic array shape (1 x 1 for a MAC unit) */
    arch_dataflow dataflow;
    int mac_bits;           /* operand precision */
    arch_number mac_number; /* operand format */
    double mac_pJ;          /* one multiply-accumulate */
    double area_um2;        /* one instance */
    /* Inside a systolic array (energy.c, arch_apply_tables): one access of a
     * PE's operand register (mac_bits wide) and of its partial-sum register
     * (the accumulator's width), and one operand word or partial sum moved
     * one PE pitch.  Zero for other kinds of compute unit. */
    double pe_reg_pJ, pe_acc_reg_pJ;
    double pe_hop_pJ, pe_acc_hop_pJ;
    /* Zero handling (none: every MAC runs and costs its energy). */
    arch_zero_action zero_action;
    bool zero_operand[WL_NDATASPACES]; /* the operands checked: weights, inputs */
    double gated_mac_fraction;         /* energy of a gated MAC / a full one, 0..1 */
} arch_compute;

typedef struct arch_dram {
    char type[16]; /* "LPDDR4", "HBM2", "DDR4", ... */
    int channels;
    double bandwidth_GBps;       /* total, all channels */
    double energy_pJ_per_bit;    /* a bit moved, all of it: the devices and the interface */
    double interface_pJ_per_bit; /* of which the chip's own DRAM interface (PHY, controller) */
} arch_dram;

typedef struct arch_spec {
    char name[ARCH_NAME_BYTES];
    int technology_nm;
    double cycle_seconds; /* 1 / clock */
    int n_levels;
    arch_level level[ARCH_MAX_LEVELS]; /* innermost first; the last is the backing store */
    arch_compute compute;
    arch_dram dram;
    int native_batch; /* FAST: batch the datapath is built for (1 when n/a) */
} arch_spec;

/* ---------------------------------------------------------- validation */

/* Check that a is physically meaningful: at least one level, positive
 * sizes, word bits, block sizes and instance counts, meshes that multiply
 * to the instances, fanout from each level to the next that divides
 * evenly, non-negative energies and bandwidths.  Names the level and key. */
as_code arch_validate(const arch_spec *a, as_status *st);

/* Whether level l can hold data space ds at all: it stores data (not a
 * dummy), its keep constraint does not exclude ds, and a per-data-space
 * capacity split gives ds room. */
bool arch_level_can_hold(const arch_level *l, wl_dataspace_id ds);

/* Spatial positions of the compute units on X and Y: the places a
 * mapping can unroll a loop over.  A MAC unit or a systolic array is one
 * position (the fold model works inside an array); a vector unit is one
 * position per lane, its `rows` lanes laid out along X (mesh_x * rows by
 * mesh_y), so that lanes are a spatial level like any PE mesh. */
int64_t arch_compute_mesh_x(const arch_spec *a);
int64_t arch_compute_mesh_y(const arch_spec *a);

/* Fanout from level i to the level below (or to the compute positions,
 * lanes included, for i = 0): positions below / instances of level i. */
int64_t arch_fanout(const arch_spec *a, int i);
/* The same per mesh axis: children per instance on X and on Y (mesh below
 * / own mesh, a mesh side not set counting 1); 0 x 0 for a level out of
 * range. */
void arch_fanout_xy(const arch_spec *a, int i, int64_t *x, int64_t *y);

/* ------------------------------------------------- energy, area, power */

/*
 * Built-in technology tables (energy.c): SRAM and register-file energy per
 * access as a function of capacity, width and ports; MAC energy per
 * precision; DRAM energy per bit; wire energy per mm; area per component.
 * Each table states its source and node; values move between nodes by the
 * rule documented in energy.c.
 */
double arch_sram_access_pJ(int64_t capacity_bytes, int width_bits, int node_nm);
double arch_regfile_access_pJ(int64_t capacity_bytes, int width_bits, int node_nm);
double arch_sram_area_um2(int64_t capacity_bytes, int width_bits, int node_nm);
double arch_regfile_area_um2(int64_t capacity_bytes, int width_bits, int node_nm);
double arch_mac_pJ(int bits, bool is_float, int node_nm);
double arch_mac_area_um2(int bits, bool is_float, int node_nm);
/* The same for any operand format; a format the tables do not cover
 * (e.g. a 12-bit float) gives a negative value. */
double arch_mac_number_pJ(int bits, arch_number number, int node_nm);
double arch_mac_number_area_um2(int bits, arch_number number, int node_nm);
/* pJ per bit; negative for a type not in the table. */
double arch_dram_pJ_per_bit(const char *dram_type);
/* The part of it spent in the accelerator chip's DRAM interface (PHY and
 * controller), pJ per bit; negative for a type not in the table. */
double arch_dram_interface_pJ_per_bit(const char *dram_type);
/* On-chip wire, pJ per bit per mm. */
double arch_wire_pJ_per_bit_mm(int node_nm);
/* The node-scaling rule: energy and area at node_nm relative to 45 nm.
 * The tables cover ARCH_NODE_MIN_NM .. ARCH_NODE_MAX_NM. */
#define ARCH_NODE_MIN_NM 7
#define ARCH_NODE_MAX_NM 130
double arch_node_energy_scale(int node_nm);
double arch_node_area_scale(int node_nm);
/* Fill every energy and area left at zero in a from the tables. */
void arch_apply_tables(arch_spec *a);
/* Area of the whole design, mm^2 (all instances of every level and unit). */
double arch_area_mm2(const arch_spec *a);
/* Bits of the accumulator behind a MAC of `bits` and `number` (energy.c
 * states the assumption): what partial sums are stored and moved in. */
int arch_accumulator_bits(int bits, arch_number number);
/* Significand bits of a number format of `bits` total: with the hidden bit
 * for floats (fp8 E4M3 4, fp16 11, bf16 8, fp32 24, fp64 53), the
 * magnitude bits (bits - 1, the sign apart) for integers; 0 when the
 * tables have no such format.  A float's exponent is the rest:
 * bits - significand. */
int arch_significand_bits(int bits, arch_number number);
/* Peak power (TDP), W, as vendors mean it: the chip's thermal design
 * power -- the cost model's energies of the chip at the largest rate it
 * can charge them (energy.c states why each rate bounds it): every MAC
 * busy, the data movement inside systolic arrays at full rate, every
 * on-chip level at its bandwidths plus leakage, and the chip's DRAM
 * interface (PHY and controller) at the DRAM's bandwidth.  The DRAM
 * devices' own energy is not the chip's and is not counted. */
double arch_peak_power_W(const arch_spec *a);
/* The same, by part (total_W is arch_peak_power_W). */
typedef struct arch_power {
    double mac_W;    /* every MAC busy */
    double array_W;  /* registers and hops inside systolic arrays */
    double onchip_W; /* on-chip levels at their bandwidths, leakage included */
    double dram_W;   /* the DRAM interface (interface_pJ_per_bit) at the DRAM's bandwidth */
    double total_W;
} arch_power;
void arch_peak_power_parts(const arch_spec *a, arch_power *out);

/* The storage precision whose words the MACs take as they are: int8 up to
 * 8-bit operands, bf16 or fp16 up to 16 bits (by the operand format),
 * fp32 above -- the widths to run a model at to see the design as its
 * makers ran it, applied with wl_set_storage_precision (the operands
 * as-hardware): on 16-bit integer MACs fp16 stands for the width only, and
 * wl_set_precision would emulate it (docs/precision.md). */
wl_precision arch_mac_precision(const arch_spec *a);

/* ------------------------------------------------------------ builders */

/*
 * What the presets and the search's design spaces build designs with.
 * arch_begin starts *a empty (name, node, clock; native batch 1);
 * arch_add_level appends the next level outwards and completes it
 * (instances from the mesh, size_words as the sum of a per-data-space
 * split, cluster 1, single buffering); arch_add_dram appends the backing
 * store of `type` with `channels` and a total bandwidth of GBps over a bus
 * of bus_bits, as shared words per cycle at the design's clock;
 * arch_finish sets the compute unit (instances from its mesh) and fills
 * every energy and area left at zero from the tables.
 */
void arch_begin(arch_spec *a, const char *name, int node_nm, double clock_hz);
void arch_add_level(arch_spec *a, arch_level l);
void arch_add_dram(arch_spec *a, const char *type, int channels, double GBps, int bus_bits,
                   int word_bits);
void arch_finish(arch_spec *a, arch_compute c);

/* ------------------------------------------------- sparse data formats */

/*
 * Named data-format configurations (the study's "data format" axis),
 * applied to any design: "dense" (no change); "bitmask" (weights bitmask
 * at every level that can keep them, DRAM included; MACs gate zero
 * weights); "rle" (weights run-length coded in DRAM only; MACs gate zero
 * weights -- Eyeriss v1); "csr" (weights CSR at every level that can keep
 * them; MACs skip zero weights -- SCNN/EIE).  A design that cannot do it
 * is refused with a reason (a systolic array cannot skip: "csr" is
 * refused there, not turned into gating).  Unknown names list the valid
 * ones.  On success *a is updated and passes arch_validate.
 */
as_code arch_apply_data_format(arch_spec *a, const char *name, as_status *st);
/* The names arch_apply_data_format knows, in order; *count set. */
const char *const *arch_data_format_names(int *count);
/* Whether a declares any compressed format or compute zero handling: if
 * not, its costs are the dense ones whatever the densities. */
bool arch_is_sparse(const arch_spec *a);

/* ------------------------------------------------------------- presets */

typedef struct arch_preset {
    const char *name;        /* "eyeriss" */
    const char *description; /* one line */
    const char *source;      /* where the parameters come from */
    void (*build)(arch_spec *out);
} arch_preset;

/* Eyeriss, ShiDianNao, EdgeTPU, TPU-v3, Gemmini, VTA, Simba. */
const arch_preset *arch_presets(int *count);
const arch_preset *arch_preset_find(const char *name);

/* ----------------------------------------------------------------- files */

/*
 * A SCALE-Sim configuration file (scalesim_cfg.c; docs/scalesim-import.md):
 * one systolic array of ArrayHeight x ArrayWidth int8 MACs with its
 * Dataflow, over one SRAM split per data space (IFMAP, FILTER and OFMAP
 * SramSzkB, in one-byte words, double buffered) and a DRAM (unlimited in
 * InterfaceBandwidth = CALC, 3 x Bandwidth words per cycle in USER), at
 * 45 nm and 1 GHz.  Errors name the file, line, column and key.
 */
as_code arch_scalesim_load(const char *path, arch_spec *out, as_status *st);
/* The same from text in memory; display_name stands for the file. */
as_code arch_scalesim_parse(const char *text, size_t size, const char *display_name, arch_spec *out,
                            as_status *st);
/* Whether path names a SCALE-Sim configuration (ends in ".cfg", any case). */
bool arch_is_scalesim_path(const char *path);

/* Write a in accelsearch's YAML format, so that arch_load reads back the
 * same spec (presets become editable files). */
as_code arch_save(const arch_spec *a, const char *path, as_status *st);

/* Load an architecture: a preset name, a SCALE-Sim .cfg
 * (arch_scalesim_load), or a YAML file in accelsearch's own format
 * (documented in docs/arch-format.md).  Strict: unknown keys,
 * wrong types and impossible values fail naming file, line and key. */
as_code arch_load(const char *preset_or_path, arch_spec *out, as_status *st);
/* The clock in MHz as a person writes it: the shortest decimal that reads
 * back to a's period exactly (1000, not 999.9999999999999, for 1 ns). */
double arch_clock_MHz(const arch_spec *a);

#endif
