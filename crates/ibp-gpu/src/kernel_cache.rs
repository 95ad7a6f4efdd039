//! A cache of compiled kernels on disk, so that a process opening a GPU loads the cubins an earlier
//! process compiled instead of running NVRTC again (the decoder module takes NVRTC about 20 s).
//!
//! Where: the directory in `IBP_KERNEL_CACHE` (`off` or an empty value: no cache), else
//! `$XDG_CACHE_HOME/ibp/kernels`, else `$HOME/.cache/ibp/kernels`; none of these: no cache.
//!
//! One file per compiled module, named by the module, the architecture and a hash of its key. The key
//! is everything the cubin depends on: the module's file name, its full source (length, CRC-32 and a
//! 64-bit hash), the NVRTC options (architecture and `IBP_KERNEL_DEFINES` included) and NVRTC's
//! version. A file is `IBPKC1\0\0`, the key's length (u32 LE) and bytes, the cubin's length and CRC-32
//! (u32 LE each), then the cubin. A file whose magic, key, length or CRC does not match (another
//! version, a collision of names, a torn or damaged file) is ignored and replaced; files are written
//! to a temporary name in the same directory and renamed into place, so readers never see a partial
//! one. Failing to read or write the cache never fails a compile.
#![forbid(unsafe_code)]

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"IBPKC1\0\0";

/// The cache directory the environment names, if any (see the module docs).
pub fn cache_dir_from_env() -> Option<PathBuf> {
    match std::env::var_os("IBP_KERNEL_CACHE") {
        Some(v) if v.is_empty() || v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .map(|base| base.join("ibp").join("kernels")),
    }
}

/// What a cubin depends on (see the module docs), as the text stored in its cache file.
pub fn cache_key(file: &str, source: &str, options: &[String], nvrtc_version: (i32, i32)) -> String {
    let mut sip = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut sip);
    format!(
        "module={file}\nsource_len={}\nsource_crc32={:08x}\nsource_sip64={:016x}\noptions={}\nnvrtc={}.{}\n",
        source.len(),
        ibp_format::crc32(source.as_bytes()),
        sip.finish(),
        options.join(" "),
        nvrtc_version.0,
        nvrtc_version.1
    )
}

/// The cache file of `key` for `file` compiled for `arch` (e.g. `sm_90`) in `dir`.
pub fn cache_path(dir: &Path, file: &str, arch: &str, key: &str) -> PathBuf {
    let stem = file.trim_end_matches(".cu");
    dir.join(format!("{stem}-{arch}-{:08x}.cubin", ibp_format::crc32(key.as_bytes())))
}

/// The bytes of a cache file holding `cubin` under `key`.
pub fn encode(key: &str, cubin: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + 12 + key.len() + cubin.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(cubin.len() as u32).to_le_bytes());
    out.extend_from_slice(&ibp_format::crc32(cubin).to_le_bytes());
    out.extend_from_slice(cubin);
    out
}

/// The cubin a cache file holds under `key`, or `None` if the file is not exactly that (another
/// key, a bad magic, length or CRC). Never panics, whatever the bytes.
pub fn decode<'a>(bytes: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (key_len, rest) = split_u32(rest)?;
    let (stored_key, rest) = rest.split_at_checked(key_len as usize)?;
    if stored_key != key.as_bytes() {
        return None;
    }
    let (cubin_len, rest) = split_u32(rest)?;
    let (crc, cubin) = split_u32(rest)?;
    (cubin.len() == cubin_len as usize && ibp_format::crc32(cubin) == crc).then_some(cubin)
}

fn split_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_at_checked(4)?;
    Some((u32::from_le_bytes(head.try_into().ok()?), rest))
}

/// The cubin cached at `path` under `key`, if the file is there and intact.
pub fn load(path: &Path, key: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    decode(&bytes, key).map(<[u8]>::to_vec)
}

/// Stores `cubin` under `key` at `path` (creating its directory), atomically: a temporary file in
/// the same directory, then a rename. Errors are returned for the caller to ignore or report.
pub fn store(path: &Path, key: &str, cubin: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("kernel.cubin");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, encode(key, cubin))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> String {
        cache_key(
            "ibp_gather.cu",
            "__global__ void k() {}",
            &["--gpu-architecture=sm_90".into()],
            (13, 0),
        )
    }

    #[test]
    fn a_cache_file_round_trips_and_rejects_any_change() {
        let cubin: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let file = encode(&key(), &cubin);
        assert_eq!(decode(&file, &key()), Some(cubin.as_slice()));
        // Another key: another source, options or NVRTC version.
        for other in [
            cache_key(
                "ibp_gather.cu",
                "__global__ void k() { }",
                &["--gpu-architecture=sm_90".into()],
                (13, 0),
            ),
            cache_key(
                "ibp_gather.cu",
                "__global__ void k() {}",
                &["--gpu-architecture=sm_80".into()],
                (13, 0),
            ),
            cache_key(
                "ibp_gather.cu",
                "__global__ void k() {}",
                &["--gpu-architecture=sm_90".into()],
                (13, 1),
            ),
        ] {
            assert_ne!(other, key());
            assert_eq!(decode(&file, &other), None);
        }
        // Every truncation, and a flipped bit anywhere, is rejected (never a panic).
        for len in 0..file.len() {
            assert_eq!(decode(&file[..len], &key()), None, "truncated to {len}");
        }
        for at in (0..file.len()).step_by(7) {
            let mut bad = file.clone();
            bad[at] ^= 0x10;
            assert_eq!(decode(&bad, &key()), None, "bit flipped at {at}");
        }
        // Bytes after the cubin: rejected too.
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(&longer, &key()), None);
    }

    #[test]
    fn store_replaces_atomically_and_load_checks() {
        let dir = std::env::temp_dir().join(format!("ibp-kernel-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = cache_path(&dir.join("nested"), "ibp_gather.cu", "sm_90", &key());
        assert!(path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("ibp_gather-sm_90-"));
        assert_eq!(load(&path, &key()), None, "nothing stored yet");
        store(&path, &key(), b"first").unwrap();
        store(&path, &key(), b"second cubin").unwrap();
        assert_eq!(load(&path, &key()).as_deref(), Some(b"second cubin".as_slice()));
        // Only the file itself is left: no temporary files.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A damaged file reads as absent.
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(load(&path, &key()), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
