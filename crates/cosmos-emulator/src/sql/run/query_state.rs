//! What queries keep in the store between (and during) their pages, and the memory cap over all
//! of it: kept answers, shelved builds, and the reservations of pages building right now.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::build_shelf::BuildShelf;
use super::query_memory::{QueryMemory, Reservation};
use super::result_cache::ResultCache;

/// The query state of one emulator.
pub(crate) struct QueryState {
    pub memory: Arc<QueryMemory>,
    pub results: ResultCache,
    pub builds: BuildShelf,
}

impl QueryState {
    /// Room for `memory_cap` bytes in all; kept answers and builds leave after `idle` unused.
    pub(crate) fn new(memory_cap: usize, idle: Duration) -> Self {
        Self {
            memory: QueryMemory::new(memory_cap),
            results: ResultCache::new(idle),
            builds: BuildShelf::new(idle),
        }
    }

    /// Makes `reservation` hold `bytes`, dropping kept answers and then shelved builds (least
    /// recently used first) to make room; false when even that leaves too little (other queries'
    /// pages hold the rest).
    pub(crate) fn reserve(&self, reservation: &mut Reservation, bytes: usize) -> bool {
        loop {
            if reservation.resize(bytes) {
                return true;
            }
            if !(self.results.evict_oldest() || self.builds.evict_oldest()) {
                return false;
            }
        }
    }

    /// Drops what has not been used for the idle time.
    pub(crate) fn sweep(&self, now: Instant) {
        self.results.sweep(now);
        self.builds.sweep(now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::result_cache::{Answer, CachedResult, ResultKey};
    use super::*;

    #[test]
    fn a_reservation_makes_room_by_dropping_kept_answers_but_never_a_page_in_progress() {
        let state = QueryState::new(1000, Duration::from_secs(60));
        let mut kept = state.memory.reservation();
        assert!(kept.resize(700));
        let key = ResultKey {
            container: "c".into(),
            text: "q".into(),
            params: "{}".into(),
            region: 0,
            ranges: vec![],
            only_epk: None,
            local: Vec::new(),
        };
        state.results.put(
            key,
            Arc::new(CachedResult {
                answer: Answer::Whole(vec![]),
                reservation: kept,
            }),
        );
        let mut building = state.memory.reservation();
        assert!(
            state.reserve(&mut building, 900),
            "the kept answer made room"
        );
        assert!(state.results.is_empty());
        let mut other = state.memory.reservation();
        assert!(
            !state.reserve(&mut other, 200),
            "a page in progress is never dropped"
        );
        drop(building);
        assert!(state.reserve(&mut other, 200));
    }
}
