/*
 * ppo.h -- proximal policy optimisation for cooperating agents (MAPPO),
 * and the walk of those agents over a layer's knob space that DCO-Comp
 * and the CHAMELEON-style tuner share.  Private to tune/.
 *
 * Core (tn_ppo_*): n agents, each an actor MLP over the whole state with
 * one categorical head per action dimension it owns; one centralised
 * critic MLP over the same state giving the value (Yu et al., "The
 * surprising effectiveness of PPO in cooperative multi-agent games",
 * NeurIPS 2022).  A rollout buffer holds `episodes` parallel episodes of
 * `horizon` steps; an update computes GAE(gamma, lambda) advantages per
 * episode, then runs `epochs` passes of `minibatches` shuffled
 * minibatches of the clipped surrogate (each agent its own ratio over its
 * own heads, the advantage shared: the team reward), the critic's squared
 * error and an entropy bonus, with Adam (tn_mlp).  With one agent owning
 * every head this is single-agent PPO (Schulman et al. 2017).
 *
 * Walk (tn_walk_*): the agents move a configuration of the knob space,
 * each head one knob, each action a move {-1, 0, +1} of the knob's choice
 * index (clamped at the ends).  Moves, not choices, because (1) the
 * choices of every knob are ordered (tile extents, threads, sizes), so a
 * move is a step to a neighbour and a policy conditioned on where it
 * stands learns in which direction throughput rises, as CHAMELEON's
 * agent does (its actions are decrement, stay, increment of each knob);
 * (2) the heads keep three outputs whatever a knob's cardinality (up to
 * 64 choices), so the networks stay small.  The state is every knob's
 * normalised choice index, the reward of the configuration the walk stands
 * on (throughput over the best measured: the agents see how good their
 * place is) and the fraction of the episode elapsed.  The heads start at
 * probability `stay` for move 0 (their output biases), so that a step
 * first changes about one knob, a neighbour as AutoTVM's annealing and
 * TVM's walks take one, instead of two thirds of the thirteen knobs at
 * once, which often lands on a configuration that overflows a buffer.  Everything random
 * comes from the as_rng passed in: a seed gives one result.
 */
#ifndef AS_TUNE_PPO_H
#define AS_TUNE_PPO_H

#include "tune_private.h"

#define TN_PPO_MAX_AGENTS 4
#define TN_PPO_MAX_HEADS TN_KNOBS
#define TN_PPO_MAX_ACTIONS 8
#define TN_MOVES 3 /* a knob's move: -1, 0, +1 */

typedef struct tn_ppo_params {
    int hidden;    /* width of the two tanh hidden layers of every network */
    int episodes;  /* parallel episodes per rollout */
    int horizon;   /* steps per episode */
    bool terminal; /* episodes end at the horizon (no bootstrap from V) */
    double stay;   /* walk: initial probability of a knob's move 0 (0: uniform) */
    double gamma;  /* discount */
    double lambda; /* GAE's lambda */
    double clip;   /* PPO's epsilon */
    double value_coef, entropy_coef;
    double actor_lr, critic_lr;
    double max_grad_norm; /* global L2 clip of each network's gradient */
    int epochs;           /* passes over the rollout per update */
    int minibatches;      /* minibatches per pass */
} tn_ppo_params;

typedef struct tn_ppo {
    tn_ppo_params par;
    int n_agents, state_dim, n_actions;
    int n_heads[TN_PPO_MAX_AGENTS];
    int first_head[TN_PPO_MAX_AGENTS]; /* heads are numbered agent by agent */
    int total_heads;
    tn_mlp actor[TN_PPO_MAX_AGENTS], critic;
    /* rollout buffer, row t * episodes + e */
    int steps;               /* rows filled: t * episodes */
    double *state;           /* rows x state_dim */
    int *action;             /* rows x total_heads */
    double *logp;            /* rows x n_agents: log-probability when acting */
    double *value;           /* rows */
    double *reward;          /* rows: set by the caller after tn_ppo_act */
    double *last_state;      /* episodes x state_dim: after the last step */
    double *advantage, *ret; /* rows */
    /* scratch of an update */
    int *order;
    double *mb_state, *mb_grad, *mb_value_grad;
    double *probs; /* total_heads x n_actions of one row */
} tn_ppo;

/* The buffer and networks of n_agents agents, agent a owning heads[a]
 * heads of n_actions actions, over states of state_dim numbers.  Weights
 * from rng; policy heads start near uniform (output scale 0.01). */
as_code tn_ppo_init(tn_ppo *p, const tn_ppo_params *par, int n_agents, const int *heads,
                    int n_actions, int state_dim, as_rng *rng, as_status *st);
void tn_ppo_free(tn_ppo *p);

/* Step t of the rollout: for each of the `episodes` states (rows of
 * states), sample every head's action (actions: episodes x total_heads),
 * keep state, actions, log-probabilities and value in the buffer.  The
 * caller then sets p->reward[t * episodes + e]. */
void tn_ppo_act(tn_ppo *p, int t, const double *states, as_rng *rng, int *actions);

/* The policy of agent a at one state: n_heads[a] x n_actions
 * probabilities into probs. */
void tn_ppo_policy(tn_ppo *p, int agent, const double *state, double *probs);

/* GAE over one episode of T steps, rows `stride` apart: with
 * delta_t = r_t + gamma V_{t+1} - V_t (V_T = last_value),
 * A_t = delta_t + gamma lambda A_{t+1}, and returns R_t = A_t + V_t. */
void tn_ppo_gae(const double *reward, const double *value, int T, int stride, double last_value,
                double gamma, double lambda, double *advantage, double *ret);

/* d/dr of PPO's clipped surrogate min(r A, clip(r, 1-eps, 1+eps) A): A
 * where the unclipped term is the minimum, 0 where the clip holds it
 * (r > 1+eps with A > 0, r < 1-eps with A < 0). */
double tn_ppo_surrogate_grad(double ratio, double advantage, double eps);

/* The update after a full rollout (last_state set): advantages, returns,
 * then epochs x minibatches Adam steps of every actor and the critic.
 * Empties the buffer. */
void tn_ppo_update(tn_ppo *p, as_rng *rng);

/* ------------------------------------------------------------------ walk */

/* Reward of n configurations (throughput over the best measured, 0 when
 * invalid): the engine's cost model, or a measurement where it has one. */
typedef void (*tn_reward_fn)(void *user, const tn_point *pts, int n, double *out);

typedef struct tn_walk {
    const tn_space *sp;
    tn_ppo ppo;
    int head_knob[TN_PPO_MAX_HEADS]; /* knob moved by each head */
    tn_point *cur;                   /* episodes: where each episode stands */
    double *cur_reward;              /* episodes */
    tn_point *visited;               /* rows: the point reached at row t * episodes + e */
    int n_visited;
    double *states;  /* episodes x state_dim */
    int *actions;    /* episodes x total_heads */
    double *rewards; /* episodes */
} tn_walk;

/* The state of a configuration: TN_KNOBS normalised choice indices,
 * its reward and the elapsed fraction of the episode. */
#define TN_WALK_STATE (TN_KNOBS + 2)

/* Agents over sp's knobs: n_agents = TN_AGENTS gives each agent the
 * knobs tn_knob_agent assigns it (DCO-Comp); n_agents = 1 one agent over
 * every knob (CHAMELEON). */
as_code tn_walk_init(tn_walk *w, const tn_space *sp, const tn_ppo_params *par, int n_agents,
                     as_rng *rng, as_status *st);
void tn_walk_free(tn_walk *w);

/* One rollout from starts (episodes points): every step the agents move
 * each episode's configuration, the configuration reached is rewarded by
 * reward_fn and recorded in visited.  Ends with the buffer full, ready for
 * tn_ppo_update (rewards may be relabelled first). */
void tn_walk_rollout(tn_walk *w, const tn_point *starts, tn_reward_fn reward_fn, void *user,
                     as_rng *rng);

/* ------------------------------------------ what both RL engines share */

/* A tn_reward_fn over a tn_surrogate (user). */
void tn_surrogate_reward(void *user, const tn_point *pts, int n, double *out);

/* Starts of a rollout: the first `from_best` episodes cycle through the
 * best measured point of each of the `top` best GEMM cores (BATCH,
 * BLOCK_IN, BLOCK_OUT; best first), the others are random points.  One
 * start per GEMM core, not the `top` best points, because the best points
 * share one core after a few rounds, and a walk of moves seldom changes
 * the core and every tile that must stay a multiple of it at once: from
 * the best points alone DCO-Comp settled on a poor core in four of thirty
 * ResNet-18 layer runs (12.2 GFLOPS on 4x8x8 where 1x8x32 gives 48.6; on
 * the space before tile_b counted batch blocks). */
void tn_walk_starts(const tn_walk *w, const tn_history *h, int from_best, int top, as_rng *rng,
                    tn_point *starts);

/* order[0..n) = 0..n-1 sorted by key descending, ties by index (an
 * insertion sort: n is a round's candidates, at most a few hundred). */
void tn_order_by(const double *key, int n, int *order);

#endif
