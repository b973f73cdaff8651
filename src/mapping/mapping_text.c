/*
 * mapping_text.c -- a mapping and a problem's bounds as one short line of
 * text, for stores that keep many mappings (the run store keeps one per
 * compute layer of every candidate it evaluates) and read them back.
 *
 * A mapping reads as Timeloop's map.txt, flattened: its levels outermost
 * first, separated by " | ", each as its name, the data spaces it keeps
 * in brackets (W, I, O), then its loops outermost first -- temporal loops
 * as the dimension and its factor ("C8"), then spatial loops with the
 * axis they unroll on ("M16X", "C4Y").  Loops of factor 1 are left out:
 * they do nothing, so their place in the order does not change what the
 * mapping does.  A systolic group packing above 1 ends the line as
 * " pack=N".  E.g. "DRAM[WIO] M2 P7 | GlobalBuffer[IO] C4 Q7 M16Y C16X |
 * PE[W] R3 S3".
 *
 * Reading a line back gives a mapping that evaluates exactly as the one
 * written (map_evaluate sees the same nest): the listed loops in their
 * order, the factor-1 dimensions after them in slot order.
 */
#include "mapping.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char KEEP_LETTER[WL_NDATASPACES] = {'W', 'I', 'O'};

/* Appends to a fixed buffer, remembering whether it overflowed. */
typedef struct text_out {
    char *buf;
    size_t size, len;
    bool truncated;
} text_out;

static void put(text_out *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n >= t->size) {
        t->truncated = true;
        n = t->size > t->len + 1 ? t->size - t->len - 1 : 0;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

/* A loop token: dimension letter, factor, axis suffix ("" for temporal). */
static void put_loop(text_out *t, int d, int64_t factor, const char *axis)
{
    char token[40];
    snprintf(token, sizeof token, " %s%lld%s", wl_dim_name((wl_dim)d), (long long)factor, axis);
    put(t, token);
}

/* Level l's name as the text shows it: characters that would end a token
 * or a level (space, '|', '[', ']') become '_'; "L<l>" without a name. */
static void put_level_name(text_out *t, const arch_spec *a, int l)
{
    char name[ARCH_NAME_BYTES];
    if (a && l < a->n_levels && a->level[l].name[0])
        snprintf(name, sizeof name, "%s", a->level[l].name);
    else
        snprintf(name, sizeof name, "L%d", l);
    for (char *c = name; *c; c++)
        if (isspace((unsigned char)*c) || *c == '|' || *c == '[' || *c == ']')
            *c = '_';
    put(t, name);
}

bool map_mapping_format(const arch_spec *a, const map_mapping *m, char *buf, size_t size)
{
    text_out t = {.buf = buf, .size = size};
    if (size > 0)
        buf[0] = '\0';
    for (int l = m->n_levels - 1; l >= 0; l--) {
        const map_level *ml = &m->level[l];
        if (l < m->n_levels - 1)
            put(&t, " | ");
        put_level_name(&t, a, l);
        char keep[WL_NDATASPACES + 3] = "[", *k = keep + 1;
        for (int ds = 0; ds < WL_NDATASPACES; ds++)
            if (ml->keep[ds])
                *k++ = KEEP_LETTER[ds];
        *k++ = ']';
        *k = '\0';
        put(&t, keep);
        for (int i = WL_NDIMS - 1; i >= 0; i--) {
            int d = ml->temporal_order[i];
            if (d < WL_NDIMS && ml->temporal[d] > 1)
                put_loop(&t, d, ml->temporal[d], "");
        }
        for (int i = WL_NDIMS - 1; i >= 0; i--) {
            int d = ml->spatial_order[i];
            if (d < WL_NDIMS && ml->spatial[d] > 1)
                put_loop(&t, d, ml->spatial[d], i < ml->spatial_split ? "X" : "Y");
        }
    }
    if (m->group_pack > 1) {
        char pack[32];
        snprintf(pack, sizeof pack, " pack=%lld", (long long)m->group_pack);
        put(&t, pack);
    }
    return !t.truncated && size > 0;
}

/* The dimension slot of letter c, or -1. */
static int dim_of_letter(char c)
{
    for (int d = 0; d < WL_NDIMS; d++)
        if (wl_dim_name((wl_dim)d)[0] == c && wl_dim_name((wl_dim)d)[1] == '\0')
            return d;
    return -1;
}

/* A positive integer spanning all of [s, end) into *v. */
static bool parse_count(const char *s, const char *end, int64_t *v)
{
    if (s == end || !isdigit((unsigned char)*s))
        return false;
    char *stop;
    errno = 0;
    long long x = strtoll(s, &stop, 10);
    *v = x;
    return errno == 0 && stop == end && x >= 1;
}

/* Order: the dims listed (count of them, innermost first) then every
 * other dimension in slot order. */
static void complete_order(const int *listed, int count, uint8_t *order)
{
    bool used[WL_NDIMS] = {false};
    int n = 0;
    for (int i = 0; i < count; i++) {
        order[n++] = (uint8_t)listed[i];
        used[listed[i]] = true;
    }
    for (int d = 0; d < WL_NDIMS; d++)
        if (!used[d])
            order[n++] = (uint8_t)d;
}

/* Loops of one level as tokens, outermost first (temporal, spatial X, spatial Y). */
typedef struct level_loops {
    int temporal[WL_NDIMS], n_temporal;
    int x[WL_NDIMS], n_x;
    int y[WL_NDIMS], n_y;
} level_loops;

/* One token of a level's text (s, n bytes) into ml and loops; false when
 * it is not a loop or a packing, or repeats a dimension. */
static bool parse_token(const char *s, size_t n, map_level *ml, level_loops *loops,
                        int64_t *group_pack)
{
    const char *end = s + n;
    if (n > 5 && strncmp(s, "pack=", 5) == 0)
        return parse_count(s + 5, end, group_pack);
    int d = dim_of_letter(s[0]);
    if (d < 0 || n < 2)
        return false;
    char axis = end[-1];
    bool spatial = axis == 'X' || axis == 'Y';
    int64_t factor;
    if (!parse_count(s + 1, spatial ? end - 1 : end, &factor))
        return false;
    int64_t *slot = spatial ? &ml->spatial[d] : &ml->temporal[d];
    if (*slot != 1)
        return false;
    *slot = factor;
    if (!spatial)
        loops->temporal[loops->n_temporal++] = d;
    else if (axis == 'X')
        loops->x[loops->n_x++] = d;
    else
        loops->y[loops->n_y++] = d;
    return true;
}

/* The listed dims (outermost first) reversed onto order, innermost first. */
static int append_reversed(const int *outermost_first, int n, int *order, int at)
{
    for (int i = n - 1; i >= 0; i--)
        order[at++] = outermost_first[i];
    return at;
}

/* Level text s (n bytes, "Name[WI] C8 M16X ...") into ml. */
static bool parse_level(const char *s, size_t n, map_level *ml, int64_t *group_pack)
{
    const char *end = s + n, *open = memchr(s, '[', n);
    const char *close = open ? memchr(open, ']', (size_t)(end - open)) : NULL;
    if (!close)
        return false;
    memset(ml, 0, sizeof *ml);
    for (int d = 0; d < WL_NDIMS; d++)
        ml->temporal[d] = ml->spatial[d] = 1;
    for (const char *c = open + 1; c < close; c++) {
        const char *at = memchr(KEEP_LETTER, *c, sizeof KEEP_LETTER);
        if (!at || ml->keep[at - KEEP_LETTER])
            return false;
        ml->keep[at - KEEP_LETTER] = true;
    }
    level_loops loops = {.n_temporal = 0};
    for (const char *c = close + 1; c < end;) {
        while (c < end && *c == ' ')
            c++;
        const char *token = c;
        while (c < end && *c != ' ')
            c++;
        if (c > token && !parse_token(token, (size_t)(c - token), ml, &loops, group_pack))
            return false;
    }
    int order[WL_NDIMS];
    int count = append_reversed(loops.temporal, loops.n_temporal, order, 0);
    complete_order(order, count, ml->temporal_order);
    count = append_reversed(loops.x, loops.n_x, order, 0);
    ml->spatial_split = count;
    count = append_reversed(loops.y, loops.n_y, order, count);
    complete_order(order, count, ml->spatial_order);
    return true;
}

as_code map_mapping_parse(const char *text, int n_levels, map_mapping *out, as_status *st)
{
    memset(out, 0, sizeof *out);
    if (n_levels < 1 || n_levels > ARCH_MAX_LEVELS)
        return as_fail(st, AS_EINVAL, "mapping '%.80s': %d levels (1 to %d)", text, n_levels,
                       ARCH_MAX_LEVELS);
    out->n_levels = n_levels;
    const char *s = text;
    for (int l = n_levels - 1; l >= 0; l--) {
        size_t n = strcspn(s, "|");
        bool last = s[n] == '\0';
        if (last != (l == 0))
            return as_fail(st, AS_EINVAL, "mapping '%.80s': not %d levels separated by '|'", text,
                           n_levels);
        while (n > 0 && *s == ' ')
            s++, n--;
        if (!parse_level(s, n, &out->level[l], &out->group_pack))
            return as_fail(st, AS_EINVAL,
                           "mapping '%.80s': level %d ('%.*s') is not NAME[WIO] followed by "
                           "loops such as C8, M16X, P7Y (each dimension once) or pack=N",
                           text, l, (int)(n < 60 ? n : 60), s);
        s += n + !last;
    }
    return AS_OK;
}

bool map_bounds_format(const int64_t bound[WL_NDIMS], char *buf, size_t size)
{
    text_out t = {.buf = buf, .size = size};
    if (size > 0)
        buf[0] = '\0';
    for (int d = 0; d < WL_NDIMS; d++) {
        if (bound[d] == 1 && !(d == WL_NDIMS - 1 && t.len == 0))
            continue;
        char token[32];
        snprintf(token, sizeof token, "%s%s%lld", t.len ? " " : "", wl_dim_name((wl_dim)d),
                 (long long)bound[d]);
        put(&t, token);
    }
    return !t.truncated && size > 0;
}

as_code map_bounds_parse(const char *text, int64_t bound[WL_NDIMS], as_status *st)
{
    for (int d = 0; d < WL_NDIMS; d++)
        bound[d] = 1;
    bool seen[WL_NDIMS] = {false};
    for (const char *c = text; *c;) {
        while (*c == ' ')
            c++;
        const char *token = c;
        while (*c && *c != ' ')
            c++;
        if (c == token)
            break;
        int d = dim_of_letter(*token);
        if (d < 0 || seen[d] || !parse_count(token + 1, c, &bound[d]))
            return as_fail(st, AS_EINVAL,
                           "problem '%.80s': '%.*s' is not a dimension and its bound (C64, P7, "
                           "... each dimension once)",
                           text, (int)(c - token < 40 ? c - token : 40), token);
        seen[d] = true;
    }
    return AS_OK;
}
