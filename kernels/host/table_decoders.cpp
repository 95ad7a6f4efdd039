// table_decoders.cpp: the tile kernel's row decoders of kernels/ibp_gather.cu, compiled for the CPU
// (cuda_host.h) and run one warp of 32 threads per record, against a scalar decoder written here
// from the spec (section 6.2) on generated records, intact and corrupted.
//
//   bash tools/kernel-host-test.sh [cases]      (g++ >= 11; no GPU, no CUDA)
//
// Checked per case: decode_table_row<W/8> (per-word tables, the path the device runs for every
// table chunk) and decode_pair_row (32-bit and 16-bit words in pairs) each return the spec decoder's
// status code, and on success its bytes. Cases cover W = 8/16/32/64, 1-130 words, 1-3 groups, A = 1..128,
// masks with one, two, three or four (per 32-bit half) and more runs of free bits per word, and each
// record once intact and several times with one bit flipped, bytes appended or cut.
#include "../ibp_status.h"
#include "cuda_host.h"

#include "../ibp_gather.cu"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

namespace {

typedef unsigned long long u64;

u64 word_mask(unsigned wb) { return wb == 8 ? ~0ull : (1ull << (8 * wb)) - 1; }

// Bits of v at the set bits of m, packed from bit 0 (pext), and the inverse (pdep).
u64 pext(u64 v, u64 m) {
    u64 r = 0;
    for (unsigned i = 0, k = 0; i < 64; i++)
        if ((m >> i) & 1) r |= ((v >> i) & 1) << k++;
    return r;
}
u64 pdep(u64 v, u64 m) {
    u64 r = 0;
    for (unsigned i = 0, k = 0; i < 64; i++)
        if ((m >> i) & 1) r |= ((v >> k++) & 1) << i;
    return r;
}

struct BitWriter {
    std::vector<ibp_u8> bytes;
    unsigned bits = 0;
    void put(u64 v, unsigned n) {
        for (unsigned i = 0; i < n; i++, bits++) {
            if (bits % 8 == 0) bytes.push_back(0);
            bytes.back() |= (ibp_u8)(((v >> i) & 1) << (bits % 8));
        }
    }
};

unsigned align_up(unsigned x, unsigned a) { return (x + a - 1) / a * a; }

// Spec 6.2: participation bits, then per word its free bits (participating) or all W bits; the record
// is align_up(ceil(T/8), A) bytes with zero padding.
std::vector<ibp_u8> encode(const std::vector<u64>& words, const u64* m, const u64* b, unsigned wb, unsigned a) {
    BitWriter out;
    const unsigned n = (unsigned)words.size();
    for (unsigned j = 0; j < n; j++) out.put((words[j] & m[j]) == b[j], 1);
    for (unsigned j = 0; j < n; j++) {
        if ((words[j] & m[j]) == b[j]) out.put(pext(words[j], ~m[j] & word_mask(wb)), __builtin_popcountll(~m[j] & word_mask(wb)));
        else out.put(words[j], 8 * wb);
    }
    out.bytes.resize(align_up((out.bits + 7) / 8, a), 0);
    return out.bytes;
}

// The spec's decoder: status code and, on success, the row's bytes.
unsigned decode_spec(const ibp_u8* rec, unsigned len, const u64* m, const u64* b, unsigned n, unsigned wb,
                     unsigned a, std::vector<ibp_u8>& row) {
    const unsigned total = len * 8, w = 8 * wb;
    auto bits = [&](unsigned at, unsigned count) {
        u64 v = 0;
        for (unsigned i = 0; i < count; i++) v |= (u64)((rec[(at + i) / 8] >> ((at + i) % 8)) & 1) << i;
        return v;
    };
    if (n > total) return IBP_STATUS_ROW_LENGTH;
    unsigned pos = n;
    row.assign((size_t)n * wb, 0);
    for (unsigned j = 0; j < n; j++) {
        const bool p = bits(j, 1);
        const u64 free_bits = ~m[j] & word_mask(wb);
        const unsigned f = p ? (unsigned)__builtin_popcountll(free_bits) : w;
        if (pos + f > total) return IBP_STATUS_ROW_LENGTH;
        const u64 v = bits(pos, f);
        const u64 word = p ? (b[j] | pdep(v, free_bits)) : v;
        for (unsigned i = 0; i < wb; i++) row[(size_t)j * wb + i] = (ibp_u8)(word >> (8 * i));
        pos += f;
    }
    if (align_up((pos + 7) / 8, a) != len) return IBP_STATUS_ROW_LENGTH;
    for (unsigned t = pos; t < total; t++)
        if (bits(t, 1)) return IBP_STATUS_PADDING;
    return IBP_STATUS_OK;
}

// A Mask word of W bits: a float-like invariant top, a zero high part, 1-4 runs of free bits per
// 32-bit half (the deposit_runs entries), a scattered pattern (mostly 5+ runs), all or none.
u64 random_mask(std::mt19937_64& rng, unsigned wb) {
    const unsigned w = 8 * wb;
    const u64 all = word_mask(wb);
    switch (rng() % 8) {
        case 0: return all;
        case 1: return 0;
        case 2: return (all << (w - 1 - rng() % (w / 2))) & all;         // top bits (sign, exponent)
        case 3: return ((all << (w / 2)) & all) | (rng() & 1);           // high half and bit 0: two runs
        case 4: return rng() & rng() & all;                              // scattered: 3+ runs
        case 6: {  // k = 1..4 runs of free bits in each 32-bit half: 2k distinct cut points
            u64 free = 0;
            const unsigned hw = w < 32 ? w : 32;
            for (unsigned h = 0; h < w; h += hw) {
                const unsigned k = 1 + rng() % 4;
                unsigned cuts[8], c = 0;
                while (c < 2 * k) {
                    const unsigned x = rng() % (hw + 1);
                    bool seen = false;
                    for (unsigned i = 0; i < c; i++) seen |= cuts[i] == x;
                    if (!seen) cuts[c++] = x;
                }
                std::sort(cuts, cuts + c);
                for (unsigned i = 0; i < k; i++) free |= ((1ull << (cuts[2 * i + 1] - cuts[2 * i])) - 1) << (h + cuts[2 * i]);
            }
            return ~free & all;
        }
        case 5: return (all >> (rng() % w)) & ~(u64)1;                   // low run below the top
        default: return ((all << (w - 1)) | ((all >> 1) & (all << (w / 4)))) & all & ~(1ull << (w / 2));
    }
}

struct Failure {
    std::string what;
};

// Runs `decode` (a device decoder, one call per lane) over the record at byte `at` of a stream buffer
// that has slack after it, as in a tile. Returns lane 0's code (checking all lanes agree) and the row.
template <class Decode>
unsigned run_device(const std::vector<ibp_u8>& rec, unsigned len, unsigned at, unsigned row_bytes,
                    std::vector<ibp_u8>& row, Decode decode) {
    std::vector<ibp_u32> stream((at + rec.size() + 64 + 3) / 4 + 2, 0);
    std::memcpy((ibp_u8*)stream.data() + at, rec.data(), rec.size());
    std::vector<u64> out_words(row_bytes / 8 + 2, 0);  // 8-byte aligned output, one row
    ibp_u8* dst = (ibp_u8*)out_words.data();
    unsigned codes[32];
    run_warp([&](unsigned lane) { codes[lane] = decode(stream.data(), at, len, dst, lane); });
    for (unsigned i = 1; i < 32; i++)
        if (codes[i] != codes[0]) throw Failure{"lanes return different codes"};
    row.assign(dst, dst + row_bytes);
    return codes[0];
}

struct Tables {
    std::vector<uint4> tmask, tinfo;
    bool multi = false;
};

}  // namespace

int main(int argc, char** argv) {
    const unsigned cases = argc > 1 ? (unsigned)std::atoi(argv[1]) : 600;
    std::mt19937_64 rng(0x1b9u);
    unsigned checked = 0, decoded = 0, rejected = 0, by_kind[2] = {0, 0};
    for (unsigned c = 0; c < cases; c++) {
        const unsigned wb = 1u << (rng() % 4), w = 8 * wb;
        const unsigned n = 1 + (unsigned)(rng() % (rng() % 3 == 0 ? 130 : 40));
        const unsigned G = 1 + (unsigned)(rng() % 3), g = (unsigned)(rng() % G);
        const unsigned a = 1u << (rng() % 8);
        const unsigned row_bytes = n * wb;
        // Mask/Bitval of every group.
        std::vector<u64> m((size_t)G * n), b((size_t)G * n);
        for (size_t i = 0; i < m.size(); i++) {
            m[i] = random_mask(rng, wb);
            b[i] = rng() & m[i];
        }
        // Per-word tables (as ibp_build_tables / build_table make them) and pair tables of 32-bit and
        // 16-bit words (build_pair_table).
        Tables per_word, packed;
        for (size_t i = 0; i < m.size(); i++) {
            uint4 tm, ti;
            switch (wb) {
                case 1: table_entry<1>(m[i], b[i], tm, ti); break;
                case 2: table_entry<2>(m[i], b[i], tm, ti); break;
                case 4: table_entry<4>(m[i], b[i], tm, ti); break;
                default: table_entry<8>(m[i], b[i], tm, ti); break;
            }
            per_word.tmask.push_back(tm);
            per_word.tinfo.push_back(ti);
        }
        const unsigned per_group = wb == 4 || wb == 2 ? (n + 1) / 2 : 0;
        const u64 above = wb == 2 ? 0xffff0000ull : 0ull;  // a 16-bit word's half: upper bits invariant zeros
        for (unsigned gg = 0; gg < G && per_group; gg++)
            for (unsigned k = 0; k < per_group; k++) {
                uint4 tm, ti;
                // As build_pair_table: the two words side by side as one 64-bit word, a half each.
                const size_t lo = (size_t)gg * n + 2 * k;
                const bool has_hi = 2 * k + 1 < n;
                table_entry<8>((m[lo] | above) | ((has_hi ? m[lo + 1] | above : 0xffffffffull) << 32),
                               b[lo] | ((has_hi ? b[lo + 1] : 0ull) << 32), tm, ti);
                packed.tmask.push_back(tm);
                packed.tinfo.push_back(ti);
                packed.multi |= (ti.w & IBP_TILE_MULTI) != 0;
            }
        // A row of group g: most words match Mask/Bitval (participate), the others are random.
        const unsigned match_pct = (unsigned)(rng() % 101);
        std::vector<u64> words(n);
        for (unsigned j = 0; j < n; j++) {
            const u64 mj = m[(size_t)g * n + j], bj = b[(size_t)g * n + j];
            words[j] = (rng() % 100 < match_pct) ? (bj | (rng() & ~mj & word_mask(wb))) : (rng() & word_mask(wb));
        }
        const std::vector<ibp_u8> record = encode(words, &m[(size_t)g * n], &b[(size_t)g * n], wb, a);
        // The record intact, then corrupted: one bit flipped, A bytes appended, A bytes cut.
        for (unsigned variant = 0; variant < 6; variant++) {
            std::vector<ibp_u8> rec = record;
            if (variant >= 1 && variant <= 3) rec[rng() % rec.size()] ^= (ibp_u8)(1u << (rng() % 8));
            if (variant == 4) rec.insert(rec.end(), a, (ibp_u8)(rng() % 2 ? 0 : 0x80));
            if (variant == 5 && rec.size() > a) rec.erase(rec.end() - a, rec.end());
            const unsigned len = (unsigned)rec.size();
            std::vector<ibp_u8> want, got;
            const unsigned want_code = decode_spec(rec.data(), len, &m[(size_t)g * n], &b[(size_t)g * n], n, wb, a, want);
            if (variant == 0 && (want_code != IBP_STATUS_OK)) {
                std::fprintf(stderr, "case %u: the spec decoder rejects the encoder's record (code %u)\n", c, want_code);
                return 1;
            }
            const unsigned at = 16 + (unsigned)(rng() % 16);  // IBP_TILE_GUARD + skew
            const unsigned align_log2 = (unsigned)__builtin_ctz(a);
            auto check = [&](const char* name, unsigned code) {
                if (code != want_code || (code == IBP_STATUS_OK && got != want)) {
                    std::fprintf(stderr,
                                 "case %u variant %u (%s): W=%u n=%u G=%u g=%u A=%u len=%u: code %u, spec %u%s\n", c,
                                 variant, name, w, n, G, g, a, len, code, want_code,
                                 code == want_code ? " (bytes differ)" : "");
                    std::exit(1);
                }
                checked++;
            };
            try {
                const uint4* tm = per_word.tmask.data() + (size_t)g * n;
                const uint4* ti = per_word.tinfo.data() + (size_t)g * n;
                unsigned code = run_device(rec, len, at, row_bytes, got, [&](const ibp_u32* s, unsigned at_, unsigned l, ibp_u8* dst, unsigned lane) {
                    switch (wb) {
                        case 1: return decode_table_row<1>(s, at_, l, dst, tm, ti, n, true, row_bytes, align_log2, lane);
                        case 2: return decode_table_row<2>(s, at_, l, dst, tm, ti, n, true, row_bytes, align_log2, lane);
                        case 4: return decode_table_row<4>(s, at_, l, dst, tm, ti, n, true, row_bytes, align_log2, lane);
                        default: return decode_table_row<8>(s, at_, l, dst, tm, ti, n, true, row_bytes, align_log2, lane);
                    }
                });
                check("decode_table_row", code);
                by_kind[0]++;
                if (per_group) {
                    const Tables& t = packed;
                    const uint4* ptm = t.tmask.data() + (size_t)g * per_group;
                    const uint4* pti = t.tinfo.data() + (size_t)g * per_group;
                    code = run_device(rec, len, at, row_bytes, got, [&](const ibp_u32* s, unsigned at_, unsigned l, ibp_u8* dst, unsigned lane) {
                        if (wb == 2)
                            return t.multi ? decode_pair_row<true, 16>(s, at_, l, dst, ptm, pti, n, align_log2, lane)
                                           : decode_pair_row<false, 16>(s, at_, l, dst, ptm, pti, n, align_log2, lane);
                        return t.multi ? decode_pair_row<true, 32>(s, at_, l, dst, ptm, pti, n, align_log2, lane)
                                       : decode_pair_row<false, 32>(s, at_, l, dst, ptm, pti, n, align_log2, lane);
                    });
                    check("decode_pair_row", code);
                    by_kind[1]++;
                }
            } catch (const Failure& f) {
                std::fprintf(stderr, "case %u variant %u: %s\n", c, variant, f.what.c_str());
                return 1;
            }
            (want_code == IBP_STATUS_OK ? decoded : rejected)++;
        }
    }
    std::printf("table decoders on the CPU: %u checks passed (%u records decoded, %u rejected with the spec's code); "
                "decode_table_row %u, decode_pair_row %u\n",
                checked, decoded, rejected, by_kind[0], by_kind[1]);
    return 0;
}
