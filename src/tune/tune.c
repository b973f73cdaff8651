/*
 * tune.c -- the tuning driver: a model's conv layers, the measurement
 * history, and the loop that asks an engine for points, measures them and
 * keeps the best.  Engines (dcocomp.c, autotvm.c, chameleon.c) only
 * propose; everything they learn from is in the history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "tune_private.h"

static const tn_engine_ops *const engine_ops[TN_ENGINES] = {
    [TN_ENGINE_DCOCOMP] = &tn_dcocomp_ops,
    [TN_ENGINE_AUTOTVM] = &tn_autotvm_ops,
    [TN_ENGINE_CHAMELEON] = &tn_chameleon_ops,
};

const char *tn_engine_name(tn_engine e)
{
    static const char *const names[TN_ENGINES] = {"dcocomp", "autotvm", "chameleon"};
    return e >= 0 && e < TN_ENGINES ? names[e] : "?";
}

/* The paper's budget (1,000 measurements per layer), with confidence
 * sampling, on VTA++'s hardware knobs under the PYNQ-Z1's resources. */
void tn_options_default(tn_options *o)
{
    *o = (tn_options){.engine = TN_ENGINE_DCOCOMP,
                      .trials = 1000,
                      .seed = 1,
                      .confidence_sampling = true,
                      .vary_hardware = true,
                      .budget = tn_budget_find("pynq")};
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------------- layers */

/*
 * A conv problem in VTA's terms.  The input extent follows from the output
 * extent, stride, kernel and padding: h = (p - 1) * stride + r - pad_top -
 * pad_bottom.
 */
as_code tn_conv_from_problem(const wl_problem *p, const char *name, tn_conv *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name ? name : "conv");
    if (p->kind != WL_PROBLEM_CONV || p->bound[WL_DIM_G] != 1)
        return as_fail(st, AS_EINVAL, "%s: VTA's conv2d template runs dense convolutions only",
                       out->name);
    if (p->dilation[0] != 1 || p->dilation[1] != 1)
        return as_fail(st, AS_EINVAL, "%s: VTA's conv2d template has no dilation", out->name);
    out->n = p->bound[WL_DIM_N];
    out->c = p->bound[WL_DIM_C];
    out->k = p->bound[WL_DIM_M];
    out->p = p->bound[WL_DIM_P];
    out->q = p->bound[WL_DIM_Q];
    out->r = p->bound[WL_DIM_R];
    out->s = p->bound[WL_DIM_S];
    out->stride_h = p->stride[0];
    out->stride_w = p->stride[1];
    out->pad_h = p->pad[0];
    out->pad_w = p->pad[1];
    out->h = (out->p - 1) * out->stride_h + out->r - p->pad[0] - p->pad[2];
    out->w = (out->q - 1) * out->stride_w + out->s - p->pad[1] - p->pad[3];
    out->macs = wl_problem_macs(p);
    out->count = 1;
    return AS_OK;
}

/* Two layers are the same problem when every field but the name and the
 * count agrees. */
static bool conv_same(const tn_conv *a, const tn_conv *b)
{
    tn_conv x = *a, y = *b;
    memset(x.name, 0, sizeof x.name);
    memset(y.name, 0, sizeof y.name);
    x.count = y.count = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

/* The input's height and width from the graph when it knows them: a
 * strided conv may leave its last rows unread, which the problem (the
 * rows the window reads) does not show. */
static void input_extent(const wl_graph *g, const wl_op *op, tn_conv *conv)
{
    const wl_tensor *in =
        op->n_inputs > 0 && op->inputs[0] >= 0 ? &g->tensors[op->inputs[0]] : NULL;
    if (in && in->shape_known && in->rank == 4) {
        conv->h = in->dims[2];
        conv->w = in->dims[3];
    }
}

/* The smallest BLOCK_IN the hardware knobs offer (space.c's range). */
#define TN_MIN_BLOCK 8

as_code tn_model_layers(const wl_graph *g, tn_conv **out, int *n, int *skipped, as_status *st)
{
    *out = NULL;
    *n = *skipped = 0;
    tn_conv *layers = NULL;
    int64_t count = 0, cap = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        const wl_op *op = &g->ops[i];
        if (op->dead || op->folded || op->kind != WL_OP_CONV)
            continue;
        wl_problem p;
        if (wl_op_problem(g, i, &p, st) != AS_OK) {
            free(layers);
            return st->code;
        }
        tn_conv conv;
        as_status ignored = {0};
        bool runs = tn_conv_from_problem(&p, op->name, &conv, &ignored) == AS_OK;
        input_extent(g, op, &conv);
        if (!runs || conv.c < TN_MIN_BLOCK || conv.c % TN_MIN_BLOCK || conv.k % TN_MIN_BLOCK) {
            ++*skipped; /* the host runs it, as TVM's VTA flow runs the stem */
            continue;
        }
        int64_t same = 0;
        while (same < count && !conv_same(&layers[same], &conv))
            same++;
        if (same < count) {
            layers[same].count++;
            continue;
        }
        if (!as_vec_reserve(&layers, &cap, count + 1, sizeof *layers)) {
            free(layers);
            return as_fail(st, AS_ENOMEM, "out of memory listing the conv layers of %s", g->name);
        }
        layers[count++] = conv;
    }
    *out = layers;
    *n = (int)count;
    return AS_OK;
}

/* --------------------------------------------------------------- history */

static uint64_t point_hash(const tn_point *pt)
{
    uint64_t h = tn_point_hash(pt);
    return h ? h : 1; /* the table reserves hash 0 for empty slots */
}

static bool history_equal(const void *item, const void *key, const void *context)
{
    const tn_history *h = context;
    return tn_point_equal(&h->trials[*(const int64_t *)item].point, key);
}

int64_t tn_history_find(const tn_history *h, const tn_point *pt)
{
    const int64_t *i = as_table_find(&h->index, point_hash(pt), pt, history_equal, h);
    return i ? *i : -1;
}

static void history_init(tn_history *h)
{
    memset(h, 0, sizeof *h);
    h->best = -1;
    as_table_init(&h->index, sizeof(int64_t));
}

/* Append a measured trial (its point not yet in h). */
static bool history_add(tn_history *h, const tn_trial *t)
{
    if (!as_vec_reserve(&h->trials, &h->cap, h->n + 1, sizeof *h->trials))
        return false;
    h->trials[h->n] = *t;
    bool added;
    int64_t *slot =
        as_table_insert(&h->index, point_hash(&t->point), &t->point, history_equal, h, &added);
    if (!slot)
        return false;
    *slot = h->n;
    if (t->result.valid && (h->best < 0 || t->result.gflops > h->trials[h->best].result.gflops))
        h->best = h->n;
    h->n++;
    return true;
}

/* ---------------------------------------------------------------- driver */

/* Points per propose call: AutoTVM's plan size. */
#define TN_BATCH 64
/* Random draws tried for an unmeasured point before the space counts as
 * exhausted. */
#define TN_RANDOM_TRIES 4096

typedef struct layer_run {
    const tn_space *sp;
    const tn_options *o;
    tn_history history;
    as_rng rng; /* the driver's own draws (stall fallback) */
    void (*measured)(void *user, const tn_history *h);
    void *measured_user;
} layer_run;

/* Measure pt unless it is already in the history; false when out of
 * memory. */
static bool measure_new(layer_run *run, const tn_point *pt, bool *was_new)
{
    *was_new = tn_history_find(&run->history, pt) < 0;
    if (!*was_new)
        return true;
    tn_trial t = {.point = *pt};
    tn_space_measure(run->sp, pt, &t.result);
    if (!history_add(&run->history, &t))
        return false;
    if (run->measured)
        run->measured(run->measured_user, &run->history);
    return true;
}

static bool stopped(const tn_options *o)
{
    return o->stop_flag && *o->stop_flag;
}

/* The engine loop: propose, measure what is new, until the budget is
 * spent, the space is exhausted or the user stops. */
static as_code run_engine(layer_run *run, void *engine, const tn_engine_ops *ops, as_status *st)
{
    const tn_options *o = run->o;
    tn_point batch[TN_BATCH];
    int64_t budget = o->trials < tn_space_size(run->sp) ? o->trials : tn_space_size(run->sp);
    while (run->history.n < budget && !stopped(o)) {
        int want = (int)(budget - run->history.n < TN_BATCH ? budget - run->history.n : TN_BATCH);
        int proposed = ops->propose(engine, &run->history, batch, want);
        int fresh = 0;
        for (int i = 0; i < proposed && run->history.n < budget; i++) {
            bool was_new;
            if (!measure_new(run, &batch[i], &was_new))
                return as_fail(st, AS_ENOMEM, "out of memory tuning %s", run->sp->layer.name);
            fresh += was_new;
        }
        if (fresh == 0) {
            bool was_new;
            if (tn_fill_random(run->sp, &run->history, batch, 0, 1, TN_RANDOM_TRIES, &run->rng) ==
                0)
                break; /* (nearly) every point measured */
            if (!measure_new(run, &batch[0], &was_new))
                return as_fail(st, AS_ENOMEM, "out of memory tuning %s", run->sp->layer.name);
        }
    }
    return AS_OK;
}

/* The first trial (1-based) reaching 95 % of the best GFLOPS, 0 if none. */
static int64_t trials_to_95(const tn_history *h)
{
    if (h->best < 0)
        return 0;
    double target = 0.95 * h->trials[h->best].result.gflops;
    for (int64_t i = 0; i < h->n; i++)
        if (h->trials[i].result.valid && h->trials[i].result.gflops >= target)
            return i + 1;
    return 0;
}

static as_code tune_layer(const tn_space *sp, const tn_options *o, uint64_t stream,
                          void (*measured)(void *, const tn_history *), void *measured_user,
                          tn_layer_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->layer = sp->layer;
    out->best = -1;
    if (o->engine < 0 || o->engine >= TN_ENGINES)
        return as_fail(st, AS_EINVAL, "unknown tuning engine %d", (int)o->engine);
    double start = wall_now();
    layer_run run = {.sp = sp,
                     .o = o,
                     .rng = as_rng_stream(o->seed, 2 * stream + 1, AS_RNG_FROM_FIRST_OUTPUT),
                     .measured = measured,
                     .measured_user = measured_user};
    history_init(&run.history);
    as_rng engine_rng = as_rng_stream(o->seed, 2 * stream, AS_RNG_FROM_FIRST_OUTPUT);
    const tn_engine_ops *ops = engine_ops[o->engine];
    void *engine = NULL;
    as_code code = ops->init(&engine, sp, o, &engine_rng, st);
    if (code == AS_OK) {
        code = run_engine(&run, engine, ops, st);
        ops->free(engine);
    }
    as_table_free(&run.history.index);
    out->trials = run.history.trials;
    out->n_trials = run.history.n;
    out->best = run.history.best;
    out->trials_to_95 = trials_to_95(&run.history);
    out->wall_seconds = wall_now() - start;
    out->interrupted = stopped(o);
    tn_point fallback;
    tn_space_default(sp, &fallback);
    tn_space_measure(sp, &fallback, &out->fallback);
    return code;
}

const tn_result *tn_layer_outcome(const tn_layer_result *r)
{
    if (r->best >= 0)
        return &r->trials[r->best].result;
    return r->fallback.valid ? &r->fallback : NULL;
}

as_code tn_tune_layer(const tn_space *sp, const tn_options *o, tn_layer_result *out, as_status *st)
{
    return tune_layer(sp, o, 0, NULL, NULL, out, st);
}

void tn_layer_result_free(tn_layer_result *r)
{
    free(r->trials);
    r->trials = NULL;
}

/* ----------------------------------------------------------------- model */

/* Progress of a whole model: each layer's trial count, reported (one
 * call at a time) as measurements arrive. */
typedef struct model_progress {
    const tn_options *o;
    int layer, layers;
    int64_t budget;
} model_progress;

static void report_measured(void *user, const tn_history *h)
{
    const model_progress *mp = user;
    if (!mp->o->progress)
        return;
    tn_progress p = {.layer = mp->layer,
                     .layers = mp->layers,
                     .trials = h->n,
                     .budget = mp->budget,
                     .best_gflops = h->best >= 0 ? h->trials[h->best].result.gflops : 0};
#pragma omp critical(tn_progress)
    mp->o->progress(mp->o->progress_user, &p);
}

/* ----------------------------------------------- one design for a model */

/* The hardware knobs of a point (the same choices in every layer's space:
 * the hardware ranges do not depend on the layer). */
#define TN_HW_KNOBS (TN_KNOBS - TN_KNOB_BATCH)

typedef struct hw_best {
    uint8_t choice[TN_HW_KNOBS];
    double seconds; /* the layer's fastest measured trial on this hardware */
} hw_best;

static bool hw_equal(const void *item, const void *key, const void *context)
{
    (void)context;
    return memcmp(((const hw_best *)item)->choice, key, TN_HW_KNOBS) == 0;
}

static uint64_t hw_hash(const uint8_t *choice)
{
    uint64_t h = as_hash_bytes(choice, TN_HW_KNOBS, AS_HASH_SEED);
    return h ? h : 1;
}

/* tables[i]: layer i's fastest valid trial per hardware. */
static bool index_hardware(const tn_model_result *r, as_table *tables)
{
    for (int i = 0; i < r->n_layers; i++) {
        as_table_init(&tables[i], sizeof(hw_best));
        for (int64_t t = 0; t < r->layers[i].n_trials; t++) {
            const tn_trial *trial = &r->layers[i].trials[t];
            if (!trial->result.valid)
                continue;
            const uint8_t *key = &trial->point.choice[TN_KNOB_BATCH];
            bool added;
            hw_best *b = as_table_insert(&tables[i], hw_hash(key), key, hw_equal, NULL, &added);
            if (!b)
                return false;
            if (added || trial->result.seconds < b->seconds) {
                memcpy(b->choice, key, TN_HW_KNOBS);
                b->seconds = trial->result.seconds;
            }
        }
    }
    return true;
}

/*
 * The fastest single hardware for the whole model among what was measured:
 * a design every layer has a valid trial on (so, one of layer 0's), each
 * layer at its best trial there.  No new measurement is made.
 */
static void shared_hardware(tn_model_result *r)
{
    r->has_shared = false;
    as_table *tables = calloc((size_t)r->n_layers, sizeof *tables);
    if (!tables)
        return;
    if (index_hardware(r, tables))
        for (size_t slot = 0; slot < tables[0].capacity; slot++) {
            const hw_best *candidate = as_table_slot(&tables[0], slot);
            if (!candidate)
                continue;
            double seconds = 0;
            for (int i = 0; i < r->n_layers && isfinite(seconds); i++) {
                const hw_best *b = as_table_find(&tables[i], hw_hash(candidate->choice),
                                                 candidate->choice, hw_equal, NULL);
                seconds += b ? b->seconds * r->layers[i].layer.count : INFINITY;
            }
            if (isfinite(seconds) && (!r->has_shared || seconds < r->shared_seconds)) {
                r->has_shared = true;
                r->shared_seconds = seconds;
                memset(&r->shared_hw, 0, sizeof r->shared_hw);
                memcpy(&r->shared_hw.choice[TN_KNOB_BATCH], candidate->choice, TN_HW_KNOBS);
            }
        }
    r->shared_gflops = r->has_shared ? 2.0 * (double)r->macs / r->shared_seconds / 1e9 : 0;
    for (int i = 0; i < r->n_layers; i++)
        as_table_free(&tables[i]);
    free(tables);
}

/* Sum the tuned layers into the model's figures: each layer counted as
 * often as it occurs, at its best configuration. */
static void model_totals(tn_model_result *r)
{
    r->macs = 0;
    r->seconds = r->energy_pJ = 0;
    for (int i = 0; i < r->n_layers; i++) {
        const tn_layer_result *l = &r->layers[i];
        const tn_result *at = tn_layer_outcome(l);
        r->interrupted |= l->interrupted;
        r->macs += l->layer.macs * l->layer.count;
        r->seconds += at ? at->seconds * l->layer.count : INFINITY;
        r->energy_pJ += at ? at->energy_pJ * l->layer.count : INFINITY;
    }
    r->gflops =
        isfinite(r->seconds) && r->seconds > 0 ? 2.0 * (double)r->macs / r->seconds / 1e9 : 0;
    shared_hardware(r);
}

as_code tn_tune_model(const wl_graph *g, const tn_hw *base, const tn_options *o,
                      tn_model_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    if (!o->budget)
        return as_fail(st, AS_EINVAL, "tune: no resource budget given");
    tn_conv *convs;
    int n;
    as_code code = tn_model_layers(g, &convs, &n, &out->skipped_layers, st);
    if (code != AS_OK)
        return code;
    if (n == 0) {
        free(convs);
        return as_fail(st, AS_EINVAL, "%s has no conv layer that VTA runs", g->name);
    }
    out->layers = calloc((size_t)n, sizeof *out->layers);
    as_status *layer_status = calloc((size_t)n, sizeof *layer_status);
    if (!out->layers || !layer_status) {
        free(convs);
        free(layer_status);
        return as_fail(st, AS_ENOMEM, "out of memory tuning %s", g->name);
    }
    out->n_layers = n;
    double start = wall_now();
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++) {
        tn_space sp;
        model_progress mp = {.o = o, .layer = i, .layers = n, .budget = o->trials};
        if (tn_space_init(&sp, &convs[i], base, o->budget, o->vary_hardware, &layer_status[i]) ==
            AS_OK)
            tune_layer(&sp, o, (uint64_t)i, report_measured, &mp, &out->layers[i],
                       &layer_status[i]);
        if (o->layer_done && layer_status[i].code == AS_OK) {
#pragma omp critical(tn_progress)
            o->layer_done(o->progress_user, i, n, &out->layers[i]);
        }
    }
    out->wall_seconds = wall_now() - start;
    for (int i = 0; i < n && code == AS_OK; i++)
        if (layer_status[i].code != AS_OK) {
            *st = layer_status[i];
            code = st->code;
        }
    free(layer_status);
    free(convs);
    model_totals(out);
    if (code != AS_OK)
        tn_model_result_free(out);
    return code;
}

void tn_model_result_free(tn_model_result *r)
{
    for (int i = 0; i < r->n_layers; i++)
        tn_layer_result_free(&r->layers[i]);
    free(r->layers);
    r->layers = NULL;
    r->n_layers = 0;
}
