//! What a committed transactional batch answers: one result per operation, in order, with the
//! request's charge, session token and diagnostics.

use super::results::BatchOperationResult;
use crate::diagnostics::DiagnosticsContext;
use crate::protocol::CosmosStatus;
use crate::protocol::ResponseHeaders;

/// A committed transactional batch: every operation succeeded and was applied.
#[derive(Debug)]
pub struct BatchResponse {
    pub(crate) results: Vec<BatchOperationResult>,
    pub(crate) status: CosmosStatus,
    pub(crate) headers: ResponseHeaders,
    pub(crate) diagnostics: DiagnosticsContext,
}

impl BatchResponse {
    /// One result per operation, in the order the operations were added.
    pub fn results(&self) -> &[BatchOperationResult] {
        &self.results
    }

    /// The results, owned.
    pub fn into_results(self) -> Vec<BatchOperationResult> {
        self.results
    }

    /// The result of operation `index`.
    pub fn get(&self, index: usize) -> Option<&BatchOperationResult> {
        self.results.get(index)
    }

    /// The batch request's status.
    pub fn status(&self) -> CosmosStatus {
        self.status
    }

    /// Request units the whole batch consumed.
    pub fn request_charge(&self) -> f64 {
        self.headers.request_charge()
    }

    /// The session token the service returned.
    pub fn session_token(&self) -> Option<&str> {
        self.headers.session_token()
    }

    /// The response headers.
    pub fn headers(&self) -> &ResponseHeaders {
        &self.headers
    }

    /// What happened while the batch was sent (attempts, regions, charges).
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        &self.diagnostics
    }
}
