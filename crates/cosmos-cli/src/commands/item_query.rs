//! `cosmos item query --db D --container C 'SELECT ...' [--pk P] [--param @name=JSON]...
//! [--max-item-count N] [--max-pages N] [--continuation TOKEN] [--jsonl]`: runs a query through
//! the driver (cross-partition unless a partition key is given) and prints its result as one JSON
//! array, or one JSON document per line as pages arrive. `--diagnostics` puts the query summary on
//! stderr; a query stopped by `--max-pages` prints the token that resumes it on stderr.

use cosmos_driver::query::{Query, QueryOptions, QueryScope, QuerySummary};
use cosmos_driver::CosmosDriver;
use futures::StreamExt;
use serde_json::{json, Value};

use super::partition_key::from_flags;
use super::CommandError;
use crate::cli::QueryArgs;

/// `@name=JSON` (anything that is not JSON is a string), as a name and a value.
pub fn parse_param(text: &str) -> Result<(String, Value), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("--param {text:?} must be @name=JSON"));
    };
    let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

/// The query with its `--param` values.
pub fn build_query(args: &QueryArgs) -> Result<Query, CommandError> {
    let mut query = Query::new(args.query.clone());
    for p in &args.params {
        let (name, value) = parse_param(p).map_err(CommandError::Input)?;
        query = query.with_parameter(&name, &value)?;
    }
    Ok(query)
}

fn summary_json(s: &QuerySummary) -> Value {
    json!({
        "pages": s.pages,
        "requests": s.requests,
        "request_charge": super::printing::charge(s.request_charge),
        "hedged_pages": s.hedged_pages,
        "alternate_wins": s.alternate_wins,
        "splits": s.splits,
    })
}

/// Runs the query and prints its result.
pub async fn run(
    driver: &CosmosDriver,
    args: &QueryArgs,
    diagnostics: bool,
) -> Result<(), CommandError> {
    let query = build_query(args)?;
    let scope = match from_flags(&args.at).map_err(CommandError::Input)? {
        Some(pk) => QueryScope::PartitionKey(pk),
        None => QueryScope::CrossPartition,
    };
    let mut options = QueryOptions::new();
    if let Some(n) = args.max_item_count {
        options = options.with_max_item_count(n);
    }
    if let Some(t) = &args.continuation {
        options = options.with_continuation(t.clone());
    }
    let container = driver.container(&args.at.db, &args.at.container);
    let mut pages = container
        .query_items_with::<Value>(query, scope, options)
        .into_pages();
    let mut all: Vec<Value> = Vec::new();
    let mut summary = QuerySummary::default();
    let mut resume: Option<String> = None;
    let mut read = 0u64;
    while let Some(page) = pages.next().await {
        let page = page?;
        read += 1;
        summary = page.summary().clone();
        let stop = args.max_pages.is_some_and(|m| read >= m);
        if stop {
            resume = page.continuation()?.map(str::to_owned);
        }
        let items = page.into_items();
        if args.jsonl {
            for item in &items {
                println!(
                    "{}",
                    serde_json::to_string(item)
                        .map_err(|e| format!("cannot print an item: {e}"))?
                );
            }
        } else {
            all.extend(items);
        }
        if stop {
            break;
        }
    }
    if !args.jsonl {
        let text = serde_json::to_string_pretty(&Value::Array(all))
            .map_err(|e| format!("cannot print the result: {e}"))?;
        println!("{text}");
    }
    super::printing::print_charge(summary.request_charge);
    if let Some(token) = resume {
        eprintln!("{}", json!({ "continuation": token }));
    }
    if diagnostics {
        eprintln!("{}", json!({ "query_summary": summary_json(&summary) }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_json_or_strings() {
        assert_eq!(parse_param("@lo=10").unwrap(), ("@lo".into(), json!(10)));
        assert_eq!(parse_param("@s=abc").unwrap(), ("@s".into(), json!("abc")));
        assert_eq!(parse_param(r#"@o={"a":[1]}"#).unwrap().1, json!({"a": [1]}));
        assert_eq!(parse_param("@e=").unwrap().1, json!(""));
        assert!(parse_param("@lo").unwrap_err().contains("@name=JSON"));
    }
}
