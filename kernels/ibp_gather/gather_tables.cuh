// ibp_gather/gather_tables.cuh: decode tables in device memory for ibp_gather (ibp_build_tables).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- decode tables in device memory, for ibp_gather ---------------------------------------------
//
// ibp_build_tables: block c writes the table of chunk c when prm.table_offsets[c] != ~0: G*n tmask
// entries, then G*n tinfo entries, at byte offset table_offsets[c] of prm.tables (tables_size bytes).
// Launched once when an entry is loaded; a chunk whose Mask/Bitval words or table fall outside their
// buffers is skipped (the loader never assigns such a chunk a table).
extern "C" __global__ void __launch_bounds__(256)
ibp_build_tables(const IbpGatherParams prm, ibp_u64 tables_size) {
    const ibp_u32 c = blockIdx.x;
    if (c >= prm.chunk_count || !prm.table_offsets) return;
    const ibp_u64 off = prm.table_offsets[c];
    if (off == ~0ull) return;
    const IbpChunk& ch = prm.chunks[c];
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
