//! What a data directory's files are worth, decided over plain data: a file's [`Scan`] says
//! whether it is whole, ends in a torn tail (the last write, never acknowledged, cut by a crash)
//! or is damaged; the generations present and their verdicts say which snapshot and logs to load
//! and what is missing. Nothing here touches the disk.
//!
//! A torn tail is only ever the end of the newest log (or of a log whose later logs hold
//! nothing): nothing whole follows the fault, and the fault is one a crash leaves (a header or
//! record cut short, bytes never written, which read as zeros). A record whose bytes are all
//! there but fail their checksum, or any fault followed by whole records, is damage. A snapshot
//! is written under a temporary name and renamed once whole, so any fault in one is damage.

use super::frame::{Fault, Scan};

/// What one file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Whole records only (a snapshot: ending with its end record).
    Whole,
    /// Whole records, then a torn tail (why) to drop.
    Torn(String),
    /// Damaged at the scan's `good_len` (why).
    Damaged(String),
}

fn fault_text(fault: Fault) -> String {
    match fault {
        Fault::ShortHeader { left } => format!("a record header is cut short ({left} of 8 bytes)"),
        Fault::CutShort { claimed, left } => {
            format!("a record is cut short ({left} of the {claimed} bytes it claims)")
        }
        Fault::Checksum { len } => format!("a record of {len} bytes fails its checksum"),
    }
}

/// A log's verdict.
pub(super) fn log_verdict(scan: &Scan) -> Verdict {
    let Some(fault) = scan.fault else {
        return Verdict::Whole;
    };
    let why = fault_text(fault);
    if !scan.after.is_empty() {
        return Verdict::Damaged(why);
    }
    if scan.zeros {
        return Verdict::Torn(format!("{why}, in bytes never written"));
    }
    match fault {
        Fault::ShortHeader { .. } => Verdict::Torn(why),
        Fault::CutShort { .. } if scan.whole_json => Verdict::Damaged(format!(
            "{why}, yet they hold a whole record: its length is wrong"
        )),
        Fault::CutShort { .. } => Verdict::Torn(why),
        Fault::Checksum { len } => {
            let follow = scan
                .len
                .saturating_sub(scan.good_len)
                .saturating_sub(len.saturating_add(8));
            if follow > 0 {
                Verdict::Damaged(format!("{why}; {follow} more bytes follow it"))
            } else if scan.nul {
                Verdict::Torn(format!("{why}, with bytes never written"))
            } else {
                Verdict::Damaged(format!("{why} with all its bytes written"))
            }
        }
    }
}

/// A snapshot's verdict; `ends`: whether its last whole record is the end record.
pub(super) fn snapshot_verdict(scan: &Scan, ends: bool) -> Verdict {
    match scan.fault {
        Some(fault) => Verdict::Damaged(fault_text(fault)),
        None if !ends => Verdict::Damaged("it ends without its end record".into()),
        None => Verdict::Whole,
    }
}

/// A file read, with its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub generation: u64,
    pub scan: Scan,
    pub verdict: Verdict,
}

/// A snapshot or a log, by generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum FileId {
    Snapshot(u64),
    Log(u64),
}

/// What is wrong with a data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Damage {
    /// The file is damaged at `at` of `len` bytes; `after` whole records follow.
    Damaged {
        file: FileId,
        at: u64,
        len: u64,
        why: String,
        after: u64,
    },
    /// No snapshot is there for the logs from `first_log` on.
    MissingSnapshot { first_log: u64 },
    /// Log `generation` is missing between snapshot `base` and log `next`.
    MissingLog {
        generation: u64,
        base: u64,
        next: u64,
    },
}

/// A file `--recover` moves aside, and what of it is not loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Aside {
    pub file: FileId,
    pub len: u64,
    /// Whole records loaded from it (those before its damage).
    pub loaded: u64,
    /// Where what is dropped starts (0 when none of it is loaded).
    pub dropped_from: u64,
    /// Whole records in what is dropped (after the damaged record, when `damaged`).
    pub dropped_records: u64,
    /// Whether this is a damaged log loaded up to its damage (else the file is set aside
    /// whole, none of it loaded).
    pub damaged: bool,
}

/// Which files to load, which torn tails to drop, what is wrong, and what `--recover` moves
/// aside. What is loaded is always a prefix of the history: the snapshot, then the logs after
/// it in order up to the first damage or gap (of a damaged log, the records before the damage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Plan {
    pub base: Option<u64>,
    /// Logs to load (each its whole records up to its first fault), in order.
    pub replay: Vec<u64>,
    /// Logs whose torn tail is dropped.
    pub torn: Vec<u64>,
    pub damage: Vec<Damage>,
    pub aside: Vec<Aside>,
}

fn aside_whole(file: FileId, scan: &Scan) -> Aside {
    Aside {
        file,
        len: scan.len,
        loaded: 0,
        dropped_from: 0,
        dropped_records: scan.records + scan.after.len() as u64,
        damaged: false,
    }
}

/// The plan for a directory whose snapshots read are `snapshots` (newest first, down to the
/// first whole one; older ones are superseded) and whose logs from that snapshot on (all of
/// them when there is none) are `logs`, oldest first.
pub(super) fn plan(snapshots: &[Found], logs: &[Found]) -> Plan {
    let mut plan = Plan::default();
    for s in snapshots {
        if s.verdict == Verdict::Whole {
            plan.base = Some(s.generation);
            break;
        }
        if let Verdict::Damaged(why) = &s.verdict {
            plan.damage.push(Damage::Damaged {
                file: FileId::Snapshot(s.generation),
                at: s.scan.good_len,
                len: s.scan.len,
                why: why.clone(),
                after: s.scan.after.len() as u64,
            });
        }
        // None of a damaged snapshot is loaded: it is set aside whole.
        plan.aside
            .push(aside_whole(FileId::Snapshot(s.generation), &s.scan));
    }
    let Some(base) = plan.base else {
        if let (Some(first), true) = (logs.first(), plan.damage.is_empty()) {
            plan.damage.push(Damage::MissingSnapshot {
                first_log: first.generation,
            });
        }
        for l in logs {
            plan.aside
                .push(aside_whole(FileId::Log(l.generation), &l.scan));
        }
        return plan;
    };
    let mut expected = base;
    let mut stopped = false;
    for (i, l) in logs.iter().enumerate() {
        let id = FileId::Log(l.generation);
        if stopped {
            plan.aside.push(aside_whole(id, &l.scan));
            continue;
        }
        if l.generation != expected {
            plan.damage.push(Damage::MissingLog {
                generation: expected,
                base,
                next: l.generation,
            });
            plan.aside.push(aside_whole(id, &l.scan));
            stopped = true;
            continue;
        }
        expected += 1;
        let later_hold_records = logs[i + 1..]
            .iter()
            .any(|later| later.scan.len > 0 || later.verdict != Verdict::Whole);
        let damaged = match &l.verdict {
            Verdict::Whole => None,
            Verdict::Torn(why) if later_hold_records => Some(format!(
                "{why}, and later logs hold records, so it is not the end of the history"
            )),
            Verdict::Torn(_) => {
                plan.torn.push(l.generation);
                None
            }
            Verdict::Damaged(why) => Some(why.clone()),
        };
        plan.replay.push(l.generation);
        if let Some(why) = damaged {
            plan.damage.push(Damage::Damaged {
                file: id,
                at: l.scan.good_len,
                len: l.scan.len,
                why,
                after: l.scan.after.len() as u64,
            });
            plan.aside.push(Aside {
                file: id,
                len: l.scan.len,
                loaded: l.scan.records,
                dropped_from: l.scan.good_len,
                dropped_records: l.scan.after.len() as u64,
                damaged: true,
            });
            stopped = true;
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(len: u64, records: u64, fault: Option<Fault>) -> Scan {
        let good_len = match fault {
            None => len,
            Some(Fault::ShortHeader { left }) => len - left,
            Some(Fault::CutShort { left, .. }) => len - 8 - left,
            Some(Fault::Checksum { len: l }) => len - 8 - l,
        };
        Scan {
            len,
            records,
            good_len,
            fault,
            ..Scan::default()
        }
    }

    fn kind(v: &Verdict) -> &'static str {
        match v {
            Verdict::Whole => "whole",
            Verdict::Torn(_) => "torn",
            Verdict::Damaged(_) => "damaged",
        }
    }

    #[test]
    fn torn_tails_and_damage_in_a_log() {
        let checksum = Some(Fault::Checksum { len: 50 });
        let cut = Some(Fault::CutShort {
            claimed: 50,
            left: 20,
        });
        let with = |mut s: Scan, f: &dyn Fn(&mut Scan)| {
            f(&mut s);
            s
        };
        let cases = [
            ("whole", scan(1000, 10, None), "whole"),
            (
                "a header cut short",
                scan(1000, 10, Some(Fault::ShortHeader { left: 3 })),
                "torn",
            ),
            ("a record cut short", scan(1000, 10, cut), "torn"),
            (
                "a length that lies (the rest is a whole record)",
                with(scan(1000, 10, cut), &|s| s.whole_json = true),
                "damaged",
            ),
            (
                "a checksum fault at the very end, every byte written",
                scan(1000, 10, checksum),
                "damaged",
            ),
            (
                "a checksum fault at the very end with unwritten bytes",
                with(scan(1000, 10, checksum), &|s| s.nul = true),
                "torn",
            ),
            (
                "a checksum fault followed by more bytes",
                Scan {
                    len: 1100,
                    ..scan(1000, 10, checksum)
                },
                "damaged",
            ),
            (
                "zeros after the last whole record",
                with(
                    Scan {
                        len: 1100,
                        ..scan(1000, 10, checksum)
                    },
                    &|s| s.zeros = true,
                ),
                "torn",
            ),
            (
                "a cut record followed by a whole one",
                with(scan(1000, 10, cut), &|s| s.after = vec![990]),
                "damaged",
            ),
            (
                "zeros, then a whole record",
                with(scan(1000, 10, checksum), &|s| {
                    s.zeros = true;
                    s.after = vec![970];
                }),
                "damaged",
            ),
        ];
        for (what, s, expected) in cases {
            assert_eq!(kind(&log_verdict(&s)), expected, "{what}: {s:?}");
        }
    }

    #[test]
    fn a_snapshot_is_whole_or_damaged() {
        let cases = [
            (scan(100, 3, None), true, "whole"),
            (scan(100, 3, None), false, "damaged"),
            (
                scan(100, 3, Some(Fault::ShortHeader { left: 2 })),
                true,
                "damaged",
            ),
            (
                scan(100, 3, Some(Fault::Checksum { len: 10 })),
                true,
                "damaged",
            ),
        ];
        for (s, ends, expected) in cases {
            assert_eq!(kind(&snapshot_verdict(&s, ends)), expected, "{s:?} {ends}");
        }
    }

    fn found(generation: u64, verdict: &str) -> Found {
        let (scan, verdict) = match verdict {
            "whole" => (scan(100, 4, None), Verdict::Whole),
            "empty" => (scan(0, 0, None), Verdict::Whole),
            "torn" => (
                scan(100, 3, Some(Fault::ShortHeader { left: 2 })),
                Verdict::Torn("t".into()),
            ),
            _ => (
                Scan {
                    after: vec![90, 95],
                    ..scan(100, 2, Some(Fault::Checksum { len: 10 }))
                },
                Verdict::Damaged("d".into()),
            ),
        };
        Found {
            generation,
            scan,
            verdict,
        }
    }

    /// (snapshots newest first, logs) -> (base, replay, torn, damage kinds, files aside).
    #[test]
    fn which_files_load_and_what_is_wrong() {
        type Case = (
            &'static str,
            Vec<Found>,
            Vec<Found>,
            Option<u64>,
            Vec<u64>,
            Vec<u64>,
            Vec<&'static str>,
            Vec<FileId>,
        );
        use FileId::{Log, Snapshot};
        let cases: Vec<Case> = vec![
            (
                "empty directory",
                vec![],
                vec![],
                None,
                vec![],
                vec![],
                vec![],
                vec![],
            ),
            (
                "a snapshot and its logs",
                vec![found(3, "whole")],
                vec![found(3, "whole"), found(4, "whole")],
                Some(3),
                vec![3, 4],
                vec![],
                vec![],
                vec![],
            ),
            (
                "a snapshot whose log was never made (a crash at start)",
                vec![found(3, "whole")],
                vec![],
                Some(3),
                vec![],
                vec![],
                vec![],
                vec![],
            ),
            (
                "a torn tail in the newest log",
                vec![found(3, "whole")],
                vec![found(3, "whole"), found(4, "torn")],
                Some(3),
                vec![3, 4],
                vec![4],
                vec![],
                vec![],
            ),
            (
                "a torn tail before an empty log (a crash in a compaction)",
                vec![found(3, "whole")],
                vec![found(3, "torn"), found(4, "empty")],
                Some(3),
                vec![3, 4],
                vec![3],
                vec![],
                vec![],
            ),
            (
                "a torn tail before a log with records",
                vec![found(3, "whole")],
                vec![found(3, "torn"), found(4, "whole")],
                Some(3),
                vec![3],
                vec![],
                vec!["damaged"],
                vec![Log(3), Log(4)],
            ),
            (
                "a damaged log: later logs are not loaded",
                vec![found(3, "whole")],
                vec![found(3, "damaged"), found(4, "whole")],
                Some(3),
                vec![3],
                vec![],
                vec!["damaged"],
                vec![Log(3), Log(4)],
            ),
            (
                "a log missing between the snapshot and a later log",
                vec![found(3, "whole")],
                vec![found(4, "whole")],
                Some(3),
                vec![],
                vec![],
                vec!["missing log"],
                vec![Log(4)],
            ),
            (
                "a log missing in the middle",
                vec![found(3, "whole")],
                vec![found(3, "whole"), found(5, "whole")],
                Some(3),
                vec![3],
                vec![],
                vec!["missing log"],
                vec![Log(5)],
            ),
            (
                "logs without a snapshot",
                vec![],
                vec![found(3, "whole")],
                None,
                vec![],
                vec![],
                vec!["missing snapshot"],
                vec![Log(3)],
            ),
            (
                "a damaged snapshot, no older one",
                vec![found(3, "damaged")],
                vec![found(3, "whole")],
                None,
                vec![],
                vec![],
                vec!["damaged"],
                vec![Snapshot(3), Log(3)],
            ),
            (
                "a damaged snapshot over an older whole one with its logs",
                vec![found(4, "damaged"), found(3, "whole")],
                vec![found(3, "whole"), found(4, "whole")],
                Some(3),
                vec![3, 4],
                vec![],
                vec!["damaged"],
                vec![Snapshot(4)],
            ),
        ];
        for (what, snapshots, logs, base, replay, torn, damage, aside) in cases {
            let p = plan(&snapshots, &logs);
            let kinds: Vec<&str> = p
                .damage
                .iter()
                .map(|d| match d {
                    Damage::Damaged { .. } => "damaged",
                    Damage::MissingSnapshot { .. } => "missing snapshot",
                    Damage::MissingLog { .. } => "missing log",
                })
                .collect();
            let files: Vec<FileId> = p.aside.iter().map(|a| a.file).collect();
            assert_eq!(
                (p.base, p.replay, p.torn, kinds, files),
                (base, replay, torn, damage, aside),
                "{what}"
            );
        }
    }

    #[test]
    fn what_recover_drops_from_a_damaged_log() {
        let p = plan(
            &[found(3, "whole")],
            &[found(3, "damaged"), found(4, "whole")],
        );
        assert_eq!(
            p.aside,
            vec![
                Aside {
                    file: FileId::Log(3),
                    len: 100,
                    loaded: 2,
                    dropped_from: 82,
                    dropped_records: 2,
                    damaged: true,
                },
                Aside {
                    file: FileId::Log(4),
                    len: 100,
                    loaded: 0,
                    dropped_from: 0,
                    dropped_records: 4,
                    damaged: false,
                },
            ]
        );
    }
}
