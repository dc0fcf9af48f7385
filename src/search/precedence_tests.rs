//! One precedence rule for the settings of every command, checked across the
//! crate-private places that resolve them: the engine, a book build's and a
//! deviation's leaf search, and a measurement's search.

use crate::book::build::{LeafSearch, LeafSpec};
use crate::book::{BuildConfig, BuildParams};
use crate::search::{Level, Selectivity, Settings, Strength, Width};
use crate::train::measure::MeasureConfig;

fn leaf_strength(config: &BuildConfig) -> Strength {
    config.leaf_search().unwrap().strength
}

fn leaf_strength_over(settings: &Settings, fallback: Strength) -> Strength {
    LeafSearch::new(settings, fallback).unwrap().strength
}

fn measure_strength(settings: &Settings) -> Option<Strength> {
    MeasureConfig::new(settings, false).unwrap().search
}

/// One precedence rule for every command: an explicit depth, exact threshold or width
/// wins, then the level's, and only then the command's own fallback (the engine's,
/// a book build's, a deviation's — the input book's header — and a measurement's).
#[test]
fn the_same_settings_give_the_same_limits_in_every_command() {
    let book =
        BuildParams { max_ply: 20, depth: 4, exact_at: 10, min_games: 2, selectivity_tenths: 20, ..Default::default() };
    let sigma1 = Width::from_sigmas(1.0).unwrap();
    let mut checked = 0;
    for level in [None, Some(1), Some(5), Some(8)] {
        for depth in [None, Some(3), Some(20)] {
            for exact_at in [None, Some(0), Some(30)] {
                for width in [None, Some(Width::Full), Some(sigma1)] {
                    let level = level.map(|n| Level::new(n).unwrap());
                    let s = with!(
                        Settings::default(),
                        level: level,
                        depth: depth,
                        exact_at: exact_at,
                        width: width,
                        hash_mib: 1,
                    );
                    let build = with!(BuildConfig::default(), max_ply: 8, min_games: 1, search: s.clone());
                    let mut strengths: Vec<(&str, Strength)> = vec![
                        ("engine", s.effective_strength().unwrap()),
                        ("book build", leaf_strength(&build)),
                        ("book deviate", leaf_strength_over(&s, LeafSpec::recorded(&book))),
                    ];
                    if let Some(m) = measure_strength(&s) {
                        strengths.push(("eval-error", m));
                    }
                    // A level alone is the level's own strength.
                    let spec = level.map(|l| Settings::at_level(l).effective_strength().unwrap());
                    let want_depth = depth.or(spec.and_then(|l| l.depth));
                    let want_exact = exact_at.or(spec.and_then(|l| l.exact_at));
                    let selectivity = |w| match w {
                        Width::Full => None,
                        Width::Selective(s) => Some(s),
                    };
                    let want_width = width.map(selectivity).or(spec.map(|l| l.selectivity));
                    for (command, st) in strengths {
                        let case = format!("{command}: {s:?}");
                        if want_depth.is_some() {
                            assert_eq!(st.depth, want_depth, "{case}");
                        }
                        if want_exact.is_some() {
                            assert_eq!(st.exact_at, want_exact, "{case}");
                        }
                        if let Some(w) = want_width {
                            assert_eq!(st.selectivity, w, "{case}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 400, "{checked}");
    // Where nothing is said, each command keeps its own fallback: the deviation the
    // book's settings.
    let open = leaf_strength_over(&with!(Settings::default(), hash_mib: 1), LeafSpec::recorded(&book));
    assert_eq!((open.depth, open.exact_at), (Some(4), Some(10)));
    assert_eq!(open.selectivity, Selectivity::from_sigmas(2.0));
    // A time budget alone deepens until the budget in every command (a measurement
    // searches rather than ignoring it).
    let timed = with!(Settings::default(), time: Some(std::time::Duration::from_millis(50)), hash_mib: 1);
    let build = with!(BuildConfig::default(), max_ply: 8, min_games: 1, search: timed.clone());
    for st in [
        timed.effective_strength().unwrap(),
        leaf_strength(&build),
        leaf_strength_over(&timed, LeafSpec::recorded(&book)),
        measure_strength(&timed).expect("a timed measurement searches"),
    ] {
        assert_eq!((st.depth, st.time), (None, timed.time), "{st:?}");
    }
}
