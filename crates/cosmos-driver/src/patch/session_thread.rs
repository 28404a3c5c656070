//! The session token a PATCH loop carries from attempt to attempt.
//!
//! The caller's token seeds it and every response the loop sees (each Read, each Replace that
//! lost the race with 412, the final Replace) is folded in with the highest-LSN merge, so it only
//! ever moves forward: attempt N's Read never asks for an older view than attempt N-1 already saw,
//! including the view of the replica that refused the previous Replace.

use crate::protocol::SessionToken;

/// The loop's effective session token.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SessionThread {
    token: Option<SessionToken>,
}

impl SessionThread {
    /// Starts from the caller's token, if any.
    pub(crate) fn seed(caller: Option<SessionToken>) -> Self {
        Self {
            token: caller.filter(|t| !t.is_empty()),
        }
    }

    /// The token to send on the next Read (`None`: let the driver's own tracking decide).
    pub(crate) fn current(&self) -> Option<&SessionToken> {
        self.token.as_ref()
    }

    /// Folds in a response's `x-ms-session-token`; a missing or malformed one changes nothing.
    pub(crate) fn advance(&mut self, raw: Option<&str>) {
        let Some(seen) = raw.and_then(|t| SessionToken::parse(t).ok()) else {
            return;
        };
        match &mut self.token {
            Some(token) => {
                token.merge_from(&seen);
            }
            None => self.token = Some(seen),
        }
    }
}

/// The token the Replace carries: the Read response's own token (it pins the Replace to the view
/// just read, and is by construction at least as fresh as anything the caller supplied), or the
/// loop's token when the Read answered without one.
pub(crate) fn replace_token(
    read_response_token: Option<&str>,
    thread: &SessionThread,
) -> Option<SessionToken> {
    read_response_token
        .and_then(|t| SessionToken::parse(t).ok())
        .or_else(|| thread.current().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> SessionToken {
        SessionToken::parse(s).unwrap()
    }

    #[test]
    fn advances_monotonically_through_reads_and_failed_replaces() {
        let mut thread = SessionThread::seed(Some(t("0:1#10")));
        assert_eq!(thread.current(), Some(&t("0:1#10")));
        // A Read served by a lagging replica never moves the token back.
        thread.advance(Some("0:1#8"));
        assert_eq!(thread.current(), Some(&t("0:1#10")));
        thread.advance(Some("0:1#12"));
        assert_eq!(thread.current(), Some(&t("0:1#12")));
        // A failed Replace's token (the replica saw the conflicting commit) is folded in.
        thread.advance(Some("0:1#15#1=14"));
        assert_eq!(thread.current(), Some(&t("0:1#15#1=14")));
        // Other ranges are merged, not replaced.
        thread.advance(Some("1:1#3"));
        assert_eq!(thread.current(), Some(&t("0:1#15#1=14,1:1#3")));
        // Missing or malformed tokens change nothing.
        thread.advance(None);
        thread.advance(Some("garbage"));
        assert_eq!(thread.current(), Some(&t("0:1#15#1=14,1:1#3")));
    }

    #[test]
    fn starts_empty_without_a_caller_token() {
        let mut thread = SessionThread::seed(None);
        assert_eq!(thread.current(), None);
        thread.advance(Some("0:1#4"));
        assert_eq!(thread.current(), Some(&t("0:1#4")));
        assert_eq!(
            SessionThread::seed(Some(SessionToken::default())).current(),
            None
        );
    }

    #[test]
    fn the_replace_carries_the_read_response_token() {
        let thread = SessionThread::seed(Some(t("0:1#20")));
        assert_eq!(replace_token(Some("0:1#21"), &thread), Some(t("0:1#21")));
        assert_eq!(replace_token(None, &thread), Some(t("0:1#20")));
        assert_eq!(replace_token(Some("bad"), &SessionThread::seed(None)), None);
    }
}
