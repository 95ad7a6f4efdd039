#!/usr/bin/env python3
"""Compile kernels/*.cu with NVRTC for sm_90 here (no GPU needed) and print ptxas' resource report
(registers, spills, stack frame, shared memory) per kernel: registers and spills are read without
device time.

    eval "$(bash tools/ci-nvrtc.sh)"          # NVRTC 13.0 from PyPI, as CI does
    python3 tools/nvrtc_report.py [-DNAME=VALUE ...] [--cubin DIR]

--cubin DIR also writes DIR/<file>.cubin, for `nvdisasm -g -c DIR/ibp_gather.cu.cubin` (line
numbers with each SASS instruction: where the spill loads `LDL` sit). nvdisasm comes with the PyPI
wheel nvidia-cuda-nvdisasm (pip install --target DIR nvidia-cuda-nvdisasm).

The source is assembled as crates/ibp-gpu/src/kernels.rs does (ibp_status.h, then the file with
its parts in place of their includes).
"""
import ctypes
import ctypes.util
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_nvrtc():
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        p = Path(d) / "libnvrtc.so.13"
        if p.exists():
            return ctypes.CDLL(str(p))
    name = ctypes.util.find_library("nvrtc")
    if not name:
        sys.exit("libnvrtc.so.13 not found: eval \"$(bash tools/ci-nvrtc.sh)\" first")
    return ctypes.CDLL(name)


def full_source(file: str) -> str:
    """ibp_status.h, then `file` with each `#include "ibp_gather/..."` replaced by that part's text,
    with #line directives (as KernelModule::full_source in crates/ibp-gpu/src/kernels.rs)."""
    kernels = ROOT / "kernels"
    out = [f'#line 1 "ibp_status.h"\n{(kernels / "ibp_status.h").read_text()}\n#line 1 "{file}"\n']
    for i, line in enumerate((kernels / file).read_text().splitlines()):
        m = re.fullmatch(r'\s*#include\s*"([^"]+)"\s*', line)
        if m and (kernels / m.group(1)).parent != kernels:
            text = (kernels / m.group(1)).read_text()
            out.append(f'#line 1 "{m.group(1)}"\n{text}{"" if text.endswith(chr(10)) else chr(10)}')
            out.append(f'#line {i + 2} "{file}"\n')
        else:
            out.append(line + "\n")
    return "".join(out)


def compile_one(lib, file: str, defines: list[str], cubin_dir: str | None = None) -> str:
    src = full_source(file).encode()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, file.encode(), 0, None, None)
    assert rc == 0, rc
    opts = ["--gpu-architecture=sm_90", "--std=c++17", "-lineinfo", "--ptxas-options=-v", *defines]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    if rc != 0:
        sys.exit(f"{file}: NVRTC error {rc}\n{text}")
    if cubin_dir:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, cubin)
        Path(cubin_dir).mkdir(parents=True, exist_ok=True)
        (Path(cubin_dir) / f"{file}.cubin").write_bytes(cubin.raw)
    return text


def main() -> int:
    lib = load_nvrtc()
    defines = [a for a in sys.argv[1:] if a.startswith("-D")]
    cubin_dir = sys.argv[sys.argv.index("--cubin") + 1] if "--cubin" in sys.argv else None
    for file in ("ibp_gather.cu", "ibp_baselines.cu"):
        log = compile_one(lib, file, defines, cubin_dir)
        kernel = None
        for line in log.splitlines():
            if "Compiling entry function" in line:
                kernel = line.split("'")[1]
            elif kernel and ("Used" in line or "spill" in line or "stack frame" in line):
                print(f"{file:18} {kernel:18} {line.split('info    :')[-1].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
