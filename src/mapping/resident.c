/*
 * resident.c -- weights resident across inferences (mapping.h,
 * "resident weights"): where a network's weights live, and what reading
 * them from there costs.
 *
 * The model.  An inference compiler that finds room for every weight of
 * a model on chip loads them once and keeps them there: the steady-state
 * cost of one inference (what map, fuse and search report) reads no
 * weight from DRAM.  The level that holds them is the outermost on-chip
 * storage level (the Edge TPU's 8 MB parameter memory, the TPU's vector
 * memory, a global buffer), over all its instances.
 *
 * Footprint.  Every weight tensor (an initializer: trained weights,
 * biases, statistics not folded) that some layer reads, each once and
 * whole (a Gather's whole table), one word of the level per element: on
 * chip an element is one word whatever its storage precision (network.c,
 * "Precision"), so int8 weights on the Edge TPU's 8-bit words take one
 * byte each, bf16 ones on the TPU's 16-bit words two.  The weights are
 * spread evenly over the level's instances: each gives up
 * ceil(words / instances) words.  When the level splits its capacity per
 * data space, they live in its weight share.  When the level stores
 * weights compressed (arch_level.format, sparse.c) each tensor takes its
 * expected compressed size there (non-zeros plus metadata); the resident
 * reads are then the DRAM level's weight words as the mapping counts them
 * (compressed if the DRAM stores weights compressed).
 *
 * Fit.  The weights fit when each instance keeps at least one word for
 * everything else (a capacity of zero would read as unbounded).
 *
 * Cost, resident (network.c and fusion's tiling.c apply it).  The weights'
 * DRAM reads disappear from each layer's DRAM bytes, energy and time; each
 * weight word a layer would have read from DRAM is read from the resident
 * level instead: one read action per vector access (block_size words) at
 * the level's read energy, at its read bandwidth over all instances as a
 * transfer that overlaps compute (like DRAM's).  The tiles above are
 * filled from there as they were filled from DRAM -- conservative: a
 * compiler may read a resident weight in place where the mapping keeps a
 * copy of it in the same level.  The mapper maps every layer on a copy of
 * the architecture whose resident level has its capacity per instance
 * less the weights' share (map_residency_arch), so the weights' room is
 * taken from every tile there; that copy's bytes enter the mapping
 * cache's key, so results for different capacities never mix.
 *
 * The decision is one per (model, design): map, fuse and each candidate
 * of a co-design search make it with map_residency_decide.
 */
#include "mapping.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *map_weights_name(map_weights w)
{
    static const char *const names[] = {
        [MAP_WEIGHTS_AUTO] = "auto",
        [MAP_WEIGHTS_STREAMED] = "streamed",
        [MAP_WEIGHTS_RESIDENT] = "resident",
    };
    return (unsigned)w <= MAP_WEIGHTS_RESIDENT ? names[w] : "?";
}

int map_outermost_onchip_level(const arch_spec *a)
{
    for (int l = a->n_levels - 1; l >= 0; l--)
        if (a->level[l].cls != ARCH_CLASS_DRAM && a->level[l].cls != ARCH_CLASS_DUMMY)
            return l;
    return -1;
}

/* Capacity of one instance of level L for the weights: its weight share
 * when the capacity is split per data space, else all of it. */
static int64_t weight_room_per_instance(const arch_level *L)
{
    bool split = false;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        split |= L->size_words_by_ds[ds] != 0;
    return split ? L->size_words_by_ds[WL_DS_WEIGHTS] : L->size_words;
}

/* Words of every weight tensor the layers of g (and the ops in their
 * epilogues) read, each once, as level L (NULL: none) stores them. */
static as_code weight_footprint_words(const wl_graph *g, const arch_level *L, int64_t *words,
                                      as_status *st)
{
    bool *seen = calloc((size_t)(g->n_tensors > 0 ? g->n_tensors : 1), sizeof *seen);
    if (!seen)
        return as_fail(st, AS_ENOMEM, "%s: out of memory counting the weights", g->source);
    *words = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        const wl_op *op = &g->ops[g->order[k]];
        if (!wl_op_does_work(op)) /* a layer, or an op in a layer's epilogue */
            continue;
        for (int i = 0; i < op->n_inputs; i++) {
            int32_t t = op->inputs[i];
            if (t < 0 || seen[t] || g->tensors[t].kind != WL_TENSOR_WEIGHT ||
                wl_tensor_bytes(&g->tensors[t]) <= 0)
                continue;
            seen[t] = true;
            *words += map_sparse_weight_words(L, &g->tensors[t]);
        }
    }
    free(seen);
    return AS_OK;
}

static int64_t bytes_of_words(int64_t words, int word_bits)
{
    return (words * (word_bits > 0 ? word_bits : 8) + 7) / 8;
}

as_code map_residency_decide(const wl_graph *g, const arch_spec *a, map_weights mode,
                             map_residency *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->level = map_outermost_onchip_level(a);
    as_code code =
        weight_footprint_words(g, out->level >= 0 ? &a->level[out->level] : NULL, &out->words, st);
    if (code != AS_OK)
        return code;
    bool fits = false;
    if (out->level >= 0) {
        const arch_level *L = &a->level[out->level];
        int64_t instances = L->instances > 0 ? L->instances : 1;
        int64_t room = weight_room_per_instance(L);
        out->words_per_instance = (out->words + instances - 1) / instances;
        out->bytes = bytes_of_words(out->words, L->word_bits);
        out->capacity_words = room * instances;
        out->capacity_bytes = bytes_of_words(out->capacity_words, L->word_bits);
        fits = out->words_per_instance < room;
    }
    out->resident = mode != MAP_WEIGHTS_STREAMED && fits && out->words > 0;
    if (mode == MAP_WEIGHTS_RESIDENT && !fits) {
        if (out->level < 0)
            return as_fail(st, AS_EINVAL,
                           "%s: weights resident: %s has no on-chip level to hold them", g->name,
                           a->name);
        const arch_level *L = &a->level[out->level];
        return as_fail(st, AS_EINVAL,
                       "%s: weights resident: they need %lld bytes (%lld weights, one %d-bit "
                       "word each) and %s of %s holds %lld bytes (%lld instances x %lld words)",
                       g->name, (long long)out->bytes, (long long)out->words, L->word_bits, L->name,
                       a->name, (long long)out->capacity_bytes,
                       (long long)(L->instances > 0 ? L->instances : 1),
                       (long long)weight_room_per_instance(L));
    }
    return AS_OK;
}

void map_residency_arch(const arch_spec *a, const map_residency *r, arch_spec *out)
{
    memcpy(out, a, sizeof *out); /* bytes, padding included: equal designs, equal keys */
    if (!r->resident || r->level < 0)
        return;
    arch_level *L = &out->level[r->level];
    if (L->size_words_by_ds[WL_DS_WEIGHTS] != 0)
        L->size_words_by_ds[WL_DS_WEIGHTS] -= r->words_per_instance;
    L->size_words -= r->words_per_instance;
}

void map_resident_read(const arch_spec *a, const map_residency *r, int64_t words, double *energy_pJ,
                       int64_t *cycles)
{
    *energy_pJ = 0;
    *cycles = 0;
    if (!r || !r->resident || r->level < 0 || words <= 0)
        return;
    const arch_level *L = &a->level[r->level];
    int64_t block = L->block_size > 0 ? L->block_size : 1;
    *energy_pJ = (double)((words + block - 1) / block) * L->energy.read_pJ;
    double per_instance = L->read_bandwidth > 0 ? L->read_bandwidth : L->shared_bandwidth;
    double instances = (double)(L->instances > 0 ? L->instances : 1);
    if (per_instance > 0)
        *cycles = (int64_t)ceil((double)words / (per_instance * instances));
}

bool map_tensor_is_resident(const wl_graph *g, const map_residency *r, int32_t t)
{
    return r && r->resident && t >= 0 && g->tensors[t].kind == WL_TENSOR_WEIGHT;
}

int64_t map_op_weight_words(const wl_graph *g, int32_t o)
{
    const wl_op *op = &g->ops[o];
    int64_t words = 0;
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        bool repeated = false;
        for (int j = 0; j < i && !repeated; j++)
            repeated = op->inputs[j] == t;
        if (t < 0 || repeated || g->tensors[t].kind != WL_TENSOR_WEIGHT ||
            wl_tensor_bytes(&g->tensors[t]) <= 0)
            continue;
        bool gathered = i == 0 && wl_op_gathers_rows(op, 0);
        words += wl_tensor_elements(&g->tensors[gathered ? op->outputs[0] : t]);
    }
    return words;
}
