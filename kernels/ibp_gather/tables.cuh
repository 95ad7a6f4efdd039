// ibp_gather/tables.cuh: per-position decode tables built from Mask/Bitval and the rows decoded through them.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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
// F, the free bits of a position, from its tinfo entry.
__device__ __forceinline__ ibp_u32 entry_free_bits(const uint4& info) { return info.w & 127u; }
// The stream bits a word of W bits takes: F where it participates (p), else the whole word (the
// entry read only where p holds).
__device__ __forceinline__ ibp_u32 field_bits(bool p, const uint4& info, ibp_u32 W) { return p ? entry_free_bits(info) : W; }
// Flags build_table returns: every entry has the same F; no entry has IBP_TILE_MULTI; every position
// of every group has the same Mask and Bitval (asked for by the short-rows kernel only).
#define IBP_TABLE_UNIFORM_F 1u
#define IBP_TABLE_NO_MULTI 2u
#define IBP_TABLE_ONE_ENTRY 4u

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
        v64 &= low_mask64(entry_free_bits(ti));
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
        const ibp_u32 fa = field_bits(pa, tia, W);
        const ibp_u32 fb = active_b ? field_bits(pb, tib, W) : 0u;
        ibp_u32 sums;
        const ibp_u32 x = round_scan(fa, fb, W, lane, sums);
        const ibp_u32 bits_a = sums & 0xffffu, bits_b = sums >> 16;
        if (pos + bits_a + bits_b > total_bits) return IBP_STATUS_ROW_LENGTH;
        const ibp_u32 sa = base + pos + (x & 0xffffu) - fa;
        const ibp_u32 sb = base + pos + bits_a + (x >> 16) - fb;
        const typename Word<WB>::R word_a = table_word<WB>(w, sa, pa, tma, tia);
        if (active_b) {
            const typename Word<WB>::R word_b = table_word<WB>(w, sb, pb, tmb, tib);
            store_row_word<WB>(dst, jb, word_b, n, last_bytes, aligned, partial_bad);
        }
        store_row_word<WB>(dst, ja, word_a, n, last_bytes, aligned, partial_bad);
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
        const ibp_u32 f = active ? field_bits(p, ti, W) : 0u;
        ibp_u32 round_bits;
        const ibp_u32 x = round_scan(f, 0u, W, lane, round_bits);  // bit offsets of the fields within the round
        if (pos + round_bits > total_bits) return IBP_STATUS_ROW_LENGTH;
        if (active) {
            const typename Word<WB>::R word = table_word<WB>(w, base + pos + (x - f), p, tm, ti);
            store_row_word<WB>(dst, j, word, n, last_bytes, aligned, partial_bad);
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
