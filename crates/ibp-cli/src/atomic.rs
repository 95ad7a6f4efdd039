//! Atomic outputs: everything is written to a temporary file (or folder) next to the target,
//! flushed and fsynced, then renamed onto the target in one step. A failed run removes its
//! temporary; the target is either the complete new output or untouched, never partial.
//!
//! Temporaries are hidden (`.NAME.XXXXXX.ibp-tmp`). A run killed by a signal cannot clean up and
//! may leave one behind, never a partial target.

use crate::error::{CliError, CliResult, Context};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Suffix of temporary outputs.
pub const TMP_SUFFIX: &str = ".ibp-tmp";

/// The folder that holds `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn tmp_prefix(path: &Path) -> CliResult<String> {
    let name = path
        .file_name()
        .ok_or_else(|| CliError::usage(format!("'{}' is not a file name", path.display())))?;
    Ok(format!(".{}.", name.to_string_lossy()))
}

/// Fails (exit 1) if `path` exists and `force` is off.
pub fn check_target(path: &Path, force: bool) -> CliResult<()> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(CliError {
            path: Some(path.to_path_buf()),
            code: "E_EXISTS",
            ..CliError::usage("output exists (use --force to replace it)")
        });
    }
    Ok(())
}

/// A temporary-file builder whose files get the mode a plain `File::create` / `create_dir` would
/// use (`mode` minus the umask), not the private 0600/0700 of temporaries: once renamed, the
/// output is an ordinary file.
fn builder<'a>(prefix: &'a str, suffix: &'a str, mode: u32) -> tempfile::Builder<'a, 'a> {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix).suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    b
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all(); // best effort: persists the rename on filesystems that need it
    }
}

/// Writes the file `path` atomically: `fill` writes into a buffered temporary file in the same
/// folder, which is flushed, fsynced and renamed onto `path` only when `fill` succeeds.
pub fn write_file<T>(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&mut BufWriter<&mut File>) -> CliResult<T>,
) -> CliResult<T> {
    check_target(path, force)?;
    let dir = parent_of(path);
    let prefix = tmp_prefix(path)?;
    let mut tmp = builder(&prefix, TMP_SUFFIX, 0o666)
        .tempfile_in(&dir)
        .at(path, "cannot create the output")?;
    let value = {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let value = fill(&mut w)?;
        w.flush().at(path, "cannot write the output")?;
        value
    };
    tmp.as_file().sync_all().at(path, "cannot sync the output")?;
    let persisted = if force {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    persisted.map_err(|e| CliError::io(path, "cannot rename the output into place", &e.error))?;
    sync_dir(&dir);
    Ok(value)
}

/// Writes the folder `path` atomically: `fill` creates files inside a temporary folder next to
/// `path` (it gets that folder's path), which is renamed onto `path` when `fill` succeeds. The
/// target must not exist, unless `force` is set (an existing folder is then replaced).
pub fn write_dir<T>(path: &Path, force: bool, fill: impl FnOnce(&Path) -> CliResult<T>) -> CliResult<T> {
    check_target(path, force)?;
    let dir = parent_of(path);
    let prefix = tmp_prefix(path)?;
    let tmp = builder(&prefix, TMP_SUFFIX, 0o777)
        .tempdir_in(&dir)
        .at(path, "cannot create the output folder")?;
    let value = fill(tmp.path())?;
    sync_dir(tmp.path());
    if force && std::fs::symlink_metadata(path).is_ok() {
        // Move the old output aside first so the swap is two renames; remove it afterwards.
        let old = tempfile::Builder::new()
            .prefix(&tmp_prefix(path)?)
            .suffix(".old")
            .tempdir_in(&dir)
            .at(path, "cannot replace the output folder")?;
        let aside = old.path().join("old");
        std::fs::rename(path, &aside).at(path, "cannot move the old output aside")?;
        if let Err(e) = std::fs::rename(tmp.path(), path) {
            let _ = std::fs::rename(&aside, path); // put the old output back
            return Err(CliError::io(path, "cannot rename the output into place", &e));
        }
        let _ = tmp.keep();
        drop(old); // removes the old output
    } else {
        std::fs::rename(tmp.path(), path).at(path, "cannot rename the output folder into place")?;
        let _ = tmp.keep();
    }
    sync_dir(&dir);
    Ok(value)
}

/// Writes one file inside a folder being built by [`write_dir`] (no rename needed: the folder is
/// not visible yet), creating parent folders, and fsyncs it.
pub fn write_inner_file<T>(path: &Path, fill: impl FnOnce(&mut BufWriter<&mut File>) -> CliResult<T>) -> CliResult<T> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).at(parent, "cannot create folder")?;
    }
    let mut file = File::create(path).at(path, "cannot create the output")?;
    let value = {
        let mut w = BufWriter::with_capacity(1 << 20, &mut file);
        let value = fill(&mut w)?;
        w.flush().at(path, "cannot write the output")?;
        value
    };
    file.sync_all().at(path, "cannot sync the output")?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn failed_fill_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("out.ibp");
        let r: CliResult<()> = write_file(&target, false, |w| {
            w.write_all(b"partial").unwrap();
            Err(CliError::usage("boom"))
        });
        assert!(r.is_err());
        assert!(listing(d.path()).is_empty(), "{:?}", listing(d.path()));
        let r: CliResult<()> = write_dir(&d.path().join("outdir"), false, |p| {
            std::fs::write(p.join("a.npy"), b"x").unwrap();
            Err(CliError::usage("boom"))
        });
        assert!(r.is_err());
        assert!(listing(d.path()).is_empty());
    }

    #[test]
    fn success_replaces_only_with_force() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("out.ibp");
        write_file(&target, false, |w| w.write_all(b"one").at(&target, "w")).unwrap();
        assert!(write_file(&target, false, |w| w.write_all(b"two").at(&target, "w")).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        write_file(&target, true, |w| w.write_all(b"two").at(&target, "w")).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        assert_eq!(listing(d.path()), ["out.ibp"]);

        let out = d.path().join("folder");
        write_dir(&out, false, |p| {
            write_inner_file(&p.join("a/b.npy"), |w| w.write_all(b"1").at(p, "w"))
        })
        .unwrap();
        assert_eq!(std::fs::read(out.join("a/b.npy")).unwrap(), b"1");
        assert!(write_dir(&out, false, |_| Ok(())).is_err());
        write_dir(&out, true, |p| {
            write_inner_file(&p.join("c.npy"), |w| w.write_all(b"2").at(p, "w"))
        })
        .unwrap();
        assert_eq!(listing(&out), ["c.npy"]);
        assert_eq!(listing(d.path()), ["folder", "out.ibp"]);
    }
}
