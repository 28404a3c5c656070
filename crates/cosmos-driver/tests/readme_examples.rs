//! The top README's driver examples are the crate README's doctests, so what a reader copies
//! from either compiles (`cargo test --doc`); and the crate README's examples hide no lines, so
//! they read on a Markdown page as they compile.

use std::path::Path;

/// The Rust code blocks of a Markdown text: the lines between a fence that opens with `rust`
/// (`rust`, `rust,no_run`) and the closing fence.
fn rust_blocks(markdown: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in markdown.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    if info.split(',').next() == Some("rust") {
                        current = Some(Vec::new());
                    }
                }
            }
            Some(lines) => {
                if line.starts_with("```") {
                    blocks.push(std::mem::take(lines));
                    current = None;
                } else {
                    lines.push(line.to_owned());
                }
            }
        }
    }
    blocks
}

fn without_hidden_lines(block: &[String]) -> Vec<String> {
    block
        .iter()
        .filter(|l| !(l.starts_with("# ") || l.as_str() == "#"))
        .cloned()
        .collect()
}

#[test]
fn every_rust_example_of_the_top_readme_is_a_crate_readme_doctest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let top = std::fs::read_to_string(root.join("../../README.md")).unwrap();
    let crate_readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let doctests: Vec<Vec<String>> = rust_blocks(&crate_readme)
        .iter()
        .map(|b| without_hidden_lines(b))
        .collect();
    let examples = rust_blocks(&top);
    assert!(
        !examples.is_empty(),
        "the top README's driver section has its examples"
    );
    for example in &examples {
        assert!(
            doctests.contains(example),
            "this top README example is not a crate README doctest:\n{}",
            example.join("\n")
        );
    }
}

#[test]
fn the_crate_readme_has_no_untested_rust_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for line in crate_readme.lines() {
        if let Some(info) = line.strip_prefix("```") {
            assert!(
                !info.contains("ignore"),
                "an ignored example in the crate README: {line}"
            );
        }
    }
    assert!(rust_blocks(&crate_readme).len() >= 7);
}

#[test]
fn the_crate_readme_hides_no_lines_from_a_markdown_reader() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for block in rust_blocks(&crate_readme) {
        let hidden = block.len() - without_hidden_lines(&block).len();
        assert_eq!(
            hidden,
            0,
            "a README example with rustdoc's hidden lines, which Markdown shows:\n{}",
            block.join("\n")
        );
    }
}
