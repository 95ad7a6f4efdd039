// ibp_gather/sparse_rows.cuh: gathers of sparse rows: a row as zeros with only its exceptions decoded
// (spec 6.2).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- sparse rows -------------------------------------------------------------------------------
//
// In chunks of sparse rows (Cora's one-hot features, f32 rows at 5 % non-zero) nearly every position
// has no free bits (Mask covers the whole word) and a zero Bitval word, so a participating word there
// has an empty field and is zero. A row is then zeros except at its exceptions: the words that do not
// participate (W-bit fields) and the words at the positions the loader marks (free bits or a non-zero
// Bitval word: the chunk's sparse table, ibp_build_tables: per group, one 32-bit word per 32
// positions, bit i of word r set for position 32r + i). A partial last word is checked for bits above
// the row's end where it is an exception; elsewhere it is zero. Fields lie in the stream in word
// order, so the exceptions' field lengths alone give the offsets: no pass over every word, no scan
// per 32 words, and no Mask or Bitval word loaded but the exceptions'.
//
// decode_sparse_row gives the same bytes and the same first failure as decode_coded once the row has
// been zeroed (zero_row, by the caller while the record's loads are in flight, then __syncwarp): it
// stores each exception's word over the zeros.

// Zeroes `bytes` bytes at dst: 16-byte stores from the first 16-byte boundary on, 4-byte (else 1-byte)
// stores before it and after the last.
__device__ __forceinline__ void zero_row(ibp_u8* dst, ibp_u32 bytes, ibp_u32 lane) {
    const ibp_u32 head = min(bytes, (ibp_u32)((16 - ((size_t)dst & 15)) & 15));
    const ibp_u32 vecs = (bytes - head) >> 4;
    uint4* const mid = (uint4*)(dst + head);
    for (ibp_u32 i = lane; i < vecs; i += 32) mid[i] = make_uint4(0, 0, 0, 0);
    const ibp_u32 tail = head + (vecs << 4);
    if ((((size_t)dst | head | bytes) & 3) == 0) {
        if (lane < (head >> 2)) ((ibp_u32*)dst)[lane] = 0;
        if (lane < ((bytes - tail) >> 2)) ((ibp_u32*)(dst + tail))[lane] = 0;
    } else {
        if (lane < head) dst[lane] = 0;
        if (lane < bytes - tail) dst[tail + lane] = 0;
    }
}

// The exceptions of window r (positions 32r .. 32r + 31) of a row of n words: the positions that do
// not participate or that the sparse table marks; 0 past the last window. pbits: the window's
// participation bits (bits at and above n are the stream's, masked off here). free0: the lane's word
// of the table's first 32, loaded by the caller (r0 == 0: r is the lane's window).
// The last word is no exception unless it is either: a participating word at a position the table
// does not mark is zero (Mask covers the word, Bitval is 0), so it has no bits above the row's bytes
// to reject (spec 2.4). (Until GPU_NOTES entry 97 it was one in every row, which took 298 of Cora's
// 2,708 rows from 32 exceptions to 33, two passes; on an H100 both rules gather at the same speed.)
__device__ __forceinline__ ibp_u32 window_exceptions(const SmemRecord& rec, const ibp_u32* free_words, ibp_u32 free0,
                                                     ibp_u32 n, ibp_u32 windows, ibp_u32 r0, ibp_u32 r,
                                                     ibp_u32& pbits) {
    if (r >= windows) return 0u;
    pbits = rec.word32(r);
    const ibp_u32 valid = (r + 1 == windows && (n & 31)) ? low_mask32(n & 31) : ~0u;
    ibp_u32 e = (~pbits | (r0 == 0 ? free0 : __ldg(free_words + r))) & valid;
    return e;
}

// Decodes a staged coded record of n words of WB bytes (row_bytes bytes) whose group has the marked
// positions `free_words` (ceil(n / 32) words, see above; free0: this lane's word of the first 32,
// loaded by the caller) and the Mask/Bitval words at masks_p/bitvals_p, over the zeroed row at dst.
template <int WB>
__device__ __forceinline__ ibp_u32 decode_sparse_row(const SmemRecord& rec, ibp_u8* dst, const ibp_u32* free_words,
                                                     ibp_u32 free0, const ibp_u8* masks_p, const ibp_u8* bitvals_p,
                                                     ibp_u32 n, ibp_u32 row_bytes, ibp_u32 align_log2, ibp_u32 lane) {
    typedef typename Word<WB>::T T;
    typedef typename Word<WB>::R R;
    const ibp_u32 W = WB * 8;
    if (!words_fit_row(n, WB, row_bytes)) return IBP_STATUS_LAYOUT;
    // Bit positions fit 32 bits: a record is at most 2^24 + 127 bytes (checked against raw_padded).
    const ibp_u32 total_bits = (ibp_u32)(rec.len * 8);
    if (n > total_bits) return IBP_STATUS_ROW_LENGTH;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;  // 1 .. WB
    const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
    const T* masks = (const T*)masks_p;
    const T* bitvals = (const T*)bitvals_p;
    const R wmask = (R)(WB == 8 ? ~0ull : (ibp_u64)low_mask32(W));
    const ibp_u32 windows = (n + 31) >> 5;
    ibp_u32 pos = n;  // stream bit of the next window group's first field
    bool partial_bad = false;
    for (ibp_u32 r0 = 0; r0 < windows; r0 += 32) {
        // Lane: window r (positions 32r .. 32r + 31), its exceptions e, their field bits.
        const ibp_u32 r = r0 + lane;
        ibp_u32 pbits = 0;
        const ibp_u32 e = window_exceptions(rec, free_words, free0, n, windows, r0, r, pbits);
        ibp_u32 bits = 0;
        for (ibp_u32 x = e; x != 0; x &= x - 1) {
            const ibp_u32 i = (ibp_u32)__ffs((int)x) - 1;
            const ibp_u32 j = 32 * r + i;
            bits += ((pbits >> i) & 1u)
                        ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)__ldg(masks + j)) : __popc((ibp_u32)__ldg(masks + j)))
                        : W;
        }
        const ibp_u32 incl = warp_inclusive_scan(bits);
        const ibp_u32 group_bits = __shfl_sync(FULL_MASK, incl, 31);
        if (pos + group_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        ibp_u32 s = pos + incl - bits;
        for (ibp_u32 x = e; x != 0; x &= x - 1) {
            const ibp_u32 i = (ibp_u32)__ffs((int)x) - 1;
            const ibp_u32 j = 32 * r + i;
            const bool p = (pbits >> i) & 1u;
            const R m = p ? (R)__ldg(masks + j) : (R)0;
            const ibp_u32 f = p ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)m) : __popc((ibp_u32)m)) : W;
            const R v = WB == 8 ? (R)(rec.bits64(s) & low_mask64(f)) : (R)(rec.bits32(s) & low_mask32(f));
            const R word = p ? (R)((R)__ldg(bitvals + j) | deposit(v, (R)(~m & wmask))) : v;
            store_row_word<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
            s += f;
        }
        pos += group_bits;
    }
    return coded_tail(rec, pos, align_log2, partial_bad, lane);
}

// IBP_SPARSE_COMPACT (default 1): a window group's exceptions are decoded 32 at a time, one per
// lane, in stream order (decode_sparse_compact); 0: each lane walks its own window's exceptions in
// two loops (field lengths, then words; decode_sparse_row). A Cora row's 15-40 exceptions sit 1-4
// to a window, so the loops ran up to 4 times over with most lanes idle, each pass a chain of
// dependent steps (Mask load, popcount, bit read, deposit, store); compacted, every exception is one
// lane's, its Mask and Bitval words are loaded together, and a row of at most 32 exceptions takes
// one pass. On an H100 (GPU_NOTES entry 93): Cora 1K-row gathers +5-8 %, f32 rows at 5 % of 1 KiB
// +8-11 % at 1K rows and +5 % at 4K.
#ifndef IBP_SPARSE_COMPACT
#define IBP_SPARSE_COMPACT 1
#endif

// The position of the k-th (from 0) set bit of x (k < popc(x)): five halving steps, no loop.
__device__ __forceinline__ ibp_u32 nth_set_bit(ibp_u32 x, ibp_u32 k) {
    ibp_u32 at = 0;
#pragma unroll
    for (ibp_u32 half = 16; half > 0; half >>= 1) {
        const ibp_u32 low = (ibp_u32)__popc(x & ((1u << half) - 1u));
        if (k >= low) {
            k -= low;
            x >>= half;
            at += half;
        }
    }
    return at;
}

// decode_sparse_row with the exceptions compacted (IBP_SPARSE_COMPACT): the same bytes and the same
// first failure. Per group of 32 windows, lane r counts its window's exceptions and a warp scan
// ranks them; then, 32 ranks a pass, lane t finds the window holding rank base + t (binary search
// over the windows' first ranks, which never decrease), that window's (rank - first)-th exception,
// and decodes it: field lengths scanned over the pass, E_ROW_LENGTH before any field is read.
template <int WB>
__device__ __forceinline__ ibp_u32 decode_sparse_compact(const SmemRecord& rec, ibp_u8* dst, const ibp_u32* free_words,
                                                         ibp_u32 free0, const ibp_u8* masks_p, const ibp_u8* bitvals_p,
                                                         ibp_u32 n, ibp_u32 row_bytes, ibp_u32 align_log2,
                                                         ibp_u32 lane) {
    typedef typename Word<WB>::T T;
    typedef typename Word<WB>::R R;
    const ibp_u32 W = WB * 8;
    if (!words_fit_row(n, WB, row_bytes)) return IBP_STATUS_LAYOUT;
    const ibp_u32 total_bits = (ibp_u32)(rec.len * 8);  // (a record is at most 2^24 + 127 bytes)
    if (n > total_bits) return IBP_STATUS_ROW_LENGTH;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;  // 1 .. WB
    const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
    const T* masks = (const T*)masks_p;
    const T* bitvals = (const T*)bitvals_p;
    const R wmask = (R)(WB == 8 ? ~0ull : (ibp_u64)low_mask32(W));
    const ibp_u32 windows = (n + 31) >> 5;
    ibp_u32 pos = n;  // stream bit of the next field
    bool partial_bad = false;
    for (ibp_u32 r0 = 0; r0 < windows; r0 += 32) {
        const ibp_u32 r = r0 + lane;
        ibp_u32 pbits = 0;
        const ibp_u32 e = window_exceptions(rec, free_words, free0, n, windows, r0, r, pbits);
        const ibp_u32 count = (ibp_u32)__popc(e);
        const ibp_u32 incl = warp_inclusive_scan(count);
        const ibp_u32 exceptions = __shfl_sync(FULL_MASK, incl, 31);
        const ibp_u32 first = incl - count;  // rank of this window's first exception
        for (ibp_u32 base = 0; base < exceptions; base += 32) {
            const ibp_u32 rank = base + lane;
            const bool active = rank < exceptions;
            // The window of rank: the last lane whose first rank is <= rank (lane 0's is 0).
            ibp_u32 w = 0;
#pragma unroll
            for (ibp_u32 step = 16; step > 0; step >>= 1) {
                const ibp_u32 f = __shfl_sync(FULL_MASK, first, w + step);
                if (f <= rank) w += step;
            }
            const ibp_u32 ew = __shfl_sync(FULL_MASK, e, w), pw = __shfl_sync(FULL_MASK, pbits, w);
            const ibp_u32 fw = __shfl_sync(FULL_MASK, first, w);
            const ibp_u32 i = active ? nth_set_bit(ew, rank - fw) : 0u;
            const ibp_u32 j = 32 * (r0 + w) + i;
            const bool p = active && ((pw >> i) & 1u);
            R m = 0, b = 0;
            if (p) {
                m = (R)__ldg(masks + j);
                b = (R)__ldg(bitvals + j);
            }
            const ibp_u32 f = active ? (p ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)m) : __popc((ibp_u32)m)) : W) : 0u;
            const ibp_u32 x = warp_inclusive_scan(f);
            const ibp_u32 pass_bits = __shfl_sync(FULL_MASK, x, 31);
            if (pos + pass_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
            if (active) {
                const ibp_u32 s = pos + x - f;
                const R v = WB == 8 ? (R)(rec.bits64(s) & low_mask64(f)) : (R)(rec.bits32(s) & low_mask32(f));
                const R word = p ? (R)(b | deposit(v, (R)(~m & wmask))) : v;
                store_row_word<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
            }
            pos += pass_bits;
        }
    }
    return coded_tail(rec, pos, align_log2, partial_bad, lane);
}

// A sparse row's decode: decode_sparse_compact, or decode_sparse_row with IBP_SPARSE_COMPACT=0.
template <int WB>
__device__ __forceinline__ ibp_u32 decode_sparse(const SmemRecord& rec, ibp_u8* dst, const ibp_u32* free_words,
                                                 ibp_u32 free0, const ibp_u8* masks, const ibp_u8* bitvals, ibp_u32 n,
                                                 ibp_u32 row_bytes, ibp_u32 align_log2, ibp_u32 lane) {
#if IBP_SPARSE_COMPACT
    return decode_sparse_compact<WB>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
#else
    return decode_sparse_row<WB>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
#endif
}

// decode_sparse for a word width of wb bytes.
__device__ __forceinline__ ibp_u32 decode_sparse_any(const SmemRecord& rec, ibp_u8* dst, const ibp_u32* free_words,
                                                     ibp_u32 free0, const ibp_u8* masks, const ibp_u8* bitvals,
                                                     ibp_u32 n, ibp_u32 wb, ibp_u32 row_bytes, ibp_u32 align_log2,
                                                     ibp_u32 lane) {
    switch (wb) {
        case 1: return decode_sparse<1>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
        case 2: return decode_sparse<2>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
        case 4: return decode_sparse<4>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
        default: return decode_sparse<8>(rec, dst, free_words, free0, masks, bitvals, n, row_bytes, align_log2, lane);
    }
}
