/*
 * topology.c -- SCALE-Sim topology CSVs as model graphs
 * (docs/scalesim-import.md).
 *
 * SCALE-Sim v2 (scalesim/topology_utils.py) reads two CSV forms, one
 * layer a row after a header line it skips:
 *   conv: Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter
 *         Width, Channels, Num Filter, Strides[, stride along the width],
 *   GEMM: Layer, M, N, K,   (it runs as the conv M x K, filter 1 x K, one
 *         channel, N filters, stride 1)
 * and drops the last field of every row (`row.split(',')[:-1]`), so each
 * row must end with a comma.  It applies no padding (the IFMAP size is the
 * padded input) and rounds the output size up:
 * E = ceil((H - R) / stride) + 1.  A conv row whose name contains "DP" is
 * depthwise: SCALE-Sim runs it as Channels one-channel layers of Num
 * Filter filters each.
 *
 * What we build: one op per row -- a Conv (group = Channels for a "DP"
 * row) or a MatMul by a K x N weight -- at batch 1, with int8 storage
 * (SCALE-Sim's words are one byte).  The extra output row or column of the
 * ceiling rule is one row or column of zero padding at the bottom or right
 * (pads_end), which reproduces SCALE-Sim's M, MACs and cycles.  A row
 * reads its own graph input, unless the row before produced exactly the
 * tensor it reads (same channels, height and width, or for GEMM rows M x
 * K); then the two are connected, so that fusion has something to fuse.
 * Every output no later row reads is a graph output.
 */
#include "workload.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The largest tensor (elements) and layer (MACs) a row may describe, so
 * that every sum of sizes downstream stays far inside int64. */
#define TOPO_MAX_ELEMENTS (INT64_C(1) << 40)
#define TOPO_MAX_MACS (INT64_C(1) << 50)

/* The most fields a row may have before its trailing comma (a conv row
 * with its width stride; a GEMM row's extra fields are ignored), the
 * fields a line keeps, and the largest size we take in a field. */
enum { TOPO_MAX_FIELDS = 9, TOPO_LINE_FIELDS = 32 };
#define TOPO_MAX_VALUE (INT64_C(1) << 31)

/* One field of a CSV line: its text without surrounding blanks and the
 * 1-based column where it starts. */
typedef struct topo_field {
    const char *text;
    size_t len;
    int col;
} topo_field;

/* One line being read: where messages point, and its fields. */
typedef struct topo_line {
    const char *source;
    int line;
    int end_col; /* the column just past the line's last character */
    int n_fields;
    topo_field field[TOPO_LINE_FIELDS]; /* the first ones when the line has more */
} topo_line;

/* One layer as SCALE-Sim's conv form states it. */
typedef struct topo_layer {
    const char *name;
    int line;
    int64_t ifmap_h, ifmap_w, filter_h, filter_w, channels, filters, stride_h, stride_w;
    bool depthwise;
    bool gemm; /* a GEMM row: M = ifmap_h, K = filter_w, N = filters */
} topo_layer;

static const char *const conv_columns[] = {"Layer name",    "IFMAP Height", "IFMAP Width",
                                           "Filter Height", "Filter Width", "Channels",
                                           "Num Filter",    "Strides",      "Stride Width"};
static const char *const gemm_columns[] = {"Layer", "M", "N", "K"};

/* ------------------------------------------------------------- lexing */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Split the line [p, p + n) at commas into l's fields, blanks trimmed;
 * fields past the array's room are counted but not kept. */
static void split_line(const char *p, size_t n, topo_line *l)
{
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n'))
        n--;
    l->end_col = (int)n + 1;
    l->n_fields = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != ',')
            continue;
        size_t a = start, b = i;
        while (a < b && is_blank(p[a]))
            a++;
        while (b > a && is_blank(p[b - 1]))
            b--;
        if (l->n_fields < TOPO_LINE_FIELDS)
            l->field[l->n_fields] = (topo_field){p + a, b - a, (int)a + 1};
        l->n_fields++;
        start = i + 1;
    }
}

/* Whether the line holds nothing but blanks (SCALE-Sim skips it). */
static bool blank_line(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_blank(p[i]) && p[i] != '\n')
            return false;
    return true;
}

/* Whether field f is `word`, letter case aside. */
static bool field_is(const topo_field *f, const char *word)
{
    size_t n = strlen(word);
    if (f->len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)f->text[i]) != tolower((unsigned char)word[i]))
            return false;
    return true;
}

/* Whether field f starts with `prefix`, letter case aside. */
static bool field_starts(const topo_field *f, const char *prefix)
{
    size_t n = strlen(prefix);
    if (f->len < n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)f->text[i]) != tolower((unsigned char)prefix[i]))
            return false;
    return true;
}

/* Field i of l as a positive integer (decimal digits, at most
 * TOPO_MAX_VALUE) into *out; the error names the column and what it is. */
static as_code read_count(const topo_line *l, int i, const char *what, int64_t *out, as_status *st)
{
    const topo_field *f = &l->field[i];
    int64_t v = 0;
    bool ok = f->len > 0;
    for (size_t k = 0; ok && k < f->len; k++) {
        ok = isdigit((unsigned char)f->text[k]) && v <= TOPO_MAX_VALUE;
        v = v * 10 + (f->text[k] - '0');
    }
    if (!ok || v < 1 || v > TOPO_MAX_VALUE)
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: %s is '%.*s', not a positive integer (at most %lld)", l->source,
                       l->line, f->col, what, (int)f->len, f->text, (long long)TOPO_MAX_VALUE);
    *out = v;
    return AS_OK;
}

/* ------------------------------------------------------------- parsing */

/* The format the header line says: GEMM when its fields 2 to 4 are M, N,
 * K; conv when field 2 starts with "IFMAP" (SCALE-Sim's own DeepBench.csv
 * says "IFMAP Width" twice); and field 1 names the layer either way. */
static as_code read_header(const topo_line *l, bool *gemm, as_status *st)
{
    if (l->n_fields < 1 || !field_starts(&l->field[0], "layer"))
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: bad header: the first field is '%.*s', not 'Layer name' "
                       "(a SCALE-Sim topology starts with a header line)",
                       l->source, l->line, l->n_fields ? l->field[0].col : 1,
                       l->n_fields ? (int)l->field[0].len : 0, l->n_fields ? l->field[0].text : "");
    if (l->n_fields >= 4 && field_is(&l->field[1], "M") && field_is(&l->field[2], "N") &&
        field_is(&l->field[3], "K")) {
        *gemm = true;
        return AS_OK;
    }
    if (l->n_fields >= 8 && field_starts(&l->field[1], "ifmap")) {
        *gemm = false;
        return AS_OK;
    }
    const topo_field *f = l->n_fields > 1 ? &l->field[1] : NULL;
    return as_fail(st, AS_EINVAL,
                   "%s:%d:%d: bad header: expected a conv topology (Layer name, IFMAP Height, "
                   "IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,) or a "
                   "GEMM one (Layer, M, N, K,); found '%.*s' after the first field",
                   l->source, l->line, f ? f->col : l->end_col, f ? (int)f->len : 0,
                   f ? f->text : "");
}

/* Check the row's trailing comma and its field count (after dropping the
 * trailing empty field): n_min .. n_max fields, columns naming them. */
static as_code check_row_shape(topo_line *l, int n_min, int n_max, const char *const *columns,
                               as_status *st)
{
    if (l->n_fields > TOPO_LINE_FIELDS)
        return as_fail(st, AS_EINVAL, "%s:%d:%d: too many fields: %d, at most %d", l->source,
                       l->line, l->field[n_max].col, l->n_fields - 1, n_max);
    const topo_field *last = &l->field[l->n_fields - 1];
    if (last->len > 0)
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: the row does not end with a comma: SCALE-Sim drops the last "
                       "field of every row, so '%.*s' would be lost (add the trailing comma)",
                       l->source, l->line, last->col, (int)last->len, last->text);
    l->n_fields--; /* the empty field after the trailing comma */
    if (l->n_fields < n_min) {
        char want[256];
        size_t w = 0;
        for (int i = 0; i < n_min && w < sizeof want; i++)
            w += (size_t)snprintf(want + w, sizeof want - w, "%s%s", i ? ", " : "", columns[i]);
        return as_fail(
            st, AS_EINVAL,
            "%s:%d:%d: short row: %d field%s before the trailing comma, expected "
            "%d (%s%s)",
            l->source, l->line, l->end_col, l->n_fields, l->n_fields == 1 ? "" : "s", n_min, want,
            columns == conv_columns ? ", and optionally the stride along the width" : "");
    }
    if (l->n_fields > n_max)
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: too many fields: %d before the trailing comma, at most %d",
                       l->source, l->line, l->field[n_max].col, l->n_fields, n_max);
    return AS_OK;
}

/* Whether a layer name marks a depthwise layer: SCALE-Sim's test is the
 * substring "DP", letter case as written. */
static bool marks_depthwise(const topo_field *name)
{
    for (size_t i = 0; i + 1 < name->len; i++)
        if (name->text[i] == 'D' && name->text[i + 1] == 'P')
            return true;
    return false;
}

/* A conv row into *out (SCALE-Sim's append_topo_arrays: one stride is
 * both; a name containing "DP" is depthwise). */
static as_code read_conv_row(topo_line *l, topo_layer *out, as_status *st)
{
    if (check_row_shape(l, 8, 9, conv_columns, st))
        return st->code;
    int64_t *v[] = {&out->ifmap_h,  &out->ifmap_w, &out->filter_h, &out->filter_w,
                    &out->channels, &out->filters, &out->stride_h, &out->stride_w};
    for (int i = 1; i < l->n_fields; i++)
        if (read_count(l, i, conv_columns[i], v[i - 1], st))
            return st->code;
    if (l->n_fields == 8)
        out->stride_w = out->stride_h;
    if (out->filter_h > out->ifmap_h || out->filter_w > out->ifmap_w) {
        int i = out->filter_h > out->ifmap_h ? 3 : 4;
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: the filter (%lld x %lld) is larger than the IFMAP (%lld x %lld); "
                       "SCALE-Sim applies no padding, so enter the padded IFMAP",
                       l->source, l->line, l->field[i].col, (long long)out->filter_h,
                       (long long)out->filter_w, (long long)out->ifmap_h, (long long)out->ifmap_w);
    }
    out->depthwise = marks_depthwise(&l->field[0]);
    return AS_OK;
}

/* A GEMM row into *out in SCALE-Sim's conv form (load_arrays_gemm:
 * IFMAP M x K, filter 1 x K, one channel, N filters, stride 1); fields
 * after K are ignored, as SCALE-Sim ignores them. */
static as_code read_gemm_row(topo_line *l, topo_layer *out, as_status *st)
{
    if (check_row_shape(l, 4, TOPO_LINE_FIELDS - 1, gemm_columns, st))
        return st->code;
    int64_t m, n, k;
    if (read_count(l, 1, "M", &m, st) || read_count(l, 2, "N", &n, st) ||
        read_count(l, 3, "K", &k, st))
        return st->code;
    out->gemm = true;
    out->ifmap_h = m;
    out->ifmap_w = k;
    out->filter_h = 1;
    out->filter_w = k;
    out->channels = 1;
    out->filters = n;
    out->stride_h = out->stride_w = 1;
    return AS_OK;
}

/* ------------------------------------------------------------ building */

/* SCALE-Sim's output size along one axis (topo_calc_hyperparams). */
static int64_t out_size(int64_t in, int64_t filter, int64_t stride)
{
    return (in - filter + stride - 1) / stride + 1;
}

/* Output channels of a layer: a depthwise layer runs Num Filter filters
 * over each of its channels. */
static int64_t out_channels(const topo_layer *L)
{
    return L->depthwise ? L->channels * L->filters : L->filters;
}

/* A name for layer L's tensor `what` ("Conv1.weight"), made unique with
 * the line number when another layer has the same name. */
static const char *tensor_name(wl_graph *g, const topo_layer *L, const char *what)
{
    const char *name = as_arena_printf(&g->arena, "%s.%s", L->name, what);
    if (name && wl_find_tensor(g, name) >= 0)
        name = as_arena_printf(&g->arena, "%s@%d.%s", L->name, L->line, what);
    return name;
}

/* The shape of the tensor layer L reads (its rank into *rank). */
static void input_shape(const topo_layer *L, int *rank, int64_t dims[4])
{
    if (L->gemm) {
        *rank = 2;
        dims[0] = L->ifmap_h;
        dims[1] = L->ifmap_w;
    } else {
        *rank = 4;
        dims[0] = 1;
        dims[1] = L->channels;
        dims[2] = L->ifmap_h;
        dims[3] = L->ifmap_w;
    }
}

/* The shape of the tensor layer L writes. */
static void output_shape(const topo_layer *L, int *rank, int64_t dims[4])
{
    if (L->gemm) {
        *rank = 2;
        dims[0] = L->ifmap_h;
        dims[1] = L->filters;
    } else {
        *rank = 4;
        dims[0] = 1;
        dims[1] = out_channels(L);
        dims[2] = out_size(L->ifmap_h, L->filter_h, L->stride_h);
        dims[3] = out_size(L->ifmap_w, L->filter_w, L->stride_w);
    }
}

/* Whether layer L reads exactly what prev writes (the rule that chains
 * rows; docs/scalesim-import.md). */
static bool chains(const topo_layer *prev, const topo_layer *L)
{
    int64_t a[4], b[4];
    int ra, rb;
    if (!prev || prev->gemm != L->gemm)
        return false;
    output_shape(prev, &ra, a);
    input_shape(L, &rb, b);
    return ra == rb && memcmp(a, b, (size_t)ra * sizeof a[0]) == 0;
}

/* Add layer L's op to g, reading `input` (-1: a graph input of its own);
 * its output tensor into *output. */
static as_code add_layer(wl_graph *g, const topo_layer *L, int32_t input, int32_t *output,
                         as_status *st)
{
    int rank;
    int64_t dims[4];
    if (input < 0) {
        input_shape(L, &rank, dims);
        input = wl_add_tensor(g, tensor_name(g, L, "input"), WL_TENSOR_INPUT, WL_DTYPE_F32, rank,
                              dims, st);
        if (input < 0)
            return st->code;
        if (!wl_add_graph_input(g, input))
            return as_fail(st, AS_ENOMEM, "%s: out of memory", g->source);
    }
    wl_attrs attrs;
    wl_op_kind kind = L->gemm ? WL_OP_MATMUL : WL_OP_CONV;
    wl_attrs_default(&attrs, kind);
    if (L->gemm) {
        rank = 2;
        dims[0] = L->filter_w; /* K */
        dims[1] = L->filters;  /* N */
    } else {
        int64_t e = out_size(L->ifmap_h, L->filter_h, L->stride_h);
        int64_t f = out_size(L->ifmap_w, L->filter_w, L->stride_w);
        attrs.n_spatial = 2;
        attrs.kernel_shape[0] = L->filter_h;
        attrs.kernel_shape[1] = L->filter_w;
        attrs.strides[0] = L->stride_h;
        attrs.strides[1] = L->stride_w;
        /* the ceiling rule's last window hangs past the edge: zero padding */
        attrs.pads[2] = (e - 1) * L->stride_h + L->filter_h - L->ifmap_h;
        attrs.pads[3] = (f - 1) * L->stride_w + L->filter_w - L->ifmap_w;
        attrs.group = L->depthwise ? L->channels : 1;
        rank = 4;
        dims[0] = out_channels(L);
        dims[1] = L->depthwise ? 1 : L->channels;
        dims[2] = L->filter_h;
        dims[3] = L->filter_w;
    }
    int32_t weight = wl_add_tensor(g, tensor_name(g, L, "weight"), WL_TENSOR_WEIGHT, WL_DTYPE_F32,
                                   rank, dims, st);
    if (weight < 0)
        return st->code;
    int32_t out = wl_add_tensor(g, tensor_name(g, L, "output"), WL_TENSOR_ACTIVATION, WL_DTYPE_F32,
                                0, NULL, st);
    int32_t in[2] = {input, weight};
    if (out < 0 ||
        wl_add_op(g, kind, L->name, wl_op_kind_name(kind), 2, in, 1, &out, &attrs, st) < 0)
        return st->code;
    *output = out;
    return AS_OK;
}

/* Whether the product of the n factors is at most max. */
static bool product_within(const int64_t *factors, int n, int64_t max)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (!as_mul_i64(p, factors[i], &p) || p > max)
            return false;
    return true;
}

/* Refuse a layer whose tensors or MACs are beyond what we count in int64
 * with room to spare (TOPO_MAX_ELEMENTS, TOPO_MAX_MACS). */
static as_code check_size(const char *source, const topo_layer *L, as_status *st)
{
    int rank_in, rank_out;
    int64_t in[4], out[4];
    input_shape(L, &rank_in, in);
    output_shape(L, &rank_out, out);
    int64_t window[3] = {L->filter_h, L->filter_w, L->depthwise ? 1 : L->channels};
    int64_t macs[7] = {
        out[0],    out[1],   rank_out > 2 ? out[2] : 1, rank_out > 2 ? out[3] : 1, window[0],
        window[1], window[2]};
    int64_t weight[4] = {out_channels(L), window[0], window[1], window[2]};
    if (product_within(in, rank_in, TOPO_MAX_ELEMENTS) &&
        product_within(out, rank_out, TOPO_MAX_ELEMENTS) &&
        product_within(weight, 4, TOPO_MAX_ELEMENTS) && product_within(macs, 7, TOPO_MAX_MACS))
        return AS_OK;
    return as_fail(st, AS_EINVAL,
                   "%s:%d:1: layer '%s' is too large (over 2^40 elements in a tensor or 2^50 MACs)",
                   source, L->line, L->name);
}

/* Build g's ops from the layers, chaining rows that read what the row
 * before wrote, and mark the outputs no row reads. */
static as_code build_graph(wl_graph *g, const topo_layer *layers, int n, as_status *st)
{
    int32_t prev_out = -1;
    for (int i = 0; i < n; i++) {
        bool chained = i > 0 && chains(&layers[i - 1], &layers[i]);
        if (i > 0 && !chained && !wl_add_graph_output(g, prev_out))
            return as_fail(st, AS_ENOMEM, "%s: out of memory", g->source);
        if (check_size(g->source, &layers[i], st) ||
            add_layer(g, &layers[i], chained ? prev_out : -1, &prev_out, st))
            return st->code;
    }
    if (!wl_add_graph_output(g, prev_out))
        return as_fail(st, AS_ENOMEM, "%s: out of memory", g->source);
    if (wl_graph_infer(g, st))
        return st->code;
    wl_set_storage_precision(g, WL_PREC_INT8); /* SCALE-Sim's words are one byte */
    return AS_OK;
}

/* Read the header and every row of text into *layers (malloc'd) and *n. */
static as_code read_layers(const char *text, size_t size, wl_graph *g, topo_layer **layers, int *n,
                           as_status *st)
{
    topo_line l = {.source = g->source};
    bool header_seen = false, gemm = false;
    int64_t cap = 0;
    *layers = NULL;
    *n = 0;
    size_t at = size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0; /* a UTF-8 BOM */
    while (at < size) {
        const char *p = text + at;
        const char *nl = memchr(p, '\n', size - at);
        size_t len = nl ? (size_t)(nl - p) : size - at;
        at += len + 1;
        l.line++;
        if (blank_line(p, len))
            continue;
        split_line(p, len, &l);
        if (!header_seen) {
            header_seen = true;
            if (read_header(&l, &gemm, st))
                return st->code;
            continue;
        }
        if (!as_vec_reserve((void **)layers, &cap, *n + 1, sizeof **layers))
            return as_fail(st, AS_ENOMEM, "%s: out of memory", g->source);
        topo_layer *L = &(*layers)[*n];
        memset(L, 0, sizeof *L);
        L->line = l.line;
        if (gemm ? read_gemm_row(&l, L, st) : read_conv_row(&l, L, st))
            return st->code;
        if (l.field[0].len == 0)
            return as_fail(st, AS_EINVAL, "%s:%d:%d: the layer has no name", l.source, l.line,
                           l.field[0].col);
        L->name = as_arena_printf(&g->arena, "%.*s", (int)l.field[0].len, l.field[0].text);
        if (!L->name)
            return as_fail(st, AS_ENOMEM, "%s: out of memory", g->source);
        (*n)++;
    }
    if (!header_seen)
        return as_fail(st, AS_EINVAL, "%s:1:1: empty topology: no header line", g->source);
    if (*n == 0)
        return as_fail(st, AS_EINVAL, "%s:%d:1: no layers after the header", g->source, l.line);
    return AS_OK;
}

/* The model's name: the file's base name without ".csv", as SCALE-Sim
 * names its run's topology. */
static const char *model_name(wl_graph *g, const char *display_name)
{
    const char *base = strrchr(display_name, '/');
    base = base ? base + 1 : display_name;
    size_t n = strlen(base);
    if (n > 4 && wl_is_topology_path(base))
        n -= 4;
    return as_arena_printf(&g->arena, "%.*s", (int)(n < 256 ? n : 256), base);
}

as_code wl_topology_parse(const char *text, size_t size, const char *display_name, wl_graph **out,
                          as_status *st)
{
    *out = NULL;
    wl_graph *g = wl_graph_new("", display_name);
    if (!g)
        return as_fail(st, AS_ENOMEM, "%s: out of memory", display_name);
    g->name = model_name(g, display_name);
    g->opset = 13;
    topo_layer *layers = NULL;
    int n = 0;
    as_code rc = read_layers(text, size, g, &layers, &n, st);
    if (rc == AS_OK)
        rc = build_graph(g, layers, n, st);
    free(layers);
    if (rc != AS_OK) {
        wl_graph_free(g);
        return rc;
    }
    *out = g;
    return AS_OK;
}

as_code wl_topology_load(const char *path, wl_graph **out, as_status *st)
{
    size_t size = 0;
    *out = NULL;
    uint8_t *text = as_read_file(path, &size, st);
    if (!text)
        return st->code;
    as_code rc = wl_topology_parse((const char *)text, size, path, out, st);
    free(text);
    return rc;
}

bool wl_is_topology_path(const char *path)
{
    return as_path_has_extension(path, ".csv");
}
