#!/usr/bin/env bash
# The README's test command: installs dependencies, then builds and runs every test twice,
# once optimised and once under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-tools.sh
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp

# Unity builds (several sources per compiler run) and no debug info: CI compiles everything twice
# on two cores, and this halves it.
echo "== release build"
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== deploy/, the Helm chart and the Dockerfile"
scripts/check-deploy.sh build/bin/berth

echo "== asan+ubsan build"
# -O0 keeps the second build short; the sanitizers do not need the optimiser.
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" -DBERTH_SANITIZE=ON \
  -DBERTH_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
ctest --test-dir build-asan --output-on-failure -j"$(nproc)"

echo "== benchmark smoke (the numbers in docs/benchmarks.md come from a full run)"
build/bin/berth_bench --benchmark_filter='BM_SchedulePods/500/' --benchmark_min_time=0.01 >/dev/null
echo "all tests passed"
