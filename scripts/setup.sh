#!/usr/bin/env bash
# setup.sh -- install the Debian packages accelsearch needs (only those
# missing) and build it.  Sourced by run.sh and test.sh.
#
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release),
# AS_SANITIZE=1 for an AddressSanitizer + UBSan build.
set -euo pipefail

AS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$AS_ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-Release}

AS_PACKAGES=(build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev
             libonnx-dev libyaml-dev coinor-libcbc-dev libgsl-dev libsqlite3-dev
             libjansson-dev libcmocka-dev libxgboost-dev clang-format chromium)

as_install_packages() {
    local missing=()
    for p in "${AS_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "installing: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

as_build() {
    local sanitize=OFF
    [ "${AS_SANITIZE:-0}" = 1 ] && sanitize=ON
    cmake -S "$AS_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DAS_WERROR=ON \
          -DAS_SANITIZE="$sanitize" >/dev/null
    cmake --build "$BUILD_DIR" -j "$(nproc)"
}

as_install_packages
as_build
