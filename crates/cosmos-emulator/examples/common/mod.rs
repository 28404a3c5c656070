//! What the examples share: master-key signing and a keep-alive HTTP/1.1 connection.

use std::time::SystemTime;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Signs requests with the master key (`type=master&ver=1.0&sig=...`, URL-encoded).
pub struct Signer {
    key: ring::hmac::Key,
}

impl Signer {
    pub fn new(key_base64: &str) -> Result<Self, String> {
        let key = STANDARD
            .decode(key_base64)
            .map_err(|e| format!("the key is not base64: {e}"))?;
        Ok(Signer {
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
        })
    }

    fn authorization(&self, verb: &str, resource_type: &str, link: &str, date: &str) -> String {
        let payload = format!(
            "{verb}\n{resource_type}\n{link}\n{}\n\n",
            date.to_lowercase()
        );
        let sig = STANDARD.encode(ring::hmac::sign(&self.key, payload.as_bytes()).as_ref());
        format!(
            "type%3Dmaster%26ver%3D1.0%26sig%3D{}",
            sig.replace('+', "%2B")
                .replace('/', "%2F")
                .replace('=', "%3D")
        )
    }
}

pub struct Connection {
    sender: http1::SendRequest<Full<Bytes>>,
    authority: String,
}

impl Connection {
    pub async fn open(endpoint: &str) -> Result<Self, String> {
        let authority = endpoint
            .strip_prefix("http://")
            .ok_or("only http:// endpoints are supported")?
            .trim_end_matches('/')
            .to_owned();
        let stream = TcpStream::connect(&authority)
            .await
            .map_err(|e| format!("connect {authority}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        Ok(Connection { sender, authority })
    }

    /// Sends a signed request and returns the status and body.
    pub async fn send(
        &mut self,
        signer: &Signer,
        method: Method,
        path: &str,
        (resource_type, link): (&str, &str),
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Result<(StatusCode, Bytes), String> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let auth =
            signer.authorization(&method.as_str().to_lowercase(), resource_type, link, &date);
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.authority)
            .header("x-ms-date", &date)
            .header("authorization", auth)
            .header("x-ms-version", "2020-07-15");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| e.to_string())?;
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        Ok((status, body))
    }
}
