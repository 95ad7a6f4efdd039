// ibp_gather/lean.cuh: the lean tile decoder for rows of <= 64 words (checks by one thread per row).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- the lean tile decoder (ibp_decode_tiles_lean) ---------------------------------------------
//
// Rows of at most 64 whole words (row_bytes == n * W/8) of chunks with a table, in two phases per
// group of up to 32 rows of a warp (the warp's rows are warp, warp + 8, ...):
//  A. one thread per row checks the record: its length and kind (raw or coded), its group, its
//     stream length T (n + F of each participating word + W per other word; with G == 1 the sum of
//     all F is taken once per tile and only the non-participating words are visited), the record
//     length rule, the padding bits T .. 8L-1 (a raw record's bytes after row_bytes), and reports
//     a failure itself;
//  B. one warp per row takes the row's start and verdict (and, for rows of at most 32 words, its
//     participation bits) from its thread by shuffles and decodes it without checks: lane j decodes
//     word j (and word 32 + j, the two field lengths sharing one warp scan as in decode_table_row);
//     rows of at most 32 words go two per step with G == 1 (IBP_LEAN_PAIRS: one scan, independent
//     loads and stores); a raw row is copied.
// The per-row control flow (lookups, checks, votes, reports) thus runs once per 32 rows, not once
// per row. Same checks, order and codes as decode_tile_rows. Every output word is whole and
// W/8-aligned (the output is 8-byte aligned and row_bytes a multiple of W/8). MULTI: the chunk's
// table has IBP_TILE_MULTI entries. Longer rows leave a warp too few rows per tile for phase A
// (they measured slower than decode_tile_rows: GPU_NOTES entry 19), so they stay there.

// Bits [from, to) of the shared-memory bit stream w hold a set bit (from <= to).
__device__ __forceinline__ bool stream_bits_set(const ibp_u32* w, ibp_u32 from, ibp_u32 to) {
    bool bad = false;
#pragma unroll 1
    for (ibp_u32 b = from; b < to; b += 32) bad |= (sbits32(w, b) & low_mask32(to - b)) != 0;
    return bad;
}

// A/B switches of the lean decoder (bench/GPU_NOTES.md entry 19): phase B takes two coded rows of
// <= 32 words per step (G == 1); rows of <= 16 words whose positions all have one F go to
// decode_small_rows (several rows per warp pass) instead.
#ifndef IBP_LEAN_PAIRS
#define IBP_LEAN_PAIRS 1
#endif
#ifndef IBP_LEAN_SMALL_ROWS
#define IBP_LEAN_SMALL_ROWS 1
#endif

// Shapes a tile kernel is built for (GPU_NOTES entry 35). General kernel: IBP_TILES_PAIRS for
// entries whose coded chunks all have pair tables (32-bit or 16-bit words, 17 or more per row, whole
// words, G * n <= the table's entries), each decoded by decode_pair_row alone; it reports E_LAYOUT
// for a tile of another coded chunk.
#define IBP_TILES_ANY 0
#define IBP_TILES_PAIRS 1
// Lean kernel: rows a lean tile kernel is built for. The kernel for rows of 33 .. 64
// words is a kernel of its own, so that its row loop gets its own register allocation and code
// layout (rows of f32 values that save 6 % decoded 0.53 of the D2D copy through it against 0.44
// through the kernel for any shape; a third kernel for rows of <= 32 words measured 2-7 % slower
// than the kernel for any shape, and was dropped). The host picks the mid kernel where every coded
// chunk of the entry has such rows; it reports E_LAYOUT for a tile of coded rows of <= 32 words.
//
// The kernel for short rows (IBP_LEAN_SHORT) holds nothing but the thread path (slice_tile_rows: rows
// of <= IBP_LEAN_THREAD_ROWS words, or of <= 32 words and <= IBP_LEAN_THREAD_BYTES bytes), built
// for 3 blocks per SM (80 registers) and launched with 64 KiB tiles: such rows are bound by each
// thread's chain of fields, which more registers and fewer per-tile steps per row shorten
// (bench/GPU_NOTES.md entries 52 and 55). The host picks it where every chunk of the entry is
// coded with such rows; it reports E_LAYOUT for any other tile that is not all raw records.
#define IBP_LEAN_ANY 0    // rows of 1 .. 64 words
#define IBP_LEAN_MID 1    // rows of 33 .. 64 words
#define IBP_LEAN_SHORT 2  // rows the thread path takes, alone
#define IBP_LEAN_LONG 3   // coded rows of any number of whole words, a lane per row (lane_tile_rows)
#define IBP_LEAN_VEC 4    // coded rows that vector lanes take, alone (vector_lanes.cuh, ibp_decode_tiles_lean_vec)
#ifndef IBP_LEAN_SHAPED
#define IBP_LEAN_SHAPED 1  // 0: the mid kernel is built as the one for any shape (A/B)
#endif

// Verdict bits of a phase-A row (with the group id from bit 8 on).
#define IBP_LEAN_DECODE 1u  // the row is to be decoded (its checks passed)
#define IBP_LEAN_RAW 2u     // its record is raw

// Phase B of a coded row of 33 .. 64 words at stream bit b (its group's table entries tmask/tinfo):
// word lane and word 32 + lane, whose field lengths share one warp scan (as in decode_table_row).
// tma/tia: the entry of word lane, tmb/tib: of word 32 + lane (entry 0 where that word is absent).
template <int WB, bool MULTI>
__device__ __forceinline__ void lean_two_rounds_with(const ibp_u32* w, ibp_u32 b, ibp_u32 n, const uint4& tma,
                                                     const uint4& tia, const uint4& tmb, const uint4& tib,
                                                     ibp_u8* dst, ibp_u32 lane) {
    typedef typename Word<WB>::T Stored;
    const ibp_u32 W = WB * 8;
    const ibp_u32 jb = 32 + lane;
    const bool active_b = jb < n;
    const bool pa = (sbits32(w, b) >> lane) & 1u;
    const bool pb = active_b && ((sbits32(w, b + 32) >> lane) & 1u);
    const ibp_u32 fa = field_bits(pa, tia, W);
    const ibp_u32 fb = active_b ? field_bits(pb, tib, W) : 0u;
    const ibp_u32 x = warp_inclusive_scan(fa | (fb << 16));
    const ibp_u32 bits_a = __shfl_sync(FULL_MASK, x, 31) & 0xffffu;
    const ibp_u32 pos = b + n;  // stream bit of the first field
    const typename Word<WB>::R word_a = table_word<WB, MULTI>(w, pos + (x & 0xffffu) - fa, pa, tma, tia);
    if (active_b) ((Stored*)dst)[jb] = (Stored)table_word<WB, MULTI>(w, pos + bits_a + (x >> 16) - fb, pb, tmb, tib);
    ((Stored*)dst)[lane] = (Stored)word_a;
}

// The same with the entries read from the group's table (tmask/tinfo: the group's first entry).
template <int WB, bool MULTI>
__device__ __forceinline__ void lean_two_rounds(const ibp_u32* w, ibp_u32 b, ibp_u32 n, const uint4* tmask,
                                                const uint4* tinfo, ibp_u8* dst, ibp_u32 lane) {
    const ibp_u32 jb = 32 + lane < n ? 32 + lane : 0u;
    lean_two_rounds_with<WB, MULTI>(w, b, n, tmask[lane], tinfo[lane], tmask[jb], tinfo[jb], dst, lane);
}

// IBP_LEAN_HOIST: where phase B of a row of 33 .. 64 words finds its table entries with one group
// (G == 1). 1: word lane's entry stays in the registers it was loaded into before the rows (as for
// rows of <= 32 words), word 32 + lane's is read per row; 0: both read from shared memory per row;
// 2: both held, with a second copy of the decode for G > 1; 4: both held, in a row loop of their own.
// GPU_NOTES entry 32 (against the kernel before these options): 1 is 3-13 % faster on 256 B q4 rows,
// GloVe and MiniLM K rows, equal on f32-normal and V rows, 4 % slower on 256 B sparse rows; 4 is
// 19-22 % faster on the f32-normal and sparse rows and 7 % on V rows but 3 % slower on q4 and GloVe.
// Most of it is code generation, not the shared-memory reads saved: mode 0 compiled through a
// wrapper (same reads) decoded f32-normal rows 22 % slower than the kernel before.
#ifndef IBP_LEAN_HOIST
#define IBP_LEAN_HOIST 1
#endif
// IBP_LEAN_UNIFORM_T: phase A of a G == 1 chunk whose positions all have one F counts its rows'
// non-participating words with a popcount instead of visiting them.
// IBP_LEAN_TODO_LOOP: phase B walks the rows left to decode by their ballot bits (1), so a coded
// row pairs with the next coded one past raw rows, or every row of the group in order (0), pairing
// only neighbours.
#ifndef IBP_LEAN_TODO_LOOP
#define IBP_LEAN_TODO_LOOP 1
#endif
#ifndef IBP_LEAN_RAW_BATCH
#define IBP_LEAN_RAW_BATCH 1  // 0: phase B copies each raw row in a warp step of its own (A/B)
#endif

// Position of the k-th set bit (from 0) of m; 32 when m has k or fewer set bits.
__device__ __forceinline__ ibp_u32 select_bit(ibp_u32 m, ibp_u32 k) {
    if ((ibp_u32)__popc(m) <= k) return 32u;
    ibp_u32 pos = 0;
#pragma unroll
    for (ibp_u32 width = 16; width > 0; width >>= 1) {
        const ibp_u32 low = (ibp_u32)__popc(m & ((1u << width) - 1u));  // set bits in the window's low half
        if (k >= low) { k -= low; m >>= width; pos += width; }
    }
    return pos;
}

// Phase B's raw rows, several per warp pass (IBP_LEAN_RAW_BATCH): the rows of this lane group
// (lane i: row warp + 8 * (i0 + i), its verdict and record bit) whose records are raw and decode
// are copied 16 bytes per lane, 32 / (row_bytes / 16) rows per pass, when rows are of at most 512
// bytes, a multiple of 16, and every such record and output row is 16-byte aligned. Returns the
// rows copied (a bit per lane), which the caller then skips; 0 when the conditions do not hold.
// Files whose rows save little at A = 16 have most records raw (MiniLM KV rows: 64-65 %), and a
// warp step per raw row kept 8 of 32 lanes busy for a 128-byte row.
__device__ __forceinline__ ibp_u32 lean_copy_raw_rows(const ibp_u32* w, ibp_u32 verdict, ibp_u32 base, ibp_u8* out0,
                                                      ibp_u32 first_row, ibp_u32 row_bytes, ibp_u32 lane) {
    const bool mine = (verdict & (IBP_LEAN_DECODE | IBP_LEAN_RAW)) == (IBP_LEAN_DECODE | IBP_LEAN_RAW);
    const ibp_u32 raw_rows = __ballot_sync(FULL_MASK, mine);
    if (raw_rows == 0 || (row_bytes & 15u) != 0 || row_bytes > 512 || (((size_t)out0) & 15) != 0) return 0;
    if (__any_sync(FULL_MASK, mine && (base & 127u) != 0)) return 0;  // (base: the record's stream bit)
    const ibp_u32 vecs = row_bytes >> 4;  // 1 .. 32 per row
    const ibp_u32 per_pass = 32u / vecs, slot = lane / vecs, vec = lane - slot * vecs;
    const ibp_u32 nraw = (ibp_u32)__popc(raw_rows);
    const ibp_u32 kth = select_bit(raw_rows, lane);  // lane k: the group's k-th raw row
    for (ibp_u32 k0 = 0; k0 < nraw; k0 += per_pass) {
        const ibp_u32 k = k0 + slot;
        const ibp_u32 i = __shfl_sync(FULL_MASK, kth, k & 31u);
        const ibp_u32 b = __shfl_sync(FULL_MASK, base, i & 31u);
        if (slot < per_pass && k < nraw) {
            const uint4 v = *(const uint4*)((const ibp_u8*)w + (b >> 3) + 16 * vec);
            *(uint4*)(out0 + (first_row + 8 * i) * row_bytes + 16 * vec) = v;
        }
    }
    return raw_rows;
}

#ifndef IBP_LEAN_UNIFORM_T
#define IBP_LEAN_UNIFORM_T 1
#endif

template <int WB, bool MULTI, int SHAPE>
__device__ __forceinline__ void lean_tile_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
    typedef typename Word<WB>::R R;
    typedef typename Word<WB>::T Stored;
    const ibp_u32 W = WB * 8;
    const ibp_u32 n = t.n;  // 1 .. 64 (a raw chunk's: any); in a shaped kernel, a coded chunk's is of its SHAPE
    const bool short_rows = SHAPE == IBP_LEAN_ANY && n <= 32;
    // Rows of 33 .. 64 words with one group: the mid-shape kernel holds both of a lane's table
    // entries in registers, in a row loop of its own (as IBP_LEAN_HOIST == 4).
    const bool hold_both = SHAPE == IBP_LEAN_MID || IBP_LEAN_HOIST == 4;
    const ibp_u32 row_bytes = prm.row_bytes;  // n * WB in a coded chunk
    const bool active = lane < n;
    const ibp_u32 jt = active ? lane : 0u;
    const ibp_u32 first_words = n >= 32 ? ~0u : (1u << n) - 1u;  // the first round's words
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    ibp_u8* const out0 = prm.out + t.k0 * (ibp_u64)row_bytes;
    // The sum of F over group 0's positions.
    ibp_u32 f_sum = 0;
    if (t.G != 0)
        for (ibp_u32 j = lane; j < n; j += 32) f_sum += entry_free_bits(t.tinfo[j]);
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) f_sum += __shfl_xor_sync(FULL_MASK, f_sum, d);
    // F of every position when they are all the same (t.uniform_f): a row's T by one popcount.
    const ibp_u32 f_one = t.G != 0 ? entry_free_bits(t.tinfo[0]) : 0u;
    for (ibp_u32 i0 = 0; warp + 8 * i0 < t.nrows; i0 += 32) {
        // A. This thread's row.
        const ibp_u32 row = warp + 8 * (i0 + lane);
        const bool valid = row < t.nrows;
        const ibp_u32 off = valid ? t.offsets[row] : 0u;
        const ibp_u32 len = valid ? t.offsets[row + 1] - off : 0u;
        const bool raw = valid && len == t.raw_padded;
        const ibp_u32 base = rec0 + off * 8;
        ibp_u32 code = IBP_STATUS_OK, g = 0, pbits = 0;
        if (valid) {
            if (raw) {
                if (stream_bits_set(w, base + row_bytes * 8, base + len * 8)) code = IBP_STATUS_PADDING;
            } else {
                if (t.G == 0) code = IBP_STATUS_ROW_LENGTH;  // raw chunk: every record raw (spec 5.5)
                else if (t.G > 1) {
                    const ibp_u64 at = t.groups + t.r0 + row;
                    if (at >= prm.meta_size) code = IBP_STATUS_LAYOUT;
                    else { g = prm.meta[at]; if (g >= t.G) { code = IBP_STATUS_GROUP_ID; g = 0; } }
                }
                // n > 8L: T > 8L below; the participation bits are read inside the tile buffer anyway.
                if (code == IBP_STATUS_OK) {
                    pbits = sbits32(w, base) & first_words;
                    ibp_u32 T = n;
                    // (Rounds: 1 or 2.) With G == 1 only the non-participating words are visited.
                    for (ibp_u32 j0 = 0; j0 < n; j0 += 32) {
                        const ibp_u32 words = n - j0 >= 32 ? ~0u : (1u << (n - j0)) - 1u;
                        const ibp_u32 part = j0 == 0 ? pbits : sbits32(w, base + j0) & words;
                        if (IBP_LEAN_UNIFORM_T && t.G == 1 && t.uniform_f) {
                            T += (W - f_one) * (ibp_u32)__popc(~part & words);
                        } else if (t.G == 1) {
                            for (ibp_u32 np = ~part & words; np != 0; np &= np - 1)
                                T += W - entry_free_bits(t.tinfo[j0 + __ffs((int)np) - 1]);
                        } else {
                            const uint4* const ti = t.tinfo + g * n + j0;
                            for (ibp_u32 j = 0; j < 32 && j0 + j < n; j++) T += field_bits((part >> j) & 1u, ti[j], W);
                        }
                    }
                    if (t.G == 1) T += f_sum;
                    // Record length rule: L == align_up(ceil(T/8), A) (T > 8L fails it too).
                    if (T > len * 8 || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len) code = IBP_STATUS_ROW_LENGTH;
                    // Padding bits T .. 8L-1 must be zero (E_PADDING).
                    else if (stream_bits_set(w, base + T, base + len * 8)) code = IBP_STATUS_PADDING;
                }
            }
            if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
        }
        ibp_u32 verdict = (valid && code == IBP_STATUS_OK ? IBP_LEAN_DECODE : 0u) | (raw ? IBP_LEAN_RAW : 0u) | (g << 8);
        // B. Raw rows several per pass, then the others one (or two) after the other.
#if IBP_LEAN_RAW_BATCH
        if ((lean_copy_raw_rows(w, verdict, base, out0, warp + 8 * i0, row_bytes, lane) >> lane) & 1u) verdict &= ~IBP_LEAN_DECODE;
#endif
#if IBP_LEAN_TODO_LOOP
        // Rows of this group left to decode (rows past the tile have no verdict bits).
        ibp_u32 todo = __ballot_sync(FULL_MASK, (verdict & IBP_LEAN_DECODE) != 0);
#else
        const ibp_u32 count = min(32u, (t.nrows - warp + 7) / 8 - i0);  // rows of this group
#endif
        // Group 0's entry of this lane's position (rows of <= 32 words with G == 1: every row's).
        uint4 tm = make_uint4(0u, 0u, 0u, 0u), ti = tm;
        if (t.G != 0) { tm = t.tmask[jt]; ti = t.tinfo[jt]; }
#if IBP_LEAN_HOIST == 2
        // (Rows of 33 .. 64 words, G == 1: tm/ti above are word lane's entry; word 32 + lane's here.)
        uint4 tm2 = make_uint4(0u, 0u, 0u, 0u), ti2 = tm2;
        if (t.G == 1 && !short_rows) {
            const ibp_u32 jb = 32 + lane < n ? 32 + lane : 0u;
            tm2 = t.tmask[jb];
            ti2 = t.tinfo[jb];
        }
#endif
        // Rows of 33 .. 64 words with one group: a loop of their own, both entries held.
        if (hold_both && t.G == 1 && !short_rows) {
            const ibp_u32 jb = 32 + lane < n ? 32 + lane : 0u;
            const uint4 tmb = t.tmask[jb], tib = t.tinfo[jb];
#if IBP_LEAN_TODO_LOOP
            for (; todo != 0; todo &= todo - 1) {
                const ibp_u32 i = (ibp_u32)__ffs((int)todo) - 1;
                const ibp_u32 v = __shfl_sync(FULL_MASK, verdict, i);
                const ibp_u32 b = __shfl_sync(FULL_MASK, base, i);
#else
            for (ibp_u32 i = 0; i < count; i++) {
                const ibp_u32 v = __shfl_sync(FULL_MASK, verdict, i);
                const ibp_u32 b = __shfl_sync(FULL_MASK, base, i);
                if (!(v & IBP_LEAN_DECODE)) continue;
#endif
                ibp_u8* const dst = out0 + (warp + 8 * (i0 + i)) * row_bytes;
                if (v & IBP_LEAN_RAW) smem_row_copy(dst, (const ibp_u8*)w + (b >> 3), row_bytes, lane);
                else lean_two_rounds_with<WB, MULTI>(w, b, n, tm, ti, tmb, tib, dst, lane);
            }
            continue;
        }
#if IBP_LEAN_TODO_LOOP
        while (todo != 0) {
            const ibp_u32 i = (ibp_u32)__ffs((int)todo) - 1;
            todo &= todo - 1;
            const ibp_u32 v = __shfl_sync(FULL_MASK, verdict, i);
            const ibp_u32 b = __shfl_sync(FULL_MASK, base, i);
            const ibp_u32 pb = __shfl_sync(FULL_MASK, pbits, i);
#else
        for (ibp_u32 i = 0; i < count; i++) {
            const ibp_u32 v = __shfl_sync(FULL_MASK, verdict, i);
            const ibp_u32 b = __shfl_sync(FULL_MASK, base, i);
            const ibp_u32 pb = __shfl_sync(FULL_MASK, pbits, i);
            if (!(v & IBP_LEAN_DECODE)) continue;
#endif
            ibp_u8* const dst = out0 + (warp + 8 * (i0 + i)) * row_bytes;  // row < 1024, row_bytes <= TILE_BYTES / 2
            if (v & IBP_LEAN_RAW) {  // (a raw chunk's rows may have any number of words)
                smem_row_copy(dst, (const ibp_u8*)w + (b >> 3), row_bytes, lane);
                continue;
            }
            const ibp_u32 e0 = (v >> 8) * n;  // the row's group's first table entry
            if (!short_rows) {
#if IBP_LEAN_HOIST == 2
                if (t.G == 1) {
                    lean_two_rounds_with<WB, MULTI>(w, b, n, tm, ti, tm2, ti2, dst, lane);
                    continue;
                }
                lean_two_rounds<WB, MULTI>(w, b, n, t.tmask + e0, t.tinfo + e0, dst, lane);
#elif IBP_LEAN_HOIST == 1 || IBP_LEAN_HOIST == 4
                {
                    const ibp_u32 jb = 32 + lane < n ? 32 + lane : 0u;
                    uint4 tma = tm, tia = ti;  // word lane's entry: group 0's, held since phase A
                    if (t.G != 1) { tma = t.tmask[e0 + lane]; tia = t.tinfo[e0 + lane]; }
                    lean_two_rounds_with<WB, MULTI>(w, b, n, tma, tia, t.tmask[e0 + jb], t.tinfo[e0 + jb], dst, lane);
                }
#else
                lean_two_rounds<WB, MULTI>(w, b, n, t.tmask + e0, t.tinfo + e0, dst, lane);
#endif
                continue;
            }
            if (t.G > 1) { tm = t.tmask[e0 + jt]; ti = t.tinfo[e0 + jt]; }
            const bool p = (pb >> lane) & 1u;
#if IBP_LEAN_PAIRS
            // The next row left too when it is coded and decodes (G == 1: same table entries): one
            // scan for both (row sums < 2^16), independent loads and stores.
#if IBP_LEAN_TODO_LOOP
            const bool has_next = todo != 0;
            const ibp_u32 i2 = has_next ? (ibp_u32)__ffs((int)todo) - 1 : 0u;
#else
            const bool has_next = i + 1 < count;
            const ibp_u32 i2 = i + 1;
#endif
            if (t.G == 1 && has_next) {
                const ibp_u32 v2 = __shfl_sync(FULL_MASK, verdict, i2);
                const ibp_u32 b2 = __shfl_sync(FULL_MASK, base, i2);
                const ibp_u32 pb2 = __shfl_sync(FULL_MASK, pbits, i2);
                if ((v2 & (IBP_LEAN_DECODE | IBP_LEAN_RAW)) == IBP_LEAN_DECODE) {
                    const bool p2 = (pb2 >> lane) & 1u;
                    const ibp_u32 F = entry_free_bits(ti);
                    const ibp_u32 f = active ? (p ? F : W) : 0u, f2 = active ? (p2 ? F : W) : 0u;
                    const ibp_u32 x = warp_inclusive_scan(f | (f2 << 16));
                    const R word = table_word<WB, MULTI>(w, b + n + (x & 0xffffu) - f, p, tm, ti);
                    const R word2 = table_word<WB, MULTI>(w, b2 + n + (x >> 16) - f2, p2, tm, ti);
                    if (active) {
                        ((Stored*)dst)[lane] = (Stored)word;
                        ((Stored*)(dst + 8 * (i2 - i) * row_bytes))[lane] = (Stored)word2;  // row + 8 (i2 - i)
                    }
#if IBP_LEAN_TODO_LOOP
                    todo &= todo - 1;
#else
                    i++;
#endif
                    continue;
                }
            }
#endif
            const ibp_u32 f = active ? field_bits(p, ti, W) : 0u;
            const ibp_u32 x = warp_inclusive_scan(f);
            const R word = table_word<WB, MULTI>(w, b + n + x - f, p, tm, ti);
            if (active) ((Stored*)dst)[lane] = (Stored)word;
        }
    }
}
