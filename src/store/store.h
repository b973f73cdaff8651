/*
 * store.h -- the run store: every co-design run in one SQLite file.
 *
 * A store holds runs.  A run has its configuration (the canonical text of
 * every option that changes its result), seed, program version and a
 * state (running, finished, interrupted).  Every software-search round of
 * every hardware candidate is one row, written in its own transaction the
 * moment it completes, so that a run killed at any instant (SIGKILL
 * included) loses at most the work in flight.  After each iteration the
 * run's Pareto front and hypervolume are appended.
 *
 * The store knows nothing of design spaces or engines: rows are numbers
 * and JSON text that the search module writes and reads back.  Doubles go
 * in as SQLite REALs (IEEE binary64), so a value read back is the value
 * written, bit for bit -- resumed runs depend on it.
 *
 * One connection per store; not for use from two threads at once (the
 * search serialises its writes).
 */
#ifndef AS_STORE_H
#define AS_STORE_H

#include <stdio.h>

#include "../core/core.h"

typedef struct store store;

/* Open (creating when absent) the store at path and make its schema.  A
 * file that is not a store (not SQLite, or foreign tables) fails naming
 * the path; so does a store written by a newer schema. */
as_code store_open(store **out, const char *path, as_status *st);
void store_close(store *s);

/* ------------------------------------------------------------------ runs */

typedef enum store_state {
    STORE_RUNNING,     /* started and not ended, by a process still alive (or one on
                          another host, or of a store before schema 2: unknown) */
    STORE_INTERRUPTED, /* stopped by the user, or killed (its owner is gone); resumable */
    STORE_FINISHED,
} store_state;

/* Room for a run's owner: "HOST PID START" (store.c, "owners"). */
#define STORE_OWNER_BYTES 192

const char *store_state_name(store_state s); /* "running", ... */

typedef struct store_run {
    int64_t id;
    char created[32]; /* UTC, ISO 8601 */
    char version[32]; /* accelsearch version that wrote it */
    uint64_t seed;
    store_state state;
    char summary[160];    /* one line: algorithm, space, models, budget */
    int64_t n_rows;       /* candidate rounds stored */
    int64_t n_candidates; /* distinct (iteration, slot) */
    int64_t n_iterations; /* fronts stored */
    double hypervolume;   /* of the last front stored (0 when none) */
    /* The process that last set its state, "HOST PID START" (empty in a
     * store before schema 2), and whether it was killed: left running by
     * an owner that is gone from this host (state then reads
     * STORE_INTERRUPTED). */
    char owner[STORE_OWNER_BYTES];
    bool killed;
} store_run;

/* A new run with this configuration (canonical text, compared byte for
 * byte on resume), its seed and summary line; *run_id receives its id. */
as_code store_run_begin(store *s, const char *config, uint64_t seed, const char *version,
                        const char *summary, int64_t *run_id, as_status *st);
/* The newest run whose configuration and seed equal these and whose state
 * is not finished: *run_id, or 0 when there is none.  Fails when that run
 * is still running in a live process (it cannot be resumed twice). */
as_code store_run_find_resumable(store *s, const char *config, uint64_t seed, int64_t *run_id,
                                 as_status *st);
as_code store_run_set_state(store *s, int64_t run_id, store_state state, as_status *st);
/* Every run, oldest first, into a malloc'd array (*out, caller frees). */
as_code store_run_list(store *s, store_run **out, int64_t *n, as_status *st);
as_code store_run_get(store *s, int64_t run_id, store_run *out, as_status *st);
/* Delete a run with its rows and fronts, in one transaction.  A run
 * still running (its owner alive) is refused. */
as_code store_run_delete(store *s, int64_t run_id, as_status *st);
/* The configuration text of a run (malloc'd, caller frees). */
as_code store_run_config(store *s, int64_t run_id, char **config, as_status *st);

/* ------------------------------------------------------ candidate rounds */

/*
 * One software-search round of one hardware candidate.  (iteration, slot)
 * names the candidate: slot is its place in the iteration's batch.
 * Round r holds the result after the candidate's r-th budget increase;
 * a candidate evaluated once has only round 0.  Metrics aggregate the
 * training workloads (geometric mean where the run says so).
 */
typedef struct store_row {
    int64_t iteration;
    int32_t slot;
    int32_t round;
    char point[256]; /* the design-space point: parameter indices, "3,17,0,..." */
    bool feasible;
    char reason[256];        /* why not, when infeasible */
    int64_t sw_budget;       /* software evaluations spent so far on this candidate */
    double sw_value;         /* terminal value of its software search (lower is better) */
    double sw_auc;           /* normalised area under its best-so-far curve */
    as_metrics metrics;      /* its columns are named as the fields: latency_s, ... */
    const char *params_json; /* parameter names and values (not owned; NULL: "{}") */
    const char *detail_json; /* per-workload results, fusion plans, mappings (NULL: "{}") */
} store_row;

/* Append row to run_id in one transaction.  A second row with the same
 * (iteration, slot, round) fails (AS_EINVAL): nothing is written twice. */
as_code store_put_row(store *s, int64_t run_id, const store_row *row, as_status *st);

/* Visit run_id's rows in (iteration, slot, round) order.  The row's
 * strings are valid during the call only.  visit returns false to stop. */
typedef bool (*store_row_visitor)(void *user, const store_row *row);
as_code store_each_row(store *s, int64_t run_id, store_row_visitor visit, void *user,
                       as_status *st);

/* ------------------------------------------------------------------ fronts */

/* The front after iteration: its hypervolume, evaluations so far and the
 * front itself as JSON text (an array of points).  One per iteration. */
as_code store_put_front(store *s, int64_t run_id, int64_t iteration, int64_t evaluations,
                        double hypervolume, const char *front_json, as_status *st);
/* The last front stored: iteration (-1 when none), hypervolume and JSON
 * (malloc'd, caller frees; NULL when none). */
as_code store_last_front(store *s, int64_t run_id, int64_t *iteration, double *hypervolume,
                         char **front_json, as_status *st);

/* The hypervolume after each stored iteration, in order (malloc'd arrays,
 * caller frees both). */
as_code store_hypervolume_curve(store *s, int64_t run_id, int64_t **evaluations,
                                double **hypervolume, int64_t *n, as_status *st);

/* ----------------------------------------------------------------- export */

typedef enum store_format { STORE_JSON, STORE_CSV } store_format;

/* Write run_id to f: JSON (the run, its configuration, every row with its
 * parameters and details, every front) or CSV (one line per row, with a
 * header; parameters flattened to columns named after them). */
as_code store_export(store *s, int64_t run_id, store_format format, FILE *f, as_status *st);
/* s as one RFC 4180 CSV field on f: quoted when it holds a comma, a quote
 * or a line break, its quotes doubled (the export's rule, shared with the
 * study's CSV). */
void store_csv_string(FILE *f, const char *s);

/* ------------------------------------------------------------ JSON text */

/*
 * The JSON the store keeps (a row's params_json, a front_json) as a list
 * of flat objects, for the CSV export and for `runs show`: *items is a new
 * JSON array (caller releases) holding an object's members, or one object
 * per item of an array of objects.  One level of nesting is flattened: a
 * member whose value is an object has its members in its place, so
 * {"params": {"pe_x": 14}, "edp": 2.5} gives {"pe_x": 14, "edp": 2.5}
 * (a key seen twice keeps its first place and its last value).  NULL json
 * is "{}".  Text that jansson does not read, or that is not an object or
 * an array of objects, fails (AS_EINVAL) naming what (and, for bad text,
 * the line and column).
 */
as_code store_json_items(const char *json, const char *what, json_t **items, as_status *st);

#endif
