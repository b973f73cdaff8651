/*
 * store.c -- the run store on SQLite (see store.h): the schema, runs,
 * candidate rounds and fronts.  The exports are in store_export.c.
 *
 * Tables: meta (application name, schema version), runs, rows (one per
 * candidate round, UNIQUE (run_id, iteration, slot, round)) and fronts
 * (one per iteration, UNIQUE (run_id, iteration)).  The rows table is
 * described once, by store_row_columns; its schema, its INSERT and SELECT
 * and the field copies all follow that list.
 *
 * Durability.  The journal is a WAL with synchronous=NORMAL: a commit has
 * written its pages to the -wal file (write(2), no fsync) before it
 * returns, and fsync happens at checkpoints only.  So a process that dies
 * at any instant -- SIGKILL included -- keeps every committed row: the
 * pages are in the kernel's cache and the next open replays the WAL.  A
 * power cut or a kernel crash may lose the last commits (the file stays
 * consistent); those are candidate rounds that a resumed run computes
 * again, which we prefer to an fsync per row (synchronous=FULL).
 *
 * Doubles.  SQLite keeps a REAL bit for bit with two exceptions.  NaN is
 * stored as NULL: we read NULL back as NaN (any NaN comes back as the
 * default quiet NaN, sign and payload lost).  And a column with REAL
 * affinity stores integral values as integers, which turns -0.0 into
 * +0.0: the double columns therefore have no declared type (no affinity),
 * so a double is kept as given, +-inf and -0.0 included.
 *
 * Concurrency.  Another process may read or write the same file: WAL lets
 * readers run beside one writer, and busy_timeout makes a writer wait for
 * the other's transaction (all of ours are single statements) instead of
 * failing at once.
 */
#include "store_private.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    SCHEMA_VERSION = 2,      /* of the tables below; a newer store is refused, an older
                                one upgraded (migrate_schema) */
    BUSY_TIMEOUT_MS = 10000, /* how long to wait for another process's transaction */
    LIST_BYTES = 1024,       /* room for a list of the rows table's columns */
    SQL_BYTES = 4096,        /* room for a statement built from such lists */
};

static const char application_name[] = "accelsearch";

/* ---------------------------------------------------------------- columns */

/* The store_row field f, kept as kind; METRIC: the field f of its
 * metrics, in a column of that name. */
/* clang-format off */
#define COLUMN(kind, f) {#f, STORE_KIND_##kind, offsetof(store_row, f), sizeof(((store_row *)0)->f)}
#define METRIC(f) {#f, STORE_KIND_REAL, offsetof(store_row, metrics.f), sizeof(double)}
/* clang-format on */

const store_column store_row_columns[] = {
    COLUMN(I64, iteration),    COLUMN(I32, slot),
    COLUMN(I32, round),        COLUMN(TEXT, point),
    COLUMN(BOOL, feasible),    COLUMN(TEXT, reason),
    COLUMN(I64, sw_budget),    COLUMN(REAL, sw_value),
    COLUMN(REAL, sw_auc),      METRIC(latency_s),
    METRIC(energy_pJ),         METRIC(area_mm2),
    METRIC(power_W),           METRIC(edp_Js),
    METRIC(perf_per_tdp),      COLUMN(JSON, params_json),
    COLUMN(JSON, detail_json),
};
const int store_n_row_columns = (int)(sizeof store_row_columns / sizeof store_row_columns[0]);

/* SQL declaration of each kind; REAL has none on purpose (see the top). */
static const char *const kind_declarations[] = {
    [STORE_KIND_I64] = "INTEGER NOT NULL",
    [STORE_KIND_I32] = "INTEGER NOT NULL",
    [STORE_KIND_BOOL] = "INTEGER NOT NULL",
    [STORE_KIND_TEXT] = "TEXT NOT NULL",
    [STORE_KIND_REAL] = "",
    [STORE_KIND_JSON] = "TEXT NOT NULL",
};

int64_t store_field_int(const store_row *row, const store_column *c)
{
    const char *field = (const char *)row + c->offset;
    switch (c->kind) {
    case STORE_KIND_I64:
        return *(const int64_t *)field;
    case STORE_KIND_I32:
        return *(const int32_t *)field;
    case STORE_KIND_BOOL:
        return *(const bool *)field;
    default:
        return 0;
    }
}

double store_field_real(const store_row *row, const store_column *c)
{
    return *(const double *)((const char *)row + c->offset);
}

const char *store_field_text(const store_row *row, const store_column *c)
{
    const char *field = (const char *)row + c->offset;
    if (c->kind == STORE_KIND_TEXT)
        return field;
    const char *json = *(const char *const *)field;
    return json && *json ? json : "{}";
}

/* ------------------------------------------------------------- statements */

/* The statements of the store, prepared once by store_open. */
typedef enum stmt_id {
    SQL_RUN_INSERT,
    SQL_RUN_RESUMABLE,
    SQL_RUN_SET_STATE,
    SQL_RUN_LIST,
    SQL_RUN_GET,
    SQL_RUN_CONFIG,
    SQL_RUN_DELETE_ROWS,
    SQL_RUN_DELETE_FRONTS,
    SQL_RUN_DELETE,
    SQL_ROW_INSERT, /* built from store_row_columns */
    SQL_ROW_SELECT, /* built from store_row_columns */
    SQL_FRONT_INSERT,
    SQL_FRONT_LAST,
    SQL_FRONT_SELECT,
    SQL_COUNT
} stmt_id;

/* A run and its counts, as read_run reads it. */
#define RUN_SELECT                                                                                 \
    "SELECT id, created, version, seed, state, summary,"                                           \
    " (SELECT count(*) FROM rows WHERE run_id = runs.id),"                                         \
    " (SELECT count(*) FROM (SELECT DISTINCT iteration, slot FROM rows"                            \
    "                        WHERE run_id = runs.id)),"                                            \
    " (SELECT count(*) FROM fronts WHERE run_id = runs.id),"                                       \
    " (SELECT hypervolume FROM fronts WHERE run_id = runs.id ORDER BY iteration DESC LIMIT 1),"    \
    " owner FROM runs"

static const char *const fixed_sql[SQL_COUNT] = {
    [SQL_RUN_INSERT] = "INSERT INTO runs (created, version, seed, state, summary, config, owner)"
                       " VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?1, ?2, ?3, ?4, ?5, ?6)",
    [SQL_RUN_RESUMABLE] = "SELECT id FROM runs WHERE config = ?1 AND seed = ?2 AND state <> ?3"
                          " ORDER BY id DESC LIMIT 1",
    [SQL_RUN_SET_STATE] = "UPDATE runs SET state = ?2, owner = ?3 WHERE id = ?1",
    [SQL_RUN_LIST] = RUN_SELECT " ORDER BY id",
    [SQL_RUN_GET] = RUN_SELECT " WHERE id = ?1",
    [SQL_RUN_CONFIG] = "SELECT config FROM runs WHERE id = ?1",
    [SQL_RUN_DELETE_ROWS] = "DELETE FROM rows WHERE run_id = ?1",
    [SQL_RUN_DELETE_FRONTS] = "DELETE FROM fronts WHERE run_id = ?1",
    [SQL_RUN_DELETE] = "DELETE FROM runs WHERE id = ?1",
    [SQL_FRONT_INSERT] = "INSERT INTO fronts (run_id, iteration, evaluations, hypervolume,"
                         " front_json) VALUES (?1, ?2, ?3, ?4, ?5)",
    [SQL_FRONT_LAST] = "SELECT iteration, hypervolume, front_json FROM fronts WHERE run_id = ?1"
                       " ORDER BY iteration DESC LIMIT 1",
    [SQL_FRONT_SELECT] = "SELECT iteration, evaluations, hypervolume, front_json FROM fronts"
                         " WHERE run_id = ?1 ORDER BY iteration",
};

struct store {
    sqlite3 *db;
    sqlite3_stmt *stmt[SQL_COUNT];
    char path[]; /* as given to store_open, for messages */
};

const char *store_path(const store *s)
{
    return s->path;
}

/* Fail with the connection's last error: "<path>: <what>: <sqlite's
 * message>", what formatted from fmt. */
static as_code db_vfail(const store *s, as_status *st, const char *fmt, va_list ap)
{
    char what[160];
    vsnprintf(what, sizeof what, fmt, ap);
    return as_fail(st, AS_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static as_code db_fail(const store *s, as_status *st, const char *fmt, ...) AS_PRINTF(3, 4);
static as_code db_fail(const store *s, as_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    as_code code = db_vfail(s, st, fmt, ap);
    va_end(ap);
    return code;
}

/* The cached statement id, ready to bind (every use ends in finish, which
 * resets it).  A statement still stepping means that a visitor re-entered
 * the store through the query that is visiting it: refused, since
 * resetting it would pull the rows from under the visit. */
static sqlite3_stmt *statement(store *s, stmt_id id, as_status *st)
{
    sqlite3_stmt *q = s->stmt[id];
    if (sqlite3_stmt_busy(q)) {
        as_fail(st, AS_EINTERNAL, "%s: a store query was re-entered from its own visitor", s->path);
        return NULL;
    }
    return q;
}

/* End a use of q whose last step (or bind) returned rc: reset it, which
 * releases its read snapshot (a statement left open would pin the WAL),
 * and turn an error into a status naming what was being done. */
static as_code finish(store *s, sqlite3_stmt *q, int rc, as_status *st, const char *fmt, ...)
    AS_PRINTF(5, 6);
static as_code finish(store *s, sqlite3_stmt *q, int rc, as_status *st, const char *fmt, ...)
{
    as_code code = AS_OK;
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        va_list ap;
        va_start(ap, fmt);
        code = db_vfail(s, st, fmt, ap);
        va_end(ap);
    }
    sqlite3_reset(q);
    return code;
}

/* End an INSERT of key (text for messages: "a row for iteration 2, ...")
 * into run_id: a repeated key or an unknown run is the caller's mistake
 * (AS_EINVAL), anything else the file's.  The connection reports extended
 * result codes, so rc names the constraint. */
static as_code finish_insert(store *s, sqlite3_stmt *q, int rc, int64_t run_id, const char *key,
                             as_status *st)
{
    as_code code;
    if (rc == SQLITE_CONSTRAINT_UNIQUE)
        code =
            as_fail(st, AS_EINVAL, "%s: run %lld already has %s", s->path, (long long)run_id, key);
    else if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
        code = as_fail(st, AS_EINVAL, "%s: no run %lld to write %s to", s->path, (long long)run_id,
                       key);
    else
        return finish(s, q, rc, st, "writing %s of run %lld", key, (long long)run_id);
    sqlite3_reset(q);
    return code;
}

/* Column i as text, "" for NULL (columns are NOT NULL; this is for a file
 * edited by hand). */
static const char *column_text(sqlite3_stmt *q, int i)
{
    const unsigned char *text = sqlite3_column_text(q, i);
    return text ? (const char *)text : "";
}

/* Column i as a double: NULL is how SQLite stores NaN. */
static double column_real(sqlite3_stmt *q, int i)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? NAN : sqlite3_column_double(q, i);
}

/* src into dst[size], cut to fit. */
static void copy_text(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* A malloc'd copy of s, NULL when out of memory. */
static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    return copy ? memcpy(copy, s, n) : NULL;
}

/* Bind q's parameters 1, 2, ... to the arguments after types, one per
 * letter: 'i' an int64_t, 'r' a double, 't' a const char * (NULL binds
 * ""; not copied: it must last until the statement is reset).  The
 * arguments must have exactly these types.  SQLITE_OK or the first
 * error. */
static int bind_params(sqlite3_stmt *q, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int rc = SQLITE_OK;
    for (int i = 0; types[i] && rc == SQLITE_OK; i++) {
        if (types[i] == 'i') {
            rc = sqlite3_bind_int64(q, i + 1, va_arg(ap, int64_t));
        } else if (types[i] == 'r') {
            rc = sqlite3_bind_double(q, i + 1, va_arg(ap, double));
        } else {
            const char *text = va_arg(ap, const char *);
            rc = sqlite3_bind_text(q, i + 1, text ? text : "", -1, SQLITE_STATIC);
        }
    }
    va_end(ap);
    return rc;
}

/* SQLite integers are signed: a seed is stored as its bit pattern, so
 * that seeds of 2^63 and above come back unchanged. */
static int64_t seed_bits(uint64_t seed)
{
    int64_t bits;
    memcpy(&bits, &seed, sizeof bits);
    return bits;
}

static uint64_t seed_from_bits(int64_t bits)
{
    uint64_t seed;
    memcpy(&seed, &bits, sizeof seed);
    return seed;
}

/* -------------------------------------------------------------- schema */

/* How the rows table's columns are listed in a statement. */
typedef enum column_sql { COLUMN_DECLARATIONS, COLUMN_NAMES, COLUMN_PARAMETERS } column_sql;

/* The rows table's columns after run_id as one comma-separated SQL list:
 * their declarations, their names, or the parameters ?2, ?3, ... (?1 is
 * the run id).  buf has LIST_BYTES, ample for the list. */
static void column_list(char *buf, column_sql what)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < store_n_row_columns && used < LIST_BYTES; i++) {
        const store_column *c = &store_row_columns[i];
        const char *sep = i ? ", " : "";
        int n = 0;
        if (what == COLUMN_DECLARATIONS)
            n = snprintf(buf + used, LIST_BYTES - used, "%s%s %s", sep, c->name,
                         kind_declarations[c->kind]);
        else if (what == COLUMN_NAMES)
            n = snprintf(buf + used, LIST_BYTES - used, "%s%s", sep, c->name);
        else
            n = snprintf(buf + used, LIST_BYTES - used, "%s?%d", sep, i + 2);
        used += (size_t)n;
    }
}

/* The whole schema of a new store, into sql[SQL_BYTES].  The state
 * names are store_state_name's. */
static void schema_text(char *sql)
{
    char declarations[LIST_BYTES];
    column_list(declarations, COLUMN_DECLARATIONS);
    snprintf(sql, SQL_BYTES,
             "CREATE TABLE meta (key TEXT PRIMARY KEY, value);"
             "INSERT INTO meta VALUES ('application', '%s'), ('schema_version', %d);"
             "CREATE TABLE runs ("
             " id INTEGER PRIMARY KEY AUTOINCREMENT,"
             " created TEXT NOT NULL," /* UTC, ISO 8601 */
             " version TEXT NOT NULL,"
             " seed INTEGER NOT NULL," /* the bits of a uint64_t */
             " state TEXT NOT NULL CHECK (state IN ('running', 'interrupted', 'finished')),"
             " summary TEXT NOT NULL,"
             " config TEXT NOT NULL,"
             " owner TEXT NOT NULL DEFAULT '');" /* store_owner_text's, schema 2 */
             "CREATE TABLE rows ("
             " run_id INTEGER NOT NULL REFERENCES runs (id), %s,"
             " UNIQUE (run_id, iteration, slot, round));"
             "CREATE TABLE fronts ("
             " run_id INTEGER NOT NULL REFERENCES runs (id),"
             " iteration INTEGER NOT NULL,"
             " evaluations INTEGER NOT NULL,"
             " hypervolume," /* a double: no affinity */
             " front_json TEXT NOT NULL,"
             " UNIQUE (run_id, iteration));",
             application_name, SCHEMA_VERSION, declarations);
}

static as_code exec(store *s, const char *sql, const char *what, as_status *st)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, st, "%s", what);
    return AS_OK;
}

/* One value of a one-off query (NULL when it has no row): a malloc'd copy
 * of its text in *text, or its integer in *number. */
static as_code query_value(store *s, const char *sql, char **text, int64_t *number, as_status *st)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, st, "reading the schema");
    int rc = sqlite3_step(q);
    as_code code = AS_OK;
    if (rc == SQLITE_ROW && text && !(*text = copy_string(column_text(q, 0))))
        code = as_fail(st, AS_ENOMEM, "out of memory");
    else if (rc == SQLITE_ROW && number)
        *number = sqlite3_column_int64(q, 0);
    else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        code = db_fail(s, st, "reading the schema");
    sqlite3_finalize(q);
    return code;
}

/* The file's tables (SQLite's own aside): how many, whether meta is one,
 * and the first that is not ours (foreign[64], "" when none). */
static as_code list_tables(store *s, int *n_tables, bool *has_meta, char *foreign, as_status *st)
{
    static const char *const our_tables[] = {"meta", "runs", "rows", "fronts"};
    *n_tables = 0;
    *has_meta = false;
    foreign[0] = '\0';
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT name FROM sqlite_schema WHERE type = 'table'"
                           " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, st, "reading the schema");
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *name = column_text(q, 0);
        bool ours = false;
        for (size_t i = 0; i < sizeof our_tables / sizeof our_tables[0]; i++)
            ours |= strcmp(name, our_tables[i]) == 0;
        if (!ours && !foreign[0])
            copy_text(foreign, 64, name);
        *has_meta |= strcmp(name, "meta") == 0;
        ++*n_tables;
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? AS_OK : db_fail(s, st, "reading the schema");
}

/* Whether meta names this program and a schema version it reads (into
 * *version). */
static as_code check_version(store *s, int64_t *version_out, as_status *st)
{
    char *application = NULL;
    int64_t version = 0;
    as_code code =
        query_value(s, "SELECT value FROM meta WHERE key = 'application'", &application, NULL, st);
    if (code == AS_OK)
        code = query_value(s, "SELECT value FROM meta WHERE key = 'schema_version'", NULL, &version,
                           st);
    if (code == AS_OK &&
        (!application || strcmp(application, application_name) != 0 || version < 1))
        code = as_fail(st, AS_EINVAL,
                       "%s: not an accelsearch run store (its meta table names "
                       "no accelsearch schema)",
                       s->path);
    else if (code == AS_OK && version > SCHEMA_VERSION)
        code = as_fail(st, AS_EINVAL,
                       "%s: written by a newer accelsearch (store schema %lld; this one reads "
                       "schema %d)",
                       s->path, (long long)version, SCHEMA_VERSION);
    free(application);
    *version_out = version;
    return code;
}

/* Whether the file is empty (*empty) or one of our stores of a schema we
 * read; anything else fails naming the path: a file that is not SQLite
 * (SQLite's "file is not a database"), foreign tables, a newer schema. */
static as_code check_schema(store *s, bool *empty, int64_t *version, as_status *st)
{
    int n_tables;
    bool has_meta;
    char foreign[64];
    as_code code = list_tables(s, &n_tables, &has_meta, foreign, st);
    *empty = n_tables == 0;
    if (code != AS_OK || *empty)
        return code;
    if (foreign[0])
        return as_fail(st, AS_EINVAL, "%s: not an accelsearch run store (it has a table '%s')",
                       s->path, foreign);
    if (!has_meta)
        return as_fail(st, AS_EINVAL, "%s: not an accelsearch run store (no meta table)", s->path);
    return check_version(s, version, st);
}

/* -------------------------------------------------------------- owners */

/*
 * The process that last set a run's state owns it: the runs' owner column
 * names it "HOST PID START", START being the process's start time in
 * clock ticks since boot (/proc/PID/stat, field 22) so that a PID the
 * system has given to another process since does not pass for the owner.
 * A run left "running" by an owner that is gone from this host was killed
 * (SIGKILL, a crash, a power cut): it reads as interrupted.  An owner on
 * another host cannot be checked; its run reads as it was left.
 */

/* Start time of process pid (0: no such process, or no /proc). */
static unsigned long long process_start(long pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = 0;
    /* Fields after the command name, which is in parentheses and may hold
     * spaces: state is field 3, start time field 22. */
    const char *p = strrchr(line, ')');
    unsigned long long start = 0;
    for (int field = 2; p && *p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p)
        sscanf(p + 1, "%llu", &start);
    return start;
}

/* This process as an owner. */
static void owner_text(char *buf, size_t size)
{
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    long pid = (long)getpid();
    snprintf(buf, size, "%s %ld %llu", host[0] ? host : "?", pid, process_start(pid));
}

/* Whether owner (owner_text's form) is a process of this host that has
 * ended.  An empty owner (a run of schema 1) is not known to be gone. */
static bool owner_is_gone(const char *owner)
{
    char host[128], this_host[128] = "";
    long pid;
    unsigned long long start;
    if (sscanf(owner, "%127s %ld %llu", host, &pid, &start) != 3)
        return false;
    gethostname(this_host, sizeof this_host - 1);
    if (strcmp(host, this_host) != 0)
        return false;
    unsigned long long now = process_start(pid);
    return now == 0 ? kill((pid_t)pid, 0) != 0 && errno == ESRCH : now != start;
}

/* Upgrade a store of an older schema version, inside the caller's
 * transaction.  Schema 2 added the runs' owner (the lock that tells a
 * killed run from a running one); older runs have none. */
static as_code migrate_schema(store *s, int64_t version, as_status *st)
{
    as_code code = AS_OK;
    if (version < 2)
        code = exec(s, "ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT ''",
                    "upgrading the store to schema 2", st);
    if (code == AS_OK) {
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE meta SET value = %d WHERE key = 'schema_version'",
                 SCHEMA_VERSION);
        code = exec(s, sql, "upgrading the store", st);
    }
    return code;
}

/* Check the file's schema, creating it in an empty file (or upgrading an
 * older one).  Creation holds
 * the write lock and looks again, since another process may be creating
 * the same store at the same moment. */
static as_code make_schema(store *s, as_status *st)
{
    bool empty;
    int64_t version = 0;
    as_code code = check_schema(s, &empty, &version, st);
    if (code != AS_OK || (!empty && version == SCHEMA_VERSION))
        return code;
    if ((code = exec(s, "BEGIN IMMEDIATE", "creating the store", st)) != AS_OK)
        return code;
    if ((code = check_schema(s, &empty, &version, st)) == AS_OK && empty) {
        char sql[SQL_BYTES];
        schema_text(sql);
        code = exec(s, sql, "creating the store", st);
    } else if (code == AS_OK && version < SCHEMA_VERSION) {
        code = migrate_schema(s, version, st);
    }
    if (code == AS_OK)
        return exec(s, "COMMIT", "creating the store", st);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return code;
}

/* Prepare every statement once, for the life of the store. */
static as_code prepare_statements(store *s, as_status *st)
{
    char names[LIST_BYTES], parameters[LIST_BYTES], row_insert[SQL_BYTES], row_select[SQL_BYTES];
    column_list(names, COLUMN_NAMES);
    column_list(parameters, COLUMN_PARAMETERS);
    snprintf(row_insert, sizeof row_insert, "INSERT INTO rows (run_id, %s) VALUES (?1, %s)", names,
             parameters);
    snprintf(row_select, sizeof row_select,
             "SELECT %s FROM rows WHERE run_id = ?1 ORDER BY iteration, slot, round", names);
    for (int id = 0; id < SQL_COUNT; id++) {
        const char *sql = id == SQL_ROW_INSERT   ? row_insert
                          : id == SQL_ROW_SELECT ? row_select
                                                 : fixed_sql[id];
        if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[id], NULL) !=
            SQLITE_OK)
            return db_fail(s, st, "preparing the store's statements");
    }
    return AS_OK;
}

/* Open s's connection to s->path and make it ready: the schema checked
 * (or made), the pragmas set, the statements prepared.  On failure the
 * caller closes s. */
static as_code open_connection(store *s, as_status *st)
{
    if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        return s->db ? db_fail(s, st, "opening the store")
                     : as_fail(st, AS_ENOMEM, "out of memory");
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    /* The schema is checked before the pragmas: a foreign file is refused
     * untouched (journal_mode=WAL would rewrite its header). */
    as_code code = make_schema(s, st);
    if (code == AS_OK)
        code = exec(s,
                    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                    " PRAGMA foreign_keys = ON",
                    "configuring the store", st);
    if (code == AS_OK)
        code = prepare_statements(s, st);
    return code;
}

as_code store_open(store **out, const char *path, as_status *st)
{
    *out = NULL;
    size_t path_bytes = strlen(path) + 1;
    store *s = calloc(1, sizeof *s + path_bytes);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory");
    memcpy(s->path, path, path_bytes);
    as_code code = open_connection(s, st);
    if (code == AS_OK)
        *out = s;
    else
        store_close(s);
    return code;
}

void store_close(store *s)
{
    if (!s)
        return;
    for (int id = 0; id < SQL_COUNT; id++)
        sqlite3_finalize(s->stmt[id]);
    sqlite3_close(s->db);
    free(s);
}

/* ------------------------------------------------------------------- runs */

static const char *const state_names[] = {
    [STORE_RUNNING] = "running",
    [STORE_INTERRUPTED] = "interrupted",
    [STORE_FINISHED] = "finished",
};
enum { N_STATES = sizeof state_names / sizeof state_names[0] };

const char *store_state_name(store_state s)
{
    return (unsigned)s < N_STATES ? state_names[s] : "unknown";
}

as_code store_run_begin(store *s, const char *config, uint64_t seed, const char *version,
                        const char *summary, int64_t *run_id, as_status *st)
{
    *run_id = 0;
    sqlite3_stmt *q = statement(s, SQL_RUN_INSERT, st);
    if (!q)
        return AS_EINTERNAL;
    char owner[STORE_OWNER_BYTES];
    owner_text(owner, sizeof owner);
    int rc = bind_params(q, "titttt", version, seed_bits(seed), state_names[STORE_RUNNING], summary,
                         config, owner);
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_DONE)
        *run_id = sqlite3_last_insert_rowid(s->db);
    return finish(s, q, rc, st, "beginning a run");
}

as_code store_run_find_resumable(store *s, const char *config, uint64_t seed, int64_t *run_id,
                                 as_status *st)
{
    *run_id = 0;
    sqlite3_stmt *q = statement(s, SQL_RUN_RESUMABLE, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = bind_params(q, "tit", config, seed_bits(seed), state_names[STORE_FINISHED]);
    int64_t found = 0;
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
        found = sqlite3_column_int64(q, 0);
    as_code code = finish(s, q, rc, st, "looking for a run to resume");
    store_run run;
    char self[STORE_OWNER_BYTES];
    owner_text(self, sizeof self);
    if (code == AS_OK && found > 0 && (code = store_run_get(s, found, &run, st)) == AS_OK) {
        if (run.state == STORE_RUNNING && run.owner[0] && strcmp(run.owner, self) != 0)
            return as_fail(st, AS_EINVAL,
                           "%s: run %lld is running (process %s); it cannot be resumed twice",
                           s->path, (long long)found, run.owner);
        *run_id = found;
    }
    return code;
}

as_code store_run_set_state(store *s, int64_t run_id, store_state state, as_status *st)
{
    if ((unsigned)state >= N_STATES)
        return as_fail(st, AS_EINVAL, "%s: run %lld: no run state %d", s->path, (long long)run_id,
                       (int)state);
    sqlite3_stmt *q = statement(s, SQL_RUN_SET_STATE, st);
    if (!q)
        return AS_EINTERNAL;
    char owner[STORE_OWNER_BYTES];
    owner_text(owner, sizeof owner);
    int rc = bind_params(q, "itt", run_id, state_names[state], owner);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    as_code code = finish(s, q, rc, st, "setting the state of run %lld", (long long)run_id);
    if (code == AS_OK && sqlite3_changes(s->db) == 0)
        return as_fail(st, AS_EINVAL, "%s: no run %lld", s->path, (long long)run_id);
    return code;
}

/* The run at q's current row (a RUN_SELECT) into out. */
static as_code read_run(store *s, sqlite3_stmt *q, store_run *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(q, 0);
    copy_text(out->created, sizeof out->created, column_text(q, 1));
    copy_text(out->version, sizeof out->version, column_text(q, 2));
    out->seed = seed_from_bits(sqlite3_column_int64(q, 3));
    copy_text(out->summary, sizeof out->summary, column_text(q, 5));
    out->n_rows = sqlite3_column_int64(q, 6);
    out->n_candidates = sqlite3_column_int64(q, 7);
    out->n_iterations = sqlite3_column_int64(q, 8);
    out->hypervolume = out->n_iterations > 0 ? column_real(q, 9) : 0.0;
    copy_text(out->owner, sizeof out->owner, column_text(q, 10));
    const char *state = column_text(q, 4);
    for (int k = 0; k < N_STATES; k++)
        if (strcmp(state, state_names[k]) == 0) {
            out->state = (store_state)k;
            out->killed = out->state == STORE_RUNNING && owner_is_gone(out->owner);
            if (out->killed)
                out->state = STORE_INTERRUPTED;
            return AS_OK;
        }
    return as_fail(st, AS_EINVAL, "%s: run %lld has an unknown state '%s'", s->path,
                   (long long)out->id, state);
}

as_code store_run_list(store *s, store_run **out, int64_t *n, as_status *st)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = statement(s, SQL_RUN_LIST, st);
    if (!q)
        return AS_EINTERNAL;
    store_run *runs = NULL;
    int64_t count = 0, cap = 0;
    as_code code = AS_OK;
    int rc = SQLITE_OK;
    while (code == AS_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (!as_vec_reserve(&runs, &cap, count + 1, sizeof *runs))
            code = as_fail(st, AS_ENOMEM, "out of memory");
        else
            code = read_run(s, q, &runs[count++], st);
    }
    if (code == AS_OK)
        code = finish(s, q, rc, st, "listing the runs");
    else
        sqlite3_reset(q);
    if (code != AS_OK) {
        free(runs);
        return code;
    }
    *out = runs;
    *n = count;
    return AS_OK;
}

/* Step statement id (a SELECT of one run: WHERE id = ?1) to run_id's row,
 * *q left on it for the caller to read and reset.  A missing run fails
 * (AS_EINVAL), and so does SQLite, the message saying what was being done
 * ("reading run") and the run. */
static as_code select_run(store *s, stmt_id id, int64_t run_id, const char *doing, sqlite3_stmt **q,
                          as_status *st)
{
    if (!(*q = statement(s, id, st)))
        return AS_EINTERNAL;
    int rc = sqlite3_bind_int64(*q, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(*q);
    if (rc == SQLITE_ROW)
        return AS_OK;
    if (rc != SQLITE_DONE)
        return finish(s, *q, rc, st, "%s %lld", doing, (long long)run_id);
    sqlite3_reset(*q);
    return as_fail(st, AS_EINVAL, "%s: no run %lld", s->path, (long long)run_id);
}

as_code store_run_get(store *s, int64_t run_id, store_run *out, as_status *st)
{
    sqlite3_stmt *q;
    as_code code = select_run(s, SQL_RUN_GET, run_id, "reading run", &q, st);
    if (code == AS_OK) {
        code = read_run(s, q, out, st);
        sqlite3_reset(q);
    }
    return code;
}

/* Run the fixed statement id on run_id alone (a delete). */
static as_code run_statement(store *s, stmt_id id, int64_t run_id, as_status *st)
{
    sqlite3_stmt *q = statement(s, id, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = bind_params(q, "i", run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    return finish(s, q, rc, st, "deleting run %lld", (long long)run_id);
}

as_code store_run_delete(store *s, int64_t run_id, as_status *st)
{
    store_run run;
    as_code code = store_run_get(s, run_id, &run, st);
    if (code != AS_OK)
        return code;
    if (run.state == STORE_RUNNING && run.owner[0])
        return as_fail(st, AS_EINVAL, "%s: run %lld is running (process %s): stop it first",
                       s->path, (long long)run_id, run.owner);
    if ((code = exec(s, "BEGIN IMMEDIATE", "deleting a run", st)) != AS_OK)
        return code;
    static const stmt_id steps[] = {SQL_RUN_DELETE_ROWS, SQL_RUN_DELETE_FRONTS, SQL_RUN_DELETE};
    for (size_t k = 0; code == AS_OK && k < sizeof steps / sizeof steps[0]; k++)
        code = run_statement(s, steps[k], run_id, st);
    if (code == AS_OK)
        return exec(s, "COMMIT", "deleting a run", st);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return code;
}

as_code store_run_config(store *s, int64_t run_id, char **config, as_status *st)
{
    *config = NULL;
    sqlite3_stmt *q;
    as_code code =
        select_run(s, SQL_RUN_CONFIG, run_id, "reading the configuration of run", &q, st);
    if (code == AS_OK) {
        if (!(*config = copy_string(column_text(q, 0))))
            code = as_fail(st, AS_ENOMEM, "out of memory");
        sqlite3_reset(q);
    }
    return code;
}

/* ------------------------------------------------------ candidate rounds */

/* Bind column c of row to parameter index of q; SQLite's result code.
 * A text field is read up to its size even without a terminator. */
static int bind_field(sqlite3_stmt *q, int index, const store_row *row, const store_column *c)
{
    switch (c->kind) {
    case STORE_KIND_I64:
    case STORE_KIND_I32:
    case STORE_KIND_BOOL:
        return sqlite3_bind_int64(q, index, store_field_int(row, c));
    case STORE_KIND_REAL:
        return sqlite3_bind_double(q, index, store_field_real(row, c));
    case STORE_KIND_TEXT: {
        const char *text = store_field_text(row, c);
        return sqlite3_bind_text(q, index, text, (int)strnlen(text, c->size), SQLITE_STATIC);
    }
    case STORE_KIND_JSON:
        return sqlite3_bind_text(q, index, store_field_text(row, c), -1, SQLITE_STATIC);
    }
    return SQLITE_MISUSE;
}

/* Column i of q into field c of row; JSON text points into q's row. */
static void read_field(sqlite3_stmt *q, int i, store_row *row, const store_column *c)
{
    char *field = (char *)row + c->offset;
    switch (c->kind) {
    case STORE_KIND_I64:
        *(int64_t *)field = sqlite3_column_int64(q, i);
        break;
    case STORE_KIND_I32:
        *(int32_t *)field = (int32_t)sqlite3_column_int64(q, i);
        break;
    case STORE_KIND_BOOL:
        *(bool *)field = sqlite3_column_int64(q, i) != 0;
        break;
    case STORE_KIND_TEXT:
        copy_text(field, c->size, column_text(q, i));
        break;
    case STORE_KIND_REAL:
        *(double *)field = column_real(q, i);
        break;
    case STORE_KIND_JSON:
        *(const char **)field = column_text(q, i);
        break;
    }
}

as_code store_put_row(store *s, int64_t run_id, const store_row *row, as_status *st)
{
    sqlite3_stmt *q = statement(s, SQL_ROW_INSERT, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = sqlite3_bind_int64(q, 1, run_id);
    for (int i = 0; i < store_n_row_columns && rc == SQLITE_OK; i++)
        rc = bind_field(q, i + 2, row, &store_row_columns[i]);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    char key[96];
    snprintf(key, sizeof key, "a row for iteration %lld, slot %d, round %d",
             (long long)row->iteration, (int)row->slot, (int)row->round);
    return finish_insert(s, q, rc, run_id, key, st);
}

as_code store_each_row(store *s, int64_t run_id, store_row_visitor visit, void *user, as_status *st)
{
    sqlite3_stmt *q = statement(s, SQL_ROW_SELECT, st);
    if (!q)
        return AS_EINTERNAL;
    store_row row;
    int rc = sqlite3_bind_int64(q, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (int i = 0; i < store_n_row_columns; i++)
            read_field(q, i, &row, &store_row_columns[i]);
        rc = visit(user, &row) ? SQLITE_OK : SQLITE_DONE;
    }
    return finish(s, q, rc, st, "reading the rows of run %lld", (long long)run_id);
}

/* ------------------------------------------------------------------ fronts */

as_code store_put_front(store *s, int64_t run_id, int64_t iteration, int64_t evaluations,
                        double hypervolume, const char *front_json, as_status *st)
{
    sqlite3_stmt *q = statement(s, SQL_FRONT_INSERT, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = bind_params(q, "iiirt", run_id, iteration, evaluations, hypervolume,
                         front_json ? front_json : "[]");
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    char key[64];
    snprintf(key, sizeof key, "a front for iteration %lld", (long long)iteration);
    return finish_insert(s, q, rc, run_id, key, st);
}

as_code store_last_front(store *s, int64_t run_id, int64_t *iteration, double *hypervolume,
                         char **front_json, as_status *st)
{
    *iteration = -1;
    *hypervolume = 0.0;
    *front_json = NULL;
    sqlite3_stmt *q = statement(s, SQL_FRONT_LAST, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = sqlite3_bind_int64(q, 1, run_id);
    if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (!(*front_json = copy_string(column_text(q, 2)))) {
            sqlite3_reset(q);
            return as_fail(st, AS_ENOMEM, "out of memory");
        }
        *iteration = sqlite3_column_int64(q, 0);
        *hypervolume = column_real(q, 1);
    }
    return finish(s, q, rc, st, "reading the last front of run %lld", (long long)run_id);
}

as_code store_each_front(store *s, int64_t run_id, store_front_visitor visit, void *user,
                         as_status *st)
{
    sqlite3_stmt *q = statement(s, SQL_FRONT_SELECT, st);
    if (!q)
        return AS_EINTERNAL;
    int rc = sqlite3_bind_int64(q, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
        rc = visit(user, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), column_real(q, 2),
                   column_text(q, 3))
                 ? SQLITE_OK
                 : SQLITE_DONE;
    return finish(s, q, rc, st, "reading the fronts of run %lld", (long long)run_id);
}

/* The hypervolume curve as store_each_front collects it. */
typedef struct curve {
    int64_t *evaluations;
    double *hypervolume;
    int64_t n, cap_evaluations, cap_hypervolume;
    bool out_of_memory;
} curve;

static bool append_to_curve(void *user, int64_t iteration, int64_t evaluations, double hypervolume,
                            const char *front_json)
{
    curve *c = user;
    if (!as_vec_reserve(&c->evaluations, &c->cap_evaluations, c->n + 1, sizeof *c->evaluations) ||
        !as_vec_reserve(&c->hypervolume, &c->cap_hypervolume, c->n + 1, sizeof *c->hypervolume)) {
        c->out_of_memory = true;
        return false;
    }
    c->evaluations[c->n] = evaluations;
    c->hypervolume[c->n++] = hypervolume;
    return true;
}

as_code store_hypervolume_curve(store *s, int64_t run_id, int64_t **evaluations,
                                double **hypervolume, int64_t *n, as_status *st)
{
    curve c = {0};
    as_code code = store_each_front(s, run_id, append_to_curve, &c, st);
    if (code == AS_OK && c.out_of_memory)
        code = as_fail(st, AS_ENOMEM, "out of memory");
    if (code != AS_OK) {
        free(c.evaluations);
        free(c.hypervolume);
        c = (curve){0};
    }
    *evaluations = c.evaluations;
    *hypervolume = c.hypervolume;
    *n = c.n;
    return code;
}
