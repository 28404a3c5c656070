//! Read many (`container.read_many::<T>(&[(pk, id), ...])`): the plan ([`super::read_many_plan`])
//! carried out through the dispatcher, several groups at once, each request retried, routed and
//! hedged like a point read. Groups whose range has split since the range listing are planned
//! again against a fresh listing, through the one re-plan budget ([`crate::operations::Replans`]).

use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::read_many_plan::{plan_read_many, ReadManyGroup, ReadManyRequest};
use super::read_many_response::{ReadManyOptions, ReadManyResponse};
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::CosmosOperation;
use crate::operations::feed_body::feed_items;
use crate::operations::page_guard::PageGuard;
use crate::operations::partition_key_paths::partition_key_definition;
use crate::operations::{partition_key_ranges, run, Replanning, Round};
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::{ContainerReference, HashVersion, PartitionKey};
use crate::query::{page_operation, PageSettings, PageTarget};
use crate::routing::partition_key_path_segments;

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
    core: &DriverCore,
    container: &ContainerReference,
    options: &OperationOptions,
) -> Result<(Vec<Vec<String>>, HashVersion), CosmosError> {
    let (paths, version) = partition_key_definition(core, container, options).await?;
    let paths = paths
        .iter()
        .map(|p| partition_key_path_segments(p))
        .collect();
    Ok((paths, version))
}

async fn run_group(
    core: &DriverCore,
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
            match run(core, op, options).await {
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
                let response = run(core, op, options).await?;
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

/// What a read many has left to read and has found so far.
struct ReadManyRun {
    /// The items not yet read (all of them, then those of groups found gone).
    pending: Vec<(PartitionKey, String)>,
    /// Each pending item's index in the caller's list.
    indices: Vec<usize>,
    /// What was found, by the caller's index.
    found: Vec<Option<Value>>,
    total: GroupAnswer,
}

impl ReadManyRun {
    /// One round: the pending items planned against the ranges (the kept ones, or read again
    /// when `reread`) and every group read; the items of groups found gone stay pending.
    async fn round(
        &mut self,
        core: &DriverCore,
        container: &ContainerReference,
        (paths, version): (&[Vec<String>], HashVersion),
        options: &ReadManyOptions,
        reread: bool,
    ) -> Result<Round<()>, CosmosError> {
        let ranges = partition_key_ranges(core, container, reread, &options.request).await?;
        let groups = plan_read_many(&self.pending, &ranges, paths, version)?;
        let concurrency = options.max_concurrency.max(1);
        let answers: Vec<(ReadManyGroup, Result<GroupAnswer, CosmosError>)> =
            futures::stream::iter(groups)
                .map(|g| async move {
                    let a = run_group(core, container, &g, paths, &options.request).await;
                    (g, a)
                })
                .buffer_unordered(concurrency)
                .collect()
                .await;
        let mut gone: Vec<usize> = Vec::new();
        let mut first_gone: Option<CosmosError> = None;
        for (group, answer) in answers {
            match answer {
                Ok(a) => {
                    self.total.charge += a.charge;
                    self.total.diagnostics.extend(a.diagnostics);
                    for (i, doc) in a.found {
                        self.found[self.indices[i]] = Some(doc);
                    }
                }
                Err(e) if e.is_range_gone() => {
                    self.total.diagnostics.push(e.diagnostics().clone());
                    gone.extend(group.items.iter().map(|k| k.index));
                    first_gone.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        let Some(error) = first_gone else {
            return Ok(Round::Done(()));
        };
        // The next round plans only the items of the groups found gone (one re-plan for all).
        gone.sort_unstable();
        self.pending = gone.iter().map(|&i| self.pending[i].clone()).collect();
        self.indices = gone.iter().map(|&i| self.indices[i]).collect();
        Ok(Round::Gone(error))
    }
}

/// Reads `items` of `container`; see `ContainerClient::read_many`.
pub(crate) async fn read_many<T: DeserializeOwned>(
    core: &DriverCore,
    container: &ContainerReference,
    items: Vec<(PartitionKey, String)>,
    options: &ReadManyOptions,
) -> Result<ReadManyResponse<T>, CosmosError> {
    if items.is_empty() {
        return Ok(ReadManyResponse {
            items: Vec::new(),
            request_charge: 0.0,
            diagnostics: Vec::new(),
        });
    }
    let (paths, version) = key_paths(core, container, &options.request).await?;
    let mut run = ReadManyRun {
        pending: items.clone(),
        indices: (0..items.len()).collect(),
        found: vec![None; items.len()],
        total: GroupAnswer::default(),
    };
    let mut replanning = Replanning::default();
    loop {
        let round = run
            .round(
                core,
                container,
                (&paths, version),
                options,
                replanning.refresh(),
            )
            .await?;
        if replanning.settle(round, "read many").await?.is_some() {
            break;
        }
    }
    let ReadManyRun { found, total, .. } = run;
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
