//! Writers wrapped around outputs: byte counting, first-error capture and progress.

use indicatif::ProgressBar;
use std::io::Write;

/// Counts bytes written and remembers the first I/O error, so that it is reported against the
/// output path (not the input).
pub struct CountingWriter<W> {
    /// The writer wrapped.
    pub inner: W,
    /// Bytes written so far.
    pub written: u64,
    /// The first write or flush error, if any.
    pub error: Option<std::io::Error>,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.inner.write(buf) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            Err(e) => {
                let copy = std::io::Error::new(e.kind(), e.to_string());
                self.error.get_or_insert(e);
                Err(copy)
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| {
            self.error.get_or_insert(std::io::Error::new(e.kind(), e.to_string()));
        })
    }
}

impl<W> CountingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        CountingWriter {
            inner,
            written: 0,
            error: None,
        }
    }
}

/// Advances a progress bar by the bytes written through it.
pub struct BarWriter<'a, W> {
    /// The writer wrapped.
    pub inner: W,
    /// The bar advanced.
    pub bar: &'a ProgressBar,
}

impl<W: Write> Write for BarWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
