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
            .map_err(|e| TeamError::Sql(e.to_string()))?;
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
        let mut w = tx.copy_in(&format!("COPY {staging} ({}) FROM STDIN", cols.join(", ")))?;
        w.write_all(self.text.as_bytes())
            .map_err(|e| TeamError::Sql(e.to_string()))?;
        w.finish()?;
        Ok(())
    }
}

/// `t` or `f`, as COPY reads a boolean.
pub(super) fn bool_text(v: Option<i64>) -> &'static str {
    if v.unwrap_or(0) != 0 {
        "t"
    } else {
        "f"
    }
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
    fn a_copy_line_escapes_what_copy_would_misread_and_drops_nul() {
        let mut out = String::new();
        copy_line(&[Some("a\tb\\c\nd\re\0f"), None, Some("")], &mut out);
        assert_eq!(out, "a\\tb\\\\c\\nd\\ref\t\\N\t\n");
    }
}
