//! How one attempt ended: what the retry decision and the unknown-outcome rule read.

use std::time::Duration;

use crate::protocol::CosmosStatus;

/// How one attempt ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum AttemptOutcome {
    /// The service answered.
    Response {
        status: CosmosStatus,
        retry_after: Option<Duration>,
    },
    /// No connection: the request never reached the server.
    ConnectFailed,
    /// The connection failed after the request may have been sent.
    ConnectionLost,
    /// No answer within the request timeout (the request may have been processed).
    TimedOut,
    /// The answer was larger than the driver accepts: every attempt would get the same.
    TooLarge,
}
