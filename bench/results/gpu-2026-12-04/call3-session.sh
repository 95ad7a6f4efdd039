#!/usr/bin/env bash
# Session 2026-12-04, call 3: the full run (tests, vectors, sanitizers, bench) on the kernels with the
# stream window for words of <= 32 bits only (IBP_SLICE_BITBUF=2, the default after call 2), its
# output packed into full.tgz.
set -u
bash tools/gpu-full-run.sh   # (these lines were inline when the call ran; the same commands)
