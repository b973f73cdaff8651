/*
 * transform.c -- the model-optimisation layer of the stack and the
 * compiler's pre-fusion passes: batch size, storage precision, folding of
 * BatchNormalization into convolutions, fusability marks, unstructured and
 * channel pruning (see workload.h).
 *
 * Every transform that changes a shape re-runs wl_graph_infer, so the graph
 * is always left consistent (or the status says why not).
 */
#include "ops_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ precision */

/* Each precision's element type of weights and of activations; their
 * widths are the storage bits. */
static const struct {
    const char *name;
    wl_dtype weight_dtype, activation_dtype;
} precisions[] = {
    [WL_PREC_FP32] = {"fp32", WL_DTYPE_F32, WL_DTYPE_F32},
    [WL_PREC_FP16] = {"fp16", WL_DTYPE_F16, WL_DTYPE_F16},
    [WL_PREC_BF16] = {"bf16", WL_DTYPE_BF16, WL_DTYPE_BF16},
    [WL_PREC_INT8] = {"int8", WL_DTYPE_I8, WL_DTYPE_I8},
    [WL_PREC_MIXED] = {"mixed", WL_DTYPE_I8, WL_DTYPE_BF16},
};
enum { N_PRECISIONS = sizeof precisions / sizeof precisions[0] };

bool wl_precision_parse(const char *s, wl_precision *out)
{
    for (int p = 0; p < N_PRECISIONS; p++) {
        if (strcmp(s, precisions[p].name) == 0) {
            *out = (wl_precision)p;
            return true;
        }
    }
    return false;
}

const char *wl_precision_name(wl_precision p)
{
    return (unsigned)p < N_PRECISIONS ? precisions[p].name : "?";
}

/* Integer tensors (token ids, shapes, indices) keep their width: the
 * precision of a model is the precision of its float data.  `chosen`
 * says whether the MACs must take the float tensors in that format. */
static void set_precision(wl_graph *g, wl_precision p, bool chosen)
{
    for (int32_t t = 0; t < g->n_tensors; t++) {
        wl_tensor *tensor = &g->tensors[t];
        if (!wl_dtype_is_float(tensor->dtype))
            continue;
        tensor->storage_dtype = tensor->kind == WL_TENSOR_WEIGHT ? precisions[p].weight_dtype
                                                                 : precisions[p].activation_dtype;
        tensor->bits = wl_dtype_bits(tensor->storage_dtype);
        tensor->precision_chosen = chosen;
    }
}

void wl_set_precision(wl_graph *g, wl_precision p)
{
    set_precision(g, p, true);
}

void wl_set_storage_precision(wl_graph *g, wl_precision p)
{
    set_precision(g, p, false);
}

as_code wl_set_tensor_bits(wl_graph *g, const char *name, int bits, as_status *st)
{
    int32_t t = wl_find_tensor(g, name);
    if (t < 0)
        return as_fail(st, AS_EINVAL, "%s: no tensor named '%s'", g->source, name);
    if (bits < 1 || bits > 64)
        return as_fail(st, AS_EINVAL, "%s: tensor '%s': bits = %d is outside 1..64", g->source,
                       name, bits);
    g->tensors[t].bits = bits;
    g->tensors[t].storage_dtype = WL_DTYPE_UNDEFINED; /* no type says "any width" */
    g->tensors[t].precision_chosen = true;
    return AS_OK;
}

/* ---------------------------------------------------------------- batch */

/* A Reshape whose constant target spells out the batch of its input
 * (torch writes [1, 128, 12, 64] for a batch-1 export) must follow a new
 * batch; a target of 0 or -1 in that place follows by itself. */
static void retarget_reshapes(wl_graph *g, int64_t old_batch, int64_t batch)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead || op->kind != WL_OP_RESHAPE || op->n_inputs < 2 || op->inputs[1] < 0)
            continue;
        const wl_tensor *data = &g->tensors[op->inputs[0]];
        wl_tensor *target = &g->tensors[op->inputs[1]];
        bool stored = target->producer < 0 || g->ops[target->producer].kind == WL_OP_CONSTANT;
        if (!stored || !target->ivalues || wl_tensor_elements(target) < 1)
            continue;
        if (data->shape_known && data->rank > 0 && data->dims[0] == old_batch &&
            target->ivalues[0] == old_batch)
            target->ivalues[0] = batch;
    }
}

as_code wl_set_batch(wl_graph *g, int64_t batch, as_status *st)
{
    if (batch < 1)
        return as_fail(st, AS_EINVAL, "%s: batch must be positive, got %lld", g->source,
                       (long long)batch);
    if (g->n_inputs == 0)
        return as_fail(st, AS_EINVAL, "%s: the graph has no inputs to batch", g->source);
    const wl_tensor *first = &g->tensors[g->inputs[0]];
    if (!first->shape_known || first->rank < 1)
        return as_fail(st, AS_EINVAL, "%s: input '%s' has no batch dimension", g->source,
                       first->name);
    int64_t old_batch = first->dims[0];
    if (old_batch == batch)
        return AS_OK;
    retarget_reshapes(g, old_batch, batch);
    for (int32_t i = 0; i < g->n_inputs; i++) {
        wl_tensor *t = &g->tensors[g->inputs[i]];
        if (t->shape_known && t->rank >= 1)
            t->dims[0] = batch;
    }
    return wl_graph_infer(g, st);
}

/* ------------------------------------------------------ batchnorm folding */

/* The conv whose only reader is BN op `bn`, or -1. */
static int32_t foldable_conv(const wl_graph *g, const wl_op *bn)
{
    if (bn->n_inputs < 5 || bn->inputs[0] < 0)
        return -1;
    for (int i = 1; i < bn->n_outputs; i++) /* training-mode outputs in use */
        if (bn->outputs[i] >= 0 && wl_consumer_count(g, bn->outputs[i]) > 0)
            return -1;
    int32_t x = bn->inputs[0];
    int32_t p = g->tensors[x].producer;
    if (p < 0 || wl_consumer_count(g, x) != 1)
        return -1;
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == x)
            return -1;
    const wl_op *conv = &g->ops[p];
    if (conv->dead || (conv->kind != WL_OP_CONV && conv->kind != WL_OP_CONV_TRANSPOSE))
        return -1;
    return p;
}

/* Give conv a bias input of `channels` elements if it has none: folding a
 * BN leaves a per-channel shift, which becomes the conv's bias. */
static as_code ensure_bias(wl_graph *g, int32_t c, int64_t channels, as_status *st)
{
    wl_op *conv = &g->ops[c];
    if (conv->n_inputs >= 3 && conv->inputs[2] >= 0)
        return AS_OK;
    const char *weight_name = g->tensors[conv->inputs[1]].name;
    char *name = as_arena_printf(&g->arena, "%s.folded_bias", weight_name);
    for (int k = 2; name && wl_find_tensor(g, name) >= 0; k++)
        name = as_arena_printf(&g->arena, "%s.folded_bias%d", weight_name, k);
    int32_t *inputs = as_arena_alloc(&g->arena, 3 * sizeof *inputs);
    if (!name || !inputs)
        return as_fail(st, AS_ENOMEM, "%s: out of memory folding BatchNormalization", g->source);
    int32_t bias = wl_add_tensor(g, name, WL_TENSOR_WEIGHT, g->tensors[conv->inputs[1]].dtype, 1,
                                 &channels, st);
    if (bias < 0)
        return st ? st->code : AS_EINVAL;
    conv = &g->ops[c]; /* the tensor array may have moved, not the op array */
    g->tensors[bias].bits = g->tensors[conv->inputs[1]].bits;
    g->tensors[bias].precision_chosen = g->tensors[conv->inputs[1]].precision_chosen;
    g->tensors[bias].data_stripped = true;
    inputs[0] = conv->inputs[0];
    inputs[1] = conv->inputs[1];
    inputs[2] = bias;
    conv->inputs = inputs;
    conv->n_inputs = 3;
    return AS_OK;
}

as_code wl_fold_batchnorm(wl_graph *g, int *n_folded, as_status *st)
{
    int folded = 0;
    as_code rc = wl_graph_index(g, st);
    for (int32_t o = 0; rc == AS_OK && o < g->n_ops; o++) {
        wl_op *bn = &g->ops[o];
        if (bn->dead || bn->kind != WL_OP_BATCHNORM)
            continue;
        int32_t c = foldable_conv(g, bn);
        if (c < 0)
            continue;
        const wl_tensor *y = &g->tensors[bn->outputs[0]];
        if (!y->shape_known || y->rank < 2)
            continue;
        rc = ensure_bias(g, c, y->dims[1], st);
        if (rc != AS_OK)
            break;
        /* The conv now writes the BN's output; the BN and the conv's old
         * output drop out at compaction. */
        bn = &g->ops[o];
        g->ops[c].folded_bn = bn->name;
        g->ops[c].outputs[0] = bn->outputs[0];
        g->tensors[bn->outputs[0]].producer = c;
        bn->dead = true;
        folded++;
    }
    if (rc == AS_OK && folded > 0)
        rc = wl_graph_compact(g, st);
    if (rc == AS_OK && folded > 0)
        rc = wl_graph_infer(g, st);
    if (n_folded)
        *n_folded = folded;
    return rc;
}

/* ------------------------------------------------------------- fusability */

void wl_mark_fusable(wl_graph *g)
{
    if (!g->consumer_start && wl_graph_index(g, NULL) != AS_OK)
        return;
    for (int32_t o = 0; o < g->n_ops; o++) {
        wl_op *op = &g->ops[o];
        op->fusable = false;
        if (op->dead || op->folded || !wl_op_def_of(op->kind)->fusable)
            continue;
        /* Fusable when some data input is produced by a working op and read
         * by this op alone: the value never needs to leave the producer. */
        for (int i = 0; i < op->n_inputs && !op->fusable; i++) {
            int32_t t = op->inputs[i];
            if (t < 0 || g->tensors[t].producer < 0)
                continue;
            const wl_op *p = &g->ops[g->tensors[t].producer];
            op->fusable = !p->folded && wl_op_kind_category(p->kind) != WL_CAT_SHAPE &&
                          wl_consumer_count(g, t) == 1;
        }
    }
}

/* -------------------------------------------------------------- epilogues */

bool wl_op_does_work(const wl_op *op)
{
    wl_op_category c = wl_op_category_of(op); /* a node that copies its input is a view */
    return !op->dead && !op->folded && c != WL_CAT_VIEW && c != WL_CAT_SHAPE && c != WL_CAT_UNKNOWN;
}

int32_t wl_fused_output(const wl_graph *g, int32_t root)
{
    int32_t last = root;
    for (int32_t m = g->ops[root].epilogue_next; m >= 0; m = g->ops[m].epilogue_next)
        last = m;
    return g->ops[last].n_outputs > 0 ? g->ops[last].outputs[0] : -1;
}

int32_t wl_view_source(const wl_graph *g, int32_t t)
{
    for (int32_t hops = 0; t >= 0 && hops < g->n_ops; hops++) {
        int32_t p = g->tensors[t].producer;
        if (p < 0 || g->ops[p].dead || g->ops[p].n_inputs < 1 ||
            wl_op_category_of(&g->ops[p]) != WL_CAT_VIEW)
            return t;
        t = g->ops[p].inputs[0];
    }
    return t;
}

/* Whether op c is a live view (its output is its first input, reshaped). */
static bool is_view(const wl_op *c)
{
    return !c->dead && c->n_outputs == 1 && wl_op_category_of(c) == WL_CAT_VIEW;
}

/* An op that may run in another's epilogue: working, elementwise (one
 * fixed count of vector operations per output element) and with one
 * output. */
static bool epilogue_kind(const wl_op *op)
{
    return wl_op_does_work(op) && wl_op_def_of(op->kind)->fusable && op->n_outputs == 1 &&
           wl_op_vector_class(op->kind) == WL_VEC_PER_OUTPUT;
}

/* The root whose fused op E would extend: among E's inputs produced by a
 * working op (through a member, its root; through views, the tensor they
 * reshape: wl_view_source), the one computed last in
 * topological order, so that E's other inputs are ready when it streams;
 * -1 when none, or when another input comes from an op ordered after that
 * root (the fused op would then run before its operand exists in the
 * order the layers are listed and fused in).  position[] is each op's
 * place in g->order. */
static int32_t epilogue_target(const wl_graph *g, const wl_op *e, const int32_t *position)
{
    int32_t best = -1, best_position = -1;
    for (int i = 0; i < e->n_inputs; i++) {
        int32_t t = e->inputs[i], source = wl_view_source(g, t);
        int32_t p = source >= 0 ? g->tensors[source].producer : -1;
        if (p < 0 || !wl_op_does_work(&g->ops[p]) || wl_is_graph_output(g, t) ||
            wl_is_graph_output(g, source))
            continue;
        if (position[p] > best_position) {
            best_position = position[p];
            best = wl_fused_root(g, p);
        }
    }
    for (int i = 0; i < e->n_inputs && best >= 0; i++) {
        int32_t source = wl_view_source(g, e->inputs[i]);
        int32_t p = source >= 0 ? g->tensors[source].producer : -1;
        if (p >= 0 && wl_op_does_work(&g->ops[p]) && wl_fused_root(g, p) != best &&
            position[p] > position[best])
            return -1;
    }
    return best;
}

/* Whether tensor t, produced inside fused op `root`, is read by an op
 * outside it or is a graph output.  A view passes t on: t leaves when the
 * view's output does (a reshape between a layer and its activation moves
 * no data; the HF GPT-2 export has one after every Gemm). */
static bool leaves_fused_op(const wl_graph *g, int32_t root, int32_t t)
{
    if (wl_is_graph_output(g, t))
        return true;
    for (int32_t k = 0; k < wl_consumer_count(g, t); k++) {
        int32_t c = wl_consumer_list(g, t)[k];
        const wl_op *op = &g->ops[c];
        if (op->dead)
            continue;
        if (is_view(op) ? leaves_fused_op(g, root, op->outputs[0]) : wl_fused_root(g, c) != root)
            return true;
    }
    return false;
}

/* Whether fused op `root` lets exactly one tensor leave, and that one is
 * its last op's output: no intermediate crosses DRAM, and nothing outside
 * runs between its ops. */
static bool fused_op_closed(const wl_graph *g, int32_t root)
{
    for (int32_t m = root; m >= 0; m = g->ops[m].epilogue_next) {
        const wl_op *op = &g->ops[m];
        bool last = op->epilogue_next < 0;
        for (int i = 0; i < op->n_outputs; i++)
            if (op->outputs[i] >= 0 && !(last && i == 0) &&
                leaves_fused_op(g, root, op->outputs[i]))
                return false;
    }
    return true;
}

/* Detach the last epilogue op of root (which has one); returns it. */
static int32_t drop_last_epilogue_op(wl_graph *g, int32_t root)
{
    int32_t before = root;
    while (g->ops[g->ops[before].epilogue_next].epilogue_next >= 0)
        before = g->ops[before].epilogue_next;
    int32_t last = g->ops[before].epilogue_next;
    g->ops[before].epilogue_next = -1;
    g->ops[last].epilogue_of = -1;
    return last;
}

/*
 * The rule.  In topological order, an elementwise op E (epilogue_kind)
 * joins the fused op of the producer of one of its inputs -- the producer
 * computed last, so that E's other operands (a residual, a squeeze-excite
 * scale, a bias) are ready and are read as extra inputs while the output
 * streams -- when that input is not a graph output.  Joining builds
 * chains and small DAGs alike (SiLU's x * Sigmoid(x), GELU's Erf chain).
 * Then each fused op must be closed (fused_op_closed): only its last op's
 * output leaves it; if not, its epilogue ops are detached from the last
 * back until it is (a root alone always is), and the pass runs again with
 * each detached op barred from that root: it may then start a fused op
 * of its own (DenseNet's BN + Relu after a pooled tensor that later
 * concatenations read too).  Views between ops are seen through: a
 * tensor reshaped on its way from a layer to its activation stays inside.
 */
static int attach_pass(wl_graph *g, const int32_t *position, int32_t *tail, int32_t *barred)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        g->ops[o].epilogue_of = g->ops[o].epilogue_next = -1;
        tail[o] = o;
    }
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t e = g->order[k];
        if (!epilogue_kind(&g->ops[e]))
            continue;
        int32_t root = epilogue_target(g, &g->ops[e], position);
        if (root < 0 || root == barred[e])
            continue;
        g->ops[e].epilogue_of = root;
        g->ops[tail[root]].epilogue_next = e;
        tail[root] = e;
    }
    int detached = 0;
    for (int32_t k = 0; k < g->n_order; k++) {
        int32_t root = g->order[k];
        if (g->ops[root].epilogue_of >= 0)
            continue;
        while (g->ops[root].epilogue_next >= 0 && !fused_op_closed(g, root)) {
            barred[drop_last_epilogue_op(g, root)] = root;
            detached++;
        }
    }
    return detached;
}

/* Passes of attach_pass at most: each bars at least one (op, root) pair,
 * and a bar only matters along a chain of elementwise ops. */
#define MAX_ATTACH_PASSES 16

static as_code attach_epilogues(wl_graph *g, wl_epilogue_stats *stats, as_status *st)
{
    size_t n = (size_t)g->n_ops + 1;
    int32_t *position = malloc(n * sizeof *position), *tail = malloc(n * sizeof *tail);
    int32_t *barred = malloc(n * sizeof *barred);
    if (!position || !tail || !barred) {
        free(position);
        free(tail);
        free(barred);
        return as_fail(st, AS_ENOMEM, "%s: out of memory fusing epilogues", g->source);
    }
    for (int32_t o = 0; o < g->n_ops; o++)
        position[o] = barred[o] = -1;
    for (int32_t k = 0; k < g->n_order; k++)
        position[g->order[k]] = k;
    int detached = 1;
    for (int pass = 0; pass < MAX_ATTACH_PASSES && detached > 0; pass++)
        detached = attach_pass(g, position, tail, barred);
    for (int32_t o = 0; o < g->n_ops; o++) { /* an unfinished pass leaves ops alone */
        g->ops[o].fusable = false;
        if (detached > 0)
            g->ops[o].epilogue_of = g->ops[o].epilogue_next = -1;
    }
    for (int32_t root = 0; root < g->n_ops; root++) {
        if (g->ops[root].epilogue_of >= 0 || g->ops[root].epilogue_next < 0)
            continue;
        stats->n_fused_roots++;
        for (int32_t m = g->ops[root].epilogue_next; m >= 0; m = g->ops[m].epilogue_next) {
            g->ops[m].fusable = true;
            stats->n_epilogue++;
        }
    }
    free(position);
    free(tail);
    free(barred);
    return AS_OK;
}

as_code wl_fuse_epilogues(wl_graph *g, wl_epilogue_stats *stats, as_status *st)
{
    wl_epilogue_stats own;
    if (!stats)
        stats = &own;
    memset(stats, 0, sizeof *stats);
    as_code rc = wl_fold_batchnorm(g, &stats->n_folded_bn, st);
    if (rc == AS_OK)
        rc = wl_graph_index(g, st);
    return rc == AS_OK ? attach_epilogues(g, stats, st) : rc;
}

/* ---------------------------------------------------------------- pruning */

/* The operand of a compute op that holds its weights, or -1. */
static int32_t weight_operand(const wl_graph *g, const wl_op *op)
{
    for (int i = 0; i < op->n_inputs && i < 2; i++)
        if (op->inputs[i] >= 0 && g->tensors[op->inputs[i]].kind == WL_TENSOR_WEIGHT)
            return op->inputs[i];
    return -1;
}

/* The live op named name, or -1. */
static int32_t find_op(const wl_graph *g, const char *name)
{
    for (int32_t o = 0; o < g->n_ops; o++)
        if (!g->ops[o].dead && strcmp(g->ops[o].name, name) == 0)
            return o;
    return -1;
}

as_code wl_prune_unstructured(wl_graph *g, const char *op_name, double density, as_status *st)
{
    if (!(density > 0.0 && density <= 1.0))
        return as_fail(st, AS_EINVAL, "%s: weight density %g is outside (0, 1]", g->source,
                       density);
    if (op_name) {
        int32_t o = find_op(g, op_name);
        if (o < 0)
            return as_fail(st, AS_EINVAL, "%s: no layer named '%s'", g->source, op_name);
        int32_t w = wl_op_kind_category(g->ops[o].kind) == WL_CAT_COMPUTE
                        ? weight_operand(g, &g->ops[o])
                        : -1;
        if (w < 0)
            return as_fail(st, AS_EINVAL, WL_OP_FMT ": not a compute layer with weights",
                           WL_OP_ARGS(g, &g->ops[o]));
        g->tensors[w].density = density;
        return AS_OK;
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (g->ops[o].dead || wl_op_kind_category(g->ops[o].kind) != WL_CAT_COMPUTE)
            continue;
        int32_t w = weight_operand(g, &g->ops[o]);
        if (w >= 0)
            g->tensors[w].density = density;
    }
    return AS_OK;
}

/*
 * Channel pruning.  Removing output channels of a conv is legal when every
 * path from its output reaches, through per-channel ops only, a consumer
 * that can drop the matching input channels: a dense conv or Gemm-free
 * conv (its weights lose input channels) or a depthwise conv (which loses
 * the same channels and passes them on).  A residual Add, a Concat, a
 * broadcast Mul or a graph output fixes the channel count and blocks it.
 * A plan lists the (tensor, axis) edits and the depthwise ops whose group
 * shrinks; it is built completely before anything is changed.
 */
#define PLAN_MAX_EDITS 64
typedef struct prune_plan {
    int n_edits;
    int32_t tensor[PLAN_MAX_EDITS];
    int axis[PLAN_MAX_EDITS];
    int n_groups;
    int32_t group_op[PLAN_MAX_EDITS];
} prune_plan;

static bool plan_edit(prune_plan *p, int32_t tensor, int axis)
{
    if (tensor < 0)
        return true;
    if (p->n_edits == PLAN_MAX_EDITS)
        return false;
    p->tensor[p->n_edits] = tensor;
    p->axis[p->n_edits++] = axis;
    return true;
}

/* A weight may shrink only when no other op reads it. */
static bool private_weight(const wl_graph *g, int32_t t)
{
    return t < 0 || (g->tensors[t].kind == WL_TENSOR_WEIGHT && wl_consumer_count(g, t) == 1);
}

static bool plan_consumers(const wl_graph *g, int32_t t, prune_plan *p, int depth);

/* Plan the edits for consumer op c reading the pruned channels in t. */
static bool plan_consumer(const wl_graph *g, int32_t c, int32_t t, prune_plan *p, int depth)
{
    const wl_op *op = &g->ops[c];
    if (op->n_inputs < 1 || op->inputs[0] != t)
        return false; /* the channels arrive as a weight or a second operand */
    for (int i = 1; i < op->n_inputs; i++)
        if (op->inputs[i] == t)
            return false;
    if (op->kind == WL_OP_CONV) {
        const wl_tensor *x = &g->tensors[t];
        int64_t channels = x->shape_known && x->rank >= 2 ? x->dims[1] : -1;
        if (!private_weight(g, op->inputs[1]))
            return false;
        if (op->attrs.group == 1)
            return plan_edit(p, op->inputs[1], 1);
        if (op->attrs.group != channels || g->tensors[op->inputs[1]].dims[0] != channels)
            return false; /* grouped but not depthwise with multiplier 1 */
        if (p->n_groups == PLAN_MAX_EDITS ||
            (op->n_inputs > 2 && !private_weight(g, op->inputs[2])))
            return false;
        p->group_op[p->n_groups++] = c;
        return plan_edit(p, op->inputs[1], 0) &&
               plan_edit(p, op->n_inputs > 2 ? op->inputs[2] : -1, 0) &&
               plan_consumers(g, op->outputs[0], p, depth + 1);
    }
    if (op->kind == WL_OP_BATCHNORM) {
        for (int i = 1; i < op->n_inputs && i <= 4; i++)
            if (!private_weight(g, op->inputs[i]) || !plan_edit(p, op->inputs[i], 0))
                return false;
        return plan_consumers(g, op->outputs[0], p, depth + 1);
    }
    if (wl_op_kind_category(op->kind) == WL_CAT_UNARY && op->n_outputs == 1) {
        for (int i = 1; i < op->n_inputs; i++) /* Clip bounds must be scalars */
            if (op->inputs[i] >= 0 && wl_tensor_elements(&g->tensors[op->inputs[i]]) != 1)
                return false;
        return plan_consumers(g, op->outputs[0], p, depth + 1);
    }
    return false;
}

static bool plan_consumers(const wl_graph *g, int32_t t, prune_plan *p, int depth)
{
    if (depth > 16 || wl_is_graph_output(g, t) || wl_consumer_count(g, t) == 0)
        return false;
    for (int32_t k = 0; k < wl_consumer_count(g, t); k++)
        if (!plan_consumer(g, wl_consumer_list(g, t)[k], t, p, depth))
            return false;
    return true;
}

/* The plan for pruning the output channels of conv o; false when blocked. */
static bool plan_conv(const wl_graph *g, int32_t o, prune_plan *p)
{
    const wl_op *op = &g->ops[o];
    memset(p, 0, sizeof *p);
    if (op->dead || op->kind != WL_OP_CONV || op->attrs.group != 1 || op->n_inputs < 2 ||
        !private_weight(g, op->inputs[1]))
        return false;
    if (!plan_edit(p, op->inputs[1], 0))
        return false;
    if (op->n_inputs > 2 && (!private_weight(g, op->inputs[2]) || !plan_edit(p, op->inputs[2], 0)))
        return false;
    return plan_consumers(g, op->outputs[0], p, 0);
}

static void apply_plan(wl_graph *g, const prune_plan *p, int64_t channels)
{
    for (int i = 0; i < p->n_edits; i++)
        g->tensors[p->tensor[i]].dims[p->axis[i]] = channels;
    for (int i = 0; i < p->n_groups; i++)
        g->ops[p->group_op[i]].attrs.group = channels;
}

as_code wl_prune_channels(wl_graph *g, const char *op_name, double keep, int *n_pruned,
                          as_status *st)
{
    if (!(keep > 0.0 && keep <= 1.0))
        return as_fail(st, AS_EINVAL, "%s: channel keep fraction %g is outside (0, 1]", g->source,
                       keep);
    as_code rc = wl_graph_index(g, st);
    if (rc != AS_OK)
        return rc;
    int pruned = 0;
    int32_t only = -1;
    if (op_name) {
        only = find_op(g, op_name);
        if (only < 0)
            return as_fail(st, AS_EINVAL, "%s: no layer named '%s'", g->source, op_name);
    }
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (only >= 0 && o != only)
            continue;
        prune_plan plan;
        if (!plan_conv(g, o, &plan)) {
            if (only >= 0)
                return as_fail(st, AS_EINVAL,
                               WL_OP_FMT ": its output channels cannot shrink: a residual Add, a "
                                         "Concat, a broadcast operand or a graph output depends on "
                                         "their number",
                               WL_OP_ARGS(g, &g->ops[o]));
            continue;
        }
        int64_t channels = g->tensors[g->ops[o].inputs[1]].dims[0];
        int64_t kept = (int64_t)ceil(keep * (double)channels);
        if (kept < 1)
            kept = 1;
        if (kept < channels) {
            apply_plan(g, &plan, kept);
            pruned++;
        }
    }
    if (n_pruned)
        *n_pruned = pruned;
    return pruned ? wl_graph_infer(g, st) : AS_OK;
}
