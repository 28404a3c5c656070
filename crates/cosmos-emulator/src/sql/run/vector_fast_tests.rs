use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{json, Value};

use super::*;
use crate::sql::exec::order_keys;
use crate::sql::parse_query;
use crate::sql::search::{prepare, SearchPolicy};

fn stored(body: &str) -> StoredDoc {
    StoredDoc {
        body: Bytes::from(body.to_owned()),
        etag: String::new(),
        rid: [0; 16],
        unique: Box::default(),
        vectors: Default::default(),
        indexed: true,
    }
}

fn query(text: &str, params: &HashMap<String, Value>) -> Query {
    let mut q = parse_query(text).unwrap();
    prepare(&mut q, &SearchPolicy::default(), params).unwrap();
    q
}

fn ctx_of<'a>(params: &'a HashMap<String, Value>, meter: &'a Meter) -> Ctx<'a> {
    Ctx {
        params,
        aggregates: None,
        work: meter,
        subquery: crate::sql::collect::run_subquery,
    }
}

/// The ORDER BY key the general evaluation gives the parsed item.
fn slow_key(q: &Query, params: &HashMap<String, Value>, body: &str) -> Val {
    let doc: Value = serde_json::from_str(body).unwrap();
    let meter = Meter::unlimited();
    let names = ["c"];
    let values = [&doc];
    let scope = Scope {
        names: &names,
        values: &values,
        outer: None,
    };
    let mut keys = order_keys(q, &scope, &ctx_of(params, &meter)).unwrap();
    keys.pop().unwrap()
}

fn bits(v: &Val) -> Option<u64> {
    v.as_ref().map(|v| v.as_f64().expect("a number").to_bits())
}

/// A small deterministic generator.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One element's JSON text: floats written as 32-bit and as 64-bit numbers, integers
    /// (including ones past int8 and uint8), and now and then something else.
    fn element(&mut self) -> String {
        let unit = (self.next() as f64 / (1u64 << 31) as f64) * 2.0 - 1.0;
        match self.below(20) {
            0..=5 => format!("{}", unit as f32),
            6..=10 => format!("{unit:?}"),
            11..=14 => format!("{}", self.below(300) as i64 - 140),
            15 => format!("{}", self.below(256)),
            16 => format!("{:e}", unit * 1e200),
            17 => "0".to_owned(),
            18 => format!("{}", (unit as f32) as f64),
            _ => match self.below(8) {
                0 => "\"1\"".to_owned(),
                1 => "null".to_owned(),
                2 => "[1]".to_owned(),
                _ => format!("{}", self.below(128)),
            },
        }
    }

    /// An item's text: usually a vector of `dims` at `e`, sometimes of another length, missing,
    /// not an array, all zeros, repeated (a tie), or written twice.
    fn item(&mut self, dims: usize, previous: &[String]) -> String {
        let vector = |g: &mut Self, n: usize| -> String {
            let xs: Vec<String> = (0..n).map(|_| g.element()).collect();
            format!("[{}]", xs.join(", "))
        };
        match self.below(16) {
            0 => r#"{"id": "x", "other": [1, 2]}"#.to_owned(),
            1 => r#"{"id": "x", "e": "not a vector"}"#.to_owned(),
            2 => format!(r#"{{"id": "x", "e": {}}}"#, vector(self, dims + 1)),
            3 => format!(
                r#"{{"e": {}, "e": {}}}"#,
                vector(self, dims),
                vector(self, dims)
            ),
            4 => format!(r#"{{"e": [{}]}}"#, vec!["0"; dims].join(",")),
            5 if !previous.is_empty() => {
                previous[self.below(previous.len() as u64) as usize].clone()
            }
            6 => format!(r#"{{"e": {{"nested": {}}}}}"#, vector(self, dims)),
            _ => format!(
                r#"{{"id": "x{}", "pk": "p", "e": {}, "tail": {{"a": [true, null]}}}}"#,
                self.below(1000),
                vector(self, dims)
            ),
        }
    }
}

#[test]
fn the_fast_score_is_the_general_score_bit_for_bit() {
    let mut g = Gen(7);
    let mut compared = 0;
    let mut defined = 0;
    for dims in [1usize, 2, 3, 8, 17] {
        let mut items: Vec<String> = Vec::new();
        for _ in 0..120 {
            let item = g.item(dims, &items);
            items.push(item);
        }
        for distance in ["cosine", "dotproduct", "euclidean"] {
            for data_type in ["float32", "float16", "int8", "uint8"] {
                // The probe: integers, so that it is a vector of every data type.
                let probe: Vec<i64> = (0..dims).map(|_| g.below(100) as i64).collect();
                let params = HashMap::from([("@v".to_owned(), json!(probe))]);
                let options = json!({"distanceFunction": distance, "dataType": data_type});
                for text in [
                    format!("SELECT TOP 5 c.id FROM c ORDER BY VectorDistance(c.e, @v, false, {options})"),
                    format!("SELECT TOP 5 * FROM c ORDER BY VectorDistance(@v, c[\"e\"], true, {options})"),
                ] {
                    let q = query(&text, &params);
                    let meter = Meter::unlimited();
                    let fast = FastVector::plan(&q, &[], &ctx_of(&params, &meter))
                        .unwrap_or_else(|| panic!("{text}: no fast plan"));
                    for item in &items {
                        let doc = stored(item);
                        let want = slow_key(&q, &params, item);
                        for round in 0..2 {
                            let got = fast.key(&meter, &doc).unwrap().expect("JSON text");
                            assert_eq!(bits(&got), bits(&want), "{text} over {item} (round {round})");
                            assert_eq!(got, want);
                        }
                        compared += 1;
                        defined += usize::from(want.is_some());
                    }
                }
            }
        }
    }
    assert!(
        defined > compared / 4 && defined < compared,
        "{defined} of {compared} defined"
    );
}

#[test]
fn the_default_options_and_a_literal_vector_score_as_the_general_evaluation() {
    let params = HashMap::new();
    let q = query(
        "SELECT TOP 1 c.id FROM c WHERE true ORDER BY VectorDistance(c.a.b, [0.25, -1, 3e-3])",
        &params,
    );
    let meter = Meter::unlimited();
    let fast = FastVector::plan(&q, &[], &ctx_of(&params, &meter)).expect("fast");
    for item in [
        r#"{"a": {"b": [0.1, 0.2, 0.3]}}"#,
        r#"{"a": {"b": [1, 2, 3]}}"#,
        r#"{"a": {"b": [0, 0, 0]}}"#,
        r#"{"a": [{"b": [1, 2, 3]}]}"#,
    ] {
        let got = fast.key(&meter, &stored(item)).unwrap().unwrap();
        assert_eq!(bits(&got), bits(&slow_key(&q, &params, item)), "{item}");
    }
    assert_eq!(
        fast.key(&meter, &stored("{")).unwrap(),
        None,
        "not JSON: evaluated in general"
    );
}

#[test]
fn scoring_charges_its_dimensions_and_the_first_read_its_text() {
    let params = HashMap::from([("@v".to_owned(), json!(vec![1; 256]))]);
    let q = query(
        "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.e, @v)",
        &params,
    );
    let meter = Meter::unlimited();
    let fast = FastVector::plan(&q, &[], &ctx_of(&params, &meter)).unwrap();
    let body = format!(r#"{{"id": "a", "e": {}}}"#, json!(vec![0.5; 256]));
    let doc = stored(&body);
    let first = Meter::unlimited();
    fast.key(&first, &doc).unwrap();
    assert_eq!(first.used(), units_of(body.len()) + units_of(256));
    let again = Meter::unlimited();
    fast.key(&again, &doc).unwrap();
    assert_eq!(again.used(), units_of(256), "kept: not read again");
    let short = Meter::new(2, std::time::Duration::from_secs(60));
    assert!(
        fast.key(&short, &stored(&body)).is_err(),
        "a budget that runs out stops it"
    );
}

#[test]
fn other_shapes_are_evaluated_in_general() {
    let params = HashMap::from([
        ("@v".to_owned(), json!([1, 2])),
        ("@o".to_owned(), json!({"distanceFunction": "dotproduct"})),
        ("@s".to_owned(), json!("text")),
    ]);
    let computed = [ComputedProperty {
        name: "cp".into(),
        alias: "c".into(),
        expr: Expr::Literal(json!([1, 2])),
    }];
    let cases = [
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, @v)",
            true,
        ),
        (
            "SELECT TOP 3 c.id FROM c WHERE true ORDER BY VectorDistance(c.e, @v)",
            true,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, @v, false, @o)",
            true,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, [1, -2])",
            true,
        ),
        ("SELECT c.id FROM c ORDER BY VectorDistance(c.e, @v)", true),
        (
            "SELECT TOP 3 c.id FROM c WHERE c.k = 1 ORDER BY VectorDistance(c.e, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c WHERE false ORDER BY VectorDistance(c.e, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c JOIN t IN c.tags ORDER BY VectorDistance(c.e, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c.sub c ORDER BY VectorDistance(c.e, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, c.f)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e[0], @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.cp, @v)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, @s)",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, [])",
            false,
        ),
        (
            "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, @v), c.id",
            false,
        ),
        ("SELECT TOP 3 c.id FROM c ORDER BY c.id", false),
        (
            "SELECT DISTINCT TOP 3 c.id FROM c ORDER BY VectorDistance(c.e, @v)",
            false,
        ),
    ];
    for (text, fast) in cases {
        let q = query(text, &params);
        let meter = Meter::unlimited();
        let plan = FastVector::plan(&q, &computed, &ctx_of(&params, &meter));
        assert_eq!(plan.is_some(), fast, "{text}");
    }
}
