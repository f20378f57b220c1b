//! `kbm25`: FTS5's `bm25` ranking with the phrases' document counts passed in by the caller.
//!
//! FTS5's own `bm25` learns how many rows hold each phrase by running the phrase as a query of
//! its own and counting every row (`xQueryPhrase`), once per statement: at 2,000 sessions that
//! walk was a fifth of a one-shot search, and the bounded expression ([`super`]) has already
//! counted the same terms' documents. `kbm25(table, counts, weights…)` takes those counts as a
//! blob ([`counts_blob`], one little-endian `i64` per phrase, in the expression's phrase order)
//! and otherwise computes what `bm25(table, weights…)` computes, in the same floating-point
//! steps, so a ranking and its scores are the same. When the blob is NULL or does not hold one
//! count per phrase, the counts are taken the way `bm25` takes them.

use std::os::raw::{c_int, c_void};
use std::ptr;

use rusqlite::ffi::{self, Fts5Context, Fts5ExtensionApi};
use rusqlite::Connection;

/// The name the function is called by in SQL.
pub const NAME: &str = "kbm25";

/// The counts argument for `kbm25`: one document count per phrase, in phrase order.
pub fn counts_blob(counts: &[u64]) -> Vec<u8> {
    counts
        .iter()
        .flat_map(|n| (*n.min(&(i64::MAX as u64)) as i64).to_le_bytes())
        .collect()
}

/// Add `kbm25` to this connection's FTS5 (a connection without FTS5 is left as it is).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is this open connection's; the statement is finalized before return,
    // and the API pointer FTS5 hands out lives as long as the connection.
    unsafe {
        let db = conn.handle();
        let api = fts5_api(db)?;
        if api.is_null() {
            return Ok(());
        }
        let Some(create) = (*api).xCreateFunction else {
            return Ok(());
        };
        let rc = create(api, c"kbm25".as_ptr(), ptr::null_mut(), Some(kbm25), None);
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
    }
    Ok(())
}

/// FTS5's API object of `db` (`SELECT fts5(?1)` with a bound pointer), null without FTS5.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    let rc = ffi::sqlite3_prepare_v2(
        db,
        c"SELECT fts5(?1)".as_ptr(),
        -1,
        &mut stmt,
        ptr::null_mut(),
    );
    if rc != ffi::SQLITE_OK {
        ffi::sqlite3_finalize(stmt);
        // No `fts5()` function: a build without FTS5.
        return Ok(ptr::null_mut());
    }
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let rc = ffi::sqlite3_bind_pointer(
        stmt,
        1,
        (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
        c"fts5_api_ptr".as_ptr(),
        None,
    );
    let rc = if rc == ffi::SQLITE_OK {
        match ffi::sqlite3_step(stmt) {
            ffi::SQLITE_ROW | ffi::SQLITE_DONE => ffi::SQLITE_OK,
            rc => rc,
        }
    } else {
        rc
    };
    ffi::sqlite3_finalize(stmt);
    if rc != ffi::SQLITE_OK {
        return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
    }
    Ok(api)
}

/// What one statement's rows share: each phrase's IDF and the average row length, as `bm25`
/// keeps them (`Fts5Bm25Data`), and a buffer for the per-row phrase frequencies.
struct Shared {
    idf: Vec<f64>,
    avgdl: f64,
    freq: Vec<f64>,
}

unsafe extern "C" fn free_shared(p: *mut c_void) {
    if !p.is_null() {
        drop(Box::from_raw(p.cast::<Shared>()));
    }
}

unsafe extern "C" fn count_row(
    _api: *const Fts5ExtensionApi,
    _fts: *mut Fts5Context,
    n: *mut c_void,
) -> c_int {
    *n.cast::<i64>() += 1;
    ffi::SQLITE_OK
}

/// The statement's [`Shared`], made on its first row (`fts5Bm25GetData`).
unsafe fn shared<'a>(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
    counts: Option<*mut ffi::sqlite3_value>,
) -> Result<&'a mut Shared, c_int> {
    let (Some(get), Some(set)) = (api.xGetAuxdata, api.xSetAuxdata) else {
        return Err(ffi::SQLITE_ERROR);
    };
    let p = get(fts, 0).cast::<Shared>();
    if !p.is_null() {
        return Ok(&mut *p);
    }
    let (Some(phrases), Some(row_count), Some(total_size)) =
        (api.xPhraseCount, api.xRowCount, api.xColumnTotalSize)
    else {
        return Err(ffi::SQLITE_ERROR);
    };
    let n_phrase = phrases(fts).max(0) as usize;
    let mut n_row: i64 = 0;
    let mut n_token: i64 = 0;
    let rc = row_count(fts, &mut n_row);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let rc = total_size(fts, -1, &mut n_token);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let given = counts.and_then(|v| given_counts(v, n_phrase));
    let mut idf = Vec::with_capacity(n_phrase);
    for i in 0..n_phrase {
        let n_hit = match &given {
            Some(c) => c[i],
            None => {
                let Some(query) = api.xQueryPhrase else {
                    return Err(ffi::SQLITE_ERROR);
                };
                let mut n: i64 = 0;
                let rc = query(
                    fts,
                    i as c_int,
                    (&mut n as *mut i64).cast(),
                    Some(count_row),
                );
                if rc != ffi::SQLITE_OK {
                    return Err(rc);
                }
                n
            }
        };
        // The same expression as fts5Bm25GetData, step for step.
        let mut x = ((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5);
        x = x.ln();
        if x <= 0.0 {
            x = 1e-6;
        }
        idf.push(x);
    }
    let data = Box::into_raw(Box::new(Shared {
        idf,
        avgdl: n_token as f64 / n_row as f64,
        freq: vec![0.0; n_phrase],
    }));
    // On failure FTS5 frees the object itself (through `free_shared`).
    let rc = set(fts, data.cast(), Some(free_shared));
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    Ok(&mut *data)
}

/// The counts in the blob `v`, when it holds exactly one per phrase.
unsafe fn given_counts(v: *mut ffi::sqlite3_value, n_phrase: usize) -> Option<Vec<i64>> {
    if ffi::sqlite3_value_type(v) != ffi::SQLITE_BLOB {
        return None;
    }
    let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
    let p = ffi::sqlite3_value_blob(v).cast::<u8>();
    if p.is_null() || n != n_phrase * 8 {
        return None;
    }
    let bytes = std::slice::from_raw_parts(p, n);
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    )
}

/// `kbm25(table, counts, weights…)`: `fts5Bm25Function` with the counts of [`shared`].
unsafe extern "C" fn kbm25(
    api: *const Fts5ExtensionApi,
    fts: *mut Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    ap_val: *mut *mut ffi::sqlite3_value,
) {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let api = &*api;
    let args: &[*mut ffi::sqlite3_value] = if n_val > 0 && !ap_val.is_null() {
        std::slice::from_raw_parts(ap_val, n_val as usize)
    } else {
        &[]
    };
    let weights = args.get(1..).unwrap_or(&[]);
    let result = (|| -> Result<f64, c_int> {
        let data = shared(api, fts, args.first().copied())?;
        let (Some(inst_count), Some(inst), Some(column_size)) =
            (api.xInstCount, api.xInst, api.xColumnSize)
        else {
            return Err(ffi::SQLITE_ERROR);
        };
        data.freq.iter_mut().for_each(|f| *f = 0.0);
        let mut n_inst: c_int = 0;
        let rc = inst_count(fts, &mut n_inst);
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        for i in 0..n_inst {
            let (mut ip, mut ic, mut io) = (0, 0, 0);
            let rc = inst(fts, i, &mut ip, &mut ic, &mut io);
            if rc != ffi::SQLITE_OK {
                return Err(rc);
            }
            let w = match weights.get(ic.max(0) as usize) {
                Some(v) if ic >= 0 => ffi::sqlite3_value_double(*v),
                _ => 1.0,
            };
            if let Some(f) = data.freq.get_mut(ip.max(0) as usize) {
                *f += w;
            }
        }
        let mut n_tok: c_int = 0;
        let rc = column_size(fts, -1, &mut n_tok);
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let d = n_tok as f64;
        let mut score = 0.0;
        for (idf, f) in data.idf.iter().zip(&data.freq) {
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / data.avgdl)));
        }
        // `-1.0 * score` in the C source: the same bits.
        Ok(-score)
    })();
    match result {
        Ok(score) => ffi::sqlite3_result_double(ctx, score),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;
