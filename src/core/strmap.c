/* strmap.c -- byte hashing, and the string map on core's hash table (see core.h). */
#include "core.h"

#include <stdlib.h>
#include <string.h>

uint64_t as_hash_bytes(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* A key and its value, as the table stores them. */
typedef struct strmap_item {
    const char *key;
    int32_t value;
} strmap_item;

static bool key_equal(const void *item, const void *key, const void *context)
{
    (void)context;
    return strcmp(((const strmap_item *)item)->key, key) == 0;
}

static uint64_t key_hash(const char *key)
{
    return as_hash_bytes(key, strlen(key), AS_HASH_SEED);
}

void as_strmap_init(as_strmap *m)
{
    as_table_init(&m->table, sizeof(strmap_item));
    m->count = 0;
}

void as_strmap_free(as_strmap *m)
{
    as_table_free(&m->table);
    as_strmap_init(m);
}

bool as_strmap_put(as_strmap *m, const char *key, int32_t value)
{
    bool added;
    strmap_item *item = as_table_insert(&m->table, key_hash(key), key, key_equal, NULL, &added);
    if (!item)
        return false;
    item->key = key;
    item->value = value;
    m->count = m->table.count;
    return true;
}

int32_t as_strmap_get(const as_strmap *m, const char *key)
{
    const strmap_item *item = as_table_find(&m->table, key_hash(key), key, key_equal, NULL);
    return item ? item->value : -1;
}
