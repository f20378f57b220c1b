//! Why a team URL's TLS settings cannot be used: each refusal a kind of its own, with the error
//! under it kept as its source; the text is made only when it is shown.

use std::path::PathBuf;

use super::SslMode;

/// Why the `sslmode`/`sslrootcert` of a URL (or of `PGSSLMODE`/`PGSSLROOTCERT`) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("sslmode=allow is not supported: use prefer, require or verify-full")]
    Allow,
    #[error("sslmode={0:?} is not one of disable, prefer, require, verify-ca, verify-full")]
    BadMode(String),
    /// The mode came from `PGSSLMODE`: the URL the user looks at has none.
    #[error("PGSSLMODE (the URL has no sslmode): {0}")]
    FromEnv(#[source] Box<TlsError>),
    #[error(
        "sslrootcert=system needs sslmode=verify-full (not {}): any publicly signed \
         certificate passes a CA check alone",
        .0.name()
    )]
    SystemNeedsVerifyFull(SslMode),
    #[error("a '%' in the URL is not followed by two hex digits")]
    BadPercent,
    #[error("the URL decodes to invalid UTF-8")]
    NotUtf8(#[source] std::string::FromUtf8Error),
    #[error("{0:?} in the team URL has no '=' and value")]
    NoValue(String),
    #[error("the value of {0:?} has no closing quote")]
    NoClosingQuote(String),
    #[error(
        "sslmode={} needs the CA certificate that signed the server's: name it with \
         sslrootcert=PATH (or put it at ~/.postgresql/root.crt; sslrootcert=system for \
         a publicly signed server)",
        .0.name()
    )]
    NeedsRoot(SslMode),
    #[error("sslrootcert=system: no CA bundle on this machine (install ca-certificates)")]
    NoSystemBundle,
    #[error("sslrootcert={}: {why}", .path.display())]
    RootFile {
        path: PathBuf,
        #[source]
        why: RootFileError,
    },
    #[error("sslrootcert: {0}")]
    Verifier(#[source] rustls::client::VerifierBuilderError),
    #[error("TLS: {0}")]
    Protocols(#[source] rustls::Error),
}

/// Why the CA file `sslrootcert` names cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RootFileError {
    #[error("{0}")]
    Io(#[source] std::io::Error),
    #[error("is a directory: name the CA certificate file in it")]
    Directory,
    #[error("is not a regular file (a FIFO, socket or device): name a PEM file")]
    NotRegular,
    #[error("is over {} MiB, not a CA certificate file", .0 >> 20)]
    TooLarge(u64),
    #[error("not a PEM certificate ({0})")]
    NotPem(#[source] rustls::pki_types::pem::Error),
    #[error("{0}")]
    Refused(#[source] rustls::Error),
    #[error(
        "holds a private key, not a certificate: give the CA's certificate (the file with \
         BEGIN CERTIFICATE, e.g. root.crt), never a key"
    )]
    PrivateKey,
    #[error("holds no certificate (a PEM file with BEGIN CERTIFICATE)")]
    NoCertificate,
}

/// Why the server refused a connection, as the URL's TLS settings explain it, with the fix.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The server's pg_hba.conf has only `hostssl` lines for this client.
    #[error(
        "{message} ({code}): the server accepts only TLS connections from here (hostssl in \
         pg_hba.conf); use sslmode=verify-full with sslrootcert=CA.crt (or \
         sslmode=require) instead of sslmode={mode}",
        mode = .ssl.name()
    )]
    TlsOnly {
        message: String,
        code: String,
        ssl: SslMode,
    },
    /// `ca`: the CA file the certificate was checked against.
    #[error(
        "the server's certificate is not signed by the CA in {ca} (sslmode={mode}): give \
         the CA certificate that signed it (the server's ssl_cert_file issuer) with \
         sslrootcert=PATH",
        mode = .ssl.name()
    )]
    UnknownIssuer { ca: String, ssl: SslMode },
    #[error(
        "the server's certificate is for {names}, not for host {expected} (sslmode={mode}): \
         connect with a host name the certificate names, or reissue it with this name in its \
         subjectAltName (sslmode=verify-ca checks the CA only)",
        names = .presented.join(", "),
        mode = .ssl.name()
    )]
    OtherNames {
        presented: Vec<String>,
        expected: String,
        ssl: SslMode,
    },
    #[error(
        "the server's certificate is not for the host in the URL (sslmode={mode}): \
         connect with a host name the certificate names, or reissue it with this name in \
         its subjectAltName",
        mode = .ssl.name()
    )]
    NotForHost { ssl: SslMode },
    #[error("the server's certificate has expired: renew the server's ssl_cert_file")]
    Expired,
    #[error("the server's certificate is not valid yet: check this machine's clock")]
    NotValidYet,
    #[error("TLS handshake failed (sslmode={mode}): {error}", mode = .ssl.name())]
    Handshake {
        ssl: SslMode,
        #[source]
        error: rustls::Error,
    },
    /// The server answered the TLS request with no (or with something that is not PostgreSQL).
    #[error(
        "the server does not accept TLS (sslmode={mode}): turn on ssl in its \
         postgresql.conf (docs/TEAM.md) or, on a trusted network only, use sslmode=prefer \
         (any other answer than PostgreSQL's reads the same: check the host and port too)",
        mode = .ssl.name()
    )]
    NoTls { ssl: SslMode },
}
