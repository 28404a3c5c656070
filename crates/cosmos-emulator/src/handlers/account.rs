//! GET /: the database account document (regions, their endpoints, write configuration).

use bytes::Bytes;
use serde_json::{json, Value};

use crate::exchange::{Reply, RequestCtx, Shared};
use crate::protocol::{charge, headers, ApiError};

/// Query limits some SDKs read from the account (sent as a JSON string, as the service does).
const QUERY_ENGINE_CONFIGURATION: &str = r#"{"maxSqlQueryInputLength":262144,"maxJoinsPerSqlQuery":5,"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,"maxInExpressionItemsCount":16000,"queryMaxInMemorySortDocumentCount":500,"maxQueryRequestTimeoutFraction":0.9,"sqlAllowNonFiniteNumbers":false,"sqlAllowAggregateFunctions":true,"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"allowNewKeywords":true,"sqlAllowLike":true,"sqlAllowGroupByClause":true,"maxSpatialQueryCells":12,"spatialMaxGeometryPointCount":256,"sqlDisableOptimizationFlags":0,"sqlAllowTop":true,"enableSpatialIndexing":true}"#;

/// The account document as it stands (write regions first).
pub(crate) fn account_document(shared: &Shared) -> Value {
    let topology = &shared.store.topology;
    let regions = topology.regions();
    let location = |i: &usize| {
        regions
            .get(*i)
            .map(|r| json!({"name": r.name, "databaseAccountEndpoint": r.endpoint}))
    };
    let writable: Vec<Value> = topology
        .write_regions()
        .iter()
        .filter_map(location)
        .collect();
    let readable: Vec<Value> = topology.ordered().iter().filter_map(location).collect();
    let mut document = json!({
        "_self": "",
        "id": shared.account_id,
        "_rid": format!("{}.documents.azure.com", shared.account_id),
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": writable,
        "readableLocations": readable,
        "enableMultipleWriteLocations": topology.multi_write(),
        "userReplicationPolicy": {"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "userConsistencyPolicy": {"defaultConsistencyLevel": "Session"},
        "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
        "queryEngineConfiguration": QUERY_ENGINE_CONFIGURATION,
    });
    if let Some(fields) = document.as_object_mut() {
        for (name, value) in super::account_admin::fields(shared.account_switches.get()) {
            if let Some(value) = value {
                fields.insert(name.to_owned(), Value::Bool(value));
            }
        }
    }
    document
}

/// GET /
pub(super) fn read(ctx: &RequestCtx<'_>) -> Result<Reply, ApiError> {
    let body = account_document(ctx.shared).to_string();
    Ok(Reply::json(200, Bytes::from(body), charge::metadata())
        .header(headers::MAX_MEDIA_STORAGE, "10240")
        .header(headers::MEDIA_STORAGE, "0"))
}
