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
        __syncthreads();  // the staging buffers are refilled at the next step
    }
}
