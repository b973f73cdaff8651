/*
 * hw.c -- the VTA hardware the tuner varies: its configuration from an
 * architecture of the `vta` preset's shape, the FPGA resources a
 * configuration takes, and the devices' budgets.  docs/tune.md states
 * the resource model and where each constant comes from.
 */
#include <stdio.h>
#include <string.h>

#include "tune.h"

/* VTA defaults that the architecture format does not carry:
 * - the micro-op buffer, 32 KiB (vta_config.json: LOG_UOP_BUFF_SIZE 15);
 * - the latency of one DMA instruction before its first byte arrives:
 *   32 cycles, ~320 ns at 100 MHz, the order of a read round trip through
 *   a Zynq high-performance AXI port to DDR (an assumption, not a
 *   measurement). */
#define VTA_UOP_BUFFER_BYTES (32 * 1024)
#define VTA_DMA_LATENCY_CYCLES 32

/* The one storage level that holds only data space ds, or NULL. */
static const arch_level *level_of(const arch_spec *a, wl_dataspace_id ds)
{
    const arch_level *found = NULL;
    for (int i = 0; i < a->n_levels; i++) {
        const arch_level *l = &a->level[i];
        if (l->cls == ARCH_CLASS_DRAM || l->size_words_by_ds[ds] <= 0)
            continue;
        for (int d = 0; d < WL_NDATASPACES; d++)
            if (d != (int)ds && l->size_words_by_ds[d] > 0)
                return NULL; /* shared with another data space: not VTA's */
        if (found)
            return NULL;
        found = l;
    }
    return found;
}

static int64_t level_bytes(const arch_level *l, wl_dataspace_id ds)
{
    return l->size_words_by_ds[ds] * l->word_bits / 8;
}

/*
 * The GEMM shape from the buffers' vector widths: an input vector is
 * BATCH x BLOCK_IN words, an accumulator vector BATCH x BLOCK_OUT and a
 * weight vector BLOCK_OUT x BLOCK_IN, so BATCH^2 = inp * acc / wgt.
 */
static bool gemm_shape(int inp, int acc, int wgt, tn_hw *out)
{
    if (inp <= 0 || acc <= 0 || wgt <= 0)
        return false;
    int64_t square = (int64_t)inp * acc;
    if (square % wgt != 0)
        return false;
    square /= wgt;
    int batch = 1;
    while ((int64_t)batch * batch < square)
        batch++;
    if ((int64_t)batch * batch != square || inp % batch || acc % batch)
        return false;
    out->batch = batch;
    out->block_in = inp / batch;
    out->block_out = acc / batch;
    return (int64_t)out->block_in * out->block_out == wgt;
}

as_code tn_hw_from_arch(const arch_spec *a, tn_hw *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    static const char *const DATA[] = {
        [WL_DS_WEIGHTS] = "weight", [WL_DS_INPUTS] = "input", [WL_DS_OUTPUTS] = "output"};
    static const char *const BUFFER[] = {
        [WL_DS_WEIGHTS] = "WgtBuffer", [WL_DS_INPUTS] = "InpBuffer", [WL_DS_OUTPUTS] = "AccBuffer"};
    const arch_level *level[WL_NDATASPACES];
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        level[ds] = level_of(a, (wl_dataspace_id)ds);
        if (!level[ds] || level[ds]->cls != ARCH_CLASS_SRAM)
            return as_fail(st, AS_EINVAL,
                           "architecture '%s' is not VTA-shaped: no SRAM level holds only the "
                           "%s data (VTA's %s)",
                           a->name, DATA[ds], BUFFER[ds]);
    }
    const arch_level *dram = a->n_levels > 0 ? &a->level[a->n_levels - 1] : NULL;
    if (!dram || dram->cls != ARCH_CLASS_DRAM || !(a->dram.bandwidth_GBps > 0))
        return as_fail(st, AS_EINVAL,
                       "architecture '%s' is not VTA-shaped: no DRAM with a bandwidth", a->name);
    const arch_compute *c = &a->compute;
    const arch_level *inp = level[WL_DS_INPUTS], *wgt = level[WL_DS_WEIGHTS],
                     *acc = level[WL_DS_OUTPUTS];
    if (c->kind != ARCH_COMPUTE_MAC || c->mac_number != ARCH_NUMBER_INT ||
        !gemm_shape(inp->block_size, acc->block_size, wgt->block_size, out) ||
        (int64_t)out->batch * out->block_in * out->block_out != c->instances)
        return as_fail(st, AS_EINVAL,
                       "architecture '%s' is not VTA-shaped: its %lld integer MAC units are not "
                       "a BATCH x BLOCK_IN x BLOCK_OUT GEMM core matching the buffers' vectors "
                       "(input %d, weight %d, accumulator %d words)",
                       a->name, (long long)c->instances, inp->block_size, wgt->block_size,
                       acc->block_size);
    out->inp_buffer_bytes = level_bytes(inp, WL_DS_INPUTS);
    out->wgt_buffer_bytes = level_bytes(wgt, WL_DS_WEIGHTS);
    out->acc_buffer_bytes = level_bytes(acc, WL_DS_OUTPUTS);
    out->uop_buffer_bytes = VTA_UOP_BUFFER_BYTES;
    out->inp_bits = inp->word_bits;
    out->wgt_bits = wgt->word_bits;
    out->acc_bits = acc->word_bits;
    out->out_bits = inp->word_bits; /* VTA's OUT_WIDTH is its INP_WIDTH */
    out->clock_hz = 1.0 / a->cycle_seconds;
    out->dram_bytes_per_cycle = a->dram.bandwidth_GBps * 1e9 * a->cycle_seconds;
    out->dram_latency_cycles = VTA_DMA_LATENCY_CYCLES;
    out->node_nm = a->technology_nm;
    snprintf(out->dram_type, sizeof out->dram_type, "%s", a->dram.type);
    return AS_OK;
}

/* ------------------------------------------------------------ resources */

/*
 * Block RAMs of a memory of `bytes` behind a port of width_bits: a 36 Kb
 * block RAM takes one aspect ratio (7-series UG473, UltraScale UG573:
 * 32K x 1, 16K x 2, 8K x 4, 4K x 9, 2K x 18, 1K x 36, and 512 x 72 with
 * one read and one write port), and a port wider than one block needs
 * blocks side by side, each holding a slice of every word.  The best
 * ratio is taken.
 */
static int64_t bram36(int64_t bytes, int64_t width_bits)
{
    static const int64_t DEPTH[] = {32768, 16384, 8192, 4096, 2048, 1024, 512};
    static const int64_t WIDTH[] = {1, 2, 4, 9, 18, 36, 72};
    if (bytes <= 0 || width_bits <= 0)
        return 0;
    int64_t depth = (bytes * 8 + width_bits - 1) / width_bits;
    int64_t best = INT64_MAX;
    for (int i = 0; i < 7; i++) {
        int64_t n = (width_bits + WIDTH[i] - 1) / WIDTH[i] * ((depth + DEPTH[i] - 1) / DEPTH[i]);
        if (n < best)
            best = n;
    }
    return best;
}

/*
 * Resource model (docs/tune.md states the derivation):
 * - DSP: one multiplier per MAC of the GEMM core; two int8 products share
 *   one DSP48 when both operands are at most 8 bits (Xilinx WP486's INT8
 *   packing), else one per DSP48.  The rest of VTA uses none (its address
 *   multipliers are forced to LUTs: Mul_LUT in vta.cc).
 * - LUT: per output lane (BATCH x BLOCK_OUT) an adder tree over BLOCK_IN
 *   products, each adder one LUT per bit (carry chain), the products
 *   inp+wgt bits wide and growing a bit per level, plus the accumulate
 *   adder of acc_bits; the ALU: BATCH x BLOCK_OUT lanes of acc_bits with
 *   an adder, a barrel shifter and a min/max comparator and mux (8 LUTs a
 *   bit); the buffers' read/write packing (one LUT per bit of each port);
 *   and a fixed shell (fetch, load, store and compute control, DMA
 *   engines, AXI interconnect) of 10,000 LUTs.
 * - BRAM: the input, weight, accumulator, output (8-bit copy of the
 *   accumulator, vta.cc's out_mem) and micro-op buffers, each by capacity
 *   and port width (bram36), plus 2 blocks of shell FIFOs.
 */
#define SHELL_LUTS 10000
#define SHELL_BRAMS 2
#define ALU_LUTS_PER_BIT 8

static int64_t adder_tree_luts(const tn_hw *hw)
{
    int64_t luts = hw->acc_bits; /* the accumulate adder */
    int bits = hw->inp_bits + hw->wgt_bits;
    for (int64_t adders = hw->block_in / 2; adders >= 1; adders /= 2)
        luts += adders * ++bits;
    return luts * hw->batch * hw->block_out;
}

void tn_hw_resources(const tn_hw *hw, tn_resources *out)
{
    int64_t macs = (int64_t)hw->batch * hw->block_in * hw->block_out;
    int per_dsp = hw->inp_bits <= 8 && hw->wgt_bits <= 8 ? 2 : 1;
    int64_t inp_port = (int64_t)hw->batch * hw->block_in * hw->inp_bits;
    int64_t wgt_port = (int64_t)hw->block_out * hw->block_in * hw->wgt_bits;
    int64_t acc_port = (int64_t)hw->batch * hw->block_out * hw->acc_bits;
    int64_t out_port = (int64_t)hw->batch * hw->block_out * hw->out_bits;
    int64_t out_bytes = hw->acc_bits > 0 ? hw->acc_buffer_bytes * hw->out_bits / hw->acc_bits : 0;

    out->dsps = (macs + per_dsp - 1) / per_dsp;
    out->luts = adder_tree_luts(hw) +
                (int64_t)hw->batch * hw->block_out * hw->acc_bits * ALU_LUTS_PER_BIT + inp_port +
                wgt_port + acc_port + out_port + SHELL_LUTS;
    out->brams = bram36(hw->inp_buffer_bytes, inp_port) + bram36(hw->wgt_buffer_bytes, wgt_port) +
                 bram36(hw->acc_buffer_bytes, acc_port) + bram36(out_bytes, out_port) +
                 bram36(hw->uop_buffer_bytes, 32) + SHELL_BRAMS;
}

/* The first resource over the budget, in the order the GEMM core's size
 * hits them: DSPs, block RAMs, LUTs. */
bool tn_hw_fits(const tn_hw *hw, const tn_budget *b, char *reason, size_t reason_size)
{
    tn_resources r;
    tn_hw_resources(hw, &r);
    const char *name = NULL;
    int64_t used = 0, available = 0;
    if (r.dsps > b->available.dsps)
        name = "DSP", used = r.dsps, available = b->available.dsps;
    else if (r.brams > b->available.brams)
        name = "BRAM36", used = r.brams, available = b->available.brams;
    else if (r.luts > b->available.luts)
        name = "LUT", used = r.luts, available = b->available.luts;
    if (!name)
        return true;
    if (reason && reason_size)
        snprintf(reason, reason_size, "%s %lld > %lld", name, (long long)used,
                 (long long)available);
    return false;
}

/*
 * Device budgets, from Xilinx's product tables: Zynq-7000 (DS190) for
 * the XC7Z020 of the PYNQ-Z1 (53,200 LUTs, 140 36 Kb block RAMs, 220
 * DSP48E1); Zynq UltraScale+ (DS891) for the XCZU3EG of the Ultra96
 * (70,560 LUTs, 216 block RAMs, 360 DSP48E2) and the XCZU9EG of the
 * ZCU102 (274,080 LUTs, 912 block RAMs, 2,520 DSP48E2).  VTA's own
 * board targets (vta_config's pynq, ultra96 and zcu104 samples).
 */
static const tn_budget BUDGETS[] = {
    {"pynq", "Zynq-7020 (PYNQ-Z1)", {53200, 140, 220}},
    {"ultra96", "Zynq UltraScale+ ZU3EG (Ultra96)", {70560, 216, 360}},
    {"zcu102", "Zynq UltraScale+ ZU9EG (ZCU102)", {274080, 912, 2520}},
};

const tn_budget *tn_budgets(int *count)
{
    *count = (int)(sizeof BUDGETS / sizeof BUDGETS[0]);
    return BUDGETS;
}

const tn_budget *tn_budget_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof BUDGETS / sizeof BUDGETS[0]; i++)
        if (strcmp(BUDGETS[i].name, name) == 0)
            return &BUDGETS[i];
    return NULL;
}
