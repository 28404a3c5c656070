//! What the server tells the fault layer about a request, and what it is told to do.

use std::time::Duration;

use super::{OpKind, Reaction};

/// The facts a rule can match on, built by the server per request (after routing, before auth).
#[derive(Clone, Copy, Debug)]
pub struct RequestFacts<'a> {
    /// The region whose replica serves the request (the global port counts as the hub region).
    pub region: &'a str,
    /// What kind of operation the request is.
    pub op: OpKind,
    /// The request path, without the query string.
    pub path: &'a str,
    /// The request headers, when the caller has them (a header condition never matches `None`).
    pub headers: Option<&'a http::HeaderMap>,
}

/// What the server must do with a request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Verdict {
    /// Sleep this long before doing anything else (sum of the latency-profile delay and a user
    /// rule's delay, both already drawn).
    pub delay: Duration,
    /// What to do after the delay, without a delay of its own: [`Reaction::SERVE`] (serve the
    /// request normally), answer a status, close the connection or stall.
    pub reaction: Reaction,
}

impl Verdict {
    /// Serve at once.
    #[cfg(test)]
    pub(crate) const SERVE: Verdict = Verdict {
        delay: Duration::ZERO,
        reaction: Reaction::SERVE,
    };
}
