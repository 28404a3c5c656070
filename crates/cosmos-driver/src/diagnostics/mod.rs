//! What happened: per-attempt rows, the operation's context, and the recorder the pipeline fills.

mod diagnostics_context;
mod hedge_diagnostics;
mod recorder;
mod request;

pub use diagnostics_context::{ActivityId, DiagnosticsContext};
pub use hedge_diagnostics::{HedgeDiagnostics, HedgeTerminalState, HedgingStrategyConfig};
pub(crate) use recorder::{into_recorder, record, sink, DiagnosticsRecorder, DiagnosticsSink};
pub use request::{AttemptReason, RequestDiagnostics};
