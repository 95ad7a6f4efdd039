// ibp_baselines.cu: reference copy kernels for benchmarks (not part of the decoder).
//
// Launch shape of both: blocks of 128 threads (4 warps), grid-stride over rows; no shared memory.
// One warp copies one row with 16-byte loads and stores when both ends are 16-byte aligned
// (4 independent loads in flight per lane), 4-byte or 1-byte accesses otherwise.
// Compiled with ibp_status.h prepended (for the integer typedefs).

__device__ __forceinline__ void warp_copy(ibp_u8* dst, const ibp_u8* src, ibp_u64 len, ibp_u32 lane) {
    if (((((size_t)src) | ((size_t)dst)) & 15) == 0) {
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
    } else if (((((size_t)src) | ((size_t)dst)) & 3) == 0) {
        ibp_u64 words = len >> 2;
        for (ibp_u64 i = lane; i < words; i += 32) ((ibp_u32*)dst)[i] = ((const ibp_u32*)src)[i];
        for (ibp_u64 t = (words << 2) + lane; t < len; t += 32) dst[t] = src[t];
    } else {
        for (ibp_u64 t = lane; t < len; t += 32) dst[t] = src[t];
    }
}

// Uncompressed gather: out row k = src row rows[k] (rows of row_bytes bytes). Rows not below
// src_rows are skipped (their output is left as it was).
extern "C" __global__ void __launch_bounds__(128)
ibp_raw_gather(const ibp_u8* src, ibp_u64 src_rows, ibp_u64 row_bytes, const ibp_u64* rows, ibp_u64 count, ibp_u8* out) {
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u64 warps = (ibp_u64)gridDim.x * 4;
    for (ibp_u64 k = (ibp_u64)blockIdx.x * 4 + (threadIdx.x >> 5); k < count; k += warps) {
        const ibp_u64 r = rows[k];
        if (r >= src_rows) continue;
        warp_copy(out + k * row_bytes, src + r * row_bytes, row_bytes, lane);
    }
}

// "Ideal" transfer: copies record k (spans[2k] = byte offset in src, spans[2k+1] = length) to
// out + k * out_stride, moving only the compressed bytes with the gather's access pattern: the
// 16-byte aligned vectors that cover the record, when they fit src and out_stride (src must then be
// 16-byte aligned), else the record's bytes exactly.
// Spans outside src_len or longer than out_stride are skipped.
// With -DIBP_GATHER_TIMELINE=1 (the gathers' diagnostic build, kernels/ibp_gather/copies.cuh) lane 0
// then overwrites the first 24 bytes of each copy (out_stride >= 32) with three readings of the
// global timer (ns): the kernel's start in this warp, the span loaded, the record copied (after its
// stores issued, so after its bytes arrived).
#ifndef IBP_GATHER_TIMELINE
#define IBP_GATHER_TIMELINE 0
#endif
__device__ __forceinline__ ibp_u64 copy_ns() {
    ibp_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

extern "C" __global__ void __launch_bounds__(128)
ibp_copy_records(const ibp_u8* src, ibp_u64 src_len, const ibp_u64* spans, ibp_u64 count, ibp_u8* out, ibp_u64 out_stride) {
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u64 warps = (ibp_u64)gridDim.x * 4;
    const ibp_u64 t_start = IBP_GATHER_TIMELINE ? copy_ns() : 0;
    for (ibp_u64 k = (ibp_u64)blockIdx.x * 4 + (threadIdx.x >> 5); k < count; k += warps) {
        const ibp_u64 off = spans[2 * k], len = spans[2 * k + 1];
        if (off > src_len || len > src_len - off || len > out_stride) continue;
        const ibp_u64 t_span = IBP_GATHER_TIMELINE ? copy_ns() : 0;
        // 16-byte loads of the aligned vectors covering the record (what the decoder reads).
        const ibp_u64 a = off & ~15ull, e = (off + len + 15) & ~15ull;
        if (e <= src_len && e - a <= out_stride) warp_copy(out + k * out_stride, src + a, e - a, lane);
        else warp_copy(out + k * out_stride, src + off, len, lane);
        if (IBP_GATHER_TIMELINE && out_stride >= 32 && ((out_stride | (size_t)out) & 7) == 0) {
            const ibp_u64 t_done = copy_ns();
            __syncwarp();
            if (lane == 0) {
                ibp_u64* t = (ibp_u64*)(out + k * out_stride);
                t[0] = t_start;
                t[1] = t_span;
                t[2] = t_done;
            }
        }
    }
}

// Keeps the stream busy for `ns` nanoseconds of the GPU's global timer (one thread). Benchmarks
// enqueue it before a timed launch so that the launch's host-side cost overlaps it and the events
// time only the GPU's work.
extern "C" __global__ void __launch_bounds__(32) ibp_spin(ibp_u64 ns) {
    ibp_u64 t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
