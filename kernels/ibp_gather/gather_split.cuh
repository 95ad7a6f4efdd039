// ibp_gather/gather_split.cuh: small batches: a row decoded by several warps (ibp_gather_split).
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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
// ibp_gather_split_pairs is the same in paired passes (below).

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
        pos = span_start(rec, n, jb, [&](ibp_u32 j, bool p) { return field_bits(p, tinfo[j], W); }, lane);
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

#ifndef IBP_SPLIT_PAIRS_MIN_BLOCKS
#define IBP_SPLIT_PAIRS_MIN_BLOCKS 8  // 64 registers: kernel_choice's SPLIT_RESIDENT_WARPS_PER_SM
#endif

// Whether request `job` (`valid`: a request of the batch) is decoded by the group's S warps
// through split_row, each staging its share of the record: a staged coded record of at least u * S words.
__device__ __forceinline__ bool split_request(const Job& job, bool valid, ibp_u32 S, ibp_u32 u) {
    return valid && job.code == IBP_STATUS_OK && job.staged && !job.raw && job.n >= u * S;
}

// Decodes request k (looked up as `job`, its record staged at `stage` when job.staged) into its
// output row: by the group's S warps through split_row when `split`, else by its first warp
// (finish), as ibp_gather would.
__device__ __forceinline__ void split_decode(const IbpGatherParams& prm, const Job& job, ibp_u64 k, bool valid, bool split,
                                             const ibp_u8* stage, ibp_u32 sub, ibp_u32 S, ibp_u32 u, ibp_u32 lane) {
    if (split && IBP_GATHER_DIAG) {
        diag_fill(prm.out + k * (ibp_u64)prm.row_bytes, prm.row_bytes, ((const ibp_u32*)stage)[0], sub * 32 + lane, S * 32);
    } else if (split) {
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
}

// Paired passes (ibp_gather_split_pairs, S >= 2): a batch whose requests' warps would need two waves of blocks
// leaves the second wave's records unrequested until the first wave's blocks finish, so the link
// idles between waves while the first wave decodes and the second looks up and waits. With paired
// passes a grid of one wave gives each group two requests a pass: warps 0 and 1 of the group look up
// one each (in parallel, the Jobs shared through shared memory), every warp then issues the 16-byte
// loads of both records before storing either (both in flight at once; the second into warp 1's
// stage, which a group of S >= 2 warps has), and the group decodes one request after the other.
// Same rows, checks and reports as unpaired passes.

// Stages the records of a pass's two requests (Jobs `jobs`, request k0 and k0 + groups; `count`
// requests in all) at `stage` and `stage + stage_bytes`, the loads of both issued before either store.
__device__ __forceinline__ void stage_pair(const Job* jobs, ibp_u64 k0, ibp_u64 groups, ibp_u64 count, ibp_u8* stage,
                                           ibp_u32 stage_bytes, ibp_u32 sub, ibp_u32 S, ibp_u32 u, ibp_u32 lane) {
    ibp_u64 v0 = 0, v1 = 0;
    const uint4 *s0 = 0, *s1 = 0;
    ibp_u32 t0, t1, n0, n1;
    {
        const Job& j = jobs[0];
        const bool valid = k0 < count, split = split_request(j, valid, S, u);
        if (valid && j.code == IBP_STATUS_OK && j.staged && (split || sub == 0)) s0 = stage_span(j.src, j.len, v0);
        t0 = split ? sub * 32 + lane : lane;
        n0 = split ? S * 32 : 32u;
    }
    {
        const Job& j = jobs[1];
        const bool valid = k0 + groups < count, split = split_request(j, valid, S, u);
        if (valid && j.code == IBP_STATUS_OK && j.staged && (split || sub == 0)) s1 = stage_span(j.src, j.len, v1);
        t1 = split ? sub * 32 + lane : lane;
        n1 = split ? S * 32 : 32u;
    }
    uint4* d0 = (uint4*)stage;
    uint4* d1 = (uint4*)(stage + stage_bytes);
    for (ibp_u64 i0 = t0, i1 = t1; i0 < v0 || i1 < v1; i0 += n0, i1 += n1) {
        uint4 a, b;
        if (i0 < v0) a = s0[i0];
        if (i1 < v1) b = s1[i1];
        if (i0 < v0) d0[i0] = a;
        if (i1 < v1) d1[i1] = b;
    }
}

// The body of ibp_gather_split (PAIRED false) and ibp_gather_split_pairs (true): two kernels, so
// that paired passes do not change the registers of the single ones.
template <bool PAIRED>
__device__ __forceinline__ void gather_split_body(const IbpGatherParams& prm, ibp_u32 split_log2, ibp_u32 split_words,
                                                  ibp_u8* ibp_stage) {
    __shared__ ibp_u64 first_rows_smem[IBP_SMEM_CHUNKS];
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warp = threadIdx.x >> 5;
    // S warps per request, at most the block's (IBP_WARPS_PER_BLOCK is a power of two).
    // (Paired passes take at least 2: the second request's stage is the group's second warp's.)
    const ibp_u32 S = min(1u << min(max(split_log2, PAIRED ? 1u : 0u), 5u), (ibp_u32)IBP_WARPS_PER_BLOCK);
    const ibp_u32 groups = IBP_WARPS_PER_BLOCK / S;
    const ibp_u32 group = warp / S, sub = warp % S;
    const ibp_u32 u = max(32u, min(split_words, 1u << 16) & ~31u);  // words per warp at least, a multiple of 32
    const ibp_u64* first_rows = chunk_first_rows(prm, first_rows_smem);
    // The group's staging buffer: its first warp's (S * stage_bytes in all for the group's warps).
    ibp_u8* const stage = ibp_stage + (ibp_u64)group * S * prm.stage_bytes;
    if constexpr (PAIRED) {
        __shared__ Job jobs_smem[IBP_WARPS_PER_BLOCK];  // a group's two Jobs at 2 * group (S >= 2: groups <= half the warps)
        Job* const jobs = jobs_smem + 2 * group;
        // Block-uniform passes: group g takes requests pass + g and pass + groups + g.
        for (ibp_u64 pass = (ibp_u64)blockIdx.x * 2 * groups; pass < prm.count; pass += (ibp_u64)gridDim.x * 2 * groups) {
            const ibp_u64 k0 = pass + group;
            if (sub < 2 && k0 + sub * groups < prm.count) {
                const Job job = lookup(prm, first_rows, request_row(prm, k0 + sub * groups), lane);
                if (lane == 0) jobs[sub] = job;
            }
            __syncthreads();
            stage_pair(jobs, k0, groups, prm.count, stage, prm.stage_bytes, sub, S, u, lane);
            __syncthreads();
#pragma unroll 1
            for (ibp_u32 s = 0; s < 2; ++s) {
                const ibp_u64 k = k0 + s * groups;
                const bool valid = k < prm.count;
                const Job& job = jobs[s];
                split_decode(prm, job, k, valid, split_request(job, valid, S, u), stage + s * prm.stage_bytes, sub, S, u,
                             lane);
            }
            __syncthreads();  // the staging buffers and Jobs are refilled at the next pass
        }
    } else {
        // Block-uniform steps (every thread reaches each barrier): group g takes request step + g.
        for (ibp_u64 step = (ibp_u64)blockIdx.x * groups; step < prm.count; step += (ibp_u64)gridDim.x * groups) {
            const ibp_u64 k = step + group;
            const bool valid = group < groups && k < prm.count;
            Job job;
            if (valid) job = lookup(prm, first_rows, request_row(prm, k), lane);
            const bool split = split_request(job, valid, S, u);
            if (valid && job.code == IBP_STATUS_OK && job.staged && (split || sub == 0)) {
                // The 16-byte vectors covering the record (stage_span), by the group's warps or the first.
                ibp_u64 vecs;
                const uint4* src = stage_span(job.src, job.len, vecs);
                const ibp_u32 t = split ? sub * 32 + lane : lane, threads = split ? S * 32 : 32u;
                for (ibp_u64 i = t; i < vecs; i += threads) ((uint4*)stage)[i] = src[i];
            }
            __syncthreads();
            split_decode(prm, job, k, valid, split, stage, sub, S, u, lane);
            __syncthreads();  // the staging buffers are refilled at the next step
        }
    }
}

extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK)
ibp_gather_split(const IbpGatherParams prm, ibp_u32 split_log2, ibp_u32 split_words) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    gather_split_body<false>(prm, split_log2, split_words, ibp_stage);
}

// ibp_gather_split in paired passes (above; split_log2 0 is taken as 1). Same parameters; at IBP_SPLIT_PAIRS_MIN_BLOCKS blocks per SM, so that a grid of one wave has the
// resident blocks kernel_choice::split_pairs counts on.
extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK, IBP_SPLIT_PAIRS_MIN_BLOCKS)
ibp_gather_split_pairs(const IbpGatherParams prm, ibp_u32 split_log2, ibp_u32 split_words) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    gather_split_body<true>(prm, split_log2, split_words, ibp_stage);
}
