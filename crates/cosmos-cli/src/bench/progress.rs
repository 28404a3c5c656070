//! Progress of a run: a one-line bar redrawn on a terminal, or a plain line on stderr every few
//! seconds when stdout is not one (a log, a pipe).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::schedule::{StopAt, Window};

/// Counters the engine bumps and the progress line reads.
#[derive(Debug, Default)]
pub struct ProgressCounters {
    /// Measured operations completed.
    pub completed: AtomicU64,
    /// Measured operations that failed.
    pub errors: AtomicU64,
}

impl ProgressCounters {
    /// Notes one completed measured operation.
    pub fn note(&self, ok: bool) {
        self.completed.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How far along a run is, from 0 to 1.
pub fn fraction_done(window: &Window, elapsed: Duration, completed: u64) -> f64 {
    let f = match window.stop {
        StopAt::Elapsed(d) => {
            let total = window.warmup.saturating_add(d).as_secs_f64();
            if total <= 0.0 {
                1.0
            } else {
                elapsed.as_secs_f64() / total
            }
        }
        StopAt::Ops(0) => 1.0,
        StopAt::Ops(n) => completed as f64 / n as f64,
    };
    f.clamp(0.0, 1.0)
}

/// The progress line for `label`.
pub fn render_line(
    label: &str,
    window: &Window,
    elapsed: Duration,
    completed: u64,
    errors: u64,
) -> String {
    const WIDTH: usize = 30;
    let f = fraction_done(window, elapsed, completed);
    let filled = ((f * WIDTH as f64).round() as usize).min(WIDTH);
    let phase = if elapsed < window.warmup {
        "warm-up"
    } else {
        "measuring"
    };
    format!(
        "{label:<16} [{}{}] {:>5.1}s {phase:<9} {completed:>8} ops {errors:>6} errors",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled),
        elapsed.as_secs_f64(),
    )
}

/// A running progress line; dropping it stops the redraw and clears the line.
pub struct ProgressBar {
    task: Option<tokio::task::JoinHandle<()>>,
    /// Whether it draws on a terminal (and clears its line when dropped).
    terminal: bool,
}

impl ProgressBar {
    /// Starts redrawing every 200 ms when stdout is a terminal; otherwise writes a plain line on
    /// stderr every 5 s.
    pub fn start(label: String, window: Window, counters: Arc<ProgressCounters>) -> Self {
        if !std::io::stdout().is_terminal() {
            return Self::plain_lines(label, window, counters);
        }
        let task = tokio::spawn(async move {
            let start = tokio::time::Instant::now();
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tick.tick().await;
                let line = render_line(
                    &label,
                    &window,
                    start.elapsed(),
                    counters.completed.load(Ordering::Relaxed),
                    counters.errors.load(Ordering::Relaxed),
                );
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\r{line}");
                let _ = out.flush();
            }
        });
        Self {
            task: Some(task),
            terminal: true,
        }
    }
}

impl ProgressBar {
    /// A line on stderr every 5 s (the first after 5 s, so short runs print none).
    fn plain_lines(label: String, window: Window, counters: Arc<ProgressCounters>) -> Self {
        let task = tokio::spawn(async move {
            let start = tokio::time::Instant::now();
            let period = Duration::from_secs(5);
            let mut tick = tokio::time::interval_at(start + period, period);
            loop {
                tick.tick().await;
                eprintln!(
                    "{}",
                    plain_line(
                        &label,
                        &window,
                        start.elapsed(),
                        counters.completed.load(Ordering::Relaxed),
                        counters.errors.load(Ordering::Relaxed),
                    )
                );
            }
        });
        Self {
            task: Some(task),
            terminal: false,
        }
    }
}

/// The plain progress line: no bar, the percentage instead.
pub fn plain_line(
    label: &str,
    window: &Window,
    elapsed: Duration,
    completed: u64,
    errors: u64,
) -> String {
    let phase = if elapsed < window.warmup {
        "warm-up"
    } else {
        "measuring"
    };
    format!(
        "progress: {label}: {:.0}% {phase}, {:.0} s, {completed} ops, {errors} errors",
        fraction_done(window, elapsed, completed) * 100.0,
        elapsed.as_secs_f64(),
    )
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            if self.terminal {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\r\x1b[2K");
                let _ = out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_follows_time_or_ops() {
        let s = Duration::from_secs;
        let timed = Window {
            warmup: s(2),
            stop: StopAt::Elapsed(s(8)),
        };
        assert_eq!(fraction_done(&timed, s(5), 0), 0.5);
        assert_eq!(fraction_done(&timed, s(50), 0), 1.0);
        let counted = Window {
            warmup: s(0),
            stop: StopAt::Ops(200),
        };
        assert_eq!(fraction_done(&counted, s(100), 50), 0.25);
        assert_eq!(
            fraction_done(
                &Window {
                    warmup: s(0),
                    stop: StopAt::Ops(0)
                },
                s(0),
                0
            ),
            1.0
        );
    }

    #[test]
    fn plain_line_shows_percentage_phase_and_counts() {
        let s = Duration::from_secs;
        let w = Window {
            warmup: s(2),
            stop: StopAt::Elapsed(s(18)),
        };
        assert_eq!(
            plain_line("hedging off", &w, s(10), 4000, 1),
            "progress: hedging off: 50% measuring, 10 s, 4000 ops, 1 errors"
        );
        assert_eq!(
            plain_line("hedging 50ms", &w, s(1), 0, 0),
            "progress: hedging 50ms: 5% warm-up, 1 s, 0 ops, 0 errors"
        );
    }

    #[test]
    fn line_shows_bar_phase_and_counts() {
        let s = Duration::from_secs;
        let w = Window {
            warmup: s(2),
            stop: StopAt::Elapsed(s(8)),
        };
        let line = render_line("hedging off", &w, s(1), 0, 0);
        assert!(line.contains("warm-up"), "{line}");
        let line = render_line("hedging off", &w, s(5), 1500, 3);
        assert!(line.contains("[###############---------------]"), "{line}");
        assert!(
            line.contains("measuring") && line.contains("1500 ops") && line.contains("3 errors"),
            "{line}"
        );
    }
}
