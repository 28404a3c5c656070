//! The data directory's part of a request: a write is answered once it is on disk.

use std::sync::Arc;

use http::Method;

use crate::exchange::Shared;
use crate::persist;
use crate::protocol::route::Route;
use crate::protocol::ApiError;

/// What a data directory keeps of a shared state, for the compaction task that outlives the
/// request.
struct Kept(Arc<Shared>);

impl persist::State for Kept {
    fn store(&self) -> &crate::store::Store {
        &self.0.store
    }
    fn scripts(&self) -> &crate::scripts::Scripts {
        &self.0.scripts
    }
}

/// Before the handler: once the data directory could not be written, a request that may change
/// something is refused (503) without being applied, so what is served does not drift further
/// from what a restart would load. Reads go on.
pub(super) fn refuse_when_failed(
    shared: &Shared,
    parts: &http::request::Parts,
    route: &Route,
) -> Result<(), ApiError> {
    // Only a failed data directory costs the request a classification.
    let Some(why) = shared.data.as_ref().and_then(|data| data.failure()) else {
        return Ok(());
    };
    let operation = crate::exchange::request_class::operation(&parts.method, route, &parts.headers);
    if operation.is_some_and(|op| op.reads_only()) {
        return Ok(());
    }
    Err(ApiError::new(
            503,
            format!(
                "The data directory could not be written ({why}); changes are refused until the emulator restarts with room to write."
            ),
    ))
}

/// After the handler of a request that may have written: records a change to the catalog, to
/// scripts or to users, waits until
/// what was recorded is fsync'd and starts a compaction when the log has grown. Err (503) when
/// the data directory cannot be written.
pub(super) async fn settle(
    shared: &Arc<Shared>,
    method: &Method,
    route: &Route,
    is_query: bool,
    succeeded: bool,
) -> Result<(), ApiError> {
    let Some(data) = &shared.data else {
        return Ok(());
    };
    if !persist::may_write(method) {
        return Ok(());
    }
    let change = persist::change_of(method, &route.resource, is_query).filter(|_| succeeded);
    data.settle(&shared.store, &shared.scripts, change)
        .await
        .map_err(|why| {
            ApiError::new(
                503,
                format!(
                "The data directory cannot keep this write ({why}); it may not survive a restart."
            ),
            )
        })?;
    if data.wants_compaction() {
        tokio::spawn(data.clone().compact(Kept(shared.clone())));
    }
    Ok(())
}
