use serde_json::json;

use super::*;

/// A buffer: the preamble, then `bytes`.
fn buf(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![PREAMBLE];
    out.extend_from_slice(bytes);
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn scalars_decode_marker_by_marker() {
    let f64_bytes = 2.5f64.to_le_bytes();
    let f32_bytes = 0.5f32.to_le_bytes();
    let table: Vec<(Vec<u8>, Value)> = vec![
        (buf(&[0x00]), json!(0)),
        (buf(&[0x1F]), json!(31)),
        (buf(&[0xD0]), json!(null)),
        (buf(&[0xD1]), json!(false)),
        (buf(&[0xD2]), json!(true)),
        (buf(&[0xC8, 200]), json!(200)),
        (buf(&[0xC9, 0x18, 0xFC]), json!(-1000)),
        (buf(&[0xCA, 0x00, 0x00, 0x00, 0x80]), json!(i32::MIN)),
        (buf(&cat(&[&[0xCB], &(-5i64).to_le_bytes()])), json!(-5)),
        (
            buf(&cat(&[&[0xC7], &u64::MAX.to_le_bytes()])),
            json!(u64::MAX),
        ),
        (buf(&cat(&[&[0xCC], &f64_bytes])), json!(2.5)),
        (buf(&cat(&[&[0xCE], &f64_bytes])), json!(2.5)),
        (buf(&cat(&[&[0xCD], &f32_bytes])), json!(0.5)),
        (buf(&[0xD7, 255]), json!(255)),
        (buf(&[0xD8, 0xFF]), json!(-1)),
        (buf(&[0xD9, 0x00, 0x80]), json!(i16::MIN)),
        (buf(&[0xDA, 0xFE, 0xFF, 0xFF, 0xFF]), json!(-2)),
        (
            buf(&cat(&[&[0xDB], &i64::MAX.to_le_bytes()])),
            json!(i64::MAX),
        ),
        (buf(&[0xDC, 0xFF, 0xFF, 0xFF, 0xFF]), json!(u32::MAX)),
    ];
    for (bytes, want) in table {
        assert_eq!(decode(&bytes), Ok(want.clone()), "{bytes:02X?}");
    }
}

#[test]
fn strings_decode_in_every_supported_form() {
    let long = "x".repeat(300);
    let table: Vec<(Vec<u8>, Value)> = vec![
        (buf(&[0x80]), json!("")),
        (buf(&[0x83, b'a', b'b', b'c']), json!("abc")),
        (buf(&cat(&[&[0xBF], &[b'y'; 63]])), json!("y".repeat(63))),
        (buf(&cat(&[&[0xC0, 2], "é".as_bytes()])), json!("é")),
        (
            buf(&cat(&[&[0xC1, 0x2C, 0x01], long.as_bytes()])),
            json!(long),
        ),
        (buf(&[0xC2, 1, 0, 0, 0, b'z']), json!("z")),
        (buf(&[0x20]), json!("$s")),
        (buf(&[0x2C]), json!("id")),
        (buf(&[0x3F]), json!("_id")),
    ];
    for (bytes, want) in table {
        assert_eq!(decode(&bytes), Ok(want.clone()), "{bytes:02X?}");
    }
}

#[test]
fn guid_strings_and_values_expand_to_text() {
    let bytes: [u8; 16] = [
        0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE, 0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC,
        0xFE,
    ];
    let table = [
        (0x75, "01234567-89ab-cdef-0123-456789abcdef"),
        (0x76, "01234567-89AB-CDEF-0123-456789ABCDEF"),
        (0x77, "\"01234567-89ab-cdef-0123-456789abcdef\""),
        // A GUID value: the first three groups little-endian, the rest in order.
        (0xD3, "76543210-ba98-fedc-1032-547698badcfe"),
    ];
    for (mk, want) in table {
        assert_eq!(
            decode(&buf(&cat(&[&[mk], &bytes]))),
            Ok(json!(want)),
            "{mk:02X}"
        );
    }
}

#[test]
fn arrays_decode_in_all_eight_forms() {
    // The items 1, "a" and true: 4 bytes of payload.
    let items = [0x01, 0x81, b'a', 0xD2];
    let table: Vec<(Vec<u8>, Value)> = vec![
        (buf(&[0xE0]), json!([])),
        (buf(&[0xE1, 0x05]), json!([5])),
        (buf(&[0xE1, 0xE1, 0xE0]), json!([[[]]])),
        (buf(&cat(&[&[0xE2, 4], &items])), json!([1, "a", true])),
        (buf(&cat(&[&[0xE3, 4, 0], &items])), json!([1, "a", true])),
        (
            buf(&cat(&[&[0xE4, 4, 0, 0, 0], &items])),
            json!([1, "a", true]),
        ),
        (buf(&cat(&[&[0xE5, 4, 3], &items])), json!([1, "a", true])),
        (
            buf(&cat(&[&[0xE6, 4, 0, 3, 0], &items])),
            json!([1, "a", true]),
        ),
        (
            buf(&cat(&[&[0xE7, 4, 0, 0, 0, 3, 0, 0, 0], &items])),
            json!([1, "a", true]),
        ),
        (buf(&[0xE2, 0]), json!([])),
    ];
    for (bytes, want) in table {
        assert_eq!(decode(&bytes), Ok(want.clone()), "{bytes:02X?}");
    }
}

#[test]
fn objects_decode_in_all_eight_forms() {
    // {"id": "a", "n": 2}: 6 bytes of payload, the name "id" from the dictionary.
    let props = [0x2C, 0x81, b'a', 0x81, b'n', 0x02];
    let want = json!({"id": "a", "n": 2});
    let table: Vec<(Vec<u8>, Value)> = vec![
        (buf(&[0xE8]), json!({})),
        (buf(&[0xE9, 0x81, b'k', 0xD0]), json!({"k": null})),
        (buf(&cat(&[&[0xEA, 6], &props])), want.clone()),
        (buf(&cat(&[&[0xEB, 6, 0], &props])), want.clone()),
        (buf(&cat(&[&[0xEC, 6, 0, 0, 0], &props])), want.clone()),
        (buf(&cat(&[&[0xED, 6, 2], &props])), want.clone()),
        (buf(&cat(&[&[0xEE, 6, 0, 2, 0], &props])), want.clone()),
        (
            buf(&cat(&[&[0xEF, 6, 0, 0, 0, 2, 0, 0, 0], &props])),
            want.clone(),
        ),
        // Nested: {"o": {"a": [1]}}.
        (
            buf(&[0xEA, 9, 0x81, b'o', 0xEA, 5, 0x81, b'a', 0xE2, 1, 0x01]),
            json!({"o": {"a": [1]}}),
        ),
    ];
    for (bytes, want) in table {
        assert_eq!(decode(&bytes), Ok(want.clone()), "{bytes:02X?}");
    }
}

#[test]
fn number_arrays_decode_bare_items() {
    let table: Vec<(Vec<u8>, Value)> = vec![
        (buf(&[0xF0, 0xD8, 3, 0xFF, 0x00, 0x01]), json!([-1, 0, 1])),
        (
            buf(&[0xF1, 0xD9, 2, 0, 0x01, 0x00, 0x00, 0x01]),
            json!([1, 256]),
        ),
        (
            buf(&cat(&[&[0xF0, 0xCE, 1], &1.5f64.to_le_bytes()])),
            json!([1.5]),
        ),
        (
            buf(&[0xF2, 0xF0, 0xD7, 2, 2, 1, 2, 3, 4]),
            json!([[1, 2], [3, 4]]),
        ),
        (
            buf(&[0xF3, 0xF1, 0xD7, 1, 0, 2, 0, 7, 8]),
            json!([[7], [8]]),
        ),
        (buf(&[0xF0, 0xD7, 0]), json!([])),
    ];
    for (bytes, want) in table {
        assert_eq!(decode(&bytes), Ok(want.clone()), "{bytes:02X?}");
    }
}

#[test]
fn reference_strings_repeat_an_earlier_string() {
    // ["hello", <ref to byte 4>]: the string marker of "hello" sits at offset 3.
    let bytes = buf(&[0xE2, 8, 0x85, b'h', b'e', b'l', b'l', b'o', 0xC3, 3]);
    assert_eq!(decode(&bytes), Ok(json!(["hello", "hello"])));
    // Two-, three- and four-byte offsets.
    for (mk, offset) in [
        (0xC4u8, vec![3, 0]),
        (0xC5, vec![3, 0, 0]),
        (0xC6, vec![3, 0, 0, 0]),
    ] {
        let mut bytes = buf(&[0xE2, 0, 0x81, b'q', mk]);
        bytes.extend_from_slice(&offset);
        bytes[2] = (bytes.len() - 3) as u8;
        assert_eq!(decode(&bytes), Ok(json!(["q", "q"])), "{mk:02X}");
    }
    // A property name may be a reference too.
    let bytes = buf(&[0xEA, 8, 0x81, b'k', 0x01, 0xC3, 3, 0x02]);
    let err = decode(&bytes).unwrap_err();
    // Object {"k":1, <ref>:2}: the payload is 6 bytes, not 8.
    assert!(err.problem.contains("declares 8 bytes"), "{err}");
    let bytes = buf(&[0xEA, 6, 0x81, b'k', 0x01, 0xC3, 3, 0x02]);
    assert_eq!(decode(&bytes), Ok(json!({"k": 2})));
}

#[test]
fn bad_buffers_are_refused_with_the_offset_and_the_reason() {
    let table: Vec<(Vec<u8>, usize, &str)> = vec![
        (b"{}".to_vec(), 0, "preamble"),
        (vec![], 0, "preamble"),
        (buf(&[]), 1, "type marker needs 1 bytes"),
        (buf(&[0x01, 0x02]), 2, "1 bytes follow the value"),
        (buf(&[0x85, b'a']), 2, "a string needs 5 bytes"),
        (buf(&[0xC0, 2, 0xFF, 0xFE]), 1, "not valid UTF-8"),
        (buf(&[0xCB, 1, 2]), 2, "an i64 needs 8 bytes"),
        (buf(&[0xFF]), 1, "0xFF is not a type marker"),
        (buf(&[0x6A]), 1, "0x6A is not a type marker"),
        (buf(&[0x45]), 1, "user dictionary"),
        (buf(&[0x61, 0x00]), 1, "user dictionary"),
        (buf(&[0x71, 1, 0]), 1, "base64"),
        (buf(&[0x78, 2, 0x21]), 1, "compressed string"),
        (buf(&[0xCF, 0, 0]), 1, "16-bit float"),
        (buf(&[0xDD, 1, 0]), 1, "binary blob"),
        (
            buf(&cat(&[&[0xCC], &f64::NAN.to_le_bytes()])),
            1,
            "not a JSON number",
        ),
        (
            buf(&cat(&[&[0xCC], &f64::INFINITY.to_le_bytes()])),
            1,
            "not a JSON number",
        ),
        (
            buf(&[0xE2, 9, 0x01]),
            1,
            "declares 9 bytes but the buffer has 1 left",
        ),
        (
            buf(&[0xE5, 2, 3, 0x01, 0x02]),
            1,
            "declares 3 items but holds 2",
        ),
        (
            buf(&[0xE2, 1, 0x82, b'a', b'b']),
            1,
            "runs 2 bytes past the end of the array",
        ),
        (buf(&[0xE1]), 2, "type marker needs 1 bytes"),
        (
            buf(&[0xEA, 1, 0x01]),
            3,
            "property name must be a string, not marker 0x01",
        ),
        (
            buf(&[0xEA, 1, 0xE0]),
            3,
            "property name must be a string, not an array",
        ),
        (
            buf(&[0xEA, 2, 0x81, b'k']),
            1,
            "property name \"k\" without its value",
        ),
        (buf(&[0xE9, 0x81, b'k']), 4, "type marker needs 1 bytes"),
        // A reference forward, at itself, at a non-string and at another reference.
        (buf(&[0xE2, 2, 0xC3, 9]), 3, "not at an earlier string"),
        (buf(&[0xE2, 2, 0xC3, 3]), 3, "not at an earlier string"),
        (
            buf(&[0xE2, 3, 0x01, 0xC3, 3]),
            4,
            "holds marker 0x01, not a string",
        ),
        (
            buf(&[0xE2, 6, 0x81, b'a', 0xC3, 3, 0xC3, 5]),
            7,
            "points at another reference",
        ),
        (
            buf(&[0xF0, 0xCC, 1, 0]),
            1,
            "not an item marker of a number array",
        ),
        (buf(&[0xF0, 0xDA, 3, 0, 0, 0, 0]), 1, "declares 12 bytes"),
        (
            buf(&[0xF2, 0xF1, 0xD7, 1, 1, 5]),
            1,
            "holds arrays of marker 0xF0, not 0xF1",
        ),
    ];
    for (bytes, offset, says) in table {
        let err = decode(&bytes).expect_err(&format!("{bytes:02X?} decodes"));
        assert!(err.problem.contains(says), "{bytes:02X?}: {err}");
        assert_eq!(err.offset, offset, "{bytes:02X?}: {err}");
    }
}

/// `depth` nested one-item arrays around 0.
fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut bytes = vec![PREAMBLE];
    bytes.extend(std::iter::repeat_n(0xE1, depth));
    bytes.push(0x00);
    bytes
}

#[test]
fn nesting_is_bounded_without_recursion() {
    let deepest = decode(&nested_arrays(MAX_DEPTH)).unwrap();
    let mut levels = 0;
    let mut v = &deepest;
    while let Value::Array(items) = v {
        levels += 1;
        v = &items[0];
    }
    assert_eq!(levels, MAX_DEPTH);
    let err = decode(&nested_arrays(MAX_DEPTH + 1)).unwrap_err();
    assert!(err.problem.contains("deeper than 120"), "{err}");
    assert_eq!(err.offset, 1 + MAX_DEPTH);
    // Far deeper than any stack would take: refused, not a crash.
    let err = decode(&nested_arrays(1_000_000)).unwrap_err();
    assert!(err.problem.contains("deeper"), "{err}");
    // Number arrays count as levels too.
    let mut bytes = nested_arrays(MAX_DEPTH);
    bytes.pop();
    bytes.extend_from_slice(&[0xF0, 0xD7, 0]);
    assert!(decode(&bytes).unwrap_err().problem.contains("deeper"));
}

#[test]
fn value_and_reference_budgets_hold() {
    // Many empty inner arrays cost no bytes each but count as values.
    let bytes = buf(&[0xF3, 0xF1, 0xD7, 0, 0, 0xFF, 0xFF]);
    assert_eq!(decode(&bytes).unwrap().as_array().unwrap().len(), 65535);
    // One long string repeated by many references goes over the repeat budget.
    let long = 60_000usize;
    let mut bytes = vec![PREAMBLE, 0xE4, 0, 0, 0, 0, 0xC1];
    bytes.extend_from_slice(&(long as u16).to_le_bytes());
    bytes.extend(std::iter::repeat_n(b'r', long));
    let refs = MAX_REFERENCED_BYTES / long + 1;
    for _ in 0..refs {
        bytes.extend_from_slice(&[0xC3, 6]);
    }
    let payload = (bytes.len() - 6) as u32;
    bytes[2..6].copy_from_slice(&payload.to_le_bytes());
    let err = decode(&bytes).unwrap_err();
    assert!(err.problem.contains("repeat more than"), "{err}");
    // Within the budget the same shape decodes.
    bytes.truncate(bytes.len() - 2 * (refs - 1));
    let payload = (bytes.len() - 6) as u32;
    bytes[2..6].copy_from_slice(&payload.to_le_bytes());
    assert_eq!(decode(&bytes).unwrap().as_array().unwrap().len(), 2);
}

#[test]
fn encoding_uses_compact_forms() {
    let table: Vec<(Value, Vec<u8>)> = vec![
        (json!(null), buf(&[0xD0])),
        (json!(7), buf(&[0x07])),
        (json!(32), buf(&[0xC8, 32])),
        (json!(-1), buf(&[0xC9, 0xFF, 0xFF])),
        (json!(70000), buf(&[0xCA, 0x70, 0x11, 0x01, 0x00])),
        (
            json!(1i64 << 40),
            buf(&cat(&[&[0xCB], &(1i64 << 40).to_le_bytes()])),
        ),
        (
            json!(u64::MAX),
            buf(&cat(&[&[0xC7], &u64::MAX.to_le_bytes()])),
        ),
        (json!(0.25), buf(&cat(&[&[0xCC], &0.25f64.to_le_bytes()]))),
        (json!("id"), buf(&[0x2C])),
        (json!("ab"), buf(&[0x82, b'a', b'b'])),
        (json!([]), buf(&[0xE0])),
        (json!({}), buf(&[0xE8])),
        (json!([true]), buf(&[0xE5, 1, 1, 0xD2])),
        (json!({"id": "x"}), buf(&[0xED, 3, 1, 0x2C, 0x81, b'x'])),
    ];
    for (value, want) in table {
        assert_eq!(encode(&value), Ok(want), "{value}");
    }
}

#[test]
fn encoded_values_decode_to_themselves() {
    let wide: Vec<Value> = (0..300).map(|i| json!(i * 1000 - 7)).collect();
    let many: Map<String, Value> = (0..300).map(|i| (format!("p{i}"), json!(i))).collect();
    let values = [
        json!({"id": "a", "pk": "p", "n": 1.5, "neg": -12345678901i64, "big": u64::MAX,
               "s": "x".repeat(70), "long": "é".repeat(40_000), "t": true, "f": false, "z": null,
               "nested": {"a": [1, [2, [3, {"b": []}]]], "e": {}}, "_etag": "_etag"}),
        json!([]),
        json!("plain"),
        Value::Array(wide),
        Value::Object(many),
        Value::Array(vec![json!("y".repeat(70_000)); 2]),
    ];
    for value in values {
        let bytes = encode(&value).unwrap();
        assert!(is_binary(&bytes));
        assert_eq!(decode(&bytes), Ok(value.clone()));
    }
}

#[test]
fn encoding_refuses_values_past_the_depth_bound() {
    let mut v = json!(1);
    for _ in 0..MAX_DEPTH {
        v = json!([v]);
    }
    assert_eq!(decode(&encode(&v).unwrap()), Ok(v.clone()));
    let too_deep = json!([v]);
    assert!(encode(&too_deep).unwrap_err().0.contains("deeper than 120"));
}
