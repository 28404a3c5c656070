//! What happened: per-attempt rows, the operation's context, and the recorder the pipeline fills.

mod diagnostics_context;
mod recorder;
mod request;

pub use diagnostics_context::{ActivityId, DiagnosticsContext};
pub(crate) use recorder::{into_recorder, record, sink, DiagnosticsRecorder, DiagnosticsSink};
pub use request::{AttemptReason, RequestDiagnostics};
