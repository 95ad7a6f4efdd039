//! Progress bars on stderr (indicatif), drawn only when stderr is a terminal and `--quiet` is off.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Whether bars and notes are shown; set once from the command line.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// `--quiet`: no bars, no notes, no summaries on stderr.
    pub quiet: bool,
}

impl Ui {
    /// A byte-counting bar of `total` bytes labelled `label`; hidden when stderr is not a terminal.
    pub fn bytes_bar(&self, total: u64, label: &str) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), self.target());
        bar.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(label.to_owned());
        bar
    }

    /// A bar counting `total` items (chunks) labelled `label`.
    pub fn items_bar(&self, total: u64, label: &str) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), self.target());
        bar.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(label.to_owned());
        bar
    }

    fn target(&self) -> ProgressDrawTarget {
        if self.quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        }
    }

    /// Prints a note line on stderr unless quiet.
    pub fn note(&self, line: &str) {
        if !self.quiet {
            eprintln!("note: {line}");
        }
    }
}
