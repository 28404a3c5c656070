//! Why a request got no answer, in words a person can act on: refused, DNS, TLS, timed out, an
//! answer that is not HTTP. The causes are read off the error chain once; the reason is a pure
//! function of them.

use std::error::Error;
use std::io;

/// One link of an error chain, as the reason needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    /// The I/O error kind, when the link is an I/O error.
    pub io_kind: Option<io::ErrorKind>,
    /// Whether the link is (or wraps) a TLS error.
    pub tls: bool,
    /// The link's own message.
    pub text: String,
}

/// At most this many links are read.
const MAX_LINKS: usize = 8;

/// The links of `e`'s chain, outermost first.
pub(crate) fn causes(e: &(dyn Error + 'static)) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut next = Some(e);
    while let Some(link) = next {
        let as_io = link.downcast_ref::<io::Error>();
        let tls = link.is::<rustls::Error>()
            || as_io
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<rustls::Error>());
        out.push(Cause {
            io_kind: as_io.map(io::Error::kind),
            tls,
            text: link.to_string(),
        });
        if out.len() == MAX_LINKS {
            break;
        }
        next = link.source();
    }
    out
}

/// What went wrong, when the chain says it plainly.
pub(crate) fn reason(causes: &[Cause]) -> Option<&'static str> {
    let any_text = |needle: &str| {
        causes
            .iter()
            .any(|c| c.text.to_ascii_lowercase().contains(needle))
    };
    let any_kind = |kind: io::ErrorKind| causes.iter().any(|c| c.io_kind == Some(kind));
    if any_text("invalidcontenttype") || any_text("corrupt message") {
        return Some(
            "the TLS handshake failed: the server does not speak TLS (is the endpoint plain http://?)",
        );
    }
    if any_text("unknownissuer") || any_text("invalid peer certificate") {
        return Some(
            "the server's TLS certificate is not trusted (a self-signed one, such as an \
             emulator's, must be added with DriverOptions::with_extra_trusted_cert_pem)",
        );
    }
    if causes.iter().any(|c| c.tls) || any_text("tls handshake") {
        return Some("the TLS handshake failed");
    }
    if any_text("dns error") || any_text("failed to lookup address") {
        return Some("the host name did not resolve (DNS)");
    }
    if any_kind(io::ErrorKind::ConnectionRefused) || any_text("connection refused") {
        return Some("the connection was refused: nothing listens at that address and port");
    }
    if any_kind(io::ErrorKind::TimedOut) || any_text("timed out") {
        return Some("connecting timed out");
    }
    if any_text("invalid http version")
        || any_text("invalid http status")
        || any_text("invalid http header")
        || any_text("http2 error")
        || any_text("frame with invalid size")
    {
        return Some(
            "the server's answer is not the HTTP the driver speaks (an https:// endpoint given \
             as http://, or not a Cosmos DB endpoint?)",
        );
    }
    if any_kind(io::ErrorKind::ConnectionReset) || any_text("connection reset") {
        return Some("the server reset the connection");
    }
    None
}

/// The chain's messages joined, without repeating a message its outer link already ends with.
pub(crate) fn chain_text(causes: &[Cause]) -> String {
    let mut text = String::new();
    for c in causes {
        if text.is_empty() {
            text.push_str(&c.text);
        } else if !text.ends_with(&c.text) {
            text.push_str(": ");
            text.push_str(&c.text);
        }
    }
    text
}

/// The reason, when there is one, then the chain: `the connection was refused: ...: client
/// error (Connect): tcp connect error: Connection refused (os error 111)`.
pub(crate) fn explain(e: &(dyn Error + 'static)) -> String {
    let links = causes(e);
    match reason(&links) {
        Some(why) => format!("{why} ({})", chain_text(&links)),
        None => chain_text(&links),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(text: &str) -> Cause {
        Cause {
            io_kind: None,
            tls: false,
            text: text.into(),
        }
    }

    fn io(kind: io::ErrorKind, text: &str) -> Cause {
        Cause {
            io_kind: Some(kind),
            ..link(text)
        }
    }

    #[test]
    fn reasons_from_chains() {
        let refused = vec![
            link("client error (Connect)"),
            io(
                io::ErrorKind::ConnectionRefused,
                "tcp connect error: Connection refused (os error 111)",
            ),
        ];
        let dns = vec![
            link("client error (Connect)"),
            link("dns error"),
            io(
                io::ErrorKind::Other,
                "failed to lookup address information: Name or service not known",
            ),
        ];
        let untrusted = vec![
            link("client error (Connect)"),
            Cause {
                tls: true,
                ..io(
                    io::ErrorKind::InvalidData,
                    "invalid peer certificate: UnknownIssuer",
                )
            },
        ];
        let plain_http = vec![
            link("client error (Connect)"),
            io(
                io::ErrorKind::InvalidData,
                "received corrupt message of type InvalidContentType",
            ),
        ];
        let other_tls = vec![Cause {
            tls: true,
            ..link("peer is incompatible: NoCipherSuitesInCommon")
        }];
        let timed_out = vec![
            link("client error (Connect)"),
            io(io::ErrorKind::TimedOut, "connection timed out"),
        ];
        let not_http = vec![
            link("client error (SendRequest)"),
            link("invalid HTTP version parsed"),
        ];
        let reset = vec![io(
            io::ErrorKind::ConnectionReset,
            "Connection reset by peer (os error 104)",
        )];
        let unknown = vec![link("something else")];
        let table: Vec<(&Vec<Cause>, Option<&str>)> = vec![
            (&refused, Some("the connection was refused: nothing listens at that address and port")),
            (&dns, Some("the host name did not resolve (DNS)")),
            (&untrusted, Some("the server's TLS certificate is not trusted (a self-signed one, such as an emulator's, must be added with DriverOptions::with_extra_trusted_cert_pem)")),
            (&plain_http, Some("the TLS handshake failed: the server does not speak TLS (is the endpoint plain http://?)")),
            (&other_tls, Some("the TLS handshake failed")),
            (&timed_out, Some("connecting timed out")),
            (&not_http, Some("the server's answer is not the HTTP the driver speaks (an https:// endpoint given as http://, or not a Cosmos DB endpoint?)")),
            (&reset, Some("the server reset the connection")),
            (&unknown, None),
        ];
        for (chain, want) in table {
            assert_eq!(reason(chain), want, "{chain:?}");
        }
    }

    #[test]
    fn chain_text_skips_repeats() {
        let chain = vec![
            link("client error (Connect): tcp connect error"),
            link("tcp connect error"),
            link("Connection refused (os error 111)"),
        ];
        assert_eq!(
            chain_text(&chain),
            "client error (Connect): tcp connect error: Connection refused (os error 111)"
        );
    }

    #[test]
    fn causes_walk_an_io_chain() {
        let e = io::Error::new(io::ErrorKind::ConnectionRefused, "refused here");
        let links = causes(&e);
        assert_eq!(links[0].io_kind, Some(io::ErrorKind::ConnectionRefused));
        assert!(explain(&e).starts_with("the connection was refused"));
    }
}
