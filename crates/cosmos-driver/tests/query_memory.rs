//! Memory of a streamed cross-partition ORDER BY: 200,000 items over 8 ranges, read as a stream,
//! must keep the driver's live heap within a few pages per range. The ranges are served by an
//! in-process page source that builds each page when asked (so the measured heap is the driver's
//! buffers, not a stored data set); a counting allocator tracks the live bytes and their peak.
//! The only test of its binary, so no other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cosmos_driver::query::{
    PageSettings, PageTarget, Query, QueryItems, QueryOptions, QueryPageSource, QueryPager,
    QueryPlan, QueryScope, RangePage, TargetRange,
};
use cosmos_driver::{CosmosError, DiagnosticsContext, OperationOptions, ResponseHeaders};
use futures::future::BoxFuture;
use futures::StreamExt;
use serde_json::{json, Value};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const RANGES: usize = 8;
const PER_RANGE: usize = 25_000;
const PAGE: usize = 100;

/// Row `i` of range `r`: ascending `n` within each range, ranges interleaved.
fn row(r: usize, i: usize) -> Value {
    let n = i * RANGES + (RANGES - 1 - r);
    json!({
        "_rid": format!("{r}-{i}"),
        "orderByItems": [{"item": n}],
        "payload": {"id": format!("{r}-{i}"), "pk": format!("p{r}"), "n": n, "text": "x".repeat(64)},
    })
}

struct Generated;

impl QueryPageSource for Generated {
    fn partition_key_path_count(
        &self,
        _s: &PageSettings,
    ) -> BoxFuture<'_, Result<usize, CosmosError>> {
        Box::pin(async { Ok(1) })
    }

    fn plan(&self, _b: Bytes, _s: &PageSettings) -> BoxFuture<'_, Result<QueryPlan, CosmosError>> {
        let body = br#"{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{"orderBy":["Ascending"],"orderByExpressions":["c.n"],"rewrittenQuery":"SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n"},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}"#;
        Box::pin(async move { Ok(QueryPlan::from_body(body).expect("a plan")) })
    }

    fn ranges(
        &self,
        _refresh: bool,
        _options: &OperationOptions,
    ) -> BoxFuture<'_, Result<Vec<TargetRange>, CosmosError>> {
        Box::pin(async move {
            Ok((0..RANGES)
                .map(|r| TargetRange {
                    id: r.to_string(),
                    min: if r == 0 {
                        String::new()
                    } else {
                        format!("{:02X}", r * 32)
                    },
                    max: if r == RANGES - 1 {
                        "FF".into()
                    } else {
                        format!("{:02X}", (r + 1) * 32)
                    },
                })
                .collect())
        })
    }

    fn page(
        &self,
        _body: Bytes,
        target: PageTarget,
        continuation: Option<String>,
        _s: &PageSettings,
    ) -> BoxFuture<'_, Result<RangePage, CosmosError>> {
        Box::pin(async move {
            let PageTarget::Range(range) = target else {
                panic!("a cross-partition query pages by range")
            };
            let r: usize = range.id.parse().expect("a range id");
            let at: usize = continuation
                .map(|c| c.parse().expect("a position"))
                .unwrap_or(0);
            let end = (at + PAGE).min(PER_RANGE);
            Ok(RangePage {
                documents: (at..end).map(|i| row(r, i)).collect(),
                continuation: (end < PER_RANGE).then(|| end.to_string()),
                headers: ResponseHeaders::new(http::HeaderMap::new()),
                diagnostics: DiagnosticsContext::default(),
            })
        })
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_streamed_cross_partition_order_by_keeps_a_few_pages_per_range() {
    // What one page of one range holds on the heap.
    let before = LIVE.load(Ordering::Relaxed);
    let one_page: Vec<Value> = (0..PAGE).map(|i| row(0, i)).collect();
    let page_bytes = LIVE.load(Ordering::Relaxed) - before;
    drop(one_page);

    let pager = QueryPager::new(
        Arc::new(Generated),
        Query::new("SELECT * FROM c ORDER BY c.n"),
        QueryScope::CrossPartition,
        QueryOptions::new().with_max_item_count(PAGE as u32),
    );
    let mut items = QueryItems::<Value>::new(pager);
    let baseline = LIVE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let mut count = 0usize;
    let mut last = -1i64;
    while let Some(item) = items.next().await {
        let n = item.expect("an item")["n"].as_i64().expect("n");
        assert!(n > last, "ORDER BY order: {n} after {last}");
        last = n;
        count += 1;
    }
    let peak = PEAK.load(Ordering::Relaxed) - baseline;
    assert_eq!(count, RANGES * PER_RANGE);
    let bound = RANGES * 4 * page_bytes;
    println!(
        "cross-partition ORDER BY of {count} items over {RANGES} ranges: peak driver heap {peak} bytes \
         = {:.1} pages of {page_bytes} bytes per range (bound: 4 pages per range)",
        peak as f64 / (RANGES * page_bytes) as f64
    );
    assert!(
        peak < bound,
        "peak {peak} bytes, bound {bound} (one page is {page_bytes} bytes)"
    );
}
