//! `GET /_emulator/status`: the regions with their role, endpoint, configured replication lag,
//! how many writes each replica has yet to apply, and any outage; what the explorer shows.

use bytes::Bytes;
use http::Method;
use serde::Serialize;

use crate::exchange::{Reply, Shared};
use crate::faults::OutageMode;
use crate::store::ReplicationLag;

#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct RegionStatus {
    pub name: String,
    pub endpoint: String,
    /// "write" or "read".
    pub role: &'static str,
    /// The replication lag writes reaching this region are given.
    pub lag: String,
    /// Commits (summed over every partition) this region's replica has not applied yet.
    pub writes_behind: u64,
    /// "refuse" or "close" while the region is out.
    pub outage: Option<&'static str>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Status {
    write_region: String,
    multi_write: bool,
    profile: String,
    regions: Vec<RegionStatus>,
}

/// The lag as the `--replication-lag-ms` flag spells it.
pub(super) fn lag_text(lag: &ReplicationLag) -> String {
    match lag {
        ReplicationLag::Fixed(d) => format!("{}", d.as_millis()),
        ReplicationLag::Uniform { min, max } => {
            format!("uniform:{}-{}", min.as_millis(), max.as_millis())
        }
        ReplicationLag::LogNormal { median, sigma } => {
            format!("lognormal:{},{sigma}", median.as_millis())
        }
    }
}

/// Answers the status request.
pub(crate) fn status(shared: &Shared, method: &Method) -> Reply {
    if method != Method::GET {
        let body = serde_json::json!({"code": "MethodNotAllowed", "message": "Use GET /_emulator/status."});
        return Reply::json(405, Bytes::from(body.to_string()), 0.0);
    }
    let store = &shared.store;
    let topology = &store.topology;
    let now = tokio::time::Instant::now();
    let lags = store.lags.read().map(|l| l.clone()).unwrap_or_default();
    let mut behind = vec![0u64; topology.regions().len()];
    for db in store.catalog.databases() {
        for container in db.containers() {
            for partition in container.partitions() {
                let Ok(p) = partition.read() else { continue };
                let committed = p.committed_lsn();
                for (i, slot) in behind.iter_mut().enumerate() {
                    *slot += committed.saturating_sub(p.visible_lsn(i, now));
                }
            }
        }
    }
    let regions = topology
        .regions()
        .iter()
        .enumerate()
        .map(|(i, r)| RegionStatus {
            name: r.name.clone(),
            endpoint: r.endpoint.clone(),
            role: if topology.can_write(i) {
                "write"
            } else {
                "read"
            },
            lag: lags.get(i).map(lag_text).unwrap_or_default(),
            writes_behind: behind[i],
            outage: shared.outages.mode_at(i).map(|m| match m {
                OutageMode::Refuse => "refuse",
                OutageMode::Close => "close",
            }),
        })
        .collect();
    let status = Status {
        write_region: topology
            .regions()
            .get(topology.hub())
            .map(|r| r.name.clone())
            .unwrap_or_default(),
        multi_write: topology.multi_write(),
        profile: shared.faults.profile_name(),
        regions,
    };
    let body = serde_json::to_vec(&status).unwrap_or_default();
    Reply::json(200, Bytes::from(body), 0.0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn lags_read_as_the_flag_spells_them() {
        let ms = Duration::from_millis;
        let cases = [
            (ReplicationLag::Fixed(ms(0)), "0"),
            (ReplicationLag::Fixed(ms(250)), "250"),
            (
                ReplicationLag::Uniform {
                    min: ms(5),
                    max: ms(50),
                },
                "uniform:5-50",
            ),
            (
                ReplicationLag::LogNormal {
                    median: ms(20),
                    sigma: 0.5,
                },
                "lognormal:20,0.5",
            ),
        ];
        for (lag, text) in cases {
            assert_eq!(lag_text(&lag), text);
            assert_eq!(
                ReplicationLag::parse(text).unwrap(),
                lag,
                "{text} parses back"
            );
        }
    }
}
