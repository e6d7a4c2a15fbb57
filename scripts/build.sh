#!/usr/bin/env bash
# Configures and builds berth into DIR (default build/).
#   scripts/build.sh [DIR] [cmake options...] [-- build options, e.g. --target berth]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
configure=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do configure+=("$1"); shift; done
[ $# -gt 0 ] && shift
generator=()
# Ninja when available and the directory is new (an existing one keeps its generator).
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${configure[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)" "$@"
