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

/// Opens a `.ibp` file with the reader limits `limits` (`--max-memory`, `--max-rows`) and validates
/// its header, footer and directory.
pub fn open_container(path: &Path, limits: Limits) -> CliResult<ContainerReader<BufReader<File>>> {
    let file = File::open(path).at(path, "cannot open")?;
    if file.metadata().at(path, "cannot stat")?.is_dir() {
        return Err(CliError::usage(format!(
            "{} is a folder, not a .ibp file",
            path.display()
        )));
    }
    ContainerReader::open_with_limits(BufReader::with_capacity(1 << 20, file), limits)
        .map_err(|e| CliError::format(path, e))
}
