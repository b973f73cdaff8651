/* strmap.c -- open-addressing string map with linear probing (see core.h). */
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

void as_strmap_init(as_strmap *m)
{
    memset(m, 0, sizeof *m);
}

void as_strmap_free(as_strmap *m)
{
    free(m->keys);
    free(m->values);
    as_strmap_init(m);
}

static size_t slot_of(const as_strmap *m, const char *key)
{
    size_t mask = m->capacity - 1;
    size_t i = (size_t)as_hash_bytes(key, strlen(key), AS_HASH_SEED) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Double the table; keeps the load factor under 1/2 so probes stay short. */
static bool grow(as_strmap *m)
{
    size_t cap = m->capacity ? m->capacity * 2 : 64;
    as_strmap bigger = {calloc(cap, sizeof *m->keys), calloc(cap, sizeof *m->values), cap, 0};
    if (!bigger.keys || !bigger.values) {
        free(bigger.keys);
        free(bigger.values);
        return false;
    }
    for (size_t i = 0; i < m->capacity; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(&bigger, m->keys[i]);
        bigger.keys[j] = m->keys[i];
        bigger.values[j] = m->values[i];
        bigger.count++;
    }
    free(m->keys);
    free(m->values);
    *m = bigger;
    return true;
}

bool as_strmap_put(as_strmap *m, const char *key, int32_t value)
{
    if ((m->count + 1) * 2 > m->capacity && !grow(m))
        return false;
    size_t i = slot_of(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->values[i] = value;
    return true;
}

int32_t as_strmap_get(const as_strmap *m, const char *key)
{
    if (m->capacity == 0)
        return -1;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->values[i] : -1;
}
