//! Rows into the team index through `COPY … FROM STDIN` (text format). COPY refuses a table
//! under row-level security, so the rows land in a temporary staging table (dropped at commit)
//! and move with one `INSERT … SELECT`, which the policies check.

use std::io::Write;

use crate::team::TeamError;

/// A COPY into one staging table, row by row.
pub(super) struct Staged<'t> {
    w: postgres::CopyInWriter<'t>,
    line: String,
    pub rows: u64,
}

impl<'t> Staged<'t> {
    /// Create the staging table `staging` (`create`: the rest of its `CREATE TEMP TABLE`,
    /// e.g. `(LIKE kn_event)`; it is dropped at commit) and start copying `cols` into it.
    pub fn start(
        tx: &'t mut postgres::Transaction<'_>,
        staging: &str,
        create: &str,
        cols: &[&str],
    ) -> Result<Staged<'t>, TeamError> {
        tx.batch_execute(&format!("CREATE TEMP TABLE {staging} {create}"))?;
        let w = tx.copy_in(&format!("COPY {staging} ({}) FROM STDIN", cols.join(", ")))?;
        Ok(Staged {
            w,
            line: String::with_capacity(4096),
            rows: 0,
        })
    }

    /// One row, a value per column (`None`: NULL).
    pub fn row(&mut self, cols: &[Option<&str>]) -> Result<(), TeamError> {
        self.line.clear();
        copy_line(cols, &mut self.line);
        self.w
            .write_all(self.line.as_bytes())
            .map_err(TeamError::Copy)?;
        self.rows += 1;
        Ok(())
    }

    /// End the COPY; returns the rows copied.
    pub fn finish(self) -> Result<u64, TeamError> {
        self.w.finish()?;
        Ok(self.rows)
    }
}

/// Rows in COPY's text format, made before a transaction needs them (the episodes push makes
/// the next batch's rows while the server inserts the last one's).
#[derive(Default)]
pub(super) struct Rows {
    text: String,
    pub count: u64,
}

impl Rows {
    /// One row, a value per column (`None`: NULL).
    pub fn row(&mut self, cols: &[Option<&str>]) {
        copy_line(cols, &mut self.text);
        self.count += 1;
    }

    /// COPY the rows into `staging` (a temporary table made by the caller).
    pub fn copy(
        &self,
        tx: &mut postgres::Transaction<'_>,
        staging: &str,
        cols: &[&str],
    ) -> Result<(), TeamError> {
        if self.count == 0 {
            return Ok(());
        }
        copy_in(
            tx,
            &format!("COPY {staging} ({}) FROM STDIN", cols.join(", ")),
            &[self.text.as_bytes()],
        )
    }
}

/// Rows in COPY's binary format (the events: their `tsvector` goes as `tsvectorrecv` reads it,
/// so the server parses no text), made before a transaction needs them like [`Rows`].
#[derive(Default)]
pub(super) struct BinRows {
    data: Vec<u8>,
    pub count: u64,
}

/// The signature, flags and header extension of a binary COPY.
const BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// One value of a binary row.
pub(super) enum Bin<'a> {
    Null,
    /// Text (PostgreSQL text cannot hold NUL: it is dropped).
    Text(&'a str),
    Int(i64),
    Bool(bool),
    /// A value already in its type's binary form (a `tsvector` from `tsv::binary`).
    Raw(&'a [u8]),
}

impl BinRows {
    /// One row, a value per column.
    pub fn row(&mut self, cols: &[Bin<'_>]) {
        if self.data.is_empty() {
            self.data.extend_from_slice(BINARY_HEADER);
        }
        self.data
            .extend_from_slice(&(cols.len() as i16).to_be_bytes());
        for c in cols {
            match c {
                Bin::Null => self.data.extend_from_slice(&(-1i32).to_be_bytes()),
                Bin::Text(t) if t.contains('\0') => self.field(t.replace('\0', "").as_bytes()),
                Bin::Text(t) => self.field(t.as_bytes()),
                Bin::Int(v) => self.field(&v.to_be_bytes()),
                Bin::Bool(b) => self.field(&[u8::from(*b)]),
                Bin::Raw(bytes) => self.field(bytes),
            }
        }
        self.count += 1;
    }

    fn field(&mut self, bytes: &[u8]) {
        self.data
            .extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        self.data.extend_from_slice(bytes);
    }

    /// COPY the rows into `table` (a staging table, or the table itself where no row-level
    /// policy applies to the role).
    pub fn copy(
        &self,
        tx: &mut postgres::Transaction<'_>,
        table: &str,
        cols: &[&str],
    ) -> Result<(), TeamError> {
        if self.count == 0 {
            return Ok(());
        }
        let sql = format!(
            "COPY {table} ({}) FROM STDIN (FORMAT binary)",
            cols.join(", ")
        );
        // The binary format ends with a field count of -1.
        copy_in(tx, &sql, &[&self.data, &(-1i16).to_be_bytes()])
    }
}

/// Runs one `COPY … FROM STDIN` statement, sending `parts` in order as its data.
fn copy_in(
    tx: &mut postgres::Transaction<'_>,
    sql: &str,
    parts: &[&[u8]],
) -> Result<(), TeamError> {
    let mut w = tx.copy_in(sql)?;
    for part in parts {
        w.write_all(part).map_err(TeamError::Copy)?;
    }
    w.finish()?;
    Ok(())
}

/// One row of COPY's text format: tab-separated, `\N` for NULL, escapes for the rest
/// (PostgreSQL text cannot hold NUL: it is dropped).
fn copy_line(cols: &[Option<&str>], out: &mut String) {
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        match c {
            None => out.push_str("\\N"),
            Some(v) => {
                for ch in v.chars() {
                    match ch {
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        '\0' => {}
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_row_is_counted_fields_with_lengths_and_drops_nul_from_text() {
        let mut rows = BinRows::default();
        rows.row(&[Bin::Text("a\0b"), Bin::Null, Bin::Int(7), Bin::Bool(true)]);
        let mut want = BINARY_HEADER.to_vec();
        want.extend_from_slice(&4i16.to_be_bytes());
        want.extend_from_slice(&2i32.to_be_bytes());
        want.extend_from_slice(b"ab");
        want.extend_from_slice(&(-1i32).to_be_bytes());
        want.extend_from_slice(&8i32.to_be_bytes());
        want.extend_from_slice(&7i64.to_be_bytes());
        want.extend_from_slice(&1i32.to_be_bytes());
        want.push(1);
        assert_eq!(rows.data, want);
        assert_eq!((rows.count, BINARY_HEADER.len()), (1, 19));
    }

    #[test]
    fn a_copy_line_escapes_what_copy_would_misread_and_drops_nul() {
        let mut out = String::new();
        copy_line(&[Some("a\tb\\c\nd\re\0f"), None, Some("")], &mut out);
        assert_eq!(out, "a\\tb\\\\c\\nd\\ref\t\\N\t\n");
    }
}
