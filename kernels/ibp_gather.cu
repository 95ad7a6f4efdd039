// ibp_gather.cu: IBP row decoder (spec section 6) for gathers and whole-chunk decodes.
//
// Launch shape: blocks of IBP_WARPS_PER_BLOCK warps (blockDim.x = 32 * IBP_WARPS_PER_BLOCK), any
// grid size (grid-stride over requests), dynamic shared memory = warps * params.stage_bytes.
// One warp decodes one requested row at a time: lane j of a round handles word 32*round + j.
// Overlap per warp: a row's record loads (16-byte, into registers) are issued before the next
// row's index lookups, and each round's Mask/Bitval loads are issued one round ahead.
//
// Reads: params.rows[0..count), chunks[0..chunk_count), anchors[0..anchor_count), meta[0..meta_size),
//        payload[0..payload_size) -- every index is checked before it is used.
// Writes: out[k*row_bytes .. (k+1)*row_bytes) for k < count, and on a failure the status block
//         (ibp_status.h: atomicMax on its word, then its host-visible flag).
// Invariants: never traps; a malformed record or index produces a status code, never an access outside
// the buffers above. The output row of a failing request is unspecified.
//
// Layout: this file holds the launch constants and the status report; the decode itself is in the
// parts ibp_gather/*.cuh, one per section, included below in order (each uses those before it).
// NVRTC compiles one source: ibp_status.h, then this file with each part put in place of its
// include (crates/ibp-gpu/src/kernels.rs, KernelModule::full_source; tools/nvrtc_report.py does the
// same). A C++ compiler reads the parts through the includes (kernels/host).

#define IBP_WARPS_PER_BLOCK 4  // a power of two (ibp_gather_split)
#define FULL_MASK 0xffffffffu
// A kernel's dynamic shared memory as the byte array `name` (kernels/host/cuda_host.h gives its own).
#ifndef IBP_DYNAMIC_SMEM
#define IBP_DYNAMIC_SMEM(name) extern __shared__ __align__(16) ibp_u8 name[]
#endif

// Records failure `code` of request `k` in the status block (ibp_status.h): the word keeps the lowest
// failing request, the host-visible flag says that one failed.
__device__ __forceinline__ void ibp_report(ibp_u64* status, ibp_u64 k, ibp_u32 code) {
    atomicMax(&status[IBP_STATUS_WORD], ~((k << 8) | (ibp_u64)code));
    const ibp_u64 flag = status[IBP_STATUS_FLAG];
    if (flag != 0) *(volatile ibp_u32*)flag = 1u;
}

#include "ibp_gather/words.cuh"
#include "ibp_gather/records.cuh"
#include "ibp_gather/copies.cuh"
#include "ibp_gather/sparse_rows.cuh"
#include "ibp_gather/tables.cuh"
#include "ibp_gather/pairs.cuh"
#include "ibp_gather/gather_rows.cuh"
#include "ibp_gather/gather_split.cuh"
#include "ibp_gather/gather_flat.cuh"
#include "ibp_gather/gather_tables.cuh"
#include "ibp_gather/tiles.cuh"
#include "ibp_gather/lean.cuh"
#include "ibp_gather/short_rows.cuh"
#include "ibp_gather/vector_lanes.cuh"
#include "ibp_gather/tile_kernels.cuh"
