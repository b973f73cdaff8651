/*
 * report.h -- self-contained HTML reports: one file that opens offline in
 * any browser, with the run's data embedded as JSON and drawn by a small
 * renderer of inline SVG and vanilla JavaScript (the files of src/report/js,
 * compiled in).  No network fetch, no library: docs/report.md says why.
 *
 * The C side only gathers plain data (rp_*_data: a JSON object per kind
 * of result) and writes the page around it (rp_write_html).  What is
 * drawn is the renderer's: for a layer-by-layer network result, time and
 * energy per layer stacked by component, utilisation per layer, a
 * roofline against the design's compute and bandwidth roofs, and each
 * layer's mapping as a loop nest on demand.  Nothing here prints.
 */
#ifndef AS_REPORT_H
#define AS_REPORT_H

#include <stdio.h>

#include "../arch/arch.h"
#include "../core/core.h"
#include "../mapping/mapping.h"
#include "../search/search.h"
#include "../workload/workload.h"

/* The data of a layer-by-layer costing r of model g on design a (a new
 * JSON object; NULL when out of memory, st says so):
 *   {"kind": "network", "model", "arch", "totals": {cycles, latency_s,
 *    energy_pJ, edp_J_cycle, dram_bytes, macs, utilization}, "roofs":
 *    {"peak_ops_per_s", "dram_bytes_per_s"}, "components": [names],
 *    "layers": [{name, kind, macs, cycles, latency_s, energy_pJ,
 *    energy_by_component_pJ: [...], utilization, dram_bytes, mapping}]}
 * layer_name names each layer as the caller prints it (NULL: the op's
 * name). */
json_t *rp_network_data(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                        const char *(*layer_name)(const wl_graph *g, int32_t op, char *buf,
                                                  size_t size),
                        as_status *st);

/* A design's roofs: {"peak_ops_per_s" (2 ops per MAC at every MAC unit
 * busy), "dram_bytes_per_s"}; NULL when out of memory. */
json_t *rp_roofs(const arch_spec *a);

/* The data of fusion plan `plan` (a workload's plan JSON: fu_plan_json's
 * object with the workload's "model" and "batch", as a search's
 * se_workload_result.plan_json) on design a, kind "fusion": a copy of
 * plan with the design's name and roofs, the fusion search's name
 * (algorithm, NULL: none) and the layer-by-layer plan's totals (baseline,
 * NULL: none).  A new object; NULL when out of memory. */
json_t *rp_fusion_data(const arch_spec *a, const json_t *plan, const char *algorithm,
                       const fu_plan_cost *baseline, as_status *st);

/* The data of a co-design search, kind "search": the run's settings
 * (cfg, seed), every candidate of r with its parameters, metrics and
 * whether it is on the front, the chosen design and the space's baseline
 * (indices into candidates), the fixed designs r evaluated (names from
 * fixed, r->n_baselines of them; may be NULL when none), the hypervolume
 * curve, and the chosen design's plan per workload (kind "fusion" each;
 * "workloads_not_stored" names those r holds no plan of).  A new object;
 * NULL when out of memory. */
json_t *rp_search_data(const se_space *s, const se_run_config *cfg, uint64_t seed,
                       const se_result *r, const se_baseline *fixed, as_status *st);

/* Write a whole report to f: the page, its style and renderer, and data
 * (any object an rp_*_data gave) embedded so that nothing in it can end
 * the script element that holds it.  AS_EIO when writing fails. */
as_code rp_write_html(FILE *f, const char *title, const json_t *data, as_status *st);

#endif
