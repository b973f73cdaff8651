/*
 * network_report.c -- how map and fuse show the cost of a whole network
 * on an architecture: the same JSON header, totals and energy split, the
 * same warning about the precision conversion, and the same --weights
 * option and line saying where the weights live (search too), written
 * once.
 */
#include "cli.h"

#include <string.h>

void cli_json_begin_design(cli_json *j, const wl_graph *g, const arch_spec *a)
{
    cli_json_init(j, stdout);
    cli_json_begin_object(j);
    cli_json_string_field(j, "model", g->name);
    cli_json_string_field(j, "arch", a->name);
}

/* The order is map's and fuse's of before they shared it: the energy split
 * (fuse) comes right after the total. */
void cli_json_totals_members(cli_json *j, const cli_totals *t)
{
    cli_json_int_field(j, "cycles", t->cycles);
    cli_json_double_field(j, "latency_s", t->latency_s);
    cli_json_double_field(j, "energy_pJ", t->energy_pJ);
    if (t->has_energy_split) {
        cli_json_double_field(j, "onchip_energy_pJ", t->onchip_energy_pJ);
        cli_json_double_field(j, "dram_energy_pJ", t->dram_energy_pJ);
    }
    cli_json_double_field(j, "edp_J_cycle", t->edp_J_cycle);
    cli_json_int_field(j, "dram_bytes", t->dram_bytes);
    cli_json_double_field(j, "op_intensity", t->op_intensity);
}

void cli_json_components(cli_json *j, const char *key, const double *energy_pJ)
{
    cli_json_key(j, key);
    cli_json_begin_object(j);
    for (int c = 0; c < MAP_N_COMPONENTS; c++)
        cli_json_double_field(j, map_component_name((map_component)c), energy_pJ[c]);
    cli_json_end_object(j);
}

/* Said once per run, not per layer: the conversion is the model's choice
 * for every layer alike (network.c, "Precision"). */
void cli_warn_narrowing(const map_network_result *r)
{
    if (r->n_narrowed_layers > 0)
        cli_warn("%d layers keep %d-bit tensors in %d-bit words on chip: narrowed to the words "
                 "there, %d bits in DRAM (--precision sets the tensors')",
                 (int)r->n_narrowed_layers, r->narrowed_tensor_bits, r->narrowed_word_bits,
                 r->narrowed_tensor_bits);
}

/* --weights's spellings, in cli_weights_mode's order. */
static const char *const weights_names[] = {"resident", "streamed", NULL};

cli_option cli_weights_option(int *choice, bool *given)
{
    cli_option o = cli_enum("weights", choice, weights_names,
                            "resident: the weights stay on chip across inferences;\n"
                            "streamed: every inference reads them from DRAM\n"
                            "(default: resident when they fit the outermost on-chip level)");
    o.given = given;
    return o;
}

map_weights cli_weights_mode(int choice, bool given)
{
    if (!given)
        return MAP_WEIGHTS_AUTO;
    return choice == 0 ? MAP_WEIGHTS_RESIDENT : MAP_WEIGHTS_STREAMED;
}

/* The level's name, or "-" when the design has no on-chip level. */
static const char *weights_level_name(const arch_spec *a, const map_residency *r)
{
    return r->level >= 0 ? a->level[r->level].name : "-";
}

void cli_print_weights(const arch_spec *a, const map_residency *r, int label_width)
{
    const char *mode = r->resident ? "resident" : "streamed";
    if (r->level < 0)
        printf("%-*s %s (no on-chip level)\n", label_width, "weights", mode);
    else
        printf("%-*s %s: %lld bytes of weights, %s holds %lld bytes\n", label_width, "weights",
               mode, (long long)r->bytes, weights_level_name(a, r), (long long)r->capacity_bytes);
}

void cli_json_weights(cli_json *j, const arch_spec *a, const map_residency *r)
{
    cli_json_key(j, "weights");
    cli_json_begin_object(j);
    cli_json_string_field(j, "mode", r->resident ? "resident" : "streamed");
    cli_json_string_field(j, "level", weights_level_name(a, r));
    cli_json_int_field(j, "words", r->words);
    cli_json_int_field(j, "bytes", r->bytes);
    cli_json_int_field(j, "capacity_bytes", r->capacity_bytes);
    cli_json_end_object(j);
}

/* ------------------------------------------------------------ epilogues */

cli_option cli_epilogue_option(bool *off)
{
    return cli_flag("no-epilogue-fusion", off,
                    "every op its own layer: the layer-by-layer model, for studies\n"
                    "(BatchNormalization then stays unfolded in map and fuse; search\n"
                    "folds it as it always did); default: BN folded into its conv and\n"
                    "elementwise ops run in their producer's epilogue");
}

as_code cli_lower_for_inference(bool off, wl_graph *g, wl_epilogue_stats *stats, as_status *st)
{
    memset(stats, 0, sizeof *stats);
    return off ? AS_OK : wl_fuse_epilogues(g, stats, st);
}

/* Append "+" and name without the dotted prefix it shares with base. */
static void append_part(char *buf, size_t size, const char *base, const char *name)
{
    size_t shared = 0;
    for (size_t i = 0; base[i] && base[i] == name[i]; i++)
        if (base[i] == '.')
            shared = i + 1;
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "+%s", name + shared);
}

const char *cli_fused_layer_name(const wl_graph *g, int32_t o, char *buf, size_t size)
{
    const char *base = cli_layer_name(g, o);
    const wl_op *op = &g->ops[o];
    if (!op->folded_bn && op->epilogue_next < 0)
        return base;
    snprintf(buf, size, "%s", base);
    if (op->folded_bn)
        append_part(buf, size, base, op->folded_bn);
    for (int32_t m = op->epilogue_next; m >= 0; m = g->ops[m].epilogue_next)
        append_part(buf, size, base, cli_layer_name(g, m));
    return buf;
}

void cli_print_epilogue_summary(bool off, const wl_epilogue_stats *stats, int32_t n_epilogue_ops)
{
    if (off)
        printf("%-24s off (--no-epilogue-fusion)\n", "epilogue fusion");
    else
        printf("%-24s %d ops run in layers' epilogues, %d BatchNormalization folded\n",
               "epilogue fusion", (int)n_epilogue_ops, stats->n_folded_bn);
}

void cli_json_epilogue_summary(cli_json *j, bool off, const wl_epilogue_stats *stats,
                               int32_t n_epilogue_ops)
{
    cli_json_bool_field(j, "epilogue_fusion", !off);
    cli_json_int_field(j, "epilogue_ops", n_epilogue_ops);
    cli_json_int_field(j, "folded_batchnorms", stats->n_folded_bn);
}

void cli_json_layer_epilogue(cli_json *j, const wl_graph *g, int32_t o)
{
    const wl_op *op = &g->ops[o];
    if (op->folded_bn)
        cli_json_string_field(j, "folded_bn", op->folded_bn);
    if (op->epilogue_next < 0)
        return;
    cli_json_key(j, "epilogue");
    cli_json_begin_array(j);
    for (int32_t m = op->epilogue_next; m >= 0; m = g->ops[m].epilogue_next) {
        cli_json_begin_object(j);
        cli_json_string_field(j, "name", cli_layer_name(g, m));
        cli_json_string_field(j, "op", g->ops[m].op_type);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
}
