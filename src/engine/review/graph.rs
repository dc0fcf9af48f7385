//! The value graph of a review: the position's value along the game from black's
//! side, each stretch drawn in its source's colour (book, search, exact), the moves
//! that lost most marked. Written as a standalone SVG that the explorer shows as it
//! is: each point carries `data-ply` and a tooltip, so a page can make it clickable.

use std::fmt::Write;

use super::{GameReview, PlyReview, ValueSource};
use crate::board::Color;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 36.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 34.0;

fn colour(source: ValueSource) -> &'static str {
    match source {
        ValueSource::Book => "#2e7d32",
        ValueSource::Search => "#1565c0",
        ValueSource::Exact => "#6a1b9a",
    }
}

/// The value before `p` for black.
fn for_black(p: &PlyReview) -> i32 {
    if p.side_to_move == Color::Black {
        p.value
    } else {
        -p.value
    }
}

impl GameReview {
    /// The value along the game (black's view: above the middle line black is ahead)
    /// as an SVG document.
    pub fn value_graph_svg(&self) -> String {
        let last_ply = self.plies.last().map_or(60, |p| p.ply).max(2);
        // The vertical scale: the largest value shown, rounded up to 8 discs.
        let extent = self.plies.iter().map(|p| for_black(p).abs()).max().unwrap_or(0).clamp(8, 64);
        let extent = f64::from((extent + 7) / 8 * 8);
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let x = |ply: usize| LEFT + plot_w * (ply as f64 - 1.0) / (last_ply as f64 - 1.0);
        let y = |v: i32| TOP + plot_h * (1.0 - (f64::from(v) + extent) / (2.0 * extent));
        let mut svg = String::new();
        let _ = write!(
            svg,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="11" role="img" aria-label="value along the game, black's view">"##
        );
        let _ = write!(svg, r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>"##);
        // Grid: the middle line, the extremes and halves, labelled.
        for v in [-extent, -extent / 2.0, 0.0, extent / 2.0, extent] {
            let yv = TOP + plot_h * (1.0 - (v + extent) / (2.0 * extent));
            let stroke = if v == 0.0 { "#555" } else { "#ddd" };
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" y1="{yv:.1}" x2="{:.1}" y2="{yv:.1}" stroke="{stroke}"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555">{:+}</text>"##,
                WIDTH - RIGHT,
                LEFT - 4.0,
                yv + 4.0,
                v as i32
            );
        }
        for ply in (10..=last_ply).step_by(10) {
            let _ = write!(
                svg,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">{ply}</text>"##,
                x(ply),
                HEIGHT - BOTTOM + 14.0
            );
        }
        if let Some(left) = self.left_book_at {
            let _ = write!(
                svg,
                r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1:.1}" stroke="#2e7d32" stroke-dasharray="4 3"><title>left the book at ply {left}</title></line>"##,
                x(left),
                HEIGHT - BOTTOM
            );
        }
        // Each stretch in the colour of the values it joins to.
        for pair in self.plies.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let _ = write!(
                svg,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="2"/>"##,
                x(a.ply),
                y(for_black(a)),
                x(b.ply),
                y(for_black(b)),
                colour(b.source)
            );
        }
        for p in &self.plies {
            let worst = self.worst.contains(&p.ply);
            let (r, fill) = if worst { (4.5, "#c62828") } else { (2.5, colour(p.source)) };
            let lost = if p.loss > 0 { format!(", lost {} ({} was best)", p.loss, p.best_move) } else { String::new() };
            let _ = write!(
                svg,
                r##"<circle class="ply" data-ply="{}" cx="{:.1}" cy="{:.1}" r="{r}" fill="{fill}"><title>{} {} {}: {:+} for black, {} {}{lost}</title></circle>"##,
                p.ply,
                x(p.ply),
                y(for_black(p)),
                p.ply,
                p.side_to_move,
                p.mv,
                for_black(p),
                p.source,
                p.trust
            );
        }
        // Legend.
        let mut lx = LEFT;
        for (source, name) in
            [(ValueSource::Book, "book"), (ValueSource::Search, "search"), (ValueSource::Exact, "exact")]
        {
            let _ = write!(
                svg,
                r##"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{:.1}">{name}</text>"##,
                HEIGHT - 12.0,
                colour(source),
                lx + 14.0,
                HEIGHT - 3.0
            );
            lx += 70.0;
        }
        let _ = write!(
            svg,
            r##"<circle cx="{:.1}" cy="{:.1}" r="4.5" fill="#c62828"/><text x="{:.1}" y="{:.1}">lost most</text>"##,
            lx + 5.0,
            HEIGHT - 7.0,
            lx + 14.0,
            HEIGHT - 3.0
        );
        svg.push_str("</svg>\n");
        svg
    }
}
