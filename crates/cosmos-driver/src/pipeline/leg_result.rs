//! What a leg ends with, and how that becomes the operation's response or error.

use bytes::Bytes;
use http::HeaderMap;

use super::retry_state::RetryState;
use crate::diagnostics::DiagnosticsRecorder;
use crate::error::{CosmosError, ErrorKind};
use crate::hedging::{HedgeDiagnostics, HedgeLegOutput};
use crate::protocol::{header_names as h, CosmosStatus};
use crate::protocol::{parse_retry_after, ResponseHeaders};
use crate::response::CosmosResponse;
use crate::routing::RegionEndpoint;
use crate::transport::RawResponse;

/// A response as the service sent it, any status.
#[derive(Debug)]
pub(crate) struct ServiceResponse {
    pub status: CosmosStatus,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// `x-ms-request-charge` (0 when absent).
    pub request_charge: f64,
}

impl ServiceResponse {
    pub(crate) fn from_raw(raw: RawResponse) -> Self {
        let sub = raw
            .headers
            .get(&h::SUB_STATUS)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        let request_charge = raw
            .headers
            .get(&h::REQUEST_CHARGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0.0);
        Self {
            status: CosmosStatus::new(raw.status.as_u16(), sub),
            headers: raw.headers,
            body: raw.body,
            request_charge,
        }
    }

    /// `x-ms-retry-after-ms`.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        parse_retry_after(self.headers.get(&h::RETRY_AFTER_MS))
    }
}

/// How a leg ended: with the service's answer (any status), or without one.
#[derive(Debug)]
pub(crate) enum LegEnd {
    Response(ServiceResponse),
    Error(CosmosError),
}

/// A finished leg: its end and its final retry state (its attempts are in the operation's sink).
#[derive(Debug)]
pub(crate) struct LegResult {
    pub end: LegEnd,
    pub state: RetryState,
    /// Where the last attempt went.
    pub region: Option<RegionEndpoint>,
    /// The leg turned the hub-region latch on after a 404/1002.
    pub observed_session_unavailable: bool,
    /// The leg ended because its retry decision called for another region, which a race's
    /// primary leaves to the race: the outcome is not the operation's answer, only a reason to go
    /// elsewhere.
    pub moved_on: bool,
    /// The leg's request names a partition key range and the answer says it is gone
    /// ([`crate::protocol::is_range_gone`]): every region gives the same answer, so it is final
    /// for a race and goes straight to the caller's split handling.
    pub range_gone: bool,
}

impl LegResult {
    /// The status of the leg's end, `None` when no response arrived.
    pub(crate) fn cosmos_status(&self) -> Option<CosmosStatus> {
        match &self.end {
            LegEnd::Response(r) => Some(r.status),
            LegEnd::Error(e) => e.cosmos_status(),
        }
    }

    /// The operation's result from a leg's end, with the operation's recorded attempts and the
    /// race's hedge diagnostics, if any.
    pub(crate) fn finish(
        end: LegEnd,
        diagnostics: DiagnosticsRecorder,
        hedge: Option<HedgeDiagnostics>,
    ) -> Result<CosmosResponse, CosmosError> {
        match end {
            LegEnd::Response(r) if r.status.status < 400 => {
                let charge = r.request_charge;
                Ok(CosmosResponse::new(
                    r.status,
                    ResponseHeaders::new(r.headers),
                    r.body,
                    diagnostics.finish(charge, hedge),
                ))
            }
            LegEnd::Response(r) => {
                let charge = r.request_charge;
                let e = CosmosError::service(r.status, ResponseHeaders::new(r.headers), r.body);
                Err(e.with_diagnostics(diagnostics.finish(charge, hedge)))
            }
            LegEnd::Error(e) => Err(e.with_diagnostics(diagnostics.finish(0.0, hedge))),
        }
    }
}

impl HedgeLegOutput for LegResult {
    fn status(&self) -> Option<CosmosStatus> {
        self.cosmos_status()
    }

    fn partition_key_range_id(&self) -> Option<&str> {
        match &self.end {
            LegEnd::Response(r) => r
                .headers
                .get(&h::PARTITION_KEY_RANGE_ID)
                .and_then(|v| v.to_str().ok()),
            LegEnd::Error(_) => self
                .state
                .partition_key_range_id
                .as_ref()
                .and_then(|v| v.to_str().ok()),
        }
    }

    fn observed_session_unavailable(&self) -> bool {
        self.observed_session_unavailable
    }

    /// Errors made locally (bad input, credential failure) are final: another region would fail
    /// the same way. Transport failures, timeouts and "no eligible region" are transient. A leg that
    /// ended to move to another region (`moved_on`, a 403/1008 included) is transient: its outcome
    /// only says the answer must come from elsewhere.
    ///
    /// A request pinned to a range that is gone is final: every region answers the same. A read's
    /// 403/3 is transient: it only says the read carried the hub-region header to a region that is
    /// not the hub (races only ever run reads).
    fn is_final(&self) -> bool {
        if self.range_gone {
            return true;
        }
        if self.moved_on {
            return false;
        }
        if self.cosmos_status().is_some_and(|s| {
            crate::protocol::StatusClass::of(s) == crate::protocol::StatusClass::WriteForbidden
        }) {
            return false;
        }
        match &self.end {
            LegEnd::Error(e) if e.status().is_none() => matches!(
                e.kind(),
                ErrorKind::InvalidInput
                    | ErrorKind::Credential
                    | ErrorKind::NotSupported
                    | ErrorKind::Deserialization
            ),
            _ => {
                crate::hedging::classify_hedge_result(self.cosmos_status())
                    == crate::hedging::LegOutcome::Final
            }
        }
    }

    /// A leg that ended to move to another region sends the alternate at once: the alternate is
    /// where that move would have gone. Otherwise the status decides (§7.2.1).
    fn may_start_hedge(&self) -> bool {
        self.moved_on
            || (!self.is_final() && crate::hedging::may_start_hedge_after(self.cosmos_status()))
    }
}
