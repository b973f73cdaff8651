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
 * Entries live in core's hash table (as pointers, so that growing the
 * table moves no entry) under one lock; they are immutable once stored.
 */
#include "fusion_private.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
    fu_mapping_key key;
    map_problem_outcome outcome;
} cache_entry;

struct fu_mapping_cache {
    as_table entries; /* cache_entry pointers */
    int64_t hits;
    omp_lock_t lock;
};

as_code fu_mapping_cache_new(fu_mapping_cache **out, as_status *st)
{
    fu_mapping_cache *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return as_fail(st, AS_ENOMEM, "out of memory for the shared mapping cache");
    as_table_init(&c->entries, sizeof(cache_entry *));
    omp_init_lock(&c->lock);
    return AS_OK;
}

void fu_mapping_cache_free(fu_mapping_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->entries.capacity; i++) {
        cache_entry **e = as_table_slot(&c->entries, i);
        if (e)
            free(*e);
    }
    as_table_free(&c->entries);
    omp_destroy_lock(&c->lock);
    free(c);
}

void fu_mapping_cache_stats(fu_mapping_cache *c, int64_t *hits, int64_t *entries)
{
    omp_set_lock(&c->lock);
    *hits = c->hits;
    *entries = (int64_t)c->entries.count;
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

/* The table hash of a key: its design digest mixed with its problem. */
static uint64_t key_hash(const fu_mapping_key *k)
{
    return as_hash_bytes(&k->problem, sizeof k->problem, k->design[0]);
}

/* Whether *item (a cache_entry pointer) holds key k. */
static bool entry_has_key(const void *item, const void *k, const void *context)
{
    (void)context;
    return memcmp(&(*(cache_entry *const *)item)->key, k, sizeof(fu_mapping_key)) == 0;
}

bool fu_mapping_cache_get(fu_mapping_cache *c, const fu_mapping_key *k, map_problem_outcome *out)
{
    uint64_t h = key_hash(k);
    omp_set_lock(&c->lock);
    cache_entry **e = as_table_find(&c->entries, h, k, entry_has_key, NULL);
    if (e) {
        *out = (*e)->outcome;
        c->hits++;
    }
    omp_unset_lock(&c->lock);
    return e != NULL;
}

bool fu_mapping_cache_put(fu_mapping_cache *c, const fu_mapping_key *k,
                          const map_problem_outcome *outcome)
{
    cache_entry *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return false;
    fresh->key = *k;
    fresh->outcome = *outcome;
    bool added = false;
    omp_set_lock(&c->lock);
    cache_entry **slot = as_table_insert(&c->entries, key_hash(k), k, entry_has_key, NULL, &added);
    if (added)
        *slot = fresh;
    omp_unset_lock(&c->lock);
    if (!added)
        free(fresh); /* a result already held is kept */
    return slot != NULL;
}
