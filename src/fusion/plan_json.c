/*
 * plan_json.c -- a costed fusion plan as the JSON object that reports
 * draw and the run store keeps with each candidate (fusion.h,
 * fu_plan_json).  Every group is one object:
 *
 *   {"layers": ["conv1", "maxpool"], "cycles": 1347456, "latency_s": 0.0067,
 *    "energy_pJ": 5.7e8, "energy_by_component_pJ": [...], "dram_bytes": 844900,
 *    "macs": 118013952, "recomputed_macs": 0, "utilization": 0.52,
 *    "tiles": 49, "tile": [17, 17], "halo": "recompute", "onchip_bytes": 91234}
 *
 * energy_by_component_pJ splits energy_pJ into the parts the plan's
 * "components" names (map_energy_parts: MAC, each on-chip level, DRAM,
 * network and vector); an invalid group has "valid": false and its
 * "reason".  Every compute layer is one small object whose problem and
 * mapping are one line of text each (mapping.h, "mappings as text"):
 *
 *   {"group": 3, "layer": "layer1.0.conv1", "problem": "C64 M64 P8 Q56 R3 S3",
 *    "padded": "C64 M64 P8 Q56 R3 S3", "tiles": 7, "cycles": 1234,
 *    "energy_pJ": 5.6e6, "mapping": "DRAM[WIO] M2 | GlobalBuffer[IO] ..."}
 *
 * problem is what the layer was mapped on (the whole layer alone, its
 * largest tile in a fused group), padded the problem mapped when the
 * mapper padded it (absent otherwise), tiles the runs of the mapping per
 * batch, cycles and energy_pJ map_evaluate's for one run on the mapper's
 * view of the design (fu_evaluator_arch).  A layer without a valid
 * mapping has no padded, cycles, energy_pJ or mapping.
 */
#include "fusion_private.h"

#include <stdlib.h>
#include <string.h>

/* Room for one mapping line: ARCH_MAX_LEVELS levels of a name and up to
 * 2 x WL_NDIMS loops each. */
#define MAPPING_TEXT_BYTES (ARCH_MAX_LEVELS * (ARCH_NAME_BYTES + 8 + 2 * WL_NDIMS * 24) + 32)
#define BOUNDS_TEXT_BYTES (WL_NDIMS * 24)

const char *fu_halo_name(fu_halo_mode h)
{
    static const char *const names[] = {"recompute", "cache_rows", "cache_all"};
    return (unsigned)h < sizeof names / sizeof names[0] ? names[h] : "?";
}

/* One layer's object; NULL when out of memory or a text did not fit. */
static json_t *layer_json(const wl_graph *g, const arch_spec *a, const fu_layer_mapping *l,
                          char *text)
{
    char bounds[BOUNDS_TEXT_BYTES], padded[BOUNDS_TEXT_BYTES];
    json_t *o = json_object();
    bool ok = o && map_bounds_format(l->problem.bound, bounds, sizeof bounds) &&
              as_json_put(o, "group", json_integer(l->group)) &&
              as_json_put(o, "layer", as_json_string(g->ops[l->op].name)) &&
              as_json_put(o, "problem", as_json_string(bounds)) &&
              as_json_put(o, "tiles", json_integer(l->n_tiles));
    if (ok && l->found) {
        bool was_padded = memcmp(l->mapped.bound, l->problem.bound, sizeof l->problem.bound) != 0;
        ok = (!was_padded || (map_bounds_format(l->mapped.bound, padded, sizeof padded) &&
                              as_json_put(o, "padded", as_json_string(padded)))) &&
             as_json_put(o, "cycles", json_integer(l->cycles)) &&
             as_json_put(o, "energy_pJ", as_json_number(l->energy_pJ)) &&
             map_mapping_format(a, &l->mapping, text, MAPPING_TEXT_BYTES) &&
             as_json_put(o, "mapping", as_json_string(text));
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The compute layers' objects of plan p; NULL when out of memory or a
 * mapping search failed (st says so). */
static json_t *layers_json(fu_evaluator *e, const fu_plan *p, const fu_plan_cost *c, as_status *st)
{
    fu_layer_mapping *layers;
    int32_t n;
    if (fu_plan_mappings(e, p, c, &layers, &n, st) != AS_OK)
        return NULL;
    char *text = malloc(MAPPING_TEXT_BYTES);
    json_t *array = json_array();
    bool ok = text && array;
    for (int32_t i = 0; ok && i < n; i++)
        ok = as_json_push(array, layer_json(e->g, &e->a, &layers[i], text));
    free(text);
    free(layers);
    if (!ok) {
        json_decref(array);
        as_fail(st, AS_ENOMEM, "out of memory for the layers' mappings of %s", e->g->name);
        return NULL;
    }
    return array;
}

/* MACs per (peak MACs per cycle x cycles): the share of the MAC units'
 * cycles doing useful work. */
static double utilization(const arch_spec *a, int64_t macs, int64_t cycles)
{
    return cycles > 0 ? (double)macs / (map_peak_macs_per_cycle(a) * (double)cycles) : 0;
}

/* The names of group gid's ops, in topological order. */
static json_t *group_layers_json(const wl_graph *g, const fu_plan *p, int32_t gid)
{
    json_t *names = json_array();
    for (int32_t k = 0; names && k < g->n_order; k++)
        if (p->group[g->order[k]] == gid &&
            !as_json_push(names, as_json_string(g->ops[g->order[k]].name))) {
            json_decref(names);
            return NULL;
        }
    return names;
}

/* Group gid's object (the top of the file). */
static json_t *group_json(const fu_evaluator *e, const fu_plan *p, int32_t gid,
                          const fu_group_cost *c)
{
    const arch_spec *a = &e->a;
    json_t *o = json_object(), *tile = json_array();
    bool ok = o && tile && as_json_push(tile, json_integer(c->tile.rows)) &&
              as_json_push(tile, json_integer(c->tile.cols)) &&
              as_json_put(o, "layers", group_layers_json(e->g, p, gid)) &&
              as_json_put(o, "cycles", json_integer(c->cycles)) &&
              as_json_put(o, "latency_s", as_json_number((double)c->cycles * a->cycle_seconds)) &&
              as_json_put(o, "energy_pJ", as_json_number(c->energy_pJ)) &&
              as_json_put(
                  o, "energy_by_component_pJ",
                  map_energy_parts_json(a, c->energy_by_component_pJ, c->onchip_level_pJ, false)) &&
              as_json_put(o, "dram_bytes", json_integer(c->dram_bytes)) &&
              as_json_put(o, "macs", json_integer(c->macs)) &&
              as_json_put(o, "recomputed_macs", json_integer(c->recomputed_macs)) &&
              as_json_put(o, "utilization", as_json_number(utilization(a, c->macs, c->cycles))) &&
              as_json_put(o, "tiles", json_integer(c->n_tiles)) &&
              as_json_put(o, "tile", json_incref(tile)) &&
              as_json_put(o, "halo", as_json_string(fu_halo_name(c->halo))) &&
              as_json_put(o, "onchip_bytes", json_integer(c->onchip_bytes));
    if (ok && !c->valid)
        ok = as_json_put(o, "valid", json_false()) &&
             as_json_put(o, "reason", as_json_string(c->reason));
    json_decref(tile);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *fu_plan_totals_json(const arch_spec *a, const fu_plan_cost *c)
{
    json_t *o = json_object();
    bool ok =
        o && as_json_put(o, "cycles", json_integer(c->cycles)) &&
        as_json_put(o, "latency_s", as_json_number(c->latency_s)) &&
        as_json_put(o, "energy_pJ", as_json_number(c->energy_pJ)) &&
        as_json_put(o, "edp_J_cycle", as_json_number(c->edp_J_cycle)) &&
        as_json_put(o, "dram_bytes", json_integer(c->dram_bytes)) &&
        as_json_put(o, "macs", json_integer(c->macs)) &&
        as_json_put(o, "recomputed_macs", json_integer(c->recomputed_macs)) &&
        as_json_put(o, "utilization", as_json_number(utilization(a, c->macs, c->cycles))) &&
        as_json_put(o, "energy_by_component_pJ",
                    map_energy_parts_json(a, c->energy_by_component_pJ, c->onchip_level_pJ, false));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *fu_plan_json(fu_evaluator *e, const fu_plan *p, const fu_plan_cost *c, as_status *st)
{
    json_t *o = json_object(), *groups = json_array();
    bool ok =
        o && groups &&
        as_json_put(o, "weights", as_json_string(c->weights.resident ? "resident" : "streamed")) &&
        as_json_put(o, "totals", fu_plan_totals_json(&e->a, c)) &&
        as_json_put(o, "components", map_energy_parts_json(&e->a, NULL, NULL, true)) &&
        as_json_put(o, "groups", json_incref(groups));
    for (int32_t gid = 0; ok && gid < c->n_groups && gid < p->n_groups; gid++)
        ok = as_json_push(groups, group_json(e, p, gid, &c->groups[gid]));
    json_decref(groups);
    if (!ok) {
        json_decref(o);
        as_fail(st, AS_ENOMEM, "out of memory for the plan of %s", e->g->name);
        return NULL;
    }
    json_t *layers = layers_json(e, p, c, st);
    if (!layers || !as_json_put(o, "layers", layers)) {
        json_decref(o);
        return NULL;
    }
    return o;
}
