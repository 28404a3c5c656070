//! What the driver has learnt about the account's PATCH verb: unknown until a PATCH under
//! `PatchStrategy::Auto` gets an answer, then kept for the driver's life (one driver, one account).

use std::sync::atomic::{AtomicU8, Ordering};

const SERVED: u8 = 1;
const NOT_SERVED: u8 = 2;

/// Whether the account serves the PATCH verb, once known (0: not learnt yet).
#[derive(Debug, Default)]
pub(crate) struct NativePatchSupport(AtomicU8);

impl NativePatchSupport {
    /// `Some(true)`: served; `Some(false)`: not served; `None`: not learnt yet.
    pub(crate) fn known(&self) -> Option<bool> {
        match self.0.load(Ordering::Relaxed) {
            SERVED => Some(true),
            NOT_SERVED => Some(false),
            _ => None,
        }
    }

    /// Records what an answer to a PATCH said.
    pub(crate) fn learn(&self, served: bool) {
        self.0
            .store(if served { SERVED } else { NOT_SERVED }, Ordering::Relaxed);
    }
}

/// Whether an answer's status says the server does not serve the PATCH verb at all.
pub(crate) fn says_not_served(status: u16) -> bool {
    matches!(status, 405 | 501)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_unknown_and_keeps_the_last_lesson() {
        let s = NativePatchSupport::default();
        assert_eq!(s.known(), None);
        s.learn(false);
        assert_eq!(s.known(), Some(false));
        s.learn(true);
        assert_eq!(s.known(), Some(true));
    }

    #[test]
    fn only_405_and_501_mean_not_served() {
        let rows = [
            (405, true),
            (501, true),
            (200, false),
            (400, false),
            (404, false),
            (412, false),
            (503, false),
        ];
        for (status, not_served) in rows {
            assert_eq!(says_not_served(status), not_served, "{status}");
        }
    }
}
