/*
 * templates.c -- the two hardware templates of the co-design search
 * (CASCO's edge setting, FAST's datacenter datapath): each a parameter
 * table and a builder, documented with the source of every number
 * ("assumed" marks what no source gives), and the built-in space of each.
 * space.c turns points of a space into the values these builders take.
 */
#include "space_private.h"

#include <stdio.h>
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
 *   [TPU-v3] build_tpu_v3 in src/arch/presets.c (the chip, two
 *     TensorCores: 16 nm, 940 MHz, 2 x 2 MXUs of 128 x 128 bf16, 2 x 16 MiB
 *     vector memory, 900 GB/s of HBM2, native batch 2 x 64).
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
 * Table 4 puts the modeled TPU-v3 (the chip, two TensorCores: the
 * preset) at 0.6x the area budget and 0.5x the TDP budget.  So
 *   max_area_mm2 = area(tpu_v3) / 0.6,  max_power_W = TDP(tpu_v3) / 0.5,
 * computed from the preset through the tables whenever a space is made
 * (about 154 mm^2 and 154 W; the TDP as vendors mean it, energy.c).  No
 * PE or on-chip limit: FAST has none.
 *
 * Baseline "tpu-v3-like": TPU-v3 as FAST's Table 4 models it -- both
 * TensorCores, 2 x 2 PEs of 128 x 128, L1 shared, L2 disabled, 2 x 16 MiB
 * of global memory (one level of 32 MiB: the template has no per-core
 * memory), native batch 2 x 64; 8 GDDR6 channels (448 GB/s: Table 3's
 * largest, half the chip's 900 GB/s of HBM2, which the space cannot
 * express -- `search --baseline tpu_v3` evaluates the preset itself).
 * TPU-v3 has no per-MXU buffer to copy, but the template requires an L1;
 * it is assumed to hold two 128 x 128 bf16 weight tiles (2 x 32 KiB =
 * 64 KiB), the tile in the array and the next one.
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
    DP_POW2(DP_PE_Y, "pe_y", 1, 256, 1, 1024, 2, false, "PE rows"),
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
                         .lowest = WORD_BYTES, .highest = 4 * GiB, .deflt = 32 * MiB,
                         .bytes = true, .meaning = "bytes of global memory (0: none)"},
    DP_POW2(DP_DRAM_CHANNELS, "dram_channels", 1, 8, 1, 64, 8, false,
            "GDDR6 channels of 56 GB/s"),
    DP_POW2(DP_NATIVE_BATCH, "native_batch", 1, 256, 1, 65536, 128, false,
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
    c->max_area_mm2 = arch_area_mm2(&a) / FAST_TPU_AREA_SHARE;
    c->max_power_W = arch_peak_power_W(&a) / FAST_TPU_TDP_SHARE;
}

/* ---------------------------------------------------------- templates */

static const se_template_def TEMPLATES[] = {
    [SE_TEMPLATE_EDGE] = {SE_TEMPLATE_EDGE, "edge", EDGE_NODE_NM, EDGE_CLOCK_HZ, WL_PREC_FP16,
                          "eyeriss-like", EDGE_N_PARAMS, EDGE_PARAMS, build_edge, edge_limits},
    [SE_TEMPLATE_DATAPATH] = {SE_TEMPLATE_DATAPATH, "datapath", DP_NODE_NM, DP_CLOCK_HZ,
                              WL_PREC_BF16, "tpu-v3-like", DP_N_PARAMS, DP_PARAMS, build_datapath,
                              datapath_limits},
};
#define N_TEMPLATES ((int)(sizeof TEMPLATES / sizeof TEMPLATES[0]))

/* The built-in spaces, one per template, in TEMPLATES' order: EDGE's
 * named after it, DATAPATH's after FAST's setting. */
static const char *const BUILTIN_NAMES[N_TEMPLATES] = {"edge", "datacenter"};

const se_template_def *se_template_get(se_template kind)
{
    if (kind == SE_TEMPLATE_AROUND)
        return &se_around_template;
    return (unsigned)kind < (unsigned)N_TEMPLATES ? &TEMPLATES[kind] : NULL;
}

const se_template_def *se_template_find(const char *name)
{
    for (int k = 0; name && k < N_TEMPLATES; k++)
        if (strcmp(TEMPLATES[k].name, name) == 0)
            return &TEMPLATES[k];
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
    const se_template_def *t = se_template_get(kind);
    memset(s, 0, sizeof *s);
    s->template_kind = kind;
    if (!t)
        return;
    s->technology_nm = t->technology_nm;
    s->clock_hz = t->clock_hz;
    s->precision = t->precision;
    t->limits(&s->limits);
    for (int k = 0; k < t->n_params; k++)
        s->fixed[k] = t->param[k].deflt;
    snprintf(s->baseline_name, sizeof s->baseline_name, "%s", t->baseline_name);
}

/* ------------------------------------------------------------ built-ins */

const char *const *se_space_builtin_names(int *count)
{
    if (count)
        *count = N_TEMPLATES;
    return BUILTIN_NAMES;
}
