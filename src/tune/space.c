/*
 * space.c -- one layer's knob space: the seven schedule knobs of TVM's
 * VTA conv2d template and VTA++'s hardware parameters, a point as one
 * choice index per knob, and what the tuners need of a point (its
 * knobs and hardware, its measurement, its features for a cost model).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune_private.h"

static const struct {
    const char *name;
    tn_agent agent;
} knob_info[TN_KNOBS] = {
    [TN_KNOB_H_THREADING] = {"h_threading", TN_AGENT_SCHEDULING},
    [TN_KNOB_OC_THREADING] = {"oc_threading", TN_AGENT_SCHEDULING},
    [TN_KNOB_TILE_H] = {"tile_h", TN_AGENT_MAPPING},
    [TN_KNOB_TILE_W] = {"tile_w", TN_AGENT_MAPPING},
    [TN_KNOB_TILE_B] = {"tile_b", TN_AGENT_HARDWARE},
    [TN_KNOB_TILE_CI] = {"tile_ci", TN_AGENT_HARDWARE},
    [TN_KNOB_TILE_CO] = {"tile_co", TN_AGENT_HARDWARE},
    [TN_KNOB_BATCH] = {"batch", TN_AGENT_HARDWARE},
    [TN_KNOB_BLOCK_IN] = {"block_in", TN_AGENT_HARDWARE},
    [TN_KNOB_BLOCK_OUT] = {"block_out", TN_AGENT_HARDWARE},
    [TN_KNOB_INP_BUFFER] = {"inp_buffer_bytes", TN_AGENT_HARDWARE},
    [TN_KNOB_WGT_BUFFER] = {"wgt_buffer_bytes", TN_AGENT_HARDWARE},
    [TN_KNOB_ACC_BUFFER] = {"acc_buffer_bytes", TN_AGENT_HARDWARE},
};

const char *tn_knob_name(tn_knob k)
{
    return k >= 0 && k < TN_KNOBS ? knob_info[k].name : "?";
}

tn_agent tn_knob_agent(tn_knob k)
{
    return knob_info[k].agent;
}

/*
 * VTA++'s hardware ranges (Banerjee et al. 2021 make BATCH, BLOCK_IN,
 * BLOCK_OUT and each buffer's size independent parameters of
 * vta_config.json; VTA itself ties BLOCK_IN = BLOCK_OUT).  Powers of two,
 * as the hardware generator requires; the budget decides what fits.
 */
static const int64_t hw_batch[] = {1, 2, 4};
static const int64_t hw_block[] = {8, 16, 32, 64};
static const int64_t hw_inp_kib[] = {8, 16, 32, 64, 128, 256};
static const int64_t hw_wgt_kib[] = {32, 64, 128, 256, 512, 1024};
static const int64_t hw_acc_kib[] = {16, 32, 64, 128, 256, 512};

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Set knob k's choices to values (scaled by unit), or to the single
 * value fixed when the hardware does not vary. */
static void set_choices(tn_space *sp, tn_knob k, const int64_t *values, int n, int64_t unit,
                        int64_t fixed)
{
    if (!sp->vary_hardware) {
        sp->n_choices[k] = 1;
        sp->value[k][0] = fixed;
        return;
    }
    sp->n_choices[k] = n;
    for (int i = 0; i < n; i++)
        sp->value[k][i] = values[i] * unit;
}

/* The divisors of extent that are multiples of step, ascending (at most
 * TN_MAX_CHOICES of them, evenly thinned when there are more). */
static void set_divisors(tn_space *sp, tn_knob k, int64_t extent, int64_t step)
{
    int64_t all[4096];
    int n = 0;
    for (int64_t d = step; d <= extent && n < (int)(sizeof all / sizeof all[0]); d += step)
        if (extent % d == 0)
            all[n++] = d;
    if (n == 0) /* no multiple of step divides it: the model reports why */
        all[n++] = extent;
    int keep = n < TN_MAX_CHOICES ? n : TN_MAX_CHOICES;
    for (int i = 0; i < keep; i++)
        sp->value[k][i] = all[keep == n ? i : (int64_t)i * (n - 1) / (keep - 1)];
    sp->n_choices[k] = keep;
}

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/*
 * Tile knobs are extents, so that one value means the same tile whatever
 * the hardware: tile_h and tile_w divide the output rows and columns;
 * tile_ci and tile_co are channel counts dividing C and K in steps of the
 * smallest BLOCK the space offers (the model rejects a tile that is not a
 * multiple of the chosen BLOCK).  tile_b counts batch blocks, as TVM's
 * split of the packed batch axis does (the tile is tile_b x BATCH
 * elements): a batch-1 layer has the one choice whatever BATCH is.
 */
as_code tn_space_init(tn_space *sp, const tn_conv *layer, const tn_hw *base, const tn_budget *b,
                      bool vary_hardware, as_status *st)
{
    memset(sp, 0, sizeof *sp);
    if (!layer || !base || !b)
        return as_fail(st, AS_EINVAL, "tune space: layer, hardware and budget are required");
    sp->layer = *layer;
    sp->base = *base;
    sp->budget = b;
    sp->vary_hardware = vary_hardware;

    static const int64_t threads[] = {1, 2};
    sp->n_choices[TN_KNOB_H_THREADING] = sp->n_choices[TN_KNOB_OC_THREADING] = 2;
    for (int i = 0; i < 2; i++)
        sp->value[TN_KNOB_H_THREADING][i] = sp->value[TN_KNOB_OC_THREADING][i] = threads[i];

    set_choices(sp, TN_KNOB_BATCH, hw_batch, LEN(hw_batch), 1, base->batch);
    set_choices(sp, TN_KNOB_BLOCK_IN, hw_block, LEN(hw_block), 1, base->block_in);
    set_choices(sp, TN_KNOB_BLOCK_OUT, hw_block, LEN(hw_block), 1, base->block_out);
    set_choices(sp, TN_KNOB_INP_BUFFER, hw_inp_kib, LEN(hw_inp_kib), 1024, base->inp_buffer_bytes);
    set_choices(sp, TN_KNOB_WGT_BUFFER, hw_wgt_kib, LEN(hw_wgt_kib), 1024, base->wgt_buffer_bytes);
    set_choices(sp, TN_KNOB_ACC_BUFFER, hw_acc_kib, LEN(hw_acc_kib), 1024, base->acc_buffer_bytes);

    int64_t min_block_in = sp->value[TN_KNOB_BLOCK_IN][0];
    int64_t min_block_out = sp->value[TN_KNOB_BLOCK_OUT][0];
    int64_t min_batch = sp->value[TN_KNOB_BATCH][0];
    set_divisors(sp, TN_KNOB_TILE_H, layer->p, 1);
    set_divisors(sp, TN_KNOB_TILE_W, layer->q, 1);
    set_divisors(sp, TN_KNOB_TILE_B, round_up(layer->n, min_batch) / min_batch, 1);
    set_divisors(sp, TN_KNOB_TILE_CI, layer->c, min_block_in);
    set_divisors(sp, TN_KNOB_TILE_CO, layer->k, min_block_out);
    return AS_OK;
}

int64_t tn_space_size(const tn_space *sp)
{
    int64_t size = 1;
    for (int k = 0; k < TN_KNOBS; k++)
        if (!as_mul_i64(size, sp->n_choices[k], &size))
            return INT64_MAX;
    return size;
}

void tn_space_decode(const tn_space *sp, const tn_point *pt, tn_knobs *k, tn_hw *hw)
{
#define V(knob) sp->value[knob][pt->choice[knob]]
    *k = (tn_knobs){.tile_b = V(TN_KNOB_TILE_B) * V(TN_KNOB_BATCH),
                    .tile_h = V(TN_KNOB_TILE_H),
                    .tile_w = V(TN_KNOB_TILE_W),
                    .tile_ci = V(TN_KNOB_TILE_CI),
                    .tile_co = V(TN_KNOB_TILE_CO),
                    .h_threading = (int)V(TN_KNOB_H_THREADING),
                    .oc_threading = (int)V(TN_KNOB_OC_THREADING)};
    *hw = sp->base;
    hw->batch = (int)V(TN_KNOB_BATCH);
    hw->block_in = (int)V(TN_KNOB_BLOCK_IN);
    hw->block_out = (int)V(TN_KNOB_BLOCK_OUT);
    hw->inp_buffer_bytes = V(TN_KNOB_INP_BUFFER);
    hw->wgt_buffer_bytes = V(TN_KNOB_WGT_BUFFER);
    hw->acc_buffer_bytes = V(TN_KNOB_ACC_BUFFER);
#undef V
}

/* Hardware over the budget is as invalid as a tile that overflows a
 * buffer: the FPGA bitstream would not build. */
void tn_space_measure(const tn_space *sp, const tn_point *pt, tn_result *out)
{
    tn_knobs k;
    tn_hw hw;
    tn_space_decode(sp, pt, &k, &hw);
    char reason[96];
    if (!tn_hw_fits(&hw, sp->budget, reason, sizeof reason)) {
        memset(out, 0, sizeof *out);
        snprintf(out->reason, sizeof out->reason, "hardware over the %s budget: %s",
                 sp->budget->name, reason);
        return;
    }
    tn_vta_evaluate(&sp->layer, &hw, &k, out);
}

/* Index of value among knob k's choices, or the nearest one below it. */
static uint8_t choice_of(const tn_space *sp, tn_knob k, int64_t value)
{
    int best = 0;
    for (int i = 0; i < sp->n_choices[k]; i++)
        if (sp->value[k][i] <= value)
            best = i;
    return (uint8_t)best;
}

/*
 * TVM's fallback configuration (what runs untuned): every define_split
 * keeps an inner extent of one -- one output row and column, one BATCH,
 * one BLOCK of input and output channels -- and one thread, on the base
 * hardware.
 */
void tn_space_default(const tn_space *sp, tn_point *out)
{
    memset(out, 0, sizeof *out);
    out->choice[TN_KNOB_BATCH] = choice_of(sp, TN_KNOB_BATCH, sp->base.batch);
    out->choice[TN_KNOB_BLOCK_IN] = choice_of(sp, TN_KNOB_BLOCK_IN, sp->base.block_in);
    out->choice[TN_KNOB_BLOCK_OUT] = choice_of(sp, TN_KNOB_BLOCK_OUT, sp->base.block_out);
    out->choice[TN_KNOB_INP_BUFFER] = choice_of(sp, TN_KNOB_INP_BUFFER, sp->base.inp_buffer_bytes);
    out->choice[TN_KNOB_WGT_BUFFER] = choice_of(sp, TN_KNOB_WGT_BUFFER, sp->base.wgt_buffer_bytes);
    out->choice[TN_KNOB_ACC_BUFFER] = choice_of(sp, TN_KNOB_ACC_BUFFER, sp->base.acc_buffer_bytes);
    out->choice[TN_KNOB_TILE_B] = 0; /* one batch block */
    out->choice[TN_KNOB_TILE_CI] = choice_of(sp, TN_KNOB_TILE_CI, sp->base.block_in);
    out->choice[TN_KNOB_TILE_CO] = choice_of(sp, TN_KNOB_TILE_CO, sp->base.block_out);
}

/* Draws of the hardware knobs tried for a design within the budget. */
#define TN_HW_DRAWS 256

/*
 * Uniform over the knobs, except that the hardware is drawn again (up to
 * TN_HW_DRAWS times) while it is over the budget: most of VTA++'s range
 * does not fit a small FPGA, and a design that cannot be built is not
 * worth a measurement, where a tiling that overflows is (it is how a
 * tuner learns the buffers' limits).
 */
void tn_space_random(const tn_space *sp, as_rng *rng, tn_point *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < TN_KNOBS; k++)
        out->choice[k] = (uint8_t)as_rng_below(rng, sp->n_choices[k]);
    tn_knobs knobs;
    tn_hw hw;
    for (int draw = 1; draw < TN_HW_DRAWS; draw++) {
        tn_space_decode(sp, out, &knobs, &hw);
        if (tn_hw_fits(&hw, sp->budget, NULL, 0))
            break;
        for (int k = TN_KNOB_BATCH; k < TN_KNOBS; k++)
            out->choice[k] = (uint8_t)as_rng_below(rng, sp->n_choices[k]);
    }
}

/*
 * Features for the learned cost models, all cheap and all known before a
 * measurement: log2 of every knob value, then the occupancy of the input,
 * weight and accumulator buffers by the tiles of all threads (the tiles as
 * the template loads them, with the convolution's halo), log2 of the
 * output tiles (outer iterations), log2 of the MACs per tile per DRAM byte
 * the tile loads, and log2 of the MACs per GEMM op.
 */
void tn_space_features(const tn_space *sp, const tn_point *pt, double *out)
{
    for (int k = 0; k < TN_KNOBS; k++)
        out[k] = log2((double)sp->value[k][pt->choice[k]]);
    tn_knobs kn;
    tn_hw hw;
    tn_space_decode(sp, pt, &kn, &hw);
    const tn_conv *l = &sp->layer;
    double threads = (double)kn.h_threading * kn.oc_threading;
    double in_rows = (double)(kn.tile_h - 1) * l->stride_h + l->r;
    double in_cols = (double)(kn.tile_w - 1) * l->stride_w + l->s;
    double inp_bytes = (double)kn.tile_b * kn.tile_ci * in_rows * in_cols * hw.inp_bits / 8;
    double wgt_bytes = (double)kn.tile_co * kn.tile_ci * l->r * l->s * hw.wgt_bits / 8;
    double acc_bytes = (double)kn.tile_b * kn.tile_co * kn.tile_h * kn.tile_w * hw.acc_bits / 8;
    double tile_macs =
        (double)kn.tile_b * kn.tile_co * kn.tile_h * kn.tile_w * kn.tile_ci * (double)(l->r * l->s);
    double tiles = (double)l->n / kn.tile_b * (double)l->k / kn.tile_co * (double)l->p / kn.tile_h *
                   (double)l->q / kn.tile_w;
    double *f = out + TN_KNOBS;
    f[0] = threads * inp_bytes / (double)hw.inp_buffer_bytes;
    f[1] = threads * wgt_bytes / (double)hw.wgt_buffer_bytes;
    f[2] = threads * acc_bytes / (double)hw.acc_buffer_bytes;
    f[3] = log2(tiles > 1 ? tiles : 1);
    f[4] = log2(tile_macs / (inp_bytes + wgt_bytes));
    f[5] = log2((double)hw.batch * hw.block_in * hw.block_out);
}

void tn_point_format(const tn_space *sp, const tn_point *pt, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < TN_KNOBS && used < size; k++) {
        int n = snprintf(buf + used, size - used, "%s%s=%lld", k ? " " : "", knob_info[k].name,
                         (long long)sp->value[k][pt->choice[k]]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

uint64_t tn_point_hash(const tn_point *pt)
{
    return as_hash_bytes(pt->choice, sizeof pt->choice, AS_HASH_SEED);
}

bool tn_point_equal(const tn_point *a, const tn_point *b)
{
    return memcmp(a->choice, b->choice, sizeof a->choice) == 0;
}
