/* util.c -- checked integer arithmetic and whole-file reading (see core.h). */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool as_mul_i64(int64_t a, int64_t b, int64_t *result)
{
    int64_t r;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
        return false;
    *result = r;
    return true;
}

bool as_add_i64(int64_t a, int64_t b, int64_t *result)
{
    int64_t r;
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
        return false;
    *result = r;
    return true;
}

uint8_t *as_read_file(const char *path, size_t *size, as_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        as_fail(st, AS_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool failed = ferror(f);
    fclose(f);
    if (!buf) {
        as_fail(st, AS_ENOMEM, "%s: out of memory while reading", path);
        return NULL;
    }
    if (failed) {
        free(buf);
        as_fail(st, AS_EIO, "%s: read error", path);
        return NULL;
    }
    *size = n;
    return buf;
}
