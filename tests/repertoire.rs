//! `thorbook book repertoire` from the command line: the counts, the transcripts and
//! the JSON agree, lines start with f5 as WTHOR games do, and bad ranges are usage
//! errors. (The definition itself is checked line by line in `book::repertoire`.)

use crate::util::thorbook;

#[test]
fn repertoire_lines_json_and_counts_agree() {
    let lines = thorbook(&["book", "repertoire", "--color", "white", "--max-ply", "10", "--lines"]);
    let transcripts: Vec<&str> = lines.ok().lines().collect();
    assert!(transcripts.len() > 3);
    assert!(transcripts.iter().all(|l| l.starts_with("f5") && l.len() <= 20), "{transcripts:?}");
    let json = thorbook(&["book", "repertoire", "--color", "white", "--max-ply", "10", "--json"]);
    let v: serde_json::Value = serde_json::from_str(json.ok()).unwrap();
    assert_eq!(v["lines"].as_array().unwrap().len(), transcripts.len());
    assert_eq!(v["lines"][0], transcripts[0]);
    assert_eq!(v["tree"][0]["move"], "f5");
    assert!(lines.stderr.contains(&format!("{} lines", transcripts.len())), "{}", lines.stderr);
    // More games kept in: at least as many lines.
    let more = thorbook(&["book", "repertoire", "--color", "white", "--max-ply", "10", "--lines", "--min-games", "50"]);
    assert!(more.ok().lines().count() >= transcripts.len());
}

#[test]
fn repertoire_ranges_are_usage_errors() {
    for args in [["--error", "-1"], ["--max-ply", "0"], ["--min-games", "0"]] {
        let r = thorbook(&["book", "repertoire", "--color", "black", args[0], args[1]]);
        assert_eq!(r.status, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(args[0]), "{}", r.stderr);
    }
}
