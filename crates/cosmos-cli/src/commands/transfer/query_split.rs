//! Whether an export's query may be run once per feed range, the results simply put together:
//! true for a filter or projection; false when the query orders, groups, aggregates, limits
//! or de-duplicates across the container (the union of per-range answers would be wrong), which
//! then runs as one query. Judged from the words of the text, erring towards one query: a
//! keyword anywhere, even inside a string or as a property name, keeps it whole.

use super::export_token::{decode, is_ranges_token, RangeProgress};

/// How an export reads.
#[derive(Debug, PartialEq)]
pub enum Route {
    /// One query across the container, resumed from the driver's continuation.
    Whole,
    /// One query per feed range, several at once: from the start (`None`, every range) or from
    /// a parallel export's continuation (the ranges still to read).
    Ranges(Option<Vec<RangeProgress>>),
}

/// How an export of `query` reads, resuming from `continuation` when given: a parallel export's
/// token resumes the ranges; another token is a single query's; without one, a query that can
/// be split is. A parallel token that does not decode for this query is refused.
pub fn route(query: &str, continuation: Option<&str>) -> Result<Route, String> {
    match continuation {
        Some(t) if is_ranges_token(t) => decode(query, t).map(|p| Route::Ranges(Some(p))),
        Some(_) => Ok(Route::Whole),
        None if splittable(query) => Ok(Route::Ranges(None)),
        None => Ok(Route::Whole),
    }
}

/// Words that make a query's answer depend on every range at once.
const WHOLE_QUERY_WORDS: [&str; 11] = [
    "ORDER", "GROUP", "TOP", "DISTINCT", "OFFSET", "LIMIT", "COUNT", "SUM", "MIN", "MAX", "AVG",
];

/// Whether `query` can be split by feed range.
pub fn splittable(query: &str) -> bool {
    !query
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| {
            WHOLE_QUERY_WORDS
                .iter()
                .any(|w| word.eq_ignore_ascii_case(w))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_an_export_reads() {
        use super::super::export_token::encode;
        let all = "SELECT * FROM c";
        let ordered = "SELECT * FROM c ORDER BY c.n";
        let token = encode(all, &[]);
        let table: [(&str, Option<&str>, Result<Route, &str>); 6] = [
            (all, None, Ok(Route::Ranges(None))),
            (ordered, None, Ok(Route::Whole)),
            (all, Some("driver-token"), Ok(Route::Whole)),
            (all, Some(&token), Ok(Route::Ranges(Some(vec![])))),
            (ordered, Some(&token), Err("another --query")),
            (all, Some("r1.%%"), Err("not hex")),
        ];
        for (query, continuation, want) in table {
            let got = route(query, continuation);
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{query} {continuation:?}"),
                (Err(g), Err(w)) => assert!(g.contains(w), "{g}"),
                _ => panic!("{query} {continuation:?}: {got:?}"),
            }
        }
    }

    #[test]
    fn which_queries_are_split() {
        let table = [
            ("SELECT * FROM c", true),
            ("select c.id, c.n from c where c.n > 3 and c.pk = 'x'", true),
            ("SELECT VALUE c.id FROM c JOIN t IN c.tags", true),
            ("SELECT * FROM c ORDER BY c.n", false),
            ("SELECT TOP 10 * FROM c", false),
            ("SELECT DISTINCT c.pk FROM c", false),
            ("SELECT VALUE COUNT(1) FROM c", false),
            ("SELECT c.pk, sum(c.n) FROM c GROUP BY c.pk", false),
            ("SELECT * FROM c OFFSET 5 LIMIT 10", false),
            ("SELECT MAX(c.n) FROM c", false),
            ("SELECT AVG(c.n) FROM c", false),
            ("SELECT MIN(c.n) FROM c", false),
            // Erring towards one query: a keyword as a property name or in a string.
            ("SELECT c.count FROM c", false),
            ("SELECT * FROM c WHERE c.word = 'order'", false),
            // Parts of longer words do not count.
            ("SELECT c.orders, c.topic, c.maximum FROM c", true),
        ];
        for (query, want) in table {
            assert_eq!(splittable(query), want, "{query}");
        }
    }
}
