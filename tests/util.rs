//! Running the real `thorbook` binary from tests.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Output of one run of the binary.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.status, 0, "expected success\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        &self.stdout
    }

    #[track_caller]
    pub fn fails(&self) -> &str {
        assert_ne!(self.status, 0, "expected failure\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        &self.stderr
    }
}

/// Runs `thorbook ARGS` in the crate root.
pub fn thorbook(args: &[&str]) -> Run {
    thorbook_stdin(args, "")
}

/// Runs `thorbook ARGS` with `input` on standard input.
pub fn thorbook_stdin(args: &[&str], input: &str) -> Run {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Reviews keep their analyses here, not in the user's cache.
        .env("THORBOOK_CACHE_DIR", std::env::temp_dir().join(format!("thorbook-tests-{}", std::process::id())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the thorbook binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).ok();
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// `../shared/<rel>` next to the project root. Tests that call it are
/// `#[ignore = "needs ../shared/…"]` and named `shared_*`: `.ci/run` runs them with
/// `--ignored` where `../shared` exists, and run without it they fail loudly here
/// instead of passing without checking anything.
pub fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("shared").join(rel);
    assert!(p.exists(), "{} is absent: this test needs the shared data next to the repository", p.display());
    p
}

/// Starts `thorbook ARGS` in the crate's directory with its output piped.
pub fn spawn_thorbook(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The book `Builder` writes of `games` with `config` (through a temporary file).
pub fn build_book_bytes(games: &[thorbook::book::GameLine], config: &thorbook::book::BuildConfig) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("book.tbk");
    thorbook::book::Builder::new(config.clone(), &out).run(games, &|_| {}).unwrap();
    std::fs::read(&out).unwrap()
}

/// The stored byte of a valid record's leaf move, by `book-format.md`: a square
/// 0..=63, 64 a pass, 255 none.
pub fn leaf_move_byte(record: &thorbook::book::Record) -> u8 {
    match record.leaf() {
        Some(thorbook::Move::Place(sq)) => sq.index() as u8,
        Some(thorbook::Move::Pass) => 64,
        None => {
            assert_eq!(record.leaf_move, thorbook::book::LeafMove::NONE, "a valid leaf move");
            255
        }
    }
}

/// A book of sorted `records` under `params`, through the public text import: the
/// records written as `book-format.md`'s *Text export* states (keys in hex, boards
/// not given), which `book import` turns into the book of exactly those records.
pub fn book_from_records(records: &[thorbook::book::Record], params: thorbook::book::BuildParams) -> Vec<u8> {
    use std::fmt::Write;
    let mut text = format!(
        "# thorbook book export: key value leaf_move leaf_score leaf_depth exact games wins draws board \
         leaf_selectivity\n# params max_ply={} depth={} exact_at={} selectivity={} min_games={} eval={:08x} back_up={}\n",
        params.max_ply,
        params.depth,
        params.exact_at,
        params.selectivity_tenths,
        params.min_games,
        params.eval_digest,
        params.back_up
    );
    for r in records {
        let leaf = r.leaf().map_or("-".to_string(), |m| m.to_string());
        writeln!(
            text,
            "{:016x} {} {leaf} {} {} {} {} {} {} ? {}",
            r.key,
            r.value,
            r.leaf_score,
            r.leaf_depth,
            r.flags & 1,
            r.games,
            r.wins,
            r.draws,
            r.leaf_selectivity
        )
        .unwrap();
    }
    thorbook::book::interchange::import(text.as_bytes()).expect("records a book can hold").bytes
}

/// The same records as a book of format version 1 or 2 (24-byte records, as thorbook
/// wrote before version 3), written from `book-format.md`'s description of it.
pub fn old_format_book(
    records: &[thorbook::book::Record],
    params: thorbook::book::BuildParams,
    version: u32,
) -> Vec<u8> {
    let mut body = Vec::new();
    for r in records {
        body.extend_from_slice(&r.key.to_le_bytes());
        body.extend_from_slice(&[r.value as u8, leaf_move_byte(r), r.leaf_score as u8, r.leaf_depth]);
        body.extend_from_slice(&r.games.to_le_bytes());
        body.extend_from_slice(&r.wins.to_le_bytes());
        body.extend_from_slice(&r.draws.to_le_bytes());
        body.extend_from_slice(&[r.flags, if version == 1 { 0 } else { r.leaf_selectivity }]);
    }
    let mut h = vec![0u8; 64];
    h[0..8].copy_from_slice(b"THORBOOK");
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12..16].copy_from_slice(&64u32.to_le_bytes());
    h[16..20].copy_from_slice(&24u32.to_le_bytes());
    h[20..28].copy_from_slice(&(records.len() as u64).to_le_bytes());
    h[28..36].copy_from_slice(&0xd882_292b_5bdd_2f7au64.to_le_bytes());
    h[36..39].copy_from_slice(&[params.max_ply, params.depth, params.exact_at]);
    h[39] = params.selectivity_tenths;
    h[40..44].copy_from_slice(&params.min_games.to_le_bytes());
    h[44..48].copy_from_slice(&params.eval_digest.to_le_bytes());
    h[48] = match params.back_up {
        thorbook::book::BackUpRule::Negamax => 0,
        thorbook::book::BackUpRule::Corrected => 1,
    };
    h[56..60].copy_from_slice(&crc32fast::hash(&body).to_le_bytes());
    let crc = crc32fast::hash(&h[..60]);
    h[60..64].copy_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&body);
    h
}

/// A naive reference of the back-up `book-format.md` states, over `records` in key
/// order: every position reached from one of `roots` through book positions gets the
/// best of its leaf and minus its book children's values (memoised recursion over a
/// map of boards); the others keep their values.
pub fn reference_back_up(records: &[thorbook::book::Record], roots: &[thorbook::Board]) -> Vec<thorbook::book::Record> {
    use std::collections::HashMap;
    use thorbook::Board;
    let by_key: HashMap<u64, thorbook::book::Record> = records.iter().map(|r| (r.key, *r)).collect();
    fn value(
        board: &Board,
        by_key: &HashMap<u64, thorbook::book::Record>,
        memo: &mut HashMap<u64, Option<i32>>,
    ) -> Option<i32> {
        let key = board.key();
        if let Some(v) = memo.get(&key) {
            return *v;
        }
        let r = by_key[&key];
        let mut best = (r.leaf().is_some() || board.is_game_over()).then_some(i32::from(r.leaf_score));
        for (_, child) in board.successors() {
            let canon = child.canonical().0;
            if by_key.contains_key(&canon.key()) {
                if let Some(v) = value(&canon, by_key, memo) {
                    best = Some(best.map_or(-v, |b| b.max(-v)));
                }
            }
        }
        memo.insert(key, best);
        best
    }
    let mut memo = HashMap::new();
    for root in roots {
        let canon = root.canonical().0;
        if by_key.contains_key(&canon.key()) {
            value(&canon, &by_key, &mut memo);
        }
    }
    records
        .iter()
        .map(|r| match memo.get(&r.key) {
            Some(Some(v)) => thorbook::book::Record { value: (*v).clamp(-64, 64) as i8, ..*r },
            _ => *r,
        })
        .collect()
}

/// A shared library for `LD_PRELOAD` whose `flock` fails with ENOLCK, built in `dir`
/// with the C compiler Rust links with: a file system that cannot lock (Lustre mounted
/// without `-o flock`, NFS without a lock manager) for the binary.
#[cfg(target_os = "linux")]
pub fn no_flock_shim(dir: &std::path::Path) -> PathBuf {
    let source = dir.join("noflock.c");
    std::fs::write(
        &source,
        "#include <errno.h>\nint flock(int fd, int op) { (void)fd; (void)op; errno = ENOLCK; return -1; }\n",
    )
    .unwrap();
    let lib = dir.join("libnoflock.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(&cc).args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&source).output();
    let built = built.unwrap_or_else(|e| panic!("{cc} (the C compiler Rust links with) cannot run: {e}"));
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    lib
}

/// Weights of zeros for `phases` phases (an evaluation that scores every position 0),
/// made through the public parts.
pub fn zero_weights(phases: usize) -> thorbook::eval::Weights {
    let mut parts = thorbook::eval::WeightParts::default();
    parts.note = "zeros".into();
    parts.phases = phases;
    parts.values = vec![0; phases * thorbook::eval::Weights::phase_len()];
    thorbook::eval::Weights::try_from(parts).expect("zero weights keep every invariant")
}
