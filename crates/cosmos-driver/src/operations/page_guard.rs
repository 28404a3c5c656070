//! The rules every paging loop follows so that a broken or hostile server ends a feed with an
//! error instead of a loop: a page that hands back the continuation it was fetched with, a
//! continuation seen earlier in the same feed (a cycle: A, B, A, B...), or a long run of empty
//! pages. Pure: each loop keeps one [`PageGuard`] per chain of continuations (one feed, or one
//! partition key range of a fan-out) and asks it about every page.
//!
//! A service continuation is a position; a position the feed has already been at is read again
//! from there, so any revisit is a loop, with or without items. Short cycles are found at their
//! first repeat (the last few tokens are kept); longer ones by Brent's cycle finding (one saved
//! token whose distance doubles), within about twice the cycle's length, whatever that length.
//!
//! The change feed is the exception: "nothing new" legitimately answers with the position it was
//! sent. Its rule is [`PageGuard::check_changes`]: a page *with* changes must move the position,
//! to one the range has not been at.

use std::collections::VecDeque;
use std::fmt;

use crate::error::{CosmosError, ErrorKind};

/// The most pages of one chain that may come back empty in a row while the feed goes on. The
/// service ends a page early (its time or charge budget) and answers empty with a continuation
/// when a scan finds nothing; a thousand such pages in a row is over an hour of scanning at its
/// 5 s per page, and well past anything but a server that never ends the feed.
pub(crate) const MAX_EMPTY_PAGES_IN_A_ROW: u32 = 1000;

/// How many recent continuations are kept to find a short cycle at its first repeat.
const RECENT_TOKENS: usize = 8;

/// Why a page ends its feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PageFault {
    /// The page carried the continuation it was fetched with.
    Repeated,
    /// The page carried a continuation an earlier page of the same feed carried.
    Cycle,
    /// This many pages in a row held nothing and the feed did not end.
    EmptyRun(u32),
    /// A change-feed page held changes but did not move the feed's position past them.
    ChangesWithoutProgress,
}

impl fmt::Display for PageFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageFault::Repeated => f.write_str(
                "the service answered a page with the continuation token it was sent; the feed \
                 would never end",
            ),
            PageFault::Cycle => f.write_str(
                "the service answered a page with a continuation token an earlier page of the \
                 same feed carried (the tokens cycle); the feed would never end",
            ),
            PageFault::EmptyRun(n) => write!(
                f,
                "the service answered {n} empty pages in a row without ending the feed (at most \
                 {MAX_EMPTY_PAGES_IN_A_ROW} are followed)"
            ),
            PageFault::ChangesWithoutProgress => f.write_str(
                "the service answered a change feed page with changes but without a new position \
                 (etag); reading on would return the same changes forever",
            ),
        }
    }
}

impl PageFault {
    /// The error that ends the feed: `what` names the feed (or the range of it).
    pub(crate) fn into_error(self, what: impl fmt::Display) -> CosmosError {
        CosmosError::new(ErrorKind::Service, format!("{what}: {self}"))
    }
}

/// The guard of one chain of continuations. Its `Debug` shows counts, not the tokens.
#[derive(Clone)]
pub(crate) struct PageGuard {
    /// The most recent continuations (sent or received), newest last.
    recent: VecDeque<Box<str>>,
    /// Brent's cycle finding: the saved continuation, pages since it was saved, and the distance
    /// at which the next one is saved.
    saved: Option<Box<str>>,
    since_saved: u64,
    power: u64,
    empty_in_a_row: u32,
}

impl fmt::Debug for PageGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageGuard")
            .field("recent_tokens", &self.recent.len())
            .field("empty_in_a_row", &self.empty_in_a_row)
            .finish_non_exhaustive()
    }
}

impl Default for PageGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl PageGuard {
    /// A guard for a feed that has read no page yet.
    pub(crate) fn new() -> Self {
        PageGuard {
            recent: VecDeque::with_capacity(RECENT_TOKENS),
            saved: None,
            since_saved: 0,
            power: 1,
            empty_in_a_row: 0,
        }
    }

    /// Checks a page that was fetched with `sent` (none for a feed's first page), held `items`
    /// items and answered `next` (none or empty: the feed ends). An error means the feed must end
    /// now; the guard then stays as it was.
    pub(crate) fn check(
        &mut self,
        sent: Option<&str>,
        next: Option<&str>,
        items: usize,
    ) -> Result<(), PageFault> {
        let sent = sent.filter(|t| !t.is_empty());
        let Some(next) = next.filter(|t| !t.is_empty()) else {
            // The feed ends: nothing can loop.
            return Ok(());
        };
        if sent == Some(next) {
            return Err(PageFault::Repeated);
        }
        if let Some(sent) = sent {
            if self.recent.back().map(|t| &**t) != Some(sent) {
                // A chain started from the caller's token, or resumed after a gap.
                self.remember(sent);
            }
        }
        if self.recent.iter().any(|t| &**t == next) || self.saved.as_deref() == Some(next) {
            return Err(PageFault::Cycle);
        }
        let empty_in_a_row = if items == 0 {
            self.empty_in_a_row.saturating_add(1)
        } else {
            0
        };
        if empty_in_a_row > MAX_EMPTY_PAGES_IN_A_ROW {
            return Err(PageFault::EmptyRun(empty_in_a_row));
        }
        self.empty_in_a_row = empty_in_a_row;
        self.remember(next);
        self.since_saved += 1;
        if self.since_saved >= self.power {
            self.saved = Some(Box::from(next));
            self.since_saved = 0;
            self.power = self.power.saturating_mul(2);
        }
        Ok(())
    }

    /// The change feed's rule for a page of one range read from position `sent` (its etag; none
    /// for a start from the beginning, now or a time) that held `items` changes and answered
    /// position `next`: see [`change_feed_fault`]; besides, changes that lead back to a position
    /// the range was at earlier are a cycle. Pages without changes are polls and are not counted.
    pub(crate) fn check_changes(
        &mut self,
        sent: Option<&str>,
        next: Option<&str>,
        items: usize,
    ) -> Result<(), PageFault> {
        if let Some(fault) = change_feed_fault(sent, next, items) {
            return Err(fault);
        }
        if items == 0 {
            return Ok(());
        }
        self.check(sent, next, items)
    }

    fn remember(&mut self, token: &str) {
        if self.recent.len() == RECENT_TOKENS {
            self.recent.pop_front();
        }
        self.recent.push_back(Box::from(token));
    }
}

/// The change feed's rule for a page of one range that was read from position `sent` (its etag;
/// none for a start from the beginning, now or a time), held `items` changes and answered
/// position `next`. "Nothing new" may answer the same position (a poll); changes must move it, or
/// the next read returns them again.
pub(crate) fn change_feed_fault(
    sent: Option<&str>,
    next: Option<&str>,
    items: usize,
) -> Option<PageFault> {
    let next = next.filter(|e| !e.is_empty());
    (items > 0 && (next.is_none() || next == sent)).then_some(PageFault::ChangesWithoutProgress)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages as `(continuation answered, items)`.
    type Pages<'a> = &'a [(Option<&'a str>, usize)];
    /// `(name, the caller's continuation, pages, the page that faults and why)`.
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Pages<'a>,
        Option<(usize, PageFault)>,
    );

    /// Runs pages `(continuation answered, items)` through one guard, each fetched with the
    /// continuation the page before answered; the index of the page that faulted, and why.
    fn run(first: Option<&str>, pages: Pages<'_>) -> Option<(usize, PageFault)> {
        let mut guard = PageGuard::new();
        let mut sent = first.map(str::to_owned);
        for (i, (next, items)) in pages.iter().enumerate() {
            if let Err(f) = guard.check(sent.as_deref(), *next, *items) {
                return Some((i, f));
            }
            sent = next.map(str::to_owned);
        }
        None
    }

    #[test]
    fn the_rules_as_a_table() {
        let cases: &[Case<'_>] = &[
            (
                "a feed that ends",
                None,
                &[(Some("a"), 2), (Some("b"), 2), (None, 1)],
                None,
            ),
            (
                "an empty continuation ends the feed",
                None,
                &[(Some(""), 0)],
                None,
            ),
            ("one page", None, &[(None, 0)], None),
            (
                "the token it was sent",
                None,
                &[(Some("a"), 2), (Some("a"), 2)],
                Some((1, PageFault::Repeated)),
            ),
            (
                "the caller's token handed back",
                Some("t"),
                &[(Some("t"), 0)],
                Some((0, PageFault::Repeated)),
            ),
            (
                "back to the caller's token",
                Some("t"),
                &[(Some("u"), 1), (Some("t"), 1)],
                Some((1, PageFault::Cycle)),
            ),
            (
                "A, B, A with empty pages",
                None,
                &[(Some("A"), 0), (Some("B"), 0), (Some("A"), 0)],
                Some((2, PageFault::Cycle)),
            ),
            (
                "A, B, A with items",
                None,
                &[(Some("A"), 3), (Some("B"), 3), (Some("A"), 3)],
                Some((2, PageFault::Cycle)),
            ),
            (
                "the last page may repeat nothing: it ends",
                None,
                &[(Some("A"), 0), (Some("B"), 0), (None, 0)],
                None,
            ),
        ];
        for (name, first, pages, expected) in cases {
            assert_eq!(run(*first, pages), *expected, "{name}");
        }
    }

    #[test]
    fn a_long_cycle_is_found_within_a_few_rounds() {
        for length in [9usize, 10, 31, 100, 1000] {
            let tokens: Vec<String> = (0..length).map(|i| format!("t{i}")).collect();
            let pages: Vec<(Option<&str>, usize)> = tokens
                .iter()
                .cycle()
                .take(length * 4)
                .map(|t| (Some(t.as_str()), 1))
                .collect();
            let (at, fault) = run(None, &pages).expect("a cycle is found");
            assert_eq!(fault, PageFault::Cycle, "length {length}");
            assert!(at < length * 3, "length {length}: found at page {at}");
            assert!(at >= length, "length {length}: a revisit, not before it");
        }
    }

    #[test]
    fn distinct_tokens_with_items_never_fault() {
        let tokens: Vec<String> = (0..20_000).map(|i| format!("t{i}")).collect();
        let pages: Vec<(Option<&str>, usize)> =
            tokens.iter().map(|t| (Some(t.as_str()), 1)).collect();
        assert_eq!(run(None, &pages), None);
    }

    #[test]
    fn empty_pages_are_followed_up_to_the_bound() {
        let n = MAX_EMPTY_PAGES_IN_A_ROW as usize;
        let tokens: Vec<String> = (0..n + 5).map(|i| format!("t{i}")).collect();
        let empty = |range: std::ops::Range<usize>| -> Vec<(Option<&str>, usize)> {
            tokens[range]
                .iter()
                .map(|t| (Some(t.as_str()), 0))
                .collect()
        };
        assert_eq!(
            run(None, &empty(0..n)),
            None,
            "exactly the bound is followed"
        );
        assert_eq!(
            run(None, &empty(0..n + 1)),
            Some((n, PageFault::EmptyRun(MAX_EMPTY_PAGES_IN_A_ROW + 1)))
        );
        // One page with an item starts the count again.
        let mut pages = empty(0..n);
        pages.push((Some(tokens[n].as_str()), 1));
        pages.extend(empty(n + 1..n + 5));
        assert_eq!(run(None, &pages), None);
    }

    #[test]
    fn a_fault_leaves_the_guard_as_it_was() {
        let mut guard = PageGuard::new();
        guard.check(None, Some("a"), 1).unwrap();
        assert_eq!(
            guard.check(Some("a"), Some("a"), 1),
            Err(PageFault::Repeated)
        );
        guard.check(Some("a"), Some("b"), 1).unwrap();
    }

    #[test]
    fn debug_output_holds_no_token() {
        let mut guard = PageGuard::new();
        guard.check(None, Some("secret-position"), 0).unwrap();
        let text = format!("{guard:?}");
        assert!(!text.contains("secret-position"), "{text}");
        assert!(text.contains("empty_in_a_row: 1"), "{text}");
    }

    #[test]
    fn faults_say_what_happened() {
        let e = PageFault::Cycle.into_error("a query page of range 3");
        assert_eq!(e.kind(), ErrorKind::Service);
        assert!(e.message().starts_with("a query page of range 3: "), "{e}");
        assert!(e.message().contains("cycle"), "{e}");
        assert!(PageFault::EmptyRun(1001)
            .to_string()
            .contains("1001 empty pages"));
        assert!(PageFault::Repeated.to_string().contains("it was sent"));
    }

    #[test]
    fn change_feed_positions_as_a_table() {
        // (sent, answered, changes) of one range's pages in turn; the index of the page that
        // faults and why.
        type Page<'a> = (Option<&'a str>, Option<&'a str>, usize);
        type Fault = Option<(usize, PageFault)>;
        let cases: &[(&str, &[Page<'_>], Fault)] = &[
            (
                "changes, then polls at the same position, then more changes",
                &[
                    (None, Some("1"), 2),
                    (Some("1"), Some("2"), 1),
                    (Some("2"), Some("2"), 0),
                    (Some("2"), Some("2"), 0),
                    (Some("2"), Some("3"), 4),
                ],
                None,
            ),
            (
                "changes at the same position",
                &[(None, Some("1"), 2), (Some("1"), Some("1"), 2)],
                Some((1, PageFault::ChangesWithoutProgress)),
            ),
            (
                "changes leading back to an earlier position",
                &[
                    (None, Some("A"), 1),
                    (Some("A"), Some("B"), 1),
                    (Some("B"), Some("A"), 1),
                ],
                Some((2, PageFault::Cycle)),
            ),
            (
                "many polls are never a run of empty pages",
                &[(Some("9"), Some("9"), 0); 2000],
                None,
            ),
        ];
        for (name, pages, expected) in cases {
            let mut guard = PageGuard::new();
            let got = pages
                .iter()
                .enumerate()
                .find_map(|(i, (sent, next, items))| {
                    guard
                        .check_changes(*sent, *next, *items)
                        .err()
                        .map(|f| (i, f))
                });
            assert_eq!(got, *expected, "{name}");
        }
    }

    #[test]
    fn the_change_feed_rule_as_a_table() {
        let cases = [
            // (sent etag, answered etag, changes, fault)
            (Some("5"), Some("5"), 0, None),
            (Some("5"), Some("9"), 0, None),
            (Some("5"), None, 0, None),
            (Some("5"), Some("9"), 3, None),
            (None, Some("9"), 3, None),
            (
                Some("5"),
                Some("5"),
                3,
                Some(PageFault::ChangesWithoutProgress),
            ),
            (Some("5"), None, 3, Some(PageFault::ChangesWithoutProgress)),
            (None, None, 1, Some(PageFault::ChangesWithoutProgress)),
            (None, Some(""), 1, Some(PageFault::ChangesWithoutProgress)),
        ];
        for (sent, next, items, expected) in cases {
            assert_eq!(
                change_feed_fault(sent, next, items),
                expected,
                "{sent:?} -> {next:?} with {items}"
            );
        }
    }
}
