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
