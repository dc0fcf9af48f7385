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
