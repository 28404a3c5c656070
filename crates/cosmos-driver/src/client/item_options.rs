//! Per-call options of one item operation on a [`ContainerClient`](crate::ContainerClient).

use http::{HeaderName, HeaderValue};

use crate::error::CosmosError;
use crate::operation::Precondition;
use crate::options::{OperationOptions, PatchStrategy};
use crate::protocol::header_names as h;
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
    /// The call's request options (session token, consistency level, excluded regions,
    /// availability strategy, whether a write's response carries the item, the bound on the whole
    /// call); a field set here wins over the handle's options.
    pub request: OperationOptions,
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

    /// How a PATCH through these options is carried out (default [`PatchStrategy::Auto`]).
    pub fn with_patch_strategy(mut self, strategy: PatchStrategy) -> Self {
        self.request.patch_strategy = Some(strategy);
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
        self.request.over(base)
    }
}

crate::options::request_setters!(ItemOptions, "this call", writes);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hedging::AvailabilityStrategy;
    use crate::protocol::{ConsistencyLevel, Region, SessionToken};

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

    #[test]
    fn the_call_setters_write_the_operation_options() {
        let token = SessionToken::parse("0:1#5").unwrap();
        let item = ItemOptions::new()
            .with_session_token(token.clone())
            .with_consistency_level(ConsistencyLevel::Eventual)
            .with_excluded_regions(["West US"])
            .with_availability_strategy(AvailabilityStrategy::Disabled)
            .with_content_response_on_write(false)
            .with_end_to_end_timeout(Duration::from_secs(3));
        let operation = OperationOptions::new()
            .with_session_token(token)
            .with_consistency_level(ConsistencyLevel::Eventual)
            .with_excluded_regions(["West US"])
            .with_availability_strategy(AvailabilityStrategy::Disabled)
            .with_content_response_on_write(false)
            .with_end_to_end_timeout(Duration::from_secs(3));
        assert_eq!(item.request, operation);
        assert_eq!(item.over(&OperationOptions::new()), operation);
        assert_eq!(ItemOptions::new().request, OperationOptions::new());
    }
}
