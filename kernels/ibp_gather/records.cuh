// ibp_gather/records.cuh: record sources (staged in shared memory or read from global memory) and the decode of one coded record (spec 6.2).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- record sources ----------------------------------------------------------------------------

// A record staged in shared memory: its first byte is byte `off` (0..15) of the 16-byte aligned
// buffer `w` (read as 32-bit words); at least 12 readable bytes follow its end.
struct SmemRecord {
    const ibp_u32* w;
    ibp_u64 len;
    ibp_u32 off;
    __device__ __forceinline__ ibp_u32 bits32(ibp_u32 s) const {  // bits [s, s+32)
        s += 8 * off;
        const ibp_u32 i = s >> 5;
        return __funnelshift_r(w[i], w[i + 1], s & 31u);
    }
    __device__ __forceinline__ ibp_u32 word32(ibp_u32 i) const { return bits32(i * 32); }
    __device__ __forceinline__ ibp_u64 bits64(ibp_u32 s) const {  // bits [s, s+64)
        s += 8 * off;
        const ibp_u32 i = s >> 5, sh = s & 31u;
        const ibp_u32 a = w[i], b = w[i + 1], c = w[i + 2];
        return (ibp_u64)__funnelshift_r(a, b, sh) | ((ibp_u64)__funnelshift_r(b, c, sh) << 32);
    }
    __device__ __forceinline__ ibp_u8 byte_at(ibp_u32 i) const { i += off; return (ibp_u8)(w[i >> 2] >> (8 * (i & 3))); }
};

// A record read from global memory byte by byte (records larger than the staging buffer).
struct GmemRecord {
    const ibp_u8* p;
    ibp_u64 len;
    __device__ __forceinline__ ibp_u64 bits64(ibp_u64 s) const {
        ibp_u64 b = s >> 3;
        ibp_u32 sh = (ibp_u32)(s & 7);
        ibp_u64 v = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) v |= (b + i < len ? (ibp_u64)p[b + i] : 0ull) << (8 * i);
        if (sh) v = (v >> sh) | ((b + 8 < len ? (ibp_u64)p[b + 8] : 0ull) << (64 - sh));
        return v;
    }
    __device__ __forceinline__ ibp_u32 word32(ibp_u64 i) const { return (ibp_u32)bits64(i * 32); }
    __device__ __forceinline__ ibp_u32 bits32(ibp_u64 s) const { return (ibp_u32)bits64(s); }
    __device__ __forceinline__ ibp_u8 byte_at(ibp_u64 i) const { return p[i]; }
};

// ---- decoding one coded record (spec 6.2) ------------------------------------------------------

#ifndef IBP_GATHER_ROUND_PAIRS
#define IBP_GATHER_ROUND_PAIRS 1
#endif
#ifndef IBP_GATHER_TABLES
#define IBP_GATHER_TABLES 1  // ibp_gather decodes through the tables ibp_build_tables made
#endif
// A chunk's table offset with this bit set locates a sparse table (sparse_rows.cuh), not a decode table.
#define IBP_TABLE_SPARSE (1ull << 63)
#ifndef IBP_GATHER_LEAN_LOOKUP
#define IBP_GATHER_LEAN_LOOKUP 1  // ibp_gather finds a row's chunk by division (prm.chunk_rows), 32-bit length sums
#endif
#ifndef IBP_GATHER_SPANS
#define IBP_GATHER_SPANS 1  // ibp_gather takes a coded record's offset and length from prm.row_spans when set
#endif
#ifndef IBP_GATHER_RAW_CHUNKS
#define IBP_GATHER_RAW_CHUNKS 1  // ibp_gather locates raw-chunk records by position, copies them directly
#endif
#if IBP_GATHER_RAW_CHUNKS != 0 && IBP_GATHER_RAW_CHUNKS != 1
#error "IBP_GATHER_RAW_CHUNKS is 0 or 1"
#endif

// Inclusive warp scan (shfl.up's in-range predicate guards the add: two instructions per step).
#define IBP_SCAN_STEP(x, d)                                                   \
    asm volatile("{\n\t.reg .u32 r;\n\t.reg .pred p;\n\t"                   \
                 "shfl.sync.up.b32 r|p, %0, " #d ", 0, 0xffffffff;\n\t"       \
                 "@p add.u32 %0, r, %0;\n\t}"                                \
                 : "+r"(x))
__device__ __forceinline__ ibp_u32 warp_inclusive_scan(ibp_u32 x) {
#ifdef __CUDA_ARCH__
    IBP_SCAN_STEP(x, 1);
    IBP_SCAN_STEP(x, 2);
    IBP_SCAN_STEP(x, 4);
    IBP_SCAN_STEP(x, 8);
    IBP_SCAN_STEP(x, 16);
#else  // host builds of this file (kernels/host): the same scan with shuffles
    const ibp_u32 lane = threadIdx.x & 31u;
    for (ibp_u32 d = 1; d < 32; d <<= 1) {
        const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
#endif
    return x;
}

// IBP_ROUND_BALLOT_SCAN=1: a gather round whose fields are all 0 or W bits long (positions wholly
// invariant or wholly free: sparse rows such as Cora's, where 99 % of positions are invariant
// zeros) takes its field offsets and totals from ballots and popcounts of the W-bit fields
// instead of the five-step shuffle scan and the shuffle of its total: three votes on the round's
// dependent chain instead of six shuffles (decode_coded_span, decode_table_span).
// Built in GPU_NOTES entry 66 and timed in entry 68: Cora and f32 at 5 % non-zero gather at the same
// speed either way, so off by default.
#ifndef IBP_ROUND_BALLOT_SCAN
#define IBP_ROUND_BALLOT_SCAN 0
#endif

// Lanes 0 .. lane of the warp (the special register on the GPU).
__device__ __forceinline__ ibp_u32 lanemask_le(ibp_u32 lane) {
#ifdef __CUDA_ARCH__
    ibp_u32 m;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(m));
    return m;
#else
    return 0xffffffffu >> (31u - lane);
#endif
}

// The inclusive scan over the warp of fa | fb << 16 (two rounds' field lengths, fb = 0 for one
// round), and in sums its value at lane 31 (the rounds' totals).
__device__ __forceinline__ ibp_u32 round_scan(ibp_u32 fa, ibp_u32 fb, ibp_u32 W, ibp_u32 lane, ibp_u32& sums) {
#if IBP_ROUND_BALLOT_SCAN
    if (__all_sync(FULL_MASK, (fa == 0 || fa == W) && (fb == 0 || fb == W))) {
        const ibp_u32 upto = lanemask_le(lane);
        const ibp_u32 wide_a = __ballot_sync(FULL_MASK, fa != 0), wide_b = __ballot_sync(FULL_MASK, fb != 0);
        sums = W * (__popc(wide_a) | __popc(wide_b) << 16);
        return W * (__popc(wide_a & upto) | __popc(wide_b & upto) << 16);
    }
#endif
    const ibp_u32 x = warp_inclusive_scan(fa | (fb << 16));
    sums = __shfl_sync(FULL_MASK, x, 31);
    return x;
}


// IBP_STORE_WORD_HALVES: store_word writes a 4-byte aligned 64-bit word as two 32-bit halves (1)
// or byte by byte (0, as before GPU_NOTES entry 92).
#ifndef IBP_STORE_WORD_HALVES
#define IBP_STORE_WORD_HALVES 1
#endif
// Stores word j (WB bytes, or its low `nbytes` bytes for a partial last word) at dst. A whole 64-bit
// word at a 4-byte aligned address (rows of 4 mod 8 bytes: every other row of a gather, Cora's
// 5,732 B among them) takes two 32-bit stores; other unaligned words, one store per byte.
template <int WB>
__device__ __forceinline__ void store_word(ibp_u8* dst, ibp_u32 j, typename Word<WB>::R w, ibp_u32 nbytes, bool aligned) {
    typedef typename Word<WB>::T T;
    if (aligned && nbytes == WB) {
        ((T*)dst)[j] = (T)w;
        return;
    }
    ibp_u8* p = dst + (ibp_u64)j * WB;
    if (IBP_STORE_WORD_HALVES && WB == 8 && nbytes == 8 && ((size_t)p & 3) == 0) {
        ((ibp_u32*)p)[0] = (ibp_u32)w;
        ((ibp_u32*)p)[1] = (ibp_u32)((ibp_u64)w >> 32);
        return;
    }
    for (ibp_u32 b = 0; b < nbytes; b++) p[b] = (ibp_u8)(w >> (8 * b));
}

// Stores word j of a row of n words (the last one partial: last_bytes of WB), noting in
// partial_bad whether a partial last word has bits set above the row's bytes.
template <int WB>
__device__ __forceinline__ void store_row_word(ibp_u8* dst, ibp_u32 j, typename Word<WB>::R word, ibp_u32 n,
                                               ibp_u32 last_bytes, bool aligned, bool& partial_bad) {
    if (j + 1 == n) {
        if (last_bytes < WB) partial_bad = (word >> (8 * last_bytes)) != 0;
        store_word<WB>(dst, j, word, last_bytes, aligned);
    } else {
        store_word<WB>(dst, j, word, WB, aligned);
    }
}

// Words j0 .. je - 1 (j0 a multiple of 32, je <= n) of a coded record of n words, read with their
// Mask/Bitval words from masks/bitvals (the row's group), fields from stream bit pos on (pos
// advances past them): E_ROW_LENGTH as soon as a round's fields would end past total_bits, before
// any of them is read. last_bytes: bytes of word n - 1 (partial_bad: it has bits set above them).
template <int WB, class Rec>
__device__ __forceinline__ ibp_u32 decode_coded_span(const Rec& rec, ibp_u8* dst, const typename Word<WB>::T* masks,
                                                     const typename Word<WB>::T* bitvals, ibp_u32 n, ibp_u32 j0,
                                                     ibp_u32 je, ibp_u32 total_bits, ibp_u32& pos, ibp_u32 last_bytes,
                                                     bool aligned, bool& partial_bad, ibp_u32 lane) {
    typedef typename Word<WB>::R R;
    const ibp_u32 W = WB * 8;
    // Mask/Bitval of this lane's word, loaded one round ahead so the loads overlap a round's work.
    R m_next = 0, b_next = 0;
    if (j0 + lane < je) {
        m_next = (R)__ldg(masks + j0 + lane);
        b_next = (R)__ldg(bitvals + j0 + lane);
    }
#if IBP_GATHER_ROUND_PAIRS
    // While a second round exists (j0 + 32 < je), lane decodes words j0 + lane and j0 + 32 + lane:
    // one warp scan of both field lengths (16-bit halves; a round's sum < 2^16), independent work.
    for (; j0 + 32 < je; j0 += 64) {
        const ibp_u32 ja = j0 + lane, jb = ja + 32;
        const bool active_b = jb < je;
        const ibp_u32 pbits_a = rec.word32(j0 >> 5), pbits_b = rec.word32((j0 >> 5) + 1);
        const bool pa = (pbits_a >> lane) & 1u;
        const bool pb = active_b && ((pbits_b >> lane) & 1u);
        const R ma = m_next, ba = b_next;
        R mb = 0, bb = 0;
        if (active_b) {
            mb = (R)__ldg(masks + jb);
            bb = (R)__ldg(bitvals + jb);
        }
        if (ja + 64 < je) {
            m_next = (R)__ldg(masks + ja + 64);
            b_next = (R)__ldg(bitvals + ja + 64);
        }
        const ibp_u32 fa = pa ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)ma) : __popc((ibp_u32)ma)) : W;
        const ibp_u32 fb = active_b ? (pb ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)mb) : __popc((ibp_u32)mb)) : W) : 0u;
        ibp_u32 sums;
        const ibp_u32 x = round_scan(fa, fb, W, lane, sums);
        const ibp_u32 bits_a = sums & 0xffffu, bits_b = sums >> 16;
        if (pos + bits_a + bits_b > total_bits) return IBP_STATUS_ROW_LENGTH;
        const R wmask = (R)(WB == 8 ? ~0ull : (ibp_u64)low_mask32(W));
        {
            const ibp_u32 sa = pos + (x & 0xffffu) - fa;
            const R v = WB == 8 ? (R)(rec.bits64(sa) & low_mask64(fa)) : (R)(rec.bits32(sa) & low_mask32(fa));
            store_word<WB>(dst, ja, pa ? (R)(ba | deposit(v, (R)(~ma & wmask))) : v, WB, aligned);
        }
        if (active_b) {
            const ibp_u32 sb = pos + bits_a + (x >> 16) - fb;
            const R v = WB == 8 ? (R)(rec.bits64(sb) & low_mask64(fb)) : (R)(rec.bits32(sb) & low_mask32(fb));
            const R word = pb ? (R)(bb | deposit(v, (R)(~mb & wmask))) : v;
            store_row_word<WB>(dst, jb, word, n, last_bytes, aligned, partial_bad);
        }
        pos += bits_a + bits_b;
    }
#endif
    for (; j0 < je; j0 += 32) {
        const ibp_u32 j = j0 + lane;
        const bool active = j < je;
        const ibp_u32 pbits = rec.word32(j0 >> 5);  // participation bits j0 .. j0+31 (< n <= total)
        const bool p = active && ((pbits >> lane) & 1u);
        const R m = m_next, b = b_next;
        if (j + 32 < je) {
            m_next = (R)__ldg(masks + j + 32);
            b_next = (R)__ldg(bitvals + j + 32);
        }
        const ibp_u32 f = active ? (p ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)m) : __popc((ibp_u32)m)) : W) : 0u;
#if IBP_ROUND_BALLOT_SCAN
        ibp_u32 round_bits;
        const ibp_u32 x = round_scan(f, 0u, W, lane, round_bits);
#else
        ibp_u32 x = f;  // inclusive warp scan of field lengths
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= (ibp_u32)d) x += y;
        }
        const ibp_u32 round_bits = __shfl_sync(FULL_MASK, x, 31);
#endif
        if (pos + round_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        if (active) {
            const ibp_u32 s = pos + (x - f);
            R v;
            if (WB == 8) v = (R)(rec.bits64(s) & low_mask64(f));
            else v = (R)(rec.bits32(s) & low_mask32(f));
            R word = v;
            if (p) {
                const R wmask = (R)(WB == 8 ? ~0ull : (ibp_u64)low_mask32(W));
                word = b | deposit(v, (R)(~m & wmask));
            }
            store_row_word<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
        }
        pos += round_bits;
    }
    return IBP_STATUS_OK;
}

// The checks once a coded record's fields end at stream bit pos, for decode_coded: the record length
// rule L == align_up(ceil(T/8), A) (E_ROW_LENGTH), padding bits T .. 8L-1 zero, then a partial last
// word's bits above the row's bytes zero (spec 2.4, 6.2; both E_PADDING).
template <class Rec>
__device__ __forceinline__ ibp_u32 coded_tail(const Rec& rec, ibp_u32 pos, ibp_u32 align_log2, bool partial_bad,
                                              ibp_u32 lane) {
    const ibp_u32 a = 1u << align_log2;
    const ibp_u32 need = (((pos + 7) >> 3) + a - 1) & ~(a - 1);
    if (need != rec.len) return IBP_STATUS_ROW_LENGTH;
    bool bad = false;
    const ibp_u32 first_full = (pos + 7) >> 3;
    if (lane == 0 && (pos & 7)) bad = (rec.byte_at(pos >> 3) >> (pos & 7)) != 0;
    for (ibp_u32 t = first_full + lane; t < (ibp_u32)rec.len; t += 32) bad |= rec.byte_at(t) != 0;
    if (__any_sync(FULL_MASK, bad)) return IBP_STATUS_PADDING;
    if (__any_sync(FULL_MASK, partial_bad)) return IBP_STATUS_PADDING;
    return IBP_STATUS_OK;
}

// Whether n words of WB bytes make a row of row_bytes bytes (the last one partial when WB does not
// divide row_bytes, spec 2.4).
__device__ __forceinline__ bool words_fit_row(ibp_u32 n, ibp_u32 wb, ibp_u32 row_bytes) {
    return n != 0 && (ibp_u64)(n - 1) * wb < row_bytes && (ibp_u64)n * wb >= row_bytes;
}

// Decodes one coded record of a row of row_bytes bytes (n = ceil(row_bytes / WB) words, the last one
// partial when WB does not divide row_bytes, spec 2.4) into dst.
template <int WB, class Rec>
__device__ __forceinline__ ibp_u32 decode_coded(const Rec& rec, ibp_u8* dst, const ibp_u8* masks_p,
                                                const ibp_u8* bitvals_p, ibp_u32 n, ibp_u32 row_bytes,
                                                ibp_u32 align_log2, ibp_u32 lane) {
    typedef typename Word<WB>::T T;
    const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
    if (!words_fit_row(n, WB, row_bytes)) return IBP_STATUS_LAYOUT;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;  // 1 .. WB
    bool partial_bad = false;
    // Bit positions fit 32 bits: a record is at most 2^24 + 127 bytes (checked against raw_padded).
    const ibp_u32 total_bits = (ibp_u32)(rec.len * 8);
    if (n > total_bits) return IBP_STATUS_ROW_LENGTH;
    ibp_u32 pos = n;  // stream bit of the next field
    const ibp_u32 code = decode_coded_span<WB>(rec, dst, (const T*)masks_p, (const T*)bitvals_p, n, 0, n, total_bits,
                                               pos, last_bytes, aligned, partial_bad, lane);
    if (code != IBP_STATUS_OK) return code;
    return coded_tail(rec, pos, align_log2, partial_bad, lane);
}

template <class Rec>
__device__ __forceinline__ ibp_u32 decode_any(const Rec& rec, ibp_u8* dst, const ibp_u8* masks, const ibp_u8* bitvals,
                                              ibp_u32 n, ibp_u32 wb, ibp_u32 row_bytes, ibp_u32 align_log2, ibp_u32 lane) {
    switch (wb) {
        case 1: return decode_coded<1>(rec, dst, masks, bitvals, n, row_bytes, align_log2, lane);
        case 2: return decode_coded<2>(rec, dst, masks, bitvals, n, row_bytes, align_log2, lane);
        case 4: return decode_coded<4>(rec, dst, masks, bitvals, n, row_bytes, align_log2, lane);
        default: return decode_coded<8>(rec, dst, masks, bitvals, n, row_bytes, align_log2, lane);
    }
}
