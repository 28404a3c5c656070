//! How many rules the admin API and the `--faults` file may install, and how long their texts may
//! be: every request is checked against every rule, so both are bounded.

use super::FaultRule;

/// The most user rules installed at once through JSON (admin API or `--faults`).
pub(crate) const MAX_RULES: usize = 256;
/// The longest path pattern, rule name, region name or header text, in bytes.
pub(crate) const MAX_TEXT_BYTES: usize = 1024;
/// The most regions one rule may list.
pub(crate) const MAX_REGIONS_PER_RULE: usize = 64;
/// The largest rules document, in bytes.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// An error naming the limit when `rule` (at `at` in the document) is over one.
pub(crate) fn check_rule(rule: &FaultRule, at: &str) -> Result<(), String> {
    let condition = &rule.condition;
    let mut texts: Vec<(String, &str)> = vec![(format!("{at}.name"), rule.name.as_str())];
    if let Some(path) = &condition.path {
        texts.push((format!("{at}.path"), path.as_str()));
    }
    if let Some(header) = &condition.header {
        texts.push((format!("{at}.header.name"), header.name.as_str()));
        texts.push((format!("{at}.header.value"), header.value.as_str()));
    }
    for (i, region) in condition.regions.iter().enumerate() {
        texts.push((format!("{at}.regions[{i}]"), region.as_str()));
    }
    if let Some((field, text)) = texts.iter().find(|(_, t)| t.len() > MAX_TEXT_BYTES) {
        return Err(format!(
            "{field}: {} bytes long; at most {MAX_TEXT_BYTES} bytes are allowed",
            text.len()
        ));
    }
    if condition.regions.len() > MAX_REGIONS_PER_RULE {
        return Err(format!(
            "{at}.regions: {} regions listed; at most {MAX_REGIONS_PER_RULE} are allowed",
            condition.regions.len()
        ));
    }
    Ok(())
}

/// An error naming the limit when `installed + adding` rules exceed [`MAX_RULES`].
pub(crate) fn check_count(installed: usize, adding: usize) -> Result<(), String> {
    if installed + adding > MAX_RULES {
        return Err(format!(
            "rules: {adding} rules added to the {installed} installed would exceed the limit of {MAX_RULES} rules; remove some first"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Reaction;

    #[test]
    fn texts_regions_and_counts_are_bounded() {
        let ok = FaultRule::new(Reaction::Close).on_path("/dbs/*");
        assert!(check_rule(&ok, "rule").is_ok());
        let long_path = FaultRule::new(Reaction::Close).on_path("*".repeat(MAX_TEXT_BYTES + 1));
        let err = check_rule(&long_path, "rules[3]").unwrap_err();
        assert!(
            err.starts_with("rules[3].path") && err.contains("1024"),
            "{err}"
        );
        let long_header = FaultRule::new(Reaction::Close).with_header("x", "v".repeat(2000));
        assert!(check_rule(&long_header, "r")
            .unwrap_err()
            .starts_with("r.header.value"));
        let many = FaultRule::new(Reaction::Close).in_regions((0..65).map(|i| format!("r{i}")));
        assert!(check_rule(&many, "r").unwrap_err().contains("64"));
        assert!(check_count(200, 56).is_ok());
        assert!(check_count(200, 57).unwrap_err().contains("256"));
    }
}
