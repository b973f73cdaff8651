/* curve.c -- the best-so-far curve of anytime searches (see core.h). */
#include "core.h"

#include <stdlib.h>

void as_curve_push(as_curve *c, double v)
{
    if (!as_vec_reserve(&c->points, &c->capacity, c->n + 1, sizeof *c->points))
        return;
    c->points[c->n++] = v;
}

void as_curve_free(as_curve *c)
{
    free(c->points);
    c->points = NULL;
    c->n = c->capacity = 0;
}
