/*
 * cache.c -- mapper results shared across designs.
 *
 * A co-design search builds a fusion evaluator per hardware candidate;
 * each maps the tile problems its groups need.  Candidates that differ
 * only where the mapper cannot see (a name, an off-chip capacity checked
 * elsewhere) or that an engine proposes twice would map the same problems
 * again.  This cache answers them from the first mapping.
 *
 * A key is a digest of the design (every byte of the architecture but its
 * name, the mapper's options, the budget) and the problem key.  The digest
 * is 128 bits wide, two independent 64-bit hashes, so a false match is
 * not a practical concern.  Bytes the architecture does not define
 * (padding) may differ between equal designs: that costs a miss, never a
 * wrong answer.
 *
 * The table is chained over a fixed power-of-two bucket array, grown by
 * doubling, under one lock; entries are immutable once stored.
 */
#include "fusion_private.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
    struct cache_entry *next;
    uint64_t hash;
    fu_mapping_key key;
    map_problem_outcome outcome;
} cache_entry;

struct fu_mapping_cache {
    cache_entry **bucket;
    uint64_t mask; /* buckets - 1 */
    int64_t entries;
    int64_t hits;
    omp_lock_t lock;
};

#define INITIAL_BUCKETS 1024

as_code fu_mapping_cache_new(fu_mapping_cache **out, as_status *st)
{
    fu_mapping_cache *c = calloc(1, sizeof *c);
    if (c)
        c->bucket = calloc(INITIAL_BUCKETS, sizeof *c->bucket);
    if (!c || !c->bucket) {
        free(c);
        *out = NULL;
        return as_fail(st, AS_ENOMEM, "out of memory for the shared mapping cache");
    }
    c->mask = INITIAL_BUCKETS - 1;
    omp_init_lock(&c->lock);
    *out = c;
    return AS_OK;
}

void fu_mapping_cache_free(fu_mapping_cache *c)
{
    if (!c)
        return;
    for (uint64_t b = 0; b <= c->mask; b++) {
        cache_entry *e = c->bucket[b];
        while (e) {
            cache_entry *next = e->next;
            free(e);
            e = next;
        }
    }
    free(c->bucket);
    omp_destroy_lock(&c->lock);
    free(c);
}

void fu_mapping_cache_stats(fu_mapping_cache *c, int64_t *hits, int64_t *entries)
{
    omp_set_lock(&c->lock);
    *hits = c->hits;
    *entries = c->entries;
    omp_unset_lock(&c->lock);
}

void fu_mapping_key_design(const arch_spec *a, const map_search_options *o, int64_t budget,
                           fu_mapping_key *k)
{
    /* The name is the one field that never changes a mapping; hash from
     * just past it. */
    const unsigned char *arch_bytes = (const unsigned char *)a + sizeof a->name;
    size_t arch_size = sizeof *a - sizeof a->name;
    for (int half = 0; half < 2; half++) {
        uint64_t h = as_hash_bytes(arch_bytes, arch_size, AS_HASH_SEED + (uint64_t)half);
        h = as_hash_bytes(o, sizeof *o, h);
        k->design[half] = as_hash_bytes(&budget, sizeof budget, h);
    }
}

/* The bucket hash of a key: its design digest mixed with its problem. */
static uint64_t key_hash(const fu_mapping_key *k)
{
    return as_hash_bytes(&k->problem, sizeof k->problem, k->design[0]);
}

/* The entry for k in bucket of hash h, or NULL; the caller holds the lock. */
static cache_entry *find_locked(fu_mapping_cache *c, const fu_mapping_key *k, uint64_t h)
{
    for (cache_entry *e = c->bucket[h & c->mask]; e; e = e->next)
        if (e->hash == h && memcmp(&e->key, k, sizeof *k) == 0)
            return e;
    return NULL;
}

bool fu_mapping_cache_get(fu_mapping_cache *c, const fu_mapping_key *k, map_problem_outcome *out)
{
    uint64_t h = key_hash(k);
    omp_set_lock(&c->lock);
    cache_entry *e = find_locked(c, k, h);
    if (e) {
        *out = e->outcome;
        c->hits++;
    }
    omp_unset_lock(&c->lock);
    return e != NULL;
}

/* Double the buckets when the chains average more than two entries; a
 * failed allocation keeps the old array (longer chains, same answers).
 * The caller holds the lock. */
static void maybe_grow_locked(fu_mapping_cache *c)
{
    if (c->entries <= 2 * (int64_t)(c->mask + 1))
        return;
    uint64_t mask = 2 * c->mask + 1;
    cache_entry **bucket = calloc(mask + 1, sizeof *bucket);
    if (!bucket)
        return;
    for (uint64_t b = 0; b <= c->mask; b++) {
        cache_entry *e = c->bucket[b];
        while (e) {
            cache_entry *next = e->next;
            e->next = bucket[e->hash & mask];
            bucket[e->hash & mask] = e;
            e = next;
        }
    }
    free(c->bucket);
    c->bucket = bucket;
    c->mask = mask;
}

bool fu_mapping_cache_put(fu_mapping_cache *c, const fu_mapping_key *k,
                          const map_problem_outcome *outcome)
{
    cache_entry *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return false;
    fresh->hash = key_hash(k);
    fresh->key = *k;
    fresh->outcome = *outcome;
    omp_set_lock(&c->lock);
    if (find_locked(c, k, fresh->hash)) {
        omp_unset_lock(&c->lock);
        free(fresh);
        return true;
    }
    fresh->next = c->bucket[fresh->hash & c->mask];
    c->bucket[fresh->hash & c->mask] = fresh;
    c->entries++;
    maybe_grow_locked(c);
    omp_unset_lock(&c->lock);
    return true;
}
