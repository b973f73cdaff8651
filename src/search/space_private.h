/*
 * space_private.h -- what templates.c (the templates), space.c (points
 * and decoding) and space_yaml.c (the file format) share: each
 * template's parameter table, and the checks that both the file reader
 * (which names file, line and key) and se_space_finish (for spaces built
 * in code) apply, so that the two can never disagree about what a valid
 * space is.
 */
#ifndef AS_SPACE_PRIVATE_H
#define AS_SPACE_PRIVATE_H

#include "search.h"

/* What a template knows about one of its parameters. */
typedef struct se_template_param {
    se_param range;          /* as the built-in space has it: kind, range, stride, choices */
    int64_t lowest, highest; /* hard limits no file's range may leave */
    int64_t granule;         /* INT: min and stride (so every value) are multiples of it */
    int64_t deflt;           /* value when a space does not list it: the baseline design's
                                (ENUM: index into range.choice) */
    bool bytes;              /* a size in bytes: files may write "16 KiB" */
    const char *meaning;     /* one line with the unit, for saved files and messages */
} se_template_param;

/* A template: its parameters in their canonical order, and the settings
 * a space takes when its file does not say otherwise. */
typedef struct se_template_def {
    se_template kind;
    const char *name; /* in files: "edge", "datapath" */
    int technology_nm;
    double clock_hz;
    wl_precision precision;
    const char *baseline_name;
    int n_params;
    const se_template_param *param;
    /* The design of `value` (one per template parameter, in table order)
     * into a, and the budgets the template's setting imposes. */
    void (*build)(const se_space *s, const int64_t *value, arch_spec *a);
    void (*limits)(se_constraints *c);
} se_template_def;

/* The template of a space around a design (around.c): built in memory
 * only, never named by a file. */
extern const se_template_def se_around_template;
/* The content of design a hashed into d field by field (not its padding):
 * what se_space_digest records of an AROUND space's centre. */
uint64_t se_around_digest(const arch_spec *a, uint64_t d);

/* The template of kind (NULL for a value outside the enum), or by its
 * name in files (NULL when unknown; never the AROUND template). */
const se_template_def *se_template_get(se_template kind);
const se_template_def *se_template_find(const char *name);
/* Position of the parameter called name in t, or -1. */
int se_template_param_find(const se_template_def *t, const char *name);
/* "pe_x, pe_y, ..." into buf, for messages that list what is allowed. */
void se_template_param_names(const se_template_def *t, char *buf, size_t size);

/* The built-in space called name into *out (finished, source
 * "built-in"); false when there is none of that name. */
bool se_space_builtin(const char *name, se_space *out);

/* A space of template kind with everything but its parameters set to
 * the template's: node, clock, precision, constraints, fixed values and
 * baseline name (name "", no parameters). */
void se_space_init(se_space *s, se_template kind);

/*
 * What is wrong with p as a range of template parameter t (its name is
 * not looked at): the key at fault ("min", "max", "stride", "zero",
 * "choices") with a sentence into why, or NULL when p is fine.  p's
 * n_values is not read.
 */
const char *se_param_problem(const se_template_param *t, const se_param *p, char *why, size_t size);
/* Whether v is a value t can be fixed at; when not, why says so. */
bool se_fixed_value_ok(const se_template_param *t, int64_t v, char *why, size_t size);
/* Whether a space name (or baseline name) is usable: 1 .. SE_NAME_BYTES-1
 * characters of letters, digits and "_.+-" (so that files need no
 * quoting); when not, why says so. */
bool se_name_ok(const char *name, char *why, size_t size);
/* The number of values p takes (what se_space_finish stores in n_values),
 * for a p that se_param_problem accepts. */
int64_t se_param_count(const se_param *p);

#endif
