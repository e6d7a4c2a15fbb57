#!/usr/bin/env bash
# The README's test command: installs dependencies, builds berth as the image does, then builds and
# runs every test under AddressSanitizer + UndefinedBehaviorSanitizer (with a short run of each
# fuzz target) and again under ThreadSanitizer, and runs the static analysers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-tools.sh
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"

# Every build is a unity build (several sources per compiler run): CI compiles three times on two
# cores. The tests run in the sanitizer builds only, where they find more than optimised builds do.
echo "== release build (g++ -O2): berth and the benchmarks (at ${SECONDS} s)"
scripts/build-release.sh build -- --target berth berth_bench berth-perf berth-soak

echo "== deploy/, the Helm chart and the Dockerfile (at ${SECONDS} s)"
scripts/check-deploy.sh build/bin/berth

echo "== the container image from the Dockerfile, run as the chart runs it (at ${SECONDS} s)"
image=$(BERTH_IMAGE_ARCHIVE=build/berth-image.oci.tar scripts/build-image.sh berth:ci)
scripts/check-image.sh "$image"
echo "image archive: build/berth-image.oci.tar ($(du -m build/berth-image.oci.tar | cut -f1) MiB)"

echo "== benchmark smoke (the numbers in docs/benchmarks.md come from a full run) (at ${SECONDS} s)"
build/bin/berth_bench --benchmark_filter='BM_SchedulePods/500/' --benchmark_min_time=0.01 >/dev/null
# End to end through HTTP, a few seconds: every measured pod and every preemptor (each evicting
# three or four victims) must be bound, or berth-perf exits non-zero.
build/bin/berth-perf --workload preemption --nodes 50 --init-pods 200 --pods 50 \
  --churn-interval 10ms >/dev/null

echo "== asan+ubsan build (clang -O0) with the fuzz targets (at ${SECONDS} s)"
CXX=clang++ scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" \
  -DBERTH_SANITIZE=ON -DBERTH_FUZZ=ON -DBERTH_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
ctest --test-dir build-asan --output-on-failure -j"$(nproc)"
scripts/fuzz.sh 20 build-asan

echo "== tsan build (clang -O1) (at ${SECONDS} s)"
CXX=clang++ scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  -DBERTH_TSAN=ON -DBERTH_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON
ctest --test-dir build-tsan --output-on-failure -j"$(nproc)"

echo "== static analysis (at ${SECONDS} s)"
scripts/lint.sh
echo "all tests passed (${SECONDS} s)"
