/*
 * timeloop_private.h -- what timeloop_io.c (the reader) and
 * timeloop_save.c (the writer) must agree on.
 */
#ifndef AS_TIMELOOP_PRIVATE_H
#define AS_TIMELOOP_PRIVATE_H

#include "mapping.h"

/* The slots the n distinct Timeloop dimension names get, in the order a
 * shape lists them: each name its own slot when free (so that C lands in
 * slot C wherever it is listed; K is another name for M), the others the
 * free slots in ascending order.  n <= WL_NDIMS. */
void map_tl_assign_slots(const char *const names[], int n, wl_dim slots[]);

#endif
