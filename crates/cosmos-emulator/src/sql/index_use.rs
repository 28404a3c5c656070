//! Which queries the service answers from its index, so that an item kept out of it
//! (`x-ms-indexing-directive: Exclude`) is not found: a query with a WHERE clause (a filter is
//! looked up in the index) or an ORDER BY (sorted by the index). A query with neither reads the
//! stored items in order, and sees every one of them. Pure: a parsed query in, a flag out.

use super::ast::Query;

/// Whether `query` is answered from the index (see the module's description).
pub(crate) fn uses_index(query: &Query) -> bool {
    query.filter.is_some() || !query.order_by.is_empty()
}

#[cfg(test)]
mod tests {
    use super::uses_index;
    use crate::sql::parse_query;

    #[test]
    fn filters_and_sorts_use_the_index() {
        let table = [
            ("SELECT * FROM c", false),
            ("SELECT VALUE c.id FROM c", false),
            ("SELECT c.id FROM c JOIN t IN c.tags", false),
            ("SELECT TOP 1 * FROM c", false),
            ("SELECT * FROM c WHERE c.n = 1", true),
            ("SELECT * FROM c WHERE true", true),
            ("SELECT * FROM c ORDER BY c.n", true),
            ("SELECT c.n FROM c WHERE c.n > 0 ORDER BY c.n DESC", true),
        ];
        for (text, expected) in table {
            let query = parse_query(text).unwrap();
            assert_eq!(uses_index(&query), expected, "{text}");
        }
    }
}
