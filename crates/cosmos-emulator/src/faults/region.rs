//! Region name comparison shared by rule conditions and request counters.

/// True when two region names denote the same region: ASCII case and spaces are ignored, so
/// `"East US"`, `"eastus"` and `"EAST US"` are one region (the service and SDKs use both spellings).
pub(crate) fn same_region(a: &str, b: &str) -> bool {
    let mut left = a.bytes().filter(|b| *b != b' ');
    let mut right = b.bytes().filter(|b| *b != b' ');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(&y) => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_region;

    #[test]
    fn table() {
        let cases = [
            ("East US", "East US", true),
            ("East US", "eastus", true),
            ("EAST US", "east us", true),
            ("East US", "East US 2", false),
            ("West US", "East US", false),
            ("", "", true),
            ("", "East US", false),
            ("Éast", "éast", false),
        ];
        for (a, b, want) in cases {
            assert_eq!(same_region(a, b), want, "{a:?} vs {b:?}");
        }
    }
}
