#!/usr/bin/env bash
# The README's "run" command: installs dependencies, builds berth, and runs its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target berth >/dev/null
exec build/bin/berth demo "$@"
