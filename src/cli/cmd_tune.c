/*
 * cmd_tune.c -- `accelsearch tune`: tune every distinct conv layer of a
 * model on a VTA-style accelerator -- the seven schedule knobs of TVM's
 * VTA conv2d template and, unless --fixed-hardware, VTA++'s hardware
 * parameters under an FPGA budget -- with DCO-Comp or the AutoTVM- and
 * CHAMELEON-style tuners (src/tune).  It prints per layer the best
 * configuration, its GFLOPS, latency and trials to 95 % of the best, then
 * the whole model's throughput, and keeps the run in the store: one row
 * per layer, written the moment the layer completes.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "tune/tune.h"

#define DEFAULT_ARCH "vta"
#define DEFAULT_MODEL "resnet18"
/* Budgets the table of --budget choices holds at most. */
#define MAX_BUDGETS 16
/* The most measurements per layer --trials takes. */
#define MAX_TRIALS INT64_C(10000000)

typedef struct tune_cli {
    const char *arch, *model, *db_path;
    int engine, budget; /* indexes into engine_names, budget_names */
    int64_t trials, seed, threads;
    bool no_cs, fixed_hardware, json, no_db, db_set;
    const char *engine_names[TN_ENGINES + 1];
    const char *budget_names[MAX_BUDGETS + 1];
} tune_cli;

enum { TUNE_MAX_OPTIONS = 16 };

/* Defaults of the options (the library's), and the names of the engines
 * and budgets the choices list. */
static void tune_defaults(tune_cli *c)
{
    tn_options o;
    tn_options_default(&o);
    *c = (tune_cli){.arch = DEFAULT_ARCH,
                    .model = DEFAULT_MODEL,
                    .db_path = CLI_DEFAULT_DB,
                    .engine = (int)o.engine,
                    .trials = o.trials,
                    .seed = (int64_t)o.seed,
                    .threads = cli_default_threads()};
    for (int e = 0; e < TN_ENGINES; e++)
        c->engine_names[e] = tn_engine_name((tn_engine)e);
    int n_budgets;
    const tn_budget *budgets = tn_budgets(&n_budgets);
    for (int b = 0; b < n_budgets && b < MAX_BUDGETS; b++) {
        c->budget_names[b] = budgets[b].name;
        if (o.budget == &budgets[b])
            c->budget = b;
    }
}

/* The command `tune`, its options writing into c. */
static cli_command tune_command(cli_option *options, tune_cli *c)
{
    int n = 0;
    options[n] = cli_arch_option(&c->arch);
    options[n++].help = "a VTA-shaped architecture: the vta preset (default) or a\n"
                        "YAML file of its shape, the hardware the tuning starts from";
    options[n] = cli_model_option(&c->model);
    options[n++].help = "a zoo name or an .onnx file (default " DEFAULT_MODEL ")";
    options[n++] = cli_enum("engine", &c->engine, c->engine_names,
                            "dcocomp (default: multi-agent PPO with confidence sampling),\n"
                            "autotvm or chameleon");
    options[n++] = cli_int("trials", "N", &c->trials, 1, MAX_TRIALS,
                           "measurements per distinct layer (default 1000)");
    options[n++] = cli_enum("budget", &c->budget, c->budget_names,
                            "the FPGA whose LUT/BRAM/DSP the hardware must fit\n"
                            "(default pynq)");
    options[n++] = cli_flag("no-cs", &c->no_cs,
                            "dcocomp without confidence sampling: measure every\n"
                            "proposal (the ablation)");
    options[n++] = cli_flag("fixed-hardware", &c->fixed_hardware,
                            "tune the schedule knobs only, on --arch's hardware");
    options[n++] = cli_seed_option(&c->seed);
    options[n++] = cli_threads_option(&c->threads);
    options[n] =
        cli_string("db", "FILE", &c->db_path, "the run store (default " CLI_DEFAULT_DB ")");
    options[n++].given = &c->db_set;
    options[n++] = cli_flag("no-db", &c->no_db, "keep nothing on disk");
    options[n++] = cli_json_option(&c->json);
    return (cli_command){
        .name = "tune",
        .synopsis = "tune [--arch vta] [--model M] [--engine E] [--trials N] [options]",
        .about = "Tune every distinct conv layer of a model on a VTA-style accelerator: the "
                 "seven\nschedule knobs of TVM's VTA conv2d template (tile_b, tile_h, tile_w, "
                 "tile_ci,\ntile_co, h_threading, oc_threading) and VTA++'s hardware (GEMM "
                 "shape, buffer\nsizes) under an FPGA budget.  Layers are tuned in parallel, "
                 "each from its own\nrandom stream: a seed gives the same result at any "
                 "thread count.\n",
        .epilog = "Ctrl-C stops the tuning, prints the best found so far and exits with "
                  "status 130.\n",
        .options = options,
        .n_options = n,
    };
}

/* Parse argv into c and the library's options o; CLI_PARSED, or an exit
 * status. */
static int parse_tune_options(cli_command *cmd, int argc, char **argv, tune_cli *c, tn_options *o)
{
    int rc = cli_parse(cmd, argc, argv);
    if (rc != CLI_PARSED)
        return rc;
    if (c->no_db && c->db_set)
        return cli_usage_error(cmd, "--no-db and --db '%s' conflict: give one of them", c->db_path);
    if (c->no_cs && c->engine != TN_ENGINE_DCOCOMP)
        return cli_usage_error(cmd, "--no-cs switches off DCO-Comp's confidence sampling: it "
                                    "needs --engine dcocomp");
    tn_options_default(o);
    o->engine = (tn_engine)c->engine;
    o->trials = c->trials;
    o->seed = (uint64_t)c->seed;
    o->confidence_sampling = !c->no_cs;
    o->vary_hardware = !c->fixed_hardware;
    o->budget = tn_budget_find(c->budget_names[c->budget]);
    o->threads = (int)c->threads;
    return CLI_PARSED;
}

/* ------------------------------------------------------ a configuration */

/* The seven schedule knobs in the template's order, then the hardware. */
static const tn_knob knob_order[TN_KNOBS] = {
    TN_KNOB_TILE_B,     TN_KNOB_TILE_H,      TN_KNOB_TILE_W,       TN_KNOB_TILE_CI,
    TN_KNOB_TILE_CO,    TN_KNOB_H_THREADING, TN_KNOB_OC_THREADING, TN_KNOB_BATCH,
    TN_KNOB_BLOCK_IN,   TN_KNOB_BLOCK_OUT,   TN_KNOB_INP_BUFFER,   TN_KNOB_WGT_BUFFER,
    TN_KNOB_ACC_BUFFER,
};
/* knob_order[0 .. SCHEDULE_KNOBS) are the schedule's, the rest the hardware's. */
#define SCHEDULE_KNOBS 7

/* The value of knob k at point pt of space sp. */
static int64_t knob(const tn_space *sp, const tn_point *pt, tn_knob k)
{
    return sp->value[k][pt->choice[k]];
}

/* The value of knob_order[i]. */
static int64_t knob_value(const tn_space *sp, const tn_point *pt, int i)
{
    return knob(sp, pt, knob_order[i]);
}

/* "b1 h14 w56 ci64 co64 ht2 ot1": the schedule knobs, short. */
static void schedule_text(const tn_space *sp, const tn_point *pt, char *buf, size_t size)
{
    static const char *const abbrev[SCHEDULE_KNOBS] = {"b", "h", "w", "ci", "co", "ht", "ot"};
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < SCHEDULE_KNOBS && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s%lld", i ? " " : "", abbrev[i],
                         (long long)knob_value(sp, pt, i));
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* "1x16x16 32/256/128": GEMM BATCH x BLOCK_IN x BLOCK_OUT, the input,
 * weight and accumulator buffers in KiB. */
static void hardware_text(const tn_space *sp, const tn_point *pt, char *buf, size_t size)
{
    snprintf(buf, size, "%lldx%lldx%lld %lld/%lld/%lld", (long long)knob(sp, pt, TN_KNOB_BATCH),
             (long long)knob(sp, pt, TN_KNOB_BLOCK_IN), (long long)knob(sp, pt, TN_KNOB_BLOCK_OUT),
             (long long)(knob(sp, pt, TN_KNOB_INP_BUFFER) / 1024),
             (long long)(knob(sp, pt, TN_KNOB_WGT_BUFFER) / 1024),
             (long long)(knob(sp, pt, TN_KNOB_ACC_BUFFER) / 1024));
}

/* "64x56x56>64x56x56 3x3/1": C x H x W to K x P x Q, kernel and stride
 * (the batch first when above 1). */
static void shape_text(const tn_conv *l, char *buf, size_t size)
{
    char batch[24] = "";
    if (l->n > 1)
        snprintf(batch, sizeof batch, "n%lld ", (long long)l->n);
    snprintf(buf, size, "%s%lldx%lldx%lld>%lldx%lldx%lld %lldx%lld/%lld", batch, (long long)l->c,
             (long long)l->h, (long long)l->w, (long long)l->k, (long long)l->p, (long long)l->q,
             (long long)l->r, (long long)l->s, (long long)l->stride_h);
}

/* The space a layer was tuned in, rebuilt to name its points' values. */
static as_code layer_space(const tn_conv *layer, const tn_hw *base, const tn_options *o,
                           tn_space *sp, as_status *st)
{
    return tn_space_init(sp, layer, base, o->budget, o->vary_hardware, st);
}

/* The best GFLOPS after each trial of r (0 before the first valid one)
 * into curve[0 .. r->n_trials). */
static void best_curve(const tn_layer_result *r, double *curve)
{
    double best = 0;
    for (int64_t i = 0; i < r->n_trials; i++) {
        if (r->trials[i].result.valid && r->trials[i].result.gflops > best)
            best = r->trials[i].result.gflops;
        curve[i] = best;
    }
}

/* The configuration a layer runs at (tn_layer_outcome): its best trial,
 * or TVM's fallback when tuning found nothing valid. */
typedef struct layer_outcome {
    tn_point point;
    const tn_result *result; /* NULL: neither is valid */
    const char *source;      /* "best", "fallback" or "none" */
} layer_outcome;

static layer_outcome outcome_of(const tn_space *sp, const tn_layer_result *r)
{
    layer_outcome o = {.result = tn_layer_outcome(r), .source = "none"};
    if (o.result && r->best >= 0) {
        o.point = r->trials[r->best].point;
        o.source = "best";
    } else if (o.result) {
        tn_space_default(sp, &o.point);
        o.source = "fallback";
    }
    return o;
}

/* ------------------------------------------------------------ the store */

/* The canonical text of the options that change the result (not the
 * seed, which the store keeps beside it, nor threads, store or output):
 * a tune run's configuration.  The architecture enters by the hardware
 * read from it. */
static void config_text(const tune_cli *c, const tn_options *o, const tn_hw *b, char *buf,
                        size_t size)
{
    snprintf(buf, size,
             "accelsearch tune 1\narch %s\nbase batch %d block_in %d block_out %d inp %lld "
             "wgt %lld acc %lld uop %lld bits %d %d %d %d clock_hz %.17g dram_bytes_per_cycle "
             "%.17g dram_latency %d node %d dram %s\nmodel %s\nengine %s\ntrials %lld\n"
             "budget %s\nconfidence_sampling %s\nhardware %s",
             c->arch, b->batch, b->block_in, b->block_out, (long long)b->inp_buffer_bytes,
             (long long)b->wgt_buffer_bytes, (long long)b->acc_buffer_bytes,
             (long long)b->uop_buffer_bytes, b->inp_bits, b->wgt_bits, b->acc_bits, b->out_bits,
             b->clock_hz, b->dram_bytes_per_cycle, b->dram_latency_cycles, b->node_nm, b->dram_type,
             c->model, tn_engine_name(o->engine), (long long)o->trials, o->budget->name,
             o->confidence_sampling ? "on" : "off", o->vary_hardware ? "tuned" : "fixed");
}

/* {"knobs": {"tile_b": 1, ...}, "hardware": {"batch": 1, ...}} of pt. */
static json_t *point_params_json(const tn_space *sp, const tn_point *pt)
{
    json_t *params = json_object(), *knobs = json_object(), *hardware = json_object();
    bool ok = params && knobs && hardware;
    for (int i = 0; ok && i < TN_KNOBS; i++)
        ok = json_object_set_new(i < SCHEDULE_KNOBS ? knobs : hardware, tn_knob_name(knob_order[i]),
                                 json_integer(knob_value(sp, pt, i))) == 0;
    ok = ok && json_object_set(params, "knobs", knobs) == 0 &&
         json_object_set(params, "hardware", hardware) == 0;
    json_decref(knobs);
    json_decref(hardware);
    if (!ok) {
        json_decref(params);
        return NULL;
    }
    return params;
}

/* The layer, its trials, trials to 95 % and the best-so-far GFLOPS
 * curve: a row's details. */
static json_t *layer_detail_json(const tn_layer_result *r, const double *best)
{
    const tn_conv *l = &r->layer;
    json_t *d = json_object(), *shape = json_object(), *curve = json_array();
    bool ok = d && shape && curve;
    const struct {
        const char *name;
        int64_t value;
    } dims[] = {{"n", l->n},
                {"c", l->c},
                {"h", l->h},
                {"w", l->w},
                {"k", l->k},
                {"p", l->p},
                {"q", l->q},
                {"r", l->r},
                {"s", l->s},
                {"stride_h", l->stride_h},
                {"stride_w", l->stride_w},
                {"pad_h", l->pad_h},
                {"pad_w", l->pad_w}};
    for (size_t i = 0; ok && i < sizeof dims / sizeof dims[0]; i++)
        ok = json_object_set_new(shape, dims[i].name, json_integer(dims[i].value)) == 0;
    for (int64_t i = 0; ok && i < r->n_trials; i++)
        ok = as_json_push(curve, as_json_number(best[i]));
    ok = ok && as_json_put(d, "layer", as_json_string(l->name)) &&
         json_object_set(d, "shape", shape) == 0 &&
         as_json_put(d, "count", json_integer(l->count)) &&
         as_json_put(d, "macs", json_integer(l->macs)) &&
         as_json_put(d, "trials", json_integer(r->n_trials)) &&
         as_json_put(d, "trials_to_95", json_integer(r->trials_to_95)) &&
         as_json_put(d, "gflops",
                     as_json_number(r->best >= 0 ? r->trials[r->best].result.gflops : 0)) &&
         as_json_put(d, "fallback_gflops",
                     as_json_number(r->fallback.valid ? r->fallback.gflops : 0)) &&
         as_json_put(d, "interrupted", json_boolean(r->interrupted)) &&
         json_object_set(d, "best_gflops_curve", curve) == 0;
    json_decref(shape);
    json_decref(curve);
    if (!ok) {
        json_decref(d);
        return NULL;
    }
    return d;
}

/* Layer `index`'s result as one row of run_id: iteration = the layer's
 * index, the choice indices of the point it runs at (its best, else TVM's
 * fallback), that point's latency and energy (one instance of the layer),
 * its knobs and hardware by name, the details. */
static as_code put_layer_row(store *db, int64_t run_id, int index, const tn_space *sp,
                             const tn_layer_result *r, as_status *st)
{
    store_row row = {.iteration = index, .sw_budget = r->n_trials};
    layer_outcome out = outcome_of(sp, r);
    const tn_result *best = r->best >= 0 ? &r->trials[r->best].result : NULL;
    double *curve = malloc((size_t)(r->n_trials > 0 ? r->n_trials : 1) * sizeof *curve);
    if (curve)
        best_curve(r, curve);
    json_t *params = NULL, *detail = curve ? layer_detail_json(r, curve) : NULL;
    bool ok = detail && as_json_put(detail, "runs_at", as_json_string(out.source));
    char *params_text = NULL, *detail_text = ok ? as_json_text(detail, 0) : NULL;
    if (out.result) {
        size_t used = 0;
        for (int k = 0; k < TN_KNOBS && used < sizeof row.point; k++)
            used += (size_t)snprintf(row.point + used, sizeof row.point - used, "%s%d",
                                     k ? "," : "", out.point.choice[k]);
        row.feasible = true;
        row.sw_value = out.result->seconds;
        row.metrics = (as_metrics){.latency_s = out.result->seconds,
                                   .energy_pJ = out.result->energy_pJ,
                                   .edp_Js = out.result->energy_pJ * 1e-12 * out.result->seconds};
        params = point_params_json(sp, &out.point);
        params_text = params ? as_json_text(params, 0) : NULL;
    } else {
        snprintf(row.reason, sizeof row.reason,
                 "no valid configuration in %lld trials, nor TVM's fallback",
                 (long long)r->n_trials);
    }
    /* The normalised area under the best-so-far curve: 1 when the first
     * trial was already the best. */
    double area = 0;
    if (curve && best) {
        for (int64_t i = 0; i < r->n_trials; i++)
            area += curve[i] / best->gflops;
        row.sw_auc = area / (double)r->n_trials;
    }
    as_code code = AS_OK;
    if (!detail_text || !curve || (out.result && !params_text))
        code = as_fail(st, AS_ENOMEM, "out of memory storing layer %s", r->layer.name);
    row.params_json = params_text;
    row.detail_json = detail_text;
    if (code == AS_OK)
        code = store_put_row(db, run_id, &row, st);
    free(curve);
    free(params_text);
    free(detail_text);
    json_decref(params);
    json_decref(detail);
    return code;
}

/* ------------------------------------------------------------- the run */

/* What the library's callbacks see: the progress bar (trials of every
 * layer against all of their budgets) and the store. */
typedef struct tune_run {
    const tn_hw *base;
    const tn_options *o;
    cli_progress bar;
    int64_t *layer_trials; /* trials reported so far, per layer */
    int n_layers;
    int64_t done;
    store *db; /* NULL: --no-db */
    int64_t run_id;
    as_status store_status; /* the first failure to store a row */
    int layers_done;
} tune_run;

/* A measurement was made: advance the bar (one call at a time). */
static void on_progress(void *user, const tn_progress *p)
{
    tune_run *run = user;
    if (p->layer < 0 || p->layer >= run->n_layers)
        return;
    run->done += p->trials - run->layer_trials[p->layer];
    run->layer_trials[p->layer] = p->trials;
    cli_progress_update(&run->bar, run->done, (int64_t)run->n_layers * run->o->trials);
}

/* A layer completed: its row, at once, so that a killed run keeps it. */
static void on_layer_done(void *user, int layer, int layers, const struct tn_layer_result *r)
{
    (void)layers;
    tune_run *run = user;
    run->layers_done += !r->interrupted;
    if (!run->db || run->store_status.code != AS_OK)
        return;
    tn_space sp;
    if (layer_space(&r->layer, run->base, run->o, &sp, &run->store_status) == AS_OK)
        put_layer_row(run->db, run->run_id, layer, &sp, r, &run->store_status);
}

/* Open the store and begin the run (unless --no-db). */
static as_code begin_store(tune_run *run, const tune_cli *c, as_status *st)
{
    if (c->no_db)
        return AS_OK;
    as_code code = store_open(&run->db, c->db_path, st);
    if (code != AS_OK)
        return code;
    char config[2048], summary[160];
    config_text(c, run->o, run->base, config, sizeof config);
    snprintf(summary, sizeof summary, "tune %s on %s (%s, hardware %s), %s, %lld trials per layer",
             tn_engine_name(run->o->engine), c->arch, run->o->budget->name,
             run->o->vary_hardware ? "tuned" : "fixed", c->model, (long long)run->o->trials);
    return store_run_begin(run->db, config, run->o->seed, AS_VERSION, summary, &run->run_id, st);
}

/* Mark the run finished or interrupted, and close the store. */
static void end_store(tune_run *run, bool finished)
{
    if (!run->db)
        return;
    as_status ignored;
    store_run_set_state(run->db, run->run_id, finished ? STORE_FINISHED : STORE_INTERRUPTED,
                        &ignored);
    store_close(run->db);
    run->db = NULL;
}

/* ------------------------------------------------------------- reports */

/* The convs the model's figures cover -- those that run at a valid
 * configuration (their best, or TVM's fallback), counted with
 * multiplicity -- and the distinct layers that have none (*without). */
static int tuned_convs(const tn_model_result *r, int *without)
{
    int n = 0;
    *without = 0;
    for (int i = 0; i < r->n_layers; i++) {
        if (tn_layer_outcome(&r->layers[i]))
            n += r->layers[i].layer.count;
        else
            ++*without;
    }
    return n;
}

/* One row of the layer table: the layer, the configuration it runs at,
 * its GFLOPS, latency and speedup over TVM's fallback, the trials. */
static void print_layer(int index, const tn_layer_result *r, const tn_space *sp)
{
    char shape[96], knobs[96] = "-", hardware[64] = "-", speedup[16] = "-";
    shape_text(&r->layer, shape, sizeof shape);
    printf("%3d  %-22s %-26s %3d  ", index, r->layer.name, shape, r->layer.count);
    layer_outcome out = outcome_of(sp, r);
    if (!out.result) {
        printf("no valid configuration in %lld trials, nor TVM's fallback\n",
               (long long)r->n_trials);
        return;
    }
    schedule_text(sp, &out.point, knobs, sizeof knobs);
    hardware_text(sp, &out.point, hardware, sizeof hardware);
    if (r->fallback.valid)
        snprintf(speedup, sizeof speedup, "%.2f", out.result->gflops / r->fallback.gflops);
    printf("%-32s %-20s %9.2f %12.2f %7s %7lld %7lld", knobs, hardware, out.result->gflops,
           out.result->seconds * 1e6, speedup, (long long)r->n_trials, (long long)r->trials_to_95);
    if (r->best < 0)
        printf("  TVM's fallback: no valid configuration in %lld trials", (long long)r->n_trials);
    putchar('\n');
}

/* The text report: the run, a row per distinct layer, the model. */
static void print_text(const tune_cli *c, const tn_options *o, const tune_run *run,
                       const tn_model_result *r, double command_seconds)
{
    const tn_budget *b = o->budget;
    printf("tune: %s on %s, %s, hardware %s under the %s budget (%s: %lld LUT, %lld BRAM36, %lld "
           "DSP), %lld trials per layer, seed %llu\n",
           tn_engine_name(o->engine), c->arch, c->model, o->vary_hardware ? "tuned" : "fixed",
           b->name, b->device, (long long)b->available.luts, (long long)b->available.brams,
           (long long)b->available.dsps, (long long)o->trials, (unsigned long long)o->seed);
    if (o->engine == TN_ENGINE_DCOCOMP)
        printf("confidence sampling %s\n", o->confidence_sampling ? "on" : "off");
    if (run->run_id)
        printf("store: %s, run %lld\n", c->db_path, (long long)run->run_id);
    printf("\nknobs: tile_b tile_h tile_w tile_ci tile_co (b h w ci co), h_threading oc_threading "
           "(ht ot);\nhardware: GEMM BATCHxBLOCK_INxBLOCK_OUT, input/weight/accumulator buffers "
           "in KiB;\nvs TVM: speedup over TVM's fallback configuration (untuned, on the base "
           "hardware)\n");
    printf("%3s  %-22s %-26s %3s  %-32s %-20s %9s %12s %7s %7s %7s\n", "#", "layer",
           "shape CxHxW>KxPxQ RxS/str", "x", "knobs", "hardware", "GFLOPS", "latency us", "vs TVM",
           "trials", "to 95%");
    for (int i = 0; i < r->n_layers; i++) {
        tn_space sp;
        as_status ignored;
        if (layer_space(&r->layers[i].layer, run->base, o, &sp, &ignored) == AS_OK)
            print_layer(i, &r->layers[i], &sp);
    }
    int without;
    int tuned = tuned_convs(r, &without);
    printf("\nmodel: %.2f GFLOPS, latency %s over %d tuned convs (%d distinct), %d conv%s "
           "left on the host\n",
           r->gflops, CLI_ENG(r->seconds, "s"), tuned, r->n_layers - without, r->skipped_layers,
           r->skipped_layers == 1 ? "" : "s");
    if (without > 0)
        printf("       %d distinct layer%s without a valid configuration, left out of these "
               "figures\n",
               without, without == 1 ? "" : "s");
    printf("energy: %s (the tuned convs, each at the configuration it runs at)\n",
           CLI_ENG(r->energy_pJ * 1e-12, "J"));
    if (r->has_shared && r->n_layers > 0) {
        tn_space sp;
        as_status ignored;
        char hardware[64];
        if (layer_space(&r->layers[0].layer, run->base, o, &sp, &ignored) == AS_OK) {
            hardware_text(&sp, &r->shared_hw, hardware, sizeof hardware);
            printf(
                "one hardware for every layer (measured on all, not tuned on it): %s: %.2f GFLOPS, "
                "latency %s\n",
                hardware, r->shared_gflops, CLI_ENG(r->shared_seconds, "s"));
        }
    } else {
        printf("one hardware for every layer: none was measured valid on every layer\n");
    }
    printf("wall time: %s tuning, %s in all\n", CLI_ENG(r->wall_seconds, "s"),
           CLI_ENG(command_seconds, "s"));
}

/* The knobs and hardware of pt as {"knobs": {...}, "hardware": {...}}. */
static void json_point(cli_json *j, const tn_space *sp, const tn_point *pt)
{
    cli_json_key(j, "knobs");
    cli_json_begin_object(j);
    for (int i = 0; i < TN_KNOBS; i++) {
        if (i == SCHEDULE_KNOBS) {
            cli_json_end_object(j);
            cli_json_key(j, "hardware");
            cli_json_begin_object(j);
        }
        cli_json_int_field(j, tn_knob_name(knob_order[i]), knob_value(sp, pt, i));
    }
    cli_json_end_object(j);
}

/* A configuration and what it costs as an object, or null when it is
 * not valid. */
static void json_configuration(cli_json *j, const tn_space *sp, const tn_point *pt,
                               const tn_result *res)
{
    if (!res || !res->valid) {
        cli_json_null(j);
        return;
    }
    cli_json_begin_object(j);
    json_point(j, sp, pt);
    cli_json_int_field(j, "cycles", res->cycles);
    cli_json_double_field(j, "latency_s", res->seconds);
    cli_json_double_field(j, "gflops", res->gflops);
    cli_json_double_field(j, "energy_pJ", res->energy_pJ);
    cli_json_end_object(j);
}

static void json_layer(cli_json *j, int index, const tn_layer_result *r, const tn_space *sp)
{
    const tn_conv *l = &r->layer;
    cli_json_begin_object(j);
    cli_json_int_field(j, "index", index);
    cli_json_string_field(j, "name", l->name);
    cli_json_key(j, "shape");
    cli_json_begin_object(j);
    cli_json_int_field(j, "n", l->n);
    cli_json_int_field(j, "c", l->c);
    cli_json_int_field(j, "h", l->h);
    cli_json_int_field(j, "w", l->w);
    cli_json_int_field(j, "k", l->k);
    cli_json_int_field(j, "p", l->p);
    cli_json_int_field(j, "q", l->q);
    cli_json_int_field(j, "r", l->r);
    cli_json_int_field(j, "s", l->s);
    cli_json_int_field(j, "stride_h", l->stride_h);
    cli_json_int_field(j, "stride_w", l->stride_w);
    cli_json_int_field(j, "pad_h", l->pad_h);
    cli_json_int_field(j, "pad_w", l->pad_w);
    cli_json_end_object(j);
    cli_json_int_field(j, "count", l->count);
    cli_json_int_field(j, "macs", l->macs);
    cli_json_int_field(j, "trials", r->n_trials);
    cli_json_int_field(j, "trials_to_95", r->trials_to_95);
    cli_json_bool_field(j, "interrupted", r->interrupted);
    cli_json_double_field(j, "wall_seconds", r->wall_seconds);
    cli_json_string_field(j, "runs_at", outcome_of(sp, r).source);
    tn_point fallback;
    tn_space_default(sp, &fallback);
    cli_json_key(j, "best");
    json_configuration(j, sp, r->best >= 0 ? &r->trials[r->best].point : NULL,
                       r->best >= 0 ? &r->trials[r->best].result : NULL);
    cli_json_key(j, "fallback");
    json_configuration(j, sp, &fallback, &r->fallback);
    cli_json_end_object(j);
}

/* The same as the text, as one JSON object. */
static void print_json(const tune_cli *c, const tn_options *o, const tune_run *run,
                       const tn_model_result *r, double command_seconds)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "arch", c->arch);
    cli_json_string_field(&j, "model", c->model);
    cli_json_string_field(&j, "engine", tn_engine_name(o->engine));
    cli_json_int_field(&j, "trials", o->trials);
    cli_json_int_field(&j, "seed", (int64_t)o->seed);
    cli_json_bool_field(&j, "confidence_sampling", o->confidence_sampling);
    cli_json_bool_field(&j, "vary_hardware", o->vary_hardware);
    cli_json_key(&j, "budget");
    cli_json_begin_object(&j);
    cli_json_string_field(&j, "name", o->budget->name);
    cli_json_string_field(&j, "device", o->budget->device);
    cli_json_int_field(&j, "luts", o->budget->available.luts);
    cli_json_int_field(&j, "brams", o->budget->available.brams);
    cli_json_int_field(&j, "dsps", o->budget->available.dsps);
    cli_json_end_object(&j);
    cli_json_int_field(&j, "run_id", run->run_id);
    cli_json_bool_field(&j, "interrupted", r->interrupted);
    cli_json_key(&j, "layers");
    cli_json_begin_array(&j);
    for (int i = 0; i < r->n_layers; i++) {
        tn_space sp;
        as_status ignored;
        if (layer_space(&r->layers[i].layer, run->base, o, &sp, &ignored) == AS_OK)
            json_layer(&j, i, &r->layers[i], &sp);
    }
    cli_json_end_array(&j);
    cli_json_key(&j, "model_result");
    cli_json_begin_object(&j);
    cli_json_double_field(&j, "gflops", r->gflops);
    cli_json_double_field(&j, "latency_s", r->seconds);
    cli_json_double_field(&j, "energy_pJ", r->energy_pJ);
    cli_json_int_field(&j, "macs", r->macs);
    int without;
    cli_json_int_field(&j, "tuned_layers", tuned_convs(r, &without));
    cli_json_int_field(&j, "distinct_layers", r->n_layers - without);
    cli_json_int_field(&j, "layers_without_valid", without);
    cli_json_int_field(&j, "host_layers", r->skipped_layers);
    cli_json_key(&j, "shared_hardware");
    tn_space sp;
    as_status ignored;
    if (r->has_shared && r->n_layers > 0 &&
        layer_space(&r->layers[0].layer, run->base, o, &sp, &ignored) == AS_OK) {
        cli_json_begin_object(&j);
        json_point(&j, &sp, &r->shared_hw);
        cli_json_double_field(&j, "gflops", r->shared_gflops);
        cli_json_double_field(&j, "latency_s", r->shared_seconds);
        cli_json_end_object(&j);
    } else {
        cli_json_null(&j);
    }
    cli_json_double_field(&j, "wall_seconds", r->wall_seconds);
    cli_json_end_object(&j);
    cli_json_double_field(&j, "wall_seconds", command_seconds);
    cli_json_end_object(&j);
    fputc('\n', stdout);
}

/* ------------------------------------------------------------- command */

/* Load the architecture and its VTA configuration, and the model. */
static as_code load_inputs(const tune_cli *c, tn_hw *base, wl_graph **g, as_status *st)
{
    arch_spec a;
    as_status why;
    as_status_clear(&why);
    if (cli_arch_load(c->arch, &a, &why) != AS_OK)
        return as_fail(st, why.code, "--arch %s: %s", c->arch, why.message);
    if (tn_hw_from_arch(&a, base, &why) != AS_OK)
        return as_fail(st, why.code, "--arch %s: %s", c->arch, why.message);
    cli_model_args load = {0};
    return cli_load_model(c->model, &load, g, st);
}

int cli_tune(int argc, char **argv)
{
    double start = cli_seconds_now();
    tune_cli c;
    tune_defaults(&c);
    tn_options o;
    cli_option options[TUNE_MAX_OPTIONS];
    cli_command cmd = tune_command(options, &c);
    int rc = parse_tune_options(&cmd, argc, argv, &c, &o);
    if (rc != CLI_PARSED)
        return rc;
    /* Ctrl-C from here on stops the tuning instead of the program. */
    volatile int stop = 0;
    o.stop_flag = &stop;
    cli_catch_interrupt(&stop);
    as_status st;
    as_status_clear(&st);
    tn_hw base;
    wl_graph *g = NULL;
    if (load_inputs(&c, &base, &g, &st) != AS_OK)
        return cli_fail(&cmd, &st);
    cli_print_warnings(g);
    /* The layers, counted first to size the progress bar. */
    tn_conv *layers = NULL;
    int n_layers = 0, skipped = 0;
    tune_run run = {.base = &base, .o = &o};
    as_status_clear(&run.store_status);
    as_code code = tn_model_layers(g, &layers, &n_layers, &skipped, &st);
    free(layers);
    if (code == AS_OK &&
        !(run.layer_trials = calloc((size_t)(n_layers > 0 ? n_layers : 1), sizeof(int64_t))))
        code = as_fail(&st, AS_ENOMEM, "out of memory");
    run.n_layers = n_layers;
    if (code == AS_OK && n_layers > 0) /* none: tn_tune_model says why, and nothing is kept */
        code = begin_store(&run, &c, &st);
    o.progress = on_progress;
    o.layer_done = on_layer_done;
    o.progress_user = &run;
    cli_progress_init(&run.bar, "tuning");
    tn_model_result result = {0};
    if (code == AS_OK)
        code = tn_tune_model(g, &base, &o, &result, &st);
    cli_progress_end(&run.bar);
    if (code == AS_OK && run.store_status.code != AS_OK) {
        st = run.store_status;
        code = st.code;
    }
    end_store(&run, code == AS_OK && !result.interrupted);
    if (code != AS_OK) {
        tn_model_result_free(&result);
        free(run.layer_trials);
        wl_graph_free(g);
        return cli_fail(&cmd, &st);
    }
    if (result.interrupted)
        fprintf(stderr,
                "accelsearch: interrupted: %d of %d layers complete; the best found so "
                "far is shown\n",
                run.layers_done, result.n_layers);
    if (c.json)
        print_json(&c, &o, &run, &result, cli_seconds_now() - start);
    else
        print_text(&c, &o, &run, &result, cli_seconds_now() - start);
    rc = result.interrupted ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
    tn_model_result_free(&result);
    free(run.layer_trials);
    wl_graph_free(g);
    return rc;
}
