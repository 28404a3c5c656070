//! `cosmos item export`: a query's results (every item by default) written as JSON Lines page by
//! page, so memory holds one page. Stopped by Ctrl-C or `--max-pages`, it prints the continuation
//! that resumes it after the last page written.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::CosmosDriver;
use futures::StreamExt;
use serde_json::{json, Value};

use super::transfer::progress::{Progress, Snapshot};
use super::CommandError;
use crate::args::transfer::{ExportArgs, Priority};

fn open_output(args: &ExportArgs) -> Result<Box<dyn Write>, CommandError> {
    let Some(path) = &args.out else {
        return Ok(Box::new(BufWriter::with_capacity(
            256 * 1024,
            std::io::stdout().lock(),
        )));
    };
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .append(args.append)
        .truncate(!args.append)
        .open(path)
        .map_err(|e| CommandError::Input(format!("cannot open {}: {e}", path.display())))?;
    Ok(Box::new(BufWriter::with_capacity(256 * 1024, file)))
}

/// Runs the export and prints its summary.
pub async fn run(driver: &CosmosDriver, args: &ExportArgs) -> Result<(), CommandError> {
    if args.max_item_count == 0 {
        return Err("--max-item-count must be at least 1".into());
    }
    let mut options = QueryOptions::new().with_max_item_count(args.max_item_count);
    if let Some(t) = &args.continuation {
        options = options.with_continuation(t.clone());
    }
    let mut out = open_output(args)?;
    let container = driver
        .container(&args.db, &args.container)
        .with_options(Priority::options(args.priority));
    let mut pages = container
        .query_items_with::<Value>(
            Query::new(args.query.clone()),
            QueryScope::CrossPartition,
            options,
        )
        .into_pages();
    let mut progress = Progress::new("export", None, args.quiet);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let (mut items, mut page_count, mut bytes) = (0u64, 0u64, 0u64);
    let mut request_charge = 0.0;
    // The token after the last page written; `None` once the feed has ended.
    let mut resume: Option<String> = args.continuation.clone();
    let mut ended = false;
    let mut interrupted = false;
    let write_error = |e: std::io::Error| CommandError::Failed(format!("cannot write: {e}"));
    loop {
        if args.max_pages.is_some_and(|m| page_count >= m) {
            break;
        }
        let page = tokio::select! {
            _ = &mut ctrl_c => { interrupted = true; break; }
            page = pages.next() => page,
        };
        let Some(page) = page else {
            ended = true;
            break;
        };
        let page = page?;
        page_count += 1;
        request_charge = page.summary().request_charge;
        let next = page.continuation()?.map(str::to_owned);
        for item in page.into_items() {
            let text = serde_json::to_vec(&item)
                .map_err(|e| CommandError::Failed(format!("cannot write an item: {e}")))?;
            out.write_all(&text).map_err(write_error)?;
            out.write_all(b"\n").map_err(write_error)?;
            bytes += text.len() as u64 + 1;
            items += 1;
        }
        resume = next;
        if resume.is_none() {
            ended = true;
            break;
        }
        progress.show(&Snapshot {
            items,
            request_charge,
            bytes,
            total_bytes: None,
            elapsed: progress.elapsed(),
        });
    }
    out.flush().map_err(write_error)?;
    progress.finish();
    let elapsed = progress.elapsed().as_secs_f64();
    let mut summary = json!({
        "exported": items,
        "pages": page_count,
        "bytes": bytes,
        "request_charge": (request_charge * 100.0).round() / 100.0,
        "seconds": (elapsed * 1000.0).round() / 1000.0,
        "items_per_s": if elapsed > 0.0 { (items as f64 / elapsed).round() } else { 0.0 },
        "complete": ended,
    });
    if !ended {
        summary["continuation"] = json!(resume);
    }
    eprintln!("{}", json!({ "summary": summary }));
    if interrupted {
        return Err(CommandError::Failed(
            "interrupted: resume with --continuation (see the summary)".into(),
        ));
    }
    Ok(())
}
