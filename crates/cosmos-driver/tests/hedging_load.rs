//! Hedging never multiplies load. Every kind of read the driver hedges runs under every fault a
//! region or the account can show, once with hedging off and once with it on, each against a fresh
//! embedded emulator of the same layout; the emulator's own per-region counters count what was
//! sent. For every (kind, fault):
//!
//! - requests with hedging <= 2 x requests without + 1;
//! - time with hedging <= time without + the threshold + an allowance;
//! - a read that succeeds without hedging succeeds with it, with the same result.
//!
//! `cases` holds one test per (kind, fault); `random` draws fault schedules. The emulator serves
//! over real sockets, so the clock is the real one: every fault is sized in tens of milliseconds
//! and the time bound has an allowance for a busy machine.

#[path = "hedging_load_cases/harness.rs"]
mod harness;

#[path = "hedging_load_cases/cases.rs"]
mod cases;

#[path = "hedging_load_cases/random.rs"]
mod random;
