// ibp_gather/tile_kernels.cuh: table building in shared memory, the tile loop and the ibp_decode_tiles* kernels.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// Builds the table of a chunk's `entries` (>= 1) positions. Every thread of the block must call it
// (it ends with a barrier); returns, in every thread, IBP_TABLE_UNIFORM_F when every entry has the
// same F, IBP_TABLE_NO_MULTI when none has 3+ runs, and (ONE_FLAG) IBP_TABLE_ONE_ENTRY when every
// position of every group has entry 0's Mask and Bitval.
template <int WB, bool ONE_FLAG = false>
__device__ __forceinline__ ibp_u32 build_table(const ibp_u8* masks, ibp_u64 words_bytes, ibp_u32 entries,
                                               uint4* tmask, uint4* tinfo) {
    const ibp_u64 wmask = WB == 8 ? ~0ull : ((1ull << (8 * WB)) - 1ull);
    const ibp_u64 mask0 = load_word<WB>(masks, 0), bitval0 = ONE_FLAG ? load_word<WB>(masks + words_bytes, 0) : 0ull;
    const int f_first = __popcll(~mask0 & wmask);
    bool uniform = true, no_multi = true, one = true;
    for (ibp_u32 i = threadIdx.x; i < entries; i += IBP_TILE_THREADS) {
        uint4 tm, ti;
        const ibp_u64 mask = load_word<WB>(masks, i), bitval = load_word<WB>(masks + words_bytes, i);
        table_entry<WB>(mask, bitval, tm, ti);
        tmask[i] = tm;
        tinfo[i] = ti;
        uniform &= (int)entry_free_bits(ti) == f_first;
        no_multi &= (ti.w & IBP_TILE_MULTI) == 0;
        if (ONE_FLAG) one &= mask == mask0 && bitval == bitval0;
    }
    const bool all_uniform = __syncthreads_and(uniform) != 0;
    const bool none_multi = __syncthreads_and(no_multi) != 0;
    const bool all_one = ONE_FLAG && __syncthreads_and(one) != 0;
    return (all_uniform ? IBP_TABLE_UNIFORM_F : 0u) | (none_multi ? IBP_TABLE_NO_MULTI : 0u) | (all_one ? IBP_TABLE_ONE_ENTRY : 0u);
}

// Builds the pair table of a chunk of HW-bit words (G groups of n words: G * ceil(n/2) entries; see
// "32-bit and 16-bit words decoded in pairs"). Every thread of the block must call it; returns
// IBP_TABLE_NO_MULTI when no pair entry has IBP_TILE_MULTI.
template <int HW>
__device__ __forceinline__ ibp_u32 build_pair_table(const ibp_u8* masks, ibp_u64 words_bytes, ibp_u32 G, ibp_u32 n,
                                                    uint4* tmask, uint4* tinfo) {
    const ibp_u32 P = (n + 1) >> 1;
    // A half's bits above the word are invariant zeros (Mask set, Bitval clear): no free bits there.
    const ibp_u64 above = HW == 32 ? 0ull : 0xffff0000ull;
    bool no_multi = true;
    for (ibp_u32 i = threadIdx.x; i < G * P; i += IBP_TILE_THREADS) {
        const ibp_u32 g = i / P, k = i - g * P, lo = g * n + 2 * k;
        const bool has_hi = 2 * k + 1 < n;
        const ibp_u64 m = (load_word<HW / 8>(masks, lo) | above) |
                          ((has_hi ? load_word<HW / 8>(masks, lo + 1) | above : 0xffffffffull) << 32);
        const ibp_u64 b = load_word<HW / 8>(masks + words_bytes, lo) |
                          ((has_hi ? load_word<HW / 8>(masks + words_bytes, lo + 1) : 0ull) << 32);
        uint4 tm, ti;
        table_entry<8>(m, b, tm, ti);
        tmask[i] = tm;
        tinfo[i] = ti;
        no_multi &= (ti.w & IBP_TILE_MULTI) == 0;
    }
    return __syncthreads_and(no_multi) != 0 ? IBP_TABLE_NO_MULTI : 0u;
}

// IBP_TILE_CHUNK_CACHE: a block finds the chunk of its next tile without a search while the tile is in
// the chunk of the one before. IBP_TILE_LEN_UNROLL: a thread's stored record lengths of a tile are
// read with no early exit, their loads in flight together. (0: as before, A/B.)
#ifndef IBP_TILE_CHUNK_CACHE
#define IBP_TILE_CHUNK_CACHE 1
#endif
#ifndef IBP_TILE_LEN_UNROLL
#define IBP_TILE_LEN_UNROLL 1
#endif
// IBP_TILE_CARRY_START: a tile's first record offset comes from the tile before it in the block's run
// (same chunk: that tile's start + its records' lengths) instead of the anchor and the lengths before
// it (0: always the anchor chain, A/B; GPU_NOTES entry 57).
#ifndef IBP_TILE_CARRY_START
#define IBP_TILE_CARRY_START 1
#endif
// The lean kernels' row decoders for by_word_width: Rows::run<WB, MULTI> decodes a tile's rows of
// WB-byte words (MULTI: the table has entries with 3+ runs of free bits); WIDEST is the widest word
// the decoder is built for.
struct LaneRows {
    static constexpr int WIDEST = 4;
    template <int WB, bool MULTI>
    static __device__ __forceinline__ void run(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
        lane_tile_rows<WB, MULTI>(prm, t, warp, lane);
    }
};
template <bool LONG, bool ONE = false>
struct SliceRows {
    static constexpr int WIDEST = 8;
    template <int WB, bool MULTI>
    static __device__ __forceinline__ void run(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
        slice_tile_rows<WB, MULTI, LONG, ONE>(prm, t, warp, lane);
    }
};
struct SmallRows {  // (MULTI unused: decode_small_rows reads no table entry with 3+ runs)
    static constexpr int WIDEST = 8;
    template <int WB, bool MULTI>
    static __device__ __forceinline__ void run(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
        decode_small_rows<WB>(prm, t, warp, lane);
    }
};
template <int SHAPE>
struct LeanRows {
    static constexpr int WIDEST = 8;
    template <int WB, bool MULTI>
    static __device__ __forceinline__ void run(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
        lean_tile_rows<WB, MULTI, SHAPE>(prm, t, warp, lane);
    }
};

// Runs Rows::run<WB, MULTI> for a chunk's word width wb (1, 2, 4, else Rows::WIDEST) and multi.
template <class Rows>
__device__ __forceinline__ void by_word_width(ibp_u32 wb, bool multi, const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp,
                                              ibp_u32 lane) {
    if (!multi) switch (wb) {
        case 1: Rows::template run<1, false>(prm, t, warp, lane); break;
        case 2: Rows::template run<2, false>(prm, t, warp, lane); break;
        case 4: if (Rows::WIDEST > 4) { Rows::template run<4, false>(prm, t, warp, lane); break; } [[fallthrough]];
        default: Rows::template run<Rows::WIDEST, false>(prm, t, warp, lane); break;
    } else switch (wb) {
        case 1: Rows::template run<1, true>(prm, t, warp, lane); break;
        case 2: Rows::template run<2, true>(prm, t, warp, lane); break;
        case 4: if (Rows::WIDEST > 4) { Rows::template run<4, true>(prm, t, warp, lane); break; } [[fallthrough]];
        default: Rows::template run<Rows::WIDEST, true>(prm, t, warp, lane); break;
    }
}

// The body of the ibp_decode_tiles* kernels (LEAN false: SHAPE is IBP_TILES_ANY or IBP_TILES_PAIRS)
// and the ibp_decode_tiles_lean* kernels (LEAN true: the lean row decoder for rows of SHAPE,
// IBP_LEAN_ANY, IBP_LEAN_MID or IBP_LEAN_SHORT).
template <bool LEAN, int SHAPE>
__device__ __forceinline__ void decode_tiles_body(const IbpGatherParams& prm, const ibp_u32* tile_starts, ibp_u32 tile_rows,
                                                  ibp_u32 tile_bytes, ibp_u32 table_entries) {
    IBP_DYNAMIC_SMEM(tile_smem);
    // Payload offset (within the chunk) of the first record of tile t, in slot t & 1: a tile's start
    // is read by every thread while thread 0 may already write the next tile's (IBP_TILE_CARRY_START).
    __shared__ ibp_u64 s_tile_start[2];
    __shared__ ibp_u32 s_warp_sums[IBP_TILE_WARPS];
    __shared__ ibp_u32 s_bad_tile;     // tile + 1 of the last tile found malformed (no reset needed)
    __shared__ ibp_u32 s_carry_tile;   // the tile whose start the tile before it wrote (else not a tile of the run)
    ibp_u8* const tile_buf = tile_smem + IBP_TILE_GUARD;
    ibp_u32* const offsets = (ibp_u32*)(tile_buf + tile_bytes);
    ibp_u8* const table = (ibp_u8*)offsets + ((4 * (tile_rows + 1) + 15) & ~15u);
    uint4* const tmask = (uint4*)table;
    uint4* const tinfo = tmask + table_entries;
    const ibp_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const ibp_u32 total_tiles = tile_starts[prm.chunk_count];
    const ibp_u64 range_end = prm.first_row + prm.count;
    ibp_u32 table_chunk = ~0u;  // chunk whose table is in shared memory (same in every thread)
    bool table_ok = false;
    ibp_u32 table_flags = 0;  // IBP_TABLE_* of the current table
    bool table_pairs = false;  // the current table is a pair table
#if IBP_LONG_VECTOR_LANES
    // The long-rows kernel's vector table of the current chunk (vl_build, vector_lanes), its IBP_VL_* flags,
    // and (layouts 3 and 4) each position's 16 - F and fourth run.
    // (The vector-lanes kernel, IBP_LEAN_VEC, has these tables and no per-position table tmask/tinfo.)
    constexpr bool VL = SHAPE == IBP_LEAN_LONG || SHAPE == IBP_LEAN_VEC;
    __shared__ uint4 vl_table[VL ? IBP_VL_POSITIONS : 1];
    __shared__ __align__(8) ibp_u8 vl_saved[VL && IBP_LONG_VECTOR_LANES >= 3 ? IBP_VL_POSITIONS : 8];
    __shared__ ibp_u32 vl_run3[VL && IBP_LONG_VECTOR_LANES >= 3 ? IBP_VL_POSITIONS : 1];
    ibp_u32 vl_flags = 0;
#endif
    if (threadIdx.x == 0) {
        s_bad_tile = 0;
        s_carry_tile = ~0u;
    }
    __syncthreads();
    // Each block takes a contiguous run of ceil(tiles / blocks) tiles, so that consecutive tiles
    // share a chunk (and its table); the last blocks may get none. IBP_TILE_EVEN_RUNS=1 gives every
    // block floor or ceil(tiles / blocks) tiles instead: measured 0-6 % slower (GPU_NOTES entry 25).
#ifndef IBP_TILE_EVEN_RUNS
#define IBP_TILE_EVEN_RUNS 0
#endif
#if IBP_TILE_EVEN_RUNS
    const ibp_u64 run_begin = (ibp_u64)blockIdx.x * total_tiles / gridDim.x;
    const ibp_u64 run_end = ((ibp_u64)blockIdx.x + 1) * total_tiles / gridDim.x;
#else
    const ibp_u64 per_block = ((ibp_u64)total_tiles + gridDim.x - 1) / gridDim.x;
    const ibp_u64 run_begin = (ibp_u64)blockIdx.x * per_block;
    const ibp_u64 run_end = run_begin + per_block < total_tiles ? run_begin + per_block : (ibp_u64)total_tiles;
#endif
    // The chunk of the block's previous tile and the first tile after it (tiles of a run mostly share
    // a chunk: the binary search's chain of dependent loads is made once per chunk, not per tile).
    ibp_u32 run_chunk = ~0u, run_chunk_next = 0;
    for (ibp_u64 tile64 = run_begin; tile64 < run_end; tile64++) {
        const ibp_u32 tile = (ibp_u32)tile64;
        // Chunk of the tile: last c with tile_starts[c] <= tile (tiles increase along the run, so
        // while tile < tile_starts[run_chunk + 1] it is still run_chunk: every later chunk starts
        // at or after that tile).
        ibp_u32 lo = 0;
        if (IBP_TILE_CHUNK_CACHE && run_chunk != ~0u && tile < run_chunk_next) {
            lo = run_chunk;
        } else {
            ibp_u32 hi = prm.chunk_count;
            while (hi - lo > 1) {
                ibp_u32 mid = (lo + hi) >> 1;
                if (tile_starts[mid] <= tile) lo = mid; else hi = mid;
            }
            run_chunk = lo;
            run_chunk_next = tile_starts[lo + 1];  // (tile_starts has chunk_count + 1 entries)
        }
        const IbpChunk& c = prm.chunks[lo];
        const ibp_u64 chunk_first = c.first_row, chunk_end = chunk_first + c.row_count;
        const ibp_u64 seg_first = prm.first_row > chunk_first ? prm.first_row : chunk_first;  // in entry rows
        const ibp_u64 seg_end = range_end < chunk_end ? range_end : chunk_end;
        const ibp_u64 t_first = seg_first + (ibp_u64)(tile - tile_starts[lo]) * tile_rows;
        if (t_first >= seg_end) continue;  // (cannot happen with a consistent tile table)
        const ibp_u64 t_end = t_first + tile_rows < seg_end ? t_first + tile_rows : seg_end;
        const ibp_u32 nrows = (ibp_u32)(t_end - t_first);
        const ibp_u64 r0 = t_first - chunk_first;  // row within the chunk
        const ibp_u32 lb = c.length_bytes, align_log2 = c.align_log2;
        const ibp_u32 G = c.group_count, n = c.words_per_row, wb = c.word_bytes;
        const ibp_u64 words_bytes = (ibp_u64)G * n * wb;
        const bool meta_ok = c.masks_offset <= prm.meta_size && 2 * words_bytes <= prm.meta_size - c.masks_offset;
        // 0. Tables of the chunk's positions (the previous tile's rows are done: barrier at loop end).
        if (lo != table_chunk) {
            table_chunk = lo;
            const ibp_u64 entries = (ibp_u64)G * n;
            table_ok = G >= 1 && entries >= 1 && meta_ok && (SHAPE == IBP_LEAN_VEC || entries <= table_entries) &&
                       (wb == 1 || wb == 2 || wb == 4 || wb == 8);
            // Whole 32-bit or 16-bit words, more than the several-rows-per-warp path takes, in the general
            // kernel: a pair table (the lean kernel measured slower with pairs: GPU_NOTES entry 20).
            table_pairs = !LEAN && ((IBP_TILE_W32_PAIRS && wb == 4) || (IBP_TILE_W16_PAIRS && wb == 2)) &&
                          n > IBP_TILE_SMALL_ROWS && (ibp_u64)n * wb == prm.row_bytes;
            if (table_ok && table_pairs) {
                table_flags = wb == 4 ? build_pair_table<32>(prm.meta + c.masks_offset, words_bytes, G, n, tmask, tinfo)
                                      : build_pair_table<16>(prm.meta + c.masks_offset, words_bytes, G, n, tmask, tinfo);
            } else if (table_ok && !(!LEAN && SHAPE == IBP_TILES_PAIRS) && !(LEAN && SHAPE == IBP_LEAN_VEC)) {
                const ibp_u8* masks = prm.meta + c.masks_offset;
                constexpr bool one_flag = LEAN && SHAPE == IBP_LEAN_SHORT && IBP_SLICE_ONE_ENTRY;
                switch (wb) {
                    case 1: table_flags = build_table<1, one_flag>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    case 2: table_flags = build_table<2, one_flag>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    case 4: table_flags = build_table<4, one_flag>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    default: table_flags = build_table<8, one_flag>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                }
            }
#if IBP_LONG_VECTOR_LANES
            vl_flags = 0;
            if ((SHAPE == IBP_LEAN_LONG || SHAPE == IBP_LEAN_VEC) && table_ok && G == 1 && wb == 2 && n <= IBP_VL_POSITIONS)
                vl_flags = vl_build(prm.meta + c.masks_offset, words_bytes, n, vl_table, vl_saved, vl_run3);
#endif
        }
        // 1. Offset of the tile's first record: anchor + lengths of rows (r0 & ~31) .. r0 - 1 (warp 0),
        // unless the tile before it in the run, in the same chunk, left it (its start + its records).
        if (warp == 0 && !(IBP_TILE_CARRY_START && s_carry_tile == tile)) {
            const ibp_u64 anchor = c.anchors_index + (r0 >> 5);
            const ibp_u32 r_lane = (ibp_u32)(r0 & 31);
            ibp_u64 units = 0;
            bool ok = anchor < prm.anchor_count;
            if (lane < r_lane) {
                const ibp_u64 idx = (r0 & ~31ull) + lane;
                const ibp_u64 at = c.lengths_offset + idx * lb;
                if (!stored_len_inside(c.lengths_offset, idx, lb, prm.meta_size)) ok = false;
                else units = (ibp_u64)c.length_base + read_stored_len(prm.meta + at, lb);
            }
            ibp_u64 before = units << align_log2;
#pragma unroll
            for (int d = 16; d > 0; d >>= 1) before += __shfl_xor_sync(FULL_MASK, before, d);
            ok = __all_sync(FULL_MASK, ok);
            if (lane == 0) {
                if (ok) s_tile_start[tile & 1] = prm.anchors[anchor] + before;
                else s_bad_tile = tile + 1;
            }
        }
        // 2. Record lengths of the tile's rows -> exclusive scan -> offsets[0..nrows].
        const ibp_u32 per = (nrows + IBP_TILE_THREADS - 1) / IBP_TILE_THREADS;  // consecutive rows per thread
        const ibp_u32 my0 = threadIdx.x * per;
        ibp_u32 my_sum = 0;
        bool ok = true;
#if IBP_TILE_LEN_UNROLL
        // No early exit, so the (up to 4, tiles of <= 1024 rows) loads of a thread are in flight at once.
#pragma unroll 4
        for (ibp_u32 i = 0; i < per; i++) {
            const ibp_u32 row = my0 + i;
            if (row < nrows) {
                const bool inside = stored_len_inside(c.lengths_offset, r0 + row, lb, prm.meta_size);
                const ibp_u64 len = inside ? ((ibp_u64)c.length_base +
                                              read_stored_len(prm.meta + c.lengths_offset + (r0 + row) * lb, lb)) << align_log2
                                           : 0;
                ok = ok && len != 0 && len <= c.raw_padded;
                my_sum += ok ? (ibp_u32)len : 0u;
            }
        }
#else
        for (ibp_u32 i = 0; i < per; i++) {
            const ibp_u32 row = my0 + i;
            if (row < nrows) {
                const ibp_u64 at = c.lengths_offset + (r0 + row) * lb;
                if (!stored_len_inside(c.lengths_offset, r0 + row, lb, prm.meta_size)) { ok = false; break; }
                const ibp_u64 len = ((ibp_u64)c.length_base + read_stored_len(prm.meta + at, lb)) << align_log2;
                if (len == 0 || len > c.raw_padded) { ok = false; break; }
                my_sum += (ibp_u32)len;
            }
        }
#endif
        ibp_u32 x = my_sum;  // block exclusive scan of my_sum
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= (ibp_u32)d) x += y;
        }
        if (lane == 31) s_warp_sums[warp] = x;
        if (!ok) s_bad_tile = tile + 1;
        __syncthreads();
        ibp_u32 base = 0, total = 0;
#pragma unroll
        for (ibp_u32 w = 0; w < IBP_TILE_WARPS; w++) {
            const ibp_u32 sw = s_warp_sums[w];
            if (w < warp) base += sw;
            total += sw;
        }
        const ibp_u64 start = s_tile_start[tile & 1];
        // The tile must lie inside the chunk's payload and fit the shared-memory buffer.
        const bool tile_ok = s_bad_tile != tile + 1 && start <= c.payload_len && total <= c.payload_len - start &&
                             c.payload_offset <= prm.payload_size && c.payload_len <= prm.payload_size - c.payload_offset &&
                             ((total + 30) & ~15ull) + 16 <= tile_bytes;
        if (!tile_ok) {
            if (threadIdx.x == 0) ibp_report(prm.status, t_first - prm.first_row, IBP_STATUS_LAYOUT);
            __syncthreads();
            continue;
        }
        const ibp_u8* src = prm.payload + c.payload_offset + start;
        // The next tile of the run, if in this chunk, starts where this tile's records end
        // (IBP_TILE_CARRY_START).
        const bool next_in_chunk = tile64 + 1 < run_end && tile + 1 < run_chunk_next;
        if (IBP_TILE_CARRY_START && threadIdx.x == 0 && next_in_chunk) {
            s_tile_start[(tile + 1) & 1] = start + total;
            s_carry_tile = tile + 1;
        }
        ibp_u8* const out_tile = prm.out + (t_first - prm.first_row) * (ibp_u64)prm.row_bytes;
        // 3a. Every row raw with no padding: the records are the output rows; copy them directly,
        // IBP_RAW_TILE_VECS 16-byte loads in flight per thread.
#ifndef IBP_RAW_TILE_VECS
#define IBP_RAW_TILE_VECS 2  // 3 and 4 spill in the copy loop with the other defaults (GPU_NOTES entry 27)
#endif
        if ((ibp_u64)total == (ibp_u64)nrows * c.raw_padded && c.raw_padded == prm.row_bytes &&
            ((((size_t)src) | ((size_t)out_tile)) & 15) == 0) {
            const uint4* s = (const uint4*)src;
            uint4* d = (uint4*)out_tile;
            const ibp_u32 vecs = total >> 4;
            for (ibp_u32 i0 = threadIdx.x; i0 < vecs; i0 += IBP_RAW_TILE_VECS * IBP_TILE_THREADS) {
                uint4 v[IBP_RAW_TILE_VECS];
#pragma unroll
                for (int u = 0; u < IBP_RAW_TILE_VECS; u++) {
                    const ibp_u32 i = i0 + u * IBP_TILE_THREADS;
                    if (i < vecs) v[u] = s[i];
                }
#pragma unroll
                for (int u = 0; u < IBP_RAW_TILE_VECS; u++) {
                    const ibp_u32 i = i0 + u * IBP_TILE_THREADS;
                    if (i < vecs) d[i] = v[u];
                }
            }
            for (ibp_u32 b = (vecs << 4) + threadIdx.x; b < total; b += IBP_TILE_THREADS) out_tile[b] = src[b];
            __syncthreads();  // s_warp_sums and s_tile_start are rewritten by the next tile
            continue;
        }
        // 3b. The tile's compressed bytes (the 16-byte vectors covering them) into shared memory, with
        // asynchronous copies that need no registers (IBP_TILE_CP_ASYNC, sm_80 and later), in flight
        // while the offsets are written; else through registers, four 16-byte loads per thread at once.
        {
            ibp_u64 vecs64;
            const uint4* s = stage_span(src, total, vecs64);
            const ibp_u32 vecs = (ibp_u32)vecs64;  // <= tile_bytes / 16
#if IBP_TILE_CP_ASYNC
            const ibp_smem_addr d0 = smem_addr(tile_buf);
            for (ibp_u32 i = threadIdx.x; i < vecs; i += IBP_TILE_THREADS) cp_async16(d0 + 16 * i, s + i);
#else
            uint4* d = (uint4*)tile_buf;
            for (ibp_u32 i0 = threadIdx.x; i0 < vecs; i0 += 4 * IBP_TILE_THREADS) {
                uint4 v[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const ibp_u32 i = i0 + u * IBP_TILE_THREADS;
                    if (i < vecs) v[u] = s[i];
                }
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const ibp_u32 i = i0 + u * IBP_TILE_THREADS;
                    if (i < vecs) d[i] = v[u];
                }
            }
#endif
        }
        ibp_u32 run = base + x - my_sum;
        for (ibp_u32 i = 0; i < per; i++) {
            const ibp_u32 row = my0 + i;
            if (row < nrows) {
                offsets[row] = run;
                const ibp_u64 at = c.lengths_offset + (r0 + row) * lb;
                if (stored_len_inside(c.lengths_offset, r0 + row, lb, prm.meta_size)) run += (ibp_u32)(((ibp_u64)c.length_base + read_stored_len(prm.meta + at, lb)) << align_log2);
            }
        }
        if (threadIdx.x == 0) offsets[nrows] = total;
#if IBP_TILE_CP_ASYNC
        cp_async_wait_all();
#endif
        __syncthreads();
        // 4. One warp per row, decoding from shared memory.
        TileCtx t;
        t.tile = tile_buf;
        t.skew = (ibp_u32)((size_t)src & 15);
        t.offsets = offsets;
        t.tmask = tmask;
        t.tinfo = tinfo;
        t.use_table = table_ok;
        t.uniform_f = (table_flags & IBP_TABLE_UNIFORM_F) != 0;
        t.no_multi = (table_flags & IBP_TABLE_NO_MULTI) != 0;
        t.masks = prm.meta + c.masks_offset;
        t.words_bytes = words_bytes;
        t.groups = c.groups_offset;
        t.r0 = r0;
        t.k0 = t_first - prm.first_row;
        t.nrows = nrows;
        t.n = n;
        t.G = G;
        t.raw_padded = c.raw_padded;
        t.align_log2 = align_log2;
        t.meta_ok = meta_ok;
        t.n_ok = n != 0 && (ibp_u64)(n - 1) * wb < prm.row_bytes && (ibp_u64)n * wb >= prm.row_bytes;
        t.pairs = table_ok && table_pairs;
        t.one_entry = LEAN && SHAPE == IBP_LEAN_SHORT && (table_flags & IBP_TABLE_ONE_ENTRY) != 0;
        if (LEAN) {
            // The host launches a lean kernel only for entries whose chunks all allow it (raw chunks,
            // or tables of rows of <= 64 whole words, of the kernel's SHAPE); anything else is reported.
            // (The short-rows kernel takes coded chunks of thread-path rows only, not raw chunks.)
#define IBP_LEAN_THREAD_PATH                                                                              \
    (G != 0 && ((IBP_LEAN_THREAD_ROWS && n <= IBP_LEAN_THREAD_ROWS) ||                                    \
                (IBP_LEAN_THREAD_BYTES && (align_log2 == 0 || !IBP_LEAN_THREAD_A1_ONLY) && n <= 32 &&      \
                 prm.row_bytes <= IBP_LEAN_THREAD_BYTES)))
            // (The long-rows kernel takes coded chunks of whole words of any row length, not raw chunks.)
            const bool shape_ok = SHAPE == IBP_LEAN_ANY || SHAPE == IBP_LEAN_LONG || SHAPE == IBP_LEAN_VEC ||
                                  (SHAPE == IBP_LEAN_MID ? n > 32 : IBP_LEAN_THREAD_PATH);
            const bool lean = (table_ok && t.n_ok && (n <= 64 || SHAPE == IBP_LEAN_LONG || SHAPE == IBP_LEAN_VEC) && shape_ok && prm.row_bytes == n * wb) ||
                              (G == 0 && SHAPE != IBP_LEAN_SHORT && SHAPE != IBP_LEAN_LONG && SHAPE != IBP_LEAN_VEC);
#if IBP_LONG_VECTOR_LANES
            // Vector lanes (the vector-lanes kernel takes no other tile): the chunk's vector table was
            // built (one group of at most IBP_VL_POSITIONS 16-bit words, at most four runs each), rows
            // of whole 16-byte vectors, the output aligned.
            const bool vector_rows = (vl_flags & IBP_VL_OK) && ((prm.row_bytes | (ibp_u32)(size_t)prm.out) & 15u) == 0;
#else
            const bool vector_rows = false;
#endif
            if (!lean || (SHAPE == IBP_LEAN_VEC && !vector_rows)) {
                for (ibp_u32 row = threadIdx.x; row < nrows; row += IBP_TILE_THREADS) ibp_report(prm.status, t.k0 + row, IBP_STATUS_LAYOUT);
#if IBP_LONG_VECTOR_LANES
            } else if (SHAPE == IBP_LEAN_LONG && (vl_flags & IBP_VL_OK) && ((prm.row_bytes | (ibp_u32)(size_t)prm.out) & 15u) == 0) {
                vector_lanes(prm, t, vl_table, vl_saved, vl_run3, vl_flags, warp, lane);
            } else if (SHAPE == IBP_LEAN_VEC) {  // (vector_rows, checked above)
                vector_lanes(prm, t, vl_table, vl_saved, vl_run3, vl_flags, warp, lane);
#endif
            } else if (SHAPE == IBP_LEAN_VEC) {
                // (Not reached: the check above lets only vector rows through. The branch ends the
                // chain at compile time, so the vector-lanes kernel holds no other row decoder.)
            } else if (SHAPE == IBP_LEAN_LONG && IBP_LONG_LANE_ROWS && wb <= 4 && ((prm.row_bytes | (ibp_u32)(size_t)prm.out) & 15u) == 0) {
                by_word_width<LaneRows>(wb, !t.no_multi, prm, t, warp, lane);
            } else if (SHAPE == IBP_LEAN_LONG) {
                by_word_width<SliceRows<true>>(wb, !t.no_multi, prm, t, warp, lane);
            } else if (SHAPE == IBP_LEAN_SHORT && IBP_SLICE_ONE_ENTRY && t.one_entry && t.no_multi && IBP_LEAN_THREAD_PATH) {
                by_word_width<SliceRows<false, true>>(wb, false, prm, t, warp, lane);
            } else if (SHAPE != IBP_LEAN_MID && IBP_LEAN_THREAD_PATH) {
                by_word_width<SliceRows<false>>(wb, !t.no_multi, prm, t, warp, lane);
            } else if (SHAPE == IBP_LEAN_SHORT) {
                // (Not reached: the lean check above lets only thread-path rows through. The branch
                // ends the chain at compile time, so the short kernel holds no other row decoder.)
            } else if (IBP_LEAN_SMALL_ROWS && SHAPE != IBP_LEAN_MID && G != 0 && (t.uniform_f || IBP_SMALL_ROWS_ANY_F) &&
                       n <= IBP_TILE_SMALL_ROWS) {
                by_word_width<SmallRows>(wb, false, prm, t, warp, lane);
            } else {
                by_word_width<LeanRows<SHAPE>>(wb, !(G == 0 || t.no_multi), prm, t, warp, lane);
            }
#undef IBP_LEAN_THREAD_PATH
        } else if (SHAPE == IBP_TILES_PAIRS) {
            // The host launches this kernel only for entries whose coded chunks all have pair tables.
            if (G != 0 && !t.pairs) {
                for (ibp_u32 row = threadIdx.x; row < nrows; row += IBP_TILE_THREADS) ibp_report(prm.status, t.k0 + row, IBP_STATUS_LAYOUT);
            } else if (wb == 2) {
                decode_tile_rows<2, true>(prm, t, warp, lane);
            } else {
                decode_tile_rows<4, true>(prm, t, warp, lane);  // (a raw chunk's rows are copied whatever its W)
            }
        } else {
            switch (wb) {
                case 1: decode_tile_rows<1>(prm, t, warp, lane); break;
                case 2: decode_tile_rows<2>(prm, t, warp, lane); break;
                case 4: decode_tile_rows<4>(prm, t, warp, lane); break;
                default: decode_tile_rows<8>(prm, t, warp, lane); break;
            }
        }
        __syncthreads();  // the tile buffer, offsets and table are reused
    }
}

extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_TILE_MIN_BLOCKS)
ibp_decode_tiles(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows, ibp_u32 tile_bytes,
                 ibp_u32 table_entries) {
    decode_tiles_body<false, IBP_TILES_ANY>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}

// Ranges of an entry whose coded chunks all have pair tables (the host checks; IBP_TILES_PAIRS).
#ifndef IBP_TILES_PAIRS_KERNEL
#define IBP_TILES_PAIRS_KERNEL 1  // 0: ibp_decode_tiles_pairs is built as ibp_decode_tiles (A/B)
#endif
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_TILE_MIN_BLOCKS)
ibp_decode_tiles_pairs(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows, ibp_u32 tile_bytes,
                       ibp_u32 table_entries) {
    decode_tiles_body<false, (IBP_TILES_PAIRS_KERNEL && IBP_TILE_W32_PAIRS && IBP_TILE_W16_PAIRS) ? IBP_TILES_PAIRS
                                                                                                : IBP_TILES_ANY>(
        prm, tile_starts, tile_rows, tile_bytes, table_entries);
}

// Ranges of an entry whose coded chunks all have rows of <= 64 whole words (the host checks; a tile
// the kernel cannot take is reported E_LAYOUT): _lean for rows of any of these lengths, _lean_mid
// when every coded chunk has rows of 33 .. 64 words, _lean_short (below) when every chunk is coded
// with rows of the thread path.
#ifndef IBP_LEAN_MIN_BLOCKS
#define IBP_LEAN_MIN_BLOCKS 4
#endif
#if IBP_LEAN_SHAPED
#define IBP_LEAN_SHAPE_OF(shape) (shape)
#else
#define IBP_LEAN_SHAPE_OF(shape) IBP_LEAN_ANY
#endif
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_LEAN_MIN_BLOCKS)
ibp_decode_tiles_lean(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows, ibp_u32 tile_bytes,
                      ibp_u32 table_entries) {
    decode_tiles_body<true, IBP_LEAN_ANY>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_LEAN_MIN_BLOCKS)
ibp_decode_tiles_lean_mid(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows,
                          ibp_u32 tile_bytes, ibp_u32 table_entries) {
    decode_tiles_body<true, IBP_LEAN_SHAPE_OF(IBP_LEAN_MID)>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}
#ifndef IBP_LEAN_SHORT_MIN_BLOCKS
#define IBP_LEAN_SHORT_MIN_BLOCKS 3
#endif
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_LEAN_SHORT_MIN_BLOCKS)
ibp_decode_tiles_lean_short(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows,
                            ibp_u32 tile_bytes, ibp_u32 table_entries) {
    decode_tiles_body<true, IBP_LEAN_SHAPE_OF(IBP_LEAN_SHORT)>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}
// Ranges of an entry whose chunks are all coded with whole words (the host picks it for rows of
// more than 64 words of at most 16 bits: IBP_LEAN_LONG), a lane per row (lane_tile_rows; rows that
// are not whole 16-byte vectors in slices, slice_tile_rows), with tiles of about 4 warps' 32 rows
// and 2 blocks per SM (device::LONG_BLOCK_SMEM).
#ifndef IBP_LEAN_LONG_MIN_BLOCKS
#define IBP_LEAN_LONG_MIN_BLOCKS 2
#endif
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_LEAN_LONG_MIN_BLOCKS)
ibp_decode_tiles_lean_long(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows,
                           ibp_u32 tile_bytes, ibp_u32 table_entries) {
    decode_tiles_body<true, IBP_LEAN_LONG>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}
// Ranges of an entry all of whose chunks vector lanes take (the host checks,
// kernel_choice::vector_rows_chunk: one group of 16-bit words, rows of whole 16-byte vectors of
// at most 1 KiB, at most four runs of free bits per position; a tile it cannot take, or an output
// that is not 16-byte aligned, is reported E_LAYOUT): vector_lanes alone, with no per-position table
// (table_entries unused) and no other row decoder, built for 4 blocks per SM (62 registers, no
// spill) and launched with tiles of device::VEC_TILE_BYTES (GPU_NOTES entry 80). Built with
// IBP_LONG_VECTOR_LANES=0 it decodes nothing (every coded tile E_LAYOUT): the host then does not
// pick it (device::vector_lanes_kernel).
#ifndef IBP_LEAN_VEC_MIN_BLOCKS
#define IBP_LEAN_VEC_MIN_BLOCKS 4
#endif
extern "C" __global__ void __launch_bounds__(IBP_TILE_THREADS, IBP_LEAN_VEC_MIN_BLOCKS)
ibp_decode_tiles_lean_vec(const IbpGatherParams prm, const ibp_u32* tile_starts, ibp_u32 tile_rows,
                          ibp_u32 tile_bytes, ibp_u32 table_entries) {
    decode_tiles_body<true, IBP_LEAN_VEC>(prm, tile_starts, tile_rows, tile_bytes, table_entries);
}
