//! PATCH conditions: `from c where <predicate>`, evaluated against the item being patched.

use std::collections::HashMap;

use serde_json::Value;

use crate::sql::ast::Query;
use crate::sql::eval::Ctx;
use crate::sql::exec::{for_each_row, passes, Flow};
use crate::sql::meter::Meter;
use crate::sql::parse_condition;
use crate::sql::sql_error::SqlError;

/// A parsed patch condition.
#[derive(Clone, Debug)]
pub(crate) struct Condition(Query);

impl Condition {
    /// Parses `from <alias> [where <predicate>]`.
    pub(crate) fn parse(text: &str) -> Result<Self, SqlError> {
        parse_condition(text).map(Self)
    }

    /// Whether the condition holds for `doc`, evaluated under `meter` (an error naming the limit
    /// when it runs out).
    pub(crate) fn holds(&self, doc: &Value, meter: &Meter) -> Result<bool, SqlError> {
        let params = HashMap::new();
        let ctx = Ctx {
            params: &params,
            aggregates: None,
            work: meter,
            subquery: crate::sql::collect::run_subquery,
        };
        let mut held = false;
        for_each_row(&self.0, Some(doc), None, &ctx, 0, &mut |row| {
            held = passes(&self.0, row, &ctx)?;
            Ok(if held { Flow::Stop } else { Flow::Go })
        })?;
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_a_table_of_conditions() {
        let doc =
            json!({"n": 5, "s": "abc", "b": true, "z": null, "list": [1, 2], "o": {"k": "v"}});
        let table: &[(&str, bool)] = &[
            ("from c", true),
            ("from c where c.n = 5", true),
            ("from c where c.n = 5.0", true),
            ("from c where c.n > 4 AND c.n <= 5", true),
            ("from c where c.n < 5", false),
            ("from c where c.n != 5", false),
            ("from c where c.n <> 6", true),
            ("from c where c.s = 'abc'", true),
            ("from c where c.s > 'abb'", true),
            ("from c where c.n = '5'", false),
            ("from c where NOT (c.n = '5')", false),
            ("from c where c.missing = 1", false),
            ("from c where NOT (c.missing = 1)", false),
            ("from c where c.missing = 1 OR c.b = true", true),
            ("from c where c.z = null", true),
            ("from c where c.o.k = 'v' AND c['o']['k'] = 'v'", true),
            ("from c where c.list[1] = 2", true),
            ("from c where c.o = c.o", true),
            (
                "from c where IS_DEFINED(c.o) AND NOT IS_DEFINED(c.nope)",
                true,
            ),
            ("from c where ARRAY_CONTAINS(c.list, 2)", true),
            (
                "from c where STARTSWITH(c.s, 'ab') AND LENGTH(c.s) = 3",
                true,
            ),
            ("from c where c.b", true),
            ("from c where c.n", false),
        ];
        for (text, want) in table {
            let cond = Condition::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                cond.holds(&doc, &Meter::unlimited()).unwrap(),
                *want,
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_malformed_conditions_and_unknown_functions() {
        for bad in [
            "where c.a = 1",
            "from",
            "from c where",
            "from c where (c.a = 1",
            "from c where c.a = 1 extra",
            "from c where c. = 1",
            "from c where FROB(c.a)",
            "from c where IS_DEFINED(c.a, c.b)",
            "from c join t in c.tags where t = 1",
        ] {
            assert!(Condition::parse(bad).is_err(), "{bad}");
        }
        let unbound = Condition::parse("from c where d.a = 1").unwrap_err();
        assert_eq!(
            (unbound.message.as_str(), unbound.position),
            ("Identifier 'd' could not be resolved.", Some(13))
        );
        let deep = format!("from c where {}c.a = 1{}", "(".repeat(70), ")".repeat(70));
        assert!(Condition::parse(&deep)
            .unwrap_err()
            .message
            .contains("limit"));
    }

    #[test]
    fn long_or_chains_are_flat_and_past_the_limits_refused() {
        let chain = vec!["1 = 1"; 5000].join(" or ");
        let cond = Condition::parse(&format!("from c where {chain}")).unwrap();
        assert!(cond.holds(&json!({}), &Meter::unlimited()).unwrap());
        let huge = vec!["1 = 1"; 400_000].join(" or ");
        let err = Condition::parse(&format!("from c where {huge}")).unwrap_err();
        assert!(err.message.contains("limit"), "{err}");
        let sums = vec!["1"; 500].join(" + ");
        let err = Condition::parse(&format!("from c where {sums} = 500")).unwrap_err();
        assert!(err.message.contains("levels deep"), "{err}");
    }
}
