// ibp_gather/gather_tables.cuh: decode tables in device memory for ibp_gather (ibp_build_tables).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- decode tables in device memory, for ibp_gather ---------------------------------------------
//
// ibp_build_tables: block c writes the table of chunk c when prm.table_offsets[c] != ~0: G*n tmask
// entries, then G*n tinfo entries, at byte offset table_offsets[c] of prm.tables (tables_size bytes).
// Launched once when an entry is loaded; a chunk whose Mask/Bitval words or table fall outside their
// buffers is skipped (the loader never assigns such a chunk a table).
// A chunk's sparse table (sparse_rows.cuh) at byte offset off: for each group g and window r of 32
// positions, word g * ceil(n / 32) + r has bit i set when position 32r + i has free bits or a non-zero
// Bitval word.
__device__ __forceinline__ void build_sparse_table(const IbpGatherParams& prm, const IbpChunk& ch, ibp_u64 off,
                                                   ibp_u64 tables_size) {
    const ibp_u32 n = ch.words_per_row, wb = ch.word_bytes;
    const ibp_u64 windows = ((ibp_u64)n + 31) >> 5, words = (ibp_u64)ch.group_count * windows;
    const ibp_u64 words_bytes = (ibp_u64)ch.group_count * n * wb;
    if (words == 0 || (off & 3) || off > tables_size || words * 4 > tables_size - off) return;
    if (ch.masks_offset > prm.meta_size || 2 * words_bytes > prm.meta_size - ch.masks_offset) return;
    if (wb != 1 && wb != 2 && wb != 4 && wb != 8) return;
    const ibp_u8* const masks = prm.meta + ch.masks_offset;
    const ibp_u64 full = wb == 8 ? ~0ull : (1ull << (8 * wb)) - 1;
    ibp_u32* const out = (ibp_u32*)(prm.tables + off);
    for (ibp_u64 t = threadIdx.x; t < words; t += blockDim.x) {
        const ibp_u64 g = t / windows, r = t % windows;
        ibp_u32 bits = 0;
        for (ibp_u32 i = 0; i < 32 && 32 * r + i < n; i++) {
            const ibp_u64 at = g * n + 32 * r + i;
            ibp_u64 m, b;
            switch (wb) {
                case 1: m = load_word<1>(masks, at); b = load_word<1>(masks + words_bytes, at); break;
                case 2: m = load_word<2>(masks, at); b = load_word<2>(masks + words_bytes, at); break;
                case 4: m = load_word<4>(masks, at); b = load_word<4>(masks + words_bytes, at); break;
                default: m = load_word<8>(masks, at); b = load_word<8>(masks + words_bytes, at); break;
            }
            if ((~m & full) != 0 || b != 0) bits |= 1u << i;
        }
        out[t] = bits;
    }
}

extern "C" __global__ void __launch_bounds__(256)
ibp_build_tables(const IbpGatherParams prm, ibp_u64 tables_size) {
    const ibp_u32 c = blockIdx.x;
    if (c >= prm.chunk_count || !prm.table_offsets) return;
    const ibp_u64 off = prm.table_offsets[c];
    if (off == ~0ull) return;
    const IbpChunk& ch = prm.chunks[c];
    if (off & IBP_TABLE_SPARSE) {
        build_sparse_table(prm, ch, off & ~IBP_TABLE_SPARSE, tables_size);
        return;
    }
    const ibp_u64 entries = (ibp_u64)ch.group_count * ch.words_per_row;
    const ibp_u32 wb = ch.word_bytes;
    const ibp_u64 words_bytes = entries * wb;
    if (entries == 0 || (off & 15) || off > tables_size || entries * 32 > tables_size - off) return;
    if (ch.masks_offset > prm.meta_size || 2 * words_bytes > prm.meta_size - ch.masks_offset) return;
    uint4* const tmask = (uint4*)(prm.tables + off);
    uint4* const tinfo = tmask + entries;
    const ibp_u8* const masks = prm.meta + ch.masks_offset;
    for (ibp_u64 i = threadIdx.x; i < entries; i += blockDim.x) {
        uint4 tm, ti;
        switch (wb) {
            case 1: table_entry<1>(load_word<1>(masks, i), load_word<1>(masks + words_bytes, i), tm, ti); break;
            case 2: table_entry<2>(load_word<2>(masks, i), load_word<2>(masks + words_bytes, i), tm, ti); break;
            case 4: table_entry<4>(load_word<4>(masks, i), load_word<4>(masks + words_bytes, i), tm, ti); break;
            case 8: table_entry<8>(load_word<8>(masks, i), load_word<8>(masks + words_bytes, i), tm, ti); break;
            default: return;
        }
        tmask[i] = tm;
        tinfo[i] = ti;
    }
}
