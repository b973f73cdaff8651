/*
 * space.c -- design spaces: the two templates and their built-in spaces,
 * points (indices, unit-cube coordinates, text, JSON), and the decoding of
 * a point into an arch_spec checked against the space's budgets.  The
 * file format is space_yaml.c's (docs/space-format.md).
 *
 * A template is a parameter table plus a builder.  A space lists a subset
 * of its template's parameters, each with a range inside the table's hard
 * limits; the template parameters it leaves out hold the space's fixed
 * values.  A point is one index per listed parameter.  Decoding turns the
 * indices into values, lays the values of *all* template parameters side
 * by side in the template's order (fixed ones filled in) and hands them to
 * the template's builder, which knows nothing of spaces.  A finished
 * space keeps its parameters in template order (se_space_finish sorts
 * them), so matching them to the template is one merge walk -- decode is
 * called some 100k times by engines and tests and allocates nothing.
 *
 * The two templates are documented where their tables are, with the
 * sources of every number; "assumed" marks what no source gives.
 */
#include "space_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)

/* The datapath width of both templates: Eyeriss's 16-bit fixed point and
 * TPU-v3's bf16 operands are both 16-bit words in every buffer. */
#define WORD_BITS 16
#define WORD_BYTES (WORD_BITS / 8)

/* --------------------------------------------------------------- EDGE */

/*
 * EDGE: CASCO's edge setting.  Sources:
 *   [CASCO] the seed paper, section III.A "Design Constraints": spaces
 *     built from a baseline accelerator's resources (PEs, on-chip and
 *     off-chip memory); PEs searched at a stride of 1, on-chip memory at
 *     a stride of 8 B, off-chip memory at a stride of 16 KB; the edge
 *     constraint power < 2 W, which "results in" fewer than 384 PEs.
 *   [Eyeriss] Y.-H. Chen et al., ISSCC 2016 / JSSC 52(1) 2017, the
 *     baseline (see build_eyeriss in src/arch/presets.c): 65 nm, 200 MHz,
 *     16-bit fixed point, 14 x 12 PEs, 0.5 KB of scratch pads per PE
 *     (24 + 224 + 12 words = 520 B), a 108 KB global buffer, a 64-bit
 *     off-chip bus; core area 3.5 mm x 3.5 mm.
 *
 * The hardware, innermost first:
 *   - pe_x x pe_y MAC units (16-bit integer), one per PE.  The count is
 *     searched at a stride of 1 through its two sides (CASCO's PE count;
 *     the mesh's shape matters to the mapper's spatial unrolling);
 *   - "RegFile": one register file per PE, rf_bytes, *unified* over the
 *     data spaces.  Eyeriss's three scratch pads become one buffer of
 *     their total: CASCO searches one on-chip capacity per level, not a
 *     split, and the mapper chooses what each PE keeps.  (Its energy per
 *     access is therefore that of a 520 B array where Eyeriss's spads are
 *     smaller, and its area that of flip-flops throughout where Eyeriss's
 *     filter spad is SRAM -- the tables' register file.)  One word per
 *     access (block 1);
 *   - "GlobalBuffer": one SRAM of glb_bytes shared by the array, 4 words
 *     per access as in the Eyeriss preset, with multicast and spatial
 *     reduction on its network (Eyeriss's GLB NoC does both);
 *   - "DRAM": LPDDR4 at 1.6 GB/s over a 64-bit bus, the Eyeriss preset's
 *     (8 B per 200 MHz cycle).  Chosen over the 12.8 GB/s the other edge
 *     presets assume because the baseline must *be* the Eyeriss preset:
 *     CASCO sizes a space from its baseline's resources, and a run's gain
 *     over the baseline should not come from eight times its bandwidth.
 *     Its capacity is offchip_bytes, kept in the DRAM level's size_words
 *     (a finite backing store): decoding cannot know the workload, so the
 *     run (src/search/evaluate.c, take_offchip_capacity) takes it from
 *     there and checks each model's off-chip footprint against it.
 *
 * Budgets:
 *   - max_power_W 2: CASCO's edge constraint.  With the tables at 65 nm
 *     and 200 MHz no design within the other budgets comes near it (they
 *     peak at 0.6 W at most; even the space's largest corner, 32 x 32 PEs
 *     with 2 KiB register files, peaks at 1.3 W); it binds when a file
 *     raises clock_MHz or the ranges;
 *   - max_pes 384: CASCO's resulting PE bound;
 *   - max_area_mm2 12.25: CASCO's printed area limit (5e3 um^2) is
 *     smaller than one PE's register file, so the budget is calibrated
 *     instead: Eyeriss's own core area, 3.5 mm x 3.5 mm.  The tables
 *     (storage and MACs, no control or NoC) give the baseline 5.8 mm^2,
 *     leaving twice its area to spend; the budget binds for large arrays
 *     and buffers -- 384 PEs with Eyeriss's 520 B register files reach
 *     it, as does a 1 MiB global buffer beside the baseline's 168 PEs,
 *     and 2 KiB register files run out at about 100 PEs;
 *   - max_onchip_bytes 512 KiB: CASCO bounds on-chip memory by its
 *     baseline's.  Eyeriss holds 193 KiB; the edge setting lets PEs grow
 *     2.3x over Eyeriss's 168 (to 384), and on-chip memory gets the same
 *     headroom (445 KiB), rounded up to a power of two.
 *
 * The workloads run at fp16: wl_precision has no 16-bit integer, and what
 * the run takes from the precision is the width of every tensor -- 16
 * bits, Eyeriss's word.  The arch costs the MACs as the 16-bit integers
 * they are (mac_number INT).
 */
enum { EDGE_PE_X, EDGE_PE_Y, EDGE_RF_BYTES, EDGE_GLB_BYTES, EDGE_OFFCHIP_BYTES, EDGE_N_PARAMS };

#define EDGE_NODE_NM 65
#define EDGE_CLOCK_HZ 200e6
#define EDGE_GLB_BLOCK 4
#define EDGE_DRAM_GBPS 1.6
#define EDGE_DRAM_BUS_BITS 64

/* clang-format off */
static const se_template_param EDGE_PARAMS[EDGE_N_PARAMS] = {
    [EDGE_PE_X] = {.range = {.name = "pe_x", .kind = SE_PARAM_INT, .min = 1, .max = 32,
                             .stride = 1},
                   .lowest = 1, .highest = 1024, .granule = 1, .deflt = 14,
                   .meaning = "PE columns (PEs = pe_x * pe_y)"},
    [EDGE_PE_Y] = {.range = {.name = "pe_y", .kind = SE_PARAM_INT, .min = 1, .max = 32,
                             .stride = 1},
                   .lowest = 1, .highest = 1024, .granule = 1, .deflt = 12,
                   .meaning = "PE rows"},
    /* Whole 16-bit words; Eyeriss's 520 B is on the 8 B grid from 16 B. */
    [EDGE_RF_BYTES] = {.range = {.name = "rf_bytes", .kind = SE_PARAM_INT, .min = 16,
                                 .max = 2 * KiB, .stride = 8},
                       .lowest = WORD_BYTES, .highest = 1 * MiB, .granule = WORD_BYTES,
                       .deflt = 520, .bytes = true,
                       .meaning = "bytes of register file per PE"},
    /* Whole 4-word rows (8 B); 108 KiB is on the grid from 1 KiB. */
    [EDGE_GLB_BYTES] = {.range = {.name = "glb_bytes", .kind = SE_PARAM_INT, .min = 1 * KiB,
                                  .max = 1 * MiB, .stride = 8},
                        .lowest = EDGE_GLB_BLOCK * WORD_BYTES, .highest = 1 * GiB,
                        .granule = EDGE_GLB_BLOCK * WORD_BYTES, .deflt = 108 * KiB,
                        .bytes = true, .meaning = "bytes of global buffer"},
    /* Eyeriss publishes no DRAM size: the baseline takes the largest, so
     * it only refuses what no edge memory would hold (VGG-16's 16-bit
     * weights alone are 264 MiB, hence 1 GiB rather than 256 MiB). */
    [EDGE_OFFCHIP_BYTES] = {.range = {.name = "offchip_bytes", .kind = SE_PARAM_INT,
                                      .min = 16 * KiB, .max = 1 * GiB, .stride = 16 * KiB},
                            .lowest = WORD_BYTES, .highest = 1024 * GiB,
                            .granule = WORD_BYTES, .deflt = 1 * GiB, .bytes = true,
                            .meaning = "bytes of DRAM (checked against each model's footprint)"},
};
/* clang-format on */

/* The hardware of an EDGE point from the values of all its template's
 * parameters (see above). */
static void build_edge(const se_space *s, const int64_t *v, arch_spec *a)
{
    int pe_x = (int)v[EDGE_PE_X], pe_y = (int)v[EDGE_PE_Y];
    arch_begin(a, s->name, s->technology_nm, s->clock_hz);
    arch_add_level(a, (arch_level){.name = "RegFile",
                                   .cls = ARCH_CLASS_REGFILE,
                                   .word_bits = WORD_BITS,
                                   .block_size = 1,
                                   .mesh_x = pe_x,
                                   .mesh_y = pe_y,
                                   .size_words = v[EDGE_RF_BYTES] / WORD_BYTES});
    arch_add_level(a, (arch_level){.name = "GlobalBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = WORD_BITS,
                                   .block_size = EDGE_GLB_BLOCK,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words = v[EDGE_GLB_BYTES] / WORD_BYTES,
                                   .multicast = true,
                                   .spatial_reduction = true});
    arch_add_dram(a, "LPDDR4", 1, EDGE_DRAM_GBPS, EDGE_DRAM_BUS_BITS, WORD_BITS);
    a->level[a->n_levels - 1].size_words = v[EDGE_OFFCHIP_BYTES] / WORD_BYTES;
    arch_finish(a, (arch_compute){.name = "MAC",
                                  .kind = ARCH_COMPUTE_MAC,
                                  .mesh_x = pe_x,
                                  .mesh_y = pe_y,
                                  .rows = 1,
                                  .cols = 1,
                                  .mac_bits = WORD_BITS,
                                  .mac_number = ARCH_NUMBER_INT});
}

/* EDGE's budgets (see above). */
static void edge_limits(se_constraints *c)
{
    *c = (se_constraints){.max_area_mm2 = 3.5 * 3.5,
                          .max_power_W = 2.0,
                          .max_pes = 384,
                          .max_onchip_bytes = 512 * KiB};
}

/* ----------------------------------------------------------- DATAPATH */

/*
 * DATAPATH: FAST's accelerator template.  Sources:
 *   [FAST] the seed paper: section 4.4 and Table 3 (the parameters and
 *     their values), Figure 5 (the datapath), Table 4 (TPU-v3 as FAST
 *     models it: two TensorCores, each 2 PEs of 128 x 128, a 16 MiB
 *     global buffer, batch 64; at 0.5x of FAST's TDP budget and 0.6x of
 *     its area budget; FAST's designs peak at 443 GB/s of GDDR6).
 *   [TPU-v3] build_tpu_v3 in src/arch/presets.c (one TensorCore: 16 nm,
 *     940 MHz, 2 MXUs of 128 x 128 bf16, 16 MiB vector memory, HBM2).
 *
 * The hardware, innermost first:
 *   - pe_x x pe_y PEs (the mesh of Figure 5), each a systolic array of
 *     sa_y rows x sa_x columns of bf16 MACs (weight stationary, as TPU's
 *     MXU) -- a vector unit of the longer side's lanes when one side is
 *     1, a scalar MAC when both are;
 *   - "L1", one per PE.  l1_config is FAST's L1_buffer_config: private =
 *     one buffer per data space (l1_input_bytes, l1_weight_bytes,
 *     l1_output_bytes: size_words_by_ds), shared = one buffer of
 *     l1_total_bytes for all (how FAST reaches Eyeriss with private and
 *     TPUs with shared buffers);
 *   - "L2", optional (l2_config disabled / private / shared, the same
 *     split as L1's).  Each size is its multiplier times the L1 parameter
 *     it is paired with in Table 3: l2_input_mult x l1_input_bytes, ...,
 *     l2_total_mult x l1_total_bytes -- the L1 *parameter*, whichever way
 *     L1 itself is configured.  Reading: one L2 shared by the PE grid,
 *     not one per PE.  Figure 5 draws the L1s inside the PEs and L2
 *     beside the grid; FAST's related work describes the usual datapath
 *     as "private L1 and global L2 scratchpads"; and with a per-PE L2 a
 *     design without global memory would have no level the PEs share;
 *   - "GlobalMemory", optional: one SRAM of global_bytes (0 = none), the
 *     level FAST fusion pins tensors in;
 *   - "DRAM": dram_channels GDDR6 channels of 56 GB/s each (32 bits at
 *     14 Gb/s per pin, JEDEC GDDR6's common speed grade; eight give 448
 *     GB/s, within 1.2% of the 443 GB/s of FAST's Table 4 designs), read
 *     in lockstep as one bus of 32 bits per channel; 7.5 pJ/bit from
 *     energy.c's DRAM table.
 * Every on-chip buffer delivers one edge of the array per access (block =
 * the longer side: a weight-stationary array takes one input per row and
 * gives one output per column each cycle; 128 words as the TPU preset's
 * vector memory, 1 for a MAC).  The shared levels multicast to the PEs
 * (no spatial reduction: as the TPU preset).  native_batch goes into
 * a->native_batch: the run evaluates the workloads at that batch and
 * reports per inference.
 *
 * Budgets: FAST gives "a power and area budget similar to TPU-v3": its
 * Table 4 puts the modeled TPU-v3 (two TensorCores, i.e. twice the
 * preset) at 0.6x the area budget and 0.5x the TDP budget.  So
 *   max_area_mm2 = 2 x area(tpu_v3) / 0.6,  max_power_W = 2 x TDP(tpu_v3) / 0.5,
 * computed from the preset through the tables whenever a space is made
 * (about 154 mm^2 and 105 W).  No PE or on-chip limit: FAST has none.
 *
 * Baseline "tpu-v3-like": one TensorCore -- 2 x 1 PEs of 128 x 128, L1
 * shared, L2 disabled, 16 MiB global memory, 8 GDDR6 channels (448 GB/s,
 * the nearest to the core's 450 GB/s of HBM2), native batch 1.  TPU-v3
 * has no per-MXU buffer to copy, but the template requires an L1; it is
 * assumed to hold two 128 x 128 bf16 weight tiles (2 x 32 KiB = 64 KiB),
 * the tile in the array and the next one.  Batch 1 rather than FAST's 64
 * keeps the baseline at the preset's operating point (native batch 1), so
 * that its latency is the latency of one inference on the TPU-v3 preset.
 */
enum {
    DP_PE_X,
    DP_PE_Y,
    DP_SA_X,
    DP_SA_Y,
    DP_L1_CONFIG,
    DP_L1_INPUT_BYTES,
    DP_L1_WEIGHT_BYTES,
    DP_L1_OUTPUT_BYTES,
    DP_L1_TOTAL_BYTES,
    DP_L2_CONFIG,
    DP_L2_INPUT_MULT,
    DP_L2_WEIGHT_MULT,
    DP_L2_OUTPUT_MULT,
    DP_L2_TOTAL_MULT,
    DP_GLOBAL_BYTES,
    DP_DRAM_CHANNELS,
    DP_NATIVE_BATCH,
    DP_N_PARAMS
};

/* Choice indices of the two buffer configurations. */
enum { L1_PRIVATE, L1_SHARED };
enum { L2_DISABLED, L2_PRIVATE, L2_SHARED };

#define DP_NODE_NM 16
#define DP_CLOCK_HZ 940e6
#define GDDR6_GBPS_PER_CHANNEL 56.0
#define GDDR6_BITS_PER_CHANNEL 32
#define TPU_V3_CORES 2
#define FAST_TPU_AREA_SHARE 0.6
#define FAST_TPU_TDP_SHARE 0.5

/* A POW2 parameter of the datapath: range lo..hi, hard limits, default. */
#define DP_POW2(id, nm, lo, hi, low, high, dflt, is_bytes, text)                                   \
    [id] = {.range = {.name = nm, .kind = SE_PARAM_POW2, .min = lo, .max = hi},                    \
            .lowest = low,                                                                         \
            .highest = high,                                                                       \
            .deflt = dflt,                                                                         \
            .bytes = is_bytes,                                                                     \
            .meaning = text}

/* clang-format off */
static const se_template_param DP_PARAMS[DP_N_PARAMS] = {
    DP_POW2(DP_PE_X, "pe_x", 1, 256, 1, 1024, 2, false, "PE columns"),
    DP_POW2(DP_PE_Y, "pe_y", 1, 256, 1, 1024, 1, false, "PE rows"),
    DP_POW2(DP_SA_X, "sa_x", 1, 256, 1, 1024, 128, false, "systolic array columns per PE"),
    DP_POW2(DP_SA_Y, "sa_y", 1, 256, 1, 1024, 128, false, "systolic array rows per PE"),
    [DP_L1_CONFIG] = {.range = {.name = "l1_config", .kind = SE_PARAM_ENUM, .n_choices = 2,
                                .choice = {"private", "shared"}},
                      .deflt = L1_SHARED,
                      .meaning = "L1 per data space (private) or one for all (shared)"},
    /* Unused by the baseline (L1 shared); their sum is its 64 KiB. */
    DP_POW2(DP_L1_INPUT_BYTES, "l1_input_bytes", 1 * KiB, 1 * MiB, WORD_BYTES, 1 * GiB, 16 * KiB,
            true, "bytes of private L1 for inputs, per PE"),
    DP_POW2(DP_L1_WEIGHT_BYTES, "l1_weight_bytes", 1 * KiB, 1 * MiB, WORD_BYTES, 1 * GiB,
            32 * KiB, true, "bytes of private L1 for weights, per PE"),
    DP_POW2(DP_L1_OUTPUT_BYTES, "l1_output_bytes", 1 * KiB, 1 * MiB, WORD_BYTES, 1 * GiB,
            16 * KiB, true, "bytes of private L1 for outputs, per PE"),
    DP_POW2(DP_L1_TOTAL_BYTES, "l1_total_bytes", 1 * KiB, 1 * MiB, WORD_BYTES, 1 * GiB, 64 * KiB,
            true, "bytes of shared L1, per PE"),
    [DP_L2_CONFIG] = {.range = {.name = "l2_config", .kind = SE_PARAM_ENUM, .n_choices = 3,
                                .choice = {"disabled", "private", "shared"}},
                      .deflt = L2_DISABLED,
                      .meaning = "L2 (one, shared by the PEs): none, per data space, or one"},
    DP_POW2(DP_L2_INPUT_MULT, "l2_input_mult", 1, 128, 1, 1024, 1, false,
            "private L2 for inputs = this x l1_input_bytes"),
    DP_POW2(DP_L2_WEIGHT_MULT, "l2_weight_mult", 1, 128, 1, 1024, 1, false,
            "private L2 for weights = this x l1_weight_bytes"),
    DP_POW2(DP_L2_OUTPUT_MULT, "l2_output_mult", 1, 128, 1, 1024, 1, false,
            "private L2 for outputs = this x l1_output_bytes"),
    DP_POW2(DP_L2_TOTAL_MULT, "l2_total_mult", 1, 128, 1, 1024, 1, false,
            "shared L2 = this x l1_total_bytes"),
    [DP_GLOBAL_BYTES] = {.range = {.name = "global_bytes", .kind = SE_PARAM_POW2, .min = 1 * MiB,
                                   .max = 256 * MiB, .zero_allowed = true},
                         .lowest = WORD_BYTES, .highest = 4 * GiB, .deflt = 16 * MiB,
                         .bytes = true, .meaning = "bytes of global memory (0: none)"},
    DP_POW2(DP_DRAM_CHANNELS, "dram_channels", 1, 8, 1, 64, 8, false,
            "GDDR6 channels of 56 GB/s"),
    DP_POW2(DP_NATIVE_BATCH, "native_batch", 1, 256, 1, 65536, 1, false,
            "batch the datapath runs (per-inference results)"),
};
/* clang-format on */

/* Which L1 size parameter, and which L2 multiplier, serve each data space
 * of a private buffer. */
static const int L1_BYTES_BY_DS[WL_NDATASPACES] = {
    [WL_DS_WEIGHTS] = DP_L1_WEIGHT_BYTES,
    [WL_DS_INPUTS] = DP_L1_INPUT_BYTES,
    [WL_DS_OUTPUTS] = DP_L1_OUTPUT_BYTES,
};
static const int L2_MULT_BY_DS[WL_NDATASPACES] = {
    [WL_DS_WEIGHTS] = DP_L2_WEIGHT_MULT,
    [WL_DS_INPUTS] = DP_L2_INPUT_MULT,
    [WL_DS_OUTPUTS] = DP_L2_OUTPUT_MULT,
};

/*
 * A buffer level of the datapath called name over a mesh_x x mesh_y of
 * instances, `block` words per access: split per data space (the L1 size
 * parameters, each times its multiplier) when private, else one buffer of
 * total_bytes.  mult_by_ds is NULL for multipliers of 1 (L1).
 */
static arch_level datapath_buffer(const char *name, const int64_t *v, bool private_split,
                                  const int *mult_by_ds, int64_t total_bytes, int block, int mesh_x,
                                  int mesh_y)
{
    arch_level l = {.cls = ARCH_CLASS_SRAM,
                    .word_bits = WORD_BITS,
                    .block_size = block,
                    .mesh_x = mesh_x,
                    .mesh_y = mesh_y,
                    .multicast = mesh_x * mesh_y == 1};
    snprintf(l.name, sizeof l.name, "%s", name);
    if (!private_split) {
        l.size_words = total_bytes / WORD_BYTES;
        return l;
    }
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        int64_t mult = mult_by_ds ? v[mult_by_ds[ds]] : 1;
        l.size_words_by_ds[ds] = mult * v[L1_BYTES_BY_DS[ds]] / WORD_BYTES;
    }
    return l;
}

/* The PEs of a datapath point: a systolic array when both sides exceed
 * one, a vector of the longer side's lanes when one side is 1, a MAC
 * when both are. */
static arch_compute datapath_compute(int pe_x, int pe_y, int sa_x, int sa_y)
{
    arch_compute c = {.mesh_x = pe_x,
                      .mesh_y = pe_y,
                      .mac_bits = WORD_BITS,
                      .mac_number = ARCH_NUMBER_BF16,
                      .rows = 1,
                      .cols = 1};
    if (sa_x > 1 && sa_y > 1) {
        snprintf(c.name, sizeof c.name, "systolic");
        c.kind = ARCH_COMPUTE_SYSTOLIC;
        c.rows = sa_y;
        c.cols = sa_x;
        c.dataflow = ARCH_DATAFLOW_WS;
    } else if (sa_x > 1 || sa_y > 1) {
        snprintf(c.name, sizeof c.name, "vector");
        c.kind = ARCH_COMPUTE_VECTOR;
        c.rows = sa_x > sa_y ? sa_x : sa_y;
    } else {
        snprintf(c.name, sizeof c.name, "MAC");
        c.kind = ARCH_COMPUTE_MAC;
    }
    return c;
}

/* The hardware of a DATAPATH point from the values of all its template's
 * parameters (see above). */
static void build_datapath(const se_space *s, const int64_t *v, arch_spec *a)
{
    int pe_x = (int)v[DP_PE_X], pe_y = (int)v[DP_PE_Y];
    int sa_x = (int)v[DP_SA_X], sa_y = (int)v[DP_SA_Y];
    int block = sa_x > sa_y ? sa_x : sa_y;
    int channels = (int)v[DP_DRAM_CHANNELS];
    arch_begin(a, s->name, s->technology_nm, s->clock_hz);
    a->native_batch = (int)v[DP_NATIVE_BATCH];
    arch_add_level(a, datapath_buffer("L1", v, v[DP_L1_CONFIG] == L1_PRIVATE, NULL,
                                      v[DP_L1_TOTAL_BYTES], block, pe_x, pe_y));
    if (v[DP_L2_CONFIG] != L2_DISABLED)
        arch_add_level(a, datapath_buffer("L2", v, v[DP_L2_CONFIG] == L2_PRIVATE, L2_MULT_BY_DS,
                                          v[DP_L2_TOTAL_MULT] * v[DP_L1_TOTAL_BYTES], block, 1, 1));
    if (v[DP_GLOBAL_BYTES] > 0)
        arch_add_level(
            a, datapath_buffer("GlobalMemory", v, false, NULL, v[DP_GLOBAL_BYTES], block, 1, 1));
    arch_add_dram(a, "GDDR6", channels, GDDR6_GBPS_PER_CHANNEL * channels,
                  GDDR6_BITS_PER_CHANNEL * channels, WORD_BITS);
    arch_finish(a, datapath_compute(pe_x, pe_y, sa_x, sa_y));
}

/* DATAPATH's budgets: FAST's, relative to TPU-v3 (see above).  Without
 * the preset (never, short of a renamed preset, which the tests catch)
 * there is no limit. */
static void datapath_limits(se_constraints *c)
{
    const arch_preset *tpu = arch_preset_find("tpu_v3");
    *c = (se_constraints){0};
    if (!tpu)
        return;
    arch_spec a;
    tpu->build(&a);
    c->max_area_mm2 = arch_area_mm2(&a) * TPU_V3_CORES / FAST_TPU_AREA_SHARE;
    c->max_power_W = arch_peak_power_W(&a) * TPU_V3_CORES / FAST_TPU_TDP_SHARE;
}

/* ---------------------------------------------------------- templates */

/* What a template adds to its table: how it builds and what it allows. */
typedef struct template_impl {
    se_template_def def;
    void (*build)(const se_space *s, const int64_t *value, arch_spec *a);
    void (*limits)(se_constraints *c);
} template_impl;

static const template_impl TEMPLATES[] = {
    [SE_TEMPLATE_EDGE] = {{SE_TEMPLATE_EDGE, "edge", EDGE_NODE_NM, EDGE_CLOCK_HZ, WL_PREC_FP16,
                           "eyeriss-like", EDGE_N_PARAMS, EDGE_PARAMS},
                          build_edge,
                          edge_limits},
    [SE_TEMPLATE_DATAPATH] = {{SE_TEMPLATE_DATAPATH, "datapath", DP_NODE_NM, DP_CLOCK_HZ,
                               WL_PREC_BF16, "tpu-v3-like", DP_N_PARAMS, DP_PARAMS},
                              build_datapath,
                              datapath_limits},
};
#define N_TEMPLATES ((int)(sizeof TEMPLATES / sizeof TEMPLATES[0]))

/* The built-in spaces, one per template, in TEMPLATES' order: EDGE's
 * named after it, DATAPATH's after FAST's setting. */
static const char *const BUILTIN_NAMES[N_TEMPLATES] = {"edge", "datacenter"};

static const template_impl *impl_of(se_template kind)
{
    return (unsigned)kind < (unsigned)N_TEMPLATES ? &TEMPLATES[kind] : NULL;
}

const se_template_def *se_template_get(se_template kind)
{
    const template_impl *t = impl_of(kind);
    return t ? &t->def : NULL;
}

const se_template_def *se_template_find(const char *name)
{
    for (int k = 0; name && k < N_TEMPLATES; k++)
        if (strcmp(TEMPLATES[k].def.name, name) == 0)
            return &TEMPLATES[k].def;
    return NULL;
}

int se_template_param_find(const se_template_def *t, const char *name)
{
    for (int k = 0; name && k < t->n_params; k++)
        if (strcmp(t->param[k].range.name, name) == 0)
            return k;
    return -1;
}

void se_template_param_names(const se_template_def *t, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (int k = 0; k < t->n_params && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? ", " : "",
                                 t->param[k].range.name);
}

void se_space_init(se_space *s, se_template kind)
{
    const template_impl *t = impl_of(kind);
    memset(s, 0, sizeof *s);
    s->template_kind = kind;
    if (!t)
        return;
    s->technology_nm = t->def.technology_nm;
    s->clock_hz = t->def.clock_hz;
    s->precision = t->def.precision;
    t->limits(&s->limits);
    for (int k = 0; k < t->def.n_params; k++)
        s->fixed[k] = t->def.param[k].deflt;
    snprintf(s->baseline_name, sizeof s->baseline_name, "%s", t->def.baseline_name);
}

/* ------------------------------------------------------- parameter checks */

static bool is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* log2 of a power of two. */
static int log2_of(int64_t v)
{
    int n = 0;
    while (v > 1) {
        v >>= 1;
        n++;
    }
    return n;
}

/* Whether text is a NUL-terminated string of at most SE_NAME_BYTES - 1
 * characters (a struct filled in code may hold anything). */
static bool terminated(const char text[SE_NAME_BYTES])
{
    return memchr(text, '\0', SE_NAME_BYTES) != NULL;
}

/* The index of the choice called name in t's choices, or -1. */
static int template_choice(const se_template_param *t, const char *name)
{
    for (int c = 0; c < t->range.n_choices; c++)
        if (strcmp(t->range.choice[c], name) == 0)
            return c;
    return -1;
}

/* The range checks every bounded kind shares: min and max within the
 * hard limits and in order.  NULL when fine. */
static const char *bounds_problem(const se_template_param *t, const se_param *p, char *why,
                                  size_t size)
{
    if (p->min < t->lowest) {
        snprintf(why, size, "min %lld is below %lld, the least this parameter can be",
                 (long long)p->min, (long long)t->lowest);
        return "min";
    }
    if (p->max > t->highest) {
        snprintf(why, size, "max %lld is above %lld, the most this parameter can be",
                 (long long)p->max, (long long)t->highest);
        return "max";
    }
    if (p->max < p->min) {
        snprintf(why, size, "max %lld is below min %lld: the range is empty", (long long)p->max,
                 (long long)p->min);
        return "max";
    }
    return NULL;
}

/* INT: a positive stride, min and stride on the template's granule, max
 * reached exactly from min. */
static const char *int_problem(const se_template_param *t, const se_param *p, char *why,
                               size_t size)
{
    if (p->stride < 1) {
        snprintf(why, size, "stride %lld must be positive", (long long)p->stride);
        return "stride";
    }
    const char *key = bounds_problem(t, p, why, size);
    if (key)
        return key;
    if (p->min % t->granule || p->stride % t->granule) {
        bool min_off = p->min % t->granule != 0;
        snprintf(why, size, "%s %lld is not a multiple of %lld%s", min_off ? "min" : "stride",
                 (long long)(min_off ? p->min : p->stride), (long long)t->granule,
                 t->bytes ? " bytes (whole words or rows)" : "");
        return min_off ? "min" : "stride";
    }
    if ((p->max - p->min) % p->stride) {
        snprintf(why, size, "max - min = %lld is not a multiple of stride %lld",
                 (long long)(p->max - p->min), (long long)p->stride);
        return "stride";
    }
    return NULL;
}

/* POW2: min and max powers of two within the limits; 0 only where the
 * template has a meaning for it. */
static const char *pow2_problem(const se_template_param *t, const se_param *p, char *why,
                                size_t size)
{
    if (!is_pow2(p->min) || !is_pow2(p->max)) {
        bool min_off = !is_pow2(p->min);
        snprintf(why, size, "%s %lld is not a power of two", min_off ? "min" : "max",
                 (long long)(min_off ? p->min : p->max));
        return min_off ? "min" : "max";
    }
    const char *key = bounds_problem(t, p, why, size);
    if (key)
        return key;
    if (p->zero_allowed && !t->range.zero_allowed) {
        snprintf(why, size, "0 is not a value of this parameter");
        return "zero";
    }
    return NULL;
}

/* ENUM: 1 .. the template's choices, each one of them, none twice. */
static const char *enum_problem(const se_template_param *t, const se_param *p, char *why,
                                size_t size)
{
    if (p->n_choices < 1 || p->n_choices > t->range.n_choices) {
        snprintf(why, size, "%d choices: give 1 to %d of the template's", p->n_choices,
                 t->range.n_choices);
        return "choices";
    }
    for (int c = 0; c < p->n_choices; c++) {
        const char *name = p->choice[c];
        if (!terminated(name) || template_choice(t, name) < 0) {
            snprintf(why, size, "'%.*s' is not a choice (expected %s%s%s%s%s)", SE_NAME_BYTES - 1,
                     name, t->range.choice[0], t->range.n_choices > 1 ? ", " : "",
                     t->range.n_choices > 1 ? t->range.choice[1] : "",
                     t->range.n_choices > 2 ? ", " : "",
                     t->range.n_choices > 2 ? t->range.choice[2] : "");
            return "choices";
        }
        for (int d = 0; d < c; d++)
            if (strcmp(p->choice[d], name) == 0) {
                snprintf(why, size, "'%s' is listed twice", name);
                return "choices";
            }
    }
    return NULL;
}

const char *se_param_problem(const se_template_param *t, const se_param *p, char *why, size_t size)
{
    static const char *const KIND_NAMES[] = {"int", "pow2", "enum"};
    if (p->kind != t->range.kind) {
        bool known = (unsigned)p->kind <= SE_PARAM_ENUM;
        snprintf(why, size, "kind %s does not match the template's %s",
                 known ? KIND_NAMES[p->kind] : "?", KIND_NAMES[t->range.kind]);
        return "kind";
    }
    switch (p->kind) {
    case SE_PARAM_INT:
        return int_problem(t, p, why, size);
    case SE_PARAM_POW2:
        return pow2_problem(t, p, why, size);
    case SE_PARAM_ENUM:
        return enum_problem(t, p, why, size);
    }
    return NULL;
}

bool se_fixed_value_ok(const se_template_param *t, int64_t v, char *why, size_t size)
{
    bool ok;
    switch (t->range.kind) {
    case SE_PARAM_INT:
        ok = v >= t->lowest && v <= t->highest && v % t->granule == 0;
        snprintf(why, size, "%lld is not a multiple of %lld from %lld to %lld", (long long)v,
                 (long long)t->granule, (long long)t->lowest, (long long)t->highest);
        return ok;
    case SE_PARAM_POW2:
        ok = (v == 0 && t->range.zero_allowed) || (is_pow2(v) && v >= t->lowest && v <= t->highest);
        snprintf(why, size, "%lld is not a power of two from %lld to %lld%s", (long long)v,
                 (long long)t->lowest, (long long)t->highest, t->range.zero_allowed ? " or 0" : "");
        return ok;
    case SE_PARAM_ENUM:
        snprintf(why, size, "choice %lld is not one of the template's %d", (long long)v,
                 t->range.n_choices);
        return v >= 0 && v < t->range.n_choices;
    }
    return false;
}

bool se_name_ok(const char *name, char *why, size_t size)
{
    static const char ALLOWED[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789_.+-";
    size_t n = strnlen(name, SE_NAME_BYTES);
    if (n == 0 || n >= SE_NAME_BYTES) {
        snprintf(why, size, "a name has 1 to %d characters", SE_NAME_BYTES - 1);
        return false;
    }
    if (strspn(name, ALLOWED) != n) {
        snprintf(why, size, "'%s' has a character other than letters, digits and _.+-", name);
        return false;
    }
    return true;
}

int64_t se_param_count(const se_param *p)
{
    switch (p->kind) {
    case SE_PARAM_INT:
        return (p->max - p->min) / p->stride + 1;
    case SE_PARAM_POW2:
        return log2_of(p->max) - log2_of(p->min) + 1 + (p->zero_allowed ? 1 : 0);
    case SE_PARAM_ENUM:
        return p->n_choices;
    }
    return 0;
}

/* ------------------------------------------------------------ finishing */

/* A copy of a name with every byte after its NUL cleared, so that equal
 * names are equal arrays (dst and src may be the same). */
static void canonical_name(char dst[SE_NAME_BYTES], const char *src)
{
    char clean[SE_NAME_BYTES] = {0};
    memcpy(clean, src, strnlen(src, SE_NAME_BYTES - 1));
    memcpy(dst, clean, SE_NAME_BYTES);
}

/* Clear what p's kind does not use, so that two spaces that mean the same
 * compare equal field by field (and save writes nothing stray). */
static void canonical_param(se_param *p)
{
    canonical_name(p->name, p->name);
    if (p->kind != SE_PARAM_INT)
        p->stride = 0;
    if (p->kind != SE_PARAM_POW2)
        p->zero_allowed = false;
    if (p->kind == SE_PARAM_ENUM)
        p->min = p->max = 0;
    else
        p->n_choices = 0;
    for (int c = 0; c < SE_MAX_CHOICES; c++) {
        if (c < p->n_choices)
            canonical_name(p->choice[c], p->choice[c]);
        else
            memset(p->choice[c], 0, SE_NAME_BYTES);
    }
    p->n_values = se_param_count(p);
}

/* Everything about s but its parameters: template, names, node, clock,
 * precision, budgets. */
static as_code check_settings(const se_space *s, as_status *st)
{
    char why[160];
    const char *name = terminated(s->name) ? s->name : "?";
    if (!impl_of(s->template_kind))
        return as_fail(st, AS_EINVAL, "space '%s': template %d is not edge or datapath", name,
                       (int)s->template_kind);
    if (!se_name_ok(s->name, why, sizeof why))
        return as_fail(st, AS_EINVAL, "space '%s': name: %s", name, why);
    if (!terminated(s->baseline_name) || !se_name_ok(s->baseline_name, why, sizeof why))
        return as_fail(st, AS_EINVAL, "space '%s': baseline_name: %s", name, why);
    if (s->technology_nm < ARCH_NODE_MIN_NM || s->technology_nm > ARCH_NODE_MAX_NM)
        return as_fail(st, AS_EINVAL, "space '%s': technology_nm %d is outside %d .. %d", name,
                       s->technology_nm, ARCH_NODE_MIN_NM, ARCH_NODE_MAX_NM);
    if (!(s->clock_hz > 0) || !isfinite(s->clock_hz))
        return as_fail(st, AS_EINVAL, "space '%s': clock %g Hz must be positive", name,
                       s->clock_hz);
    if ((unsigned)s->precision > WL_PREC_MIXED)
        return as_fail(st, AS_EINVAL, "space '%s': precision %d is not a precision", name,
                       (int)s->precision);
    const se_constraints *c = &s->limits;
    if (!(c->max_area_mm2 >= 0 && isfinite(c->max_area_mm2)) ||
        !(c->max_power_W >= 0 && isfinite(c->max_power_W)) || c->max_pes < 0 ||
        c->max_onchip_bytes < 0)
        return as_fail(st, AS_EINVAL, "space '%s': constraints must be finite and not negative",
                       name);
    return AS_OK;
}

/* Sort s's parameters (and the baseline with them) into the order of
 * template t, failing on a name t does not have or one given twice.
 * Insertion sort: at most SE_MAX_PARAMS entries. */
static as_code sort_params(se_space *s, const se_template_def *t, as_status *st)
{
    int position[SE_MAX_PARAMS];
    char names[256];
    for (int i = 0; i < s->n_params; i++) {
        const char *pname = terminated(s->param[i].name) ? s->param[i].name : "?";
        position[i] = se_template_param_find(t, pname);
        if (position[i] < 0) {
            se_template_param_names(t, names, sizeof names);
            return as_fail(st, AS_EINVAL,
                           "space '%s': '%s' is not a parameter of the %s template (%s)", s->name,
                           pname, t->name, names);
        }
    }
    for (int i = 1; i < s->n_params; i++) {
        se_param p = s->param[i];
        int64_t b = s->baseline[i];
        int pos = position[i], j = i;
        for (; j > 0 && position[j - 1] > pos; j--) {
            s->param[j] = s->param[j - 1];
            s->baseline[j] = s->baseline[j - 1];
            position[j] = position[j - 1];
        }
        s->param[j] = p;
        s->baseline[j] = b;
        position[j] = pos;
    }
    for (int i = 1; i < s->n_params; i++)
        if (position[i] == position[i - 1])
            return as_fail(st, AS_EINVAL, "space '%s': parameter '%s' is given twice", s->name,
                           s->param[i].name);
    return AS_OK;
}

as_code se_space_finish(se_space *s, as_status *st)
{
    as_code rc = check_settings(s, st);
    if (rc != AS_OK)
        return rc;
    canonical_name(s->name, s->name);
    canonical_name(s->baseline_name, s->baseline_name);
    const se_template_def *t = se_template_get(s->template_kind);
    if (s->n_params < 1 || s->n_params > t->n_params)
        return as_fail(st, AS_EINVAL, "space '%s': %d parameters: give 1 to %d", s->name,
                       s->n_params, t->n_params);
    if ((rc = sort_params(s, t, st)) != AS_OK)
        return rc;
    char why[200];
    bool listed[SE_MAX_PARAMS] = {false};
    for (int i = 0; i < s->n_params; i++) {
        se_param *p = &s->param[i];
        int k = se_template_param_find(t, p->name);
        const char *key = se_param_problem(&t->param[k], p, why, sizeof why);
        if (key)
            return as_fail(st, AS_EINVAL, "space '%s': parameter '%s': %s: %s", s->name, p->name,
                           key, why);
        canonical_param(p);
        if (s->baseline[i] < 0 || s->baseline[i] >= p->n_values)
            return as_fail(st, AS_EINVAL,
                           "space '%s': baseline index %lld of '%s' is outside 0 .. %lld", s->name,
                           (long long)s->baseline[i], p->name, (long long)p->n_values - 1);
        listed[k] = true;
    }
    for (int k = 0; k < SE_MAX_PARAMS; k++) {
        if (k >= t->n_params || listed[k]) {
            s->fixed[k] = k < t->n_params ? t->param[k].deflt : 0;
            continue;
        }
        if (!se_fixed_value_ok(&t->param[k], s->fixed[k], why, sizeof why))
            return as_fail(st, AS_EINVAL, "space '%s': fixed '%s': %s", s->name,
                           t->param[k].range.name, why);
    }
    for (int i = s->n_params; i < SE_MAX_PARAMS; i++) {
        memset(&s->param[i], 0, sizeof s->param[i]);
        s->baseline[i] = 0;
    }
    return AS_OK;
}

/* ------------------------------------------------------------ built-ins */

const char *const *se_space_builtin_names(int *count)
{
    if (count)
        *count = N_TEMPLATES;
    return BUILTIN_NAMES;
}

bool se_space_builtin(const char *name, se_space *out)
{
    for (int k = 0; name && k < N_TEMPLATES; k++) {
        if (strcmp(BUILTIN_NAMES[k], name) != 0)
            continue;
        const se_template_def *t = &TEMPLATES[k].def;
        se_space_init(out, (se_template)k);
        snprintf(out->name, sizeof out->name, "%s", name);
        snprintf(out->source, sizeof out->source, "built-in");
        out->n_params = t->n_params;
        for (int i = 0; i < t->n_params; i++) {
            out->param[i] = t->param[i].range;
            out->param[i].n_values = se_param_count(&out->param[i]);
            out->baseline[i] = se_param_index(&out->param[i], t->param[i].deflt);
        }
        return se_space_finish(out, NULL) == AS_OK;
    }
    return false;
}

/* ---------------------------------------------------------------- values */

int64_t se_param_value(const se_param *p, int64_t index)
{
    if (index >= p->n_values)
        index = p->n_values - 1;
    if (index < 0)
        index = 0;
    switch (p->kind) {
    case SE_PARAM_INT:
        return p->min + index * p->stride;
    case SE_PARAM_POW2:
        if (p->zero_allowed) {
            if (index == 0)
                return 0;
            index--; /* index 0 is the zero in front of min */
        }
        return p->min << index;
    case SE_PARAM_ENUM:
        return index;
    }
    return 0;
}

/* The index of the value of a POW2 parameter nearest v, ties to the
 * lower: a walk over at most 63 values. */
static int64_t pow2_index(const se_param *p, int64_t value)
{
    int64_t best = 0;
    for (int64_t i = 1; i < p->n_values; i++) {
        int64_t here = se_param_value(p, i), below = se_param_value(p, i - 1);
        if (value <= below)
            break;
        /* value > below: compare its distances to below and here */
        if (value >= here || value - below > here - value)
            best = i;
        else
            break;
    }
    return best;
}

int64_t se_param_index(const se_param *p, int64_t value)
{
    int64_t last = p->n_values - 1;
    if (last <= 0)
        return 0;
    switch (p->kind) {
    case SE_PARAM_INT: {
        if (value <= p->min)
            return 0;
        if (value >= p->min + last * p->stride)
            return last;
        int64_t offset = value - p->min;
        int64_t below = offset / p->stride, rest = offset % p->stride;
        return below + (rest > p->stride - rest ? 1 : 0);
    }
    case SE_PARAM_POW2:
        return pow2_index(p, value);
    case SE_PARAM_ENUM:
        return value < 0 ? 0 : value > last ? last : value;
    }
    return 0;
}

int se_space_find(const se_space *s, const char *name)
{
    for (int i = 0; name && i < s->n_params; i++)
        if (strcmp(s->param[i].name, name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- points */

void se_point_from_unit(const se_space *s, const double *x, se_point *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < s->n_params; i++) {
        int64_t n = s->param[i].n_values;
        double cell = x[i] * (double)n; /* NaN and negatives fall to 0 */
        int64_t index = cell > 0 ? (cell < (double)n ? (int64_t)cell : n - 1) : 0;
        out->index[i] = index < n ? index : n - 1;
    }
}

void se_point_to_unit(const se_space *s, const se_point *p, double *x)
{
    for (int i = 0; i < s->n_params; i++)
        x[i] = ((double)p->index[i] + 0.5) / (double)s->param[i].n_values;
}

bool se_point_equal(const se_space *s, const se_point *a, const se_point *b)
{
    for (int i = 0; i < s->n_params; i++)
        if (a->index[i] != b->index[i])
            return false;
    return true;
}

/* Append the printf-formatted piece to buf at *used when all of it fits
 * (with room for `reserve` more bytes); otherwise leave buf as it was.
 * Returns whether it fitted.  Text is cut at piece boundaries only, so a
 * truncated point or JSON object never ends in half a number. */
static bool append(char *buf, size_t size, size_t *used, size_t reserve, const char *fmt, ...)
    AS_PRINTF(5, 6);
static bool append(char *buf, size_t size, size_t *used, size_t reserve, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + reserve >= size - *used) {
        buf[*used] = '\0';
        return false;
    }
    *used += (size_t)n;
    return true;
}

void se_point_format(const se_space *s, const se_point *p, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < s->n_params; i++)
        if (!append(buf, size, &used, 0, "%s%lld", i ? "," : "", (long long)p->index[i]))
            return;
}

bool se_point_parse(const se_space *s, const char *text, se_point *out)
{
    se_point p = {{0}};
    const char *c = text;
    if (!text)
        return false;
    for (int i = 0; i < s->n_params; i++) {
        if (i > 0 && *c++ != ',')
            return false;
        if (*c < '0' || *c > '9')
            return false;
        int64_t index = 0;
        for (; *c >= '0' && *c <= '9'; c++)
            if (!as_mul_i64(index, 10, &index) || !as_add_i64(index, *c - '0', &index))
                return false;
        if (index >= s->param[i].n_values)
            return false;
        p.index[i] = index;
    }
    if (*c != '\0')
        return false;
    *out = p;
    return true;
}

json_t *se_point_params(const se_space *s, const se_point *p)
{
    json_t *params = json_object();
    for (int i = 0; params && i < s->n_params; i++) {
        const se_param *q = &s->param[i];
        int64_t v = se_param_value(q, p->index[i]);
        json_t *value = q->kind == SE_PARAM_ENUM ? as_json_string(q->choice[v]) : json_integer(v);
        if (!as_json_put(params, q->name, value)) {
            json_decref(params);
            params = NULL;
        }
    }
    return params;
}

/* The text of member key of params, "\"key\": value", into a malloc'd
 * string; NULL when out of memory. */
static char *member_text(const char *key, json_t *value)
{
    json_t *one = json_pack("{sO}", key, value);
    char *text = one ? as_json_text(one, 0) : NULL;
    json_decref(one);
    if (text) { /* {"key": value} without its braces */
        size_t n = strlen(text);
        memmove(text, text + 1, n - 2);
        text[n - 2] = '\0';
    }
    return text;
}

void se_point_params_json(const se_space *s, const se_point *p, char *buf, size_t size)
{
    size_t used = 0;
    if (!buf || size == 0)
        return;
    buf[0] = '\0';
    if (size < 3) /* not even "{}" */
        return;
    append(buf, size, &used, 1, "{");
    json_t *params = se_point_params(s, p);
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        char *member = member_text(key, value);
        bool fitted = member && append(buf, size, &used, 1, "%s%s", used > 1 ? ", " : "", member);
        free(member);
        if (!fitted)
            break;
    }
    json_decref(params);
    append(buf, size, &used, 0, "}");
}

/* ---------------------------------------------------------------- decode */

/*
 * The value of every parameter of template t at point p, in t's order:
 * s's parameters (which a finished space keeps in t's order) from p's
 * indices, ENUMs as indices into t's choices; the others from s->fixed.
 * False, with why, when an index is out of its range.
 */
static bool template_values(const se_space *s, const se_template_def *t, const se_point *p,
                            int64_t *value, char *why, size_t size)
{
    int i = 0;
    for (int k = 0; k < t->n_params; k++) {
        const se_param *q = i < s->n_params ? &s->param[i] : NULL;
        if (!q || strcmp(q->name, t->param[k].range.name) != 0) {
            value[k] = s->fixed[k];
            continue;
        }
        int64_t index = p->index[i++];
        if (index < 0 || index >= q->n_values) {
            snprintf(why, size, "index %lld of %s is outside 0 .. %lld", (long long)index, q->name,
                     (long long)q->n_values - 1);
            return false;
        }
        value[k] = se_param_value(q, index);
        if (q->kind == SE_PARAM_ENUM)
            value[k] = template_choice(&t->param[k], q->choice[value[k]]);
    }
    return true;
}

/* Whether every on-chip buffer of a holds at least one access (block_size
 * words) in each of its parts: a buffer narrower than its own access
 * cannot be built.  why says which one does not. */
static bool buffers_buildable(const arch_spec *a, char *why, size_t size)
{
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM || l->cls == ARCH_CLASS_DUMMY)
            continue;
        int64_t smallest = l->size_words;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (l->size_words_by_ds[ds] > 0 && l->size_words_by_ds[ds] < smallest)
                smallest = l->size_words_by_ds[ds];
        if (smallest < l->block_size) {
            snprintf(why, size, "%s holds %lld words, less than one access of %d words", l->name,
                     (long long)smallest, l->block_size);
            return false;
        }
    }
    return true;
}

/* Bytes of on-chip storage in a: every instance of every level but the
 * DRAM. */
static int64_t onchip_bytes(const arch_spec *a)
{
    int64_t bytes = 0;
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls != ARCH_CLASS_DRAM)
            bytes += l->instances * l->size_words * l->word_bits / 8;
    }
    return bytes;
}

/* Whether a meets the budgets of c (0 = no limit), checked in the order
 * area, peak power, PEs, on-chip bytes; why names the first one broken
 * with both numbers. */
static bool within_limits(const se_constraints *c, const arch_spec *a, char *why, size_t size)
{
    double area = arch_area_mm2(a);
    if (c->max_area_mm2 > 0 && area > c->max_area_mm2) {
        snprintf(why, size, "area %.2f mm^2 exceeds the %.2f mm^2 budget", area, c->max_area_mm2);
        return false;
    }
    double power = arch_peak_power_W(a);
    if (c->max_power_W > 0 && power > c->max_power_W) {
        snprintf(why, size, "peak power %.3f W exceeds the %.3f W budget", power, c->max_power_W);
        return false;
    }
    int64_t pes = a->compute.instances * a->compute.rows * a->compute.cols;
    if (c->max_pes > 0 && pes > c->max_pes) {
        snprintf(why, size, "%lld PEs (MACs) exceed the limit of %lld", (long long)pes,
                 (long long)c->max_pes);
        return false;
    }
    int64_t bytes = onchip_bytes(a);
    if (c->max_onchip_bytes > 0 && bytes > c->max_onchip_bytes) {
        snprintf(why, size, "on-chip storage %lld B exceeds the limit of %lld B", (long long)bytes,
                 (long long)c->max_onchip_bytes);
        return false;
    }
    return true;
}

void se_space_decode(const se_space *s, const se_point *p, arch_spec *a, bool *feasible,
                     char *reason, size_t reason_size)
{
    char why[256] = "";
    int64_t value[SE_MAX_PARAMS];
    const template_impl *t = impl_of(s->template_kind);
    bool ok = false;
    if (!t) {
        arch_begin(a, "?", EDGE_NODE_NM, EDGE_CLOCK_HZ);
        snprintf(why, sizeof why, "space '%s' has no template", s->name);
    } else if (!template_values(s, &t->def, p, value, why, sizeof why)) {
        arch_begin(a, s->name, s->technology_nm, s->clock_hz);
    } else {
        as_status st;
        as_status_clear(&st);
        t->build(s, value, a);
        ok = buffers_buildable(a, why, sizeof why);
        if (ok && arch_validate(a, &st) != AS_OK) {
            snprintf(why, sizeof why, "%.250s", st.message);
            ok = false;
        }
        ok = ok && within_limits(&s->limits, a, why, sizeof why);
    }
    *feasible = ok;
    if (reason && reason_size)
        snprintf(reason, reason_size, "%s", ok ? "" : why);
}
