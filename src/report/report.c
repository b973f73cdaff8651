/*
 * report.c -- the C side of a report: plain data out of results, and the
 * page around it.
 */
#include "report.h"

#include <string.h>

/* The files of src/report/js concatenated, compiled in by CMakeLists.txt. */
extern const char rp_renderer_text[];

/* ------------------------------------------------------------ the page */

static const char PAGE_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"generator\" content=\"accelsearch\">\n<title>";
static const char PAGE_BODY[] =
    "</title>\n</head>\n<body data-render=\"pending\" data-errors=\"0\">\n"
    "<div id=\"report\"></div>\n<script type=\"application/json\" id=\"report-data\">";
static const char PAGE_SCRIPT[] = "</script>\n<script>\n";
static const char PAGE_TAIL[] = "</script>\n</body>\n</html>\n";

/* s with &, < and > as entities (a title is text, not markup). */
static void put_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fputc(*s, f);
}

as_code rp_write_html(FILE *f, const char *title, const json_t *data, as_status *st)
{
    /* Slashes escaped: "</script>" in a name cannot close the element. */
    char *json = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(10));
    if (!json)
        return as_fail(st, AS_ENOMEM, "out of memory");
    fputs(PAGE_HEAD, f);
    put_text(f, title);
    fputs(PAGE_BODY, f);
    fputs(json, f);
    fputs(PAGE_SCRIPT, f);
    fputs(rp_renderer_text, f);
    fputs(PAGE_TAIL, f);
    free(json);
    if (ferror(f))
        return as_fail(st, AS_EIO, "cannot write the report");
    return AS_OK;
}

/* ------------------------------------------------------------ the data */

/* One layer of a network result. */
static json_t *layer_data(const wl_graph *g, const arch_spec *a, const map_layer_result *l,
                          const char *name)
{
    json_t *o = json_object();
    char mapping[1024] = "";
    if (l->problem_class >= 0 && l->mapped)
        map_mapping_format(a, &l->mapping, mapping, sizeof mapping);
    bool ok = o && as_json_put(o, "name", as_json_string(name)) &&
              as_json_put(o, "kind", as_json_string(wl_op_kind_name(g->ops[l->op].kind))) &&
              as_json_put(o, "macs", json_integer(l->macs)) &&
              as_json_put(o, "cycles", json_integer(l->cycles)) &&
              as_json_put(o, "latency_s", as_json_number((double)l->cycles * a->cycle_seconds)) &&
              as_json_put(o, "energy_pJ", as_json_number(l->energy_pJ)) &&
              as_json_put(
                  o, "energy_by_component_pJ",
                  map_energy_parts_json(a, l->energy_by_component_pJ, l->onchip_level_pJ, false)) &&
              as_json_put(o, "utilization", as_json_number(l->utilization)) &&
              as_json_put(o, "dram_bytes", json_integer(l->dram_bytes)) &&
              as_json_put(o, "mapping", as_json_string(mapping));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *rp_network_data(const wl_graph *g, const arch_spec *a, const map_network_result *r,
                        const char *(*layer_name)(const wl_graph *g, int32_t op, char *buf,
                                                  size_t size),
                        as_status *st)
{
    json_t *o = json_object(), *totals = json_object(), *layers = json_array();
    bool ok = o && totals && layers;
    for (int32_t i = 0; ok && i < r->n_layers; i++) {
        char buf[256];
        const map_layer_result *l = &r->layers[i];
        const char *name = layer_name ? layer_name(g, l->op, buf, sizeof buf) : g->ops[l->op].name;
        ok = as_json_push(layers, layer_data(g, a, l, name ? name : "?"));
    }
    ok = ok && as_json_put(totals, "cycles", json_integer(r->cycles)) &&
         as_json_put(totals, "latency_s", as_json_number(r->latency_s)) &&
         as_json_put(totals, "energy_pJ", as_json_number(r->energy_pJ)) &&
         as_json_put(totals, "edp_J_cycle", as_json_number(r->edp_J_cycle)) &&
         as_json_put(totals, "dram_bytes", json_integer(r->dram_bytes)) &&
         as_json_put(totals, "macs", json_integer(r->macs)) &&
         as_json_put(totals, "utilization", as_json_number(r->utilization)) &&
         as_json_put(
             totals, "energy_by_component_pJ",
             map_energy_parts_json(a, r->energy_by_component_pJ, r->onchip_level_pJ, false)) &&
         as_json_put(o, "kind", as_json_string("network")) &&
         as_json_put(o, "model", as_json_string(g->name)) &&
         as_json_put(o, "arch", as_json_string(a->name)) &&
         as_json_put(o, "totals", json_incref(totals)) && as_json_put(o, "roofs", rp_roofs(a)) &&
         as_json_put(
             o, "components",
             map_energy_parts_json(a, r->energy_by_component_pJ, r->onchip_level_pJ, true)) &&
         as_json_put(o, "layers", json_incref(layers));
    json_decref(totals);
    json_decref(layers);
    if (!ok) {
        json_decref(o);
        as_fail(st, AS_ENOMEM, "out of memory");
        return NULL;
    }
    return o;
}
