//! Session tokens in the service's vector form: `{rangeId}:{version}#{globalLsn}[#{region}={lsn}...]`,
//! several joined by commas.

/// The LSN a session token demands for `range_id`, if the header names that range (or names no range).
pub(crate) fn required_lsn(header: &str, range_id: &str) -> Result<Option<u64>, String> {
    let mut found = None;
    for entry in header.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (range, vector) = match entry.split_once(':') {
            Some((r, v)) => (Some(r.trim()), v),
            None => (None, entry),
        };
        let lsn = global_lsn(vector)
            .ok_or_else(|| format!("the session token {entry:?} is malformed"))?;
        if range.is_none() || range == Some(range_id) {
            found = Some(found.map_or(lsn, |prev: u64| prev.max(lsn)));
        }
    }
    Ok(found)
}

/// The global LSN of one vector token (`version#globalLsn[#r=l...]`); a negative LSN counts as 0.
fn global_lsn(vector: &str) -> Option<u64> {
    let mut segments = vector.split('#');
    segments.next()?.trim().parse::<i64>().ok()?;
    let lsn = segments.next()?.trim().parse::<i64>().ok()?;
    for region in segments {
        let (id, local) = region.split_once('=')?;
        id.trim().parse::<u32>().ok()?;
        local.trim().parse::<i64>().ok()?;
    }
    Some(lsn.max(0) as u64)
}

/// Formats the token for one range: single-write accounts carry only the global LSN; multi-write
/// accounts add each region's progress (`regionIndex=lsn`).
pub(crate) fn format_token(range_id: &str, lsn: u64, region_progress: Option<&[u64]>) -> String {
    let mut out = format!("{range_id}:-1#{lsn}");
    if let Some(progress) = region_progress {
        for (i, local) in progress.iter().enumerate() {
            out.push_str(&format!("#{i}={local}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lsn_for_the_named_range() {
        let table: &[(&str, &str, Option<u64>)] = &[
            ("0:-1#12", "0", Some(12)),
            ("0:-1#12", "1", None),
            ("0:-1#12,1:-1#40", "1", Some(40)),
            ("-1#7", "3", Some(7)),
            ("2:1#9#0=9#1=4", "2", Some(9)),
            ("0:-1#-1", "0", Some(0)),
            ("", "0", None),
        ];
        for (header, range, want) in table {
            assert_eq!(
                required_lsn(header, range).unwrap(),
                *want,
                "{header} / {range}"
            );
        }
    }

    #[test]
    fn rejects_malformed_tokens() {
        for bad in ["0:abc", "0:-1", "0:-1#x", "0:-1#3#r", "0:-1#3#a=1"] {
            assert!(required_lsn(bad, "0").is_err(), "accepted {bad}");
        }
    }

    #[test]
    fn formats_single_and_multi_write_tokens() {
        assert_eq!(format_token("0", 12, None), "0:-1#12");
        assert_eq!(format_token("3", 5, Some(&[5, 4])), "3:-1#5#0=5#1=4");
        assert_eq!(
            required_lsn(&format_token("3", 5, Some(&[5, 4])), "3").unwrap(),
            Some(5)
        );
    }
}
