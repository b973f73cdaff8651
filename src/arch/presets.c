/*
 * presets.c -- built-in architectures of published accelerators.
 *
 * Each preset is one small function that states the design's published
 * parameters, with its sources above it; what a source does not give is
 * marked "assumed".  Levels are listed innermost first, as in arch_spec.
 * A buffer that holds one data space only (Eyeriss's per-PE spads,
 * Gemmini's accumulator, ...) gives its capacity in size_words_by_ds for
 * that space alone, so a mapping can keep nothing else there.  Energies
 * and areas come from the tables (arch_apply_tables) at the preset's node,
 * and every on-chip level whose source states no bandwidth gets the ports
 * of set_ports, so that arch_peak_power_W bounds every mapping's power.
 */
#include "arch.h"

#include <string.h>

/* -------------------------------------------------------------- helpers */

/* Start *a as an empty design called name, at node_nm and clock_hz. */
void arch_begin(arch_spec *a, const char *name, int node_nm, double clock_hz)
{
    memset(a, 0, sizeof *a);
    strncpy(a->name, name, sizeof a->name - 1);
    a->technology_nm = node_nm;
    a->cycle_seconds = 1.0 / clock_hz;
    a->native_batch = 1;
}

/* Append level l (the next one outwards) and complete what follows from
 * its fields: instances from the mesh, size_words as the sum of a per data
 * space split, Timeloop's defaults for cluster size and buffering. */
void arch_add_level(arch_spec *a, arch_level l)
{
    l.instances = (int64_t)l.mesh_x * l.mesh_y;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        l.size_words += l.size_words_by_ds[ds];
    l.cluster_size = 1;
    l.multiple_buffering = 1;
    a->level[a->n_levels++] = l;
}

/* Append the backing store: a DRAM of `type` with `channels`, total
 * bandwidth GBps and a bus of bus_bits, holding words of word_bits.  One
 * vector access moves one bus width; the bandwidth becomes the level's
 * shared words per cycle at the design's clock. */
void arch_add_dram(arch_spec *a, const char *type, int channels, double GBps, int bus_bits,
                   int word_bits)
{
    strncpy(a->dram.type, type, sizeof a->dram.type - 1);
    a->dram.channels = channels;
    a->dram.bandwidth_GBps = GBps;
    double words_per_cycle = GBps * 1e9 * 8 / word_bits * a->cycle_seconds;
    arch_add_level(a, (arch_level){.name = "DRAM",
                                   .cls = ARCH_CLASS_DRAM,
                                   .word_bits = word_bits,
                                   .block_size = bus_bits / word_bits,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .shared_bandwidth = words_per_cycle});
}

/* Whether level l may keep data space ds: not excluded by its capacity
 * split or by a keep constraint. */
static bool can_hold(const arch_level *l, int ds)
{
    bool split = false;
    for (int i = 0; i < WL_NDATASPACES; i++)
        split |= l->size_words_by_ds[i] > 0;
    return (!split || l->size_words_by_ds[ds] > 0) && l->constraints.keep[ds] != ARCH_KEEP_NEVER;
}

/* Words of one data space all the compute units take per cycle at full
 * rate: one per MAC unit, one per lane of a vector unit, and per systolic
 * array one row or column (inputs along the left edge, a row of the held
 * operand, a row of partial sums at the bottom: at most max(rows, cols)). */
static double compute_words_per_cycle(const arch_compute *c)
{
    int per_unit = c->kind == ARCH_COMPUTE_SYSTOLIC ? (c->rows > c->cols ? c->rows : c->cols)
                   : c->kind == ARCH_COMPUTE_VECTOR ? c->rows
                                                    : 1;
    return (double)c->instances * per_unit;
}

/*
 * Ports of the on-chip levels whose source states no bandwidth.  Model
 * assumption: a buffer reads, and separately writes, one vector per cycle
 * (block_size words: the published row width) for each data space it can
 * hold -- one port per array when its capacity is split per data space,
 * one bank per data space otherwise (Eyeriss's GLB has separate ifmap,
 * filter and psum buses, JSSC 2017).  The innermost level that can hold a
 * data space feeds the compute units with it, so its port for that space
 * is widened to what they take per cycle at full rate, shared among its
 * instances.  Stated this way, map_evaluate stretches the cycles of a
 * mapping that asks a buffer for more (refetching), and arch_peak_power_W
 * counts what a buffer can be charged (energy.c).
 */
static void set_ports(arch_spec *a)
{
    bool fed[WL_NDATASPACES] = {false};
    for (int i = 0; i < a->n_levels; i++) {
        arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM || l->cls == ARCH_CLASS_DUMMY || l->read_bandwidth > 0 ||
            l->write_bandwidth > 0 || l->shared_bandwidth > 0)
            continue;
        double words = 0;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            if (!can_hold(l, ds))
                continue;
            double port = l->block_size;
            if (!fed[ds] && compute_words_per_cycle(&a->compute) / (double)l->instances > port)
                port = compute_words_per_cycle(&a->compute) / (double)l->instances;
            fed[ds] = true;
            words += port;
        }
        l->read_bandwidth = l->write_bandwidth = words;
    }
}

/* Set the compute units (instances from their mesh), the ports of the
 * levels (set_ports) and fill every energy and area from the tables. */
void arch_finish(arch_spec *a, arch_compute c)
{
    c.instances = (int64_t)c.mesh_x * c.mesh_y;
    a->compute = c;
    set_ports(a);
    arch_apply_tables(a);
}

/* The DRAM assumed where a design publishes none: one LPDDR4-3200 x32
 * channel, 12.8 GB/s (a phone-class memory, as Timeloop's example designs
 * also assume LPDDR4). */
#define EDGE_DRAM_TYPE "LPDDR4"
#define EDGE_DRAM_GBPS 12.8
#define EDGE_DRAM_BUS_BITS 32

/* -------------------------------------------------------------- presets */

/*
 * Eyeriss.  Y.-H. Chen, T. Krishna, J. Emer, V. Sze, "Eyeriss: an
 * energy-efficient reconfigurable accelerator for deep convolutional
 * neural networks", ISSCC 2016 and IEEE JSSC 52(1), 2017: 65 nm, 12 x 14
 * PEs (168), 16-bit fixed point, 108 KB global buffer, per-PE scratch pads
 * of 12 ifmap, 224 filter (SRAM) and 24 psum words (registers), core clock
 * 200 MHz, 64-bit off-chip data bus.  The spads are chained psum < weights
 * < ifmap as in Timeloop's eyeriss_like example.  DRAM: LPDDR4 assumed, at
 * the published bus width and core clock (8 B x 200 MHz = 1.6 GB/s).
 */
static void build_eyeriss(arch_spec *a)
{
    arch_begin(a, "eyeriss", 65, 200e6);
    arch_add_level(a, (arch_level){.name = "psum_spad",
                                   .cls = ARCH_CLASS_REGFILE,
                                   .word_bits = 16,
                                   .block_size = 1,
                                   .mesh_x = 14,
                                   .mesh_y = 12,
                                   .size_words_by_ds = {[WL_DS_OUTPUTS] = 24}});
    arch_add_level(a, (arch_level){.name = "weights_spad",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 16,
                                   .block_size = 1,
                                   .mesh_x = 14,
                                   .mesh_y = 12,
                                   .size_words_by_ds = {[WL_DS_WEIGHTS] = 224}});
    arch_add_level(a, (arch_level){.name = "ifmap_spad",
                                   .cls = ARCH_CLASS_REGFILE,
                                   .word_bits = 16,
                                   .block_size = 1,
                                   .mesh_x = 14,
                                   .mesh_y = 12,
                                   .size_words_by_ds = {[WL_DS_INPUTS] = 12}});
    arch_add_level(a, (arch_level){.name = "GlobalBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 16,
                                   .block_size = 4,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words = 108 * 1024 / 2,
                                   .multicast = true,
                                   .spatial_reduction = true});
    arch_add_dram(a, EDGE_DRAM_TYPE, 1, 1.6, 64, 16);
    arch_finish(a, (arch_compute){.name = "MAC",
                                  .kind = ARCH_COMPUTE_MAC,
                                  .mesh_x = 14,
                                  .mesh_y = 12,
                                  .rows = 1,
                                  .cols = 1,
                                  .mac_bits = 16});
}

/*
 * ShiDianNao.  Z. Du et al., "ShiDianNao: shifting vision processing
 * closer to the sensor", ISCA 2015: 65 nm, 1 GHz, 8 x 8 PEs, 16-bit fixed
 * point, output stationary; on-chip buffers NBin 64 KB, NBout 64 KB and SB
 * (synapses) 128 KB side by side -- one level split per data space; the
 * PE's operand registers are one word per data space (the FIFOs that pass
 * inputs between neighbours are not modelled as storage); SB broadcasts to
 * every PE (multicast).  NBin/NBout deliver a row of 8 PEs per access.
 * DRAM: none published (weights stay on chip); LPDDR4 assumed.
 */
static void build_shidiannao(arch_spec *a)
{
    arch_begin(a, "shidiannao", 65, 1e9);
    arch_add_level(a, (arch_level){.name = "PE_regs",
                                   .cls = ARCH_CLASS_REGFILE,
                                   .word_bits = 16,
                                   .block_size = 1,
                                   .mesh_x = 8,
                                   .mesh_y = 8,
                                   .size_words_by_ds = {1, 1, 1}});
    arch_add_level(a, (arch_level){.name = "NB",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 16,
                                   .block_size = 8,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .multicast = true,
                                   .size_words_by_ds = {[WL_DS_WEIGHTS] = 128 * 1024 / 2,
                                                        [WL_DS_INPUTS] = 64 * 1024 / 2,
                                                        [WL_DS_OUTPUTS] = 64 * 1024 / 2}});
    arch_add_dram(a, EDGE_DRAM_TYPE, 1, EDGE_DRAM_GBPS, EDGE_DRAM_BUS_BITS, 16);
    arch_finish(a, (arch_compute){.name = "MAC",
                                  .kind = ARCH_COMPUTE_MAC,
                                  .mesh_x = 8,
                                  .mesh_y = 8,
                                  .rows = 1,
                                  .cols = 1,
                                  .mac_bits = 16,
                                  .dataflow = ARCH_DATAFLOW_OS});
}

/*
 * Edge TPU (Coral).  Template: K. Seshadri, B. Akin, J. Laudon,
 * R. Narayanaswami, A. Yazdanbakhsh, "An evaluation of Edge TPU
 * accelerators for convolutional neural networks", arXiv 2102.10423
 * (2021) / IISWC 2022 -- a 4 x 4 array of PEs, each with 4 cores of 64
 * SIMD compute lanes, a memory per PE and a memory per core (32 KB).
 * Coral's product data: 4 TOPS int8 (= 4096 MACs x 2 ops at ~500 MHz, the
 * clock used here; the paper quotes 800 MHz for its V1 class), about 8 MB of
 * on-chip SRAM caching parameters (8 MB / 16 PEs = 512 KB per PE), host
 * link PCIe Gen2 x1 (0.5 GB/s) to the host's LPDDR4.  Node: not published;
 * 28 nm assumed.
 */
static void build_edgetpu(arch_spec *a)
{
    arch_begin(a, "edgetpu", 28, 500e6);
    arch_add_level(a, (arch_level){.name = "CoreMemory",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 64,
                                   .mesh_x = 8,
                                   .mesh_y = 8,
                                   .size_words = 32 * 1024});
    arch_add_level(a, (arch_level){.name = "PEMemory",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 64,
                                   .mesh_x = 4,
                                   .mesh_y = 4,
                                   .size_words = 512 * 1024,
                                   .multicast = true});
    arch_add_dram(a, "LPDDR4", 1, 0.5, 64, 8);
    arch_finish(a, (arch_compute){.name = "core",
                                  .kind = ARCH_COMPUTE_VECTOR,
                                  .mesh_x = 8,
                                  .mesh_y = 8,
                                  .rows = 64,
                                  .cols = 1,
                                  .mac_bits = 8});
}

/*
 * TPU v3, the chip: two TensorCores.  N. P. Jouppi et al., "A
 * domain-specific supercomputer for training deep neural networks", CACM
 * 63(7), 2020, and T. Norrie et al., "The design process for Google's
 * training chips: TPUv2 and TPUv3", IEEE Micro 41(2), 2021: 16 nm,
 * 940 MHz, 123 TFLOPS bf16 per chip of 2 cores = 2 MXUs per core, each a
 * 128 x 128 weight-stationary systolic array (bf16 multiply, fp32
 * accumulate); 16 MiB vector memory per core; 32 GiB HBM2 at 900 GB/s per
 * chip (32 channels, 16 per core).  The vector memory delivers 128 lanes
 * (one MXU row) per access.  The cores are two instances of the vector
 * memory, each over its two MXUs, that share nothing on chip: FAST
 * (seed 001, Table 4) treats them "as two separate accelerators" and runs
 * the chip at batch 2 x 64, the native batch here (a mapping splits the
 * batch, or another dimension, over the cores).
 */
static void build_tpu_v3(arch_spec *a)
{
    arch_begin(a, "tpu_v3", 16, 940e6);
    a->native_batch = 2 * 64;
    arch_add_level(a, (arch_level){.name = "VectorMemory",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 16,
                                   .block_size = 128,
                                   .mesh_x = 2,
                                   .mesh_y = 1,
                                   .size_words = 16 * 1024 * 1024 / 2,
                                   .multicast = true});
    arch_add_dram(a, "HBM2", 32, 900, 128, 16);
    arch_finish(a, (arch_compute){.name = "MXU",
                                  .kind = ARCH_COMPUTE_SYSTOLIC,
                                  .mesh_x = 4,
                                  .mesh_y = 1,
                                  .rows = 128,
                                  .cols = 128,
                                  .mac_bits = 16,
                                  .mac_number = ARCH_NUMBER_BF16,
                                  .dataflow = ARCH_DATAFLOW_WS});
}

/*
 * Gemmini.  H. Genc et al., "Gemmini: enabling systematic deep-learning
 * architecture evaluation via full-stack integration", DAC 2021, default
 * configuration (GemminiConfigs.defaultConfig): 16 x 16 systolic mesh,
 * int8 inputs, int32 accumulation, 256 KiB scratchpad (4 banks), 64 KiB
 * accumulator, rows of 16 elements, weight- or output-stationary (WS
 * here), 128-bit DMA bus; evaluated in FireSim at 1 GHz with a DDR3 memory
 * model (16 GB/s assumed: one DDR3-2000 x64 channel).  Node: 22 nm assumed
 * (the paper's SoC tape-out).
 */
static void build_gemmini(arch_spec *a)
{
    arch_begin(a, "gemmini", 22, 1e9);
    arch_add_level(a, (arch_level){.name = "Accumulator",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 32,
                                   .block_size = 16,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words_by_ds = {[WL_DS_OUTPUTS] = 64 * 1024 / 4}});
    arch_add_level(a, (arch_level){.name = "Scratchpad",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 16,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words = 256 * 1024});
    arch_add_dram(a, "DDR3", 1, 16, 128, 8);
    arch_finish(a, (arch_compute){.name = "mesh",
                                  .kind = ARCH_COMPUTE_SYSTOLIC,
                                  .mesh_x = 1,
                                  .mesh_y = 1,
                                  .rows = 16,
                                  .cols = 16,
                                  .mac_bits = 8,
                                  .dataflow = ARCH_DATAFLOW_WS});
}

/*
 * VTA.  T. Moreau et al., "A hardware-software blueprint for flexible
 * deep learning specialization", IEEE Micro 39(5), 2019, default
 * vta_config.json: GEMM core BATCH 1 x BLOCK 16 x 16 (256 int8 MACs per
 * cycle, adder trees over the 16 inputs), int32 accumulators; input buffer
 * 32 KiB, weight buffer 256 KiB (a 16 x 16 tile per access), accumulator
 * 128 KiB; on a PYNQ-Z1 (Zynq-7020, 28 nm) at 100 MHz with 16-bit DDR3
 * (2.1 GB/s).  Tables at 28 nm stand in for an ASIC of the same design.
 */
static void build_vta(arch_spec *a)
{
    arch_begin(a, "vta", 28, 100e6);
    arch_add_level(a, (arch_level){.name = "AccBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 32,
                                   .block_size = 16,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .multicast = true,
                                   .spatial_reduction = true,
                                   .size_words_by_ds = {[WL_DS_OUTPUTS] = 128 * 1024 / 4}});
    arch_add_level(a, (arch_level){.name = "WgtBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 256,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words_by_ds = {[WL_DS_WEIGHTS] = 256 * 1024}});
    arch_add_level(a, (arch_level){.name = "InpBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 16,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words_by_ds = {[WL_DS_INPUTS] = 32 * 1024}});
    arch_add_dram(a, "DDR3", 1, 2.1, 16, 8);
    arch_finish(a, (arch_compute){.name = "GEMM",
                                  .kind = ARCH_COMPUTE_MAC,
                                  .mesh_x = 16,
                                  .mesh_y = 16,
                                  .rows = 1,
                                  .cols = 1,
                                  .mac_bits = 8});
}

/*
 * Simba, one chiplet.  Y. S. Shao et al., "Simba: scaling deep-learning
 * inference with multi-chip-module-based architecture", MICRO 2019, and
 * B. Zimmer et al., JSSC 55(4), 2020: 16 nm, 16 PEs (4 x 4) per chiplet,
 * each with 8 vector MACs of 8 int8 lanes (64 MACs), a 32 KB weight
 * buffer, an 8 KB input buffer and a 3 KB accumulation buffer of 24-bit
 * partial sums; a 64 KB global PE buffer; ~1.8 GHz (128 TOPS over 36
 * chiplets); multicast and cross-PE reduction on the chiplet network.
 * Buffers are chained accumulation < weight < input as in Timeloop's
 * simba_like example.  DRAM: none per chiplet; LPDDR4 assumed.
 */
static void build_simba(arch_spec *a)
{
    arch_begin(a, "simba", 16, 1.8e9);
    arch_add_level(a, (arch_level){.name = "PEAccuBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 24,
                                   .block_size = 8,
                                   .mesh_x = 4,
                                   .mesh_y = 4,
                                   .size_words_by_ds = {[WL_DS_OUTPUTS] = 3 * 1024 * 8 / 24}});
    arch_add_level(a, (arch_level){.name = "PEWeightBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 8,
                                   .mesh_x = 4,
                                   .mesh_y = 4,
                                   .size_words_by_ds = {[WL_DS_WEIGHTS] = 32 * 1024}});
    arch_add_level(a, (arch_level){.name = "PEInputBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 8,
                                   .mesh_x = 4,
                                   .mesh_y = 4,
                                   .size_words_by_ds = {[WL_DS_INPUTS] = 8 * 1024}});
    arch_add_level(a, (arch_level){.name = "GlobalBuffer",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = 8,
                                   .block_size = 32,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words = 64 * 1024,
                                   .multicast = true,
                                   .spatial_reduction = true});
    arch_add_dram(a, EDGE_DRAM_TYPE, 1, EDGE_DRAM_GBPS, EDGE_DRAM_BUS_BITS, 8);
    arch_finish(a, (arch_compute){.name = "vector_MAC",
                                  .kind = ARCH_COMPUTE_VECTOR,
                                  .mesh_x = 32,
                                  .mesh_y = 4,
                                  .rows = 8,
                                  .cols = 1,
                                  .mac_bits = 8});
}

/* ------------------------------------------------------------- registry */

static const arch_preset PRESETS[] = {
    {"eyeriss", "row-stationary CNN accelerator, 12x14 PEs, 108 KB buffer, 65 nm",
     "Chen et al., ISSCC 2016 / JSSC 2017", build_eyeriss},
    {"shidiannao", "output-stationary vision accelerator, 8x8 PEs, 256 KB buffers, 65 nm",
     "Du et al., ISCA 2015", build_shidiannao},
    {"edgetpu", "Coral Edge TPU: 4x4 PEs x 4 cores x 64 int8 lanes, 8 MB SRAM",
     "Seshadri et al., arXiv 2102.10423 (2021); Coral product data", build_edgetpu},
    {"tpu_v3", "TPU v3 chip: 2 TensorCores x 2 MXUs of 128x128 bf16, 2x16 MiB, HBM2, batch 128",
     "Jouppi et al., CACM 2020; Norrie et al., IEEE Micro 2021", build_tpu_v3},
    {"gemmini", "16x16 int8 systolic mesh, 256 KiB scratchpad, 64 KiB accumulator",
     "Genc et al., DAC 2021 (default configuration)", build_gemmini},
    {"vta", "16x16 int8 GEMM core, 32/256/128 KiB input/weight/accumulator buffers",
     "Moreau et al., IEEE Micro 2019 (default vta_config.json)", build_vta},
    {"simba", "one Simba chiplet: 16 PEs x 8 vector MACs x 8 lanes, 16 nm",
     "Shao et al., MICRO 2019; Zimmer et al., JSSC 2020", build_simba},
};

const arch_preset *arch_presets(int *count)
{
    if (count)
        *count = (int)(sizeof PRESETS / sizeof PRESETS[0]);
    return PRESETS;
}

const arch_preset *arch_preset_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(PRESETS[i].name, name) == 0)
            return &PRESETS[i];
    return NULL;
}
