//! `runs[i].chaos` of the JSON, and the lines it adds to the human report.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::fault_plan::FaultKind;
use super::ledger::LedgerSnapshot;
use super::storm_load::StormLoad;
use super::verdict::{longest_write_gap, Judgement, LostByKind};

/// One fault as it was played: offsets in milliseconds from the run's start (warm-up included).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TimelineEntry {
    /// What the fault was.
    pub fault: FaultKind,
    /// Its target and settings, e.g. `West US refused` or `write region -> North Europe`.
    pub detail: String,
    /// When it was applied.
    pub start_ms: u64,
    /// When it was lifted (none for one-off changes).
    pub end_ms: Option<u64>,
    /// Why it could not be applied, if it could not.
    pub error: Option<String>,
}

/// The chaos benchmark's figures.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ChaosReport {
    /// Writes (creates, replaces, PATCH increments) reported successful.
    pub acknowledged_writes: u64,
    /// Acknowledged writes whose effect the read-back did not find.
    pub lost_writes: u64,
    /// The same, by kind of write.
    #[serde(default)]
    pub lost_by_kind: LostByKind,
    /// Writes reported failed without ambiguity whose effect the read-back found.
    pub phantom_writes: u64,
    /// Counter increments landed minus increments acknowledged or ambiguous.
    pub patch_double_applied: u64,
    /// Writes that failed with an error leaving their outcome unknown.
    pub ambiguous_errors: u64,
    /// Point reads and queries that failed.
    pub read_errors: u64,
    /// Writes that failed (ambiguous ones included).
    pub write_errors: u64,
    /// The longest stretch of the measured window without an acknowledged write.
    pub max_write_unavailable_ms: u64,
    /// Where that stretch began, from the run's start.
    pub max_write_unavailable_from_ms: u64,
    /// Point reads and queries that succeeded.
    pub reads_ok: u64,
    /// Items, replace targets and counters the read-back could not read (neither lost nor fine).
    pub unverified: u64,
    /// Errors by operation and kind (`create 409/0`, `read transport`), the first 40 kinds.
    pub error_kinds: BTreeMap<String, u64>,
    /// The faults as played.
    pub timeline: Vec<TimelineEntry>,
    /// Requests and operations during the 429 storm (none when the storm did not both start and
    /// end).
    #[serde(default)]
    pub storm: Option<StormLoad>,
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl ChaosReport {
    /// The report of a run measured from `start` to `end` (from the run's start).
    pub fn new(
        judgement: &Judgement,
        ledger: &LedgerSnapshot,
        start: Duration,
        end: Duration,
        timeline: Vec<TimelineEntry>,
        storm: Option<StormLoad>,
    ) -> Self {
        let (gap, from) = longest_write_gap(&ledger.write_acks, start, end);
        ChaosReport {
            acknowledged_writes: judgement.acknowledged_writes,
            lost_writes: judgement.lost_writes,
            lost_by_kind: judgement.lost_by_kind,
            phantom_writes: judgement.phantom_writes,
            patch_double_applied: judgement.patch_double_applied,
            ambiguous_errors: judgement.ambiguous_errors,
            read_errors: ledger.read_errors,
            write_errors: judgement.write_errors,
            max_write_unavailable_ms: millis(gap),
            max_write_unavailable_from_ms: millis(from),
            reads_ok: ledger.reads_ok,
            unverified: judgement.unverified,
            error_kinds: ledger.error_kinds.clone(),
            timeline,
            storm,
        }
    }

    /// The rows of the human table: `(label, value)`.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        vec![
            ("acknowledged writes", self.acknowledged_writes.to_string()),
            (
                "lost writes",
                format!(
                    "{} (creates {}, replaces {}, increments {})",
                    self.lost_writes,
                    self.lost_by_kind.creates,
                    self.lost_by_kind.replaces,
                    self.lost_by_kind.increments
                ),
            ),
            ("phantom writes", self.phantom_writes.to_string()),
            (
                "patch double-applied",
                self.patch_double_applied.to_string(),
            ),
            ("ambiguous errors", self.ambiguous_errors.to_string()),
            ("write errors", self.write_errors.to_string()),
            ("read errors", self.read_errors.to_string()),
            ("unverified", self.unverified.to_string()),
            (
                "max write unavailable",
                format!(
                    "{} ms from {:.1} s",
                    self.max_write_unavailable_ms,
                    self.max_write_unavailable_from_ms as f64 / 1000.0
                ),
            ),
            ("429 storm: requests / operation", self.storm_summary()),
        ]
    }

    fn storm_summary(&self) -> String {
        self.storm
            .map_or("not measured".to_owned(), |s| s.summary())
    }

    /// The timeline and the error kinds, one line each, for the end of the human report.
    pub fn describe(&self) -> String {
        let storm = self.storm.map_or("not measured".to_owned(), |s| {
            let ratio = s
                .requests_per_operation
                .map_or("-".to_owned(), |r| format!("{r:.2}"));
            format!(
                "{} requests for {} operations started, {ratio} per operation",
                s.requests, s.operations
            )
        });
        let mut out = format!("429 storm: {storm}\nfault timeline (from the run's start):\n");
        for e in &self.timeline {
            let end = e.end_ms.map_or(String::new(), |end| {
                format!(" to {:.1} s", end as f64 / 1000.0)
            });
            let error = e
                .error
                .as_ref()
                .map_or(String::new(), |m| format!(" (not applied: {m})"));
            out.push_str(&format!(
                "  {:>6.1} s{end}  {:?}: {}{error}\n",
                e.start_ms as f64 / 1000.0,
                e.fault,
                e.detail
            ));
        }
        if !self.error_kinds.is_empty() {
            out.push_str("errors by operation and kind:\n");
            for (kind, n) in &self.error_kinds {
                out.push_str(&format!("  {n:>7}  {kind}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::chaos::storm_load::LoadMark;

    #[test]
    fn report_carries_the_judgement_and_the_gap() {
        let ms = Duration::from_millis;
        let ledger = LedgerSnapshot {
            write_acks: vec![ms(1100), ms(1200), ms(4200)],
            read_errors: 3,
            reads_ok: 10,
            ..Default::default()
        };
        let judgement = Judgement {
            acknowledged_writes: 3,
            lost_writes: 1,
            lost_by_kind: LostByKind {
                creates: 0,
                replaces: 1,
                increments: 0,
            },
            phantom_writes: 2,
            patch_double_applied: 4,
            ambiguous_errors: 5,
            write_errors: 6,
            unverified: 7,
        };
        let timeline = vec![TimelineEntry {
            fault: FaultKind::ReadRegionOutage,
            detail: "West US refused".into(),
            start_ms: 1500,
            end_ms: Some(2500),
            error: None,
        }];
        let storm = StormLoad::between(
            LoadMark {
                requests: 100,
                operations: 10,
            },
            LoadMark {
                requests: 340,
                operations: 110,
            },
        );
        let r = ChaosReport::new(
            &judgement,
            &ledger,
            ms(1000),
            ms(5000),
            timeline.clone(),
            Some(storm),
        );
        for (label, _) in r.rows() {
            assert!(
                crate::bench::table::explain(label).is_some(),
                "the table legend does not explain {label:?}"
            );
        }
        assert_eq!(
            (r.max_write_unavailable_ms, r.max_write_unavailable_from_ms),
            (3000, 1200)
        );
        assert_eq!(
            (r.lost_writes, r.phantom_writes, r.patch_double_applied),
            (1, 2, 4)
        );
        assert_eq!((r.read_errors, r.reads_ok, r.unverified), (3, 10, 7));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["timeline"][0]["fault"], "read-region-outage");
        assert_eq!(json["lost_writes"], 1);
        assert_eq!(json["lost_by_kind"]["replaces"], 1);
        assert!(r.rows().iter().any(|(label, value)| *label == "lost writes"
            && value == "1 (creates 0, replaces 1, increments 0)"));
        assert!(r
            .describe()
            .contains("1.5 s to 2.5 s  ReadRegionOutage: West US refused"));
        assert_eq!(r.rows().len(), 10);
        assert_eq!(json["storm"]["requests"], 240);
        assert_eq!(json["storm"]["operations"], 100);
        assert_eq!(json["storm"]["requests_per_operation"], 2.4);
        assert!(r
            .rows()
            .iter()
            .any(|(label, value)| *label == "429 storm: requests / operation"
                && value == "2.40 (240 requests for 100 operations)"));
        assert!(r.describe().starts_with(
            "429 storm: 240 requests for 100 operations started, 2.40 per operation\n"
        ));
        let unmeasured = ChaosReport::new(&judgement, &ledger, ms(1000), ms(5000), timeline, None);
        assert!(unmeasured
            .describe()
            .starts_with("429 storm: not measured\n"));
        assert!(serde_json::to_value(&unmeasured).unwrap()["storm"].is_null());
    }

    #[test]
    fn a_report_without_the_storm_field_still_reads() {
        let judgement = Judgement::default();
        let r = ChaosReport::new(
            &judgement,
            &LedgerSnapshot::default(),
            Duration::ZERO,
            Duration::ZERO,
            Vec::new(),
            None,
        );
        let mut json = serde_json::to_value(&r).unwrap();
        json.as_object_mut().unwrap().remove("storm");
        let back: ChaosReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
    }
}
