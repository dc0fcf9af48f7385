//! Results counted over games: the win rate, in which a draw counts half a win,
//! defined once for the database's statistics, the book's move list and engine matches.

/// The share of the points won: `(wins + draws / 2) / games`, in `[0, 1]`; `None`
/// without games.
pub(crate) fn win_rate(wins: u64, draws: u64, games: u64) -> Option<f64> {
    (games > 0).then(|| (wins as f64 + draws as f64 / 2.0) / games as f64)
}

#[cfg(test)]
mod tests {
    use super::win_rate;

    #[test]
    fn a_draw_is_half_a_win() {
        assert_eq!(win_rate(0, 0, 0), None);
        assert_eq!(win_rate(3, 2, 8), Some(0.5));
        assert_eq!(win_rate(5, 0, 5), Some(1.0));
        assert_eq!(win_rate(0, 4, 4), Some(0.5));
    }
}
