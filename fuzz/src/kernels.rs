//! Property of the `kernels` target: the GPU decoder's kernels, compiled for the CPU and run there
//! (ibp-gpu feature `host-kernels`), decode a container exactly when the CPU reference decoder does,
//! to the same bytes; their ways through each entry (the tile kernel it takes, the general tile
//! kernel, `ibp_gather` of every row, and `ibp_gather_sparse` of every row where the entry has sparse
//! tables) agree; nothing panics. Kept out of `props` so that the
//! workspace's ordinary tests, which include `props`, do not build the kernels (the host_kernels test
//! of ibp-gpu replays this target's corpus).
use crate::replay::{cpu_reference, several_defects_explain, with_fixed_crcs};
use std::io::Cursor;

/// Containers decoding to more than this are skipped (the emulated kernels run a thread per GPU
/// thread on one core).
const MAX_KERNEL_BYTES: u64 = 1 << 20;

/// `kernels`: see the module documentation.
pub fn check_kernels(data: &[u8]) {
    for file in with_fixed_crcs(data) {
        let small = ibp_codec::ContainerReader::open(Cursor::new(file.as_slice())).map(|r| {
            r.entries()
                .iter()
                .try_fold(0u64, |acc, e| acc.checked_add(e.row_count.checked_mul(e.row_bytes)?))
                .is_some_and(|total| total <= MAX_KERNEL_BYTES)
        });
        if small == Ok(false) {
            continue;
        }
        let got = ibp_gpu::host::decode_container(&file).unwrap_or_else(|e| panic!("kernels: {e}"));
        match (cpu_reference(&file), got) {
            (Ok(cpu), Ok(kernels)) => assert!(cpu == kernels, "the kernels' bytes differ from the CPU's"),
            (Ok(_), Err(code)) => panic!("the CPU decodes the file, the kernels reject it with {code}"),
            (Err(code), Ok(_)) => panic!("the CPU rejects the file with {code}, the kernels decode it"),
            (Err(cpu), Err(code)) if cpu == code => {}
            // Both reject with different codes: allowed only for a file with several defects, where
            // the kernels' loader checks every chunk's metadata and CRCs before any row (spec 11.3).
            (Err(cpu), Err(code)) => {
                if let Err(why) = several_defects_explain(&file, cpu, code) {
                    panic!("the CPU rejects the file with {cpu}, the kernels with {code}: {why}");
                }
            }
        }
    }
}
