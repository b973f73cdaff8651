/* vec.c -- growable arrays (see core.h). */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* The capacity of a vector's first allocation. */
#define FIRST_CAPACITY 16

bool as_vec_reserve(void *items_ptr, int64_t *capacity, int64_t need, size_t item_size)
{
    if (need <= *capacity)
        return true;
    int64_t n = *capacity > 0 ? *capacity : FIRST_CAPACITY;
    while (n < need) {
        if (n > INT64_MAX / 2)
            return false;
        n *= 2;
    }
    if ((uint64_t)n > SIZE_MAX / (item_size ? item_size : 1))
        return false;
    void *items;
    memcpy(&items, items_ptr, sizeof items); /* items_ptr is a T **: read the T * */
    void *bigger = realloc(items, (size_t)n * item_size);
    if (!bigger)
        return false;
    memcpy(items_ptr, &bigger, sizeof bigger);
    *capacity = n;
    return true;
}

void *as_vec_copy(const void *items, int64_t count, size_t item_size)
{
    uint64_t n = count > 0 ? (uint64_t)count : 0;
    if (n > SIZE_MAX / (item_size ? item_size : 1))
        return NULL;
    void *copy = malloc((n > 0 ? (size_t)n : 1) * (item_size ? item_size : 1));
    if (copy && n > 0)
        memcpy(copy, items, (size_t)n * item_size);
    return copy;
}
