/*
 * ops_matmul.c -- the op family of Gemm, MatMul and Einsum: matrix
 * products, lowered to the loop-nest problem N, G, P, C, M.  One table entry per op
 * at the end (see ops_private.h).
 */
#include "ops_private.h"

#include <string.h>

/* ---------------------------------------------------------- shape rules */

/* Gemm: A [M, K] (transA: [K, M]) times B [K, N] (transB: [N, K]), plus C
 * broadcast to [M, N]. */
static as_code infer_gemm(wl_infer_ctx *c)
{
    const wl_tensor *a = IN(c, 0), *b = IN(c, 1), *bias = IN(c, 2);
    const wl_attrs *at = &c->op->attrs;
    if (a->rank != 2 || b->rank != 2)
        return wl_infer_fail(c, "inputs '%s' and '%s' have ranks %d and %d; Gemm needs rank 2",
                             a->name, b->name, a->rank, b->rank);
    int64_t m = a->dims[at->trans_a ? 1 : 0], ka = a->dims[at->trans_a ? 0 : 1];
    int64_t kb = b->dims[at->trans_b ? 1 : 0], n = b->dims[at->trans_b ? 0 : 1];
    if (ka != kb) {
        char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s (transA %d) has K = %lld, "
                             "'%s' %s (transB %d) has K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), at->trans_a, (long long)ka,
                             b->name, wl_shape_str(b, sb, sizeof sb), at->trans_b, (long long)kb);
    }
    int64_t dims[2] = {m, n};
    if (bias) {
        as_code rc = wl_infer_broadcasts_to(c, bias, 2, dims);
        if (rc != AS_OK)
            return rc;
    }
    return wl_infer_set_output(c, 0, a->dtype, 2, dims);
}

/*
 * MatMul with numpy semantics: a 1-D first operand is a row [1, K], a
 * 1-D second operand a column [K, 1], and the promoted dim is dropped from
 * the result; the batch dims (all but the last two) broadcast.
 */
static as_code infer_matmul(wl_infer_ctx *c)
{
    const wl_tensor *a = IN(c, 0), *b = IN(c, 1);
    if (a->rank < 1 || b->rank < 1)
        return wl_infer_fail(c,
                             "inputs '%s' and '%s' have ranks %d and %d; MatMul needs rank "
                             ">= 1",
                             a->name, b->name, a->rank, b->rank);
    int64_t ka = a->dims[a->rank - 1];
    int64_t kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka != kb) {
        char sa[WL_SHAPE_STR_BYTES], sb[WL_SHAPE_STR_BYTES];
        return wl_infer_fail(c,
                             "inner dimensions disagree: '%s' %s has K = %lld, '%s' %s has "
                             "K = %lld",
                             a->name, wl_shape_str(a, sa, sizeof sa), (long long)ka, b->name,
                             wl_shape_str(b, sb, sizeof sb), (long long)kb);
    }
    int batch_a = a->rank > 2 ? a->rank - 2 : 0, batch_b = b->rank > 2 ? b->rank - 2 : 0;
    int rank;
    int64_t dims[WL_MAX_RANK + 2];
    as_code rc = wl_infer_broadcast(c, b, batch_a, a->dims, batch_b, b->dims, &rank, dims);
    if (rc != AS_OK)
        return rc;
    if (a->rank > 1)
        dims[rank++] = a->dims[a->rank - 2];
    if (b->rank > 1)
        dims[rank++] = b->dims[b->rank - 1];
    return wl_infer_set_output(c, 0, a->dtype, rank, dims);
}

/* ------------------------------------------------------------- Einsum */

/* Einsum labels: the letters a-z, A-Z, then one per dimension that an
 * ellipsis stands for, aligned at the right as in broadcasting. */
enum { EINSUM_LETTERS = 52, EINSUM_LABELS = EINSUM_LETTERS + WL_MAX_RANK, EINSUM_TERMS = 8 };

/* A parsed equation: the labels of each input's dims and the output's. */
typedef struct einsum_eq {
    int rank[EINSUM_TERMS + 1]; /* [n inputs] is the output */
    int label[EINSUM_TERMS + 1][WL_MAX_RANK];
    int64_t size[EINSUM_LABELS]; /* 0: the label is not used */
    int uses[EINSUM_LABELS];     /* occurrences among the inputs */
} einsum_eq;

static int letter_label(char ch)
{
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a';
    if (ch >= 'A' && ch <= 'Z')
        return 26 + ch - 'A';
    return -1;
}

/* The end of the term that starts at s: the next ',' or "->" or the end. */
static const char *term_end(const char *s)
{
    while (*s && *s != ',' && !(s[0] == '-' && s[1] == '>'))
        s++;
    return s;
}

/* Letters of the term [s, end), and whether it has an ellipsis. */
static int term_letters(const char *s, const char *end, bool *ellipsis)
{
    int letters = 0;
    *ellipsis = false;
    for (; s < end; s++) {
        letters += letter_label(*s) >= 0;
        *ellipsis |= strncmp(s, "...", 3) == 0;
    }
    return letters;
}

/*
 * The term [s, end) as the labels of eq's term `term`, whose ellipsis has
 * n_ellipsis of the equation's ellipsis_dims dims (the last ones).  False
 * on a bad character, a second ellipsis or more than WL_MAX_RANK dims.
 */
static bool einsum_term(const char *s, const char *end, int n_ellipsis, int ellipsis_dims,
                        einsum_eq *eq, int term)
{
    int n = 0;
    bool seen_ellipsis = false;
    for (; s < end; s++) {
        if (*s == ' ')
            continue;
        if (strncmp(s, "...", 3) == 0 && !seen_ellipsis) {
            seen_ellipsis = true;
            if (n_ellipsis < 0 || n + n_ellipsis > WL_MAX_RANK)
                return false;
            for (int i = 0; i < n_ellipsis; i++)
                eq->label[term][n++] = EINSUM_LETTERS + ellipsis_dims - n_ellipsis + i;
            s += 2;
            continue;
        }
        int l = letter_label(*s);
        if (l < 0 || n >= WL_MAX_RANK)
            return false;
        eq->label[term][n++] = l;
    }
    eq->rank[term] = n;
    return true;
}

/* Record the sizes of term t's labels from x: letters must agree, the
 * ellipsis dims broadcast.  False with a message in why. */
static bool einsum_sizes(einsum_eq *eq, int t, const wl_tensor *x, char *why, size_t why_size)
{
    for (int i = 0; i < eq->rank[t]; i++) {
        int l = eq->label[t][i];
        int64_t d = x->dims[i], *size = &eq->size[l];
        bool broadcasts = l >= EINSUM_LETTERS;
        eq->uses[l]++;
        if (*size == 0 || (broadcasts && *size == 1))
            *size = d;
        else if (d != *size && !(broadcasts && d == 1)) {
            snprintf(why, why_size, "dim %d of input '%s' has size %lld, elsewhere %lld", i,
                     x->name, (long long)d, (long long)*size);
            return false;
        }
    }
    return true;
}

/* The implicit output: the ellipsis dims, then the letters used once, in
 * alphabetical order (upper case first, as numpy). */
static void einsum_implicit_output(einsum_eq *eq, int out, int ellipsis_dims)
{
    int r = 0;
    for (int i = 0; i < ellipsis_dims; i++)
        eq->label[out][r++] = EINSUM_LETTERS + i;
    for (int upper = 1; upper >= 0; upper--)
        for (int i = 0; i < 26; i++)
            if (eq->uses[upper * 26 + i] == 1 && r < WL_MAX_RANK)
                eq->label[out][r++] = upper * 26 + i;
    eq->rank[out] = r;
}

/*
 * Parse `equation` for inputs x[0..n): the labels of every term, each
 * label's size, and the output's labels (explicit after "->", implicit
 * without).  False with a message in why.
 */
static bool einsum_parse(const char *equation, const wl_tensor *const *x, int n, einsum_eq *eq,
                         char *why, size_t why_size)
{
    memset(eq, 0, sizeof *eq);
    if (n < 1 || n > EINSUM_TERMS) {
        snprintf(why, why_size, "%d inputs; 1 to %d are supported", n, EINSUM_TERMS);
        return false;
    }
    const char *start[EINSUM_TERMS], *end[EINSUM_TERMS], *at = equation;
    int ellipsis_dims = 0, n_ellipsis[EINSUM_TERMS];
    for (int t = 0; t < n; t++) {
        start[t] = at;
        end[t] = term_end(at);
        bool ellipsis;
        int letters = term_letters(start[t], end[t], &ellipsis);
        n_ellipsis[t] = ellipsis ? x[t]->rank - letters : 0;
        if (n_ellipsis[t] > ellipsis_dims)
            ellipsis_dims = n_ellipsis[t];
        bool last = t + 1 == n;
        if ((!last && *end[t] != ',') || (last && *end[t] == ',')) {
            snprintf(why, why_size, "equation '%s' does not have one term per input (%d)", equation,
                     n);
            return false;
        }
        at = end[t] + !last;
    }
    for (int t = 0; t < n; t++) {
        if (!einsum_term(start[t], end[t], n_ellipsis[t], ellipsis_dims, eq, t) ||
            eq->rank[t] != x[t]->rank) {
            snprintf(why, why_size, "term %d of equation '%s' does not fit input '%s' of rank %d",
                     t, equation, x[t]->name, x[t]->rank);
            return false;
        }
        if (!einsum_sizes(eq, t, x[t], why, why_size))
            return false;
    }
    if (*at == '\0') {
        einsum_implicit_output(eq, n, ellipsis_dims);
        return true;
    }
    at += 2; /* "->" */
    bool ellipsis;
    const char *out_end = term_end(at);
    term_letters(at, out_end, &ellipsis);
    if (*out_end || !einsum_term(at, out_end, ellipsis ? ellipsis_dims : 0, ellipsis_dims, eq, n)) {
        snprintf(why, why_size, "the output of equation '%s' is malformed", equation);
        return false;
    }
    for (int i = 0; i < eq->rank[n]; i++)
        if (eq->uses[eq->label[n][i]] == 0) {
            snprintf(why, why_size, "output dim %d of equation '%s' is in no input", i, equation);
            return false;
        }
    return true;
}

/* Einsum: the output has the size of each of its labels. */
static as_code infer_einsum(wl_infer_ctx *c)
{
    const wl_tensor *x[EINSUM_TERMS];
    int n = c->op->n_inputs;
    for (int t = 0; t < n && t < EINSUM_TERMS; t++)
        if (!(x[t] = IN(c, t)))
            return wl_infer_fail(c, "input %d is missing", t);
    einsum_eq eq;
    char why[256];
    if (!einsum_parse(c->op->attrs.equation, x, n, &eq, why, sizeof why))
        return wl_infer_fail(c, "%s", why);
    int64_t dims[WL_MAX_RANK];
    for (int i = 0; i < eq.rank[n]; i++)
        dims[i] = eq.size[eq.label[n][i]];
    return wl_infer_set_output(c, 0, x[0]->dtype, eq.rank[n], dims);
}

/* ------------------------------------------------------------ problems */

static bool is_stored(const wl_tensor *t)
{
    return t->kind == WL_TENSOR_WEIGHT || t->kind == WL_TENSOR_CONSTANT;
}

/* Product of dims [0, n) of t. */
static int64_t prod_dims(const wl_tensor *t, int n)
{
    int64_t v = 1;
    for (int i = 0; i < n; i++)
        v *= t->dims[i];
    return v;
}

/* The output of a matrix product, [N, G, P, M], and the tensors of its
 * three data spaces: input 0 is A, in the weights role when swap. */
static void bind_product(const wl_graph *g, const wl_op *op, wl_problem *p, bool swap)
{
    wl_problem_add_dims(&p->ds[WL_DS_OUTPUTS], 4,
                        (const wl_dim[]){WL_DIM_N, WL_DIM_G, WL_DIM_P, WL_DIM_M});
    wl_problem_bind(g, p, swap ? WL_DS_WEIGHTS : WL_DS_INPUTS, op->inputs[0]);
    wl_problem_bind(g, p, swap ? WL_DS_INPUTS : WL_DS_WEIGHTS, op->inputs[1]);
    wl_problem_bind(g, p, WL_DS_OUTPUTS, op->outputs[0]);
}

/*
 * Gemm and MatMul: Outputs[n][g][p][m] += A[n][g][p][c] * B[g][c][m].
 * The operand in the weights role is B, unless A is stored and B is not
 * (W x X).  Leading batch dims go to N when B has none (a Linear layer over
 * a batch of tokens) and to G when B has them (attention heads); a partly
 * broadcast batch (A [2,1,..] x B [1,3,..]) is described by the full G on
 * both operands, which overstates their footprint.
 */
static as_code matmul_problem(const wl_graph *g, const wl_op *op, wl_problem *p, as_status *st)
{
    const wl_tensor *a = &g->tensors[op->inputs[0]];
    const wl_tensor *b = &g->tensors[op->inputs[1]];
    const wl_tensor *y = &g->tensors[op->outputs[0]];
    int64_t rows, inner, cols, batch_a = 1, batch_b = 1, batch = 1;
    if (op->kind == WL_OP_GEMM) {
        if (a->rank != 2 || b->rank != 2)
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": Gemm operands must be 2-D",
                           WL_OP_ARGS(g, op));
        rows = a->dims[op->attrs.trans_a ? 1 : 0];
        inner = a->dims[op->attrs.trans_a ? 0 : 1];
        cols = b->dims[op->attrs.trans_b ? 0 : 1];
    } else {
        if (a->rank < 1 || b->rank < 1)
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": MatMul operands must have rank >= 1",
                           WL_OP_ARGS(g, op));
        rows = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
        inner = a->dims[a->rank - 1];
        cols = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
        batch_a = a->rank > 2 ? prod_dims(a, a->rank - 2) : 1;
        batch_b = b->rank > 2 ? prod_dims(b, b->rank - 2) : 1;
        int64_t out_elems = wl_tensor_elements(y);
        batch = rows * cols > 0 ? out_elems / (rows * cols) : 0;
    }
    bool swap = is_stored(a) && !is_stored(b);
    p->kind = (is_stored(a) || is_stored(b)) ? WL_PROBLEM_MATMUL : WL_PROBLEM_BATCHED_MATMUL;
    bool batch_in_g = batch_b > 1;
    for (int d = 0; d < WL_NDIMS; d++)
        p->bound[d] = 1;
    p->bound[batch_in_g ? WL_DIM_G : WL_DIM_N] = batch;
    p->bound[WL_DIM_P] = rows;
    p->bound[WL_DIM_C] = inner;
    p->bound[WL_DIM_M] = cols;
    p->stride[0] = p->stride[1] = p->dilation[0] = p->dilation[1] = 1;

    wl_dataspace *ds_a = &p->ds[swap ? WL_DS_WEIGHTS : WL_DS_INPUTS];
    wl_dataspace *ds_b = &p->ds[swap ? WL_DS_INPUTS : WL_DS_WEIGHTS];
    if (!batch_in_g)
        wl_problem_add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_N});
    if (batch_in_g && batch_a > 1)
        wl_problem_add_dims(ds_a, 1, (const wl_dim[]){WL_DIM_G});
    wl_problem_add_dims(ds_a, 2, (const wl_dim[]){WL_DIM_P, WL_DIM_C});
    if (batch_in_g)
        wl_problem_add_dims(ds_b, 1, (const wl_dim[]){WL_DIM_G});
    wl_problem_add_dims(ds_b, 2, (const wl_dim[]){WL_DIM_C, WL_DIM_M});
    bind_product(g, op, p, swap);
    return AS_OK;
}

/*
 * Einsum of two operands, A and B, as a (batched) matrix product: labels
 * of A, B and the output are the batch (G), of A and the output the rows
 * (P), of B and the output the columns (M), of A and B only the
 * contraction (C); the MACs are exact, the product of every label's size.
 * Other equations -- one operand, three or more, a label summed within one
 * operand, a repeated label (a diagonal) -- have no such problem: AS_EINVAL
 * naming the node.
 */
static as_code einsum_problem(const wl_graph *g, const wl_op *op, wl_problem *p, as_status *st)
{
    einsum_eq eq;
    char why[256] = "";
    const wl_tensor *x[2] = {&g->tensors[op->inputs[0]],
                             op->n_inputs > 1 ? &g->tensors[op->inputs[1]] : NULL};
    if (op->n_inputs != 2 || !einsum_parse(op->attrs.equation, x, 2, &eq, why, sizeof why))
        return as_fail(st, AS_EINVAL,
                       WL_OP_FMT ": only a contraction of two operands is costed as compute %s",
                       WL_OP_ARGS(g, op), why);
    bool in[3][EINSUM_LABELS] = {{0}};
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < eq.rank[t]; i++) {
            if (in[t][eq.label[t][i]])
                return as_fail(st, AS_EINVAL,
                               WL_OP_FMT ": a repeated label (a diagonal) is not a contraction",
                               WL_OP_ARGS(g, op));
            in[t][eq.label[t][i]] = true;
        }
    for (int d = 0; d < WL_NDIMS; d++)
        p->bound[d] = 1;
    for (int l = 0; l < EINSUM_LABELS; l++) {
        if (!eq.size[l])
            continue;
        bool a = in[0][l], b = in[1][l], out = in[2][l];
        if (!out && !(a && b))
            return as_fail(st, AS_EINVAL,
                           WL_OP_FMT ": a label summed within one operand is not a contraction",
                           WL_OP_ARGS(g, op));
        wl_dim dim = a && b ? (out ? WL_DIM_G : WL_DIM_C) : a ? WL_DIM_P : WL_DIM_M;
        p->bound[dim] *= eq.size[l];
    }
    bool swap = is_stored(x[0]) && !is_stored(x[1]);
    p->kind = (is_stored(x[0]) || is_stored(x[1])) ? WL_PROBLEM_MATMUL : WL_PROBLEM_BATCHED_MATMUL;
    p->stride[0] = p->stride[1] = p->dilation[0] = p->dilation[1] = 1;
    wl_dataspace *ds_a = &p->ds[swap ? WL_DS_WEIGHTS : WL_DS_INPUTS];
    wl_dataspace *ds_b = &p->ds[swap ? WL_DS_INPUTS : WL_DS_WEIGHTS];
    wl_problem_add_dims(ds_a, 3, (const wl_dim[]){WL_DIM_G, WL_DIM_P, WL_DIM_C});
    wl_problem_add_dims(ds_b, 3, (const wl_dim[]){WL_DIM_G, WL_DIM_C, WL_DIM_M});
    bind_product(g, op, p, swap);
    return AS_OK;
}

/* Gemm with transA reads its rows as columns: a row tile needs all of A. */
static wl_halo_rule gemm_halo(const wl_op *op)
{
    return op->attrs.trans_a ? WL_HALO_WHOLE : WL_HALO_ROWS;
}

/* --------------------------------------------------------------- table */

/* A matrix product with shape rule r: the matmul problem, rows passing
 * through a tile. */
#define MATMUL(r)                                                                                  \
    .required_inputs = 2, .infer = (r), .problem = matmul_problem, .halo = WL_HALO_ROWS

const wl_op_def wl_ops_matmul[WL_OP_COUNT] = {
    [WL_OP_GEMM] = {MATMUL(infer_gemm), .halo_of = gemm_halo},
    [WL_OP_MATMUL] = {MATMUL(infer_matmul)},
    /* Variadic; a tile needs whole operands (the labels may permute). */
    [WL_OP_EINSUM] = {.min_opset = 12,
                      .required_inputs = 1,
                      .infer = infer_einsum,
                      .problem = einsum_problem},
};
