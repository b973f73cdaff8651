/*
 * ppo.c -- MAPPO's actors, centralised critic, rollout buffer, GAE and
 * clipped-surrogate update, and the agents' walk over a knob space
 * (ppo.h states the model).
 *
 * Losses of one minibatch of n rows, minimised by Adam (tn_mlp):
 *
 *   actor a:  -(1/n) sum_i min(r_i A_i, clip(r_i, 1-eps, 1+eps) A_i)
 *             - c_ent (1/n) sum_i sum_{heads h of a} H(pi_h(. | s_i)),
 *             r_i = exp(log pi_a(u_i | s_i) - log pi_a_old(u_i | s_i)),
 *             log pi_a the sum over a's heads;
 *   critic:   c_v (1/n) sum_i (V(s_i) - R_i)^2 / 2.
 *
 * Their gradients with respect to a head's logits z (softmax p, taken
 * action u): d log p_u / d z_j = [j = u] - p_j and
 * d H / d z_j = -p_j (log p_j + H).  Advantages are normalised over the
 * rollout (zero mean, unit deviation), as MAPPO does.
 */
#include "ppo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Softmax of n logits into p; returns nothing, p sums to 1. */
static void softmax(const double *z, int n, double *p)
{
    double top = z[0];
    for (int j = 1; j < n; j++)
        top = fmax(top, z[j]);
    double sum = 0;
    for (int j = 0; j < n; j++) {
        p[j] = exp(z[j] - top);
        sum += p[j];
    }
    for (int j = 0; j < n; j++)
        p[j] /= sum;
}

/* An index drawn from the n probabilities p (the last one takes what
 * rounding leaves). */
static int sample_index(const double *p, int n, as_rng *rng)
{
    double u = as_rng_unit(rng), acc = 0;
    for (int j = 0; j < n - 1; j++) {
        acc += p[j];
        if (u < acc)
            return j;
    }
    return n - 1;
}

static int minibatch_rows(const tn_ppo_params *par)
{
    int rows = par->episodes * par->horizon;
    int mb = par->minibatches > 0 ? par->minibatches : 1;
    return (rows + mb - 1) / mb;
}

as_code tn_ppo_init(tn_ppo *p, const tn_ppo_params *par, int n_agents, const int *heads,
                    int n_actions, int state_dim, as_rng *rng, as_status *st)
{
    memset(p, 0, sizeof *p);
    if (n_agents < 1 || n_agents > TN_PPO_MAX_AGENTS || n_actions < 2 ||
        n_actions > TN_PPO_MAX_ACTIONS || state_dim < 1 || par->episodes < 1 || par->horizon < 1 ||
        par->hidden < 1)
        return as_fail(st, AS_EINVAL,
                       "ppo.c: %d agents of %d actions over %d inputs, %d x %d steps", n_agents,
                       n_actions, state_dim, par->episodes, par->horizon);
    p->par = *par;
    p->n_agents = n_agents;
    p->n_actions = n_actions;
    p->state_dim = state_dim;
    for (int a = 0; a < n_agents; a++) {
        p->first_head[a] = p->total_heads;
        p->n_heads[a] = heads[a];
        p->total_heads += heads[a];
    }
    if (p->total_heads > TN_PPO_MAX_HEADS)
        return as_fail(st, AS_EINVAL, "ppo.c: %d heads (at most %d)", p->total_heads,
                       TN_PPO_MAX_HEADS);
    int rows = par->episodes * par->horizon, mb = minibatch_rows(par);
    int max_rows = mb > par->episodes ? mb : par->episodes;
    for (int a = 0; a < n_agents; a++) {
        int widths[4] = {state_dim, par->hidden, par->hidden, heads[a] * n_actions};
        if (heads[a] > 0 && tn_mlp_init(&p->actor[a], 3, widths, max_rows, 0.01, rng, st))
            goto fail;
    }
    int critic_widths[4] = {state_dim, par->hidden, par->hidden, 1};
    if (tn_mlp_init(&p->critic, 3, critic_widths, max_rows, 1.0, rng, st))
        goto fail;
    p->state = malloc(sizeof(double) * (size_t)rows * (size_t)state_dim);
    p->action = malloc(sizeof(int) * ((size_t)rows * (size_t)p->total_heads + 1));
    p->logp = malloc(sizeof(double) * (size_t)rows * (size_t)n_agents);
    p->value = malloc(sizeof(double) * (size_t)rows);
    p->reward = calloc((size_t)rows, sizeof(double));
    p->last_state = calloc((size_t)par->episodes * (size_t)state_dim, sizeof(double));
    p->advantage = malloc(sizeof(double) * (size_t)rows);
    p->ret = malloc(sizeof(double) * (size_t)rows);
    p->order = malloc(sizeof(int) * (size_t)rows);
    p->mb_state = malloc(sizeof(double) * (size_t)max_rows * (size_t)state_dim);
    p->mb_grad = malloc(sizeof(double) * (size_t)max_rows * (size_t)(TN_PPO_MAX_HEADS * n_actions));
    p->mb_value_grad = malloc(sizeof(double) * (size_t)max_rows);
    p->probs = malloc(sizeof(double) * (size_t)(TN_PPO_MAX_HEADS * n_actions));
    if (!p->state || !p->action || !p->logp || !p->value || !p->reward || !p->last_state ||
        !p->advantage || !p->ret || !p->order || !p->mb_state || !p->mb_grad || !p->mb_value_grad ||
        !p->probs) {
        as_fail(st, AS_ENOMEM, "ppo.c: rollout buffer of %d rows", rows);
        goto fail;
    }
    return AS_OK;
fail:
    tn_ppo_free(p);
    return st ? st->code : AS_ENOMEM;
}

void tn_ppo_free(tn_ppo *p)
{
    for (int a = 0; a < TN_PPO_MAX_AGENTS; a++)
        if (p->actor[a].n_layers)
            tn_mlp_free(&p->actor[a]);
    if (p->critic.n_layers)
        tn_mlp_free(&p->critic);
    free(p->state);
    free(p->action);
    free(p->logp);
    free(p->value);
    free(p->reward);
    free(p->last_state);
    free(p->advantage);
    free(p->ret);
    free(p->order);
    free(p->mb_state);
    free(p->mb_grad);
    free(p->mb_value_grad);
    free(p->probs);
    memset(p, 0, sizeof *p);
}

/* Probabilities of every head of agent a at row `row` of its last
 * forward pass (out) into probs: n_heads[a] x n_actions. */
static void row_probs(const tn_ppo *p, int a, const gsl_matrix *out, int row, double *probs)
{
    const double *logits = gsl_matrix_const_ptr(out, (size_t)row, 0);
    for (int h = 0; h < p->n_heads[a]; h++)
        softmax(logits + h * p->n_actions, p->n_actions, probs + h * p->n_actions);
}

void tn_ppo_policy(tn_ppo *p, int agent, const double *state, double *probs)
{
    const gsl_matrix *out = tn_mlp_forward(&p->actor[agent], state, 1);
    row_probs(p, agent, out, 0, probs);
}

void tn_ppo_act(tn_ppo *p, int t, const double *states, as_rng *rng, int *actions)
{
    int E = p->par.episodes, th = p->total_heads, A = p->n_actions;
    int base = t * E;
    memcpy(p->state + (size_t)base * (size_t)p->state_dim, states,
           sizeof(double) * (size_t)E * (size_t)p->state_dim);
    for (int a = 0; a < p->n_agents; a++) {
        if (!p->n_heads[a]) {
            for (int e = 0; e < E; e++)
                p->logp[(size_t)(base + e) * (size_t)p->n_agents + (size_t)a] = 0;
            continue;
        }
        const gsl_matrix *out = tn_mlp_forward(&p->actor[a], states, E);
        for (int e = 0; e < E; e++) {
            row_probs(p, a, out, e, p->probs);
            double logp = 0;
            for (int h = 0; h < p->n_heads[a]; h++) {
                int u = sample_index(p->probs + h * A, A, rng);
                actions[e * th + p->first_head[a] + h] = u;
                logp += log(p->probs[h * A + u]);
            }
            p->logp[(size_t)(base + e) * (size_t)p->n_agents + (size_t)a] = logp;
        }
    }
    memcpy(p->action + (size_t)base * (size_t)th, actions, sizeof(int) * (size_t)E * (size_t)th);
    const gsl_matrix *v = tn_mlp_forward(&p->critic, states, E);
    for (int e = 0; e < E; e++)
        p->value[base + e] = gsl_matrix_get(v, (size_t)e, 0);
    p->steps = base + E;
}

void tn_ppo_gae(const double *reward, const double *value, int T, int stride, double last_value,
                double gamma, double lambda, double *advantage, double *ret)
{
    double next_value = last_value, next_adv = 0;
    for (int t = T - 1; t >= 0; t--) {
        size_t i = (size_t)t * (size_t)stride;
        double delta = reward[i] + gamma * next_value - value[i];
        advantage[i] = delta + gamma * lambda * next_adv;
        ret[i] = advantage[i] + value[i];
        next_value = value[i];
        next_adv = advantage[i];
    }
}

double tn_ppo_surrogate_grad(double ratio, double advantage, double eps)
{
    if (advantage > 0 && ratio > 1 + eps)
        return 0;
    if (advantage < 0 && ratio < 1 - eps)
        return 0;
    return advantage;
}

/* Advantages and returns of the full buffer, advantages normalised. */
static void advantages(tn_ppo *p)
{
    int E = p->par.episodes, T = p->par.horizon, rows = E * T;
    const gsl_matrix *last = p->par.terminal ? NULL : tn_mlp_forward(&p->critic, p->last_state, E);
    for (int e = 0; e < E; e++)
        tn_ppo_gae(p->reward + e, p->value + e, T, E, last ? gsl_matrix_get(last, (size_t)e, 0) : 0,
                   p->par.gamma, p->par.lambda, p->advantage + e, p->ret + e);
    double mean = 0, var = 0;
    for (int i = 0; i < rows; i++)
        mean += p->advantage[i];
    mean /= rows;
    for (int i = 0; i < rows; i++)
        var += (p->advantage[i] - mean) * (p->advantage[i] - mean);
    double sd = sqrt(var / rows);
    for (int i = 0; i < rows; i++)
        p->advantage[i] = (p->advantage[i] - mean) / (sd + 1e-8);
}

/* One Adam step of the critic on rows idx[0..n). */
static void critic_step(tn_ppo *p, const int *idx, int n)
{
    tn_mlp_zero_grad(&p->critic);
    const gsl_matrix *v = tn_mlp_forward(&p->critic, p->mb_state, n);
    for (int i = 0; i < n; i++)
        p->mb_value_grad[i] =
            p->par.value_coef * (gsl_matrix_get(v, (size_t)i, 0) - p->ret[idx[i]]) / n;
    tn_mlp_backward(&p->critic, p->mb_value_grad);
    tn_mlp_adam_step(&p->critic, p->par.critic_lr, p->par.max_grad_norm);
}

/* One Adam step of agent a's actor on rows idx[0..n): the gradient of
 * the clipped surrogate and the entropy bonus (file comment). */
static void actor_step(tn_ppo *p, int a, const int *idx, int n)
{
    int A = p->n_actions, heads = p->n_heads[a], outs = heads * A;
    tn_mlp_zero_grad(&p->actor[a]);
    const gsl_matrix *out = tn_mlp_forward(&p->actor[a], p->mb_state, n);
    for (int i = 0; i < n; i++) {
        const int *u = p->action + (size_t)idx[i] * (size_t)p->total_heads + p->first_head[a];
        row_probs(p, a, out, i, p->probs);
        double logp = 0;
        for (int h = 0; h < heads; h++)
            logp += log(p->probs[h * A + u[h]]);
        double old = p->logp[(size_t)idx[i] * (size_t)p->n_agents + (size_t)a];
        double ratio = exp(fmin(logp - old, 20.0));
        double g = tn_ppo_surrogate_grad(ratio, p->advantage[idx[i]], p->par.clip) * ratio;
        double *d = p->mb_grad + (size_t)i * (size_t)outs;
        for (int h = 0; h < heads; h++) {
            const double *ph = p->probs + h * A;
            double entropy = 0;
            for (int j = 0; j < A; j++)
                entropy -= ph[j] * log(ph[j] + 1e-300);
            for (int j = 0; j < A; j++) {
                double dlogp = (j == u[h]) - ph[j];
                double dentropy = -ph[j] * (log(ph[j] + 1e-300) + entropy);
                d[h * A + j] = (-g * dlogp - p->par.entropy_coef * dentropy) / n;
            }
        }
    }
    tn_mlp_backward(&p->actor[a], p->mb_grad);
    tn_mlp_adam_step(&p->actor[a], p->par.actor_lr, p->par.max_grad_norm);
}

void tn_ppo_update(tn_ppo *p, as_rng *rng)
{
    int rows = p->par.episodes * p->par.horizon;
    if (p->steps < rows)
        return; /* an incomplete rollout is dropped by the next one */
    advantages(p);
    int mb = minibatch_rows(&p->par);
    for (int i = 0; i < rows; i++)
        p->order[i] = i;
    for (int epoch = 0; epoch < p->par.epochs; epoch++) {
        for (int i = rows - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)as_rng_below(rng, i + 1), swap = p->order[i];
            p->order[i] = p->order[j];
            p->order[j] = swap;
        }
        for (int start = 0; start < rows; start += mb) {
            int n = rows - start < mb ? rows - start : mb;
            const int *idx = p->order + start;
            for (int i = 0; i < n; i++)
                memcpy(p->mb_state + (size_t)i * (size_t)p->state_dim,
                       p->state + (size_t)idx[i] * (size_t)p->state_dim,
                       sizeof(double) * (size_t)p->state_dim);
            critic_step(p, idx, n);
            for (int a = 0; a < p->n_agents; a++)
                if (p->n_heads[a])
                    actor_step(p, a, idx, n);
        }
    }
    p->steps = 0;
}

/* ------------------------------------------------------------------ walk */

as_code tn_walk_init(tn_walk *w, const tn_space *sp, const tn_ppo_params *par, int n_agents,
                     as_rng *rng, as_status *st)
{
    memset(w, 0, sizeof *w);
    w->sp = sp;
    int heads[TN_PPO_MAX_AGENTS] = {0}, n = 0;
    for (int a = 0; a < n_agents; a++)
        for (int k = 0; k < TN_KNOBS; k++)
            if (n_agents == 1 || (int)tn_knob_agent((tn_knob)k) == a) {
                w->head_knob[n++] = k;
                heads[a]++;
            }
    if (tn_ppo_init(&w->ppo, par, n_agents, heads, TN_MOVES, TN_WALK_STATE, rng, st))
        return st ? st->code : AS_EINVAL;
    if (par->stay > 0 && par->stay < 1) {
        double stay_logit = log(2 * par->stay / (1 - par->stay)); /* e^b / (e^b + 2) = stay */
        for (int a = 0; a < n_agents; a++) {
            tn_mlp *m = &w->ppo.actor[a];
            if (!heads[a])
                continue;
            for (int h = 0; h < heads[a]; h++)
                gsl_vector_set(m->bias[m->n_layers - 1], (size_t)(h * TN_MOVES + 1), stay_logit);
        }
    }
    size_t E = (size_t)par->episodes, rows = E * (size_t)par->horizon;
    w->cur = malloc(sizeof(tn_point) * E);
    w->cur_reward = malloc(sizeof(double) * E);
    w->visited = malloc(sizeof(tn_point) * rows);
    w->states = malloc(sizeof(double) * E * TN_WALK_STATE);
    w->actions = malloc(sizeof(int) * (E * (size_t)w->ppo.total_heads + 1));
    w->rewards = malloc(sizeof(double) * E);
    if (!w->cur || !w->cur_reward || !w->visited || !w->states || !w->actions || !w->rewards) {
        tn_walk_free(w);
        return as_fail(st, AS_ENOMEM, "ppo.c: walk of %zu episodes", E);
    }
    return AS_OK;
}

void tn_walk_free(tn_walk *w)
{
    tn_ppo_free(&w->ppo);
    free(w->cur);
    free(w->cur_reward);
    free(w->visited);
    free(w->states);
    free(w->actions);
    free(w->rewards);
    memset(w, 0, sizeof *w);
}

/* The state of configuration pt standing at reward `reward`, a fraction
 * `elapsed` through its episode. */
static void encode(const tn_space *sp, const tn_point *pt, double reward, double elapsed,
                   double *out)
{
    for (int k = 0; k < TN_KNOBS; k++) {
        int n = sp->n_choices[k];
        out[k] = n > 1 ? (double)pt->choice[k] / (n - 1) : 0;
    }
    out[TN_KNOBS] = reward;
    out[TN_KNOBS + 1] = elapsed;
}

void tn_walk_rollout(tn_walk *w, const tn_point *starts, tn_reward_fn reward_fn, void *user,
                     as_rng *rng)
{
    int E = w->ppo.par.episodes, T = w->ppo.par.horizon, th = w->ppo.total_heads;
    memcpy(w->cur, starts, sizeof(tn_point) * (size_t)E);
    reward_fn(user, w->cur, E, w->cur_reward);
    for (int t = 0; t < T; t++) {
        for (int e = 0; e < E; e++)
            encode(w->sp, &w->cur[e], w->cur_reward[e], (double)t / T,
                   w->states + (size_t)e * TN_WALK_STATE);
        tn_ppo_act(&w->ppo, t, w->states, rng, w->actions);
        tn_point *next = w->visited + (size_t)t * (size_t)E;
        for (int e = 0; e < E; e++) {
            next[e] = w->cur[e];
            for (int h = 0; h < th; h++) {
                int k = w->head_knob[h];
                int c = (int)next[e].choice[k] + w->actions[e * th + h] - 1;
                int top = w->sp->n_choices[k] - 1;
                next[e].choice[k] = (uint8_t)(c < 0 ? 0 : c > top ? top : c);
            }
        }
        reward_fn(user, next, E, w->rewards);
        for (int e = 0; e < E; e++) {
            w->ppo.reward[t * E + e] = w->rewards[e];
            w->cur[e] = next[e];
            w->cur_reward[e] = w->rewards[e];
        }
    }
    for (int e = 0; e < E; e++)
        encode(w->sp, &w->cur[e], w->cur_reward[e], 1.0,
               w->ppo.last_state + (size_t)e * TN_WALK_STATE);
    w->n_visited = E * T;
}

/* ------------------------------------------ what both RL engines share */

void tn_surrogate_reward(void *user, const tn_point *pts, int n, double *out)
{
    tn_surrogate *s = user;
    if (!tn_surrogate_predict(s, pts, n, out, NULL))
        for (int i = 0; i < n; i++)
            out[i] = 0;
    for (int i = 0; i < n; i++) {
        int64_t j = s->h ? tn_history_find(s->h, &pts[i]) : -1;
        if (j >= 0) {
            const tn_result *r = &s->h->trials[j].result;
            out[i] = r->valid && s->best_gflops > 0 ? r->gflops / s->best_gflops : 0;
        } else if (out[i] < 0) {
            out[i] = 0;
        }
    }
}

/* Is trial i better than trial j (GFLOPS, then the earlier)? */
static bool better_trial(const tn_history *h, int64_t i, int64_t j)
{
    double a = h->trials[i].result.gflops, b = h->trials[j].result.gflops;
    return a > b || (a == b && i < j);
}

/* Do a and b have the same GEMM core (BATCH, BLOCK_IN, BLOCK_OUT)? */
static bool same_gemm(const tn_point *a, const tn_point *b)
{
    return a->choice[TN_KNOB_BATCH] == b->choice[TN_KNOB_BATCH] &&
           a->choice[TN_KNOB_BLOCK_IN] == b->choice[TN_KNOB_BLOCK_IN] &&
           a->choice[TN_KNOB_BLOCK_OUT] == b->choice[TN_KNOB_BLOCK_OUT];
}

void tn_walk_starts(const tn_walk *w, const tn_history *h, int from_best, int top, as_rng *rng,
                    tn_point *starts)
{
    int64_t best[64];
    int n_best = 0;
    if (top > 64)
        top = 64;
    for (int64_t i = 0; i < h->n; i++) {
        if (!h->trials[i].result.valid)
            continue;
        int same = 0; /* the listed trial on the same GEMM core, if any */
        while (same < n_best && !same_gemm(&h->trials[best[same]].point, &h->trials[i].point))
            same++;
        if (same < n_best) {
            if (!better_trial(h, i, best[same]))
                continue;
            for (int j = same; j < n_best - 1; j++) /* i replaces it */
                best[j] = best[j + 1];
            n_best--;
        }
        int at = n_best < top ? n_best++ : top;
        if (at == top && !better_trial(h, i, best[top - 1]))
            continue;
        if (at == top)
            at = top - 1;
        while (at > 0 && better_trial(h, i, best[at - 1])) {
            best[at] = best[at - 1];
            at--;
        }
        best[at] = i;
    }
    for (int e = 0; e < w->ppo.par.episodes; e++) {
        if (e < from_best && n_best > 0)
            starts[e] = h->trials[best[e % n_best]].point;
        else
            tn_space_random(w->sp, rng, &starts[e]);
    }
}

void tn_order_by(const double *key, int n, int *order)
{
    for (int i = 0; i < n; i++) {
        int at = i;
        while (at > 0 && (key[order[at - 1]] < key[i] ||
                          (key[order[at - 1]] == key[i] && order[at - 1] > i))) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
}
