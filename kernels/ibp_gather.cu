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
// The file is compiled with ibp_status.h prepended (NVRTC gets no include paths).

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

// ---- word-width traits -------------------------------------------------------------------------

template <int WB> struct Word;
template <> struct Word<1> { typedef unsigned char T; typedef ibp_u32 R; };
template <> struct Word<2> { typedef unsigned short T; typedef ibp_u32 R; };
template <> struct Word<4> { typedef ibp_u32 T; typedef ibp_u32 R; };
template <> struct Word<8> { typedef ibp_u64 T; typedef ibp_u64 R; };

__device__ __forceinline__ ibp_u32 low_mask32(ibp_u32 bits) { return bits >= 32 ? ~0u : ((1u << bits) - 1u); }
__device__ __forceinline__ ibp_u64 low_mask64(ibp_u32 bits) { return bits >= 64 ? ~0ull : ((1ull << bits) - 1ull); }

// Deposits the low bits of v into the set bits of free_bits, lowest first (pdep). A single
// contiguous run of free bits (the usual case for float data) takes a shift and a mask; otherwise
// one loop iteration per run.
__device__ __forceinline__ ibp_u32 deposit(ibp_u32 v, ibp_u32 free_bits) {
    if (free_bits == 0u) return 0u;
    const int p0 = __ffs((int)free_bits) - 1;
    const ibp_u32 t = free_bits >> p0;
    if ((t & (t + 1u)) == 0u) return (v << p0) & free_bits;
    ibp_u32 r = 0;
    while (free_bits) {
        int p = __ffs((int)free_bits) - 1;
        ibp_u32 shifted = free_bits >> p;
        int run = __ffs((int)~shifted) - 1;
        if (run < 0 || p + run >= 32) { r |= v << p; break; }
        ibp_u32 m = (1u << run) - 1u;
        r |= (v & m) << p;
        v >>= run;
        free_bits &= ~(m << p);
    }
    return r;
}
// 64-bit deposit as two 32-bit deposits (the GPU has no native 64-bit shifts or bit scans).
__device__ __forceinline__ ibp_u64 deposit(ibp_u64 v, ibp_u64 free_bits) {
    const ibp_u32 free_lo = (ibp_u32)free_bits, free_hi = (ibp_u32)(free_bits >> 32);
    const ibp_u32 lo_count = (ibp_u32)__popc(free_lo);
    const ibp_u64 v_hi = lo_count >= 64 ? 0ull : (v >> lo_count);
    return (ibp_u64)deposit((ibp_u32)v, free_lo) | ((ibp_u64)deposit((ibp_u32)v_hi, free_hi) << 32);
}

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


// Stores word j (WB bytes, or its low `nbytes` bytes for a partial last word) at dst.
template <int WB>
__device__ __forceinline__ void store_word(ibp_u8* dst, ibp_u32 j, typename Word<WB>::R w, ibp_u32 nbytes, bool aligned) {
    typedef typename Word<WB>::T T;
    if (aligned && nbytes == WB) {
        ((T*)dst)[j] = (T)w;
        return;
    }
    ibp_u8* p = dst + (ibp_u64)j * WB;
    for (ibp_u32 b = 0; b < nbytes; b++) p[b] = (ibp_u8)(w >> (8 * b));
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
        const ibp_u32 x = warp_inclusive_scan(fa | (fb << 16));
        const ibp_u32 sums = __shfl_sync(FULL_MASK, x, 31);
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
            if (jb + 1 == n) {
                if (last_bytes < WB) partial_bad = (word >> (8 * last_bytes)) != 0;
                store_word<WB>(dst, jb, word, last_bytes, aligned);
            } else {
                store_word<WB>(dst, jb, word, WB, aligned);
            }
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
        ibp_u32 x = f;  // inclusive warp scan of field lengths
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= (ibp_u32)d) x += y;
        }
        const ibp_u32 round_bits = __shfl_sync(FULL_MASK, x, 31);
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
            if (j + 1 == n) {
                if (last_bytes < WB) partial_bad = (word >> (8 * last_bytes)) != 0;
                store_word<WB>(dst, j, word, last_bytes, aligned);
            } else {
                store_word<WB>(dst, j, word, WB, aligned);
            }
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

// ---- copies ------------------------------------------------------------------------------------

// Staging of a record into shared memory, split in two so that the loads of the first part are in
// flight while the warp does other work (the next row's lookups): `begin` loads up to
// IBP_PREFETCH_VECS 16-byte vectors per lane into registers, `end` stores them and copies the rest.
#ifndef IBP_PREFETCH_VECS
#define IBP_PREFETCH_VECS 2
#endif
struct Prefetch {
    uint4 v[IBP_PREFETCH_VECS];
};

// Every record is staged with 16-byte loads from the 16-byte boundary at or below its start up to
// the one at or above its end: both stay inside the payload buffer, where every chunk payload
// starts 128-byte aligned and is followed by alignment padding or PAYLOAD_SLACK bytes. The record
// then starts at byte (src & 15) of the staging buffer.
__device__ __forceinline__ const uint4* stage_span(const ibp_u8* src, ibp_u64 len, ibp_u64& vecs) {
    const size_t a = (size_t)src & ~(size_t)15;
    vecs = (((size_t)src + len + 15) - a) >> 4;
    return (const uint4*)a;
}

__device__ __forceinline__ void stage_begin(Prefetch& pf, const ibp_u8* src, ibp_u64 len, ibp_u32 lane) {
    ibp_u64 vecs;
    const uint4* s = stage_span(src, len, vecs);
#pragma unroll
    for (int u = 0; u < IBP_PREFETCH_VECS; u++) {
        const ibp_u64 i = lane + 32 * u;
        if (i < vecs) pf.v[u] = s[i];
    }
}

__device__ __forceinline__ void stage_end(const Prefetch& pf, ibp_u8* dst, const ibp_u8* src, ibp_u64 len, ibp_u32 lane) {
    ibp_u64 vecs;
    const uint4* s = stage_span(src, len, vecs);
    uint4* d = (uint4*)dst;
#pragma unroll
    for (int u = 0; u < IBP_PREFETCH_VECS; u++) {
        const ibp_u64 i = lane + 32 * u;
        if (i < vecs) d[i] = pf.v[u];
    }
    ibp_u64 i = lane + 32 * IBP_PREFETCH_VECS;
    for (; i + 96 < vecs; i += 128) {
        uint4 a = s[i], b = s[i + 32], c = s[i + 64], e = s[i + 96];
        d[i] = a; d[i + 32] = b; d[i + 64] = c; d[i + 96] = e;
    }
    for (; i < vecs; i += 32) d[i] = s[i];
}

// Copies n bytes from src to dst (either may be shared or global), 16/4/1-byte accesses by alignment.
__device__ __forceinline__ void warp_copy(ibp_u8* dst, const ibp_u8* src, ibp_u64 n, ibp_u32 lane) {
    if (((((size_t)src) | ((size_t)dst)) & 15) == 0) {
        const uint4* s = (const uint4*)src;
        uint4* d = (uint4*)dst;
        ibp_u64 vecs = n >> 4;
        ibp_u64 i = lane;
        for (; i + 96 < vecs; i += 128) {
            uint4 a = s[i], b = s[i + 32], c = s[i + 64], e = s[i + 96];
            d[i] = a; d[i + 32] = b; d[i + 64] = c; d[i + 96] = e;
        }
        for (; i < vecs; i += 32) d[i] = s[i];
        for (ibp_u64 t = (vecs << 4) + lane; t < n; t += 32) dst[t] = src[t];
    } else if (((((size_t)src) | ((size_t)dst)) & 3) == 0) {
        ibp_u64 words = n >> 2;
        for (ibp_u64 i = lane; i < words; i += 32) ((ibp_u32*)dst)[i] = ((const ibp_u32*)src)[i];
        for (ibp_u64 t = (words << 2) + lane; t < n; t += 32) dst[t] = src[t];
    } else {
        for (ibp_u64 t = lane; t < n; t += 32) dst[t] = src[t];
    }
}

// ---- per-position decode tables ---------------------------------------------------------------
//
// The free bits (~Mask) of each 32-bit half of a word form at most two runs in the usual case (float
// data: a mantissa/exponent run and the sign bit). Each half of a participating word is then
//   (X << sh0) & run0 | (X << sh1) & run1 | Bitval,   X = the 32 stream bits at the half's field,
// with sh0 = start of run 0 and sh1 = start of run 1 - length of run 0: no deposit loop. Entry j:
//   tmask[j] = {run0 lo, run1 lo, run0 hi, run1 hi}
//   tinfo[j] = {Bitval lo, Bitval hi, sh0 lo | sh1 lo << 8 | sh0 hi << 16 | sh1 hi << 24,
//               F | (free bits in the low half) << 8 | (3+ runs in a half) << 31 | (5+ runs) << 30}
// A word with 3 or 4 runs in a half (bf16 pairs, 8- and 16-bit pixels, masks picked at A = 128)
// keeps one shift per run and the start bit of runs 1-3, and deposits with one select per run
// (deposit_runs): each run's bits are X shifted for that run, bits at and above a run's start are
// overwritten by the next run's shift, and the free bits are kept; a missing run repeats the last
// one. Such an entry is
//   tmask[j] = {free lo, shifts lo, free hi, shifts hi}   (byte k: shift of run k)
//   tinfo[j] = {Bitval lo, Bitval hi, starts lo | starts hi << 16, as above}   (5 bits per start of runs 1-3)
// A word with 5+ runs in a half keeps {free lo, -, free hi, -} and deposits run by run in a loop.
// ibp_decode_tiles builds a chunk's table in shared memory; ibp_build_tables builds them in device
// memory at load time for ibp_gather.
//

#define IBP_TILE_MULTI (1u << 31)
#define IBP_TILE_MANY (1u << 30)
// Flags build_table returns: every entry has the same F; no entry has IBP_TILE_MULTI.
#define IBP_TABLE_UNIFORM_F 1u
#define IBP_TABLE_NO_MULTI 2u

// Whether the stored length of chunk row idx (lb bytes at lengths_offset + idx * lb) lies inside
// the metadata. lb must be 1, 2 or 4 and no sum may wrap, whatever a descriptor holds; idx < 2^32 (a
// row of a chunk) and lb <= 4, so once lengths_offset <= meta_size nothing below wraps.
__device__ __forceinline__ bool stored_len_inside(ibp_u64 lengths_offset, ibp_u64 idx, ibp_u32 lb, ibp_u64 meta_size) {
    return (lb == 1 || lb == 2 || lb == 4) && lengths_offset <= meta_size && lengths_offset + (idx + 1) * lb <= meta_size;
}

__device__ __forceinline__ ibp_u64 read_stored_len(const ibp_u8* p, ibp_u32 lb) {
    return lb == 1 ? (ibp_u64)p[0]
         : lb == 2 ? (ibp_u64)(p[0] | (p[1] << 8))
                   : (ibp_u64)p[0] | ((ibp_u64)p[1] << 8) | ((ibp_u64)p[2] << 16) | ((ibp_u64)p[3] << 24);
}

// read_stored_len with one load when p is aligned to lb (the loader places each chunk's lengths at
// an 8-byte aligned offset of the 16-byte aligned metadata), byte loads otherwise.
__device__ __forceinline__ ibp_u32 load_stored_len(const ibp_u8* p, ibp_u32 lb) {
    if ((((size_t)p) & (lb - 1)) == 0) return lb == 1 ? p[0] : lb == 2 ? *(const ibp_u16*)p : *(const ibp_u32*)p;
    return (ibp_u32)read_stored_len(p, lb);
}

// Bits [b, b+32) of the shared-memory bit stream w (bit b = bit b%32 of word b/32).
__device__ __forceinline__ ibp_u32 sbits32(const ibp_u32* w, ibp_u32 b) {
    const ibp_u32 i = b >> 5;
    return __funnelshift_r(w[i], w[i + 1], b & 31u);
}

// The first two runs of set bits of x: masks run0/run1, shifts sh0 = start of run 0 and
// sh1 = start of run 1 - length of run 0 (so a field's bits land in the runs in order); false when x
// has more than two runs.
__device__ __forceinline__ bool two_runs(ibp_u32 x, ibp_u32& run0, ibp_u32& run1, ibp_u32& sh0, ibp_u32& sh1) {
    run0 = run1 = sh0 = sh1 = 0;
    if (x == 0u) return true;
    const ibp_u32 p0 = (ibp_u32)(__ffs((int)x) - 1);
    const ibp_u32 t0 = x >> p0;
    const ibp_u32 l0 = (ibp_u32)__popc(t0 & ~(t0 + 1u));  // 1 .. 32 - p0
    run0 = (l0 >= 32u ? ~0u : ((1u << l0) - 1u)) << p0;
    sh0 = p0;
    const ibp_u32 rest = x & ~run0;
    if (rest == 0u) return true;
    const ibp_u32 p1 = (ibp_u32)(__ffs((int)rest) - 1);  // > p0 + l0
    const ibp_u32 t1 = rest >> p1;
    const ibp_u32 l1 = (ibp_u32)__popc(t1 & ~(t1 + 1u));  // < 32
    run1 = ((1u << l1) - 1u) << p1;
    sh1 = p1 - l0;
    return (rest & ~run1) == 0u;
}

// Up to four runs of set bits of x as deposit_runs takes them: byte k of shifts = start of run k -
// bits of runs 0..k-1, 5-bit field k-1 of starts = start of run k (k = 1..3); a run x does not have
// repeats the one before. False when x has more than four runs.
__device__ __forceinline__ bool four_runs(ibp_u32 x, ibp_u32& shifts, ibp_u32& starts) {
    shifts = starts = 0;
    ibp_u32 rest = x, used = 0, sh = 0, start = 0;
#pragma unroll
    for (ibp_u32 k = 0; k < 4; k++) {
        if (rest != 0u) {
            start = (ibp_u32)(__ffs((int)rest) - 1);
            const ibp_u32 t = rest >> start;
            const ibp_u32 len = (ibp_u32)__popc(t & ~(t + 1u));  // 1 .. 32 - start
            sh = start - used;
            used += len;
            rest &= ~(low_mask32(len) << start);
        }
        shifts |= sh << (8 * k);
        if (k > 0) starts |= start << (5 * (k - 1));
    }
    return rest == 0u;
}

// Deposits the low bits of v into the free bits `free` (at most four runs, described by four_runs'
// shifts and starts): v shifted for run 0, then for k = 1..3 the bits from run k's start on replaced
// by v shifted for run k, then the free bits kept. (__funnelshift_l takes the shift modulo 32, so
// each shift and start is read from its packed word with one shift.)
__device__ __forceinline__ ibp_u32 deposit_runs(ibp_u32 v, ibp_u32 free, ibp_u32 shifts, ibp_u32 starts) {
    ibp_u32 r = __funnelshift_l(0u, v, shifts);
#pragma unroll
    for (int k = 1; k < 4; k++) {
        const ibp_u32 from = __funnelshift_l(0u, ~0u, starts >> (5 * (k - 1)));
        r = (r & ~from) | (__funnelshift_l(0u, v, shifts >> (8 * k)) & from);
    }
    return r & free;
}

// Table entry of one position from its Mask m and Bitval b (W-bit words).
template <int WB>
__device__ __forceinline__ void table_entry(ibp_u64 m, ibp_u64 b, uint4& tm, uint4& ti) {
    const ibp_u64 wmask = WB == 8 ? ~0ull : ((1ull << (8 * WB)) - 1ull);
    const ibp_u64 free_bits = ~m & wmask;
    const ibp_u32 free_lo = (ibp_u32)free_bits, free_hi = (ibp_u32)(free_bits >> 32);
    ibp_u32 r0l, r1l, s0l, s1l, r0h, r1h, s0h, s1h;
    const bool two_lo = two_runs(free_lo, r0l, r1l, s0l, s1l);
    const bool two_hi = two_runs(free_hi, r0h, r1h, s0h, s1h);
    const ibp_u32 f_lo = (ibp_u32)__popc(free_lo);
    const ibp_u32 f = f_lo + (ibp_u32)__popc(free_hi);  // W - popcount(Mask)
    const bool multi = !(two_lo && two_hi);
    ibp_u32 shl = 0, stl = 0, shh = 0, sth = 0;
    const bool many = multi && !(four_runs(free_lo, shl, stl) & four_runs(free_hi, shh, sth));
    const ibp_u64 bv = b & wmask;
    ibp_u32 shifts = s0l | (s1l << 8) | (s0h << 16) | (s1h << 24);
    if (!multi) tm = make_uint4(r0l, r1l, r0h, r1h);
    else if (!many) { tm = make_uint4(free_lo, shl, free_hi, shh); shifts = stl | (sth << 16); }
    else tm = make_uint4(free_lo, 0u, free_hi, 0u);
    ti = make_uint4((ibp_u32)bv, (ibp_u32)(bv >> 32), shifts,
                    f | (f_lo << 8) | (multi ? IBP_TILE_MULTI : 0u) | (many ? IBP_TILE_MANY : 0u));
}

template <int WB>
__device__ __forceinline__ ibp_u64 load_word(const ibp_u8* p, ibp_u64 i) {
    typedef typename Word<WB>::T T;
    return (ibp_u64)__ldg((const T*)p + i);
}

// Where a word's second 32-bit piece starts, relative to its field (table_word_bits): after the low
// half's free bits for a participating word of at most four runs per half, else 32 bits on.
template <int WB, bool MULTI>
__device__ __forceinline__ ibp_u32 second_piece(bool p, const uint4& ti) {
    const bool many = MULTI && (int)ti.w < 0 && (ti.w & IBP_TILE_MANY);
    return p && !many ? ((ti.w >> 8) & 63u) : 32u;
}

// One word through the table from its field's pieces: xl = the 32 stream bits from the field's
// start, xh = the 32 from second_piece on (W = 64 only); p = participation bit. MULTI false: the
// caller knows no entry has IBP_TILE_MULTI.
template <int WB, bool MULTI>
__device__ __forceinline__ typename Word<WB>::R table_word_bits(ibp_u32 xl, ibp_u32 xh, bool p, const uint4& tm,
                                                                const uint4& ti) {
    typedef typename Word<WB>::R R;
    const ibp_u32 W = WB * 8;
    const ibp_u32 wlow = WB >= 4 ? ~0u : (1u << W) - 1u;  // a non-participating word: all W bits
    if (MULTI && p && (int)ti.w < 0 && !(ti.w & IBP_TILE_MANY)) {  // 3 or 4 runs of free bits in a half
        const ibp_u32 lo_w = deposit_runs(xl, tm.x, tm.y, ti.z) | ti.x;
        if (WB == 8) {
            const ibp_u32 hi_w = deposit_runs(xh, tm.z, tm.w, ti.z >> 16) | ti.y;
            return (R)(((ibp_u64)hi_w << 32) | lo_w);
        }
        return (R)lo_w;
    }
    if (MULTI && p && (int)ti.w < 0) {  // IBP_TILE_MANY: 5+ runs of free bits in a half
        ibp_u64 v64 = (ibp_u64)xl | ((ibp_u64)xh << 32);
        v64 &= low_mask64(ti.w & 127u);
        const ibp_u64 free_bits = (ibp_u64)tm.x | ((ibp_u64)tm.z << 32);
        const ibp_u64 bv = (ibp_u64)ti.x | ((ibp_u64)ti.y << 32);
        return (R)bv | deposit((R)v64, (R)free_bits);
    }
    ibp_u32 lo_w;
    if (p) lo_w = (__funnelshift_l(0u, xl, ti.z) & tm.x) | (__funnelshift_l(0u, xl, ti.z >> 8) & tm.y) | ti.x;
    else lo_w = xl & wlow;
    if (WB == 8) {
        ibp_u32 hi_w;
        if (p) hi_w = (__funnelshift_l(0u, xh, ti.z >> 16) & tm.z) | (__funnelshift_l(0u, xh, ti.z >> 24) & tm.w) | ti.y;
        else hi_w = xh;
        return (R)(((ibp_u64)hi_w << 32) | lo_w);
    }
    return (R)lo_w;
}

// One word through the table: the field of word j starts at stream bit s of the shared-memory
// stream w; p = participation bit.
template <int WB, bool MULTI = true>
__device__ __forceinline__ typename Word<WB>::R table_word(const ibp_u32* w, ibp_u32 s, bool p, const uint4& tm,
                                                           const uint4& ti) {
    const ibp_u32 xl = sbits32(w, s);
    const ibp_u32 xh = WB == 8 ? sbits32(w, s + second_piece<WB, MULTI>(p, ti)) : 0u;  // (W <= 32: F <= 32, xh unused)
    return table_word_bits<WB, MULTI>(xl, xh, p, tm, ti);
}

// Stores word j of a row of n words (the last one partial: last_bytes of WB), noting whether a
// partial last word has bits set above the row's bytes.
template <int WB>
__device__ __forceinline__ void table_store(ibp_u8* dst, ibp_u32 j, typename Word<WB>::R word, ibp_u32 n,
                                            ibp_u32 last_bytes, bool aligned, bool& partial_bad) {
    if (j + 1 == n) {
        if (last_bytes < WB) partial_bad = (word >> (8 * last_bytes)) != 0;
        store_word<WB>(dst, j, word, last_bytes, aligned);
    } else {
        store_word<WB>(dst, j, word, WB, aligned);
    }
}

#ifndef IBP_TAIL_WORDS
#define IBP_TAIL_WORDS 1  // padding checked 32 bits per lane (1) or a byte per lane (0)
#endif
// The checks once a coded record's fields end at stream bit pos (spec 6.2), for the table decoders:
// the record length rule L == align_up(ceil(T/8), A) (E_ROW_LENGTH), then padding bits T .. 8L-1
// zero (byte T/8 from bit T%8 on, then whole bytes) and, partial_bad, no bit of a partial last word
// above the row's bytes (spec 2.4): both E_PADDING. rec_byte: the record's byte in w.
__device__ __forceinline__ ibp_u32 record_tail(const ibp_u32* w, ibp_u32 rec_byte, ibp_u32 len, ibp_u32 pos,
                                               ibp_u32 align_log2, bool partial_bad, ibp_u32 lane) {
    const ibp_u32 a = 1u << align_log2;
    const ibp_u32 need = (((pos + 7) >> 3) + a - 1) & ~(a - 1);
    if (need != len) return IBP_STATUS_ROW_LENGTH;
    bool bad = partial_bad;
#if IBP_TAIL_WORDS
    // Stream bits from the record's bit pos to its end, 32 at a time from the aligned words of w (a
    // word may reach 3 bytes past the record: tiles and staging buffers have a 16-byte tail).
    const ibp_u32 from = rec_byte * 8 + pos, end = (rec_byte + len) * 8;
#pragma unroll 1
    for (ibp_u32 i = (from >> 5) + lane; i * 32 < end; i += 32) {
        const ibp_u32 b0 = i * 32;
        ibp_u32 m = b0 < from ? ~0u << (from - b0) : ~0u;  // from - b0 < 32
        if (end - b0 < 32) m &= (1u << (end - b0)) - 1u;
        bad |= (w[i] & m) != 0;
    }
#else
    const ibp_u8* bytes = (const ibp_u8*)w + rec_byte;
    const ibp_u32 t0 = pos >> 3;
#pragma unroll 1
    for (ibp_u32 t = t0 + lane; t < len; t += 32) bad |= (bytes[t] >> (t == t0 ? (pos & 7) : 0u)) != 0;
#endif
    if (__any_sync(FULL_MASK, bad)) return IBP_STATUS_PADDING;
    return IBP_STATUS_OK;
}

#ifndef IBP_TILE_ROUND_PAIRS
#define IBP_TILE_ROUND_PAIRS 1
#endif
// Words j0 .. je - 1 of a coded record (j0 a multiple of 32; je <= n) through the tables, their
// fields from stream bit pos on (pos advances past them): E_ROW_LENGTH as soon as a round's fields
// would end past total_bits, before any of them is read. base: the record's first stream bit in w.
template <int WB>
__device__ __forceinline__ ibp_u32 decode_table_span(const ibp_u32* w, ibp_u32 base, ibp_u32 total_bits, ibp_u8* dst,
                                                     const uint4* tmask, const uint4* tinfo, ibp_u32 n, ibp_u32 j0,
                                                     ibp_u32 je, ibp_u32& pos, ibp_u32 last_bytes, bool aligned,
                                                     bool& partial_bad, ibp_u32 lane) {
    const ibp_u32 W = WB * 8;
#if IBP_TILE_ROUND_PAIRS
    // Every word of the first round and at least one of the second exist (j0 + 32 < je).
    for (; j0 + 32 < je; j0 += 64) {
        const ibp_u32 ja = j0 + lane, jb = j0 + 32 + lane;
        const bool active_b = jb < je;
        const ibp_u32 pbits_a = sbits32(w, base + j0), pbits_b = sbits32(w, base + j0 + 32);
        const bool pa = (pbits_a >> lane) & 1u;
        const bool pb = active_b && ((pbits_b >> lane) & 1u);
        const ibp_u32 jbt = active_b ? jb : 0u;
        const uint4 tma = tmask[ja], tia = tinfo[ja];
        const uint4 tmb = tmask[jbt], tib = tinfo[jbt];
        const ibp_u32 fa = pa ? (tia.w & 127u) : W;
        const ibp_u32 fb = active_b ? (pb ? (tib.w & 127u) : W) : 0u;
        const ibp_u32 x = warp_inclusive_scan(fa | (fb << 16));
        const ibp_u32 sums = __shfl_sync(FULL_MASK, x, 31);
        const ibp_u32 bits_a = sums & 0xffffu, bits_b = sums >> 16;
        if (pos + bits_a + bits_b > total_bits) return IBP_STATUS_ROW_LENGTH;
        const ibp_u32 sa = base + pos + (x & 0xffffu) - fa;
        const ibp_u32 sb = base + pos + bits_a + (x >> 16) - fb;
        const typename Word<WB>::R word_a = table_word<WB>(w, sa, pa, tma, tia);
        if (active_b) {
            const typename Word<WB>::R word_b = table_word<WB>(w, sb, pb, tmb, tib);
            table_store<WB>(dst, jb, word_b, n, last_bytes, aligned, partial_bad);
        }
        table_store<WB>(dst, ja, word_a, n, last_bytes, aligned, partial_bad);
        pos += bits_a + bits_b;
    }
#endif
    for (; j0 < je; j0 += 32) {
        const ibp_u32 j = j0 + lane;
        const bool active = j < je;
        const ibp_u32 pbits = sbits32(w, base + j0);
        const bool p = active && ((pbits >> lane) & 1u);
        const ibp_u32 jt = active ? j : 0u;  // the table has n >= 1 entries per group
        const uint4 tm = tmask[jt];
        const uint4 ti = tinfo[jt];
        const ibp_u32 f = active ? (p ? (ti.w & 127u) : W) : 0u;
        const ibp_u32 x = warp_inclusive_scan(f);  // bit offsets of the fields within the round
        const ibp_u32 round_bits = __shfl_sync(FULL_MASK, x, 31);
        if (pos + round_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        if (active) {
            const typename Word<WB>::R word = table_word<WB>(w, base + pos + (x - f), p, tm, ti);
            table_store<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
        }
        pos += round_bits;
    }
    return IBP_STATUS_OK;
}

// Decodes one coded record at byte rec_byte of the shared-memory stream w through the tables
// (entries tmask/tinfo of the row's group). Same checks, order and codes as decode_coded.
// n_ok: n == ceil(row_bytes / WB) (checked once per tile).
// While two rounds of 32 words remain (IBP_TILE_ROUND_PAIRS), a lane decodes word j0 + lane and
// word j0 + 32 + lane together: both field lengths (<= 64 bits, so a round's sum < 2^16) share one
// warp scan as the low and high 16 bits of one 32-bit value, and the two words' loads and stores
// are independent, which gives the scheduler twice the work per dependent step.
template <int WB>
__device__ __forceinline__ ibp_u32 decode_table_row(const ibp_u32* w, ibp_u32 rec_byte, ibp_u32 len, ibp_u8* dst,
                                                    const uint4* tmask, const uint4* tinfo, ibp_u32 n, bool n_ok,
                                                    ibp_u32 row_bytes, ibp_u32 align_log2, ibp_u32 lane) {
    const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
    if (!n_ok) return IBP_STATUS_LAYOUT;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;  // 1 .. WB
    bool partial_bad = false;
    const ibp_u32 total_bits = len * 8;
    if (n > total_bits) return IBP_STATUS_ROW_LENGTH;
    ibp_u32 pos = n;  // stream bit of the next field
    const ibp_u32 code = decode_table_span<WB>(w, rec_byte * 8, total_bits, dst, tmask, tinfo, n, 0, n, pos, last_bytes,
                                               aligned, partial_bad, lane);
    if (code != IBP_STATUS_OK) return code;
    return record_tail(w, rec_byte, len, pos, align_log2, partial_bad, lane);
}

// ---- 32-bit and 16-bit words decoded in pairs ----------------------------------------------------
//
// In ibp_decode_tiles, a chunk of HW-bit words (HW = 32: IBP_TILE_W32_PAIRS; HW = 16:
// IBP_TILE_W16_PAIRS) with n > 16 whole words per row gets a table of P = ceil(n/2) pair entries:
// entry k is the 64-bit table entry of words 2k and 2k+1 (Mask and Bitval of word 2k in the low
// 32-bit half, of word 2k+1 in the high half; a 16-bit word's half has its upper 16 bits invariant
// and zero; a last word without a partner gets a high half with no free bits, so F of the pair is F
// of its low word). Lane k decodes both words of pair k: each half participates on its own (its own
// participation bit), so the pair's field length is (p_lo ? F_lo : HW) + (p_hi ? F - F_lo : HW) and
// the high half's field starts after the low half's. The two words then cost one table entry, one
// scan share and one 2*HW-bit store, like one word of twice the width (a 16-bit pair: one 32-bit
// store, so a round of 32 lanes writes 128 bytes instead of 64).
#ifndef IBP_TILE_W32_PAIRS
#define IBP_TILE_W32_PAIRS 1
#endif
#ifndef IBP_TILE_W16_PAIRS
#define IBP_TILE_W16_PAIRS 1
#endif

// One HW-bit half through its part of a pair entry: run masks r0/r1, shifts (byte sh), Bitval bv;
// free_bits, run shifts and starts for a 3-4 run entry (MULTI, deposit_runs), free bits for a 5+ run
// entry (many). p: the half's word participates; f: its field length. (Free bits and Bitval of a
// 16-bit half lie in its low 16 bits, so only a non-participating word's bits need the mask.)
template <bool MULTI, int HW>
__device__ __forceinline__ ibp_u32 pair_half(ibp_u32 x, bool p, ibp_u32 r0, ibp_u32 r1, ibp_u32 sh, ibp_u32 bv,
                                             bool multi, bool many, ibp_u32 f) {
    if (!p) return HW == 32 ? x : x & 0xffffu;
    if (MULTI && multi && !many) return bv | deposit_runs(x, r0, r1, sh);
    if (MULTI && multi) return bv | deposit(x & low_mask32(f), r0);  // r0 holds the half's free bits
    return (__funnelshift_l(0u, x, sh & 255u) & r0) | (__funnelshift_l(0u, x, (sh >> 8) & 255u) & r1) | bv;
}

// Words 2k and 2k+1 of a pair at stream bit s (pl/ph: their participation bits; ph false when the
// pair has no high word), as the low and high HW bits of one value.
template <bool MULTI, int HW>
__device__ __forceinline__ ibp_u64 pair_word(const ibp_u32* w, ibp_u32 s, bool pl, bool ph, const uint4& tm,
                                             const uint4& ti) {
    const ibp_u32 f_lo = (ti.w >> 8) & 63u, f_hi = (ti.w & 127u) - f_lo;
    const bool multi = (int)ti.w < 0, many = (ti.w & IBP_TILE_MANY) != 0;
    const ibp_u32 lo = pair_half<MULTI, HW>(sbits32(w, s), pl, tm.x, tm.y, ti.z, ti.x, multi, many, f_lo);
    const ibp_u32 hi = pair_half<MULTI, HW>(sbits32(w, s + (pl ? f_lo : (ibp_u32)HW)), ph, tm.z, tm.w,
                                            ti.z >> 16, ti.y, multi, many, f_hi);
    return ((ibp_u64)hi << HW) | lo;
}

// Field length of pair k (active: k < P; has_hi: 2k + 1 < n) of HW-bit words.
template <int HW>
__device__ __forceinline__ ibp_u32 pair_bits(bool active, bool has_hi, bool pl, bool ph, const uint4& ti) {
    const ibp_u32 f_lo = (ti.w >> 8) & 63u, f_hi = (ti.w & 127u) - f_lo;
    return active ? (pl ? f_lo : (ibp_u32)HW) + (has_hi ? (ph ? f_hi : (ibp_u32)HW) : 0u) : 0u;
}

// Stores pair k of a row of HW-bit words (its high word only when it exists), as one 2*HW-bit store
// when dst allows (aligned2: dst is 2*HW/8-byte aligned).
template <int HW>
__device__ __forceinline__ void pair_store(ibp_u8* dst, ibp_u32 k, ibp_u64 v, bool has_hi, bool aligned2) {
    if (HW == 32) {
        ibp_u32* d = (ibp_u32*)dst + 2 * k;
        if (has_hi && aligned2) *(ibp_u64*)d = v;
        else {
            d[0] = (ibp_u32)v;
            if (has_hi) d[1] = (ibp_u32)(v >> 32);
        }
    } else {
        ibp_u16* d = (ibp_u16*)dst + 2 * k;
        if (has_hi && aligned2) *(ibp_u32*)d = (ibp_u32)v;
        else {
            d[0] = (ibp_u16)v;
            if (has_hi) d[1] = (ibp_u16)(v >> 16);
        }
    }
}

// Decodes one coded record of n > 16 whole HW-bit words through a pair table (entries of the row's
// group at tmask/tinfo). Same checks, order and codes as decode_table_row.
#ifndef IBP_PAIR_ROUND_PAIRS
#define IBP_PAIR_ROUND_PAIRS 1
#endif
template <bool MULTI, int HW>
__device__ __forceinline__ ibp_u32 decode_pair_row(const ibp_u32* w, ibp_u32 rec_byte, ibp_u32 len, ibp_u8* dst,
                                                   const uint4* tmask, const uint4* tinfo, ibp_u32 n,
                                                   ibp_u32 align_log2, ibp_u32 lane) {
    const ibp_u32 P = (n + 1) >> 1;
    // (HW/8-aligned: row_bytes == n * HW/8, the output 8-aligned)
    const bool aligned2 = (((size_t)dst) & (HW / 4 - 1)) == 0;
    const ibp_u32 total_bits = len * 8;
    if (n > total_bits) return IBP_STATUS_ROW_LENGTH;
    const ibp_u32 base = rec_byte * 8;
    ibp_u32 pos = n;  // stream bit of the next field
    ibp_u32 k0 = 0;
#if IBP_PAIR_ROUND_PAIRS
    // Two rounds of 32 pairs per step while the second has a pair (k0 + 32 < P), as decode_table_row
    // does with words: a round's field bits (<= 64 per pair) are < 2^16, so both rounds share one
    // warp scan as the low and high 16 bits of one value, and their loads and stores are independent.
    for (; k0 + 32 < P; k0 += 64) {
        const ibp_u32 ka = k0 + lane, kb = k0 + 32 + lane;  // ka < P
        const bool active_b = kb < P, hi_a = 2 * ka + 1 < n, hi_b = 2 * kb + 1 < n;
        const ibp_u32 sh = (2 * lane) & 31u, half = lane < 16 ? 0u : 32u;
        const ibp_u32 two_a = sbits32(w, base + 2 * k0 + half) >> sh;
        const ibp_u32 two_b = sbits32(w, base + 2 * k0 + 64 + half) >> sh;
        const bool pla = two_a & 1u, pha = hi_a && (two_a & 2u);
        const bool plb = active_b && (two_b & 1u), phb = active_b && hi_b && (two_b & 2u);
        const ibp_u32 kbt = active_b ? kb : 0u;
        const uint4 tma = tmask[ka], tia = tinfo[ka];
        const uint4 tmb = tmask[kbt], tib = tinfo[kbt];
        const ibp_u32 fa = pair_bits<HW>(true, hi_a, pla, pha, tia), fb = pair_bits<HW>(active_b, hi_b, plb, phb, tib);
        const ibp_u32 x = warp_inclusive_scan(fa | (fb << 16));
        const ibp_u32 sums = __shfl_sync(FULL_MASK, x, 31);
        const ibp_u32 bits_a = sums & 0xffffu, bits_b = sums >> 16;
        if (pos + bits_a + bits_b > total_bits) return IBP_STATUS_ROW_LENGTH;
        const ibp_u64 va = pair_word<MULTI, HW>(w, base + pos + (x & 0xffffu) - fa, pla, pha, tma, tia);
        if (active_b) pair_store<HW>(dst, kb, pair_word<MULTI, HW>(w, base + pos + bits_a + (x >> 16) - fb, plb, phb, tmb, tib), hi_b, aligned2);
        pair_store<HW>(dst, ka, va, hi_a, aligned2);
        pos += bits_a + bits_b;
    }
#endif
    for (; k0 < P; k0 += 32) {
        const ibp_u32 k = k0 + lane;
        const bool active = k < P, has_hi = 2 * k + 1 < n;
        // Participation bits of words 2*k0 .. 2*k0 + 63: lane k's two at bit 2*lane.
        const ibp_u32 word_bits = lane < 16 ? sbits32(w, base + 2 * k0) : sbits32(w, base + 2 * k0 + 32);
        const ibp_u32 two = word_bits >> ((2 * lane) & 31u);
        const bool pl = active && (two & 1u), ph = active && has_hi && (two & 2u);
        const ibp_u32 kt = active ? k : 0u;
        const uint4 tm = tmask[kt], ti = tinfo[kt];
        const ibp_u32 f = pair_bits<HW>(active, has_hi, pl, ph, ti);
        const ibp_u32 x = warp_inclusive_scan(f);
        const ibp_u32 round_bits = __shfl_sync(FULL_MASK, x, 31);
        if (pos + round_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        if (active) pair_store<HW>(dst, k, pair_word<MULTI, HW>(w, base + pos + x - f, pl, ph, tm, ti), has_hi, aligned2);
        pos += round_bits;
    }
    return record_tail(w, rec_byte, len, pos, align_log2, false, lane);
}

// ---- per-row lookups ---------------------------------------------------------------------------

// Sum of x over the warp (every lane gets it).
__device__ __forceinline__ ibp_u32 warp_sum32(ibp_u32 x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(FULL_MASK, x, d);
    return x;
#else
    return __reduce_add_sync(FULL_MASK, x);
#endif
}

// A chunk descriptor read with five 16-byte loads (descriptors are 80 bytes in a 16-byte aligned
// array) instead of one load per field.
union ChunkVecs {
    uint4 v[5];
    IbpChunk c;
};
__device__ __forceinline__ IbpChunk load_chunk(const IbpChunk* p) {
    ChunkVecs u;
    const uint4* v = (const uint4*)p;
#pragma unroll
    for (int i = 0; i < 5; i++) u.v[i] = v[i];
    return u.c;
}

struct Job {
    const ibp_u8* src;      // record in global memory
    const ibp_u8* masks;    // the row's group's Mask words (Bitvals follow at + words_bytes)
    const uint4* table;     // the row's group's decode table entries (tinfo at + entries), or null
    ibp_u64 len;            // record bytes
    ibp_u64 words_bytes;    // G * n * W/8
    ibp_u32 n, wb, align_log2;
    ibp_u32 entries;        // G * n: the table's tmask entries (with a table)
    ibp_u32 code;           // IBP_STATUS_OK, or the failure found by the lookups
    bool raw, staged;
};

// Entry row of request k.
__device__ __forceinline__ ibp_u64 request_row(const IbpGatherParams& prm, ibp_u64 k) {
    return prm.rows ? prm.rows[k] : prm.first_row + k;
}

// Finds request k's record (entry row `row`) and metadata; all lanes get the same Job.
__device__ __forceinline__ Job lookup(const IbpGatherParams& prm, const ibp_u64* first_rows, ibp_u64 row, ibp_u32 lane) {
    Job job;
    job.code = IBP_STATUS_OK;
    job.src = 0; job.masks = 0; job.table = 0; job.len = 0; job.words_bytes = 0;
    job.n = 0; job.wb = 1; job.align_log2 = 0; job.entries = 0; job.raw = false; job.staged = false;
    if (row >= prm.entry_rows || prm.chunk_count == 0) { job.code = IBP_STATUS_ROW_INDEX; return job; }
    // Chunk of the row: last chunk with first_row <= row (uniform across the warp). With chunk_rows
    // set, chunk c is taken to start at row c * chunk_rows; the descriptor's check below rejects a
    // row that is not in the chunk found either way.
    ibp_u32 lo = 0;
#if IBP_GATHER_LEAN_LOOKUP
    if (prm.chunk_rows) {
        lo = row >> 32 ? prm.chunk_count : (ibp_u32)row / prm.chunk_rows;
        if (lo >= prm.chunk_count) { job.code = IBP_STATUS_ROW_INDEX; return job; }
    } else
#endif
    {
        ibp_u32 hi = prm.chunk_count;
        while (hi - lo > 1) {
            ibp_u32 mid = (lo + hi) >> 1;
            const ibp_u64 fr = first_rows ? first_rows[mid] : prm.chunks[mid].first_row;
            if (fr <= row) lo = mid; else hi = mid;
        }
    }
#if IBP_GATHER_LEAN_LOOKUP
    // With a flat row index (prm.row_spans: chunk found by division, see IbpGatherParams) the
    // record's span is loaded beside the descriptor, not after it and the row lengths.
    const bool spans = IBP_GATHER_SPANS && prm.row_spans != 0 && prm.chunk_rows != 0;
    const ibp_u64 span = spans ? prm.row_spans[row] : 0ull;
    const IbpChunk c = load_chunk(prm.chunks + lo);
#else
    const bool spans = false;
    const ibp_u64 span = 0;
    const IbpChunk& c = prm.chunks[lo];
#endif
    const ibp_u64 first = c.first_row;
    const ibp_u32 row_count = c.row_count;
    const ibp_u64 r = row - first;
    if (row < first || r >= row_count) { job.code = IBP_STATUS_ROW_INDEX; return job; }
    // A raw chunk's record r is raw_padded bytes at r * raw_padded (spec 5.5, checked by the loader):
    // no row lengths to read.
    const bool raw_chunk = IBP_GATHER_RAW_CHUNKS && c.group_count == 0;
    ibp_u64 off, len;
    if (raw_chunk) {
        len = c.raw_padded;
        off = r * len;
    } else if (spans) {
        off = span & IBP_SPAN_OFFSET_MASK;
        len = span >> IBP_SPAN_LENGTH_SHIFT;
    } else {
        const ibp_u64 anchor = c.anchors_index + (r >> 5);
        const ibp_u32 lb = c.length_bytes, align_log2 = c.align_log2;
        const ibp_u64 lengths_offset = c.lengths_offset;
        if (anchor >= prm.anchor_count) { job.code = IBP_STATUS_ROW_INDEX; return job; }
        // Record offset: anchor + lengths of the rows before r in its 32-row block; lane i holds row (r & ~31) + i.
        const ibp_u32 r_lane = (ibp_u32)(r & 31);
        ibp_u64 units = 0;
        bool index_ok = true;
        if (lane <= r_lane) {
            const ibp_u64 idx = (r & ~31ull) + lane;  // row <= r < row_count
            const ibp_u64 at = lengths_offset + idx * lb;
            if (!stored_len_inside(lengths_offset, idx, lb, prm.meta_size)) {
                index_ok = false;
            } else {
#if IBP_GATHER_LEAN_LOOKUP
                units = (ibp_u64)c.length_base + load_stored_len(prm.meta + at, lb);
#else
                units = (ibp_u64)c.length_base + read_stored_len(prm.meta + at, lb);
#endif
            }
        }
        const ibp_u64 anchor_value = prm.anchors[anchor];
        const ibp_u64 len_lane = units << align_log2;
#if IBP_GATHER_LEAN_LOOKUP
        // Every record is at most raw_padded <= 2^24 + 127 bytes (spec 5.4, checked by the loader; a
        // longer one is a layout failure here too), so the 32 lengths add up in 32 bits.
        index_ok = index_ok && len_lane <= c.raw_padded && c.raw_padded < (1u << 26);
        const ibp_u32 before = warp_sum32(lane < r_lane ? (ibp_u32)len_lane : 0u);
        len = __shfl_sync(FULL_MASK, (ibp_u32)len_lane, r_lane);
#else
        ibp_u64 before = lane < r_lane ? len_lane : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) before += __shfl_xor_sync(FULL_MASK, before, d);
        len = __shfl_sync(FULL_MASK, len_lane, r_lane);
#endif
        if (!__all_sync(FULL_MASK, index_ok)) { job.code = IBP_STATUS_LAYOUT; return job; }
        off = anchor_value + before;
    }
    const ibp_u64 payload_offset = c.payload_offset, payload_len = c.payload_len;
    const ibp_u32 raw_padded = c.raw_padded;
    // The record must lie inside the chunk's payload, and the payload inside the buffer.
    if (len == 0 || len > raw_padded || off > payload_len || len > payload_len - off ||
        payload_offset > prm.payload_size || payload_len > prm.payload_size - payload_offset) {
        job.code = IBP_STATUS_LAYOUT;
        return job;
    }
    job.src = prm.payload + payload_offset + off;
    job.len = len;
    job.raw = len == raw_padded;
    job.align_log2 = c.align_log2;
    if (!job.raw) {
        ibp_u32 g = 0;
        const ibp_u32 G = c.group_count;
        if (G == 0) { job.code = IBP_STATUS_ROW_LENGTH; return job; }  // raw chunk: every record raw (spec 5.5)
        if (G > 1) {
            if (c.groups_offset + r >= prm.meta_size) { job.code = IBP_STATUS_LAYOUT; return job; }
            g = prm.meta[c.groups_offset + r];
            if (g >= G) { job.code = IBP_STATUS_GROUP_ID; return job; }
        }
        const ibp_u32 n = c.words_per_row, wb = c.word_bytes;
        const ibp_u64 words_bytes = (ibp_u64)G * n * wb;
        const ibp_u64 masks_offset = c.masks_offset;
        if (masks_offset > prm.meta_size || 2 * words_bytes > prm.meta_size - masks_offset) {
            job.code = IBP_STATUS_LAYOUT;
            return job;
        }
        job.masks = prm.meta + masks_offset + (ibp_u64)g * n * wb;
        job.words_bytes = words_bytes;
        job.n = n;
        job.wb = wb;
#if IBP_GATHER_TABLES
        // The chunk's table, when the loader built one (G * n entries, see ibp_build_tables).
        // (Only when the table its descriptor implies lies in the tables buffer: the host builds it
        // from the same descriptor, but the kernel does not rely on that.)
        if (prm.table_offsets) {
            const ibp_u64 toff = prm.table_offsets[lo];
            if (toff != ~0ull && toff <= prm.tables_size && 32 * (ibp_u64)G * n <= prm.tables_size - toff) {
                job.table = (const uint4*)(prm.tables + toff) + (ibp_u64)g * n;
                job.entries = G * n;
            }
        }
#endif
    }
    // A raw chunk's record is copied straight to the output when both sides allow 16-byte vectors
    // and it has no padding; others are staged when the 16-byte vectors covering the record plus a
    // 16-byte tail fit the buffer.
    const bool direct = raw_chunk && len == prm.row_bytes && (prm.row_bytes & 15) == 0 &&
                        ((((size_t)job.src) | (size_t)prm.out) & 15) == 0;
    job.staged = !direct && ((len + 30) & ~15ull) + 16 <= prm.stage_bytes;
    return job;
}

// Decodes (or copies) a looked-up request into out row k.
__device__ __forceinline__ void finish(const IbpGatherParams& prm, const Job& job, ibp_u64 k, const ibp_u8* buf, ibp_u32 lane) {
    ibp_u8* dst = prm.out + k * (ibp_u64)prm.row_bytes;
    ibp_u32 code = job.code;
    if (code == IBP_STATUS_OK) {
        if (job.raw) {
            const ibp_u8* from = job.staged ? buf + ((size_t)job.src & 15) : job.src;
            warp_copy(dst, from, prm.row_bytes, lane);
            bool bad = false;
            for (ibp_u64 t = prm.row_bytes + lane; t < job.len; t += 32) bad |= from[t] != 0;
            if (__any_sync(FULL_MASK, bad)) code = IBP_STATUS_PADDING;
        } else if (job.staged && job.table) {
            const ibp_u32 n = job.n, row_bytes = prm.row_bytes;
            const bool n_ok = words_fit_row(n, job.wb, row_bytes);
            const ibp_u32* w = (const ibp_u32*)buf;
            const ibp_u32 at = (ibp_u32)((size_t)job.src & 15), len = (ibp_u32)job.len;
            const uint4* tinfo = job.table + job.entries;
            switch (job.wb) {
                case 1: code = decode_table_row<1>(w, at, len, dst, job.table, tinfo, n, n_ok, row_bytes, job.align_log2, lane); break;
                case 2: code = decode_table_row<2>(w, at, len, dst, job.table, tinfo, n, n_ok, row_bytes, job.align_log2, lane); break;
                case 4: code = decode_table_row<4>(w, at, len, dst, job.table, tinfo, n, n_ok, row_bytes, job.align_log2, lane); break;
                default: code = decode_table_row<8>(w, at, len, dst, job.table, tinfo, n, n_ok, row_bytes, job.align_log2, lane); break;
            }
        } else if (job.staged) {
            SmemRecord rec;
            rec.w = (const ibp_u32*)buf;
            rec.len = job.len;
            rec.off = (ibp_u32)((size_t)job.src & 15);
            code = decode_any(rec, dst, job.masks, job.masks + job.words_bytes, job.n, job.wb, prm.row_bytes, job.align_log2, lane);
        } else {
            GmemRecord rec;
            rec.p = job.src;
            rec.len = job.len;
            code = decode_any(rec, dst, job.masks, job.masks + job.words_bytes, job.n, job.wb, prm.row_bytes, job.align_log2, lane);
        }
    }
    if (code != IBP_STATUS_OK && lane == 0) ibp_report(prm.status, k, code);
}

#define IBP_SMEM_CHUNKS 256

// Chunk start rows for lookup's binary search, filled by the whole block (every thread must call
// it): shared memory (`smem`, IBP_SMEM_CHUNKS entries) when they fit, else null (lookup reads the
// descriptors); null too when chunks are found by division.
__device__ __forceinline__ const ibp_u64* chunk_first_rows(const IbpGatherParams& prm, ibp_u64* smem) {
    if ((IBP_GATHER_LEAN_LOOKUP && prm.chunk_rows) || prm.chunk_count > IBP_SMEM_CHUNKS) return 0;
    for (ibp_u32 i = threadIdx.x; i < prm.chunk_count; i += blockDim.x) smem[i] = prm.chunks[i].first_row;
    __syncthreads();
    return smem;
}

extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK, 6)
ibp_gather(const IbpGatherParams prm) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    __shared__ ibp_u64 first_rows_smem[IBP_SMEM_CHUNKS];
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warp = threadIdx.x >> 5;
    const ibp_u64 warps_total = (ibp_u64)gridDim.x * IBP_WARPS_PER_BLOCK;
    ibp_u64 k = (ibp_u64)blockIdx.x * IBP_WARPS_PER_BLOCK + warp;
    // The first request's row is loaded before the block's shared-memory fill, so the two loads overlap.
    const ibp_u64 row0 = k < prm.count ? request_row(prm, k) : 0;
    const ibp_u64* first_rows = chunk_first_rows(prm, first_rows_smem);
    ibp_u8* const stage = ibp_stage + (ibp_u64)warp * prm.stage_bytes;
    if (k >= prm.count) return;  // after the only __syncthreads
    Job cur = lookup(prm, first_rows, row0, lane);
    for (;;) {
        // Start loading this row's record, then do the next row's lookups while the loads fly.
        Prefetch pf;
        const bool stage_it = cur.code == IBP_STATUS_OK && cur.staged;
        if (stage_it) stage_begin(pf, cur.src, cur.len, lane);
        const ibp_u64 kn = k + warps_total;
        const bool have_next = kn < prm.count;
        Job nxt;
        if (have_next) nxt = lookup(prm, first_rows, request_row(prm, kn), lane);
        if (stage_it) stage_end(pf, stage, cur.src, cur.len, lane);
        __syncwarp();
        finish(prm, cur, k, stage, lane);
        __syncwarp();  // the staging buffer is refilled for the next row
        if (!have_next) break;
        cur = nxt;
        k = kn;
    }
}

// ---- small batches: a row over several warps (ibp_gather_split) --------------------------------
//
// A gather of few rows leaves most of the GPU idle, and its time ends with the decode of the last
// records to arrive, one warp each. ibp_gather_split gives each request S = 2^split_log2 warps of
// a block (S divides IBP_WARPS_PER_BLOCK; the block's IBP_WARPS_PER_BLOCK / S groups take one request
// each per step). A staged coded record of at least u * S words (u = split_words, a multiple of 32
// the host passes: 64) is loaded by the group's S warps together; warp s then decodes words
// s*m .. s*m + m - 1 (m: ceil(n / S) rounded up to a multiple of u), through
// the chunk's decode table or its Mask/Bitval words as ibp_gather would, its first field's stream
// bit found from the participation bits and field lengths of the words before them (one pass over
// them, a lane per word, no scan), and the warp of the last words
// makes the record's final checks and reports its failure: the same bytes and the same first
// failure as ibp_gather (a field past the record's end moves every later segment's start past it
// too, so that warp sees E_ROW_LENGTH whenever a warp before it stopped on it). Other requests are
// decoded by the group's first warp, as ibp_gather does. Same parameters as ibp_gather, plus
// split_log2 and split_words; dynamic shared memory: prm.stage_bytes per warp, as ibp_gather.

// Stream bit where the field of word jb (a multiple of 32, <= n <= the record's bits) starts: n
// (the participation bits) plus the fields of words 0 .. jb - 1, a lane per word: field(j, p) is
// word j's field length, p its participation bit.
template <class Rec, class Field>
__device__ __forceinline__ ibp_u32 span_start(const Rec& rec, ibp_u32 n, ibp_u32 jb, const Field& field, ibp_u32 lane) {
    ibp_u32 bits = 0;
#pragma unroll 4
    for (ibp_u32 j0 = 0; j0 < jb; j0 += 32) bits += field(j0 + lane, (rec.word32(j0 >> 5) >> lane) & 1u);
    return n + warp_sum32(bits);
}

// Warp `sub` of S's share of a staged coded record of n >= u * S words (see above), through the
// table (tmask non-null) or the Mask/Bitval words: what the warp reports (only the warp of the
// record's last words reports anything).
template <int WB>
__device__ __forceinline__ ibp_u32 split_row(const SmemRecord& rec, ibp_u8* dst, const uint4* tmask, const uint4* tinfo,
                                             const ibp_u8* masks_p, const ibp_u8* bitvals_p, ibp_u32 n,
                                             ibp_u32 row_bytes, ibp_u32 align_log2, ibp_u32 sub, ibp_u32 S,
                                             ibp_u32 u, ibp_u32 lane) {
    typedef typename Word<WB>::T T;
    const ibp_u32 W = WB * 8;
    const ibp_u32 m = (((n + S - 1) / S) + u - 1) / u * u;
    const ibp_u32 jb = sub * m;
    if (jb >= n) return IBP_STATUS_OK;
    const ibp_u32 je = min(jb + m, n);
    const bool last = je == n;
    if (!words_fit_row(n, WB, row_bytes)) return last ? IBP_STATUS_LAYOUT : IBP_STATUS_OK;
    const ibp_u32 total_bits = (ibp_u32)(rec.len * 8);
    if (n > total_bits) return last ? IBP_STATUS_ROW_LENGTH : IBP_STATUS_OK;
    const bool aligned = (((size_t)dst) & (WB - 1)) == 0;
    const ibp_u32 last_bytes = row_bytes - (n - 1) * WB;  // 1 .. WB
    bool partial_bad = false;
    const T* masks = (const T*)masks_p;
    ibp_u32 pos, code;
    if (tmask) {
        pos = span_start(rec, n, jb, [&](ibp_u32 j, bool p) { return p ? (tinfo[j].w & 127u) : W; }, lane);
        code = decode_table_span<WB>(rec.w, 8 * rec.off, total_bits, dst, tmask, tinfo, n, jb, je, pos, last_bytes,
                                     aligned, partial_bad, lane);
    } else {
        pos = span_start(rec, n, jb, [&](ibp_u32 j, bool p) {
            return p ? W - (ibp_u32)(WB == 8 ? __popcll((ibp_u64)__ldg(masks + j)) : __popc((ibp_u32)__ldg(masks + j))) : W;
        }, lane);
        code = decode_coded_span<WB>(rec, dst, masks, (const T*)bitvals_p, n, jb, je, total_bits, pos, last_bytes,
                                     aligned, partial_bad, lane);
    }
    if (!last) return IBP_STATUS_OK;
    if (code != IBP_STATUS_OK) return code;
    return tmask ? record_tail(rec.w, rec.off, (ibp_u32)rec.len, pos, align_log2, partial_bad, lane)
                 : coded_tail(rec, pos, align_log2, partial_bad, lane);
}

extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK)
ibp_gather_split(const IbpGatherParams prm, ibp_u32 split_log2, ibp_u32 split_words) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    __shared__ ibp_u64 first_rows_smem[IBP_SMEM_CHUNKS];
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warp = threadIdx.x >> 5;
    // S warps per request, at most the block's (IBP_WARPS_PER_BLOCK is a power of two).
    const ibp_u32 S = min(1u << min(split_log2, 5u), (ibp_u32)IBP_WARPS_PER_BLOCK);
    const ibp_u32 groups = IBP_WARPS_PER_BLOCK / S;
    const ibp_u32 group = warp / S, sub = warp % S;
    const ibp_u32 u = max(32u, min(split_words, 1u << 16) & ~31u);  // words per warp at least, a multiple of 32
    const ibp_u64* first_rows = chunk_first_rows(prm, first_rows_smem);
    // The group's staging buffer: its first warp's (S * stage_bytes in all for the group's warps).
    ibp_u8* const stage = ibp_stage + (ibp_u64)group * S * prm.stage_bytes;
    // Block-uniform steps (every thread reaches each barrier): group g takes request step + g.
    for (ibp_u64 step = (ibp_u64)blockIdx.x * groups; step < prm.count; step += (ibp_u64)gridDim.x * groups) {
        const ibp_u64 k = step + group;
        const bool valid = group < groups && k < prm.count;
        Job job;
        if (valid) job = lookup(prm, first_rows, request_row(prm, k), lane);
        const bool ok = valid && job.code == IBP_STATUS_OK;
        const bool split = ok && job.staged && !job.raw && job.n >= u * S;
        if (ok && job.staged && (split || sub == 0)) {
            // The 16-byte vectors covering the record (stage_span), by the group's warps or the first.
            ibp_u64 vecs;
            const uint4* src = stage_span(job.src, job.len, vecs);
            const ibp_u32 t = split ? sub * 32 + lane : lane, threads = split ? S * 32 : 32u;
            for (ibp_u64 i = t; i < vecs; i += threads) ((uint4*)stage)[i] = src[i];
        }
        __syncthreads();
        if (split) {
            SmemRecord rec;
            rec.w = (const ibp_u32*)stage;
            rec.len = job.len;
            rec.off = (ibp_u32)((size_t)job.src & 15);
            const uint4* tinfo = job.table ? job.table + job.entries : 0;
            const ibp_u8* bitvals = job.masks + job.words_bytes;
            ibp_u8* dst = prm.out + k * (ibp_u64)prm.row_bytes;
            const ibp_u32 n = job.n, rb = prm.row_bytes, al = job.align_log2;
            ibp_u32 code;
            switch (job.wb) {
                case 1: code = split_row<1>(rec, dst, job.table, tinfo, job.masks, bitvals, n, rb, al, sub, S, u, lane); break;
                case 2: code = split_row<2>(rec, dst, job.table, tinfo, job.masks, bitvals, n, rb, al, sub, S, u, lane); break;
                case 4: code = split_row<4>(rec, dst, job.table, tinfo, job.masks, bitvals, n, rb, al, sub, S, u, lane); break;
                default: code = split_row<8>(rec, dst, job.table, tinfo, job.masks, bitvals, n, rb, al, sub, S, u, lane); break;
            }
            if (code != IBP_STATUS_OK && lane == 0) ibp_report(prm.status, k, code);
        } else if (valid && sub == 0) {
            finish(prm, job, k, stage, lane);
        }
        __syncthreads();  // the staging buffers are refilled at the next step
    }
}

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
// Dynamic shared memory: 16 guard bytes, tile_bytes (multiple of 16, >= tile_rows * raw_padded + 48)
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
        const ibp_u32 F = ti.w & 127u;
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
            table_store<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
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
    const ibp_u32 fa = pa ? (tia.w & 127u) : W;
    const ibp_u32 fb = active_b ? (pb ? (tib.w & 127u) : W) : 0u;
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
        for (ibp_u32 j = lane; j < n; j += 32) f_sum += t.tinfo[j].w & 127u;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) f_sum += __shfl_xor_sync(FULL_MASK, f_sum, d);
    // F of every position when they are all the same (t.uniform_f): a row's T by one popcount.
    const ibp_u32 f_one = t.G != 0 ? (t.tinfo[0].w & 127u) : 0u;
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
                                T += W - (t.tinfo[j0 + __ffs((int)np) - 1].w & 127u);
                        } else {
                            const uint4* const ti = t.tinfo + g * n + j0;
                            for (ibp_u32 j = 0; j < 32 && j0 + j < n; j++) T += ((part >> j) & 1u) ? (ti[j].w & 127u) : W;
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
                    const ibp_u32 F = ti.w & 127u;
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
            const ibp_u32 f = active ? (p ? (ti.w & 127u) : W) : 0u;
            const ibp_u32 x = warp_inclusive_scan(f);
            const R word = table_word<WB, MULTI>(w, b + n + x - f, p, tm, ti);
            if (active) ((Stored*)dst)[lane] = (Stored)word;
        }
    }
}

// ---- short rows decoded in slices, a lane per slice (lean kernel, rows of <= IBP_LEAN_THREAD_ROWS words) ----
// Short rows keep few lanes busy per word (8 of 32 for a row of eight 64-bit words) and spend most
// of a lane-per-word pass on the row's checks, the scan and shuffles. Here a row is cut into K
// slices of m = ceil(n / K) consecutive words, K a power of two (the row's bytes / IBP_LEAN_LANE_BYTES
// rounded up, at most 32 and at most n rounded up), and lane s of a K-lane segment walks slice s's
// words in order: slice lengths (sum of the fields' lengths), an exclusive scan over the segment
// gives each slice's first stream bit, then each word's field follows the one before, and the
// segment's total gives T. The same checks, in the same order and with the same codes, as
// lean_tile_rows (made by each lane, reported by lane 0 of the segment). Output: 16 bytes per store
// where slices, rows and the output allow it, else a word per store. IBP_LEAN_THREAD_ROWS 0: off
// (rows of <= 16 words take decode_small_rows, the others lean_tile_rows).
#ifndef IBP_LEAN_THREAD_ROWS
#define IBP_LEAN_THREAD_ROWS 16  // rows of at most this many words (<= 32)
#endif
#if IBP_LEAN_THREAD_ROWS > 32
#error "IBP_LEAN_THREAD_ROWS is at most 32 (a row's participation bits are one 32-bit word)"
#endif
// IBP_LEAN_THREAD_BYTES > 0: rows of up to 32 words and at most this many bytes take the same
// path (MiniLM K bf16, 32 words of 16 bits: 0.31 -> 0.45 of the D2D copy at A = 1, GPU_NOTES
// entries 40 and 41; at A = 16, where 64 % of its records are raw, 0.41 -> 0.44 once the path copies
// raw records with 16-byte vectors, entry 51, 0.35 before). 0: off. IBP_LEAN_THREAD_A1_ONLY=1 keeps
// it to chunks of A = 1, as before entry 51.
#ifndef IBP_LEAN_THREAD_BYTES
#define IBP_LEAN_THREAD_BYTES 64
#endif
#ifndef IBP_LEAN_THREAD_A1_ONLY
#define IBP_LEAN_THREAD_A1_ONLY 0
#endif
#ifndef IBP_LEAN_LANE_BYTES
#define IBP_LEAN_LANE_BYTES 64  // output bytes per lane a row's slice count aims at
#endif
// IBP_SLICE_RAW_VECS: a raw record's slice is copied with 16-byte vectors where the slice, the record
// and the output allow (raw records of A = 16 chunks), not decoded a word at a time as a record of
// non-participating words (0: as before entry 51).
#ifndef IBP_SLICE_RAW_VECS
#define IBP_SLICE_RAW_VECS 1
#endif

// Word k (a constant after unrolling) of a 16-byte vector of WB-byte words, into acc (zeroed).
template <int WB>
__device__ __forceinline__ void vec_put(uint4& acc, ibp_u32 k, typename Word<WB>::R word) {
    if (WB == 8) {
        const ibp_u32 lo = (ibp_u32)word, hi = (ibp_u32)((ibp_u64)word >> 32);
        if (k == 0) { acc.x = lo; acc.y = hi; } else { acc.z = lo; acc.w = hi; }
        return;
    }
    const ibp_u32 per = WB < 4 ? 4 / WB : 1u;  // words per 32-bit component (WB == 8 returned above)
    const ibp_u32 v = (ibp_u32)word << (8 * WB * (k % per));
    switch (k / per) {
        case 0: acc.x |= v; break;
        case 1: acc.y |= v; break;
        case 2: acc.z |= v; break;
        default: acc.w |= v; break;
    }
}

// IBP_SLICE_BITBUF: for words of up to 32 bits a lane reads its slice's fields from a window of its
// stream held in registers (SliceWindow), moved forward a word at a time as fields are consumed,
// instead of two shared-memory words per field (sbits32): a row of 32 16-bit words then takes about
// one shared-memory read per 32 bits of its record, not 64 (GPU_NOTES entry 54, where this build is
// "=2"). 64-bit words keep sbits32: a three-word window for them measured slower (V bf16 A=1 0.487
// -> 0.477; bench/results/gpu-2026-12-04/tried-slice-window-64.diff). 0: sbits32 for every width.
#ifndef IBP_SLICE_BITBUF
#define IBP_SLICE_BITBUF 1
#endif

// A lane's window on the shared-memory stream w (words of up to 32 bits, so fields of up to 32 bits):
// words at/32 and at/32 + 1, at a multiple of 32 with at <= the next field's start < at + 32. The
// next field's start is kept at or before the record's end (base + min(pos, total_bits)), so the
// window reads at most 7 bytes past the record: inside the 16 bytes the tile-fit check leaves after
// a tile's records, as sbits32's reads of the same fields are.
struct SliceWindow {
    ibp_u32 lo, hi;
    ibp_u32 at;
    // Opens the window on stream bit s.
    __device__ __forceinline__ void open(const ibp_u32* w, ibp_u32 s) {
        at = s & ~31u;
        lo = w[at >> 5];
        hi = w[(at >> 5) + 1];
    }
    // The 32 stream bits from stream bit s (at <= s < at + 32).
    __device__ __forceinline__ ibp_u32 bits(ibp_u32 s) const { return __funnelshift_r(lo, hi, s - at); }
    // Moves the window on to stream bit s, at <= s < at + 64 (one field past the window's).
    __device__ __forceinline__ void advance(const ibp_u32* w, ibp_u32 s) {
        if (s - at >= 32u) {
            lo = hi;
            at += 32;
            hi = w[(at >> 5) + 1];
        }
    }
};

// Whether the thread path of WB-byte words reads through a SliceWindow (IBP_SLICE_BITBUF).
template <int WB>
__device__ __forceinline__ constexpr bool slice_window_on() {
    return IBP_SLICE_BITBUF && WB < 8;
}

// One word of a lane's slice: the field at stream bit base + pos (read at the record's end when a
// corrupt record puts it past it), entry j of the row's group; advances pos by the field's length
// (and, IBP_SLICE_BITBUF, the window win, open on bit base + min(pos, total_bits)).
template <int WB, bool MULTI>
__device__ __forceinline__ typename Word<WB>::R slice_word(const ibp_u32* w, ibp_u32 base, ibp_u32& pos,
                                                           ibp_u32 total_bits, ibp_u32 pbits, ibp_u32 j,
                                                           const uint4* tm_g, const uint4* ti_g,
                                                           SliceWindow& win) {
    const bool p = (pbits >> j) & 1u;
    const uint4 tm = tm_g[j], ti = ti_g[j];
    const ibp_u32 s = base + min(pos, total_bits);
    typename Word<WB>::R word;
    if (slice_window_on<WB>()) {
        word = table_word_bits<WB, MULTI>(win.bits(s), 0u, p, tm, ti);  // (W <= 32: no second piece)
    } else {
        word = table_word<WB, MULTI>(w, s, p, tm, ti);
    }
    pos += p ? (ti.w & 127u) : (ibp_u32)(WB * 8);
    if (slice_window_on<WB>()) win.advance(w, base + min(pos, total_bits));
    return word;
}

template <int WB, bool MULTI>
__device__ __forceinline__ void slice_tile_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
    typedef typename Word<WB>::T Stored;
    const ibp_u32 W = WB * 8;
    const ibp_u32 n = t.n;  // 1 .. 32 (IBP_LEAN_THREAD_ROWS, IBP_LEAN_THREAD_BYTES); row_bytes == n * WB (a lean coded chunk)
    const ibp_u32 row_bytes = prm.row_bytes;
    const ibp_u32 first_words = n >= 32 ? ~0u : (1u << n) - 1u;
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    ibp_u8* const out0 = prm.out + t.k0 * (ibp_u64)row_bytes;
    // Slices: K = 2^k_log2 lanes per row, m words each (the last ones may hold fewer or none).
    const ibp_u32 want = (row_bytes + IBP_LEAN_LANE_BYTES - 1) / IBP_LEAN_LANE_BYTES;
    const ibp_u32 cap = min(n, 32u);
    ibp_u32 k_log2 = 0;
    while ((1u << k_log2) < want && (1u << k_log2) < cap) k_log2++;
    const ibp_u32 K = 1u << k_log2, m = (n + K - 1) >> k_log2;
    const ibp_u32 seg = lane >> k_log2, s = lane & (K - 1), per_pass = 32u >> k_log2;
    const ibp_u32 jb = min(s * m, n), je = min(jb + m, n);
    const bool vec_out = (((m * WB) | row_bytes | (ibp_u32)(size_t)out0) & 15u) == 0;
    const ibp_u32 per_vec = 16 / WB;
    for (ibp_u32 row0 = warp * per_pass; row0 < t.nrows; row0 += IBP_TILE_WARPS * per_pass) {
        const ibp_u32 row = row0 + seg;
        const bool valid = row < t.nrows;
        const ibp_u32 off = valid ? t.offsets[row] : 0u;
        const ibp_u32 len = valid ? t.offsets[row + 1] - off : 0u;
        const bool raw = valid && len == t.raw_padded;
        const ibp_u32 base = rec0 + off * 8, total_bits = len * 8;
        ibp_u32 code = IBP_STATUS_OK, g = 0;
        if (valid && !raw && t.G > 1) {
            const ibp_u64 at = t.groups + t.r0 + row;
            if (at >= prm.meta_size) code = IBP_STATUS_LAYOUT;
            else { g = prm.meta[at]; if (g >= t.G) { code = IBP_STATUS_GROUP_ID; g = 0; } }
        }
        // A raw record: every word non-participating, fields from bit 0.
        const ibp_u32 pbits = raw || !valid ? 0u : sbits32(w, base) & first_words;
        const uint4* const tm_g = t.tmask + g * n;
        const uint4* const ti_g = t.tinfo + g * n;
        // This slice's bits, the ones before it (scan within the segment), the row's T.
        ibp_u32 bits = 0;
        if (K > 1)
            for (ibp_u32 j = jb; j < je; j++) bits += ((pbits >> j) & 1u) ? (ti_g[j].w & 127u) : W;
        ibp_u32 x = bits;
        for (ibp_u32 d = 1; d < K; d <<= 1) {
            const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (s >= d) x += y;
        }
        const ibp_u32 start = raw ? 0u : n;
        ibp_u32 pos = start + x - bits;
        if (valid) {
            ibp_u8* const dst = out0 + row * (ibp_u64)row_bytes;
            if (IBP_SLICE_RAW_VECS && raw && vec_out && ((base >> 3) & 15u) == 0) {
                // Bytes j*WB .. of a raw record are the row's: the slice's vectors as they are.
                const uint4* const from = (const uint4*)((const ibp_u8*)w + (base >> 3));
                for (ibp_u32 v = jb * WB / 16; v < je * WB / 16; v++) ((uint4*)dst)[v] = from[v];
                pos += (je - jb) * W;
            } else {
                SliceWindow win;
                if (slice_window_on<WB>()) win.open(w, base + min(pos, total_bits));
                if (vec_out) {
                    for (ibp_u32 j0 = jb; j0 < je; j0 += per_vec) {
                        uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
                        for (ibp_u32 k = 0; k < per_vec; k++)
                            vec_put<WB>(acc, k, slice_word<WB, MULTI>(w, base, pos, total_bits, pbits, j0 + k, tm_g, ti_g, win));
                        *(uint4*)(dst + j0 * WB) = acc;
                    }
                } else {
                    for (ibp_u32 j = jb; j < je; j++)
                        ((Stored*)dst)[j] = (Stored)slice_word<WB, MULTI>(w, base, pos, total_bits, pbits, j, tm_g, ti_g, win);
                }
            }
        }
        // T (a raw record: row_bytes * 8): the end of the segment's last slice.
        const ibp_u32 T = K > 1 ? start + __shfl_sync(FULL_MASK, x, (seg << k_log2) + K - 1) : pos;
        // Record length rule L == align_up(ceil(T/8), A) (T > 8L fails it too), then padding bits
        // T .. 8L-1 zero.
        if (valid && s == 0) {
            if (code == IBP_STATUS_OK) {
                if (!raw && (T > total_bits || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len)) code = IBP_STATUS_ROW_LENGTH;
                else if (stream_bits_set(w, base + T, base + total_bits)) code = IBP_STATUS_PADDING;
            }
            if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
        }
    }
}

// Builds the table of a chunk's `entries` (>= 1) positions. Every thread of the block must call it
// (it ends with a barrier); returns, in every thread, whether every entry has the same F.
template <int WB>
__device__ __forceinline__ ibp_u32 build_table(const ibp_u8* masks, ibp_u64 words_bytes, ibp_u32 entries,
                                               uint4* tmask, uint4* tinfo) {
    const ibp_u64 wmask = WB == 8 ? ~0ull : ((1ull << (8 * WB)) - 1ull);
    const int f_first = __popcll(~load_word<WB>(masks, 0) & wmask);
    bool uniform = true, no_multi = true;
    for (ibp_u32 i = threadIdx.x; i < entries; i += IBP_TILE_THREADS) {
        uint4 tm, ti;
        table_entry<WB>(load_word<WB>(masks, i), load_word<WB>(masks + words_bytes, i), tm, ti);
        tmask[i] = tm;
        tinfo[i] = ti;
        uniform &= (int)(ti.w & 127u) == f_first;
        no_multi &= (ti.w & IBP_TILE_MULTI) == 0;
    }
    const bool all_uniform = __syncthreads_and(uniform) != 0;
    const bool none_multi = __syncthreads_and(no_multi) != 0;
    return (all_uniform ? IBP_TABLE_UNIFORM_F : 0u) | (none_multi ? IBP_TABLE_NO_MULTI : 0u);
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
            table_ok = G >= 1 && entries >= 1 && meta_ok && entries <= table_entries &&
                       (wb == 1 || wb == 2 || wb == 4 || wb == 8);
            // Whole 32-bit or 16-bit words, more than the several-rows-per-warp path takes, in the general
            // kernel: a pair table (the lean kernel measured slower with pairs: GPU_NOTES entry 20).
            table_pairs = !LEAN && ((IBP_TILE_W32_PAIRS && wb == 4) || (IBP_TILE_W16_PAIRS && wb == 2)) &&
                          n > IBP_TILE_SMALL_ROWS && (ibp_u64)n * wb == prm.row_bytes;
            if (table_ok && table_pairs) {
                table_flags = wb == 4 ? build_pair_table<32>(prm.meta + c.masks_offset, words_bytes, G, n, tmask, tinfo)
                                      : build_pair_table<16>(prm.meta + c.masks_offset, words_bytes, G, n, tmask, tinfo);
            } else if (table_ok && !(!LEAN && SHAPE == IBP_TILES_PAIRS)) {
                const ibp_u8* masks = prm.meta + c.masks_offset;
                switch (wb) {
                    case 1: table_flags = build_table<1>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    case 2: table_flags = build_table<2>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    case 4: table_flags = build_table<4>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                    default: table_flags = build_table<8>(masks, words_bytes, (ibp_u32)entries, tmask, tinfo); break;
                }
            }
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
        if (LEAN) {
            // The host launches a lean kernel only for entries whose chunks all allow it (raw chunks,
            // or tables of rows of <= 64 whole words, of the kernel's SHAPE); anything else is reported.
            // (The short-rows kernel takes coded chunks of thread-path rows only, not raw chunks.)
#define IBP_LEAN_THREAD_PATH                                                                              \
    (G != 0 && ((IBP_LEAN_THREAD_ROWS && n <= IBP_LEAN_THREAD_ROWS) ||                                    \
                (IBP_LEAN_THREAD_BYTES && (align_log2 == 0 || !IBP_LEAN_THREAD_A1_ONLY) && n <= 32 &&      \
                 prm.row_bytes <= IBP_LEAN_THREAD_BYTES)))
            const bool shape_ok = SHAPE == IBP_LEAN_ANY || (SHAPE == IBP_LEAN_MID ? n > 32 : IBP_LEAN_THREAD_PATH);
            const bool lean = (table_ok && t.n_ok && n <= 64 && shape_ok && prm.row_bytes == n * wb) ||
                              (G == 0 && SHAPE != IBP_LEAN_SHORT);
            if (!lean) {
                for (ibp_u32 row = threadIdx.x; row < nrows; row += IBP_TILE_THREADS) ibp_report(prm.status, t.k0 + row, IBP_STATUS_LAYOUT);
            } else if (SHAPE != IBP_LEAN_MID && IBP_LEAN_THREAD_PATH) {
                if (t.no_multi) switch (wb) {
                    case 1: slice_tile_rows<1, false>(prm, t, warp, lane); break;
                    case 2: slice_tile_rows<2, false>(prm, t, warp, lane); break;
                    case 4: slice_tile_rows<4, false>(prm, t, warp, lane); break;
                    default: slice_tile_rows<8, false>(prm, t, warp, lane); break;
                } else switch (wb) {
                    case 1: slice_tile_rows<1, true>(prm, t, warp, lane); break;
                    case 2: slice_tile_rows<2, true>(prm, t, warp, lane); break;
                    case 4: slice_tile_rows<4, true>(prm, t, warp, lane); break;
                    default: slice_tile_rows<8, true>(prm, t, warp, lane); break;
                }
            } else if (SHAPE == IBP_LEAN_SHORT) {
                // (Not reached: the lean check above lets only thread-path rows through. The branch
                // ends the chain at compile time, so the short kernel holds no other row decoder.)
            } else if (IBP_LEAN_SMALL_ROWS && SHAPE != IBP_LEAN_MID && G != 0 && (t.uniform_f || IBP_SMALL_ROWS_ANY_F) &&
                       n <= IBP_TILE_SMALL_ROWS) switch (wb) {
                case 1: decode_small_rows<1>(prm, t, warp, lane); break;
                case 2: decode_small_rows<2>(prm, t, warp, lane); break;
                case 4: decode_small_rows<4>(prm, t, warp, lane); break;
                default: decode_small_rows<8>(prm, t, warp, lane); break;
            } else if (G == 0 || t.no_multi) switch (wb) {
                case 1: lean_tile_rows<1, false, SHAPE>(prm, t, warp, lane); break;
                case 2: lean_tile_rows<2, false, SHAPE>(prm, t, warp, lane); break;
                case 4: lean_tile_rows<4, false, SHAPE>(prm, t, warp, lane); break;
                default: lean_tile_rows<8, false, SHAPE>(prm, t, warp, lane); break;
            } else switch (wb) {
                case 1: lean_tile_rows<1, true, SHAPE>(prm, t, warp, lane); break;
                case 2: lean_tile_rows<2, true, SHAPE>(prm, t, warp, lane); break;
                case 4: lean_tile_rows<4, true, SHAPE>(prm, t, warp, lane); break;
                default: lean_tile_rows<8, true, SHAPE>(prm, t, warp, lane); break;
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
