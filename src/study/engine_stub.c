/*
 * engine_stub.c -- TEMPORARY: weak stand-ins for the five engine functions
 * analysis.c and its test use (study.h), so that the analysis branch links
 * before the lead's study.c lands.  Weak: study.c's definitions win.
 * DELETE this file once study.c is on main.
 */
#include "study.h"

#define STUB __attribute__((weak))

STUB const char *study_compression_kind_short(study_compression_kind k)
{
    static const char *const names[] = {"Dense", "WP", "CP", "i8", "f16"};
    return names[k];
}

STUB const char *study_compression_kind_name(study_compression_kind k)
{
    static const char *const names[] = {"none", "weight_pruning", "channel_pruning", "int8",
                                        "float16"};
    return names[k];
}

STUB int64_t study_cell_index(const study_spec *s, const int coords[STUDY_NAXES])
{
    int64_t i = 0;
    for (int a = 0; a < STUDY_NAXES; a++) {
        if (coords[a] < 0 || coords[a] >= s->n[a])
            return -1;
        i = i * s->n[a] + coords[a];
    }
    return i;
}

STUB int64_t study_cell_count(const study_spec *s)
{
    int64_t n = 1;
    for (int a = 0; a < STUDY_NAXES; a++)
        n *= s->n[a];
    return n;
}

STUB void study_cell_coords(const study_spec *s, int64_t index, int coords[STUDY_NAXES])
{
    for (int a = STUDY_NAXES - 1; a >= 0; a--) {
        coords[a] = (int)(index % s->n[a]);
        index /= s->n[a];
    }
}
