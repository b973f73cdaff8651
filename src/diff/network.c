/*
 * network.c -- FADiff's relaxed network cost: every layer's mapping and
 * the fusion of adjacent layers together, as tape values (diff.h, the
 * section "relaxed network cost with fusion").
 *
 * Fusion variables.  The working ops w_0 .. w_{n-1} (fu_working_ops,
 * topological order) are cut into groups of consecutive ops.  Pair
 * (w_i, w_{i+1}) has a variable phi -- the probability that the two run
 * in one group -- when some candidate run holds both; every other pair is
 * never fused (phi = 0).  A candidate run is w_i .. w_j of at most
 * max_group_ops ops that is a valid group (fu_plan_valid: connected by
 * data and convex -- a run consecutive in topological order is convex
 * unless a view path leaves and re-enters it) and whose tile, chosen
 * without mapping (fu_group_pick_tile: tiling.c's estimate), fits on
 * chip; every single op is a candidate.  With the pairs fused
 * independently, run i..j is exactly a group with probability
 *   P = (1 - phi_{i-1}) x prod_{k=i}^{j-1} phi_k x (1 - phi_j)
 * (absent neighbours' factors are 1), and the expected energy and cycles
 * are sums of P x the run's cost over the candidates.  At phi in {0, 1}
 * whose groups are all candidates this is the plan's cost exactly; the
 * mass on groups that are not candidates is the infeasibility
 *   sum over ops of (1 - sum of P over the candidate runs holding it),
 * zero exactly when every group drawn is a candidate.
 *
 * Run costs.  A run's cost is the fusion evaluator's (group.c) with the
 * members' mappings priced by the caller's relaxed mapping cost:
 *  - a compute op alone: network.c's layer (map_cost_compute_layer):
 *    MAC, array network and on-chip level energies; the DRAM level's
 *    words per data space at the tensor's precision, bytes rounded up
 *    (mapped_dram_traffic) -- or resident reads for resident weights
 *    (map_resident_read) -- plus the constant traffic outside the
 *    mapping; its epilogue (map_layer_fixed_costs); cycles the largest of
 *    compute, on-chip levels, resident reads and DRAM time;
 *  - any other op alone: constant (the evaluator's cost);
 *  - a fused run at its picked tile: fu_group_terms' formula (fusion.h),
 *    its mapping-free terms computed once by the evaluator.
 * Every constant comes from the fusion and mapping code at init; only the
 * composition with the mappings' tape values is written here.
 */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fusion/fusion.h"

/* A candidate run: working ops w[first .. first + n). */
typedef struct net_run {
    int32_t first, n;
    fu_tile tile;
    fu_halo_mode halo;
    /* n == 1, compute: its problem's entry and its fixed costs */
    int32_t entry;
    map_layer_fixed fixed;
    /* n == 1, other ops: its whole cost */
    double const_energy_pJ;
    int64_t const_cycles;
    /* n >= 2 */
    fu_group_terms terms;
    int32_t *member_entry; /* per member of terms: its problem's entry, -1 for vector members */
} net_run;

struct df_net {
    fu_evaluator *e;
    const wl_graph *g;
    const arch_spec *a;
    const map_residency *res;
    int max_group_ops;
    int32_t n_work;
    int32_t *work;        /* working ops, topological order */
    int32_t *var_of_pair; /* n_work - 1: the variable of pair (w_i, w_i+1), -1: never fused */
    int32_t n_vars;
    int32_t *pair_of_var;
    int32_t n_runs;
    net_run *runs; /* by first op, then length */
    int32_t n_entries, max_entries;
    df_net_problem *entries;
    int32_t max_members; /* of the largest run */
    /* Room for one evaluation of the relaxed cost, allocated at init: */
    df_cost *costs;                          /* per entry: the last evaluation's */
    df_var *member_cycles, *epilogue_cycles; /* per member of the largest run */
    df_var *covered;                         /* per working op */
};

/* ---------------------------------------------------------------- init */

/* The entry of (op, p), added when new; -1 when out of memory. */
static int32_t entry_of(df_net *net, int32_t op, const wl_problem *p)
{
    int32_t k = df_net_find_problem(net, op, p);
    if (k >= 0)
        return k;
    if (net->n_entries == net->max_entries) {
        int32_t room = net->max_entries ? 2 * net->max_entries : 64;
        df_net_problem *more = realloc(net->entries, (size_t)room * sizeof *more);
        if (!more)
            return -1;
        net->entries = more;
        net->max_entries = room;
    }
    net->entries[net->n_entries] = (df_net_problem){.op = op, .problem = *p};
    return net->n_entries++;
}

/* Whether w[first .. first + n) may form one group (fu_plan_valid), with
 * plan scratch p (every working op alone on entry and on return). */
static bool run_valid(const df_net *net, fu_plan *p, int32_t first, int32_t n)
{
    for (int32_t i = 1; i < n; i++)
        p->group[net->work[first + i]] = p->group[net->work[first]];
    fu_plan_canonicalize(net->g, p);
    char reason[8];
    bool valid = fu_plan_valid(net->g, p, reason, sizeof reason);
    for (int32_t i = 0; i < net->n_work; i++)
        p->group[net->work[i]] = i;
    p->n_groups = net->n_work;
    return valid;
}

/* Run r of a single op: its whole problem's entry and fixed costs, or
 * its constant cost. */
static as_code init_single(df_net *net, net_run *r, as_status *st)
{
    int32_t op = net->work[r->first];
    r->entry = -1;
    if (!map_op_is_compute(&net->g->ops[op])) {
        fu_group_cost c;
        as_code code = fu_group_evaluate(net->e, &op, 1, &c, st);
        if (code != AS_OK)
            return code;
        r->tile = c.tile;
        r->const_energy_pJ = c.energy_pJ;
        r->const_cycles = c.cycles;
        return AS_OK;
    }
    wl_problem own;
    as_code code = wl_op_problem(net->g, op, &own, st);
    if (code != AS_OK)
        return code;
    bool fits;
    code = fu_group_pick_tile(net->e, &op, 1, &r->tile, &r->halo, &fits, st);
    if (code != AS_OK)
        return code;
    map_layer_fixed_costs(net->g, net->a, net->res, op, &own, &r->fixed);
    if ((r->entry = entry_of(net, op, &own)) < 0)
        return as_fail(st, AS_ENOMEM, "out of memory for FADiff's problems");
    return AS_OK;
}

/* Run r of two ops or more at its picked tile: its terms and its
 * members' entries. */
static as_code init_fused(df_net *net, net_run *r, as_status *st)
{
    as_code code =
        fu_group_tile_terms(net->e, net->work + r->first, r->n, r->tile, r->halo, &r->terms, st);
    if (code != AS_OK)
        return code;
    r->member_entry = malloc((size_t)r->terms.n * sizeof *r->member_entry);
    if (!r->member_entry)
        return as_fail(st, AS_ENOMEM, "out of memory for FADiff's runs");
    for (int32_t i = 0; i < r->terms.n; i++) {
        const fu_member_terms *m = &r->terms.m[i];
        r->member_entry[i] = m->compute ? entry_of(net, m->op, &m->problem) : -1;
        if (m->compute && r->member_entry[i] < 0)
            return as_fail(st, AS_ENOMEM, "out of memory for FADiff's problems");
    }
    return AS_OK;
}

/* Every candidate run (see the top) into net->runs; the pairs they hold
 * get variables. */
static as_code find_runs(df_net *net, as_status *st)
{
    int32_t n = net->n_work, max = net->max_group_ops;
    fu_plan p;
    as_code code = fu_plan_init(&p, net->g, st);
    if (code != AS_OK)
        return code;
    for (int32_t i = 0; i < n; i++)
        p.group[net->work[i]] = i;
    p.n_groups = n;
    net->runs = calloc((size_t)n * (size_t)max, sizeof *net->runs);
    if (!net->runs)
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's runs");
    for (int32_t i = 0; code == AS_OK && i < n; i++) {
        for (int32_t len = 1; code == AS_OK && len <= max && i + len <= n; len++) {
            net_run *r = &net->runs[net->n_runs];
            *r = (net_run){.first = i, .n = len, .entry = -1};
            if (len == 1) {
                code = init_single(net, r, st);
                net->n_runs += code == AS_OK;
                continue;
            }
            if (!run_valid(net, &p, i, len))
                continue; /* longer runs from i may still be valid (a shared input) */
            bool fits;
            code = fu_group_pick_tile(net->e, net->work + i, len, &r->tile, &r->halo, &fits, st);
            if (code != AS_OK || !fits)
                continue;
            code = init_fused(net, r, st);
            net->n_runs++; /* its arrays are freed with it, even on failure */
            if (r->terms.n > net->max_members)
                net->max_members = r->terms.n;
            for (int32_t k = i; code == AS_OK && k < i + len - 1; k++)
                net->var_of_pair[k] = 0;
        }
    }
    fu_plan_free(&p);
    return code;
}

/* The room one evaluation of the relaxed cost needs (so that it
 * allocates nothing). */
static as_code alloc_workspace(df_net *net, as_status *st)
{
    size_t members = (size_t)(net->max_members > 0 ? net->max_members : 1);
    size_t entries = (size_t)(net->n_entries > 0 ? net->n_entries : 1);
    size_t ops = (size_t)(net->n_work > 0 ? net->n_work : 1);
    net->costs = malloc(entries * sizeof *net->costs);
    net->member_cycles = malloc(members * sizeof *net->member_cycles);
    net->epilogue_cycles = malloc(members * sizeof *net->epilogue_cycles);
    net->covered = malloc(ops * sizeof *net->covered);
    if (net->costs && net->member_cycles && net->epilogue_cycles && net->covered)
        return AS_OK;
    return as_fail(st, AS_ENOMEM, "out of memory for a FADiff network's workspace");
}

as_code df_net_init(df_net **out, fu_evaluator *e, int max_group_ops, as_status *st)
{
    *out = NULL;
    df_net *net = calloc(1, sizeof *net);
    if (!net)
        return as_fail(st, AS_ENOMEM, "out of memory for FADiff's network");
    net->e = e;
    net->g = fu_evaluator_graph(e);
    net->a = fu_evaluator_arch(e);
    net->res = fu_evaluator_residency(e);
    net->max_group_ops = max_group_ops >= 1 ? max_group_ops : 1;
    int32_t room = net->g->n_ops > 1 ? net->g->n_ops : 2;
    net->work = malloc((size_t)room * sizeof *net->work);
    net->var_of_pair = malloc((size_t)room * sizeof *net->var_of_pair);
    net->pair_of_var = malloc((size_t)room * sizeof *net->pair_of_var);
    as_code code = AS_OK;
    if (!net->work || !net->var_of_pair || !net->pair_of_var)
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's network");
    if (code == AS_OK) {
        net->n_work = fu_working_ops(net->g, net->work);
        for (int32_t k = 0; k < room; k++)
            net->var_of_pair[k] = -1;
        code = find_runs(net, st);
    }
    for (int32_t k = 0; code == AS_OK && k + 1 < net->n_work; k++)
        if (net->var_of_pair[k] == 0) {
            net->var_of_pair[k] = net->n_vars;
            net->pair_of_var[net->n_vars++] = k;
        }
    if (code == AS_OK)
        code = alloc_workspace(net, st);
    if (code != AS_OK) {
        df_net_free(net);
        return code;
    }
    *out = net;
    return AS_OK;
}

void df_net_free(df_net *net)
{
    if (!net)
        return;
    for (int32_t i = 0; i < net->n_runs; i++) {
        fu_group_terms_free(&net->runs[i].terms);
        free(net->runs[i].member_entry);
    }
    free(net->runs);
    free(net->work);
    free(net->var_of_pair);
    free(net->pair_of_var);
    free(net->entries);
    free(net->costs);
    free(net->member_cycles);
    free(net->epilogue_cycles);
    free(net->covered);
    free(net);
}

const df_cost *df_net_pair_cost(const df_net *net, int32_t k)
{
    return &net->costs[k];
}

/* ------------------------------------------------------------- queries */

int32_t df_net_n_vars(const df_net *net)
{
    return net->n_vars;
}

void df_net_var_ops(const df_net *net, int32_t v, int32_t *op_before, int32_t *op_after)
{
    int32_t k = net->pair_of_var[v];
    *op_before = net->work[k];
    *op_after = net->work[k + 1];
}

int32_t df_net_n_problems(const df_net *net)
{
    return net->n_entries;
}

const df_net_problem *df_net_problem_at(const df_net *net, int32_t k)
{
    return &net->entries[k];
}

int32_t df_net_find_problem(const df_net *net, int32_t op, const wl_problem *p)
{
    for (int32_t k = 0; k < net->n_entries; k++) {
        const wl_problem *q = &net->entries[k].problem;
        if (net->entries[k].op == op && q->kind == p->kind &&
            memcmp(q->bound, p->bound, sizeof q->bound) == 0)
            return k;
    }
    return -1;
}

/* ------------------------------------------------------ relaxed costs */

/* ceil(x / c) of a positive constant c, as the exact code divides. */
static df_var ceil_div(df_tape *t, df_var x, double c)
{
    return df_ceil(t, df_div(t, x, df_const(t, c)));
}

/* DRAM cycles of `bytes` (map_dram_cycles on the tape). */
static df_var dram_cycles(df_tape *t, const arch_spec *a, df_var bytes)
{
    double bytes_per_cycle = a->dram.bandwidth_GBps * 1e9 * a->cycle_seconds;
    return bytes_per_cycle > 0 ? ceil_div(t, bytes, bytes_per_cycle) : df_const(t, 0);
}

/* Energy and cycles of reading `words` resident weight words
 * (map_resident_read on the tape). */
static void resident_read(df_tape *t, const arch_spec *a, const map_residency *res, df_var words,
                          df_var *energy_pJ, df_var *cycles)
{
    *energy_pJ = *cycles = df_const(t, 0);
    if (!res || !res->resident || res->level < 0)
        return;
    const arch_level *L = &a->level[res->level];
    double block = L->block_size > 0 ? L->block_size : 1;
    *energy_pJ = df_mul_c(t, ceil_div(t, words, block), L->energy.read_pJ);
    double per_instance = L->read_bandwidth > 0 ? L->read_bandwidth : L->shared_bandwidth;
    double instances = (double)(L->instances > 0 ? L->instances : 1);
    if (per_instance > 0)
        *cycles = ceil_div(t, words, per_instance * instances);
}

/* A compute op alone (network.c's cost_mapped_layer, then its epilogue):
 * energy and cycles from its mapping's relaxed cost c on its problem p. */
static void single_cost(const df_net *net, df_tape *t, const net_run *r, const wl_problem *p,
                        const df_cost *c, df_var *energy, df_var *cycles)
{
    const arch_spec *a = net->a;
    int b = a->n_levels - 1;
    bool dram_backed = a->level[b].cls == ARCH_CLASS_DRAM;
    int onchip_levels = dram_backed ? b : a->n_levels;
    df_var e = df_add(t, c->mac_energy_pJ, c->array_energy_pJ);
    df_var cyc = c->compute_cycles;
    for (int l = 0; l < onchip_levels; l++) {
        e = df_add(t, e, c->level_energy_pJ[l]);
        cyc = df_max(t, cyc, c->level_cycles[l]);
    }
    df_var bytes = df_const(t, (double)r->fixed.outside_dram_bytes);
    df_var resident_words = df_const(t, (double)r->fixed.outside_resident_words);
    if (dram_backed) { /* mapped_dram_traffic */
        const arch_level *L = &a->level[b];
        int word_bits = L->word_bits > 0 ? L->word_bits : 8;
        e = df_add(t, e, df_mul_c(t, c->cycles, L->energy.leak_pJ));
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            int bits = p->ds[ds].bits > 0 ? p->ds[ds].bits : word_bits;
            df_var words =
                df_add(t, df_add(t, c->reads[b][ds], c->fills[b][ds]), c->updates[b][ds]);
            if (r->fixed.resident_ds[ds]) {
                resident_words = df_add(t, resident_words, words);
                continue;
            }
            bytes = df_add(t, bytes, ceil_div(t, df_mul_c(t, words, bits), 8));
            e = df_add(t, e,
                       df_mul_c(t, df_mul_c(t, c->ds_energy_pJ[b][ds], bits), 1.0 / word_bits));
        }
    }
    e = df_add_c(t, e, map_dram_pJ(a, r->fixed.outside_dram_bytes));
    df_var read_pJ, read_cycles;
    resident_read(t, a, net->res, resident_words, &read_pJ, &read_cycles);
    e = df_add(t, e, read_pJ);
    cyc = df_max(t, cyc, read_cycles);
    /* The epilogue's bytes add to the layer's DRAM time (map_cost_epilogue). */
    bytes = df_add_c(t, bytes, (double)r->fixed.epilogue_dram_bytes);
    e = df_add_c(t, e, r->fixed.epilogue_energy_pJ);
    cyc = df_max(t, cyc, df_const(t, (double)r->fixed.epilogue_cycles));
    *energy = e;
    *cycles = df_max(t, cyc, dram_cycles(t, a, bytes));
}

/* A fused run at its tile (fu_group_terms' formula): energy and cycles
 * from its compute members' relaxed costs. */
static void fused_cost(const df_net *net, df_tape *t, const net_run *r, df_var *energy,
                       df_var *cycles)
{
    const fu_group_terms *k = &r->terms;
    const arch_spec *a = net->a;
    int b = a->n_levels - 1;
    int dram = a->level[b].cls == ARCH_CLASS_DRAM ? b : -1;
    df_var e = df_const(t, k->resident_energy_pJ + k->dram_energy_pJ);
    df_var zero = df_const(t, 0);
    /* Per member its cycles; per root the sum of its epilogue members'. */
    df_var *own = net->member_cycles, *epilogue = net->epilogue_cycles;
    for (int32_t i = 0; i < k->n; i++) {
        const fu_member_terms *m = &k->m[i];
        epilogue[i] = zero;
        if (!m->compute) {
            e = df_add_c(t, e, m->vector_energy_pJ);
            own[i] = df_const(t, m->vector_cycles);
            continue;
        }
        const df_cost *c = &net->costs[r->member_entry[i]];
        df_var tile_e = c->energy_pJ, tile_c = c->compute_cycles;
        for (int l = 0; l < a->n_levels; l++) {
            if (l == dram)
                tile_e = df_sub(t, tile_e, c->level_energy_pJ[l]);
            else
                tile_c = df_max(t, tile_c, c->level_cycles[l]);
        }
        e = df_add(t, e, df_div(t, df_mul_c(t, tile_e, m->work), df_const(t, m->tile_macs)));
        own[i] = df_ceil(t, df_div(t, df_mul_c(t, tile_c, m->work), df_const(t, m->tile_macs)));
    }
    for (int32_t i = 0; i < k->n; i++)
        if (k->m[i].root != i)
            epilogue[k->m[i].root] = df_add(t, epilogue[k->m[i].root], own[i]);
    df_var compute = zero;
    for (int32_t i = 0; i < k->n; i++)
        if (k->m[i].root == i)
            compute = df_add(t, compute, df_max(t, own[i], epilogue[i]));
    *energy = e;
    *cycles = df_max(t, df_max(t, compute, df_const(t, (double)k->dram_cycles)),
                     df_const(t, (double)k->resident_cycles));
}

/* The probability that run r is exactly a group under phi (see the top):
 * its pairs fused, its neighbours' not. */
static df_var run_probability(const df_net *net, df_tape *t, const net_run *r, const df_var *phi,
                              df_var one)
{
    df_var p = one;
    int32_t before = r->first - 1, last = r->first + r->n - 1;
    if (before >= 0 && net->var_of_pair[before] >= 0)
        p = df_sub(t, one, phi[net->var_of_pair[before]]);
    for (int32_t k = r->first; k < last; k++)
        p = df_mul(t, p, phi[net->var_of_pair[k]]);
    if (last + 1 < net->n_work && net->var_of_pair[last] >= 0)
        p = df_mul(t, p, df_sub(t, one, phi[net->var_of_pair[last]]));
    return p;
}

void df_net_relaxed_cost(df_net *net, df_tape *t, const df_var *phi, df_net_mapping_cost cost,
                         void *user, df_net_cost *out)
{
    memset(out, 0, sizeof *out);
    out->supported = true;
    for (int32_t k = 0; k < net->n_entries; k++) {
        const df_net_problem *en = &net->entries[k];
        df_cost *c = &net->costs[k];
        if (!cost(user, t, k, en->op, &en->problem, c) || !c->supported) {
            out->supported = false;
            snprintf(out->why, sizeof out->why, "op %d '%.40s': %.100s", en->op,
                     net->g->ops[en->op].name, c->supported ? "no mapping cost" : c->why);
            return;
        }
    }
    df_var one = df_const(t, 1), energy = df_const(t, 0), cycles = energy;
    /* covered[i]: the probability that op w_i's group is a candidate */
    df_var *covered = net->covered;
    for (int32_t i = 0; i < net->n_work; i++)
        covered[i] = energy;
    for (int32_t i = 0; i < net->n_runs; i++) {
        const net_run *r = &net->runs[i];
        df_var e, c;
        if (r->n >= 2)
            fused_cost(net, t, r, &e, &c);
        else if (r->entry >= 0)
            single_cost(net, t, r, &net->entries[r->entry].problem, &net->costs[r->entry], &e, &c);
        else {
            e = df_const(t, r->const_energy_pJ);
            c = df_const(t, (double)r->const_cycles);
        }
        df_var p = run_probability(net, t, r, phi, one);
        energy = df_add(t, energy, df_mul(t, p, e));
        cycles = df_add(t, cycles, df_mul(t, p, c));
        for (int32_t k = r->first; k < r->first + r->n; k++)
            covered[k] = df_add(t, covered[k], p);
    }
    df_var infeasible = df_const(t, 0);
    for (int32_t i = 0; i < net->n_work; i++)
        infeasible = df_add(t, infeasible, df_sub(t, one, covered[i]));
    out->energy_pJ = energy;
    out->cycles = cycles;
    out->infeasible = infeasible;
}

/* -------------------------------------------------------- exact plans */

/* The candidate run w[first .. first + n), or NULL. */
static const net_run *find_run(const df_net *net, int32_t first, int32_t n)
{
    for (int32_t i = 0; i < net->n_runs; i++)
        if (net->runs[i].first == first && net->runs[i].n == n)
            return &net->runs[i];
    return NULL;
}

void df_net_round(const df_net *net, const double *phi, bool *fused)
{
    int32_t start = 0; /* first op of the current group */
    for (int32_t k = 0; k + 1 < net->n_work; k++) {
        int32_t v = net->var_of_pair[k];
        if (v >= 0)
            fused[v] = phi[v] >= 0.5 && find_run(net, start, k + 2 - start);
        if (v < 0 || !fused[v])
            start = k + 1;
    }
}

/* The runs of a 0/1 assignment in order: run_of[g] for group g, *n_groups
 * of them; false when one is not a candidate. */
static bool runs_of(const df_net *net, const bool *fused, const net_run **run_of, int32_t *n_groups)
{
    *n_groups = 0;
    bool all = true;
    for (int32_t i = 0; i < net->n_work;) {
        int32_t j = i;
        while (j + 1 < net->n_work && net->var_of_pair[j] >= 0 && fused[net->var_of_pair[j]])
            j++;
        const net_run *r = find_run(net, i, j - i + 1);
        all &= r != NULL;
        run_of[(*n_groups)++] = r;
        i = j + 1;
    }
    return all;
}

as_code df_net_plan(const df_net *net, const bool *fused, fu_plan *out, as_status *st)
{
    as_code code = fu_plan_init(out, net->g, st);
    if (code != AS_OK)
        return code;
    int32_t gid = -1;
    for (int32_t i = 0; i < net->n_work; i++) {
        bool joins = i > 0 && net->var_of_pair[i - 1] >= 0 && fused[net->var_of_pair[i - 1]];
        gid += !joins;
        out->group[net->work[i]] = gid;
    }
    out->n_groups = gid + 1;
    fu_plan_canonicalize(net->g, out);
    return AS_OK;
}

as_code df_net_exact_cost(df_net *net, const bool *fused, fu_plan_cost *out, as_status *st)
{
    fu_evaluator *e = net->e;
    memset(out, 0, sizeof *out);
    out->weights = *net->res;
    const net_run **run_of = malloc((size_t)(net->n_work > 0 ? net->n_work : 1) * sizeof *run_of);
    if (!run_of)
        return as_fail(st, AS_ENOMEM, "out of memory for a plan's groups");
    int32_t n_groups;
    if (!runs_of(net, fused, run_of, &n_groups)) {
        snprintf(out->reason, sizeof out->reason,
                 "a group is not a candidate run (invalid, too long or not fitting)");
        free(run_of);
        return AS_OK;
    }
    out->groups = calloc((size_t)(n_groups > 0 ? n_groups : 1), sizeof *out->groups);
    if (!out->groups) {
        free(run_of);
        return as_fail(st, AS_ENOMEM, "out of memory for a plan's groups");
    }
    out->n_groups = n_groups;
    out->valid = true;
    as_code code = AS_OK;
    for (int32_t gid = 0; code == AS_OK && gid < n_groups; gid++) {
        const net_run *r = run_of[gid];
        fu_group_cost *c = &out->groups[gid];
        const int32_t *ops = net->work + r->first;
        code = r->n == 1 ? fu_group_evaluate(e, ops, 1, c, st)
                         : fu_group_evaluate_tile(e, ops, r->n, r->tile, r->halo, c, st);
        if (code == AS_OK)
            fu_plan_cost_add(out, gid, c);
    }
    free(run_of);
    if (code != AS_OK) {
        fu_plan_cost_free(out);
        return code;
    }
    fu_plan_cost_finish(out, net->a);
    return AS_OK;
}
