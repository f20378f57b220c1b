//! The team source's vector arm, on the codes `knowledge push` copies from each machine's stores:
//! the same 128 sign bits per window of a row's text as a `bit(128)`, ranked by Hamming distance
//! in SQL (`bit_count(code # query)`, no extension), the few nearest rescored here by exact
//! cosine from their stored text, and fused with the lexical arm exactly as a local store fuses
//! its two rankings ([`crate::sources::vectors::fuse`]).

use std::collections::HashMap;
use std::hash::Hash;

use crate::sources::vectors::{self, FusedRow};
use crate::text::embed::{self, Embedder};

/// The schema version that holds the codes (`kn_event_vec`, `kn_chunk_vec`).
pub const SINCE_VERSION: i32 = 2;

/// Bytes of a stored code (the local stores keep the first 128 dimensions' signs).
const CODE_BYTES: usize = 16;

/// Windows the Hamming ranking hands to the exact rescoring for `depth` hits (a row has up to
/// eight windows, and several of its windows may be near).
pub fn candidates(depth: usize) -> usize {
    (depth * 4).max(128)
}

/// The query's code as the text of a `bit(128)`, exactly as the stored codes are pushed
/// ([`super::code_bits`]).
pub fn query_bits(query: &[f32]) -> String {
    let mut code = embed::sign_code(query);
    code.resize(CODE_BYTES, 0);
    super::code_bits(&code)
}

/// The vector arm's query over `vecs` (a codes table, `kn_event_vec` / `kn_chunk_vec`): the
/// `limit` windows nearest to `$1` (the query's code) by Hamming distance, then the columns
/// `cols` of their rows and the window (last). `keys` are the columns naming a row in both the
/// codes table and `rows` (the rows' tables, joined to the codes by `on`, in which `{k}` stands
/// for the codes' alias); `filter` the request's conditions over `rows` (`Filter::sql`).
///
/// The distance is ranked over the codes alone, and only the winners are joined to their rows:
/// joining every window first (as the arm once did) read every event and session to sort the
/// whole table. With filters the rows must be looked at, so they are joined in the ranking.
pub fn nearest_sql(
    vecs: &str,
    keys: &[&str],
    rows: &str,
    on: &str,
    cols: &str,
    filter: &str,
    limit: &str,
) -> String {
    let with = |alias: &str| {
        keys.iter()
            .map(|k| format!("{alias}.{k}"))
            .collect::<Vec<_>>()
    };
    let (v, n) = (with("v").join(", "), with("n").join(", "));
    let ranked_from = if filter.is_empty() {
        format!("{vecs} v")
    } else {
        format!("{vecs} v JOIN {rows} ON {}", on.replace("{k}", "v"))
    };
    format!(
        "WITH near AS MATERIALIZED (
             SELECT {v}, v.win, bit_count(v.code # CAST($1::text AS bit(128))) AS d
             FROM {ranked_from} WHERE true {filter}
             ORDER BY d, {v}, v.win LIMIT {limit})
         SELECT {cols}, n.win FROM near n JOIN {rows} ON {}
         ORDER BY n.d, {n}, n.win",
        on.replace("{k}", "n")
    )
}

/// The exact cosine of each row from its nearest windows (`(row, window, text)`): the best
/// window's, rows best first (ties by row).
pub fn rescore<K: Eq + Hash + Ord + Clone>(
    emb: &Embedder,
    query: &[f32],
    windows: Vec<(K, usize, String)>,
) -> Vec<(K, f32)> {
    let mut best: HashMap<K, f32> = HashMap::new();
    for (key, window, text) in windows {
        let Some(v) = emb.embed_window(&text, window) else {
            continue;
        };
        let cos = embed::dot(query, &v);
        let slot = best.entry(key).or_insert(f32::MIN);
        *slot = slot.max(cos);
    }
    let mut ranked: Vec<(K, f32)> = best.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
}

/// At most `depth` rows of a ranking.
pub fn capped<K>(mut ranked: Vec<(K, f32)>, depth: usize) -> Vec<(K, f32)> {
    ranked.truncate(depth);
    ranked
}

/// The lexical ranking (row, score) and the vector ranking (row, cosine), both best first,
/// fused as a local store fuses them; the rows in fused order.
pub fn fuse_keys<K: Eq + Hash + Clone>(
    lexical: &[(K, f64)],
    vector: &[(K, f32)],
) -> Vec<(K, FusedRow)> {
    let mut keys: Vec<K> = Vec::new();
    let mut ids: HashMap<K, i64> = HashMap::new();
    let mut id_of = |k: &K| {
        *ids.entry(k.clone()).or_insert_with(|| {
            keys.push(k.clone());
            keys.len() as i64 - 1
        })
    };
    let lex: Vec<(i64, f64)> = lexical.iter().map(|(k, s)| (id_of(k), *s)).collect();
    let vec: Vec<(i64, f32)> = vector.iter().map(|(k, c)| (id_of(k), *c)).collect();
    vectors::fuse(&lex, &vec)
        .into_iter()
        .map(|f| (keys[f.id as usize].clone(), f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_code_puts_dimension_i_at_bit_i_from_the_left() {
        let mut v = vec![-1.0f32; 200];
        v[0] = 1.0;
        v[9] = 0.5;
        v[127] = 2.0;
        v[150] = 1.0; // past the stored 128 bits
        let bits = query_bits(&v);
        assert_eq!(bits.len(), 128);
        let ones: Vec<usize> = bits.match_indices('1').map(|(i, _)| i).collect();
        assert_eq!(ones, [0, 9, 127]);
    }

    #[test]
    fn fused_keys_keep_the_lexical_order_and_add_confident_vector_rows() {
        let lex = [("a", 3.0), ("b", 1.0)];
        let vec = [("c", 0.9), ("a", 0.5), ("d", 0.1)];
        let keys: Vec<&str> = fuse_keys(&lex, &vec).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys[0], "a");
        assert!(keys.contains(&"c") && !keys.contains(&"d"), "{keys:?}");
    }
}
