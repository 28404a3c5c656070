//! The emulator's layers are one-way: a top-level module may import its own layer and the layers
//! below it, never one above; and no files import each other in a loop. The checker is shared
//! with the driver's test (`tests/layers_check/` at the workspace root); the table is the
//! emulator's own.

use std::path::Path;

#[path = "../../../tests/layers_check/mod.rs"]
mod layers_check;

/// Top to bottom; each layer lists the crate's top-level modules in it (`bin` is the binary's
/// folder under `src`).
const LAYERS: &[(&str, &[&str])] = &[
    ("embedding API and binary", &["bin", "emulator"]),
    ("HTTP: listeners, TLS, operator pages", &["server"]),
    ("handlers: one call per resource family", &["handlers"]),
    ("a request and its reply", &["exchange"]),
    ("who may do what", &["auth"]),
    ("durability: journal and snapshots", &["persist"]),
    ("the JavaScript sandbox", &["scripts"]),
    (
        "the query language, its execution and PATCH; the data they read",
        &["sql", "store"],
    ),
    ("keys and fault rules", &["epk", "faults"]),
    ("wire vocabulary, no I/O", &["protocol"]),
];

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn each_module_stands_in_one_layer() {
    let twice = layers_check::named_twice(LAYERS);
    assert!(twice.is_empty(), "named in more than one layer: {twice:?}");
}

#[test]
fn no_layer_imports_a_higher_one() {
    let found = layers_check::violations(&src(), LAYERS);
    assert!(
        found.is_empty(),
        "imports that reach up a layer:\n{}",
        found.join("\n")
    );
}

/// The parts of `sql/` that run queries over the store and apply PATCH operations; the store
/// itself may use the language's definitions (the AST of computed properties, search policy
/// types, values) but never these, so execution stays above the data it reads.
const EXECUTION: &[&str] = &["sql::run", "sql::patch"];

#[test]
fn the_store_never_imports_query_execution() {
    let mut found = Vec::new();
    let mut files = Vec::new();
    rust_files(&src().join("store"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable source");
        let code = layers_check::without_test_items(&layers_check::code_only(&text));
        for part in EXECUTION {
            if code.contains(&format!("crate::{part}")) {
                found.push(format!("{}: imports crate::{part}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the store reaches up into execution:\n{}",
        found.join("\n")
    );
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_file_imports_another_in_a_circle() {
    let found = layers_check::circles(&src());
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}
