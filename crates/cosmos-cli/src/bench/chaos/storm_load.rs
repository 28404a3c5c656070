//! The load of the 429 storm: the requests the emulator saw and the operations the workload started
//! while the storm lasted, each read at the storm's start and at its end, and their ratio.
//!
//! Operations started just before the storm may send some of their requests inside it, and
//! operations started just before its end may send some after; at a steady rate the two edges
//! roughly cancel, so the ratio is the storm's requests per operation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Both counters read at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadMark {
    /// Requests the emulator has seen so far (every region, every kind of request).
    pub requests: u64,
    /// Operations the workload has started so far.
    pub operations: u64,
}

/// Every request counted in an emulator counter snapshot (`{"East US":{"read":3,...},...}`): the
/// sum over regions and kinds. Anything that is not a count is ignored.
pub fn requests_seen(snapshot: &Value) -> u64 {
    snapshot
        .as_object()
        .into_iter()
        .flat_map(|regions| regions.values())
        .filter_map(Value::as_object)
        .flat_map(|kinds| kinds.values())
        .filter_map(Value::as_u64)
        .fold(0, u64::saturating_add)
}

/// `runs[i].chaos.storm` of the JSON: what the storm window saw.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct StormLoad {
    /// Requests the emulator saw during the storm.
    pub requests: u64,
    /// Operations the workload started during the storm.
    pub operations: u64,
    /// `requests / operations`; none when no operation started.
    pub requests_per_operation: Option<f64>,
}

impl StormLoad {
    /// The load between two marks (counters only grow; a smaller end reads as zero).
    pub fn between(start: LoadMark, end: LoadMark) -> Self {
        let requests = end.requests.saturating_sub(start.requests);
        let operations = end.operations.saturating_sub(start.operations);
        StormLoad {
            requests,
            operations,
            requests_per_operation: (operations > 0).then(|| requests as f64 / operations as f64),
        }
    }

    /// One line for the human report: `2.41 (1735 requests for 720 operations)`.
    pub fn summary(&self) -> String {
        let ratio = self
            .requests_per_operation
            .map_or("-".to_owned(), |r| format!("{r:.2}"));
        format!(
            "{ratio} ({} requests for {} operations)",
            self.requests, self.operations
        )
    }
}

/// The storm's two marks, as the fault player takes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StormWindow {
    start: Option<LoadMark>,
    end: Option<LoadMark>,
}

impl StormWindow {
    /// The storm started: the first start counts (a schedule has one storm).
    pub fn open(&mut self, mark: LoadMark) {
        if self.start.is_none() {
            self.start = Some(mark);
        }
    }

    /// The storm ended (or the run did while it lasted): ignored before a start or after an end.
    pub fn close(&mut self, mark: LoadMark) {
        if self.start.is_some() && self.end.is_none() {
            self.end = Some(mark);
        }
    }

    /// The load of a storm that started and ended; none otherwise.
    pub fn load(&self) -> Option<StormLoad> {
        Some(StormLoad::between(self.start?, self.end?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mark(requests: u64, operations: u64) -> LoadMark {
        LoadMark {
            requests,
            operations,
        }
    }

    #[test]
    fn requests_are_summed_over_regions_and_kinds() {
        let cases = [
            (json!({}), 0),
            (json!({"East US": {"read": 3, "create": 0}}), 3),
            (
                json!({"East US": {"read": 3, "patch": 2}, "West US": {"query": 5, "metadata": 1}}),
                11,
            ),
            (
                json!({"East US": {"read": 3, "note": "x"}, "West US": 7}),
                3,
            ),
            (json!([1, 2]), 0),
            (json!({"A": {"read": u64::MAX}, "B": {"read": 1}}), u64::MAX),
        ];
        for (snapshot, total) in cases {
            assert_eq!(requests_seen(&snapshot), total, "{snapshot}");
        }
    }

    #[test]
    fn the_load_is_the_difference_of_the_marks() {
        // (start, end, requests, operations, requests per operation)
        let cases = [
            (mark(100, 40), mark(340, 140), 240, 100, Some(2.4)),
            (mark(0, 0), mark(5, 5), 5, 5, Some(1.0)),
            (mark(10, 7), mark(30, 7), 20, 0, None),
            (mark(50, 9), mark(40, 8), 0, 0, None),
        ];
        for (start, end, requests, operations, ratio) in cases {
            let load = StormLoad::between(start, end);
            assert_eq!(
                (load.requests, load.operations, load.requests_per_operation),
                (requests, operations, ratio),
                "{start:?} -> {end:?}"
            );
        }
    }

    #[test]
    fn a_window_needs_its_start_then_its_end() {
        let mut w = StormWindow::default();
        assert_eq!(w.load(), None);
        w.close(mark(9, 9));
        assert_eq!(w.load(), None, "an end before any start is ignored");
        w.open(mark(10, 4));
        w.open(mark(20, 8));
        assert_eq!(w.load(), None, "open");
        w.close(mark(40, 14));
        w.close(mark(90, 30));
        let load = w.load().unwrap();
        assert_eq!((load.requests, load.operations), (30, 10));
        assert_eq!(load.requests_per_operation, Some(3.0));
    }

    #[test]
    fn json_and_summary() {
        let load = StormLoad::between(mark(0, 0), mark(1735, 720));
        let json = serde_json::to_value(load).unwrap();
        assert_eq!(json["requests"], 1735);
        assert_eq!(json["operations"], 720);
        let ratio = json["requests_per_operation"].as_f64().unwrap();
        assert!((ratio - 1735.0 / 720.0).abs() < 1e-12);
        assert_eq!(load.summary(), "2.41 (1735 requests for 720 operations)");
        let empty = StormLoad::between(mark(3, 0), mark(3, 0));
        assert!(serde_json::to_value(empty).unwrap()["requests_per_operation"].is_null());
        assert_eq!(empty.summary(), "- (0 requests for 0 operations)");
    }
}
