#!/usr/bin/env bash
# Session 2026-12-04 (ninth), call 2: the full run (tests, vectors, sanitizers, bench) on the kernels
# with the short-rows lean kernel adopted (call 1), its output packed into full.tgz.
set -u
bash tools/gpu-full-run.sh   # (these lines were inline when the call ran; the same commands)
