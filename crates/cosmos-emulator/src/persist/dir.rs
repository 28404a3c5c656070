//! The data directory's files: their names by generation, listing them, syncing the directory,
//! removing superseded files and moving damaged ones aside.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use super::classify::FileId;

/// Files of one kind (`snapshot-` or `log-`) by generation, oldest first.
pub(super) fn generations(dir: &Path, prefix: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let entries = fs::read_dir(dir)
        .map_err(|e| format!("cannot list the data directory {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(g) = name
            .strip_prefix(prefix)
            .filter(|g| g.len() == 16)
            .and_then(|g| u64::from_str_radix(g, 16).ok())
        {
            out.push(g);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The file whose lock says an emulator uses the directory.
pub(super) const LOCK_FILE: &str = "lock";

/// Takes the directory's lock (an advisory lock on [`LOCK_FILE`], which the system releases when
/// the process ends, however it ends): two emulators on one directory would each compact and
/// remove the files the other reads and writes. Err, changing nothing, when another holds it.
pub(super) fn hold(dir: &Path) -> Result<File, String> {
    let path = dir.join(LOCK_FILE);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(format!(
            "the data directory {} is in use by another emulator (it holds {}); stop that one first; nothing in the directory was changed",
            dir.display(),
            path.display()
        )),
        Err(fs::TryLockError::Error(e)) => {
            Err(format!("cannot lock the data directory {}: {e}", dir.display()))
        }
    }
}

pub(super) fn snapshot_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("snapshot-{g:016x}"))
}

pub(super) fn log_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("log-{g:016x}"))
}

pub(super) fn path_of(dir: &Path, file: FileId) -> PathBuf {
    match file {
        FileId::Snapshot(g) => snapshot_path(dir, g),
        FileId::Log(g) => log_path(dir, g),
    }
}

pub(super) fn sync_dir(dir: &Path) -> Result<(), String> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("cannot sync the data directory {}: {e}", dir.display()))
}

/// Removes the temporary files a snapshot being written leaves when a crash cuts it short
/// (never loaded: a snapshot counts once renamed).
pub(super) fn remove_temporary(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snapshot-") && name.ends_with(".tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Removes the snapshots and logs older than generation `g` (what the snapshot of `g` holds).
pub(super) fn remove_before(dir: &Path, g: u64) {
    for prefix in ["snapshot-", "log-"] {
        for old in generations(dir, prefix).unwrap_or_default() {
            if old < g {
                let path = dir.join(format!("{prefix}{old:016x}"));
                if let Err(e) = fs::remove_file(&path) {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        }
    }
}

/// Puts `files` into a new directory `damaged-<seconds since 1970>` of `dir`, as hard links
/// (copies where the file system has none); returns it. The originals stay until the new
/// snapshot is in place and [`remove_before`] removes them: a crash before that leaves the
/// directory as damaged as it was (a start refuses again), never short of a file silently.
pub(super) fn move_aside(dir: &Path, files: &[FileId]) -> Result<PathBuf, String> {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut aside = dir.join(format!("damaged-{seconds}"));
    let mut n = 1;
    while let Err(e) = fs::create_dir(&aside) {
        if e.kind() != std::io::ErrorKind::AlreadyExists || n > 1000 {
            return Err(format!("cannot create {}: {e}", aside.display()));
        }
        aside = dir.join(format!("damaged-{seconds}-{n}"));
        n += 1;
    }
    for &file in files {
        let from = path_of(dir, file);
        let Some(name) = from.file_name() else {
            continue;
        };
        let to = aside.join(name);
        fs::hard_link(&from, &to)
            .or_else(|_| {
                fs::copy(&from, &to)?;
                File::open(&to)?.sync_all()
            })
            .map_err(|e| format!("cannot keep {} in {}: {e}", from.display(), aside.display()))?;
    }
    sync_dir(&aside)?;
    sync_dir(dir)?;
    Ok(aside)
}
