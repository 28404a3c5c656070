//! The work and time one page of a query (or one PATCH condition) may use, counted as it is
//! spent: every evaluated expression, every row a FROM or JOIN binds (subqueries included), every
//! byte a function reads or builds and every byte of a document parsed. Evaluation charges the
//! meter before it does the work, so the first charge past the budget stops it: the executor then
//! ends the page with a continuation, or refuses with 400 naming the limit when one row alone
//! needs more than a whole page may use.
//!
//! One unit is about one small evaluation step; bytes count [`BYTES_PER_UNIT`] to a unit, so
//! copying, scanning or parsing a large value costs in proportion to its size.

use std::cell::Cell;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::sql_error::{Limit, SqlError};

/// Bytes of text or JSON that count as one unit of work.
pub(crate) const BYTES_PER_UNIT: usize = 64;
/// Units between two readings of the clock.
const CLOCK_EVERY: u64 = 256;

/// The budget of one page, PATCH condition or batch, and what has been used of it.
#[derive(Debug)]
pub struct Meter {
    used: Cell<u64>,
    limit: u64,
    started: Instant,
    time: Duration,
    next_clock: Cell<u64>,
    out_of_time: Cell<bool>,
}

impl Meter {
    /// A budget of `limit` units and `time`, starting now.
    pub fn new(limit: u64, time: Duration) -> Self {
        Self {
            used: Cell::new(0),
            limit,
            started: Instant::now(),
            time,
            next_clock: Cell::new(CLOCK_EVERY),
            out_of_time: Cell::new(false),
        }
    }

    /// A budget that never runs out (plans, tests).
    pub fn unlimited() -> Self {
        Self::new(u64::MAX, Duration::MAX)
    }

    /// Units used so far.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    /// Time since the budget started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The work budget.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The time budget.
    pub fn time(&self) -> Duration {
        self.time
    }

    /// Charges `units`; an error naming the limit once the work or time budget is exceeded (the
    /// refused charge uses the budget up, never more: [`Meter::used`] stays within the limit).
    #[inline]
    pub fn charge(&self, units: u64) -> Result<(), SqlError> {
        let used = self.used.get().saturating_add(units);
        if used > self.limit {
            self.used.set(self.limit);
            return Err(SqlError::budget(Limit::Work(self.limit)));
        }
        self.used.set(used);
        if used >= self.next_clock.get() {
            self.next_clock.set(used.saturating_add(CLOCK_EVERY));
            if self.clock_says_late() {
                return Err(SqlError::budget(Limit::Time(self.time)));
            }
        }
        Ok(())
    }

    /// Charges for reading or building `bytes` bytes.
    #[inline]
    pub fn charge_bytes(&self, bytes: usize) -> Result<(), SqlError> {
        self.charge(units_of(bytes))
    }

    /// Whether the budget is used up: a page ends at the next row.
    pub fn spent(&self) -> bool {
        self.used.get() >= self.limit || self.clock_says_late()
    }

    /// The limit that is used up, if one is.
    pub fn exhausted(&self) -> Option<Limit> {
        if self.used.get() >= self.limit {
            Some(Limit::Work(self.limit))
        } else if self.clock_says_late() {
            Some(Limit::Time(self.time))
        } else {
            None
        }
    }

    fn clock_says_late(&self) -> bool {
        if self.out_of_time.get() {
            return true;
        }
        if self.time != Duration::MAX && self.started.elapsed() >= self.time {
            self.out_of_time.set(true);
            return true;
        }
        false
    }
}

/// The units for `bytes` bytes (at least one).
pub(crate) fn units_of(bytes: usize) -> u64 {
    1 + (bytes / BYTES_PER_UNIT) as u64
}

/// The cost of matching a regular expression of `pattern` against `text`: the engine's work grows
/// with both.
pub(crate) fn match_cost(text: &str, pattern: &str) -> u64 {
    units_of(text.len()).saturating_mul(units_of(pattern.len()))
}

/// The units copying `v` costs: about its JSON size over [`BYTES_PER_UNIT`], at least one.
pub(crate) fn weight(v: &Value) -> u64 {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 1,
        Value::String(s) => units_of(s.len()),
        _ => units_of(json_size(v)),
    }
}

/// About how many bytes `v` takes as JSON text.
pub(crate) fn json_size(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|i| json_size(i) + 1).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
        }
    }
}

/// About how many bytes of memory `v` holds once parsed (the value itself and what it owns).
pub(crate) fn heap_size(v: &Value) -> usize {
    const VALUE: usize = std::mem::size_of::<Value>();
    // An object entry: the key, the value, the hash and the index table's share.
    const ENTRY: usize = std::mem::size_of::<String>() + VALUE + 16;
    VALUE
        + match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
            Value::String(s) => s.capacity(),
            Value::Array(items) => {
                items.capacity() * VALUE + items.iter().map(|i| heap_size(i) - VALUE).sum::<usize>()
            }
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| ENTRY + k.capacity() + heap_size(v) - VALUE)
                .sum::<usize>(),
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_meter_refuses_the_charge_past_its_work_budget_and_says_which() {
        let m = Meter::new(10, Duration::from_secs(60));
        assert!(m.charge(4).is_ok() && m.charge(6).is_ok());
        assert!(m.spent(), "all of it used");
        let e = m.charge(1).unwrap_err();
        assert_eq!(e.limit, Some(Limit::Work(10)));
        assert_eq!(m.used(), 10, "never past the budget");
        let m = Meter::new(10, Duration::from_secs(60));
        assert!(m.charge(3).is_ok() && m.charge(100).is_err());
        assert_eq!(m.used(), 10);
        assert_eq!(m.exhausted(), Some(Limit::Work(10)));
        let unlimited = Meter::unlimited();
        assert!(unlimited.charge(u64::MAX / 2).is_ok() && !unlimited.spent());
    }

    #[test]
    fn a_meter_reads_the_clock_as_it_goes() {
        let m = Meter::new(u64::MAX, Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        assert!(m.spent());
        let e = (0..CLOCK_EVERY + 1)
            .find_map(|_| m.charge(1).err())
            .expect("the time budget ends the charges");
        assert_eq!(e.limit, Some(Limit::Time(Duration::from_millis(1))));
    }

    #[test]
    fn sizes_grow_with_the_value() {
        assert_eq!(weight(&json!(1)), 1);
        assert_eq!(weight(&json!("x".repeat(6400))), 101);
        let big = json!({"a": vec!["x".repeat(1000); 100]});
        assert!(json_size(&big) > 100_000 && weight(&big) > 1500);
        assert!(
            heap_size(&big) > json_size(&big),
            "parsed values are larger than their text"
        );
        assert!(heap_size(&json!([1, 2, 3])) > heap_size(&json!([])));
    }
}
