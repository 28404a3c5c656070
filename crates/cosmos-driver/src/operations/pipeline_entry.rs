//! The one door into the request pipeline. Every request an operation kind issues goes through it;
//! compound kinds are written against the trait so their rules can be tested with a double.

use std::future::Future;

use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::{self, DriverCore};
use crate::response::CosmosResponse;

/// Sends one request through retries, routing and hedging, and answers with its final response.
pub(crate) trait PipelineEntry {
    /// Carries out `operation` as one request (it is never PATCH: compound kinds build the plain
    /// requests they need).
    fn send(
        &self,
        operation: &CosmosOperation,
        options: &OperationOptions,
    ) -> impl Future<Output = Result<CosmosResponse, CosmosError>> + Send;
}

impl PipelineEntry for DriverCore {
    fn send(
        &self,
        operation: &CosmosOperation,
        options: &OperationOptions,
    ) -> impl Future<Output = Result<CosmosResponse, CosmosError>> + Send {
        pipeline::execute(self, operation, options)
    }
}
