/*
 * sparse.c -- Sparseloop-style sparse costing (Y. N. Wu, P.-A. Tsai,
 * A. Parashar, V. Sze, J. S. Emer, "Sparseloop: An Analytical Approach to
 * Sparse Tensor Accelerator Modeling", MICRO 2022), called by map_evaluate
 * on a design that declares compressed formats or zero handling
 * (arch_is_sparse).  docs/sparse.md states the model; in short:
 *
 *  - Densities.  Each data space's non-zeros are spread uniformly at
 *    random with its density d (wl_dataspace.density); every count below
 *    is an expected value.
 *  - Storage.  A level that keeps a data space compressed stores, reads,
 *    fills and updates d x the words the dense analysis counts, plus the
 *    metadata those words carry: a tile of T dense elements has B
 *    metadata bits (metadata_bits, per format), so every dense word moved
 *    brings B / (T x word_bits) metadata words of that level along, costed
 *    like data words (the level's vector-access energy, its bandwidth).
 *    The tile's footprint for the capacity check is d x T + B / word_bits
 *    words, rounded up: the expected occupancy, no headroom for a tile
 *    denser than expected.  An uncompressed level moves every word, zeros
 *    included, whatever the density.
 *  - Compute.  A MAC is effectual when every operand it checks is
 *    non-zero: with independent uniform densities, probability
 *    prod(d of the checked operands).  Gating charges the ineffectual ones
 *    gated_mac_fraction of a MAC's energy and keeps their cycles, and
 *    charges no energy for their operand reads and partial-sum updates at
 *    the levels serving the MACs (which keep their slots); skipping
 *    issues only the effectual ones (energy and cycles), and with them
 *    only their operand reads and partial-sum updates at the levels that
 *    serve the MACs.  Load imbalance between PEs that skip different
 *    amounts is not modelled.
 *
 * Nothing here allocates.
 */
#include "eval_private.h"

#include <math.h>
#include <stdio.h>

/* Bits to tell x values apart: ceil(log2 x), 0 for x <= 1. */
static int index_bits(int64_t x)
{
    int bits = 0;
    while (bits < 63 && ((int64_t)1 << bits) < x)
        bits++;
    return bits;
}

static double clamp_density(double d)
{
    return d >= 0 && d <= 1 ? d : d > 1 ? 1.0 : 0.0;
}

/*
 * Expected metadata bits of one tile in format f (arch.h states the
 * formats; Sparseloop's per-rank format models, flattened):
 *   bitmask  T               one bit per element of the dense tile;
 *   rle      nnz x r         a run-length field per non-zero (runs longer
 *                            than the field can count are not modelled);
 *   csr      (rows + 1) x o + nnz x c, rows the outermost rank of extent
 *            above 1 (1 when none), c = ceil(log2 row length) and
 *            o = ceil(log2(T + 1)) unless given;
 *   coo      nnz x sum over ranks of extent above 1 of c_r,
 *            c_r = ceil(log2 extent_r) unless given;
 * with T the tile's elements and nnz = d x T.
 */
static double metadata_bits(const arch_ds_format *f, const int64_t *span, int ranks, double d)
{
    int64_t elements = 1, rows = 1;
    for (int r = 0; r < ranks; r++)
        elements *= span[r];
    for (int r = 0; r < ranks; r++)
        if (span[r] > 1) {
            rows = span[r];
            break;
        }
    double nonzeros = d * (double)elements;
    switch (f->format) {
    case ARCH_FORMAT_BITMASK:
        return (double)elements;
    case ARCH_FORMAT_RLE:
        return nonzeros * (f->metadata_bits ? f->metadata_bits : ARCH_RLE_DEFAULT_BITS);
    case ARCH_FORMAT_CSR: {
        int coordinate = f->metadata_bits ? f->metadata_bits : index_bits(elements / rows);
        int offset = f->offset_bits ? f->offset_bits : index_bits(elements + 1);
        return (double)(rows + 1) * offset + nonzeros * coordinate;
    }
    case ARCH_FORMAT_COO: {
        int coordinates = 0;
        for (int r = 0; r < ranks; r++)
            if (span[r] > 1)
                coordinates += f->metadata_bits ? f->metadata_bits : index_bits(span[r]);
        return nonzeros * coordinates;
    }
    case ARCH_FORMAT_UNCOMPRESSED:
    default:
        return 0;
    }
}

int64_t map_sparse_tile_words(const arch_ds_format *f, int word_bits, const int64_t *span,
                              int ranks, double density)
{
    int64_t elements = 1;
    for (int r = 0; r < ranks; r++)
        elements *= span[r];
    if (f->format == ARCH_FORMAT_UNCOMPRESSED)
        return elements;
    double d = clamp_density(density);
    double bits = metadata_bits(f, span, ranks, d);
    return (int64_t)ceil(d * (double)elements + bits / (double)(word_bits > 0 ? word_bits : 1));
}

int64_t sparse_tile_words(const arch_level *al, const wl_problem *p, int ds,
                          const int64_t ext[WL_NDIMS])
{
    if (al->format[ds].format == ARCH_FORMAT_UNCOMPRESSED)
        return nest_box_words(&p->ds[ds], ext);
    int64_t span[WL_MAX_DS_RANKS];
    int ranks = nest_rank_extents(&p->ds[ds], ext, span);
    return map_sparse_tile_words(&al->format[ds], al->word_bits, span, ranks, p->ds[ds].density);
}

int64_t map_sparse_weight_words(const arch_level *L, const wl_tensor *t)
{
    if (!L || L->format[WL_DS_WEIGHTS].format == ARCH_FORMAT_UNCOMPRESSED)
        return wl_tensor_elements(t);
    return map_sparse_tile_words(&L->format[WL_DS_WEIGHTS], L->word_bits, t->dims, t->rank,
                                 t->density);
}

int64_t map_sparse_weight_dram_bytes(const arch_spec *a, const wl_tensor *t)
{
    const arch_level *L = &a->level[a->n_levels - 1];
    const arch_ds_format *f = &L->format[WL_DS_WEIGHTS];
    if (L->cls != ARCH_CLASS_DRAM || f->format == ARCH_FORMAT_UNCOMPRESSED)
        return wl_tensor_bytes(t);
    double d = clamp_density(t->density);
    double bits =
        d * (double)wl_tensor_elements(t) * t->bits + metadata_bits(f, t->dims, t->rank, d);
    return (int64_t)ceil(bits / 8.0);
}

/* Index of the innermost level m keeps ds at: the level that serves the
 * MACs' own accesses to ds (bypassed levels pass them outwards). */
static int innermost_kept(const map_mapping *m, int ds)
{
    int l = 0;
    while (l < m->n_levels - 1 && !m->level[l].keep[ds])
        l++;
    return l;
}

/* A skipping MAC finds its next effectual operand from the metadata: the
 * innermost level the mapping keeps each checked operand at must hold it
 * compressed. */
static bool check_skipping(const arch_spec *a, const map_mapping *m, map_eval *out)
{
    static const char *const NAME[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};
    if (a->compute.zero_action != ARCH_ZERO_SKIP)
        return true;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        if (!a->compute.zero_operand[ds])
            continue;
        int l = innermost_kept(m, ds);
        if (a->level[l].format[ds].format != ARCH_FORMAT_UNCOMPRESSED)
            continue;
        out->validity = MAP_INVALID_KEEP;
        snprintf(out->reason, sizeof out->reason,
                 "the MACs skip zero %s but are fed them uncompressed from level %d (%s)", NAME[ds],
                 l, a->level[l].name);
        return false;
    }
    return true;
}

/* One count of dense words scaled to non-zeros plus metadata; the
 * metadata part added to *metadata. */
static int64_t compressed(int64_t dense_words, double d, double metadata_per_word,
                          int64_t *metadata)
{
    int64_t meta = llround((double)dense_words * metadata_per_word);
    *metadata += meta;
    return llround((double)dense_words * d) + meta;
}

/* Probability that a MAC is effectual: every operand it checks is
 * non-zero (independent uniform densities); 1 without zero handling. */
static double effectual_fraction(const arch_spec *a, const wl_problem *p)
{
    double fraction = 1.0;
    if (a->compute.zero_action == ARCH_ZERO_NONE)
        return fraction;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (a->compute.zero_operand[ds])
            fraction *= clamp_density(p->ds[ds].density);
    return fraction;
}

/* The fraction of the MACs' accesses to ds at level l (the level serving
 * them) that go with effectual MACs: the effectual fraction, divided by
 * ds's own density when ds is a checked operand stored compressed there
 * (its counts are already the non-zeros). */
static double effectual_access_fraction(const arch_spec *a, const wl_problem *p, int l, int ds)
{
    double effectual = effectual_fraction(a, p), d = clamp_density(p->ds[ds].density);
    if (a->compute.zero_operand[ds] && a->level[l].format[ds].format != ARCH_FORMAT_UNCOMPRESSED)
        return d > 0 ? effectual / d : 1.0;
    return effectual;
}

/*
 * Skipping MACs are not issued, so neither are their operand reads nor
 * their partial-sum update (Sparseloop pairs a compute skip with skipping
 * at the innermost storage): the reads and updates of every data space
 * at the level serving the MACs scale by the issued fraction -- divided,
 * for a checked operand stored compressed there, by its own density,
 * which its compressed counts already carry.
 */
static void skip_innermost_accesses(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                                    map_eval *out)
{
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        int l = innermost_kept(m, ds);
        map_ds_stats *s = &out->level[l].ds[ds];
        double factor = effectual_access_fraction(a, p, l, ds);
        if (factor >= 1.0)
            continue;
        int64_t reads = llround((double)s->reads * factor);
        int64_t updates = llround((double)s->updates * factor);
        s->metadata_words = llround((double)s->metadata_words * factor);
        s->reads = reads;
        s->updates = updates;
    }
}

bool sparse_scale_storage(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                          const nest *n, map_eval *out)
{
    if (!check_skipping(a, m, out))
        return false;
    for (int l = 0; l < out->n_levels; l++) {
        const arch_level *al = &a->level[l];
        int word_bits = al->word_bits > 0 ? al->word_bits : 1;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            map_ds_stats *s = &out->level[l].ds[ds];
            const arch_ds_format *f = &al->format[ds];
            if (f->format == ARCH_FORMAT_UNCOMPRESSED || !out->level[l].keeps[ds] ||
                s->tile_words <= 0)
                continue;
            int64_t span[WL_MAX_DS_RANKS];
            int ranks = nest_rank_extents(&p->ds[ds], n->tile_extent[l], span);
            double d = clamp_density(p->ds[ds].density);
            double per_word =
                metadata_bits(f, span, ranks, d) / ((double)s->tile_words * (double)word_bits);
            s->metadata_words = 0;
            s->reads = compressed(s->reads, d, per_word, &s->metadata_words);
            s->fills = compressed(s->fills, d, per_word, &s->metadata_words);
            s->updates = compressed(s->updates, d, per_word, &s->metadata_words);
            s->tile_words = sparse_tile_words(al, p, ds, n->tile_extent[l]);
        }
    }
    if (a->compute.zero_action == ARCH_ZERO_SKIP)
        skip_innermost_accesses(a, p, m, out);
    return true;
}

/* Vector actions of `words` words at blocks of `block` (eval.c's rule). */
static double vector_actions(int64_t words, int block)
{
    return (double)((words + block - 1) / block);
}

void sparse_gate_access_energy(const arch_spec *a, const wl_problem *p, const map_mapping *m,
                               map_eval *out)
{
    if (a->compute.zero_action != ARCH_ZERO_GATE)
        return;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        int l = innermost_kept(m, ds);
        const arch_level *al = &a->level[l];
        map_level_stats *ls = &out->level[l];
        map_ds_stats *s = &ls->ds[ds];
        double factor = effectual_access_fraction(a, p, l, ds);
        int block = al->block_size > 0 ? al->block_size : 1;
        double served = vector_actions(s->reads, block) * al->energy.read_pJ +
                        vector_actions(s->updates, block) * al->energy.update_pJ;
        double filled = vector_actions(s->fills, block) * al->energy.fill_pJ;
        if (factor >= 1.0 || served + filled <= 0 || !ls->keeps[ds])
            continue;
        double gated = s->energy_pJ * (served * factor + filled) / (served + filled);
        ls->energy_pJ += gated - s->energy_pJ;
        s->energy_pJ = gated;
    }
}

double sparse_issued_fraction(const arch_spec *a, const wl_problem *p)
{
    return a->compute.zero_action == ARCH_ZERO_SKIP ? effectual_fraction(a, p) : 1.0;
}

int64_t sparse_compute_cycles(const arch_spec *a, const wl_problem *p, int64_t dense_cycles)
{
    double issued = sparse_issued_fraction(a, p);
    if (issued >= 1.0 || dense_cycles < 0)
        return dense_cycles;
    int64_t cycles = (int64_t)ceil((double)dense_cycles * issued);
    return cycles > 0 ? cycles : 1;
}

double sparse_mac_energy_pJ(const arch_spec *a, const wl_problem *p, double dense_pJ)
{
    double effectual = effectual_fraction(a, p);
    switch (a->compute.zero_action) {
    case ARCH_ZERO_GATE:
        return dense_pJ * (effectual + a->compute.gated_mac_fraction * (1.0 - effectual));
    case ARCH_ZERO_SKIP:
        return dense_pJ * effectual;
    case ARCH_ZERO_NONE:
    default:
        return dense_pJ;
    }
}
