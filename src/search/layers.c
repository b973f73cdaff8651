/*
 * layers.c -- the mapping of every compute layer of a candidate's kept
 * plans, as the JSON the run store keeps with each candidate round
 * (member "layers" of each workload of the row's details), compactly: one
 * small object per layer whose problem and mapping are one line of text
 * each (mapping.h, "mappings as text").
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
#include "search_private.h"

#include <stdlib.h>
#include <string.h>

/* Room for one mapping line: ARCH_MAX_LEVELS levels of a name and up to
 * 2 x WL_NDIMS loops each. */
#define MAPPING_TEXT_BYTES (ARCH_MAX_LEVELS * (ARCH_NAME_BYTES + 8 + 2 * WL_NDIMS * 24) + 32)
#define BOUNDS_TEXT_BYTES (WL_NDIMS * 24)

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

json_t *se_candidate_layers_json(const se_candidate_eval *c, int k, as_status *st)
{
    fu_layer_mapping *layers;
    int32_t n;
    if (fu_plan_mappings(c->evaluator[k], &c->plan[k], &c->cost[k], &layers, &n, st) != AS_OK)
        return NULL;
    const arch_spec *a = fu_evaluator_arch(c->evaluator[k]);
    char *text = malloc(MAPPING_TEXT_BYTES);
    json_t *array = json_array();
    bool ok = text && array;
    for (int32_t i = 0; ok && i < n; i++)
        ok = as_json_push(array, layer_json(c->graph[k], a, &layers[i], text));
    free(text);
    free(layers);
    if (!ok) {
        json_decref(array);
        as_fail(st, AS_ENOMEM, "out of memory for the layers' mappings of %s", c->graph[k]->name);
        return NULL;
    }
    return array;
}
