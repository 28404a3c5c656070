//! `cosmos item import`: documents read from a file or stdin on a thread of their own, checked,
//! and written through the driver's bulk executor in chunks (a few chunks at once), so memory holds
//! at most a few chunks whatever the input's size. Rejects go to their sink with line numbers; the
//! summary says how far the input is finished.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cosmos_driver::bulk::{BulkOperation, BulkOptions};
use cosmos_driver::{
    ContainerClient, CosmosDriver, CosmosError, CosmosOperation, DatabaseReference,
    OperationOptions,
};
use futures::stream::FuturesUnordered;
use futures::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::partition_key::paths_of_container;
use super::printing::body_json;
use super::transfer::document::{prepare, too_large, Prepared, MAX_DOCUMENT_BYTES};
use super::transfer::progress::{Progress, Snapshot};
use super::transfer::records::RecordReader;
use super::transfer::rejects::{Reject, Rejects};
use super::CommandError;
use crate::args::transfer::{ImportArgs, ImportMode};

/// Bulk runs going at once.
const RUNS_AT_ONCE: usize = 3;
/// Checked documents waiting between the reading thread and the runs.
const QUEUE: usize = 1024;
/// A record may be a little larger than the largest document (white space, system properties).
const RECORD_LIMIT: usize = MAX_DOCUMENT_BYTES + 64 * 1024;

/// What the reading thread sends: a document to write (as the driver's bulk operation, which
/// holds the document as a parsed JSON value: about 5 KB of memory for a 300-byte document, so
/// the import's peak memory follows `--chunk`), or a record refused before sending.
enum Intake {
    Document {
        line: u64,
        id: String,
        op: BulkOperation,
    },
    Refused(Reject),
}

/// The bulk operation that writes `p`, or why it cannot be written.
fn operation(mode: ImportMode, line: u64, p: Prepared) -> Intake {
    let op = match mode {
        ImportMode::Create => BulkOperation::create(p.partition_key, &p.doc),
        ImportMode::Upsert => BulkOperation::upsert(p.partition_key, &p.doc),
    };
    match op {
        Ok(op) => Intake::Document { line, id: p.id, op },
        Err(e) => Intake::Refused(Reject {
            line,
            id: Some(p.id),
            status: None,
            reason: e.message().to_owned(),
        }),
    }
}

/// What one chunk's run answered.
struct ChunkDone {
    first: u64,
    written: u64,
    request_charge: f64,
    rejects: Vec<Reject>,
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn open_input(input: &str) -> Result<(Box<dyn Read + Send>, Option<u64>), CommandError> {
    if input == "-" {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let file =
        File::open(input).map_err(|e| CommandError::Input(format!("cannot open {input}: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(file), size))
}

/// Reads, numbers and checks the records; stops when `stop` is set or the receiver is gone.
/// Counts the records skipped in `skipped`; answers the read error that ended the input, if any.
fn read_records(
    input: Box<dyn Read + Send>,
    counters: [Arc<AtomicU64>; 2],
    paths: Vec<String>,
    (mode, skip): (ImportMode, u64),
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Intake>,
) -> Result<(), String> {
    let [bytes, skipped] = counters;
    let counting = Counting {
        inner: input,
        bytes,
    };
    let mut reader =
        RecordReader::new(BufReader::with_capacity(256 * 1024, counting), RECORD_LIMIT);
    let mut seen = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let Some(record) = reader
            .next_record()
            .map_err(|e| format!("cannot read the input: {e}"))?
        else {
            break;
        };
        seen += 1;
        if seen <= skip {
            skipped.store(seen, Ordering::Relaxed);
            continue;
        }
        let line = record.line;
        let intake = match record.text {
            Err(big) => Intake::Refused(Reject {
                line,
                id: None,
                status: None,
                reason: too_large(big.bytes),
            }),
            Ok(text) if text.len() > MAX_DOCUMENT_BYTES => Intake::Refused(Reject {
                line,
                id: None,
                status: None,
                reason: too_large(text.len() as u64),
            }),
            Ok(text) => match prepare(&text, &paths) {
                Ok(prepared) => operation(mode, line, prepared),
                Err(r) => Intake::Refused(Reject {
                    line,
                    id: r.id,
                    status: None,
                    reason: r.reason,
                }),
            },
        };
        if tx.blocking_send(intake).is_err() {
            break;
        }
    }
    Ok(())
}

/// The documents of one chunk: their lines and ids, and their operations.
#[derive(Default)]
struct Chunk {
    lines: Vec<(u64, String)>,
    ops: Vec<BulkOperation>,
}

/// Runs one chunk; `first` is the index of its first document in the input.
fn run_chunk(
    container: &ContainerClient,
    first: u64,
    Chunk { lines, ops }: Chunk,
) -> JoinHandle<Result<ChunkDone, CosmosError>> {
    let bulk = container.bulk_with(BulkOptions::new().with_content_response(false));
    tokio::spawn(async move {
        let mut rejects = Vec::new();
        let response = bulk.run_iter(ops).await?;
        let request_charge = response.request_charge();
        let mut written = 0;
        for (result, (line, id)) in response.into_results().into_iter().zip(lines) {
            match result {
                Ok(r) if r.is_success() => written += 1,
                Ok(r) => rejects.push(Reject {
                    line,
                    id: Some(id),
                    status: Some((r.status.status, r.status.sub_status)),
                    reason: r.message.unwrap_or_else(|| format!("status {}", r.status)),
                }),
                Err(e) => rejects.push(Reject {
                    line,
                    id: Some(id),
                    status: e.status().map(|s| (s, e.sub_status().unwrap_or(0))),
                    reason: e.message().to_owned(),
                }),
            }
        }
        Ok(ChunkDone {
            first,
            written,
            request_charge,
            rejects,
        })
    })
}

/// Runs the import and prints its summary.
pub async fn run(driver: &CosmosDriver, args: &ImportArgs) -> Result<(), CommandError> {
    if args.chunk == 0 || args.chunk > 100_000 {
        return Err("--chunk must be between 1 and 100000".into());
    }
    let reference = DatabaseReference::new(&args.db)?.container(&args.container)?;
    let response = driver
        .execute(
            CosmosOperation::read_container(reference),
            &OperationOptions::default(),
        )
        .await?;
    let paths = paths_of_container(&body_json(response.body()))?;
    let (input, total_bytes) = open_input(&args.input)?;
    let mut rejects = Rejects::open(args.rejects.as_deref()).map_err(CommandError::Input)?;
    // Every bulk request carries the driver's request class (`--priority`, `--throughput-bucket`).
    let container = driver.container(&args.db, &args.container);
    let bytes = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = mpsc::channel(QUEUE);
    let skipped = Arc::new(AtomicU64::new(0));
    let reader = {
        let counters = [bytes.clone(), skipped.clone()];
        let (stop, how) = (stop.clone(), (args.mode, args.skip));
        std::thread::spawn(move || read_records(input, counters, paths, how, stop, tx))
    };

    let mut progress = Progress::new("import", total_bytes, args.quiet);
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut running = FuturesUnordered::new();
    let mut unfinished = BTreeSet::new();
    let mut chunk = Chunk::default();
    // Documents taken from the input (after the skip), in order: the index of the next one.
    let mut taken = args.skip;
    let mut chunk_first = taken;
    let (mut written, mut request_charge) = (0u64, 0.0f64);
    let mut input_over = false;
    let mut interrupted = false;
    let mut failure: Option<CosmosError> = None;
    loop {
        let ready = chunk.ops.len() >= args.chunk || (input_over && !chunk.ops.is_empty());
        if ready && running.len() < RUNS_AT_ONCE {
            unfinished.insert(chunk_first);
            running.push(run_chunk(
                &container,
                chunk_first,
                std::mem::take(&mut chunk),
            ));
            chunk_first = taken;
            continue;
        }
        if input_over && running.is_empty() {
            break;
        }
        tokio::select! {
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                input_over = true;
                stop.store(true, Ordering::Relaxed);
                rx.close();
            }
            done = running.next(), if !running.is_empty() => {
                let done = match done {
                    Some(Ok(Ok(done))) => done,
                    Some(Ok(Err(e))) => {
                        failure.get_or_insert(e);
                        input_over = true;
                        stop.store(true, Ordering::Relaxed);
                        rx.close();
                        continue;
                    }
                    Some(Err(join)) => return Err(CommandError::Failed(format!("a bulk run ended: {join}"))),
                    None => continue,
                };
                unfinished.remove(&done.first);
                written += done.written;
                request_charge += done.request_charge;
                let mut refused = done.rejects;
                refused.sort_by_key(|r| r.line);
                for r in &refused {
                    rejects.write(r).map_err(CommandError::Failed)?;
                }
            }
            intake = rx.recv(), if !input_over && chunk.ops.len() < args.chunk => {
                match intake {
                    None => input_over = true,
                    Some(Intake::Document { line, id, op }) => {
                        taken += 1;
                        chunk.lines.push((line, id));
                        chunk.ops.push(op);
                    }
                    Some(Intake::Refused(r)) => {
                        taken += 1;
                        rejects.write(&r).map_err(CommandError::Failed)?;
                    }
                }
            }
            _ = tick.tick() => {}
        }
        progress.show(&Snapshot {
            items: written,
            request_charge,
            bytes: bytes.load(Ordering::Relaxed),
            total_bytes,
            elapsed: progress.elapsed(),
        });
    }
    progress.finish();
    rejects.flush().map_err(CommandError::Failed)?;
    stop.store(true, Ordering::Relaxed);
    drop(rx);
    // After a stop the reader may wait on its input (a terminal): it is left to end with the
    // process. Otherwise the input is over and its error, if any, is the command's.
    if !interrupted && failure.is_none() {
        match reader.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(CommandError::Input(e)),
            Err(_) => return Err(CommandError::Failed("the input reader stopped".into())),
        }
    }
    let skipped = skipped.load(Ordering::Relaxed);
    // A failed run leaves its chunk (and later ones) unfinished: resume from the earliest.
    let resume_skip = unfinished.first().copied().unwrap_or(taken);
    let elapsed = progress.elapsed().as_secs_f64();
    let summary = json!({ "summary": {
        "read": taken - args.skip + skipped,
        "skipped": skipped,
        "written": written,
        "rejected": rejects.count(),
        "request_charge": (request_charge * 100.0).round() / 100.0,
        "seconds": (elapsed * 1000.0).round() / 1000.0,
        "items_per_s": if elapsed > 0.0 { (written as f64 / elapsed).round() } else { 0.0 },
        "resume_skip": resume_skip,
        "interrupted": interrupted,
    }});
    eprintln!("{summary}");
    if let Some(e) = failure {
        return Err(e.into());
    }
    if interrupted {
        return Err(CommandError::Failed(format!(
            "interrupted: resume with --skip {resume_skip}"
        )));
    }
    match rejects.first_class() {
        None => Ok(()),
        Some(class) => Err(CommandError::Rejected(
            class,
            format!("{} document(s) rejected", rejects.count()),
        )),
    }
}
