#!/usr/bin/env bash
# test.sh -- install what is missing, build, and run the whole test suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
