//! Vector search: `VectorDistance(a, b [, bruteForce [, options]])` and the score the hybrid
//! search component queries order by (`_VectorScore`).
//!
//! Every search is exact (a brute-force scan of the query's rows), whatever vector index the
//! container declares: an approximate index may only be as good. The distance function and data
//! type come from the options argument when it names them, else from the container's vector
//! embedding policy for the path (filled in before execution by [`super::search`]), else cosine
//! over float32, as the service defaults.
//!
//! Similarity order: cosine and dot product are similarities (larger is closer), Euclidean is a
//! distance (smaller is closer); `ORDER BY VectorDistance(...)` returns the closest first.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::meter::Meter;
use super::sql_error::SqlError;
use super::value::Val;

/// Most dimensions a vector argument may have (the service's largest index takes 4,096; a
/// flat scan accepts more, up to this bound).
pub(crate) const MAX_DIMENSIONS: usize = 16_384;

/// A distance function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Distance {
    Cosine,
    #[serde(rename = "dotproduct")]
    DotProduct,
    Euclidean,
}

impl Distance {
    /// The function named `text` (the service's names, any case).
    pub(crate) fn from_name(text: &str) -> Option<Self> {
        [Self::Cosine, Self::DotProduct, Self::Euclidean]
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(text))
    }

    /// The service's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Cosine => "cosine",
            Self::DotProduct => "dotproduct",
            Self::Euclidean => "euclidean",
        }
    }

    /// Whether the closest vectors have the largest values (similarities) rather than the
    /// smallest (distances): `ORDER BY VectorDistance` sorts descending when true.
    pub(crate) fn larger_is_closer(self) -> bool {
        !matches!(self, Self::Euclidean)
    }
}

/// A vector data type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataType {
    Float32,
    Float16,
    Int8,
    Uint8,
}

impl DataType {
    pub(crate) fn from_name(text: &str) -> Option<Self> {
        [Self::Float32, Self::Float16, Self::Int8, Self::Uint8]
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(text))
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Float32 => "float32",
            Self::Float16 => "float16",
            Self::Int8 => "int8",
            Self::Uint8 => "uint8",
        }
    }

    /// Whether `x` is a value of this type.
    pub(crate) fn holds(self, x: f64) -> bool {
        match self {
            Self::Float32 | Self::Float16 => x.is_finite(),
            Self::Int8 => x.fract() == 0.0 && (-128.0..=127.0).contains(&x),
            Self::Uint8 => x.fract() == 0.0 && (0.0..=255.0).contains(&x),
        }
    }
}

/// The options object of `VectorDistance`, as the service documents its keys (read in place,
/// borrowing its strings).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct VectorOptions<'a> {
    #[serde(borrow)]
    pub distance_function: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    pub data_type: Option<std::borrow::Cow<'a, str>>,
    /// Accepted for approximate indexes; the exact search here needs no candidate list.
    #[allow(dead_code)]
    pub search_list_size_multiplier: Option<u32>,
    #[allow(dead_code)]
    pub quantized_vector_list_multiplier: Option<u32>,
    #[allow(dead_code)]
    pub filter_priority: Option<f64>,
}

/// What a `VectorDistance` call computes, read from its options argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub distance: Distance,
    pub data_type: DataType,
}

/// Reads an options object: 400 for an unknown key, function or type.
pub(crate) fn read_options(
    options: Option<&Value>,
) -> Result<(Option<Distance>, Option<DataType>), SqlError> {
    let options: VectorOptions = match options {
        None => VectorOptions::default(),
        Some(v @ Value::Object(_)) => VectorOptions::deserialize(v)
            .map_err(|e| SqlError::new(format!("The VectorDistance options are invalid: {e}.")))?,
        Some(other) => {
            return Err(SqlError::new(format!(
                "The fourth argument of VectorDistance must be an options object, not {other}."
            )))
        }
    };
    let distance = match &options.distance_function {
        None => None,
        Some(name) => Some(Distance::from_name(name).ok_or_else(|| {
            SqlError::new(format!(
                "The distance function {name:?} is not supported: use cosine, dotproduct or euclidean."
            ))
        })?),
    };
    let data_type = match &options.data_type {
        None => None,
        Some(name) => Some(DataType::from_name(name).ok_or_else(|| {
            SqlError::new(format!(
                "The vector data type {name:?} is not supported: use float32, float16, int8 or uint8."
            ))
        })?),
    };
    Ok((distance, data_type))
}

/// The options object naming `resolved` (what the search pass writes into each call).
pub(crate) fn options_value(resolved: Resolved) -> Value {
    let mut map = Map::new();
    map.insert("distanceFunction".into(), resolved.distance.name().into());
    map.insert("dataType".into(), resolved.data_type.name().into());
    Value::Object(map)
}

/// The items of `v` when it is an array of at most [`MAX_DIMENSIONS`] values (else `None`).
fn items(v: Option<&Value>) -> Option<&[Value]> {
    match v {
        Some(Value::Array(items)) if items.len() <= MAX_DIMENSIONS => Some(items),
        _ => None,
    }
}

/// The number of `x` when it is a number of `data_type`.
#[inline]
fn element(x: &Value, data_type: DataType) -> Option<f64> {
    x.as_f64().filter(|x| data_type.holds(*x))
}

/// What one pass over two vectors sums: their dot product, squared norms and squared distance.
#[derive(Default)]
struct Sums {
    dot: f64,
    aa: f64,
    bb: f64,
    dd: f64,
}

impl Sums {
    /// Adds one pair of elements (the first vector's `x`, the second's `y`).
    #[inline]
    fn add(&mut self, x: f64, y: f64) {
        self.dot += x * y;
        self.aa += x * x;
        self.bb += y * y;
        self.dd += (x - y) * (x - y);
    }
}

/// The sums over `a` and `b` read in place (no copy of either), or `None` when an element is not
/// a number of `data_type`.
fn sums(a: &[Value], b: &[Value], data_type: DataType) -> Option<Sums> {
    let mut s = Sums::default();
    for (x, y) in a.iter().zip(b) {
        s.add(element(x, data_type)?, element(y, data_type)?);
    }
    Some(s)
}

/// One `VectorDistance` call measuring items against a constant vector, for items whose numbers
/// were read ahead: [`Probe::score`] gives exactly the value the call gives over the parsed item.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    pub resolved: Resolved,
    vector: Box<[f64]>,
    /// Whether the item is the call's first argument (the constant its second).
    item_first: bool,
}

impl Probe {
    /// The probe for `vector` (the call's constant argument), or `None` when it is not a vector
    /// of the data type (every score is undefined then; the general evaluation says so).
    pub(crate) fn new(vector: &Value, resolved: Resolved, item_first: bool) -> Option<Self> {
        let values = items(Some(vector))?;
        if values.is_empty() {
            return None;
        }
        let vector = values
            .iter()
            .map(|x| element(x, resolved.data_type))
            .collect::<Option<Box<[f64]>>>()?;
        Some(Self {
            resolved,
            vector,
            item_first,
        })
    }

    /// Dimensions of the constant vector.
    pub(crate) fn dimensions(&self) -> usize {
        self.vector.len()
    }

    /// The call's value for an item whose array at the measured path holds the numbers `xs`, all
    /// of them of the data type (the caller checks): undefined for another length.
    pub(crate) fn score<X: Copy + Into<f64>>(&self, xs: &[X]) -> Val {
        if xs.len() != self.vector.len() {
            return None;
        }
        let mut s = Sums::default();
        if self.item_first {
            for (x, y) in xs.iter().zip(self.vector.iter()) {
                s.add((*x).into(), *y);
            }
        } else {
            for (x, y) in self.vector.iter().zip(xs) {
                s.add(*x, (*y).into());
            }
        }
        finish(self.resolved.distance, &s).and_then(number)
    }
}

fn finish(distance: Distance, s: &Sums) -> Option<f64> {
    let value = match distance {
        Distance::DotProduct => s.dot,
        Distance::Euclidean => s.dd.sqrt(),
        Distance::Cosine => {
            let (na, nb) = (s.aa.sqrt(), s.bb.sqrt());
            if na == 0.0 || nb == 0.0 {
                return None;
            }
            s.dot / (na * nb)
        }
    };
    value.is_finite().then_some(value)
}

fn number(x: f64) -> Val {
    serde_json::Number::from_f64(x).map(Value::Number)
}

/// `VECTORDISTANCE` and `_VECTORSCORE` (upper-cased), or `None` for another name. A vector that
/// is not an array of numbers of the data type, or of another length, gives undefined.
pub(crate) fn call(
    name: &str,
    args: &[Option<&Value>],
    meter: &Meter,
) -> Result<Option<Val>, SqlError> {
    let options_at = match name {
        "VECTORDISTANCE" => 3,
        "_VECTORSCORE" => 2,
        _ => return Ok(None),
    };
    if name == "VECTORDISTANCE" {
        match args.get(2).copied().flatten() {
            None | Some(Value::Bool(_)) => {}
            Some(other) => {
                return Err(SqlError::new(format!(
                "The third argument of VectorDistance (bruteForce) must be a boolean, not {other}."
            )))
            }
        }
    }
    let (distance, data_type) = read_options(args.get(options_at).copied().flatten())?;
    let distance = distance.unwrap_or(Distance::Cosine);
    let data_type = data_type.unwrap_or(DataType::Float32);
    let a = items(args.first().copied().flatten());
    let b = items(args.get(1).copied().flatten());
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(Some(None));
    };
    if a.len() != b.len() || a.is_empty() {
        return Ok(Some(None));
    }
    meter.charge(a.len() as u64 / 16 + 1)?;
    Ok(Some(
        sums(a, b, data_type)
            .and_then(|s| finish(distance, &s))
            .and_then(number),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(args: &[Value]) -> Result<Val, SqlError> {
        let refs: Vec<Option<&Value>> = args.iter().map(Some).collect();
        Ok(call("VECTORDISTANCE", &refs, &Meter::unlimited())?.unwrap())
    }

    #[test]
    fn distance_functions_compute_as_documented() {
        let cases = [
            (json!([1, 0]), json!([1, 0]), "cosine", 1.0),
            (json!([1, 0]), json!([0, 1]), "cosine", 0.0),
            (json!([1, 2, 3]), json!([4, 5, 6]), "dotproduct", 32.0),
            (json!([0, 0]), json!([3, 4]), "euclidean", 5.0),
        ];
        for (a, b, f, want) in cases {
            let got = run(&[a, b, json!(false), json!({"distanceFunction": f})]).unwrap();
            let got = got.and_then(|v| v.as_f64()).unwrap();
            assert!((got - want).abs() < 1e-12, "{f}: {got} != {want}");
        }
        // Cosine is the default.
        let got = run(&[json!([2, 0]), json!([1, 1])]).unwrap().unwrap();
        assert!((got.as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn mismatched_or_malformed_vectors_are_undefined_and_bad_options_refused() {
        assert_eq!(run(&[json!([1, 2]), json!([1, 2, 3])]).unwrap(), None);
        assert_eq!(run(&[json!([1, "x"]), json!([1, 2])]).unwrap(), None);
        assert_eq!(run(&[json!("v"), json!([1, 2])]).unwrap(), None);
        assert_eq!(run(&[json!([0, 0]), json!([1, 2])]).unwrap(), None);
        let int8 = json!({"dataType": "int8", "distanceFunction": "dotproduct"});
        assert_eq!(
            run(&[json!([300]), json!([1]), json!(false), int8.clone()]).unwrap(),
            None
        );
        assert!(run(&[json!([3]), json!([1]), json!(false), int8])
            .unwrap()
            .is_some());
        for bad in [
            json!({"distanceFunction": "manhattan"}),
            json!({"dataType": "float64"}),
            json!({"unknown": 1}),
            json!(3),
        ] {
            assert!(
                run(&[json!([1]), json!([1]), json!(false), bad.clone()]).is_err(),
                "{bad}"
            );
        }
        assert!(run(&[json!([1]), json!([1]), json!("yes")]).is_err());
    }
}
