#!/usr/bin/env bash
# Static analysis: clang-format over every C++ source (no file may differ from .clang-format), the
# layer check, cppcheck of pkg/ and cmd/, then clang-tidy with the checked-in .clang-tidy.
# Any one's finding fails the script.
#   scripts/lint.sh [build-dir]    (default build-lint; only configured, never built)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-lint}

echo "-- clang-format"
git ls-files -z 'pkg/*.cc' 'pkg/*.h' 'cmd/*.cc' 'cmd/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' \
  'bench/*.h' 'fuzz/*.cc' 'fuzz/*.h' | xargs -0 clang-format-14 --dry-run -Werror

echo "-- layers"
scripts/check-layers.sh

echo "-- member names"
# Members are snake_case_ (conventions.md): a name ending in '_' with a capital letter is camelCase.
if git grep -nE '\b[a-z]+[A-Z][A-Za-z0-9]*_\b' -- 'pkg/*.h' 'pkg/*.cc' 'cmd/*' 'tests/*.h' \
    'tests/*.cc' 'bench/*' 'fuzz/*.cc'; then
  echo "lint: members above are camelCase_; name them snake_case_" >&2
  exit 1
fi

echo "-- cppcheck"
cppcheck --std=c++20 --language=c++ --enable=warning,performance,portability --inline-suppr \
  --quiet -I . --suppress=missingIncludeSystem --error-exitcode=1 -j"$(nproc)" pkg cmd

# clang-tidy parses every header a file includes (Boost, nlohmann): one unity source per
# library parses them once per library instead of once per file, which takes the run from ~13 to a
# few minutes on two cores.
echo "-- clang-tidy"
cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DBERTH_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 >/dev/null
python3 - "$dir" <<'PY' | xargs -r -P"$(nproc)" -n1 clang-tidy -p "$dir" --quiet
import json, sys
root = sys.argv[1]
for entry in json.load(open(f"{root}/compile_commands.json")):
    f = entry["file"]
    library = "/CMakeFiles/berth" in f and "_test.dir" not in f and "test_support" not in f
    if library or "/pkg/" in f or "/cmd/" in f:
        print(f)
PY
echo "lint clean"
