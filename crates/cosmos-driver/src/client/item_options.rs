//! Per-call options of one item operation on a [`ContainerClient`](crate::ContainerClient).

use std::time::Duration;

use http::{HeaderName, HeaderValue};

use crate::error::CosmosError;
use crate::hedging::AvailabilityStrategy;
use crate::operation::Precondition;
use crate::options::OperationOptions;
use crate::protocol::{header_names as h, ConsistencyLevel, Region, SessionToken};
use crate::resources::trigger_include_header;

/// Options of one item operation (read, create, upsert, replace, delete, patch). Every field is
/// optional; an unset field falls back to the handle's options
/// ([`ContainerClient::with_options`](crate::ContainerClient::with_options)), then to the
/// driver's defaults.
///
/// ```
/// use cosmos_driver::prelude::*;
///
/// let options = ItemOptions::new()
///     .with_if_match("\"00000a00-0000-0000-0000-000000000000\"")
///     .with_consistency_level(ConsistencyLevel::Session)
///     .with_content_response_on_write(false);
/// assert!(options.precondition.is_some());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ItemOptions {
    /// An ETag condition (`If-Match` / `If-None-Match`); a write whose condition fails answers
    /// 412, a read answers 304.
    pub precondition: Option<Precondition>,
    /// The session token to send; wins over the driver's own session tracking for this call.
    pub session_token: Option<SessionToken>,
    /// A consistency level for this call (may only weaken the account's level).
    pub consistency_level: Option<ConsistencyLevel>,
    /// Regions this call must never be sent to.
    pub excluded_regions: Option<Vec<Region>>,
    /// Cross-region hedging strategy of this call (or `Disabled`).
    pub availability_strategy: Option<AvailabilityStrategy>,
    /// Whether a write's response carries the item (default true).
    pub content_response_on_write: Option<bool>,
    /// Bound on the whole call, retries included.
    pub end_to_end_timeout: Option<Duration>,
    /// Pre-triggers the write runs, by id (`x-ms-documentdb-pre-trigger-include`).
    pub pre_triggers: Vec<String>,
    /// Post-triggers the write runs, by id (`x-ms-documentdb-post-trigger-include`).
    pub post_triggers: Vec<String>,
}

impl ItemOptions {
    /// Empty options (everything inherited).
    pub fn new() -> Self {
        Self::default()
    }

    /// Succeeds only when the item's current ETag is `etag` (optimistic concurrency).
    pub fn with_if_match(mut self, etag: impl Into<String>) -> Self {
        self.precondition = Some(Precondition::IfMatch(etag.into()));
        self
    }

    /// Succeeds only when the item's current ETag differs from `etag` (`"*"`: a write fails when
    /// the item exists).
    pub fn with_if_none_match(mut self, etag: impl Into<String>) -> Self {
        self.precondition = Some(Precondition::IfNoneMatch(etag.into()));
        self
    }

    /// Sets the precondition.
    pub fn with_precondition(mut self, precondition: Precondition) -> Self {
        self.precondition = Some(precondition);
        self
    }

    /// Sets the session token.
    pub fn with_session_token(mut self, token: SessionToken) -> Self {
        self.session_token = Some(token);
        self
    }

    /// Sets the consistency level.
    pub fn with_consistency_level(mut self, level: ConsistencyLevel) -> Self {
        self.consistency_level = Some(level);
        self
    }

    /// Sets the regions this call must never be sent to.
    pub fn with_excluded_regions<I, R>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        self.excluded_regions = Some(regions.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the availability strategy.
    pub fn with_availability_strategy(mut self, strategy: AvailabilityStrategy) -> Self {
        self.availability_strategy = Some(strategy);
        self
    }

    /// Whether a write's response carries the item.
    pub fn with_content_response_on_write(mut self, on: bool) -> Self {
        self.content_response_on_write = Some(on);
        self
    }

    /// Sets the bound on the whole call.
    pub fn with_end_to_end_timeout(mut self, timeout: Duration) -> Self {
        self.end_to_end_timeout = Some(timeout);
        self
    }

    /// Runs the pre-triggers `ids` before the write (they must exist and be pre-triggers for this
    /// kind of write, or the write fails).
    pub fn with_pre_triggers<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.pre_triggers = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Runs the post-triggers `ids` after the write, inside its transaction.
    pub fn with_post_triggers<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.post_triggers = ids.into_iter().map(Into::into).collect();
        self
    }

    /// The trigger headers of these options (none when no trigger is named).
    pub(crate) fn trigger_headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, CosmosError> {
        let mut out = Vec::new();
        for (name, ids) in [
            (h::PRE_TRIGGER_INCLUDE, &self.pre_triggers),
            (h::POST_TRIGGER_INCLUDE, &self.post_triggers),
        ] {
            if let Some(value) = trigger_include_header(ids) {
                let value = HeaderValue::from_str(&value).map_err(|_| {
                    CosmosError::invalid_input(format!(
                        "the trigger ids {ids:?} cannot be sent in a header"
                    ))
                })?;
                out.push((name, value));
            }
        }
        Ok(out)
    }

    /// `base` with every field set here put over it ([`OperationOptions::over`], the one merge).
    pub(crate) fn over(&self, base: &OperationOptions) -> OperationOptions {
        OperationOptions {
            session_token: self.session_token.clone(),
            consistency_level: self.consistency_level,
            excluded_regions: self.excluded_regions.clone(),
            availability_strategy: self.availability_strategy,
            content_response_on_write: self.content_response_on_write,
            end_to_end_timeout: self.end_to_end_timeout,
            ..OperationOptions::default()
        }
        .over(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_fields_win_and_unset_fields_inherit() {
        let base = OperationOptions::new()
            .with_consistency_level(ConsistencyLevel::Eventual)
            .with_content_response_on_write(false);
        let merged = ItemOptions::new()
            .with_content_response_on_write(true)
            .with_excluded_regions(["West US"])
            .over(&base);
        assert_eq!(merged.consistency_level, Some(ConsistencyLevel::Eventual));
        assert_eq!(merged.content_response_on_write, Some(true));
        assert_eq!(merged.excluded_regions, Some(vec![Region::from("West US")]));
        assert_eq!(ItemOptions::new().over(&base), base);
    }

    #[test]
    fn triggers_become_their_headers() {
        assert!(ItemOptions::new().trigger_headers().unwrap().is_empty());
        let headers = ItemOptions::new()
            .with_pre_triggers(["stamp", "validate"])
            .with_post_triggers(["count"])
            .trigger_headers()
            .unwrap();
        let shown: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                ("x-ms-documentdb-pre-trigger-include", "stamp,validate"),
                ("x-ms-documentdb-post-trigger-include", "count")
            ]
        );
        let e = ItemOptions::new()
            .with_pre_triggers(["bad\nid"])
            .trigger_headers()
            .unwrap_err();
        assert!(e.message().contains("trigger ids"), "{}", e.message());
    }
}
