// ibp_gather/gather_flat.cuh: entries of raw chunks only (ibp_gather_flat).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- flat entries --------------------------------------------------------------------------------
//
// ibp_gather_flat: for an entry whose chunks are all raw (spec 5.5) with records of exactly row_bytes
// bytes and whose payloads the loader placed back to back (EntryLayout::flat_rows), entry row r is
// the row_bytes bytes at payload offset r * row_bytes: a gather is the uncompressed gather (the
// baseline ibp_raw_gather's loop) with each index checked and reported. Same parameters as
// ibp_gather; 128 threads per block, no shared memory. The host picks this kernel; the kernel itself
// reads only inside payload_size bytes and writes only out rows 0 .. count - 1.
extern "C" __global__ void __launch_bounds__(128)
ibp_gather_flat(const IbpGatherParams prm) {
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warps_per_block = blockDim.x >> 5;
    const ibp_u64 warps = (ibp_u64)gridDim.x * warps_per_block;
    const ibp_u64 rb = prm.row_bytes;
    // Rows whose row_bytes bytes lie inside the payload buffer (one division per thread, not per row).
    const ibp_u64 rows_inside = rb == 0 ? 0 : prm.payload_size / rb;
    for (ibp_u64 k = (ibp_u64)blockIdx.x * warps_per_block + (threadIdx.x >> 5); k < prm.count; k += warps) {
        const ibp_u64 row = request_row(prm, k);
        ibp_u32 code = IBP_STATUS_OK;
        if (row >= prm.entry_rows) code = IBP_STATUS_ROW_INDEX;
        else if (row >= rows_inside) code = IBP_STATUS_LAYOUT;
        if (code == IBP_STATUS_OK) warp_copy(prm.out + k * rb, prm.payload + row * rb, rb, lane);
        else if (lane == 0) ibp_report(prm.status, k, code);
    }
}
