// ibp_gather/gather_rows.cuh: per-row lookups (row index, chunk, record span) and the ibp_gather kernel.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

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
    const ibp_u32* free;    // the row's group's free positions (a sparse table, sparse_rows.cuh), or null
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

// Finds request k's record (entry row `row`) and metadata; all lanes get the same Job. SPARSE: a
// chunk's sparse table (sparse_rows.cuh) sets job.free; otherwise such a table is not used.
template <bool SPARSE = false>
__device__ __forceinline__ Job lookup(const IbpGatherParams& prm, const ibp_u64* first_rows, ibp_u64 row, ibp_u32 lane) {
    Job job;
    job.code = IBP_STATUS_OK;
    job.src = 0; job.masks = 0; job.table = 0; job.free = 0; job.len = 0; job.words_bytes = 0;
    job.n = 0; job.wb = 1; job.align_log2 = 0; job.entries = 0; job.raw = false; job.staged = false;
    if (row >= prm.entry_rows || prm.chunk_count == 0) { job.code = IBP_STATUS_ROW_INDEX; return job; }
#if IBP_GATHER_LEAN_LOOKUP
    // With a flat row index (prm.row_spans) the record's span depends on the row alone: it is loaded
    // first, so it flies with the chunk search (a division, or a binary search whose steps are
    // shared-memory loads where the chunks' first rows fit there) and the descriptor's loads,
    // instead of the anchor and stored-length loads that wait for the descriptor.
    const bool spans = IBP_GATHER_SPANS && prm.row_spans != 0;
    const ibp_u64 span = spans ? prm.row_spans[row] : 0ull;
#else
    const bool spans = false;
    const ibp_u64 span = 0;
#endif
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
    const IbpChunk c = load_chunk(prm.chunks + lo);
#else
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
            // A sparse table instead (offset flagged IBP_TABLE_SPARSE): G * ceil(n / 32) words.
            const ibp_u64 soff = toff & ~IBP_TABLE_SPARSE;
            const ibp_u64 windows = ((ibp_u64)n + 31) >> 5;
            if (SPARSE && toff != ~0ull && (toff & IBP_TABLE_SPARSE) && (soff & 3) == 0 && soff <= prm.tables_size &&
                4 * (ibp_u64)G * windows <= prm.tables_size - soff) {
                job.free = (const ibp_u32*)(prm.tables + soff) + (ibp_u64)g * windows;
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

// Decodes (or copies) a looked-up request into out row k. SPARSE: rows with a sparse table are
// decoded as exceptions over the zeros the caller has already written (zero_row; free0: the lane's
// word of the table's first 32, which the caller loaded).
template <bool SPARSE = false>
__device__ __forceinline__ void finish(const IbpGatherParams& prm, const Job& job, ibp_u64 k, const ibp_u8* buf, ibp_u32 lane,
                                       ibp_u32 free0 = 0) {
    ibp_u8* dst = prm.out + k * (ibp_u64)prm.row_bytes;
    ibp_u32 code = job.code;
    if (code == IBP_STATUS_OK) {
        if (job.raw) {
            const ibp_u8* from = job.staged ? buf + ((size_t)job.src & 15) : job.src;
            warp_copy(dst, from, prm.row_bytes, lane);
            bool bad = false;
            for (ibp_u64 t = prm.row_bytes + lane; t < job.len; t += 32) bad |= from[t] != 0;
            if (__any_sync(FULL_MASK, bad)) code = IBP_STATUS_PADDING;
        } else if (IBP_GATHER_DIAG && job.staged) {
            diag_fill(dst, prm.row_bytes, ((const ibp_u32*)buf)[0], lane, 32);
        } else if (SPARSE && job.staged && job.free) {
            SmemRecord rec;
            rec.w = (const ibp_u32*)buf;
            rec.len = job.len;
            rec.off = (ibp_u32)((size_t)job.src & 15);
            code = decode_sparse_any(rec, dst, job.free, free0, job.masks, job.masks + job.words_bytes, job.n, job.wb,
                                     prm.row_bytes, job.align_log2, lane);
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

// IBP_GATHER_MIN_BLOCKS: blocks per SM that __launch_bounds__ asks ptxas to fit (6: 80 registers;
// 7: 72 and more spills; 8: 64, 556 B of spill stores), an A/B of more resident warps against the
// spills that buys (GPU_NOTES entry 73).
#ifndef IBP_GATHER_MIN_BLOCKS
#define IBP_GATHER_MIN_BLOCKS 6
#endif
// IBP_GATHER_SPARSE_MIN_BLOCKS: the same for ibp_gather_sparse alone. 5 (96 registers, no spills):
// at 80 registers (6) ptxas spills the record's staged vectors right after their loads, so the
// warp waits there for the record instead of zeroing the row and looking up the next one while it
// is in flight (GPU_NOTES entry 92); 8 (64 registers) spills more (entry 91).
#ifndef IBP_GATHER_SPARSE_MIN_BLOCKS
#define IBP_GATHER_SPARSE_MIN_BLOCKS 5
#endif
// The loop of ibp_gather (SPARSE false) and ibp_gather_sparse (true: rows with a sparse table are
// zeroed while their record's loads are in flight, then only their exceptions decoded,
// sparse_rows.cuh).
// ibp_stage: the kernel's dynamic shared memory; first_rows_smem: its IBP_SMEM_CHUNKS chunk start rows.
template <bool SPARSE>
__device__ __forceinline__ void gather_rows(const IbpGatherParams& prm, ibp_u8* ibp_stage, ibp_u64* first_rows_smem) {
    const ibp_u32 lane = threadIdx.x & 31;
    const ibp_u32 warp = threadIdx.x >> 5;
    const ibp_u64 warps_total = (ibp_u64)gridDim.x * IBP_WARPS_PER_BLOCK;
    ibp_u64 k = (ibp_u64)blockIdx.x * IBP_WARPS_PER_BLOCK + warp;
    const ibp_u64 t_start = IBP_GATHER_TIMELINE ? global_ns() : 0;  // (IBP_GATHER_TIMELINE, copies.cuh)
    // The first request's row is loaded before the block's shared-memory fill, so the two loads overlap.
    const ibp_u64 row0 = k < prm.count ? request_row(prm, k) : 0;
    const ibp_u64* first_rows = chunk_first_rows(prm, first_rows_smem);
    ibp_u8* const stage = ibp_stage + (ibp_u64)warp * prm.stage_bytes;
    if (k >= prm.count) return;  // after the only __syncthreads
    Job cur = lookup<SPARSE>(prm, first_rows, row0, lane);
    ibp_u64 t_looked = IBP_GATHER_TIMELINE ? global_ns() : 0;
    for (;;) {
        // Start loading this row's record, then do the next row's lookups while the loads fly.
        Prefetch pf;
        const bool stage_it = cur.code == IBP_STATUS_OK && cur.staged;
        if (stage_it) stage_begin(pf, cur.src, cur.len, lane);
        ibp_u32 free0 = 0;
        if (SPARSE && stage_it && cur.free && !cur.raw) {
            if (lane < ((cur.n + 31) >> 5)) free0 = __ldg(cur.free + lane);
            zero_row(prm.out + k * (ibp_u64)prm.row_bytes, prm.row_bytes, lane);
        }
        const ibp_u64 kn = k + warps_total;
        const bool have_next = kn < prm.count;
        Job nxt;
        if (have_next) nxt = lookup<SPARSE>(prm, first_rows, request_row(prm, kn), lane);
        const ibp_u64 t_looked_next = IBP_GATHER_TIMELINE ? global_ns() : 0;
        if (stage_it) stage_end(pf, stage, cur.src, cur.len, lane);
        __syncwarp();  // (also orders the zeros' stores before the exceptions' over them)
        const ibp_u64 t_staged = IBP_GATHER_TIMELINE ? global_ns() : 0;
        finish<SPARSE>(prm, cur, k, stage, lane, free0);
        __syncwarp();  // the staging buffer is refilled for the next row
        if (IBP_GATHER_TIMELINE) {
            const ibp_u64 t_done = global_ns();
            __syncwarp();
            timeline_store(prm.out + k * (ibp_u64)prm.row_bytes, prm.row_bytes, t_start, t_looked, t_staged, t_done,
                           lane);
            t_looked = t_looked_next;
        }
        if (!have_next) break;
        cur = nxt;
        k = kn;
    }
}

extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK, IBP_GATHER_MIN_BLOCKS)
ibp_gather(const IbpGatherParams prm) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    __shared__ ibp_u64 first_rows_smem[IBP_SMEM_CHUNKS];
    gather_rows<false>(prm, ibp_stage, first_rows_smem);
}

// ibp_gather for entries with sparse tables (crates/ibp-gpu, kernel_choice::table_offsets).
extern "C" __global__ void __launch_bounds__(32 * IBP_WARPS_PER_BLOCK, IBP_GATHER_SPARSE_MIN_BLOCKS)
ibp_gather_sparse(const IbpGatherParams prm) {
    IBP_DYNAMIC_SMEM(ibp_stage);
    __shared__ ibp_u64 first_rows_smem[IBP_SMEM_CHUNKS];
    gather_rows<true>(prm, ibp_stage, first_rows_smem);
}
