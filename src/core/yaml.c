/*
 * yaml.c -- a YAML document as a small tree with line numbers (see core.h).
 *
 * libyaml's event parser does the lexing; this file turns its event stream
 * into as_yaml_node trees in the document's arena.  The builder is
 * iterative: open containers sit on a frame stack, and the finished
 * children of every open container sit on one shared entry stack, so a
 * container's children are the entries pushed since it opened.  Nothing
 * recurses, and the depth limit only refuses pathological input.
 *
 * Strictness: duplicate keys, non-scalar keys, unknown aliases, NUL bytes
 * in scalars and streams of several documents are errors.
 *
 * The strict reader at the end (as_yaml_reader) is what every format's
 * reader builds on (arch_yaml.c, space_yaml.c, timeloop_io.c): key paths,
 * typed and ranged getters, required keys, allowed keys and choices, all
 * failing with "file:line: key.path: what is wrong".
 */
#include "core.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* Deeper nesting than any real configuration; refuses "[[[[...]]]]" bombs. */
enum { YAML_MAX_DEPTH = 256 };

/* A finished child of an open container: a sequence item (key NULL) or a
 * mapping pair. */
typedef struct entry {
    const char *key;
    int key_line;
    as_yaml_node *node;
} entry;

/* An open container, and what it needs when it closes. */
typedef struct frame {
    as_yaml_node *node;
    int64_t first_entry;     /* its children are entries[first_entry ..] */
    const char *anchor;      /* registered when the container closes */
    const as_yaml_node *key; /* MAPPING: a key waiting for its value */
} frame;

/* The state of one parse. */
typedef struct builder {
    as_yaml_doc *doc;
    const char *text; /* the input, to turn reader offsets into lines */
    size_t size;
    as_status *st;
    frame frames[YAML_MAX_DEPTH];
    int depth;
    entry *entries; /* malloc'd stack shared by all open containers */
    int64_t n_entries, cap_entries;
    as_strmap anchor_index; /* anchor name -> index in anchors */
    as_yaml_node **anchors;
    int64_t n_anchors, cap_anchors;
    bool have_root;
} builder;

static as_code out_of_memory(builder *b)
{
    return as_fail(b->st, AS_ENOMEM, "%s: out of memory while reading YAML", b->doc->path);
}

/* A new node of kind at mark (libyaml counts from 0, we from 1). */
static as_yaml_node *new_node(builder *b, as_yaml_kind kind, yaml_mark_t mark)
{
    as_yaml_node *node = as_arena_alloc(&b->doc->arena, sizeof *node);
    if (node) {
        node->kind = kind;
        node->line = (int)mark.line + 1;
        node->column = (int)mark.column + 1;
    }
    return node;
}

/* Remember node under the anchor name (NULL: no anchor).  A later anchor
 * of the same name replaces an earlier one, as YAML specifies. */
static as_code register_anchor(builder *b, const char *name, as_yaml_node *node)
{
    if (!name)
        return AS_OK;
    int32_t slot = as_strmap_get(&b->anchor_index, name);
    if (slot >= 0) {
        b->anchors[slot] = node;
        return AS_OK;
    }
    if (b->n_anchors >= INT32_MAX ||
        !as_vec_reserve(&b->anchors, &b->cap_anchors, b->n_anchors + 1, sizeof *b->anchors))
        return out_of_memory(b);
    if (!as_strmap_put(&b->anchor_index, name, (int32_t)b->n_anchors))
        return out_of_memory(b);
    b->anchors[b->n_anchors++] = node;
    return AS_OK;
}

/* A copy of an anchor name in the arena (NULL stays NULL). */
static as_code copy_anchor(builder *b, const yaml_char_t *anchor, const char **out)
{
    *out = NULL;
    if (anchor && !(*out = as_arena_strdup(&b->doc->arena, (const char *)anchor)))
        return out_of_memory(b);
    return AS_OK;
}

/* Hand a finished node to whatever is open: it becomes the root, a
 * sequence item, a mapping key (which must be a scalar), or the value of
 * the pending key. */
static as_code add_value(builder *b, as_yaml_node *node)
{
    if (b->depth == 0) {
        b->doc->root = node;
        b->have_root = true;
        return AS_OK;
    }
    frame *f = &b->frames[b->depth - 1];
    if (f->node->kind == AS_YAML_MAPPING && !f->key) {
        if (node->kind != AS_YAML_SCALAR)
            return as_fail(b->st, AS_EINVAL, "%s:%d:%d: mapping keys must be scalars", b->doc->path,
                           node->line, node->column);
        f->key = node;
        return AS_OK;
    }
    if (!as_vec_reserve(&b->entries, &b->cap_entries, b->n_entries + 1, sizeof *b->entries))
        return out_of_memory(b);
    entry *e = &b->entries[b->n_entries++];
    e->key = f->key ? f->key->scalar : NULL;
    e->key_line = f->key ? f->key->line : 0;
    e->node = node;
    f->key = NULL;
    return AS_OK;
}

/* Order entries by key, then by line, so that duplicates become neighbours
 * with the first occurrence in front. */
static int compare_entries(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->key_line > b->key_line) - (a->key_line < b->key_line);
}

/* Fail when a mapping's n pairs repeat a key, naming the earliest repeat.
 * Sorting a scratch copy keeps this O(n log n) for huge mappings. */
static as_code check_duplicate_keys(builder *b, const entry *pairs, size_t n)
{
    if (n < 2)
        return AS_OK;
    entry *sorted = as_vec_copy(pairs, (int64_t)n, sizeof *sorted);
    if (!sorted)
        return out_of_memory(b);
    qsort(sorted, n, sizeof *sorted, compare_entries);
    const entry *repeat = NULL, *first = NULL;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(sorted[i - 1].key, sorted[i].key) == 0 &&
            (!repeat || sorted[i].key_line < repeat->key_line)) {
            repeat = &sorted[i];
            first = &sorted[i - 1];
        }
    }
    as_code rc = AS_OK;
    if (repeat)
        rc = as_fail(b->st, AS_EINVAL, "%s:%d: duplicate key '%.60s' (first at line %d)",
                     b->doc->path, repeat->key_line, repeat->key, first->key_line);
    free(sorted);
    return rc;
}

/* Open a sequence or mapping at event ev. */
static as_code open_container(builder *b, const yaml_event_t *ev, as_yaml_kind kind)
{
    if (b->depth == YAML_MAX_DEPTH)
        return as_fail(b->st, AS_EINVAL, "%s:%d:%d: nesting deeper than %d levels", b->doc->path,
                       (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                       YAML_MAX_DEPTH);
    const yaml_char_t *anchor =
        kind == AS_YAML_MAPPING ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    frame *f = &b->frames[b->depth];
    memset(f, 0, sizeof *f);
    if (!(f->node = new_node(b, kind, ev->start_mark)))
        return out_of_memory(b);
    f->first_entry = b->n_entries;
    as_code rc = copy_anchor(b, anchor, &f->anchor);
    if (rc == AS_OK)
        b->depth++;
    return rc;
}

/* Close the innermost container: move its entries into the arena, check
 * its keys, register its anchor and hand it to its parent. */
static as_code close_container(builder *b)
{
    frame f = b->frames[--b->depth];
    as_yaml_node *node = f.node;
    const entry *children = b->entries + f.first_entry;
    int64_t n = b->n_entries - f.first_entry;
    if (n > INT32_MAX)
        return as_fail(b->st, AS_EINVAL, "%s:%d: too many entries", b->doc->path, node->line);
    node->n = (int)n;
    if (n > 0) {
        as_arena *arena = &b->doc->arena;
        if (!(node->items = as_arena_alloc(arena, (size_t)n * sizeof *node->items)))
            return out_of_memory(b);
        if (node->kind == AS_YAML_MAPPING &&
            (!(node->keys = as_arena_alloc(arena, (size_t)n * sizeof *node->keys)) ||
             !(node->key_lines = as_arena_alloc(arena, (size_t)n * sizeof *node->key_lines))))
            return out_of_memory(b);
        for (int64_t i = 0; i < n; i++) {
            node->items[i] = children[i].node;
            if (node->keys) {
                node->keys[i] = children[i].key;
                node->key_lines[i] = children[i].key_line;
            }
        }
    }
    as_code rc =
        node->kind == AS_YAML_MAPPING ? check_duplicate_keys(b, children, (size_t)n) : AS_OK;
    b->n_entries = f.first_entry;
    if (rc == AS_OK)
        rc = register_anchor(b, f.anchor, node);
    return rc == AS_OK ? add_value(b, node) : rc;
}

/* A scalar event becomes a node holding its text. */
static as_code add_scalar(builder *b, const yaml_event_t *ev)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t length = ev->data.scalar.length;
    if (memchr(text, '\0', length))
        return as_fail(b->st, AS_EINVAL, "%s:%d:%d: scalar contains a NUL character", b->doc->path,
                       (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
    as_yaml_node *node = new_node(b, AS_YAML_SCALAR, ev->start_mark);
    char *copy = node ? as_arena_alloc(&b->doc->arena, length + 1) : NULL;
    if (!copy)
        return out_of_memory(b);
    memcpy(copy, text, length);
    node->scalar = copy;
    const char *anchor;
    as_code rc = copy_anchor(b, ev->data.scalar.anchor, &anchor);
    if (rc == AS_OK)
        rc = register_anchor(b, anchor, node);
    return rc == AS_OK ? add_value(b, node) : rc;
}

/* An alias stands for the node its anchor named; the anchor must be
 * complete already, so a node can never contain itself. */
static as_code add_alias(builder *b, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    int32_t slot = as_strmap_get(&b->anchor_index, name);
    if (slot < 0)
        return as_fail(b->st, AS_EINVAL, "%s:%d:%d: unknown anchor '%.60s'", b->doc->path,
                       (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1, name);
    return add_value(b, b->anchors[slot]);
}

/* Turn libyaml's error into "path:line:col: problem".  Reader errors (bad
 * encoding) carry a byte offset instead of a mark; count lines up to it. */
static as_code parser_error(builder *b, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return out_of_memory(b);
    size_t line = p->problem_mark.line, column = p->problem_mark.column;
    if (p->error == YAML_READER_ERROR) {
        size_t end = p->problem_offset < b->size ? p->problem_offset : b->size;
        line = column = 0;
        for (size_t i = 0; i < end; i++, column++) {
            if (b->text[i] == '\n') {
                line++;
                column = (size_t)-1;
            }
        }
    }
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->context)
        return as_fail(b->st, AS_EINVAL, "%s:%zu:%zu: %s %s", b->doc->path, line + 1, column + 1,
                       problem, p->context);
    return as_fail(b->st, AS_EINVAL, "%s:%zu:%zu: %s", b->doc->path, line + 1, column + 1, problem);
}

/* Apply one event to the tree under construction.  *done is set at the
 * end of the stream. */
static as_code apply_event(builder *b, const yaml_event_t *ev, bool *done)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->have_root)
            return as_fail(b->st, AS_EINVAL, "%s:%d: a second document in one file", b->doc->path,
                           (int)ev->start_mark.line + 1);
        return AS_OK;
    case YAML_SEQUENCE_START_EVENT:
        return open_container(b, ev, AS_YAML_SEQUENCE);
    case YAML_MAPPING_START_EVENT:
        return open_container(b, ev, AS_YAML_MAPPING);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_container(b);
    case YAML_SCALAR_EVENT:
        return add_scalar(b, ev);
    case YAML_ALIAS_EVENT:
        return add_alias(b, ev);
    case YAML_STREAM_END_EVENT:
        *done = true;
        return AS_OK;
    default:
        return AS_OK; /* stream start, document end, no event */
    }
}

as_code as_yaml_parse(const char *text, size_t size, const char *path, as_yaml_doc *doc,
                      as_status *st)
{
    as_arena_init(&doc->arena);
    doc->root = NULL;
    doc->path = as_arena_strdup(&doc->arena, path ? path : "<yaml>");
    builder b = {.doc = doc, .text = text, .size = size, .st = st};
    as_strmap_init(&b.anchor_index);
    if (!doc->path) {
        doc->path = path ? path : "<yaml>";
        return out_of_memory(&b);
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return out_of_memory(&b);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    as_code rc = AS_OK;
    for (bool done = false; rc == AS_OK && !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(&b, &parser);
            break;
        }
        rc = apply_event(&b, &ev, &done);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    free(b.entries);
    free(b.anchors);
    as_strmap_free(&b.anchor_index);
    if (rc != AS_OK)
        as_yaml_free(doc);
    return rc;
}

as_code as_yaml_load(const char *path, as_yaml_doc *doc, as_status *st)
{
    as_arena_init(&doc->arena);
    doc->root = NULL;
    doc->path = NULL;
    size_t size;
    uint8_t *text = as_read_file(path, &size, st);
    if (!text)
        return st && st->code != AS_OK ? st->code : AS_EIO;
    as_code rc = as_yaml_parse((const char *)text, size, path, doc, st);
    free(text);
    return rc;
}

void as_yaml_free(as_yaml_doc *doc)
{
    as_arena_free(&doc->arena);
    doc->root = NULL;
    doc->path = NULL;
}

const as_yaml_node *as_yaml_get(const as_yaml_node *map, const char *key)
{
    if (!map || map->kind != AS_YAML_MAPPING)
        return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0)
            return map->items[i];
    return NULL;
}

/* ---------------------------------------------------------- typed reads */

/* The path for messages of a document that may have been freed. */
static const char *doc_path(const as_yaml_doc *doc)
{
    return doc && doc->path ? doc->path : "<yaml>";
}

/* Fail with "path:line: key: expected <expected>, got <what node is>"; a
 * missing node (NULL) has no line, so the message names only the key. */
static as_code type_error(const as_yaml_doc *doc, const as_yaml_node *node, const char *key,
                          const char *expected, as_status *st)
{
    if (!node)
        return as_fail(st, AS_EINVAL, "%s: %s: missing, expected %s", doc_path(doc), key, expected);
    if (node->kind != AS_YAML_SCALAR)
        return as_fail(st, AS_EINVAL, "%s:%d: %s: expected %s, got a %s", doc_path(doc), node->line,
                       key, expected, node->kind == AS_YAML_MAPPING ? "mapping" : "sequence");
    return as_fail(st, AS_EINVAL, "%s:%d: %s: expected %s, got '%.60s'", doc_path(doc), node->line,
                   key, expected, node->scalar);
}

/* Parse a YAML integer: optional sign, then decimal digits, 0x hex or 0o
 * octal.  Spaces, fractions, exponents and overflow are refused (strtoll
 * alone would accept leading blanks, a second sign and "0x" twice). */
static bool parse_int(const char *s, int64_t *out)
{
    const char *p = s + (*s == '+' || *s == '-');
    int base = 10;
    const char *digits = "0123456789";
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        digits = "0123456789abcdefABCDEF";
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
        base = 8;
        digits = "01234567";
        p += 2;
    }
    if (!*p || strspn(p, digits) != strlen(p))
        return false;
    errno = 0;
    char *end;
    unsigned long long magnitude = strtoull(p, &end, base);
    if (*end || errno == ERANGE)
        return false;
    if (*s == '-') {
        if (magnitude > (unsigned long long)INT64_MAX + 1)
            return false;
        *out = magnitude == (unsigned long long)INT64_MAX + 1 ? INT64_MIN : -(int64_t)magnitude;
    } else {
        if (magnitude > INT64_MAX)
            return false;
        *out = (int64_t)magnitude;
    }
    return true;
}

/* Parse a YAML number: an integer as parse_int reads it ("0x10" too), a
 * decimal with optional fraction and exponent ("1e-9", "-.5", "3."), or
 * .inf / -.inf / .nan.  strtod's extras (hex floats, "infinity", leading
 * blanks) are refused by checking the characters. */
static bool parse_double(const char *s, double *out)
{
    int64_t whole;
    if (parse_int(s, &whole)) {
        *out = (double)whole;
        return true;
    }
    const char *p = s + (*s == '+' || *s == '-');
    if (*p == '.' && (strcasecmp(p + 1, "inf") == 0 || (p == s && strcasecmp(p + 1, "nan") == 0))) {
        *out = p[1] == 'n' || p[1] == 'N' ? NAN : (*s == '-' ? -INFINITY : INFINITY);
        return true;
    }
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return false;
    if (strspn(p, "0123456789.eE+-") != strlen(p))
        return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (*end || (errno == ERANGE && isinf(v)))
        return false;
    *out = v;
    return true;
}

/* YAML 1.1's boolean words, any case. */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const words[] = {"true", "yes", "on", "false", "no", "off"};
    for (int i = 0; i < 6; i++) {
        if (strcasecmp(s, words[i]) == 0) {
            *out = i < 3;
            return true;
        }
    }
    return false;
}

/* The text of node when it is a scalar, NULL when it is missing or a
 * mapping or sequence: what the typed readers below parse. */
static const char *scalar_text(const as_yaml_node *node)
{
    return node && node->kind == AS_YAML_SCALAR ? node->scalar : NULL;
}

as_code as_yaml_int(const as_yaml_doc *doc, const as_yaml_node *node, const char *key, int64_t *out,
                    as_status *st)
{
    const char *text = scalar_text(node);
    return text && parse_int(text, out) ? AS_OK : type_error(doc, node, key, "an integer", st);
}

as_code as_yaml_double(const as_yaml_doc *doc, const as_yaml_node *node, const char *key,
                       double *out, as_status *st)
{
    const char *text = scalar_text(node);
    return text && parse_double(text, out) ? AS_OK : type_error(doc, node, key, "a number", st);
}

as_code as_yaml_bool(const as_yaml_doc *doc, const as_yaml_node *node, const char *key, bool *out,
                     as_status *st)
{
    const char *text = scalar_text(node);
    return text && parse_bool(text, out) ? AS_OK : type_error(doc, node, key, "true or false", st);
}

as_code as_yaml_check_keys(const as_yaml_doc *doc, const as_yaml_node *map, const char *what,
                           const char *const *allowed, as_status *st)
{
    if (!map)
        return AS_OK;
    if (map->kind != AS_YAML_MAPPING)
        return type_error(doc, map, what, "a mapping", st);
    for (int i = 0; i < map->n; i++) {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, map->keys[i]) == 0;
        if (known)
            continue;
        char list[AS_MSG_BYTES] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a && used < sizeof list; a++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                     a == allowed ? "" : ", ", *a);
        return as_fail(st, AS_EINVAL, "%s:%d: unknown key '%.60s' in %s (expected one of: %s)",
                       doc_path(doc), map->key_lines[i], map->keys[i], what, list);
    }
    return AS_OK;
}

bool as_yaml_is_null(const as_yaml_node *node)
{
    return node && node->kind == AS_YAML_SCALAR &&
           (!node->scalar[0] || strcmp(node->scalar, "~") == 0 ||
            strcmp(node->scalar, "null") == 0);
}

/* ------------------------------------------------------ strict reading */

as_yaml_reader as_yaml_reader_of(const as_yaml_doc *doc, as_status *st)
{
    as_yaml_reader r = {.doc = doc, .st = st};
    return r;
}

as_yaml_reader as_yaml_enter(const as_yaml_reader *r, const char *key)
{
    as_yaml_reader in = *r;
    as_yaml_key_path(r, key, in.path);
    return in;
}

as_yaml_reader as_yaml_enter_item(const as_yaml_reader *r, const char *key, int index)
{
    as_yaml_reader in = *r;
    char where[AS_YAML_PATH_BYTES];
    as_yaml_key_path(r, key, where);
    snprintf(in.path, sizeof in.path, "%.100s[%d]", where, index);
    return in;
}

const char *as_yaml_key_path(const as_yaml_reader *r, const char *key, char buf[AS_YAML_PATH_BYTES])
{
    const char *dot = r->path[0] && key[0] ? "." : "";
    snprintf(buf, AS_YAML_PATH_BYTES, "%.80s%s%.40s", r->path, dot, key);
    return buf;
}

as_code as_yaml_fail(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    as_code rc = as_yaml_vfail(r, node, key, fmt, ap);
    va_end(ap);
    return rc;
}

as_code as_yaml_vfail(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                      const char *fmt, va_list ap)
{
    char message[AS_MSG_BYTES], where[AS_YAML_PATH_BYTES];
    vsnprintf(message, sizeof message, fmt, ap);
    as_yaml_key_path(r, key, where);
    const char *colon = where[0] ? ": " : "";
    if (!node)
        return as_fail(r->st, AS_EINVAL, "%s: %s%s%s", doc_path(r->doc), where, colon, message);
    return as_fail(r->st, AS_EINVAL, "%s:%d: %s%s%s", doc_path(r->doc), node->line, where, colon,
                   message);
}

/* "a mapping", "a sequence", "a scalar". */
static const char *kind_name(as_yaml_kind kind)
{
    return kind == AS_YAML_MAPPING    ? "a mapping"
           : kind == AS_YAML_SEQUENCE ? "a sequence"
                                      : "a scalar";
}

as_code as_yaml_expect(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                       as_yaml_kind kind)
{
    if (node->kind == kind)
        return AS_OK;
    return as_yaml_fail(r, node, key, "expected %s, got %s", kind_name(kind),
                        kind_name(node->kind));
}

as_code as_yaml_find(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                     bool required, as_yaml_kind kind, const as_yaml_node **out)
{
    *out = as_yaml_get(map, key);
    if (!*out)
        return required ? as_yaml_fail(r, map, "", "missing key '%s'", key) : AS_OK;
    return as_yaml_expect(r, *out, key, kind);
}

as_code as_yaml_find_section(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                             const as_yaml_node **out)
{
    *out = as_yaml_get(map, key);
    if (!*out || as_yaml_is_null(*out)) {
        *out = NULL;
        return AS_OK;
    }
    return as_yaml_expect(r, *out, key, AS_YAML_MAPPING);
}

as_code as_yaml_keys(const as_yaml_reader *r, const as_yaml_node *map, const char *what,
                     const char *const *allowed)
{
    if (!what)
        what = r->path[0] ? r->path : "the document";
    return as_yaml_check_keys(r->doc, map, what, allowed, r->st);
}

as_code as_yaml_require(const as_yaml_reader *r, const as_yaml_node *map,
                        const char *const *required)
{
    for (int i = 0; required[i]; i++)
        if (!as_yaml_get(map, required[i]))
            return as_yaml_fail(r, map, "", "missing key '%s'", required[i]);
    return AS_OK;
}

/* The node under key in map (absent: NULL, an error when required), and
 * its key path into where. */
static as_code find_value(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, const as_yaml_node **node, char where[AS_YAML_PATH_BYTES])
{
    as_yaml_key_path(r, key, where);
    *node = as_yaml_get(map, key);
    if (!*node)
        return required ? as_yaml_fail(r, map, "", "missing key '%s'", key) : AS_OK;
    return AS_OK;
}

as_code as_yaml_read_int(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                         bool required, int64_t min, int64_t max, int64_t *out)
{
    const as_yaml_node *node;
    char where[AS_YAML_PATH_BYTES];
    int64_t value;
    as_code rc = find_value(r, map, key, required, &node, where);
    if (rc != AS_OK || !node)
        return rc;
    if ((rc = as_yaml_int(r->doc, node, where, &value, r->st)) != AS_OK)
        return rc;
    if (value < min || value > max)
        return as_yaml_fail(r, node, key, "expected an integer from %lld to %lld, got '%s'",
                            (long long)min, (long long)max, node->scalar);
    *out = value;
    return AS_OK;
}

as_code as_yaml_read_double(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                            bool required, double min, bool above_min, double max, double *out)
{
    const as_yaml_node *node;
    char where[AS_YAML_PATH_BYTES];
    double value;
    as_code rc = find_value(r, map, key, required, &node, where);
    if (rc != AS_OK || !node)
        return rc;
    if ((rc = as_yaml_double(r->doc, node, where, &value, r->st)) != AS_OK)
        return rc;
    if (isfinite(value) && value >= min && value <= max && !(above_min && value == min)) {
        *out = value;
        return AS_OK;
    }
    if (isinf(max))
        return as_yaml_fail(r, node, key, "expected a number %s %g, got '%s'",
                            above_min ? ">" : ">=", min, node->scalar);
    return as_yaml_fail(r, node, key, "expected a number %s %g %s %g, got '%s'",
                        above_min ? "above" : "from", min, above_min ? "and at most" : "to", max,
                        node->scalar);
}

as_code as_yaml_read_bool(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, bool *out)
{
    const as_yaml_node *node;
    char where[AS_YAML_PATH_BYTES];
    as_code rc = find_value(r, map, key, required, &node, where);
    return rc != AS_OK || !node ? rc : as_yaml_bool(r->doc, node, where, out, r->st);
}

as_code as_yaml_read_text(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, const char **out)
{
    const as_yaml_node *node;
    as_code rc = as_yaml_find(r, map, key, required, AS_YAML_SCALAR, &node);
    if (rc == AS_OK && node)
        *out = node->scalar;
    return rc;
}

as_code as_yaml_read_name(const as_yaml_reader *r, const as_yaml_node *map, const char *key,
                          bool required, char *dst, size_t bytes)
{
    const as_yaml_node *node;
    as_code rc = as_yaml_find(r, map, key, required, AS_YAML_SCALAR, &node);
    if (rc != AS_OK || !node)
        return rc;
    size_t length = strlen(node->scalar);
    if (length == 0)
        return as_yaml_fail(r, node, key, "expected a name");
    if (length >= bytes)
        return as_yaml_fail(r, node, key, "'%.40s...' is longer than %zu characters", node->scalar,
                            bytes - 1);
    memset(dst, 0, bytes);
    memcpy(dst, node->scalar, length);
    return AS_OK;
}

as_code as_yaml_choice(const as_yaml_reader *r, const as_yaml_node *node, const char *key,
                       const char *const *names, int *index)
{
    char list[AS_MSG_BYTES / 2] = "";
    size_t used = 0;
    for (int i = 0; names[i]; i++) {
        if (node->kind == AS_YAML_SCALAR && strcmp(node->scalar, names[i]) == 0) {
            *index = i;
            return AS_OK;
        }
        if (used < sizeof list)
            used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    }
    return as_yaml_fail(r, node, key, "expected one of %s, got '%.40s'", list,
                        node->kind == AS_YAML_SCALAR ? node->scalar : "(not a scalar)");
}
