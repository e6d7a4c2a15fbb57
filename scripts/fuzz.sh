#!/usr/bin/env bash
# Runs every libFuzzer target (berth_fuzz_*) of a BERTH_FUZZ build for a bounded time, two at a
# time, each over a copy of its seed corpus (fuzz/corpus/<name>; the repository's corpus never
# grows here) with its dictionary (fuzz/dict/<name>.dict) when there is one. Prints one line per
# target; exits non-zero when any target crashed, leaked, timed out or ran out of memory, after
# printing the reproducer's path and the end of that target's output. See docs/fuzzing.md.
#
#   scripts/fuzz.sh [seconds-per-target (30)] [build-dir (build-fuzz)]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
build="${2:-build-fuzz}"
jobs=2  # the CI machine has two cores

: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1}"
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=1}"
: "${LSAN_OPTIONS:=suppressions=$PWD/tests/lsan.supp}"
export UBSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS

shopt -s nullglob
targets=("$build"/bin/berth_fuzz_*)
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz.sh: no berth_fuzz_* binaries in $build/bin; configure with -DBERTH_FUZZ=ON" >&2
  echo "(see docs/fuzzing.md) and build them first" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/berth-fuzz.XXXXXX")"

# Runs one target in $work/<name>/: corpus copy, crash artifacts, output log and exit status.
run_target() {
  local binary="$1" name="${1##*/berth_fuzz_}"
  local dir="$work/$name"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  if [ -d "fuzz/corpus/$name" ]; then
    cp -R "fuzz/corpus/$name/." "$dir/corpus/"
  fi
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$dir/artifacts/")
  if [ -f "fuzz/dict/$name.dict" ]; then
    args+=(-dict="fuzz/dict/$name.dict")
  fi
  local status=0
  "$binary" "${args[@]}" "$dir/corpus" >"$dir/log" 2>&1 || status=$?
  echo "$status" >"$dir/status"
}

running=0
for binary in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$binary" &
  running=$((running + 1))
done
wait

failed=()
for binary in "${targets[@]}"; do
  name="${binary##*/berth_fuzz_}"
  dir="$work/$name"
  status="$(cat "$dir/status" 2>/dev/null || echo 1)"
  # libFuzzer's last status line ("#N DONE cov: C ft: F corp: U/S ...") and final stats.
  done_line="$(grep -E '^#[0-9]+[[:space:]].* cov: ' "$dir/log" | tail -n 1 || true)"
  cov="$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$done_line")"
  ft="$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$done_line")"
  corp="$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$done_line")"
  execs="$(sed -nE 's/^stat::number_of_executed_units:[[:space:]]+([0-9]+)/\1/p' "$dir/log" | tail -n 1)"
  rate="$(sed -nE 's/^stat::average_exec_per_sec:[[:space:]]+([0-9]+)/\1/p' "$dir/log" | tail -n 1)"
  result=ok
  if [ "$status" != 0 ]; then
    result=FAILED
    failed+=("$name")
  fi
  printf '%-20s %-6s execs=%-9s exec/s=%-7s cov=%-6s ft=%-6s corpus=%s\n' "$name" "$result" \
    "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
done

if [ ${#failed[@]} -eq 0 ]; then
  rm -rf "$work"
  echo "fuzz: ${#targets[@]} targets, ${seconds} s each, no crashes"
  exit 0
fi

for name in "${failed[@]}"; do
  dir="$work/$name"
  echo
  echo "== berth_fuzz_$name failed (exit $(cat "$dir/status"))"
  for artifact in "$dir"/artifacts/*; do
    echo "reproducer: $artifact"
    echo "  rerun:    $build/bin/berth_fuzz_$name $artifact"
  done
  echo "-- last 60 lines of $dir/log"
  tail -n 60 "$dir/log"
done
echo
echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]} (work dir kept: $work)"
exit 1
