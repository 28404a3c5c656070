//! What the emulator answers without credentials: the readiness probe (`GET /_emulator/ready`)
//! and the explorer page's static files (`GET /_explorer`), which carry no data of their own: the
//! page signs its calls to the admin and data APIs with the key its user types.

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::Full;

mod status;
pub(crate) use status::status;

/// The readiness probe's path.
pub(crate) const READY_PATH: &str = "/_emulator/ready";

/// The explorer page's path (on the global endpoint).
pub(crate) const EXPLORER_PATH: &str = "/_explorer";

/// The status admin path (needs the admin credential like the rest of the admin API).
pub(crate) const STATUS_PATH: &str = "/_emulator/status";

/// The answer to a request that needs no credentials, or `None` for every other request
/// (`global`: it came to the global endpoint).
///
/// The probe answers 200 on every endpoint: listeners serve only once all of them are bound (and
/// the data directory, if any, is loaded), so any answer means every region listens. Its body says
/// nothing about the account.
pub(crate) fn open_request(
    global: bool,
    parts: &http::request::Parts,
) -> Option<Response<Full<Bytes>>> {
    let path = parts.uri.path();
    if path == READY_PATH {
        if parts.method != Method::GET && parts.method != Method::HEAD {
            return Some(plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n"));
        }
        return Some(plain(StatusCode::OK, "ready\n"));
    }
    if global {
        if let Some(asset) = explorer_asset(path) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, global: bool) -> Option<Response<Full<Bytes>>> {
        let request = http::Request::get(path).body(()).unwrap();
        let (parts, ()) = request.into_parts();
        open_request(global, &parts)
    }

    #[test]
    fn which_paths_are_open() {
        let cases = [
            ("/_emulator/ready", true, Some(200)),
            ("/_emulator/ready", false, Some(200)),
            ("/_explorer", true, Some(200)),
            ("/_explorer/", true, Some(200)),
            ("/_explorer/app.js", true, Some(200)),
            ("/_explorer/app.css", true, Some(200)),
            ("/_explorer", false, None),
            ("/_explorer/secret", true, None),
            ("/_emulator/counters", true, None),
            ("/dbs", true, None),
        ];
        for (path, global, expected) in cases {
            let got = get(path, global).map(|r| r.status().as_u16());
            assert_eq!(got, expected, "{path} global={global}");
        }
        let page = get("/_explorer", true).unwrap();
        let csp = page.headers()["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe"),
            "{csp}"
        );
    }

    #[test]
    fn the_page_never_parses_text_as_markup() {
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!EXPLORER_JS.contains(sink), "app.js uses {sink}");
        }
        for remote in ["http://", "https://", "//cdn"] {
            assert!(
                !EXPLORER_HTML.contains(remote) && !EXPLORER_JS.contains(remote),
                "the page loads nothing from elsewhere ({remote})"
            );
        }
    }
}
