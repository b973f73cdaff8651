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
 *    SCALE-Sim's fold model), its groups m->group_pack at a time side by
 *    side (the block-diagonal zeros of a packed pass are loaded and moved
 *    like any weight), passes one after another; the level above
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

/* The sides of SCALE-Sim's GEMM, M x K times K x N. */
typedef enum gemm_side { SIDE_M, SIDE_N, SIDE_K } gemm_side;

/* Whether data space ds has dimension d in one of its ranks. */
static bool indexes(const wl_dataspace *ds, int d)
{
    for (int r = 0; r < ds->n_ranks; r++)
        for (int t = 0; t < ds->ranks[r].n_terms; t++)
            if ((int)ds->ranks[r].terms[t].dim == d && ds->ranks[r].terms[t].coef != 0)
                return true;
    return false;
}

/*
 * The GEMM side of dimension d (not G): a conv's N, P, Q are the output
 * rows M, its M the columns N, its C, R, S the reduction K.  A matrix
 * product takes its sides from the data spaces each dimension indexes --
 * Inputs and Outputs: M; Weights and Outputs: N; Weights and Inputs: K --
 * so that a product whose stored operand comes first (W x X, the NCHW
 * im2col GEMM, where the weights span P and C) holds its weights in the
 * array like any other; a dimension outside those patterns keeps its
 * conv side.
 */
static gemm_side side_of(const wl_problem *p, int d)
{
    gemm_side by_name = d == WL_DIM_M                                     ? SIDE_N
                        : d == WL_DIM_C || d == WL_DIM_R || d == WL_DIM_S ? SIDE_K
                                                                          : SIDE_M;
    if (p->kind != WL_PROBLEM_MATMUL && p->kind != WL_PROBLEM_BATCHED_MATMUL)
        return by_name;
    bool w = indexes(&p->ds[WL_DS_WEIGHTS], d), i = indexes(&p->ds[WL_DS_INPUTS], d);
    bool o = indexes(&p->ds[WL_DS_OUTPUTS], d);
    return i && o && !w ? SIDE_M : w && o && !i ? SIDE_N : w && i && !o ? SIDE_K : by_name;
}

bool array_gemm_of(const wl_problem *p, const map_mapping *m, int64_t pack, array_gemm *g)
{
    int64_t side[3] = {1, 1, 1};
    g->groups = (p->bound[WL_DIM_G] < 1 ? 1 : p->bound[WL_DIM_G]) / spread_of(m, WL_DIM_G);
    for (int d = 0; d < WL_NDIMS; d++)
        if (d != WL_DIM_G)
            side[side_of(p, d)] *= (p->bound[d] < 1 ? 1 : p->bound[d]) / spread_of(m, d);
    g->pack = pack < 1 ? 1 : pack > g->groups ? g->groups : pack;
    g->passes = (g->groups + g->pack - 1) / g->pack;
    g->m = side[SIDE_M];
    return as_mul_i64(side[SIDE_N], g->pack, &g->n) && as_mul_i64(side[SIDE_K], g->pack, &g->k);
}

int64_t array_cycles(const arch_compute *c, const array_gemm *g)
{
    int64_t one_pass = map_systolic_cycles(g->m, g->n, g->k, c->rows, c->cols, c->dataflow);
    int64_t total;
    return one_pass < 0 || !as_mul_i64(g->passes, one_pass, &total) ? -1 : total;
}

/* Pack candidates of map_best_group_pack: the packs whose block-diagonal
 * GEMM just fills one, two, three or four array heights or widths with
 * one group's reductions or columns, the packs that split the groups into
 * one to eight equal passes, and one group at a time. */
#define PACK_FILLS 4
#define PACK_PASSES 8

/* Packing changes the cycles and the words crossing the array's edge but
 * not the MACs: the fewest cycles is the pick (fewest groups at a tie). */
int64_t map_best_group_pack(const arch_spec *a, const wl_problem *p, const map_mapping *m)
{
    const arch_compute *c = &a->compute;
    array_gemm one;
    if (c->kind != ARCH_COMPUTE_SYSTOLIC || m->n_levels < 1 || m->n_levels > ARCH_MAX_LEVELS ||
        !array_gemm_of(p, m, 1, &one) || one.groups <= 1 || one.n < 1 || one.k < 1)
        return 1;
    int64_t candidate[1 + 4 * PACK_FILLS + PACK_PASSES];
    int n = 0;
    candidate[n++] = 1;
    for (int j = 1; j <= PACK_FILLS; j++) {
        candidate[n++] = j * (int64_t)c->rows / one.k;
        candidate[n++] = j * (int64_t)c->cols / one.k;
        candidate[n++] = j * (int64_t)c->rows / one.n;
        candidate[n++] = j * (int64_t)c->cols / one.n;
    }
    for (int j = 1; j <= PACK_PASSES; j++)
        candidate[n++] = (one.groups + j - 1) / j;
    int64_t best = 1, best_cycles = array_cycles(c, &one);
    for (int i = 1; i < n; i++) {
        array_gemm g;
        int64_t cycles = array_gemm_of(p, m, candidate[i], &g) ? array_cycles(c, &g) : -1;
        if (cycles >= 0 &&
            (best_cycles < 0 || cycles < best_cycles || (cycles == best_cycles && g.pack < best))) {
            best = g.pack;
            best_cycles = cycles;
        }
    }
    return best;
}

/* t scaled by the passes run one after another; false on overflow. */
static bool times_passes(map_systolic_traffic *t, int64_t passes)
{
    for (int ds = 0; ds < WL_NDATASPACES; ds++)
        if (!as_mul_i64(t->edge_words[ds], passes, &t->edge_words[ds]) ||
            !as_mul_i64(t->hops[ds], passes, &t->hops[ds]) ||
            !as_mul_i64(t->reg_reads[ds], passes, &t->reg_reads[ds]) ||
            !as_mul_i64(t->reg_writes[ds], passes, &t->reg_writes[ds]))
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
    if (!array_gemm_of(p, m, m->group_pack, &g) ||
        !map_systolic_traffic_of(g.m, g.n, g.k, c->rows, c->cols, c->dataflow, &f->inside) ||
        !times_passes(&f->inside, g.passes))
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
