/*
 * fuzz_onnx.c -- libFuzzer target for the ONNX importer and exporter.
 *
 * Any byte string must either load or fail with AS_EINVAL / AS_ENOMEM, a
 * message and no graph; a graph that loads must yield statistics (or a
 * clean error) and export without crashing.  AddressSanitizer and UBSan
 * (see CMakeLists.txt) turn every other outcome into a reported crash;
 * the contract checks below abort().  See README.md for how to run it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "workload/workload.h"

/* Unknown ops are allowed: they take the importer further (declared
 * shapes of unknown ops); refusing them is one early branch. */
static const wl_onnx_options fuzz_options = {.allow_unknown_ops = true};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    as_code rc = wl_onnx_load_buffer(data, size, "fuzz.onnx", &fuzz_options, &g, &st);
    if (rc != AS_OK) {
        if (g != NULL || st.code != rc || st.message[0] == '\0')
            abort(); /* a failure leaves no graph and says why */
        return 0;
    }
    if (g == NULL)
        abort();
    wl_stats stats;
    as_status_clear(&st);
    (void)wl_graph_stats(g, &stats, &st);
    as_status_clear(&st);
    (void)wl_onnx_save(g, "/dev/null", &st);
    wl_graph_free(g);
    return 0;
}
