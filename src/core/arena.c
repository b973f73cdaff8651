/* arena.c -- bump allocation in growing blocks (see core.h). */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct as_arena_block {
    as_arena_block *next;
    size_t size; /* usable bytes in data[] */
    size_t used;
    max_align_t data[];
};

enum { ARENA_FIRST_BLOCK_BYTES = 16 * 1024 };

void as_arena_init(as_arena *a)
{
    a->head = NULL;
    a->bytes_allocated = 0;
}

void as_arena_free(as_arena *a)
{
    as_arena_block *b = a->head;
    while (b) {
        as_arena_block *next = b->next;
        free(b);
        b = next;
    }
    as_arena_init(a);
}

void *as_arena_alloc(as_arena *a, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0)
        size = align;
    as_arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        /* Grow geometrically so that a graph of any size needs O(log n) blocks. */
        size_t want = b ? b->size * 2 : ARENA_FIRST_BLOCK_BYTES;
        if (want < size)
            want = size;
        if (want > SIZE_MAX - sizeof *b)
            return NULL;
        as_arena_block *nb = malloc(sizeof *nb + want);
        if (!nb)
            return NULL;
        nb->next = b;
        nb->size = want;
        nb->used = 0;
        a->head = b = nb;
        a->bytes_allocated += want;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void *as_arena_memdup(as_arena *a, const void *src, size_t bytes)
{
    void *p = as_arena_alloc(a, bytes);
    if (p && bytes)
        memcpy(p, src, bytes);
    return p;
}

char *as_arena_strdup(as_arena *a, const char *s)
{
    return s ? as_arena_memdup(a, s, strlen(s) + 1) : NULL;
}

char *as_arena_printf(as_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n < 0 ? NULL : as_arena_alloc(a, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
