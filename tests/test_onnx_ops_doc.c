/*
 * test_onnx_ops_doc.c -- docs/onnx-ops.md, the status of every ai.onnx
 * operator in accelsearch, is generated from the op table (wl_op_status_of)
 * and the list of operator names in tests/data/onnx_op_names.txt (taken
 * from Debian's python3-onnx), so that it cannot drift: this program
 * prints it with --print, and as a test regenerates it and fails when the
 * committed file differs.
 *
 * Usage: test_onnx_ops_doc            (the tests)
 *        test_onnx_ops_doc --print    (the markdown, to stdout)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/workload.h"

#include "text_file.h"

#define NAMES_PATH AS_TEST_DATA_DIR "/onnx_op_names.txt"
#define DOC_PATH AS_TEST_DATA_DIR "/../../docs/onnx-ops.md"
#define REGENERATE "build/tests/test_onnx_ops_doc --print > docs/onnx-ops.md"

enum { MAX_OPS = 512, NAME_BYTES = 64 };

/* The ai.onnx operators of the names file, with the last opset that
 * changed each, and the file's header line (its source). */
typedef struct op_list {
    int n;
    char names[MAX_OPS][NAME_BYTES];
    int opsets[MAX_OPS];
    char source[256];
} op_list;

/* Read NAMES_PATH: a '#' header line, then "Name opset" lines sorted by
 * name.  False when the file is missing or malformed. */
static bool read_op_list(op_list *list)
{
    FILE *f = fopen(NAMES_PATH, "r");
    if (!f)
        return false;
    char line[512];
    list->n = 0;
    list->source[0] = '\0';
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#') {
            snprintf(list->source, sizeof list->source, "%s", line + 1 + (line[1] == ' '));
            continue;
        }
        ok = list->n < MAX_OPS &&
             sscanf(line, "%63s %d", list->names[list->n], &list->opsets[list->n]) == 2;
        list->n += ok;
    }
    fclose(f);
    return ok && list->n > 0;
}

/* Whether name is in the list. */
static bool listed(const op_list *list, const char *name)
{
    for (int i = 0; i < list->n; i++)
        if (strcmp(list->names[i], name) == 0)
            return true;
    return false;
}

/* The markdown of docs/onnx-ops.md for list, to out. */
static void print_doc(const op_list *list, FILE *out)
{
    int count[WL_STATUS_COMPUTE + 1] = {0};
    for (int i = 0; i < list->n; i++)
        count[wl_op_status_of(list->names[i])]++;
    fprintf(out, "# ONNX operators in accelsearch\n\n");
    fprintf(out,
            "Generated from the op table of `src/workload` (`wl_op_status_of`) and the operator\n"
            "names of `tests/data/onnx_op_names.txt` (%s).\n"
            "Do not edit: `tests/test_onnx_ops_doc` fails when this file differs from what the\n"
            "code gives; regenerate it with `%s`.\n\n",
            list->source, REGENERATE);
    fprintf(out, "Statuses, from most to least modelled:\n\n");
    fprintf(out, "- **%s**: a loop nest (MACs) that the mapper maps onto the MAC array.\n",
            wl_op_status_name(WL_STATUS_COMPUTE));
    fprintf(out, "- **%s**: operations per element on the vector unit, plus traffic.\n",
            wl_op_status_name(WL_STATUS_VECTOR));
    fprintf(out, "- **%s**: a layer whose reads and writes are charged, no arithmetic.\n",
            wl_op_status_name(WL_STATUS_MOVED));
    fprintf(out,
            "- **%s**: shapes inferred and constants folded; views and shape arithmetic\n"
            "  cost nothing at run time.\n",
            wl_op_status_name(WL_STATUS_INFERRED));
    fprintf(out,
            "- **%s**: the importer refuses the op, or with unknown ops allowed guesses\n"
            "  that its output looks like its first input and warns.\n\n",
            wl_op_status_name(WL_STATUS_UNSUPPORTED));
    fprintf(out, "Every op with a status other than unsupported has its shape inference; ops\n"
                 "whose inputs are all constant are folded where a folder exists.\n\n");
    fprintf(out,
            "Notes: Einsum is costed as compute when it contracts two operands (a batched\n"
            "matrix product with exact MACs); other equations infer, and costing a network\n"
            "with one fails naming the node.  NonZero's output shape depends on its input's\n"
            "values: it imports only with a constant input (and folds), otherwise the error\n"
            "names the node.  Attributes that do not change shapes (TopK's largest and\n"
            "sorted, GridSample's modes, ...) are not read, so an export does not write them.\n\n");
    fprintf(out, "| status | operators |\n|---|---:|\n");
    for (int s = WL_STATUS_COMPUTE; s >= WL_STATUS_UNSUPPORTED; s--)
        fprintf(out, "| %s | %d |\n", wl_op_status_name((wl_op_status)s), count[s]);
    fprintf(out, "| all | %d |\n\n", list->n);
    fprintf(out, "| operator | last changed at opset | status |\n|---|---:|---|\n");
    for (int i = 0; i < list->n; i++)
        fprintf(out, "| %s | %d | %s |\n", list->names[i], list->opsets[i],
                wl_op_status_name(wl_op_status_of(list->names[i])));
    bool header = false;
    for (int k = 0; k < WL_OP_UNKNOWN; k++) {
        const char *name = wl_op_kind_name((wl_op_kind)k);
        if (listed(list, name))
            continue;
        if (!header)
            fprintf(out, "\nOperators accelsearch models that are newer than the list above:\n\n"
                         "| operator | status |\n|---|---|\n");
        header = true;
        fprintf(out, "| %s | %s |\n", name, wl_op_status_name(wl_op_status_of(name)));
    }
}

/* The committed docs/onnx-ops.md equals what the code gives now. */
static void test_doc_is_current(void **state)
{
    (void)state;
    static op_list list;
    assert_true(read_op_list(&list));
    char *want = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&want, &size);
    print_doc(&list, mem);
    fclose(mem);
    as_status st;
    char *got = text_file_or_null(DOC_PATH, &st);
    if (!got)
        fail_msg("%s; generate it with %s", st.message, REGENERATE);
    if (strcmp(got, want) != 0) {
        size_t at = 0, line = 1;
        for (; got[at] && got[at] == want[at]; at++)
            line += got[at] == '\n';
        free(got);
        free(want);
        fail_msg("docs/onnx-ops.md differs from the op table from line %zu on; regenerate it "
                 "with %s",
                 line, REGENERATE);
    }
    free(got);
    free(want);
}

/* The names file lists every op accelsearch models but the newer ones,
 * sorted, with no repeats; the status rule on known cases. */
static void test_names_and_statuses(void **state)
{
    (void)state;
    static op_list list;
    assert_true(read_op_list(&list));
    assert_true(list.n >= 150);
    for (int i = 1; i < list.n; i++)
        assert_true(strcmp(list.names[i - 1], list.names[i]) < 0);
    assert_int_equal(wl_op_status_of("Conv"), WL_STATUS_COMPUTE);
    assert_int_equal(wl_op_status_of("MatMul"), WL_STATUS_COMPUTE);
    assert_int_equal(wl_op_status_of("Relu"), WL_STATUS_VECTOR);
    assert_int_equal(wl_op_status_of("ReduceMax"), WL_STATUS_VECTOR);
    assert_int_equal(wl_op_status_of("Gather"), WL_STATUS_MOVED);
    assert_int_equal(wl_op_status_of("Reshape"), WL_STATUS_INFERRED);
    assert_int_equal(wl_op_status_of("Shape"), WL_STATUS_INFERRED);
    assert_int_equal(wl_op_status_of("Loop"), WL_STATUS_UNSUPPORTED);
    assert_int_equal(wl_op_status_of("?"), WL_STATUS_UNSUPPORTED);
    assert_int_equal(wl_op_status_of(""), WL_STATUS_UNSUPPORTED);
}

/* The ops issue 11 names as emitted by torchvision, timm and Hugging Face
 * exports are all at least inferred. */
static void test_exporters_ops_are_modelled(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "Mod",
        "Where",
        "Expand",
        "Range",
        "CumSum",
        "LayerNormalization",
        "GroupNormalization",
        "InstanceNormalization",
        "Resize",
        "GridSample",
        "TopK",
        "NonZero",
        "ScatterND",
        "GatherElements",
        "Trilu",
        "Pad",
        "Tile",
        "ConvTranspose",
        "DepthToSpace",
        "SpaceToDepth",
        "Sin",
        "Cos",
        "Floor",
        "Ceil",
        "Round",
        "Sign",
        "Softplus",
        "Elu",
        "Selu",
        "And",
        "Or",
        "Xor",
        "GreaterOrEqual",
        "LessOrEqual",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL2",
        "ArgMax",
        "ArgMin",
        "LogSoftmax",
        "Size",
        "Sum",
        "Mean",
        "Einsum",
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (wl_op_status_of(ops[i]) == WL_STATUS_UNSUPPORTED)
            fail_msg("%s is unsupported", ops[i]);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--print") == 0) {
        static op_list list;
        if (!read_op_list(&list)) {
            fprintf(stderr, "test_onnx_ops_doc: cannot read %s\n", NAMES_PATH);
            return 1;
        }
        print_doc(&list, stdout);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_is_current),
        cmocka_unit_test(test_names_and_statuses),
        cmocka_unit_test(test_exporters_ops_are_modelled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
