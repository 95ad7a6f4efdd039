// ibp_gather/words.cuh: word-width traits, low masks and the bit deposit (spec 6.2: free bits into their positions).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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
