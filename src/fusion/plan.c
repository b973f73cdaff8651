/*
 * plan.c -- fusion plans: the layer-by-layer plan, validity, canonical
 * form, equality.
 *
 * Data edges.  A plan groups working ops (fu_op_in_plan: the layers of
 * network.c).  Views (Reshape, Flatten, Identity, ...) do no work and sit
 * in no group, so edges are taken through them: op b depends on op a when
 * b reads a tensor that a produced, directly or through a chain of views
 * (their data input, input 0).  Folded shape arithmetic is not a data
 * path: a Reshape's target shape computed by Shape(x) does not make the
 * Reshape's reader depend on x's producer through it.
 *
 * Fused ops.  An op that runs in another's epilogue (wl_fuse_epilogues)
 * is not in the plan: its root stands for it, so a plan's unit is the
 * producer with its epilogue and no activation can form a group alone.
 * The root's edges are those of its epilogue ops too (their extra
 * inputs in, their final output out).
 *
 * Validity.  Every working op has a group in [0, n_groups) and every
 * group has members; ops that do no work have -1.  Each group is
 *  - connected by data: its members form one component under "consumes
 *    the other's output" and "reads a tensor the other reads" (constants
 *    and folded values aside: sharing one is no data in common);
 *  - convex: no path of data edges leaves the group and re-enters it.
 * Beyond the two stated rules the groups must also be schedulable one
 * after another: the graph of groups (an edge where a member of one
 * feeds a member of another) is acyclic.  Convex groups can still form a
 * cycle between two groups (a1 -> b1 and b2 -> a2); such a plan cannot
 * run group by group, so it is invalid too.
 */
#include "fusion_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool fu_op_in_plan(const wl_graph *g, int32_t o)
{
    return o >= 0 && o < g->n_ops && map_op_is_layer(&g->ops[o]);
}

as_code fu_plan_init(fu_plan *p, const wl_graph *g, as_status *st)
{
    memset(p, 0, sizeof *p);
    if (!g->order)
        return as_fail(st, AS_EINVAL, "%s: graph not inferred (call wl_graph_infer first)",
                       g->source);
    p->group = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *p->group);
    if (!p->group)
        return as_fail(st, AS_ENOMEM, "%s: out of memory for a plan of %d ops", g->source,
                       g->n_ops);
    p->n_ops = g->n_ops;
    for (int32_t o = 0; o < g->n_ops; o++)
        p->group[o] = -1;
    for (int32_t k = 0; k < g->n_order; k++)
        if (fu_op_in_plan(g, g->order[k]))
            p->group[g->order[k]] = p->n_groups++;
    return AS_OK;
}

void fu_plan_free(fu_plan *p)
{
    if (!p)
        return;
    free(p->group);
    memset(p, 0, sizeof *p);
}

as_code fu_plan_copy(fu_plan *dst, const fu_plan *src, as_status *st)
{
    int32_t *group = as_vec_copy(src->group, src->n_ops, sizeof *group);
    if (!group)
        return as_fail(st, AS_ENOMEM, "out of memory copying a plan of %d ops", src->n_ops);
    dst->group = group;
    dst->n_ops = src->n_ops;
    dst->n_groups = src->n_groups;
    return AS_OK;
}

bool fu_plan_equal(const fu_plan *a, const fu_plan *b)
{
    return a->n_ops == b->n_ops && a->n_groups == b->n_groups &&
           (a->n_ops == 0 || memcmp(a->group, b->group, (size_t)a->n_ops * sizeof *a->group) == 0);
}

/* Renumbering needs an old -> new table; when it cannot be allocated the
 * plan is left as it is (equal partitions may then compare unequal, never
 * the reverse). */
void fu_plan_canonicalize(const wl_graph *g, fu_plan *p)
{
    int32_t max_id = -1;
    for (int32_t o = 0; o < p->n_ops; o++)
        if (p->group[o] > max_id)
            max_id = p->group[o];
    int32_t *renamed = malloc((size_t)(max_id + 2) * sizeof *renamed);
    if (!renamed)
        return;
    for (int32_t i = 0; i <= max_id; i++)
        renamed[i] = -1;
    int32_t n = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t o = g->order[k];
        if (o >= p->n_ops || p->group[o] < 0)
            continue;
        if (!fu_op_in_plan(g, o)) {
            p->group[o] = -1;
            continue;
        }
        if (renamed[p->group[o]] < 0)
            renamed[p->group[o]] = n++;
        p->group[o] = renamed[p->group[o]];
    }
    for (int32_t o = 0; o < p->n_ops; o++) /* ops outside the order are dead */
        if (p->group[o] >= 0 && !fu_op_in_plan(g, o))
            p->group[o] = -1;
    p->n_groups = n;
    free(renamed);
}

/* ------------------------------------------------------------ validity */

/* See "Data edges" at the top. */
int32_t fu_through_views(const wl_graph *g, int32_t t)
{
    for (int hops = 0; t >= 0 && hops < g->n_ops; hops++) {
        int32_t p = g->tensors[t].producer;
        if (p < 0)
            break;
        const wl_op *op = &g->ops[p];
        if (op->dead || op->folded || wl_op_category_of(op) != WL_CAT_VIEW || op->n_inputs < 1)
            break;
        t = op->inputs[0];
    }
    return t;
}

/* The working op behind input tensor t (through views; an epilogue op
 * stands for its fused op's root), or -1. */
static int32_t data_producer(const wl_graph *g, int32_t t)
{
    t = fu_through_views(g, t);
    int32_t p = t >= 0 ? g->tensors[t].producer : -1;
    if (p >= 0 && wl_op_does_work(&g->ops[p]))
        p = wl_fused_root(g, p);
    return p >= 0 && fu_op_in_plan(g, p) ? p : -1;
}

/* Inputs of fused op o: those of o and of its epilogue ops (walk with
 * m = o, then m = g->ops[m].epilogue_next while m >= 0). */
static int32_t fused_inputs(const wl_graph *g, int32_t o)
{
    int32_t n = 0;
    for (int32_t m = o; m >= 0; m = g->ops[m].epilogue_next)
        n += g->ops[m].n_inputs;
    return n;
}

/* The data edges of g between working ops, as predecessor and successor
 * lists in CSR form (op o's are pred[pred_start[o] .. pred_start[o + 1])),
 * and each op's topological position. */
typedef struct dataflow {
    int32_t *pred_start; /* n_ops + 1 */
    int32_t *pred;
    int32_t *succ_start; /* n_ops + 1 */
    int32_t *succ;
    int32_t *position; /* in g->order; -1 for ops outside it */
} dataflow;

/* Free what dataflow_init allocated, also after it failed half way. */
static void dataflow_free(dataflow *d)
{
    free(d->pred_start);
    free(d->pred);
    free(d->succ_start);
    free(d->succ);
    free(d->position);
}

/* Build d for g (false when out of memory).  Edges may repeat (an op
 * reading two outputs of one producer); the checks do not mind. */
static bool dataflow_init(dataflow *d, const wl_graph *g)
{
    size_t n = (size_t)g->n_ops, edges = 0;
    memset(d, 0, sizeof *d);
    for (int32_t o = 0; o < g->n_ops; o++)
        if (fu_op_in_plan(g, o))
            edges += (size_t)fused_inputs(g, o);
    d->pred_start = calloc(n + 1, sizeof *d->pred_start);
    d->succ_start = calloc(n + 2, sizeof *d->succ_start);
    d->pred = malloc((edges + 1) * sizeof *d->pred);
    d->succ = malloc((edges + 1) * sizeof *d->succ);
    d->position = malloc((n + 1) * sizeof *d->position);
    if (!d->pred_start || !d->succ_start || !d->pred || !d->succ || !d->position)
        return false;
    int32_t m = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        d->pred_start[o] = m;
        for (int32_t e = fu_op_in_plan(g, o) ? o : -1; e >= 0; e = g->ops[e].epilogue_next)
            for (int i = 0; i < g->ops[e].n_inputs; i++) {
                int32_t p = data_producer(g, g->ops[e].inputs[i]);
                if (p >= 0 && p != o) { /* inside a fused op is no edge */
                    d->pred[m++] = p;
                    d->succ_start[p + 2]++;
                }
            }
    }
    d->pred_start[g->n_ops] = m;
    for (size_t o = 0; o < n; o++) /* counts at [p + 2] become starts at [p + 1] */
        d->succ_start[o + 2] += d->succ_start[o + 1];
    for (int32_t o = 0; o < g->n_ops; o++)
        for (int32_t k = d->pred_start[o]; k < d->pred_start[o + 1]; k++)
            d->succ[d->succ_start[d->pred[k] + 1]++] = o;
    for (size_t o = 0; o < n; o++)
        d->position[o] = -1;
    for (int32_t k = 0; k < g->n_order; k++)
        d->position[g->order[k]] = k;
    return true;
}

/* Union-find root with path halving. */
static int32_t root_of(int32_t *parent, int32_t x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/* Join the sets of x and y. */
static void unite(int32_t *parent, int32_t x, int32_t y)
{
    parent[root_of(parent, x)] = root_of(parent, y);
}

/* Scratch arrays of the checks, one allocation. */
typedef struct scratch {
    int32_t *parent;      /* per op: union-find over members */
    int32_t *reader;      /* per tensor: a member of the current group that reads it */
    int32_t *reader_mark; /* per tensor: the group `reader` belongs to */
    int32_t *mark;        /* per op: last group whose search reached it */
    int32_t *stack;       /* per op */
    int32_t *members;     /* per op: the members of every group, group by group */
    int32_t *start;       /* per group: where its members begin (n_groups + 1) */
} scratch;

/* Carve s out of one block (false when out of memory; free s->parent,
 * the block, after): every op its own union-find set, no op marked, no
 * tensor read yet. */
static bool scratch_init(scratch *s, const wl_graph *g)
{
    size_t ops = (size_t)g->n_ops + 1, tensors = (size_t)g->n_tensors + 1;
    int32_t *block = malloc((5 * ops + 1 + 2 * tensors) * sizeof *block);
    if (!block)
        return false;
    s->parent = block;
    s->mark = s->parent + ops;
    s->stack = s->mark + ops;
    s->members = s->stack + ops;
    s->start = s->members + ops;
    s->reader = s->start + ops + 1;
    s->reader_mark = s->reader + tensors;
    for (size_t i = 0; i < ops; i++)
        s->parent[i] = (int32_t)i, s->mark[i] = -1;
    for (size_t i = 0; i < tensors; i++)
        s->reader_mark[i] = -1;
    return true;
}

void fu_plan_members(const wl_graph *g, const fu_plan *p, int32_t *start, int32_t *members)
{
    for (int32_t gid = 0; gid <= p->n_groups; gid++)
        start[gid] = 0;
    for (int32_t k = 0; k < g->n_order; k++)
        if (p->group[g->order[k]] >= 0)
            start[p->group[g->order[k]] + 1]++;
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        start[gid + 1] += start[gid];
    for (int32_t k = 0; k < g->n_order; k++)
        if (p->group[g->order[k]] >= 0)
            members[start[p->group[g->order[k]]]++] = g->order[k];
    for (int32_t gid = p->n_groups; gid > 0; gid--) /* starts moved to ends: shift back */
        start[gid] = start[gid - 1];
    start[0] = 0;
}

/* Op o's name for messages, "(unnamed)" when it has none. */
static const char *op_name(const wl_graph *g, int32_t o)
{
    return g->ops[o].name && g->ops[o].name[0] ? g->ops[o].name : "(unnamed)";
}

/* Group gid (members mem[0 .. n)) is connected by data (see the top of
 * the file); otherwise say which member is cut off. */
static bool group_connected(const wl_graph *g, const fu_plan *p, const dataflow *d, int32_t gid,
                            const int32_t *mem, int32_t n, scratch *s, char *reason, size_t size)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t o = mem[i];
        for (int32_t k = d->pred_start[o]; k < d->pred_start[o + 1]; k++)
            if (p->group[d->pred[k]] == gid)
                unite(s->parent, o, d->pred[k]);
        for (int32_t e = o; e >= 0; e = g->ops[e].epilogue_next)
            for (int j = 0; j < g->ops[e].n_inputs; j++) {
                int32_t t = fu_through_views(g, g->ops[e].inputs[j]);
                if (t < 0 || wl_tensor_is_known(
                                 &g->tensors[t]) /* sharing a constant is no data in common */)
                    continue;
                if (s->reader_mark[t] == gid)
                    unite(s->parent, o, s->reader[t]);
                s->reader_mark[t] = gid;
                s->reader[t] = o;
            }
    }
    for (int32_t i = 1; i < n; i++)
        if (root_of(s->parent, mem[i]) != root_of(s->parent, mem[0])) {
            snprintf(reason, size,
                     "group %d is not connected: op %d '%s' shares no data with op %d '%s'", gid,
                     mem[i], op_name(g, mem[i]), mem[0], op_name(g, mem[0]));
            return false;
        }
    return true;
}

/* Group gid is convex: a search from the non-member successors of its
 * members, through non-members, never reaches a member.  Ops after the
 * group's last member cannot lead back into it, so the search stops
 * there. */
static bool group_convex(const wl_graph *g, const fu_plan *p, const dataflow *d, int32_t gid,
                         const int32_t *mem, int32_t n, scratch *s, char *reason, size_t size)
{
    int32_t last = d->position[mem[n - 1]], top = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t from = mem[i];
        for (int32_t k = d->succ_start[from]; k < d->succ_start[from + 1]; k++) {
            int32_t o = d->succ[k];
            if (p->group[o] == gid || s->mark[o] == gid || d->position[o] > last)
                continue;
            s->mark[o] = gid;
            s->stack[top++] = o;
            while (top > 0) {
                int32_t x = s->stack[--top];
                for (int32_t j = d->succ_start[x]; j < d->succ_start[x + 1]; j++) {
                    int32_t y = d->succ[j];
                    if (p->group[y] == gid) {
                        snprintf(reason, size,
                                 "group %d is not convex: a path from op %d '%s' leaves it "
                                 "through op %d '%s' and re-enters at op %d '%s'",
                                 gid, from, op_name(g, from), o, op_name(g, o), y, op_name(g, y));
                        return false;
                    }
                    if (s->mark[y] != gid && d->position[y] <= last) {
                        s->mark[y] = gid;
                        s->stack[top++] = y;
                    }
                }
            }
        }
    }
    return true;
}

/* The groups can run one after another: Kahn's algorithm on the graph of
 * groups completes.  Uses s->parent as in-degrees and s->stack. */
static bool groups_acyclic(const wl_graph *g, const fu_plan *p, const dataflow *d, scratch *s,
                           char *reason, size_t size)
{
    int32_t *indegree = s->parent, top = 0, done = 0;
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        indegree[gid] = 0;
    for (int32_t o = 0; o < g->n_ops; o++)
        for (int32_t k = d->pred_start[o]; k < d->pred_start[o + 1]; k++)
            if (p->group[o] != p->group[d->pred[k]])
                indegree[p->group[o]]++;
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        if (indegree[gid] == 0)
            s->stack[top++] = gid;
    while (top > 0) {
        int32_t gid = s->stack[--top];
        done++;
        for (int32_t i = s->start[gid]; i < s->start[gid + 1]; i++) {
            int32_t o = s->members[i];
            for (int32_t k = d->succ_start[o]; k < d->succ_start[o + 1]; k++) {
                int32_t h = p->group[d->succ[k]];
                if (h != gid && --indegree[h] == 0)
                    s->stack[top++] = h;
            }
        }
    }
    if (done == p->n_groups)
        return true;
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        if (indegree[gid] > 0) {
            snprintf(reason, size,
                     "group %d depends on a group that depends on it "
                     "(the groups cannot run one after another)",
                     gid);
            break;
        }
    return false;
}

/* Every working op has a group in range, the others none, and no group is
 * empty.  Uses s->mark per group as a "has members" flag and leaves it
 * at -1 again. */
static bool plan_shape_ok(const wl_graph *g, const fu_plan *p, scratch *s, char *reason,
                          size_t size)
{
    if (p->n_ops != g->n_ops || !p->group || p->n_groups < 0) {
        snprintf(reason, size, "plan of %d ops for a graph of %d ops", p->n_ops, g->n_ops);
        return false;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        int32_t gid = p->group[o];
        bool working = fu_op_in_plan(g, o);
        if (working && (gid < 0 || gid >= p->n_groups)) {
            snprintf(reason, size, "op %d '%s' (%s) has group %d, outside 0..%d", o, op_name(g, o),
                     g->ops[o].op_type, gid, p->n_groups - 1);
            return false;
        }
        if (!working && gid != -1) {
            snprintf(reason, size, "op %d '%s' (%s) does no work but has group %d", o,
                     op_name(g, o), g->ops[o].op_type, gid);
            return false;
        }
        if (working)
            s->mark[gid] = 0;
    }
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        if (s->mark[gid] != 0) {
            snprintf(reason, size, "group %d has no members", gid);
            return false;
        }
    for (int32_t gid = 0; gid < p->n_groups; gid++)
        s->mark[gid] = -1;
    return true;
}

bool fu_plan_valid(const wl_graph *g, const fu_plan *p, char *reason, size_t reason_size)
{
    char spare[8];
    if (!reason || reason_size == 0)
        reason = spare, reason_size = sizeof spare;
    reason[0] = '\0';
    if (!g->order) {
        snprintf(reason, reason_size, "%s: graph not inferred", g->source);
        return false;
    }
    dataflow d;
    scratch s = {0};
    bool ok = dataflow_init(&d, g) && scratch_init(&s, g);
    if (!ok)
        snprintf(reason, reason_size, "out of memory checking a plan");
    if (ok && p->n_groups > g->n_ops) {
        snprintf(reason, reason_size, "plan has %d groups for %d ops", p->n_groups, g->n_ops);
        ok = false;
    }
    ok = ok && plan_shape_ok(g, p, &s, reason, reason_size);
    if (ok)
        fu_plan_members(g, p, s.start, s.members);
    for (int32_t gid = 0; ok && gid < p->n_groups; gid++) {
        const int32_t *mem = s.members + s.start[gid];
        int32_t n = s.start[gid + 1] - s.start[gid];
        ok = group_connected(g, p, &d, gid, mem, n, &s, reason, reason_size) &&
             group_convex(g, p, &d, gid, mem, n, &s, reason, reason_size);
    }
    ok = ok && groups_acyclic(g, p, &d, &s, reason, reason_size);
    dataflow_free(&d);
    free(s.parent);
    return ok;
}
