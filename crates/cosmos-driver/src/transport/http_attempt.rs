//! One HTTP attempt: the request's headers, its signature, the send, and the raw response.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, USER_AGENT};
use http::uri::{Parts, PathAndQuery};
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use http_body_util::Full;
use tokio::time::Instant;

use super::date::with_request_date;
use super::http_client::{sent, HttpClient, RawResponse, SendFailure};
use crate::auth::{Credential, Signer};
use crate::error::CosmosError;
use crate::protocol::Endpoint;
use crate::protocol::{
    header_names as h, ConsistencyLevel, PriorityLevel, ResourceType, ThroughputBucket,
};

/// The REST API version the driver speaks.
pub const API_VERSION: &str = "2020-07-15";
/// The `User-Agent` the driver sends.
pub const USER_AGENT_VALUE: &str = concat!("cosmos-driver/", env!("CARGO_PKG_VERSION"));

/// The per-attempt headers beyond those every request carries.
#[derive(Debug, Default)]
pub(crate) struct AttemptHeaders<'a> {
    pub partition_key: Option<&'a HeaderValue>,
    pub session_token: Option<HeaderValue>,
    pub consistency: Option<ConsistencyLevel>,
    pub precondition: Option<(HeaderName, HeaderValue)>,
    pub is_upsert: bool,
    pub hub_region_processing_only: bool,
    /// The attempt belongs to a hedge race's alternate leg ([`h::HEDGE_ATTEMPT`]).
    pub hedge_attempt: bool,
    pub prefer_minimal: bool,
    pub priority: Option<PriorityLevel>,
    pub throughput_bucket: Option<ThroughputBucket>,
    pub json_body: bool,
    pub extra: &'a [(HeaderName, HeaderValue)],
}

/// Everything one attempt needs.
#[derive(Debug)]
pub(crate) struct AttemptRequest<'a> {
    pub method: &'a Method,
    pub endpoint: &'a Endpoint,
    pub path: &'a Bytes,
    pub resource_type: ResourceType,
    pub resource_link: &'a str,
    pub body: Option<&'a Bytes>,
    pub headers: AttemptHeaders<'a>,
}

/// Why an attempt produced no response.
#[derive(Debug)]
pub(crate) enum AttemptFailure {
    /// The transport failed (see [`SendFailure`]).
    Send(SendFailure),
    /// The request could not be built or signed; nothing was sent.
    Local(CosmosError),
}

/// Sends attempts for one driver: the pooled client, the credential and the fixed headers.
#[derive(Debug)]
pub(crate) struct Transport {
    client: HttpClient,
    credential: Credential,
    token_scope: String,
    request_timeout: Duration,
    max_response_bytes: usize,
}

const fn verb(method: &Method) -> &'static str {
    match *method {
        Method::GET => "get",
        Method::POST => "post",
        Method::PUT => "put",
        Method::DELETE => "delete",
        Method::PATCH => "patch",
        Method::HEAD => "head",
        _ => "",
    }
}

impl Transport {
    /// A transport over `client` signing with `credential`; Entra ID tokens are requested for
    /// `token_scope` (`https://{account-host}/.default`).
    pub(crate) fn new(
        client: HttpClient,
        credential: Credential,
        token_scope: String,
        request_timeout: Duration,
        max_response_bytes: usize,
    ) -> Self {
        Self {
            client,
            credential,
            token_scope,
            request_timeout,
            max_response_bytes,
        }
    }

    /// The per-attempt timeout.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Signs and sends one attempt; gives up at the earlier of `deadline` and `timeout` from now
    /// (the request timeout, or the shorter one of a read attempt). Signing with a token credential
    /// may fetch a token: that is bounded by the same time.
    pub(crate) async fn send(
        &self,
        req: &AttemptRequest<'_>,
        deadline: Option<Instant>,
        timeout: Duration,
    ) -> Result<RawResponse, AttemptFailure> {
        let attempt_deadline = {
            let by_timeout = Instant::now() + timeout;
            deadline.map_or(by_timeout, |d| d.min(by_timeout))
        };
        let request = if !matches!(self.credential.signer(), Signer::Token) {
            // A master key or resource tokens sign at once.
            self.build(req).await
        } else {
            // Boxed (token credentials only): keeps the send future, which every attempt holds,
            // small.
            Box::pin(tokio::time::timeout_at(attempt_deadline, self.build(req)))
                .await
                .map_err(|_| AttemptFailure::Send(SendFailure::TimedOut))?
        }
        .map_err(AttemptFailure::Local)?;
        // The request is handed to the client at once; only what is in flight is kept.
        sent(
            self.client
                .send(request, attempt_deadline, self.max_response_bytes)
                .await,
        )
        .map_err(AttemptFailure::Send)
    }

    /// The signed HTTP request of one attempt (a master key signs at once; a token credential may
    /// have to fetch a token).
    async fn build(&self, req: &AttemptRequest<'_>) -> Result<Request<Full<Bytes>>, CosmosError> {
        let (date, authorization) = match self.credential.signer() {
            Signer::MasterKey(key) => with_request_date(|date, lower| {
                let auth = key.authorization(
                    verb(req.method),
                    req.resource_type.as_path_segment(),
                    req.resource_link,
                    lower,
                );
                (date.clone(), auth)
            }),
            Signer::ResourceTokens(tokens) => (
                with_request_date(|date, _| date.clone()),
                tokens.authorization(req.resource_link)?,
            ),
            Signer::Token => {
                let date = with_request_date(|date, _| date.clone());
                let auth = self.credential.token_authorization(&self.token_scope).await;
                (
                    date,
                    auth.unwrap_or_else(|| {
                        Err(CosmosError::invalid_input("the credential cannot sign"))
                    })?,
                )
            }
        };
        let mut parts = Parts::default();
        parts.scheme = Some(req.endpoint.scheme().clone());
        parts.authority = Some(req.endpoint.authority().clone());
        parts.path_and_query = Some(PathAndQuery::from_maybe_shared(req.path.clone()).map_err(
            |e| CosmosError::invalid_input(format!("the request path is not valid: {e}")),
        )?);
        let uri = Uri::from_parts(parts).map_err(|e| {
            CosmosError::invalid_input(format!("the request URI is not valid: {e}"))
        })?;

        let body = req.body.cloned().unwrap_or_default();
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = req.method.clone();
        *request.uri_mut() = uri;
        let map = request.headers_mut();
        map.reserve(13 + usize::from(req.headers.hedge_attempt) + req.headers.extra.len());
        // Set here (precomputed per endpoint) so that hyper does not format it for every request.
        map.insert(http::header::HOST, req.endpoint.host_header().clone());
        map.insert(h::VERSION, HeaderValue::from_static(API_VERSION));
        map.insert(h::DATE, date);
        map.insert(http::header::AUTHORIZATION, authorization);
        map.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        map.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let extra = &req.headers;
        if extra.json_body {
            map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if let Some(pk) = extra.partition_key {
            map.insert(h::PARTITION_KEY, pk.clone());
        }
        if let Some(token) = &extra.session_token {
            map.insert(h::SESSION_TOKEN, token.clone());
        }
        if let Some(level) = extra.consistency {
            map.insert(h::CONSISTENCY_LEVEL, level.header_value());
        }
        if let Some((name, value)) = &extra.precondition {
            map.insert(name.clone(), value.clone());
        }
        if extra.is_upsert {
            map.insert(h::IS_UPSERT, HeaderValue::from_static("True"));
        }
        if extra.hub_region_processing_only {
            map.insert(
                h::HUB_REGION_PROCESSING_ONLY,
                HeaderValue::from_static("True"),
            );
        }
        if extra.hedge_attempt {
            map.insert(h::HEDGE_ATTEMPT, HeaderValue::from_static("1"));
        }
        if extra.prefer_minimal {
            map.insert(h::PREFER, HeaderValue::from_static("return=minimal"));
        }
        if let Some(level) = extra.priority {
            map.insert(h::PRIORITY_LEVEL, level.header_value());
        }
        if let Some(bucket) = extra.throughput_bucket {
            map.insert(h::THROUGHPUT_BUCKET, bucket.header_value());
        }
        for (name, value) in extra.extra {
            map.insert(name.clone(), value.clone());
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn builds_signed_requests_with_the_protocol_headers() {
        let client = HttpClient::new(
            64,
            std::time::Duration::from_secs(90),
            std::time::Duration::from_secs(10),
            false,
            false,
            None,
        )
        .unwrap();
        let cred = Credential::master_key("C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==").unwrap();
        let t = Transport::new(
            client,
            cred,
            "https://localhost/.default".into(),
            Duration::from_secs(5),
            1 << 20,
        );
        let endpoint = Endpoint::parse("http://127.0.0.1:9/", false).unwrap();
        let path = Bytes::from_static(b"/dbs/db/colls/c/docs/a%20b");
        let pk = HeaderValue::from_static("[\"p\"]");
        let body = Bytes::from_static(b"{}");
        let req = AttemptRequest {
            method: &Method::PUT,
            endpoint: &endpoint,
            path: &path,
            resource_type: ResourceType::Document,
            resource_link: "dbs/db/colls/c/docs/a b",
            body: Some(&body),
            headers: AttemptHeaders {
                partition_key: Some(&pk),
                session_token: Some(HeaderValue::from_static("0:-1#5")),
                consistency: Some(ConsistencyLevel::Session),
                precondition: Some((http::header::IF_MATCH, HeaderValue::from_static("\"e\""))),
                hub_region_processing_only: true,
                json_body: true,
                ..Default::default()
            },
        };
        let built = t.build(&req).await.unwrap();
        assert_eq!(
            built.uri().to_string(),
            "http://127.0.0.1:9/dbs/db/colls/c/docs/a%20b"
        );
        let hs = built.headers();
        assert_eq!(hs[&h::VERSION], API_VERSION);
        assert!(hs[http::header::AUTHORIZATION]
            .to_str()
            .unwrap()
            .starts_with("type%3Dmaster%26ver%3D1.0%26sig%3D"));
        assert!(httpdate::parse_http_date(hs[&h::DATE].to_str().unwrap()).is_ok());
        assert_eq!(hs[&h::PARTITION_KEY], "[\"p\"]");
        assert_eq!(hs[&h::SESSION_TOKEN], "0:-1#5");
        assert_eq!(hs[&h::CONSISTENCY_LEVEL], "Session");
        assert_eq!(hs[http::header::IF_MATCH], "\"e\"");
        assert_eq!(hs[&h::HUB_REGION_PROCESSING_ONLY], "True");
        assert_eq!(hs[CONTENT_TYPE], "application/json");
        assert!(hs[USER_AGENT]
            .to_str()
            .unwrap()
            .starts_with("cosmos-driver/"));
        assert!(!hs.contains_key(&h::IS_UPSERT));
        assert!(
            !hs.contains_key(&h::HEDGE_ATTEMPT),
            "only an alternate leg's attempts are marked"
        );

        let hedged = AttemptRequest {
            headers: AttemptHeaders {
                hedge_attempt: true,
                ..Default::default()
            },
            ..req
        };
        let built = t.build(&hedged).await.unwrap();
        assert_eq!(built.headers()[&h::HEDGE_ATTEMPT], "1");
    }
}
