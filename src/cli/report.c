/*
 * report.c -- how the CLI shows evaluations and mappings, shared by
 * `eval` and `map`: a table like Timeloop's summary, a loop nest like its
 * map.txt, and the same figures as JSON members; and a co-design run's
 * hypervolume curve, shared by `search` and `runs show`.
 */
#include "cli.h"

#include <string.h>

static const char *const dataspace_names[WL_NDATASPACES] = {"Weights", "Inputs", "Outputs"};

void cli_print_eval(const arch_spec *a, const map_eval *e)
{
    printf("%-22s %-8s %10s %14s %14s %14s %12s %12s\n", "level", "space", "instances", "reads",
           "fills", "updates", "tile words", "energy");
    for (int i = 0; i < e->n_levels; i++) {
        const map_level_stats *l = &e->level[i];
        for (int d = 0; d < WL_NDATASPACES; d++) {
            if (!l->keeps[d])
                continue;
            const map_ds_stats *s = &l->ds[d];
            printf("%-22s %-8s %10lld %14lld %14lld %14lld %12lld %12s\n", a->level[i].name,
                   dataspace_names[d], (long long)s->utilized_instances, (long long)s->reads,
                   (long long)s->fills, (long long)s->updates, (long long)s->tile_words,
                   CLI_ENG(s->energy_pJ * 1e-12, "J"));
        }
    }
    printf("\n%-16s %lld\n", "MACs", (long long)e->macs);
    printf("%-16s %lld\n", "cycles", (long long)e->cycles);
    printf("%-16s %s (%s)\n", "energy", CLI_ENG(e->energy_pJ * 1e-12, "J"),
           CLI_ENG(e->macs ? e->energy_pJ * 1e-12 / (double)e->macs : 0.0, "J/MAC"));
    printf("%-16s %s\n", "utilization", CLI_NUM(100.0 * e->utilization, "%"));
    printf("%-16s %s\n", "EDP", CLI_ENG(e->edp_J_cycle * a->cycle_seconds, "J*s"));
}

/* The columns of cli_csv_eval. */
static const char *const eval_csv_columns[] = {"level",      "data_space", "instances",
                                               "reads",      "fills",      "updates",
                                               "tile_words", "energy_pJ",  NULL};

void cli_csv_eval(cli_csv *c, const arch_spec *a, const map_eval *e)
{
    cli_csv_header(c, eval_csv_columns);
    for (int i = 0; i < e->n_levels; i++) {
        const map_level_stats *l = &e->level[i];
        for (int d = 0; d < WL_NDATASPACES; d++) {
            if (!l->keeps[d])
                continue;
            const map_ds_stats *s = &l->ds[d];
            cli_csv_string(c, a->level[i].name);
            cli_csv_string(c, dataspace_names[d]);
            cli_csv_int(c, s->utilized_instances);
            cli_csv_int(c, s->reads);
            cli_csv_int(c, s->fills);
            cli_csv_int(c, s->updates);
            cli_csv_int(c, s->tile_words);
            cli_csv_double(c, s->energy_pJ);
            cli_csv_end_row(c);
        }
    }
}

void cli_json_eval_members(cli_json *j, const arch_spec *a, const map_eval *e)
{
    cli_json_string_field(j, "status", map_validity_name(e->validity));
    if (e->validity != MAP_VALID)
        cli_json_string_field(j, "reason", e->reason);
    cli_json_int_field(j, "macs", e->macs);
    cli_json_int_field(j, "cycles", e->cycles);
    cli_json_double_field(j, "energy_pJ", e->energy_pJ);
    cli_json_double_field(j, "utilization", e->utilization);
    cli_json_double_field(j, "edp_J_cycle", e->edp_J_cycle);
    cli_json_key(j, "levels");
    cli_json_begin_array(j);
    for (int i = 0; i < e->n_levels; i++) {
        const map_level_stats *l = &e->level[i];
        cli_json_begin_object(j);
        cli_json_string_field(j, "name", a->level[i].name);
        cli_json_int_field(j, "instances_utilized", l->utilized_instances);
        cli_json_double_field(j, "energy_pJ", l->energy_pJ);
        for (int d = 0; d < WL_NDATASPACES; d++) {
            if (!l->keeps[d])
                continue;
            const map_ds_stats *s = &l->ds[d];
            cli_json_key(j, dataspace_names[d]);
            cli_json_begin_object(j);
            cli_json_int_field(j, "reads", s->reads);
            cli_json_int_field(j, "fills", s->fills);
            cli_json_int_field(j, "updates", s->updates);
            cli_json_int_field(j, "tile_words", s->tile_words);
            cli_json_double_field(j, "energy_pJ", s->energy_pJ);
            cli_json_end_object(j);
        }
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}

/* Name of dimension slot d: the problem's own when it has one. */
static const char *dim_label(const char (*dim_names)[16], int d)
{
    return dim_names && dim_names[d][0] ? dim_names[d] : wl_dim_name((wl_dim)d);
}

void cli_print_mapping(const arch_spec *a, const char (*dim_names)[16], const map_mapping *m)
{
    /* Outermost level first, each level's loops outermost first, as
     * Timeloop's map.txt reads. */
    int depth = 0;
    for (int l = m->n_levels - 1; l >= 0; l--) {
        const map_level *ml = &m->level[l];
        printf("%*s%s  [keeps", 2 * depth, "", a->level[l].name);
        for (int d = 0; d < WL_NDATASPACES; d++)
            if (ml->keep[d])
                printf(" %s", dataspace_names[d]);
        printf("]\n");
        for (int k = WL_NDIMS - 1; k >= 0; k--) {
            int d = ml->temporal_order[k];
            if (ml->temporal[d] > 1)
                printf("%*sfor %s in [0:%lld)\n", 2 * depth + 2, "", dim_label(dim_names, d),
                       (long long)ml->temporal[d]);
        }
        for (int k = WL_NDIMS - 1; k >= 0; k--) {
            int d = ml->spatial_order[k];
            if (ml->spatial[d] > 1)
                printf("%*sspatial-for %s in [0:%lld) (%s)\n", 2 * depth + 2, "",
                       dim_label(dim_names, d), (long long)ml->spatial[d],
                       k < ml->spatial_split ? "X" : "Y");
        }
        depth++;
    }
    if (m->group_pack > 1)
        printf("%*sgroups side by side per array: %lld\n", 2 * depth, "", (long long)m->group_pack);
}

/* {"C": 4, "M": 16}: the factors above 1 of one kind of loop. */
static void json_factors(cli_json *j, const char *key, const char (*dim_names)[16],
                         const int64_t *factors, const uint8_t *order)
{
    cli_json_key(j, key);
    cli_json_begin_object(j);
    for (int k = 0; k < WL_NDIMS; k++)
        if (factors[order[k]] > 1)
            cli_json_int_field(j, dim_label(dim_names, order[k]), factors[order[k]]);
    cli_json_end_object(j);
}

void cli_json_mapping(cli_json *j, const arch_spec *a, const char (*dim_names)[16],
                      const map_mapping *m)
{
    cli_json_begin_array(j);
    for (int l = 0; l < m->n_levels; l++) {
        const map_level *ml = &m->level[l];
        cli_json_begin_object(j);
        cli_json_string_field(j, "level", a->level[l].name);
        json_factors(j, "temporal", dim_names, ml->temporal, ml->temporal_order);
        char order[WL_NDIMS * 16 + 1] = "";
        for (int k = 0; k < WL_NDIMS; k++)
            strcat(order, dim_label(dim_names, ml->temporal_order[k]));
        cli_json_string_field(j, "permutation", order);
        json_factors(j, "spatial", dim_names, ml->spatial, ml->spatial_order);
        cli_json_int_field(j, "split", ml->spatial_split);
        cli_json_key(j, "keep");
        cli_json_begin_array(j);
        for (int d = 0; d < WL_NDATASPACES; d++)
            if (ml->keep[d])
                cli_json_string(j, dataspace_names[d]);
        cli_json_end_array(j);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}

void cli_json_hypervolume_curve(cli_json *j, const int64_t *evaluations, const double *hypervolume,
                                int64_t n)
{
    cli_json_key(j, "hypervolume_curve");
    cli_json_begin_array(j);
    for (int64_t i = 0; i < n; i++) {
        cli_json_begin_object(j);
        cli_json_int_field(j, "evaluations", evaluations[i]);
        cli_json_double_field(j, "hypervolume", hypervolume[i]);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}
