//! How values whose shape the service decides travel inside a continuation token: a JSON value
//! as its own JSON text (so a token nests only a few levels however deep the value, and reading
//! it back applies the same nesting limit as reading the service's page did), and a double that
//! may have overflowed to infinity (JSON has no spelling for it) as a number or a word.

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The largest continuation token accepted or issued, encoded.
pub const MAX_TOKEN_BYTES: usize = 256 * 1024;

/// A JSON value carried as its JSON text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct JsonText(#[serde(with = "value_text")] pub Value);

/// `#[serde(with)]` for a [`Value`] written as its JSON text.
pub(crate) mod value_text {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(v).map_err(S::Error::custom)?;
        s.serialize_str(&text)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(D::Error::custom)
    }
}

/// `#[serde(with)]` for an optional [`Value`] (`None`: undefined, written as `null`; a JSON
/// `null` value is the text `"null"`).
pub(crate) mod opt_value_text {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => super::value_text::serialize(v, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        match Option::<String>::deserialize(d)? {
            Some(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(D::Error::custom),
            None => Ok(None),
        }
    }
}

/// `#[serde(with)]` for an `f64` that may be infinite or NaN: finite as a number, otherwise
/// `"inf"`, `"-inf"` or `"nan"`.
pub(crate) mod float_text {
    use super::*;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Spelled {
        Number(f64),
        Word(String),
    }

    pub(crate) fn serialize<S: Serializer>(f: &f64, s: S) -> Result<S::Ok, S::Error> {
        if f.is_finite() {
            s.serialize_f64(*f)
        } else if f.is_nan() {
            s.serialize_str("nan")
        } else if *f > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Spelled::deserialize(d)? {
            Spelled::Number(f) => Ok(f),
            Spelled::Word(w) => match w.as_str() {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                "nan" => Ok(f64::NAN),
                other => Err(D::Error::custom(format_args!("not a number: {other:?}"))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "opt_value_text")]
        v: Option<Value>,
        #[serde(with = "float_text")]
        f: f64,
        t: Vec<JsonText>,
    }

    #[test]
    fn values_and_doubles_round_trip_exactly() {
        let deep = (0..120).fold(json!(1), |v, _| json!([v]));
        let table = [
            (None, 1.5),
            (Some(Value::Null), f64::INFINITY),
            (Some(json!({"a": [1, 2.25, "x"]})), f64::NEG_INFINITY),
            (Some(deep), 0.1 + 0.2),
            (Some(json!(-0.0)), f64::MAX),
        ];
        for (v, f) in table {
            let h = Holder {
                v: v.clone(),
                f,
                t: vec![
                    JsonText(json!("s")),
                    JsonText(v.clone().unwrap_or_default()),
                ],
            };
            let text = serde_json::to_string(&h).unwrap();
            let back: Holder = serde_json::from_str(&text).unwrap();
            assert_eq!(back, h, "{text}");
            assert_eq!(back.f.to_bits(), f.to_bits());
        }
        let nan: Holder = serde_json::from_str(r#"{"v":null,"f":"nan","t":[]}"#).unwrap();
        assert!(nan.f.is_nan());
    }

    #[test]
    fn malformed_texts_are_errors() {
        for bad in [
            r#"{"v":"{","f":1,"t":[]}"#,
            r#"{"v":null,"f":"huge","t":[]}"#,
            r#"{"v":null,"f":1,"t":[3]}"#,
            r#"{"v":7,"f":1,"t":[]}"#,
        ] {
            assert!(serde_json::from_str::<Holder>(bad).is_err(), "{bad}");
        }
    }
}
