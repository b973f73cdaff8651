/*
 * run.c -- costing a study's cells, and the grid run with its store.
 *
 * One cell, in the order an inference compiler applies the stack:
 *   1. the model (zoo or ONNX) at the study's batch;
 *   2. compression: precision (fp32 for the baseline and the pruned
 *      variants, int8 or fp16: wl_set_precision, so the MACs emulate a
 *      format they lack), then unstructured pruning (the weights' density)
 *      or channel pruning (shapes shrink);
 *   3. BatchNorm folded, then every conv lowered by the cell's algorithm
 *      (per-layer choices first; a conv an algorithm does not apply to
 *      stays direct), then elementwise ops attached as epilogues;
 *   4. the hardware (preset, YAML, or a design-space point) with the
 *      cell's data format applied (arch_apply_data_format);
 *   5. the software: every layer mapped untuned (the mapper's first
 *      construction, one evaluation per problem: a fixed default as a
 *      compiler without tuning emits) or tuned (the heuristic mapper at the
 *      entry's budget), layer by layer or fused by the GA.
 * A combination that cannot run (a design that refuses the format, a
 * per-layer choice that does not apply, a design point over its budget)
 * is a cell with a reason.
 *
 * Determinism: a cell depends only on the spec and its index.  Every
 * mapper search and fusion search is seeded by the study's seed, and the
 * mapping cache shared by all cells is keyed by everything a search sees
 * (map_layer_key), so a cell's numbers do not depend on which cells ran
 * before it or on the thread count.
 */
#include "study.h"

#include "../fusion/fusion.h"
#include "../mapping/mapping.h"
#include "../search/search.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* What every cell of one run shares. */
typedef struct cell_context {
    const study_spec *spec;
    map_cache *cache; /* mapper results, across cells */
    volatile int *stop_flag;
} cell_context;

/* Mark out invalid with a reason; returns AS_OK (an invalid cell is data). */
static as_code invalid(study_cell *out, const char *reason)
{
    size_t n = strlen(reason);
    if (n >= sizeof out->reason) /* a long reason keeps its start */
        n = sizeof out->reason - 1;
    out->valid = false;
    memcpy(out->reason, reason, n);
    out->reason[n] = 0;
    return AS_OK;
}

/* Whether a failure of a transform or of costing is a property of the
 * combination (data) rather than of the machine (out of memory). */
static bool is_combination_failure(as_code rc)
{
    return rc == AS_EINVAL;
}

/* ------------------------------------------------------------ the model */

static as_code compress(wl_graph *g, const study_spec *s, const int *c, study_cell *out,
                        as_status *st)
{
    const study_compression *k = &s->compression[c[STUDY_AXIS_COMPRESSION]];
    double level = study_compression_level(k, c[STUDY_AXIS_MODEL]);
    wl_set_precision(g, k->kind == STUDY_COMPRESS_INT8   ? WL_PREC_INT8
                        : k->kind == STUDY_COMPRESS_FP16 ? WL_PREC_FP16
                                                         : WL_PREC_FP32);
    as_code rc = AS_OK;
    if (k->kind == STUDY_COMPRESS_WEIGHT_PRUNING)
        rc = wl_prune_unstructured(g, NULL, level, st);
    else if (k->kind == STUDY_COMPRESS_CHANNEL_PRUNING) {
        int n_pruned = 0;
        rc = wl_prune_channels(g, NULL, level, &n_pruned, st);
        if (rc == AS_OK && n_pruned == 0)
            return invalid(out, "channel pruning: no conv of this model can shrink");
    }
    return rc;
}

/* The algorithm of conv `name` under algorithm entry a. */
static wl_conv_algorithm algorithm_of(const study_algorithm *a, const char *name, bool *named)
{
    *named = false;
    for (int i = 0; i < a->n_layers; i++)
        if (strcmp(a->layers[i].layer, name) == 0) {
            *named = true;
            return a->layers[i].algorithm;
        }
    return a->algorithm;
}

/* Lower every live conv by its algorithm: a per-layer choice must apply
 * (else the cell is invalid), the entry's algorithm lowers the convs it
 * applies to and leaves the others direct.  Per-layer choices naming a
 * layer the model lacks are not an error: one algorithm entry serves
 * every model of the study. */
static as_code lower(wl_graph *g, const study_algorithm *a, study_cell *out, as_status *st)
{
    /* Each rewrite puts its conv's ops in its place and shifts the ops
     * after it: walk to the current end (the new ops are no Conv). */
    for (int32_t o = 0; o < g->n_ops; o++) {
        const wl_op *op = &g->ops[o];
        if (op->kind != WL_OP_CONV || op->dead || op->folded)
            continue;
        bool named;
        wl_conv_algorithm alg = algorithm_of(a, op->name, &named);
        char why[160];
        if (alg == WL_CONV_DIRECT)
            continue;
        if (!wl_conv_algorithm_applies(g, o, alg, why, sizeof why)) {
            if (!named)
                continue;
            char reason[256];
            snprintf(reason, sizeof reason, "%s cannot lower %s: %s", wl_conv_algorithm_name(alg),
                     op->name, why);
            return invalid(out, reason);
        }
        int n = 0;
        /* The name is copied: the rewrite may grow the op array. */
        char name[256];
        snprintf(name, sizeof name, "%s", op->name);
        as_code rc = wl_lower_convs(g, name, alg, &n, st);
        if (rc != AS_OK)
            return rc;
        out->n_lowered += n;
    }
    return AS_OK;
}

/* The parameters of the compressed model, before BatchNorm folding and
 * lowering rewrite its weights (Winograd stores 16/9 or 4 times as many):
 * the model's own count, as DLAS Tables 2 and 5 give it. */
static as_code model_params(const wl_graph *g, study_cell *out, as_status *st)
{
    wl_stats stats;
    as_code rc = wl_graph_stats(g, &stats, st);
    out->params = stats.params;
    out->nonzero_params = stats.nonzero_params;
    return rc;
}

/* What the compressed, lowered graph computes and stores: its MACs (those
 * with a non-zero weight apart), and its weights' bytes as stored. */
static as_code lowered_figures(const wl_graph *g, study_cell *out, as_status *st)
{
    wl_stats stats;
    as_code rc = wl_graph_stats(g, &stats, st);
    if (rc != AS_OK)
        return rc;
    out->macs = stats.macs;
    out->weight_bytes = stats.weight_bytes;
    double effective = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        wl_problem p;
        as_status ignored;
        if (!wl_op_does_work(&g->ops[o]) || wl_op_category_of(&g->ops[o]) != WL_CAT_COMPUTE ||
            wl_op_problem(g, o, &p, &ignored) != AS_OK)
            continue;
        effective += (double)wl_problem_macs(&p) * p.ds[WL_DS_WEIGHTS].density;
    }
    out->effective_macs = (int64_t)llround(effective);
    return AS_OK;
}

/* The cell's model, compressed and lowered; *g NULL when the cell is
 * invalid (out says why). */
static as_code prepare_model(const study_spec *s, const int *c, wl_graph **g, study_cell *out,
                             as_status *st)
{
    wl_onnx_options onnx = {.batch = s->batch};
    as_code rc = wl_model_load(s->model[c[STUDY_AXIS_MODEL]].source, &onnx, g, st);
    if (rc == AS_OK && s->batch != 1)
        rc = wl_set_batch(*g, s->batch, st);
    if (rc == AS_OK)
        rc = compress(*g, s, c, out, st);
    if (rc == AS_OK && out->valid)
        rc = model_params(*g, out, st);
    int n_folded = 0;
    if (rc == AS_OK && out->valid)
        rc = wl_fold_batchnorm(*g, &n_folded, st);
    if (rc == AS_OK && out->valid)
        rc = lower(*g, &s->algorithm[c[STUDY_AXIS_ALGORITHM]], out, st);
    if (rc == AS_OK && out->valid)
        rc = wl_fuse_epilogues(*g, NULL, st);
    if (rc == AS_OK && out->valid)
        rc = lowered_figures(*g, out, st);
    if (rc != AS_OK && is_combination_failure(rc)) {
        invalid(out, st->message);
        rc = AS_OK;
    }
    if (rc != AS_OK || !out->valid) {
        wl_graph_free(*g);
        *g = NULL;
    }
    return rc;
}

/* -------------------------------------------------------- the hardware */

/* Set point p's parameter named by `assignment` ("name=value"). */
static as_code set_param(const se_space *sp, se_point *p, const char *assignment, as_status *st)
{
    const char *eq = strchr(assignment, '=');
    char name[SE_NAME_BYTES];
    snprintf(name, sizeof name, "%.*s", (int)(eq - assignment), assignment);
    int i = se_space_find(sp, name);
    int64_t index = se_param_index_parse(sp, i, eq + 1);
    if (index >= 0) {
        p->index[i] = index;
        return AS_OK;
    }
    return as_fail(st, AS_EINVAL, "space '%s': %s = %s is not one of the parameter's values",
                   sp->name, name, eq + 1);
}

/* The architecture of a design-space point: the space's baseline with
 * the entry's parameters set. */
static as_code space_point_arch(const study_hardware *h, arch_spec *a, study_cell *out,
                                as_status *st)
{
    se_space *sp = malloc(sizeof *sp);
    if (!sp)
        return as_fail(st, AS_ENOMEM, "out of memory");
    se_point p;
    as_code rc = se_space_load(h->source, sp, st);
    memcpy(p.index, sp->baseline, sizeof p.index);
    char point[STUDY_PATH_BYTES];
    snprintf(point, sizeof point, "%s", h->point);
    for (char *item = point, *next; rc == AS_OK && *item; item = next) {
        next = strchr(item, ',');
        next = next ? (*next = 0, next + 1) : item + strlen(item);
        rc = set_param(sp, &p, item, st);
    }
    if (rc == AS_OK) {
        bool feasible;
        char reason[256];
        se_space_decode(sp, &p, a, &feasible, reason, sizeof reason);
        if (!feasible)
            invalid(out, reason);
    }
    free(sp);
    return rc;
}

static as_code prepare_arch(const study_spec *s, const int *c, arch_spec *a, study_cell *out,
                            as_status *st)
{
    const study_hardware *h = &s->hardware[c[STUDY_AXIS_HARDWARE]];
    as_code rc = h->is_space_point ? space_point_arch(h, a, out, st)
                                   : map_design_load(h->source, a, NULL, NULL, 0, st);
    if (rc != AS_OK || !out->valid)
        return rc;
    rc = arch_apply_data_format(a, s->format[c[STUDY_AXIS_FORMAT]].name, st);
    if (rc != AS_OK && is_combination_failure(rc)) {
        invalid(out, st->message);
        rc = AS_OK;
    }
    return rc;
}

/* -------------------------------------------------------- the software */

/* Latency, energy and DRAM bytes of g on a, as the software entry maps
 * and fuses it. */
static as_code cost(const cell_context *x, const study_software *w, const wl_graph *g,
                    const arch_spec *a, int threads, study_cell *out, as_status *st)
{
    int64_t budget = w->tuned ? w->map_budget : 1;
    as_code rc;
    if (!w->fusion) {
        map_network_options o;
        map_network_options_default(&o);
        o.search.seed = x->spec->seed;
        o.search.threads = threads;
        o.budget_per_problem = budget;
        o.cache = x->cache;
        o.stop_flag = x->stop_flag;
        map_network_result r = {0};
        if ((rc = map_network_evaluate(g, a, &o, &r, st)) == AS_OK) {
            out->metrics.latency_s = r.latency_s;
            out->metrics.energy_pJ = r.energy_pJ;
            out->dram_bytes = r.dram_bytes;
        }
        map_network_free(&r);
        return rc;
    }
    fu_cost_options co;
    fu_cost_options_default(&co);
    co.budget_per_problem = budget;
    co.search.seed = x->spec->seed;
    co.search.threads = threads;
    co.shared_mappings = x->cache;
    fu_search_options so;
    fu_search_options_default(&so);
    so.algorithm = FU_ALGO_GA;
    so.seed = x->spec->seed;
    so.threads = threads;
    so.budget = w->fusion_budget;
    fu_evaluator *e = NULL;
    fu_search *search = NULL;
    fu_plan plan = {0};
    fu_plan_cost c = {0};
    if ((rc = fu_evaluator_new(&e, g, a, &co, st)) == AS_OK &&
        (rc = fu_search_init(&search, e, &so, st)) == AS_OK) {
        while (!(x->stop_flag && *x->stop_flag) && fu_search_step(search, 16))
            ;
        rc = fu_search_best(search, &plan, &c, st);
    }
    if (rc == AS_OK && !c.valid)
        invalid(out, c.reason);
    else if (rc == AS_OK) {
        out->metrics.latency_s = c.latency_s;
        out->metrics.energy_pJ = c.energy_pJ;
        out->dram_bytes = c.dram_bytes;
    }
    fu_plan_cost_free(&c);
    fu_plan_free(&plan);
    fu_search_free(search);
    fu_evaluator_free(e);
    return rc;
}

/* ------------------------------------------------------------ one cell */

static double accuracy_of(const study_spec *s, const int *c)
{
    for (int i = 0; i < s->n_accuracy; i++)
        if (s->accuracy[i].model == c[STUDY_AXIS_MODEL] &&
            s->accuracy[i].compression == c[STUDY_AXIS_COMPRESSION])
            return s->accuracy[i].top1;
    return NAN;
}

static void finish_metrics(const arch_spec *a, as_metrics *m)
{
    m->area_mm2 = arch_area_mm2(a);
    m->power_W = arch_peak_power_W(a);
    m->edp_Js = m->energy_pJ * 1e-12 * m->latency_s;
    m->perf_per_tdp = m->latency_s > 0 && m->power_W > 0 ? 1.0 / m->latency_s / m->power_W : 0;
}

static as_code cell_run(const cell_context *x, int64_t index, int threads, study_cell *out,
                        as_status *st)
{
    const study_spec *s = x->spec;
    memset(out, 0, sizeof *out);
    study_cell_coords(s, index, out->coords);
    out->valid = true;
    out->accuracy = accuracy_of(s, out->coords);
    wl_graph *g = NULL;
    arch_spec *a = malloc(sizeof *a);
    if (!a)
        return as_fail(st, AS_ENOMEM, "out of memory");
    as_code rc = prepare_model(s, out->coords, &g, out, st);
    if (rc == AS_OK && out->valid)
        rc = prepare_arch(s, out->coords, a, out, st);
    if (rc == AS_OK && out->valid)
        rc = cost(x, &s->software[out->coords[STUDY_AXIS_SOFTWARE]], g, a, threads, out, st);
    if (rc != AS_OK && is_combination_failure(rc)) {
        invalid(out, st->message);
        rc = AS_OK;
    }
    if (rc == AS_OK && out->valid)
        finish_metrics(a, &out->metrics);
    wl_graph_free(g);
    free(a);
    return rc;
}

as_code study_cell_run(const study_spec *s, int64_t index, int threads, study_cell *out,
                       as_status *st)
{
    cell_context x = {.spec = s};
    as_code rc = map_cache_new(&x.cache, st);
    if (rc == AS_OK)
        rc = cell_run(&x, index, threads, out, st);
    map_cache_free(x.cache);
    return rc;
}

/* ---------------------------------------------------------- the store */

/* The cell as a store row: (iteration = cell index, slot 0, round 0),
 * the coordinates as the point, the labels as parameters, the model
 * figures as details. */
static as_code put_cell(store *db, int64_t run_id, const study_spec *s, int64_t index,
                        const study_cell *c, as_status *st)
{
    store_row row = {.iteration = index, .feasible = c->valid, .metrics = c->metrics};
    snprintf(row.point, sizeof row.point, "%d,%d,%d,%d,%d,%d", c->coords[0], c->coords[1],
             c->coords[2], c->coords[3], c->coords[4], c->coords[5]);
    snprintf(row.reason, sizeof row.reason, "%s", c->valid ? "" : c->reason);
    json_t *params = json_object(), *detail = json_object();
    const char *labels[STUDY_NAXES] = {
        s->model[c->coords[0]].name,     s->compression[c->coords[1]].name,
        s->algorithm[c->coords[2]].name, s->format[c->coords[3]].name,
        s->software[c->coords[4]].name,  s->hardware[c->coords[5]].name};
    bool ok = params && detail;
    for (int a = 0; ok && a < STUDY_NAXES; a++)
        ok = as_json_put(params, study_axis_name((study_axis)a), as_json_string(labels[a]));
    ok = ok && as_json_put(detail, "macs", json_integer(c->macs)) &&
         as_json_put(detail, "effective_macs", json_integer(c->effective_macs)) &&
         as_json_put(detail, "params", json_integer(c->params)) &&
         as_json_put(detail, "nonzero_params", json_integer(c->nonzero_params)) &&
         as_json_put(detail, "weight_bytes", json_integer(c->weight_bytes)) &&
         as_json_put(detail, "dram_bytes", json_integer(c->dram_bytes)) &&
         as_json_put(detail, "n_lowered", json_integer(c->n_lowered)) &&
         (isnan(c->accuracy) || as_json_put(detail, "accuracy", as_json_number(c->accuracy)));
    char *params_text = ok ? as_json_text(params, 0) : NULL;
    char *detail_text = ok ? as_json_text(detail, 0) : NULL;
    json_decref(params);
    json_decref(detail);
    as_code rc = AS_OK;
    if (!params_text || !detail_text)
        rc = as_fail(st, AS_ENOMEM, "out of memory");
    else {
        row.params_json = params_text;
        row.detail_json = detail_text;
        rc = store_put_row(db, run_id, &row, st);
    }
    free(params_text);
    free(detail_text);
    return rc;
}

static int64_t detail_int(const json_t *detail, const char *key)
{
    const json_t *v = json_object_get(detail, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

/* Reading rows back into a result. */
typedef struct reader {
    study_result *r;
    bool *done;
    as_status *st;
    as_code rc;
} reader;

static bool read_row(void *user, const store_row *row)
{
    reader *rd = user;
    study_result *r = rd->r;
    if (row->iteration < 0 || row->iteration >= r->n_cells)
        return true; /* not a cell of this spec: ignored */
    study_cell *c = &r->cells[row->iteration];
    json_t *detail = NULL;
    if ((rd->rc = as_json_parse(row->detail_json, "a stored cell", &detail, rd->st)) != AS_OK)
        return false;
    memset(c, 0, sizeof *c);
    study_cell_coords(&r->spec, row->iteration, c->coords);
    c->valid = row->feasible;
    snprintf(c->reason, sizeof c->reason, "%s", row->reason);
    c->metrics = row->metrics;
    c->macs = detail_int(detail, "macs");
    c->effective_macs = detail_int(detail, "effective_macs");
    c->params = detail_int(detail, "params");
    c->nonzero_params = detail_int(detail, "nonzero_params");
    c->weight_bytes = detail_int(detail, "weight_bytes");
    c->dram_bytes = detail_int(detail, "dram_bytes");
    c->n_lowered = (int)detail_int(detail, "n_lowered");
    const json_t *accuracy = json_object_get(detail, "accuracy");
    c->accuracy = json_is_number(accuracy) ? json_number_value(accuracy) : NAN;
    json_decref(detail);
    if (rd->done && !rd->done[row->iteration]) {
        rd->done[row->iteration] = true;
        r->n_done++;
    }
    return true;
}

/* A result for spec s with every cell "not run". */
static as_code result_init(const study_spec *s, study_result *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->spec = *s;
    out->n_cells = study_cell_count(s);
    out->cells = calloc((size_t)(out->n_cells > 0 ? out->n_cells : 1), sizeof *out->cells);
    if (!out->cells)
        return as_fail(st, AS_ENOMEM, "out of memory");
    for (int64_t i = 0; i < out->n_cells; i++) {
        study_cell_coords(s, i, out->cells[i].coords);
        snprintf(out->cells[i].reason, sizeof out->cells[i].reason, "not run");
        out->cells[i].accuracy = NAN;
    }
    return AS_OK;
}

as_code study_read(store *db, int64_t run_id, study_result *out, as_status *st)
{
    char *config = NULL;
    memset(out, 0, sizeof *out);
    study_spec *s = malloc(sizeof *s);
    store_run run;
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory");
    as_code rc = store_run_get(db, run_id, &run, st);
    if (rc == AS_OK)
        rc = store_run_config(db, run_id, &config, st);
    if (rc == AS_OK && !study_is_config(config))
        rc = as_fail(st, AS_EINVAL, "run %lld is not a study (it is '%s')", (long long)run_id,
                     run.summary);
    if (rc == AS_OK)
        rc = study_parse(config + strlen(STUDY_CONFIG_PREFIX),
                         strlen(config + strlen(STUDY_CONFIG_PREFIX)), "the stored study", s, st);
    if (rc == AS_OK)
        rc = result_init(s, out, st);
    if (rc == AS_OK) {
        reader rd = {.r = out, .st = st};
        rc = store_each_row(db, run_id, read_row, &rd, st);
        if (rc == AS_OK)
            rc = rd.rc;
        out->n_done = run.n_rows;
        out->run_id = run_id;
        out->interrupted = run.state != STORE_FINISHED;
    }
    free(config);
    free(s);
    return rc;
}

void study_result_free(study_result *r)
{
    free(r->cells);
    r->cells = NULL;
    r->n_cells = 0;
}

void study_options_default(study_options *o)
{
    memset(o, 0, sizeof *o);
}

/* ---------------------------------------------------------- the grid */

bool study_is_config(const char *config)
{
    return config && strncmp(config, STUDY_CONFIG_PREFIX, strlen(STUDY_CONFIG_PREFIX)) == 0;
}

/* The store's configuration of a study: STUDY_CONFIG_PREFIX and its
 * canonical text. */
static char *store_config(const study_spec *s)
{
    char *text = study_canonical(s);
    char *config = text ? malloc(strlen(STUDY_CONFIG_PREFIX) + strlen(text) + 1) : NULL;
    if (config)
        sprintf(config, STUDY_CONFIG_PREFIX "%s", text);
    free(text);
    return config;
}

/* Begin a run in the store, or find the one to resume and read back its
 * cells into out (done[] marks them). */
static as_code open_run(const study_spec *s, const study_options *o, study_result *out, bool *done,
                        as_status *st)
{
    char *config = store_config(s);
    if (!config)
        return as_fail(st, AS_ENOMEM, "out of memory");
    int64_t run_id = 0;
    as_code rc = AS_OK;
    if (o->resume &&
        (rc = store_run_find_resumable(o->db, config, s->seed, &run_id, st)) == AS_OK && !run_id)
        rc = as_fail(st, AS_EINVAL,
                     "--resume: the store has no unfinished run of study '%s' with this "
                     "configuration and seed",
                     s->name);
    if (rc == AS_OK && run_id) {
        reader rd = {.r = out, .done = done, .st = st};
        rc = store_each_row(o->db, run_id, read_row, &rd, st);
        if (rc == AS_OK)
            rc = rd.rc;
        if (rc == AS_OK)
            rc = store_run_set_state(o->db, run_id, STORE_RUNNING, st);
    } else if (rc == AS_OK) {
        char summary[160];
        snprintf(summary, sizeof summary, "study %s: %lld cells (%d models, %d hardware)", s->name,
                 (long long)out->n_cells, s->n[STUDY_AXIS_MODEL], s->n[STUDY_AXIS_HARDWARE]);
        rc = store_run_begin(o->db, config, s->seed, AS_VERSION, summary, &run_id, st);
    }
    out->run_id = run_id;
    free(config);
    return rc;
}

/* Run the pending cells in parallel; each finished cell is stored and
 * counted at once (one thread at a time).  The first failure stops the
 * others and is returned. */
static as_code run_cells(const cell_context *x, const study_options *o, const int64_t *pending,
                         int64_t n_pending, study_result *out, as_status *st)
{
    volatile int failed = 0;
    as_code first = AS_OK;
    int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t k = 0; k < n_pending; k++) {
        if (failed || (x->stop_flag && *x->stop_flag))
            continue;
        int64_t index = pending[k];
        study_cell cell;
        as_status cst;
        as_status_clear(&cst);
        as_code rc = cell_run(x, index, 1, &cell, &cst);
        bool stopped = x->stop_flag && *x->stop_flag; /* the cell may be partial */
#pragma omp critical(study_store)
        {
            if (rc != AS_OK && !failed) {
                failed = 1;
                first = rc;
                *st = cst;
            } else if (rc == AS_OK && !stopped && !failed) {
                out->cells[index] = cell;
                out->n_done++;
                if (o->db &&
                    put_cell(o->db, out->run_id, &out->spec, index, &cell, &cst) != AS_OK) {
                    failed = 1;
                    first = cst.code;
                    *st = cst;
                }
                if (o->progress)
                    o->progress(o->progress_user, out->n_done, out->n_cells);
            }
        }
    }
    return first;
}

as_code study_run(const study_spec *s, const study_options *o, study_result *out, as_status *st)
{
    cell_context x = {.spec = s, .stop_flag = o->stop_flag};
    int64_t *pending = NULL;
    bool *done = NULL;
    as_code rc = result_init(s, out, st);
    if (rc != AS_OK)
        return rc;
    done = calloc((size_t)out->n_cells, sizeof *done);
    pending = malloc((size_t)out->n_cells * sizeof *pending);
    if (!done || !pending)
        rc = as_fail(st, AS_ENOMEM, "out of memory");
    if (rc == AS_OK && o->db)
        rc = open_run(s, o, out, done, st);
    if (rc == AS_OK)
        rc = map_cache_new(&x.cache, st);
    if (rc == AS_OK) {
        int64_t n_pending = 0;
        for (int64_t i = 0; i < out->n_cells; i++)
            if (!done[i])
                pending[n_pending++] = i;
        if (o->progress)
            o->progress(o->progress_user, out->n_done, out->n_cells);
        rc = run_cells(&x, o, pending, n_pending, out, st);
    }
    out->interrupted = out->n_done < out->n_cells;
    if (o->db && out->run_id) {
        as_status ignored;
        store_run_set_state(o->db, out->run_id,
                            rc == AS_OK && !out->interrupted ? STORE_FINISHED : STORE_INTERRUPTED,
                            &ignored);
    }
    map_cache_free(x.cache);
    free(pending);
    free(done);
    return rc;
}
