//! How a change feed is read: its mode, page size and the per-call request options.

use super::start_and_scope::ChangeFeedMode;
use crate::options::OperationOptions;

/// How a change feed is read. The per-call options (session token, consistency, excluded
/// regions, availability strategy) have the names of [`ItemOptions`](crate::ItemOptions)'s; set
/// ones win over the handle's options for every page request of the feed.
///
/// ```
/// use cosmos_driver::prelude::*;
///
/// let options = ChangeFeedOptions::new()
///     .with_mode(ChangeFeedMode::AllVersionsAndDeletes)
///     .with_max_item_count(100)
///     .with_excluded_regions(["West US"]);
/// assert_eq!(options.request.excluded_regions, Some(vec![Region::from("West US")]));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ChangeFeedOptions {
    /// Latest version (default) or all versions and deletes.
    pub mode: ChangeFeedMode,
    /// `x-ms-max-item-count`: the most changes one page holds.
    pub max_item_count: Option<u32>,
    /// Per-request options (session token, consistency, excluded regions, deadline, hedging); a
    /// field set here wins over the handle's options.
    pub request: OperationOptions,
}

impl ChangeFeedOptions {
    /// Default options: latest-version mode, the service's page size, the handle's options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the mode.
    pub fn with_mode(mut self, mode: ChangeFeedMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the most changes one page holds.
    pub fn with_max_item_count(mut self, n: u32) -> Self {
        self.max_item_count = Some(n);
        self
    }
}

crate::options::request_setters!(ChangeFeedOptions, "every page request");
