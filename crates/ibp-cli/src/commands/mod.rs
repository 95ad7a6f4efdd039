//! The subcommands, each a `run` function over its argument struct (see [`crate::cli`]).

pub mod bench;
pub mod compress;
pub mod decompress;
pub mod demo;
pub mod inspect;
pub mod verify;

use crate::error::{CliError, CliResult, Context};
use ibp_codec::{ContainerReader, Limits};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::OnceLock;

static READER_LIMITS: OnceLock<Limits> = OnceLock::new();

/// Sets the limits every `.ibp` file is read with in this process (`--max-memory`, `--max-rows`);
/// only the first call counts. Without it, [`Limits::default`].
pub fn set_reader_limits(limits: Limits) {
    let _ = READER_LIMITS.set(limits);
}

/// The limits `.ibp` files are read with.
pub fn reader_limits() -> Limits {
    READER_LIMITS.get().copied().unwrap_or_default()
}

/// Opens a `.ibp` file with [`reader_limits`] and validates its header, footer and directory.
pub fn open_container(path: &Path) -> CliResult<ContainerReader<BufReader<File>>> {
    let file = File::open(path).at(path, "cannot open")?;
    if file.metadata().at(path, "cannot stat")?.is_dir() {
        return Err(CliError::usage(format!(
            "{} is a folder, not a .ibp file",
            path.display()
        )));
    }
    ContainerReader::open_with_limits(BufReader::with_capacity(1 << 20, file), reader_limits())
        .map_err(|e| CliError::format(path, e))
}
