//! What happened: per-attempt rows, the operation's context, and the recorder the pipeline fills.

mod context;
#[cfg(feature = "otel")]
pub mod otel;
mod recorder;
mod request;

pub use context::{ActivityId, DiagnosticsContext};
pub(crate) use recorder::{into_recorder, record, sink, DiagnosticsRecorder, DiagnosticsSink};
pub use request::{AttemptReason, RequestDiagnostics};
