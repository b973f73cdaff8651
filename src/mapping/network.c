/*
 * network.c -- a whole network on one architecture, layer by layer, no
 * fusion (map_network_evaluate, map_network_by_op_type).
 *
 * Layers.  Every live, unfolded op that does work is a layer, listed in
 * topological order: compute ops (Conv, ConvTranspose, Gemm, MatMul) are
 * mapped by the mapper; the others (elementwise, normalisation, pooling,
 * reductions, data movement) are costed by the vector-unit model below.
 * Views, shape arithmetic, folded and dead ops cost nothing and are not
 * listed; neither are unknown op types (the workload layer costs them as
 * zero and warns about them).
 *
 * Distinct problems.  Two compute ops whose problems agree in kind,
 * bounds, strides, dilations, projections, read/write roles, bits and
 * densities have the same best mapping, so each such class is searched
 * once and every layer of the class shares its result.  Every search uses
 * the caller's seed, so a problem's mapping does not depend on the network
 * around it or on its position there.
 *
 * Precision.  The mapper counts words, one element of a data space per
 * word: on chip, elements are stored and moved at the hardware's
 * word_bits whatever the tensor's precision (the datapath's own format).
 * Off chip, tensors are stored packed at their storage precision
 * (wl_tensor.bits, which the precision transforms set), so for each data
 * space DRAM bytes = DRAM words * bits / 8, DRAM energy = the mapping's
 * DRAM-level energy * bits / word_bits (the same energy per bit moved),
 * and DRAM time = bytes / bandwidth.  bf16 tensors thus move half the
 * bytes of fp32 ones on any architecture.  A tensor wider than the words
 * of an on-chip level that keeps it is thus converted: narrowed to the
 * words there, kept at its precision in DRAM.  That conversion is a
 * choice of the model, not of the hardware, so it is reported
 * (map_network_result.n_narrowed_layers) for the caller to show.  A data
 * space the DRAM level stores compressed (sparse.c) moves its expected
 * non-zeros at the tensor's precision plus its metadata words at the
 * DRAM's word width, into the same bytes, energy and time.
 *
 * Compute layers.  When the backing store (the last level) is DRAM, the
 * mapping's traffic there is the layer's DRAM traffic -- inputs and
 * weights read, outputs written, refetches and partial-sum round trips
 * included -- and the op's inputs that the loop nest does not model (a
 * conv's bias, Gemm's C) are read once more.  When the backing store is
 * on chip (a Timeloop design without DRAM), every level counts as on-chip
 * storage and the layer additionally reads its inputs and weights from
 * DRAM and writes its outputs back once (wl_op_stats_get).  Either way
 * DRAM traffic is counted once.  Cycles = max(compute cycles, each on-chip
 * level's bandwidth-limited cycles, DRAM bytes / DRAM bytes per cycle):
 * transfers overlap compute (double buffering), and the byte-based DRAM
 * time replaces the mapping's word-based one.
 *
 * Weights.  Resident across inferences or streamed (resident.c states the
 * model; map_network_options.weights, by default resident when they fit
 * the outermost on-chip level): the decision is made once for the
 * network; with resident weights every layer is mapped and costed on the
 * architecture less the weights' room, and the weight data spaces' and
 * weight inputs' DRAM reads become reads of the resident level
 * (mapped_dram_traffic, outside_traffic, map_cost_vector_layer).
 *
 * Other layers: the vector unit.  work = element operations (vector_ops
 * states them per op type); the unit does vector_lanes() of them per
 * cycle; energy = work * the compute unit's MAC energy (an add, compare,
 * multiply or table lookup costs at most one MAC).  Traffic: inputs and
 * weights read from DRAM, outputs written (wl_op_stats_get); cycles =
 * max(work / lanes, DRAM time).  Staging through on-chip buffers is not
 * costed.
 *
 * Threads.  Distinct problems are mapped in parallel, one search per
 * thread when there are at least as many problems as threads, otherwise
 * the threads go into the searches.  Results are stored per class and
 * summed in layer order afterwards, so the totals do not depend on the
 * thread count (the mapper's result does not either).
 *
 * Interruption.  *stop_flag is polled between search steps.  A class whose
 * search has found a valid mapping keeps the best so far; the layers of a
 * class never searched, or without a valid mapping yet, are left
 * unmapped: mapped = false, zero costs, counted in n_unmapped.  Totals are
 * then partial and interrupted is true.
 *
 * Sharing.  The search of one problem and the costing of one layer are
 * mapping.h's layer cost, which the fusion module uses too: a fused plan
 * of singleton groups costs exactly what this file charges.  With a
 * mapping cache in the options (map_cache), a class whose problem the
 * cache holds for this design is not searched again.
 */
#include "mapping.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define OP_FMT "%s: node %d '%s' (%s)"
#define OP_ARGS(g, op) (g)->source, (op)->source_index, (op)->name, (op)->op_type

/* Evaluations per search step: enough for one round of the mapper's
 * parallel chunks (8 of 1,000 in search.c), few enough that the stop flag
 * is seen within some 30 ms at the evaluator's ~4 us per mapping. */
#define STEP_EVALUATIONS 8192
/* Budget per problem when neither the caller nor the search options bound
 * a random search (it would never end otherwise). */
#define DEFAULT_RANDOM_BUDGET 20000
/* A search without a valid mapping when its budget runs out gets this
 * many more budgets before its layer is declared unmappable. */
#define EXTRA_BUDGETS 4
/* A bounded search is stepped to the cumulative targets budget >> k, the
 * smallest no less than this, then each double up to the budget. */
#define FIRST_TARGET_MIN 64

const char *map_component_name(map_component c)
{
    static const char *const names[MAP_N_COMPONENTS] = {
        [MAP_COMP_MAC] = "mac",
        [MAP_COMP_ONCHIP] = "onchip",
        [MAP_COMP_DRAM] = "dram",
        [MAP_COMP_VECTOR] = "network_vector",
    };
    return (unsigned)c < MAP_N_COMPONENTS ? names[c] : "?";
}

int map_energy_parts(const arch_spec *a, const double *by_component, const double *by_level,
                     const char **names, double *pJ)
{
    int n = 0;
    names[n] = map_component_name(MAP_COMP_MAC);
    pJ[n++] = by_component[MAP_COMP_MAC];
    for (int l = 0; l < a->n_levels; l++)
        if (a->level[l].cls != ARCH_CLASS_DRAM) {
            names[n] = a->level[l].name;
            pJ[n++] = by_level[l];
        }
    names[n] = map_component_name(MAP_COMP_DRAM);
    pJ[n++] = by_component[MAP_COMP_DRAM];
    names[n] = map_component_name(MAP_COMP_VECTOR);
    pJ[n++] = by_component[MAP_COMP_VECTOR];
    return n;
}

json_t *map_energy_parts_json(const arch_spec *a, const double *by_component,
                              const double *by_level, bool names_only)
{
    static const double zero[ARCH_MAX_LEVELS + MAP_N_COMPONENTS];
    const char *names[MAP_MAX_ENERGY_PARTS];
    double pJ[MAP_MAX_ENERGY_PARTS];
    int n = names_only ? map_energy_parts(a, zero, zero, names, pJ)
                       : map_energy_parts(a, by_component, by_level, names, pJ);
    json_t *array = json_array();
    for (int k = 0; array && k < n; k++)
        if (!as_json_push(array, names_only ? as_json_string(names[k]) : as_json_number(pJ[k]))) {
            json_decref(array);
            return NULL;
        }
    return array;
}

/* Charge pJ of on-chip energy to level `level` of r (a resident level's
 * weight reads, a storage level's accesses). */
static void add_onchip(map_layer_result *r, int level, double pJ)
{
    r->energy_by_component_pJ[MAP_COMP_ONCHIP] += pJ;
    if (level >= 0 && level < ARCH_MAX_LEVELS)
        r->onchip_level_pJ[level] += pJ;
}

void map_network_options_default(map_network_options *o)
{
    memset(o, 0, sizeof *o);
    map_search_options_default(&o->search);
}

/* ------------------------------------------------------ problem classes */

void map_problem_key_of(const wl_problem *p, map_problem_key *k)
{
    memset(k, 0, sizeof *k);
    k->kind = p->kind;
    for (int d = 0; d < WL_NDIMS; d++)
        k->bound[d] = p->bound[d];
    for (int i = 0; i < 2; i++) {
        k->stride[i] = p->stride[i];
        k->dilation[i] = p->dilation[i];
    }
    for (int s = 0; s < WL_NDATASPACES; s++) {
        const wl_dataspace *ds = &p->ds[s];
        k->ds[s].n_ranks = ds->n_ranks;
        k->ds[s].read_write = ds->read_write;
        k->ds[s].bits = ds->bits;
        k->ds[s].number = ds->number;
        k->ds[s].density = ds->density;
        for (int r = 0; r < ds->n_ranks && r < WL_MAX_DS_RANKS; r++)
            for (int t = 0; t < ds->ranks[r].n_terms && t < 2; t++) {
                k->ds[s].term[r][t][0] = ds->ranks[r].terms[t].dim;
                k->ds[s].term[r][t][1] = ds->ranks[r].terms[t].coef;
            }
    }
}

/* One distinct problem and what its search found. */
typedef struct problem_class {
    map_problem_key key;
    wl_problem problem;      /* as lowered from the first layer of the class */
    int32_t first_op;        /* that layer's op, for messages */
    map_problem_outcome out; /* filled by map_problem_search_run */
} problem_class;

/* The classes of a network: an array, and core's hash table of indices
 * into it. */
typedef struct class_table {
    problem_class *cls;
    int32_t n;
    as_table index; /* int32_t class indices */
} class_table;

static bool class_table_init(class_table *t, int32_t max_classes)
{
    t->n = 0;
    as_table_init(&t->index, sizeof(int32_t));
    t->cls = calloc((size_t)(max_classes > 0 ? max_classes : 1), sizeof *t->cls);
    return t->cls != NULL;
}

static void class_table_free(class_table *t)
{
    free(t->cls);
    as_table_free(&t->index);
}

/* Whether class *item (of the classes in context) has problem key key. */
static bool class_has_key(const void *item, const void *key, const void *context)
{
    const problem_class *cls = context;
    return memcmp(&cls[*(const int32_t *)item].key, key, sizeof(map_problem_key)) == 0;
}

/* The class of problem p (lowered from op), added when new; -1 when out
 * of memory.  The array was sized for every compute layer. */
static int32_t class_of(class_table *t, const wl_problem *p, int32_t op)
{
    map_problem_key k;
    map_problem_key_of(p, &k);
    bool added;
    int32_t *index = as_table_insert(&t->index, as_hash_bytes(&k, sizeof k, AS_HASH_SEED), &k,
                                     class_has_key, t->cls, &added);
    if (!index)
        return -1;
    if (added) {
        problem_class *c = &t->cls[t->n];
        c->key = k;
        c->problem = *p;
        c->first_op = op;
        *index = t->n++;
    }
    return *index;
}

/* -------------------------------------------------------------- mapping */

/* What every search of one network shares. */
typedef struct network_job {
    const wl_graph *g;
    const arch_spec *a;
    const map_network_options *o;
    int64_t budget;           /* evaluations per problem; 0 = until the search ends */
    map_layer_key design_key; /* its design half, for o->cache */
} network_job;

static bool stop_requested(const network_job *job)
{
    return job->o->stop_flag && *job->o->stop_flag;
}

/* The caller's budget; when it is 0, the search's own termination, except
 * for a random search that has none (it would run forever). */
int64_t map_effective_budget(const map_search_options *s, int64_t budget_per_problem)
{
    if (budget_per_problem > 0)
        return budget_per_problem;
    bool unbounded = s->algorithm == MAP_ALGO_RANDOM_PRUNED && s->search_size <= 0 &&
                     s->victory_condition <= 0 && s->timeout_seconds <= 0;
    return unbounded ? DEFAULT_RANDOM_BUDGET : 0;
}

/*
 * The next cumulative target of a search bounded to `budget` evaluations
 * that has done `done`: the smallest of budget, budget / 2, budget / 4,
 * ... (down to FIRST_TARGET_MIN) above done.  Stepping through these
 * targets makes a search to budget B, continued later to 2B, the search
 * to 2B: the targets of 2B are those of B and then 2B, so the anytime
 * mapper's result at a budget does not depend on how it got there --
 * successive halving raises budgets by doubling them.
 */
static int64_t next_target(int64_t budget, int64_t done)
{
    int64_t target = budget;
    while (target / 2 >= FIRST_TARGET_MIN && target / 2 > done)
        target /= 2;
    return target;
}

/*
 * Step s (through the targets, when doubling) to `budget` evaluations in
 * all (extended by
 * up to EXTRA_BUDGETS budgets while no valid mapping has been found; no
 * bound when budget is 0), in steps of at most STEP_EVALUATIONS, until
 * the search ends or the stop flag is set; then keep the best mapping
 * found and where the search stopped.
 */
static void step_search(map_search *s, int64_t budget, bool doubling, volatile int *stop_flag,
                        map_problem_outcome *c)
{
    int64_t limit = budget;
    bool running = true;
    while (running && !(stop_flag && *stop_flag)) {
        int64_t done = map_search_evaluated(s), step = STEP_EVALUATIONS;
        if (budget > 0 && done >= limit) {
            bool have_one = map_search_best(s, &c->mapping, &c->eval, &c->mapped);
            if (have_one || limit >= budget * (1 + EXTRA_BUDGETS))
                break;
            limit += budget;
        }
        int64_t target = done >= budget ? limit : doubling ? next_target(budget, done) : budget;
        if (budget > 0 && target - done < step)
            step = target - done;
        running = map_search_step(s, step);
    }
    c->searched = !(stop_flag && *stop_flag);
    c->found = map_search_best(s, &c->mapping, &c->eval, &c->mapped);
    c->evaluated = map_search_evaluated(s);
    map_search_save(s, &c->resume);
}

/* Search p from scratch (from NULL) or on from `from`; see mapping.h. */
static void search_problem(const arch_spec *a, const wl_problem *p, const map_search_options *o,
                           int threads, int64_t budget, const map_problem_outcome *from,
                           volatile int *stop_flag, map_problem_outcome *c)
{
    map_search_options so = *o;
    so.threads = threads;
    so.exact_steps = budget > 0;
    map_search *s = NULL;
    memset(c, 0, sizeof *c);
    c->code = map_search_init(&s, a, p, &so, &c->status);
    c->budget = budget;
    /* Random points do not depend on the steps: Timeloop's search keeps
     * its plain stepping (and its termination rules their granularity). */
    bool doubling = o->algorithm == MAP_ALGO_HEURISTIC;
    /* Only a search stopped at one of budget's targets goes on, and only
     * when it found a mapping (one that found none may have run past its
     * budget, EXTRA_BUDGETS); any other starts afresh, to the same end. */
    if (c->code == AS_OK && doubling && from && from->found && from->budget > 0 &&
        from->budget <= budget && next_target(budget, from->budget - 1) == from->budget)
        c->code = map_search_restore(s, &from->resume, &from->mapping, &c->status);
    if (c->code == AS_OK)
        step_search(s, budget, doubling, stop_flag, c);
    map_search_free(s);
}

void map_problem_search_run(const arch_spec *a, const wl_problem *p, const map_search_options *o,
                            int threads, int64_t budget, volatile int *stop_flag,
                            map_problem_outcome *c)
{
    search_problem(a, p, o, threads, budget, NULL, stop_flag, c);
}

void map_problem_search_continue(const arch_spec *a, const wl_problem *p,
                                 const map_search_options *o, int threads, int64_t budget,
                                 const map_problem_outcome *from, map_problem_outcome *out)
{
    search_problem(a, p, o, threads, budget, from, NULL, out);
}

/* The outcome of class c: from the caller's cache when it holds one,
 * else searched (and given to the cache when the search was complete). */
static void map_class(const network_job *job, problem_class *c, int threads)
{
    const map_network_options *o = job->o;
    map_layer_key key = job->design_key;
    key.problem = c->key;
    if (o->problem_search) {
        o->problem_search(o->problem_search_user, job->a, &c->problem, threads, job->budget,
                          o->stop_flag, &c->out);
        return;
    }
    const map_problem_outcome *held = o->cache ? map_cache_find(o->cache, &key) : NULL;
    if (held) {
        c->out = *held;
        return;
    }
    map_problem_search_run(job->a, &c->problem, &o->search, threads, job->budget, o->stop_flag,
                           &c->out);
    if (o->cache && c->out.code == AS_OK && c->out.searched)
        map_cache_add(o->cache, &key, &c->out); /* a failure only costs a later search */
}

/* Search every class, in parallel when there are several (see the top of
 * the file); report progress after each, never two calls at once. */
static void map_classes(const network_job *job, class_table *t)
{
    const map_network_options *o = job->o;
    int threads = o->search.threads > 0 ? o->search.threads : omp_get_max_threads();
    int outer = threads < t->n ? threads : t->n;
    if (outer < 1)
        outer = 1;
    int inner = threads / outer;
    int32_t done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer)
    for (int32_t i = 0; i < t->n; i++) {
        if (stop_requested(job))
            continue;
        map_class(job, &t->cls[i], inner);
#pragma omp critical(map_network_progress)
        {
            done++;
            if (o->progress)
                o->progress(o->progress_user, done, t->n);
        }
    }
}

/* The first failure among the classes, in class order: a search that
 * could not start, or (when not interrupted) a problem without any valid
 * mapping. */
static as_code check_classes(const network_job *job, const class_table *t, bool interrupted,
                             as_status *st)
{
    for (int32_t i = 0; i < t->n; i++) {
        const map_problem_outcome *c = &t->cls[i].out;
        const wl_op *op = &job->g->ops[t->cls[i].first_op];
        if (c->code != AS_OK)
            return as_fail(st, c->code, "%s", c->status.message);
        if (!c->found && !interrupted)
            return as_fail(st, AS_EINVAL, OP_FMT ": no valid mapping on %s after %lld evaluations",
                           OP_ARGS(job->g, op), job->a->name, (long long)c->evaluated);
    }
    return AS_OK;
}

/* ------------------------------------------------------------- costing */

/* MACs per cycle with every unit busy (as map_evaluate counts them). */
double map_peak_macs_per_cycle(const arch_spec *a)
{
    const arch_compute *c = &a->compute;
    int64_t lanes = c->kind == ARCH_COMPUTE_MAC        ? 1
                    : c->kind == ARCH_COMPUTE_SYSTOLIC ? (int64_t)c->rows * c->cols
                                                       : c->rows;
    return (double)(c->instances > 0 ? c->instances : 1) * (double)lanes;
}

/* Element operations per cycle of the vector unit, assumed: one per MAC
 * unit; `rows` lanes per vector unit; one array edge (`cols` lanes) per
 * systolic array, which is how wide Gemmini's and the TPU's activation
 * and normalisation units are fed. */
double map_vector_lanes(const arch_spec *a)
{
    const arch_compute *c = &a->compute;
    int lanes = c->kind == ARCH_COMPUTE_MAC        ? 1
                : c->kind == ARCH_COMPUTE_SYSTOLIC ? c->cols
                                                   : c->rows;
    return (double)(c->instances > 0 ? c->instances : 1) * (double)(lanes > 0 ? lanes : 1);
}

/* Cycles to move `bytes` across the DRAM interface at its bandwidth;
 * 0 when the architecture states none. */
int64_t map_dram_cycles(const arch_spec *a, int64_t bytes)
{
    double bytes_per_cycle = a->dram.bandwidth_GBps * 1e9 * a->cycle_seconds;
    return bytes_per_cycle > 0 ? (int64_t)ceil((double)bytes / bytes_per_cycle) : 0;
}

static int64_t max_i64(int64_t x, int64_t y)
{
    return x > y ? x : y;
}

/* Bytes of op's inputs that problem p does not model (a conv's bias,
 * Gemm's C), each tensor once: read once from DRAM -- or, for a weight
 * resident under res (NULL: streamed), its elements from the resident
 * level, added to *resident_words. */
static int64_t unmodelled_input_bytes(const wl_graph *g, const wl_op *op, const wl_problem *p,
                                      const map_residency *res, int64_t *resident_words)
{
    int64_t bytes = 0;
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        bool seen = t < 0;
        for (int ds = 0; ds < WL_NDATASPACES && !seen; ds++)
            seen = p->ds[ds].tensor == t;
        for (int j = 0; j < i && !seen; j++)
            seen = op->inputs[j] == t;
        if (seen || wl_tensor_bytes(&g->tensors[t]) <= 0)
            continue;
        if (map_tensor_is_resident(g, res, t))
            *resident_words += wl_tensor_elements(&g->tensors[t]);
        else
            bytes += wl_tensor_bytes(&g->tensors[t]);
    }
    return bytes;
}

/* Unfused traffic of an op: inputs and weights read, outputs written. */
static int64_t unfused_dram_bytes(const wl_op_stats *s)
{
    return s->input_bytes + s->weight_bytes + s->output_bytes;
}

/* Energy of moving `bytes` across the DRAM interface. */
double map_dram_pJ(const arch_spec *a, int64_t bytes)
{
    return (double)bytes * 8 * a->dram.energy_pJ_per_bit;
}

/* DRAM traffic and energy of a compute layer whose backing store is DRAM:
 * the words the mapping moves there per data space, at the tensor's
 * precision (see "Precision" at the top of the file).  The words of a
 * data space marked in resident_ds (NULL: none) are read from the
 * resident level instead (resident.c): added to *resident_words, not to
 * the DRAM bytes and energy. */
static void mapped_dram_traffic(const arch_spec *a, const map_eval *e, const wl_problem *p,
                                const bool *resident_ds, int64_t *bytes, double *energy_pJ,
                                int64_t *resident_words)
{
    int b = a->n_levels - 1;
    const map_level_stats *ls = &e->level[b];
    int word_bits = a->level[b].word_bits > 0 ? a->level[b].word_bits : 8;
    *bytes = 0;
    *energy_pJ = ls->leak_pJ;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const map_ds_stats *d = &ls->ds[ds];
        int bits = p->ds[ds].bits > 0 ? p->ds[ds].bits : word_bits;
        int64_t instances = d->utilized_instances > 0 ? d->utilized_instances : 1;
        int64_t words = (d->reads + d->fills + d->updates) * instances;
        if (resident_ds && resident_ds[ds]) {
            *resident_words += words;
            continue;
        }
        if (d->metadata_words == 0) {
            *bytes += (words * bits + 7) / 8;
            *energy_pJ += d->energy_pJ * bits / word_bits;
            continue;
        }
        /* Compressed in DRAM (sparse.c): the non-zeros packed at the
         * tensor's precision, the metadata at the level's word width. */
        int64_t metadata = d->metadata_words * instances;
        int64_t bits_moved = (words - metadata) * bits + metadata * word_bits;
        *bytes += (bits_moved + 7) / 8;
        *energy_pJ += d->energy_pJ * (double)bits_moved / ((double)words * word_bits);
    }
}

/* Bytes compute layer `op` moves across the DRAM interface besides its
 * mapping's traffic (see map_outside_dram_bytes), and into
 * *resident_words the weight words it reads from the resident level
 * instead when res (NULL: streamed) keeps its weights there. */
static int64_t outside_traffic(const wl_graph *g, const arch_spec *a, const map_residency *res,
                               int32_t op, const wl_problem *own, int64_t *resident_words)
{
    if (a->level[a->n_levels - 1].cls == ARCH_CLASS_DRAM)
        return unmodelled_input_bytes(g, &g->ops[op], own, res, resident_words);
    wl_op_stats s;
    wl_op_stats_get(g, op, &s);
    if (!res || !res->resident)
        return unfused_dram_bytes(&s);
    *resident_words += map_op_weight_words(g, op);
    return unfused_dram_bytes(&s) - s.weight_bytes;
}

int64_t map_outside_dram_bytes(const wl_graph *g, const arch_spec *a, int32_t op,
                               const wl_problem *own)
{
    int64_t none = 0;
    return outside_traffic(g, a, NULL, op, own, &none);
}

/* Where a compute layer's weights come from: the residency, and which of
 * its data spaces read a resident tensor (all false when streamed). */
typedef struct layer_weights {
    const map_residency *res;
    bool resident_ds[WL_NDATASPACES];
    int64_t outside_words; /* resident words read outside the mapping (a bias) */
} layer_weights;

/* map_cost_mapped_layer with the layer's weights where w says (NULL:
 * streamed): resident words are charged as reads of the resident level
 * (resident.c), on-chip energy, their time a transfer overlapping compute. */
static void cost_mapped_layer(const arch_spec *a, const map_eval *e, const wl_problem *own,
                              int64_t outside_dram_bytes, const layer_weights *w,
                              map_layer_result *r)
{
    bool dram_backed = a->level[a->n_levels - 1].cls == ARCH_CLASS_DRAM;
    int onchip_levels = dram_backed ? a->n_levels - 1 : a->n_levels;
    double *energy = r->energy_by_component_pJ;
    int64_t cycles = e->compute_cycles;
    energy[MAP_COMP_MAC] = e->mac_energy_pJ;
    for (int l = 0; l < a->n_levels; l++) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            energy[MAP_COMP_VECTOR] += e->level[l].net[ds].energy_pJ;
        if (l < onchip_levels) {
            add_onchip(r, l, e->level[l].energy_pJ);
            cycles = max_i64(cycles, e->level[l].cycles);
        }
    }
    int64_t resident_words = w ? w->outside_words : 0;
    if (dram_backed)
        mapped_dram_traffic(a, e, own, w ? w->resident_ds : NULL, &r->dram_bytes,
                            &energy[MAP_COMP_DRAM], &resident_words);
    r->dram_bytes += outside_dram_bytes;
    energy[MAP_COMP_DRAM] += map_dram_pJ(a, outside_dram_bytes);
    if (w && w->res && w->res->resident) {
        double read_pJ;
        int64_t read_cycles;
        map_resident_read(a, w->res, resident_words, &read_pJ, &read_cycles);
        add_onchip(r, w->res->level, read_pJ);
        cycles = max_i64(cycles, read_cycles);
    }
    r->cycles = max_i64(cycles, map_dram_cycles(a, r->dram_bytes));
}

void map_cost_mapped_layer(const arch_spec *a, const map_eval *e, const wl_problem *own,
                           int64_t outside_dram_bytes, map_layer_result *r)
{
    cost_mapped_layer(a, e, own, outside_dram_bytes, NULL, r);
}

/* Energies, cycles and traffic of compute layer r from its class's search
 * (r->problem holds the layer's own problem on entry, the mapped one with
 * the layer's op and tensors on return). */
void map_cost_compute_layer(const wl_graph *g, const arch_spec *a, const map_residency *res,
                            const map_problem_outcome *c, map_layer_result *r)
{
    wl_problem own = r->problem;
    r->macs = wl_problem_macs(&own);
    if (!c->found)
        return; /* unmapped: costs stay zero */
    r->mapped = true;
    r->mapping = c->mapping;
    r->problem = c->mapped;
    r->problem.op = own.op;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        r->problem.ds[ds].tensor = own.ds[ds].tensor;
    r->padded_macs = c->eval.macs;
    layer_weights w = {.res = res};
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        w.resident_ds[ds] = map_tensor_is_resident(g, res, own.ds[ds].tensor);
    int64_t outside = outside_traffic(g, a, res, r->op, &own, &w.outside_words);
    cost_mapped_layer(a, &c->eval, &own, outside, &w, r);
}

/* The vector-unit and DRAM model of a non-compute layer (top of file);
 * resident weights (res, resident.c) are read from their level, not DRAM. */
void map_cost_vector_layer(const wl_graph *g, const arch_spec *a, const map_residency *res,
                           map_layer_result *r)
{
    wl_op_stats s;
    wl_op_stats_get(g, r->op, &s);
    int64_t work = wl_op_vector_ops(g, &g->ops[r->op], &s);
    bool resident = res && res->resident;
    r->mapped = true;
    r->dram_bytes = unfused_dram_bytes(&s) - (resident ? s.weight_bytes : 0);
    r->energy_by_component_pJ[MAP_COMP_VECTOR] = (double)work * a->compute.mac_pJ;
    r->energy_by_component_pJ[MAP_COMP_DRAM] = map_dram_pJ(a, r->dram_bytes);
    r->cycles = max_i64((int64_t)ceil((double)work / map_vector_lanes(a)),
                        map_dram_cycles(a, r->dram_bytes));
    if (resident) {
        double read_pJ;
        int64_t read_cycles;
        map_resident_read(a, res, map_op_weight_words(g, r->op), &read_pJ, &read_cycles);
        add_onchip(r, res->level, read_pJ);
        r->cycles = max_i64(r->cycles, read_cycles);
    }
}

/* ------------------------------------------------------------ epilogues */

/* Whether tensor t is produced inside fused op `root` (through views: a
 * reshape of an inside tensor is inside). */
static bool made_inside(const wl_graph *g, int32_t root, int32_t t)
{
    int32_t p = g->tensors[wl_view_source(g, t)].producer;
    return p >= 0 && wl_fused_root(g, p) == root;
}

/* Whether input i of epilogue op m of root reads a tensor that an
 * earlier epilogue op (or m, at an earlier input) already read. */
static bool read_before(const wl_graph *g, int32_t root, int32_t m, int i)
{
    int32_t t = g->ops[m].inputs[i];
    for (int32_t k = g->ops[root].epilogue_next; k >= 0; k = g->ops[k].epilogue_next)
        for (int j = 0; j < g->ops[k].n_inputs; j++) {
            if (k == m && j == i)
                return false;
            if (g->ops[k].inputs[j] == t)
                return true;
        }
    return false;
}

void map_epilogue_work(const wl_graph *g, int32_t root, map_epilogue *out)
{
    memset(out, 0, sizeof *out);
    for (int32_t m = g->ops[root].epilogue_next; m >= 0; m = g->ops[m].epilogue_next) {
        const wl_op *op = &g->ops[m];
        wl_op_stats s;
        wl_op_stats_get(g, m, &s);
        out->vector_ops += wl_op_vector_ops(g, op, &s);
        out->n_ops++;
        for (int i = 0; i < op->n_inputs; i++) {
            int32_t t = op->inputs[i];
            if (t < 0 || made_inside(g, root, t) || read_before(g, root, m, i))
                continue;
            const wl_tensor *x = &g->tensors[t];
            int64_t bytes = wl_tensor_bytes(x) > 0 ? wl_tensor_bytes(x) : 0;
            if (x->kind == WL_TENSOR_WEIGHT) {
                out->weight_bytes += bytes;
                out->weight_words += wl_tensor_elements(x);
            } else if (!wl_tensor_is_known(x))
                out->extra_input_bytes += bytes;
        }
    }
    const wl_op *r = &g->ops[root];
    int32_t final = wl_fused_output(g, root);
    if (out->n_ops > 0 && r->n_outputs > 0 && final >= 0)
        out->output_bytes_change =
            wl_tensor_bytes(&g->tensors[final]) - wl_tensor_bytes(&g->tensors[r->outputs[0]]);
}

/*
 * Epilogues (wl_fuse_epilogues): the elementwise ops attached to a layer
 * run on the vector unit as its output streams out of the MAC array (or
 * the vector unit, for a non-compute root).  Their intermediates never
 * cross DRAM; the layer writes the fused op's final output instead of its
 * own (output_bytes_change: zero when the shapes and precisions agree,
 * more for a broadcasting squeeze-excite scale) and reads the epilogue's
 * extra inputs (a residual, a scale) once, and its weights (a bias) once
 * from DRAM, or from the resident level when res says the weights are
 * resident.  Work = the epilogue ops' vector operations, at one MAC's
 * energy each.  Cycles: assumed
 * overlapped -- the vector unit consumes the output as it is produced, so
 * the layer takes max(its own cycles, work / vector lanes, DRAM time of
 * all its bytes): it keeps pace where work / lanes <= the producer's
 * cycles and sets the pace where not.
 */
void map_cost_epilogue(const wl_graph *g, const arch_spec *a, const map_residency *res,
                       map_layer_result *r)
{
    map_epilogue ep;
    map_epilogue_work(g, r->op, &ep);
    r->n_epilogue_ops = ep.n_ops;
    if (ep.n_ops == 0)
        return;
    bool resident = res && res->resident;
    int64_t bytes =
        ep.extra_input_bytes + (resident ? 0 : ep.weight_bytes) + ep.output_bytes_change;
    r->dram_bytes += bytes;
    r->energy_by_component_pJ[MAP_COMP_DRAM] += map_dram_pJ(a, bytes);
    r->energy_by_component_pJ[MAP_COMP_VECTOR] += (double)ep.vector_ops * a->compute.mac_pJ;
    int64_t vector_cycles = (int64_t)ceil((double)ep.vector_ops / map_vector_lanes(a));
    r->cycles = max_i64(r->cycles, max_i64(vector_cycles, map_dram_cycles(a, r->dram_bytes)));
    if (resident) {
        double read_pJ;
        int64_t read_cycles;
        map_resident_read(a, res, ep.weight_words, &read_pJ, &read_cycles);
        add_onchip(r, res->level, read_pJ);
        r->cycles = max_i64(r->cycles, read_cycles);
    }
}

void map_layer_fixed_costs(const wl_graph *g, const arch_spec *a, const map_residency *res,
                           int32_t op, const wl_problem *own, map_layer_fixed *out)
{
    memset(out, 0, sizeof *out);
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        out->resident_ds[ds] = map_tensor_is_resident(g, res, own->ds[ds].tensor);
    out->outside_dram_bytes = outside_traffic(g, a, res, op, own, &out->outside_resident_words);
    map_layer_result r;
    memset(&r, 0, sizeof r);
    r.op = op;
    map_cost_epilogue(g, a, res, &r);
    out->epilogue_dram_bytes = r.dram_bytes;
    out->epilogue_cycles = r.cycles;
    for (int c = 0; c < MAP_N_COMPONENTS; c++)
        out->epilogue_energy_pJ += r.energy_by_component_pJ[c];
}

/* ------------------------------------------------------------- layers */

/* An op that does work at run time and does not run in another's
 * epilogue (see "Layers" at the top). */
bool map_op_is_layer(const wl_op *op)
{
    return wl_op_does_work(op) && op->epilogue_of < 0;
}

bool map_op_is_compute(const wl_op *op)
{
    return wl_op_kind_category(op->kind) == WL_CAT_COMPUTE;
}

/* The layers of g in topological order (only `only_layer` when set) into
 * r->layers, each compute layer with its own problem and class. */
static as_code collect_layers(const wl_graph *g, const char *only_layer, class_table *t,
                              map_network_result *r, as_status *st)
{
    int32_t n = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        const wl_op *op = &g->ops[g->order[k]];
        n += map_op_is_layer(op) && (!only_layer || strcmp(op->name, only_layer) == 0);
    }
    if (only_layer && n == 0)
        return as_fail(st, AS_EINVAL,
                       "%s: no layer named '%s' (views and folded ops are not layers; an op in "
                       "a producer's epilogue runs in the producer's layer)",
                       g->source, only_layer);
    r->layers = calloc((size_t)(n > 0 ? n : 1), sizeof *r->layers);
    if (!r->layers || !class_table_init(t, n))
        return as_fail(st, AS_ENOMEM, "%s: out of memory for %d layers", g->source, n);
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t o = g->order[k];
        const wl_op *op = &g->ops[o];
        if (!map_op_is_layer(op) || (only_layer && strcmp(op->name, only_layer) != 0))
            continue;
        map_layer_result *layer = &r->layers[r->n_layers++];
        layer->op = o;
        layer->problem_class = -1;
        if (!map_op_is_compute(op))
            continue;
        as_code code = wl_op_problem(g, o, &layer->problem, st);
        if (code != AS_OK)
            return code;
        layer->problem_class = class_of(t, &layer->problem, o);
        if (layer->problem_class < 0)
            return as_fail(st, AS_ENOMEM, "%s: out of memory for the problem classes", g->source);
    }
    r->n_distinct_problems = t->n;
    return AS_OK;
}

/* Count layer l in r's precision conversion when an on-chip level keeps
 * one of its data spaces in words narrower than the tensor's bits. */
static void note_narrowing(const arch_spec *a, const map_layer_result *l, map_network_result *r)
{
    bool dram_backed = a->level[a->n_levels - 1].cls == ARCH_CLASS_DRAM;
    int onchip_levels = dram_backed ? a->n_levels - 1 : a->n_levels;
    bool narrowed = false;
    for (int ds = 0; ds < WL_NDATASPACES && l->problem_class >= 0 && l->mapped; ds++) {
        int bits = l->problem.ds[ds].bits;
        for (int i = 0; i < onchip_levels; i++) {
            int word_bits = a->level[i].word_bits;
            if (!l->mapping.level[i].keep[ds] || bits <= word_bits)
                continue;
            narrowed = true;
            if (bits > r->narrowed_tensor_bits)
                r->narrowed_tensor_bits = bits;
            if (!r->narrowed_word_bits || word_bits < r->narrowed_word_bits)
                r->narrowed_word_bits = word_bits;
        }
    }
    r->n_narrowed_layers += narrowed;
}

/* Totals over the layers, in layer order. */
static void sum_layers(const arch_spec *a, map_network_result *r)
{
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        note_narrowing(a, l, r);
        r->cycles += l->cycles;
        r->macs += l->macs;
        r->dram_bytes += l->dram_bytes;
        r->n_unmapped += !l->mapped;
        r->n_epilogue_ops += l->n_epilogue_ops;
        for (int c = 0; c < MAP_N_COMPONENTS; c++)
            r->energy_by_component_pJ[c] += l->energy_by_component_pJ[c];
        for (int k = 0; k < ARCH_MAX_LEVELS; k++)
            r->onchip_level_pJ[k] += l->onchip_level_pJ[k];
    }
    for (int c = 0; c < MAP_N_COMPONENTS; c++)
        r->energy_pJ += r->energy_by_component_pJ[c];
    r->latency_s = (double)r->cycles * a->cycle_seconds;
    r->edp_J_cycle = r->energy_pJ * 1e-12 * (double)r->cycles;
    r->op_intensity = r->dram_bytes > 0 ? 2.0 * (double)r->macs / (double)r->dram_bytes : 0;
    r->utilization =
        r->cycles > 0 ? (double)r->macs / (map_peak_macs_per_cycle(a) * (double)r->cycles) : 0;
}

/* Per-layer energy total and utilisation from the components. */
void map_finish_layer(const arch_spec *a, map_layer_result *l)
{
    l->energy_pJ = 0;
    for (int c = 0; c < MAP_N_COMPONENTS; c++)
        l->energy_pJ += l->energy_by_component_pJ[c];
    l->utilization =
        l->cycles > 0 ? (double)l->macs / (map_peak_macs_per_cycle(a) * (double)l->cycles) : 0;
}

as_code map_network_evaluate(const wl_graph *g, const arch_spec *a, const map_network_options *o,
                             map_network_result *out, as_status *st)
{
    map_network_options defaults;
    class_table t = {0};
    memset(out, 0, sizeof *out);
    if (!o) {
        map_network_options_default(&defaults);
        o = &defaults;
    }
    if (!g->order)
        return as_fail(st, AS_EINVAL, "%s: graph not inferred (call wl_graph_infer first)",
                       g->source);
    as_code code = arch_validate(a, st);
    if (code == AS_OK)
        code = map_residency_decide(g, a, o->weights, &out->weights, st);
    if (code != AS_OK)
        return code;
    /* Every layer is mapped and costed on the architecture the mapper sees
     * under the residency (resident.c): the resident level less the
     * weights. */
    arch_spec *seen = malloc(sizeof *seen);
    if (!seen)
        return as_fail(st, AS_ENOMEM, "out of memory for an architecture");
    map_residency_arch(a, &out->weights, seen);
    network_job job = {.g = g,
                       .a = seen,
                       .o = o,
                       .budget = map_effective_budget(&o->search, o->budget_per_problem)};
    map_layer_key_design(seen, &o->search, job.budget, &job.design_key);
    code = collect_layers(g, o->only_layer, &t, out, st);
    if (code == AS_OK) {
        map_classes(&job, &t);
        for (int32_t i = 0; i < t.n; i++)
            out->interrupted |= !t.cls[i].out.searched;
        code = check_classes(&job, &t, out->interrupted, st);
    }
    if (code != AS_OK) {
        class_table_free(&t);
        map_network_free(out);
        free(seen);
        return code;
    }
    for (int32_t i = 0; i < t.n; i++)
        out->mappings_evaluated += t.cls[i].out.evaluated;
    for (int32_t i = 0; i < out->n_layers; i++) {
        map_layer_result *l = &out->layers[i];
        if (l->problem_class >= 0)
            map_cost_compute_layer(g, seen, &out->weights, &t.cls[l->problem_class].out, l);
        else
            map_cost_vector_layer(g, seen, &out->weights, l);
        if (l->mapped)
            map_cost_epilogue(g, seen, &out->weights, l);
        map_finish_layer(seen, l);
    }
    sum_layers(seen, out);
    class_table_free(&t);
    free(seen);
    return AS_OK;
}

void map_network_free(map_network_result *r)
{
    if (!r)
        return;
    free(r->layers);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------- per op type */

static int by_cycles_desc(const void *x, const void *y)
{
    const map_op_type_total *a = x, *b = y;
    if (a->cycles != b->cycles)
        return a->cycles > b->cycles ? -1 : 1;
    return (int)a->kind - (int)b->kind;
}

int map_network_by_op_type(const wl_graph *g, const map_network_result *r,
                           map_op_type_total out[WL_OP_COUNT])
{
    memset(out, 0, WL_OP_COUNT * sizeof *out);
    for (int k = 0; k < WL_OP_COUNT; k++)
        out[k].kind = (wl_op_kind)k;
    for (int32_t i = 0; i < r->n_layers; i++) {
        const map_layer_result *l = &r->layers[i];
        map_op_type_total *t = &out[g->ops[l->op].kind];
        t->n_layers++;
        t->macs += l->macs;
        t->cycles += l->cycles;
        t->energy_pJ += l->energy_pJ;
        t->dram_bytes += l->dram_bytes;
    }
    int n = 0;
    for (int k = 0; k < WL_OP_COUNT; k++)
        if (out[k].n_layers > 0)
            out[n++] = out[k];
    qsort(out, (size_t)n, sizeof *out, by_cycles_desc);
    return n;
}
