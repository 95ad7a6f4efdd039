// ibp_gather/tiles.cuh: whole-chunk and range decode in tiles: tile context and the general row decoders.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- whole-chunk / range decode in tiles -------------------------------------------------------
//
// ibp_decode_tiles decodes rows prm.first_row .. prm.first_row + prm.count - 1 (prm.rows is null).
// Launch: blocks of IBP_TILE_WARPS warps. Work is cut into tiles of at most `tile_rows` consecutive
// rows of one chunk: tile_starts[c] is the index of chunk c's first tile (tile_starts[chunk_count] =
// total tiles; only chunks overlapping the range have tiles). Per tile, the block computes the record
// offsets with a block-wide scan of the stored row lengths, loads the tile's compressed bytes
// (contiguous) into shared memory with 16-byte loads (4 in flight per thread), then its warps decode
// one row each from shared memory. A tile whose rows are all raw with no padding is copied straight
// from the payload to the output.
//
// Per-position tables (below) are built once per chunk a block meets (chunks with
// 1 <= G*n <= table_entries); chunks without one use the per-lane Mask/Bitval path of ibp_gather.
//
// Dynamic shared memory: 16 guard bytes, tile_bytes (multiple of 16; the host sizes it for the most
// record bytes tile_rows consecutive rows of a chunk hold, + 48, and a tile that does not fit is reported)
// for the records, 4 * (tile_rows + 1) bytes of offsets rounded up to 16, then the table
// (table_entries * 32 bytes: tmask uint4[], tinfo uint4[]).

#define IBP_TILE_WARPS 8
#ifndef IBP_TILE_MIN_BLOCKS
#define IBP_TILE_MIN_BLOCKS 4  // blocks per SM the register budget is sized for (64 registers at 4)
#endif
#define IBP_TILE_THREADS (32 * IBP_TILE_WARPS)
#ifndef IBP_TILE_CP_ASYNC
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define IBP_TILE_CP_ASYNC 1
#else
#define IBP_TILE_CP_ASYNC 0
#endif
#endif
#if IBP_TILE_CP_ASYNC
// Asynchronous 16-byte copies global -> shared (sm_80+): cp_async16 issues one to the shared-window
// address smem_addr(p) gives, cp_async_wait_all waits for this thread's. Host builds of this file
// (kernels/host) copy at once and wait for nothing: the same as long as no thread reads a target
// before the wait and the barrier after it, which the tile kernels never do.
#ifdef __CUDA_ARCH__
typedef ibp_u32 ibp_smem_addr;
__device__ __forceinline__ ibp_smem_addr smem_addr(const void* p) { return (ibp_u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp_async16(ibp_smem_addr d, const uint4* s) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
#else
typedef size_t ibp_smem_addr;
inline ibp_smem_addr smem_addr(const void* p) { return (size_t)p; }
inline void cp_async16(ibp_smem_addr d, const uint4* s) { *(uint4*)d = *s; }
inline void cp_async_wait_all() {}
#endif
#endif
#define IBP_TILE_GUARD 16
// Copies a raw row from shared memory: 16-byte or 4-byte accesses when both ends allow, else bytes.
__device__ __forceinline__ void smem_row_copy(ibp_u8* dst, const ibp_u8* from, ibp_u32 nbytes, ibp_u32 lane) {
    const ibp_u32 al = (ibp_u32)(((size_t)from) | ((size_t)dst));
    ibp_u32 done = 0;
    if ((al & 15u) == 0) {
        const ibp_u32 vecs = nbytes >> 4;
        for (ibp_u32 i = lane; i < vecs; i += 32) ((uint4*)dst)[i] = ((const uint4*)from)[i];
        done = vecs << 4;
    } else if ((al & 3u) == 0) {
        const ibp_u32 words = nbytes >> 2;
        for (ibp_u32 i = lane; i < words; i += 32) ((ibp_u32*)dst)[i] = ((const ibp_u32*)from)[i];
        done = words << 2;
    }
    for (ibp_u32 b = done + lane; b < nbytes; b += 32) dst[b] = from[b];
}

// Per-tile values every row of the tile shares.
struct TileCtx {
    const ibp_u8* tile;        // shared memory: tile_smem + IBP_TILE_GUARD (the tile's first 16-byte vector)
    ibp_u32 skew;              // byte of the first record within that vector
    const ibp_u32* offsets;    // record offsets (nrows + 1)
    const uint4* tmask;        // table of the chunk's positions
    const uint4* tinfo;
    bool use_table;            // false: decode with per-lane Mask/Bitval loads
    bool uniform_f;            // every table entry has the same F
    bool no_multi;             // no table entry has IBP_TILE_MULTI
    const ibp_u8* masks;       // the chunk's Mask words in global memory (Bitvals at + words_bytes)
    ibp_u64 words_bytes;
    ibp_u64 groups;            // payload-independent: meta offset of the group ids
    ibp_u64 r0;                // chunk row of the tile's first row
    ibp_u64 k0;                // request index of the tile's first row
    ibp_u32 nrows, n, G, raw_padded, align_log2;
    bool meta_ok;              // Mask/Bitval words lie inside the metadata buffer
    bool n_ok;                 // n == ceil(row_bytes / (W/8))
    bool pairs;                // W = 32 or 16 chunk with a pair table (IBP_TILE_W32_PAIRS, IBP_TILE_W16_PAIRS): entries per group P = ceil(n/2)
    bool one_entry;            // every entry is entry 0 (IBP_TABLE_ONE_ENTRY; short-rows kernel only, else false)
};

// Rows of at most IBP_TILE_SMALL_ROWS words through a table: a segment of S = the next power of
// two >= n lanes per row, 32 / S rows per warp pass (a row of 8 words keeps 8 lanes busy, not 32
// idle rounds). Lane j of a segment handles word j; its field starts at n + the field lengths of
// words 0 .. j-1: with one F everywhere (t.uniform_f) n + F*j + D * (non-participating words before
// j), else by a scan within the segment (IBP_SMALL_ROWS_ANY_F). Same checks, order and codes as
// decode_tile_rows and decode_table_row. Taken only when n == ceil(row_bytes / WB) (t.n_ok).
#ifndef IBP_TILE_SMALL_ROWS
#define IBP_TILE_SMALL_ROWS 16  // at most 32
#endif
#ifndef IBP_SMALL_ROWS_ANY_F
#define IBP_SMALL_ROWS_ANY_F 1  // 0: only tables with one F take decode_small_rows (GPU_NOTES entry 37)
#endif
template <int WB>
__device__ __forceinline__ void decode_small_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
    const ibp_u32 W = WB * 8;
    const ibp_u32 n = t.n;  // 1 .. IBP_TILE_SMALL_ROWS (<= 32)
    const ibp_u32 row_bytes = prm.row_bytes;
    const ibp_u32 seg_log2 = n <= 1 ? 0u : 32u - (ibp_u32)__clz((int)(n - 1));
    const ibp_u32 S = 1u << seg_log2, per_pass = 32u >> seg_log2;
    const ibp_u32 j = lane & (S - 1), seg = lane >> seg_log2;
    const ibp_u32 seg_lanes = S >= 32 ? ~0u : ((1u << S) - 1u) << (seg << seg_log2);
    const ibp_u32 row_words = n >= 32 ? ~0u : (1u << n) - 1u;
    const ibp_u32 lt = (1u << j) - 1u;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;
    const ibp_u32 a = 1u << t.align_log2;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    for (ibp_u32 row0 = warp * per_pass; row0 < t.nrows; row0 += IBP_TILE_WARPS * per_pass) {
        const ibp_u32 row = row0 + seg;
        const bool row_ok = row < t.nrows;
        const ibp_u32 off = row_ok ? t.offsets[row] : 0u;
        const ibp_u32 len = row_ok ? t.offsets[row + 1] - off : 0u;
        const bool raw = len == t.raw_padded;
        ibp_u32 code = IBP_STATUS_OK, g = 0;
        if (row_ok && !raw) {
            if (t.G > 1) {
                const ibp_u64 r = t.r0 + row;
                if (t.groups + r >= prm.meta_size) code = IBP_STATUS_LAYOUT;
                else { g = prm.meta[t.groups + r]; if (g >= t.G) { code = IBP_STATUS_GROUP_ID; g = 0; } }
            }
            if (code == IBP_STATUS_OK && !t.meta_ok) code = IBP_STATUS_LAYOUT;
            if (code == IBP_STATUS_OK && n > len * 8) code = IBP_STATUS_ROW_LENGTH;
        }
        const ibp_u32 rec_byte = IBP_TILE_GUARD + t.skew + off;
        const ibp_u32 base = rec_byte * 8, total_bits = len * 8;
        const ibp_u32 e = g * n + (j < n ? j : 0u);
        const uint4 tm = t.tmask[e], ti = t.tinfo[e];
        const ibp_u32 F = entry_free_bits(ti);
        const ibp_u32 np = raw ? 0u : ~sbits32(w, base) & row_words;
        const bool p = !raw && !((np >> j) & 1u);
        // A raw row's word j is bytes j*WB ..; a coded row's field as above (read at the record's
        // end when a corrupt record puts it past it).
        ibp_u32 r;
        if (t.uniform_f) {
            r = raw ? j * W : n + F * j + (W - F) * (ibp_u32)__popc(np & lt);
        } else {
            // Exclusive scan of the field lengths within the segment (words past n count 0).
            const ibp_u32 f = j < n ? (p ? F : W) : 0u;
            ibp_u32 x = f;
            for (ibp_u32 d = 1; d < S; d <<= 1) {
                const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
                if (j >= d) x += y;
            }
            r = (raw ? 0u : n) + x - f;
        }
        const ibp_u32 end = r + (p ? F : W);
        bool partial_bad = false;
        if (row_ok && j < n && code == IBP_STATUS_OK) {
            ibp_u8* dst = prm.out + (t.k0 + row) * (ibp_u64)row_bytes;
            const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
            const typename Word<WB>::R word = table_word<WB>(w, base + min(r, total_bits), p, tm, ti);
            store_row_word<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
        }
        const ibp_u32 T = __shfl_sync(FULL_MASK, end, (seg << seg_log2) + n - 1);  // stream bits used
        if (row_ok && !raw && code == IBP_STATUS_OK) {
            if (T > total_bits) code = IBP_STATUS_ROW_LENGTH;  // Record length rule: L == align_up(ceil(T/8), A).
            else if (((((T + 7) >> 3) + a - 1) & ~(a - 1)) != len) code = IBP_STATUS_ROW_LENGTH;
        }
        // Padding: a coded row's bits from T on and its partial last word's high bits, a raw row's
        // bytes after row_bytes (its partial last word was read past the row: not a check there).
        bool bad = !raw && partial_bad;
        if (row_ok && code == IBP_STATUS_OK) {
            const ibp_u8* bytes = (const ibp_u8*)w + rec_byte;
            const ibp_u32 from = raw ? row_bytes * 8 : T, t0 = from >> 3;
            for (ibp_u32 b = t0 + j; b < len; b += S) bad |= (bytes[b] >> (b == t0 ? (from & 7) : 0u)) != 0;
        }
        if ((__ballot_sync(FULL_MASK, bad) & seg_lanes) != 0 && code == IBP_STATUS_OK) code = IBP_STATUS_PADDING;
        if (row_ok && j == 0 && code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
    }
}

// Decodes the rows of a tile that belong to this warp (rows warp, warp + IBP_TILE_WARPS, ...).
// PAIRS_ONLY (WB == 4 or 2): the tile's chunk is raw or has a pair table (t.pairs); the pairs
// kernel's caller checks, and this body has no other decode path.
template <int WB, bool PAIRS_ONLY = false>
__device__ __forceinline__ void decode_tile_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
#if IBP_TILE_SMALL_ROWS
    // n >= 1 (a table has entries); n_ok: the words cover exactly the row's bytes, raw rows too.
    if (!PAIRS_ONLY && t.use_table && (t.uniform_f || IBP_SMALL_ROWS_ANY_F) && t.n_ok && t.n <= IBP_TILE_SMALL_ROWS) {
        decode_small_rows<WB>(prm, t, warp, lane);
        return;
    }
#endif
    const ibp_u32 row_bytes = prm.row_bytes;
    for (ibp_u32 row = warp; row < t.nrows; row += IBP_TILE_WARPS) {
        const ibp_u64 k = t.k0 + row;
        const ibp_u32 off = t.offsets[row];
        const ibp_u32 len = t.offsets[row + 1] - off;
        ibp_u8* dst = prm.out + k * (ibp_u64)row_bytes;
        ibp_u32 code = IBP_STATUS_OK;
        if (len == t.raw_padded) {
            const ibp_u8* from = t.tile + t.skew + off;
            smem_row_copy(dst, from, row_bytes, lane);
            bool bad = false;
            for (ibp_u32 b = row_bytes + lane; b < len; b += 32) bad |= from[b] != 0;
            if (__any_sync(FULL_MASK, bad)) code = IBP_STATUS_PADDING;
        } else {
            ibp_u32 g = 0;
            if (t.G == 0) code = IBP_STATUS_ROW_LENGTH;  // raw chunk: every record raw (spec 5.5)
            else if (t.G > 1) {
                const ibp_u64 r = t.r0 + row;
                if (t.groups + r >= prm.meta_size) code = IBP_STATUS_LAYOUT;
                else { g = prm.meta[t.groups + r]; if (g >= t.G) code = IBP_STATUS_GROUP_ID; }
            }
            if (code == IBP_STATUS_OK && !t.meta_ok) code = IBP_STATUS_LAYOUT;
            if (code == IBP_STATUS_OK) {
                if (PAIRS_ONLY || t.use_table) {
                    const ibp_u32* w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
                    const ibp_u32 at = IBP_TILE_GUARD + t.skew + off;
                    if (PAIRS_ONLY || ((WB == 4 || WB == 2) && t.pairs)) {
                        const ibp_u32 e = g * ((t.n + 1) >> 1);
                        constexpr int HW = WB == 2 ? 16 : 32;
                        code = t.no_multi ? decode_pair_row<false, HW>(w, at, len, dst, t.tmask + e, t.tinfo + e, t.n, t.align_log2, lane)
                                          : decode_pair_row<true, HW>(w, at, len, dst, t.tmask + e, t.tinfo + e, t.n, t.align_log2, lane);
                    } else if (!PAIRS_ONLY) {
                        const ibp_u32 e = g * t.n;
                        code = decode_table_row<WB>(w, at, len, dst, t.tmask + e, t.tinfo + e, t.n, t.n_ok, row_bytes, t.align_log2, lane);
                    }
                } else if (!PAIRS_ONLY) {
                    SmemRecord rec;
                    rec.w = (const ibp_u32*)t.tile;
                    rec.len = len;
                    rec.off = t.skew + off;
                    const ibp_u8* masks = t.masks + (ibp_u64)g * t.n * WB;
                    code = decode_coded<WB>(rec, dst, masks, masks + t.words_bytes, t.n, row_bytes, t.align_log2, lane);
                }
            }
        }
        if (code != IBP_STATUS_OK && lane == 0) ibp_report(prm.status, k, code);
    }
}
