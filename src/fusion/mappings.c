/*
 * mappings.c -- the mapping each compute layer of a plan runs with, as
 * the evaluator costed it, so that a plan can be kept and re-examined
 * layer by layer (the run store keeps them with every candidate).
 *
 * A layer alone is mapped whole (group.c's singleton cost).  A member of
 * a fused group is mapped on its tile problem at the group's chosen tile
 * shape (tiling.c): the group is rebuilt as group.c builds it (the plan's
 * members with their epilogue ops, topological order), its tiles walked
 * at that shape, and each compute member's tile problem asked of the
 * mapper through fu_mapped_problem -- the cache the costing filled, so
 * nothing is searched again -- or of the caller's hook when it supplies
 * the members' mappings (fu_cost_options.member_mapping).
 */
#include "fusion_private.h"

#include <stdlib.h>
#include <string.h>

/* The ops group.c costs for the plan members mem[0 .. n) (topological
 * order): every op of g, in topological order, whose fused root is a
 * member (a member's epilogue ops join it).  in_group is scratch of
 * g->n_ops entries, false on entry and on return.  Returns how many. */
static int32_t group_ops(const wl_graph *g, const int32_t *mem, int32_t n, bool *in_group,
                         int32_t *ops)
{
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        in_group[mem[i]] = true;
    for (int32_t i = 0; i < g->n_order; i++) {
        int32_t o = g->order[i];
        int32_t root = wl_op_does_work(&g->ops[o]) ? wl_fused_root(g, o) : o;
        if (in_group[root])
            ops[k++] = o;
    }
    for (int32_t i = 0; i < n; i++)
        in_group[mem[i]] = false;
    return k;
}

/* Layer op of group gid mapped on problem p (unmapped when the group is
 * not valid) into *l. */
static as_code map_layer(fu_evaluator *e, int32_t gid, const fu_group_cost *gc, int32_t op,
                         const wl_problem *p, fu_layer_mapping *l, as_status *st)
{
    memset(l, 0, sizeof *l);
    l->group = gid;
    l->op = op;
    l->n_tiles = gc->valid ? gc->n_tiles : 0;
    l->problem = *p;
    if (!gc->valid)
        return AS_OK;
    const map_problem_outcome *m;
    map_problem_outcome *scratch = e->o.member_mapping ? malloc(sizeof *scratch) : NULL;
    if (e->o.member_mapping && !scratch)
        return as_fail(st, AS_ENOMEM, "out of memory for a member's mapping");
    as_code code = fu_member_outcome(e, op, p, scratch, &m, st);
    if (code == AS_OK && m->found) {
        l->found = true;
        l->mapped = m->mapped;
        l->mapping = m->mapping;
        l->cycles = m->eval.cycles;
        l->energy_pJ = m->eval.energy_pJ;
    }
    free(scratch);
    return code;
}

/* The compute members of fused group gid (ops[0 .. n), with epilogues,
 * topological) on their tile problems, appended to out at *n_out (room
 * for `room` in all). */
static as_code map_fused(fu_evaluator *e, int32_t gid, const fu_group_cost *gc, const int32_t *ops,
                         int32_t n, fu_layer_mapping *out, int32_t *n_out, int32_t room,
                         as_status *st)
{
    fu_group gr;
    as_code code = fu_group_init(&gr, e, ops, n, st);
    if (code == AS_OK && gc->valid) { /* an invalid group chose no tile */
        fu_walk_axis(&gr, 0, gc->tile.rows);
        fu_walk_axis(&gr, 1, gc->tile.cols);
    }
    for (int32_t i = 0; code == AS_OK && i < gr.n; i++) {
        if (!gr.m[i].compute)
            continue;
        if (*n_out == room) {
            code = as_fail(st, AS_EINTERNAL, "%s: group %d has more compute members than the graph",
                           e->g->source, gid);
            break;
        }
        wl_problem p = gc->valid ? fu_tile_problem(&gr, &gr.m[i]) : gr.m[i].problem;
        code = map_layer(e, gid, gc, gr.m[i].op, &p, &out[(*n_out)++], st);
    }
    fu_group_free(&gr);
    return code;
}

as_code fu_plan_mappings(fu_evaluator *e, const fu_plan *p, const fu_plan_cost *cost,
                         fu_layer_mapping **out, int32_t *n, as_status *st)
{
    const wl_graph *g = e->g;
    *out = NULL;
    *n = 0;
    if (p->n_ops != g->n_ops || cost->n_groups != p->n_groups || (p->n_groups > 0 && !cost->groups))
        return as_fail(st, AS_EINVAL,
                       "%s: a plan of %d ops and %d groups with a cost of %d groups: not this "
                       "graph's plan and its cost",
                       g->source, p->n_ops, p->n_groups, cost->n_groups);
    size_t n_ops = (size_t)(g->n_ops > 0 ? g->n_ops : 1);
    int32_t *start = malloc((size_t)(p->n_groups + 1) * sizeof *start);
    int32_t *members = malloc(n_ops * sizeof *members), *ops = malloc(n_ops * sizeof *ops);
    bool *in_group = calloc(n_ops, sizeof *in_group);
    int32_t n_compute = 1; /* room for every compute layer a plan covers */
    for (int32_t o = 0; o < g->n_ops; o++)
        n_compute += fu_op_in_plan(g, o) && map_op_is_compute(&g->ops[o]);
    fu_layer_mapping *layers = calloc((size_t)n_compute, sizeof *layers);
    as_code code = AS_OK;
    if (!start || !members || !ops || !in_group || !layers)
        code = as_fail(st, AS_ENOMEM, "%s: out of memory for the mappings of %d ops", g->source,
                       g->n_ops);
    else
        fu_plan_members(g, p, start, members);
    int32_t count = 0;
    for (int32_t gid = 0; code == AS_OK && gid < p->n_groups; gid++) {
        const int32_t *mem = members + start[gid];
        int32_t n_mem = start[gid + 1] - start[gid];
        const fu_group_cost *gc = &cost->groups[gid];
        if (n_mem == 1 && map_op_is_compute(&g->ops[mem[0]])) { /* a layer alone, whole */
            wl_problem whole;
            code = wl_op_problem(g, mem[0], &whole, st);
            if (code == AS_OK)
                code = map_layer(e, gid, gc, mem[0], &whole, &layers[count++], st);
        } else if (n_mem > 1) {
            int32_t k = group_ops(g, mem, n_mem, in_group, ops);
            code = map_fused(e, gid, gc, ops, k, layers, &count, n_compute, st);
        }
    }
    free(start);
    free(members);
    free(ops);
    free(in_group);
    if (code != AS_OK) {
        free(layers);
        return code;
    }
    *out = layers;
    *n = count;
    return AS_OK;
}
