//! What every attempt of one operation shares: the operation, its resolved options, the account
//! snapshot taken at its start, and its deadline.

use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use tokio::time::Instant;

use super::driver_core::DriverCore;
use super::retry::OperationFacts;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::EffectiveOptions;
use crate::protocol::{ConsistencyLevel, Region, ResourceType};
use crate::routing::{
    applicable, region_list, route_candidates, AccountSnapshot, Candidates, RegionEndpoint,
    RouteQuery,
};
use crate::session::ContainerSession;

/// One operation in flight.
#[derive(Debug)]
pub(crate) struct OperationContext<'a> {
    pub core: &'a DriverCore,
    pub operation: &'a CosmosOperation,
    pub options: EffectiveOptions<'a>,
    /// The account metadata when the operation started.
    pub account: Arc<AccountSnapshot>,
    /// When the operation started.
    pub started: Instant,
    /// The end-to-end deadline, shared by every attempt (and both legs of a hedge race).
    pub deadline: Option<Instant>,
    /// The container link (session tokens and the breaker are kept per container).
    pub container: Option<&'a Arc<str>>,
    /// The precondition header, validated.
    pub precondition: Option<(HeaderName, HeaderValue)>,
    /// The caller's session token as a header (it wins over the driver's tracking).
    pub caller_session_token: Option<HeaderValue>,
    /// Whether the driver's own session token is sent.
    pub send_tracked_session_token: bool,
    /// The container's session state (item operations only), looked up once.
    pub session: Option<ContainerSession>,
    /// Regions where an attempt of this operation failed with a status from its partition (which
    /// marks no endpoint for other operations): routing of this operation's later rounds and
    /// re-routes tries them last.
    failed_regions: std::sync::Mutex<Vec<Region>>,
}

impl<'a> OperationContext<'a> {
    /// Prepares an operation; fails on inputs that cannot be sent.
    pub(crate) fn new(
        core: &'a DriverCore,
        operation: &'a CosmosOperation,
        options: EffectiveOptions<'a>,
        started: Instant,
    ) -> Result<Self, CosmosError> {
        let account = core.account.snapshot();
        let precondition = operation.precondition().map(|p| p.header()).transpose()?;
        let caller_session_token = options
            .session_token
            .map(|t| {
                HeaderValue::from_str(&t.to_string()).map_err(|_| {
                    CosmosError::invalid_input("the session token is not a valid header value")
                })
            })
            .transpose()?;
        let container = operation.container().map(|c| c.link_arc());
        let data_plane = operation.resource_type() == ResourceType::Document;
        let consistency = options
            .consistency_level
            .unwrap_or(account.properties.default_consistency);
        // A query plan reads no data: it needs no session token (with many ranges, the whole
        // token would be the one large header of a query).
        let send_tracked_session_token = data_plane
            && !operation.is_query_plan_request()
            && consistency == ConsistencyLevel::Session
            && (operation.operation_type().is_read_only() || account.properties.multi_write);
        let session = if data_plane {
            container.and_then(|c| core.sessions.session(c))
        } else {
            None
        };
        Ok(Self {
            session,
            core,
            operation,
            options,
            deadline: options.end_to_end_timeout.map(|t| started + t),
            account,
            started,
            container,
            precondition,
            caller_session_token,
            send_tracked_session_token,
            failed_regions: Default::default(),
        })
    }

    /// Remembers that `region` failed this operation.
    pub(crate) fn record_failed_region(&self, region: &Region) {
        if let Ok(mut failed) = self.failed_regions.lock() {
            if !failed.contains(region) {
                failed.push(region.clone());
            }
        }
    }

    /// The retry facts of this operation, for a leg that is `local_only` or not.
    pub(crate) fn facts(&self, local_only: bool, multi_write: bool) -> OperationFacts {
        OperationFacts {
            operation_type: self.operation.operation_type(),
            resource_type: self.operation.resource_type(),
            multi_write,
            local_only,
            range_pinned: self.operation.partition_key_range_id().is_some(),
        }
    }

    /// Whether the operation reads.
    pub(crate) fn is_read(&self) -> bool {
        self.operation.operation_type().is_read_only()
    }

    /// The partition key range the operation's partition key was last seen in (only known while the
    /// circuit breaker tracks something).
    ///
    /// A request that names its range (a cross-partition query page, a range's feed page) is that
    /// range's, whatever its key.
    pub(crate) fn learned_range(&self) -> Option<Arc<str>> {
        let container = self.container?;
        if let Some(named) = self.operation.partition_key_range_id() {
            if !self.core.breaker.is_active() {
                return None;
            }
            return named.to_str().ok().map(Arc::from);
        }
        let pk = self.operation.partition_key()?;
        self.core.breaker.range_of(container, pk.header_value())
    }

    /// The partition key range the operation's partition key was last seen in, whether or not the
    /// breaker tracks anything: a leg starts with it, so that a failure that brings no range header
    /// still counts against the right partition.
    pub(crate) fn known_range(&self) -> Option<http::HeaderValue> {
        if let Some(named) = self.operation.partition_key_range_id() {
            return Some(named.clone());
        }
        let container = self.container?;
        let pk = self.operation.partition_key()?;
        self.core.breaker.known_range(container, pk.header_value())
    }

    /// The timeout of one attempt: point reads and feed reads give up after the short read attempt
    /// timeout and try the next region; writes and queries (whose pages may legitimately take the
    /// service's execution time) wait for the request timeout.
    pub(crate) fn attempt_timeout(&self) -> std::time::Duration {
        use crate::protocol::OperationType;
        match self.operation.operation_type() {
            OperationType::Read | OperationType::ReadFeed => {
                self.core.options.effective_read_attempt_timeout()
            }
            _ => self.core.transport.request_timeout(),
        }
    }

    /// The regions this operation may use from `account` (see [`region_list`]).
    pub(crate) fn region_list<'s>(&self, account: &'s AccountSnapshot) -> &'s [RegionEndpoint] {
        region_list(&account.properties, self.is_read())
    }

    /// The candidate regions for this operation from `account`, after `excluded` (see
    /// [`route_candidates`]).
    pub(crate) fn candidates(&self, account: &AccountSnapshot, excluded: &[Region]) -> Candidates {
        let is_read = self.is_read();
        let range = if is_read { self.learned_range() } else { None };
        let failed_here = self
            .failed_regions
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        let query = RouteQuery {
            is_read,
            preferred: self.options.preferred_regions,
            container: self.container,
            learned_range: range.as_ref(),
            partition_keyed: self.operation.partition_key().is_some(),
            failed_here: &failed_here,
        };
        route_candidates(
            &account.properties,
            query,
            excluded,
            &self.core.health,
            &self.core.breaker,
        )
    }

    /// The candidate regions of this operation at its start, after the caller's excluded regions
    /// (for a read: the applicable read regions, in routing order).
    pub(crate) fn start_candidates(&self) -> Candidates {
        self.candidates(&self.account, self.options.excluded_regions)
    }

    /// The regions `candidates` (from [`Self::start_candidates`]) name, in order: what hedging
    /// eligibility and alternate selection look at.
    pub(crate) fn applicable_regions<'s>(
        &'s self,
        candidates: &Candidates,
    ) -> impl Iterator<Item = &'s RegionEndpoint> + 's {
        applicable(self.region_list(&self.account), candidates)
    }
}
