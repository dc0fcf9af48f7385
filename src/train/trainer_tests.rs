use super::*;
use crate::train::bundled_games as games;

fn small_config() -> TrainerConfig {
    TrainerConfig {
        fit: TrainConfig { iterations: 8, ..TrainConfig::default() },
        solve_at: 8,
        move_loss: DEFAULT_MOVE_LOSS,
        bootstrap: Some(Bootstrap { rounds: 2, depth: 2, width: Width::Full, share: 1.0 }),
        backward: None,
        self_play: SelfPlayPositions { games: 20, depth: 1, ..SelfPlayPositions::default() },
        probcut: Some(ProbCutConfig { positions_per_empties: 4, max_measured_depth: 4 }),
    }
}

/// A training run from a fresh in-memory store: the outcome, the store and the
/// events other than progress.
fn train_run(
    config: TrainerConfig,
    train: &[TrainGame],
    validation: &[TrainGame],
) -> (TrainingOutcome, LabelStore, Vec<TrainerEvent>) {
    let (start, stop) = (PatternEval::bundled(), StopHandle::new());
    let mut store = LabelStore::in_memory();
    let events = std::sync::Mutex::new(Vec::new());
    let outcome = Trainer::new(config, &start, &mut store, &stop)
        .unwrap()
        .run(train.to_vec(), Validation::Games(validation.to_vec()), &[], &|e| {
            if !matches!(e, TrainerEvent::Progress(_)) {
                events.lock().unwrap().push(e);
            }
        })
        .unwrap();
    (outcome, store, events.into_inner().unwrap())
}

#[test]
fn training_runs_its_rounds_keeps_only_improvements_and_is_deterministic() {
    let all = games();
    let (train_games, validation_games) = all.split_at(all.len() - 400);
    let train_games = &train_games[..1500];
    let run = || {
        let (outcome, _, events) = train_run(small_config(), train_games, validation_games);
        (outcome, events)
    };
    let (a, events) = run();
    assert!(matches!(events[0], TrainerEvent::Games { train: 1500, validation: 400 }));
    assert!(matches!(events[1], TrainerEvent::Positions { extra, .. } if extra > 0));
    assert_eq!(a.rounds[0].round, 0);
    assert!(a.rounds[0].kept && a.rounds[0].search_rows == 0 && a.rounds[0].theoretical_rows > 0);
    assert!(a.rounds.len() >= 2, "at least one bootstrapping round ran");
    assert!(a.rounds[1].search_rows > 0);
    // Rounds are kept while they lower the error; the first that does not ends it.
    for w in a.rounds.windows(2) {
        if w[1].kept {
            assert!(w[1].validation_mae < w[0].validation_mae);
        }
    }
    if let Some(last) = a.rounds.last().filter(|r| r.round > 0) {
        assert!(last.kept || a.rounds.iter().filter(|r| !r.kept).count() == 1);
    }
    assert_eq!(a.weights.probcut_depths, super::super::probcut::PROBCUT_DEPTHS);
    assert!(a.weights.note.contains("round"), "{}", a.weights.note);
    let (b, _) = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(run);
    assert_eq!(a.weights, b.weights, "training depends on the thread count");
}

/// Plain negamax to `depth` plies with `eval` at the leaves: a pass costs no ply,
/// the end of the game scores exactly (the midgame search's rules).
fn negamax(eval: &PatternEval, board: &Board, depth: u32) -> i32 {
    use crate::eval::Evaluator;
    if depth == 0 {
        return eval.evaluate(board);
    }
    if board.is_game_over() {
        return board.final_score();
    }
    board
        .successors()
        .map(|(mv, next)| -negamax(eval, &next, if mv == crate::Move::Pass { depth } else { depth - 1 }))
        .max()
        .unwrap()
}

#[test]
fn backward_labels_come_from_the_phases_nearer_the_end_only() {
    let all = games();
    let (train_games, validation_games) = all.split_at(all.len() - 300);
    let train_games = &train_games[..1200];
    let start = PatternEval::bundled();
    let stop = StopHandle::new();
    let backward = Backward { depth: 5, share: 0.3, keep_theoretical: false };
    let config = TrainerConfig {
        bootstrap: None,
        backward: Some(backward),
        self_play: SelfPlayPositions { games: 10, depth: 1, ..SelfPlayPositions::default() },
        probcut: None,
        ..small_config()
    };
    let run = |config: TrainerConfig| {
        let (outcome, store, _) = train_run(config, train_games, validation_games);
        (outcome, store)
    };
    let (outcome, store) = run(config.clone());
    let round = &outcome.rounds[0];
    assert_eq!(round.search_depth, Some(5));
    assert!(round.search_rows > 1000 && round.exact_rows > 0, "{round:?}");
    assert_eq!(round.theoretical_rows, 0, "no midgame label from the players' moves");
    // A label searched while its phase was fitted saw only the phases fitted before,
    // which the final weights keep unchanged: a plain negamax of the label's depth
    // with the final weights finds every label again. (A label that had read its own
    // phase, still zero then, would not match.)
    let eval = PatternEval::new(&outcome.weights);
    let labels: Vec<(Board, SearchSpec, i8)> = store.search_labels().collect();
    assert!(labels.len() >= round.search_rows, "{} labels", labels.len());
    let mut checked = 0;
    for (board, spec, score) in labels.iter().step_by(7).take(300) {
        assert!([4, 5].contains(&spec.depth) && spec.selectivity.is_none(), "{spec:?}");
        assert!(board.empty_count() > 8, "solved positions are not searched");
        assert_eq!(negamax(&eval, board, u32::from(spec.depth)), i32::from(*score), "{board:?}");
        checked += 1;
    }
    assert!(checked >= 100);
    // Both depths, about half each.
    let deeper = labels.iter().filter(|l| l.1.depth == 5).count() as f64 / labels.len() as f64;
    assert!((0.45..0.55).contains(&deeper), "{deeper}");
    // Labels from different phases were made by different partial weights.
    let digests: HashSet<u32> = labels.iter().map(|l| l.1.eval).collect();
    assert!(digests.len() > 10, "{} digests", digests.len());
    // Deterministic whatever the thread count; keeping the theoretical scores
    // keeps the positions not searched.
    let (one_thread, _) =
        rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run(config.clone()));
    assert_eq!(outcome.weights, one_thread.weights, "backward training depends on the thread count");
    let keep = TrainerConfig { backward: Some(Backward { keep_theoretical: true, ..backward }), ..config.clone() };
    assert!(
        outcome.weights.note.contains("backward searches depth 5 and 4 full width share 0.3"),
        "{}",
        outcome.weights.note
    );
    let (kept, _) = run(keep);
    assert_eq!(kept.rounds[0].search_rows, round.search_rows);
    assert!(kept.rounds[0].theoretical_rows > 2 * round.search_rows);
    // The leaves must lie beyond the phase and its window; bootstrapping would undo it.
    let shallow = TrainerConfig { backward: Some(Backward { depth: 4, ..backward }), ..config.clone() };
    let err = Trainer::new(shallow, &start, &mut LabelStore::in_memory(), &stop).err().unwrap();
    assert!(matches!(err, TrainError::Setting(ref e) if e.setting == Setting::BackwardDepth), "{err}");
    let both = TrainerConfig { bootstrap: small_config().bootstrap, ..config };
    let err = Trainer::new(both, &start, &mut LabelStore::in_memory(), &stop).err().unwrap();
    assert!(matches!(err, TrainError::Setting(ref e) if e.setting == Setting::BootstrapRounds), "{err}");
}

#[test]
fn bad_settings_are_refused_and_a_stop_keeps_the_labels() {
    let start = PatternEval::bundled();
    let stop = StopHandle::new();
    stop.stop();
    let mut store = LabelStore::in_memory();
    let bad = TrainerConfig { solve_at: 30, ..small_config() };
    let refused = Trainer::new(bad, &start, &mut store, &stop).err().unwrap();
    assert!(
        matches!(refused, TrainError::Setting(ref e) if e.setting == crate::setting::Setting::SolveAt),
        "{refused}"
    );
    let all = games();
    let err = Trainer::new(small_config(), &start, &mut store, &stop)
        .unwrap()
        .run(all[..50].to_vec(), Validation::Games(Vec::new()), &[], &|_| {})
        .unwrap_err();
    assert!(matches!(err, TrainError::Stopped), "{err}");
    assert!(matches!(
        Trainer::new(small_config(), &start, &mut store, &StopHandle::new()).unwrap().run(
            Vec::new(),
            Validation::HeldOut(0.0),
            &[],
            &|_| {}
        ),
        Err(TrainError::NoGames)
    ));
}

#[test]
fn the_held_out_split_is_a_stable_share_of_the_games() {
    let all = games();
    let n = all.len();
    let (train, validation) = split_games(all.clone(), Validation::HeldOut(0.1)).unwrap();
    assert_eq!(train.len() + validation.len(), n);
    let share = validation.len() as f64 / n as f64;
    assert!((0.08..0.12).contains(&share), "{share} of {n}");
    // The same games each time.
    let (train2, validation2) = split_games(all.clone(), Validation::HeldOut(0.1)).unwrap();
    assert!(train == train2 && validation == validation2);
    let (train0, validation0) = split_games(all.clone(), Validation::HeldOut(0.0)).unwrap();
    assert_eq!((train0.len(), validation0.len()), (n, 0));
    let given = all[..10].to_vec();
    let (t, v) = split_games(all.clone(), Validation::Games(given.clone())).unwrap();
    assert!(t.len() == n && v == given);
    for bad in [1.0, -0.1, f64::NAN] {
        let err = split_games(all.clone(), Validation::HeldOut(bad)).unwrap_err().to_string();
        assert!(err.contains("validation share"), "{err}");
    }
    assert!(matches!(split_games(Vec::new(), Validation::HeldOut(0.1)), Err(TrainError::NoGames)));
}
