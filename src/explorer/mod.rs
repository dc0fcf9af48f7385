//! The opening explorer: one page and a JSON API over the Thor games, the book and the
//! engine. [`Explorer`] answers requests as plain data (`respond` takes a method and a
//! URL and returns a status, a content type and a body), so it is tested without a
//! network; [`serve`] puts it behind a local HTTP server.
//!
//! The API (documented in docs/explorer.md):
//! - `GET /api/position?moves=f5d6c3` or `?board=TEXT`, optional `&level=N`: the
//!   position, its opening name, the Thor statistics (as `thor stats --json`), the book
//!   (as `book query --json`, its line turned to the board's orientation), the engine's
//!   scores at level N, and the SVG diagram;
//! - `GET /api/games?moves=…[&sort=recent|oldest|year|black|white|tournament|score]
//!   [&limit=N][&offset=K]`: the games reaching the position (as `thor games --json`,
//!   passes written);
//!
//! Both take the game filters of `thor stats` and `thor games`, spelt as the CLI
//! spells them: `player` (a substring of the name), `as` (`black`, `white` or
//! `either`, the colour the player had), `tournament` (a substring) and `years`
//! (`1990..2000`, `1990`, `1990..`, `..2000`); the answer is the CLI's for the same
//! filters.
//! - `GET /api/svg?moves=…`: the diagram alone;
//! - `GET /api/review?moves=…[&level=N]`: the game's review (as `thorbook review
//!   --json`: the plies, the summary) at level N (5 by default) with the book, and its
//!   value graph as SVG; analyses are kept in the explorer's store;
//! - `GET /api/repertoire?color=black|white[&error=R][&min_games=G][&max_ply=P]`: the
//!   book's repertoire for that colour (as `thorbook book repertoire --json`).
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

mod server;

pub use server::{serve, ServeOptions};

use std::time::Duration;

use serde::Serialize;

use crate::board::Squares;
use crate::book::query::{query, BookQuery};
use crate::book::Book;
use crate::book::BookSource;
use crate::engine::review::{review_game, AnalysisStore};
use crate::engine::{Engine, EngineConfig};
use crate::fileio::Bytes;
use crate::openings;
use crate::position::Position;
use crate::search::{Level, Limits, Settings};
use crate::square::{format_moves, parse_move_sequence, Move};
use crate::svg::Diagram;
use crate::symmetry::Transform;
use crate::thor::export::GameJson;
use crate::thor::{GameFilter, PositionStats, SortKey, ThorDatabase};

/// The page, with its script and style inline: nothing is fetched from elsewhere.
const PAGE: &str = include_str!("page.html");

/// Longest accepted request target, in bytes.
pub(crate) const MAX_URL: usize = 2048;
/// Most games one `/api/games` answer lists.
pub(crate) const MAX_GAMES: usize = 200;
/// The strongest engine level a request may ask for by default (level 9 takes about a
/// second for all moves of a midgame position; deeper levels would let one click hold a
/// worker for minutes). [`Explorer::with_max_engine_level`] lowers it.
pub(crate) const MAX_ENGINE_LEVEL: u8 = 9;
/// The longest an engine search for one request may take by default: a position near
/// the level's exact threshold can take longer than its midgame moves, and a worker
/// must come back. [`Explorer::with_engine_time`] changes it.
pub const ENGINE_TIME: Duration = Duration::from_secs(5);

/// An answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
}

impl Reply {
    fn json(status: u16, value: &impl Serialize) -> Reply {
        let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{\"error\":\"serialisation failed\"}".to_vec());
        Reply { status, content_type: "application/json", body }
    }

    fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(status, &serde_json::json!({ "error": message.into() }))
    }
}

/// What the explorer serves from.
pub struct Explorer {
    db: ThorDatabase,
    book: Option<Book<Bytes>>,
    max_engine_level: u8,
    engine_time: Duration,
    /// Engines for engine scores, reused across requests (a table and a thread pool are
    /// costly to make): a request takes one, clears its table (the same request gets
    /// the same answer) and puts it back; concurrent requests make more.
    engines: std::sync::Mutex<Vec<Engine>>,
    /// The book reviews are made with (their engines open it themselves).
    review_book: BookSource,
    /// Reviews' analyses, kept across requests.
    review_store: AnalysisStore,
    /// Engines for reviews, with the review book, reused as `engines` are.
    reviewers: std::sync::Mutex<Vec<Engine>>,
}

/// The level a review is made at when the request names none: a game in a few seconds.
pub(crate) const REVIEW_LEVEL: u8 = 5;

/// `/api/position`'s answer.
#[derive(Serialize)]
pub(crate) struct PositionReply {
    /// Board text.
    pub board: String,
    /// `black` or `white`.
    pub side_to_move: String,
    /// The moves from the start, when the position was given by moves.
    pub moves: Option<String>,
    /// The last of them.
    pub last_move: Option<String>,
    /// Legal moves.
    pub legal_moves: Vec<String>,
    /// Black's discs.
    pub black_discs: u32,
    /// White's discs.
    pub white_discs: u32,
    /// The side to move must pass.
    pub must_pass: bool,
    /// Neither side can move.
    pub game_over: bool,
    /// The most specific named opening.
    pub opening: Option<&'static str>,
    /// Thor statistics, as `thor stats --json`.
    pub thor: PositionStats,
    /// The book's view, as `book query --json` (null without a book).
    pub book: Option<BookQuery>,
    /// The engine's scores at the level asked for.
    pub engine: Option<EngineReply>,
    /// The board as SVG, legal moves marked.
    pub svg: String,
}

/// The engine's view of a position.
#[derive(Serialize)]
pub(crate) struct EngineReply {
    /// Level used.
    pub level: u8,
    /// Depth reached.
    pub depth: u32,
    /// Solved to the end.
    pub exact: bool,
    /// The request's time bound ended the search before the level's depth or exact
    /// solve: the scores are those of the deepest finished iteration.
    pub cut_short: bool,
    /// Seconds searched.
    pub seconds: f64,
    /// Every legal move with its score, best first.
    pub moves: Vec<EngineMoveReply>,
}

/// One move's engine score.
#[derive(Serialize)]
pub(crate) struct EngineMoveReply {
    /// The move.
    #[serde(rename = "move")]
    pub mv: String,
    /// Score for the side to move.
    pub score: i32,
}

/// A game in `/api/games`: its index in the loaded database, then the fields
/// of an exported JSON line, its moves with passes (the page replays them).
#[derive(Serialize)]
pub(crate) struct GameReply {
    /// Index in the loaded database.
    pub index: usize,
    /// The game.
    #[serde(flatten)]
    pub game: GameJson,
}

/// The position a request names, with the moves that led to it when given.
struct Target {
    pos: Position,
    moves: Option<Vec<Move>>,
}

/// Decodes `%xx` and `+` in a query component.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                out.push(v);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Decoded query parameters.
struct Params(Vec<(String, String)>);

impl Params {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// The query parameters of a URL, decoded; `Err` names the first bad one.
fn parameters(query: &str) -> Result<Params, String> {
    let list: Result<Vec<(String, String)>, String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            match (percent_decode(k), percent_decode(v)) {
                (Some(k), Some(v)) => Ok((k, v)),
                _ => Err(format!("parameter `{p}` is not valid percent-encoded UTF-8")),
            }
        })
        .collect();
    list.map(Params)
}

impl Explorer {
    /// An explorer over an indexed database and an optional book.
    pub fn new(db: ThorDatabase, book: Option<Book<Bytes>>) -> Explorer {
        Explorer {
            db,
            book,
            max_engine_level: MAX_ENGINE_LEVEL,
            engine_time: ENGINE_TIME,
            engines: std::sync::Mutex::new(Vec::new()),
            review_book: BookSource::None,
            review_store: AnalysisStore::in_memory(),
            reviewers: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The same explorer reviewing games with the book of `source` (the one it shows,
    /// normally: reviews open it themselves) and keeping their analyses in `store`.
    /// Without it, reviews use no book and keep analyses in memory.
    pub fn with_reviews(self, source: BookSource, store: AnalysisStore) -> Explorer {
        Explorer { review_book: source, review_store: store, reviewers: std::sync::Mutex::new(Vec::new()), ..self }
    }

    /// The same explorer stopping each engine search after `time` (at least 1 ms).
    pub fn with_engine_time(self, time: Duration) -> Explorer {
        Explorer { engine_time: time.max(Duration::from_millis(1)), ..self }
    }

    /// The same explorer answering engine levels up to `level` only (at most
    /// level 9; 0 turns engine scores off: a `level` parameter is then refused).
    pub fn with_max_engine_level(self, level: u8) -> Explorer {
        Explorer { max_engine_level: level.min(MAX_ENGINE_LEVEL), ..self }
    }

    /// Games loaded.
    pub(crate) fn games(&self) -> usize {
        self.db.games.len()
    }

    /// Positions in the Thor index.
    pub(crate) fn index_len(&self) -> usize {
        self.db.index_len()
    }

    /// Answers one request. Never panics on any input; bad requests get 4xx with a message.
    pub fn respond(&self, method: &str, url: &str) -> Reply {
        if url.len() > MAX_URL {
            return Reply::error(414, format!("request target of {} bytes, at most {MAX_URL}", url.len()));
        }
        if method != "GET" && method != "HEAD" {
            return Reply::error(405, format!("method {method} not allowed: the explorer answers GET"));
        }
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let params = match parameters(query) {
            Ok(p) => p,
            Err(e) => return Reply::error(400, e),
        };
        match path {
            "/" | "/index.html" => {
                Reply { status: 200, content_type: "text/html; charset=utf-8", body: PAGE.as_bytes().to_vec() }
            }
            "/api/position" => match self.target(&params).and_then(|t| Ok((t, game_filter(&params)?))) {
                Ok((t, filter)) => self.position(t, &filter, params.get("level")),
                Err(e) => Reply::error(400, e),
            },
            "/api/games" => match self.target(&params).and_then(|t| Ok((t, game_filter(&params)?))) {
                Ok((t, filter)) => self.games_reply(
                    GameFilter { position: Some(t.pos), ..filter },
                    params.get("sort"),
                    params.get("limit"),
                    params.get("offset"),
                ),
                Err(e) => Reply::error(400, e),
            },
            "/api/svg" => match self.target(&params) {
                Ok(t) => Reply {
                    status: 200,
                    content_type: "image/svg+xml",
                    body: Diagram::with_legal_moves(t.pos, t.moves.and_then(|m| m.last().copied()))
                        .to_svg()
                        .into_bytes(),
                },
                Err(e) => Reply::error(400, e),
            },
            "/api/review" => match self.target(&params) {
                Ok(Target { moves: Some(moves), .. }) => self.review(&moves, params.get("level")),
                Ok(_) => Reply::error(400, "a review needs the game's moves, not a board"),
                Err(e) => Reply::error(400, e),
            },
            "/api/repertoire" => self.repertoire(&params),
            _ => Reply::error(404, format!("no such page: {path}")),
        }
    }

    fn target(&self, params: &Params) -> Result<Target, String> {
        match (params.get("moves"), params.get("board")) {
            (Some(_), Some(_)) => Err("give `moves` or `board`, not both".into()),
            (None, Some(b)) => {
                let pos = Position::parse_board_text(b).map_err(|e| format!("board: {e}"))?;
                Ok(Target { pos, moves: None })
            }
            (moves, None) => {
                let moves = parse_move_sequence(moves.unwrap_or("")).map_err(|e| format!("moves: {e}"))?;
                let pos = Position::START.play_sequence(&moves).map_err(|e| format!("moves: {e}"))?;
                Ok(Target { pos, moves: Some(moves) })
            }
        }
    }

    fn position(&self, t: Target, filter: &GameFilter, level: Option<&str>) -> Reply {
        // No level asked for: no engine scores.
        let level = match level.map(|l| self.level(Some(l), 0)) {
            None => None,
            Some(Ok(l)) => l,
            Some(Err(e)) => return Reply::error(400, e),
        };
        let pos = t.pos;
        let opening = match &t.moves {
            Some(m) => openings::name_line(m),
            None => openings::at(&pos.board),
        };
        let engine = match level {
            Some(l) if !pos.board.is_game_over() => match self.engine_scores(&pos, l) {
                Ok(e) => Some(e),
                Err(e) => return Reply::error(500, e),
            },
            _ => None,
        };
        let last = t.moves.as_ref().and_then(|m| m.last().copied());
        let thor = self.db.stats(&pos, filter);
        let book = self.book.as_ref().map(|b| {
            let mut q = query(b, &pos);
            q.line = line_in_board_orientation(&pos, &q.line, &thor);
            q
        });
        let reply = PositionReply {
            board: pos.to_board_text(),
            side_to_move: pos.side.to_string(),
            moves: t.moves.as_ref().map(|m| format_moves(m)),
            last_move: last.map(|m| m.to_string()),
            legal_moves: Squares(pos.board.legal_moves()).map(|s| s.to_string()).collect(),
            black_discs: pos.black().count_ones(),
            white_discs: pos.white().count_ones(),
            must_pass: pos.board.must_pass(),
            game_over: pos.board.is_game_over(),
            opening: opening.map(|o| o.name),
            thor,
            book,
            engine,
            svg: Diagram::with_legal_moves(pos, last).to_svg(),
        };
        Reply::json(200, &reply)
    }

    /// The level a request names (at most the server's maximum), or `default`.
    fn level(&self, level: Option<&str>, default: u8) -> Result<Option<Level>, String> {
        let max = self.max_engine_level;
        match level.map(|l| l.parse::<u8>().ok().filter(|&n| n <= max).and_then(|n| Level::new(n).ok())) {
            None if max == 0 => Ok(None),
            None => Ok(Level::new(default.min(max)).ok()),
            Some(Some(l)) => Ok(Some(l)),
            Some(None) if max == 0 => Err("engine scores are turned off on this server".into()),
            Some(None) => Err(format!("level must be from 1 to {max}")),
        }
    }

    fn review(&self, moves: &[Move], level: Option<&str>) -> Reply {
        let level = match self.level(level, REVIEW_LEVEL) {
            Ok(Some(l)) => l,
            Ok(None) => return Reply::error(400, "engine scores are turned off on this server"),
            Err(e) => return Reply::error(400, e),
        };
        let pooled = self.reviewers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let mut engine = match pooled {
            Some(engine) => engine,
            None => {
                let search = Settings { hash_mib: 16, threads: 1, ..Settings::default() };
                let config = EngineConfig { search, book: self.review_book.clone(), ..EngineConfig::default() };
                match Engine::new(config) {
                    Ok(e) => e,
                    Err(e) => return Reply::error(500, e.to_string()),
                }
            }
        };
        // The level's depth and exact threshold, each position's search bounded as an
        // engine score's is.
        let strength = crate::search::Strength { time: Some(self.engine_time), ..Settings::at_level(level).strength() };
        engine.set_strength(strength);
        let reviewed = review_game(&mut engine, &Position::START, moves, Some(&self.review_store), &|_| {});
        self.reviewers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(engine);
        match reviewed {
            Ok(r) => Reply::json(
                200,
                &serde_json::json!({
                    "level": level.number(),
                    "plies": r.plies,
                    "summary": r.summary_json(),
                    "svg": r.value_graph_svg(),
                }),
            ),
            Err(e) => Reply::error(400, format!("moves: {e}")),
        }
    }

    fn repertoire(&self, params: &Params) -> Reply {
        use crate::book::repertoire::{repertoire, RepertoireConfig};
        let Some(book) = &self.book else { return Reply::error(404, "this explorer has no book") };
        let number = |name: &str, default: i64| -> Result<i64, String> {
            params
                .get(name)
                .filter(|v| !v.is_empty())
                .map_or(Ok(default), |v| v.parse::<i64>().map_err(|_| format!("{name} must be a number, got `{v}`")))
        };
        let config = (|| -> Result<RepertoireConfig, String> {
            let color = match params.get("color") {
                Some("black") => crate::board::Color::Black,
                Some("white") => crate::board::Color::White,
                _ => return Err("color must be black or white".into()),
            };
            let error = i32::try_from(number("error", 2)?).map_err(|_| "error is out of range".to_string())?;
            let max_ply = usize::try_from(number("max_ply", 20)?).map_err(|_| "max_ply is out of range".to_string())?;
            let min_games = match params.get("min_games").filter(|v| !v.is_empty()) {
                None => None,
                Some(_) => {
                    Some(u32::try_from(number("min_games", 0)?).map_err(|_| "min_games is out of range".to_string())?)
                }
            };
            let config = RepertoireConfig { color, error, min_games, max_ply };
            config.validate().map_err(|e| e.to_string())?;
            Ok(config)
        })();
        let config = match config {
            Ok(c) => c,
            Err(e) => return Reply::error(400, e),
        };
        let mut r = repertoire(book, &config);
        r.turn_to_f5();
        Reply::json(200, &r.to_json(&config))
    }

    fn engine_scores(&self, pos: &Position, level: Level) -> Result<EngineReply, String> {
        // The level's depth and exact threshold, stopped at the request's bound.
        let strength = Settings::at_level(level).strength();
        let limits = Limits { time: Some(self.engine_time), ..strength.limits(&pos.board) };
        let pooled = self.engines.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
        let mut engine = match pooled {
            Some(engine) => engine,
            None => {
                let search = Settings { hash_mib: 16, ..Settings::default() };
                let config = EngineConfig { search, book: crate::book::BookSource::None, ..EngineConfig::default() };
                Engine::new(config).map_err(|e| e.to_string())?
            }
        };
        engine.new_game();
        let a = engine.analyze(pos, Some(limits));
        self.engines.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(engine);
        let complete = a.search.exact || (!limits.exact && limits.depth.is_some_and(|d| a.search.depth >= d));
        Ok(EngineReply {
            level: level.number(),
            depth: a.search.depth,
            exact: a.search.exact,
            cut_short: !complete,
            seconds: a.search.elapsed.as_secs_f64(),
            moves: a.search.moves.iter().map(|m| EngineMoveReply { mv: m.mv.to_string(), score: m.score }).collect(),
        })
    }

    fn games_reply(&self, filter: GameFilter, sort: Option<&str>, limit: Option<&str>, offset: Option<&str>) -> Reply {
        let limit = match limit.map(str::parse::<usize>) {
            None => 20,
            Some(Ok(n)) if (1..=MAX_GAMES).contains(&n) => n,
            _ => return Reply::error(400, format!("limit must be from 1 to {MAX_GAMES}")),
        };
        let offset = match offset.map(str::parse::<usize>) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(_)) => return Reply::error(400, "offset must be a number"),
        };
        let mut ids = self.db.select(&filter);
        match sort.unwrap_or("recent") {
            // Load order is by file (year) then record: the last are the most recent.
            "recent" => ids.sort_by_key(|&g| std::cmp::Reverse((self.db.own_game(g).year, g))),
            "oldest" => ids.sort_by_key(|&g| (self.db.own_game(g).year, g)),
            // `thor games --sort KEY`'s orders, the same stable sort of the same list.
            key => match key.parse::<SortKey>() {
                Ok(key) => self.db.sort_games(&mut ids, key),
                Err(_) => {
                    return Reply::error(
                        400,
                        format!("sort must be recent, oldest, year, black, white, tournament or score, got `{key}`"),
                    )
                }
            },
        }
        let total = ids.len();
        let games: Vec<GameReply> = ids
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|g| GameReply { index: g.index(), game: self.db.game_json(self.db.own_game(g), true) })
            .collect();
        Reply::json(200, &serde_json::json!({ "total": total, "offset": offset, "games": games }))
    }
}

/// The game filters of a request (`player`, `as`, `tournament`, `years`), as the CLI's
/// `--player`, `--as`, `--tournament` and `--years` read them; an empty value is no
/// condition (a form's empty field).
fn game_filter(params: &Params) -> Result<GameFilter, String> {
    let text = |name: &str| params.get(name).map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
    let player_color = match params.get("as").map(str::trim).filter(|v| !v.is_empty()) {
        None | Some("either") => None,
        Some("black") => Some(crate::board::Color::Black),
        Some("white") => Some(crate::board::Color::White),
        Some(other) => return Err(format!("as must be black, white or either, got `{other}`")),
    };
    let years = text("years").map(|y| crate::thor::parse_years(&y).map_err(|e| format!("years: {e}"))).transpose()?;
    Ok(GameFilter { player: text("player"), player_color, tournament: text("tournament"), years, position: None })
}

/// The book's `line` from `pos`, turned by a symmetry of `pos` itself (at the start,
/// the four first moves are one) so that it begins with the move the games shown play
/// most, and at the start with f5 when none does (the Thor convention): the line the
/// board and the moves table show. A position without symmetries keeps its line.
fn line_in_board_orientation(pos: &Position, line: &[Move], stats: &PositionStats) -> Vec<Move> {
    let f5 = Move::Place(crate::square::Square::new(37)); // f5: column f (5), row 5 (4)
    let games = |mv: Move| stats.moves.iter().find(|m| m.mv == mv).map_or(0, |m| m.games);
    Transform::ALL
        .into_iter()
        .filter(|t| t.board(&pos.board) == pos.board)
        .map(|t| line.iter().map(|&m| t.apply_move(m)).collect::<Vec<Move>>())
        // The first of the best: the identity's own line among equals.
        .rev()
        .max_by_key(|l| l.first().map(|&m| (games(m), m == f5)))
        .unwrap_or_else(|| line.to_vec())
}
