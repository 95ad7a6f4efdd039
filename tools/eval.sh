#!/usr/bin/env bash
# Regenerates bench/RESULTS.md in one command (issue 7):
#   1. the real datasets (tools/datasets.py) if bench/data has none yet,
#   2. the CPU benchmark (crates/ibp-eval: IBP vs zstd / lz4 / none) -> bench/results/cpu.{json,csv},
#   3. a diagnostic pass with several Mask/Bitval groups on the small datasets -> cpu_groups.{json,csv},
#   4. the page and plots (tools/plot_results.py), merging the latest GPU result files
#      (bench/results/gpu_nvcomp.json from tools/gpu_eval_nvcomp.py, bench/GPU_RESULTS.md from ibp-gpu).
# Extra arguments go to ibp-eval-cpu (e.g. --only glove-6b-50d-f32 --no-sampled).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f bench/data/manifest.json ] || python3 tools/datasets.py
cargo build --release -p ibp-eval --bin ibp-eval-cpu
./target/release/ibp-eval-cpu bench/data --out bench/results/cpu.json "$@"
# Diagnostic pass: several Mask/Bitval groups per chunk, on the small datasets where one group falls short.
./target/release/ibp-eval-cpu bench/data --out bench/results/cpu_groups.json --no-sampled --groups 4,16,64 \
    --only fashion-mnist-test,fashion-mnist-test-f32,cora-features-f32
python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib
python3 tools/plot_results.py
