//! Why a lane could not answer, with the error under it kept: a [`SourceFailure`] (the lane is
//! degraded) and a [`ReadCodeError`] (lines of a file could not be read). Their text is what the
//! answer says (`degraded` reasons, `knowledge code`'s refusal), made only in `Display`: the
//! text of the error under them when there is one, and that error is their `source()`.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use crate::contract::Code;

/// What a failure says: its own words, or an error under it (whose text it shows).
#[derive(Debug, Clone)]
pub enum Reason {
    /// Said by the source (an answer that is not what the lane asked, a worker that stopped).
    Said(String),
    /// An error under the failure: the store's, the server's, the connection's.
    Error(Arc<dyn Error + Send + Sync>),
}

impl Reason {
    pub fn error(e: impl Error + Send + Sync + 'static) -> Reason {
        Reason::Error(Arc::new(e))
    }

    /// The error under the failure, if any (downcast it to its kind).
    pub fn cause(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        match self {
            Reason::Said(_) => None,
            Reason::Error(e) => Some(e.as_ref()),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Said(s) => f.write_str(s),
            Reason::Error(e) => e.fmt(f),
        }
    }
}

impl From<String> for Reason {
    fn from(s: String) -> Reason {
        Reason::Said(s)
    }
}

impl From<&str> for Reason {
    fn from(s: &str) -> Reason {
        Reason::Said(s.to_string())
    }
}

/// Why a source could not answer; becomes the lane's degradation: `code`, and the reason shown
/// (its `Display`).
#[derive(Debug, Clone)]
pub struct SourceFailure {
    pub code: Code,
    why: Reason,
}

impl SourceFailure {
    /// A failure in the source's own words.
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        SourceFailure {
            code,
            why: Reason::Said(reason.into()),
        }
    }

    /// A failure caused by `e`: its text is the reason, and it is the failure's source.
    pub fn caused(code: Code, e: impl Error + Send + Sync + 'static) -> Self {
        SourceFailure {
            code,
            why: Reason::error(e),
        }
    }

    /// The error under the failure, if any (downcast it to its kind).
    pub fn cause(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        self.why.cause()
    }
}

impl fmt::Display for SourceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.why.fmt(f)
    }
}

impl Error for SourceFailure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.cause().map(|e| e as &(dyn Error + 'static))
    }
}

/// Two failures are the same when they have the same code and say the same.
impl PartialEq for SourceFailure {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.to_string() == other.to_string()
    }
}

/// Why lines could not be read. `NotReadable` is about the path the caller gave (a person can
/// fix it); `NotInSource` says this source does not hold the file (the next one may);
/// `Unavailable` is about the store or server. Each shows its reason, whose error (if any) is
/// its source.
#[derive(Debug)]
pub enum ReadCodeError {
    NotReadable(Reason),
    NotInSource(Reason),
    Unavailable(SourceFailure),
}

impl fmt::Display for ReadCodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadCodeError::NotReadable(why) | ReadCodeError::NotInSource(why) => why.fmt(f),
            ReadCodeError::Unavailable(failure) => failure.fmt(f),
        }
    }
}

impl Error for ReadCodeError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ReadCodeError::NotReadable(why) | ReadCodeError::NotInSource(why) => {
                why.cause().map(|e| e as &(dyn Error + 'static))
            }
            ReadCodeError::Unavailable(failure) => Some(failure),
        }
    }
}

/// Neither the external code source nor the disk could give the lines: the source's failure,
/// and why the disk could not.
#[derive(Debug, thiserror::Error)]
#[error("{external}; and {disk}")]
pub struct NeitherRead {
    #[source]
    pub external: SourceFailure,
    pub disk: Box<ReadCodeError>,
}

/// Both sources of a layered lane failed: the external one's failure, then this machine's.
#[derive(Debug, thiserror::Error)]
#[error("{external}; this machine's index: {local}")]
pub struct BothFailed {
    #[source]
    pub external: SourceFailure,
    pub local: SourceFailure,
}

/// A file asked of a lane that is [`super::Unavailable`]: no index holds it.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {failure}")]
pub struct NotHeld {
    pub path: String,
    #[source]
    pub failure: SourceFailure,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caused_failure_shows_its_cause_and_gives_it_as_its_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let f = SourceFailure::caused(Code::SourceUnavailable, io);
        assert_eq!(f.to_string(), "gone");
        let cause = f.cause().expect("a cause");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert!(Error::source(&f).is_some());
        let said = SourceFailure::new(Code::SourceUnavailable, "gone");
        assert!(said.cause().is_none());
        assert_eq!(f, said);
    }

    #[test]
    fn an_unavailable_read_gives_the_failure_as_its_source() {
        let f = SourceFailure::new(Code::SourceUnavailable, "down");
        let e = ReadCodeError::Unavailable(f.clone());
        assert_eq!(e.to_string(), "down");
        let src = Error::source(&e).expect("a source");
        assert_eq!(src.downcast_ref::<SourceFailure>(), Some(&f));
    }
}
