//! GGF's syntax, the Generic Game Format of GGS and NBoard: a game is `(;` then tags
//! `NAME[value]` (a `\` escapes the next character) then `;)`. This module reads the
//! tags of one game and says where each is; what the tags mean is for its callers
//! (an archive of many games in [`super::text`], one game from a GUI in the engine).

use std::borrow::Cow;

use crate::position::{parse_side, parse_squares, Position};
use crate::thor::TextFault;

/// Text that is not a well-formed GGF game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("GGF byte {offset}: {fault}")]
#[non_exhaustive]
pub struct GgfError {
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong.
    pub fault: TextFault,
}

pub(crate) fn err(offset: usize, fault: TextFault) -> GgfError {
    GgfError { offset, fault }
}

/// One `NAME[value]` of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tag<'a> {
    /// The name, e.g. `PB`.
    pub name: &'a str,
    /// The value with escapes removed.
    pub value: Cow<'a, str>,
    /// Byte offset of the value in the text.
    pub offset: usize,
}

/// The tags of the first game at or after `from`, and the offset just past its `;)`.
pub(crate) fn tags(text: &str, from: usize) -> Result<(Vec<Tag<'_>>, usize), GgfError> {
    let start = text.get(from..).and_then(|t| t.find("(;")).ok_or_else(|| err(from, TextFault::NoGameStart))? + from;
    let bytes = text.as_bytes();
    let mut i = start + 2;
    let mut out = Vec::with_capacity(72);
    loop {
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if i >= bytes.len() {
            return Err(err(i, TextFault::Unterminated));
        }
        if bytes[i..].starts_with(b";)") {
            return Ok((out, i + 2));
        }
        let name_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            i += 1;
        }
        if i == name_start || bytes.get(i) != Some(&b'[') {
            return Err(err(name_start, TextFault::ExpectedTag));
        }
        let name = &text[name_start..i];
        let value_start = i + 1;
        let mut j = value_start;
        let mut escaped = false;
        loop {
            match bytes.get(j) {
                None => return Err(err(value_start, TextFault::UnclosedTag)),
                Some(b']') => break,
                Some(b'\\') => {
                    escaped = true;
                    j += 2;
                }
                Some(_) => j += 1,
            }
        }
        // `\` before a multi-byte character leaves `j` inside it; find the `]` on a
        // character boundary.
        let raw = text.get(value_start..j).ok_or_else(|| err(value_start, TextFault::BadEscape))?;
        let value = if escaped { Cow::Owned(unescape(raw)) } else { Cow::Borrowed(raw) };
        out.push(Tag { name, value, offset: value_start });
        i = j + 1;
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// `s` with `\` and `]` escaped, ready for a tag's value.
pub(crate) fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

/// Parses the board of a `BO[...]` tag: the size `8`, 64 squares and the side to move
/// in the board-text alphabet ([`crate::position::square_char`]).
pub(crate) fn parse_board(value: &str, offset: usize) -> Result<Position, GgfError> {
    let value = value.trim_start();
    let rest = match value.split_once(char::is_whitespace) {
        Some(("8", rest)) => rest,
        _ if value.is_empty() => return Err(err(offset, TextFault::EmptyBoardTag)),
        _ => return Err(err(offset, TextFault::BoardSize)),
    };
    let (black, white, rest) = parse_squares(rest).map_err(|e| err(offset, TextFault::Board(e)))?;
    let mut words = rest.split_whitespace();
    let side = match (words.next(), words.next()) {
        (Some(w), None) => parse_side(w).map_err(|e| err(offset, TextFault::Board(e)))?,
        (None, _) => return Err(err(offset, TextFault::NoSide)),
        (Some(_), Some(_)) => return Err(err(offset, TextFault::AfterSide)),
    };
    Ok(Position::from_colors(black, white, side).expect("one colour per square"))
}

/// The offset just past the `;)` that ends the game starting at `from` (which holds
/// `(;`), or `None` while the text so far does not close it. Brackets and escapes are
/// followed so that `;)` inside a value does not end the game.
pub(crate) fn game_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut in_value = false;
    let mut i = from + 2;
    while i < bytes.len() {
        match (in_value, bytes[i]) {
            (true, b'\\') => i += 1,
            (true, b']') => in_value = false,
            (false, b'[') => in_value = true,
            (false, b';') if bytes.get(i + 1) == Some(&b')') => return Some(i + 2),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_read_with_escapes_and_offsets() {
        let text = r"x (;GM[Othello]PB[a\]b]C[ends ;) here]B[f5//1.0];) y";
        let (tags, end) = tags(text, 0).unwrap();
        let names: Vec<_> = tags.iter().map(|t| (t.name, t.value.as_ref())).collect();
        assert_eq!(names, [("GM", "Othello"), ("PB", "a]b"), ("C", "ends ;) here"), ("B", "f5//1.0")]);
        assert_eq!(&text[end..], " y");
        assert_eq!(tags[0].offset, text.find("Othello").unwrap());
        assert_eq!(game_end(text.as_bytes(), 2), Some(end));
        assert_eq!(game_end(b"(;PB[;)]", 0), None);
    }

    #[test]
    fn broken_games_name_the_byte() {
        assert_eq!(tags("(;GM[Othello]PB[x", 0).unwrap_err().offset, 16);
        assert_eq!(tags("(;GM[Othello]B[F5]", 0).unwrap_err().fault, TextFault::Unterminated);
        assert_eq!(tags("(;GM[Othello]=[x];)", 0).unwrap_err().fault, TextFault::ExpectedTag);
        assert!(tags("nothing", 0).is_err());
        assert_eq!(tags("(;C[\\é];)", 0).unwrap().0[0].value, "é");
    }
}
