/*
 * cache.c -- the one mapping cache (mapping.h): searched outcomes by layer
 * key (design digest x problem key).
 *
 * A co-design search builds a fusion evaluator per hardware candidate;
 * each maps the tile problems its groups need, and a network evaluation
 * maps its layers.  Candidates that differ only where the mapper cannot
 * see (a name, an off-chip capacity checked elsewhere) or that an engine
 * proposes twice would map the same problems again; a fusion evaluator
 * meets the same tile problem in many groups.  This cache answers them
 * from the first search.
 *
 * Entries live in core's hash table as pointers, so that growing the table
 * moves no entry and callers may keep what map_cache_find returns; one
 * lock guards the table.
 */
#include "mapping.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
    map_layer_key key;
    map_problem_outcome outcome;
} cache_entry;

struct map_cache {
    as_table entries; /* cache_entry pointers */
    int64_t hits;
    omp_lock_t lock;
};

as_code map_cache_new(map_cache **out, as_status *st)
{
    map_cache *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return as_fail(st, AS_ENOMEM, "out of memory for the mapping cache");
    as_table_init(&c->entries, sizeof(cache_entry *));
    omp_init_lock(&c->lock);
    return AS_OK;
}

void map_cache_free(map_cache *c)
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

void map_cache_stats(map_cache *c, int64_t *hits, int64_t *entries)
{
    omp_set_lock(&c->lock);
    *hits = c->hits;
    *entries = (int64_t)c->entries.count;
    omp_unset_lock(&c->lock);
}

void map_layer_key_design(const arch_spec *a, const map_search_options *o, int64_t budget,
                          map_layer_key *k)
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
static uint64_t key_hash(const map_layer_key *k)
{
    return as_hash_bytes(&k->problem, sizeof k->problem, k->design[0]);
}

/* Whether *item (a cache_entry pointer) holds key k. */
static bool entry_has_key(const void *item, const void *k, const void *context)
{
    (void)context;
    return memcmp(&(*(cache_entry *const *)item)->key, k, sizeof(map_layer_key)) == 0;
}

const map_problem_outcome *map_cache_find(map_cache *c, const map_layer_key *k)
{
    uint64_t h = key_hash(k);
    omp_set_lock(&c->lock);
    cache_entry **e = as_table_find(&c->entries, h, k, entry_has_key, NULL);
    c->hits += e != NULL;
    omp_unset_lock(&c->lock);
    return e ? &(*e)->outcome : NULL;
}

const map_problem_outcome *map_cache_add(map_cache *c, const map_layer_key *k,
                                         const map_problem_outcome *outcome)
{
    cache_entry *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return NULL;
    fresh->key = *k;
    fresh->outcome = *outcome;
    bool added = false;
    omp_set_lock(&c->lock);
    cache_entry **slot = as_table_insert(&c->entries, key_hash(k), k, entry_has_key, NULL, &added);
    if (added)
        *slot = fresh;
    cache_entry *held = slot ? *slot : NULL;
    omp_unset_lock(&c->lock);
    if (!added)
        free(fresh);
    return held ? &held->outcome : NULL;
}
