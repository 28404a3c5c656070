//! The driver's layers are one-way: a module may import its own layer and the layers below it,
//! never one above. This reads the driver's non-test sources, collects every `crate::` path, and
//! fails naming the file and the import when a lower layer reaches up (or a module has no layer).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Top to bottom; each layer lists the crate's top-level modules in it. A module this table names
/// that does not exist is ignored (a branch may not have it yet).
const LAYERS: &[(&str, &[&str])] = &[
    ("prelude", &["prelude"]),
    ("client", &["client"]),
    ("api", &["driver"]),
    (
        "operations",
        &[
            "operations",
            "patch",
            "query",
            "batch",
            "bulk",
            "change_feed",
            "read_many",
        ],
    ),
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

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// Source text with comments, string and char literals blanked out (so neither braces nor paths
/// inside them count).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.push(' ');
            i += end;
        } else if let Some((open, hashes)) = raw_string_open(rest, out.chars().next_back()) {
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..]
                .find(&close)
                .map_or(rest.len(), |e| open + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime (kept).
            let tail = &text[i + 1..];
            let len = if tail.starts_with('\\') {
                tail.find('\'').map(|e| e + 1)
            } else {
                tail.chars()
                    .next()
                    .filter(|c| tail[c.len_utf8()..].starts_with('\''))
                    .map(|c| c.len_utf8() + 1)
            };
            match len {
                Some(len) => {
                    out.push_str("' '");
                    i += 1 + len;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// At a raw string (`r"`, `r#"`, `br#"`): the length of its opening and its number of `#`.
fn raw_string_open(rest: &str, before: Option<char>) -> Option<(usize, usize)> {
    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let s = rest.strip_prefix('b').unwrap_or(rest);
    let b_len = rest.len() - s.len();
    let s = s.strip_prefix('r')?;
    let hashes = s.chars().take_while(|c| *c == '#').count();
    s[hashes..]
        .starts_with('"')
        .then_some((b_len + 1 + hashes + 1, hashes))
}

/// Removes items marked `#[cfg(test)]` (inline modules and functions: the attribute up to the end
/// of the item's braces or semicolon).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let brace = after.find('{');
        let semi = after.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The first segment of every `crate::` path in `code` (each member of a `crate::{..}` group).
fn crate_roots(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut roots = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1usize;
            let mut member_start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => member_start = true,
                    c if member_start && depth == 1 && !c.is_whitespace() => {
                        member_start = false;
                        roots.push(ident(&group[k..]));
                    }
                    _ => {}
                }
            }
        } else {
            roots.push(ident(after));
        }
    }
    roots.retain(|r| !r.is_empty() && r != "self");
    roots
}

/// The module each crate-root re-export comes from (`pub use error::{CosmosError, ..}` in lib.rs).
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let path = path.trim_start_matches("crate::");
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        let mut depth = 0usize;
        let mut current = String::new();
        for c in names.chars().chain(std::iter::once(',')) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let last = current
                        .rsplit("::")
                        .next()
                        .unwrap_or_default()
                        .split(" as ")
                        .last()
                        .unwrap_or_default()
                        .trim()
                        .to_owned();
                    if !last.is_empty() {
                        map.insert(last, module.to_owned());
                    }
                    current.clear();
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
    }
    map
}

/// The files `file` declares as modules (`mod x;`, with `#[path]` honoured), each with whether the
/// declaration is `#[cfg(test)]`.
fn declared_modules(file: &Path) -> Vec<(PathBuf, bool)> {
    let text = fs::read_to_string(file).expect("readable source");
    let dir = file.parent().expect("a parent directory");
    let owns_dir = matches!(
        file.file_name().and_then(|f| f.to_str()),
        Some("mod.rs") | Some("lib.rs")
    );
    let mut found = Vec::new();
    let (mut cfg_test, mut path_attr) = (false, None::<String>);
    for line in text.lines().map(str::trim) {
        if line == "#[cfg(test)]" {
            cfg_test = true;
            continue;
        }
        if let Some(p) = line.strip_prefix("#[path = \"") {
            path_attr = p.strip_suffix("\"]").map(str::to_owned);
            continue;
        }
        let decl = line
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ")
            .strip_prefix("mod ")
            .and_then(|d| d.strip_suffix(';'));
        if let Some(name) = decl {
            let target = match path_attr.take() {
                Some(p) => dir.join(p),
                None => {
                    let base = if owns_dir {
                        dir.to_path_buf()
                    } else {
                        dir.join(file.file_stem().expect("a file stem"))
                    };
                    let flat = base.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        base.join(name).join("mod.rs")
                    }
                }
            };
            found.push((target, cfg_test));
        }
        cfg_test = false;
        path_attr = None;
    }
    found
}

/// Files compiled only for tests: declared under `#[cfg(test)]`, or declared by such a file.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let declared: Vec<(PathBuf, Vec<(PathBuf, bool)>)> = files
        .iter()
        .map(|f| (f.clone(), declared_modules(f)))
        .collect();
    let mut test_only: BTreeSet<PathBuf> = declared
        .iter()
        .flat_map(|(_, children)| children.iter())
        .filter(|(_, cfg_test)| *cfg_test)
        .map(|(child, _)| child.clone())
        .collect();
    loop {
        let more: Vec<PathBuf> = declared
            .iter()
            .filter(|(file, _)| test_only.contains(file))
            .flat_map(|(_, children)| children.iter().map(|(c, _)| c.clone()))
            .filter(|c| !test_only.contains(c))
            .collect();
        if more.is_empty() {
            return test_only;
        }
        test_only.extend(more);
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every import that reaches up, as `file: module -> module (layer -> layer)`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let test_only = test_only_files(&files);
    let lib = code_only(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let reexports = root_reexports(&without_test_items(&lib));
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !test_only.contains(*f)) {
        let rel = file.strip_prefix(src).expect("under src");
        let module = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a first component")
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" {
            continue;
        }
        let Some(from) = layer_of(&module) else {
            found.push(format!(
                "{}: module `{module}` has no layer in LAYERS",
                rel.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("readable source");
        for root in crate_roots(&without_test_items(&code_only(&text))) {
            let target = if layer_of(&root).is_some() {
                root.clone()
            } else if let Some(module) = reexports.get(&root) {
                module.clone()
            } else {
                found.push(format!(
                    "{}: cannot tell the layer of `crate::{root}`",
                    rel.display()
                ));
                continue;
            };
            let to = layer_of(&target).expect("checked above");
            if to < from {
                found.push(format!(
                    "{}: {module} ({}) imports crate::{root} ({}, a higher layer)",
                    rel.display(),
                    LAYERS[from].0,
                    LAYERS[to].0
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    found
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
