//! `ibp-conformance`: `generate` writes the vectors, `run [--gpu]` checks decoders against them,
//! `example` writes `spec/example.md`.

use ibp_codec::DecoderKind;
use ibp_conformance::manifest::Outcome;
use ibp_conformance::{conformance_dir, data_dir, generate, runner, workspace_root};
use std::process::ExitCode;

const USAGE: &str =
    "usage: ibp-conformance <generate [--check] | run [--gpu] [--external CMD] [--verbose] [ID...] | example [--check] | stats>
  generate         write conformance/manifest.json, vectors/ and expected/ (deterministic)
  generate --check only compare the generator's output with the committed files
  run [--gpu]      decode every vector (or the given ids) with the CPU oracle and fast decoders
                   (and the GPU decoder: needs the `gpu` feature) and print a table
  example          write spec/example.md
  stats            count vectors per outcome, error code and spec clause
  run --external CMD   also run a third-party decoder: `CMD <file> <out dir>` (protocol in
                   conformance/README.md)
  decode FILE DIR  the protocol's reference: decode FILE into DIR/0.bin, DIR/1.bin, ... (exit 0)
                   or print the error code (exit 1)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("generate") => cmd_generate(args.iter().any(|a| a == "--check")),
        Some("run") => cmd_run(&args[1..]),
        Some("example") => cmd_example(args.iter().any(|a| a == "--check")),
        Some("stats") => cmd_stats(),
        Some("decode") => cmd_decode(&args[1..]),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn cmd_generate(check: bool) -> Result<(), String> {
    let root = conformance_dir();
    let files = generate::generate(&data_dir());
    // A released vector is never rewritten (spec 12.3): refuse before writing anything.
    let released: ibp_conformance::manifest::Released = match std::fs::read_to_string(root.join("released.json")) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("released.json: {e}"))?,
        Err(_) => Default::default(),
    };
    for (id, sha) in &released.vectors {
        let rel = format!("vectors/{id}.ibp");
        match files.get(&rel) {
            Some(bytes) if &generate::sha256_hex(bytes) == sha => {}
            _ => {
                return Err(format!(
                    "released vector {id} would change or disappear: keep its old bytes and add a new vector instead (conformance/README.md)"
                ))
            }
        }
    }
    let mut differ = Vec::new();
    for (rel, bytes) in &files {
        let path = root.join(rel);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            differ.push(rel.clone());
            if !check {
                std::fs::create_dir_all(path.parent().expect("has a parent")).map_err(|e| e.to_string())?;
                std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    let stale: Vec<String> = list_generated(&root)
        .into_iter()
        .filter(|p| !files.contains_key(p))
        .collect();
    let total: usize = files
        .iter()
        .filter(|(p, _)| p.starts_with("vectors/"))
        .map(|(_, b)| b.len())
        .sum();
    println!(
        "{} files ({} vectors, {total} bytes of vectors); {} {}",
        files.len(),
        files.keys().filter(|p| p.starts_with("vectors/")).count(),
        differ.len(),
        if check {
            "differ from the committed files"
        } else {
            "written"
        }
    );
    if !stale.is_empty() {
        println!("not produced by the generator (remove them, or restore their vectors): {stale:?}");
    }
    if check && !(differ.is_empty() && stale.is_empty()) {
        return Err(format!("generator output differs: {differ:?}"));
    }
    Ok(())
}

fn list_generated(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["vectors", "expected"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            for e in rd.flatten() {
                out.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    out
}

fn cmd_run(args: &[String]) -> Result<(), String> {
    let gpu = args.iter().any(|a| a == "--gpu");
    let verbose = args.iter().any(|a| a == "--verbose");
    let external: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--external")
        .map(|i| {
            args.get(i + 1)
                .map(|c| c.split_whitespace().map(str::to_owned).collect())
        })
        .map(|c| c.ok_or("--external needs a command"))
        .transpose()?;
    let ids: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--external"))
        .map(|(_, a)| a)
        .collect();
    let scratch = std::env::temp_dir().join(format!("ibp-conformance-{}", std::process::id()));
    let root = conformance_dir();
    let manifest = runner::load_manifest(&root)?;
    #[cfg(feature = "gpu")]
    let mut gpu_runner = if gpu {
        let g = ibp_conformance::gpu::GpuRunner::new()?;
        println!("GPU: {}", g.name());
        Some(g)
    } else {
        None
    };
    #[cfg(not(feature = "gpu"))]
    if gpu {
        return Err("--gpu needs the gpu feature: cargo run -p ibp-conformance --features gpu -- run --gpu".into());
    }
    println!(
        "{:<7} {:<8} {:<22} {:<22} {:<22}{} result",
        "id",
        "outcome",
        "expected",
        "oracle",
        "fast",
        if gpu { format!(" {:<22}", "gpu") } else { String::new() }
            + &if external.is_some() {
                format!(" {:<22}", "external")
            } else {
                String::new()
            }
    );
    let (mut pass, mut fail) = (0, 0);
    for rec in manifest
        .vectors
        .iter()
        .filter(|r| ids.is_empty() || ids.contains(&&r.id))
    {
        let bytes = runner::load_vector(&root, rec)?;
        let oracle = runner::decode_cpu(&bytes, DecoderKind::Oracle);
        let fast = runner::decode_cpu(&bytes, DecoderKind::Fast);
        let mut problems: Vec<String> = [("oracle", &oracle), ("fast", &fast)]
            .iter()
            .filter_map(|(name, d)| runner::check(&root, rec, d).err().map(|e| format!("{name}: {e}")))
            .collect();
        let mut extra_cols = String::new();
        #[cfg(feature = "gpu")]
        if let Some(g) = gpu_runner.as_mut() {
            let got = g.decode(&bytes);
            extra_cols = format!(" {:<22}", runner::summary(&got));
            if let Err(e) = runner::check(&root, rec, &got) {
                problems.push(format!("gpu: {e}"));
            }
            if runner::summary(&got) != runner::summary(&oracle) {
                problems.push(format!(
                    "gpu {} != cpu {}",
                    runner::summary(&got),
                    runner::summary(&oracle)
                ));
            }
        }
        if let Some(cmd) = &external {
            let got = runner::run_external(cmd, &root.join(&rec.file), &scratch);
            extra_cols += &format!(" {:<22}", got.summary());
            if let Err(e) = runner::check_external(rec, &got) {
                problems.push(format!("external: {e}"));
            }
        }
        let expected = match rec.outcome {
            Outcome::Valid => "ok".to_owned(),
            _ => rec.error.clone().unwrap_or_default(),
        };
        let outcome = match rec.outcome {
            Outcome::Valid => "valid",
            Outcome::Invalid => "invalid",
            Outcome::ImplementationDefined => "impl-def",
        };
        println!(
            "{:<7} {:<8} {:<22} {:<22} {:<22}{extra_cols} {}",
            rec.id,
            outcome,
            expected,
            runner::summary(&oracle),
            runner::summary(&fast),
            if problems.is_empty() {
                "PASS".to_owned()
            } else {
                format!("FAIL {}", problems.join("; "))
            }
        );
        if verbose {
            match &oracle {
                Err(e) => println!("        {}: {e}", rec.defect.as_deref().unwrap_or("")),
                Ok(entries) => println!("        {} entries: {}", entries.len(), rec.description),
            }
        }
        if problems.is_empty() {
            pass += 1;
        } else {
            fail += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!("{pass} passed, {fail} failed");
    if fail > 0 {
        return Err(format!("{fail} vectors failed"));
    }
    Ok(())
}

fn cmd_example(check: bool) -> Result<(), String> {
    let path = workspace_root().join("spec/example.md");
    let text = ibp_conformance::example::example_markdown();
    if check {
        let on_disk = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        return if on_disk == text {
            Ok(())
        } else {
            Err("spec/example.md differs from the generator's output".into())
        };
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn cmd_stats() -> Result<(), String> {
    let manifest = runner::load_manifest(&conformance_dir())?;
    let spec = std::fs::read_to_string(workspace_root().join("spec/SPEC.md")).map_err(|e| e.to_string())?;
    let s = ibp_conformance::stats::stats(&manifest, &spec);
    let all = ibp_conformance::stats::spec_clauses(&spec);
    println!(
        "spec_version {}: {} vectors, {} bytes",
        manifest.spec_version,
        manifest.vectors.len(),
        s.total_bytes
    );
    for (k, v) in &s.per_outcome {
        println!("  {k}: {v}");
    }
    println!("invalid vectors per error code ({} codes):", s.per_error.len());
    for (k, v) in &s.per_error {
        println!("  {k}: {v}");
    }
    println!(
        "spec clauses cited: {} of {} ({} uncited: {})",
        all.len() - s.uncited.len(),
        all.len(),
        s.uncited.len(),
        s.uncited.join(", ")
    );
    for (k, v) in &s.per_clause {
        println!("  {k}: {v}");
    }
    Ok(())
}

/// The external-decoder protocol, implemented with the CPU fast decoder.
fn cmd_decode(args: &[String]) -> Result<(), String> {
    let [file, dir] = args else {
        return Err("usage: ibp-conformance decode FILE OUT_DIR".into());
    };
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    match runner::decode_cpu(&bytes, DecoderKind::Fast) {
        Ok(entries) => {
            for (k, (_, data)) in entries.iter().enumerate() {
                let path = std::path::Path::new(dir).join(format!("{k}.bin"));
                std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Ok(())
        }
        Err(e) => {
            println!("{} {}", e.code, e.detail);
            std::process::exit(1);
        }
    }
}
