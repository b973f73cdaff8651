/*
 * energy.c -- technology tables: the energy of one access and the area of
 * storage, MACs, DRAM and wires; and the design totals built from them
 * (area, peak power).
 *
 * Every table holds published figures at one node, 45 nm, and says where
 * they come from.  One rule moves every table to another node:
 *
 *   NODE RULE.  Stillmaker & Baas, "Scaling equations for the accurate
 *   prediction of CMOS device performance from 180 nm to 7 nm",
 *   Integration 58 (2017).  Energy: the paper's fitted energy polynomial
 *   a*V^2 + b*V + c of each node, evaluated at one common supply of
 *   0.8 V, divided by the 45 nm value (so the factor is the node's effect
 *   alone, not a change of supply).  Area: the paper's area factors
 *   relative to 45 nm.  Between tabulated nodes (e.g. 28 nm between 32
 *   and 20) both are interpolated linearly in log(value) over log(nm).
 *   Leakage and wire energy follow the energy factor too: one rule for
 *   everything, at the price of flattering wires, which scale worse than
 *   logic.
 *
 * Ports and banking are not modelled: an access costs what one access of
 * a single-ported array of the whole capacity costs (large, banked
 * buffers are therefore charged pessimistically).
 */
#include "arch.h"

#include <math.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------ curves */

#define CURVE_MAX_POINTS 10

/* Published points (x ascending), read as a power law between
 * neighbours: linear interpolation of log(y) over log(x), extended past
 * either end along the end segment. */
typedef struct curve {
    int n; /* >= 2 */
    double x[CURVE_MAX_POINTS];
    double y[CURVE_MAX_POINTS];
} curve;

/* The curve's value at x > 0. */
static double curve_at(const curve *c, double x)
{
    int i = 0;
    while (i < c->n - 2 && x > c->x[i + 1])
        i++;
    double t = (log(x) - log(c->x[i])) / (log(c->x[i + 1]) - log(c->x[i]));
    return exp(log(c->y[i]) + t * (log(c->y[i + 1]) - log(c->y[i])));
}

/* ------------------------------------------------------- node scaling */

/* Stillmaker & Baas 2017, per node: area relative to 45 nm (the 45 nm
 * row of the paper's area table) and the energy polynomial in Vdd. */
typedef struct node_row {
    int nm;
    double area_rel45;
    double energy_poly[3]; /* a, b, c of a*V^2 + b*V + c */
} node_row;

static const node_row NODES[] = {
    {7, 0.059, {0.1776, -0.09097, 0.02447}}, {10, 0.10, {0.2068, -0.09311, 0.02375}},
    {14, 0.17, {0.2363, -0.09675, 0.02239}}, {16, 0.19, {0.2958, -0.1241, 0.03024}},
    {20, 0.21, {0.373, -0.1582, 0.04104}},   {32, 0.46, {0.9559, -0.7823, 0.471}},
    {45, 1.0, {1.103, -0.362, 0.2767}},      {65, 1.5, {3.755, -4.398, 1.975}},
    {90, 2.8, {4.762, -4.781, 2.092}},       {130, 6.4, {7.171, -6.709, 2.904}},
};
#define N_NODES ((int)(sizeof NODES / sizeof NODES[0]))

/* The common supply at which every node's energy polynomial is read. */
#define NODE_RULE_VDD 0.8

/* Energy (want_energy) or area of node_nm relative to 45 nm, by the node
 * rule above.  Nodes outside the table are clamped to its ends;
 * arch_validate rejects them before they get here. */
static double node_scale(int node_nm, bool want_energy)
{
    curve c = {.n = N_NODES};
    for (int i = 0; i < N_NODES; i++) {
        const double *p = NODES[i].energy_poly;
        c.x[i] = NODES[i].nm;
        c.y[i] = want_energy ? (p[0] * NODE_RULE_VDD + p[1]) * NODE_RULE_VDD + p[2]
                             : NODES[i].area_rel45;
    }
    int nm = node_nm < ARCH_NODE_MIN_NM   ? ARCH_NODE_MIN_NM
             : node_nm > ARCH_NODE_MAX_NM ? ARCH_NODE_MAX_NM
                                          : node_nm;
    return curve_at(&c, nm) / curve_at(&c, 45);
}

double arch_node_energy_scale(int node_nm)
{
    return node_scale(node_nm, true);
}
double arch_node_area_scale(int node_nm)
{
    return node_scale(node_nm, false);
}

/* --------------------------------------------------------------- MACs */

/*
 * Arithmetic units at 45 nm, 0.9 V: M. Horowitz, "Computing's energy
 * problem (and what we can do about it)", ISSCC 2014, table of energy (pJ)
 * and area (um^2) per operation:
 *   int add   8b 0.03 pJ / 36 um^2, 16b 0.05 / 67, 32b 0.1 / 137
 *   int mult  8b 0.2 / 282, 32b 3.1 / 3495
 *   fp add   16b 0.4 / 1360, 32b 0.9 / 4184
 *   fp mult  16b 1.1 / 1640, 32b 3.7 / 7700
 * Multipliers are indexed by significand bits (fp16 11, fp32 24) so that
 * bfloat16 (8) and fp8 E4M3 (4) sit on the same power law; adders by
 * total width.
 */
typedef struct arith_table {
    curve int_add, int_mult, fp_add, fp_mult_by_significand;
} arith_table;

static const arith_table ARITH_PJ = {
    .int_add = {3, {8, 16, 32}, {0.03, 0.05, 0.1}},
    .int_mult = {2, {8, 32}, {0.2, 3.1}},
    .fp_add = {2, {16, 32}, {0.4, 0.9}},
    .fp_mult_by_significand = {2, {11, 24}, {1.1, 3.7}},
};

static const arith_table ARITH_UM2 = {
    .int_add = {3, {8, 16, 32}, {36, 67, 137}},
    .int_mult = {2, {8, 32}, {282, 3495}},
    .fp_add = {2, {16, 32}, {1360, 4184}},
    .fp_mult_by_significand = {2, {11, 24}, {1640, 7700}},
};

int arch_significand_bits(int bits, arch_number number)
{
    if (number == ARCH_NUMBER_INT)
        return bits > 1 ? bits - 1 : 0;
    if (number == ARCH_NUMBER_BF16)
        return bits == 16 ? 8 : 0;
    switch (bits) {
    case 8:
        return 4; /* fp8 E4M3 */
    case 16:
        return 11; /* IEEE binary16 */
    case 32:
        return 24;
    case 64:
        return 53;
    default:
        return 0;
    }
}

/*
 * A multiply-accumulate is a multiplier of the operand width plus an
 * adder of the accumulator's width.  Model assumption: integers
 * accumulate in max(32, 2 x bits) bits (the full product, as int8 designs
 * accumulate in int32); floats of 32 bits or fewer accumulate in fp32
 * (mixed precision, as TPUs do), fp64 in fp64.
 */
int arch_accumulator_bits(int bits, arch_number number)
{
    if (number == ARCH_NUMBER_INT)
        return bits * 2 > 32 ? bits * 2 : 32;
    return bits > 32 ? bits : 32;
}

/* One MAC of the format from table t (see above); negative when the tables
 * do not cover it. */
static double mac_cost(int bits, arch_number number, const arith_table *t)
{
    if (bits < 1 || bits > 64)
        return -1;
    int acc_bits = arch_accumulator_bits(bits, number);
    if (number == ARCH_NUMBER_INT)
        return curve_at(&t->int_mult, bits) + curve_at(&t->int_add, acc_bits);
    int significand = arch_significand_bits(bits, number);
    if (significand == 0)
        return -1;
    return curve_at(&t->fp_mult_by_significand, significand) + curve_at(&t->fp_add, acc_bits);
}

/* mac_cost scaled to node_nm by `scale`, keeping "not covered" negative. */
static double mac_at_node(int bits, arch_number number, const arith_table *t, double scale)
{
    double cost = mac_cost(bits, number, t);
    return cost < 0 ? cost : cost * scale;
}

double arch_mac_number_pJ(int bits, arch_number number, int node_nm)
{
    return mac_at_node(bits, number, &ARITH_PJ, arch_node_energy_scale(node_nm));
}

double arch_mac_number_area_um2(int bits, arch_number number, int node_nm)
{
    return mac_at_node(bits, number, &ARITH_UM2, arch_node_area_scale(node_nm));
}

double arch_mac_pJ(int bits, bool is_float, int node_nm)
{
    return arch_mac_number_pJ(bits, is_float ? ARCH_NUMBER_FP : ARCH_NUMBER_INT, node_nm);
}

double arch_mac_area_um2(int bits, bool is_float, int node_nm)
{
    return arch_mac_number_area_um2(bits, is_float ? ARCH_NUMBER_FP : ARCH_NUMBER_INT, node_nm);
}

/* ----------------------------------------------------------- storage */

/*
 * SRAM, one 64-bit access at 45 nm: Horowitz ISSCC 2014 -- 8 KB 10 pJ,
 * 32 KB 20 pJ, 1 MB 100 pJ: close to CACTI's square-root growth with
 * capacity.  Horowitz's 32-bit read of an 8 KB SRAM (5 pJ) is half the
 * 64-bit one, so energy is taken as linear in access width.
 */
static const curve SRAM_64BIT_PJ = {3, {8192, 32768, 1048576}, {10, 20, 100}};

/*
 * Register file at 45 nm: Chen, Emer & Sze, "Eyeriss: a spatial
 * architecture for energy-efficient dataflow for CNNs", ISCA 2016 --
 * measured on the Eyeriss chip, one access of the 0.5 KB per-PE register
 * file costs as much as one 16-bit MAC (1x; NoC 2x, 100 KB buffer 6x,
 * DRAM 200x).  The anchor is therefore a 16-bit access of 512 bytes at
 * the int16 MAC energy of the table above; capacity enters with the same
 * square-root law as SRAM, width linearly.
 */
#define REGFILE_ANCHOR_BYTES 512.0
#define REGFILE_ANCHOR_BITS 16.0

/*
 * Area per bit at 45 nm.  SRAM: Intel's 45 nm 6T cell, 0.346 um^2 (Mistry
 * et al., IEDM 2007), over an assumed array efficiency of 60 % for the
 * periphery.  Register file: one flip-flop per bit, NanGate 45 nm open cell
 * library DFF_X1, 4.522 um^2 (read multiplexers not counted).  Width does
 * not change area beyond the bit count: the periphery is folded into these
 * per-bit figures.
 */
#define SRAM_UM2_PER_BIT (0.346 / 0.60)
#define REGFILE_UM2_PER_BIT 4.522

/*
 * Leakage per bit at 45 nm, W: CACTI 7 as reported by Accelergy for the
 * reference designs in tests/data/timeloop -- a 128 KB 45 nm SRAM
 * leaks 5.35 uW (5.1 pW/bit); 32 nm register files leak 0.53 nW/bit,
 * 0.80 nW/bit at 45 nm by the node rule.
 */
#define SRAM_LEAK_W_PER_BIT 5.1e-12
#define REGFILE_LEAK_W_PER_BIT 0.80e-9

double arch_sram_access_pJ(int64_t capacity_bytes, int width_bits, int node_nm)
{
    if (capacity_bytes <= 0 || width_bits <= 0)
        return 0;
    return curve_at(&SRAM_64BIT_PJ, (double)capacity_bytes) * (width_bits / 64.0) *
           arch_node_energy_scale(node_nm);
}

double arch_regfile_access_pJ(int64_t capacity_bytes, int width_bits, int node_nm)
{
    if (capacity_bytes <= 0 || width_bits <= 0)
        return 0;
    double anchor_pJ = mac_cost(16, ARCH_NUMBER_INT, &ARITH_PJ);
    return anchor_pJ * sqrt((double)capacity_bytes / REGFILE_ANCHOR_BYTES) *
           (width_bits / REGFILE_ANCHOR_BITS) * arch_node_energy_scale(node_nm);
}

double arch_sram_area_um2(int64_t capacity_bytes, int width_bits, int node_nm)
{
    (void)width_bits; /* see the area comment above */
    return (double)capacity_bytes * 8 * SRAM_UM2_PER_BIT * arch_node_area_scale(node_nm);
}

double arch_regfile_area_um2(int64_t capacity_bytes, int width_bits, int node_nm)
{
    (void)width_bits;
    return (double)capacity_bytes * 8 * REGFILE_UM2_PER_BIT * arch_node_area_scale(node_nm);
}

/* ------------------------------------------------------ DRAM and wires */

/*
 * DRAM interface + core energy per bit transferred:
 *   LPDDR4  8 pJ/bit   Accelergy/Timeloop's DRAM table (the reference ERTs
 *                      in tests/data/timeloop: 512 pJ per 64 bits)
 *   DDR3   20 pJ/bit   Horowitz ISSCC 2014: 640 pJ per 32-bit DRAM read
 *   DDR4   15 pJ/bit   Accelergy's DRAM table
 *   GDDR5  14 pJ/bit   O'Connor et al., "Fine-grained DRAM", MICRO 2017
 *   GDDR6 7.5 pJ/bit   vendor figures as quoted for GDDR6 (Micron, Rambus)
 *   HBM2  3.9 pJ/bit   O'Connor et al., MICRO 2017
 * DRAM is a separate chip: these do not follow the logic node.
 */
static const struct dram_row {
    const char *type;
    double pJ_per_bit;
} DRAM_TABLE[] = {
    {"LPDDR4", 8.0}, {"DDR3", 20.0}, {"DDR4", 15.0}, {"GDDR5", 14.0}, {"GDDR6", 7.5}, {"HBM2", 3.9},
};

double arch_dram_pJ_per_bit(const char *dram_type)
{
    for (size_t i = 0; dram_type && i < sizeof DRAM_TABLE / sizeof DRAM_TABLE[0]; i++)
        if (strcasecmp(dram_type, DRAM_TABLE[i].type) == 0)
            return DRAM_TABLE[i].pJ_per_bit;
    return -1;
}

/*
 * The accelerator chip's share of a DRAM bit: its DRAM interface -- the
 * memory controller and the PHY that drives and terminates the bus --
 * which is in the chip's TDP, while the rest of the row above is spent
 * in the DRAM devices (activation, on-die movement, their own I/O), which
 * is not (arch_peak_power_W).  pJ per bit moved:
 *   HBM2   1.0   an interposer link: the HBM I/O of Lee et al., A-SSCC
 *                2022 runs at 0.95 pJ/bit (5.12 Gb/s per pin)
 *   LPDDR4 2.0   assumed: a short, unterminated board link to one device
 *   GDDR5, GDDR6, DDR3, DDR4  3.0   assumed: terminated board links
 * These are the least sourced figures of the tables; a file states its
 * own with interface_pJ_per_bit (docs/arch-format.md).  Like the row
 * above they do not follow the logic node.
 */
static const struct dram_row DRAM_INTERFACE_TABLE[] = {
    {"LPDDR4", 2.0}, {"DDR3", 3.0}, {"DDR4", 3.0}, {"GDDR5", 3.0}, {"GDDR6", 3.0}, {"HBM2", 1.0},
};

double arch_dram_interface_pJ_per_bit(const char *dram_type)
{
    size_t n = sizeof DRAM_INTERFACE_TABLE / sizeof DRAM_INTERFACE_TABLE[0];
    for (size_t i = 0; dram_type && i < n; i++)
        if (strcasecmp(dram_type, DRAM_INTERFACE_TABLE[i].type) == 0)
            return DRAM_INTERFACE_TABLE[i].pJ_per_bit;
    return -1;
}

/*
 * On-chip wire: about 0.1 pJ per bit per mm -- Keckler, Dally et al.,
 * "GPUs and the future of parallel computing", IEEE Micro 2011 (40 nm:
 * some 26 pJ to move 256 bits 1 mm), taken as the 45 nm figure.
 */
#define WIRE_PJ_PER_BIT_MM_45NM 0.1

double arch_wire_pJ_per_bit_mm(int node_nm)
{
    return WIRE_PJ_PER_BIT_MM_45NM * arch_node_energy_scale(node_nm);
}

/* ------------------------------------------------- filling an arch_spec */

/* Replace *value by table_value when it was left at zero. */
static void fill_zero(double *value, double table_value)
{
    if (*value == 0)
        *value = table_value;
}

/* MAC units in one compute instance: a systolic array has rows x cols, a
 * vector `rows` lanes (cols is 1), a MAC unit 1 x 1. */
static int64_t macs_per_instance(const arch_compute *c)
{
    return (int64_t)c->rows * c->cols;
}

/* Words of one instance that one access reaches: with capacity split per
 * data space, each space is its own array and the largest one is costed
 * (conservative); otherwise the whole capacity. */
static int64_t accessed_words(const arch_level *l)
{
    int64_t largest = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (l->size_words_by_ds[ds] > largest)
            largest = l->size_words_by_ds[ds];
    return largest > 0 ? largest : l->size_words;
}

/* One on-chip storage class's tables, so that SRAM and register files
 * are filled by one function. */
typedef struct storage_tables {
    double (*access_pJ)(int64_t capacity_bytes, int width_bits, int node_nm);
    double (*area_um2)(int64_t capacity_bytes, int width_bits, int node_nm);
    double leak_W_per_bit;
} storage_tables;

static const storage_tables SRAM_TABLES = {arch_sram_access_pJ, arch_sram_area_um2,
                                           SRAM_LEAK_W_PER_BIT};
static const storage_tables REGFILE_TABLES = {arch_regfile_access_pJ, arch_regfile_area_um2,
                                              REGFILE_LEAK_W_PER_BIT};

/* Fill an on-chip level: reads and writes (fills, updates) cost one
 * vector access -- Horowitz quotes one figure per access; leakage of all
 * its bits for one cycle; area of its whole capacity. */
static void fill_onchip_level(const arch_spec *a, arch_level *l, const storage_tables *t)
{
    int node = a->technology_nm;
    int width_bits = l->word_bits * l->block_size;
    double access_pJ = t->access_pJ(accessed_words(l) * l->word_bits / 8, width_bits, node);
    double bits = (double)l->size_words * l->word_bits;
    fill_zero(&l->energy.read_pJ, access_pJ);
    fill_zero(&l->energy.fill_pJ, access_pJ);
    fill_zero(&l->energy.update_pJ, access_pJ);
    fill_zero(&l->energy.leak_pJ,
              bits * t->leak_W_per_bit * arch_node_energy_scale(node) * a->cycle_seconds * 1e12);
    fill_zero(&l->area_um2, t->area_um2(l->size_words * l->word_bits / 8, width_bits, node));
}

/* Fill the backing store: every vector access moves word_bits x
 * block_size bits at the DRAM's energy per bit; no leakage, no on-chip
 * area (DRAM is off chip). */
static void fill_dram_level(const arch_spec *a, arch_level *l)
{
    double access_pJ = a->dram.energy_pJ_per_bit * l->word_bits * l->block_size;
    fill_zero(&l->energy.read_pJ, access_pJ);
    fill_zero(&l->energy.fill_pJ, access_pJ);
    fill_zero(&l->energy.update_pJ, access_pJ);
}

/* Area under one child of level i (everything inside it: the levels
 * below and the compute units), um^2 -- the pitch a hop crosses. */
static double child_footprint_um2(const arch_spec *a, int i)
{
    double total = (double)a->compute.instances * a->compute.area_um2;
    for (int j = 0; j < i; j++)
        total += (double)a->level[j].instances * a->level[j].area_um2;
    int64_t children = i == 0 ? a->compute.instances : a->level[i - 1].instances;
    return children > 0 ? total / (double)children : 0;
}

/* Hop energy of level i's network to its children: one word crosses one
 * child's pitch (the side of its square footprint) per hop.  Levels that
 * feed a single child have no network to cost. */
static void fill_hop(arch_spec *a, int i)
{
    arch_level *l = &a->level[i];
    if (arch_fanout(a, i) <= 1)
        return;
    double pitch_mm = sqrt(child_footprint_um2(a, i)) / 1000.0;
    fill_zero(&l->hop_pJ, l->word_bits * pitch_mm * arch_wire_pJ_per_bit_mm(a->technology_nm));
}

/*
 * The PEs of a systolic array: a PE holds each operand in a register of
 * one word (mac_bits; partial sums at the accumulator's width) and passes
 * words to its neighbour one PE pitch away.  A register access costs what
 * the register-file table gives for a one-word file of that width; a hop
 * crosses the side of the PE's square footprint, taken as one MAC's area
 * (the array's area over its MACs), at the wire energy per bit and mm.
 */
static void fill_pe(arch_spec *a)
{
    arch_compute *c = &a->compute;
    int64_t macs = macs_per_instance(c);
    if (c->kind != ARCH_COMPUTE_SYSTOLIC || macs < 1 || c->mac_bits < 1)
        return;
    int node = a->technology_nm;
    int acc_bits = arch_accumulator_bits(c->mac_bits, c->mac_number);
    double pitch_mm = sqrt(c->area_um2 / (double)macs) / 1000.0;
    double wire_pJ_per_bit = pitch_mm * arch_wire_pJ_per_bit_mm(node);
    fill_zero(&c->pe_reg_pJ, arch_regfile_access_pJ((c->mac_bits + 7) / 8, c->mac_bits, node));
    fill_zero(&c->pe_acc_reg_pJ, arch_regfile_access_pJ((acc_bits + 7) / 8, acc_bits, node));
    fill_zero(&c->pe_hop_pJ, c->mac_bits * wire_pJ_per_bit);
    fill_zero(&c->pe_acc_hop_pJ, acc_bits * wire_pJ_per_bit);
}

/* Compute units: energy of one MAC, area of one instance (all its MACs),
 * and the PEs' registers and links when they form a systolic array. */
static void fill_compute(arch_spec *a)
{
    arch_compute *c = &a->compute;
    double mac_pJ = arch_mac_number_pJ(c->mac_bits, c->mac_number, a->technology_nm);
    double mac_um2 = arch_mac_number_area_um2(c->mac_bits, c->mac_number, a->technology_nm);
    if (mac_pJ > 0)
        fill_zero(&c->mac_pJ, mac_pJ);
    if (mac_um2 > 0)
        fill_zero(&c->area_um2, mac_um2 * (double)macs_per_instance(c));
    fill_pe(a);
}

void arch_apply_tables(arch_spec *a)
{
    double dram_pJ_per_bit = arch_dram_pJ_per_bit(a->dram.type);
    if (dram_pJ_per_bit > 0)
        fill_zero(&a->dram.energy_pJ_per_bit, dram_pJ_per_bit);
    double interface_pJ_per_bit = arch_dram_interface_pJ_per_bit(a->dram.type);
    if (interface_pJ_per_bit > 0)
        fill_zero(&a->dram.interface_pJ_per_bit, interface_pJ_per_bit);
    fill_compute(a);
    /* Inner levels first: a hop's length needs the areas below it. */
    for (int i = 0; i < a->n_levels && i < ARCH_MAX_LEVELS; i++) {
        arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_SRAM)
            fill_onchip_level(a, l, &SRAM_TABLES);
        else if (l->cls == ARCH_CLASS_REGFILE)
            fill_onchip_level(a, l, &REGFILE_TABLES);
        else if (l->cls == ARCH_CLASS_DRAM)
            fill_dram_level(a, l);
        fill_hop(a, i);
    }
}

/* ------------------------------------------------------ design totals */

double arch_area_mm2(const arch_spec *a)
{
    double um2 = (double)a->compute.instances * a->compute.area_um2;
    for (int i = 0; i < a->n_levels && i < ARCH_MAX_LEVELS; i++)
        um2 += (double)a->level[i].instances * a->level[i].area_um2;
    return um2 * 1e-6;
}

/*
 * Peak power.  The TDP is the chip's thermal design power as vendors state
 * it: the cost model's own energies of what is on the chip at the largest
 * rate at which the cost model can charge them, so that no mapping's
 * average power on the chip can exceed it (tests/test_power.c checks every
 * preset on every zoo model).  The chip is the compute, the on-chip
 * storage and the DRAM interface (controller and PHY); the DRAM devices
 * are separate chips with their own power, so their share of a DRAM bit's
 * energy is not in the TDP (the energy of an inference counts it all).
 * Term by term, with the mechanism that bounds the rate:
 *  - MACs: every MAC of every unit, each cycle.  Utilisation never exceeds
 *    1 (cycles >= MACs / peak MACs per cycle, systolic fill included), and
 *    the vector-unit layers of network.c run at most map_vector_lanes
 *    operations per cycle at one MAC's energy, never more than the MACs.
 *  - Inside systolic arrays (array_peak_pJ_per_cycle): every PE does one
 *    MAC per cycle with its register reads, writes and hops, and moves one
 *    word of the held data space per cycle (a fold of r rows shifts at most
 *    r (r + 1) / 2 words per column through at least rows + cols - 1
 *    cycles, so less than one per PE and cycle).
 *  - Storage levels (level_peak_words): reads and writes at the level's
 *    bandwidths, which map_evaluate enforces by stretching cycles (a
 *    shared port goes first to the dearer direction).  A level without any
 *    stated bandwidth is charged whatever a mapping asks; for it one
 *    vector each way per cycle is assumed, and the bound holds only if no
 *    mapping asks more -- every preset states its bandwidths (presets.c).
 *  - The DRAM interface: interface_pJ_per_bit (the chip's share of a DRAM
 *    bit, energy.c's interface table) per bit at the DRAM level's
 *    bandwidth, which is the DRAM's GB/s at word precision; network.c's
 *    layers never move DRAM bytes faster than the same GB/s, and charge
 *    bits moved x energy per bit whatever the tensor's precision, so the
 *    rate in bits per cycle is the bound.
 *  - Leakage of every instance, every cycle.
 * What is left over is rounding: a level charges ceil(words / block)
 * vector actions per data space and action type, at most one vector each
 * more than the rate over a layer.
 */

/* Words per cycle one instance of l can be charged for reads and for
 * writes (fills, updates), given the energies of a read and of a write. */
static void level_peak_words(const arch_level *l, double read_pJ, double write_pJ, double *reads,
                             double *writes)
{
    if (l->read_bandwidth <= 0 && l->write_bandwidth <= 0 && l->shared_bandwidth <= 0) {
        *reads = *writes = l->block_size; /* nothing stated: assumed, see above */
        return;
    }
    double r = l->read_bandwidth > 0 ? l->read_bandwidth : HUGE_VAL;
    double w = l->write_bandwidth > 0 ? l->write_bandwidth : HUGE_VAL;
    double shared = l->shared_bandwidth > 0 ? l->shared_bandwidth : HUGE_VAL;
    if (read_pJ >= write_pJ) {
        *reads = fmin(r, shared);
        *writes = fmin(w, shared - *reads);
    } else {
        *writes = fmin(w, shared);
        *reads = fmin(r, shared - *writes);
    }
}

/* pJ one instance of l spends in a cycle at peak: reads and writes at the
 * rates of level_peak_words, writes at the dearer of fill and update, plus
 * leakage. */
static double level_peak_pJ_per_cycle(const arch_level *l)
{
    if (l->block_size <= 0)
        return l->energy.leak_pJ;
    double write_pJ = fmax(l->energy.fill_pJ, l->energy.update_pJ), reads, writes;
    level_peak_words(l, l->energy.read_pJ, write_pJ, &reads, &writes);
    return (reads * l->energy.read_pJ + writes * write_pJ) / l->block_size + l->energy.leak_pJ;
}

/* pJ the chip's DRAM interface spends in a cycle at peak for one instance
 * of DRAM level l: the bits l can move per cycle (level_peak_words, reads
 * and writes alike) at a's interface energy per bit. */
static double dram_interface_pJ_per_cycle(const arch_spec *a, const arch_level *l)
{
    if (l->block_size <= 0 || !(a->dram.interface_pJ_per_bit > 0))
        return 0;
    double reads, writes;
    level_peak_words(l, 1, 1, &reads, &writes);
    return (reads + writes) * l->word_bits * a->dram.interface_pJ_per_bit;
}

/* The data space a systolic dataflow holds in its PEs (systolic.c). */
static int held_dataspace(arch_dataflow dataflow)
{
    return dataflow == ARCH_DATAFLOW_OS   ? WL_DS_OUTPUTS
           : dataflow == ARCH_DATAFLOW_IS ? WL_DS_INPUTS
                                          : WL_DS_WEIGHTS;
}

/* pJ one systolic array spends inside in a cycle at peak, as
 * map_systolic_traffic_of counts it: per PE one MAC's three register
 * reads, a register write and a hop for each of the two moving data
 * spaces, the accumulator write of an OS PE, and one held word shifted
 * (a register write and a hop).  Partial sums are at the accumulator's
 * width. */
static double array_peak_pJ_per_cycle(const arch_compute *c)
{
    if (c->kind != ARCH_COMPUTE_SYSTOLIC)
        return 0;
    int held = held_dataspace(c->dataflow);
    double pe_pJ = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        bool psum = ds == WL_DS_OUTPUTS;
        double reg = psum ? c->pe_acc_reg_pJ : c->pe_reg_pJ;
        double hop = psum ? c->pe_acc_hop_pJ : c->pe_hop_pJ;
        pe_pJ += reg + reg + hop; /* the MAC's read; a write and a hop, moving or held */
        if (ds == held && psum)
            pe_pJ += reg; /* OS: the accumulator written by every MAC */
    }
    return (double)macs_per_instance(c) * pe_pJ;
}

void arch_peak_power_parts(const arch_spec *a, arch_power *out)
{
    memset(out, 0, sizeof *out);
    if (!(a->cycle_seconds > 0))
        return;
    const arch_compute *c = &a->compute;
    double W_per_pJ_cycle = 1e-12 / a->cycle_seconds;
    out->mac_W = (double)c->instances * (double)macs_per_instance(c) * c->mac_pJ * W_per_pJ_cycle;
    out->array_W = (double)c->instances * array_peak_pJ_per_cycle(c) * W_per_pJ_cycle;
    for (int i = 0; i < a->n_levels && i < ARCH_MAX_LEVELS; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM)
            out->dram_W +=
                (double)l->instances * dram_interface_pJ_per_cycle(a, l) * W_per_pJ_cycle;
        else
            out->onchip_W += (double)l->instances * level_peak_pJ_per_cycle(l) * W_per_pJ_cycle;
    }
    out->total_W = out->mac_W + out->array_W + out->onchip_W + out->dram_W;
}

double arch_peak_power_W(const arch_spec *a)
{
    arch_power p;
    arch_peak_power_parts(a, &p);
    return p.total_W;
}
