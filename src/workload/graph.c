/*
 * graph.c -- construction, indexing and compaction of workload graphs, and
 * the name tables of types and ops (see workload.h).
 */
#include "ops_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- name tables */

static const struct {
    const char *name;
    wl_op_category category;
} op_table[WL_OP_COUNT] = {
#define WL_X_TABLE(e, s, c) [WL_OP_##e] = {s, c},
    WL_OP_LIST(WL_X_TABLE)
#undef WL_X_TABLE
};

const char *wl_op_kind_name(wl_op_kind k)
{
    return (unsigned)k < WL_OP_COUNT ? op_table[k].name : "?";
}

wl_op_category wl_op_kind_category(wl_op_kind k)
{
    return (unsigned)k < WL_OP_COUNT ? op_table[k].category : WL_CAT_UNKNOWN;
}

wl_op_category wl_op_category_of(const wl_op *op)
{
    return op->identity ? WL_CAT_VIEW : wl_op_kind_category(op->kind);
}

wl_op_kind wl_op_kind_from_name(const char *onnx_op_type)
{
    for (int k = 0; k < WL_OP_UNKNOWN; k++)
        if (strcmp(op_table[k].name, onnx_op_type) == 0)
            return (wl_op_kind)k;
    return WL_OP_UNKNOWN;
}

const char *wl_op_category_name(wl_op_category c)
{
    static const char *const names[] = {
        [WL_CAT_COMPUTE] = "compute",     [WL_CAT_UNARY] = "unary",     [WL_CAT_BINARY] = "binary",
        [WL_CAT_NORM] = "norm",           [WL_CAT_REDUCE] = "reduce",   [WL_CAT_POOL] = "pool",
        [WL_CAT_MOVE] = "move",           [WL_CAT_VIEW] = "view",       [WL_CAT_SHAPE] = "shape",
        [WL_CAT_TRANSFORM] = "transform", [WL_CAT_UNKNOWN] = "unknown",
    };
    return (unsigned)c <= WL_CAT_UNKNOWN ? names[c] : "?";
}

static const struct {
    const char *name;
    int bits;
    bool is_float;
} dtype_table[] = {
    [WL_DTYPE_UNDEFINED] = {"undefined", 0, false},
    [WL_DTYPE_F32] = {"float32", 32, true},
    [WL_DTYPE_U8] = {"uint8", 8, false},
    [WL_DTYPE_I8] = {"int8", 8, false},
    [WL_DTYPE_U16] = {"uint16", 16, false},
    [WL_DTYPE_I16] = {"int16", 16, false},
    [WL_DTYPE_I32] = {"int32", 32, false},
    [WL_DTYPE_I64] = {"int64", 64, false},
    [WL_DTYPE_STRING] = {"string", 0, false},
    [WL_DTYPE_BOOL] = {"bool", 8, false},
    [WL_DTYPE_F16] = {"float16", 16, true},
    [WL_DTYPE_F64] = {"float64", 64, true},
    [WL_DTYPE_U32] = {"uint32", 32, false},
    [WL_DTYPE_U64] = {"uint64", 64, false},
    [WL_DTYPE_BF16] = {"bfloat16", 16, true},
};
enum { DTYPE_TABLE_SIZE = sizeof dtype_table / sizeof dtype_table[0] };

bool wl_dtype_valid(int code)
{
    return code >= 0 && code < DTYPE_TABLE_SIZE && dtype_table[code].name != NULL;
}

int wl_dtype_bits(wl_dtype t)
{
    return wl_dtype_valid((int)t) ? dtype_table[t].bits : 0;
}

const char *wl_dtype_name(wl_dtype t)
{
    return wl_dtype_valid((int)t) ? dtype_table[t].name : "?";
}

bool wl_dtype_is_float(wl_dtype t)
{
    return wl_dtype_valid((int)t) && dtype_table[t].is_float;
}

bool wl_dtype_is_weight(wl_dtype t)
{
    return wl_dtype_is_float(t) || t == WL_DTYPE_I8 || t == WL_DTYPE_U8;
}

const char *wl_dim_name(wl_dim d)
{
    static const char *const names[WL_NDIMS] = {"N", "G", "C", "M", "P", "Q", "R", "S"};
    return (unsigned)d < WL_NDIMS ? names[d] : "?";
}

void wl_attrs_default(wl_attrs *a, wl_op_kind kind)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < WL_MAX_SPATIAL; i++)
        a->strides[i] = a->dilations[i] = 1;
    a->group = 1;
    a->keepdims = 1;
    a->alpha = 1.0;
    a->beta = 1.0;
    a->epsilon = 1e-5;
    a->ratio = 0.5;
    a->mode_crd = 0;
    a->axis = 0;
    const wl_op_def *def = wl_op_def_of(kind);
    if (def->defaults)
        def->defaults(a);
}

/* ------------------------------------------------------------- tensors */

int64_t wl_tensor_elements(const wl_tensor *t)
{
    if (!t->shape_known)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (!as_mul_i64(n, t->dims[i], &n))
            return -1;
    return n;
}

int64_t wl_tensor_bytes(const wl_tensor *t)
{
    int64_t n = wl_tensor_elements(t);
    if (n < 0)
        return -1;
    /* bits * n / 8 rounded up, without overflowing for large n. */
    return n / 8 * t->bits + (n % 8 * t->bits + 7) / 8;
}

const char *wl_shape_str(const wl_tensor *t, char *buf, size_t size)
{
    if (!t->shape_known) {
        snprintf(buf, size, "[?]");
        return buf;
    }
    size_t used = 0;
    int n = snprintf(buf, size, "[");
    for (int i = 0; i < t->rank && n >= 0 && (used += (size_t)n) < size; i++)
        n = snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)t->dims[i]);
    if (n >= 0 && (used += (size_t)n) < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

bool wl_is_graph_output(const wl_graph *g, int32_t t)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            return true;
    return false;
}

bool wl_tensor_is_known(const wl_tensor *t)
{
    return t->kind == WL_TENSOR_CONSTANT || t->ivalues || t->fvalues || t->known_unvalued;
}

/* --------------------------------------------------------- construction */

wl_graph *wl_graph_new(const char *name, const char *source)
{
    wl_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    as_arena_init(&g->arena);
    as_strmap_init(&g->tensor_by_name);
    g->name = as_arena_strdup(&g->arena, name ? name : "model");
    g->source = as_arena_strdup(&g->arena, source ? source : g->name);
    g->opset = 13;
    if (!g->name || !g->source) {
        wl_graph_free(g);
        return NULL;
    }
    return g;
}

/* Drop what wl_graph_index derived; indices may be about to change. */
static void drop_index(wl_graph *g)
{
    free(g->order);
    free(g->consumer_start);
    free(g->consumers);
    g->order = g->consumer_start = g->consumers = NULL;
    g->n_order = 0;
}

void wl_graph_free(wl_graph *g)
{
    if (!g)
        return;
    drop_index(g);
    free(g->tensors);
    free(g->ops);
    free(g->inputs);
    free(g->outputs);
    free(g->warnings);
    as_strmap_free(&g->tensor_by_name);
    as_arena_free(&g->arena);
    free(g);
}

/* Make room for one more item in a growable array of the graph (a T **)
 * holding count items, its counts being int32_t; false when out of
 * memory or full. */
static bool reserve_one(void *items_ptr, int64_t *capacity, int32_t count, size_t item_size)
{
    return count < INT32_MAX && as_vec_reserve(items_ptr, capacity, (int64_t)count + 1, item_size);
}

int32_t wl_add_tensor(wl_graph *g, const char *name, wl_tensor_kind kind, wl_dtype dtype, int rank,
                      const int64_t *dims, as_status *st)
{
    if (!name || !*name) {
        as_fail(st, AS_EINVAL, "%s: a tensor has an empty name", g->source);
        return -1;
    }
    if (as_strmap_get(&g->tensor_by_name, name) >= 0) {
        as_fail(st, AS_EINVAL, "%s: tensor '%s' is defined twice", g->source, name);
        return -1;
    }
    if (dims && (rank < 0 || rank > WL_MAX_RANK)) {
        as_fail(st, AS_EINVAL, "%s: tensor '%s' has rank %d; at most %d is supported", g->source,
                name, rank, WL_MAX_RANK);
        return -1;
    }
    for (int i = 0; dims && i < rank; i++) {
        if (dims[i] < 0) {
            as_fail(st, AS_EINVAL, "%s: tensor '%s' has negative dimension %d (%lld)", g->source,
                    name, i, (long long)dims[i]);
            return -1;
        }
    }
    if (!reserve_one(&g->tensors, &g->cap_tensors, g->n_tensors, sizeof *g->tensors)) {
        as_fail(st, AS_ENOMEM, "%s: out of memory adding tensor '%s'", g->source, name);
        return -1;
    }
    wl_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = as_arena_strdup(&g->arena, name);
    if (!t->name || !as_strmap_put(&g->tensor_by_name, t->name, g->n_tensors)) {
        as_fail(st, AS_ENOMEM, "%s: out of memory adding tensor '%s'", g->source, name);
        return -1;
    }
    t->kind = kind;
    t->dtype = dtype;
    t->bits = wl_dtype_bits(dtype);
    t->density = 1.0;
    t->producer = -1;
    if (dims) {
        t->shape_known = true;
        t->rank = rank;
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    }
    return g->n_tensors++;
}

int32_t wl_find_tensor(const wl_graph *g, const char *name)
{
    return as_strmap_get(&g->tensor_by_name, name);
}

int32_t wl_add_op(wl_graph *g, wl_op_kind kind, const char *name, const char *op_type, int n_inputs,
                  const int32_t *inputs, int n_outputs, const int32_t *outputs,
                  const wl_attrs *attrs, as_status *st)
{
    const char *shown = name && *name ? name : wl_op_kind_name(kind);
    if ((unsigned)kind >= WL_OP_COUNT || n_inputs < 0 || n_outputs < 1) {
        as_fail(st, AS_EINVAL, "%s: node %d '%s': invalid op (kind %d, %d inputs, %d outputs)",
                g->source, g->n_ops, shown, (int)kind, n_inputs, n_outputs);
        return -1;
    }
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i] < -1 || inputs[i] >= g->n_tensors) {
            as_fail(st, AS_EINVAL, "%s: node %d '%s': input %d refers to no tensor", g->source,
                    g->n_ops, shown, i);
            return -1;
        }
    }
    for (int i = 0; i < n_outputs; i++) {
        if (outputs[i] < 0 || outputs[i] >= g->n_tensors) {
            as_fail(st, AS_EINVAL, "%s: node %d '%s': output %d refers to no tensor", g->source,
                    g->n_ops, shown, i);
            return -1;
        }
        const wl_tensor *t = &g->tensors[outputs[i]];
        if (t->producer >= 0 || t->kind == WL_TENSOR_INPUT || t->kind == WL_TENSOR_WEIGHT) {
            as_fail(st, AS_EINVAL, "%s: node %d '%s': output '%s' is already defined elsewhere",
                    g->source, g->n_ops, shown, t->name);
            return -1;
        }
    }
    if (!reserve_one(&g->ops, &g->cap_ops, g->n_ops, sizeof *g->ops))
        goto oom;
    wl_op *op = &g->ops[g->n_ops];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->name = as_arena_strdup(&g->arena, name ? name : "");
    op->op_type = kind == WL_OP_UNKNOWN && op_type ? as_arena_strdup(&g->arena, op_type)
                                                   : wl_op_kind_name(kind);
    op->inputs = as_arena_memdup(&g->arena, inputs, (size_t)n_inputs * sizeof *inputs);
    op->outputs = as_arena_memdup(&g->arena, outputs, (size_t)n_outputs * sizeof *outputs);
    if (!op->name || !op->op_type || !op->inputs || !op->outputs)
        goto oom;
    op->n_inputs = n_inputs;
    op->n_outputs = n_outputs;
    if (attrs)
        op->attrs = *attrs;
    else
        wl_attrs_default(&op->attrs, kind);
    op->source_index = g->n_ops;
    op->epilogue_of = op->epilogue_next = -1;
    for (int i = 0; i < n_outputs; i++)
        g->tensors[outputs[i]].producer = g->n_ops;
    drop_index(g);
    return g->n_ops++;
oom:
    as_fail(st, AS_ENOMEM, "%s: out of memory adding node '%s'", g->source, shown);
    return -1;
}

bool wl_add_graph_input(wl_graph *g, int32_t tensor)
{
    if (!reserve_one(&g->inputs, &g->cap_inputs, g->n_inputs, sizeof *g->inputs))
        return false;
    g->inputs[g->n_inputs++] = tensor;
    return true;
}

bool wl_add_graph_output(wl_graph *g, int32_t tensor)
{
    if (!reserve_one(&g->outputs, &g->cap_outputs, g->n_outputs, sizeof *g->outputs))
        return false;
    g->outputs[g->n_outputs++] = tensor;
    return true;
}

void wl_warn(wl_graph *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[AS_MSG_BYTES];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!reserve_one(&g->warnings, &g->cap_warnings, g->n_warnings, sizeof *g->warnings))
        return;
    const char *copy = as_arena_strdup(&g->arena, buf);
    if (copy)
        g->warnings[g->n_warnings++] = copy;
}

/* ------------------------------------------------------------- indexing */

/* A tensor is available before any op runs when it is fed or stored. */
static bool is_source_tensor(const wl_tensor *t)
{
    return t->kind == WL_TENSOR_INPUT || t->kind == WL_TENSOR_WEIGHT ||
           t->kind == WL_TENSOR_CONSTANT;
}

/* Consumer lists in CSR form: count per tensor, prefix sums, then fill. */
static as_code build_consumers(wl_graph *g, as_status *st)
{
    g->consumer_start = calloc((size_t)g->n_tensors + 1, sizeof *g->consumer_start);
    if (!g->consumer_start)
        return as_fail(st, AS_ENOMEM, "%s: out of memory indexing the graph", g->source);
    int64_t total = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead)
            continue;
        for (int i = 0; i < op->n_inputs; i++)
            if (op->inputs[i] >= 0) {
                g->consumer_start[op->inputs[i] + 1]++;
                total++;
            }
    }
    for (int32_t t = 0; t < g->n_tensors; t++)
        g->consumer_start[t + 1] += g->consumer_start[t];
    g->consumers = malloc((size_t)(total ? total : 1) * sizeof *g->consumers);
    int32_t *fill = malloc(((size_t)g->n_tensors + 1) * sizeof *fill);
    if (!g->consumers || !fill) {
        free(fill);
        return as_fail(st, AS_ENOMEM, "%s: out of memory indexing the graph", g->source);
    }
    memcpy(fill, g->consumer_start, ((size_t)g->n_tensors + 1) * sizeof *fill);
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead)
            continue;
        for (int i = 0; i < op->n_inputs; i++) {
            int32_t t = op->inputs[i];
            /* An op reading a tensor twice (x * x) is listed once. */
            if (t < 0 || (fill[t] > g->consumer_start[t] && g->consumers[fill[t] - 1] == o))
                continue;
            g->consumers[fill[t]++] = o;
        }
    }
    /* Close the gaps left by de-duplicated entries: recompute counts. */
    int32_t w = 0;
    for (int32_t t = 0; t < g->n_tensors; t++) {
        int32_t begin = g->consumer_start[t], end = fill[t];
        g->consumer_start[t] = w;
        for (int32_t k = begin; k < end; k++)
            g->consumers[w++] = g->consumers[k];
    }
    g->consumer_start[g->n_tensors] = w;
    free(fill);
    return AS_OK;
}

/* Name of an op for messages: "node 12 'name' (Conv)". */
static void describe_op(const wl_graph *g, int32_t o, char *buf, size_t size)
{
    const wl_op *op = &g->ops[o];
    snprintf(buf, size, "node %d '%s' (%s)", op->source_index, op->name, op->op_type);
}

/* Every op input must be produced by a live op or be a source tensor. */
static as_code check_dangling(wl_graph *g, as_status *st)
{
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead)
            continue;
        for (int i = 0; i < op->n_inputs; i++) {
            int32_t t = op->inputs[i];
            if (t < 0)
                continue;
            const wl_tensor *tt = &g->tensors[t];
            bool produced = tt->producer >= 0 && !g->ops[tt->producer].dead;
            if (!produced && !is_source_tensor(tt)) {
                char who[AS_MSG_BYTES / 2];
                describe_op(g, o, who, sizeof who);
                return as_fail(st, AS_EINVAL,
                               "%s: %s: input '%s' is not produced by any node, graph input or "
                               "initializer",
                               g->source, who, tt->name);
            }
        }
    }
    for (int32_t i = 0; i < g->n_outputs; i++) {
        const wl_tensor *tt = &g->tensors[g->outputs[i]];
        if (!(tt->producer >= 0 && !g->ops[tt->producer].dead) && !is_source_tensor(tt))
            return as_fail(st, AS_EINVAL, "%s: graph output '%s' is produced by no node", g->source,
                           tt->name);
    }
    return AS_OK;
}

/*
 * Kahn's algorithm with the ready set kept as a min-heap of op indices, so
 * that among ops ready at the same time the one added first runs first: a
 * graph whose ops are already in a valid order keeps that order exactly.
 */
static void heap_push(int32_t *heap, int32_t *n, int32_t v)
{
    int32_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > v) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = v;
}

static int32_t heap_pop(int32_t *heap, int32_t *n)
{
    int32_t top = heap[0], last = heap[--*n], i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= last)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n > 0)
        heap[i] = last;
    return top;
}

/* Number of distinct live producers an op waits for. */
static int32_t pending_inputs(const wl_graph *g, const wl_op *op)
{
    int32_t pending = 0;
    for (int i = 0; i < op->n_inputs; i++) {
        int32_t t = op->inputs[i];
        if (t < 0 || g->tensors[t].producer < 0 || g->ops[g->tensors[t].producer].dead)
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = op->inputs[j] == t;
        pending += !seen;
    }
    return pending;
}

static as_code topo_sort(wl_graph *g, as_status *st)
{
    int32_t *pending = malloc(((size_t)g->n_ops + 1) * sizeof *pending);
    int32_t *heap = malloc(((size_t)g->n_ops + 1) * sizeof *heap);
    g->order = malloc(((size_t)g->n_ops + 1) * sizeof *g->order);
    if (!pending || !heap || !g->order) {
        free(pending);
        free(heap);
        return as_fail(st, AS_ENOMEM, "%s: out of memory sorting the graph", g->source);
    }
    int32_t n_heap = 0, n_live = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (g->ops[o].dead)
            continue;
        n_live++;
        pending[o] = pending_inputs(g, &g->ops[o]);
        if (pending[o] == 0)
            heap_push(heap, &n_heap, o);
    }
    g->n_order = 0;
    while (n_heap > 0) {
        int32_t o = heap_pop(heap, &n_heap);
        g->order[g->n_order++] = o;
        const wl_op *op = &g->ops[o];
        for (int k = 0; k < op->n_outputs; k++) {
            int32_t t = op->outputs[k];
            for (int32_t c = 0; c < wl_consumer_count(g, t); c++) {
                int32_t consumer = wl_consumer_list(g, t)[c];
                if (--pending[consumer] == 0)
                    heap_push(heap, &n_heap, consumer);
            }
        }
    }
    as_code rc = AS_OK;
    if (g->n_order < n_live) {
        /* Every op left with pending inputs lies on or behind a cycle;
         * name the first one in source order. */
        for (int32_t o = 0; o < g->n_ops; o++) {
            if (!g->ops[o].dead && pending[o] > 0) {
                char who[AS_MSG_BYTES / 2];
                describe_op(g, o, who, sizeof who);
                rc = as_fail(st, AS_EINVAL,
                             "%s: the graph has a cycle: %s depends on its own output", g->source,
                             who);
                break;
            }
        }
    }
    free(pending);
    free(heap);
    return rc;
}

as_code wl_graph_index(wl_graph *g, as_status *st)
{
    drop_index(g);
    as_code rc = check_dangling(g, st);
    if (rc == AS_OK)
        rc = build_consumers(g, st);
    if (rc == AS_OK)
        rc = topo_sort(g, st);
    if (rc != AS_OK)
        drop_index(g);
    return rc;
}

/* ------------------------------------------------------------ compaction */

as_code wl_graph_compact(wl_graph *g, as_status *st)
{
    /* A tensor survives when a live op touches it or the graph lists it. */
    int32_t *new_index = malloc(((size_t)g->n_tensors + 1) * sizeof *new_index);
    if (!new_index)
        return as_fail(st, AS_ENOMEM, "%s: out of memory compacting the graph", g->source);
    for (int32_t t = 0; t < g->n_tensors; t++)
        new_index[t] = -1;
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->dead)
            continue;
        for (int i = 0; i < op->n_inputs; i++)
            if (op->inputs[i] >= 0)
                new_index[op->inputs[i]] = 0;
        for (int i = 0; i < op->n_outputs; i++)
            new_index[op->outputs[i]] = 0;
    }
    for (int32_t i = 0; i < g->n_inputs; i++)
        new_index[g->inputs[i]] = 0;
    for (int32_t i = 0; i < g->n_outputs; i++)
        new_index[g->outputs[i]] = 0;

    int32_t n_tensors = 0;
    as_strmap_free(&g->tensor_by_name);
    for (int32_t t = 0; t < g->n_tensors; t++) {
        if (new_index[t] < 0)
            continue;
        new_index[t] = n_tensors;
        g->tensors[n_tensors] = g->tensors[t];
        g->tensors[n_tensors].producer = -1; /* set again from the live ops below */
        if (!as_strmap_put(&g->tensor_by_name, g->tensors[n_tensors].name, n_tensors)) {
            free(new_index);
            return as_fail(st, AS_ENOMEM, "%s: out of memory compacting the graph", g->source);
        }
        n_tensors++;
    }
    g->n_tensors = n_tensors;

    int32_t n_ops = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (g->ops[o].dead)
            continue;
        wl_op *op = &g->ops[n_ops];
        *op = g->ops[o];
        op->epilogue_of = op->epilogue_next = -1; /* op indices change: attach again */
        for (int i = 0; i < op->n_inputs; i++)
            if (op->inputs[i] >= 0)
                op->inputs[i] = new_index[op->inputs[i]];
        for (int i = 0; i < op->n_outputs; i++) {
            op->outputs[i] = new_index[op->outputs[i]];
            g->tensors[op->outputs[i]].producer = n_ops;
        }
        n_ops++;
    }
    g->n_ops = n_ops;
    for (int32_t i = 0; i < g->n_inputs; i++)
        g->inputs[i] = new_index[g->inputs[i]];
    for (int32_t i = 0; i < g->n_outputs; i++)
        g->outputs[i] = new_index[g->outputs[i]];
    free(new_index);
    drop_index(g);
    return wl_graph_index(g, st);
}
