/* util.c -- checked integer arithmetic and whole-file reading (see core.h). */
#include "core.h"

#include <ctype.h>

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

/* The first read's size; the buffer doubles from there. */
#define READ_CHUNK_BYTES ((int64_t)1 << 16)

bool as_path_has_extension(const char *path, const char *extension)
{
    size_t n = strlen(path), k = strlen(extension);
    if (n <= k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (tolower((unsigned char)path[n - k + i]) != tolower((unsigned char)extension[i]))
            return false;
    return true;
}

uint8_t *as_read_file(const char *path, size_t *size, as_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        as_fail(st, AS_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    int64_t cap = 0, n = 0;
    uint8_t *buf = NULL;
    bool out_of_memory = false;
    /* Fill a doubling buffer until fread comes up short (end of file). */
    for (;;) {
        if (!as_vec_reserve(&buf, &cap, n + READ_CHUNK_BYTES, 1)) {
            out_of_memory = true;
            break;
        }
        n += (int64_t)fread(buf + n, 1, (size_t)(cap - n), f);
        if (n < cap)
            break;
    }
    bool failed = ferror(f);
    fclose(f);
    if (out_of_memory) {
        free(buf);
        as_fail(st, AS_ENOMEM, "%s: out of memory while reading", path);
        return NULL;
    }
    if (failed) {
        free(buf);
        as_fail(st, AS_EIO, "%s: read error", path);
        return NULL;
    }
    *size = (size_t)n;
    return buf;
}
