//! TLS to the team server with libpq's `sslmode` semantics, so a URL that works with `psql`
//! works here: `disable`, `prefer` (the default: encrypted when the server offers it, the
//! certificate unchecked), `require` (encrypted; the certificate checked against a root CA only
//! when one is given, as libpq does), `verify-ca` (signed by the CA in `sslrootcert`) and
//! `verify-full` (that, and issued for the host name in the URL). `tokio-postgres` knows only the
//! first three and no `sslrootcert`, so both are taken out of the URL here (`PGSSLMODE` and
//! `PGSSLROOTCERT` when the URL does not say) before the rest is parsed.
//!
//! rustls on ring: it builds with the C compiler the bundled SQLite already needs (no OpenSSL
//! headers, no cmake). A failed handshake is explained by its cause and how to fix it, never
//! with the URL's password (errors name the URL through [`super::TeamUrl`]'s shown form).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

mod error;
pub use error::{Refusal, RootFileError, TlsError};

/// libpq's `sslmode` values this client implements (`allow`, plain first, is refused: nobody
/// wants a plain connection that only falls back to TLS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, TlsError> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => return Err(TlsError::Allow),
            other => return Err(TlsError::BadMode(other.to_string())),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the trusted CA certificates come from.
#[derive(Clone, Debug)]
enum RootCert {
    File(PathBuf),
    /// `sslrootcert=system`: the operating system's CA bundle (a publicly signed server).
    System,
}

/// A URL's TLS settings, taken out of it by [`split`].
#[derive(Clone, Debug)]
pub struct TlsSettings {
    pub mode: SslMode,
    root: Option<RootCert>,
}

/// What a connection does about TLS, decided once per URL.
#[derive(Clone)]
pub struct Tls {
    pub mode: SslMode,
    /// The rustls configuration; `None` for a plain connection.
    pub config: Option<Arc<ClientConfig>>,
    /// The CA the certificate is checked against, for errors (`None`: not checked).
    pub checked_against: Option<String>,
}

/// `url` without its `sslmode` and `sslrootcert` (the text `postgres::Config` parses), and those
/// settings (from the environment where the URL has none).
pub fn split(url: &str) -> Result<(String, TlsSettings), TlsError> {
    let (rest, mode, root) = if let Some(scheme_end) = uri_scheme_end(url) {
        split_uri(url, scheme_end)?
    } else {
        split_key_values(url)?
    };
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    // A bad value from the environment is named as such: the URL the user looks at has none.
    let from_env = mode.is_none();
    let mode = mode.or_else(|| env("PGSSLMODE"));
    let root = root
        .or_else(|| env("PGSSLROOTCERT"))
        .map(|r| match r.as_str() {
            "system" => RootCert::System,
            _ => RootCert::File(PathBuf::from(r)),
        });
    let mode = match (mode, &root) {
        (Some(m), _) => SslMode::parse(&m).map_err(|e| match from_env {
            true => TlsError::FromEnv(Box::new(e)),
            false => e,
        })?,
        // libpq: the system roots are only worth the host-name check.
        (None, Some(RootCert::System)) => SslMode::VerifyFull,
        (None, _) => SslMode::Prefer,
    };
    if matches!(root, Some(RootCert::System)) && mode != SslMode::VerifyFull {
        return Err(TlsError::SystemNeedsVerifyFull(mode));
    }
    Ok((rest, TlsSettings { mode, root }))
}

fn uri_scheme_end(url: &str) -> Option<usize> {
    ["postgresql://", "postgres://"]
        .iter()
        .find(|p| url.starts_with(*p))
        .map(|p| p.len())
}

type Split = (String, Option<String>, Option<String>);

fn split_uri(url: &str, scheme_end: usize) -> Result<Split, TlsError> {
    // A `?` in the password is the password's, as libpq reads it: the query starts after the
    // credentials (which end at an `@` before the first `/`).
    let after = &url[scheme_end..];
    let creds_end = match (after.find('@'), after.find('/')) {
        (Some(at), slash) if slash.is_none_or(|s| at < s) => scheme_end + at + 1,
        _ => scheme_end,
    };
    let Some(q) = url[creds_end..].find('?').map(|q| creds_end + q) else {
        return Ok((url.to_string(), None, None));
    };
    let (base, query) = (&url[..q], &url[q + 1..]);
    let (mut mode, mut root) = (None, None);
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match percent_decode(k)?.as_str() {
            "sslmode" => mode = Some(percent_decode(v)?),
            "sslrootcert" => root = Some(percent_decode(v)?),
            _ => kept.push(part),
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, mode, root))
}

fn percent_decode(s: &str) -> Result<String, TlsError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(TlsError::BadPercent)?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(TlsError::NotUtf8)
}

/// libpq's `key=value` form (values optionally in single quotes, `\` escaping), rebuilt with
/// every value quoted so the parser after us reads exactly the values read here.
fn split_key_values(s: &str) -> Result<Split, TlsError> {
    let (mut mode, mut root) = (None, None);
    let mut kept = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(TlsError::NoValue(key));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(TlsError::NoClosingQuote(key)),
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        match key.as_str() {
            "sslmode" => mode = Some(value),
            "sslrootcert" => root = Some(value),
            _ => {
                let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
                kept.push(format!("{key}='{quoted}'"));
            }
        }
    }
    Ok((kept.join(" "), mode, root))
}

/// The TLS of a connection to hosts that are only unix sockets (`unix_only`: libpq never
/// encrypts those, whatever the mode) or TCP ones.
pub fn prepare(settings: &TlsSettings, unix_only: bool) -> Result<Tls, TlsError> {
    let mode = settings.mode;
    if mode == SslMode::Disable || unix_only {
        return Ok(Tls {
            mode,
            config: None,
            checked_against: None,
        });
    }
    let root = match (&settings.root, mode) {
        (Some(r), _) => Some(r.clone()),
        // libpq's default root file; with `require` it is used only if it exists.
        (None, SslMode::Prefer) => None,
        (None, _) => default_root()
            .filter(|p| mode != SslMode::Require || p.exists())
            .map(RootCert::File),
    };
    let check = match (mode, &root) {
        (SslMode::Disable | SslMode::Prefer, _) | (SslMode::Require, None) => Check::Nothing,
        (SslMode::Require | SslMode::VerifyCa, Some(_)) => Check::Ca,
        (SslMode::VerifyFull, Some(_)) => Check::Full,
        (_, None) => return Err(TlsError::NeedsRoot(mode)),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match (&check, &root) {
        (Check::Nothing, _) | (_, None) => Arc::new(Unchecked(provider.clone())),
        (check, Some(root)) => {
            let roots = Arc::new(load_roots(root)?);
            let inner = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(TlsError::Verifier)?;
            match check {
                Check::Ca => Arc::new(CaOnly(inner)),
                _ => inner,
            }
        }
    };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Protocols)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    // PostgreSQL 17's direct TLS (`sslnegotiation=direct`) requires it; older servers ignore it.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(Tls {
        mode,
        config: Some(Arc::new(config)),
        checked_against: match (check, root) {
            (Check::Nothing, _) | (_, None) => None,
            (_, Some(RootCert::System)) => Some("the system's CA bundle".to_string()),
            (_, Some(RootCert::File(p))) => Some(p.display().to_string()),
        },
    })
}

enum Check {
    Nothing,
    Ca,
    Full,
}

fn default_root() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(Path::new(&home).join(".postgresql").join("root.crt"))
}

/// Where Linux distributions keep the system CA bundle (`SSL_CERT_FILE` first, as OpenSSL).
const SYSTEM_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

fn load_roots(root: &RootCert) -> Result<RootCertStore, TlsError> {
    let path = match root {
        RootCert::File(p) => p.clone(),
        RootCert::System => std::env::var_os("SSL_CERT_FILE")
            .map(PathBuf::from)
            .into_iter()
            .chain(SYSTEM_BUNDLES.iter().map(PathBuf::from))
            .find(|p| p.exists())
            .ok_or(TlsError::NoSystemBundle)?,
    };
    read_roots(&path).map_err(|why| TlsError::RootFile { path, why })
}

/// The certificates of the CA file at `path`.
fn read_roots(path: &Path) -> Result<RootCertStore, RootFileError> {
    let pem = read_bounded(path)?;
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        store
            .add(cert.map_err(RootFileError::NotPem)?)
            .map_err(RootFileError::Refused)?;
    }
    if store.is_empty() && pem.windows(11).any(|w| w == b"PRIVATE KEY") {
        return Err(RootFileError::PrivateKey);
    }
    if store.is_empty() {
        return Err(RootFileError::NoCertificate);
    }
    Ok(store)
}

/// The largest CA file read: the biggest system bundles are well under a megabyte.
const MAX_ROOT_FILE: u64 = 16 << 20;

/// A CA file's bytes, refusing before opening anything that is not a regular file (opening a
/// FIFO blocks until a writer comes; `/dev/zero` never ends) or is too large to be a CA bundle.
fn read_bounded(path: &Path) -> Result<Vec<u8>, RootFileError> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(RootFileError::Io)?;
    if meta.is_dir() {
        return Err(RootFileError::Directory);
    }
    if !meta.is_file() {
        return Err(RootFileError::NotRegular);
    }
    if meta.len() > MAX_ROOT_FILE {
        return Err(RootFileError::TooLarge(MAX_ROOT_FILE));
    }
    let mut pem = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_ROOT_FILE + 1).read_to_end(&mut pem))
        .map_err(RootFileError::Io)?;
    if pem.len() as u64 > MAX_ROOT_FILE {
        return Err(RootFileError::TooLarge(MAX_ROOT_FILE));
    }
    Ok(pem)
}

/// `prefer` and `require` without a root CA: encrypted, the server unauthenticated (libpq's
/// meaning), the handshake's signatures still checked so the session keys are the server's.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl Unchecked {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

/// `verify-ca`: the chain must end at the given CA; the host name is not compared (webpki checks
/// the chain before the name, so a name mismatch means the chain passed).
#[derive(Debug)]
struct CaOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A connection error's TLS cause, with the fix; `None` when it is not about TLS.
pub fn explain(e: &postgres::Error, tls: &Tls) -> Option<Refusal> {
    let ssl = tls.mode;
    if let Some(db) = e.as_db_error() {
        // The server's pg_hba.conf has only `hostssl` lines for this client.
        if db.code().code() == "28000" && db.message().contains("no encryption") {
            return Some(Refusal::TlsOnly {
                message: db.message().to_string(),
                code: db.code().code().to_string(),
                ssl,
            });
        }
        return None;
    }
    if let Some(r) = rustls_error(e) {
        return Some(match r {
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                let ca = tls.checked_against.as_deref().unwrap_or("sslrootcert");
                Refusal::UnknownIssuer {
                    ca: ca.to_string(),
                    ssl,
                }
            }
            rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                expected,
                presented,
            }) => Refusal::OtherNames {
                presented: presented.iter().map(|p| bare_name(p).to_string()).collect(),
                expected: expected.to_str().to_string(),
                ssl,
            },
            rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
                Refusal::NotForHost { ssl }
            }
            rustls::Error::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. },
            ) => Refusal::Expired,
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
            ) => Refusal::NotValidYet,
            other => Refusal::Handshake {
                ssl,
                error: other.clone(),
            },
        });
    }
    if super::describe(e).contains("server does not support TLS") {
        return Some(Refusal::NoTls { ssl });
    }
    None
}

/// A presented name as rustls prints it (`DnsName("db.example")`, `IpAddress(10.0.0.5)`), bare.
fn bare_name(p: &str) -> &str {
    match (p.find('('), p.rfind(')')) {
        (Some(a), Some(b)) if a < b => p[a + 1..b].trim_matches('"'),
        _ => p,
    }
}

fn rustls_error(e: &postgres::Error) -> Option<&rustls::Error> {
    let mut cur = std::error::Error::source(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if let Some(r) = inner.downcast_ref::<rustls::Error>() {
                return Some(r);
            }
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests;
