//! Collects the rows of an operation while it runs; becomes a `DiagnosticsContext` at the end.

use tokio::time::Instant;

use super::context::{ActivityId, DiagnosticsContext};
use super::request::RequestDiagnostics;
use crate::hedging::HedgeDiagnostics;

/// The rows of one operation (or of one leg of a hedge race) as they are recorded.
#[derive(Debug)]
pub(crate) struct DiagnosticsRecorder {
    activity_id: ActivityId,
    started: Instant,
    rows: Vec<RequestDiagnostics>,
}

impl DiagnosticsRecorder {
    /// A recorder for an operation that starts now.
    pub(crate) fn start(activity_id: ActivityId, started: Instant) -> Self {
        Self { activity_id, started, rows: Vec::with_capacity(1) }
    }

    /// A recorder for a second leg of the same operation, sharing its start and activity id.
    pub(crate) fn sibling(&self) -> Self {
        Self { activity_id: self.activity_id, started: self.started, rows: Vec::with_capacity(1) }
    }

    /// When the operation started.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    pub(crate) fn activity_id(&self) -> ActivityId {
        self.activity_id
    }

    /// Records one attempt.
    pub(crate) fn record(&mut self, row: RequestDiagnostics) {
        self.rows.push(row);
    }

    /// The rows recorded so far.
    pub(crate) fn rows(&self) -> &[RequestDiagnostics] {
        &self.rows
    }

    /// Folds another leg's rows in, keeping all rows in the order they were sent.
    pub(crate) fn absorb(&mut self, other: DiagnosticsRecorder) {
        self.rows.extend(other.rows);
        self.rows.sort_by_key(|r| r.started_after);
    }

    /// The finished context. `returned_charge` is the charge of the response handed to the caller.
    pub(crate) fn finish(self, returned_charge: f64, hedge: Option<HedgeDiagnostics>) -> DiagnosticsContext {
        DiagnosticsContext {
            activity_id: self.activity_id,
            duration: self.started.elapsed(),
            requests: self.rows,
            hedge,
            request_charge: returned_charge,
        }
    }
}
