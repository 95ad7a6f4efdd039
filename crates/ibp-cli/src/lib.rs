//! The `ibp` command as a library: tensor file I/O (`.npy`, safetensors), the command-line
//! definition and each subcommand, thin over `ibp-format` and `ibp-codec`.
//!
//! * [`tensor_io`]: read and write `.npy` (v1/v2/v3) and safetensors files without copying data.
//! * [`cli`]: the clap definition; [`commands`]: `compress`, `decompress`, `inspect`, `verify`,
//!   `bench`.
//! * [`error`]: one-line errors and the exit codes (0 ok, 1 usage, 2 bad input, 3 I/O, 4 GPU).
//! * [`atomic`]: outputs written to a temporary next to the target, fsynced, then renamed.
//!
//! The command itself is documented in the crate's `README.md`.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod atomic;
pub mod cli;
pub mod commands;
pub mod error;
pub mod inputs;
pub mod layout;
pub mod mapped;
pub mod metadata;
pub mod naming;
pub mod progress;
pub mod rows;
pub mod sink;
pub mod tensor_io;

use cli::{Cli, Command};
use error::CliError;
use progress::Ui;

/// Runs a parsed command line; returns the process exit code (errors already printed).
pub fn run(cli: Cli) -> i32 {
    if let Some(n) = cli.threads {
        // Fails only if a global pool already exists (then its size stands).
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n as usize).build_global();
    }
    let limits = cli.reader_limits();
    let ui = Ui { quiet: cli.quiet };
    let result: Result<(), CliError> = match &cli.command {
        Command::Compress(a) => commands::compress::run(a, ui).map(drop),
        Command::Decompress(a) => commands::decompress::run(a, ui, limits).map(drop),
        Command::Inspect(a) => commands::inspect::run(a, limits),
        Command::Verify(a) => commands::verify::run(a, ui, limits),
        Command::Bench(a) => commands::bench::run(a, ui, limits),
        Command::Demo => commands::demo::run(),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
