//! What happened during one operation: its attempts, its duration and its cost.

use std::fmt;
use std::time::Duration;

use serde::ser::SerializeStruct;

use super::hedge_diagnostics::HedgeDiagnostics;
use super::request::RequestDiagnostics;

/// A client-side id of one operation, shown in diagnostics and logs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActivityId(u128);

impl ActivityId {
    /// A new random id.
    pub fn new() -> Self {
        ActivityId(rand::random::<u128>())
    }
}

impl Default for ActivityId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ActivityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // UUID layout with the version 4 / variant bits set.
        let v = (self.0 & !(0xF000 << 64) & !(0xC000 << 48)) | (0x4000 << 64) | (0x8000 << 48);
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v & 0xFFFF_FFFF_FFFF
        )
    }
}

impl fmt::Debug for ActivityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The diagnostics of one operation, attached to its response or error.
#[derive(Clone, Debug, Default)]
pub struct DiagnosticsContext {
    pub(crate) activity_id: ActivityId,
    pub(crate) duration: Duration,
    pub(crate) requests: Vec<RequestDiagnostics>,
    pub(crate) hedge: Option<HedgeDiagnostics>,
    pub(crate) request_charge: f64,
}

impl DiagnosticsContext {
    /// The operation's client-side activity id.
    pub fn activity_id(&self) -> ActivityId {
        self.activity_id
    }

    /// Wall time of the whole operation, retries included.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// Every HTTP attempt, in the order they were sent.
    pub fn requests(&self) -> &[RequestDiagnostics] {
        &self.requests
    }

    /// The hedge race's diagnostics, when the operation entered one.
    pub fn hedge(&self) -> Option<&HedgeDiagnostics> {
        self.hedge.as_ref()
    }

    /// Attaches the hedge race's diagnostics.
    pub fn set_hedge(&mut self, hedge: HedgeDiagnostics) {
        self.hedge = Some(hedge);
    }

    /// The request charge the caller is billed for: the charge of the response that was returned.
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }

    /// The request charge of every attempt, including retries and losing hedge attempts.
    pub fn total_request_charge(&self) -> f64 {
        self.requests.iter().map(|r| r.request_charge).sum()
    }

    /// The regions attempts went to, in order (one entry per attempt).
    pub fn regions_contacted(&self) -> impl Iterator<Item = Option<&crate::protocol::Region>> {
        self.requests.iter().map(|r| r.region.as_ref())
    }

    /// One context for several operations carried out as one (PATCH's read and replace): rows
    /// concatenated in order, durations and charges summed, the first activity id kept, the last
    /// hedge diagnostics kept.
    pub fn aggregate(contexts: impl IntoIterator<Item = DiagnosticsContext>) -> DiagnosticsContext {
        let mut out: Option<DiagnosticsContext> = None;
        for c in contexts {
            match &mut out {
                None => out = Some(c),
                Some(acc) => {
                    acc.duration += c.duration;
                    acc.request_charge += c.request_charge;
                    acc.requests.extend(c.requests);
                    if c.hedge.is_some() {
                        acc.hedge = c.hedge;
                    }
                }
            }
        }
        out.unwrap_or_default()
    }

    /// The context as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl serde::Serialize for DiagnosticsContext {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("DiagnosticsContext", 6)?;
        st.serialize_field("activity_id", &self.activity_id.to_string())?;
        st.serialize_field("duration_ms", &(self.duration.as_secs_f64() * 1e3))?;
        st.serialize_field("request_charge", &self.request_charge)?;
        st.serialize_field("total_request_charge", &self.total_request_charge())?;
        st.serialize_field("requests", &self.requests)?;
        st.serialize_field("hedge", &self.hedge)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::AttemptReason;
    use crate::protocol::CosmosStatus;
    use crate::protocol::Endpoint;

    fn row(charge: f64, reason: AttemptReason) -> RequestDiagnostics {
        RequestDiagnostics {
            region: Some("East US".into()),
            endpoint: Endpoint::parse("https://a.example:443/", false).unwrap(),
            status: Some(CosmosStatus::new(200, 0)),
            request_charge: charge,
            started_after: Duration::ZERO,
            duration: Duration::from_millis(3),
            reason,
            activity_id: None,
            failure: None,
        }
    }

    #[test]
    fn aggregate_concatenates_and_sums() {
        let a = DiagnosticsContext {
            duration: Duration::from_millis(10),
            requests: vec![row(1.0, AttemptReason::FirstAttempt)],
            request_charge: 1.0,
            ..Default::default()
        };
        let b = DiagnosticsContext {
            duration: Duration::from_millis(5),
            requests: vec![
                row(2.0, AttemptReason::FirstAttempt),
                row(3.0, AttemptReason::Retry),
            ],
            request_charge: 3.0,
            ..Default::default()
        };
        let first_id = a.activity_id;
        let all = DiagnosticsContext::aggregate([a, b]);
        assert_eq!(all.activity_id(), first_id);
        assert_eq!(all.duration(), Duration::from_millis(15));
        assert_eq!(all.requests().len(), 3);
        assert_eq!(all.requests()[2].reason(), AttemptReason::Retry);
        assert_eq!(all.request_charge(), 4.0);
        assert_eq!(all.total_request_charge(), 6.0);
    }

    #[test]
    fn serializes_to_json() {
        let d = DiagnosticsContext {
            requests: vec![row(1.5, AttemptReason::Failover)],
            request_charge: 1.5,
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
        assert_eq!(v["requests"][0]["region"], "East US");
        assert_eq!(v["requests"][0]["reason"], "failover");
        assert_eq!(v["requests"][0]["status"], 200);
        assert_eq!(v["total_request_charge"], 1.5);
        assert_eq!(v["activity_id"].as_str().unwrap().len(), 36);
    }
}
