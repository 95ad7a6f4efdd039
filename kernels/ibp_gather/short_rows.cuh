// ibp_gather/short_rows.cuh: short rows decoded in slices, a lane per slice.
// Part of ibp_gather.cu, which includes its parts in order; each uses those before it.

// ---- short rows decoded in slices, a lane per slice (lean kernel, rows of <= IBP_LEAN_THREAD_ROWS words) ----
// Short rows keep few lanes busy per word (8 of 32 for a row of eight 64-bit words) and spend most
// of a lane-per-word pass on the row's checks, the scan and shuffles. Here a row is cut into K
// slices of m = ceil(n / K) consecutive words, K a power of two (the row's bytes / IBP_LEAN_LANE_BYTES
// rounded up, at most 32 and at most n rounded up), and lane s of a K-lane segment walks slice s's
// words in order: slice lengths (sum of the fields' lengths), an exclusive scan over the segment
// gives each slice's first stream bit, then each word's field follows the one before, and the
// segment's total gives T. The same checks, in the same order and with the same codes, as
// lean_tile_rows (made by each lane, reported by lane 0 of the segment). Output: 16 bytes per store
// where slices, rows and the output allow it, else a word per store. IBP_LEAN_THREAD_ROWS 0: off
// (rows of <= 16 words take decode_small_rows, the others lean_tile_rows).
#ifndef IBP_LEAN_THREAD_ROWS
#define IBP_LEAN_THREAD_ROWS 16  // rows of at most this many words (<= 32)
#endif
#if IBP_LEAN_THREAD_ROWS > 32
#error "IBP_LEAN_THREAD_ROWS is at most 32 (a row's participation bits are one 32-bit word)"
#endif
// IBP_LEAN_THREAD_BYTES > 0: rows of up to 32 words and at most this many bytes take the same
// path (MiniLM K bf16, 32 words of 16 bits: 0.31 -> 0.45 of the D2D copy at A = 1, GPU_NOTES
// entries 40 and 41; at A = 16, where 64 % of its records are raw, 0.41 -> 0.44 once the path copies
// raw records with 16-byte vectors, entry 51, 0.35 before). 0: off. IBP_LEAN_THREAD_A1_ONLY=1 keeps
// it to chunks of A = 1, as before entry 51.
#ifndef IBP_LEAN_THREAD_BYTES
#define IBP_LEAN_THREAD_BYTES 64
#endif
#ifndef IBP_LEAN_THREAD_A1_ONLY
#define IBP_LEAN_THREAD_A1_ONLY 0
#endif
#ifndef IBP_LEAN_LANE_BYTES
#define IBP_LEAN_LANE_BYTES 64  // output bytes per lane a row's slice count aims at
#endif
// The long-rows kernel (ibp_decode_tiles_lean_long, rows of any number of words) for rows
// lane_tile_rows does not take: output bytes per lane its slices aim at. Whole rows (one slice, so
// every lane of a warp stands at the same position) measured best (GPU_NOTES entries 61, 62).
#ifndef IBP_LONG_LANE_BYTES
#define IBP_LONG_LANE_BYTES 4096
#endif
// IBP_SLICE_RAW_VECS: a raw record's slice is copied with 16-byte vectors where the slice, the record
// and the output allow (raw records of A = 16 chunks), not decoded a word at a time as a record of
// non-participating words (0: as before entry 51).
#ifndef IBP_SLICE_RAW_VECS
#define IBP_SLICE_RAW_VECS 1
#endif

// IBP_SLICE_ONE_ENTRY=1: in the short-rows kernel, chunks whose positions all have one Mask and
// Bitval (KV-cache rows: every head dimension alike) and no 3+ runs decode with that one table entry
// held in registers, no table read per word: K bf16's loop per 16-byte vector takes 191 instructions
// instead of 255 (SASS, sm_90). Adopted (GPU_NOTES entry 68: K bf16 0.49 / 0.45 -> 0.56-0.57 / 0.53 of
// the D2D copy at A = 1 / 16, both runs); 0 keeps the table read per word.
#ifndef IBP_SLICE_ONE_ENTRY
#define IBP_SLICE_ONE_ENTRY 1
#endif

// Word k (a constant after unrolling) of a 16-byte vector of WB-byte words, into acc (zeroed).
template <int WB>
__device__ __forceinline__ void vec_put(uint4& acc, ibp_u32 k, typename Word<WB>::R word) {
    if (WB == 8) {
        const ibp_u32 lo = (ibp_u32)word, hi = (ibp_u32)((ibp_u64)word >> 32);
        if (k == 0) { acc.x = lo; acc.y = hi; } else { acc.z = lo; acc.w = hi; }
        return;
    }
    const ibp_u32 per = WB < 4 ? 4 / WB : 1u;  // words per 32-bit component (WB == 8 returned above)
    const ibp_u32 v = (ibp_u32)word << (8 * WB * (k % per));
    switch (k / per) {
        case 0: acc.x |= v; break;
        case 1: acc.y |= v; break;
        case 2: acc.z |= v; break;
        default: acc.w |= v; break;
    }
}

// IBP_SLICE_BITBUF: for words of up to 32 bits a lane reads its slice's fields from a window of its
// stream held in registers (SliceWindow), moved forward a word at a time as fields are consumed,
// instead of two shared-memory words per field (sbits32): a row of 32 16-bit words then takes about
// one shared-memory read per 32 bits of its record, not 64 (GPU_NOTES entry 54, where this build is
// "=2"). 64-bit words keep sbits32: a three-word window for them measured slower (V bf16 A=1 0.487
// -> 0.477; bench/results/gpu-2026-12-04/tried-slice-window-64.diff). 0: sbits32 for every width.
#ifndef IBP_SLICE_BITBUF
#define IBP_SLICE_BITBUF 1
#endif

// A lane's window on the shared-memory stream w (words of up to 32 bits, so fields of up to 32 bits):
// words at/32 and at/32 + 1, at a multiple of 32 with at <= the next field's start < at + 32. The
// next field's start is kept at or before the record's end (base + min(pos, total_bits)), so the
// window reads at most 7 bytes past the record: inside the 16 bytes the tile-fit check leaves after
// a tile's records, as sbits32's reads of the same fields are.
struct SliceWindow {
    ibp_u32 lo, hi;
    ibp_u32 at;
    // Opens the window on stream bit s.
    __device__ __forceinline__ void open(const ibp_u32* w, ibp_u32 s) {
        at = s & ~31u;
        lo = w[at >> 5];
        hi = w[(at >> 5) + 1];
    }
    // The 32 stream bits from stream bit s (at <= s < at + 32).
    __device__ __forceinline__ ibp_u32 bits(ibp_u32 s) const { return __funnelshift_r(lo, hi, s - at); }
    // Moves the window on to stream bit s, at <= s < at + 64 (one field past the window's).
    __device__ __forceinline__ void advance(const ibp_u32* w, ibp_u32 s) {
        if (s - at >= 32u) {
            lo = hi;
            at += 32;
            hi = w[(at >> 5) + 1];
        }
    }
};

// Whether the thread path of WB-byte words reads through a SliceWindow (IBP_SLICE_BITBUF).
template <int WB>
__device__ __forceinline__ constexpr bool slice_window_on() {
    return IBP_SLICE_BITBUF && WB < 8;
}

// One word of a lane's slice: the field at stream bit base + pos (read at the record's end when a
// corrupt record puts it past it), p its participation bit, entry j of the row's group; advances
// pos by the field's length (and, IBP_SLICE_BITBUF, the window win, open on bit base + min(pos,
// total_bits)).
template <int WB, bool MULTI>
__device__ __forceinline__ typename Word<WB>::R slice_word(const ibp_u32* w, ibp_u32 base, ibp_u32& pos,
                                                           ibp_u32 total_bits, bool p, ibp_u32 j,
                                                           const uint4* tm_g, const uint4* ti_g,
                                                           SliceWindow& win) {
    const uint4 tm = tm_g[j], ti = ti_g[j];
    const ibp_u32 s = base + min(pos, total_bits);
    typename Word<WB>::R word;
    if (slice_window_on<WB>()) {
        word = table_word_bits<WB, MULTI>(win.bits(s), 0u, p, tm, ti);  // (W <= 32: no second piece)
    } else {
        word = table_word<WB, MULTI>(w, s, p, tm, ti);
    }
    pos += field_bits(p, ti, (ibp_u32)(WB * 8));
    if (slice_window_on<WB>()) win.advance(w, base + min(pos, total_bits));
    return word;
}

// Participation bits of words j .. j + 31 of a coded record at stream bit base (none past the
// record's end: a corrupt record with fewer than n bits has them read at its end; its T fails it).
__device__ __forceinline__ ibp_u32 slice_pbits(const ibp_u32* w, ibp_u32 base, ibp_u32 j, ibp_u32 total_bits) {
    return sbits32(w, base + min(j, total_bits));
}

// A LONG slice's participation bits at word j of a slice starting at word jb: those of words
// j .. j + 31 where j starts a new 32 (j != jb), else pbits as they are (none for a raw record).
__device__ __forceinline__ ibp_u32 slice_pbits_at(ibp_u32 pbits, const ibp_u32* w, ibp_u32 base, ibp_u32 jb, ibp_u32 j,
                                                  ibp_u32 total_bits, bool coded) {
    if (j == jb || ((j - jb) & 31u) != 0) return pbits;
    return coded ? slice_pbits(w, base, j, total_bits) : 0u;
}

// LONG false: rows of at most 32 words (the short-rows and lean kernels), their participation bits
// one 32-bit word read once per row. LONG true (the long-rows kernel, IBP_LEAN_LONG): rows of any
// number of words, each slice reading its words' participation bits 32 at a time (slice_pbits), and
// slices of whole 16-byte output vectors where the row allows. ONE: every position of every group
// has the same table entry (t.one_entry, IBP_SLICE_ONE_ENTRY), held in registers, so no word reads
// the table.
template <int WB, bool MULTI, bool LONG = false, bool ONE = false>
__device__ __forceinline__ void slice_tile_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
    typedef typename Word<WB>::T Stored;
    const uint4 tm_one = ONE ? t.tmask[0] : make_uint4(0u, 0u, 0u, 0u), ti_one = ONE ? t.tinfo[0] : make_uint4(0u, 0u, 0u, 0u);
    const ibp_u32 W = WB * 8;
    const ibp_u32 n = t.n;  // LONG: any; else 1 .. 32 (IBP_LEAN_THREAD_ROWS, IBP_LEAN_THREAD_BYTES); row_bytes == n * WB
    const ibp_u32 row_bytes = prm.row_bytes;
    const ibp_u32 first_words = n >= 32 ? ~0u : (1u << n) - 1u;
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    ibp_u8* const out0 = prm.out + t.k0 * (ibp_u64)row_bytes;
    const ibp_u32 per_vec = 16 / WB;
    // Slices: K = 2^k_log2 lanes per row, m words each (the last ones may hold fewer or none); LONG:
    // m a multiple of a 16-byte vector's words where the row is whole vectors.
    const ibp_u32 lane_bytes = LONG ? IBP_LONG_LANE_BYTES : IBP_LEAN_LANE_BYTES;
    const ibp_u32 want = (row_bytes + lane_bytes - 1) / lane_bytes;
    const ibp_u32 cap = min(n, 32u);
    ibp_u32 k_log2 = 0;
    while ((1u << k_log2) < want && (1u << k_log2) < cap) k_log2++;
    const ibp_u32 K = 1u << k_log2;
    ibp_u32 m = (n + K - 1) >> k_log2;
    if (LONG && (row_bytes & 15u) == 0) m = (m + per_vec - 1) / per_vec * per_vec;
    const ibp_u32 seg = lane >> k_log2, s = lane & (K - 1), per_pass = 32u >> k_log2;
    const ibp_u32 jb = min(s * m, n), je = min(jb + m, n);
    const bool vec_out = (((m * WB) | row_bytes | (ibp_u32)(size_t)out0) & 15u) == 0;
    for (ibp_u32 row0 = warp * per_pass; row0 < t.nrows; row0 += IBP_TILE_WARPS * per_pass) {
        const ibp_u32 row = row0 + seg;
        const bool valid = row < t.nrows;
        const ibp_u32 off = valid ? t.offsets[row] : 0u;
        const ibp_u32 len = valid ? t.offsets[row + 1] - off : 0u;
        const bool raw = valid && len == t.raw_padded;
        const ibp_u32 base = rec0 + off * 8, total_bits = len * 8;
        ibp_u32 code = IBP_STATUS_OK, g = 0;
        if (valid && !raw && t.G > 1) {
            const ibp_u64 at = t.groups + t.r0 + row;
            if (at >= prm.meta_size) code = IBP_STATUS_LAYOUT;
            else { g = prm.meta[at]; if (g >= t.G) { code = IBP_STATUS_GROUP_ID; g = 0; } }
        }
        // A raw record: every word non-participating, fields from bit 0. (LONG: the bits of the
        // slice's words jb .. jb + 31, then of each next 32.)
        const bool coded = !(raw || !valid);
        ibp_u32 pbits = raw || !valid ? 0u : LONG ? slice_pbits(w, base, jb, total_bits) : sbits32(w, base) & first_words;
        const uint4* const tm_g = t.tmask + g * n;
        const uint4* const ti_g = t.tinfo + g * n;
        // This slice's bits, the ones before it (scan within the segment), the row's T.
        ibp_u32 bits = 0;
        if (K > 1) {
            if (LONG) {
                ibp_u32 pb = pbits;
                for (ibp_u32 j = jb; j < je; j++) {
                    pb = slice_pbits_at(pb, w, base, jb, j, total_bits, coded);
                    bits += field_bits((pb >> ((j - jb) & 31u)) & 1u, ti_g[j], W);
                }
            } else {
                for (ibp_u32 j = jb; j < je; j++) bits += field_bits((pbits >> j) & 1u, ti_g[j], W);
            }
        }
        ibp_u32 x = bits;
        for (ibp_u32 d = 1; d < K; d <<= 1) {
            const ibp_u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (s >= d) x += y;
        }
        const ibp_u32 start = raw ? 0u : n;
        ibp_u32 pos = start + x - bits;
        if (valid) {
            ibp_u8* const dst = out0 + row * (ibp_u64)row_bytes;
            if (IBP_SLICE_RAW_VECS && raw && vec_out && ((base >> 3) & 15u) == 0) {
                // Bytes j*WB .. of a raw record are the row's: the slice's vectors as they are.
                const uint4* const from = (const uint4*)((const ibp_u8*)w + (base >> 3));
                for (ibp_u32 v = jb * WB / 16; v < je * WB / 16; v++) ((uint4*)dst)[v] = from[v];
                pos += (je - jb) * W;
            } else {
                SliceWindow win;
                if (slice_window_on<WB>()) win.open(w, base + min(pos, total_bits));
                if (vec_out) {
                    for (ibp_u32 j0 = jb; j0 < je; j0 += per_vec) {
                        // (LONG: j0 - jb is a multiple of per_vec, which divides 32.)
                        if (LONG) pbits = slice_pbits_at(pbits, w, base, jb, j0, total_bits, coded);
                        const ibp_u32 pj = LONG ? (j0 - jb) & 31u : j0;  // bit of word j0 in pbits
                        uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
                        for (ibp_u32 k = 0; k < per_vec; k++)
                            vec_put<WB>(acc, k, slice_word<WB, MULTI>(w, base, pos, total_bits, (pbits >> (pj + k)) & 1u,
                                                                      ONE ? 0u : j0 + k, ONE ? &tm_one : tm_g, ONE ? &ti_one : ti_g, win));
                        *(uint4*)(dst + j0 * WB) = acc;
                    }
                } else {
                    for (ibp_u32 j = jb; j < je; j++) {
                        if (LONG) pbits = slice_pbits_at(pbits, w, base, jb, j, total_bits, coded);
                        const ibp_u32 pj = LONG ? (j - jb) & 31u : j;
                        ((Stored*)dst)[j] = (Stored)slice_word<WB, MULTI>(w, base, pos, total_bits, (pbits >> pj) & 1u,
                                                                          ONE ? 0u : j, ONE ? &tm_one : tm_g, ONE ? &ti_one : ti_g, win);
                    }
                }
            }
        }
        // T (a raw record: row_bytes * 8): the end of the segment's last slice.
        const ibp_u32 T = K > 1 ? start + __shfl_sync(FULL_MASK, x, (seg << k_log2) + K - 1) : pos;
        // Record length rule L == align_up(ceil(T/8), A) (T > 8L fails it too), then padding bits
        // T .. 8L-1 zero.
        if (valid && s == 0) {
            if (code == IBP_STATUS_OK) {
                if (!raw && (T > total_bits || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len)) code = IBP_STATUS_ROW_LENGTH;
                else if (stream_bits_set(w, base + T, base + total_bits)) code = IBP_STATUS_PADDING;
            }
            if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
        }
    }
}

// ---- long rows a lane per row (long-rows kernel, IBP_LONG_LANE_ROWS) ----------------------------
// Lane l of a warp decodes row g * 32 + l of the tile (a row group g of 32 rows), a 16-byte output
// vector at a time: all lanes stand at the same word j, so with one group the table entry is the
// warp's and the run forms are the same in every lane; only the participation bit differs between
// lanes. Where the host asks for it (prm.row_segments > 1: ranges of few tiles per SM), a tile's
// rows are cut into S segments of consecutive vectors: S is the most (up to row_segments and
// IBP_LONG_SEGMENTS) that gives each of the block's warps a (row group, segment) unit, so a tile of
// few rows still keeps every warp decoding; a segment's first field follows the fields of the words
// before it (lane_prefix_bits). A vector whose positions have at most four runs of free bits per half is
// decoded with no branch (both deposit forms computed where a 3-4 run position is among them,
// IBP_LONG_LANE_FLAT), so its words are scheduled together; each field is read with sbits32 at its
// stream bit, kept at or before the record's end. Rows of whole 16-byte vectors of words of up to
// 32 bits; others take slice_tile_rows. Same checks, order and codes as slice_tile_rows, made by the
// row's last segment. (GPU_NOTES entry 62: Fashion-MNIST 0.23 -> 0.31 of the D2D copy; entry 65:
// segments.)
#ifndef IBP_LONG_LANE_ROWS
#define IBP_LONG_LANE_ROWS 1
#endif
#ifndef IBP_LONG_LANE_FLAT
#define IBP_LONG_LANE_FLAT 1
#endif
// The most segments a row is cut into (1: a lane walks its whole row, as in entry 62, whatever the
// host asks), and the fewest 16-byte output vectors a segment holds.
#ifndef IBP_LONG_SEGMENTS
#define IBP_LONG_SEGMENTS 8
#endif
#ifndef IBP_LONG_SEGMENT_VECS
#define IBP_LONG_SEGMENT_VECS 4
#endif
// IBP_LONG_WIDE_READS=1: words of 8 or 16 bits take one 32-bit stream read per 4 or 2 consecutive
// words, whose fields fill at most 32 bits together, instead of a read per word: half the long
// kernel's stream loads on Fashion-MNIST. Adopted (GPU_NOTES entry 68: 0.336 -> 0.345-0.351 on the
// 256 MiB entries, 0.39-0.47 -> 0.45-0.52 on 8 MiB ones, both runs); 0 keeps a read per word.
#ifndef IBP_LONG_WIDE_READS
#define IBP_LONG_WIDE_READS 1
#endif

// IBP_LONG_LEAN_VECS=1: in the long-rows kernel, a 16-byte vector of 8- or 16-bit words whose
// positions all have at most two runs of free bits (43 of Fashion-MNIST's 49 vectors) decodes
// through lean_vector: no branch per word, the vector's participation bits shifted once, and each
// 32-bit read's words packed with byte permutes. The flat path it replaces takes 342 SASS
// instructions per such vector of 16-bit words (sm_90, not counting the deposit of 3+ runs it
// branches around per word); lean_vector about a third of that. Adopted (GPU_NOTES entries 72-73,
// on an H100: Fashion-MNIST +1-4 % and +1-2 %, every 256 MiB entry in four runs over two
// sessions; every GPU test, vector and sanitizer passed with it); 0: the flat path for every
// vector. (Vectors with 3-4 run positions too, sh1 and F kept apart in the table, and a stream
// window in registers gained nothing more and were removed.)
#ifndef IBP_LONG_LEAN_VECS
#define IBP_LONG_LEAN_VECS 1
#endif

// IBP_LONG_DIAG: a diagnostic build of the long-rows kernel, never correct output, for timing where
// its time goes (the bench must run with IBP_BENCH_UNCHECKED=1, which skips its output checks).
// 1 (no stores): each row's vectors are decoded as always but folded into one 16-byte value,
//   stored once per row (so the decode stays live); the checks run as always.
// 2 (no decode): each vector stored is a value made of its row and position, with no record or
//   table read; the tile is still loaded and its offsets scanned; no record checks.
// 3 (neither): only the tile loads, the offsets and one 16-byte store per row.
// 0: the kernel as it is.
#ifndef IBP_LONG_DIAG
#define IBP_LONG_DIAG 0
#endif
// IBP_LONG_DIAG 1: the fold of a row's vectors into the one value stored for it.
__device__ __forceinline__ uint4 xor_vec(uint4 a, uint4 b) { return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w); }

// One 16-byte vector of WB-byte words (WB 1 or 2) of a lane's row, none of whose positions has
// IBP_TILE_MANY or IBP_TILE_MULTI: its fields start at stream bit base + pos (pos advanced past
// them), read 32 bits at a time at or before the record's end (end, as the flat path reads); pv
// holds the vector's participation bits from bit 0, tm/ti the table entries of its first
// position. Each read holds the fields of 4 / WB consecutive words (at most 32 bits
// together), each word's after the one before; a participating word is its runs deposited with its
// Bitval, any other word its W stream bits; one 32-bit component of the output per read.
template <int WB>
__device__ __forceinline__ uint4 lean_vector(const ibp_u32* w, ibp_u32 base, ibp_u32 end, ibp_u32& pos, ibp_u32 pv,
                                             const uint4* tm, const uint4* ti) {
    static_assert(WB == 1 || WB == 2, "lean_vector takes 8- and 16-bit words");
    constexpr ibp_u32 W = WB * 8, per_read = 4 / WB;
    ibp_u32 out[4];
#pragma unroll
    for (ibp_u32 r = 0; r < 4; r++) {
        ibp_u32 x = sbits32(w, min(base + pos, end));
        ibp_u32 word[per_read];
#pragma unroll
        for (ibp_u32 q = 0; q < per_read; q++) {
            const ibp_u32 k = r * per_read + q;
            const bool p = (int)(pv << (31u - k)) < 0;
            const uint4 m = tm[k], i = ti[k];
            const ibp_u32 dep = (__funnelshift_l(0u, x, i.z) & m.x) | (__funnelshift_l(0u, x, i.z >> 8) & m.y) | i.x;
            word[q] = p ? dep : x;  // the low W bits count (packed below)
            const ibp_u32 len = p ? entry_free_bits(i) : W;
            pos += len;
            if (q + 1 < per_read) x >>= len;  // len <= W < 32 here
        }
        if (WB == 2) out[r] = __byte_perm(word[0], word[1], 0x5410);
        else out[r] = __byte_perm(__byte_perm(word[0], word[per_read > 1 ? 1 : 0], 0x0040),
                                  __byte_perm(word[per_read > 2 ? 2 : 0], word[per_read > 3 ? 3 : 0], 0x0040), 0x5410);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

// Stream bits the fields of words 0 .. jb-1 of a coded record at stream bit base take (jb the same
// in every lane of the warp, which all call this). One table for the warp (same_table): lane k holds
// the field length F of position j0 + k, ballots give F's bit planes, and a 32-word block's fields
// sum to the planes' popcounts over the participating words plus W per other word; else each lane
// sums its own group's lengths a word at a time. Participation bits are read as the decoder reads
// them (none past the record's end).
template <int WB>
__device__ __forceinline__ ibp_u32 lane_prefix_bits(const ibp_u32* w, ibp_u32 base, ibp_u32 total_bits, const uint4* ti_g,
                                                    bool same_table, ibp_u32 jb, ibp_u32 lane) {
    constexpr ibp_u32 W = WB * 8;
    constexpr ibp_u32 planes = WB == 1 ? 4 : WB == 2 ? 5 : 6;  // F <= W
    ibp_u32 bits = 0;
    for (ibp_u32 j0 = 0; j0 < jb; j0 += 32) {
        const ibp_u32 cnt = min(32u, jb - j0);
        const ibp_u32 in = cnt >= 32 ? ~0u : (1u << cnt) - 1u;
        const ibp_u32 pw = sbits32(w, base + min(j0, total_bits)) & in;
        bits += W * (cnt - (ibp_u32)__popc(pw));
        if (same_table) {
            const ibp_u32 f = lane < cnt ? entry_free_bits(ti_g[j0 + lane]) : 0u;
#pragma unroll
            for (ibp_u32 b = 0; b < planes; b++) bits += (ibp_u32)__popc(pw & __ballot_sync(FULL_MASK, (f >> b) & 1u)) << b;
        } else {
            for (ibp_u32 k = 0; k < cnt; k++)
                if ((pw >> k) & 1u) bits += entry_free_bits(ti_g[j0 + k]);
        }
    }
    return bits;
}

template <int WB, bool MULTI>
__device__ __forceinline__ void lane_tile_rows(const IbpGatherParams& prm, const TileCtx& t, ibp_u32 warp, ibp_u32 lane) {
    const ibp_u32 W = WB * 8;
    const ibp_u32 wlow = WB >= 4 ? ~0u : (1u << W) - 1u;  // a non-participating word: all W bits
    const ibp_u32 n = t.n;  // row_bytes == n * WB, a multiple of 16 (the caller checks)
    const ibp_u32 row_bytes = prm.row_bytes;
    const ibp_u32 a_mask = (1u << t.align_log2) - 1u;
    const ibp_u32* const w = (const ibp_u32*)(t.tile - IBP_TILE_GUARD);
    const ibp_u32 rec0 = (IBP_TILE_GUARD + t.skew) * 8;
    ibp_u8* const out0 = prm.out + t.k0 * (ibp_u64)row_bytes;
    constexpr ibp_u32 per_vec = 16 / WB;
    const ibp_u32 nv = n / per_vec;  // 16-byte vectors per row
    const ibp_u32 row_groups = (t.nrows + 31) / 32;
    const ibp_u32 S = max(1u, min(min(min(prm.row_segments, (ibp_u32)IBP_LONG_SEGMENTS), IBP_TILE_WARPS / max(row_groups, 1u)),
                                  nv / IBP_LONG_SEGMENT_VECS));
    for (ibp_u32 unit = warp; unit < row_groups * S; unit += IBP_TILE_WARPS) {
        const ibp_u32 group = unit / S, seg = unit - group * S;
        const ibp_u32 jb = seg * nv / S * per_vec, je = (seg + 1) * nv / S * per_vec;  // the segment's words
        const bool last = seg + 1 == S;
        const ibp_u32 row = group * 32 + lane;
        const bool valid = row < t.nrows;
        const ibp_u32 off = valid ? t.offsets[row] : 0u;
        const ibp_u32 len = valid ? t.offsets[row + 1] - off : 0u;
        const bool raw = valid && len == t.raw_padded;
        const ibp_u32 base = rec0 + off * 8, total_bits = len * 8, end = base + total_bits;
        ibp_u32 code = IBP_STATUS_OK, g = 0;
        if (valid && !raw && t.G > 1) {
            const ibp_u64 at = t.groups + t.r0 + row;
            if (at >= prm.meta_size) code = IBP_STATUS_LAYOUT;
            else { g = prm.meta[at]; if (g >= t.G) { code = IBP_STATUS_GROUP_ID; g = 0; } }
        }
        const bool coded = valid && !raw;
        const uint4* const tm_g = t.tmask + g * n;
        const uint4* const ti_g = t.tinfo + g * n;
        // Stream bits of the fields before the segment (every lane of the warp takes part).
        const ibp_u32 before = jb == 0 ? 0u : lane_prefix_bits<WB>(w, base, total_bits, ti_g, t.G <= 1, jb, lane);
        // T: stream bits the record's fields use (a raw record: row_bytes * 8, its words from bit 0).
        ibp_u32 T = raw ? row_bytes * 8 : 0u;
        ibp_u8* const dst = out0 + row * (ibp_u64)row_bytes;
        if (valid && raw && ((base >> 3) & 15u) == 0) {
            // Bytes of a raw record are the row's: copied as 16-byte vectors.
            const uint4* const from = (const uint4*)((const ibp_u8*)w + (base >> 3));
            if (IBP_LONG_DIAG == 1 || IBP_LONG_DIAG == 3) {
                uint4 sink = make_uint4(0u, 0u, 0u, 0u);
                for (ibp_u32 v = jb / per_vec; v < je / per_vec && IBP_LONG_DIAG == 1; v++)
                    sink = xor_vec(sink, from[v]);
                ((uint4*)dst)[jb / per_vec] = sink;
            } else {
                for (ibp_u32 v = jb / per_vec; v < je / per_vec; v++) ((uint4*)dst)[v] = from[v];
            }
        } else if (valid) {
            ibp_u32 pos = coded ? n + before : jb * W;  // stream bit of the next field, from the record's start
            ibp_u32 pw = coded ? sbits32(w, base + min(jb & ~31u, total_bits)) : 0u;  // participation bits of words j0 & ~31 ..
            uint4 sink = make_uint4(0u, 0u, 0u, 0u);  // IBP_LONG_DIAG 1 and 3: the one value stored per row
            for (ibp_u32 j0 = jb; j0 < je; j0 += per_vec) {
                if (IBP_LONG_DIAG >= 2) {
                    if (IBP_LONG_DIAG == 2) *(uint4*)(dst + j0 * WB) = make_uint4(row, j0, base, pos);
                    continue;
                }
                if ((j0 & 31u) == 0 && j0 != jb) pw = coded ? sbits32(w, base + min(j0, total_bits)) : 0u;
                uint4 acc = make_uint4(0u, 0u, 0u, 0u);
                ibp_u32 forms = 0;  // the run-form flags of the vector's positions
#pragma unroll
                for (ibp_u32 k = 0; k < per_vec; k++) forms |= ti_g[j0 + k].w;
                const bool runs = MULTI && (forms & IBP_TILE_MULTI) != 0;  // a position of 3-4 runs
                if (IBP_LONG_LEAN_VECS && WB <= 2 && (forms & IBP_TILE_MANY) == 0 && !runs) {
                    constexpr int LW = WB <= 2 ? WB : 2;  // (WB <= 2 here; LW keeps other widths compiling)
                    acc = lean_vector<LW>(w, base, end, pos, pw >> (j0 & 31u), tm_g + j0, ti_g + j0);
                } else if (IBP_LONG_LANE_FLAT && (forms & IBP_TILE_MANY) == 0) {
#if IBP_LONG_WIDE_READS
                    // The fields of per_read words (at most 32 bits together) from one 32-bit read,
                    // each word's after the one before. (The #else branch: a read per word, as
                    // measured; kept apart so that the default build is the measured code.)
                    constexpr ibp_u32 per_read = WB < 4 ? 4 / WB : 1;
#pragma unroll
                    for (ibp_u32 k0 = 0; k0 < per_vec; k0 += per_read) {
                        ibp_u32 x = sbits32(w, min(base + pos, end));
#pragma unroll
                        for (ibp_u32 q = 0; q < per_read; q++) {
                            const ibp_u32 k = k0 + q, j = j0 + k;
                            const bool p = (pw >> ((j0 & 31u) + k)) & 1u;
                            const uint4 tm = tm_g[j], ti = ti_g[j];
                            ibp_u32 dep = (__funnelshift_l(0u, x, ti.z) & tm.x) | (__funnelshift_l(0u, x, ti.z >> 8) & tm.y);
                            if (MULTI && runs && (int)ti.w < 0) dep = deposit_runs(x, tm.x, tm.y, ti.z);
                            vec_put<WB>(acc, k, (typename Word<WB>::R)(p ? dep | ti.x : x & wlow));
                            const ibp_u32 len = field_bits(p, ti, W);  // <= W < 32 where q + 1 < per_read
                            pos += len;
                            if (q + 1 < per_read) x >>= len;
                        }
                    }
#else
#pragma unroll
                    for (ibp_u32 k = 0; k < per_vec; k++) {
                        const ibp_u32 j = j0 + k;
                        const bool p = (pw >> ((j0 & 31u) + k)) & 1u;
                        const uint4 tm = tm_g[j], ti = ti_g[j];
                        const ibp_u32 x = sbits32(w, min(base + pos, end));
                        ibp_u32 dep = (__funnelshift_l(0u, x, ti.z) & tm.x) | (__funnelshift_l(0u, x, ti.z >> 8) & tm.y);
                        if (MULTI && runs && (int)ti.w < 0) dep = deposit_runs(x, tm.x, tm.y, ti.z);
                        vec_put<WB>(acc, k, (typename Word<WB>::R)(p ? dep | ti.x : x & wlow));
                        pos += field_bits(p, ti, W);
                    }
#endif
                } else {
#pragma unroll
                    for (ibp_u32 k = 0; k < per_vec; k++) {
                        const ibp_u32 j = j0 + k;
                        const bool p = (pw >> ((j0 & 31u) + k)) & 1u;
                        const uint4 tm = tm_g[j], ti = ti_g[j];
                        vec_put<WB>(acc, k, table_word_bits<WB, MULTI>(sbits32(w, min(base + pos, end)), 0u, p, tm, ti));
                        pos += field_bits(p, ti, W);
                    }
                }
                if (IBP_LONG_DIAG == 1) sink = xor_vec(sink, acc);
                else *(uint4*)(dst + j0 * WB) = acc;
            }
            if (IBP_LONG_DIAG == 1 || IBP_LONG_DIAG == 3) *(uint4*)(dst + jb * WB) = sink;
            T = pos;
        }
        // Record length rule L == align_up(ceil(T/8), A) (T > 8L fails it too), then padding bits
        // T .. 8L-1 zero: checked by the row's last segment, which ends at the record's T.
        if (valid && last && IBP_LONG_DIAG < 2) {
            if (code == IBP_STATUS_OK) {
                if (!raw && (T > total_bits || ((((T + 7) >> 3) + a_mask) & ~a_mask) != len)) code = IBP_STATUS_ROW_LENGTH;
                else if (stream_bits_set(w, base + T, base + total_bits)) code = IBP_STATUS_PADDING;
            }
            if (code != IBP_STATUS_OK) ibp_report(prm.status, t.k0 + row, code);
        }
    }
}
