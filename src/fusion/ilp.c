/*
 * ilp.c -- FAST's fusion ILP (Zhang et al., "A Full-Stack Search Technique
 * for Domain Optimized Deep Learning Accelerators", section 4.5), solved
 * with CBC.
 *
 * The model.  The execution order is fixed: the working ops in the graph's
 * topological order, each one layer.  Binary variables choose which
 * tensors are pinned in global memory (the on-chip level the cost options
 * name, by default the outermost one):
 *   - a weight tensor, which then stays there for the whole run (FAST keeps
 *     pinned weights resident: every layer's capacity row counts them) and
 *     is never read from DRAM;
 *   - an activation, only when a consumer runs right after its producer
 *     (FAST's rule): it then lives in global memory during those two
 *     layers, the consumer reads it on chip, and the producer skips its
 *     DRAM write when that consumer is the only reader and the tensor is
 *     not a graph output (FAST saves the write unconditionally; other
 *     readers would then find nothing in DRAM, so we keep the write).
 * Layer i takes T_i = max(compute_i, DRAM time of what is not pinned):
 * FAST's T_i >= T_min, T_i >= T_max - sum of savings, with a continuous
 * T_i per layer, minimising sum T_i.  Capacity at every layer: FAST's B_i
 * (the global-buffer tiles the layer streams through, from its mapping)
 * plus every pinned item live there must fit.  Pinned tensors count their
 * whole size (FAST counts size minus tile; ours is conservative).
 *
 * Costs.  compute_i is the layer's time with DRAM free: map_network_evaluate
 * on a copy of the architecture with no DRAM bandwidth stated, which
 * network.c costs as zero DRAM cycles while mapping exactly as on the real
 * one.  DRAM time of a tensor = its bytes at its storage precision over the
 * real DRAM bandwidth; each tensor crosses once (refetches are assumed to
 * hit the global buffer).  On chip a tensor takes one word per element
 * (network.c's precision convention).  Views (Reshape, Flatten, ...) pass
 * tensors through: a consumer behind a view reads its producer's tensor.
 * A layer is a fused op (wl_fuse_epilogues): it reads its epilogue's
 * extra inputs and writes its last op's output only.
 *
 * The plan: consecutive layers joined by a pinned activation form one
 * group (whole-tensor tiles); ranges of the topological order are convex,
 * and each is connected through the pinned tensors.
 */
#include "fusion_private.h"

#include <coin/Cbc_C_Interface.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- instances */

as_code fu_ilp_instance_init(fu_ilp_instance *inst, int32_t n_layers, int32_t max_items,
                             int32_t max_savings, as_status *st)
{
    memset(inst, 0, sizeof *inst);
    as_arena_init(&inst->arena);
    if (n_layers < 0 || max_items < 0 || max_savings < 0)
        return as_fail(st, AS_EINVAL, "fusion ilp: negative instance size");
    size_t n = (size_t)n_layers + 1; /* never a zero-byte request */
    inst->op = as_arena_alloc(&inst->arena, n * sizeof *inst->op);
    inst->compute_cycles = as_arena_alloc(&inst->arena, n * sizeof *inst->compute_cycles);
    inst->dram_cycles = as_arena_alloc(&inst->arena, n * sizeof *inst->dram_cycles);
    inst->reserved_words = as_arena_alloc(&inst->arena, n * sizeof *inst->reserved_words);
    inst->items = as_arena_alloc(&inst->arena, ((size_t)max_items + 1) * sizeof *inst->items);
    inst->savings = as_arena_alloc(&inst->arena, ((size_t)max_savings + 1) * sizeof *inst->savings);
    if (!inst->op || !inst->compute_cycles || !inst->dram_cycles || !inst->reserved_words ||
        !inst->items || !inst->savings) {
        fu_ilp_instance_free(inst);
        return as_fail(st, AS_ENOMEM, "fusion ilp: out of memory for %d layers", (int)n_layers);
    }
    for (int32_t i = 0; i < n_layers; i++)
        inst->op[i] = -1;
    inst->n_layers = n_layers;
    inst->max_items = max_items;
    inst->max_savings = max_savings;
    return AS_OK;
}

void fu_ilp_instance_free(fu_ilp_instance *inst)
{
    as_arena_free(&inst->arena);
    memset(inst, 0, sizeof *inst);
}

/* Time of layer i under a pinning: FAST's T_i. */
static double layer_cycles(const fu_ilp_instance *inst, const bool *pinned, int32_t i)
{
    double dram = inst->dram_cycles[i];
    for (int32_t s = 0; s < inst->n_savings; s++)
        if (inst->savings[s].layer == i && pinned[inst->savings[s].item])
            dram -= inst->savings[s].dram_cycles;
    return fmax(inst->compute_cycles[i], dram);
}

double fu_ilp_objective(const fu_ilp_instance *inst, const bool *pinned)
{
    double total = 0;
    for (int32_t i = 0; i < inst->n_layers; i++)
        total += layer_cycles(inst, pinned, i);
    return total;
}

/* Room for pinned items at layer i: what the layer's own streaming leaves
 * (never negative, so that pinning nothing always fits). */
static double room_words(const fu_ilp_instance *inst, int32_t i)
{
    return fmax(0.0, (double)inst->capacity_words - (double)inst->reserved_words[i]);
}

/* The first layer where the pinned items do not fit, or -1. */
static int32_t first_overflow(const fu_ilp_instance *inst, const bool *pinned)
{
    for (int32_t i = 0; i < inst->n_layers; i++) {
        double used = 0;
        for (int32_t k = 0; k < inst->n_items; k++)
            if (pinned[k] && inst->items[k].first <= i && i <= inst->items[k].last)
                used += (double)inst->items[k].words;
        if (used > room_words(inst, i))
            return i;
    }
    return -1;
}

/* Reject instances whose indices point outside them: a hand-built or
 * corrupted instance fails cleanly instead of indexing out of bounds. */
static as_code check_instance(const fu_ilp_instance *inst, as_status *st)
{
    for (int32_t k = 0; k < inst->n_items; k++) {
        const fu_ilp_item *it = &inst->items[k];
        if (it->first < 0 || it->last < it->first || it->last >= inst->n_layers || it->words < 0)
            return as_fail(st, AS_EINVAL, "fusion ilp: item %d spans layers %d..%d of %d", (int)k,
                           (int)it->first, (int)it->last, (int)inst->n_layers);
    }
    for (int32_t s = 0; s < inst->n_savings; s++) {
        const fu_ilp_saving *sv = &inst->savings[s];
        if (sv->item < 0 || sv->item >= inst->n_items || sv->layer < 0 ||
            sv->layer >= inst->n_layers || !(sv->dram_cycles >= 0))
            return as_fail(st, AS_EINVAL, "fusion ilp: saving %d (item %d, layer %d) is invalid",
                           (int)s, (int)sv->item, (int)sv->layer);
    }
    return AS_OK;
}

/* ------------------------------------------------------------ solving */

/*
 * Columns: x_k (binary, item k pinned) for k < n_items, then T_i
 * (continuous, lower bound compute_i, objective coefficient 1).  Rows per
 * layer i: T_i + sum_k saving_ki x_k >= dram_i, and sum of the words of
 * the items live at i <= room_i.  coef is scratch of n_items doubles (zero
 * on entry and exit) that merges repeated savings of one item; cols and
 * vals hold one row.
 */
static void build_model(Cbc_Model *m, const fu_ilp_instance *inst, double *coef, int *cols,
                        double *vals)
{
    int32_t n_items = inst->n_items;
    for (int32_t k = 0; k < n_items; k++) {
        double ub = (double)inst->items[k].words <= (double)inst->capacity_words ? 1.0 : 0.0;
        Cbc_addCol(m, "", 0.0, ub, 0.0, 1, 0, NULL, NULL);
    }
    for (int32_t i = 0; i < inst->n_layers; i++)
        Cbc_addCol(m, "", inst->compute_cycles[i], DBL_MAX, 1.0, 0, 0, NULL, NULL);
    for (int32_t i = 0; i < inst->n_layers; i++) {
        int nz = 0;
        cols[nz] = n_items + i;
        vals[nz++] = 1.0;
        for (int32_t s = 0; s < inst->n_savings; s++)
            if (inst->savings[s].layer == i)
                coef[inst->savings[s].item] += inst->savings[s].dram_cycles;
        for (int32_t k = 0; k < n_items; k++)
            if (coef[k] != 0) {
                cols[nz] = k;
                vals[nz++] = coef[k];
                coef[k] = 0;
            }
        Cbc_addRow(m, "", nz, cols, vals, 'G', inst->dram_cycles[i]);
        nz = 0;
        for (int32_t k = 0; k < n_items; k++)
            if (inst->items[k].first <= i && i <= inst->items[k].last && inst->items[k].words > 0) {
                cols[nz] = k;
                vals[nz++] = (double)inst->items[k].words;
            }
        if (nz > 0)
            Cbc_addRow(m, "", nz, cols, vals, 'L', room_words(inst, i));
    }
}

/* Run CBC on inst and round its best solution into pinned; with no
 * incumbent (impossible once the all-DRAM start is given, but cheap to
 * handle) nothing is pinned. */
static as_code run_cbc(const fu_ilp_instance *inst, double time_limit_seconds, int64_t max_nodes,
                       bool *pinned, fu_ilp_report *report, as_status *st)
{
    int32_t n_items = inst->n_items;
    size_t n_cols = (size_t)n_items + (size_t)inst->n_layers + 1;
    double *coef = calloc(n_cols, sizeof *coef);
    double *vals = calloc(n_cols, sizeof *vals);
    int *cols = calloc(n_cols, sizeof *cols);
    Cbc_Model *m = Cbc_newModel();
    if (!coef || !vals || !cols || !m) {
        free(coef);
        free(vals);
        free(cols);
        if (m)
            Cbc_deleteModel(m);
        return as_fail(st, AS_ENOMEM, "fusion ilp: out of memory for %d items", (int)n_items);
    }
    Cbc_setLogLevel(m, 0);
    build_model(m, inst, coef, cols, vals);
    if (time_limit_seconds > 0)
        Cbc_setMaximumSeconds(m, time_limit_seconds);
    if (max_nodes > 0)
        Cbc_setMaximumNodes(m, max_nodes < INT_MAX ? (int)max_nodes : INT_MAX);
    /* Pinning nothing always fits: start from it, so that a time limit
     * always leaves an incumbent. */
    for (int32_t k = 0; k < n_items; k++) {
        cols[k] = k;
        vals[k] = 0.0;
    }
    Cbc_setMIPStartI(m, n_items, cols, vals);
    double elapsed_seconds;
    /* CBC's solve keeps process-wide state (its command-line driver's
     * parameters): two solves at once, from two candidates of a co-design
     * search, corrupt each other and print CBC's interactive banner on
     * stdout.  One solve at a time. */
#pragma omp critical(accelsearch_cbc)
    {
        double started = omp_get_wtime();
        Cbc_solve(m);
        elapsed_seconds = omp_get_wtime() - started;
    }
    const double *x = Cbc_bestSolution(m);
    for (int32_t k = 0; k < n_items; k++)
        pinned[k] = x && x[k] > 0.5;
    report->optimal = Cbc_isProvenOptimal(m) != 0;
    /* CBC does not always flag its seconds limit when the limit falls in
     * preprocessing or at the root: under load it may then call the solve
     * abandoned, or even call the model infeasible and drop the start it
     * was given.  The model is feasible by construction (pinning nothing
     * fits), so a limited solve that ends unproven after running at least
     * its limit (wall time is never below CBC's own clock) was ended by
     * the limit, whatever else CBC says. */
    report->time_limit_reached =
        Cbc_isSecondsLimitReached(m) != 0 ||
        (time_limit_seconds > 0 && !report->optimal && elapsed_seconds >= time_limit_seconds);
    report->bound_cycles = Cbc_getBestPossibleObjValue(m);
    Cbc_deleteModel(m);
    free(coef);
    free(vals);
    free(cols);
    return AS_OK;
}

/* Fill the report's figures that follow from the pinning alone. */
static void summarise(const fu_ilp_instance *inst, const bool *pinned, fu_ilp_report *report)
{
    report->objective_cycles = fu_ilp_objective(inst, pinned);
    report->n_pinned_weights = report->n_pinned_activations = 0;
    report->pinned_words = 0;
    for (int32_t k = 0; k < inst->n_items; k++) {
        if (!pinned[k])
            continue;
        if (inst->items[k].is_weight)
            report->n_pinned_weights++;
        else
            report->n_pinned_activations++;
        report->pinned_words += inst->items[k].words;
    }
}

as_code fu_ilp_instance_solve(const fu_ilp_instance *inst, double time_limit_seconds,
                              int64_t max_nodes, bool *pinned, fu_ilp_report *report, as_status *st)
{
    fu_ilp_report local;
    report = report ? report : &local;
    memset(report, 0, sizeof *report);
    as_code rc = check_instance(inst, st);
    if (rc)
        return rc;
    for (int32_t k = 0; k < inst->n_items; k++)
        pinned[k] = false;
    report->unpinned_cycles = fu_ilp_objective(inst, pinned);
    if (inst->n_items == 0) { /* nothing to choose: CBC would only solve an LP */
        report->optimal = true;
        report->bound_cycles = report->unpinned_cycles;
    } else if ((rc = run_cbc(inst, time_limit_seconds, max_nodes, pinned, report, st))) {
        return rc;
    }
    int32_t over = first_overflow(inst, pinned);
    if (over >= 0)
        return as_fail(st, AS_EINTERNAL,
                       "fusion ilp: CBC's pinning overflows global memory at layer %d", (int)over);
    summarise(inst, pinned, report);
    /* CBC's incumbent can only be worse than the start it was given by
     * its tolerances; never report something worse than pinning nothing. */
    if (report->objective_cycles > report->unpinned_cycles) {
        for (int32_t k = 0; k < inst->n_items; k++)
            pinned[k] = false;
        summarise(inst, pinned, report);
    }
    return AS_OK;
}

/* ------------------------------------------------ instances from graphs */

/* Where a tensor a layer reads really comes from: through views (which
 * move nothing) back to the tensor a layer, the graph input or a weight
 * holds.  layer_pos maps ops to layer positions (-1: not a layer). */
static int32_t source_tensor(const wl_graph *g, const int32_t *layer_pos, int32_t t)
{
    for (;;) {
        int32_t p = g->tensors[t].producer;
        if (p < 0 || layer_pos[p] >= 0)
            return t;
        const wl_op *op = &g->ops[p];
        if (wl_op_category_of(op) != WL_CAT_VIEW || op->n_inputs < 1 || op->inputs[0] < 0)
            return t;
        t = op->inputs[0];
    }
}

/* Who reads tensor t (through views): whether layer `next` does, and
 * whether anything else does (another layer, a graph output, an op that is
 * neither a layer nor a view) -- then the producer must still write it. */
typedef struct readers {
    bool next;
    bool others;
} readers;

/* Add t's readers to r (zeroed by the caller), following views. */
static void find_readers(const wl_graph *g, const int32_t *layer_pos, int32_t t, int32_t next,
                         readers *r)
{
    if (wl_is_graph_output(g, t))
        r->others = true;
    for (int32_t c = 0; c < wl_consumer_count(g, t); c++) {
        int32_t o = wl_consumer_list(g, t)[c];
        const wl_op *op = &g->ops[o];
        if (op->dead)
            continue;
        if (layer_pos[o] == next && next >= 0)
            r->next = true;
        else if (layer_pos[o] >= 0 || wl_op_category_of(op) != WL_CAT_VIEW)
            r->others = r->others || !op->folded;
        else
            for (int j = 0; j < op->n_outputs; j++)
                if (op->outputs[j] >= 0)
                    find_readers(g, layer_pos, op->outputs[j], next, r);
    }
}

/* The on-chip level that holds pinned tensors: the one the options name,
 * else the outermost level that is neither DRAM nor a dummy; -1 if none. */
static int global_memory_level(const arch_spec *a, int onchip_level)
{
    if (onchip_level >= 0)
        return onchip_level < a->n_levels ? onchip_level : -1;
    for (int l = a->n_levels - 1; l >= 0; l--)
        if (a->level[l].cls == ARCH_CLASS_SRAM || a->level[l].cls == ARCH_CLASS_REGFILE)
            return l;
    return -1;
}

/* What building an instance needs at hand. */
typedef struct builder {
    fu_ilp_instance *inst;
    const wl_graph *g;
    const arch_spec *a;
    int level;              /* global memory, -1 for none */
    double bytes_per_cycle; /* DRAM; 0 = free */
    int32_t *layer_pos;     /* per op */
    int32_t *weight_item;   /* per tensor: its item, -1 */
} builder;

/* Cycles to move tensor t across DRAM at its storage precision. */
static double dram_cycles_of(const builder *b, int32_t t)
{
    int64_t bytes = wl_tensor_bytes(&b->g->tensors[t]);
    return b->bytes_per_cycle > 0 && bytes > 0 ? (double)bytes / b->bytes_per_cycle : 0.0;
}

/* Words tensor t takes in global memory: one per element (network.c). */
static int64_t words_of(const builder *b, int32_t t)
{
    int64_t n = wl_tensor_elements(&b->g->tensors[t]);
    return n > 0 ? n : 0;
}

/* Append an item (count_slots sized the arrays) and return its index. */
static int32_t add_item(builder *b, int32_t t, bool is_weight, int32_t first, int32_t last)
{
    fu_ilp_instance *inst = b->inst;
    inst->items[inst->n_items] = (fu_ilp_item){
        .tensor = t, .is_weight = is_weight, .words = words_of(b, t), .first = first, .last = last};
    return inst->n_items++;
}

/* Pinning item spares layer `cycles` of DRAM time. */
static void add_saving(builder *b, int32_t item, int32_t layer, double cycles)
{
    fu_ilp_instance *inst = b->inst;
    inst->savings[inst->n_savings++] =
        (fu_ilp_saving){.item = item, .layer = layer, .dram_cycles = cycles};
}

/* A tensor that crosses DRAM when a layer reads or writes it: weights,
 * and activations and graph inputs without folded values (stats.c's
 * traffic model; constants are shape arithmetic). */
static bool moves_through_dram(const wl_tensor *t)
{
    if (t->kind == WL_TENSOR_WEIGHT)
        return true;
    return t->kind != WL_TENSOR_CONSTANT && !t->ivalues && !t->fvalues;
}

/* DRAM cycles of layer op reading input i (tensor t): a Gather from a
 * weight table reads only the rows it gathers, as stats.c counts it. */
static double read_cycles(const builder *b, const wl_op *op, int i, int32_t t)
{
    if (!wl_op_gathers_rows(op, i) || b->g->tensors[t].kind != WL_TENSOR_WEIGHT)
        return dram_cycles_of(b, t);
    double cycles = 0;
    for (int j = 0; j < op->n_outputs; j++)
        if (op->outputs[j] >= 0)
            cycles += dram_cycles_of(b, op->outputs[j]);
    return cycles;
}

/* Layer p's reads: each distinct source tensor once; weights become items
 * (shared ones saving at every reader). */
static void add_reads(builder *b, int32_t p, const wl_op *op)
{
    for (int i = 0; i < op->n_inputs; i++) {
        if (op->inputs[i] < 0)
            continue;
        int32_t t = source_tensor(b->g, b->layer_pos, op->inputs[i]);
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = op->inputs[j] >= 0 && source_tensor(b->g, b->layer_pos, op->inputs[j]) == t;
        const wl_tensor *tensor = &b->g->tensors[t];
        int32_t maker = tensor->producer;
        if (seen || !moves_through_dram(tensor) || (maker >= 0 && b->layer_pos[maker] == p))
            continue; /* (made inside the layer: an epilogue reads it streaming) */
        double cycles = read_cycles(b, op, i, t);
        b->inst->dram_cycles[p] += cycles;
        if (tensor->kind == WL_TENSOR_WEIGHT) {
            if (b->weight_item[t] < 0)
                b->weight_item[t] = add_item(b, t, true, 0, b->inst->n_layers - 1);
            add_saving(b, b->weight_item[t], p, cycles);
        }
    }
}

/* Layer p's writes; an output the next layer reads becomes an activation
 * item saving that read, and the write too when nothing else reads it. */
static void add_writes(builder *b, int32_t p, const wl_op *op)
{
    int32_t next = p + 1 < b->inst->n_layers ? p + 1 : -1;
    for (int j = 0; j < op->n_outputs; j++) {
        int32_t t = op->outputs[j];
        if (t < 0 || !moves_through_dram(&b->g->tensors[t]))
            continue;
        double cycles = dram_cycles_of(b, t);
        b->inst->dram_cycles[p] += cycles;
        readers r = {false, false};
        find_readers(b->g, b->layer_pos, t, next, &r);
        if (!r.next)
            continue;
        int32_t item = add_item(b, t, false, p, next);
        add_saving(b, item, next, cycles);
        if (!r.others)
            add_saving(b, item, p, cycles);
    }
}

/* FAST's B_i of a mapped compute layer: the words its mapping keeps in
 * global memory (all utilized instances); 0 for vector-unit layers, whose
 * staging network.c does not cost either. */
static int64_t streamed_words(const builder *b, const map_layer_result *l)
{
    if (b->level < 0 || l->problem_class < 0 || !l->mapped)
        return 0;
    map_eval ev;
    map_evaluate(b->a, &l->problem, &l->mapping, &ev);
    int64_t words = 0;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        const map_ds_stats *d = &ev.level[b->level].ds[ds];
        if (ev.level[b->level].keeps[ds])
            words += d->tile_words * (d->utilized_instances > 0 ? d->utilized_instances : 1);
    }
    return words;
}

/* Layers and on-chip times: the layer-by-layer mapping with DRAM free (see
 * the top of the file). */
static as_code map_layers(const wl_graph *g, const arch_spec *a, const fu_cost_options *o,
                          map_network_result *r, as_status *st)
{
    arch_spec *free_dram = malloc(sizeof *free_dram);
    if (!free_dram)
        return as_fail(st, AS_ENOMEM, "fusion ilp: out of memory");
    *free_dram = *a;
    free_dram->dram.bandwidth_GBps = 0; /* network.c: no bandwidth stated, no DRAM cycles */
    map_network_options no;
    map_network_options_default(&no);
    no.search = o->search;
    no.budget_per_problem = o->budget_per_problem;
    no.cache = o->shared_mappings;
    no.weights = MAP_WEIGHTS_STREAMED; /* FAST pins weights itself (the items below) */
    as_code rc = map_network_evaluate(g, free_dram, &no, r, st);
    free(free_dram);
    return rc;
}

/* Layers from the mapping r, then every layer's reads and writes. */
static as_code fill_instance(builder *b, const map_network_result *r, as_status *st)
{
    fu_ilp_instance *inst = b->inst;
    for (int32_t p = 0; p < r->n_layers; p++) {
        const map_layer_result *l = &r->layers[p];
        if (!l->mapped)
            return as_fail(st, AS_EINVAL, "%s: fusion ilp: layer '%s' has no valid mapping",
                           b->g->source, b->g->ops[l->op].name);
        inst->op[p] = l->op;
        inst->compute_cycles[p] = (double)l->cycles;
        inst->reserved_words[p] = streamed_words(b, l);
    }
    for (int32_t p = 0; p < r->n_layers; p++) { /* a fused op writes its last op's output */
        int32_t last = r->layers[p].op;
        for (int32_t m = last; m >= 0; m = b->g->ops[m].epilogue_next) {
            add_reads(b, p, &b->g->ops[m]);
            last = m;
        }
        add_writes(b, p, &b->g->ops[last]);
    }
    return AS_OK;
}

/* Upper bounds for the instance's arrays: every input or output of a layer
 * gives at most one item and two savings. */
static void count_slots(const wl_graph *g, const map_network_result *r, int32_t *items,
                        int32_t *savings)
{
    int64_t n = 0;
    for (int32_t p = 0; p < r->n_layers; p++)
        for (int32_t m = r->layers[p].op; m >= 0; m = g->ops[m].epilogue_next)
            n += g->ops[m].n_inputs + g->ops[m].n_outputs;
    *items = (int32_t)n;
    *savings = (int32_t)(2 * n);
}

as_code fu_ilp_instance_from_graph(fu_ilp_instance *inst, const wl_graph *g, const arch_spec *a,
                                   const fu_cost_options *o, as_status *st)
{
    memset(inst, 0, sizeof *inst);
    if (!g->order || !g->consumer_start)
        return as_fail(st, AS_EINVAL, "%s: fusion ilp: graph not indexed", g->source);
    map_network_result r;
    as_code rc = map_layers(g, a, o, &r, st);
    if (rc)
        return rc;
    builder b = {.inst = inst, .g = g, .a = a};
    b.level = global_memory_level(a, o->onchip_level);
    b.bytes_per_cycle = a->dram.bandwidth_GBps * 1e9 * a->cycle_seconds;
    b.layer_pos = malloc(((size_t)g->n_ops + 1) * sizeof *b.layer_pos);
    b.weight_item = malloc(((size_t)g->n_tensors + 1) * sizeof *b.weight_item);
    int32_t max_items, max_savings;
    count_slots(g, &r, &max_items, &max_savings);
    if (!b.layer_pos || !b.weight_item)
        rc = as_fail(st, AS_ENOMEM, "%s: fusion ilp: out of memory", g->source);
    else
        rc = fu_ilp_instance_init(inst, r.n_layers, max_items, max_savings, st);
    if (!rc) {
        for (int32_t op = 0; op < g->n_ops; op++)
            b.layer_pos[op] = -1;
        for (int32_t t = 0; t < g->n_tensors; t++)
            b.weight_item[t] = -1;
        for (int32_t p = 0; p < r.n_layers; p++)
            b.layer_pos[r.layers[p].op] = p;
        for (int32_t op = 0; op < g->n_ops; op++) /* epilogue ops are their root's layer */
            if (g->ops[op].epilogue_of >= 0 && wl_op_does_work(&g->ops[op]))
                b.layer_pos[op] = b.layer_pos[g->ops[op].epilogue_of];
        if (b.level >= 0) {
            const arch_level *gm = &a->level[b.level];
            inst->capacity_words = gm->size_words * (gm->instances > 0 ? gm->instances : 1);
        }
        rc = fill_instance(&b, &r, st);
        if (rc)
            fu_ilp_instance_free(inst);
    }
    free(b.layer_pos);
    free(b.weight_item);
    map_network_free(&r);
    return rc;
}

/* -------------------------------------------------------------- plans */

/* Group of each layer: a new group unless a pinned activation joins the
 * layer to the one before (items span first..last, FAST's span is two). */
static void layer_groups(const fu_ilp_instance *inst, const bool *pinned, int32_t *layer_group)
{
    for (int32_t i = 0; i < inst->n_layers; i++)
        layer_group[i] = -1;
    for (int32_t k = 0; k < inst->n_items; k++)
        if (pinned[k] && !inst->items[k].is_weight)
            for (int32_t i = inst->items[k].first + 1; i <= inst->items[k].last; i++)
                layer_group[i] = -2; /* joined to i - 1 */
}

as_code fu_ilp_plan(const fu_ilp_instance *inst, const wl_graph *g, const bool *pinned,
                    fu_plan *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    int32_t *layer_group = malloc(((size_t)inst->n_layers + 1) * sizeof *layer_group);
    int32_t *pos = malloc(((size_t)g->n_ops + 1) * sizeof *pos);
    int32_t *group = malloc(((size_t)g->n_ops + 1) * sizeof *group);
    if (!layer_group || !pos || !group) {
        free(layer_group);
        free(pos);
        free(group);
        return as_fail(st, AS_ENOMEM, "%s: fusion ilp: out of memory", g->source);
    }
    layer_groups(inst, pinned, layer_group);
    for (int32_t o = 0; o < g->n_ops; o++)
        pos[o] = group[o] = -1;
    for (int32_t i = 0; i < inst->n_layers; i++)
        if (inst->op[i] >= 0 && inst->op[i] < g->n_ops)
            pos[inst->op[i]] = i;
    /* Number groups in the topological order of their first members;
     * working ops the instance does not list (none, normally) go alone. */
    int32_t n_groups = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t o = g->order[k], i = pos[o];
        if (i < 0) {
            group[o] = fu_op_in_plan(g, o) ? n_groups++ : -1;
            continue;
        }
        if (layer_group[i] == -2 && i > 0)
            layer_group[i] = layer_group[i - 1];
        if (layer_group[i] < 0)
            layer_group[i] = n_groups++;
        group[o] = layer_group[i];
    }
    free(layer_group);
    free(pos);
    out->n_ops = g->n_ops;
    out->group = group;
    out->n_groups = n_groups;
    fu_plan_canonicalize(g, out);
    return AS_OK;
}

/* ------------------------------------------------------------- search */

as_code fu_ilp_solve_report(fu_evaluator *e, const fu_search_options *o, fu_plan *out,
                            fu_ilp_report *report, as_status *st)
{
    const wl_graph *g = fu_evaluator_graph(e);
    fu_ilp_instance inst;
    as_code rc = fu_ilp_instance_from_graph(&inst, g, fu_evaluator_arch(e),
                                            fu_evaluator_cost_options(e), st);
    if (rc)
        return rc;
    bool *pinned = calloc((size_t)inst.n_items + 1, sizeof *pinned);
    if (!pinned)
        rc = as_fail(st, AS_ENOMEM, "%s: fusion ilp: out of memory", g->source);
    if (!rc)
        rc = fu_ilp_instance_solve(&inst, o->time_limit_seconds, o->max_nodes, pinned, report, st);
    if (!rc)
        rc = fu_ilp_plan(&inst, g, pinned, out, st);
    free(pinned);
    fu_ilp_instance_free(&inst);
    return rc;
}

as_code fu_ilp_solve(fu_evaluator *e, const fu_search_options *o, fu_plan *out, as_status *st)
{
    return fu_ilp_solve_report(e, o, out, NULL, st);
}
