//! One row per HTTP attempt.

use std::time::Duration;

use http::HeaderValue;
use serde::ser::SerializeStruct;

use crate::protocol::Endpoint;
use crate::protocol::{CosmosStatus, Region};

/// Why an attempt was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttemptReason {
    /// The first attempt of the operation.
    FirstAttempt,
    /// A retry in the same region (throttling, transient error).
    Retry,
    /// A retry in another region after a failure.
    Failover,
    /// A retry after 404/1002 (the replica had not caught up with the session token).
    SessionRetry,
    /// The speculative alternate-region attempt of a hedge race (and its local retries).
    Hedge,
}

impl AttemptReason {
    /// A short stable name for logs and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            AttemptReason::FirstAttempt => "first_attempt",
            AttemptReason::Retry => "retry",
            AttemptReason::Failover => "failover",
            AttemptReason::SessionRetry => "session_retry",
            AttemptReason::Hedge => "hedge",
        }
    }
}

/// What happened to one HTTP attempt.
#[derive(Clone, Debug)]
pub struct RequestDiagnostics {
    pub(crate) region: Option<Region>,
    pub(crate) endpoint: Endpoint,
    pub(crate) status: Option<CosmosStatus>,
    pub(crate) request_charge: f64,
    /// Offset of the attempt's start from the operation's start.
    pub(crate) started_after: Duration,
    pub(crate) duration: Duration,
    pub(crate) reason: AttemptReason,
    pub(crate) activity_id: Option<HeaderValue>,
    /// Why no status was received (connection failure, attempt timeout, cancelled).
    pub(crate) failure: Option<&'static str>,
}

impl RequestDiagnostics {
    /// The region the attempt went to (`None` when the account lists no regions).
    pub fn region(&self) -> Option<&Region> {
        self.region.as_ref()
    }
    /// The endpoint the attempt went to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }
    /// The HTTP status and sub-status, when a response arrived.
    pub fn status(&self) -> Option<CosmosStatus> {
        self.status
    }
    /// Request units charged for this attempt.
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }
    /// How long after the operation started this attempt was sent.
    pub fn started_after(&self) -> Duration {
        self.started_after
    }
    /// How long the attempt took.
    pub fn duration(&self) -> Duration {
        self.duration
    }
    /// Why the attempt was sent.
    pub fn reason(&self) -> AttemptReason {
        self.reason
    }
    /// The service's activity id of the attempt.
    pub fn activity_id(&self) -> Option<&str> {
        self.activity_id.as_ref().and_then(|v| v.to_str().ok())
    }
    /// Why no response arrived, when none did.
    pub fn failure(&self) -> Option<&'static str> {
        self.failure
    }
}

impl serde::Serialize for RequestDiagnostics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RequestDiagnostics", 10)?;
        st.serialize_field("region", &self.region)?;
        st.serialize_field("endpoint", self.endpoint.as_str())?;
        st.serialize_field("status", &self.status.map(|s| s.status))?;
        st.serialize_field("sub_status", &self.status.map(|s| s.sub_status))?;
        st.serialize_field("request_charge", &self.request_charge)?;
        st.serialize_field(
            "started_after_ms",
            &(self.started_after.as_secs_f64() * 1e3),
        )?;
        st.serialize_field("duration_ms", &(self.duration.as_secs_f64() * 1e3))?;
        st.serialize_field("reason", self.reason.as_str())?;
        st.serialize_field("activity_id", &self.activity_id())?;
        st.serialize_field("failure", &self.failure)?;
        st.end()
    }
}
