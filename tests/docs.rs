//! The documentation, tested: every command example in the README and the guide runs
//! against its expected output, and every relative link and anchor resolves.
//!
//! Examples are ```` ```console ```` blocks: a line `$ COMMAND` runs COMMAND with `sh`
//! in a scratch directory shared by the page's examples (so a page reads as one
//! session), where `thorbook` is the binary under test and `data/` is the
//! repository's. The lines after it, up to the next `$`, are what it prints: standard
//! output, then standard error. A line `...` stands for any number of lines, `[..]`
//! for any text within a line, and a line `? N` right after the command for its exit
//! status (0 otherwise). ```` ```sh ```` blocks are shown, not run; in the README and
//! the guide one that runs `thorbook` must follow a `<!-- not run: REASON -->` line,
//! so that what is not run is said and why.
//!
//! `THORBOOK_BLESS=1 cargo test --release --test tests docs::` rewrites the expected
//! output of the examples that differ (then put the wildcards back by hand).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages whose examples run: the README and the guide (not the research
/// entries, whose commands take hours on the full archives, nor the generated
/// reference).
fn example_pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    pages.extend(markdown_in(&root().join("docs"), false));
    pages.push(root().join("python/README.md"));
    pages
}

/// Every Markdown page whose links are checked.
fn linked_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> =
        ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "book-format.md", "python/README.md"]
            .iter()
            .map(|p| root().join(p))
            .collect();
    pages.extend(markdown_in(&root().join("docs"), true));
    pages
}

fn markdown_in(dir: &Path, recurse_all: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if recurse_all {
                out.extend(markdown_in(&path, true));
            }
        } else if path.extension().is_some_and(|e| e == "md") && path.file_name().is_some_and(|n| n != "SUMMARY.md") {
            out.push(path);
        }
    }
    out
}

/// A fenced code block: its info string, the line its body starts on (0-based), its
/// lines, and the line before the fence.
struct Block {
    info: String,
    start: usize,
    lines: Vec<String>,
    before: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(info) = lines[i].strip_prefix("```") {
            let fence_line = i;
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                body.push(lines[i].to_string());
                i += 1;
            }
            let before = lines[..fence_line].iter().rev().find(|l| !l.trim().is_empty()).copied().unwrap_or("");
            out.push(Block {
                info: info.trim().to_string(),
                start: fence_line + 1,
                lines: body,
                before: before.to_string(),
            });
        }
        i += 1;
    }
    out
}

/// One example: the command, the exit status and the output expected.
struct Example {
    command: String,
    status: i32,
    expected: Vec<String>,
    /// Where the expected output starts and ends in the page (0-based lines).
    lines: std::ops::Range<usize>,
}

fn examples(block: &Block) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    for (k, line) in block.lines.iter().enumerate() {
        let at = block.start + k;
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example { command: command.to_string(), status: 0, expected: Vec::new(), lines: at + 1..at + 1 });
        } else if let Some(last) = out.last_mut() {
            match line.strip_prefix("? ") {
                Some(code) if last.expected.is_empty() && last.lines.is_empty() => {
                    last.status = code.trim().parse().expect("`? N` gives an exit status");
                    last.lines = at + 1..at + 1;
                }
                _ => {
                    last.expected.push(line.clone());
                    last.lines.end = at + 1;
                }
            }
        } else {
            panic!("line {}: a console block starts with `$ COMMAND`", at + 1);
        }
    }
    out
}

/// Whether `actual` is `expected` with its wildcards: `...` lines and `[..]` spans.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((first, rest)) => {
            actual.split_first().is_some_and(|(a, more)| line_matches(first, a) && matches(rest, more))
        }
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

fn run(command: &str, dir: &Path) -> (i32, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_thorbook")).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())))
            .unwrap();
    let output = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .env("COLUMNS", "100")
        // Reviews keep their analyses in the page's scratch directory, not the user's.
        .env("THORBOOK_CACHE_DIR", dir.join(".cache"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

/// A scratch directory for a page: `data/` is the repository's (the examples read
/// the bundled files as a user's checkout has them).
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("data"), dir.path().join("data")).unwrap();
    std::os::unix::fs::symlink(root().join("scripts"), dir.path().join("scripts")).unwrap();
    dir
}

#[test]
fn every_example_in_the_readme_and_the_guide_prints_what_it_says() {
    let bless = std::env::var_os("THORBOOK_BLESS").is_some();
    let started = Instant::now();
    let (mut failures, mut count) = (Vec::new(), 0);
    let mut slowest: Vec<(Duration, String)> = Vec::new();
    for page in example_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        let dir = scratch();
        let mut rewrites: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for block in blocks(&text) {
            if block.info != "console" {
                continue;
            }
            for example in examples(&block) {
                count += 1;
                let t = Instant::now();
                let (status, actual) = run(&example.command, dir.path());
                slowest.push((t.elapsed(), format!("{name}: {}", example.command)));
                let actual_lines: Vec<&str> = actual.lines().collect();
                if status != example.status || !matches(&example.expected, &actual_lines) {
                    failures.push(format!(
                        "{name}:{}: `{}` (exit {status}, expected {}):\n--- expected\n{}\n--- printed\n{}",
                        example.lines.start,
                        example.command,
                        example.status,
                        example.expected.join("\n"),
                        actual.trim_end()
                    ));
                    rewrites.push((example.lines.clone(), actual.trim_end().to_string()));
                }
            }
        }
        if bless && !rewrites.is_empty() {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            for (range, actual) in rewrites.into_iter().rev() {
                lines.splice(range, actual.lines().map(str::to_string));
            }
            std::fs::write(&page, lines.join("\n") + "\n").unwrap();
        }
    }
    slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    eprintln!(
        "{count} documentation examples in {:.1} s; slowest: {}",
        started.elapsed().as_secs_f64(),
        slowest.iter().take(3).map(|(d, c)| format!("{c} ({:.1} s)", d.as_secs_f64())).collect::<Vec<_>>().join("; ")
    );
    assert!(count >= 30, "only {count} examples found: is the harness reading the pages?");
    assert!(failures.is_empty(), "{} of {count} examples differ:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn every_shown_command_that_is_not_run_says_why() {
    let mut missing = Vec::new();
    for page in example_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in blocks(&text) {
            let runs_thorbook =
                block.lines.iter().any(|l| l.trim_start().starts_with("thorbook ") || l.contains(" thorbook "));
            if matches!(block.info.as_str(), "sh" | "bash" | "shell")
                && runs_thorbook
                && !block.before.starts_with("<!-- not run: ")
            {
                missing.push(format!("{}:{}", page.strip_prefix(root()).unwrap().display(), block.start));
            }
            assert!(block.info != "console" || !block.lines.is_empty(), "an empty console block");
        }
    }
    assert!(
        missing.is_empty(),
        "sh blocks running thorbook without a `<!-- not run: REASON -->` line before them: {missing:?}"
    );
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped,
/// spaces turned into `-` (mdBook's are the same for these pages).
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if let Some(heading) = line.trim_start_matches('#').strip_prefix(' ').filter(|_| line.starts_with('#')) {
            let plain = heading.replace('`', "").replace("**", "").replace('*', "");
            let base = slug(&plain);
            let n = seen.entry(base.clone()).or_insert(0);
            out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
            *n += 1;
        }
        // Explicit anchors: <a id="…"> or <a name="…">.
        for key in ["<a id=\"", "<a name=\""] {
            if let Some(at) = line.find(key) {
                let rest = &line[at + key.len()..];
                out.insert(rest[..rest.find('"').unwrap_or(0)].to_string());
            }
        }
    }
    out
}

/// The targets of the Markdown links `[text](target)` outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans hold no links.
        let plain: String =
            line.split('`').enumerate().filter(|(i, _)| i % 2 == 0).map(|(_, s)| s).collect::<Vec<_>>().join("");
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n + 1, after[..end].split_whitespace().next().unwrap_or("").to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in linked_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let here = page.parent().unwrap();
        for (line, target) in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
            let path = if file.is_empty() { page.clone() } else { here.join(file) };
            let name = format!("{}:{line}: {target}", page.strip_prefix(root()).unwrap().display());
            if !path.exists() {
                broken.push(format!("{name} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{name} (no such anchor)"));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_site_has_every_page_of_the_guide() {
    // mdBook renders only what SUMMARY.md lists: a page left out is a broken link on
    // the site though it reads well on the forge.
    let docs = root().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, target)| target).collect();
    let missing: Vec<String> = markdown_in(&docs, true)
        .iter()
        .map(|p| p.strip_prefix(&docs).unwrap().to_string_lossy().into_owned())
        .filter(|page| !listed.contains(page))
        .collect();
    assert!(missing.is_empty(), "pages of docs/ that docs/SUMMARY.md does not list: {missing:?}");
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md is {lines} lines: how-to goes in docs/, measurements in docs/research/");
}

#[test]
fn the_harness_matches_its_wildcards() {
    let e = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(matches(&e("a\n...\nd"), &["a", "b", "c", "d"]));
    assert!(matches(&e("a\n...\nd"), &["a", "d"]));
    assert!(!matches(&e("a\n...\nd"), &["a", "b"]));
    assert!(matches(&e("took [..] s ([..]/s)"), &["took 1.5 s (20/s)"]));
    assert!(!matches(&e("took [..] s"), &["took 1.5 ms"]));
    assert!(!matches(&e("x"), &["x", "y"]));
    assert_eq!(slug("Books on a cluster"), "books-on-a-cluster");
    assert_eq!(slug("`thorbook book build`"), "thorbook-book-build");
    assert_eq!(slug("What's in a grade? (±N)"), "whats-in-a-grade-n");
}
