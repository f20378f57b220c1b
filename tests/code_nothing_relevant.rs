//! The code lane answers "nothing relevant" (an empty lane with its reason) for a question
//! about something the code does not hold, instead of the nearest chunk; a question about what
//! the code does hold still answers, in the same words or in others.

use std::fs;
use std::path::Path;

use knowledge::sources::code::{index_code, CodeIndexOptions, CodeQuery, CodeSearch, CodeStore};
use knowledge::text::embed;
use knowledge::text::tokens::query_terms;

fn write(root: &Path, rel: &str, body: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    fs::write(path, body).expect("write");
}

fn ask(store: &CodeStore, text: &str) -> CodeSearch {
    let mut terms = query_terms(text);
    let vector = embed::prepare_query(text, &mut terms);
    store
        .search(&CodeQuery {
            terms,
            limit: 10,
            snippet_chars: 200,
            vector,
            ..CodeQuery::default()
        })
        .expect("search")
}

#[test]
fn a_question_about_something_not_in_the_code_gets_an_empty_lane_with_its_reason() {
    if embed::shared().is_err() {
        println!("skipped: no embedding table");
        return;
    }
    let repo = tempfile::tempdir().expect("tmp");
    let data = tempfile::tempdir().expect("tmp");
    write(
        repo.path(),
        "billing/invoice.py",
        "def render_invoice(order, locale):\n    \"\"\"Render the PDF invoice of an order.\"\"\"\n    total = sum(line.price * line.quantity for line in order.lines)\n    vat = total * locale.vat_rate\n    return pdf.render('invoice.html', total=total, vat=vat)\n",
    );
    write(
        repo.path(),
        "billing/retry.py",
        "def retry_failed_payment(payment, attempts=3):\n    \"\"\"Charge a declined card again with exponential backoff.\"\"\"\n    for attempt in range(attempts):\n        if gateway.charge(payment):\n            return True\n        sleep(2 ** attempt)\n    return False\n",
    );
    let db = data.path().join("code.sqlite");
    let opts = CodeIndexOptions {
        semantic: true,
        ..CodeIndexOptions::default()
    };
    index_code(&db, &[repo.path().to_path_buf()], &opts, &mut |_| {}).expect("index");
    let store = CodeStore::open(&db).expect("open");

    let absent = ask(
        &store,
        "how do we train the giraffe neural network on satellite photos",
    );
    assert!(absent.hits.is_empty(), "{:?}", absent.hits);
    let why = absent.nothing_relevant.expect("a reason");
    assert!(why.starts_with("nothing relevant"), "{why}");

    // What the code holds still answers: its own words, and other words for it.
    let lexical = ask(&store, "retry failed payment");
    assert!(lexical.nothing_relevant.is_none());
    assert_eq!(lexical.hits[0].path, "billing/retry.py");
    let other_words = ask(&store, "charge the declined card again");
    assert!(other_words.nothing_relevant.is_none());
    assert!(!other_words.hits.is_empty());
}
