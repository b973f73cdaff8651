/*
 * lower.c -- convolution lowering (see workload.h and docs/lowering.md):
 * a Conv is rewritten into the ops an inference library runs for it, so
 * that every later stage (epilogues, network costing, fusion, the mapper,
 * statistics) sees their real tensors and traffic without special cases.
 * The conv's output tensor keeps its name and shape, so its consumers are
 * untouched; the new ops take the conv's place in the op order.
 *
 * im2col + GEMM (any 1-D to 3-D Conv; groups as a batch of G GEMMs,
 * depthwise as G GEMMs of one row):
 *
 *   X --Im2Col--> cols [N, G, C/G*R*S, P*Q] --MatMul(W', cols, bias)--> [N, G, M/G, P*Q]
 *     --Reshape (a view, free)--> Y [N, M, P, Q]
 *
 *   Im2Col is data movement: it reads X and writes the column matrix, its
 *   padding zeros included (N*C*R*S*P*Q elements), a real tensor that
 *   crosses DRAM unless fusion keeps it on chip.  W' is a new initializer
 *   holding the conv's weights as the GEMM's [M, C*R*S] ([G, M/G, C/G*R*S]
 *   when grouped) matrix: same elements, precision and density.  The GEMM
 *   has MACs = N*M*(C/G)*R*S*P*Q, the direct conv's.
 *
 * Winograd F(m x m, 3 x 3), m = 2 or 4, alpha = m + 2 (3x3 kernels, stride
 * 1, dilation 1, one group; Lavin & Gray, CVPR 2016):
 *
 *   X --WinogradInputTransform--> V [alpha^2, C, N*T] --MatMul(U, V)--> [alpha^2, M, N*T]
 *     --WinogradOutputTransform(., bias)--> Y [N, M, P, Q]
 *
 *   T = ceil(P/m) * ceil(Q/m) tiles over the padded input, boundary tiles
 *   padded.  The transforms are vector work (ops_lowering.c counts them
 *   from the matrices).  U is a new initializer of alpha^2 * M * C
 *   elements: the filter transform G g G^T done offline at compile time,
 *   stored transformed (alpha^2 / 9 times the conv's weight bytes), denser
 *   than a pruned g (wl_transform_density).  The batched GEMM has MACs =
 *   N * alpha^2 * C * M * T.
 *
 * Bias.  A direct conv's bias is read once outside its loop nest
 * (mapping/network.c, unmodelled_input_bytes), its addition free (the
 * accumulators start at it).  Lowered, it stays where the accumulation
 * ends: a third input of im2col's MatMul (ONNX's MatMul has two; a
 * lowered graph is not exported) and the second of Winograd's output
 * transform, read once there and added for free, so that direct and
 * lowered differ only by the algorithm.
 *
 * Precision and density.  New tensors take bits, storage_dtype and
 * precision_chosen (the MACs' operand format) from the tensors they come
 * from (columns and V from X, GEMM results from Y, W' and U from the
 * conv's weight); densities: columns X's, W' the weight's, V and U the
 * transformed density of X's and the weight's.
 */
#include "ops_private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const algorithm_names[] = {
    [WL_CONV_DIRECT] = "direct",
    [WL_CONV_IM2COL] = "im2col",
    [WL_CONV_WINOGRAD_2] = "winograd2",
    [WL_CONV_WINOGRAD_4] = "winograd4",
};
enum { N_ALGORITHMS = sizeof algorithm_names / sizeof algorithm_names[0] };

/* The algorithm named s (workload.h). */
bool wl_conv_algorithm_parse(const char *s, wl_conv_algorithm *out)
{
    for (int a = 0; a < N_ALGORITHMS; a++)
        if (strcmp(s, algorithm_names[a]) == 0) {
            *out = (wl_conv_algorithm)a;
            return true;
        }
    return false;
}

/* The name of a, "?" when out of range. */
const char *wl_conv_algorithm_name(wl_conv_algorithm a)
{
    return (unsigned)a < N_ALGORITHMS ? algorithm_names[a] : "?";
}

/* The output tile size m of a Winograd algorithm, 0 for the others. */
static int winograd_m(wl_conv_algorithm a)
{
    return a == WL_CONV_WINOGRAD_2 ? 2 : a == WL_CONV_WINOGRAD_4 ? 4 : 0;
}

/* Printf into why (when why_size > 0); returns false. */
static bool refuse(char *why, size_t why_size, const char *fmt, ...) AS_PRINTF(3, 4);
static bool refuse(char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* Direct and im2col: any live Conv with inferred shapes; Winograd: the
 * conditions of Lavin's F(m x m, 3 x 3), each refusal naming the one that
 * fails. */
bool wl_conv_algorithm_applies(const wl_graph *g, int32_t op, wl_conv_algorithm a, char *why,
                               size_t why_size)
{
    if (op < 0 || op >= g->n_ops || g->ops[op].dead || g->ops[op].kind != WL_OP_CONV)
        return refuse(why, why_size, "not a live Conv");
    if ((unsigned)a >= N_ALGORITHMS)
        return refuse(why, why_size, "unknown algorithm %d", (int)a);
    const wl_op *c = &g->ops[op];
    const wl_tensor *x = &g->tensors[c->inputs[0]], *w = &g->tensors[c->inputs[1]];
    if (!x->shape_known || !w->shape_known || !g->tensors[c->outputs[0]].shape_known)
        return refuse(why, why_size, "shapes not inferred");
    if (a == WL_CONV_DIRECT || a == WL_CONV_IM2COL)
        return true;
    const char *name = wl_conv_algorithm_name(a);
    if (x->rank != 4)
        return refuse(why, why_size, "%s needs a 2-D conv; this one has %d spatial axes", name,
                      x->rank - 2);
    if (w->dims[2] != 3 || w->dims[3] != 3)
        return refuse(why, why_size, "%s needs a 3x3 kernel; this one is %lldx%lld", name,
                      (long long)w->dims[2], (long long)w->dims[3]);
    for (int i = 0; i < 2; i++) {
        if (c->attrs.strides[i] != 1)
            return refuse(why, why_size, "%s needs stride 1; this conv has stride %lld", name,
                          (long long)c->attrs.strides[i]);
        if (c->attrs.dilations[i] != 1)
            return refuse(why, why_size, "%s needs dilation 1; this conv has dilation %lld", name,
                          (long long)c->attrs.dilations[i]);
    }
    if (c->attrs.group != 1)
        return refuse(why, why_size, "%s needs one group; this conv has %lld", name,
                      (long long)c->attrs.group);
    return true;
}

/* ------------------------------------------------------------- rewrite */

/* What the rewrite of one conv needs. */
typedef struct lowering {
    wl_graph *g;
    int32_t conv;
    int32_t x, w, bias, y; /* the conv's tensors (bias -1 when none) */
    wl_attrs window;       /* the conv's window, pads resolved, auto_pad NOTSET */
    as_status *st;
} lowering;

/* A tensor name not in g: base, else base2, base3... (arena). */
static const char *unique_name(wl_graph *g, const char *base)
{
    const char *name = base;
    for (int k = 2; name && wl_find_tensor(g, name) >= 0; k++)
        name = as_arena_printf(&g->arena, "%s%d", base, k);
    return name;
}

/*
 * A new tensor `<from's name><suffix>` of kind and dims, its element type,
 * bits, storage type and chosen precision from tensor `from`, its density
 * `density`; -1 with st set on failure.
 */
static int32_t add_like(lowering *l, int32_t from, const char *suffix, wl_tensor_kind kind,
                        int rank, const int64_t *dims, double density)
{
    wl_graph *g = l->g;
    const char *base = as_arena_printf(&g->arena, "%s%s", g->tensors[from].name, suffix);
    const char *name = base ? unique_name(g, base) : NULL;
    if (!name) {
        as_fail(l->st, AS_ENOMEM, "%s: out of memory lowering convolutions", g->source);
        return -1;
    }
    int32_t t = wl_add_tensor(g, name, kind, g->tensors[from].dtype, rank, dims, l->st);
    if (t < 0)
        return -1;
    const wl_tensor *src = &g->tensors[from];
    g->tensors[t].bits = src->bits;
    g->tensors[t].storage_dtype = src->storage_dtype;
    g->tensors[t].precision_chosen = src->precision_chosen;
    g->tensors[t].density = density;
    g->tensors[t].data_stripped = kind == WL_TENSOR_WEIGHT;
    return t;
}

/* Add op kind `<conv name><suffix>` (the conv's position in messages;
 * the op that writes the conv's output takes its folded BatchNorm's
 * name); false with st set on failure. */
static bool add_op(lowering *l, wl_op_kind kind, const char *suffix, int n_inputs,
                   const int32_t *inputs, int32_t output, const wl_attrs *attrs)
{
    wl_graph *g = l->g;
    const char *name = as_arena_printf(&g->arena, "%s%s", g->ops[l->conv].name, suffix);
    if (!name) {
        as_fail(l->st, AS_ENOMEM, "%s: out of memory lowering convolutions", g->source);
        return false;
    }
    int32_t o = wl_add_op(g, kind, name, NULL, n_inputs, inputs, 1, &output, attrs, l->st);
    if (o < 0)
        return false;
    g->ops[o].source_index = g->ops[l->conv].source_index;
    if (output == l->y)
        g->ops[o].folded_bn = g->ops[l->conv].folded_bn;
    return true;
}

/*
 * The conv's window with its padding made explicit: auto_pad SAME_* pads
 * so that out = ceil(in / stride), the extra element at the end (UPPER)
 * or the beginning (LOWER); VALID pads nothing.
 */
static void resolve_window(const wl_graph *g, const wl_op *c, wl_attrs *a)
{
    const wl_tensor *x = &g->tensors[c->inputs[0]], *w = &g->tensors[c->inputs[1]];
    const wl_tensor *y = &g->tensors[c->outputs[0]];
    int n = x->rank - 2;
    *a = c->attrs;
    a->n_spatial = n;
    for (int i = 0; i < n; i++) {
        a->kernel_shape[i] = w->dims[2 + i];
        int64_t reach = a->dilations[i] * (a->kernel_shape[i] - 1) + 1;
        int64_t total = (y->dims[2 + i] - 1) * a->strides[i] + reach - x->dims[2 + i];
        if (total < 0)
            total = 0;
        if (c->attrs.auto_pad == WL_AUTO_PAD_VALID) {
            a->pads[i] = a->pads[n + i] = 0;
        } else if (c->attrs.auto_pad != WL_AUTO_PAD_NOTSET) {
            bool upper = c->attrs.auto_pad == WL_AUTO_PAD_SAME_UPPER;
            a->pads[i] = upper ? total / 2 : total - total / 2;
            a->pads[n + i] = total - a->pads[i];
        }
    }
    a->auto_pad = WL_AUTO_PAD_NOTSET;
}

/* A constant `<y's name>.shape` holding dims (Reshape's target); -1 with
 * st set on failure. */
static int32_t add_shape(lowering *l, int rank, const int64_t *dims)
{
    wl_graph *g = l->g;
    int64_t n = rank;
    const char *base = as_arena_printf(&g->arena, "%s.shape", g->tensors[l->y].name);
    const char *name = base ? unique_name(g, base) : NULL;
    int32_t t = name ? wl_add_tensor(g, name, WL_TENSOR_CONSTANT, WL_DTYPE_I64, 1, &n, l->st) : -1;
    int64_t *values = t >= 0 ? as_arena_memdup(&g->arena, dims, (size_t)rank * sizeof *dims) : NULL;
    if (!values) {
        if (t >= 0 || !name)
            as_fail(l->st, AS_ENOMEM, "%s: out of memory lowering convolutions", g->source);
        return -1;
    }
    g->tensors[t].ivalues = values;
    return t;
}

/* Detach the conv from its output, which the last new op will write. */
static void retire_conv(lowering *l)
{
    l->g->ops[l->conv].dead = true;
    l->g->tensors[l->y].producer = -1;
}

/* im2col + GEMM (top of file). */
static bool lower_im2col(lowering *l)
{
    wl_graph *g = l->g;
    const wl_tensor *x = &g->tensors[l->x], *w = &g->tensors[l->w], *y = &g->tensors[l->y];
    int n = x->rank - 2;
    int64_t group = l->window.group, m = w->dims[0], rows = w->dims[1], cols = 1;
    for (int i = 0; i < n; i++) {
        rows *= w->dims[2 + i];
        cols *= y->dims[2 + i];
    }
    int64_t col_dims[4] = {x->dims[0], group, rows, cols};
    int64_t w_dims[3] = {group, m / group, rows};
    int64_t gemm_dims[4] = {x->dims[0], group, m / group, cols};
    int y_rank = y->rank;
    int64_t y_dims[WL_MAX_RANK];
    memcpy(y_dims, y->dims, sizeof y_dims);
    double x_density = x->density, y_density = y->density, w_density = w->density;
    int32_t col = add_like(l, l->x, ".im2col", WL_TENSOR_ACTIVATION, 4, col_dims, x_density);
    int32_t weight = col < 0 ? -1
                             : add_like(l, l->w, ".im2col", WL_TENSOR_WEIGHT, group > 1 ? 3 : 2,
                                        group > 1 ? w_dims : w_dims + 1, w_density);
    int32_t gemm =
        weight < 0 ? -1 : add_like(l, l->y, ".gemm", WL_TENSOR_ACTIVATION, 4, gemm_dims, y_density);
    int32_t shape = gemm < 0 ? -1 : add_shape(l, y_rank, y_dims);
    if (shape < 0)
        return false;
    retire_conv(l);
    int32_t gemm_in[3] = {weight, col, l->bias};
    int32_t view_in[2] = {gemm, shape};
    return add_op(l, WL_OP_IM2COL, "/im2col", 1, &l->x, col, &l->window) &&
           add_op(l, WL_OP_MATMUL, "/gemm", l->bias >= 0 ? 3 : 2, gemm_in, gemm, NULL) &&
           add_op(l, WL_OP_RESHAPE, "/col2im", 2, view_in, l->y, NULL);
}

/* Winograd F(m x m, 3 x 3) (top of file). */
static bool lower_winograd(lowering *l, int m)
{
    wl_graph *g = l->g;
    const wl_winograd *wg = wl_winograd_of(m);
    const wl_tensor *x = &g->tensors[l->x], *y = &g->tensors[l->y];
    int64_t a2 = (int64_t)wg->alpha * wg->alpha, c = x->dims[1], mo = y->dims[1];
    int64_t tiles = x->dims[0] * wl_ceil_div(y->dims[2], m) * wl_ceil_div(y->dims[3], m);
    int64_t v_dims[3] = {a2, c, tiles}, u_dims[3] = {a2, mo, c}, prod_dims[3] = {a2, mo, tiles};
    double v_density = wl_transform_density(wg->bt, wg->alpha, wg->alpha, x->density);
    double u_density = wl_transform_density(wg->g, wg->alpha, 3, g->tensors[l->w].density);
    double y_density = y->density;
    wl_attrs in_attrs = l->window, out_attrs;
    in_attrs.blocksize = m;
    wl_attrs_default(&out_attrs, WL_OP_WINOGRAD_OUTPUT);
    out_attrs.blocksize = m;
    out_attrs.n_spatial = 2;
    out_attrs.output_shape[0] = y->dims[2];
    out_attrs.output_shape[1] = y->dims[3];
    const char *suffix = m == 2 ? ".winograd2" : ".winograd4";
    int32_t v = add_like(l, l->x, suffix, WL_TENSOR_ACTIVATION, 3, v_dims, v_density);
    int32_t u = v < 0 ? -1 : add_like(l, l->w, suffix, WL_TENSOR_WEIGHT, 3, u_dims, u_density);
    int32_t prod =
        u < 0 ? -1 : add_like(l, l->y, ".gemm", WL_TENSOR_ACTIVATION, 3, prod_dims, y_density);
    if (prod < 0)
        return false;
    retire_conv(l);
    int32_t gemm_in[2] = {u, v}, out_in[2] = {prod, l->bias};
    return add_op(l, WL_OP_WINOGRAD_INPUT, "/winograd_input", 1, &l->x, v, &in_attrs) &&
           add_op(l, WL_OP_MATMUL, "/winograd_gemm", 2, gemm_in, prod, NULL) &&
           add_op(l, WL_OP_WINOGRAD_OUTPUT, "/winograd_output", l->bias >= 0 ? 2 : 1, out_in, l->y,
                  &out_attrs);
}

/* Rewrite conv c by algorithm a (not direct), which applies. */
static bool lower_one(wl_graph *g, int32_t c, wl_conv_algorithm a, as_status *st)
{
    const wl_op *op = &g->ops[c];
    lowering l = {.g = g,
                  .conv = c,
                  .x = op->inputs[0],
                  .w = op->inputs[1],
                  .bias = op->n_inputs > 2 ? op->inputs[2] : -1,
                  .y = op->outputs[0],
                  .st = st};
    resolve_window(g, op, &l.window);
    int m = winograd_m(a);
    return m ? lower_winograd(&l, m) : lower_im2col(&l);
}

/*
 * Put the ops added from index `first` on (each lowered conv's, in the
 * order the convs were lowered, contiguous) in the place of their conv,
 * so that the op order (and the layers' listing) stays the model's:
 * ops[] is permuted and the tensors' producers follow.  False when out of
 * memory.
 */
static bool reorder_ops(wl_graph *g, int32_t first, const int32_t *lowered, int n_lowered)
{
    int32_t n = g->n_ops, *perm = malloc((size_t)n * sizeof *perm);
    int32_t *where = malloc((size_t)n * sizeof *where);
    wl_op *ops = malloc((size_t)n * sizeof *ops);
    bool ok = perm && where && ops;
    int32_t k = 0, next = first, done = 0;
    for (int32_t o = 0; ok && o < first; o++) {
        perm[k++] = o;
        if (done < n_lowered && lowered[done] == o) {
            for (int32_t e = 0; e < 3; e++) /* three ops per lowered conv */
                perm[k++] = next++;
            done++;
        }
    }
    for (int32_t i = 0; ok && i < n; i++) {
        ops[i] = g->ops[perm[i]];
        where[perm[i]] = i;
    }
    for (int32_t t = 0; ok && t < g->n_tensors; t++)
        if (g->tensors[t].producer >= 0)
            g->tensors[t].producer = where[g->tensors[t].producer];
    if (ok)
        memcpy(g->ops, ops, (size_t)n * sizeof *ops);
    free(perm);
    free(where);
    free(ops);
    return ok;
}

/* The named conv, or every conv a applies to, rewritten, then the ops
 * reordered, the graph compacted and inferred again.  On failure (out of
 * memory) the graph may be left half rewritten. */
as_code wl_lower_convs(wl_graph *g, const char *op_name, wl_conv_algorithm a, int *n_lowered,
                       as_status *st)
{
    if (n_lowered)
        *n_lowered = 0;
    if ((unsigned)a >= N_ALGORITHMS)
        return as_fail(st, AS_EINVAL, "%s: unknown convolution algorithm %d", g->source, (int)a);
    int32_t named = -1;
    if (op_name) {
        for (int32_t o = 0; o < g->n_ops && named < 0; o++)
            if (!g->ops[o].dead && g->ops[o].kind == WL_OP_CONV &&
                strcmp(g->ops[o].name, op_name) == 0)
                named = o;
        if (named < 0)
            return as_fail(st, AS_EINVAL, "%s: no Conv named '%s' to lower by %s", g->source,
                           op_name, wl_conv_algorithm_name(a));
        char why[160];
        if (!wl_conv_algorithm_applies(g, named, a, why, sizeof why))
            return as_fail(st, AS_EINVAL, "%s: node %d '%s' (Conv): cannot lower by %s: %s",
                           g->source, g->ops[named].source_index, op_name,
                           wl_conv_algorithm_name(a), why);
    }
    if (a == WL_CONV_DIRECT)
        return AS_OK;
    int32_t first = g->n_ops, *lowered = malloc(((size_t)first + 1) * sizeof *lowered);
    if (!lowered)
        return as_fail(st, AS_ENOMEM, "%s: out of memory lowering convolutions", g->source);
    int n = 0;
    bool ok = true;
    for (int32_t o = 0; ok && o < first; o++) {
        if (named >= 0 ? o != named : !wl_conv_algorithm_applies(g, o, a, NULL, 0))
            continue;
        ok = lower_one(g, o, a, st);
        lowered[n++] = o;
    }
    if (ok && !reorder_ops(g, first, lowered, n))
        ok = !as_fail(st, AS_ENOMEM, "%s: out of memory lowering convolutions", g->source);
    free(lowered);
    as_code rc = ok ? AS_OK : (st && st->code != AS_OK ? st->code : AS_EINVAL);
    if (rc == AS_OK && n > 0)
        rc = wl_graph_compact(g, st);
    if (rc == AS_OK && n > 0)
        rc = wl_graph_infer(g, st);
    if (rc == AS_OK && n_lowered)
        *n_lowered = n;
    return rc;
}
