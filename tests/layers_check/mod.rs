//! The import checker both crates' `tests/layers.rs` use: it reads a crate's non-test sources
//! (comments, strings and `#[cfg(test)]` items removed), finds each top-level module's imports
//! that reach a higher layer of a table the crate gives, and every set of files that import each
//! other in a loop.
//!
//! Included by each test with `#[path = "../../../tests/layers_check/mod.rs"] mod layers_check;`,
//! so it is no dependency of any crate; each crate keeps its own table of layers.
//!
//! Inside a layer, files do not import each other in a loop either: every `crate::`, `super::` and
//! `self::` path of every non-test file (and every `use` of a child module) is followed to the
//! file that defines what it names (through the `pub use` re-exports of `mod.rs` and `lib.rs`), and
//! any set of files that reach each other is reported with the imports that tie it.

// Each test uses the part of the checker it needs.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The index of the layer of `layers` that names `module`.
pub fn layer_of(layers: &[(&str, &[&str])], module: &str) -> Option<usize> {
    layers
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The modules `layers` names more than once (each must stand in exactly one layer).
pub fn named_twice<'a>(layers: &[(&'a str, &[&'a str])]) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    let mut twice: Vec<&str> = layers
        .iter()
        .flat_map(|(_, modules)| modules.iter().copied())
        .filter(|m| !seen.insert(*m))
        .collect();
    twice.sort_unstable();
    twice.dedup();
    twice
}

/// Source text with comments, string and char literals blanked out (so neither braces nor paths
/// inside them count).
pub fn code_only(text: &str) -> String {
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
pub fn raw_string_open(rest: &str, before: Option<char>) -> Option<(usize, usize)> {
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
pub fn without_test_items(code: &str) -> String {
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
pub fn crate_roots(code: &str) -> Vec<String> {
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
pub fn root_reexports(lib: &str) -> BTreeMap<String, String> {
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
pub fn declared_modules(file: &Path) -> Vec<(PathBuf, bool)> {
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
pub fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
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

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every import that reaches up through `layers` (top to bottom, each naming its top-level
/// modules), as `file: module -> module (layer -> layer)`; a module without a layer is reported
/// too.
pub fn violations(src: &Path, layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of = |module: &str| layer_of(layers, module);
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
                    layers[from].0,
                    layers[to].0
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// A module path from the crate root (`["pipeline", "leg"]`) for each non-test source file.
pub fn module_paths(src: &Path, files: &[PathBuf]) -> BTreeMap<Vec<String>, PathBuf> {
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let mut segments: Vec<String> = rel
            .components()
            .filter_map(|c| c.as_os_str().to_str())
            .map(|s| s.trim_end_matches(".rs").to_owned())
            .collect();
        if matches!(
            segments.last().map(String::as_str),
            Some("mod") | Some("lib")
        ) {
            segments.pop();
        }
        modules.insert(segments, file.clone());
    }
    modules
}

/// One path of a `use` tree or an expression: its segments as written, and the name it binds
/// (its alias, or its last segment).
#[derive(Debug, Clone, PartialEq)]
pub struct UsePath {
    pub segments: Vec<String>,
    pub binds: String,
}

pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

pub fn ident_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    (j > i && !b[i].is_ascii_digit()).then(|| (String::from_utf8_lossy(&b[i..j]).into_owned(), j))
}

/// Parses a use tree (or an expression path) at `i`: every leaf path with `prefix` in front.
/// Nesting is bounded by the source's own braces; depth past 32 stops the walk.
pub fn parse_tree(
    b: &[u8],
    i: usize,
    prefix: &[String],
    depth: usize,
    out: &mut Vec<UsePath>,
) -> usize {
    let mut segments = prefix.to_vec();
    let mut i = skip_ws(b, i);
    if depth > 32 {
        return i;
    }
    loop {
        if i < b.len() && b[i] == b'{' {
            i += 1;
            loop {
                i = skip_ws(b, i);
                if i >= b.len() || b[i] == b'}' {
                    return i + 1;
                }
                let next = skip_ws(b, parse_tree(b, i, &segments, depth + 1, out));
                // Something this reader does not know: step over it rather than stall.
                i = if next == i { i + 1 } else { next };
                if i < b.len() && b[i] == b',' {
                    i += 1;
                }
            }
        }
        if i < b.len() && b[i] == b'*' {
            segments.push("*".to_owned());
            out.push(UsePath {
                segments,
                binds: "*".to_owned(),
            });
            return i + 1;
        }
        let Some((name, j)) = ident_at(b, i) else {
            if !segments.is_empty() && segments.len() > prefix.len() {
                let binds = segments.last().cloned().unwrap_or_default();
                out.push(UsePath { segments, binds });
            }
            return i;
        };
        segments.push(name);
        i = skip_ws(b, j);
        if b[i..].starts_with(b"::") {
            i = skip_ws(b, i + 2);
            continue;
        }
        let mut binds = segments.last().cloned().unwrap_or_default();
        if b[i..].starts_with(b"as")
            && !b
                .get(i + 2)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            if let Some((alias, k)) = ident_at(b, skip_ws(b, i + 2)) {
                binds = alias;
                i = k;
            }
        }
        if binds == "self" {
            segments.pop();
            binds = segments.last().cloned().unwrap_or_default();
        }
        out.push(UsePath { segments, binds });
        return i;
    }
}

/// The paths of a file's code (comments, strings and test items already removed): every `use`
/// tree, each with whether it is a re-export (`pub use`, `pub(crate) use`), and every
/// `crate::`/`super::`/`self::` path outside a `use`.
pub fn file_paths(code: &str) -> Vec<(UsePath, bool)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let before = i.checked_sub(1).map(|k| b[k]);
        let at_word = !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':');
        if at_word
            && b[i..].starts_with(b"use")
            && b.get(i + 3).is_some_and(u8::is_ascii_whitespace)
        {
            let statement_start = code[..i].rfind(['\n', ';', '{', '}']).map_or(0, |k| k + 1);
            let reexport = code[statement_start..i].trim_start().starts_with("pub");
            let mut paths = Vec::new();
            let end = parse_tree(b, i + 3, &[], 0, &mut paths);
            found.extend(paths.into_iter().map(|p| (p, reexport)));
            i = end.max(i + 3);
            continue;
        }
        if at_word
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|p| b[i..].starts_with(p.as_bytes()))
        {
            let mut paths = Vec::new();
            let end = parse_tree(b, i, &[], 0, &mut paths);
            found.extend(paths.into_iter().map(|p| (p, false)));
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    found
}

/// `path` as written in the module `base` made absolute: `None` when it names something outside
/// the crate (a dependency, `std`) or climbs above the root.
pub fn absolute(
    base: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut abs, rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" | "super" => (base.to_vec(), path),
        child => {
            let mut m = base.to_vec();
            m.push(child.to_owned());
            if !modules.contains_key(&m) {
                return None;
            }
            (base.to_vec(), path)
        }
    };
    let mut leading = true;
    for s in rest {
        match s.as_str() {
            "self" if leading => {}
            "super" if leading => {
                abs.pop()?;
            }
            _ => {
                leading = false;
                abs.push(s.clone());
            }
        }
    }
    Some(abs)
}

/// The import graph among the non-test files under `src`: for each file the files it imports,
/// each with the first path that ties them.
pub fn import_graph(src: &Path) -> BTreeMap<PathBuf, BTreeMap<PathBuf, String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let test_only = test_only_files(&files);
    files.retain(|f| !test_only.contains(f));
    let modules = module_paths(src, &files);
    let mut paths_of: BTreeMap<Vec<String>, Vec<(UsePath, bool)>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = fs::read_to_string(file).expect("readable source");
        paths_of.insert(
            module.clone(),
            file_paths(&without_test_items(&code_only(&text))),
        );
    }
    // Each module's re-exports: the name bound -> the absolute path it stands for.
    let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (module, paths) in &paths_of {
        for (p, reexport) in paths {
            if !*reexport {
                continue;
            }
            if let Some(abs) = absolute(module, &p.segments, &modules) {
                reexports
                    .entry(module.clone())
                    .or_default()
                    .insert(p.binds.clone(), abs);
            }
        }
    }
    let resolve = |mut abs: Vec<String>| -> PathBuf {
        for _ in 0..16 {
            let mut prefix = abs.clone();
            while !modules.contains_key(&prefix) {
                prefix.pop();
            }
            if prefix.len() == abs.len() {
                return modules[&prefix].clone();
            }
            let name = &abs[prefix.len()];
            match reexports.get(&prefix).and_then(|r| r.get(name)) {
                Some(target) if *target != abs[..=prefix.len()] => {
                    let mut next = target.clone();
                    next.extend_from_slice(&abs[prefix.len() + 1..]);
                    abs = next;
                }
                _ => return modules[&prefix].clone(),
            }
        }
        modules[&Vec::new()].clone()
    };
    let mut graph: BTreeMap<PathBuf, BTreeMap<PathBuf, String>> = BTreeMap::new();
    for (module, paths) in &paths_of {
        let from = modules[module].clone();
        let edges = graph.entry(from.clone()).or_default();
        for (p, reexport) in paths {
            // A re-export hands a name on: who imports it through here is tied to its file.
            if *reexport {
                continue;
            }
            let Some(abs) = absolute(module, &p.segments, &modules) else {
                continue;
            };
            let abs: Vec<String> = abs.into_iter().filter(|s| s != "*").collect();
            let to = resolve(abs);
            if to != from {
                edges.entry(to).or_insert_with(|| p.segments.join("::"));
            }
        }
    }
    graph
}

/// Every import circle under `src`, each as its files and the imports among them.
pub fn circles(src: &Path) -> Vec<String> {
    let graph = import_graph(src);
    let reach = |start: &PathBuf| -> BTreeSet<PathBuf> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.clone()];
        while let Some(f) = stack.pop() {
            for next in graph.get(&f).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&PathBuf, BTreeSet<PathBuf>> =
        graph.keys().map(|f| (f, reach(f))).collect();
    let mut placed = BTreeSet::new();
    let mut found = Vec::new();
    for file in graph.keys() {
        if placed.contains(file) || !reaches[file].contains(file) {
            continue;
        }
        let members: BTreeSet<PathBuf> = reaches[file]
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|r| r.contains(file)))
            .cloned()
            .collect();
        placed.extend(members.iter().cloned());
        let rel = |f: &PathBuf| f.strip_prefix(src).unwrap_or(f).display().to_string();
        let mut lines = vec![format!(
            "circle of {} files: {}",
            members.len(),
            members.iter().map(rel).collect::<Vec<_>>().join(", ")
        )];
        for from in &members {
            for (to, path) in &graph[from] {
                if members.contains(to) {
                    lines.push(format!("  {} -> {} ({path})", rel(from), rel(to)));
                }
            }
        }
        found.push(lines.join("\n"));
    }
    found
}
