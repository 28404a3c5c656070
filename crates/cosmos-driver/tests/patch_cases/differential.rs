//! The same operation lists applied by the driver's read-modify-write loop and by a server's
//! native PATCH must give the same document (member order included), or both be refused.

use cosmos_driver::patch::{PatchInstructions, PatchOperation};
use cosmos_driver::{ContainerReference, CosmosDriver};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use super::support::{
    create, loop_options, native_patch, patch, read_doc, service_body, user_part,
};

/// The document every case starts from: scalars, nested objects and arrays, escaped names.
pub fn base_doc(id: &str) -> Value {
    json!({
        "id": id, "pk": "p", "n": 5, "f": 1.5, "s": "text", "flag": true, "nul": null,
        "arr": [1, 2, 3], "objs": [{"k": 1}, {"k": 2}],
        "o": {"a": 1, "b": {"c": [10, 20]}}, "e": {}, "ea": [], "a/b": 1, "m~n": 2
    })
}

/// Hand-written cases: every operation, its edges, and lists where later operations build on
/// earlier ones or fail after them.
pub fn table() -> Vec<PatchInstructions> {
    let p = PatchInstructions::new;
    vec![
        p().add("/color", json!("silver"))
            .remove("/flag")
            .set("/f", json!(3.25))
            .increment("/n", 10),
        p().add("/arr/-", json!(4))
            .add("/arr/0", json!(0))
            .add("/arr/5", json!(9)),
        p().add("/arr/1", json!({"x": [1]})),
        p().add("/o/b/c/1", json!(15))
            .add("/o/new", json!([]))
            .add("/o/new/-", json!(1)),
        p().set("/arr/1", json!("two"))
            .set("/o/a", json!({"deep": true})),
        p().set("/objs/0/k", json!(7))
            .set("/objs/1/extra", json!(null)),
        p().replace("/s", json!("new"))
            .replace("/arr/2", json!(30))
            .replace("/nul", json!(0)),
        p().remove("/arr/0")
            .remove("/o/b")
            .remove("/a~1b")
            .remove("/m~0n"),
        p().increment("/n", -7)
            .increment("/f", 1)
            .increment("/o/b/c/0", 5)
            .increment("/fresh", 2),
        p().increment("/n", 0.5)
            .increment("/arr/1", 0.25)
            .increment("/newf", 1.5),
        p().move_from("/s", "/o/s")
            .move_from("/arr/0", "/arr/-")
            .move_from("/objs/1", "/objs/0"),
        p().move_from("/o/b/c", "/c")
            .move_from("/o", "/e/o")
            .add("/e/o/z", json!(1)),
        p().move_from("/arr/2", "/ea/0")
            .move_from("/objs", "/o/objs"),
        p().add("/x", json!(1))
            .add("/y", json!(2))
            .add("/z", json!(3))
            .remove("/x")
            .add("/x", json!(4)),
        // Refused by both: the whole list is undone.
        p().add("/ok", json!(1)).replace("/missing", json!(1)),
        p().increment("/s", 1),
        p().increment("/nul", 1),
        p().add("/arr/9", json!(1)),
        p().set("/arr/3", json!(1)),
        p().set("/ea/0", json!(1)),
        p().remove("/arr/3"),
        p().remove("/nothing"),
        p().add("/no/parent", json!(1)),
        p().move_from("/nothing", "/x"),
        p().move_from("/o", "/o/b/moved"),
        p().add("/s/child", json!(1)),
        p().set("/id", json!("other")),
        p().set("/pk", json!("q")),
        p().remove("/_ts"),
    ]
}

/// Member names and array positions random paths are built from.
const KEYS: &[&str] = &[
    "n", "f", "s", "flag", "nul", "arr", "objs", "o", "a", "b", "c", "k", "e", "ea", "a/b", "m~n",
    "new",
];
const POSITIONS: &[&str] = &["0", "1", "2", "3", "-"];

/// Pointers to every value of the base document (except the root), and for each container one
/// fresh child (a new member, or the array's end).
fn base_paths() -> (Vec<String>, Vec<String>) {
    fn walk(
        value: &Value,
        tokens: &mut Vec<String>,
        existing: &mut Vec<String>,
        fresh: &mut Vec<String>,
    ) {
        let pointer = |tokens: &[String]| {
            cosmos_driver::patch::JsonPointer::from_tokens(tokens.iter().map(String::as_str))
                .as_str()
                .to_owned()
        };
        let children: Vec<(String, &Value)> = match value {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => return,
        };
        tokens.push(if value.is_array() {
            "-".to_owned()
        } else {
            "new".to_owned()
        });
        fresh.push(pointer(tokens));
        tokens.pop();
        for (token, child) in children {
            if tokens.is_empty() && (token == "id" || token == "pk") {
                continue;
            }
            tokens.push(token);
            existing.push(pointer(tokens));
            walk(child, tokens, existing, fresh);
            tokens.pop();
        }
    }
    let (mut existing, mut fresh) = (Vec::new(), Vec::new());
    walk(&base_doc("x"), &mut Vec::new(), &mut existing, &mut fresh);
    (existing, fresh)
}

/// A random path: usually one that exists in the base document, sometimes a fresh child of one of
/// its containers, sometimes anything built from the usual names.
fn random_path(rng: &mut StdRng, existing: &[String], fresh: &[String]) -> String {
    match rng.random_range(0..10) {
        0..=5 => existing[rng.random_range(0..existing.len())].clone(),
        6..=7 => fresh[rng.random_range(0..fresh.len())].clone(),
        _ => {
            let tokens: Vec<&str> = (0..rng.random_range(1..=3))
                .map(|_| {
                    if rng.random_bool(0.3) {
                        POSITIONS[rng.random_range(0..POSITIONS.len())]
                    } else {
                        KEYS[rng.random_range(0..KEYS.len())]
                    }
                })
                .collect();
            cosmos_driver::patch::JsonPointer::from_tokens(tokens)
                .as_str()
                .to_owned()
        }
    }
}

fn random_value(rng: &mut StdRng) -> Value {
    match rng.random_range(0..6) {
        0 => json!(rng.random_range(-100..100)),
        1 => json!(f64::from(rng.random_range(-400..400)) / 4.0),
        2 => json!("v"),
        3 => json!({"k": rng.random_range(0..3)}),
        4 => json!([rng.random_range(0..3)]),
        _ => Value::Null,
    }
}

/// A random operation list of 1 to 6 operations. Left out, as known disagreements between native
/// implementations (documented in the driver's `patch::ops`): an increment at an array's end and
/// a move onto its own path.
pub fn random_list(rng: &mut StdRng, existing: &[String], fresh: &[String]) -> PatchInstructions {
    let mut spec = PatchInstructions::new();
    let count = rng.random_range(1..=5);
    while spec.operations.len() < count {
        let path = random_path(rng, existing, fresh);
        let op = match rng.random_range(0..6) {
            0 => PatchOperation::Add {
                path,
                value: random_value(rng),
            },
            1 => PatchOperation::Set {
                path,
                value: random_value(rng),
            },
            2 => PatchOperation::Replace {
                path,
                value: random_value(rng),
            },
            3 => PatchOperation::Remove { path },
            4 if path.ends_with("/-") => continue,
            4 => {
                let by = if rng.random_bool(0.7) {
                    cosmos_driver::patch::CosmosNumber::Int(rng.random_range(-50..50))
                } else {
                    cosmos_driver::patch::CosmosNumber::Float(
                        f64::from(rng.random_range(-8..8)) / 8.0,
                    )
                };
                PatchOperation::Increment { path, value: by }
            }
            _ => {
                let from = random_path(rng, existing, fresh);
                if from == path {
                    continue;
                }
                PatchOperation::Move { from, path }
            }
        };
        spec.operations.push(op);
    }
    spec
}

/// How one list fared on both sides.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Applied; the document's user part, serialized (so member order counts), without the id.
    Applied(String),
    /// Refused.
    Refused,
}

fn comparable(doc: &Value) -> String {
    let mut doc = user_part(doc);
    if let Value::Object(map) = &mut doc {
        map.shift_remove("id");
    }
    doc.to_string()
}

/// Applies `spec` with the driver's loop to item `ours-{n}` and natively (through `endpoint`) to
/// item `native-{n}`; both start as [`base_doc`].
pub async fn run_case(
    driver: &CosmosDriver,
    endpoint: &str,
    c: &ContainerReference,
    n: usize,
    spec: &PatchInstructions,
) -> (Outcome, Outcome) {
    let (ours_id, native_id) = (format!("ours-{n}"), format!("native-{n}"));
    create(driver, c, &base_doc(&ours_id)).await;
    create(driver, c, &base_doc(&native_id)).await;
    let ours = match patch(driver, c, &ours_id, "p", spec, &loop_options()).await {
        Ok(_) => Outcome::Applied(comparable(&read_doc(driver, c, &ours_id, "p").await.0)),
        Err(e) => {
            assert!(
                e.is_invalid_input(),
                "case {n}: the loop failed for another reason: {e}"
            );
            let (unchanged, _) = read_doc(driver, c, &ours_id, "p").await;
            assert_eq!(
                comparable(&unchanged),
                comparable(&base_doc("x")),
                "case {n}: a refused patch changed the item"
            );
            Outcome::Refused
        }
    };
    let (status, body) = native_patch(endpoint, c, &native_id, "p", &service_body(spec)).await;
    let native = match status {
        200 => Outcome::Applied(comparable(&read_doc(driver, c, &native_id, "p").await.0)),
        400 => Outcome::Refused,
        other => panic!("case {n}: the native PATCH answered {other}: {body}"),
    };
    (ours, native)
}

/// How a set of lists compared.
#[derive(Debug, Default)]
pub struct Tally {
    /// Lists both sides applied with the same result.
    pub applied: usize,
    /// Lists both sides refused.
    pub refused: usize,
    /// Lists the two sides disagree on, described.
    pub disagreements: Vec<String>,
}

/// Runs every list and tallies agreement.
pub async fn compare_all(
    driver: &CosmosDriver,
    endpoint: &str,
    c: &ContainerReference,
    lists: &[PatchInstructions],
) -> Tally {
    let mut tally = Tally::default();
    for (n, spec) in lists.iter().enumerate() {
        let (ours, native) = run_case(driver, endpoint, c, n, spec).await;
        if ours == native {
            match ours {
                Outcome::Applied(_) => tally.applied += 1,
                Outcome::Refused => tally.refused += 1,
            }
        } else {
            tally.disagreements.push(format!(
                "case {n}: {}\n  ours:   {ours:?}\n  native: {native:?}",
                serde_json::to_string(spec).unwrap_or_default()
            ));
        }
    }
    tally
}

/// `count` random lists from a fixed seed (the same lists on every run).
pub fn random_lists(seed: u64, count: usize) -> Vec<PatchInstructions> {
    let mut rng = StdRng::seed_from_u64(seed);
    let (existing, fresh) = base_paths();
    (0..count)
        .map(|_| random_list(&mut rng, &existing, &fresh))
        .collect()
}

mod emulator {
    use cosmos_emulator::EmulatorBuilder;

    use super::super::support::setup;
    use super::*;

    #[tokio::test]
    async fn the_loop_and_the_emulators_native_patch_agree() {
        let (emu, driver, c) = setup(EmulatorBuilder::new().no_auth(true)).await;
        let mut lists = table();
        lists.extend(random_lists(0x5eed_0001, 200));
        let tally = compare_all(&driver, emu.endpoint(), &c, &lists).await;
        println!(
            "differential vs the emulator's native PATCH: {} lists, {} applied alike, {} refused by both, {} disagreements",
            lists.len(),
            tally.applied,
            tally.refused,
            tally.disagreements.len()
        );
        assert!(
            tally.disagreements.is_empty(),
            "{}",
            tally.disagreements.join("\n")
        );
        assert!(
            tally.applied >= lists.len() / 4,
            "too few lists applied to mean much: {tally:?}"
        );
    }
}
