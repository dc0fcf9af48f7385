//! The crate's seedable generator: splitmix64, for the draws of self-play and of
//! synthetic games. Fast, 64 bits of state, and a stream per seed, so that a game's
//! draws depend only on its seed and index (and batches concatenate to the whole run).

/// splitmix64 (Steele, Lea and Flood): the increment and finaliser of `SplittableRandom`.
pub(crate) struct Draws(pub(crate) u64);

impl Draws {
    /// The stream of game `index` under `seed` (a multiplier spreads neighbouring
    /// indices across the state space).
    pub(crate) fn for_game(seed: u64, index: u64) -> Draws {
        Draws(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `0..n` (0 when `n` is 0). The modulo's bias is below n/2^64.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// A draw in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::Draws;

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut d = Draws::for_game(7, 3);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[d.below(6) as usize] += 1;
        }
        // 10,000 expected each; 5 standard deviations is ±500.
        assert!(counts.iter().all(|&c| (9_500..=10_500).contains(&c)), "{counts:?}");
        assert_eq!(Draws(1).below(0), 0);
    }
}
