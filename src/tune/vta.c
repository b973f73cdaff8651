/*
 * vta.c -- the VTA pipeline model: the instruction stream that TVM's VTA
 * conv2d template (schedule_conv2d_packed) lowers a conv layer to for a
 * knob setting, run on VTA's three in-order modules joined by dependency
 * tokens.  docs/tune.md ("The VTA pipeline model") states the loop nest,
 * the stream and every assumption; this file keeps each one where it
 * lives.
 *
 * The stream is never materialised: each module walks its own part of it
 * with a few loop counters (the modules run their queues in order and
 * only meet through the tokens), and the token queues are fixed rings of
 * push times.  An evaluation allocates nothing.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tune.h"

/*
 * Cycle counts of the compute module (VTA's HLS source,
 * hardware/xilinx/src/vta.cc, and its Chisel twin TensorGemm.scala):
 * - GEMM and the accumulator reset run their micro-op loop pipelined at
 *   II = 1: one BATCH x BLOCK_IN x BLOCK_OUT operation per cycle;
 * - the ALU's micro-op loop is pipelined at II = 2 (it reads two
 *   accumulator vectors and writes one per op);
 * - every compute instruction pays a fixed fill/drain: the Chisel FSM's
 *   three states before the first issue (read uop, compute index, read
 *   tensor) and its 2-cycle write-back pipe.
 */
#define VTA_GEMM_II 1
#define VTA_ALU_II 2
#define VTA_COMPUTE_OVERHEAD_CYCLES 5
/* Requantisation after the reduction, as VTA's conv2d benchmarks and
 * graph pack build it: shift right, then clip (max with 0, min with
 * 127): three ALU instructions over the output tile. */
#define VTA_REQUANT_OPS 3
/* A micro-op is 32 bits (VTA_UOP_WIDTH). */
#define VTA_UOP_BYTES 4
/* Capacity of a token ring: tokens outstanding in one queue are bounded
 * by the virtual threads (at most 4 here), far below it. */
#define VTA_RING 64

/* The four dependency queues of vta.cc: load->compute, compute->load,
 * compute->store, store->compute. */
enum { Q_L2G, Q_G2L, Q_G2S, Q_S2G, Q_NONE = -1 };
static const char *const QUEUE_NAME[] = {"l2g", "g2l", "g2s", "s2g"};
static const char *const MODULE_NAME[] = {"load", "compute", "store"};

typedef struct vta_ring {
    int64_t push_cycle[VTA_RING];
    int64_t pushed, popped;
} vta_ring;

/*
 * A run of consecutive instructions of one module with no token between
 * them (a tile's input DMAs and its weight DMA; the three ALU ops): they
 * start back to back, so one step with their summed cycles times them
 * exactly.  The first pops `pop`, the last pushes `push`.
 */
typedef struct vta_step {
    int64_t cycles;
    int64_t instructions;
    int pop, push;
} vta_step;

/* Everything the knobs fix about the stream, computed once. */
typedef struct vta_plan {
    const tn_conv *layer;
    const tn_hw *hw;
    const tn_knobs *knobs;
    int64_t n_padded;
    int64_t threads;                        /* h_threading * oc_threading */
    int64_t n_b, n_h, n_co, n_w;            /* tile-group loops: b0, i0 / h_thr, co0 / oc_thr, j0 */
    int64_t groups;                         /* n_b * n_h * n_co * n_w */
    int64_t ko;                             /* c / tile_ci: loads and GEMMs per tile */
    int64_t b_blocks, ci_blocks, co_blocks; /* blocks in one tile */
    int64_t window_rows, window_cols;       /* input window of a tile, halo and padding included */
    int64_t gemm_iterations;                /* GEMM ops of one GEMM instruction */
    int64_t tile_vectors;                   /* accumulator vectors of one tile */
    int64_t inp_vector_bytes;               /* BATCH x BLOCK_IN inputs */
    int64_t inp_dmas; /* input DMAs per tile load: one per batch and ci block */
    int64_t wgt_dma_cycles, store_cycles, reset_cycles, gemm_cycles, alu_cycles;
    int64_t wgt_bytes, store_bytes; /* one weight DMA; one tile's stores */
} vta_plan;

/* ------------------------------------------------------------ validity */

static bool fail(tn_result *out, const char *fmt, ...) AS_PRINTF(2, 3);

/* Mark out invalid with the reason; returns false for the caller. */
static bool fail(tn_result *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
    out->valid = false;
    return false;
}

/* A tile extent must be positive, a multiple of the hardware block and
 * divide the (padded) dimension. */
static bool check_tile(tn_result *out, const char *knob, int64_t tile, int64_t block,
                       const char *block_name, int64_t dim, const char *dim_name)
{
    if (tile <= 0)
        return fail(out, "%s %lld must be positive", knob, (long long)tile);
    if (block > 1 && tile % block != 0)
        return fail(out, "%s %lld is not a multiple of %s %lld", knob, (long long)tile, block_name,
                    (long long)block);
    if (dim % tile != 0)
        return fail(out, "%s %lld does not divide %s %lld", knob, (long long)tile, dim_name,
                    (long long)dim);
    return true;
}

/* A threading factor is 1 or 2 and divides the outer loop it splits
 * (TVM splits x_i0 and x_co0 by it and binds the inner part to cthread). */
static bool check_threading(tn_result *out, const char *knob, int factor, int64_t outer,
                            const char *what)
{
    if (factor != 1 && factor != 2)
        return fail(out, "%s %d not in {1, 2}", knob, factor);
    if (outer % factor != 0)
        return fail(out, "%s %d does not divide the %lld %s tiles", knob, factor, (long long)outer,
                    what);
    return true;
}

static bool check_buffer(tn_result *out, const char *what, int64_t bytes, int64_t threads,
                         const char *buffer, int64_t capacity)
{
    if (bytes * threads > capacity)
        return fail(out, "%s %lld B x %lld threads > %s %lld B", what, (long long)bytes,
                    (long long)threads, buffer, (long long)capacity);
    return true;
}

static bool check_hw(const tn_hw *hw, tn_result *out)
{
    if (hw->batch <= 0 || hw->block_in <= 0 || hw->block_out <= 0)
        return fail(out, "hardware: GEMM shape %d x %d x %d must be positive", hw->batch,
                    hw->block_in, hw->block_out);
    if (hw->inp_bits <= 0 || hw->wgt_bits <= 0 || hw->acc_bits <= 0 || hw->out_bits <= 0)
        return fail(out, "hardware: operand widths must be positive");
    if (!(hw->clock_hz > 0) || !(hw->dram_bytes_per_cycle > 0) || hw->dram_latency_cycles < 0)
        return fail(out, "hardware: clock, DRAM bandwidth and latency must be positive");
    if (arch_dram_pJ_per_bit(hw->dram_type) < 0)
        return fail(out, "hardware: unknown DRAM type '%s'", hw->dram_type);
    return true;
}

/* Micro-ops of a kernel whose loops (outermost first) have these
 * extents: FoldUopLoop turns the two outermost loops that remain after
 * unit loops are simplified away into the instruction's hardware loops;
 * the others are unrolled into micro-ops. */
static int64_t kernel_uops(const int64_t *extent, int n)
{
    int64_t uops = 1;
    int folded = 0;
    for (int i = 0; i < n; i++) {
        if (extent[i] == 1)
            continue;
        if (folded < 2)
            folded++;
        else
            uops *= extent[i];
    }
    return uops;
}

/* DMA of `bytes`: a fixed latency, then the bytes at the DRAM bandwidth. */
static int64_t dma_cycles(const tn_hw *hw, int64_t bytes)
{
    return hw->dram_latency_cycles + (int64_t)ceil((double)bytes / hw->dram_bytes_per_cycle);
}

/* Check every condition the template and the buffers put on the knobs and
 * fill the plan.  False (out invalid, with the reason) when one fails. */
static bool plan_layer(const tn_conv *l, const tn_hw *hw, const tn_knobs *k, vta_plan *pl,
                       tn_result *out)
{
    if (!check_hw(hw, out))
        return false;
    if (l->n <= 0 || l->c <= 0 || l->k <= 0 || l->p <= 0 || l->q <= 0 || l->r <= 0 || l->s <= 0 ||
        l->stride_h <= 0 || l->stride_w <= 0)
        return fail(out, "layer %s: dimensions must be positive", l->name);
    /* Channels are not padded: the packed layout needs whole blocks. */
    if (l->c % hw->block_in != 0)
        return fail(out, "input channels %lld not a multiple of BLOCK_IN %d", (long long)l->c,
                    hw->block_in);
    if (l->k % hw->block_out != 0)
        return fail(out, "output channels %lld not a multiple of BLOCK_OUT %d", (long long)l->k,
                    hw->block_out);
    int64_t n_padded = (l->n + hw->batch - 1) / hw->batch * hw->batch;
    if (!check_tile(out, "tile_b", k->tile_b, hw->batch, "BATCH", n_padded, "padded batch") ||
        !check_tile(out, "tile_h", k->tile_h, 1, "", l->p, "output height") ||
        !check_tile(out, "tile_w", k->tile_w, 1, "", l->q, "output width") ||
        !check_tile(out, "tile_ci", k->tile_ci, hw->block_in, "BLOCK_IN", l->c, "input channels") ||
        !check_tile(out, "tile_co", k->tile_co, hw->block_out, "BLOCK_OUT", l->k,
                    "output channels"))
        return false;
    if (!check_threading(out, "h_threading", k->h_threading, l->p / k->tile_h, "row") ||
        !check_threading(out, "oc_threading", k->oc_threading, l->k / k->tile_co, "channel"))
        return false;

    memset(pl, 0, sizeof *pl);
    pl->layer = l;
    pl->hw = hw;
    pl->knobs = k;
    pl->n_padded = n_padded;
    pl->threads = (int64_t)k->h_threading * k->oc_threading;
    pl->n_b = n_padded / k->tile_b;
    pl->n_h = l->p / k->tile_h / k->h_threading;
    pl->n_co = l->k / k->tile_co / k->oc_threading;
    pl->n_w = l->q / k->tile_w;
    pl->groups = pl->n_b * pl->n_h * pl->n_co * pl->n_w;
    pl->ko = l->c / k->tile_ci;
    pl->b_blocks = k->tile_b / hw->batch;
    pl->ci_blocks = k->tile_ci / hw->block_in;
    pl->co_blocks = k->tile_co / hw->block_out;
    pl->window_rows = (k->tile_h - 1) * l->stride_h + l->r;
    pl->window_cols = (k->tile_w - 1) * l->stride_w + l->s;
    pl->tile_vectors = pl->b_blocks * pl->co_blocks * k->tile_h * k->tile_w;
    pl->gemm_iterations = pl->tile_vectors * pl->ci_blocks * l->r * l->s;
    pl->inp_vector_bytes = (int64_t)hw->batch * hw->block_in * hw->inp_bits / 8;
    pl->inp_dmas = pl->b_blocks * pl->ci_blocks;

    /* Buffers: each virtual thread has its own copy of every tile (TVM's
     * InjectVirtualThread rewrites each allocation to threads x its size
     * for cthread).  The input tile holds the whole window, padding
     * included: the load module writes the padding on chip. */
    int64_t inp_tile = pl->inp_dmas * pl->window_rows * pl->window_cols * pl->inp_vector_bytes;
    int64_t wgt_tile = k->tile_co * k->tile_ci * l->r * l->s * hw->wgt_bits / 8;
    int64_t acc_tile = pl->tile_vectors * hw->batch * hw->block_out * hw->acc_bits / 8;
    /* Micro-op kernels: the GEMM over (ci block, column, kernel column,
     * kernel row, co block, row, batch block), the reset over (column, co
     * block, row, batch block), and one micro-op per ALU op (the
     * accumulator tile is compact, so InjectALUIntrin flattens its loops). */
    int64_t gemm_loops[] = {pl->ci_blocks, k->tile_w, l->s,        l->r,
                            pl->co_blocks, k->tile_h, pl->b_blocks};
    int64_t reset_loops[] = {k->tile_w, pl->co_blocks, k->tile_h, pl->b_blocks};
    int64_t uop_bytes = VTA_UOP_BYTES * (kernel_uops(gemm_loops, 7) + kernel_uops(reset_loops, 4) +
                                         VTA_REQUANT_OPS);
    if (!check_buffer(out, "input tile", inp_tile, pl->threads, "InpBuffer",
                      hw->inp_buffer_bytes) ||
        !check_buffer(out, "weight tile", wgt_tile, pl->threads, "WgtBuffer",
                      hw->wgt_buffer_bytes) ||
        !check_buffer(out, "accumulator tile", acc_tile, pl->threads, "AccBuffer",
                      hw->acc_buffer_bytes) ||
        !check_buffer(out, "micro-ops", uop_bytes, pl->threads, "UopBuffer", hw->uop_buffer_bytes))
        return false;

    pl->wgt_bytes = wgt_tile;
    pl->wgt_dma_cycles = dma_cycles(hw, wgt_tile);
    int64_t store_dma_bytes = k->tile_h * k->tile_w * hw->batch * hw->block_out * hw->out_bits / 8;
    pl->store_bytes = store_dma_bytes * pl->b_blocks * pl->co_blocks;
    pl->store_cycles = pl->b_blocks * pl->co_blocks * dma_cycles(hw, store_dma_bytes);
    pl->reset_cycles = VTA_COMPUTE_OVERHEAD_CYCLES + VTA_GEMM_II * pl->tile_vectors;
    pl->gemm_cycles = VTA_COMPUTE_OVERHEAD_CYCLES + VTA_GEMM_II * pl->gemm_iterations;
    pl->alu_cycles =
        VTA_REQUANT_OPS * (VTA_COMPUTE_OVERHEAD_CYCLES + VTA_ALU_II * pl->tile_vectors);
    return true;
}

/* Rows (or columns) of the input that output tile `index` of `tile`
 * rows reads from DRAM: its window clipped to the unpadded input. */
static int64_t dram_extent(int64_t index, int64_t tile, int64_t stride, int64_t kernel, int64_t pad,
                           int64_t size)
{
    int64_t first = index * tile * stride - pad;
    int64_t last = ((index + 1) * tile - 1) * stride + kernel - 1 - pad;
    if (first < 0)
        first = 0;
    if (last > size - 1)
        last = size - 1;
    return last >= first ? last - first + 1 : 0;
}

/* ---------------------------------------------------- the three streams */

/*
 * The program TVM builds, per tile group (the loops b0, i0, co0, j0 with
 * the thread axes split off), each statement repeated for the T virtual
 * threads in turn (cthread: InjectVirtualThread unrolls every coprocessor
 * statement, its dependency push and pop included):
 *
 *   compute: RESET[t]            pop s2g, push g2l      (t = 0 .. T-1)
 *   for ko:
 *     load:    INP..., WGT [t]   pop g2l, push l2g
 *     compute: GEMM[t]           pop l2g, push g2l
 *   load:    NOP[t]              pop g2l                (the loop's carried token)
 *   compute: ALU x3 [t]          push g2s
 *   store:   STORE[t]            pop g2s, push s2g
 *
 * bracketed by T store NOPs pushing s2g before the first group and T
 * compute NOPs popping s2g after the last (CoProcSync's tokens around the
 * outermost loop).  Each module sees only its own lines.
 */
typedef struct vta_cursor {
    int64_t group, ko, thread;
    int phase;
} vta_cursor;

/* Phases of each module's walk; zero is where each starts. */
enum { LD_TILES, LD_TAIL };
enum { CP_RESET, CP_GEMM, CP_ALU, CP_FINAL, CP_DONE };
enum { ST_OPEN, ST_TILES };

/* Advance the thread counter; true when it wrapped. */
static bool next_thread(const vta_plan *pl, vta_cursor *c)
{
    if (++c->thread < pl->threads)
        return false;
    c->thread = 0;
    return true;
}

/* The load module's next step: a tile's input DMAs and weight DMA, or
 * the NOP that takes the token of a ko loop's last GEMM. */
static bool load_next(const vta_plan *pl, vta_cursor *c, vta_step *st, int64_t *dram_bytes)
{
    if (c->group >= pl->groups)
        return false;
    const tn_conv *l = pl->layer;
    const tn_knobs *k = pl->knobs;
    st->push = Q_NONE;
    st->pop = Q_G2L;
    if (c->phase == LD_TAIL) {
        st->cycles = 0;
        st->instructions = 1;
        if (next_thread(pl, c)) {
            c->phase = LD_TILES;
            c->ko = 0;
            c->group++;
        }
        return true;
    }
    /* group = ((b0 * n_h + i0) * n_co + co0) * n_w + j0; thread t =
     * oc_t * h_threading + h_t. */
    int64_t j0 = c->group % pl->n_w;
    int64_t i0 = c->group / (pl->n_w * pl->n_co) % pl->n_h;
    int64_t row_tile = i0 * k->h_threading + c->thread % k->h_threading;
    int64_t rows = dram_extent(row_tile, k->tile_h, l->stride_h, l->r, l->pad_h, l->h);
    int64_t cols = dram_extent(j0, k->tile_w, l->stride_w, l->s, l->pad_w, l->w);
    int64_t inp_bytes = rows * cols * pl->inp_vector_bytes;
    st->cycles = pl->inp_dmas * dma_cycles(pl->hw, inp_bytes) + pl->wgt_dma_cycles;
    st->instructions = pl->inp_dmas + 1;
    st->push = Q_L2G;
    *dram_bytes += pl->inp_dmas * inp_bytes + pl->wgt_bytes;
    if (next_thread(pl, c) && ++c->ko == pl->ko)
        c->phase = LD_TAIL;
    return true;
}

/* The compute module's next step. */
static bool compute_next(const vta_plan *pl, vta_cursor *c, vta_step *st)
{
    switch (c->phase) {
    case CP_RESET:
        *st = (vta_step){pl->reset_cycles, 1, Q_S2G, Q_G2L};
        if (next_thread(pl, c))
            c->phase = CP_GEMM;
        return true;
    case CP_GEMM:
        *st = (vta_step){pl->gemm_cycles, 1, Q_L2G, Q_G2L};
        if (next_thread(pl, c) && ++c->ko == pl->ko) {
            c->ko = 0;
            c->phase = CP_ALU;
        }
        return true;
    case CP_ALU:
        *st = (vta_step){pl->alu_cycles, VTA_REQUANT_OPS, Q_NONE, Q_G2S};
        if (next_thread(pl, c))
            c->phase = ++c->group < pl->groups ? CP_RESET : CP_FINAL;
        return true;
    case CP_FINAL:
        *st = (vta_step){0, 1, Q_S2G, Q_NONE};
        if (next_thread(pl, c))
            c->phase = CP_DONE;
        return true;
    default:
        return false;
    }
}

/* The store module's next step: the T opening NOPs, then a tile's output DMAs. */
static bool store_next(const vta_plan *pl, vta_cursor *c, vta_step *st)
{
    if (c->phase == ST_OPEN) {
        *st = (vta_step){0, 1, Q_NONE, Q_S2G};
        if (next_thread(pl, c))
            c->phase = ST_TILES;
        return true;
    }
    if (c->group >= pl->groups)
        return false;
    *st = (vta_step){pl->store_cycles, pl->b_blocks * pl->co_blocks, Q_G2S, Q_S2G};
    if (next_thread(pl, c))
        c->group++;
    return true;
}

/* ----------------------------------------------------------- the pipeline */

typedef struct vta_sim {
    vta_ring ring[4];
    vta_cursor cursor[TN_MODULES];
    vta_step step[TN_MODULES];
    bool pending[TN_MODULES];
    int64_t free_cycle[TN_MODULES];
    int64_t dram_read_bytes;
} vta_sim;

static bool module_next(const vta_plan *pl, vta_sim *s, int m)
{
    switch (m) {
    case TN_LOAD:
        return load_next(pl, &s->cursor[m], &s->step[m], &s->dram_read_bytes);
    case TN_COMPUTE:
        return compute_next(pl, &s->cursor[m], &s->step[m]);
    default:
        return store_next(pl, &s->cursor[m], &s->step[m]);
    }
}

/*
 * Run module m's steps while their tokens are there.  A step starts when
 * the module is free and the token it pops has been pushed (the k-th pop
 * of a queue takes the k-th push: each queue has one producer and one
 * consumer, both in order), and pushes its token when it finishes.
 * Returns how many steps ran, or -1 (out invalid) on a ring overflow.
 */
static int64_t run_module(const vta_plan *pl, vta_sim *s, int m, tn_result *out)
{
    int64_t ran = 0;
    while (s->pending[m]) {
        const vta_step *st = &s->step[m];
        int64_t start = s->free_cycle[m];
        if (st->pop != Q_NONE) {
            vta_ring *q = &s->ring[st->pop];
            if (q->popped == q->pushed)
                break;
            int64_t ready = q->push_cycle[q->popped++ % VTA_RING];
            if (ready > start)
                start = ready;
        }
        int64_t finish = start + st->cycles;
        s->free_cycle[m] = finish;
        out->busy_cycles[m] += st->cycles;
        out->instructions[m] += st->instructions;
        if (st->push != Q_NONE) {
            vta_ring *q = &s->ring[st->push];
            if (q->pushed - q->popped >= VTA_RING) {
                fail(out, "internal: token queue %s overflows", QUEUE_NAME[st->push]);
                return -1;
            }
            q->push_cycle[q->pushed++ % VTA_RING] = finish;
        }
        s->pending[m] = module_next(pl, s, m);
        ran++;
    }
    return ran;
}

/* Simulate the whole stream; false (out invalid) on a deadlock or an
 * unbalanced token count, which the stream's construction rules out. */
static bool simulate(const vta_plan *pl, tn_result *out)
{
    vta_sim s;
    memset(&s, 0, sizeof s);
    for (int m = 0; m < TN_MODULES; m++)
        s.pending[m] = module_next(pl, &s, m);
    while (s.pending[TN_LOAD] || s.pending[TN_COMPUTE] || s.pending[TN_STORE]) {
        int64_t ran = 0;
        for (int m = 0; m < TN_MODULES; m++) {
            int64_t r = run_module(pl, &s, m, out);
            if (r < 0)
                return false;
            ran += r;
        }
        if (ran == 0) {
            int m = s.pending[TN_LOAD] ? TN_LOAD : s.pending[TN_COMPUTE] ? TN_COMPUTE : TN_STORE;
            return fail(out, "internal: pipeline deadlock, %s waits on %s at cycle %lld",
                        MODULE_NAME[m], QUEUE_NAME[s.step[m].pop], (long long)s.free_cycle[m]);
        }
    }
    for (int q = 0; q < 4; q++)
        if (s.ring[q].pushed != s.ring[q].popped)
            return fail(out, "internal: token queue %s ends with %lld tokens", QUEUE_NAME[q],
                        (long long)(s.ring[q].pushed - s.ring[q].popped));
    out->cycles = 0;
    for (int m = 0; m < TN_MODULES; m++)
        if (s.free_cycle[m] > out->cycles)
            out->cycles = s.free_cycle[m];
    out->dram_read_bytes = s.dram_read_bytes;
    return true;
}

/* -------------------------------------------------------------- energy */

/*
 * Energy of the run: every GEMM MAC performed (padded batch included);
 * one access of a buffer per vector moved through its port (inputs
 * written by loads, padding included, and read once per GEMM op; weights
 * written by loads and read once per GEMM op; the accumulator read and
 * written per GEMM op and per ALU op, written per reset op and read per
 * vector stored); DRAM per bit moved.  The micro-op buffer and the
 * instruction fetch are not counted.
 */
static double energy_pJ(const vta_plan *pl, const tn_result *r)
{
    const tn_hw *hw = pl->hw;
    const tn_conv *l = pl->layer;
    double tiles = (double)pl->groups * (double)pl->threads;
    double loads = tiles * (double)pl->ko;
    double gemm_ops = loads * (double)pl->gemm_iterations;
    double macs = gemm_ops * hw->batch * hw->block_in * hw->block_out;
    double inp_writes = loads * (double)(pl->inp_dmas * pl->window_rows * pl->window_cols);
    double wgt_writes = loads * (double)(pl->co_blocks * pl->ci_blocks * l->r * l->s);
    double vectors = tiles * (double)pl->tile_vectors;
    double acc_accesses = 2 * gemm_ops + vectors /* reset */ +
                          2.0 * VTA_REQUANT_OPS * vectors /* ALU */ + vectors /* store */;
    double inp_pJ = arch_sram_access_pJ(hw->inp_buffer_bytes,
                                        hw->batch * hw->block_in * hw->inp_bits, hw->node_nm);
    double wgt_pJ = arch_sram_access_pJ(hw->wgt_buffer_bytes,
                                        hw->block_out * hw->block_in * hw->wgt_bits, hw->node_nm);
    double acc_pJ = arch_sram_access_pJ(hw->acc_buffer_bytes,
                                        hw->batch * hw->block_out * hw->acc_bits, hw->node_nm);
    double dram_bits = 8.0 * (double)(r->dram_read_bytes + r->dram_write_bytes);
    return macs * arch_mac_pJ(hw->inp_bits, false, hw->node_nm) + (inp_writes + gemm_ops) * inp_pJ +
           (wgt_writes + gemm_ops) * wgt_pJ + acc_accesses * acc_pJ +
           dram_bits * arch_dram_pJ_per_bit(hw->dram_type);
}

void tn_vta_evaluate(const tn_conv *layer, const tn_hw *hw, const tn_knobs *k, tn_result *out)
{
    memset(out, 0, sizeof *out);
    vta_plan pl;
    if (!plan_layer(layer, hw, k, &pl, out))
        return;
    if (!simulate(&pl, out))
        return;
    out->dram_write_bytes = pl.groups * pl.threads * pl.store_bytes;
    out->seconds = (double)out->cycles / hw->clock_hz;
    out->gflops = out->seconds > 0 ? 2.0 * (double)layer->macs / out->seconds / 1e9 : 0;
    out->energy_pJ = energy_pJ(&pl, out);
    out->valid = true;
}
