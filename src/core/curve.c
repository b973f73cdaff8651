/* curve.c -- the best-so-far curve of anytime searches (see core.h). */
#include "core.h"

#include <stdlib.h>

void as_curve_push(as_curve *c, double v)
{
    if (c->n == c->capacity) {
        int capacity = c->capacity ? 2 * c->capacity : 64;
        double *grown = realloc(c->points, (size_t)capacity * sizeof *grown);
        if (!grown)
            return;
        c->points = grown;
        c->capacity = capacity;
    }
    c->points[c->n++] = v;
}

void as_curve_free(as_curve *c)
{
    free(c->points);
    c->points = NULL;
    c->n = c->capacity = 0;
}
