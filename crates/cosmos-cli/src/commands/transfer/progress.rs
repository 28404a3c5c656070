//! Progress of an import or export on stderr: a bar on a terminal (items, items/s, RU/s, and an
//! ETA from the bytes read when the input's size is known), else one JSON line every few seconds.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};

/// How often a plain progress line is printed.
pub const LINE_PERIOD: Duration = Duration::from_secs(5);

/// Where a run stands.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Items done (written, or exported).
    pub items: u64,
    /// Request units so far.
    pub request_charge: f64,
    /// Bytes of input read (or output written).
    pub bytes: u64,
    /// The input's size, when known.
    pub total_bytes: Option<u64>,
    /// Time since the start.
    pub elapsed: Duration,
}

/// Rates and the estimate of what is left, from a snapshot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Items per second.
    pub items_per_s: f64,
    /// Request units per second.
    pub ru_per_s: f64,
    /// Seconds left, from the share of the input read.
    pub eta_s: Option<f64>,
}

/// The rates of `s` (zero before any time has passed).
pub fn rates(s: &Snapshot) -> Rates {
    let secs = s.elapsed.as_secs_f64();
    let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
    let eta_s = match s.total_bytes {
        Some(total) if s.bytes > 0 && total >= s.bytes => {
            Some(secs * (total - s.bytes) as f64 / s.bytes as f64)
        }
        _ => None,
    };
    Rates {
        items_per_s: per_s(s.items as f64),
        ru_per_s: per_s(s.request_charge),
        eta_s,
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The plain progress line of `s`.
pub fn line(what: &str, s: &Snapshot) -> Value {
    let r = rates(s);
    json!({ "progress": {
        "what": what,
        "items": s.items,
        "items_per_s": round1(r.items_per_s),
        "ru_per_s": round1(r.ru_per_s),
        "bytes": s.bytes,
        "eta_s": r.eta_s.map(round1),
    }})
}

/// Shows progress on stderr, as a bar or as periodic lines.
pub struct Progress {
    what: &'static str,
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: Instant,
    quiet: bool,
}

impl Progress {
    /// Progress of `what` (`"import"`, `"export"`); `quiet` shows nothing.
    pub fn new(what: &'static str, total_bytes: Option<u64>, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = match total_bytes {
                Some(n) => ProgressBar::new(n),
                None => ProgressBar::no_length(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let template = if total_bytes.is_some() {
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} ETA {eta}"
            } else {
                "{spinner} [{elapsed_precise}] {bytes} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        let now = Instant::now();
        Progress {
            what,
            started: now,
            bar,
            last_line: now,
            quiet,
        }
    }

    /// Time since the start.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Shows `s` (a line only when the period has passed since the last one).
    pub fn show(&mut self, s: &Snapshot) {
        if self.quiet {
            return;
        }
        if let Some(bar) = &self.bar {
            let r = rates(s);
            bar.set_position(s.bytes);
            bar.set_message(format!(
                "{} items, {:.0} items/s, {:.0} RU/s",
                s.items, r.items_per_s, r.ru_per_s
            ));
        } else if self.last_line.elapsed() >= LINE_PERIOD {
            self.last_line = Instant::now();
            eprintln!("{}", line(self.what, s));
        }
    }

    /// Clears the bar before the summary.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_estimates() {
        let s = |items, ru, bytes, total, ms| Snapshot {
            items,
            request_charge: ru,
            bytes,
            total_bytes: total,
            elapsed: Duration::from_millis(ms),
        };
        let table = [
            (s(0, 0.0, 0, Some(100), 0), 0.0, 0.0, None),
            (s(100, 500.0, 50, Some(100), 2000), 50.0, 250.0, Some(2.0)),
            (s(100, 500.0, 100, Some(100), 2000), 50.0, 250.0, Some(0.0)),
            (s(10, 1.0, 50, None, 1000), 10.0, 1.0, None),
            (s(10, 1.0, 150, Some(100), 1000), 10.0, 1.0, None),
        ];
        for (snap, items, ru, eta) in table {
            let r = rates(&snap);
            assert_eq!(
                (r.items_per_s, r.ru_per_s, r.eta_s),
                (items, ru, eta),
                "{snap:?}"
            );
        }
        let l = line("import", &s(100, 500.0, 50, Some(100), 2000));
        assert_eq!(l["progress"]["items_per_s"], 50.0);
        assert_eq!(l["progress"]["eta_s"], 2.0);
    }
}
