//! The explorer: API answers equal the CLI's JSON, bad requests get 4xx, a burst of
//! concurrent requests over loopback is all answered, and a real browser loads the
//! page, clicks a move and sees the next position.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;
use thorbook::work::StopHandle;

use thorbook::book::BookSource;
use thorbook::explorer::{serve, Explorer, ServeOptions};
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

use crate::util::thorbook;

fn explorer() -> Explorer {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    Explorer::new(db, BookSource::Bundled.open().unwrap())
        .with_reviews(BookSource::Bundled, thorbook::engine::review::AnalysisStore::in_memory())
}

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).unwrap()
}

fn without_opening(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("opening");
    v
}

#[test]
fn api_answers_equal_the_cli_json() {
    let ex = explorer();
    // Plain lines, a transposition of the Tiger, a line turned by a symmetry, a pass-free
    // deep line.
    for moves in ["", "f5", "f5d6c3d3c4", "f5d6c4d3c3", "e6f4c3c4d3", "c4e3f6e6f5c5", "f5f6e6f4e3c5c4"] {
        let r = ex.respond("GET", &format!("/api/position?moves={moves}"));
        assert_eq!(r.status, 200, "{moves}");
        let api = json(&r.body);
        let args = |cmd: &[&str]| {
            let mut v: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
            if !moves.is_empty() {
                v.extend(["--moves".to_string(), moves.to_string()]);
            }
            v.push("--json".into());
            v
        };
        let run = |a: Vec<String>| {
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            serde_json::from_str::<serde_json::Value>(thorbook(&refs).ok()).unwrap()
        };
        let stats = run(args(&["thor", "stats"]));
        let book = run(args(&["book", "query"]));
        assert_eq!(api["opening"], stats["opening"], "{moves}");
        assert_eq!(api["thor"], without_opening(stats), "{moves}");
        // The book as `book query` says it, its line turned to the board's orientation:
        // the same line up to a symmetry of the position (only the start has one here).
        let mut api_book = api["book"].clone();
        let line = api_book["line"].take();
        let mut cli_book = without_opening(book);
        let cli_line = cli_book["line"].take();
        assert_eq!(api_book, cli_book, "{moves}");
        if moves.is_empty() {
            assert!(line.as_str().unwrap().starts_with("f5"), "the start's line begins f5 as the games do: {line}");
            assert!(cli_line.as_str().unwrap().starts_with("d3"), "the book's own order, turned: {cli_line}");
        } else {
            assert_eq!(line, cli_line, "{moves}");
        }
        // The games list has as many games as the statistics count.
        let g = json(&ex.respond("GET", &format!("/api/games?moves={moves}&limit=5")).body);
        assert_eq!(g["total"], api["thor"]["games"], "{moves}");
    }
    // The Tiger by transposition and by symmetry is the Tiger.
    for moves in ["f5d6c4d3c3", "e6f4c3c4d3"] {
        assert_eq!(json(&ex.respond("GET", &format!("/api/position?moves={moves}")).body)["opening"], "Tiger");
    }
    // The engine's scores at a level cover every legal move.
    let e = json(&ex.respond("GET", "/api/position?moves=f5d6&level=2").body);
    assert_eq!(e["engine"]["moves"].as_array().unwrap().len(), e["legal_moves"].as_array().unwrap().len());
    assert_eq!((e["engine"]["depth"].as_u64(), e["engine"]["cut_short"].as_bool()), (Some(2), Some(false)));
    // Engines are reused across requests, each starting from a cleared table: a deeper
    // request in between does not change the answer to the same request.
    let deeper = json(&ex.respond("GET", "/api/position?moves=f5d6c3&level=4").body);
    assert_eq!(deeper["engine"]["depth"].as_u64(), Some(4));
    let again = json(&ex.respond("GET", "/api/position?moves=f5d6&level=2").body);
    assert_eq!(again["engine"]["moves"], e["engine"]["moves"]);
    // A board instead of moves, and the SVG alone.
    let board = e["board"].as_str().unwrap().replace(' ', "+");
    let b = ex.respond("GET", &format!("/api/position?board={board}"));
    assert_eq!(b.status, 200, "{}", String::from_utf8_lossy(&b.body));
    assert_eq!(json(&b.body)["thor"], e["thor"]);
    let svg = ex.respond("GET", "/api/svg?moves=f5d6");
    assert_eq!((svg.status, svg.content_type), (200, "image/svg+xml"));
    assert!(String::from_utf8(svg.body).unwrap().contains(r#"data-square="c3""#));
    let page = ex.respond("GET", "/");
    assert_eq!(page.status, 200);
    // Nothing is fetched from elsewhere: the only address is SVG's namespace name.
    let page = String::from_utf8(page.body).unwrap().replace("\"http://www.w3.org/2000/svg\"", "");
    assert!(!page.contains("http://") && !page.contains("https://"), "the page fetches nothing from elsewhere");
}

/// The explorer's filters are the CLI's: `/api/position`'s statistics equal `thor stats
/// --json` and `/api/games` lists what `thor games --json` lists, for the same
/// `player`, `as`, `tournament` and `years`.
#[test]
fn filtered_answers_equal_the_cli_with_the_same_filters() {
    let ex = explorer();
    let run = |args: &[&str]| thorbook(args).ok().to_string();
    for (moves, filters) in [
        ("f5d6", vec![("player", "odegard")]),
        ("f5d6c3", vec![("player", "Odegard"), ("as", "black")]),
        ("", vec![("player", "hand"), ("as", "white"), ("years", "2013")]),
        ("f5f6", vec![("tournament", "airplane")]),
        ("f5d6c3d3c4", vec![("years", "2014..")]),
        ("", vec![("years", "..2013"), ("tournament", "world")]),
    ] {
        let query: String = filters.iter().map(|(k, v)| format!("&{k}={v}")).collect();
        let cli: Vec<String> = filters.iter().flat_map(|(k, v)| [format!("--{k}"), v.to_string()]).collect();
        let mut args: Vec<&str> = cli.iter().map(String::as_str).collect();
        if !moves.is_empty() {
            args.extend(["--moves", moves]);
        }
        let stats_args: Vec<&str> = ["thor", "stats", "--json"].into_iter().chain(args.iter().copied()).collect();
        let stats: serde_json::Value = serde_json::from_str(&run(&stats_args)).unwrap();
        let api = json(&ex.respond("GET", &format!("/api/position?moves={moves}{query}")).body);
        assert_eq!(api["thor"], without_opening(stats), "{moves} {filters:?}");
        assert!(api["thor"]["games"].as_u64().unwrap() > 0, "{moves} {filters:?}: the case tests something");
        // The same games in the same order as `thor games --sort year`.
        let games_args: Vec<&str> = ["thor", "games", "--json", "--sort", "year", "--limit", "200"]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let listed: Vec<serde_json::Value> =
            run(&games_args).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let g = json(&ex.respond("GET", &format!("/api/games?moves={moves}{query}&sort=year&limit=200")).body);
        assert_eq!(g["total"], api["thor"]["games"], "{moves} {filters:?}");
        let served: Vec<serde_json::Value> = g["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|game| {
                let mut game = game.clone();
                game.as_object_mut().unwrap().remove("index");
                // The page replays passes; `thor games` writes the transcript without them.
                let moves = thorbook::square::parse_move_sequence(game["moves"].as_str().unwrap()).unwrap();
                let placed: Vec<_> = moves.into_iter().filter(|m| *m != thorbook::Move::Pass).collect();
                game["moves"] = thorbook::square::format_moves(&placed).into();
                game
            })
            .collect();
        assert_eq!(served, listed, "{moves} {filters:?}");
    }
    // Empty fields are no condition (a form's blank inputs); bad values are 400s naming
    // the parameter.
    let all = json(&ex.respond("GET", "/api/position?moves=f5&player=&as=&tournament=&years=").body);
    assert_eq!(all["thor"], json(&ex.respond("GET", "/api/position?moves=f5").body)["thor"]);
    for (url, says) in [
        ("/api/position?moves=f5&as=red", "as must be"),
        ("/api/position?moves=f5&years=2015..2013", "years"),
        ("/api/games?moves=f5&years=abc", "years"),
    ] {
        let r = ex.respond("GET", url);
        assert_eq!(r.status, 400, "{url}");
        assert!(json(&r.body)["error"].as_str().unwrap().contains(says), "{url}");
    }
}

/// The game view's review is `thorbook review --json`'s, and the repertoire panel's
/// tree is `thorbook book repertoire --json`'s.
#[test]
fn review_and_repertoire_answers_equal_the_cli() {
    let ex = explorer();
    let moves = "f5d6c3d3c4f4f6g5e6c5f3b5b4e3g4f7e7g6c6h3c2d8";
    let r = ex.respond("GET", &format!("/api/review?moves={moves}&level=2"));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let api = json(&r.body);
    let cli: Vec<serde_json::Value> =
        thorbook(&["review", "--moves", moves, "--level", "2", "--threads", "1", "--json", "--no-store"])
            .ok()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    assert_eq!(api["plies"], serde_json::Value::from(cli[..cli.len() - 1].to_vec()));
    let summary = &cli.last().unwrap()["summary"];
    for key in ["decisions", "black", "white", "worst", "left_book_at", "black_result"] {
        assert_eq!(api["summary"][key], summary[key], "{key}");
    }
    assert_eq!(api["summary"]["left_book_at"], 21, "the line leaves the book at ply 21");
    let svg = api["svg"].as_str().unwrap();
    assert_eq!(svg.matches("class=\"ply\"").count(), api["plies"].as_array().unwrap().len());
    // Again: nothing is searched, the values are the same.
    let again = json(&ex.respond("GET", &format!("/api/review?moves={moves}&level=2")).body);
    assert_eq!((again["plies"].clone(), again["summary"]["searched"].as_u64()), (api["plies"].clone(), Some(0)));
    for color in ["black", "white"] {
        let api = json(&ex.respond("GET", &format!("/api/repertoire?color={color}&error=2&max_ply=12")).body);
        let cli: serde_json::Value = serde_json::from_str(
            thorbook(&["book", "repertoire", "--color", color, "--error", "2", "--max-ply", "12", "--json"]).ok(),
        )
        .unwrap();
        assert_eq!(api, cli, "{color}");
        assert!(api["lines"][0].as_str().unwrap().starts_with("f5"));
    }
    for (url, says) in [
        ("/api/review?board=x", "board"),
        ("/api/review?moves=f5d6c3c3", "ply 4"),
        ("/api/review?moves=f5&level=99", "level"),
        ("/api/repertoire?color=red", "color"),
        ("/api/repertoire?color=black&error=-1", "error"),
        ("/api/repertoire?color=black&max_ply=x", "max_ply"),
    ] {
        let r = ex.respond("GET", url);
        assert_eq!(r.status, 400, "{url}");
        assert!(json(&r.body)["error"].as_str().unwrap().contains(says), "{url}: {}", String::from_utf8_lossy(&r.body));
    }
}

#[test]
fn bad_requests_get_an_error_never_a_panic() {
    let ex = explorer();
    let long = format!("/api/position?moves={}", "f5".repeat(2000));
    for (url, status, says) in [
        ("/api/position?moves=zz", 400, "not a square"),
        ("/api/position?moves=f5f5", 400, "ply 2"),
        ("/api/position?moves=f5&board=x", 400, "not both"),
        ("/api/position?board=garbage", 400, "board"),
        ("/api/position?moves=f5&level=99", 400, "level"),
        ("/api/position?moves=%zz", 400, "percent"),
        ("/api/position?moves=%ff%fe", 400, "UTF-8"),
        ("/api/games?moves=f5&limit=0", 400, "limit"),
        ("/api/games?moves=f5&limit=100000", 400, "limit"),
        ("/api/games?moves=f5&sort=best", 400, "sort"),
        ("/api/games?moves=f5&offset=-1", 400, "offset"),
        ("/etc/passwd", 404, "no such page"),
        ("/../../etc/passwd", 404, "no such page"),
        (long.as_str(), 414, "at most"),
    ] {
        let r = ex.respond("GET", url);
        assert_eq!(r.status, status, "{url}");
        let msg = json(&r.body)["error"].as_str().unwrap().to_string();
        assert!(msg.contains(says), "{url}: {msg}");
    }
    assert_eq!(ex.respond("POST", "/api/position").status, 405);
    assert_eq!(ex.respond("DELETE", "/").status, 405);
    // Random bytes as request targets.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2000 {
        let mut url = String::from("/api/position?");
        for _ in 0..(seed % 40) {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            url.push(char::from_u32((seed >> 33) as u32 % 0x250).unwrap_or('?'));
        }
        let r = ex.respond("GET", &url);
        assert!(r.status == 200 || r.status == 400 || r.status == 414, "{url}: {}", r.status);
    }
    // A request's engine search stops at the explorer's time bound (level 9 is depth
    // 16, which no position of 40 empties reaches in a millisecond) with the scores of
    // its deepest finished iteration, every legal move scored.
    let hurried = ex.with_engine_time(std::time::Duration::from_millis(1));
    let line = "f5d6c3d3c4f4f6f3e6e7d7c6b5";
    let r = json(&hurried.respond("GET", &format!("/api/position?moves={line}&level=9")).body);
    assert_eq!(r["engine"]["cut_short"], true, "{}", r["engine"]);
    assert!(r["engine"]["depth"].as_u64().unwrap() < 16);
    let mut scored: Vec<&str> =
        r["engine"]["moves"].as_array().unwrap().iter().map(|m| m["move"].as_str().unwrap()).collect();
    let mut legal: Vec<&str> = r["legal_moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    scored.sort_unstable();
    legal.sort_unstable();
    assert_eq!(scored, legal);
    let ex = hurried.with_engine_time(thorbook::explorer::ENGINE_TIME);
    // `explore --max-level N` lowers the ceiling; 0 turns engine scores off.
    let capped = ex.with_max_engine_level(2);
    assert_eq!(capped.respond("GET", "/api/position?moves=f5&level=2").status, 200);
    let r = capped.respond("GET", "/api/position?moves=f5&level=3");
    assert!(r.status == 400 && json(&r.body)["error"] == "level must be from 1 to 2", "{:?}", json(&r.body));
    let off = capped.with_max_engine_level(0);
    let r = off.respond("GET", "/api/position?moves=f5&level=1");
    assert!(r.status == 400 && json(&r.body)["error"].as_str().unwrap().contains("turned off"));
    assert_eq!(off.respond("GET", "/api/position?moves=f5").status, 200);
}

fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, out)
}

/// Starts the server on a free loopback port; returns its address and the stop flag.
fn start() -> (SocketAddr, StopHandle, std::thread::JoinHandle<()>) {
    let ex = Arc::new(explorer());
    let stop = StopHandle::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let s = stop.clone();
    let handle = std::thread::spawn(move || {
        let options = with!(ServeOptions::default(), addr: "127.0.0.1:0".parse().unwrap(), workers: 4);
        serve(ex, &options, s, |addr| tx.send(addr).unwrap()).unwrap();
    });
    (rx.recv_timeout(Duration::from_secs(30)).unwrap(), stop, handle)
}

#[test]
fn a_burst_of_concurrent_requests_is_all_answered_and_the_server_stops_cleanly() {
    let (addr, stop, handle) = start();
    assert!(addr.ip().is_loopback());
    let lines = ["f5", "f5d6", "f5d6c3", "f5f6", "f5f4", "e6f4", "d3c5", "c4e3"];
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                (0..12)
                    .map(|i| {
                        let target = if i % 3 == 2 {
                            "/api/position?moves=nonsense".to_string()
                        } else {
                            format!("/api/position?moves={}", lines[(t + i) % lines.len()])
                        };
                        let (status, body) = get(addr, &target);
                        (i % 3 == 2, status, body)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut answered = 0;
    for t in threads {
        for (bad, status, body) in t.join().unwrap() {
            assert_eq!(status, if bad { 400 } else { 200 }, "{body}");
            answered += 1;
        }
    }
    assert_eq!(answered, 96);
    // A raw garbage request line does not take the server down.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"\x00\x01garbage\r\n\r\n").unwrap();
    drop(s);
    assert_eq!(get(addr, "/api/position?moves=f5").0, 200);
    stop.stop();
    handle.join().unwrap();
    // The listener closes shortly after the workers stop.
    let released = (0..40).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err()
    });
    assert!(released, "the port is released");
}

/// A minimal WebDriver client over raw HTTP (chromedriver speaks JSON over HTTP/1.1).
struct WebDriver {
    addr: SocketAddr,
    session: String,
}

impl WebDriver {
    fn call(addr: SocketAddr, method: &str, path: &str, body: &serde_json::Value) -> serde_json::Value {
        let payload = if method == "GET" || method == "DELETE" { String::new() } else { body.to_string() };
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
            payload.len()
        )
        .unwrap();
        // chromedriver keeps connections open: read the headers, then Content-Length bytes.
        let mut reader = std::io::BufReader::new(s);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if std::io::BufRead::read_line(&mut reader, &mut line).unwrap() == 0 || line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut out = vec![0u8; length];
        reader.read_exact(&mut out).unwrap();
        let body = String::from_utf8_lossy(&out);
        let (start, end) = (body.find('{').unwrap_or(0), body.rfind('}').map_or(0, |e| e + 1));
        serde_json::from_str(&body[start..end]).unwrap_or(serde_json::Value::Null)
    }

    fn cmd(&self, method: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
        WebDriver::call(self.addr, method, &format!("/session/{}{path}", self.session), &body)["value"].clone()
    }

    fn find(&self, css: &str) -> Option<String> {
        let v = self.cmd("POST", "/element", serde_json::json!({"using": "css selector", "value": css}));
        // An element is `{"element-6066-…": id}`; a miss is `{"error": …}`.
        let (key, id) = v.as_object()?.iter().next()?;
        key.starts_with("element-").then(|| id.as_str().map(String::from))?
    }

    fn wait_for(&self, css: &str) -> String {
        for _ in 0..100 {
            if let Some(e) = self.find(css) {
                return e;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{css} never appeared");
    }

    /// The text of the element `css` once the page has filled it in (it may exist
    /// empty while the page still fetches its content).
    fn wait_for_text(&self, css: &str) -> String {
        for _ in 0..100 {
            let text = self.text(&self.wait_for(css));
            if !text.is_empty() {
                return text;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{css} stayed empty");
    }

    /// Runs `script` in the page; its return value.
    fn exec(&self, script: &str) -> serde_json::Value {
        self.cmd("POST", "/execute/sync", serde_json::json!({"script": script, "args": []}))
    }

    fn text(&self, element: &str) -> String {
        self.cmd("GET", &format!("/element/{element}/text"), serde_json::Value::Null).as_str().unwrap_or("").to_string()
    }
}

#[test]
#[ignore = "needs chromium and chromedriver (apt-get install chromium chromium-driver); .ci/run runs it where they are"]
fn a_real_browser_loads_the_page_and_clicks_a_move() {
    let (addr, stop, handle) = start();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut driver = std::process::Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromedriver runs");
    let wd_addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    assert!((0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        TcpStream::connect(wd_addr).is_ok()
    }));
    let session = WebDriver::call(
        wd_addr,
        "POST",
        "/session",
        &serde_json::json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]}}}}),
    );
    let id = session["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {session}")).to_string();
    let wd = WebDriver { addr: wd_addr, session: id };
    wd.cmd("POST", "/url", serde_json::json!({"url": format!("http://{addr}/?moves=f5d6c3d3c4")}));
    assert_eq!(wd.wait_for_text("#opening"), "Tiger");
    // Click the f4 row of the moves table: the page shows the position after f4.
    let row = wd.wait_for(r#"#moves tbody tr[data-move="f4"]"#);
    wd.cmd("POST", &format!("/element/{row}/click"), serde_json::json!({}));
    let current = wd.wait_for("#line a.current");
    let mut moved = false;
    for _ in 0..100 {
        if wd.text(&current) == "f4" || wd.find("#line a.current").map(|e| wd.text(&e)) == Some("f4".into()) {
            moved = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(moved, "the line advanced to f4");
    // The table now lists the moves of the next position (after f5 d6 c3 d3 c4 f4 black
    // plays f6, c5, e6 …) and the URL carries the line.
    wd.wait_for(r#"#moves tbody tr[data-move="f6"]"#);
    let url = wd.cmd("GET", "/url", serde_json::Value::Null);
    assert!(url.as_str().unwrap().contains("moves=f5d6c3d3c4f4"), "{url}");
    // Keyboard: the left arrow goes back.
    let body = wd.wait_for("body");
    wd.cmd("POST", &format!("/element/{body}/value"), serde_json::json!({"text": "\u{E012}"}));
    let back = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        wd.find("#line a.current").map(|e| wd.text(&e)) == Some("c4".into())
    });
    assert!(back, "the left arrow went back to c4");
    // The book's values are drawn on the legal moves it knows (f4, c5, ... after c4).
    let labels = wd.exec("return document.querySelectorAll('#board .booklabel').length");
    assert!(labels.as_u64().unwrap() >= 4, "book labels on the board: {labels}");
    // Filters: a player typed into the form filters the statistics and the games, and
    // the URL keeps the filter.
    let input = wd.wait_for("#f-player");
    wd.cmd("POST", &format!("/element/{input}/value"), serde_json::json!({"text": "odegard\n"}));
    let (_, reply) = get(addr, "/api/games?moves=f5d6c3d3c4&player=odegard");
    let body: serde_json::Value = serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let want = format!("({},", body["total"]);
    let filtered = wait_until(|| {
        let url = wd.cmd("GET", "/url", serde_json::Value::Null);
        url.as_str().unwrap().contains("player=odegard")
            && wd.find("#gamecount").map(|e| wd.text(&e)).is_some_and(|t| t.starts_with(&want))
    });
    assert!(filtered, "filtered to Odegard's games {want}");
    wd.exec("document.getElementById('f-clear').click()");
    // The game view: a review draws its graph; a click on a point goes to that ply.
    wd.exec("document.getElementById('review').click()");
    wd.wait_for(r#"#graph circle.ply[data-ply="3"]"#);
    wd.exec("document.querySelector('#graph circle.ply[data-ply=\"3\"]').dispatchEvent(new MouseEvent('click'))");
    assert!(
        wait_until(|| wd.find("#line a.current").map(|e| wd.text(&e)) == Some("d6".into())),
        "a click on ply 3's point shows the position before it (after d6)"
    );
    // The repertoire panel: a tree of lines, starting f5.
    wd.exec("const s = document.getElementById('rcolor'); s.value = 'black'; s.dispatchEvent(new Event('change'))");
    assert_eq!(wd.text(&wd.wait_for("#tree a")), "f5");
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shoot = |name: &str| {
        let png = wd.cmd("GET", "/screenshot", serde_json::Value::Null);
        let path = shots.join(name);
        std::fs::write(&path, base64_decode(png.as_str().unwrap())).unwrap();
        eprintln!("screenshot: {}", path.display());
    };
    // Tall enough to hold the game view and the repertoire below the board.
    wd.cmd("POST", "/window/rect", serde_json::json!({"width": 1280, "height": 1700}));
    std::thread::sleep(Duration::from_millis(300));
    shoot("desktop.png");
    // A phone's width: nothing wider than the screen.
    wd.cmd("POST", "/window/rect", serde_json::json!({"width": 390, "height": 844}));
    std::thread::sleep(Duration::from_millis(300));
    let overflow = wd.exec("return document.documentElement.scrollWidth - window.innerWidth");
    let wide = wd.exec(
        "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className)",
    );
    assert!(overflow.as_i64().unwrap() <= 0, "the page is {overflow} px wider than a phone: {wide}");
    shoot("phone.png");
    wd.cmd("DELETE", "", serde_json::Value::Null);
    let _ = driver.kill();
    let _ = driver.wait();
    stop.stop();
    handle.join().unwrap();
}

/// Whether `f` becomes true within ten seconds (a page's fetches are asynchronous).
fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    (0..100).any(|_| {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    })
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let v: Vec<u32> = chunk.iter().map(|&c| val(c) as u32).collect();
        let n = v.iter().enumerate().fold(0u32, |acc, (i, &x)| acc | x << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
