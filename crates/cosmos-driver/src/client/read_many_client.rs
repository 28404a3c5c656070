//! `container.read_many::<T>(&[(pk, id), ...])`: the plan ([`crate::read_many`]) carried out
//! through the driver's pipeline, several groups at once, each request retried, routed and hedged
//! like a point read. A group whose range has split since the range listing is planned again
//! against a fresh listing.

use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::driver_page_source::DriverPageSource;
use crate::diagnostics::DiagnosticsContext;
use crate::operations::feed_body::feed_items;
use crate::operations::page_guard::PageGuard;
use crate::operations::Replans;
use crate::options::OperationOptions;
use crate::protocol::{ContainerReference, HashVersion};
use crate::routing::partition_key_path_segments;
use crate::query::{page_operation, PageSettings, PageTarget, QueryPageSource};
use crate::read_many::{
    plan_read_many, ReadManyGroup, ReadManyOptions, ReadManyRequest, ReadManyResponse,
};
use crate::{CosmosDriver, CosmosError, CosmosOperation, ErrorKind, PartitionKey};

/// The most pages one group query reads.
const MAX_PAGES_PER_GROUP: usize = 1000;

/// What one group answered.
#[derive(Default)]
struct GroupAnswer {
    found: Vec<(usize, Value)>,
    charge: f64,
    diagnostics: Vec<DiagnosticsContext>,
}

/// The container's partition key paths (read once per driver and kept), each split into its
/// property names, and its hash version.
async fn key_paths(
    driver: &CosmosDriver,
    container: &ContainerReference,
    options: &OperationOptions,
) -> Result<(Vec<Vec<String>>, HashVersion), CosmosError> {
    let (paths, version) = driver.partition_key_definition(container, options).await?;
    let paths = paths
        .iter()
        .map(|p| partition_key_path_segments(p))
        .collect();
    Ok((paths, version))
}

async fn run_group(
    driver: &CosmosDriver,
    container: &ContainerReference,
    group: &ReadManyGroup,
    paths: &[Vec<String>],
    options: &OperationOptions,
) -> Result<GroupAnswer, CosmosError> {
    let mut answer = GroupAnswer::default();
    match &group.request {
        ReadManyRequest::PointRead(key) => {
            let op = CosmosOperation::read_item(container.item(&key.id)?)
                .with_partition_key(key.partition_key.clone());
            match driver.execute(op, options).await {
                Ok(response) => {
                    answer.charge += response.request_charge();
                    answer.diagnostics.push(response.diagnostics().clone());
                    answer.found.push((key.index, response.json()?));
                }
                Err(e) if e.is_not_found() && matches!(e.sub_status(), None | Some(0)) => {
                    answer.charge += e.headers().map_or(0.0, |h| h.request_charge());
                    answer.diagnostics.push(e.diagnostics().clone());
                }
                Err(e) => return Err(e),
            }
        }
        ReadManyRequest::Query(query) => {
            let body = query.to_body()?;
            let settings = PageSettings {
                request: options.clone(),
                ..PageSettings::default()
            };
            let target = PageTarget::Range(group.range.clone());
            let mut continuation: Option<String> = None;
            let mut guard = PageGuard::new();
            let what = format!("a read-many query of range {}", group.range.id);
            for _ in 0..MAX_PAGES_PER_GROUP {
                let op = page_operation(
                    container,
                    body.clone(),
                    &target,
                    continuation.as_deref(),
                    &settings,
                )?;
                let response = driver.execute(op, options).await?;
                answer.charge += response.request_charge();
                answer.diagnostics.push(response.diagnostics().clone());
                let documents: Vec<Value> = feed_items(&response, "Documents", &what)?;
                guard
                    .check(
                        continuation.as_deref(),
                        response.continuation(),
                        documents.len(),
                    )
                    .map_err(|fault| {
                        fault
                            .into_error(&what)
                            .with_diagnostics(response.diagnostics().clone())
                    })?;
                for doc in documents {
                    if let Some(index) = group.index_of(&doc, paths) {
                        answer.found.push((index, doc));
                    }
                }
                continuation = response.continuation().map(str::to_owned);
                if continuation.is_none() {
                    return Ok(answer);
                }
            }
            return Err(CosmosError::new(
                ErrorKind::Service,
                format!("a read-many query did not end within {MAX_PAGES_PER_GROUP} pages"),
            ));
        }
    }
    Ok(answer)
}

/// Reads `items` of `container`; see `ContainerClient::read_many`.
pub(crate) async fn read_many<T: DeserializeOwned>(
    driver: &CosmosDriver,
    container: &ContainerReference,
    items: Vec<(PartitionKey, String)>,
    options: &ReadManyOptions,
) -> Result<ReadManyResponse<T>, CosmosError> {
    let mut total = GroupAnswer::default();
    if items.is_empty() {
        return Ok(ReadManyResponse {
            items: Vec::new(),
            request_charge: 0.0,
            diagnostics: Vec::new(),
        });
    }
    let (paths, version) = key_paths(driver, container, &options.request).await?;
    let source = DriverPageSource::new(driver.clone(), container.clone());
    let mut pending = items.clone();
    let mut indices: Vec<usize> = (0..items.len()).collect();
    let mut found: Vec<Option<Value>> = vec![None; items.len()];
    let mut replans = Replans::default();
    let mut reread = false;
    loop {
        // The driver's kept ranges first; read again when a range was found gone.
        let ranges = source.ranges(reread, &options.request).await?;
        let groups = plan_read_many(&pending, &ranges, &paths, version)?;
        let concurrency = options.max_concurrency.max(1);
        let answers: Vec<(ReadManyGroup, Result<GroupAnswer, CosmosError>)> =
            futures::stream::iter(groups)
                .map(|g| {
                    let paths = &paths;
                    async move {
                        let a = run_group(driver, container, &g, paths, &options.request).await;
                        (g, a)
                    }
                })
                .buffer_unordered(concurrency)
                .collect()
                .await;
        let mut gone: Vec<usize> = Vec::new();
        for (group, answer) in answers {
            match answer {
                Ok(a) => {
                    total.charge += a.charge;
                    total.diagnostics.extend(a.diagnostics);
                    for (i, doc) in a.found {
                        found[indices[i]] = Some(doc);
                    }
                }
                Err(e) if e.is_range_gone() && replans.left() => {
                    total.diagnostics.push(e.diagnostics().clone());
                    gone.extend(group.items.iter().map(|k| k.index));
                }
                Err(e) => return Err(e),
            }
        }
        if gone.is_empty() {
            break;
        }
        gone.sort_unstable();
        pending = gone.iter().map(|&i| pending[i].clone()).collect();
        indices = gone.iter().map(|&i| indices[i]).collect();
        // A re-plan was left when the groups were found gone (checked above).
        tokio::time::sleep(replans.take().unwrap_or_default()).await;
        reread = true;
    }
    let items = found
        .into_iter()
        .flatten()
        .map(|doc| {
            serde_json::from_value(doc).map_err(|e| {
                CosmosError::new(
                    ErrorKind::Deserialization,
                    format!("a read-many item does not fit the requested type: {e}"),
                )
            })
        })
        .collect::<Result<Vec<T>, _>>()?;
    Ok(ReadManyResponse {
        items,
        request_charge: total.charge,
        diagnostics: total.diagnostics,
    })
}
