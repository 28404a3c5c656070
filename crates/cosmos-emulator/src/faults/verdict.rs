//! What the server tells the fault layer about a request, and what it is told to do.

use std::time::Duration;

use super::OpKind;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Sleep this long before doing anything else (sum of the latency-profile delay and a user delay
    /// rule).
    pub delay: Duration,
    /// What to do after the delay.
    pub action: Action,
}

impl Verdict {
    /// Serve at once.
    pub const SERVE: Verdict = Verdict {
        delay: Duration::ZERO,
        action: Action::Serve,
    };
}

/// The action part of a [`Verdict`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Serve the request normally (after `delay`).
    Serve,
    /// Answer this status without touching data (after `delay`), with `x-ms-substatus` and, when
    /// set, `x-ms-retry-after-ms`; JSON error body `{"code","message"}` saying it was injected.
    Respond {
        /// HTTP status (the rule formats accept 200..=599).
        status: u16,
        /// Value of `x-ms-substatus`.
        sub_status: u32,
        /// Value of `x-ms-retry-after-ms`, when set.
        retry_after_ms: Option<u64>,
    },
    /// Close the TCP connection without answering.
    CloseConnection,
    /// Never answer; hold the request until the client goes away (or the emulator shuts down).
    Stall,
}
