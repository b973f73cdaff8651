/*
 * test_vta.c -- the VTA pipeline model (src/tune/vta.c) against timelines
 * worked by hand, instruction by instruction, from the stream docs/tune.md
 * states; its invalid settings and their reasons; its energy against a
 * hand count; the hardware read from the `vta` preset and the FPGA
 * resource model (src/tune/hw.c).
 *
 * The small hardware of the timelines: BATCH 1, BLOCK_IN = BLOCK_OUT = 4,
 * int8 operands and int32 accumulators, 4 DRAM bytes per cycle and a DMA
 * latency of 10 cycles (of 100 in the store-bound case).  The model's
 * fixed costs: a compute instruction pays 5 cycles of fill/drain, GEMM
 * and reset run one op a cycle, the ALU one op every 2 cycles, and three
 * ALU instructions requantise a tile; a DMA costs latency + bytes / 4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test_check.h"
#include "tune/tune.h"

static tn_hw small_hw(int dram_latency)
{
    tn_hw hw = {.batch = 1,
                .block_in = 4,
                .block_out = 4,
                .inp_buffer_bytes = 1024,
                .wgt_buffer_bytes = 4096,
                .acc_buffer_bytes = 4096,
                .uop_buffer_bytes = 4096,
                .inp_bits = 8,
                .wgt_bits = 8,
                .acc_bits = 32,
                .out_bits = 8,
                .clock_hz = 100e6,
                .dram_bytes_per_cycle = 4,
                .dram_latency_cycles = dram_latency,
                .node_nm = 28};
    strcpy(hw.dram_type, "DDR3");
    return hw;
}

/* A square conv layer, batch 1. */
static tn_conv conv(int64_t c, int64_t k, int64_t hw, int64_t p, int64_t rs, int64_t stride,
                    int64_t pad)
{
    tn_conv l = {.n = 1, .c = c, .k = k, .h = hw, .w = hw, .p = p, .q = p, .r = rs, .s = rs};
    l.stride_h = l.stride_w = stride;
    l.pad_h = l.pad_w = pad;
    l.macs = l.n * l.k * l.p * l.q * l.c * l.r * l.s;
    l.count = 1;
    strcpy(l.name, "test");
    return l;
}

static void expect(const tn_result *r, int64_t cycles, const int64_t busy[3],
                   const int64_t instructions[3], int64_t read_bytes, int64_t write_bytes)
{
    if (!r->valid)
        fail_msg("invalid: %s", r->reason);
    assert_int_equal(r->cycles, cycles);
    for (int m = 0; m < TN_MODULES; m++) {
        assert_int_equal(r->busy_cycles[m], busy[m]);
        assert_int_equal(r->instructions[m], instructions[m]);
    }
    assert_int_equal(r->dram_read_bytes, read_bytes);
    assert_int_equal(r->dram_write_bytes, write_bytes);
    assert_close(r->seconds, cycles / 100e6);
}

/*
 * One thread, load-bound.  Layer: c 8, k 4, 2 x 2 input, 3 x 3 kernel,
 * pad 1, 2 x 2 output.  Knobs: one 2 x 2 tile of 4 output channels, tile_ci
 * 4 (two ci steps).
 *   RESET: 4 vectors -> 5 + 4 = 9.  GEMM: 4 vectors x 1 ci block x 9 taps =
 *   36 ops -> 41.  ALU: 3 x (5 + 2 x 4) = 39.
 *   Input DMA: window 4 x 4, of which 2 rows x 2 columns are in DRAM (the
 *   rest is padding) = 4 vectors x 4 B = 16 B -> 10 + 4 = 14; weight DMA:
 *   4 x 4 x 9 = 144 B -> 10 + 36 = 46; one load = 60.  Store: 2 x 2 x 4 B =
 *   16 B -> 14.
 * Timeline:
 *   store   NOP            pushes s2g at 0
 *   compute RESET   0 .. 9     pops s2g@0, pushes g2l@9
 *   load    L(ko0)  9 .. 69    pops g2l@9, pushes l2g@69
 *   compute GEMM0  69 .. 110   pops l2g@69, pushes g2l@110
 *   load    L(ko1) 110 .. 170  pops g2l@110, pushes l2g@170
 *   compute GEMM1 170 .. 211   pushes g2l@211
 *   load    NOP at 211         pops g2l@211
 *   compute ALU x3 211 .. 250  pushes g2s@250
 *   store   STORE 250 .. 264   pushes s2g@264
 *   compute NOP at 264         pops s2g@264
 * Makespan 264; busy load 120, compute 9 + 82 + 39 = 130, store 14;
 * instructions load 2 + 2 + 1 NOP, compute 1 + 2 + 3 + 1 NOP, store 1 + 1 NOP.
 */
static void test_one_thread_load_bound(void **state)
{
    (void)state;
    tn_hw hw = small_hw(10);
    tn_conv l = conv(8, 4, 2, 2, 3, 1, 1);
    tn_knobs k = {1, 2, 2, 4, 4, 1, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    expect(&r, 264, (int64_t[]){120, 130, 14}, (int64_t[]){5, 7, 2}, 2 * (16 + 144), 16);
    assert_close(r.gflops, 2.0 * (double)l.macs / (264 / 100e6) / 1e9);
}

/*
 * One thread, compute-bound.  Layer: c 8, k 4, 4 x 4 input, 3 x 3 kernel,
 * pad 1, 4 x 4 output; one 4 x 4 tile, tile_ci 4.
 *   RESET 5 + 16 = 21.  GEMM: 16 x 9 = 144 ops -> 149.  ALU 3 x (5 + 32) = 111.
 *   Input DMA: 4 x 4 of the 6 x 6 window in DRAM = 64 B -> 26; weight 144 B
 *   -> 46; one load 72.  Store 64 B -> 26.
 * Timeline (one thread: each load waits for the GEMM before it):
 *   RESET 0..21, L0 21..93, GEMM0 93..242, L1 242..314, GEMM1 314..463,
 *   load NOP at 463, ALU 463..574, STORE 574..600, compute NOP at 600.
 * Busy: load 144, compute 21 + 298 + 111 = 430, store 26.
 */
static void test_one_thread_compute_bound(void **state)
{
    (void)state;
    tn_hw hw = small_hw(10);
    tn_conv l = conv(8, 4, 4, 4, 3, 1, 1);
    tn_knobs k = {1, 4, 4, 4, 4, 1, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    expect(&r, 600, (int64_t[]){144, 430, 26}, (int64_t[]){5, 7, 2}, 2 * (64 + 144), 64);
}

/*
 * Two threads (oc_threading 2): the layer of the load-bound case with 8
 * output channels, tile_co 4, so thread t computes channels 4t .. 4t+3;
 * the same costs (RESET 9, GEMM 41, ALU 39, load 60, STORE 14).
 * Each coprocessor statement is repeated for t0 and t1; tokens are
 * consumed in push order.
 *   store   NOP, NOP               push s2g#0, #1 at 0
 *   compute R(t0)   0 .. 9         pop s2g#0, push g2l#0@9
 *   compute R(t1)   9 .. 18        pop s2g#1, push g2l#1@18
 *   load    L(0,t0)  9 .. 69       pop g2l#0@9, push l2g#0@69
 *   load    L(0,t1) 69 .. 129      pop g2l#1@18, push l2g#1@129
 *   compute G(0,t0) 69 .. 110      pop l2g#0, push g2l#2@110   <- overlaps L(0,t1)
 *   compute G(0,t1) 129 .. 170     pop l2g#1, push g2l#3@170
 *   load    L(1,t0) 129 .. 189     pop g2l#2@110, push l2g#2@189 <- overlaps G(0,t1)
 *   load    L(1,t1) 189 .. 249     pop g2l#3@170, push l2g#3@249
 *   compute G(1,t0) 189 .. 230     push g2l#4@230
 *   compute G(1,t1) 249 .. 290     push g2l#5@290
 *   load    NOP at 249, NOP at 290 pop g2l#4, #5
 *   compute A(t0) 290 .. 329 push g2s#0; A(t1) 329 .. 368 push g2s#1
 *   store   S(t0) 329 .. 343 push s2g#2; S(t1) 368 .. 382 push s2g#3
 *   compute NOP at 368, NOP at 382 pop s2g#2, #3
 * Makespan 382, where one thread over the same work would serialise:
 * busy load 240, compute 18 + 164 + 78 = 260, store 28.
 */
static void test_two_threads_overlap(void **state)
{
    (void)state;
    tn_hw hw = small_hw(10);
    tn_conv l = conv(8, 8, 2, 2, 3, 1, 1);
    tn_knobs k = {1, 2, 2, 4, 4, 1, 2};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    expect(&r, 382, (int64_t[]){240, 260, 28}, (int64_t[]){10, 14, 4}, 4 * (16 + 144), 32);
}

/*
 * Store-bound, two threads (h_threading 2), two tile groups.  DMA latency
 * 100.  Layer: 1 x 1 conv, c 4, k 16, 4 x 4; tiles of 1 row x 4 columns x
 * 16 channels, tile_ci 4; row tiles 0..3: group g, thread t takes row 2g+t.
 *   RESET 5 + 16 = 21; GEMM 16 ops -> 21; ALU 3 x (5 + 32) = 111.
 *   Load: input 1 x 4 x 4 B = 16 B -> 104, weight 16 x 4 = 64 B -> 116: 220.
 *   Store: 4 channel blocks x (4 x 4 B = 16 B -> 104) = 416.
 * Timeline (g = group, t = thread):
 *   compute R(0,0) 0..21 [g2l#0@21], R(0,1) 21..42 [g2l#1@42]
 *   load    L(0,0) 21..241 [l2g#0@241], L(0,1) 241..461 [l2g#1@461]
 *   compute G(0,0) 241..262 [g2l#2], G(0,1) 461..482 [g2l#3]
 *   compute A(0,0) 482..593 [g2s#0@593], A(0,1) 593..704 [g2s#1@704]
 *   load    NOP at 461, NOP at 482
 *   store   S(0,0) 593..1009 [s2g#2@1009], S(0,1) 1009..1425 [s2g#3@1425]
 *   compute R(1,0) 1009..1030 [g2l#4@1030], R(1,1) 1425..1446 [g2l#5@1446]
 *   load    L(1,0) 1030..1250 [l2g#2], L(1,1) 1446..1666 [l2g#3]
 *   compute G(1,0) 1446..1467, G(1,1) 1666..1687
 *   compute A(1,0) 1687..1798 [g2s#2], A(1,1) 1798..1909 [g2s#3]
 *   load    NOP at 1666, NOP at 1687
 *   store   S(1,0) 1798..2214, S(1,1) 2214..2630
 *   compute NOP at 2214, NOP at 2630
 * Makespan 2630; busy load 880, compute 84 + 84 + 444 = 612, store 1664.
 * Instructions: load 4 x 2 + 4 NOPs; compute 4 + 4 + 12 + 2 NOPs; store 2
 * NOPs + 4 x 4.
 */
static void test_store_bound(void **state)
{
    (void)state;
    tn_hw hw = small_hw(100);
    tn_conv l = conv(4, 16, 4, 4, 1, 1, 0);
    tn_knobs k = {1, 1, 4, 4, 16, 2, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    expect(&r, 2630, (int64_t[]){880, 612, 1664}, (int64_t[]){12, 22, 18}, 4 * (16 + 64), 4 * 64);
}

/*
 * Energy of the load-bound case counted by hand: 2 GEMM instructions of
 * 36 ops of 16 MACs (1152 MACs); input buffer: 2 loads x 16 window vectors
 * written + 72 read; weight buffer: 2 x 9 vectors written + 72 read;
 * accumulator: 72 x 2 (GEMM) + 4 (reset) + 3 x 4 x 2 (ALU) + 4 (store) = 176;
 * DRAM: (320 + 16) bytes.
 */
static void test_energy_hand_count(void **state)
{
    (void)state;
    tn_hw hw = small_hw(10);
    tn_conv l = conv(8, 4, 2, 2, 3, 1, 1);
    tn_knobs k = {1, 2, 2, 4, 4, 1, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    assert_true(r.valid);
    double expect_pJ =
        1152 * arch_mac_pJ(8, false, 28) + (32 + 72) * arch_sram_access_pJ(1024, 32, 28) +
        (18 + 72) * arch_sram_access_pJ(4096, 128, 28) + 176 * arch_sram_access_pJ(4096, 128, 28) +
        336 * 8 * arch_dram_pJ_per_bit("DDR3");
    assert_close(r.energy_pJ, expect_pJ);
}

static void expect_invalid(const tn_conv *l, const tn_hw *hw, tn_knobs k, const char *reason)
{
    tn_result r;
    tn_vta_evaluate(l, hw, &k, &r);
    assert_false(r.valid);
    assert_string_equal(r.reason, reason);
    assert_int_equal(r.cycles, 0);
}

/* Every reason a knob setting is refused, word for word. */
static void test_invalid_reasons(void **state)
{
    (void)state;
    tn_hw hw = small_hw(10);
    tn_conv l = conv(8, 8, 4, 4, 3, 1, 1);
    tn_knobs ok = {1, 2, 2, 4, 4, 1, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &ok, &r);
    assert_true(r.valid);

    tn_conv odd = conv(6, 8, 4, 4, 3, 1, 1);
    expect_invalid(&odd, &hw, ok, "input channels 6 not a multiple of BLOCK_IN 4");
    odd = conv(8, 6, 4, 4, 3, 1, 1);
    expect_invalid(&odd, &hw, ok, "output channels 6 not a multiple of BLOCK_OUT 4");

    tn_knobs k = ok;
    k.tile_h = 0;
    expect_invalid(&l, &hw, k, "tile_h 0 must be positive");
    k = ok, k.tile_h = 3;
    expect_invalid(&l, &hw, k, "tile_h 3 does not divide output height 4");
    k = ok, k.tile_w = 3;
    expect_invalid(&l, &hw, k, "tile_w 3 does not divide output width 4");
    k = ok, k.tile_ci = 2;
    expect_invalid(&l, &hw, k, "tile_ci 2 is not a multiple of BLOCK_IN 4");
    k = ok, k.tile_ci = 12;
    expect_invalid(&l, &hw, k, "tile_ci 12 does not divide input channels 8");
    k = ok, k.tile_co = 6;
    expect_invalid(&l, &hw, k, "tile_co 6 is not a multiple of BLOCK_OUT 4");
    k = ok, k.tile_co = 16;
    expect_invalid(&l, &hw, k, "tile_co 16 does not divide output channels 8");
    k = ok, k.tile_b = 2;
    expect_invalid(&l, &hw, k, "tile_b 2 does not divide padded batch 1");
    k = ok, k.h_threading = 3;
    expect_invalid(&l, &hw, k, "h_threading 3 not in {1, 2}");
    k = ok, k.oc_threading = 0;
    expect_invalid(&l, &hw, k, "oc_threading 0 not in {1, 2}");
    k = ok, k.tile_h = 4, k.h_threading = 2;
    expect_invalid(&l, &hw, k, "h_threading 2 does not divide the 1 row tiles");
    k = ok, k.tile_co = 8, k.oc_threading = 2;
    expect_invalid(&l, &hw, k, "oc_threading 2 does not divide the 1 channel tiles");

    /* BATCH 2: the batch of 1 is padded to 2. */
    tn_hw batch2 = hw;
    batch2.batch = 2;
    k = ok;
    expect_invalid(&l, &batch2, k, "tile_b 1 is not a multiple of BATCH 2");
    k.tile_b = 2;
    tn_vta_evaluate(&l, &batch2, &k, &r);
    assert_true(r.valid);
    /* Padded MACs take time but do not count as work: a batch of 2 takes
     * the same cycles and does twice the GFLOPS. */
    assert_true(r.valid);
    tn_conv two = l;
    two.n = 2;
    two.macs *= 2;
    tn_result r2;
    tn_vta_evaluate(&two, &batch2, &k, &r2);
    assert_true(r2.valid);
    assert_int_equal(r2.cycles, r.cycles);
    assert_close(r2.gflops, 2 * r.gflops);

    /* Buffers: tiles of 4 x 4 outputs, all 8 channels in and out, two
     * threads over the two row halves... of a 8 x 8 layer. */
    tn_conv big = conv(8, 8, 8, 8, 3, 1, 1);
    tn_knobs buf = {1, 4, 8, 8, 8, 2, 1};
    /* input window 6 x 10 x 2 ci blocks x 4 B = 480 B x 2 > 512 */
    tn_hw small = hw;
    small.inp_buffer_bytes = 512;
    expect_invalid(&big, &small, buf, "input tile 480 B x 2 threads > InpBuffer 512 B");
    /* weights 8 x 8 x 9 = 576 B x 2 */
    small = hw, small.wgt_buffer_bytes = 1000;
    expect_invalid(&big, &small, buf, "weight tile 576 B x 2 threads > WgtBuffer 1000 B");
    /* accumulators 2 co blocks x 4 x 8 x 16 B = 1024 B x 2 */
    small = hw, small.acc_buffer_bytes = 2047;
    expect_invalid(&big, &small, buf, "accumulator tile 1024 B x 2 threads > AccBuffer 2047 B");
    /* micro-ops: GEMM loops (2 ci, 8 cols, 3, 3, 2 co, 4 rows, 1): folds
     * 2 x 8, unrolls 3 x 3 x 2 x 4 = 72; reset (8, 2, 4, 1): folds 8 x 2,
     * unrolls 4; ALU 3: 79 x 4 B = 316 B x 2 */
    small = hw, small.uop_buffer_bytes = 600;
    expect_invalid(&big, &small, buf, "micro-ops 316 B x 2 threads > UopBuffer 600 B");

    small = hw;
    strcpy(small.dram_type, "SRAM9");
    expect_invalid(&l, &small, ok, "hardware: unknown DRAM type 'SRAM9'");
    small = hw, small.block_in = 0;
    expect_invalid(&l, &small, ok, "hardware: GEMM shape 1 x 0 x 4 must be positive");
}

static tn_hw preset_hw(const char *name)
{
    arch_spec a;
    as_status st = {0};
    check(arch_load(name, &a, &st), &st);
    tn_hw hw;
    check(tn_hw_from_arch(&a, &hw, &st), &st);
    return hw;
}

static void test_hw_from_vta_preset(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    assert_int_equal(hw.batch, 1);
    assert_int_equal(hw.block_in, 16);
    assert_int_equal(hw.block_out, 16);
    assert_int_equal(hw.inp_buffer_bytes, 32 * 1024);
    assert_int_equal(hw.wgt_buffer_bytes, 256 * 1024);
    assert_int_equal(hw.acc_buffer_bytes, 128 * 1024);
    assert_int_equal(hw.uop_buffer_bytes, 32 * 1024);
    assert_int_equal(hw.inp_bits, 8);
    assert_int_equal(hw.wgt_bits, 8);
    assert_int_equal(hw.acc_bits, 32);
    assert_int_equal(hw.out_bits, 8);
    assert_close(hw.clock_hz, 100e6);
    assert_close(hw.dram_bytes_per_cycle, 21); /* 2.1 GB/s at 100 MHz */
    assert_int_equal(hw.dram_latency_cycles, 32);
    assert_int_equal(hw.node_nm, 28);
    assert_string_equal(hw.dram_type, "DDR3");

    arch_spec a;
    as_status st = {0};
    check(arch_load("eyeriss", &a, &st), &st);
    assert_int_equal(tn_hw_from_arch(&a, &hw, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "'eyeriss' is not VTA-shaped"));
}

/*
 * Resources of the default configuration (the derivation is in hw.c):
 *   DSP: 256 int8 MACs, two per DSP48 = 128.
 *   LUT: adder tree per lane 8 x 17 + 4 x 18 + 2 x 19 + 1 x 20 + 32 = 298,
 *   x 16 lanes = 4768; ALU 16 x 32 x 8 = 4096; ports 128 + 2048 + 512 + 128
 *   = 2816; shell 10000: 21680.
 *   BRAM36: input 32 KiB x 128 bits = 8; weight 256 KiB x 2048 bits: 57 wide
 *   x 1K deep = 57; accumulator 128 KiB x 512 bits: 29 x 2K deep = 29;
 *   output 32 KiB x 128 = 8; micro-ops 32 KiB x 32 = 8; shell 2: 112.
 * It fits the PYNQ-Z1; a 32 x 32 core does not (512 DSPs).
 */
static void test_resources(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    tn_resources r;
    tn_hw_resources(&hw, &r);
    assert_int_equal(r.dsps, 128);
    assert_int_equal(r.luts, 21680);
    assert_int_equal(r.brams, 112);

    const tn_budget *pynq = tn_budget_find("pynq");
    assert_non_null(pynq);
    assert_int_equal(pynq->available.luts, 53200);
    assert_int_equal(pynq->available.brams, 140);
    assert_int_equal(pynq->available.dsps, 220);
    char reason[64] = "";
    assert_true(tn_hw_fits(&hw, pynq, reason, sizeof reason));

    tn_hw big = hw;
    big.block_in = big.block_out = 32;
    assert_false(tn_hw_fits(&big, pynq, reason, sizeof reason));
    assert_string_equal(reason, "DSP 512 > 220");
    assert_true(tn_hw_fits(&big, tn_budget_find("zcu102"), reason, sizeof reason));

    int n = 0;
    const tn_budget *all = tn_budgets(&n);
    assert_int_equal(n, 3);
    assert_string_equal(all[1].name, "ultra96");
    assert_int_equal(all[1].available.dsps, 360);
    assert_int_equal(tn_budget_find("zcu102")->available.luts, 274080);
    assert_null(tn_budget_find("nosuch"));
}

/* ResNet-18's conv layers after the stem (c, k, input, output, kernel,
 * stride, pad). */
static const int64_t RESNET18[][7] = {
    {64, 64, 56, 56, 3, 1, 1},   {64, 128, 56, 28, 3, 2, 1},  {64, 128, 56, 28, 1, 2, 0},
    {128, 128, 28, 28, 3, 1, 1}, {128, 256, 28, 14, 3, 2, 1}, {128, 256, 28, 14, 1, 2, 0},
    {256, 256, 14, 14, 3, 1, 1}, {256, 512, 14, 7, 3, 2, 1},  {256, 512, 14, 7, 1, 2, 0},
    {512, 512, 7, 7, 3, 1, 1},
};
#define RESNET18_LAYERS (int)(sizeof RESNET18 / sizeof RESNET18[0])

static tn_conv resnet_layer(int i)
{
    const int64_t *d = RESNET18[i];
    return conv(d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
}

/* A divisor of n drawn from rng (or, one time in eight, any value up to n). */
static int64_t draw_tile(as_rng *rng, int64_t n, int64_t unit)
{
    if (as_rng_below(rng, 8) == 0)
        return 1 + as_rng_below(rng, n);
    for (;;) {
        int64_t t = unit * (1 + as_rng_below(rng, n / unit));
        if (n % t == 0)
            return t;
    }
}

/* Random knob settings on ResNet-18's layers, valid or not: never a
 * deadlock or another internal error, and every valid run obeys the
 * bounds no schedule can beat (each module's busy time; the GEMM core's
 * peak). */
static void test_no_deadlock_random(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    tn_hw batch2 = hw;
    batch2.batch = 2;
    as_rng rng = as_rng_stream(14, 0, AS_RNG_FROM_FIRST_OUTPUT);
    int valid = 0;
    for (int trial = 0; trial < 3000; trial++) {
        tn_conv l = resnet_layer(trial % RESNET18_LAYERS);
        const tn_hw *on = &hw;
        int64_t tile_b = 1;
        if (trial % 4 == 3) { /* a batch of 3 on a BATCH 2 core: padded to 4 */
            l.n = 3;
            l.macs *= 3;
            on = &batch2;
            tile_b = 1 + as_rng_below(&rng, 4);
        }
        tn_knobs k = {tile_b,
                      draw_tile(&rng, l.p, 1),
                      draw_tile(&rng, l.q, 1),
                      draw_tile(&rng, l.c, 16),
                      draw_tile(&rng, l.k, 16),
                      1 + (int)as_rng_below(&rng, 2),
                      1 + (int)as_rng_below(&rng, 2)};
        tn_result r;
        tn_vta_evaluate(&l, on, &k, &r);
        if (!r.valid) {
            if (strstr(r.reason, "internal"))
                fail_msg("trial %d: %s", trial, r.reason);
            continue;
        }
        valid++;
        for (int m = 0; m < TN_MODULES; m++)
            assert_true(r.cycles >= r.busy_cycles[m]);
        double peak = 2.0 * on->batch * on->block_in * on->block_out * on->clock_hz / 1e9;
        assert_true(r.gflops <= peak);
        assert_true(r.energy_pJ > 0);
    }
    assert_true(valid > 300);
}

/*
 * DRAM traffic of a strided, padded layer (ResNet-18's 64 -> 128, 56 -> 28,
 * 3 x 3, stride 2, pad 1) in 4 row tiles of 7 output rows, one column tile,
 * all channels in one tile, on buffers large enough for it.  Row tile i
 * reads input rows 14i - 1 .. 14i + 13 clipped to 0 .. 55: 14, 15, 15, 15
 * rows (59: the halo rows are read twice); every tile reads all 56
 * columns (-1 .. 55 clipped).  Input: 59 x 56 x 64 B; weights: 4 loads of
 * 128 x 64 x 9 B; output: 28 x 28 x 128 B.
 */
static void test_dram_traffic_strided(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    hw.inp_buffer_bytes = hw.wgt_buffer_bytes = hw.acc_buffer_bytes = 1 << 20;
    tn_conv l = resnet_layer(1);
    tn_knobs k = {1, 7, 28, 64, 128, 1, 1};
    tn_result r;
    tn_vta_evaluate(&l, &hw, &k, &r);
    assert_true(r.valid);
    assert_int_equal(r.dram_read_bytes, 59 * 56 * 64 + 4 * 128 * 64 * 9);
    assert_int_equal(r.dram_write_bytes, 28 * 28 * 128);
    /* 4 tiles: 4 input DMAs per load (one per ci block) + 1 weight DMA, and
     * a NOP each; 8 store DMAs per tile (one per channel block). */
    assert_int_equal(r.instructions[TN_LOAD], 4 * (4 + 1) + 4);
    assert_int_equal(r.instructions[TN_STORE], 1 + 4 * 8);
}

/* Two threads never take longer than the same tiles on one thread? Not a
 * law (the threads halve the tile count per group); but loads overlapping
 * compute must beat the fully serial sum of busy times. */
static void test_threads_overlap_resnet(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    tn_conv l = resnet_layer(3); /* 128 -> 128, 28 x 28, 3 x 3 */
    tn_knobs one = {1, 14, 28, 16, 32, 1, 1}, two = {1, 7, 28, 16, 32, 2, 1};
    tn_result r1, r2;
    tn_vta_evaluate(&l, &hw, &one, &r1);
    tn_vta_evaluate(&l, &hw, &two, &r2);
    assert_true(r1.valid && r2.valid);
    /* One thread runs its modules one after another. */
    assert_int_equal(r1.cycles, r1.busy_cycles[0] + r1.busy_cycles[1] + r1.busy_cycles[2]);
    assert_true(r2.cycles < r2.busy_cycles[0] + r2.busy_cycles[1] + r2.busy_cycles[2]);
}

/* Speed of one evaluation on a ResNet-18 layer (printed; the tuners make
 * thousands per layer). */
static void test_speed(void **state)
{
    (void)state;
    tn_hw hw = preset_hw("vta");
    tn_conv l = resnet_layer(0);
    tn_knobs k = {1, 14, 14, 16, 32, 2, 1};
    tn_result r;
    int runs = 2000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < runs; i++)
        tn_vta_evaluate(&l, &hw, &k, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(r.valid);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / runs;
    printf("tn_vta_evaluate, ResNet-18 conv2_x (64->64, 56x56), tiles 14x14x16x32, 2 threads: "
           "%.2f us per evaluation, %lld instructions, %.1f GFLOPS\n",
           us, (long long)(r.instructions[0] + r.instructions[1] + r.instructions[2]), r.gflops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_load_bound),
        cmocka_unit_test(test_one_thread_compute_bound),
        cmocka_unit_test(test_two_threads_overlap),
        cmocka_unit_test(test_store_bound),
        cmocka_unit_test(test_energy_hand_count),
        cmocka_unit_test(test_invalid_reasons),
        cmocka_unit_test(test_hw_from_vta_preset),
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_no_deadlock_random),
        cmocka_unit_test(test_dram_traffic_strided),
        cmocka_unit_test(test_threads_overlap_resnet),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
