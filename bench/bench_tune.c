/*
 * bench_tune.c -- DCO-Comp's comparison (seed 003): the three tuners over
 * the same per-layer space (the seven knobs of TVM's VTA conv2d template
 * and VTA++'s hardware parameters under the PYNQ-Z1 budget) with the same
 * number of measurements per layer, on AlexNet, VGG-11/13/16/19 and
 * ResNet-18/34, over several seeds; DCO-Comp also without confidence
 * sampling (the ablation).
 *
 * Per model it prints, for each tuner, the whole-model throughput (the
 * tuned layers, each counted as often as it occurs, at its best
 * configuration; mean over seeds) and its ratio to AutoTVM's, the tuning
 * wall time and its ratio to AutoTVM's, and the trials (per layer) after
 * which the whole model first reaches 95 % of the best throughput any
 * tuner found for that model and seed ("-" when it never does): the
 * paper's "near-peak GFLOPS after about 455 trials instead of about 800".
 * Wall time is this machine's time to run the tuner and its measurements;
 * a measurement here is a model evaluation (microseconds), where the
 * paper's is a compile and a run on the VTA++ simulator, so the wall time
 * is the tuner's own overhead.  What the paper's compile time also holds,
 * the simulation of each measured configuration, grows with the cycles
 * simulated: "sim work" is the sum of the cycles of every valid
 * configuration measured (one that does not build is not run), relative
 * to AutoTVM's; "valid" is the share of measurements that built and ran.
 *
 * usage: bench_tune [--trials N] [--seeds S] [--threads T] [--budget B] [model ...]
 *   default: 1000 trials, 3 seeds, OpenMP's threads, pynq; the seven models.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

enum { MAX_SEEDS = 8 };

/* The tuners compared: an engine and whether confidence sampling is on. */
static const struct {
    const char *label;
    tn_engine engine;
    bool confidence_sampling;
} tuners[] = {
    {"autotvm", TN_ENGINE_AUTOTVM, false},
    {"chameleon", TN_ENGINE_CHAMELEON, false},
    {"dcocomp", TN_ENGINE_DCOCOMP, true},
    {"dcocomp-no-cs", TN_ENGINE_DCOCOMP, false},
};
#define N_TUNERS ((int)(sizeof tuners / sizeof tuners[0]))

typedef struct cell {
    double gflops, wall_seconds;
    double simulated_cycles; /* sum over the measured valid configurations */
    double valid_share;      /* of the measurements */
    double *curve;           /* whole-model GFLOPS after t trials per layer, t = 1 .. trials */
    int64_t trials;
} cell;

/*
 * The model's throughput after each trial count t: every layer at the
 * best configuration among its first t measurements (a layer with none
 * valid yet makes the model not runnable: 0).
 */
static double *model_curve(const tn_model_result *r, int64_t trials)
{
    double *curve = calloc((size_t)trials, sizeof *curve);
    double *best = malloc((size_t)r->n_layers * sizeof *best);
    if (!curve || !best) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int i = 0; i < r->n_layers; i++)
        best[i] = INFINITY;
    for (int64_t t = 0; t < trials; t++) {
        double seconds = 0;
        for (int i = 0; i < r->n_layers; i++) {
            const tn_layer_result *l = &r->layers[i];
            if (t < l->n_trials && l->trials[t].result.valid &&
                l->trials[t].result.seconds < best[i])
                best[i] = l->trials[t].result.seconds;
            seconds += best[i] * l->layer.count;
        }
        curve[t] = isfinite(seconds) ? 2.0 * (double)r->macs / seconds / 1e9 : 0;
    }
    free(best);
    return curve;
}

/* The first trial count reaching target, or 0 when none does. */
static int64_t trials_to(const double *curve, int64_t trials, double target)
{
    for (int64_t t = 0; t < trials; t++)
        if (curve[t] >= target)
            return t + 1;
    return 0;
}

static void run_cell(const wl_graph *g, const tn_hw *hw, const tn_options *base, int tuner,
                     uint64_t seed, cell *c)
{
    tn_options o = *base;
    o.engine = tuners[tuner].engine;
    o.confidence_sampling = tuners[tuner].confidence_sampling;
    o.seed = seed;
    tn_model_result r;
    as_status st;
    if (tn_tune_model(g, hw, &o, &r, &st) != AS_OK) {
        fprintf(stderr, "%s, %s: %s\n", g->name, tuners[tuner].label, st.message);
        exit(1);
    }
    c->gflops = r.gflops;
    c->wall_seconds = r.wall_seconds;
    c->trials = o.trials;
    c->curve = model_curve(&r, o.trials);
    c->simulated_cycles = 0;
    double measured = 0, valid = 0;
    for (int i = 0; i < r.n_layers; i++)
        for (int64_t t = 0; t < r.layers[i].n_trials; t++) {
            measured++;
            if (r.layers[i].trials[t].result.valid) {
                valid++;
                c->simulated_cycles += (double)r.layers[i].trials[t].result.cycles;
            }
        }
    c->valid_share = measured > 0 ? valid / measured : 0;
    tn_model_result_free(&r);
}

static double mean(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i];
    return s / n;
}

/* Ratios to AutoTVM over every model, for the closing summary. */
typedef struct summary {
    double throughput_sum[N_TUNERS], throughput_max[N_TUNERS];
    double time_sum[N_TUNERS], time_best[N_TUNERS];
    double sim_sum[N_TUNERS];
    int models;
} summary;

static void bench_model(const char *name, const tn_hw *hw, const tn_options *base, int seeds,
                        summary *sum)
{
    wl_graph *g;
    as_status st;
    if (wl_zoo_build(name, &g, &st) != AS_OK) {
        fprintf(stderr, "%s\n", st.message);
        exit(1);
    }
    cell cells[N_TUNERS][MAX_SEEDS];
    for (int s = 0; s < seeds; s++)
        for (int t = 0; t < N_TUNERS; t++)
            run_cell(g, hw, base, t, (uint64_t)s + 1, &cells[t][s]);

    printf("\n%s (%lld trials per layer, %d seeds)\n", name, (long long)base->trials, seeds);
    printf("  %-14s %10s %8s %10s %8s %10s %7s %12s\n", "tuner", "GFLOPS", "vs TVM", "wall [s]",
           "vs TVM", "sim work", "valid", "trials->95%");
    double gflops[N_TUNERS], wall[N_TUNERS], sim[N_TUNERS], valid[N_TUNERS];
    for (int t = 0; t < N_TUNERS; t++) {
        double gf[MAX_SEEDS], ws[MAX_SEEDS], cy[MAX_SEEDS], va[MAX_SEEDS];
        for (int s = 0; s < seeds; s++) {
            gf[s] = cells[t][s].gflops;
            ws[s] = cells[t][s].wall_seconds;
            cy[s] = cells[t][s].simulated_cycles;
            va[s] = cells[t][s].valid_share;
        }
        gflops[t] = mean(gf, seeds);
        wall[t] = mean(ws, seeds);
        sim[t] = mean(cy, seeds);
        valid[t] = mean(va, seeds);
    }
    for (int t = 0; t < N_TUNERS; t++) {
        /* trials to 95 % of the best any tuner reached, per seed, averaged
         * over the seeds where it got there */
        double reached = 0;
        int n_reached = 0;
        for (int s = 0; s < seeds; s++) {
            double best = 0;
            for (int u = 0; u < N_TUNERS; u++)
                best = fmax(best, cells[u][s].gflops);
            int64_t at = trials_to(cells[t][s].curve, cells[t][s].trials, 0.95 * best);
            if (at > 0) {
                reached += (double)at;
                n_reached++;
            }
        }
        char to95[32];
        if (n_reached)
            snprintf(to95, sizeof to95, "%.0f (%d/%d)", reached / n_reached, n_reached, seeds);
        else
            snprintf(to95, sizeof to95, "- (0/%d)", seeds);
        printf("  %-14s %10.2f %7.3fx %10.2f %7.3fx %9.3fx %6.1f%% %12s\n", tuners[t].label,
               gflops[t], gflops[t] / gflops[0], wall[t], wall[t] / wall[0], sim[t] / sim[0],
               100 * valid[t], to95);
        sum->sim_sum[t] += sim[t] / sim[0];
        sum->throughput_sum[t] += gflops[t] / gflops[0];
        sum->throughput_max[t] = fmax(sum->throughput_max[t], gflops[t] / gflops[0]);
        sum->time_sum[t] += wall[t] / wall[0];
        sum->time_best[t] =
            sum->models ? fmin(sum->time_best[t], wall[t] / wall[0]) : wall[t] / wall[0];
    }
    sum->models++;
    for (int t = 0; t < N_TUNERS; t++)
        for (int s = 0; s < seeds; s++)
            free(cells[t][s].curve);
    wl_graph_free(g);
}

int main(int argc, char **argv)
{
    static const char *const default_models[] = {"alexnet", "vgg11",    "vgg13",   "vgg16",
                                                 "vgg19",   "resnet18", "resnet34"};
    tn_options base;
    tn_options_default(&base);
    int seeds = 3;
    const char *models[32];
    int n_models = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc)
            base.trials = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            base.threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            base.budget = tn_budget_find(argv[++i]);
        else if (argv[i][0] != '-' && n_models < 32)
            models[n_models++] = argv[i];
        else {
            fprintf(stderr,
                    "usage: %s [--trials N] [--seeds S] [--threads T] [--budget B] "
                    "[model ...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (seeds < 1 || seeds > MAX_SEEDS || base.trials < 1 || !base.budget) {
        fprintf(stderr, "bench_tune: seeds in 1..%d, trials >= 1, a known budget\n", MAX_SEEDS);
        return 2;
    }
    if (n_models == 0)
        for (int i = 0; i < (int)(sizeof default_models / sizeof *default_models); i++)
            models[n_models++] = default_models[i];

    arch_spec a;
    tn_hw hw;
    as_status st;
    if (arch_load("vta", &a, &st) != AS_OK || tn_hw_from_arch(&a, &hw, &st) != AS_OK) {
        fprintf(stderr, "%s\n", st.message);
        return 1;
    }
    printf("bench_tune: VTA++ space around the vta preset, %s budget (%s)\n", base.budget->name,
           base.budget->device);
    summary sum = {0};
    for (int m = 0; m < n_models; m++) {
        bench_model(models[m], &hw, &base, seeds, &sum);
        fflush(stdout);
    }
    printf("\nover %d models, relative to autotvm:\n", sum.models);
    printf("  %-14s %14s %14s %14s %14s %14s\n", "tuner", "mean thrpt", "max thrpt", "mean time",
           "best time", "mean sim work");
    for (int t = 0; t < N_TUNERS; t++)
        printf("  %-14s %13.3fx %13.3fx %13.3fx %13.3fx %13.3fx\n", tuners[t].label,
               sum.throughput_sum[t] / sum.models, sum.throughput_max[t],
               sum.time_sum[t] / sum.models, sum.time_best[t], sum.sim_sum[t] / sum.models);
    return 0;
}
