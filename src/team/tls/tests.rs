use super::*;

#[test]
fn the_uri_form_loses_only_the_tls_parameters() {
    let (rest, s) = split(
        "postgresql://u:pw@db.example:5433/team?application_name=x&sslmode=verify-full\
         &sslrootcert=%2Fetc%2Fteam%20ca.crt",
    )
    .unwrap();
    assert_eq!(
        rest,
        "postgresql://u:pw@db.example:5433/team?application_name=x"
    );
    assert_eq!(s.mode, SslMode::VerifyFull);
    assert!(matches!(s.root, Some(RootCert::File(p)) if p == Path::new("/etc/team ca.crt")));
}

#[test]
fn the_key_value_form_keeps_quoted_values() {
    let (rest, s) = split("host=db user=u password='a b\\'c' sslmode = require dbname=t").unwrap();
    assert_eq!(s.mode, SslMode::Require);
    let parsed: postgres::Config = rest.parse().unwrap();
    assert_eq!(parsed.get_dbname(), Some("t"));
    assert_eq!(parsed.get_password(), Some(&b"a b'c"[..]));
}

#[test]
fn bad_modes_name_the_field() {
    let e = split("host=db sslmode=verify").unwrap_err();
    assert!(matches!(&e, TlsError::BadMode(m) if m == "verify"), "{e}");
    assert!(e.to_string().contains("sslmode=\"verify\""), "{e}");
    let e = split("postgresql://db/t?sslmode=allow").unwrap_err();
    assert!(matches!(e, TlsError::Allow), "{e}");
    let e = split("host=db sslmode=require sslrootcert=system").unwrap_err();
    assert!(
        matches!(e, TlsError::SystemNeedsVerifyFull(SslMode::Require)),
        "{e}"
    );
}

#[test]
fn verify_without_a_ca_says_where_to_put_one() {
    let (_, mut s) = split("host=db sslmode=verify-full").unwrap();
    s.root = Some(RootCert::File("/nonexistent/ca.crt".into()));
    let e = prepare(&s, false).err().unwrap();
    assert!(
        matches!(
            &e,
            TlsError::RootFile {
                why: RootFileError::Io(_),
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("sslrootcert=/nonexistent/ca.crt"),
        "{e}"
    );
}
