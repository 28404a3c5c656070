//! What read many answers, and how it runs.

use crate::diagnostics::DiagnosticsContext;
use crate::options::OperationOptions;

use super::read_many_plan::DEFAULT_READ_MANY_CONCURRENCY;

/// The items read many found (in the caller's order; items that do not exist are absent), the
/// request units all its requests cost, and each request's diagnostics.
#[derive(Debug)]
pub struct ReadManyResponse<T> {
    pub(crate) items: Vec<T>,
    pub(crate) request_charge: f64,
    pub(crate) diagnostics: Vec<DiagnosticsContext>,
}

impl<T> ReadManyResponse<T> {
    /// The items found, in the order they were asked for.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The items found, owned.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// Request units charged by every request.
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }

    /// The diagnostics of each request (point reads, query pages, range listings).
    pub fn diagnostics(&self) -> &[DiagnosticsContext] {
        &self.diagnostics
    }
}

/// How read many runs. The per-call options of its requests (session token, consistency,
/// excluded regions, availability strategy) have the names of `ItemOptions`'s; set ones win over
/// the container handle's options.
#[derive(Clone, Debug)]
pub struct ReadManyOptions {
    /// Groups in flight at once (at least 1).
    pub max_concurrency: usize,
    /// Per-request options (session token, consistency, excluded regions, deadline, hedging); a
    /// field set here wins over the handle's options.
    pub request: OperationOptions,
}

impl ReadManyOptions {
    /// Default options: 8 groups in flight, the handle's options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the number of groups in flight (at least 1).
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = n.max(1);
        self
    }
}

impl Default for ReadManyOptions {
    fn default() -> Self {
        ReadManyOptions {
            max_concurrency: DEFAULT_READ_MANY_CONCURRENCY,
            request: OperationOptions::default(),
        }
    }
}

crate::options::request_setters!(ReadManyOptions, "every request");
