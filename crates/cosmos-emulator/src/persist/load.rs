//! Loading a data directory: read its snapshot and logs, judge them ([`super::classify`]), and
//! either load what they hold (dropping a torn tail with a message), refuse (damage or a missing
//! file: nothing is changed, written or removed), or under `--recover` load the history up to
//! the first damage and move the damaged files, and those after them, aside (linked into
//! `damaged-<seconds>/` now; the originals go with the other old files once the new snapshot is
//! in place).
//!
//! Records after a damaged one are not replayed under `--recover`, nor are later logs: a lost
//! record may hold an item's write or delete, and replaying later writes over it would serve
//! items in a state no client was ever answered with (a deleted item back, one write of a
//! transactional batch without the others). What is loaded is the state after some
//! acknowledged write, and everything after it stays in the files moved aside.

use std::fs;
use std::path::Path;

use super::classify::{self, Aside, Damage, FileId, Found, Plan, Verdict};
use super::dir::{self, log_path, path_of, snapshot_path};
use super::frame;
use super::loader::Loader;
use super::record::Record;
use super::LoadReport;

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn survey_snapshot(dir: &Path, g: u64) -> Result<Found, String> {
    let bytes = read(&snapshot_path(dir, g))?;
    let scan = frame::scan(&bytes);
    let decoded = frame::decode(&bytes);
    let ends = decoded
        .records
        .last()
        .is_some_and(|r| serde_json::from_slice::<Record>(r).ok() == Some(Record::End));
    let verdict = classify::snapshot_verdict(&scan, ends);
    Ok(Found {
        generation: g,
        scan,
        verdict,
    })
}

fn survey_log(dir: &Path, g: u64) -> Result<Found, String> {
    let bytes = read(&log_path(dir, g))?;
    let scan = frame::scan(&bytes);
    let verdict = classify::log_verdict(&scan);
    Ok(Found {
        generation: g,
        scan,
        verdict,
    })
}

/// Applies the whole records of `path` before its first fault.
fn apply_file(path: &Path, loader: &mut Loader<'_>, report: &mut LoadReport) -> Result<(), String> {
    let bytes = read(path)?;
    for payload in &frame::decode(&bytes).records {
        let record: Record = serde_json::from_slice(payload).map_err(|e| {
            format!(
                "{} holds a whole record this emulator cannot read ({e}); move the directory away to start empty",
                path.display()
            )
        })?;
        loader.apply(record)?;
        report.records += 1;
    }
    Ok(())
}

fn describe(dir: &Path, damage: &Damage) -> String {
    match damage {
        Damage::Damaged {
            file,
            at,
            len,
            why,
            after,
        } => format!(
            "{}: damaged at offset {at} of {len} bytes ({why}); {after} valid records follow the damage",
            path_of(dir, *file).display()
        ),
        Damage::MissingSnapshot { first_log } => format!(
            "{} is missing: {} and the logs after it have no snapshot to start from",
            snapshot_path(dir, *first_log).display(),
            log_path(dir, *first_log).display()
        ),
        Damage::MissingLog {
            generation,
            base,
            next,
        } => format!(
            "{} is missing: it comes between {} and {}",
            log_path(dir, *generation).display(),
            snapshot_path(dir, *base).display(),
            log_path(dir, *next).display()
        ),
    }
}

/// What a start without `--recover` says when `plan` finds damage.
fn refusal(dir: &Path, plan: &Plan) -> String {
    let mut text = String::from("it is damaged; nothing in it was changed, written or removed:");
    for damage in &plan.damage {
        text.push_str("\n  ");
        text.push_str(&describe(dir, damage));
    }
    text.push_str(&format!(
        "\nTo start anyway, start with --recover: what comes before the first damage is loaded, \
         the damaged files and those after them are moved into {}/damaged-<seconds>/ (never \
         deleted), and what is not loaded is listed.",
        dir.display()
    ));
    text
}

fn aside_text(dir: &Path, into: &Path, aside: &Aside) -> String {
    let path = path_of(dir, aside.file);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let holding = if aside.damaged {
        format!(
            "the damaged record and {} whole records after it",
            aside.dropped_records
        )
    } else {
        format!("{} whole records", aside.dropped_records)
    };
    format!(
        "--recover: set aside {} as {}: loaded {} whole records (bytes 0..{}); not loaded: bytes {}..{} ({} bytes) holding {holding}",
        path.display(),
        into.join(name.unwrap_or_default()).display(),
        aside.loaded,
        aside.dropped_from,
        aside.dropped_from,
        aside.len,
        aside.len.saturating_sub(aside.dropped_from),
    )
}

/// Loads `dir` into `loader`; Err (refusing to start) on damage unless `recover`. Returns the
/// generation the new snapshot and log are to take.
pub(super) fn load(
    dir: &Path,
    loader: &mut Loader<'_>,
    recover: bool,
    report: &mut LoadReport,
) -> Result<u64, String> {
    let snapshot_gens = dir::generations(dir, "snapshot-")?;
    let log_gens = dir::generations(dir, "log-")?;
    let next = snapshot_gens
        .iter()
        .chain(&log_gens)
        .max()
        .map_or(1, |g| g + 1);
    // Newest first, down to the first whole one: older ones are superseded by it.
    let mut snapshots = Vec::new();
    for &g in snapshot_gens.iter().rev() {
        let found = survey_snapshot(dir, g)?;
        let whole = found.verdict == Verdict::Whole;
        snapshots.push(found);
        if whole {
            break;
        }
    }
    let from = snapshots
        .iter()
        .find(|s| s.verdict == Verdict::Whole)
        .map_or(0, |s| s.generation);
    let mut logs = Vec::new();
    for &g in log_gens.iter().filter(|&&g| g >= from) {
        logs.push(survey_log(dir, g)?);
    }
    let plan = classify::plan(&snapshots, &logs);
    if !plan.damage.is_empty() && !recover {
        return Err(refusal(dir, &plan));
    }
    if let Some(g) = plan.base {
        apply_file(&snapshot_path(dir, g), loader, report)?;
    }
    for &g in &plan.replay {
        apply_file(&log_path(dir, g), loader, report)?;
    }
    for &g in &plan.torn {
        let Some(log) = logs.iter().find(|l| l.generation == g) else {
            continue;
        };
        let why = match &log.verdict {
            Verdict::Torn(why) => why.as_str(),
            _ => "",
        };
        report.messages.push(format!(
            "{}: dropped a torn tail of {} bytes at offset {} ({why}); it held a write that was never acknowledged",
            log_path(dir, g).display(),
            log.scan.len - log.scan.good_len,
            log.scan.good_len
        ));
    }
    report.messages.extend(loader.leftovers());
    if !plan.aside.is_empty() {
        for damage in &plan.damage {
            report
                .messages
                .push(format!("--recover: {}", describe(dir, damage)));
        }
        let files: Vec<FileId> = plan.aside.iter().map(|a| a.file).collect();
        let into = dir::move_aside(dir, &files)?;
        for aside in &plan.aside {
            report.messages.push(aside_text(dir, &into, aside));
        }
        report.messages.push(
            "--recover: records after a damaged one are not replayed (a lost write or delete \
             under them would leave items in a state never acknowledged); they stay in the files \
             set aside"
                .into(),
        );
    }
    Ok(next)
}
