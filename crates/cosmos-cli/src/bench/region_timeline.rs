//! Point reads per second that reached each region of the embedded emulator during a run, sampled
//! once a second from its request counters (warm-up included, from the run's start). It shows when
//! traffic left a slow region and when it came back, which latency percentiles cannot.

use std::collections::BTreeMap;
use std::time::Duration;

use cosmos_emulator::faults::{OpKind, RequestCounters};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Reads per second by region, in sampling order.
pub type Timeline = BTreeMap<String, Vec<u64>>;

/// The per-second differences of cumulative counts (the first sample counts from `start`).
pub fn per_second(start: u64, cumulative: &[u64]) -> Vec<u64> {
    let mut last = start;
    cumulative
        .iter()
        .map(|&c| {
            let d = c.saturating_sub(last);
            last = c;
            d
        })
        .collect()
}

/// A sampler running while a run runs.
pub struct RegionTimeline {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Timeline>,
}

impl RegionTimeline {
    /// Starts sampling the reads of `regions` from `counters` every second.
    pub fn start(counters: RequestCounters, regions: Vec<String>) -> Self {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let read = |r: &str| counters.get(r, OpKind::Read);
            let start: Vec<u64> = regions.iter().map(|r| read(r)).collect();
            let mut samples: Vec<Vec<u64>> = vec![Vec::new(); regions.len()];
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tick.tick() => {
                        for (i, r) in regions.iter().enumerate() {
                            samples[i].push(read(r));
                        }
                    }
                }
            }
            regions
                .iter()
                .zip(start)
                .zip(samples)
                .map(|((r, s), c)| (r.clone(), per_second(s, &c)))
                .collect()
        });
        Self { stop, task }
    }

    /// Stops sampling; the reads per second of each region.
    pub async fn finish(self) -> Timeline {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

/// One line per region: `East US: 200 198 3 0 ... (reads/s)`.
pub fn describe(timeline: &Timeline) -> String {
    timeline
        .iter()
        .map(|(region, counts)| {
            let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
            format!("  {region}: {} (reads/s)\n", counts.join(" "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_table() {
        let cases: &[(u64, &[u64], &[u64])] = &[
            (0, &[], &[]),
            (0, &[5, 5, 12], &[5, 0, 7]),
            (10, &[10, 30], &[0, 20]),
            (10, &[8], &[0]),
        ];
        for &(start, cumulative, want) in cases {
            assert_eq!(per_second(start, cumulative), want, "{cumulative:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn samples_each_second_until_stopped() {
        let counters = RequestCounters::default();
        let timeline = RegionTimeline::start(counters.clone(), vec!["East US".into()]);
        // Requests land half-way between samples (taken at 1 s, 2 s, 3 s).
        tokio::time::sleep(Duration::from_millis(500)).await;
        for n in [3, 0, 5] {
            for _ in 0..n {
                counters.record("East US", OpKind::Read);
            }
            tokio::time::sleep(Duration::from_millis(1_000)).await;
        }
        let t = timeline.finish().await;
        assert_eq!(t["East US"], [3, 0, 5]);
        assert!(describe(&t).contains("East US: 3 0 5 (reads/s)"));
    }
}
