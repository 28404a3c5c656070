//! Spatial functions over GeoJSON values (`{"type": "Point", "coordinates": [lon, lat]}`), in the
//! service's default geography (WGS-84): `ST_DISTANCE` between two points, in meters, on the
//! ellipsoid (Vincenty's inverse formula), and `ST_ISVALID`. An argument that is not GeoJSON makes
//! the result undefined, as in the service. Distances involving other geometries, and
//! `ST_WITHIN`, `ST_INTERSECTS` and `ST_ISVALIDDETAILED`, are refused with 400 naming what is
//! not served, never answered approximately.

use serde_json::Value;

use super::super::sql_error::SqlError;
use super::super::value::{number, Val};
use super::{arg, Args};

/// WGS-84 semi-major axis (m) and flattening.
const A: f64 = 6_378_137.0;
const F: f64 = 1.0 / 298.257_223_563;
/// Most Vincenty iterations (it converges in a handful except near antipodal points).
const MAX_ITERATIONS: usize = 200;
/// Most positions a geometry may hold for ST_ISVALID.
const MAX_POSITIONS: usize = 100_000;

/// The spatial function `name`, or `Ok(None)` when `name` is not one.
pub(super) fn call(name: &str, args: Args<'_, '_>) -> Result<Option<Val>, SqlError> {
    match name {
        "ST_DISTANCE" => distance(arg(args, 0), arg(args, 1)).map(Some),
        "ST_ISVALID" => Ok(Some(
            arg(args, 0).map(|g| Value::Bool(geometry_valid(g).unwrap_or(false))),
        )),
        _ => Ok(None),
    }
}

/// A position `[lon, lat]` (an optional altitude is allowed and ignored).
fn position(v: &Value) -> Option<(f64, f64)> {
    let list = v.as_array()?;
    if !(2..=3).contains(&list.len()) {
        return None;
    }
    let lon = list[0].as_f64()?;
    let lat = list[1].as_f64()?;
    if list.get(2).is_some_and(|alt| alt.as_f64().is_none()) {
        return None;
    }
    ((-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat)).then_some((lon, lat))
}

fn kind(g: &Value) -> Option<&str> {
    g.get("type")?.as_str()
}

fn distance(a: Option<&Value>, b: Option<&Value>) -> Result<Val, SqlError> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    let (Some(ka), Some(kb)) = (kind(a), kind(b)) else {
        return Ok(None);
    };
    if ka != "Point" || kb != "Point" {
        return Err(SqlError::new(format!(
            "ST_DISTANCE between a {ka} and a {kb} is not served by this emulator: only between two Points."
        )));
    }
    let (Some(p), Some(q)) = (
        a.get("coordinates").and_then(position),
        b.get("coordinates").and_then(position),
    ) else {
        return Ok(None);
    };
    match vincenty(p, q) {
        Some(meters) => Ok(number(meters)),
        None => Err(SqlError::new(
            "ST_DISTANCE between nearly antipodal points is not served by this emulator (the ellipsoidal distance does not converge).",
        )),
    }
}

/// The distance in meters between two `(lon, lat)` positions on the WGS-84 ellipsoid, by
/// Vincenty's inverse formula; `None` when it does not converge.
pub(super) fn vincenty((lon1, lat1): (f64, f64), (lon2, lat2): (f64, f64)) -> Option<f64> {
    let b = A * (1.0 - F);
    let l = (lon2 - lon1).to_radians();
    let u1 = ((1.0 - F) * lat1.to_radians().tan()).atan();
    let u2 = ((1.0 - F) * lat2.to_radians().tan()).atan();
    let (sin_u1, cos_u1) = u1.sin_cos();
    let (sin_u2, cos_u2) = u2.sin_cos();
    let mut lambda = l;
    for _ in 0..MAX_ITERATIONS {
        let (sin_lambda, cos_lambda) = lambda.sin_cos();
        let sin_sigma = ((cos_u2 * sin_lambda).powi(2)
            + (cos_u1 * sin_u2 - sin_u1 * cos_u2 * cos_lambda).powi(2))
        .sqrt();
        if sin_sigma == 0.0 {
            return Some(0.0);
        }
        let cos_sigma = sin_u1 * sin_u2 + cos_u1 * cos_u2 * cos_lambda;
        let sigma = sin_sigma.atan2(cos_sigma);
        let sin_alpha = cos_u1 * cos_u2 * sin_lambda / sin_sigma;
        let cos_sq_alpha = 1.0 - sin_alpha * sin_alpha;
        let cos_2sigma_m = if cos_sq_alpha == 0.0 {
            0.0
        } else {
            cos_sigma - 2.0 * sin_u1 * sin_u2 / cos_sq_alpha
        };
        let c = F / 16.0 * cos_sq_alpha * (4.0 + F * (4.0 - 3.0 * cos_sq_alpha));
        let previous = lambda;
        lambda = l
            + (1.0 - c)
                * F
                * sin_alpha
                * (sigma
                    + c * sin_sigma
                        * (cos_2sigma_m
                            + c * cos_sigma * (-1.0 + 2.0 * cos_2sigma_m * cos_2sigma_m)));
        if (lambda - previous).abs() < 1e-12 {
            let u_sq = cos_sq_alpha * (A * A - b * b) / (b * b);
            let big_a =
                1.0 + u_sq / 16384.0 * (4096.0 + u_sq * (-768.0 + u_sq * (320.0 - 175.0 * u_sq)));
            let big_b = u_sq / 1024.0 * (256.0 + u_sq * (-128.0 + u_sq * (74.0 - 47.0 * u_sq)));
            let delta_sigma = big_b
                * sin_sigma
                * (cos_2sigma_m
                    + big_b / 4.0
                        * (cos_sigma * (-1.0 + 2.0 * cos_2sigma_m * cos_2sigma_m)
                            - big_b / 6.0
                                * cos_2sigma_m
                                * (-3.0 + 4.0 * sin_sigma * sin_sigma)
                                * (-3.0 + 4.0 * cos_2sigma_m * cos_2sigma_m)));
            return Some(b * big_a * (sigma - delta_sigma));
        }
    }
    None
}

/// Whether `g` is valid GeoJSON of a type the service accepts (`None`: not GeoJSON at all).
fn geometry_valid(g: &Value) -> Option<bool> {
    let coords = g.get("coordinates")?;
    let positions = |v: &Value, least: usize| -> Option<Vec<(f64, f64)>> {
        let list = v.as_array()?;
        if list.len() < least || list.len() > MAX_POSITIONS {
            return None;
        }
        list.iter().map(position).collect()
    };
    let ring = |v: &Value| -> bool { positions(v, 4).is_some_and(|p| p.first() == p.last()) };
    Some(match kind(g)? {
        "Point" => position(coords).is_some(),
        "MultiPoint" => positions(coords, 1).is_some(),
        "LineString" => positions(coords, 2).is_some(),
        "Polygon" => coords
            .as_array()
            .is_some_and(|rings| !rings.is_empty() && rings.iter().all(ring)),
        "MultiPolygon" => coords.as_array().is_some_and(|polygons| {
            !polygons.is_empty()
                && polygons.iter().all(|p| {
                    p.as_array()
                        .is_some_and(|rings| !rings.is_empty() && rings.iter().all(ring))
                })
        }),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn distances_on_the_ellipsoid() {
        // Reference distances on WGS-84.
        let cases = [
            ((20.0, 20.0), (20.1, 20.0), 10_464.5),
            ((0.0, 0.0), (1.0, 0.0), 111_319.491),
            ((0.0, 0.0), (0.0, 1.0), 110_574.389),
            ((5.0, 5.0), (5.0, 5.0), 0.0),
        ];
        for (p, q, expected) in cases {
            let d = vincenty(p, q).unwrap();
            assert!((d - expected).abs() < 2.0, "{p:?} {q:?}: {d}");
        }
    }

    #[test]
    fn distance_arguments() {
        let p = json!({"type": "Point", "coordinates": [20.0, 20.0]});
        let q = json!({"type": "Point", "coordinates": [20.1, 20.0]});
        let d = distance(Some(&p), Some(&q))
            .unwrap()
            .unwrap()
            .as_f64()
            .unwrap();
        assert!(d > 10_000.0 && d < 11_000.0);
        assert_eq!(distance(Some(&p), None).unwrap(), None);
        assert_eq!(distance(Some(&p), Some(&json!("x"))).unwrap(), None);
        let bad = json!({"type": "Point", "coordinates": [200.0, 0.0]});
        assert_eq!(distance(Some(&p), Some(&bad)).unwrap(), None);
        let poly = json!({"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,0]]]});
        assert!(distance(Some(&p), Some(&poly)).is_err());
    }

    #[test]
    fn validity() {
        let cases = [
            (json!({"type": "Point", "coordinates": [1, 2]}), true),
            (json!({"type": "Point", "coordinates": [1, 2, 3]}), true),
            (json!({"type": "Point", "coordinates": [181, 2]}), false),
            (json!({"type": "Point", "coordinates": [1]}), false),
            (
                json!({"type": "LineString", "coordinates": [[0, 0], [1, 1]]}),
                true,
            ),
            (
                json!({"type": "LineString", "coordinates": [[0, 0]]}),
                false,
            ),
            (
                json!({"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,0]]]}),
                true,
            ),
            (
                json!({"type": "Polygon", "coordinates": [[[0,0],[1,0],[1,1],[0,1]]]}),
                false,
            ),
            (json!({"type": "Circle", "coordinates": [1, 2]}), false),
        ];
        for (g, expected) in cases {
            assert_eq!(geometry_valid(&g), Some(expected), "{g}");
        }
        assert_eq!(geometry_valid(&json!({"type": "Point"})), None);
    }
}
