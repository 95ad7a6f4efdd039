// ibp_gather/vector_lanes.cuh: long rows of 16-bit words by vector lanes: a lane per 16-byte output vector.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- long rows by vector lanes (IBP_LONG_VECTOR_LANES) ------------------------------------------------
// The long-rows kernel's lane-per-row decoder (lane_tile_rows) keeps one row per lane, so a tile of
// 84 KiB holds rows for about four of a block's eight warps, and each of its 16-byte stores reaches
// 32 rows (GPU_NOTES entry 77: the stores alone and the decode alone each hold it near 0.49 of the
// D2D copy). Vector lanes turn it around: a lane decodes 16-byte output vectors (8 words) of a row,
// so every warp of the block has work, a warp's stores fill whole lines, and the lanes' stream
// reads fall at different offsets. A lane's first field follows the fields of the vectors before it
// in its row, summed by a warp scan; it then reads its fields 32 bits at a time (two words'
// fields) and deposits them through its positions' table entries (at most four runs of free bits
// each). Taken for chunks of one group of 16-bit words with rows of whole 16-byte vectors of at
// most 1 KiB, none of whose positions has more than four runs of free bits (the chunk's vector
// table, vl_build); other tiles keep lane_tile_rows. Same checks, order and codes as lane_tile_rows.
// IBP_LONG_VECTOR_LANES picks the layout:
// 3 (flat, the default since GPU_NOTES entry 79): a warp takes a contiguous share of the tile's rows
//   as one run of vectors, lane l of a pass the warp's next vector (vector_flat_rows), so no lane
//   idles on rows of 49 vectors and each store writes 512 consecutive bytes; field lengths and
//   starts are byte sums (vl_field_lengths) and words are built in the high half of a register
//   (vl_entry, vl_word_high); the lane of a row's last vector checks the row.
// 4: as 3, two consecutive vectors a lane (the H200, GPU_NOTES entry 86: 14-18 % slower than 3).
// 1, 2: a warp per row, lane l two of its vectors: 2l and 2l + 1 (1), or l and l + 32 (2, whole-line
//   stores), through a per-(slot, lane) table, stream bits counted from F's bit planes
//   (vector_lane_rows); lane 0 checks the row.
// 0: off (the lane-per-row decoder for every tile).
// Measured on an H100, Fashion-MNIST against the lane-per-row decoder: layouts 1 and 2 -5-7 % at 2
// blocks per SM, +0-3 % with layout 2 at 3 (IBP_LEAN_LONG_MIN_BLOCKS=3, 52 KiB tiles; entry 78: issue
// 25 % faster, 1.78x the instructions); layout 3 +9-12 % at 2, +24-28 % at 3 (one run), layout 4
// +5-8 % (entry 79).
#ifndef IBP_LONG_VECTOR_LANES
#define IBP_LONG_VECTOR_LANES 3
#endif
#define IBP_VL_WORDS 16                        // 16-bit words per lane: two 16-byte vectors
#define IBP_VL_POSITIONS (32 * IBP_VL_WORDS)   // positions of a row, at most (rows of at most 1 KiB)
#define IBP_VL_VECTORS (IBP_VL_POSITIONS / 8)  // 16-byte output vectors of a row, at most
// Flags of a chunk's vector table (vl_build).
#define IBP_VL_OK 1u     // built: one group, 16-bit words, at most IBP_VL_POSITIONS positions, at most four runs each
#define IBP_VL_THREE 2u  // some position has three runs of free bits, none four
#define IBP_VL_FOUR 4u   // some position has four runs of free bits

// The vector-table entry of a 16-bit position with Mask m and Bitval b. Layouts 1 and 2: x = run 0 |
// run 1 << 16, y = run 2 | run 3 << 16 (the runs of free bits from the lowest, none past the last), z
// = Bitval | F << 16, w = sh0 | (sh1 + 16) << 8 | sh2 << 16 | (sh3 + 16) << 24, where run k's bits are
// the field shifted left by sh_k (its start less the lengths of the runs before it). Layout 3 puts
// the word in the high half, so that each shift sits alone in the low five bits of a register (all
// a funnel shift reads) beside a mask in the high half: x = run 0 << 16 | (sh1 + 16), y = run 1 << 16
// | (sh2 + 16), z = run 2 << 16 | (sh0 + 16), w = Bitval << 16 | (sh3 + 16), and run3 = run 3 << 16.
// Returns the number of runs, 5 when the free bits form more than four.
__device__ __forceinline__ ibp_u32 vl_entry(ibp_u32 m, ibp_u32 b, uint4& e, ibp_u32& run3) {
    const ibp_u32 free_bits = ~m & 0xffffu;
    ibp_u32 rest = free_bits, used = 0, runs = 0, run[4], sh[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        run[k] = 0;
        sh[k] = 0;
        if (rest != 0u) {
            const ibp_u32 start = (ibp_u32)(__ffs((int)rest) - 1);
            const ibp_u32 t = rest >> start;
            const ibp_u32 len = (ibp_u32)__popc(t & ~(t + 1u));  // 1 .. 16 - start
            run[k] = ((1u << len) - 1u) << start;
            sh[k] = start - used;
            used += len;
            runs++;
            rest &= ~run[k];
        }
    }
    if (IBP_LONG_VECTOR_LANES >= 3) {
        e = make_uint4((run[0] << 16) | (sh[1] + 16), (run[1] << 16) | (sh[2] + 16), (run[2] << 16) | (sh[0] + 16),
                       (b << 16) | (sh[3] + 16));
    } else {
        e = make_uint4(run[0] | (run[1] << 16), run[2] | (run[3] << 16), (b & 0xffffu) | ((ibp_u32)__popc(free_bits) << 16),
                       sh[0] | ((sh[1] + 16) << 8) | (sh[2] << 16) | ((sh[3] + 16) << 24));
    }
    run3 = run[3] << 16;
    return rest == 0u ? runs : 5u;
}

// Position of slot s (0 .. IBP_VL_WORDS - 1) of lane l: layout 1 words 16l + s; layout 2 words 8l + s
// (s < 8) and 256 + 8l + s - 8.
__device__ __forceinline__ ibp_u32 vl_position(ibp_u32 l, ibp_u32 s) {
    if (IBP_LONG_VECTOR_LANES == 2) return s < 8 ? 8 * l + s : 256 + 8 * l + (s - 8);
    return IBP_VL_WORDS * l + s;
}

// Position of vector-table entry i: layouts 1 and 2 slot i / 32 of lane i % 32 (vl_position);
// layout 3 word k = i / IBP_VL_VECTORS of vector v = i % IBP_VL_VECTORS (entry k * IBP_VL_VECTORS + v,
// so that lanes decoding consecutive vectors read consecutive entries).
__device__ __forceinline__ ibp_u32 vl_entry_position(ibp_u32 i) {
    if (IBP_LONG_VECTOR_LANES >= 3) return 8 * (i % IBP_VL_VECTORS) + i / IBP_VL_VECTORS;
    return vl_position(i % 32, i / 32);
}

// Builds the vector table of a chunk of one group of n <= IBP_VL_POSITIONS 16-bit positions (Mask
// words at masks, Bitvals at masks + words_bytes): entry i for position vl_entry_position(i) (layouts
// 1 and 2: slot s of lane l at vl[32 * s + l], so that the 32 lanes' entries of one slot are 32
// consecutive 16-byte entries); positions n .. are zero (no free bits). Layout 3 also writes vd[j] =
// 16 - F of position j (0 from n on): the bits a participating word saves, and run3[i] (its entry's
// fourth run, vl_entry). Every thread of the
// block must call it (it ends with barriers); returns IBP_VL_OK (| IBP_VL_THREE or IBP_VL_FOUR) when
// every position has at most four runs, else 0.
__device__ __forceinline__ ibp_u32 vl_build(const ibp_u8* masks, ibp_u64 words_bytes, ibp_u32 n, uint4* vl, ibp_u8* vd,
                                            ibp_u32* run3) {
    bool ok = true, three = false, four = false;
    for (ibp_u32 i = threadIdx.x; i < IBP_VL_POSITIONS; i += IBP_TILE_THREADS) {
        const ibp_u32 j = vl_entry_position(i);
        uint4 e = make_uint4(0u, 0u, 0u, 0u);
        ibp_u32 r3 = 0, m = 0xffffu;
        if (j < n) {
            m = (ibp_u32)load_word<2>(masks, j);
            const ibp_u32 runs = vl_entry(m, (ibp_u32)load_word<2>(masks + words_bytes, j), e, r3);
            ok &= runs <= 4;
            three |= runs == 3;
            four |= runs >= 4;
        }
        vl[i] = e;
        if (IBP_LONG_VECTOR_LANES >= 3) {
            vd[j] = (ibp_u8)(j < n ? (ibp_u32)__popc(m) : 0u);  // 16 - F: the bits a participating word saves
            run3[i] = r3;
        }
    }
    const bool all_ok = __syncthreads_and(ok) != 0;
    const bool any_three = __syncthreads_and(!three) == 0;
    const bool any_four = __syncthreads_and(!four) == 0;
    return all_ok ? (IBP_VL_OK | (any_four ? IBP_VL_FOUR : any_three ? IBP_VL_THREE : 0u)) : 0u;
}

// A participating word from its field's stream bits x (low bits) through entry e, of at most RUNS
// (2, 3 or 4) runs; only the low 16 bits count.
template <int RUNS>
__device__ __forceinline__ ibp_u32 vl_word(ibp_u32 x, const uint4& e) {
    ibp_u32 lo = (__funnelshift_l(0u, x, e.w) & e.x) | e.z;  // runs 0 (and 2) and the Bitval: low half
    ibp_u32 hi = __funnelshift_l(0u, x, e.w >> 8) & e.x;      // runs 1 (and 3), 16 bits up: high half
    if (RUNS >= 3) lo |= __funnelshift_l(0u, x, e.w >> 16) & e.y;
    if (RUNS >= 4) hi |= __funnelshift_l(0u, x, e.w >> 24) & e.y;
    return (lo & 0xffffu) | (hi >> 16);
}

// One 16-byte output vector: the 8 words whose table entries are e0[stride * k], k = 0 .. 7,
// participation bits pv (bit k: word k), fields from stream bit base + pos (pos advanced past them),
// read 32 bits at a time (two words' fields) at or before the record's end.
template <int RUNS>
__device__ __forceinline__ uint4 vl_vector(const ibp_u32* w, ibp_u32 base, ibp_u32 end, ibp_u32& pos, ibp_u32 pv,
                                           const uint4* e0, ibp_u32 stride) {
    constexpr ibp_u32 W = 16;
    ibp_u32 out[4];
#pragma unroll
    for (ibp_u32 r = 0; r < 4; r++) {
        ibp_u32 xs = sbits32(w, min(base + pos, end));  // the fields of two words (<= 32 bits)
        ibp_u32 word[2];
#pragma unroll
        for (ibp_u32 q = 0; q < 2; q++) {
            const ibp_u32 k = 2 * r + q;
            const uint4 e = e0[stride * k];
            const bool p = (pv >> k) & 1u;
            // (A bitwise select: a branch around the deposit would make the warp run both sides.)
            const ibp_u32 take = 0u - (ibp_u32)p;
            word[q] = (vl_word<RUNS>(xs, e) & take) | (xs & ~take);
            const ibp_u32 f = p ? e.z >> 16 : W;
            pos += f;
            if (q == 0) xs >>= f;
        }
        out[r] = __byte_perm(word[0], word[1], 0x5410);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

// The rows of a tile (chunk of one group of n 16-bit words, row_bytes == 2n a multiple of 16, n <=
// IBP_VL_POSITIONS, the output 16-byte aligned), warp `warp` taking rows warp, warp + 8, ...; vl the
// chunk's vector table (vl_build); RUNS: the most runs of free bits of a position (2, 3 or 4).
template <int RUNS>
__device__ __forceinline__ void vector_lane_rows(const IbpGatherParams& prm, const TileCtx& t, const uint4* vl, ibp_u32 warp,
                                                 ibp_u32 lane) {
    constexpr ibp_u32 W = 16;
    constexpr bool SPLIT = IBP_LONG_VECTOR_LANES == 2;  // vectors l and l + 32, else 2l and 2l + 1
    const ibp_u32 n = t.n;
    const ibp_u32 row_bytes = prm.row_bytes;
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    ibp_u8* const out0 = prm.out + t.k0 * (ibp_u64)row_bytes;
    // The lane's words: first and second vector (8 words each, or none).
    const ibp_u32 ja = vl_position(lane, 0), jb = vl_position(lane, 8);
    const bool has_a = ja < n, has_b = jb < n;  // (n is a multiple of 8)
    // Bit planes of F over the lane's slots (F <= 16: five planes; slot s at bit s).
    ibp_u32 plane[5] = {0u, 0u, 0u, 0u, 0u};
#pragma unroll
    for (ibp_u32 s = 0; s < IBP_VL_WORDS; s++) {
        const ibp_u32 f = vl[32 * s + lane].z >> 16;
#pragma unroll
        for (ibp_u32 b = 0; b < 5; b++) plane[b] |= ((f >> b) & 1u) << s;
    }
    for (ibp_u32 row = warp; row < t.nrows; row += IBP_TILE_WARPS) {
        const ibp_u32 off = t.offsets[row];
        const ibp_u32 len = t.offsets[row + 1] - off;
        const bool raw = len == t.raw_padded;
        const ibp_u32 base = rec0 + off * 8, total_bits = len * 8, end = base + total_bits;
        uint4* const dst = (uint4*)(out0 + row * (ibp_u64)row_bytes);
        const ibp_u32 va = ja / 8, vb = jb / 8;  // the lane's output vectors
        ibp_u32 T;  // stream bits the record's fields use (a raw record: row_bytes * 8)
        if (raw && ((base >> 3) & 15u) == 0) {
            // Bytes of a raw record are the row's: the lane's vectors as they are.
            const uint4* const from = (const uint4*)((const ibp_u8*)w + (base >> 3));
            if (has_a) dst[va] = from[va];
            if (has_b) dst[vb] = from[vb];
            T = row_bytes * 8;
        } else {
            // A raw record: every word non-participating, fields from bit 0. Participation bits of
            // slots 0-7 (bits 0-7) and 8-15 (bits 8-15).
            const ibp_u32 start = raw ? 0u : n;
            ibp_u32 pv = 0;
            if (!raw) {
                if (SPLIT) {
                    pv = (has_a ? sbits32(w, base + min(ja, total_bits)) & 0xffu : 0u) |
                         (has_b ? (sbits32(w, base + min(jb, total_bits)) & 0xffu) << 8 : 0u);
                } else {
                    pv = sbits32(w, base + min(ja, total_bits)) & ((has_a ? 0xffu : 0u) | (has_b ? 0xff00u : 0u));
                }
            }
            // Stream bits of each vector: W per word not participating, F per word participating.
            const ibp_u32 pa = pv & 0xffu, pb = pv >> 8;
            ibp_u32 bits_a = has_a ? W * (8 - (ibp_u32)__popc(pa)) : 0u, bits_b = has_b ? W * (8 - (ibp_u32)__popc(pb)) : 0u;
#pragma unroll
            for (ibp_u32 b = 0; b < 5; b++) {
                bits_a += (ibp_u32)__popc(pa & plane[b]) << b;
                bits_b += (ibp_u32)__popc(pb & (plane[b] >> 8)) << b;
            }
            // One inclusive scan over the lanes: layout 2 sums each vector's bits in its own 16-bit
            // half (at most 32 * 128 bits each), layout 1 the lane's two vectors together.
            const ibp_u32 mine = SPLIT ? bits_a | (bits_b << 16) : bits_a + bits_b;
            ibp_u32 x = mine;
#pragma unroll
            for (ibp_u32 d = 1; d < 32; d <<= 1) {
                const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
                if (lane >= d) x += y;
            }
            const ibp_u32 all = __shfl_sync(FULL_MASK, x, 31);
            ibp_u32 pos;  // stream bit of the lane's first field, from the record's start
            if (SPLIT) {
                const ibp_u32 sum_a = all & 0xffffu;
                T = start + sum_a + (all >> 16);
                pos = start + (x & 0xffffu) - bits_a;
                if (has_a) dst[va] = vl_vector<RUNS>(w, base, end, pos, pa, vl + lane, 32);
                pos = start + sum_a + (x >> 16) - bits_b;
                if (has_b) dst[vb] = vl_vector<RUNS>(w, base, end, pos, pb, vl + 32 * 8 + lane, 32);
            } else {
                T = start + all;
                pos = start + x - mine;
                if (has_a) dst[va] = vl_vector<RUNS>(w, base, end, pos, pa, vl + lane, 32);
                if (has_b) dst[vb] = vl_vector<RUNS>(w, base, end, pos, pb, vl + 32 * 8 + lane, 32);
            }
        }
        // Record length rule L == align_up(ceil(T/8), A) (T > 8L fails it too), then padding bits
        // T .. 8L-1 zero.
        if (lane == 0) {
            ibp_u32 code = IBP_STATUS_OK;
            if (!raw && (T > total_bits || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len)) code = IBP_STATUS_ROW_LENGTH;
            else if (stream_bits_set(w, base + T, base + total_bits)) code = IBP_STATUS_PADDING;
            if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
        }
    }
}

// Byte k (0-3) of x, as a number.
__device__ __forceinline__ ibp_u32 vl_byte(ibp_u32 x, ibp_u32 k) { return __byte_perm(x, 0u, 0x4440u | k); }

// Layout 3: a participating word in the high half from its field's stream bits x (low bits) through
// entry e (vl_entry) and run3 (the fourth run's mask, used when RUNS == 4): each run is the field
// shifted by a shift held in the low bits of one register and masked by the high half of another.
template <int RUNS>
__device__ __forceinline__ ibp_u32 vl_word_high(ibp_u32 x, const uint4& e, ibp_u32 run3) {
    ibp_u32 r = (__funnelshift_l(0u, x, e.z) & e.x) | e.w;  // run 0 (the low half: zero | sh3 + 16)
    r |= __funnelshift_l(0u, x, e.x) & e.y;                   // run 1
    if (RUNS >= 3) r |= __funnelshift_l(0u, x, e.y) & e.z;    // run 2
    if (RUNS >= 4) r |= __funnelshift_l(0u, x, e.w) & run3;   // run 3
    return r;
}

// Layout 3: one 16-byte output vector, word k through entry e0[IBP_VL_VECTORS * k] (and run3 at the
// same index), participation bits pv (bit k: word k), fields from stream bit pos: word k's field
// length is byte k of f (fl: words 0-3, fh: 4-7), its start pos + the sum of those before it. Two
// words' fields are read as 32 bits at or before the record's end.
template <int RUNS>
__device__ __forceinline__ uint4 vl_vector_flat(const ibp_u32* w, ibp_u32 end, ibp_u32 pos, ibp_u32 pv, ibp_u32 fl, ibp_u32 fh,
                                                const uint4* e0, const ibp_u32* run3) {
    // Field starts from the vector's first bit, one byte per word (at most 7 * 16 bits: no carries).
    const ibp_u32 ol = fl * 0x01010100u;
    const ibp_u32 oh = fh * 0x01010100u + ((fl * 0x01010101u) >> 24) * 0x01010101u;
    ibp_u32 out[4];
#pragma unroll
    for (ibp_u32 r = 0; r < 4; r++) {
        const ibp_u32 o = r < 2 ? ol : oh, f = r < 2 ? fl : fh, b = 2 * (r & 1);
        const ibp_u32 x0 = sbits32(w, min(pos + vl_byte(o, b), end));  // the fields of words 2r and 2r + 1
        const ibp_u32 x1 = x0 >> vl_byte(f, b);
        ibp_u32 word[2];
#pragma unroll
        for (ibp_u32 q = 0; q < 2; q++) {
            const ibp_u32 k = 2 * r + q, x = q == 0 ? x0 : x1;
            const ibp_u32 part = vl_word_high<RUNS>(x, e0[IBP_VL_VECTORS * k], RUNS >= 4 ? run3[IBP_VL_VECTORS * k] : 0u);
            word[q] = (pv & (1u << k)) != 0u ? part : x << 16;  // (not participating: the field is the word)
        }
        out[r] = __byte_perm(word[0], word[1], 0x7632);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

// Field lengths of the 8 words of a vector, one byte each (lo: words 0-3, hi: 4-7): 16 less vd8's
// byte (16 - F) where pv's bit is set (the word participates).
__device__ __forceinline__ void vl_field_lengths(ibp_u32 pv, const ibp_u8* vd8, ibp_u32& lo, ibp_u32& hi) {
    // (pv's bits spread to bytes: bit i of a nibble lands at bit 8i, no carries; times 255, a byte mask.)
    const ibp_u32 pl = ((pv & 0xfu) * 0x00204081u) & 0x01010101u;
    const ibp_u32 ph = (((pv >> 4) & 0xfu) * 0x00204081u) & 0x01010101u;
    const ibp_u32* const d = (const ibp_u32*)vd8;
#ifdef __CUDA_ARCH__
    const uint2 dd = *(const uint2*)d;  // (one 8-byte load)
    const ibp_u32 d0 = dd.x, d1 = dd.y;
#else
    const ibp_u32 d0 = d[0], d1 = d[1];
#endif
    lo = 0x10101010u - ((pl * 0xffu) & d0);
    hi = 0x10101010u - ((ph * 0xffu) & d1);
}

// Layouts 3 and 4: one output vector's record (vector v of row `row` of the tile): where the record
// lies (base: stream bit of its first byte, len bytes, raw), the vector's participation bits pv, the
// field lengths of its words (fl, fh: vl_field_lengths) and its stream bits (their sum). A raw
// record: every word non-participating, fields from bit 0.
struct VlVector {
    ibp_u32 base, len, pv, fl, fh, bits;
    bool raw;
};
__device__ __forceinline__ VlVector vl_vector_record(const TileCtx& t, const ibp_u32* w, ibp_u32 rec0, const ibp_u8* vd, ibp_u32 row,
                                                     ibp_u32 v) {
    VlVector r;
    const ibp_u32 off = t.offsets[row];
    r.len = t.offsets[row + 1] - off;
    r.raw = r.len == t.raw_padded;
    r.base = rec0 + off * 8;
    // (Vector v's participation bits are byte v of the record; past a short record's end, the byte
    // after it, in the tile or its guard.)
    r.pv = r.raw ? 0u : ((const ibp_u8*)w)[(r.base >> 3) + min(v, r.len)];
    vl_field_lengths(r.pv, vd + 8 * v, r.fl, r.fh);
    r.bits = ((r.fl * 0x01010101u) >> 24) + ((r.fh * 0x01010101u) >> 24);
    return r;
}

// IBP_VL_PAD_WORDS=1: the padding check of layouts 3 and 4 reads the stream's aligned 32-bit words
// (vl_padding_set: one shared load a word) instead of 32 bits at each bit offset (stream_bits_set:
// two loads and a funnel shift a step), which the vector-lanes kernel's profile puts at about 9 %
// of its instructions at A = 16 (GPU_NOTES entry 80). It passes gpu_decode's tests and memcheck on
// the GPU and gains nothing on an H100 or the H200 (0-1.5 % slower, entry 81): 0, stream_bits_set,
// stays the default.
#ifndef IBP_VL_PAD_WORDS
#define IBP_VL_PAD_WORDS 0
#endif
// Bits [from, to) of the shared-memory bit stream w hold a set bit (from <= to): the words holding
// them, the first and last masked to the range.
__device__ __forceinline__ bool vl_padding_set(const ibp_u32* w, ibp_u32 from, ibp_u32 to) {
    bool bad = false;
    if (from < to) {
        const ibp_u32 first = from >> 5, last = (to - 1) >> 5;
#pragma unroll 1
        for (ibp_u32 i = first; i <= last; i++) {
            const ibp_u32 lo = i == first ? ~0u << (from & 31u) : ~0u;
            const ibp_u32 hi = i == last ? low_mask32(to - 32 * i) : ~0u;
            bad |= (w[i] & lo & hi) != 0u;
        }
    }
    return bad;
}

// The checks of a row (the same order and codes as lane_tile_rows) whose record lies at stream bit
// base (len bytes, raw or not) and whose fields end at stream bit base + T: the record length rule
// L == align_up(ceil(T/8), A) (T > 8L fails it too), then padding bits T .. 8L-1 zero.
__device__ __forceinline__ void vl_check_row(const IbpGatherParams& prm, const TileCtx& t, const ibp_u32* w, ibp_u32 base, ibp_u32 len,
                                             bool raw, ibp_u32 row, ibp_u32 T) {
    const ibp_u32 total_bits = len * 8, end = base + total_bits;
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    ibp_u32 code = IBP_STATUS_OK;
    if (!raw && (T > total_bits || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len)) code = IBP_STATUS_ROW_LENGTH;
    else if (IBP_VL_PAD_WORDS ? vl_padding_set(w, base + T, end) : stream_bits_set(w, base + T, end)) code = IBP_STATUS_PADDING;
    if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
}

// IBP_VL_DEFER_CHECKS=1: the lane that decodes a row's last vector keeps the row and its T
// (VlPending) and checks it after the warp's last pass, so that the warp runs the checks once for
// all its rows, a lane each, instead of once per pass for the one or two lanes that end a row there
// (GPU_NOTES entry 80: the padding check alone about 50 of 665 warp instructions a row). A lane
// that ends a second row before then checks the first at once (rows of an even number of vectors,
// or more than 32 rows a warp). Measured on an H100 (GPU_NOTES entry 82), Fashion-MNIST's
// whole-entry decode / D2D: 0.575-0.603 -> 0.645-0.653 alone (the one lane's check, a chain of
// dependent shared loads, held the whole warp each pass), 0.654-0.664 with IBP_VL_BALANCED; the
// default since. 0: each row checked in the pass that ends it.
#ifndef IBP_VL_DEFER_CHECKS
#define IBP_VL_DEFER_CHECKS 1
#endif
struct VlPending {
    ibp_u32 row = ~0u, T = 0;  // row ~0u: none
};
// Checks the pending row, if any (vl_check_row, its record from the tile's offsets).
__device__ __forceinline__ void vl_check_pending(const IbpGatherParams& prm, const TileCtx& t, const ibp_u32* w, ibp_u32 rec0,
                                                 VlPending& p) {
    if (p.row != ~0u) {
        const ibp_u32 off = t.offsets[p.row], len = t.offsets[p.row + 1] - off;
        vl_check_row(prm, t, w, rec0 + off * 8, len, len == t.raw_padded, p.row, p.T);
        p.row = ~0u;
    }
}

// Layouts 3 and 4: decodes vector v of the record a (its first field at stream bit pos of the
// record) into *dst (a raw record that starts a 16-byte vector of the tile: its bytes as they are);
// at the row's last vector, checks the row (T: its stream bits; vl_check_row), or with
// IBP_VL_DEFER_CHECKS leaves it in `pending` (checking the one there first).
template <int RUNS>
__device__ __forceinline__ void vl_decode_vector(const IbpGatherParams& prm, const TileCtx& t, const ibp_u32* w, const uint4* vl,
                                                 const ibp_u32* run3, const VlVector& a, ibp_u32 row, ibp_u32 v, ibp_u32 V,
                                                 ibp_u32 pos, uint4* dst, ibp_u32 rec0, VlPending& pending) {
    const ibp_u32 end = a.base + a.len * 8;
    if (a.raw && ((a.base >> 3) & 15u) == 0) *dst = ((const uint4*)((const ibp_u8*)w + (a.base >> 3)))[v];
    else *dst = vl_vector_flat<RUNS>(w, end, a.base + pos, a.pv, a.fl, a.fh, vl + v, run3 + v);
    if (v == V - 1) {
        if (IBP_VL_DEFER_CHECKS) {
            vl_check_pending(prm, t, w, rec0, pending);
            pending.row = row;
            pending.T = pos + a.bits;
        } else {
            vl_check_row(prm, t, w, a.base, a.len, a.raw, row, pos + a.bits);
        }
    }
}

// IBP_VL_BALANCED=1: layouts 3 and 4 share a tile's vectors among its warps in whole passes (the
// first warps ceil(passes / 8) each), not in whole rows: a tile of 52 rows of 49 vectors gave warps
// 0-6 seven rows (11 passes) and warp 7 three (5 passes), so the block waited at the tile's end for
// 11 passes of work worth 80 / 8 = 10 (GPU_NOTES entry 82: the end-of-tile barrier held 9 % of the
// kernel's stall samples). A warp whose first row began in the warp before sums that row's
// vectors before its own first (vl_row_prefix_bits) as the carry of its first pass. Measured on an
// H100 (GPU_NOTES entry 82), Fashion-MNIST's whole-entry decode / D2D: 0.575-0.603 -> 0.595-0.627
// alone, 0.654-0.664 with IBP_VL_DEFER_CHECKS; the default since. 0: whole rows a warp.
#ifndef IBP_VL_BALANCED
#define IBP_VL_BALANCED 1
#endif
// Stream bits of vectors 0 .. v0 - 1 (v0 < V <= IBP_VL_VECTORS = 64) of row `row` of the tile (its
// first field's stream bit less n for a coded record), the same in every lane of the warp.
__device__ __forceinline__ ibp_u32 vl_row_prefix_bits(const TileCtx& t, const ibp_u32* w, ibp_u32 rec0, const ibp_u8* vd, ibp_u32 row,
                                                      ibp_u32 v0, ibp_u32 lane) {
    ibp_u32 bits = 0;
    if (lane < v0) bits += vl_vector_record(t, w, rec0, vd, row, lane).bits;
    if (lane + 32 < v0) bits += vl_vector_record(t, w, rec0, vd, row, lane + 32).bits;
#pragma unroll
    for (ibp_u32 d = 16; d > 0; d >>= 1) bits += __shfl_xor_sync(FULL_MASK, bits, d);
    return bits;
}

// Layout 3 (flat): the rows of a tile (as vector_lane_rows) as one run of 16-byte output vectors,
// vector g = V * row + v of the tile at out[g] (V = n / 8 vectors a row). Warp `warp` takes a
// contiguous share of the tile's rows, so a row whose vectors span two passes stays in one warp
// (IBP_VL_BALANCED=1: a share of whole passes, a row's first vectors perhaps in the warp before);
// each pass gives lane l the warp's next vector g, so no lane idles while the warp has vectors
// (rows of 49 vectors kept 15 of 32 lanes idle in layout 2's second pass) and every store
// instruction writes 512 consecutive bytes. A vector's stream bits are 128 less 16 - F for each
// participating word (vl_field_lengths over vd), its first bit the sum of those of the vectors
// before it in its row: one scan over the pass, less what it summed for rows before the lane's,
// plus the bits of the lane's row in passes before (the carry). The lane of a row's last vector
// makes the row's checks. Layout 4 gives each lane two consecutive vectors of a pass (64 a pass),
// so that the per-pass work (offsets, scan, carry) is shared by two vectors.
template <int RUNS>
__device__ __forceinline__ void vector_flat_rows(const IbpGatherParams& prm, const TileCtx& t, const uint4* vl, const ibp_u8* vd,
                                                 const ibp_u32* run3, ibp_u32 warp, ibp_u32 lane) {
    constexpr ibp_u32 PER_LANE = IBP_LONG_VECTOR_LANES == 4 ? 2 : 1;  // consecutive vectors of a lane
    constexpr ibp_u32 PASS = 32 * PER_LANE;
    const ibp_u32 n = t.n, V = n / 8;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    uint4* const out = (uint4*)(prm.out + t.k0 * (ibp_u64)prm.row_bytes);
#if IBP_VL_BALANCED
    // Whole passes of the tile's vectors, shared evenly: the warp's first row may have begun in the
    // warp before (carry: the stream bits of its vectors there).
    const ibp_u32 passes = (t.nrows * V + PASS - 1) / PASS;
    const ibp_u32 per_warp = (passes + IBP_TILE_WARPS - 1) / IBP_TILE_WARPS * PASS;
    const ibp_u32 g_begin = min(warp * per_warp, t.nrows * V), g_end = min(g_begin + per_warp, t.nrows * V);
    ibp_u32 carry = g_begin < g_end ? vl_row_prefix_bits(t, w, rec0, vd, g_begin / V, g_begin % V, lane) : 0u;
    // The lane's (first) vector in the current pass: flat index g0 + PER_LANE * lane.
    ibp_u32 row = (g_begin + PER_LANE * lane) / V, v = (g_begin + PER_LANE * lane) % V;
#else
    const ibp_u32 per_warp = (t.nrows + IBP_TILE_WARPS - 1) / IBP_TILE_WARPS;
    const ibp_u32 row_begin = min(warp * per_warp, t.nrows), row_end = min(row_begin + per_warp, t.nrows);
    const ibp_u32 g_begin = row_begin * V, g_end = row_end * V;
    // The lane's (first) vector in the current pass: flat index g0 + PER_LANE * lane.
    ibp_u32 row = row_begin + (PER_LANE * lane) / V, v = (PER_LANE * lane) % V;
    ibp_u32 carry = 0;  // stream bits of the pass's first row in the passes before (when it began there)
#endif
    VlPending pending;  // (IBP_VL_DEFER_CHECKS)
    for (ibp_u32 g0 = g_begin; g0 < g_end; g0 += PASS) {
        const ibp_u32 g = g0 + PER_LANE * lane;
        const bool active = g < g_end;
        VlVector a{}, b{};
        if (active) a = vl_vector_record(t, w, rec0, vd, row, v);
        // Layout 4: the second vector, in the same row or the first of the next.
        const bool b_next_row = v + 1 == V;
        const ibp_u32 row_b = b_next_row ? row + 1 : row, v_b = b_next_row ? 0u : v + 1;
        const bool active_b = PER_LANE == 2 && g + 1 < g_end;
        if (active_b) b = vl_vector_record(t, w, rec0, vd, row_b, v_b);
        const ibp_u32 both = a.bits + b.bits;
        ibp_u32 x = both;
#pragma unroll
        for (ibp_u32 d = 1; d < 32; d <<= 1) {
            const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= d) x += y;
        }
        // Flat stream bits before the lane's first vector within the pass: x - both. The lane's
        // row began at pass vector s = PER_LANE * lane - v (or in a pass before, v > PER_LANE *
        // lane): the flat bits before s are x - both at lane s / PER_LANE, less its first vector's
        // bits when s is that lane's second vector.
        const ibp_u32 first = PER_LANE * lane;
        const bool began_here = v <= first;
        const ibp_u32 s = began_here ? first - v : 0u;
        const ibp_u32 x_s = __shfl_sync(FULL_MASK, x - both, s / PER_LANE);
        const ibp_u32 a_s = PER_LANE == 2 ? __shfl_sync(FULL_MASK, a.bits, s / PER_LANE) : 0u;
        const ibp_u32 before_row = x_s + ((s & 1u) != 0u ? a_s : 0u);
        const ibp_u32 excl_a = (x - both) - (began_here ? before_row : 0u) + (began_here ? 0u : carry);
        const ibp_u32 excl_b = b_next_row ? 0u : excl_a + a.bits;
        // The running sum of the pass's last vector's row, for the next pass.
        carry = __shfl_sync(FULL_MASK, PER_LANE == 2 ? excl_b + b.bits : excl_a + a.bits, 31);
        if (active) vl_decode_vector<RUNS>(prm, t, w, vl, run3, a, row, v, V, (a.raw ? 0u : n) + excl_a, &out[g], rec0, pending);
        if (active_b)
            vl_decode_vector<RUNS>(prm, t, w, vl, run3, b, row_b, v_b, V, (b.raw ? 0u : n) + excl_b, &out[g + 1], rec0, pending);
        v += PASS;
        while (v >= V) {
            v -= V;
            row++;
        }
    }
    if (IBP_VL_DEFER_CHECKS) vl_check_pending(prm, t, w, rec0, pending);
}

// The rows of a tile through the vector table vl (vd, run3: layout 3's saved bits and fourth runs) of flags vl_flags
// (vl_build), in layout IBP_LONG_VECTOR_LANES, for the positions' most runs of free bits.
__device__ __forceinline__ void vector_lanes(const IbpGatherParams& prm, const TileCtx& t, const uint4* vl, const ibp_u8* vd,
                                             const ibp_u32* run3, ibp_u32 vl_flags, ibp_u32 warp, ibp_u32 lane) {
    if (IBP_LONG_VECTOR_LANES >= 3) {
        if (vl_flags & IBP_VL_FOUR) vector_flat_rows<4>(prm, t, vl, vd, run3, warp, lane);
        else if (vl_flags & IBP_VL_THREE) vector_flat_rows<3>(prm, t, vl, vd, run3, warp, lane);
        else vector_flat_rows<2>(prm, t, vl, vd, run3, warp, lane);
    } else {
        if (vl_flags & IBP_VL_FOUR) vector_lane_rows<4>(prm, t, vl, warp, lane);
        else if (vl_flags & IBP_VL_THREE) vector_lane_rows<3>(prm, t, vl, warp, lane);
        else vector_lane_rows<2>(prm, t, vl, warp, lane);
    }
}
