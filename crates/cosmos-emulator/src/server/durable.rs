//! The data directory's part of a request: a write is answered once it is on disk.

use std::sync::Arc;

use http::Method;

use crate::exchange::Shared;
use crate::persist;
use crate::protocol::route::Route;
use crate::protocol::ApiError;

/// The store of a shared state, for the compaction task that outlives the request.
struct StoreOf(Arc<Shared>);

impl std::ops::Deref for StoreOf {
    type Target = crate::store::Store;
    fn deref(&self) -> &Self::Target {
        &self.0.store
    }
}

/// After the handler of a request that may have written: records a catalog change, waits until
/// what was recorded is fsync'd and starts a compaction when the log has grown. Err (503) when
/// the data directory cannot be written.
pub async fn settle(
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
    let catalog = succeeded && persist::changes_catalog(method, &route.resource, is_query);
    data.settle(&shared.store, catalog).await.map_err(|why| {
        ApiError::new(
            503,
            format!(
                "The data directory cannot keep this write ({why}); it may not survive a restart."
            ),
        )
    })?;
    if data.wants_compaction() {
        tokio::spawn(data.clone().compact(StoreOf(shared.clone())));
    }
    Ok(())
}
