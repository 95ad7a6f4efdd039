//! The `ibp` binary: parses the command line and runs it (see the crate's README for the commands
//! and exit codes).
#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    let cli = match ibp_cli::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors exit 1.
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 1 } else { 0 });
        }
    };
    std::process::exit(ibp_cli::run(cli));
}
