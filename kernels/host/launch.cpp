// launch.cpp: the decoder kernels of kernels/ibp_gather.cu run on the CPU (cuda_host.h), for the
// ibp-gpu feature `host-kernels` (crates/ibp-gpu/src/host.rs): same parameters, same launch shapes
// as the device launches in crates/ibp-gpu/src/launch.rs, every pointer a host address.
// One launch at a time (the emulated shared memory is global); each returns after the grid is done.
#include "../ibp_status.h"
#include "cuda_host.h"

#include <mutex>

#include "../ibp_gather.cu"

namespace {
std::mutex& launch_lock() {
    static std::mutex m;
    return m;
}
}  // namespace

extern "C" {

// ibp_gather: `blocks` blocks of IBP_WARPS_PER_BLOCK warps, `smem` bytes of dynamic shared memory.
void ibp_host_gather(const IbpGatherParams* p, unsigned blocks, unsigned smem) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(blocks, 32 * IBP_WARPS_PER_BLOCK, smem, [&] { ibp_gather(prm); });
}

// ibp_gather_sparse: as ibp_gather.
void ibp_host_gather_sparse(const IbpGatherParams* p, unsigned blocks, unsigned smem) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(blocks, 32 * IBP_WARPS_PER_BLOCK, smem, [&] { ibp_gather_sparse(prm); });
}

// ibp_gather_split: as ibp_gather, plus its warps-per-request exponent and words per warp.
void ibp_host_gather_split(const IbpGatherParams* p, ibp_u32 split_log2, ibp_u32 split_words, unsigned blocks,
                           unsigned smem) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(blocks, 32 * IBP_WARPS_PER_BLOCK, smem, [&] { ibp_gather_split(prm, split_log2, split_words); });
}

// ibp_gather_flat: `blocks` blocks of 4 warps, no shared memory.
void ibp_host_gather_flat(const IbpGatherParams* p, unsigned blocks) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(blocks, 128, 0, [&] { ibp_gather_flat(prm); });
}

// ibp_build_tables: one block of IBP_TILE_WARPS warps per chunk.
void ibp_host_build_tables(const IbpGatherParams* p, ibp_u64 tables_size) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(prm.chunk_count ? prm.chunk_count : 1, IBP_TILE_THREADS, 0, [&] { ibp_build_tables(prm, tables_size); });
}

// ibp_decode_tiles (kernel < 0), the lean kernel of shape `kernel` (0 any, 1 mid, 2 short, as
// LeanShape; 4 long, 5 vector lanes), or ibp_decode_tiles_pairs (3): `blocks` blocks of IBP_TILE_WARPS warps.
void ibp_host_decode_tiles(const IbpGatherParams* p, const ibp_u32* tile_starts, ibp_u32 tile_rows, ibp_u32 tile_bytes,
                           ibp_u32 table_entries, unsigned blocks, unsigned smem, int kernel) {
    std::lock_guard<std::mutex> g(launch_lock());
    const IbpGatherParams prm = *p;
    run_grid(blocks, IBP_TILE_THREADS, smem, [&] {
        switch (kernel) {
            case 0: ibp_decode_tiles_lean(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            case 1: ibp_decode_tiles_lean_mid(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            case 2: ibp_decode_tiles_lean_short(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            case 3: ibp_decode_tiles_pairs(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            case 4: ibp_decode_tiles_lean_long(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            case 5: ibp_decode_tiles_lean_vec(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
            default: ibp_decode_tiles(prm, tile_starts, tile_rows, tile_bytes, table_entries); break;
        }
    });
}

}  // extern "C"
