/*
 * emulate.c -- operands in a number format the MACs lack, for
 * map_evaluate: how many MAC operations one of the problem's MACs takes
 * (docs/precision.md states the rule and its sources).
 *
 * Model assumptions:
 *  - each operand's significand (integers: the magnitude, the sign riding
 *    on every limb) is split into limbs of the MAC's significand width,
 *    k = ceil(operand significand bits / MAC significand bits), and the
 *    limb products are run as passes of the MAC array, shifted and summed
 *    as each pass's partial sums drain.  Float products keep the
 *    significant ones, the limb pairs (i, j) with i + j < max(k_a, k_b)
 *    counted from the most significant limb: k (k + 1) / 2 for equal k,
 *    fp32 on bfloat16 MACs in 6 products ("bf16x6", Henry, Tang,
 *    Heinecke, ARITH 2019); integer products keep all k_a k_b (exact);
 *  - a float operand whose exponent is wider than the MACs' (any float on
 *    integer MACs; bf16 or fp32 on fp16 MACs) needs its products aligned
 *    to the accumulator's exponent: one shift and add per product, charged
 *    as one more pass (what a CPU's soft float does per operation; block
 *    floating point would amortise it over a tile but drops bits);
 *  - a narrower format gets no speedup on a wider unit: one pass, no
 *    sub-word packing of several operands into one MAC;
 *  - operands whose format is as-hardware are taken as the MACs' own.
 * The level traffic does not change (each operand word is read once per
 * MAC, its limbs taken from the operand register), so map_evaluate scales
 * only the compute cycles and the MAC energy by the passes.
 */
#include "eval_private.h"

/* A number format by its significand and exponent widths. */
typedef struct number_format {
    int significand_bits; /* with the hidden bit; integers: the magnitude */
    int exponent_bits;    /* 0 for integers */
    bool integer;
} number_format;

/* The format of `bits` of arch number `number`; false when the tables
 * have no such format. */
static bool format_of(arch_number number, int bits, number_format *f)
{
    f->significand_bits = arch_significand_bits(bits, number);
    f->integer = number == ARCH_NUMBER_INT;
    f->exponent_bits = f->integer ? 0 : bits - f->significand_bits;
    return f->significand_bits > 0;
}

/* The format the MACs take data space ds in: its own when chosen and
 * known, the MACs' when as-hardware (or of a width the tables lack). */
static number_format operand_format(const wl_dataspace *ds, const number_format *mac)
{
    static const arch_number numbers[] = {
        [WL_NUMBER_INT] = ARCH_NUMBER_INT,
        [WL_NUMBER_FLOAT] = ARCH_NUMBER_FP,
        [WL_NUMBER_BF16] = ARCH_NUMBER_BF16,
    };
    number_format f;
    if (ds->number == WL_NUMBER_AS_HARDWARE || (unsigned)ds->number > WL_NUMBER_BF16 ||
        !format_of(numbers[ds->number], ds->bits, &f))
        return *mac;
    return f;
}

/* Limbs of `significand_bits` at `limb_bits` each, at least one. */
static int64_t limbs(int significand_bits, int limb_bits)
{
    int64_t k = (significand_bits + limb_bits - 1) / limb_bits;
    return k > 1 ? k : 1;
}

/* Limb products of a (k_a limbs) times b (k_b limbs): all of them when
 * both are integers, else the pairs (i, j) with i + j < max(k_a, k_b). */
static int64_t limb_products(int64_t k_a, int64_t k_b, bool integers)
{
    if (integers)
        return k_a * k_b;
    int64_t k_max = k_a > k_b ? k_a : k_b, products = 0;
    for (int64_t i = 0; i < k_a; i++)
        products += k_max - i < k_b ? k_max - i : k_b;
    return products;
}

int64_t map_mac_passes(const arch_compute *c, const wl_problem *p)
{
    const wl_dataspace *w = &p->ds[WL_DS_WEIGHTS], *x = &p->ds[WL_DS_INPUTS];
    number_format mac;
    if ((w->number == WL_NUMBER_AS_HARDWARE && x->number == WL_NUMBER_AS_HARDWARE) ||
        !format_of(c->mac_number, c->mac_bits, &mac))
        return 1;
    number_format a = operand_format(w, &mac), b = operand_format(x, &mac);
    int64_t products =
        limb_products(limbs(a.significand_bits, mac.significand_bits),
                      limbs(b.significand_bits, mac.significand_bits), a.integer && b.integer);
    bool align = a.exponent_bits > mac.exponent_bits || b.exponent_bits > mac.exponent_bits;
    return products + (align ? 1 : 0);
}
