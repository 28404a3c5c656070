//! Collects the rows of an operation while it runs; becomes a `DiagnosticsContext` at the end.
//!
//! The legs of an operation share one recorder through a [`DiagnosticsSink`] (a mutex: both legs of
//! a hedge race run on one task, so it is never contended), which lets an attempt that is cancelled
//! mid-flight still leave its row.

use tokio::time::Instant;

use super::diagnostics_context::{ActivityId, DiagnosticsContext};
use super::hedge_diagnostics::HedgeDiagnostics;
use super::request::RequestDiagnostics;

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
        Self {
            activity_id,
            started,
            rows: Vec::with_capacity(1),
        }
    }

    /// Records one attempt.
    pub(crate) fn record(&mut self, row: RequestDiagnostics) {
        self.rows.push(row);
    }

    /// The rows recorded so far.
    pub(crate) fn rows(&self) -> &[RequestDiagnostics] {
        &self.rows
    }

    /// The finished context, rows in the order they were sent. `returned_charge` is the charge of
    /// the response handed to the caller.
    pub(crate) fn finish(
        mut self,
        returned_charge: f64,
        hedge: Option<HedgeDiagnostics>,
    ) -> DiagnosticsContext {
        self.rows.sort_by_key(|r| r.started_after);
        DiagnosticsContext {
            activity_id: self.activity_id,
            duration: self.started.elapsed(),
            requests: self.rows,
            hedge,
            request_charge: returned_charge,
        }
    }
}

/// The recorder shared by the legs of one operation.
pub(crate) type DiagnosticsSink = std::sync::Mutex<DiagnosticsRecorder>;

/// A new sink for an operation that starts at `started`.
pub(crate) fn sink(activity_id: ActivityId, started: Instant) -> DiagnosticsSink {
    std::sync::Mutex::new(DiagnosticsRecorder::start(activity_id, started))
}

/// Records `row` into `sink`.
pub(crate) fn record(sink: &DiagnosticsSink, row: RequestDiagnostics) {
    match sink.lock() {
        Ok(mut r) => r.record(row),
        Err(poisoned) => poisoned.into_inner().record(row),
    }
}

/// The recorder out of `sink`.
pub(crate) fn into_recorder(sink: DiagnosticsSink) -> DiagnosticsRecorder {
    sink.into_inner().unwrap_or_else(|p| p.into_inner())
}
