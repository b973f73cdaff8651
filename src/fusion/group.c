/*
 * group.c -- the cost of a fused group (Optimus, DeFiNES) and of a plan:
 * the evaluator, its caches and the entry points.  A group's geometry is
 * region.c's (tiles, regions), its tiled cost tiling.c's (halos,
 * footprint, DRAM, members, the choice of tile shape).
 *
 * Singleton groups are layers: they cost exactly what map_network_evaluate
 * charges (network.c's model, reused through mapping.h's layer cost): the
 * mapper maps the whole layer with DRAM as backing store and its DRAM
 * traffic, refetches included, is the layer's.
 *
 * A fused op (a producer with its epilogue, wl_fuse_epilogues) is one
 * member of a plan: alone, it costs what network.c charges for the layer
 * with its epilogue; in a group of several, its epilogue ops are members
 * of the tiled group like any other (tiling.c overlaps their vector
 * cycles with their root's, as network.c does).
 *
 * A group of two or more ops runs tile by tile over the output of its
 * last member in topological order (the anchor).  Any set of ops is
 * costed as given: whether it may be a group (convex, connected) is
 * fu_plan_valid's question, which fu_plan_evaluate asks first.
 */
#include "fusion_private.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fu_cost_options_default(fu_cost_options *o)
{
    memset(o, 0, sizeof *o);
    map_search_options_default(&o->search);
    o->onchip_level = -1;
}

/* ------------------------------------------------------------- caches */

/* A group's cost by its sorted member list (items of the groups table). */
typedef struct group_entry {
    int32_t n;
    int32_t *ops;
    fu_group_cost cost;
} group_entry;

/* What a group entry is looked up by: its sorted members. */
typedef struct member_list {
    const int32_t *ops;
    int32_t n;
} member_list;

/* Whether group entry item has the members key (a member_list). */
static bool group_has_members(const void *item, const void *key, const void *context)
{
    (void)context;
    const group_entry *ge = item;
    const member_list *m = key;
    return ge->n == m->n && memcmp(ge->ops, m->ops, (size_t)m->n * sizeof *m->ops) == 0;
}

/* ------------------------------------------------------------ evaluator */

as_code fu_evaluator_new(fu_evaluator **out, const wl_graph *g, const arch_spec *a,
                         const fu_cost_options *o, as_status *st)
{
    *out = NULL;
    if (!g->order)
        return as_fail(st, AS_EINVAL, "%s: graph not inferred (call wl_graph_infer first)",
                       g->source);
    fu_cost_options defaults;
    if (!o) {
        fu_cost_options_default(&defaults);
        o = &defaults;
    }
    as_code code = o->arch_validated ? AS_OK : arch_validate(a, st);
    if (code != AS_OK)
        return code;
    int onchip = o->onchip_level >= 0 ? o->onchip_level : map_outermost_onchip_level(a);
    if (o->onchip_level >= a->n_levels ||
        (o->onchip_level >= 0 &&
         (a->level[onchip].cls == ARCH_CLASS_DRAM || a->level[onchip].cls == ARCH_CLASS_DUMMY)))
        return as_fail(st, AS_EINVAL,
                       "%s: onchip_level %d is not an on-chip storage level (0..%d, not DRAM, "
                       "not a fanout-only level)",
                       a->name, o->onchip_level, a->n_levels - 1);
    map_residency weights;
    code = map_residency_decide(g, a, o->weights, &weights, st);
    if (code != AS_OK)
        return code;
    fu_evaluator *e = calloc(1, sizeof *e);
    if (!e)
        return as_fail(st, AS_ENOMEM, "out of memory for a fusion evaluator");
    as_table_init(&e->groups, sizeof(group_entry));
    e->mappings = o->shared_mappings;
    if (!e->mappings) {
        code = map_cache_new(&e->mappings, st);
        e->owns_mappings = true;
        if (code != AS_OK) {
            fu_evaluator_free(e);
            return code;
        }
    }
    e->g = g;
    /* Groups are mapped and costed on the architecture the mapper sees
     * under the residency, as network.c's layers are (resident.c): with
     * resident weights, the resident level less the weights -- which is
     * also the room tiling.c's footprints must fit. */
    e->weights = weights;
    map_residency_arch(a, &weights, &e->a);
    e->o = *o;
    e->onchip = onchip;
    e->dram = a->level[a->n_levels - 1].cls == ARCH_CLASS_DRAM ? a->n_levels - 1 : -1;
    e->n_levels = 1;
    e->budget[0] = map_effective_budget(&o->search, o->budget_per_problem);
    map_layer_key_design(&e->a, &o->search, e->budget[0], &e->design_key[0]);
    omp_init_lock(&e->lock);
    e->lock_ready = true;
    *out = e;
    return AS_OK;
}

/* Forget every group cost (their mappings are about to improve). */
static void forget_groups(fu_evaluator *e)
{
    for (size_t i = 0; i < e->groups.capacity; i++) {
        group_entry *ge = as_table_slot(&e->groups, i);
        if (ge)
            free(ge->ops);
    }
    as_table_free(&e->groups);
    as_table_init(&e->groups, sizeof(group_entry));
}

void fu_evaluator_free(fu_evaluator *e)
{
    if (!e)
        return;
    forget_groups(e);
    if (e->owns_mappings)
        map_cache_free(e->mappings);
    as_table_free(&e->groups);
    if (e->lock_ready)
        omp_destroy_lock(&e->lock);
    free(e);
}

const wl_graph *fu_evaluator_graph(const fu_evaluator *e)
{
    return e->g;
}

const arch_spec *fu_evaluator_arch(const fu_evaluator *e)
{
    return &e->a;
}

const map_residency *fu_evaluator_residency(const fu_evaluator *e)
{
    return &e->weights;
}

const fu_cost_options *fu_evaluator_cost_options(const fu_evaluator *e)
{
    return &e->o;
}

as_code fu_evaluator_raise_budget(fu_evaluator *e, int64_t budget_per_problem, as_status *st)
{
    int64_t budget = map_effective_budget(&e->o.search, budget_per_problem);
    int top = e->n_levels - 1;
    if (budget == e->budget[top])
        return AS_OK;
    if (budget < e->budget[top] || e->n_levels == FU_MAX_MAP_LEVELS)
        return as_fail(st, AS_EINVAL,
                       "fusion evaluator: mapping budget %lld after %lld (budgets only grow, at "
                       "most %d of them)",
                       (long long)budget, (long long)e->budget[top], FU_MAX_MAP_LEVELS);
    map_layer_key_design(&e->a, &e->o.search, budget, &e->design_key[top + 1]);
    e->budget[top + 1] = budget;
    e->n_levels++;
    forget_groups(e);
    return AS_OK;
}

/*
 * The mapper's best for problem p on e's design at its current budget,
 * searched once per distinct problem (and design, when the cache is
 * shared): from the cache, else the outcome at an earlier, smaller budget
 * searched on (map_problem_search_continue: the same result, for the
 * difference), else searched afresh.  The search runs outside the cache's
 * lock, so two threads may map the same new problem at once; both get the
 * same result (same seed) and the first stored wins.  Fails when the
 * search cannot start or memory runs out.
 */
as_code fu_mapped_problem(fu_evaluator *e, const wl_problem *p, const map_problem_outcome **out,
                          as_status *st)
{
    int top = e->n_levels - 1;
    map_layer_key key = e->design_key[top];
    map_problem_key_of(p, &key.problem);
    *out = map_cache_find(e->mappings, &key);
    if (*out)
        return AS_OK;
    const map_problem_outcome *below = NULL;
    for (int l = top - 1; l >= 0 && !below; l--) {
        map_layer_key k = e->design_key[l];
        k.problem = key.problem;
        below = map_cache_find(e->mappings, &k);
    }
    map_problem_outcome *searched = malloc(sizeof *searched);
    if (!searched)
        return as_fail(st, AS_ENOMEM, "out of memory for a mapped problem");
    if (below)
        map_problem_search_continue(&e->a, p, &e->o.search, e->o.search.threads, e->budget[top],
                                    below, searched);
    else
        map_problem_search_run(&e->a, p, &e->o.search, e->o.search.threads, e->budget[top], NULL,
                               searched);
    as_code code = AS_OK;
    if (searched->code != AS_OK)
        code = as_fail(st, searched->code, "%s", searched->status.message);
    else if (!(*out = map_cache_add(e->mappings, &key, searched)))
        code = as_fail(st, AS_ENOMEM, "out of memory for the mapping cache");
    free(searched);
    return code;
}

/*
 * The mapping member op runs with on problem p: the caller's hook's when
 * fu_cost_options.member_mapping is set (into *scratch), else the mapper's
 * (fu_mapped_problem).  *out stays valid while scratch and e live.
 */
as_code fu_member_outcome(fu_evaluator *e, int32_t op, const wl_problem *p,
                          map_problem_outcome *scratch, const map_problem_outcome **out,
                          as_status *st)
{
    if (!e->o.member_mapping)
        return fu_mapped_problem(e, p, out, st);
    *out = NULL;
    memset(scratch, 0, sizeof *scratch);
    if (!e->o.member_mapping(e->o.member_mapping_user, op, p, scratch))
        return as_fail(st, AS_EINVAL, "%s: op %d '%s': the member mapping hook gave no answer",
                       e->g->source, op, e->g->ops[op].name);
    *out = scratch;
    return AS_OK;
}

/* ------------------------------------------------------------ singletons */

/* Words of one instance of level l that a mapping's tiles occupy. */
static int64_t level_tile_words(const map_eval *ev, int l)
{
    int64_t words = 0;
    for (int ds = 0; l >= 0 && ds < WL_NDATASPACES; ds++)
        words += ev->level[l].ds[ds].tile_words;
    return words;
}

/* Bytes that `words` words of word_bits bits take (8 bits when the level
 * gives none), rounded up. */
int64_t fu_bytes_of_words(double words, int word_bits)
{
    return (int64_t)ceil(words * (word_bits > 0 ? word_bits : 8) / 8.0);
}

/* A layer alone: network.c's cost of it, whole output as one tile. */
static as_code singleton_cost(fu_evaluator *e, int32_t o, fu_group_cost *c, as_status *st)
{
    const wl_graph *g = e->g;
    map_layer_result r;
    memset(&r, 0, sizeof r);
    r.op = o;
    r.problem_class = -1;
    if (map_op_is_compute(&g->ops[o])) {
        as_code code = wl_op_problem(g, o, &r.problem, st);
        if (code != AS_OK)
            return code;
        const map_problem_outcome *m;
        map_problem_outcome *scratch = e->o.member_mapping ? malloc(sizeof *scratch) : NULL;
        if (e->o.member_mapping && !scratch)
            return as_fail(st, AS_ENOMEM, "out of memory for a member's mapping");
        code = fu_member_outcome(e, o, &r.problem, scratch, &m, st);
        if (code != AS_OK) {
            free(scratch);
            return code;
        }
        if (!m->found) {
            snprintf(c->reason, sizeof c->reason,
                     "op %d '%s': no valid mapping on %s after %lld evaluations", o, g->ops[o].name,
                     e->a.name, (long long)m->evaluated);
            free(scratch);
            return AS_OK;
        }
        map_cost_compute_layer(g, &e->a, &e->weights, m, &r);
        c->onchip_bytes = fu_bytes_of_words((double)level_tile_words(&m->eval, e->onchip),
                                            e->onchip >= 0 ? e->a.level[e->onchip].word_bits : 8);
        free(scratch);
    } else {
        map_cost_vector_layer(g, &e->a, &e->weights, &r);
    }
    map_cost_epilogue(g, &e->a, &e->weights, &r);
    map_finish_layer(&e->a, &r);
    c->valid = true;
    c->halo = FU_HALO_RECOMPUTE;
    c->n_tiles = 1;
    fu_output_extents(g, o, &c->tile);
    c->dram_bytes = r.dram_bytes;
    c->macs = r.macs;
    c->cycles = r.cycles;
    c->energy_pJ = r.energy_pJ;
    c->dram_energy_pJ = r.energy_by_component_pJ[MAP_COMP_DRAM];
    c->onchip_energy_pJ = r.energy_pJ - c->dram_energy_pJ;
    memcpy(c->energy_by_component_pJ, r.energy_by_component_pJ, sizeof r.energy_by_component_pJ);
    memcpy(c->onchip_level_pJ, r.onchip_level_pJ, sizeof r.onchip_level_pJ);
    return AS_OK;
}

/* --------------------------------------------------------- entry points */

/* qsort and bsearch order of op indices. */
static int by_op(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The cached cost of the sorted member list ops[0 .. n) (hash h), or
 * NULL; the caller holds the lock. */
static const group_entry *cached_group(fu_evaluator *e, const int32_t *ops, int32_t n, uint64_t h)
{
    member_list key = {ops, n};
    return as_table_find(&e->groups, h, &key, group_has_members, NULL);
}

/* Remember cost c of ops[0 .. n) (a failure to remember only costs time). */
static void remember_group(fu_evaluator *e, const int32_t *ops, int32_t n, uint64_t h,
                           const fu_group_cost *c)
{
    int32_t *copy = as_vec_copy(ops, n, sizeof *copy);
    if (!copy)
        return;
    member_list key = {ops, n};
    bool added = false;
    omp_set_lock(&e->lock);
    group_entry *ge = as_table_insert(&e->groups, h, &key, group_has_members, NULL, &added);
    if (added)
        *ge = (group_entry){.n = n, .ops = copy, .cost = *c};
    omp_unset_lock(&e->lock);
    if (!added)
        free(copy);
}

/* ops[0 .. n) sorted by op index into *sorted (malloc'd), after checking
 * that they are distinct working ops. */
static as_code sorted_members(const wl_graph *g, const int32_t *ops, int32_t n, int32_t **sorted,
                              as_status *st)
{
    *sorted = NULL;
    if (n < 1)
        return as_fail(st, AS_EINVAL, "%s: a group needs at least one op", g->source);
    int32_t *s = as_vec_copy(ops, n, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory for a group of %d ops", n);
    qsort(s, (size_t)n, sizeof *s, by_op);
    for (int32_t i = 0; i < n; i++) {
        as_code code = AS_OK;
        if (!fu_op_in_plan(g, s[i]))
            code = as_fail(st, AS_EINVAL, "%s: op %d is not a working op of the graph", g->source,
                           s[i]);
        else if (i > 0 && s[i - 1] == s[i])
            code = as_fail(st, AS_EINVAL, "%s: op %d '%s' listed twice in a group", g->source, s[i],
                           g->ops[s[i]].name);
        if (code != AS_OK) {
            free(s);
            return code;
        }
    }
    *sorted = s;
    return AS_OK;
}

/* The ops a group of the sorted members runs, in topological order (the
 * last being the anchor; epilogue ops join their root) into *topo
 * (malloc'd), *k of them. */
static as_code group_topo(const wl_graph *g, const int32_t *sorted, int32_t n, int32_t **topo,
                          int32_t *k, as_status *st)
{
    *k = 0;
    *topo = malloc((size_t)g->n_ops * sizeof **topo);
    if (!*topo)
        return as_fail(st, AS_ENOMEM, "out of memory for a group of %d ops", n);
    for (int32_t i = 0; i < g->n_order; i++) {
        int32_t o = g->order[i];
        int32_t root = wl_op_does_work(&g->ops[o]) ? wl_fused_root(g, o) : o;
        if (bsearch(&root, sorted, (size_t)n, sizeof *sorted, by_op))
            (*topo)[(*k)++] = o;
    }
    return AS_OK;
}

/* The cost of the sorted members: a layer alone, or fused (members put in
 * topological order, the last being the anchor). */
static as_code group_cost(fu_evaluator *e, const int32_t *sorted, int32_t n, const fu_tile *only,
                          fu_halo_mode only_halo, fu_group_cost *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    if (n == 1)
        return singleton_cost(e, sorted[0], out, st);
    int32_t *topo, k;
    as_code code = group_topo(e->g, sorted, n, &topo, &k, st);
    if (code == AS_OK)
        code = fu_fused_cost(e, topo, k, only, only_halo, out, st);
    free(topo);
    return code;
}

as_code fu_group_evaluate(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_group_cost *out,
                          as_status *st)
{
    int32_t *sorted;
    memset(out, 0, sizeof *out);
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code != AS_OK)
        return code;
    uint64_t h = as_hash_bytes(sorted, (size_t)n_ops * sizeof *sorted, AS_HASH_SEED);
    if (e->o.member_mapping) { /* the caller's mappings change: nothing cached */
        code = group_cost(e, sorted, n_ops, NULL, FU_HALO_RECOMPUTE, out, st);
        free(sorted);
        return code;
    }
    omp_set_lock(&e->lock);
    const group_entry *hit = cached_group(e, sorted, n_ops, h);
    if (hit)
        *out = hit->cost;
    omp_unset_lock(&e->lock);
    if (!hit) {
        code = group_cost(e, sorted, n_ops, NULL, FU_HALO_RECOMPUTE, out, st);
        if (code == AS_OK)
            remember_group(e, sorted, n_ops, h, out);
    }
    free(sorted);
    return code;
}

as_code fu_group_evaluate_tile(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile tile,
                               fu_halo_mode halo, fu_group_cost *out, as_status *st)
{
    int32_t *sorted;
    memset(out, 0, sizeof *out);
    if ((unsigned)halo > FU_HALO_CACHE_ALL)
        return as_fail(st, AS_EINVAL, "halo mode %d is not one of fu_halo_mode", (int)halo);
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code == AS_OK)
        code = group_cost(e, sorted, n_ops, &tile, halo, out, st);
    free(sorted);
    return code;
}

as_code fu_group_pick_tile(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile *tile,
                           fu_halo_mode *halo, bool *fits, as_status *st)
{
    int32_t *sorted, *topo = NULL, k;
    *halo = FU_HALO_RECOMPUTE;
    *fits = true;
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code == AS_OK && n_ops == 1)
        fu_output_extents(e->g, sorted[0], tile);
    else if (code == AS_OK)
        code = group_topo(e->g, sorted, n_ops, &topo, &k, st);
    if (code == AS_OK && topo)
        code = fu_fused_pick_tile(e, topo, k, tile, halo, fits, st);
    free(topo);
    free(sorted);
    return code;
}

as_code fu_group_tile_terms(fu_evaluator *e, const int32_t *ops, int32_t n_ops, fu_tile tile,
                            fu_halo_mode halo, fu_group_terms *out, as_status *st)
{
    int32_t *sorted, *topo = NULL, k;
    memset(out, 0, sizeof *out);
    if ((unsigned)halo > FU_HALO_CACHE_ALL)
        return as_fail(st, AS_EINVAL, "halo mode %d is not one of fu_halo_mode", (int)halo);
    as_code code = sorted_members(e->g, ops, n_ops, &sorted, st);
    if (code == AS_OK && n_ops < 2)
        code = as_fail(st, AS_EINVAL, "%s: the terms of a fused group need two ops or more",
                       e->g->source);
    if (code == AS_OK)
        code = group_topo(e->g, sorted, n_ops, &topo, &k, st);
    if (code == AS_OK)
        code = fu_fused_terms(e, topo, k, tile, halo, out, st);
    free(topo);
    free(sorted);
    return code;
}

void fu_group_terms_free(fu_group_terms *t)
{
    if (!t)
        return;
    free(t->m);
    memset(t, 0, sizeof *t);
}

void fu_plan_cost_free(fu_plan_cost *c)
{
    if (!c)
        return;
    free(c->groups);
    memset(c, 0, sizeof *c);
}

as_code fu_plan_cost_copy(fu_plan_cost *out, const fu_plan_cost *c, as_status *st)
{
    fu_group_cost *groups = c->groups ? as_vec_copy(c->groups, c->n_groups, sizeof *groups) : NULL;
    if (c->groups && !groups)
        return as_fail(st, AS_ENOMEM, "out of memory copying a plan cost of %d groups",
                       c->n_groups);
    *out = *c;
    out->groups = groups;
    return AS_OK;
}

void fu_plan_cost_add(fu_plan_cost *p, int32_t gid, const fu_group_cost *c)
{
    if (!c->valid && p->valid)
        snprintf(p->reason, sizeof p->reason, "group %d: %.140s", gid, c->reason);
    p->valid &= c->valid;
    p->cycles += c->cycles;
    p->energy_pJ += c->energy_pJ;
    p->onchip_energy_pJ += c->onchip_energy_pJ;
    p->dram_energy_pJ += c->dram_energy_pJ;
    for (int k = 0; k < MAP_N_COMPONENTS; k++)
        p->energy_by_component_pJ[k] += c->energy_by_component_pJ[k];
    for (int k = 0; k < ARCH_MAX_LEVELS; k++)
        p->onchip_level_pJ[k] += c->onchip_level_pJ[k];
    p->dram_bytes += c->dram_bytes;
    p->macs += c->macs;
    p->recomputed_macs += c->recomputed_macs;
}

void fu_plan_cost_finish(fu_plan_cost *p, const arch_spec *a)
{
    p->latency_s = (double)p->cycles * a->cycle_seconds;
    p->edp_J_cycle = p->energy_pJ * 1e-12 * (double)p->cycles;
    p->op_intensity = p->dram_bytes > 0 ? 2.0 * (double)p->macs / (double)p->dram_bytes : 0;
}

as_code fu_plan_evaluate(fu_evaluator *e, const fu_plan *p, fu_plan_cost *out, as_status *st)
{
    const wl_graph *g = e->g;
    memset(out, 0, sizeof *out);
    out->weights = e->weights;
    if (!fu_plan_valid(g, p, out->reason, sizeof out->reason))
        return AS_OK;
    out->groups = calloc((size_t)(p->n_groups > 0 ? p->n_groups : 1), sizeof *out->groups);
    int32_t *start = malloc((size_t)(p->n_groups + 1) * sizeof *start);
    int32_t *members = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *members);
    as_code code = AS_OK;
    if (!out->groups || !start || !members)
        code = as_fail(st, AS_ENOMEM, "out of memory evaluating a plan of %d groups", p->n_groups);
    else
        fu_plan_members(g, p, start, members);
    out->n_groups = p->n_groups;
    out->valid = true;
    for (int32_t gid = 0; code == AS_OK && gid < p->n_groups; gid++) {
        fu_group_cost *c = &out->groups[gid];
        code = fu_group_evaluate(e, members + start[gid], start[gid + 1] - start[gid], c, st);
        if (code == AS_OK)
            fu_plan_cost_add(out, gid, c);
    }
    free(start);
    free(members);
    if (code != AS_OK) {
        fu_plan_cost_free(out);
        return code;
    }
    fu_plan_cost_finish(out, &e->a);
    return AS_OK;
}
