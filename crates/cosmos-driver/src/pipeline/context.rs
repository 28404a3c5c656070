//! What every attempt of one operation shares: the operation, its resolved options, the account
//! snapshot taken at its start, and its deadline.

use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use tokio::time::Instant;

use super::core::DriverCore;
use super::retry::OperationFacts;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::EffectiveOptions;
use crate::protocol::{ConsistencyLevel, ResourceType};
use crate::routing::{
    applicable, order_regions, AccessScope, AccountSnapshot, Candidates, RegionEndpoint,
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
        let send_tracked_session_token = data_plane
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
        })
    }

    /// The retry facts of this operation, for a leg that is `local_only` or not.
    pub(crate) fn facts(&self, local_only: bool, multi_write: bool) -> OperationFacts {
        OperationFacts {
            operation_type: self.operation.operation_type(),
            resource_type: self.operation.resource_type(),
            multi_write,
            local_only,
        }
    }

    /// Whether the operation reads.
    pub(crate) fn is_read(&self) -> bool {
        self.operation.operation_type().is_read_only()
    }

    /// The partition key range the operation's partition key was last seen in (only known while the
    /// circuit breaker tracks something).
    pub(crate) fn learned_range(&self) -> Option<Arc<str>> {
        let container = self.container?;
        let pk = self.operation.partition_key()?;
        self.core.breaker.range_of(container, pk.header_value())
    }

    /// The regions this operation may use from `account` (reads: read regions; writes: the hub,
    /// or every write region on a multi-write account).
    pub(crate) fn region_list<'s>(&self, account: &'s AccountSnapshot) -> &'s [RegionEndpoint] {
        let p = &account.properties;
        if self.is_read() {
            &p.read_regions
        } else if p.multi_write {
            &p.write_regions
        } else {
            &p.write_regions[..1]
        }
    }

    /// The candidate regions for this operation from `account`, after `excluded`, with unavailable
    /// endpoints (and, for reads, regions where the partition is marked unhealthy) moved last.
    pub(crate) fn candidates(
        &self,
        account: &AccountSnapshot,
        excluded: &[crate::protocol::Region],
    ) -> Candidates {
        let scope = if self.is_read() {
            AccessScope::Read
        } else {
            AccessScope::Write
        };
        let list = self.region_list(account);
        let preferred = if self.is_read() || account.properties.multi_write {
            self.options.preferred_regions
        } else {
            &[]
        };
        let range = if self.is_read() {
            self.learned_range()
        } else {
            None
        };
        let health = &self.core.health;
        // A read whose range is not known yet while the breaker tracks partitions of the container
        // assumes the worst: its partition may be one marked unhealthy.
        let unknown_range = self.is_read() && range.is_none() && self.core.breaker.is_active();
        // Nothing marked anywhere (the common case): no clock read, no lookups.
        if !health.any_marked() && range.is_none() && !unknown_range {
            return order_regions(list, preferred, excluded, |_, _| false);
        }
        let now = Instant::now();
        order_regions(list, preferred, excluded, |_, r| {
            health.is_unavailable(&r.endpoint, scope, now)
                || match (&range, self.container) {
                    (Some(range), Some(c)) => {
                        self.core.breaker.is_unhealthy(c, range, &r.region, now)
                    }
                    (None, Some(c)) if unknown_range => {
                        self.core.breaker.any_unhealthy(c, &r.region, now)
                    }
                    _ => false,
                }
        })
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
