/*
 * core.h -- shared helpers of accelsearch: status reporting, arena
 * allocation, hashing, random streams, a hash table and growable vectors.
 *
 * Everything below the CLI reports failure through an as_status: a code
 * and a message that names the file, line and key of bad input.  Library
 * code never prints and never exits; the caller decides what to show.
 */
#ifndef AS_CORE_H
#define AS_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* ---------------------------------------------------------------- status */

typedef enum as_code {
    AS_OK = 0,
    AS_EINVAL,   /* bad input: a file, an option, a graph that is not well formed */
    AS_ENOMEM,   /* an allocation failed */
    AS_EIO,      /* a file could not be read or written */
    AS_EINTERNAL /* a broken invariant inside the library */
} as_code;

#define AS_MSG_BYTES 512

typedef struct as_status {
    as_code code;
    char message[AS_MSG_BYTES]; /* human-readable, one line, no trailing newline */
} as_status;

#if defined(__GNUC__)
#define AS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define AS_PRINTF(fmt, args)
#endif

/* Reset st to AS_OK with an empty message.  st may be NULL. */
void as_status_clear(as_status *st);
/* st when given, else spare cleared: for a function that takes an optional
 * status but reads the code back from the one it fills. */
as_status *as_status_or(as_status *st, as_status *spare);

/* Record a failure in st (which may be NULL) and return code, so that a
 * function can write `return as_fail(st, AS_EINVAL, "...", ...)`.  The
 * first failure wins: a later call does not overwrite an earlier message,
 * because the first one is the cause and the rest are consequences. */
as_code as_fail(as_status *st, as_code code, const char *fmt, ...) AS_PRINTF(3, 4);

/* Name of a status code ("ok", "invalid input", ...). */
const char *as_code_name(as_code code);

/* ----------------------------------------------------------------- arena */

/* A bump allocator: many small allocations, freed all at once.  Blocks
 * grow geometrically; nothing is ever moved, so pointers stay valid until
 * as_arena_free. */
typedef struct as_arena_block as_arena_block;
typedef struct as_arena {
    as_arena_block *head;   /* newest block first */
    size_t bytes_allocated; /* sum of block sizes, for statistics */
} as_arena;

void as_arena_init(as_arena *a);
/* Free every block; the arena may be used again afterwards. */
void as_arena_free(as_arena *a);
/* size bytes aligned for any type, zero-filled; NULL when out of memory. */
void *as_arena_alloc(as_arena *a, size_t size);
/* A copy of s (NULL gives NULL) / of n elements of elem_size bytes. */
char *as_arena_strdup(as_arena *a, const char *s);
void *as_arena_memdup(as_arena *a, const void *src, size_t bytes);
char *as_arena_printf(as_arena *a, const char *fmt, ...) AS_PRINTF(2, 3);

/* ------------------------------------------------------------------ hash */

/* 64-bit FNV-1a hash of n bytes, continuing from seed (use AS_HASH_SEED). */
#define AS_HASH_SEED 0xcbf29ce484222325ULL
uint64_t as_hash_bytes(const void *data, size_t n, uint64_t seed);

/* -------------------------------------------------------------- hash table */

/*
 * Open addressing with linear probing over items of a fixed size stored
 * in the table, found by a 64-bit hash and the caller's equality (the
 * caller hashes and compares its keys however it likes: bytes, strings,
 * an index into its own array).  Capacity is a power of two, at most half
 * full.  An item's address is valid until the next insertion (which may
 * move every item); callers that hand out lasting pointers store pointers.
 * Not thread-safe: callers that share a table lock around it.
 */
typedef struct as_table {
    unsigned char *items; /* capacity items of item_size bytes */
    uint64_t *hashes;     /* per slot: its item's hash (never 0), 0 when empty */
    size_t item_size;
    size_t capacity; /* 0 before the first insertion */
    size_t count;
} as_table;

/* Whether item (in the table) has key (the caller's, as given to find). */
typedef bool (*as_table_equal_fn)(const void *item, const void *key, const void *context);

void as_table_init(as_table *t, size_t item_size);
void as_table_free(as_table *t);
/* The item with key (of hash hash), or NULL. */
void *as_table_find(const as_table *t, uint64_t hash, const void *key, as_table_equal_fn equal,
                    const void *context);
/* The item with key, added zero-filled when absent (*added says which: the
 * caller then fills it in); NULL when out of memory. */
void *as_table_insert(as_table *t, uint64_t hash, const void *key, as_table_equal_fn equal,
                      const void *context, bool *added);
/* The item in slot i (0 <= i < capacity), or NULL when the slot is empty:
 * for visiting every item. */
void *as_table_slot(const as_table *t, size_t i);

/* Map from NUL-terminated keys to int32 values, on as_table.  Keys are not
 * copied: they must outlive the map (typically they live in an arena).
 * Used to resolve tensor names to indices while building graphs. */
typedef struct as_strmap {
    as_table table;
    size_t count; /* keys held (table.count, kept here for readers) */
} as_strmap;

void as_strmap_init(as_strmap *m);
void as_strmap_free(as_strmap *m);
/* Insert or replace; false when out of memory. */
bool as_strmap_put(as_strmap *m, const char *key, int32_t value);
/* The value of key, or -1 when absent. */
int32_t as_strmap_get(const as_strmap *m, const char *key);

/* -------------------------------------------------------- checked integers */

/* a*b and a+b for non-negative int64, false on overflow (result untouched). */
bool as_mul_i64(int64_t a, int64_t b, int64_t *result);
bool as_add_i64(int64_t a, int64_t b, int64_t *result);

/* ------------------------------------------------------- random numbers */

/* splitmix64 (Vigna): advance *state and return its next 64 random bits.
 * The generator behind every seeded search (mapper, fusion GA, hardware
 * engines); each builds its streams on it. */
static inline uint64_t as_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---------------------------------------------------------- random streams */

/* One deterministic stream of splitmix64 numbers. */
typedef struct as_rng {
    uint64_t state;
} as_rng;

/*
 * How a stream's starting state is derived from (seed, index).  Both start
 * from seed ^ (index * 0xd1b54a32d192ed03); they differ in the first step,
 * and each is kept so that every seeded result stays what it was:
 *  - AS_RNG_FROM_FIRST_OUTPUT: the state is the first splitmix64 output
 *    (the mapper's and the fusion GA's streams);
 *  - AS_RNG_ADVANCED_ONCE: the state is advanced once, its output dropped
 *    (the hardware engines' streams).
 */
typedef enum as_rng_derivation { AS_RNG_FROM_FIRST_OUTPUT, AS_RNG_ADVANCED_ONCE } as_rng_derivation;

/* The stream of (seed, index) under derivation `how`. */
as_rng as_rng_stream(uint64_t seed, uint64_t index, as_rng_derivation how);

/* The next 64 random bits of r. */
static inline uint64_t as_rng_next(as_rng *r)
{
    return as_splitmix64(&r->state);
}

/* Uniform in [0, n), n > 0 (modulo reduction: the bias is below 2^-40
 * for the n the searches use, and fixed results depend on it). */
static inline int64_t as_rng_below(as_rng *r, int64_t n)
{
    return (int64_t)(as_rng_next(r) % (uint64_t)n);
}

/* Uniform in [0, 1), 53 random bits. */
static inline double as_rng_unit(as_rng *r)
{
    return (double)(as_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ------------------------------------------------------------- files */

/* Read a whole file into malloc'd memory (caller frees).  On failure
 * returns NULL and names the path and the system error in st. */
uint8_t *as_read_file(const char *path, size_t *size, as_status *st);
/* Whether path ends in extension (".onnx", ".cfg"; letters compared
 * without case) after at least one other character. */
bool as_path_has_extension(const char *path, const char *extension);

/* ---------------------------------------------------------- anytime curve */

/* The best objective value after each step of an anytime search (the
 * mapper's, the fusion searches'), for plotting convergence.  Zero-filled
 * is empty. */
typedef struct as_curve {
    double *points;
    int n;
    int64_t capacity;
} as_curve;

/* Append v; a failed allocation drops the point (the curve is a report,
 * not state the search depends on). */
void as_curve_push(as_curve *c, double v);
void as_curve_free(as_curve *c);

/* ------------------------------------------------------------------ json */

/*
 * Numbers as text and JSON through jansson (json.c): the one formatter of
 * doubles and the one dump of JSON, so that every writer (CLI output,
 * store rows, exports, YAML files) spells the same number the same way.
 */

/* Room for any double as_format_double writes, NUL included. */
enum { AS_DOUBLE_TEXT_BYTES = 32 };

/* v in the fewest significant digits (%.1g to %.17g) that strtod reads
 * back as the same bits, an integral value within 2^53 in plain digits
 * ("2500000", "-0", not "2.5e+06"); inf, -inf and nan as printf spells
 * them (JSON writes null instead).  Returns text. */
const char *as_format_double(double v, char text[AS_DOUBLE_TEXT_BYTES]);

/* Room for any quantity as_format_si writes, NUL included (a unit is
 * written up to 24 bytes), and the significant digits of every quantity
 * printed. */
enum { AS_SI_TEXT_BYTES = 64, AS_SI_DIGITS = 4 };

/* v in engineering notation with unit: four significant digits and the
 * SI prefix of v's power of 1000 ("1.234 ms", "45.60 uJ", "812.0 kMAC",
 * "3.000 B"; "0 s"; "-" for NaN, "inf s" for infinities); beyond yocto
 * and yotta, scientific notation.  Micro is spelled "u" so that the text
 * stays ASCII.  The one rule of every quantity the program prints
 * (docs/cli-output.md).  Returns text. */
const char *as_format_si(double v, const char *unit, char text[AS_SI_TEXT_BYTES]);
/* v in the same four significant digits without a prefix (fixed
 * notation from 1e-3 to 1e6, scientific beyond): for a quantity whose
 * unit takes no prefix (mm^2, ops/byte, a ratio).  Returns text. */
const char *as_format_digits(double v, char text[AS_SI_TEXT_BYTES]);

/* A malloc'd copy of s in which every byte that is not part of a
 * well-formed UTF-8 sequence is replaced by U+FFFD; NULL when out of
 * memory.  JSON text is UTF-8, names from files need not be. */
char *as_utf8_copy(const char *s);

/* JSON values that follow the rules above: s as valid UTF-8 (NULL is ""),
 * v as a real or null when not finite.  NULL when out of memory. */
json_t *as_json_string(const char *s);
json_t *as_json_number(double v);
/* Add value (a new reference, released on failure; NULL is a failure) as
 * object's member key (made valid UTF-8) / at the end of array.  False
 * when out of memory. */
bool as_json_put(json_t *object, const char *key, json_t *value);
bool as_json_push(json_t *array, json_t *value);

/* Parse JSON text (any value at the top) into *out (caller releases),
 * invalid UTF-8 replaced first; bad text fails (AS_EINVAL) naming what,
 * the line, the column and the error. */
as_code as_json_parse(const char *text, const char *what, json_t **out, as_status *st);

/* How as_json_dump lays text out.  Without AS_JSON_INDENT everything is on
 * one line, members as "key": value separated by ", ". */
enum {
    AS_JSON_INDENT = 1 /* members and items on lines of their own, two spaces per
                        * level; an array of numbers only stays on one line */
};

/* Write v to f: reals by as_format_double, keys in insertion order,
 * strings escaped by jansson's own encoder (\n, \t, \" ... and \u00xx for
 * the other control characters).  False when writing failed. */
bool as_json_dump(FILE *f, const json_t *v, unsigned flags);
/* The same into a malloc'd string; NULL when out of memory. */
char *as_json_text(const json_t *v, unsigned flags);

/* ------------------------------------------------------------------ yaml */

/*
 * A YAML document read into a small tree (yaml.c, on libyaml's parser) so
 * that readers can look keys up in any order and still name the line of
 * every value in their errors.  Nodes, keys and scalars live in the
 * document's arena.  Anchors and aliases are resolved; tags are ignored.
 */
typedef enum as_yaml_kind { AS_YAML_SCALAR, AS_YAML_SEQUENCE, AS_YAML_MAPPING } as_yaml_kind;

typedef struct as_yaml_node as_yaml_node;
struct as_yaml_node {
    as_yaml_kind kind;
    int line, column;     /* 1-based, where the node starts */
    const char *scalar;   /* AS_YAML_SCALAR: the text ("" for an empty value) */
    int n;                /* SEQUENCE: items; MAPPING: key/value pairs */
    as_yaml_node **items; /* SEQUENCE items; MAPPING values */
    const char **keys;    /* MAPPING keys (scalar keys only) */
    int *key_lines;       /* MAPPING: line of each key */
};

typedef struct as_yaml_doc {
    as_arena arena;
    const char *path;   /* for messages */
    as_yaml_node *root; /* NULL for an empty document */
} as_yaml_doc;

/* Parse a file / a buffer; a syntax error names path, line and column. */
as_code as_yaml_load(const char *path, as_yaml_doc *doc, as_status *st);
as_code as_yaml_parse(const char *text, size_t size, const char *path, as_yaml_doc *doc,
                      as_status *st);
void as_yaml_free(as_yaml_doc *doc);

/* The value under key in a mapping, or NULL (also when map is not a mapping). */
const as_yaml_node *as_yaml_get(const as_yaml_node *map, const char *key);

/* Typed reads of a scalar node, failing with "path:line: key: expected an
 * integer, got 'x'" (key names the value for the message). */
as_code as_yaml_int(const as_yaml_doc *doc, const as_yaml_node *node, const char *key, int64_t *out,
                    as_status *st);
as_code as_yaml_double(const as_yaml_doc *doc, const as_yaml_node *node, const char *key,
                       double *out, as_status *st);
as_code as_yaml_bool(const as_yaml_doc *doc, const as_yaml_node *node, const char *key, bool *out,
                     as_status *st);
/* Fail unless every key of map is in the NULL-terminated list allowed:
 * "path:line: unknown key 'x' in <what> (expected one of: a, b, c)". */
as_code as_yaml_check_keys(const as_yaml_doc *doc, const as_yaml_node *map, const char *what,
                           const char *const *allowed, as_status *st);
/* Whether node is YAML's null: an empty value, "~" or "null". */
bool as_yaml_is_null(const as_yaml_node *node);

/*
 * Strict reading with key paths.  An as_yaml_reader is a place in a
 * document: the key path of the mapping being read ("" at the top,
 * "levels[2]", "parameters.pe_x"), which prefixes the keys named in
 * messages, so that every failure reads "file:line: levels[2].size: what
 * is wrong".  as_yaml_enter / as_yaml_enter_item give the reader of what
 * lies under a key.  The getters look a key up in a mapping, check its
 * type and range and store it; an absent key fails ("missing key 'x'")
 * only when required, else leaves *out as it was (the caller's default).
 * A reader is a small value; it owns nothing.
 */
enum { AS_YAML_PATH_BYTES = 128 };
typedef struct as_yaml_reader {
    const as_yaml_doc *doc;
    as_status *st;
    char path[AS_YAML_PATH_BYTES];
} as_yaml_reader;

/* The reader of doc's root (path ""). */
as_yaml_reader as_yaml_reader_of(const as_yaml_doc *doc, as_status *st);
/* The reader of the mapping under key ("path.key"), and of item index of
 * the sequence under key ("path.key[index]"). */
as_yaml_reader as_yaml_enter(const as_yaml_reader *r, const char *key);
as_yaml_reader as_yaml_enter_item(const as_yaml_reader *r, const char *key, int index);
/* "path.key" (or either alone when the other is empty) into buf. */
const char *as_yaml_key_path(const as_yaml_reader *r, const char *key,
                             char buf[AS_YAML_PATH_BYTES]);
/* Fail with "file:line: path.key: message" at node ("file: path.key:
 * ..." without a node; no "path.key: " when both are empty). */
as_code as_yaml_fail(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                     const char *fmt, ...) AS_PRINTF(4, 5);
as_code as_yaml_vfail(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                      const char *fmt, va_list ap) AS_PRINTF(4, 0);
/* Fail unless node (the value of key) is of kind: "key: expected a
 * mapping, got a sequence". */
as_code as_yaml_expect(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                       as_yaml_kind kind);
/* The node under key in map into *out, which must be of kind; absent:
 * *out = NULL, an error when required. */
as_code as_yaml_find(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                     bool required, as_yaml_kind kind, const as_yaml_node **out);
/* The optional mapping under key in map into *out: NULL when the key is
 * absent or its value is null ("~", empty), else a mapping. */
as_code as_yaml_find_section(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                             const as_yaml_node **out);
/* Fail unless map is a mapping whose keys are all in the NULL-terminated
 * list allowed (as_yaml_check_keys; what names the mapping, NULL: the
 * reader's path or "the document"). */
as_code as_yaml_keys(const as_yaml_reader *r, const as_yaml_node *map, const char *what,
                     const char *const *allowed);
/* Fail unless map has every key of the NULL-terminated list required. */
as_code as_yaml_require(const as_yaml_reader *r, const as_yaml_node *map,
                        const char *const *required);
/* Typed getters of key in map.  Integers lie in min .. max ("expected an
 * integer from 1 to 16, got '0'"); numbers are finite and in min .. max,
 * above min when above_min ("expected a number > 0"). */
as_code as_yaml_read_int(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                         bool required, int64_t min, int64_t max, int64_t *out);
as_code as_yaml_read_double(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                            bool required, double min, bool above_min, double max, double *out);
as_code as_yaml_read_bool(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, bool *out);
/* The text of a scalar (pointing into the document). */
as_code as_yaml_read_text(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, const char **out);
/* A non-empty scalar copied into dst of bytes (zero-filled behind the
 * NUL, so that equal names are equal arrays); longer ones fail. */
as_code as_yaml_read_name(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, char *dst, size_t bytes);
/* The position of node's text in the NULL-terminated list names (node is
 * the value of key): "key: expected one of a, b, c, got 'x'". */
as_code as_yaml_choice(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                       const char *const *names, int *index);

/* ======================================================================
 * Random streams, hash table and growable vectors (rng.c, table.c, vec.c):
 * the pieces every module used to write for itself.
 * ====================================================================== */

/* ------------------------------------------------------ candidate metrics */

/* What a hardware candidate achieves per inference: defined here, below
 * both, so that the co-design search (se_metrics) and the run store can
 * carry the same record. */
typedef struct as_metrics {
    double latency_s;
    double energy_pJ;
    double area_mm2;
    double power_W; /* TDP */
    double edp_Js;
    double perf_per_tdp; /* inferences / s / W */
} as_metrics;

/* ------------------------------------------------------- growable vectors */

/* Make room for `need` items of item_size bytes in the malloc'd array
 * whose address is items_ptr (a T **), of *capacity items: doubled (from
 * 16) until it holds need, and *capacity updated.  False when out of
 * memory or the size overflows; the array and *capacity are then as they
 * were. */
bool as_vec_reserve(void *items_ptr, int64_t *capacity, int64_t need, size_t item_size);
/* A malloc'd copy of count items of item_size bytes (room for one at
 * least, so that an empty array copies to a pointer that can be freed
 * like any other); NULL when out of memory or the size overflows. */
void *as_vec_copy(const void *items, int64_t count, size_t item_size);

#endif
