// ibp_gather/pairs.cuh: 32-bit and 16-bit words decoded in pairs.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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
    const ibp_u32 f_lo = (ti.w >> 8) & 63u, f_hi = entry_free_bits(ti) - f_lo;
    const bool multi = (int)ti.w < 0, many = (ti.w & IBP_TILE_MANY) != 0;
    const ibp_u32 lo = pair_half<MULTI, HW>(sbits32(w, s), pl, tm.x, tm.y, ti.z, ti.x, multi, many, f_lo);
    const ibp_u32 hi = pair_half<MULTI, HW>(sbits32(w, s + (pl ? f_lo : (ibp_u32)HW)), ph, tm.z, tm.w,
                                            ti.z >> 16, ti.y, multi, many, f_hi);
    return ((ibp_u64)hi << HW) | lo;
}

// Field length of pair k (active: k < P; has_hi: 2k + 1 < n) of HW-bit words.
template <int HW>
__device__ __forceinline__ ibp_u32 pair_bits(bool active, bool has_hi, bool pl, bool ph, const uint4& ti) {
    const ibp_u32 f_lo = (ti.w >> 8) & 63u, f_hi = entry_free_bits(ti) - f_lo;
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
