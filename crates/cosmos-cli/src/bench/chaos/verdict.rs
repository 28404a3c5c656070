//! From what the driver reported and what the read-back found to the benchmark's figures: lost,
//! phantom and double-applied writes, and the longest time without an acknowledged write. Pure.
//!
//! - A create is lost when it was acknowledged and its item is absent; phantom when it was reported
//!   failed (not ambiguously) and its item is present.
//! - Each replace writes a unique version into its target. The version found is phantom when its
//!   replace was reported failed; an acknowledged replace is lost when it started after the
//!   replace whose version was found had returned (it should have overwritten it).
//! - A counter is incremented by one per PATCH: increments landed beyond those acknowledged or
//!   ambiguous were applied twice (or reported failed wrongly); acknowledged increments missing
//!   from the counter are lost.
//! - Anything the read-back could not read is counted as unverified, never as fine.

use std::time::Duration;

use super::ledger::{LedgerSnapshot, WriteOutcome};

/// What the read-back found for one created item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// The item is there.
    Present,
    /// The item is not there (404).
    Absent,
    /// It could not be read.
    Unknown,
}

/// The state read back after the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadBack {
    /// One per create of the ledger, in its order.
    pub creates: Vec<Presence>,
    /// The version stored in each replace target (`None`: unreadable).
    pub replace_versions: Vec<Option<u64>>,
    /// The value of each counter (`None`: unreadable).
    pub counters: Vec<Option<i64>>,
}

/// Lost writes by kind of write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LostByKind {
    /// Acknowledged creates whose item is absent.
    pub creates: u64,
    /// Acknowledged replaces overwritten by an earlier one.
    pub replaces: u64,
    /// Acknowledged PATCH increments missing from their counter.
    pub increments: u64,
}

/// The figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Judgement {
    /// Writes reported successful.
    pub acknowledged_writes: u64,
    /// Acknowledged writes whose effect is missing.
    pub lost_writes: u64,
    /// The same, by kind of write: creates, replaces, increments.
    pub lost_by_kind: LostByKind,
    /// Writes reported failed without ambiguity whose effect is present.
    pub phantom_writes: u64,
    /// Counter increments landed beyond those acknowledged or ambiguous.
    pub patch_double_applied: u64,
    /// Writes whose error left their outcome unknown.
    pub ambiguous_errors: u64,
    /// Writes that returned an error (ambiguous ones included).
    pub write_errors: u64,
    /// Items, targets and counters the read-back could not read.
    pub unverified: u64,
}

fn count(outcome: WriteOutcome, of: WriteOutcome) -> u64 {
    u64::from(outcome == of)
}

/// Judges the run.
pub fn judge(ledger: &LedgerSnapshot, back: &ReadBack) -> Judgement {
    let mut j = Judgement::default();
    let mut tally = |outcome: WriteOutcome, n: u64| match outcome {
        WriteOutcome::Acknowledged => j.acknowledged_writes += n,
        WriteOutcome::Ambiguous => {
            j.ambiguous_errors += n;
            j.write_errors += n;
        }
        WriteOutcome::Failed => j.write_errors += n,
    };
    for c in &ledger.creates {
        tally(c.outcome, 1);
    }
    for r in &ledger.replaces {
        tally(r.outcome, 1);
    }
    for c in &ledger.counters {
        tally(WriteOutcome::Acknowledged, c.acknowledged);
        tally(WriteOutcome::Ambiguous, c.ambiguous);
        tally(WriteOutcome::Failed, c.failed);
    }
    for (i, c) in ledger.creates.iter().enumerate() {
        match back.creates.get(i).copied().unwrap_or(Presence::Unknown) {
            Presence::Present => j.phantom_writes += count(c.outcome, WriteOutcome::Failed),
            Presence::Absent => {
                j.lost_by_kind.creates += count(c.outcome, WriteOutcome::Acknowledged)
            }
            Presence::Unknown => j.unverified += 1,
        }
    }
    for (target, stored) in back.replace_versions.iter().enumerate() {
        let Some(version) = *stored else {
            j.unverified += 1;
            continue;
        };
        let writer = ledger
            .replaces
            .iter()
            .find(|r| r.target == target && r.version == version);
        // When the stored version's replace returned (`None`: the seeded body, before them all).
        let written_by = match (version, writer) {
            (0, _) => None,
            (_, Some(w)) => {
                j.phantom_writes += count(w.outcome, WriteOutcome::Failed);
                Some(w.finished)
            }
            // A version no replace of this run wrote: nothing can be said about the target.
            (_, None) => {
                j.unverified += 1;
                continue;
            }
        };
        j.lost_by_kind.replaces += ledger
            .replaces
            .iter()
            .filter(|r| {
                r.target == target
                    && r.outcome == WriteOutcome::Acknowledged
                    && written_by.is_none_or(|w| r.started > w)
            })
            .count() as u64;
    }
    for (i, tally) in ledger.counters.iter().enumerate() {
        let Some(landed) = back.counters.get(i).copied().flatten() else {
            j.unverified += 1;
            continue;
        };
        let landed = u64::try_from(landed).unwrap_or(0);
        j.patch_double_applied += landed.saturating_sub(tally.acknowledged + tally.ambiguous);
        j.lost_by_kind.increments += tally.acknowledged.saturating_sub(landed);
    }
    let lost = j.lost_by_kind;
    j.lost_writes = lost.creates + lost.replaces + lost.increments;
    j
}

/// The longest stretch of `[start, end]` without an acknowledged write, and where it began.
/// `acks` are sorted.
pub fn longest_write_gap(
    acks: &[Duration],
    start: Duration,
    end: Duration,
) -> (Duration, Duration) {
    let mut best = (Duration::ZERO, start);
    let mut previous = start;
    for &at in acks
        .iter()
        .filter(|&&at| at > start && at <= end)
        .chain(std::iter::once(&end))
    {
        let gap = at.saturating_sub(previous);
        if gap > best.0 {
            best = (gap, previous);
        }
        previous = at;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::chaos::ledger::{CounterTally, CreateRecord, ReplaceRecord};
    use WriteOutcome::{Acknowledged as Ack, Ambiguous as Amb, Failed};

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn create(id: &str, outcome: WriteOutcome) -> CreateRecord {
        CreateRecord {
            id: id.into(),
            outcome,
        }
    }

    fn replace(
        target: usize,
        version: u64,
        started: u64,
        finished: u64,
        outcome: WriteOutcome,
    ) -> ReplaceRecord {
        ReplaceRecord {
            target,
            version,
            started: ms(started),
            finished: ms(finished),
            outcome,
        }
    }

    #[test]
    fn creates_table() {
        use Presence::{Absent, Present, Unknown};
        // (outcome, found) -> (acknowledged, lost, phantom, ambiguous, write errors, unverified)
        let cases = [
            (Ack, Present, (1, 0, 0, 0, 0, 0)),
            (Ack, Absent, (1, 1, 0, 0, 0, 0)),
            (Ack, Unknown, (1, 0, 0, 0, 0, 1)),
            (Failed, Absent, (0, 0, 0, 0, 1, 0)),
            (Failed, Present, (0, 0, 1, 0, 1, 0)),
            (Amb, Present, (0, 0, 0, 1, 1, 0)),
            (Amb, Absent, (0, 0, 0, 1, 1, 0)),
        ];
        for (outcome, found, want) in cases {
            let ledger = LedgerSnapshot {
                creates: vec![create("a", outcome)],
                ..Default::default()
            };
            let back = ReadBack {
                creates: vec![found],
                ..Default::default()
            };
            let j = judge(&ledger, &back);
            assert_eq!(
                j.lost_by_kind.creates, j.lost_writes,
                "lost creates are counted as such"
            );
            let got = (
                j.acknowledged_writes,
                j.lost_writes,
                j.phantom_writes,
                j.ambiguous_errors,
                j.write_errors,
                j.unverified,
            );
            assert_eq!(got, want, "{outcome:?} {found:?}");
        }
    }

    #[test]
    fn replaces_table() {
        // Target 0's replaces: v1 [0, 10] ack, v2 [20, 30] ack, v3 [25, 40] failed.
        let replaces = vec![
            replace(0, 1, 0, 10, Ack),
            replace(0, 2, 20, 30, Ack),
            replace(0, 3, 25, 40, Failed),
            replace(1, 4, 0, 5, Amb),
        ];
        // (stored in target 0, target 1) -> (lost, phantom, unverified)
        let cases = [
            // v2 is the last acknowledged: fine.
            ((Some(2), Some(4)), (0, 0, 0)),
            // v1 stored although v2 started after v1 returned: v2 is lost.
            ((Some(1), Some(4)), (1, 0, 0)),
            // The seeded body: both acknowledged replaces are lost.
            ((Some(0), Some(0)), (2, 0, 0)),
            // v3 was reported failed but is stored.
            ((Some(3), Some(4)), (0, 1, 0)),
            // Unreadable, or a version nobody wrote.
            ((None, Some(99)), (0, 0, 2)),
        ];
        for ((t0, t1), want) in cases {
            let ledger = LedgerSnapshot {
                replaces: replaces.clone(),
                ..Default::default()
            };
            let back = ReadBack {
                replace_versions: vec![t0, t1],
                ..Default::default()
            };
            let j = judge(&ledger, &back);
            assert_eq!(
                j.lost_by_kind.replaces, j.lost_writes,
                "lost replaces are counted as such"
            );
            assert_eq!(
                (j.lost_writes, j.phantom_writes, j.unverified),
                want,
                "{t0:?} {t1:?}"
            );
            assert_eq!(
                (j.acknowledged_writes, j.ambiguous_errors, j.write_errors),
                (2, 1, 2)
            );
        }
    }

    #[test]
    fn counters_table() {
        let tally = CounterTally {
            acknowledged: 10,
            ambiguous: 2,
            failed: 3,
        };
        // landed -> (double applied, lost, unverified)
        let cases = [
            (Some(10), (0, 0, 0)),
            (Some(12), (0, 0, 0)),
            (Some(14), (2, 0, 0)),
            (Some(8), (0, 2, 0)),
            (None, (0, 0, 1)),
        ];
        for (landed, want) in cases {
            let ledger = LedgerSnapshot {
                counters: vec![tally],
                ..Default::default()
            };
            let back = ReadBack {
                counters: vec![landed],
                ..Default::default()
            };
            let j = judge(&ledger, &back);
            assert_eq!(
                j.lost_by_kind.increments, j.lost_writes,
                "lost increments are counted as such"
            );
            assert_eq!(
                (j.patch_double_applied, j.lost_writes, j.unverified),
                want,
                "{landed:?}"
            );
            assert_eq!(
                (j.acknowledged_writes, j.ambiguous_errors, j.write_errors),
                (10, 2, 5)
            );
        }
    }

    #[test]
    fn write_gaps() {
        type Case = (&'static [u64], u64, u64, (u64, u64));
        let cases: [Case; 5] = [
            (&[], 100, 1000, (900, 100)),
            (&[200, 300, 1900, 2000], 100, 2000, (1600, 300)),
            (&[50, 150, 160], 100, 400, (240, 160)),
            (&[150, 200], 100, 300, (100, 200)),
            (&[100, 500], 100, 500, (400, 100)),
        ];
        for (acks, start, end, (gap, from)) in cases {
            let acks: Vec<Duration> = acks.iter().map(|&v| ms(v)).collect();
            assert_eq!(
                longest_write_gap(&acks, ms(start), ms(end)),
                (ms(gap), ms(from)),
                "{acks:?}"
            );
        }
    }
}
