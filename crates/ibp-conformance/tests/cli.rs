//! The `ibp-conformance` binary: the external-decoder protocol and `generate --check`.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibp-conformance"))
}

#[test]
fn the_reference_decode_command_passes_every_vector_through_the_external_protocol() {
    let decoder = format!("{} decode", env!("CARGO_BIN_EXE_ibp-conformance"));
    let out = bin().args(["run", "--external", &decoder]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" 0 failed"), "{stdout}");
}

#[test]
fn an_external_decoder_that_accepts_everything_fails() {
    // `true` exits 0 without writing entries: wrong for valid vectors with entries and for invalid ones.
    let out = bin()
        .args(["run", "--external", "true", "v-0002", "x-0017"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(stdout.contains("0 passed, 2 failed"), "{stdout}");
}

#[test]
fn committed_files_match_the_generator() {
    let out = bin().args(["generate", "--check"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = bin().args(["example", "--check"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
