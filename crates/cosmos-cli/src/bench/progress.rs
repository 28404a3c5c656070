//! A one-line progress bar, drawn only when stdout is a terminal.

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
}

impl ProgressBar {
    /// Starts redrawing every 200 ms when stdout is a terminal; otherwise draws nothing.
    pub fn start(label: String, window: Window, counters: Arc<ProgressCounters>) -> Self {
        if !std::io::stdout().is_terminal() {
            return Self { task: None };
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
        Self { task: Some(task) }
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
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
