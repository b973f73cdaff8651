#!/usr/bin/env bash
# run.sh -- install what is missing, build, and run the main job on the
# built-in default: a CASCO co-design search of ResNet-18 on the edge space.  Extra arguments replace the default command.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
if [ $# -gt 0 ]; then
    exec "$BUILD_DIR/accelsearch" "$@"
fi
exec "$BUILD_DIR/accelsearch" search
