//! Read-only memory maps of input files: large inputs stream through the page cache instead of
//! being loaded, so memory stays bounded by what the encoder buffers (about one chunk per thread).
//!
//! This is the crate's only `unsafe` code.

use std::fs::File;
use std::ops::Deref;
use std::path::Path;

/// A whole input file, memory-mapped read-only (or held in memory when it is empty, which cannot
/// be mapped).
pub struct MappedFile {
    inner: Inner,
}

enum Inner {
    Map(memmap2::Mmap),
    Empty,
}

impl MappedFile {
    /// Opens and maps `path` read-only.
    pub fn open(path: &Path) -> std::io::Result<MappedFile> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        if meta.len() == 0 {
            return Ok(MappedFile { inner: Inner::Empty });
        }
        #[allow(unsafe_code)]
        // SAFETY: the map is read-only and lives no longer than `MappedFile`. memmap2's remaining
        // hazard is another process truncating or rewriting the file while it is mapped (SIGBUS or
        // changing bytes); the `ibp` command documents that inputs must not be modified while it
        // runs, and it never writes to its inputs itself (outputs go to a new temporary file).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedFile { inner: Inner::Map(map) })
    }
}

impl Deref for MappedFile {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Map(m) => m,
            Inner::Empty => &[],
        }
    }
}
