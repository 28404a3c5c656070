//! `cosmos changefeed process|lag`: one change feed processor instance writing each change it
//! handles to stdout as a JSON line and its lease events to stderr, stopped cleanly by SIGTERM
//! or Ctrl-C; and the estimator's lag of every lease.

use std::io::Write;

use cosmos_driver::processor::{
    parse_timestamp, ChangeFeedEstimator, ChangeFeedProcessor, LeaseWrite, ProcessorContext,
    ProcessorEvent, ProcessorOptions, ProcessorStart,
};
use cosmos_driver::{ContainerClient, ContainerProperties, CosmosDriver, PartitionKeyDefinition};
use serde_json::{json, Value};

use super::{connect, CommandError};
use crate::args::target::TargetArgs;
use crate::cli::{ChangefeedAction, LeaseTarget, ProcessArgs};

/// Runs a change feed subcommand.
pub async fn run(target: &TargetArgs, action: &ChangefeedAction) -> Result<(), CommandError> {
    let driver = connect::driver(target).await?;
    match action {
        ChangefeedAction::Process(args) => process(&driver, args).await,
        ChangefeedAction::Lag(t) => lag(&driver, t).await,
    }
}

/// `--from`: `beginning`, `now` or an RFC 3339 time.
pub fn parse_start(text: &str) -> Result<ProcessorStart, String> {
    match text.trim() {
        "beginning" => Ok(ProcessorStart::Beginning),
        "now" => Ok(ProcessorStart::Now),
        t => parse_timestamp(t)
            .map(ProcessorStart::PointInTime)
            .map_err(|_| format!("--from takes beginning, now or an RFC 3339 time; got {t:?}")),
    }
}

/// The monitored container and the lease container (created with `/id` when missing).
async fn containers(
    driver: &CosmosDriver,
    t: &LeaseTarget,
) -> Result<(ContainerClient, ContainerClient), CommandError> {
    let key = PartitionKeyDefinition::new("/id")?;
    driver
        .database(&t.db)
        .create_container_if_not_exists(&ContainerProperties::new(&t.leases, &key), None)
        .await?;
    Ok((
        driver.container(&t.db, &t.container),
        driver.container(&t.db, &t.leases),
    ))
}

/// One line of stderr for an event; `None` for lease writes unless they are asked for.
pub fn event_line(instance: &str, event: &ProcessorEvent, writes: bool) -> Option<Value> {
    let at = cosmos_driver::processor::format_timestamp(std::time::SystemTime::now());
    let line = match event {
        ProcessorEvent::Acquired { lease } => json!({"event": "acquired", "lease": lease}),
        ProcessorEvent::Released { lease } => json!({"event": "released", "lease": lease}),
        ProcessorEvent::Lost { lease, reason } => {
            json!({"event": "lost", "lease": lease, "reason": reason})
        }
        ProcessorEvent::Split { lease, children } => {
            json!({"event": "split", "lease": lease, "children": children})
        }
        ProcessorEvent::HandlerFailed {
            lease,
            attempt,
            error,
        } => json!({"event": "handler_failed", "lease": lease, "attempt": attempt, "error": error}),
        ProcessorEvent::Failed { lease, error } => {
            json!({"event": "failed", "lease": lease, "error": error})
        }
        ProcessorEvent::LeaseWritten {
            lease,
            write,
            owner,
            previous_etag,
            etag,
        } => {
            if !writes {
                return None;
            }
            let write = match write {
                LeaseWrite::Create => "create",
                LeaseWrite::Acquire => "acquire",
                LeaseWrite::Renew => "renew",
                LeaseWrite::Checkpoint => "checkpoint",
                LeaseWrite::Release => "release",
                LeaseWrite::Delete => "delete",
                _ => "other",
            };
            json!({"event": "lease_write", "lease": lease, "write": write, "owner": owner,
                   "previous_etag": previous_etag, "etag": etag})
        }
        _ => json!({"event": "other", "detail": format!("{event:?}")}),
    };
    let mut line = line;
    line["instance"] = json!(instance);
    line["at"] = json!(at);
    Some(line)
}

/// The stdout lines of one batch.
pub fn change_lines(batch: &[Value], ctx: &ProcessorContext) -> String {
    let mut out = String::new();
    for doc in batch {
        let line = json!({"lease": ctx.lease, "lsn": doc.get("_lsn"), "document": doc});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

async fn process(driver: &CosmosDriver, args: &ProcessArgs) -> Result<(), CommandError> {
    let start = parse_start(&args.from)?;
    let options = ProcessorOptions::new()
        .with_start(start)
        .with_max_items(args.max_items)
        .with_lease_intervals(args.lease_renew, args.lease_acquire, args.lease_expiration)
        .with_poll_delay(args.poll_delay);
    options.validate()?;
    let (monitored, leases) = containers(driver, &args.target).await?;
    let instance = args.instance.clone();
    let writes = args.log_lease_writes;
    let processor =
        ChangeFeedProcessor::builder(monitored, leases, &args.target.name, &args.instance)
            .with_options(options)
            .on_event(move |e| {
                if let Some(line) = event_line(&instance, &e, writes) {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{line}");
                }
            })
            .start(|batch: Vec<Value>, ctx: ProcessorContext| async move {
                let text = change_lines(&batch, &ctx);
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .map_err(|e| format!("writing to stdout: {e}"))
            })
            .await?;
    eprintln!(
        "{}",
        json!({"event": "started", "instance": args.instance, "name": args.target.name})
    );
    wait_for_stop_signal().await;
    processor.stop().await;
    eprintln!("{}", json!({"event": "stopped", "instance": args.instance}));
    Ok(())
}

/// Waits for Ctrl-C or (on Unix) SIGTERM.
async fn wait_for_stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

async fn lag(driver: &CosmosDriver, t: &LeaseTarget) -> Result<(), CommandError> {
    let (monitored, leases) = containers(driver, t).await?;
    let lags = ChangeFeedEstimator::new(monitored, leases, &t.name)
        .estimate()
        .await?;
    let total: u64 = lags.iter().map(|l| l.lag).sum();
    let out = json!({"leases": lags, "total": total});
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn from_takes_beginning_now_or_a_time() {
        assert_eq!(parse_start("beginning"), Ok(ProcessorStart::Beginning));
        assert_eq!(parse_start("now"), Ok(ProcessorStart::Now));
        assert_eq!(
            parse_start("1970-01-01T00:01:00Z"),
            Ok(ProcessorStart::PointInTime(
                UNIX_EPOCH + Duration::from_secs(60)
            ))
        );
        assert!(parse_start("yesterday").unwrap_err().contains("RFC 3339"));
    }

    #[test]
    fn lease_writes_are_logged_only_when_asked() {
        let e = ProcessorEvent::LeaseWritten {
            lease: "3".into(),
            write: LeaseWrite::Checkpoint,
            owner: Some("i1".into()),
            previous_etag: Some("\"a\"".into()),
            etag: Some("\"b\"".into()),
        };
        assert!(event_line("i1", &e, false).is_none());
        let line = event_line("i1", &e, true).unwrap();
        assert_eq!(line["write"], "checkpoint");
        assert_eq!(line["etag"], "\"b\"");
        assert_eq!(line["instance"], "i1");
    }
}
