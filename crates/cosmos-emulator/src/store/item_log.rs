//! Where a partition reports its commits, so a data directory can keep them across a restart.

use std::sync::Arc;

use super::stored_doc::{DocKey, StoredDoc};

/// Takes the writes of each commit, in commit order per partition (it is called under the
/// partition's lock, so it must only queue them, never wait).
pub(crate) trait ItemLog: Send + Sync {
    /// One commit of container `container_rid`: each key with its new version (None: deleted).
    fn record(&self, container_rid: &str, writes: &[(DocKey, Option<Arc<StoredDoc>>)]);
}

/// An [`ItemLog`] and the container whose partitions report to it.
#[derive(Clone)]
pub(crate) struct ItemSink {
    log: Arc<dyn ItemLog>,
    container_rid: Arc<str>,
}

impl ItemSink {
    /// Reports the commits of container `container_rid` to `log`.
    pub(crate) fn new(log: Arc<dyn ItemLog>, container_rid: &str) -> Self {
        Self {
            log,
            container_rid: container_rid.into(),
        }
    }

    pub(super) fn record(&self, writes: &[(DocKey, Option<Arc<StoredDoc>>)]) {
        self.log.record(&self.container_rid, writes);
    }
}
