/*
 * store_private.h -- what store.c shares with store_export.c: the columns
 * of a row and the walk over a run's fronts.  Not for other modules.
 */
#ifndef AS_STORE_PRIVATE_H
#define AS_STORE_PRIVATE_H

#include "store.h"

/* How a store_row field is kept: its C type, and so its SQL type. */
typedef enum store_kind {
    STORE_KIND_I64,  /* int64_t, INTEGER */
    STORE_KIND_I32,  /* int32_t, INTEGER */
    STORE_KIND_BOOL, /* bool, INTEGER 0 or 1 */
    STORE_KIND_TEXT, /* char[size], TEXT */
    STORE_KIND_REAL, /* double, binary64 without column affinity (see store.c) */
    STORE_KIND_JSON, /* const char * to JSON text, TEXT; NULL is "{}" */
} store_kind;

/* One column of the rows table: the store_row field of the same name. */
typedef struct store_column {
    const char *name;
    store_kind kind;
    size_t offset; /* of the field in store_row */
    size_t size;   /* of the field, for STORE_KIND_TEXT */
} store_column;

/* The rows table's columns after run_id, in table order; the first three
 * are the key (iteration, slot, round).  The schema, the statements, the
 * reader and the exports all follow this one list. */
extern const store_column store_row_columns[];
extern const int store_n_row_columns;

/* The value of column c in row: integers (I64, I32, BOOL), doubles, and
 * text (TEXT, JSON; a NULL JSON field reads as "{}"). */
int64_t store_field_int(const store_row *row, const store_column *c);
double store_field_real(const store_row *row, const store_column *c);
const char *store_field_text(const store_row *row, const store_column *c);

/* Visit run_id's fronts in iteration order; front_json is valid during
 * the call only.  visit returns false to stop. */
typedef bool (*store_front_visitor)(void *user, int64_t iteration, int64_t evaluations,
                                    double hypervolume, const char *front_json);
as_code store_each_front(store *s, int64_t run_id, store_front_visitor visit, void *user,
                         as_status *st);

/* The path the store was opened with, for messages. */
const char *store_path(const store *s);

#endif
