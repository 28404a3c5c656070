//! Hands a finished operation to the OpenTelemetry instruments (feature `otel`).

use std::time::SystemTime;

use super::driver_core::DriverCore;
use crate::diagnostics::otel::{operation_name, OperationSummary};
use crate::error::CosmosError;
use crate::operation::{CosmosOperation, OperationTarget};
use crate::response::CosmosResponse;

/// Records `operation`, started at `started`, with its result.
pub(crate) fn record(
    core: &DriverCore,
    operation: &CosmosOperation,
    result: &Result<CosmosResponse, CosmosError>,
    started: SystemTime,
) {
    let (database, container) = match operation.target() {
        OperationTarget::Database(d)
        | OperationTarget::Containers(d)
        | OperationTarget::Users(d) => (Some(d.id()), None),
        OperationTarget::User(u) | OperationTarget::Permissions(u) => {
            (Some(u.database().id()), None)
        }
        OperationTarget::Permission(p) => (Some(p.user().database().id()), None),
        OperationTarget::Container(c)
        | OperationTarget::Items(c)
        | OperationTarget::PartitionKeyRanges(c)
        | OperationTarget::Scripts(c, _)
        | OperationTarget::Conflicts(c) => (Some(c.database().id()), Some(c.id())),
        OperationTarget::Conflict(c) => (
            Some(c.container().database().id()),
            Some(c.container().id()),
        ),
        OperationTarget::Script(s) => (
            Some(s.container().database().id()),
            Some(s.container().id()),
        ),
        OperationTarget::Item(i) => (
            Some(i.container().database().id()),
            Some(i.container().id()),
        ),
        OperationTarget::Account
        | OperationTarget::Databases
        | OperationTarget::Offers
        | OperationTarget::Offer(_) => (None, None),
    };
    let (status, failed, diagnostics) = match result {
        Ok(r) => (Some(r.cosmos_status()), false, r.diagnostics()),
        Err(e) => (e.cosmos_status(), true, e.diagnostics()),
    };
    core.telemetry.record(&OperationSummary {
        name: operation_name(operation.operation_type(), operation.resource_type()),
        database,
        container,
        status,
        failed,
        started,
        diagnostics,
    });
}
