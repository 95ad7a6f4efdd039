// ibp_gather.cu: IBP row decoder (spec section 6) for gathers and whole-chunk decodes.
//
// Launch shape: blocks of IBP_WARPS_PER_BLOCK warps (blockDim.x = 32 * IBP_WARPS_PER_BLOCK), any
// grid size (grid-stride over requests), dynamic shared memory = warps * params.stage_bytes.
// One warp decodes one requested row at a time: lane j of a round handles word 32*round + j.
//
// Reads: params.rows[0..count), chunks[0..chunk_count), anchors[0..anchor_count), meta[0..meta_size),
//        payload[0..payload_size) -- every index is checked before it is used.
// Writes: out[k*row_bytes .. (k+1)*row_bytes) for k < count, and *status (atomicMax).
// Invariants: never traps; a malformed record or index produces a status code, never an access outside
// the buffers above. The output row of a failing request is unspecified.
//
// The file is compiled with ibp_status.h prepended (NVRTC gets no include paths).

#define IBP_WARPS_PER_BLOCK 4
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ void ibp_report(ibp_u64* status, ibp_u64 k, ibp_u32 code) {
    atomicMax(status, ~((k << 8) | (ibp_u64)code));
}

// Lowest `bits` bits set (bits in 0..64).
__device__ __forceinline__ ibp_u64 low_bits(ibp_u32 bits) {
    return bits >= 64 ? ~0ull : ((1ull << bits) - 1ull);
}

// Deposits the low bits of `v` into the set bits of `free_bits`, lowest first (pdep), one
// contiguous run of `free_bits` per iteration: float masks usually leave one or two runs.
__device__ __forceinline__ ibp_u64 deposit_bits(ibp_u64 v, ibp_u64 free_bits) {
    ibp_u64 r = 0;
    while (free_bits) {
        int p = __ffsll((long long)free_bits) - 1;
        ibp_u64 shifted = free_bits >> p;
        int run = __ffsll((long long)~shifted) - 1;   // -1 when the run reaches bit 63
        if (run < 0) run = 64 - p;
        if (p + run >= 64) {                          // the run ends at bit 63
            r |= v << p;
            break;
        }
        ibp_u64 m = (1ull << run) - 1ull;
        r |= (v & m) << p;
        v >>= run;
        free_bits &= ~(m << p);
    }
    return r;
}

// Loads a W-bit metadata word (W/8 = wb bytes) at element index i of a little-endian array.
__device__ __forceinline__ ibp_u64 load_word(const ibp_u8* base, ibp_u64 i, ibp_u32 wb) {
    switch (wb) {
        case 1: return __ldg(base + i);
        case 2: return __ldg((const unsigned short*)base + i);
        case 4: return __ldg((const unsigned int*)base + i);
        default: return __ldg((const unsigned long long*)base + i);
    }
}

// A record being decoded: either staged in shared memory (as 32-bit words, zero past its end) or
// read byte by byte from global memory (records larger than the staging buffer).
struct RecordSrc {
    const ibp_u32* smem;  // staged words, or null
    const ibp_u8* gmem;   // record start in global memory
    ibp_u64 len;          // record bytes

    // Bits [s, s+64) of the record's bit stream; bits past the record read as 0.
    __device__ __forceinline__ ibp_u64 bits64(ibp_u64 s) const {
        if (smem) {
            ibp_u64 w = s >> 5;
            ibp_u32 sh = (ibp_u32)(s & 31);
            ibp_u64 lo = (ibp_u64)smem[w] | ((ibp_u64)smem[w + 1] << 32);
            ibp_u64 v = lo >> sh;
            if (sh) v |= (ibp_u64)smem[w + 2] << (64 - sh);
            return v;
        }
        ibp_u64 b = s >> 3;
        ibp_u32 sh = (ibp_u32)(s & 7);
        ibp_u64 v = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            ibp_u64 byte = (b + i < len) ? (ibp_u64)gmem[b + i] : 0ull;
            v |= byte << (8 * i);
        }
        if (sh) {
            ibp_u64 byte = (b + 8 < len) ? (ibp_u64)gmem[b + 8] : 0ull;
            v = (v >> sh) | (byte << (64 - sh));
        }
        return v;
    }
    __device__ __forceinline__ ibp_u8 byte_at(ibp_u64 i) const {
        return smem ? (ibp_u8)(smem[i >> 2] >> (8 * (i & 3))) : gmem[i];
    }
};

// Copies `len` bytes global -> shared (warp-cooperative), then zero-fills 16 more bytes.
// `dst` is 16-byte aligned; 16-byte loads when src and len allow, 4 loads in flight per lane.
__device__ __forceinline__ void stage_record(ibp_u8* dst, const ibp_u8* src, ibp_u64 len, ibp_u32 lane) {
    if ((((size_t)src) & 15) == 0) {
        const uint4* s = (const uint4*)src;
        uint4* d = (uint4*)dst;
        ibp_u64 vecs = len >> 4;
        ibp_u64 i = lane;
        for (; i + 96 < vecs; i += 128) {
            uint4 a = s[i], b = s[i + 32], c = s[i + 64], e = s[i + 96];
            d[i] = a; d[i + 32] = b; d[i + 64] = c; d[i + 96] = e;
        }
        for (; i < vecs; i += 32) d[i] = s[i];
        for (ibp_u64 t = (vecs << 4) + lane; t < len; t += 32) dst[t] = src[t];
    } else if ((((size_t)src) & 3) == 0) {
        const ibp_u32* s = (const ibp_u32*)src;
        ibp_u32* d = (ibp_u32*)dst;
        ibp_u64 words = len >> 2;
        for (ibp_u64 i = lane; i < words; i += 32) d[i] = s[i];
        for (ibp_u64 t = (words << 2) + lane; t < len; t += 32) dst[t] = src[t];
    } else {
        for (ibp_u64 t = lane; t < len; t += 32) dst[t] = src[t];
    }
    // zero tail: bytes len .. align_up(len, 16) + 16
    ibp_u64 end = ((len + 15) & ~15ull) + 16;
    for (ibp_u64 t = len + lane; t < end; t += 32) dst[t] = 0;
}

// Copies a raw row: row_bytes bytes src -> dst; checks that the padding bytes row_bytes..len-1 are 0.
// Returns false on non-zero padding.
__device__ __forceinline__ bool copy_raw(ibp_u8* dst, const ibp_u8* src, ibp_u64 row_bytes, ibp_u64 len, ibp_u32 lane) {
    if (((((size_t)src) | ((size_t)dst)) & 15) == 0) {
        const uint4* s = (const uint4*)src;
        uint4* d = (uint4*)dst;
        ibp_u64 vecs = row_bytes >> 4;
        ibp_u64 i = lane;
        for (; i + 96 < vecs; i += 128) {
            uint4 a = s[i], b = s[i + 32], c = s[i + 64], e = s[i + 96];
            d[i] = a; d[i + 32] = b; d[i + 64] = c; d[i + 96] = e;
        }
        for (; i < vecs; i += 32) d[i] = s[i];
        for (ibp_u64 t = (vecs << 4) + lane; t < row_bytes; t += 32) dst[t] = src[t];
    } else if (((((size_t)src) | ((size_t)dst)) & 3) == 0) {
        ibp_u64 words = row_bytes >> 2;
        for (ibp_u64 i = lane; i < words; i += 32) ((ibp_u32*)dst)[i] = ((const ibp_u32*)src)[i];
        for (ibp_u64 t = (words << 2) + lane; t < row_bytes; t += 32) dst[t] = src[t];
    } else {
        for (ibp_u64 t = lane; t < row_bytes; t += 32) dst[t] = src[t];
    }
    bool bad = false;
    for (ibp_u64 t = row_bytes + lane; t < len; t += 32) bad |= src[t] != 0;
    return !__any_sync(FULL_MASK, bad);
}

// Stores the low wb bytes of v at element j of dst.
__device__ __forceinline__ void store_word(ibp_u8* dst, ibp_u64 j, ibp_u32 wb, ibp_u64 v) {
    switch (wb) {
        case 1: dst[j] = (ibp_u8)v; break;
        case 2: ((unsigned short*)dst)[j] = (unsigned short)v; break;
        case 4: ((ibp_u32*)dst)[j] = (ibp_u32)v; break;
        default: ((ibp_u64*)dst)[j] = v; break;
    }
}

// Decodes one coded record (spec 6.2). Returns a status code (IBP_STATUS_OK on success).
__device__ __forceinline__ ibp_u32 decode_coded(const RecordSrc& rec, ibp_u8* dst, const ibp_u8* masks,
                                                const ibp_u8* bitvals, ibp_u32 n, ibp_u32 wb,
                                                ibp_u32 align_log2, ibp_u32 lane) {
    const ibp_u32 W = wb * 8;
    const ibp_u64 wmask = low_bits(W);
    const ibp_u64 total_bits = rec.len * 8;
    if ((ibp_u64)n > total_bits) return IBP_STATUS_ROW_LENGTH;
    ibp_u64 pos = n;  // stream bit of the next field
    for (ibp_u32 j0 = 0; j0 < n; j0 += 32) {
        const ibp_u32 j = j0 + lane;
        const bool active = j < n;
        const ibp_u32 pbits = (ibp_u32)rec.bits64(j0);  // participation bits j0 .. j0+31 (P bits < n <= total)
        const bool p = active && ((pbits >> lane) & 1u);
        ibp_u64 m = 0, b = 0;
        if (active) {
            m = load_word(masks, j, wb);
            b = load_word(bitvals, j, wb);
        }
        const ibp_u32 f = active ? (p ? W - (ibp_u32)__popcll(m) : W) : 0u;
        ibp_u32 x = f;  // inclusive warp scan of field lengths
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= (ibp_u32)d) x += y;
        }
        const ibp_u32 round_bits = __shfl_sync(FULL_MASK, x, 31);
        if (pos + round_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        if (active) {
            const ibp_u64 s = pos + (x - f);
            ibp_u64 v = f ? (rec.bits64(s) & low_bits(f)) : 0ull;
            ibp_u64 word = p ? (b | deposit_bits(v, ~m & wmask)) : v;
            store_word(dst, j, wb, word);
        }
        pos += round_bits;
    }
    // Record length rule: L == align_up(ceil(T/8), A).
    const ibp_u64 a = 1ull << align_log2;
    const ibp_u64 need = (((pos + 7) >> 3) + a - 1) & ~(a - 1);
    if (need != rec.len) return IBP_STATUS_ROW_LENGTH;
    // Padding bits T .. 8L-1 must be zero.
    bool bad = false;
    const ibp_u64 first_full = (pos + 7) >> 3;
    if (lane == 0 && (pos & 7)) bad = (rec.byte_at(pos >> 3) >> (pos & 7)) != 0;
    for (ibp_u64 t = first_full + lane; t < rec.len; t += 32) bad |= rec.byte_at(t) != 0;
    if (__any_sync(FULL_MASK, bad)) return IBP_STATUS_PADDING;
    return IBP_STATUS_OK;
}

extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK)
ibp_gather(const IbpGatherParams prm) {
    extern __shared__ __align__(16) ibp_u8 ibp_stage[];
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warp = threadIdx.x >> 5;
    ibp_u8* stage = ibp_stage + (ibp_u64)warp * prm.stage_bytes;
    const ibp_u64 warps_total = (ibp_u64)gridDim.x * IBP_WARPS_PER_BLOCK;
    for (ibp_u64 k = (ibp_u64)blockIdx.x * IBP_WARPS_PER_BLOCK + warp; k < prm.count; k += warps_total) {
        const ibp_u64 row = prm.rows ? prm.rows[k] : prm.first_row + k;
        if (row >= prm.entry_rows || prm.chunk_count == 0) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_ROW_INDEX); continue; }
        // Chunk of the row: last chunk with first_row <= row (uniform across the warp).
        ibp_u32 lo = 0, hi = prm.chunk_count;
        while (hi - lo > 1) {
            ibp_u32 mid = (lo + hi) >> 1;
            if (prm.chunks[mid].first_row <= row) lo = mid; else hi = mid;
        }
        const IbpChunk c = prm.chunks[lo];
        const ibp_u64 r = row - c.first_row;
        if (row < c.first_row || r >= c.row_count) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_ROW_INDEX); continue; }
        const ibp_u64 anchor = c.anchors_index + (r >> 5);
        if (anchor >= prm.anchor_count) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_ROW_INDEX); continue; }
        // Record offset: anchor + lengths of the rows before r in its 32-row block; lane i holds row (r & ~31) + i.
        const ibp_u64 block_row = (r & ~31ull) + lane;
        const ibp_u32 r_lane = (ibp_u32)(r & 31);
        ibp_u64 units = 0;
        bool index_ok = true;
        if (lane <= r_lane) {
            const ibp_u64 lb = c.length_bytes;
            const ibp_u64 at = c.lengths_offset + block_row * lb;  // block_row <= r < row_count
            if (at + lb > prm.meta_size) {
                index_ok = false;
            } else {
                const ibp_u8* p = prm.meta + at;
                ibp_u64 stored = lb == 1 ? (ibp_u64)p[0]
                               : lb == 2 ? (ibp_u64)(p[0] | (p[1] << 8))
                                         : (ibp_u64)p[0] | ((ibp_u64)p[1] << 8) | ((ibp_u64)p[2] << 16) | ((ibp_u64)p[3] << 24);
                units = (ibp_u64)c.length_base + stored;
            }
        }
        const ibp_u64 len_lane = units << c.align_log2;
        ibp_u64 before = lane < r_lane ? len_lane : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) before += __shfl_xor_sync(FULL_MASK, before, d);
        const ibp_u64 len = __shfl_sync(FULL_MASK, len_lane, r_lane);
        if (!__all_sync(FULL_MASK, index_ok)) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_LAYOUT); continue; }
        const ibp_u64 off = prm.anchors[anchor] + before;
        // The record must lie inside the chunk's payload, and the payload inside the buffer.
        if (len == 0 || len > c.raw_padded || off > c.payload_len || len > c.payload_len - off ||
            c.payload_offset > prm.payload_size || c.payload_len > prm.payload_size - c.payload_offset) {
            if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_LAYOUT);
            continue;
        }
        const ibp_u8* src = prm.payload + c.payload_offset + off;
        ibp_u8* dst = prm.out + k * (ibp_u64)prm.row_bytes;
        if (len == c.raw_padded) {
            if (!copy_raw(dst, src, prm.row_bytes, len, lane) && lane == 0) ibp_report(prm.status, k, IBP_STATUS_PADDING);
            continue;
        }
        ibp_u32 g = 0;
        if (c.group_count > 1) {
            if (c.groups_offset + r >= prm.meta_size) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_LAYOUT); continue; }
            g = prm.meta[c.groups_offset + r];
            if (g >= c.group_count) { if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_GROUP_ID); continue; }
        }
        const ibp_u32 n = c.words_per_row, wb = c.word_bytes;
        const ibp_u64 words_bytes = (ibp_u64)c.group_count * n * wb;
        if (c.masks_offset > prm.meta_size || 2 * words_bytes > prm.meta_size - c.masks_offset) {
            if (lane == 0) ibp_report(prm.status, k, IBP_STATUS_LAYOUT);
            continue;
        }
        const ibp_u8* masks = prm.meta + c.masks_offset + (ibp_u64)g * n * wb;
        const ibp_u8* bitvals = masks + words_bytes;
        RecordSrc rec;
        rec.gmem = src;
        rec.len = len;
        rec.smem = 0;
        // Staging needs align_up(len, 16) + 16 bytes (zero tail read by bits64).
        if (((len + 15) & ~15ull) + 16 <= prm.stage_bytes) {
            stage_record(stage, src, len, lane);
            __syncwarp();
            rec.smem = (const ibp_u32*)stage;
        }
        const ibp_u32 code = decode_coded(rec, dst, masks, bitvals, n, wb, c.align_log2, lane);
        if (code != IBP_STATUS_OK && lane == 0) ibp_report(prm.status, k, code);
        __syncwarp();  // the staging buffer is reused by the next row
    }
}
