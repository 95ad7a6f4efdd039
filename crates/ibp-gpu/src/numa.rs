//! The host NUMA node a GPU is attached to, so page-locked buffers it reads over PCIe can be placed
//! there.
//!
//! Zero-copy gathers read pinned host memory row by row; a read that must cross the link between
//! CPU sockets before reaching the GPU's PCIe root takes longer, and gathers of small rows are bound
//! by the latency of the reads in flight. The kernel places the pages of a pinned allocation on the
//! node of the CPU that faults them in (Linux's default policy), which for `cuMemHostAlloc` is the
//! allocating thread. [`PinnedBuffer::new`](crate::PinnedBuffer::new) therefore allocates on a
//! thread bound to the CPUs of the GPU's node ([`local_cpus`]) when the node is known (Linux
//! sysfs: `/sys/bus/pci/devices/DOMAIN:BUS:DEVICE.0/numa_node` and
//! `/sys/devices/system/node/nodeN/cpulist`). `IBP_PINNED_NUMA=0` turns this off (for A/B runs).

use cudarc::driver::{sys, CudaContext};
use std::sync::Arc;

/// The GPU's NUMA node and that node's CPUs, when the system tells (Linux, a node of at least one
/// CPU) and `IBP_PINNED_NUMA` is not `0`.
pub fn local_cpus(ctx: &Arc<CudaContext>) -> Option<(u32, Vec<usize>)> {
    if std::env::var("IBP_PINNED_NUMA").is_ok_and(|v| v == "0") {
        return None;
    }
    let node = device_node(ctx)?;
    let list = std::fs::read_to_string(format!("/sys/devices/system/node/node{node}/cpulist")).ok()?;
    let cpus = parse_cpu_list(&list)?;
    (!cpus.is_empty()).then_some((node, cpus))
}

/// The NUMA node of the GPU's PCI function (None when the platform reports none, e.g. `-1`).
pub fn device_node(ctx: &Arc<CudaContext>) -> Option<u32> {
    let attr = |a| ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok());
    let domain = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?;
    let bus = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?;
    let device = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?;
    let path = format!("/sys/bus/pci/devices/{domain:04x}:{bus:02x}:{device:02x}.0/numa_node");
    std::fs::read_to_string(path)
        .ok()?
        .trim()
        .parse::<i64>()
        .ok()
        .and_then(|n| u32::try_from(n).ok())
}

/// Parses a Linux CPU list ("0-3,8,10-11"); None if it is not one.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi): (usize, usize) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let c = part.trim().parse().ok()?;
                (c, c)
            }
        };
        if lo > hi || hi >= 1 << 16 {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    Some(cpus)
}

/// Restricts the calling thread to `cpus` (Linux); false where that is not possible.
#[cfg(target_os = "linux")]
pub fn bind_current_thread(cpus: &[usize]) -> bool {
    // SAFETY: an all-zero `cpu_set_t` is a valid empty set (it is a plain bit array).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let limit = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &c in cpus.iter().filter(|&&c| c < limit) {
        // SAFETY: `c` is below the set's capacity in bits (checked above).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 names the calling thread; `set` is a valid, initialised `cpu_set_t` of the size
    // passed.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

/// Restricts the calling thread to `cpus`: not supported on this platform.
#[cfg(not(target_os = "linux"))]
pub fn bind_current_thread(_cpus: &[usize]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_linux_writes_them() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a-b"), None);
        assert_eq!(parse_cpu_list("0-70000"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_bound_to_one_cpu_runs_there() {
        let allowed = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:").map(|v| v.trim().to_string()))
            })
            .and_then(|l| parse_cpu_list(&l))
            .expect("Cpus_allowed_list");
        let cpu = *allowed.last().unwrap();
        let on = std::thread::spawn(move || {
            assert!(bind_current_thread(&[cpu]));
            // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's CPU.
            unsafe { libc::sched_getcpu() }
        })
        .join()
        .unwrap();
        assert_eq!(on, cpu as i32);
    }
}
