// ibp_status.h: status codes and the chunk descriptor shared by every IBP kernel.
//
// Rust twin: crates/ibp-gpu/src/status.rs (codes) and crates/ibp-gpu/src/layout.rs (`ChunkDesc`).
// A CPU test parses this file and checks every name and value against the Rust constants.
// Plain C: no includes, literal constants only.
#ifndef IBP_STATUS_H
#define IBP_STATUS_H

typedef unsigned long long ibp_u64;
typedef unsigned int ibp_u32;
typedef unsigned short ibp_u16;
typedef unsigned char ibp_u8;

// Status codes written by kernels (never traps, never asserts).
#define IBP_STATUS_OK 0
#define IBP_STATUS_ROW_INDEX 1     // requested row >= entry rows, or row index structure out of range
#define IBP_STATUS_LAYOUT 2        // record offset/length outside the chunk's payload or buffer
#define IBP_STATUS_ROW_LENGTH 3    // coded row: record length differs from align_up(ceil(T/8), A)
#define IBP_STATUS_PADDING 4       // non-zero padding bits or bytes in a record
#define IBP_STATUS_GROUP_ID 5      // group id >= group count

// The status word is one u64, zero when no failure was seen (so a memset clears it), else the
// bitwise NOT of (request_index << 8) | code, kept at the maximum with atomicMax: the lowest failing
// request index (then the lowest code) is the one reported.
#define IBP_STATUS_CLEAR 0ull

// A kernel's `status` parameter points to two u64s: [IBP_STATUS_WORD] the status word above, and
// [IBP_STATUS_FLAG] the address (0: none) of a u32 the host can read without a copy (page-locked
// host memory mapped for the device), set to 1 by every failure report. A launch that failed
// nowhere leaves the flag 0, so the host learns of success without reading device memory.
#define IBP_STATUS_WORD 0
#define IBP_STATUS_FLAG 1

// A row span (IbpGatherParams::row_spans): offset in the low 40 bits, length in the high 24.
#define IBP_SPAN_OFFSET_MASK 0xffffffffffull
#define IBP_SPAN_LENGTH_SHIFT 40

// One chunk of a loaded entry (80 bytes, little-endian, 8-byte aligned).
struct IbpChunk {
    ibp_u64 first_row;       // entry row index of the chunk's first row
    ibp_u64 payload_offset;  // byte offset of the chunk's payload in the payload buffer
    ibp_u64 payload_len;     // bytes of row records
    ibp_u64 masks_offset;    // byte offset of Mask words (G*n words of W/8 bytes) in the meta buffer;
                             // Bitval words follow immediately
    ibp_u64 lengths_offset;  // byte offset of the stored row lengths (length_bytes each) in meta
    ibp_u64 groups_offset;   // byte offset of the group ids (1 byte each) in meta; unused when G == 1
    ibp_u64 anchors_index;   // index in anchors[] of the payload offset of the chunk's row 0
    ibp_u32 row_count;       // rows in the chunk
    ibp_u32 words_per_row;   // n
    ibp_u32 raw_padded;      // align_up(row_bytes, A)
    ibp_u32 length_base;     // added to every stored row length
    ibp_u8 word_bytes;       // W / 8
    ibp_u8 align_log2;       // log2(A)
    ibp_u8 length_bytes;     // 1, 2 or 4
    ibp_u8 reserved0;
    ibp_u16 group_count;     // G
    ibp_u16 reserved1;
};

// Kernel parameters of ibp_gather (passed by value; 152 bytes: 16 eight-byte fields, 6 u32).
struct IbpGatherParams {
    const ibp_u8* payload;   // chunk payloads (device memory or mapped pinned host memory)
    ibp_u64 payload_size;    // readable bytes at payload
    const IbpChunk* chunks;  // chunk descriptors, sorted by first_row
    const ibp_u8* meta;      // masks, bitvals, group ids, row lengths
    ibp_u64 meta_size;       // readable bytes at meta
    const ibp_u64* anchors;  // payload offset (within its chunk) of every 32nd row of each chunk
    ibp_u64 anchor_count;
    ibp_u64 entry_rows;      // rows of the entry
    const ibp_u64* rows;     // requested entry rows, or null for rows first_row .. first_row+count-1
    ibp_u64 first_row;
    ibp_u64 count;           // rows to produce
    ibp_u8* out;             // count * row_bytes bytes
    ibp_u64* status;         // the status block: word and host-visible flag (see above)
    const ibp_u8* tables;    // per-position decode tables (ibp_gather.cu) of the chunks that have one
    const ibp_u64* table_offsets;  // per chunk: byte offset of its table in tables, or ~0; null: none
    const ibp_u64* row_spans;  // null, or per entry row (entry_rows of them): its record's offset within
                               // its chunk's payload (bits 0-39) and length (bits 40-63), the
                               // chunk found by division (chunk_rows) or by binary search
    ibp_u32 chunk_count;
    ibp_u32 row_bytes;
    ibp_u32 stage_bytes;     // shared-memory staging bytes per warp (multiple of 16)
    ibp_u32 tables_size;     // bytes at tables (0 when null)
    ibp_u32 chunk_rows;      // non-zero: chunk c starts at entry row c * chunk_rows (every chunk but the
                             // last has chunk_rows rows, entry_rows <= 2^32); 0: found by binary search
    ibp_u32 row_segments;    // tile kernels: the most segments the long-rows kernel cuts each row of a
                             // tile into (0 or 1: whole rows); other kernels ignore it
};

#endif
