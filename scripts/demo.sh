#!/usr/bin/env bash
# The README's "run" command: installs dependencies, builds berth as the image does, and runs its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build-release.sh build -- --target berth >/dev/null
exec build/bin/berth demo "$@"
