//! The driver's layers are one-way: a module may import its own layer and the layers below it,
//! never one above. This reads the driver's non-test sources, collects every `crate::` path, and
//! fails naming the file and the import when a lower layer reaches up (or a module has no layer).
//! The checker itself is shared with the emulator's test (`tests/layers_check/` at the workspace
//! root); the table of layers is the driver's own.
//!
//! Inside a layer, files do not import each other in a loop either: every `crate::`, `super::` and
//! `self::` path of every non-test file (and every `use` of a child module) is followed to the
//! file that defines what it names (through the `pub use` re-exports of `mod.rs` and `lib.rs`), and
//! any set of files that reach each other is reported with the imports that tie it.

use std::fs;
use std::path::Path;

#[path = "../../../tests/layers_check/mod.rs"]
mod layers_check;

use layers_check::{
    circles, code_only, crate_roots, file_paths, import_graph, named_twice, parse_tree,
    root_reexports, without_test_items,
};

/// Top to bottom; each layer lists the crate's top-level modules in it. A module this table names
/// that does not exist is ignored (a branch may not have it yet).
const LAYERS: &[(&str, &[&str])] = &[
    ("prelude", &["prelude"]),
    ("processor", &["processor"]),
    ("client", &["client"]),
    ("api", &["driver"]),
    (
        "operation kinds",
        &[
            "patch",
            "query",
            "batch",
            "bulk",
            "change_feed",
            "read_many",
        ],
    ),
    ("operations", &["operations"]),
    ("pipeline", &["pipeline"]),
    ("operation data", &["operation", "options", "resources"]),
    ("hedging", &["hedging"]),
    ("routing", &["routing", "session"]),
    ("transport", &["transport"]),
    ("auth", &["auth"]),
    ("errors and responses", &["error", "response"]),
    ("diagnostics", &["diagnostics"]),
    ("protocol", &["protocol"]),
];

/// Every import that reaches up the driver's layers.
fn violations(src: &Path) -> Vec<String> {
    layers_check::violations(src, LAYERS)
}

#[test]
fn each_module_stands_in_one_layer() {
    assert!(named_twice(LAYERS).is_empty(), "{:?}", named_twice(LAYERS));
}

#[test]
fn no_file_imports_another_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = circles(&src);
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// Pairs of folders the first of which must never import the second, though the layers allow it:
/// options are plain data, and how the transport is built from them is the driver's business.
const NEVER: &[(&str, &str)] = &[("options/", "transport/")];

#[test]
fn options_never_import_the_transport() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    let mut found = Vec::new();
    for (from, edges) in &graph {
        let from_rel = from.strip_prefix(&src).expect("under src");
        for (to, path) in edges {
            let to_rel = to.strip_prefix(&src).expect("under src");
            for (a, b) in NEVER {
                if from_rel.starts_with(a) && to_rel.starts_with(b) {
                    found.push(format!(
                        "{} -> {} ({path})",
                        from_rel.display(),
                        to_rel.display()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "imports that must never be:\n{}",
        found.join("\n")
    );
}

/// The top-level module (folder or file) of a source file under `src`: `query` for
/// `query/plan/query_plan.rs`, `driver` for `driver.rs`; `None` for the crate root.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (name != "lib").then(|| name.to_owned())
}

/// Every pair of top-level modules that import each other, each with one import of either way.
fn two_way_modules(src: &Path) -> Vec<String> {
    let graph = import_graph(src);
    let mut between: std::collections::BTreeMap<(String, String), String> = Default::default();
    for (from, edges) in &graph {
        let Some(a) = top_module(src, from) else {
            continue;
        };
        for (to, path) in edges {
            let Some(b) = top_module(src, to) else {
                continue;
            };
            if a != b {
                let rel = |f: &Path| f.strip_prefix(src).unwrap_or(f).display().to_string();
                between
                    .entry((a.clone(), b))
                    .or_insert_with(|| format!("{} -> {} ({path})", rel(from), rel(to)));
            }
        }
    }
    let mut found = Vec::new();
    for ((a, b), there) in &between {
        if a < b {
            if let Some(back) = between.get(&(b.clone(), a.clone())) {
                found.push(format!("{a} <-> {b}: {there}; {back}"));
            }
        }
    }
    found
}

#[test]
fn no_two_modules_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = two_way_modules(&src);
    assert!(
        found.is_empty(),
        "top-level modules that import each other:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_two_way_check_sees_folders_and_files() {
    let dir = std::env::temp_dir().join(format!("two-way-check-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("query")).unwrap();
    fs::create_dir_all(dir.join("operations")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "mod query;\nmod operations;\nmod driver;\npub use query::pager::Pager;\n",
    )
    .unwrap();
    fs::write(dir.join("query/mod.rs"), "pub mod pager;\n").unwrap();
    // The way back goes through the crate root's re-export.
    fs::write(
        dir.join("query/pager.rs"),
        "pub struct Pager;\nuse crate::operations::run::run;\n",
    )
    .unwrap();
    fs::write(dir.join("operations/mod.rs"), "pub mod run;\n").unwrap();
    fs::write(
        dir.join("operations/run.rs"),
        "pub fn run() {}\nfn f() { let _ = crate::Pager; }\n",
    )
    .unwrap();
    // One way only: never reported.
    fs::write(dir.join("driver.rs"), "use crate::query::pager::Pager;\n").unwrap();
    let found = two_way_modules(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("operations <-> query: operations/run.rs -> query/pager.rs"),
        "{found:?}"
    );
}

/// Every `crate::Name` in a file other than the crate root where `Name` is one of the root's
/// re-exports: such an import hides the module it comes from behind `lib.rs`.
fn imports_through_the_root(src: &Path) -> Vec<String> {
    let lib = code_only(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let reexports = root_reexports(&lib);
    let mut files = Vec::new();
    layers_check::rust_files(src, &mut files);
    files.sort();
    let test_only = layers_check::test_only_files(&files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !test_only.contains(*f)) {
        if file == &src.join("lib.rs") {
            continue;
        }
        let text = fs::read_to_string(file).expect("readable source");
        for root in crate_roots(&without_test_items(&code_only(&text))) {
            if let Some(module) = reexports.get(&root) {
                let rel = file.strip_prefix(src).unwrap_or(file).display();
                found.push(format!("{rel}: crate::{root} (from {module})"));
            }
        }
    }
    found.dedup();
    found
}

#[test]
fn no_file_imports_through_the_crate_root() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = imports_through_the_root(&src);
    assert!(
        found.is_empty(),
        "imports through lib.rs's re-exports, not the defining module:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_root_import_check_names_the_module() {
    let dir = std::env::temp_dir().join(format!("root-import-check-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("client")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "mod client;\nmod error;\npub use error::{Oops, Kind};\nfn f() -> crate::Oops { todo!() }\n",
    )
    .unwrap();
    fs::write(dir.join("error.rs"), "pub struct Oops;\npub enum Kind {}\n").unwrap();
    fs::write(dir.join("client/mod.rs"), "mod a;\nmod b;\n").unwrap();
    fs::write(
        dir.join("client/a.rs"),
        "use crate::{error::Kind, Oops};\n// crate::Kind in a comment\n",
    )
    .unwrap();
    fs::write(
        dir.join("client/b.rs"),
        "use crate::error::Oops;\n#[cfg(test)]\nmod tests { use crate::Kind; }\n",
    )
    .unwrap();
    let found = imports_through_the_root(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found, ["client/a.rs: crate::Oops (from error)"]);
}

#[test]
fn the_circle_checker_follows_paths_and_reexports() {
    let dir = std::env::temp_dir().join(format!("circles-check-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("pipeline")).unwrap();
    fs::create_dir_all(dir.join("query")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "mod pipeline;\nmod query;\nmod error;\npub use error::Oops;\n",
    )
    .unwrap();
    fs::write(dir.join("error.rs"), "pub struct Oops;\n").unwrap();
    // A circle through a mod.rs re-export, a nested group, `super::` and an expression path.
    fs::write(
        dir.join("pipeline/mod.rs"),
        "mod leg;\nmod attempt;\nmod execute;\npub(crate) use execute::execute;\n#[cfg(test)]\nmod checks;\n",
    )
    .unwrap();
    fs::write(
        dir.join("pipeline/leg.rs"),
        "use super::{attempt::{self, build}, execute as _};\npub struct State;\nuse crate::Oops;\n",
    )
    .unwrap();
    fs::write(
        dir.join("pipeline/attempt.rs"),
        "pub fn build() { let _ = crate::pipeline::execute(); }\n",
    )
    .unwrap();
    fs::write(
        dir.join("pipeline/execute.rs"),
        "pub fn execute() { let _ = super::leg::State; }\n",
    )
    .unwrap();
    // Test-only files, comments and strings never tie a circle.
    fs::write(dir.join("pipeline/checks.rs"), "use crate::query::a::A;\n").unwrap();
    fs::write(dir.join("query/mod.rs"), "pub mod a;\npub mod b;\n").unwrap();
    fs::write(
        dir.join("query/a.rs"),
        "pub struct A;\nuse crate::pipeline::execute; // crate::query::b::B\n",
    )
    .unwrap();
    fs::write(
        dir.join("query/b.rs"),
        "pub struct B;\nuse super::a::A;\nconst S: &str = \"crate::query::b\";\n",
    )
    .unwrap();
    let found = circles(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let circle = &found[0];
    assert!(
        circle.starts_with(
            "circle of 3 files: pipeline/attempt.rs, pipeline/execute.rs, pipeline/leg.rs"
        ),
        "{circle}"
    );
    assert!(
        circle.contains("pipeline/attempt.rs -> pipeline/execute.rs (crate::pipeline::execute)"),
        "{circle}"
    );
    assert!(
        circle.contains("pipeline/leg.rs -> pipeline/attempt.rs (super::attempt"),
        "{circle}"
    );
    assert!(!circle.contains("query/"), "{circle}");
    assert!(!circle.contains("error.rs"), "{circle}");
}

#[test]
fn use_trees_are_read_whole() {
    let mut out = Vec::new();
    parse_tree(
        b"crate::{a::{self, b as c}, d::*, e::F}",
        0,
        &[],
        0,
        &mut out,
    );
    let got: Vec<(String, String)> = out
        .iter()
        .map(|p| (p.segments.join("::"), p.binds.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("crate::a".to_owned(), "a".to_owned()),
            ("crate::a::b".to_owned(), "c".to_owned()),
            ("crate::d::*".to_owned(), "*".to_owned()),
            ("crate::e::F".to_owned(), "F".to_owned()),
        ]
    );
    let paths = file_paths("pub(crate) use x::Y;\nuse super::z;\nfn f() { self::w::V::new() }");
    assert_eq!(
        paths
            .iter()
            .map(|(p, re)| (p.segments.join("::"), *re))
            .collect::<Vec<_>>(),
        [
            ("x::Y".to_owned(), true),
            ("super::z".to_owned(), false),
            ("self::w::V::new".to_owned(), false)
        ]
    );
}

#[test]
fn no_layer_imports_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "imports that reach up a layer:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_what_it_must() {
    let code = code_only(
        r#"
use crate::error::CosmosError; // crate::driver in a comment
use crate::{pipeline::{self, DriverCore}, protocol::Region};
let s = "crate::operations";
fn f() -> crate::response::CosmosResponse { todo!() }
#[cfg(test)]
mod tests { use crate::driver::CosmosDriver; }
let c = '{';
use crate::CosmosError;
"#,
    );
    let roots = crate_roots(&without_test_items(&code));
    assert_eq!(
        roots,
        ["error", "pipeline", "protocol", "response", "CosmosError"]
    );
    let reexports = root_reexports("pub use error::{CosmosError, ErrorKind};\npub use x::Y as Z;");
    assert_eq!(
        reexports.get("CosmosError").map(String::as_str),
        Some("error")
    );
    assert_eq!(reexports.get("Z").map(String::as_str), Some("x"));
}

#[test]
fn the_checker_reports_a_lower_layer_reaching_up() {
    let dir = std::env::temp_dir().join(format!("layers-check-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("protocol")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "mod driver;\nmod protocol;\npub use driver::CosmosDriver;\n",
    )
    .unwrap();
    fs::write(dir.join("driver.rs"), "use crate::protocol::Region;\n").unwrap();
    fs::write(
        dir.join("protocol/mod.rs"),
        "mod region;\n#[cfg(test)]\nmod checks;\n",
    )
    .unwrap();
    fs::write(dir.join("protocol/region.rs"), "use crate::CosmosDriver;\n").unwrap();
    fs::write(dir.join("protocol/checks.rs"), "use crate::driver::X;\n").unwrap();
    let found = violations(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .contains("protocol/region.rs: protocol (protocol) imports crate::CosmosDriver (api"),
        "{found:?}"
    );
}

#[test]
fn a_module_named_in_two_layers_is_found() {
    let layers: &[(&str, &[&str])] = &[
        ("top", &["a", "b"]),
        ("low", &["c", "a"]),
        ("floor", &["b"]),
    ];
    assert_eq!(named_twice(layers), ["a", "b"]);
    assert!(named_twice(&[("one", &["a"]), ("two", &["b"])]).is_empty());
}
