//! What the emulator answers without credentials: the readiness probe (`GET /_emulator/ready`)
//! and the explorer page's static files (`GET /_explorer`), which carry no data of their own: the
//! page signs its calls to the admin and data APIs with the key its user types.

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::Full;

use crate::exchange::Shared;
use crate::server::Port;

mod status;
pub use status::status;

/// The readiness probe's path.
pub const READY_PATH: &str = "/_emulator/ready";

/// The explorer page's path (on the global endpoint).
pub const EXPLORER_PATH: &str = "/_explorer";

/// The status admin path (needs the admin credential like the rest of the admin API).
pub const STATUS_PATH: &str = "/_emulator/status";

/// The answer to a request that needs no credentials, or `None` for every other request.
///
/// The probe answers 200 on every endpoint: listeners serve only once all of them are bound (and
/// the data directory, if any, is loaded), so any answer means every region listens. Its body says
/// nothing about the account.
pub fn open_request(
    _shared: &Shared,
    port: Port,
    parts: &http::request::Parts,
) -> Option<Response<Full<Bytes>>> {
    let path = parts.uri.path();
    if path == READY_PATH {
        if parts.method != Method::GET && parts.method != Method::HEAD {
            return Some(plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n"));
        }
        return Some(plain(StatusCode::OK, "ready\n"));
    }
    if port == Port::Global {
        if let Some(asset) = crate::ops::explorer_asset(path) {
            if parts.method != Method::GET && parts.method != Method::HEAD {
                return Some(plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n"));
            }
            return Some(asset);
        }
    }
    None
}

/// The explorer's files by path, or `None`.
fn explorer_asset(path: &str) -> Option<Response<Full<Bytes>>> {
    let (body, kind): (&'static str, &str) = match path.trim_end_matches('/') {
        EXPLORER_PATH => (EXPLORER_HTML, "text/html; charset=utf-8"),
        "/_explorer/app.js" => (EXPLORER_JS, "text/javascript; charset=utf-8"),
        "/_explorer/app.css" => (EXPLORER_CSS, "text/css; charset=utf-8"),
        _ => return None,
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(http::header::CONTENT_TYPE, kind)
        .header(http::header::CACHE_CONTROL, "no-store")
        .header("x-content-type-options", "nosniff")
        .header(
            "content-security-policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        )
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .ok()
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

const EXPLORER_HTML: &str = include_str!("explorer/index.html");
const EXPLORER_JS: &str = include_str!("explorer/app.js");
const EXPLORER_CSS: &str = include_str!("explorer/app.css");
