/*
 * test_fusion_plan.c -- fusion plans (fu_plan_*) on small random DAGs
 * built by hand (fixed seeds): the layer-by-layer plan is valid and
 * canonical; the canonical form is unique under any relabelling of the
 * groups; fu_plan_valid agrees with an independent oracle (a transitive
 * closure and a union-find written here) on random partitions; non-convex,
 * disconnected and mutually dependent groups are caught with reasons;
 * views sit in no group and data flows through them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fusion/fusion.h"
#include "test_check.h"

#define MAX_OPS 24
#define N_GRAPHS 40

/* A small deterministic generator (xorshift64*), so that the graphs do
 * not depend on the C library. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static int below(uint64_t *s, int n)
{
    return (int)(next_random(s) % (uint64_t)n);
}

/* An activation [1, 4, 8, 8]. */
static int32_t activation(wl_graph *g, const char *name, wl_tensor_kind kind)
{
    static const int64_t dims[4] = {1, 4, 8, 8};
    as_status st = {0};
    int32_t t = wl_add_tensor(g, name, kind, WL_DTYPE_F32, 4, dims, &st);
    if (t < 0)
        fail_msg("%s", st.message);
    return t;
}

/* A 3x3 conv (4 -> 4 channels, pads 1) from x into a new tensor. */
static int32_t add_conv(wl_graph *g, int32_t x, int id)
{
    static const int64_t wdims[4] = {4, 4, 3, 3};
    char name[32];
    as_status st = {0};
    snprintf(name, sizeof name, "w%d", id);
    int32_t w = wl_add_tensor(g, name, WL_TENSOR_WEIGHT, WL_DTYPE_F32, 4, wdims, &st);
    snprintf(name, sizeof name, "t%d", id);
    int32_t y = activation(g, name, WL_TENSOR_ACTIVATION);
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_CONV);
    for (int i = 0; i < 4; i++)
        a.pads[i] = 1;
    snprintf(name, sizeof name, "conv%d", id);
    if (w < 0 || wl_add_op(g, WL_OP_CONV, name, "Conv", 2, (int32_t[]){x, w}, 1, &y, &a, &st) < 0)
        fail_msg("%s", st.message);
    return y;
}

/* An op of kind k (Relu, Add, Identity) reading n_in tensors. */
static int32_t add_simple(wl_graph *g, wl_op_kind k, int n_in, const int32_t *in, int id)
{
    char name[32];
    as_status st = {0};
    snprintf(name, sizeof name, "t%d", id);
    int32_t y = activation(g, name, WL_TENSOR_ACTIVATION);
    snprintf(name, sizeof name, "%s%d", wl_op_kind_name(k), id);
    if (wl_add_op(g, k, name, wl_op_kind_name(k), n_in, in, 1, &y, NULL, &st) < 0)
        fail_msg("%s", st.message);
    return y;
}

/*
 * A random DAG of n_ops ops over one input: each op a conv, Relu, Add or
 * Identity (a view) of earlier tensors, all [1, 4, 8, 8]; tensors nothing
 * reads are graph outputs.  Inferred.
 */
static wl_graph *random_graph(uint64_t seed, int n_ops)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    wl_graph *g = wl_graph_new("random", "test:random");
    int32_t t[MAX_OPS + 1];
    bool read[MAX_OPS + 1] = {false};
    int n_t = 0;
    t[n_t++] = activation(g, "x", WL_TENSOR_INPUT);
    wl_add_graph_input(g, t[0]);
    for (int i = 0; i < n_ops; i++) {
        int a = n_t - 1 - below(&s, n_t < 3 ? n_t : 3); /* mostly recent: chains with branches */
        int b = below(&s, n_t);
        int kind = below(&s, 8);
        read[a] = true;
        if (kind < 3) {
            t[n_t++] = add_conv(g, t[a], i);
        } else if (kind < 5) {
            t[n_t++] = add_simple(g, WL_OP_RELU, 1, &t[a], i);
        } else if (kind < 7) {
            read[b] = true;
            t[n_t++] = add_simple(g, WL_OP_ADD, 2, (int32_t[]){t[a], t[b]}, i);
        } else {
            t[n_t++] = add_simple(g, WL_OP_IDENTITY, 1, &t[a], i);
        }
    }
    for (int i = 1; i < n_t; i++)
        if (!read[i])
            wl_add_graph_output(g, t[i]);
    as_status st = {0};
    check(wl_graph_infer(g, &st), &st);
    return g;
}

/* ------------------------------------------------------------- oracle */

/* reach[u][v]: a path of data edges from op u to op v (through views),
 * by the transitive closure of the direct edges. */
static void closure(const wl_graph *g, bool reach[MAX_OPS][MAX_OPS])
{
    memset(reach, 0, sizeof(bool) * MAX_OPS * MAX_OPS);
    for (int32_t v = 0; v < g->n_ops; v++)
        for (int i = 0; i < g->ops[v].n_inputs; i++) {
            int32_t p = g->tensors[g->ops[v].inputs[i]].producer;
            if (p >= 0)
                reach[p][v] = true;
        }
    for (int k = 0; k < g->n_ops; k++)
        for (int u = 0; u < g->n_ops; u++)
            for (int v = 0; reach[u][k] && v < g->n_ops; v++)
                reach[u][v] |= reach[k][v];
}

/* The tensor behind t: Identity views are followed back to their input. */
static int32_t base_tensor(const wl_graph *g, int32_t t)
{
    while (g->tensors[t].producer >= 0 && g->ops[g->tensors[t].producer].kind == WL_OP_IDENTITY)
        t = g->ops[g->tensors[t].producer].inputs[0];
    return t;
}

static int32_t find(int32_t *parent, int32_t x)
{
    return parent[x] == x ? x : (parent[x] = find(parent, parent[x]));
}

/* Validity by brute force: convexity from the closure (a member reaches a
 * working non-member that reaches a member; views only pass data on),
 * connectivity by union-find over producer/consumer and shared-input
 * pairs (views seen through), and no two groups reaching each other. */
static bool oracle_valid(const wl_graph *g, const fu_plan *p)
{
    bool reach[MAX_OPS][MAX_OPS];
    closure(g, reach);
    int32_t n = g->n_ops;
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = 0; v < n; v++)
            for (int32_t w = 0; w < n; w++)
                if (p->group[u] >= 0 && p->group[u] == p->group[w] && p->group[v] >= 0 &&
                    p->group[v] != p->group[u] && reach[u][v] && reach[v][w])
                    return false;
    int32_t parent[MAX_OPS];
    for (int32_t u = 0; u < n; u++)
        parent[u] = u;
    for (int32_t v = 0; v < n; v++)
        for (int i = 0; p->group[v] >= 0 && i < g->ops[v].n_inputs; i++) {
            int32_t t = base_tensor(g, g->ops[v].inputs[i]), u = g->tensors[t].producer;
            if (u >= 0 && p->group[u] == p->group[v])
                parent[find(parent, u)] = find(parent, v);
            for (int32_t w = 0; w < n; w++)
                for (int j = 0; p->group[w] == p->group[v] && j < g->ops[w].n_inputs; j++)
                    if (base_tensor(g, g->ops[w].inputs[j]) == t)
                        parent[find(parent, w)] = find(parent, v);
        }
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = 0; v < n; v++)
            if (p->group[u] >= 0 && p->group[u] == p->group[v] &&
                find(parent, u) != find(parent, v))
                return false;
    /* groups A -> B and B -> A (through any path) make a cycle */
    for (int32_t u = 0; u < n; u++)
        for (int32_t v = 0; v < n; v++)
            for (int32_t x = 0; x < n; x++)
                for (int32_t y = 0; y < n; y++)
                    if (p->group[u] >= 0 && p->group[v] >= 0 && p->group[u] != p->group[v] &&
                        p->group[x] == p->group[v] && p->group[y] == p->group[u] && reach[u][x] &&
                        reach[v][y])
                        return false;
    return true;
}

/* ------------------------------------------------------------- helpers */

static void init_plan(fu_plan *p, const wl_graph *g)
{
    as_status st = {0};
    check(fu_plan_init(p, g, &st), &st);
}

/* A random partition of the working ops into up to k groups, ids as
 * drawn (not canonical, some ids possibly unused, then compacted). */
static void random_partition(const wl_graph *g, fu_plan *p, uint64_t *s, int k)
{
    int32_t used[MAX_OPS];
    memset(used, -1, sizeof used);
    int32_t n = 0;
    for (int32_t o = 0; o < g->n_ops; o++) {
        if (!fu_op_in_plan(g, o)) {
            p->group[o] = -1;
            continue;
        }
        int id = below(s, k);
        if (used[id] < 0)
            used[id] = n++;
        p->group[o] = used[id];
    }
    p->n_groups = n;
}

/* Merge random pairs of groups of a valid plan while the result stays
 * valid: a random valid plan with larger groups. */
static void random_valid_plan(const wl_graph *g, fu_plan *p, uint64_t *s)
{
    init_plan(p, g);
    as_status st = {0};
    for (int tries = 0; tries < 30 && p->n_groups > 1; tries++) {
        fu_plan q;
        check(fu_plan_copy(&q, p, &st), &st);
        int32_t a = below(s, q.n_groups), b = below(s, q.n_groups);
        if (a == b)
            b = (a + 1) % q.n_groups;
        for (int32_t o = 0; o < q.n_ops; o++)
            if (q.group[o] == b)
                q.group[o] = a;
        for (int32_t o = 0; o < q.n_ops; o++) /* keep ids 0 .. n-2 */
            if (q.group[o] == q.n_groups - 1)
                q.group[o] = b == q.n_groups - 1 ? a : b;
        q.n_groups--;
        if (fu_plan_valid(g, &q, NULL, 0)) {
            fu_plan_canonicalize(g, &q);
            fu_plan_free(p);
            *p = q;
        } else {
            fu_plan_free(&q);
        }
    }
}

/* ------------------------------------------------------------------ tests */

static void test_layer_by_layer_valid_and_canonical(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= N_GRAPHS; seed++) {
        wl_graph *g = random_graph(seed, 4 + (int)(seed % 17));
        fu_plan p, q;
        as_status st = {0};
        init_plan(&p, g);
        char reason[160];
        assert_true(fu_plan_valid(g, &p, reason, sizeof reason));
        check(fu_plan_copy(&q, &p, &st), &st);
        fu_plan_canonicalize(g, &q);
        assert_true(fu_plan_equal(&p, &q));
        int32_t working = 0;
        for (int32_t o = 0; o < g->n_ops; o++) {
            working += fu_op_in_plan(g, o);
            assert_int_equal(p.group[o] >= 0, fu_op_in_plan(g, o));
            assert_true(g->ops[o].kind != WL_OP_IDENTITY || p.group[o] == -1);
        }
        assert_int_equal(p.n_groups, working);
        fu_plan_free(&p);
        fu_plan_free(&q);
        wl_graph_free(g);
    }
}

/* Any relabelling of the groups of a valid plan canonicalises to the same
 * array; canonical ids appear in topological order of first members. */
static void test_canonical_form_unique(void **state)
{
    (void)state;
    uint64_t s = 7;
    for (uint64_t seed = 1; seed <= N_GRAPHS; seed++) {
        wl_graph *g = random_graph(seed, 6 + (int)(seed % 15));
        fu_plan p;
        random_valid_plan(g, &p, &s);
        for (int round = 0; round < 5; round++) {
            fu_plan q;
            as_status st = {0};
            check(fu_plan_copy(&q, &p, &st), &st);
            int32_t perm[MAX_OPS];
            for (int32_t i = 0; i < q.n_groups; i++)
                perm[i] = i;
            for (int32_t i = q.n_groups - 1; i > 0; i--) {
                int32_t j = below(&s, i + 1), x = perm[i];
                perm[i] = perm[j];
                perm[j] = x;
            }
            for (int32_t o = 0; o < q.n_ops; o++)
                if (q.group[o] >= 0)
                    q.group[o] = perm[q.group[o]];
            assert_true(fu_plan_valid(g, &q, NULL, 0));
            fu_plan_canonicalize(g, &q);
            assert_true(fu_plan_equal(&p, &q));
            fu_plan_free(&q);
        }
        int32_t next = 0;
        for (int32_t k = 0; k < g->n_order; k++) {
            int32_t id = p.group[g->order[k]];
            assert_true(id < next + 1);
            if (id == next)
                next++;
        }
        assert_int_equal(next, p.n_groups);
        fu_plan_free(&p);
        wl_graph_free(g);
    }
}

/* fu_plan_valid agrees with the brute-force oracle on random partitions,
 * and says why when it refuses. */
static void test_validity_matches_oracle(void **state)
{
    (void)state;
    uint64_t s = 11;
    int n_valid = 0, n_invalid = 0;
    for (uint64_t seed = 1; seed <= N_GRAPHS; seed++) {
        wl_graph *g = random_graph(seed, 4 + (int)(seed % 12));
        fu_plan p;
        init_plan(&p, g);
        for (int round = 0; round < 40; round++) {
            random_partition(g, &p, &s, 1 + below(&s, 4));
            char reason[160] = "";
            bool valid = fu_plan_valid(g, &p, reason, sizeof reason);
            if (valid != oracle_valid(g, &p))
                fail_msg("graph %llu round %d: fu_plan_valid says %d (%s)",
                         (unsigned long long)seed, round, valid, reason);
            if (!valid)
                assert_true(strlen(reason) > 0);
            n_valid += valid;
            n_invalid += !valid;
        }
        fu_plan_free(&p);
        wl_graph_free(g);
    }
    assert_true(n_valid > 50 && n_invalid > 50); /* both sides exercised */
}

/* x -> conv0 -> relu1 -> conv2, relu3 on x (shares input x with conv0),
 * relu4 reading conv2's output, add5 = conv0 + conv2: hand-made plans. */
static void test_invalid_plans_have_reasons(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("hand", "test:hand");
    int32_t x = activation(g, "x", WL_TENSOR_INPUT);
    wl_add_graph_input(g, x);
    int32_t a = add_conv(g, x, 0);
    int32_t b = add_simple(g, WL_OP_RELU, 1, &a, 1);
    int32_t c = add_conv(g, b, 2);
    int32_t d = add_simple(g, WL_OP_RELU, 1, &x, 3);
    int32_t e = add_simple(g, WL_OP_RELU, 1, &c, 4);
    int32_t f = add_simple(g, WL_OP_ADD, 2, (int32_t[]){a, c}, 5);
    wl_add_graph_output(g, d);
    wl_add_graph_output(g, e);
    wl_add_graph_output(g, f);
    as_status st = {0};
    check(wl_graph_infer(g, &st), &st);
    fu_plan p;
    init_plan(&p, g);
    char reason[160];

    /* {conv0, conv2, add5} without relu1 between conv0 and conv2:
     * connected through add5, not convex. */
    memcpy(p.group, (int32_t[]){0, 1, 0, 2, 3, 0}, sizeof(int32_t) * 6);
    p.n_groups = 4;
    assert_false(fu_plan_valid(g, &p, reason, sizeof reason));
    assert_non_null(strstr(reason, "not convex"));

    /* {relu3, relu4}: no data in common. */
    memcpy(p.group, (int32_t[]){0, 1, 2, 3, 3, 4}, sizeof(int32_t) * 6);
    p.n_groups = 5;
    assert_false(fu_plan_valid(g, &p, reason, sizeof reason));
    assert_non_null(strstr(reason, "not connected"));

    /* {conv0, relu3} share x: connected and valid; so is the chain. */
    memcpy(p.group, (int32_t[]){0, 1, 2, 0, 3, 4}, sizeof(int32_t) * 6);
    assert_true(fu_plan_valid(g, &p, reason, sizeof reason));
    memcpy(p.group, (int32_t[]){0, 0, 0, 1, 0, 0}, sizeof(int32_t) * 6);
    p.n_groups = 2;
    assert_true(fu_plan_valid(g, &p, reason, sizeof reason));

    /* A group id out of range, and an empty group. */
    p.group[3] = 7;
    assert_false(fu_plan_valid(g, &p, reason, sizeof reason));
    assert_non_null(strstr(reason, "outside"));
    memcpy(p.group, (int32_t[]){0, 0, 0, 0, 0, 0}, sizeof(int32_t) * 6);
    assert_false(fu_plan_valid(g, &p, reason, sizeof reason));
    assert_non_null(strstr(reason, "no members"));
    fu_plan_free(&p);
    wl_graph_free(g);
}

/* Two convex groups that feed each other (a1 -> b1, b2 -> a2) cannot run
 * one after the other. */
static void test_mutually_dependent_groups(void **state)
{
    (void)state;
    wl_graph *g = wl_graph_new("cycle", "test:cycle");
    int32_t x = activation(g, "x", WL_TENSOR_INPUT);
    wl_add_graph_input(g, x);
    int32_t a1 = add_simple(g, WL_OP_RELU, 1, &x, 0);                /* op 0, group A */
    int32_t b2 = add_simple(g, WL_OP_RELU, 1, &x, 1);                /* op 1, group B */
    int32_t b1 = add_simple(g, WL_OP_ADD, 2, (int32_t[]){a1, x}, 2); /* op 2, group B */
    int32_t a2 = add_simple(g, WL_OP_ADD, 2, (int32_t[]){b2, x}, 3); /* op 3, group A */
    wl_add_graph_output(g, b1);
    wl_add_graph_output(g, a2);
    as_status st = {0};
    check(wl_graph_infer(g, &st), &st);
    fu_plan p;
    init_plan(&p, g);
    memcpy(p.group, (int32_t[]){0, 1, 1, 0}, sizeof(int32_t) * 4);
    p.n_groups = 2;
    char reason[160];
    assert_false(fu_plan_valid(g, &p, reason, sizeof reason));
    assert_non_null(strstr(reason, "depends on"));
    assert_false(oracle_valid(g, &p));
    fu_plan_free(&p);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_by_layer_valid_and_canonical),
        cmocka_unit_test(test_canonical_form_unique),
        cmocka_unit_test(test_validity_matches_oracle),
        cmocka_unit_test(test_invalid_plans_have_reasons),
        cmocka_unit_test(test_mutually_dependent_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
