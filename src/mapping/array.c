/*
 * array.c -- what happens inside the compute units, for map_evaluate: the
 * words each compute instance takes from the level above it (or gives to
 * it, for outputs), and the energy of the data movement inside systolic
 * arrays.  docs/systolic-formulas.md, section 9, states the model.
 *
 * Model assumptions:
 *  - a MAC unit or a vector unit takes one word of each data space per
 *    MAC from the level above (Timeloop's compute: no operand register);
 *    a vector unit's lanes reach the level above as spatial children, so
 *    a word broadcast to its lanes is one read by the multicast analysis
 *    of the nest, like any other multicast (nothing is added here);
 *  - a systolic array runs the GEMM of its share of the problem fold by
 *    fold, exactly as its cycles are counted (compute_cycles in eval.c,
 *    SCALE-Sim's fold model), groups one after another; the level above
 *    it sees only the words crossing the array's edge
 *    (map_systolic_traffic_of), and everything else moves inside: PE
 *    registers and PE-to-PE hops, at the energies of arch_compute;
 *  - arrays that share data receive it by multicast (one read of the
 *    level above for all of them), as the nest analysis counts it for any
 *    spatial fanout: they run the same GEMM shape in lockstep.
 */
#include "eval_private.h"

/* Every spatial factor of dimension d, all levels. */
static int64_t spread_of(const map_mapping *m, int d)
{
    int64_t spread = 1;
    for (int l = 0; l < m->n_levels; l++)
        spread *= m->level[l].spatial[d];
    return spread;
}

void array_gemm_of(const wl_problem *p, const map_mapping *m, array_gemm *g)
{
    int64_t per_array[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        per_array[d] = (p->bound[d] < 1 ? 1 : p->bound[d]) / spread_of(m, d);
    g->m = per_array[WL_DIM_N] * per_array[WL_DIM_P] * per_array[WL_DIM_Q];
    g->n = per_array[WL_DIM_M];
    g->k = per_array[WL_DIM_C] * per_array[WL_DIM_R] * per_array[WL_DIM_S];
    g->groups = per_array[WL_DIM_G];
}

/* t scaled by the groups run one after another; false on overflow. */
static bool times_groups(map_systolic_traffic *t, int64_t groups)
{
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (!as_mul_i64(t->edge_words[ds], groups, &t->edge_words[ds]) ||
            !as_mul_i64(t->hops[ds], groups, &t->hops[ds]) ||
            !as_mul_i64(t->reg_reads[ds], groups, &t->reg_reads[ds]) ||
            !as_mul_i64(t->reg_writes[ds], groups, &t->reg_writes[ds]))
            return false;
    return true;
}

bool array_flow_of(const arch_spec *a, const wl_problem *p, const map_mapping *m, const nest *n,
                   array_flow *f)
{
    const arch_compute *c = &a->compute;
    f->systolic = c->kind == ARCH_COMPUTE_SYSTOLIC;
    if (!f->systolic) {
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            f->compute_words[ds] = n->temporal_iterations;
        return true;
    }
    array_gemm g;
    array_gemm_of(p, m, &g);
    if (!map_systolic_traffic_of(g.m, g.n, g.k, c->rows, c->cols, c->dataflow, &f->inside) ||
        !times_groups(&f->inside, g.groups))
        return false;
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        f->compute_words[ds] = f->inside.edge_words[ds];
    return true;
}

/*
 * Energy of the movement inside the arrays: per data space, register reads
 * and writes at the PE register's energy and hops at the hop energy
 * (partial sums at the accumulator's width), per array, times the arrays
 * in use.  It is the network below level 0, so it lands in
 * level[0].net[ds].energy_pJ (which map_evaluate sums into energy_pJ);
 * array_register_pJ and array_hop_pJ give its split.
 */
void array_energy(const arch_spec *a, const array_flow *f, int64_t arrays, map_eval *out)
{
    out->array_register_pJ = out->array_hop_pJ = 0;
    if (!f->systolic || out->n_levels < 1)
        return;
    const arch_compute *c = &a->compute;
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        bool psum = ds == WL_DS_OUTPUTS;
        double reg_pJ = (double)(f->inside.reg_reads[ds] + f->inside.reg_writes[ds]) *
                        (psum ? c->pe_acc_reg_pJ : c->pe_reg_pJ) * (double)arrays;
        double hop_pJ =
            (double)f->inside.hops[ds] * (psum ? c->pe_acc_hop_pJ : c->pe_hop_pJ) * (double)arrays;
        out->level[0].net[ds].energy_pJ += reg_pJ + hop_pJ;
        out->array_register_pJ += reg_pJ;
        out->array_hop_pJ += hop_pJ;
    }
}
