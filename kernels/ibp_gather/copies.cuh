// ibp_gather/copies.cuh: staging of records into shared memory and warp copies of raw records.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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

// IBP_GATHER_DIAG: a diagnostic build of the host gathers (ibp_gather, ibp_gather_split), never
// correct output, for timing where a gather's time goes (the bench must run with
// IBP_BENCH_UNCHECKED=1). For a coded record that was staged in shared memory: 1 (no decode) writes
// the output row with a value made of the record's first word instead of decoding it; 2 (no decode,
// no row) writes that word alone. Lookups, the record's read and its staging are as always; raw
// records are copied as always. 0: the kernels as they are.
#ifndef IBP_GATHER_DIAG
#define IBP_GATHER_DIAG 0
#endif

// IBP_GATHER_TIMELINE: a diagnostic build of ibp_gather and ibp_gather_sparse (and of the bench's
// ibp_copy_records, kernels/ibp_baselines.cu), never correct output, for where a gather's time goes
// within a launch (the bench runs it with IBP_BENCH_UNCHECKED=1 IBP_BENCH_TIMELINE=1): once a
// request is done, lane 0 of its warp overwrites the first 32 bytes of its output row (rows of at
// least 32 bytes, 4-byte aligned) with four 64-bit readings of the GPU's global timer (ns): the
// kernel's start in this warp, its lookups done, its record staged, its decode done. Each reading
// follows (in the warp's in-order issue) the instructions that consume what it times, so "staged"
// is after the record's bytes arrived. 0: the kernels as they are.
#ifndef IBP_GATHER_TIMELINE
#define IBP_GATHER_TIMELINE 0
#endif

// The GPU's global timer (ns), read after every memory access before it in program order (0 in the
// CPU-run build of kernels/host).
__device__ __forceinline__ ibp_u64 global_ns() {
    ibp_u64 t = 0;
#ifdef __CUDA_ARCH__
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
#endif
    return t;
}

// IBP_GATHER_TIMELINE's record of one request: lane i < 8 stores 32-bit word i of t[0..3].
__device__ __forceinline__ void timeline_store(ibp_u8* dst, ibp_u32 row_bytes, ibp_u64 t0, ibp_u64 t1, ibp_u64 t2,
                                               ibp_u64 t3, ibp_u32 lane) {
    if (row_bytes < 32 || ((size_t)dst & 3) != 0 || lane >= 8) return;
    const ibp_u64 t = lane < 2 ? t0 : lane < 4 ? t1 : lane < 6 ? t2 : t3;
    ((ibp_u32*)dst)[lane] = (ibp_u32)(t >> (32 * (lane & 1)));
}

// IBP_GATHER_DIAG's stand-in for a row's decode: thread t of `threads` (a warp's lanes, or a group
// of warps') writes its share of the n bytes at dst with v (4-byte stores where dst and n allow),
// or, at IBP_GATHER_DIAG 2, thread 0 writes v's low byte alone.
__device__ __forceinline__ void diag_fill(ibp_u8* dst, ibp_u64 n, ibp_u32 v, ibp_u32 t, ibp_u32 threads) {
    if (IBP_GATHER_DIAG == 2) {
        if (t == 0 && n > 0) dst[0] = (ibp_u8)v;
    } else if (((((size_t)dst) | n) & 3) == 0) {
        for (ibp_u64 i = t; i < (n >> 2); i += threads) ((ibp_u32*)dst)[i] = v;
    } else {
        for (ibp_u64 i = t; i < n; i += threads) dst[i] = (ibp_u8)v;
    }
}
