//! The steps every request goes through: admin API, region outage, auth, counting, fault verdict,
//! body, handler, and a fault's answer after the handler for reactions that execute first.

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use tokio::time::Instant;

use super::body::read_body;
use super::port::Port;
use crate::auth::{Access, Credentials};
use crate::exchange::reply::{error_response, to_response};
use crate::exchange::request_class::{evaluates, op_kind};
use crate::exchange::serialization;
use crate::exchange::{header_text, Reply, RequestCtx, Shared};
use crate::faults::{admin, outage_admin, Reaction, RequestFacts};
use crate::handlers;
use crate::protocol::route::Route;
use crate::protocol::{headers, route, ApiError, RouteError};
use crate::store::users::Grant;

/// Returned to hyper to make it drop the connection without answering.
#[derive(Debug)]
pub(super) struct CloseConnection;

impl std::fmt::Display for CloseConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed by a fault rule")
    }
}

impl std::error::Error for CloseConnection {}

/// Serves one request: a region in outage closes it unanswered; then route (bad segments
/// refused), authentication, then counters and fault rules, then the body (with a timeout), then
/// a resource token's authorization (from the resolved operation, batch bodies included), then
/// the handler. Nothing but routing happens before authentication.
pub(super) async fn handle(
    shared: Arc<Shared>,
    port: Port,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, CloseConnection> {
    let (mut parts, body) = request.into_parts();
    host_from_authority(&mut parts);
    let path = parts.uri.path();
    if let Some(response) = super::operator::open_request(port == Port::Global, &parts) {
        return Ok(response);
    }
    if path.starts_with("/_emulator") {
        return Ok(admin_request(&shared, port, &parts, body).await);
    }
    let location = content_location(&shared, port, path);
    let mut answer = serve_resource(shared, port, parts, body).await;
    if let (Ok(response), Some(location)) = (&mut answer, location) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_LOCATION, location);
    }
    answer
}

/// `Content-Location`: the URI the request addressed, on the endpoint that served it (the
/// service sends it on every answer, errors included, e.g.
/// `https://account.documents.azure.com/dbs/db/colls/c/docs/item1`).
fn content_location(shared: &Shared, port: Port, path: &str) -> Option<http::HeaderValue> {
    let base = match port {
        Port::Global => shared.global_endpoint.as_str(),
        Port::Region(i) => shared.store.topology.regions().get(i)?.endpoint.as_str(),
    };
    let text = format!("{}{path}", base.trim_end_matches('/'));
    // (The header takes the text as it is, without copying it again.)
    http::HeaderValue::from_maybe_shared(Bytes::from(text)).ok()
}

/// Serves a request for a resource (everything but the operator pages and the admin API).
async fn serve_resource(
    shared: Arc<Shared>,
    port: Port,
    parts: http::request::Parts,
    body: Incoming,
) -> Result<Response<Full<Bytes>>, CloseConnection> {
    let path = parts.uri.path();
    let topology = &shared.store.topology;
    let region = match port {
        Port::Global => topology.hub(),
        Port::Region(i) => i,
    };
    if shared.outages.mode_at(region).is_some() {
        return Err(CloseConnection);
    }
    let route = match routed(path) {
        Ok(route) => route,
        Err(e) => return Ok(error_response(&e, 0.0)),
    };
    let grant = match authenticate(&shared, &parts, &route) {
        Ok(grant) => grant,
        Err(e) => return Ok(error_response(&e, 0.0)),
    };
    let region_name = topology
        .regions()
        .get(region)
        .map(|r| r.name.as_str())
        .unwrap_or("");
    let op = op_kind(&parts.method, &route, &parts.headers);
    shared.counters.record(region_name, op);
    if let Some(token) = parts.headers.get(crate::protocol::headers::SESSION_TOKEN) {
        shared.counters.note_session_token(token.len());
    }
    let verdict = shared.faults.evaluate(&RequestFacts {
        region: region_name,
        op,
        path,
        headers: Some(&parts.headers),
    });
    if !verdict.delay.is_zero() {
        tokio::time::sleep(verdict.delay).await;
    }
    match before_serving(&verdict.reaction) {
        Before::Serve => {}
        Before::Answer(e) => return Ok(error_response(&e, 0.0)),
        Before::Close => return Err(CloseConnection),
        Before::Stall => std::future::pending::<()>().await,
    }
    let body = match admitted_body(&shared, &parts, &route, body, region, grant.as_ref()).await {
        Ok(body) => body,
        Err(e) => return Ok(error_response(&e, 0.0)),
    };
    let binary_answer = serialization::answers_binary(&parts.method, &route, &parts.headers);
    let parts = Arc::new(parts);
    let route = Arc::new(route);
    let result = serve_within_session_wait(&shared, &parts, &route, body, region).await;
    let settled = super::durable::settle(
        &shared,
        &parts.method,
        &route,
        crate::exchange::request_class::is_query(&parts.headers),
        result.is_ok(),
    )
    .await;
    let result = settled.and(result);
    super::offer_splits::start(&shared);
    let response = match result {
        Ok(reply) if binary_answer => to_response(serialization::encode_reply(reply)),
        Ok(reply) => to_response(reply),
        Err(e) => error_response(&e, crate::protocol::charge::data_error()),
    };
    after_serving(&verdict.reaction, response)
}

/// The route of `path`, or the error its answer carries (404 for a path not served, 400 for a bad
/// segment).
fn routed(path: &str) -> Result<Route, ApiError> {
    route::parse(path).map_err(|e| match e {
        RouteError::NotServed => ApiError::not_found("Server could not parse the Url."),
        RouteError::BadSegment(message) => ApiError::bad_request(message),
    })
}

/// Checks the request's credentials: `None` for the master key (or no auth), a resource token's
/// grant (what its permission covers is decided once the body is read, from what the request
/// will do), or the 401 or 403 to answer.
fn authenticate(
    shared: &Shared,
    parts: &http::request::Parts,
    route: &Route,
) -> Result<Option<Grant>, ApiError> {
    let header = |name: &str| header_text(&parts.headers, name);
    let rid_link = route::rid_signing_link(&route.resource_link);
    let creds = Credentials {
        verb: parts.method.as_str(),
        resource_type: route.resource_type,
        resource_link: &route.resource_link,
        rid_link: rid_link.as_deref(),
        authorization: header(headers::AUTHORIZATION),
        x_ms_date: header(headers::X_MS_DATE),
        http_date: header(headers::DATE),
    };
    match shared.auth.check(&creds, SystemTime::now()) {
        Err(message) => Err(ApiError::new(401, message)),
        Ok(Access::Resource(token)) => handlers::admit_resource_token(shared, &token).map(Some),
        Ok(Access::Full) => Ok(None),
    }
}

/// What a fault rule's reaction does before the request is carried out.
#[derive(Debug)]
enum Before {
    Serve,
    Answer(ApiError),
    Close,
    Stall,
}

/// The step a reaction takes before the handler runs (its delay is already slept).
fn before_serving(reaction: &Reaction) -> Before {
    match *reaction {
        Reaction::Delay(_) | Reaction::ExecuteThenClose | Reaction::ExecuteThenRespond { .. } => {
            Before::Serve
        }
        Reaction::Respond {
            status,
            sub_status,
            retry_after_ms,
            ..
        } => {
            let mut e = ApiError::new(status, format!("Injected by an emulator fault rule (status {status}, sub-status {sub_status})."))
                .with_sub_status(sub_status);
            e.retry_after_ms = retry_after_ms;
            Before::Answer(e)
        }
        Reaction::Close => Before::Close,
        Reaction::Stall => Before::Stall,
    }
}

/// The answer once the request was carried out: a reaction that executes first closes the
/// connection or answers its status instead.
fn after_serving(
    reaction: &Reaction,
    response: Response<Full<Bytes>>,
) -> Result<Response<Full<Bytes>>, CloseConnection> {
    match *reaction {
        Reaction::ExecuteThenClose => Err(CloseConnection),
        Reaction::ExecuteThenRespond { status, sub_status } => {
            let e = ApiError::new(
                status,
                format!("Injected by an emulator fault rule after the request was carried out (status {status}, sub-status {sub_status})."),
            )
            .with_sub_status(sub_status);
            Ok(error_response(&e, 0.0))
        }
        _ => Ok(response),
    }
}

/// The request's body, read (with a timeout) and decoded; then a resource token's authorization
/// from the resolved operation, and the refusal of a write once the data directory has failed.
async fn admitted_body(
    shared: &Shared,
    parts: &http::request::Parts,
    route: &Route,
    body: Incoming,
    region: usize,
    grant: Option<&Grant>,
) -> Result<Bytes, ApiError> {
    let body = read_body(&parts.headers, body, shared.body_read_timeout).await?;
    let body = serialization::request_body(route, body)?;
    if let Some(grant) = grant {
        let ctx = RequestCtx {
            shared,
            method: &parts.method,
            headers: &parts.headers,
            body: body.clone(),
            region,
            now: Instant::now(),
        };
        handlers::authorize_resource_token(&ctx, route, grant)?;
    }
    super::durable::refuse_when_failed(shared, parts, route)?;
    Ok(body)
}

/// Runs the handler (on the blocking pool when the request evaluates queries, conditions or a
/// large body). A read ahead of this region's replica (404/1002) is served again as the replica
/// catches up, within the session wait, as the service's gateway does before it answers 1002.
async fn serve_within_session_wait(
    shared: &Arc<Shared>,
    parts: &Arc<http::request::Parts>,
    route: &Arc<Route>,
    body: Bytes,
    region: usize,
) -> Result<Reply, ApiError> {
    let heavy = evaluates(&parts.method, route, &parts.headers, body.len());
    let started = Instant::now();
    let mut attempt = 0;
    loop {
        let now = Instant::now();
        let serve = {
            let shared = shared.clone();
            let parts = parts.clone();
            let route = route.clone();
            let body = body.clone();
            move || {
                let ctx = RequestCtx {
                    shared: &shared,
                    method: &parts.method,
                    headers: &parts.headers,
                    body,
                    region,
                    now,
                };
                handlers::handle(&ctx, &route)
            }
        };
        let result = if heavy {
            // Off the I/O threads: a slow query or condition delays only its own request. The
            // permit bounds how many run at once; waiting for one holds no thread.
            let _permit = shared.evaluations.acquire().await;
            match tokio::task::spawn_blocking(serve).await {
                Ok(result) => result,
                Err(e) => Err(ApiError::new(
                    500,
                    format!("The request failed while it was served: {e}"),
                )),
            }
        } else {
            serve()
        };
        let behind = matches!(&result, Err(e) if e.status == 404
            && e.sub_status == crate::protocol::sub_status::READ_SESSION_NOT_AVAILABLE);
        attempt += 1;
        match shared.session_wait.next_pause(attempt, started.elapsed()) {
            Some(pause) if behind => tokio::time::sleep(pause).await,
            _ => return result,
        }
    }
}

/// An HTTP/2 request names its host in the `:authority` pseudo-header, which hyper keeps in the
/// URI, not in `Host` (RFC 9113 §8.3.1). Copying it into `Host` lets every check that reads the
/// host (the admin API's) treat both versions alike. A request that sends `Host` keeps its own.
fn host_from_authority(parts: &mut http::request::Parts) {
    if parts.headers.contains_key(http::header::HOST) {
        return;
    }
    let Some(authority) = parts.uri.authority() else {
        return;
    };
    if let Ok(value) = http::HeaderValue::from_str(authority.as_str()) {
        parts.headers.insert(http::header::HOST, value);
    }
}

async fn admin_request(
    shared: &Shared,
    port: Port,
    parts: &http::request::Parts,
    body: Incoming,
) -> Response<Full<Bytes>> {
    if port != Port::Global {
        return error_response(
            &ApiError::not_found("The admin API is served on the global endpoint only."),
            0.0,
        );
    }
    if let Err(e) = shared.admin.check(&parts.method, &parts.headers) {
        return error_response(&e, 0.0);
    }
    let body = match read_body(&parts.headers, body, shared.body_read_timeout).await {
        Ok(b) => b,
        Err(e) => return error_response(&e, 0.0),
    };
    let path = parts.uri.path().trim_end_matches('/');
    if path == "/_emulator/failover" {
        return to_response(handlers::failover(shared, &parts.method, &body));
    }
    if path == handlers::ACCOUNT_ADMIN_PATH {
        return to_response(handlers::account_admin(shared, &parts.method, &body));
    }
    if path == "/_emulator/replication-lag" {
        return to_response(handlers::replication_lag(shared, &parts.method, &body));
    }
    if path == outage_admin::PATH {
        let answer = outage_admin::handle(&parts.method, &body, &shared.outages);
        return to_response(Reply::json(answer.status, Bytes::from(answer.body), 0.0));
    }
    if path == super::operator::STATUS_PATH {
        return to_response(super::operator::status(shared, &parts.method));
    }
    if path == "/_emulator/split" {
        return to_response(handlers::split(shared, &parts.method, &body));
    }
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or(path);
    match admin::handle(
        &parts.method,
        path_and_query,
        &body,
        &shared.faults,
        &shared.counters,
    ) {
        Some(answer) => to_response(Reply::json(answer.status, Bytes::from(answer.body), 0.0)),
        None => error_response(
            &ApiError::not_found(format!("Unknown admin path {path}.")),
            0.0,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::DelaySpec;

    #[test]
    fn a_reaction_decides_what_happens_before_and_after_the_handler() {
        let respond = Reaction::Respond {
            status: 429,
            sub_status: 3200,
            retry_after_ms: Some(50),
            delay: DelaySpec::Fixed { ms: 0.0 },
        };
        let after = Reaction::ExecuteThenRespond {
            status: 503,
            sub_status: 21008,
        };
        let table = [
            (Reaction::Delay(DelaySpec::Fixed { ms: 0.0 }), "serve", 200),
            (respond, "answer 429/3200 retry 50", 200),
            (Reaction::Close, "close", 200),
            (Reaction::Stall, "stall", 200),
            (Reaction::ExecuteThenClose, "serve", 0),
            (after, "serve", 503),
        ];
        for (reaction, before, after_status) in table {
            let seen = match before_serving(&reaction) {
                Before::Serve => "serve".to_owned(),
                Before::Answer(e) => format!(
                    "answer {}/{} retry {}",
                    e.status,
                    e.sub_status,
                    e.retry_after_ms.unwrap_or_default()
                ),
                Before::Close => "close".to_owned(),
                Before::Stall => "stall".to_owned(),
            };
            assert_eq!(seen, before, "{reaction:?}");
            let served = to_response(Reply::json(200, Bytes::from_static(b"{}"), 1.0));
            let status = after_serving(&reaction, served).map_or(0, |r| r.status().as_u16());
            assert_eq!(status, after_status, "{reaction:?}");
        }
    }
}
