#!/usr/bin/env bash
# berth's release build, defined once: CI (scripts/test.sh), the image (Dockerfile) and
# scripts/demo.sh all build with it, so what CI tests is what ships. g++ -O2 with the unity build.
#   scripts/build-release.sh DIR [cmake options...] [-- build options, e.g. --target berth]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
exec scripts/build.sh "$dir" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON "$@"
