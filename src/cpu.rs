//! Which instructions this CPU has, asked once at run time, and the copies of the hot
//! kernels that the answer chooses between.
//!
//! A build of thorbook targets x86-64-v2 (SSE4.2 and POPCNT: every x86-64 CPU since
//! about 2010; `.cargo/config.toml`), so the same binary or wheel runs wherever it is
//! copied. Move generation, flips and the evaluation's vector updates run much faster
//! with wider vectors and the BMI instructions: perft takes half the time built for
//! x86-64-v3 (AVX2, BMI1/2, LZCNT) as for v2, and FFO #20–39 three quarters
//! (`docs/research/2026-12-06-portable-builds.md`). So each hot kernel is compiled
//! three times by [`dispatched!`] — for the baseline, for x86-64-v3 and for x86-64-v4
//! (AVX-512) — and the copy this CPU can run is called, chosen by one relaxed load of a
//! cached answer and a predictable branch. This is how memchr and ripgrep choose at
//! run time; the kernels are the functions a native build does not inline either
//! (legal moves, flips, the pattern indices and their update, a leaf's evaluation), so
//! the choice costs a branch where a native build has a call.

use std::sync::atomic::{AtomicU8, Ordering};

/// What the CPU runs, from [`Level`]; 0 until first asked.
static LEVEL: AtomicU8 = AtomicU8::new(0);
/// Whether the CPU runs `pext` fast (see [`fast_pext`]): 0 unknown, 1 no, 2 yes.
static FAST_PEXT: AtomicU8 = AtomicU8::new(0);

/// The copies of the hot kernels, from the slowest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Level {
    /// The build's own target (x86-64-v2 on x86-64; any other architecture's default).
    Baseline = 1,
    /// x86-64-v3: AVX, AVX2, BMI1, BMI2, FMA, LZCNT, MOVBE, POPCNT (Intel Haswell, AMD
    /// Excavator and later).
    V3 = 2,
    /// x86-64-v4: v3 and AVX-512 F, BW, CD, DQ and VL (Intel Skylake-X, AMD Zen 4 and
    /// later).
    V4 = 3,
}

impl Level {
    /// Its name, as `thorbook --version` and `THORBOOK_CPU` spell it.
    #[cfg(feature = "cli")]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::V3 => "x86-64-v3",
            Level::V4 => "x86-64-v4",
        }
    }

    /// The level a name spells.
    #[cfg(feature = "cli")]
    pub(crate) fn from_name(name: &str) -> Option<Level> {
        [Level::Baseline, Level::V3, Level::V4].into_iter().find(|l| l.name() == name)
    }
}

/// The copies this CPU runs. Always [`Level::Baseline`] off x86-64.
#[inline(always)]
pub(crate) fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        3 => Level::V4,
        2 => Level::V3,
        1 => Level::Baseline,
        _ => detect(),
    }
}

#[cold]
#[inline(never)]
fn detect() -> Level {
    let found = cpu_level();
    // A racing `cap` wins: only an unknown answer is replaced.
    let _ = LEVEL.compare_exchange(0, found as u8, Ordering::Relaxed, Ordering::Relaxed);
    level()
}

/// Runs at most the copies of `most` from now on, whatever the CPU has: what the
/// command line does under `THORBOOK_CPU`, to compare the copies in one binary or to
/// rule the fast ones out of a problem. Call it before any search starts.
#[cfg(feature = "cli")]
pub(crate) fn cap(most: Level) {
    let found = cpu_level().min(most);
    LEVEL.store(found as u8, Ordering::Relaxed);
    FAST_PEXT.store(if found >= Level::V3 && !microcoded_pext() { 2 } else { 1 }, Ordering::Relaxed);
}

#[cfg(target_arch = "x86_64")]
fn cpu_level() -> Level {
    macro_rules! all_detected {
        ($($feature:tt),*) => { true $(&& std::is_x86_feature_detected!($feature))* };
    }
    let v3 = all_detected!("avx", "avx2", "bmi1", "bmi2", "fma", "lzcnt", "movbe", "popcnt");
    let v4 = v3 && all_detected!("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl");
    match (v3, v4) {
        (_, true) => Level::V4,
        (true, false) => Level::V3,
        _ => Level::Baseline,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_level() -> Level {
    Level::Baseline
}

/// Whether the evaluation should gather pattern squares with BMI2's `pext`: the CPU
/// runs the v3 copies and executes `pext` in one step. AMD's Zen 1 and Zen 2 (family
/// 0x17) run it in microcode, tens of cycles for the evaluation's 10-square masks,
/// slower than the portable loop; Stockfish's builds avoid it there for the same
/// reason.
#[inline(always)]
pub(crate) fn fast_pext() -> bool {
    match FAST_PEXT.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => detect_fast_pext(),
    }
}

#[cold]
#[inline(never)]
fn detect_fast_pext() -> bool {
    let fast = level() >= Level::V3 && !microcoded_pext();
    let _ = FAST_PEXT.compare_exchange(0, if fast { 2 } else { 1 }, Ordering::Relaxed, Ordering::Relaxed);
    FAST_PEXT.load(Ordering::Relaxed) == 2
}

#[cfg(target_arch = "x86_64")]
fn microcoded_pext() -> bool {
    use std::arch::x86_64::__cpuid;
    // `__cpuid` is a safe function from Rust 1.94 and unsafe before it; the block
    // keeps the crate building on its rust-version (1.89).
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU; leaves 0 and 1 are always defined.
    let (vendor, signature) = unsafe { (__cpuid(0), __cpuid(1)) };
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6E65, 0x444D_4163); // "AuthenticAMD"
    let family = ((signature.eax >> 8) & 0xF) + ((signature.eax >> 20) & 0xFF);
    amd && family < 0x19
}

#[cfg(not(target_arch = "x86_64"))]
fn microcoded_pext() -> bool {
    true
}

/// Defines a hot kernel three times — for the baseline, x86-64-v3 and x86-64-v4 —
/// behind one name that calls the copy this CPU runs ([`level`]).
///
/// The body is written once as an `#[inline(always)]` function; the macro writes the
/// dispatcher (`#[inline(always)]` too: a call costs a load and a branch) and the
/// copies `v3`, `v4` and `base`, each the body compiled with its features. Everything
/// the body inlines is compiled with them too.
///
/// ```ignore
/// dispatched! {
///     /// Legal moves.
///     pub(crate) fn legal_moves(p: u64, o: u64) -> u64 = legal_moves_body / v3, v4, base;
/// }
/// ```
/// where `v3`, `v4` and `base` name the copies (`legal_moves_v3`, …); for methods,
/// `fn name(&self, …) -> T = body / v3, v4, base;` (or `&mut self`).
macro_rules! dispatched {
    // Methods: `&self` and `&mut self` differ only in the receiver, which the inner
    // rule writes wherever the copies take it. (`self` is passed in too: written in
    // the inner rule it would not be the receiver the outer rule's tokens declare.)
    ($(#[$attr:meta])* $vis:vis fn $name:ident(&mut self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty
        = $body:ident / $v3:ident, $v4:ident, $base:ident;) => {
        crate::cpu::dispatched!(@method [&mut self] self $(#[$attr])* $vis fn $name($($arg: $ty),*) -> $ret = $body / $v3, $v4, $base);
    };
    ($(#[$attr:meta])* $vis:vis fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty
        = $body:ident / $v3:ident, $v4:ident, $base:ident;) => {
        crate::cpu::dispatched!(@method [&self] self $(#[$attr])* $vis fn $name($($arg: $ty),*) -> $ret = $body / $v3, $v4, $base);
    };
    (@method [$($recv:tt)+] $s:ident $(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty
        = $body:ident / $v3:ident, $v4:ident, $base:ident) => {
        $(#[$attr])*
        #[inline(always)]
        $vis fn $name($($recv)+ $(, $arg: $ty)*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            match crate::cpu::level() {
                // SAFETY: level() checked at run time that the CPU has every feature
                // the copy is compiled with.
                crate::cpu::Level::V4 => return unsafe { $s.$v4($($arg),*) },
                // SAFETY: as above.
                crate::cpu::Level::V3 => return unsafe { $s.$v3($($arg),*) },
                crate::cpu::Level::Baseline => {}
            }
            $s.$base($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt")]
        fn $v3($($recv)+ $(, $arg: $ty)*) -> $ret {
            $s.$body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        fn $v4($($recv)+ $(, $arg: $ty)*) -> $ret {
            $s.$body($($arg),*)
        }

        fn $base($($recv)+ $(, $arg: $ty)*) -> $ret {
            $s.$body($($arg),*)
        }
    };
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
        = $body:ident / $v3:ident, $v4:ident, $base:ident;) => {
        $(#[$attr])*
        #[inline(always)]
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            match crate::cpu::level() {
                // SAFETY: level() checked at run time that the CPU has every feature
                // the copy is compiled with.
                crate::cpu::Level::V4 => return unsafe { $v4($($arg),*) },
                // SAFETY: as above.
                crate::cpu::Level::V3 => return unsafe { $v3($($arg),*) },
                crate::cpu::Level::Baseline => {}
            }
            $base($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt")]
        fn $v3($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        fn $v4($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }

        fn $base($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }
    };
}

pub(crate) use dispatched;

#[cfg(test)]
mod tests {
    /// The features each copy is compiled with.
    const V3_FEATURES: &str = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt";
    const V4_FEATURES: &str = "avx,avx2,bmi1,bmi2,fma,lzcnt,movbe,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl";

    /// The macro's attribute strings are literals (an attribute takes no constant):
    /// each copy must enable what the detection checks for its level.
    #[test]
    fn the_copies_enable_what_the_detection_checks() {
        let source = include_str!("cpu.rs");
        let enabled: Vec<&str> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix("#[target_feature(enable = \""))
            .map(|l| l.trim_end_matches("\")]"))
            .collect();
        // Each arm of the macro writes a v3 copy, then a v4 copy.
        assert!(enabled.len() >= 2 && enabled.chunks(2).all(|pair| pair == [V3_FEATURES, V4_FEATURES]), "{enabled:?}");
        let detection = &source[source.find("fn cpu_level").unwrap()..];
        let detection = &detection[..detection.find("match (v3, v4)").unwrap()];
        let (v3, v4) = detection.split_once("let v4").unwrap();
        let listed = |text: &str| -> Vec<String> { text.split('"').skip(1).step_by(2).map(str::to_string).collect() };
        assert_eq!(listed(v3).join(","), V3_FEATURES);
        assert_eq!([listed(v3), listed(v4)].concat().join(","), V4_FEATURES);
    }
}
