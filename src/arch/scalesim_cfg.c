/*
 * scalesim_cfg.c -- a SCALE-Sim configuration (.cfg) as an arch_spec
 * (docs/scalesim-import.md).
 *
 * SCALE-Sim v2 (scalesim/scale_config.py) reads an INI file with Python's
 * configparser: [sections], `key = value` or `key: value`, keys in any
 * letter case, `#` and `;` comment lines.  What it describes is one
 * systolic array of ArrayHeight x ArrayWidth one-byte MACs with a
 * dataflow (os, ws, is), fed by three double-buffered SRAMs (IFMAP,
 * FILTER, OFMAP; "kB" = 1024 one-byte words, single_layer_sim.py) over a
 * DRAM.  InterfaceBandwidth = CALC (estimate mode) never stalls: the DRAM
 * delivers whatever is asked.  USER gives each of the three SRAMs a DRAM
 * interface of `Bandwidth` words per cycle (the first of a comma list).
 *
 * What we build (model assumptions, as the presets state theirs):
 *   level 0  "SRAM": one buffer split per data space (Inputs = IFMAP,
 *            Weights = FILTER, Outputs = OFMAP words), 8-bit words,
 *            double buffered (multiple_buffering 2: SCALE-Sim's read
 *            buffers keep half active, half prefetching), one vector
 *            access = one line of the array's wider side; ports as the
 *            presets' (arch_finish): each data space's port feeds the
 *            array at full rate, so the SRAM never stalls it, as in CALC;
 *   level 1  "DRAM": LPDDR4 energies (the type assumed where a design
 *            publishes none); CALC: unlimited bandwidth; USER: the three
 *            interfaces pooled, 3 x Bandwidth words per cycle;
 *   compute  one systolic array, int8 MACs, the dataflow as given;
 * at 45 nm (the energy tables' own node: SCALE-Sim models no energy) and
 * 1 GHz (SCALE-Sim counts cycles only; the clock only turns them into
 * seconds).  Keys SCALE-Sim reads that our model has no use for (address
 * offsets, memory banks, request buffers, the topology's path, v3's layout
 * section) are accepted and ignored; unknown keys and sections are errors.
 */
#include "arch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { CFG_MAX_ENTRIES = 64, CFG_TEXT_BYTES = 128 };

#define CFG_NODE_NM 45
#define CFG_CLOCK_HZ 1e9
#define CFG_DRAM_TYPE "LPDDR4"
#define CFG_DRAM_BUS_BITS 64
#define CFG_WORD_BITS 8
#define CFG_MAX_VALUE (INT64_C(1) << 20)

/* One `key = value` of the file, keys lower-cased as configparser does. */
typedef struct cfg_entry {
    char section[CFG_TEXT_BYTES];
    char key[CFG_TEXT_BYTES];
    char value[CFG_TEXT_BYTES];
    int line, col; /* where the value starts */
    bool used;
} cfg_entry;

typedef struct cfg_file {
    const char *source;
    int n;
    cfg_entry entry[CFG_MAX_ENTRIES];
} cfg_file;

/* The sections and keys we know: read, or accepted and ignored (NULL key:
 * every key of that section). */
typedef struct cfg_known {
    const char *section, *key;
    bool ignored;
} cfg_known;

static const cfg_known known_keys[] = {
    {"general", "run_name", false},
    {"run_presets", "interfacebandwidth", false},
    {"run_presets", "useramulatortrace", true}, /* v3: DRAM traces from Ramulator */
    {"architecture_presets", "arrayheight", false},
    {"architecture_presets", "arraywidth", false},
    {"architecture_presets", "ifmapsramszkb", false},
    {"architecture_presets", "filtersramszkb", false},
    {"architecture_presets", "ofmapsramszkb", false},
    {"architecture_presets", "dataflow", false},
    {"architecture_presets", "bandwidth", false},
    {"architecture_presets", "ifmapoffset", true}, /* addresses in its traces */
    {"architecture_presets", "filteroffset", true},
    {"architecture_presets", "ofmapoffset", true},
    {"architecture_presets", "memorybanks", true},
    {"architecture_presets", "readrequestbuffer", true}, /* v3 */
    {"architecture_presets", "writerequestbuffer", true},
    {"network_presets", "topologycsvloc", true}, /* the workload comes with --model */
    {"layout", NULL, true},                      /* v3: SRAM bank layouts */
    {"sparsity", "sparsitysupport", false},      /* v3: refused when true */
    {"sparsity", NULL, true},
};

/* ------------------------------------------------------------- reading */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Copy [p, p + n) lower-cased (keys) or as is into dst; false when it
 * does not fit. */
static bool copy_text(char *dst, const char *p, size_t n, bool lower)
{
    if (n >= CFG_TEXT_BYTES)
        return false;
    for (size_t i = 0; i < n; i++)
        dst[i] = lower ? (char)tolower((unsigned char)p[i]) : p[i];
    dst[n] = '\0';
    return true;
}

/* Whether a and b are equal, letter case aside. */
static bool same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/* The known-key row of section/key, or NULL. */
static const cfg_known *find_known(const char *section, const char *key)
{
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
        if (!strcmp(known_keys[i].section, section) &&
            (!known_keys[i].key || !strcmp(known_keys[i].key, key)))
            return &known_keys[i];
    return NULL;
}

static bool known_section(const char *section)
{
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
        if (!strcmp(known_keys[i].section, section))
            return true;
    return false;
}

/* One line [p, p + n) (no newline, blanks trimmed at both ends, starting
 * at column col) into f: a section header or an entry. */
static as_code read_line(cfg_file *f, char *section, int line, int col, const char *p, size_t n,
                         as_status *st)
{
    if (p[0] == '[') {
        if (p[n - 1] != ']' || !copy_text(section, p + 1, n - 2, false))
            return as_fail(st, AS_EINVAL, "%s:%d:%d: a section header is [name]", f->source, line,
                           col);
        if (!known_section(section))
            return as_fail(st, AS_EINVAL,
                           "%s:%d:%d: unknown section [%s] (SCALE-Sim's are [general], "
                           "[architecture_presets], [run_presets], [network_presets]; v3 adds "
                           "[layout], [sparsity])",
                           f->source, line, col, section);
        return AS_OK;
    }
    size_t sep = 0;
    while (sep < n && p[sep] != '=' && p[sep] != ':')
        sep++;
    if (sep == n)
        return as_fail(st, AS_EINVAL, "%s:%d:%d: expected 'key = value' or 'key: value'", f->source,
                       line, col);
    if (!section[0])
        return as_fail(st, AS_EINVAL, "%s:%d:%d: a key before any [section]", f->source, line, col);
    size_t kn = sep, v = sep + 1;
    while (kn > 0 && is_blank(p[kn - 1]))
        kn--;
    while (v < n && is_blank(p[v]))
        v++;
    if (f->n == CFG_MAX_ENTRIES)
        return as_fail(st, AS_EINVAL, "%s:%d:%d: more than %d keys", f->source, line, col,
                       CFG_MAX_ENTRIES);
    cfg_entry *e = &f->entry[f->n];
    memset(e, 0, sizeof *e);
    strcpy(e->section, section);
    e->line = line;
    e->col = col + (int)v;
    if (kn == 0 || !copy_text(e->key, p, kn, true) || !copy_text(e->value, p + v, n - v, false))
        return as_fail(st, AS_EINVAL, "%s:%d:%d: empty key, or a key or value over %d characters",
                       f->source, line, col, CFG_TEXT_BYTES - 1);
    const cfg_known *k = find_known(section, e->key);
    if (!k)
        return as_fail(st, AS_EINVAL, "%s:%d:%d: [%s] %.*s: unknown key", f->source, line, col,
                       section, (int)kn, p);
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->entry[i].section, section) && !strcmp(f->entry[i].key, e->key))
            return as_fail(st, AS_EINVAL, "%s:%d:%d: [%s] %.*s given twice (first on line %d)",
                           f->source, line, col, section, (int)kn, p, f->entry[i].line);
    if (!k->ignored)
        f->n++;
    return AS_OK;
}

/* Every line of text into f; comment and blank lines skipped. */
static as_code read_cfg(const char *text, size_t size, cfg_file *f, as_status *st)
{
    char section[CFG_TEXT_BYTES] = "";
    int line = 0;
    size_t at = size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0; /* a UTF-8 BOM */
    while (at < size) {
        const char *p = text + at;
        const char *nl = memchr(p, '\n', size - at);
        size_t n = nl ? (size_t)(nl - p) : size - at;
        at += n + 1;
        line++;
        size_t a = 0;
        while (a < n && is_blank(p[a]))
            a++;
        while (n > a && is_blank(p[n - 1]))
            n--;
        if (a == n || p[a] == '#' || p[a] == ';')
            continue;
        if (read_line(f, section, line, (int)a + 1, p + a, n - a, st))
            return st->code;
    }
    return AS_OK;
}

/* --------------------------------------------------------------- values */

/* The entry of section/key, or NULL (required: an error naming it). */
static const cfg_entry *get(cfg_file *f, const char *section, const char *key, const char *spelt,
                            bool required, as_status *st)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->entry[i].section, section) && !strcmp(f->entry[i].key, key))
            return &f->entry[i];
    if (required)
        as_fail(st, AS_EINVAL, "%s: [%s] %s: missing (SCALE-Sim requires it)", f->source, section,
                spelt);
    return NULL;
}

/* A positive decimal integer (at most CFG_MAX_VALUE) from text into *out. */
static bool parse_count(const char *text, int64_t *out)
{
    int64_t v = 0;
    if (!*text)
        return false;
    for (const char *c = text; *c; c++) {
        if (!isdigit((unsigned char)*c) || v > CFG_MAX_VALUE)
            return false;
        v = v * 10 + (*c - '0');
    }
    if (v < 1 || v > CFG_MAX_VALUE)
        return false;
    *out = v;
    return true;
}

/* [section] key (spelt as SCALE-Sim's files spell it) as a positive integer. */
static as_code get_count(cfg_file *f, const char *section, const char *spelt, int64_t *out,
                         as_status *st)
{
    char key[CFG_TEXT_BYTES];
    copy_text(key, spelt, strlen(spelt), true);
    const cfg_entry *e = get(f, section, key, spelt, true, st);
    if (!e)
        return st->code;
    if (!parse_count(e->value, out))
        return as_fail(
            st, AS_EINVAL, "%s:%d:%d: [%s] %s is '%s', not a positive integer (at most %lld)",
            f->source, e->line, e->col, section, spelt, e->value, (long long)CFG_MAX_VALUE);
    return AS_OK;
}

/* [section] key as one of the NULL-terminated names (letter case aside):
 * its index into *out. */
static as_code get_choice(cfg_file *f, const char *section, const char *spelt,
                          const char *const *names, int *out, as_status *st)
{
    char key[CFG_TEXT_BYTES], list[CFG_TEXT_BYTES] = "";
    copy_text(key, spelt, strlen(spelt), true);
    const cfg_entry *e = get(f, section, key, spelt, true, st);
    if (!e)
        return st->code;
    for (int i = 0; names[i]; i++) {
        if (same_word(e->value, names[i])) {
            *out = i;
            return AS_OK;
        }
        size_t w = strlen(list);
        snprintf(list + w, sizeof list - w, "%s%s", i ? ", " : "", names[i]);
    }
    return as_fail(st, AS_EINVAL, "%s:%d:%d: [%s] %s is '%s', not one of %s", f->source, e->line,
                   e->col, section, spelt, e->value, list);
}

/* What the file states, in SCALE-Sim's terms. */
typedef struct cfg_values {
    const char *run_name;
    int64_t rows, cols, ifmap_kB, filter_kB, ofmap_kB;
    int dataflow;      /* arch_dataflow */
    bool user;         /* InterfaceBandwidth = USER */
    int64_t bandwidth; /* words per cycle per SRAM, USER only */
} cfg_values;

/* The first number of USER mode's Bandwidth list (SCALE-Sim uses bws[0]
 * for all three SRAMs). */
static as_code get_bandwidth(cfg_file *f, int64_t *out, as_status *st)
{
    const cfg_entry *e = get(f, "architecture_presets", "bandwidth", "Bandwidth", true, st);
    if (!e)
        return st->code;
    char first[CFG_TEXT_BYTES];
    size_t n = strcspn(e->value, ",");
    while (n > 0 && is_blank(e->value[n - 1]))
        n--;
    copy_text(first, e->value, n, false);
    if (!parse_count(first, out))
        return as_fail(st, AS_EINVAL,
                       "%s:%d:%d: [architecture_presets] Bandwidth is '%s', not a positive "
                       "integer (words per cycle) or a list of them",
                       f->source, e->line, e->col, e->value);
    return AS_OK;
}

/* Read what SCALE-Sim reads from f into *v. */
static as_code read_values(cfg_file *f, cfg_values *v, as_status *st)
{
    static const char *const modes[] = {"CALC", "USER", NULL};
    static const char *const dataflows[] = {"os", "ws", "is", NULL}; /* arch_dataflow's order */
    static const char *const falsity[] = {"false", "true", NULL};
    const char *arch = "architecture_presets";
    const cfg_entry *name = get(f, "general", "run_name", "run_name", true, st);
    int mode = 0, sparse = 0;
    if (!name || get_choice(f, "run_presets", "InterfaceBandwidth", modes, &mode, st) ||
        get_count(f, arch, "ArrayHeight", &v->rows, st) ||
        get_count(f, arch, "ArrayWidth", &v->cols, st) ||
        get_count(f, arch, "IfmapSramSzkB", &v->ifmap_kB, st) ||
        get_count(f, arch, "FilterSramSzkB", &v->filter_kB, st) ||
        get_count(f, arch, "OfmapSramSzkB", &v->ofmap_kB, st) ||
        get_choice(f, arch, "Dataflow", dataflows, &v->dataflow, st))
        return st->code;
    v->run_name = name->value;
    if (strlen(v->run_name) >= ARCH_NAME_BYTES || !v->run_name[0])
        return as_fail(st, AS_EINVAL, "%s:%d:%d: [general] run_name must be 1 to %d characters",
                       f->source, name->line, name->col, ARCH_NAME_BYTES - 1);
    v->user = mode == 1;
    if (v->user && get_bandwidth(f, &v->bandwidth, st))
        return st->code;
    if (get(f, "sparsity", "sparsitysupport", "SparsitySupport", false, st) &&
        get_choice(f, "sparsity", "SparsitySupport", falsity, &sparse, st))
        return st->code;
    if (sparse)
        return as_fail(st, AS_EINVAL,
                       "%s: [sparsity] SparsitySupport = true: SCALE-Sim v3's structured sparsity "
                       "is not imported (docs/sparse.md states the formats accelsearch models)",
                       f->source);
    return AS_OK;
}

/* ------------------------------------------------------------- building */

/* The design of what v states (the mapping is stated at the top). */
static void build(const cfg_values *v, arch_spec *a)
{
    arch_begin(a, v->run_name, CFG_NODE_NM, CFG_CLOCK_HZ);
    int64_t wide = v->rows > v->cols ? v->rows : v->cols;
    arch_add_level(a, (arch_level){.name = "SRAM",
                                   .cls = ARCH_CLASS_SRAM,
                                   .word_bits = CFG_WORD_BITS,
                                   .block_size = (int)wide,
                                   .mesh_x = 1,
                                   .mesh_y = 1,
                                   .size_words_by_ds = {[WL_DS_WEIGHTS] = v->filter_kB * 1024,
                                                        [WL_DS_INPUTS] = v->ifmap_kB * 1024,
                                                        [WL_DS_OUTPUTS] = v->ofmap_kB * 1024}});
    a->level[0].multiple_buffering = 2;
    /* CALC: no stalls, no bandwidth; USER: three interfaces of Bandwidth
     * one-byte words per cycle, pooled. */
    double GBps =
        v->user ? 3.0 * (double)v->bandwidth * CFG_WORD_BITS / 8 * CFG_CLOCK_HZ * 1e-9 : 0;
    arch_add_dram(a, CFG_DRAM_TYPE, v->user ? 3 : 1, GBps, CFG_DRAM_BUS_BITS, CFG_WORD_BITS);
    arch_finish(a, (arch_compute){.name = "array",
                                  .kind = ARCH_COMPUTE_SYSTOLIC,
                                  .mesh_x = 1,
                                  .mesh_y = 1,
                                  .rows = (int)v->rows,
                                  .cols = (int)v->cols,
                                  .mac_bits = CFG_WORD_BITS,
                                  .dataflow = (arch_dataflow)v->dataflow});
}

as_code arch_scalesim_parse(const char *text, size_t size, const char *display_name, arch_spec *out,
                            as_status *st)
{
    cfg_file *f = calloc(1, sizeof *f);
    if (!f)
        return as_fail(st, AS_ENOMEM, "%s: out of memory", display_name);
    f->source = display_name;
    cfg_values v = {0};
    as_code rc = read_cfg(text, size, f, st);
    if (rc == AS_OK)
        rc = read_values(f, &v, st);
    if (rc == AS_OK) {
        arch_spec a;
        build(&v, &a);
        as_status why;
        as_status_clear(&why);
        if (arch_validate(&a, &why))
            rc = as_fail(st, why.code, "%s: %s", display_name, why.message);
        else
            *out = a;
    }
    free(f);
    return rc;
}

as_code arch_scalesim_load(const char *path, arch_spec *out, as_status *st)
{
    size_t size = 0;
    uint8_t *text = as_read_file(path, &size, st);
    if (!text)
        return st->code;
    as_code rc = arch_scalesim_parse((const char *)text, size, path, out, st);
    free(text);
    return rc;
}

bool arch_is_scalesim_path(const char *path)
{
    return as_path_has_extension(path, ".cfg");
}
