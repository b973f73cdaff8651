/* table.c -- the open-addressing hash table of core.h. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* Empty slots hold hash 0, so a real hash of 0 is stored as 1. */
static uint64_t stored_hash(uint64_t hash)
{
    return hash ? hash : 1;
}

void as_table_init(as_table *t, size_t item_size)
{
    memset(t, 0, sizeof *t);
    t->item_size = item_size;
}

void as_table_free(as_table *t)
{
    free(t->items);
    free(t->hashes);
    as_table_init(t, t->item_size);
}

void *as_table_slot(const as_table *t, size_t i)
{
    return i < t->capacity && t->hashes[i] ? t->items + i * t->item_size : NULL;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t probe(const as_table *t, uint64_t h, const void *key, as_table_equal_fn equal,
                    const void *context)
{
    size_t mask = t->capacity - 1;
    size_t i = (size_t)h & mask;
    while (t->hashes[i] && !(t->hashes[i] == h && equal(t->items + i * t->item_size, key, context)))
        i = (i + 1) & mask;
    return i;
}

void *as_table_find(const as_table *t, uint64_t hash, const void *key, as_table_equal_fn equal,
                    const void *context)
{
    if (t->capacity == 0)
        return NULL;
    return as_table_slot(t, probe(t, stored_hash(hash), key, equal, context));
}

/* Double the capacity (64 at first), moving every item to its new slot;
 * false when out of memory (the table is unchanged). */
static bool grow(as_table *t)
{
    size_t capacity = t->capacity ? 2 * t->capacity : 64;
    unsigned char *items = malloc(capacity * t->item_size);
    uint64_t *hashes = calloc(capacity, sizeof *hashes);
    if (!items || !hashes || capacity * t->item_size / capacity != t->item_size) {
        free(items);
        free(hashes);
        return false;
    }
    for (size_t i = 0; i < t->capacity; i++) {
        if (!t->hashes[i])
            continue;
        size_t j = (size_t)t->hashes[i] & (capacity - 1);
        while (hashes[j])
            j = (j + 1) & (capacity - 1);
        hashes[j] = t->hashes[i];
        memcpy(items + j * t->item_size, t->items + i * t->item_size, t->item_size);
    }
    free(t->items);
    free(t->hashes);
    t->items = items;
    t->hashes = hashes;
    t->capacity = capacity;
    return true;
}

void *as_table_insert(as_table *t, uint64_t hash, const void *key, as_table_equal_fn equal,
                      const void *context, bool *added)
{
    uint64_t h = stored_hash(hash);
    *added = false;
    void *found = as_table_find(t, h, key, equal, context);
    if (found)
        return found;
    if ((t->count + 1) * 2 > t->capacity && !grow(t))
        return NULL;
    size_t i = probe(t, h, key, equal, context);
    t->hashes[i] = h;
    t->count++;
    *added = true;
    void *item = t->items + i * t->item_size;
    memset(item, 0, t->item_size);
    return item;
}
