#!/usr/bin/env bash
# Proves commcert's GPU stages on any machine with an NVIDIA GPU, driver and CUDA toolkit, in one
# go, and writes the evidence in a form ready to paste into docs/gpu-results.md:
#
#   1. builds commcert (CUDA on, MPI off: MPI may be missing there) in build-gpu-selftest/;
#   2. runs the GPU-only tests (ctest -L gpu), which skip nowhere when a GPU is present;
#   3. `commcert health` (the record of every GPU, IB port and the node's topology);
#   4. `commcert burn` on every GPU at once (60 s), then right after, while the GPUs are still
#      hot, a plain cuBLASLt GEMM of the same shape (commcert_plain_gemm): target >= 0.95;
#   5. `commcert membw` on every GPU: copy kernel vs cudaMemcpy device-to-device, target >= 0.95.
#
#   scripts/gpu-selftest.sh [OUT_DIR]            (default: gpu-selftest/)
#
# Environment: COMMCERT_SELFTEST_DURATION (burn seconds, default 60), COMMCERT_SELFTEST_KERNEL
# (default gemm_bf16), COMMCERT_SELFTEST_SIZE (default 8192), COMMCERT_SELFTEST_BUILD (build dir),
# CMAKE_CUDA_ARCHITECTURES (default: 80;90;100 plus this GPU's own).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
out=$(realpath -m "${1:-gpu-selftest}")
build=${COMMCERT_SELFTEST_BUILD:-build-gpu-selftest}
duration=${COMMCERT_SELFTEST_DURATION:-60}
kernel=${COMMCERT_SELFTEST_KERNEL:-gemm_bf16}
size=${COMMCERT_SELFTEST_SIZE:-8192}
run_id=selftest-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
log="$out/selftest.log"
: >"$log"

say() { printf '== %s\n' "$*" | tee -a "$log"; }
die() { printf 'gpu-selftest: %s\n' "$*" | tee -a "$log" >&2; exit 1; }

command -v nvidia-smi >/dev/null || die "nvidia-smi not found: this script needs a machine with an NVIDIA GPU and driver"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,compute_cap --format=csv,noheader \
  >"$out/gpus.csv" 2>>"$log" || die "nvidia-smi cannot list GPUs (see $log)"
[[ -s "$out/gpus.csv" ]] || die "nvidia-smi lists no GPU"
say "GPUs:"; sed 's/^/   /' "$out/gpus.csv" | tee -a "$log"

nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[[ -x "$nvcc" ]] || die "nvcc not found (set CUDACXX or put the CUDA toolkit's bin/ on PATH)"
command -v cmake >/dev/null || die "cmake not found"
command -v python3 >/dev/null || die "python3 not found (it writes the report)"

# The build needs fmt, nlohmann-json, CLI11, GoogleTest and Google Benchmark; on Debian/Ubuntu as
# root, scripts/bootstrap installs what is missing.
if command -v dpkg-query >/dev/null && [[ $(id -u) -eq 0 || -n $(command -v sudo) ]]; then
  scripts/bootstrap >>"$log" 2>&1 || say "bootstrap failed (see $log); trying the build anyway"
fi

archs=${CMAKE_CUDA_ARCHITECTURES:-}
if [[ -z $archs ]]; then
  archs="80;90;100"
  while IFS=, read -r _ _ _ _ cap; do
    cap=${cap// /}; cap=${cap/./}
    [[ -n $cap && ";$archs;" != *";$cap;"* ]] && archs="$archs;$cap"
  done <"$out/gpus.csv"
fi

say "build ($build, CUDA archs $archs, MPI off)"
generator=()
command -v ninja >/dev/null && [[ ! -f $build/CMakeCache.txt ]] && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCOMMCERT_WITH_CUDA=ON \
  -DCOMMCERT_WITH_MPI=OFF -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  >>"$log" 2>&1 || die "configure failed (see $log)"
cmake --build "$build" --parallel "$(nproc)" >>"$log" 2>&1 || die "build failed (see $log)"
bin="$root/$build/commcert"

say "GPU tests (ctest -L gpu)"
ctest --test-dir "$build" -L gpu --output-on-failure >"$out/ctest-gpu.log" 2>&1
gpu_tests=$?
tail -n 3 "$out/ctest-gpu.log" | tee -a "$log"
grep -q "Skipped" "$out/ctest-gpu.log" && say "warning: some GPU tests skipped (see $out/ctest-gpu.log)"

results="$out/results"
say "health"
"$bin" health --out "$results" --run-id "$run_id" >>"$log" 2>&1
health_rc=$?

say "burn: $kernel ${size}^3 on every GPU for ${duration}s"
"$bin" burn -g 0 --kernel "$kernel" --size "$size" --duration "$duration" --out "$results" \
  --run-id "$run_id" 2>&1 | tee -a "$log"
burn_rc=${PIPESTATUS[0]}

say "plain cuBLASLt GEMM, same shape, every GPU at once, 20s"
"$root/$build/commcert_plain_gemm" "$kernel" "$size" 20 all >"$out/plain_gemm.jsonl" 2>>"$log"
plain_rc=$?

say "membw on every GPU"
"$bin" membw -g 0 --out "$results" --run-id "$run_id" 2>&1 | tee -a "$log"
membw_rc=$?

python3 scripts/gpu-selftest-report "$results/$run_id" "$out" "$gpu_tests" "$health_rc" "$burn_rc" \
  "$plain_rc" "$membw_rc" "$kernel" "$size" "$duration"
say "report: $out/gpu-results.md (paste into docs/gpu-results.md); records: $results/$run_id"
status=0
for rc in "$gpu_tests" "$health_rc" "$burn_rc" "$plain_rc" "$membw_rc"; do [[ $rc -ne 0 ]] && status=1; done
exit $status
