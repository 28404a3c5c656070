//! `cosmos item export`: a query's results (every item by default) written as JSON Lines as the
//! pages arrive. A query that can be split by feed range (see `transfer::query_split`) reads
//! several ranges at once, with a bounded number of pages waiting; another runs as one query, one
//! page at a time. Stopped by Ctrl-C or `--max-pages`, it prints the continuation that resumes it
//! after the last page written.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{ContainerClient, CosmosDriver, FeedRange};
use futures::StreamExt;
use serde_json::{json, Value};

use super::transfer::export_token::{encode, RangeProgress};
use super::transfer::progress::{Progress, Snapshot};
use super::transfer::query_split::{route, Route};
use super::transfer::range_reader::{RangeJob, RangeReader, MAX_IN_FLIGHT};
use super::CommandError;
use crate::args::transfer::ExportArgs;

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

fn write_error(e: std::io::Error) -> CommandError {
    CommandError::Failed(format!("cannot write: {e}"))
}

/// What has been written so far.
struct Written {
    out: Box<dyn Write>,
    items: u64,
    pages: u64,
    bytes: u64,
    request_charge: f64,
    progress: Progress,
}

impl Written {
    /// Writes one page's items, one JSON line each.
    fn page(&mut self, items: Vec<Value>) -> Result<(), CommandError> {
        self.pages += 1;
        for item in items {
            let text = serde_json::to_vec(&item)
                .map_err(|e| CommandError::Failed(format!("cannot write an item: {e}")))?;
            self.out.write_all(&text).map_err(write_error)?;
            self.out.write_all(b"\n").map_err(write_error)?;
            self.bytes += text.len() as u64 + 1;
            self.items += 1;
        }
        self.progress.show(&Snapshot {
            items: self.items,
            request_charge: self.request_charge,
            bytes: self.bytes,
            total_bytes: None,
            elapsed: self.progress.elapsed(),
        });
        Ok(())
    }
}

/// How a run ended: whether the feed was read to its end, whether Ctrl-C stopped it, and the
/// continuation after the last page written (when not ended).
struct Ending {
    ended: bool,
    interrupted: bool,
    resume: Option<String>,
}

/// Runs the export and prints its summary.
pub async fn run(driver: &CosmosDriver, args: &ExportArgs) -> Result<(), CommandError> {
    if args.max_item_count == 0 {
        return Err("--max-item-count must be at least 1".into());
    }
    if !(1..=MAX_IN_FLIGHT).contains(&args.parallel) {
        return Err(format!("--parallel must be between 1 and {MAX_IN_FLIGHT}").into());
    }
    let route = route(&args.query, args.continuation.as_deref()).map_err(CommandError::Input)?;
    let container = driver.container(&args.db, &args.container);
    let ranges = match route {
        Route::Whole => None,
        Route::Ranges(Some(progress)) => Some(progress),
        Route::Ranges(None) => Some(
            container
                .feed_ranges()
                .await?
                .iter()
                .map(|r| RangeProgress {
                    range: r.to_token(),
                    continuation: None,
                })
                .collect(),
        ),
    };
    let mut written = Written {
        out: open_output(args)?,
        items: 0,
        pages: 0,
        bytes: 0,
        request_charge: 0.0,
        progress: Progress::new("export", None, args.quiet),
    };
    let ending = match ranges {
        Some(ranges) => by_range(&container, args, ranges, &mut written).await?,
        None => whole(&container, args, &mut written).await?,
    };
    finish(written, ending)
}

fn finish(mut written: Written, ending: Ending) -> Result<(), CommandError> {
    written.out.flush().map_err(write_error)?;
    written.progress.finish();
    let elapsed = written.progress.elapsed().as_secs_f64();
    let items = written.items;
    let mut summary = json!({
        "exported": items,
        "pages": written.pages,
        "bytes": written.bytes,
        "request_charge": (written.request_charge * 100.0).round() / 100.0,
        "seconds": (elapsed * 1000.0).round() / 1000.0,
        "items_per_s": if elapsed > 0.0 { (items as f64 / elapsed).round() } else { 0.0 },
        "complete": ending.ended,
    });
    if !ending.ended {
        summary["continuation"] = json!(ending.resume);
    }
    eprintln!("{}", json!({ "summary": summary }));
    if ending.interrupted {
        return Err(CommandError::Failed(
            "interrupted: resume with --continuation (see the summary)".into(),
        ));
    }
    Ok(())
}

fn page_options(args: &ExportArgs) -> QueryOptions {
    QueryOptions::new().with_max_item_count(args.max_item_count)
}

/// One query across the container, one page at a time.
async fn whole(
    container: &ContainerClient,
    args: &ExportArgs,
    written: &mut Written,
) -> Result<Ending, CommandError> {
    let mut options = page_options(args);
    if let Some(t) = &args.continuation {
        options = options.with_continuation(t.clone());
    }
    let mut pages = container
        .query_items_with::<Value>(
            Query::new(args.query.clone()),
            QueryScope::CrossPartition,
            options,
        )
        .into_pages();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut ending = Ending {
        ended: false,
        interrupted: false,
        resume: args.continuation.clone(),
    };
    while args.max_pages.is_none_or(|m| written.pages < m) {
        let page = tokio::select! {
            _ = &mut ctrl_c => { ending.interrupted = true; break; }
            page = pages.next() => page,
        };
        let Some(page) = page else {
            ending.ended = true;
            break;
        };
        let page = page?;
        written.request_charge = page.summary().request_charge;
        let next = page.continuation()?.map(str::to_owned);
        written.page(page.into_items())?;
        ending.resume = next;
        if ending.resume.is_none() {
            ending.ended = true;
            break;
        }
    }
    Ok(ending)
}

/// One query per feed range, `--parallel` at once, pages written as they arrive. Each range's
/// continuation moves only when its page is written, so the token printed on a stop resumes
/// every range after its last page written.
async fn by_range(
    container: &ContainerClient,
    args: &ExportArgs,
    ranges: Vec<RangeProgress>,
    written: &mut Written,
) -> Result<Ending, CommandError> {
    let mut jobs = Vec::with_capacity(ranges.len());
    for (index, p) in ranges.iter().enumerate() {
        let range = FeedRange::from_token(&p.range)
            .map_err(|e| CommandError::Input(format!("the continuation is damaged: {e}")))?;
        jobs.push(RangeJob {
            index,
            range,
            continuation: p.continuation.clone(),
        });
    }
    // The ranges still to read (`None`: finished).
    let mut left: Vec<Option<RangeProgress>> = ranges.into_iter().map(Some).collect();
    let mut reader = RangeReader::start(
        container.clone(),
        args.query.clone(),
        page_options(args),
        jobs,
        args.parallel,
    );
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    while left.iter().any(Option::is_some) {
        if args.max_pages.is_some_and(|m| written.pages >= m) {
            break;
        }
        let page = tokio::select! {
            _ = &mut ctrl_c => { interrupted = true; break; }
            page = reader.next() => page,
        };
        let Some(page) = page else { break };
        let page = page?;
        written.request_charge += page.request_charge;
        let index = page.index;
        let next = page.next;
        written.page(page.items)?;
        match (left.get_mut(index), next) {
            (Some(slot), None) => *slot = None,
            (Some(Some(p)), Some(t)) => p.continuation = Some(t),
            _ => {}
        }
    }
    drop(reader);
    let left: Vec<RangeProgress> = left.into_iter().flatten().collect();
    Ok(Ending {
        ended: left.is_empty(),
        interrupted,
        resume: (!left.is_empty()).then(|| encode(&args.query, &left)),
    })
}
