//! The hedge budget: a token bucket per driver that bounds hedged requests to a share of reads.
//!
//! Every read that may hedge deposits `ratio` of a token; sending an alternate takes a whole one.
//! A small floor of tokens per second is added with time, so a driver with little traffic can
//! still hedge; the balance never exceeds `max_balance` tokens, so a quiet spell cannot save up
//! for a storm. When the balance is below one token, the read waits on its primary alone.
//!
//! This is the idea of gRPC's retry throttling and Finagle's retry budget: when every region is
//! slow, hedging stops multiplying the load instead of doubling it.
//!
//! Balances are kept in thousandths of a token in one `AtomicI64`; deposits and withdrawals are
//! compare-and-swap loops, so the read path takes no lock and allocates nothing.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use tokio::time::Instant;

/// Thousandths of a token per token.
const MILLI: i64 = 1_000;

/// Settings of the hedge budget: a token bucket of the driver that earns a share of every read
/// and a small floor per second, and spends one token per hedged request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HedgeBudgetConfig {
    ratio: f64,
    min_per_second: u32,
    max_balance: u32,
}

impl Default for HedgeBudgetConfig {
    /// 10% of reads, a floor of 2 hedges per second, at most 20 tokens saved.
    fn default() -> Self {
        Self {
            ratio: 0.10,
            min_per_second: 2,
            max_balance: 20,
        }
    }
}

impl HedgeBudgetConfig {
    /// Hedges allowed as a share of reads (`0.0..=1.0`), a floor of hedges per second, and the most
    /// tokens the bucket holds (at least one). `None` for a ratio outside `0.0..=1.0`.
    pub fn new(ratio: f64, min_per_second: u32, max_balance: u32) -> Option<Self> {
        if !(0.0..=1.0).contains(&ratio) {
            return None;
        }
        Some(Self {
            ratio,
            min_per_second,
            max_balance: max_balance.max(1),
        })
    }

    /// Hedges allowed as a share of reads.
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    /// Hedges allowed per second whatever the traffic.
    pub fn min_per_second(&self) -> u32 {
        self.min_per_second
    }

    /// The most tokens the bucket holds.
    pub fn max_balance(&self) -> u32 {
        self.max_balance
    }
}

/// The token bucket. See the module documentation.
#[derive(Debug)]
pub(crate) struct HedgeBudget {
    config: HedgeBudgetConfig,
    deposit: i64,
    cap: i64,
    balance: AtomicI64,
    origin: Instant,
    /// Milliseconds after `origin` up to which the per-second floor has been added.
    floor_until_ms: AtomicU64,
}

impl HedgeBudget {
    /// A full bucket with `config`.
    pub(crate) fn new(config: HedgeBudgetConfig) -> Self {
        let cap = i64::from(config.max_balance) * MILLI;
        Self {
            deposit: (config.ratio * MILLI as f64).round() as i64,
            cap,
            balance: AtomicI64::new(cap),
            origin: Instant::now(),
            floor_until_ms: AtomicU64::new(0),
            config,
        }
    }

    /// Adds `amount` thousandths, keeping the balance at most the cap.
    fn add(&self, amount: i64) {
        if amount <= 0 {
            return;
        }
        let _ = self.balance.fetch_update(Relaxed, Relaxed, |b| {
            (b < self.cap).then(|| (b + amount).min(self.cap))
        });
    }

    /// Adds the per-second floor for the time since it was last added.
    fn add_floor(&self, now: Instant) {
        if self.config.min_per_second == 0 {
            return;
        }
        let now_ms = u64::try_from(now.saturating_duration_since(self.origin).as_millis())
            .unwrap_or(u64::MAX);
        let mut until = self.floor_until_ms.load(Relaxed);
        while now_ms > until {
            match self
                .floor_until_ms
                .compare_exchange_weak(until, now_ms, Relaxed, Relaxed)
            {
                Ok(_) => {
                    // Tokens per second times milliseconds: thousandths of a token.
                    let elapsed = i64::try_from(now_ms - until).unwrap_or(i64::MAX);
                    self.add(elapsed.saturating_mul(i64::from(self.config.min_per_second)));
                    return;
                }
                Err(seen) => until = seen,
            }
        }
    }

    /// A read that may hedge: deposits its share of a token.
    pub(crate) fn record_read(&self) {
        self.add(self.deposit);
    }

    /// Takes one token for an alternate attempt at `now`; false (and nothing taken) when the
    /// balance is below one token.
    pub(crate) fn try_acquire(&self, now: Instant) -> bool {
        self.add_floor(now);
        self.balance
            .fetch_update(Relaxed, Relaxed, |b| (b >= MILLI).then_some(b - MILLI))
            .is_ok()
    }

    /// The balance in tokens.
    #[cfg(test)]
    pub(crate) fn balance(&self) -> f64 {
        self.balance.load(Relaxed) as f64 / MILLI as f64
    }

    /// How long after `origin` the floor has been counted (for tests).
    #[cfg(test)]
    fn floor_counted(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.floor_until_ms.load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn budget(ratio: f64, floor: u32, cap: u32) -> HedgeBudget {
        HedgeBudget::new(HedgeBudgetConfig::new(ratio, floor, cap).unwrap())
    }

    #[test]
    fn config_table() {
        // (ratio, accepted?)
        for (ratio, ok) in [
            (0.1, true),
            (0.0, true),
            (1.0, true),
            (-0.1, false),
            (1.5, false),
            (f64::NAN, false),
        ] {
            assert_eq!(
                HedgeBudgetConfig::new(ratio, 2, 20).is_some(),
                ok,
                "{ratio}"
            );
        }
        assert_eq!(HedgeBudgetConfig::new(0.1, 0, 0).unwrap().max_balance(), 1);
        let d = HedgeBudgetConfig::default();
        assert_eq!(
            (d.ratio(), d.min_per_second(), d.max_balance()),
            (0.1, 2, 20)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn starts_full_then_allows_the_ratio_of_reads() {
        let b = budget(0.1, 0, 5);
        let now = Instant::now();
        let granted = (0..5).filter(|_| b.try_acquire(now)).count();
        assert_eq!(granted, 5, "a full bucket");
        assert!(!b.try_acquire(now), "then empty");
        // 1,000 reads, each asking for a hedge: about one in ten gets one.
        let mut hedges = 0;
        for _ in 0..1_000 {
            b.record_read();
            hedges += usize::from(b.try_acquire(now));
        }
        assert_eq!(hedges, 100);
    }

    #[tokio::test(start_paused = true)]
    async fn the_floor_adds_tokens_with_time_up_to_the_cap() {
        let b = budget(0.0, 2, 4);
        let now = Instant::now();
        while b.try_acquire(now) {}
        assert_eq!(b.balance(), 0.0);
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(
            b.try_acquire(Instant::now()),
            "2/s for half a second: one token"
        );
        assert!(!b.try_acquire(Instant::now()));
        assert_eq!(b.floor_counted(), Duration::from_millis(500));
        tokio::time::advance(Duration::from_secs(60)).await;
        let granted = (0..10).filter(|_| b.try_acquire(Instant::now())).count();
        assert_eq!(granted, 4, "a quiet minute saves up only the cap");
    }

    #[test]
    fn deposits_never_exceed_the_cap() {
        let b = budget(1.0, 0, 3);
        for _ in 0..100 {
            b.record_read();
        }
        assert_eq!(b.balance(), 3.0);
    }

    #[test]
    fn zero_ratio_and_no_floor_allow_only_the_initial_balance() {
        let b = budget(0.0, 0, 2);
        let now = Instant::now();
        for _ in 0..100 {
            b.record_read();
        }
        let granted = (0..10).filter(|_| b.try_acquire(now)).count();
        assert_eq!(granted, 2);
    }

    #[test]
    fn concurrent_withdrawals_never_overdraw() {
        let b = std::sync::Arc::new(budget(0.0, 0, 50));
        let now = Instant::now();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let b = b.clone();
                std::thread::spawn(move || (0..100).filter(|_| b.try_acquire(now)).count())
            })
            .collect();
        let granted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(granted, 50);
        assert_eq!(b.balance(), 0.0);
    }
}
